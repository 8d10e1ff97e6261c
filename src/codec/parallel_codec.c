/*-------------------------------------------------------------------------
 *
 * parallel_codec.c
 *	  The bytes of a parallel pipeline (issue 46,
 *	  docs/design/parallel-writers.md, sections 4.3 and 6.7): here the head
 *	  journal entry (format 5), the lane K entry (format 6) and the replay
 *	  of a lane's format 3 rows into a lane being loaded; in
 *	  parallel_snapshot.c the head snapshot (binary version 4), the lane
 *	  snapshot (binary version 5), and the checkpoint of head and lanes
 *	  (merged into the serial form) and its restore (split).  This header
 *	  describes all of their formats.  Nothing here is reached by a serial
 *	  pipeline.
 *
 * Head entry (format 5), one per committed transaction, in outcome form
 * (engine/parallel.h, SfHeadEntry); little-endian, LEB128 varints, zigzag
 * for signed values:
 *	uint8 5, uint8 'H'
 *	varint ncounters, the counters (deliveries, unique, late, alone,
 *		duplicates, offset replays; a reader takes the ones it knows)
 *	measures pipelines: varint arrival base (the head's arrivals before
 *		the transaction; its new ids are base + 1 .. base + nfps)
 *	varint ndelta, per address: varint window, varint key length, key,
 *		zigzag start, varint end - start, varint count, zigzag min, zigzag
 *		max, uint64 low and high words of the sum; measures pipelines: the
 *		ext words as version 3's live buckets (snapshot_v3.c: nwords
 *		zigzag varints, then each variable-size state's word count and
 *		words), the first/last picks with the transaction's local
 *		arrivals (the replay rebases them, design 13, risk 10)
 *	varint nops, per op: uint8 kind, varint lane, then
 *		'E' zigzag offset, varint key length, key, zigzag time, zigzag value
 *		'L' as 'E', then varint event_id length, event_id
 *		(E and L of measures pipelines, then: zigzag arrival - base, and
 *		the measure words as zigzag varints, the first minus the value)
 *		'P', 'R' zigzag progress
 *		'I' nothing
 *	varint nfps, per new id: uint64 fingerprint, varint lane, varint offset
 *	varint nlanes, per lane that moved: varint lane, zigzag consumed
 *		before, zigzag consumed after
 * Its replay (sf_head_entry_replay) applies it with the engine's code
 * (sf_head_apply_entry): seq and late_seq are recomputed, not stored.
 *
 * Lane K entry (format 6), per claimed lane and transaction when not empty
 * (design 4.3, 5.4): the outcomes of the lane's deliveries that a
 * lane-local replay cannot derive:
 *	uint8 6, uint8 'K', varint lane, varint count, per offset: uint8 kind
 *	('L' a new unique event that is late; 'F' a duplicate of another
 *	lane's event, then uint8 its late flag), varint offset; measures
 *	pipelines, then: varint arrival base, varint count, per new event of
 *	the transaction in the lane (late or not), in offset order: varint
 *	offset, varint local arrival (its arrival is base + local), so that a
 *	lane loaded from its rows holds the global numbers
 * Retention's horizon will be one more kind.  A measures pipeline's lane
 * rows are format 3 'V' entries (the deliveries' measures).
 *
 * Head snapshot (version 4) and lane snapshot (version 5) share the binary
 * snapshot's header (magic, version, CRC, length; snapshot.c), so that
 * sf_snapshot_decode refuses them (unknown version) and vice versa:
 *	head: the definition (as version 3), the clock, seq, late_forgotten,
 *		the head's version (measures pipelines: then uint64 arrivals); its
 *		keys in byte order; the late rows (each with its event: the head
 *		has no identities; measures pipelines: its arrival and measure
 *		words as an E op's, base 0); the live buckets (as version 2, and
 *		the ext words as version 3); the fingerprint index (fingerprint,
 *		lane, and the offset of the delivery that introduced the id,
 *		sorted); the lane table (per partition: consumed offset, own
 *		identities, offset replays)
 *	lane: the definition, the lane, its offset replays, its keys in byte
 *		order, then each delivery in offset order: 0 and a new identity
 *		(length << 2 | foreign << 1 | late, event_id, key index, time as a
 *		difference, value; measures pipelines: an own identity's arrival
 *		as the difference from the previous own one's, a foreign copy none,
 *		then the measure words, the first minus the value), or k + 1 for
 *		the lane's k-th identity again
 * A lane has no index of its own (its ids are the head's fingerprints), so
 * serial version 2 cannot hold it: it walks the identity table.
 *
 * Errors: damaged bytes raise XX001 (ERRCODE_DATA_CORRUPTED), as the
 * journal and snapshot decoders do; a checkpoint is validated by
 * codec.c (SF003).  Memory: encoders return a bytea in the caller's
 * context; a decoded head is a new context under parent, freed before an
 * error propagates.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/codec/parallel_codec.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "codec/parallel_int.h"

/*
 * Run fn(arg) and turn XX001 from the snapshot reader, and the errors a
 * replay of damaged data may raise, into XX001 naming what was damaged.
 */
void
sf_pc_as_corrupt(void (*fn) (void *), void *arg, const char *what,
				 const char *name)
{
	MemoryContext cxt = CurrentMemoryContext;

	PG_TRY();
	{
		fn(arg);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		switch (edata->sqlerrcode)
		{
			case ERRCODE_DATA_CORRUPTED:
			case ERRCODE_SF_OFFSET_CONFLICT:
			case ERRCODE_SF_IDENTITY_CONFLICT:
			case ERRCODE_INVALID_PARAMETER_VALUE:
			case ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE:
				FlushErrorState();
				ereport(ERROR,
						errcode(ERRCODE_DATA_CORRUPTED),
						errmsg("corrupt %s for pipeline \"%s\"", what, name),
						edata->sqlerrcode == ERRCODE_DATA_CORRUPTED &&
						edata->detail ? errdetail("%s", edata->detail) :
						errdetail("%s", edata->message));
				break;
			default:
				FreeErrorData(edata);
				PG_RE_THROW();
		}
	}
	PG_END_TRY();
}

/* ----------------------------------------------------------------
 * Head entry (format 5)
 * ----------------------------------------------------------------
 */

/*
 * The format 5 bytes of head entry e of a pipeline of np partitions, in
 * buf (initialized here; as journal.c's encoders, its first VARHDRSZ bytes
 * are left free: the entry is buf->data + VARHDRSZ).
 */
void
sf_head_entry_encode(StringInfo buf, const SfPipelineDef *def,
					 const SfHeadEntry *e)
{
	const SfMeasuresDef *md = def->measures;

	initStringInfo(buf);
	buf->len = VARHDRSZ;		/* initStringInfo gives 1 kB */
	put_u8(buf, HEAD_ENTRY_FORMAT);
	put_u8(buf, 'H');
	put_varint(buf, SF_HE_NCOUNTERS);
	for (int i = 0; i < SF_HE_NCOUNTERS; i++)
		put_varint(buf, (uint64) e->counters[i]);
	if (md != NULL)
		put_varint(buf, (uint64) e->arrival_base);
	put_varint(buf, (uint64) e->ndelta);
	for (int64 i = 0; i < e->ndelta; i++)
	{
		const SfHeDelta *d = &e->delta[i];

		if ((i & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		put_varint(buf, (uint64) d->window);
		put_str(buf, d->key, d->key_len);
		put_varint(buf, zigzag(d->start));
		put_varint(buf, (uint64) d->end - (uint64) d->start);
		put_varint(buf, (uint64) d->agg.count);
		put_varint(buf, zigzag(d->agg.min));
		put_varint(buf, zigzag(d->agg.max));
		put_u64(buf, (uint64) (uint128) d->agg.sum);
		put_u64(buf, (uint64) ((uint128) d->agg.sum >> 64));
		if (md != NULL)
			sf_snap3_put_bucket_measures(buf, md, &d->agg);
	}
	put_varint(buf, (uint64) e->nops);
	for (int64 i = 0; i < e->nops; i++)
	{
		const SfHeOp *op = &e->ops[i];

		if ((i & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		put_u8(buf, op->kind);
		put_varint(buf, op->lane);
		switch (op->kind)
		{
			case SF_HE_EVENT:
			case SF_HE_LATE:
				put_varint(buf, zigzag(op->offset));
				put_str(buf, op->key, op->key_len);
				put_varint(buf, zigzag(op->event_time));
				put_varint(buf, zigzag(op->value));
				if (op->kind == SF_HE_LATE)
					put_str(buf, op->event_id, op->event_id_len);
				if (md != NULL)
					put_ev_measures(buf, md, op->mv, e->arrival_base,
									op->value);
				break;
			case SF_HE_PROGRESS:
			case SF_HE_ADVANCE:
				put_varint(buf, zigzag(op->value));
				break;
			case SF_HE_IDLE:
				break;
			default:
				elog(ERROR, "streamforge: unknown head op %d", op->kind);
		}
	}
	put_varint(buf, (uint64) e->nfps);
	for (int64 i = 0; i < e->nfps; i++)
	{
		put_u64(buf, e->fps[i].hash);
		put_varint(buf, e->fps[i].lane);
		put_varint(buf, (uint64) e->fps[i].offset);
	}
	put_varint(buf, (uint64) e->nlanes);
	for (int i = 0; i < e->nlanes; i++)
	{
		put_varint(buf, e->lanes[i].lane);
		put_varint(buf, zigzag(e->lanes[i].prev));
		put_varint(buf, zigzag(e->lanes[i].consumed));
	}
}

typedef struct EntryDecode
{
	const SfPipelineDef *def;
	const char *data;
	Size		len;
	SfHeadEntry *e;
} EntryDecode;

static void
entry_decode(void *arg)
{
	EntryDecode *x = (EntryDecode *) arg;
	const SfPipelineDef *def = x->def;
	const SfMeasuresDef *md = def->measures;
	SfHeadEntry *e = palloc0(sizeof(SfHeadEntry));
	SnapReader	r;
	int64		n;

	r.name = def->name;
	r.s = x->data;
	r.len = x->len;
	r.pos = 0;
	if (get_u8(&r) != HEAD_ENTRY_FORMAT || get_u8(&r) != 'H')
		sf_snap_corrupt(&r, "It is not a head entry");
	n = get_vcount(&r, 1);
	for (int64 i = 0; i < n; i++)
	{
		uint64		c = get_varint(&r);

		if (c > PG_INT64_MAX)
			sf_snap_corrupt(&r, "A counter is out of range");
		if (i < SF_HE_NCOUNTERS)
			e->counters[i] = (int64) c;
	}
	if (md != NULL)
	{
		uint64		base = get_varint(&r);

		if (base > (uint64) (PG_INT64_MAX / 2))
			sf_snap_corrupt(&r, "The arrival base is out of range");
		e->arrival_base = (int64) base;
	}

	/* 23 bytes or more an address: 7 varints and the sum's 16 */
	e->ndelta = get_vcount(&r, 23);
	e->delta = palloc_extended(Max(e->ndelta, 1) * sizeof(SfHeDelta),
							   MCXT_ALLOC_HUGE);
	for (int64 i = 0; i < e->ndelta; i++)
	{
		SfHeDelta  *d = &e->delta[i];
		uint64		w = get_varint(&r);
		uint64		width;
		uint64		lo,
					hi;

		if ((i & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		if (w >= (uint64) def->nwindows)
			sf_snap_corrupt(&r, "A delta address names no window");
		d->window = (int) w;
		d->key = get_str(&r, &d->key_len, 0);
		d->start = unzigzag(get_varint(&r));
		width = get_varint(&r);
		if (width < 1 || width > (uint64) (PG_INT64_MAX - Max(d->start, 0)))
			sf_snap_corrupt(&r, "A delta address is invalid");
		d->end = d->start + (int64) width;
		d->agg.count = (int64) get_varint(&r);
		d->agg.min = unzigzag(get_varint(&r));
		d->agg.max = unzigzag(get_varint(&r));
		lo = get_u64(&r);
		hi = get_u64(&r);
		d->agg.sum = (int128) (((uint128) hi << 64) | lo);
		d->agg.ext = NULL;
		sf_snap_check_agg(&r, &d->agg);
		if (md != NULL)
		{
			/* its states in this context, as the entry's strings */
			d->agg.ext = palloc0((md->nwords + md->nvar) * sizeof(int64));
			sf_snap3_decode_bucket_measures(&r, md, d->agg.ext, d->agg.count);
		}
	}

	e->nops = get_vcount(&r, 2);
	e->ops_cap = Max(e->nops, 1);
	e->ops = palloc_extended(e->ops_cap * sizeof(SfHeOp), MCXT_ALLOC_HUGE);
	for (int64 i = 0; i < e->nops; i++)
	{
		SfHeOp	   *op = &e->ops[i];

		if ((i & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		memset(op, 0, sizeof(SfHeOp));
		op->kind = get_u8(&r);
		op->lane = (uint16) get_lane(&r, def->npartitions);
		switch (op->kind)
		{
			case SF_HE_EVENT:
			case SF_HE_LATE:
				op->offset = unzigzag(get_varint(&r));
				if (op->offset < 0)
					sf_snap_corrupt(&r, "An offset is negative");
				op->key = get_str(&r, &op->key_len, 0);
				op->event_time = unzigzag(get_varint(&r));
				op->value = unzigzag(get_varint(&r));
				if (op->kind == SF_HE_LATE)
					op->event_id = get_str(&r, &op->event_id_len, 1);
				if (md != NULL)
					op->mv = get_ev_measures(&r, md, e->arrival_base,
											 op->value);
				break;
			case SF_HE_PROGRESS:
				if (!def->has_out_of_orderness)
					sf_snap_corrupt(&r, "Built-in progress without out_of_orderness");
				/* FALLTHROUGH */
			case SF_HE_ADVANCE:
				op->value = unzigzag(get_varint(&r));
				break;
			case SF_HE_IDLE:
				break;
			default:
				sf_snap_corrupt(&r, "An op's kind is unknown");
		}
	}

	e->nfps = get_vcount(&r, 10);
	e->fps = palloc_extended(Max(e->nfps, 1) * sizeof(SfHeFp),
							 MCXT_ALLOC_HUGE);
	for (int64 i = 0; i < e->nfps; i++)
	{
		uint64		off;

		e->fps[i].hash = get_u64(&r);
		e->fps[i].lane = (uint16) get_lane(&r, def->npartitions);
		off = get_varint(&r);
		if (e->fps[i].hash == 0 || off > PG_INT64_MAX)
			sf_snap_corrupt(&r, "A new id is invalid");
		e->fps[i].offset = (int64) off;
	}

	n = get_vcount(&r, 3);
	if (n > def->npartitions)
		sf_snap_corrupt(&r, "More lanes than partitions");
	e->nlanes = (int) n;
	e->lanes = palloc(Max(n, 1) * sizeof(SfHeLane));
	for (int i = 0; i < e->nlanes; i++)
	{
		e->lanes[i].lane = (uint16) get_lane(&r, def->npartitions);
		e->lanes[i].prev = unzigzag(get_varint(&r));
		e->lanes[i].consumed = unzigzag(get_varint(&r));
		if (e->lanes[i].prev < -1 || e->lanes[i].consumed <= e->lanes[i].prev)
			sf_snap_corrupt(&r, "A consumed offset is invalid");
	}
	if (r.pos != r.len)
		sf_snap_corrupt(&r, "Data follows the end");

	/* an event's arrival is one of the transaction's new ids' */
	for (int64 i = 0; md != NULL && i < e->nops; i++)
		if (e->ops[i].mv != NULL &&
			(e->ops[i].mv[0] <= e->arrival_base ||
			 e->ops[i].mv[0] > e->arrival_base + e->nfps))
			sf_snap_corrupt(&r, "An event's arrival is out of range");
	x->e = e;
}

/*
 * The head entry that data holds (format 5), for a pipeline defined by
 * def, checked (XX001); its strings point into data.
 */
SfHeadEntry *
sf_head_entry_decode(const SfPipelineDef *def, const char *data, Size len)
{
	EntryDecode x;

	x.def = def;
	x.data = data;
	x.len = len;
	x.e = NULL;
	sf_pc_as_corrupt(entry_decode, &x, "head entry", def->name);
	return x.e;
}

typedef struct EntryReplay
{
	SfHead	   *h;
	const char *data;
	Size		len;
	SfChangeList *out;
} EntryReplay;

static void
entry_replay(void *arg)
{
	EntryReplay *x = (EntryReplay *) arg;
	EntryDecode d;

	d.def = &x->h->p->def;
	d.data = x->data;
	d.len = x->len;
	entry_decode(&d);
	sf_head_apply_entry(x->h, d.e, x->out);
}

/*
 * Replay the head entry data holds on h (sf_head_apply_entry), appending
 * its changes to out.  Damaged bytes raise XX001; h is then half changed
 * and the caller discards it.
 */
void
sf_head_entry_replay(SfHead *h, const char *data, Size len, SfChangeList *out)
{
	EntryReplay x;

	x.h = h;
	x.data = data;
	x.len = len;
	x.out = out;
	sf_pc_as_corrupt(entry_replay, &x, "head entry", h->p->def.name);
}

/* ----------------------------------------------------------------
 * Lane K entry (format 6)
 * ----------------------------------------------------------------
 */

/*
 * The K entry of lane pi for transaction t, committed by the head entry e
 * (which says which of the lane's offsets are t's), in buf (initialized
 * here, its first VARHDRSZ bytes free); false, and buf untouched, when it
 * would be empty.  It lists, in offset order, t's deliveries in the lane
 * that were late new events ('L') or duplicates of another lane's event
 * ('F', with that event's late flag).
 */
bool
sf_lane_k_encode(StringInfo buf, SfHead *h, const SfTxn *t,
				 const SfHeadEntry *e, int pi)
{
	SfPipeline *lane = h->lanes[pi];
	SfPartition *part = &lane->partitions[pi];
	const SfHeLane *moved = NULL;
	int64	   *late;
	int64		nlate = 0;
	int64		k = 0;
	int64		n = 0;
	int64		narr = 0;
	StringInfoData items;
	StringInfoData arr;
	const SfMeasuresDef *md = h->p->def.measures;

	for (int i = 0; i < e->nlanes; i++)
		if (e->lanes[i].lane == pi)
			moved = &e->lanes[i];
	if (moved == NULL)
		return false;

	/* the late new events of the lane: in t's log, in offset order */
	late = palloc(Max(t->nops, 1) * sizeof(int64));
	for (int64 i = 0; i < t->nops; i++)
		if (t->ops[i].kind == SF_TXN_EVENT && t->ops[i].lane == pi &&
			(t->ops[i].flags & (SF_TXN_LATE | SF_TXN_DUP)) == SF_TXN_LATE)
			late[nlate++] = t->ops[i].value;

	initStringInfo(&items);
	for (int64 o = moved->prev + 1; o <= moved->consumed; o++)
	{
		SfIdentity *id = sf_id_ptr(lane, part->deliveries[part->head + o]);

		if ((o & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		while (k < nlate && late[k] < o)
			k++;
		if (id->foreign)
		{
			put_u8(&items, 'F');
			put_u8(&items, id->late ? 1 : 0);
		}
		else if (k < nlate && late[k] == o)
			put_u8(&items, 'L');
		else
			continue;
		put_varint(&items, (uint64) o);
		n++;
	}
	pfree(late);

	/*
	 * A measures pipeline: the arrivals of t's new events in the lane (in
	 * log order, so in offset order), each a local number after base
	 */
	initStringInfo(&arr);
	for (int64 i = 0; md != NULL && i < t->nops; i++)
	{
		const SfTxnOp *op = &t->ops[i];
		int64		arrival;

		if (op->kind != SF_TXN_EVENT || op->lane != pi ||
			(op->flags & SF_TXN_DUP))
			continue;
		arrival = sf_id_measures(lane, sf_id_ptr(lane, op->handle))[0];
		put_varint(&arr, (uint64) op->value);
		put_varint(&arr, (uint64) (arrival - t->arrival_base));
		narr++;
	}
	if (n == 0 && narr == 0)
	{
		pfree(items.data);
		pfree(arr.data);
		return false;
	}
	initStringInfo(buf);
	buf->len = VARHDRSZ;		/* initStringInfo gives 1 kB */
	put_u8(buf, LANE_K_FORMAT);
	put_u8(buf, 'K');
	put_varint(buf, (uint64) pi);
	put_varint(buf, (uint64) n);
	appendBinaryStringInfo(buf, items.data, items.len);
	if (md != NULL)
	{
		put_varint(buf, (uint64) t->arrival_base);
		put_varint(buf, (uint64) narr);
		appendBinaryStringInfo(buf, arr.data, arr.len);
	}
	pfree(items.data);
	pfree(arr.data);
	return true;
}

typedef struct KDecode
{
	const SfPipelineDef *def;
	const char *data;
	Size		len;
	SfLaneK    *k;
} KDecode;

static void
k_decode(void *arg)
{
	KDecode    *x = (KDecode *) arg;
	SfLaneK    *k = palloc0(sizeof(SfLaneK));
	SnapReader	r;

	r.name = x->def->name;
	r.s = x->data;
	r.len = x->len;
	r.pos = 0;
	if (get_u8(&r) != LANE_K_FORMAT || get_u8(&r) != 'K')
		sf_snap_corrupt(&r, "It is not a lane K entry");
	k->lane = get_lane(&r, x->def->npartitions);
	k->n = get_vcount(&r, 2);
	k->items = palloc_extended(Max(k->n, 1) * sizeof(SfLaneKItem),
							   MCXT_ALLOC_HUGE);
	for (int64 i = 0; i < k->n; i++)
	{
		SfLaneKItem *it = &k->items[i];
		uint64		o;

		it->kind = get_u8(&r);
		if (it->kind == 'F')
		{
			uint8		l = get_u8(&r);

			if (l > 1)
				sf_snap_corrupt(&r, "A late flag is invalid");
			it->late = l == 1;
		}
		else if (it->kind == 'L')
			it->late = true;
		else
			sf_snap_corrupt(&r, "An item's kind is unknown");
		o = get_varint(&r);
		if (o > PG_INT64_MAX || (i > 0 && (int64) o <= k->items[i - 1].offset))
			sf_snap_corrupt(&r, "The offsets are not in order");
		it->offset = (int64) o;
	}
	if (x->def->measures != NULL)
	{
		uint64		base = get_varint(&r);

		if (base > (uint64) (PG_INT64_MAX / 2))
			sf_snap_corrupt(&r, "The arrival base is out of range");
		k->arrival_base = (int64) base;
		k->narrivals = get_vcount(&r, 2);
		k->arrivals = palloc_extended(Max(k->narrivals, 1) *
									  sizeof(SfLaneKArrival), MCXT_ALLOC_HUGE);
		for (int64 i = 0; i < k->narrivals; i++)
		{
			uint64		o = get_varint(&r);
			uint64		local = get_varint(&r);
			SfLaneKArrival *a = &k->arrivals[i];

			if (o > PG_INT64_MAX ||
				(i > 0 && (int64) o <= k->arrivals[i - 1].offset))
				sf_snap_corrupt(&r, "The offsets are not in order");
			if (local < 1 || local > (uint64) (PG_INT64_MAX / 2) ||
				(i > 0 && base + local <= (uint64) k->arrivals[i - 1].arrival))
				sf_snap_corrupt(&r, "The arrivals are not in order");
			a->offset = (int64) o;
			a->arrival = (int64) (base + local);
		}
	}
	if (k->n == 0 && k->narrivals == 0)
		sf_snap_corrupt(&r, "It is empty");
	if (r.pos != r.len)
		sf_snap_corrupt(&r, "Data follows the end");
	x->k = k;
}

/* The lane K entry that data holds (format 6), checked (XX001) */
SfLaneK *
sf_lane_k_decode(const SfPipelineDef *def, const char *data, Size len)
{
	KDecode		x;

	x.def = def;
	x.data = data;
	x.len = len;
	x.k = NULL;
	sf_pc_as_corrupt(k_decode, &x, "lane entry", def->name);
	return x.k;
}

/* ----------------------------------------------------------------
 * Lane entries (format 3) replayed into a lane being loaded
 * ----------------------------------------------------------------
 */
static void
lane_deliver(void *arg, const SfDelivery *d, const int64 *mv)
{
	if (mv != NULL)
		sf_lane_load_delivery_measures((SfLaneLoad *) arg, d, mv);
	else
		sf_lane_load_delivery((SfLaneLoad *) arg, d);
}

/*
 * Replay one row of a lane's journal into the lane load l (the K entries
 * of the rows are registered first, sf_lane_load_k): a format 3 ingest
 * entry (or a sequence of them) whose deliveries go to the lane
 * (sf_lane_load_delivery); damaged bytes raise XX001.
 */
void
sf_lane_entry_replay(SfLaneLoad *l, const char *data, Size len)
{
	sf_journal_replay_to(l->lane, data, len, lane_deliver, l);
}
