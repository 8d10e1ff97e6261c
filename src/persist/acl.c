/*-------------------------------------------------------------------------
 *
 * acl.c
 *	  Privileges on pipelines, and running the extension's own queries as
 *	  the extension's owner.
 *
 * Model (docs/security.md).  A pipeline belongs to the role that created it
 * (streamforge.pipeline.owner).  There are three privileges, each including
 * the ones below it: read (watermark, live, visible, late_events,
 * partitions, stats, checkpoint), ingest (ingest, ingest_batch, advance,
 * mark_idle) and admin (restore, drop_pipeline, grant, revoke, outputs and
 * scheduling).  A role has the privileges of the pipeline's owner and of
 * its grants (readers, ingesters, admins: disjoint lists of roles, InvalidOid
 * standing for PUBLIC) if it has the privileges of that role in
 * PostgreSQL's sense (has_privs_of_role: membership with INHERIT, and
 * superusers have everything).  The extension's owner has every privilege
 * too: it owns the tables and could change them directly anyway.
 *
 * Checking.  persist.c reads a pipeline's owner and grants in the
 * statement that reads its row, or, before a write, in a plain SELECT
 * before the statement that locks it (and again from the locked row), and
 * calls sf_acl_check() before it loads or changes any state; a write call
 * that finds the row already locked by its transaction checks the copy
 * cached with the lock.  So a check costs at most one SELECT per
 * transaction and pipeline.  Functions that change privileges lock
 * the row, so a transaction that holds a pipeline's lock always sees its
 * current grants.
 *
 * Running as the owner.  PUBLIC has no privilege on the extension's tables,
 * so nobody can change a pipeline's state behind the engine's back.  The C
 * code therefore runs its SPI statements as the owner of
 * streamforge.pipeline: sf_become_owner() switches the current user id
 * (SECURITY_LOCAL_USERID_CHANGE, like a SECURITY DEFINER function), and
 * sf_restore_user() switches back.  On an error in between, nothing needs
 * to be restored by hand: the abort of the transaction, or of the
 * subtransaction (a savepoint or PL/pgSQL exception block), resets the user
 * id and security context to the values saved when it started, exactly as
 * for SECURITY DEFINER functions (see AbortSubTransaction in xact.c).
 * Every statement run this way is fixed text with schema-qualified names
 * and OPERATOR(pg_catalog.x), so the caller's search_path cannot redirect
 * it; test/run.d/sql-qualified.sh checks the text.  As a second line of
 * defence, sf_become_owner() also pins search_path to "pg_catalog, pg_temp"
 * at a new GUC nest level, as PostgreSQL does for a SECURITY DEFINER
 * function with SET search_path (fmgr_security_definer): whatever a
 * statement or a function it calls leaves unqualified resolves in
 * pg_catalog, never in a schema the caller controls.  sf_restore_user()
 * pops the nest level; an error pops it with the (sub)transaction abort.
 *
 * The owner's OID is cached per backend and forgotten on any relcache
 * invalidation of streamforge.pipeline (ALTER TABLE ... OWNER TO, DROP
 * EXTENSION).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "engine/engine.h"

static const char *const sf_privilege_names[] = {
	[SF_PRIV_NONE] = NULL,
	[SF_PRIV_READ] = "read",
	[SF_PRIV_INGEST] = "ingest",
	[SF_PRIV_ADMIN] = "admin",
};

/* The owner of streamforge.pipeline, cached */
static Oid	sf_owner_relid = InvalidOid;
static Oid	sf_owner = InvalidOid;
static bool sf_owner_valid = false;
static bool sf_owner_callback_registered = false;
static uint64 sf_owner_inval_count = 0;

/* ----------------------------------------------------------------
 * The extension's owner
 * ----------------------------------------------------------------
 */
static void
sf_owner_inval(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == sf_owner_relid)
	{
		sf_owner_valid = false;
		sf_owner_inval_count++;
	}
}

/*
 * The owner of streamforge.pipeline: the role the extension's statements
 * run as.
 */
Oid
sf_extension_owner(void)
{
	if (!sf_owner_valid)
	{
		uint64		start = sf_owner_inval_count;
		Oid			nsp;
		Oid			relid;
		HeapTuple	tup;

		if (!sf_owner_callback_registered)
		{
			CacheRegisterRelcacheCallback(sf_owner_inval, (Datum) 0);
			sf_owner_callback_registered = true;
		}
		nsp = get_namespace_oid("streamforge", false);
		relid = get_relname_relid("pipeline", nsp);
		if (!OidIsValid(relid))
			elog(ERROR, "streamforge: table streamforge.pipeline is missing");
		tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
		if (!HeapTupleIsValid(tup))
			elog(ERROR, "cache lookup failed for relation %u", relid);
		sf_owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
		ReleaseSysCache(tup);
		sf_owner_relid = relid;
		/* an invalidation that came in meanwhile makes us look again */
		sf_owner_valid = (start == sf_owner_inval_count);
	}
	return sf_owner;
}

/*
 * Run as the extension's owner from here on, until sf_restore_user(saved).
 * The caller's sec_context bits are kept (a restricted operation stays
 * restricted); SECURITY_LOCAL_USERID_CHANGE forbids SET ROLE meanwhile.
 * search_path is "pg_catalog, pg_temp" until then (GUC_ACTION_SAVE, which
 * is allowed in parallel mode too, as for a function's SET clause).
 */
void
sf_become_owner(SfSavedUser *saved)
{
	Oid			owner = sf_extension_owner();

	GetUserIdAndSecContext(&saved->userid, &saved->sec_context);
	saved->guc_nestlevel = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog, pg_temp",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
							 true, 0, false);
	SetUserIdAndSecContext(owner,
						   saved->sec_context | SECURITY_LOCAL_USERID_CHANGE);
}

void
sf_restore_user(const SfSavedUser *saved)
{
	SetUserIdAndSecContext(saved->userid, saved->sec_context);
	AtEOXact_GUC(true, saved->guc_nestlevel);
}

/* ----------------------------------------------------------------
 * Access control lists
 * ----------------------------------------------------------------
 */

/* Append the roles of a regrole[] datum with the given privilege */
static void
sf_acl_add_array(SfAcl *acl, int *cap, Datum d, SfPrivilege privilege)
{
	ArrayType  *arr = DatumGetArrayTypeP(d);
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	int			i;

	deconstruct_array(arr, REGROLEOID, sizeof(Oid), true, TYPALIGN_INT,
					  &elems, &nulls, &n);
	for (i = 0; i < n; i++)
	{
		if (nulls[i])
			continue;
		if (acl->ngrants >= *cap)
		{
			*cap = Max(8, *cap * 2);
			acl->grants = acl->grants == NULL ?
				palloc(*cap * sizeof(SfGrant)) :
				repalloc(acl->grants, *cap * sizeof(SfGrant));
		}
		acl->grants[acl->ngrants].role = DatumGetObjectId(elems[i]);
		acl->grants[acl->ngrants].privilege = privilege;
		acl->ngrants++;
	}
}

/*
 * Build acl (grants in CurrentMemoryContext) from the owner, readers,
 * ingesters and admins columns of a pipeline row.
 */
void
sf_acl_from_datums(SfAcl *acl, Datum owner, Datum readers, Datum ingesters,
				   Datum admins)
{
	int			cap = 0;

	acl->owner = DatumGetObjectId(owner);
	acl->ngrants = 0;
	acl->grants = NULL;
	sf_acl_add_array(acl, &cap, readers, SF_PRIV_READ);
	sf_acl_add_array(acl, &cap, ingesters, SF_PRIV_INGEST);
	sf_acl_add_array(acl, &cap, admins, SF_PRIV_ADMIN);
}

/* Copy src into dst, its grants allocated in cxt (dst's old ones freed) */
void
sf_acl_copy(SfAcl *dst, const SfAcl *src, MemoryContext cxt)
{
	if (dst->grants != NULL)
		pfree(dst->grants);
	dst->owner = src->owner;
	dst->ngrants = src->ngrants;
	dst->grants = NULL;
	if (src->ngrants > 0)
	{
		dst->grants = MemoryContextAlloc(cxt, src->ngrants * sizeof(SfGrant));
		memcpy(dst->grants, src->grants, src->ngrants * sizeof(SfGrant));
	}
}

/*
 * The privilege role has on a pipeline with acl: the highest of the owner's
 * (admin) and the grants' whose role role has the privileges of.
 */
SfPrivilege
sf_acl_privilege(const SfAcl *acl, Oid role)
{
	SfPrivilege best = SF_PRIV_NONE;
	int			i;

	/* has_privs_of_role() says yes for superusers */
	if (has_privs_of_role(role, acl->owner) || role == sf_extension_owner())
		return SF_PRIV_ADMIN;
	for (i = 0; i < acl->ngrants; i++)
	{
		const SfGrant *g = &acl->grants[i];

		if (g->privilege > best &&
			(g->role == InvalidOid || has_privs_of_role(role, g->role)))
		{
			best = g->privilege;
			if (best == SF_PRIV_ADMIN)
				break;
		}
	}
	return best;
}

/* Raise 42501 unless role has the required privilege on the pipeline */
void
sf_acl_check(const SfAcl *acl, const char *pipeline, Oid role,
			 SfPrivilege required)
{
	if (sf_acl_privilege(acl, role) < required)
		ereport(ERROR,
				errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				errmsg("permission denied for pipeline \"%s\"", pipeline),
				errdetail("The %s privilege on the pipeline is required.",
						  sf_privilege_names[required]));
}

/* ----------------------------------------------------------------
 * SQL-callable functions
 * ----------------------------------------------------------------
 */
static char *
sf_acl_text_arg(FunctionCallInfo fcinfo, int argno, const char *what)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				errmsg("%s must not be null", what));
	return text_to_cstring(PG_GETARG_TEXT_PP(argno));
}

static SfPrivilege
sf_privilege_arg(FunctionCallInfo fcinfo, int argno)
{
	char	   *s = sf_acl_text_arg(fcinfo, argno, "privilege");
	int			i;

	for (i = SF_PRIV_READ; i <= SF_PRIV_ADMIN; i++)
		if (pg_strcasecmp(s, sf_privilege_names[i]) == 0)
			return (SfPrivilege) i;
	ereport(ERROR,
			errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			errmsg("unrecognized pipeline privilege \"%s\"", sf_msg_cstr(s)),
			errhint("The privileges are read, ingest and admin."));
	return SF_PRIV_NONE;		/* keep compiler quiet */
}

/* A role name argument; 'public' is PUBLIC (InvalidOid) if allowed */
static Oid
sf_role_arg(FunctionCallInfo fcinfo, int argno, bool public_ok)
{
	const char *name;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				errmsg("role must not be null"));
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
sf_change_grant(FunctionCallInfo fcinfo, bool is_grant)
{
	char	   *pipeline = sf_acl_text_arg(fcinfo, 0, "pipeline");
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
	role = sf_role_arg(fcinfo, 1, true);
	privilege = sf_privilege_arg(fcinfo, 2);

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

PG_FUNCTION_INFO_V1(sf_grant);
Datum
sf_grant(PG_FUNCTION_ARGS)
{
	sf_change_grant(fcinfo, true);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(sf_revoke);
Datum
sf_revoke(PG_FUNCTION_ARGS)
{
	sf_change_grant(fcinfo, false);
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
	char	   *pipeline = sf_acl_text_arg(fcinfo, 0, "pipeline");
	SfAcl		acl;
	Oid			owner;
	Oid			me = GetUserId();

	/* check before and after locking the row, as sf_change_grant */
	sf_persist_get_acl(pipeline, false, &acl);
	if (has_privs_of_role(me, acl.owner))
		sf_persist_get_acl(pipeline, true, &acl);
	if (!has_privs_of_role(me, acl.owner))
		ereport(ERROR,
				errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				errmsg("must be owner of pipeline \"%s\"", pipeline));
	owner = sf_role_arg(fcinfo, 1, false);
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
	char	   *pipeline = sf_acl_text_arg(fcinfo, 0, "pipeline");
	SfPrivilege privilege = sf_privilege_arg(fcinfo, 1);
	Oid			role = sf_role_arg(fcinfo, 2, true);
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
	char	   *pipeline = sf_acl_text_arg(fcinfo, 0, "pipeline");
	SfPrivilege privilege = sf_privilege_arg(fcinfo, 1);
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
	PG_RETURN_TEXT_P(cstring_to_text(sf_privilege_names[privilege]));
}

/* ----------------------------------------------------------------
 * SQL-level functions that write the extension's tables
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
	char	   *pipeline = sf_acl_text_arg(fcinfo, 0, "pipeline");
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
	fn = sf_internal_function(signature);
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
