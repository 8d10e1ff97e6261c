/*-------------------------------------------------------------------------
 *
 * sink_top.c
 *	  The top-N of an aggregate (issue 44, item 4; docs/sql-aggregates.md,
 *	  Top-N per window), kept in step with its results by the sink.
 *
 * A write call that changes the results of an aggregate with a top-N
 * changes the top-N only in the windows of its changes.  sink_emit
 * (sink.c) takes, before it writes the results, the top-N rows of those
 * windows (streamforge_internal.aggregate_top_snapshot, which reads the
 * view <name>_top restricted to the windows' starts), and after it wrote
 * them (and the measures' aggregates) hands the snapshot to
 * streamforge_internal.aggregate_top_apply, which
 * takes the new rows of the same windows and writes the difference to
 * streamforge.top_changelog: a row that left the top N is a 'delete', one
 * that entered an 'insert', one whose rank or values changed an 'update'
 * (67_aggregates_top.sql).  Then results_retention's trim, with the
 * 'delete's of the rows it drops (aggregate_top_trim: the windows it
 * trims are often not among the call's).  So the work is bounded by the
 * groups of the changed and trimmed windows, and the changelog is exact
 * against the view at every call.
 *
 * Runs inside sink_emit's SPI connection, as the extension's owner.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/sink_top.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/jsonb.h"

#include "engine/engine.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

static int
int64_cmp(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return x < y ? -1 : x > y ? 1 : 0;
}

/* the distinct window starts of the changes, as a bigint[] */
Datum
sf_sink_top_starts(const SfChangeList *changes)
{
	Datum	   *elems = palloc(changes->n * sizeof(Datum));
	int64	   *starts = palloc(changes->n * sizeof(int64));
	int			n = 0;
	int			i;

	for (i = 0; i < changes->n; i++)
		starts[i] = changes->items[i].row.addr.start;
	qsort(starts, changes->n, sizeof(int64), int64_cmp);
	for (i = 0; i < changes->n; i++)
		if (i == 0 || starts[i] != starts[i - 1])
			elems[n++] = Int64GetDatum(starts[i]);
	return PointerGetDatum(construct_array(elems, n, INT8OID, 8,
										   FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/* the top-N rows of the windows that start at starts, as jsonb */
Datum
sf_sink_top_snapshot(Datum name, Datum starts)
{
	Oid			types[2] = {TEXTOID, INT8ARRAYOID};
	Datum		values[2] = {name, starts};
	bool		isnull;
	Datum		d;

	if (SPI_execute_with_args("SELECT streamforge_internal.aggregate_top_snapshot($1, $2)",
							  2, types, values, NULL, false, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "streamforge: could not read the top-N of \"%s\"",
			 TextDatumGetCString(name));
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (isnull)
		elog(ERROR, "streamforge: the top-N of \"%s\" is null",
			 TextDatumGetCString(name));
	d = datumCopy(d, false, -1);
	SPI_freetuptable(SPI_tuptable);
	return d;
}

/* the changelog of the top-N: what changed since before */
void
sf_sink_top_apply(Datum name, Datum starts, Datum before)
{
	Oid			types[3] = {TEXTOID, INT8ARRAYOID, JSONBOID};
	Datum		values[3] = {name, starts, before};

	if (SPI_execute_with_args("SELECT streamforge_internal.aggregate_top_apply($1, $2, $3)",
							  3, types, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "streamforge: could not write the top-N changes of \"%s\"",
			 TextDatumGetCString(name));
	SPI_freetuptable(SPI_tuptable);
}

/*
 * results_retention's trim of an aggregate with a top-N: the rows it drops
 * leave the top N with a 'delete' each (aggregate_top_trim), whether or not
 * the call changed their windows.  Runs after sf_sink_top_apply.
 */
void
sf_sink_top_trim(Datum name)
{
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {name};

	if (SPI_execute_with_args("SELECT streamforge_internal.aggregate_top_trim($1)",
							  1, types, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "streamforge: could not trim the results of \"%s\"",
			 TextDatumGetCString(name));
	SPI_freetuptable(SPI_tuptable);
}
