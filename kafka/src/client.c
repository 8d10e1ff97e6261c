/*
 * client.c: librdkafka handles from a subscription's brokers and options,
 * and topic metadata.
 *
 * librdkafka runs threads of its own (with every signal blocked); none of
 * them calls into PostgreSQL.  Strings handed to it are copied by it.
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "kafka.h"

PG_FUNCTION_INFO_V1(sfk_topic_partitions);

static void
conf_set(rd_kafka_conf_t *conf, const char *name, const char *value)
{
	char		errstr[512];

	if (rd_kafka_conf_set(conf, name, value, errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK)
	{
		rd_kafka_conf_destroy(conf);
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid Kafka option \"%s\": %s", name, errstr)));
	}
}

/*
 * A configuration: the brokers, the defaults a worker needs (no offsets
 * committed to Kafka: the pipeline holds them) and every option of
 * "options" (a JSON object of strings: librdkafka's names, such as
 * security.protocol or sasl.username), which may override the defaults,
 * after checking them against what the role may set (options.c).  The log
 * (queued, through ereport) and the offset settings are set last.
 */
rd_kafka_conf_t *
sfk_make_conf(const char *brokers, Jsonb *options, const char *group_id,
			  bool superuser)
{
	rd_kafka_conf_t *conf;

	sfk_check_options(options, superuser);
	conf = rd_kafka_conf_new();
	conf_set(conf, "bootstrap.servers", brokers);
	conf_set(conf, "enable.partition.eof", "false");
	conf_set(conf, "reconnect.backoff.max.ms", "1000");
	conf_set(conf, "log_level", "3");
	if (group_id)
	{
		conf_set(conf, "group.id", group_id);

		/*
		 * The prefetch is bounded by queued.max.messages.kbytes (64 MB): with
		 * librdkafka's default of 100,000 messages a partition, a worker
		 * reading batches of 10,000 from several partitions found the queue
		 * empty for about half a second every 200,000 messages (the
		 * fetcher backing off at the count), a third of its time in
		 * bench/kafka.sh.  The subscription's options may set it back.
		 */
		conf_set(conf, "queued.min.messages", "1000000");
	}
	if (options != NULL)
	{
		JsonbIterator *it;
		JsonbValue	v;
		JsonbIteratorToken tok;
		char	   *key = NULL;

		it = JsonbIteratorInit(&options->root);
		while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
		{
			if (tok == WJB_KEY)
				key = pnstrdup(v.val.string.val, v.val.string.len);
			else if (tok == WJB_VALUE)
				conf_set(conf, key, pnstrdup(v.val.string.val, v.val.string.len));
		}
	}
	conf_set(conf, "enable.auto.commit", "false");
	conf_set(conf, "enable.auto.offset.store", "false");
	sfk_conf_set_log(conf);
	return conf;
}

/* The partition count of a topic, or -1 with the reason in errbuf. */
int
sfk_count_partitions(rd_kafka_t *rk, const char *topic, int timeout_ms,
					 char *errbuf, size_t errlen)
{
	const struct rd_kafka_metadata *md;
	rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
	rd_kafka_resp_err_t err;
	int			n = -1;

	if (rkt == NULL)
	{
		snprintf(errbuf, errlen, "%s", rd_kafka_err2str(rd_kafka_last_error()));
		return -1;
	}
	err = rd_kafka_metadata(rk, 0, rkt, &md, timeout_ms);
	if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
		snprintf(errbuf, errlen, "%s", rd_kafka_err2str(err));
	else
	{
		if (md->topic_cnt != 1)
			snprintf(errbuf, errlen, "no metadata for the topic");
		else if (md->topics[0].err != RD_KAFKA_RESP_ERR_NO_ERROR)
			snprintf(errbuf, errlen, "%s", rd_kafka_err2str(md->topics[0].err));
		else
			n = md->topics[0].partition_cnt;
		rd_kafka_metadata_destroy(md);
	}
	rd_kafka_topic_destroy(rkt);
	return n;
}

/*
 * A short-lived client of the cluster for one question (a backend's SQL
 * call), with the options the role may set and its log served
 */
rd_kafka_t *
sfk_oneshot_client(rd_kafka_type_t type, const char *brokers, Jsonb *options,
				   bool superuser)
{
	rd_kafka_conf_t *conf = sfk_make_conf(brokers, options, NULL, superuser);
	char		errstr[512];
	rd_kafka_t *rk;

	rk = rd_kafka_new(type, conf, errstr, sizeof(errstr));
	if (rk == NULL)
	{
		rd_kafka_conf_destroy(conf);
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("could not create a Kafka client: %s", errstr)));
	}
	sfk_serve_log(rk);
	return rk;
}

/* Ends a client of sfk_oneshot_client, with the log lines it queued */
void
sfk_oneshot_done(rd_kafka_t *rk)
{
	(void) rd_kafka_poll(rk, 0);
	rd_kafka_destroy(rk);
	sfk_log_flush();
}

/*
 * The partition count of a topic, asked of the cluster (10 seconds at
 * most) with the options role may set: 08006 when the cluster cannot be
 * reached, 22023 when the topic does not exist.
 */
int
sfk_topic_partition_count(const char *brokers, const char *topic,
						  Jsonb *options, bool superuser)
{
	rd_kafka_t *rk = sfk_oneshot_client(RD_KAFKA_PRODUCER, brokers, options, superuser);
	char		errstr[512];
	int			n;

	n = sfk_count_partitions(rk, topic, 10000, errstr, sizeof(errstr));
	sfk_oneshot_done(rk);
	if (n < 0)
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("could not read the metadata of topic \"%s\" from \"%s\": %s",
						topic, brokers, errstr)));
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("topic \"%s\" does not exist", topic)));
	return n;
}

/*
 * streamforge_kafka.topic_partitions(brokers, topic, options): not
 * EXECUTE-able by PUBLIC (a superuser's, or a role's it was granted to);
 * the options are checked against the caller's privileges.
 */
Datum
sfk_topic_partitions(PG_FUNCTION_ARGS)
{
	char	   *brokers = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *topic = text_to_cstring(PG_GETARG_TEXT_PP(1));
	Jsonb	   *options = PG_GETARG_JSONB_P(2);

	PG_RETURN_INT32(sfk_topic_partition_count(brokers, topic, options, superuser()));
}
