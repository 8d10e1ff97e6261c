/*-------------------------------------------------------------------------
 *
 * parallel_int.h
 *	  Private to parallel_codec.c and parallel_snapshot.c: the formats'
 *	  numbers and the readers and writers both use (issue 46; the formats
 *	  are described in parallel_codec.c's header).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/codec/parallel_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SF_PARALLEL_INT_H
#define SF_PARALLEL_INT_H

#include "codec/snapshot_int.h"
#include "engine/parallel.h"

#define HEAD_ENTRY_FORMAT	5
#define LANE_K_FORMAT		6
#define SNAP_MAGIC			"SFSNAPB\n"
#define SNAP_HEADER			24
#define SNAP_HEAD_VERSION	4
#define SNAP_LANE_VERSION	5
static inline void
put_str(StringInfo b, const char *s, int len)
{
	put_varint(b, (uint64) len);
	appendBinaryStringInfo(b, s, len);
}

/* A string of at least min bytes */
static inline const char *
get_str(SnapReader *r, int *len, int min)
{
	uint64		n = get_varint(r);

	if (n < (uint64) min || n > MaxAllocSize || n > r->len - r->pos)
		sf_snap_corrupt(r, "A string's length is invalid");
	*len = (int) n;
	return get_raw(r, n);
}

/* A varint count of items of at least minsize bytes that the rest holds */
static inline int64
get_vcount(SnapReader *r, Size minsize)
{
	uint64		n = get_varint(r);

	if (n > (r->len - r->pos) / minsize)
		sf_snap_corrupt(r, "A count is larger than the data");
	return (int64) n;
}

static inline int
get_lane(SnapReader *r, int np)
{
	uint64		l = get_varint(r);

	if (l >= (uint64) np)
		sf_snap_corrupt(r, "A lane is out of range");
	return (int) l;
}

/* count, min, max, sum of a bucket: consistent, or corrupt */
static inline void
check_agg(SnapReader *r, const SfAgg *a)
{
	if (a->count < 1 || a->min > a->max ||
		a->sum < (int128) a->min * a->count ||
		a->sum > (int128) a->max * a->count)
		sf_snap_corrupt(r, "An aggregate is inconsistent");
}


/*
 * Measures pipelines in parallel mode (branch h46e) carry measure words in
 * the delta, the identities and the late rows, and arrival numbers: these
 * formats do not hold them yet, so they are refused rather than written
 * without them
 */
static inline void
sf_pc_no_measures(const SfPipelineDef *def)
{
	if (def->measures != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the bytes of a parallel pipeline do not hold measures yet"),
				 errdetail("Pipeline \"%s\" has measures.", def->name)));
}

/* parallel_codec.c */
extern void sf_pc_as_corrupt(void (*fn) (void *), void *arg, const char *what,
							 const char *name);

#endif							/* SF_PARALLEL_INT_H */
