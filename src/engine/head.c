/*-------------------------------------------------------------------------
 *
 * head.c
 *	  The head of a parallel pipeline (issue 46,
 *	  docs/design/parallel-writers.md, sections 4.2 and 4.5): its lanes, the
 *	  apply of a committed transaction, and the merge of head and lanes
 *	  into the state of one serial pipeline (section 6.7).
 *
 * Design.  sf_head_commit is the engine part of the sequencer (4.5),
 * called with the head caught up to every transaction committed before
 * this one (the layers above hold the head lock):
 *
 *	 1. Collisions: an event id of the transaction that another lane
 *		committed since (sf_txn_note_commit flagged it) becomes a duplicate
 *		if its content is the same, else raises SF002, as the serial run in
 *		commit order would at the transaction's delivery.
 *	 2. Validation: the transaction's decisions (late, applied alone) are
 *		decided again on the committed clock (sf_txn_decide); when the head
 *		did not move since the transaction's base, its view clock was the
 *		committed one and this is skipped (6.1).
 *	 3. Re-decide, if a decision differs or a collision was resolved: the
 *		committed decisions replace the view's and the delta is rebuilt
 *		from the log (7a).
 *	 4. The live-bucket limit: if the head's buckets plus every address the
 *		transaction may create could pass streamforge.max_live_buckets,
 *		every event is applied alone, so that the limit is checked event by
 *		event on the exact count, as the serial run checks it.
 *	 5. Apply: the delta is merged into pending buckets first, then the log
 *		is replayed in call order through engine.c's own operations: a late
 *		event's row with the watermark at its point, an event applied alone
 *		exactly as sf_engine_ingest_hashed updates its buckets, the implied
 *		advance of built-in progress after each accepted event
 *		(sf_progress_after_accept; a run of them is released as one,
 *		head_clock.c), advance and mark_idle
 *		(sf_engine_advance, sf_engine_mark_idle), finish (the advances of
 *		sf_finish_order on the head's clock at that point, as
 *		api/ingest.c's finish makes them).  seq is numbered here.
 *
 * Why merging the delta first changes no change row (4.5): an event in
 * the delta touched only buckets that were pending at its point under the
 * committed clock (step 2 or 3 made sure).  A pending bucket emits nothing,
 * and the watermark never decreases, so it is pending at the start of the
 * transaction too: the merge emits nothing and finalizes nothing.  A
 * release before the event cannot include the bucket (it would have been
 * ready at the event), one after it includes the event in the serial run
 * too, and no event after a release reaches a released bucket through the
 * delta (it would be applied alone).  count, sum, min and max commute.
 *
 * Sessions are applied alone, event by event (delta.c: no session delta
 * yet).  What is not here yet (section 12): measures and retention
 * (refused with 0A000 at sf_head_create), lanes not loaded.  The apply
 * records its outcome for the head journal entry (head_entry.c's hooks;
 * head_replay.c applies it elsewhere).  A transaction that fails at
 * commit leaves the head and its lanes half changed: the layers above
 * discard them, as they discard a serial pipeline.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/head.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "engine/engine.h"
#include "engine/engine_int.h"
#include "engine/parallel.h"

/*
 * A new, empty head and its lanes for a normalized definition, in a new
 * memory context under parent.  Refuses (0A000) what the parallel mode
 * does not support yet.
 */
SfHead *
sf_head_create(MemoryContext parent, const SfPipelineDef *def)
{
	MemoryContext cxt;
	MemoryContext old;
	SfHead	   *h;
	SfPipelineDef ldef;
	const char *what = NULL;

	if (def->has_retention)
		what = "retention";
	if (what != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("parallel writers do not support %s yet", what),
				 errdetail("Pipeline \"%s\" cannot be split into a head and lanes.",
						   def->name)));
	if (def->npartitions > PG_UINT16_MAX)
		elog(ERROR, "streamforge: too many partitions for lanes");

	cxt = AllocSetContextCreate(parent, "streamforge head",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	h = palloc0(sizeof(SfHead));
	h->cxt = cxt;
	h->p = sf_pipeline_create(cxt, def);
	h->fp = sf_fp_create(cxt, 0);

	/* a lane: the partitions, no windows (design 4.2) */
	ldef = *def;
	ldef.nwindows = 0;
	h->lanes = palloc(Max(def->npartitions, 1) * sizeof(SfPipeline *));
	for (int i = 0; i < def->npartitions; i++)
		h->lanes[i] = sf_pipeline_create(cxt, &ldef);
	MemoryContextSwitchTo(old);
	return h;
}

/*
 * Step 1: the transaction's new ids that another lane committed since its
 * base become duplicates, or raise SF002.  Returns whether any did.
 */
static bool
resolve_collisions(SfHead *h, SfTxn *t)
{
	bool		any = false;

	for (int64 i = 0; i < t->nops; i++)
	{
		SfTxnOp    *op = &t->ops[i];
		SfIdentity *id;
		uint64		fph;
		SfFpCursor	c;
		uint16		lane;
		uint64		loc;

		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		if (op->kind != SF_TXN_EVENT || (op->flags & SF_TXN_DUP))
			continue;
		id = sf_id_ptr(h->lanes[op->lane], op->handle);
		fph = sf_fp_hash(id->event_id, id->event_id_len);
		sf_fp_start(&c, fph);
		while (sf_fp_next(h->fp, &c, &lane, &loc))
		{
			SfIdentity *first = sf_id_ptr(h->lanes[lane], (uint32) loc);

			if (first->event_id_len != id->event_id_len ||
				memcmp(first->event_id, id->event_id, id->event_id_len) != 0)
				continue;
			if (first->event_time != id->event_time ||
				first->value != id->value || first->key->len != id->key->len ||
				memcmp(first->key->data, id->key->data, id->key->len) != 0 ||
				(h->p->def.measures != NULL &&
				 !sf_measures_match(h->lanes[lane], first,
									sf_id_measures(h->lanes[op->lane], id) + 1)))
				ereport(ERROR,
						(errcode(ERRCODE_SF_IDENTITY_CONFLICT),
						 errmsg("identity conflict for event \"%s\" in pipeline \"%s\"",
								sf_msg_str(id->event_id, id->event_id_len),
								h->p->def.name),
						 errdetail("The event was first delivered with key \"%s\", event_time " INT64_FORMAT " and value " INT64_FORMAT " by a transaction that committed first.",
								   sf_msg_str(first->key->data, first->key->len),
								   first->event_time, first->value),
						 errhint("A different event needs a new event_id.")));
			/* a duplicate of the committed identity: its lane keeps the copy */
			op->flags |= SF_TXN_DUP;
			id->foreign = true;
			id->late = first->late;
			h->lanes[op->lane]->nidentities--;
			if (!sf_fp_remove(t->newids, fph, op->lane, op->handle))
				elog(ERROR, "streamforge: a new id is missing from its transaction");
			t->duplicates++;
			h->collisions++;
			any = true;
			break;
		}
	}
	return any;
}

/*
 * The arrival numbers of a measures pipeline's transaction t (design 13,
 * risk 10): its unique events (not those found duplicates at commit) are
 * numbered 1, 2, ... in log order, then, with rebase, moved after the
 * head's arrivals, which count them.  Without rebase: the local numbers
 * again, after step 1 took events out (the delta is then rebuilt).
 */
static void
number_arrivals(SfHead *h, SfTxn *t, bool rebase)
{
	int64		n = 0;
	int64		base = rebase ? h->p->arrivals : 0;

	for (int64 i = 0; i < t->nops; i++)
	{
		const SfTxnOp *op = &t->ops[i];
		SfPipeline *lane;

		if (op->kind != SF_TXN_EVENT || (op->flags & SF_TXN_DUP))
			continue;
		lane = h->lanes[op->lane];
		sf_id_measures(lane, sf_id_ptr(lane, op->handle))[0] = base + ++n;
	}
	if (rebase)
	{
		t->arrival_base = base;
		h->p->arrivals += n;
	}
}

/* merge_one's argument */
typedef struct MergeArg
{
	SfPipeline *p;
	int64		base;			/* measures: the arrivals' rebase */
	int64	   *words;			/* measures: a copy of a delta's ext */
} MergeArg;

/* the merge of one delta address into a pending head bucket */
static void
merge_one(void *arg, int window, const SfString *key, int64 start, int64 end,
		  const SfAgg *agg)
{
	MergeArg   *ma = (MergeArg *) arg;
	SfPipeline *p = ma->p;
	SfString   *hkey = sf_intern_key_hashed(p, key->data, key->len, key->hash);
	SfAgg		from = *agg;
	SfBucket   *b;

	if (unlikely(p->def.measures != NULL))
	{
		/* the delta's words with global arrivals; its states as they are */
		const SfMeasuresDef *md = p->def.measures;

		memcpy(ma->words, agg->ext, (md->nwords + md->nvar) * sizeof(int64));
		sf_magg_rebase(md, ma->words, ma->base);
		from.ext = ma->words;
	}
	if (sf_window_merges(&p->def.windows[window]))
	{
		/* a delta session: by interval union */
		sf_session_merge_in(p, window, hkey, start, end, &from);
		return;
	}
	b = sf_bucket_get_hashed(p, window, hkey, sf_bucket_key_hash(window, hkey),
							 start, end);
	if (b->ready)
		elog(ERROR, "streamforge: a transaction delta reaches a ready bucket");
	if (unlikely(p->def.measures != NULL))
		sf_magg_merge(p, &b->agg, &from);
	sf_agg_merge(&b->agg, &from);
}

/*
 * An event applied alone: sf_engine_ingest_hashed's bucket update and
 * finish, on the head, for an event it decided is not late.
 */
static void
apply_alone(SfPipeline *p, const SfIdentity *id, SfChangeList *out)
{
	int		   *nassigned = p->assign_counts;
	int			k = 0;
	SfString   *key;

	sf_check_live_buckets(p, sf_assign_all(&p->def, id->event_time,
										   p->assign_starts, p->assign_ends,
										   p->assign_cap, nassigned));
	sf_op_begin(p);
	key = sf_intern_key_hashed(p, id->key->data, id->key->len, id->key->hash);
	p->cur_event = id;			/* a session's measures (session.c) */
	for (int w = 0; w < p->def.nwindows; w++)
	{
		uint32		kwhash;

		if (sf_window_merges(&p->def.windows[w]))
		{
			sf_session_add(p, w, key, p->assign_starts[k],
						   p->assign_ends[k], id->value);
			k += nassigned[w];
			continue;
		}
		kwhash = sf_bucket_key_hash(w, key);
		for (int j = 0; j < nassigned[w]; j++)
		{
			SfBucket   *b = sf_bucket_get_hashed(p, w, key, kwhash,
												 p->assign_starts[k + j],
												 p->assign_ends[k + j]);

			if (b->ready)
				sf_dirty_touch(p, b);
			sf_agg_add(&b->agg, id->value);
			if (unlikely(p->def.measures != NULL))
				sf_magg_add(p, &b->agg, id);
		}
		k += nassigned[w];
	}
	sf_op_finish_quick(p, out);
}

/*
 * Apply committed transaction t to the head (design 4.5, steps 4, 5 and
 * 7a; the file header has the phases), appending its changes, numbered
 * after the head's seq, to out.  The caller holds the head lock and has
 * caught the head up, and has called sf_txn_note_commit(t, u) for every u
 * committed since t's base.  On an error (SF002, 22003, 54000 at commit)
 * the head and t's lanes may be half changed: the caller discards them.
 */
void
sf_head_commit(SfHead *h, SfTxn *t, SfChangeList *out)
{
	SfPipeline *p = h->p;
	const SfPipelineDef *def = &p->def;
	bool		redecide = t->stale;
	bool		any_accepted = false;
	int64		bound;
	int		   *finish_order;
	SfClockRun	run;

	Assert(t->head == h && !t->committed);
	if (t->collided && resolve_collisions(h, t))
		redecide = true;
	if (!redecide && h->version != t->base)
		redecide = !sf_txn_decide(t, p, false);
	if (redecide)
	{
		/* step 1 took events out: the delta is rebuilt, numbered again */
		if (def->measures != NULL)
			number_arrivals(h, t, false);
		(void) sf_txn_decide(t, p, true);
		h->redecides++;
	}
	if (def->measures != NULL)
		number_arrivals(h, t, true);

	/*
	 * The limit.  The serial run refuses an event when the live buckets
	 * plus every bucket it enters (new or not) pass it
	 * (sf_check_live_buckets).  The live buckets at any event are at most
	 * the head's, plus the delta's addresses, plus the buckets of the
	 * events applied alone, and an event enters at most assign_cap: if
	 * that sum stays within the limit, no event of the serial run is
	 * refused.
	 */
	bound = sf_txn_delta_size(t);
	for (int64 i = 0; i < t->nops; i++)
		if (t->ops[i].kind == SF_TXN_EVENT &&
			!(t->ops[i].flags & (SF_TXN_LATE | SF_TXN_DUP)))
		{
			if (!any_accepted)
				bound += p->assign_cap; /* the event being checked */
			any_accepted = true;
			if (t->ops[i].flags & SF_TXN_ALONE)
				bound += p->assign_cap;
		}
	if (sf_max_live_buckets > 0 && !sf_replaying_journal &&
		p->nbuckets + bound > (int64) sf_max_live_buckets)
	{
		/* exactly: every event alone, the limit checked at each */
		for (int64 i = 0; i < t->nops; i++)
			if (t->ops[i].kind == SF_TXN_EVENT &&
				!(t->ops[i].flags & (SF_TXN_LATE | SF_TXN_DUP)))
				t->ops[i].flags |= SF_TXN_ALONE;
		h->exact_applies++;
		t->stale = true;		/* the delta is not used */
	}

	/* the outcome form of what follows, for the head entry (head_entry.c) */
	sf_head_entry_start(h, t);

	/* the delta: pending buckets only, so no change and no finalization */
	if (!t->stale)
	{
		MergeArg	ma;

		ma.p = p;
		ma.base = t->arrival_base;
		ma.words = def->measures == NULL ? NULL :
			palloc((def->measures->nwords + def->measures->nvar) *
				   sizeof(int64));
		sf_op_begin(p);
		sf_txn_delta_foreach(t, merge_one, &ma);
		if (p->ndirty != 0)
			elog(ERROR, "streamforge: a transaction delta touched a visible row");
		p->busy = false;
		if (ma.words != NULL)
			pfree(ma.words);
	}

	/* the log, in call order */
	t->call_end = MemoryContextAlloc(t->cxt, Max(t->ncalls, 1) * sizeof(int));
	t->call_seq = MemoryContextAlloc(t->cxt, Max(t->ncalls, 1) * sizeof(int64));
	t->call_late = MemoryContextAlloc(t->cxt, Max(t->ncalls, 1) * sizeof(int64));
	finish_order = MemoryContextAlloc(t->cxt,
									  Max(def->npartitions, 1) * sizeof(int));
	sf_clock_run_init(&run);
	for (int64 i = 0, call = 0; i < t->nops; i++)
	{
		const SfTxnOp *op = &t->ops[i];
		const SfIdentity *id;

		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		if (op->kind == SF_TXN_EVENT && (op->flags & SF_TXN_DUP))
			continue;

		/*
		 * The implied advances since the last op that was not one are
		 * released before this one (head_clock.c): only an accepted event
		 * of the delta continues the run.
		 */
		if (op->kind != SF_TXN_EVENT ||
			(op->flags & (SF_TXN_LATE | SF_TXN_ALONE)))
			sf_head_clock_flush(p, &run, out);
		if (op->kind == SF_TXN_CALL_END)
		{
			Assert(call < t->ncalls);
			t->call_seq[call] = p->seq;
			t->call_late[call] = p->late_forgotten + p->nlate;
			t->call_end[call++] = out->n;
			continue;
		}
		if (op->kind == SF_TXN_ADVANCE)
		{
			sf_engine_advance(p, def->partitions[op->lane], op->value, out);
			sf_head_entry_add(t, SF_HE_ADVANCE, op->lane, op->value, NULL);
			continue;
		}
		if (op->kind == SF_TXN_IDLE)
		{
			sf_engine_mark_idle(p, def->partitions[op->lane], out);
			sf_head_entry_add(t, SF_HE_IDLE, op->lane, 0, NULL);
			continue;
		}
		if (op->kind == SF_TXN_FINISH)
		{
			int			n = sf_finish_order(p, finish_order);

			for (int k = 0; k < n; k++)
			{
				sf_engine_advance(p, def->partitions[finish_order[k]],
								  PG_INT64_MAX, out);
				sf_head_entry_add(t, SF_HE_ADVANCE, finish_order[k],
								  PG_INT64_MAX, NULL);
			}
			continue;
		}
		id = sf_id_ptr(h->lanes[op->lane], op->handle);
		if (op->flags & SF_TXN_LATE)
		{
			/* its row, with a copy of the event: the head has no identities */
			sf_late_append_forgotten(p, op->lane, op->value, id->event_id,
									 id->event_id_len, id->key->data,
									 id->key->len, id->event_time, id->value,
									 p->watermark);
			if (unlikely(def->measures != NULL))
				sf_id_copy_measures(p, p->late[p->nlate - 1].event,
									h->lanes[op->lane], id);
			p->mutations++;
			sf_head_entry_add(t, SF_HE_LATE, op->lane, op->value, id);
			continue;
		}
		if (op->flags & SF_TXN_ALONE)
		{
			apply_alone(p, id, out);
			sf_head_entry_add(t, SF_HE_EVENT, op->lane, op->value, id);
		}
		if (def->has_out_of_orderness)
			sf_head_entry_accept(t, p, &run, op->lane, id->event_time);
	}
	sf_head_clock_flush(p, &run, out);
	sf_clock_run_free(&run);

	/*
	 * Its new ids are committed: every later delivery finds them.  The
	 * transaction's index holds exactly them (a duplicate found at step 1
	 * and a subtransaction's abort took theirs out), hashed already: its
	 * slots are copied, no identity is read.
	 */
	sf_head_entry_end(h, t);
	sf_fp_insert_all(h->fp, t->newids);
	h->version++;
	t->committed = true;
}

/*
 * The state of the serial pipeline that made the same calls in commit
 * order, as a new pipeline under parent (design 6.7): identities and
 * deliveries from the lanes, clock, live buckets, seq and late rows from
 * the head.  Only committed state may be in the lanes (no transaction
 * open).  The checkpoint of the result is the serial pipeline's.
 */
SfPipeline *
sf_head_merge(MemoryContext parent, SfHead *h)
{
	SfPipeline *hp = h->p;
	SfPipeline *m = sf_pipeline_create(parent, &hp->def);
	int			np = hp->def.npartitions;
	SfRow	   *rows;
	int64		nrows;
	MemoryContext old = MemoryContextSwitchTo(m->cxt);

	/* the unique events, each once, from the lane that first delivered it */
	for (int i = 0; i < np; i++)
	{
		SfPipeline *lane = h->lanes[i];
		SfPartition *part = &lane->partitions[i];

		for (int64 o = 0; o <= part->consumed; o++)
		{
			SfIdentity *id = sf_partition_slot(lane, part, o);
			SfIdentity *mid;
			uint32		handle;

			if ((o & 4095) == 0)
				CHECK_FOR_INTERRUPTS();
			if (id == NULL)
				elog(ERROR, "streamforge: a lane lost an offset");
			if (id->foreign ||
				sf_idtable_lookup(m, id->event_id, id->event_id_len,
								  sf_hash_event_id(id->event_id,
												   id->event_id_len),
								  &handle) != NULL)
				continue;
			mid = sf_identity_add(m, id->event_id, id->event_id_len,
								  sf_intern_key(m, id->key->data,
												id->key->len),
								  id->event_time, id->value, id->late,
								  &handle);
			if (m->def.measures != NULL)
				sf_id_copy_measures(m, mid, lane, id);
		}
	}
	/* every delivery, by event id */
	for (int i = 0; i < np; i++)
	{
		SfPipeline *lane = h->lanes[i];
		SfPartition *part = &lane->partitions[i];

		for (int64 o = 0; o <= part->consumed; o++)
		{
			SfIdentity *id = sf_partition_slot(lane, part, o);
			uint32		handle;

			if (sf_idtable_lookup(m, id->event_id, id->event_id_len,
								  sf_hash_event_id(id->event_id,
												   id->event_id_len),
								  &handle) == NULL)
				elog(ERROR, "streamforge: a duplicate in a lane has no first delivery");
			sf_partition_append(m, i, handle);
		}
	}
	/* the late rows, in late_seq order */
	for (int64 k = 0; k < hp->nlate; k++)
	{
		const SfLateEvent *le = &hp->late[k];
		uint32		handle;
		SfIdentity *id = sf_idtable_lookup(m, le->event->event_id,
										   le->event->event_id_len,
										   sf_hash_event_id(le->event->event_id,
															le->event->event_id_len),
										   &handle);

		if (id == NULL)
			elog(ERROR, "streamforge: a late row has no identity");
		/* the head's copy holds the event's measures and arrival too */
		if (m->def.measures != NULL &&
			memcmp(sf_id_measures(hp, le->event), sf_id_measures(m, id),
				   (1 + m->def.measures->width) * sizeof(int64)) != 0)
			elog(ERROR, "streamforge: a late row's measures are not its event's");
		sf_late_append(m, le->partition, le->source_offset, id, le->watermark);
	}
	/* the clock, before the buckets: it decides which heap they go to */
	for (int i = 0; i < np; i++)
	{
		m->partitions[i].has_progress = hp->partitions[i].has_progress;
		m->partitions[i].progress = hp->partitions[i].progress;
		m->partitions[i].idle = hp->partitions[i].idle;
	}
	m->has_watermark = hp->has_watermark;
	m->watermark = hp->watermark;
	nrows = sf_collect_rows(hp, false, &rows);
	for (int64 r = 0; r < nrows; r++)
		(void) sf_bucket_restore(m, rows[r].addr.window,
								 sf_intern_key(m, rows[r].addr.key->data,
											   rows[r].addr.key->len),
								 rows[r].addr.start, rows[r].addr.end,
								 &rows[r].agg);
	m->seq = hp->seq;
	m->arrivals = hp->arrivals;
	m->late_forgotten = hp->late_forgotten;
	for (int i = 0; i < np; i++)
		m->offset_replays += h->lanes[i]->offset_replays;
	MemoryContextSwitchTo(old);
	return m;
}

/*
 * Lane lane was rebuilt (after a subtransaction abort: from the tables,
 * without the aborted records): rebuilt replaces it.  Every delivery
 * rebuilt holds must be the old lane's at the same offset; an identity's
 * handle may differ, so the index slots of the lane's identities (the
 * head's for committed ones, t's for t's new ones; t may be NULL) and t's
 * log entries move to the new handles, found by offset.  The old lane is
 * freed.
 */
void
sf_head_replace_lane(SfHead *h, SfTxn *t, int lane, SfPipeline *rebuilt)
{
	SfPipeline *old = h->lanes[lane];
	SfPartition *op = &old->partitions[lane];
	SfPartition *np = &rebuilt->partitions[lane];

	Assert(rebuilt->def.npartitions == h->p->def.npartitions);
	if (np->consumed > op->consumed)
		elog(ERROR, "streamforge: a rebuilt lane holds more than the lane");
	for (int64 o = 0; o <= np->consumed; o++)
	{
		uint32		oh = op->deliveries[op->head + o];
		uint32		nh = np->deliveries[np->head + o];
		SfIdentity *oid = sf_id_ptr(old, oh);
		SfIdentity *nid = sf_id_ptr(rebuilt, nh);
		uint64		fph;

		if ((o & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		if (oid->event_id_len != nid->event_id_len ||
			memcmp(oid->event_id, nid->event_id, oid->event_id_len) != 0 ||
			oid->foreign != nid->foreign)
			elog(ERROR, "streamforge: a rebuilt lane differs from the lane");
		if (oh == nh || oid->foreign)
			continue;
		fph = sf_fp_hash(oid->event_id, oid->event_id_len);
		/* an original: its slot is the head's or the transaction's */
		if (!sf_fp_relocate(h->fp, fph, (uint16) lane, oh, nh) &&
			t != NULL)
			(void) sf_fp_relocate(t->newids, fph, (uint16) lane, oh, nh);
	}
	if (t != NULL)
	{
		for (int64 i = 0; i < t->nops; i++)
		{
			SfTxnOp    *e = &t->ops[i];

			if (e->kind != SF_TXN_EVENT || e->lane != lane)
				continue;
			if (e->value > np->consumed)
				elog(ERROR, "streamforge: a logged event is not in its rebuilt lane");
			e->handle = np->deliveries[np->head + e->value];
		}
	}
	h->lanes[lane] = rebuilt;
	sf_pipeline_free(old);
}

/*
 * The lane of a transaction re-executed on a head loaded anew (design 4.5,
 * 7b: a compaction or restore committed since its base): mine, the
 * transaction's lane, holds the committed deliveries up to offset
 * committed (the lane's consumed offset before the transaction's first
 * delivery there) and the transaction's after them, since the claim kept
 * every other writer from the lane.  If h's lane is that committed part
 * (consumed at committed, the same event ids at every offset),
 * mine replaces h's lane, the index slots of the committed identities move
 * to mine's handles (found by offset), and true is returned; otherwise
 * (a restore that changed the lane) nothing changes and false is returned.
 * mine moves under h's context; h's lane is freed.
 */
bool
sf_head_adopt_lane(SfHead *h, int lane, SfPipeline *mine, int64 committed)
{
	SfPipeline *old = h->lanes[lane];
	SfPartition *op = &old->partitions[lane];
	SfPartition *mp = &mine->partitions[lane];

	Assert(mine->def.npartitions == h->p->def.npartitions);
	if (op->consumed != committed || committed > mp->consumed)
		return false;
	for (int64 o = 0; o <= op->consumed; o++)
	{
		SfIdentity *oid = sf_id_ptr(old, op->deliveries[op->head + o]);
		SfIdentity *mid = sf_id_ptr(mine, mp->deliveries[mp->head + o]);

		if ((o & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		if (oid->event_id_len != mid->event_id_len ||
			memcmp(oid->event_id, mid->event_id, oid->event_id_len) != 0 ||
			oid->foreign != mid->foreign)
			return false;
	}
	for (int64 o = 0; o <= op->consumed; o++)
	{
		uint32		oh = op->deliveries[op->head + o];
		uint32		mh = mp->deliveries[mp->head + o];
		SfIdentity *oid = sf_id_ptr(old, oh);

		if (oh == mh || oid->foreign)
			continue;
		(void) sf_fp_relocate(h->fp,
							  sf_fp_hash(oid->event_id, oid->event_id_len),
							  (uint16) lane, oh, mh);
	}
	MemoryContextSetParent(mine->cxt, h->cxt);
	h->lanes[lane] = mine;
	sf_pipeline_free(old);
	return true;
}

/*
 * An event applied alone, as sf_head_commit applies it: for the replay of
 * a head entry (head_entry.c).  id needs only key, event_time and value.
 */
void
sf_head_apply_event(SfPipeline *p, const SfIdentity *id, SfChangeList *out)
{
	apply_alone(p, id, out);
}
