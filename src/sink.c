/*-------------------------------------------------------------------------
 *
 * sink.c
 *	  Durable outputs of a pipeline: changelog, results and late events,
 *	  written in the caller's transaction, and NOTIFY on commit.
 *
 * Placeholder until the outputs land (issue 6): pipelines have no sinks.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "streamforge.h"

void
sf_sink_emit(SfPipeline *p, const SfChangeList *changes, int64 late_before)
{
}

void
sf_sink_drop(const char *pipeline)
{
}
