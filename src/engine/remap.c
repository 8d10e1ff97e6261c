/*-------------------------------------------------------------------------
 *
 * remap.c
 *	  A recompute: new mappings of a pipeline's accepted events, and its
 *	  live windows rebuilt from them (0.4.0, issue 47, item 3;
 *	  docs/joins.md, "Recomputing").
 *
 * An aggregate that joins dimension tables maps each event with the
 * dimension rows current when it is ingested; a dimension row changed
 * since changes nothing until a recompute is asked for.  The caller
 * (api/recompute.c) maps the events again, and sf_pipeline_remap builds
 * the pipeline they give, the way a definition change builds a new state
 * (redefine.c, whose phases it shares):
 *
 *	- each accepted event that r maps, with event_time in [from, to) and
 *	  every bucket live (in_live_windows: an event of a finalized bucket
 *	  keeps its mapping, since the finalized rows are what the remembered
 *	  events give), gets its new key and value (measures); it keeps its
 *	  event_id, time, arrival number and deliveries (sf_copy_state), so a
 *	  later re-delivery with the new mapping is a duplicate;
 *	- each such event in the range that r takes out (r->dropped: its
 *	  inner join or filter drops it now) leaves the pipeline: its identity
 *	  goes, its delivery slots stay consumed with no event (0, as
 *	  retention leaves a forgotten one; removed_offsets counts them), so a
 *	  re-delivery of it later is its first delivery, as for an event an
 *	  inner join dropped at ingest;
 *	- every live bucket is rebuilt from the remembered events
 *	  (sf_redefine_derive, all windows derived): a finalized row never
 *	  changes, as for any operation, and late events are not decided again;
 *	- the changes are the new visible rows against the old ones
 *	  (sf_redefine_diff), in the pipeline's emit mode.
 *
 * Refused: a mapping whose time is not its event's, or two different
 * mappings of one event (SF002), and, once a retention has forgotten
 * events, a live bucket that may hold some of them (55000: one that starts
 * before the horizon, a session that starts less than its gap after it,
 * before or after the re-mapping): it could not be rebuilt exactly.  A
 * retention at least as long as every window (and gap) never refuses.  Events the pipeline never accepted (never
 * delivered, or late) are not added.
 *
 * The cost is linear in the state, as a definition change's.
 *
 * Memory: the new pipeline is a new context under the caller's parent; old
 * is only read.  Scratch arrays and the changes are palloc'd in the
 * caller's CurrentMemoryContext.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/remap.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "engine/engine.h"
#include "engine/engine_int.h"

static inline bool
remap_in_range(const SfRemap *r, int64 t)
{
	return (!r->has_from || t >= r->from) && (!r->has_to || t < r->to);
}

/* SfRemapEntry by identity, then by position in the caller's array */
static int
remap_cmp(const void *a, const void *b)
{
	const SfRemapEntry *x = (const SfRemapEntry *) a;
	const SfRemapEntry *y = (const SfRemapEntry *) b;
	uintptr_t	px = (uintptr_t) x->id;
	uintptr_t	py = (uintptr_t) y->id;

	if (px != py)
		return (px > py) - (px < py);
	return (x->d > y->d) - (x->d < y->d);
}

/*
 * Whether every bucket of accepted event id, in every window, is live (not
 * finalized): only such an event is re-mapped or taken out.  A finalized
 * row never changes, and the finalized rows are what the remembered events
 * give (resync_outputs, restore and a higher lateness derive them again,
 * final_rows.c, redefine.c): an event of a finalized bucket keeps its
 * mapping, in its live buckets too.
 */
static bool
in_live_windows(SfPipeline *old, const SfIdentity *id)
{
	if (!old->has_watermark)
		return true;			/* nothing is finalized yet */
	for (int w = 0; w < old->def.nwindows; w++)
	{
		const SfWindowDef *wd = &old->def.windows[w];

		if (sf_window_merges(wd))
		{
			if (!sf_session_holds(old, w, id->key, id->event_time))
				return false;
		}
		else
		{
			int			n = sf_assign_windows(wd, id->event_time,
											  old->def.lateness,
											  old->assign_starts,
											  old->assign_ends,
											  old->assign_cap);

			for (int j = 0; j < n; j++)
				if ((int128) old->watermark >
					(int128) old->assign_ends[j] + old->def.lateness)
					return false;
		}
	}
	return true;
}

/*
 * Sessions: an event re-mapped or taken out changes the sessions of two
 * keys, which merge or split.  A piece split off a live session may be
 * past its lateness at once, and a session of the new key may reach a
 * finalized one: the rebuild would finalize a row without emitting it, or
 * count a finalized event again.  So refuse (55000) unless every event the
 * new state holds is in a live session exactly when it was before (a
 * re-mapped event was, in_live_windows).
 */
static void
check_sessions(SfPipeline *old, SfPipeline *p)
{
	SfIdentity **ids;
	int64		n;
	bool		any = false;

	for (int w = 0; w < p->def.nwindows; w++)
		any |= sf_window_merges(&p->def.windows[w]);
	if (!any || !old->has_watermark)
		return;
	ids = sf_identity_array(p, &n);
	for (int64 i = 0; i < n; i++)
	{
		const SfIdentity *id = ids[i];
		SfIdentity *oid;

		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		if (id->late)
			continue;
		oid = sf_idtable_lookup(old, id->event_id, id->event_id_len,
								id->hash, NULL);
		for (int w = 0; w < p->def.nwindows; w++)
		{
			bool		now,
						was;

			if (!sf_window_merges(&p->def.windows[w]))
				continue;
			now = sf_session_holds(p, w, id->key, id->event_time);
			was = oid != NULL && !oid->late &&
				sf_session_holds(old, w, oid->key, id->event_time);
			if (now != was)
				ereport(ERROR,
						errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						errmsg("cannot recompute pipeline \"%s\": a session of window \"%s\" would %s",
							   p->def.name, p->def.windows[w].name,
							   was ? "be finalized without being emitted" :
							   "merge with a finalized one"),
						errdetail("Event \"%s\" (key \"%s\", event_time " INT64_FORMAT ") is in a %s session before the recompute and in a %s one after it.",
								  sf_msg_str(id->event_id, id->event_id_len),
								  sf_msg_str(id->key->data, id->key->len),
								  id->event_time,
								  was ? "live" : "finalized",
								  was ? "finalized" : "live"),
						errhint("Recompute a range of event times that leaves these sessions as they are, or recompute before they are past the lateness."));
		}
	}
	pfree(ids);
}

/* Whether two mappings of one event agree (both take it out, or both map it alike) */
static bool
same_mapping(const SfRemapEntry *a, const SfRemapEntry *b, int width)
{
	if (a->d == NULL || b->d == NULL)
		return a->d == b->d;
	return a->d->key_len == b->d->key_len &&
		memcmp(a->d->key, b->d->key, a->d->key_len) == 0 &&
		a->d->value == b->d->value &&
		(a->mv == NULL || memcmp(a->mv, b->mv, width * sizeof(int64)) == 0);
}

/*
 * The accepted events of old that r maps in its range and whose mapping
 * changes, or that r takes out (r->dropped: entries without a mapping),
 * sorted by identity (palloc'd; *n_out of them); counts r's matched,
 * remapped and removed.  Refuses (SF002) a mapping whose time is not its
 * event's, and two different mappings of one event.
 */
static SfRemapEntry *
remap_plan(SfPipeline *old, SfRemap *r, int64 *n_out)
{
	const SfMeasuresDef *md = old->def.measures;
	int			width = md != NULL ? md->width : 0;
	SfRemapEntry *e;
	int64		n = 0;
	int64		kept = 0;

	r->matched = 0;
	r->remapped = 0;
	r->removed = 0;
	e = palloc_extended(Max((Size) r->n + r->ndropped, 1) * sizeof(SfRemapEntry),
						MCXT_ALLOC_HUGE);
	for (int i = 0; i < r->n + r->ndropped; i++)
	{
		bool		drop = i >= r->n;
		const SfDelivery *d = drop ? &r->dropped[i - r->n] : &r->ds[i];
		SfIdentity *id;

		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		if (!drop && !remap_in_range(r, d->event_time))
			continue;
		id = sf_idtable_lookup(old, d->event_id, d->event_id_len,
							   sf_hash_event_id(d->event_id, d->event_id_len),
							   NULL);
		/* never accepted into the windows: not added (late, or never came) */
		if (id == NULL || id->late || id->forgotten)
			continue;
		/* of a finalized bucket: kept as it is (in_live_windows) */
		if (!in_live_windows(old, id))
			continue;
		if (drop)
		{
			if (!remap_in_range(r, id->event_time))
				continue;
			e[n].id = id;
			e[n].d = NULL;
			e[n].mv = NULL;
			e[n].changed = true;
			n++;
			continue;
		}
		if (id->event_time != d->event_time)
			ereport(ERROR,
					errcode(ERRCODE_SF_IDENTITY_CONFLICT),
					errmsg("identity conflict for event \"%s\" in pipeline \"%s\"",
						   sf_msg_str(d->event_id, d->event_id_len),
						   old->def.name),
					errdetail("The event was delivered with event_time " INT64_FORMAT "; its mapping now gives " INT64_FORMAT ", and a recompute never changes an event's time.",
							  id->event_time, d->event_time));
		e[n].id = id;
		e[n].d = d;
		e[n].mv = md != NULL ? r->mv + (Size) i * width : NULL;
		e[n].changed = !(id->key->len == d->key_len &&
						 memcmp(id->key->data, d->key, d->key_len) == 0 &&
						 id->value == d->value &&
						 (md == NULL || sf_measures_match(old, id, e[n].mv)));
		n++;
	}
	if (n > 1)
		qsort(e, n, sizeof(SfRemapEntry), remap_cmp);

	/*
	 * One entry per event, only those that change.  The entries of one
	 * event are adjacent, its take-outs first (d NULL sorts first): a row
	 * that still maps the event keeps it (several rows may share an
	 * event_id; the one its filter drops made no delivery), and the rows
	 * that map it must agree.
	 */
	for (int64 i = 0; i < n;)
	{
		int64		j = i;
		int64		first;

		while (j < n && e[j].id == e[i].id)
			j++;
		first = j - 1;			/* the run's last entry: mapped if any is */
		for (int64 k = i; k < j; k++)
			if (e[k].d != NULL)
			{
				first = k;
				break;
			}
		for (int64 k = first + 1; k < j; k++)
			if (!same_mapping(&e[k], &e[first], width))
				ereport(ERROR,
						errcode(ERRCODE_SF_IDENTITY_CONFLICT),
						errmsg("identity conflict for event \"%s\" in pipeline \"%s\"",
							   sf_msg_str(e[k].id->event_id, e[k].id->event_id_len),
							   old->def.name),
						errdetail("The recompute maps the event twice, with different keys or values."));
		if (e[first].d == NULL)
			r->removed++;
		else
		{
			r->matched++;
			if (e[first].changed)
				r->remapped++;
		}
		if (e[first].changed)
			e[kept++] = e[first];
		i = j;
	}
	*n_out = kept;
	return e;
}

/*
 * With a retention that has forgotten events: refuse (55000) unless every
 * live bucket of x is known to hold remembered events only, that is starts
 * at or after the horizon h (a session: h + its gap, so that no forgotten
 * event touches it).  Checked on the old state, and on the new one, whose
 * re-mapped events may have made buckets the old state did not have.
 */
static void
check_remembered(SfPipeline *x, int64 h)
{
	SfRow	   *rows;
	int64		n = sf_collect_rows(x, false, &rows);

	for (int64 i = 0; i < n; i++)
	{
		const SfRow *r = &rows[i];
		const SfWindowDef *wd = &x->def.windows[r->addr.window];
		int128		need = (int128) h + (sf_window_merges(wd) ? wd->gap : 0);

		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		if ((int128) r->addr.start < need)
			ereport(ERROR,
					errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					errmsg("cannot recompute pipeline \"%s\" from its history",
						   x->def.name),
					errdetail("Its live window \"%s\", key \"%s\", [" INT64_FORMAT ", " INT64_FORMAT ") starts too close to the retention horizon " INT64_FORMAT " to hold only events the pipeline still remembers.",
							  wd->name, sf_msg_str(r->addr.key->data, r->addr.key->len),
							  r->addr.start, r->addr.end, h),
					errhint("A recompute rebuilds live windows from the remembered events: a retention at least as long as each window (and a session's gap) keeps them."));
	}
	pfree(rows);
}

/*
 * sf_pipeline_remap
 *		A copy of old, as a new pipeline under parent, in which the accepted
 *		events r maps get their new key and value (measures), those it
 *		drops are taken out, every live
 *		bucket rebuilt from the remembered events; the changes that causes
 *		are appended to out, their window indexes into *names (p's windows,
 *		set here).  Sets r->matched, r->remapped and r->removed.
 */
SfPipeline *
sf_pipeline_remap(MemoryContext parent, SfPipeline *old, SfRemap *r,
				  SfChangeList *out, SfPipelineDef *names)
{
	RedefinePlan plan;
	SfRemapEntry *remap;
	int64		nremap;
	SfIdentity **ids;
	int64		nids;
	SfPipeline *p;
	int			first = out->n;
	int			nw = old->def.nwindows;
	bool		forgot;

	/* with a retention that forgot events: only if no live bucket needs them */
	/*
	 * Without a horizon (no watermark yet) nothing was forgotten: the
	 * offsets a recompute took out count as forgotten with a retention
	 */
	forgot = old->has_horizon &&
		(old->forgotten_offsets > 0 || old->late_forgotten > 0);
	if (forgot)
		check_remembered(old, old->horizon);
	remap = remap_plan(old, r, &nremap);

	memset(&plan, 0, sizeof(plan));
	plan.pmap = palloc(Max(old->def.npartitions, 1) * sizeof(int));
	for (int i = 0; i < old->def.npartitions; i++)
		plan.pmap[i] = i;
	plan.copied = palloc(Max(nw, 1) * sizeof(int));
	plan.derive = palloc(Max(nw, 1) * sizeof(bool));
	for (int w = 0; w < nw; w++)
	{
		plan.copied[w] = -1;	/* every window rebuilt */
		plan.derive[w] = true;
	}
	plan.any_derived = true;
	plan.limit = sf_max_live_buckets > 0 ?
		Max((int64) sf_max_live_buckets, old->nbuckets) : 0;

	ids = sf_identity_array(old, &nids);
	p = sf_pipeline_create(parent, &old->def);
	sf_copy_state(old, p, plan.pmap, plan.copied, ids, nids, NULL, 0, remap,
				  nremap);
	pfree(ids);
	pfree(remap);
	/* the buckets from p's identities, which carry the new mappings */
	plan.ids = sf_identity_array(p, &plan.nids);
	sf_redefine_derive(p, old, &plan);
	pfree(plan.ids);
	check_sessions(old, p);
	if (forgot)
		check_remembered(p, old->horizon);
	sf_redefine_diff(old, p, &p->def, out, names);
	sf_emit_redefined(old, p, names, out, first);
	return p;
}
