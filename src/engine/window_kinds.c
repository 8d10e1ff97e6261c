/*-------------------------------------------------------------------------
 *
 * window_kinds.c
 *	  The registry of window kinds (issue 41, item 1; engine/window_ops.h):
 *	  one row per kind, and the cold operations every layer reaches a kind
 *	  through (names, params, checks, descriptions, lookups).
 *
 * A new kind is a row here, its value in window_ops.h and its case in
 * window.c's assignment (docs and src/README.md, "Where a new feature
 * goes").  Nothing here is on a per-event path.  Nothing here allocates
 * but what it returns.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/window_kinds.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"

#include "engine/engine.h"
#include "engine/engine_int.h"

static void
fixed_period(const SfWindowDef *w, int64 *size, int64 *step)
{
	*size = w->size;
	*step = w->size;
}

static void
sliding_period(const SfWindowDef *w, int64 *size, int64 *step)
{
	*size = w->size;
	*step = w->step;
}

/* the bucket limit of a sliding window (one event enters size / step) */
static char *
sliding_check(const SfWindowDef *w, char **detail)
{
	if (((int128) w->size + w->step - 1) / w->step > SF_MAX_SLIDING_BUCKETS)
	{
		*detail = psprintf("size / step must be at most %d.",
						   SF_MAX_SLIDING_BUCKETS);
		return psprintf("sliding window \"%s\" puts each event into too many buckets",
						w->name);
	}
	return NULL;
}

const SfWindowOps sf_window_kinds[SF_WINDOW_NKINDS] = {
	[SF_WINDOW_FIXED] = {
		.kind = SF_WINDOW_FIXED,
		.name = "fixed",
		.params = SF_WPARAM_SIZE,
		.merge = SF_WINDOW_ASSIGNED,
		.marker = "tumble",
		.marker_proc = "streamforge.tumble",
		.marker_args = {"size"},
		.period = fixed_period,
		.bucket_ok = sf_window_aligned_bucket_ok,
	},
	[SF_WINDOW_SLIDING] = {
		.kind = SF_WINDOW_SLIDING,
		.name = "sliding",
		.params = SF_WPARAM_SIZE | SF_WPARAM_STEP,
		.merge = SF_WINDOW_ASSIGNED,
		.marker = "hop",
		.marker_proc = "streamforge.hop",
		.marker_args = {"size", "slide"},
		.period = sliding_period,
		.bucket_ok = sf_window_aligned_bucket_ok,
		.check = sliding_check,
	},
	[SF_WINDOW_SESSION] = {
		.kind = SF_WINDOW_SESSION,
		.name = "session",
		.params = SF_WPARAM_GAP,
		.merge = SF_WINDOW_MERGING,
		.marker = "session",
		.marker_proc = "streamforge_internal.session_window",
		.marker_args = {"gap"},
	},
};

static const char *const param_names[SF_WPARAM_NBITS] = {"size", "step", "gap"};

#ifdef USE_ASSERT_CHECKING
/* the registry's invariants (once per backend, on the first lookup) */
static void
check_registry(void)
{
	static bool checked = false;

	if (checked)
		return;
	for (int k = 0; k < SF_WINDOW_NKINDS; k++)
	{
		const SfWindowOps *o = &sf_window_kinds[k];
		SfWindowDef w = {.kind = (SfWindowKind) k};

		Assert(o->kind == (SfWindowKind) k && o->name != NULL);
		Assert(sf_window_merges(&w) == (o->merge == SF_WINDOW_MERGING));
		/* a merging kind is gap-based; an assigned one is aligned */
		Assert(o->merge != SF_WINDOW_MERGING || o->params == SF_WPARAM_GAP);
		Assert(o->merge != SF_WINDOW_ASSIGNED || o->period != NULL);
		Assert((o->merge == SF_WINDOW_ASSIGNED) == (o->bucket_ok != NULL));
	}
	checked = true;
}
#else
#define check_registry() ((void) 0)
#endif

bool
sf_window_aligned_bucket_ok(const SfWindowDef *w, int64 start, int64 end)
{
	int64		size,
				step;

	sf_window_ops(w->kind)->period(w, &size, &step);
	return start % step == 0 && (int128) end - start == size;
}

const SfWindowOps *
sf_window_ops_by_name(const char *name)
{
	check_registry();
	for (int k = 0; k < SF_WINDOW_NKINDS; k++)
		if (strcmp(name, sf_window_kinds[k].name) == 0)
			return &sf_window_kinds[k];
	return NULL;
}

const SfWindowOps *
sf_window_ops_by_marker(const char *marker)
{
	for (int k = 0; k < SF_WINDOW_NKINDS; k++)
		if (sf_window_kinds[k].marker != NULL &&
			strcmp(marker, sf_window_kinds[k].marker) == 0)
			return &sf_window_kinds[k];
	return NULL;
}

const char *
sf_window_kind_name(SfWindowKind kind)
{
	if ((unsigned int) kind >= SF_WINDOW_NKINDS)
		elog(ERROR, "streamforge: unknown window kind %d", (int) kind);
	return sf_window_kinds[kind].name;
}

/* "\"fixed\" or \"sliding\"": the kinds that take param p, in kind order */
char *
sf_window_kinds_with(uint8 param)
{
	StringInfoData buf;
	int			n = 0,
				total = 0;

	for (int k = 0; k < SF_WINDOW_NKINDS; k++)
		if (sf_window_kinds[k].params & param)
			total++;
	initStringInfo(&buf);
	for (int k = 0; k < SF_WINDOW_NKINDS; k++)
	{
		if (!(sf_window_kinds[k].params & param))
			continue;
		if (n > 0)
			appendStringInfoString(&buf, n == total - 1 ? " or " : ", ");
		appendStringInfo(&buf, "\"%s\"", sf_window_kinds[k].name);
		n++;
	}
	return buf.data;
}

/* "streamforge.fixed(), streamforge.sliding() or streamforge.session()" */
char *
sf_window_ctor_hint(void)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (int k = 0; k < SF_WINDOW_NKINDS; k++)
	{
		if (k > 0)
			appendStringInfoString(&buf, k == SF_WINDOW_NKINDS - 1 ? " or " : ", ");
		appendStringInfo(&buf, "streamforge.%s()", sf_window_kinds[k].name);
	}
	return buf.data;
}

const char *
sf_window_param_name(uint8 p)
{
	for (int i = 0; i < SF_WPARAM_NBITS; i++)
		if (p == (1 << i))
			return param_names[i];
	elog(ERROR, "streamforge: unknown window parameter %d", (int) p);
	return NULL;				/* keep compiler quiet */
}

int64
sf_window_param(const SfWindowDef *w, uint8 p)
{
	switch (p)
	{
		case SF_WPARAM_SIZE:
			return w->size;
		case SF_WPARAM_STEP:
			return w->step;
		case SF_WPARAM_GAP:
			return w->gap;
	}
	elog(ERROR, "streamforge: unknown window parameter %d", (int) p);
	return 0;					/* keep compiler quiet */
}

void
sf_window_set_param(SfWindowDef *w, uint8 p, int64 v)
{
	switch (p)
	{
		case SF_WPARAM_SIZE:
			w->size = v;
			return;
		case SF_WPARAM_STEP:
			w->step = v;
			return;
		case SF_WPARAM_GAP:
			w->gap = v;
			return;
	}
	elog(ERROR, "streamforge: unknown window parameter %d", (int) p);
}

bool
sf_window_check(const SfWindowDef *w, char **msg, char **detail)
{
	const SfWindowOps *o = sf_window_ops(w->kind);

	for (int i = 0; i < SF_WPARAM_NBITS; i++)
	{
		uint8		p = 1 << i;
		int64		v;

		if (!(o->params & p))
			continue;
		v = sf_window_param(w, p);
		if (v <= 0)
		{
			*msg = psprintf("%s of window \"%s\" must be greater than zero",
							param_names[i], w->name);
			*detail = psprintf("The %s given is " INT64_FORMAT ".",
							   param_names[i], v);
			return false;
		}
	}
	if (o->check != NULL && (*msg = o->check(w, detail)) != NULL)
		return false;
	return true;
}

char *
sf_window_describe(const SfWindowDef *w)
{
	const SfWindowOps *o = sf_window_ops(w->kind);
	StringInfoData buf;
	int			n = 0;

	initStringInfo(&buf);
	appendStringInfo(&buf, "%s(", o->name);
	for (int i = 0; i < SF_WPARAM_NBITS; i++)
	{
		uint8		p = 1 << i;

		if (!(o->params & p))
			continue;
		appendStringInfo(&buf, "%s%s " INT64_FORMAT, n++ > 0 ? ", " : "",
						 param_names[i], sf_window_param(w, p));
	}
	appendStringInfoChar(&buf, ')');
	return buf.data;
}

bool
sf_window_def_same(const SfWindowDef *a, const SfWindowDef *b)
{
	uint8		params;

	if (a->kind != b->kind || strcmp(a->name, b->name) != 0 ||
		(unsigned int) a->kind >= SF_WINDOW_NKINDS)
		return false;
	params = sf_window_ops(a->kind)->params;
	for (int i = 0; i < SF_WPARAM_NBITS; i++)
		if ((params & (1 << i)) &&
			sf_window_param(a, 1 << i) != sf_window_param(b, 1 << i))
			return false;
	return true;
}
