/*-------------------------------------------------------------------------
 *
 * persist.c
 *	  Pipelines stored in the extension's tables, cached per backend.
 *
 * Storage.  streamforge.pipeline holds one row per pipeline: its definition,
 * a version, and a snapshot (checkpoint bytes, NULL for the empty initial
 * state) with the version it was taken in.  streamforge.journal
 * holds one row per write call since the snapshot, with the call's inputs
 * (journal.c), at increasing positions.  The persisted state is the snapshot
 * followed by the replay of the journal rows, in pos order.  The engine is
 * deterministic, so the replay reproduces the state, seq and late_seq
 * exactly.  The version identifies a committed state: every transaction
 * that writes a pipeline bumps it when it takes the row lock (once, or again
 * after a subtransaction abort discarded the cached state), so two
 * different committed states never share a version.
 *
 * Phases of a write call (ingest, ingest_batch, advance, mark_idle):
 *	1. sf_persist_open(name, true), on the transaction's first write call to
 *	   the pipeline, reads the row's owner and grants and checks the
 *	   caller's privilege (so that no statement changes anything for a
 *	   caller without it), then runs UPDATE ... SET version = version + 1
 *	   on its row, which takes the row lock (and checks the grants the
 *	   locked row holds again): write calls on one pipeline serialize until
 *	   the holder's transaction ends, calls on other pipelines never wait.
 *	   Under READ COMMITTED a waiter then gets the latest committed row;
 *	   under REPEATABLE READ and SERIALIZABLE it gets a serialization failure
 *	   (40001), never stale state.  The cached state is brought up to the
 *	   latest commit (reused, caught up from the journal, or rebuilt from
 *	   snapshot + journal).  Later write calls of the transaction find the
 *	   entry locked and run no query at all: while the lock is held nobody
 *	   else can change the pipeline, so the cache is the truth.
 *	2. The entry is marked modified in the current subtransaction and the
 *	   pipeline is returned; the SQL glue runs the engine operation on it.
 *	3. sf_persist_journal_*() has journal.c encode the call's inputs and
 *	   sf_persist_write_journal() stores them at the next position
 *	   (buffered until commit for a call at the transaction's top level,
 *	   see sf_pending), or, when the journal since the snapshot would
 *	   exceed max(streamforge.compaction_threshold, 4 x snapshot size),
 *	   replaces the snapshot by the current state and
 *	   deletes the journal (amortized cost linear in the work done).
 * State is flushed to the tables at phase 3 of every call, inside the
 * caller's transaction: COMMIT makes it durable with the rest of the
 * transaction, and a commit costs what the calls delivered, not what the
 * pipeline holds.
 *
 * Read calls run SELECT on the row and bring the cache to the row's version
 * with the journal rows visible in the same snapshot, taking no lock.
 *
 * Cache invariants.  An entry (keyed by name) describes the pipeline with
 * (relid, id): relid is the OID of streamforge.pipeline, so that a pipeline
 * re-created after DROP EXTENSION never matches, and ids come from a
 * sequence, so a dropped and re-created pipeline never matches either.
 * entry->pipeline holds exactly the persisted state at entry->version, as
 * seen by this backend's current transaction, and last_pos is the position
 * of the last journal row it includes, within the journal epoch of its
 * snapshot_version (positions start again after every compaction and
 * restore, see sf_cache_sync); or the entry is invalid (pipeline
 * NULL, or version -1 while a catch-up is in progress).  entry->locked means
 * this transaction holds the row lock; it implies a modified mark, so it is
 * dropped whenever the lock can have been released.
 *
 * An entry whose state includes changes of the current transaction is
 * marked with modified_subid: the subtransaction that was current when it
 * last wrote (or loaded a row version this transaction wrote).
 * Subtransaction ids grow, and the subtransactions that can still abort are
 * the current one and its ancestors, so on abort of subtransaction S every
 * entry with modified_subid >= S is discarded; on top-level abort and
 * PREPARE every marked entry is discarded, and on commit the marks are
 * cleared.  The exception: an entry whose pipeline is, by pointer and
 * mutation count, still the committed state that the transaction's first
 * write open found (clean_*) survives a top-level abort, so a refused call
 * does not cost a rebuild.  MVCC has already rolled the tables back, so the next call
 * reloads the state as of the savepoint.  A pipeline found busy (an engine
 * operation failed half-way) is discarded too.
 *
 * The owner and grants cached with an entry (entry->acl) are what a write
 * call under the transaction's lock trusts.  grant, revoke and set_owner
 * update them at once and record their subtransaction (acl_subid); the
 * abort of that subtransaction or an ancestor marks them stale, and the
 * next locked write reads the row's again, so a rolled-back grant does not
 * keep admitting (nor a rolled-back revoke refusing).
 *
 * A cached pipeline is handed to a call only after sf_keys_collect (engine.c)
 * has had its chance to free the keys its state no longer uses (retention):
 * between calls nothing else refers to them.
 *
 * Memory.  CacheMemoryContext owns the hash table (sf_cache_cxt); each
 * cached pipeline owns its context (SfPipeline->cxt), a child of
 * sf_cache_cxt.  A pipeline is built under CurTransactionContext and moved
 * under sf_cache_cxt only once complete, so an error while building leaks
 * nothing.  Query results live in SPI contexts and die with SPI_finish().
 *
 * Copyright (c) 2026, the streamforge authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/ilist.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "port/pg_bswap.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"

#include "codec/codec.h"
#include "engine/engine.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

/* The journal is fetched this many rows at a time */
#define SF_JOURNAL_FETCH	256

/* streamforge.compaction_threshold, in kB; -1 disables compaction */
static int	sf_compaction_threshold = 64 * 1024;

/* ... or this many times the snapshot's size, whichever is larger */
#define SF_COMPACTION_FACTOR	4

/* streamforge.cache_size, in kB; -1: no limit */
static int	sf_cache_size = 128 * 1024;

/* the journal a pipeline with retention may always keep (bytes) */
#define SF_RETENTION_COMPACTION_FLOOR	(1024 * 1024)

typedef struct SfCacheEntry
{
	char		name[SF_NAME_MAX + 1];	/* hash key, must be first */
	Oid			relid;			/* OID of streamforge.pipeline */
	int64		id;
	int64		version;		/* -1: invalid */
	int64		snapshot_version;
	int64		snapshot_len;	/* bytes of the stored snapshot */
	int64		last_pos;		/* last journal row included, 0: none */
	int64		journal_bytes;	/* bytes of the journal rows included */
	SfPipeline *pipeline;		/* NULL: invalid */
	SfAcl		acl;			/* owner and grants, as of the last read */

	/*
	 * The latest subtransaction of the current transaction that changed
	 * acl (sf_persist_set_acl), and whether a subtransaction abort undid
	 * such a change since acl was read: the locked path of
	 * sf_persist_open, which trusts acl, then reads the row again.
	 */
	SubTransactionId acl_subid;
	bool		acl_stale;

	/*
	 * What the pipeline looked like when the current transaction first
	 * opened it for writing, if that was the committed state at version:
	 * an abort that finds the same pipeline with the same mutation count
	 * keeps it instead of rebuilding (see sf_xact_callback).
	 */
	bool		clean_valid;
	SfPipeline *clean_pipeline;
	uint64		clean_mutations;
	int64		clean_version;	/* the committed version it equals */
	int64		compact_after;	/* journal bytes before compacting again,
								 * after a state too large to snapshot */
	SubTransactionId modified_subid;	/* Invalid: no uncommitted changes */
	bool		locked;			/* this transaction holds the row lock */
	bool		journal_pending;	/* opened for write, not journaled yet */
	dlist_node	lru_node;		/* in sf_lru, most recently used first */
	int64		mem;			/* bytes charged to sf_cache_bytes */
} SfCacheEntry;

/* What the pipeline row says */
typedef struct SfRowInfo
{
	Oid			relid;
	int64		id;
	int64		version;
	int64		snapshot_version;
	int64		snapshot_len;
	int64		offset_replays_base;
	SfAcl		acl;			/* grants in the caller's memory context */
	bool		ours;			/* row version written by this transaction */
} SfRowInfo;

static HTAB *sf_cache = NULL;
static MemoryContext sf_cache_cxt = NULL;

/*
 * The entry the latest sf_persist_open() for writing returned, so that the
 * journal write of the same call (sf_persist_write_journal) needs no second
 * lookup by name.  Only a hint: the user checks that its pipeline is the
 * one being journaled, and sf_cache_remove() clears it before the entry's
 * slot can be reused.
 */
static SfCacheEntry *sf_write_entry = NULL;
static int	sf_nmodified = 0;	/* entries with modified_subid set */

/* Every entry, least recently used last, and the bytes they hold */
static dlist_head sf_lru = DLIST_STATIC_INIT(sf_lru);
static int64 sf_cache_bytes = 0;

/*
 * The current transaction discarded an entry holding its own changes (a
 * subtransaction abort, a drop): a pipeline loaded afterwards may hold this
 * transaction's own uncommitted work, so no clean baseline is taken until
 * the transaction ends.
 */
static bool sf_subabort_discarded = false;

/* Some entry's acl_subid is set (sf_persist_set_acl in this transaction) */
static bool sf_acl_changed = false;

/*
 * Journal entries not yet in the table.  The entries of write calls made
 * at the top level of a transaction (no savepoint or exception block
 * active) are buffered here and stored before commit or prepare, one row
 * per run of consecutive positions, instead of one INSERT per call.  Their
 * positions are taken at once (entry->last_pos), so the rows keep the order
 * of the calls, whatever a subtransaction writes in between.  Only the
 * abort of the whole transaction can undo a top-level call, and it discards
 * this buffer with everything else; a savepoint rollback never does, and
 * discards only cached state, which is rebuilt from the tables plus this
 * buffer.  A new snapshot (compaction, restore) or a drop in subtransaction
 * S covers the buffered runs: they are marked superseded by S, dropped
 * when the top level commits, and live again if S (or an ancestor) aborts.
 */
typedef struct SfPendingRun
{
	int64		last_pos;		/* position of its last entry: the row's pos */
	int			count;			/* entries */
	StringInfoData data;		/* entries, each after its uint32 length */
	SubTransactionId superseded;	/* Invalid: live */
	struct SfPendingRun *next;
} SfPendingRun;

typedef struct SfPending
{
	int64		id;				/* hash key: the pipeline id */
	Oid			relid;			/* OID of the streamforge.pipeline it is in */
	SfPendingRun *runs;			/* in position order */
	SfPendingRun *tail;
	int64		bytes;			/* entry bytes of the live runs */
} SfPending;

/* Flush a pipeline's buffer at the top level once it holds this much */
#define SF_PENDING_FLUSH	(16 * 1024)

static HTAB *sf_pending = NULL;	/* in sf_pending_cxt; NULL: nothing */
static MemoryContext sf_pending_cxt = NULL;

/*
 * The entry of sf_pending found last: per-row calls on one pipeline find it
 * without hashing.  Entries are never removed one by one, only all at once
 * with the table (sf_pending_reset), which clears this too.
 */
static SfPending *sf_pending_last = NULL;

/* Prepared statements, kept for the backend's lifetime */
typedef enum SfPlanId
{
	PLAN_OPEN_WRITE,
	PLAN_OPEN_READ,
	PLAN_DEF,
	PLAN_DEF_WINDOWS,
	PLAN_SNAPSHOT_GET,
	PLAN_JOURNAL_GET,
	PLAN_JOURNAL_PUT,
	PLAN_JOURNAL_CLEAR,
	PLAN_SNAPSHOT_PUT,
	PLAN_CREATE,
	PLAN_DROP,
	PLAN_ACL_GET,
	PLAN_ACL_LOCK,
	PLAN_ACL_PUT,
	PLAN_EXISTS,
	PLAN_DEF_RETENTION,
	PLAN_SET_RETENTION,
	NUM_PLANS
} SfPlanId;

typedef struct SfPlanText
{
	const char *sql;
	int			nargs;
	Oid			argtypes[9];
} SfPlanText;

/*
 * Every statement names its objects with their schema and uses
 * OPERATOR(pg_catalog.=), so the caller's search_path cannot redirect it.
 * They run as the extension's owner (acl.c).
 */
#define SF_ROW_COLUMNS \
	"tableoid, id, version, snapshot_version, " \
	"pg_catalog.octet_length(snapshot), offset_replays_base, " \
	"owner, readers, ingesters, admins"
#define SF_ROW_NCOLUMNS 10

static const SfPlanText sf_plan_text[NUM_PLANS] = {
	[PLAN_OPEN_WRITE] = {
		"UPDATE streamforge.pipeline "
		"SET version = version OPERATOR(pg_catalog.+) 1 "
		"WHERE name OPERATOR(pg_catalog.=) $1 RETURNING " SF_ROW_COLUMNS,
		1, {TEXTOID}
	},
	[PLAN_OPEN_READ] = {
		"SELECT " SF_ROW_COLUMNS ", xmin FROM streamforge.pipeline "
		"WHERE name OPERATOR(pg_catalog.=) $1",
		1, {TEXTOID}
	},
	[PLAN_DEF] = {
		"SELECT partitions, lateness FROM streamforge.pipeline "
		"WHERE id OPERATOR(pg_catalog.=) $1",
		1, {INT8OID}
	},
	[PLAN_DEF_WINDOWS] = {
		"SELECT w.name, w.kind, w.size, w.step, w.gap "
		"FROM streamforge.pipeline p, "
		"pg_catalog.unnest(p.windows) WITH ORDINALITY "
		"AS w(name, kind, size, step, gap, i) "
		"WHERE p.id OPERATOR(pg_catalog.=) $1 ORDER BY w.i",
		1, {INT8OID}
	},
	[PLAN_SNAPSHOT_GET] = {
		"SELECT snapshot FROM streamforge.pipeline "
		"WHERE id OPERATOR(pg_catalog.=) $1",
		1, {INT8OID}
	},
	[PLAN_JOURNAL_GET] = {
		"SELECT pos, entry FROM streamforge.journal "
		"WHERE pipeline_id OPERATOR(pg_catalog.=) $1 "
		"AND pos OPERATOR(pg_catalog.>) $2 ORDER BY pos",
		2, {INT8OID, INT8OID}
	},
	[PLAN_JOURNAL_PUT] = {
		"INSERT INTO streamforge.journal (pipeline_id, pos, entry) "
		"VALUES ($1, $2, $3)",
		3, {INT8OID, INT8OID, BYTEAOID}
	},
	[PLAN_JOURNAL_CLEAR] = {
		"DELETE FROM streamforge.journal "
		"WHERE pipeline_id OPERATOR(pg_catalog.=) $1",
		1, {INT8OID}
	},
	[PLAN_SNAPSHOT_PUT] = {
		"UPDATE streamforge.pipeline SET snapshot = $2, "
		"snapshot_version = version, offset_replays_base = $3 "
		"WHERE id OPERATOR(pg_catalog.=) $1 RETURNING version",
		3, {INT8OID, BYTEAOID, INT8OID}
	},
	[PLAN_CREATE] = {
		"INSERT INTO streamforge.pipeline (name, partitions, windows, lateness, "
		"owner) "
		"SELECT $1, $2, "
		"pg_catalog.array_agg(ROW(u.n, u.k, u.s, u.st, u.g)"
		"::streamforge.window_def ORDER BY u.i), $8, $9 "
		"FROM ROWS FROM (pg_catalog.unnest($3), pg_catalog.unnest($4), "
		"pg_catalog.unnest($5), pg_catalog.unnest($6), pg_catalog.unnest($7)) "
		"WITH ORDINALITY "
		"AS u(n, k, s, st, g, i) "
		"ON CONFLICT (name) DO NOTHING RETURNING id",
		9, {TEXTOID, TEXTARRAYOID, TEXTARRAYOID, TEXTARRAYOID,
		INT8ARRAYOID, INT8ARRAYOID, INT8ARRAYOID, INT8OID, REGROLEOID}
	},
	[PLAN_DROP] = {
		"DELETE FROM streamforge.pipeline "
		"WHERE name OPERATOR(pg_catalog.=) $1 "
		"RETURNING id, owner, readers, ingesters, admins",
		1, {TEXTOID}
	},
	[PLAN_ACL_GET] = {
		"SELECT owner, readers, ingesters, admins FROM streamforge.pipeline "
		"WHERE name OPERATOR(pg_catalog.=) $1",
		1, {TEXTOID}
	},
	[PLAN_ACL_LOCK] = {
		"SELECT owner, readers, ingesters, admins FROM streamforge.pipeline "
		"WHERE name OPERATOR(pg_catalog.=) $1 FOR UPDATE",
		1, {TEXTOID}
	},
	[PLAN_ACL_PUT] = {
		"UPDATE streamforge.pipeline SET owner = $2, readers = $3, "
		"ingesters = $4, admins = $5 WHERE name OPERATOR(pg_catalog.=) $1",
		5, {TEXTOID, REGROLEOID, REGROLEARRAYOID, REGROLEARRAYOID,
		REGROLEARRAYOID}
	},
	[PLAN_EXISTS] = {
		"SELECT 1 FROM streamforge.pipeline "
		"WHERE name OPERATOR(pg_catalog.=) $1",
		1, {TEXTOID}
	},
	/* 0.2.0: the retention column (absent until ALTER EXTENSION UPDATE) */
	[PLAN_DEF_RETENTION] = {
		"SELECT retention FROM streamforge.pipeline "
		"WHERE id OPERATOR(pg_catalog.=) $1",
		1, {INT8OID}
	},
	[PLAN_SET_RETENTION] = {
		"UPDATE streamforge.pipeline SET retention = $2 "
		"WHERE id OPERATOR(pg_catalog.=) $1",
		2, {INT8OID, INT8OID}
	},
};

static SPIPlanPtr sf_plans[NUM_PLANS];

static void sf_xact_callback(XactEvent event, void *arg);
static void sf_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
								SubTransactionId parentSubid, void *arg);

/* ----------------------------------------------------------------
 * Helpers
 * ----------------------------------------------------------------
 */

static SPIPlanPtr
sf_plan(SfPlanId id)
{
	if (sf_plans[id] == NULL)
	{
		const SfPlanText *t = &sf_plan_text[id];
		SPIPlanPtr	plan;

		plan = SPI_prepare(t->sql, t->nargs, (Oid *) t->argtypes);
		if (plan == NULL)
			elog(ERROR, "SPI_prepare failed for \"%s\": %s",
				 t->sql, SPI_result_code_string(SPI_result));
		if (SPI_keepplan(plan) != 0)
			elog(ERROR, "SPI_keepplan failed");
		sf_plans[id] = plan;
	}
	return sf_plans[id];
}

/*
 * Run a prepared statement.  read_only statements use the active snapshot;
 * the others take a new one per statement (so that, under READ COMMITTED,
 * a row lock wait ends on the latest committed row).
 */
static void
sf_exec(SfPlanId id, Datum *values, const char *nulls, bool read_only,
		int expected)
{
	int			rc;

	rc = SPI_execute_plan(sf_plan(id), values, nulls, read_only, 0);
	if (rc != expected)
		elog(ERROR, "could not run streamforge statement %d: %s",
			 (int) id, SPI_result_code_string(rc));
}

static int64
sf_getint64(int col, bool *isnull)
{
	Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
								  col, isnull);

	return *isnull ? 0 : DatumGetInt64(d);
}

/*
 * Read the owner, readers, ingesters and admins columns, at col and the
 * three after it, of the first result row into acl, allocated in cxt.
 */
static void
sf_read_acl(SfAcl *acl, HeapTuple tup, TupleDesc desc, int col,
			MemoryContext cxt)
{
	Datum		d[4];
	bool		isnull;
	int			i;
	MemoryContext old;

	for (i = 0; i < 4; i++)
	{
		d[i] = SPI_getbinval(tup, desc, col + i, &isnull);
		if (isnull)
			elog(ERROR, "streamforge: pipeline privileges are null");
	}
	old = MemoryContextSwitchTo(cxt);
	sf_acl_from_datums(acl, d[0], d[1], d[2], d[3]);
	MemoryContextSwitchTo(old);
}

/*
 * Read SF_ROW_COLUMNS of the (single) result row; the acl is allocated in
 * cxt.
 */
static void
sf_read_row(SfRowInfo *row, bool with_xmin, MemoryContext cxt)
{
	HeapTuple	tup = SPI_tuptable->vals[0];
	TupleDesc	desc = SPI_tuptable->tupdesc;
	bool		isnull;

	row->relid = DatumGetObjectId(SPI_getbinval(tup, desc, 1, &isnull));
	row->id = sf_getint64(2, &isnull);
	row->version = sf_getint64(3, &isnull);
	row->snapshot_version = sf_getint64(4, &isnull);
	row->snapshot_len = DatumGetInt32(SPI_getbinval(tup, desc, 5, &isnull));
	if (isnull)
		row->snapshot_len = 0;
	row->offset_replays_base = sf_getint64(6, &isnull);
	sf_read_acl(&row->acl, tup, desc, 7, cxt);
	row->ours = false;
	if (with_xmin)
	{
		TransactionId xmin;

		xmin = DatumGetTransactionId(SPI_getbinval(tup, desc,
												   SF_ROW_NCOLUMNS + 1,
												   &isnull));
		row->ours = TransactionIdIsCurrentTransactionId(xmin);
	}
}

static void sf_cache_forget(const char *name);

static void
sf_unknown_pipeline(const char *name)
{
	char	   *hint;

	/* a pipeline dropped behind our back: its entry is of no use any more */
	sf_cache_forget(name);
	hint = sf_similar_pipelines(name);
	ereport(ERROR,
			errcode(ERRCODE_UNDEFINED_OBJECT),
			errmsg("pipeline \"%s\" does not exist", sf_msg_cstr(name)),
			hint ? errhint("%s", hint) : 0);
}

/* A name that cannot be stored is simply unknown (SPEC 5.8) */
static void
sf_check_lookup_name(const char *name)
{
	size_t		len = strlen(name);

	if (len == 0 || len > SF_NAME_MAX)
		sf_unknown_pipeline(name);
}

/*
 * Check user's privilege on the pipeline named by *arg against its row as
 * the caller's snapshot sees it, without a lock, before any statement that
 * changes something runs as the owner: a caller without the privilege
 * never makes the extension's owner do more than read the row.  The
 * statement that then locks the row checks the grants it returns again
 * (they may have changed meanwhile).  Caller runs as the owner, in SPI.
 */
static void
sf_check_acl_unlocked(const char *name, Datum *arg, Oid user,
					  SfPrivilege required)
{
	SfAcl		acl;

	sf_exec(PLAN_ACL_GET, arg, NULL, false, SPI_OK_SELECT);
	if (SPI_processed != 1)
		sf_unknown_pipeline(name);
	sf_read_acl(&acl, SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1,
				CurrentMemoryContext);
	sf_acl_check(&acl, name, user, required);
}

/*
 * A write in a read-only transaction (or on a standby) is refused with
 * the pipeline's name, not the internal statement's.
 */
void
sf_persist_check_writable(const char *name)
{
	if (XactReadOnly)
		ereport(ERROR,
				errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				errmsg("cannot change pipeline \"%s\" in a read-only transaction",
					   sf_msg_cstr(name)));
}

static pg_attribute_noreturn() void
sf_corrupt_definition(const char *name, const char *detail);

static void
sf_corrupt_definition(const char *name, const char *detail)
{
	ereport(ERROR,
			errcode(ERRCODE_DATA_CORRUPTED),
			errmsg("corrupt definition of pipeline \"%s\"", name),
			errdetail("%s", detail));
}

static SfCacheEntry *
sf_cache_lookup(const char *name, bool create)
{
	SfCacheEntry *entry;
	bool		found;

	if (sf_cache == NULL)
	{
		HASHCTL		ctl;

		if (!create)
			return NULL;
		sf_cache_cxt = AllocSetContextCreate(CacheMemoryContext,
											 "streamforge pipeline cache",
											 ALLOCSET_DEFAULT_SIZES);
		ctl.keysize = SF_NAME_MAX + 1;
		ctl.entrysize = sizeof(SfCacheEntry);
		ctl.hcxt = sf_cache_cxt;
		sf_cache = hash_create("streamforge pipelines", 16, &ctl,
							   HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	}
	entry = hash_search(sf_cache, name, create ? HASH_ENTER : HASH_FIND,
						&found);
	if (create && !found)
	{
		entry->relid = InvalidOid;
		entry->id = -1;
		entry->version = -1;
		entry->snapshot_version = -1;
		entry->snapshot_len = 0;
		entry->last_pos = 0;
		entry->journal_bytes = 0;
		entry->pipeline = NULL;
		entry->acl.owner = InvalidOid;
		entry->acl.ngrants = 0;
		entry->acl.grants = NULL;
		entry->acl_subid = InvalidSubTransactionId;
		entry->acl_stale = false;
		entry->modified_subid = InvalidSubTransactionId;
		entry->locked = false;
		entry->journal_pending = false;
		entry->clean_valid = false;
		entry->mem = sizeof(SfCacheEntry);
		sf_cache_bytes += entry->mem;
		dlist_push_head(&sf_lru, &entry->lru_node);
		entry->compact_after = 0;
	}
	return entry;
}

/* Charge the entry's current size to the cache */
static void
sf_cache_account(SfCacheEntry *entry)
{
	int64		mem = sizeof(SfCacheEntry);

	if (entry->pipeline != NULL)
		mem += MemoryContextMemAllocated(entry->pipeline->cxt, true);
	sf_cache_bytes += mem - entry->mem;
	entry->mem = mem;
}

/* The entry is in use: it goes to the front of the eviction order */
static void
sf_cache_touch(SfCacheEntry *entry)
{
	dlist_move_head(&sf_lru, &entry->lru_node);
}

/* Forget an entry's state; the entry itself stays, invalid */
static void
sf_cache_invalidate(SfCacheEntry *entry)
{
	if (entry->pipeline != NULL)
		sf_pipeline_free(entry->pipeline);
	entry->pipeline = NULL;
	sf_cache_account(entry);
	entry->version = -1;
	entry->locked = false;
	entry->journal_pending = false;
	if (entry->modified_subid != InvalidSubTransactionId)
		sf_nmodified--;
	entry->modified_subid = InvalidSubTransactionId;
	entry->clean_valid = false;
}

static void
sf_cache_remove(SfCacheEntry *entry)
{
	sf_cache_invalidate(entry);
	if (entry->acl.grants != NULL)
		pfree(entry->acl.grants);
	sf_cache_bytes -= entry->mem;
	dlist_delete(&entry->lru_node);
	if (sf_write_entry == entry)
		sf_write_entry = NULL;
	hash_search(sf_cache, entry->name, HASH_REMOVE, NULL);
}

/*
 * Remove an entry outside the transaction callbacks.  If it held changes of
 * the current transaction, a later load may find them in the tables, so no
 * clean baseline may be taken for the rest of the transaction.
 */
static void
sf_cache_discard(SfCacheEntry *entry)
{
	if (entry->modified_subid != InvalidSubTransactionId)
		sf_subabort_discarded = true;
	sf_cache_remove(entry);
}

/* Drop the entry of name, if any: its pipeline does not exist (any more) */
static void
sf_cache_forget(const char *name)
{
	SfCacheEntry *entry = sf_cache_lookup(name, false);

	if (entry != NULL)
		sf_cache_discard(entry);
}

/*
 * Evict the least recently used entries until the cache holds at most
 * streamforge.cache_size, sparing keep, the most recently used entry (a
 * pipeline larger than the limit is not rebuilt for every transaction that
 * uses it), and every entry that holds changes of the current transaction
 * (they are few, and discarding them would cost the transaction a rebuild
 * per call).
 */
static void
sf_cache_enforce(SfCacheEntry *keep)
{
	int64		limit;
	dlist_node *cur;

	if (sf_cache == NULL || sf_cache_size < 0)
		return;
	limit = (int64) sf_cache_size * 1024;
	cur = dlist_is_empty(&sf_lru) ? NULL : dlist_tail_node(&sf_lru);
	while (cur != NULL && sf_cache_bytes > limit)
	{
		SfCacheEntry *entry = dlist_container(SfCacheEntry, lru_node, cur);

		cur = dlist_has_prev(&sf_lru, cur) ? dlist_prev_node(&sf_lru, cur) : NULL;
		if (entry == keep || entry->modified_subid != InvalidSubTransactionId ||
			entry->locked || entry->journal_pending ||
			cur == NULL)		/* the most recently used */
			continue;
		sf_cache_remove(entry);
	}
}

static void
sf_mark_modified(SfCacheEntry *entry, SubTransactionId subid)
{
	if (entry->modified_subid == InvalidSubTransactionId)
		sf_nmodified++;
	entry->modified_subid = subid;
	entry->clean_valid = false;
}

/* ----------------------------------------------------------------
 * Buffered journal entries (sf_pending)
 * ----------------------------------------------------------------
 */

static SfPending *
sf_pending_lookup(int64 id, bool create)
{
	SfPending  *pend;
	bool		found;

	if (sf_pending_last != NULL && sf_pending_last->id == id)
		return sf_pending_last;
	if (sf_pending == NULL)
	{
		HASHCTL		ctl;

		if (!create)
			return NULL;
		if (sf_pending_cxt == NULL)
			sf_pending_cxt = AllocSetContextCreate(TopMemoryContext,
												   "streamforge pending journal",
												   ALLOCSET_DEFAULT_SIZES);
		ctl.keysize = sizeof(int64);
		ctl.entrysize = sizeof(SfPending);
		ctl.hcxt = sf_pending_cxt;
		sf_pending = hash_create("streamforge pending journal", 16, &ctl,
								 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	pend = hash_search(sf_pending, &id, create ? HASH_ENTER : HASH_FIND,
					   &found);
	if (create && !found)
	{
		pend->runs = NULL;
		pend->tail = NULL;
		pend->bytes = 0;
	}
	if (pend != NULL)
		sf_pending_last = pend;
	return pend;
}

/* Forget every buffered entry (end of transaction) */
static void
sf_pending_reset(void)
{
	sf_pending = NULL;
	sf_pending_last = NULL;
	if (sf_pending_cxt != NULL)
		MemoryContextReset(sf_pending_cxt);
}

/*
 * Buffer the journal entry of a top-level write call on entry's pipeline,
 * at the next position.
 */
static void
sf_pending_add(SfCacheEntry *entry, const char *data, Size len)
{
	SfPending  *pend = sf_pending_lookup(entry->id, true);
	SfPendingRun *run = pend->tail;
	int64		pos = entry->last_pos + 1;
	MemoryContext old = MemoryContextSwitchTo(sf_pending_cxt);

	pend->relid = entry->relid;
	if (run == NULL || run->superseded != InvalidSubTransactionId ||
		run->last_pos != pos - 1)
	{
		run = palloc(sizeof(SfPendingRun));
		run->count = 0;
		initStringInfo(&run->data);
		run->superseded = InvalidSubTransactionId;
		run->next = NULL;
		if (pend->tail != NULL)
			pend->tail->next = run;
		else
			pend->runs = run;
		pend->tail = run;
	}
	pq_sendint32(&run->data, (uint32) len);
	appendBinaryStringInfo(&run->data, data, len);
	run->count++;
	run->last_pos = pos;
	MemoryContextSwitchTo(old);
	pend->bytes += len;
	entry->last_pos = pos;
	entry->journal_bytes += len;
}

/*
 * Store the live runs of pend as journal rows and forget them all (the
 * superseded ones too: at the top level, nothing can revive them any more).
 * Only at the top level, or just before it commits: rows written inside a
 * subtransaction would vanish with it.  Caller must be connected to SPI as
 * the owner.
 */
static void
sf_pending_write(SfPending *pend)
{
	SfPendingRun *run;

	for (run = pend->runs; run != NULL; run = run->next)
	{
		Datum		values[3];

		if (run->superseded != InvalidSubTransactionId)
			continue;
		values[0] = Int64GetDatum(pend->id);
		values[1] = Int64GetDatum(run->last_pos);
		values[2] = PointerGetDatum(sf_journal_sequence(run->data.data,
														run->data.len,
														run->count));
		sf_exec(PLAN_JOURNAL_PUT, values, NULL, false, SPI_OK_INSERT);
	}
	for (run = pend->runs; run != NULL;)
	{
		SfPendingRun *next = run->next;

		pfree(run->data.data);
		pfree(run);
		run = next;
	}
	pend->runs = NULL;
	pend->tail = NULL;
	pend->bytes = 0;
}

/*
 * sf_pending_write for every pipeline, as the owner; the entries of
 * pipelines whose table is gone (DROP EXTENSION) are dropped.
 */
static void
sf_pending_write_all(void)
{
	HASH_SEQ_STATUS status;
	SfPending  *pend;
	SfSavedUser saved;
	Oid			nsp;
	Oid			relid = InvalidOid;

	if (sf_pending == NULL)
		return;
	nsp = get_namespace_oid("streamforge", true);
	if (OidIsValid(nsp))
		relid = get_relname_relid("pipeline", nsp);
	if (!OidIsValid(relid))
		return;
	sf_become_owner(&saved);
	SPI_connect();
	/* at commit, no statement's snapshot is active any more */
	PushActiveSnapshot(GetTransactionSnapshot());
	hash_seq_init(&status, sf_pending);
	while ((pend = hash_seq_search(&status)) != NULL)
		if (pend->runs != NULL && pend->relid == relid)
			sf_pending_write(pend);
	PopActiveSnapshot();
	SPI_finish();
	sf_restore_user(&saved);
}

/*
 * A new snapshot or a drop of pipeline id in the current subtransaction
 * covers every buffered entry of it.
 */
static void
sf_pending_supersede(int64 id)
{
	SfPending  *pend = sf_pending_lookup(id, false);
	SfPendingRun *run;

	if (pend == NULL)
		return;
	for (run = pend->runs; run != NULL; run = run->next)
		if (run->superseded == InvalidSubTransactionId)
			run->superseded = GetCurrentSubTransactionId();
	pend->bytes = 0;
}

/*
 * End of subtransaction mySubid: on abort, the runs it superseded live
 * again; on commit, they are superseded by its parent.
 */
static void
sf_pending_subxact_end(bool abort, SubTransactionId mySubid,
					   SubTransactionId parentSubid)
{
	HASH_SEQ_STATUS status;
	SfPending  *pend;

	if (sf_pending == NULL)
		return;
	hash_seq_init(&status, sf_pending);
	while ((pend = hash_seq_search(&status)) != NULL)
	{
		SfPendingRun *run;

		pend->bytes = 0;
		for (run = pend->runs; run != NULL; run = run->next)
		{
			if (run->superseded != InvalidSubTransactionId &&
				run->superseded >= mySubid)
				run->superseded = abort ? InvalidSubTransactionId : parentSubid;
			if (run->superseded == InvalidSubTransactionId)
				pend->bytes += run->data.len - 4 * run->count;
		}
	}
}

/*
 * Replay run onto p, unless superseded; add its bytes to *bytes and raise
 * *last to its position.
 */
static void
sf_pending_replay_run(SfPipeline *p, const SfPendingRun *run, int64 *bytes,
					  int64 *last)
{
	int			off = 0;

	if (run->superseded != InvalidSubTransactionId)
		return;
	while (off < run->data.len)
	{
		uint32		n;

		CHECK_FOR_INTERRUPTS();
		memcpy(&n, run->data.data + off, sizeof(n));
		n = pg_ntoh32(n);
		sf_journal_replay(p, run->data.data + off + 4, n);
		off += 4 + n;
		*bytes += n;
	}
	*last = Max(*last, run->last_pos);
}

/* ----------------------------------------------------------------
 * Loading
 * ----------------------------------------------------------------
 */

static void
sf_copy_name(const char *pipeline, char *dst, const char *src)
{
	size_t		len = strlen(src);

	if (len == 0 || len > SF_NAME_MAX)
		sf_corrupt_definition(pipeline, "A partition or window name is empty or too long.");
	memcpy(dst, src, len + 1);
}

/*
 * Whether streamforge.pipeline has the retention column of 0.2.0.  Between
 * a package upgrade and ALTER EXTENSION UPDATE the library runs on 0.1.0's
 * tables, whose pipelines all keep everything.  A syscache lookup, only
 * when a definition is loaded.
 */
static bool
sf_has_retention_column(void)
{
	Oid			nsp = get_namespace_oid("streamforge", true);
	Oid			rel;

	if (!OidIsValid(nsp))
		return false;
	rel = get_relname_relid("pipeline", nsp);
	return OidIsValid(rel) && get_attnum(rel, "retention") != InvalidAttrNumber;
}

/* The retention of pipeline id (SPEC.md 6); NULL keeps everything */
static void
sf_load_retention(const char *name, int64 id, SfPipelineDef *def)
{
	Datum		arg = Int64GetDatum(id);
	bool		isnull;

	def->has_retention = false;
	def->retention = 0;
	if (!sf_has_retention_column())
		return;
	sf_exec(PLAN_DEF_RETENTION, &arg, NULL, true, SPI_OK_SELECT);
	if (SPI_processed != 1)
		elog(ERROR, "pipeline \"%s\" vanished", name);
	def->retention = sf_getint64(1, &isnull);
	def->has_retention = !isnull;
	if (def->has_retention && def->retention < 0)
		sf_corrupt_definition(name, "The retention is negative.");
}

/*
 * Load the definition of pipeline id from its row, in the current memory
 * context.  Caller must be connected to SPI with a snapshot pushed.
 */
static void
sf_load_def(const char *name, int64 id, SfPipelineDef *def)
{
	MemoryContext cxt = CurrentMemoryContext;
	Datum		arg = Int64GetDatum(id);
	bool		isnull;
	ArrayType  *arr;
	Datum	   *elems;
	bool	   *elemnulls;
	int			n;
	uint64		i;

	memset(def, 0, sizeof(*def));
	strlcpy(def->name, name, sizeof(def->name));

	sf_exec(PLAN_DEF, &arg, NULL, true, SPI_OK_SELECT);
	if (SPI_processed != 1)
		elog(ERROR, "pipeline \"%s\" vanished", name);
	arr = DatumGetArrayTypeP(SPI_getbinval(SPI_tuptable->vals[0],
										   SPI_tuptable->tupdesc, 1, &isnull));
	def->lateness = sf_getint64(2, &isnull);
	sf_load_retention(name, id, def);
	if (ARR_NDIM(arr) > 1)
		sf_corrupt_definition(name, "The partitions are not a list.");
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT,
					  &elems, &elemnulls, &n);
	if (n < 1 || n > PG_UINT16_MAX)
		sf_corrupt_definition(name, "The number of partitions is out of range.");
	def->npartitions = n;
	def->partitions = MemoryContextAllocZero(cxt, n * sizeof(*def->partitions));
	for (i = 0; i < n; i++)
	{
		if (elemnulls[i])
			sf_corrupt_definition(name, "A partition name is null.");
		sf_copy_name(name, def->partitions[i], TextDatumGetCString(elems[i]));
	}

	sf_exec(PLAN_DEF_WINDOWS, &arg, NULL, true, SPI_OK_SELECT);
	if (SPI_processed < 1 || SPI_processed > PG_UINT16_MAX)
		sf_corrupt_definition(name, "The number of windows is out of range.");
	def->nwindows = (int) SPI_processed;
	def->windows = MemoryContextAllocZero(cxt, SPI_processed * sizeof(SfWindowDef));
	for (i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		SfWindowDef *w = &def->windows[i];
		char	   *wname = SPI_getvalue(tup, desc, 1);
		char	   *kind = SPI_getvalue(tup, desc, 2);
		Datum		d;

		if (wname == NULL || kind == NULL)
			sf_corrupt_definition(name, "A window has a null name or kind.");
		sf_copy_name(name, w->name, wname);
		if (!sf_window_kind_parse(kind, &w->kind))
			sf_corrupt_definition(name, "A window has an unknown kind.");
		d = SPI_getbinval(tup, desc, 3, &isnull);
		w->size = isnull ? 0 : DatumGetInt64(d);
		d = SPI_getbinval(tup, desc, 4, &isnull);
		w->step = isnull ? 0 : DatumGetInt64(d);
		d = SPI_getbinval(tup, desc, 5, &isnull);
		w->gap = isnull ? 0 : DatumGetInt64(d);
	}
	sf_def_normalize(def);
}

/*
 * Replay the journal rows of pipeline id with pos > from onto p, in pos
 * order, merged with the buffered entries of pend (if not NULL: the
 * transaction's own entries not yet stored), adding their number of bytes
 * to *bytes and returning the last position (from if there is none).
 * Caller must be connected to SPI with a snapshot pushed, and must treat p
 * as broken if this fails.
 */
static int64
sf_replay_journal(SfPipeline *p, int64 id, int64 from, int64 *bytes,
				  SfPending *pend)
{
	int64		last = from;
	int64		pos;
	SfPendingRun *run = pend != NULL ? pend->runs : NULL;
	Datum		args[2];
	Portal		portal;
	MemoryContext replaycxt;
	MemoryContext oldcxt;

	args[0] = Int64GetDatum(id);
	args[1] = Int64GetDatum(from);
	portal = SPI_cursor_open(NULL, sf_plan(PLAN_JOURNAL_GET), args, NULL, true);
	replaycxt = AllocSetContextCreate(CurrentMemoryContext,
									  "streamforge replay",
									  ALLOCSET_DEFAULT_SIZES);
	for (;;)
	{
		uint64		i;

		SPI_cursor_fetch(portal, true, SF_JOURNAL_FETCH);
		if (SPI_processed == 0)
			break;
		for (i = 0; i < SPI_processed; i++)
		{
			HeapTuple	tup = SPI_tuptable->vals[i];
			TupleDesc	desc = SPI_tuptable->tupdesc;
			bool		isnull;
			Datum		d;
			bytea	   *entrydata;

			CHECK_FOR_INTERRUPTS();
			pos = DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));
			/* buffered entries that come before this row */
			for (; run != NULL && run->last_pos < pos; run = run->next)
			{
				oldcxt = MemoryContextSwitchTo(replaycxt);
				sf_pending_replay_run(p, run, bytes, &last);
				MemoryContextSwitchTo(oldcxt);
				MemoryContextReset(replaycxt);
			}
			last = Max(last, pos);
			d = SPI_getbinval(tup, desc, 2, &isnull);
			if (isnull)
				ereport(ERROR,
						errcode(ERRCODE_DATA_CORRUPTED),
						errmsg("corrupt journal entry for pipeline \"%s\"",
							   p->def.name),
						errdetail("The entry is null."));
			oldcxt = MemoryContextSwitchTo(replaycxt);
			entrydata = DatumGetByteaPP(d);
			sf_journal_replay(p, VARDATA_ANY(entrydata),
							  VARSIZE_ANY_EXHDR(entrydata));
			*bytes += VARSIZE_ANY_EXHDR(entrydata);
			MemoryContextSwitchTo(oldcxt);
			MemoryContextReset(replaycxt);
		}
		SPI_freetuptable(SPI_tuptable);
	}
	SPI_cursor_close(portal);
	for (; run != NULL; run = run->next)
	{
		oldcxt = MemoryContextSwitchTo(replaycxt);
		sf_pending_replay_run(p, run, bytes, &last);
		MemoryContextSwitchTo(oldcxt);
		MemoryContextReset(replaycxt);
	}
	MemoryContextDelete(replaycxt);
	return last;
}

/*
 * Rebuild entry from the row: snapshot, then journal.  Caller must be
 * connected to SPI with a snapshot pushed.
 */
static void
sf_rebuild(SfCacheEntry *entry, const char *name, const SfRowInfo *row)
{
	SfPipelineDef def;
	SfPipeline *p;
	Datum		arg = Int64GetDatum(row->id);
	bool		isnull;
	Datum		snap;
	int64		bytes = 0;
	int64		last_pos;

	sf_cache_invalidate(entry);
	sf_load_def(name, row->id, &def);

	sf_exec(PLAN_SNAPSHOT_GET, &arg, NULL, true, SPI_OK_SELECT);
	if (SPI_processed != 1)
		elog(ERROR, "pipeline \"%s\" vanished", name);
	snap = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1,
						 &isnull);
	/* built under the transaction: an error cannot leak it */
	if (isnull)
		p = sf_pipeline_create(CurTransactionContext, &def);
	else
	{
		bytea	   *b = DatumGetByteaPP(snap);

		p = sf_snapshot_decode(CurTransactionContext, &def,
							   VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b));
	}
	p->offset_replays = row->offset_replays_base;
	last_pos = sf_replay_journal(p, row->id, 0, &bytes,
								 sf_pending_lookup(row->id, false));

	/* complete: the cache takes it over */
	MemoryContextSetParent(p->cxt, sf_cache_cxt);
	entry->pipeline = p;
	entry->relid = row->relid;
	entry->id = row->id;
	entry->snapshot_version = row->snapshot_version;
	entry->snapshot_len = row->snapshot_len;
	entry->last_pos = last_pos;
	entry->journal_bytes = bytes;
	entry->version = row->version;
}

/*
 * Make entry hold the state of the pipeline in row: the committed state at
 * row->version, or, if this transaction wrote it, its current state.
 * current_version is the version whose state that is: row->version, or
 * row->version - 1 when the caller has just bumped it.  Caller must be
 * connected to SPI with a snapshot pushed.
 */
static void
sf_cache_sync(SfCacheEntry *entry, const char *name, const SfRowInfo *row,
			  int64 current_version)
{
	bool		same;

	if (entry->pipeline != NULL && entry->pipeline->busy)
		sf_cache_invalidate(entry);

	same = entry->pipeline != NULL && entry->version >= 0 &&
		entry->relid == row->relid && entry->id == row->id;
	if (same && entry->version == current_version)
	{
		entry->version = row->version;
		return;
	}
	/*
	 * Catching up is correct by construction.  A journal epoch is the
	 * journal of one snapshot, named by its snapshot_version: the version of
	 * the transaction that wrote the snapshot (compaction or restore), which
	 * no other committed state has.  Within an epoch rows are only appended,
	 * at positions after the last one, by the holder of the row lock with a
	 * current entry; they are deleted only together with the writing
	 * of a new snapshot, which starts a new epoch at position 1 (in the
	 * writer's entry too).  So an entry with the row's snapshot_version
	 * holds exactly the rows of the current journal up to last_pos, and the
	 * rows it lacks are those after it.
	 */
	if (same && entry->snapshot_version == row->snapshot_version &&
		entry->version < current_version)
	{
		int64		from = entry->last_pos;

		entry->version = -1;	/* invalid until caught up */
		/* nothing buffered: that needs the row lock, which nobody else had */
		Assert(sf_pending_lookup(row->id, false) == NULL ||
			   sf_pending_lookup(row->id, false)->runs == NULL);
		entry->last_pos = sf_replay_journal(entry->pipeline, row->id, from,
											&entry->journal_bytes, NULL);
		entry->version = row->version;
		return;
	}
	sf_rebuild(entry, name, row);
}

/* ----------------------------------------------------------------
 * Entry points
 * ----------------------------------------------------------------
 */

/*
 * Register the transaction callbacks and settings.  Called from _PG_init.
 */
void
sf_persist_init(void)
{
	DefineCustomIntVariable("streamforge.compaction_threshold",
							"Journal size above which a pipeline's state is compacted into a new snapshot.",
							"The journal since the last snapshot is compacted once it exceeds the larger of this and four times the snapshot's size; -1 disables compaction.",
							&sf_compaction_threshold,
							64 * 1024, -1, MAX_KILOBYTES,
							PGC_USERSET, GUC_UNIT_KB,
							NULL, NULL, NULL);
	DefineCustomIntVariable("streamforge.cache_size",
							"Memory a backend may keep for cached pipelines.",
							"Least recently used pipelines beyond this are evicted and rebuilt from their tables when next used; pipelines the current transaction changed are kept until it ends.  -1: no limit.",
							&sf_cache_size,
							128 * 1024, -1, MAX_KILOBYTES,
							PGC_USERSET, GUC_UNIT_KB,
							NULL, NULL, NULL);
	RegisterXactCallback(sf_xact_callback, NULL);
	RegisterSubXactCallback(sf_subxact_callback, NULL);
}

/*
 * Store a new, empty pipeline.  def must be validated and normalized.
 * Raises 42710 if a pipeline of that name exists (or is being created by a
 * concurrent transaction that then commits).
 */
void
sf_persist_create(const SfPipelineDef *def)
{
	Datum		values[9];
	char		nulls[9];
	Datum	   *parts;
	Datum	   *wnames,
			   *wkinds,
			   *wsizes,
			   *wsteps,
			   *wgaps;
	bool	   *szn,
			   *stn,
			   *gpn;
	int			dims[1];
	int			lbs[1] = {1};
	int			i;
	Oid			owner = GetUserId();
	SfSavedUser saved;

	sf_persist_check_writable(def->name);
	sf_become_owner(&saved);
	SPI_connect();

	parts = palloc(def->npartitions * sizeof(Datum));
	for (i = 0; i < def->npartitions; i++)
		parts[i] = CStringGetTextDatum(def->partitions[i]);

	wnames = palloc(def->nwindows * sizeof(Datum));
	wkinds = palloc(def->nwindows * sizeof(Datum));
	wsizes = palloc(def->nwindows * sizeof(Datum));
	wsteps = palloc(def->nwindows * sizeof(Datum));
	wgaps = palloc(def->nwindows * sizeof(Datum));
	szn = palloc(def->nwindows * sizeof(bool));
	stn = palloc(def->nwindows * sizeof(bool));
	gpn = palloc(def->nwindows * sizeof(bool));
	for (i = 0; i < def->nwindows; i++)
	{
		const SfWindowDef *w = &def->windows[i];

		wnames[i] = CStringGetTextDatum(w->name);
		wkinds[i] = CStringGetTextDatum(sf_window_kind_name(w->kind));
		wsizes[i] = Int64GetDatum(w->size);
		wsteps[i] = Int64GetDatum(w->step);
		wgaps[i] = Int64GetDatum(w->gap);
		szn[i] = w->kind == SF_WINDOW_SESSION;
		stn[i] = w->kind != SF_WINDOW_SLIDING;
		gpn[i] = w->kind != SF_WINDOW_SESSION;
	}

	memset(nulls, ' ', sizeof(nulls));
	values[0] = CStringGetTextDatum(def->name);
	values[1] = PointerGetDatum(construct_array(parts, def->npartitions,
												TEXTOID, -1, false,
												TYPALIGN_INT));
	dims[0] = def->nwindows;
	values[2] = PointerGetDatum(construct_array(wnames, def->nwindows,
												TEXTOID, -1, false,
												TYPALIGN_INT));
	values[3] = PointerGetDatum(construct_array(wkinds, def->nwindows,
												TEXTOID, -1, false,
												TYPALIGN_INT));
	values[4] = PointerGetDatum(construct_md_array(wsizes, szn, 1, dims, lbs,
												   INT8OID, 8, FLOAT8PASSBYVAL,
												   TYPALIGN_DOUBLE));
	values[5] = PointerGetDatum(construct_md_array(wsteps, stn, 1, dims, lbs,
												   INT8OID, 8, FLOAT8PASSBYVAL,
												   TYPALIGN_DOUBLE));
	values[6] = PointerGetDatum(construct_md_array(wgaps, gpn, 1, dims, lbs,
												   INT8OID, 8, FLOAT8PASSBYVAL,
												   TYPALIGN_DOUBLE));
	values[7] = Int64GetDatum(def->lateness);
	values[8] = ObjectIdGetDatum(owner);

	sf_exec(PLAN_CREATE, values, nulls, false, SPI_OK_INSERT_RETURNING);
	if (SPI_processed != 1)
		ereport(ERROR,
				errcode(ERRCODE_DUPLICATE_OBJECT),
				errmsg("pipeline \"%s\" already exists", def->name));
	if (def->has_retention)
	{
		bool		isnull;
		Datum		args[2];

		args[0] = Int64GetDatum(sf_getint64(1, &isnull));
		args[1] = Int64GetDatum(def->retention);
		sf_exec(PLAN_SET_RETENTION, args, NULL, false, SPI_OK_UPDATE);
	}
	SPI_finish();
	sf_restore_user(&saved);
}

/*
 * Whether a pipeline named name exists (in the caller's snapshot), whoever
 * may use it.
 */
bool
sf_persist_exists(const char *name)
{
	Datum		arg = CStringGetTextDatum(name);
	SfSavedUser saved;
	bool		exists;

	sf_become_owner(&saved);
	SPI_connect();
	sf_exec(PLAN_EXISTS, &arg, NULL, true, SPI_OK_SELECT);
	exists = SPI_processed > 0;
	SPI_finish();
	sf_restore_user(&saved);
	return exists;
}

/*
 * Delete a pipeline and its journal.  Raises 42704 if it does not exist,
 * 42501 unless the caller has the admin privilege on it (the error undoes
 * the delete).  The cache entry goes too; should the drop roll back, the
 * next call simply rebuilds it.
 */
void
sf_persist_drop(const char *name)
{
	Datum		arg;
	SfCacheEntry *entry;
	SfSavedUser saved;
	SfAcl		acl;
	bool		isnull;

	sf_check_lookup_name(name);
	sf_become_owner(&saved);
	SPI_connect();
	arg = CStringGetTextDatum(name);
	sf_check_acl_unlocked(name, &arg, saved.userid, SF_PRIV_ADMIN);
	sf_persist_check_writable(name);
	sf_exec(PLAN_DROP, &arg, NULL, false, SPI_OK_DELETE_RETURNING);
	if (SPI_processed != 1)
		sf_unknown_pipeline(name);
	sf_read_acl(&acl, SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2,
				CurrentMemoryContext);
	sf_acl_check(&acl, name, saved.userid, SF_PRIV_ADMIN);
	/* buffered entries must not be stored for a deleted pipeline */
	sf_pending_supersede(sf_getint64(1, &isnull));
	SPI_finish();
	sf_restore_user(&saved);

	entry = sf_cache_lookup(name, false);
	if (entry != NULL)
		sf_cache_discard(entry);
}

/*
 * Return the pipeline named name, with the state its row holds in the
 * caller's snapshot.  Raises 42704 if it does not exist, 42501 unless the
 * current user has the read (for_write: ingest) privilege on it, checked
 * against the owner and grants read with the row, before any state is
 * loaded.
 *
 * for_write: lock the row (once per transaction) for one write call.  The
 * caller must then run one engine operation (or batch) and journal it
 * (journal.c) before the next open of this pipeline, or journal nothing if
 * the call changed nothing.
 *
 * The result belongs to the cache: it stays valid until the end of the
 * current SQL function call at most, and the caller must not keep it.
 */
SfPipeline *
sf_persist_open(const char *name, bool for_write)
{
	SfRowInfo	row = {0};
	SfCacheEntry *entry;
	Datum		arg;
	int64		current_version;
	SfPrivilege required = for_write ? SF_PRIV_INGEST : SF_PRIV_READ;
	MemoryContext callercxt = CurrentMemoryContext;
	SfSavedUser saved;

	sf_check_lookup_name(name);

	/*
	 * This transaction holds the lock: nobody else can have changed the
	 * pipeline or its privileges, so the cached copy is the truth.
	 */
	if (sf_write_entry != NULL && strcmp(sf_write_entry->name, name) == 0)
		entry = sf_write_entry; /* per-row calls: no hashing */
	else
		entry = sf_cache_lookup(name, false);
	if (for_write && entry != NULL && entry->locked &&
		entry->pipeline != NULL && !entry->pipeline->busy)
	{
		if (entry->acl_stale)
		{
			/* a grant, revoke or set_owner was rolled back to a savepoint */
			SfAcl		acl;

			sf_persist_get_acl(name, false, &acl);
			sf_acl_copy(&entry->acl, &acl, sf_cache_cxt);
			entry->acl_stale = false;
		}
		sf_acl_check(&entry->acl, name, GetUserId(), required);
		sf_persist_check_writable(name);
		sf_mark_modified(entry, GetCurrentSubTransactionId());
		entry->journal_pending = true;
		sf_cache_touch(entry);
		sf_write_entry = entry;
		/* nothing but the state refers to its keys between calls */
		sf_keys_collect(entry->pipeline);
		return entry->pipeline;
	}

	sf_become_owner(&saved);
	SPI_connect();
	arg = CStringGetTextDatum(name);

	if (for_write)
	{
		/* the privilege first: nothing runs as the owner for a stranger */
		sf_check_acl_unlocked(name, &arg, saved.userid, required);
		sf_persist_check_writable(name);
		sf_exec(PLAN_OPEN_WRITE, &arg, NULL, false, SPI_OK_UPDATE_RETURNING);
		if (SPI_processed != 1)
			sf_unknown_pipeline(name);
		sf_read_row(&row, false, callercxt);
		/* an error undoes the version bump */
		sf_acl_check(&row.acl, name, saved.userid, required);
		row.ours = true;
		current_version = row.version - 1;
	}

	/* one snapshot for everything read below, which sees our own writes */
	if (!IsInParallelMode())
		CommandCounterIncrement();
	PushActiveSnapshot(GetTransactionSnapshot());

	if (!for_write)
	{
		sf_exec(PLAN_OPEN_READ, &arg, NULL, true, SPI_OK_SELECT);
		if (SPI_processed != 1)
			sf_unknown_pipeline(name);
		sf_read_row(&row, true, callercxt);
		sf_acl_check(&row.acl, name, saved.userid, required);
		current_version = row.version;
	}

	entry = sf_cache_lookup(name, true);
	sf_cache_sync(entry, name, &row, current_version);
	sf_acl_copy(&entry->acl, &row.acl, sf_cache_cxt);
	entry->acl_stale = false;

	PopActiveSnapshot();
	SPI_finish();
	sf_restore_user(&saved);

	/* nothing but the state refers to its keys between calls */
	if (entry->pipeline != NULL)
		sf_keys_collect(entry->pipeline);
	sf_cache_account(entry);
	sf_cache_touch(entry);
	sf_cache_enforce(entry);

	if (for_write)
	{
		bool		first = entry->modified_subid == InvalidSubTransactionId;

		sf_mark_modified(entry, GetCurrentSubTransactionId());
		entry->locked = true;
		entry->journal_pending = true;
		sf_write_entry = entry;

		/*
		 * The first write of this transaction found the committed state
		 * (we hold the row lock and bumped a committed version), unless a
		 * savepoint rollback made us reload state of our own.
		 */
		if (first && !sf_subabort_discarded && entry->pipeline != NULL)
		{
			entry->clean_valid = true;
			entry->clean_pipeline = entry->pipeline;
			entry->clean_mutations = entry->pipeline->mutations;
			entry->clean_version = current_version;
		}
	}
	else if (row.ours && entry->modified_subid == InvalidSubTransactionId)
		sf_mark_modified(entry, GetCurrentSubTransactionId());

	return entry->pipeline;
}

/*
 * The snapshot of p for a compaction, or NULL if its state is too large
 * for one snapshot (54000, or out of memory): 1 GB for the binary form,
 * streamforge.max_checkpoint_size for a checkpoint document (see
 * sf_snapshot_encode).  The encoding runs
 * in a subtransaction, so that such a failure costs this call nothing: the
 * caller journals the call instead, and the pipeline stays usable (its
 * checkpoint() still fails, with the error).  Any other error propagates.
 * Reads no table: the caller need not be connected to SPI.
 */
static bytea *
sf_try_snapshot(SfPipeline *p)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	bytea	   *volatile snap = NULL;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		snap = sf_snapshot_encode(p);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		/* the caller's savepoints must find their own subtransaction */
		if (edata->sqlerrcode != ERRCODE_PROGRAM_LIMIT_EXCEEDED &&
			edata->sqlerrcode != ERRCODE_OUT_OF_MEMORY)
			ReThrowError(edata);
		ereport(WARNING,
				errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				errmsg("state of pipeline \"%s\" is too large to compact", p->def.name),
				errdetail("%s", edata->detail ? edata->detail : edata->message),
				errhint("The call is kept in the journal instead; lower the state (streamforge.max_live_buckets, advance) or raise streamforge.max_checkpoint_size to allow compaction and checkpoints."));
		FreeErrorData(edata);
		snap = NULL;
	}
	PG_END_TRY();
	return snap;
}

/*
 * Store the journal entry of the write call p was opened for, or compact.
 * Called by sf_persist_journal_* below once the engine operation succeeded.
 */
static void
sf_persist_write_journal(SfPipeline *p, const char *data, Size len)
{
	SfCacheEntry *entry;
	int64		limit;
	SfSavedUser saved;
	bytea	   *snap = NULL;

	if (sf_write_entry != NULL && sf_write_entry->pipeline == p)
		entry = sf_write_entry;
	else
		entry = sf_cache_lookup(p->def.name, false);

	if (entry == NULL || entry->pipeline != p || !entry->locked ||
		!entry->journal_pending)
		elog(ERROR, "pipeline \"%s\" was not opened for writing",
			 p->def.name);

	/*
	 * Compaction re-encodes the whole state, so it must stay rare: replaying
	 * the journal costs about what ingesting did, so a journal a few times
	 * the snapshot's size loads about as fast as the snapshot decodes.
	 */
	limit = sf_compaction_threshold < 0 ? -1 :
		Max((int64) sf_compaction_threshold * 1024,
			SF_COMPACTION_FACTOR * entry->snapshot_len);

	/*
	 * With a retention the snapshot stays as small as what the horizon
	 * covers, and so must the journal, or a cold load would replay up to
	 * the threshold's worth of history (SPEC.md 6: load time depends on
	 * what is remembered).
	 */
	if (limit >= 0 && p->def.has_retention)
		limit = Max(Min((int64) sf_compaction_threshold * 1024,
						SF_RETENTION_COMPACTION_FLOOR),
					SF_COMPACTION_FACTOR * entry->snapshot_len);

	if (limit >= 0 && entry->journal_bytes + (int64) len > limit &&
		entry->journal_bytes + (int64) len > entry->compact_after &&
		(snap = sf_try_snapshot(p)) == NULL)
	{
		/* too large: journal, and retry once the journal has doubled */
		entry->compact_after = 2 * (entry->journal_bytes + (int64) len);
	}
	if (snap != NULL)
	{
		Datum		values[3];
		Datum		arg = Int64GetDatum(entry->id);

		sf_become_owner(&saved);
		SPI_connect();
		values[0] = Int64GetDatum(entry->id);
		values[1] = PointerGetDatum(snap);
		values[2] = Int64GetDatum(p->offset_replays);
		sf_exec(PLAN_SNAPSHOT_PUT, values, NULL, false,
				SPI_OK_UPDATE_RETURNING);
		if (SPI_processed != 1)
			elog(ERROR, "pipeline \"%s\" vanished", p->def.name);
		sf_exec(PLAN_JOURNAL_CLEAR, &arg, NULL, false, SPI_OK_DELETE);
		entry->snapshot_version = entry->version;
		entry->snapshot_len = VARSIZE_ANY_EXHDR(snap);
		/* a new journal epoch: its positions start again (see sf_cache_sync) */
		entry->last_pos = 0;
		entry->journal_bytes = 0;
		entry->compact_after = 0;
		/* the snapshot holds what the buffered entries did */
		sf_pending_supersede(entry->id);
		SPI_finish();
		sf_restore_user(&saved);
	}
	else if (GetCurrentTransactionNestLevel() == 1)
	{
		SfPending  *pend;

		/* a top-level call: stored with the others before commit */
		sf_pending_add(entry, data, len);
		pend = sf_pending_lookup(entry->id, false);
		if (pend->bytes >= SF_PENDING_FLUSH)
		{
			sf_become_owner(&saved);
			SPI_connect();
			sf_pending_write(pend);
			SPI_finish();
			sf_restore_user(&saved);
		}
	}
	else
	{
		Datum		values[3];
		bytea	   *b;

		sf_become_owner(&saved);
		SPI_connect();
		b = palloc(VARHDRSZ + len);
		SET_VARSIZE(b, VARHDRSZ + len);
		memcpy(VARDATA(b), data, len);
		values[0] = Int64GetDatum(entry->id);
		values[1] = Int64GetDatum(entry->last_pos + 1);
		values[2] = PointerGetDatum(b);
		sf_exec(PLAN_JOURNAL_PUT, values, NULL, false, SPI_OK_INSERT);
		entry->last_pos++;
		entry->journal_bytes += len;
		SPI_finish();
		sf_restore_user(&saved);
	}
	entry->journal_pending = false;
	sf_cache_account(entry);

	/*
	 * The journal (its table, or the buffer) now holds this transaction's
	 * work: whatever the mutation count says, an abort must not keep this
	 * entry (its positions and snapshot_version describe rows that the
	 * abort removes).
	 */
	entry->clean_valid = false;
}

/*
 * Journal a write call: encode its inputs (journal.c) and store the entry.
 * Caller must have opened p for writing in this call (sf_persist_open), and
 * the engine must have accepted the operation.
 */
void
sf_persist_journal_ingest(SfPipeline *p, const SfDelivery *d, int n)
{
	StringInfoData buf;

	sf_journal_encode_ingest(&buf, p, d, n);
	sf_persist_write_journal(p, buf.data, buf.len);
	pfree(buf.data);
}

void
sf_persist_journal_advance(SfPipeline *p, const char *partition,
						   int64 progress)
{
	StringInfoData buf;

	sf_journal_encode_advance(&buf, p, partition, progress);
	sf_persist_write_journal(p, buf.data, buf.len);
	pfree(buf.data);
}

void
sf_persist_journal_mark_idle(SfPipeline *p, const char *partition)
{
	StringInfoData buf;

	sf_journal_encode_mark_idle(&buf, p, partition);
	sf_persist_write_journal(p, buf.data, buf.len);
	pfree(buf.data);
}

/*
 * Replace a pipeline's state by a checkpoint.  Validation (and SF003) is
 * sf_checkpoint_decode's; the stored snapshot is the canonical encoding of
 * the decoded state, and the journal is emptied.  Needs the admin
 * privilege (42501).
 */
void
sf_persist_restore(const char *name, const char *data, Size len)
{
	SfRowInfo	row;
	SfCacheEntry *entry;
	SfPipelineDef def;
	SfPipeline *p;
	bytea	   *snap;
	int64		snap_len;
	Datum		arg;
	Datum		values[3];
	MemoryContext callercxt = CurrentMemoryContext;
	SfSavedUser saved;

	sf_check_lookup_name(name);
	sf_become_owner(&saved);
	SPI_connect();
	arg = CStringGetTextDatum(name);
	sf_check_acl_unlocked(name, &arg, saved.userid, SF_PRIV_ADMIN);
	sf_persist_check_writable(name);
	sf_check_checkpoint_size(data, len);
	sf_exec(PLAN_OPEN_WRITE, &arg, NULL, false, SPI_OK_UPDATE_RETURNING);
	if (SPI_processed != 1)
		sf_unknown_pipeline(name);
	sf_read_row(&row, false, callercxt);
	sf_acl_check(&row.acl, name, saved.userid, SF_PRIV_ADMIN);

	CommandCounterIncrement();
	PushActiveSnapshot(GetTransactionSnapshot());
	sf_load_def(name, row.id, &def);
	PopActiveSnapshot();

	p = sf_checkpoint_restore(CurTransactionContext, &def, data, len);
	snap = sf_snapshot_encode(p);	/* in SPI's context: gone at SPI_finish */
	snap_len = VARSIZE_ANY_EXHDR(snap);
	p->offset_replays = 0;

	values[0] = Int64GetDatum(row.id);
	values[1] = PointerGetDatum(snap);
	values[2] = Int64GetDatum(p->offset_replays);
	sf_exec(PLAN_SNAPSHOT_PUT, values, NULL, false, SPI_OK_UPDATE_RETURNING);
	arg = Int64GetDatum(row.id);
	sf_exec(PLAN_JOURNAL_CLEAR, &arg, NULL, false, SPI_OK_DELETE);
	SPI_finish();
	sf_restore_user(&saved);
	/* the restored state replaces what buffered entries did */
	sf_pending_supersede(row.id);

	/*
	 * A new journal epoch (snapshot_version = this transaction's version):
	 * the journal is empty, so its positions start again from 1, as in
	 * every backend that loads it (see sf_cache_sync).
	 */
	entry = sf_cache_lookup(name, true);
	sf_cache_invalidate(entry);
	MemoryContextSetParent(p->cxt, sf_cache_cxt);
	entry->pipeline = p;
	entry->relid = row.relid;
	entry->id = row.id;
	entry->version = row.version;
	entry->snapshot_version = row.version;
	entry->snapshot_len = snap_len;
	entry->last_pos = 0;
	entry->journal_bytes = 0;
	sf_acl_copy(&entry->acl, &row.acl, sf_cache_cxt);
	sf_mark_modified(entry, GetCurrentSubTransactionId());
	entry->locked = true;
	sf_cache_account(entry);
	sf_cache_touch(entry);
	sf_cache_enforce(entry);
}

/*
 * The owner and grants of the pipeline named name, in the caller's memory
 * context; for_update locks its row first.  Raises 42704 if it does not
 * exist.  Checks no privilege: that is the caller's business.
 */
void
sf_persist_get_acl(const char *name, bool for_update, SfAcl *acl)
{
	MemoryContext callercxt = CurrentMemoryContext;
	SfSavedUser saved;
	Datum		arg;

	sf_check_lookup_name(name);
	if (for_update)
		sf_persist_check_writable(name);
	sf_become_owner(&saved);
	SPI_connect();
	arg = CStringGetTextDatum(name);
	sf_exec(for_update ? PLAN_ACL_LOCK : PLAN_ACL_GET, &arg, NULL,
			!for_update, SPI_OK_SELECT);
	if (SPI_processed != 1)
		sf_unknown_pipeline(name);
	sf_read_acl(acl, SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1,
				callercxt);
	SPI_finish();
	sf_restore_user(&saved);
}

/* regrole[] of the grants of acl with exactly the given privilege */
static Datum
sf_acl_array(const SfAcl *acl, SfPrivilege privilege)
{
	Datum	   *elems = palloc(Max(acl->ngrants, 1) * sizeof(Datum));
	int			n = 0;
	int			i;

	for (i = 0; i < acl->ngrants; i++)
		if (acl->grants[i].privilege == privilege)
			elems[n++] = ObjectIdGetDatum(acl->grants[i].role);
	return PointerGetDatum(construct_array(elems, n, REGROLEOID, sizeof(Oid),
										   true, TYPALIGN_INT));
}

/*
 * Store acl as the owner and grants of the pipeline named name.  Caller
 * must have locked the row (sf_persist_get_acl with for_update) in this
 * transaction and checked the privileges.  This backend's cached copy
 * follows at once; other backends read the row again before they use the
 * pipeline (a writer holding the lock cannot exist meanwhile).
 */
void
sf_persist_set_acl(const char *name, const SfAcl *acl)
{
	SfSavedUser saved;
	SfCacheEntry *entry;
	Datum		values[5];

	values[0] = CStringGetTextDatum(name);
	values[1] = ObjectIdGetDatum(acl->owner);
	values[2] = sf_acl_array(acl, SF_PRIV_READ);
	values[3] = sf_acl_array(acl, SF_PRIV_INGEST);
	values[4] = sf_acl_array(acl, SF_PRIV_ADMIN);
	sf_become_owner(&saved);
	SPI_connect();
	sf_exec(PLAN_ACL_PUT, values, NULL, false, SPI_OK_UPDATE);
	if (SPI_processed != 1)
		sf_unknown_pipeline(name);
	SPI_finish();
	sf_restore_user(&saved);

	entry = sf_cache_lookup(name, false);
	if (entry != NULL)
	{
		sf_acl_copy(&entry->acl, acl, sf_cache_cxt);
		/* subtransaction ids grow: the current one is the latest */
		entry->acl_subid = GetCurrentSubTransactionId();
		entry->acl_stale = false;
		sf_acl_changed = true;
	}
}

/* ----------------------------------------------------------------
 * Transaction callbacks
 * ----------------------------------------------------------------
 */

/*
 * Discard the entries that hold changes of the ending transaction (abort,
 * prepare), or make their changes permanent (commit).
 */
static void
sf_xact_callback(XactEvent event, void *arg)
{
	HASH_SEQ_STATUS status;
	SfCacheEntry *entry;
	bool		discard;

	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			/* the buffered journal entries commit with the transaction */
			sf_pending_write_all();
			return;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
			discard = false;
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			discard = true;
			break;
		default:
			return;
	}
	sf_subabort_discarded = false;
	sf_pending_reset();
	if (sf_cache != NULL && sf_acl_changed)
	{
		/* subtransaction ids start again with the next transaction */
		hash_seq_init(&status, sf_cache);
		while ((entry = hash_seq_search(&status)) != NULL)
			entry->acl_subid = InvalidSubTransactionId;
	}
	sf_acl_changed = false;
	if (sf_cache == NULL || sf_nmodified == 0)
		return;

	hash_seq_init(&status, sf_cache);
	while ((entry = hash_seq_search(&status)) != NULL)
	{
		entry->journal_pending = false;
		entry->locked = false;
		if (entry->modified_subid == InvalidSubTransactionId)
			continue;

		/*
		 * An abort after which the pipeline is still the committed state
		 * the transaction found (a call refused for a bad delivery, the
		 * usual case) keeps it: rebuilding would cost the whole history.
		 */
		if (discard && event != XACT_EVENT_PREPARE && entry->clean_valid &&
			entry->pipeline != NULL &&
			entry->pipeline == entry->clean_pipeline &&
			!entry->pipeline->busy &&
			entry->pipeline->mutations == entry->clean_mutations)
		{
			/* the version bump of the open was rolled back too */
			entry->version = entry->clean_version;
			entry->modified_subid = InvalidSubTransactionId;
			entry->clean_valid = false;
			sf_nmodified--;
		}
		else if (discard)
			sf_cache_remove(entry);
		else
		{
			entry->modified_subid = InvalidSubTransactionId;
			entry->clean_valid = false;
			sf_nmodified--;
			sf_cache_account(entry);
		}
	}
	Assert(sf_nmodified == 0);

	/* what the transaction's calls added may exceed the limit now */
	sf_cache_enforce(NULL);
}

/*
 * On abort of a subtransaction (ROLLBACK TO SAVEPOINT, a PL/pgSQL exception
 * block), discard every entry modified in it or in its children: their
 * subtransaction ids are all >= mySubid.
 */
static void
sf_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					SubTransactionId parentSubid, void *arg)
{
	HASH_SEQ_STATUS status;
	SfCacheEntry *entry;

	if (event == SUBXACT_EVENT_ABORT_SUB || event == SUBXACT_EVENT_COMMIT_SUB)
		sf_pending_subxact_end(event == SUBXACT_EVENT_ABORT_SUB, mySubid,
							   parentSubid);

	/*
	 * An ACL changed in the ending subtransaction (or a child) is now the
	 * parent's change; on abort the cached copy is the rolled-back one, so
	 * it is read again before it is trusted.
	 */
	if ((event == SUBXACT_EVENT_ABORT_SUB ||
		 event == SUBXACT_EVENT_COMMIT_SUB) && sf_cache != NULL &&
		sf_acl_changed)
	{
		hash_seq_init(&status, sf_cache);
		while ((entry = hash_seq_search(&status)) != NULL)
		{
			if (entry->acl_subid == InvalidSubTransactionId ||
				entry->acl_subid < mySubid)
				continue;
			entry->acl_subid = parentSubid;
			if (event == SUBXACT_EVENT_ABORT_SUB)
				entry->acl_stale = true;
		}
	}
	if (event != SUBXACT_EVENT_ABORT_SUB || sf_cache == NULL ||
		sf_nmodified == 0)
		return;

	hash_seq_init(&status, sf_cache);
	while ((entry = hash_seq_search(&status)) != NULL)
	{
		if (entry->modified_subid != InvalidSubTransactionId &&
			entry->modified_subid >= mySubid)
		{
			sf_cache_remove(entry);
			sf_subabort_discarded = true;
		}
	}
}

/* ----------------------------------------------------------------
 * Definition changes (add_partition, add_window, drop_window,
 * set_lateness, set_retention; api/manage.c)
 * ----------------------------------------------------------------
 */

/*
 * Run as the extension's owner, like every statement here; not prepared,
 * since definition changes are rare.  The windows are passed as parallel
 * arrays (NULL where a kind takes no parameter), as in PLAN_CREATE.  The
 * whole definition is written (partitions, windows, lateness, retention:
 * NULL keeps everything); the retention column is 0.2.0's, and only 0.2.0's
 * SQL calls the definition changes.
 */
#define SF_REDEFINE_SQL \
	"UPDATE streamforge.pipeline SET partitions = $2, " \
	"windows = (SELECT pg_catalog.array_agg(ROW(u.n, u.k, u.s, u.st, u.g)" \
	"::streamforge.window_def ORDER BY u.i) " \
	"FROM ROWS FROM (pg_catalog.unnest($3), pg_catalog.unnest($4), " \
	"pg_catalog.unnest($5), pg_catalog.unnest($6), pg_catalog.unnest($7)) " \
	"WITH ORDINALITY AS u(n, k, s, st, g, i)), " \
	"lateness = $8, snapshot = $9, snapshot_version = version, " \
	"offset_replays_base = $10, retention = $11 " \
	"WHERE id OPERATOR(pg_catalog.=) $1 RETURNING version"

/*
 * sf_persist_redefine
 *		Change the definition of the pipeline named name.
 *
 * Checks the admin privilege (42501) on the locked row first, then opens
 * the pipeline for writing and calls build(old, arg), which must return a
 * new pipeline (a child of CurTransactionContext) for the new definition,
 * without changing old.  The new definition and a snapshot of the new state
 * replace the row's, and the journal is emptied, all in the caller's
 * transaction; the cache follows at once, and other backends rebuild from
 * the new snapshot (its snapshot_version changed), stored in the form a
 * compaction stores (binary without retention).  Returns the new
 * pipeline, owned by the cache like sf_persist_open's result.
 *
 * A checkpoint taken before the change has the old definition, so
 * restoring it afterwards fails the equivalence check (SF003).
 */
SfPipeline *
sf_persist_redefine(const char *name, SfRedefineFn build, void *arg)
{
	SfAcl		acl;
	SfPipeline *old;
	SfPipeline *p;
	SfCacheEntry *entry;
	const SfPipelineDef *def;
	bytea	   *snap;
	Datum		values[11];
	char		nulls[11];
	Oid			types[11] = {INT8OID, TEXTARRAYOID, TEXTARRAYOID,
		TEXTARRAYOID, INT8ARRAYOID, INT8ARRAYOID, INT8ARRAYOID, INT8OID,
	BYTEAOID, INT8OID, INT8OID};
	Datum	   *parts;
	Datum	   *wd[5];
	bool	   *wn[3];
	int			dims[1];
	int			lbs[1] = {1};
	int			i;
	SfSavedUser saved;

	sf_check_lookup_name(name);
	sf_persist_get_acl(name, true, &acl);
	sf_acl_check(&acl, name, GetUserId(), SF_PRIV_ADMIN);

	old = sf_persist_open(name, true);
	p = build(old, arg);
	def = &p->def;

	/*
	 * The snapshot compaction writes (sf_snapshot_encode): binary without
	 * retention, so that a cold load after a definition change costs what
	 * it costs after a compaction, not a checkpoint's full decode (issue
	 * 21).  Every load decodes the snapshot: make sure this one loads now,
	 * so that a mistake can only fail this call, never commit a state that
	 * no backend can load.  (A checkpoint snapshot, with retention, is fully
	 * validated by that decode, SF003.)
	 */
	snap = sf_snapshot_encode(p);
	sf_pipeline_free(sf_snapshot_decode(CurrentMemoryContext, def,
										VARDATA_ANY(snap),
										VARSIZE_ANY_EXHDR(snap)));

	parts = palloc(def->npartitions * sizeof(Datum));
	for (i = 0; i < def->npartitions; i++)
		parts[i] = CStringGetTextDatum(def->partitions[i]);
	for (i = 0; i < 5; i++)
		wd[i] = palloc(def->nwindows * sizeof(Datum));
	for (i = 0; i < 3; i++)
		wn[i] = palloc(def->nwindows * sizeof(bool));
	for (i = 0; i < def->nwindows; i++)
	{
		const SfWindowDef *w = &def->windows[i];

		wd[0][i] = CStringGetTextDatum(w->name);
		wd[1][i] = CStringGetTextDatum(sf_window_kind_name(w->kind));
		wd[2][i] = Int64GetDatum(w->size);
		wd[3][i] = Int64GetDatum(w->step);
		wd[4][i] = Int64GetDatum(w->gap);
		wn[0][i] = w->kind == SF_WINDOW_SESSION;
		wn[1][i] = w->kind != SF_WINDOW_SLIDING;
		wn[2][i] = w->kind != SF_WINDOW_SESSION;
	}
	memset(nulls, ' ', sizeof(nulls));
	entry = sf_cache_lookup(name, false);
	if (entry == NULL || entry->pipeline != old || !entry->locked)
		elog(ERROR, "pipeline \"%s\" was not opened for writing", name);
	values[0] = Int64GetDatum(entry->id);
	values[1] = PointerGetDatum(construct_array(parts, def->npartitions,
												TEXTOID, -1, false,
												TYPALIGN_INT));
	dims[0] = def->nwindows;
	values[2] = PointerGetDatum(construct_array(wd[0], def->nwindows,
												TEXTOID, -1, false,
												TYPALIGN_INT));
	values[3] = PointerGetDatum(construct_array(wd[1], def->nwindows,
												TEXTOID, -1, false,
												TYPALIGN_INT));
	for (i = 0; i < 3; i++)
		values[4 + i] = PointerGetDatum(construct_md_array(wd[2 + i], wn[i],
														   1, dims, lbs,
														   INT8OID, 8,
														   FLOAT8PASSBYVAL,
														   TYPALIGN_DOUBLE));
	values[7] = Int64GetDatum(def->lateness);
	values[8] = PointerGetDatum(snap);
	values[9] = Int64GetDatum(p->offset_replays);
	values[10] = Int64GetDatum(def->retention);
	if (!def->has_retention)
		nulls[10] = 'n';

	sf_become_owner(&saved);
	SPI_connect();
	if (SPI_execute_with_args(SF_REDEFINE_SQL, 11, types, values, nulls,
							  false, 0) != SPI_OK_UPDATE_RETURNING ||
		SPI_processed != 1)
		elog(ERROR, "pipeline \"%s\" vanished", name);
	values[0] = Int64GetDatum(entry->id);
	sf_exec(PLAN_JOURNAL_CLEAR, values, NULL, false, SPI_OK_DELETE);
	SPI_finish();
	sf_restore_user(&saved);

	/*
	 * The cache takes the new state over.  A new journal epoch: positions
	 * start again at 1, as in every backend that loads the new snapshot
	 * (see sf_cache_sync), and the snapshot holds what the transaction's
	 * buffered entries did.
	 */
	MemoryContextSetParent(p->cxt, sf_cache_cxt);
	entry->pipeline = p;
	sf_pipeline_free(old);
	entry->clean_valid = false;
	entry->snapshot_version = entry->version;
	entry->snapshot_len = VARSIZE_ANY_EXHDR(snap);
	entry->last_pos = 0;
	entry->journal_bytes = 0;
	entry->journal_pending = false;
	sf_pending_supersede(entry->id);
	sf_cache_account(entry);
	return p;
}
