/*-------------------------------------------------------------------------
 *
 * aggregates.c
 *	  Measures pipelines: named bigint measures per event and the declared
 *	  aggregates' state in a bucket (docs/aggregates.md; the functions and
 *	  the parsing of definitions: agg_funcs.c, agg_ops.h).
 *
 * A one-measure pipeline (def.measures NULL) never reaches this file: its
 * buckets' agg.ext is NULL and its identities have no measures.  A
 * measures pipeline keeps, per identity, its arrival number and its
 * measures after the event_id (sf_id_measures), and per bucket, next to
 * the count/sum/min/max of the first measure that every pipeline keeps,
 * ext: nwords int64 words holding what the declared aggregates need, each
 * part at most once per measure (SfMeasureSlots): for a nullable measure
 * (declared "name NULL", 0.4.0) the count of its non-NULL values, a
 * 128-bit sum, a 192-bit sum of squares, min, max, first and last
 * (event_time, arrival, value), and one counter per count_if.  A NULL
 * value changes none of its measure's parts, which stay zero while the
 * count is zero (so that the state of a bucket is a function of its
 * events, as sf_magg_check needs); an identity's NULL mask follows its
 * measures (sf_id_measures).  Events are only ever added to a bucket
 * (a correction adds an event; a session merge adds a whole bucket), so
 * every part is exact and needs no retraction.
 *
 * This file calls no other file of the engine but for the registry of
 * agg_funcs.c (the bucket code calls it); measures_ops.c holds the
 * operations built on the rest of the engine.
 *
 * Memory: a definition lives where its caller allocates it; a bucket's ext
 * in the pipeline's context, recycled with the bucket, and its
 * variable-size states (agg_ops.h) in the pipeline's var_cxt, freed when
 * the bucket is deleted; the copies of sf_magg_copy (the before-images of
 * changes), states included, in CurrentMemoryContext.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/aggregates.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "port/pg_bitutils.h"

#include "engine/engine.h"
#include "engine/engine_int.h"

/* ----------------------------------------------------------------
 * Identities
 * ----------------------------------------------------------------
 */

/*
 * The arrival number and measures of an identity of a measures pipeline:
 * [0] is the arrival, [1 .. nmeasures] the measures, and with nullable
 * measures [nmeasures + 1] the NULL mask (bit m: measure m is NULL, its
 * word 0): 1 + width words.
 */
int64 *
sf_id_measures(const SfPipeline *p, const SfIdentity *id)
{
	Assert(p->def.measures != NULL);
	return (int64 *) ((char *) id +
					  MAXALIGN(offsetof(SfIdentity, event_id) + id->event_id_len));
}

void
sf_measures_arity_error(const SfPipeline *p, int n)
{
	if (p->def.measures == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("pipeline \"%s\" has one unnamed measure", p->def.name),
				 errhint("Deliver its events with streamforge.ingest, ingest_batch or append (value bigint).")));
	if (n < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("pipeline \"%s\" has %d measures", p->def.name,
						p->def.measures->nmeasures),
				 errhint("Deliver its events with streamforge.ingest_measures or ingest_measures_batch (measures bigint[]).")));
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("pipeline \"%s\" has %d measures, the delivery carries %d",
					p->def.name, p->def.measures->nmeasures, n),
			 errhint("measures must have exactly one non-null element per measure, in declaration order.")));
}

/*
 * The measures sf_engine_ingest_measures handed to the ingest running now
 * (taken: a later delivery without them is refused).  Out of line and
 * cold, so that a one-measure pipeline's ingest keeps its code.
 */
const int64 *
sf_take_measures(SfPipeline *p)
{
	const int64 *mv = p->cur_measures;

	p->cur_measures = NULL;
	if (mv == NULL)
		sf_measures_arity_error(p, -1);
	return mv;
}

/* Whether a known identity carries these measures */
bool
sf_measures_match(const SfPipeline *p, const SfIdentity *id,
				  const int64 *measures)
{
	return memcmp(sf_id_measures(p, id) + 1, measures,
				  p->def.measures->width * sizeof(int64)) == 0;
}

/* Store a new identity's measures and give it the next arrival number */
void
sf_id_set_measures(SfPipeline *p, SfIdentity *id, const int64 *measures)
{
	int64	   *m = sf_id_measures(p, id);

	m[0] = ++p->arrivals;
	memcpy(m + 1, measures, p->def.measures->width * sizeof(int64));
}

/*
 * Store an identity's measures with a given arrival number (a parallel
 * writer's local number, design 13, risk 10; 0 for a lane's copy of
 * another lane's identity, which is no arrival)
 */
void
sf_id_put_measures(const SfPipeline *p, SfIdentity *id, int64 arrival,
				   const int64 *measures)
{
	int64	   *m = sf_id_measures(p, id);

	m[0] = arrival;
	memcpy(m + 1, measures, p->def.measures->width * sizeof(int64));
}

/*
 * Copy an identity's arrival and measures from src (of pipeline sp) to dst
 * (of p), both of the same measures definition
 */
void
sf_id_copy_measures(const SfPipeline *p, SfIdentity *dst,
					const SfPipeline *sp, const SfIdentity *src)
{
	memcpy(sf_id_measures(p, dst), sf_id_measures(sp, src),
		   (1 + p->def.measures->width) * sizeof(int64));
}

/*
 * Add base to the arrival numbers of ext's first and last picks (a
 * parallel writer's delta, numbered locally, merged after everything
 * committed: design 13, risk 10).  A nullable measure without a value has
 * no pick: its words stay zero.
 */
void
sf_magg_rebase(const SfMeasuresDef *md, int64 *ext, int64 base)
{
	for (int m = 0; m < md->nmeasures; m++)
	{
		const SfMeasureSlots *s = &md->slots[m];

		if (s->nn >= 0 && ext[s->nn] == 0)
			continue;
		if (s->first >= 0)
			ext[s->first + 1] += base;
		if (s->last >= 0)
			ext[s->last + 1] += base;
	}
}

/*
 * Whether a delivery's measures words are canonical: with nullable
 * measures, a NULL mask of nullable measures only, each NULL measure's
 * word 0 (a journal entry's or a checkpoint's are checked with it).
 */
bool
sf_measures_valid(const SfMeasuresDef *md, const int64 *mv)
{
	uint64		mask;

	if (md->nullable == 0)
		return true;
	mask = (uint64) mv[md->nmeasures];
	if ((mask & ~(uint64) md->nullable) != 0)
		return false;
	for (int m = 0; m < md->nmeasures; m++)
		if ((mask & ((uint64) 1 << m)) != 0 && mv[m] != 0)
			return false;
	return true;
}

/* ----------------------------------------------------------------
 * Bucket state
 * ----------------------------------------------------------------
 */
static inline int128
get128(const int64 *w)
{
	int128		v;

	memcpy(&v, w, sizeof(v));
	return v;
}

static inline void
put128(int64 *w, int128 v)
{
	memcpy(w, &v, sizeof(v));
}

/* 192-bit unsigned add of a 128-bit unsigned (a sum of squares) */
static inline void
add192(int64 *w, uint64 lo, uint64 hi)
{
	uint64		w0 = (uint64) w[0];
	uint64		w1 = (uint64) w[1];
	uint64		c0,
				c1;

	w0 += lo;
	c0 = w0 < lo;
	w1 += hi;
	c1 = w1 < hi;
	w1 += c0;
	c1 += (w1 < c0);
	w[0] = (int64) w0;
	w[1] = (int64) w1;
	w[2] = (int64) ((uint64) w[2] + c1);
}

static inline bool
cmp_holds(SfCmpOp op, int64 v, int64 c)
{
	switch (op)
	{
		case SF_CMP_EQ:
			return v == c;
		case SF_CMP_NE:
			return v != c;
		case SF_CMP_LT:
			return v < c;
		case SF_CMP_LE:
			return v <= c;
		case SF_CMP_GT:
			return v > c;
		case SF_CMP_GE:
			return v >= c;
	}
	return false;
}

/* (t, a) before (t2, a2): by event time, then arrival */
static inline bool
earlier(int64 t, int64 a, int64 t2, int64 a2)
{
	return t < t2 || (t == t2 && a < a2);
}

/*
 * max_by and min_by's own words (agg_funcs.c): [0] the values seen, [1]
 * the best order, [2] its value.  Add n values of order o, the best of
 * which is v (n == 1: one event; a merge: another bucket's words).  The
 * greatest order (max_by) or the smallest (min_by) wins, and of equal
 * orders the smallest value: the words are a function of the events,
 * whatever their order of arrival or merge.
 */
static inline void
by_add(int64 *w, bool max, int64 o, int64 v, int64 n)
{
	if (w[0] == 0 || (max ? o > w[1] : o < w[1]) || (o == w[1] && v < w[2]))
	{
		w[1] = o;
		w[2] = v;
	}
	w[0] += n;
}

/*
 * Variable-size states (agg_ops.h): aggregate i's state is the pointer in
 * ext word nwords + varslot, NULL while empty.  Only the sf_magg_*
 * functions below read or write these words.
 */
StaticAssertDecl(sizeof(void *) <= sizeof(int64),
				 "a state pointer fits an ext word");

static inline void *
var_get(const SfMeasuresDef *md, const int64 *ext, int k)
{
	void	   *s;

	memcpy(&s, ext + md->nwords + k, sizeof(s));
	return s;
}

static inline void
var_set(const SfMeasuresDef *md, int64 *ext, int k, void *s)
{
	ext[md->nwords + k] = 0;
	memcpy(ext + md->nwords + k, &s, sizeof(s));
}

/* Add one event's measures vals to ext's variable-size states */
static pg_noinline void
vars_add(SfPipeline *p, int64 *ext, const int64 *vals)
{
	const SfMeasuresDef *md = p->def.measures;
	uint32		nulls = md->nullable ? (uint32) vals[md->nmeasures] : 0;

	for (uint64 todo = md->var_aggs; todo != 0; todo &= todo - 1)
	{
		const SfAggDef *a = &md->aggs[pg_rightmost_one_pos64(todo)];
		const SfAggVarOps *var;
		void	   *st;

		/* a NULL value is not added, as SQL's aggregates skip it */
		if ((nulls & (1U << a->measure)) != 0)
			continue;
		var = sf_agg_ops(a->func)->var;
		st = var_get(md, ext, a->varslot);
		if (st == NULL)
		{
			st = var->init(p->var_cxt);
			var_set(md, ext, a->varslot, st);
		}
		var->add(st, vals[a->measure]);
	}
}

/*
 * Free ext's variable-size states, leaving them empty (a bucket deleted:
 * finalized, or merged into another session; a bucket's ext restored)
 */
void
sf_magg_release(const SfMeasuresDef *md, int64 *ext)
{
	for (int i = 0; i < md->naggs; i++)
	{
		const SfAggDef *a = &md->aggs[i];
		void	   *st;

		if (a->varslot < 0)
			continue;
		st = var_get(md, ext, a->varslot);
		if (st != NULL)
			sf_agg_ops(a->func)->var->free(st);
		var_set(md, ext, a->varslot, NULL);
	}
}

/*
 * Copy from's variable-size states into ext's (empty ones), in cxt; into
 * the states ext has, if merge.
 */
static void
vars_copy(const SfMeasuresDef *md, MemoryContext cxt, int64 *ext,
		  const int64 *from, bool merge)
{
	for (int i = 0; i < md->naggs; i++)
	{
		const SfAggDef *a = &md->aggs[i];
		const SfAggVarOps *var;
		void	   *y;
		void	   *x;

		if (a->varslot < 0)
			continue;
		var = sf_agg_ops(a->func)->var;
		y = var_get(md, from, a->varslot);
		x = merge ? var_get(md, ext, a->varslot) : NULL;
		if (y == NULL)
			continue;
		if (x == NULL)
			var_set(md, ext, a->varslot, var->copy(cxt, y));
		else
			var->merge(x, y);
	}
}

/*
 * The checkpoint words of variable-size state k of ext (codec: "state_var"),
 * palloc'd; returns their number.
 */
int64
sf_magg_var_words(const SfMeasuresDef *md, const int64 *ext, int k,
				  int64 **words)
{
	for (int i = 0; i < md->naggs; i++)
		if (md->aggs[i].varslot == k)
			return sf_agg_ops(md->aggs[i].func)->var->serialize(var_get(md, ext, k),
																 words);
	elog(ERROR, "streamforge: no variable-size state %d", k);
	return 0;					/* keep compiler quiet */
}

/*
 * Load variable-size state k of ext (empty) from checkpoint words, in
 * CurrentMemoryContext; false, with *detail, if they are not a state's.
 */
bool
sf_magg_var_load(const SfMeasuresDef *md, int64 *ext, int k,
				 const int64 *words, int64 n, const char **detail)
{
	for (int i = 0; i < md->naggs; i++)
	{
		const SfAggVarOps *var = sf_agg_ops(md->aggs[i].func)->var;
		void	   *st;

		if (md->aggs[i].varslot != k)
			continue;
		Assert(var_get(md, ext, k) == NULL);
		if (n == 0)
			return true;		/* empty: NULL */
		st = var->init(CurrentMemoryContext);
		var_set(md, ext, k, st);
		return var->deserialize(st, words, n, detail);
	}
	elog(ERROR, "streamforge: no variable-size state %d", k);
	return false;				/* keep compiler quiet */
}

/*
 * Add one event (event_time t, arrival, measures vals: width words) to ext
 * words that held nprev events before (a nullable measure: x[nn] values).
 */
static void
words_add(const SfMeasuresDef *md, int64 *x, int64 nprev, int64 t,
		  int64 arrival, const int64 *vals)
{
	uint32		nulls = md->nullable ? (uint32) vals[md->nmeasures] : 0;

	/*
	 * the measures with a part, in ascending order; a NULL value changes
	 * none of its measure's parts (SQL's rule)
	 */
	for (uint32 todo = md->word_measures & ~nulls; todo != 0; todo &= todo - 1)
	{
		int			m = pg_rightmost_one_pos32(todo);
		const SfMeasureSlots *s = &md->slots[m];
		int64		v = vals[m];
		int64		prev = nprev;

		if (s->nn >= 0)
			prev = x[s->nn]++;

		if (s->sum >= 0)
			put128(x + s->sum, get128(x + s->sum) + v);
		if (s->sumsq >= 0)
		{
			uint128		a = v < 0 ? (uint128) (-(int128) v) : (uint128) v;
			uint128		sq = a * a;

			add192(x + s->sumsq, (uint64) sq, (uint64) (sq >> 64));
		}
		if (s->min >= 0 && (prev == 0 || v < x[s->min]))
			x[s->min] = v;
		if (s->max >= 0 && (prev == 0 || v > x[s->max]))
			x[s->max] = v;
		if (s->first >= 0 &&
			(prev == 0 || earlier(t, arrival, x[s->first], x[s->first + 1])))
		{
			x[s->first] = t;
			x[s->first + 1] = arrival;
			x[s->first + 2] = v;
		}
		if (s->last >= 0 &&
			(prev == 0 || earlier(x[s->last], x[s->last + 1], t, arrival)))
		{
			x[s->last] = t;
			x[s->last + 1] = arrival;
			x[s->last + 2] = v;
		}
	}
	for (uint64 todo = md->slot_aggs; todo != 0; todo &= todo - 1)
	{
		const SfAggDef *a = &md->aggs[pg_rightmost_one_pos64(todo)];

		if ((nulls & (1U << a->measure)) != 0)
			continue;
		if (a->func == SF_AGG_COUNT_IF)
		{
			if (cmp_holds(a->op, vals[a->measure], a->constant))
				x[a->slot]++;
		}
		else if ((nulls & (1U << a->measure2)) == 0)
			by_add(x + a->slot, a->func == SF_AGG_MAX_BY, vals[a->measure2],
				   vals[a->measure], 1);
	}
}

/*
 * Add identity id to agg, whose count already counts it (sf_agg_add ran
 * first).
 */
void
sf_magg_add(SfPipeline *p, SfAgg *agg, const SfIdentity *id)
{
	const int64 *m = sf_id_measures(p, id);

	words_add(p->def.measures, agg->ext, agg->count - 1, id->event_time,
			  m[0], m + 1);
	if (unlikely(p->def.measures->nvar > 0))
		vars_add(p, agg->ext, m + 1);
}

static void words_merge(const SfMeasuresDef *md, SfAgg *into,
						const SfAgg *from);

/*
 * Merge from's ext into into's (a session merge).  Runs before
 * sf_agg_merge, while both counts are those before the merge.
 */
void
sf_magg_merge(SfPipeline *p, SfAgg *into, const SfAgg *from)
{
	const SfMeasuresDef *md = p->def.measures;

	if (from->count == 0)
		return;
	words_merge(md, into, from);
	/* variable-size states: the union (from is deleted afterwards) */
	if (unlikely(md->nvar > 0))
		vars_copy(md, p->var_cxt, into->ext, from->ext, true);
}

/* sf_magg_merge's fixed words */
static void
words_merge(const SfMeasuresDef *md, SfAgg *into, const SfAgg *from)
{
	int64	   *x = into->ext;
	const int64 *y = from->ext;

	if (into->count == 0)
	{
		memcpy(x, y, md->nwords * sizeof(int64));
		return;
	}
	for (int m = 0; m < md->nmeasures; m++)
	{
		const SfMeasureSlots *s = &md->slots[m];

		if (s->nn >= 0)
		{
			/* a nullable measure: its parts are zero while it has no value */
			if (y[s->nn] == 0)
				continue;
			if (x[s->nn] == 0)
			{
				x[s->nn] = y[s->nn];
				if (s->sum >= 0)
					memcpy(x + s->sum, y + s->sum, 2 * sizeof(int64));
				if (s->sumsq >= 0)
					memcpy(x + s->sumsq, y + s->sumsq, 3 * sizeof(int64));
				if (s->min >= 0)
					x[s->min] = y[s->min];
				if (s->max >= 0)
					x[s->max] = y[s->max];
				if (s->first >= 0)
					memcpy(x + s->first, y + s->first, 3 * sizeof(int64));
				if (s->last >= 0)
					memcpy(x + s->last, y + s->last, 3 * sizeof(int64));
				continue;
			}
			x[s->nn] += y[s->nn];
		}
		if (s->sum >= 0)
			put128(x + s->sum, get128(x + s->sum) + get128(y + s->sum));
		if (s->sumsq >= 0)
		{
			add192(x + s->sumsq, (uint64) y[s->sumsq], (uint64) y[s->sumsq + 1]);
			x[s->sumsq + 2] = (int64) ((uint64) x[s->sumsq + 2] +
									   (uint64) y[s->sumsq + 2]);
		}
		if (s->min >= 0 && y[s->min] < x[s->min])
			x[s->min] = y[s->min];
		if (s->max >= 0 && y[s->max] > x[s->max])
			x[s->max] = y[s->max];
		if (s->first >= 0 &&
			earlier(y[s->first], y[s->first + 1], x[s->first], x[s->first + 1]))
			memcpy(x + s->first, y + s->first, 3 * sizeof(int64));
		if (s->last >= 0 &&
			earlier(x[s->last], x[s->last + 1], y[s->last], y[s->last + 1]))
			memcpy(x + s->last, y + s->last, 3 * sizeof(int64));
	}
	for (int i = 0; i < md->naggs; i++)
	{
		const SfAggDef *a = &md->aggs[i];

		if (a->slot < 0)
			continue;
		if (a->func == SF_AGG_COUNT_IF)
			x[a->slot] += y[a->slot];
		else if (y[a->slot] > 0)
			by_add(x + a->slot, a->func == SF_AGG_MAX_BY, y[a->slot + 1],
				   y[a->slot + 2], y[a->slot]);
	}
}

/*
 * A copy of ext words, in CurrentMemoryContext: its variable-size states
 * too (a deep copy, freed with the context)
 */
int64 *
sf_magg_copy(const SfMeasuresDef *md, const int64 *ext)
{
	int64	   *c = palloc(Max(md->nwords + md->nvar, 1) * sizeof(int64));

	memcpy(c, ext, md->nwords * sizeof(int64));
	if (unlikely(md->nvar > 0))
	{
		memset(c + md->nwords, 0, md->nvar * sizeof(int64));
		vars_copy(md, CurrentMemoryContext, c, ext, false);
	}
	return c;
}

bool
sf_magg_equal(const SfMeasuresDef *md, const SfAgg *a, const SfAgg *b)
{
	if (a->ext == NULL || b->ext == NULL)
		return a->ext == b->ext;
	if (memcmp(a->ext, b->ext, md->nwords * sizeof(int64)) != 0)
		return false;
	for (int i = 0; i < md->naggs; i++)
	{
		const SfAggDef *d = &md->aggs[i];

		if (d->varslot >= 0 &&
			!sf_agg_ops(d->func)->var->equal(var_get(md, a->ext, d->varslot),
											 var_get(md, b->ext, d->varslot)))
			return false;
	}
	return true;
}

/*
 * A bucket's ext words restored from a copy (session.c, a checkpoint's
 * row): variable-size states copied into the pipeline's var_cxt
 */
void
sf_magg_restore(SfPipeline *p, int64 *ext, const int64 *from)
{
	const SfMeasuresDef *md = p->def.measures;

	memcpy(ext, from, md->nwords * sizeof(int64));
	if (unlikely(md->nvar > 0))
	{
		sf_magg_release(md, ext);
		vars_copy(md, p->var_cxt, ext, from, false);
	}
}

/* ext words for a new bucket of p, zeroed (variable-size states: empty) */
int64 *
sf_magg_alloc(SfPipeline *p)
{
	const SfMeasuresDef *md = p->def.measures;

	return MemoryContextAllocZero(p->cxt,
								  Max(md->nwords + md->nvar, 1) * sizeof(int64));
}

/* The value of aggregate i of a row's agg */
void
sf_agg_value(const SfMeasuresDef *md, const SfAgg *agg, int i, SfAggValue *v)
{
	const SfAggDef *a = &md->aggs[i];
	const int64 *x = agg->ext;
	const SfMeasureSlots *s = a->measure >= 0 ? &md->slots[a->measure] : NULL;

	memset(v, 0, sizeof(*v));
	v->ops = sf_agg_ops(a->func);
	if (a->varslot >= 0)
	{
		/* a variable-size state gives its value itself */
		v->count = agg->count;
		v->ops->var->value(var_get(md, x, a->varslot), a, v);
		return;
	}
	/* the values the aggregate sees: a nullable measure's non-NULL ones */
	v->count = s != NULL && s->nn >= 0 ? x[s->nn] : agg->count;
	v->isnull = v->count == 0 && a->func != SF_AGG_COUNT &&
		a->func != SF_AGG_COUNT_IF;
	switch (a->func)
	{
		case SF_AGG_COUNT:
			v->i64 = v->count;
			break;
		case SF_AGG_COUNT_IF:
			v->i64 = x[a->slot];
			break;
		case SF_AGG_COUNT_DISTINCT:
		case SF_AGG_APPROX_COUNT_DISTINCT:
		case SF_AGG_APPROX_PERCENTILE:
		case SF_AGG_PERCENTILE_CONT:
		case SF_AGG_PERCENTILE_DISC:
			break;				/* variable-size: above */
		case SF_AGG_MAX_BY:
		case SF_AGG_MIN_BY:
			/* the events with a value and an order */
			v->count = x[a->slot];
			v->isnull = v->count == 0;
			v->i64 = x[a->slot + 2];
			break;
		case SF_AGG_MIN:
			v->i64 = x[s->min];
			break;
		case SF_AGG_MAX:
			v->i64 = x[s->max];
			break;
		case SF_AGG_FIRST:
			v->i64 = x[s->first + 2];
			break;
		case SF_AGG_LAST:
			v->i64 = x[s->last + 2];
			break;
		case SF_AGG_SUM:
		case SF_AGG_AVG:
			v->sum = get128(x + s->sum);
			break;
		case SF_AGG_VAR_POP:
		case SF_AGG_VAR_SAMP:
		case SF_AGG_STDDEV_POP:
		case SF_AGG_STDDEV_SAMP:
			v->sum = get128(x + s->sum);
			for (int k = 0; k < 3; k++)
				v->sumsq[k] = (uint64) x[s->sumsq + k];
			if ((a->func == SF_AGG_VAR_SAMP || a->func == SF_AGG_STDDEV_SAMP) &&
				v->count < 2)
				v->isnull = true;
			break;
	}
}
