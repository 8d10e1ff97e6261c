/*-------------------------------------------------------------------------
 *
 * sink_rows.c
 *	  The rows of a pipeline's durable outputs, written by sf_sink_emit
 *	  (sink.c): the changelog, the results and the late output of one call.
 *
 * Each writer builds its rows column by column (SfBulkColumn) and writes
 * them in one pass with sf_bulk_insert (sink_bulk.c: table_multi_insert and
 * the index entries, as COPY FROM does; 0.4.0, issue 42 item 1).  Should a
 * table have a trigger, or row-level security apply to the extension's
 * owner, sf_bulk_insert writes nothing and the writer runs the INSERT
 * statement that wrote these rows up to 0.4.0 instead, one per chunk,
 * which takes the same columns as arrays and unnests them, so that the
 * trigger fires and the policies apply as they did.
 *
 * The results are the changes applied: every address the call touched is
 * deleted first (one statement per chunk, below), then the rows of the
 * addresses whose last change is not a retraction are inserted.
 *
 * All run inside SPI, as the extension's owner, in a memory context the
 * caller resets; the caller holds the pipeline's row lock.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/sink_rows.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"

#include "engine/engine.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

/* Rows per statement: bounds the arrays built for one statement */
#define SF_SINK_CHUNK		8192

typedef enum SfRowsPlanId
{
	PLAN_CHANGELOG_PUT,
	PLAN_RESULTS_DELETE,
	PLAN_RESULTS_PUT,
	PLAN_LATE_PUT,
	NUM_ROWS_PLANS
} SfRowsPlanId;

/*
 * Objects are schema-qualified and operators spelled OPERATOR(pg_catalog.x),
 * so the caller's search_path cannot redirect a statement.  The INSERTs
 * are the fallback of sf_bulk_insert (see the header comment); their
 * arguments are the columns of the writers' SfBulkColumn lists, in order,
 * the constant ones as scalars.
 */
static const SfPlanText rows_plan_text[NUM_ROWS_PLANS] = {
	[PLAN_CHANGELOG_PUT] = {
		"INSERT INTO streamforge.changelog (pipeline, seq, op, window_name, "
		"key, window_start, window_end, count, sum, min, max, window_start_ts, "
		"window_end_ts, aggregates, epoch) "
		"SELECT $1, u.*, $15 FROM ROWS FROM (pg_catalog.unnest($2), "
		"pg_catalog.unnest($3), pg_catalog.unnest($4), pg_catalog.unnest($5), "
		"pg_catalog.unnest($6), pg_catalog.unnest($7), pg_catalog.unnest($8), "
		"pg_catalog.unnest($9), pg_catalog.unnest($10), "
		"pg_catalog.unnest($11), pg_catalog.unnest($12), "
		"pg_catalog.unnest($13), pg_catalog.unnest($14)) AS u",
		15, {TEXTOID, INT8ARRAYOID, TEXTARRAYOID, TEXTARRAYOID, TEXTARRAYOID,
			INT8ARRAYOID, INT8ARRAYOID, INT8ARRAYOID, NUMERICARRAYOID,
			INT8ARRAYOID, INT8ARRAYOID, TIMESTAMPTZARRAYOID,
		TIMESTAMPTZARRAYOID, JSONBARRAYOID, INT8OID}
	},
	/*
	 * The rows to delete are found by one index lookup per address (the
	 * LATERAL subquery, kept apart by OFFSET 0, is parameterized by the
	 * address, so it can only be a nested loop over the addresses with the
	 * lookup inside) and deleted by ctid (a TID scan).  No join between the
	 * addresses and the table is left to the planner, so the statement's
	 * cost does not depend on enable_hashjoin and friends: a join here once
	 * took a nested loop over both sides.  sf_sink_results() plans it with
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
	[PLAN_RESULTS_PUT] = {
		"INSERT INTO streamforge.results (pipeline, window_name, key, "
		"window_start, window_end, count, sum, min, max, seq, final, "
		"window_start_ts, window_end_ts, aggregates, epoch) "
		"SELECT $1, u.*, $15 FROM ROWS FROM (pg_catalog.unnest($2), "
		"pg_catalog.unnest($3), pg_catalog.unnest($4), pg_catalog.unnest($5), "
		"pg_catalog.unnest($6), pg_catalog.unnest($7), pg_catalog.unnest($8), "
		"pg_catalog.unnest($9), pg_catalog.unnest($10), "
		"pg_catalog.unnest($11), pg_catalog.unnest($12), "
		"pg_catalog.unnest($13), pg_catalog.unnest($14)) AS u",
		15, {TEXTOID, TEXTARRAYOID, TEXTARRAYOID, INT8ARRAYOID, INT8ARRAYOID,
			INT8ARRAYOID, NUMERICARRAYOID, INT8ARRAYOID, INT8ARRAYOID,
			INT8ARRAYOID, BOOLARRAYOID, TIMESTAMPTZARRAYOID,
		TIMESTAMPTZARRAYOID, JSONBARRAYOID, INT8OID}
	},
	[PLAN_LATE_PUT] = {
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
};

static SPIPlanPtr rows_plans[NUM_ROWS_PLANS];

/* ----------------------------------------------------------------
 * Columns
 * ----------------------------------------------------------------
 */

/* Columns of a changelog row, of a results row and of a late event */
static const char *const changelog_names[] = {
	"pipeline", "seq", "op", "window_name", "key", "window_start",
	"window_end", "count", "sum", "min", "max", "window_start_ts",
	"window_end_ts", "aggregates", "epoch"
};
static const char *const results_names[] = {
	"pipeline", "window_name", "key", "window_start", "window_end", "count",
	"sum", "min", "max", "seq", "final", "window_start_ts", "window_end_ts",
	"aggregates", "epoch"
};
static const char *const late_names[] = {
	"pipeline", "late_seq", "partition", "source_offset", "event_id", "key",
	"event_time", "value", "watermark", "event_time_ts"
};

#define CHANGELOG_NCOLS	lengthof(changelog_names)
#define RESULTS_NCOLS	lengthof(results_names)
#define LATE_NCOLS		lengthof(late_names)

/* ncols columns named names, of n rows each, to fill */
static SfBulkColumn *
rows_columns(const char *const *names, int ncols, int n)
{
	SfBulkColumn *cols = palloc0(ncols * sizeof(SfBulkColumn));

	for (int k = 0; k < ncols; k++)
	{
		cols[k].name = names[k];
		cols[k].values = palloc(n * sizeof(Datum));
	}
	return cols;
}

/* A column whose value is the same in every row */
static void
rows_constant(SfBulkColumn *col, Datum value, bool isnull)
{
	col->values = NULL;
	col->nulls = NULL;
	col->constant = value;
	col->constant_null = isnull;
}

/* The aggregates column of a measures pipeline (NULL for one-measure) */
static void
rows_aggregates(SfBulkColumn *col, const SfPipeline *p,
				const SfAgg *const *aggs, int n)
{
	if (p->def.measures == NULL)
	{
		rows_constant(col, (Datum) 0, true);
		return;
	}
	for (int i = 0; i < n; i++)
		col->values[i] = sf_aggregates_jsonb(p->def.measures, aggs[i]);
}

/*
 * The statement's arguments for the columns (the fallback): a constant
 * column as a scalar, the others as arrays of the statement's element
 * types (a column of NULLs: a NULL array, which ROWS FROM pads)
 */
static void
rows_arguments(const SfBulkColumn *cols, int ncols, int n,
			   const SfPlanText *text, Datum *values, char *nulls)
{
	for (int k = 0; k < ncols; k++)
	{
		const SfBulkColumn *c = &cols[k];
		Oid			elem;
		int16		len;
		bool		byval;
		char		align;
		int			dims[1] = {n};
		int			lbs[1] = {1};

		nulls[k] = ' ';
		if (c->values == NULL)
		{
			values[k] = c->constant;
			if (c->constant_null)
				nulls[k] = 'n';
			continue;
		}
		elem = get_element_type(text->argtypes[k]);
		Assert(OidIsValid(elem));
		get_typlenbyvalalign(elem, &len, &byval, &align);
		values[k] = PointerGetDatum(construct_md_array(c->values,
													   c->nulls, 1, dims, lbs,
													   elem, len, byval,
													   align));
	}
}

/* Write the rows: in bulk, or by the statement (the fallback) */
static void
rows_write(const char *table, SfRowsPlanId id, const SfBulkColumn *cols,
		   int ncols, int n)
{
	Datum		values[16];
	char		nulls[16];

	Assert(ncols == rows_plan_text[id].nargs);
	if (sf_bulk_insert(table, cols, ncols, n))
		return;
	rows_arguments(cols, ncols, n, &rows_plan_text[id], values, nulls);
	sf_run_plan(&rows_plans[id], &rows_plan_text[id], values, nulls, false,
				SPI_OK_INSERT);
}

/* A row's address, at cols[0..3][i]: window name, key, start, end */
static void
rows_address(SfPipeline *p, const SfAddress *addr, SfBulkColumn *cols, int i)
{
	cols[0].values[i] = CStringGetTextDatum(p->def.windows[addr->window].name);
	cols[1].values[i] = sf_string_text(addr->key);
	cols[2].values[i] = Int64GetDatum(addr->start);
	cols[3].values[i] = Int64GetDatum(addr->end);
}

/* A row's aggregate, at cols[0..3][i]: count, sum, min, max */
static void
rows_agg(const SfAgg *agg, SfBulkColumn *cols, int i)
{
	cols[0].values[i] = Int64GetDatum(agg->count);
	cols[1].values[i] = sf_int128_numeric(agg->sum);
	cols[2].values[i] = Int64GetDatum(agg->min);
	cols[3].values[i] = Int64GetDatum(agg->max);
}

/* ----------------------------------------------------------------
 * Writers
 * ----------------------------------------------------------------
 */

/* Append the n changes at items (n <= SF_SINK_CHUNK) to the changelog */
void
sf_sink_changelog(SfPipeline *p, Datum name, int64 epoch, int64 unit_us,
				  const SfChange *items, int n)
{
	SfBulkColumn *cols = rows_columns(changelog_names, CHANGELOG_NCOLS, n);
	Datum		retract = CStringGetTextDatum("retract");
	Datum		upsert = CStringGetTextDatum("upsert");
	Datum		final = CStringGetTextDatum("final");
	const SfAgg **aggs = palloc(n * sizeof(SfAgg *));
	int64	   *starts = palloc(n * sizeof(int64));
	int64	   *ends = palloc(n * sizeof(int64));

	for (int i = 0; i < n; i++)
	{
		const SfChange *c = &items[i];

		cols[1].values[i] = Int64GetDatum(c->seq);
		cols[2].values[i] = c->op == SF_RETRACT ? retract :
			c->op == SF_UPSERT ? upsert : final;
		rows_address(p, &c->row.addr, cols + 3, i);
		rows_agg(&c->row.agg, cols + 7, i);
		aggs[i] = &c->row.agg;
		starts[i] = c->row.addr.start;
		ends[i] = c->row.addr.end;
	}
	rows_constant(&cols[0], name, false);
	sf_ts_column(&cols[11], starts, n, unit_us);
	sf_ts_column(&cols[12], ends, n, unit_us);
	rows_aggregates(&cols[13], p, aggs, n);
	rows_constant(&cols[14], Int64GetDatum(epoch), false);
	rows_write("changelog", PLAN_CHANGELOG_PUT, cols, CHANGELOG_NCOLS, n);
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
 * Delete the n addresses at cols[1..4] (window name, key, start, end) from
 * the results, with enable_seqscan off while the statement is planned (see
 * rows_plan_text)
 */
static void
results_delete(Datum name, const SfBulkColumn *cols, int n)
{
	Datum		values[5];
	char		nulls[5];
	int			nestlevel;
	SfBulkColumn address[5];

	rows_constant(&address[0], name, false);
	memcpy(&address[1], &cols[1], 4 * sizeof(SfBulkColumn));
	rows_arguments(address, 5, n, &rows_plan_text[PLAN_RESULTS_DELETE],
				   values, nulls);
	nestlevel = NewGUCNestLevel();
	(void) set_config_option("enable_seqscan", "off", PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	sf_run_plan(&rows_plans[PLAN_RESULTS_DELETE],
				&rows_plan_text[PLAN_RESULTS_DELETE], values, nulls, false,
				SPI_OK_DELETE);
	AtEOXact_GUC(true, nestlevel);
}

/*
 * Apply a list of changes to the results table.  Only the last change of
 * each address counts (an upsert leaves the row, a retraction removes it),
 * whatever came before it in the list: ingest_batch concatenates the
 * changes of several operations, which may touch one address repeatedly.
 * Every address touched is deleted first, then the final upserts inserted,
 * so the table holds one row per address even when rows were copied into
 * it by configure_outputs.  A row whose end is below final_below is written
 * final: 'update' mode's mark-final of the same call (sink.c) would set it
 * right after, as an UPDATE of every such row (PG_INT64_MIN: none).
 */
void
sf_sink_results(SfPipeline *p, Datum name, int64 epoch, int64 unit_us,
				int64 final_below, const SfChangeList *changes,
				SfSinkTyped *typed)
{
	const SfChange **order = palloc(changes->n * sizeof(SfChange *));
	const SfChange **last = palloc(changes->n * sizeof(SfChange *));
	int			nlast = 0;
	int			i;
	int			from;

	for (i = 0; i < changes->n; i++)
		order[i] = &changes->items[i];
	qsort_arg(order, changes->n, sizeof(SfChange *), change_cmp, p);
	for (i = 0; i < changes->n; i++)
		if (i + 1 == changes->n ||
			sf_address_cmp(p, &order[i]->row.addr, &order[i + 1]->row.addr) != 0)
			last[nlast++] = order[i];

	/*
	 * An aggregate's window: the table of its results (sink_typed.c); the
	 * changes of any other window stay here
	 */
	if (typed != NULL)
	{
		const SfChange **own = palloc(nlast * sizeof(SfChange *));
		int			nown = 0;
		int			nrest = 0;
		int64		max_start;

		for (i = 0; i < nlast; i++)
			if (strcmp(p->def.windows[last[i]->row.addr.window].name,
					   typed->window) == 0)
				own[nown++] = last[i];
			else
				last[nrest++] = last[i];
		nlast = nrest;
		max_start = nown > 0 ? sf_sink_typed_max_start(typed) : PG_INT64_MIN;
		for (from = 0; from < nown; from += SF_SINK_CHUNK)
		{
			CHECK_FOR_INTERRUPTS();
			sf_sink_typed_results(p, typed, epoch, unit_us, final_below,
								  max_start, own + from,
								  Min(SF_SINK_CHUNK, nown - from));
		}
	}

	for (from = 0; from < nlast; from += SF_SINK_CHUNK)
	{
		int			n = Min(SF_SINK_CHUNK, nlast - from);
		SfBulkColumn *cols = rows_columns(results_names, RESULTS_NCOLS, n);
		int64	   *starts = palloc(n * sizeof(int64));
		int64	   *ends = palloc(n * sizeof(int64));
		const SfAgg **aggs = palloc(n * sizeof(SfAgg *));
		int			nput = 0;

		CHECK_FOR_INTERRUPTS();
		for (i = 0; i < n; i++)
			rows_address(p, &last[from + i]->row.addr, cols + 1, i);
		results_delete(name, cols, n);

		/* the upserts, compacted in place */
		for (i = 0; i < n; i++)
		{
			const SfChange *c = last[from + i];

			if (c->op == SF_RETRACT)
				continue;
			for (int k = 1; k <= 4; k++)
				cols[k].values[nput] = cols[k].values[i];
			rows_agg(&c->row.agg, cols + 5, nput);
			cols[9].values[nput] = Int64GetDatum(c->seq);
			cols[10].values[nput] = BoolGetDatum(c->op == SF_FINAL ||
												 c->row.addr.end < final_below);
			aggs[nput] = &c->row.agg;
			starts[nput] = c->row.addr.start;
			ends[nput] = c->row.addr.end;
			nput++;
		}
		if (nput == 0)
			continue;
		rows_constant(&cols[0], name, false);
		sf_ts_column(&cols[11], starts, nput, unit_us);
		sf_ts_column(&cols[12], ends, nput, unit_us);
		rows_aggregates(&cols[13], p, aggs, nput);
		rows_constant(&cols[14], Int64GetDatum(epoch), false);
		rows_write("results", PLAN_RESULTS_PUT, cols, RESULTS_NCOLS, nput);
	}
}

/*
 * Append the late events late_seq [from, from + n) (n <= SF_SINK_CHUNK) to
 * the late output
 */
void
sf_sink_late(SfPipeline *p, Datum name, int64 unit_us, int64 from, int n)
{
	SfBulkColumn *cols = rows_columns(late_names, LATE_NCOLS, n);
	int64	   *times = palloc(n * sizeof(int64));

	for (int i = 0; i < n; i++)
	{
		const SfLateEvent *l = sf_late_row(p, from + i);

		if (l == NULL)
			elog(ERROR, "streamforge: late event " INT64_FORMAT " of pipeline \"%s\" is gone",
				 from + i, p->def.name);

		cols[1].values[i] = Int64GetDatum(l->late_seq);
		cols[2].values[i] = CStringGetTextDatum(p->def.partitions[l->partition]);
		cols[3].values[i] = Int64GetDatum(l->source_offset);
		cols[4].values[i] = PointerGetDatum(cstring_to_text_with_len(l->event->event_id,
																	 l->event->event_id_len));
		cols[5].values[i] = sf_string_text(l->event->key);
		cols[6].values[i] = Int64GetDatum(l->event->event_time);
		cols[7].values[i] = Int64GetDatum(l->event->value);
		cols[8].values[i] = Int64GetDatum(l->watermark);
		times[i] = l->event->event_time;
	}
	rows_constant(&cols[0], name, false);
	sf_ts_column(&cols[9], times, n, unit_us);
	rows_write("late_output", PLAN_LATE_PUT, cols, LATE_NCOLS, n);
}
