/*-------------------------------------------------------------------------
 *
 * fingerprint_check.c
 *	  Internal SQL entries that test the fingerprint index of parallel
 *	  writers (issue 46, docs/design/parallel-writers.md, build plan step
 *	  2: engine/fingerprint.c) against a plain array, and show its hash.
 *
 * Not granted to PUBLIC (sql/objects/90_parallel.sql); the regress test
 * parallel_engine calls them as the superuser.  Moved out of
 * parallel_check.c, whose runs grew past the file limit.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/fingerprint_check.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/pg_prng.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "api/api.h"
#include "engine/parallel.h"
/* one live fingerprint of the reference */
typedef struct RefFp
{
	uint64		hash;
	uint16		lane;
	uint64		loc;
} RefFp;

static int
ref_fp_cmp(const void *a, const void *b)
{
	const RefFp *x = a;
	const RefFp *y = b;

	if (x->lane != y->lane)
		return x->lane < y->lane ? -1 : 1;
	if (x->loc != y->loc)
		return x->loc < y->loc ? -1 : 1;
	return 0;
}

static pg_attribute_noreturn() void
fp_mismatch(int64 op, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_INTERNAL_ERROR),
			 errmsg("fingerprint index differs from its reference at operation " INT64_FORMAT ": %s",
					op, what)));
}

/*
 * streamforge_internal.fingerprint_check(ops int, hash_bits int, seed
 * bigint): ops random operations on a fingerprint index and on a plain
 * array of (hash, lane, location), compared after each: inserts, removals
 * (present and absent), relocations, and probes whose every slot must be
 * the reference's set for that hash.  hash_bits (1..64) narrows the hashes
 * so that collisions, long runs, wrap-around and backward shifts are the
 * common case.  Returns the number of slots compared; raises XX000 at the
 * first difference.
 */
PG_FUNCTION_INFO_V1(sf_fingerprint_check);
Datum
sf_fingerprint_check(PG_FUNCTION_ARGS)
{
	int32		ops = PG_GETARG_INT32(0);
	int32		bits = PG_GETARG_INT32(1);
	int64		seed = PG_GETARG_INT64(2);
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext,
											  "fingerprint check",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	SfFingerprints *fp = sf_fp_create(cxt, 0);
	RefFp	   *ref = palloc(sizeof(RefFp) * Max(ops, 1));
	RefFp	   *got = palloc(sizeof(RefFp) * Max(ops, 1));
	RefFp	   *want = palloc(sizeof(RefFp) * Max(ops, 1));
	int64		nref = 0;
	int64		compared = 0;
	uint64		hmask = bits >= 64 ? PG_UINT64_MAX : (UINT64CONST(1) << bits) - 1;
	pg_prng_state rng;

	if (ops < 0 || bits < 1 || bits > 64)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ops must not be negative and hash_bits must be between 1 and 64")));
	pg_prng_seed(&rng, (uint64) seed);
	for (int64 op = 0; op < ops; op++)
	{
		uint32		r = pg_prng_uint32(&rng) % 100;
		uint64		hash = (pg_prng_uint64(&rng) & hmask) | 1;
		uint16		lane = (uint16) (pg_prng_uint32(&rng) % 4);
		uint64		loc = pg_prng_uint64(&rng) & SF_FP_LOC_MAX;
		SfFpCursor	c;
		int64		ngot = 0;
		int64		nwant = 0;

		CHECK_FOR_INTERRUPTS();
		if (nref > 0 && r < 40)
		{
			/* an existing one's hash, so that probes and removals hit */
			RefFp	   *e = &ref[pg_prng_uint64(&rng) % nref];

			hash = e->hash;
			if (r < 15)
			{
				lane = e->lane;
				loc = e->loc;
			}
		}
		r = pg_prng_uint32(&rng) % 100;
		if (r < 45)
		{
			/* insert, unless (hash, lane, loc) is there already */
			bool		dup = false;

			for (int64 i = 0; i < nref && !dup; i++)
				dup = ref[i].hash == hash && ref[i].lane == lane && ref[i].loc == loc;
			if (!dup)
			{
				sf_fp_insert(fp, hash, lane, loc);
				ref[nref].hash = hash;
				ref[nref].lane = lane;
				ref[nref].loc = loc;
				nref++;
			}
		}
		else if (r < 75)
		{
			/* remove: the reference's answer first */
			int64		at = -1;

			for (int64 i = 0; i < nref && at < 0; i++)
				if (ref[i].hash == hash && ref[i].lane == lane && ref[i].loc == loc)
					at = i;
			if (sf_fp_remove(fp, hash, lane, loc) != (at >= 0))
				fp_mismatch(op, "remove");
			if (at >= 0)
				ref[at] = ref[--nref];
		}
		else if (r < 85)
		{
			/* relocate to a new location */
			uint64		to = pg_prng_uint64(&rng) & SF_FP_LOC_MAX;
			int64		at = -1;

			for (int64 i = 0; i < nref && at < 0; i++)
				if (ref[i].hash == hash && ref[i].lane == lane && ref[i].loc == loc)
					at = i;
			for (int64 i = 0; i < nref && at >= 0; i++)
				if (ref[i].hash == hash && ref[i].lane == lane && ref[i].loc == to)
					at = -2;	/* would make a duplicate: skip */
			if (at == -2)
				continue;
			if (sf_fp_relocate(fp, hash, lane, loc, to) != (at >= 0))
				fp_mismatch(op, "relocate");
			if (at >= 0)
				ref[at].loc = to;
		}

		/* probe: every slot of hash, as a set, equals the reference's */
		sf_fp_start(&c, hash);
		while (sf_fp_next(fp, &c, &got[ngot].lane, &got[ngot].loc))
		{
			if (ngot >= nref)
				fp_mismatch(op, "probe finds more slots than exist");
			ngot++;
		}
		for (int64 i = 0; i < nref; i++)
			if (ref[i].hash == hash)
				want[nwant++] = ref[i];
		if (ngot != nwant)
			fp_mismatch(op, "probe count");
		qsort(got, ngot, sizeof(RefFp), ref_fp_cmp);
		qsort(want, nwant, sizeof(RefFp), ref_fp_cmp);
		for (int64 i = 0; i < ngot; i++)
			if (ref_fp_cmp(&got[i], &want[i]) != 0)
				fp_mismatch(op, "probe slots");
		if ((int64) fp->n != nref)
			fp_mismatch(op, "size");
		compared += ngot;
	}

	/* at the end, every reference entry is found by its own probe */
	for (int64 i = 0; i < nref; i++)
	{
		SfFpCursor	c;
		uint16		lane;
		uint64		loc;
		bool		found = false;

		sf_fp_start(&c, ref[i].hash);
		while (!found && sf_fp_next(fp, &c, &lane, &loc))
			found = lane == ref[i].lane && loc == ref[i].loc;
		if (!found)
			fp_mismatch(ops, "an entry is lost");
		compared++;
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	PG_RETURN_INT64(compared);
}

/*
 * streamforge_internal.fingerprint_hash(event_id text): the index's hash of
 * an id, as a bigint (the regress test checks it is stable and not
 * identity.c's)
 */
PG_FUNCTION_INFO_V1(sf_fingerprint_hash);
Datum
sf_fingerprint_hash(PG_FUNCTION_ARGS)
{
	text	   *t = PG_GETARG_TEXT_PP(0);

	PG_RETURN_INT64((int64) sf_fp_hash(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t)));
}
