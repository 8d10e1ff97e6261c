/*-------------------------------------------------------------------------
 *
 * progress.c
 *	  The SQL functions of built-in progress and of watching a pipeline
 *	  (docs/progress.md, docs/monitoring.md): create_pipeline's
 *	  out_of_orderness argument, set_out_of_orderness, and the progress
 *	  columns of partitions().
 *
 * set_out_of_orderness is a definition change: like set_retention it
 * copies the state under the new definition and stores it as a new
 * snapshot (persist.c, sf_persist_redefine), because the journal replays
 * each call under the definition it ran under.  It changes no window by
 * itself, so it returns no changes.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/progress.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"

#include "api/api.h"

/*
 * create_pipeline's out_of_orderness argument into def, found by name (the
 * SQL definitions of 0.1.0 and 0.2.0 have none: no built-in progress).
 */
void
sf_out_of_orderness_arg(FunctionCallInfo fcinfo, SfPipelineDef *def)
{
	int			i = sf_arg_by_name(fcinfo, "out_of_orderness", INT8OID);

	def->has_out_of_orderness = i >= 0 && !PG_ARGISNULL(i);
	def->out_of_orderness = def->has_out_of_orderness ? PG_GETARG_INT64(i) : 0;
	if (def->out_of_orderness < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("out_of_orderness must not be negative"),
				 errdetail("The out_of_orderness given is " INT64_FORMAT ".",
						   def->out_of_orderness)));
}

typedef struct OooChange
{
	bool		has;
	int64		value;
} OooChange;

/* The SfRedefineFn of set_out_of_orderness: a copy under the new rule */
static SfPipeline *
ooo_build(SfPipeline *old, void *arg)
{
	OooChange  *c = (OooChange *) arg;
	SfPipeline *p;

	p = sf_pipeline_with_retention(CurTransactionContext, old,
								   old->def.has_retention,
								   old->def.retention);
	p->def.has_out_of_orderness = c->has;
	p->def.out_of_orderness = c->has ? c->value : 0;
	return p;
}

/*
 * streamforge.set_out_of_orderness(pipeline text, out_of_orderness bigint):
 * NULL turns built-in progress off.  Admin.  Moves no progress by itself:
 * the next accepted event applies the new rule.
 */
PG_FUNCTION_INFO_V1(sf_set_out_of_orderness);
Datum
sf_set_out_of_orderness(PG_FUNCTION_ARGS)
{
	char	   *pipeline = sf_arg_text(fcinfo, 0, "pipeline");
	OooChange	c;

	c.has = !PG_ARGISNULL(1);
	c.value = c.has ? PG_GETARG_INT64(1) : 0;
	if (c.value < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("out_of_orderness must not be negative"),
				 errdetail("The out_of_orderness given is " INT64_FORMAT ".",
						   c.value)));
	(void) sf_persist_redefine(pipeline, ooo_build, &c);
	sf_progress_store(pipeline, c.has, c.value);
	PG_RETURN_VOID();
}

/* streamforge.out_of_orderness(pipeline text): the rule, NULL if none (read) */
PG_FUNCTION_INFO_V1(sf_out_of_orderness);
Datum
sf_out_of_orderness(PG_FUNCTION_ARGS)
{
	SfPipeline *p = sf_arg_pipeline(fcinfo, false);

	if (!p->def.has_out_of_orderness)
		PG_RETURN_NULL();
	PG_RETURN_INT64(p->def.out_of_orderness);
}
