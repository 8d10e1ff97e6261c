/*-------------------------------------------------------------------------
 *
 * final_rows.c
 *	  The rows finalized addresses had when they were finalized, derived
 *	  from a pipeline's remembered events (for resync_outputs; the SQL
 *	  entry point streamforge_internal.final_rows is api/outputs.c).
 *
 * restore() undoes, in the results table, the changes past the restored
 * seq: each address such a change touched gets back its latest change up
 * to the restored seq from the changelog (40_outputs.sql,
 * resync_outputs_internal).  A trim can have deleted that change, and
 * visible() does not show a row the restored state has finalized, so
 * before 0.3.0 such a row was lost.  That happens when a lateness raise
 * after the checkpoint brought the finalized row back and a lower one
 * finalized it again (issue 21).
 *
 * The row can be derived instead.  A finalized bucket keeps the aggregate
 * of the accepted events that are not late and fall into it: an event that
 * is not late enters every bucket it belongs to (none of them can be
 * finalized, as its time is at least watermark - lateness), and a bucket
 * takes no event once finalized.  So, like a lateness raise (redefine.c,
 * with the same sf_derive_event), the buckets of the wanted keys are built
 * again from every remembered accepted event in a scratch pipeline without
 * a watermark, where nothing is finalized, and the wanted addresses are
 * looked up there; for a session window, every session overlapping a
 * wanted one, since a session finalized at the checkpoint may have been
 * merged into the wanted one afterwards (its retraction trimmed too).
 * Only rows that the state has finalized (watermark > end + lateness) are
 * returned: the others are visible() rows or were not reported yet.  With a
 * retention, events below the horizon are forgotten, so rows starting below
 * it are not returned either.
 *
 * The cost is one pass over the remembered identities plus the buckets of
 * the wanted keys; resync_outputs calls it only for the addresses the
 * changelog cannot give.  The scratch pipeline is a child of the caller's
 * CurrentMemoryContext, and the caller frees it once it has used the rows
 * (their keys are the scratch pipeline's).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/final_rows.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "engine/engine.h"
#include "engine/engine_int.h"

static int
key_cmp(const char *a, int alen, const char *b, int blen)
{
	int			c = memcmp(a, b, Min(alen, blen));

	if (c != 0)
		return c;
	return (alen > blen) - (alen < blen);
}

/* wanted addresses in (key, window, start) order */
static int
wanted_cmp(const void *a, const void *b)
{
	const SfWanted *x = a;
	const SfWanted *y = b;
	int			c = key_cmp(x->key, x->key_len, y->key, y->key_len);

	if (c != 0)
		return c;
	if (x->window != y->window)
		return x->window < y->window ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

/*
 * The first wanted address of this key and window (of this key only, with
 * window -1), or n if there is none.
 */
static int
wanted_first(const SfWanted *w, int n, const SfString *key, int window)
{
	int			lo = 0,
				hi = n;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;
		int			c = key_cmp(w[mid].key, w[mid].key_len, key->data, key->len);

		if (c == 0 && window >= 0 && w[mid].window != window)
			c = w[mid].window < window ? -1 : 1;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n &&
		key_cmp(w[lo].key, w[lo].key_len, key->data, key->len) == 0 &&
		(window < 0 || w[lo].window == window))
		return lo;
	return n;
}

/*
 * Does the derived row r answer a wanted address?  Fixed and sliding: the
 * same address.  Session: any wanted session of its key that it overlaps,
 * since a session the changelog cannot give may have been merged, past the
 * restored seq, into the wanted one (and its retraction trimmed).
 */
static bool
row_wanted(const SfPipeline *p, const SfWanted *w, int n, const SfRow *r)
{
	bool		session = sf_window_merges(&p->def.windows[r->addr.window]);
	int			i;

	for (i = wanted_first(w, n, r->addr.key, r->addr.window);
		 i < n && w[i].window == r->addr.window &&
		 key_cmp(w[i].key, w[i].key_len, r->addr.key->data,
				 r->addr.key->len) == 0;
		 i++)
	{
		if (session ? (w[i].start < r->addr.end && r->addr.start < w[i].end)
			: (w[i].start == r->addr.start && w[i].end == r->addr.end))
			return true;
		if (!session && w[i].start > r->addr.start)
			break;
	}
	return false;
}

/*
 * sf_derive_final_rows
 *		The finalized rows of p among the wanted addresses (window indexes
 *		of p's definition, -1 for a window p does not have; sorted here),
 *		in *rows; returns their number.  The rows' keys belong to the
 *		scratch pipeline *scratchp (NULL if none was needed), which the
 *		caller frees.  p is not changed.
 */
int64
sf_derive_final_rows(SfPipeline *p, SfWanted *wanted, int n, SfRow **rows,
					 SfPipeline **scratchp)
{
	SfPipeline *q;
	SfIdentity **ids;
	int64		nids;
	int64		i;
	int64		nrows = 0;
	SfRow	   *derived;
	int64		nq;
	bool	   *window_wanted;
	bool		has_horizon;
	int64		horizon = 0;
	SfChangeList scratch = {0};

	*rows = palloc(Max(n, 1) * sizeof(SfRow));
	*scratchp = NULL;
	if (n == 0 || !p->has_watermark)
		return 0;
	has_horizon = sf_horizon(&p->def, p->has_watermark, p->watermark,
							 &horizon);
	window_wanted = palloc0(Max(p->def.nwindows, 1) * sizeof(bool));
	for (i = 0; i < n; i++)
		if (wanted[i].window >= 0)
			window_wanted[wanted[i].window] = true;
	qsort(wanted, n, sizeof(SfWanted), wanted_cmp);

	/* no watermark: nothing is finalized, every bucket stays */
	q = sf_pipeline_create(CurrentMemoryContext, &p->def);
	*scratchp = q;
	ids = sf_identity_array(p, &nids);
	sf_op_begin(q);
	for (i = 0; i < nids; i++)
	{
		const SfIdentity *id = ids[i];
		SfString   *key;
		int			w;

		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		if (id->late || id->forgotten || wanted_first(wanted, n, id->key, -1) >= n)
			continue;
		key = sf_intern_key(q, id->key->data, id->key->len);
		for (w = 0; w < q->def.nwindows; w++)
			if (window_wanted[w])
				sf_derive_event(q, w, id, key, 0, 0);
	}
	sf_op_finish(q, &scratch);

	pfree(*rows);
	nq = sf_collect_rows(q, false, &derived);
	for (i = 0; i < nq; i++)
	{
		const SfRow *r = &derived[i];

		if ((int128) p->watermark <= (int128) r->addr.end + p->def.lateness ||
			(has_horizon && r->addr.start < horizon) ||
			!row_wanted(p, wanted, n, r))
			continue;
		derived[nrows++] = *r;
	}
	*rows = derived;
	pfree(ids);
	return nrows;
}

/*
 * sf_derive_all_final_rows
 *		Every finalized row of p that its remembered events still give
 *		(configure_outputs' backfill), in *rows, in address order; returns
 *		their number.  As sf_derive_final_rows, for every key and window:
 *		with a retention, rows starting below the horizon are not returned
 *		(their events are forgotten).  The rows' keys belong to the scratch
 *		pipeline *scratchp (NULL if none was needed), which the caller
 *		frees.  p is not changed.
 */
int64
sf_derive_all_final_rows(SfPipeline *p, SfRow **rows, SfPipeline **scratchp)
{
	SfPipeline *q;
	SfIdentity **ids;
	int64		nids;
	int64		i;
	int64		nrows = 0;
	SfRow	   *derived;
	int64		nq;
	bool		has_horizon;
	int64		horizon = 0;
	SfChangeList scratch = {0};

	*rows = NULL;
	*scratchp = NULL;
	if (!p->has_watermark)
		return 0;
	has_horizon = sf_horizon(&p->def, p->has_watermark, p->watermark,
							 &horizon);

	/* no watermark: nothing is finalized, every bucket stays */
	q = sf_pipeline_create(CurrentMemoryContext, &p->def);
	*scratchp = q;
	ids = sf_identity_array(p, &nids);
	sf_op_begin(q);
	for (int pass = 0; pass < 2; pass++)
		for (i = 0; i < nids; i++)
		{
			const SfIdentity *id = ids[i];
			SfString   *key;

			if ((i & 1023) == 0)
				CHECK_FOR_INTERRUPTS();
			if (id->late || id->forgotten)
				continue;
			key = sf_intern_key(q, id->key->data, id->key->len);
			for (int w = 0; w < q->def.nwindows; w++)
				if (sf_window_merges(&q->def.windows[w]) == (pass == 1))
					sf_derive_event(q, w, id, key, 0, 0);
		}
	sf_op_finish(q, &scratch);

	nq = sf_collect_rows(q, false, &derived);
	for (i = 0; i < nq; i++)
	{
		const SfRow *r = &derived[i];

		if ((int128) p->watermark <= (int128) r->addr.end + p->def.lateness ||
			(has_horizon && r->addr.start < horizon))
			continue;
		derived[nrows++] = *r;
	}
	*rows = derived;
	pfree(ids);
	return nrows;
}
