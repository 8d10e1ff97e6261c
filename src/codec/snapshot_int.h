/*-------------------------------------------------------------------------
 *
 * snapshot_int.h
 *	  Private to snapshot.c and snapshot_v3.c: the binary snapshot's
 *	  little-endian and varint primitives, its bounds-checked reader, and
 *	  the sections version 3 adds (snapshot_v3.c; the format is described
 *	  in snapshot.c's header and docs/persistence.md, "Snapshots").
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/codec/snapshot_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SF_SNAPSHOT_INT_H
#define SF_SNAPSHOT_INT_H

#include "lib/stringinfo.h"
#include "port/pg_bswap.h"

#include "codec/codec.h"
#include "engine/engine.h"

/* ----------------------------------------------------------------
 * Writer
 * ----------------------------------------------------------------
 */
static inline void
put_u8(StringInfo b, uint8 v)
{
	appendStringInfoCharMacro(b, (char) v);
}

static inline void
put_u16(StringInfo b, uint16 v)
{
	appendStringInfoCharMacro(b, (char) (v & 0xFF));
	appendStringInfoCharMacro(b, (char) (v >> 8));
}

static inline uint32
to_le32(uint32 v)
{
#ifdef WORDS_BIGENDIAN
	return pg_bswap32(v);
#else
	return v;
#endif
}

static inline uint64
to_le64(uint64 v)
{
#ifdef WORDS_BIGENDIAN
	return pg_bswap64(v);
#else
	return v;
#endif
}

static inline void
put_u32(StringInfo b, uint32 v)
{
	v = to_le32(v);
	appendBinaryStringInfo(b, (char *) &v, 4);
}

static inline void
put_u64(StringInfo b, uint64 v)
{
	v = to_le64(v);
	appendBinaryStringInfo(b, (char *) &v, 8);
}

/* LEB128: 7 bits a byte, low first, the high bit set on all but the last */
static inline void
put_varint(StringInfo b, uint64 v)
{
	char	   *d;
	int			n = 0;

	if (b->maxlen - b->len <= 10)
		enlargeStringInfo(b, 10);
	d = b->data + b->len;
	while (v >= 0x80)
	{
		d[n++] = (char) (v | 0x80);
		v >>= 7;
	}
	d[n++] = (char) v;
	b->len += n;
	b->data[b->len] = '\0';
}

/* A signed difference, zigzagged so that a small one of either sign is short */
static inline uint64
zigzag(int64 v)
{
	return ((uint64) v << 1) ^ (uint64) (v >> 63);
}

static inline int64
unzigzag(uint64 v)
{
	return (int64) (v >> 1) ^ -(int64) (v & 1);
}

static inline void
put_bytes(StringInfo b, const char *data, uint32 len)
{
	put_u32(b, len);
	appendBinaryStringInfo(b, data, len);
}

/* ----------------------------------------------------------------
 * Reader: every read is bounds-checked (sf_snap_corrupt: XX001)
 * ----------------------------------------------------------------
 */
typedef struct SnapReader
{
	const char *name;			/* the pipeline, for errors */
	const char *s;
	Size		len;
	Size		pos;
} SnapReader;

/* A damaged snapshot: XX001, naming the pipeline and the byte */
static inline pg_attribute_noreturn() void
sf_snap_corrupt(const SnapReader *r, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("the stored snapshot of pipeline \"%s\" is corrupt", r->name),
			 errdetail("%s (at byte %zu of %zu).", what, r->pos, r->len)));
}

static inline const char *
get_raw(SnapReader *r, Size n)
{
	const char *p;

	if (r->len - r->pos < n)
		sf_snap_corrupt(r, "It ends too early");
	p = r->s + r->pos;
	r->pos += n;
	return p;
}

static inline uint8
get_u8(SnapReader *r)
{
	return (uint8) *get_raw(r, 1);
}

static inline uint16
get_u16(SnapReader *r)
{
	const char *p = get_raw(r, 2);

	return (uint16) ((uint8) p[0] | ((uint8) p[1] << 8));
}

static inline uint32
get_u32(SnapReader *r)
{
	uint32		v;

	memcpy(&v, get_raw(r, 4), 4);
	return to_le32(v);
}

static inline uint64
get_u64(SnapReader *r)
{
	uint64		v;

	memcpy(&v, get_raw(r, 8), 8);
	return to_le64(v);
}

static inline const char *
get_bytes(SnapReader *r, uint32 *len)
{
	*len = get_u32(r);
	return get_raw(r, *len);
}

static inline uint64
get_varint(SnapReader *r)
{
	const uint8 *d = (const uint8 *) r->s + r->pos;
	Size		left = Min(r->len - r->pos, 10);
	uint64		v = 0;

	for (Size i = 0; i < left; i++)
	{
		v |= (uint64) (d[i] & 0x7F) << (7 * i);
		if ((d[i] & 0x80) == 0)
		{
			r->pos += i + 1;
			return v;
		}
	}
	sf_snap_corrupt(r, "A number is cut short or too long");
}

/* A count of items of at least minsize bytes each that the rest can hold */
static inline int64
get_count(SnapReader *r, Size minsize)
{
	uint64		n = get_u64(r);

	if (n > (r->len - r->pos) / minsize)
		sf_snap_corrupt(r, "A count is larger than the data");
	return (int64) n;
}

/* Identities read ahead in groups, their table slots prefetched */
#define ID_GROUP	16

typedef struct PendingId
{
	const char *eid;
	uint32		len;
	uint32		hash;
	uint32		h;
	uint32		ki;
	bool		late;
	int64		t;
	int64		v;
} PendingId;

/*
 * An identity's fields after its handle (versions 2 and 3): key index,
 * time (a difference from *t), value, length and late flag, event_id;
 * bad: the caller found its handle invalid
 */
static inline void
get_identity(SnapReader *r, PendingId *e, int64 *t, int64 nkeys, bool bad)
{
	uint64		ki = get_varint(r);
	uint64		lenflags;

	*t = (int64) ((uint64) *t + (uint64) unzigzag(get_varint(r)));
	e->v = unzigzag(get_varint(r));
	lenflags = get_varint(r);
	if (bad || ki >= (uint64) nkeys ||
		(lenflags >> 1) < 1 || (lenflags >> 1) > MaxAllocSize)
		sf_snap_corrupt(r, "An identity is invalid");
	e->ki = (uint32) ki;
	e->t = *t;
	e->late = (lenflags & 1) != 0;
	e->len = (uint32) (lenflags >> 1);
	e->eid = get_raw(r, e->len);
	e->hash = sf_hash_event_id(e->eid, (int) e->len);
}

/* snapshot.c: the definition section, for parallel_codec.c too */
extern void sf_snap_put_def(StringInfo b, const SfPipelineDef *def,
							uint32 version);
extern void sf_snap_check_def(SnapReader *r, const SfPipelineDef *target,
							  uint32 version);

/*
 * count, min, max and sum of a bucket: what a checkpoint may hold
 * (count >= 1, min <= max, the sum within [count * min, count * max]:
 * codec_validate.c), or corrupt
 */
static inline void
sf_snap_check_agg(const SnapReader *r, const SfAgg *a)
{
	if (a->count < 1 || a->min > a->max ||
		a->sum < (int128) a->min * a->count ||
		a->sum > (int128) a->max * a->count)
		sf_snap_corrupt(r, "An aggregate is inconsistent");
}

/* snapshot_v3.c: the sections of version 3 */
extern void sf_snap3_put_def(StringInfo b, const SfPipelineDef *def);
extern void sf_snap3_put_id_measures(StringInfo b, const SfPipeline *p,
									 const SfIdentity *id, int64 *prev);
extern void sf_snap3_put_bucket_measures(StringInfo b,
										 const SfMeasuresDef *md,
										 const SfAgg *agg);
extern void sf_snap3_put_deliveries(StringInfo b, SfPipeline *p,
									const uint32 *handles, int64 nids);
extern void sf_snap3_put_late(StringInfo b, SfPipeline *p,
							  const uint32 *handles, int64 nids);
extern void sf_snap3_read_def(SnapReader *r, SfPipelineDef *def,
							  const SfPipelineDef *target);
extern void sf_snap3_get_id_measures(SnapReader *r, const SfMeasuresDef *md,
									 int64 value, int64 *arrival, int64 *w);
extern void sf_snap3_decode_deliveries(SnapReader *r, SfPipeline *p,
									   const uint32 *ord2h, int64 nids);
extern void sf_snap3_decode_late(SnapReader *r, SfPipeline *p,
								 const uint32 *ord2h, int64 nids);
extern void sf_snap_decode_buckets(SnapReader *r, SfPipeline *p,
								   SfString **keys, int64 nkeys);
extern void sf_snap3_decode_bucket_measures(SnapReader *r,
											const SfMeasuresDef *md,
											int64 *ext, int64 count);

#endif							/* SF_SNAPSHOT_INT_H */
