/*-------------------------------------------------------------------------
 *
 * consumers.c
 *	  Consumer bookmarks of the durable outputs (0.3.0, issue 25 item 4;
 *	  docs/outputs.md, Consumer bookmarks; sql/install/46_consumers.sql).
 *
 * register_consumer, commit_consumer and drop_consumer need the read
 * privilege on the pipeline (a consumer only reads); the bookmark belongs
 * to the role that registered it, and only that role or an admin of the
 * pipeline may commit or drop it, which the internal functions check with
 * the calling role this file passes them.  They run as the extension's
 * owner, the only role that may write streamforge.consumer.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/consumers.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/regproc.h"

#include "api/api.h"

/*
 * Call the internal function signature with fcinfo's arguments plus the
 * calling role, as the extension's owner, once the caller has the read
 * privilege on the pipeline named by argument 0 (sf_persist_open checks
 * it, and 42704 for an unknown pipeline).
 */
static Datum
call_with_caller(FunctionCallInfo fcinfo, const char *signature)
{
	Oid			caller = GetUserId();
	Oid			fn;
	FmgrInfo	flinfo;
	SfSavedUser saved;
	Datum		result;
	int			i;

	LOCAL_FCINFO(inner, FUNC_MAX_ARGS);

	(void) sf_arg_pipeline(fcinfo, false);

	sf_become_owner(&saved);
	fn = DatumGetObjectId(DirectFunctionCall1(regprocedurein,
											  CStringGetDatum(signature)));
	fmgr_info(fn, &flinfo);
	InitFunctionCallInfoData(*inner, &flinfo, PG_NARGS() + 1,
							 PG_GET_COLLATION(), NULL, NULL);
	for (i = 0; i < PG_NARGS(); i++)
		inner->args[i] = fcinfo->args[i];
	inner->args[PG_NARGS()].value = ObjectIdGetDatum(caller);
	inner->args[PG_NARGS()].isnull = false;
	result = FunctionCallInvoke(inner);
	sf_restore_user(&saved);

	fcinfo->isnull = inner->isnull;
	return result;
}

PG_FUNCTION_INFO_V1(sf_register_consumer);
Datum
sf_register_consumer(PG_FUNCTION_ARGS)
{
	return call_with_caller(fcinfo,
							"streamforge_internal.register_consumer_internal("
							"pg_catalog.text, pg_catalog.text, pg_catalog.oid)");
}

PG_FUNCTION_INFO_V1(sf_commit_consumer);
Datum
sf_commit_consumer(PG_FUNCTION_ARGS)
{
	return call_with_caller(fcinfo,
							"streamforge_internal.commit_consumer_internal("
							"pg_catalog.text, pg_catalog.text, pg_catalog.int8, "
							"pg_catalog.int8, pg_catalog.oid)");
}

PG_FUNCTION_INFO_V1(sf_drop_consumer);
Datum
sf_drop_consumer(PG_FUNCTION_ARGS)
{
	return call_with_caller(fcinfo,
							"streamforge_internal.drop_consumer_internal("
							"pg_catalog.text, pg_catalog.text, pg_catalog.oid)");
}
