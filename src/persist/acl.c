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
 * IDENTIFICATION
 *	  src/persist/acl.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
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
#include "persist/persist.h"
#include "persist/persist_int.h"

static const char *const privilege_names[] = {
	[SF_PRIV_NONE] = NULL,
	[SF_PRIV_READ] = "read",
	[SF_PRIV_INGEST] = "ingest",
	[SF_PRIV_ADMIN] = "admin",
};

/* The owner of streamforge.pipeline, cached */
static Oid	ext_owner_relid = InvalidOid;
static Oid	ext_owner = InvalidOid;
static bool ext_owner_valid = false;
static bool ext_owner_callback_registered = false;
static uint64 ext_owner_inval_count = 0;

/* The name of a privilege ("read", "ingest", "admin"); NULL for none */
const char *
sf_privilege_name(SfPrivilege privilege)
{
	return privilege_names[privilege];
}

/* The privilege called s (any case), SF_PRIV_NONE if there is none */
SfPrivilege
sf_privilege_parse(const char *s)
{
	int			i;

	for (i = SF_PRIV_READ; i <= SF_PRIV_ADMIN; i++)
		if (pg_strcasecmp(s, privilege_names[i]) == 0)
			return (SfPrivilege) i;
	return SF_PRIV_NONE;
}

/* ----------------------------------------------------------------
 * The extension's owner
 * ----------------------------------------------------------------
 */
static void
ext_owner_inval(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == ext_owner_relid)
	{
		ext_owner_valid = false;
		ext_owner_inval_count++;
	}
}

/*
 * The owner of streamforge.pipeline: the role the extension's statements
 * run as.
 */
static Oid
extension_owner(void)
{
	if (!ext_owner_valid)
	{
		uint64		start = ext_owner_inval_count;
		Oid			nsp;
		Oid			relid;
		HeapTuple	tup;

		if (!ext_owner_callback_registered)
		{
			CacheRegisterRelcacheCallback(ext_owner_inval, (Datum) 0);
			ext_owner_callback_registered = true;
		}
		nsp = get_namespace_oid("streamforge", false);
		relid = get_relname_relid("pipeline", nsp);
		if (!OidIsValid(relid))
			elog(ERROR, "streamforge: table streamforge.pipeline is missing");
		tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
		if (!HeapTupleIsValid(tup))
			elog(ERROR, "streamforge: cache lookup failed for relation %u", relid);
		ext_owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
		ReleaseSysCache(tup);
		ext_owner_relid = relid;
		/* an invalidation that came in meanwhile makes us look again */
		ext_owner_valid = (start == ext_owner_inval_count);
	}
	return ext_owner;
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
	Oid			owner;

	sf_check_library_version();
	owner = extension_owner();
	GetUserIdAndSecContext(&saved->userid, &saved->sec_context);
	saved->guc_nestlevel = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog, pg_temp",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
							 true, 0, false);
	SetUserIdAndSecContext(owner,
						   saved->sec_context | SECURITY_LOCAL_USERID_CHANGE);
}

/* The role sf_become_owner() switches to (the background worker's) */
Oid
sf_extension_owner(void)
{
	return extension_owner();
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
acl_add_array(SfAcl *acl, int *cap, Datum d, SfPrivilege privilege)
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
	acl_add_array(acl, &cap, readers, SF_PRIV_READ);
	acl_add_array(acl, &cap, ingesters, SF_PRIV_INGEST);
	acl_add_array(acl, &cap, admins, SF_PRIV_ADMIN);
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
	if (has_privs_of_role(role, acl->owner) || role == extension_owner())
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
						  privilege_names[required]));
}
