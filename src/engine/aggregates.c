/*-------------------------------------------------------------------------
 *
 * aggregates.c
 *	  Measures pipelines: named bigint measures per event and the declared
 *	  aggregates over them (docs/aggregates.md).
 *
 * A one-measure pipeline (def.measures NULL) never reaches this file: its
 * buckets' agg.ext is NULL and its identities have no measures.  A
 * measures pipeline keeps, per identity, its arrival number and its
 * measures after the event_id (sf_id_measures), and per bucket, next to
 * the count/sum/min/max of the first measure that every pipeline keeps,
 * ext: nwords int64 words holding what the declared aggregates need, each
 * part at most once per measure (SfMeasureSlots): for a nullable measure
 * (declared "name NULL", 0.4.0) the count of its non-NULL values, a
 * 128-bit sum, a 192-bit sum of squares, min, max, first and last
 * (event_time, arrival, value), and one counter per count_if.  A NULL
 * value changes none of its measure's parts, which stay zero while the
 * count is zero (so that the state of a bucket is a function of its
 * events, as sf_magg_check needs); an identity's NULL mask follows its
 * measures (sf_id_measures).  Events are only ever added to a bucket
 * (a correction adds an event; a session merge adds a whole bucket), so
 * every part is exact and needs no retraction.
 *
 * This file calls no other file of the engine (the bucket code calls it);
 * measures_ops.c holds the operations built on the rest of the engine.
 *
 * Memory: a definition lives where its caller allocates it; a bucket's ext
 * in the pipeline's context, recycled with the bucket; the copies of
 * sf_magg_copy (the before-images of changes) in CurrentMemoryContext.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/aggregates.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"

#include "engine/engine.h"
#include "engine/engine_int.h"

static const char *const agg_func_names[] = {
	[SF_AGG_COUNT] = "count",
	[SF_AGG_SUM] = "sum",
	[SF_AGG_MIN] = "min",
	[SF_AGG_MAX] = "max",
	[SF_AGG_AVG] = "avg",
	[SF_AGG_VAR_POP] = "var_pop",
	[SF_AGG_VAR_SAMP] = "var_samp",
	[SF_AGG_STDDEV_POP] = "stddev_pop",
	[SF_AGG_STDDEV_SAMP] = "stddev_samp",
	[SF_AGG_FIRST] = "first",
	[SF_AGG_LAST] = "last",
	[SF_AGG_COUNT_IF] = "count_if",
};

static const char *const cmp_op_names[] = {
	[SF_CMP_EQ] = "=",
	[SF_CMP_NE] = "<>",
	[SF_CMP_LT] = "<",
	[SF_CMP_LE] = "<=",
	[SF_CMP_GT] = ">",
	[SF_CMP_GE] = ">=",
};

const char *
sf_agg_func_name(SfAggFunc f)
{
	return agg_func_names[f];
}

/* The SQL type of an aggregate's column */
const char *
sf_agg_sql_type(SfAggFunc f)
{
	switch (f)
	{
		case SF_AGG_COUNT:
		case SF_AGG_MIN:
		case SF_AGG_MAX:
		case SF_AGG_FIRST:
		case SF_AGG_LAST:
		case SF_AGG_COUNT_IF:
			return "bigint";
		default:
			return "numeric";
	}
}

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

static void
parse_aggregate(SfMeasuresDef *md, const char *spec, SfAggDef *a)
{
	const char *s = skip_spaces(spec);
	char		func[SF_NAME_MAX + 1];
	char		arg[SF_NAME_MAX + 1];
	int			f = -1;

	memset(a, 0, sizeof(*a));
	a->measure = -1;
	if (scan_identifier(&s, func) == 0)
		bad_aggregate(spec, "It does not start with the name of an aggregate function.");
	for (int i = 0; i < lengthof(agg_func_names); i++)
		if (strcmp(func, agg_func_names[i]) == 0)
			f = i;
	if (f < 0)
		bad_aggregate(spec, psprintf("\"%s\" is not an aggregate function streamforge computes.", func));
	a->func = (SfAggFunc) f;
	s = skip_spaces(s);
	if (a->func == SF_AGG_COUNT && *s != '(')
	{
		/* count: the events */
	}
	else if (a->func == SF_AGG_COUNT && *skip_spaces(s + 1) == '*')
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
		if (a->func == SF_AGG_COUNT_IF)
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
			char	   *n = psprintf("%s_%s", agg_func_names[a->func],
									 md->names[a->measure]);

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

/* Compute where each aggregate's state lives */
static void
layout(SfMeasuresDef *md)
{
	bool		need[SF_MAX_MEASURES][7] = {{false}};
	int			w = 0;

	for (int i = 0; i < md->naggs; i++)
	{
		const SfAggDef *a = &md->aggs[i];

		/* a nullable measure's aggregates count its non-NULL values */
		if (a->measure >= 0 && (md->nullable & (1U << a->measure)) != 0 &&
			a->func != SF_AGG_COUNT_IF)
			need[a->measure][6] = true;
		switch (a->func)
		{
			case SF_AGG_SUM:
			case SF_AGG_AVG:
				need[a->measure][0] = true;
				break;
			case SF_AGG_VAR_POP:
			case SF_AGG_VAR_SAMP:
			case SF_AGG_STDDEV_POP:
			case SF_AGG_STDDEV_SAMP:
				need[a->measure][0] = true;
				need[a->measure][1] = true;
				break;
			case SF_AGG_MIN:
				need[a->measure][2] = true;
				break;
			case SF_AGG_MAX:
				need[a->measure][3] = true;
				break;
			case SF_AGG_FIRST:
				need[a->measure][4] = true;
				break;
			case SF_AGG_LAST:
				need[a->measure][5] = true;
				break;
			default:
				break;
		}
	}
	for (int m = 0; m < md->nmeasures; m++)
	{
		SfMeasureSlots *s = &md->slots[m];

		s->nn = need[m][6] ? w++ : -1;
		s->sum = need[m][0] ? (w += 2) - 2 : -1;
		s->sumsq = need[m][1] ? (w += 3) - 3 : -1;
		s->min = need[m][2] ? w++ : -1;
		s->max = need[m][3] ? w++ : -1;
		s->first = need[m][4] ? (w += 3) - 3 : -1;
		s->last = need[m][5] ? (w += 3) - 3 : -1;
	}
	for (int i = 0; i < md->naggs; i++)
		md->aggs[i].slot = md->aggs[i].func == SF_AGG_COUNT_IF ? w++ : -1;
	md->nwords = w;
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
		appendStringInfo(&b, "%s(%s", agg_func_names[a->func],
						 md->names[a->measure]);
		if (a->func == SF_AGG_COUNT_IF)
			appendStringInfo(&b, " %s " INT64_FORMAT, cmp_op_names[a->op],
							 a->constant);
		appendStringInfoChar(&b, ')');
		dflt = psprintf("%s_%s", agg_func_names[a->func],
						md->names[a->measure]);
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
			x->measure != y->measure ||
			(x->func == SF_AGG_COUNT_IF &&
			 (x->op != y->op || x->constant != y->constant)))
			return false;
	}
	return true;
}

/* ----------------------------------------------------------------
 * Identities
 * ----------------------------------------------------------------
 */

/*
 * The arrival number and measures of an identity of a measures pipeline:
 * [0] is the arrival, [1 .. nmeasures] the measures, and with nullable
 * measures [nmeasures + 1] the NULL mask (bit m: measure m is NULL, its
 * word 0): 1 + width words.
 */
int64 *
sf_id_measures(const SfPipeline *p, const SfIdentity *id)
{
	Assert(p->def.measures != NULL);
	return (int64 *) ((char *) id +
					  MAXALIGN(offsetof(SfIdentity, event_id) + id->event_id_len));
}

void
sf_measures_arity_error(const SfPipeline *p, int n)
{
	if (p->def.measures == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("pipeline \"%s\" has one unnamed measure", p->def.name),
				 errhint("Deliver its events with streamforge.ingest, ingest_batch or append (value bigint).")));
	if (n < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("pipeline \"%s\" has %d measures", p->def.name,
						p->def.measures->nmeasures),
				 errhint("Deliver its events with streamforge.ingest_measures or ingest_measures_batch (measures bigint[]).")));
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("pipeline \"%s\" has %d measures, the delivery carries %d",
					p->def.name, p->def.measures->nmeasures, n),
			 errhint("measures must have exactly one non-null element per measure, in declaration order.")));
}

/*
 * The measures sf_engine_ingest_measures handed to the ingest running now
 * (taken: a later delivery without them is refused).  Out of line and
 * cold, so that a one-measure pipeline's ingest keeps its code.
 */
const int64 *
sf_take_measures(SfPipeline *p)
{
	const int64 *mv = p->cur_measures;

	p->cur_measures = NULL;
	if (mv == NULL)
		sf_measures_arity_error(p, -1);
	return mv;
}

/* Whether a known identity carries these measures */
bool
sf_measures_match(const SfPipeline *p, const SfIdentity *id,
				  const int64 *measures)
{
	return memcmp(sf_id_measures(p, id) + 1, measures,
				  p->def.measures->width * sizeof(int64)) == 0;
}

/* Store a new identity's measures and give it the next arrival number */
void
sf_id_set_measures(SfPipeline *p, SfIdentity *id, const int64 *measures)
{
	int64	   *m = sf_id_measures(p, id);

	m[0] = ++p->arrivals;
	memcpy(m + 1, measures, p->def.measures->width * sizeof(int64));
}

/*
 * Whether a delivery's measures words are canonical: with nullable
 * measures, a NULL mask of nullable measures only, each NULL measure's
 * word 0 (a journal entry's or a checkpoint's are checked with it).
 */
bool
sf_measures_valid(const SfMeasuresDef *md, const int64 *mv)
{
	uint64		mask;

	if (md->nullable == 0)
		return true;
	mask = (uint64) mv[md->nmeasures];
	if ((mask & ~(uint64) md->nullable) != 0)
		return false;
	for (int m = 0; m < md->nmeasures; m++)
		if ((mask & ((uint64) 1 << m)) != 0 && mv[m] != 0)
			return false;
	return true;
}

/* ----------------------------------------------------------------
 * Bucket state
 * ----------------------------------------------------------------
 */
static inline int128
get128(const int64 *w)
{
	int128		v;

	memcpy(&v, w, sizeof(v));
	return v;
}

static inline void
put128(int64 *w, int128 v)
{
	memcpy(w, &v, sizeof(v));
}

/* 192-bit unsigned add of a 128-bit unsigned (a sum of squares) */
static inline void
add192(int64 *w, uint64 lo, uint64 hi)
{
	uint64		w0 = (uint64) w[0];
	uint64		w1 = (uint64) w[1];
	uint64		c0,
				c1;

	w0 += lo;
	c0 = w0 < lo;
	w1 += hi;
	c1 = w1 < hi;
	w1 += c0;
	c1 += (w1 < c0);
	w[0] = (int64) w0;
	w[1] = (int64) w1;
	w[2] = (int64) ((uint64) w[2] + c1);
}

static inline bool
cmp_holds(SfCmpOp op, int64 v, int64 c)
{
	switch (op)
	{
		case SF_CMP_EQ:
			return v == c;
		case SF_CMP_NE:
			return v != c;
		case SF_CMP_LT:
			return v < c;
		case SF_CMP_LE:
			return v <= c;
		case SF_CMP_GT:
			return v > c;
		case SF_CMP_GE:
			return v >= c;
	}
	return false;
}

/* (t, a) before (t2, a2): by event time, then arrival */
static inline bool
earlier(int64 t, int64 a, int64 t2, int64 a2)
{
	return t < t2 || (t == t2 && a < a2);
}

/*
 * Add one event (event_time t, arrival, measures vals: width words) to ext
 * words that held nprev events before (a nullable measure: x[nn] values).
 */
static void
words_add(const SfMeasuresDef *md, int64 *x, int64 nprev, int64 t,
		  int64 arrival, const int64 *vals)
{
	uint32		nulls = md->nullable ? (uint32) vals[md->nmeasures] : 0;

	for (int m = 0; m < md->nmeasures; m++)
	{
		const SfMeasureSlots *s = &md->slots[m];
		int64		v = vals[m];
		int64		prev = nprev;

		/* a NULL value changes none of its measure's parts (SQL's rule) */
		if (unlikely(nulls & (1U << m)))
			continue;
		if (s->nn >= 0)
			prev = x[s->nn]++;

		if (s->sum >= 0)
			put128(x + s->sum, get128(x + s->sum) + v);
		if (s->sumsq >= 0)
		{
			uint128		a = v < 0 ? (uint128) (-(int128) v) : (uint128) v;
			uint128		sq = a * a;

			add192(x + s->sumsq, (uint64) sq, (uint64) (sq >> 64));
		}
		if (s->min >= 0 && (prev == 0 || v < x[s->min]))
			x[s->min] = v;
		if (s->max >= 0 && (prev == 0 || v > x[s->max]))
			x[s->max] = v;
		if (s->first >= 0 &&
			(prev == 0 || earlier(t, arrival, x[s->first], x[s->first + 1])))
		{
			x[s->first] = t;
			x[s->first + 1] = arrival;
			x[s->first + 2] = v;
		}
		if (s->last >= 0 &&
			(prev == 0 || earlier(x[s->last], x[s->last + 1], t, arrival)))
		{
			x[s->last] = t;
			x[s->last + 1] = arrival;
			x[s->last + 2] = v;
		}
	}
	for (int i = 0; i < md->naggs; i++)
	{
		const SfAggDef *a = &md->aggs[i];

		if (a->func == SF_AGG_COUNT_IF &&
			(nulls & (1U << a->measure)) == 0 &&
			cmp_holds(a->op, vals[a->measure], a->constant))
			x[a->slot]++;
	}
}

/*
 * Add identity id to agg, whose count already counts it (sf_agg_add ran
 * first).
 */
void
sf_magg_add(SfPipeline *p, SfAgg *agg, const SfIdentity *id)
{
	const int64 *m = sf_id_measures(p, id);

	words_add(p->def.measures, agg->ext, agg->count - 1, id->event_time,
			  m[0], m + 1);
}

/*
 * Merge from's ext into into's (a session merge).  Runs before
 * sf_agg_merge, while both counts are those before the merge.
 */
void
sf_magg_merge(const SfMeasuresDef *md, SfAgg *into, const SfAgg *from)
{
	int64	   *x = into->ext;
	const int64 *y = from->ext;

	if (from->count == 0)
		return;
	if (into->count == 0)
	{
		memcpy(x, y, md->nwords * sizeof(int64));
		return;
	}
	for (int m = 0; m < md->nmeasures; m++)
	{
		const SfMeasureSlots *s = &md->slots[m];

		if (s->nn >= 0)
		{
			/* a nullable measure: its parts are zero while it has no value */
			if (y[s->nn] == 0)
				continue;
			if (x[s->nn] == 0)
			{
				x[s->nn] = y[s->nn];
				if (s->sum >= 0)
					memcpy(x + s->sum, y + s->sum, 2 * sizeof(int64));
				if (s->sumsq >= 0)
					memcpy(x + s->sumsq, y + s->sumsq, 3 * sizeof(int64));
				if (s->min >= 0)
					x[s->min] = y[s->min];
				if (s->max >= 0)
					x[s->max] = y[s->max];
				if (s->first >= 0)
					memcpy(x + s->first, y + s->first, 3 * sizeof(int64));
				if (s->last >= 0)
					memcpy(x + s->last, y + s->last, 3 * sizeof(int64));
				continue;
			}
			x[s->nn] += y[s->nn];
		}
		if (s->sum >= 0)
			put128(x + s->sum, get128(x + s->sum) + get128(y + s->sum));
		if (s->sumsq >= 0)
		{
			add192(x + s->sumsq, (uint64) y[s->sumsq], (uint64) y[s->sumsq + 1]);
			x[s->sumsq + 2] = (int64) ((uint64) x[s->sumsq + 2] +
									   (uint64) y[s->sumsq + 2]);
		}
		if (s->min >= 0 && y[s->min] < x[s->min])
			x[s->min] = y[s->min];
		if (s->max >= 0 && y[s->max] > x[s->max])
			x[s->max] = y[s->max];
		if (s->first >= 0 &&
			earlier(y[s->first], y[s->first + 1], x[s->first], x[s->first + 1]))
			memcpy(x + s->first, y + s->first, 3 * sizeof(int64));
		if (s->last >= 0 &&
			earlier(x[s->last], x[s->last + 1], y[s->last], y[s->last + 1]))
			memcpy(x + s->last, y + s->last, 3 * sizeof(int64));
	}
	for (int i = 0; i < md->naggs; i++)
		if (md->aggs[i].slot >= 0)
			x[md->aggs[i].slot] += y[md->aggs[i].slot];
}

/* A copy of ext words, in CurrentMemoryContext */
int64 *
sf_magg_copy(const SfMeasuresDef *md, const int64 *ext)
{
	int64	   *c = palloc(Max(md->nwords, 1) * sizeof(int64));

	memcpy(c, ext, md->nwords * sizeof(int64));
	return c;
}

bool
sf_magg_equal(const SfMeasuresDef *md, const SfAgg *a, const SfAgg *b)
{
	if (a->ext == NULL || b->ext == NULL)
		return a->ext == b->ext;
	return memcmp(a->ext, b->ext, md->nwords * sizeof(int64)) == 0;
}

/* ext words for a new bucket of p, zeroed */
int64 *
sf_magg_alloc(SfPipeline *p)
{
	return MemoryContextAllocZero(p->cxt,
								  Max(p->def.measures->nwords, 1) * sizeof(int64));
}

/* The value of aggregate i of a row's agg */
void
sf_agg_value(const SfMeasuresDef *md, const SfAgg *agg, int i, SfAggValue *v)
{
	const SfAggDef *a = &md->aggs[i];
	const int64 *x = agg->ext;
	const SfMeasureSlots *s = a->measure >= 0 ? &md->slots[a->measure] : NULL;

	memset(v, 0, sizeof(*v));
	v->func = a->func;
	/* the values the aggregate sees: a nullable measure's non-NULL ones */
	v->count = s != NULL && s->nn >= 0 ? x[s->nn] : agg->count;
	v->isnull = v->count == 0 && a->func != SF_AGG_COUNT &&
		a->func != SF_AGG_COUNT_IF;
	switch (a->func)
	{
		case SF_AGG_COUNT:
			v->i64 = v->count;
			break;
		case SF_AGG_COUNT_IF:
			v->i64 = x[a->slot];
			break;
		case SF_AGG_MIN:
			v->i64 = x[s->min];
			break;
		case SF_AGG_MAX:
			v->i64 = x[s->max];
			break;
		case SF_AGG_FIRST:
			v->i64 = x[s->first + 2];
			break;
		case SF_AGG_LAST:
			v->i64 = x[s->last + 2];
			break;
		case SF_AGG_SUM:
		case SF_AGG_AVG:
			v->sum = get128(x + s->sum);
			break;
		case SF_AGG_VAR_POP:
		case SF_AGG_VAR_SAMP:
		case SF_AGG_STDDEV_POP:
		case SF_AGG_STDDEV_SAMP:
			v->sum = get128(x + s->sum);
			for (int k = 0; k < 3; k++)
				v->sumsq[k] = (uint64) x[s->sumsq + k];
			if ((a->func == SF_AGG_VAR_SAMP || a->func == SF_AGG_STDDEV_SAMP) &&
				v->count < 2)
				v->isnull = true;
			break;
	}
}
