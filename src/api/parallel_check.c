/*-------------------------------------------------------------------------
 *
 * parallel_check.c
 *	  Internal SQL entries that test the engine parts of parallel writers
 *	  (issue 46, docs/design/parallel-writers.md, build plan step 2)
 *	  against a reference, in memory: lanes, transaction deltas and the
 *	  head against the serial engine (parallel_check reads a pipeline's
 *	  definition, nothing else); the run is also parallel_codec_check's
 *	  (parallel_codec_check.c).  The fingerprint index's entries are in
 *	  fingerprint_check.c.
 *
 * Not granted to PUBLIC (sql/objects/90_parallel.sql); the regress test
 * parallel_engine calls them as the superuser.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/parallel_check.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

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
#include "engine/parallel.h"
#include "persist/persist.h"


/* ----------------------------------------------------------------
 * Lanes, delta and head against the serial engine
 * ----------------------------------------------------------------
 */

/* one recorded call of a writer, replayed on the serial pipeline at commit */
typedef struct PcCall
{
	int			kind;			/* SF_TXN_EVENT: deliveries; _ADVANCE; _IDLE */
	int			n;
	SfDelivery *ds;
	int64	  **mvs;			/* a measures pipeline: each delivery's */
	int			partition;
	int64		progress;
	int			end;			/* serial: its changes end there */
	int64		seq;			/* serial: the seq and late_seq after it */
	int64		late_seq;
} PcCall;

/* an open transaction of the simulated writers */
typedef struct PcSlot
{
	SfTxn	   *t;
	bool	   *claimed;		/* [npartitions] */
	int			nclaimed;
	PcCall	   *calls;
	int			ncalls;
	int			cap;
} PcSlot;

/* a generated unique event, for duplicates */
typedef struct PcEvent
{
	char	   *id;
	char	   *key;
	int64		event_time;
	int64		value;
	int64	   *mv;				/* a measures pipeline: its measures */
} PcEvent;

typedef struct PcRun
{
	pg_prng_state rng;
	SfPipeline *serial;
	SfHead	   *head;
	MemoryContext cxt;
	int			np;
	PcSlot		slots[2];
	PcEvent    *pool;
	int64		npool;
	int64		pool_cap;
	int64		now;
	int64		next_id;
	/* what the run exercised */
	int64		transactions;
	int64		deliveries;
	int64		late;
	int64		alone;
	int64		duplicates;
	int64		replays;
	int64		changes;
	int64		checkpoints;
	int64		rollbacks;		/* calls in a subtransaction that aborted */
	int64		refused;		/* pc_bad_call's refused deliveries */
	SfDelivery *bad_d;			/* pc_bad_call's delivery */
	int64	   *bad_mv;
	int			error;			/* SQLSTATE both raised at a commit: stop */
	PcCodec    *codec;			/* parallel_codec_check's checks, or NULL */
} PcRun;

static pg_attribute_noreturn() void
pc_mismatch(PcRun *r, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_INTERNAL_ERROR),
			 errmsg("parallel engine differs from the serial engine after transaction " INT64_FORMAT ": %s",
					r->transactions, what)));
}

static uint32
pc_rand(PcRun *r, uint32 n)
{
	return pg_prng_uint32(&r->rng) % n;
}

static bool
pc_same_change(const SfChange *a, const SfChange *b)
{
	return a->seq == b->seq && a->op == b->op &&
		a->row.addr.window == b->row.addr.window &&
		a->row.addr.start == b->row.addr.start &&
		a->row.addr.end == b->row.addr.end &&
		a->row.addr.key->len == b->row.addr.key->len &&
		memcmp(a->row.addr.key->data, b->row.addr.key->data,
			   a->row.addr.key->len) == 0 &&
		a->row.agg.count == b->row.agg.count &&
		a->row.agg.sum == b->row.agg.sum &&
		a->row.agg.min == b->row.agg.min &&
		a->row.agg.max == b->row.agg.max;
}

/* checkpoint of the serial pipeline == checkpoint of head and lanes merged */
static void
pc_compare_checkpoints(PcRun *r)
{
	SfPipeline *m = sf_head_merge(r->cxt, r->head);
	bytea	   *a = sf_checkpoint_encode(r->serial);
	bytea	   *b = sf_checkpoint_encode(m);

	if (VARSIZE(a) != VARSIZE(b) ||
		memcmp(VARDATA(a), VARDATA(b), VARSIZE(a) - VARHDRSZ) != 0)
	{
		char	   *da = sf_checkpoint_document(VARDATA(a), VARSIZE(a) - VARHDRSZ);
		char	   *db = sf_checkpoint_document(VARDATA(b), VARSIZE(b) - VARHDRSZ);
		size_t		i = 0;

		while (da[i] != '\0' && da[i] == db[i])
			i++;
		i = i > 40 ? i - 40 : 0;
		pc_mismatch(r, psprintf("checkpoints differ: serial ...%.120s..., parallel ...%.120s...",
								da + Min(i, strlen(da)), db + Min(i, strlen(db))));
	}
	sf_pipeline_free(m);
	pfree(b);
	r->checkpoints++;
	if (r->codec != NULL)
		r->codec->quiet(r->codec, &r->head, a);
	pfree(a);
}

static PcCall *
pc_call(PcSlot *s, int kind)
{
	PcCall	   *c;

	if (s->ncalls == s->cap)
	{
		s->cap = s->cap ? s->cap * 2 : 16;
		s->calls = s->calls ? repalloc(s->calls, s->cap * sizeof(PcCall)) :
			palloc(s->cap * sizeof(PcCall));
	}
	c = &s->calls[s->ncalls++];
	memset(c, 0, sizeof(PcCall));
	c->kind = kind;
	return c;
}

static void
pc_begin(PcRun *r, PcSlot *s, PcSlot *other)
{
	s->t = sf_txn_begin(r->cxt, r->head);
	s->claimed = palloc0(r->np * sizeof(bool));
	s->nclaimed = 0;
	s->ncalls = 0;
	for (int i = 0; i < r->np; i++)
		if ((other->t == NULL || !other->claimed[i]) && pc_rand(r, 2) == 0)
		{
			s->claimed[i] = true;
			s->nclaimed++;
		}
}

/*
 * Random measures for a new event of a measures pipeline: small values
 * (ties for min, max, first and last), NULL now and then for a nullable
 * measure; measure 0 is the delivery's value.
 */
static int64 *
pc_measures(PcRun *r, const SfMeasuresDef *md)
{
	int64	   *mv = palloc0(md->width * sizeof(int64));

	for (int m = 0; m < md->nmeasures; m++)
	{
		if ((md->nullable & (1U << m)) != 0 && pc_rand(r, 4) == 0)
			mv[md->nmeasures] |= (int64) (1U << m);
		else
			mv[m] = (int64) pc_rand(r, 21) - 10;
	}
	return mv;
}

/*
 * one delivery to a claimed partition: next offset, replay or duplicate;
 * *mv its measures (a measures pipeline), else NULL
 */
static void
pc_delivery(PcRun *r, PcSlot *s, SfDelivery *d, int64 **mv)
{
	const SfMeasuresDef *md = r->head->p->def.measures;

	int			k = (int) pc_rand(r, s->nclaimed);
	int			pi = 0;
	SfPipeline *lane;
	SfPartition *part;
	uint32		x = pc_rand(r, 100);

	for (pi = 0; pi < r->np; pi++)
		if (s->claimed[pi] && k-- == 0)
			break;
	lane = r->head->lanes[pi];
	part = &lane->partitions[pi];
	memset(d, 0, sizeof(SfDelivery));
	d->partition = r->head->p->def.partitions[pi];
	d->source_offset = part->consumed + 1;
	if (x < 8 && part->consumed >= 0)
	{
		/* an offset replay: the same delivery again */
		int64		o = (int64) pc_rand(r, (uint32) part->consumed + 1);
		SfIdentity *id = sf_id_ptr(lane, part->deliveries[part->head + o]);

		d->source_offset = o;
		d->event_id = pnstrdup(id->event_id, id->event_id_len);
		d->event_id_len = id->event_id_len;
		d->key = pnstrdup(id->key->data, id->key->len);
		d->key_len = id->key->len;
		d->event_time = id->event_time;
		d->value = id->value;
		*mv = md == NULL ? NULL : sf_id_measures(lane, id) + 1;
		return;
	}
	if (x < 25 && r->npool > 0)
	{
		/* a duplicate of any event so far, committed or in flight */
		PcEvent    *e = &r->pool[pc_rand(r, (uint32) r->npool)];

		d->event_id = e->id;
		d->key = e->key;
		d->event_time = e->event_time;
		d->value = e->value;
		*mv = e->mv;
	}
	else
	{
		PcEvent    *e;

		if (r->npool == r->pool_cap)
		{
			r->pool_cap *= 2;
			r->pool = repalloc(r->pool, r->pool_cap * sizeof(PcEvent));
		}
		e = &r->pool[r->npool++];
		e->id = psprintf("e" INT64_FORMAT, r->next_id++);
		e->key = psprintf("k%u", pc_rand(r, 5));
		e->event_time = r->now + (int64) pc_rand(r, 31) - 25;
		e->value = (int64) pc_rand(r, 101) - 50;
		e->mv = NULL;
		if (md != NULL)
		{
			e->mv = pc_measures(r, md);
			e->value = e->mv[0];
		}
		d->event_id = e->id;
		d->key = e->key;
		d->event_time = e->event_time;
		d->value = e->value;
		*mv = e->mv;
	}
	d->event_id_len = strlen(d->event_id);
	d->key_len = strlen(d->key);
}

/*
 * Lane l as the layers above will rebuild it after a subtransaction abort:
 * its deliveries up to offset upto, in a new pipeline whose identities
 * start after a record nothing refers to, so that every handle moves.
 */
static SfPipeline *
pc_rebuild_lane(PcRun *r, int l, int64 upto, int64 replays)
{
	SfPipeline *old = r->head->lanes[l];
	SfPartition *part = &old->partitions[l];
	SfPipeline *n = sf_pipeline_create(r->head->cxt, &old->def);
	uint32		h;

	(void) sf_identity_add(n, "padding", 7, sf_intern_key(n, "", 0), 0, 0,
						   false, &h);
	for (int64 o = 0; o <= upto; o++)
	{
		SfIdentity *id = sf_id_ptr(old, part->deliveries[part->head + o]);
		SfIdentity *nid = sf_idtable_lookup(n, id->event_id, id->event_id_len,
											sf_hash_event_id(id->event_id,
															 id->event_id_len),
											&h);

		if (nid == NULL)
		{
			nid = sf_identity_add(n, id->event_id, id->event_id_len,
								  sf_intern_key(n, id->key->data,
												id->key->len),
								  id->event_time, id->value, id->late, &h);
			nid->foreign = id->foreign;
			if (n->def.measures != NULL)
				memcpy(sf_id_measures(n, nid), sf_id_measures(old, id),
					   (1 + n->def.measures->width) * sizeof(int64));
		}
		sf_partition_append(n, l, h);
	}
	n->offset_replays = replays;
	return n;
}

static int	pc_try(void (*fn) (PcRun *, PcSlot *, SfChangeList *), PcRun *r,
				   PcSlot *s, SfChangeList *out);

/* pc_try's function for pc_bad_call */
static void
pc_run_bad(PcRun *r, PcSlot *s, SfChangeList *out)
{
	sf_txn_ingest_measures(s->t, r->bad_d, r->bad_mv);
}

/*
 * A measures pipeline's call that the serial engine refuses, in a
 * subtransaction that aborts: a delivery that repeats one of a claimed
 * lane's, with its second measure changed, at its offset (SF003) or at
 * the next offset (a duplicate with other measures: SF002).
 */
static void
pc_bad_call(PcRun *r, PcSlot *s)
{
	const SfMeasuresDef *md = r->head->p->def.measures;
	int			k = (int) pc_rand(r, s->nclaimed);
	int			pi;
	SfPipeline *lane;
	SfPartition *part;
	SfIdentity *id;
	SfDelivery	d = {0};
	int64	   *mv;
	int64		o;
	bool		replay = pc_rand(r, 2) == 0;
	SfTxnMark	mark;
	int			code;
	int			want = replay ? ERRCODE_SF_OFFSET_CONFLICT :
		ERRCODE_SF_IDENTITY_CONFLICT;

	for (pi = 0; pi < r->np; pi++)
		if (s->claimed[pi] && k-- == 0)
			break;
	lane = r->head->lanes[pi];
	part = &lane->partitions[pi];
	if (md->nmeasures < 2 || part->consumed < 0)
		return;
	o = (int64) pc_rand(r, (uint32) part->consumed + 1);
	id = sf_id_ptr(lane, part->deliveries[part->head + o]);
	d.partition = r->head->p->def.partitions[pi];
	d.source_offset = replay ? o : part->consumed + 1;
	d.event_id = pnstrdup(id->event_id, id->event_id_len);
	d.event_id_len = id->event_id_len;
	d.key = pnstrdup(id->key->data, id->key->len);
	d.key_len = id->key->len;
	d.event_time = id->event_time;
	d.value = id->value;
	mv = palloc(md->width * sizeof(int64));
	memcpy(mv, sf_id_measures(lane, id) + 1, md->width * sizeof(int64));
	if (md->nullable & (1U << 1))
		mv[md->nmeasures] &= ~(int64) (1U << 1);
	mv[1] += 100;

	sf_txn_mark(s->t, &mark);
	r->bad_d = &d;
	r->bad_mv = mv;
	code = pc_try(pc_run_bad, r, s, NULL);
	if (code != want)
		pc_mismatch(r, psprintf("a refused delivery raised %s, the serial engine %s",
								code ? pstrdup(unpack_sql_state(code)) : "nothing",
								unpack_sql_state(want)));
	sf_txn_rollback_to(s->t, &mark);
	r->refused++;
}

/* one call of the writer in slot s */
static void
pc_step(PcRun *r, PcSlot *s)
{
	uint32		x = pc_rand(r, 100);
	bool		savepoint = pc_rand(r, 100) < 10;
	SfTxnMark	mark;
	int64	   *consumed = NULL;
	int64	   *replays = NULL;
	int			ncalls = s->ncalls;

	if (savepoint)
	{
		/* the call runs in a subtransaction, which may abort */
		sf_txn_mark(s->t, &mark);
		consumed = palloc(r->np * sizeof(int64));
		replays = palloc(r->np * sizeof(int64));
		for (int i = 0; i < r->np; i++)
		{
			consumed[i] = r->head->lanes[i]->partitions[i].consumed;
			replays[i] = r->head->lanes[i]->offset_replays;
		}
	}

	r->now += pc_rand(r, 4);
	if (r->head->p->def.measures != NULL && s->nclaimed > 0 &&
		pc_rand(r, 40) == 0)
		pc_bad_call(r, s);
	if (x < 70 && s->nclaimed > 0)
	{
		PcCall	   *c = pc_call(s, SF_TXN_EVENT);

		c->n = 1 + (int) pc_rand(r, 8);
		c->ds = palloc(c->n * sizeof(SfDelivery));
		c->mvs = palloc(c->n * sizeof(int64 *));
		for (int i = 0; i < c->n; i++)
		{
			pc_delivery(r, s, &c->ds[i], &c->mvs[i]);
			if (c->mvs[i] != NULL)
			{
				/* a copy: a replay's are its lane identity's */
				size_t		sz = r->head->p->def.measures->width * sizeof(int64);
				int64	   *copy = palloc(sz);

				memcpy(copy, c->mvs[i], sz);
				c->mvs[i] = copy;
				sf_txn_ingest_measures(s->t, &c->ds[i], c->mvs[i]);
			}
			else
				sf_txn_ingest(s->t, &c->ds[i]);
		}
		r->deliveries += c->n;
	}
	else if (x < 95)
	{
		PcCall	   *c = pc_call(s, SF_TXN_ADVANCE);

		c->partition = (int) pc_rand(r, r->np);
		c->progress = r->now - (int64) pc_rand(r, 16);
		sf_txn_advance(s->t, r->head->p->def.partitions[c->partition],
					   c->progress);
	}
	else if (pc_rand(r, 20) == 0)
	{
		/* rarely: every later event is late */
		(void) pc_call(s, SF_TXN_FINISH);
		sf_txn_finish(s->t);
	}
	else
	{
		PcCall	   *c = pc_call(s, SF_TXN_IDLE);

		c->partition = (int) pc_rand(r, r->np);
		sf_txn_mark_idle(s->t, r->head->p->def.partitions[c->partition]);
	}
	sf_txn_end_call(s->t);
	if (savepoint && pc_rand(r, 2) == 0)
	{
		/* it aborts: the call is gone, its lanes rebuilt */
		sf_txn_rollback_to(s->t, &mark);
		for (int i = 0; i < r->np; i++)
			if (s->claimed[i])
				sf_head_replace_lane(r->head, s->t, i,
									 pc_rebuild_lane(r, i, consumed[i],
													 replays[i]));
		s->ncalls = ncalls;
		r->rollbacks++;
	}
}

/*
 * Run fn(r, s, out) and return the SQLSTATE of the error it raised, or 0.
 * Only engine code on in-memory pipelines runs inside: nothing shared to
 * clean up, and the pipelines an error leaves half changed are not used
 * again (the run stops, as a failed commit discards the cached state).
 */
static int
pc_try(void (*fn) (PcRun *, PcSlot *, SfChangeList *), PcRun *r, PcSlot *s,
	   SfChangeList *out)
{
	MemoryContext cxt = CurrentMemoryContext;
	volatile int code = 0;

	PG_TRY();
	{
		fn(r, s, out);
	}
	PG_CATCH();
	{
		ErrorData  *e;

		MemoryContextSwitchTo(cxt);
		e = CopyErrorData();
		FlushErrorState();
		code = e->sqlerrcode;
		FreeErrorData(e);
	}
	PG_END_TRY();
	return code;
}

static void
pc_run_head(PcRun *r, PcSlot *s, SfChangeList *out)
{
	sf_head_commit(r->head, s->t, out);
}

/*
 * the transaction's calls, in order, on the serial pipeline; each call's
 * end in out in s->calls[i].end
 */
static void
pc_run_serial(PcRun *r, PcSlot *s, SfChangeList *out)
{
	for (int i = 0; i < s->ncalls; i++)
	{
		PcCall	   *c = &s->calls[i];

		if (c->kind == SF_TXN_EVENT)
			for (int j = 0; j < c->n; j++)
			{
				if (c->mvs[j] != NULL)
					sf_engine_ingest_measures(r->serial, &c->ds[j], NULL,
											  c->mvs[j], out);
				else
					sf_engine_ingest(r->serial, &c->ds[j], out);
			}
		else if (c->kind == SF_TXN_ADVANCE)
			sf_engine_advance(r->serial,
							  r->serial->def.partitions[c->partition],
							  c->progress, out);
		else if (c->kind == SF_TXN_FINISH)
		{
			/* what api/ingest.c's finish does */
			int		   *order = palloc(r->np * sizeof(int));
			int			n = sf_finish_order(r->serial, order);

			for (int k = 0; k < n; k++)
				sf_engine_advance(r->serial,
								  r->serial->def.partitions[order[k]],
								  PG_INT64_MAX, out);
		}
		else
			sf_engine_mark_idle(r->serial,
								r->serial->def.partitions[c->partition],
								out);
		c->end = out->n;
		c->seq = r->serial->seq;
		c->late_seq = r->serial->late_forgotten + r->serial->nlate;
	}
}

/*
 * Commit slot s: the head apply and the same calls on the serial pipeline,
 * compared.  An error must be the serial run's, raised at commit instead
 * of at the call (design 4.5: SF002, 22003, 54000 at COMMIT); it ends the
 * run (r->error).
 */
static void
pc_commit(PcRun *r, PcSlot *s, PcSlot *other)
{
	SfChangeList hout = {0};
	SfChangeList sout = {0};
	int			herr = pc_try(pc_run_head, r, s, &hout);
	int			serr = pc_try(pc_run_serial, r, s, &sout);

	r->transactions++;
	if (herr != serr)
		pc_mismatch(r, psprintf("the commit raised %s, the serial engine %s",
								herr ? pstrdup(unpack_sql_state(herr)) : "nothing",
								serr ? pstrdup(unpack_sql_state(serr)) : "nothing"));
	if (herr != 0)
	{
		r->error = herr;
		return;
	}
	if (other->t != NULL)
		sf_txn_note_commit(other->t, s->t);
	if (hout.n != sout.n)
		pc_mismatch(r, psprintf("%d changes, the serial engine's %d",
								hout.n, sout.n));
	if (s->t->ncalls != s->ncalls)
		pc_mismatch(r, psprintf("%d calls, %d made", s->t->ncalls, s->ncalls));
	for (int i = 0; i < s->ncalls; i++)
		if (s->t->call_end[i] != s->calls[i].end)
			pc_mismatch(r, psprintf("call %d's changes end at %d, the serial engine's at %d",
									i, s->t->call_end[i], s->calls[i].end));
	/* what each call's notification carries (sink.c, sf_sink_emit_calls) */
	for (int i = 0; i < s->ncalls; i++)
		if (s->t->call_seq[i] != s->calls[i].seq ||
			s->t->call_late[i] != s->calls[i].late_seq)
			pc_mismatch(r, psprintf("call %d ends at seq " INT64_FORMAT " and late_seq " INT64_FORMAT ", the serial engine's at " INT64_FORMAT " and " INT64_FORMAT,
									i, s->t->call_seq[i], s->t->call_late[i],
									s->calls[i].seq, s->calls[i].late_seq));
	for (int i = 0; i < hout.n; i++)
		if (!pc_same_change(&hout.items[i], &sout.items[i]))
			pc_mismatch(r, psprintf("change %d (seq " INT64_FORMAT ") differs from the serial engine's (seq " INT64_FORMAT ")",
									i, hout.items[i].seq, sout.items[i].seq));
	if (r->codec != NULL)
	{
		/* the transaction's deliveries, for its lanes' journal entries */
		int			nds = 0;
		SfDelivery *ds;
		int64	  **mvs;		/* a measures pipeline: each delivery's */

		for (int i = 0; i < s->ncalls; i++)
			if (s->calls[i].kind == SF_TXN_EVENT)
				nds += s->calls[i].n;
		ds = palloc(Max(nds, 1) * sizeof(SfDelivery));
		mvs = palloc0(Max(nds, 1) * sizeof(int64 *));
		nds = 0;
		for (int i = 0; i < s->ncalls; i++)
			if (s->calls[i].kind == SF_TXN_EVENT)
				for (int j = 0; j < s->calls[i].n; j++)
				{
					mvs[nds] = s->calls[i].mvs[j];
					ds[nds++] = s->calls[i].ds[j];
				}
		r->codec->commit(r->codec, r->head, s->t, hout.n, ds, mvs, nds);
		pfree(ds);
		pfree(mvs);
	}
	r->changes += hout.n;
	r->late += s->t->late;
	r->alone += s->t->alone;
	r->duplicates += s->t->duplicates;
	r->replays += s->t->replays;
	sf_txn_free(s->t);
	s->t = NULL;
	if (other->t == NULL)
		pc_compare_checkpoints(r);
}

/*
 * conflict's delivery: measures all d->value, the last one plus the value
 * when the value is not 1 (so two deliveries differ in it alone)
 */
static void
pc_conflict_ingest(PcRun *r, SfTxn *t, const SfDelivery *d)
{
	const SfMeasuresDef *md = r->head->p->def.measures;
	int64	   *mv;

	if (md == NULL)
	{
		sf_txn_ingest(t, d);
		return;
	}
	mv = palloc0(md->width * sizeof(int64));
	for (int m = 0; m < md->nmeasures; m++)
		mv[m] = d->value;
	if (t == r->slots[1].t)
		mv[md->nmeasures - 1] += 1;
	sf_txn_ingest_measures(t, d, mv);
}

/*
 * The run of parallel_check (its comment below), and of
 * parallel_codec_check with codec (parallel_codec_check.c: the codec's
 * checks at every commit and whenever no transaction is open); what it
 * exercised in *sum.  Everything it allocates is freed before it returns.
 */
void
sf_pc_run(const char *name, int32 calls, int64 seed, bool conflict,
		  PcCodec *codec, PcSummary *sum)
{
	MemoryContext cxt;
	MemoryContext old;
	PcRun	   *r;
	SfPipelineDef def;

	if (calls < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("calls must not be negative")));
	cxt = AllocSetContextCreate(CurrentMemoryContext, "parallel check",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	r = palloc0(sizeof(PcRun));
	r->cxt = cxt;
	r->codec = codec;
	pg_prng_seed(&r->rng, (uint64) seed);

	/* the definition only: the cached pipeline is not kept */
	def = sf_persist_open(name, false)->def;
	r->head = sf_head_create(cxt, &def);
	r->serial = sf_pipeline_create(cxt, &def);
	r->np = def.npartitions;
	r->pool_cap = 64;
	r->pool = palloc(r->pool_cap * sizeof(PcEvent));
	r->now = 100;
	if (codec != NULL)
		codec->start(codec, cxt, r->head, seed);

	for (int32 n = 0; n < calls && r->error == 0; n++)
	{
		int			k = (int) pc_rand(r, 2);
		PcSlot	   *s = &r->slots[k];
		PcSlot	   *other = &r->slots[1 - k];

		CHECK_FOR_INTERRUPTS();
		if (s->t == NULL)
			pc_begin(r, s, other);
		if (s->ncalls > 0 && pc_rand(r, 100) < 15)
			pc_commit(r, s, other);
		else
			pc_step(r, s);
	}
	/* the open transactions commit, in a random order */
	if (r->error == 0)
	{
		int			k = (int) pc_rand(r, 2);

		if (r->slots[k].t != NULL)
			pc_commit(r, &r->slots[k], &r->slots[1 - k]);
		if (r->slots[1 - k].t != NULL && r->error == 0)
			pc_commit(r, &r->slots[1 - k], &r->slots[k]);
	}
	if (r->error == 0)
		pc_compare_checkpoints(r);

	if (conflict && r->error == 0)
	{
		/* one id, two values, two partitions, both in flight */
		PcSlot	   *a = &r->slots[0];
		PcSlot	   *b = &r->slots[1];
		SfDelivery	d = {0};
		SfChangeList out = {0};

		if (r->np < 2)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("conflict needs a pipeline with two partitions")));
		a->t = sf_txn_begin(cxt, r->head);
		b->t = sf_txn_begin(cxt, r->head);
		d.event_id = "conflict";
		d.event_id_len = strlen(d.event_id);
		d.key = "k";
		d.key_len = 1;
		d.event_time = r->now;
		d.partition = r->head->p->def.partitions[0];
		d.source_offset = r->head->lanes[0]->partitions[0].consumed + 1;
		d.value = 1;
		pc_conflict_ingest(r, a->t, &d);
		d.partition = r->head->p->def.partitions[1];
		d.source_offset = r->head->lanes[1]->partitions[1].consumed + 1;
		/* a measures pipeline: the same value, another last measure */
		if (r->head->p->def.measures == NULL)
			d.value = 2;
		pc_conflict_ingest(r, b->t, &d);
		sf_head_commit(r->head, b->t, &out);
		sf_txn_note_commit(a->t, b->t);
		sf_head_commit(r->head, a->t, &out);	/* SF002 */
		pc_mismatch(r, "an identity conflict in flight was not found at commit");
	}

	sum->transactions = r->transactions;
	sum->deliveries = r->deliveries;
	sum->late = r->late;
	sum->alone = r->alone;
	sum->duplicates = r->duplicates;
	sum->replays = r->replays;
	sum->redecides = r->head->redecides;
	sum->collisions = r->head->collisions;
	sum->changes = r->changes;
	sum->checkpoints = r->checkpoints;
	sum->exact = r->head->exact_applies;
	sum->rollbacks = r->rollbacks;
	sum->error = r->error;
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}

/*
 * streamforge_internal.parallel_check(pipeline text, calls int, seed
 * bigint, conflict boolean): calls random calls of two simulated writers
 * with interleaved transactions on disjoint partitions, through lanes,
 * transaction deltas and the head (engine/delta.c, head.c) on a new
 * in-memory pipeline with pipeline's definition (the pipeline itself is
 * only read), and the same calls in commit order on a serial in-memory
 * pipeline: every transaction's changes must be the serial engine's, call
 * by call, with the seq and late_seq after each call (what its
 * notification carries, sink.c's sf_sink_emit_calls), and whenever no transaction is open the checkpoint of head and
 * lanes merged must be the serial pipeline's, byte for byte.  Deliveries
 * are multi-row calls of new events around a moving time (many late),
 * offset replays and duplicates of any earlier event, in flight in the
 * other writer's transaction too; advances and mark_idle of any
 * partition; rarely a finish.  A tenth of the calls run in a
 * subtransaction, half of which abort: the transaction goes back to its
 * mark and the writer's lanes are rebuilt without the call, with every
 * identity at a new handle.  conflict: at the end, the two writers
 * deliver one event id with different values on two partitions; the
 * second to commit must fail with SF002.  An error at a commit (54000 of
 * streamforge.max_live_buckets, 22003) must be the one the serial engine
 * raises in the same transaction's calls, and ends the run (error: its
 * SQLSTATE).  Returns what the run
 * exercised; raises XX000 at the first difference.
 */
PG_FUNCTION_INFO_V1(sf_parallel_check);
Datum
sf_parallel_check(PG_FUNCTION_ARGS)
{
#define PARALLEL_CHECK_COLS 13
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	int32		calls = PG_GETARG_INT32(1);
	int64		seed = PG_GETARG_INT64(2);
	bool		conflict = PG_GETARG_BOOL(3);
	TupleDesc	tupdesc;
	Datum		values[PARALLEL_CHECK_COLS];
	bool		nulls[PARALLEL_CHECK_COLS] = {0};
	PcSummary	sum;
	int			i = 0;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	sf_pc_run(name, calls, seed, conflict, NULL, &sum);
	values[i++] = Int64GetDatum(sum.transactions);
	values[i++] = Int64GetDatum(sum.deliveries);
	values[i++] = Int64GetDatum(sum.late);
	values[i++] = Int64GetDatum(sum.alone);
	values[i++] = Int64GetDatum(sum.duplicates);
	values[i++] = Int64GetDatum(sum.replays);
	values[i++] = Int64GetDatum(sum.redecides);
	values[i++] = Int64GetDatum(sum.collisions);
	values[i++] = Int64GetDatum(sum.changes);
	values[i++] = Int64GetDatum(sum.checkpoints);
	values[i++] = Int64GetDatum(sum.exact);
	values[i++] = Int64GetDatum(sum.rollbacks);
	if (sum.error != 0)
		values[i++] = CStringGetTextDatum(unpack_sql_state(sum.error));
	else
		nulls[i++] = true;
	Assert(i == PARALLEL_CHECK_COLS);
	tupdesc = BlessTupleDesc(tupdesc);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values,
													  nulls)));
}
