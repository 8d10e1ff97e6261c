/*-------------------------------------------------------------------------
 *
 * emit.c
 *	  Emit modes: when a pipeline reports a bucket (docs/semantics.md,
 *	  Emit modes).
 *
 * A pipeline's emit mode (SfPipelineDef.emit) decides what its changes
 * are; the state is the same in every mode:
 *
 *	'update'		(SF_EMIT_UPDATE, the default) an upsert once the watermark
 *					passes the end, a retraction and an upsert for each
 *					correction until end + lateness, nothing on finalization;
 *	'update+final'	(SF_EMIT_UPDATE_FINAL) the same, plus one final change
 *					per bucket when it is finalized, with its final values;
 *	'final'			(SF_EMIT_FINAL) only the final change: nothing while a
 *					bucket can still change, so late data within the
 *					lateness is absorbed before the row is emitted.
 *
 * The operations' changes follow the mode in reconcile.c (sf_op_finish,
 * finalize): 'final' skips the retractions and upserts, and the modes with
 * final changes append one per finalized bucket, after the upserts, in
 * address order, numbered by seq like every change.  In 'final' mode the
 * ready buckets are still the "visible" rows of the state (the codec's
 * checks and visible() see them); nothing was emitted for them yet.
 *
 * A definition change (redefine.c) diffs the old visible rows with the new
 * ones; sf_emit_redefined turns that diff into the changes of the mode
 * (below), which is also how set_emit changes the mode itself.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/emit.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "engine/engine.h"
#include "engine/engine_int.h"

static const char *const emit_names[] = {
	[SF_EMIT_UPDATE] = "update",
	[SF_EMIT_UPDATE_FINAL] = "update+final",
	[SF_EMIT_FINAL] = "final"
};

/* The SQL name of an emit mode */
const char *
sf_emit_mode_name(uint8 emit)
{
	if (emit >= lengthof(emit_names))
		return "unknown";
	return emit_names[emit];
}

/* The emit mode named name; false if there is none */
bool
sf_emit_mode_parse(const char *name, uint8 *emit)
{
	for (uint8 i = 0; i < lengthof(emit_names); i++)
		if (strcmp(name, emit_names[i]) == 0)
		{
			*emit = i;
			return true;
		}
	return false;
}

/* The index in names of window w of def */
static int
names_index(const SfPipelineDef *names, const SfPipelineDef *def, int w)
{
	int			i = sf_window_index(names, def->windows[w].name);

	if (i < 0)
		elog(ERROR, "streamforge: window \"%s\" is missing from the union of windows",
			 def->windows[w].name);
	return i;
}

/*
 * sf_emit_redefined
 *		The changes of a definition change (or of a change of the emit mode
 *		itself) from old to p, in p's mode.
 *
 * out->items[first..] are redefine_diff's changes: the old visible rows
 * against the new ones, numbered after old's seq, window indexes into
 * names; rows a lower lateness finalized are not in it.  What the consumer
 * holds is the old visible rows unless old's mode was 'final' (then none
 * was emitted), and what it should hold is the new visible rows unless
 * p's is.  So:
 *
 *	- neither mode is 'final': the diff stands;
 *	- p's mode is 'final': no retraction and no upsert (switching to
 *	  'final' leaves the rows emitted so far to their final rows);
 *	- only old's mode is 'final': an upsert of every new visible row;
 *
 * and with a mode that has final changes, a final change for each old
 * visible row that the new definition finalized (a window that stays, put
 * past its lateness by a lower one), with its values.  Everything is
 * numbered again after old's seq.
 *
 * A higher lateness brings finalized buckets back; with final changes they
 * would be finalized, and reported, a second time, so a pipeline with
 * final changes and a watermark refuses it (55000).
 */
void
sf_emit_redefined(SfPipeline *old, SfPipeline *p, const SfPipelineDef *names,
				  SfChangeList *out, int first)
{
	bool		had = old->def.emit != SF_EMIT_FINAL;
	bool		has = p->def.emit != SF_EMIT_FINAL;
	int			nfinal;

	if (old->def.emit == SF_EMIT_UPDATE && p->def.emit == SF_EMIT_UPDATE)
		return;
	if (p->def.emit != SF_EMIT_UPDATE && p->has_watermark &&
		p->def.lateness > old->def.lateness)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot raise the lateness of pipeline \"%s\" in emit mode \"%s\"",
						p->def.name, sf_emit_mode_name(p->def.emit)),
				 errdetail("A higher lateness would reopen buckets that were already reported final."),
				 errhint("Switch the pipeline to emit mode \"update\" with streamforge.set_emit() first.")));

	if (!(had && has))
		out->n = first;
	if (has && !had)
	{
		SfRow	   *rows;
		int64		n = sf_collect_rows(p, true, &rows);

		for (int64 i = 0; i < n; i++)
		{
			SfChange	c = {0};

			CHECK_FOR_INTERRUPTS();
			c.seq = 0;
			c.op = SF_UPSERT;
			c.row = rows[i];
			c.row.addr.window = names_index(names, &p->def, rows[i].addr.window);
			sf_changes_append(out, &c);
		}
		sf_sort_changes(&out->items[first], out->n - first);
	}

	nfinal = out->n;
	if (p->def.emit != SF_EMIT_UPDATE && p->has_watermark)
	{
		SfRow	   *rows;
		int64		n = sf_collect_rows(old, true, &rows);

		for (int64 i = 0; i < n; i++)
		{
			int			w = sf_window_index(&p->def,
											old->def.windows[rows[i].addr.window].name);
			SfChange	c = {0};

			CHECK_FOR_INTERRUPTS();
			if (w < 0 ||
				!((int128) p->watermark > (int128) rows[i].addr.end + p->def.lateness))
				continue;
			c.seq = 0;
			c.op = SF_FINAL;
			c.row = rows[i];
			c.row.addr.window = names_index(names, &old->def, rows[i].addr.window);
			/* old is freed once p replaces it: p's copy of the key */
			c.row.addr.key = sf_intern_key(p, rows[i].addr.key->data,
										   rows[i].addr.key->len);
			/* and of the measures' state */
			if (unlikely(rows[i].agg.ext != NULL))
				c.row.agg.ext = sf_magg_copy(old->def.measures,
											 rows[i].agg.ext);
			sf_changes_append(out, &c);
			p->finalized++;
		}
		sf_sort_changes(&out->items[nfinal], out->n - nfinal);
	}

	p->seq = old->seq;
	sf_number_changes(p, out, first);
}
