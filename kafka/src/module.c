/*
 * module.c: _PG_init, the settings and the launcher of streamforge_kafka.
 *
 * Loaded with shared_preload_libraries, the module registers one static
 * background worker, the launcher.  It connects to the database named by
 * streamforge_kafka.database and, once a second, starts the dynamic
 * workers (worker.c) that are missing: n per subscription that is not
 * paused, n = least(workers, kafka_partitions) (issue 46; worker w reads
 * the partitions k with k % n = w, kafka.h), streamforge_kafka.max_workers
 * at most in all, and at most streamforge_kafka.max_workers_per_role for
 * the subscriptions of one role (a superuser's are not counted), so that
 * no role takes every slot.  The launcher keeps the handles of the
 * workers it started, by (subscription, worker); a worker holds an
 * advisory lock on its slot for as long as it runs, so a second process
 * for the same slot (after the launcher itself restarted) exits at once.
 * When workers changes (set_workers), the running workers see it at their
 * next batch and exit; the launcher then starts the new set.
 *
 * Workers are registered with bgw_restart_time = restart_time: one that
 * fails (an error, pg_terminate_backend, a crash) is started again by the
 * postmaster; one that exits on purpose (unsubscribe, pause, stop on a bad
 * message) exits with 0 and is forgotten.  After a server restart the
 * launcher starts them again.
 *
 * A transaction that subscribes or resumes wakes the launcher when it
 * commits (sfk_wake_launcher_at_commit), so that a new subscription's
 * worker starts at once rather than at the launcher's next round.
 */
#include "postgres.h"

#include "access/xact.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "tcop/tcopprot.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"


#include "kafka.h"

PG_MODULE_MAGIC;

char	   *sfk_database = NULL;
int			sfk_max_workers = 4;
int			sfk_restart_time = 5;
int			sfk_retry_max_ms = 10000;
int			sfk_fetch_nice = 5;
int			sfk_max_workers_per_role = 2;

void		_PG_init(void);

void
_PG_init(void)
{
	BackgroundWorker worker;

	/*
	 * Without shared_preload_libraries (CREATE EXTENSION, a backend calling
	 * mapping_sql) no launcher runs, and a PGC_POSTMASTER setting cannot be
	 * defined after startup.
	 */
	if (process_shared_preload_libraries_in_progress)
		DefineCustomStringVariable("streamforge_kafka.database",
								   "Database whose subscriptions the workers consume.",
								   NULL, &sfk_database, "postgres",
								   PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("streamforge_kafka.max_workers",
							"Maximum number of subscription workers running at once.",
							"Each takes one of max_worker_processes.",
							&sfk_max_workers, 4, 0, 1000,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("streamforge_kafka.max_workers_per_role",
							"Maximum number of subscription workers of one role running at once.",
							"The subscriptions of superusers are not counted.",
							&sfk_max_workers_per_role, 2, 1, 1000,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("streamforge_kafka.restart_time",
							"Seconds before a failed worker is started again.",
							NULL, &sfk_restart_time, 5, 1, 3600,
							PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomIntVariable("streamforge_kafka.retry_max",
							"Longest wait between two attempts to reach an unavailable cluster.",
							NULL, &sfk_retry_max_ms, 10000, 100, 3600000,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("streamforge_kafka.fetch_nice",
							"Nice value added to librdkafka's threads in each worker.",
							"They fetch ahead of the worker's thread that maps and writes the batches, which then gets busy cores first; 0 leaves them as they are. Read when a worker starts.",
							&sfk_fetch_nice, 5, 0, 19,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("streamforge_kafka.direct_ingest",
							 "Hands the batches mapped in C to streamforge's C write entry.",
							 "Off: through a statement calling ingest_batch, as before 0.4.0 (diagnosis).",
							 &sfk_direct_ingest, true,
							 PGC_SUSET, 0, NULL, NULL, NULL);
	MarkGUCPrefixReserved("streamforge_kafka");

	if (!process_shared_preload_libraries_in_progress)
		return;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = 5;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "streamforge_kafka");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "sfk_launcher_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "streamforge_kafka launcher");
	snprintf(worker.bgw_type, BGW_MAXLEN, "streamforge_kafka launcher");
	RegisterBackgroundWorker(&worker);
}

typedef struct LaunchedKey
{
	int32		subscription;
	int32		worker;
} LaunchedKey;

typedef struct LaunchedWorker
{
	LaunchedKey key;			/* hash key */
	Oid			role;			/* the role it runs as */
	bool		counted;		/* counts toward max_workers_per_role */
	BackgroundWorkerHandle *handle;
} LaunchedWorker;

static HTAB *launched = NULL;

static bool
worker_alive(LaunchedWorker *lw)
{
	pid_t		pid;

	return GetBackgroundWorkerPid(lw->handle, &pid) != BGWH_STOPPED;
}

/*
 * The name of worker w of a subscription: "streamforge_kafka worker <id>"
 * for worker 0, as before issue 46 (one worker per subscription), and
 * "streamforge_kafka worker <id>.<w>" for the others.  buf: BGW_MAXLEN.
 */
void
sfk_worker_name(char *buf, int32 subscription, int32 worker)
{
	if (worker == 0)
		snprintf(buf, BGW_MAXLEN, "streamforge_kafka worker %d", subscription);
	else
		snprintf(buf, BGW_MAXLEN, "streamforge_kafka worker %d.%d", subscription, worker);
}

static void
start_worker(int32 subscription, int32 w, Oid role, bool counted)
{
	BackgroundWorker worker;
	SfkWorkerArgs args;
	LaunchedWorker *lw;
	LaunchedKey key;
	BackgroundWorkerHandle *handle;
	bool		found;
	bool		ok;
	MemoryContext old;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = sfk_restart_time;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "streamforge_kafka");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "sfk_worker_main");
	sfk_worker_name(worker.bgw_name, subscription, w);
	snprintf(worker.bgw_type, BGW_MAXLEN, "streamforge_kafka worker");
	worker.bgw_main_arg = Int32GetDatum(subscription);
	worker.bgw_notify_pid = MyProcPid;
	args.database = MyDatabaseId;
	args.role = role;
	args.subscription = subscription;
	args.worker = w;
	memcpy(worker.bgw_extra, &args, sizeof(args));
	/* the handle outlives the transaction */
	old = MemoryContextSwitchTo(TopMemoryContext);
	ok = RegisterDynamicBackgroundWorker(&worker, &handle);
	MemoryContextSwitchTo(old);
	if (!ok)
	{
		ereport(LOG,
				(errmsg("streamforge_kafka: could not start worker %d of subscription %d",
						w, subscription),
				 errhint("Raise max_worker_processes.")));
		return;
	}
	memset(&key, 0, sizeof(key));
	key.subscription = subscription;
	key.worker = w;
	lw = hash_search(launched, &key, HASH_ENTER, &found);
	lw->handle = handle;
	lw->role = role;
	lw->counted = counted;
}

/* The running workers of role that count toward max_workers_per_role. */
static int
workers_of(Oid role)
{
	HASH_SEQ_STATUS seq;
	LaunchedWorker *lw;
	int			n = 0;

	hash_seq_init(&seq, launched);
	while ((lw = hash_seq_search(&seq)) != NULL)
		if (lw->counted && lw->role == role)
			n++;
	return n;
}

/* One round: start the workers that are missing. */
static void
launch_round(void)
{
	int			running = 0;
	HASH_SEQ_STATUS seq;
	LaunchedWorker *lw;
	uint64		i;

	/* forget the workers that stopped */
	hash_seq_init(&seq, launched);
	while ((lw = hash_seq_search(&seq)) != NULL)
	{
		if (!worker_alive(lw))
		{
			pfree(lw->handle);
			hash_search(launched, &lw->key, HASH_REMOVE, NULL);
		}
		else
			running++;
	}

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, "streamforge_kafka launcher");
	if (SPI_execute("SELECT FROM pg_catalog.pg_extension AS e "
					"WHERE e.extname OPERATOR(pg_catalog.=) 'streamforge_kafka'",
					true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read pg_extension");
	if (SPI_processed > 0 &&
		SPI_execute("SELECT s.id, s.role, COALESCE(a.rolsuper, false), "
					"LEAST(s.workers, s.kafka_partitions) "
					"FROM streamforge_kafka.subscription AS s "
					"LEFT JOIN pg_catalog.pg_authid AS a ON a.oid OPERATOR(pg_catalog.=) s.role "
					"WHERE NOT s.paused ORDER BY s.id", true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the subscriptions");
	for (i = 0; i < SPI_processed && running < sfk_max_workers; i++)
	{
		bool		isnull;
		int32		id = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[i],
													 SPI_tuptable->tupdesc, 1, &isnull));
		Oid			role = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i],
														  SPI_tuptable->tupdesc, 2, &isnull));
		bool		super = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[i],
													   SPI_tuptable->tupdesc, 3, &isnull));
		int32		n = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[i],
													SPI_tuptable->tupdesc, 4, &isnull));

		/* the worker checks the row again: at most SFK_MAX_WORKERS here */
		n = Max(1, Min(n, SFK_MAX_WORKERS));
		for (int32 w = 0; w < n && running < sfk_max_workers; w++)
		{
			LaunchedKey key;

			memset(&key, 0, sizeof(key));
			key.subscription = id;
			key.worker = w;
			if (hash_search(launched, &key, HASH_FIND, NULL) != NULL)
				continue;
			/* the role has its share: its other workers wait */
			if (!super && workers_of(role) >= sfk_max_workers_per_role)
				break;
			start_worker(id, w, role, !super);
			running++;
		}
	}
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);
}

/* the launcher to wake when this transaction commits, or 0 */
static int	wake_pid = 0;

static void
wake_at_commit(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT && wake_pid > 0)
		(void) kill(wake_pid, SIGUSR1);	/* its handler sets its latch */
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PARALLEL_COMMIT || event == XACT_EVENT_PARALLEL_ABORT)
		wake_pid = 0;
}

/*
 * Wakes the launcher of this database when the current transaction
 * commits (after its rows are visible): a subscription made or resumed
 * gets its worker at once, not up to a second later.  SPI connected.
 * Nothing when no launcher serves this database.
 */
void
sfk_wake_launcher_at_commit(void)
{
	static bool registered = false;
	bool		isnull;
	Datum		pid;

	if (SPI_execute("SELECT a.pid FROM pg_catalog.pg_stat_activity AS a "
					"WHERE a.backend_type OPERATOR(pg_catalog.=) 'streamforge_kafka launcher' "
					"AND a.datname OPERATOR(pg_catalog.=) pg_catalog.current_database() LIMIT 1",
					true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not look for the launcher");
	if (SPI_processed != 1)
		return;
	pid = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (isnull)
		return;
	if (!registered)
	{
		RegisterXactCallback(wake_at_commit, NULL);
		registered = true;
	}
	wake_pid = DatumGetInt32(pid);
}

void
sfk_launcher_main(Datum arg)
{
	HASHCTL		ctl;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(sfk_database, NULL, 0);

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(LaunchedKey);
	ctl.entrysize = sizeof(LaunchedWorker);
	launched = hash_create("streamforge_kafka workers", 64, &ctl,
						   HASH_ELEM | HASH_BLOBS);

	ereport(LOG, (errmsg("streamforge_kafka launcher started in database \"%s\"",
						 sfk_database)));
	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		launch_round();
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 1000L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}
