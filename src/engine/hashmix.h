/*-------------------------------------------------------------------------
 *
 * hashmix.h
 *	  Integer hash finalizers shared by the engine and the layers above.
 *
 * PostgreSQL 15's common/hashfn.h has murmurhash32 only; 16 adds
 * murmurhash64, which this is.  Its values are stored (the approximate
 * distinct counts' registers, agg_hll.c): it must not change.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/hashmix.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SF_HASHMIX_H
#define SF_HASHMIX_H

/* murmur3's 64-bit finalizer: every bit of h reaches every bit */
static inline uint64
sf_murmurhash64(uint64 h)
{
	h ^= h >> 33;
	h *= UINT64CONST(0xff51afd7ed558ccd);
	h ^= h >> 33;
	h *= UINT64CONST(0xc4ceb9fe1a85ec53);
	h ^= h >> 33;
	return h;
}

#endif							/* SF_HASHMIX_H */
