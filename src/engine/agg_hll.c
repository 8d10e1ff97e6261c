/*-------------------------------------------------------------------------
 *
 * agg_hll.c
 *	  The variable-size state of approx_count_distinct(m) (agg_ops.h,
 *	  "Variable-size state"): a HyperLogLog sketch of a measure's distinct
 *	  non-NULL values in a bucket, exact while it holds few of them.
 *
 * The registry (agg_funcs.c) points at sf_agg_hll_var; nothing else calls
 * this file.  A state lives in the memory context it was made in (a
 * bucket's: its pipeline's var_cxt; a copy's: the caller's).
 *
 * Hash.  A value's hash is murmur3's 64-bit finalizer (PostgreSQL 16's
 * murmurhash64, which 15's common/hashfn.h lacks; no seed): fixed, the
 * same on every machine, and a bijection of 64-bit words, so that distinct
 * values have distinct hashes and the exact form is exact.
 *
 * Two forms, a function of the set of values added (never of their
 * order, nor of merges), so that the same events in any order give the
 * same state and the same checkpoint words:
 *	- exact: the distinct hashes, sorted, while there are at most
 *	  HLL_EXACT_MAX (1024) of them; its value is their number, exact
 *	  (8 bytes per distinct value, at most 8 kB);
 *	- dense: beyond that, the 2^14 one-byte registers of a HyperLogLog
 *	  sketch of precision 14 (16 kB): register hash >> 50 holds the
 *	  largest 1 + the number of leading zeros of the other 50 bits (51 if
 *	  they are all zero).  Its value is Ertl's improved raw estimator
 *	  ("New cardinality estimation algorithms for HyperLogLog sketches",
 *	  2017), unbiased over the whole range without tables: relative
 *	  standard error 1.04 / sqrt(2^14) = 0.81% (docs/aggregates.md).
 * A merge is the union: of the hash sets while the union has at most 1024,
 * else register-wise maximum.
 *
 * Checkpoint words (canonical; deserialize accepts nothing else).  The
 * codec allows a state at most one word per event of its bucket
 * (codec_measures.c, ck_read_row_state), which both forms respect:
 *	- exact: the hashes in strictly ascending unsigned order, 1 to 1024
 *	  of them (the empty state has no words);
 *	- dense: -1 (all bits set: an exact sketch's largest hash, so never
 *	  its first of two or more), then its registers above 0, two per word,
 *	  each (index << 8 | value) in 32 bits, the first in the low half, in
 *	  ascending index order; an odd last one with a high half of 0.  A
 *	  dense sketch has more than 1024 values, each setting at most one
 *	  register: 1 + ceil(registers / 2) words are fewer than its events.
 * Whether the words are those of the events is checked by the codec on
 * the rebuilt pipeline (equal, below, compares exactly).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/agg_hll.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "port/pg_bitutils.h"

#include "engine/engine.h"
#include "engine/hashmix.h"

#define HLL_P			14
#define HLL_M			(1 << HLL_P)
#define HLL_Q			(64 - HLL_P)	/* bits after the register index */
#define HLL_EXACT_MAX	1024
/* the first checkpoint word of a dense sketch */
#define HLL_DENSE_MARK	INT64CONST(-1)

typedef struct SfHll
{
	int32		n;				/* exact: the hashes; -1: dense */
	int32		cap;			/* exact: allocated hashes */
	uint64	   *hashes;			/* exact: sorted ascending */
	uint8	   *regs;			/* dense: HLL_M registers */
} SfHll;

/* a value's hash (engine/hashmix.h: stored in the registers, fixed) */
static inline uint64
hll_hash(int64 v)
{
	return sf_murmurhash64((uint64) v);
}

static inline void
regs_add(uint8 *regs, uint64 h)
{
	uint32		idx = (uint32) (h >> HLL_Q);
	uint64		w = h << HLL_P;
	/* 1 + the leading zeros of the 50 bits after the index */
	uint8		rho = w == 0 ? HLL_Q + 1 : 64 - pg_leftmost_one_pos64(w);

	if (regs[idx] < rho)
		regs[idx] = rho;
}

/* The exact form becomes dense: its hashes go into registers */
static void
hll_densify(SfHll *s)
{
	uint8	   *regs = MemoryContextAllocZero(GetMemoryChunkContext(s), HLL_M);

	for (int32 i = 0; i < s->n; i++)
		regs_add(regs, s->hashes[i]);
	if (s->hashes != NULL)
		pfree(s->hashes);
	s->hashes = NULL;
	s->cap = 0;
	s->n = -1;
	s->regs = regs;
}

/* Binary search: the position of h in the exact form, or where it goes */
static int32
hll_find(const SfHll *s, uint64 h, bool *found)
{
	int32		lo = 0,
				hi = s->n;

	while (lo < hi)
	{
		int32		mid = lo + (hi - lo) / 2;

		if (s->hashes[mid] < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < s->n && s->hashes[lo] == h;
	return lo;
}

static void
hll_add_hash(SfHll *s, uint64 h)
{
	int32		at;
	bool		found;

	if (s->n < 0)
	{
		regs_add(s->regs, h);
		return;
	}
	at = hll_find(s, h, &found);
	if (found)
		return;
	if (s->n == HLL_EXACT_MAX)
	{
		hll_densify(s);
		regs_add(s->regs, h);
		return;
	}
	if (s->n == s->cap)
	{
		int32		cap = s->cap == 0 ? 4 : Min(s->cap * 2, HLL_EXACT_MAX);

		if (s->hashes == NULL)
			s->hashes = MemoryContextAlloc(GetMemoryChunkContext(s),
										   cap * sizeof(uint64));
		else
			s->hashes = repalloc(s->hashes, cap * sizeof(uint64));
		s->cap = cap;
	}
	memmove(s->hashes + at + 1, s->hashes + at,
			(s->n - at) * sizeof(uint64));
	s->hashes[at] = h;
	s->n++;
}

static void *
hll_init(MemoryContext cxt)
{
	return MemoryContextAllocZero(cxt, sizeof(SfHll));
}

static void
hll_add(void *state, int64 v)
{
	hll_add_hash((SfHll *) state, hll_hash(v));
}

static void
hll_merge(void *into, const void *from)
{
	SfHll	   *x = (SfHll *) into;
	const SfHll *y = (const SfHll *) from;

	if (y == NULL)
		return;
	if (y->n >= 0)
	{
		for (int32 i = 0; i < y->n; i++)
			hll_add_hash(x, y->hashes[i]);
		return;
	}
	if (x->n >= 0)
		hll_densify(x);
	for (int i = 0; i < HLL_M; i++)
		if (x->regs[i] < y->regs[i])
			x->regs[i] = y->regs[i];
}

static void *
hll_copy(MemoryContext cxt, const void *state)
{
	const SfHll *y = (const SfHll *) state;
	SfHll	   *c = MemoryContextAllocZero(cxt, sizeof(SfHll));

	c->n = y->n;
	if (y->n < 0)
	{
		c->regs = MemoryContextAlloc(cxt, HLL_M);
		memcpy(c->regs, y->regs, HLL_M);
	}
	else if (y->n > 0)
	{
		c->cap = y->n;
		c->hashes = MemoryContextAlloc(cxt, y->n * sizeof(uint64));
		memcpy(c->hashes, y->hashes, y->n * sizeof(uint64));
	}
	return c;
}

static bool
hll_equal(const void *a, const void *b)
{
	const SfHll *x = (const SfHll *) a;
	const SfHll *y = (const SfHll *) b;
	int32		nx = x == NULL ? 0 : x->n;
	int32		ny = y == NULL ? 0 : y->n;

	if (nx != ny)
		return false;
	if (nx < 0)
		return memcmp(x->regs, y->regs, HLL_M) == 0;
	return nx == 0 || memcmp(x->hashes, y->hashes, nx * sizeof(uint64)) == 0;
}

static void
hll_free(void *state)
{
	SfHll	   *s = (SfHll *) state;

	if (s->hashes != NULL)
		pfree(s->hashes);
	if (s->regs != NULL)
		pfree(s->regs);
	pfree(s);
}

static int64
hll_serialize(const void *state, int64 **words)
{
	const SfHll *s = (const SfHll *) state;
	int64	   *w;
	int64		n = 0;
	uint64		half = 0;
	bool		odd = false;

	if (s == NULL || s->n == 0)
	{
		*words = palloc(sizeof(int64));
		return 0;
	}
	if (s->n > 0)
	{
		w = palloc(s->n * sizeof(int64));
		for (int32 i = 0; i < s->n; i++)
			w[i] = (int64) s->hashes[i];
		*words = w;
		return s->n;
	}
	w = palloc((1 + HLL_M / 2) * sizeof(int64));
	w[n++] = HLL_DENSE_MARK;
	for (int i = 0; i < HLL_M; i++)
	{
		uint64		e;

		if (s->regs[i] == 0)
			continue;
		e = ((uint64) i << 8) | s->regs[i];
		if (odd)
			w[n++] = (int64) (half | (e << 32));
		else
			half = e;
		odd = !odd;
	}
	if (odd)
		w[n++] = (int64) half;
	*words = w;
	return n;
}

static bool
hll_deserialize(void *state, const int64 *words, int64 n,
				const char **detail)
{
	SfHll	   *s = (SfHll *) state;
	int			last = -1;

	if (n == 0)
		return true;
	if (n == 1 || words[0] != HLL_DENSE_MARK)
	{
		/* exact: the hashes, strictly ascending (unsigned) */
		if (n > HLL_EXACT_MAX)
		{
			*detail = "an exact sketch holds at most 1024 hashes";
			return false;
		}
		for (int64 i = 1; i < n; i++)
			if ((uint64) words[i] <= (uint64) words[i - 1])
			{
				*detail = "the hashes of an exact sketch are not in strictly ascending order";
				return false;
			}
		for (int64 i = 0; i < n; i++)
			hll_add_hash(s, (uint64) words[i]);
		return true;
	}
	/* dense: the registers not 0, two per word, ascending */
	if (n > 1 + HLL_M / 2)
	{
		*detail = "a dense sketch has at most 8193 words";
		return false;
	}
	for (int64 i = 1; i < n; i++)
	{
		uint64		x = (uint64) words[i];

		for (int j = 0; j < 2; j++, x >>= 32)
		{
			uint32		e = (uint32) (x & 0xffffffff);
			int			idx = (int) (e >> 8);
			int			rho = (int) (e & 0xff);

			if (e == 0 && j == 1 && i == n - 1)
				break;			/* an odd number of registers */
			if (idx >= HLL_M || rho < 1 || rho > HLL_Q + 1 || idx <= last)
			{
				*detail = "a dense sketch's words are not its registers above 0 (index << 8 | value, value 1 to 51) in ascending order, two per word";
				return false;
			}
			last = idx;
		}
	}
	s->n = 0;
	hll_densify(s);
	for (int64 i = 1; i < n; i++)
	{
		uint64		x = (uint64) words[i];

		for (int j = 0; j < 2; j++, x >>= 32)
		{
			uint32		e = (uint32) (x & 0xffffffff);

			if (e != 0)
				s->regs[e >> 8] = (uint8) (e & 0xff);
		}
	}
	return true;
}

/* Ertl's sigma and tau (agg_hll.c's header) */
static double
hll_sigma(double x)
{
	double		y = 1.0,
				z = x,
				zp;

	if (x == 1.0)
		return INFINITY;
	do
	{
		x *= x;
		zp = z;
		z += x * y;
		y += y;
	} while (zp != z);
	return z;
}

static double
hll_tau(double x)
{
	double		y = 1.0,
				z = 1.0 - x,
				zp;

	if (x == 0.0 || x == 1.0)
		return 0.0;
	do
	{
		x = sqrt(x);
		zp = z;
		y *= 0.5;
		z -= (1.0 - x) * (1.0 - x) * y;
	} while (zp != z);
	return z / 3.0;
}

static int64
hll_estimate(const uint8 *regs)
{
	int			c[HLL_Q + 2] = {0};
	double		z;

	for (int i = 0; i < HLL_M; i++)
		c[regs[i]]++;
	z = HLL_M * hll_tau(1.0 - (double) c[HLL_Q + 1] / HLL_M);
	for (int k = HLL_Q; k >= 1; k--)
		z = 0.5 * (z + c[k]);
	z += HLL_M * hll_sigma((double) c[0] / HLL_M);
	if (isinf(z))
		return 0;
	return (int64) llround(HLL_M / (2.0 * M_LN2) * HLL_M / z);
}

static void
hll_value(const void *state, const SfAggDef *a, SfAggValue *v)
{
	const SfHll *s = (const SfHll *) state;

	v->isnull = false;
	if (s == NULL)
		v->i64 = 0;
	else if (s->n >= 0)
		v->i64 = s->n;
	else
		v->i64 = hll_estimate(s->regs);
}

const SfAggVarOps sf_agg_hll_var = {
	.init = hll_init,
	.add = hll_add,
	.merge = hll_merge,
	.copy = hll_copy,
	.equal = hll_equal,
	.free = hll_free,
	.serialize = hll_serialize,
	.deserialize = hll_deserialize,
	.value = hll_value,
};
