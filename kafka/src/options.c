/*
 * options.c: which librdkafka properties a role may set, and librdkafka's
 * log.
 *
 * A subscription's options are librdkafka configuration properties, and
 * many of those reach outside the client: a file the server opens
 * (*.location, ssl.crl.location, offset.store.path), a command it runs
 * (sasl.kerberos.kinit.cmd, and GSSAPI's default kinit command built from
 * the other sasl.kerberos.* properties), a library it loads
 * (plugin.library.paths, ssl.providers, ssl.engine.*), or the server's log
 * (debug, log_level).  So a non-superuser may set only the properties of
 * the list below, each with its values checked (docs/kafka.md, "Options");
 * the privileged ones are refused with 42501 naming the property, any
 * other one with 22023.  A superuser may set whatever librdkafka accepts.
 * The check runs when subscribe() or topic_partitions() is called (the
 * current user) and again when a worker starts (the role the subscription
 * records), so a row changed behind the functions' back changes nothing.
 *
 * librdkafka's log goes through ereport: log.queue makes the library queue
 * its lines instead of calling back from its own threads, the consumer's
 * poll (or topic_partitions) serves them in this process, and each line is
 * cut to a bounded length with its control characters replaced, at most
 * SFK_LOG_BURST lines every SFK_LOG_WINDOW_MS per process.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"

#include "kafka.h"

typedef enum SfkOptKind
{
	OPT_TEXT,					/* a string of at most max bytes, no control
								 * character */
	OPT_SECRET,					/* the same, a credential */
	OPT_PEM,					/* PEM text of at most max bytes */
	OPT_ENUM,					/* one of values (case-insensitive) */
	OPT_INT,					/* an integer in min .. max */
	OPT_BOOL					/* true or false */
} SfkOptKind;

typedef struct SfkOpt
{
	const char *name;
	SfkOptKind	kind;
	int64		min;
	int64		max;			/* OPT_TEXT, OPT_SECRET, OPT_PEM: the longest */
	const char *values;			/* OPT_ENUM: comma-separated */
} SfkOpt;

/*
 * What a non-superuser may set.  Keep in step with docs/kafka.md
 * ("Options") and docs/security.md ("Kafka options").
 */
static const SfkOpt allowed[] = {
	/* the cluster */
	{"bootstrap.servers", OPT_TEXT, 0, 8192, NULL},
	{"metadata.broker.list", OPT_TEXT, 0, 8192, NULL},
	{"client.id", OPT_TEXT, 0, 255, NULL},
	{"client.rack", OPT_TEXT, 0, 255, NULL},
	{"broker.address.family", OPT_ENUM, 0, 0, "any,v4,v6"},
	{"broker.version.fallback", OPT_TEXT, 0, 32, NULL},
	{"api.version.request", OPT_BOOL, 0, 0, NULL},
	{"api.version.request.timeout.ms", OPT_INT, 1, 300000, NULL},
	/* security: SASL with credentials as values, TLS material as PEM */
	{"security.protocol", OPT_ENUM, 0, 0, "plaintext,ssl,sasl_plaintext,sasl_ssl"},
	{"sasl.mechanisms", OPT_ENUM, 0, 0, "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512"},
	{"sasl.mechanism", OPT_ENUM, 0, 0, "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512"},
	{"sasl.username", OPT_SECRET, 0, 4096, NULL},
	{"sasl.password", OPT_SECRET, 0, 4096, NULL},
	{"ssl.ca.pem", OPT_PEM, 0, 1048576, NULL},
	{"ssl.certificate.pem", OPT_PEM, 0, 1048576, NULL},
	{"ssl.key.pem", OPT_PEM, 0, 1048576, NULL},
	{"ssl.key.password", OPT_SECRET, 0, 4096, NULL},
	{"ssl.endpoint.identification.algorithm", OPT_ENUM, 0, 0, "none,https"},
	{"enable.ssl.certificate.verification", OPT_BOOL, 0, 0, NULL},
	{"ssl.cipher.suites", OPT_TEXT, 0, 4096, NULL},
	{"ssl.curves.list", OPT_TEXT, 0, 4096, NULL},
	{"ssl.sigalgs.list", OPT_TEXT, 0, 4096, NULL},
	/* fetching and batching, within bounds */
	{"fetch.min.bytes", OPT_INT, 1, 104857600, NULL},
	{"fetch.max.bytes", OPT_INT, 1, 104857600, NULL},
	{"fetch.wait.max.ms", OPT_INT, 0, 60000, NULL},
	{"fetch.error.backoff.ms", OPT_INT, 0, 60000, NULL},
	{"max.partition.fetch.bytes", OPT_INT, 1, 104857600, NULL},
	{"fetch.message.max.bytes", OPT_INT, 1, 104857600, NULL},
	{"receive.message.max.bytes", OPT_INT, 1000, 209715200, NULL},
	{"message.max.bytes", OPT_INT, 1000, 104857600, NULL},
	{"queued.min.messages", OPT_INT, 1, 1000000, NULL},
	{"queued.max.messages.kbytes", OPT_INT, 1, 262144, NULL},
	{"isolation.level", OPT_ENUM, 0, 0, "read_uncommitted,read_committed"},
	{"check.crcs", OPT_BOOL, 0, 0, NULL},
	/* connections */
	{"socket.timeout.ms", OPT_INT, 10, 300000, NULL},
	{"socket.connection.setup.timeout.ms", OPT_INT, 1000, 300000, NULL},
	{"socket.keepalive.enable", OPT_BOOL, 0, 0, NULL},
	{"socket.nagle.disable", OPT_BOOL, 0, 0, NULL},
	{"socket.send.buffer.bytes", OPT_INT, 0, 16777216, NULL},
	{"socket.receive.buffer.bytes", OPT_INT, 0, 16777216, NULL},
	{"connections.max.idle.ms", OPT_INT, 0, 86400000, NULL},
	{"reconnect.backoff.ms", OPT_INT, 0, 60000, NULL},
	{"reconnect.backoff.max.ms", OPT_INT, 0, 60000, NULL},
	{"topic.metadata.refresh.interval.ms", OPT_INT, -1, 3600000, NULL},
	{"metadata.max.age.ms", OPT_INT, 1, 86400000, NULL},
};

/*
 * Properties that name a file, a command, a library or an engine of the
 * server, or that set librdkafka's logging: a superuser's only (42501).
 */
static const char *const privileged_names[] = {
	"debug", "log_level", "log.queue", "log.thread.name",
	"log.connection.close", "plugin.library.paths", "interceptors",
	"ssl.providers", "ssl_engine_callback_data", "ssl.ca.certificate.stores",
	"offset.store.method", "internal.termination.signal",
	"enable.sasl.oauthbearer.unsecure.jwt",
};
static const char *const privileged_prefixes[] = {
	"ssl.engine.", "sasl.kerberos.", "sasl.oauthbearer.", "ssl.keystore.",
};
static const char *const privileged_suffixes[] = {
	".location", ".cmd", ".path", ".paths", ".keytab",
};

/* SASL mechanisms that run a command or fetch tokens: a superuser's only */
static const char *const privileged_mechanisms[] = {"GSSAPI", "OAUTHBEARER"};

static bool
has_suffix(const char *s, const char *suffix)
{
	size_t		n = strlen(s),
				m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static bool
is_privileged(const char *name)
{
	int			i;

	for (i = 0; i < lengthof(privileged_names); i++)
		if (strcmp(name, privileged_names[i]) == 0)
			return true;
	for (i = 0; i < lengthof(privileged_prefixes); i++)
		if (strncmp(name, privileged_prefixes[i], strlen(privileged_prefixes[i])) == 0)
			return true;
	for (i = 0; i < lengthof(privileged_suffixes); i++)
		if (has_suffix(name, privileged_suffixes[i]))
			return true;
	return false;
}

static void
refuse_privileged(const char *name)
{
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("Kafka option \"%s\" may be set by a superuser only", name),
			 errdetail("It names a file, a command, a library or an engine of the server, or sets librdkafka's logging."),
			 errhint("docs/kafka.md lists the options any role may set.")));
}

/* Whether s has a byte below 0x20 or 0x7f (newlines allowed if PEM). */
static bool
has_control(const char *s, int len, bool pem)
{
	int			i;

	for (i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) s[i];

		if (pem && (c == '\n' || c == '\r' || c == '\t'))
			continue;
		if (c < 0x20 || c == 0x7f)
			return true;
	}
	return false;
}

static bool
in_list(const char *value, int len, const char *list)
{
	const char *p = list;

	while (*p)
	{
		const char *end = strchr(p, ',');
		int			n = end ? end - p : (int) strlen(p);

		if (n == len && pg_strncasecmp(p, value, n) == 0)
			return true;
		p += n;
		if (*p == ',')
			p++;
	}
	return false;
}

static void
check_value(const SfkOpt *o, const char *value, int len)
{
	switch (o->kind)
	{
		case OPT_TEXT:
		case OPT_SECRET:
		case OPT_PEM:
			if (len > o->max)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("Kafka option \"%s\" is too long", o->name),
						 errdetail("It is %d bytes long; the limit is " INT64_FORMAT ".",
								   len, o->max)));
			if (has_control(value, len, o->kind == OPT_PEM))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("Kafka option \"%s\" must not contain control characters",
								o->name)));
			if (o->kind == OPT_PEM && len > 0 &&
				strstr(pnstrdup(value, len), "-----BEGIN ") == NULL)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("Kafka option \"%s\" must be PEM text", o->name),
						 errhint("Give the certificate or key itself (\"-----BEGIN ...\"), not a file name.")));
			break;
		case OPT_ENUM:
			if (!in_list(value, len, o->values))
			{
				int			i;

				for (i = 0; i < lengthof(privileged_mechanisms); i++)
					if (strncmp(o->name, "sasl.mechanism", 14) == 0 &&
						len == strlen(privileged_mechanisms[i]) &&
						pg_strncasecmp(value, privileged_mechanisms[i], len) == 0)
						refuse_privileged(o->name);
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("invalid value for Kafka option \"%s\"", o->name),
						 errdetail("The values are %s.", o->values)));
			}
			break;
		case OPT_BOOL:
			if (!in_list(value, len, "true,false"))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("invalid value for Kafka option \"%s\"", o->name),
						 errdetail("The values are true and false.")));
			break;
		case OPT_INT:
			{
				char	   *s = pnstrdup(value, len);
				char	   *end;
				long long	v;

				errno = 0;
				v = strtoll(s, &end, 10);
				if (len == 0 || len > 20 || *end != '\0' || errno != 0 ||
					v < o->min || v > o->max)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("invalid value for Kafka option \"%s\"", o->name),
							 errdetail("It is an integer between " INT64_FORMAT " and " INT64_FORMAT ".",
									   o->min, o->max)));
				break;
			}
	}
}

/*
 * Checks the options (a JSON object of strings) against what a role may
 * set (a superuser, or not: superuser_arg() is the caller's, in a
 * transaction): an error naming the first property refused.
 */
void
sfk_check_options(Jsonb *options, bool super)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	char	   *key = NULL;

	if (options == NULL)
		return;
	if (!JB_ROOT_IS_OBJECT(options) || JB_ROOT_IS_SCALAR(options))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options must be a JSON object of strings")));
	if (VARSIZE(options) > SFK_OPTIONS_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options are too large"),
				 errdetail("They take %zu bytes; the limit is %d.",
						   (size_t) VARSIZE(options), SFK_OPTIONS_MAX)));
	it = JsonbIteratorInit(&options->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		int			i;
		const SfkOpt *o = NULL;

		if (tok == WJB_KEY)
		{
			key = pnstrdup(v.val.string.val, v.val.string.len);
			continue;
		}
		if (tok != WJB_VALUE)
			continue;
		if (v.type != jbvString)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("option \"%s\" must be a string", key)));
		if (super)
			continue;
		for (i = 0; i < lengthof(allowed); i++)
			if (strcmp(key, allowed[i].name) == 0)
				o = &allowed[i];
		if (o == NULL)
		{
			if (is_privileged(key))
				refuse_privileged(key);
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("Kafka option \"%s\" is not supported", key),
					 errhint("docs/kafka.md lists the options any role may set; a superuser may set any librdkafka property.")));
		}
		check_value(o, v.val.string.val, v.val.string.len);
	}
}

/* ---------------------------------------------------------------- */
/* librdkafka's log                                                   */
/* ---------------------------------------------------------------- */

#define SFK_LOG_BURST 20
#define SFK_LOG_WINDOW_MS 10000
#define SFK_LOG_LINE_MAX 400

static TimestampTz log_window_start = 0;
static int	log_in_window = 0;
static int	log_suppressed = 0;

/* Copies s into dst (of size SFK_LOG_LINE_MAX + 1), control chars as '?'. */
static void
sanitize(char *dst, const char *s)
{
	int			i;

	for (i = 0; s[i] != '\0' && i < SFK_LOG_LINE_MAX; i++)
	{
		unsigned char c = (unsigned char) s[i];

		dst[i] = (c < 0x20 || c == 0x7f) ? '?' : (char) c;
	}
	dst[i] = '\0';
}

/* Reports the lines dropped in the window, once it is over. */
void
sfk_log_flush(void)
{
	if (log_suppressed > 0 &&
		TimestampDifferenceExceeds(log_window_start, GetCurrentTimestamp(),
								   SFK_LOG_WINDOW_MS))
	{
		ereport(LOG,
				(errmsg("streamforge_kafka: %d librdkafka log lines suppressed",
						log_suppressed),
				 errdetail("At most %d lines are logged every %d seconds.",
						   SFK_LOG_BURST, SFK_LOG_WINDOW_MS / 1000)));
		log_suppressed = 0;
	}
}

/*
 * librdkafka's log callback, called in this process only (log.queue, see
 * sfk_serve_log): one LOG line, sanitized, rate-limited.
 */
static void
log_cb(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
	TimestampTz now = GetCurrentTimestamp();
	char		cname[SFK_LOG_LINE_MAX + 1];
	char		cfac[SFK_LOG_LINE_MAX + 1];
	char		cbuf[SFK_LOG_LINE_MAX + 1];

	if (log_window_start == 0 ||
		TimestampDifferenceExceeds(log_window_start, now, SFK_LOG_WINDOW_MS))
	{
		sfk_log_flush();
		log_window_start = now;
		log_in_window = 0;
	}
	if (log_in_window >= SFK_LOG_BURST)
	{
		log_suppressed++;
		return;
	}
	log_in_window++;
	/* the handle's name holds client.id */
	sanitize(cname, rk ? rd_kafka_name(rk) : "-");
	sanitize(cfac, fac ? fac : "");
	sanitize(cbuf, buf ? buf : "");
	ereport(LOG,
			(errmsg("streamforge_kafka: librdkafka %s %d %s: %s", cname, level, cfac, cbuf)));
}

/*
 * Sets the log of a configuration: through log_cb, queued (never called
 * from librdkafka's threads).  After the options: it is not theirs.
 */
void
sfk_conf_set_log(rd_kafka_conf_t *conf)
{
	char		errstr[512];

	if (rd_kafka_conf_set(conf, "log.queue", "true", errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK)
	{
		rd_kafka_conf_destroy(conf);
		elog(ERROR, "could not set log.queue: %s", errstr);
	}
	rd_kafka_conf_set_log_cb(conf, log_cb);
}

/* Sends a handle's queued log lines to its main queue (polled here). */
void
sfk_serve_log(rd_kafka_t *rk)
{
	(void) rd_kafka_set_log_queue(rk, NULL);
}
