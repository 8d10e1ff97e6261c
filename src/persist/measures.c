/*-------------------------------------------------------------------------
 *
 * measures.c
 *	  Measures pipelines as SQL values: a row's declared aggregates as
 *	  jsonb (docs/aggregates.md).  Their definition is in the pipeline's
 *	  document (definition.c).
 *
 * The numeric results follow PostgreSQL's own rules: avg is
 * numeric_div(sum, count) as avg(bigint) computes it, a variance
 * numeric_div(N * sumX2 - sumX * sumX, N * N or N * (N - 1)) as
 * numeric_stddev_internal does (0 when the numerator is not positive),
 * and a standard deviation the square root of the variance, correctly
 * rounded at the variance's scale (sqrt_var in numeric_stddev_internal).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/measures.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"


#include "catalog/pg_type.h"
#include "common/shortest_dec.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include "codec/codec.h"
#include "engine/engine.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

/* ----------------------------------------------------------------
 * Aggregates as SQL values
 * ----------------------------------------------------------------
 */

/* A 192-bit unsigned integer (little-endian words) as numeric */
static Datum
uint192_numeric(const uint64 *w)
{
	uint64		x[3] = {w[0], w[1], w[2]};
	char		digits[64];
	int			n = 0;
	char		out[64];
	int			k = 0;

	do
	{
		/* x /= 10, remainder to digits */
		uint128		r = 0;

		for (int i = 2; i >= 0; i--)
		{
			uint128		cur = (r << 64) | x[i];

			x[i] = (uint64) (cur / 10);
			r = cur % 10;
		}
		digits[n++] = '0' + (int) r;
	} while (x[0] != 0 || x[1] != 0 || x[2] != 0);
	while (n > 0)
		out[k++] = digits[--n];
	out[k] = '\0';
	return DirectFunctionCall3(numeric_in, CStringGetDatum(out),
							   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
}

static Datum
variance(const SfAggValue *v, bool sample)
{
	Datum		n = NumericGetDatum(int64_to_numeric(v->count));
	Datum		sx = sf_int128_numeric(v->sum);
	Datum		sx2 = uint192_numeric(v->sumsq);
	Datum		num;
	Datum		den;

	num = DirectFunctionCall2(numeric_sub,
							  DirectFunctionCall2(numeric_mul, n, sx2),
							  DirectFunctionCall2(numeric_mul, sx, sx));
	if (DatumGetInt32(DirectFunctionCall2(numeric_cmp, num,
										  NumericGetDatum(int64_to_numeric(0)))) <= 0)
		return NumericGetDatum(int64_to_numeric(0));
	den = sample ?
		DirectFunctionCall2(numeric_mul, n,
							NumericGetDatum(int64_to_numeric(v->count - 1))) :
		DirectFunctionCall2(numeric_mul, n, n);
	return DirectFunctionCall2(numeric_div, num, den);
}

/*
 * The square root of var (numeric, >= 0) correctly rounded (half away from
 * zero) at var's scale, as numeric_stddev_internal's sqrt_var(var, rscale)
 * gives it.  numeric_sqrt rounds at a scale of its own, so rounding its
 * result again may be one unit off in the last digit (double rounding):
 * the candidate r is corrected until (r - h)^2 <= var < (r + h)^2, h half
 * a unit of the last digit, in exact numeric arithmetic.
 */
static Datum
sqrt_at_scale(Datum var)
{
	Datum		scale = DirectFunctionCall1(numeric_scale, var);
	Datum		r = DirectFunctionCall2(numeric_round,
										DirectFunctionCall1(numeric_sqrt, var),
										scale);
	char		buf[32];
	Datum		unit;
	Datum		half;

	/* one unit of the last digit, and half of it */
	snprintf(buf, sizeof(buf), "1e-%d", DatumGetInt32(scale));
	unit = DirectFunctionCall3(numeric_in, CStringGetDatum(buf),
							   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
	snprintf(buf, sizeof(buf), "5e-%d", DatumGetInt32(scale) + 1);
	half = DirectFunctionCall3(numeric_in, CStringGetDatum(buf),
							   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
	for (int i = 0; i < 4; i++)
	{
		Datum		lo = DirectFunctionCall2(numeric_sub, r, half);
		Datum		hi = DirectFunctionCall2(numeric_add, r, half);

		/* (lo < 0: r is 0, which is right whenever hi^2 > var) */
		if (DatumGetInt32(DirectFunctionCall2(numeric_cmp, lo,
											  NumericGetDatum(int64_to_numeric(0)))) >= 0 &&
			DatumGetInt32(DirectFunctionCall2(numeric_cmp,
											  DirectFunctionCall2(numeric_mul, lo, lo),
											  var)) > 0)
			r = DirectFunctionCall2(numeric_sub, r, unit);
		else if (DatumGetInt32(DirectFunctionCall2(numeric_cmp,
												   DirectFunctionCall2(numeric_mul, hi, hi),
												   var)) <= 0)
			r = DirectFunctionCall2(numeric_add, r, unit);
		else
			break;
	}
	/* keep var's scale (numeric_add and _sub keep the larger scale) */
	return DirectFunctionCall2(numeric_round, r, scale);
}

/* The SQL value of an aggregate (*isnull for NULL), numeric or bigint */
Datum
sf_agg_datum(const SfAggValue *v, bool *isnull)
{
	*isnull = v->isnull;
	if (v->isnull)
		return (Datum) 0;
	switch (v->ops->result)
	{
		case SF_AGGRES_SUM:
			return sf_int128_numeric(v->sum);
		case SF_AGGRES_AVG:
			return DirectFunctionCall2(numeric_div, sf_int128_numeric(v->sum),
									   NumericGetDatum(int64_to_numeric(v->count)));
		case SF_AGGRES_VARIANCE:
			return variance(v, v->ops->sample);
		case SF_AGGRES_STDDEV:
			return sqrt_at_scale(variance(v, v->ops->sample));
		case SF_AGGRES_FLOAT8:
			return Float8GetDatum(v->f8);
		case SF_AGGRES_INT64:
			break;
	}
	return Int64GetDatum(v->i64);
}

/*
 * A double as numeric with its shortest exact decimal (float8out's with
 * extra_float_digits > 0, whatever the session's setting): read back as
 * double precision it is the same double
 */
static Numeric
float8_exact_numeric(double d)
{
	char		buf[DOUBLE_SHORTEST_DECIMAL_LEN];

	double_to_shortest_decimal_buf(d, buf);
	return DatumGetNumeric(DirectFunctionCall3(numeric_in, CStringGetDatum(buf),
											   ObjectIdGetDatum(InvalidOid),
											   Int32GetDatum(-1)));
}

/* The declared aggregates of a row of a measures pipeline, as jsonb */
Datum
sf_aggregates_jsonb(const SfMeasuresDef *md, const SfAgg *agg)
{
	JsonbParseState *state = NULL;
	JsonbValue	k;
	JsonbValue	v;
	JsonbValue *res;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	for (int i = 0; i < md->naggs; i++)
	{
		SfAggValue av;
		bool		isnull;
		Datum		d;

		sf_agg_value(md, agg, i, &av);
		d = sf_agg_datum(&av, &isnull);
		k.type = jbvString;
		k.val.string.val = (char *) md->aggs[i].name;
		k.val.string.len = strlen(md->aggs[i].name);
		pushJsonbValue(&state, WJB_KEY, &k);
		if (isnull)
			v.type = jbvNull;
		else
		{
			v.type = jbvNumeric;
			if (av.ops->result == SF_AGGRES_INT64)
				v.val.numeric = int64_to_numeric(DatumGetInt64(d));
			else if (av.ops->result == SF_AGGRES_FLOAT8)
				v.val.numeric = float8_exact_numeric(DatumGetFloat8(d));
			else
				v.val.numeric = DatumGetNumeric(d);
		}
		pushJsonbValue(&state, WJB_VALUE, &v);
	}
	res = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	return JsonbPGetDatum(JsonbValueToJsonb(res));
}

/* ----------------------------------------------------------------
 * The aggregates column of the durable outputs
 * ----------------------------------------------------------------
 */

/*
 * The aggregates column of n changelog or results rows, as a jsonb[] of
 * the aggregates of *aggs[i], for the sink's INSERT (sink.c): a row is
 * written complete, in one statement (0.4.0, issue 42; 0.3.0 inserted the
 * rows, then UPDATEd their aggregates in a second statement).  A
 * one-measure pipeline has no such column: *isnull is set, and the
 * INSERT's unnest of NULL pads the column with NULLs.
 */
Datum
sf_sink_aggregates(const SfPipeline *p, const SfAgg *const *aggs, int n,
				   bool *isnull)
{
	Datum	   *d;

	*isnull = p->def.measures == NULL || n == 0;
	if (*isnull)
		return (Datum) 0;
	d = palloc(n * sizeof(Datum));
	for (int i = 0; i < n; i++)
		d[i] = sf_aggregates_jsonb(p->def.measures, aggs[i]);
	return PointerGetDatum(construct_array(d, n, JSONBOID, -1, false,
										   TYPALIGN_INT));
}

/* ----------------------------------------------------------------
 * Typed values (the table of an aggregate's results, sink_typed.c)
 * ----------------------------------------------------------------
 */

/*
 * A numeric, int8 or float8 value as the SQL type target (smallint,
 * integer, bigint, numeric or double precision: the types of an
 * aggregate's view columns), with the value and the errors of the cast
 * 0.3.0's view applied to its text
 */
Datum
sf_value_as(Datum d, Oid source, Oid target)
{
	if (source == target)
		return d;
	if (source == INT8OID)
	{
		switch (target)
		{
			case INT2OID:
				return DirectFunctionCall1(int82, d);
			case INT4OID:
				return DirectFunctionCall1(int84, d);
			case FLOAT8OID:
				return DirectFunctionCall1(i8tod, d);
			default:
				d = NumericGetDatum(int64_to_numeric(DatumGetInt64(d)));
				source = NUMERICOID;
				break;
		}
	}
	else if (source == FLOAT8OID)
	{
		d = NumericGetDatum(float8_exact_numeric(DatumGetFloat8(d)));
		source = NUMERICOID;
	}
	if (source == target)
		return d;
	switch (target)
	{
		case INT2OID:
			return DirectFunctionCall1(numeric_int2, d);
		case INT4OID:
			return DirectFunctionCall1(numeric_int4, d);
		case INT8OID:
			return DirectFunctionCall1(numeric_int8, d);
		case FLOAT8OID:
			return DirectFunctionCall1(numeric_float8, d);
		case NUMERICOID:
			return d;
	}
	elog(ERROR, "streamforge: an aggregate of type %u is not one create_aggregate makes",
		 target);
	return (Datum) 0;			/* keep compiler quiet */
}

/*
 * Declared aggregate i of a measures pipeline's row as the SQL type
 * target (*isnull for NULL): the value 0.3.0's view read from the
 * aggregates jsonb (sf_aggregates_jsonb) and cast to target
 */
Datum
sf_agg_typed(const SfMeasuresDef *md, const SfAgg *agg, int i, Oid target,
			 bool *isnull)
{
	SfAggValue	av;
	Datum		d;
	Oid			source;

	sf_agg_value(md, agg, i, &av);
	d = sf_agg_datum(&av, isnull);
	if (*isnull)
		return (Datum) 0;
	source = av.ops->result == SF_AGGRES_INT64 ? INT8OID :
		av.ops->result == SF_AGGRES_FLOAT8 ? FLOAT8OID : NUMERICOID;
	return sf_value_as(d, source, target);
}
