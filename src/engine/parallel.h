/*-------------------------------------------------------------------------
 *
 * parallel.h
 *	  The engine's parts of parallel writers (issue 46,
 *	  docs/design/parallel-writers.md): the fingerprint index of the head
 *	  (fingerprint.c); the lanes, the transaction delta and the head apply
 *	  follow (build plan, section 12, step 2).
 *
 * Public to the layers above, as engine.h.  Nothing here is reached by a
 * serial pipeline.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/parallel.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SF_ENGINE_PARALLEL_H
#define SF_ENGINE_PARALLEL_H

#include "engine/engine.h"

/*
 * The fingerprint index (design, section 4.2): every remembered event id
 * of a parallel pipeline as a 64-bit hash (sf_fp_hash, independent of
 * identity.c's 32-bit one), the lane that first delivered it and 48 bits
 * of location (the identity's handle in a loaded lane, or the head journal
 * position that introduced it).  Open addressing, linear probing, 16-byte
 * slots, backward-shift deletion.  Two ids with the same hash take two
 * slots: a probe visits every slot of its hash (sf_fp_next), so a
 * collision costs an exact check, never a wrong answer.  A miss proves the
 * id unknown.
 */
#define SF_FP_LOC_MAX	((UINT64CONST(1) << 48) - 1)

typedef struct SfFpSlot
{
	uint64		hash;			/* 0: empty (sf_fp_hash never returns 0) */
	uint64		where;			/* lane << 48 | location */
} SfFpSlot;

typedef struct SfFingerprints
{
	MemoryContext cxt;
	SfFpSlot   *slots;
	uint64		mask;			/* capacity - 1, a power of two */
	uint64		n;				/* slots in use */
} SfFingerprints;

/* a probe's position, for sf_fp_next */
typedef struct SfFpCursor
{
	uint64		hash;
	uint64		pos;
	bool		started;
} SfFpCursor;

extern uint64 sf_fp_hash(const char *id, uint32 len);
extern SfFingerprints *sf_fp_create(MemoryContext cxt, uint64 expected);
extern void sf_fp_insert(SfFingerprints *fp, uint64 hash, uint16 lane,
						 uint64 loc);
extern void sf_fp_start(SfFpCursor *c, uint64 hash);
extern bool sf_fp_next(const SfFingerprints *fp, SfFpCursor *c,
					   uint16 *lane, uint64 *loc);
extern bool sf_fp_remove(SfFingerprints *fp, uint64 hash, uint16 lane,
						 uint64 loc);
extern bool sf_fp_relocate(SfFingerprints *fp, uint64 hash, uint16 lane,
						   uint64 from, uint64 to);

#endif							/* SF_ENGINE_PARALLEL_H */
