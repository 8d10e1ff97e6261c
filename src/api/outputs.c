/*-------------------------------------------------------------------------
 *
 * outputs.c
 *	  The SQL functions of the durable outputs: configure_outputs,
 *	  resync_outputs, the trim functions, the statement trigger on
 *	  streamforge.output_config, and streamforge_internal.final_rows.
 *
 * The outputs themselves are written by persist/sink.c.  Each function
 * here but the trigger and final_rows checks admin on the pipeline and
 * then calls the internal SQL function that does the work as the
 * extension's owner (sf_call_as_owner, privileges.c;
 * sql/install/40_outputs.sql).  final_rows, which resync_outputs_internal
 * calls (41_outputs_resync.sql), rebuilds finalized rows from the
 * pipeline's remembered events (engine/final_rows.c).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/outputs.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "api/api.h"

/*
 * configure_outputs(pipeline, changelog, results, late, notify,
 * results_retention, backfill): admin
 */
PG_FUNCTION_INFO_V1(sf_configure_outputs);
Datum
sf_configure_outputs(PG_FUNCTION_ARGS)
{
	return sf_call_as_owner(fcinfo, SF_PRIV_ADMIN,
							"streamforge_internal.configure_outputs_backfill("
							"pg_catalog.text, pg_catalog.bool, pg_catalog.bool, "
							"pg_catalog.bool, pg_catalog.bool, pg_catalog.bool, "
							"pg_catalog.bool)");
}

/* resync_outputs(pipeline): admin */
PG_FUNCTION_INFO_V1(sf_resync_outputs);
Datum
sf_resync_outputs(PG_FUNCTION_ARGS)
{
	return sf_call_as_owner(fcinfo, SF_PRIV_ADMIN,
							"streamforge_internal.resync_outputs_internal(pg_catalog.text)");
}

/* move_aggregate_results(name): admin (sql/objects/66_aggregates_results.sql) */
PG_FUNCTION_INFO_V1(sf_move_aggregate_results);
Datum
sf_move_aggregate_results(PG_FUNCTION_ARGS)
{
	return sf_call_as_owner(fcinfo, SF_PRIV_ADMIN,
							"streamforge_internal.move_aggregate_results_internal(pg_catalog.text)");
}

/*
 * Statement trigger on streamforge.output_config: tell every backend
 * (this one at the next command, the others at commit) that its cached
 * copy is stale.
 */
PG_FUNCTION_INFO_V1(sf_output_config_changed);
Datum
sf_output_config_changed(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("function \"%s\" must be fired as a trigger",
						"output_config_changed")));
	CacheInvalidateRelcacheByRelid(RelationGetRelid(trigdata->tg_relation));
	return PointerGetDatum(NULL);
}

/* ----------------------------------------------------------------
 * Trimming (sql/install/40_outputs.sql, "Trimming the outputs")
 * ----------------------------------------------------------------
 */

/* trim_changelog(pipeline, up_to_seq): admin */
PG_FUNCTION_INFO_V1(sf_trim_changelog);
Datum
sf_trim_changelog(PG_FUNCTION_ARGS)
{
	return sf_call_as_owner(fcinfo, SF_PRIV_ADMIN,
							"streamforge_internal.trim_changelog_internal("
							"pg_catalog.text, pg_catalog.int8)");
}

/* trim_late_output(pipeline, up_to_late_seq): admin */
PG_FUNCTION_INFO_V1(sf_trim_late_output);
Datum
sf_trim_late_output(PG_FUNCTION_ARGS)
{
	return sf_call_as_owner(fcinfo, SF_PRIV_ADMIN,
							"streamforge_internal.trim_late_output_internal("
							"pg_catalog.text, pg_catalog.int8)");
}

/*
 * trim_results(pipeline): admin; through aggregate_top_trim, which also
 * writes the top-N's 'delete's of an aggregate with a top-N (issue 44)
 */
PG_FUNCTION_INFO_V1(sf_trim_results);
Datum
sf_trim_results(PG_FUNCTION_ARGS)
{
	return sf_call_as_owner(fcinfo, SF_PRIV_ADMIN,
							"streamforge_internal.aggregate_top_trim(pg_catalog.text)");
}

/* The elements of a one-dimensional array argument without NULLs */
static int
array_arg(FunctionCallInfo fcinfo, int argno, Oid elemtype, Datum **elems)
{
	ArrayType  *a;
	bool	   *nulls;
	int			n;
	int16		typlen;
	bool		typbyval;
	char		typalign;

	if (PG_ARGISNULL(argno))
	{
		*elems = NULL;
		return 0;
	}
	a = PG_GETARG_ARRAYTYPE_P(argno);
	get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
	deconstruct_array(a, elemtype, typlen, typbyval, typalign, elems, &nulls,
					  &n);
	for (int i = 0; i < n; i++)
		if (nulls[i])
			ereport(ERROR,
					errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					errmsg("address arrays must not contain nulls"));
	return n;
}

/*
 * The arguments of final_rows and final_rows_aggregates: (pipeline text,
 * window_name text[], key text[], window_start bigint[], window_end
 * bigint[]); the pipeline open for reading, the addresses' arrays in *a.
 */
SfPipeline *
sf_address_args(FunctionCallInfo fcinfo, SfAddressArgs *a)
{
	sf_arg_not_null(fcinfo, 0, "pipeline");
	a->n = array_arg(fcinfo, 1, TEXTOID, &a->names);
	if (array_arg(fcinfo, 2, TEXTOID, &a->keys) != a->n ||
		array_arg(fcinfo, 3, INT8OID, &a->starts) != a->n ||
		array_arg(fcinfo, 4, INT8OID, &a->ends) != a->n)
		ereport(ERROR,
				errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				errmsg("address arrays must have the same length"));
	return sf_persist_open(text_to_cstring(PG_GETARG_TEXT_PP(0)), false);
}

/* The addresses of a, as sf_derive_final_rows wants them (palloc'd) */
SfWanted *
sf_address_wanted(const SfPipeline *p, const SfAddressArgs *a)
{
	SfWanted   *wanted = palloc(Max(a->n, 1) * sizeof(SfWanted));

	for (int i = 0; i < a->n; i++)
	{
		char	   *name = TextDatumGetCString(a->names[i]);
		text	   *k = DatumGetTextPP(a->keys[i]);

		wanted[i].window = sf_window_index(&p->def, name);
		wanted[i].key = VARDATA_ANY(k);
		wanted[i].key_len = VARSIZE_ANY_EXHDR(k);
		wanted[i].start = DatumGetInt64(a->starts[i]);
		wanted[i].end = DatumGetInt64(a->ends[i]);
	}
	return wanted;
}

/*
 * streamforge_internal.final_rows(pipeline text, window_name text[],
 *     key text[], window_start bigint[], window_end bigint[])
 *     -> SETOF streamforge.result
 *
 * The rows the pipeline has finalized at the given addresses, as they were
 * finalized (engine/final_rows.c).  Internal: EXECUTE only for the extension's
 * owner, called by resync_outputs_internal; it checks the read privilege
 * like visible().
 */
PG_FUNCTION_INFO_V1(sf_final_rows);
Datum
sf_final_rows(PG_FUNCTION_ARGS)
{
	SfAddressArgs a;
	SfPipeline *p = sf_address_args(fcinfo, &a);
	SfRow	   *rows;
	int64		nrows;
	SfPipeline *q;

	nrows = sf_derive_final_rows(p, sf_address_wanted(p, &a), a.n, &rows, &q);
	InitMaterializedSRF(fcinfo, 0);
	sf_put_rows(fcinfo, p, rows, nrows);
	if (q != NULL)
		sf_pipeline_free(q);
	return (Datum) 0;
}
