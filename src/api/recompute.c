/*-------------------------------------------------------------------------
 *
 * recompute.c
 *	  streamforge_internal.recompute_events and recompute_measures: new
 *	  mappings of a pipeline's accepted events, its live windows rebuilt
 *	  (0.4.0, issue 47, item 3; docs/joins.md, "Recomputing").
 *
 * streamforge.recompute(aggregate, from, to) (sql/objects/
 * 69_recompute.sql) has recompute_rows (below) run the mapping of the
 * aggregate's attachment over the rows of its source table as they are
 * now (the dimensions as they are now), as the table's owner, and hands
 * the result here: the mappings
 * (streamforge.event[] or measures_delivery[], source_offset ignored) and
 * the event_ids of the rows that no longer pass the joins and filter
 * (their events are taken out).
 * Here, as a definition change (api/manage.c): the admin privilege checked
 * and the pipeline locked by persist/redefine.c, the new state built by
 * the engine (engine/redefine.c, sf_pipeline_remap), stored as a new
 * snapshot, and its changes handed to the outputs.  The call returns how
 * many accepted events it mapped, how many of them changed, how many it
 * took out, and how many changes that made.
 *
 * A direct call can give an admin's accepted events in the range any key
 * and value: no more than an admin can do with restore().
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/recompute.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "api/api.h"

/* One recompute: its arguments, and what it did */
typedef struct RecomputeOp
{
	FunctionCallInfo fcinfo;	/* (pipeline, mappings, dropped, from, to) */
	bool		measures;		/* measures_delivery[], else event[] */
	MemoryContext cxt;			/* the SQL function's */
	SfRemap		remap;
	SfPipelineDef names;		/* in cxt: the windows of the changes */
	SfChangeList changes;		/* in cxt */
} RecomputeOp;

/* The event_ids of argument 2 (NULL elements skipped) into op->remap */
static void
dropped_ids(RecomputeOp *op)
{
	FunctionCallInfo fcinfo = op->fcinfo;
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	SfDelivery *ds;
	int			k = 0;

	op->remap.dropped = NULL;
	op->remap.ndropped = 0;
	if (PG_ARGISNULL(2))
		return;
	deconstruct_array(PG_GETARG_ARRAYTYPE_P(2), TEXTOID, -1, false,
					  TYPALIGN_INT, &elems, &nulls, &n);
	ds = palloc_extended(Max(n, 1) * sizeof(SfDelivery),
						 MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	for (int i = 0; i < n; i++)
	{
		if (nulls[i])
			continue;
		sf_text_bytes(elems[i], &ds[k].event_id, &ds[k].event_id_len);
		k++;
	}
	op->remap.dropped = ds;
	op->remap.ndropped = k;
}

/*
 * The mappings of argument 1 into op->remap, as append_batch and
 * append_measures_batch read them; an incomplete one is refused.
 */
static void
mappings(RecomputeOp *op, const SfPipeline *old)
{
	FunctionCallInfo fcinfo = op->fcinfo;
	SfWriteBatch b = {0};

	sf_arg_not_null(fcinfo, 1, op->measures ? "deliveries" : "events");
	if (op->measures)
	{
		b.assign = true;
		sf_unpack_measures(old, PG_GETARG_ARRAYTYPE_P(1), &b);
	}
	else
	{
		int		   *nullfield;

		b.ds = sf_unpack_deliveries(PG_GETARG_ARRAYTYPE_P(1), false,
									&nullfield, &b.n);
		b.bad = nullfield;
	}
	for (int i = 0; b.bad != NULL && i < b.n; i++)
	{
		if (b.bad[i] == -2)
			continue;
		if (op->measures && b.bad[i] == SF_BAD_MEASURES)
		{
			/* raises the measures array's error */
			sf_measures_values(old, DatumGetArrayTypeP((Datum) b.ds[i].value),
							   b.mv + (Size) i * old->def.measures->width, i);
			elog(ERROR, "streamforge: measures of mapping %d rejected", i + 1);
		}
		ereport(ERROR,
				errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				errmsg("mapping %d of the recompute must not be null or have a null field",
					   i + 1));
	}
	op->remap.ds = b.ds;
	op->remap.n = b.n;
	op->remap.mv = b.mv;
}

/*
 * The SfRedefineFn: the caller is known to be an admin; read the
 * arguments (pipeline first, then arguments, as every call) and build.
 * May run more than once (persist/redefine.c): each starts afresh.
 */
static SfPipeline *
recompute_build(SfPipeline *old, void *arg)
{
	RecomputeOp *op = (RecomputeOp *) arg;
	FunctionCallInfo fcinfo = op->fcinfo;
	MemoryContext oldcxt = MemoryContextSwitchTo(op->cxt);
	SfPipeline *p;

	op->changes.n = 0;
	sf_require_kind(old, op->measures);
	mappings(op, old);
	dropped_ids(op);
	op->remap.has_from = !PG_ARGISNULL(3);
	op->remap.from = op->remap.has_from ? PG_GETARG_INT64(3) : 0;
	op->remap.has_to = !PG_ARGISNULL(4);
	op->remap.to = op->remap.has_to ? PG_GETARG_INT64(4) : 0;
	p = sf_pipeline_remap(CurTransactionContext, old, &op->remap,
						  &op->changes, &op->names);
	MemoryContextSwitchTo(oldcxt);
	return p;
}

static Datum
recompute_run(FunctionCallInfo fcinfo, bool measures)
{
	char	   *pipeline = sf_arg_text(fcinfo, 0, "pipeline");
	RecomputeOp op = {0};
	SfPipeline *p;
	SfPipeline	named;
	TupleDesc	tupdesc;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};

	op.fcinfo = fcinfo;
	op.measures = measures;
	op.cxt = CurrentMemoryContext;
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "streamforge: return type must be a row type");
	p = sf_persist_redefine_concurrently(pipeline, recompute_build, &op);

	/* the changes to the outputs, as a definition change hands them */
	named = *p;
	named.def = op.names;
	named.def.measures = p->def.measures;
	sf_sink_emit(&named, &op.changes, sf_late_keep(p));

	values[0] = Int64GetDatum(op.remap.matched);
	values[1] = Int64GetDatum(op.remap.remapped);
	values[2] = Int64GetDatum(op.remap.removed);
	values[3] = Int64GetDatum((int64) op.changes.n);
	return HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values,
											 nulls));
}

PG_FUNCTION_INFO_V1(sf_recompute_events);
Datum
sf_recompute_events(PG_FUNCTION_ARGS)
{
	return recompute_run(fcinfo, false);
}

PG_FUNCTION_INFO_V1(sf_recompute_measures);
Datum
sf_recompute_measures(PG_FUNCTION_ARGS)
{
	return recompute_run(fcinfo, true);
}

/*
 * streamforge_internal.recompute_rows(aggregate, from_time, to_time): the
 * mapping of a recompute, run as the source table's owner in a
 * security-restricted operation (persist/recompute_rows.c).  Returns
 * (measures, events, deliveries, dropped, from_unit, to_unit).
 */
PG_FUNCTION_INFO_V1(sf_recompute_rows);
Datum
sf_recompute_rows(PG_FUNCTION_ARGS)
{
	SfRecomputeRows r;
	TupleDesc	tupdesc;
	Datum		values[6];
	bool		nulls[6];

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "streamforge: return type must be a row type");
	sf_persist_recompute_rows(PG_ARGISNULL(0) ? (Datum) 0 : PG_GETARG_DATUM(0),
							  PG_ARGISNULL(0),
							  PG_ARGISNULL(1) ? (Datum) 0 : PG_GETARG_DATUM(1),
							  PG_ARGISNULL(1),
							  PG_ARGISNULL(2) ? (Datum) 0 : PG_GETARG_DATUM(2),
							  PG_ARGISNULL(2), &r);
	values[0] = BoolGetDatum(r.measures);
	nulls[0] = false;
	values[1] = values[2] = r.mappings;
	nulls[1] = r.mappings_null || r.measures;
	nulls[2] = r.mappings_null || !r.measures;
	values[3] = r.dropped;
	nulls[3] = r.dropped_null;
	values[4] = Int64GetDatum(r.from_unit);
	nulls[4] = r.from_null;
	values[5] = Int64GetDatum(r.to_unit);
	nulls[5] = r.to_null;
	return HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values,
											 nulls));
}
