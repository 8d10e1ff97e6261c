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
static const SfPlanText changelog_text = {
	"UPDATE streamforge.changelog AS c SET aggregates = u.a "
	"FROM ROWS FROM (pg_catalog.unnest($2), pg_catalog.unnest($3)) AS u(s, a) "
	"WHERE c.pipeline OPERATOR(pg_catalog.=) $1 "
	"AND c.seq OPERATOR(pg_catalog.=) u.s",
	3, {TEXTOID, INT8ARRAYOID, JSONBARRAYOID}
};
static SPIPlanPtr changelog_plan;

static const SfPlanText results_text = {
	"UPDATE streamforge.results AS r SET aggregates = u.a "
	"FROM ROWS FROM (pg_catalog.unnest($2), pg_catalog.unnest($3), "
	"pg_catalog.unnest($4), pg_catalog.unnest($5), pg_catalog.unnest($6), "
	"pg_catalog.unnest($7)) AS u(s, w, k, ws, we, a) "
	"WHERE r.pipeline OPERATOR(pg_catalog.=) $1 "
	"AND r.window_name OPERATOR(pg_catalog.=) u.w "
	"AND r.window_start OPERATOR(pg_catalog.=) u.ws "
	"AND pg_catalog.md5(r.key) OPERATOR(pg_catalog.=) pg_catalog.md5(u.k) "
	"AND r.key OPERATOR(pg_catalog.=) u.k "
	"AND r.window_end OPERATOR(pg_catalog.=) u.we "
	"AND r.seq OPERATOR(pg_catalog.=) u.s",
	7, {TEXTOID, INT8ARRAYOID, TEXTARRAYOID, TEXTARRAYOID, INT8ARRAYOID,
	INT8ARRAYOID, JSONBARRAYOID}
};
static SPIPlanPtr results_plan;

static Datum
datum_array(Datum *d, int n, Oid type, int len, bool byval, char align)
{
	return PointerGetDatum(construct_array(d, n, type, len, byval, align));
}

/*
 * Fill the aggregates column of the changelog and results rows this call's
 * changes wrote (sink.c has written them; the caller is connected to SPI,
 * running as the owner).  Results rows are matched by address and the seq
 * of the change that wrote them, so only the last upsert or final change
 * of an address applies.
 */
void
sf_sink_measures(SfPipeline *p, Datum name, const SfChangeList *changes,
				 bool changelog, bool results)
{
	int			n = changes->n;
	Datum	   *seq = palloc(Max(n, 1) * sizeof(Datum));
	Datum	   *agg = palloc(Max(n, 1) * sizeof(Datum));
	Datum	   *w = palloc(Max(n, 1) * sizeof(Datum));
	Datum	   *k = palloc(Max(n, 1) * sizeof(Datum));
	Datum	   *ws = palloc(Max(n, 1) * sizeof(Datum));
	Datum	   *we = palloc(Max(n, 1) * sizeof(Datum));
	int			nup = 0;
	Datum		args[7];

	if (n == 0)
		return;
	for (int i = 0; i < n; i++)
	{
		const SfChange *c = &changes->items[i];

		seq[i] = Int64GetDatum(c->seq);
		agg[i] = sf_aggregates_jsonb(p->def.measures, &c->row.agg);
	}
	args[0] = name;
	if (changelog)
	{
		args[1] = datum_array(seq, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
		args[2] = datum_array(agg, n, JSONBOID, -1, false, TYPALIGN_INT);
		sf_run_plan(&changelog_plan, &changelog_text, args, NULL, false,
					SPI_OK_UPDATE);
	}
	if (!results)
		return;
	for (int i = 0; i < n; i++)
	{
		const SfChange *c = &changes->items[i];

		/* a final change writes its row too (emit 'final', 'update+final') */
		if (c->op == SF_RETRACT)
			continue;
		seq[nup] = seq[i];
		agg[nup] = agg[i];
		w[nup] = CStringGetTextDatum(p->def.windows[c->row.addr.window].name);
		k[nup] = sf_string_text(c->row.addr.key);
		ws[nup] = Int64GetDatum(c->row.addr.start);
		we[nup] = Int64GetDatum(c->row.addr.end);
		nup++;
	}
	if (nup == 0)
		return;
	args[1] = datum_array(seq, nup, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
	args[2] = datum_array(w, nup, TEXTOID, -1, false, TYPALIGN_INT);
	args[3] = datum_array(k, nup, TEXTOID, -1, false, TYPALIGN_INT);
	args[4] = datum_array(ws, nup, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
	args[5] = datum_array(we, nup, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
	args[6] = datum_array(agg, nup, JSONBOID, -1, false, TYPALIGN_INT);
	sf_run_plan(&results_plan, &results_text, args, NULL, false,
				SPI_OK_UPDATE);
}
