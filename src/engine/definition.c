/*-------------------------------------------------------------------------
 *
 * definition.c
 *	  Pipeline definitions: names, normalization, equivalence, the index
 *	  of a partition or window by name (the window kinds: window_kinds.c).
 *
 * A normalized definition keeps its partitions and windows sorted by name
 * (byte order), so that an index is a rank in address order and a lookup
 * is a binary search.  The engine and the layers above work on normalized
 * definitions only (sf_def_normalize: create_pipeline, definition changes,
 * and persist.c when it loads a stored definition).  Nothing here
 * allocates but what it returns or raises.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/definition.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "engine/engine.h"
#include "engine/engine_int.h"

/*
 * A name (pipeline, partition, window) must be non-empty and at most 63
 * bytes.  what is "pipeline", "partition" or "window".
 */
void
sf_validate_name(const char *what, const char *name)
{
	size_t		len = strlen(name);

	if (len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s name must not be empty", what)));
	if (len > SF_NAME_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s name \"%s\" is too long", what, sf_msg_str(name, len)),
				 errdetail("Names are at most %d bytes long.", SF_NAME_MAX)));
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp((const char *) a, (const char *) b);
}

static int
window_def_cmp(const void *a, const void *b)
{
	return strcmp(((const SfWindowDef *) a)->name,
				  ((const SfWindowDef *) b)->name);
}

/*
 * Sort partitions and windows by name (strcmp is byte order) and reject
 * duplicates.
 */
void
sf_def_normalize(SfPipelineDef *def)
{
	int			i;

	qsort(def->partitions, def->npartitions, sizeof(def->partitions[0]),
		  name_cmp);
	for (i = 1; i < def->npartitions; i++)
		if (strcmp(def->partitions[i - 1], def->partitions[i]) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("partition \"%s\" is declared more than once",
							def->partitions[i])));
	qsort(def->windows, def->nwindows, sizeof(SfWindowDef), window_def_cmp);
	for (i = 1; i < def->nwindows; i++)
		if (strcmp(def->windows[i - 1].name, def->windows[i].name) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("window \"%s\" is declared more than once",
							def->windows[i].name)));
}

/*
 * docs/semantics.md, Exact rules, 9 and 6: same partitions, same window definitions, same lateness,
 * same retention
 */
bool
sf_def_equivalent(const SfPipelineDef *a, const SfPipelineDef *b)
{
	int			i;

	if (a->npartitions != b->npartitions || a->nwindows != b->nwindows ||
		a->lateness != b->lateness || a->has_retention != b->has_retention ||
		(a->has_retention && a->retention != b->retention) ||
		a->writers != b->writers ||
		!sf_measures_def_equal(a->measures, b->measures))
		return false;
	for (i = 0; i < a->npartitions; i++)
		if (strcmp(a->partitions[i], b->partitions[i]) != 0)
			return false;
	for (i = 0; i < a->nwindows; i++)
	{
		const SfWindowDef *x = &a->windows[i];
		const SfWindowDef *y = &b->windows[i];

		if (!sf_window_def_same(x, y))
			return false;
	}
	return true;
}

/*
 * Index of a partition or window by name in a normalized definition (both
 * are sorted by name), or -1.
 */
int
sf_partition_index(const SfPipelineDef *def, const char *name)
{
	return sf_name_index((const char *) def->partitions,
					  sizeof(def->partitions[0]), def->npartitions, name);
}

int
sf_window_index(const SfPipelineDef *def, const char *name)
{
	return sf_name_index((const char *) def->windows +
					  offsetof(SfWindowDef, name),
					  sizeof(SfWindowDef), def->nwindows, name);
}

/* The SQL name of a writers mode (SfWritersMode) */
const char *
sf_writers_mode_name(uint8 writers)
{
	switch (writers)
	{
		case SF_WRITERS_SERIAL:
			return "serial";
		case SF_WRITERS_PARALLEL:
			return "parallel";
	}
	return "unknown";
}

/* The writers mode named name; false if there is none */
bool
sf_writers_mode_parse(const char *name, uint8 *writers)
{
	if (strcmp(name, "serial") == 0)
		*writers = SF_WRITERS_SERIAL;
	else if (strcmp(name, "parallel") == 0)
		*writers = SF_WRITERS_PARALLEL;
	else
		return false;
	return true;
}
