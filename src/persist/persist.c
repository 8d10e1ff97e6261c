/*-------------------------------------------------------------------------
 *
 * persist.c
 *	  The entry points of persistence: pipelines stored in the extension's
 *	  tables and cached per backend (create, exists, drop, open, the
 *	  journal write of a call, restore, owner and grants), and the
 *	  storage settings.  Definition changes are stored by redefine.c.
 *
 * Callers: api/ (through persist/persist.h).  Every function runs in the
 * caller's transaction, switches to the extension's owner for its
 * statements (acl.c) and back, and leaves no SPI connection open.
 *
 * Storage.  streamforge.pipeline holds one row per pipeline: its definition,
 * a version, and a snapshot with the version it was taken in: the bytes of
 * sf_snapshot_encode (codec/snapshot.c: the binary form without retention,
 * the canonical checkpoint with it), NULL for the empty initial state.
 * Compaction, restore and definition changes all write it that way.
 * streamforge.journal holds the write calls since the snapshot, with their
 * inputs (codec/journal.c), at increasing positions: one row per call, or
 * per run of a transaction's consecutive top-level calls (pending.c).  The
 * persisted state is the snapshot followed by the replay of the journal
 * rows, in pos order.  The engine is
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
 *	   caller without it), takes the pipeline's claim (claim_row: the
 *	   call-time lock of design 8.1, which waits only upward in the lock
 *	   order and raises 55P03 rather than wait downward), then runs
 *	   UPDATE ... SET version = version + 1 on its row, which takes the row
 *	   lock without waiting (and checks the grants the locked row holds
 *	   again): write calls on one pipeline serialize until the holder's
 *	   transaction ends, calls on other pipelines never wait.
 *	   Under READ COMMITTED a waiter then gets the latest committed row;
 *	   under REPEATABLE READ and SERIALIZABLE it gets a serialization failure
 *	   (40001), never stale state.  The cached state is brought up to the
 *	   latest commit (reused, caught up from the journal, or rebuilt from
 *	   snapshot + journal).  Later write calls of the transaction find the
 *	   entry locked and run no query at all: while the lock is held nobody
 *	   else can change the pipeline, so the cache is the truth.
 *	2. The entry is marked modified in the current subtransaction and the
 *	   pipeline is returned; the SQL glue runs the engine operation on it.
 *	3. sf_persist_journal_*() has codec/journal.c encode the call's inputs
 *	   and write_journal() stores them at the next position
 *	   (buffered until commit for a call at the transaction's top level,
 *	   see pending.c), or, when the journal since the snapshot would
 *	   exceed max(streamforge.compaction_threshold, 4 x snapshot size),
 *	   replaces the snapshot by the current state and
 *	   deletes the journal (amortized cost linear in the work done), unless
 *	   a background snapshot covers all but a small part of it (the
 *	   background worker truncates the journal instead, coldload.c; a
 *	   threshold of 0 still compacts at every call).
 * State is flushed to the tables at phase 3 of every call, inside the
 * caller's transaction: COMMIT makes it durable with the rest of the
 * transaction, and a commit costs what the calls delivered, not what the
 * pipeline holds.
 *
 * Read calls run SELECT on the row and bring the cache to the row's version
 * with the journal rows visible in the same snapshot, taking no lock.
 *
 * The cache (cache.c) holds each pipeline's state as of a row version;
 * its invariants and memory rules are in cache.c's header.  The buffered
 * journal of top-level calls is pending.c's, and every statement on the
 * tables is catalog.c's.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/persist.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"

#include "codec/codec.h"
#include "engine/engine.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

/* streamforge.compaction_threshold: sf_compaction_threshold (catalog.c) */
#define compaction_threshold sf_compaction_threshold

/* ... or this many times the snapshot's size, whichever is larger */
#define SF_COMPACTION_FACTOR	4

/* the journal a pipeline with retention may always keep (bytes) */
#define SF_RETENTION_COMPACTION_FLOOR	(1024 * 1024)

/*
 * A pipeline found missing: it may have been dropped behind our back, so
 * its cache entry is of no use any more.  Raises 42704 with the hint.
 */
static pg_attribute_noreturn() void
forget_unknown_pipeline(const char *name)
{
	sf_cache_forget(name);
	sf_unknown_pipeline(name);
}

/*
 * Check user's privilege on the pipeline named by *arg against its row as
 * the caller's snapshot sees it, without a lock, before any statement that
 * changes something runs as the owner: a caller without the privilege
 * never makes the extension's owner do more than read the row.  The
 * statement that then locks the row checks the grants it returns again
 * (they may have changed meanwhile).  Caller runs as the owner, in SPI.
 * Returns the pipeline's id.
 */
static int64
check_acl_unlocked(const char *name, Datum *arg, Oid user,
				   SfPrivilege required)
{
	SfAcl		acl;
	bool		isnull;

	sf_exec(PLAN_ACL_GET, arg, NULL, false, SPI_OK_SELECT);
	if (SPI_processed != 1)
		forget_unknown_pipeline(name);
	sf_read_acl(&acl, SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1,
				CurrentMemoryContext);
	sf_acl_check(&acl, name, user, required);
	return sf_getint64(5, &isnull);
}

/*
 * The claim of serial pipeline name (id id): the call-time lock under
 * which its row lock is taken (design 8.1, lane -1), so that the row lock
 * itself is never waited for, and a wait that could close a cycle is a
 * 55P03 instead (sf_claim_lock, locks.c).  Taken by every statement
 * that locks the row: the write open, drop_pipeline, restore, and the ACL
 * calls and definition changes (sf_persist_get_acl with for_update).
 */
static inline void
claim_row(const char *name, int64 id)
{
	sf_claim_lock(name, id, -1, NULL);
}

/* ----------------------------------------------------------------
 * Entry points
 * ----------------------------------------------------------------
 */

/*
 * Register the transaction callbacks and, with define_gucs, the settings.
 * Called from _PG_init; without define_gucs (another streamforge library
 * defined them, module.c) the variables keep their boot values.
 */
void
sf_persist_init(bool define_gucs)
{
	RegisterXactCallback(sf_xact_callback, NULL);
	RegisterSubXactCallback(sf_subxact_callback, NULL);
	/* the write calls' notifications (notify.c, issue 38) */
	RegisterXactCallback(sf_notify_xact_callback, NULL);
	RegisterSubXactCallback(sf_notify_subxact_callback, NULL);
	/* everything done at PRE_COMMIT, in its order (precommit.c, issue 46) */
	RegisterXactCallback(sf_precommit_callback, NULL);
	/* parallel pipelines' transactions end (parallel.c, issue 46) */
	RegisterXactCallback(sf_par_xact_callback, NULL);
	RegisterSubXactCallback(sf_par_subxact_callback, NULL);
	if (!define_gucs)
		return;
	DefineCustomIntVariable("streamforge.compaction_threshold",
							"Journal size above which a pipeline's state is compacted into a new snapshot.",
							"The journal since the last snapshot is compacted once it exceeds the larger of this and four times the snapshot's size; -1 disables compaction.",
							&compaction_threshold,
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
}

/*
 * Store a new, empty pipeline.  def must be validated and normalized.
 * Raises 42710 if a pipeline of that name exists (or is being created by a
 * concurrent transaction that then commits).
 */
void
sf_persist_create(const SfPipelineDef *def)
{
	Datum		values[3];
	SfSavedUser saved;

	sf_persist_check_writable(def->name);
	values[0] = CStringGetTextDatum(def->name);
	values[1] = sf_definition_text(def);
	values[2] = ObjectIdGetDatum(GetUserId());
	sf_become_owner(&saved);
	SPI_connect();
	sf_exec(PLAN_CREATE, values, NULL, false, SPI_OK_INSERT_RETURNING);
	if (SPI_processed != 1)
		ereport(ERROR,
				errcode(ERRCODE_DUPLICATE_OBJECT),
				errmsg("pipeline \"%s\" already exists", def->name));
	SPI_finish();
	sf_restore_user(&saved);
	/* its lanes (parallel.c, issue 46) */
	if (def->writers == SF_WRITERS_PARALLEL)
		sf_persist_parallel_create(def);
}

/*
 * The id of the pipeline named name (in the caller's snapshot), whoever may
 * use it, or false if there is none.
 */
bool
sf_persist_find(const char *name, int64 *id)
{
	Datum		arg = CStringGetTextDatum(name);
	SfSavedUser saved;
	bool		exists;

	sf_become_owner(&saved);
	SPI_connect();
	sf_exec(PLAN_EXISTS, &arg, NULL, true, SPI_OK_SELECT);
	exists = SPI_processed > 0;
	if (exists)
	{
		bool		isnull;

		*id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
										  SPI_tuptable->tupdesc, 1, &isnull));
	}
	SPI_finish();
	sf_restore_user(&saved);
	return exists;
}

/*
 * Raise 42710 if a pipeline named name exists (in the caller's snapshot),
 * whoever may use it: the check of a create.  A parallel pipeline this
 * transaction dropped still holds its name until the transaction commits
 * (its drop acts at pre-commit, exclusive.c), so creating one of that name
 * in the same transaction is 0A000, with the way out in the hint, rather
 * than a puzzling 42710.
 */
void
sf_persist_check_new(const char *name)
{
	int64		id;

	if (sf_par_exclusive_drop_pending(name))
		ereport(ERROR,
				errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				errmsg("cannot create pipeline \"%s\" in the transaction that dropped it",
					   name),
				errdetail("Dropping a parallel pipeline takes effect when its transaction commits."),
				errhint("Drop it in a transaction of its own, then create it."));
	if (sf_persist_find(name, &id))
		ereport(ERROR,
				errcode(ERRCODE_DUPLICATE_OBJECT),
				errmsg("pipeline \"%s\" already exists", name));
}

/*
 * Delete a pipeline and its journal.  Raises 42704 if it does not exist,
 * 42501 unless the caller has the admin privilege on it (the error undoes
 * the delete).  The cache entry goes too; should the drop roll back, the
 * next call simply rebuilds it.  Returns true; false for a parallel
 * pipeline, whose row and outputs are deleted at commit (exclusive.c):
 * the caller's sf_sink_drop is for the true case.
 */
bool
sf_persist_drop(const char *name)
{
	Datum		arg;
	SfCacheEntry *entry;
	SfSavedUser saved;
	SfAcl		acl;
	bool		isnull;
	Datum		id;

	sf_check_lookup_name(name);
	/* a parallel pipeline's: every lane claimed, deleted at commit */
	if (sf_par_exclusive_drop(name))
		return false;			/* exclusive.c (issue 46) */
	sf_become_owner(&saved);
	SPI_connect();
	arg = CStringGetTextDatum(name);
	claim_row(name, check_acl_unlocked(name, &arg, saved.userid,
									   SF_PRIV_ADMIN));
	sf_persist_check_writable(name);
	sf_exec(PLAN_DROP, &arg, NULL, false, SPI_OK_DELETE_RETURNING);
	if (SPI_processed != 1)
		forget_unknown_pipeline(name);
	sf_read_acl(&acl, SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2,
				CurrentMemoryContext);
	sf_acl_check(&acl, name, saved.userid, SF_PRIV_ADMIN);
	/* buffered entries must not be stored for a deleted pipeline */
	id = Int64GetDatum(sf_getint64(1, &isnull));
	sf_pending_supersede(DatumGetInt64(id));
	/* and the snapshots definition changes stored beside its row */
	sf_exec(PLAN_STORED_DROP, &id, NULL, false, SPI_OK_DELETE);
	SPI_finish();
	sf_restore_user(&saved);

	entry = sf_cache_lookup(name, false);
	if (entry != NULL)
		sf_cache_discard(entry);
	/* a parallel pipeline's transaction has nothing left to commit */
	sf_par_dropped(name);
	return true;
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
	int64		current_version = 0;
	SfPrivilege required = for_write ? SF_PRIV_INGEST : SF_PRIV_READ;
	MemoryContext callercxt = CurrentMemoryContext;
	SfSavedUser saved;

	sf_check_lookup_name(name);

	/*
	 * This transaction holds the lock: nobody else can have changed the
	 * pipeline or its privileges, so the cached copy is the truth.
	 */
	entry = sf_cache_find(name);	/* per-row calls: no hashing */
	if (for_write && entry != NULL && entry->locked &&
		entry->pipeline != NULL && !entry->pipeline->busy)
	{
		if (entry->acl_stale)
		{
			/* a grant, revoke or set_owner was rolled back to a savepoint */
			SfAcl		acl;

			sf_persist_get_acl(name, false, &acl);
			sf_cache_copy_acl(entry, &acl);
			entry->acl_stale = false;
		}
		sf_acl_check(&entry->acl, name, GetUserId(), required);
		sf_persist_check_writable(name);
		sf_cache_begin_write(entry);
		/* nothing but the state refers to its keys between calls */
		sf_keys_collect(entry->pipeline);
		return entry->pipeline;
	}

	/*
	 * A parallel pipeline (issue 46) is parallel.c's; asked of the row only
	 * when this backend holds no serial state of the pipeline
	 */
	if (entry == NULL || entry->pipeline == NULL)
	{
		SfPipeline *p = sf_par_open(name, for_write);

		if (p != NULL)
			return p;
	}

	sf_become_owner(&saved);
	SPI_connect();
	arg = CStringGetTextDatum(name);

	if (for_write)
	{
		/* the privilege first: nothing runs as the owner for a stranger */
		claim_row(name, check_acl_unlocked(name, &arg, saved.userid,
										   required));
		sf_persist_check_writable(name);
		sf_exec(PLAN_OPEN_WRITE, &arg, NULL, false, SPI_OK_UPDATE_RETURNING);
		if (SPI_processed != 1)
			forget_unknown_pipeline(name);
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
			forget_unknown_pipeline(name);
		sf_read_row(&row, true, callercxt);
		sf_acl_check(&row.acl, name, saved.userid, required);
		current_version = row.version;
	}

	entry = sf_cache_lookup(name, true);
	sf_cache_sync(entry, name, &row, current_version);
	sf_cache_copy_acl(entry, &row.acl);
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

		sf_cache_begin_write(entry);
		entry->locked = true;

		/*
		 * The first write of this transaction found the committed state
		 * (we hold the row lock and bumped a committed version), unless a
		 * savepoint rollback made us reload state of our own.
		 */
		if (first && !sf_cache_subabort_discarded() && entry->pipeline != NULL)
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
 * for one snapshot (54000, or out of memory): 1 GB, the binary form's
 * bound (sf_snapshot_encode; until 0.4.0 a pipeline with retention or
 * measures stored a checkpoint document, bounded by
 * streamforge.max_checkpoint_size).  The encoding runs
 * in a subtransaction, so that such a failure costs this call nothing: the
 * caller journals the call instead, and the pipeline stays usable (its
 * checkpoint() still fails, with the error).  Any other error propagates.
 * Reads no table: the caller need not be connected to SPI.
 */
static bytea *
try_snapshot(SfPipeline *p)
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
				errhint("The call is kept in the journal instead; lower the state (streamforge.max_live_buckets, advance, a retention) to allow compaction."));
		FreeErrorData(edata);
		snap = NULL;
	}
	PG_END_TRY();
	return snap;
}

/*
 * The journal bytes since the snapshot above which entry's pipeline p is
 * compacted; -1: never.
 */
static inline int64
compaction_limit(const SfCacheEntry *entry, const SfPipeline *p)
{
	int64		limit;

	/*
	 * Compaction re-encodes the whole state, so it must stay rare: replaying
	 * the journal costs about what ingesting did, so a journal a few times
	 * the snapshot's size loads about as fast as the snapshot decodes.
	 */
	limit = compaction_threshold < 0 ? -1 :
		Max((int64) compaction_threshold * 1024,
			SF_COMPACTION_FACTOR * entry->snapshot_len);

	/*
	 * With a retention the snapshot stays as small as what the horizon
	 * covers, and so must the journal, or a cold load would replay up to
	 * the threshold's worth of history (docs/semantics.md, Retention: load time depends on
	 * what is remembered).
	 */
	if (limit >= 0 && p->def.has_retention)
		limit = Max(Min((int64) compaction_threshold * 1024,
						SF_RETENTION_COMPACTION_FLOOR),
					SF_COMPACTION_FACTOR * entry->snapshot_len);
	return limit;
}

/*
 * Compaction: snap, the current state of entry's pipeline p, replaces the
 * stored snapshot, and the journal is emptied.
 */
static void
store_snapshot(SfCacheEntry *entry, SfPipeline *p, bytea *snap)
{
	Datum		values[3];
	Datum		arg = Int64GetDatum(entry->id);
	SfSavedUser saved;

	sf_become_owner(&saved);
	SPI_connect();
	values[0] = Int64GetDatum(entry->id);
	values[1] = PointerGetDatum(snap);
	values[2] = Int64GetDatum(p->offset_replays);
	sf_exec(PLAN_SNAPSHOT_PUT, values, NULL, false,
			SPI_OK_UPDATE_RETURNING);
	if (SPI_processed != 1)
		elog(ERROR, "streamforge: pipeline \"%s\" vanished", p->def.name);
	sf_exec(PLAN_JOURNAL_CLEAR, &arg, NULL, false, SPI_OK_DELETE);
	entry->snapshot_version = entry->version;
	entry->snapshot_len = VARSIZE_ANY_EXHDR(snap);
	/* a new journal epoch: its positions start again (see sf_cache_sync) */
	entry->last_pos = 0;
	entry->journal_bytes = 0;
	sf_compact_note_snapshot(entry, p, entry->snapshot_len);
	entry->compact_after = 0;
	/* the snapshot holds what the buffered entries did */
	sf_pending_supersede(entry->id);
	SPI_finish();
	sf_restore_user(&saved);
}

/*
 * Store entry as one journal row at the pipeline's next position: buf holds
 * it as the journal encoders leave it (codec.h), and becomes the row's bytea
 * in place.  Caller must be connected to SPI as the owner.
 */
static pg_noinline void
store_entry(SfCacheEntry *entry, StringInfo buf)
{
	Datum		values[3];

	SET_VARSIZE(buf->data, buf->len);
	values[0] = Int64GetDatum(entry->id);
	values[1] = Int64GetDatum(entry->last_pos + 1);
	values[2] = PointerGetDatum(buf->data);
	sf_exec(PLAN_JOURNAL_PUT, values, NULL, false, SPI_OK_INSERT);
	entry->last_pos++;
	entry->journal_bytes += buf->len - VARHDRSZ;
}

/*
 * A top-level entry that alone fills the buffer (an ingest_batch of a few
 * hundred deliveries or more): if it would start a run of its own, store it
 * directly, after the runs already buffered, and return true.  The rows are
 * those the buffer would have written at once (a run of one entry is stored
 * as that entry, sf_journal_sequence), without copying the entry into the
 * buffer and again into a bytea (issue 23: two copies of a 470 kB entry
 * per batch).  Out of line: per-row calls never get here.
 */
static pg_noinline bool
store_large_entry(SfCacheEntry *entry, StringInfo buf)
{
	SfPending  *pend = sf_pending_lookup(entry->id, false);
	SfSavedUser saved;

	if (pend != NULL && pend->tail != NULL &&
		pend->tail->superseded == InvalidSubTransactionId &&
		pend->tail->last_pos == entry->last_pos)
		return false;			/* it continues a buffered run */
	sf_become_owner(&saved);
	SPI_connect();
	if (pend != NULL && pend->runs != NULL)
		sf_pending_write(pend);
	store_entry(entry, buf);
	SPI_finish();
	sf_restore_user(&saved);
	return true;
}

/*
 * A call at the transaction's top level: its entry is buffered, and stored
 * with the others before commit, or now if the buffer has grown large (a
 * large entry directly: store_large_entry).
 */
static inline void
buffer_entry(SfCacheEntry *entry, StringInfo buf)
{
	SfPending  *pend;
	SfSavedUser saved;

	if (unlikely(buf->len - VARHDRSZ >= SF_PENDING_FLUSH) &&
		store_large_entry(entry, buf))
		return;
	pend = sf_pending_add(entry, buf->data + VARHDRSZ, buf->len - VARHDRSZ);
	if (pend->bytes >= SF_PENDING_FLUSH)
	{
		sf_become_owner(&saved);
		SPI_connect();
		sf_pending_write(pend);
		SPI_finish();
		sf_restore_user(&saved);
	}
}

/*
 * A call inside a subtransaction: its entry is stored at once, so that the
 * subtransaction's abort removes it
 */
static void
insert_entry(SfCacheEntry *entry, StringInfo buf)
{
	SfSavedUser saved;

	sf_become_owner(&saved);
	SPI_connect();
	store_entry(entry, buf);
	SPI_finish();
	sf_restore_user(&saved);
}

/*
 * Store the journal entry of the write call p was opened for, or compact.
 * buf holds the entry as the journal encoders leave it (codec.h).  Called
 * by sf_persist_journal_* below once the engine operation succeeded.
 */
static void
write_journal(SfPipeline *p, StringInfo buf)
{
	SfCacheEntry *entry;
	int64		limit;
	bytea	   *snap = NULL;
	Size		len = buf->len - VARHDRSZ;

	entry = sf_cache_find_pipeline(p);

	if (entry == NULL || entry->pipeline != p || !entry->locked ||
		!entry->journal_pending)
		elog(ERROR, "streamforge: pipeline \"%s\" was not opened for writing",
			 p->def.name);

	limit = compaction_limit(entry, p);
	if (limit >= 0 && entry->journal_bytes + (int64) len > limit &&
		entry->journal_bytes + (int64) len > entry->compact_after &&
		(compaction_threshold == 0 ||
		 !sf_compact_side_covers(entry, entry->journal_bytes + (int64) len,
								 limit)) &&
		(snap = try_snapshot(p)) == NULL)
	{
		/* too large: journal, and retry once the journal has doubled */
		entry->compact_after = 2 * (entry->journal_bytes + (int64) len);
	}
	if (snap != NULL)
		store_snapshot(entry, p, snap);
	else if (GetCurrentTransactionNestLevel() == 1)
		buffer_entry(entry, buf);
	else
		insert_entry(entry, buf);
	entry->journal_pending = false;
	sf_cache_account(entry);
	/* a cold load past its budget: a background snapshot (compact.c) */
	sf_compact_after_write(entry, p);

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
 * the engine must have accepted the operation.  For an ingest, h[i] is what
 * sf_engine_ingest_hashed derived from d[i] (engine.h).
 */
void
sf_persist_journal_ingest(SfPipeline *p, const SfDelivery *d,
						  const SfDeliveryHash *h, int n)
{
	StringInfoData buf;

	sf_journal_encode_ingest(&buf, p, d, h, n);
	write_journal(p, &buf);
	pfree(buf.data);
	sf_activity_note_deliveries(p, h, n);	/* activity.c */
}

/* The same for measures deliveries: measures[i * nmeasures ...] is d[i]'s */
void
sf_persist_journal_ingest_measures(SfPipeline *p, const SfDelivery *d,
								   const SfDeliveryHash *h, int n,
								   const int64 *measures)
{
	StringInfoData buf;

	sf_journal_encode_ingest_measures(&buf, p, d, h, n, measures);
	write_journal(p, &buf);
	pfree(buf.data);
}

void
sf_persist_journal_advance(SfPipeline *p, const char *partition,
						   int64 progress)
{
	StringInfoData buf;

	sf_journal_encode_advance(&buf, p, partition, progress);
	write_journal(p, &buf);
	pfree(buf.data);
	sf_activity_note(p->def.name, partition, true);	/* activity.c */
}

void
sf_persist_journal_mark_idle(SfPipeline *p, const char *partition)
{
	StringInfoData buf;

	sf_journal_encode_mark_idle(&buf, p, partition);
	write_journal(p, &buf);
	pfree(buf.data);
}

/*
 * Replace a pipeline's state by a checkpoint.  Validation (and SF003) is
 * sf_checkpoint_restore's; the stored snapshot is the decoded state as
 * sf_snapshot_encode writes it (binary without retention, the canonical
 * checkpoint with it), and the journal is emptied.  Needs the admin
 * privilege (42501).  Returns true; false for a parallel pipeline, whose
 * restore is installed at commit and resynchronizes its outputs then
 * (exclusive.c): the caller's sf_sink_restore is for the true case.
 */
bool
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
	entry = sf_cache_lookup(name, false);
	if ((entry == NULL || entry->pipeline == NULL) &&
		sf_persist_parallel_restore(name, data, len))
		return false;			/* exclusive.c (issue 46) */
	sf_become_owner(&saved);
	SPI_connect();
	arg = CStringGetTextDatum(name);
	claim_row(name, check_acl_unlocked(name, &arg, saved.userid,
									   SF_PRIV_ADMIN));
	sf_persist_check_writable(name);
	sf_check_checkpoint_size(data, len);
	sf_exec(PLAN_OPEN_WRITE, &arg, NULL, false, SPI_OK_UPDATE_RETURNING);
	if (SPI_processed != 1)
		forget_unknown_pipeline(name);
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
	sf_cache_adopt(entry, p);
	entry->relid = row.relid;
	entry->id = row.id;
	entry->version = row.version;
	entry->snapshot_version = row.version;
	entry->snapshot_len = snap_len;
	entry->last_pos = 0;
	entry->journal_bytes = 0;
	sf_compact_note_snapshot(entry, p, snap_len);
	sf_cache_copy_acl(entry, &row.acl);
	sf_mark_modified(entry, GetCurrentSubTransactionId());
	entry->locked = true;
	sf_cache_account(entry);
	sf_cache_touch(entry);
	sf_cache_enforce(entry);
	return true;
}

/*
 * The owner and grants of the pipeline named name, in the caller's memory
 * context; for_update locks its row first (a parallel pipeline's: its
 * lane -1 claim, and the grants this transaction set are returned:
 * exclusive.c).  Raises 42704 if it does not exist.  Checks no privilege:
 * that is the caller's business.
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
	/* a parallel pipeline's: no row lock, the grants written at commit */
	if (sf_par_exclusive_acl(name, for_update, acl))
		return;					/* exclusive.c (issue 46) */
	sf_become_owner(&saved);
	SPI_connect();
	arg = CStringGetTextDatum(name);
	if (for_update)
	{
		/* the claim first (design 8.1): the id, without a lock */
		bool		isnull;

		sf_exec(PLAN_ACL_GET, &arg, NULL, false, SPI_OK_SELECT);
		if (SPI_processed != 1)
			forget_unknown_pipeline(name);
		claim_row(name, sf_getint64(5, &isnull));
	}
	sf_exec(for_update ? PLAN_ACL_LOCK : PLAN_ACL_GET, &arg, NULL,
			!for_update, SPI_OK_SELECT);
	if (SPI_processed != 1)
		forget_unknown_pipeline(name);
	sf_read_acl(acl, SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1,
				callercxt);
	SPI_finish();
	sf_restore_user(&saved);
}

/*
 * Store acl as the owner and grants of the pipeline named name.  Caller
 * must have locked the row (sf_persist_get_acl with for_update) in this
 * transaction and checked the privileges.  This backend's cached copy
 * follows at once; other backends read the row again before they use the
 * pipeline (a writer holding the lock cannot exist meanwhile).  A
 * parallel pipeline's are written at commit under its head lock
 * (exclusive.c).
 */
void
sf_persist_set_acl(const char *name, const SfAcl *acl)
{
	SfSavedUser saved;
	Datum		values[5];

	if (sf_par_exclusive_set_acl(name, acl))
		return;					/* at commit (exclusive.c, issue 46) */
	values[0] = CStringGetTextDatum(name);
	values[1] = ObjectIdGetDatum(acl->owner);
	values[2] = sf_acl_array(acl, SF_PRIV_READ);
	values[3] = sf_acl_array(acl, SF_PRIV_INGEST);
	values[4] = sf_acl_array(acl, SF_PRIV_ADMIN);
	sf_become_owner(&saved);
	SPI_connect();
	sf_exec(PLAN_ACL_PUT, values, NULL, false, SPI_OK_UPDATE);
	if (SPI_processed != 1)
		forget_unknown_pipeline(name);
	SPI_finish();
	sf_restore_user(&saved);

	sf_cache_set_acl(name, acl);
}
