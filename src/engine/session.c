/*-------------------------------------------------------------------------
 *
 * session.c
 *	  Session windows: the ordered live sessions of each (window, key), and
 *	  merging; putting back the live buckets of a rebuilt pipeline.
 *
 * Invariant: the live sessions of one (window, key) are kept in an array
 * sorted by start and are pairwise apart: for neighbours [a, b) and [c, d),
 * b < c (touching sessions, b == c, would have merged).  Hence their ends
 * are sorted too, and the sessions a new interval [t, e) meets (those with
 * start <= e and end >= t, docs/semantics.md, Exact rules, 10) form one contiguous run found by
 * binary search.  Merging keeps the first session of the run as the
 * survivor, folds the others' aggregates into it and deletes them; the
 * dirty set holds every pre-image, so reconciliation retracts each emitted
 * address that disappears.
 *
 * Memory.  The lists live in p->sessions, a simplehash in p->cxt, and
 * their item arrays in p->cxt (freed when a list empties).  A list holds
 * pointers to buckets that window.c's live index owns: a live session
 * bucket is in exactly one list, put there by sf_session_add or, for a
 * rebuild, sf_bucket_restore, and taken out when it goes: merged away
 * here, or finalized (reconcile.c calls sf_session_remove_bucket before it
 * deletes the bucket).
 *
 * Callers: the engine's files (engine_int.h), and the decoders for
 * sf_bucket_restore, which puts back a live bucket of any window (engine.h).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/session.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"

#include "engine/engine.h"
#include "engine/engine_int.h"

typedef struct SfSessionKey
{
	SfString   *key;			/* interned */
	uint16		window;
} SfSessionKey;

typedef struct SfSessionEntry
{
	SfSessionKey skey;
	char		status;
	SfSessionList list;
} SfSessionEntry;

#define SH_PREFIX		sf_sesstab
#define SH_ELEMENT_TYPE	SfSessionEntry
#define SH_KEY_TYPE		SfSessionKey
#define SH_KEY			skey
#define SH_HASH_KEY(tb, k)	hash_combine((k).key->hash, murmurhash32((k).window))
#define SH_EQUAL(tb, a, b)	((a).key == (b).key && (a).window == (b).window)
#define SH_SCOPE		static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

void
sf_sessions_init(SfPipeline *p)
{
	p->sessions = sf_sesstab_create(p->cxt, 64, NULL);
}

static SfSessionList *
session_list(SfPipeline *p, int window, SfString *key, bool create)
{
	SfSessionKey k;
	SfSessionEntry *e;
	bool		found;

	k.key = key;
	k.window = window;
	if (!create)
	{
		e = sf_sesstab_lookup(p->sessions, k);
		return e ? &e->list : NULL;
	}
	/*
	 * A lookup first: the list nearly always exists, and simplehash's
	 * insert costs about twice its lookup (issue 23).  Not when the table
	 * is due to grow, which the insert would do even for a present key: the
	 * table stays exactly as the insert alone left it.
	 */
	if (likely(p->sessions->members < p->sessions->grow_threshold))
	{
		e = sf_sesstab_lookup(p->sessions, k);
		if (likely(e != NULL))
			return &e->list;
	}
	e = sf_sesstab_insert(p->sessions, k, &found);
	if (!found)
	{
		e->list.n = 0;
		e->list.cap = 0;
		e->list.items = NULL;
	}
	return &e->list;
}

/* First index whose session ends at or after t (ends are sorted) */
static int
first_reaching(const SfSessionList *l, int64 t)
{
	int			lo = 0,
				hi = l->n;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (l->items[mid]->end < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void
list_insert_at(SfPipeline *p, SfSessionList *l, int pos, SfBucket *b)
{
	if (l->n == l->cap)
	{
		int			newcap = l->cap ? l->cap * 2 : 4;

		if (l->items == NULL)
			l->items = MemoryContextAlloc(p->cxt, newcap * sizeof(SfBucket *));
		else
			l->items = repalloc(l->items, newcap * sizeof(SfBucket *));
		l->cap = newcap;
	}
	memmove(&l->items[pos + 1], &l->items[pos],
			(l->n - pos) * sizeof(SfBucket *));
	l->items[pos] = b;
	l->n++;
}

static void
list_remove_range(SfSessionList *l, int from, int count)
{
	memmove(&l->items[from], &l->items[from + count],
			(l->n - from - count) * sizeof(SfBucket *));
	l->n -= count;
}

/*
 * The session of window's sessions of key that interval [start, end)
 * joins: the run of sessions it meets merged into the first (the
 * survivor, stretched to the union), or a new empty session.  The caller
 * has checked the bounds (sf_assign_windows) and begun an operation, and
 * adds to the result.
 */
static SfBucket *
session_join(SfPipeline *p, int window, SfString *key, int64 start,
			 int64 end)
{
	SfSessionList *l = session_list(p, window, key, true);
	int			first = first_reaching(l, start);
	int			last = first;
	SfBucket   *survivor;
	int64		new_start,
				new_end;
	int			i;

	while (last < l->n && l->items[last]->start <= end)
		last++;

	if (last == first)
	{
		/* meets nothing: a new session */
		SfBucket   *b = sf_bucket_insert(p, window, key, start, end);

		if (b->ready)			/* a pending one cannot change the view */
			sf_dirty_touch(p, b);
		list_insert_at(p, l, first, b);
		return b;
	}

	/*
	 * Pre-images of ready buckets only: a pending survivor stays pending
	 * (its end only grows), and a pending bucket merged into it was never
	 * visible.
	 */
	survivor = l->items[first];
	if (survivor->ready)
		sf_dirty_touch(p, survivor);
	new_start = Min(start, survivor->start);
	new_end = Max(end, l->items[last - 1]->end);

	for (i = first + 1; i < last; i++)
	{
		SfBucket   *b = l->items[i];

		if (b->ready)
			sf_dirty_touch(p, b);
		if (unlikely(b->agg.ext != NULL))
			sf_magg_merge(p, &survivor->agg, &b->agg);
		sf_agg_merge(&survivor->agg, &b->agg);
		sf_dirty_forget_bucket(p, b);
		sf_bucket_delete(p, b);
	}
	list_remove_range(l, first + 1, last - first - 1);

	if (new_start != survivor->start)
		sf_bucket_set_start(p, survivor, new_start);
	if (new_end != survivor->end)
		sf_bucket_set_end(p, survivor, new_end);
	return survivor;
}

/*
 * Add an accepted event at event_time with session interval
 * [event_time, end) to window's sessions of key.  The caller has checked
 * the bounds (sf_assign_windows) and begun an operation.
 */
void
sf_session_add(SfPipeline *p, int window, SfString *key, int64 event_time,
			   int64 end, int64 value)
{
	SfBucket   *b = session_join(p, window, key, event_time, end);

	sf_agg_add(&b->agg, value);
	if (unlikely(b->agg.ext != NULL))
		sf_magg_add(p, &b->agg, p->cur_event);
}

/*
 * Merge a parallel writer's session [start, end) of aggregate agg (its
 * events, its measures words' arrivals already global) into window's
 * sessions of key, at commit (design 4.5, step 5: sessions by interval
 * union).  Every session it meets is pending, as the commit's validation
 * has established: no change.
 */
void
sf_session_merge_in(SfPipeline *p, int window, SfString *key, int64 start,
					int64 end, const SfAgg *agg)
{
	SfBucket   *b = session_join(p, window, key, start, end);

	if (b->ready)
		elog(ERROR, "streamforge: a transaction delta reaches a ready session");
	if (unlikely(b->agg.ext != NULL))
		sf_magg_merge(p, &b->agg, agg);
	sf_agg_merge(&b->agg, agg);
}

/*
 * Put a restored session bucket into its list.  Returns false, changing
 * nothing, if it would meet (overlap or touch) a live session of the same
 * (window, key).
 */
static bool
session_insert_bucket(SfPipeline *p, SfBucket *b)
{
	SfSessionList *l = session_list(p, b->window, b->key, true);
	int			pos = first_reaching(l, b->start);

	if (pos < l->n && l->items[pos]->start <= b->end)
		return false;
	list_insert_at(p, l, pos, b);
	return true;
}

/*
 * Rebuilding a pipeline (restore, a definition or retention change): a live
 * bucket at (window, key, start) with end and agg, filed by the current
 * watermark (so the clock is restored first), and for a session window in
 * its key's session list.  The caller guarantees that no live bucket has
 * this (window, key, start).  Returns false if the session would touch or
 * overlap another one of its key; the caller raises its own error.
 */
bool
sf_bucket_restore(SfPipeline *p, int window, SfString *key, int64 start,
				  int64 end, const SfAgg *agg)
{
	SfBucket   *b = sf_bucket_insert(p, window, key, start, end);
	int64	   *ext = b->agg.ext;

	b->agg = *agg;
	b->agg.ext = ext;
	if (ext != NULL)
	{
		if (agg->ext == NULL)
			elog(ERROR, "streamforge: restored bucket without aggregates");
		sf_magg_restore(p, ext, agg->ext);
	}
	return !sf_window_merges(&p->def.windows[window]) ||
		session_insert_bucket(p, b);
}

/*
 * Whether a live session of window and key (interned in p) holds time t:
 * the lists hold exactly the live sessions, disjoint and ordered.
 */
bool
sf_session_holds(SfPipeline *p, int window, SfString *key, int64 t)
{
	SfSessionList *l = session_list(p, window, key, false);
	int			pos;

	if (l == NULL)
		return false;
	pos = first_reaching(l, t);
	/* one session at most ends at t (disjoint), and it does not hold t */
	if (pos < l->n && l->items[pos]->end == t)
		pos++;
	return pos < l->n && l->items[pos]->start <= t;
}

/* Take a session bucket out of its list (finalization). */
void
sf_session_remove_bucket(SfPipeline *p, SfBucket *b)
{
	SfSessionList *l = session_list(p, b->window, b->key, false);
	int			pos;

	if (l == NULL)
		elog(ERROR, "streamforge: session list missing");
	pos = first_reaching(l, b->end);
	if (pos >= l->n || l->items[pos] != b)
		elog(ERROR, "streamforge: session missing from its list");
	list_remove_range(l, pos, 1);
	if (l->n == 0)
	{
		SfSessionKey k;

		if (l->items)
			pfree(l->items);
		k.key = b->key;
		k.window = b->window;
		sf_sesstab_delete(p->sessions, k);
	}
}
