/*-------------------------------------------------------------------------
 *
 * agg_distinct.c
 *	  The variable-size state of count_distinct(m) (agg_ops.h,
 *	  "Variable-size state"): the set of a measure's distinct non-NULL
 *	  values in a bucket, a simplehash of int64.
 *
 * The registry (agg_funcs.c) points at sf_agg_distinct_var; nothing else
 * calls this file.  A state lives in the memory context it was made in
 * (a bucket's: its pipeline's var_cxt; a copy's: the caller's).
 *
 * Memory: an entry is 16 bytes (the value and simplehash's status byte,
 * padded) and the table doubles when 90% full, so a set of n values holds
 * 16 * 2^ceil(log2(n / 0.9)) bytes, 18 to 36 bytes per value, plus the
 * table's header; a new set has 4 slots (docs/aggregates.md).
 *
 * Checkpoint words: the values in ascending order, each once, which is
 * what deserialize accepts (and nothing else).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/agg_distinct.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "engine/engine.h"

typedef struct SfDistinctEntry
{
	int64		value;
	char		status;
} SfDistinctEntry;

/* splitmix64's finalizer: every bit of the value reaches the low bits */
static inline uint32
distinct_hash(int64 v)
{
	uint64		x = (uint64) v;

	x ^= x >> 30;
	x *= UINT64CONST(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64CONST(0x94d049bb133111eb);
	x ^= x >> 31;
	return (uint32) x;
}

#define SH_PREFIX		sf_distinct
#define SH_ELEMENT_TYPE	SfDistinctEntry
#define SH_KEY_TYPE		int64
#define SH_KEY			value
#define SH_HASH_KEY(tb, key) distinct_hash(key)
#define SH_EQUAL(tb, a, b) ((a) == (b))
#define SH_SCOPE		static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

static void *
distinct_init(MemoryContext cxt)
{
	/* 4 slots: most buckets of a sliding or session window hold few */
	return sf_distinct_create(cxt, 4, NULL);
}

static void
distinct_add(void *state, int64 v)
{
	bool		found;

	sf_distinct_insert((sf_distinct_hash *) state, v, &found);
}

static void
distinct_merge(void *into, const void *from)
{
	sf_distinct_hash *x = (sf_distinct_hash *) into;
	sf_distinct_hash *y = (sf_distinct_hash *) from;
	sf_distinct_iterator it;
	SfDistinctEntry *e;
	bool		found;

	if (y == NULL)
		return;
	sf_distinct_start_iterate(y, &it);
	while ((e = sf_distinct_iterate(y, &it)) != NULL)
		sf_distinct_insert(x, e->value, &found);
}

static void *
distinct_copy(MemoryContext cxt, const void *state)
{
	sf_distinct_hash *y = (sf_distinct_hash *) state;
	sf_distinct_hash *c = sf_distinct_create(cxt, Max(y->members, 8), NULL);

	distinct_merge(c, y);
	return c;
}

static uint64
members(const void *state)
{
	return state == NULL ? 0 : ((const sf_distinct_hash *) state)->members;
}

static bool
distinct_equal(const void *a, const void *b)
{
	sf_distinct_hash *x = (sf_distinct_hash *) a;
	sf_distinct_hash *y = (sf_distinct_hash *) b;
	sf_distinct_iterator it;
	SfDistinctEntry *e;

	if (members(a) != members(b))
		return false;
	if (members(a) == 0)
		return true;
	sf_distinct_start_iterate(x, &it);
	while ((e = sf_distinct_iterate(x, &it)) != NULL)
		if (sf_distinct_lookup(y, e->value) == NULL)
			return false;
	return true;
}

static void
distinct_free(void *state)
{
	sf_distinct_destroy((sf_distinct_hash *) state);
}

static int
int64_cmp(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return (x > y) - (x < y);
}

static int64
distinct_serialize(const void *state, int64 **words)
{
	sf_distinct_hash *x = (sf_distinct_hash *) state;
	uint64		n = members(state);
	sf_distinct_iterator it;
	SfDistinctEntry *e;
	int64	   *w;
	uint64		k = 0;

	w = palloc_extended(Max(n, 1) * sizeof(int64), MCXT_ALLOC_HUGE);
	if (n > 0)
	{
		sf_distinct_start_iterate(x, &it);
		while ((e = sf_distinct_iterate(x, &it)) != NULL)
			w[k++] = e->value;
	}
	Assert(k == n);
	qsort(w, n, sizeof(int64), int64_cmp);
	*words = w;
	return (int64) n;
}

static bool
distinct_deserialize(void *state, const int64 *words, int64 n,
					 const char **detail)
{
	for (int64 i = 1; i < n; i++)
		if (words[i] <= words[i - 1])
		{
			*detail = "the distinct values are not in strictly ascending order";
			return false;
		}
	for (int64 i = 0; i < n; i++)
		distinct_add(state, words[i]);
	return true;
}

static void
distinct_value(const void *state, const SfAggDef *a, SfAggValue *v)
{
	v->isnull = false;
	v->i64 = (int64) members(state);
}

const SfAggVarOps sf_agg_distinct_var = {
	.init = distinct_init,
	.add = distinct_add,
	.merge = distinct_merge,
	.copy = distinct_copy,
	.equal = distinct_equal,
	.free = distinct_free,
	.serialize = distinct_serialize,
	.deserialize = distinct_deserialize,
	.value = distinct_value,
};
