/*-------------------------------------------------------------------------
 *
 * agg_ops.h
 *	  The aggregate functions of measures pipelines (issue 41, item 1): one
 *	  operations table per function, registered in one array
 *	  (engine/agg_funcs.c).  Public: reached through engine/engine.h, which
 *	  includes it.
 *
 * The aggregate module is agg_ops.h, agg_funcs.c (the table, parsing and
 * spelling of definitions, the SQL-facing facts), aggregates.c (the
 * bucket state: layout, add, merge, copy, equal, value) and the files of
 * the variable-size states' operations (agg_distinct.c, agg_hll.c, agg_quantile.c).  Nothing else in
 * src/ names an SF_AGG_* function constant or an aggregate's name
 * (test/run.d/layers.sh, rule "kinds"): the other layers read the table's
 * facts (name, sql_type, result, sample, classic, pg_names).
 *
 * State.  A bucket's ext holds md->nwords int64 words, laid out exactly as
 * in 0.3.0 (checkpoints stay byte-identical): per measure, in measure
 * order, the shared parts the declared aggregates read (nn, sum, sumsq,
 * min, max, first, last, in that order, each at most once), then the own
 * words of each aggregate that has some (count_if: 1), in aggregate
 * order.  An aggregate says which shared parts it reads (parts), how many
 * own words it needs (own_words) and whether it counts the non-NULL values
 * of a nullable measure (nonnull_count); the layout reads only these.
 *
 * Variable-size state (0.4.0; count_distinct is the first).  An aggregate
 * with a `var` operations struct (SfAggVarOps: init, add, merge, copy,
 * equal, free, serialize, deserialize, value) has a pointer word in
 * ext after the nwords fixed words (md->nvar of them, SfAggDef.varslot),
 * NULL while its state is empty.  States live in the pipeline's var_cxt
 * ("streamforge aggregate states", a child of its context, made only
 * when nvar > 0, so that streamforge.cache_size counts them: persist/
 * cache.c measures a pipeline's context with its children, and a state
 * needs no accounting of its own); a copy's (sf_magg_copy: the before-images of changes)
 * in CurrentMemoryContext.  aggregates.c's sf_magg_add, _merge, _copy,
 * _equal, _restore and _release are the only code that reads the pointer
 * words: a session merge takes the union (merge), a deleted bucket
 * (finalized, merged away) frees its states (sf_magg_forget, from
 * window.c's sf_bucket_delete), a recycled one starts empty
 * (sf_magg_reset).  A NULL measure value is not added.  Checkpoints of
 * such a pipeline are format version 3 (codec/codec_measures.c): each
 * row's "state_var" holds every state's serialize words, which
 * deserialize checks (a bad one: SF003); every other pipeline's
 * checkpoints, snapshots and journals keep their bytes.  A new
 * variable-size aggregate is its row in agg_funcs.c with .var, its value in
 * the enum, and its SfAggVarOps in a file of its own.
 *
 * Cost: add and merge stay inline loops over the measure parts in
 * aggregates.c, with a switch on the function inside the module for own
 * words and values; nothing per event goes through a pointer for a
 * fixed-word aggregate (a pipeline without variable-size states tests
 * md->nvar once per event added and once per bucket deleted).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/agg_ops.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SF_AGG_OPS_H
#define SF_AGG_OPS_H

#define SF_MAX_MEASURES		32
#define SF_MAX_AGGREGATES	64
/* the int64 words of one delivery's measures: the measures, a NULL mask */
#define SF_MAX_MEASURE_WORDS (SF_MAX_MEASURES + 1)

/*
 * The functions.  The value is never persisted (the checkpoint and the
 * catalog spell an aggregate by name); sf_agg_funcs[f].func == f.
 */
typedef enum SfAggFunc
{
	SF_AGG_COUNT = 0,
	SF_AGG_SUM,
	SF_AGG_MIN,
	SF_AGG_MAX,
	SF_AGG_AVG,
	SF_AGG_VAR_POP,
	SF_AGG_VAR_SAMP,
	SF_AGG_STDDEV_POP,
	SF_AGG_STDDEV_SAMP,
	SF_AGG_FIRST,
	SF_AGG_LAST,
	SF_AGG_COUNT_IF,
	SF_AGG_COUNT_DISTINCT,
	SF_AGG_APPROX_COUNT_DISTINCT,
	SF_AGG_MAX_BY,
	SF_AGG_MIN_BY,
	SF_AGG_APPROX_PERCENTILE,
	SF_AGG_PERCENTILE_CONT,
	SF_AGG_PERCENTILE_DISC
} SfAggFunc;

#define SF_AGG_NFUNCS 19

typedef enum SfCmpOp
{
	SF_CMP_EQ = 0,
	SF_CMP_NE,
	SF_CMP_LT,
	SF_CMP_LE,
	SF_CMP_GT,
	SF_CMP_GE
} SfCmpOp;

/* The shared per-measure parts of ext (SfMeasureSlots), as bits */
#define SF_APART_SUM	0x01	/* 2 words: int128 */
#define SF_APART_SUMSQ	0x02	/* 3 words: 192-bit unsigned */
#define SF_APART_MIN	0x04
#define SF_APART_MAX	0x08
#define SF_APART_FIRST	0x10	/* 3 words: event_time, arrival, value */
#define SF_APART_LAST	0x20	/* 3 words */

/* What an aggregate takes, as parse and spelling read it */
typedef enum SfAggArgForm
{
	SF_AGGARG_MEASURE = 0,		/* func(m) */
	SF_AGGARG_COUNT,			/* count, count(*), count(m) */
	SF_AGGARG_COMPARISON,		/* count_if(m op constant) */
	SF_AGGARG_BY,				/* max_by(m, order_measure) (0.4.0) */
	SF_AGGARG_FRACTION			/* approx_percentile(m, 0.95) (0.4.0) */
} SfAggArgForm;

/*
 * SF_AGGARG_FRACTION: the fraction is a decimal of 0 to 1 with at most 6
 * digits after the point, kept exactly as millionths in SfAggDef.constant
 * (its spelling is canonical; k / 1e6 in double is the double nearest to
 * the decimal, as PostgreSQL's float8in gives)
 */
#define SF_FRACTION_UNIT	1000000

/*
 * The shape of a value, which is all persist/measures.c's sf_agg_datum
 * (numeric arithmetic, fmgr) needs: it switches on this, not on the
 * function.
 */
typedef enum SfAggResult
{
	SF_AGGRES_INT64 = 0,		/* v->i64, bigint */
	SF_AGGRES_SUM,				/* v->sum, numeric */
	SF_AGGRES_AVG,				/* v->sum / v->count, numeric */
	SF_AGGRES_VARIANCE,			/* v->count, sum, sumsq; sample or not */
	SF_AGGRES_STDDEV,			/* the same, square root at its scale */
	SF_AGGRES_FLOAT8			/* v->f8, double precision (0.4.0) */
} SfAggResult;

/*
 * A variable-size state's operations (agg_ops.h, "Variable-size state").
 * A state is an opaque pointer; NULL is the empty state (no value added),
 * which every operation but add accepts, so that a bucket allocates one
 * only when its first value comes.  States live in the memory context they
 * were made in (init, copy): a bucket's in the pipeline's var_cxt, a
 * copy's in the caller's.  None of these may fail but for out of memory,
 * deserialize apart.
 */
struct SfAggValue;
struct SfAggDef;

typedef struct SfAggVarOps
{
	/* a new empty state in cxt */
	void	   *(*init) (MemoryContext cxt);
	/* add one non-NULL value */
	void		(*add) (void *state, int64 v);
	/* add from's values to into (from may be NULL) */
	void		(*merge) (void *into, const void *from);
	/* a copy of state in cxt (state not NULL) */
	void	   *(*copy) (MemoryContext cxt, const void *state);
	/* the same values (either may be NULL: empty) */
	bool		(*equal) (const void *a, const void *b);
	/* free state and what it holds (state not NULL) */
	void		(*free) (void *state);

	/*
	 * The checkpoint's words of state (NULL: empty), canonical: the same
	 * values always give the same words.  palloc'd in CurrentMemoryContext;
	 * returns their number, which is at most the number of events of the
	 * bucket (codec_measures.c refuses a state of more words before
	 * deserialize sees it).
	 */
	int64		(*serialize) (const void *state, int64 **words);

	/*
	 * Add the values of n checkpoint words to the empty state; false, with
	 * *detail set, if they are not the canonical words of a state.
	 */
	bool		(*deserialize) (void *state, const int64 *words, int64 n,
								const char **detail);
	/*
	 * the value (v->i64 for SF_AGGRES_INT64, v->f8 for SF_AGGRES_FLOAT8) of
	 * the aggregate a; state may be NULL
	 */
	void		(*value) (const void *state, const struct SfAggDef *a,
						  struct SfAggValue *v);
} SfAggVarOps;

typedef struct SfAggOps
{
	SfAggFunc	func;
	const char *name;			/* "var_samp": aggregates =>, the checkpoint's
								 * spelling, aggregate_columns, create_aggregate's
								 * spec "func" */
	SfAggArgForm arg;
	const char *sql_type;		/* "bigint" or "numeric" */
	SfAggResult result;
	bool		sample;			/* NULL below 2 values (var_samp, stddev_samp) */
	uint8		parts;			/* SF_APART_*: shared parts it reads */
	uint8		own_words;		/* words of its own (count_if: 1) */
	bool		nonnull_count;	/* on a nullable measure, reads nn (all but
								 * count_if, count_distinct) */
	const SfAggVarOps *var;		/* a variable-size state: a pointer word after
								 * the fixed words; NULL: none */

	/* create_aggregate (api/aggregate_sql.c, 66_aggregates_*.sql) */
	bool		classic;		/* computable from a one-measure pipeline's
								 * count/sum/min/max: count sum min max avg */
	const char *const *pg_names;	/* pg_catalog aggregates mapped onto it,
									 * NULL-terminated; NULL: none */
	bool		pg_distinct;	/* the mapping is agg(DISTINCT x) */
	bool		from_filter;	/* count(*) FILTER (WHERE x op c) maps onto it */
	bool		sf_sql;			/* the SQL aggregate streamforge.<name> of the
								 * extension maps onto it (0.4.0: max_by,
								 * min_by, approx_percentile,
								 * approx_count_distinct) */
} SfAggOps;

/* engine/agg_distinct.c: count_distinct's state, a set of int64 */
extern PGDLLIMPORT const SfAggVarOps sf_agg_distinct_var;
/* engine/agg_hll.c: approx_count_distinct's state, a HyperLogLog sketch */
extern PGDLLIMPORT const SfAggVarOps sf_agg_hll_var;
/* engine/agg_quantile.c: percentile_cont's and _disc's, the values kept */
extern PGDLLIMPORT const SfAggVarOps sf_agg_values_cont_var;
extern PGDLLIMPORT const SfAggVarOps sf_agg_values_disc_var;
/* engine/agg_quantile.c: approx_percentile's state, a DDSketch */
extern PGDLLIMPORT const SfAggVarOps sf_agg_ddsketch_var;

/* engine/agg_funcs.c: the registry */
extern PGDLLIMPORT const SfAggOps sf_agg_funcs[SF_AGG_NFUNCS];

static inline const SfAggOps *
sf_agg_ops(SfAggFunc f)
{
	Assert((int) f >= 0 && (int) f < SF_AGG_NFUNCS);
	return &sf_agg_funcs[f];
}

/* By name ("var_samp"), by pg_catalog aggregate ("variance"): NULL if none */
extern const SfAggOps *sf_agg_ops_by_name(const char *name);
extern const SfAggOps *sf_agg_ops_by_pg_name(const char *pg_name,
											 bool distinct);
/* By the name of an SQL aggregate of schema streamforge (sf_sql): NULL if none */
extern const SfAggOps *sf_agg_ops_by_sf_name(const char *name);
/* The function count(*) FILTER (WHERE x op c) maps onto */
extern const SfAggOps *sf_agg_ops_from_filter(void);

/* One declared aggregate */
typedef struct SfAggDef
{
	char		name[SF_NAME_MAX + 1];
	SfAggFunc	func;
	int			measure;		/* -1 for count (count(*)) */
	int			measure2;		/* SF_AGGARG_BY: the order measure; else -1 */
	SfCmpOp		op;				/* SF_AGGARG_COMPARISON */
	int64		constant;		/* SF_AGGARG_COMPARISON; SF_AGGARG_FRACTION:
								 * the fraction in millionths */
	int			slot;			/* own words: the first in ext; else -1 */
	int			varslot;		/* a variable-size state: its pointer word is
								 * ext[nwords + varslot]; else -1 */
} SfAggDef;

/* Per measure: the first word of each state part in ext, -1 if none */
typedef struct SfMeasureSlots
{
	int			nn;				/* nullable measures: its non-NULL values */
	int			sum;			/* 2 words: int128 */
	int			sumsq;			/* 3 words: 192-bit unsigned */
	int			min;
	int			max;
	int			first;			/* 3 words: event_time, arrival, value */
	int			last;			/* 3 words */
} SfMeasureSlots;

typedef struct SfMeasuresDef
{
	int			nmeasures;
	char		(*names)[SF_NAME_MAX + 1];
	int			naggs;
	SfAggDef   *aggs;
	SfMeasureSlots *slots;		/* [nmeasures] */
	int			nwords;			/* fixed words of ext (the checkpoint's
								 * "state") */
	int			nvar;			/* variable-size states: pointer words of ext
								 * after the nwords fixed ones */
	uint32		nullable;		/* bit m: measure m is declared NULL */
	int			width;			/* words of a delivery's measures: nmeasures,
								 * and the NULL mask if nullable != 0 */
	/* derived by the layout (agg_funcs.c), for the per-event loops */
	uint32		word_measures;	/* bit m: slots[m] has a part */
	uint64		slot_aggs;		/* bit i: aggs[i].slot >= 0 */
	uint64		var_aggs;		/* bit i: aggs[i].varslot >= 0 */
} SfMeasuresDef;

/* The value of one aggregate of a row, before conversion to SQL */
typedef struct SfAggValue
{
	bool		isnull;
	const SfAggOps *ops;		/* the function: persist reads result, sample */
	int64		count;			/* the values it saw */
	int64		i64;			/* SF_AGGRES_INT64 */
	int128		sum;			/* sum, avg, variances */
	uint64		sumsq[3];		/* variances, little-endian words */
	double		f8;				/* SF_AGGRES_FLOAT8 */
} SfAggValue;

/*
 * A one-measure pipeline's implied aggregates: count, sum(value) AS sum,
 * min(value) AS min, max(value) AS max (the columns of live(); allocated
 * once per backend)
 */
extern const SfMeasuresDef *sf_measures_def_classic(void);

#endif							/* SF_AGG_OPS_H */
