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

/*
 * An event's measures (a measures pipeline's E and L ops, the head
 * snapshot's late rows: 1 + width words, engine/parallel.h): its arrival
 * as the difference from base, then its measure words, the first as the
 * difference from the event's value (which it is: one byte), as
 * snapshot_v3.c writes an identity's
 */
static inline void
put_ev_measures(StringInfo b, const SfMeasuresDef *md, const int64 *m,
				int64 base, int64 value)
{
	put_varint(b, zigzag((int64) ((uint64) m[0] - (uint64) base)));
	for (int i = 1; i <= md->width; i++)
	{
		int64		from = i == 1 && md->nmeasures > 0 ? value : 0;

		put_varint(b, zigzag((int64) ((uint64) m[i] - (uint64) from)));
	}
}

/* put_ev_measures' words, in a new array; the NULL mask checked */
static inline int64 *
get_ev_measures(SnapReader *r, const SfMeasuresDef *md, int64 base,
				int64 value)
{
	int64	   *m = palloc((1 + md->width) * sizeof(int64));

	for (int i = 0; i <= md->width; i++)
		m[i] = unzigzag(get_varint(r));
	m[0] = (int64) ((uint64) m[0] + (uint64) base);
	if (md->nmeasures > 0)
		m[1] = (int64) ((uint64) m[1] + (uint64) value);
	if (!sf_measures_valid(md, m + 1))
		sf_snap_corrupt(r, "An event's measures are invalid");
	return m;
}

/* parallel_codec.c */
extern void sf_pc_as_corrupt(void (*fn) (void *), void *arg, const char *what,
							 const char *name);

#endif							/* SF_PARALLEL_INT_H */
