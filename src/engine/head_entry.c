/*-------------------------------------------------------------------------
 *
 * head_entry.c
 *	  A committed transaction of a parallel pipeline in outcome form (issue
 *	  46, docs/design/parallel-writers.md, section 4.3, "Head entries"),
 *	  recorded while sf_head_commit applies it (head.c), for the head
 *	  journal entry the codec encodes (codec/parallel_codec.c, format 5).
 *	  Its replay on another head is head_replay.c's.
 *
 * Design.  sf_head_commit calls the recording hooks at each step of its
 * apply: sf_head_entry_start before the delta's merge (it records the
 * delta's addresses), sf_head_entry_add after each op of the log,
 * sf_head_entry_accept in place of sf_progress_after_accept (it records
 * the partition's progress when it changed, one op per run of a partition
 * while the watermark stays; the release waits for head_clock.c's flush,
 * so a run of them costs one release in the commit and in the replay),
 * and sf_head_entry_end (the new ids, the
 * claimed lanes' consumed offsets, the counters).  A measures pipeline's
 * entry also points at the delta's measures words (local arrivals) and at
 * each recorded event's measures (its global arrival, given before the
 * recording starts), and holds the arrival base (design 13, risk 10).
 *
 * Why one op per run of built-in progress is exact: between two
 * recordings of a partition with no watermark move and no advance or
 * mark_idle in between, the only readers of the clock are the events
 * applied alone and late rows, which read the watermark only, and every
 * partition's progress at any point of the replay lies between its
 * progress at that point of the commit and its progress at the run's
 * end, so the minimum never passes the unchanged watermark earlier.
 *
 * Memory: a recorded entry lives in the transaction's context and points
 * into the lanes; the lane table lives in the head's context.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/head_entry.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "engine/engine.h"
#include "engine/engine_int.h"
#include "engine/parallel.h"

/* ----------------------------------------------------------------
 * Recording (sf_head_commit)
 * ----------------------------------------------------------------
 */
static void
record_delta(void *arg, int window, const SfString *key, int64 start,
			 int64 end, const SfAgg *agg)
{
	SfHeadEntry *e = (SfHeadEntry *) arg;
	SfHeDelta  *d;

	if (e->ndelta == e->delta_cap)
	{
		e->delta_cap = Max(e->delta_cap * 2, 16);
		e->delta = e->delta ?
			repalloc_huge(e->delta, e->delta_cap * sizeof(SfHeDelta)) :
			palloc_extended(e->delta_cap * sizeof(SfHeDelta), MCXT_ALLOC_HUGE);
	}
	d = &e->delta[e->ndelta++];
	d->window = window;
	d->key = key->data;
	d->key_len = key->len;
	d->start = start;
	d->end = end;
	d->agg = *agg;
}

/* A new op at the end of e (for the decoder too) */
SfHeOp *
sf_head_entry_new_op(SfHeadEntry *e)
{
	SfHeOp	   *op;

	if (e->nops == e->ops_cap)
	{
		e->ops_cap = Max(e->ops_cap * 2, 16);
		e->ops = e->ops ?
			repalloc_huge(e->ops, e->ops_cap * sizeof(SfHeOp)) :
			palloc_extended(e->ops_cap * sizeof(SfHeOp), MCXT_ALLOC_HUGE);
	}
	op = &e->ops[e->nops++];
	memset(op, 0, sizeof(SfHeOp));
	return op;
}

/*
 * The start of t's apply by sf_head_commit: a new entry in t->entry, with
 * the delta's addresses if the delta is merged (t->stale: every event is
 * applied alone).
 */
void
sf_head_entry_start(SfHead *h, SfTxn *t)
{
	int			np = h->p->def.npartitions;
	MemoryContext old = MemoryContextSwitchTo(t->cxt);
	SfHeadEntry *e = palloc0(sizeof(SfHeadEntry));

	e->last_p = palloc(Max(np, 1) * sizeof(int64));
	for (int i = 0; i < np; i++)
		e->last_p[i] = -1;
	t->entry = e;
	e->arrival_base = t->arrival_base;
	if (!t->stale)
		sf_txn_delta_foreach(t, record_delta, e);
	MemoryContextSwitchTo(old);
}

/*
 * An op sf_head_commit applied: an event applied alone or late (id: its
 * identity, value its offset), an advance (value: the progress) or a
 * mark_idle.
 */
void
sf_head_entry_add(SfTxn *t, uint8 kind, int lane, int64 value,
				  const SfIdentity *id)
{
	SfHeadEntry *e = t->entry;
	MemoryContext old = MemoryContextSwitchTo(t->cxt);
	SfHeOp	   *op = sf_head_entry_new_op(e);

	MemoryContextSwitchTo(old);
	op->kind = kind;
	op->lane = (uint16) lane;
	if (kind == SF_HE_EVENT || kind == SF_HE_LATE)
	{
		op->offset = value;
		op->key = id->key->data;
		op->key_len = id->key->len;
		op->event_time = id->event_time;
		op->value = id->value;
		if (unlikely(t->head->p->def.measures != NULL))
			op->mv = sf_id_measures(t->head->lanes[lane], id);
		if (kind == SF_HE_LATE)
		{
			op->event_id = id->event_id;
			op->event_id_len = (int) id->event_id_len;
		}
		return;
	}
	op->value = value;
	/* the clock was read: no later progress may stand for an earlier one */
	for (int i = 0; i < t->head->p->def.npartitions; i++)
		e->last_p[i] = -1;
}

/*
 * sf_progress_after_accept for sf_head_commit, its release and
 * finalization left to run's flush (head_clock.c), recording what it
 * changed (the file header says why one op per run is exact).
 */
void
sf_head_entry_accept(SfTxn *t, SfPipeline *p, SfClockRun *run, int lane,
					 int64 event_time)
{
	SfHeadEntry *e = t->entry;
	SfPartition *part = &p->partitions[lane];
	bool		idle = part->idle;
	bool		has_progress = part->has_progress;
	int64		progress = part->progress;
	bool		has_watermark = p->has_watermark;
	int64		watermark = p->watermark;
	bool		moved;
	SfHeOp	   *op;
	MemoryContext old;

	sf_head_clock_accept(p, run, lane, event_time);
	moved = has_watermark != p->has_watermark || watermark != p->watermark;
	if (!moved && idle == part->idle && has_progress == part->has_progress &&
		progress == part->progress)
		return;
	if (!moved && e->last_p[lane] >= 0)
	{
		e->ops[e->last_p[lane]].value = part->progress;
		return;
	}
	old = MemoryContextSwitchTo(t->cxt);
	op = sf_head_entry_new_op(e);
	MemoryContextSwitchTo(old);
	op->kind = SF_HE_PROGRESS;
	op->lane = (uint16) lane;
	op->value = part->progress;
	if (moved)
	{
		for (int i = 0; i < p->def.npartitions; i++)
			e->last_p[i] = -1;
	}
	else
		e->last_p[lane] = e->nops - 1;
}

/* The head's lane table (h->lane_consumed), made on first use */
int64 *
sf_head_lane_table(SfHead *h)
{
	if (h->lane_consumed == NULL)
	{
		int			np = h->p->def.npartitions;

		h->lane_consumed = MemoryContextAlloc(h->cxt,
											  Max(np, 1) * sizeof(int64));
		for (int i = 0; i < np; i++)
			h->lane_consumed[i] = -1;
	}
	return h->lane_consumed;
}

/*
 * The end of t's apply: its new ids (each at the offset that introduced
 * it), the lanes it delivered to (their consumed offsets before and
 * after), its counters.
 */
void
sf_head_entry_end(SfHead *h, SfTxn *t)
{
	SfHeadEntry *e = t->entry;
	int			np = h->p->def.npartitions;
	int64	   *consumed = sf_head_lane_table(h);
	MemoryContext old = MemoryContextSwitchTo(t->cxt);

	e->fps = palloc_extended(Max(t->nops, 1) * sizeof(SfHeFp),
							 MCXT_ALLOC_HUGE);
	for (int64 i = 0; i < t->nops; i++)
	{
		const SfTxnOp *op = &t->ops[i];
		const SfIdentity *id;
		SfHeFp	   *f;

		if (op->kind != SF_TXN_EVENT || (op->flags & SF_TXN_DUP))
			continue;
		id = sf_id_ptr(h->lanes[op->lane], op->handle);
		f = &e->fps[e->nfps++];
		f->hash = sf_fp_hash(id->event_id, id->event_id_len);
		f->lane = op->lane;
		f->offset = op->value;
	}
	e->lanes = palloc(Max(np, 1) * sizeof(SfHeLane));
	for (int i = 0; i < np && t->lane_from != NULL; i++)
	{
		int64		c = h->lanes[i]->partitions[i].consumed;

		/* a lane it claimed, that holds more than it did */
		if (t->lane_from[i] == -2 || c == t->lane_from[i])
			continue;
		if (t->lane_from[i] != consumed[i])
			elog(ERROR, "streamforge: a claimed lane moved since the last commit");
		e->lanes[e->nlanes].lane = (uint16) i;
		e->lanes[e->nlanes].prev = consumed[i];
		e->lanes[e->nlanes].consumed = c;
		e->nlanes++;
		consumed[i] = c;
	}
	e->counters[0] = t->deliveries;
	e->counters[1] = t->unique;
	e->counters[2] = t->late;
	e->counters[3] = t->alone;
	e->counters[4] = t->duplicates;
	e->counters[5] = t->replays;
	MemoryContextSwitchTo(old);
}
