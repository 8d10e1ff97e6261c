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
#include "miscadmin.h"

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

/*
 * streamforge_internal.estimated_load_ms(pipeline text): the estimated CPU
 * time (ms) a new backend spends loading the pipeline (persist/compact.c;
 * issue 39).  Opens the pipeline for reading, like stats().
 */
PG_FUNCTION_INFO_V1(sf_estimated_load_ms);
Datum
sf_estimated_load_ms(PG_FUNCTION_ARGS)
{
	char	   *name = sf_arg_text(fcinfo, 0, "pipeline");

	PG_RETURN_FLOAT8(sf_persist_load_estimate(name));
}

/* The SfRedefineFn of compact: the same state, stored as a new snapshot */
static SfPipeline *
compact_build(SfPipeline *old, void *arg)
{
	return sf_pipeline_with_retention(CurTransactionContext, old,
									  old->def.has_retention,
									  old->def.retention);
}

/*
 * streamforge.compact(pipeline text, min_journal_bytes bigint DEFAULT -1):
 * store the pipeline's state as a new snapshot and empty its journal, as a
 * compaction on the write path does (admin).  Returns whether it
 * compacted.  With min_journal_bytes negative (the default), it compacts
 * when the estimated cold load exceeds streamforge.compact_target_load_ms
 * (persist/compact.c); with 0, always; else when the journal since the
 * last snapshot holds at least min_journal_bytes.  For a scheduler
 * (pg_cron), so that a cold load stays short without a writer paying for
 * the snapshot (docs/monitoring.md).
 */
PG_FUNCTION_INFO_V1(sf_compact);
Datum
sf_compact(PG_FUNCTION_ARGS)
{
	char	   *pipeline = sf_arg_text(fcinfo, 0, "pipeline");
	int64		min_bytes;
	SfAcl		acl;

	sf_arg_not_null(fcinfo, 1, "min_journal_bytes");
	min_bytes = PG_GETARG_INT64(1);
	/* admin, even when there is nothing to compact */
	sf_persist_get_acl(pipeline, false, &acl);
	sf_acl_check(&acl, pipeline, GetUserId(), SF_PRIV_ADMIN);
	/* a parallel pipeline: head and lanes at commit (issue 46) */
	switch (sf_persist_parallel_compact(pipeline, min_bytes))
	{
		case 0:
			PG_RETURN_BOOL(false);
		case 1:
			PG_RETURN_BOOL(true);
		default:
			break;
	}
	if (min_bytes < 0 && !sf_persist_compact_due(pipeline))
		PG_RETURN_BOOL(false);
	if (min_bytes > 0 && sf_persist_journal_bytes(pipeline) < min_bytes)
		PG_RETURN_BOOL(false);
	(void) sf_persist_redefine(pipeline, compact_build, NULL);
	PG_RETURN_BOOL(true);
}
