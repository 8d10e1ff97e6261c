/*-------------------------------------------------------------------------
 *
 * redefine.c
 *	  Changing a running pipeline's definition without losing its state.
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
 * watermark and the definition (SPEC.md section 4; codec_validate.c,
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
 * carried over here too (twice: sf_pipeline_redefine, and copy_state).
 *
 * A retention change (set_retention) changes no window: it copies the
 * state under the new retention as it is (sf_pipeline_with_retention, at
 * the end of this file) and forgets what the new horizon forgets.
 *
 * The engine knows nothing of SQL: persist.c stores the result
 * (sf_persist_redefine) and api/manage.c is the SQL glue.
 *
 * Copyright (c) 2026, the streamforge authors
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
 * (touching sessions merge, SPEC.md 5.10), each live unless finalized.
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
		if (wd->kind == SF_WINDOW_SESSION)
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
			int128		step = wd->kind == SF_WINDOW_FIXED ? wd->size : wd->step;
			int128		size = wd->size;
			/* first start (in steps) not finalized: start + size + lateness >= wm */
			int128		kmin = has_wm ?
				-sf_floor_div(-(wm - size - def->lateness), step) : 0;
			int128		prev_hi = 0;

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
 * Add one accepted event to the derived window w of p (as engine.c does),
 * refusing a new fixed or sliding bucket past limit (check_redefine_buckets)
 */
static void
derive_event(SfPipeline *p, int w, const SfIdentity *id, SfString *key,
			 int64 limit, int64 old_buckets)
{
	const SfWindowDef *wd = &p->def.windows[w];
	int			n;
	int			j;

	n = sf_assign_windows(wd, id->event_time, p->def.lateness,
						  p->assign_starts, p->assign_ends, p->assign_cap);
	if (wd->kind == SF_WINDOW_SESSION)
	{
		sf_session_add(p, w, key, p->assign_starts[0], p->assign_ends[0],
					   id->value);
		return;
	}
	for (j = 0; j < n; j++)
	{
		SfBucket   *b;

		/* finalized by now: the event never enters it (SPEC 3) */
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

/*
 * sf_pipeline_redefine
 *		Build a pipeline defined by def (normalized, same name) holding old's
 *		state, as a child context of parent.
 *
 * Every partition of old must be in def, and every window of def that old
 * has must have the same definition in both (the caller checked, with the
 * user-facing errors).  The changes the new definition causes are appended
 * to out; their window indexes refer to *names, the union of both
 * definitions' windows (set here, in the current memory context), since a
 * retraction may name a dropped window; their keys are p's, so they stay
 * valid once old is freed.  old is not changed.
 */
SfPipeline *
sf_pipeline_redefine(MemoryContext parent, SfPipeline *old,
					 const SfPipelineDef *def, SfChangeList *out,
					 SfPipelineDef *names)
{
	SfPipeline *p;
	int		   *wmap;			/* old window index -> new, -1: dropped */
	int		   *umap_old;		/* old window index -> names */
	int		   *umap_new;		/* new window index -> names */
	bool	   *umap_kept;		/* names index -> in the new definition */
	bool	   *derive;			/* new windows built from the history */
	bool		any_derived = false;
	bool		raised = def->lateness > old->def.lateness;
	uint32		handle;
	SfIdentity **ids;
	int64		nids;
	SfRow	   *rows;
	int64		nrows;
	SfRow	   *now;
	int64		nnow;
	int64		i,
				j;
	int			first;
	SfChangeList scratch = {0};
	int64		limit;

	/* window correspondence */
	wmap = palloc(Max(old->def.nwindows, 1) * sizeof(int));
	for (i = 0; i < old->def.nwindows; i++)
	{
		const SfWindowDef *w = &old->def.windows[i];
		int			k = sf_window_index(def, w->name);

		if (k >= 0 && (def->windows[k].kind != w->kind ||
					   def->windows[k].size != w->size ||
					   def->windows[k].step != w->step ||
					   def->windows[k].gap != w->gap))
			elog(ERROR, "streamforge: window \"%s\" changed its definition",
				 w->name);
		wmap[i] = k;
	}
	for (i = 0; i < old->def.npartitions; i++)
		if (sf_partition_index(def, old->def.partitions[i]) < 0)
			elog(ERROR, "streamforge: partition \"%s\" was removed",
				 old->def.partitions[i]);
	derive = palloc(Max(def->nwindows, 1) * sizeof(bool));
	for (i = 0; i < def->nwindows; i++)
	{
		derive[i] = raised || sf_window_index(&old->def, def->windows[i].name) < 0;
		any_derived |= derive[i];
	}
	umap_old = palloc(Max(old->def.nwindows, 1) * sizeof(int));
	umap_new = palloc(Max(def->nwindows, 1) * sizeof(int));
	union_windows(&old->def, def, names, umap_old, umap_new);

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

	/* the copied buckets' end + lateness must fit (SPEC 5.1) */
	nrows = sf_collect_rows(old, false, &rows);
	for (i = 0; i < nrows; i++)
	{
		const SfRow *r = &rows[i];

		if (wmap[r->addr.window] >= 0 && !derive[wmap[r->addr.window]] &&
			(int128) r->addr.end + def->lateness > PG_INT64_MAX)
			sf_raise_out_of_range("window end plus lateness",
								  old->def.windows[r->addr.window].name);
	}

	/*
	 * Retention (SPEC.md 6): a derived window or a higher lateness would
	 * need the events the horizon forgot, and a higher lateness would also
	 * move the horizon back over them; refused once anything is forgotten
	 * (every forgotten identity left a forgotten offset record).
	 */
	if (any_derived && (old->forgotten_offsets > 0 || old->late_forgotten > 0))
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
	limit = sf_max_live_buckets > 0 ?
		Max((int64) sf_max_live_buckets, old->nbuckets) : 0;
	ids = sf_identity_array(old, &nids);
	if (limit > 0)
	{
		int64		count = 0;

		for (i = 0; i < nrows; i++)
			if (wmap[rows[i].addr.window] >= 0 &&
				!derive[wmap[rows[i].addr.window]])
				count++;
		if (any_derived)
			count += count_derived_buckets(old, def, derive, ids, nids,
										   limit - count);
		if (count > limit)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("pipeline \"%s\" would have more than %d live buckets",
							def->name, sf_max_live_buckets),
					 errdetail("It has " INT64_FORMAT " live buckets; with the new definition it would have more than " INT64_FORMAT ".",
							   (int64) old->nbuckets, limit),
					 errhint("Raise streamforge.max_live_buckets, or advance the watermark so that buckets are finalized first.")));
	}

	p = sf_pipeline_create(parent, def);

	/* clock first: sf_bucket_insert files buckets by the watermark */
	for (i = 0; i < def->npartitions; i++)
	{
		int			k = sf_partition_index(&old->def, def->partitions[i]);

		if (k < 0)
		{
			p->partitions[i].idle = true;
			continue;
		}
		p->partitions[i].has_progress = old->partitions[k].has_progress;
		p->partitions[i].progress = old->partitions[k].progress;
		p->partitions[i].idle = old->partitions[k].idle;
	}
	p->has_watermark = old->has_watermark;
	p->watermark = old->watermark;

	/* identities */
	for (i = 0; i < nids; i++)
	{
		SfIdentity *id = ids[i];
		SfString   *key;

		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		key = sf_intern_key(p, id->key->data, id->key->len);
		(void) sf_identity_add(p, id->event_id, id->event_id_len,
							   key, id->event_time, id->value, id->late,
							   &handle);
	}

	/* deliveries, offset by offset */
	for (i = 0; i < old->def.npartitions; i++)
	{
		const SfPartition *src = &old->partitions[i];
		int			k = sf_partition_index(def, old->def.partitions[i]);

		/* offsets a retention forgot stay forgotten */
		if (src->base > 0)
			sf_partition_set_base(p, k, src->base);
		for (j = src->base; j <= src->consumed; j++)
		{
			const SfIdentity *e = sf_partition_slot(old, src, j);

			if ((j & 1023) == 0)
				CHECK_FOR_INTERRUPTS();
			handle = 0;
			if (e != NULL && !e->forgotten &&
				sf_idtable_lookup(p, e->event_id, e->event_id_len, e->hash,
								  &handle) == NULL)
				elog(ERROR, "streamforge: delivered identity not copied");
			sf_partition_append(p, k, handle);
		}
	}

	/* late output, keeping each late_seq */
	p->late_forgotten = old->late_forgotten;
	for (i = 0; i < old->nlate; i++)
	{
		const SfLateEvent *le = &old->late[i];
		const SfIdentity *ev = le->event;
		SfIdentity *nev;

		if (!ev->forgotten)
			nev = sf_idtable_lookup(p, ev->event_id, ev->event_id_len,
									ev->hash, NULL);
		else
		{
			/* retention: the row outlives its forgotten identity */
			nev = sf_identity_new(p, ev->event_id, ev->event_id_len, ev->hash,
								  &handle);
			nev->key = sf_intern_key(p, ev->key->data, ev->key->len);
			nev->event_time = ev->event_time;
			nev->value = ev->value;
			nev->late = true;
			nev->forgotten = true;
		}
		if (nev == NULL)
			elog(ERROR, "streamforge: late event without identity");
		sf_late_append(p,
					   sf_partition_index(def, old->def.partitions[le->partition]),
					   le->source_offset, nev, le->watermark);
		p->late[p->nlate - 1].late_seq = le->late_seq;
	}

	/* live buckets of the windows that stay as they are */
	for (i = 0; i < nrows; i++)
	{
		const SfRow *r = &rows[i];
		int			w = wmap[r->addr.window];
		SfString   *key;
		SfBucket   *b;

		if (w < 0 || derive[w])
			continue;
		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		key = sf_intern_key(p, r->addr.key->data, r->addr.key->len);
		b = sf_bucket_insert(p, w, key, r->addr.start, r->addr.end);
		b->agg = r->agg;
		if (def->windows[w].kind == SF_WINDOW_SESSION &&
			!sf_session_insert_bucket(p, b))
			elog(ERROR, "streamforge: sessions of window \"%s\" overlap",
				 def->windows[w].name);
	}

	/*
	 * One operation derives the other windows from the accepted events and
	 * then finalizes by the new lateness.  Its own changes compare with
	 * nothing and are thrown away (seq included): the changes of the
	 * redefinition are computed below, against the old visible rows.
	 */
	sf_op_begin(p);

	/*
	 * Fixed and sliding windows first: a derived bucket of theirs is live
	 * at the end (derive_event skips finalized ones), so the count checked
	 * before each is exact.  Sessions then: merging and finalization can
	 * only tell the number of live sessions at the end, checked below; until
	 * then they hold at most one session per remembered event.
	 */
	for (int pass = 0; any_derived && pass < 2; pass++)
	{
		for (i = 0; i < nids; i++)
		{
			const SfIdentity *id = ids[i];
			SfString   *key;
			int			w;

			if (id->late)
				continue;
			if ((i & 1023) == 0)
				CHECK_FOR_INTERRUPTS();
			key = sf_intern_key(p, id->key->data, id->key->len);
			for (w = 0; w < def->nwindows; w++)
				if (derive[w] &&
					(def->windows[w].kind == SF_WINDOW_SESSION) == (pass == 1))
					derive_event(p, w, id, key, limit, old->nbuckets);
		}
	}
	sf_op_finish(p, &scratch);
	check_redefine_buckets(p, limit, old->nbuckets, 0);
	p->seq = old->seq;
	p->offset_replays = old->offset_replays;
	p->forgotten_ids = old->forgotten_ids;
	/* a lower lateness moves the horizon forward: forget what it passes */
	sf_retention_forget(p);

	/* changes: old visible rows against new ones, by window name */
	pfree(rows);
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
			SfChange	ch;

			CHECK_FOR_INTERRUPTS();
			if (i >= nrows)
				c = 1;
			else if (j >= nnow)
				c = -1;
			else
				c = sf_address_order(&rows[i].addr, &now[j].addr);
			if (c == 0 && sf_agg_equal(&rows[i].agg, &now[j].agg))
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
	pfree(ids);
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

/* The body of sf_pipeline_with_retention: p's state into the empty q */
static pg_noinline void
copy_state(SfPipeline *p, SfPipeline *q)
{
	const SfPipelineDef *def = &q->def;
	uint32	   *old;
	uint32	   *new;
	int64		n = 0;
	uint64		pos = 0;
	SfIdentity *id;
	SfRow	   *rows;
	int64		nrows;

	/* clock */
	for (int i = 0; i < def->npartitions; i++)
	{
		q->partitions[i].has_progress = p->partitions[i].has_progress;
		q->partitions[i].progress = p->partitions[i].progress;
		q->partitions[i].idle = p->partitions[i].idle;
	}
	q->has_watermark = p->has_watermark;
	q->watermark = p->watermark;

	/* identities, in handle order; old[k] became new[k] */
	old = palloc_extended(Max(p->nidentities, 1) * sizeof(uint32),
						  MCXT_ALLOC_HUGE);
	new = palloc_extended(Max(p->nidentities, 1) * sizeof(uint32),
						  MCXT_ALLOC_HUGE);
	while (sf_idtable_next_handle(p, &pos, &old[n]) != NULL)
		n++;
	if (n > 1)
		qsort(old, n, sizeof(uint32), handle_cmp);
	for (int64 k = 0; k < n; k++)
	{
		id = sf_id_ptr(p, old[k]);
		if ((k & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		(void) sf_identity_add(q, id->event_id, id->event_id_len,
							   sf_intern_key(q, id->key->data, id->key->len),
							   id->event_time, id->value, id->late, &new[k]);
	}

	/* delivery history: forgotten slots stay forgotten */
	for (int i = 0; i < def->npartitions; i++)
	{
		const SfPartition *part = &p->partitions[i];

		if (part->base > 0)
			sf_partition_set_base(q, i, part->base);
		for (int64 o = part->base; o <= part->consumed; o++)
		{
			uint32		h = part->deliveries[part->head + (o - part->base)];
			uint32	   *at = NULL;

			if (h != 0 && !sf_id_ptr(p, h)->forgotten)
				at = bsearch(&h, old, n, sizeof(uint32), handle_cmp);
			sf_partition_append(q, i, at ? new[at - old] : 0);
		}
	}
	pfree(old);
	pfree(new);

	/* late output: a row whose identity is forgotten keeps its event */
	q->late_forgotten = p->late_forgotten;
	for (int64 k = 0; k < p->nlate; k++)
	{
		const SfLateEvent *l = &p->late[k];
		SfIdentity *ev = l->event;
		SfIdentity *nev;

		if (!ev->forgotten)
			nev = sf_idtable_lookup(q, ev->event_id, ev->event_id_len,
									ev->hash, NULL);
		else
		{
			uint32		h;

			nev = sf_identity_new(q, ev->event_id, ev->event_id_len,
								  ev->hash, &h);
			nev->key = sf_intern_key(q, ev->key->data, ev->key->len);
			nev->event_time = ev->event_time;
			nev->value = ev->value;
			nev->late = true;
			nev->forgotten = true;
		}
		if (nev == NULL)
			elog(ERROR, "streamforge: late event without identity");
		sf_late_append(q, l->partition, l->source_offset, nev, l->watermark);
	}

	/* live buckets */
	nrows = sf_collect_rows(p, false, &rows);
	for (int64 k = 0; k < nrows; k++)
	{
		const SfRow *r = &rows[k];
		SfString   *key = sf_intern_key(q, r->addr.key->data, r->addr.key->len);
		SfBucket   *b = sf_bucket_insert(q, r->addr.window, key,
										 r->addr.start, r->addr.end);

		b->agg = r->agg;
		if (def->windows[r->addr.window].kind == SF_WINDOW_SESSION &&
			!sf_session_insert_bucket(q, b))
			elog(ERROR, "streamforge: live sessions overlap");
	}
	pfree(rows);

	q->seq = p->seq;
	q->offset_replays = p->offset_replays;
	q->forgotten_ids = p->forgotten_ids;
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
 * which no checkpoint may do (SPEC.md 6).  So that is refused (55000) once
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
		copy_state(p, q);
	}
	PG_CATCH();
	{
		sf_pipeline_free(q);
		PG_RE_THROW();
	}
	PG_END_TRY();
	return q;
}
