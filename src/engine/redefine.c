/*-------------------------------------------------------------------------
 *
 * redefine.c
 *	  Changing a running pipeline's definition or retention without losing
 *	  its state.
 *
 * A definition change (add a partition, add or drop a window, change the
 * lateness) builds a new pipeline for the new definition and carries the
 * old one's state over, with the engine's own functions, the way the
 * checkpoint codec builds a restored pipeline (codec.c, ck_build):
 *
 *	- the clock: each partition keeps its progress and idleness; a new
 *	  partition starts idle with no progress and consumed offset -1, so it
 *	  takes no part in the watermark until it first reports (advance
 *	  reactivates it), and the watermark itself is kept as it was: it never
 *	  goes back;
 *	- identities, deliveries, late events (with their late_seq), seq and the
 *	  offset replay counter, unchanged;
 *	- the live buckets of every window that stays.
 *
 * The live buckets are a pure function of the accepted events, the
 * watermark and the definition (docs/semantics.md, Checkpoints; codec/codec_derive.c,
 * ck_check_derivation, rejects any other state), so a window the old state
 * cannot give is derived from the remembered accepted events, as if it had
 * existed from the start:
 *	- a new window is backfilled: its buckets that are not finalized by now
 *	  (watermark > end + lateness) are built from every accepted event;
 *	- a higher lateness rebuilds every window the same way, which brings
 *	  back the buckets the old lateness had finalized and the new one keeps
 *	  live.  It is refused when a late event would not have been late with
 *	  the new lateness: late events are never re-decided;
 *	- a lower lateness finalizes the buckets it puts past their lateness,
 *	  as any operation finalizes: without a retraction.
 * The changes returned are those of the contract: the new visible rows
 * compared with the old ones, retractions first, then upserts, each in
 * address order, with the seq numbers that follow the old pipeline's.  The
 * visible rows of a dropped window are retracted; the ready rows of a new
 * window, and ready rows a higher lateness brings back, are upserted.
 *
 * streamforge.max_live_buckets holds here as for events (docs/security.md,
 * "Resource limits"): the buckets the new definition keeps and derives are
 * counted before anything is built (count_derived_buckets), and a change
 * that would pass the cap is refused with 54000, unless it adds none.
 *
 * The cost is linear in the state (it is a rebuild; a derived window costs
 * what ingesting the remembered events into it costs, plus a sort of the
 * accepted events to count its buckets first); definition changes are rare
 * administrative calls.  Any state field added to SfPipeline must be
 * carried over here too, in sf_copy_state.
 *
 * sf_pipeline_redefine runs in phases: redefine_check refuses what cannot
 * be done before anything is built, sf_copy_state carries the state over,
 * sf_redefine_derive builds the derived windows, and sf_redefine_diff computes
 * the changes.  A retention change (set_retention) changes no window: it
 * copies the state under the new retention as it is, with the same
 * sf_copy_state (sf_pipeline_with_retention, at the end of this file), and
 * forgets what the new horizon forgets.
 *
 * Memory.  The new pipeline is a new context under the caller's parent;
 * old is only read.  Scratch arrays, the changes and the window names are
 * palloc'd in the caller's CurrentMemoryContext.  sf_derive_event is also
 * final_rows.c's (engine_int.h).
 *
 * The engine knows nothing of SQL: persist.c stores the result
 * (sf_persist_redefine) and api/manage.c is the SQL glue.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/redefine.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "engine/engine.h"
#include "engine/engine_int.h"

/*
 * Refuse (54000) a change of definition that would leave its pipeline with
 * more than limit live buckets (streamforge.max_live_buckets, or the old
 * pipeline's count if that is higher: a change that adds no bucket is never
 * refused).  Called before each new bucket is allocated, so that a refused
 * change has allocated at most limit buckets.
 */
static void
check_redefine_buckets(const SfPipeline *p, int64 limit, int64 old_buckets,
					   int64 more)
{
	if (limit > 0 && (int64) p->nbuckets + more > limit)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("pipeline \"%s\" would have more than %d live buckets",
						p->def.name, sf_max_live_buckets),
				 errdetail("It has " INT64_FORMAT " live buckets; with the new definition it would have more than " INT64_FORMAT ".",
						   old_buckets, limit),
				 errhint("Raise streamforge.max_live_buckets, or advance the watermark so that buckets are finalized first.")));
}

/* An accepted event's key (interned: one pointer per key) and time */
typedef struct SfKeyTime
{
	const SfString *key;
	int64		t;
} SfKeyTime;

static int
keytime_cmp(const void *a, const void *b)
{
	const SfKeyTime *x = (const SfKeyTime *) a;
	const SfKeyTime *y = (const SfKeyTime *) b;

	if (x->key != y->key)
		return (uintptr_t) x->key < (uintptr_t) y->key ? -1 : 1;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return 0;
}

/*
 * The number of live buckets the derived windows (derive[]) of def would
 * have, built from old's accepted events at old's watermark, counted
 * without building them; counting stops once it passes limit.
 *
 * With the events sorted by key and time, the buckets of one key in a
 * fixed or sliding window are the union of one run of consecutive starts
 * (multiples of the step) per event, runs whose both ends only grow: a
 * sweep counts the starts not counted yet, from the first one that is not
 * finalized (watermark > end + lateness, as derive_event skips).  The
 * sessions of one key are the runs of events less than a gap apart
 * (touching sessions merge, docs/semantics.md, Exact rules, 10), each live unless finalized.
 * Cost: a sort of the accepted events and one sweep per derived window.
 */
static int64
count_derived_buckets(const SfPipeline *old, const SfPipelineDef *def,
					  const bool *derive, SfIdentity **ids, int64 nids,
					  int64 limit)
{
	SfKeyTime  *ev;
	int64		n = 0;
	int64		total = 0;
	int128		wm = old->watermark;
	bool		has_wm = old->has_watermark;

	ev = MemoryContextAllocHuge(CurrentMemoryContext,
								Max(nids, 1) * sizeof(SfKeyTime));
	for (int64 i = 0; i < nids; i++)
	{
		if (ids[i]->late)
			continue;
		ev[n].key = ids[i]->key;
		ev[n].t = ids[i]->event_time;
		n++;
	}
	qsort(ev, n, sizeof(SfKeyTime), keytime_cmp);

	for (int w = 0; w < def->nwindows && total <= limit; w++)
	{
		const SfWindowDef *wd = &def->windows[w];

		if (!derive[w])
			continue;
		CHECK_FOR_INTERRUPTS();
		if (sf_window_merges(wd))
		{
			int128		end = 0;

			for (int64 i = 0; i < n && total <= limit; i++)
			{
				int128		t = ev[i].t;

				if ((i & 1023) == 0)
					CHECK_FOR_INTERRUPTS();
				if (i > 0 && ev[i].key == ev[i - 1].key && t <= end)
				{
					end = Max(end, t + wd->gap);
					continue;
				}
				/* the previous session is complete */
				if (i > 0 && !(has_wm && wm > end + def->lateness))
					total++;
				end = t + wd->gap;
			}
			if (n > 0 && !(has_wm && wm > end + def->lateness))
				total++;
		}
		else
		{
			int64		psize,
						pstep;
			int128		step,
						size,
						kmin;
			int128		prev_hi = 0;

			sf_window_ops(wd->kind)->period(wd, &psize, &pstep);
			step = pstep;
			size = psize;
			/* first start (in steps) not finalized: start + size + lateness >= wm */
			kmin = has_wm ? -sf_floor_div(-(wm - size - def->lateness), step) : 0;

			for (int64 i = 0; i < n && total <= limit; i++)
			{
				int128		t = ev[i].t;
				int128		hi = sf_floor_div(t, step);
				int128		lo = sf_floor_div(t - size, step) + 1;

				if ((i & 1023) == 0)
					CHECK_FOR_INTERRUPTS();
				if (has_wm && lo < kmin)
					lo = kmin;
				if (i > 0 && ev[i].key == ev[i - 1].key && lo <= prev_hi)
					lo = prev_hi + 1;
				if (hi >= lo)
					total += (int64) (hi - lo + 1);
				if (i == 0 || ev[i].key != ev[i - 1].key || hi > prev_hi)
					prev_hi = hi;
			}
		}
	}
	pfree(ev);
	return total;
}

/*
 * sf_derive_event
 *		Add one accepted event to window w of p, as engine.c does, while p is
 *		built from remembered events (within an operation): a bucket that
 *		p's watermark has finalized is skipped (the event never entered it,
 *		docs/semantics.md), and a new fixed or sliding bucket past limit is refused
 *		(check_redefine_buckets; limit 0: no cap).
 *
 * For the derived windows of a definition change, and for the scratch
 * pipeline of final_rows.c, which has no watermark and no cap.
 */
void
sf_derive_event(SfPipeline *p, int w, const SfIdentity *id, SfString *key,
				int64 limit, int64 old_buckets)
{
	const SfWindowDef *wd = &p->def.windows[w];
	int			n;
	int			j;

	n = sf_assign_windows(wd, id->event_time, p->def.lateness,
						  p->assign_starts, p->assign_ends, p->assign_cap);
	p->cur_event = id;
	if (sf_window_merges(wd))
	{
		sf_session_add(p, w, key, p->assign_starts[0], p->assign_ends[0],
					   id->value);
		return;
	}
	for (j = 0; j < n; j++)
	{
		SfBucket   *b;

		/* finalized by now: the event never enters it (docs/semantics.md) */
		if (p->has_watermark &&
			(int128) p->watermark > (int128) p->assign_ends[j] + p->def.lateness)
			continue;
		b = sf_bucket_lookup(p, w, key, p->assign_starts[j]);
		if (b == NULL)
		{
			check_redefine_buckets(p, limit, old_buckets, 1);
			b = sf_bucket_insert(p, w, key, p->assign_starts[j],
								 p->assign_ends[j]);
		}
		sf_dirty_touch(p, b);
		sf_agg_add(&b->agg, id->value);
		if (unlikely(b->agg.ext != NULL))
			sf_magg_add(p, &b->agg, id);
	}
}

/*
 * The union of two normalized definitions' windows, sorted by name, in
 * names; map_a and map_b get each window's index in it.
 */
static void
union_windows(const SfPipelineDef *a, const SfPipelineDef *b,
			  SfPipelineDef *names, int *map_a, int *map_b)
{
	int			i = 0,
				j = 0,
				n = 0;

	*names = *b;
	names->windows = palloc((a->nwindows + b->nwindows) * sizeof(SfWindowDef));
	while (i < a->nwindows || j < b->nwindows)
	{
		int			c;

		if (i >= a->nwindows)
			c = 1;
		else if (j >= b->nwindows)
			c = -1;
		else
			c = strcmp(a->windows[i].name, b->windows[j].name);
		if (c <= 0)
		{
			names->windows[n] = a->windows[i];
			map_a[i++] = n;
		}
		if (c >= 0)
		{
			names->windows[n] = b->windows[j];
			map_b[j++] = n;
		}
		n++;
	}
	names->nwindows = n;
}

/* ----------------------------------------------------------------
 * Copying a pipeline's state into a new one
 * ----------------------------------------------------------------
 */


/* The entry of id in remap[0 .. n - 1] (sorted by identity), or NULL */
static const SfRemapEntry *
remap_find(const SfRemapEntry *remap, int64 n, const SfIdentity *id)
{
	int64		lo = 0,
				hi = n - 1;

	while (lo <= hi)
	{
		int64		mid = lo + (hi - lo) / 2;
		uintptr_t	m = (uintptr_t) remap[mid].id;

		if (m == (uintptr_t) id)
			return &remap[mid];
		if (m < (uintptr_t) id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

/*
 * Copy old's state into p, a new, empty pipeline of another definition (a
 * definition change) or retention (set_retention):
 *
 *	- the clock: partition k of old is partition pmap[k] of p and keeps its
 *	  progress and idleness; a partition old does not have starts idle with
 *	  no progress; the watermark is old's;
 *	- the identities ids[0 .. nids - 1] (every remembered one of old, once),
 *	  added in that order: the order decides the handles they get, and so
 *	  the bytes of the next snapshot, so each caller keeps its own;
 *	- the delivery history, offset by offset (offsets retention forgot stay
 *	  forgotten), and the late rows, each keeping its late_seq;
 *	- old's live rows (rows[0 .. nrows - 1], from sf_collect_rows) of the
 *	  windows wmap maps to one of p (old window index -> p's, -1: none);
 *	- seq, the offset replay counter and the forgotten identity count.
 *
 * remap[0 .. nremap - 1] (a recompute, remap.c; sorted by identity) gives
 * an identity of old another key and value (and measures); it keeps its
 * event_id, time, arrival number and deliveries.  An entry without a
 * mapping (d NULL) takes its identity out: not copied, its delivery slots
 * 0, as retention leaves a forgotten one (removed_offsets counts them).
 *
 * Nothing is finalized or forgotten here: the caller does that, once the
 * new definition's state is complete.  Any state field added to SfPipeline
 * must be carried over here too.
 */
void
sf_copy_state(const SfPipeline *old, SfPipeline *p, const int *pmap,
			  const int *wmap, SfIdentity **ids, int64 nids, const SfRow *rows,
			  int64 nrows, const SfRemapEntry *remap, int64 nremap)
{
	/* clock first: sf_bucket_restore files buckets by the watermark */
	for (int i = 0; i < p->def.npartitions; i++)
		p->partitions[i].idle = true;	/* a new partition */
	for (int k = 0; k < old->def.npartitions; k++)
	{
		const SfPartition *src = &old->partitions[k];
		SfPartition *dst = &p->partitions[pmap[k]];

		dst->has_progress = src->has_progress;
		dst->progress = src->progress;
		dst->idle = src->idle;
	}
	p->has_watermark = old->has_watermark;
	p->watermark = old->watermark;
	p->arrivals = old->arrivals;

	/* identities */
	for (int64 i = 0; i < nids; i++)
	{
		const SfIdentity *id = ids[i];
		SfString   *key;
		uint32		handle;
		SfIdentity *nid;
		const SfRemapEntry *re = NULL;

		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		if (nremap > 0)
			re = remap_find(remap, nremap, id);
		if (re != NULL && re->d == NULL)
			continue;			/* taken out: its deliveries are 0 below */
		if (re != NULL)
			key = sf_intern_key(p, re->d->key, re->d->key_len);
		else
			key = sf_intern_key(p, id->key->data, id->key->len);
		nid = sf_identity_add(p, id->event_id, id->event_id_len, key,
							  id->event_time,
							  re != NULL ? re->d->value : id->value,
							  id->late, &handle);
		if (p->def.measures != NULL)
		{
			int64	   *m = sf_id_measures(p, nid);

			memcpy(m, sf_id_measures(old, id),
				   (1 + p->def.measures->width) * sizeof(int64));
			/* the arrival number stays: the order of arrival does */
			if (re != NULL)
				memcpy(m + 1, re->mv, p->def.measures->width * sizeof(int64));
		}
	}

	/* deliveries, offset by offset */
	for (int k = 0; k < old->def.npartitions; k++)
	{
		const SfPartition *src = &old->partitions[k];

		/* offsets a retention forgot stay forgotten */
		if (src->base > 0)
			sf_partition_set_base(p, pmap[k], src->base);
		for (int64 o = src->base; o <= src->consumed; o++)
		{
			const SfIdentity *e = sf_partition_slot(old, src, o);
			uint32		handle = 0;

			if ((o & 1023) == 0)
				CHECK_FOR_INTERRUPTS();
			if (e != NULL && !e->forgotten &&
				sf_idtable_lookup(p, e->event_id, e->event_id_len, e->hash,
								  &handle) == NULL &&
				(nremap == 0 || remap_find(remap, nremap, e) == NULL))
				elog(ERROR, "streamforge: delivered identity not copied");
			sf_partition_append(p, pmap[k], handle);
		}
	}

	/* late output, keeping each late_seq */
	p->late_forgotten = old->late_forgotten;
	for (int64 i = 0; i < old->nlate; i++)
	{
		const SfLateEvent *le = &old->late[i];
		const SfIdentity *ev = le->event;

		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		if (ev->forgotten)
		{
			/* retention: the row outlives its forgotten identity */
			sf_late_append_forgotten(p, pmap[le->partition],
									 le->source_offset, ev->event_id,
									 ev->event_id_len, ev->key->data,
									 ev->key->len, ev->event_time, ev->value,
									 le->watermark);
		}
		else
		{
			SfIdentity *nev = sf_idtable_lookup(p, ev->event_id,
												ev->event_id_len, ev->hash,
												NULL);

			if (nev == NULL)
				elog(ERROR, "streamforge: late event without identity");
			sf_late_append(p, pmap[le->partition], le->source_offset, nev,
						   le->watermark);
		}
		p->late[p->nlate - 1].late_seq = le->late_seq;
	}

	/* live buckets */
	for (int64 i = 0; i < nrows; i++)
	{
		const SfRow *r = &rows[i];
		int			w = wmap[r->addr.window];
		SfString   *key;

		if (w < 0)
			continue;
		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		key = sf_intern_key(p, r->addr.key->data, r->addr.key->len);
		if (!sf_bucket_restore(p, w, key, r->addr.start, r->addr.end,
							   &r->agg))
			elog(ERROR, "streamforge: sessions of window \"%s\" overlap",
				 p->def.windows[w].name);
	}

	p->seq = old->seq;
	p->offset_replays = old->offset_replays;
	p->forgotten_ids = old->forgotten_ids;
}

/* ----------------------------------------------------------------
 * Changing the definition, phase by phase
 * ----------------------------------------------------------------
 */


/*
 * Check a definition change before anything is built, and plan it.  The
 * caller made the user-facing checks; here: the windows that stay keep
 * their definition and no partition goes (elog), a higher lateness decides
 * no late event again, the copied buckets' end + lateness fits, a derived
 * window does not need what retention forgot, and the live buckets stay
 * under streamforge.max_live_buckets.
 */
static void
redefine_check(SfPipeline *old, const SfPipelineDef *def, RedefinePlan *plan)
{
	bool		raised = def->lateness > old->def.lateness;
	int64		i;

	memset(plan, 0, sizeof(RedefinePlan));

	/* window correspondence */
	plan->wmap = palloc(Max(old->def.nwindows, 1) * sizeof(int));
	for (i = 0; i < old->def.nwindows; i++)
	{
		const SfWindowDef *w = &old->def.windows[i];
		int			k = sf_window_index(def, w->name);

		if (k >= 0 && !sf_window_def_same(&def->windows[k], w))
			elog(ERROR, "streamforge: window \"%s\" changed its definition",
				 w->name);
		plan->wmap[i] = k;
	}
	plan->pmap = palloc(Max(old->def.npartitions, 1) * sizeof(int));
	for (i = 0; i < old->def.npartitions; i++)
	{
		plan->pmap[i] = sf_partition_index(def, old->def.partitions[i]);
		if (plan->pmap[i] < 0)
			elog(ERROR, "streamforge: partition \"%s\" was removed",
				 old->def.partitions[i]);
	}
	plan->derive = palloc(Max(def->nwindows, 1) * sizeof(bool));
	for (i = 0; i < def->nwindows; i++)
	{
		plan->derive[i] = raised ||
			sf_window_index(&old->def, def->windows[i].name) < 0;
		plan->any_derived |= plan->derive[i];
	}
	plan->copied = palloc(Max(old->def.nwindows, 1) * sizeof(int));
	for (i = 0; i < old->def.nwindows; i++)
		plan->copied[i] = plan->wmap[i] >= 0 &&
			!plan->derive[plan->wmap[i]] ? plan->wmap[i] : -1;

	/* late events are never re-decided */
	if (raised)
	{
		const SfLateEvent *conflict = NULL;
		int128		highest = PG_INT64_MAX;

		/*
		 * The first conflicting event (in late_seq order) is named; the
		 * highest lateness possible is the lowest over every late event.
		 */
		for (i = 0; i < old->nlate; i++)
		{
			const SfLateEvent *le = &old->late[i];
			int128		most = (int128) le->watermark - le->event->event_time - 1;

			if (most < highest)
				highest = most;
			if (conflict == NULL &&
				(int128) le->event->event_time + def->lateness >= le->watermark)
				conflict = le;
		}
		if (conflict != NULL)
		{
			const SfLateEvent *le = conflict;

			ereport(ERROR,
					errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					errmsg("cannot raise the lateness of pipeline \"%s\" to " INT64_FORMAT,
						   def->name, def->lateness),
					errdetail("Late event " INT64_FORMAT " (event_time " INT64_FORMAT ") was late at watermark " INT64_FORMAT "; it would not have been with the new lateness, and late events are never decided again.",
							  le->late_seq, le->event->event_time,
							  le->watermark),
					errhint("The lateness can be raised to at most " INT64_FORMAT ".",
							(int64) highest));
		}
	}

	/* the copied buckets' end + lateness must fit (docs/semantics.md, Exact rules, 1) */
	plan->nrows = sf_collect_rows(old, false, &plan->rows);
	for (i = 0; i < plan->nrows; i++)
	{
		const SfRow *r = &plan->rows[i];

		if (plan->copied[r->addr.window] >= 0 &&
			(int128) r->addr.end + def->lateness > PG_INT64_MAX)
			sf_raise_out_of_range("window end plus lateness",
								  old->def.windows[r->addr.window].name);
	}

	/*
	 * Retention (docs/semantics.md, Retention): a derived window or a higher lateness would
	 * need the events the horizon forgot, and a higher lateness would also
	 * move the horizon back over them; refused once anything is forgotten
	 * (every forgotten identity left a forgotten offset record).
	 */
	if (plan->any_derived &&
		(old->forgotten_offsets > 0 || old->late_forgotten > 0))
		ereport(ERROR,
				errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				errmsg("cannot derive windows of pipeline \"%s\" from its history",
					   def->name),
				errdetail("Its retention has forgotten part of the events a new window or a higher lateness needs."));

	/*
	 * streamforge.max_live_buckets (54000): the buckets the new definition
	 * keeps and derives are counted before anything is built, and checked
	 * again before each derived bucket is allocated.  A change that adds no
	 * bucket (a dropped window, a lower lateness, a partition) passes even
	 * over a lowered cap.
	 */
	plan->limit = sf_max_live_buckets > 0 ?
		Max((int64) sf_max_live_buckets, old->nbuckets) : 0;
	plan->ids = sf_identity_array(old, &plan->nids);
	if (plan->limit > 0)
	{
		int64		count = 0;

		for (i = 0; i < plan->nrows; i++)
			if (plan->copied[plan->rows[i].addr.window] >= 0)
				count++;
		if (plan->any_derived)
			count += count_derived_buckets(old, def, plan->derive, plan->ids,
										   plan->nids, plan->limit - count);
		if (count > plan->limit)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("pipeline \"%s\" would have more than %d live buckets",
							def->name, sf_max_live_buckets),
					 errdetail("It has " INT64_FORMAT " live buckets; with the new definition it would have more than " INT64_FORMAT ".",
							   (int64) old->nbuckets, plan->limit),
					 errhint("Raise streamforge.max_live_buckets, or advance the watermark so that buckets are finalized first.")));
	}
}

/*
 * Derive the windows the plan names from old's accepted events, in one
 * operation that then finalizes by the new lateness, and forget what the
 * new horizon passes.  The operation's own changes compare with nothing
 * and are thrown away (seq included): the changes of the redefinition are
 * sf_redefine_diff's, against the old visible rows.
 *
 * Fixed and sliding windows first: a derived bucket of theirs is live at
 * the end (sf_derive_event skips finalized ones), so the count checked
 * before each is exact.  Sessions then: merging and finalization can only
 * tell the number of live sessions at the end, checked below; until then
 * they hold at most one session per remembered event.
 */
void
sf_redefine_derive(SfPipeline *p, const SfPipeline *old,
				   const RedefinePlan *plan)
{
	const SfPipelineDef *def = &p->def;
	SfChangeList scratch = {0};

	sf_op_begin(p);
	for (int pass = 0; plan->any_derived && pass < 2; pass++)
	{
		for (int64 i = 0; i < plan->nids; i++)
		{
			const SfIdentity *id = plan->ids[i];
			SfString   *key;
			int			w;

			if (id->late)
				continue;
			if ((i & 1023) == 0)
				CHECK_FOR_INTERRUPTS();
			key = sf_intern_key(p, id->key->data, id->key->len);
			for (w = 0; w < def->nwindows; w++)
				if (plan->derive[w] &&
					sf_window_merges(&def->windows[w]) == (pass == 1))
					sf_derive_event(p, w, id, key, plan->limit, old->nbuckets);
		}
	}
	sf_op_finish(p, &scratch);
	check_redefine_buckets(p, plan->limit, old->nbuckets, 0);
	p->seq = old->seq;
	/* a lower lateness moves the horizon forward: forget what it passes */
	sf_retention_forget(p);
}

/*
 * The changes of a definition change, appended to out: old's visible rows
 * against p's, by window name.  Their window indexes refer to *names, the
 * union of both definitions' windows (def is p's), set here from p's
 * definition, so its pointers (partitions, measures) live as long as p.
 */
void
sf_redefine_diff(SfPipeline *old, SfPipeline *p, const SfPipelineDef *def,
				 SfChangeList *out, SfPipelineDef *names)
{
	int		   *umap_old;		/* old window index -> names */
	int		   *umap_new;		/* new window index -> names */
	bool	   *umap_kept;		/* names index -> in the new definition */
	SfRow	   *rows;
	int64		nrows;
	SfRow	   *now;
	int64		nnow;
	int64		i,
				j;
	int			first;

	umap_old = palloc(Max(old->def.nwindows, 1) * sizeof(int));
	umap_new = palloc(Max(def->nwindows, 1) * sizeof(int));
	/*
	 * names is a copy of p's definition, not of def: def may be the
	 * caller's, pointing at old's partitions and measures (set_emit copies
	 * old->def), which are freed with old while the outputs still read
	 * names.
	 */
	union_windows(&old->def, &p->def, names, umap_old, umap_new);

	nrows = sf_collect_rows(old, true, &rows);
	nnow = sf_collect_rows(p, true, &now);
	for (i = 0; i < nrows; i++)
		rows[i].addr.window = umap_old[rows[i].addr.window];
	for (i = 0; i < nnow; i++)
		now[i].addr.window = umap_new[now[i].addr.window];
	umap_kept = palloc0(Max(names->nwindows, 1) * sizeof(bool));
	for (i = 0; i < def->nwindows; i++)
		umap_kept[umap_new[i]] = true;
	first = out->n;
	for (int pass = 0; pass < 2; pass++)
	{
		i = j = 0;
		while (i < nrows || j < nnow)
		{
			int			c;
			SfChange	ch = {0};

			CHECK_FOR_INTERRUPTS();
			if (i >= nrows)
				c = 1;
			else if (j >= nnow)
				c = -1;
			else
				c = sf_address_order(&rows[i].addr, &now[j].addr);
			/* a recompute may change a measure and nothing else */
			if (c == 0 && sf_agg_equal(&rows[i].agg, &now[j].agg) &&
				(def->measures == NULL ||
				 sf_magg_equal(def->measures, &rows[i].agg, &now[j].agg)))
			{
				i++;
				j++;
				continue;
			}
			/*
			 * A row of a window that stays, put past its lateness by a lower
			 * one, is finalized: forgotten without a retraction.
			 */
			if (pass == 0 && c < 0 && umap_kept[rows[i].addr.window] &&
				(int128) p->watermark > (int128) rows[i].addr.end + def->lateness)
			{
				i++;
				continue;
			}
			if (pass == 0 && c <= 0)
			{
				ch.op = SF_RETRACT;
				ch.row = rows[i];
				/* old is freed once p replaces it: p's copy of the key */
				ch.row.addr.key = sf_intern_key(p, rows[i].addr.key->data,
												rows[i].addr.key->len);
				/* and a copy of its aggregates' state (measures pipelines) */
				if (rows[i].agg.ext != NULL)
					ch.row.agg.ext = sf_magg_copy(old->def.measures,
												  rows[i].agg.ext);
				sf_changes_append(out, &ch);
			}
			if (pass == 1 && c >= 0)
			{
				ch.op = SF_UPSERT;
				ch.row = now[j];
				sf_changes_append(out, &ch);
			}
			if (c <= 0)
				i++;
			if (c >= 0)
				j++;
		}
	}
	for (i = first; i < out->n; i++)
		out->items[i].seq = ++p->seq;

	pfree(rows);
	pfree(now);
}

/*
 * sf_pipeline_redefine
 *		Build a pipeline defined by def (normalized, same name) holding old's
 *		state, as a child context of parent.
 *
 * Every partition of old must be in def, and every window of def that old
 * has must have the same definition in both (the caller checked, with the
 * user-facing errors).  The changes the new definition causes are appended
 * to out; their window indexes refer to *names, the union of both
 * definitions' windows (set here, in the current memory context, and
 * otherwise a copy of p's definition: its partitions and measures are p's),
 * since a retraction may name a dropped window; their keys are p's, so they
 * stay valid once old is freed.  old is not changed.
 */
SfPipeline *
sf_pipeline_redefine(MemoryContext parent, SfPipeline *old,
					 const SfPipelineDef *def, SfChangeList *out,
					 SfPipelineDef *names)
{
	RedefinePlan plan;
	SfPipeline *p;
	int			first = out->n;

	redefine_check(old, def, &plan);
	p = sf_pipeline_create(parent, def);
	sf_copy_state(old, p, plan.pmap, plan.copied, plan.ids, plan.nids,
			  plan.rows, plan.nrows, NULL, 0);
	sf_redefine_derive(p, old, &plan);
	pfree(plan.rows);
	sf_redefine_diff(old, p, def, out, names);
	/* the changes in p's emit mode (emit.c) */
	sf_emit_redefined(old, p, names, out, first);
	pfree(plan.ids);
	return p;
}

/* ----------------------------------------------------------------
 * Changing the retention
 * ----------------------------------------------------------------
 */

static int
handle_cmp(const void *a, const void *b)
{
	uint32		x = *(const uint32 *) a;
	uint32		y = *(const uint32 *) b;

	return (x > y) - (x < y);
}

/*
 * The body of sf_pipeline_with_retention: p's state into the empty q, with
 * the same partitions and windows, the identities in handle order (so that
 * q numbers them in the same order as p)
 */
static pg_noinline void
copy_with_retention(SfPipeline *p, SfPipeline *q)
{
	uint32	   *handles;
	SfIdentity **ids;
	int64		n = 0;
	uint64		pos = 0;
	int		   *pmap;
	int		   *wmap;
	SfRow	   *rows;
	int64		nrows;

	handles = palloc_extended(Max(p->nidentities, 1) * sizeof(uint32),
							  MCXT_ALLOC_HUGE);
	while (sf_idtable_next_handle(p, &pos, &handles[n]) != NULL)
	{
		if ((++n & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	if (n > 1)
		qsort(handles, n, sizeof(uint32), handle_cmp);
	ids = palloc_extended(Max(n, 1) * sizeof(SfIdentity *), MCXT_ALLOC_HUGE);
	for (int64 k = 0; k < n; k++)
		ids[k] = sf_id_ptr(p, handles[k]);
	pfree(handles);

	pmap = palloc(Max(p->def.npartitions, 1) * sizeof(int));
	for (int i = 0; i < p->def.npartitions; i++)
		pmap[i] = i;
	wmap = palloc(Max(p->def.nwindows, 1) * sizeof(int));
	for (int i = 0; i < p->def.nwindows; i++)
		wmap[i] = i;
	nrows = sf_collect_rows(p, false, &rows);

	sf_copy_state(p, q, pmap, wmap, ids, n, rows, nrows, NULL, 0);
	pfree(rows);
	pfree(wmap);
	pfree(pmap);
	pfree(ids);
	sf_retention_forget(q);
}

/*
 * sf_pipeline_with_retention
 *		A copy of p, as a new pipeline under parent, whose definition has
 *		the given retention (has_retention false: none), having forgotten
 *		what the new horizon forgets.  p is left as it was.
 *
 * For management calls that change a pipeline's retention.  The journal
 * replays under the definition its calls ran under, so the caller must
 * persist the result as a new snapshot (and empty the journal) in the same
 * transaction as the new retention column.
 *
 * A smaller retention forgets more, at once.  A larger one, or none, would
 * move the horizon back over what is already forgotten: the state would
 * then lack identities, offsets and events that its own horizon covers,
 * which no checkpoint may do (docs/semantics.md, Retention).  So that is refused (55000) once
 * the pipeline has forgotten anything; before, any change is fine.
 */
SfPipeline *
sf_pipeline_with_retention(MemoryContext parent, SfPipeline *p,
						   bool has_retention, int64 retention)
{
	SfPipelineDef def = p->def;
	SfPipeline *volatile q;

	if (has_retention && retention < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("retention must not be negative"),
				 errdetail("The retention given is " INT64_FORMAT ".", retention)));
	/* every forgotten identity left a forgotten offset record behind */
	if ((p->forgotten_offsets > 0 || p->late_forgotten > 0) &&
		(!has_retention ||
		 (p->def.has_retention && retention > p->def.retention)))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot %s the retention of pipeline \"%s\"",
						has_retention ? "raise" : "remove", p->def.name),
				 errdetail("The pipeline has already forgotten what the retention " INT64_FORMAT " does not cover.",
						   p->def.retention)));
	def.has_retention = has_retention;
	def.retention = has_retention ? retention : 0;
	q = sf_pipeline_create(parent, &def);

	PG_TRY();
	{
		copy_with_retention(p, q);
	}
	PG_CATCH();
	{
		sf_pipeline_free(q);
		PG_RE_THROW();
	}
	PG_END_TRY();
	return q;
}
