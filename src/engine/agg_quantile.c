/*-------------------------------------------------------------------------
 *
 * agg_quantile.c
 *	  The variable-size states of the percentiles (agg_ops.h,
 *	  "Variable-size state"; issue 44, item 2):
 *	  - percentile_cont(m, p) and percentile_disc(m, p): every non-NULL
 *	    value of the measure in the bucket, kept (exact, as PostgreSQL's
 *	    ordered-set aggregates compute them);
 *	  - approx_percentile(m, p): a DDSketch (Masson, Rim and Lee, "DDSketch:
 *	    a fast and fully-mergeable quantile sketch with relative-error
 *	    guarantees", VLDB 2019) of relative accuracy 1%, exact while the
 *	    bucket has at most 256 values.
 *
 * The registry (agg_funcs.c) points at sf_agg_values_cont_var,
 * sf_agg_values_disc_var and sf_agg_ddsketch_var; nothing else calls this
 * file.  A state lives in the memory context it was made in (a bucket's:
 * its pipeline's var_cxt; a copy's: the caller's).
 *
 * Kept values (percentile_cont, _disc).  An array of the values, of which
 * the first nsorted are in ascending order; the others are sorted and
 * merged in when a value, a comparison or the checkpoint's words are
 * needed.  8 bytes per value (the array doubles: up to 16).  Checkpoint
 * words: the values in ascending order, repeated as often as they were
 * added (one word per value, as many as the bucket's non-NULL values).
 *
 * Sketch (approx_percentile).  A value v maps to a key, monotonic in v:
 * |v| <= 64 is its own key (one integer per bin: exact); a larger |v| is
 * in bin i = ceil(log_g |v|), g = (1 + a) / (1 - a), a = 0.01, whose
 * values (g^(i-1), g^i] are all within a of its estimate 2 g^i / (g + 1);
 * the key is 65 + i - ceil(log_g 65), negated for negative values (at most
 * 2041 in absolute value for the whole bigint range).  Two forms, a
 * function of the multiset of values added (never of their order, nor of
 * merges), so that the same events in any order give the same state and
 * the same checkpoint words:
 *	- exact: the values, sorted, while there are at most 256 (2 kB);
 *	- sketch: beyond, the count of each key between the smallest and the
 *	  largest key present, at most 512 keys (8 bytes each: at most 4 kB
 *	  per bucket, whatever the values).  512 keys cover positive values
 *	  spanning a ratio of 1 to 28,000 above 64 (say 1 ms to 28 s in
 *	  microseconds); the keys more than 511 below the largest are
 *	  collapsed into the lowest one kept (dd_count).
 * Its value is percentile_disc(p)'s (the value at rank ceil(p n)), exact
 * in the exact form and within 1% (relative) in the sketch form when the
 * true value's key is one of the 512 kept; a value in a collapsed key is
 * estimated by the lowest kept key's estimate (too high).  The keys use
 * libm's log(): the same machine, the same bytes.
 * Checkpoint words (canonical; deserialize accepts nothing else):
 *	- exact: the values in ascending order (1 to 256 words);
 *	- sketch: one word per key present, (key + 4096) << 48 | count, in
 *	  descending order (so the first word is greater than the second,
 *	  which the exact form never is), and a 0 after a single one; counts
 *	  1 to 2^48 - 1, more than 256 in all, the first and the last key
 *	  at most 511 apart.  Fewer words than events.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/agg_quantile.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "utils/memutils.h"

#include "engine/engine.h"

#define DD_ALPHA		0.01
#define DD_LINEAR		64		/* |v| <= 64: its own key */
#define DD_EXACT_MAX	256		/* the exact form's most values */
#define DD_MAX_KEYS		512		/* the sketch form's most keys (4 kB) */
#define DD_KEY_BIAS		4096	/* a key in a checkpoint word */
#define DD_COUNT_BITS	48
#define DD_COUNT_MASK	((UINT64CONST(1) << DD_COUNT_BITS) - 1)

typedef struct SfQuant
{
	int64		n;				/* values added */
	int64		cap;			/* values allocated */
	int64		nsorted;		/* the first nsorted values are sorted */
	int64	   *v;				/* the values (kept; a sketch's exact form) */
	int32		klo;			/* sketch: the key of counts[0] */
	int32		khi;			/* sketch: the key of the last count */
	int64	   *counts;			/* sketch: NULL in the exact form */
} SfQuant;

/* ----------------------------------------------------------------
 * The values
 * ----------------------------------------------------------------
 */
static int
cmp_int64(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return x < y ? -1 : x > y;
}

static void
values_append(SfQuant *s, int64 v)
{
	if (s->n == s->cap)
	{
		int64		cap = s->cap == 0 ? 8 : s->cap * 2;

		if (s->v == NULL)
			s->v = MemoryContextAllocHuge(GetMemoryChunkContext(s),
										  cap * sizeof(int64));
		else
			s->v = repalloc_huge(s->v, cap * sizeof(int64));
		s->cap = cap;
	}
	s->v[s->n++] = v;
}

/* Sort the values not in order and merge them in (logically const) */
static void
values_sort(const SfQuant *cs)
{
	SfQuant    *s = (SfQuant *) cs;
	int64		k;
	int64	   *tmp;
	int64		i = 0,
				j,
				o = 0;

	if (s == NULL || s->nsorted == s->n)
		return;
	k = s->nsorted;
	j = k;
	qsort(s->v + k, s->n - k, sizeof(int64), cmp_int64);
	if (k > 0 && s->v[k - 1] > s->v[k])
	{
		tmp = palloc_extended(s->n * sizeof(int64), MCXT_ALLOC_HUGE);
		while (i < k && j < s->n)
			tmp[o++] = s->v[i] <= s->v[j] ? s->v[i++] : s->v[j++];
		while (i < k)
			tmp[o++] = s->v[i++];
		while (j < s->n)
			tmp[o++] = s->v[j++];
		memcpy(s->v, tmp, s->n * sizeof(int64));
		pfree(tmp);
	}
	s->nsorted = s->n;
}

static void *
quant_init(MemoryContext cxt)
{
	return MemoryContextAllocZero(cxt, sizeof(SfQuant));
}

static void
quant_free(void *state)
{
	SfQuant    *s = (SfQuant *) state;

	if (s->v != NULL)
		pfree(s->v);
	if (s->counts != NULL)
		pfree(s->counts);
	pfree(s);
}

static void
values_add(void *state, int64 v)
{
	SfQuant    *s = (SfQuant *) state;
	bool		in_order = s->nsorted == s->n &&
		(s->n == 0 || s->v[s->n - 1] <= v);

	values_append(s, v);
	if (in_order)
		s->nsorted = s->n;
}

static void
values_merge(void *into, const void *from)
{
	SfQuant    *x = (SfQuant *) into;
	const SfQuant *y = (const SfQuant *) from;

	if (y == NULL)
		return;
	for (int64 i = 0; i < y->n; i++)
		values_append(x, y->v[i]);
}

static void *
values_copy(MemoryContext cxt, const void *state)
{
	const SfQuant *y = (const SfQuant *) state;
	SfQuant    *c = MemoryContextAllocZero(cxt, sizeof(SfQuant));

	values_sort(y);
	if (y->n > 0)
	{
		c->v = MemoryContextAllocHuge(cxt, y->n * sizeof(int64));
		memcpy(c->v, y->v, y->n * sizeof(int64));
	}
	c->n = c->cap = c->nsorted = y->n;
	return c;
}

static bool
values_equal(const void *a, const void *b)
{
	const SfQuant *x = (const SfQuant *) a;
	const SfQuant *y = (const SfQuant *) b;
	int64		nx = x == NULL ? 0 : x->n;
	int64		ny = y == NULL ? 0 : y->n;

	if (nx != ny)
		return false;
	if (nx == 0)
		return true;
	values_sort(x);
	values_sort(y);
	return memcmp(x->v, y->v, nx * sizeof(int64)) == 0;
}

static int64
values_serialize(const void *state, int64 **words)
{
	const SfQuant *s = (const SfQuant *) state;

	if (s == NULL || s->n == 0)
	{
		*words = palloc(sizeof(int64));
		return 0;
	}
	values_sort(s);
	*words = palloc_extended(s->n * sizeof(int64), MCXT_ALLOC_HUGE);
	memcpy(*words, s->v, s->n * sizeof(int64));
	return s->n;
}

/* Words in ascending order (repeats allowed) */
static bool
ascending(const int64 *words, int64 n, const char **detail)
{
	for (int64 i = 1; i < n; i++)
		if (words[i] < words[i - 1])
		{
			*detail = "the values of a percentile's state are not in ascending order";
			return false;
		}
	return true;
}

static bool
values_deserialize(void *state, const int64 *words, int64 n,
				   const char **detail)
{
	if (!ascending(words, n, detail))
		return false;
	for (int64 i = 0; i < n; i++)
		values_add(state, words[i]);
	return true;
}

/* The fraction of a percentile (agg_ops.h, SF_AGGARG_FRACTION) */
static inline double
fraction(const SfAggDef *a)
{
	return (double) a->constant / (double) SF_FRACTION_UNIT;
}

/* percentile_disc's row: PostgreSQL's percentile_disc_final */
static int64
disc_index(double p, int64 n)
{
	int64		rownum = (int64) ceil(p * n);

	return rownum > 1 ? rownum - 1 : 0;
}

static void
values_disc_value(const void *state, const SfAggDef *a, SfAggValue *v)
{
	const SfQuant *s = (const SfQuant *) state;

	v->isnull = s == NULL || s->n == 0;
	if (v->isnull)
		return;
	values_sort(s);
	v->i64 = s->v[disc_index(fraction(a), s->n)];
}

/*
 * percentile_cont as PostgreSQL computes it over double precision
 * (percentile_cont_final_common, float8_lerp): the same double
 */
static void
values_cont_value(const void *state, const SfAggDef *a, SfAggValue *v)
{
	const SfQuant *s = (const SfQuant *) state;
	double		p = fraction(a);
	int64		first_row,
				second_row;
	double		first,
				second,
				proportion;

	v->isnull = s == NULL || s->n == 0;
	if (v->isnull)
		return;
	values_sort(s);
	first_row = (int64) floor(p * (s->n - 1));
	second_row = (int64) ceil(p * (s->n - 1));
	first = (double) s->v[first_row];
	if (second_row > first_row)
	{
		second = (double) s->v[second_row];
		proportion = (p * (s->n - 1)) - first_row;
		v->f8 = first + (proportion * (second - first));
	}
	else
		v->f8 = first;
}

const SfAggVarOps sf_agg_values_cont_var = {
	.init = quant_init,
	.add = values_add,
	.merge = values_merge,
	.copy = values_copy,
	.equal = values_equal,
	.free = quant_free,
	.serialize = values_serialize,
	.deserialize = values_deserialize,
	.value = values_cont_value,
};

const SfAggVarOps sf_agg_values_disc_var = {
	.init = quant_init,
	.add = values_add,
	.merge = values_merge,
	.copy = values_copy,
	.equal = values_equal,
	.free = quant_free,
	.serialize = values_serialize,
	.deserialize = values_deserialize,
	.value = values_disc_value,
};

/* ----------------------------------------------------------------
 * The sketch
 * ----------------------------------------------------------------
 */
static inline double
dd_ln_gamma(void)
{
	return log((1.0 + DD_ALPHA) / (1.0 - DD_ALPHA));
}

static inline int32
dd_index(double a)
{
	return (int32) ceil(log(a) / dd_ln_gamma());
}

/* The key of v (monotonic) */
static int32
dd_key(int64 v)
{
	uint64		a = v < 0 ? -(uint64) v : (uint64) v;
	int32		k;

	if (a <= DD_LINEAR)
		k = (int32) a;
	else
		k = DD_LINEAR + 1 + dd_index((double) a) - dd_index(DD_LINEAR + 1);
	return v < 0 ? -k : k;
}

/* The largest key */
static int32
dd_key_max(void)
{
	return dd_key(PG_INT64_MAX) > -dd_key(PG_INT64_MIN) ?
		dd_key(PG_INT64_MAX) : -dd_key(PG_INT64_MIN);
}

/* The estimate of a key's values */
static double
dd_estimate(int32 k)
{
	int32		a = k < 0 ? -k : k;
	double		e;

	if (a <= DD_LINEAR)
		e = a;
	else
	{
		double		g = (1.0 + DD_ALPHA) / (1.0 - DD_ALPHA);
		int32		i = a - DD_LINEAR - 1 + dd_index(DD_LINEAR + 1);

		e = 2.0 * exp(i * dd_ln_gamma()) / (g + 1.0);
	}
	return k < 0 ? -e : e;
}

/*
 * Add count values of key k to the sketch form.  The form holds at most
 * DD_MAX_KEYS keys, the highest: a key below the largest key less
 * DD_MAX_KEYS - 1 (the floor) is counted in the floor's key, and when the
 * largest key grows the keys that fall below the new floor are moved into
 * it (DDSketch's "collapsing lowest" store).  The floor only rises, so
 * the counts are still a function of the multiset of keys added: every
 * key at or above the final floor holds exactly its own values, the
 * floor's key also every value below it, whatever the order of additions
 * and merges.
 */
static void
dd_count(SfQuant *s, int32 k, int64 count)
{
	int32		floor_key;

	if (s->counts == NULL)
	{
		s->counts = MemoryContextAllocZero(GetMemoryChunkContext(s),
										   sizeof(int64));
		s->klo = s->khi = k;
	}
	floor_key = Max(k, s->khi) - (DD_MAX_KEYS - 1);
	if (k < floor_key)
		k = floor_key;
	if (k < s->klo || k > s->khi)
	{
		int32		lo = Max(Min(k, s->klo), floor_key);
		int32		hi = Max(k, s->khi);
		int64	   *c = MemoryContextAllocZero(GetMemoryChunkContext(s),
											   (hi - lo + 1) * sizeof(int64));

		for (int32 j = s->klo; j <= s->khi; j++)
			c[Max(j, lo) - lo] += s->counts[j - s->klo];
		pfree(s->counts);
		s->counts = c;
		s->klo = lo;
		s->khi = hi;
	}
	s->counts[k - s->klo] += count;
}

/* The exact form becomes a sketch */
static void
dd_sketch(SfQuant *s)
{
	for (int64 i = s->n - 1; i >= 0; i--)
		dd_count(s, dd_key(s->v[i]), 1);
	if (s->v != NULL)
		pfree(s->v);
	s->v = NULL;
	s->cap = s->nsorted = 0;
}

static void
dd_add(void *state, int64 v)
{
	SfQuant    *s = (SfQuant *) state;
	int64		at;

	if (s->counts != NULL)
	{
		dd_count(s, dd_key(v), 1);
		s->n++;
		return;
	}
	if (s->n == DD_EXACT_MAX)
	{
		dd_sketch(s);
		dd_count(s, dd_key(v), 1);
		s->n = DD_EXACT_MAX + 1;
		return;
	}
	/* the exact form stays sorted */
	values_append(s, v);
	for (at = s->n - 1; at > 0 && s->v[at - 1] > v; at--)
		s->v[at] = s->v[at - 1];
	s->v[at] = v;
	s->nsorted = s->n;
}

static void
dd_merge(void *into, const void *from)
{
	SfQuant    *x = (SfQuant *) into;
	const SfQuant *y = (const SfQuant *) from;

	if (y == NULL)
		return;
	if (y->counts == NULL)
	{
		for (int64 i = 0; i < y->n; i++)
			dd_add(x, y->v[i]);
		return;
	}
	if (x->counts == NULL)
	{
		int64		n = x->n;

		dd_sketch(x);
		x->n = n;
	}
	for (int32 k = y->khi; k >= y->klo; k--)
		if (y->counts[k - y->klo] != 0)
			dd_count(x, k, y->counts[k - y->klo]);
	x->n += y->n;
}

static void *
dd_copy(MemoryContext cxt, const void *state)
{
	const SfQuant *y = (const SfQuant *) state;
	SfQuant    *c;

	if (y->counts == NULL)
		return values_copy(cxt, state);
	c = MemoryContextAllocZero(cxt, sizeof(SfQuant));
	c->n = y->n;
	c->klo = y->klo;
	c->khi = y->khi;
	c->counts = MemoryContextAlloc(cxt, (y->khi - y->klo + 1) * sizeof(int64));
	memcpy(c->counts, y->counts, (y->khi - y->klo + 1) * sizeof(int64));
	return c;
}

static bool
dd_equal(const void *a, const void *b)
{
	const SfQuant *x = (const SfQuant *) a;
	const SfQuant *y = (const SfQuant *) b;
	int64		nx = x == NULL ? 0 : x->n;
	int64		ny = y == NULL ? 0 : y->n;

	if (nx != ny)
		return false;
	if (nx == 0)
		return true;
	if ((x->counts == NULL) != (y->counts == NULL))
		return false;
	if (x->counts == NULL)
		return memcmp(x->v, y->v, nx * sizeof(int64)) == 0;
	return x->klo == y->klo && x->khi == y->khi &&
		memcmp(x->counts, y->counts, (x->khi - x->klo + 1) * sizeof(int64)) == 0;
}

static int64
dd_serialize(const void *state, int64 **words)
{
	const SfQuant *s = (const SfQuant *) state;
	int64	   *w;
	int64		n = 0;

	if (s == NULL || s->counts == NULL)
		return values_serialize(state, words);
	w = palloc((s->khi - s->klo + 2) * sizeof(int64));
	for (int32 k = s->khi; k >= s->klo; k--)
	{
		int64		c = s->counts[k - s->klo];

		if (c != 0)
			w[n++] = (int64) (((uint64) (k + DD_KEY_BIAS) << DD_COUNT_BITS) |
							  (uint64) c);
	}
	if (n == 1)
		w[n++] = 0;
	*words = w;
	return n;
}

static bool
dd_deserialize(void *state, const int64 *words, int64 n,
			   const char **detail)
{
	SfQuant    *s = (SfQuant *) state;
	int32		kmax = dd_key_max();
	int64		total = 0;
	int64		nkeys = n;

	if (n < 2 || words[0] <= words[1])
	{
		/* exact: the values, ascending */
		if (n > DD_EXACT_MAX)
		{
			*detail = "an exact percentile sketch holds at most 256 values";
			return false;
		}
		if (!ascending(words, n, detail))
			return false;
		for (int64 i = 0; i < n; i++)
			dd_add(s, words[i]);
		return true;
	}
	if (n == 2 && words[1] == 0)
		nkeys = 1;
	for (int64 i = 0; i < nkeys; i++)
	{
		uint64		w = (uint64) words[i];
		int64		k = (int64) (w >> DD_COUNT_BITS) - DD_KEY_BIAS;
		int64		c = (int64) (w & DD_COUNT_MASK);

		if (k < -kmax || k > kmax || c == 0 ||
			(i > 0 && words[i] >= words[i - 1]))
		{
			*detail = "a percentile sketch's words are not its keys' counts ((key + 4096) << 48 | count) in descending order";
			return false;
		}
		total += c;
	}
	if ((words[0] >> DD_COUNT_BITS) - (words[nkeys - 1] >> DD_COUNT_BITS) >=
		DD_MAX_KEYS)
	{
		*detail = "a percentile sketch's keys span more than 512 keys";
		return false;
	}
	if (total <= DD_EXACT_MAX)
	{
		*detail = "a percentile sketch of at most 256 values is not in the exact form";
		return false;
	}
	for (int64 i = 0; i < nkeys; i++)
	{
		uint64		w = (uint64) words[i];

		dd_count(s, (int32) ((int64) (w >> DD_COUNT_BITS) - DD_KEY_BIAS),
				 (int64) (w & DD_COUNT_MASK));
	}
	s->n = total;
	return true;
}

/* percentile_disc(p)'s value, exact or within 1% */
static void
dd_value(const void *state, const SfAggDef *a, SfAggValue *v)
{
	const SfQuant *s = (const SfQuant *) state;
	int64		rank;
	int64		seen = 0;

	v->isnull = s == NULL || s->n == 0;
	if (v->isnull)
		return;
	rank = disc_index(fraction(a), s->n);
	if (s->counts == NULL)
	{
		v->f8 = (double) s->v[rank];
		return;
	}
	for (int32 k = s->klo; k <= s->khi; k++)
	{
		seen += s->counts[k - s->klo];
		if (seen > rank)
		{
			v->f8 = dd_estimate(k);
			return;
		}
	}
	v->f8 = dd_estimate(s->khi);	/* not reached */
}

const SfAggVarOps sf_agg_ddsketch_var = {
	.init = quant_init,
	.add = dd_add,
	.merge = dd_merge,
	.copy = dd_copy,
	.equal = dd_equal,
	.free = quant_free,
	.serialize = dd_serialize,
	.deserialize = dd_deserialize,
	.value = dd_value,
};
