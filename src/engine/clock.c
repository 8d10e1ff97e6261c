/*-------------------------------------------------------------------------
 *
 * clock.c
 *	  Partition progress and the global watermark.
 *
 * The global watermark is the minimum progress of the non-idle partitions,
 * defined once every non-idle partition has reported.  It never decreases,
 * and with no non-idle partition it holds its value.  Computing it looks at
 * every partition: a pipeline has a handful, and only advance and mark_idle
 * (never an event) move the clock.  It allocates nothing.
 *
 * Callers: engine.c's operations (engine_int.h).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/clock.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "engine/engine.h"
#include "engine/engine_int.h"

/*
 * The watermark the partitions imply right now, if they imply one.
 */
static bool
clock_compute(const SfPipeline *p, int64 *watermark)
{
	bool		any = false;
	int64		min = PG_INT64_MAX;
	int			i;

	for (i = 0; i < p->def.npartitions; i++)
	{
		const SfPartition *part = &p->partitions[i];

		if (part->idle)
			continue;
		if (!part->has_progress)
			return false;
		if (!any || part->progress < min)
			min = part->progress;
		any = true;
	}
	if (!any)
		return false;
	*watermark = min;
	return true;
}

/*
 * Move the global watermark forward to what the partitions imply.
 * Returns true if it moved (or appeared).
 */
bool
sf_clock_update(SfPipeline *p)
{
	int64		wm;

	if (!clock_compute(p, &wm))
		return false;
	if (p->has_watermark && wm <= p->watermark)
		return false;
	p->has_watermark = true;
	p->watermark = wm;
	return true;
}
