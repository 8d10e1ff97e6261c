/*-------------------------------------------------------------------------
 *
 * sink_ts.c
 *	  The timestamptz columns of the durable outputs (0.3.0, issue 25):
 *	  window_start_ts, window_end_ts and event_time_ts of a pipeline with
 *	  a time unit, converted as the _ts reads convert (units since the
 *	  Unix epoch); NULL outside timestamptz's range.  Used by sink_rows.c.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/sink_ts.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "datatype/timestamp.h"
#include "utils/array.h"
#include "utils/timestamp.h"

#include "engine/engine.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

/*
 * A time of a pipeline whose unit is unit_us microseconds as timestamptz
 * (NULL outside timestamptz's range), as the _ts reads convert it
 */
Datum
sf_time_ts(int64 t, int64 unit_us, bool *isnull)
{
	int128		us = (int128) t * unit_us -
		(int128) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY;

	*isnull = us < MIN_TIMESTAMP || us >= END_TIMESTAMP;
	return *isnull ? (Datum) 0 : TimestampTzGetDatum((TimestampTz) us);
}

/*
 * The timestamptz column of times[0..n) for sf_bulk_insert: all NULL (a
 * constant) when the pipeline has no time unit
 */
void
sf_ts_column(SfBulkColumn *col, const int64 *times, int n, int64 unit_us)
{
	col->constant = (Datum) 0;
	col->constant_null = true;
	col->values = NULL;
	col->nulls = NULL;
	if (unit_us <= 0 || n == 0)
		return;
	col->values = palloc(n * sizeof(Datum));
	col->nulls = palloc(n * sizeof(bool));
	for (int i = 0; i < n; i++)
		col->values[i] = sf_time_ts(times[i], unit_us, &col->nulls[i]);
}

/*
 * The timestamptz array of times[0..n) (NULL when the pipeline has no
 * time unit, which the statements' ROWS FROM pads with NULLs)
 */
Datum
sf_ts_array(const int64 *times, int n, int64 unit_us, bool *isnull)
{
	Datum	   *elems;
	bool	   *nulls;
	int			dims[1] = {n};
	int			lbs[1] = {1};

	*isnull = unit_us <= 0 || n == 0;
	if (*isnull)
		return (Datum) 0;
	elems = palloc(n * sizeof(Datum));
	nulls = palloc(n * sizeof(bool));
	for (int i = 0; i < n; i++)
		elems[i] = sf_time_ts(times[i], unit_us, &nulls[i]);
	return PointerGetDatum(construct_md_array(elems, nulls, 1, dims, lbs,
											  TIMESTAMPTZOID, sizeof(int64),
											  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

