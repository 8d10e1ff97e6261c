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
 * call's new late events to streamforge.late_output, all with SPI in the
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
 * Write calls on one pipeline serialize on the pipeline's row lock
 * (persist.c) until their transaction ends, so the seq numbers a
 * transaction writes directly follow those of the transaction before it,
 * which has committed by then: a reader polling "seq > last seen" sees no
 * gap and no duplicate.
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
 * catalog.c); they
 * take arrays and unnest them, so a call costs a few statements whatever
 * number of changes it made.  The results delete looks each address up in
 * the index and deletes by ctid, planned with enable_seqscan off, so that
 * no planner estimate can make it scan the table (sink_plan_text).
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

/* Rows per statement: bounds the arrays built for one statement */
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
	PLAN_RESULTS_DELETE,
	PLAN_RESULTS_TRIM,
	PLAN_CRON_UNSCHEDULE,
	PLAN_CRON_FORGET_SETS,
	PLAN_CHANGELOG_PUT_EPOCH,
	PLAN_RESULTS_PUT_EPOCH,
	PLAN_RESULTS_FINALIZE,
	PLAN_CONFIG_UNITS,
	PLAN_LATE_PUT_TS,
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
		"AND a.spec OPERATOR(pg_catalog.?) 'top') "
		"FROM streamforge.output_config AS c",
		0, {InvalidOid}
	},
	[PLAN_CONFIG_XMIN] = {
		"SELECT c.xmin FROM streamforge.output_config AS c "
		"WHERE c.pipeline OPERATOR(pg_catalog.=) $1",
		1, {TEXTOID}
	},
	/*
	 * The rows to delete are found by one index lookup per address (the
	 * LATERAL subquery, kept apart by OFFSET 0, is parameterized by the
	 * address, so it can only be a nested loop over the addresses with the
	 * lookup inside) and deleted by ctid (a TID scan).  No join between the
	 * addresses and the table is left to the planner, so the statement's
	 * cost does not depend on enable_hashjoin and friends: a join here once
	 * took a nested loop over both sides.  sink_results() plans it with
	 * enable_seqscan off, so that a plan kept from when the table was small
	 * cannot scan the whole table (per address, or for the ctids).
	 */
	[PLAN_RESULTS_DELETE] = {
		"DELETE FROM streamforge.results AS r "
		"WHERE r.ctid OPERATOR(pg_catalog.=) ANY (ARRAY("
		"SELECT x.ctid FROM ROWS FROM (pg_catalog.unnest($2), "
		"pg_catalog.unnest($3), pg_catalog.unnest($4), "
		"pg_catalog.unnest($5)) AS a(w, k, s, e), "
		"LATERAL (SELECT f.ctid FROM streamforge.results AS f "
		"WHERE f.pipeline OPERATOR(pg_catalog.=) $1 "
		"AND f.window_name OPERATOR(pg_catalog.=) a.w "
		"AND f.window_start OPERATOR(pg_catalog.=) a.s "
		"AND pg_catalog.md5(f.key) OPERATOR(pg_catalog.=) pg_catalog.md5(a.k) "
		"AND f.key OPERATOR(pg_catalog.=) a.k "
		"AND f.window_end OPERATOR(pg_catalog.=) a.e OFFSET 0) AS x))",
		5, {TEXTOID, TEXTARRAYOID, TEXTARRAYOID, INT8ARRAYOID, INT8ARRAYOID}
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
	/* with the epoch (0.3.0, issue 25), and the final flag of results */
	[PLAN_CHANGELOG_PUT_EPOCH] = {
		"INSERT INTO streamforge.changelog (pipeline, seq, op, window_name, "
		"key, window_start, window_end, count, sum, min, max, window_start_ts, "
		"window_end_ts, aggregates, epoch) "
		"SELECT $1, u.*, $12 FROM ROWS FROM (pg_catalog.unnest($2), "
		"pg_catalog.unnest($3), pg_catalog.unnest($4), pg_catalog.unnest($5), "
		"pg_catalog.unnest($6), pg_catalog.unnest($7), pg_catalog.unnest($8), "
		"pg_catalog.unnest($9), pg_catalog.unnest($10), "
		"pg_catalog.unnest($11), pg_catalog.unnest($13), "
		"pg_catalog.unnest($14), pg_catalog.unnest($15)) AS u",
		15, {TEXTOID, INT8ARRAYOID, TEXTARRAYOID, TEXTARRAYOID, TEXTARRAYOID,
			INT8ARRAYOID, INT8ARRAYOID, INT8ARRAYOID, NUMERICARRAYOID,
		INT8ARRAYOID, INT8ARRAYOID, INT8OID, TIMESTAMPTZARRAYOID,
		TIMESTAMPTZARRAYOID, JSONBARRAYOID}
	},
	[PLAN_RESULTS_PUT_EPOCH] = {
		"INSERT INTO streamforge.results (pipeline, window_name, key, "
		"window_start, window_end, count, sum, min, max, seq, final, "
		"window_start_ts, window_end_ts, aggregates, epoch) "
		"SELECT $1, u.*, $12 FROM ROWS FROM (pg_catalog.unnest($2), "
		"pg_catalog.unnest($3), pg_catalog.unnest($4), pg_catalog.unnest($5), "
		"pg_catalog.unnest($6), pg_catalog.unnest($7), pg_catalog.unnest($8), "
		"pg_catalog.unnest($9), pg_catalog.unnest($10), "
		"pg_catalog.unnest($11), pg_catalog.unnest($13), "
		"pg_catalog.unnest($14), pg_catalog.unnest($15)) AS u",
		15, {TEXTOID, TEXTARRAYOID, TEXTARRAYOID, INT8ARRAYOID, INT8ARRAYOID,
			INT8ARRAYOID, NUMERICARRAYOID, INT8ARRAYOID, INT8ARRAYOID,
		INT8ARRAYOID, BOOLARRAYOID, INT8OID, TIMESTAMPTZARRAYOID,
		TIMESTAMPTZARRAYOID, JSONBARRAYOID}
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
	[PLAN_LATE_PUT_TS] = {
		"INSERT INTO streamforge.late_output (pipeline, late_seq, partition, "
		"source_offset, event_id, key, event_time, value, watermark, "
		"event_time_ts) "
		"SELECT $1, u.* FROM ROWS FROM (pg_catalog.unnest($2), "
		"pg_catalog.unnest($3), pg_catalog.unnest($4), pg_catalog.unnest($5), "
		"pg_catalog.unnest($6), pg_catalog.unnest($7), pg_catalog.unnest($8), "
		"pg_catalog.unnest($9), pg_catalog.unnest($10)) AS u",
		10, {TEXTOID, INT8ARRAYOID, TEXTARRAYOID, INT8ARRAYOID, TEXTARRAYOID,
		TEXTARRAYOID, INT8ARRAYOID, INT8ARRAYOID, INT8ARRAYOID, TIMESTAMPTZARRAYOID}
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

static Datum
int8_array(Datum *elems, int n)
{
	return PointerGetDatum(construct_array(elems, n, INT8OID, sizeof(int64),
										   FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

static Datum
text_array(Datum *elems, int n)
{
	return PointerGetDatum(construct_array(elems, n, TEXTOID, -1, false,
										   TYPALIGN_INT));
}

static Datum
numeric_array(Datum *elems, int n)
{
	return PointerGetDatum(construct_array(elems, n, NUMERICOID, -1, false,
										   TYPALIGN_INT));
}

/*
 * Parallel arrays for a statement that takes one array per column: ncols
 * arrays of n values each (cols[k][i] is column k of row i).
 */
static Datum **
sink_columns(int ncols, int n)
{
	Datum	  **cols = palloc(ncols * sizeof(Datum *));
	int			k;

	for (k = 0; k < ncols; k++)
		cols[k] = palloc(n * sizeof(Datum));
	return cols;
}

/*
 * values[k]: the first n values of cols[k] as an array of types[k] (int8,
 * text or numeric), for k < ncols
 */
static void
sink_arrays(Datum *values, Datum **cols, const Oid *types, int ncols, int n)
{
	int			k;

	for (k = 0; k < ncols; k++)
	{
		if (types[k] == INT8OID)
			values[k] = int8_array(cols[k], n);
		else if (types[k] == TEXTOID)
			values[k] = text_array(cols[k], n);
		else
		{
			Assert(types[k] == NUMERICOID);
			values[k] = numeric_array(cols[k], n);
		}
	}
}

/* A row's address, at cols[0..3][i]: window name, key, start, end */
static void
sink_address_datums(SfPipeline *p, const SfAddress *addr, Datum **cols, int i)
{
	cols[0][i] = CStringGetTextDatum(p->def.windows[addr->window].name);
	cols[1][i] = sf_string_text(addr->key);
	cols[2][i] = Int64GetDatum(addr->start);
	cols[3][i] = Int64GetDatum(addr->end);
}

/* A row's aggregate, at cols[0..3][i]: count, sum, min, max */
static void
sink_agg_datums(const SfAgg *agg, Datum **cols, int i)
{
	cols[0][i] = Int64GetDatum(agg->count);
	cols[1][i] = sf_int128_numeric(agg->sum);
	cols[2][i] = Int64GetDatum(agg->min);
	cols[3][i] = Int64GetDatum(agg->max);
}

/*
 * The array columns of the writers' statements ($2 on), in order: a
 * change (seq, op, address, aggregate), a results row (address,
 * aggregate, seq; the delete takes the address only) and a late event.
 */
static const Oid changelog_types[] = {
	INT8OID, TEXTOID, TEXTOID, TEXTOID, INT8OID, INT8OID,
	INT8OID, NUMERICOID, INT8OID, INT8OID
};
static const Oid results_types[] = {
	TEXTOID, TEXTOID, INT8OID, INT8OID,
	INT8OID, NUMERICOID, INT8OID, INT8OID, INT8OID
};
static const Oid late_types[] = {
	INT8OID, TEXTOID, INT8OID, TEXTOID, TEXTOID, INT8OID, INT8OID, INT8OID
};

#define SINK_CHANGELOG_NCOLS	lengthof(changelog_types)
#define SINK_RESULTS_NCOLS		lengthof(results_types)
#define SINK_ADDRESS_NCOLS		4
#define SINK_LATE_NCOLS			lengthof(late_types)

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
 * Writers.  Each runs inside SPI, in a context the caller resets.
 * ----------------------------------------------------------------
 */

/* Append the n changes at items to the changelog */
static void
sink_changelog(SfPipeline *p, const SfSinkConfig *cfg, Datum name,
			   const SfChange *items, int n)
{
	Datum	  **cols = sink_columns(SINK_CHANGELOG_NCOLS, n);
	Datum	   *seq = cols[0];
	Datum	   *op = cols[1];
	Datum		retract = CStringGetTextDatum("retract");
	Datum		upsert = CStringGetTextDatum("upsert");
	Datum		final = CStringGetTextDatum("final");
	Datum		values[5 + SINK_CHANGELOG_NCOLS];
	char		nulls[5 + SINK_CHANGELOG_NCOLS];
	const SfAgg **aggs = palloc(n * sizeof(SfAgg *));
	int64	   *starts = palloc(n * sizeof(int64));
	int64	   *ends = palloc(n * sizeof(int64));
	bool		isnull;
	int			i;

	for (i = 0; i < n; i++)
	{
		const SfChange *c = &items[i];

		seq[i] = Int64GetDatum(c->seq);
		op[i] = c->op == SF_RETRACT ? retract : c->op == SF_UPSERT ? upsert : final;
		sink_address_datums(p, &c->row.addr, cols + 2, i);
		sink_agg_datums(&c->row.agg, cols + 6, i);
		aggs[i] = &c->row.agg;
		starts[i] = c->row.addr.start;
		ends[i] = c->row.addr.end;
	}
	memset(nulls, ' ', sizeof(nulls));
	values[0] = name;
	sink_arrays(values + 1, cols, changelog_types, SINK_CHANGELOG_NCOLS, n);
	values[1 + SINK_CHANGELOG_NCOLS] = Int64GetDatum(cfg->epoch);
	values[2 + SINK_CHANGELOG_NCOLS] = sf_ts_array(starts, n, cfg->unit_us, &isnull);
	if (isnull)
		nulls[2 + SINK_CHANGELOG_NCOLS] = 'n';
	values[3 + SINK_CHANGELOG_NCOLS] = sf_ts_array(ends, n, cfg->unit_us, &isnull);
	if (isnull)
		nulls[3 + SINK_CHANGELOG_NCOLS] = 'n';
	values[4 + SINK_CHANGELOG_NCOLS] = sf_sink_aggregates(p, aggs, n, &isnull);
	if (isnull)
		nulls[4 + SINK_CHANGELOG_NCOLS] = 'n';
	sf_run_plan(&sink_plans[PLAN_CHANGELOG_PUT_EPOCH],
				&sink_plan_text[PLAN_CHANGELOG_PUT_EPOCH], values, nulls,
				false, SPI_OK_INSERT);
}

/* Order of changes for the results fold: address, then seq */
static int
change_cmp(const void *a, const void *b, void *arg)
{
	const SfChange *x = *(const SfChange *const *) a;
	const SfChange *y = *(const SfChange *const *) b;
	int			c = sf_address_cmp((const SfPipeline *) arg, &x->row.addr,
								   &y->row.addr);

	if (c != 0)
		return c;
	return x->seq < y->seq ? -1 : x->seq > y->seq ? 1 : 0;
}

/*
 * Apply a list of changes to the results table.  Only the last change of
 * each address counts (an upsert leaves the row, a retraction removes it),
 * whatever came before it in the list: ingest_batch concatenates the
 * changes of several operations, which may touch one address repeatedly.
 * Every address touched is deleted first, then the final upserts inserted,
 * so the table holds one row per address even when rows were copied into
 * it by configure_outputs.
 */
static void
sink_results(SfPipeline *p, const SfSinkConfig *cfg, Datum name,
			 const SfChangeList *changes)
{
	const SfChange **order = palloc(changes->n * sizeof(SfChange *));
	const SfChange **last = palloc(changes->n * sizeof(SfChange *));
	int			nlast = 0;
	bool		isnull;
	int			i;
	int			from;

	for (i = 0; i < changes->n; i++)
		order[i] = &changes->items[i];
	qsort_arg(order, changes->n, sizeof(SfChange *), change_cmp, p);
	for (i = 0; i < changes->n; i++)
		if (i + 1 == changes->n ||
			sf_address_cmp(p, &order[i]->row.addr, &order[i + 1]->row.addr) != 0)
			last[nlast++] = order[i];

	for (from = 0; from < nlast; from += SF_SINK_CHUNK)
	{
		int			n = Min(SF_SINK_CHUNK, nlast - from);
		Datum	  **cols = sink_columns(SINK_RESULTS_NCOLS, n);
		bool	   *finals = palloc(n * sizeof(bool));
		int64	   *starts = palloc(n * sizeof(int64));
		int64	   *ends = palloc(n * sizeof(int64));
		const SfAgg **aggs = palloc(n * sizeof(SfAgg *));
		int			nput = 0;
		int			nestlevel;
		Datum		values[6 + SINK_RESULTS_NCOLS];
		char		nulls[6 + SINK_RESULTS_NCOLS];

		CHECK_FOR_INTERRUPTS();
		for (i = 0; i < n; i++)
			sink_address_datums(p, &last[from + i]->row.addr, cols, i);
		values[0] = name;
		sink_arrays(values + 1, cols, results_types, SINK_ADDRESS_NCOLS, n);
		/* enable_seqscan off while it is planned: see sink_plan_text */
		nestlevel = NewGUCNestLevel();
		(void) set_config_option("enable_seqscan", "off", PGC_USERSET,
								 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0,
								 false);
		sink_exec(PLAN_RESULTS_DELETE, values, SPI_OK_DELETE);
		AtEOXact_GUC(true, nestlevel);

		/* the upserts, compacted in place */
		for (i = 0; i < n; i++)
		{
			const SfChange *c = last[from + i];
			int			k;

			if (c->op == SF_RETRACT)
				continue;
			finals[nput] = c->op == SF_FINAL;
			starts[nput] = c->row.addr.start;
			ends[nput] = c->row.addr.end;
			for (k = 0; k < SINK_ADDRESS_NCOLS; k++)
				cols[k][nput] = cols[k][i];
			sink_agg_datums(&c->row.agg, cols + SINK_ADDRESS_NCOLS, nput);
			aggs[nput] = &c->row.agg;
			cols[8][nput] = Int64GetDatum(c->seq);
			nput++;
		}
		if (nput == 0)
			continue;
		sink_arrays(values + 1, cols, results_types, SINK_RESULTS_NCOLS, nput);
		{
			Datum	   *fd = palloc(nput * sizeof(Datum));

			for (i = 0; i < nput; i++)
				fd[i] = BoolGetDatum(finals[i]);
			values[1 + SINK_RESULTS_NCOLS] =
				PointerGetDatum(construct_array(fd, nput, BOOLOID, 1, true,
												TYPALIGN_CHAR));
		}
		values[2 + SINK_RESULTS_NCOLS] = Int64GetDatum(cfg->epoch);
		memset(nulls, ' ', sizeof(nulls));
		values[3 + SINK_RESULTS_NCOLS] = sf_ts_array(starts, nput, cfg->unit_us, &isnull);
		if (isnull)
			nulls[3 + SINK_RESULTS_NCOLS] = 'n';
		values[4 + SINK_RESULTS_NCOLS] = sf_ts_array(ends, nput, cfg->unit_us, &isnull);
		if (isnull)
			nulls[4 + SINK_RESULTS_NCOLS] = 'n';
		values[5 + SINK_RESULTS_NCOLS] = sf_sink_aggregates(p, aggs, nput, &isnull);
		if (isnull)
			nulls[5 + SINK_RESULTS_NCOLS] = 'n';
		sf_run_plan(&sink_plans[PLAN_RESULTS_PUT_EPOCH],
					&sink_plan_text[PLAN_RESULTS_PUT_EPOCH], values, nulls,
					false, SPI_OK_INSERT);
	}
}

/*
 * Mark final the results rows of p that it finalized: those whose
 * watermark > end + lateness.  Only 'update' mode needs it (the other
 * modes' final changes write final rows).
 */
static void
sink_mark_final(SfPipeline *p, Datum name)
{
	Datum		values[2];
	int128		below;

	if (p->def.emit != SF_EMIT_UPDATE || !p->has_watermark)
		return;
	below = (int128) p->watermark - p->def.lateness;
	if (below <= PG_INT64_MIN)
		return;
	values[0] = name;
	values[1] = Int64GetDatum((int64) below);
	sink_exec(PLAN_RESULTS_FINALIZE, values, SPI_OK_UPDATE);
}

/* Append the late events late_seq [from, from + n) to the late output */
static void
sink_late(SfPipeline *p, const SfSinkConfig *cfg, Datum name, int64 from, int n)
{
	Datum	  **cols = sink_columns(SINK_LATE_NCOLS, n);
	Datum		values[2 + SINK_LATE_NCOLS];
	char		nulls[2 + SINK_LATE_NCOLS];
	int64	   *times = palloc(n * sizeof(int64));
	bool		isnull;
	int			i;

	for (i = 0; i < n; i++)
	{
		const SfLateEvent *l = sf_late_row(p, from + i);

		if (l == NULL)
			elog(ERROR, "streamforge: late event " INT64_FORMAT " of pipeline \"%s\" is gone",
				 from + i, p->def.name);

		cols[0][i] = Int64GetDatum(l->late_seq);
		cols[1][i] = CStringGetTextDatum(p->def.partitions[l->partition]);
		cols[2][i] = Int64GetDatum(l->source_offset);
		cols[3][i] = PointerGetDatum(cstring_to_text_with_len(l->event->event_id,
															  l->event->event_id_len));
		cols[4][i] = sf_string_text(l->event->key);
		cols[5][i] = Int64GetDatum(l->event->event_time);
		cols[6][i] = Int64GetDatum(l->event->value);
		cols[7][i] = Int64GetDatum(l->watermark);
		times[i] = l->event->event_time;
	}
	values[0] = name;
	sink_arrays(values + 1, cols, late_types, SINK_LATE_NCOLS, n);
	memset(nulls, ' ', sizeof(nulls));
	values[1 + SINK_LATE_NCOLS] = sf_ts_array(times, n, cfg->unit_us, &isnull);
	if (isnull)
		nulls[1 + SINK_LATE_NCOLS] = 'n';
	sf_run_plan(&sink_plans[PLAN_LATE_PUT_TS], &sink_plan_text[PLAN_LATE_PUT_TS],
				values, nulls, false, SPI_OK_INSERT);
}

/*
 * Queue the notification: {"pipeline": name, "seq": last seq,
 * "late_seq": last late_seq}, 0 for none yet.
 */
static void
sink_notify(SfPipeline *p, const SfSinkConfig *cfg)
{
	sf_notify_changes(p->def.name, cfg->epoch, p->seq,
					  p->late_forgotten + p->nlate);
}

/* ----------------------------------------------------------------
 * Entry points
 * ----------------------------------------------------------------
 */

/* sf_sink_emit's work (below) */
static void
sink_emit(SfPipeline *p, const SfChangeList *changes, int64 late_from)
{
	SfSinkConfig *cfg;
	int64		nlate = p->late_forgotten + p->nlate + 1 - late_from;
	MemoryContext chunk_cxt;
	MemoryContext old;
	Datum		name;
	int			from;
	SfSavedUser saved;
	bool		top;
	Datum		top_starts = (Datum) 0;
	Datum		top_before = (Datum) 0;

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

	if (IsolationUsesXactSnapshot())
		sink_check_snapshot(p, cfg, name);

	if (cfg->changelog)
		for (from = 0; from < changes->n; from += SF_SINK_CHUNK)
		{
			CHECK_FOR_INTERRUPTS();
			old = MemoryContextSwitchTo(chunk_cxt);
			sink_changelog(p, cfg, name, changes->items + from,
						   Min(SF_SINK_CHUNK, changes->n - from));
			MemoryContextSwitchTo(old);
			MemoryContextReset(chunk_cxt);
		}

	/* a top-N: its rows in the changed windows, before (sink_top.c) */
	top = cfg->top && cfg->results && changes->n > 0;
	if (top)
	{
		top_starts = sf_sink_top_starts(changes);
		top_before = sf_sink_top_snapshot(name, top_starts);
	}

	if (cfg->results && changes->n > 0)
	{
		old = MemoryContextSwitchTo(chunk_cxt);
		sink_results(p, cfg, name, changes);
		MemoryContextSwitchTo(old);
		MemoryContextReset(chunk_cxt);
	}
	if (cfg->results && p->finalized != p->finalized_synced)
	{
		/* 'update' mode has no final changes: mark what was finalized */
		sink_mark_final(p, name);
		p->finalized_synced = p->finalized;
	}
	if (cfg->results && changes->n > 0)
	{
		/* results_retention: drop the rows older than the horizon */
		if (cfg->results_retention)
			sink_exec(PLAN_RESULTS_TRIM, &name, SPI_OK_SELECT);
	}

	if (cfg->late)
		for (from = 0; from < nlate; from += SF_SINK_CHUNK)
		{
			CHECK_FOR_INTERRUPTS();
			old = MemoryContextSwitchTo(chunk_cxt);
			sink_late(p, cfg, name, late_from + from,
					  (int) Min(SF_SINK_CHUNK, nlate - from));
			MemoryContextSwitchTo(old);
			MemoryContextReset(chunk_cxt);
		}

	/* the top-N's changes: its rows in the same windows, after */
	if (top)
		sf_sink_top_apply(name, top_starts, top_before);

	SPI_finish();
	sf_restore_user(&saved);

	if (cfg->notify && (changes->n > 0 || nlate > 0))
		sink_notify(p, cfg);
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
	sink_emit(p, changes, late_from);
	sf_late_release(p);
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
