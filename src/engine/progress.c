/*-------------------------------------------------------------------------
 *
 * progress.c
 *	  Built-in progress: a pipeline created with out_of_orderness N reports
 *	  progress itself, and who holds the watermark back.
 *
 * docs/progress.md states the rule: after each accepted event (a unique
 * event that is not late) on partition P, the pipeline behaves exactly as
 * if advance(P, event_time - N) had been called right after it, in the
 * same call: the same reactivation of an idle partition, the same raise of
 * P's progress (never a lowering), the same changes, returned after the
 * event's own.  Since progress never decreases and every accepted event
 * raises it to at least its own time - N, P's progress is always at least
 * (the largest event time accepted on P since N was set) - N, which is the
 * rule the issue states.  Nothing but the definition is added to the
 * state, so the journal (which records the deliveries only) replays it
 * deterministically and a checkpoint carries it in its definition.
 *
 * The caller (engine.c) tests has_out_of_orderness inline, so a pipeline
 * without it pays one branch per event.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/progress.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "engine/engine.h"
#include "engine/engine_int.h"

/*
 * The implied advance after an accepted event at event_time on partition
 * index pi.  An event_time - N below the bigint minimum implies no report
 * at all (advance could not be called with it either).
 */
void
sf_progress_after_accept(SfPipeline *p, int pi, int64 event_time,
						 SfChangeList *out)
{
	SfPartition *part = &p->partitions[pi];
	int128		t = (int128) event_time - p->def.out_of_orderness;

	if (t < PG_INT64_MIN)
		return;

	/* what sf_engine_advance does, by index */
	sf_op_begin(p);
	part->idle = false;
	if (!part->has_progress || (int64) t > part->progress)
	{
		part->has_progress = true;
		part->progress = (int64) t;
	}
	if (sf_clock_update(p))
		sf_release_ready(p);
	sf_op_finish(p, out);
	if (p->def.has_retention)
		sf_retention_forget(p);
}

/*
 * Who holds the watermark: holds[i] is set for each active partition
 * whose progress is the minimum of the active partitions' (all of them
 * once every active partition has reported; before that, the active
 * partitions that have not reported hold it, since they keep it
 * undefined).  fastest is the largest progress of any partition, for the
 * lag of each behind it.
 */
void
sf_progress_holders(const SfPipeline *p, bool *holds, int64 *fastest,
					bool *has_fastest)
{
	bool		any = false;
	bool		unreported = false;
	int64		min = PG_INT64_MAX;

	*has_fastest = false;
	*fastest = 0;
	for (int i = 0; i < p->def.npartitions; i++)
	{
		const SfPartition *part = &p->partitions[i];

		holds[i] = false;
		if (part->has_progress && (!*has_fastest || part->progress > *fastest))
		{
			*fastest = part->progress;
			*has_fastest = true;
		}
		if (part->idle)
			continue;
		if (!part->has_progress)
			unreported = true;
		else if (!any || part->progress < min)
			min = part->progress;
		if (part->has_progress)
			any = true;
	}
	for (int i = 0; i < p->def.npartitions; i++)
	{
		const SfPartition *part = &p->partitions[i];

		if (part->idle)
			continue;
		if (unreported)
			holds[i] = !part->has_progress;
		else
			holds[i] = any && part->progress == min;
	}
}
