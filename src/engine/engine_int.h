/*-------------------------------------------------------------------------
 *
 * engine_int.h
 *	  Declarations shared by the files of src/engine/ and nobody else:
 *	  the dirty set, session lists, and the functions one engine file calls
 *	  in another.  Files outside src/engine/ use engine/engine.h only
 *	  (test/run.d/layers.sh checks it).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/engine_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SF_ENGINE_INT_H
#define SF_ENGINE_INT_H

#include "common/hashfn.h"
#include "miscadmin.h"

#include "engine/engine.h"

/* Pre-image of a bucket touched by the current operation */
typedef struct SfDirty
{
	SfBucket   *bucket;			/* NULL once the bucket was merged away */
	SfRow		before;			/* address and aggregate at op start */
	bool		was_visible;	/* before.* was an emitted row */
} SfDirty;

/* The sessions of one (window, key), sorted by start, pairwise apart */
typedef struct SfSessionList
{
	int			n;
	int			cap;
	SfBucket  **items;
} SfSessionList;

/* ----------------------------------------------------------------
 * Prototypes, grouped by defining file
 * ----------------------------------------------------------------
 */

/*
 * definition.c: the index of name among the n names that lie stride bytes
 * apart from names, sorted by strcmp, or -1.  Always inlined, so that each
 * caller gets its own search with its stride folded in: engine.c's
 * lookup_partition is on the ingest path (issue 23: the search out of line
 * cost 22 instructions per event).
 */
static pg_attribute_always_inline int
sf_name_index(const char *names, Size stride, int n, const char *name)
{
	int			lo = 0,
				hi = n - 1;

	while (lo <= hi)
	{
		int			mid = lo + (hi - lo) / 2;
		int			c = strcmp(name, names + mid * stride);

		if (c == 0)
			return mid;
		if (c < 0)
			hi = mid - 1;
		else
			lo = mid + 1;
	}
	return -1;
}

/* clock.c: partition progress and the global watermark */
extern bool sf_clock_update(SfPipeline *p);

/* keys.c: interned keys; the fewest new keys that make a collection due */
#define SF_KEYS_COLLECT_MIN		1024
extern void sf_keys_init(SfPipeline *p, MemoryContext cxt);
extern SfString *sf_intern_key_hashed(SfPipeline *p, const char *data, int len,
									   uint32 hash);

/* engine.c */
extern SfIdentity *sf_partition_slot(const SfPipeline *p,
									 const SfPartition *part, int64 offset);

/*
 * engine.c: the checks of a delivery, shared by the serial engine and a
 * parallel writer's transaction (delta.c), which must decide and raise
 * exactly as the serial engine does.  The errors are out of line and
 * cold: the checks are on every delivery's path.
 */
extern pg_noinline pg_attribute_cold void sf_offset_conflict(const SfPipeline *p,
															 const SfPartition *part,
															 const SfDelivery *d,
															 const SfIdentity *held);
extern pg_noinline pg_attribute_cold void sf_identity_conflict(const SfPipeline *p,
															   const SfDelivery *d,
															   const SfIdentity *id);
extern void sf_count_replay(SfPipeline *p);
extern void sf_engine_advance_index(SfPipeline *p, int pi, int64 progress,
									SfChangeList *out);

/*
 * Assign event_time to the buckets of every window of def, in window
 * order, into starts/ends (room for cap); counts[w] is window w's number.
 * Returns the total.  Raises 22003 for a bucket bound out of range, before
 * anything changes.  Inline: the serial ingest runs it per event.
 */
static inline int
sf_assign_all(const SfPipelineDef *def, int64 event_time, int64 *starts,
			  int64 *ends, int cap, int *counts)
{
	int			total = 0;

	for (int w = 0; w < def->nwindows; w++)
	{
		counts[w] = sf_assign_windows(&def->windows[w], event_time,
									  def->lateness, starts + total,
									  ends + total, cap - total);
		total += counts[w];
	}
	return total;
}

/* identity.c */
extern SfIdentity *sf_identity_new(SfPipeline *p, const char *event_id,
								   int len, uint32 hash, uint32 *handle);
extern void sf_identity_free(SfPipeline *p, SfIdentity *id);
extern void sf_identity_unlink(SfPipeline *p, SfIdentity *id);
extern void sf_idtable_init(SfPipeline *p);
extern void sf_idtable_insert(SfPipeline *p, uint32 handle, uint32 hash);
extern void sf_idtable_prefetch(SfPipeline *p, uint32 hash);
extern SfIdentity *sf_idtable_next(SfPipeline *p, uint64 *pos);

/* limits.c */
extern pg_noinline pg_attribute_cold void sf_live_buckets_exceeded(const SfPipeline *p,
																  int64 more);

/*
 * Refuse (54000) an operation that would take pipeline p past
 * streamforge.max_live_buckets with more new buckets.  Called before the
 * operation changes anything.  Inline: every event runs it (issue 23: out
 * of line it cost 31 instructions per event).
 */
static inline void
sf_check_live_buckets(const SfPipeline *p, int64 more)
{
	if (sf_max_live_buckets > 0 && more > 0 && !sf_replaying_journal &&
		(int64) p->nbuckets + more > (int64) sf_max_live_buckets)
		sf_live_buckets_exceeded(p, more);
}

/*
 * The release of pending buckets (reconcile.c, head_clock.c): the first
 * pending bucket whose end the watermark reached, or NULL; then
 * sf_bucket_make_ready moves it, the first pending, to the ready ones.
 */
static inline SfBucket *
sf_pending_due(SfPipeline *p)
{
	SfBucket   *b;

	if (pairingheap_is_empty(&p->pending))
		return NULL;
	b = pairingheap_container(SfBucket, hnode, pairingheap_first(&p->pending));
	if (b->end > p->watermark)
		return NULL;
	CHECK_FOR_INTERRUPTS();
	return b;
}

static inline void
sf_bucket_make_ready(SfPipeline *p, SfBucket *b)
{
	(void) pairingheap_remove_first(&p->pending);
	b->ready = true;
	pairingheap_add(&p->ready, &b->hnode);
	p->nready++;
}

/* reconcile.c: change generation, finalization */
extern void sf_release_ready(SfPipeline *p);
extern void sf_op_finish(SfPipeline *p, SfChangeList *out);
extern void sf_changes_append(SfChangeList *out, const SfChange *c);
extern void sf_sort_changes(SfChange *changes, int n);
extern void sf_number_changes(SfPipeline *p, SfChangeList *out, int first);
extern void sf_bucket_change(SfPipeline *p, const SfBucket *b, SfChangeOp op,
							 int64 seq, SfChangeList *out);
typedef int64 (*SfFinalTagFn) (void *arg, const SfBucket *b);
extern void sf_finalize_ready(SfPipeline *p, SfChangeList *out,
							  SfFinalTagFn tag, void *arg);

/*
 * redefine.c: building windows from the remembered events, and the phases
 * of a definition change that a recompute shares (remap.c)
 */
extern void sf_derive_event(SfPipeline *p, int w, const SfIdentity *id,
							SfString *key, int64 limit, int64 old_buckets);

/* What the checks of a definition change leave for its other phases */
typedef struct RedefinePlan
{
	int		   *wmap;			/* old window index -> new, -1: dropped */
	int		   *copied;			/* the same, -1 also for a derived one */
	int		   *pmap;			/* old partition index -> new */
	bool	   *derive;			/* new window index -> built from history */
	bool		any_derived;
	SfIdentity **ids;			/* old's identities, by event_id */
	int64		nids;
	SfRow	   *rows;			/* old's live rows, in address order */
	int64		nrows;
	int64		limit;			/* on live buckets; 0: none */
} RedefinePlan;

/*
 * A recompute's new mapping of one accepted event of old (remap.c, which
 * hands sf_copy_state an array of them sorted by the identity's address)
 */
typedef struct SfRemapEntry
{
	const SfIdentity *id;		/* old's identity (the sort key) */
	const SfDelivery *d;		/* its new key and value; NULL: taken out */
	const int64 *mv;			/* its new measures (measures pipelines) */
	bool		changed;		/* the mapping differs from the event's */
} SfRemapEntry;

extern void sf_copy_state(const SfPipeline *old, SfPipeline *p,
						  const int *pmap, const int *wmap, SfIdentity **ids,
						  int64 nids, const SfRow *rows, int64 nrows,
						  const SfRemapEntry *remap, int64 nremap);
extern void sf_redefine_derive(SfPipeline *p, const SfPipeline *old,
							   const RedefinePlan *plan);
extern void sf_redefine_diff(SfPipeline *old, SfPipeline *p,
							 const SfPipelineDef *def, SfChangeList *out,
							 SfPipelineDef *names);

/* retention.c */
extern void sf_retention_track(SfPipeline *p, SfIdentity *id);

/* session.c: per (window, key) ordered sessions and merging */
extern void sf_sessions_init(SfPipeline *p);
extern void sf_session_add(SfPipeline *p, int window, SfString *key,
						   int64 event_time, int64 end, int64 value);
extern void sf_session_merge_in(SfPipeline *p, int window, SfString *key,
								int64 start, int64 end, const SfAgg *agg);
extern void sf_session_remove_bucket(SfPipeline *p, SfBucket *b);
extern bool sf_session_holds(SfPipeline *p, int window, SfString *key,
							 int64 t);

/* window.c: the live index (the assignment: window_ops.h) */
extern void sf_buckets_init(SfPipeline *p);
extern SfBucket *sf_bucket_insert(SfPipeline *p, int window, SfString *key,
								  int64 start, int64 end);
/*
 * The part of a live bucket's hash that its window and key give
 * (window.c's bucket_hash): the same for every bucket an event enters in
 * one window, so sf_bucket_get_hashed takes it computed once.
 */
static inline uint32
sf_bucket_key_hash(int window, const SfString *key)
{
	return hash_combine(key->hash, murmurhash32(window));
}
extern SfBucket *sf_bucket_get_hashed(SfPipeline *p, int window, SfString *key,
									  uint32 kwhash, int64 start, int64 end);
extern void sf_bucket_delete(SfPipeline *p, SfBucket *b);
extern void sf_bucket_set_end(SfPipeline *p, SfBucket *b, int64 end);
extern void sf_bucket_set_start(SfPipeline *p, SfBucket *b, int64 start);
extern void sf_agg_add(SfAgg *agg, int64 value);
extern void sf_agg_merge(SfAgg *into, const SfAgg *from);

/* aggregates.c: measures pipelines */
extern const int64 *sf_take_measures(SfPipeline *p) pg_attribute_cold;
extern bool sf_measures_match(const SfPipeline *p, const SfIdentity *id,
							  const int64 *measures);
extern void sf_id_set_measures(SfPipeline *p, SfIdentity *id,
							   const int64 *measures);
extern void sf_magg_merge(SfPipeline *p, SfAgg *into, const SfAgg *from);
extern void sf_id_put_measures(const SfPipeline *p, SfIdentity *id,
							   int64 arrival, const int64 *measures);
extern void sf_id_copy_measures(const SfPipeline *p, SfIdentity *dst,
								const SfPipeline *sp, const SfIdentity *src);
extern void sf_magg_rebase(const SfMeasuresDef *md, int64 *ext, int64 base);
extern int64 *sf_magg_alloc(SfPipeline *p);
extern void sf_magg_restore(SfPipeline *p, int64 *ext, const int64 *from);

/*
 * A recycled bucket's ext words, emptied (window.c's bucket_new; inline:
 * per new bucket).  Every copy or reset of ext goes through aggregates.c's
 * sf_magg_* (agg_ops.h, "State").
 */
static inline void
sf_magg_reset(SfPipeline *p, int64 *ext)
{
	const SfMeasuresDef *md = p->def.measures;

	/* a variable-size state was freed when its bucket was deleted */
	memset(ext, 0, (md->nwords + md->nvar) * sizeof(int64));
}

/*
 * A bucket about to be deleted (recycled): its variable-size states freed
 * (window.c's sf_bucket_delete; inline: per finalized bucket)
 */
static inline void
sf_magg_forget(SfPipeline *p, SfBucket *b)
{
	if (unlikely(p->var_cxt != NULL) && b->agg.ext != NULL)
		sf_magg_release(p->def.measures, b->agg.ext);
}
extern void sf_buckets_foreach(SfPipeline *p,
							   void (*fn) (SfPipeline *, SfBucket *, void *),
							   void *arg);
extern void sf_raise_out_of_range(const char *what, const char *window);

/*
 * window.c: the dirty set of an operation.  sf_op_begin starts one (inline:
 * every event runs it).
 */
static inline void
sf_op_begin(SfPipeline *p)
{
	p->busy = true;
	p->mutations++;
	p->epoch++;
	if (unlikely(p->epoch == 0))
	{
		/* wrapped: epoch 0 is "never"; stale marks must not match */
		p->epoch = 1;
	}
	p->ndirty = 0;
}
extern void sf_dirty_touch(SfPipeline *p, SfBucket *b);

/*
 * sf_op_finish for an operation that may have touched nothing: most
 * ingests only add to pending buckets, so their dirty set is empty and,
 * the watermark not having moved, nothing is due to finalize; then there
 * is nothing to reconcile, sort or number (issue 23: the call, its loops
 * and sorts cost about 45 instructions per event).  The test is
 * finalize()'s first step in reconcile.c.
 */
static inline void
sf_op_finish_quick(SfPipeline *p, SfChangeList *out)
{
	if (likely(p->ndirty == 0) &&
		(!p->has_watermark || pairingheap_is_empty(&p->ready) ||
		 !(p->watermark >
		   pairingheap_container(SfBucket, hnode,
								 pairingheap_first(&p->ready))->end +
		   p->def.lateness)))
	{
		p->busy = false;
		return;
	}
	sf_op_finish(p, out);
}
extern void sf_dirty_forget_bucket(SfPipeline *p, SfBucket *b);

/* engine.c, inline: a delivery's checks (see sf_offset_conflict) */

/*
 * A new unique event at event_time is late under a clock with watermark
 * (docs/semantics.md, Exact rules, 1: computed only with a watermark).
 */
static inline bool
sf_event_late(const SfPipelineDef *def, bool has_watermark, int64 watermark,
			  int64 event_time)
{
	int128		limit;

	if (!has_watermark)
		return false;
	limit = (int128) event_time + def->lateness;
	if (limit > PG_INT64_MAX)
		sf_raise_out_of_range("event_time plus lateness", NULL);
	return limit < watermark;
}

/* an identity's content (key, time, value) is d's */
static inline bool
sf_identity_matches(const SfIdentity *id, const SfDelivery *d)
{
	return id->event_time == d->event_time && id->value == d->value &&
		id->key->len == (uint32) d->key_len &&
		memcmp(id->key->data, d->key, d->key_len) == 0;
}

/* an identity is d's: same event id and content */
static inline bool
sf_delivery_matches(const SfIdentity *id, const SfDelivery *d)
{
	return id->event_id_len == (uint32) d->event_id_len &&
		memcmp(id->event_id, d->event_id, d->event_id_len) == 0 &&
		sf_identity_matches(id, d);
}

/*
 * The offset checks of delivery d to partition part of p (docs/semantics.md,
 * Deliveries), made before its identity is looked up: true when d is a
 * replay of the delivery held at its offset (a no-op that the caller counts
 * with sf_count_replay; *held is that delivery's identity, NULL or
 * forgotten when retention forgot it), false when d's offset is the next
 * one; SF003 otherwise.  mv: d's measures, NULL if p has none.
 */
static inline bool
sf_offset_check(const SfPipeline *p, const SfPartition *part,
				const SfDelivery *d, const int64 *mv, SfIdentity **held)
{
	if (unlikely(d->source_offset < 0))
		sf_offset_conflict(p, part, d, NULL);
	if (d->source_offset <= part->consumed)
	{
		SfIdentity *id = sf_partition_slot(p, part, d->source_offset);

		/* docs/semantics.md, Retention, 2: at a forgotten offset, anything is a replay */
		if (id == NULL || id->forgotten ||
			(sf_delivery_matches(id, d) &&
			 (likely(mv == NULL) || sf_measures_match(p, id, mv))))
		{
			*held = id;
			return true;
		}
		sf_offset_conflict(p, part, d, id);
	}
	if (unlikely(d->source_offset != part->consumed + 1))
		sf_offset_conflict(p, part, d, NULL);
	return false;
}

#endif							/* SF_ENGINE_INT_H */
