/*-------------------------------------------------------------------------
 *
 * window.c
 *	  Fixed and sliding window assignment, aggregates, and the live bucket
 *	  index of a pipeline.
 *
 * The live index maps (window, key, start) to a bucket.  That triple is
 * unique among live buckets for every window kind: fixed and sliding buckets
 * of one window never share a start, and live sessions of one (window, key)
 * are pairwise apart.  Each live bucket is also in one of two end-ordered
 * pairing heaps (pending: end > watermark; ready: end <= watermark), so
 * that an advance finds the buckets it makes ready, and finalization the
 * buckets it drops, without looking at any other bucket.
 *
 * Assignment computes every bound in 128-bit arithmetic and raises 22003
 * when one does not fit in bigint, before the caller mutates anything.
 *
 * The dirty set of an operation (sf_op_begin, sf_dirty_touch,
 * sf_dirty_forget_bucket) is here too, since it lives in the buckets'
 * dirty_epoch and dirty_index fields; reconcile.c turns it into changes.
 *
 * Memory.  Buckets are carved from blocks of 256 in p->cxt; a deleted
 * bucket goes to p->free_buckets for reuse and is never pfree'd, so every
 * bucket lives until the pipeline's context is deleted.  The live index,
 * the heaps, the session lists (session.c) and the dirty set point at
 * buckets without owning them.  sf_collect_rows returns rows palloc'd in
 * the caller's CurrentMemoryContext; their keys are the pipeline's.
 *
 * Callers: the engine's files (engine_int.h); the codec and the SQL glue
 * use only sf_bucket_lookup, sf_collect_rows and the row comparisons
 * (engine.h).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/window.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "miscadmin.h"

#include "engine/engine.h"
#include "engine/engine_int.h"

/* ----------------------------------------------------------------
 * The live index: a simplehash keyed by (window, key, start)
 * ----------------------------------------------------------------
 */
typedef struct SfBucketEntry
{
	SfBucket   *bucket;
	uint32		hash;
	char		status;
} SfBucketEntry;

/* A bucket's hash from its (window, key) part (sf_bucket_key_hash) */
static inline uint32
bucket_start_hash(uint32 kwhash, int64 start)
{
	uint64		s = (uint64) start;

	return hash_combine(kwhash, murmurhash32((uint32) (s ^ (s >> 32))));
}

static inline uint32
bucket_hash(const SfBucket *b)
{
	return bucket_start_hash(sf_bucket_key_hash(b->window, b->key), b->start);
}

static inline bool
bucket_key_equal(const SfBucket *a, const SfBucket *b)
{
	return a->start == b->start && a->key == b->key && a->window == b->window;
}

#define SH_PREFIX		sf_buckettab
#define SH_ELEMENT_TYPE	SfBucketEntry
#define SH_KEY_TYPE		SfBucket *
#define SH_KEY			bucket
#define SH_HASH_KEY(tb, key)	bucket_hash(key)
#define SH_EQUAL(tb, a, b)		bucket_key_equal(a, b)
#define SH_STORE_HASH
#define SH_GET_HASH(tb, a)		((a)->hash)
#define SH_SCOPE		static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

/* Min-heap by end: pairingheap is a max-heap of the comparator */
static int
bucket_end_cmp(const pairingheap_node *a, const pairingheap_node *b, void *arg)
{
	const SfBucket *ba = pairingheap_const_container(SfBucket, hnode, a);
	const SfBucket *bb = pairingheap_const_container(SfBucket, hnode, b);

	if (ba->end < bb->end)
		return 1;
	if (ba->end > bb->end)
		return -1;
	return 0;
}

void
sf_buckets_init(SfPipeline *p)
{
	p->buckets = sf_buckettab_create(p->cxt, 256, NULL);
	p->pending.ph_compare = bucket_end_cmp;
	p->pending.ph_arg = NULL;
	p->pending.ph_root = NULL;
	p->ready.ph_compare = bucket_end_cmp;
	p->ready.ph_arg = NULL;
	p->ready.ph_root = NULL;
}

/*
 * The live bucket at (window, key, start), or NULL.  key must be interned.
 */
SfBucket *
sf_bucket_lookup(SfPipeline *p, int window, SfString *key, int64 start)
{
	SfBucket	probe;
	SfBucketEntry *e;

	probe.window = window;
	probe.key = key;
	probe.start = start;
	e = sf_buckettab_lookup(p->buckets, &probe);
	return e ? e->bucket : NULL;
}

static void
heap_place(SfPipeline *p, SfBucket *b)
{
	b->ready = p->has_watermark && b->end <= p->watermark;
	if (b->ready)
	{
		pairingheap_add(&p->ready, &b->hnode);
		p->nready++;
	}
	else
		pairingheap_add(&p->pending, &b->hnode);
}

static void
heap_unplace(SfPipeline *p, SfBucket *b)
{
	if (b->ready)
	{
		pairingheap_remove(&p->ready, &b->hnode);
		p->nready--;
	}
	else
		pairingheap_remove(&p->pending, &b->hnode);
}

/*
 * A new bucket with an empty aggregate, in the heap that the current
 * watermark says, not yet in the live index.
 */
static SfBucket *
bucket_new(SfPipeline *p, int window, SfString *key, int64 start, int64 end)
{
	SfBucket   *b;
	int64	   *ext = NULL;

	if (p->free_buckets)
	{
		b = p->free_buckets;
		p->free_buckets = (SfBucket *) b->hnode.first_child;
		ext = b->agg.ext;
	}
	else
	{
		if (p->bucket_block_left == 0)
		{
			p->bucket_block = MemoryContextAlloc(p->cxt, 256 * sizeof(SfBucket));
			p->bucket_block_left = 256;
		}
		b = p->bucket_block++;
		p->bucket_block_left--;
	}
	memset(b, 0, sizeof(SfBucket));
	b->window = window;
	b->key = key;
	b->start = start;
	b->end = end;
	b->agg.count = 0;
	if (unlikely(p->def.measures != NULL))
	{
		/* measures pipelines: ext words recycled with the bucket */
		if (ext == NULL)
			ext = sf_magg_alloc(p);
		else
			sf_magg_reset(p, ext);
		b->agg.ext = ext;
	}
	heap_place(p, b);
	p->nbuckets++;
	return b;
}

/*
 * Create a live bucket with an empty aggregate.  The caller guarantees that
 * no live bucket has this (window, key, start).  The bucket goes into the
 * heap that the current watermark says.
 */
SfBucket *
sf_bucket_insert(SfPipeline *p, int window, SfString *key, int64 start,
				 int64 end)
{
	SfBucket   *b = bucket_new(p, window, key, start, end);
	bool		found;

	sf_buckettab_insert(p->buckets, b, &found);
	if (found)
		elog(ERROR, "streamforge: duplicate live bucket");
	return b;
}

/*
 * The live bucket at (window, key, start), created with end if there is
 * none: sf_bucket_lookup, then sf_bucket_insert, with
 * the hash computed once, and its (window, key) part once per window of an
 * event (kwhash is sf_bucket_key_hash(window, key)).  The same bucket and
 * the same live index as those two calls give.  (A lookup-or-insert in one
 * probe through simplehash's insert costs more: its Robin Hood insert is
 * about as dear as a lookup and an insert together, for the buckets that
 * exist, which most are.)
 */
SfBucket *
sf_bucket_get_hashed(SfPipeline *p, int window, SfString *key, uint32 kwhash,
					 int64 start, int64 end)
{
	SfBucket	probe;
	SfBucketEntry *e;
	SfBucket   *b;
	bool		found;
	uint32		hash = bucket_start_hash(kwhash, start);

	probe.window = window;
	probe.key = key;
	probe.start = start;
	Assert(hash == bucket_hash(&probe));
	e = sf_buckettab_lookup_hash(p->buckets, &probe, hash);
	if (e != NULL)
		return e->bucket;
	b = bucket_new(p, window, key, start, end);
	sf_buckettab_insert_hash(p->buckets, b, hash, &found);
	if (found)
		elog(ERROR, "streamforge: duplicate live bucket");
	return b;
}

/*
 * Remove a bucket from the live index and the heaps, and recycle it.  The
 * caller removes it from its session list first, if any, and from the
 * dirty set (sf_dirty_forget_bucket).
 */
void
sf_bucket_delete(SfPipeline *p, SfBucket *b)
{
	if (!sf_buckettab_delete(p->buckets, b))
		elog(ERROR, "streamforge: bucket missing from live index");
	heap_unplace(p, b);
	sf_magg_forget(p, b);
	p->nbuckets--;
	b->key = NULL;
	b->hnode.first_child = (pairingheap_node *) p->free_buckets;
	p->free_buckets = b;
}

/* Change a bucket's end (sessions), keeping its heap position right. */
void
sf_bucket_set_end(SfPipeline *p, SfBucket *b, int64 end)
{
	heap_unplace(p, b);
	b->end = end;
	heap_place(p, b);
}

/* Change a bucket's start (sessions), keeping the live index right. */
void
sf_bucket_set_start(SfPipeline *p, SfBucket *b, int64 start)
{
	bool		found;

	if (!sf_buckettab_delete(p->buckets, b))
		elog(ERROR, "streamforge: bucket missing from live index");
	b->start = start;
	sf_buckettab_insert(p->buckets, b, &found);
	if (found)
		elog(ERROR, "streamforge: duplicate live bucket");
}

/* ----------------------------------------------------------------
 * Aggregates
 * ----------------------------------------------------------------
 */
void
sf_agg_add(SfAgg *agg, int64 value)
{
	if (agg->count == 0)
	{
		agg->min = value;
		agg->max = value;
	}
	else
	{
		if (value < agg->min)
			agg->min = value;
		if (value > agg->max)
			agg->max = value;
	}
	agg->count++;
	agg->sum += value;
}

void
sf_agg_merge(SfAgg *into, const SfAgg *from)
{
	if (from->count == 0)
		return;
	if (into->count == 0)
	{
		int64	   *ext = into->ext;	/* measures: merged by sf_magg_merge */

		*into = *from;
		into->ext = ext;
		return;
	}
	if (from->min < into->min)
		into->min = from->min;
	if (from->max > into->max)
		into->max = from->max;
	into->count += from->count;
	into->sum += from->sum;
}

bool
sf_agg_equal(const SfAgg *a, const SfAgg *b)
{
	return a->count == b->count && a->sum == b->sum &&
		a->min == b->min && a->max == b->max;
}

/* ----------------------------------------------------------------
 * Assignment
 * ----------------------------------------------------------------
 */

void
sf_raise_out_of_range(const char *what, const char *window)
{
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("%s is out of range for type bigint", what),
			 window ? errdetail("The event falls into window \"%s\" at a bound that bigint cannot hold.",
								window) : 0));
}

/* Check start, end and end + lateness of one bucket */
static inline void
check_bucket(const SfWindowDef *w, int128 start, int128 end, int64 lateness)
{
	if (start < PG_INT64_MIN)
		sf_raise_out_of_range("window start", w->name);
	if (end > PG_INT64_MAX)
		sf_raise_out_of_range("window end", w->name);
	if (end + lateness > PG_INT64_MAX)
		sf_raise_out_of_range("window end plus lateness", w->name);
}

/* The most buckets one event can enter in window w */
int
sf_window_max_buckets(const SfWindowDef *w)
{
	if (w->kind == SF_WINDOW_SLIDING)
	{
		int128		n = ((int128) w->size + w->step - 1) / w->step;

		return (int) Min(n, (int128) SF_MAX_SLIDING_BUCKETS);
	}
	return 1;
}

/*
 * The buckets [starts[i], ends[i]) that an event at event_time enters in
 * fixed or sliding window w, at most max of them, in decreasing start
 * order.  Raises 22003 if a bound (or end + lateness) does not fit.
 * Session windows are handled by session.c; this returns their initial
 * interval [t, t + gap).
 */
int
sf_assign_windows(const SfWindowDef *w, int64 event_time, int64 lateness,
				  int64 *starts, int64 *ends, int max)
{
	int128		t = event_time;
	int			n = 0;

	/*
	 * The 64-bit fast path: with the event time, the window's parameters and
	 * the lateness all within (-2^61, 2^61), every bound and end + lateness
	 * lies within (-2^63, 2^63), so nothing can overflow and nothing needs
	 * checking.  The same buckets as the 128-bit path below.
	 */
#define SF_ASSIGN_SAFE	(INT64CONST(1) << 61)
	if (likely(event_time > -SF_ASSIGN_SAFE && event_time < SF_ASSIGN_SAFE &&
			   lateness < SF_ASSIGN_SAFE))
	{
		switch (w->kind)
		{
			case SF_WINDOW_FIXED:
				if (w->size < SF_ASSIGN_SAFE)
				{
					int64		q = event_time / w->size;

					if (event_time % w->size != 0 && event_time < 0)
						q--;
					starts[0] = q * w->size;
					ends[0] = starts[0] + w->size;
					return 1;
				}
				break;
			case SF_WINDOW_SLIDING:
				if (w->size < SF_ASSIGN_SAFE && w->step < SF_ASSIGN_SAFE)
				{
					int64		q = event_time / w->step;
					int64		start;

					if (event_time % w->step != 0 && event_time < 0)
						q--;
					for (start = q * w->step; start + w->size > event_time;
						 start -= w->step)
					{
						if (n >= max)
							elog(ERROR, "streamforge: sliding assignment overflow");
						starts[n] = start;
						ends[n] = start + w->size;
						n++;
					}
					return n;
				}
				break;
			case SF_WINDOW_SESSION:
				if (w->gap < SF_ASSIGN_SAFE)
				{
					starts[0] = event_time;
					ends[0] = event_time + w->gap;
					return 1;
				}
				break;
		}
	}
#undef SF_ASSIGN_SAFE

	switch (w->kind)
	{
		case SF_WINDOW_FIXED:
			{
				int128		start = sf_floor_div(t, w->size) * w->size;
				int128		end = start + w->size;

				check_bucket(w, start, end, lateness);
				starts[0] = (int64) start;
				ends[0] = (int64) end;
				return 1;
			}
		case SF_WINDOW_SLIDING:
			{
				int128		start = sf_floor_div(t, w->step) * w->step;

				/* every start that is a multiple of step with start <= t < start + size */
				for (; start + w->size > t; start -= w->step)
				{
					int128		end = start + w->size;

					check_bucket(w, start, end, lateness);
					if (n >= max)
						elog(ERROR, "streamforge: sliding assignment overflow");
					starts[n] = (int64) start;
					ends[n] = (int64) end;
					n++;
				}
				return n;
			}
		case SF_WINDOW_SESSION:
			{
				int128		end = t + w->gap;

				check_bucket(w, t, end, lateness);
				starts[0] = event_time;
				ends[0] = (int64) end;
				return 1;
			}
	}
	elog(ERROR, "streamforge: unknown window kind %d", (int) w->kind);
	return 0;					/* keep compiler quiet */
}

/* ----------------------------------------------------------------
 * Address order and row collection
 * ----------------------------------------------------------------
 */
/*
 * Address order: window name, key, start, end, all byte-wise (see
 * sf_address_order in engine.h).  Kept as a function for callers that
 * need a pointer to it.
 */
int
sf_address_cmp(const SfPipeline *p, const SfAddress *a, const SfAddress *b)
{
	return sf_address_order(a, b);
}

/* Rows sort in place, with the comparison inlined (sort_template.h) */
#define ST_SORT			sort_rows
#define ST_ELEMENT_TYPE	SfRow
#define ST_COMPARE(a, b)	sf_address_order(&(a)->addr, &(b)->addr)
#define ST_SCOPE		static
#define ST_CHECK_FOR_INTERRUPTS
#define ST_DEFINE
#include "lib/sort_template.h"

static void
rows_sort(SfRow *rows, int64 n)
{
	if (n > 1)
		sort_rows(rows, n);
}

/*
 * All live buckets (or only the ready ones, which are exactly the visible
 * rows) as rows in address order, palloc'd in CurrentMemoryContext.
 * Returns the number of rows.  This is for inspection and checkpoints: it
 * looks at every bucket.
 */
int64
sf_collect_rows(SfPipeline *p, bool visible_only, SfRow **rows)
{
	sf_buckettab_iterator it;
	SfBucketEntry *e;
	int64		n = 0;
	int64		looked = 0;
	int64		cap = visible_only ? p->nready : p->nbuckets;
	SfRow	   *out;

	out = palloc_extended(Max(cap, 1) * sizeof(SfRow), MCXT_ALLOC_HUGE);
	sf_buckettab_start_iterate(p->buckets, &it);
	while ((e = sf_buckettab_iterate(p->buckets, &it)) != NULL)
	{
		SfBucket   *b = e->bucket;

		if ((++looked & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		if (visible_only && !b->ready)
			continue;
		if (n >= cap)
			elog(ERROR, "streamforge: bucket count mismatch");
		out[n].addr.window = b->window;
		out[n].addr.key = b->key;
		out[n].addr.start = b->start;
		out[n].addr.end = b->end;
		out[n].agg = b->agg;
		n++;
	}
	rows_sort(out, n);
	*rows = out;
	return n;
}

/*
 * Call fn(p, b, arg) for every live bucket, in no order.  fn must not add
 * or delete buckets.
 */
void
sf_buckets_foreach(SfPipeline *p, void (*fn) (SfPipeline *, SfBucket *, void *),
				   void *arg)
{
	sf_buckettab_iterator it;
	SfBucketEntry *e;

	sf_buckettab_start_iterate(p->buckets, &it);
	while ((e = sf_buckettab_iterate(p->buckets, &it)) != NULL)
		fn(p, e->bucket, arg);
}

/*
 * The dirty set: the pre-image of each live bucket the current operation
 * touches (reconcile.c turns them into changes).  Here because it lives in
 * the buckets' dirty_epoch and dirty_index fields.
 */

/*
 * Save b's pre-image for this operation, unless already saved.
 */
void
sf_dirty_touch(SfPipeline *p, SfBucket *b)
{
	SfDirty    *d;

	if (b->dirty_epoch == p->epoch)
		return;
	if (p->ndirty == p->dirty_cap)
	{
		int			newcap = p->dirty_cap ? p->dirty_cap * 2 : 64;

		if (p->dirty == NULL)
			p->dirty = MemoryContextAlloc(p->cxt, newcap * sizeof(SfDirty));
		else
			p->dirty = repalloc_huge(p->dirty, newcap * sizeof(SfDirty));
		p->dirty_cap = newcap;
	}
	d = &p->dirty[p->ndirty];
	d->bucket = b;
	d->before.addr.window = b->window;
	d->before.addr.key = b->key;
	d->before.addr.start = b->start;
	d->before.addr.end = b->end;
	d->before.agg = b->agg;
	/*
	 * A ready bucket was emitted, unless it is being created right now (an
	 * event within the lateness that lands in an already closed window):
	 * only a new bucket has no events.
	 */
	d->was_visible = b->ready && b->agg.count > 0;
	/* measures: only an emitted row's pre-image is ever retracted */
	if (unlikely(b->agg.ext != NULL) && d->was_visible)
		d->before.agg.ext = sf_magg_copy(p->def.measures, b->agg.ext);
	b->dirty_epoch = p->epoch;
	b->dirty_index = p->ndirty;
	p->ndirty++;
}

/* b is about to be deleted: its pre-image stays, its "now" is "gone". */
void
sf_dirty_forget_bucket(SfPipeline *p, SfBucket *b)
{
	if (b->dirty_epoch == p->epoch)
		p->dirty[b->dirty_index].bucket = NULL;
	b->dirty_epoch = 0;
}
