/*-------------------------------------------------------------------------
 *
 * head_clock.c
 *	  The head's replay of built-in progress, coalesced (issue 46,
 *	  docs/design/parallel-writers.md, section 4.5, "The clock replay
 *	  coalesced"; docs/performance.md, "Parallel writers", cut 5).
 *
 * Design.  The serial engine makes, after each accepted event, the implied
 * advance of built-in progress (progress.c): one operation that raises the
 * partition's progress, moves the watermark, releases the buckets it
 * reached and finalizes the buckets past their lateness, its changes
 * sorted by address (upserts, then final changes) and numbered.  The head
 * (sf_head_commit and the replay of a head entry) replays a run of such
 * advances, one after the other with no other operation in between, as
 * one: sf_head_clock_advance moves the clock only, and notes each
 * watermark it reaches; sf_head_clock_flush, called before the next
 * operation that is not such an advance (an event applied alone, a late
 * row, advance, mark_idle, finish, the end of a call or of the
 * transaction), releases and finalizes once, up to the last watermark, and
 * orders the changes as the serial run numbered them.
 *
 * Why the changes are the serial run's, row for row and seq for seq.  In a
 * run, nothing touches a bucket: the delta was merged before (head.c says
 * why that emits nothing), and an event that reaches a bucket that is or
 * becomes ready is applied alone, which ends the run.  So the buckets, and
 * their values, are the same at every advance of the run, and an advance
 * makes changes only when it moves the watermark, from w(k-1) to w(k):
 *
 *	- an upsert of each pending bucket with w(k-1) < end <= w(k), in
 *	  address order (it was pending, so no retraction; 'final' mode: none);
 *	- then, in an emit mode with final changes, a final change of each
 *	  ready bucket with w(k-1) <= end + lateness < w(k), in address order
 *	  (update mode: the bucket is dropped, no change).
 *
 * Both depend on a bucket's end only, so one release up to the last
 * watermark and one finalization make the same upserts and finals; each
 * belongs to the move k its end names, and sorting them by (k, upsert
 * before final, address) and numbering them gives each change the seq the
 * serial run gave it.  A bucket released and finalized in one run is
 * upserted before it is dropped, as in the serial run (where it may be
 * two moves apart).  The counters (finalized, seq) end the same; the state
 * at the run's end is the serial one's.  The moves that did not move the
 * watermark made no change in the serial run either.
 *
 * Memory: the run's watermarks and the sort's arrays in
 * CurrentMemoryContext; the changes in out's, as reconcile.c's.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/head_clock.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "engine/engine.h"
#include "engine/engine_int.h"
#include "engine/parallel.h"

/*
 * A change of the flush, tagged in its seq (numbered at the end) with
 * 2 * its move + 1 for a final change: the sort key before the address.
 */
typedef SfChange *SfRunChangePtr;

#define ST_SORT			sort_run_changes
#define ST_ELEMENT_TYPE	SfRunChangePtr
#define ST_COMPARE(a, b) \
	((*(a))->seq != (*(b))->seq ? ((*(a))->seq < (*(b))->seq ? -1 : 1) : \
	 sf_address_order(&(*(a))->row.addr, &(*(b))->row.addr))
#define ST_SCOPE		static
#define ST_CHECK_FOR_INTERRUPTS
#define ST_DEFINE
#include "lib/sort_template.h"

/* An empty run */
void
sf_clock_run_init(SfClockRun *r)
{
	r->n = 0;
	r->cap = 0;
	r->wm = NULL;
}

void
sf_clock_run_free(SfClockRun *r)
{
	if (r->wm != NULL)
		pfree(r->wm);
	sf_clock_run_init(r);
}

/*
 * sf_engine_advance_index(p, pi, progress) without its release and
 * finalization, which wait for sf_head_clock_flush: the partition's
 * progress is raised, and the watermark moved and noted if it moves.
 */
void
sf_head_clock_advance(SfPipeline *p, SfClockRun *r, int pi, int64 progress)
{
	SfPartition *part = &p->partitions[pi];

	Assert(!p->def.has_retention);
	p->mutations++;
	part->idle = false;
	if (!part->has_progress || progress > part->progress)
	{
		part->has_progress = true;
		part->progress = progress;
	}
	if (!sf_clock_update(p))
		return;
	if (r->n == r->cap)
	{
		r->cap = Max(r->cap * 2, 16);
		r->wm = r->wm == NULL ? palloc(r->cap * sizeof(int64)) :
			repalloc(r->wm, r->cap * sizeof(int64));
	}
	r->wm[r->n++] = p->watermark;
}

/*
 * The implied advance after an accepted event (progress.c's
 * sf_progress_after_accept), coalesced.
 */
void
sf_head_clock_accept(SfPipeline *p, SfClockRun *r, int pi, int64 event_time)
{
	int128		t = (int128) event_time - p->def.out_of_orderness;

	if (t < PG_INT64_MIN)
		return;
	sf_head_clock_advance(p, r, pi, (int64) t);
}

/* The first move of r whose watermark is at least (final: above) x */
static int64
run_move(const SfClockRun *r, int64 x, bool above)
{
	int			lo = 0;
	int			hi = r->n - 1;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (above ? r->wm[mid] > x : r->wm[mid] >= x)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* sf_finalize_ready's tag of a final change: see final_tag */
typedef struct FinalTagArg
{
	SfClockRun *r;
	int64		lateness;
} FinalTagArg;

/* A final change's sort tag: after the upserts of the move that made it */
static int64
final_tag(void *arg, const SfBucket *b)
{
	FinalTagArg *t = arg;

	return 2 * run_move(t->r, b->end + t->lateness, true) + 1;
}

/*
 * The release and finalization of the moves noted in r since the last
 * flush, as one operation, appending their changes, numbered after p's
 * seq, to out (the file header says why they are the serial run's).
 * Empties r.
 */
void
sf_head_clock_flush(SfPipeline *p, SfClockRun *r, SfChangeList *out)
{
	bool		upserts = p->def.emit != SF_EMIT_FINAL;
	FinalTagArg tag;
	SfBucket   *b;
	int			first = out->n;
	int			n;

	if (r->n == 0)
		return;
	Assert(p->has_watermark && p->watermark == r->wm[r->n - 1]);
	sf_op_begin(p);

	/* the release: pending buckets reached, in end order */
	while ((b = sf_pending_due(p)) != NULL)
	{
		sf_bucket_make_ready(p, b);
		if (upserts)
			sf_bucket_change(p, b, SF_UPSERT, 2 * run_move(r, b->end, false),
							 out);
	}

	/* the finalization, each final change tagged with its move */
	tag.r = r;
	tag.lateness = p->def.lateness;
	sf_finalize_ready(p, out, final_tag, &tag);

	/* a journal replay keeps only how many there were (reconcile.c) */
	n = out->n - first;
	if (likely(!sf_replaying_journal) && n > 1)
	{
		SfChange  **ptrs = palloc_extended(n * sizeof(SfChange *),
										   MCXT_ALLOC_HUGE);
		SfChange   *sorted = palloc_extended(n * sizeof(SfChange),
											 MCXT_ALLOC_HUGE);

		for (int i = 0; i < n; i++)
			ptrs[i] = &out->items[first + i];
		sort_run_changes(ptrs, n);
		for (int i = 0; i < n; i++)
			sorted[i] = *ptrs[i];
		memcpy(&out->items[first], sorted, n * sizeof(SfChange));
		pfree(sorted);
		pfree(ptrs);
	}
	sf_number_changes(p, out, first);
	p->ndirty = 0;
	p->busy = false;
	r->n = 0;
}
