/*-------------------------------------------------------------------------
 *
 * agg_funcs.c
 *	  The registry of aggregate functions (issue 41, item 1; agg_ops.h),
 *	  and the definitions of measures pipelines: parsing and validation of
 *	  create_pipeline's measures and aggregates, their normalized spelling
 *	  (the checkpoint's and the catalog's), copy and equality.
 *
 * The bucket state of the aggregates is aggregates.c's.  Nothing here is
 * on a per-event path.  A definition lives where its caller allocates it.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/agg_funcs.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "utils/memutils.h"

#include "engine/engine.h"
#include "engine/engine_int.h"

/*
 * The registry (agg_ops.h).  A new function is a row here, its value in
 * agg_ops.h, and its cases in aggregates.c (add, merge and value); or, for
 * a variable-size state, its SfAggVarOps in a file of its own
 * (agg_distinct.c) and nothing in aggregates.c.
 */
static const char *const pg_count[] = {"count", NULL};
static const char *const pg_sum[] = {"sum", NULL};
static const char *const pg_min[] = {"min", NULL};
static const char *const pg_max[] = {"max", NULL};
static const char *const pg_avg[] = {"avg", NULL};
static const char *const pg_var_pop[] = {"var_pop", NULL};
/* PostgreSQL's historical spellings of the sample forms */
static const char *const pg_var_samp[] = {"var_samp", "variance", NULL};
static const char *const pg_stddev_pop[] = {"stddev_pop", NULL};
static const char *const pg_stddev_samp[] = {"stddev_samp", "stddev", NULL};
static const char *const pg_percentile_cont[] = {"percentile_cont", NULL};
static const char *const pg_percentile_disc[] = {"percentile_disc", NULL};

const SfAggOps sf_agg_funcs[SF_AGG_NFUNCS] = {
	[SF_AGG_COUNT] = {
		.func = SF_AGG_COUNT, .name = "count", .arg = SF_AGGARG_COUNT,
		.sql_type = "bigint", .result = SF_AGGRES_INT64,
		.nonnull_count = true, .classic = true, .pg_names = pg_count,
	},
	[SF_AGG_SUM] = {
		.func = SF_AGG_SUM, .name = "sum", .arg = SF_AGGARG_MEASURE,
		.sql_type = "numeric", .result = SF_AGGRES_SUM,
		.parts = SF_APART_SUM,
		.nonnull_count = true, .classic = true, .pg_names = pg_sum,
	},
	[SF_AGG_MIN] = {
		.func = SF_AGG_MIN, .name = "min", .arg = SF_AGGARG_MEASURE,
		.sql_type = "bigint", .result = SF_AGGRES_INT64,
		.parts = SF_APART_MIN,
		.nonnull_count = true, .classic = true, .pg_names = pg_min,
	},
	[SF_AGG_MAX] = {
		.func = SF_AGG_MAX, .name = "max", .arg = SF_AGGARG_MEASURE,
		.sql_type = "bigint", .result = SF_AGGRES_INT64,
		.parts = SF_APART_MAX,
		.nonnull_count = true, .classic = true, .pg_names = pg_max,
	},
	[SF_AGG_AVG] = {
		.func = SF_AGG_AVG, .name = "avg", .arg = SF_AGGARG_MEASURE,
		.sql_type = "numeric", .result = SF_AGGRES_AVG,
		.parts = SF_APART_SUM,
		.nonnull_count = true, .classic = true, .pg_names = pg_avg,
	},
	[SF_AGG_VAR_POP] = {
		.func = SF_AGG_VAR_POP, .name = "var_pop", .arg = SF_AGGARG_MEASURE,
		.sql_type = "numeric", .result = SF_AGGRES_VARIANCE,
		.parts = SF_APART_SUM | SF_APART_SUMSQ,
		.nonnull_count = true, .pg_names = pg_var_pop,
	},
	[SF_AGG_VAR_SAMP] = {
		.func = SF_AGG_VAR_SAMP, .name = "var_samp", .arg = SF_AGGARG_MEASURE,
		.sql_type = "numeric", .result = SF_AGGRES_VARIANCE, .sample = true,
		.parts = SF_APART_SUM | SF_APART_SUMSQ,
		.nonnull_count = true, .pg_names = pg_var_samp,
	},
	[SF_AGG_STDDEV_POP] = {
		.func = SF_AGG_STDDEV_POP, .name = "stddev_pop", .arg = SF_AGGARG_MEASURE,
		.sql_type = "numeric", .result = SF_AGGRES_STDDEV,
		.parts = SF_APART_SUM | SF_APART_SUMSQ,
		.nonnull_count = true, .pg_names = pg_stddev_pop,
	},
	[SF_AGG_STDDEV_SAMP] = {
		.func = SF_AGG_STDDEV_SAMP, .name = "stddev_samp", .arg = SF_AGGARG_MEASURE,
		.sql_type = "numeric", .result = SF_AGGRES_STDDEV, .sample = true,
		.parts = SF_APART_SUM | SF_APART_SUMSQ,
		.nonnull_count = true, .pg_names = pg_stddev_samp,
	},
	[SF_AGG_FIRST] = {
		.func = SF_AGG_FIRST, .name = "first", .arg = SF_AGGARG_MEASURE,
		.sql_type = "bigint", .result = SF_AGGRES_INT64,
		.parts = SF_APART_FIRST, .nonnull_count = true,
	},
	[SF_AGG_LAST] = {
		.func = SF_AGG_LAST, .name = "last", .arg = SF_AGGARG_MEASURE,
		.sql_type = "bigint", .result = SF_AGGRES_INT64,
		.parts = SF_APART_LAST, .nonnull_count = true,
	},
	[SF_AGG_COUNT_IF] = {
		.func = SF_AGG_COUNT_IF, .name = "count_if", .arg = SF_AGGARG_COMPARISON,
		.sql_type = "bigint", .result = SF_AGGRES_INT64,
		.own_words = 1, .from_filter = true,
	},
	/* 0.4.0: the first variable-size state (agg_distinct.c) */
	[SF_AGG_COUNT_DISTINCT] = {
		.func = SF_AGG_COUNT_DISTINCT, .name = "count_distinct",
		.arg = SF_AGGARG_MEASURE,
		.sql_type = "bigint", .result = SF_AGGRES_INT64,
		.var = &sf_agg_distinct_var,
		.pg_names = pg_count, .pg_distinct = true,
	},
	/*
	 * 0.4.0: a HyperLogLog sketch, exact up to 1024 values (agg_hll.c);
	 * pg_catalog has no approximate distinct count to map onto it: the
	 * extension's streamforge.approx_count_distinct (since branch h44b)
	 */
	[SF_AGG_APPROX_COUNT_DISTINCT] = {
		.func = SF_AGG_APPROX_COUNT_DISTINCT, .name = "approx_count_distinct",
		.arg = SF_AGGARG_MEASURE,
		.sql_type = "bigint", .result = SF_AGGRES_INT64,
		.var = &sf_agg_hll_var, .sf_sql = true,
	},

	/*
	 * 0.4.0 (issue 44, item 3): arg-max and arg-min, three own words (the
	 * values seen, the order, the value).  Events with a NULL value or a
	 * NULL order are skipped; of equal orders the smallest value wins, so
	 * that the answer is a function of the bucket's events.
	 * create_aggregate maps streamforge.max_by/min_by onto them (sql_names).
	 */
	[SF_AGG_MAX_BY] = {
		.func = SF_AGG_MAX_BY, .name = "max_by", .arg = SF_AGGARG_BY,
		.sql_type = "bigint", .result = SF_AGGRES_INT64,
		.own_words = 3, .sf_sql = true,
	},
	[SF_AGG_MIN_BY] = {
		.func = SF_AGG_MIN_BY, .name = "min_by", .arg = SF_AGGARG_BY,
		.sql_type = "bigint", .result = SF_AGGRES_INT64,
		.own_words = 3, .sf_sql = true,
	},
	/* 0.4.0 (issue 44, item 2): a DDSketch, exact up to 256 values */
	[SF_AGG_APPROX_PERCENTILE] = {
		.func = SF_AGG_APPROX_PERCENTILE, .name = "approx_percentile",
		.arg = SF_AGGARG_FRACTION,
		.sql_type = "double precision", .result = SF_AGGRES_FLOAT8,
		.var = &sf_agg_ddsketch_var, .sf_sql = true,
	},
	/* 0.4.0 (issue 44, item 2): exact, every value kept */
	[SF_AGG_PERCENTILE_CONT] = {
		.func = SF_AGG_PERCENTILE_CONT, .name = "percentile_cont",
		.arg = SF_AGGARG_FRACTION,
		.sql_type = "double precision", .result = SF_AGGRES_FLOAT8,
		.var = &sf_agg_values_cont_var, .pg_names = pg_percentile_cont,
	},
	[SF_AGG_PERCENTILE_DISC] = {
		.func = SF_AGG_PERCENTILE_DISC, .name = "percentile_disc",
		.arg = SF_AGGARG_FRACTION,
		.sql_type = "bigint", .result = SF_AGGRES_INT64,
		.var = &sf_agg_values_disc_var, .pg_names = pg_percentile_disc,
	},
};

const SfAggOps *
sf_agg_ops_by_name(const char *name)
{
	for (int f = 0; f < SF_AGG_NFUNCS; f++)
	{
		Assert(sf_agg_funcs[f].func == (SfAggFunc) f);
		if (strcmp(name, sf_agg_funcs[f].name) == 0)
			return &sf_agg_funcs[f];
	}
	return NULL;
}

const SfAggOps *
sf_agg_ops_by_pg_name(const char *pg_name, bool distinct)
{
	for (int f = 0; f < SF_AGG_NFUNCS; f++)
	{
		const SfAggOps *o = &sf_agg_funcs[f];

		if (o->pg_names == NULL || o->pg_distinct != distinct)
			continue;
		for (int k = 0; o->pg_names[k] != NULL; k++)
			if (strcmp(pg_name, o->pg_names[k]) == 0)
				return o;
	}
	return NULL;
}

const SfAggOps *
sf_agg_ops_by_sf_name(const char *name)
{
	const SfAggOps *o = sf_agg_ops_by_name(name);

	return o != NULL && o->sf_sql ? o : NULL;
}

const SfAggOps *
sf_agg_ops_from_filter(void)
{
	for (int f = 0; f < SF_AGG_NFUNCS; f++)
		if (sf_agg_funcs[f].from_filter)
			return &sf_agg_funcs[f];
	elog(ERROR, "streamforge: no aggregate counts a filter");
	return NULL;				/* keep compiler quiet */
}

static const char *const cmp_op_names[] = {
	[SF_CMP_EQ] = "=",
	[SF_CMP_NE] = "<>",
	[SF_CMP_LT] = "<",
	[SF_CMP_LE] = "<=",
	[SF_CMP_GT] = ">",
	[SF_CMP_GE] = ">=",
};

/* ----------------------------------------------------------------
 * Definitions
 * ----------------------------------------------------------------
 */
/*
 * Input repeated in a message, cut to SF_MSG_MAX bytes (as limits.c's
 * sf_msg_cstr does; not called, so that this file calls no other file of
 * the engine: the bucket code calls it)
 */
static const char *
clip(const char *s)
{
	int			len = strlen(s);

	if (len <= SF_MSG_MAX)
		return s;
	return psprintf("%s...", pnstrdup(s, pg_mbcliplen(s, len, SF_MSG_MAX)));
}

static pg_attribute_noreturn() void
bad_aggregate(const char *spec, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid aggregate \"%s\"", clip(spec)),
			 errdetail("%s", detail),
			 errhint("Write func(measure), count, or count_if(measure op constant), optionally followed by AS name; see docs/aggregates.md.")));
}

static bool
is_identifier(const char *s, int len)
{
	if (len < 1 || len > SF_NAME_MAX)
		return false;
	if (!((s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
		return false;
	for (int i = 1; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
			  s[i] == '_'))
			return false;
	return true;
}

static const char *
skip_spaces(const char *s)
{
	while (*s == ' ')
		s++;
	return s;
}

/* An identifier at *s, advancing *s; its length (0: none) */
static int
scan_identifier(const char **s, char *out)
{
	const char *p = *s;
	int			n = 0;

	while ((p[n] >= 'a' && p[n] <= 'z') || (p[n] >= '0' && p[n] <= '9') ||
		   p[n] == '_')
		n++;
	if (n == 0 || n > SF_NAME_MAX || !is_identifier(p, n))
		return 0;
	memcpy(out, p, n);
	out[n] = '\0';
	*s = p + n;
	return n;
}

/* Whether s (len bytes) ends with " NULL", in any case */
static bool
ends_with_null(const char *s, int len)
{
	static const char null_word[] = " null";

	for (int i = 0; i < 5; i++)
	{
		char		c = s[len - 5 + i];

		if (c >= 'A' && c <= 'Z')
			c += 'a' - 'A';
		if (c != null_word[i])
			return false;
	}
	return true;
}

static int
measure_index(const SfMeasuresDef *md, const char *name)
{
	for (int i = 0; i < md->nmeasures; i++)
		if (strcmp(md->names[i], name) == 0)
			return i;
	return -1;
}

/*
 * An aggregate's default name: func_m, max_by_m_order, approx_percentile_m_95
 * (the fraction's digits after the point; 0 and 1 as such), palloc'd
 */
static char *fraction_spelling(int64 millionths);

static char *
default_name(const SfAggOps *o, const SfAggDef *a, const SfMeasuresDef *md)
{
	if (o->arg == SF_AGGARG_BY)
		return psprintf("%s_%s_%s", o->name, md->names[a->measure],
						md->names[a->measure2]);
	if (o->arg == SF_AGGARG_FRACTION)
	{
		char	   *f = fraction_spelling(a->constant);

		return psprintf("%s_%s_%s", o->name, md->names[a->measure],
						f[0] == '0' && f[1] == '.' ? f + 2 : f);
	}
	return psprintf("%s_%s", o->name, md->names[a->measure]);
}

/*
 * A fraction from 0 to 1 at *s (0, 1, 0.95, .5, 1.0; at most 6 digits
 * after the point), advancing *s: in millionths
 */
static bool
parse_fraction(const char **s, int64 *millionths)
{
	const char *p = *s;
	int64		whole = 0;
	int64		frac = 0;
	int			digits = 0;
	bool		any = false;

	if (*p >= '0' && *p <= '9')
	{
		/* 0 or 1, no leading zeros beyond one */
		whole = *p - '0';
		p++;
		any = true;
		if (whole > 1 || (*p >= '0' && *p <= '9'))
			return false;
	}
	if (*p == '.')
	{
		p++;
		while (*p >= '0' && *p <= '9')
		{
			if (++digits > 6)
				return false;
			frac = frac * 10 + (*p - '0');
			p++;
			any = true;
		}
	}
	if (!any)
		return false;
	for (int i = digits; i < 6; i++)
		frac *= 10;
	*millionths = whole * SF_FRACTION_UNIT + frac;
	if (*millionths > SF_FRACTION_UNIT)
		return false;
	*s = p;
	return true;
}

/* The canonical spelling of a fraction in millionths: 0, 1, 0.95 */
static char *
fraction_spelling(int64 millionths)
{
	char		buf[16];
	int			len;

	if (millionths == 0 || millionths == SF_FRACTION_UNIT)
		return psprintf("%d", (int) (millionths / SF_FRACTION_UNIT));
	snprintf(buf, sizeof(buf), "0.%06d", (int) millionths);
	len = strlen(buf);
	while (buf[len - 1] == '0')
		buf[--len] = '\0';
	return pstrdup(buf);
}

/*
 * The names a top-N per window goes by elsewhere (Flink SQL's
 * ROW_NUMBER(), RANK(); TimescaleDB toolkit's max_n/min_n; "top" and
 * "top_n"): refused with 0A000 and a hint (issue 44, item 4: a top-N is
 * create_aggregate's, a view over the aggregate's rows, not an aggregate)
 */
static bool
is_top_n_spelling(const char *func)
{
	static const char *const names[] = {
		"row_number", "rank", "dense_rank", "top", "top_n", "topn", "top_k",
		"max_n", "min_n", "max_n_by", "min_n_by",
	};

	for (int i = 0; i < lengthof(names); i++)
		if (strcmp(func, names[i]) == 0)
			return true;
	return false;
}

static void
parse_aggregate(SfMeasuresDef *md, const char *spec, SfAggDef *a)
{
	const char *s = skip_spaces(spec);
	char		func[SF_NAME_MAX + 1];
	char		arg[SF_NAME_MAX + 1];
	const SfAggOps *o;

	memset(a, 0, sizeof(*a));
	a->measure = -1;
	a->measure2 = -1;
	if (scan_identifier(&s, func) == 0)
		bad_aggregate(spec, "It does not start with the name of an aggregate function.");
	o = sf_agg_ops_by_name(func);
	if (o == NULL && is_top_n_spelling(func))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a top-N per window is not supported in aggregates of a pipeline"),
				 errdetail("\"%s\" ranks the rows of a window; an aggregate of the pipeline API is a value per row.",
						   func),
				 errhint("Write the top-N in create_aggregate's query, as ROW_NUMBER() OVER (PARTITION BY <window> ORDER BY <aggregate> DESC) <= N (docs/sql-aggregates.md, \"Top-N per window\"), or rank the rows of visible_aggregates() in a query.")));
	if (o == NULL)
		bad_aggregate(spec, psprintf("\"%s\" is not an aggregate function streamforge computes.", func));
	a->func = o->func;
	s = skip_spaces(s);
	if (o->arg == SF_AGGARG_COUNT && *s != '(')
	{
		/* count: the events */
	}
	else if (o->arg == SF_AGGARG_COUNT && *skip_spaces(s + 1) == '*')
	{
		/* count(*): the events */
		s = skip_spaces(skip_spaces(s + 1) + 1);
		if (*s != ')')
			bad_aggregate(spec, "A closing parenthesis is missing.");
		s = skip_spaces(s + 1);
	}
	else
	{
		/* func(measure), count(measure) (0.4.0): its non-NULL values */
		if (*s != '(')
			bad_aggregate(spec, "The measure in parentheses is missing.");
		s = skip_spaces(s + 1);
		if (scan_identifier(&s, arg) == 0)
			bad_aggregate(spec, "The measure in parentheses is missing.");
		a->measure = measure_index(md, arg);
		if (a->measure < 0)
			bad_aggregate(spec, psprintf("The pipeline has no measure \"%s\".", arg));
		s = skip_spaces(s);
		if (o->arg == SF_AGGARG_COMPARISON)
		{
			int			op = -1;
			char	   *end;
			long long	c;

			for (int i = lengthof(cmp_op_names) - 1; i >= 0; i--)
			{
				int			l = strlen(cmp_op_names[i]);

				if (strncmp(s, cmp_op_names[i], l) == 0 &&
					(op < 0 || l > (int) strlen(cmp_op_names[op])))
					op = i;
			}
			if (op < 0)
				bad_aggregate(spec, "count_if needs a comparison: =, <>, <, <=, > or >=.");
			a->op = (SfCmpOp) op;
			s = skip_spaces(s + strlen(cmp_op_names[op]));
			if (!((*s >= '0' && *s <= '9') || (*s == '-' && s[1] >= '0' && s[1] <= '9')))
				bad_aggregate(spec, "count_if compares with a bigint constant.");
			errno = 0;
			c = strtoll(s, &end, 10);
			if (errno == ERANGE)
				bad_aggregate(spec, "The constant is out of range for type bigint.");
			a->constant = (int64) c;
			s = skip_spaces(end);
		}
		else if (o->arg == SF_AGGARG_BY)
		{
			if (*s != ',')
				bad_aggregate(spec, psprintf("%s takes two measures: the value and the order.", o->name));
			s = skip_spaces(s + 1);
			if (scan_identifier(&s, arg) == 0)
				bad_aggregate(spec, "The order measure is missing.");
			a->measure2 = measure_index(md, arg);
			if (a->measure2 < 0)
				bad_aggregate(spec, psprintf("The pipeline has no measure \"%s\".", arg));
			s = skip_spaces(s);
		}
		else if (o->arg == SF_AGGARG_FRACTION)
		{
			if (*s != ',')
				bad_aggregate(spec, psprintf("%s takes a measure and a fraction from 0 to 1.", o->name));
			s = skip_spaces(s + 1);
			if (!parse_fraction(&s, &a->constant))
				bad_aggregate(spec, "The fraction must be a decimal from 0 to 1 with at most 6 digits after the point.");
			s = skip_spaces(s);
		}
		if (*s != ')')
			bad_aggregate(spec, "A closing parenthesis is missing.");
		s = skip_spaces(s + 1);
	}
	/* the name */
	if (*s == '\0')
	{
		if (a->measure < 0)
			strlcpy(a->name, "count", sizeof(a->name));
		else
		{
			char	   *n = default_name(o, a, md);

			if (strlen(n) > SF_NAME_MAX)
				bad_aggregate(spec, "Its default name is longer than 63 bytes; name it with AS.");
			strlcpy(a->name, n, sizeof(a->name));
		}
		return;
	}
	if (!((s[0] == 'A' || s[0] == 'a') && (s[1] == 'S' || s[1] == 's') &&
		  s[2] == ' '))
		bad_aggregate(spec, "Only AS name may follow the aggregate.");
	s = skip_spaces(s + 3);
	if (scan_identifier(&s, a->name) == 0 || *skip_spaces(s) != '\0')
		bad_aggregate(spec, "The name after AS must be a lower-case identifier of at most 63 bytes.");
}

/*
 * Compute where each aggregate's state lives (agg_ops.h, "State"): from the
 * functions' parts, own_words and nonnull_count only.
 */
static void
layout(SfMeasuresDef *md)
{
	uint8		parts[SF_MAX_MEASURES] = {0};
	bool		nn[SF_MAX_MEASURES] = {false};
	int			w = 0;

	for (int i = 0; i < md->naggs; i++)
	{
		const SfAggDef *a = &md->aggs[i];
		const SfAggOps *o = sf_agg_ops(a->func);

		if (a->measure < 0)
			continue;
		parts[a->measure] |= o->parts;
		/* a nullable measure's aggregates count its non-NULL values */
		if ((md->nullable & (1U << a->measure)) != 0 && o->nonnull_count)
			nn[a->measure] = true;
	}
	for (int m = 0; m < md->nmeasures; m++)
	{
		SfMeasureSlots *s = &md->slots[m];
		uint8		p = parts[m];

		s->nn = nn[m] ? w++ : -1;
		s->sum = (p & SF_APART_SUM) ? (w += 2) - 2 : -1;
		s->sumsq = (p & SF_APART_SUMSQ) ? (w += 3) - 3 : -1;
		s->min = (p & SF_APART_MIN) ? w++ : -1;
		s->max = (p & SF_APART_MAX) ? w++ : -1;
		s->first = (p & SF_APART_FIRST) ? (w += 3) - 3 : -1;
		s->last = (p & SF_APART_LAST) ? (w += 3) - 3 : -1;
	}
	for (int i = 0; i < md->naggs; i++)
	{
		int			own = sf_agg_ops(md->aggs[i].func)->own_words;

		md->aggs[i].slot = own > 0 ? (w += own) - own : -1;
	}
	md->nwords = w;
	/* the variable-size states' pointer words, after the fixed ones */
	md->nvar = 0;
	for (int i = 0; i < md->naggs; i++)
		md->aggs[i].varslot = sf_agg_ops(md->aggs[i].func)->var != NULL ?
			md->nvar++ : -1;

	/*
	 * Which measures and aggregates the per-event loops visit
	 * (aggregates.c): the others have nothing to add to
	 */
	StaticAssertStmt(SF_MAX_MEASURES <= 32 && SF_MAX_AGGREGATES <= 64,
					 "the masks of the layout are too narrow");
	md->word_measures = 0;
	for (int m = 0; m < md->nmeasures; m++)
	{
		const SfMeasureSlots *s = &md->slots[m];

		if (s->nn >= 0 || s->sum >= 0 || s->sumsq >= 0 || s->min >= 0 ||
			s->max >= 0 || s->first >= 0 || s->last >= 0)
			md->word_measures |= (uint32) 1 << m;
	}
	md->slot_aggs = 0;
	md->var_aggs = 0;
	for (int i = 0; i < md->naggs; i++)
	{
		if (md->aggs[i].slot >= 0)
			md->slot_aggs |= UINT64CONST(1) << i;
		if (md->aggs[i].varslot >= 0)
			md->var_aggs |= UINT64CONST(1) << i;
	}
}

/*
 * A measures definition from create_pipeline's measures and aggregates
 * (naggs < 0: the default aggregates), validated, in CurrentMemoryContext.
 */
SfMeasuresDef *
sf_measures_def_build(char **measures, int nmeasures, char **aggs, int naggs)
{
	SfMeasuresDef *md = palloc0(sizeof(SfMeasuresDef));

	if (nmeasures < 1 || nmeasures > SF_MAX_MEASURES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a pipeline has 1 to %d measures, not %d",
						SF_MAX_MEASURES, nmeasures)));
	md->nmeasures = nmeasures;
	md->names = palloc0(nmeasures * sizeof(md->names[0]));
	for (int i = 0; i < nmeasures; i++)
	{
		int			len = strlen(measures[i]);

		/* "name NULL": a nullable measure (docs/aggregates.md) */
		if (len > 5 && ends_with_null(measures[i], len))
		{
			len -= 5;
			while (len > 0 && measures[i][len - 1] == ' ')
				len--;
			if (i == 0)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("the first measure \"%s\" must not be nullable",
								clip(measures[i])),
						 errdetail("The first measure is the value of the count, sum, min and max columns and of late rows."),
						 errhint("Declare a NOT NULL measure first.")));
			md->nullable |= 1U << i;
		}
		if (!is_identifier(measures[i], len))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid measure name \"%s\"", clip(measures[i])),
					 errdetail("A measure is a lower-case identifier ([a-z_][a-z0-9_]*) of at most 63 bytes, followed by NULL if its values may be NULL.")));
		memcpy(md->names[i], measures[i], len);
		md->names[i][len] = '\0';
		if (measure_index(md, md->names[i]) != i)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("measure \"%s\" is declared more than once",
							md->names[i])));
	}
	md->width = nmeasures + (md->nullable != 0 ? 1 : 0);
	if (naggs < 0)
	{
		md->naggs = 1 + 3 * nmeasures;
		md->aggs = palloc0(md->naggs * sizeof(SfAggDef));
		parse_aggregate(md, "count", &md->aggs[0]);
		for (int m = 0; m < nmeasures; m++)
		{
			parse_aggregate(md, psprintf("sum(%s)", md->names[m]), &md->aggs[1 + 3 * m]);
			parse_aggregate(md, psprintf("min(%s)", md->names[m]), &md->aggs[2 + 3 * m]);
			parse_aggregate(md, psprintf("max(%s)", md->names[m]), &md->aggs[3 + 3 * m]);
		}
	}
	else
	{
		if (naggs < 1 || naggs > SF_MAX_AGGREGATES)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("a pipeline has 1 to %d aggregates, not %d",
							SF_MAX_AGGREGATES, naggs)));
		md->naggs = naggs;
		md->aggs = palloc0(naggs * sizeof(SfAggDef));
		for (int i = 0; i < naggs; i++)
			parse_aggregate(md, aggs[i], &md->aggs[i]);
	}
	for (int i = 0; i < md->naggs; i++)
		for (int j = 0; j < i; j++)
			if (strcmp(md->aggs[i].name, md->aggs[j].name) == 0)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("aggregate name \"%s\" is used more than once",
								md->aggs[i].name),
						 errhint("Name one of them with AS.")));
	md->slots = palloc0(nmeasures * sizeof(SfMeasureSlots));
	layout(md);
	return md;
}

/* The normalized spelling of an aggregate (docs/aggregates.md), palloc'd */
char *
sf_agg_spelling(const SfAggDef *a, const SfMeasuresDef *md)
{
	StringInfoData b;
	char	   *dflt;

	initStringInfo(&b);
	if (a->measure < 0)
	{
		appendStringInfoString(&b, "count");
		dflt = "count";
	}
	else
	{
		const SfAggOps *o = sf_agg_ops(a->func);

		appendStringInfo(&b, "%s(%s", o->name, md->names[a->measure]);
		if (o->arg == SF_AGGARG_COMPARISON)
			appendStringInfo(&b, " %s " INT64_FORMAT, cmp_op_names[a->op],
							 a->constant);
		else if (o->arg == SF_AGGARG_BY)
			appendStringInfo(&b, ", %s", md->names[a->measure2]);
		else if (o->arg == SF_AGGARG_FRACTION)
			appendStringInfo(&b, ", %s", fraction_spelling(a->constant));
		appendStringInfoChar(&b, ')');
		dflt = default_name(o, a, md);
	}
	if (strcmp(a->name, dflt) != 0)
		appendStringInfo(&b, " AS %s", a->name);
	return b.data;
}

/* A measure as declared: its name, and " NULL" if nullable; palloc'd */
char *
sf_measure_spelling(const SfMeasuresDef *md, int m)
{
	if (md->nullable & (1U << m))
		return psprintf("%s NULL", md->names[m]);
	return pstrdup(md->names[m]);
}

SfMeasuresDef *
sf_measures_def_copy(MemoryContext cxt, const SfMeasuresDef *md)
{
	SfMeasuresDef *c;

	if (md == NULL)
		return NULL;
	c = MemoryContextAlloc(cxt, sizeof(SfMeasuresDef));
	*c = *md;
	c->names = MemoryContextAlloc(cxt, md->nmeasures * sizeof(md->names[0]));
	memcpy(c->names, md->names, md->nmeasures * sizeof(md->names[0]));
	c->aggs = MemoryContextAlloc(cxt, md->naggs * sizeof(SfAggDef));
	memcpy(c->aggs, md->aggs, md->naggs * sizeof(SfAggDef));
	c->slots = MemoryContextAlloc(cxt, md->nmeasures * sizeof(SfMeasureSlots));
	memcpy(c->slots, md->slots, md->nmeasures * sizeof(SfMeasureSlots));
	return c;
}

bool
sf_measures_def_equal(const SfMeasuresDef *a, const SfMeasuresDef *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	if (a->nmeasures != b->nmeasures || a->naggs != b->naggs ||
		a->nullable != b->nullable)
		return false;
	for (int i = 0; i < a->nmeasures; i++)
		if (strcmp(a->names[i], b->names[i]) != 0)
			return false;
	for (int i = 0; i < a->naggs; i++)
	{
		const SfAggDef *x = &a->aggs[i];
		const SfAggDef *y = &b->aggs[i];

		if (strcmp(x->name, y->name) != 0 || x->func != y->func ||
			x->measure != y->measure || x->measure2 != y->measure2 ||
			(sf_agg_ops(x->func)->arg == SF_AGGARG_COMPARISON &&
			 (x->op != y->op || x->constant != y->constant)) ||
			(sf_agg_ops(x->func)->arg == SF_AGGARG_FRACTION &&
			 x->constant != y->constant))
			return false;
	}
	return true;
}

/*
 * A one-measure pipeline's implied aggregates, as a measures definition
 * (agg_ops.h): built once per backend in TopMemoryContext.
 */
const SfMeasuresDef *
sf_measures_def_classic(void)
{
	static SfMeasuresDef *classic = NULL;

	if (classic == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
		char	   *measures[] = {"value"};
		char	   *aggs[] = {"count", "sum(value) AS sum", "min(value) AS min",
		"max(value) AS max"};

		classic = sf_measures_def_build(measures, 1, aggs, lengthof(aggs));
		MemoryContextSwitchTo(old);
	}
	return classic;
}
