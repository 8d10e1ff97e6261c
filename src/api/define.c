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
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

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

/*
 * The position of option o's argument in this call, or -1 when the SQL
 * definition the call came through ends before it.  create_pipeline's
 * signatures of 0.1.0, 0.2.0 and 0.3.0 are prefixes of today's
 * (codec/options.def: a new option goes last), so the library serves each
 * of them, between a package upgrade and ALTER EXTENSION UPDATE, without
 * looking arguments up by name.  definition_of has the same arguments.
 */
static int
option_arg(FunctionCallInfo fcinfo, const SfOption *o)
{
	int			i = 1 + (int) (o - sf_options);

	return i < PG_NARGS() ? i : -1;
}

/* The value of an ENUM option named by text d; 22023 if there is none */
uint8
sf_option_enum_arg(const SfOption *o, Datum d)
{
	const SfOptEnum *e = (const SfOptEnum *) o->ext;
	char	   *name = TextDatumGetCString(d);
	uint8		v;

	if (!e->parse(name, &v))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown %s \"%s\"", e->noun, sf_msg_cstr(name)),
				 errhint("%s", e->hint)));
	return v;
}

/*
 * Option o's argument into def (INT64, ENUM, INTERVAL): unset (its
 * default) when the call has no such argument or, unless it is NOTNULL
 * (22004), when it is NULL; then its validator, in today's wording.
 */
static void
option_from_arg(FunctionCallInfo fcinfo, const SfOption *o, SfPipelineDef *def)
{
	int			i = option_arg(fcinfo, o);

	sf_opt_unset(def, o);
	if (i < 0)
		return;
	if (PG_ARGISNULL(i))
	{
		if (o->flags & SF_OPT_NOTNULL)
			sf_arg_null_error(o->name);
		return;
	}
	switch (o->kind)
	{
		case SF_OPT_KIND_INT64:
			sf_opt_set_int64(def, o, PG_GETARG_INT64(i));
			break;
		case SF_OPT_KIND_ENUM:
			sf_opt_set_enum(def, o, sf_option_enum_arg(o, PG_GETARG_DATUM(i)));
			break;
		case SF_OPT_KIND_INTERVAL:
			sf_opt_set_interval(def, o, PG_GETARG_INTERVAL_P(i));
			break;
		case SF_OPT_KIND_CUSTOM:
			Assert(false);
			break;
	}
	sf_option_check(def, o, SF_OPT_ARG, NULL);
}

/*
 * The subscript of the first NULL element of a (one-dimensional, as the
 * callers' arguments are; else its position from 1), for the error that
 * names it (issue 45, item 4).  Only on an error's path.
 */
static int
first_null_subscript(ArrayType *a)
{
	bits8	   *bitmap = ARR_NULLBITMAP(a);
	int			n = ArrayGetNItems(ARR_NDIM(a), ARR_DIMS(a));
	int			base = ARR_NDIM(a) == 1 ? ARR_LBOUND(a)[0] : 1;

	for (int i = 0; bitmap != NULL && i < n; i++)
		if ((bitmap[i / 8] & (1 << (i % 8))) == 0)
			return base + i;
	return 0;
}

/*
 * The definition create_pipeline's (and definition_of's) arguments give,
 * checked and normalized, in the current memory context.  With create,
 * 42710 first if the pipeline exists.  The checks run in the order of
 * 0.3.0, so that a call with several bad arguments reports the same
 * first error: name, partitions, windows and lateness not null, the time
 * unit (the windows need it), partitions, windows, limits, then the scalar
 * options in table order, then measures.
 */
static void
define_from_args(FunctionCallInfo fcinfo, SfPipelineDef *def, bool create)
{
	char	   *name = sf_arg_text(fcinfo, 0, "pipeline name");
	const SfOption *time_unit = sf_option_find("time_unit");
	ArrayType  *parts;
	ArrayType  *wins;
	int64		unit_us = 0;
	Datum	   *elems;
	bool	   *elemnulls;
	int			n;
	int			i;

	memset(def, 0, sizeof(*def));
	sf_validate_name("pipeline", name);
	if (create)
		sf_persist_check_new(name);
	strlcpy(def->name, name, sizeof(def->name));

	sf_arg_not_null(fcinfo, 1, "partitions");
	sf_arg_not_null(fcinfo, 2, "windows");
	sf_arg_not_null(fcinfo, 3, "lateness");
	parts = PG_GETARG_ARRAYTYPE_P(1);
	wins = PG_GETARG_ARRAYTYPE_P(2);
	/* interval windows to the time unit (timeunit.c) */
	option_from_arg(fcinfo, time_unit, def);
	if (def->has_time_unit)
		(void) sf_interval_us(&def->time_unit, &unit_us);
	wins = sf_windows_to_units(wins, def->has_time_unit, unit_us);
	if (array_contains_nulls(parts))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("partition names must not be null"),
				 errdetail("Element %d of partitions is null.",
						   first_null_subscript(parts))));
	if (array_contains_nulls(wins))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("window definitions must not be null"),
				 errdetail("Element %d of windows is null.",
						   first_null_subscript(wins))));

	/* partitions */
	deconstruct_array(parts, TEXTOID, -1, false, TYPALIGN_INT,
					  &elems, &elemnulls, &n);
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a pipeline needs at least one partition")));
	def->npartitions = n;
	def->partitions = palloc(n * sizeof(def->partitions[0]));
	for (i = 0; i < n; i++)
	{
		char	   *pname = TextDatumGetCString(elems[i]);

		sf_validate_name("partition", pname);
		strlcpy(def->partitions[i], pname, SF_NAME_MAX + 1);
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
	def->nwindows = n;
	def->windows = palloc0(n * sizeof(SfWindowDef));
	for (i = 0; i < n; i++)
	{
		sf_window_def_arg(elems[i], &def->windows[i]);
	}

	sf_check_def_limits(def);
	sf_def_normalize(def);

	/*
	 * The scalar options (codec/options.def), in table order: lateness,
	 * retention (docs/semantics.md, Retention), emit (Emit modes),
	 * out_of_orderness and idle_timeout (docs/progress.md).
	 */
	for (i = 0; i < sf_noptions; i++)
	{
		const SfOption *o = &sf_options[i];

		if (o->kind != SF_OPT_KIND_CUSTOM && o != time_unit)
			option_from_arg(fcinfo, o, def);
	}
	if (def->has_idle_timeout)
		(void) sf_interval_us(&def->idle_timeout, &def->idle_timeout_us);

	/*
	 * writers => 'parallel' (issue 46, docs/design/parallel-writers.md,
	 * build plan step 4): one writer at a time so far; retention and
	 * idle_timeout's conditional idle decisions are not built for it yet.
	 */
	if (def->writers == SF_WRITERS_PARALLEL && def->has_retention)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a pipeline with writers => 'parallel' cannot have a retention yet"),
				 errhint("Create the pipeline with writers => 'serial' (the default) to use a retention.")));
	if (def->writers == SF_WRITERS_PARALLEL && def->has_idle_timeout)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a pipeline with writers => 'parallel' cannot have an idle_timeout yet"),
				 errhint("Mark idle partitions with mark_idle(), or create the pipeline with writers => 'serial' (the default).")));

	/* measures and aggregates (api/measures.c) */
	{
		int			m = option_arg(fcinfo, sf_option_find("measures"));
		int			a = option_arg(fcinfo, sf_option_find("aggregates"));

		sf_measures_arg(fcinfo, m, a, def);
	}
}

PG_FUNCTION_INFO_V1(sf_create_pipeline);
Datum
sf_create_pipeline(PG_FUNCTION_ARGS)
{
	SfPipelineDef def;

	define_from_args(fcinfo, &def, true);
	sf_persist_create(&def);
	if (def.has_idle_timeout)
		sf_activity_watch(def.name);
	PG_RETURN_VOID();
}

/*
 * streamforge.definition_of(<create_pipeline's arguments>): the document
 * create_pipeline would store for them (codec/options.def), after all its
 * checks but the pipeline's existence; creates nothing.  The router
 * compares it with the shards' (create_sharded_pipeline).
 */
PG_FUNCTION_INFO_V1(sf_definition_of);
Datum
sf_definition_of(PG_FUNCTION_ARGS)
{
	SfPipelineDef def;
	StringInfoData buf;

	define_from_args(fcinfo, &def, false);
	initStringInfo(&buf);
	sf_definition_write(&buf, &def, SF_OPT_STORED);
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data)));
}

/*
 * streamforge.definition(pipeline text): the pipeline's definition as one
 * document (read).  The members and their spelling are the table's
 * (codec/options.def): the checkpoint's "definition", plus time_unit and
 * idle_timeout when set.
 */
PG_FUNCTION_INFO_V1(sf_definition);
Datum
sf_definition(PG_FUNCTION_ARGS)
{
	SfPipeline *p = sf_arg_pipeline(fcinfo, false);
	StringInfoData buf;

	initStringInfo(&buf);
	sf_definition_write(&buf, &p->def, SF_OPT_STORED);
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data)));
}

/*
 * streamforge_internal.options(): the table of options (codec/options.def),
 * in argument order; the regress test "definition" checks the SQL
 * signatures and pipeline_info's columns against it.
 */
PG_FUNCTION_INFO_V1(sf_options_list);
Datum
sf_options_list(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, 0);
	for (int i = 0; i < sf_noptions; i++)
	{
		const SfOption *o = &sf_options[i];
		Datum		values[6];
		bool		nulls[6] = {false};
		char		since[32];

		snprintf(since, sizeof(since), "%d.%d.%d", o->since / 10000,
				 o->since / 100 % 100, o->since % 100);
		values[0] = CStringGetTextDatum(o->name);
		values[1] = CStringGetTextDatum(o->sql_type);
		nulls[2] = o->sql_default == NULL;
		values[2] = nulls[2] ? (Datum) 0 : CStringGetTextDatum(o->sql_default);
		values[3] = CStringGetTextDatum(since);
		values[4] = BoolGetDatum((o->flags & SF_OPT_CK) != 0);
		values[5] = BoolGetDatum((o->flags & SF_OPT_OMIT) != 0);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
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
	/* a parallel pipeline's goes at commit, with its outputs */
	if (sf_persist_drop(name))
		sf_sink_drop(name);
	PG_RETURN_VOID();
}
