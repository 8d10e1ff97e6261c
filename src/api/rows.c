/*-------------------------------------------------------------------------
 *
 * rows.c
 *	  The rows the SQL functions return, in one place: a pipeline's rows
 *	  (live, visible, final_rows, backfill) and a write's changes, each in
 *	  one of two layouts (the one read core, inspect.c sf_read, and the one
 *	  write core, write.c, choose it by the SQL function, not by the
 *	  pipeline):
 *	    contract	streamforge.result / streamforge.change: count, sum, min
 *					and max of the (first) measure (sf_row_values);
 *	    aggregates	streamforge.measures_result / measures_change: the
 *					count and the declared aggregates as one jsonb
 *					(persist/measures.c sf_aggregates_jsonb).
 *
 * Memory: values are built in a per-row context reset after each row (the
 * pg_walinspect pattern), with an interrupt check per row; every
 * set-returning function materializes its result in one call.  An empty
 * change list returns no tuplestore at all (sf_return_changes).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/rows.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "api/api.h"

/*
 * Fill values[0..7] and nulls[0..7] with a row, the columns window_name ..
 * max of streamforge.result (and of streamforge.change after its seq and
 * op: sf_return_changes passes values + 2).
 */
void
sf_row_values(const SfPipeline *p, const SfRow *r, Datum *values,
			  bool *nulls)
{
	values[0] = CStringGetTextDatum(p->def.windows[r->addr.window].name);
	values[1] = sf_string_text(r->addr.key);
	values[2] = Int64GetDatum(r->addr.start);
	values[3] = Int64GetDatum(r->addr.end);
	values[4] = Int64GetDatum(r->agg.count);
	values[5] = sf_int128_numeric(r->agg.sum);
	values[6] = Int64GetDatum(r->agg.min);
	values[7] = Int64GetDatum(r->agg.max);
	memset(nulls, 0, 8 * sizeof(bool));
}

/*
 * Materialize rows[0..n) of p as a set of streamforge.result rows (the
 * caller has called InitMaterializedSRF): one per-row context reset after
 * each row, an interrupt check per row (the pg_walinspect pattern).
 */
void
sf_put_rows(FunctionCallInfo fcinfo, const SfPipeline *p, const SfRow *rows,
			int64 n)
{
#define SF_PUT_ROWS_COLS 8
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext rowcxt;

	Assert(rsinfo->setDesc->natts == SF_PUT_ROWS_COLS);
	rowcxt = AllocSetContextCreate(CurrentMemoryContext, "streamforge row",
								   ALLOCSET_SMALL_SIZES);
	for (int64 i = 0; i < n; i++)
	{
		Datum		values[SF_PUT_ROWS_COLS];
		bool		nulls[SF_PUT_ROWS_COLS];
		MemoryContext old;

		CHECK_FOR_INTERRUPTS();
		old = MemoryContextSwitchTo(rowcxt);
		sf_row_values(p, &rows[i], values, nulls);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		MemoryContextSwitchTo(old);
		MemoryContextReset(rowcxt);
	}
	MemoryContextDelete(rowcxt);
#undef SF_PUT_ROWS_COLS
}

/*
 * Materialize a change list as SETOF streamforge.change, or with
 * aggregates as SETOF streamforge.measures_change.
 *
 * Most per-row write calls change nothing visible (an event into a window
 * that stays open), and a per-row caller pays this once per event: for an
 * empty list, only the caller's context is checked and no tuplestore, tuple
 * descriptor or memory context is made.  A materialize-mode function that
 * leaves setResult NULL returns the empty set (execSRF.c, for both FROM and
 * the target list), so the result is the same as an empty tuplestore's.
 */
void
sf_return_changes(FunctionCallInfo fcinfo, const SfPipeline *p,
				  const SfChangeList *changes, bool aggregates)
{
#define SF_CHANGE_COLS 10
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext rowcxt;
	MemoryContext old;
	int			i;

	if (changes->n == 0)
	{
		/* the checks of InitMaterializedSRF, with the same errors */
		if (rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("set-valued function called in context that cannot accept a set")));
		if (!(rsinfo->allowedModes & SFRM_Materialize))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("materialize mode required, but it is not allowed in this context")));
		rsinfo->returnMode = SFRM_Materialize;
		rsinfo->setResult = NULL;
		rsinfo->setDesc = NULL;
		return;
	}

	InitMaterializedSRF(fcinfo, 0);
	if (aggregates)
	{
		sf_put_aggregate_rows(fcinfo, p, changes, NULL, changes->n);
		return;
	}
	Assert(rsinfo->setDesc->natts == SF_CHANGE_COLS);
	rowcxt = AllocSetContextCreate(CurrentMemoryContext, "streamforge row",
								   ALLOCSET_SMALL_SIZES);
	for (i = 0; i < changes->n; i++)
	{
		const SfChange *c = &changes->items[i];
		Datum		values[SF_CHANGE_COLS];
		bool		nulls[SF_CHANGE_COLS];

		CHECK_FOR_INTERRUPTS();
		old = MemoryContextSwitchTo(rowcxt);
		values[0] = Int64GetDatum(c->seq);
		values[1] = CStringGetTextDatum(sf_change_op_name(c->op));
		nulls[0] = nulls[1] = false;
		sf_row_values(p, &c->row, values + 2, nulls + 2);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		MemoryContextSwitchTo(old);
		MemoryContextReset(rowcxt);
	}
	MemoryContextDelete(rowcxt);
#undef SF_CHANGE_COLS
}


/*
 * Materialize changes (or rows, with changes NULL) of a measures pipeline
 * with their declared aggregates, as streamforge.measures_change rows (or
 * streamforge.measures_result rows).  The caller has called
 * InitMaterializedSRF.
 */
void
sf_put_aggregate_rows(FunctionCallInfo fcinfo, const SfPipeline *p,
					  const SfChangeList *changes, const SfRow *rows, int64 n)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext rowcxt;
	int			off = changes ? 2 : 0;

	Assert(rsinfo->setDesc->natts == off + 6);
	rowcxt = AllocSetContextCreate(CurrentMemoryContext, "streamforge row",
								   ALLOCSET_SMALL_SIZES);
	for (int64 i = 0; i < n; i++)
	{
		const SfRow *r = changes ? &changes->items[i].row : &rows[i];
		Datum		values[8];
		bool		nulls[8] = {0};
		MemoryContext old;

		CHECK_FOR_INTERRUPTS();
		old = MemoryContextSwitchTo(rowcxt);
		if (changes)
		{
			values[0] = Int64GetDatum(changes->items[i].seq);
			values[1] = CStringGetTextDatum(sf_change_op_name(changes->items[i].op));
		}
		values[off + 0] = CStringGetTextDatum(p->def.windows[r->addr.window].name);
		values[off + 1] = sf_string_text(r->addr.key);
		values[off + 2] = Int64GetDatum(r->addr.start);
		values[off + 3] = Int64GetDatum(r->addr.end);
		values[off + 4] = Int64GetDatum(r->agg.count);
		values[off + 5] = sf_aggregates_jsonb(p->def.measures, &r->agg);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		MemoryContextSwitchTo(old);
		MemoryContextReset(rowcxt);
	}
	MemoryContextDelete(rowcxt);
}
