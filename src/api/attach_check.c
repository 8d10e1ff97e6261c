/*-------------------------------------------------------------------------
 *
 * attach_check.c
 *	  What the triggers of an attachment check before they do anything
 *	  (streamforge_internal.attach_check; sql/objects/62_attach.sql): that
 *	  the trigger is one attach() would have made (its arguments, its
 *	  name), that the columns the mappings read are those of attach time,
 *	  and, for the insert trigger, that the table has no inheritance child
 *	  or parent, that the pipeline bound is the one of that name and that
 *	  the table's owner may ingest into it.  Returns the pipeline's id
 *	  (NULL for the update trigger).
 *
 * It was PL/pgSQL until 0.4.0 and ran once per INSERT statement: its own
 * queries and the SQL functions it called cost about 400,000 instructions
 * a statement, half of a one-row INSERT into an attached table.  The
 * checks, their order, SQLSTATEs and words are those of the PL/pgSQL
 * function; the insert trigger (attach_insert.c) calls sf_attach_check
 * directly, the update trigger (PL/pgSQL) through the SQL function.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/attach_check.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "common/md5.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/syscache.h"

#include "api/api.h"

/* The table's name as regclass writes it */
static char *
table_name(Oid source)
{
	return DatumGetCString(DirectFunctionCall1(regclassout,
											   ObjectIdGetDatum(source)));
}

/* s matches ^[0-9]{1,18}$ */
static bool
is_id(const char *s)
{
	int			n = 0;

	for (; *s; s++, n++)
		if (*s < '0' || *s > '9')
			return false;
	return n >= 1 && n <= 18;
}

/* s matches ^[{][0-9,]*[}]$ */
static bool
is_attnum_list(const char *s)
{
	size_t		len = strlen(s);

	if (len < 2 || s[0] != '{' || s[len - 1] != '}')
		return false;
	for (size_t i = 1; i + 1 < len; i++)
		if ((s[i] < '0' || s[i] > '9') && s[i] != ',')
			return false;
	return true;
}

/*
 * The name of the insert trigger attach() gives pipeline's attachment into
 * out (NAMEDATALEN): "streamforge_attach_" and the first 16 hex digits of
 * md5(pipeline), "_update" after it for the update trigger.
 */
static void
attach_trigger_name(const char *pipeline, bool for_update, char *out)
{
	char		hex[33];
	const char *errstr = NULL;

	if (!pg_md5_hash(pipeline, strlen(pipeline), hex, &errstr))
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("could not compute MD5 hash: %s", errstr)));
	snprintf(out, NAMEDATALEN, "streamforge_attach_%.16s%s", hex,
			 for_update ? "_update" : "");
}

static int
cmp_int16(const void *a, const void *b)
{
	return (int) *(const int16 *) a - (int) *(const int16 *) b;
}

/*
 * The names and types of the columns nums[0..n-1] of source, in column
 * order, as attach_columns() writes them ("a integer, b text"; '' for
 * none): every pg_attribute row whose number is listed, a dropped
 * column's too (format_type's "-" for its type).  Sorts nums.
 */
static char *
columns_of(Oid source, int16 *nums, int n)
{
	StringInfoData s;
	bool		first = true;

	qsort(nums, n, sizeof(int16), cmp_int16);
	initStringInfo(&s);
	for (int i = 0; i < n; i++)
	{
		HeapTuple	tup;
		Form_pg_attribute att;

		if (i > 0 && nums[i] == nums[i - 1])
			continue;
		tup = SearchSysCache2(ATTNUM, ObjectIdGetDatum(source),
							  Int16GetDatum(nums[i]));
		if (!HeapTupleIsValid(tup))
			continue;
		att = (Form_pg_attribute) GETSTRUCT(tup);
		if (!first)
			appendStringInfoString(&s, ", ");
		appendStringInfo(&s, "%s %s", quote_identifier(NameStr(att->attname)),
						 format_type_extended(att->atttypid, att->atttypmod,
											  FORMAT_TYPE_TYPEMOD_GIVEN |
											  FORMAT_TYPE_ALLOW_INVALID));
		first = false;
		ReleaseSysCache(tup);
	}
	return s.data;
}

/* The non-NULL elements of a smallint[], their count in *n */
static int16 *
attnums_of(ArrayType *arr, int *n)
{
	Datum	   *elems;
	bool	   *nulls;
	int			count;
	int16	   *nums;

	deconstruct_array(arr, INT2OID, 2, true, TYPALIGN_SHORT, &elems, &nulls, &count);
	nums = palloc(sizeof(int16) * Max(count, 1));
	*n = 0;
	for (int i = 0; i < count; i++)
		if (!nulls[i])
			nums[(*n)++] = DatumGetInt16(elems[i]);
	return nums;
}

/* Whether source has an inheritance child or parent (pg_inherits) */
static bool
in_hierarchy(Oid source)
{
	Relation	rel = table_open(InheritsRelationId, AccessShareLock);
	bool		found = false;
	static const struct
	{
		Oid			index;
		AttrNumber	attno;
	}			ways[2] = {
		{InheritsRelidSeqnoIndexId, Anum_pg_inherits_inhrelid},
		{InheritsParentIndexId, Anum_pg_inherits_inhparent}
	};

	for (int w = 0; w < 2 && !found; w++)
	{
		ScanKeyData key;
		SysScanDesc scan;

		ScanKeyInit(&key, ways[w].attno, BTEqualStrategyNumber, F_OIDEQ,
					ObjectIdGetDatum(source));
		scan = systable_beginscan(rel, ways[w].index, true, NULL, 1, &key);
		found = HeapTupleIsValid(systable_getnext(scan));
		systable_endscan(scan);
	}
	table_close(rel, AccessShareLock);
	return found;
}

/*
 * The checks of the trigger trigger_name of table source, whose arguments
 * are args[1..n] (1-based, as the SQL function's text[]): the pipeline's
 * id, or for the update trigger (!for_insert) *isnull.
 */
int64
sf_attach_check(Oid source, const char *trigger_name, char **args, int n,
				bool for_insert, bool *isnull)
{
	int64		id;
	int64		now_id;
	char	   *now_columns;
	SfAcl		acl;
	Oid			owner;
	bool		found;
	char		want[NAMEDATALEN] = "";
	int			nattnums;
	int16	   *attnums;

	*isnull = false;
	if (n >= 1)
		attach_trigger_name(args[1], !for_insert, want);
	if ((n != 6 && n != 9 && n != 10 && n != 11) ||
		(n == 11 && strcmp(args[11], "measures") != 0) ||
		strncmp(trigger_name, want, NAMEDATALEN - 1) != 0 ||
		(n >= 9 && (!is_id(args[7]) || !is_attnum_list(args[8]))))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("trigger \"%s\" on table %s was not made by streamforge.attach()",
						trigger_name, table_name(source)),
				 errhint("Drop the trigger and attach the table with streamforge.attach().")));
	if (n == 6)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the attachment of table %s to pipeline \"%s\" is not bound to the pipeline",
						table_name(source), args[1]),
				 errdetail("It has the form of streamforge 0.2.0, which names its pipeline only (ALTER EXTENSION UPDATE binds those it finds; one restored from a dump of 0.2.0 since was not)."),
				 errhint("Attach it again: SELECT streamforge.detach(%s, %s); then streamforge.attach(...).",
						 quote_literal_cstr(args[1]), quote_literal_cstr(table_name(source)))));
	/* args[8] as a smallint[]: its errors are the cast's */
	attnums = attnums_of(DatumGetArrayTypeP(OidInputFunctionCall(F_ARRAY_IN, args[8],
																 INT2OID, -1)),
						 &nattnums);
	now_columns = columns_of(source, attnums, nattnums);
	if (strcmp(now_columns, args[9]) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the columns that the attachment of table %s to pipeline \"%s\" reads have changed",
						table_name(source), args[1]),
				 errdetail("At attach time: %s. Now: %s.", args[9], now_columns),
				 errhint("Detach the pipeline and attach it again, with mappings over the current columns.")));
	if (!for_insert)
	{
		*isnull = true;
		return 0;
	}
	if (in_hierarchy(source))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("table %s attached to pipeline \"%s\" has an inheritance child or parent",
						table_name(source), args[1]),
				 errdetail("Rows inserted straight into a child table or a partition are not ingested."),
				 errhint("Take the table out of its inheritance hierarchy, or detach the pipeline.")));
	id = pg_strtoint64(args[7]);
	/* as pipeline_id(): none, or 42501 unless the user may read it */
	found = sf_persist_find(args[1], &now_id);
	if (found)
	{
		sf_persist_get_acl(args[1], false, &acl);
		sf_acl_check(&acl, args[1], GetUserId(), SF_PRIV_READ);
	}
	if (!found || now_id != id)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("pipeline \"%s\" attached to table %s was dropped",
						args[1], table_name(source)),
				 errdetail("The attachment is bound to the dropped pipeline; a pipeline created since under the same name is another pipeline."),
				 errhint("Detach it: SELECT streamforge.detach(%s, %s);",
						 quote_literal_cstr(args[1]), quote_literal_cstr(table_name(source)))));
	{
		HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(source));

		/* only a direct call of the SQL function names no table */
		if (!HeapTupleIsValid(tup))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_TABLE),
					 errmsg("relation with OID %u does not exist", source)));
		owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
		ReleaseSysCache(tup);
	}
	if (sf_acl_privilege(&acl, owner) < SF_PRIV_INGEST)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("owner of table %s may not ingest into pipeline \"%s\"",
						table_name(source), args[1]),
				 errdetail("An attached table ingests on its owner's authority: role %s needs the ingest privilege on the pipeline, as for streamforge.attach().",
						   quote_identifier(GetUserNameFromId(owner, false)))));
	return id;
}

/*
 * streamforge_internal.attach_check(source regclass, trigger_name name,
 * args text[], for_insert boolean) returns bigint
 */
PG_FUNCTION_INFO_V1(sf_attach_check_sql);
Datum
sf_attach_check_sql(PG_FUNCTION_ARGS)
{
	ArrayType  *arr;
	Datum	   *elems;
	bool	   *nulls;
	int			n = 0;
	char	  **args;
	bool		isnull;
	int64		id;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(3))
		PG_RETURN_NULL();
	if (!PG_ARGISNULL(2))
	{
		arr = PG_GETARG_ARRAYTYPE_P(2);
		/* a trigger's arguments are a list: a matrix is no attach() list */
		if (ARR_NDIM(arr) > 1)
			arr = construct_empty_array(TEXTOID);
		deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	}
	args = palloc0(sizeof(char *) * (n + 2));
	for (int i = 0; i < n; i++)
		args[i + 1] = nulls[i] ? "" : TextDatumGetCString(elems[i]);
	id = sf_attach_check(PG_GETARG_OID(0), NameStr(*PG_GETARG_NAME(1)), args, n,
						 PG_GETARG_BOOL(3), &isnull);
	if (isnull)
		PG_RETURN_NULL();
	PG_RETURN_INT64(id);
}

/* streamforge_internal.attach_trigger_name(pipeline text) returns name */
PG_FUNCTION_INFO_V1(sf_attach_trigger_name_sql);
Datum
sf_attach_trigger_name_sql(PG_FUNCTION_ARGS)
{
	Name		result = (Name) palloc0(NAMEDATALEN);

	attach_trigger_name(text_to_cstring(PG_GETARG_TEXT_PP(0)), false,
						NameStr(*result));
	PG_RETURN_NAME(result);
}

/*
 * streamforge_internal.attach_columns(source regclass, attnums smallint[])
 * returns text: '' when either is NULL (the SQL function's query found no
 * row then)
 */
PG_FUNCTION_INFO_V1(sf_attach_columns_sql);
Datum
sf_attach_columns_sql(PG_FUNCTION_ARGS)
{
	int			n;
	int16	   *nums;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_TEXT_P(cstring_to_text(""));
	nums = attnums_of(PG_GETARG_ARRAYTYPE_P(1), &n);
	PG_RETURN_TEXT_P(cstring_to_text(columns_of(PG_GETARG_OID(0), nums, n)));
}
