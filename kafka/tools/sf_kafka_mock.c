/*
 * sf_kafka_mock: a Kafka cluster for tests, librdkafka's mock cluster
 * (rd_kafka_mock_cluster_new), with a producer, driven line by line on
 * standard input.  Not installed: the TAP tests (test/t/14x_kafka_*.pl)
 * and bench/kafka.sh run it from the build tree.  It lives in its own
 * process so that the cluster outlives the servers the tests kill.
 *
 * On start it prints "bootstrap HOST:PORT[,...]".  Commands, each answered
 * with one line ("ok ..." or "error ..."):
 *
 *   topic NAME PARTITIONS          create a topic
 *   produce TOPIC PART TS KEY PAYLOAD
 *                                  one message (TS: milliseconds since the
 *                                  epoch; KEY "-" for none; PAYLOAD the rest
 *                                  of the line); answers "ok OFFSET"
 *   p TOPIC PART TS KEY PAYLOAD    the same, pipelined: no answer (see flush)
 *   flush                          waits for every pipelined message;
 *                                  answers "ok" or "error N failed"
 *   gen TOPIC PARTS COUNT KEYS TS0 generate COUNT JSON messages
 *                                  {"id":i,"k":"k<i % KEYS>","t":TS0+i,"v":1},
 *                                  message i to partition i % PARTS with
 *                                  timestamp TS0 + i; answers "ok COUNT"
 *   down / up                      take every broker down / up
 *   quit
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#define NBROKERS 1

static int64_t last_offset;
static int	last_err;
static int	delivered;
static int	failed;

static void
dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
	(void) rk;
	(void) opaque;
	if (m->err)
	{
		last_err = m->err;
		failed++;
	}
	else
		last_offset = m->offset;
	delivered++;
}

static void
die(const char *what, const char *err)
{
	fprintf(stderr, "sf_kafka_mock: %s: %s\n", what, err);
	exit(1);
}

static rd_kafka_t *
new_handle(const char *brokers)
{
	char		errstr[512];
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	rd_kafka_t *rk;

	if (brokers &&
		rd_kafka_conf_set(conf, "bootstrap.servers", brokers, errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK)
		die("bootstrap.servers", errstr);
	rd_kafka_conf_set(conf, "linger.ms", "5", errstr, sizeof(errstr));
	rd_kafka_conf_set(conf, "log_level", "2", errstr, sizeof(errstr));
	rd_kafka_conf_set(conf, "message.timeout.ms", "60000", errstr, sizeof(errstr));
	rd_kafka_conf_set_dr_msg_cb(conf, dr_cb);
	rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
	if (rk == NULL)
		die("rd_kafka_new", errstr);
	return rk;
}

static int
produce(rd_kafka_t *rk, const char *topic, int part, int64_t ts,
		const char *key, const char *payload, size_t len)
{
	rd_kafka_resp_err_t err;

	for (;;)
	{
		err = rd_kafka_producev(rk,
								RD_KAFKA_V_TOPIC(topic),
								RD_KAFKA_V_PARTITION(part),
								RD_KAFKA_V_TIMESTAMP(ts),
								RD_KAFKA_V_KEY(key, key ? strlen(key) : 0),
								RD_KAFKA_V_VALUE((void *) payload, len),
								RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
								RD_KAFKA_V_END);
		if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL)
			break;
		rd_kafka_poll(rk, 10);
	}
	return err;
}

int
main(void)
{
	rd_kafka_t *host = new_handle(NULL);
	rd_kafka_mock_cluster_t *mc = rd_kafka_mock_cluster_new(host, NBROKERS);
	const char *bootstraps;
	rd_kafka_t *rk;
	char	   *line = NULL;
	size_t		cap = 0;
	ssize_t		len;

	if (mc == NULL)
		die("rd_kafka_mock_cluster_new", "failed");
	bootstraps = rd_kafka_mock_cluster_bootstraps(mc);
	rk = new_handle(bootstraps);
	printf("bootstrap %s\n", bootstraps);
	fflush(stdout);

	while ((len = getline(&line, &cap, stdin)) > 0)
	{
		char		cmd[32];
		char		topic[256];

		if (line[len - 1] == '\n')
			line[--len] = '\0';
		if (sscanf(line, "%31s", cmd) != 1)
			continue;
		if (strcmp(cmd, "quit") == 0)
			break;
		else if (strcmp(cmd, "topic") == 0)
		{
			int			parts;
			rd_kafka_resp_err_t err;

			if (sscanf(line, "%*s %255s %d", topic, &parts) != 2)
			{
				printf("error usage: topic NAME PARTITIONS\n");
			}
			else if ((err = rd_kafka_mock_topic_create(mc, topic, parts, 1)) != 0)
				printf("error %s\n", rd_kafka_err2str(err));
			else
				printf("ok\n");
		}
		else if (strcmp(cmd, "produce") == 0)
		{
			int			part;
			long long	ts;
			char		key[1024];
			int			pos = 0;
			rd_kafka_resp_err_t err;

			if (sscanf(line, "%*s %255s %d %lld %1023s %n", topic, &part, &ts, key, &pos) < 4 || pos == 0)
			{
				printf("error usage: produce TOPIC PART TS KEY PAYLOAD\n");
			}
			else
			{
				last_err = 0;
				delivered = 0;
				err = produce(rk, topic, part, ts, strcmp(key, "-") == 0 ? NULL : key,
							  line + pos, strlen(line + pos));
				if (err)
					printf("error %s\n", rd_kafka_err2str(err));
				else
				{
					rd_kafka_flush(rk, 60000);
					if (last_err || delivered != 1)
						printf("error %s\n", rd_kafka_err2str(last_err));
					else
						printf("ok %" PRId64 "\n", last_offset);
				}
			}
		}
		else if (strcmp(cmd, "p") == 0)
		{
			int			part;
			long long	ts;
			char		key[1024];
			int			pos = 0;

			if (sscanf(line, "%*s %255s %d %lld %1023s %n", topic, &part, &ts, key, &pos) < 4 || pos == 0 ||
				produce(rk, topic, part, ts, strcmp(key, "-") == 0 ? NULL : key,
						line + pos, strlen(line + pos)) != 0)
				failed++;
			rd_kafka_poll(rk, 0);
			continue;
		}
		else if (strcmp(cmd, "flush") == 0)
		{
			rd_kafka_flush(rk, 120000);
			if (failed)
				printf("error %d failed\n", failed);
			else
				printf("ok\n");
			failed = 0;
		}
		else if (strcmp(cmd, "gen") == 0)
		{
			int			parts,
						keys;
			long long	count,
						ts0,
						i;
			char		buf[256];
			int			bad = 0;

			if (sscanf(line, "%*s %255s %d %lld %d %lld", topic, &parts, &count, &keys, &ts0) != 5)
			{
				printf("error usage: gen TOPIC PARTS COUNT KEYS TS0\n");
			}
			else
			{
				last_err = 0;
				for (i = 0; i < count && !bad; i++)
				{
					int			n = snprintf(buf, sizeof(buf),
											 "{\"id\":%lld,\"k\":\"k%lld\",\"t\":%lld,\"v\":1}",
											 i, i % keys, ts0 + i);

					if (produce(rk, topic, (int) (i % parts), ts0 + i, NULL, buf, n) != 0)
						bad = 1;
					rd_kafka_poll(rk, 0);
				}
				rd_kafka_flush(rk, 120000);
				if (bad || last_err)
					printf("error %s\n", rd_kafka_err2str(last_err));
				else
					printf("ok %lld\n", count);
			}
		}
		else if (strcmp(cmd, "down") == 0 || strcmp(cmd, "up") == 0)
		{
			int			b;

			for (b = 1; b <= NBROKERS; b++)
			{
				if (cmd[0] == 'd')
					rd_kafka_mock_broker_set_down(mc, b);
				else
					rd_kafka_mock_broker_set_up(mc, b);
			}
			printf("ok\n");
		}
		else
			printf("error unknown command \"%s\"\n", cmd);
		fflush(stdout);
	}
	rd_kafka_destroy(rk);
	rd_kafka_mock_cluster_destroy(mc);
	rd_kafka_destroy(host);
	return 0;
}
