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
#include "utils/builtins.h"

#include "api/api.h"

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
	SfAddressArgs a;
	SfPipeline *p = sf_address_args(fcinfo, &a);
	SfRow	   *rows;
	int64		nrows;
	SfPipeline *q = NULL;

	InitMaterializedSRF(fcinfo, 0);
	if (p->def.measures == NULL)
		return (Datum) 0;
	nrows = sf_derive_final_rows(p, sf_address_wanted(p, &a), a.n, &rows, &q);
	sf_put_aggregate_rows(fcinfo, p, NULL, rows, nrows);
	if (q != NULL)
		sf_pipeline_free(q);
	return (Datum) 0;
}
