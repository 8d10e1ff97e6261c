/*-------------------------------------------------------------------------
 *
 * codec_validate.c
 *	  Checkpoint codec, phase 3: validation of a parsed document, part by
 *	  part.
 *
 * Each function checks one part of the document (CkDoc, codec_int.h) and
 * raises SF003 "invalid checkpoint: ..." with a detail naming what is
 * wrong; the rules are listed in docs/checkpoint-format.md ("Validation").
 * The window index and the changelog documents have their own decoders
 * (ck_window_index_decode, ck_changelog_decode), as the contract's operator
 * states do; ck_check_views then checks them against each other and the
 * clock.  The last check, the live buckets against the identities, is
 * codec_derive.c's.
 *
 * codec.c (ck_decode_steps) calls these in the order of codec_int.h; each
 * relies only on the parts checked before it, and some resolve what later
 * checks use (the horizon, window and partition indexes, each identity's
 * deliveries and late row).  Nothing here touches the engine's state:
 * codec.c builds the pipeline afterwards.  Memory: CurrentMemoryContext is
 * codec.c's scratch context; what is allocated here (error strings, one
 * array) goes with it.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/codec/codec_validate.c
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
 * checked before it (the order is that of ck_decode_steps, codec.c).
 * ----------------------------------------------------------------
 */

/*
 * The checkpoint's own definition must be valid (as create_pipeline would
 * accept it) and, when restoring, equivalent to the target's (docs/semantics.md, Exact rules, 9).
 * Both are normalized: partitions and windows sorted by name.
 */
void
ck_check_definition(const CkDoc *doc, const SfPipelineDef *target)
{
	const SfPipelineDef *def = &doc->def;
	int			i,
				j;
	char	   *msg;
	char	   *detail;

	if (def->npartitions < 1)
		ck_error(CK_DEFINITION, "The definition has no partition.");
	if (def->nwindows < 1)
		ck_error(CK_DEFINITION, "The definition has no window.");
	/* the scalar options' validators (codec/options.def), in table order */
	for (i = 0; i < sf_noptions; i++)
	{
		const SfOption *o = &sf_options[i];

		if ((o->flags & SF_OPT_CK) && o->kind == SF_OPT_KIND_INT64 &&
			o->check != NULL && sf_opt_is_set(def, o) &&
			o->check(def, o) == SF_OPT_NEGATIVE)
			ck_error(CK_DEFINITION, "The definition has a negative %s " INT64_FORMAT ".",
					 o->name, sf_opt_int64(def, o));
	}
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
		if (!sf_window_check(w, &msg, &detail))
			ck_error(CK_DEFINITION, "Window \"%s\" has an invalid definition %s.",
					 w->name, sf_window_describe(w));
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
		if (!sf_window_def_same(&def->windows[i], &target->windows[j]))
			ck_error(CK_DEFINITION,
					 "Window \"%s\" is %s in the checkpoint and %s in the pipeline.",
					 def->windows[i].name, sf_window_describe(&def->windows[i]),
					 sf_window_describe(&target->windows[j]));
		i++, j++;
	}
	/*
	 * The scalar options (codec/options.def) in table order: lateness,
	 * retention (docs/semantics.md, Retention), emit (Emit modes: the
	 * checkpoint's mode is the pipeline's), out_of_orderness
	 * (docs/progress.md)
	 */
	for (i = 0; i < sf_noptions; i++)
	{
		const SfOption *o = &sf_options[i];

		if (!(o->flags & SF_OPT_CK))
			continue;
		if (o->kind == SF_OPT_KIND_INT64)
		{
			bool		a_set = sf_opt_is_set(def, o);
			bool		b_set = sf_opt_is_set(target, o);

			if (a_set != b_set ||
				(a_set && sf_opt_int64(def, o) != sf_opt_int64(target, o)))
				ck_error(CK_DEFINITION,
						 "The checkpoint has %s %s, the pipeline %s.", o->name,
						 a_set ? psprintf(INT64_FORMAT, sf_opt_int64(def, o)) : "none",
						 b_set ? psprintf(INT64_FORMAT, sf_opt_int64(target, o)) : "none");
		}
		else if (o->kind == SF_OPT_KIND_ENUM &&
				 sf_opt_enum(def, o) != sf_opt_enum(target, o))
		{
			const SfOptEnum *e = (const SfOptEnum *) o->ext;

			ck_error(CK_DEFINITION,
					 "The checkpoint has %s \"%s\", the pipeline \"%s\".", e->noun,
					 e->name(sf_opt_enum(def, o)), e->name(sf_opt_enum(target, o)));
		}
	}
	/* measures pipelines (docs/aggregates.md): the same measures and aggregates */
	if (!sf_measures_def_equal(def->measures, target->measures))
		ck_error(CK_DEFINITION,
				 "The checkpoint has %s, the pipeline %s.",
				 def->measures ? "measures and aggregates" : "one unnamed measure",
				 target->measures ?
				 (def->measures ? "other measures or aggregates" : "measures and aggregates") :
				 "one unnamed measure");
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

	/* the horizon the rest of the state is checked against (docs/semantics.md, Retention) */
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
		if (!sf_window_merges(w))
		{
			if (!sf_window_ops(w->kind)->bucket_ok(w, row->start, row->end))
				ck_error(CK_STATE,
						 "The live bucket %s is not aligned to window \"%s\", %s.",
						 ck_row_desc(row), w->name, sf_window_describe(w));
		}
		else
		{
			/* a merging kind: [t, t + gap) merged with what it touched */
			Assert(sf_window_merges(w));
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
 * sequence has numbered at least one upsert per emitted row (except in
 * 'final' mode, which emits no upserts).
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
		if (!sf_agg_equal(&live->agg, &vis->agg) ||
			(doc->def.measures != NULL &&
			 !sf_magg_equal(doc->def.measures, &live->agg, &vis->agg)))
			ck_error(CK_STATE,
					 "The emitted row %s differs from its live bucket.",
					 ck_row_desc(vis));
		i++;
		j++;
	}

	/*
	 * In 'final' mode the ready rows are not emitted (emit.c): they need no
	 * upsert, and a pipeline's own checkpoint may have a sequence below their
	 * number.
	 */
	if (doc->def.emit != SF_EMIT_FINAL && doc->sequence < doc->nvisible)
		ck_error(CK_STATE,
				 "The changelog sequence " INT64_FORMAT " is smaller than the %lld emitted rows need.",
				 doc->sequence, (long long) doc->nvisible);
}
