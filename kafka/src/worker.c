/*
 * worker.c: the worker of one subscription.
 *
 * The worker connects as the subscribing role (so the pipeline's own
 * privileges gate what it does), reads where each Kafka partition stands
 * from the pipeline (partitions(): consumed_offset, the only source of
 * truth; the sfk_consumer group's offsets are never committed nor read),
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

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

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
#include "storage/lock.h"
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
#include "worker.h"

#define SF_OFFSET_CONFLICT MAKE_SQLSTATE('S','F','0','0','1')
#define SF_IDENTITY_CONFLICT MAKE_SQLSTATE('S','F','0','0','2')


SfkSub		sfk_sub;
rd_kafka_t *sfk_consumer = NULL;

/* lost offsets: the partition whose next offset the cluster no longer has */
int			sfk_lost_part = -1;
char		sfk_lost_reason[512];

/* what the error callback saw (set in this process, in rd_kafka poll) */
bool		sfk_outage = false;
char		sfk_outage_reason[512];

static void
error_cb(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
	if (err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN ||
		err == RD_KAFKA_RESP_ERR__RESOLVE ||
		err == RD_KAFKA_RESP_ERR__AUTHENTICATION ||
		err == RD_KAFKA_RESP_ERR__SSL)
	{
		sfk_outage = true;
		snprintf(sfk_outage_reason, sizeof(sfk_outage_reason), "%s", reason);
	}
}

static void
destroy_consumer(int code, Datum arg)
{
	if (sfk_consumer != NULL)
	{
		rd_kafka_destroy_flags(sfk_consumer, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
		sfk_consumer = NULL;
	}
}

/* ---------------------------------------------------------------- */
/* Transactions and status                                            */
/* ---------------------------------------------------------------- */

void
sfk_begin_tx(const char *what)
{
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, what);
}

void
sfk_commit_tx(void)
{
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);
}

/*
 * The subscription row, locked FOR KEY SHARE: false when it is gone or
 * paused (the worker then stops).  Its on_error is read again (set_on_error
 * applies from the next batch).
 */
bool
sfk_subscription_active(void)
{
	Datum		arg = Int32GetDatum(sfk_sub.id);
	Oid			type = INT4OID;
	bool		isnull;
	char	   *on_error;
	int32		workers;

	static const char sql[] =
		"SELECT s.paused, s.on_error, s.workers FROM streamforge_kafka.subscription AS s "
		"WHERE s.id OPERATOR(pg_catalog.=) $1 FOR KEY SHARE";

	if (sfk_spi_kept(sql, true, 1, &type, &arg, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read subscription %d", sfk_sub.id);
	if (SPI_processed == 0)
		return false;
	on_error = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
	if (on_error != NULL && (strcmp(on_error, "stop") == 0 || strcmp(on_error, "skip") == 0))
		sfk_sub.stop_on_error = strcmp(on_error, "stop") == 0;
	/* set_workers: this set stops, the launcher starts the new one */
	workers = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
										  3, &isnull));
	if (!isnull && sfk_sub.workers > 0 && workers != sfk_sub.workers)
	{
		ereport(LOG,
				(errmsg("streamforge_kafka: subscription %d now has %d workers, not %d: worker %d stops",
						sfk_sub.id, workers, sfk_sub.workers, sfk_sub.worker)));
		return false;
	}
	return !DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
									   1, &isnull));
}

/* Records the worker's state, in the current transaction. */
void
sfk_put_status(const char *state, const char *error, int retries, int backoff_ms)
{
	Datum		args[7];
	Oid			types[7] = {INT4OID, INT4OID, TEXTOID, INT4OID, INT4OID, TEXTOID, INT4OID};
	char		nulls[7] = {' ', ' ', ' ', ' ', ' ', ' ', ' '};

	args[0] = Int32GetDatum(sfk_sub.id);
	args[1] = Int32GetDatum(MyProcPid);
	args[2] = CStringGetTextDatum(state);
	args[3] = Int32GetDatum(retries);
	args[4] = Int32GetDatum(backoff_ms);
	if (error)
		args[5] = CStringGetTextDatum(error);
	else
		nulls[5] = 'n';
	args[6] = Int32GetDatum(sfk_sub.worker);
	if (sfk_spi_as_owner("INSERT INTO streamforge_kafka.worker_status AS w "
							  "(subscription, pid, state, retries, backoff_ms, last_error, worker) "
							  "SELECT $1, $2, $3, $4, $5, $6, $7 WHERE EXISTS (SELECT FROM "
							  "streamforge_kafka.subscription AS s WHERE s.id OPERATOR(pg_catalog.=) $1) "
							  "ON CONFLICT (subscription, worker) DO UPDATE SET pid = EXCLUDED.pid, "
							  "state = EXCLUDED.state, retries = EXCLUDED.retries, "
							  "backoff_ms = EXCLUDED.backoff_ms, "
							  "last_error = EXCLUDED.last_error, "
							  "updated_at = pg_catalog.now()",
							  7, types, args, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not record the state of subscription %d", sfk_sub.id);
}

/*
 * Records the state in a transaction of its own; stops the worker (exit
 * 0) if the subscription is gone or paused meanwhile.
 */
static void
set_status(const char *state, const char *error, int retries, int backoff_ms)
{
	bool		active;

	sfk_begin_tx("streamforge_kafka: status");
	active = sfk_subscription_active();
	if (active)
		sfk_put_status(state, error, retries, backoff_ms);
	sfk_commit_tx();
	if (!active)
	{
		ereport(LOG,
				(errmsg("streamforge_kafka: subscription %d was removed or paused, its worker stops",
						sfk_sub.id)));
		proc_exit(0);
	}
}

/*
 * The status rows of workers the subscription no longer has (set_workers
 * made it fewer): deleted by worker 0 when it starts, in the current
 * transaction, so that a role sees no stale worker.
 */
static void
forget_surplus_workers(void)
{
	Datum		args[2];
	Oid			types[2] = {INT4OID, INT4OID};

	args[0] = Int32GetDatum(sfk_sub.id);
	args[1] = Int32GetDatum(sfk_sub.nworkers);
	if (sfk_spi_as_owner("DELETE FROM streamforge_kafka.worker_status AS w "
						 "WHERE w.subscription OPERATOR(pg_catalog.=) $1 "
						 "AND w.worker OPERATOR(pg_catalog.>=) $2",
						 2, types, args, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not delete the status of the workers subscription %d no longer has",
			 sfk_sub.id);
}

/* Pauses the subscription with error, in the current transaction. */
void
sfk_stop_subscription(const char *error)
{
	sfk_pause_subscription(error, "stopped");
}

/*
 * Pauses the subscription with error (in the current transaction) and
 * records the worker's state
 */
void
sfk_pause_subscription(const char *error, const char *state)
{
	Datum		args[2];
	Oid			types[2] = {INT4OID, TEXTOID};

	args[0] = Int32GetDatum(sfk_sub.id);
	args[1] = CStringGetTextDatum(error);
	if (sfk_spi_as_owner("UPDATE streamforge_kafka.subscription AS s "
							  "SET paused = true, error = $2 WHERE s.id OPERATOR(pg_catalog.=) $1",
							  2, types, args, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not pause subscription %d", sfk_sub.id);
	sfk_put_status(state, error, 0, 0);
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
	int32		workers = DatumGetInt32(SPI_getbinval(tup, desc, 21, &isnull));

	if (role != sfk_sub.role)
		return psprintf("it records role %u, not the role %u its worker was started as",
						role, sfk_sub.role);
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
	if (workers < 1 || workers > SFK_MAX_WORKERS)
		return psprintf("workers %d is out of range (1 .. %d)", workers, SFK_MAX_WORKERS);
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
		if (strcmp(sfk_sub.format, "json") != 0 && strcmp(sfk_sub.format, "csv") != 0 &&
			strcmp(sfk_sub.format, "text") != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("unknown format \"%s\"", sfk_sub.format)));
		if (strcmp(on_error, "skip") != 0 && strcmp(on_error, "stop") != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("unknown on_error \"%s\"", on_error)));
		sfk_check_topic(sfk_sub.topic);
		sfk_check_brokers(sfk_sub.brokers);
		sfk_check_options(sfk_sub.options, sfk_sub.superuser);
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
			(errmsg("streamforge_kafka: subscription %d is refused: %s", sfk_sub.id, why),
			 errdetail("The worker allocates nothing for it and does not start; the subscription is paused with the reason in its error."),
			 errhint("Subscribe again with subscribe(), which checks what it stores.")));
	sfk_stop_subscription(error);
}

/*
 * Takes the lock of each Kafka partition this worker reads (of nparts),
 * for as long as it runs: after set_workers a partition may move to
 * another worker, which then waits here for the worker of the previous set
 * that read it to finish its batch and exit; it reads the pipeline's
 * offsets after that.  So no partition is ever read by two workers at
 * once, whatever the launcher does (on a parallel pipeline the core's lane
 * claim would also serialize two writers of one partition, but the second
 * would then replay the first's offsets).  A session lock: released when
 * the worker exits.
 */
static void
lock_partitions(int nparts)
{
	for (int k = 0; k < nparts; k++)
	{
		LOCKTAG		tag;

		if (SFK_OWNER(k, sfk_sub.nworkers) != sfk_sub.worker)
			continue;
		SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, (uint32) sfk_sub.id, (uint32) k,
							 SFK_LOCK_PARTITION);
		if (LockAcquire(&tag, ExclusiveLock, true, true) != LOCKACQUIRE_NOT_AVAIL)
			continue;
		ereport(LOG,
				(errmsg("streamforge_kafka: subscription %d: worker %d waits for partition %d, read by a worker of the previous set",
						sfk_sub.id, sfk_sub.worker, k)));
		pgstat_report_activity(STATE_RUNNING, "streamforge_kafka: waiting for a partition");
		(void) LockAcquire(&tag, ExclusiveLock, true, false);
	}
}

typedef enum SubLoad
{
	SUB_GONE,					/* removed or paused */
	SUB_LOADED,
	SUB_REFUSED,				/* invalid: stopped */
	SUB_SURPLUS					/* this worker is not one of its workers now */
} SubLoad;

/* Reads the subscription and the pipeline's offsets. */
static SubLoad
load_subscription(void)
{
	Datum		wargs[2];
	Oid			wtypes[2] = {INT4OID, INT4OID};
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

	wargs[0] = Int32GetDatum(sfk_sub.id);
	wargs[1] = Int32GetDatum(sfk_sub.worker);
	if (sfk_spi_as_owner("SELECT s.pipeline, s.brokers, s.topic, s.format, s.mapping, "
					 "s.partition_prefix, s.kafka_partitions, s.batch_size, s.max_wait, "
					 "s.out_of_orderness, s.on_error, s.options, s.paused, "
					 "COALESCE((SELECT w.retries FROM streamforge_kafka.worker_status AS w "
					 "WHERE w.subscription OPERATOR(pg_catalog.=) s.id "
					 "AND w.worker OPERATOR(pg_catalog.=) $2 "
					 "AND w.state OPERATOR(pg_catalog.=) 'failed'), 0), s.role, "
					 "pg_catalog.octet_length(s.partition_prefix), "
					 "pg_catalog.octet_length(s.brokers), pg_catalog.octet_length(s.topic), "
					 "pg_catalog.pg_column_size(s.mapping), pg_catalog.pg_column_size(s.options), "
					 "s.workers "
					 "FROM streamforge_kafka.subscription AS s "
					 "WHERE s.id OPERATOR(pg_catalog.=) $1",
					 2, wtypes, wargs, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read subscription %d", sfk_sub.id);
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
	/* worker w of n reads the partitions k with k % n == w (kafka.h) */
	sfk_sub.workers = DatumGetInt32(SPI_getbinval(tup, desc, 21, &isnull));
	sfk_sub.nworkers = Min(sfk_sub.workers,
						   DatumGetInt32(SPI_getbinval(tup, desc, 7, &isnull)));
	if (sfk_sub.worker >= sfk_sub.nworkers)
		return SUB_SURPLUS;
	lock_partitions(DatumGetInt32(SPI_getbinval(tup, desc, 7, &isnull)));
	sfk_sub.pipeline = get_text(tup, desc, 1);
	sfk_sub.brokers = get_text(tup, desc, 2);
	sfk_sub.topic = get_text(tup, desc, 3);
	sfk_sub.format = get_text(tup, desc, 4);
	sfk_sub.mapping = get_jsonb(tup, desc, 5);
	sfk_sub.prefix = get_text(tup, desc, 6);
	sfk_sub.nparts = DatumGetInt32(SPI_getbinval(tup, desc, 7, &isnull));
	sfk_sub.batch_size = DatumGetInt32(SPI_getbinval(tup, desc, 8, &isnull));
	sfk_sub.max_wait = DatumGetInt32(SPI_getbinval(tup, desc, 9, &isnull));
	sfk_sub.ooo = DatumGetInt64(SPI_getbinval(tup, desc, 10, &isnull));
	on_error = get_text(tup, desc, 11);
	sfk_sub.stop_on_error = strcmp(on_error, "stop") == 0;
	sfk_sub.options = get_jsonb(tup, desc, 12);
	sfk_sub.retries = DatumGetInt32(SPI_getbinval(tup, desc, 14, &isnull));
	sfk_sub.superuser = superuser_arg(sfk_sub.role);
	if ((why = check_texts(on_error)) != NULL)
	{
		refuse_subscription(why);
		return SUB_REFUSED;
	}

	/* the pipeline: its time unit, then where each partition stands */
	parg = CStringGetTextDatum(sfk_sub.pipeline);
	if (SPI_execute_with_args("SELECT streamforge.time_unit($1)", 1, &ptype, &parg,
							  NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the time unit");
	unit = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	sfk_sub.unit_us = isnull ? 0 : sfk_unit_us(DatumGetIntervalP(unit));

	old = MemoryContextSwitchTo(TopMemoryContext);
	sfk_sub.pnames = palloc(sizeof(char *) * sfk_sub.nparts);
	sfk_sub.consumed = palloc(sizeof(int64) * sfk_sub.nparts);
	sfk_sub.pending = palloc0(sizeof(int64) * sfk_sub.nparts);
	sfk_sub.progress = palloc(sizeof(int64) * sfk_sub.nparts);
	sfk_sub.hw_saved = palloc(sizeof(int64) * sfk_sub.nparts);
	for (i = 0; i < sfk_sub.nparts; i++)
	{
		sfk_sub.pnames[i] = psprintf("%s%d", sfk_sub.prefix, i);
		sfk_sub.consumed[i] = PG_INT64_MIN;
		sfk_sub.progress[i] = PG_INT64_MIN;
		sfk_sub.hw_saved[i] = -1;
	}
	MemoryContextSwitchTo(old);

	if (SPI_execute_with_args("SELECT p.partition, p.consumed_offset, p.progress "
							  "FROM streamforge.partitions($1) AS p",
							  1, &ptype, &parg, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the partitions");
	for (r = 0; r < SPI_processed; r++)
	{
		char	   *name = SPI_getvalue(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 1);

		for (i = 0; i < sfk_sub.nparts; i++)
		{
			if (strcmp(name, sfk_sub.pnames[i]) == 0)
			{
				Datum		d;

				sfk_sub.consumed[i] = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[r],
															  SPI_tuptable->tupdesc, 2, &isnull));
				d = SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 3, &isnull);
				if (!isnull)
					sfk_sub.progress[i] = DatumGetInt64(d);
			}
		}
	}
	for (i = 0; i < sfk_sub.nparts; i++)
		if (sfk_sub.consumed[i] == PG_INT64_MIN)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("pipeline \"%s\" has no partition \"%s\" for partition %d of topic \"%s\"",
							sfk_sub.pipeline, sfk_sub.pnames[i], i, sfk_sub.topic)));

	/* a lost range an admin skipped, delivered with the next message */
	sfk_skipped_ranges(sfk_sub.id, sfk_sub.nparts, sfk_sub.consumed, sfk_sub.pending);

	sfk_sub.aggregate = sfk_is_aggregate_mapping(sfk_sub.mapping);
	sfk_sub.trailing = MemoryContextAllocZero(TopMemoryContext, sizeof(int) * sfk_sub.nparts);
	if (sfk_sub.aggregate)
	{
		SfkAggInfo	info;

		sql = sfk_build_aggregate_sql(sfk_sub.pipeline, sfk_sub.format, sfk_sub.mapping,
									  sfk_sub.topic, sfk_sub.unit_us, &sfk_sub.measures, NULL,
									  &info);
		sfk_sub.agg_relid = info.relid;
		sfk_sub.aggrow = sfk_aggrow_prepare(&info, sfk_sub.format, sfk_sub.topic,
											sfk_sub.unit_us);
	}
	else
	{
		sql = sfk_build_mapping_sql(sfk_sub.format, sfk_sub.mapping, sfk_sub.topic, sfk_sub.unit_us);
		sfk_sub.cmap = sfk_cmap_prepare(sfk_sub.format, sfk_sub.mapping, sfk_sub.topic, sfk_sub.unit_us);
	}
	sfk_sub.plan = SPI_prepare(sql, 8, argtypes);
	if (sfk_sub.plan == NULL)
		elog(ERROR, "could not prepare the mapping of subscription %d: %s",
			 sfk_sub.id, SPI_result_code_string(SPI_result));
	SPI_keepplan(sfk_sub.plan);
	return SUB_LOADED;
}

/*
 * Assigns every partition this worker reads (all of them with one worker)
 * after its consumed offset and its pending
 * offsets: at start, those of a range skipped by skip_lost_offsets (lost.c).
 */
static void
assign_partitions(void)
{
	rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(sfk_sub.nparts);
	rd_kafka_resp_err_t err;
	int			i;

	for (i = 0; i < sfk_sub.nparts; i++)
		if (SFK_OWNS(i))
			rd_kafka_topic_partition_list_add(list, sfk_sub.topic, i)->offset =
				sfk_sub.consumed[i] + sfk_sub.pending[i] + 1;
	(void) rd_kafka_assign(sfk_consumer, NULL);
	err = rd_kafka_assign(sfk_consumer, list);
	rd_kafka_topic_partition_list_destroy(list);
	if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("could not assign the partitions of topic \"%s\": %s",
						sfk_sub.topic, rd_kafka_err2str(err))));
}

/*
 * librdkafka's threads run at the worker's nice value plus
 * streamforge_kafka.fetch_nice: they fetch and parse ahead of the
 * worker's own thread (the queue holds tens of thousands of messages while
 * it writes a batch), which is the one that bounds the rate, so that on
 * busy cores it gets the CPU first.  Set by an interceptor, in each new
 * thread of the consumer; raising one's nice value needs no privilege.
 */
static int	fetch_nice_value;

static rd_kafka_resp_err_t
on_thread_start(rd_kafka_t *rk, rd_kafka_thread_type_t type, const char *name,
				void *opaque)
{
	/* in librdkafka's thread: a system call, nothing of PostgreSQL */
	(void) setpriority(PRIO_PROCESS, (id_t) syscall(SYS_gettid), fetch_nice_value);
	return RD_KAFKA_RESP_ERR_NO_ERROR;
}

static rd_kafka_resp_err_t
on_new(rd_kafka_t *rk, const rd_kafka_conf_t *conf, void *opaque,
	   char *errstr, size_t errstr_size)
{
	return rd_kafka_interceptor_add_on_thread_start(rk, "streamforge_kafka.fetch_nice",
													on_thread_start, NULL);
}

static void
create_consumer(void)
{
	char		errstr[512];
	char	   *group = psprintf("streamforge_kafka.%u.%d", MyDatabaseId, sfk_sub.id);
	rd_kafka_conf_t *conf;

	/* the options apply over the defaults, auto.offset.reset last */
	conf = sfk_make_conf(sfk_sub.brokers, sfk_sub.options, group, sfk_sub.superuser);
	if (rd_kafka_conf_set(conf, "auto.offset.reset", "error", errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK)
		elog(ERROR, "auto.offset.reset: %s", errstr);
	rd_kafka_conf_set_error_cb(conf, error_cb);
	if (sfk_fetch_nice > 0)
	{
		int			nice_now;

		errno = 0;
		nice_now = getpriority(PRIO_PROCESS, 0);
		if (errno != 0)
			nice_now = 0;
		fetch_nice_value = Min(nice_now + sfk_fetch_nice, 19);
		if (rd_kafka_conf_interceptor_add_on_new(conf, "streamforge_kafka.fetch_nice",
												 on_new, NULL) != RD_KAFKA_RESP_ERR_NO_ERROR)
		{
			rd_kafka_conf_destroy(conf);
			elog(ERROR, "could not add the fetch_nice interceptor");
		}
	}
	sfk_consumer = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, sizeof(errstr));
	if (sfk_consumer == NULL)
	{
		rd_kafka_conf_destroy(conf);
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("could not create a Kafka sfk_consumer: %s", errstr)));
	}
	sfk_serve_log(sfk_consumer);
	rd_kafka_poll_set_consumer(sfk_consumer);
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

	while (sfk_outage)
	{
		int			backoff;

		retries++;
		backoff = backoff_for(retries);
		ereport(WARNING,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("streamforge_kafka: subscription %d: cannot reach \"%s\": %s",
						sfk_sub.id, sfk_sub.brokers, sfk_outage_reason),
				 errdetail("Attempt %d; the next in %d ms.", retries, backoff)));
		set_status("retrying", sfk_outage_reason, retries, backoff);
		nap(backoff);
		if (sfk_count_partitions(sfk_consumer, sfk_sub.topic, 1000, sfk_outage_reason,
								 sizeof(sfk_outage_reason)) > 0)
			sfk_outage = false;
	}
	if (retries > 0)
	{
		ereport(LOG,
				(errmsg("streamforge_kafka: subscription %d: \"%s\" is reachable again after %d attempts",
						sfk_sub.id, sfk_sub.brokers, retries)));
		set_status("running", NULL, 0, 0);
	}
}

/* ---------------------------------------------------------------- */
/* Main                                                               */
/* ---------------------------------------------------------------- */

/*
 * One batch (sfk_run_batch), retried here when it fails with a transaction
 * conflict (40001, 40P01) and the subscription has several workers: their
 * transactions commit concurrently on a parallel pipeline, where a commit
 * fails with 40001 when the pipeline was restored or created again
 * meanwhile (a compaction is re-executed at commit since step 5,
 * docs/design/parallel-writers.md, section 12).  The batch is rolled back whole and its messages,
 * which are still in msgs, are delivered again at once (nothing of the
 * batch was committed, and the worker's positions move only after a
 * commit).  With one worker, and after SFK_CONFLICT_RETRIES conflicts in a
 * row, the error goes on as any other (logged, recorded, the worker
 * restarts): the behaviour of one worker is unchanged.
 */
#define SFK_CONFLICT_RETRIES 10

static bool
run_batch_retrying(Msg *msgs, int n, MemoryContext batchcxt)
{
	volatile int attempt = 0;

	for (;;)
	{
		MemoryContext oldcontext = CurrentMemoryContext;
		ErrorData  *volatile edata = NULL;
		volatile bool more = false;

		attempt++;
		PG_TRY();
		{
			more = sfk_run_batch(msgs, n, batchcxt);
		}
		PG_CATCH();
		{
			MemoryContextSwitchTo(oldcontext);
			edata = CopyErrorData();
			if (sfk_sub.nworkers <= 1 || attempt >= SFK_CONFLICT_RETRIES ||
				(edata->sqlerrcode != ERRCODE_T_R_SERIALIZATION_FAILURE &&
				 edata->sqlerrcode != ERRCODE_T_R_DEADLOCK_DETECTED))
				PG_RE_THROW();
			HOLD_INTERRUPTS();
			FlushErrorState();
			AbortOutOfAnyTransaction();
			RESUME_INTERRUPTS();
			MemoryContextSwitchTo(oldcontext);
		}
		PG_END_TRY();
		if (edata == NULL)
			return more;
		ereport(LOG,
				(errmsg("streamforge_kafka: subscription %d: worker %d retries its batch: %s",
						sfk_sub.id, sfk_sub.worker, edata->message)));
		FreeErrorData(edata);
		CHECK_FOR_INTERRUPTS();
	}
}

void
sfk_worker_main(Datum arg)
{
	SfkWorkerArgs args;
	MemoryContext batchcxt;
	Msg		   *msgs;
	bool		locked;

	memcpy(&args, MyBgworkerEntry->bgw_extra, sizeof(args));
	memset(&sfk_sub, 0, sizeof(sfk_sub));
	sfk_sub.id = args.subscription;
	sfk_sub.role = args.role;
	sfk_sub.worker = args.worker;

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
		LOCKTAG		tag;

		sfk_begin_tx("streamforge_kafka: start");
		/* one process per worker slot (session lock, held until exit) */
		SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, (uint32) sfk_sub.id, (uint32) sfk_sub.worker,
							 SFK_LOCK_WORKER);
		locked = LockAcquire(&tag, ExclusiveLock, true, true) != LOCKACQUIRE_NOT_AVAIL;
		if (!locked)
		{
			sfk_commit_tx();
			proc_exit(0);
		}
		switch (load_subscription())
		{
			case SUB_GONE:
				sfk_commit_tx();
				ereport(LOG,
						(errmsg("streamforge_kafka: subscription %d is gone or paused, its worker stops",
								sfk_sub.id)));
				proc_exit(0);
				break;
			case SUB_REFUSED:
				sfk_commit_tx();
				proc_exit(0);
				break;
			case SUB_SURPLUS:
				sfk_commit_tx();
				ereport(LOG,
						(errmsg("streamforge_kafka: subscription %d has %d workers now, its worker %d stops",
								sfk_sub.id, sfk_sub.nworkers, sfk_sub.worker)));
				proc_exit(0);
				break;
			case SUB_LOADED:
				break;
		}
		if (sfk_sub.worker == 0)
			forget_surplus_workers();
		sfk_put_status("starting", NULL, sfk_sub.retries, 0);
		sfk_commit_tx();

		create_consumer();
		assign_partitions();
		set_status("running", NULL, 0, 0);
		ereport(LOG,
				(errmsg("streamforge_kafka: subscription %d: consuming topic \"%s\" into pipeline \"%s\"",
						sfk_sub.id, sfk_sub.topic, sfk_sub.pipeline)));

		batchcxt = AllocSetContextCreate(TopMemoryContext, "streamforge_kafka batch",
										 ALLOCSET_DEFAULT_SIZES);
		msgs = MemoryContextAlloc(TopMemoryContext, sizeof(Msg) * sfk_sub.batch_size);
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
			if (sfk_outage)
				ride_out_outage();
			MemoryContextReset(batchcxt);
			old = MemoryContextSwitchTo(batchcxt);
			n = sfk_collect(msgs);
			MemoryContextSwitchTo(old);
			if (!run_batch_retrying(msgs, n, batchcxt))
				break;
			if (sfk_lost_part >= 0)
			{
				sfk_stop_lost_offsets();
				break;
			}
		}
		ereport(LOG,
				(errmsg("streamforge_kafka: subscription %d: the worker stops", sfk_sub.id)));
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
		backoff = backoff_for(sfk_sub.retries + 1);
		if (sfk_sub.pipeline != NULL)
			set_status("failed", edata->message, sfk_sub.retries + 1, backoff);
		nap(backoff);
		proc_exit(1);
	}
	PG_END_TRY();
	proc_exit(0);
}
