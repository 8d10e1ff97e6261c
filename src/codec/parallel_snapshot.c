/*-------------------------------------------------------------------------
 *
 * parallel_snapshot.c
 *	  The snapshots of a parallel pipeline (issue 46,
 *	  docs/design/parallel-writers.md, sections 4.3 and 6.7): the head's
 *	  (binary snapshot version 4) and a lane's (version 5), and the
 *	  checkpoint of head and lanes (merged into the serial form) and its
 *	  restore (split by partition).  The formats are described in
 *	  parallel_codec.c's header.
 *
 * Errors: damaged bytes raise XX001 (ERRCODE_DATA_CORRUPTED), as
 * snapshot.c does; a checkpoint is validated by codec.c (SF003).  Memory:
 * encoders return a bytea in the caller's context; a decoded head is a new
 * context under parent, freed before an error propagates, and the
 * decoder's scratch arrays are in the caller's context.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/codec/parallel_snapshot.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <zlib.h>

#include "miscadmin.h"

#include "codec/parallel_int.h"

/* ----------------------------------------------------------------
 * Shared
 * ----------------------------------------------------------------
 */

/* The header: magic, version, room for the CRC and the length */
static void
put_header(StringInfo b, uint32 version)
{
	initStringInfo(b);
	appendBinaryStringInfo(b, SNAP_MAGIC, 8);
	put_u32(b, version);
	put_u32(b, 0);
	put_u64(b, 0);
}

static uint32
payload_crc(const char *data, uint64 len)
{
	uint32		crc = crc32(0L, Z_NULL, 0);

	for (uint64 off = 0; off < len;)
	{
		uInt		chunk = (uInt) Min(len - off, (uint64) 1 << 30);

		crc = crc32(crc, (const Bytef *) data + off, chunk);
		off += chunk;
	}
	return crc;
}

/* Close b: the header's CRC and length; the bytes as a bytea */
static bytea *
finish_snapshot(StringInfo b)
{
	uint64		len = b->len - SNAP_HEADER;
	uint32		crc = to_le32(payload_crc(b->data + SNAP_HEADER, len));
	bytea	   *result;

	memcpy(b->data + 12, &crc, 4);
	len = to_le64(len);
	memcpy(b->data + 16, &len, 8);
	if ((Size) b->len > MaxAllocSize - VARHDRSZ)
		ereport(ERROR,
				errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				errmsg("snapshot too large"),
				errdetail("The snapshot needs %d bytes, the maximum is %zu.",
						  b->len, (Size) (MaxAllocSize - VARHDRSZ)));
	result = palloc_extended(VARHDRSZ + b->len, MCXT_ALLOC_HUGE);
	SET_VARSIZE(result, VARHDRSZ + b->len);
	memcpy(VARDATA(result), b->data, b->len);
	pfree(b->data);
	return result;
}

/* Open a snapshot of the given version: header, CRC, length */
static void
open_snapshot(SnapReader *r, const char *name, const char *data, Size len,
			  uint32 version)
{
	uint32		want;
	uint64		plen;

	r->name = name;
	r->s = data;
	r->len = len;
	r->pos = 0;
	if (len < SNAP_HEADER || memcmp(data, SNAP_MAGIC, 8) != 0)
		sf_snap_corrupt(r, "It is not a binary snapshot");
	r->pos = 8;
	if (get_u32(r) != version)
		sf_snap_corrupt(r, "Its version is not the expected one");
	want = get_u32(r);
	plen = get_u64(r);
	if (plen != len - SNAP_HEADER)
		sf_snap_corrupt(r, "Its length is wrong");
	if (payload_crc(data + SNAP_HEADER, plen) != want)
		sf_snap_corrupt(r, "Its checksum does not match");
}

/* Keys sorted by their bytes, and a key's index among them */
static int
key_cmp(const void *a, const void *b)
{
	const SfString *x = *(SfString *const *) a;
	const SfString *y = *(SfString *const *) b;
	int			c = memcmp(x->data, y->data, Min(x->len, y->len));

	if (c != 0)
		return c;
	return (x->len > y->len) - (x->len < y->len);
}

static uint64
key_find(SfString **keys, int64 n, const SfString *key)
{
	int64		lo = 0,
				hi = n - 1;

	while (lo <= hi)
	{
		int64		mid = lo + (hi - lo) / 2;
		int			c = key_cmp(&keys[mid], &key);

		if (c == 0)
			return (uint64) mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	elog(ERROR, "streamforge: key not interned");
	return 0;					/* keep compiler quiet */
}

static void
put_keys(StringInfo b, SfString **keys, int64 n)
{
	if (n > 1)
		qsort(keys, n, sizeof(SfString *), key_cmp);
	put_u64(b, (uint64) n);
	for (int64 k = 0; k < n; k++)
		put_bytes(b, keys[k]->data, keys[k]->len);
}

/* n keys (palloc'd), interned in p, strictly in byte order */
static SfString **
get_keys(SnapReader *r, SfPipeline *p, int64 *n)
{
	int64		nkeys = get_count(r, 4);
	SfString  **keys = palloc_extended(Max(nkeys, 1) * sizeof(SfString *),
									   MCXT_ALLOC_HUGE);

	for (int64 k = 0; k < nkeys; k++)
	{
		uint32		len;
		const char *s = get_bytes(r, &len);

		if ((k & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		if (len > MaxAllocSize)
			sf_snap_corrupt(r, "A key is too long");
		keys[k] = sf_intern_key(p, s, (int) len);
		if (k > 0 && key_cmp(&keys[k - 1], &keys[k]) >= 0)
			sf_snap_corrupt(r, "The keys are not in order");
	}
	*n = nkeys;
	return keys;
}

static uint32
get_key_index(SnapReader *r, int64 nkeys)
{
	uint64		k = get_varint(r);

	if (k >= (uint64) nkeys)
		sf_snap_corrupt(r, "A key index is out of range");
	return (uint32) k;
}

/* ----------------------------------------------------------------
 * Lane snapshot (version 5)
 * ----------------------------------------------------------------
 */

/*
 * A map of 63-bit keys to 48-bit values: a fingerprint index whose hash is
 * the key plus one (never 0) and whose location is the value
 */
static SfFingerprints *
map_create(int64 n)
{
	return sf_fp_create(CurrentMemoryContext, (uint64) Max(n, 0));
}

static bool
map_get(const SfFingerprints *m, uint64 key, int64 *value)
{
	SfFpCursor	c;
	uint16		lane;
	uint64		loc;

	sf_fp_start(&c, key + 1);
	if (!sf_fp_next(m, &c, &lane, &loc))
		return false;
	*value = (int64) loc;
	return true;
}

static void
map_free(SfFingerprints *m)
{
	pfree(m->slots);
	pfree(m);
}

/*
 * The snapshot of lane pi of h: its deliveries in offset order, each a new
 * identity or a reference to an earlier one (the file header has the
 * format).  Only what the deliveries refer to is written: a lane's store
 * may hold records nothing refers to any more.
 */
bytea *
sf_lane_snapshot_encode(SfHead *h, int pi)
{
	SfPipeline *lane = h->lanes[pi];
	SfPartition *part = &lane->partitions[pi];
	int64		n = part->consumed + 1;
	StringInfoData b;
	SfFingerprints *seen = map_create(n);	/* handle -> ordinal */
	SfString  **keys = palloc_extended(Max(n, 1) * sizeof(SfString *),
									   MCXT_ALLOC_HUGE);
	int64		nkeys = 0;
	int64		nids = 0;
	int64		prev_t = 0;
	int64		prev_a = 0;
	const SfMeasuresDef *md = h->p->def.measures;

	put_header(&b, SNAP_LANE_VERSION);
	sf_snap_put_def(&b, &h->p->def, 3);
	put_u16(&b, (uint16) pi);
	put_varint(&b, (uint64) lane->offset_replays);

	/* the keys the deliveries use, each once */
	for (int64 o = 0; o < n; o++)
	{
		SfIdentity *id = sf_id_ptr(lane, part->deliveries[part->head + o]);

		keys[nkeys++] = id->key;
	}
	if (nkeys > 1)
	{
		int64		u = 1;

		qsort(keys, nkeys, sizeof(SfString *), key_cmp);
		for (int64 k = 1; k < nkeys; k++)
			if (key_cmp(&keys[k], &keys[u - 1]) != 0)
				keys[u++] = keys[k];
		nkeys = u;
	}
	put_keys(&b, keys, nkeys);

	put_u64(&b, (uint64) n);
	for (int64 o = 0; o < n; o++)
	{
		uint32		handle = part->deliveries[part->head + o];
		SfIdentity *id = sf_id_ptr(lane, handle);
		int64		ordinal;

		if ((o & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		if (map_get(seen, handle, &ordinal))
		{
			put_varint(&b, (uint64) ordinal + 1);
			continue;
		}
		sf_fp_insert(seen, (uint64) handle + 1, 0, (uint64) nids++);
		put_varint(&b, 0);
		put_varint(&b, ((uint64) id->event_id_len << 2) |
				   (id->foreign ? 2 : 0) | (id->late ? 1 : 0));
		appendBinaryStringInfo(&b, id->event_id, id->event_id_len);
		put_varint(&b, key_find(keys, nkeys, id->key));
		put_varint(&b, zigzag((int64) ((uint64) id->event_time - (uint64) prev_t)));
		put_varint(&b, zigzag(id->value));
		prev_t = id->event_time;
		if (md != NULL)
		{
			/* an own identity's arrival after the previous one's; a copy has none */
			const int64 *m = sf_id_measures(lane, id);

			if (!id->foreign)
			{
				put_varint(&b, zigzag((int64) ((uint64) m[0] - (uint64) prev_a)));
				prev_a = m[0];
			}
			for (int i = 1; i <= md->width; i++)
			{
				int64		from = i == 1 && md->nmeasures > 0 ? id->value : 0;

				put_varint(&b, zigzag((int64) ((uint64) m[i] - (uint64) from)));
			}
		}
	}
	map_free(seen);
	pfree(keys);
	return finish_snapshot(&b);
}

/*
 * What a lane's decode leaves for the head's checks: the offset of each
 * own identity's first delivery, in order
 */
typedef struct LaneOwn
{
	int64	   *offsets;
	int64		n;
} LaneOwn;

/*
 * Decode a lane snapshot into lane pi of h, which must be empty.  Checks
 * its own consistency; the head's decode checks it against the index.
 */
static void
lane_decode(SnapReader *r, SfHead *h, int pi, LaneOwn *own)
{
	SfPipeline *lane = h->lanes[pi];
	SfString  **keys;
	int64		nkeys;
	int64		n;
	uint32	   *ord2h;
	int64		nids = 0;
	int64		t = 0;
	int64		a = 0;
	const SfMeasuresDef *md = h->p->def.measures;
	int64	   *m = NULL;
	SfFingerprints *ids;

	sf_snap_check_def(r, &h->p->def, 3);
	if (md != NULL)
		m = palloc((1 + md->width) * sizeof(int64));
	if (get_u16(r) != pi)
		sf_snap_corrupt(r, "It is another lane's");
	if (lane->partitions[pi].consumed != -1)
		elog(ERROR, "streamforge: a lane is decoded twice");
	lane->offset_replays = (int64) get_varint(r);
	if (lane->offset_replays < 0)
		sf_snap_corrupt(r, "The offset replays are out of range");
	keys = get_keys(r, lane, &nkeys);
	n = get_count(r, 1);
	ord2h = palloc_extended(Max(n, 1) * sizeof(uint32), MCXT_ALLOC_HUGE);
	own->offsets = palloc_extended(Max(n, 1) * sizeof(int64), MCXT_ALLOC_HUGE);
	own->n = 0;
	/* the lane's event ids: an own one once, never also foreign */
	ids = sf_fp_create(CurrentMemoryContext, (uint64) Min(n, 1 << 20));
	for (int64 o = 0; o < n; o++)
	{
		uint64		ref = get_varint(r);
		uint64		lenflags;
		int			len;
		const char *eid;
		uint32		ki;
		int64		v;
		bool		foreign;
		uint64		fph;
		SfFpCursor	c;
		uint16		cl;
		uint64		cloc;

		if ((o & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		if (ref > 0)
		{
			if (ref > (uint64) nids)
				sf_snap_corrupt(r, "A delivery names no identity");
			sf_partition_append(lane, pi, ord2h[ref - 1]);
			continue;
		}
		lenflags = get_varint(r);
		if ((lenflags >> 2) < 1 || (lenflags >> 2) > MaxAllocSize)
			sf_snap_corrupt(r, "An identity is invalid");
		len = (int) (lenflags >> 2);
		foreign = (lenflags & 2) != 0;
		eid = get_raw(r, len);
		ki = get_key_index(r, nkeys);
		t = (int64) ((uint64) t + (uint64) unzigzag(get_varint(r)));
		v = unzigzag(get_varint(r));
		if (md != NULL)
		{
			m[0] = 0;
			if (!foreign)
			{
				a = (int64) ((uint64) a + (uint64) unzigzag(get_varint(r)));
				m[0] = a;
			}
			for (int i = 1; i <= md->width; i++)
				m[i] = unzigzag(get_varint(r));
			if (md->nmeasures > 0)
				m[1] = (int64) ((uint64) m[1] + (uint64) v);
			if (!sf_measures_valid(md, m + 1))
				sf_snap_corrupt(r, "An identity's measures are invalid");
		}
		fph = sf_fp_hash(eid, (uint32) len);
		sf_fp_start(&c, fph);
		while (sf_fp_next(ids, &c, &cl, &cloc))
		{
			SfIdentity *other = sf_id_ptr(lane, ord2h[cloc]);

			if (other->event_id_len == (uint32) len &&
				memcmp(other->event_id, eid, len) == 0 &&
				(!foreign || !other->foreign))
				sf_snap_corrupt(r, "An event id has two identities in a lane");
		}
		ord2h[nids] = sf_lane_add(lane, pi, eid, len, keys[ki]->data,
								  keys[ki]->len, t, v, (lenflags & 1) != 0,
								  foreign, m);
		sf_fp_insert(ids, fph, 0, (uint64) nids);
		nids++;
		if (!foreign)
			own->offsets[own->n++] = o;
	}
	pfree(ord2h);
	pfree(keys);
	if (m != NULL)
		pfree(m);
	pfree(ids->slots);
	pfree(ids);
	if (r->pos != r->len)
		sf_snap_corrupt(r, "Data follows the end");
}

/* ----------------------------------------------------------------
 * Head snapshot (version 4)
 * ----------------------------------------------------------------
 */

/* a fingerprint as the snapshot holds it */
typedef struct SnapFp
{
	uint64		hash;
	int64		offset;
	uint16		lane;
} SnapFp;

static int
snap_fp_cmp(const void *a, const void *b)
{
	const SnapFp *x = a;
	const SnapFp *y = b;

	if (x->lane != y->lane)
		return x->lane < y->lane ? -1 : 1;
	return (x->offset > y->offset) - (x->offset < y->offset);
}

/*
 * The snapshot of h's head (the file header has the format): clock,
 * buckets, seq and late rows, the fingerprint index with each id at the
 * offset of its first delivery, the lane table.  Every lane must be
 * loaded (in this step they always are) and no transaction open.
 */
bytea *
sf_head_snapshot_encode(SfHead *h)
{
	SfPipeline *p = h->p;
	const SfPipelineDef *def = &p->def;
	int			np = def->npartitions;
	StringInfoData b;
	SfString  **keys;
	int64		nkeys;
	SfRow	   *rows;
	int64		nrows;
	SnapFp	   *fps;
	int64		nfps = 0;
	SfFingerprints *first;		/* lane << 32 | handle -> first offset */
	int64	   *nown;
	int64	   *table;
	const SfMeasuresDef *md = def->measures;

	put_header(&b, SNAP_HEAD_VERSION);
	sf_snap_put_def(&b, def, 3);

	put_u8(&b, p->has_watermark);
	put_u64(&b, (uint64) p->watermark);
	for (int i = 0; i < np; i++)
	{
		put_u8(&b, p->partitions[i].has_progress);
		put_u64(&b, (uint64) p->partitions[i].progress);
		put_u8(&b, p->partitions[i].idle);
	}
	put_u64(&b, (uint64) p->seq);
	put_u64(&b, (uint64) p->late_forgotten);
	put_u64(&b, h->version);
	if (md != NULL)
		put_u64(&b, (uint64) p->arrivals);

	keys = sf_keys_array(p, &nkeys);
	put_keys(&b, keys, nkeys);

	put_u64(&b, (uint64) p->nlate);
	for (int64 k = 0; k < p->nlate; k++)
	{
		const SfLateEvent *l = &p->late[k];

		if ((k & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		put_varint(&b, (uint64) l->partition);
		put_varint(&b, (uint64) l->source_offset);
		put_varint(&b, zigzag(l->watermark));
		put_str(&b, l->event->event_id, l->event->event_id_len);
		put_varint(&b, key_find(keys, nkeys, l->event->key));
		put_varint(&b, zigzag(l->event->event_time));
		put_varint(&b, zigzag(l->event->value));
		if (md != NULL)
			put_ev_measures(&b, md, sf_id_measures(p, l->event), 0,
							l->event->value);
	}

	nrows = sf_collect_rows(p, false, &rows);
	put_u64(&b, (uint64) nrows);
	for (int64 k = 0; k < nrows; k++)
	{
		const SfRow *r = &rows[k];

		if ((k & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		put_u16(&b, (uint16) r->addr.window);
		put_u32(&b, (uint32) key_find(keys, nkeys, r->addr.key));
		put_u64(&b, (uint64) r->addr.start);
		put_u64(&b, (uint64) r->addr.end);
		put_u64(&b, (uint64) r->agg.count);
		put_u64(&b, (uint64) r->agg.min);
		put_u64(&b, (uint64) r->agg.max);
		put_u64(&b, (uint64) (uint128) r->agg.sum);
		put_u64(&b, (uint64) ((uint128) r->agg.sum >> 64));
		if (md != NULL)
			sf_snap3_put_bucket_measures(&b, md, &r->agg);
	}
	pfree(rows);
	pfree(keys);

	/* the index: a handle means nothing elsewhere, an offset does */
	first = map_create((int64) h->fp->n);
	nown = palloc0(Max(np, 1) * sizeof(int64));
	table = sf_head_lane_table(h);
	for (int i = 0; i < np; i++)
	{
		SfPipeline *lane = h->lanes[i];
		SfPartition *part = &lane->partitions[i];

		if (table[i] > part->consumed)
			elog(ERROR, "streamforge: a lane holds less than the head");
		for (int64 o = 0; o <= table[i]; o++)
		{
			uint32		handle = part->deliveries[part->head + o];
			uint64		key = ((uint64) i << 32) | handle;
			int64		seen;

			if ((o & 4095) == 0)
				CHECK_FOR_INTERRUPTS();
			if (sf_id_ptr(lane, handle)->foreign || map_get(first, key, &seen))
				continue;
			sf_fp_insert(first, key + 1, 0, (uint64) o);
			nown[i]++;
		}
	}
	fps = palloc_extended(Max(h->fp->n, 1) * sizeof(SnapFp), MCXT_ALLOC_HUGE);
	for (uint64 i = 0; i <= h->fp->mask; i++)
	{
		const SfFpSlot *slot = &h->fp->slots[i];
		uint64		key;

		if (slot->hash == 0)
			continue;
		fps[nfps].hash = slot->hash;
		fps[nfps].lane = (uint16) (slot->where >> 48);
		key = ((uint64) fps[nfps].lane << 32) | (slot->where & SF_FP_LOC_MAX);
		if (!map_get(first, key, &fps[nfps].offset))
			elog(ERROR, "streamforge: an indexed id is not in its lane");
		nfps++;
	}
	map_free(first);
	if (nfps > 1)
		qsort(fps, nfps, sizeof(SnapFp), snap_fp_cmp);
	put_u64(&b, (uint64) nfps);
	for (int64 k = 0; k < nfps; k++)
	{
		put_u64(&b, fps[k].hash);
		put_varint(&b, fps[k].lane);
		put_varint(&b, (uint64) fps[k].offset);
	}
	pfree(fps);

	for (int i = 0; i < np; i++)
	{
		put_varint(&b, zigzag(table[i]));
		put_varint(&b, (uint64) nown[i]);
	}
	pfree(nown);
	return finish_snapshot(&b);
}

typedef struct HeadDecode
{
	MemoryContext parent;
	const SfPipelineDef *def;
	const char *data;
	Size		len;
	const char *const *lanes;
	const Size *lane_lens;
	SfHead	   *h;
} HeadDecode;

static void
head_decode(HeadDecode *x, SnapReader *r)
{
	SfHead	   *h;
	SfPipeline *p;
	int			np = x->def->npartitions;
	SfString  **keys;
	int64		nkeys;
	int64		n;
	LaneOwn    *own;
	int64	   *nfps;
	const SfMeasuresDef *md = x->def->measures;

	sf_snap_check_def(r, x->def, 3);
	h = sf_head_create(x->parent, x->def);
	x->h = h;
	p = h->p;

	p->has_watermark = get_u8(r) != 0;
	p->watermark = (int64) get_u64(r);
	for (int i = 0; i < np; i++)
	{
		p->partitions[i].has_progress = get_u8(r) != 0;
		p->partitions[i].progress = (int64) get_u64(r);
		p->partitions[i].idle = get_u8(r) != 0;
	}
	p->seq = (int64) get_u64(r);
	p->late_forgotten = (int64) get_u64(r);
	h->version = get_u64(r);
	if (md != NULL)
		p->arrivals = (int64) get_u64(r);
	if (p->seq < 0 || p->late_forgotten < 0 || p->arrivals < 0)
		sf_snap_corrupt(r, "A counter is out of range");
	keys = get_keys(r, p, &nkeys);

	n = get_count(r, 7);
	for (int64 k = 0; k < n; k++)
	{
		int			pi = get_lane(r, np);
		uint64		off = get_varint(r);
		int64		wm = unzigzag(get_varint(r));
		int			len;
		const char *eid = get_str(r, &len, 1);
		uint32		ki = get_key_index(r, nkeys);
		int64		t = unzigzag(get_varint(r));
		int64		v = unzigzag(get_varint(r));

		if ((k & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		if (off > PG_INT64_MAX)
			sf_snap_corrupt(r, "A late row's offset is out of range");
		if (md != NULL)
		{
			int64	   *m = get_ev_measures(r, md, 0, v);

			if (m[0] < 1 || m[0] > p->arrivals)
				sf_snap_corrupt(r, "A late row's arrival is out of range");
			sf_late_append_forgotten(p, pi, (int64) off, eid, len,
									 keys[ki]->data, keys[ki]->len, t, v, wm);
			memcpy(sf_id_measures(p, p->late[p->nlate - 1].event), m,
				   (1 + md->width) * sizeof(int64));
			pfree(m);
			continue;
		}
		sf_late_append_forgotten(p, pi, (int64) off, eid, len, keys[ki]->data,
								 keys[ki]->len, t, v, wm);
	}

	sf_snap_decode_buckets(r, p, keys, nkeys);
	pfree(keys);

	/* the lanes, then the index over them */
	own = palloc0(Max(np, 1) * sizeof(LaneOwn));
	for (int i = 0; i < np; i++)
	{
		SnapReader	lr;

		open_snapshot(&lr, x->def->name, x->lanes[i], x->lane_lens[i],
					  SNAP_LANE_VERSION);
		lane_decode(&lr, h, i, &own[i]);
	}
	nfps = palloc0(Max(np, 1) * sizeof(int64));
	n = get_count(r, 10);
	for (int64 k = 0; k < n; k++)
	{
		uint64		hash = get_u64(r);
		int			pi = get_lane(r, np);
		uint64		off = get_varint(r);

		if ((k & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		if (hash == 0 || off > PG_INT64_MAX)
			sf_snap_corrupt(r, "An indexed id is invalid");
		sf_head_index_offset(h, pi, (int64) off, hash);
		nfps[pi]++;
	}

	/*
	 * The lane table.  A lane may hold more than the head (its rows are
	 * written at call time: the head entries after this snapshot index
	 * the rest); every own identity up to the table's offset is indexed,
	 * once (sf_head_index_offset refused a second).
	 */
	h->lane_consumed = MemoryContextAlloc(h->cxt, Max(np, 1) * sizeof(int64));
	for (int i = 0; i < np; i++)
	{
		int64		c = unzigzag(get_varint(r));
		uint64		nown = get_varint(r);
		int64		upto = 0;

		if (c < -1 || c > h->lanes[i]->partitions[i].consumed)
			sf_snap_corrupt(r, "A lane holds less than the head");
		while (upto < own[i].n && own[i].offsets[upto] <= c)
			upto++;
		if (nown != (uint64) nfps[i] || nfps[i] != upto)
			sf_snap_corrupt(r, "A lane's identities are not the index's");
		h->lane_consumed[i] = c;
	}
	if (r->pos != r->len)
		sf_snap_corrupt(r, "Data follows the end");

	/* a foreign copy up to the table's offset: another lane's indexed id */
	for (int i = 0; i < np; i++)
	{
		SfPipeline *lane = h->lanes[i];
		SfPartition *part = &lane->partitions[i];

		for (int64 o = 0; o <= h->lane_consumed[i]; o++)
		{
			SfIdentity *id = sf_id_ptr(lane, part->deliveries[part->head + o]);
			SfFpCursor	c;
			uint16		fl;
			uint64		loc;
			bool		found = false;

			if ((o & 4095) == 0)
				CHECK_FOR_INTERRUPTS();
			if (!id->foreign)
			{
				/* an own identity the head counted: one of its arrivals */
				if (md != NULL && (sf_id_measures(lane, id)[0] < 1 ||
								   sf_id_measures(lane, id)[0] > p->arrivals))
					sf_snap_corrupt(r, "An identity's arrival is out of range");
				continue;
			}
			sf_fp_start(&c, sf_fp_hash(id->event_id, id->event_id_len));
			while (!found && sf_fp_next(h->fp, &c, &fl, &loc))
			{
				SfIdentity *first = sf_id_ptr(h->lanes[fl], (uint32) loc);

				found = fl != i && first->event_id_len == id->event_id_len &&
					memcmp(first->event_id, id->event_id,
						   id->event_id_len) == 0 &&
					first->event_time == id->event_time &&
					first->value == id->value && first->key->len == id->key->len &&
					memcmp(first->key->data, id->key->data, id->key->len) == 0 &&
					(md == NULL ||
					 memcmp(sf_id_measures(h->lanes[fl], first) + 1,
							sf_id_measures(lane, id) + 1,
							md->width * sizeof(int64)) == 0);
			}
			if (!found)
				sf_snap_corrupt(r, "A duplicate in a lane has no first delivery");
		}
	}

	/*
	 * A late row: the event its lane delivered at its offset, whose first
	 * delivery (the slot's own identity, or for a foreign copy the indexed
	 * one) is late and holds the row's copy, measures and arrival included
	 */
	for (int64 k = 0; k < p->nlate; k++)
	{
		const SfLateEvent *le = &p->late[k];
		const SfIdentity *ev = le->event;
		SfPipeline *lane = h->lanes[le->partition];
		SfPartition *part = &lane->partitions[le->partition];
		SfIdentity *id;

		if ((k & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		if (le->source_offset > h->lane_consumed[le->partition])
			sf_snap_corrupt(r, "A late row is not in its lane");
		id = sf_id_ptr(lane, part->deliveries[part->head + le->source_offset]);
		if (id->foreign)
		{
			SfFpCursor	c;
			uint16		fl;
			uint64		loc;
			SfIdentity *first = NULL;

			sf_fp_start(&c, sf_fp_hash(id->event_id, id->event_id_len));
			while (first == NULL && sf_fp_next(h->fp, &c, &fl, &loc))
			{
				first = sf_id_ptr(h->lanes[fl], (uint32) loc);
				lane = h->lanes[fl];
				if (first->event_id_len != id->event_id_len ||
					memcmp(first->event_id, id->event_id,
						   id->event_id_len) != 0)
					first = NULL;
			}
			if (first == NULL)
				sf_snap_corrupt(r, "A late row's event has no first delivery");
			id = first;
		}
		if (!id->late || id->event_id_len != ev->event_id_len ||
			memcmp(id->event_id, ev->event_id, ev->event_id_len) != 0 ||
			id->event_time != ev->event_time || id->value != ev->value ||
			id->key->len != ev->key->len ||
			memcmp(id->key->data, ev->key->data, ev->key->len) != 0 ||
			(md != NULL &&
			 memcmp(sf_id_measures(lane, id), sf_id_measures(p, ev),
					(1 + md->width) * sizeof(int64)) != 0))
			sf_snap_corrupt(r, "A late row is not its lane's late event");
	}
}

static void
head_decode_all(void *arg)
{
	HeadDecode *x = (HeadDecode *) arg;
	SnapReader	r;

	open_snapshot(&r, x->def->name, x->data, x->len, SNAP_HEAD_VERSION);
	PG_TRY();
	{
		head_decode(x, &r);
	}
	PG_CATCH();
	{
		if (x->h != NULL)
			MemoryContextDelete(x->h->cxt);
		x->h = NULL;
		PG_RE_THROW();
	}
	PG_END_TRY();
}

/*
 * The head (a new context under parent) that the head snapshot data and
 * the snapshots of its lanes (lanes[i], lane_lens[i] for each partition)
 * hold, for a pipeline defined by def.  A lane may be newer than the head
 * (the head entries after the snapshot then follow); damaged bytes raise
 * XX001 and leave nothing behind.
 */
SfHead *
sf_head_snapshot_decode(MemoryContext parent, const SfPipelineDef *def,
						const char *data, Size len,
						const char *const *lanes, const Size *lane_lens)
{
	HeadDecode	x;

	x.parent = parent;
	x.def = def;
	x.data = data;
	x.len = len;
	x.lanes = lanes;
	x.lane_lens = lane_lens;
	x.h = NULL;
	sf_pc_as_corrupt(head_decode_all, &x, "head snapshot", def->name);
	return x.h;
}

/* ----------------------------------------------------------------
 * Checkpoint (design 6.7)
 * ----------------------------------------------------------------
 */

/*
 * The canonical checkpoint of h's head and lanes: the serial pipeline's of
 * the same history (sf_head_merge, then codec.c's encoder).  No
 * transaction may be open.
 */
bytea *
sf_head_checkpoint_encode(SfHead *h)
{
	SfPipeline *m = sf_head_merge(CurrentMemoryContext, h);
	bytea	   *result = sf_checkpoint_encode(m);

	sf_pipeline_free(m);
	return result;
}

/*
 * The head and lanes (a new context under parent) that a checkpoint holds,
 * for restore() of a parallel pipeline: validated as every restore
 * (sf_checkpoint_restore: SF003, 54000), then split by partition
 * (sf_head_split).
 */
SfHead *
sf_head_checkpoint_restore(MemoryContext parent, const SfPipelineDef *def,
						   const char *data, Size len)
{
	SfPipeline *serial;
	SfHead	   *h;

	serial = sf_checkpoint_restore(CurrentMemoryContext, def, data, len);
	h = sf_head_split(parent, serial);
	sf_pipeline_free(serial);
	return h;
}
