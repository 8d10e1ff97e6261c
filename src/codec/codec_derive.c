/*-------------------------------------------------------------------------
 *
 * codec_derive.c
 *	  Checkpoint codec, phase 3 (end): the live buckets against the
 *	  accepted identities.
 *
 * ck_check_derivation re-derives every live bucket of a parsed document
 * from its accepted (not late) identities, its watermark and its
 * definition, and raises SF003 "invalid checkpoint: inconsistent state" if
 * the window index document holds a row that the identities do not form,
 * misses one that they do, or has a different aggregate.  It runs last in
 * phase 3 (codec.c, ck_decode_steps), after codec_validate.c has checked
 * each part on its own, and relies on those checks: rows in address order
 * with resolved windows, identities delivered and resolved, the horizon
 * computed.  Its cost is near-linear in the document (see
 * ck_derive_buckets), whatever the number of buckets per event.
 *
 * Nothing here touches the engine's state: it reads the document and fills
 * each row's derived aggregate.  Scratch arrays are palloc'd in
 * CurrentMemoryContext (codec.c's scratch context) and freed before
 * returning.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/codec/codec_derive.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "codec/codec.h"
#include "codec/codec_int.h"
#include "engine/engine.h"

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

/* Rows of one window by (key, start): their address order */
static int
row_key_start_cmp(const void *elem, const void *target)
{
	const CkRow *a = elem;
	const CkRow *b = target;
	int			c = ck_str_cmp(&a->key, &b->key);

	if (c == 0)
		c = (a->start > b->start) - (a->start < b->start);
	return c;
}

/* The live row of window rows[lo..hi) with this key and start, or -1 */
static int64
ck_find_row(const CkRow *rows, int64 lo, int64 hi, const SfJsonStr *key,
			int64 start)
{
	CkRow		want = {.key = *key,.start = start};

	return ck_bsearch(rows, sizeof(CkRow), lo, hi, &want, row_key_start_cmp);
}

/*
 * Retention: the last row of key whose start is at most start, or -1.  A
 * session of remembered events may be part of a live session that
 * forgotten events extend below the horizon.  (A search for a predecessor,
 * not for an equal element: ck_bsearch does not serve.)
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
	int64		size,
				step;
	int128	   *a = palloc(sizeof(int128) * Max(nacc, 1));
	int128	   *b = palloc(sizeof(int128) * Max(nacc, 1));
	int64	   *ev = palloc(sizeof(int64) * Max(nacc, 1));
	int64	   *qmin = palloc(sizeof(int64) * Max(nacc, 1));
	int64	   *qmax = palloc(sizeof(int64) * Max(nacc, 1));
	int64		e = 0;
	int64		r = wlo;

	sf_window_ops(w->kind)->period(w, &size, &step);
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
			int128		lowest = t - size + 1;
			int128		first;

			if ((++*ops & 1023) == 0)
				CHECK_FOR_INTERRUPTS();
			if (top < lowest)
				continue;		/* sliding with size < step: in no window */
			first = top - ((top - lowest) / step) * step;
			if (first < PG_INT64_MIN || top + size + lateness > PG_INT64_MAX)
				ck_error(CK_STATE,
						 "Identity \"%s\" (event_time " INT64_FORMAT ") is accepted, but a bucket of window \"%s\" for it overflows bigint; such an event is rejected.",
						 sf_msg_str(id->event_id.data, id->event_id.len),
						 id->event_time, w->name);
			/* live: watermark <= start + size + lateness */
			if (doc->has_watermark)
			{
				int128		minlive = (int128) doc->watermark - size - lateness;

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
						 id->event_time, (int64) s, (int64) (s + size),
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
 * (docs/semantics.md, Exact rules, 1), so a bucket bound outside bigint means the event could not
 * have been accepted.  Cost: near-linear in the document (sorting the
 * identities; ck_derive_buckets), not in the number of (event, bucket)
 * pairs, which a sliding(100000, 1) window makes 100000 times larger.
 *
 * With a retention horizon H (docs/semantics.md, Retention) the identities below H are
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
		if (!sf_window_merges(&def->windows[wi]))
			ck_derive_buckets(doc, wi, order, nacc, wlo[wi], whi[wi], &ops);
	for (int64 k = 0; k < doc->nrows; k++)
	{
		const CkRow *row = &doc->rows[k];

		if (sf_window_merges(&def->windows[row->window]))
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

		if (!sf_window_merges(w))
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

		if (sf_window_merges(&def->windows[row->window]) &&
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
