/*-------------------------------------------------------------------------
 *
 * parallel_codec_check.c
 *	  The internal SQL entry that tests the codec of parallel writers
 *	  (issue 46, docs/design/parallel-writers.md, build plan step 3:
 *	  codec/parallel_codec.c) inside parallel_check's random two-writer
 *	  runs (parallel_check.c), in memory.
 *
 * At every commit: the transaction's head entry (format 5) is encoded,
 * decoded and encoded again (the same bytes), and kept; each claimed
 * lane's K entry (format 6) is encoded, decoded and checked against the
 * lane.  Whenever no transaction is open:
 *	- restore split: the serial checkpoint, split into head and lanes
 *	  (sf_head_checkpoint_restore), merges back into the same bytes;
 *	- snapshots: the head (version 4) and every lane (version 5) are
 *	  encoded and decoded; the decoded head's checkpoint is the serial one,
 *	  and its snapshots are the same bytes again;
 *	- replay: the head snapshot of an earlier point (the base), decoded
 *	  with the lanes of now, replays the head entries committed since, with
 *	  the same number of changes each, into the serial checkpoint;
 *	- load: the base's head and lane snapshots, every lane's rows since
 *	  (format 3 entries of the committed deliveries, as the calls will
 *	  write them, and the K entries) and the head entries since load into
 *	  the serial checkpoint, and into lanes that hold the live lanes'
 *	  deliveries;
 *	- at random, the run continues on the decoded head or on the split one
 *	  (every later commit then runs on decoded state), or the base moves;
 *	- damaged bytes: a snapshot or an entry with a few bytes changed (the
 *	  snapshot's checksum made right half of the time, so that its payload
 *	  is read) loads or is refused with XX001, never anything else; forged
 *	  state no commit makes (an index that lacks an id, an entry that
 *	  indexes an id twice) is refused with XX001.
 * Random choices come from a generator of their own, so the calls are the
 * ones parallel_check makes with the same seed.
 *
 * Not granted to PUBLIC (sql/objects/90_parallel.sql).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/parallel_codec_check.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <zlib.h>

#include "access/htup_details.h"
#include "common/pg_prng.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "api/api.h"
#include "api/parallel_check.h"
#include "codec/codec.h"

/* a kept head entry */
typedef struct PccEntry
{
	char	   *data;
	Size		len;
	int			nchanges;
} PccEntry;

typedef struct PccState
{
	PcCodec		hooks;			/* first: the run calls these */
	pg_prng_state rng;
	MemoryContext cxt;			/* the run's */
	bytea	   *base;			/* head snapshot of the base */
	bytea	  **base_lanes;		/* its lanes' snapshots */
	PccEntry   *entries;		/* committed since the base */
	int64		nentries;
	int64		cap;
	PccEntry   *rows;			/* lane rows since the base (nchanges: the
								 * lane, negative for a K entry: -1 - lane) */
	int64		nrows;
	int64		rows_cap;
	int64		klate;			/* 'L' items of the K entries so far */
	/* what the checks did */
	int64		heads;			/* head entries encoded and decoded */
	int64		entry_bytes;
	int64		replayed;		/* head entries replayed */
	int64		kentries;
	int64		lane_rows;		/* lane rows replayed into lanes */
	int64		forged;			/* forged state refused */
	int64		snapshots;		/* head snapshots (with lanes) decoded */
	int64		splits;
	int64		continued;		/* the run went on with decoded state */
	int64		damaged;		/* damaged bytes refused with XX001 */
	int64		damaged_loaded; /* damaged bytes that still loaded */
} PccState;

static pg_attribute_noreturn() void
pcc_mismatch(const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_INTERNAL_ERROR),
			 errmsg("parallel codec check failed: %s", what)));
}

static uint32
pcc_rand(PccState *c, uint32 n)
{
	return pg_prng_uint32(&c->rng) % n;
}

static bool
same_bytes(const bytea *a, const bytea *b)
{
	return VARSIZE(a) == VARSIZE(b) &&
		memcmp(VARDATA(a), VARDATA(b), VARSIZE(a) - VARHDRSZ) == 0;
}

static void
pcc_start(PcCodec *codec, MemoryContext cxt, SfHead *h, int64 seed)
{
	PccState   *c = (PccState *) codec;
	MemoryContext old = MemoryContextSwitchTo(cxt);

	pg_prng_seed(&c->rng, (uint64) seed ^ UINT64CONST(0x5eed5eed5eed5eed));
	c->cxt = cxt;
	c->base = sf_head_snapshot_encode(h);
	c->base_lanes = palloc(h->p->def.npartitions * sizeof(bytea *));
	for (int i = 0; i < h->p->def.npartitions; i++)
		c->base_lanes[i] = sf_lane_snapshot_encode(h, i);
	c->cap = 64;
	c->entries = palloc(c->cap * sizeof(PccEntry));
	c->nentries = 0;
	c->rows_cap = 64;
	c->rows = palloc(c->rows_cap * sizeof(PccEntry));
	c->nrows = 0;
	MemoryContextSwitchTo(old);
}

/* keep a lane row (tag: the lane, or -1 - lane for a K entry) */
static void
keep_row(PccState *c, StringInfo buf, int tag)
{
	PccEntry   *k;

	if (c->nrows == c->rows_cap)
	{
		c->rows_cap *= 2;
		c->rows = repalloc(c->rows, c->rows_cap * sizeof(PccEntry));
	}
	k = &c->rows[c->nrows++];
	k->data = buf->data + VARHDRSZ;
	k->len = buf->len - VARHDRSZ;
	k->nchanges = tag;
}

/* K entry of lane pi: decoded, and every item true of the lane */
static void
check_k(PccState *c, SfHead *h, SfTxn *t, const SfHeLane *moved)
{
	StringInfoData buf;
	SfLaneK    *k;
	SfPipeline *lane = h->lanes[moved->lane];
	SfPartition *part = &lane->partitions[moved->lane];
	int64		foreign = 0;
	int64		nforeign = 0;

	if (!sf_lane_k_encode(&buf, h, t, t->entry, moved->lane))
		k = NULL;
	else
	{
		k = sf_lane_k_decode(&h->p->def, buf.data + VARHDRSZ,
							 buf.len - VARHDRSZ);
		c->kentries++;
		keep_row(c, &buf, -1 - moved->lane);
		if (k->lane != moved->lane)
			pcc_mismatch("a K entry names another lane");
	}
	for (int64 o = moved->prev + 1; o <= moved->consumed; o++)
		if (sf_id_ptr(lane, part->deliveries[part->head + o])->foreign)
			nforeign++;
	for (int64 i = 0; k != NULL && i < k->n; i++)
	{
		const SfLaneKItem *it = &k->items[i];
		SfIdentity *id;

		if (it->offset <= moved->prev || it->offset > moved->consumed)
			pcc_mismatch("a K entry names an offset of another transaction");
		id = sf_id_ptr(lane, part->deliveries[part->head + it->offset]);
		if (it->kind == 'F' && (!id->foreign || id->late != it->late))
			pcc_mismatch("a K entry's duplicate is not the lane's");
		if (it->kind == 'L' && (id->foreign || !id->late))
			pcc_mismatch("a K entry's late event is not the lane's");
		if (it->kind == 'F')
			foreign++;
		else
			c->klate++;
	}
	if (h->p->def.measures != NULL)
	{
		/* every new event of t in the lane, with its global arrival */
		int64		nnew = 0;

		for (int64 i = 0; i < t->nops; i++)
			if (t->ops[i].kind == SF_TXN_EVENT && t->ops[i].lane == moved->lane &&
				!(t->ops[i].flags & SF_TXN_DUP))
				nnew++;
		if (nnew != (k == NULL ? 0 : k->narrivals))
			pcc_mismatch("a K entry's arrivals are not the lane's new events");
		for (int64 i = 0; k != NULL && i < k->narrivals; i++)
		{
			const SfLaneKArrival *a = &k->arrivals[i];
			SfIdentity *id;

			if (a->offset <= moved->prev || a->offset > moved->consumed)
				pcc_mismatch("a K entry names an offset of another transaction");
			id = sf_id_ptr(lane, part->deliveries[part->head + a->offset]);
			if (id->foreign || sf_id_measures(lane, id)[0] != a->arrival ||
				a->arrival <= t->arrival_base)
				pcc_mismatch("a K entry's arrival is not the lane's");
		}
	}
	if (foreign != nforeign)
		pcc_mismatch(psprintf("a K entry lists %lld duplicates of other lanes, the lane holds %lld",
							  (long long) foreign, (long long) nforeign));
}

/* t committed on h with nchanges changes: its entries */
static void
pcc_commit(PcCodec *codec, SfHead *h, SfTxn *t, int nchanges,
		   const SfDelivery *ds, int64 *const *mvs, int nds)
{
	PccState   *c = (PccState *) codec;
	const SfPipelineDef *def = &h->p->def;
	SfDelivery *dl = palloc(Max(nds, 1) * sizeof(SfDelivery));
	SfDeliveryHash *hl = palloc0(Max(nds, 1) * sizeof(SfDeliveryHash));
	const SfMeasuresDef *md = def->measures;
	int64	   *ml = md == NULL ? NULL :
		palloc(Max(nds, 1) * md->width * sizeof(int64));
	MemoryContext old = MemoryContextSwitchTo(c->cxt);
	StringInfoData a;
	StringInfoData b;
	SfHeadEntry *e;
	PccEntry   *k;

	sf_head_entry_encode(&a, def, t->entry);
	e = sf_head_entry_decode(&h->p->def, a.data + VARHDRSZ, a.len - VARHDRSZ);
	sf_head_entry_encode(&b, def, e);
	if (a.len != b.len ||
		memcmp(a.data + VARHDRSZ, b.data + VARHDRSZ, a.len - VARHDRSZ) != 0)
		pcc_mismatch("a head entry decodes to other bytes");
	pfree(b.data);
	c->heads++;
	c->entry_bytes += a.len - VARHDRSZ;
	if (c->nentries == c->cap)
	{
		c->cap *= 2;
		c->entries = repalloc(c->entries, c->cap * sizeof(PccEntry));
	}
	k = &c->entries[c->nentries++];
	k->data = a.data + VARHDRSZ;
	k->len = a.len - VARHDRSZ;
	k->nchanges = nchanges;
	for (int i = 0; i < t->entry->nlanes; i++)
		check_k(c, h, t, &t->entry->lanes[i]);

	/* each lane's row: its deliveries, format 3, as the calls wrote them */
	for (int i = 0; i < def->npartitions; i++)
	{
		int			n = 0;
		StringInfoData buf;

		for (int j = 0; j < nds; j++)
			if (strcmp(ds[j].partition, def->partitions[i]) == 0)
			{
				dl[n] = ds[j];
				hl[n].partition = i;
				if (md != NULL)
					memcpy(ml + (Size) n * md->width, mvs[j],
						   md->width * sizeof(int64));
				n++;
			}
		if (n == 0)
			continue;
		if (md != NULL)
			sf_journal_encode_ingest_measures(&buf, h->lanes[i], dl, hl, n,
											  ml);
		else
			sf_journal_encode_ingest(&buf, h->lanes[i], dl, hl, n);
		keep_row(c, &buf, i);
	}
	pfree(dl);
	pfree(hl);
	if (ml != NULL)
		pfree(ml);
	MemoryContextSwitchTo(old);
}

/*
 * Run fn(arg) on damaged bytes: it must succeed or raise XX001.  Returns
 * whether it raised.
 */
static bool
pcc_damaged(void (*fn) (void *), void *arg)
{
	MemoryContext cxt = CurrentMemoryContext;
	volatile bool refused = false;

	PG_TRY();
	{
		fn(arg);
	}
	PG_CATCH();
	{
		ErrorData  *e;

		MemoryContextSwitchTo(cxt);
		e = CopyErrorData();
		FlushErrorState();
		if (e->sqlerrcode != ERRCODE_DATA_CORRUPTED)
			pcc_mismatch(psprintf("damaged bytes raised %s: %s",
								  unpack_sql_state(e->sqlerrcode), e->message));
		FreeErrorData(e);
		refused = true;
	}
	PG_END_TRY();
	return refused;
}

/* what a damaged decode works on */
typedef struct PccDamage
{
	const SfPipelineDef *def;
	bytea	   *head;
	const char **lanes;
	Size	   *lens;
	char	   *entry;
	Size		entry_len;
} PccDamage;

static void
damaged_snapshot(void *arg)
{
	PccDamage  *d = (PccDamage *) arg;
	SfHead	   *h = sf_head_snapshot_decode(CurrentMemoryContext, d->def,
											VARDATA(d->head),
											VARSIZE(d->head) - VARHDRSZ,
											d->lanes, d->lens);

	if (d->entry != NULL)
	{
		SfChangeList out = {0};

		sf_head_entry_replay(h, d->entry, d->entry_len, &out);
	}
	MemoryContextDelete(h->cxt);
}

/* change 1-3 bytes of data (len bytes), or cut it short */
static void
damage(PccState *c, char *data, Size *len, Size from)
{
	int			n = 1 + (int) pcc_rand(c, 3);

	if (*len <= from)
		return;
	if (pcc_rand(c, 8) == 0)
	{
		*len = from + pcc_rand(c, (uint32) (*len - from));
		return;
	}
	for (int i = 0; i < n; i++)
	{
		Size		at = from + pcc_rand(c, (uint32) (*len - from));

		data[at] = (char) (pcc_rand(c, 4) == 0 ? 0xFF :
						   pcc_rand(c, 2) == 0 ? data[at] ^ (1 << pcc_rand(c, 8)) :
						   pcc_rand(c, 256));
	}
}

/* a snapshot's header made right again after its payload was damaged */
static void
reseal(char *data, Size len)
{
	uint64		plen = len - 24;
	uint32		crc = crc32(0L, Z_NULL, 0);

	crc = crc32(crc, (const Bytef *) data + 24, (uInt) plen);
	for (int i = 0; i < 4; i++)
		data[12 + i] = (char) (crc >> (8 * i));
	for (int i = 0; i < 8; i++)
		data[16 + i] = (char) (plen >> (8 * i));
}

static void
pcc_damage(PccState *c, const SfPipelineDef *def, bytea *head,
		   const char **lanes, Size *lens, int np)
{
	PccDamage	d;
	int			which = (int) pcc_rand(c, 3);
	const char **dl = palloc(np * sizeof(char *));
	Size	   *dlens = palloc(np * sizeof(Size));
	bytea	   *dh = head;

	memcpy(dl, lanes, np * sizeof(char *));
	memcpy(dlens, lens, np * sizeof(Size));
	d.def = def;
	d.entry = NULL;
	d.entry_len = 0;
	if (which == 0)
	{
		/* the head snapshot */
		dh = palloc(VARSIZE(head));
		memcpy(dh, head, VARSIZE(head));
		{
			Size		len = VARSIZE(dh) - VARHDRSZ;

			damage(c, VARDATA(dh), &len, pcc_rand(c, 2) ? 24 : 0);
			if (len >= 24 && pcc_rand(c, 2) == 0)
				reseal(VARDATA(dh), len);
			SET_VARSIZE(dh, len + VARHDRSZ);
		}
	}
	else if (which == 1)
	{
		/* a lane snapshot */
		int			l = (int) pcc_rand(c, np);
		char	   *copy = palloc(lens[l]);

		memcpy(copy, lanes[l], lens[l]);
		damage(c, copy, &dlens[l], 24);
		if (dlens[l] >= 24 && pcc_rand(c, 4) != 0)
			reseal(copy, dlens[l]);
		dl[l] = copy;
	}
	else
	{
		/* a head entry, replayed on the base */
		PccEntry   *e;

		if (c->nentries == 0)
			return;
		e = &c->entries[pcc_rand(c, (uint32) c->nentries)];
		d.entry = palloc(e->len);
		memcpy(d.entry, e->data, e->len);
		d.entry_len = e->len;
		damage(c, d.entry, &d.entry_len, 0);
		dh = c->base;
	}
	d.head = dh;
	d.lanes = dl;
	d.lens = dlens;
	if (pcc_damaged(damaged_snapshot, &d))
		c->damaged++;
	else
		c->damaged_loaded++;
}

/* the checkpoint of h must be serial_ck */
static void
check_ck(SfHead *h, const bytea *serial_ck, const char *what)
{
	bytea	   *ck = sf_head_checkpoint_encode(h);

	if (!same_bytes(ck, serial_ck))
		pcc_mismatch(psprintf("the checkpoint of %s is not the serial one", what));
	pfree(ck);
}

/*
 * Lane a (loaded from storage) holds lane b's deliveries (the live one):
 * per offset the same event id, foreign or the lane's own alike, and an
 * own identity first delivered at the same offset (a foreign copy may be
 * shared by deliveries in b, where an in-flight collision made a lane's
 * own identity foreign, and not in a, which loads one copy each)
 */
static void
check_lane(const SfPipeline *a, const SfPipeline *b, int pi)
{
	const SfPartition *pa = &a->partitions[pi];
	const SfPartition *pb = &b->partitions[pi];

	if (pa->consumed != pb->consumed || a->offset_replays != b->offset_replays)
		pcc_mismatch(psprintf("a loaded lane holds offsets to %lld and %lld offset replays, the lane %lld and %lld",
							  (long long) pa->consumed,
							  (long long) a->offset_replays,
							  (long long) pb->consumed,
							  (long long) b->offset_replays));
	for (int64 o = 0; o <= pa->consumed; o++)
	{
		uint32		ha = pa->deliveries[pa->head + o];
		uint32		hb = pb->deliveries[pb->head + o];
		const SfIdentity *ia = sf_id_ptr(a, ha);
		const SfIdentity *ib = sf_id_ptr(b, hb);
		int64		fa = o;
		int64		fb = o;

		if (ia->event_id_len != ib->event_id_len ||
			memcmp(ia->event_id, ib->event_id, ia->event_id_len) != 0 ||
			ia->foreign != ib->foreign || (!ia->foreign && ia->late != ib->late))
			pcc_mismatch("a loaded lane holds another delivery");
		if (ia->foreign)
			continue;
		for (int64 q = o - 1; q >= 0; q--)
		{
			if (pa->deliveries[pa->head + q] == ha)
				fa = q;
			if (pb->deliveries[pb->head + q] == hb)
				fb = q;
		}
		if (fa != fb)
			pcc_mismatch("a loaded lane's identity is first delivered elsewhere");
	}
}

/*
 * Storage as a load reads it: the base's head and lane snapshots, then
 * every lane's rows since (its K entries registered first), then the head
 * entries since; the merged checkpoint must be the serial one
 */
static void
check_load(PccState *c, SfHead *live, const bytea *serial_ck)
{
	const SfPipelineDef *def = &live->p->def;
	int			np = def->npartitions;
	const char **lanes = palloc(np * sizeof(char *));
	Size	   *lens = palloc(np * sizeof(Size));
	SfHead	   *h;

	for (int i = 0; i < np; i++)
	{
		lanes[i] = VARDATA(c->base_lanes[i]);
		lens[i] = VARSIZE(c->base_lanes[i]) - VARHDRSZ;
	}
	h = sf_head_snapshot_decode(c->cxt, def, VARDATA(c->base),
								VARSIZE(c->base) - VARHDRSZ, lanes, lens);
	for (int i = 0; i < np; i++)
	{
		SfLaneLoad	l;

		sf_lane_load_begin(&l, h->lanes[i], i);
		for (int64 k = 0; k < c->nrows; k++)
			if (c->rows[k].nchanges == -1 - i)
				sf_lane_load_k(&l, sf_lane_k_decode(def, c->rows[k].data,
													c->rows[k].len));
		for (int64 k = 0; k < c->nrows; k++)
			if (c->rows[k].nchanges == i)
			{
				sf_lane_entry_replay(&l, c->rows[k].data, c->rows[k].len);
				c->lane_rows++;
			}
		sf_lane_load_end(&l);
		check_lane(h->lanes[i], live->lanes[i], i);
	}
	for (int64 k = 0; k < c->nentries; k++)
	{
		SfChangeList out = {0};

		sf_head_entry_replay(h, c->entries[k].data, c->entries[k].len, &out);
	}
	check_ck(h, serial_ck, "the base and the lane and head rows since");
	MemoryContextDelete(h->cxt);
}

/* run fn(arg): it must raise XX001 */
static void
pcc_forged(PccState *c, void (*fn) (void *), void *arg, const char *what)
{
	if (!pcc_damaged(fn, arg))
		pcc_mismatch(psprintf("forged state loaded: %s", what));
	c->forged++;
}

typedef struct PccForge
{
	const SfPipelineDef *def;
	bytea	   *head;
	const char **lanes;
	Size	   *lens;
	PccState   *c;
	int64		upto;			/* entries before the forged one; a lane's:
								 * the K row forged */
	char	   *entry;
	Size		entry_len;
	int			lane;			/* a lane's: its partition */
} PccForge;

static void
forged_snapshot(void *arg)
{
	PccForge   *f = (PccForge *) arg;
	SfHead	   *h = sf_head_snapshot_decode(CurrentMemoryContext, f->def,
											VARDATA(f->head),
											VARSIZE(f->head) - VARHDRSZ,
											f->lanes, f->lens);

	MemoryContextDelete(h->cxt);
}

static void
forged_entry(void *arg)
{
	PccForge   *f = (PccForge *) arg;
	PccState   *c = f->c;
	SfHead	   *h = sf_head_snapshot_decode(CurrentMemoryContext, f->def,
											VARDATA(c->base),
											VARSIZE(c->base) - VARHDRSZ,
											f->lanes, f->lens);
	SfChangeList out = {0};

	for (int64 k = 0; k < f->upto; k++)
		sf_head_entry_replay(h, c->entries[k].data, c->entries[k].len, &out);
	sf_head_entry_replay(h, f->entry, f->entry_len, &out);
	MemoryContextDelete(h->cxt);
}

/*
 * A lane loaded from the base and its rows since, one K entry (row upto)
 * without its last arrival: a new event of the lane has no arrival
 */
static void
forged_lane(void *arg)
{
	PccForge   *f = (PccForge *) arg;
	PccState   *c = f->c;
	int			np = f->def->npartitions;
	const char **lanes = palloc(np * sizeof(char *));
	Size	   *lens = palloc(np * sizeof(Size));
	SfHead	   *h;
	SfLaneLoad	l;

	for (int i = 0; i < np; i++)
	{
		lanes[i] = VARDATA(c->base_lanes[i]);
		lens[i] = VARSIZE(c->base_lanes[i]) - VARHDRSZ;
	}
	h = sf_head_snapshot_decode(CurrentMemoryContext, f->def, VARDATA(c->base),
								VARSIZE(c->base) - VARHDRSZ, lanes, lens);
	sf_lane_load_begin(&l, h->lanes[f->lane], f->lane);
	for (int64 k = 0; k < c->nrows; k++)
		if (c->rows[k].nchanges == -1 - f->lane)
		{
			SfLaneK    *kk = sf_lane_k_decode(f->def, c->rows[k].data,
											  c->rows[k].len);

			if (k == f->upto)
				kk->narrivals--;
			sf_lane_load_k(&l, kk);
		}
	for (int64 k = 0; k < c->nrows; k++)
		if (c->rows[k].nchanges == f->lane)
			sf_lane_entry_replay(&l, c->rows[k].data, c->rows[k].len);
	sf_lane_load_end(&l);
	MemoryContextDelete(h->cxt);
}

/*
 * Forged state that is well formed but no commit makes must be refused:
 * a head snapshot whose index lacks an id its lane holds, or whose late row
 * is not its lane's late event, and a head entry that indexes an id twice
 */
static void
check_forged(PccState *c, SfHead *h, bytea *head, const char **lanes,
			 Size *lens)
{
	const SfPipelineDef *def = &h->p->def;
	PccForge	f;

	memset(&f, 0, sizeof(f));
	f.def = def;
	f.lanes = lanes;
	f.lens = lens;
	f.c = c;
	if (h->fp->n > 0)
	{
		SfHead	   *copy = sf_head_snapshot_decode(c->cxt, def, VARDATA(head),
												   VARSIZE(head) - VARHDRSZ,
												   lanes, lens);

		for (uint64 i = 0; i <= copy->fp->mask; i++)
			if (copy->fp->slots[i].hash != 0)
			{
				SfFpSlot	slot = copy->fp->slots[i];

				(void) sf_fp_remove(copy->fp, slot.hash,
									(uint16) (slot.where >> 48),
									slot.where & SF_FP_LOC_MAX);
				f.head = sf_head_snapshot_encode(copy);
				pcc_forged(c, forged_snapshot, &f,
						   "a head snapshot whose index lacks an id");
				break;
			}
		MemoryContextDelete(copy->cxt);
	}
	if (h->fp->n > 0 && def->measures != NULL)
	{
		/* a measures pipeline: arrivals that do not count its identities */
		SfHead	   *copy = sf_head_snapshot_decode(c->cxt, def, VARDATA(head),
												   VARSIZE(head) - VARHDRSZ,
												   lanes, lens);

		copy->p->arrivals--;
		f.head = sf_head_snapshot_encode(copy);
		pcc_forged(c, forged_snapshot, &f,
				   "a head snapshot whose arrivals miss an identity");
		MemoryContextDelete(copy->cxt);
	}
	if (h->p->nlate > 0)
	{
		/* a late row whose value is not its lane's late event's */
		SfHead	   *copy = sf_head_snapshot_decode(c->cxt, def, VARDATA(head),
												   VARSIZE(head) - VARHDRSZ,
												   lanes, lens);

		copy->p->late[copy->p->nlate - 1].event->value++;
		f.head = sf_head_snapshot_encode(copy);
		pcc_forged(c, forged_snapshot, &f,
				   "a head snapshot whose late row is not its lane's event");
		MemoryContextDelete(copy->cxt);
	}
	for (int64 k = 0; def->measures != NULL && k < c->nentries; k++)
	{
		SfHeadEntry *e = sf_head_entry_decode(def, c->entries[k].data,
											  c->entries[k].len);
		StringInfoData buf;

		/* an arrival base that is not the head's arrivals */
		e->arrival_base++;
		for (int64 i = 0; i < e->nops; i++)
			if (e->ops[i].mv != NULL)
				((int64 *) e->ops[i].mv)[0]++;
		sf_head_entry_encode(&buf, def, e);
		f.upto = k;
		f.entry = buf.data + VARHDRSZ;
		f.entry_len = buf.len - VARHDRSZ;
		pcc_forged(c, forged_entry, &f,
				   "a head entry whose arrival base is not the head's");
		break;
	}
	for (int64 k = 0; def->measures != NULL && k < c->nrows; k++)
	{
		if (c->rows[k].nchanges >= 0 ||
			sf_lane_k_decode(def, c->rows[k].data,
							 c->rows[k].len)->narrivals == 0)
			continue;
		f.upto = k;
		f.lane = -1 - c->rows[k].nchanges;
		pcc_forged(c, forged_lane, &f, "a lane's K entry that lost an arrival");
		break;
	}
	for (int64 k = 0; k < c->nentries; k++)
	{
		SfHeadEntry *e = sf_head_entry_decode(def, c->entries[k].data,
											  c->entries[k].len);
		StringInfoData buf;

		if (e->nfps == 0)
			continue;
		e->fps = repalloc(e->fps, (e->nfps + 1) * sizeof(SfHeFp));
		e->fps[e->nfps] = e->fps[0];
		e->nfps++;
		sf_head_entry_encode(&buf, def, e);
		f.upto = k;
		f.entry = buf.data + VARHDRSZ;
		f.entry_len = buf.len - VARHDRSZ;
		pcc_forged(c, forged_entry, &f, "a head entry that indexes an id twice");
		break;
	}
}

/* the late events of h's lanes, each counted in the lane that owns it */
static int64
lanes_late(SfHead *h)
{
	int64		late = 0;

	for (int i = 0; i < h->p->def.npartitions; i++)
	{
		SfPipeline *lane = h->lanes[i];
		SfPartition *part = &lane->partitions[i];

		for (int64 o = 0; o <= part->consumed; o++)
		{
			uint32		handle = part->deliveries[part->head + o];
			SfIdentity *id = sf_id_ptr(lane, handle);
			bool		first = true;

			if (id->foreign || !id->late)
				continue;
			for (int64 q = o - 1; q >= 0 && first; q--)
				first = part->deliveries[part->head + q] != handle;
			late += first;
		}
	}
	return late;
}

/* the counters of the head the run continues with go on */
static void
pcc_continue(PccState *c, SfHead **h, SfHead *next)
{
	next->redecides = (*h)->redecides;
	next->collisions = (*h)->collisions;
	next->exact_applies = (*h)->exact_applies;
	MemoryContextDelete((*h)->cxt);
	*h = next;
	c->continued++;
}

/*
 * No transaction is open on *h, whose merged checkpoint is serial_ck (the
 * serial engine's): the checks of the file header; *h may be replaced.
 */
static void
pcc_quiet(PcCodec *codec, SfHead **hp, const bytea *serial_ck)
{
	PccState   *c = (PccState *) codec;
	SfHead	   *h = *hp;
	const SfPipelineDef *def = &h->p->def;
	int			np = def->npartitions;
	MemoryContext old = MemoryContextSwitchTo(c->cxt);
	bytea	  **lb = palloc(np * sizeof(bytea *));
	const char **lanes = palloc(np * sizeof(char *));
	Size	   *lens = palloc(np * sizeof(Size));
	bytea	   *head;
	SfHead	   *decoded;
	SfHead	   *split;
	SfHead	   *replayed;
	int64		late = 0;

	CHECK_FOR_INTERRUPTS();

	/* restore split, then merge */
	split = sf_head_checkpoint_restore(c->cxt, def, VARDATA_ANY(serial_ck),
									   VARSIZE_ANY_EXHDR(serial_ck));
	check_ck(split, serial_ck, "a restored split");
	c->splits++;

	/* snapshots of head and lanes */
	head = sf_head_snapshot_encode(h);
	for (int i = 0; i < np; i++)
	{
		lb[i] = sf_lane_snapshot_encode(h, i);
		lanes[i] = VARDATA(lb[i]);
		lens[i] = VARSIZE(lb[i]) - VARHDRSZ;
	}
	decoded = sf_head_snapshot_decode(c->cxt, def, VARDATA(head),
									  VARSIZE(head) - VARHDRSZ, lanes, lens);
	check_ck(decoded, serial_ck, "a decoded snapshot");
	{
		bytea	   *again = sf_head_snapshot_encode(decoded);

		if (!same_bytes(head, again))
			pcc_mismatch("a decoded head snapshot encodes to other bytes");
		for (int i = 0; i < np; i++)
		{
			bytea	   *l = sf_lane_snapshot_encode(decoded, i);

			if (!same_bytes(lb[i], l))
				pcc_mismatch("a decoded lane snapshot encodes to other bytes");
		}
	}
	c->snapshots++;

	/* the base and the head entries since, on the lanes of now */
	replayed = sf_head_snapshot_decode(c->cxt, def, VARDATA(c->base),
									   VARSIZE(c->base) - VARHDRSZ, lanes,
									   lens);
	for (int64 k = 0; k < c->nentries; k++)
	{
		SfChangeList out = {0};

		sf_head_entry_replay(replayed, c->entries[k].data, c->entries[k].len,
							 &out);
		if (out.n != c->entries[k].nchanges)
			pcc_mismatch(psprintf("a replayed head entry made %d changes, its commit %d",
								  out.n, c->entries[k].nchanges));
		c->replayed++;
	}
	check_ck(replayed, serial_ck, "the replayed head entries");
	for (int i = 0; i < np; i++)
		if (replayed->lane_consumed[i] != h->lanes[i]->partitions[i].consumed)
			pcc_mismatch("the replayed lane table is not the lanes'");

	/* the base, the lanes' rows and the head entries since, as a load */
	check_load(c, h, serial_ck);
	if (pcc_rand(c, 4) == 0)
		check_forged(c, h, head, lanes, lens);

	/* every late event of a lane came with its K entry */
	late = lanes_late(h);
	if (late != c->klate)
		pcc_mismatch(psprintf("the lanes hold %lld late events, the K entries listed %lld",
							  (long long) late, (long long) c->klate));

	/* damaged bytes: loaded or XX001 */
	if (pcc_rand(c, 2) == 0)
		for (int n = 0; n < 4; n++)
			pcc_damage(c, def, head, lanes, lens, np);

	/* go on with decoded state, move the base */
	MemoryContextDelete(replayed->cxt);
	switch (pcc_rand(c, 6))
	{
		case 0:
			pcc_continue(c, hp, decoded);
			decoded = NULL;
			break;
		case 1:
			/* an event is now its first lane's in partition order */
			pcc_continue(c, hp, split);
			split = NULL;
			c->klate = lanes_late(*hp);
			break;
		default:
			break;
	}
	if (decoded != NULL)
		MemoryContextDelete(decoded->cxt);
	if (split != NULL)
		MemoryContextDelete(split->cxt);

	/*
	 * The base moves here: the entries so far are in it.  It must after a
	 * split, whose lanes own some events another lane owned before.
	 */
	if (split == NULL || pcc_rand(c, 3) == 0)
	{
		pfree(c->base);
		c->base = sf_head_snapshot_encode(*hp);
		for (int i = 0; i < np; i++)
		{
			pfree(c->base_lanes[i]);
			c->base_lanes[i] = sf_lane_snapshot_encode(*hp, i);
		}
		c->nentries = 0;
		c->nrows = 0;
	}
	pfree(head);
	MemoryContextSwitchTo(old);
}

/*
 * streamforge_internal.parallel_codec_check(pipeline text, calls int, seed
 * bigint): parallel_check's run (the same calls for the same seed) with
 * the codec's checks of the file header; raises XX000 at the first
 * difference.  Returns what the run and the checks did.
 */
PG_FUNCTION_INFO_V1(sf_parallel_codec_check);
Datum
sf_parallel_codec_check(PG_FUNCTION_ARGS)
{
#define PARALLEL_CODEC_CHECK_COLS 14
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	int32		calls = PG_GETARG_INT32(1);
	int64		seed = PG_GETARG_INT64(2);
	TupleDesc	tupdesc;
	Datum		values[PARALLEL_CODEC_CHECK_COLS];
	bool		nulls[PARALLEL_CODEC_CHECK_COLS] = {0};
	PcSummary	sum;
	PccState	c;
	int			i = 0;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	memset(&c, 0, sizeof(c));
	c.hooks.start = pcc_start;
	c.hooks.commit = pcc_commit;
	c.hooks.quiet = pcc_quiet;
	sf_pc_run(name, calls, seed, false, &c.hooks, &sum);

	values[i++] = Int64GetDatum(sum.transactions);
	values[i++] = Int64GetDatum(sum.changes);
	values[i++] = Int64GetDatum(c.heads);
	values[i++] = Int64GetDatum(c.entry_bytes);
	values[i++] = Int64GetDatum(c.replayed);
	values[i++] = Int64GetDatum(c.kentries);
	values[i++] = Int64GetDatum(c.lane_rows);
	values[i++] = Int64GetDatum(c.snapshots);
	values[i++] = Int64GetDatum(c.splits);
	values[i++] = Int64GetDatum(c.continued);
	values[i++] = Int64GetDatum(c.damaged);
	values[i++] = Int64GetDatum(c.damaged_loaded);
	values[i++] = Int64GetDatum(c.forged);
	if (sum.error != 0)
		values[i++] = CStringGetTextDatum(unpack_sql_state(sum.error));
	else
		nulls[i++] = true;
	Assert(i == PARALLEL_CODEC_CHECK_COLS);
	tupdesc = BlessTupleDesc(tupdesc);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values,
													  nulls)));
}
