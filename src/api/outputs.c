/*-------------------------------------------------------------------------
 *
 * outputs.c
 *	  The SQL functions of the durable outputs: configure_outputs,
 *	  resync_outputs, the trim functions and the statement trigger on
 *	  streamforge.output_config.
 *
 * The outputs themselves are written by persist/sink.c.  Each function
 * here but the trigger checks admin on the pipeline and then calls the
 * internal SQL function that does the work as the extension's owner
 * (sf_call_as_owner, privileges.c; sql/install/40_outputs.sql).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/outputs.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/trigger.h"
#include "fmgr.h"
#include "utils/inval.h"
#include "utils/rel.h"

#include "api/api.h"

/*
 * configure_outputs(pipeline, changelog, results, late, notify,
 * results_retention): admin.  Five arguments: the SQL definition of 0.1.0,
 * still in place between a package upgrade and ALTER EXTENSION UPDATE.
 */
PG_FUNCTION_INFO_V1(sf_configure_outputs);
Datum
sf_configure_outputs(PG_FUNCTION_ARGS)
{
	if (PG_NARGS() == 5)
		return sf_call_as_owner(fcinfo, SF_PRIV_ADMIN,
								"streamforge.configure_outputs_internal("
								"pg_catalog.text, pg_catalog.bool, pg_catalog.bool, "
								"pg_catalog.bool, pg_catalog.bool)");
	return sf_call_as_owner(fcinfo, SF_PRIV_ADMIN,
							"streamforge_internal.configure_outputs_internal("
							"pg_catalog.text, pg_catalog.bool, pg_catalog.bool, "
							"pg_catalog.bool, pg_catalog.bool, pg_catalog.bool)");
}

/* resync_outputs(pipeline): admin */
PG_FUNCTION_INFO_V1(sf_resync_outputs);
Datum
sf_resync_outputs(PG_FUNCTION_ARGS)
{
	return sf_call_as_owner(fcinfo, SF_PRIV_ADMIN,
							"streamforge_internal.resync_outputs_internal(pg_catalog.text)");
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

/* trim_results(pipeline): admin */
PG_FUNCTION_INFO_V1(sf_trim_results);
Datum
sf_trim_results(PG_FUNCTION_ARGS)
{
	return sf_call_as_owner(fcinfo, SF_PRIV_ADMIN,
							"streamforge_internal.trim_results_internal(pg_catalog.text)");
}
