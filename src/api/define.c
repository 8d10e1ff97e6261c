/*-------------------------------------------------------------------------
 *
 * define.c
 *	  Defining pipelines: the window constructors fixed, sliding and
 *	  session, create_pipeline and drop_pipeline.
 *
 * create_pipeline checks every argument, then the definition's limits
 * (engine/limits.c), and hands the normalized definition to persist.c; a
 * time unit's interval windows are converted first (timeunit.c).  C names
 * equal the SQL names with an sf_ prefix.  Everything is built in the SQL
 * function's memory context; persist.c copies what it keeps.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/define.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "api/api.h"

static Datum
window_datum(FunctionCallInfo fcinfo, const SfWindowDef *w)
{
	TupleDesc	tupdesc;
	Datum		values[5];
	bool		nulls[5] = {false, false, true, true, true};
	uint8		params = sf_window_ops(w->kind)->params;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "streamforge: return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);
	values[0] = CStringGetTextDatum(w->name);
	values[1] = CStringGetTextDatum(sf_window_kind_name(w->kind));
	/* size, step, gap: columns 2 to 4; a param the kind does not take is NULL */
	for (int i = 0; i < SF_WPARAM_NBITS; i++)
	{
		if (!(params & (1 << i)))
			continue;
		values[2 + i] = Int64GetDatum(sf_window_param(w, 1 << i));
		nulls[2 + i] = false;
	}
	return HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls));
}

/*
 * The window constructors: streamforge.<kind>(name, <the kind's params in
 * order>).  The kind is the SQL function's name (sf_fixed and its siblings
 * are the symbols installed 0.1.0 - 0.3.0 scripts name).
 */
static Datum
window_ctor(FunctionCallInfo fcinfo)
{
	SfWindowDef w = {0};
	char	   *fname = get_func_name(fcinfo->flinfo->fn_oid);
	const SfWindowOps *o = fname ? sf_window_ops_by_name(fname) : NULL;
	char	   *name;
	int			arg = 1;

	if (o == NULL)
		elog(ERROR, "streamforge: %s is not a window constructor",
			 fname ? fname : "?");
	name = sf_arg_text(fcinfo, 0, "window name");
	sf_validate_name("window", name);
	strlcpy(w.name, name, sizeof(w.name));
	w.kind = o->kind;
	for (int i = 0; i < SF_WPARAM_NBITS; i++)
	{
		uint8		p = 1 << i;

		if (!(o->params & p))
			continue;
		sf_arg_not_null(fcinfo, arg, sf_window_param_name(p));
		sf_window_set_param(&w, p, PG_GETARG_INT64(arg));
		arg++;
	}
	sf_validate_window(&w);
	return window_datum(fcinfo, &w);
}

PG_FUNCTION_INFO_V1(sf_window_ctor);
Datum
sf_window_ctor(PG_FUNCTION_ARGS)
{
	return window_ctor(fcinfo);
}

/* the symbols of the 0.1.0 - 0.3.0 install scripts */
PG_FUNCTION_INFO_V1(sf_fixed);
Datum
sf_fixed(PG_FUNCTION_ARGS)
{
	return window_ctor(fcinfo);
}

PG_FUNCTION_INFO_V1(sf_sliding);
Datum
sf_sliding(PG_FUNCTION_ARGS)
{
	return window_ctor(fcinfo);
}

PG_FUNCTION_INFO_V1(sf_session);
Datum
sf_session(PG_FUNCTION_ARGS)
{
	return window_ctor(fcinfo);
}

PG_FUNCTION_INFO_V1(sf_create_pipeline);
Datum
sf_create_pipeline(PG_FUNCTION_ARGS)
{
	SfPipelineDef def = {0};
	char	   *name = sf_arg_text(fcinfo, 0, "pipeline name");
	ArrayType  *parts;
	ArrayType  *wins;
	bool		has_unit;
	int64		unit_us = 0;
	Interval   *unit = NULL;
	Interval   *idle;
	Datum	   *elems;
	bool	   *elemnulls;
	int			n;
	int			i;

	sf_validate_name("pipeline", name);
	if (sf_persist_exists(name))
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("pipeline \"%s\" already exists", name)));
	strlcpy(def.name, name, sizeof(def.name));

	sf_arg_not_null(fcinfo, 1, "partitions");
	sf_arg_not_null(fcinfo, 2, "windows");
	sf_arg_not_null(fcinfo, 3, "lateness");
	parts = PG_GETARG_ARRAYTYPE_P(1);
	wins = PG_GETARG_ARRAYTYPE_P(2);
	/* interval windows to the time unit (timeunit.c) */
	has_unit = sf_time_unit_arg(fcinfo, &unit_us, &unit);
	wins = sf_windows_to_units(wins, has_unit, unit_us);
	if (array_contains_nulls(parts))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("partition names must not be null")));
	if (array_contains_nulls(wins))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("window definitions must not be null")));

	/* partitions */
	deconstruct_array(parts, TEXTOID, -1, false, TYPALIGN_INT,
					  &elems, &elemnulls, &n);
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a pipeline needs at least one partition")));
	def.npartitions = n;
	def.partitions = palloc(n * sizeof(def.partitions[0]));
	for (i = 0; i < n; i++)
	{
		char	   *pname = TextDatumGetCString(elems[i]);

		sf_validate_name("partition", pname);
		strlcpy(def.partitions[i], pname, SF_NAME_MAX + 1);
	}

	/* windows */
	{
		Oid			elemtype = ARR_ELEMTYPE(wins);
		int16		typlen;
		bool		typbyval;
		char		typalign;

		get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
		deconstruct_array(wins, elemtype, typlen, typbyval, typalign,
						  &elems, &elemnulls, &n);
	}
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a pipeline needs at least one window")));
	if (n > PG_UINT16_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a pipeline can have at most %d windows", PG_UINT16_MAX)));
	def.nwindows = n;
	def.windows = palloc0(n * sizeof(SfWindowDef));
	for (i = 0; i < n; i++)
	{
		sf_window_def_arg(elems[i], &def.windows[i]);
	}

	sf_check_def_limits(&def);
	sf_def_normalize(&def);

	def.lateness = PG_GETARG_INT64(3);
	if (def.lateness < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lateness must not be negative"),
				 errdetail("The lateness given is " INT64_FORMAT ".", def.lateness)));

	/* docs/semantics.md, Retention; 0.1.0's SQL definition passes no retention */
	{
		int			r = sf_arg_by_name(fcinfo, "retention", INT8OID);

		def.has_retention = r >= 0 && !PG_ARGISNULL(r);
		def.retention = def.has_retention ? PG_GETARG_INT64(r) : 0;
	}
	if (def.retention < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("retention must not be negative"),
				 errdetail("The retention given is " INT64_FORMAT ".", def.retention)));

	def.emit = sf_emit_arg(fcinfo);	/* docs/semantics.md, Emit modes */
	idle = sf_progress_args(fcinfo, &def);	/* progress.c */

	sf_measures_arg(fcinfo, &def);
	sf_persist_create(&def);
	if (def.emit != SF_EMIT_UPDATE)
		sf_persist_set_emit(def.name, def.emit);
	if (def.has_out_of_orderness || idle != NULL)
		sf_progress_store(def.name, &def, true, idle);
	if (idle != NULL)
		sf_activity_watch(def.name);
	if (has_unit)
		sf_time_unit_store(def.name, unit);
	if (def.measures != NULL)
		sf_measures_store(def.name, def.measures);
	PG_RETURN_VOID();
}

/*
 * Detach the tables attached to the pipeline (62_attach.sql) before the
 * pipeline goes, so that no attachment outlives it: a pipeline created
 * later under the same name must not receive their rows.  The triggers go
 * first, before the pipeline's row is locked, so that an insert running
 * meanwhile finishes (or waits) instead of deadlocking with the drop.  The
 * tables may belong to other roles: the SQL runs as the extension's owner,
 * once sf_call_as_owner has checked the caller's admin privilege.
 */
static void
drop_attachments(FunctionCallInfo fcinfo)
{
	(void) sf_call_as_owner(fcinfo, SF_PRIV_ADMIN,
							"streamforge_internal.drop_attachments(pg_catalog.text)");
}

PG_FUNCTION_INFO_V1(sf_drop_pipeline);
Datum
sf_drop_pipeline(PG_FUNCTION_ARGS)
{
	char	   *name = sf_arg_text(fcinfo, 0, "pipeline");

	drop_attachments(fcinfo);
	sf_persist_drop(name);
	sf_sink_drop(name);
	PG_RETURN_VOID();
}
