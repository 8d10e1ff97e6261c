/*-------------------------------------------------------------------------
 *
 * redefine_par.c
 *	  Definition changes of parallel pipelines (issue 46,
 *	  docs/design/parallel-writers.md, section 6.5): add_partition,
 *	  add_window, drop_window, set_lateness, set_emit,
 *	  set_out_of_orderness, set_idle_timeout (turned off only) and the
 *	  locked rewrite of compact, through redefine.c's one entry point.
 *
 * The new state is the serial one: the committed head and lanes merged
 * into the state of the serial pipeline with the same history
 * (sf_head_merge, as checkpoint() does), the change's build run on it as
 * on a serial pipeline, and the result split into a new head and lanes
 * (sf_head_split, as restore() does), stored as their snapshots with the
 * journals emptied: a new snapshot version, the new epoch of design 6.5.
 * So a change gives a parallel pipeline exactly the state and the changes
 * it gives a serial pipeline with the same history (sql/parallel_redefine.sql).
 *
 * Locks (design 8.1): the change claims every lane in lane order (rank 1,
 * sf_claim_lock: it waits for the writers of the pipeline's partitions to
 * end, as a serial pipeline's change waits for its row lock), then takes
 * the head lock, catches the head up with the latest committed state and
 * writes the row, the lanes and the outputs at once.  With
 * streamforge.redefine_concurrently on, the new state is built first from
 * the committed state read without a lock (redefine.c's optimistic build)
 * and kept if the head's version is still the one it was built from once
 * the locks are held; otherwise it is built again under them.
 *
 * Deviation from design 6.5 (the same as restore()'s today, sequencer.c):
 * the state is installed at the call, under the head lock, not at
 * pre-commit.  Holding every claim and the head lock, the change's state
 * is the committed one up to its commit, so the changes it emits are
 * numbered and written at once, as a serial pipeline's change writes
 * them.  The cost: other writers' commits of the pipeline wait for the
 * change's transaction to end, as they wait for a serial pipeline's row
 * lock.  A later call of that transaction that must wait for another
 * transaction's claim may close a cycle with a writer that waits for the
 * head lock at its commit; PostgreSQL's deadlock detector breaks it (as
 * for restore()).  A change in its own transaction, as the docs advise,
 * has no later call.
 *
 * Writers whose base predates the change: a writer with deliveries holds
 * the claims of its lanes, so the change waits for it to end (the writer
 * is first in the serial order).  A writer whose first call claims a lane
 * after the change committed loads the new state.  A writer that made
 * only advances, mark_idle or finish before the change committed (no
 * claim) re-executes them at its commit on the new head when the
 * partitions are unchanged (parallel_load.c's par_reexecute checks it),
 * else fails with 40001; one that claims a lane after the change
 * committed fails at that call with 40001, as after a compaction.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/redefine_par.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/lock.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "codec/codec.h"
#include "engine/engine.h"
#include "engine/parallel.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

static SPIPlanPtr redef_plan;

/* the lanes go with the partitions they number (lane_journal cascades) */
static const SfPlanText lanes_drop_text = {
	"DELETE FROM streamforge.lane "
	"WHERE pipeline_id OPERATOR(pg_catalog.=) $1",
	1,
	{INT8OID}};

/*
 * What a parallel pipeline cannot have yet (as create_pipeline refuses
 * it, api/define.c): a change that would give it one is refused (0A000)
 */
static void
check_supported(const SfPipelineDef *def)
{
	if (def->has_retention)
		ereport(ERROR,
				errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				errmsg("a pipeline with writers => 'parallel' cannot have a retention yet"),
				errdetail("Forgetting below the retention horizon is not built for parallel writers (docs/design/parallel-writers.md, section 5.4)."),
				errhint("Use a pipeline with writers => 'serial' (the default) for a retention."));
	if (def->has_idle_timeout)
		ereport(ERROR,
				errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				errmsg("a pipeline with writers => 'parallel' cannot have an idle_timeout yet"),
				errdetail("Idle decisions by time are not built for parallel writers (docs/design/parallel-writers.md, section 6.4)."),
				errhint("Mark idle partitions with mark_idle(), or use a pipeline with writers => 'serial' (the default)."));
}

/*
 * build(the serial form of pe's committed state, arg): a new pipeline
 * under CurTransactionContext, kept until the transaction ends (the
 * change's names may point into its definition)
 */
static SfPipeline *
build_from(SfParEntry *pe, SfRedefineFn build, void *arg)
{
	SfPipeline *old = sf_head_merge(CurTransactionContext, pe->head);
	SfPipeline *p = build(old, arg);

	sf_pipeline_free(old);
	check_supported(&p->def);
	return p;
}

/*
 * Bring pe's head (no open transaction) to the latest committed row:
 * caught up, or loaded anew across a compaction; *acl gets the row's
 * grants.  Caller holds the head lock and pushed the latest snapshot.
 */
static void
sync_locked(SfParEntry *pe, SfAcl *acl)
{
	MemoryContext callercxt = CurrentMemoryContext;
	SfSavedUser saved;
	SfRowInfo	row = {0};
	SfPipelineDef def;
	Datum		arg;

	sf_become_owner(&saved);
	SPI_connect();
	arg = CStringGetTextDatum(pe->name);
	sf_exec(PLAN_OPEN_READ, &arg, NULL, true, SPI_OK_SELECT);
	if (SPI_processed != 1)
		sf_unknown_pipeline(pe->name);
	sf_read_row(&row, true, callercxt);
	if (row.id != pe->id || row.relid != pe->relid)
		ereport(ERROR,
				errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				errmsg("parallel pipeline \"%s\" was dropped and created again during its definition change",
					   pe->name),
				errhint("Retry the transaction."));
	if (row.version != pe->version)
	{
		if (sf_par_can_catch_up(pe, &row))
			sf_par_catch_up(pe, &row);
		else
		{
			sf_load_def(pe->name, row.id, &def);
			sf_par_end_txn(pe, true);
			sf_par_load(pe, &def, &row, sf_par_context());
		}
	}
	SPI_finish();
	sf_restore_user(&saved);
	*acl = row.acl;
}

/* Whether a and b have the same partitions, in the same order */
static bool
same_partitions(const SfPipelineDef *a, const SfPipelineDef *b)
{
	if (a->npartitions != b->npartitions)
		return false;
	for (int i = 0; i < a->npartitions; i++)
		if (strcmp(a->partitions[i], b->partitions[i]) != 0)
			return false;
	return true;
}

/*
 * Store h (split from p, the new state) as pe's committed state: the row's
 * definition and version, the lanes again when the partitions changed
 * (lanes are numbered by partition index), every snapshot, the journals
 * emptied.  The entry holds h at once; an abort discards it (restored).
 * Caller holds every claim and the head lock.
 */
static void
install(SfParEntry *pe, SfHead *h, const SfPipeline *p)
{
	const SfPipelineDef *def = &p->def;
	bool		relane = !same_partitions(&pe->head->p->def, def);
	int			np = def->npartitions;
	SfSavedUser saved;
	Datum		values[4];
	char		nulls[4] = {' ', ' ', 'n', ' '};
	int64		version;
	bool		isnull;

	sf_become_owner(&saved);
	SPI_connect();
	values[0] = CStringGetTextDatum(pe->name);
	sf_exec(PLAN_OPEN_WRITE, values, NULL, false, SPI_OK_UPDATE_RETURNING);
	if (SPI_processed != 1)
		sf_unknown_pipeline(pe->name);
	version = sf_getint64(3, &isnull);
	if (sf_getint64(2, &isnull) != pe->id || version - 1 != pe->version)
		elog(ERROR, "streamforge: parallel pipeline \"%s\" moved under its head lock",
			 pe->name);
	/* the head snapshot follows (sf_par_store_snapshots) */
	values[0] = Int64GetDatum(pe->id);
	values[1] = sf_definition_text(def);
	values[2] = (Datum) 0;
	values[3] = Int64GetDatum(0);
	sf_exec(PLAN_REDEFINE, values, nulls, false, SPI_OK_UPDATE_RETURNING);
	if (SPI_processed != 1)
		elog(ERROR, "streamforge: pipeline \"%s\" vanished", pe->name);
	if (relane)
		sf_run_plan(&redef_plan, &lanes_drop_text, values, NULL, false,
					SPI_OK_DELETE);
	SPI_finish();
	sf_restore_user(&saved);
	if (relane)
		sf_persist_parallel_create(def);

	/* the entry holds the new state, discarded unless we commit */
	sf_par_end_txn(pe, true);
	MemoryContextSetParent(h->cxt, sf_par_context());
	pe->head = h;
	pe->version = version;
	pe->restored = true;
	if (pe->lane_pos != NULL)
		pfree(pe->lane_pos);
	pe->lane_pos = MemoryContextAllocZero(sf_par_context(),
										  Max(np, 1) * sizeof(int64));
	sf_par_store_snapshots(pe, version);
}

/*
 * sf_par_redefine's part under the locks: the head caught up, the state
 * built from it unless p (built from version from) is still the committed
 * one, and installed.  claimed: the definition whose lanes are claimed.
 * Caller pushed the latest snapshot.
 */
static void
install_locked(SfParEntry *pe, const SfPipelineDef *claimed, SfPipeline *p,
			   int64 from, SfRedefineFn build, void *arg)
{
	SfAcl		acl;
	SfHead	   *h;

	sync_locked(pe, &acl);
	sf_acl_check(&acl, pe->name, GetUserId(), SF_PRIV_ADMIN);
	if (acl.grants != NULL)
		pfree(acl.grants);

	/*
	 * Another change committed between the read and the claims: the lanes
	 * claimed may not be this definition's.
	 */
	if (!same_partitions(claimed, &pe->head->p->def))
		ereport(ERROR,
				errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				errmsg("the partitions of parallel pipeline \"%s\" changed during its definition change",
					   pe->name),
				errhint("Retry the transaction."));
	if (p != NULL && pe->version != from)
	{
		sf_pipeline_free(p);
		p = NULL;
	}
	if (p == NULL)
		p = build_from(pe, build, arg);
	h = sf_head_split(CurTransactionContext, p);

	/*
	 * What the change finalized, for the outputs' mark-final of 'update'
	 * mode (sink.c's sink_final_below): counters of the call, not state
	 */
	h->p->finalized = p->finalized;
	h->p->finalized_synced = p->finalized_synced;
	install(pe, h, p);
}

/* install_locked with the statements writing the rows' latest versions */
static void
install_latest(SfParEntry *pe, const SfPipelineDef *claimed, SfPipeline *p,
			   int64 from, SfRedefineFn build, void *arg)
{
	/* as the sequencer writes them */
	PushActiveSnapshot(GetLatestSnapshot());
	sf_latest_writes(true);
	PG_TRY();
	{
		install_locked(pe, claimed, p, from, build, arg);
	}
	PG_FINALLY();
	{
		sf_latest_writes(false);
	}
	PG_END_TRY();
	PopActiveSnapshot();
}

/*
 * sf_par_redefine
 *		redefine.c's definition change for parallel pipeline name (the file
 *		header says how); early: build before taking the locks.  Returns
 *		the new head's pipeline, or NULL if name is not a parallel pipeline.
 *
 * Checks the admin privilege (42501) on the row the caller's snapshot
 * sees, and again on the latest one under the locks.  A transaction that
 * wrote the pipeline cannot change its definition (0A000): its deliveries
 * are in lanes the change would replace.
 */
SfPipeline *
sf_par_redefine(const char *name, SfRedefineFn build, void *arg, bool early)
{
	SfParEntry *pe;
	SfPipeline *p = NULL;
	SfPipelineDef claimed;
	LOCKTAG		tag;
	int64		from = -1;

	if (sf_par_open(name, false) == NULL)
		return NULL;
	pe = sf_par_lookup(name, false);
	sf_acl_check(&pe->acl, name, GetUserId(), SF_PRIV_ADMIN);
	sf_persist_check_writable(name);
	if (pe->txn != NULL)
		ereport(ERROR,
				errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				errmsg("cannot change the definition of parallel pipeline \"%s\" in a transaction that wrote it",
					   name),
				errhint("Change it in a transaction of its own."));
	if (early)
	{
		p = build_from(pe, build, arg);
		from = pe->version;
	}

	/* every lane in lane order (rank 1), then the head lock (rank 3) */
	claimed = pe->head->p->def;
	claimed.partitions = palloc(Max(claimed.npartitions, 1) *
								sizeof(*claimed.partitions));
	memcpy(claimed.partitions, pe->head->p->def.partitions,
		   claimed.npartitions * sizeof(*claimed.partitions));
	for (int i = 0; i < claimed.npartitions; i++)
		sf_claim_lock(name, pe->id, i, claimed.partitions[i]);
	sf_par_head_tag(&tag, pe->id);
	sf_par_lock_early(&tag);

	install_latest(pe, &claimed, p, from, build, arg);
	return pe->head->p;
}
