/*-------------------------------------------------------------------------
 *
 * privileges.c
 *	  The SQL functions of the privilege model: grant, revoke,
 *	  grant_privilege, revoke_privilege (sf_grant and sf_revoke serve both
 *	  names), set_owner, has_pipeline_privilege, require_privilege and
 *	  effective_privilege; and sf_call_as_owner, which runs an internal
 *	  function as the extension's owner once the caller's privilege is
 *	  checked (outputs.c; drop_pipeline in define.c), with the lookup of
 *	  the internal function (internal_function).
 *
 * The model itself (who has which privilege, running as the owner) is in
 * persist/acl.c; the grants are read and written by persist/persist.c.
 * See docs/security.md.  Everything is allocated in the SQL function's
 * memory context; the owner switch (sf_become_owner) is undone by
 * sf_restore_user, or by the transaction's abort on an error.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/privileges.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"

#include "api/api.h"

static Oid	internal_function(const char *signature);

/* ----------------------------------------------------------------
 * SQL-callable functions
 * ----------------------------------------------------------------
 */
static SfPrivilege
privilege_arg(FunctionCallInfo fcinfo, int argno)
{
	char	   *s = sf_arg_text(fcinfo, argno, "privilege");
	SfPrivilege privilege = sf_privilege_parse(s);

	if (privilege != SF_PRIV_NONE)
		return privilege;
	ereport(ERROR,
			errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			errmsg("unrecognized pipeline privilege \"%s\"", sf_msg_cstr(s)),
			errhint("The privileges are read, ingest and admin."));
	return SF_PRIV_NONE;		/* keep compiler quiet */
}

/* A role name argument; 'public' is PUBLIC (InvalidOid) if allowed */
static Oid
role_arg(FunctionCallInfo fcinfo, int argno, bool public_ok)
{
	const char *name;

	sf_arg_not_null(fcinfo, argno, "role");
	name = NameStr(*PG_GETARG_NAME(argno));
	return public_ok ? get_role_oid_or_public(name) : get_role_oid(name, false);
}

/*
 * grant and revoke: change the privilege the acl gives role itself (not its
 * members or the roles it belongs to).  grant raises it to at least
 * privilege; revoke lowers it to below privilege, so revoking read takes
 * every privilege away and revoking admin leaves ingest.
 */
static void
change_grant(FunctionCallInfo fcinfo, bool is_grant)
{
	char	   *pipeline = sf_arg_text(fcinfo, 0, "pipeline");
	SfAcl		acl;
	Oid			role;
	SfPrivilege privilege;
	SfPrivilege current = SF_PRIV_NONE;
	SfPrivilege wanted;
	int			i;
	int			j;

	/* check first: a caller without admin makes the owner lock nothing */
	sf_persist_get_acl(pipeline, false, &acl);
	sf_acl_check(&acl, pipeline, GetUserId(), SF_PRIV_ADMIN);
	/* lock the row: privileges change one transaction at a time */
	sf_persist_get_acl(pipeline, true, &acl);
	sf_acl_check(&acl, pipeline, GetUserId(), SF_PRIV_ADMIN);
	role = role_arg(fcinfo, 1, true);
	privilege = privilege_arg(fcinfo, 2);

	/* remove role's grant, remembering the highest it had */
	for (i = 0, j = 0; i < acl.ngrants; i++)
	{
		if (acl.grants[i].role == role)
		{
			current = Max(current, acl.grants[i].privilege);
			continue;
		}
		acl.grants[j++] = acl.grants[i];
	}
	acl.ngrants = j;

	wanted = is_grant ? Max(current, privilege) :
		Min(current, (SfPrivilege) (privilege - 1));
	if (wanted != SF_PRIV_NONE)
	{
		acl.grants = acl.grants == NULL ? palloc(sizeof(SfGrant)) :
			repalloc(acl.grants, (acl.ngrants + 1) * sizeof(SfGrant));
		acl.grants[acl.ngrants].role = role;
		acl.grants[acl.ngrants].privilege = wanted;
		acl.ngrants++;
	}
	if (wanted != current)
		sf_persist_set_acl(pipeline, &acl);
}

/*
 * streamforge.grant and streamforge.revoke, and also, under the same C
 * symbols, streamforge.grant_privilege and streamforge.revoke_privilege
 * (sql/install/60_management.sql), the names that work unqualified (GRANT
 * and REVOKE are reserved words): there is no sf_grant_privilege or
 * sf_revoke_privilege.
 */
PG_FUNCTION_INFO_V1(sf_grant);
Datum
sf_grant(PG_FUNCTION_ARGS)
{
	change_grant(fcinfo, true);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(sf_revoke);
Datum
sf_revoke(PG_FUNCTION_ARGS)
{
	change_grant(fcinfo, false);
	PG_RETURN_VOID();
}

/*
 * set_owner(pipeline, new_owner): the rules of ALTER TABLE ... OWNER TO.
 * The caller must have the privileges of the current owner and be a member
 * of the new owner (superusers may always).  Grants stay.
 */
PG_FUNCTION_INFO_V1(sf_set_owner);
Datum
sf_set_owner(PG_FUNCTION_ARGS)
{
	char	   *pipeline = sf_arg_text(fcinfo, 0, "pipeline");
	SfAcl		acl;
	Oid			owner;
	Oid			me = GetUserId();

	/* check before and after locking the row, as change_grant */
	sf_persist_get_acl(pipeline, false, &acl);
	if (has_privs_of_role(me, acl.owner))
		sf_persist_get_acl(pipeline, true, &acl);
	if (!has_privs_of_role(me, acl.owner))
		ereport(ERROR,
				errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				errmsg("must be owner of pipeline \"%s\"", pipeline));
	owner = role_arg(fcinfo, 1, false);
	if (!is_member_of_role(me, owner))
		ereport(ERROR,
				errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				errmsg("must be member of role \"%s\"",
					   NameStr(*PG_GETARG_NAME(1))));
	if (owner != acl.owner)
	{
		acl.owner = owner;
		sf_persist_set_acl(pipeline, &acl);
	}
	PG_RETURN_VOID();
}

/*
 * has_pipeline_privilege(pipeline, privilege, role): like
 * has_table_privilege.  An unknown pipeline is an error (42704).
 */
PG_FUNCTION_INFO_V1(sf_has_pipeline_privilege);
Datum
sf_has_pipeline_privilege(PG_FUNCTION_ARGS)
{
	char	   *pipeline = sf_arg_text(fcinfo, 0, "pipeline");
	SfPrivilege privilege = privilege_arg(fcinfo, 1);
	Oid			role = role_arg(fcinfo, 2, true);
	SfAcl		acl;

	sf_persist_get_acl(pipeline, false, &acl);
	PG_RETURN_BOOL(sf_acl_privilege(&acl, role) >= privilege);
}

/*
 * require_privilege(pipeline, privilege): raise 42704 or 42501 unless the
 * current user has the privilege; for SQL and PL/pgSQL functions built on
 * top of streamforge's.
 */
PG_FUNCTION_INFO_V1(sf_require_privilege);
Datum
sf_require_privilege(PG_FUNCTION_ARGS)
{
	char	   *pipeline = sf_arg_text(fcinfo, 0, "pipeline");
	SfPrivilege privilege = privilege_arg(fcinfo, 1);
	SfAcl		acl;

	sf_persist_get_acl(pipeline, false, &acl);
	sf_acl_check(&acl, pipeline, GetUserId(), privilege);
	PG_RETURN_VOID();
}

/*
 * effective_privilege(owner, readers, ingesters, admins): the highest
 * privilege such an acl gives the current user ('read', 'ingest',
 * 'admin'), NULL for none.  The view streamforge.pipelines and the
 * row-level security policies of the output tables use it.
 */
PG_FUNCTION_INFO_V1(sf_effective_privilege);
Datum
sf_effective_privilege(PG_FUNCTION_ARGS)
{
	SfAcl		acl;
	SfPrivilege privilege;

	sf_acl_from_datums(&acl, PG_GETARG_DATUM(0), PG_GETARG_DATUM(1),
					   PG_GETARG_DATUM(2), PG_GETARG_DATUM(3));
	privilege = sf_acl_privilege(&acl, GetUserId());
	if (privilege == SF_PRIV_NONE)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text(sf_privilege_name(privilege)));
}

/* ----------------------------------------------------------------
 * Calling the extension's internal functions
 * ----------------------------------------------------------------
 */

/*
 * Call the extension's function signature (a function nobody but the
 * extension's owner may execute) with fcinfo's arguments, as the
 * extension's owner, once the current user is known to have the privilege
 * on the pipeline named by argument 0.  The function is called directly
 * through fmgr; it must not return a set.
 */
Datum
sf_call_as_owner(FunctionCallInfo fcinfo, SfPrivilege privilege,
				 const char *signature)
{
	char	   *pipeline = sf_arg_text(fcinfo, 0, "pipeline");
	SfAcl		acl;
	Oid			fn;
	FmgrInfo	flinfo;
	SfSavedUser saved;
	Datum		result;
	int			i;

	LOCAL_FCINFO(inner, FUNC_MAX_ARGS);

	sf_persist_get_acl(pipeline, false, &acl);
	sf_acl_check(&acl, pipeline, GetUserId(), privilege);
	sf_persist_check_writable(pipeline);

	/* every name in signature is schema-qualified */
	fn = internal_function(signature);
	fmgr_info(fn, &flinfo);
	InitFunctionCallInfoData(*inner, &flinfo, PG_NARGS(),
							 PG_GET_COLLATION(), NULL, NULL);
	for (i = 0; i < PG_NARGS(); i++)
		inner->args[i] = fcinfo->args[i];

	sf_become_owner(&saved);
	result = FunctionCallInvoke(inner);
	sf_restore_user(&saved);

	fcinfo->isnull = inner->isnull;
	return result;
}

/*
 * Call the extension's function signature with the given arguments as the
 * current user (not the owner): for C entry points whose helpers are
 * closed to PUBLIC (create_aggregate).  fmgr does not check EXECUTE, so the
 * caller reaches the helper only through the entry point that calls it.
 */
Datum
sf_call_internal(const char *signature, int nargs, const Datum *args,
				 const bool *nulls, bool *isnull)
{
	Oid			fn = internal_function(signature);
	FmgrInfo	flinfo;
	Datum		result;
	int			i;

	LOCAL_FCINFO(inner, FUNC_MAX_ARGS);

	Assert(nargs <= FUNC_MAX_ARGS);
	fmgr_info(fn, &flinfo);
	InitFunctionCallInfoData(*inner, &flinfo, nargs, InvalidOid, NULL, NULL);
	for (i = 0; i < nargs; i++)
	{
		inner->args[i].value = args[i];
		inner->args[i].isnull = nulls[i];
	}
	result = FunctionCallInvoke(inner);
	*isnull = inner->isnull;
	return result;
}

/*
 * pipeline_id(pipeline): the id of a pipeline (which names its
 * notification channel), NULL if there is none, 42501 unless the current
 * user may read it (0.3.0 told any role; issue 37).  The id is read as the
 * extension's owner by a kept plan (sf_persist_find); it was read by the
 * SQL function pipeline_id_internal, which PostgreSQL parsed and planned
 * anew at each call (an attached table's trigger calls this twice per
 * statement).
 */
PG_FUNCTION_INFO_V1(sf_pipeline_id);
Datum
sf_pipeline_id(PG_FUNCTION_ARGS)
{
	char	   *pipeline = sf_arg_text(fcinfo, 0, "pipeline");
	SfAcl		acl;
	int64		id;

	if (!sf_persist_find(pipeline, &id))
		PG_RETURN_NULL();
	sf_persist_get_acl(pipeline, false, &acl);
	sf_acl_check(&acl, pipeline, GetUserId(), SF_PRIV_READ);
	PG_RETURN_INT64(id);
}

/* The OID of an internal function, given its qualified signature */
static Oid
internal_function(const char *signature)
{
	Datum		fn;
	Oid			result;
	SfSavedUser saved;

	LOCAL_FCINFO(lookup, 1);

	/* only the extension's owner may use schema streamforge_internal */
	sf_become_owner(&saved);

	/* to_regprocedure returns NULL for a missing function */
	InitFunctionCallInfoData(*lookup, NULL, 1, InvalidOid, NULL, NULL);
	lookup->args[0].value = CStringGetTextDatum(signature);
	lookup->args[0].isnull = false;
	fn = to_regprocedure(lookup);
	if (lookup->isnull || DatumGetObjectId(fn) == InvalidOid)
		elog(ERROR, "streamforge: function %s does not exist", signature);
	result = DatumGetObjectId(fn);
	sf_restore_user(&saved);
	return result;
}
