/*-------------------------------------------------------------------------
 *
 * timeunit.c
 *	  Pipelines with a time unit: create_pipeline(..., time_unit interval)
 *	  and streamforge.time_unit(pipeline).
 *
 * The engine works in bigint and never learns about the unit.  A
 * pipeline's time unit (streamforge.pipeline.time_unit, NULL for a
 * pipeline without one and for every pipeline of 0.1.0) only tells the
 * SQL-facing layer how to convert: a timestamptz t is the bigint
 * (t - epoch) / unit, exactly, and an interval i is i / unit, exactly.
 * The conversion functions themselves are SQL (sql/install/60_ingest.sql);
 * this file converts the interval windows given to create_pipeline in C,
 * and persist/catalog.c stores and reads the unit as the extension's owner
 * (the table is closed to everybody else).
 *
 * Interval windows: streamforge.fixed/sliding/session_interval() make
 * a window_def whose kind carries the suffix "/us" and whose sizes are in
 * microseconds; create_pipeline and add_window divide them by the unit (a
 * remainder is an error) and store an ordinary window_def.  Without a
 * time unit such a window is an error: its unit would be a guess.
 *
 * Callers: define.c (create_pipeline), manage.c (add_window) and
 * ingest_json.c (sf_time_to_units for event_time strings).  Memory: the
 * converted windows, and the array holding them, are palloc'd in the
 * caller's context; a window that needs no conversion is returned as it
 * is, not copied.  Nothing is cached across calls.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/timeunit.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "common/int.h"
#include "datatype/timestamp.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "api/api.h"

#define SF_US_SUFFIX "/us"

/* An interval as microseconds: no months; a day is 86,400 seconds */
static int64
interval_us(const Interval *iv, const char *what)
{
	int64		us;

	if (iv->month != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not contain months or years", what),
				 errdetail("A month has no fixed length in microseconds.")));
	if (pg_mul_s64_overflow((int64) iv->day, USECS_PER_DAY, &us) ||
		pg_add_s64_overflow(us, iv->time, &us))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("%s is out of range", what)));
	return us;
}

/* size (in microseconds) of a window as a whole number of units */
static Datum
to_units(Datum us, int64 unit_us, const char *what, const char *window)
{
	int64		v = DatumGetInt64(us);

	if (v % unit_us != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s of window \"%s\" is not a whole number of time units",
						what, window),
				 errdetail("The %s is " INT64_FORMAT " microseconds and the time unit " INT64_FORMAT " microseconds.",
						   what, v, unit_us)));
	return Int64GetDatum(v / unit_us);
}

/*
 * A window_def datum with an interval window ("/us" kind) converted to the
 * unit; any other (bigint sizes, already in units, and anything invalid,
 * left to the callers' own checks) is returned as it is.
 */
static Datum
window_to_units(Datum elem, bool has_unit, int64 unit_us)
{
	static const char *const what[] = {NULL, NULL, "size", "step", "gap"};
	TupleDesc	tupdesc;
	Datum		values[5];
	bool		nulls[5];
	char	   *kind;
	size_t		len;
	char	   *name;
	int			f;
	Datum		result;

	tupdesc = sf_deform_composite(elem, 5, "window_def", values, nulls);
	if (nulls[0] || nulls[1])
	{
		ReleaseTupleDesc(tupdesc);
		return elem;
	}
	kind = TextDatumGetCString(values[1]);
	len = strlen(kind);
	if (len <= strlen(SF_US_SUFFIX) ||
		strcmp(kind + len - strlen(SF_US_SUFFIX), SF_US_SUFFIX) != 0)
	{
		ReleaseTupleDesc(tupdesc);
		return elem;
	}
	name = TextDatumGetCString(values[0]);
	if (!has_unit)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("window \"%s\" has an interval size but the pipeline has no time unit",
						name),
				 errhint("Pass time_unit => interval '1 millisecond' (or another unit) to create_pipeline, or give the sizes as bigint.")));
	kind[len - strlen(SF_US_SUFFIX)] = '\0';
	values[1] = CStringGetTextDatum(kind);
	for (f = 2; f < 5; f++)
		if (!nulls[f])
			values[f] = to_units(values[f], unit_us, what[f], name);
	result = HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls));
	ReleaseTupleDesc(tupdesc);
	return result;
}

/*
 * The windows of create_pipeline with every interval window ("/us" kind)
 * converted to the pipeline's unit (window_to_units).
 */
ArrayType *
sf_windows_to_units(ArrayType *wins, bool has_unit, int64 unit_us)
{
	Oid			elemtype = ARR_ELEMTYPE(wins);
	int16		typlen;
	bool		typbyval;
	char		typalign;
	Datum	   *elems;
	bool	   *elemnulls;
	int			n;
	int			i;
	bool		changed = false;

	get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
	deconstruct_array(wins, elemtype, typlen, typbyval, typalign,
					  &elems, &elemnulls, &n);
	for (i = 0; i < n; i++)
	{
		Datum		d;

		if (elemnulls[i])
			continue;
		d = window_to_units(elems[i], has_unit, unit_us);
		if (d != elems[i])
		{
			elems[i] = d;
			changed = true;
		}
	}
	if (!changed)
		return wins;
	return construct_md_array(elems, elemnulls, ARR_NDIM(wins), ARR_DIMS(wins),
							  ARR_LBOUND(wins), elemtype, typlen, typbyval,
							  typalign);
}

/*
 * The window_def of add_window, an interval window converted to the
 * pipeline's time unit as create_pipeline converts it.  Caller has checked
 * the caller's privilege on the pipeline.
 */
Datum
sf_window_to_units(Datum window, const char *pipeline)
{
	Interval   *unit = sf_time_unit_get(pipeline);

	return window_to_units(window, unit != NULL,
						   unit != NULL ? interval_us(unit, "time unit") : 0);
}

/*
 * A time unit as microseconds, with the errors of the SQL helper
 * streamforge_internal.unit_us(unit): no months, positive, in range.
 */
static int64
unit_us_checked(const Interval *unit)
{
	int64		u;

	if (unit->month != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("interval \"%s\" must not contain months or years",
						DatumGetCString(DirectFunctionCall1(interval_out,
															IntervalPGetDatum(unit)))),
				 errdetail("A month has no fixed length in microseconds.")));
	u = interval_us(unit, "time unit");
	if (u <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("time unit must be greater than zero")));
	return u;
}

/*
 * A timestamp as a whole number of units since the Unix epoch, exactly.
 * The one conversion of both paths: streamforge.time_to_units() (the SQL
 * functions append_ts and the other _ts ones, attached tables' mappings)
 * is sf_time_to_units_sql below, and ingest_json's event_time strings call
 * this directly.  Errors: 22023 for an infinite timestamp or one that is
 * not a whole number of units, 22003 for one whose units do not fit in a
 * bigint.
 *
 * t + (Unix epoch - PostgreSQL epoch) can exceed int64 for the last
 * millennia of timestamptz's range (and the result still fit for a coarser
 * unit), so the sum is never formed: each term is divided separately and
 * the remainders, each in (-u, u), are combined.
 */
/* streamforge.round_event_times (module.c): floor instead of an error */
bool		sf_round_event_times = false;

int64
sf_time_to_units(TimestampTz t, const Interval *unit)
{
	const int64 epoch_us = (int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY;
	int64		u = unit_us_checked(unit);
	int64		rem;
	int64		result;

	if (TIMESTAMP_NOT_FINITE(t))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("timestamp must be finite")));
	/* t % u in (-u, u), epoch_us % u in [0, u): the sum is in (-u, 2u) */
	rem = t % u + epoch_us % u;
	if (rem != 0 && rem != u && !sf_round_event_times)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("timestamp \"%s\" is not a whole number of time units",
						DatumGetCString(DirectFunctionCall1(timestamptz_out,
															TimestampTzGetDatum(t)))),
				 errdetail("The time unit is %s.",
						   DatumGetCString(DirectFunctionCall1(interval_out,
															   IntervalPGetDatum(unit)))),
				 errhint("Truncate the timestamp to the unit (date_bin), or choose a finer unit.")));
	/* rem / u rounds toward 0; streamforge.round_event_times floors */
	if (pg_add_s64_overflow(t / u, epoch_us / u, &result) ||
		pg_add_s64_overflow(result, rem < 0 ? -1 : rem >= u ? 1 : 0, &result))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp \"%s\" is out of range for the time unit",
						DatumGetCString(DirectFunctionCall1(timestamptz_out,
															TimestampTzGetDatum(t)))),
				 errdetail("The time unit is %s; a time in units must fit in a bigint.",
						   DatumGetCString(DirectFunctionCall1(interval_out,
															   IntervalPGetDatum(unit))))));
	return result;
}

/*
 * streamforge.time_to_units(t timestamptz, unit interval): not strict, so
 * that a NULL is an error as it was in 0.2.0's PL/pgSQL version (the unit
 * is checked first, then the timestamp).
 */
PG_FUNCTION_INFO_V1(sf_time_to_units_sql);
Datum
sf_time_to_units_sql(PG_FUNCTION_ARGS)
{
	sf_arg_not_null(fcinfo, 1, "time unit");
	(void) unit_us_checked(PG_GETARG_INTERVAL_P(1));
	sf_arg_not_null(fcinfo, 0, "timestamp");
	PG_RETURN_INT64(sf_time_to_units(PG_GETARG_TIMESTAMPTZ(0),
									 PG_GETARG_INTERVAL_P(1)));
}

/*
 * time_unit(pipeline): the pipeline's time unit, NULL if it has none.
 * Needs the read privilege.
 */
PG_FUNCTION_INFO_V1(sf_time_unit);
Datum
sf_time_unit(PG_FUNCTION_ARGS)
{
	char	   *pipeline = sf_arg_text(fcinfo, 0, "pipeline");
	SfAcl		acl;
	Interval   *unit;

	sf_persist_get_acl(pipeline, false, &acl);
	sf_acl_check(&acl, pipeline, GetUserId(), SF_PRIV_READ);

	unit = sf_time_unit_get(pipeline);
	if (unit == NULL)
		PG_RETURN_NULL();
	PG_RETURN_INTERVAL_P(unit);
}
