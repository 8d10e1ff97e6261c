/*-------------------------------------------------------------------------
 *
 * inspect.c
 *	  Reading a pipeline: watermark, live, visible, live_aggregates,
 *	  visible_aggregates (the read core, read_rows), late_events,
 *	  partitions and stats.  Each opens the pipeline for reading (read
 *	  privilege) and materializes its rows in one call.
 *
 * The set-returning functions follow pg_walinspect: InitMaterializedSRF,
 * a local ..._COLS checked against the result type, and one temporary
 * context for a row's values, reset after each row is put into the
 * tuplestore (which copies it), so that a call's memory does not grow with
 * its rows beyond the tuplestore's own.  The rows are read from the cached
 * pipeline, which no one changes during the call.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/inspect.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "api/api.h"

PG_FUNCTION_INFO_V1(sf_watermark);
Datum
sf_watermark(PG_FUNCTION_ARGS)
{
	SfPipeline *p = sf_arg_pipeline(fcinfo, false);

	if (!p->has_watermark)
		PG_RETURN_NULL();
	PG_RETURN_INT64(p->watermark);
}

/*
 * The read core: a pipeline's rows, every bucket (live) or only what its
 * emit mode shows (visible), in the contract layout (streamforge.result:
 * live, visible) or with the declared aggregates (measures_result:
 * live_aggregates, visible_aggregates, which need a measures pipeline).
 * Its entry points below are one-line aliases with constant flags, folded
 * by the compiler.  The order: the pipeline (read privilege), the kind,
 * then 'final' shows no row that can still change (docs/semantics.md).
 */
static pg_attribute_always_inline void
read_rows(FunctionCallInfo fcinfo, bool visible_only, bool aggregates)
{
	SfPipeline *p = sf_arg_pipeline(fcinfo, false);
	SfRow	   *rows;
	int64		n;

	if (aggregates && p->def.measures == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("pipeline \"%s\" has one unnamed measure", p->def.name),
				 errhint("Read it with streamforge.live() or visible().")));
	InitMaterializedSRF(fcinfo, 0);
	if (visible_only && p->def.emit == SF_EMIT_FINAL)
		return;
	n = sf_collect_rows(p, visible_only, &rows);
	if (aggregates)
		sf_put_aggregate_rows(fcinfo, p, NULL, rows, n);
	else
		sf_put_rows(fcinfo, p, rows, n);
}

PG_FUNCTION_INFO_V1(sf_live);
Datum
sf_live(PG_FUNCTION_ARGS)
{
	read_rows(fcinfo, false, false);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(sf_visible);
Datum
sf_visible(PG_FUNCTION_ARGS)
{
	read_rows(fcinfo, true, false);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(sf_live_aggregates);
Datum
sf_live_aggregates(PG_FUNCTION_ARGS)
{
	read_rows(fcinfo, false, true);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(sf_visible_aggregates);
Datum
sf_visible_aggregates(PG_FUNCTION_ARGS)
{
	read_rows(fcinfo, true, true);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(sf_late_events);
Datum
sf_late_events(PG_FUNCTION_ARGS)
{
#define SF_LATE_COLS 8
	SfPipeline *p = sf_arg_pipeline(fcinfo, false);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext rowcxt;
	int64		i;

	InitMaterializedSRF(fcinfo, 0);
	Assert(rsinfo->setDesc->natts == SF_LATE_COLS);
	rowcxt = AllocSetContextCreate(CurrentMemoryContext, "streamforge row",
								   ALLOCSET_SMALL_SIZES);
	for (i = 0; i < p->nlate; i++)
	{
		const SfLateEvent *l = &p->late[i];
		const SfIdentity *e = l->event;
		Datum		values[SF_LATE_COLS];
		bool		nulls[SF_LATE_COLS] = {0};
		MemoryContext old;
		int			c = 0;

		CHECK_FOR_INTERRUPTS();
		old = MemoryContextSwitchTo(rowcxt);
		values[c++] = Int64GetDatum(l->late_seq);
		values[c++] = CStringGetTextDatum(p->def.partitions[l->partition]);
		values[c++] = Int64GetDatum(l->source_offset);
		values[c++] = PointerGetDatum(cstring_to_text_with_len(e->event_id,
															   e->event_id_len));
		values[c++] = sf_string_text(e->key);
		values[c++] = Int64GetDatum(e->event_time);
		values[c++] = Int64GetDatum(e->value);
		values[c++] = Int64GetDatum(l->watermark);
		Assert(c == SF_LATE_COLS);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		MemoryContextSwitchTo(old);
		MemoryContextReset(rowcxt);
	}
	MemoryContextDelete(rowcxt);
	return (Datum) 0;
#undef SF_LATE_COLS
}

PG_FUNCTION_INFO_V1(sf_partitions);
Datum
sf_partitions(PG_FUNCTION_ARGS)
{
#define SF_PARTITION_COLS 4
	SfPipeline *p = sf_arg_pipeline(fcinfo, false);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext rowcxt;
	int			i;

	InitMaterializedSRF(fcinfo, 0);
	Assert(rsinfo->setDesc->natts == SF_PARTITION_COLS);
	rowcxt = AllocSetContextCreate(CurrentMemoryContext, "streamforge row",
								   ALLOCSET_SMALL_SIZES);
	for (i = 0; i < p->def.npartitions; i++)
	{
		const SfPartition *part = &p->partitions[i];
		Datum		values[SF_PARTITION_COLS];
		bool		nulls[SF_PARTITION_COLS] = {0};
		MemoryContext old;
		int			c = 0;

		CHECK_FOR_INTERRUPTS();
		old = MemoryContextSwitchTo(rowcxt);
		values[c++] = CStringGetTextDatum(part->name);
		values[c++] = Int64GetDatum(sf_is_parallel(p) ?
									sf_persist_parallel_consumed(p, i) :
									part->consumed);
		nulls[c] = !part->has_progress;
		values[c++] = Int64GetDatum(part->progress);
		values[c++] = BoolGetDatum(part->idle);
		Assert(c == SF_PARTITION_COLS);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		MemoryContextSwitchTo(old);
		MemoryContextReset(rowcxt);
	}
	MemoryContextDelete(rowcxt);
	return (Datum) 0;
#undef SF_PARTITION_COLS
}

PG_FUNCTION_INFO_V1(sf_stats);
Datum
sf_stats(PG_FUNCTION_ARGS)
{
#define SF_STATS_COLS 15
	SfPipeline *p = sf_arg_pipeline(fcinfo, false);
	SfStats		s;
	TupleDesc	tupdesc;
	Datum		values[SF_STATS_COLS];
	bool		nulls[SF_STATS_COLS] = {0};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "streamforge: return type must be a row type");
	if (tupdesc->natts != SF_STATS_COLS)
		elog(ERROR, "streamforge: stats() has an unexpected row type");
	if (sf_is_parallel(p))
		sf_persist_parallel_stats(p, &s);	/* head and lanes (issue 46) */
	else
		sf_get_stats(p, &s);
	values[0] = Int64GetDatum(s.deliveries);
	values[1] = Int64GetDatum(s.accepted);
	values[2] = Int64GetDatum(s.duplicate_ids);
	values[3] = Int64GetDatum(s.late_events);
	values[4] = Int64GetDatum(s.offset_replays);
	values[5] = Int64GetDatum(s.changes_emitted);
	values[6] = Int64GetDatum(s.live_buckets);
	values[7] = Int64GetDatum(s.visible_rows);
	values[8] = Int32GetDatum((int32) s.partitions);
	values[9] = Int32GetDatum((int32) s.idle_partitions);
	values[10] = Int64GetDatum(s.remembered_identities);
	values[11] = Int64GetDatum(s.remembered_offsets);
	values[12] = Int64GetDatum(s.remembered_late_events);
	values[13] = Int64GetDatum(s.forgotten_offsets);
	values[14] = Int64GetDatum(s.forgotten_late_events);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc),
													  values, nulls)));
#undef SF_STATS_COLS
}
