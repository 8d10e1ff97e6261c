/*-------------------------------------------------------------------------
 *
 * emit.c
 *	  Emit modes from SQL: create_pipeline's emit argument and set_emit
 *	  (docs/semantics.md, Emit modes; the modes are engine/emit.c's).
 *
 * set_emit is a definition change like set_lateness (manage.c):
 * persist/redefine.c checks admin and locks the pipeline, building the new
 * state first when it can (sf_persist_redefine_concurrently), the engine
 * carries the state over to the new mode and says what the change emits
 * (sf_emit_redefined: switching from 'final' upserts the rows a consumer
 * has not seen yet), and the new mode is stored in the pipeline's row.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/emit.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"

#include "api/api.h"

/* The emit mode named by text d; 22023 if there is none (define.c) */
static uint8
emit_mode(Datum d)
{
	return sf_option_enum_arg(sf_option_find("emit"), d);
}

typedef struct EmitOp
{
	uint8		emit;
	MemoryContext cxt;			/* the SQL function's */
	SfPipelineDef names;		/* in cxt: the windows, by name */
	SfChangeList changes;		/* in cxt */
} EmitOp;

/*
 * The SfRedefineFn of set_emit: old's state in the new mode.  It may run
 * more than once, before the lock is taken (persist/redefine.c).
 */
static SfPipeline *
emit_build(SfPipeline *old, void *arg)
{
	EmitOp	   *op = (EmitOp *) arg;
	MemoryContext oldcxt = MemoryContextSwitchTo(op->cxt);
	SfPipelineDef def = old->def;
	SfPipeline *p;

	op->changes.n = 0;			/* a build before may have left some */
	def.emit = op->emit;
	p = sf_pipeline_redefine(CurTransactionContext, old, &def, &op->changes,
							 &op->names);
	MemoryContextSwitchTo(oldcxt);
	return p;
}

/*
 * set_emit(pipeline, emit) -> SETOF change: change the emit mode; returns
 * (and writes to the outputs) what the change emits.  Admin.
 */
PG_FUNCTION_INFO_V1(sf_set_emit);
Datum
sf_set_emit(PG_FUNCTION_ARGS)
{
	char	   *pipeline = sf_arg_text(fcinfo, 0, "pipeline");
	EmitOp		op = {0};
	SfPipeline *p;
	SfPipeline	named;

	sf_arg_not_null(fcinfo, 1, "emit");
	op.emit = emit_mode(PG_GETARG_DATUM(1));
	op.cxt = CurrentMemoryContext;
	p = sf_persist_redefine_concurrently(pipeline, emit_build, &op);

	named = *p;
	named.def = op.names;
	named.def.emit = op.emit;
	sf_finish_write(fcinfo, &named, &op.changes, sf_late_keep(p));
	p->finalized_synced = named.finalized_synced;
	return (Datum) 0;
}

/* emit_mode(pipeline) -> text: the pipeline's emit mode.  Read. */
PG_FUNCTION_INFO_V1(sf_emit_mode);
Datum
sf_emit_mode(PG_FUNCTION_ARGS)
{
	SfPipeline *p = sf_arg_pipeline(fcinfo, false);

	PG_RETURN_TEXT_P(cstring_to_text(sf_emit_mode_name(p->def.emit)));
}

/*
 * notify_channel(pipeline) -> (channel text, pipeline_id bigint): where the
 * pipeline's notifications go and the id their payloads carry
 * (persist/notify.c).  Read.
 */
PG_FUNCTION_INFO_V1(sf_notify_channel);
Datum
sf_notify_channel(PG_FUNCTION_ARGS)
{
	SfPipeline *p = sf_arg_pipeline(fcinfo, false);
	int64		id = sf_persist_pipeline_id(p->def.name);
	TupleDesc	desc;
	Datum		values[2];
	bool		nulls[2] = {false, false};

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "streamforge: notify_channel must return a row");
	values[0] = CStringGetTextDatum(psprintf("streamforge_changes_" INT64_FORMAT, id));
	values[1] = Int64GetDatum(id);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc),
													  values, nulls)));
}
