/*-------------------------------------------------------------------------
 *
 * metrics.c
 *	  The backend-local numbers of the streamforge.metrics view
 *	  (docs/monitoring.md).
 *
 * Everything else the view shows comes from stats(), watermark() and the
 * storage tables (sql/install/85_metrics.sql).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/metrics.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"

#include "api/api.h"

/*
 * streamforge_internal.cache_loads(pipeline text): how often this backend
 * built the pipeline from its tables.  Reads nothing else.
 */
PG_FUNCTION_INFO_V1(sf_cache_loads);
Datum
sf_cache_loads(PG_FUNCTION_ARGS)
{
	char	   *name = sf_arg_text(fcinfo, 0, "pipeline");

	PG_RETURN_INT64(sf_progress_cache_loads(name));
}
