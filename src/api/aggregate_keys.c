/*-------------------------------------------------------------------------
 *
 * aggregate_keys.c
 *	  The engine key of a GROUP BY expression of create_aggregate's query
 *	  (aggregate_sql.c): the engine groups events by the text of their
 *	  key, so the key is an expression whose text is equal exactly for
 *	  values equal under the type's equality, the one GROUP BY uses
 *	  (issue 38).  Types without such a form are refused.
 *	  Also the decoders the aggregates' views call on a stored row:
 *	  aggregate_key_part (a part of the key) and aggregate_time.
 *
 * Memory: the expression returned is palloc'd in the caller's context.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/aggregate_keys.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/int.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "api/api.h"

/*
 * Whether equal values of a type (PostgreSQL's equality, the one GROUP BY
 * uses) always have the same text, under the attachment's fixed settings,
 * and different values different texts: then the text of the value is the
 * engine key as it stands.  Integers, boolean, uuid, dates and times,
 * bytea, enums (a label per value), and character types (whose equality,
 * with a deterministic collation, is that of the bytes: the caller checks
 * the collation; bpchar's text drops the trailing spaces its equality
 * ignores); arrays of these but bpchar (whose elements keep their spaces).
 */
static bool
text_is_canonical(Oid typ, bool element)
{
	Oid			elem;

	typ = getBaseType(typ);
	switch (typ)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case BOOLOID:
		case UUIDOID:
		case DATEOID:
		case TIMEOID:
		case TIMETZOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case BYTEAOID:
		case TEXTOID:
		case VARCHAROID:
		case NAMEOID:
		case CHAROID:
			return true;
		case BPCHAROID:
			return !element;
		default:
			break;
	}
	if (type_is_enum(typ))
		return true;
	elem = get_element_type(typ);
	if (!element && OidIsValid(elem))
		return text_is_canonical(elem, true);
	return false;
}

/*
 * The engine key of a GROUP BY expression: an expression whose text is
 * the same for values equal under the type's equality, and different for
 * others, so that the engine, which groups by text, groups as GROUP BY
 * would.  Most types' text already is (text_is_canonical); numeric's
 * equality ignores the scale (1.0 = 1.00 = 1): trim_scale() gives the
 * shortest form (not needed, and not applied, when the expression has a
 * typmod: all its values have the typmod's scale); float's makes -0 equal 0: adding +0 turns -0 into 0
 * (IEEE 754, round to nearest) and keeps every other value, NaN
 * included (every NaN prints NaN, and the fixed extra_float_digits = 1
 * prints the shortest exact text).  Any other type, and a collation that
 * is not deterministic (whose equality no text form gives), is refused:
 * 0A000 with a hint.
 */
Node *
sf_aggregate_canonical_key(Node *e)
{
	Oid			typ = exprType(e);
	Oid			base = getBaseType(typ);
	Oid			coll = exprCollation(e);

	if (OidIsValid(coll) && !get_collation_isdeterministic(coll))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("GROUP BY an expression with the nondeterministic collation \"%s\" is not supported",
						get_collation_name(coll)),
				 errdetail("The engine groups keys by their text; values equal under a nondeterministic collation can have different texts."),
				 errhint("Group by the expression under a deterministic collation (expr COLLATE \"C\"), or by a normalized form such as lower(expr).")));
	if (base == NUMERICOID && exprTypmod(e) < 0)
		return (Node *) makeFuncExpr(F_TRIM_SCALE, NUMERICOID, list_make1(e),
									 InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
	if (base == NUMERICOID)
		return e;
	if (base == FLOAT8OID || base == FLOAT4OID)
	{
		bool		f8 = base == FLOAT8OID;
		Const	   *zero = makeConst(base, -1, InvalidOid, f8 ? 8 : 4,
									 f8 ? Float8GetDatum(0.0) : Float4GetDatum(0.0f),
									 false, FLOAT8PASSBYVAL || !f8);

		return (Node *) makeFuncExpr(f8 ? F_FLOAT8PL : F_FLOAT4PL, base,
									 list_make2(e, zero), InvalidOid, InvalidOid,
									 COERCE_EXPLICIT_CALL);
	}
	if (!text_is_canonical(typ, false))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("GROUP BY an expression of type %s is not supported",
						format_type_be(typ)),
				 errdetail("The engine groups keys by their text, and equal values of type %s can have different texts.",
						   format_type_be(typ)),
				 errhint("Group by an expression of an integer, numeric, floating-point, character, boolean, uuid, date, time, timestamp, bytea or enum type, or an array of one of these but numeric and floating-point.")));
	return e;
}

/*
 * aggregate_key_part(key, i): part i (1-based) of a key made by an
 * aggregate's attachment, the text of a text[] (ARRAY[e1::text, ...]);
 * NULL for a NULL part.  Immutable (text[]'s input of text elements is),
 * so that the views' key columns can be indexed.
 */
PG_FUNCTION_INFO_V1(sf_aggregate_key_part);

Datum
sf_aggregate_key_part(PG_FUNCTION_ARGS)
{
	char	   *key = text_to_cstring(PG_GETARG_TEXT_PP(0));
	int32		i = PG_GETARG_INT32(1);
	ArrayType  *a;
	FmgrInfo   *in;
	Datum	   *elems;
	bool	   *nulls;
	int			n;

	in = (FmgrInfo *) fcinfo->flinfo->fn_extra;
	/* text[]'s input function, looked up once per call site */
	if (in == NULL)
	{
		in = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(FmgrInfo));
		fmgr_info_cxt(F_ARRAY_IN, in, fcinfo->flinfo->fn_mcxt);
		fcinfo->flinfo->fn_extra = in;
	}
	a = DatumGetArrayTypeP(InputFunctionCall(in, key, TEXTOID, -1));
	if (ARR_NDIM(a) > 1)
		PG_RETURN_NULL();
	deconstruct_array(a, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	if (i < 1 || i > n || nulls[i - 1])
		PG_RETURN_NULL();
	PG_RETURN_DATUM(elems[i - 1]);
}

/*
 * aggregate_time(t, unit_us): units since the Unix epoch as a timestamptz,
 * immutable and exact (22008 for a time timestamptz cannot hold), for the
 * views' window_start and window_end and their index; the bigint maximum
 * is 'infinity', as in units_to_time (the watermark of the late events
 * that come after finish()).
 */
PG_FUNCTION_INFO_V1(sf_aggregate_time);

Datum
sf_aggregate_time(PG_FUNCTION_ARGS)
{
	int64		t = PG_GETARG_INT64(0);
	int64		unit_us = PG_GETARG_INT64(1);
	int64		us;
	TimestampTz result;

	if (unit_us <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("time unit must be greater than zero")));
	/* the bigint maximum is +infinity: a finished pipeline's watermark */
	if (t == PG_INT64_MAX)
		PG_RETURN_TIMESTAMPTZ(DT_NOEND);
	if (pg_mul_s64_overflow(t, unit_us, &us) ||
		pg_sub_s64_overflow(us, SF_UNIX_EPOCH_US, &result) ||
		!IS_VALID_TIMESTAMP(result))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range"),
				 errdetail("Time " INT64_FORMAT " in units of " INT64_FORMAT " microseconds is outside the range of timestamptz.",
						   t, unit_us)));
	PG_RETURN_TIMESTAMPTZ(result);
}
