/*-------------------------------------------------------------------------
 *
 * codec_validate.c
 *	  Checkpoint codec, phase 3: validation of a parsed document.
 *
 * Each function checks one part of the document (CkDoc, codec.h) and
 * raises SF003 "invalid checkpoint: ..." with a detail naming what is
 * wrong; the rules are listed in docs/checkpoint-format.md ("Validation").
 * The window index and the changelog documents have their own decoders
 * (ck_window_index_decode, ck_changelog_decode), as the contract's operator
 * states do; ck_check_views and ck_check_derivation then check the parts
 * against each other, the delivery history and the pipeline.  Nothing here
 * touches the engine's state: codec.c builds the pipeline afterwards.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "codec/codec.h"
#include "codec/codec_int.h"
#include "engine/engine.h"

/* ----------------------------------------------------------------
 * Phase 3: validation
 *
 * Each function checks one part of the document, relying only on the parts
 * checked before it (the order is that of ck_decode).
 * ----------------------------------------------------------------
 */

static char *
ck_window_desc(const SfWindowDef *w)
{
	switch (w->kind)
	{
		case SF_WINDOW_FIXED:
			return psprintf("fixed(size " INT64_FORMAT ")", w->size);
		case SF_WINDOW_SLIDING:
			return psprintf("sliding(size " INT64_FORMAT ", step " INT64_FORMAT ")",
							w->size, w->step);
		case SF_WINDOW_SESSION:
			return psprintf("session(gap " INT64_FORMAT ")", w->gap);
	}
	return pstrdup("unknown");
}

static bool
ck_window_def_equal(const SfWindowDef *a, const SfWindowDef *b)
{
	if (a->kind != b->kind || strcmp(a->name, b->name) != 0)
		return false;
	switch (a->kind)
	{
		case SF_WINDOW_FIXED:
			return a->size == b->size;
		case SF_WINDOW_SLIDING:
			return a->size == b->size && a->step == b->step;
		case SF_WINDOW_SESSION:
			return a->gap == b->gap;
	}
	return false;
}

/*
 * The checkpoint's own definition must be valid (as create_pipeline would
 * accept it) and, when restoring, equivalent to the target's (SPEC 5.9).
 * Both are normalized: partitions and windows sorted by name.
 */
void
ck_check_definition(const CkDoc *doc, const SfPipelineDef *target)
{
	const SfPipelineDef *def = &doc->def;
	int			i,
				j;

	if (def->npartitions < 1)
		ck_error(CK_DEFINITION, "The definition has no partition.");
	if (def->nwindows < 1)
		ck_error(CK_DEFINITION, "The definition has no window.");
	if (def->lateness < 0)
		ck_error(CK_DEFINITION, "The definition has a negative lateness " INT64_FORMAT ".",
				 def->lateness);
	if (def->has_retention && def->retention < 0)
		ck_error(CK_DEFINITION, "The definition has a negative retention " INT64_FORMAT ".",
				 def->retention);
	for (i = 1; i < def->npartitions; i++)
		if (strcmp(def->partitions[i - 1], def->partitions[i]) >= 0)
			ck_error(CK_DEFINITION,
					 "The partitions of the definition are not unique and in byte order at \"%s\".",
					 def->partitions[i]);
	for (i = 0; i < def->nwindows; i++)
	{
		const SfWindowDef *w = &def->windows[i];

		if (i > 0 && strcmp(def->windows[i - 1].name, w->name) >= 0)
			ck_error(CK_DEFINITION,
					 "The windows of the definition are not unique and in byte order at \"%s\".",
					 w->name);
		if ((w->kind != SF_WINDOW_SESSION && w->size <= 0) ||
			(w->kind == SF_WINDOW_SLIDING && w->step <= 0) ||
			(w->kind == SF_WINDOW_SESSION && w->gap <= 0) ||
			(w->kind == SF_WINDOW_SLIDING &&
			 ((int128) w->size + w->step - 1) / w->step > SF_MAX_SLIDING_BUCKETS))
			ck_error(CK_DEFINITION, "Window \"%s\" has an invalid definition %s.",
					 w->name, ck_window_desc(w));
	}

	if (target == NULL)
		return;

	/* equivalence: walk both sorted name lists */
	for (i = 0, j = 0; i < def->npartitions || j < target->npartitions;)
	{
		int			c;

		if (i >= def->npartitions)
			c = 1;
		else if (j >= target->npartitions)
			c = -1;
		else
			c = strcmp(def->partitions[i], target->partitions[j]);
		if (c < 0)
			ck_error(CK_DEFINITION,
					 "The checkpoint has partition \"%s\", the pipeline has not.",
					 def->partitions[i]);
		if (c > 0)
			ck_error(CK_DEFINITION,
					 "The pipeline has partition \"%s\", the checkpoint has not.",
					 target->partitions[j]);
		i++, j++;
	}
	for (i = 0, j = 0; i < def->nwindows || j < target->nwindows;)
	{
		int			c;

		if (i >= def->nwindows)
			c = 1;
		else if (j >= target->nwindows)
			c = -1;
		else
			c = strcmp(def->windows[i].name, target->windows[j].name);
		if (c < 0)
			ck_error(CK_DEFINITION,
					 "The checkpoint has window \"%s\", the pipeline has not.",
					 def->windows[i].name);
		if (c > 0)
			ck_error(CK_DEFINITION,
					 "The pipeline has window \"%s\", the checkpoint has not.",
					 target->windows[j].name);
		if (!ck_window_def_equal(&def->windows[i], &target->windows[j]))
			ck_error(CK_DEFINITION,
					 "Window \"%s\" is %s in the checkpoint and %s in the pipeline.",
					 def->windows[i].name, ck_window_desc(&def->windows[i]),
					 ck_window_desc(&target->windows[j]));
		i++, j++;
	}
	if (def->lateness != target->lateness)
		ck_error(CK_DEFINITION,
				 "The checkpoint has lateness " INT64_FORMAT ", the pipeline " INT64_FORMAT ".",
				 def->lateness, target->lateness);
	/* SPEC.md 6: equivalence includes the retention */
	if (def->has_retention != target->has_retention ||
		(def->has_retention && def->retention != target->retention))
	{
		char	   *a = def->has_retention ? psprintf(INT64_FORMAT, def->retention) : "none";
		char	   *b = target->has_retention ? psprintf(INT64_FORMAT, target->retention) : "none";

		ck_error(CK_DEFINITION,
				 "The checkpoint has retention %s, the pipeline %s.", a, b);
	}
}

/*
 * The clock.  Rules (docs/checkpoint-format.md, "Validation"):
 *	- one entry per partition of the definition, in its order;
 *	- a watermark is the minimum progress of the active partitions at some
 *	  moment, and progress never decreases: some partition's progress is at
 *	  least the watermark;
 *	- the watermark is recomputed after every clock change and never
 *	  decreases: when at least one partition is active and every active
 *	  partition has reported, the watermark exists and is at least their
 *	  minimum progress.
 */
void
ck_check_clock(CkDoc *doc)
{
	const SfPipelineDef *def = &doc->def;
	bool		any_active = false;
	bool		all_reported = true;
	bool		any_progress = false;
	int64		min_active = PG_INT64_MAX;
	int64		max_progress = PG_INT64_MIN;

	if (doc->nclock != def->npartitions)
		ck_error(CK_STATE,
				 "The clock has %lld partitions, the definition %d.",
				 (long long) doc->nclock, def->npartitions);
	for (int i = 0; i < def->npartitions; i++)
	{
		const CkClock *c = &doc->clock[i];

		if (strcmp(c->name.data, def->partitions[i]) != 0)
			ck_error(CK_STATE,
					 "The clock lists partition \"%s\" where the definition has \"%s\".",
					 sf_msg_str(c->name.data, c->name.len), def->partitions[i]);
		if (c->has_progress)
		{
			any_progress = true;
			max_progress = Max(max_progress, c->progress);
		}
		if (!c->idle)
		{
			any_active = true;
			if (c->has_progress)
				min_active = Min(min_active, c->progress);
			else
				all_reported = false;
		}
	}

	if (doc->has_watermark && (!any_progress || max_progress < doc->watermark))
		ck_error(CK_STATE,
				 "The watermark " INT64_FORMAT " is above the progress of every partition.",
				 doc->watermark);
	if (doc->has_watermark && any_active && !all_reported)
		ck_error(CK_STATE,
				 "The watermark " INT64_FORMAT " exists, but an active partition has never reported progress.",
				 doc->watermark);
	if (any_active && all_reported)
	{
		if (!doc->has_watermark)
			ck_error(CK_STATE,
					 "Every active partition has reported progress, but there is no watermark.");
		if (doc->watermark < min_active)
			ck_error(CK_STATE,
					 "The watermark " INT64_FORMAT " is below " INT64_FORMAT ", the minimum progress of the active partitions.",
					 doc->watermark, min_active);
	}

	/* the horizon the rest of the state is checked against (SPEC.md 6) */
	doc->has_horizon = sf_horizon(def, doc->has_watermark, doc->watermark,
								  &doc->horizon);
}

/*
 * The delivery history: one source per partition, in definition order;
 * every delivery names a known identity, and every identity is delivered.
 */
void
ck_check_sources(CkDoc *doc)
{
	const SfPipelineDef *def = &doc->def;

	if (doc->nsources != def->npartitions)
		ck_error(CK_STATE,
				 "The sources have %lld partitions, the definition %d.",
				 (long long) doc->nsources, def->npartitions);
	for (int i = 0; i < def->npartitions; i++)
	{
		const CkSource *src = &doc->sources[i];

		if (strcmp(src->name.data, def->partitions[i]) != 0)
			ck_error(CK_STATE,
					 "The sources list partition \"%s\" where the definition has \"%s\".",
					 sf_msg_str(src->name.data, src->name.len), def->partitions[i]);
		if (src->first_unknown_at >= 0)
			ck_error(CK_STATE,
					 "Offset %lld of partition \"%s\" delivers event_id \"%s\", which has no identity.",
					 (long long) src->first_unknown_at, src->name.data,
					 src->first_unknown.data);
		if (src->base < 0 || (int128) src->base + src->n - 1 > PG_INT64_MAX)
			ck_error(CK_STATE,
					 "The deliveries of partition \"%s\" start at offset " INT64_FORMAT ", outside bigint offsets.",
					 src->name.data, src->base);
		for (int64 o = 0; o < src->n; o++)
			if (src->deliveries[o] != CK_FORGOTTEN)
				doc->ids[src->deliveries[o]].ndeliveries++;
	}
	for (int64 k = 0; k < doc->nids; k++)
	{
		if (doc->ids[k].ndeliveries == 0)
			ck_error(CK_STATE, "Identity \"%s\" is never delivered.",
					 doc->ids[k].event_id.data);
		/* an identity is remembered exactly as long as its deliveries */
		if (doc->has_horizon && doc->ids[k].event_time < doc->horizon)
			ck_error(CK_STATE,
					 "Identity \"%s\" (event_time " INT64_FORMAT ") is below the horizon " INT64_FORMAT ", which forgets it.",
					 doc->ids[k].event_id.data, doc->ids[k].event_time,
					 doc->horizon);
	}
}

/*
 * The late output.  Rules: late_seq runs 1..n; each row names a late
 * identity, a partition and a consumed offset that delivered that identity;
 * each late identity has exactly one row; the event was late at the row's
 * watermark (event_time + lateness < watermark); watermarks never decrease
 * in late_seq order and never exceed the current one; the late rows of one
 * partition are in offset order; and no delivery of a late identity
 * precedes its late row in that partition (the first delivery of an
 * event_id makes it known, so only that one can be late).
 */
void
ck_check_late(CkDoc *doc)
{
	const SfPipelineDef *def = &doc->def;
	int64	   *last_offset;

	last_offset = palloc(sizeof(int64) * def->npartitions);
	for (int i = 0; i < def->npartitions; i++)
		last_offset[i] = -1;

	if (doc->late_sequence < doc->nlate)
		ck_error(CK_STATE,
				 "The late_sequence " INT64_FORMAT " is below the number of late events, %lld.",
				 doc->late_sequence, (long long) doc->nlate);
	for (int64 n = 0; n < doc->nlate; n++)
	{
		CkLate	   *le = &doc->late[n];
		CkIdentity *id = NULL;
		const CkSource *src;
		int64		first = doc->late_sequence - doc->nlate + 1;
		int64		event_time;

		if (le->late_seq != first + n)
			ck_error(CK_STATE,
					 "Late event %lld has late_seq " INT64_FORMAT "; late_seq runs from " INT64_FORMAT " without gaps.",
					 (long long) (n + 1), le->late_seq, first);
		if (doc->def.has_retention && doc->has_horizon &&
			le->watermark < doc->horizon)
			ck_error(CK_STATE,
					 "Late event " INT64_FORMAT " has watermark " INT64_FORMAT ", below the horizon " INT64_FORMAT ", which forgets it.",
					 le->late_seq, le->watermark, doc->horizon);
		if (doc->def.has_retention && doc->has_horizon &&
			le->event_time < doc->horizon)
			le->identity = -1;	/* forgotten: the row carries the event */
		else
		{
			if (le->identity < 0)
				ck_error(CK_STATE,
						 "Late event " INT64_FORMAT " names event_id \"%s\", which has no identity.",
						 le->late_seq, le->event_id.data);
			id = &doc->ids[le->identity];
			if (!id->late)
				ck_error(CK_STATE,
						 "Late event " INT64_FORMAT " names event_id \"%s\", whose identity is not late.",
						 le->late_seq, le->event_id.data);
			if (doc->def.has_retention &&
				(id->event_time != le->event_time || id->value != le->value ||
				 ck_str_cmp(&id->key, &le->key) != 0))
				ck_error(CK_STATE,
						 "Late event " INT64_FORMAT " differs from the identity of event_id \"%s\".",
						 le->late_seq, le->event_id.data);
			if (id->late_row >= 0)
				ck_error(CK_STATE, "Identity \"%s\" has two late events.",
						 id->event_id.data);
			id->late_row = n;
		}
		event_time = id ? id->event_time : le->event_time;
		le->pindex = sf_partition_index(def, le->partition.data);
		if (le->pindex < 0)
			ck_error(CK_STATE,
					 "Late event " INT64_FORMAT " names unknown partition \"%s\".",
					 le->late_seq, sf_msg_str(le->partition.data, le->partition.len));
		src = &doc->sources[le->pindex];
		if (le->source_offset < 0 || le->source_offset >= src->base + src->n)
			ck_error(CK_STATE,
					 "Late event " INT64_FORMAT " is at offset " INT64_FORMAT " of partition \"%s\", which has consumed offsets up to %lld.",
					 le->late_seq, le->source_offset, le->partition.data,
					 (long long) (src->base + src->n - 1));
		if (id == NULL)
		{
			/* its delivery has its event_time: that offset is forgotten too */
			if (le->source_offset >= src->base &&
				src->deliveries[le->source_offset - src->base] != CK_FORGOTTEN)
				ck_error(CK_STATE,
						 "Late event " INT64_FORMAT " is below the horizon, but offset " INT64_FORMAT " of partition \"%s\" is remembered.",
						 le->late_seq, le->source_offset, le->partition.data);
		}
		else if (le->source_offset < src->base ||
				 src->deliveries[le->source_offset - src->base] == CK_FORGOTTEN)
			ck_error(CK_STATE,
					 "Late event " INT64_FORMAT " names event_id \"%s\", but offset " INT64_FORMAT " of partition \"%s\" is forgotten.",
					 le->late_seq, le->event_id.data, le->source_offset,
					 le->partition.data);
		else if (src->deliveries[le->source_offset - src->base] != le->identity)
			ck_error(CK_STATE,
					 "Late event " INT64_FORMAT " names event_id \"%s\", but offset " INT64_FORMAT " of partition \"%s\" delivered \"%s\".",
					 le->late_seq, le->event_id.data, le->source_offset,
					 le->partition.data,
					 doc->ids[src->deliveries[le->source_offset - src->base]].event_id.data);
		if (le->source_offset <= last_offset[le->pindex])
			ck_error(CK_STATE,
					 "Late event " INT64_FORMAT " is at offset " INT64_FORMAT " of partition \"%s\", not after the previous late event there.",
					 le->late_seq, le->source_offset, sf_msg_str(le->partition.data, le->partition.len));
		last_offset[le->pindex] = le->source_offset;
		if (!doc->has_watermark)
			ck_error(CK_STATE,
					 "Late event " INT64_FORMAT " exists, but there is no watermark.",
					 le->late_seq);
		if (le->watermark > doc->watermark)
			ck_error(CK_STATE,
					 "Late event " INT64_FORMAT " has watermark " INT64_FORMAT ", above the current watermark " INT64_FORMAT ".",
					 le->late_seq, le->watermark, doc->watermark);
		if (n > 0 && le->watermark < doc->late[n - 1].watermark)
			ck_error(CK_STATE,
					 "Late event " INT64_FORMAT " has watermark " INT64_FORMAT ", below the watermark of the late event before it.",
					 le->late_seq, le->watermark);
		if ((int128) event_time + def->lateness >= (int128) le->watermark)
			ck_error(CK_STATE,
					 "Late event " INT64_FORMAT " (event_time " INT64_FORMAT ") was not late at watermark " INT64_FORMAT " with lateness " INT64_FORMAT ".",
					 le->late_seq, event_time, le->watermark, def->lateness);
	}

	for (int64 k = 0; k < doc->nids; k++)
		if (doc->ids[k].late && doc->ids[k].late_row < 0)
			ck_error(CK_STATE, "Identity \"%s\" is late but has no late event.",
					 sf_msg_str(doc->ids[k].event_id.data, doc->ids[k].event_id.len));

	/* no delivery of a late identity before its late row, in its partition */
	for (int i = 0; i < def->npartitions; i++)
	{
		const CkSource *src = &doc->sources[i];

		for (int64 o = 0; o < src->n; o++)
		{
			const CkIdentity *id;
			const CkLate *le;

			if ((o & 1023) == 0)
				CHECK_FOR_INTERRUPTS();
			if (src->deliveries[o] == CK_FORGOTTEN)
				continue;
			id = &doc->ids[src->deliveries[o]];
			if (!id->late)
				continue;
			le = &doc->late[id->late_row];
			if (le->pindex == i && src->base + o < le->source_offset)
				ck_error(CK_STATE,
						 "Event_id \"%s\" is delivered at offset %lld of partition \"%s\" before its late event at offset " INT64_FORMAT ".",
						 id->event_id.data, (long long) (src->base + o),
						 def->partitions[i], le->source_offset);
		}
	}
	pfree(last_offset);
}

/* Address order: window (by name, = index), key bytes, start, end */
static int
ck_row_cmp(const CkRow *a, const CkRow *b)
{
	int			c;

	if (a->window != b->window)
		return (a->window > b->window) - (a->window < b->window);
	c = ck_str_cmp(&a->key, &b->key);
	if (c != 0)
		return c;
	if (a->start != b->start)
		return (a->start > b->start) - (a->start < b->start);
	return (a->end > b->end) - (a->end < b->end);
}

/*
 * An aggregate over count >= 1 values in [min, max]: min <= max, the sum
 * within [count * min, count * max], and one value has min = max = sum.
 */
static void
ck_check_agg(const CkRow *row, const char *what)
{
	const SfAgg *a = &row->agg;

	if (a->count < 1)
		ck_error(CK_STATE, "The %s %s has count " INT64_FORMAT "; a bucket holds at least one event.",
				 what, ck_row_desc(row), a->count);
	if (a->min > a->max)
		ck_error(CK_STATE, "The %s %s has min " INT64_FORMAT " above max " INT64_FORMAT ".",
				 what, ck_row_desc(row), a->min, a->max);
	if (a->count == 1 && (a->min != a->max || a->sum != (int128) a->min))
		ck_error(CK_STATE,
				 "The %s %s holds one event, but its min, max and sum differ.",
				 what, ck_row_desc(row));
	if (a->sum < (int128) a->count * a->min || a->sum > (int128) a->count * a->max)
		ck_error(CK_STATE,
				 "The %s %s has sum %s outside [count * min, count * max].",
				 what, ck_row_desc(row), sf_int128_out(a->sum));
}

/* Resolve window names and check address order of a row list */
static void
ck_check_row_order(const SfPipelineDef *def, CkRow *rows, int64 n,
				   const char *what)
{
	for (int64 i = 0; i < n; i++)
	{
		CkRow	   *row = &rows[i];

		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		row->window = sf_window_index(def, row->window_name.data);
		if (row->window < 0)
			ck_error(CK_STATE, "The %s %s names an unknown window.",
					 what, ck_row_desc(row));
		if (i > 0)
		{
			int			c = ck_row_cmp(&rows[i - 1], row);

			if (c == 0)
				ck_error(CK_STATE, "The %s %s appears twice.",
						 what, ck_row_desc(row));
			if (c > 0)
				ck_error(CK_STATE, "The %ss are not in address order at %s.",
						 what, ck_row_desc(row));
		}
	}
}

/*
 * The window index document (WindowIndex.restore of the contract): result
 * rows in address order with known windows, unique addresses and valid
 * aggregates; fixed and sliding buckets aligned to their window; live
 * sessions of one (window, key) apart (touching ones would have merged) and
 * between gap and count * gap wide; no bucket whose end + lateness
 * overflows bigint (the engine rejects such events with 22003).
 */
void
ck_window_index_decode(const CkDoc *doc, CkRow *rows, int64 n)
{
	const SfPipelineDef *def = &doc->def;

	ck_check_row_order(def, rows, n, "live bucket");
	for (int64 i = 0; i < n; i++)
	{
		const CkRow *row = &rows[i];
		const SfWindowDef *w = &def->windows[row->window];
		int128		width = (int128) row->end - row->start;

		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		ck_check_agg(row, "live bucket");
		switch (w->kind)
		{
			case SF_WINDOW_FIXED:
			case SF_WINDOW_SLIDING:
				{
					int64		step = (w->kind == SF_WINDOW_FIXED) ? w->size : w->step;

					if (row->start % step != 0 || width != w->size)
						ck_error(CK_STATE,
								 "The live bucket %s is not aligned to window \"%s\", %s.",
								 ck_row_desc(row), w->name, ck_window_desc(w));
					break;
				}
			case SF_WINDOW_SESSION:
				if (width < w->gap || width > (int128) row->agg.count * w->gap)
					ck_error(CK_STATE,
							 "The live session %s is %s wide, outside [gap, count * gap] = [" INT64_FORMAT ", %s].",
							 ck_row_desc(row), sf_int128_out(width), w->gap,
							 sf_int128_out((int128) row->agg.count * w->gap));
				if (i > 0 && rows[i - 1].window == row->window &&
					ck_str_cmp(&rows[i - 1].key, &row->key) == 0 &&
					rows[i - 1].end >= row->start)
					ck_error(CK_STATE,
							 "The live sessions %s and [" INT64_FORMAT ", " INT64_FORMAT ") touch or overlap; they would have merged.",
							 ck_row_desc(&rows[i - 1]), row->start, row->end);
				break;
		}
		if ((int128) row->end + def->lateness > PG_INT64_MAX)
			ck_error(CK_STATE,
					 "The live bucket %s cannot exist: its end plus the lateness overflows bigint.",
					 ck_row_desc(row));
	}
}

/*
 * The changelog document (Changelog.restore of the contract): a sequence
 * that is a non-negative bigint, and visible rows in address order with
 * known windows, unique addresses and valid aggregates.
 */
void
ck_changelog_decode(const CkDoc *doc, CkRow *rows, int64 n)
{
	if (doc->sequence < 0)
		ck_error(CK_STATE, "The changelog sequence is " INT64_FORMAT "; it cannot be negative.",
				 doc->sequence);
	ck_check_row_order(&doc->def, rows, n, "emitted row");
	for (int64 i = 0; i < n; i++)
		ck_check_agg(&rows[i], "emitted row");
}

/*
 * The operator states against each other and the clock: no live bucket is
 * due for finalization (watermark > end + lateness), the emitted rows are
 * exactly the ready view of the live buckets (end <= watermark), and the
 * sequence has numbered at least one upsert per emitted row.
 */
void
ck_check_views(const CkDoc *doc)
{
	int64		i = 0,
				j = 0;
	int64		lateness = doc->def.lateness;

	for (int64 k = 0; k < doc->nrows; k++)
	{
		const CkRow *row = &doc->rows[k];

		if (doc->has_watermark &&
			(int128) doc->watermark > (int128) row->end + lateness)
			ck_error(CK_STATE,
					 "The live bucket %s should have been finalized: the watermark " INT64_FORMAT " is past its end plus the lateness.",
					 ck_row_desc(row), doc->watermark);
	}

	/* merge walk over the ready live rows and the emitted rows */
	for (;;)
	{
		const CkRow *live = NULL;
		const CkRow *vis = NULL;
		int			c;

		while (i < doc->nrows && !(doc->has_watermark &&
								   doc->rows[i].end <= doc->watermark))
			i++;
		if (i < doc->nrows)
			live = &doc->rows[i];
		if (j < doc->nvisible)
			vis = &doc->visible[j];
		if (live == NULL && vis == NULL)
			break;
		CHECK_FOR_INTERRUPTS();
		if (live == NULL)
			c = 1;
		else if (vis == NULL)
			c = -1;
		else
			c = ck_row_cmp(live, vis);
		if (c < 0)
			ck_error(CK_STATE,
					 "The ready live bucket %s is not among the emitted rows.",
					 ck_row_desc(live));
		if (c > 0)
			ck_error(CK_STATE,
					 "The emitted row %s is not in the ready view of the live buckets.",
					 ck_row_desc(vis));
		if (!sf_agg_equal(&live->agg, &vis->agg))
			ck_error(CK_STATE,
					 "The emitted row %s differs from its live bucket.",
					 ck_row_desc(vis));
		i++;
		j++;
	}

	if (doc->sequence < doc->nvisible)
		ck_error(CK_STATE,
				 "The changelog sequence " INT64_FORMAT " is smaller than the %lld emitted rows need.",
				 doc->sequence, (long long) doc->nvisible);
}

static void
ck_agg_add(SfAgg *a, int64 value)
{
	if (a->count == 0)
	{
		a->min = a->max = value;
		a->sum = 0;
	}
	else
	{
		a->min = Min(a->min, value);
		a->max = Max(a->max, value);
	}
	a->count++;
	a->sum += value;
}

/* The live row of window rows[lo..hi) with this key and start, or -1 */
static int64
ck_find_row(const CkRow *rows, int64 lo, int64 hi, const SfJsonStr *key,
			int64 start)
{
	hi--;
	while (lo <= hi)
	{
		int64		mid = lo + (hi - lo) / 2;
		int			c = ck_str_cmp(&rows[mid].key, key);

		if (c == 0)
			c = (rows[mid].start > start) - (rows[mid].start < start);
		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/*
 * Retention: the last row of key whose start is at most start, or -1.  A
 * session of remembered events may be part of a live session that
 * forgotten events extend below the horizon.
 */
static int64
ck_find_row_before(const CkRow *rows, int64 lo, int64 hi,
				   const SfJsonStr *key, int64 start)
{
	int64		found = -1;

	hi--;
	while (lo <= hi)
	{
		int64		mid = lo + (hi - lo) / 2;
		int			c = ck_str_cmp(&rows[mid].key, key);

		if (c == 0)
			c = (rows[mid].start > start) ? 1 : -1;
		if (c < 0)
		{
			if (ck_str_cmp(&rows[mid].key, key) == 0)
				found = mid;
			lo = mid + 1;
		}
		else
			hi = mid - 1;
	}
	return found;
}

static int
ck_identity_order_cmp(const void *a, const void *b, void *arg)
{
	const CkDoc *doc = arg;
	const CkIdentity *x = &doc->ids[*(const int64 *) a];
	const CkIdentity *y = &doc->ids[*(const int64 *) b];
	int			c = ck_str_cmp(&x->key, &y->key);

	if (c != 0)
		return c;
	if (x->event_time != y->event_time)
		return (x->event_time > y->event_time) - (x->event_time < y->event_time);
	return ck_str_cmp(&x->event_id, &y->event_id);
}

/*
 * The live buckets of fixed or sliding window wi (rows[wlo..whi), in
 * address order: key, then start) against the accepted identities, order[]
 * sorted by (key, event_time): sets each row's derived aggregate, and
 * raises SF003 if a live bucket that an accepted event belongs to has no
 * row.
 *
 * Cost: linear in the identities and rows, whatever the number of buckets
 * per event.  Per key, the live buckets an event belongs to are the starts
 * [a, b] (multiples of step), and both a and b grow with event_time; so the
 * events inside one bucket are a contiguous run of the sorted events, found
 * for the rows in start order by two pointers, with count and sum kept
 * incrementally and min and max by monotonic queues.  The buckets that
 * must exist are the union of the [a, b], counted in one pass; since every
 * row with events is in that union, equal counts mean none is missing.
 */
static void
ck_derive_buckets(CkDoc *doc, int wi, const int64 *order, int64 nacc,
				  int64 wlo, int64 whi, int64 *ops)
{
	const SfPipelineDef *def = &doc->def;
	const SfWindowDef *w = &def->windows[wi];
	int64		lateness = def->lateness;
	int64		step = (w->kind == SF_WINDOW_FIXED) ? w->size : w->step;
	int128	   *a = palloc(sizeof(int128) * Max(nacc, 1));
	int128	   *b = palloc(sizeof(int128) * Max(nacc, 1));
	int64	   *ev = palloc(sizeof(int64) * Max(nacc, 1));
	int64	   *qmin = palloc(sizeof(int64) * Max(nacc, 1));
	int64	   *qmax = palloc(sizeof(int64) * Max(nacc, 1));
	int64		e = 0;
	int64		r = wlo;

	while (e < nacc)
	{
		const SfJsonStr *key = &doc->ids[order[e]].key;
		int64		eend = e;
		int64		n = 0;
		int64		rend;
		int64		lo = 0,
					hi = 0;
		int64		minh = 0,
					mint = 0,
					maxh = 0,
					maxt = 0;
		int64		count = 0;
		int128		sum = 0;
		int128		cur_end = 0;
		int64		union_count = 0;
		int64		covered = 0;

		while (eend < nacc && ck_str_cmp(&doc->ids[order[eend]].key, key) == 0)
			eend++;

		/* the live starts of each event of this key, in time order */
		for (int64 i = e; i < eend; i++)
		{
			const CkIdentity *id = &doc->ids[order[i]];
			int128		t = id->event_time;
			int128		top = sf_floor_div(t, step) * step;
			int128		lowest = t - w->size + 1;
			int128		first;

			if ((++*ops & 1023) == 0)
				CHECK_FOR_INTERRUPTS();
			if (top < lowest)
				continue;		/* sliding with size < step: in no window */
			first = top - ((top - lowest) / step) * step;
			if (first < PG_INT64_MIN || top + w->size + lateness > PG_INT64_MAX)
				ck_error(CK_STATE,
						 "Identity \"%s\" (event_time " INT64_FORMAT ") is accepted, but a bucket of window \"%s\" for it overflows bigint; such an event is rejected.",
						 sf_msg_str(id->event_id.data, id->event_id.len),
						 id->event_time, w->name);
			/* live: watermark <= start + size + lateness */
			if (doc->has_watermark)
			{
				int128		minlive = (int128) doc->watermark - w->size - lateness;

				if (first < minlive)
					first += ((minlive - first + step - 1) / step) * step;
			}
			if (first > top)
				continue;		/* all of its buckets are finalized */
			a[n] = first;
			b[n] = top;
			ev[n] = order[i];
			n++;
		}

		/* the rows of this key; rows of keys without events keep count 0 */
		while (r < whi && ck_str_cmp(&doc->rows[r].key, key) < 0)
			r++;
		rend = r;
		while (rend < whi && ck_str_cmp(&doc->rows[rend].key, key) == 0)
			rend++;

		for (int64 k = r; k < rend; k++)
		{
			CkRow	   *row = &doc->rows[k];
			int128		st = row->start;

			if ((++*ops & 1023) == 0)
				CHECK_FOR_INTERRUPTS();
			while (hi < n && a[hi] <= st)
			{
				int64		v = doc->ids[ev[hi]].value;

				count++;
				sum += v;
				while (mint > minh && doc->ids[ev[qmin[mint - 1]]].value >= v)
					mint--;
				qmin[mint++] = hi;
				while (maxt > maxh && doc->ids[ev[qmax[maxt - 1]]].value <= v)
					maxt--;
				qmax[maxt++] = hi;
				hi++;
			}
			while (lo < hi && b[lo] < st)
			{
				count--;
				sum -= doc->ids[ev[lo]].value;
				if (minh < mint && qmin[minh] == lo)
					minh++;
				if (maxh < maxt && qmax[maxh] == lo)
					maxh++;
				lo++;
			}
			if (count > 0)
			{
				row->derived.count = count;
				row->derived.sum = sum;
				row->derived.min = doc->ids[ev[qmin[minh]]].value;
				row->derived.max = doc->ids[ev[qmax[maxh]]].value;
				covered++;
			}
		}

		/* the buckets that must be live: the union of [a, b] */
		for (int64 i = 0; i < n; i++)
		{
			if (union_count == 0 || a[i] > cur_end)
			{
				union_count += (int64) ((b[i] - a[i]) / step + 1);
				cur_end = b[i];
			}
			else if (b[i] > cur_end)
			{
				union_count += (int64) ((b[i] - cur_end) / step);
				cur_end = b[i];
			}
		}

		if (covered != union_count)
		{
			/* find the first bucket of the union without a row */
			int64		k = r;
			int64		i = 0;
			int128		s = n > 0 ? a[0] : 0;

			for (;;)
			{
				const CkIdentity *id;

				CHECK_FOR_INTERRUPTS();
				if (i >= n)
					elog(ERROR, "streamforge: live bucket count mismatch not found");
				if (s > b[i])
				{
					i++;
					if (i < n && a[i] > s)
						s = a[i];
					continue;
				}
				while (k < rend && doc->rows[k].start < s)
					k++;
				if (k < rend && doc->rows[k].start == s)
				{
					s += step;
					continue;
				}
				id = &doc->ids[ev[i]];
				ck_error(CK_STATE,
						 "Identity \"%s\" (key \"%s\", event_time " INT64_FORMAT ") belongs to bucket [" INT64_FORMAT ", " INT64_FORMAT ") of window \"%s\", which is neither live nor finalized.",
						 sf_msg_str(id->event_id.data, id->event_id.len),
						 sf_msg_str(id->key.data, id->key.len),
						 id->event_time, (int64) s, (int64) (s + w->size),
						 w->name);
			}
		}
		e = eend;
		r = rend;
	}
	pfree(a);
	pfree(b);
	pfree(ev);
	pfree(qmin);
	pfree(qmax);
}

/*
 * The live buckets against the delivery history.
 *
 * Finalized buckets are forgotten, but which ones are finalized is known:
 * exactly those with watermark > end + lateness.  An accepted (not late)
 * event never enters a finalized bucket (event_time + lateness >= watermark
 * and end > event_time), and no later event can: a bucket past its lateness
 * only receives late events, and a session past its lateness cannot touch a
 * later accepted event.  So the live buckets are a pure function of the
 * accepted identities, the watermark and the definition:
 *
 *	- fixed/sliding: each bucket [s, s + size) containing an accepted event
 *	  with watermark <= s + size + lateness is live, and its aggregate is
 *	  that of exactly the accepted events of its key inside it;
 *	- session: per key, the accepted events merge into components (an event
 *	  joins when event_time <= the component's end); each component not
 *	  finalized is a live session with exactly that address and aggregate.
 *
 * Every accepted event's buckets were range-checked when it was accepted
 * (SPEC 5.1), so a bucket bound outside bigint means the event could not
 * have been accepted.  Cost: near-linear in the document (sorting the
 * identities; ck_derive_buckets), not in the number of (event, bucket)
 * pairs, which a sliding(100000, 1) window makes 100000 times larger.
 *
 * With a retention horizon H (SPEC.md 6) the identities below H are
 * forgotten, but a live bucket may still hold them.  A bucket or session
 * that starts at or after H holds only remembered events and is checked
 * exactly; one that starts before H must hold every remembered event that
 * belongs to it, and its aggregate is taken as it is.
 */
void
ck_check_derivation(CkDoc *doc)
{
	const SfPipelineDef *def = &doc->def;
	int64		lateness = def->lateness;
	int64	   *wlo = palloc0(sizeof(int64) * def->nwindows);
	int64	   *whi = palloc0(sizeof(int64) * def->nwindows);
	int64	   *order;
	int64		nacc = 0;
	int64		ops = 0;

	/* each window's rows are one contiguous range (address order) */
	for (int64 k = doc->nrows - 1; k >= 0; k--)
		wlo[doc->rows[k].window] = k;
	for (int64 k = 0; k < doc->nrows; k++)
		whi[doc->rows[k].window] = k + 1;

	for (int64 k = 0; k < doc->nrows; k++)
		memset(&doc->rows[k].derived, 0, sizeof(SfAgg));

	order = palloc(sizeof(int64) * Max(doc->nids, 1));
	for (int64 k = 0; k < doc->nids; k++)
		if (!doc->ids[k].late)
			order[nacc++] = k;

	/* fixed and sliding windows: one sweep per window over (key, time) */
	qsort_arg(order, nacc, sizeof(int64), ck_identity_order_cmp, doc);
	for (int wi = 0; wi < def->nwindows; wi++)
		if (def->windows[wi].kind != SF_WINDOW_SESSION)
			ck_derive_buckets(doc, wi, order, nacc, wlo[wi], whi[wi], &ops);
	for (int64 k = 0; k < doc->nrows; k++)
	{
		const CkRow *row = &doc->rows[k];

		if (def->windows[row->window].kind == SF_WINDOW_SESSION)
			continue;
		if (doc->has_horizon && row->start < doc->horizon)
			continue;			/* may hold forgotten events */
		if (row->derived.count == 0)
			ck_error(CK_STATE,
					 "The live bucket %s holds no accepted event.",
					 ck_row_desc(row));
		if (!sf_agg_equal(&row->agg, &row->derived))
			ck_error(CK_STATE,
					 "The aggregate of live bucket %s differs from that of its " INT64_FORMAT " accepted events.",
					 ck_row_desc(row), row->derived.count);
	}

	/* session windows: sweep the accepted events by (key, event_time) */
	for (int wi = 0; wi < def->nwindows; wi++)
	{
		const SfWindowDef *w = &def->windows[wi];
		int64		a = 0;

		if (w->kind != SF_WINDOW_SESSION)
			continue;
		while (a < nacc)
		{
			const CkIdentity *id = &doc->ids[order[a]];
			int128		start = id->event_time;
			int128		end = start + w->gap;
			SfAgg		agg = {0};
			int64		k;
			const CkRow *row;

			/* grow one component of this key */
			for (;;)
			{
				if ((int128) id->event_time + w->gap + lateness > PG_INT64_MAX)
					ck_error(CK_STATE,
							 "Identity \"%s\" (event_time " INT64_FORMAT ") is accepted, but its session in window \"%s\" overflows bigint; such an event is rejected.",
							 sf_msg_str(id->event_id.data, id->event_id.len), id->event_time, w->name);
				end = Max(end, (int128) id->event_time + w->gap);
				ck_agg_add(&agg, id->value);
				if ((++ops & 1023) == 0)
					CHECK_FOR_INTERRUPTS();
				a++;
				if (a >= nacc)
					break;
				if (ck_str_cmp(&doc->ids[order[a]].key, &id->key) != 0 ||
					doc->ids[order[a]].event_time > end)
					break;
				id = &doc->ids[order[a]];
			}
			if (doc->has_watermark && (int128) doc->watermark > end + lateness)
				continue;		/* finalized */
			k = ck_find_row(doc->rows, wlo[wi], whi[wi], &id->key, (int64) start);
			if (k < 0 && doc->has_horizon)
			{
				/* part of a session that forgotten events extend below H */
				k = ck_find_row_before(doc->rows, wlo[wi], whi[wi], &id->key,
									   (int64) start);
				if (k >= 0 && doc->rows[k].start < doc->horizon &&
					(int128) doc->rows[k].end >= end)
				{
					doc->rows[k].derived.count += agg.count;
					continue;
				}
				k = -1;
			}
			if (k < 0)
				ck_error(CK_STATE,
						 "The accepted events of key \"%s\" form session [" INT64_FORMAT ", " INT64_FORMAT ") of window \"%s\", which is neither live nor finalized.",
						 sf_msg_str(id->key.data, id->key.len), (int64) start, (int64) end, w->name);
			row = &doc->rows[k];
			if (row->end != end || !sf_agg_equal(&row->agg, &agg))
				ck_error(CK_STATE,
						 "The live session %s differs from the session [" INT64_FORMAT ", " INT64_FORMAT ") that its " INT64_FORMAT " accepted events form.",
						 ck_row_desc(row), (int64) start, (int64) end, agg.count);
			doc->rows[k].derived = agg;
		}
	}
	for (int64 k = 0; k < doc->nrows; k++)
	{
		const CkRow *row = &doc->rows[k];

		if (def->windows[row->window].kind == SF_WINDOW_SESSION &&
			row->derived.count == 0 &&
			!(doc->has_horizon && row->start < doc->horizon))
			ck_error(CK_STATE,
					 "The live session %s is not formed by the accepted events.",
					 ck_row_desc(row));
	}

	pfree(order);
	pfree(wlo);
	pfree(whi);
}

