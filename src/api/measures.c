/*-------------------------------------------------------------------------
 *
 * measures.c
 *	  The definition side of measures pipelines (docs/aggregates.md):
 *	  create_pipeline's measures and aggregates arguments, and
 *	  aggregate_columns.
 *
 * Their writes are forms of the write core (write.c: ingest_measures,
 * ingest_measures_count, append_measures, the batches, JSON), their reads
 * forms of the read core (inspect.c: live_aggregates, visible_aggregates),
 * their rows rows.c's aggregates layout.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/measures.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "parser/parse_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/typcache.h"

#include "api/api.h"

/* A text[] argument's non-NULL elements as C strings; NULL elements: 22004 */
static char **
text_array_arg(ArrayType *arr, const char *what, int *n)
{
	Datum	   *elems;
	bool	   *nulls;
	char	  **out;

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a one-dimensional array", what)));
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, n);
	out = palloc(Max(*n, 1) * sizeof(char *));
	for (int i = 0; i < *n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("element %d of %s must not be null", i + 1, what)));
		out[i] = TextDatumGetCString(elems[i]);
	}
	return out;
}

/*
 * create_pipeline's measures and aggregates, arguments m and a (-1: the
 * SQL definition has none, as before 0.3.0): def->measures, or NULL for a
 * one-measure pipeline.
 */
void
sf_measures_arg(FunctionCallInfo fcinfo, int m, int a, SfPipelineDef *def)
{
	bool		has_m = m >= 0 && !PG_ARGISNULL(m);
	bool		has_a = a >= 0 && !PG_ARGISNULL(a);
	char	  **measures;
	char	  **aggs = NULL;
	int			nm,
				na = -1;

	def->measures = NULL;
	if (!has_m)
	{
		if (has_a)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("aggregates need measures"),
					 errhint("Name the pipeline's measures with measures => ARRAY['...'].")));
		return;
	}
	measures = text_array_arg(PG_GETARG_ARRAYTYPE_P(m), "measures", &nm);
	if (has_a)
		aggs = text_array_arg(PG_GETARG_ARRAYTYPE_P(a), "aggregates", &na);
	def->measures = sf_measures_def_build(measures, nm, aggs, na);
}

/*
 * The declared aggregates with their SQL types.  A one-measure pipeline
 * has count, sum, min and max of its value (the columns of live()).
 */
PG_FUNCTION_INFO_V1(sf_aggregate_columns);
Datum
sf_aggregate_columns(PG_FUNCTION_ARGS)
{
	SfPipeline *p = sf_arg_pipeline(fcinfo, false);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	const SfMeasuresDef *md = p->def.measures ? p->def.measures :
		sf_measures_def_classic();

	InitMaterializedSRF(fcinfo, 0);
	for (int i = 0; i < md->naggs; i++)
	{
		const SfAggDef *a = &md->aggs[i];
		const SfAggOps *o = sf_agg_ops(a->func);
		Datum		values[5];
		bool		nulls[5] = {0};

		values[0] = Int32GetDatum(i + 1);
		values[1] = CStringGetTextDatum(a->name);
		values[2] = ObjectIdGetDatum(strcmp(o->sql_type, "bigint") == 0 ? INT8OID :
									 strcmp(o->sql_type, "numeric") == 0 ?
									 NUMERICOID : FLOAT8OID);
		values[3] = CStringGetTextDatum(o->name);
		if (a->measure >= 0)
			values[4] = CStringGetTextDatum(md->names[a->measure]);
		else
			nulls[4] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
