/*-------------------------------------------------------------------------
 *
 * backfill.c
 *	  configure_outputs(..., backfill => true): the finalized rows a
 *	  pipeline's remembered events still give (0.3.0, issue 25 item 7;
 *	  docs/outputs.md, Turning outputs on and off).
 *
 * streamforge_internal.final_rows_all(pipeline) returns them
 * (engine/final_rows.c, sf_derive_all_final_rows); the backfill itself is
 * SQL (sql/install/45_emit.sql), run as the extension's owner once
 * configure_outputs checked admin.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/backfill.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"

#include "api/api.h"

PG_FUNCTION_INFO_V1(sf_final_rows_all);
Datum
sf_final_rows_all(PG_FUNCTION_ARGS)
{
	SfPipeline *p = sf_arg_pipeline(fcinfo, false);
	SfRow	   *rows;
	SfPipeline *q;
	int64		n;

	n = sf_derive_all_final_rows(p, &rows, &q);
	InitMaterializedSRF(fcinfo, 0);
	sf_put_rows(fcinfo, p, rows, n);
	if (q != NULL)
		sf_pipeline_free(q);
	return (Datum) 0;
}
