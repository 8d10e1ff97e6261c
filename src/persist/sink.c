/*-------------------------------------------------------------------------
 *
 * sink.c
 *	  Durable outputs of a pipeline: changelog, results and late events,
 *	  written in the caller's transaction, and NOTIFY on commit.
 *
 * Which outputs a pipeline has is kept in streamforge.output_config
 * (sql/schema/20_tables.sql).  The SQL glue calls sf_sink_emit() after
 * every successful write call, once the call's journal entry is written;
 * for a pipeline with outputs it appends the call's changes to
 * streamforge.changelog, applies them to streamforge.results and appends the
 * call's new late events to streamforge.late_output (the rows: sink_rows.c,
 * written in bulk as COPY FROM writes them, sink_bulk.c), all in the
 * caller's transaction, so they commit, roll back (to a savepoint, too) and
 * survive a crash exactly like the pipeline's state.  With notify on, it
 * queues a notification on channel "streamforge_changes", which PostgreSQL
 * delivers when (and only if) the transaction commits.
 *
 * Privileges.  Nobody but the extension's owner may write (or read all of)
 * the output tables, so the statements here run as that owner
 * (sf_become_owner, acl.c); the caller's privilege on the pipeline was
 * checked when persist.c opened it.  The pg_cron clean-up of
 * sf_sink_drop() runs as the caller: pg_cron shows a role its own jobs.
 *
 * Why a reader polling "seq > last seen" sees no gap and no duplicate.
 * Serial pipelines: write calls on one pipeline serialize on the
 * pipeline's row lock (persist.c) until their transaction ends, so the seq
 * numbers a transaction writes directly follow those of the transaction
 * before it, which has committed by then.  Parallel pipelines (issue 46,
 * docs/design/parallel-writers.md 7.1): no call writes outputs; the
 * sequencer numbers a transaction's changes (seq, late_seq) at pre-commit
 * under the pipeline's head lock, from the head caught up with every
 * transaction committed before, and writes them here
 * (sf_sink_emit_calls).  The head lock is a transaction lock, released
 * after the commit is visible (ProcArrayEndTransaction precedes the
 * release of the locks), so when a transaction takes it every earlier
 * holder's rows are visible to any later snapshot: a snapshot that sees a
 * transaction's rows sees those of every transaction that numbered before
 * it, and the seq of the committed transactions are consecutive.  Seq
 * assigned at call time (from the writer's view) would break both: a
 * reader could bookmark past the rows of a transaction still open, or two
 * transactions would write the same numbers (test/specs/parallel_seq.spec
 * shows both).
 *
 * Configuration cache.  Each backend keeps a copy of output_config in a
 * hash table (sink_config, in sink_cxt under CacheMemoryContext), loaded on
 * first use.  Any change to output_config fires a statement trigger that
 * sends a relcache invalidation for the table; the callback registered here
 * marks the copy stale, and the next sf_sink_emit() reloads it.  So a write
 * call on a pipeline without outputs costs a hash lookup, and none at all
 * when the call changed nothing.  sf_sink_emit() accepts pending
 * invalidations itself, because the caller may have waited for the row
 * lock of the transaction that changed the configuration.  The copy holds
 * the latest committed settings; a REPEATABLE READ or SERIALIZABLE write
 * call whose snapshot predates them fails with 40001 (sink_check_snapshot),
 * and one on a pipeline whose outputs were all turned off after its
 * snapshot writes none, as the latest settings say.
 *
 * Statements are prepared once per backend and kept (sf_keep_plan,
 * catalog.c).  A call costs a few statements and bulk inserts whatever
 * number of changes it made (sink_rows.c).
 *
 * Trimming (results_retention, trim_*): the SQL functions of
 * sql/objects/40_outputs.sql do the work as the extension's owner; their entry points
 * (api/outputs.c) check admin first (sf_call_as_owner, api/privileges.c).
 * With results_retention on, sf_sink_emit runs trim_results_internal after
 * writing the results.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/sink.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/sinval.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/snapmgr.h"

#include "engine/engine.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

/* Rows per writer call: bounds the columns built at once (sink_rows.c) */
#define SF_SINK_CHUNK		8192

/* One pipeline's switches, as in streamforge.output_config */
typedef struct SfSinkConfig
{
	char		pipeline[SF_NAME_MAX + 1];	/* hash key, must be first */
	bool		changelog;
	bool		results;
	bool		late;
	bool		notify;
	bool		results_retention;	/* trim results older than the horizon */
	int64		epoch;			/* the outputs' epoch (docs/outputs.md) */
	int64		unit_us;		/* the pipeline's time unit, 0: none */
	bool		top;			/* an aggregate with a top-N (sink_top.c) */
	TransactionId xmin;			/* of the row version read */
	SfSinkTyped *typed;			/* an aggregate's results table, or NULL */
} SfSinkConfig;

static MemoryContext sink_cxt = NULL;	/* owns sink_config */
static HTAB *sink_config = NULL;
static bool sink_config_valid = false;
static uint64 sink_inval_count = 0;
static Oid	sink_config_relid = InvalidOid;
static bool sink_callback_registered = false;

typedef enum SfSinkPlanId
{
	PLAN_CONFIG_LOAD,
	PLAN_CONFIG_XMIN,
	PLAN_RESULTS_TRIM,
	PLAN_CRON_UNSCHEDULE,
	PLAN_CRON_FORGET_SETS,
	PLAN_RESULTS_FINALIZE,
	PLAN_CONFIG_UNITS,
	PLAN_DROP_OUTPUTS,
	NUM_SINK_PLANS
} SfSinkPlanId;

/*
 * Objects are schema-qualified and operators spelled OPERATOR(pg_catalog.x),
 * so the caller's search_path cannot redirect a statement.
 */
static const SfPlanText sink_plan_text[NUM_SINK_PLANS] = {
	[PLAN_CONFIG_LOAD] = {
		"SELECT c.pipeline, c.changelog, c.results, c.late, c.notify, c.xmin, "
		"c.results_retention, c.epoch, "
		"EXISTS (SELECT FROM streamforge.aggregate AS a "
		"WHERE a.name OPERATOR(pg_catalog.=) c.pipeline "
		"AND a.spec OPERATOR(pg_catalog.?) 'top'), "
		/* an aggregate's results table (0.4.0, sink_typed.c) */
		"g.results_id, g.spec OPERATOR(pg_catalog.->>) 'window', "
		/* a measures aggregate's members; a one-measure one's are generated */
		"ARRAY(SELECT e.value OPERATOR(pg_catalog.->>) 'member' "
		"FROM pg_catalog.jsonb_array_elements(g.spec OPERATOR(pg_catalog.->) 'aggregates') "
		"WITH ORDINALITY AS e WHERE COALESCE((g.spec OPERATOR(pg_catalog.->>) 'measures')"
		"::pg_catalog.bool, false) ORDER BY e.ordinality), "
		/*
		 * the table, named as aggregate_results_table() names it
		 * (66_aggregates_views.sql; not called here: the statement needs no
		 * privilege on a function)
		 */
		"pg_catalog.to_regclass('streamforge_results.' OPERATOR(pg_catalog.||) "
		"pg_catalog.quote_ident('a' OPERATOR(pg_catalog.||) g.results_id)) "
		"FROM streamforge.output_config AS c "
		"LEFT JOIN streamforge.aggregate AS g ON g.name OPERATOR(pg_catalog.=) c.pipeline "
		"AND g.results_id IS NOT NULL",
		0, {InvalidOid}
	},
	[PLAN_CONFIG_XMIN] = {
		"SELECT c.xmin FROM streamforge.output_config AS c "
		"WHERE c.pipeline OPERATOR(pg_catalog.=) $1",
		1, {TEXTOID}
	},
	[PLAN_RESULTS_TRIM] = {
		"SELECT streamforge_internal.trim_results_internal($1)",
		1, {TEXTOID}
	},
	[PLAN_CRON_UNSCHEDULE] = {
		"SELECT pg_catalog.count(cron.unschedule(j.jobid)) FROM cron.job AS j "
		"WHERE j.jobname OPERATOR(pg_catalog.~~) 'streamforge.advance [%' "
		"AND (pg_catalog.substr(j.jobname, 21)::pg_catalog.jsonb "
		"OPERATOR(pg_catalog.->>) 0) OPERATOR(pg_catalog.=) $1",
		1, {TEXTOID}
	},
	/* the multi-pipeline jobs (0.4.0, issue 45; 74_schedule_pipelines.sql) */
	[PLAN_CRON_FORGET_SETS] = {
		"SELECT streamforge_internal.cron_forget_pipeline($1)",
		1, {TEXTOID}
	},
	/*
	 * 'update' mode: the rows the pipeline finalized since (their end is
	 * below watermark - lateness), by the partial index results_open
	 */
	[PLAN_RESULTS_FINALIZE] = {
		"UPDATE streamforge.results AS r SET final = true "
		"WHERE r.pipeline OPERATOR(pg_catalog.=) $1 AND NOT r.final "
		"AND r.window_end OPERATOR(pg_catalog.<) $2",
		2, {TEXTOID, INT8OID}
	},
	/* the time units of the pipelines with outputs */
	[PLAN_CONFIG_UNITS] = {
		"SELECT c.pipeline, (p.definition OPERATOR(pg_catalog.->>) 'time_unit')"
		"::pg_catalog.interval FROM streamforge.output_config AS c "
		"JOIN streamforge.pipeline AS p ON p.name OPERATOR(pg_catalog.=) c.pipeline "
		"WHERE p.definition OPERATOR(pg_catalog.?) 'time_unit'",
		0, {InvalidOid}
	},
	/* a dropped pipeline's outputs (0.4.0: no foreign key cascades) */
	[PLAN_DROP_OUTPUTS] = {
		"WITH c AS (DELETE FROM streamforge.changelog "
		"WHERE pipeline OPERATOR(pg_catalog.=) $1), r AS (DELETE FROM "
		"streamforge.results WHERE pipeline OPERATOR(pg_catalog.=) $1) "
		"DELETE FROM streamforge.late_output WHERE pipeline OPERATOR(pg_catalog.=) $1",
		1, {TEXTOID}
	},
};

static SPIPlanPtr sink_plans[NUM_SINK_PLANS];

/* ----------------------------------------------------------------
 * Helpers
 * ----------------------------------------------------------------
 */

/* The kept plan of a statement (sf_keep_plan).  Caller is in SPI. */
static SPIPlanPtr
sink_plan(SfSinkPlanId id)
{
	return sf_keep_plan(&sink_plans[id], &sink_plan_text[id]);
}

/* Run a statement (sf_run_plan), with a new snapshot */
static void
sink_exec(SfSinkPlanId id, Datum *values, int expected)
{
	sf_run_plan(&sink_plans[id], &sink_plan_text[id], values, NULL, false,
				expected);
}

/* ----------------------------------------------------------------
 * Configuration cache
 * ----------------------------------------------------------------
 */
static void
sink_relcache_callback(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == sink_config_relid)
	{
		sink_config_valid = false;
		sink_inval_count++;
	}
}

/*
 * The table of an aggregate's results, from columns 10-13 of a row of
 * PLAN_CONFIG_LOAD, in sink_cxt
 */
static SfSinkTyped *
sink_typed_load(HeapTuple tup, TupleDesc desc)
{
	MemoryContext old = MemoryContextSwitchTo(sink_cxt);
	SfSinkTyped *t = palloc0(sizeof(SfSinkTyped));
	bool		isnull;
	int64		id = DatumGetInt64(SPI_getbinval(tup, desc, 10, &isnull));
	char	   *window = SPI_getvalue(tup, desc, 11);
	ArrayType  *aggs = DatumGetArrayTypeP(SPI_getbinval(tup, desc, 12, &isnull));
	Datum		relid = SPI_getbinval(tup, desc, 13, &isnull);
	Datum	   *elems;
	bool	   *nulls;

	if (isnull || window == NULL)
		elog(ERROR, "streamforge: the table of the results of aggregate number " INT64_FORMAT " is missing",
			 id);
	t->relid = DatumGetObjectId(relid);
	t->window = window;
	deconstruct_array(aggs, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls,
					  &t->naggs);
	t->aggs = palloc(Max(t->naggs, 1) * sizeof(char *));
	for (int i = 0; i < t->naggs; i++)
	{
		if (nulls[i])
			elog(ERROR, "streamforge: invalid definition of aggregate number " INT64_FORMAT,
				 id);
		t->aggs[i] = TextDatumGetCString(elems[i]);
	}
	MemoryContextSwitchTo(old);
	return t;
}

/*
 * Load output_config into sink_config.  The copy is marked valid only if no
 * invalidation arrived while it was read, so a change committed meanwhile
 * is never missed.  Reads with the latest snapshot, not the transaction's,
 * so that the copy is the latest committed configuration (plus this
 * transaction's own changes) at every isolation level: it sees a
 * configuration committed while the caller waited for the pipeline's row
 * lock, and one committed after a REPEATABLE READ transaction took its
 * snapshot (sink_check_snapshot decides what such a transaction may do).
 */
static void
sink_config_load(void)
{
	uint64		start = sink_inval_count;
	Oid			nsp;
	HASHCTL		ctl;
	uint64		i;

	if (!sink_callback_registered)
	{
		CacheRegisterRelcacheCallback(sink_relcache_callback, (Datum) 0);
		sink_callback_registered = true;
	}
	if (sink_cxt == NULL)
		sink_cxt = AllocSetContextCreate(CacheMemoryContext,
										 "streamforge sink configuration",
										 ALLOCSET_SMALL_SIZES);
	/* the kept plans of the tables of aggregates' results */
	if (sink_config != NULL)
	{
		HASH_SEQ_STATUS seq;
		SfSinkConfig *old;

		hash_seq_init(&seq, sink_config);
		while ((old = hash_seq_search(&seq)) != NULL)
			if (old->typed != NULL)
				sf_sink_typed_forget(old->typed);
	}
	sink_config = NULL;
	MemoryContextReset(sink_cxt);

	nsp = get_namespace_oid("streamforge", false);
	sink_config_relid = get_relname_relid("output_config", nsp);
	if (!OidIsValid(sink_config_relid))
		elog(ERROR, "streamforge: table streamforge.output_config is missing");

	SPI_connect();
	/* the latest committed settings, whatever the isolation level */
	if (SPI_execute_snapshot(sink_plan(PLAN_CONFIG_LOAD), NULL, NULL,
							 GetLatestSnapshot(), InvalidSnapshot,
							 true, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "streamforge: could not read the output configuration");

	ctl.keysize = SF_NAME_MAX + 1;
	ctl.entrysize = sizeof(SfSinkConfig);
	ctl.hcxt = sink_cxt;
	sink_config = hash_create("streamforge sink configuration",
							  Max(SPI_processed, 8), &ctl,
							  HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	for (i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		char	   *name = SPI_getvalue(tup, desc, 1);
		SfSinkConfig *cfg;
		bool		isnull;
		bool		found;

		if (name == NULL || strlen(name) > SF_NAME_MAX)
			continue;			/* cannot name a pipeline */
		cfg = hash_search(sink_config, name, HASH_ENTER, &found);
		cfg->changelog = DatumGetBool(SPI_getbinval(tup, desc, 2, &isnull));
		cfg->results = DatumGetBool(SPI_getbinval(tup, desc, 3, &isnull));
		cfg->late = DatumGetBool(SPI_getbinval(tup, desc, 4, &isnull));
		cfg->notify = DatumGetBool(SPI_getbinval(tup, desc, 5, &isnull));
		cfg->xmin = DatumGetTransactionId(SPI_getbinval(tup, desc, 6, &isnull));
		cfg->results_retention = DatumGetBool(SPI_getbinval(tup, desc, 7, &isnull));
		cfg->epoch = DatumGetInt64(SPI_getbinval(tup, desc, 8, &isnull));
		cfg->top = DatumGetBool(SPI_getbinval(tup, desc, 9, &isnull));
		cfg->unit_us = 0;
		cfg->typed = NULL;
		(void) SPI_getbinval(tup, desc, 10, &isnull);
		if (!isnull)
			cfg->typed = sink_typed_load(tup, desc);
	}
	/* the time units, for the timestamp columns */
	if (hash_get_num_entries(sink_config) > 0)
	{
		if (SPI_execute_snapshot(sink_plan(PLAN_CONFIG_UNITS), NULL, NULL,
								 GetLatestSnapshot(), InvalidSnapshot,
								 true, false, 0) != SPI_OK_SELECT)
			elog(ERROR, "streamforge: could not read the time units");
		for (i = 0; i < SPI_processed; i++)
		{
			char	   *name = SPI_getvalue(SPI_tuptable->vals[i],
											SPI_tuptable->tupdesc, 1);
			bool		isnull;
			Interval   *unit = DatumGetIntervalP(SPI_getbinval(SPI_tuptable->vals[i],
															   SPI_tuptable->tupdesc,
															   2, &isnull));
			SfSinkConfig *cfg;

			if (name == NULL || strlen(name) > SF_NAME_MAX || isnull)
				continue;
			cfg = hash_search(sink_config, name, HASH_FIND, NULL);
			if (cfg != NULL && unit->month == 0)
				cfg->unit_us = unit->time + (int64) unit->day * USECS_PER_DAY;
		}
	}
	SPI_finish();

	sink_config_valid = (start == sink_inval_count);
}

/*
 * Under REPEATABLE READ and SERIALIZABLE, refuse (40001) a write call whose
 * snapshot predates the latest committed change of the pipeline's output
 * settings: cfg, the latest row, must be the version the snapshot sees.
 * Such a call cannot apply the new settings correctly (the results rows
 * that configure_outputs copied from visible() after the snapshot are
 * invisible to it, so it would neither replace nor delete them), nor the
 * old ones, which would leave the outputs stale.  This is the rule state
 * reads follow (persist.c): never act on stale state; a retry works.
 * Caller is in SPI, as the extension's owner.
 */
static void
sink_check_snapshot(SfPipeline *p, const SfSinkConfig *cfg, Datum name)
{
	bool		isnull;
	TransactionId seen;

	/* read_only false: the transaction snapshot, at these levels */
	sink_exec(PLAN_CONFIG_XMIN, &name, SPI_OK_SELECT);
	if (SPI_processed == 1)
	{
		seen = DatumGetTransactionId(SPI_getbinval(SPI_tuptable->vals[0],
												   SPI_tuptable->tupdesc,
												   1, &isnull));
		if (!isnull && TransactionIdEquals(seen, cfg->xmin))
			return;
	}
	ereport(ERROR,
			(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
			 errmsg("could not serialize access due to a concurrent change of the outputs of pipeline \"%s\"",
					p->def.name),
			 errdetail("The output settings were changed by a transaction that committed after this transaction's snapshot was taken."),
			 errhint("Retry the transaction.")));
}

/* ----------------------------------------------------------------
 * Writers (the rows: sink_rows.c).  Each runs inside SPI, in a context
 * the caller resets.
 * ----------------------------------------------------------------
 */

/*
 * The bound below which 'update' mode's mark-final of this call makes the
 * results rows of p final (sink_mark_final): the windows whose watermark >
 * end + lateness.  PG_INT64_MIN when the call marks nothing: another mode
 * (their final changes write final rows), no watermark, or nothing
 * finalized since the last mark.
 */
static int64
sink_final_below(SfPipeline *p, const SfSinkConfig *cfg)
{
	int128		below;

	if (!cfg->results || p->finalized == p->finalized_synced ||
		p->def.emit != SF_EMIT_UPDATE || !p->has_watermark)
		return PG_INT64_MIN;
	below = (int128) p->watermark - p->def.lateness;
	if (below <= PG_INT64_MIN)
		return PG_INT64_MIN;
	return (int64) below;
}

/*
 * Mark final the results rows of p below below (sink_final_below).  The
 * rows this call wrote were written final already (sf_sink_results): this
 * reaches the rows earlier calls emitted.
 */
static void
sink_mark_final(const SfSinkConfig *cfg, Datum name, int64 below)
{
	Datum		values[2];

	if (below == PG_INT64_MIN)
		return;
	values[0] = name;
	values[1] = Int64GetDatum(below);
	sink_exec(PLAN_RESULTS_FINALIZE, values, SPI_OK_UPDATE);
	if (cfg->typed != NULL)
		sf_sink_typed_final(cfg->typed, below);
}

/*
 * Keep the call's notification (notify.c): the pipeline's seq and
 * late_seq after the call, 0 for none yet.
 */
static void
sink_notify(SfPipeline *p, const SfSinkConfig *cfg, int64 seq,
			int64 late_seq)
{
	sf_notify_changes(p->def.name, cfg->epoch, seq, late_seq);
}

/* ----------------------------------------------------------------
 * Entry points
 * ----------------------------------------------------------------
 */

/*
 * The outputs of one call (sf_sink_emit, sf_sink_emit_calls): its changes,
 * its late rows late_from .. late_last, and its notification with seq and
 * late_last, the pipeline's seq and late_seq after the call.
 */
static void
sink_emit(SfPipeline *p, const SfChangeList *changes, int64 late_from,
		  int64 late_last, int64 seq)
{
	SfSinkConfig *cfg;
	int64		nlate = late_last + 1 - late_from;
	MemoryContext chunk_cxt;
	MemoryContext old;
	Datum		name;
	int			from;
	SfSavedUser saved;
	bool		top;
	SfTopSnapshot *top_before = NULL;
	int64		final_below;

	if (changes->n == 0 && nlate == 0 && p->finalized == p->finalized_synced)
		return;
	AcceptInvalidationMessages();
	if (!sink_config_valid)
	{
		sf_become_owner(&saved);
		sink_config_load();
		sf_restore_user(&saved);
	}
	if (hash_get_num_entries(sink_config) == 0)
		cfg = NULL;
	else
		cfg = hash_search(sink_config, p->def.name, HASH_FIND, NULL);
	if (cfg == NULL || !cfg->results)
		p->finalized_synced = p->finalized;		/* nothing to mark final */
	if (cfg == NULL ||
		(changes->n == 0 && nlate == 0 && p->finalized == p->finalized_synced))
		return;

	/* the caller's privilege was checked when p was opened (acl.c) */
	sf_become_owner(&saved);
	SPI_connect();
	/* everything below lives in the SPI procedure context or chunk_cxt */
	chunk_cxt = AllocSetContextCreate(CurrentMemoryContext,
									  "streamforge sink chunk",
									  ALLOCSET_DEFAULT_SIZES);
	name = CStringGetTextDatum(p->def.name);
	final_below = sink_final_below(p, cfg);

	if (IsolationUsesXactSnapshot())
		sink_check_snapshot(p, cfg, name);

	if (cfg->changelog)
		for (from = 0; from < changes->n; from += SF_SINK_CHUNK)
		{
			CHECK_FOR_INTERRUPTS();
			old = MemoryContextSwitchTo(chunk_cxt);
			sf_sink_changelog(p, name, cfg->epoch, cfg->unit_us,
							  changes->items + from,
							  Min(SF_SINK_CHUNK, changes->n - from));
			MemoryContextSwitchTo(old);
			MemoryContextReset(chunk_cxt);
		}

	/* a top-N: its rows in the changed windows, before (sink_top.c) */
	top = cfg->top && cfg->results && changes->n > 0;
	if (top)
		top_before = sf_sink_top_before(name, cfg->typed, changes);

	if (cfg->results && changes->n > 0)
	{
		old = MemoryContextSwitchTo(chunk_cxt);
		sf_sink_results(p, name, cfg->epoch, cfg->unit_us, final_below,
						changes, cfg->typed);
		MemoryContextSwitchTo(old);
		MemoryContextReset(chunk_cxt);
	}
	if (cfg->results && p->finalized != p->finalized_synced)
	{
		/* 'update' mode has no final changes: mark what was finalized */
		sink_mark_final(cfg, name, final_below);
		p->finalized_synced = p->finalized;
	}

	/* the top-N's changes: its rows in the same windows, after */
	if (top)
		sf_sink_top_apply(top_before);

	if (cfg->results && changes->n > 0)
	{
		/*
		 * results_retention: drop the rows older than the horizon (with a
		 * top-N, and the 'delete's of the rows it drops from it: after the
		 * call's own top-N changes, sink_top.c)
		 */
		if (cfg->results_retention && cfg->top)
			sf_sink_top_trim(name);
		else if (cfg->results_retention)
			sink_exec(PLAN_RESULTS_TRIM, &name, SPI_OK_SELECT);
	}

	if (cfg->late)
		for (from = 0; from < nlate; from += SF_SINK_CHUNK)
		{
			CHECK_FOR_INTERRUPTS();
			old = MemoryContextSwitchTo(chunk_cxt);
			sf_sink_late(p, name, cfg->unit_us, late_from + from,
						 (int) Min(SF_SINK_CHUNK, nlate - from));
			MemoryContextSwitchTo(old);
			MemoryContextReset(chunk_cxt);
		}

	SPI_finish();
	sf_restore_user(&saved);

	if (cfg->notify && (changes->n > 0 || nlate > 0))
		sink_notify(p, cfg, seq, late_last);
}

/*
 * Write the outputs of one successful write call on p: its changes, and
 * the late events it recorded, late_seq late_from onwards (late_from is
 * what sf_late_keep returned when the call began: the rows the retention
 * forgot during the call are still there).  Caller holds p's row lock and
 * has journaled the call; an error here aborts the call like any other.
 * Then lets go of the call's kept late rows.
 */
void
sf_sink_emit(SfPipeline *p, const SfChangeList *changes, int64 late_from)
{
	sink_emit(p, changes, late_from, p->late_forgotten + p->nlate, p->seq);
	sf_late_release(p);
}

/* sf_sink_emit_calls' work, at the isolation level it set */
static void
sink_emit_calls(SfPipeline *p, const SfChangeList *changes, int ncalls,
				const int *call_end, const int64 *call_seq,
				const int64 *call_late, int64 late_from)
{
	int			from = 0;
	uint64		finalized = p->finalized;

	for (int k = 0; k < ncalls; k++)
	{
		SfChangeList one;

		Assert(call_end[k] >= from && call_end[k] <= changes->n);
		Assert(call_late[k] + 1 >= late_from);
		one.n = call_end[k] - from;
		one.cap = one.n;
		one.items = changes->items + from;

		/*
		 * 'update' mode's results made final (sink_final_below): once, by
		 * the last call, with the watermark after the commit.  The earlier
		 * calls write their rows not final, as the watermark after them is
		 * not known here; the last call's mark reaches every row a serial
		 * run would have made final by then, since the watermark only
		 * grows.  (Marked by the first call, the later calls' rows would
		 * stay not final.)
		 */
		p->finalized = k < ncalls - 1 ? p->finalized_synced : finalized;
		sink_emit(p, &one, late_from, call_late[k], call_seq[k]);
		from = call_end[k];
		late_from = call_late[k] + 1;
	}
	p->finalized = finalized;
	if (from != changes->n || late_from != p->late_forgotten + p->nlate + 1)
		elog(ERROR, "streamforge: the changes of pipeline \"%s\" are not all in its calls",
			 p->def.name);
	sf_late_release(p);
}

/*
 * Write the outputs of a parallel pipeline's committed transaction (issue
 * 46, design 7.1-7.3), call by call as a serial pipeline's sink writes
 * them after each call: call k's changes are changes->items[call_end[k -
 * 1] .. call_end[k]) (call_end[-1] = 0), its late rows those after call k
 * - 1's up to call_late[k] (late_from for call 0), and its notification
 * carries call_seq[k] and call_late[k], the head's seq and late_seq after
 * it.  So a listener gets one notification per call that changed
 * something, in call order, with the payloads the same calls on a serial
 * pipeline would send; the changelog and late rows are the same whether
 * written by call or at once.  Caller (the sequencer) holds the head
 * lock, under which the seq were numbered: see the file header.
 *
 * Every statement here sees the latest committed rows, also under
 * REPEATABLE READ, whose transaction snapshot predates the commits of the
 * other writers that the head caught up with.  The top-N's reads of the
 * windows' rows (sink_top.c), an aggregate's results table (sink_typed.c:
 * the deletes of the addresses a call rewrites) and the SQL functions they
 * call take their snapshots from GetTransactionSnapshot(), which
 * sf_latest_writes does not reach: with the transaction's snapshot they
 * miss the rows another writer committed meanwhile, so the top_changelog
 * ranks without them, and a rewritten address keeps the other writer's row
 * beside the new one (isolation:parallel_top).  So the isolation level is
 * READ COMMITTED while the outputs are written: each statement takes a new
 * snapshot, and an update that meets a row committed meanwhile rechecks it
 * instead of failing with 40001; the rows are the head lock's, which no
 * other transaction writes.  Caller runs at pre-commit, after which the
 * transaction runs no statement of its own (one would get the newer
 * snapshot that GetTransactionSnapshot() then returns).  SERIALIZABLE is
 * left as it is: its predicate locks fail the second of two overlapping
 * writers anyway (docs/persistence.md).
 */
void
sf_sink_emit_calls(SfPipeline *p, const SfChangeList *changes, int ncalls,
				   const int *call_end, const int64 *call_seq,
				   const int64 *call_late, int64 late_from)
{
	int			isolation = XactIsoLevel;

	if (XactIsoLevel == XACT_REPEATABLE_READ)
		XactIsoLevel = XACT_READ_COMMITTED;
	PG_TRY();
	{
		sink_emit_calls(p, changes, ncalls, call_end, call_seq, call_late,
						late_from);
	}
	PG_FINALLY();
	{
		XactIsoLevel = isolation;
	}
	PG_END_TRY();
}

/*
 * A pipeline was dropped (its row is deleted).  Delete its outputs (the
 * tables written per row have no foreign key, 0.4.0), make every backend
 * forget its configuration, and remove the pg_cron jobs that advance it,
 * when pg_cron is installed: they would fail from now on, or advance a new
 * pipeline of the same name.
 */
void
sf_sink_drop(const char *pipeline)
{
	Oid			nsp = get_namespace_oid("streamforge", false);
	Oid			relid = get_relname_relid("output_config", nsp);
	Oid			cron;
	Datum		arg = CStringGetTextDatum(pipeline);
	SfSavedUser saved;

	sf_become_owner(&saved);
	SPI_connect();
	sink_exec(PLAN_DROP_OUTPUTS, &arg, SPI_OK_DELETE);
	SPI_finish();
	sf_restore_user(&saved);
	if (OidIsValid(relid))
		CacheInvalidateRelcacheByRelid(relid);
	sink_config_valid = false;

	sf_report_kafka_leftovers(pipeline);
	if (!OidIsValid(get_extension_oid("pg_cron", true)))
		return;
	cron = get_namespace_oid("cron", true);
	if (!OidIsValid(cron) ||
		pg_namespace_aclcheck(cron, GetUserId(), ACL_USAGE) != ACLCHECK_OK)
		return;
	SPI_connect();
	sink_exec(PLAN_CRON_UNSCHEDULE, &arg, SPI_OK_SELECT);
	sink_exec(PLAN_CRON_FORGET_SETS, &arg, SPI_OK_SELECT);
	SPI_finish();
}

/*
 * After restore() replaced a pipeline's state: bring its outputs back in
 * line (streamforge.resync_outputs, 40_outputs.sql), so that the changelog
 * holds no seq the restored pipeline will emit again.
 */
void
sf_sink_restore(const char *pipeline)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		arg = CStringGetTextDatum(pipeline);

	/* the calls the restore undid notify nothing (notify.c) */
	sf_notify_forget_pipeline(pipeline);
	SPI_connect();
	if (SPI_execute_with_args("SELECT streamforge.resync_outputs($1)",
							  1, argtypes, &arg, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "streamforge: could not resynchronize outputs");
	SPI_finish();
}
