/*-------------------------------------------------------------------------
 *
 * redefine.c
 *	  Definition changes stored: the new definition and a snapshot of the
 *	  new state replace the pipeline's row, and the journal is emptied
 *	  (add_partition, add_window, drop_window, set_lateness,
 *	  set_retention, set_emit, and the locked rewrites of compact and the
 *	  progress settings).
 *
 * Building the new state is linear in the remembered events (a backfill
 * derives the buckets of a new window from every accepted event), and so
 * are the snapshot's encoding and its check.  With
 * streamforge.redefine_concurrently on (the default), the definition
 * changes of api/manage.c and api/emit.c do all of that before they take
 * the pipeline's row lock (issue 39, item 4): they build from the latest
 * committed state, read without a lock at version V, then take the lock;
 * if the committed version is still V, nobody wrote the pipeline
 * meanwhile (every transaction that changes a pipeline bumps its version,
 * and two committed states never share one, persist.c), so the state built
 * is exactly the one the change would build under the lock, from the same
 * state by the same deterministic code, and only the row's write happens
 * under the lock.  A writer that committed meanwhile makes it build again,
 * without the lock, from the state caught up from the journal; after
 * SF_REDEFINE_ATTEMPTS such builds, or if a writer slipped in between the
 * last check and the lock, the change builds under the lock, as it always
 * did.  The transaction's own writes to the pipeline (it holds the lock
 * already) also take the locked path.  docs/management.md, "The lock a
 * change holds".
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/redefine.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/guc.h"

#include "codec/codec.h"
#include "engine/engine.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

/* builds without the lock before a change builds under it */
#define SF_REDEFINE_ATTEMPTS	3

/*
 * A new snapshot built without the lock and larger than this is stored
 * beside the pipeline's row before the lock is taken (store_aside); a
 * smaller one is written into the row under the lock, as it always was
 * (a few milliseconds).
 */
#define SF_REDEFINE_INLINE_MAX	(256 * 1024)

/* streamforge.redefine_concurrently */
static bool redefine_concurrently = true;

/*
 * Define streamforge.redefine_concurrently.  Called from _PG_init.
 */
void
sf_redefine_init(void)
{
	DefineCustomBoolVariable("streamforge.redefine_concurrently",
							 "Builds the new state of a definition change before taking the pipeline's lock.",
							 "Off: the change builds it while holding the lock, so writers of the pipeline wait for the whole change, as in 0.3.0.",
							 &redefine_concurrently,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
}

/*
 * build(old, arg) and the snapshot of its result, checked to load
 * (sf_snapshot_encode): a mistake can only fail this call, never commit a
 * state that no backend can load.  A checkpoint snapshot, with retention,
 * is fully validated by that decode (SF003).
 */
static SfPipeline *
build_checked(SfPipeline *old, SfRedefineFn build, void *arg, bytea **snap)
{
	SfPipeline *p = build(old, arg);

	*snap = sf_snapshot_encode(p);
	sf_pipeline_free(sf_snapshot_decode(CurrentMemoryContext, &p->def,
										VARDATA_ANY(*snap),
										VARSIZE_ANY_EXHDR(*snap)));
	return p;
}

/* The committed state a build started from: the row and its version */
typedef struct BuiltFrom
{
	Oid			relid;
	int64		id;
	int64		version;
} BuiltFrom;

/*
 * The new state built from the latest committed state without the lock,
 * and the row and committed version it was built from (*from); NULL when
 * this transaction has written the pipeline already, or when writers kept
 * committing while it was built.  Checks the admin privilege (42501)
 * first, on the row as the caller's snapshot sees it.
 */
static SfPipeline *
build_unlocked(const char *name, SfRedefineFn build, void *arg,
			   BuiltFrom *from, bytea **snap)
{
	SfAcl		acl;
	SfPipeline *p = NULL;
	int			attempt;

	sf_persist_check_writable(name);
	sf_persist_get_acl(name, false, &acl);
	sf_acl_check(&acl, name, GetUserId(), SF_PRIV_ADMIN);

	for (attempt = 0;; attempt++)
	{
		SfPipeline *old = sf_persist_open(name, false);
		SfCacheEntry *entry = sf_cache_lookup(name, false);

		/* the state of our own transaction: only the lock protects it */
		if (entry == NULL || old == NULL || entry->locked ||
			entry->modified_subid != InvalidSubTransactionId)
			break;
		if (p != NULL && entry->version == from->version &&
			entry->id == from->id && entry->relid == from->relid)
			return p;			/* nobody committed while it was built */
		if (p != NULL)
		{
			sf_pipeline_free(p);
			pfree(*snap);
			p = NULL;
		}
		if (attempt == SF_REDEFINE_ATTEMPTS)
			break;
		from->relid = entry->relid;
		from->id = entry->id;
		from->version = entry->version;
		p = build_checked(old, build, arg, snap);
	}
	if (p != NULL)
	{
		sf_pipeline_free(p);
		pfree(*snap);
	}
	return NULL;
}

/*
 * Store snap, built without the lock from the committed state of pipeline
 * id at version version - 1, in streamforge.stored_snapshot for
 * snapshot_version version: the version the change's locked open will
 * bump the row to if nobody writes the pipeline meanwhile.  Deletes the
 * stale snapshots stored there first: those of earlier versions (the
 * row's may be one of them: this change replaces it).  Returns whether
 * the row was stored (not when another change stored one for the same
 * version, or the pipeline has gone).
 *
 * None of this takes the pipeline's row lock, so writers go on meanwhile;
 * it is what keeps the write of a multi-megabyte snapshot (its TOAST
 * chunks and their WAL: about 4 MB/s on the benchmark machine under load)
 * out of the time writers wait for the change (issue 39, item 4).  The
 * rows written belong to the change's transaction: an error or a crash
 * before its commit leaves nothing, and a stored snapshot that ends up
 * unused (a writer committed before the lock, or the change failed a
 * check under it) is deleted by the next definition change that stores
 * one, or with the pipeline.
 */
static bool
store_aside(int64 id, int64 version, bytea *snap)
{
	Datum		values[3];
	SfSavedUser saved;
	bool		stored;

	sf_become_owner(&saved);
	SPI_connect();
	values[0] = Int64GetDatum(id);
	values[1] = Int64GetDatum(version);
	values[2] = PointerGetDatum(snap);
	sf_exec(PLAN_STORED_PRUNE, values, NULL, false, SPI_OK_DELETE);
	sf_exec(PLAN_STORED_PUT, values, NULL, false, SPI_OK_INSERT);
	stored = SPI_processed == 1;
	SPI_finish();
	sf_restore_user(&saved);
	return stored;
}

/*
 * redefine
 *		Change the definition of the pipeline named name; concurrently: try
 *		to build the new state before taking the lock.
 *
 * Checks the admin privilege (42501) on the locked row, then opens the
 * pipeline for writing; unless a state built without the lock is still
 * the committed one, calls build(old, arg), which must return a new
 * pipeline (a child of CurTransactionContext) for the new definition,
 * without changing old.  build may be called more than once (and its
 * earlier results freed): each call must start from its arguments afresh.
 * The new definition and a snapshot of the new state replace the row's,
 * and the journal is emptied, all in the caller's transaction; the cache
 * follows at once, and other backends rebuild from the new snapshot (its
 * snapshot_version changed), stored in the form a compaction stores
 * (binary without retention, so that a cold load after a definition change
 * costs what it costs after a compaction, issue 21).  Returns the new
 * pipeline, owned by the cache like sf_persist_open's result.
 *
 * A checkpoint taken before the change has the old definition, so
 * restoring it afterwards fails the equivalence check (SF003).
 */
static SfPipeline *
redefine(const char *name, SfRedefineFn build, void *arg, bool concurrently)
{
	SfAcl		acl;
	SfPipeline *old;
	SfPipeline *p = NULL;
	SfCacheEntry *entry;
	const SfPipelineDef *def;
	bytea	   *snap = NULL;
	BuiltFrom	from = {0};
	bool		aside = false;
	Datum		values[4];
	char		nulls[4];
	SfSavedUser saved;

	sf_check_lookup_name(name);
	entry = sf_cache_lookup(name, false);
	if (entry == NULL || entry->pipeline == NULL)
	{
		/* a parallel pipeline (issue 46): redefine_par.c */
		p = sf_par_redefine(name, build, arg,
							concurrently && redefine_concurrently);
		if (p != NULL)
			return p;
	}
	if (concurrently && redefine_concurrently)
	{
		p = build_unlocked(name, build, arg, &from, &snap);
		if (p != NULL && VARSIZE_ANY_EXHDR(snap) > SF_REDEFINE_INLINE_MAX)
			aside = store_aside(from.id, from.version + 1, snap);
	}

	sf_persist_get_acl(name, true, &acl);
	sf_acl_check(&acl, name, GetUserId(), SF_PRIV_ADMIN);
	old = sf_persist_open(name, true);
	entry = sf_cache_lookup(name, false);
	if (entry == NULL || entry->pipeline != old || !entry->locked)
		elog(ERROR, "streamforge: pipeline \"%s\" was not opened for writing", name);

	/*
	 * The locked open bumped the committed version: from.version + 1 in the
	 * same row means that the committed state is the one p was built from
	 * (a pipeline dropped and created again has another id).
	 */
	if (p != NULL && (entry->version != from.version + 1 ||
					  entry->id != from.id || entry->relid != from.relid))
	{
		sf_pipeline_free(p);
		pfree(snap);
		p = NULL;
		aside = false;
	}
	if (p == NULL)
		p = build_checked(old, build, arg, &snap);
	def = &p->def;

	memset(nulls, ' ', sizeof(nulls));
	values[0] = Int64GetDatum(entry->id);
	values[1] = sf_definition_text(def);
	values[2] = PointerGetDatum(snap);
	if (aside)
		nulls[2] = 'n';			/* the one stored for this version */
	values[3] = Int64GetDatum(p->offset_replays);

	sf_become_owner(&saved);
	SPI_connect();
	sf_exec(PLAN_REDEFINE, values, nulls, false, SPI_OK_UPDATE_RETURNING);
	if (SPI_processed != 1)
		elog(ERROR, "streamforge: pipeline \"%s\" vanished", name);
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
	sf_cache_adopt(entry, p);
	sf_pipeline_free(old);
	entry->clean_valid = false;
	entry->snapshot_version = entry->version;
	entry->snapshot_len = VARSIZE_ANY_EXHDR(snap);
	entry->last_pos = 0;
	entry->journal_bytes = 0;
	sf_compact_note_snapshot(entry, p, entry->snapshot_len);
	entry->journal_pending = false;
	sf_pending_supersede(entry->id);
	sf_cache_account(entry);
	return p;
}

/*
 * sf_persist_redefine
 *		Change the definition of the pipeline named name, building the new
 *		state under the pipeline's lock (compact, the progress settings).
 */
SfPipeline *
sf_persist_redefine(const char *name, SfRedefineFn build, void *arg)
{
	return redefine(name, build, arg, false);
}

/*
 * sf_persist_redefine_concurrently
 *		The same, building the new state before taking the lock when
 *		streamforge.redefine_concurrently is on (the definition changes of
 *		api/manage.c and api/emit.c).  build may run more than once.
 */
SfPipeline *
sf_persist_redefine_concurrently(const char *name, SfRedefineFn build,
								 void *arg)
{
	return redefine(name, build, arg, true);
}
