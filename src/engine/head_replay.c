/*-------------------------------------------------------------------------
 *
 * head_replay.c
 *	  A head entry of a parallel pipeline (issue 46,
 *	  docs/design/parallel-writers.md, section 4.3, "Head entries") applied
 *	  to another head: a backend catching up, a load after a head snapshot.
 *	  Also the lanes' building blocks of the codec's snapshots, and the
 *	  split of a serial-form pipeline into head and lanes (section 6.7,
 *	  restore).
 *
 * Design.  sf_head_apply_entry replays an entry (head_entry.c recorded it,
 * or the codec decoded it) with the operations sf_head_commit used: the
 * bucket merge of the delta, sf_head_apply_event, sf_late_append_forgotten,
 * the clock update of built-in progress, sf_engine_advance,
 * sf_engine_mark_idle; so the changes, seq and late_seq are the commit's.
 * Then the new ids enter the fingerprint index at the handles their
 * offsets have in the lanes, which must hold them (in this step every lane
 * is loaded).  Data an entry may carry that no commit makes (a delta
 * address that is not a pending bucket, an id that is not in its lane or
 * known already, a lane table that goes back) raises XX001.
 *
 * Memory: everything applied lives in the head's contexts.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/head_replay.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "engine/engine.h"
#include "engine/engine_int.h"
#include "engine/parallel.h"

/* A damaged head entry or snapshot found while applying it */
static pg_attribute_noreturn() void
entry_corrupt(const SfPipeline *p, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("corrupt head entry for pipeline \"%s\"", p->def.name),
			 errdetail("%s", what)));
}

/* ----------------------------------------------------------------
 * Replay
 * ----------------------------------------------------------------
 */

/* An identity of lane pi by offset, NULL if the lane does not hold it */
static SfIdentity *
lane_identity(SfHead *h, int pi, int64 offset, uint32 *handle)
{
	SfPipeline *lane = h->lanes[pi];
	SfPartition *part = &lane->partitions[pi];

	if (offset < 0 || offset > part->consumed)
		return NULL;
	*handle = part->deliveries[part->head + offset];
	return sf_id_ptr(lane, *handle);
}

/* Whether the fingerprint index holds event id eid (of hash fph) */
static bool
fp_holds(SfHead *h, uint64 fph, const SfIdentity *eid)
{
	SfFpCursor	c;
	uint16		lane;
	uint64		loc;

	sf_fp_start(&c, fph);
	while (sf_fp_next(h->fp, &c, &lane, &loc))
	{
		const SfIdentity *id = sf_id_ptr(h->lanes[lane], (uint32) loc);

		if (id->event_id_len == eid->event_id_len &&
			memcmp(id->event_id, eid->event_id, id->event_id_len) == 0)
			return true;
	}
	return false;
}

/*
 * Enter lane pi's identity at offset into the head's index as a new id,
 * checking that the lane holds it there, that it is its lane's own and
 * has fingerprint hash, and that no lane holds it already.
 */
void
sf_head_index_offset(SfHead *h, int pi, int64 offset, uint64 hash)
{
	uint32		handle;
	SfIdentity *id;

	if (pi < 0 || pi >= h->p->def.npartitions)
		entry_corrupt(h->p, "A new id names no lane.");
	id = lane_identity(h, pi, offset, &handle);
	if (id == NULL || id->foreign)
		entry_corrupt(h->p, "A new id is not in its lane.");
	if (hash != sf_fp_hash(id->event_id, id->event_id_len))
		entry_corrupt(h->p, "A new id's fingerprint is not its event id's.");
	if (fp_holds(h, hash, id))
		entry_corrupt(h->p, "A new id is known already.");
	sf_fp_insert(h->fp, hash, (uint16) pi, handle);
}

static void
apply_entry(SfHead *h, const SfHeadEntry *e, SfChangeList *out)
{
	SfPipeline *p = h->p;
	const SfPipelineDef *def = &p->def;
	int64	   *consumed = sf_head_lane_table(h);
	int64	   *words = NULL;	/* measures: a delta address's, rebased */
	SfIdentity *event = NULL;	/* measures: an E op's event */
	SfClockRun	run;			/* the P ops since the last other op */

	/* a measures pipeline's new ids follow the head's arrivals */
	if (def->measures != NULL)
	{
		if (e->arrival_base != p->arrivals || e->nfps > PG_INT64_MAX - p->arrivals)
			entry_corrupt(p, "The arrival base is not the head's.");
		words = palloc((def->measures->nwords + def->measures->nvar) *
					   sizeof(int64));
		event = palloc0(MAXALIGN(offsetof(SfIdentity, event_id)) +
						(1 + def->measures->width) * sizeof(int64));
	}

	/* the delta first: pending buckets only (head.c says why) */
	if (e->ndelta > 0)
	{
		sf_op_begin(p);
		for (int64 i = 0; i < e->ndelta; i++)
		{
			const SfHeDelta *d = &e->delta[i];
			SfString   *key = sf_intern_key(p, d->key, d->key_len);
			SfBucket   *b;
			SfAgg		from = d->agg;

			if ((i & 1023) == 0)
				CHECK_FOR_INTERRUPTS();
			if (d->window < 0 || d->window >= def->nwindows)
				entry_corrupt(p, "A delta address names no window.");
			if (words != NULL)
			{
				/* its first/last picks after everything committed (head.c) */
				if (d->agg.ext == NULL)
					entry_corrupt(p, "A delta address has no measures.");
				memcpy(words, d->agg.ext, (def->measures->nwords +
										   def->measures->nvar) * sizeof(int64));
				sf_magg_rebase(def->measures, words, e->arrival_base);
				from.ext = words;
			}
			if (sf_window_merges(&def->windows[d->window]))
			{
				/* a delta session: by interval union, as the commit merged it */
				sf_session_merge_in(p, d->window, key, d->start, d->end, &from);
				continue;
			}
			b = sf_bucket_get_hashed(p, d->window, key,
									 sf_bucket_key_hash(d->window, key),
									 d->start, d->end);
			if (b->ready || b->end != d->end)
				entry_corrupt(p, "A delta address is not a pending bucket.");
			if (words != NULL)
				sf_magg_merge(p, &b->agg, &from);
			sf_agg_merge(&b->agg, &from);
		}
		if (p->ndirty != 0)
			entry_corrupt(p, "The delta touched a visible row.");
		p->busy = false;
	}

	sf_clock_run_init(&run);
	for (int64 i = 0; i < e->nops; i++)
	{
		const SfHeOp *op = &e->ops[i];

		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		if (op->lane >= def->npartitions)
			entry_corrupt(p, "An op names no partition.");
		/* a run of P ops is released as one (head_clock.c) */
		if (op->kind != SF_HE_PROGRESS)
			sf_head_clock_flush(p, &run, out);
		switch (op->kind)
		{
			case SF_HE_EVENT:
				{
					SfIdentity	id;
					SfIdentity *ev = &id;

					if (event != NULL)
					{
						/* with its measures, which follow an empty event id */
						if (op->mv == NULL)
							entry_corrupt(p, "An event has no measures.");
						ev = event;
						memcpy(sf_id_measures(p, ev), op->mv,
							   (1 + def->measures->width) * sizeof(int64));
					}
					else
						memset(&id, 0, sizeof(id));
					ev->key = sf_intern_key(p, op->key, op->key_len);
					ev->event_time = op->event_time;
					ev->value = op->value;
					sf_head_apply_event(p, ev, out);
					break;
				}
			case SF_HE_LATE:
				if (event != NULL && op->mv == NULL)
					entry_corrupt(p, "An event has no measures.");
				sf_late_append_forgotten(p, op->lane, op->offset,
										 op->event_id, op->event_id_len,
										 op->key, op->key_len,
										 op->event_time, op->value,
										 p->watermark);
				if (event != NULL)
					memcpy(sf_id_measures(p, p->late[p->nlate - 1].event),
						   op->mv, (1 + def->measures->width) * sizeof(int64));
				p->mutations++;
				break;
			case SF_HE_PROGRESS:
				if (!def->has_out_of_orderness)
					entry_corrupt(p, "Built-in progress without out_of_orderness.");
				sf_head_clock_advance(p, &run, op->lane, op->value);
				break;
			case SF_HE_ADVANCE:
				sf_engine_advance(p, def->partitions[op->lane], op->value, out);
				break;
			case SF_HE_IDLE:
				sf_engine_mark_idle(p, def->partitions[op->lane], out);
				break;
			default:
				entry_corrupt(p, "An op's kind is unknown.");
		}
	}
	sf_head_clock_flush(p, &run, out);
	sf_clock_run_free(&run);

	for (int64 i = 0; i < e->nfps; i++)
	{
		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		sf_head_index_offset(h, e->fps[i].lane, e->fps[i].offset,
							 e->fps[i].hash);
	}
	for (int i = 0; i < e->nlanes; i++)
	{
		const SfHeLane *l = &e->lanes[i];

		if (l->lane >= def->npartitions || l->prev != consumed[l->lane] ||
			l->consumed <= l->prev ||
			l->consumed > h->lanes[l->lane]->partitions[l->lane].consumed)
			entry_corrupt(p, "A lane's consumed offset is out of range.");
		consumed[l->lane] = l->consumed;
	}
	if (def->measures != NULL)
	{
		p->arrivals += e->nfps;
		pfree(words);
		pfree(event);
	}
	h->version++;
}

/*
 * Apply head entry e (a committed transaction, recorded by sf_head_commit
 * or decoded) to h, appending its changes, numbered after h's seq, to out.
 * Every lane holds at least the deliveries of the transactions applied so
 * far (in this step every lane is loaded).  The limit of
 * streamforge.max_live_buckets is the commit's, not checked again.  On an
 * error h is half changed: the caller discards it.
 */
void
sf_head_apply_entry(SfHead *h, const SfHeadEntry *e, SfChangeList *out)
{
	bool		was = sf_replaying_journal;

	sf_replaying_journal = true;
	PG_TRY();
	{
		apply_entry(h, e, out);
	}
	PG_FINALLY();
	{
		sf_replaying_journal = was;
	}
	PG_END_TRY();
}

/* ----------------------------------------------------------------
 * Lanes, and the split of a serial-form pipeline (6.7)
 * ----------------------------------------------------------------
 */

/*
 * Deliver at lane's next offset of partition pi a new identity (its
 * lane's own, or foreign: another lane's event, in no index); returns its
 * handle.  For the codec's lane snapshots and the split.  measures: a
 * measures pipeline's arrival (0 for a foreign copy, which is no arrival)
 * and measure words, 1 + width of them; ignored otherwise.
 */
uint32
sf_lane_add(SfPipeline *lane, int pi, const char *event_id, int event_id_len,
			const char *key, int key_len, int64 event_time, int64 value,
			bool late, bool foreign, const int64 *measures)
{
	uint32		handle;
	SfIdentity *id = sf_identity_new(lane, event_id, event_id_len,
									 sf_hash_event_id(event_id, event_id_len),
									 &handle);

	id->key = sf_intern_key(lane, key, key_len);
	id->event_time = event_time;
	id->value = value;
	id->late = late;
	id->foreign = foreign;
	if (lane->def.measures != NULL)
		sf_id_put_measures(lane, id, measures[0], measures + 1);
	if (!foreign)
		lane->nidentities++;
	sf_partition_append(lane, pi, handle);
	return handle;
}

/* the lane's own identity with d's event id, or NULL */
static SfIdentity *
lane_load_find(SfLaneLoad *l, const char *eid, int len, uint64 fph,
			   uint32 *handle)
{
	SfFpCursor	c;
	uint16		lane;
	uint64		loc;

	sf_fp_start(&c, fph);
	while (sf_fp_next(l->ids, &c, &lane, &loc))
	{
		SfIdentity *id = sf_id_ptr(l->lane, (uint32) loc);

		if (id->event_id_len == (uint32) len &&
			memcmp(id->event_id, eid, len) == 0)
		{
			*handle = (uint32) loc;
			return id;
		}
	}
	return NULL;
}

/*
 * Start loading lane (of partition pi) from its rows after what it holds
 * (an empty lane, or one decoded from its snapshot): its own event ids go
 * into the load's map.  The map and the K items live in
 * CurrentMemoryContext until sf_lane_load_end.
 */
void
sf_lane_load_begin(SfLaneLoad *l, SfPipeline *lane, int pi)
{
	SfPartition *part = &lane->partitions[pi];

	l->lane = lane;
	l->pi = pi;
	l->ids = sf_fp_create(CurrentMemoryContext,
						  (uint64) Max(lane->nidentities, 0));
	l->k = sf_fp_create(CurrentMemoryContext, 0);
	l->arr = sf_fp_create(CurrentMemoryContext, 0);
	for (int64 o = 0; o <= part->consumed; o++)
	{
		uint32		handle = part->deliveries[part->head + o];
		SfIdentity *id = sf_id_ptr(lane, handle);
		uint64		fph;
		uint32		seen;

		if ((o & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		if (id->foreign)
			continue;
		fph = sf_fp_hash(id->event_id, id->event_id_len);
		if (lane_load_find(l, id->event_id, (int) id->event_id_len, fph,
						   &seen) == NULL)
			sf_fp_insert(l->ids, fph, 0, handle);
	}
}

/*
 * Note value for a K entry's offset in map (the outcomes or the arrivals of
 * the lane being loaded): an offset past what the lane holds, given once
 */
static void
lane_k_put(SfLaneLoad *l, SfFingerprints *map, int64 offset, uint64 value,
		   const char *twice)
{
	SfFpCursor	c;
	uint16		lane;
	uint64		loc;

	if (offset <= l->lane->partitions[l->pi].consumed)
		entry_corrupt(l->lane, "A K entry names an offset the lane held already.");
	sf_fp_start(&c, (uint64) offset + 1);
	if (sf_fp_next(map, &c, &lane, &loc))
		entry_corrupt(l->lane, twice);
	sf_fp_insert(map, (uint64) offset + 1, 0, value);
}

/* A K entry of the lane's rows: its outcomes wait for their deliveries */
void
sf_lane_load_k(SfLaneLoad *l, const SfLaneK *k)
{
	if (k->lane != l->pi)
		entry_corrupt(l->lane, "A lane's K entry names another lane.");
	for (int64 i = 0; i < k->n; i++)
	{
		const SfLaneKItem *it = &k->items[i];

		lane_k_put(l, l->k, it->offset,
				   ((uint64) (it->kind == 'F') << 1) | (it->late ? 1 : 0),
				   "Two K entries name one offset.");
	}
	if (k->narrivals > 0 && l->lane->def.measures == NULL)
		entry_corrupt(l->lane, "A K entry gives arrivals without measures.");
	for (int64 i = 0; i < k->narrivals; i++)
	{
		const SfLaneKArrival *a = &k->arrivals[i];

		if (a->arrival < 1 || (uint64) a->arrival > SF_FP_LOC_MAX)
			entry_corrupt(l->lane, "An arrival is out of range.");
		lane_k_put(l, l->arr, a->offset, (uint64) a->arrival,
				   "Two K entries give one offset an arrival.");
	}
}

/*
 * The next delivery of the lane's rows: an offset replay (the lane holds
 * the offset), or the next offset: a duplicate of another lane's event or
 * a late new event (its K item says), a duplicate within the lane (its
 * map says), or a new event that was not late.
 */
static void
lane_load_delivery(SfLaneLoad *l, const SfDelivery *d, const int64 *mv)
{
	SfPipeline *lane = l->lane;
	SfPartition *part = &lane->partitions[l->pi];
	uint64		fph;
	SfFpCursor	c;
	uint16		kl;
	uint64		kv = 0;
	uint64		arrival = 0;
	bool		has_k;
	bool		has_arrival;
	uint32		handle;
	int64		m[SF_MAX_MEASURES + 2];

	if ((mv != NULL) != (lane->def.measures != NULL))
		entry_corrupt(lane, "A lane's entry does not hold the pipeline's measures.");

	if (strcmp(d->partition, lane->def.partitions[l->pi]) != 0)
		entry_corrupt(lane, "A lane's entry delivers to another partition.");
	if (d->source_offset >= 0 && d->source_offset <= part->consumed)
	{
		lane->offset_replays++;
		lane->mutations++;
		return;
	}
	if (d->source_offset != part->consumed + 1)
		entry_corrupt(lane, "A lane's entry skips an offset.");
	sf_fp_start(&c, (uint64) d->source_offset + 1);
	has_k = sf_fp_next(l->k, &c, &kl, &kv);
	sf_fp_start(&c, (uint64) d->source_offset + 1);
	has_arrival = sf_fp_next(l->arr, &c, &kl, &arrival);
	if (mv != NULL)
	{
		/* a foreign copy's arrival is 0 (no arrival), an own one's the K's */
		m[0] = (int64) arrival;
		memcpy(m + 1, mv, lane->def.measures->width * sizeof(int64));
	}
	fph = sf_fp_hash(d->event_id, (uint32) d->event_id_len);
	if (has_k && (kv >> 1) == 1)
	{
		if (has_arrival)
			entry_corrupt(lane, "A K entry gives a duplicate an arrival.");
		(void) sf_lane_add(lane, l->pi, d->event_id, d->event_id_len, d->key,
						   d->key_len, d->event_time, d->value,
						   (kv & 1) != 0, true, m);
		return;
	}
	if (lane_load_find(l, d->event_id, d->event_id_len, fph, &handle) != NULL)
	{
		if (has_k)
			entry_corrupt(lane, "A K entry calls a duplicate late.");
		if (has_arrival)
			entry_corrupt(lane, "A K entry gives a duplicate an arrival.");
		sf_partition_append(lane, l->pi, handle);
		return;
	}
	if (mv != NULL && !has_arrival)
		entry_corrupt(lane, "A new event of a lane has no arrival.");
	handle = sf_lane_add(lane, l->pi, d->event_id, d->event_id_len, d->key,
						 d->key_len, d->event_time, d->value, has_k, false, m);
	sf_fp_insert(l->ids, fph, 0, handle);
}

void
sf_lane_load_delivery(SfLaneLoad *l, const SfDelivery *d)
{
	lane_load_delivery(l, d, NULL);
}

/* sf_lane_load_delivery of a measures pipeline: mv, d's measure words */
void
sf_lane_load_delivery_measures(SfLaneLoad *l, const SfDelivery *d,
							   const int64 *mv)
{
	lane_load_delivery(l, d, mv);
}

/*
 * The end of a lane's load: every K item must have met its delivery; the
 * map and the items are freed
 */
void
sf_lane_load_end(SfLaneLoad *l)
{
	int64		consumed = l->lane->partitions[l->pi].consumed;

	for (uint64 i = 0; i <= l->k->mask; i++)
		if (l->k->slots[i].hash != 0 &&
			(int64) (l->k->slots[i].hash - 1) > consumed)
			entry_corrupt(l->lane, "A K entry names an offset the lane does not hold.");
	for (uint64 i = 0; i <= l->arr->mask; i++)
		if (l->arr->slots[i].hash != 0 &&
			(int64) (l->arr->slots[i].hash - 1) > consumed)
			entry_corrupt(l->lane, "A K entry names an offset the lane does not hold.");
	pfree(l->arr->slots);
	pfree(l->arr);
	pfree(l->ids->slots);
	pfree(l->ids);
	pfree(l->k->slots);
	pfree(l->k);
	l->ids = l->k = l->arr = NULL;
}

/*
 * The head and lanes of serial, a serial-form pipeline with the definition
 * of a parallel one (a restored checkpoint): clock, live buckets, seq and
 * late rows to the head, each partition's deliveries to its lane.  An
 * event is its first lane's (in partition order) and foreign in the
 * others.  sf_head_merge of the result is serial's state.
 */
SfHead *
sf_head_split(MemoryContext parent, SfPipeline *serial)
{
	SfHead	   *h = sf_head_create(parent, &serial->def);
	SfPipeline *hp = h->p;
	int			np = serial->def.npartitions;
	SfFingerprints *where;
	SfRow	   *rows;
	int64		nrows;
	int64	   *m = NULL;		/* measures: an identity's */
	MemoryContext old = MemoryContextSwitchTo(h->cxt);

	if (serial->def.measures != NULL)
		m = palloc((1 + serial->def.measures->width) * sizeof(int64));

	/* serial handle + 1 (never 0) -> the lane and handle it went to */
	where = sf_fp_create(CurrentMemoryContext, (uint64) serial->nidentities);
	for (int i = 0; i < np; i++)
	{
		SfPipeline *lane = h->lanes[i];
		SfPartition *part = &serial->partitions[i];

		for (int64 o = 0; o <= part->consumed; o++)
		{
			uint32		sh = part->deliveries[part->head + o];
			SfIdentity *id = sf_id_ptr(serial, sh);
			SfFpCursor	c;
			uint16		wl;
			uint64		wh;
			uint32		handle;

			if ((o & 4095) == 0)
				CHECK_FOR_INTERRUPTS();
			if (m != NULL)
				memcpy(m, sf_id_measures(serial, id),
					   (1 + serial->def.measures->width) * sizeof(int64));
			sf_fp_start(&c, (uint64) sh + 1);
			if (sf_fp_next(where, &c, &wl, &wh))
			{
				if (wl == i)	/* a duplicate within the lane */
					sf_partition_append(lane, i, (uint32) wh);
				else
				{
					if (m != NULL)
						m[0] = 0;	/* a foreign copy is no arrival */
					(void) sf_lane_add(lane, i, id->event_id,
									   id->event_id_len, id->key->data,
									   id->key->len, id->event_time,
									   id->value, id->late, true, m);
				}
				continue;
			}
			handle = sf_lane_add(lane, i, id->event_id, id->event_id_len,
								 id->key->data, id->key->len, id->event_time,
								 id->value, id->late, false, m);
			sf_fp_insert(where, (uint64) sh + 1, (uint16) i, handle);
			sf_fp_insert(h->fp, sf_fp_hash(id->event_id, id->event_id_len),
						 (uint16) i, handle);
		}
	}
	pfree(where->slots);
	pfree(where);
	if (np > 0)
		h->lanes[0]->offset_replays = serial->offset_replays;
	(void) sf_head_lane_table(h);
	for (int i = 0; i < np; i++)
		h->lane_consumed[i] = h->lanes[i]->partitions[i].consumed;

	/* the clock before the buckets: it decides their heaps */
	for (int i = 0; i < np; i++)
	{
		hp->partitions[i].has_progress = serial->partitions[i].has_progress;
		hp->partitions[i].progress = serial->partitions[i].progress;
		hp->partitions[i].idle = serial->partitions[i].idle;
	}
	hp->has_watermark = serial->has_watermark;
	hp->watermark = serial->watermark;
	nrows = sf_collect_rows(serial, false, &rows);
	for (int64 r = 0; r < nrows; r++)
		(void) sf_bucket_restore(hp, rows[r].addr.window,
								 sf_intern_key(hp, rows[r].addr.key->data,
											   rows[r].addr.key->len),
								 rows[r].addr.start, rows[r].addr.end,
								 &rows[r].agg);
	pfree(rows);
	hp->late_forgotten = serial->late_forgotten;
	for (int64 k = 0; k < serial->nlate; k++)
	{
		const SfLateEvent *le = &serial->late[k];

		sf_late_append_forgotten(hp, le->partition, le->source_offset,
								 le->event->event_id,
								 le->event->event_id_len,
								 le->event->key->data, le->event->key->len,
								 le->event->event_time, le->event->value,
								 le->watermark);
		if (m != NULL)
			sf_id_copy_measures(hp, hp->late[hp->nlate - 1].event, serial,
								le->event);
	}
	hp->seq = serial->seq;
	hp->arrivals = serial->arrivals;
	if (m != NULL)
		pfree(m);
	MemoryContextSwitchTo(old);
	return h;
}
