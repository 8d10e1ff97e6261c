/*-------------------------------------------------------------------------
 *
 * recompute_rows.c
 *	  The mapping of streamforge.recompute: its statement run as the
 *	  aggregate's source table's owner, in a security-restricted operation
 *	  (0.4.0, issue 47, item 3; docs/joins.md, "Recomputing").
 *
 * streamforge_internal.recompute_plan (sql/objects/69_recompute.sql), run
 * here as the caller, checks `admin` on the aggregate and the insert
 * trigger attach() made, and gives the text of the mapping statement,
 * built from that trigger's arguments: never from the caller.  Then the
 * source table is locked (ACCESS SHARE, as REFRESH MATERIALIZED VIEW locks
 * its view before it switches, commands/matview.c) and planned again
 * under the lock: the table the checks see is the one the statement
 * reads, with the same owner.  The caller must have the privileges of the
 * table's owner (a superuser, the owner, a member of its role: as
 * PostgreSQL 16's logical replication requires of a subscription's owner
 * to apply as the table's owner), read the table (SELECT on it, or on all
 * its columns), and the table must have no row-level security (which the
 * owner would bypass; create_aggregate refuses it too).  The statement
 * then runs as the table's owner in a security-restricted operation at a
 * new GUC nest level, as REFRESH MATERIALIZED VIEW runs its query: the
 * aggregate's expressions (its GROUP BY, FILTER and arguments, its owner's
 * code) never run with the privileges of a superuser who recomputes, nor
 * with more than their owner's, and cannot SET ROLE, make temporary
 * tables, LISTEN or PREPARE (a SET inside ends here).  An error ends both
 * switches with the (sub)transaction.  The settings of the insert trigger
 * are the SQL function's SET clauses.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/recompute_rows.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "persist/persist.h"

/* The owner of relation relid, and whether it has row-level security */
static Oid
rel_owner(Oid relid, bool *row_security)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			owner;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "streamforge: cache lookup failed for relation %u", relid);
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	*row_security = ((Form_pg_class) GETSTRUCT(tup))->relrowsecurity;
	ReleaseSysCache(tup);
	return owner;
}

/* Column col of the single row of SPI_tuptable, copied into cxt */
static Datum
spi_column(int col, bool *isnull, MemoryContext cxt)
{
	Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
								  col, isnull);
	Form_pg_attribute att = TupleDescAttr(SPI_tuptable->tupdesc, col - 1);
	MemoryContext old;

	if (*isnull || att->attbyval)
		return d;
	old = MemoryContextSwitchTo(cxt);
	d = datumCopy(d, false, att->attlen);
	MemoryContextSwitchTo(old);
	return d;
}

void
sf_persist_recompute_rows(Datum aggregate, bool aggregate_null,
						  Datum from_time, bool from_null,
						  Datum to_time, bool to_null,
						  SfRecomputeRows *out)
{
	Oid			plan_types[3] = {TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID};
	Datum		plan_args[3] = {aggregate, from_time, to_time};
	char		plan_nulls[3] = {aggregate_null ? 'n' : ' ',
	from_null ? 'n' : ' ', to_null ? 'n' : ' '};
	Oid			map_types[4] = {TEXTOID, REGCLASSOID, INT8OID, INT8OID};
	Datum		map_args[4];
	char		map_nulls[4] = {' ', ' ', ' ', ' '};
	MemoryContext outer = CurrentMemoryContext;
	bool		isnull;
	Oid			source = InvalidOid;
	Oid			owner;
	bool		row_security;
	char	   *query = NULL;
	Oid			save_userid;
	int			save_sec;
	int			nest;
	int			ret;

	SPI_connect();
	for (int pass = 0; pass < 2; pass++)
	{
		Oid			planned = source;

		if (SPI_execute_with_args("SELECT source, measures, query, from_unit, to_unit "
								  "FROM streamforge_internal.recompute_plan($1, $2, $3)",
								  3, plan_types, plan_args, plan_nulls, false, 1) != SPI_OK_SELECT ||
			SPI_processed != 1)
			elog(ERROR, "streamforge: could not plan the recompute");
		source = DatumGetObjectId(spi_column(1, &isnull, outer));
		out->measures = DatumGetBool(spi_column(2, &isnull, outer));
		query = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3);
		out->from_unit = DatumGetInt64(spi_column(4, &out->from_null, outer));
		out->to_unit = DatumGetInt64(spi_column(5, &out->to_null, outer));
		if (aggregate_null || query == NULL)
			elog(ERROR, "streamforge: the recompute has no mapping statement");
		if (pass == 0)
		{
			/* checked once as the caller: lock, then plan again under it */
			LockRelationOid(source, AccessShareLock);
			continue;
		}
		if (source != planned)
			ereport(ERROR,
					errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					errmsg("the source table of aggregate \"%s\" changed during the recompute",
						   TextDatumGetCString(aggregate)));
	}

	/* the owner's privileges, which the mapping runs with */
	owner = rel_owner(source, &row_security);
	if (!has_privs_of_role(GetUserId(), owner))
		ereport(ERROR,
				errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				errmsg("permission denied to recompute aggregate \"%s\"",
					   TextDatumGetCString(aggregate)),
				errdetail("Its mapping runs as role \"%s\", the owner of table \"%s\", whose privileges the current user does not have.",
						  GetUserNameFromId(owner, false), get_rel_name(source)),
				errhint("Recompute as that role, or as a member of it."));
	/* the caller reads the source table */
	if (pg_class_aclcheck(source, GetUserId(), ACL_SELECT) != ACLCHECK_OK &&
		pg_attribute_aclcheck_all(source, GetUserId(), ACL_SELECT,
								  ACLMASK_ALL) != ACLCHECK_OK)
		aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_TABLE, get_rel_name(source));
	/* its owner would read every row: no policy may hide one */
	if (row_security)
		ereport(ERROR,
				errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				errmsg("cannot recompute aggregate \"%s\": table \"%s\" has row-level security",
					   TextDatumGetCString(aggregate), get_rel_name(source)),
				errhint("Its owner would read the rows its policies hide; create_aggregate refuses such a table too."));

	/* the mapping, as the table's owner, restricted */
	map_args[0] = aggregate;
	map_args[1] = ObjectIdGetDatum(source);
	map_args[2] = Int64GetDatum(out->from_unit);
	map_nulls[2] = out->from_null ? 'n' : ' ';
	map_args[3] = Int64GetDatum(out->to_unit);
	map_nulls[3] = out->to_null ? 'n' : ' ';
	GetUserIdAndSecContext(&save_userid, &save_sec);
	SetUserIdAndSecContext(owner,
						   save_sec | SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	nest = NewGUCNestLevel();
	ret = SPI_execute_with_args(query, 4, map_types, map_args, map_nulls,
								false, 1);
	AtEOXact_GUC(false, nest);
	SetUserIdAndSecContext(save_userid, save_sec);
	if (ret != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "streamforge: the mapping of the recompute gave no row");
	out->mappings = spi_column(1, &out->mappings_null, outer);
	out->dropped = spi_column(2, &out->dropped_null, outer);
	SPI_finish();
}
