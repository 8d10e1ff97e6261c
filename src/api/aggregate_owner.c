/*-------------------------------------------------------------------------
 *
 * aggregate_owner.c
 *	  What runs as the extension's owner for create_aggregate() (issue 37;
 *	  sql/install/66_aggregates_owner.sql): aggregate_register and
 *	  aggregate_unregister, which check the caller before the owner runs
 *	  the PL/pgSQL helpers; the check of the key types an aggregate's views
 *	  and index decode (never a domain: its CHECK would run as the owner);
 *	  and the refusal of temporary objects in the query.
 *
 * The query's analysis and the entry point create_aggregate are
 * aggregate_sql.c's.
 * Everything is palloc'd in the caller's context.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/aggregate_owner.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "api/api.h"

/*
 * Whether the views and the index may decode a key of type typ from text:
 * a base type (whose input function a superuser declared) or an enum, or an
 * array of one; never a domain (its CHECK runs the domain owner's code),
 * composite or range type (whose input runs their parts' input).  The
 * views and the index are the extension's owner's objects (issue 37).
 */
bool
sf_aggregate_key_type_ok(Oid typ)
{
	HeapTuple	tp = SearchSysCache1(TYPEOID, ObjectIdGetDatum(typ));
	Form_pg_type t;
	bool		result;

	if (!HeapTupleIsValid(tp))
		return false;
	t = (Form_pg_type) GETSTRUCT(tp);
	result = t->typisdefined &&
		(t->typtype == TYPTYPE_ENUM ||
		 (t->typtype == TYPTYPE_BASE &&
		  (!OidIsValid(t->typelem) || !IsTrueArrayType(t) ||
		   sf_aggregate_key_type_ok(t->typelem))));
	ReleaseSysCache(tp);
	return result;
}

/*
 * A function of a temporary schema (pg_temp.f): the attachment's filter
 * and mappings outlive the session that made them, and every inserting
 * session would resolve pg_temp.f to a function of its own (issue 37).
 */
static bool
temp_function_walker(Oid funcid, void *context)
{
	Oid			nsp = get_func_namespace(funcid);

	if (OidIsValid(nsp) && isAnyTempNamespace(nsp))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("temporary function pg_temp.%s() is not supported in %s",
						get_func_name(funcid), (const char *) context),
				 errdetail("The aggregate's filter and mappings are kept after the session ends, and every session has temporary functions of its own."),
				 errhint("Create the function in a permanent schema.")));
	return false;
}

/* The schema of a type or an operator, InvalidOid if there is none */
static Oid
object_namespace(int cacheid, Oid oid)
{
	HeapTuple	tp = SearchSysCache1(cacheid, ObjectIdGetDatum(oid));
	Oid			result = InvalidOid;

	if (HeapTupleIsValid(tp))
	{
		result = cacheid == TYPEOID ?
			((Form_pg_type) GETSTRUCT(tp))->typnamespace :
			((Form_pg_operator) GETSTRUCT(tp))->oprnamespace;
		ReleaseSysCache(tp);
	}
	return result;
}

/*
 * Refuses a temporary function, operator or type in the node itself (not
 * its children: the caller walks the tree); where names the clause.
 */
void
sf_aggregate_refuse_temp(Node *node, const char *where)
{
	Oid			opno = InvalidOid;
	Oid			typ = InvalidOid;
	Oid			nsp;

	(void) check_functions_in_node(node, temp_function_walker, (void *) where);
	if (IsA(node, OpExpr) || IsA(node, DistinctExpr) || IsA(node, NullIfExpr))
		opno = ((OpExpr *) node)->opno;
	else if (IsA(node, ScalarArrayOpExpr))
		opno = ((ScalarArrayOpExpr *) node)->opno;
	if (OidIsValid(opno) && OidIsValid(nsp = object_namespace(OPEROID, opno)) &&
		isAnyTempNamespace(nsp))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("temporary operator pg_temp.%s is not supported in %s",
						get_opname(opno), where),
				 errhint("Create the operator in a permanent schema.")));
	/* the nodes that name a type of their own */
	if (IsA(node, Const) || IsA(node, FuncExpr) || IsA(node, OpExpr) ||
		IsA(node, RelabelType) || IsA(node, CoerceViaIO) ||
		IsA(node, ArrayCoerceExpr) || IsA(node, CoerceToDomain) ||
		IsA(node, CaseExpr) || IsA(node, CoalesceExpr) || IsA(node, RowExpr) ||
		IsA(node, ArrayExpr) || IsA(node, MinMaxExpr) || IsA(node, Var))
		typ = exprType(node);
	if (OidIsValid(typ) && OidIsValid(nsp = object_namespace(TYPEOID, typ)) &&
		isAnyTempNamespace(nsp))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("temporary type %s is not supported in %s",
						format_type_be(typ), where),
				 errhint("Create the type in a permanent schema.")));
}

/*
 * aggregate_type_ok(type): whether the views and the index of an aggregate
 * may decode a key of the type (sf_aggregate_key_type_ok); the check of
 * aggregate_register_internal and of the index trigger, as the extension's
 * owner, of every type a registry row names.
 */
PG_FUNCTION_INFO_V1(sf_aggregate_type_ok);

Datum
sf_aggregate_type_ok(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(sf_aggregate_key_type_ok(PG_GETARG_OID(0)));
}

/*
 * aggregate_register(pipeline, view_schema, ...): the views, the registry
 * row and its index, made by aggregate_register_internal as the
 * extension's owner (65_aggregates.sql) once the caller is known to have
 * admin on the pipeline and CREATE on the schema of the views.
 */
PG_FUNCTION_INFO_V1(sf_aggregate_register);

Datum
sf_aggregate_register(PG_FUNCTION_ARGS)
{
	char	   *schema = sf_arg_text(fcinfo, 1, "view schema");
	Oid			nsp = get_namespace_oid(schema, false);
	Oid			source;
	AclResult	aclresult;

	aclresult = pg_namespace_aclcheck(nsp, GetUserId(), ACL_CREATE);
	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, OBJECT_SCHEMA, schema);
	/* the table: the caller's own, as for attach (issue 37) */
	sf_arg_not_null(fcinfo, 3, "source");
	source = PG_GETARG_OID(3);
	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(source)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", source)));
	if (!pg_class_ownercheck(source, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE, get_rel_name(source));
	return sf_call_as_owner(fcinfo, SF_PRIV_ADMIN,
							"streamforge_internal.aggregate_register_internal("
							"pg_catalog.text, pg_catalog.text, pg_catalog.text, "
							"pg_catalog.regclass, pg_catalog.text, pg_catalog.int8, "
							"pg_catalog.jsonb)");
}

/* aggregate_unregister(pipeline): admin; drops the views and the row */
PG_FUNCTION_INFO_V1(sf_aggregate_unregister);

Datum
sf_aggregate_unregister(PG_FUNCTION_ARGS)
{
	return sf_call_as_owner(fcinfo, SF_PRIV_ADMIN,
							"streamforge_internal.aggregate_unregister_internal(pg_catalog.text)");
}
