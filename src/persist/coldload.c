/*-------------------------------------------------------------------------
 *
 * coldload.c
 *	  What a cold load of a pipeline costs, and the background snapshots
 *	  that keep it short (issue 39): the estimate, the trigger a write call
 *	  or a cold load checks, the entries' layout and their loading.  The
 *	  worker that stores them, and compact(), are in compact.c; this file
 *	  calls neither it nor cache.c or persist.c, which call it.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/coldload.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/spi.h"
#include "access/htup_details.h"
#include "catalog/pg_authid.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "utils/guc.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "codec/codec.h"
#include "engine/engine.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

/*
 * Per-unit cold-load costs (CPU), measured by bench/coldload.sh on this
 * project's shared 2-core benchmark machine (docs/performance.md, "Cold
 * loads without a job"; the script prints the estimate next to the
 * measure).  A binary snapshot's decode costs per byte fetched (detoasting
 * the row: about 7 ns) and per identity re-allocated and hashed into the
 * event_id table (memory-bound: about 380 ns under the machine's usual
 * load of 15-30, where cold loads hurt, 200-260 ns on a quiet machine:
 * 340, so that both stay within 2x), from perf profiles and cold loads of
 * snapshot formats 1 and 2 at 1M and 5M deliveries (issue 39; format 1
 * takes 40 bytes an identity at ten keys, format 2 13, so a cost per
 * byte alone was off by 3x for one of them).  A measures pipeline's
 * identities carry their measure words (format 3): about 20 ns a word
 * more (bench/coldload.sh's `meas` at 1M, format 3: 350-540 ms against
 * 571 estimated).  Until 0.4.0 a pipeline with retention or measures kept
 * the canonical checkpoint as its snapshot, an order of magnitude dearer
 * (about 5 us an identity plus 1 us per measure word: the decoder
 * inflates and parses the JSON, sorts to check, re-derives and
 * re-encodes), which this estimate priced as such; a checkpoint that
 * 0.3.0 stored still loads, priced low until the next snapshot replaces
 * it, which that makes sooner.  A replay costs what the engine does
 * for the journal's calls (issue 39): per delivery and window it places,
 * per change it emits (the changes are counted but no longer sorted),
 * and per journal byte and row decoded and fetched.  Until 0.3.0 the
 * estimate was per journal byte alone, right for one window and ten keys
 * and an order of magnitude low for three windows with sessions.
 */
#define SF_LOAD_NS_PER_SNAPSHOT_BYTE	7.0
#define SF_LOAD_NS_PER_SNAPSHOT_IDENTITY	340.0
#define SF_LOAD_NS_PER_SNAPSHOT_MEASURE	20.0
#define SF_LOAD_NS_PER_JOURNAL_BYTE		10.0
#define SF_LOAD_NS_PER_JOURNAL_ENTRY	500.0
#define SF_LOAD_NS_PER_DELIVERY			200.0
#define SF_LOAD_NS_PER_DELIVERY_WINDOW	65.0
#define SF_LOAD_NS_PER_CHANGE			2000.0

/* bytes of a binary snapshot per remembered identity, before the first one */
#define SF_SNAPSHOT_BYTES_PER_IDENTITY	14

/*
 * streamforge.background_compaction_ms: a write call asks a background
 * worker for a snapshot when the estimated replay since the last snapshot
 * exceeds this and half the estimated decode of the snapshot (or the
 * journal since is twice the snapshot's size: sf_compact_after_write);
 * -1: never.
 */
static int	background_compaction_ms = 100;

/* The background snapshot's entry: header, then sf_snapshot_encode's bytes */
#define SIDE_MAGIC		"SFSIDE2\n"
#define SIDE_HEADER		40		/* magic, epoch, journal bytes, offset_replays,
								 * truncated through */
#define SIDE_KEY		16		/* magic, epoch: what PLAN_SIDE_GET matches */

/* The pipelines the current transaction's write calls want a snapshot of */
#define SIDE_MAX_WANTED		8
static char wanted[SIDE_MAX_WANTED][SF_NAME_MAX + 1];
static int	nwanted = 0;
static Oid	wanted_role = InvalidOid;	/* the workers connect as this role */

static Oid	worker_role(void);

/* This process is such a worker: it asks for no other */
static bool in_worker = false;

/*
 * Define streamforge.background_compaction_ms (from sf_compact_init, in
 * _PG_init)
 */
void
sf_coldload_init(void)
{
	DefineCustomIntVariable("streamforge.background_compaction_ms",
							"Estimated journal replay above which a write call has a background worker snapshot the pipeline.",
							"A write call starts a background worker that stores a snapshot of the pipeline, without its lock, when the estimated replay of the journal since the last snapshot exceeds this and half the estimated decode of that snapshot; -1: never.",
							&background_compaction_ms,
							100, -1, 3600 * 1000,
							PGC_USERSET, GUC_UNIT_MS,
							NULL, NULL, NULL);
}

/* This process is a background snapshot worker (compact.c) */
void
sf_coldload_in_worker(void)
{
	in_worker = true;
}

/*
 * The estimated decode of the snapshot a cold load of entry starts from
 * (ms): a binary image (sf_snapshot_encode), with its measure words per
 * identity for a measures pipeline.  (A checkpoint stored by 0.1.0 -
 * 0.3.0 for a pipeline with retention or measures costs more, until the
 * next snapshot replaces it: priced low, it is replaced sooner.)
 */
static double
decode_ms(const SfCacheEntry *entry)
{
	const SfPipeline *p = entry->pipeline;
	double		per_identity = SF_LOAD_NS_PER_SNAPSHOT_IDENTITY;

	if (p != NULL && p->def.measures != NULL)
		per_identity += (1 + p->def.measures->width) *
			SF_LOAD_NS_PER_SNAPSHOT_MEASURE;
	return ((double) entry->load_len * SF_LOAD_NS_PER_SNAPSHOT_BYTE +
			(double) entry->load_identities * per_identity) / 1e6;
}

/*
 * The estimated replay of entry's journal after the snapshot a cold load
 * starts from (ms): what its calls did since then, as the state's counters
 * tell.
 */
static double
replay_ms(const SfCacheEntry *entry)
{
	const SfPipeline *p = entry->pipeline;
	double		deliveries;
	double		changes;
	double		ns;

	if (p == NULL || entry->last_pos <= entry->load_pos)
		return 0.0;
	deliveries = (double) Max(p->ndeliveries - entry->load_deliveries, 0);
	changes = (double) Max(p->seq - entry->load_seq, 0);
	ns = deliveries * (SF_LOAD_NS_PER_DELIVERY +
					   p->def.nwindows * SF_LOAD_NS_PER_DELIVERY_WINDOW) +
		changes * SF_LOAD_NS_PER_CHANGE +
		(double) Max(entry->journal_bytes - entry->load_journal_bytes, 0) *
		SF_LOAD_NS_PER_JOURNAL_BYTE +
		(double) (entry->last_pos - entry->load_pos) *
		SF_LOAD_NS_PER_JOURNAL_ENTRY;
	return ns / 1e6;
}

/* The estimated cold load of entry, split into decode and replay (ms) */
void
sf_coldload_estimate(const SfCacheEntry *entry, double *decode, double *replay)
{
	*decode = decode_ms(entry);
	*replay = replay_ms(entry);
}

/*
 * A snapshot of entry's pipeline p, as it is now, is what a cold load
 * starts from: the stored snapshot after a compaction, restore or
 * definition change (entry->snapshot_len, entry->last_pos 0), or a
 * background snapshot the caller asked for.
 */
void
sf_compact_note_snapshot(SfCacheEntry *entry, const SfPipeline *p, int64 len)
{
	entry->load_pos = entry->last_pos;
	entry->load_len = len;
	entry->load_journal_bytes = entry->journal_bytes;
	entry->load_deliveries = p != NULL ? p->ndeliveries : 0;
	entry->load_seq = p != NULL ? p->seq : 0;
	entry->load_identities = p != NULL ? p->nidentities : 0;
}

/* ----------------------------------------------------------------
 * Background snapshots (issue 39)
 *
 * A cold load costs the decode of the stored snapshot plus the replay of
 * the journal since; without a scheduled compact() the journal grew until
 * the write path's compaction_threshold (64 MB, millions of events), and
 * every new backend paid seconds.  Compacting on the write path would
 * stall the writer, and every writer behind its lock, for the whole
 * state's encoding.  So a write call whose pipeline's estimated replay
 * passes streamforge.background_compaction_ms and half the estimated
 * decode of its snapshot (sf_compact_after_write) starts a background
 * worker instead
 * (dynamic: no shared_preload_libraries, no scheduler).  The worker loads
 * the pipeline's committed state like any new backend and stores its
 * snapshot as a journal row at the negative position -pos, pos being the
 * last journal position the state includes, tagged with the journal epoch
 * (the pipeline's snapshot_version).  It takes no lock a writer takes: it
 * inserts a row no writer reads, and deletes only such rows and the
 * journal rows no cached state needs any more (below).  Writers keep
 * appending at positive positions meanwhile.
 * A cold load (cache.c) starts from the latest background snapshot of the
 * current epoch, if any, and replays only the rows after its position.
 *
 * Truncation.  The worker also deletes, in the same transaction, the
 * journal rows of the epoch up to the position of the background snapshot
 * it started from (the previous one, not its own): the journal then keeps
 * about two workers' worth of rows instead of growing to the write path's
 * compaction_threshold, and the write path, finding a background snapshot
 * that covers all but a small journal (sf_compact_side_covers), does not
 * compact in the writer's call.  Keeping the rows after the previous
 * snapshot lets a backend whose cached state is a little behind still
 * catch up from its own position; one further behind finds the
 * truncation (sf_side_truncated_past: the entry records the position it
 * truncated through) and rebuilds from the latest background snapshot
 * instead.  The rows are deleted only while the epoch is current, and
 * with SKIP LOCKED, so that a compaction deleting the whole journal
 * meanwhile and the worker never wait for each other both ways.  Crash
 * safety is the transaction's: the snapshot, the truncation and the prune
 * of older snapshots commit together or not at all.  Without a worker
 * (streamforge.background_compaction_ms = -1, no free worker slot) no
 * background snapshot exists, and the write path compacts as in 0.3.0.
 *
 * Layout of the entry: "SFSIDE2\n", the epoch, the journal bytes up to
 * pos, the offset_replays counter at pos and the position through which
 * the journal was truncated (big-endian int64 each), then the snapshot as
 * sf_snapshot_encode writes it.  ("SFSIDE1\n" entries, of development
 * builds before the truncation, are ignored and pruned.)  0.3.0 libraries
 * read only positive positions, and their compaction deletes these rows
 * with the rest.
 * ----------------------------------------------------------------
 */

static void
put_be64(char *dst, int64 v)
{
	for (int i = 7; i >= 0; i--)
	{
		dst[i] = (char) (v & 0xFF);
		v = (int64) ((uint64) v >> 8);
	}
}

static int64
get_be64(const char *src)
{
	uint64		v = 0;

	for (int i = 0; i < 8; i++)
		v = (v << 8) | (unsigned char) src[i];
	return (int64) v;
}

/* The first SIDE_KEY bytes of a background snapshot of journal epoch epoch */
static bytea *
side_key(int64 epoch)
{
	bytea	   *key = palloc(VARHDRSZ + SIDE_KEY);

	SET_VARSIZE(key, VARHDRSZ + SIDE_KEY);
	memcpy(VARDATA(key), SIDE_MAGIC, 8);
	put_be64(VARDATA(key) + 8, epoch);
	return key;
}

/*
 * The latest background snapshot of pipeline id's journal epoch epoch:
 * the state it holds (a child of parent, for definition def), with the
 * journal position it includes in *pos, the journal bytes up to it in
 * *journal_bytes, its offset_replays counter in *offset_replays and the
 * snapshot's bytes in *len; NULL if there is none.  Caller must be
 * connected to SPI with a snapshot pushed.
 */
SfPipeline *
sf_side_snapshot_load(MemoryContext parent, const SfPipelineDef *def,
					  int64 id, int64 epoch, int64 *pos,
					  int64 *journal_bytes, int64 *offset_replays, int64 *len)
{
	Datum		args[2];
	bool		isnull;
	bytea	   *entry;
	const char *data;
	Size		n;

	args[0] = Int64GetDatum(id);
	args[1] = PointerGetDatum(side_key(epoch));
	sf_exec(PLAN_SIDE_GET, args, NULL, true, SPI_OK_SELECT);
	if (SPI_processed != 1)
		return NULL;
	*pos = -DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
										SPI_tuptable->tupdesc, 1, &isnull));
	entry = DatumGetByteaPP(SPI_getbinval(SPI_tuptable->vals[0],
										  SPI_tuptable->tupdesc, 2, &isnull));
	data = VARDATA_ANY(entry);
	n = VARSIZE_ANY_EXHDR(entry);
	if (n < SIDE_HEADER || *pos <= 0)
		ereport(ERROR,
				errcode(ERRCODE_DATA_CORRUPTED),
				errmsg("corrupt journal entry for pipeline \"%s\"", def->name),
				errdetail("A background snapshot is too short."));
	*journal_bytes = get_be64(data + 16);
	*offset_replays = get_be64(data + 24);
	*len = (int64) (n - SIDE_HEADER);
	return sf_snapshot_decode(parent, def, data + SIDE_HEADER, n - SIDE_HEADER);
}

/*
 * The journal row of a background snapshot of entry's pipeline p, whose
 * snapshot (sf_snapshot_encode) is snap, stored with the truncation of
 * the journal through position truncated
 */
bytea *
sf_side_entry(const SfCacheEntry *entry, const SfPipeline *p,
			  const bytea *snap, int64 truncated)
{
	Size		len = VARSIZE_ANY_EXHDR(snap);
	bytea	   *row = palloc(VARHDRSZ + SIDE_HEADER + len);

	SET_VARSIZE(row, VARHDRSZ + SIDE_HEADER + len);
	memcpy(VARDATA(row), SIDE_MAGIC, 8);
	put_be64(VARDATA(row) + 8, entry->snapshot_version);
	put_be64(VARDATA(row) + 16, entry->journal_bytes);
	put_be64(VARDATA(row) + 24, p->offset_replays);
	put_be64(VARDATA(row) + 32, truncated);
	memcpy(VARDATA(row) + SIDE_HEADER, VARDATA_ANY(snap), len);
	return row;
}

/*
 * Whether the journal of pipeline id's epoch epoch was truncated past
 * last_pos by a background snapshot: a cached state at last_pos cannot
 * then catch up from the journal, and must be rebuilt.  Caller must be
 * connected to SPI with a snapshot pushed.
 */
bool
sf_side_truncated_past(int64 id, int64 epoch, int64 last_pos)
{
	Datum		args[3];
	bytea	   *pos = palloc(VARHDRSZ + 8);

	SET_VARSIZE(pos, VARHDRSZ + 8);
	put_be64(VARDATA(pos), Max(last_pos, 0));
	args[0] = Int64GetDatum(id);
	args[1] = PointerGetDatum(side_key(epoch));
	args[2] = PointerGetDatum(pos);
	sf_exec(PLAN_SIDE_PAST, args, NULL, true, SPI_OK_SELECT);
	return SPI_processed > 0;
}

/*
 * The advisory lock a background snapshot worker of pipeline name holds
 * for its transaction: one worker per pipeline at a time (a later one
 * waits, then loads what the earlier one stored).  Keyed by the name,
 * since the id is not known before the load.
 */
#define SIDE_LOCK_FIELD4	0x5346

static void
side_lock_tag(LOCKTAG *tag, const char *name)
{
	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId,
						 hash_bytes((const unsigned char *) name, strlen(name)),
						 0, SIDE_LOCK_FIELD4);
}

/* Take it (the worker, compact.c) */
void
sf_side_lock(const char *name)
{
	LOCKTAG		tag;

	side_lock_tag(&tag, name);
	(void) LockAcquire(&tag, ExclusiveLock, false, false);
}

/*
 * Whether a background snapshot of pipeline name is on its way: asked for
 * by this transaction (started at its commit), or a worker holds the lock
 * above.  Probed without waiting; the lock, if we got it, is released at
 * once.
 */
static bool
side_in_flight(const char *name)
{
	LOCKTAG		tag;

	for (int i = 0; i < nwanted; i++)
		if (strcmp(wanted[i], name) == 0)
			return true;
	side_lock_tag(&tag, name);
	if (LockAcquire(&tag, ExclusiveLock, false, true) == LOCKACQUIRE_NOT_AVAIL)
		return true;
	LockRelease(&tag, ExclusiveLock, false);
	return false;
}

/*
 * The write path is about to compact entry's pipeline, whose journal since
 * the stored snapshot would reach bytes, above limit: whether the latest
 * background snapshot of the epoch covers all of it but less than the
 * larger of limit and four times that snapshot's size, so that the
 * compaction is not needed (the worker truncates the journal behind it).
 * If so, the next check is when as much journal again has been written.
 * One indexed query, on the rare calls that pass the limit; its snapshot
 * sees the workers' commits under READ COMMITTED (under REPEATABLE READ
 * only those before the transaction began, then the writer compacts as
 * before).
 */
bool
sf_compact_side_covers(SfCacheEntry *entry, int64 bytes, int64 limit)
{
	Datum		args[2];
	bool		isnull;
	bool		covers = false;
	SfSavedUser saved;

	if (!IsUnderPostmaster)
		return false;
	sf_become_owner(&saved);
	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	args[0] = Int64GetDatum(entry->id);
	args[1] = PointerGetDatum(side_key(entry->snapshot_version));
	sf_exec(PLAN_SIDE_HEAD, args, NULL, true, SPI_OK_SELECT);
	if (SPI_processed == 1)
	{
		HeapTuple	tup = SPI_tuptable->vals[0];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bytea	   *head = DatumGetByteaPP(SPI_getbinval(tup, desc, 2, &isnull));
		int64		len = DatumGetInt32(SPI_getbinval(tup, desc, 3, &isnull));
		int64		covered;
		int64		room;

		if (VARSIZE_ANY_EXHDR(head) >= SIDE_HEADER)
		{
			covered = get_be64(VARDATA_ANY(head) + 16);
			room = Max(limit, 4 * (len - SIDE_HEADER));
			if (covered > 0 && covered <= bytes && bytes - covered <= room)
			{
				covers = true;
				entry->compact_after = covered + room;
			}
		}
	}
	PopActiveSnapshot();
	SPI_finish();
	sf_restore_user(&saved);

	/*
	 * No snapshot covers it yet, but a worker is storing one: the writer
	 * need not pay the compaction the worker is about to make needless.
	 * This matters with retention, whose write-path limit is four times a
	 * small snapshot (persist.c): a worker asked for at twice the snapshot
	 * (sf_compact_after_write) loads and encodes a checkpoint, seconds of
	 * wall time on a loaded machine, while the writers pass the limit.
	 * Checked again after a quarter of the limit more; bounded at 16
	 * times the limit, in case workers keep failing.
	 */
	if (!covers && bytes <= 16 * limit && side_in_flight(entry->name))
	{
		covers = true;
		entry->compact_after = bytes + Max(limit / 4, 1);
	}
	return covers;
}

/*
 * After a write call on entry's pipeline p, or a cold load of it: if a
 * cold load's replay is estimated above streamforge.background_compaction_ms
 * and above half the estimated decode of its snapshot, or (with retention)
 * the journal since that snapshot is twice its size, start a background
 * snapshot.
 * The entry then counts from the current state (a failed start is retried
 * after as much journal again).  Costs a few comparisons otherwise.
 *
 * Half the decode (issue 39): a cold load then costs at most about 1.5
 * times the decode, where waiting for the whole decode let the many small
 * transactions of one pattern reach 0.77 s at 1M deliveries; the worker
 * runs twice as often, each run a decode, a replay of the half and an
 * encode.  Twice the snapshot's size, with retention: the write path
 * compacts a retention pipeline in its own call once the journal passes
 * four times the snapshot (persist.c), so the worker must store its
 * snapshot well before (sf_compact_side_covers); this mattered most while
 * such a snapshot was a checkpoint (until 0.4.0: about 5 us an identity,
 * half of which was a longer journal than that limit).  Not without
 * retention: the write path's limit is then the threshold (64 MB).
 */
void
sf_compact_after_write(SfCacheEntry *entry, SfPipeline *p)
{
	double		replay;
	double		decode;
	int64		len;
	int			i;

	if (background_compaction_ms < 0 || in_worker || entry->pipeline != p ||
		!IsUnderPostmaster)
		return;
	replay = replay_ms(entry);
	if (replay < (double) background_compaction_ms)
		return;
	decode = decode_ms(entry);
	if (replay < decode / 2 &&
		(!p->def.has_retention ||
		 entry->journal_bytes - entry->load_journal_bytes < 2 * entry->load_len))
		return;

	/* started at commit, so that the worker finds what this call did */
	for (i = 0; i < nwanted; i++)
		if (strcmp(wanted[i], p->def.name) == 0)
			break;
	if (i == nwanted)
	{
		if (nwanted == SIDE_MAX_WANTED)
			return;				/* retried by the next call */
		strlcpy(wanted[nwanted++], p->def.name, SF_NAME_MAX + 1);
		wanted_role = worker_role();
	}

	/* the snapshot the worker will store, of about this size */
	len = entry->load_identities > 0 && entry->load_len > 0 ?
		(int64) ((double) entry->load_len * p->nidentities /
				 entry->load_identities) :
		SF_SNAPSHOT_BYTES_PER_IDENTITY * p->nidentities;
	sf_compact_note_snapshot(entry, p, len);
}

/*
 * The role a background snapshot worker connects as: the extension's owner
 * (the role every statement of the extension runs as, sf_become_owner),
 * which may read every pipeline; the bootstrap superuser only when that
 * role could not connect (NOLOGIN, or a connection limit: PostgreSQL 15
 * checks both for a background worker too, and the worker would then
 * fail instead of storing the snapshot).  Looked up in the write call's
 * transaction, since the worker is started after its commit.
 */
static Oid
worker_role(void)
{
	Oid			owner = sf_extension_owner();
	HeapTuple	tup;
	bool		can = false;

	tup = SearchSysCache1(AUTHOID, ObjectIdGetDatum(owner));
	if (HeapTupleIsValid(tup))
	{
		Form_pg_authid a = (Form_pg_authid) GETSTRUCT(tup);

		can = a->rolcanlogin && a->rolconnlimit < 0;
		ReleaseSysCache(tup);
	}
	return can ? owner : BOOTSTRAP_SUPERUSERID;
}

/*
 * At the end of a transaction (cache.c's callback): on commit, start the
 * background snapshots its write calls asked for; a worker that cannot be
 * started (no free slot of max_worker_processes) is asked for again after
 * as much journal again.  On abort, forget them.
 */
void
sf_compact_at_xact_end(bool commit)
{
	BackgroundWorker worker;

	for (int i = 0; commit && i < nwanted; i++)
	{
		memset(&worker, 0, sizeof(worker));
		worker.bgw_flags = BGWORKER_SHMEM_ACCESS |
			BGWORKER_BACKEND_DATABASE_CONNECTION;
		worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
		worker.bgw_restart_time = BGW_NEVER_RESTART;
		snprintf(worker.bgw_library_name, BGW_MAXLEN, "%s", SF_LIBRARY_NAME);
		snprintf(worker.bgw_function_name, BGW_MAXLEN, "sf_compact_worker_main");
		snprintf(worker.bgw_name, BGW_MAXLEN, "streamforge compaction");
		snprintf(worker.bgw_type, BGW_MAXLEN, "streamforge compaction");
		worker.bgw_main_arg = ObjectIdGetDatum(MyDatabaseId);
		strlcpy(worker.bgw_extra, wanted[i], Min(BGW_EXTRALEN, SF_NAME_MAX + 1));
		StaticAssertStmt(SF_NAME_MAX + 1 + sizeof(Oid) <= BGW_EXTRALEN,
						 "bgw_extra holds a name and a role");
		memcpy(worker.bgw_extra + SF_NAME_MAX + 1, &wanted_role, sizeof(Oid));
		worker.bgw_notify_pid = 0;
		(void) RegisterDynamicBackgroundWorker(&worker, NULL);
	}
	nwanted = 0;
}
