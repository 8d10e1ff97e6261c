/*-------------------------------------------------------------------------
 *
 * sink_top.c
 *	  The top-N of an aggregate (issue 44, item 4; docs/sql-aggregates.md,
 *	  Top-N per window), kept in step with its results by the sink.
 *
 * A write call that changes the results of an aggregate with a top-N
 * changes the top-N only in the windows of its changes.  sink_emit
 * (sink.c) takes, before it writes the results, the top-N rows of those
 * windows (sf_sink_top_before), and after it wrote them (and the
 * measures' aggregates) hands that snapshot to sf_sink_top_apply, which
 * takes the new rows of the same windows and writes the difference to
 * streamforge.top_changelog: a row that left the top N is a 'delete', one
 * that entered an 'insert', one whose rank or values changed an 'update'.
 * Then results_retention's trim, with the 'delete's of the rows it drops
 * (aggregate_top_trim: the windows it trims are often not among the
 * call's).  So the work is bounded by the groups of the changed and
 * trimmed windows, and the changelog is exact against the view at every
 * call.
 *
 * Two ways to the same rows.  An aggregate with a results table of its
 * own (SfSinkTyped) and no PARTITION BY beyond the window is ranked here
 * (0.4.0, issue 44 item 7): the rows of the windows are read by the
 * table's address index (start_u) and handed to a receiver that keeps the
 * best N of each window with the comparators of <name>_top's
 * row_number() (top_sort_support); only those rows are then read as
 * jsonb, by the expressions aggregate_top_snapshot uses on the view (the
 * columns of <name> but final; the identity: window and grouping
 * columns); the difference is taken and ordered as aggregate_top_apply
 * takes it (top_write), and inserted by a kept plan.  Any other aggregate
 * goes through the SQL functions aggregate_top_snapshot and
 * aggregate_top_apply (67_aggregates_top.sql), which resync_outputs and
 * aggregate_top_trim use too.  The description of the top-N and the kept
 * plans (SfSinkTop) live with the sink's configuration (sink.c), and are
 * dropped when it is reloaded (a change of streamforge.aggregate
 * invalidates it).
 *
 * Runs inside sink_emit's SPI connection, as the extension's owner.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/sink_top.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/params.h"
#include "parser/parse_oper.h"
#include "storage/itemptr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgrprotos.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/sortsupport.h"
#include "utils/timestamp.h"

#include "engine/engine.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

/*
 * An aggregate's top-N as the sink ranks it (kept in SfSinkTyped, in the
 * sink's configuration context, so reloaded with it).  usable is false when
 * the SQL functions rank it instead: a PARTITION BY beyond the window, or a
 * description this file does not know.
 */
struct SfSinkTop
{
	bool		usable;
	int64		n;				/* the top N */
	bool		descending;		/* the order column's direction */
	bool		nulls_first;
	int			nkeys;			/* the grouping columns: the ties */
	char	   *scan_sql;		/* the rows of some windows */
	char	   *rows_sql;		/* the rows of some ctids, as jsonb */
	SortSupport ssup;			/* [0] the order, [1 .. nkeys] the keys, or
								 * NULL until the first scan */
	SPIPlanPtr	scan_plan;
	SPIPlanPtr	rows_plan;
};

/* One row of the results table read by the scan (top_receive) */
typedef struct TopRow
{
	ItemPointerData tid;
	Datum	   *vals;			/* the order column, then the keys */
	bool	   *nulls;
	int64		rank;			/* a winner's, in its window */
} TopRow;

/* A window: its bounds, the hash key (zeroed padding), and its best rows */
typedef struct TopWindowKey
{
	int64		start;
	int64		end;
	bool		end_null;
} TopWindowKey;

typedef struct TopWindow
{
	TopWindowKey key;
	int			n;
	int			cap;
	TopRow	  **best;			/* best first, at most the top N */
} TopWindow;

/* A row of the top-N: <name>_top's rank and row (aggregate_top_snapshot) */
typedef struct TopEntry
{
	int64		rank;
	Datum		row;			/* jsonb: every column of <name> but final */
	Datum		id;				/* jsonb: the window and grouping columns */
	Datum		start;			/* timestamptz */
	Datum		end;
	bool		end_null;
} TopEntry;

/* The top-N of a call's windows before its results are written */
struct SfTopSnapshot
{
	Datum		name;
	Datum		starts;			/* bigint[]: the windows' starts */
	SfSinkTyped *typed;			/* NULL: the SQL functions */
	Datum		json;			/* the SQL functions' snapshot */
	int			n;
	TopEntry   *rows;
};

/* A change of the top-N, one row of top_changelog */
typedef struct TopChange
{
	int			o;				/* 0 delete, 1 update, 2 insert */
	const TopEntry *e;			/* the row written (after's, before's if
								 * deleted) */
	int64		old_rank;		/* update: before's rank */
} TopChange;

/* The statements of every aggregate */
typedef enum SfTopPlanId
{
	PLAN_TOP_DESCRIBE,
	PLAN_TOP_LAST,
	PLAN_TOP_INSERT,
	NUM_TOP_PLANS
} SfTopPlanId;

static const SfPlanText top_plan_text[NUM_TOP_PLANS] = {
	/*
	 * the pieces of the scan: N, the direction, whether the top-N has a
	 * PARTITION BY, the order column and the grouping columns of the ties
	 * (top.keys) as columns of the table, and the select list of <name>
	 * (aggregate_results_view: its keys, the window, its aggregates), and
	 * the identity of a row (aggregate_top_apply's ids)
	 */
	[PLAN_TOP_DESCRIBE] = {
		"SELECT (x.t OPERATOR(pg_catalog.->>) 'n')::pg_catalog.int8, "
		"(x.t OPERATOR(pg_catalog.->>) 'descending')::pg_catalog.bool, "
		"(x.t OPERATOR(pg_catalog.->>) 'nulls_first')::pg_catalog.bool, "
		"pg_catalog.jsonb_array_length(x.t OPERATOR(pg_catalog.->) 'partition'), "
		"(SELECT pg_catalog.format('r.%I', 'a' OPERATOR(pg_catalog.||) e.o) "
		"FROM pg_catalog.jsonb_array_elements(g.spec OPERATOR(pg_catalog.->) 'aggregates') "
		"WITH ORDINALITY AS e(a, o) WHERE (e.a OPERATOR(pg_catalog.->>) 'name') "
		"OPERATOR(pg_catalog.=) (x.t OPERATOR(pg_catalog.->>) 'order') LIMIT 1), "
		"ARRAY(SELECT (SELECT pg_catalog.format('r.%I', 'k' OPERATOR(pg_catalog.||) "
		"(k.k OPERATOR(pg_catalog.->>) 'part')::pg_catalog.int4) "
		"FROM pg_catalog.jsonb_array_elements(g.spec OPERATOR(pg_catalog.->) 'keys') AS k(k) "
		"WHERE (k.k OPERATOR(pg_catalog.->>) 'name') OPERATOR(pg_catalog.=) n.n LIMIT 1) "
		"FROM pg_catalog.jsonb_array_elements_text(x.t OPERATOR(pg_catalog.->) 'keys') "
		"WITH ORDINALITY AS n(n, o) ORDER BY n.o), "
		"(SELECT pg_catalog.string_agg(pg_catalog.format('r.%I AS %I, ', 'k' OPERATOR(pg_catalog.||) "
		"(e.k OPERATOR(pg_catalog.->>) 'part')::pg_catalog.int4, e.k OPERATOR(pg_catalog.->>) 'name'), '' "
		"ORDER BY e.o) FROM pg_catalog.jsonb_array_elements(g.spec OPERATOR(pg_catalog.->) 'keys') "
		"WITH ORDINALITY AS e(k, o)), "
		"(SELECT pg_catalog.string_agg(pg_catalog.format('r.%I AS %I, ', 'a' OPERATOR(pg_catalog.||) e.o, "
		"e.a OPERATOR(pg_catalog.->>) 'name'), '' ORDER BY e.o) "
		"FROM pg_catalog.jsonb_array_elements(g.spec OPERATOR(pg_catalog.->) 'aggregates') "
		"WITH ORDINALITY AS e(a, o)), "
		"pg_catalog.quote_literal(ARRAY['window_start', 'window_end']::pg_catalog.text[] "
		"OPERATOR(pg_catalog.||) ARRAY(SELECT pg_catalog.jsonb_array_elements_text("
		"x.t OPERATOR(pg_catalog.->) 'keys'))) "
		"FROM streamforge.aggregate AS g, LATERAL (SELECT g.spec OPERATOR(pg_catalog.->) 'top') AS x(t) "
		"WHERE g.name OPERATOR(pg_catalog.=) $1 AND x.t IS NOT NULL",
		1, {TEXTOID}
	},
	/* the last seq: consecutive under the pipeline's row lock */
	[PLAN_TOP_LAST] = {
		"SELECT pg_catalog.max(c.seq) FROM streamforge.top_changelog AS c "
		"WHERE c.pipeline OPERATOR(pg_catalog.=) $1",
		1, {TEXTOID}
	},
	[PLAN_TOP_INSERT] = {
		"INSERT INTO streamforge.top_changelog (pipeline, seq, op, window_start, "
		"window_end, rank, old_rank, row) "
		"SELECT $1, u.s, u.o, u.ws, u.we, u.r, u.x, u.j FROM ROWS FROM ("
		"pg_catalog.unnest($2), pg_catalog.unnest($3), pg_catalog.unnest($4), "
		"pg_catalog.unnest($5), pg_catalog.unnest($6), pg_catalog.unnest($7), "
		"pg_catalog.unnest($8)) AS u(s, o, ws, we, r, x, j)",
		8, {TEXTOID, INT8ARRAYOID, TEXTARRAYOID, TIMESTAMPTZARRAYOID,
		TIMESTAMPTZARRAYOID, INT8ARRAYOID, INT8ARRAYOID, JSONBARRAYOID}
	},
};

static SPIPlanPtr top_plans[NUM_TOP_PLANS];

static int
int64_cmp(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return x < y ? -1 : x > y ? 1 : 0;
}

/* the distinct window starts of the changes, as a bigint[] */
static Datum
top_starts(const SfChangeList *changes)
{
	Datum	   *elems = palloc(changes->n * sizeof(Datum));
	int64	   *starts = palloc(changes->n * sizeof(int64));
	int			n = 0;
	int			i;

	for (i = 0; i < changes->n; i++)
		starts[i] = changes->items[i].row.addr.start;
	qsort(starts, changes->n, sizeof(int64), int64_cmp);
	for (i = 0; i < changes->n; i++)
		if (i == 0 || starts[i] != starts[i - 1])
			elems[n++] = Int64GetDatum(starts[i]);
	return PointerGetDatum(construct_array(elems, n, INT8OID, 8,
										   FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/* ----------------------------------------------------------------
 * The SQL functions (an aggregate the sink does not rank itself)
 * ----------------------------------------------------------------
 */

/* the top-N rows of the windows that start at starts, as jsonb */
static Datum
top_snapshot_sql(Datum name, Datum starts)
{
	Oid			types[2] = {TEXTOID, INT8ARRAYOID};
	Datum		values[2] = {name, starts};
	bool		isnull;
	Datum		d;

	if (SPI_execute_with_args("SELECT streamforge_internal.aggregate_top_snapshot($1, $2)",
							  2, types, values, NULL, false, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "streamforge: could not read the top-N of \"%s\"",
			 TextDatumGetCString(name));
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (isnull)
		elog(ERROR, "streamforge: the top-N of \"%s\" is null",
			 TextDatumGetCString(name));
	d = datumCopy(d, false, -1);
	SPI_freetuptable(SPI_tuptable);
	return d;
}

/* the changelog of the top-N: what changed since before */
static void
top_apply_sql(Datum name, Datum starts, Datum before)
{
	Oid			types[3] = {TEXTOID, INT8ARRAYOID, JSONBOID};
	Datum		values[3] = {name, starts, before};

	if (SPI_execute_with_args("SELECT streamforge_internal.aggregate_top_apply($1, $2, $3)",
							  3, types, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "streamforge: could not write the top-N changes of \"%s\"",
			 TextDatumGetCString(name));
	SPI_freetuptable(SPI_tuptable);
}

/* ----------------------------------------------------------------
 * The sink's own ranking
 * ----------------------------------------------------------------
 */

/*
 * The top-N of the aggregate whose results table is t, described once per
 * load of the sink's configuration (its context owns it).  Caller is in
 * SPI, as the extension's owner.
 */
static SfSinkTop *
top_describe(SfSinkTyped *t, Datum name)
{
	MemoryContext cxt = GetMemoryChunkContext(t);
	SfSinkTop  *top;
	HeapTuple	tup;
	TupleDesc	desc;
	bool		isnull;
	char	   *order;
	char	   *keys_r;
	char	   *aggs_r;
	char	   *ids;
	char	   *table;
	ArrayType  *keycols;
	Datum	   *elems;
	bool	   *enulls;
	int			nelems;
	StringInfoData scan;

	if (t->top != NULL)
		return t->top;
	top = MemoryContextAllocZero(cxt, sizeof(SfSinkTop));
	sf_run_plan(&top_plans[PLAN_TOP_DESCRIBE], &top_plan_text[PLAN_TOP_DESCRIBE],
				&name, NULL, false, SPI_OK_SELECT);
	if (SPI_processed != 1)
	{
		t->top = top;			/* not usable */
		return top;
	}
	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	top->n = DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));
	if (isnull)
		goto unusable;
	top->descending = DatumGetBool(SPI_getbinval(tup, desc, 2, &isnull));
	if (isnull)
		goto unusable;
	top->nulls_first = DatumGetBool(SPI_getbinval(tup, desc, 3, &isnull));
	if (isnull)
		goto unusable;
	/* a PARTITION BY of grouping columns: the SQL functions */
	if (DatumGetInt32(SPI_getbinval(tup, desc, 4, &isnull)) != 0 || isnull)
		goto unusable;
	order = SPI_getvalue(tup, desc, 5);
	keycols = DatumGetArrayTypeP(SPI_getbinval(tup, desc, 6, &isnull));
	keys_r = SPI_getvalue(tup, desc, 7);
	aggs_r = SPI_getvalue(tup, desc, 8);
	ids = SPI_getvalue(tup, desc, 9);
	if (order == NULL || aggs_r == NULL || ids == NULL)
		goto unusable;
	deconstruct_array(keycols, TEXTOID, -1, false, TYPALIGN_INT, &elems,
					  &enulls, &nelems);
	table = quote_qualified_identifier(get_namespace_name(get_rel_namespace(t->relid)),
									   get_rel_name(t->relid));

	/*
	 * The scan: every row of the windows (by the address index, whose
	 * leading column is start_u), with the order column and the ties.  A
	 * window outside timestamptz's range has no window_start: <name>_top's
	 * snapshot, which selects windows by it, never sees it.
	 */
	initStringInfo(&scan);
	appendStringInfo(&scan, "SELECT r.ctid, r.window_start, r.window_end, %s", order);
	for (int i = 0; i < nelems; i++)
	{
		if (enulls[i])
			goto unusable;
		appendStringInfo(&scan, ", %s", TextDatumGetCString(elems[i]));
	}
	appendStringInfo(&scan, " FROM %s AS r WHERE r.start_u OPERATOR(pg_catalog.=) ANY ($1) "
					 "AND r.window_start IS NOT NULL", table);
	top->nkeys = nelems;
	top->scan_sql = MemoryContextStrdup(cxt, scan.data);

	/*
	 * The rows of the top-N, as aggregate_top_snapshot makes them: the
	 * columns of <name> (aggregate_results_view) but final, as jsonb, and
	 * their identity, as aggregate_top_apply makes it
	 */
	top->rows_sql = MemoryContextStrdup(cxt, psprintf(
		"SELECT r.ctid, r.window_start, r.window_end, y.j, "
		"(SELECT pg_catalog.jsonb_object_agg(k.k, y.j OPERATOR(pg_catalog.->) k.k) "
		"FROM pg_catalog.unnest(%s::pg_catalog.text[]) AS k(k)) "
		"FROM %s AS r, LATERAL (SELECT pg_catalog.to_jsonb(x) OPERATOR(pg_catalog.-) 'final' AS j "
		"FROM (SELECT %sr.window_start AS window_start, r.window_end AS window_end, "
		"%sr.final AS final) AS x) AS y "
		"WHERE r.ctid OPERATOR(pg_catalog.=) ANY ($1)",
		ids, table, keys_r == NULL ? "" : keys_r, aggs_r));
	top->usable = true;
	SPI_freetuptable(SPI_tuptable);
	t->top = top;
	return top;

unusable:
	top->usable = false;
	SPI_freetuptable(SPI_tuptable);
	t->top = top;
	return top;
}

/* Forget the kept plans of a top-N (the configuration cache is reloaded) */
void
sf_sink_top_forget(SfSinkTop *top)
{
	if (top == NULL)
		return;
	if (top->scan_plan != NULL)
		SPI_freeplan(top->scan_plan);
	if (top->rows_plan != NULL)
		SPI_freeplan(top->rows_plan);
	top->scan_plan = NULL;
	top->rows_plan = NULL;
}

/* a kept plan of one of a top-N's statements */
static SPIPlanPtr
top_keep(SPIPlanPtr *slot, const char *sql, Oid type)
{
	if (*slot == NULL)
	{
		SPIPlanPtr	plan = SPI_prepare(sql, 1, &type);

		if (plan == NULL)
			elog(ERROR, "streamforge: could not prepare statement \"%s\": %s",
				 sql, SPI_result_code_string(SPI_result));
		if (SPI_keepplan(plan) != 0)
			elog(ERROR, "streamforge: could not keep statement \"%s\"", sql);
		*slot = plan;
	}
	return *slot;
}

/*
 * The comparators of <name>_top's ORDER BY: the order column in its
 * direction, then the grouping columns ascending, NULLs last, each by its
 * type's default ordering and its column's collation, as the view's
 * row_number() sorts them.  From the scan's columns 4 onwards.
 */
static void
top_sort_support(SfSinkTop *top, TupleDesc desc, MemoryContext cxt)
{
	SortSupport ssup = MemoryContextAllocZero(cxt, (top->nkeys + 1) * sizeof(SortSupportData));

	for (int i = 0; i <= top->nkeys; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, 3 + i);
		Oid			lt;
		Oid			gt;
		bool		desc_order = (i == 0 && top->descending);

		get_sort_group_operators(att->atttypid, !desc_order, false, desc_order,
								 &lt, NULL, &gt, NULL);
		ssup[i].ssup_cxt = cxt;
		ssup[i].ssup_collation = att->attcollation;
		ssup[i].ssup_nulls_first = (i == 0 && top->nulls_first);
		ssup[i].abbreviate = false;
		PrepareSortSupportFromOrderingOp(desc_order ? gt : lt, &ssup[i]);
	}
	top->ssup = ssup;
}

static int
top_row_cmp(const SfSinkTop *top, const TopRow *a, const TopRow *b)
{
	for (int i = 0; i <= top->nkeys; i++)
	{
		int			c = ApplySortComparator(a->vals[i], a->nulls[i],
											b->vals[i], b->nulls[i],
											&top->ssup[i]);

		if (c != 0)
			return c;
	}
	return 0;
}

/* Keep row among the best N of its window (best first; ties: the earlier) */
static void
top_window_add(const SfSinkTop *top, TopWindow *w, TopRow *row)
{
	int			lo = 0;
	int			hi = w->n;

	if (w->n == top->n && top_row_cmp(top, row, w->best[w->n - 1]) >= 0)
		return;
	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		if (top_row_cmp(top, row, w->best[mid]) < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (w->n == top->n)
		w->n--;					/* the last one leaves */
	else if (w->n == w->cap)
	{
		w->cap = (int) Min((int64) w->cap * 2, top->n);
		w->best = repalloc(w->best, w->cap * sizeof(TopRow *));
	}
	memmove(&w->best[lo + 1], &w->best[lo], (w->n - lo) * sizeof(TopRow *));
	w->best[lo] = row;
	w->n++;
}

static int
tid_cmp(const void *a, const void *b)
{
	return ItemPointerCompare((ItemPointer) &((const TopRow *) a)->tid,
							  (ItemPointer) &((const TopRow *) b)->tid);
}

/*
 * The scan's receiver: each row is ranked in its window as it comes, and
 * copied only if it is among the best N so far (rows are not accumulated
 * in a tuple table)
 */
typedef struct TopReceiver
{
	DestReceiver pub;
	SfSinkTop  *top;
	HTAB	   *windows;
	MemoryContext cxt;			/* the windows and the rows kept */
	int			nrows;			/* rows kept, at most */
} TopReceiver;

static bool
top_receive(TupleTableSlot *slot, DestReceiver *self)
{
	TopReceiver *r = (TopReceiver *) self;
	SfSinkTop  *top = r->top;
	TupleDesc	desc = slot->tts_tupleDescriptor;
	int			ncols = top->nkeys + 1;
	MemoryContext old;
	TopWindowKey key;
	TopWindow  *w;
	TopRow		cand;
	TopRow	   *row;
	bool		found;

	CHECK_FOR_INTERRUPTS();
	slot_getallattrs(slot);
	if (top->ssup == NULL)
		top_sort_support(top, desc, GetMemoryChunkContext(top));
	memset(&key, 0, sizeof(key));
	key.start = DatumGetTimestampTz(slot->tts_values[1]);
	key.end_null = slot->tts_isnull[2];
	key.end = key.end_null ? 0 : DatumGetTimestampTz(slot->tts_values[2]);
	w = hash_search(r->windows, &key, HASH_ENTER, &found);
	cand.vals = &slot->tts_values[3];
	cand.nulls = &slot->tts_isnull[3];
	if (found && w->n == top->n &&
		top_row_cmp(top, &cand, w->best[w->n - 1]) >= 0)
		return true;			/* not among the best N */

	old = MemoryContextSwitchTo(r->cxt);
	if (!found)
	{
		w->n = 0;
		w->cap = (int) Min(top->n, 8);
		w->best = palloc(w->cap * sizeof(TopRow *));
	}
	row = palloc(sizeof(TopRow));
	row->tid = *((ItemPointer) DatumGetPointer(slot->tts_values[0]));
	row->vals = palloc(ncols * sizeof(Datum));
	row->nulls = palloc(ncols * sizeof(bool));
	for (int k = 0; k < ncols; k++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, 3 + k);

		row->nulls[k] = cand.nulls[k];
		row->vals[k] = cand.nulls[k] ? (Datum) 0 :
			datumCopy(cand.vals[k], att->attbyval, att->attlen);
	}
	top_window_add(top, w, row);
	r->nrows++;
	MemoryContextSwitchTo(old);
	return true;
}

static void
top_receive_startup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
}

static void
top_receive_nothing(DestReceiver *self)
{
}

/*
 * The top-N rows of the windows that start at starts, as <name>_top shows
 * them (aggregate_top_snapshot): every row of those windows read once by
 * the address index, the best N of each window kept (rather than the sort
 * of them all that the view's row_number() makes), then the rows of those
 * as jsonb.  The entries are allocated in the caller's context.  Caller is
 * in SPI, as the extension's owner, and holds the pipeline's row lock.
 */
static TopEntry *
top_snapshot(SfSinkTop *top, Datum starts, int *nentries)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext cxt;
	TopReceiver recv;
	SPIExecuteOptions options;
	HASHCTL		ctl;
	HASH_SEQ_STATUS seq;
	TopWindow  *w;
	TopRow	   *winners;
	Datum	   *tids;
	TopEntry   *entries;
	int			nestlevel;

	*nentries = 0;
	if (top->n <= 0)
		return NULL;
	cxt = AllocSetContextCreate(CurrentMemoryContext, "streamforge top-N",
								ALLOCSET_DEFAULT_SIZES);
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(TopWindowKey);
	ctl.entrysize = sizeof(TopWindow);
	ctl.hcxt = cxt;
	memset(&recv, 0, sizeof(recv));
	recv.pub.receiveSlot = top_receive;
	recv.pub.rStartup = top_receive_startup;
	recv.pub.rShutdown = top_receive_nothing;
	recv.pub.rDestroy = top_receive_nothing;
	recv.pub.mydest = DestNone;
	recv.top = top;
	recv.cxt = cxt;
	recv.windows = hash_create("streamforge top-N windows", 64, &ctl,
							   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);

	/* the rows of the windows, planned once per backend by the index */
	memset(&options, 0, sizeof(options));
	options.params = makeParamList(1);
	options.params->numParams = 1;
	options.params->params[0].value = starts;
	options.params->params[0].isnull = false;
	options.params->params[0].pflags = PARAM_FLAG_CONST;
	options.params->params[0].ptype = INT8ARRAYOID;
	options.read_only = false;
	options.dest = &recv.pub;
	nestlevel = NewGUCNestLevel();
	(void) set_config_option("enable_seqscan", "off", PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	/* (a SELECT whose rows go to another receiver is SPI_OK_UTILITY) */
	if (SPI_execute_plan_extended(top_keep(&top->scan_plan, top->scan_sql, INT8ARRAYOID),
								  &options) != SPI_OK_UTILITY)
		elog(ERROR, "streamforge: could not read the results of an aggregate");
	AtEOXact_GUC(true, nestlevel);
	if (recv.nrows == 0)
	{
		MemoryContextDelete(cxt);
		return NULL;
	}
	MemoryContextSwitchTo(cxt);

	/* the winners, with their ranks, by ctid */
	winners = palloc(recv.nrows * sizeof(TopRow));
	*nentries = 0;
	hash_seq_init(&seq, recv.windows);
	while ((w = hash_seq_search(&seq)) != NULL)
		for (int r = 0; r < w->n; r++)
		{
			winners[*nentries] = *w->best[r];
			winners[*nentries].rank = r + 1;
			(*nentries)++;
		}
	qsort(winners, *nentries, sizeof(TopRow), tid_cmp);
	tids = palloc(*nentries * sizeof(Datum));
	for (int i = 0; i < *nentries; i++)
		tids[i] = PointerGetDatum(&winners[i].tid);

	/* their rows, as jsonb */
	{
		Datum		arg = PointerGetDatum(construct_array(tids, *nentries, TIDOID,
														  sizeof(ItemPointerData),
														  false, TYPALIGN_SHORT));

		if (SPI_execute_plan(top_keep(&top->rows_plan, top->rows_sql, TIDARRAYOID),
							 &arg, NULL, false, 0) != SPI_OK_SELECT ||
			SPI_processed != (uint64) *nentries)
			elog(ERROR, "streamforge: could not read the top-N rows of an aggregate");
	}
	MemoryContextSwitchTo(caller);
	entries = palloc0(*nentries * sizeof(TopEntry));
	for (int i = 0; i < *nentries; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		TopRow		key;
		TopRow	   *found;
		TopEntry   *e;
		bool		isnull;

		key.tid = *((ItemPointer) DatumGetPointer(SPI_getbinval(tup, desc, 1, &isnull)));
		found = bsearch(&key, winners, *nentries, sizeof(TopRow), tid_cmp);
		if (found == NULL)
			elog(ERROR, "streamforge: a top-N row of an aggregate is gone");
		e = &entries[found - winners];
		e->rank = found->rank;
		e->start = SPI_getbinval(tup, desc, 2, &isnull);
		e->end = SPI_getbinval(tup, desc, 3, &e->end_null);
		/* copied whole (a 4-byte header): compared often */
		e->row = PointerGetDatum(PG_DETOAST_DATUM_COPY(SPI_getbinval(tup, desc, 4, &isnull)));
		e->id = PointerGetDatum(PG_DETOAST_DATUM_COPY(SPI_getbinval(tup, desc, 5, &isnull)));
	}
	SPI_freetuptable(SPI_tuptable);
	MemoryContextDelete(cxt);
	return entries;
}

static int
jsonb_datum_cmp(Datum a, Datum b)
{
	return DatumGetInt32(DirectFunctionCall2(jsonb_cmp, a, b));
}

static int
entry_id_cmp(const void *a, const void *b)
{
	return jsonb_datum_cmp(((const TopEntry *) a)->id,
						   ((const TopEntry *) b)->id);
}

static int
timestamp_null_cmp(Datum a, bool anull, Datum b, bool bnull)
{
	if (anull || bnull)
		return anull == bnull ? 0 : anull ? 1 : -1;	/* NULLs last */
	return DatumGetTimestampTz(a) < DatumGetTimestampTz(b) ? -1 :
		DatumGetTimestampTz(a) > DatumGetTimestampTz(b) ? 1 : 0;
}

/*
 * aggregate_top_apply's order of the changes: deletes, updates, inserts,
 * each by window and rank (then, where the SQL leaves it open, by the
 * row's identity)
 */
static int
change_cmp(const void *a, const void *b)
{
	const TopChange *x = a;
	const TopChange *y = b;
	int			c;

	if (x->o != y->o)
		return x->o < y->o ? -1 : 1;
	c = timestamp_null_cmp(x->e->start, false, y->e->start, false);
	if (c != 0)
		return c;
	c = timestamp_null_cmp(x->e->end, x->e->end_null, y->e->end, y->e->end_null);
	if (c != 0)
		return c;
	if (x->e->rank != y->e->rank)
		return x->e->rank < y->e->rank ? -1 : 1;
	return jsonb_datum_cmp(x->e->id, y->e->id);
}

/*
 * Append to streamforge.top_changelog the changes from before to after (two
 * snapshots of the same windows), as aggregate_top_apply does: a row is
 * identified by its window and grouping columns (its id); one only before
 * is a 'delete' (its last rank and row), one only after an 'insert', one in
 * both whose rank or row changed an 'update' (old_rank: before's); seq
 * follows the aggregate's last.  Caller holds the pipeline's row lock.
 */
static void
top_write(Datum name, TopEntry *before, int nbefore, TopEntry *after,
		  int nafter)
{
	int			cap = nbefore + nafter + 1;
	TopChange  *changes = palloc(cap * sizeof(TopChange));
	int			n = 0;
	int			i = 0;
	int			j = 0;
	int64		last;
	bool		isnull;
	Datum		values[8];
	char		nulls[8] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
	Datum	   *seqs;
	Datum	   *ops;
	Datum	   *starts;
	Datum	   *ends;
	bool	   *endnulls;
	Datum	   *ranks;
	Datum	   *olds;
	bool	   *oldnulls;
	Datum	   *rows;
	int			dims[1];
	int			lbs[1] = {1};

	qsort(before, nbefore, sizeof(TopEntry), entry_id_cmp);
	qsort(after, nafter, sizeof(TopEntry), entry_id_cmp);
	while (i < nbefore || j < nafter)
	{
		int			c = i >= nbefore ? 1 : j >= nafter ? -1 :
			jsonb_datum_cmp(before[i].id, after[j].id);

		if (c < 0)
		{
			changes[n].o = 0;
			changes[n++].e = &before[i++];
		}
		else if (c > 0)
		{
			changes[n].o = 2;
			changes[n++].e = &after[j++];
		}
		else
		{
			/* every pair of the same id, as the SQL's FULL JOIN */
			int			ie = i + 1;
			int			je = j + 1;

			while (ie < nbefore && jsonb_datum_cmp(before[ie].id, before[i].id) == 0)
				ie++;
			while (je < nafter && jsonb_datum_cmp(after[je].id, after[j].id) == 0)
				je++;
			if (n + (ie - i) * (je - j) + (nbefore - ie) + (nafter - je) >= cap)
			{
				cap = n + (ie - i) * (je - j) + (nbefore - ie) + (nafter - je) + 1;
				changes = repalloc(changes, cap * sizeof(TopChange));
			}
			for (int a = j; a < je; a++)
				for (int b = i; b < ie; b++)
					if (after[a].rank != before[b].rank ||
						jsonb_datum_cmp(after[a].row, before[b].row) != 0)
					{
						changes[n].o = 1;
						changes[n].e = &after[a];
						changes[n++].old_rank = before[b].rank;
					}
			i = ie;
			j = je;
		}
	}
	if (n == 0)
		return;
	qsort(changes, n, sizeof(TopChange), change_cmp);

	sf_run_plan(&top_plans[PLAN_TOP_LAST], &top_plan_text[PLAN_TOP_LAST],
				&name, NULL, false, SPI_OK_SELECT);
	last = SPI_processed == 1 ? sf_getint64(1, &isnull) : 0;
	if (SPI_processed != 1 || isnull)
		last = 0;
	SPI_freetuptable(SPI_tuptable);

	seqs = palloc(n * sizeof(Datum));
	ops = palloc(n * sizeof(Datum));
	starts = palloc(n * sizeof(Datum));
	ends = palloc(n * sizeof(Datum));
	endnulls = palloc(n * sizeof(bool));
	ranks = palloc(n * sizeof(Datum));
	olds = palloc(n * sizeof(Datum));
	oldnulls = palloc(n * sizeof(bool));
	rows = palloc(n * sizeof(Datum));
	for (int k = 0; k < n; k++)
	{
		const TopChange *c = &changes[k];

		seqs[k] = Int64GetDatum(last + k + 1);
		ops[k] = CStringGetTextDatum(c->o == 0 ? "delete" : c->o == 1 ? "update" : "insert");
		starts[k] = c->e->start;
		ends[k] = c->e->end;
		endnulls[k] = c->e->end_null;
		ranks[k] = Int64GetDatum(c->e->rank);
		olds[k] = Int64GetDatum(c->o == 1 ? c->old_rank : 0);
		oldnulls[k] = c->o != 1;
		rows[k] = c->e->row;
	}
	dims[0] = n;
	values[0] = name;
	values[1] = PointerGetDatum(construct_array(seqs, n, INT8OID, 8,
												FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	values[2] = PointerGetDatum(construct_array(ops, n, TEXTOID, -1, false,
												TYPALIGN_INT));
	values[3] = PointerGetDatum(construct_array(starts, n, TIMESTAMPTZOID, 8,
												FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	values[4] = PointerGetDatum(construct_md_array(ends, endnulls, 1, dims, lbs,
												   TIMESTAMPTZOID, 8,
												   FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	values[5] = PointerGetDatum(construct_array(ranks, n, INT8OID, 8,
												FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	values[6] = PointerGetDatum(construct_md_array(olds, oldnulls, 1, dims, lbs,
												   INT8OID, 8,
												   FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	values[7] = PointerGetDatum(construct_array(rows, n, JSONBOID, -1, false,
												TYPALIGN_INT));
	sf_run_plan(&top_plans[PLAN_TOP_INSERT], &top_plan_text[PLAN_TOP_INSERT],
				values, nulls, false, SPI_OK_INSERT);
	if (SPI_processed != (uint64) n)
		elog(ERROR, "streamforge: could not write the top-N changes of \"%s\"",
			 TextDatumGetCString(name));
}

/* ----------------------------------------------------------------
 * Entry points (sink.c)
 * ----------------------------------------------------------------
 */

/*
 * The top-N of the windows of changes, before the call's results are
 * written: by the sink's ranking for an aggregate with a results table of
 * its own (typed) and no PARTITION BY beyond the window, by
 * aggregate_top_snapshot otherwise.  Allocated in the caller's context,
 * which must last until sf_sink_top_apply.  Caller is in SPI, as the
 * extension's owner.
 */
SfTopSnapshot *
sf_sink_top_before(Datum name, SfSinkTyped *typed, const SfChangeList *changes)
{
	SfTopSnapshot *s = palloc0(sizeof(SfTopSnapshot));

	s->name = name;
	s->starts = top_starts(changes);
	if (typed != NULL && top_describe(typed, name)->usable)
	{
		s->typed = typed;
		s->rows = top_snapshot(typed->top, s->starts, &s->n);
	}
	else
		s->json = top_snapshot_sql(name, s->starts);
	return s;
}

/* the changelog of the top-N: what changed since before */
void
sf_sink_top_apply(SfTopSnapshot *before)
{
	TopEntry   *after;
	int			nafter;

	if (before->typed == NULL)
	{
		top_apply_sql(before->name, before->starts, before->json);
		return;
	}
	after = top_snapshot(before->typed->top, before->starts, &nafter);
	top_write(before->name, before->rows, before->n, after, nafter);
}

/*
 * results_retention's trim of an aggregate with a top-N: the rows it drops
 * leave the top N with a 'delete' each (aggregate_top_trim), whether or not
 * the call changed their windows.  Runs after sf_sink_top_apply.
 */
void
sf_sink_top_trim(Datum name)
{
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {name};

	if (SPI_execute_with_args("SELECT streamforge_internal.aggregate_top_trim($1)",
							  1, types, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "streamforge: could not trim the results of \"%s\"",
			 TextDatumGetCString(name));
	SPI_freetuptable(SPI_tuptable);
}
