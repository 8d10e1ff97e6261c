/*
 * worker.c: the worker of one subscription.
 *
 * The worker connects as the subscribing role (so the pipeline's own
 * privileges gate what it does), reads where each Kafka partition stands
 * from the pipeline (partitions(): consumed_offset, the only source of
 * truth; the consumer group's offsets are never committed nor read),
 * assigns each partition at consumed_offset + 1 and then loops:
 *
 *   collect up to batch_size messages, or what max_wait brings;
 *   one transaction: lock the subscription row (FOR KEY SHARE: unsubscribe
 *   waits for the batch, then the worker sees the row gone and exits),
 *   ingest every message at its Kafka offset with one statement (the
 *   mapping, mapping.c), advance each partition to the largest Kafka
 *   timestamp of the batch minus out_of_orderness, record the high
 *   watermarks, commit.
 *
 * A crash anywhere loses nothing and doubles nothing: the pipeline's
 * offsets move only with its state, in the batch's transaction, and the
 * next worker seeks to them; a replayed offset would be a no-op and a gap
 * is an error (SF001), never silently skipped.
 *
 * Bad messages.  When the batch's statement fails with a data error
 * (class 22: invalid JSON, a missing field, a value out of range; or
 * SF002), the batch is retried message by message, each in a
 * subtransaction, to find the bad ones.  A bad message goes to
 * streamforge_kafka.rejected.  With on_error 'stop' the messages before it
 * are committed and the subscription is paused with the error.  With
 * 'skip' its offset is consumed without an event: the pipeline has no
 * delivery that consumes an offset and nothing else, so the skipped offset
 * is delivered the next good message of the partition (which comes again
 * at its own offset as a duplicate, a no-op).  Until that message arrives
 * the skipped offsets are pending (the lag counts them), and after a
 * restart they are read and rejected again (the dead letter is kept once).
 *
 * Outages.  librdkafka reports that no broker is reachable through the
 * error callback; the worker then probes the cluster with backoff (200 ms
 * doubling up to streamforge_kafka.retry_max), logging each attempt and
 * showing it in worker_status.  Any other error (a gap, a revoked
 * privilege, a missing partition) is logged and recorded, and the worker
 * exits with status 1 after a backoff: the postmaster starts it again
 * after streamforge_kafka.restart_time, from the pipeline's offsets.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "kafka.h"

#define SF_OFFSET_CONFLICT MAKE_SQLSTATE('S','F','0','0','1')
#define SF_IDENTITY_CONFLICT MAKE_SQLSTATE('S','F','0','0','2')


/* The subscription, as read at start (lives in TopMemoryContext). */
static struct
{
	int32		id;
	Oid			role;
	bool		superuser;		/* whether role was one at start */
	char	   *pipeline;
	char	   *brokers;
	char	   *topic;
	char	   *format;
	char	   *prefix;
	bool		stop_on_error;
	int			batch_size;
	int			max_wait;
	int64		ooo;
	int			nparts;
	int64		unit_us;
	Jsonb	   *mapping;
	Jsonb	   *options;
	SPIPlanPtr	plan;
	bool		aggregate;		/* feeds an aggregate (aggmap.c) */
	bool		cmap;			/* mapped in C (cmap.c) */
	bool		measures;		/* its pipeline has measures */
	int		   *trailing;		/* non-matching offsets left by a run */
	char	  **pnames;			/* pipeline partition of each Kafka partition */
	int64	   *consumed;		/* the pipeline's consumed offset */
	int		   *pending;		/* skipped offsets after it, not consumed yet */
	int64	   *progress;		/* progress last reported, or INT64_MIN */
	int64	   *hw_saved;		/* high watermark last recorded, or -1 */
	int			retries;		/* failures before this start */
} sub;

static rd_kafka_t *consumer = NULL;

/* lost offsets: the partition whose next offset the cluster no longer has */
static int	lost_part = -1;
static char lost_reason[512];

/* what the error callback saw (set in this process, in rd_kafka poll) */
static bool outage = false;
static char outage_reason[512];

static void
error_cb(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
	if (err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN ||
		err == RD_KAFKA_RESP_ERR__RESOLVE ||
		err == RD_KAFKA_RESP_ERR__AUTHENTICATION ||
		err == RD_KAFKA_RESP_ERR__SSL)
	{
		outage = true;
		snprintf(outage_reason, sizeof(outage_reason), "%s", reason);
	}
}

static void
destroy_consumer(int code, Datum arg)
{
	if (consumer != NULL)
	{
		rd_kafka_destroy_flags(consumer, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
		consumer = NULL;
	}
}

/* ---------------------------------------------------------------- */
/* Transactions and status                                            */
/* ---------------------------------------------------------------- */

/*
 * Runs a statement on the extension's tables as their owner: the role a
 * worker runs as has no privilege on them but SELECT (admin.c).  The
 * statements are fixed and schema-qualified.
 */
static int
spi_as_owner(const char *sql, int nargs, Oid *types, Datum *args,
			 const char *nulls, bool read_only, long count)
{
	SfkSavedUser saved;
	int			ret;

	sfk_become_owner(&saved);
	ret = SPI_execute_with_args(sql, nargs, types, args, nulls, read_only, count);
	sfk_restore_user(&saved);
	return ret;
}

static void
begin_tx(const char *what)
{
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, what);
}

static void
commit_tx(void)
{
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);
}

/*
 * The subscription row, locked FOR KEY SHARE: false when it is gone or
 * paused (the worker then stops).
 */
static bool
subscription_active(void)
{
	Datum		arg = Int32GetDatum(sub.id);
	Oid			type = INT4OID;
	bool		isnull;

	if (spi_as_owner("SELECT s.paused FROM streamforge_kafka.subscription AS s "
							  "WHERE s.id OPERATOR(pg_catalog.=) $1 FOR KEY SHARE",
							  1, &type, &arg, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read subscription %d", sub.id);
	if (SPI_processed == 0)
		return false;
	return !DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
									   1, &isnull));
}

/* Records the worker's state, in the current transaction. */
static void
put_status(const char *state, const char *error, int retries, int backoff_ms)
{
	Datum		args[6];
	Oid			types[6] = {INT4OID, INT4OID, TEXTOID, INT4OID, INT4OID, TEXTOID};
	char		nulls[6] = {' ', ' ', ' ', ' ', ' ', ' '};

	args[0] = Int32GetDatum(sub.id);
	args[1] = Int32GetDatum(MyProcPid);
	args[2] = CStringGetTextDatum(state);
	args[3] = Int32GetDatum(retries);
	args[4] = Int32GetDatum(backoff_ms);
	if (error)
		args[5] = CStringGetTextDatum(error);
	else
		nulls[5] = 'n';
	if (spi_as_owner("INSERT INTO streamforge_kafka.worker_status AS w "
							  "(subscription, pid, state, retries, backoff_ms, last_error) "
							  "SELECT $1, $2, $3, $4, $5, $6 WHERE EXISTS (SELECT FROM "
							  "streamforge_kafka.subscription AS s WHERE s.id OPERATOR(pg_catalog.=) $1) "
							  "ON CONFLICT (subscription) DO UPDATE SET pid = EXCLUDED.pid, "
							  "state = EXCLUDED.state, retries = EXCLUDED.retries, "
							  "backoff_ms = EXCLUDED.backoff_ms, "
							  "last_error = EXCLUDED.last_error, "
							  "updated_at = pg_catalog.now()",
							  6, types, args, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not record the state of subscription %d", sub.id);
}

/*
 * Records the state in a transaction of its own; stops the worker (exit
 * 0) if the subscription is gone or paused meanwhile.
 */
static void
set_status(const char *state, const char *error, int retries, int backoff_ms)
{
	bool		active;

	begin_tx("streamforge_kafka: status");
	active = subscription_active();
	if (active)
		put_status(state, error, retries, backoff_ms);
	commit_tx();
	if (!active)
	{
		ereport(LOG,
				(errmsg("streamforge_kafka: subscription %d was removed or paused, its worker stops",
						sub.id)));
		proc_exit(0);
	}
}

/* Waits ms milliseconds, answering interrupts and reloads. */
static void
nap(long ms)
{
	TimestampTz until = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), ms);
	long		left;

	while ((left = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), until)) > 0)
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 left, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
	}
}

static int
backoff_for(int retries)
{
	int64		b = 200;

	while (retries-- > 1 && b < sfk_retry_max_ms)
		b *= 2;
	return (int) Min(b, (int64) sfk_retry_max_ms);
}

/* ---------------------------------------------------------------- */
/* Start                                                              */
/* ---------------------------------------------------------------- */

static char *
get_text(HeapTuple tup, TupleDesc desc, int col)
{
	char	   *s = SPI_getvalue(tup, desc, col);

	return s ? MemoryContextStrdup(TopMemoryContext, s) : NULL;
}

static Jsonb *
get_jsonb(HeapTuple tup, TupleDesc desc, int col)
{
	bool		isnull;
	Datum		d = SPI_getbinval(tup, desc, col, &isnull);
	Jsonb	   *j = DatumGetJsonbP(d);
	Jsonb	   *copy = MemoryContextAlloc(TopMemoryContext, VARSIZE(j));

	memcpy(copy, j, VARSIZE(j));
	return copy;
}

static void stop_subscription(const char *error);

/*
 * What is wrong with the numbers and sizes of a stored subscription, or
 * NULL: checked before anything is allocated for them.  subscribe()
 * writes none of these; a row changed behind it (by a superuser, or
 * inserted into a 0.3.0 installation by anyone) is refused.
 */
static char *
check_numbers(HeapTuple tup, TupleDesc desc)
{
	bool		isnull;
	int32		nparts = DatumGetInt32(SPI_getbinval(tup, desc, 7, &isnull));
	int32		batch_size = DatumGetInt32(SPI_getbinval(tup, desc, 8, &isnull));
	int32		max_wait = DatumGetInt32(SPI_getbinval(tup, desc, 9, &isnull));
	int64		ooo = DatumGetInt64(SPI_getbinval(tup, desc, 10, &isnull));
	Oid			role = DatumGetObjectId(SPI_getbinval(tup, desc, 15, &isnull));
	int32		prefix_len = DatumGetInt32(SPI_getbinval(tup, desc, 16, &isnull));
	int32		brokers_len = DatumGetInt32(SPI_getbinval(tup, desc, 17, &isnull));
	int32		topic_len = DatumGetInt32(SPI_getbinval(tup, desc, 18, &isnull));
	int32		mapping_size = DatumGetInt32(SPI_getbinval(tup, desc, 19, &isnull));
	int32		options_size = DatumGetInt32(SPI_getbinval(tup, desc, 20, &isnull));

	if (role != sub.role)
		return psprintf("it records role %u, not the role %u its worker was started as",
						role, sub.role);
	if (nparts < 1 || nparts > SFK_MAX_PARTITIONS)
		return psprintf("kafka_partitions %d is out of range (1 .. %d)",
						nparts, SFK_MAX_PARTITIONS);
	if (batch_size < 1 || batch_size > SFK_MAX_BATCH)
		return psprintf("batch_size %d is out of range (1 .. %d)",
						batch_size, SFK_MAX_BATCH);
	if (max_wait < 0 || max_wait > SFK_MAX_WAIT)
		return psprintf("max_wait %d is out of range (0 .. %d)", max_wait, SFK_MAX_WAIT);
	if (ooo < 0)
		return psprintf("out_of_orderness " INT64_FORMAT " is negative", ooo);
	if (prefix_len > SFK_PREFIX_MAX)
		return psprintf("partition_prefix is %d bytes long, more than %d",
						prefix_len, SFK_PREFIX_MAX);
	if (brokers_len > SFK_BROKERS_MAX)
		return psprintf("brokers is %d bytes long, more than %d",
						brokers_len, SFK_BROKERS_MAX);
	if (topic_len > SFK_TOPIC_MAX)
		return psprintf("topic is %d bytes long, more than %d", topic_len, SFK_TOPIC_MAX);
	if (mapping_size > SFK_MAPPING_MAX)
		return psprintf("the mapping takes %d bytes, more than %d",
						mapping_size, SFK_MAPPING_MAX);
	if (options_size > SFK_OPTIONS_MAX)
		return psprintf("the options take %d bytes, more than %d",
						options_size, SFK_OPTIONS_MAX);
	return NULL;
}

/*
 * Checks the texts of the subscription as subscribe() does: the format,
 * on_error, the topic, the brokers and the options, these against the
 * privileges of the role the subscription records.  NULL or the error.
 */
static char *
check_texts(const char *on_error)
{
	MemoryContext oldcontext = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;
	char	   *volatile what = NULL;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(oldcontext);
	PG_TRY();
	{
		if (strcmp(sub.format, "json") != 0 && strcmp(sub.format, "csv") != 0 &&
			strcmp(sub.format, "text") != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("unknown format \"%s\"", sub.format)));
		if (strcmp(on_error, "skip") != 0 && strcmp(on_error, "stop") != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("unknown on_error \"%s\"", on_error)));
		sfk_check_topic(sub.topic);
		sfk_check_brokers(sub.brokers);
		sfk_check_options(sub.options, sub.superuser);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcontext);
		CurrentResourceOwner = oldowner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(oldcontext);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcontext);
		CurrentResourceOwner = oldowner;
		what = psprintf("%s (%s)", edata->message, unpack_sql_state(edata->sqlerrcode));
	}
	PG_END_TRY();
	return (char *) what;
}

/* The subscription refused: logged, and stopped with the reason. */
static void
refuse_subscription(const char *why)
{
	char	   *error = psprintf("subscription refused by its worker: %s", why);

	ereport(LOG,
			(errmsg("streamforge_kafka: subscription %d is refused: %s", sub.id, why),
			 errdetail("The worker allocates nothing for it and does not start; the subscription is paused with the reason in its error."),
			 errhint("Subscribe again with subscribe(), which checks what it stores.")));
	stop_subscription(error);
}

typedef enum SubLoad
{
	SUB_GONE,					/* removed or paused */
	SUB_LOADED,
	SUB_REFUSED					/* invalid: stopped */
} SubLoad;

/* Reads the subscription and the pipeline's offsets. */
static SubLoad
load_subscription(void)
{
	Datum		arg = Int32GetDatum(sub.id);
	Oid			type = INT4OID;
	HeapTuple	tup;
	TupleDesc	desc;
	bool		isnull;
	Datum		unit;
	Datum		parg;
	Oid			ptype = TEXTOID;
	MemoryContext old;
	char	   *sql;
	char	   *why;
	char	   *on_error;
	Oid			argtypes[8] = {TEXTOID, TEXTARRAYOID, INT8ARRAYOID, BYTEAARRAYOID,
	BYTEAARRAYOID, INT8ARRAYOID, INT8ARRAYOID, INT4ARRAYOID};
	int			i;
	uint64		r;

	if (spi_as_owner("SELECT s.pipeline, s.brokers, s.topic, s.format, s.mapping, "
					 "s.partition_prefix, s.kafka_partitions, s.batch_size, s.max_wait, "
					 "s.out_of_orderness, s.on_error, s.options, s.paused, "
					 "COALESCE((SELECT w.retries FROM streamforge_kafka.worker_status AS w "
					 "WHERE w.subscription OPERATOR(pg_catalog.=) s.id "
					 "AND w.state OPERATOR(pg_catalog.=) 'failed'), 0), s.role, "
					 "pg_catalog.octet_length(s.partition_prefix), "
					 "pg_catalog.octet_length(s.brokers), pg_catalog.octet_length(s.topic), "
					 "pg_catalog.pg_column_size(s.mapping), pg_catalog.pg_column_size(s.options) "
					 "FROM streamforge_kafka.subscription AS s "
					 "WHERE s.id OPERATOR(pg_catalog.=) $1",
					 1, &type, &arg, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read subscription %d", sub.id);
	if (SPI_processed == 0)
		return SUB_GONE;
	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	if (DatumGetBool(SPI_getbinval(tup, desc, 13, &isnull)))
		return SUB_GONE;
	if ((why = check_numbers(tup, desc)) != NULL)
	{
		refuse_subscription(why);
		return SUB_REFUSED;
	}
	sub.pipeline = get_text(tup, desc, 1);
	sub.brokers = get_text(tup, desc, 2);
	sub.topic = get_text(tup, desc, 3);
	sub.format = get_text(tup, desc, 4);
	sub.mapping = get_jsonb(tup, desc, 5);
	sub.prefix = get_text(tup, desc, 6);
	sub.nparts = DatumGetInt32(SPI_getbinval(tup, desc, 7, &isnull));
	sub.batch_size = DatumGetInt32(SPI_getbinval(tup, desc, 8, &isnull));
	sub.max_wait = DatumGetInt32(SPI_getbinval(tup, desc, 9, &isnull));
	sub.ooo = DatumGetInt64(SPI_getbinval(tup, desc, 10, &isnull));
	on_error = get_text(tup, desc, 11);
	sub.stop_on_error = strcmp(on_error, "stop") == 0;
	sub.options = get_jsonb(tup, desc, 12);
	sub.retries = DatumGetInt32(SPI_getbinval(tup, desc, 14, &isnull));
	sub.superuser = superuser_arg(sub.role);
	if ((why = check_texts(on_error)) != NULL)
	{
		refuse_subscription(why);
		return SUB_REFUSED;
	}

	/* the pipeline: its time unit, then where each partition stands */
	parg = CStringGetTextDatum(sub.pipeline);
	if (SPI_execute_with_args("SELECT streamforge.time_unit($1)", 1, &ptype, &parg,
							  NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the time unit");
	unit = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	sub.unit_us = isnull ? 0 : sfk_unit_us(DatumGetIntervalP(unit));

	old = MemoryContextSwitchTo(TopMemoryContext);
	sub.pnames = palloc(sizeof(char *) * sub.nparts);
	sub.consumed = palloc(sizeof(int64) * sub.nparts);
	sub.pending = palloc0(sizeof(int) * sub.nparts);
	sub.progress = palloc(sizeof(int64) * sub.nparts);
	sub.hw_saved = palloc(sizeof(int64) * sub.nparts);
	for (i = 0; i < sub.nparts; i++)
	{
		sub.pnames[i] = psprintf("%s%d", sub.prefix, i);
		sub.consumed[i] = PG_INT64_MIN;
		sub.progress[i] = PG_INT64_MIN;
		sub.hw_saved[i] = -1;
	}
	MemoryContextSwitchTo(old);

	if (SPI_execute_with_args("SELECT p.partition, p.consumed_offset, p.progress "
							  "FROM streamforge.partitions($1) AS p",
							  1, &ptype, &parg, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the partitions");
	for (r = 0; r < SPI_processed; r++)
	{
		char	   *name = SPI_getvalue(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 1);

		for (i = 0; i < sub.nparts; i++)
		{
			if (strcmp(name, sub.pnames[i]) == 0)
			{
				Datum		d;

				sub.consumed[i] = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[r],
															  SPI_tuptable->tupdesc, 2, &isnull));
				d = SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 3, &isnull);
				if (!isnull)
					sub.progress[i] = DatumGetInt64(d);
			}
		}
	}
	for (i = 0; i < sub.nparts; i++)
		if (sub.consumed[i] == PG_INT64_MIN)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("pipeline \"%s\" has no partition \"%s\" for partition %d of topic \"%s\"",
							sub.pipeline, sub.pnames[i], i, sub.topic)));

	sub.aggregate = sfk_is_aggregate_mapping(sub.mapping);
	sub.trailing = MemoryContextAllocZero(TopMemoryContext, sizeof(int) * sub.nparts);
	if (sub.aggregate)
		sql = sfk_build_aggregate_sql(sub.pipeline, sub.format, sub.mapping, sub.topic,
									  sub.unit_us, &sub.measures, NULL);
	else
	{
		sql = sfk_build_mapping_sql(sub.format, sub.mapping, sub.topic, sub.unit_us);
		sub.cmap = sfk_cmap_prepare(sub.format, sub.mapping, sub.topic, sub.unit_us);
	}
	sub.plan = SPI_prepare(sql, 8, argtypes);
	if (sub.plan == NULL)
		elog(ERROR, "could not prepare the mapping of subscription %d: %s",
			 sub.id, SPI_result_code_string(SPI_result));
	SPI_keepplan(sub.plan);
	return SUB_LOADED;
}

/* Assigns every partition at its consumed offset + 1 (and the pending). */
static void
assign_partitions(void)
{
	rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(sub.nparts);
	rd_kafka_resp_err_t err;
	int			i;

	for (i = 0; i < sub.nparts; i++)
	{
		sub.pending[i] = 0;
		rd_kafka_topic_partition_list_add(list, sub.topic, i)->offset = sub.consumed[i] + 1;
	}
	(void) rd_kafka_assign(consumer, NULL);
	err = rd_kafka_assign(consumer, list);
	rd_kafka_topic_partition_list_destroy(list);
	if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("could not assign the partitions of topic \"%s\": %s",
						sub.topic, rd_kafka_err2str(err))));
}

static void
create_consumer(void)
{
	char		errstr[512];
	char	   *group = psprintf("streamforge_kafka.%u.%d", MyDatabaseId, sub.id);
	rd_kafka_conf_t *conf;

	/* the options apply over the defaults, auto.offset.reset last */
	conf = sfk_make_conf(sub.brokers, sub.options, group, sub.superuser);
	if (rd_kafka_conf_set(conf, "auto.offset.reset", "error", errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK)
		elog(ERROR, "auto.offset.reset: %s", errstr);
	rd_kafka_conf_set_error_cb(conf, error_cb);
	consumer = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, sizeof(errstr));
	if (consumer == NULL)
	{
		rd_kafka_conf_destroy(conf);
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("could not create a Kafka consumer: %s", errstr)));
	}
	sfk_serve_log(consumer);
	rd_kafka_poll_set_consumer(consumer);
	on_proc_exit(destroy_consumer, (Datum) 0);
}

/* ---------------------------------------------------------------- */
/* Outages                                                            */
/* ---------------------------------------------------------------- */

/* Probes the cluster until it answers, with backoff. */
static void
ride_out_outage(void)
{
	int			retries = 0;

	while (outage)
	{
		int			backoff;

		retries++;
		backoff = backoff_for(retries);
		ereport(WARNING,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("streamforge_kafka: subscription %d: cannot reach \"%s\": %s",
						sub.id, sub.brokers, outage_reason),
				 errdetail("Attempt %d; the next in %d ms.", retries, backoff)));
		set_status("retrying", outage_reason, retries, backoff);
		nap(backoff);
		if (sfk_count_partitions(consumer, sub.topic, 1000, outage_reason,
								 sizeof(outage_reason)) > 0)
			outage = false;
	}
	if (retries > 0)
	{
		ereport(LOG,
				(errmsg("streamforge_kafka: subscription %d: \"%s\" is reachable again after %d attempts",
						sub.id, sub.brokers, retries)));
		set_status("running", NULL, 0, 0);
	}
}

/* ---------------------------------------------------------------- */
/* Batches                                                            */
/* ---------------------------------------------------------------- */

static bytea *
to_bytea(const void *p, size_t len)
{
	bytea	   *b = palloc(VARHDRSZ + len);

	SET_VARSIZE(b, VARHDRSZ + len);
	if (len > 0)
		memcpy(VARDATA(b), p, len);
	return b;
}

/* Collects up to batch_size messages, waiting max_wait at most. */
static int
collect(Msg *msgs)
{
	int			n = 0;
	TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), sub.max_wait);

	while (n < sub.batch_size && !outage)
	{
		long		left = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), deadline);
		rd_kafka_message_t *m;

		m = rd_kafka_consumer_poll(consumer, (int) Min(left, 100L));
		CHECK_FOR_INTERRUPTS();
		if (m != NULL)
		{
			if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR)
			{
				Msg		   *msg = &msgs[n++];
				rd_kafka_timestamp_type_t tstype;

				msg->part = m->partition;
				msg->offset = m->offset;
				msg->key = m->key ? to_bytea(m->key, m->key_len) : NULL;
				msg->payload = m->payload ? to_bytea(m->payload, m->len) : NULL;
				msg->ts = rd_kafka_message_timestamp(m, &tstype);
				rd_kafka_message_destroy(m);
				if (msg->part < 0 || msg->part >= sub.nparts)
				{
					n--;
					ereport(WARNING,
							(errmsg("streamforge_kafka: subscription %d: message of unknown partition %d ignored",
									sub.id, msg->part)));
				}
				continue;
			}
			else
			{
				char	   *what = pstrdup(rd_kafka_message_errstr(m));
				rd_kafka_resp_err_t err = m->err;
				int			m_part = m->partition;

				rd_kafka_message_destroy(m);
				if (err == RD_KAFKA_RESP_ERR__PARTITION_EOF)
					continue;
				if ((err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET ||
					 err == RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE) && lost_part < 0)
				{
					/* issue 43, item 5: a state, not a restart every second */
					int			part = m_part;

					lost_part = part;
					snprintf(lost_reason, sizeof(lost_reason), "%s", what);
					break;
				}
				if (err == RD_KAFKA_RESP_ERR__TRANSPORT ||
					err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN)
				{
					outage = true;
					snprintf(outage_reason, sizeof(outage_reason), "%s", what);
					break;
				}
				ereport(ERROR,
						(errcode(ERRCODE_CONNECTION_FAILURE),
						 errmsg("could not consume topic \"%s\": %s", sub.topic, what)));
			}
		}
		if (left <= 0)
			break;
	}
	return n;
}

/*
 * Adds message m at its offset, after the partition's pending skipped
 * offsets (delivered the same event).  consumed/pending are the
 * tentative positions of this batch.
 */
static void
elems_add_msg(Elems *e, Msg *m, int64 *consumed, int *pending, Datum *pnames)
{
	int			j;
	int64		expect = consumed[m->part] + pending[m->part] + 1;

	if (m->offset != expect)
		ereport(ERROR,
				(errcode(SF_OFFSET_CONFLICT),
				 errmsg("offset conflict in partition %d of topic \"%s\"", m->part, sub.topic),
				 errdetail("The next offset is " INT64_FORMAT ", the cluster sent " INT64_FORMAT ".",
						   expect, m->offset),
				 errhint("Messages are consumed at their Kafka offsets: a gap (a compacted or transactional topic) is not skipped.")));
	for (j = 1; j <= pending[m->part]; j++)
		sfk_elems_add(e, m, consumed[m->part] + j, pnames[m->part]);
	sfk_elems_add(e, m, m->offset, pnames[m->part]);
}

/* Runs the mapping statement over the elements. */
static void
run_elems(Elems *e)
{
	Datum		args[8];

	if (sub.cmap)
	{
		memset(sub.trailing, 0, sizeof(int) * sub.nparts);
		sfk_cmap_run(e, sub.pipeline);
		return;
	}
	args[0] = CStringGetTextDatum(sub.pipeline);
	args[1] = PointerGetDatum(sfk_mk_array(e->pn, NULL, e->n, TEXTOID));
	args[2] = PointerGetDatum(sfk_mk_array(e->po, NULL, e->n, INT8OID));
	args[3] = PointerGetDatum(sfk_mk_array(e->k, e->knull, e->n, BYTEAOID));
	args[4] = PointerGetDatum(sfk_mk_array(e->p, e->pnull, e->n, BYTEAOID));
	args[5] = PointerGetDatum(sfk_mk_array(e->ts, NULL, e->n, INT8OID));
	args[6] = PointerGetDatum(sfk_mk_array(e->ko, NULL, e->n, INT8OID));
	args[7] = PointerGetDatum(sfk_mk_array(e->kp, NULL, e->n, INT4OID));
	if (sub.aggregate)
	{
		int32	   *kparts = palloc(sizeof(int32) * Max(e->n, 1));
		int			i;

		for (i = 0; i < e->n; i++)
			kparts[i] = DatumGetInt32(e->kp[i]);
		sfk_run_aggregate(sub.plan, args, sub.pipeline, sub.measures, sub.nparts,
						  kparts, sub.trailing);
		return;
	}
	memset(sub.trailing, 0, sizeof(int) * sub.nparts);
	if (SPI_execute_plan(sub.plan, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "the mapping statement of subscription %d failed", sub.id);
}

/*
 * Whether an error of the mapping statement is the message's: a data
 * exception (class 22, the JSON errors 2203x included), a program limit
 * (class 54: 54001, the stack depth of a deeply nested message, 54000),
 * an event id seen with other content (SF002).  Anything else (a revoked
 * privilege, an offset gap, a dropped pipeline, a cancel) is not.
 */
static bool
is_bad_message_error(ErrorData *edata)
{
	return ERRCODE_TO_CATEGORY(edata->sqlerrcode) == ERRCODE_DATA_EXCEPTION ||
		ERRCODE_TO_CATEGORY(edata->sqlerrcode) == ERRCODE_PROGRAM_LIMIT_EXCEEDED ||
		edata->sqlerrcode == SF_IDENTITY_CONFLICT ||
		edata->sqlerrcode == ERRCODE_UNTRANSLATABLE_CHARACTER ||
		edata->sqlerrcode == ERRCODE_CHARACTER_NOT_IN_REPERTOIRE;
}

/*
 * Runs the elements in a subtransaction: NULL when they went in, the
 * error when it is a bad message's (anything else is thrown again).
 */
static ErrorData *
try_elems(Elems *e)
{
	MemoryContext oldcontext = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;
	ErrorData  *volatile edata = NULL;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(oldcontext);
	PG_TRY();
	{
		run_elems(e);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcontext);
		CurrentResourceOwner = oldowner;
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(oldcontext);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcontext);
		CurrentResourceOwner = oldowner;
		if (!is_bad_message_error((ErrorData *) edata))
			ReThrowError((ErrorData *) edata);
	}
	PG_END_TRY();
	return (ErrorData *) edata;
}

/* A dead letter, in the batch's transaction (kept once). */
static void
reject(Msg *m, ErrorData *edata)
{
	Datum		args[10];
	Oid			types[10] = {INT4OID, TEXTOID, TEXTOID, INT4OID, INT8OID, BYTEAOID,
	BYTEAOID, INT8OID, TEXTOID, TEXTOID};
	char		nulls[10] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};

	args[0] = Int32GetDatum(sub.id);
	args[1] = CStringGetTextDatum(sub.pipeline);
	args[2] = CStringGetTextDatum(sub.topic);
	args[3] = Int32GetDatum(m->part);
	args[4] = Int64GetDatum(m->offset);
	args[5] = m->key ? PointerGetDatum(m->key) : (Datum) 0;
	nulls[5] = m->key ? ' ' : 'n';
	args[6] = m->payload ? PointerGetDatum(m->payload) : (Datum) 0;
	nulls[6] = m->payload ? ' ' : 'n';
	args[7] = Int64GetDatum(m->ts);
	args[8] = CStringGetTextDatum(edata->message ? edata->message : "unknown error");
	args[9] = CStringGetTextDatum(unpack_sql_state(edata->sqlerrcode));
	if (spi_as_owner("INSERT INTO streamforge_kafka.rejected AS r "
							  "(subscription, pipeline, topic, partition, \"offset\", key, payload, "
							  "kafka_timestamp, error, sqlstate, role) "
							  "SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, s.role "
							  "FROM streamforge_kafka.subscription AS s WHERE s.id OPERATOR(pg_catalog.=) $1 "
							  "ON CONFLICT (subscription, partition, \"offset\") DO UPDATE "
							  "SET error = EXCLUDED.error, sqlstate = EXCLUDED.sqlstate, "
							  "rejected_at = pg_catalog.now()",
							  10, types, args, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not record a rejected message");
	ereport(LOG,
			(errmsg("streamforge_kafka: subscription %d: message at offset " INT64_FORMAT
					" of partition %d of topic \"%s\" rejected (%s): %s",
					sub.id, m->offset, m->part, sub.topic,
					sub.stop_on_error ? "the subscription stops" : "skipped",
					edata->message ? edata->message : "unknown error")));
}

static void
stop_subscription(const char *error)
{
	Datum		args[2];
	Oid			types[2] = {INT4OID, TEXTOID};

	args[0] = Int32GetDatum(sub.id);
	args[1] = CStringGetTextDatum(error);
	if (spi_as_owner("UPDATE streamforge_kafka.subscription AS s "
							  "SET paused = true, error = $2 WHERE s.id OPERATOR(pg_catalog.=) $1",
							  2, types, args, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not stop subscription %d", sub.id);
	put_status("stopped", error, 0, 0);
}

/*
 * Records the high watermarks that moved; written[i] is what partition i's
 * row holds once the batch commits (issue 43, item 7: 0.3.0 remembered the
 * value librdkafka held after the commit, which a fetch could have moved
 * meanwhile, and then never wrote that value).
 */
static void
record_watermarks(int64 *written)
{
	int			i;

	for (i = 0; i < sub.nparts; i++)
	{
		int64		lo = -1,
					hi = -1;
		Datum		args[3];
		Oid			types[3] = {INT4OID, INT4OID, INT8OID};

		written[i] = sub.hw_saved[i];
		if (rd_kafka_get_watermark_offsets(consumer, sub.topic, i, &lo, &hi) != RD_KAFKA_RESP_ERR_NO_ERROR ||
			hi < 0 || hi == sub.hw_saved[i])
			continue;
		written[i] = hi;
		args[0] = Int32GetDatum(sub.id);
		args[1] = Int32GetDatum(i);
		args[2] = Int64GetDatum(hi);
		if (spi_as_owner("INSERT INTO streamforge_kafka.partition_status AS h "
								  "(subscription, kafka_partition, high_watermark) VALUES ($1, $2, $3) "
								  "ON CONFLICT (subscription, kafka_partition) DO UPDATE "
								  "SET high_watermark = EXCLUDED.high_watermark, "
								  "updated_at = pg_catalog.now()",
								  3, types, args, NULL, false, 0) != SPI_OK_INSERT)
			elog(ERROR, "could not record a high watermark");
	}
}

/*
 * One batch, in one transaction.  Returns false when the worker is to
 * stop (subscription gone or paused, or stopped on a bad message).
 */
static bool
run_batch(Msg *msgs, int n, MemoryContext batchcxt)
{
	int64	   *consumed;
	int		   *pending;
	int64	   *maxts;
	Datum	   *pnames;
	Elems		e;
	ErrorData  *edata;
	bool		stopped = false;
	int			i;
	int64	   *newprog;
	int64	   *hw_written;

	begin_tx("streamforge_kafka: batch");
	if (!subscription_active())
	{
		commit_tx();
		return false;
	}
	MemoryContextSwitchTo(batchcxt);
	consumed = palloc(sizeof(int64) * sub.nparts);
	pending = palloc(sizeof(int) * sub.nparts);
	maxts = palloc(sizeof(int64) * sub.nparts);
	newprog = palloc(sizeof(int64) * sub.nparts);
	pnames = palloc(sizeof(Datum) * sub.nparts);
	for (i = 0; i < sub.nparts; i++)
	{
		consumed[i] = sub.consumed[i];
		pending[i] = sub.pending[i];
		maxts[i] = -1;
		newprog[i] = sub.progress[i];
		pnames[i] = CStringGetTextDatum(sub.pnames[i]);
	}

	if (n > 0)
	{
		int			total = n;

		for (i = 0; i < sub.nparts; i++)
			total += pending[i];
		sfk_elems_init(&e, total);
		for (i = 0; i < n; i++)
		{
			elems_add_msg(&e, &msgs[i], consumed, pending, pnames);
			consumed[msgs[i].part] = msgs[i].offset;
			pending[msgs[i].part] = 0;
		}
		edata = try_elems(&e);
		if (edata == NULL)
		{
			/* an aggregate's non-matching offsets at the end stay pending */
			for (i = 0; i < sub.nparts; i++)
				if (sub.trailing[i] > 0)
				{
					consumed[i] -= sub.trailing[i];
					pending[i] = sub.trailing[i];
				}
		}
		else
		{
			/* a bad message: one by one, to find it (them) */
			for (i = 0; i < sub.nparts; i++)
			{
				consumed[i] = sub.consumed[i];
				pending[i] = sub.pending[i];
			}
			for (i = 0; i < n; i++)
			{
				Msg		   *m = &msgs[i];

				CHECK_FOR_INTERRUPTS();
				e.n = 0;
				elems_add_msg(&e, m, consumed, pending, pnames);
				edata = try_elems(&e);
				if (edata == NULL)
				{
					/* an aggregate's message that does not match: pending */
					consumed[m->part] = m->offset - sub.trailing[m->part];
					pending[m->part] = sub.trailing[m->part];
					continue;
				}
				reject(m, edata);
				if (sub.stop_on_error)
				{
					char	   *err = psprintf("message at offset " INT64_FORMAT " of partition %d: %s",
											   m->offset, m->part, edata->message);

					stop_subscription(err);
					stopped = true;
					n = i;		/* the messages after it are not consumed */
					break;
				}
				pending[m->part]++;
			}
		}
		for (i = 0; i < n; i++)
			if (msgs[i].ts >= 0)
				maxts[msgs[i].part] = Max(maxts[msgs[i].part], msgs[i].ts);
	}

	/* progress: the largest Kafka timestamp minus out_of_orderness */
	for (i = 0; i < sub.nparts; i++)
	{
		int64		p;
		Datum		args[3];
		Oid			types[3] = {TEXTOID, TEXTOID, INT8OID};

		if (maxts[i] < 0)
			continue;
		p = sfk_ms_to_units(maxts[i], sub.unit_us) - sub.ooo;
		if (p <= sub.progress[i])
			continue;
		args[0] = CStringGetTextDatum(sub.pipeline);
		args[1] = pnames[i];
		args[2] = Int64GetDatum(p);
		if (SPI_execute_with_args("SELECT pg_catalog.count(*) FROM streamforge.advance($1, $2, $3)",
								  3, types, args, NULL, false, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not advance partition \"%s\"", sub.pnames[i]);
		newprog[i] = p;
	}
	hw_written = palloc(sizeof(int64) * sub.nparts);
	record_watermarks(hw_written);
	MemoryContextSwitchTo(TopMemoryContext);
	commit_tx();

	/* committed: the positions are the batch's */
	for (i = 0; i < sub.nparts; i++)
	{
		sub.consumed[i] = consumed[i];
		sub.pending[i] = pending[i];
		sub.progress[i] = newprog[i];
		sub.hw_saved[i] = hw_written[i];
	}
	return !stopped;
}

/*
 * The cluster no longer has the next offset of partition lost_part
 * (retention overtook the consumer, or the topic was recreated): the
 * subscription pauses with the state 'offsets lost' and an error that says
 * where each side stands.  The pipeline's offsets stay as they are (docs/
 * kafka.md, "Lost offsets").
 */
static void
stop_lost_offsets(void)
{
	int64		lo = -1,
				hi = -1;
	char	   *error;

	(void) rd_kafka_query_watermark_offsets(consumer, sub.topic, lost_part, &lo, &hi, 5000);
	error = psprintf("offsets lost in partition %d of topic \"%s\": the next offset is " INT64_FORMAT
					 ", the partition holds offsets " INT64_FORMAT " to " INT64_FORMAT " (%s)",
					 lost_part, sub.topic, sub.consumed[lost_part] + sub.pending[lost_part] + 1,
					 lo, hi - 1, lost_reason);
	ereport(WARNING,
			(errmsg("streamforge_kafka: subscription %d: %s", sub.id, error),
			 errhint("The subscription is paused. See \"Lost offsets\" in docs/kafka.md.")));
	begin_tx("streamforge_kafka: lost offsets");
	if (subscription_active())
	{
		Datum		args[2];
		Oid			types[2] = {INT4OID, TEXTOID};

		args[0] = Int32GetDatum(sub.id);
		args[1] = CStringGetTextDatum(error);
		if (spi_as_owner("UPDATE streamforge_kafka.subscription AS s "
						 "SET paused = true, error = $2 WHERE s.id OPERATOR(pg_catalog.=) $1",
						 2, types, args, NULL, false, 0) != SPI_OK_UPDATE)
			elog(ERROR, "could not pause subscription %d", sub.id);
		put_status("offsets lost", error, 0, 0);
	}
	commit_tx();
}

/* ---------------------------------------------------------------- */
/* Main                                                               */
/* ---------------------------------------------------------------- */

void
sfk_worker_main(Datum arg)
{
	SfkWorkerArgs args;
	MemoryContext batchcxt;
	Msg		   *msgs;
	bool		locked;

	memcpy(&args, MyBgworkerEntry->bgw_extra, sizeof(args));
	memset(&sub, 0, sizeof(sub));
	sub.id = args.subscription;
	sub.role = args.role;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(args.database, args.role, 0);
	/* the mappings read timestamps the same whoever subscribed */
	SetConfigOption("TimeZone", "UTC", PGC_USERSET, PGC_S_SESSION);
	SetConfigOption("DateStyle", "ISO, MDY", PGC_USERSET, PGC_S_SESSION);
	/* and as an attached table's trigger does (62_attach.sql), for aggregates */
	SetConfigOption("search_path", "pg_catalog, pg_temp", PGC_USERSET, PGC_S_SESSION);
	SetConfigOption("IntervalStyle", "postgres", PGC_USERSET, PGC_S_SESSION);
	SetConfigOption("extra_float_digits", "1", PGC_USERSET, PGC_S_SESSION);
	SetConfigOption("bytea_output", "hex", PGC_USERSET, PGC_S_SESSION);
	SetConfigOption("lc_numeric", "C", PGC_USERSET, PGC_S_SESSION);
	SetConfigOption("lc_monetary", "C", PGC_USERSET, PGC_S_SESSION);
	SetConfigOption("lc_time", "C", PGC_USERSET, PGC_S_SESSION);
	SetConfigOption("standard_conforming_strings", "on", PGC_USERSET, PGC_S_SESSION);
	SetConfigOption("transform_null_equals", "off", PGC_USERSET, PGC_S_SESSION);
	SetConfigOption("application_name", MyBgworkerEntry->bgw_name, PGC_USERSET, PGC_S_SESSION);

	PG_TRY();
	{
		Datum		la = Int32GetDatum(sub.id);
		Oid			lt = INT4OID;
		bool		isnull;

		begin_tx("streamforge_kafka: start");
		/* one worker per subscription (session lock, held until exit) */
		if (SPI_execute_with_args("SELECT pg_catalog.pg_try_advisory_lock(24395, $1)",
								  1, &lt, &la, NULL, false, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not take the subscription's lock");
		locked = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
		if (!locked)
		{
			commit_tx();
			proc_exit(0);
		}
		switch (load_subscription())
		{
			case SUB_GONE:
				commit_tx();
				ereport(LOG,
						(errmsg("streamforge_kafka: subscription %d is gone or paused, its worker stops",
								sub.id)));
				proc_exit(0);
				break;
			case SUB_REFUSED:
				commit_tx();
				proc_exit(0);
				break;
			case SUB_LOADED:
				break;
		}
		put_status("starting", NULL, sub.retries, 0);
		commit_tx();

		create_consumer();
		assign_partitions();
		set_status("running", NULL, 0, 0);
		ereport(LOG,
				(errmsg("streamforge_kafka: subscription %d: consuming topic \"%s\" into pipeline \"%s\"",
						sub.id, sub.topic, sub.pipeline)));

		batchcxt = AllocSetContextCreate(TopMemoryContext, "streamforge_kafka batch",
										 ALLOCSET_DEFAULT_SIZES);
		msgs = MemoryContextAlloc(TopMemoryContext, sizeof(Msg) * sub.batch_size);
		for (;;)
		{
			int			n;
			MemoryContext old;

			CHECK_FOR_INTERRUPTS();
			if (ConfigReloadPending)
			{
				ConfigReloadPending = false;
				ProcessConfigFile(PGC_SIGHUP);
			}
			sfk_log_flush();
			if (outage)
				ride_out_outage();
			MemoryContextReset(batchcxt);
			old = MemoryContextSwitchTo(batchcxt);
			n = collect(msgs);
			MemoryContextSwitchTo(old);
			if (!run_batch(msgs, n, batchcxt))
				break;
			if (lost_part >= 0)
			{
				stop_lost_offsets();
				break;
			}
		}
		ereport(LOG,
				(errmsg("streamforge_kafka: subscription %d: the worker stops", sub.id)));
	}
	PG_CATCH();
	{
		ErrorData  *edata;
		int			backoff;

		HOLD_INTERRUPTS();
		EmitErrorReport();
		MemoryContextSwitchTo(TopMemoryContext);
		edata = CopyErrorData();
		FlushErrorState();
		AbortOutOfAnyTransaction();
		RESUME_INTERRUPTS();
		/* recorded, then the postmaster restarts the worker */
		backoff = backoff_for(sub.retries + 1);
		if (sub.pipeline != NULL)
			set_status("failed", edata->message, sub.retries + 1, backoff);
		nap(backoff);
		proc_exit(1);
	}
	PG_END_TRY();
	proc_exit(0);
}
