/*-------------------------------------------------------------------------
 *
 * outputs_aggregates.c
 *	  The declared aggregates of the results rows of a measures pipeline
 *	  that the SQL of the outputs writes (0.3.0, issue 27 item 3;
 *	  docs/aggregates.md, Outputs).
 *
 * The sink fills results.aggregates for the rows the changes write
 * (persist/measures.c, sf_sink_measures).  The rows that configure_outputs
 * copies from visible(), that its backfill and resync_outputs derive from
 * the remembered events, are written by SQL with the contract's columns
 * only; streamforge_internal.outputs_fill_aggregates
 * (sql/install/86_outputs_aggregates.sql) then fills their aggregates, from
 * visible_aggregates() for the rows visible() shows and from
 * streamforge_internal.final_rows_aggregates, here, for the finalized
 * ones: the same derivation as final_rows (engine/final_rows.c), with the
 * aggregates jsonb.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/outputs_aggregates.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "api/api.h"

/* The elements of a one-dimensional array argument without NULLs */
static int
address_array(FunctionCallInfo fcinfo, int argno, Oid elemtype, Datum **elems)
{
	ArrayType  *a;
	bool	   *nulls;
	int			n;
	int16		typlen;
	bool		typbyval;
	char		typalign;

	if (PG_ARGISNULL(argno))
	{
		*elems = NULL;
		return 0;
	}
	a = PG_GETARG_ARRAYTYPE_P(argno);
	get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
	deconstruct_array(a, elemtype, typlen, typbyval, typalign, elems, &nulls,
					  &n);
	for (int i = 0; i < n; i++)
		if (nulls[i])
			ereport(ERROR,
					errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					errmsg("address arrays must not contain nulls"));
	return n;
}

/*
 * streamforge_internal.final_rows_aggregates(pipeline text,
 *     window_name text[], key text[], window_start bigint[],
 *     window_end bigint[]) -> SETOF streamforge.measures_result
 *
 * final_rows (api/outputs.c) for a measures pipeline: the rows the
 * pipeline has finalized at the given addresses, as they were finalized,
 * with their declared aggregates.  Nothing for a one-measure pipeline.
 * Internal: EXECUTE only for the extension's owner; it checks the read
 * privilege like visible().
 */
PG_FUNCTION_INFO_V1(sf_final_rows_aggregates);
Datum
sf_final_rows_aggregates(PG_FUNCTION_ARGS)
{
	SfPipeline *p;
	Datum	   *wn,
			   *keys,
			   *starts,
			   *ends;
	int			n;
	SfWanted   *wanted;
	SfRow	   *rows;
	int64		nrows = 0;
	SfPipeline *q = NULL;

	sf_arg_not_null(fcinfo, 0, "pipeline");
	n = address_array(fcinfo, 1, TEXTOID, &wn);
	if (address_array(fcinfo, 2, TEXTOID, &keys) != n ||
		address_array(fcinfo, 3, INT8OID, &starts) != n ||
		address_array(fcinfo, 4, INT8OID, &ends) != n)
		ereport(ERROR,
				errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				errmsg("address arrays must have the same length"));
	p = sf_persist_open(text_to_cstring(PG_GETARG_TEXT_PP(0)), false);

	InitMaterializedSRF(fcinfo, 0);
	if (p->def.measures == NULL)
		return (Datum) 0;

	wanted = palloc(Max(n, 1) * sizeof(SfWanted));
	for (int i = 0; i < n; i++)
	{
		char	   *name = TextDatumGetCString(wn[i]);
		text	   *k = DatumGetTextPP(keys[i]);

		wanted[i].window = sf_window_index(&p->def, name);
		wanted[i].key = VARDATA_ANY(k);
		wanted[i].key_len = VARSIZE_ANY_EXHDR(k);
		wanted[i].start = DatumGetInt64(starts[i]);
		wanted[i].end = DatumGetInt64(ends[i]);
	}
	nrows = sf_derive_final_rows(p, wanted, n, &rows, &q);

	sf_put_aggregate_rows(fcinfo, p, NULL, rows, nrows);
	if (q != NULL)
		sf_pipeline_free(q);
	return (Datum) 0;
}
