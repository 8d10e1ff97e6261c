/*-------------------------------------------------------------------------
 *
 * registry.c
 *	  The operations tables of window kinds and aggregate functions
 *	  (engine/window_ops.h, engine/agg_ops.h), shown to SQL: the SQL code
 *	  that needs a kind's params or a function's facts reads them here
 *	  instead of keeping a list of its own (sql/objects/28_registry.sql),
 *	  and the regress test ops_registry ties the SQL objects of each kind
 *	  and function to them.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/registry.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "parser/parse_type.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "api/api.h"

/* text[] of the C strings strs[0 .. n) */
static Datum
text_array(const char *const *strs, int n)
{
	Datum	   *elems = palloc(Max(n, 1) * sizeof(Datum));

	for (int i = 0; i < n; i++)
		elems[i] = CStringGetTextDatum(strs[i]);
	return PointerGetDatum(construct_array(elems, n, TEXTOID, -1, false,
										   TYPALIGN_INT));
}

/* The names of a kind's params, in order: {"size", "step"} */
static Datum
params_array(const SfWindowOps *o)
{
	const char *names[SF_WPARAM_NBITS];
	int			n = 0;

	for (int i = 0; i < SF_WPARAM_NBITS; i++)
		if (o->params & (1 << i))
			names[n++] = sf_window_param_name(1 << i);
	return text_array(names, n);
}

/*
 * streamforge_internal.window_kinds(): one row per kind, in kind order
 * (the snapshot's kind byte): (kind, params, merging, marker, marker_proc,
 * marker_args).
 */
PG_FUNCTION_INFO_V1(sf_window_kinds_srf);
Datum
sf_window_kinds_srf(PG_FUNCTION_ARGS)
{
#define REGISTRY_KINDS_COLS 6
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, 0);
	for (int k = 0; k < SF_WINDOW_NKINDS; k++)
	{
		const SfWindowOps *o = sf_window_ops((SfWindowKind) k);
		Datum		values[REGISTRY_KINDS_COLS];
		bool		nulls[REGISTRY_KINDS_COLS] = {0};
		int			nargs = 0;
		int			i = 0;

		while (nargs < SF_WPARAM_NBITS && o->marker_args[nargs] != NULL)
			nargs++;
		values[i++] = CStringGetTextDatum(o->name);
		values[i++] = params_array(o);
		values[i++] = BoolGetDatum(o->merge == SF_WINDOW_MERGING);
		nulls[i] = o->marker == NULL;
		values[i++] = o->marker ? CStringGetTextDatum(o->marker) : (Datum) 0;
		nulls[i] = o->marker_proc == NULL;
		values[i++] = o->marker_proc ? CStringGetTextDatum(o->marker_proc) : (Datum) 0;
		values[i++] = text_array(o->marker_args, nargs);
		Assert(i == REGISTRY_KINDS_COLS);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
#undef REGISTRY_KINDS_COLS
}

/*
 * streamforge_internal.aggregate_functions(): one row per function:
 * (name, arg, sql_type, classic, pg_names, from_filter, pg_distinct).
 */
PG_FUNCTION_INFO_V1(sf_aggregate_functions_srf);
Datum
sf_aggregate_functions_srf(PG_FUNCTION_ARGS)
{
#define REGISTRY_FUNCS_COLS 7
	static const char *const arg_forms[] = {
		[SF_AGGARG_MEASURE] = "measure",
		[SF_AGGARG_COUNT] = "optional_measure",
		[SF_AGGARG_COMPARISON] = "comparison",
		[SF_AGGARG_BY] = "measure_by_measure",
		[SF_AGGARG_FRACTION] = "measure_fraction",
	};
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, 0);
	for (int f = 0; f < SF_AGG_NFUNCS; f++)
	{
		const SfAggOps *o = &sf_agg_funcs[f];
		Datum		values[REGISTRY_FUNCS_COLS];
		bool		nulls[REGISTRY_FUNCS_COLS] = {0};
		int			npg = 0;
		int			i = 0;

		while (o->pg_names != NULL && o->pg_names[npg] != NULL)
			npg++;
		values[i++] = CStringGetTextDatum(o->name);
		values[i++] = CStringGetTextDatum(arg_forms[o->arg]);
		values[i++] = ObjectIdGetDatum(typenameTypeId(NULL,
													  typeStringToTypeName(o->sql_type)));
		values[i++] = BoolGetDatum(o->classic);
		values[i++] = text_array(o->pg_names, npg);
		values[i++] = BoolGetDatum(o->from_filter);
		values[i++] = BoolGetDatum(o->pg_distinct);
		Assert(i == REGISTRY_FUNCS_COLS);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
#undef REGISTRY_FUNCS_COLS
}

/* The kind named by argument argno (text), or an error */
static const SfWindowOps *
kind_arg(FunctionCallInfo fcinfo, int argno, bool marker)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	const SfWindowOps *o = marker ? sf_window_ops_by_marker(name) :
		sf_window_ops_by_name(name);

	if (o == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown window %s \"%s\"", marker ? "marker" : "kind",
						sf_msg_cstr(name))));
	return o;
}

/*
 * streamforge_internal.window_params(kind, size, step, gap) bigint[]: the
 * values of the params the kind takes, in order (pipeline_info's
 * "fixed(10)", "sliding(20, 5)"); NULL for a NULL kind.
 */
PG_FUNCTION_INFO_V1(sf_window_params);
Datum
sf_window_params(PG_FUNCTION_ARGS)
{
	const SfWindowOps *o;
	Datum		elems[SF_WPARAM_NBITS];
	int			n = 0;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	o = kind_arg(fcinfo, 0, false);
	for (int i = 0; i < SF_WPARAM_NBITS; i++)
		if (o->params & (1 << i))
			elems[n++] = PG_ARGISNULL(1 + i) ? Int64GetDatum(0) :
				PG_GETARG_DATUM(1 + i);
	PG_RETURN_ARRAYTYPE_P(construct_array(elems, n, INT8OID, 8,
										  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/*
 * streamforge_internal.window_from_marker(marker, name, vals bigint[]):
 * the window_def of a create_aggregate marker ("hop") with its interval
 * arguments in units, in order, checked as the constructors check them.
 */
PG_FUNCTION_INFO_V1(sf_window_from_marker);
Datum
sf_window_from_marker(PG_FUNCTION_ARGS)
{
	const SfWindowOps *o = kind_arg(fcinfo, 0, true);
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(1));
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(2);
	Datum	   *vals;
	bool	   *vnulls;
	int			nvals;
	int			v = 0;
	SfWindowDef w = {0};
	TupleDesc	tupdesc;
	Datum		values[5];
	bool		nulls[5] = {false, false, true, true, true};

	deconstruct_array(arr, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
					  &vals, &vnulls, &nvals);
	sf_validate_name("window", name);
	strlcpy(w.name, name, sizeof(w.name));
	w.kind = o->kind;
	for (int i = 0; i < SF_WPARAM_NBITS; i++)
	{
		if (!(o->params & (1 << i)))
			continue;
		if (v >= nvals || vnulls[v])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s of window \"%s\" must not be null",
							sf_window_param_name(1 << i), w.name)));
		sf_window_set_param(&w, 1 << i, DatumGetInt64(vals[v++]));
		values[2 + i] = vals[v - 1];
		nulls[2 + i] = false;
	}
	sf_validate_window(&w);
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "streamforge: return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);
	values[0] = CStringGetTextDatum(w.name);
	values[1] = CStringGetTextDatum(o->name);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
