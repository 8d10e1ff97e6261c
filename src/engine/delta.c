/*-------------------------------------------------------------------------
 *
 * delta.c
 *	  A writer's transaction on a parallel pipeline (issue 46,
 *	  docs/design/parallel-writers.md, section 4.4): its deliveries in the
 *	  lanes it claimed, its view clock, the log of its unique events and
 *	  reports, and the transaction delta (one partial aggregate per bucket
 *	  address its events touched while the bucket was pending).
 *
 * Design.  A delivery is checked as engine.c checks it, in the same order
 * (partition, offset, identity, lateness, bucket bounds), against the
 * delivering partition's lane, which the writer's claim makes its own, and
 * against the head's fingerprint index and the transaction's own new ids
 * for the identity.  Lateness and readiness are decided against the view
 * clock: the head's clock when the transaction began, moved only by the
 * transaction's own advance, mark_idle and built-in progress.  A unique
 * event that is late is logged as such (a late row at commit); one whose
 * smallest bucket end is at or below the view watermark touches a ready
 * bucket and is logged to be applied alone at commit (design: an "E"
 * event), since it emits changes; any other is aggregated into the delta,
 * which the head merges before it replays the log (head.c says why that
 * order changes no change row).
 *
 * sf_txn_decide decides every logged event again under another clock (the
 * head's committed clock at commit): to check the call-time decisions
 * (design 4.5 step 4), or to replace them and rebuild the delta from the
 * log (7a, re-decide).  The call path and the re-decide use the same
 * event_decide, so they cannot disagree on a rule.
 *
 * Sessions have no delta yet (the design's delta sessions per window and
 * key, merged by interval union): in a pipeline with a session window
 * every accepted event is applied alone, which is exact and serializes
 * the windows' work at commit.  What is not here yet (section 12):
 * retention and measures (sf_head_create refuses them), and confirming a
 * fingerprint hit in a lane this backend has not loaded.
 *
 * Memory.  The transaction's log, delta, view clock and new-id index live
 * in t->cxt; the lanes' records it adds live in the lanes (head.c owns
 * them).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/delta.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "miscadmin.h"

#include "engine/engine.h"
#include "engine/engine_int.h"
#include "engine/parallel.h"

/* ----------------------------------------------------------------
 * The delta: bucket address -> partial aggregate
 * ----------------------------------------------------------------
 */

/* An address; the key is a lane's interned key, compared by its bytes */
typedef struct SfDeltaKey
{
	const SfString *key;
	int64		start;
	int			window;
} SfDeltaKey;

typedef struct SfDeltaEntry
{
	SfDeltaKey	k;
	char		status;
	uint32		hash;
	int64		end;
	SfAgg		agg;
} SfDeltaEntry;

static inline uint32
delta_hash(const SfDeltaKey *k)
{
	return hash_combine(hash_combine(k->key->hash, murmurhash32(k->window)),
						murmurhash32((uint32) k->start ^
									 (uint32) ((uint64) k->start >> 32)));
}

static inline bool
delta_equal(const SfDeltaKey *a, const SfDeltaKey *b)
{
	return a->window == b->window && a->start == b->start &&
		(a->key == b->key ||
		 (a->key->hash == b->key->hash && a->key->len == b->key->len &&
		  memcmp(a->key->data, b->key->data, a->key->len) == 0));
}

#define SH_PREFIX		sf_deltatab
#define SH_ELEMENT_TYPE	SfDeltaEntry
#define SH_KEY_TYPE		SfDeltaKey
#define SH_KEY			k
#define SH_HASH_KEY(tb, key)	delta_hash(&(key))
#define SH_EQUAL(tb, a, b)		delta_equal(&(a), &(b))
#define SH_STORE_HASH
#define SH_GET_HASH(tb, a)		((a)->hash)
#define SH_SCOPE		static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

/*
 * The delta's sessions (design 4.4, 4.5: sessions by interval union): per
 * (window, key) the union of the transaction's pending session intervals,
 * sorted by start and pairwise apart as session.c keeps the head's, each
 * with the partial aggregate of its events.
 */
typedef struct SfDeltaSession
{
	int64		start;
	int64		end;
	SfAgg		agg;
} SfDeltaSession;

typedef struct SfDeltaSessKey
{
	const SfString *key;
	int			window;
} SfDeltaSessKey;

typedef struct SfDeltaSessEntry
{
	SfDeltaSessKey k;
	char		status;
	uint32		hash;
	int			n;
	int			cap;
	SfDeltaSession *items;
} SfDeltaSessEntry;

#define SH_PREFIX		sf_dsesstab
#define SH_ELEMENT_TYPE	SfDeltaSessEntry
#define SH_KEY_TYPE		SfDeltaSessKey
#define SH_KEY			k
#define SH_HASH_KEY(tb, key)	hash_combine((key).key->hash, murmurhash32((key).window))
#define SH_EQUAL(tb, a, b)		((a).window == (b).window && \
								 ((a).key == (b).key || \
								  ((a).key->hash == (b).key->hash && \
								   (a).key->len == (b).key->len && \
								   memcmp((a).key->data, (b).key->data, \
										  (a).key->len) == 0)))
#define SH_STORE_HASH
#define SH_GET_HASH(tb, a)		((a)->hash)
#define SH_SCOPE		static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

/*
 * Add identity id's session interval [start, end) of window to the
 * delta's sessions: the run of delta sessions it meets (start <= end and
 * end >= start, touching included, as session.c) becomes one.
 */
static void
delta_session_add(SfTxn *t, int window, const SfIdentity *id, int64 start,
				  int64 end)
{
	SfDeltaSessKey k;
	SfDeltaSessEntry *e;
	SfDeltaSession *sv;
	bool		found;
	int			first = 0;
	int			last;

	k.key = id->key;
	k.window = window;
	e = sf_dsesstab_insert(t->sessions, k, &found);
	if (!found)
	{
		e->n = 0;
		e->cap = 4;
		e->items = MemoryContextAlloc(t->cxt, e->cap * sizeof(SfDeltaSession));
	}
	while (first < e->n && e->items[first].end < start)
		first++;
	last = first;
	while (last < e->n && e->items[last].start <= end)
		last++;
	if (last == first)
	{
		/* meets nothing: a new delta session */
		if (e->n == e->cap)
		{
			e->cap *= 2;
			e->items = repalloc(e->items, e->cap * sizeof(SfDeltaSession));
		}
		memmove(e->items + first + 1, e->items + first,
				(e->n - first) * sizeof(SfDeltaSession));
		e->n++;
		t->nsessions++;
		sv = &e->items[first];
		sv->start = start;
		sv->end = end;
		memset(&sv->agg, 0, sizeof(SfAgg));
		if (unlikely(t->mp != NULL))
			sv->agg.ext = sf_magg_alloc(t->mp);
	}
	else
	{
		sv = &e->items[first];
		sv->start = Min(start, sv->start);
		sv->end = Max(end, e->items[last - 1].end);
		for (int i = first + 1; i < last; i++)
		{
			SfAgg	   *from = &e->items[i].agg;

			if (unlikely(t->mp != NULL))
			{
				sf_magg_merge(t->mp, &sv->agg, from);
				sf_magg_release(t->mp->def.measures, from->ext);
			}
			sf_agg_merge(&sv->agg, from);
		}
		memmove(e->items + first + 1, e->items + last,
				(e->n - last) * sizeof(SfDeltaSession));
		e->n -= last - first - 1;
		t->nsessions -= last - first - 1;
	}
	sf_agg_add(&sv->agg, id->value);
	if (unlikely(t->mp != NULL))
		sf_magg_add(t->mp, &sv->agg, id);
}

/*
 * Add identity id to the delta's address (window, its key, start).  A
 * measures pipeline's words are added with the identity's arrival number,
 * local to the transaction until the commit rebases them (design 13, risk
 * 10); their memory is t->mp's.
 */
static void
delta_add(SfTxn *t, int window, const SfIdentity *id, int64 start, int64 end)
{
	SfDeltaKey	k;
	SfDeltaEntry *e;
	bool		found;

	k.key = id->key;
	k.start = start;
	k.window = window;
	e = sf_deltatab_insert(t->delta, k, &found);
	if (!found)
	{
		e->end = end;
		memset(&e->agg, 0, sizeof(SfAgg));
		if (unlikely(t->mp != NULL))
			e->agg.ext = sf_magg_alloc(t->mp);
	}
	sf_agg_add(&e->agg, id->value);
	if (unlikely(t->mp != NULL))
		sf_magg_add(t->mp, &e->agg, id);
}

/* Empty the delta (to be rebuilt), freeing its variable-size states */
static void
delta_reset(SfTxn *t)
{
	if (t->mp != NULL && t->mp->def.measures->nvar > 0)
	{
		sf_deltatab_iterator it;
		SfDeltaEntry *e;

		sf_deltatab_start_iterate(t->delta, &it);
		while ((e = sf_deltatab_iterate(t->delta, &it)) != NULL)
			sf_magg_release(t->mp->def.measures, e->agg.ext);
	}
	sf_deltatab_reset(t->delta);
	if (t->sessions != NULL)
	{
		sf_dsesstab_iterator it;
		SfDeltaSessEntry *e;

		sf_dsesstab_start_iterate(t->sessions, &it);
		while ((e = sf_dsesstab_iterate(t->sessions, &it)) != NULL)
			for (int i = 0; t->mp != NULL && i < e->n; i++)
				sf_magg_release(t->mp->def.measures, e->items[i].agg.ext);
		sf_dsesstab_reset(t->sessions);
		t->nsessions = 0;
	}
}

/* The number of addresses in the delta, its sessions included */
int64
sf_txn_delta_size(const SfTxn *t)
{
	return (int64) t->delta->members + t->nsessions;
}

/*
 * Call fn for every address of the delta and its partial aggregate (the
 * head's merge, head.c).  The order is the table's: the merge adds into
 * pending buckets, whose order nothing observes.
 */
void
sf_txn_delta_foreach(SfTxn *t,
					 void (*fn) (void *arg, int window, const SfString *key,
								 int64 start, int64 end, const SfAgg *agg),
					 void *arg)
{
	sf_deltatab_iterator it;
	SfDeltaEntry *e;

	sf_deltatab_start_iterate(t->delta, &it);
	while ((e = sf_deltatab_iterate(t->delta, &it)) != NULL)
		fn(arg, e->k.window, e->k.key, e->k.start, e->end, &e->agg);
	if (t->sessions != NULL)
	{
		sf_dsesstab_iterator sit;
		SfDeltaSessEntry *se;

		sf_dsesstab_start_iterate(t->sessions, &sit);
		while ((se = sf_dsesstab_iterate(t->sessions, &sit)) != NULL)
			for (int i = 0; i < se->n; i++)
				fn(arg, se->k.window, se->k.key, se->items[i].start,
				   se->items[i].end, &se->items[i].agg);
	}
}

/* ----------------------------------------------------------------
 * A clock on its own (clock.c's and progress.c's rules)
 * ----------------------------------------------------------------
 */

/* A copy of p's clock, in CurrentMemoryContext */
void
sf_clock_view_init(SfClockView *c, const SfPipeline *p)
{
	c->n = p->def.npartitions;
	c->parts = palloc(Max(c->n, 1) * sizeof(SfClockPart));
	for (int i = 0; i < c->n; i++)
	{
		c->parts[i].has_progress = p->partitions[i].has_progress;
		c->parts[i].progress = p->partitions[i].progress;
		c->parts[i].idle = p->partitions[i].idle;
	}
	c->has_watermark = p->has_watermark;
	c->watermark = p->watermark;
}

/* clock.c's clock_compute and sf_clock_update */
static void
clock_view_update(SfClockView *c)
{
	bool		any = false;
	int64		min = PG_INT64_MAX;

	for (int i = 0; i < c->n; i++)
	{
		const SfClockPart *part = &c->parts[i];

		if (part->idle)
			continue;
		if (!part->has_progress)
			return;
		if (!any || part->progress < min)
			min = part->progress;
		any = true;
	}
	if (!any)
		return;
	if (c->has_watermark && min <= c->watermark)
		return;
	c->has_watermark = true;
	c->watermark = min;
}

/* sf_engine_advance's clock part */
void
sf_clock_view_advance(SfClockView *c, int partition, int64 progress)
{
	SfClockPart *part = &c->parts[partition];

	part->idle = false;
	if (!part->has_progress || progress > part->progress)
	{
		part->has_progress = true;
		part->progress = progress;
	}
	clock_view_update(c);
}

/* sf_engine_mark_idle's clock part */
void
sf_clock_view_idle(SfClockView *c, int partition)
{
	c->parts[partition].idle = true;
	clock_view_update(c);
}

/*
 * finish's clock part: every partition reports the bigint maximum.  The
 * order of its advances (sf_finish_order) decides its changes, not where
 * the clock ends, so any order will do here.
 */
void
sf_clock_view_finish(SfClockView *c)
{
	for (int i = 0; i < c->n; i++)
		sf_clock_view_advance(c, i, PG_INT64_MAX);
}

/* sf_progress_after_accept's clock part; nothing without out_of_orderness */
void
sf_clock_view_accept(SfClockView *c, const SfPipelineDef *def, int partition,
					 int64 event_time)
{
	int128		t;

	if (!def->has_out_of_orderness)
		return;
	t = (int128) event_time - def->out_of_orderness;
	if (t < PG_INT64_MIN)
		return;
	sf_clock_view_advance(c, partition, (int64) t);
}

/* ----------------------------------------------------------------
 * Decisions
 * ----------------------------------------------------------------
 */

/*
 * Decide a unique event under clock c as engine.c does: late (only with a
 * watermark), else the bounds of every bucket it enters (22003), and
 * whether the smallest bucket end is at or below the watermark (it touches
 * a ready bucket: applied alone).  Returns the flags; the assignment is
 * left in t->starts/t->ends, nassigned per window in counts.
 */
static uint8
event_decide(SfTxn *t, const SfClockView *c, const SfIdentity *id,
			 int *counts, int *total)
{
	const SfPipelineDef *def = &t->head->p->def;
	int			cap = t->head->p->assign_cap;
	int			n;
	bool		any = false;
	int64		min_end = 0;

	*total = 0;
	if (sf_event_late(def, c->has_watermark, c->watermark, id->event_time))
		return SF_TXN_LATE;
	n = sf_assign_all(def, id->event_time, t->starts, t->ends, cap, counts);
	for (int w = 0, j = 0; w < def->nwindows; j += counts[w], w++)
	{
		/*
		 * A bucket is ready once it ends at or below the watermark; a
		 * session may meet a ready one when the event is at or below it (a
		 * ready session ends there, and merges only intervals reaching it)
		 */
		bool		merges = sf_window_merges(&def->windows[w]);

		for (int i = j; i < j + counts[w]; i++)
		{
			int64		at = merges ? t->starts[i] : t->ends[i];

			if (!any || at < min_end)
				min_end = at;
			any = true;
		}
	}
	*total = n;
	if (any && c->has_watermark && min_end <= c->watermark)
		return SF_TXN_ALONE;
	return 0;
}

/* Aggregate an event, decided to touch pending buckets only, into the delta */
static void
event_to_delta(SfTxn *t, const SfIdentity *id, const int *counts)
{
	const SfPipelineDef *def = &t->head->p->def;
	int			k = 0;

	for (int w = 0; w < def->nwindows; w++)
	{
		for (int j = 0; j < counts[w]; j++)
		{
			if (t->sessions != NULL && sf_window_merges(&def->windows[w]))
				delta_session_add(t, w, id, t->starts[k + j],
								  t->ends[k + j]);
			else
				delta_add(t, w, id, t->starts[k + j], t->ends[k + j]);
		}
		k += counts[w];
	}
}

/*
 * Decide every logged event again under clock's clock (the head's
 * committed clock), replaying the log's reports and built-in progress on a
 * copy of it.  rebuild false: whether every decision equals the logged one
 * (design 4.5, step 4).  rebuild true: the decisions replace the logged
 * ones, the lane identities' late flags follow, and the delta is rebuilt
 * from the log (7a); returns true.  Errors a serial run would raise at an
 * event (22003 of an event no longer late) are raised here.  Events
 * marked duplicate (another lane committed their id first) are skipped:
 * a duplicate changes no clock.
 */
bool
sf_txn_decide(SfTxn *t, const SfPipeline *clock, bool rebuild)
{
	SfHead	   *h = t->head;
	const SfPipelineDef *def = &h->p->def;
	SfClockView c;
	int		   *counts = palloc(Max(def->nwindows, 1) * sizeof(int));
	bool		same = true;

	sf_clock_view_init(&c, clock);
	if (rebuild)
		delta_reset(t);
	for (int64 i = 0; i < t->nops; i++)
	{
		SfTxnOp    *op = &t->ops[i];

		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		if (op->kind == SF_TXN_ADVANCE)
			sf_clock_view_advance(&c, op->lane, op->value);
		else if (op->kind == SF_TXN_IDLE)
			sf_clock_view_idle(&c, op->lane);
		else if (op->kind == SF_TXN_FINISH)
			sf_clock_view_finish(&c);
		else if (op->kind == SF_TXN_EVENT && !(op->flags & SF_TXN_DUP))
		{
			SfIdentity *id = sf_id_ptr(h->lanes[op->lane], op->handle);
			int			total;
			uint8		flags = event_decide(t, &c, id, counts, &total);

			if (!rebuild)
			{
				if (flags != (op->flags & (SF_TXN_LATE | SF_TXN_ALONE)))
				{
					same = false;
					break;
				}
			}
			else
			{
				op->flags = flags;
				id->late = (flags & SF_TXN_LATE) != 0;
				if (flags == 0)
					event_to_delta(t, id, counts);
			}
			if (!(flags & SF_TXN_LATE))
				sf_clock_view_accept(&c, def, op->lane, id->event_time);
		}
	}
	pfree(c.parts);
	pfree(counts);
	if (rebuild)
		t->stale = false;
	return same;
}

/* ----------------------------------------------------------------
 * The calls
 * ----------------------------------------------------------------
 */

/*
 * Begin a transaction on head h: its base is the head as it is now (the
 * caller has caught it up), its view clock a copy of the head's.
 */
SfTxn *
sf_txn_begin(MemoryContext parent, SfHead *h)
{
	MemoryContext cxt = AllocSetContextCreate(parent,
											  "streamforge transaction delta",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	SfTxn	   *t = palloc0(sizeof(SfTxn));

	t->cxt = cxt;
	t->head = h;
	t->base = h->version;
	sf_clock_view_init(&t->view, h->p);
	t->newids = sf_fp_create(cxt, 0);
	t->delta = sf_deltatab_create(cxt, 64, NULL);
	t->ops_cap = 64;
	t->ops = palloc(t->ops_cap * sizeof(SfTxnOp));
	for (int w = 0; w < h->p->def.nwindows; w++)
		if (sf_window_merges(&h->p->def.windows[w]))
			t->has_sessions = true;
	if (t->has_sessions)
		t->sessions = sf_dsesstab_create(cxt, 16, NULL);
	t->starts = palloc(h->p->assign_cap * sizeof(int64));
	t->ends = palloc(h->p->assign_cap * sizeof(int64));
	if (h->p->def.measures != NULL)
	{
		/* the delta's measures words and states: a pipeline's memory */
		SfPipelineDef mdef = h->p->def;

		mdef.nwindows = 0;
		t->mp = sf_pipeline_create(cxt, &mdef);
	}
	MemoryContextSwitchTo(old);
	return t;
}

void
sf_txn_free(SfTxn *t)
{
	MemoryContextDelete(t->cxt);
}

static SfTxnOp *
txn_log(SfTxn *t, uint8 kind, int lane)
{
	SfTxnOp    *op;

	if (t->nops == t->ops_cap)
	{
		t->ops_cap *= 2;
		t->ops = repalloc_huge(t->ops, t->ops_cap * sizeof(SfTxnOp));
	}
	op = &t->ops[t->nops++];
	op->kind = kind;
	op->flags = 0;
	op->lane = (uint16) lane;
	op->handle = 0;
	op->value = 0;
	return op;
}

static int
txn_partition(SfTxn *t, const char *name)
{
	const SfPipelineDef *def = &t->head->p->def;
	int			i = sf_partition_index(def, name);

	if (i < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("partition \"%s\" does not exist in pipeline \"%s\"",
						sf_msg_cstr(name), def->name)));
	return i;
}

static inline bool
same_event_id(const SfIdentity *id, const char *event_id, int len)
{
	return id->event_id_len == (uint32) len &&
		memcmp(id->event_id, event_id, len) == 0;
}

/*
 * The identity of event_id among fp's slots of hash, or NULL: every slot
 * of the hash is confirmed by the id's bytes in its lane (all lanes are
 * loaded in this step, parallel.h).
 */
static SfIdentity *
fp_find(SfHead *h, const SfFingerprints *fp, uint64 hash,
		const char *event_id, int len, uint16 *lane, uint32 *handle)
{
	SfFpCursor	c;
	uint16		l;
	uint64		loc;

	sf_fp_start(&c, hash);
	while (sf_fp_next(fp, &c, &l, &loc))
	{
		SfIdentity *id = sf_id_ptr(h->lanes[l], (uint32) loc);

		if (same_event_id(id, event_id, len))
		{
			*lane = l;
			*handle = (uint32) loc;
			return id;
		}
	}
	return NULL;
}

/*
 * Deliver one event (engine.c's sf_engine_ingest_hashed, in a lane): the
 * partition's lane must be claimed by this transaction (the layers above
 * hold the claim).  mv: its measures (a measures pipeline's, width words,
 * checked by the caller as sf_engine_ingest_measures's are), else NULL.
 * Nothing is returned: the changes are the commit's.
 */
static void
txn_ingest(SfTxn *t, const SfDelivery *d, const int64 *mv)
{
	SfHead	   *h = t->head;
	const SfPipelineDef *def = &h->p->def;
	int			pi;
	SfPipeline *lane;
	SfPartition *part;
	SfIdentity *id;
	SfString   *key;
	uint64		fph;
	uint16		flane;
	uint32		handle;
	int		   *counts = h->p->assign_counts;
	int			total;
	uint8		flags;
	SfTxnOp    *op;

	Assert(!t->committed);
	/* the serial engine's order: the measures before the partition */
	if ((def->measures != NULL) != (mv != NULL))
		sf_measures_arity_error(h->p, mv == NULL ? -1 : 0);
	pi = txn_partition(t, d->partition);
	lane = h->lanes[pi];
	part = &lane->partitions[pi];
	t->deliveries++;
	if (unlikely(t->lane_from == NULL))
	{
		t->lane_from = MemoryContextAlloc(t->cxt,
										  def->npartitions * sizeof(int64));
		for (int i = 0; i < def->npartitions; i++)
			t->lane_from[i] = -2;
	}
	if (t->lane_from[pi] == -2)
		t->lane_from[pi] = part->consumed;	/* the head entry's lane table */

	/* offsets, on the lane: exact, the claim makes it this writer's */
	if (sf_offset_check(lane, part, d, mv, &id))
	{
		Assert(id != NULL);		/* no retention: every offset is held */
		sf_count_replay(lane);
		t->replays++;
		return;
	}

	/*
	 * identity: this transaction's new ids, then every committed one (the
	 * head's index, current as of the caller's catch-up)
	 */
	fph = sf_fp_hash(d->event_id, (uint32) d->event_id_len);
	id = fp_find(h, t->newids, fph, d->event_id, d->event_id_len, &flane,
				 &handle);
	if (id == NULL)
		id = fp_find(h, h->fp, fph, d->event_id, d->event_id_len, &flane,
					 &handle);
	if (id != NULL)
	{
		if (!sf_identity_matches(id, d) ||
			(unlikely(mv != NULL) &&
			 !sf_measures_match(h->lanes[flane], id, mv)))
			sf_identity_conflict(h->lanes[flane], d, id);
		/* a duplicate: consumes the offset, changes nothing else */
		if (flane != pi)
		{
			/* first delivered in another lane: this lane keeps its content */
			SfIdentity *copy;

			copy = sf_identity_new(lane, d->event_id, d->event_id_len,
								   sf_hash_event_id(d->event_id,
													d->event_id_len),
								   &handle);
			copy->key = sf_intern_key(lane, d->key, d->key_len);
			copy->event_time = d->event_time;
			copy->value = d->value;
			copy->late = id->late;
			copy->foreign = true;
			if (unlikely(mv != NULL))
				sf_id_put_measures(lane, copy, 0, mv);
		}
		sf_partition_append(lane, pi, handle);
		t->duplicates++;
		return;
	}

	/*
	 * a new unique event: decided against the view clock; a duplicate in
	 * flight on another lane is found at commit (sf_txn_note_commit)
	 */
	key = sf_intern_key(lane, d->key, d->key_len);
	{
		SfIdentity	probe;

		/* the decision reads only time (and the definition) */
		probe.event_time = d->event_time;
		flags = event_decide(t, &t->view, &probe, counts, &total);
	}
	id = sf_identity_new(lane, d->event_id, d->event_id_len,
						 sf_hash_event_id(d->event_id, d->event_id_len),
						 &handle);
	id->key = key;
	id->event_time = d->event_time;
	id->value = d->value;
	id->late = (flags & SF_TXN_LATE) != 0;
	if (unlikely(mv != NULL))
		sf_id_put_measures(lane, id, t->unique + 1, mv);	/* local arrival */
	lane->nidentities++;
	sf_partition_append(lane, pi, handle);
	sf_fp_insert(t->newids, fph, (uint16) pi, handle);

	op = txn_log(t, SF_TXN_EVENT, pi);
	op->flags = flags;
	op->handle = handle;
	op->value = d->source_offset;
	t->unique++;
	if (flags & SF_TXN_LATE)
		t->late++;
	else
	{
		if (flags & SF_TXN_ALONE)
			t->alone++;
		else
			event_to_delta(t, id, counts);
		sf_clock_view_accept(&t->view, def, pi, d->event_time);
	}
}

void
sf_txn_ingest(SfTxn *t, const SfDelivery *d)
{
	txn_ingest(t, d, NULL);
}

/* A measures pipeline's delivery (sf_engine_ingest_measures's) */
void
sf_txn_ingest_measures(SfTxn *t, const SfDelivery *d, const int64 *measures)
{
	txn_ingest(t, d, measures);
}

/* A partition's report: a head op, sequenced at commit */
void
sf_txn_advance(SfTxn *t, const char *partition, int64 progress)
{
	int			pi = txn_partition(t, partition);
	SfTxnOp    *op = txn_log(t, SF_TXN_ADVANCE, pi);

	op->value = progress;
	sf_clock_view_advance(&t->view, pi, progress);
}

void
sf_txn_mark_idle(SfTxn *t, const char *partition)
{
	int			pi = txn_partition(t, partition);

	(void) txn_log(t, SF_TXN_IDLE, pi);
	sf_clock_view_idle(&t->view, pi);
}

/*
 * The end of the input (design 6.3): a head op whose advances, and whether
 * there are any, the commit decides on the committed clock.
 */
void
sf_txn_finish(SfTxn *t)
{
	(void) txn_log(t, SF_TXN_FINISH, 0);
	sf_clock_view_finish(&t->view);
}

/*
 * The current write call ends: its changes are told apart at commit
 * (t->call_end).  A call that logged nothing still counts, with no
 * changes.
 */
void
sf_txn_end_call(SfTxn *t)
{
	(void) txn_log(t, SF_TXN_CALL_END, 0);
	t->ncalls++;
}

/* dst, a view of as many partitions, becomes a copy of src */
static void
clock_view_copy(SfClockView *dst, const SfClockView *src)
{
	Assert(dst->n == src->n);
	memcpy(dst->parts, src->parts, src->n * sizeof(SfClockPart));
	dst->has_watermark = src->has_watermark;
	dst->watermark = src->watermark;
}

/*
 * A subtransaction begins: remember where the transaction is.  Marks nest
 * as subtransactions do; each is the caller's (persist keeps one per
 * subtransaction level).
 */
void
sf_txn_mark(SfTxn *t, SfTxnMark *m)
{
	MemoryContext old = MemoryContextSwitchTo(t->cxt);

	m->nops = t->nops;
	m->ncalls = t->ncalls;
	m->view.n = t->view.n;
	m->view.parts = palloc(Max(t->view.n, 1) * sizeof(SfClockPart));
	clock_view_copy(&m->view, &t->view);
	m->deliveries = t->deliveries;
	m->unique = t->unique;
	m->late = t->late;
	m->alone = t->alone;
	m->duplicates = t->duplicates;
	m->replays = t->replays;
	MemoryContextSwitchTo(old);
}

/*
 * The subtransaction of mark m aborted: the log, the calls, the new ids
 * and the view clock go back to m.  The delta cannot (a partial min or
 * max cannot be subtracted): it is marked stale, and the commit rebuilds
 * it once from the log.  It is emptied now: its addresses point to keys
 * interned in the lanes, which the caller then rebuilds and frees
 * (sf_head_replace_lane), and the calls before the commit go on adding to
 * it (ASan saw them compare against the freed keys).  Must run while the
 * lanes still hold the aborted records (their event ids are read to find
 * the new ids).
 */
void
sf_txn_rollback_to(SfTxn *t, const SfTxnMark *m)
{
	SfHead	   *h = t->head;

	Assert(!t->committed && m->nops <= t->nops);
	for (int64 i = m->nops; i < t->nops; i++)
	{
		const SfTxnOp *op = &t->ops[i];
		const SfIdentity *id;

		if (op->kind != SF_TXN_EVENT || (op->flags & SF_TXN_DUP))
			continue;
		id = sf_id_ptr(h->lanes[op->lane], op->handle);
		if (!sf_fp_remove(t->newids,
						  sf_fp_hash(id->event_id, id->event_id_len),
						  op->lane, op->handle))
			elog(ERROR, "streamforge: a new id is missing from its transaction");
	}
	t->nops = m->nops;
	t->ncalls = m->ncalls;
	clock_view_copy(&t->view, &m->view);
	t->deliveries = m->deliveries;
	t->unique = m->unique;
	t->late = m->late;
	t->alone = m->alone;
	t->duplicates = m->duplicates;
	t->replays = m->replays;
	delta_reset(t);
	t->stale = true;
}

/*
 * other has committed: probe its new ids against t's (design 4.4, step 2:
 * every catch-up probes the foreign fingerprints it inserts), so that t's
 * commit looks for ids another lane delivered first.  A hash hit is
 * enough here; the commit confirms by the bytes.
 */
void
sf_txn_note_commit(SfTxn *t, const SfTxn *other)
{
	SfHead	   *h = other->head;

	for (int64 i = 0; i < other->nops; i++)
	{
		const SfTxnOp *op = &other->ops[i];
		const SfIdentity *id;
		SfFpCursor	c;
		uint16		lane;
		uint64		loc;

		if (op->kind != SF_TXN_EVENT || (op->flags & SF_TXN_DUP))
			continue;
		id = sf_id_ptr(h->lanes[op->lane], op->handle);
		sf_fp_start(&c, sf_fp_hash(id->event_id, id->event_id_len));
		if (sf_fp_next(t->newids, &c, &lane, &loc))
		{
			t->collided = true;
			return;
		}
	}
}
