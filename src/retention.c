/*-------------------------------------------------------------------------
 *
 * retention.c
 *	  The retention horizon (SPEC.md section 6): forgetting identities,
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
 *	   late_seq order, so these are a prefix of p->late.
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
 * dropped from the front.  Nothing scans what is remembered.
 *
 * Memory.  With retention, an identity (identity.c) is freed when it is
 * forgotten and neither a slot nor a late row refers to it any more (a late
 * row keeps its event's key, time and value after the identity is
 * forgotten); SfIdPrefix counts the slots.  Interned keys that nothing
 * refers to any more are freed by sf_keys_collect (engine.c), which
 * persist.c runs between calls.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "streamforge.h"

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
void
sf_retention_release(SfPipeline *p, SfIdentity *id)
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
void
sf_retention_forget_identity(SfPipeline *p, SfIdentity *id)
{
	sf_identity_unlink(p, id);
	id->forgotten = true;
	p->forgotten_ids++;
	p->forgotten_offsets += sf_id_prefix(id)->nslots;
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

	if (!sf_horizon(&p->def, p->has_watermark, p->watermark, &h))
		return;
	p->has_horizon = true;
	p->horizon = h;

	/* 1 and 2: identities, and with them their offset records */
	while (p->nidheap > 0 && p->idheap[0]->event_time < h)
	{
		SfIdentity *id = heap_pop(p);

		sf_retention_forget_identity(p, id);
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
			if (id != NULL)
				sf_retention_release(p, id);
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

		id->late_held = false;
		maybe_free(p, id);
		p->late++;
		p->nlate--;
		p->late_forgotten++;
	}
	if (p->nlate == 0)
		p->late = p->late_alloc;
}

/* ----------------------------------------------------------------
 * Changing the retention
 * ----------------------------------------------------------------
 */

static int
handle_cmp(const void *a, const void *b)
{
	uint32		x = *(const uint32 *) a;
	uint32		y = *(const uint32 *) b;

	return (x > y) - (x < y);
}

/* The body of sf_pipeline_with_retention: p's state into the empty q */
static pg_noinline void
copy_state(SfPipeline *p, SfPipeline *q)
{
	const SfPipelineDef *def = &q->def;
	uint32	   *old;
	uint32	   *new;
	int64		n = 0;
	uint64		pos = 0;
	SfIdentity *id;
	SfRow	   *rows;
	int64		nrows;

	/* clock */
	for (int i = 0; i < def->npartitions; i++)
	{
		q->partitions[i].has_progress = p->partitions[i].has_progress;
		q->partitions[i].progress = p->partitions[i].progress;
		q->partitions[i].idle = p->partitions[i].idle;
	}
	q->has_watermark = p->has_watermark;
	q->watermark = p->watermark;

	/* identities, in handle order; old[k] became new[k] */
	old = palloc_extended(Max(p->nidentities, 1) * sizeof(uint32),
						  MCXT_ALLOC_HUGE);
	new = palloc_extended(Max(p->nidentities, 1) * sizeof(uint32),
						  MCXT_ALLOC_HUGE);
	while (sf_idtable_next_handle(p, &pos, &old[n]) != NULL)
		n++;
	if (n > 1)
		qsort(old, n, sizeof(uint32), handle_cmp);
	for (int64 k = 0; k < n; k++)
	{
		id = sf_id_ptr(p, old[k]);
		if ((k & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		(void) sf_identity_add(q, id->event_id, id->event_id_len,
							   sf_intern_key(q, id->key->data, id->key->len),
							   id->event_time, id->value, id->late, &new[k]);
	}

	/* delivery history: forgotten slots stay forgotten */
	for (int i = 0; i < def->npartitions; i++)
	{
		const SfPartition *part = &p->partitions[i];

		if (part->base > 0)
			sf_partition_set_base(q, i, part->base);
		for (int64 o = part->base; o <= part->consumed; o++)
		{
			uint32		h = part->deliveries[part->head + (o - part->base)];
			uint32	   *at = NULL;

			if (h != 0 && !sf_id_ptr(p, h)->forgotten)
				at = bsearch(&h, old, n, sizeof(uint32), handle_cmp);
			sf_partition_append(q, i, at ? new[at - old] : 0);
		}
	}
	pfree(old);
	pfree(new);

	/* late output: a row whose identity is forgotten keeps its event */
	q->late_forgotten = p->late_forgotten;
	for (int64 k = 0; k < p->nlate; k++)
	{
		const SfLateEvent *l = &p->late[k];
		SfIdentity *ev = l->event;
		SfIdentity *nev;

		if (!ev->forgotten)
			nev = sf_idtable_lookup(q, ev->event_id, ev->event_id_len,
									ev->hash, NULL);
		else
		{
			uint32		h;

			nev = sf_identity_new(q, ev->event_id, ev->event_id_len,
								  ev->hash, &h);
			nev->key = sf_intern_key(q, ev->key->data, ev->key->len);
			nev->event_time = ev->event_time;
			nev->value = ev->value;
			nev->late = true;
			nev->forgotten = true;
		}
		if (nev == NULL)
			elog(ERROR, "streamforge: late event without identity");
		sf_late_append(q, l->partition, l->source_offset, nev, l->watermark);
	}

	/* live buckets */
	nrows = sf_collect_rows(p, false, &rows);
	for (int64 k = 0; k < nrows; k++)
	{
		const SfRow *r = &rows[k];
		SfString   *key = sf_intern_key(q, r->addr.key->data, r->addr.key->len);
		SfBucket   *b = sf_bucket_insert(q, r->addr.window, key,
										 r->addr.start, r->addr.end);

		b->agg = r->agg;
		if (def->windows[r->addr.window].kind == SF_WINDOW_SESSION &&
			!sf_session_insert_bucket(q, b))
			elog(ERROR, "streamforge: live sessions overlap");
	}
	pfree(rows);

	q->seq = p->seq;
	q->offset_replays = p->offset_replays;
	q->forgotten_ids = p->forgotten_ids;
	sf_retention_forget(q);
}

/*
 * sf_pipeline_with_retention
 *		A copy of p, as a new pipeline under parent, whose definition has
 *		the given retention (has_retention false: none), having forgotten
 *		what the new horizon forgets.  p is left as it was.
 *
 * For management calls that change a pipeline's retention.  The journal
 * replays under the definition its calls ran under, so the caller must
 * persist the result as a new snapshot (and empty the journal) in the same
 * transaction as the new retention column.
 *
 * A smaller retention forgets more, at once.  A larger one, or none, would
 * move the horizon back over what is already forgotten: the state would
 * then lack identities, offsets and events that its own horizon covers,
 * which no checkpoint may do (SPEC.md 6).  So that is refused (55000) once
 * the pipeline has forgotten anything; before, any change is fine.
 */
SfPipeline *
sf_pipeline_with_retention(MemoryContext parent, SfPipeline *p,
						   bool has_retention, int64 retention)
{
	SfPipelineDef def = p->def;
	SfPipeline *volatile q;

	if (has_retention && retention < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("retention must not be negative"),
				 errdetail("The retention given is " INT64_FORMAT ".", retention)));
	/* every forgotten identity left a forgotten offset record behind */
	if ((p->forgotten_offsets > 0 || p->late_forgotten > 0) &&
		(!has_retention ||
		 (p->def.has_retention && retention > p->def.retention)))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot %s the retention of pipeline \"%s\"",
						has_retention ? "raise" : "remove", p->def.name),
				 errdetail("The pipeline has already forgotten what the retention " INT64_FORMAT " does not cover.",
						   p->def.retention)));
	def.has_retention = has_retention;
	def.retention = has_retention ? retention : 0;
	q = sf_pipeline_create(parent, &def);

	PG_TRY();
	{
		copy_state(p, q);
	}
	PG_CATCH();
	{
		sf_pipeline_free(q);
		PG_RE_THROW();
	}
	PG_END_TRY();
	return q;
}
