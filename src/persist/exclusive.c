/*-------------------------------------------------------------------------
 *
 * exclusive.c
 *	  Exclusive operations on parallel pipelines in the lock order (issue
 *	  46, build plan step 7; docs/design/parallel-writers.md, sections 6.6,
 *	  6.7 and 8.1): restore, drop_pipeline, grant/revoke/set_owner and
 *	  compact act at pre-commit under the head lock, after claiming at the
 *	  call what they need.
 *
 * Why.  A committing writer's sequencer holds the head lock (rank 3) and
 * updates the pipeline's row.  An operation that locked that row, or took
 * the head lock, at the call would make the sequencer wait for it while
 * the operation's transaction may go on to wait for a call-time lock
 * (rank 1) that the writer holds: a wait-for cycle only the deadlock
 * detector breaks (test/specs/parallel_exclusive.spec).  So an exclusive
 * operation holds only call-time locks until its pre-commit:
 *
 *	- at the call: the pipeline's lane -1 claim (sf_claim_lock, locks.c),
 *	  which orders the exclusive operations of one pipeline among
 *	  themselves and ranks below its lanes, then, for an operation that
 *	  changes lanes (restore, drop; compact without waiting), the claim of
 *	  every lane in lane order; then the operation validates what it can
 *	  (a restore's checkpoint: SF003) and records an action
 *	  (sf_par_exclusive_add);
 *	- at pre-commit, after the transaction's own writes are sequenced
 *	  (sequencer.c, sf_sequencer_run_all, pipelines in name order): the
 *	  head lock, then every action of the pipeline in call order, with the
 *	  latest snapshot (sf_latest_writes): the row writes that a sequencer
 *	  also writes happen only there, so a sequencer never waits for a row
 *	  lock of an exclusive operation (design 8.1).
 *
 * Writers whose base predates a restore or a compaction find a new
 * snapshot version at their commit and re-execute (design 4.5, 7b); a
 * drop makes their commit fail with 42704; a revoke with 42501.
 *
 * Within the transaction: a pending drop makes the pipeline unknown
 * (42704) to the transaction's later calls; a pending restore refuses
 * its later write calls (0A000; reads see the committed state, as reads
 * in a writing transaction do); pending grants are what the transaction's
 * own privilege reads return (sf_persist_get_acl).  A savepoint's
 * rollback takes back the actions recorded in it (the claims go with the
 * lock manager's release).
 *
 * Reuse (definition changes, h46d): sf_par_exclusive_claim(pe, true) at
 * the call, then sf_par_exclusive_add(pe, SF_EXCL_OTHER, fn, arg): fn runs
 * at pre-commit under the head lock (sequencer.c's run_exclusive), not
 * connected to SPI, with the latest snapshot active and the writes using
 * it (sf_latest_writes); it may call sf_par_store_snapshots.  The action
 * list and its inline helpers are in persist_int.h.
 *
 * Memory: the actions and their arguments live in TopTransactionContext;
 * parallel.c's transaction callback forgets them (pe->excl = NULL).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/exclusive.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "storage/proc.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "codec/codec.h"
#include "engine/engine.h"
#include "engine/parallel.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

/*
 * a restore's action: the checkpoint, decoded again at commit, and the
 * committed version the call saw
 */
typedef struct ExclRestore
{
	char	   *data;
	Size		len;
	int64		version;
} ExclRestore;

/*
 * The version the last exclusive action of transaction bump_lxid bumped
 * pipeline bump_id to (excl_bump), so that a second restore in one
 * transaction follows its first one
 */
static LocalTransactionId bump_lxid = InvalidLocalTransactionId;
static int64 bump_id;
static int64 bump_version;

/* a drop's and a grant's: the role that called, and the new grants */
typedef struct ExclAcl
{
	SfAcl		acl;
	Oid			role;
} ExclAcl;

static SfParExcl *
excl_of(SfParEntry *pe)
{
	if (pe->excl == NULL)
		pe->excl = MemoryContextAllocZero(TopTransactionContext,
										  sizeof(SfParExcl));
	return pe->excl;
}

/*
 * The call-time locks of an exclusive operation on parallel pipeline pe
 * (design 8.1, rank 1): its lane -1 claim, then, with every_lane, each
 * lane's claim in lane order.  Each may wait, upward only (sf_claim_lock);
 * a 55P03 otherwise.  Held until the transaction ends.
 */
void
sf_par_exclusive_claim(SfParEntry *pe, bool every_lane)
{
	const SfPipelineDef *def = &pe->head->p->def;

	sf_claim_lock(pe->name, pe->id, -1, NULL);
	if (!every_lane)
		return;
	for (int i = 0; i < def->npartitions; i++)
	{
		CHECK_FOR_INTERRUPTS();
		sf_claim_lock(pe->name, pe->id, i, def->partitions[i]);
	}
}

/*
 * Record fn(pe, arg) to run at pre-commit under pe's head lock, after the
 * actions recorded before it.  Caller took the claims it needs
 * (sf_par_exclusive_claim) and keeps arg in TopTransactionContext.
 */
void
sf_par_exclusive_add(SfParEntry *pe, SfParExclKind op, SfParExclFn fn,
					 void *arg)
{
	SfParExcl  *x = excl_of(pe);
	SfParExclAct *a = MemoryContextAllocZero(TopTransactionContext,
											 sizeof(SfParExclAct));

	a->op = op;
	a->subid = GetCurrentSubTransactionId();
	a->fn = fn;
	a->arg = arg;
	if (x->last == NULL)
		x->first = a;
	else
		x->last->next = a;
	x->last = a;
}

/*
 * Bump the row's version under the head lock (latest snapshot); 42704 if
 * it is gone, 40001 if the pipeline was dropped and created again.
 * Caller is connected to SPI as the owner.  Returns the new version.
 */
static int64
excl_bump(SfParEntry *pe)
{
	Datum		arg = CStringGetTextDatum(pe->name);
	bool		isnull;

	int64		version;

	sf_exec(PLAN_OPEN_WRITE, &arg, NULL, false, SPI_OK_UPDATE_RETURNING);
	if (SPI_processed != 1)
		sf_unknown_pipeline(pe->name);
	if (sf_getint64(2, &isnull) != pe->id)
		sf_par_moved_error(pe, "The pipeline was dropped and created again.");
	version = sf_getint64(3, &isnull);
	bump_lxid = MyProc->lxid;
	bump_id = pe->id;
	bump_version = version;
	return version;
}

/*
 * The committed version of pe's row now (the latest snapshot), or, under
 * REPEATABLE READ or SERIALIZABLE, the one the transaction's snapshot saw
 * (pe->version, as the entry was opened)
 */
static int64
excl_call_version(SfParEntry *pe)
{
	SfSavedUser saved;
	Datum		arg = Int64GetDatum(pe->id);
	Oid			argtype = INT8OID;
	bool		isnull;
	int64		version;

	if (IsolationUsesXactSnapshot())
		return pe->version;
	sf_become_owner(&saved);
	SPI_connect();
	PushActiveSnapshot(GetLatestSnapshot());
	if (SPI_execute_with_args("SELECT version FROM streamforge.pipeline"
							  " WHERE id OPERATOR(pg_catalog.=) $1",
							  1, &argtype, &arg, NULL, true, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		sf_unknown_pipeline(pe->name);
	version = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
										  SPI_tuptable->tupdesc, 1, &isnull));
	PopActiveSnapshot();
	SPI_finish();
	sf_restore_user(&saved);
	return version;
}

/* ----------------------------------------------------------------
 * restore (design 6.7)
 * ----------------------------------------------------------------
 */

/*
 * At commit: the checkpoint decoded again against the definition the
 * row holds now, installed as head and lanes, stored as their snapshots
 * with the journals emptied and the version bumped.  Every lane is
 * claimed, so no writer has a lane row in flight.
 */
static void
restore_at_commit(SfParEntry *pe, void *arg)
{
	ExclRestore *r = arg;
	SfPipelineDef def;
	SfHead	   *h;
	SfSavedUser saved;
	int64		version;

	int64		previous = -1;

	/* an earlier action of this transaction bumped it (a first restore) */
	if (bump_lxid == MyProc->lxid && bump_id == pe->id)
		previous = bump_version;
	sf_become_owner(&saved);
	SPI_connect();
	version = excl_bump(pe);

	/*
	 * Every lane was claimed at the call, so no delivery committed since;
	 * but a head-only commit (advance, tick, finish, mark_idle: no claim)
	 * may have since the call, and installing the checkpoint the call was
	 * given would undo it: a lost update when that checkpoint was read
	 * before it (restore(p, checkpoint(p)) then other calls in the same
	 * transaction, test/t/016_parallel_locks.pl), where a serial
	 * pipeline's row lock, taken at the call, keeps that commit out.  So
	 * the restore fails (40001) unless the committed version is still the
	 * one the call saw after its claims (or the one this transaction's
	 * previous action made).
	 */
	if (version - 1 != r->version && version - 1 != previous)
		sf_par_moved_error(pe, "It was written since this transaction's call of restore().");
	/* def is SPI's: decoded before SPI_finish (the head copies it) */
	sf_load_def(pe->name, pe->id, &def);
	h = sf_head_checkpoint_restore(TopTransactionContext, &def, r->data,
								   r->len);
	SPI_finish();
	sf_restore_user(&saved);

	/* the entry holds the restored state, discarded unless we commit */
	MemoryContextSetParent(h->cxt, sf_par_context());
	sf_par_end_txn(pe, true);
	pe->head = h;
	pe->version = version;
	pe->restored = true;
	sf_par_store_snapshots(pe, version);
	/* the outputs from the restored state, as after a serial restore */
	sf_sink_restore(pe->name);
}

/* The grants the transaction set on pe, or the committed ones */
static const SfAcl *
excl_acl(const SfParEntry *pe)
{
	SfParExclAct *a = sf_par_exclusive_find(pe, SF_EXCL_ACL);

	return a != NULL ? &((ExclAcl *) a->arg)->acl : &pe->acl;
}

/*
 * The entry of parallel pipeline name, opened for reading, for an
 * exclusive operation that needs the admin privilege; NULL when name is
 * not a parallel pipeline (the serial path goes on, and raises 42704 for
 * an unknown name)
 */
static SfParEntry *
excl_open_admin(const char *name)
{
	SfCacheEntry *entry = sf_cache_find(name);
	SfParEntry *pe;

	if (entry != NULL && entry->pipeline != NULL)
		return NULL;
	if (sf_par_open(name, false) == NULL)
		return NULL;
	pe = sf_par_lookup(name, false);
	sf_acl_check(excl_acl(pe), name, GetUserId(), SF_PRIV_ADMIN);
	sf_persist_check_writable(name);
	return pe;
}

/*
 * restore() on a parallel pipeline (persist.c's sf_persist_restore):
 * validated now (SF003 as for a serial pipeline), every lane claimed,
 * installed at commit (design 6.7).  Needs the admin privilege (42501).
 * Returns false if name is not a parallel pipeline.
 */
bool
sf_persist_parallel_restore(const char *name, const char *data, Size len)
{
	SfParEntry *pe = excl_open_admin(name);
	ExclRestore *r;
	SfHead	   *h;

	if (pe == NULL)
		return false;
	if (pe->txn != NULL)
		ereport(ERROR,
				errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				errmsg("cannot restore parallel pipeline \"%s\" in a transaction that wrote it",
					   name),
				errhint("Restore it in a transaction of its own."));
	sf_check_checkpoint_size(data, len);
	/* SF003 at the call; the commit decodes it again */
	h = sf_head_checkpoint_restore(CurrentMemoryContext, &pe->head->p->def,
								   data, len);
	MemoryContextDelete(h->cxt);
	sf_par_exclusive_claim(pe, true);
	r = MemoryContextAlloc(TopTransactionContext, sizeof(ExclRestore));
	r->data = MemoryContextAlloc(TopTransactionContext, Max(len, 1));
	memcpy(r->data, data, len);
	r->len = len;
	/* after the claims, which wait for the lanes' writers to commit */
	r->version = excl_call_version(pe);
	sf_par_exclusive_add(pe, SF_EXCL_RESTORE, restore_at_commit, r);
	return true;
}

/* ----------------------------------------------------------------
 * drop_pipeline
 * ----------------------------------------------------------------
 */

/*
 * At commit: the row (its lanes, journals and stored snapshots cascade or
 * go with it), the admin privilege checked again on the deleted row, then
 * the outputs (at the call they would lock rows a sequencer writes)
 */
static void
drop_at_commit(SfParEntry *pe, void *arg)
{
	ExclAcl	   *d = arg;
	Datum		name = CStringGetTextDatum(pe->name);
	SfSavedUser saved;
	SfAcl		acl;
	bool		isnull;
	Datum		id;

	sf_become_owner(&saved);
	SPI_connect();
	sf_exec(PLAN_DROP, &name, NULL, false, SPI_OK_DELETE_RETURNING);
	if (SPI_processed != 1)
		sf_unknown_pipeline(pe->name);
	sf_read_acl(&acl, SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2,
				CurrentMemoryContext);
	sf_acl_check(&acl, pe->name, d->role, SF_PRIV_ADMIN);
	id = Int64GetDatum(sf_getint64(1, &isnull));
	sf_exec(PLAN_STORED_DROP, &id, NULL, false, SPI_OK_DELETE);
	SPI_finish();
	sf_restore_user(&saved);
	/* its outputs and schedules, as after a serial drop (api/define.c) */
	sf_sink_drop(pe->name);
	/* the entry is forgotten at its next open, which finds no row */
	pe->restored = true;
}

/*
 * drop_pipeline on a parallel pipeline (persist.c's sf_persist_drop):
 * every lane claimed, the row deleted at commit.  Needs the admin
 * privilege (42501).  Returns false if name is not a parallel pipeline.
 */
bool
sf_par_exclusive_drop(const char *name)
{
	SfParEntry *pe = excl_open_admin(name);
	ExclAcl	   *d;

	if (pe == NULL)
		return false;
	sf_par_exclusive_claim(pe, true);
	d = MemoryContextAllocZero(TopTransactionContext, sizeof(ExclAcl));
	d->role = GetUserId();
	sf_par_exclusive_add(pe, SF_EXCL_DROP, drop_at_commit, d);
	/* its writes in this transaction have nothing left to commit */
	sf_par_dropped(name);
	return true;
}

/*
 * Whether this transaction dropped parallel pipeline name, the drop still
 * pending (not rolled back to a savepoint): its row, and so its name, stay
 * until the pre-commit (sf_persist_check_new refuses a create of the name)
 */
bool
sf_par_exclusive_drop_pending(const char *name)
{
	return sf_par_exclusive_find(sf_par_lookup(name, false),
								 SF_EXCL_DROP) != NULL;
}

/* ----------------------------------------------------------------
 * grant, revoke, set_owner
 * ----------------------------------------------------------------
 */

/* At commit: the row's grants (no version: the state does not change) */
static void
acl_at_commit(SfParEntry *pe, void *arg)
{
	ExclAcl	   *g = arg;
	SfSavedUser saved;
	Datum		values[5];

	values[0] = CStringGetTextDatum(pe->name);
	values[1] = ObjectIdGetDatum(g->acl.owner);
	values[2] = sf_acl_array(&g->acl, SF_PRIV_READ);
	values[3] = sf_acl_array(&g->acl, SF_PRIV_INGEST);
	values[4] = sf_acl_array(&g->acl, SF_PRIV_ADMIN);
	sf_become_owner(&saved);
	SPI_connect();
	sf_exec(PLAN_ACL_PUT, values, NULL, false, SPI_OK_UPDATE);
	if (SPI_processed != 1)
		sf_unknown_pipeline(pe->name);
	SPI_finish();
	sf_restore_user(&saved);
	sf_acl_copy(&pe->acl, &g->acl, sf_par_context());
	pe->restored = true;		/* an abort after this re-reads the row */
}

/* Copy src into dst, its grants in cxt */
static void
acl_dup(SfAcl *dst, const SfAcl *src, MemoryContext cxt)
{
	dst->grants = NULL;
	sf_acl_copy(dst, src, cxt);
}

/*
 * sf_persist_get_acl for a parallel pipeline (persist.c): returns false
 * when name is not one (the serial path goes on).  A pipeline dropped in
 * this transaction is unknown (42704).  The grants the transaction set
 * come first; else the row's.  for_update: the grant calls' lock, the
 * lane -1 claim (design 8.1), which orders the exclusive operations of the
 * pipeline among themselves without waiting for its writers, and no row
 * lock (the row is written at commit under the head lock); the row is
 * then read with the latest snapshot, so that a change committed while
 * the claim was awaited is not lost.
 */
bool
sf_par_exclusive_acl(const char *name, bool for_update, SfAcl *acl)
{
	MemoryContext callercxt = CurrentMemoryContext;
	SfParEntry *pe = sf_par_lookup(name, false);
	SfParExclAct *a;
	SfSavedUser saved;
	Datum		arg;

	if (sf_par_exclusive_find(pe, SF_EXCL_DROP) != NULL)
		sf_unknown_pipeline(name);
	if (!for_update)
	{
		a = sf_par_exclusive_find(pe, SF_EXCL_ACL);
		if (a == NULL)
			return false;
		acl_dup(acl, &((ExclAcl *) a->arg)->acl, callercxt);
		return true;
	}
	if (sf_par_open(name, false) == NULL)
		return false;
	pe = sf_par_lookup(name, false);
	sf_par_exclusive_claim(pe, false);
	excl_of(pe)->acl_locked = true;
	a = sf_par_exclusive_find(pe, SF_EXCL_ACL);
	if (a != NULL)
	{
		acl_dup(acl, &((ExclAcl *) a->arg)->acl, callercxt);
		return true;
	}
	sf_become_owner(&saved);
	SPI_connect();
	PushActiveSnapshot(GetLatestSnapshot());
	arg = CStringGetTextDatum(name);
	sf_exec(PLAN_ACL_GET, &arg, NULL, true, SPI_OK_SELECT);
	if (SPI_processed != 1)
		sf_unknown_pipeline(name);
	sf_read_acl(acl, SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1,
				callercxt);
	PopActiveSnapshot();
	SPI_finish();
	sf_restore_user(&saved);
	return true;
}

/*
 * sf_persist_set_acl for a parallel pipeline whose grants this
 * transaction claimed (sf_par_exclusive_acl with for_update): recorded,
 * written at commit.  Returns false otherwise.
 */
bool
sf_par_exclusive_set_acl(const char *name, const SfAcl *acl)
{
	SfParEntry *pe = sf_par_lookup(name, false);
	ExclAcl	   *g;

	if (pe == NULL || pe->excl == NULL || !pe->excl->acl_locked)
		return false;
	g = MemoryContextAllocZero(TopTransactionContext, sizeof(ExclAcl));
	acl_dup(&g->acl, acl, TopTransactionContext);
	g->role = GetUserId();
	sf_par_exclusive_add(pe, SF_EXCL_ACL, acl_at_commit, g);
	return true;
}

/* ----------------------------------------------------------------
 * compact (design 6.6)
 * ----------------------------------------------------------------
 */

/*
 * At commit: the head caught up with the latest commit and stored with
 * every lane as their snapshots, the journals emptied.  Skipped when
 * another transaction compacted or restored it meanwhile (a writer's
 * commit past its limit: its journal is empty already).
 */
static void
compact_at_commit(SfParEntry *pe, void *arg)
{
	SfSavedUser saved;
	SfRowInfo	row = {0};
	Datum		name = CStringGetTextDatum(pe->name);
	int64		version;

	if (pe->head == NULL)
		return;
	sf_become_owner(&saved);
	SPI_connect();
	sf_exec(PLAN_OPEN_READ, &name, NULL, true, SPI_OK_SELECT);
	if (SPI_processed != 1)
		sf_unknown_pipeline(pe->name);
	sf_read_row(&row, true, CurrentMemoryContext);
	if (row.id != pe->id)
		sf_par_moved_error(pe, "The pipeline was dropped and created again.");
	if (row.version != pe->version && !sf_par_can_catch_up(pe, &row))
	{
		SPI_finish();
		sf_restore_user(&saved);
		return;
	}
	if (row.version != pe->version)
		sf_par_catch_up(pe, &row);
	version = excl_bump(pe);
	if (version - 1 != pe->version)
		sf_par_moved_error(pe, "Another transaction committed to it without its head lock.");
	SPI_finish();
	sf_restore_user(&saved);
	pe->version = version;
	pe->restored = true;
	sf_par_store_snapshots(pe, version);
}

/*
 * compact(name, min_bytes) on a parallel pipeline (design 6.6): returns
 * -1 when name is not one (the serial path goes on), else whether it
 * compacts at commit: min_bytes negative leaves it to the sequencers
 * (they compact past the serial journal's limit); else (0: always) when
 * the head and lane rows since the snapshots hold at least min_bytes and
 * every lane can be claimed without waiting (head and lanes share one
 * snapshot version, so it compacts all of them or none; a lane a writer
 * holds means no compaction, not a wait).  Caller checked the admin
 * privilege.
 */
int
sf_persist_parallel_compact(const char *name, int64 min_bytes)
{
	SfPipeline *p;
	SfParEntry *pe;
	int			np;
	int			i;
	bool	   *took;
	SfCacheEntry *entry = sf_cache_find(name);

	if (entry != NULL && entry->pipeline != NULL)
		return -1;
	p = sf_par_open(name, false);
	if (p == NULL)
		return -1;
	pe = sf_par_lookup(name, false);
	if (min_bytes < 0 || (min_bytes > 0 && pe->journal_bytes < min_bytes))
		return 0;
	sf_persist_check_writable(name);
	sf_claim_lock(pe->name, pe->id, -1, NULL);
	np = p->def.npartitions;
	took = palloc0(Max(np, 1) * sizeof(bool));
	for (i = 0; i < np; i++)
		if (!sf_claim_try(pe->name, pe->id, i, p->def.partitions[i],
						  &took[i]))
			break;
	if (i < np)
	{
		/* a lane is busy: let go of those taken here */
		for (int k = 0; k < i; k++)
			if (took[k])
			{
				LOCKTAG		tag;

				sf_par_claim_tag(&tag, pe->id, k);
				LockRelease(&tag, ExclusiveLock, false);
			}
		pfree(took);
		return 0;
	}
	pfree(took);
	sf_par_exclusive_add(pe, SF_EXCL_COMPACT, compact_at_commit, NULL);
	return 1;
}
