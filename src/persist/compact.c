/*-------------------------------------------------------------------------
 *
 * compact.c
 *	  How much journal a pipeline has since its snapshot, and whether
 *	  streamforge.compact (api/metrics.c, docs/monitoring.md) should
 *	  compact it: the estimated cold load against
 *	  streamforge.compact_target_load_ms.
 *
 * The estimate (coldload.c) is what a new backend's load costs: the decode
 * of the latest snapshot and the replay of the journal after it.
 * Compacting turns the journal's replay into the decode of a larger
 * snapshot and writes the whole state once.  So the automatic decision
 * compacts a journal when the estimated load exceeds the target, and only
 * when its replay costs at least a quarter of the snapshot's decode: a
 * state whose snapshot alone takes longer than the target is then not
 * rewritten at every scheduled run for a few new entries.
 *
 * Also the background snapshot worker (issue 39; coldload.c has the rest):
 * a dynamic background worker that loads a pipeline's committed state and
 * stores it as a journal row at a negative position, without the
 * pipeline's lock, and deletes the journal rows up to the background
 * snapshot it started from, so that the write path's compaction need not
 * run in a writer's call.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/compact.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_authid_d.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "codec/codec.h"
#include "engine/engine.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

/* streamforge.compact_target_load_ms; -1: compact() decides never */
static int	compact_target_load_ms = 500;

/* The advisory lock that keeps one background snapshot per pipeline at a time */

void
sf_compact_init(void)
{
	DefineCustomIntVariable("streamforge.compact_target_load_ms",
							"Estimated cold load above which streamforge.compact() compacts a pipeline.",
							"compact(pipeline) without min_journal_bytes compacts when the estimated time to load the pipeline (snapshot decode and journal replay) exceeds this, and the journal's replay is at least a quarter of the snapshot's decode; -1: never.",
							&compact_target_load_ms,
							500, -1, 3600 * 1000,
							PGC_USERSET, GUC_UNIT_MS,
							NULL, NULL, NULL);
	sf_coldload_init();
}

/* The estimated cold load of entry, split into decode and replay (ms) */
static void
load_estimate(const SfCacheEntry *entry, double *decode, double *replay)
{
	sf_coldload_estimate(entry, decode, replay);
}

/*
 * The estimated CPU time (ms) a new backend spends loading pipeline name:
 * decoding the latest snapshot and replaying the journal after it.  Opens
 * the pipeline for reading, like sf_persist_journal_bytes.
 */
double
sf_persist_load_estimate(const char *name)
{
	SfCacheEntry *entry;
	double		decode;
	double		replay;

	(void) sf_persist_open(name, false);
	entry = sf_cache_lookup(name, false);
	if (entry == NULL)
		return 0.0;
	load_estimate(entry, &decode, &replay);
	return decode + replay;
}

/*
 * The bytes of journal entries of pipeline name since its snapshot, as
 * the backend's cache counts them (the pipeline is opened for reading:
 * the read privilege is checked, and a stale cache entry catches up).
 */
int64
sf_persist_journal_bytes(const char *name)
{
	SfCacheEntry *entry;

	(void) sf_persist_open(name, false);
	entry = sf_cache_lookup(name, false);
	return entry != NULL ? entry->journal_bytes : 0;
}

/*
 * Whether compact(name) without min_journal_bytes should compact: the
 * journal is not empty, the estimated cold load exceeds
 * streamforge.compact_target_load_ms, and the journal's replay is at
 * least a quarter of the snapshot's decode (see the head of the file).
 * Opens the pipeline for reading, like sf_persist_journal_bytes.
 */
bool
sf_persist_compact_due(const char *name)
{
	SfCacheEntry *entry;
	double		decode;
	double		replay;

	(void) sf_persist_open(name, false);
	entry = sf_cache_lookup(name, false);
	if (entry == NULL || compact_target_load_ms < 0 || entry->last_pos == 0)
		return false;
	load_estimate(entry, &decode, &replay);
	return decode + replay > (double) compact_target_load_ms &&
		4.0 * replay >= decode;
}

/*
 * Store a background snapshot of pipeline name's committed state, unless
 * one of its position exists already, another worker is at it, or the
 * state is too large for a snapshot.  Runs in the worker's transaction.
 */
static void
side_snapshot(const char *name)
{
	SfPipeline *p;
	SfCacheEntry *entry;
	bytea	   *snap;
	bytea	   *row;
	Size		len;
	Datum		values[4];
	int64		truncated;
	SfSavedUser saved;

	/*
	 * One worker per pipeline at a time: a later one waits, then loads what
	 * the earlier one stored (the lock goes with the transaction).  Keyed
	 * by the name, since the id is not known before the load.
	 */
	sf_side_lock(name);
	/* a new transaction snapshot: what committed while we waited */
	PopActiveSnapshot();
	PushActiveSnapshot(GetTransactionSnapshot());

	p = sf_persist_open(name, false);
	entry = sf_cache_lookup(name, false);
	if (p == NULL || entry == NULL || entry->last_pos <= entry->load_pos)
		return;					/* nothing new since the latest snapshot */

	snap = sf_snapshot_encode(p);
	len = VARSIZE_ANY_EXHDR(snap);
	/* the journal up to the snapshot we started from can go (coldload.c) */
	truncated = entry->load_pos;
	row = sf_side_entry(entry, p, snap, truncated);
	pfree(snap);

	sf_become_owner(&saved);
	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	values[0] = Int64GetDatum(entry->id);
	values[1] = Int64GetDatum(-entry->last_pos);
	values[2] = PointerGetDatum(row);
	values[3] = Int64GetDatum(entry->snapshot_version);
	sf_exec(PLAN_SIDE_PUT, values, NULL, false, SPI_OK_INSERT);
	if (SPI_processed == 1)
	{
		/* the older ones, and those of other epochs, are superseded */
		CommandCounterIncrement();
		sf_exec(PLAN_SIDE_PRUNE, values, NULL, false, SPI_OK_DELETE);
		elog(DEBUG1, "streamforge: background snapshot of pipeline \"%s\" at position " INT64_FORMAT " (%zu bytes), connected as role \"%s\"",
			 name, entry->last_pos, len,
			 GetUserNameFromId(GetSessionUserId(), false));
		if (truncated > 0)
		{
			Datum		args[3];

			args[0] = Int64GetDatum(entry->id);
			args[1] = Int64GetDatum(truncated);
			args[2] = Int64GetDatum(entry->snapshot_version);
			sf_exec(PLAN_SIDE_TRUNCATE, args, NULL, false, SPI_OK_DELETE);
			elog(DEBUG1, "streamforge: journal of pipeline \"%s\" truncated through position " INT64_FORMAT " (" UINT64_FORMAT " rows)",
				 name, truncated, SPI_processed);
		}
	}
	PopActiveSnapshot();
	SPI_finish();
	sf_restore_user(&saved);
}

/*
 * The background worker's entry point: main_arg is the database's OID,
 * bgw_extra the pipeline's name and, after SF_NAME_MAX + 1 bytes, the OID
 * of the role to connect as.
 */
void
sf_compact_worker_main(Datum main_arg)
{
	char		name[SF_NAME_MAX + 1];
	Oid			role;

	memcpy(name, MyBgworkerEntry->bgw_extra, SF_NAME_MAX);
	memcpy(&role, MyBgworkerEntry->bgw_extra + SF_NAME_MAX + 1, sizeof(Oid));
	if (!OidIsValid(role))
		role = BOOTSTRAP_SUPERUSERID;
	name[SF_NAME_MAX] = '\0';
	sf_coldload_in_worker();
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	/*
	 * As the extension's owner, who may read every pipeline and writes the
	 * tables (coldload.c, worker_role)
	 */
	BackgroundWorkerInitializeConnectionByOid(DatumGetObjectId(main_arg),
											  role, 0);
	pgstat_report_appname("streamforge compaction");
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	pgstat_report_activity(STATE_RUNNING, name);
	PushActiveSnapshot(GetTransactionSnapshot());
	side_snapshot(name);
	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);
	proc_exit(0);
}

