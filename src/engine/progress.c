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

/* a partition in the order of sf_finish_order */
typedef struct FinishItem
{
	int			index;
	int			rank;			/* 0 idle, 1 reported, 2 unreported */
	int64		progress;
} FinishItem;

static int
finish_item_cmp(const void *a, const void *b)
{
	const FinishItem *x = (const FinishItem *) a;
	const FinishItem *y = (const FinishItem *) b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->rank == 1 && x->progress != y->progress)
		return x->progress > y->progress ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index ? 1 : 0;
}

/*
 * The partitions finish (docs/progress.md) advances to the bigint maximum,
 * in its order.  Those that can move the watermark last: idle ones first
 * (they hold nothing back), then the active ones that reported, highest
 * progress first, then those that never reported (they keep the
 * watermark undefined).  The watermark then moves once, in the last
 * advance, straight to the end: the call's changes are those of one jump
 * to +infinity, not of a walk through every partition's progress.  Ties
 * in index order, so that the order (and the journal) is deterministic.
 * A partition there already (active at the maximum) is left out.  order has
 * room for def.npartitions indexes; returns how many it holds.  Callers:
 * api/ingest.c's finish, and a parallel transaction's finish at commit
 * (head.c), which must decide it on the committed clock.
 */
int
sf_finish_order(const SfPipeline *p, int *order)
{
	int			n = p->def.npartitions;
	FinishItem *items = palloc(Max(n, 1) * sizeof(FinishItem));
	int			nitems = 0;

	for (int i = 0; i < n; i++)
	{
		const SfPartition *part = &p->partitions[i];

		if (!part->idle && part->has_progress && part->progress == PG_INT64_MAX)
			continue;			/* finished already */
		items[nitems].index = i;
		items[nitems].rank = part->idle ? 0 : part->has_progress ? 1 : 2;
		items[nitems].progress = part->progress;
		nitems++;
	}
	qsort(items, nitems, sizeof(FinishItem), finish_item_cmp);
	for (int k = 0; k < nitems; k++)
		order[k] = items[k].index;
	pfree(items);
	return nitems;
}
