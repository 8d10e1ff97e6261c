/*-------------------------------------------------------------------------
 *
 * fingerprint.c
 *	  The fingerprint index of a parallel pipeline's head (issue 46,
 *	  docs/design/parallel-writers.md, section 4.2; engine/parallel.h).
 *
 * One 16-byte slot per remembered event id: its 64-bit hash and where the
 * identity is (lane, location).  A writer probes it for every delivery
 * (a miss: a new id; a hit: an exact check in the lane, section 5.2);
 * every backend inserts the fingerprints a committed transaction brings
 * (the head entry's list) and removes those that retention forgets.  The
 * table is linear-probing with backward-shift deletion, so that a probe
 * ends at the first empty slot whatever was removed before, and it grows
 * by doubling at 7/8 full.  It is per backend and never shared.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/fingerprint.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "engine/engine.h"
#include "engine/parallel.h"

/* the seed of the index's hash: another function than identity.c's */
#define SF_FP_SEED		UINT64CONST(0x5346465052494e54)

#define SF_FP_MIN		64

/*
 * The index's hash of an event id: MurmurHash64A (64 bits, 8 bytes per
 * step) with the index's seed, never 0 (the empty slot).  Written here, not
 * PostgreSQL's hash_bytes_extended, so that the engine keeps to the
 * functions test/fuzz/shim.c provides.
 */
uint64
sf_fp_hash(const char *id, uint32 len)
{
	const uint64 m = UINT64CONST(0xc6a4a7935bd1e995);
	const int	r = 47;
	uint64		h = SF_FP_SEED ^ ((uint64) len * m);
	const unsigned char *d = (const unsigned char *) id;
	uint32		words = len / 8;
	uint32		rest = len % 8;
	uint64		t = 0;

	for (uint32 i = 0; i < words; i++)
	{
		uint64		k;

		memcpy(&k, d + i * 8, 8);
		k *= m;
		k ^= k >> r;
		k *= m;
		h ^= k;
		h *= m;
	}
	d += words * 8;
	for (uint32 i = rest; i > 0; i--)
		t = (t << 8) | d[i - 1];
	if (rest > 0)
	{
		h ^= t;
		h *= m;
	}
	h ^= h >> r;
	h *= m;
	h ^= h >> r;
	return h == 0 ? 1 : h;
}

static inline uint64
fp_where(uint16 lane, uint64 loc)
{
	Assert(loc <= SF_FP_LOC_MAX);
	return ((uint64) lane << 48) | loc;
}

/* An empty index sized for about expected ids, in cxt */
SfFingerprints *
sf_fp_create(MemoryContext cxt, uint64 expected)
{
	SfFingerprints *fp = MemoryContextAllocZero(cxt, sizeof(SfFingerprints));
	uint64		cap = SF_FP_MIN;

	while (cap - cap / 8 < expected)
		cap *= 2;
	fp->cxt = cxt;
	fp->slots = MemoryContextAllocHuge(cxt, cap * sizeof(SfFpSlot));
	memset(fp->slots, 0, cap * sizeof(SfFpSlot));
	fp->mask = cap - 1;
	fp->n = 0;
	return fp;
}

static void
fp_put(SfFpSlot *slots, uint64 mask, uint64 hash, uint64 where)
{
	uint64		pos = hash & mask;

	while (slots[pos].hash != 0)
		pos = (pos + 1) & mask;
	slots[pos].hash = hash;
	slots[pos].where = where;
}

/* Double the table: every slot again, by its hash */
static void
fp_grow(SfFingerprints *fp)
{
	uint64		cap = (fp->mask + 1) * 2;
	SfFpSlot   *slots = MemoryContextAllocHuge(fp->cxt, cap * sizeof(SfFpSlot));

	memset(slots, 0, cap * sizeof(SfFpSlot));
	for (uint64 i = 0; i <= fp->mask; i++)
		if (fp->slots[i].hash != 0)
			fp_put(slots, cap - 1, fp->slots[i].hash, fp->slots[i].where);
	pfree(fp->slots);
	fp->slots = slots;
	fp->mask = cap - 1;
}

/*
 * Add an id's fingerprint: hash (sf_fp_hash), the lane that first
 * delivered it and its location there.  The caller has checked that the
 * id is not in the index already (one slot per remembered id).
 */
void
sf_fp_insert(SfFingerprints *fp, uint64 hash, uint16 lane, uint64 loc)
{
	Assert(hash != 0);
	if (fp->n + 1 > (fp->mask + 1) - (fp->mask + 1) / 8)
		fp_grow(fp);
	fp_put(fp->slots, fp->mask, hash, fp_where(lane, loc));
	fp->n++;
}

/*
 * Add every fingerprint of from to fp (a transaction's new ids at its
 * commit, head.c): its slots are copied, their hashes not computed again.
 * The caller has checked that none is in fp already.
 */
void
sf_fp_insert_all(SfFingerprints *fp, const SfFingerprints *from)
{
	while (fp->n + from->n > (fp->mask + 1) - (fp->mask + 1) / 8)
		fp_grow(fp);
	for (uint64 i = 0; i <= from->mask; i++)
		if (from->slots[i].hash != 0)
		{
			fp_put(fp->slots, fp->mask, from->slots[i].hash,
				   from->slots[i].where);
			fp->n++;
		}
}

/* Start a probe for hash */
void
sf_fp_start(SfFpCursor *c, uint64 hash)
{
	c->hash = hash;
	c->pos = 0;
	c->started = false;
}

/*
 * The next slot of the probe's hash: its lane and location; false when
 * there is none (the id is unknown, or no other id has that hash).  The
 * index must not change during a probe.
 */
bool
sf_fp_next(const SfFingerprints *fp, SfFpCursor *c, uint16 *lane,
		   uint64 *loc)
{
	uint64		pos = c->started ? (c->pos + 1) & fp->mask : c->hash & fp->mask;

	c->started = true;
	while (fp->slots[pos].hash != 0)
	{
		if (fp->slots[pos].hash == c->hash)
		{
			c->pos = pos;
			*lane = (uint16) (fp->slots[pos].where >> 48);
			*loc = fp->slots[pos].where & SF_FP_LOC_MAX;
			return true;
		}
		pos = (pos + 1) & fp->mask;
	}
	c->pos = pos;
	return false;
}

/* The slot holding exactly (hash, lane, loc), or -1 */
static int64
fp_find(const SfFingerprints *fp, uint64 hash, uint64 where)
{
	uint64		pos = hash & fp->mask;

	while (fp->slots[pos].hash != 0)
	{
		if (fp->slots[pos].hash == hash && fp->slots[pos].where == where)
			return (int64) pos;
		pos = (pos + 1) & fp->mask;
	}
	return -1;
}

/*
 * Remove the fingerprint (hash, lane, loc), e.g. an identity retention
 * forgot or an uncommitted one a rollback undid; false if it is not there.
 * Backward shift: each later slot of the run whose home is not between the
 * hole and itself moves into the hole, so that no probe stops early.
 */
bool
sf_fp_remove(SfFingerprints *fp, uint64 hash, uint16 lane, uint64 loc)
{
	int64		found = fp_find(fp, hash, fp_where(lane, loc));
	uint64		hole;
	uint64		pos;

	if (found < 0)
		return false;
	hole = (uint64) found;
	pos = (hole + 1) & fp->mask;
	while (fp->slots[pos].hash != 0)
	{
		uint64		home = fp->slots[pos].hash & fp->mask;

		/* distance from home to pos, and from home to the hole (cyclic) */
		if (((pos - home) & fp->mask) >= ((hole - home) & fp->mask))
		{
			fp->slots[hole] = fp->slots[pos];
			hole = pos;
		}
		pos = (pos + 1) & fp->mask;
	}
	fp->slots[hole].hash = 0;
	fp->slots[hole].where = 0;
	fp->n--;
	return true;
}

/*
 * Change the location of (hash, lane, from) to to: a lane loaded (head
 * position -> handle) or evicted (handle -> head position).  False if it
 * is not there.
 */
bool
sf_fp_relocate(SfFingerprints *fp, uint64 hash, uint16 lane, uint64 from,
			   uint64 to)
{
	int64		found = fp_find(fp, hash, fp_where(lane, from));

	if (found < 0)
		return false;
	fp->slots[found].where = fp_where(lane, to);
	return true;
}
