/*-------------------------------------------------------------------------
 *
 * reconcile.c
 *	  The dirty set of an operation, change generation, and finalization.
 *
 * Design.  Between operations the emitted (visible) rows are exactly the
 * ready view: the live buckets with end <= watermark.  An operation
 * therefore only needs the pre-image of each bucket it touches:
 *
 *	 1. sf_op_begin() opens a new epoch and marks the pipeline busy.
 *	 2. Before a bucket is changed, moved, merged away or becomes ready, the
 *		operation calls sf_dirty_touch(), which saves its address, aggregate
 *		and whether it was visible, once per epoch.
 *	 3. sf_op_finish() compares each pre-image with the bucket's state now:
 *		a visible pre-image that differs (or whose bucket is gone or no
 *		longer ready) is retracted with its exact old values; a ready bucket
 *		that differs from its pre-image is upserted.  Retractions come
 *		first, then upserts, each sorted by address ('final' mode: none).
 *	 4. Only then are the buckets with watermark > end + lateness finalized,
 *		in end order, from the ready heap: dropped without a retraction (in
 *		an emit mode with final changes, emit.c, with a final change each,
 *		after the upserts, in address order).  Then seq numbers follow.
 *
 * Steps 1 and 2 (sf_op_begin, sf_dirty_touch, sf_dirty_forget_bucket) are
 * in window.c, next to the bucket fields they use; this file does 3 and 4.
 *
 * The cost is proportional to the buckets the operation touched plus the
 * buckets it finalizes; nothing scans the live index.
 *
 * Loops that can run long (an advance closing a million windows) check for
 * interrupts.  A cancel there leaves p->busy set, and the owner discards
 * the pipeline (the transaction aborts anyway).
 *
 * Memory.  Changes are appended to the caller's SfChangeList, in the
 * caller's CurrentMemoryContext, which also holds sort_changes' scratch
 * arrays; their keys are the pipeline's.  Callers: engine.c's operations,
 * redefine.c and final_rows.c (engine_int.h).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/reconcile.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "engine/engine.h"
#include "engine/engine_int.h"

/*
 * After the watermark moved: every pending bucket it reached becomes ready
 * (and so will be upserted).
 */
void
sf_release_ready(SfPipeline *p)
{
	SfBucket   *b;

	if (!p->has_watermark)
		return;
	while ((b = sf_pending_due(p)) != NULL)
	{
		sf_dirty_touch(p, b);
		sf_bucket_make_ready(p, b);
	}
}

void
sf_changes_append(SfChangeList *out, const SfChange *c)
{
	if (out->n == out->cap)
	{
		int			newcap = out->cap ? out->cap * 2 : 16;

		if (out->items == NULL)
			out->items = palloc(newcap * sizeof(SfChange));
		else
			out->items = repalloc_huge(out->items, (Size) newcap * sizeof(SfChange));
		out->cap = newcap;
	}
	out->items[out->n++] = *c;
}

/*
 * Changes are sorted through pointers (a change is ~100 bytes), with the
 * comparison inlined (sort_template.h).
 */
typedef SfChange *SfChangePtr;

#define ST_SORT			sort_change_ptrs
#define ST_ELEMENT_TYPE	SfChangePtr
#define ST_COMPARE(a, b)	sf_address_order(&(*(a))->row.addr, &(*(b))->row.addr)
#define ST_SCOPE		static
#define ST_CHECK_FOR_INTERRUPTS
#define ST_DEFINE
#include "lib/sort_template.h"

/* Sort changes[0..n) by address */
void
sf_sort_changes(SfChange *changes, int n)
{
	SfChange  **ptrs;
	SfChange   *sorted;
	int			i;

	if (n < 2)
		return;
	ptrs = palloc_extended(n * sizeof(SfChange *), MCXT_ALLOC_HUGE);
	for (i = 0; i < n; i++)
		ptrs[i] = &changes[i];
	sort_change_ptrs(ptrs, n);
	sorted = palloc_extended(n * sizeof(SfChange), MCXT_ALLOC_HUGE);
	for (i = 0; i < n; i++)
		sorted[i] = *ptrs[i];
	memcpy(changes, sorted, n * sizeof(SfChange));
	pfree(sorted);
	pfree(ptrs);
}

/*
 * Append to out a change op of bucket b's row as it is now, with seq seq
 * (0 until sf_number_changes; a sort tag for head_clock.c).  The bucket may
 * be recycled, its ext words with it, and a later bucket of the same call
 * may take them before the change is written: the change owns a copy.
 */
void
sf_bucket_change(SfPipeline *p, const SfBucket *b, SfChangeOp op, int64 seq,
				 SfChangeList *out)
{
	SfChange	c = {0};		/* every byte defined, padding included */

	c.seq = seq;
	c.op = op;
	c.row.addr.window = b->window;
	c.row.addr.key = b->key;
	c.row.addr.start = b->start;
	c.row.addr.end = b->end;
	c.row.agg = b->agg;
	if (unlikely(b->agg.ext != NULL))
		c.row.agg.ext = sf_magg_copy(p->def.measures, b->agg.ext);
	sf_changes_append(out, &c);
}

/*
 * Finalize the ready buckets past their lateness, in end order.  With an
 * emit mode that has final changes (emit.c), append one per bucket, with
 * its final values, to out: its seq tag(arg, b), or 0 without tag (the
 * serial engine numbers them after sorting; head_clock.c tags each with
 * the watermark move that finalized it).
 */
void
sf_finalize_ready(SfPipeline *p, SfChangeList *out, SfFinalTagFn tag,
				  void *arg)
{
	bool		finals = p->def.emit != SF_EMIT_UPDATE;

	if (!p->has_watermark)
		return;
	while (!pairingheap_is_empty(&p->ready))
	{
		SfBucket   *b = pairingheap_container(SfBucket, hnode,
											  pairingheap_first(&p->ready));

		/* end + lateness fits: checked when the bucket was created */
		if (!(p->watermark > b->end + p->def.lateness))
			break;
		CHECK_FOR_INTERRUPTS();
		if (finals)
			sf_bucket_change(p, b, SF_FINAL, tag != NULL ? tag(arg, b) : 0,
							 out);
		p->finalized++;
		if (sf_window_merges(&p->def.windows[b->window]))
			sf_session_remove_bucket(p, b);
		sf_bucket_delete(p, b);
	}
}

/*
 * Reconcile the ready view with what was emitted, append the changes to
 * out, then finalize.  Ends the operation.
 */
void
sf_op_finish(SfPipeline *p, SfChangeList *out)
{
	int			first = out->n;
	int			nretract = 0;
	int			nfinal;
	int			i;

	/*
	 * retractions, in dirty order for now; 'final' emits neither them nor
	 * upserts (emit.c)
	 */
	for (i = p->def.emit == SF_EMIT_FINAL ? p->ndirty : 0; i < p->ndirty; i++)
	{
		SfDirty    *d = &p->dirty[i];
		SfBucket   *b = d->bucket;
		SfChange	c = {0};	/* every byte defined, padding included */

		if (!d->was_visible)
			continue;
		if (b != NULL && b->ready &&
			b->start == d->before.addr.start && b->end == d->before.addr.end &&
			sf_agg_equal(&b->agg, &d->before.agg))
			continue;			/* unchanged */
		c.seq = 0;
		c.op = SF_RETRACT;
		c.row = d->before;
		sf_changes_append(out, &c);
		nretract++;
	}
	/* upserts */
	for (i = p->def.emit == SF_EMIT_FINAL ? p->ndirty : 0; i < p->ndirty; i++)
	{
		SfDirty    *d = &p->dirty[i];
		SfBucket   *b = d->bucket;

		if (b == NULL || !b->ready)
			continue;
		if (d->was_visible &&
			b->start == d->before.addr.start && b->end == d->before.addr.end &&
			sf_agg_equal(&b->agg, &d->before.agg))
			continue;
		sf_bucket_change(p, b, SF_UPSERT, 0, out);
	}

	/*
	 * A journal replay throws the changes away and keeps only how many
	 * there were (their seq): their order is not worth sorting for (issue
	 * 39: a fifth of a replay's instructions).
	 */
	if (likely(!sf_replaying_journal))
	{
		sf_sort_changes(&out->items[first], nretract);
		sf_sort_changes(&out->items[first + nretract], out->n - first - nretract);
	}

	p->ndirty = 0;
	/* the final changes come last, in address order too */
	nfinal = out->n;
	sf_finalize_ready(p, out, NULL, NULL);
	if (likely(!sf_replaying_journal))
		sf_sort_changes(&out->items[nfinal], out->n - nfinal);
	sf_number_changes(p, out, first);
	p->busy = false;
}

/* Number the changes out->items[first..] after p's last seq */
void
sf_number_changes(SfPipeline *p, SfChangeList *out, int first)
{
	int			i;

	if (out->n > first && p->seq > PG_INT64_MAX - (out->n - first))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("pipeline \"%s\" has run out of change sequence numbers",
						p->def.name),
				 errdetail("The last seq is " INT64_FORMAT ", and this call emits %d change(s) after it.",
						   p->seq, out->n - first)));
	for (i = first; i < out->n; i++)
		out->items[i].seq = ++p->seq;
}
