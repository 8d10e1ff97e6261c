/*-------------------------------------------------------------------------
 *
 * ingest.c
 *	  The write calls of a partition's progress: advance and mark_idle
 *	  (docs/semantics.md, The interface).  The calls that deliver events
 *	  are the write core's (write.c).
 *
 * Each asks persist.c for the pipeline (locked and current), runs the
 * engine operation, journals the call (sf_persist_journal_*), hands the
 * changes to the outputs and returns them (sf_finish_write).  An engine
 * operation either succeeds or leaves the pipeline for persist.c to throw
 * away (engine/engine.h, "Atomicity").  Memory: the changes live in the
 * SQL function's context; the pipeline belongs to persist.c's cache.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/ingest.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"

#include "api/api.h"

PG_FUNCTION_INFO_V1(sf_advance);
Datum
sf_advance(PG_FUNCTION_ARGS)
{
	SfPipeline *p = sf_arg_pipeline(fcinfo, true);
	char	   *partition = sf_arg_text(fcinfo, 1, "partition");
	int64		progress;
	SfChangeList changes = {0};

	sf_arg_not_null(fcinfo, 2, "progress");
	progress = PG_GETARG_INT64(2);
	sf_engine_advance(p, partition, progress, &changes);
	sf_persist_journal_advance(p, partition, progress);
	sf_finish_write(fcinfo, p, &changes, sf_late_keep(p));
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(sf_mark_idle);
Datum
sf_mark_idle(PG_FUNCTION_ARGS)
{
	SfPipeline *p = sf_arg_pipeline(fcinfo, true);
	char	   *partition = sf_arg_text(fcinfo, 1, "partition");
	SfChangeList changes = {0};

	sf_engine_mark_idle(p, partition, &changes);
	sf_persist_journal_mark_idle(p, partition);
	sf_finish_write(fcinfo, p, &changes, sf_late_keep(p));
	return (Datum) 0;
}
