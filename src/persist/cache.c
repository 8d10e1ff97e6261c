/*-------------------------------------------------------------------------
 *
 * cache.c
 *	  The per-backend cache of pipelines: entries, their eviction (LRU,
 *	  streamforge.cache_size), bringing an entry up to a row version
 *	  (catch-up from the journal, or rebuild from snapshot + journal), and
 *	  the transaction callbacks that keep or discard entries.
 *
 * Callers: persist.c (the entry points), which is the only file that hands
 * a cached pipeline out.  Everything here runs in the backend's current
 * transaction; the functions that read tables need the caller connected
 * to SPI as the extension's owner with a snapshot pushed, and say so.
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
 * Memory.  CacheMemoryContext owns the hash table (cache_cxt); each
 * cached pipeline owns its context (SfPipeline->cxt), a child of
 * cache_cxt.  A pipeline is built under CurTransactionContext and moved
 * under cache_cxt only once complete, so an error while building leaks
 * nothing.  Query results live in SPI contexts and die with SPI_finish().
 *
 * The entry the latest write open returned (the write hint) and whether
 * the transaction discarded its own changes (subabort_discarded) are
 * private to this file; persist.c reaches them through the small
 * functions below.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/cache.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "executor/spi.h"
#include "lib/ilist.h"
#include "miscadmin.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "codec/codec.h"
#include "engine/engine.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

/* The journal is fetched this many rows at a time */
#define SF_JOURNAL_FETCH	256

/* streamforge.cache_size, in kB; -1: no limit */
int			sf_cache_size = 128 * 1024;

static HTAB *cache_hash = NULL;
static MemoryContext cache_cxt = NULL;

/*
 * The entry the latest sf_persist_open() for writing returned, so that the
 * journal write of the same call (write_journal) needs no second
 * lookup by name.  Only a hint: the user checks that its pipeline is the
 * one being journaled, and cache_remove() clears it before the entry's
 * slot can be reused.  Read by sf_cache_find and sf_cache_find_pipeline,
 * inline in persist_int.h.
 */
SfCacheEntry *sf_cache_write_hint = NULL;
static int	nmodified = 0;	/* entries with modified_subid set */

/* Every entry, least recently used last, and the bytes they hold */
static dlist_head cache_lru = DLIST_STATIC_INIT(cache_lru);
static int64 cache_bytes = 0;

/*
 * The current transaction discarded an entry holding its own changes (a
 * subtransaction abort, a drop): a pipeline loaded afterwards may hold this
 * transaction's own uncommitted work, so no clean baseline is taken until
 * the transaction ends.
 */
static bool subabort_discarded = false;

/* Some entry's acl_subid is set (sf_persist_set_acl in this transaction) */
static bool acl_changed = false;

SfCacheEntry *
sf_cache_lookup(const char *name, bool create)
{
	SfCacheEntry *entry;
	bool		found;

	if (cache_hash == NULL)
	{
		HASHCTL		ctl;

		if (!create)
			return NULL;
		cache_cxt = AllocSetContextCreate(CacheMemoryContext,
											 "streamforge pipeline cache",
											 ALLOCSET_DEFAULT_SIZES);
		ctl.keysize = SF_NAME_MAX + 1;
		ctl.entrysize = sizeof(SfCacheEntry);
		ctl.hcxt = cache_cxt;
		cache_hash = hash_create("streamforge pipelines", 16, &ctl,
							   HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	}
	entry = hash_search(cache_hash, name, create ? HASH_ENTER : HASH_FIND,
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
		entry->load_pos = 0;
		entry->load_len = 0;
		entry->load_journal_bytes = 0;
		entry->load_deliveries = 0;
		entry->load_seq = 0;
		entry->load_identities = 0;
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
		cache_bytes += entry->mem;
		dlist_push_head(&cache_lru, &entry->lru_node);
		entry->compact_after = 0;
	}
	return entry;
}

/* Charge the entry's current size to the cache */
void
sf_cache_account(SfCacheEntry *entry)
{
	int64		mem = sizeof(SfCacheEntry);

	if (entry->pipeline != NULL)
		mem += MemoryContextMemAllocated(entry->pipeline->cxt, true);
	cache_bytes += mem - entry->mem;
	entry->mem = mem;
}

/* The entry is in use: it goes to the front of the eviction order */
void
sf_cache_touch(SfCacheEntry *entry)
{
	dlist_move_head(&cache_lru, &entry->lru_node);
}

/* Forget an entry's state; the entry itself stays, invalid */
void
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
		nmodified--;
	entry->modified_subid = InvalidSubTransactionId;
	entry->clean_valid = false;
}

static void
cache_remove(SfCacheEntry *entry)
{
	sf_cache_invalidate(entry);
	if (entry->acl.grants != NULL)
		pfree(entry->acl.grants);
	cache_bytes -= entry->mem;
	dlist_delete(&entry->lru_node);
	if (sf_cache_write_hint == entry)
		sf_cache_write_hint = NULL;
	hash_search(cache_hash, entry->name, HASH_REMOVE, NULL);
}

/*
 * Remove an entry outside the transaction callbacks.  If it held changes of
 * the current transaction, a later load may find them in the tables, so no
 * clean baseline may be taken for the rest of the transaction.
 */
void
sf_cache_discard(SfCacheEntry *entry)
{
	if (entry->modified_subid != InvalidSubTransactionId)
		subabort_discarded = true;
	cache_remove(entry);
}

/* Drop the entry of name, if any: its pipeline does not exist (any more) */
void
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
void
sf_cache_enforce(SfCacheEntry *keep)
{
	int64		limit;
	dlist_node *cur;

	if (cache_hash == NULL || sf_cache_size < 0)
		return;
	limit = (int64) sf_cache_size * 1024;
	cur = dlist_is_empty(&cache_lru) ? NULL : dlist_tail_node(&cache_lru);
	while (cur != NULL && cache_bytes > limit)
	{
		SfCacheEntry *entry = dlist_container(SfCacheEntry, lru_node, cur);

		cur = dlist_has_prev(&cache_lru, cur) ? dlist_prev_node(&cache_lru, cur) : NULL;
		if (entry == keep || entry->modified_subid != InvalidSubTransactionId ||
			entry->locked || entry->journal_pending ||
			cur == NULL)		/* the most recently used */
			continue;
		cache_remove(entry);
	}
}

void
sf_mark_modified(SfCacheEntry *entry, SubTransactionId subid)
{
	if (entry->modified_subid == InvalidSubTransactionId)
		nmodified++;
	entry->modified_subid = subid;
	entry->clean_valid = false;
}

/*
 * entry is opened for a write call: it is marked modified in the current
 * subtransaction, expects the call's journal entry, goes to the front of
 * the eviction order and becomes the write hint.  One call for the
 * per-row path of sf_persist_open.
 */
void
sf_cache_begin_write(SfCacheEntry *entry)
{
	sf_mark_modified(entry, GetCurrentSubTransactionId());
	entry->journal_pending = true;
	sf_cache_touch(entry);
	sf_cache_write_hint = entry;
}

/*
 * Whether the current transaction discarded an entry that held its own
 * changes: then no clean baseline may be taken (see subabort_discarded).
 */
bool
sf_cache_subabort_discarded(void)
{
	return subabort_discarded;
}

/* The cache takes over p, complete, as entry's pipeline */
void
sf_cache_adopt(SfCacheEntry *entry, SfPipeline *p)
{
	MemoryContextSetParent(p->cxt, cache_cxt);
	entry->pipeline = p;
}

/* entry's owner and grants become a copy of acl */
void
sf_cache_copy_acl(SfCacheEntry *entry, const SfAcl *acl)
{
	sf_acl_copy(&entry->acl, acl, cache_cxt);
}

/*
 * The owner and grants of the pipeline named name were changed to acl in
 * the current subtransaction: the cached copy follows at once, and the
 * change is undone on the subtransaction's abort (sf_subxact_callback).
 */
void
sf_cache_set_acl(const char *name, const SfAcl *acl)
{
	SfCacheEntry *entry = sf_cache_lookup(name, false);

	if (entry != NULL)
	{
		sf_acl_copy(&entry->acl, acl, cache_cxt);
		/* subtransaction ids grow: the current one is the latest */
		entry->acl_subid = GetCurrentSubTransactionId();
		entry->acl_stale = false;
		acl_changed = true;
	}
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
replay_journal(SfPipeline *p, int64 id, int64 from, int64 *bytes,
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
 * Rebuild entry from the row: the latest snapshot, then the journal after
 * it.  The latest snapshot is the background snapshot of the row's journal
 * epoch at the highest position if there is one (compact.c, issue 39),
 * else the stored one.  Caller must be connected to SPI with a snapshot
 * pushed.
 */
static void
rebuild(SfCacheEntry *entry, const char *name, const SfRowInfo *row)
{
	SfPipelineDef def;
	SfPipeline *p;
	Datum		arg = Int64GetDatum(row->id);
	bool		isnull;
	Datum		snap;
	int64		bytes = 0;
	int64		from = 0;
	int64		offset_replays = row->offset_replays_base;
	int64		load_len = row->snapshot_len;
	int64		snapshot_len = row->snapshot_len;
	int64		last_pos;

	sf_cache_invalidate(entry);
	sf_load_def(name, row->id, &def);

	/*
	 * Dropped and created again as a parallel pipeline since this backend
	 * cached it: that is parallel.c's (issue 46), which the next call asks
	 * first once this entry is gone
	 */
	if (def.writers == SF_WRITERS_PARALLEL)
	{
		sf_cache_discard(entry);
		ereport(ERROR,
				errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				errmsg("pipeline \"%s\" was created again with writers => 'parallel'",
					   name),
				errhint("Retry the call."));
	}

	/* built under the transaction: an error cannot leak it */
	p = sf_side_snapshot_load(CurTransactionContext, &def, row->id,
							  row->snapshot_version, &from, &bytes,
							  &offset_replays, &load_len);
	if (p == NULL)
	{
		sf_exec(PLAN_SNAPSHOT_GET, &arg, NULL, true, SPI_OK_SELECT);
		if (SPI_processed != 1)
			elog(ERROR, "streamforge: pipeline \"%s\" vanished", name);
		snap = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1,
							 &isnull);
		if (isnull)
			p = sf_pipeline_create(CurTransactionContext, &def);
		else
		{
			bytea	   *b = DatumGetByteaPP(snap);

			/* the row's or, after a definition change, the stored one's */
			snapshot_len = load_len = VARSIZE_ANY_EXHDR(b);
			p = sf_snapshot_decode(CurTransactionContext, &def,
								   VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b));
		}
	}
	p->offset_replays = offset_replays;
	entry->last_pos = from;
	entry->journal_bytes = bytes;
	sf_compact_note_snapshot(entry, p, load_len);
	last_pos = replay_journal(p, row->id, from, &bytes,
							  sf_pending_lookup(row->id, false));

	/* complete: the cache takes it over */
	MemoryContextSetParent(p->cxt, cache_cxt);
	entry->pipeline = p;
	entry->relid = row->relid;
	entry->id = row->id;
	entry->snapshot_version = row->snapshot_version;
	entry->snapshot_len = snapshot_len;
	entry->last_pos = last_pos;
	entry->journal_bytes = bytes;
	entry->version = row->version;
	/* a load that replayed too much: the next one need not (compact.c) */
	sf_compact_after_write(entry, p);
}

/*
 * Make entry hold the state of the pipeline in row: the committed state at
 * row->version, or, if this transaction wrote it, its current state.
 * current_version is the version whose state that is: row->version, or
 * row->version - 1 when the caller has just bumped it.  Caller must be
 * connected to SPI with a snapshot pushed.
 */
void
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
	 * rows it lacks are those after it.  (Since issue 39 a background
	 * worker may also delete the rows a background snapshot covers; an
	 * entry behind that truncation is rebuilt, coldload.c.)
	 */
	if (same && entry->snapshot_version == row->snapshot_version &&
		entry->version < current_version &&
		!sf_side_truncated_past(row->id, row->snapshot_version,
								entry->last_pos))
	{
		int64		from = entry->last_pos;

		entry->version = -1;	/* invalid until caught up */
		/* nothing buffered: that needs the row lock, which nobody else had */
		Assert(sf_pending_lookup(row->id, false) == NULL ||
			   sf_pending_lookup(row->id, false)->runs == NULL);
		entry->last_pos = replay_journal(entry->pipeline, row->id, from,
											&entry->journal_bytes, NULL);
		entry->version = row->version;
		return;
	}
	rebuild(entry, name, row);
}

/* ----------------------------------------------------------------
 * Transaction callbacks
 * ----------------------------------------------------------------
 */

/*
 * Discard the entries that hold changes of the ending transaction (abort,
 * prepare), or make their changes permanent (commit).
 */
void
sf_xact_callback(XactEvent event, void *arg)
{
	HASH_SEQ_STATUS status;
	SfCacheEntry *entry;
	bool		discard;

	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			/* nothing: precommit.c runs the pre-commit work */
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
	subabort_discarded = false;
	sf_pending_reset();
	sf_compact_at_xact_end(!discard);	/* background snapshots (compact.c) */
	if (cache_hash != NULL && acl_changed)
	{
		/* subtransaction ids start again with the next transaction */
		hash_seq_init(&status, cache_hash);
		while ((entry = hash_seq_search(&status)) != NULL)
			entry->acl_subid = InvalidSubTransactionId;
	}
	acl_changed = false;
	if (cache_hash == NULL || nmodified == 0)
		return;

	hash_seq_init(&status, cache_hash);
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
			nmodified--;
		}
		else if (discard)
			cache_remove(entry);
		else
		{
			entry->modified_subid = InvalidSubTransactionId;
			entry->clean_valid = false;
			nmodified--;
			sf_cache_account(entry);
		}
	}
	Assert(nmodified == 0);

	/* what the transaction's calls added may exceed the limit now */
	sf_cache_enforce(NULL);
}

/*
 * On abort of a subtransaction (ROLLBACK TO SAVEPOINT, a PL/pgSQL exception
 * block), discard every entry modified in it or in its children: their
 * subtransaction ids are all >= mySubid.
 */
void
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
		 event == SUBXACT_EVENT_COMMIT_SUB) && cache_hash != NULL &&
		acl_changed)
	{
		hash_seq_init(&status, cache_hash);
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
	if (event != SUBXACT_EVENT_ABORT_SUB || cache_hash == NULL ||
		nmodified == 0)
		return;

	hash_seq_init(&status, cache_hash);
	while ((entry = hash_seq_search(&status)) != NULL)
	{
		if (entry->modified_subid != InvalidSubTransactionId &&
			entry->modified_subid >= mySubid)
		{
			cache_remove(entry);
			subabort_discarded = true;
		}
	}
}
