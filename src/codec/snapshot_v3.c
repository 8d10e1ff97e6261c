/*-------------------------------------------------------------------------
 *
 * snapshot_v3.c
 *	  The sections binary snapshot version 3 adds (0.4.0, issue 39): what
 *	  pipelines with retention or measures, or whose partitions no longer
 *	  start at offset 0, need, so that they too load without the
 *	  checkpoint's parse and re-derivation.  snapshot.c writes and reads
 *	  the rest of the image and calls these in order; the format is in its
 *	  header and in docs/persistence.md, "Snapshots".
 *
 * Memory: the writers append to the caller's StringInfo and free what
 * they palloc; the readers build into the pipeline being decoded, and
 * their temporary arrays are palloc'd in CurrentMemoryContext (snapshot.c
 * frees the pipeline before an error propagates).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/codec/snapshot_v3.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "codec/snapshot_int.h"

/* ----------------------------------------------------------------
 * Writer
 * ----------------------------------------------------------------
 */

/*
 * The definition's version 3 part, after the windows: the writers mode,
 * and the measures and aggregates by their spellings
 */
void
sf_snap3_put_def(StringInfo b, const SfPipelineDef *def)
{
	const SfMeasuresDef *md = def->measures;

	put_u8(b, def->writers);
	put_u8(b, md != NULL);
	if (md == NULL)
		return;
	put_u32(b, md->naggs);
	for (int i = 0; i < md->naggs; i++)
	{
		char	   *sp = sf_agg_spelling(&md->aggs[i], md);

		put_bytes(b, sp, strlen(sp));
		pfree(sp);
	}
	put_u32(b, md->nmeasures);
	for (int i = 0; i < md->nmeasures; i++)
	{
		char	   *sp = sf_measure_spelling(md, i);

		put_bytes(b, sp, strlen(sp));
		pfree(sp);
	}
}

/* The ordinal (position in handle order) of an identity's handle */
static int64
handle_ordinal(const uint32 *handles, int64 n, uint32 h, int64 hint)
{
	int64		lo = 0,
				hi = n - 1;

	if (hint >= 0 && hint < n && handles[hint] == h)
		return hint;
	while (lo <= hi)
	{
		int64		mid = lo + (hi - lo) / 2;

		if (handles[mid] == h)
			return mid;
		if (handles[mid] < h)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	elog(ERROR, "streamforge: identity handle not remembered");
	return -1;					/* keep compiler quiet */
}

/*
 * Version 3: an identity's measure words after its version 2 fields: its
 * arrival as the difference from the previous identity's (*prev: handle
 * order is nearly arrival order, so mostly one byte), then its measures
 * (the first as the difference from the identity's value, which it is:
 * one byte) and NULL mask
 */
void
sf_snap3_put_id_measures(StringInfo b, const SfPipeline *p,
						 const SfIdentity *id, int64 *prev)
{
	const int64 *m = sf_id_measures(p, id);

	put_varint(b, zigzag((int64) ((uint64) m[0] - (uint64) *prev)));
	*prev = m[0];
	for (int i = 1; i <= p->def.measures->width; i++)
	{
		/* the first measure is the identity's value: a 0 byte */
		int64		base = i == 1 && p->def.measures->nmeasures > 0 ? id->value : 0;

		put_varint(b, zigzag((int64) ((uint64) m[i] - (uint64) base)));
	}
}

/* Version 3: a live bucket's ext words, fixed then variable-size */
void
sf_snap3_put_bucket_measures(StringInfo b, const SfMeasuresDef *md, const SfAgg *agg)
{
	for (int i = 0; i < md->nwords; i++)
		put_varint(b, zigzag(agg->ext[i]));
	for (int k = 0; k < md->nvar; k++)
	{
		int64	   *words;
		int64		n = sf_magg_var_words(md, agg->ext, k, &words);

		put_varint(b, (uint64) n);
		for (int64 i = 0; i < n; i++)
			put_varint(b, zigzag(words[i]));
		pfree(words);
	}
}

/*
 * Version 3: the delivery history of a pipeline whose partitions may no
 * longer start at offset 0 (retention), each slot as the ordinal of its
 * identity plus one, 0 for a slot that is forgotten (no record, or its
 * identity below the horizon), as the difference from the one before
 */
void
sf_snap3_put_deliveries(StringInfo b, SfPipeline *p, const uint32 *handles,
						int64 nids)
{
	for (int i = 0; i < p->def.npartitions; i++)
	{
		const SfPartition *part = &p->partitions[i];
		int64		n = part->consumed + 1 - part->base;
		int64		prev = 0;

		put_u64(b, (uint64) part->base);
		put_u64(b, (uint64) n);
		for (int64 o = 0; o < n; o++)
		{
			uint32		h = part->deliveries[part->head + o];
			int64		v = 0;

			if ((o & 65535) == 0)
				CHECK_FOR_INTERRUPTS();
			if (h != 0 && !sf_id_ptr(p, h)->forgotten)
				v = handle_ordinal(handles, nids, h, prev) + 1;
			put_varint(b, zigzag(v - prev));
			prev = v;
		}
	}
}

/*
 * Version 3: the late rows; one whose identity retention has forgotten
 * carries its event's event_id, key, time and value (the checkpoint's
 * rule), the others their identity's ordinal
 */
void
sf_snap3_put_late(StringInfo b, SfPipeline *p, const uint32 *handles, int64 nids)
{
	put_u64(b, (uint64) p->nlate);
	for (int64 k = 0; k < p->nlate; k++)
	{
		const SfLateEvent *l = &p->late[k];
		const SfIdentity *e = l->event;

		if ((k & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		put_u32(b, (uint32) l->partition);
		put_u64(b, (uint64) l->source_offset);
		put_u64(b, (uint64) l->watermark);
		put_u8(b, e->forgotten ? 1 : 0);
		if (e->forgotten)
		{
			put_bytes(b, e->event_id, e->event_id_len);
			put_bytes(b, e->key->data, e->key->len);
			put_u64(b, (uint64) e->event_time);
			put_u64(b, (uint64) e->value);
		}
		else
		{
			uint32		h;

			if (!sf_idtable_lookup(p, e->event_id, e->event_id_len, e->hash, &h))
				elog(ERROR, "streamforge: late event without identity");
			put_varint(b, (uint64) handle_ordinal(handles, nids, h, -1));
		}
	}
}

/* ----------------------------------------------------------------
 * Reader
 * ----------------------------------------------------------------
 */

/*
 * Version 3: an identity's measure words into w (1 + md->width of them),
 * as sf_snap3_put_id_measures wrote them: the arrival a difference from
 * *arrival (updated), the first measure from the identity's value
 */
void
sf_snap3_get_id_measures(SnapReader *r, const SfMeasuresDef *md, int64 value,
						 int64 *arrival, int64 *w)
{
	for (int i = 0; i <= md->width; i++)
		w[i] = unzigzag(get_varint(r));
	*arrival = (int64) ((uint64) *arrival + (uint64) w[0]);
	w[0] = *arrival;
	if (md->nmeasures > 0)
		w[1] = (int64) ((uint64) w[1] + (uint64) value);
	/* the NULL mask names only nullable measures */
	if (md->nullable != 0 && (w[1 + md->nmeasures] & ~(int64) md->nullable) != 0)
		sf_snap_corrupt(r, "An identity's measures are invalid");
}

/*
 * Version 3 deliveries: each partition's first held offset, then its slots
 * from there as identity ordinals plus one (0: forgotten with retention,
 * else an event a recompute took out)
 */
void
sf_snap3_decode_deliveries(SnapReader *r, SfPipeline *p, const uint32 *ord2h,
						   int64 nids)
{
	for (int i = 0; i < p->def.npartitions; i++)
	{
		int64		base = (int64) get_u64(r);
		int64		n = get_count(r, 1);
		int64		v = 0;

		if (base < 0 || base > PG_INT64_MAX - n)
			sf_snap_corrupt(r, "A partition's first offset is invalid");
		if (base > 0)
			sf_partition_set_base(p, i, base);
		if (n == 0)
			continue;
		sf_partition_alloc(p, i, n);
		for (int64 o = 0; o < n; o++)
		{
			if ((o & 65535) == 0)
				CHECK_FOR_INTERRUPTS();
			v = (int64) ((uint64) v + (uint64) unzigzag(get_varint(r)));
			if (v < 0 || v > nids)
				sf_snap_corrupt(r, "A delivery names no identity");
			sf_partition_append(p, i, v == 0 ? 0 : ord2h[v - 1]);
		}
	}
}

/* Version 3 late rows */
void
sf_snap3_decode_late(SnapReader *r, SfPipeline *p, const uint32 *ord2h, int64 nids)
{
	/* at least 22 bytes each: partition, offset, watermark, flag, ordinal */
	int64		n = get_count(r, 22);

	for (int64 k = 0; k < n; k++)
	{
		uint32		pi = get_u32(r);
		int64		off = (int64) get_u64(r);
		int64		wm = (int64) get_u64(r);
		uint8		forgotten = get_u8(r);

		if ((k & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		if (pi >= (uint32) p->def.npartitions || off < 0 ||
			off > p->partitions[pi].consumed || forgotten > 1 ||
			(forgotten && !p->def.has_retention))
			sf_snap_corrupt(r, "A late event is invalid");
		if (forgotten)
		{
			uint32		eidlen,
						keylen;
			const char *eid = get_bytes(r, &eidlen);
			const char *key = get_bytes(r, &keylen);
			int64		t = (int64) get_u64(r);
			int64		v = (int64) get_u64(r);

			if (eidlen < 1 || eidlen > MaxAllocSize || keylen > MaxAllocSize)
				sf_snap_corrupt(r, "A late event is invalid");
			sf_late_append_forgotten(p, (int) pi, off, eid, (int) eidlen,
									 key, (int) keylen, t, v, wm);
		}
		else
		{
			uint64		o = get_varint(r);

			if (o >= (uint64) nids)
				sf_snap_corrupt(r, "A late event names no identity");
			sf_late_append(p, (int) pi, off, sf_id_ptr(p, ord2h[o]), wm);
		}
	}
}

/*
 * Version 3: a live bucket's ext words into ext (nwords + nvar words,
 * variable-size states empty), its variable-size states built in
 * CurrentMemoryContext; count is the bucket's event count.
 */
void
sf_snap3_decode_bucket_measures(SnapReader *r, const SfMeasuresDef *md,
								int64 *ext, int64 count)
{
	for (int i = 0; i < md->nwords; i++)
		ext[i] = unzigzag(get_varint(r));
	for (int k = 0; k < md->nvar; k++)
	{
		uint64		n = get_varint(r);
		int64	   *words;
		const char *detail = NULL;

		/* a state holds at most one word per event, each at least a byte */
		if (n > (uint64) Max(count, 0) || n > r->len - r->pos)
			sf_snap_corrupt(r, "A variable-size state is too long");
		words = palloc_extended(Max(n, 1) * sizeof(int64), MCXT_ALLOC_HUGE);
		for (uint64 i = 0; i < n; i++)
			words[i] = unzigzag(get_varint(r));
		if (!sf_magg_var_load(md, ext, k, words, (int64) n, &detail))
			sf_snap_corrupt(r, "A variable-size state is invalid");
		pfree(words);
	}
}

/*
 * Version 3's part of the definition: the writers mode and the measures
 * and aggregates, by their spellings, which must be the pipeline's (then
 * def takes target's measures)
 */
void
sf_snap3_read_def(SnapReader *r, SfPipelineDef *def, const SfPipelineDef *target)
{
	const SfMeasuresDef *md = target->measures;

	def->writers = get_u8(r);
	if (get_u8(r) != (md != NULL))
		sf_snap_corrupt(r, "Its definition is not the pipeline's");
	if (md == NULL)
		return;
	for (int part = 0; part < 2; part++)
	{
		int			n = part == 0 ? md->naggs : md->nmeasures;

		if (get_u32(r) != (uint32) n)
			sf_snap_corrupt(r, "Its definition is not the pipeline's");
		for (int i = 0; i < n; i++)
		{
			uint32		len;
			const char *s = get_bytes(r, &len);
			char	   *want = part == 0 ? sf_agg_spelling(&md->aggs[i], md) :
				sf_measure_spelling(md, i);

			if (strlen(want) != len || memcmp(want, s, len) != 0)
				sf_snap_corrupt(r, "Its definition is not the pipeline's");
			pfree(want);
		}
	}
	def->measures = target->measures;
}
