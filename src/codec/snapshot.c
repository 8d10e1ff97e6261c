/*-------------------------------------------------------------------------
 *
 * snapshot.c
 *	  The persisted snapshot of a pipeline: a binary image that loads
 *	  without a parse and without re-validation.
 *
 * The snapshot column of streamforge.pipeline is written only by
 * persist/persist.c, always with sf_snapshot_encode: at compaction, at
 * restore (the restored state, re-encoded) and at every definition change
 * (sf_persist_redefine, which decodes the new snapshot once before storing
 * it, so that a state no backend can load is never committed); a new
 * pipeline has none.  It lives in a table nobody else may write and is
 * read back by the same code (sf_snapshot_decode, when a backend rebuilds
 * its cache entry); so it need not be the canonical checkpoint, whose
 * decoder parses JSON, re-derives every live bucket from the identities and
 * re-encodes the whole state to check it (docs/semantics.md, Checkpoints).
 *
 * Every pipeline is stored in the binary form below, which a cold load
 * turns into the engine's structures with little more than copies and one
 * hash insert per identity; after a definition change too, so that it
 * loads as fast as after a compaction.  Until 0.4.0 a pipeline with
 * retention or measures, or whose partitions no longer start at offset 0
 * (a retention removed later leaves them so), kept the canonical
 * checkpoint as its snapshot, whose decode parses, re-derives and
 * re-encodes (5-10 us an identity: a measures pipeline of 1M events took
 * 9-11 s to load; issue 39); they now get version 3.  The decoder takes
 * every version and a checkpoint (what 0.1.0 - 0.3.0 stored for them),
 * so nothing needs converting: the next compaction rewrites it.
 *
 * Format (integers little-endian):
 *	magic "SFSNAPB\n", uint32 version (2; 1 still loads), uint32 CRC-32 of
 *	the payload, uint64 payload length, then the payload:
 *	  definition (compared with the pipeline's: equivalent or refused),
 *	  clock, seq, late_forgotten, interned keys, identities in handle order,
 *	  each partition's delivery handles, late rows, live buckets.
 *	Version 1 (0.2.0 - 0.3.0) stores an identity as fixed-width fields
 *	(uint32 handle and key index, int64 time and value, uint8 flags, a
 *	uint32-prefixed event_id) and the delivery handles as uint32 arrays.
 *	Version 2 (issue 39: a third of the bytes, and the cold load is mostly
 *	the fetch of the row and the identities' re-allocation) stores an
 *	identity as LEB128 varints: handle minus the previous handle, key
 *	index, time minus the previous time and value (both zigzag),
 *	length << 1 | late, then the event_id; and each delivery as the
 *	zigzag difference from the previous handle.  The other sections are
 *	the same in both.
 *	Version 3 (0.4.0: retention, measures, or partitions past offset 0;
 *	a pipeline with none of them keeps version 2's bytes; snapshot_v3.c)
 *	names an identity by its ordinal, its position in handle order, not by
 *	its handle: with retention the store has holes that a re-allocation
 *	does not reproduce, so the decoder maps ordinals to the handles it
 *	gets.  After the windows the definition adds the writers mode and,
 *	with measures, the aggregates' and measures' spellings (compared with
 *	the pipeline's); after late_forgotten, the arrivals counter; the keys
 *	are in byte order (one state, one snapshot); an identity (version 2's
 *	varints without the handle) is followed by its measure words (the
 *	arrival as the difference from the previous identity's, the measures,
 *	the first as the difference from the value, the NULL mask: zigzag
 *	varints); then each partition's first held
 *	offset and its slots from there as ordinals plus one (0: forgotten) in
 *	differences; then the late rows (partition, offset, watermark, and the
 *	identity's ordinal, or for an identity retention forgot its event_id,
 *	key, time and value, as the checkpoint keeps them); a live bucket is
 *	followed by its aggregates' fixed words and each variable-size state's
 *	words (zigzag varints, a count first).
 * Identities are re-allocated in handle order into an empty store, which
 * gives each the handle it had (the store's layout is a function of the
 * allocation sequence); the decoder checks that it does, so the delivery
 * handles are copied as they are, after a check against a bitmap of the
 * valid handles.  The CRC catches corruption; bounds checks on every read
 * keep a damaged snapshot from crashing the backend (ERRCODE_DATA_CORRUPTED).
 *
 * Memory: the encoder only reads p, and returns a bytea palloc'd in the
 * caller's CurrentMemoryContext.  The decoder builds the pipeline in its
 * own context under the given parent (sf_pipeline_create), and frees it
 * before an error propagates; its temporary arrays (the stored definition,
 * the key table, the handle bitmap) are palloc'd in CurrentMemoryContext.
 * Called only by persist/persist.c.  Nothing here keeps state between
 * calls.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/codec/snapshot.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <zlib.h>

#include "miscadmin.h"
#include "codec/snapshot_int.h"

#define SNAP_MAGIC		"SFSNAPB\n"
#define SNAP_VERSION	2		/* written without retention and measures (3
								 * with them: sf_snapshot_version); 1 (0.2.0 -
								 * 0.3.0) still loads */
#define SNAP_HEADER		24

/* ----------------------------------------------------------------
 * Writer
 * ----------------------------------------------------------------
 */
static int
ptr_cmp(const void *a, const void *b)
{
	uintptr_t	x = (uintptr_t) *(void *const *) a;
	uintptr_t	y = (uintptr_t) *(void *const *) b;

	return (x > y) - (x < y);
}

static int
u32_cmp(const void *a, const void *b)
{
	uint32		x = *(const uint32 *) a;
	uint32		y = *(const uint32 *) b;

	return (x > y) - (x < y);
}

/* Order of two keys (indexes into the SfString * array arg) by their bytes */
static int
key_bytes_cmp(const void *a, const void *b, void *arg)
{
	SfString  **keys = (SfString **) arg;
	const SfString *x = keys[*(const int64 *) a];
	const SfString *y = keys[*(const int64 *) b];
	int			c = memcmp(x->data, y->data, Min(x->len, y->len));

	if (c != 0)
		return c;
	return (x->len > y->len) - (x->len < y->len);
}

/* Index of an interned key in keys (sorted by address) */
static uint32
key_index(SfString **keys, int64 n, const SfString *key)
{
	int64		lo = 0,
				hi = n - 1;

	while (lo <= hi)
	{
		int64		mid = lo + (hi - lo) / 2;

		if (keys[mid] == key)
			return (uint32) mid;
		if ((uintptr_t) keys[mid] < (uintptr_t) key)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	elog(ERROR, "streamforge: key not interned");
	return 0;					/* keep compiler quiet */
}

/*
 * The interned keys (sorted by address, as key_index finds them): version 2
 * writes them in that order; version 3 by their bytes, so that one state
 * always gives the same snapshot, and returns each key's place in that
 * order (palloc'd; NULL for version 2)
 */
static uint32 *
put_keys(StringInfo b, SfString **keys, int64 nkeys, uint32 version)
{
	int64	   *perm;
	uint32	   *rank;

	put_u64(b, (uint64) nkeys);
	if (version < 3)
	{
		for (int64 k = 0; k < nkeys; k++)
		{
			if ((k & 4095) == 0)
				CHECK_FOR_INTERRUPTS();
			put_bytes(b, keys[k]->data, keys[k]->len);
		}
		return NULL;
	}
	perm = palloc_extended(Max(nkeys, 1) * sizeof(int64), MCXT_ALLOC_HUGE);
	rank = palloc_extended(Max(nkeys, 1) * sizeof(uint32), MCXT_ALLOC_HUGE);
	for (int64 k = 0; k < nkeys; k++)
		perm[k] = k;
	if (nkeys > 1)
		qsort_arg(perm, nkeys, sizeof(int64), key_bytes_cmp, keys);
	for (int64 k = 0; k < nkeys; k++)
	{
		if ((k & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		rank[perm[k]] = (uint32) k;
		put_bytes(b, keys[perm[k]]->data, keys[perm[k]]->len);
	}
	pfree(perm);
	return rank;
}

/* Version 2's delivery history: each handle as the difference from the one before */
static void
put_deliveries_v2(StringInfo b, SfPipeline *p)
{
	for (int i = 0; i < p->def.npartitions; i++)
	{
		const SfPartition *part = &p->partitions[i];
		int64		n = part->consumed + 1;
		int64		prev = 0;

		put_u64(b, (uint64) n);
		for (int64 o = 0; o < n; o++)
		{
			if ((o & 65535) == 0)
				CHECK_FOR_INTERRUPTS();
			put_varint(b, zigzag((int64) part->deliveries[o] - prev));
			prev = part->deliveries[o];
		}
	}
}

/* Version 2's late rows, each naming its identity by handle */
static void
put_late_v2(StringInfo b, SfPipeline *p)
{
	put_u64(b, (uint64) p->nlate);
	for (int64 k = 0; k < p->nlate; k++)
	{
		const SfLateEvent *l = &p->late[k];
		uint32		h;

		if ((k & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		if (!sf_idtable_lookup(p, l->event->event_id, l->event->event_id_len,
							   l->event->hash, &h))
			elog(ERROR, "streamforge: late event without identity");
		put_u32(b, (uint32) l->partition);
		put_u64(b, (uint64) l->source_offset);
		put_u32(b, h);
		put_u64(b, (uint64) l->watermark);
	}
}

/*
 * The definition section (versions 1 and 2; 3 adds sf_snap3_put_def's), for
 * the serial snapshot and the parallel ones (parallel_codec.c)
 */
void
sf_snap_put_def(StringInfo b, const SfPipelineDef *def, uint32 version)
{
	put_u64(b, (uint64) def->lateness);
	put_u8(b, def->has_retention);
	put_u64(b, (uint64) def->retention);
	put_u32(b, def->npartitions);
	for (int i = 0; i < def->npartitions; i++)
		put_bytes(b, def->partitions[i], strlen(def->partitions[i]));
	put_u32(b, def->nwindows);
	for (int i = 0; i < def->nwindows; i++)
	{
		const SfWindowDef *w = &def->windows[i];

		put_bytes(b, w->name, strlen(w->name));
		put_u8(b, (uint8) w->kind);
		put_u64(b, (uint64) w->size);
		put_u64(b, (uint64) w->step);
		put_u64(b, (uint64) w->gap);
	}
	if (version >= 3)
		sf_snap3_put_def(b, def);
}

static bytea *
snapshot_encode_binary(SfPipeline *p, uint32 version)
{
	const SfPipelineDef *def = &p->def;
	StringInfoData b;
	SfString  **keys;
	int64		nkeys;
	uint32	   *handles;
	int64		nids = 0;
	uint64		pos = 0;
	SfIdentity *id;
	SfRow	   *rows;
	int64		nrows;
	bytea	   *result;
	uint32		crc;
	uint64		len;
	uint32	   *rank = NULL;
	uint32		ki;

	initStringInfo(&b);
	appendBinaryStringInfo(&b, SNAP_MAGIC, 8);
	put_u32(&b, version);
	put_u32(&b, 0);				/* CRC, below */
	put_u64(&b, 0);				/* length, below */

	/* definition */
	sf_snap_put_def(&b, def, version);

	/* clock and counters */
	put_u8(&b, p->has_watermark);
	put_u64(&b, (uint64) p->watermark);
	for (int i = 0; i < def->npartitions; i++)
	{
		put_u8(&b, p->partitions[i].has_progress);
		put_u64(&b, (uint64) p->partitions[i].progress);
		put_u8(&b, p->partitions[i].idle);
	}
	put_u64(&b, (uint64) p->seq);
	put_u64(&b, (uint64) p->late_forgotten);
	if (version >= 3)
		put_u64(&b, (uint64) p->arrivals);

	/* keys (rank: their places in version 3's byte order; NULL for 2) */
	keys = sf_keys_array(p, &nkeys);
	if (nkeys > 1)
		qsort(keys, nkeys, sizeof(SfString *), ptr_cmp);
	rank = put_keys(&b, keys, nkeys, version);

	/* identities, in handle order */
	handles = palloc_extended(Max(p->nidentities, 1) * sizeof(uint32),
							  MCXT_ALLOC_HUGE);
	while ((id = sf_idtable_next_handle(p, &pos, &handles[nids])) != NULL)
	{
		if (++nids > p->nidentities)
			elog(ERROR, "streamforge: identity count mismatch");
		if ((nids & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	if (nids != p->nidentities)
		elog(ERROR, "streamforge: identity count mismatch");
	if (nids > 1)
		qsort(handles, nids, sizeof(uint32), u32_cmp);
	put_u64(&b, (uint64) nids);
	{
		uint32		prev_h = 0;
		int64		prev_t = 0;
		uint32		prev_key = 0;
		const SfString *prev_keyp = NULL;
		int64		prev_arrival = 0;

		for (int64 k = 0; k < nids; k++)
		{
			id = sf_id_ptr(p, handles[k]);
			if ((k & 4095) == 0)
				CHECK_FOR_INTERRUPTS();
			/* the key's index: one search per run of the same key */
			if (id->key != prev_keyp)
			{
				prev_key = key_index(keys, nkeys, id->key);
				if (rank != NULL)
					prev_key = rank[prev_key];
				prev_keyp = id->key;
			}
			if (version < 3)
				put_varint(&b, handles[k] - prev_h);
			put_varint(&b, prev_key);
			put_varint(&b, zigzag((int64) ((uint64) id->event_time - (uint64) prev_t)));
			put_varint(&b, zigzag(id->value));
			put_varint(&b, ((uint64) id->event_id_len << 1) | (id->late ? 1 : 0));
			appendBinaryStringInfo(&b, id->event_id, id->event_id_len);
			if (version >= 3 && def->measures != NULL)
				sf_snap3_put_id_measures(&b, p, id, &prev_arrival);
			prev_h = handles[k];
			prev_t = id->event_time;
		}
	}

	if (version >= 3)
	{
		sf_snap3_put_deliveries(&b, p, handles, nids);
		sf_snap3_put_late(&b, p, handles, nids);
	}
	else
	{
		put_deliveries_v2(&b, p);
		put_late_v2(&b, p);
	}
	pfree(handles);

	/* live buckets */
	nrows = sf_collect_rows(p, false, &rows);
	put_u64(&b, (uint64) nrows);
	for (int64 k = 0; k < nrows; k++)
	{
		const SfRow *r = &rows[k];

		if ((k & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		put_u16(&b, (uint16) r->addr.window);
		ki = key_index(keys, nkeys, r->addr.key);
		put_u32(&b, rank != NULL ? rank[ki] : ki);
		put_u64(&b, (uint64) r->addr.start);
		put_u64(&b, (uint64) r->addr.end);
		put_u64(&b, (uint64) r->agg.count);
		put_u64(&b, (uint64) r->agg.min);
		put_u64(&b, (uint64) r->agg.max);
		put_u64(&b, (uint64) (uint128) r->agg.sum);
		put_u64(&b, (uint64) ((uint128) r->agg.sum >> 64));
		if (version >= 3 && def->measures != NULL)
			sf_snap3_put_bucket_measures(&b, def->measures, &r->agg);
	}
	pfree(rows);
	pfree(keys);
	if (rank != NULL)
		pfree(rank);

	/* header: CRC and length of the payload */
	len = b.len - SNAP_HEADER;
	crc = crc32(0L, Z_NULL, 0);
	for (uint64 off = 0; off < len;)
	{
		uInt		chunk = (uInt) Min(len - off, (uint64) 1 << 30);

		crc = crc32(crc, (const Bytef *) b.data + SNAP_HEADER + off, chunk);
		off += chunk;
	}
	crc = to_le32(crc);
	memcpy(b.data + 12, &crc, 4);
	len = to_le64(len);
	memcpy(b.data + 16, &len, 8);

	/* a StringInfo holds up to 1 GB - 2, a bytea 1 GB - 1 with its header */
	if ((Size) b.len > MaxAllocSize - VARHDRSZ)
		ereport(ERROR,
				errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				errmsg("snapshot too large"),
				errdetail("The snapshot needs %d bytes, the maximum is %zu.",
						  b.len, (Size) (MaxAllocSize - VARHDRSZ)));
	result = palloc_extended(VARHDRSZ + b.len, MCXT_ALLOC_HUGE);
	SET_VARSIZE(result, VARHDRSZ + b.len);
	memcpy(VARDATA(result), b.data, b.len);
	pfree(b.data);
	return result;
}

/*
 * sf_snapshot_encode
 *		The bytes persist.c stores as p's snapshot: binary without
 *		retention, the canonical checkpoint with it.
 *
 * Size bounds (54000 past them; compaction then journals instead): a
 * checkpoint document is bounded by streamforge.max_checkpoint_size like
 * every checkpoint (sf_checkpoint_encode), so that a snapshot is never a
 * checkpoint that restore would refuse.  The binary form only by what one
 * bytea holds (1 GB): it never reaches restore or inspect_checkpoint, and
 * nobody but this file writes it, so the setting, which bounds what
 * untrusted input may make a backend inflate, has nothing to guard there.
 */
bytea *
sf_snapshot_encode(SfPipeline *p)
{
	return snapshot_encode_binary(p, sf_snapshot_version(p));
}

/*
 * sf_snapshot_version
 *		The binary format sf_snapshot_encode writes for p: 2 (0.2.0 -
 *		0.3.0's bytes) for a pipeline without retention or measures whose
 *		partitions start at offset 0 and hold every delivery's event, 3 for
 *		the others (until 0.4.0 they kept the canonical checkpoint as their
 *		snapshot; an offset whose event a recompute took out is 0 in
 *		version 3 only).
 */
uint32
sf_snapshot_version(const SfPipeline *p)
{
	if (p->def.has_retention || p->def.measures != NULL ||
		p->removed_offsets > 0)
		return 3;
	for (int i = 0; i < p->def.npartitions; i++)
		if (p->partitions[i].base != 0 || p->partitions[i].head != 0)
			return 3;
	return SNAP_VERSION;
}

/* ----------------------------------------------------------------
 * Reader
 * ----------------------------------------------------------------
 */
static void
read_name(SnapReader *r, char *dst)
{
	uint32		len;
	const char *s = get_bytes(r, &len);

	if (len < 1 || len > SF_NAME_MAX || memchr(s, '\0', len) != NULL)
		sf_snap_corrupt(r, "A name is invalid");
	memcpy(dst, s, len);
	dst[len] = '\0';
}

/* The bitmap of the valid identity handles */
typedef struct HandleSet
{
	uint8	   *bits;
	Size		nbytes;
} HandleSet;

static inline void
handle_set_add(HandleSet *v, uint32 h)
{
	if ((Size) (h >> 3) >= v->nbytes)
	{
		Size		newn = Max((Size) (h >> 3) + 1, v->nbytes * 2);

		v->bits = v->bits ? repalloc_huge(v->bits, newn) :
			palloc_extended(newn, MCXT_ALLOC_HUGE);
		memset(v->bits + v->nbytes, 0, newn - v->nbytes);
		v->nbytes = newn;
	}
	v->bits[h >> 3] |= 1 << (h & 7);
}

static inline bool
handle_set_has(const HandleSet *v, uint32 h)
{
	return (Size) (h >> 3) < v->nbytes && (v->bits[h >> 3] & (1 << (h & 7)));
}

/*
 * Version 1 identities: fixed-width fields, each with its handle; the
 * delivery history as arrays of uint32 handles.
 */
static void
decode_identities_v1(SnapReader *r, SfPipeline *p, SfString **keys,
					 int64 nkeys, HandleSet *valid)
{
	int64		n = get_count(r, 29);

	for (int64 k = 0; k < n; k++)
	{
		uint32		h = get_u32(r);
		uint32		ki = get_u32(r);
		int64		t = (int64) get_u64(r);
		int64		v = (int64) get_u64(r);
		uint8		flags = get_u8(r);
		uint32		len;
		const char *eid = get_bytes(r, &len);
		uint32		got;

		if ((k & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		if (ki >= nkeys || len < 1 || len > MaxAllocSize || flags > 1)
			sf_snap_corrupt(r, "An identity is invalid");
		if (sf_idtable_lookup(p, eid, (int) len, sf_hash_event_id(eid, (int) len),
							  NULL) != NULL)
			sf_snap_corrupt(r, "An event_id has two identities");
		(void) sf_identity_add(p, eid, (int) len, keys[ki], t, v, flags == 1,
							   &got);
		if (got != h)
			sf_snap_corrupt(r, "An identity does not get its handle back");
		handle_set_add(valid, h);
	}
}

static void
decode_deliveries_v1(SnapReader *r, SfPipeline *p, const HandleSet *valid)
{
	for (int i = 0; i < p->def.npartitions; i++)
	{
		SfPartition *part = &p->partitions[i];
		const char *raw;
		int64		n = get_count(r, 4);

		if (n == 0)
			continue;
		raw = get_raw(r, n * sizeof(uint32));
		sf_partition_alloc(p, i, n);
		memcpy(part->deliveries, raw, n * sizeof(uint32));
		for (int64 o = 0; o < n; o++)
		{
			uint32		h = to_le32(part->deliveries[o]);

			if ((o & 65535) == 0)
				CHECK_FOR_INTERRUPTS();
			if (!handle_set_has(valid, h))
				sf_snap_corrupt(r, "A delivery names no identity");
			part->deliveries[o] = h;
		}
		part->consumed = n - 1;
		p->ndeliveries += n;
	}
}

/*
 * Version 2 and 3 identities: varints (time and value as differences),
 * read ahead in groups so that the table slot of each is prefetched before
 * it is inserted; the table is sized once for all of them.  Version 2
 * names each by its handle, which must come back (re-allocated in handle
 * order into an empty store: valid collects them); version 3 by its
 * ordinal, mapped to the handle it gets (returned, palloc'd), followed by
 * its measure words.
 */
static uint32 *
decode_identities(SnapReader *r, SfPipeline *p, SfString **keys, int64 nkeys,
				  uint32 version, HandleSet *valid, int64 *nids)
{
	const SfMeasuresDef *md = version >= 3 ? p->def.measures : NULL;
	int			nw = md != NULL ? 1 + md->width : 0;

	/* at least a byte per varint (4, and the handle in 2) and an event_id */
	int64		n = get_count(r, version >= 3 ? 5 + nw : 6);
	uint64		h = 0;
	int64		t = 0;
	int64		arrival = 0;
	PendingId	g[ID_GROUP];
	int64	   *gm = nw > 0 ? palloc(ID_GROUP * nw * sizeof(int64)) : NULL;
	uint32	   *ord2h = NULL;

	if (version >= 3)
		ord2h = palloc_extended(Max(n, 1) * sizeof(uint32), MCXT_ALLOC_HUGE);
	sf_idtable_reserve(p, (uint64) n);
	for (int64 k = 0; k < n;)
	{
		int			m = (int) Min(n - k, ID_GROUP);

		CHECK_FOR_INTERRUPTS();
		for (int j = 0; j < m; j++)
		{
			PendingId  *e = &g[j];

			if (version < 3)
				h += get_varint(r);
			get_identity(r, e, &t, nkeys, h > PG_UINT32_MAX);
			e->h = (uint32) h;
			if (nw > 0)
				sf_snap3_get_id_measures(r, md, e->v, &arrival, &gm[j * nw]);
			sf_idtable_prefetch_hash(p, e->hash);
		}
		for (int j = 0; j < m; j++)
		{
			PendingId  *e = &g[j];
			SfIdentity *id;
			uint32		got;

			if (sf_idtable_lookup(p, e->eid, (int) e->len, e->hash, NULL) != NULL)
				sf_snap_corrupt(r, "An event_id has two identities");
			id = sf_identity_add_hash(p, e->eid, (int) e->len, e->hash,
									  keys[e->ki], e->t, e->v, e->late, &got);
			if (ord2h != NULL)
				ord2h[k + j] = got;
			else
			{
				if (got != e->h)
					sf_snap_corrupt(r, "An identity does not get its handle back");
				handle_set_add(valid, e->h);
			}
			if (nw > 0)
				memcpy(sf_id_measures(p, id), &gm[j * nw], nw * sizeof(int64));
		}
		k += m;
	}
	if (gm != NULL)
		pfree(gm);
	*nids = n;
	return ord2h;
}

static void
decode_deliveries_v2(SnapReader *r, SfPipeline *p, const HandleSet *valid)
{
	for (int i = 0; i < p->def.npartitions; i++)
	{
		SfPartition *part = &p->partitions[i];
		int64		n = get_count(r, 1);
		int64		h = 0;

		if (n == 0)
			continue;
		sf_partition_alloc(p, i, n);
		for (int64 o = 0; o < n; o++)
		{
			if ((o & 65535) == 0)
				CHECK_FOR_INTERRUPTS();
			h = (int64) ((uint64) h + (uint64) unzigzag(get_varint(r)));
			if (h < 0 || h > PG_UINT32_MAX || !handle_set_has(valid, (uint32) h))
				sf_snap_corrupt(r, "A delivery names no identity");
			part->deliveries[o] = (uint32) h;
		}
		part->consumed = n - 1;
		p->ndeliveries += n;
	}
}

/* Version 1 and 2 late rows, each naming its identity by handle */
static void
decode_late_v2(SnapReader *r, SfPipeline *p, const HandleSet *valid)
{
	int64		n = get_count(r, 24);

	for (int64 k = 0; k < n; k++)
	{
		uint32		pi = get_u32(r);
		int64		off = (int64) get_u64(r);
		uint32		h = get_u32(r);
		int64		wm = (int64) get_u64(r);

		if ((k & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		if (pi >= (uint32) p->def.npartitions || off < 0 ||
			off > p->partitions[pi].consumed || !handle_set_has(valid, h))
			sf_snap_corrupt(r, "A late event is invalid");
		sf_late_append(p, (int) pi, off, sf_id_ptr(p, h), wm);
	}
}

/*
 * Read the definition section and refuse (XX001) a definition that is not
 * equivalent to target's
 */
void
sf_snap_check_def(SnapReader *r, const SfPipelineDef *target, uint32 version)
{
	SfPipelineDef defdata;
	SfPipelineDef *def = &defdata;

	memset(def, 0, sizeof(SfPipelineDef));
	strlcpy(def->name, target->name, sizeof(def->name));
	def->lateness = (int64) get_u64(r);
	def->has_retention = get_u8(r) != 0;
	def->retention = (int64) get_u64(r);
	def->npartitions = (int) get_u32(r);
	if (def->npartitions < 1 || def->npartitions > PG_UINT16_MAX)
		sf_snap_corrupt(r, "The number of partitions is out of range");
	def->partitions = palloc0(def->npartitions * sizeof(def->partitions[0]));
	for (int i = 0; i < def->npartitions; i++)
		read_name(r, def->partitions[i]);
	def->nwindows = (int) get_u32(r);
	if (def->nwindows < 1 || def->nwindows > PG_UINT16_MAX)
		sf_snap_corrupt(r, "The number of windows is out of range");
	def->windows = palloc0(def->nwindows * sizeof(SfWindowDef));
	for (int i = 0; i < def->nwindows; i++)
	{
		SfWindowDef *w = &def->windows[i];

		read_name(r, w->name);
		w->kind = (SfWindowKind) get_u8(r);
		w->size = (int64) get_u64(r);
		w->step = (int64) get_u64(r);
		w->gap = (int64) get_u64(r);
	}
	if (version >= 3)
		sf_snap3_read_def(r, def, target);
	if (!sf_def_equivalent(def, target))
		sf_snap_corrupt(r, "Its definition is not the pipeline's");
}

/*
 * sf_snap_decode_buckets
 *		The live buckets of a snapshot (every version of the serial one,
 *		and the head snapshot of a parallel pipeline): a count, then each
 *		bucket's window, key index, start, end, count, min, max and sum, and
 *		a measures pipeline's words; restored into p.  A bucket must be
 *		what a checkpoint may hold (sf_snap_check_agg): a forged one would
 *		reach the engine's arithmetic.
 */
void
sf_snap_decode_buckets(SnapReader *r, SfPipeline *p, SfString **keys,
					   int64 nkeys)
{
	const SfMeasuresDef *md = p->def.measures;
	int64		n = get_count(r, 62);
	int64	   *ext = NULL;
	MemoryContext scratch = NULL;

	if (md != NULL)
	{
		ext = palloc0(Max(md->nwords + md->nvar, 1) * sizeof(int64));
		/* under the pipeline's: an error frees it with the pipeline */
		if (md->nvar > 0)
			scratch = AllocSetContextCreate(p->cxt,
											"streamforge snapshot states",
											ALLOCSET_DEFAULT_SIZES);
	}
	for (int64 k = 0; k < n; k++)
	{
		uint16		w = get_u16(r);
		uint32		ki = get_u32(r);
		int64		start = (int64) get_u64(r);
		int64		end = (int64) get_u64(r);
		SfAgg		agg;
		uint64		lo,
					hi;

		if ((k & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		if (w >= p->def.nwindows || ki >= nkeys || start >= end)
			sf_snap_corrupt(r, "A live bucket is invalid");
		if (sf_bucket_lookup(p, w, keys[ki], start) != NULL)
			sf_snap_corrupt(r, "A live bucket appears twice");
		agg.count = (int64) get_u64(r);
		agg.min = (int64) get_u64(r);
		agg.max = (int64) get_u64(r);
		lo = get_u64(r);
		hi = get_u64(r);
		agg.sum = (int128) (((uint128) hi << 64) | lo);
		agg.ext = NULL;
		sf_snap_check_agg(r, &agg);
		if (md != NULL)
		{
			MemoryContext old = scratch ? MemoryContextSwitchTo(scratch) : NULL;

			sf_snap3_decode_bucket_measures(r, md, ext, agg.count);
			if (scratch)
				MemoryContextSwitchTo(old);
			agg.ext = ext;
		}
		if (!sf_bucket_restore(p, w, keys[ki], start, end, &agg))
			sf_snap_corrupt(r, "A live session overlaps another");
		if (scratch)
		{
			/* restore copied the states: the loaded ones go */
			memset(ext + md->nwords, 0, md->nvar * sizeof(int64));
			MemoryContextReset(scratch);
		}
	}
	if (scratch)
		MemoryContextDelete(scratch);
	if (ext)
		pfree(ext);
}

static pg_noinline void
snapshot_decode_steps(SnapReader *r, uint32 version, const SfPipelineDef *target,
					  MemoryContext parent, SfPipeline *volatile *result)
{
	SfPipeline *p;
	SfString  **keys;
	int64		nkeys;
	int64		nids;
	HandleSet	valid = {NULL, 0};

	/* definition: must be equivalent to the pipeline's */
	sf_snap_check_def(r, target, version);

	p = sf_pipeline_create(parent, target);
	*result = p;

	/* clock and counters */
	p->has_watermark = get_u8(r) != 0;
	p->watermark = (int64) get_u64(r);
	for (int i = 0; i < target->npartitions; i++)
	{
		p->partitions[i].has_progress = get_u8(r) != 0;
		p->partitions[i].progress = (int64) get_u64(r);
		p->partitions[i].idle = get_u8(r) != 0;
	}
	p->seq = (int64) get_u64(r);
	p->late_forgotten = (int64) get_u64(r);
	if (version >= 3)
		p->arrivals = (int64) get_u64(r);

	/* keys */
	nkeys = get_count(r, 4);
	keys = palloc_extended(Max(nkeys, 1) * sizeof(SfString *), MCXT_ALLOC_HUGE);
	for (int64 k = 0; k < nkeys; k++)
	{
		uint32		len;
		const char *s = get_bytes(r, &len);

		if ((k & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		if (len > MaxAllocSize)
			sf_snap_corrupt(r, "A key is too long");
		keys[k] = sf_intern_key(p, s, (int) len);
	}

	/* identities, re-allocated in handle order; deliveries; late rows */
	if (version == 1)
	{
		decode_identities_v1(r, p, keys, nkeys, &valid);
		decode_deliveries_v1(r, p, &valid);
		decode_late_v2(r, p, &valid);
	}
	else if (version == 2)
	{
		(void) decode_identities(r, p, keys, nkeys, 2, &valid, &nids);
		decode_deliveries_v2(r, p, &valid);
		decode_late_v2(r, p, &valid);
	}
	else
	{
		uint32	   *ord2h = decode_identities(r, p, keys, nkeys, 3, NULL,
											  &nids);

		sf_snap3_decode_deliveries(r, p, ord2h, nids);
		sf_snap3_decode_late(r, p, ord2h, nids);
		pfree(ord2h);
	}

	sf_snap_decode_buckets(r, p, keys, nkeys);
	if (r->pos != r->len)
		sf_snap_corrupt(r, "Data follows the end");
	sf_retention_forget(p);
}

/*
 * sf_snapshot_decode
 *		Build the pipeline (a child context of parent) that a stored
 *		snapshot holds: a binary snapshot, or a checkpoint (fully validated).
 *		def is the pipeline's definition.
 */
SfPipeline *
sf_snapshot_decode(MemoryContext parent, const SfPipelineDef *def,
				   const char *data, Size len)
{
	SnapReader	r;
	SfPipeline *volatile p = NULL;
	uint32		crc,
				want;
	uint64		plen;
	uint32		version;

	if (len < SNAP_HEADER || memcmp(data, SNAP_MAGIC, 8) != 0)
		return sf_checkpoint_decode(parent, def, data, len);

	r.name = def->name;
	r.s = data;
	r.len = len;
	r.pos = 8;
	version = get_u32(&r);
	if (version < 1 || version > 3)
		sf_snap_corrupt(&r, "Its version is unknown");
	want = get_u32(&r);
	plen = get_u64(&r);
	if (plen != len - SNAP_HEADER)
		sf_snap_corrupt(&r, "Its length is wrong");
	crc = crc32(0L, Z_NULL, 0);
	for (uint64 off = 0; off < plen;)
	{
		uInt		chunk = (uInt) Min(plen - off, (uint64) 1 << 30);

		crc = crc32(crc, (const Bytef *) data + SNAP_HEADER + off, chunk);
		off += chunk;
	}
	if (crc != want)
		sf_snap_corrupt(&r, "Its checksum does not match");

	PG_TRY();
	{
		snapshot_decode_steps(&r, version, def, parent, &p);
	}
	PG_CATCH();
	{
		if (p != NULL)
			sf_pipeline_free(p);
		PG_RE_THROW();
	}
	PG_END_TRY();
	return p;
}
