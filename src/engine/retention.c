/*-------------------------------------------------------------------------
 *
 * retention.c
 *	  The retention horizon (docs/semantics.md, Retention): forgetting identities,
 *	  offset records and late events that can no longer matter.
 *
 * Design.  A pipeline created with a retention R has, once its watermark W
 * exists, the horizon H = W - lateness - R (computed in 128 bits: below the
 * bigint minimum there is no horizon).  After every operation
 * (sf_retention_forget, called by engine.c as the last step of ingest,
 * advance and mark_idle, and by the codec after a restore) the pipeline
 * forgets, at once:
 *
 *	1. every identity with event_time < H: it leaves the identity table, so
 *	   a later delivery of its event_id is a new unique event;
 *	2. every offset record whose delivery has event_time < H: that is,
 *	   every slot of a forgotten identity (all deliveries of an identity
 *	   carry its event_time), so a delivery there is a replay no-op;
 *	3. every late row with watermark < H.  Row watermarks never decrease in
 *	   late_seq order, so these are a prefix of p->late.  The rows the
 *	   running write call recorded (sf_late_keep) move to p->late_kept
 *	   instead, their identities held, until the call's outputs have them
 *	   (sf_late_release, from persist/sink.c).
 *
 * H never decreases, so neither does what is forgotten.  The operation is
 * deterministic (a function of the state and H), so a journal replay
 * forgets exactly what the original calls forgot.
 *
 * Cost.  Remembered identities sit in a binary min-heap by event_time:
 * forgetting k identities costs O(k log n).  A partition's slots form a
 * window [base, consumed] of its offsets; forgotten slots at its front are
 * released, and a forgotten slot behind a remembered one is released when
 * the front reaches it (it costs 8 bytes until then; with event times that
 * are roughly in offset order that is never long).  Forgotten late rows are
 * dropped from the front.  Nothing scans what is remembered.  What is
 * forgotten at once can still be millions of entries (an advance that
 * moves the watermark far), so the loops check for interrupts every 1024
 * entries; the pipeline is busy meanwhile, so a cancel there makes its
 * owner discard it (engine.h, Atomicity).
 *
 * Memory.  With retention, an identity (identity.c) is freed when it is
 * forgotten and neither a slot nor a late row refers to it any more (a late
 * row keeps its event's key, time and value after the identity is
 * forgotten); SfIdPrefix counts the slots.  Interned keys that nothing
 * refers to any more are freed by sf_keys_collect (engine.c), which
 * persist.c runs between calls.  The heap lives in p->cxt.
 *
 * Callers: sf_retention_forget runs at the end of every operation
 * (engine.c) and of every rebuild (codec/, redefine.c); sf_horizon is for
 * anyone (engine.h); sf_retention_track is engine.c's (engine_int.h).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/retention.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "engine/engine.h"
#include "engine/engine_int.h"

/*
 * The horizon of a pipeline with this definition and watermark, if there
 * is one.  Exact: no overflow is possible, and a horizon below the bigint
 * minimum does not exist (nothing is below it).
 */
bool
sf_horizon(const SfPipelineDef *def, bool has_watermark, int64 watermark,
		   int64 *horizon)
{
	int128		h;

	if (!def->has_retention || !has_watermark)
		return false;
	h = (int128) watermark - def->lateness - def->retention;
	if (h < PG_INT64_MIN)
		return false;
	*horizon = (int64) h;
	return true;
}

static inline bool
heap_less(const SfIdentity *a, const SfIdentity *b)
{
	return a->event_time < b->event_time;
}

/* Add a new remembered identity to the event-time heap */
void
sf_retention_track(SfPipeline *p, SfIdentity *id)
{
	int64		i;

	if (p->nidheap >= p->idheap_cap)
	{
		int64		newcap = p->idheap_cap ? p->idheap_cap * 2 : 1024;

		if (p->idheap == NULL)
			p->idheap = MemoryContextAllocHuge(p->cxt,
											   newcap * sizeof(SfIdentity *));
		else
			p->idheap = repalloc_huge(p->idheap, newcap * sizeof(SfIdentity *));
		p->idheap_cap = newcap;
	}
	i = p->nidheap++;
	while (i > 0)
	{
		int64		parent = (i - 1) / 2;

		if (!heap_less(id, p->idheap[parent]))
			break;
		p->idheap[i] = p->idheap[parent];
		i = parent;
	}
	p->idheap[i] = id;
}

static SfIdentity *
heap_pop(SfPipeline *p)
{
	SfIdentity *top = p->idheap[0];
	SfIdentity *last = p->idheap[--p->nidheap];
	int64		n = p->nidheap;
	int64		i = 0;

	if (n == 0)
		return top;
	for (;;)
	{
		int64		c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && heap_less(p->idheap[c + 1], p->idheap[c]))
			c++;
		if (!heap_less(p->idheap[c], last))
			break;
		p->idheap[i] = p->idheap[c];
		i = c;
	}
	p->idheap[i] = last;
	return top;
}

/* Free a forgotten identity once nothing refers to it */
static inline void
maybe_free(SfPipeline *p, SfIdentity *id)
{
	if (id->forgotten && sf_id_prefix(id)->nslots == 0 && !id->late_held)
		sf_identity_free(p, id);
}

/* A slot or late row lets go of its identity */
static void
retention_release(SfPipeline *p, SfIdentity *id)
{
	Assert(sf_id_prefix(id)->nslots > 0);
	sf_id_prefix(id)->nslots--;
	maybe_free(p, id);
}

/*
 * Forget one remembered identity: out of the identity table, and every
 * delivery slot of it is now a forgotten offset record.  The caller has
 * taken it out of the heap (or it never was in it).
 */
static void
forget_identity(SfPipeline *p, SfIdentity *id)
{
	sf_identity_unlink(p, id);
	id->forgotten = true;
	p->forgotten_ids++;
	p->forgotten_offsets += sf_id_prefix(id)->nslots;
}

/* A late row of the running call forgotten: kept until sf_late_release */
static void
keep_late(SfPipeline *p, const SfLateEvent *l)
{
	if (p->nlate_kept >= p->late_kept_cap)
	{
		int64		newcap = p->late_kept_cap ? p->late_kept_cap * 2 : 16;

		if (p->late_kept == NULL)
			p->late_kept = MemoryContextAllocHuge(p->cxt,
												  newcap * sizeof(SfLateEvent));
		else
			p->late_kept = repalloc_huge(p->late_kept,
										 newcap * sizeof(SfLateEvent));
		p->late_kept_cap = newcap;
	}
	Assert(l->late_seq == p->late_keep_from + p->nlate_kept);
	p->late_kept[p->nlate_kept++] = *l;
}

/*
 * A write call begins: the late rows it records (from the late_seq
 * returned on) stay readable by sf_late_row until sf_late_release, even
 * if the retention forgets them meanwhile (its outputs are written after
 * the engine ran, persist/sink.c).  What the state remembers is not
 * changed: a kept row is forgotten like any other.
 */
int64
sf_late_keep(SfPipeline *p)
{
	sf_late_release(p);
	p->late_keep_from = p->late_forgotten + p->nlate + 1;
	return p->late_keep_from;
}

/*
 * The late row late_seq, remembered or kept (sf_late_keep); NULL if it
 * is neither.
 */
const SfLateEvent *
sf_late_row(const SfPipeline *p, int64 late_seq)
{
	if (late_seq > p->late_forgotten)
	{
		if (late_seq > p->late_forgotten + p->nlate)
			return NULL;
		return &p->late[late_seq - p->late_forgotten - 1];
	}
	if (p->late_keep_from > 0 && late_seq >= p->late_keep_from &&
		late_seq < p->late_keep_from + p->nlate_kept)
		return &p->late_kept[late_seq - p->late_keep_from];
	return NULL;
}

/* The call's outputs are written: let go of its kept late rows */
void
sf_late_release(SfPipeline *p)
{
	for (int64 i = 0; i < p->nlate_kept; i++)
	{
		SfIdentity *id = p->late_kept[i].event;

		id->late_held = false;
		maybe_free(p, id);
	}
	p->nlate_kept = 0;
	p->late_keep_from = 0;
}

/*
 * Forget what the current horizon no longer covers (see the file header).
 * Called after every operation; costs what it forgets plus one look at
 * each partition's first slot.
 */
void
sf_retention_forget(SfPipeline *p)
{
	int64		h;
	bool		was_busy = p->busy;
	uint64		n = 0;

	if (!sf_horizon(&p->def, p->has_watermark, p->watermark, &h))
		return;

	/*
	 * Forgetting a big state takes long, so the loops check for interrupts
	 * (a cancel there is an ERROR).  Until the state is consistent with the
	 * new horizon again, the pipeline is busy: an owner that finds it so
	 * throws it away (the transaction aborts anyway).
	 */
	p->busy = true;
	p->has_horizon = true;
	p->horizon = h;

	/* 1 and 2: identities, and with them their offset records */
	while (p->nidheap > 0 && p->idheap[0]->event_time < h)
	{
		SfIdentity *id;

		if ((++n & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		id = heap_pop(p);

		forget_identity(p, id);
		maybe_free(p, id);
	}

	/* release the forgotten slots at the front of each partition */
	for (int i = 0; i < p->def.npartitions; i++)
	{
		SfPartition *part = &p->partitions[i];

		while (part->base <= part->consumed)
		{
			uint32		h = part->deliveries[part->head];
			SfIdentity *id = h ? sf_id_ptr(p, h) : NULL;

			if (id != NULL && !id->forgotten)
				break;
			if ((++n & 1023) == 0)
				CHECK_FOR_INTERRUPTS();
			if (id != NULL)
				retention_release(p, id);
			part->head++;
			part->base++;
		}
		if (part->base > part->consumed)
			part->head = 0;		/* empty: start over at the front */
	}

	/* 3: late rows, a prefix in late_seq order */
	while (p->nlate > 0 && p->late[0].watermark < h)
	{
		SfIdentity *id = p->late[0].event;

		if ((++n & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		if (p->late_keep_from > 0 && p->late[0].late_seq >= p->late_keep_from)
			keep_late(p, &p->late[0]);	/* the call's: held until its outputs */
		else
		{
			id->late_held = false;
			maybe_free(p, id);
		}
		p->late++;
		p->nlate--;
		p->late_forgotten++;
	}
	if (p->nlate == 0)
		p->late = p->late_alloc;
	p->busy = was_busy;
}
