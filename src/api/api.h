/*-------------------------------------------------------------------------
 *
 * api.h
 *	  Declarations shared by the files of src/api/, the SQL-callable
 *	  functions of streamforge (docs/semantics.md, The interface) and _PG_init.
 *
 * api/ is the top layer and the only one with PG_FUNCTION_INFO_V1; it runs
 * no SPI (persist/ does; test/run.d/layers.sh checks both).  Its files
 * check and convert arguments, call the engine, the codec and
 * persistence through their public headers, and return rows.  C names of
 * SQL functions equal the SQL names with an sf_ prefix (sf_grant and
 * sf_revoke also serve grant_privilege and revoke_privilege).  The
 * functions that deliver events are forms of one write core (write.c,
 * write_array.c, ingest_json.c), those that read a pipeline's rows forms
 * of one read core (inspect.c read_rows); their rows come from rows.c.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/api.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SF_API_H
#define SF_API_H

#include "access/htup.h"
#include "access/tupdesc.h"
#include "fmgr.h"
#include "datatype/timestamp.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/relcache.h"

#include "codec/codec.h"
#include "engine/engine.h"
#include "persist/persist.h"

/* module.c */
extern void _PG_init(void);

/*
 * args.c: arguments and results shared by the SQL functions.
 *
 * The argument checks run on every per-row call (ingest, ingest_count,
 * append), so the test is inline and only the error is a call:
 * sf_arg_not_null costs what the inline PG_ARGISNULL test it replaces did.
 * Every "X must not be null" of an argument is this one error (22004).
 */
extern void sf_arg_null_error(const char *what) pg_attribute_noreturn();

static inline void
sf_arg_not_null(FunctionCallInfo fcinfo, int argno, const char *what)
{
	if (unlikely(PG_ARGISNULL(argno)))
		sf_arg_null_error(what);
}

/* A text argument that must not be NULL, as a palloc'd C string */
static inline char *
sf_arg_text(FunctionCallInfo fcinfo, int argno, const char *what)
{
	sf_arg_not_null(fcinfo, argno, what);
	return text_to_cstring(PG_GETARG_TEXT_PP(argno));
}

/*
 * A text datum's bytes (detoasted, not copied, not NUL-terminated).  Inline
 * with the detoasting only for a value that needs it: a per-row call has
 * two such arguments.
 */
static inline void
sf_text_bytes(Datum d, const char **data, int *len)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(d);

	if (unlikely(VARATT_IS_COMPRESSED(v) || VARATT_IS_EXTERNAL(v)))
		v = pg_detoast_datum_packed(v);
	*data = VARDATA_ANY(v);
	*len = VARSIZE_ANY_EXHDR(v);
}

/*
 * The text arguments of one call site of a per-row function (ingest,
 * ingest_count, append), as C strings kept in flinfo->fn_extra for the
 * site's life (the query, or PL/pgSQL's expression): a call whose pipeline
 * or partition equals one seen before at the site reuses that copy, a
 * compare of the bytes instead of a palloc and a copy (issue 23: two
 * text_to_cstring were 257 instructions per call).  Only the strings are
 * kept, nothing that could go stale: the pipeline is opened by name on
 * every call as before.  A partition beyond the first SF_ROW_PARTITIONS
 * seen is copied per call as before, so the kept memory stays bounded.
 */
#define SF_ROW_PARTITIONS 8

typedef struct SfKeptText
{
	int			len;			/* bytes, without the terminating NUL */
	char	   *str;			/* NUL-terminated, in fn_mcxt */
} SfKeptText;

typedef struct SfRowArgs
{
	SfKeptText	pipeline;		/* str NULL: none yet */
	int			npartitions;
	SfKeptText	partitions[SF_ROW_PARTITIONS];
} SfRowArgs;

extern char *sf_kept_text_add(FunctionCallInfo fcinfo, SfKeptText *kept,
							  int *nkept, int max, const char *data, int len);

/* fcinfo's SfRowArgs, or NULL for a call without an FmgrInfo */
static inline SfRowArgs *
sf_row_args(FunctionCallInfo fcinfo)
{
	FmgrInfo   *fl = fcinfo->flinfo;

	if (unlikely(fl == NULL))
		return NULL;
	if (unlikely(fl->fn_extra == NULL))
		fl->fn_extra = MemoryContextAllocZero(fl->fn_mcxt, sizeof(SfRowArgs));
	return (SfRowArgs *) fl->fn_extra;
}

/*
 * Text argument argno, which must not be NULL, as a C string: one of
 * kept[0..*nkept) if its bytes match, else a new copy (kept, while there is
 * room).  The caller must not change or free it.
 */
static inline char *
sf_arg_text_kept(FunctionCallInfo fcinfo, int argno, const char *what,
				 SfKeptText *kept, int *nkept, int max)
{
	const char *data;
	int			len;

	sf_arg_not_null(fcinfo, argno, what);
	sf_text_bytes(PG_GETARG_DATUM(argno), &data, &len);
	/*
	 * The last byte first: names often differ only there (p0, p1 ...), so
	 * a miss costs a compare and only the hit calls memcmp (sf_equal_bytes
	 * starts at the first byte, and would not leave this inline).
	 */
	for (int i = 0; i < *nkept; i++)
		if (kept[i].len == len &&
			(len == 0 || kept[i].str[len - 1] == data[len - 1]) &&
			memcmp(kept[i].str, data, len) == 0)
			return kept[i].str;
	return sf_kept_text_add(fcinfo, kept, nkept, max, data, len);
}

/*
 * The pipeline named by argument 0, opened for reading or writing
 * (sf_persist_open: the privilege is checked, a writer holds the row lock).
 */
/* progress.c: idle detection by time, built-in progress (docs/progress.md) */
typedef struct SfIdleOut
{
	FunctionCallInfo fcinfo;	/* the call whose idle decisions these are */
	SfChangeList changes;		/* in TopTransactionContext */
	int			notify_from;	/* its first kept notification (notify.c) */
} SfIdleOut;
extern SfIdleOut sf_idle_out;
extern SfPipeline *sf_idle_check(FunctionCallInfo fcinfo, SfPipeline *p);
extern const SfChangeList *sf_with_idle(const SfChangeList *changes);

static inline SfPipeline *
sf_open_named(FunctionCallInfo fcinfo, const char *name, bool for_write)
{
	SfPipeline *p = sf_persist_open(name, for_write);

	/* idle_timeout: decisions due before this call (progress.c) */
	if (for_write && unlikely(p->def.has_idle_timeout))
		p = sf_idle_check(fcinfo, p);
	return p;
}

static inline SfPipeline *
sf_arg_pipeline(FunctionCallInfo fcinfo, bool for_write)
{
	return sf_open_named(fcinfo, sf_arg_text(fcinfo, 0, "pipeline"),
						 for_write);
}

/*
 * sf_arg_pipeline for writing, from a per-row call site (args: its
 * sf_row_args, or NULL): the name's C string is the site's kept copy.
 */
static inline SfPipeline *
sf_arg_pipeline_row(FunctionCallInfo fcinfo, SfRowArgs *args)
{
	int			n;

	if (args == NULL)
		return sf_arg_pipeline(fcinfo, true);
	n = args->pipeline.str != NULL;
	return sf_open_named(fcinfo,
						 sf_arg_text_kept(fcinfo, 0, "pipeline",
										  &args->pipeline, &n, 1),
						 true);
}

/*
 * The write functions' check of the pipeline's kind (docs/ingestion.md):
 * the one-measure functions (value bigint) refuse a measures pipeline and
 * the measures functions a one-measure pipeline, with 22023, once the
 * pipeline is opened and its arguments are not NULL, before anything of a
 * delivery is looked at (event_id, partition, offset, identity): so in
 * every state of the pipeline, and for an empty batch too.
 */
static inline void
sf_require_kind(const SfPipeline *p, bool measures)
{
	if (unlikely((p->def.measures != NULL) != measures))
		sf_measures_arity_error(p, measures ? 0 : -1);
}

/* The partition argument argno of a per-row call site, as a C string */
static inline char *
sf_arg_partition_row(FunctionCallInfo fcinfo, SfRowArgs *args, int argno)
{
	if (args == NULL)
		return sf_arg_text(fcinfo, argno, "partition");
	return sf_arg_text_kept(fcinfo, argno, "partition", args->partitions,
							&args->npartitions, SF_ROW_PARTITIONS);
}

extern TupleDesc sf_deform_composite(Datum d, int natts, const char *type,
									 Datum *values, bool *nulls);

/* rows.c: the rows of the read and write calls, in their two layouts */
extern void sf_row_values(const SfPipeline *p, const SfRow *r, Datum *values,
						  bool *nulls);
/* final_rows' addresses (api/outputs.c) */
typedef struct SfAddressArgs
{
	Datum	   *names;			/* window names (text) */
	Datum	   *keys;			/* keys (text) */
	Datum	   *starts;			/* window starts (bigint) */
	Datum	   *ends;			/* window ends (bigint) */
	int			n;
} SfAddressArgs;

extern SfPipeline *sf_address_args(FunctionCallInfo fcinfo, SfAddressArgs *a);
extern SfWanted *sf_address_wanted(const SfPipeline *p, const SfAddressArgs *a);
extern void sf_put_rows(FunctionCallInfo fcinfo, const SfPipeline *p,
						const SfRow *rows, int64 n);
extern void sf_put_aggregate_rows(FunctionCallInfo fcinfo, const SfPipeline *p,
								  const SfChangeList *changes,
								  const SfRow *rows, int64 n);
extern void sf_return_changes(FunctionCallInfo fcinfo, const SfPipeline *p,
							  const SfChangeList *changes, bool aggregates);

/*
 * The tail of every write call: hand the changes to the durable outputs
 * (late rows from late_seq late_before on, late_before taken from
 * sf_late_keep before the engine ran; persist/sink.c), then return them as the
 * call's rows.  Caller has run the engine operation and journalled it.
 * Inline, so that a per-row call makes the two calls it always made.
 * aggregates: as streamforge.measures_change rows (the measures forms),
 * else as streamforge.change rows.
 */
static inline void
sf_finish_write_as(FunctionCallInfo fcinfo, SfPipeline *p,
				   const SfChangeList *changes, int64 late_before,
				   bool aggregates)
{
	sf_sink_emit(p, changes, late_before);
	if (unlikely(sf_idle_out.fcinfo == fcinfo))
		changes = sf_with_idle(changes);
	sf_return_changes(fcinfo, p, changes, aggregates);
}

/* sf_finish_write_as returning streamforge.change rows */
static inline void
sf_finish_write(FunctionCallInfo fcinfo, SfPipeline *p,
				const SfChangeList *changes, int64 late_before)
{
	sf_finish_write_as(fcinfo, p, changes, late_before, false);
}

extern void sf_validate_window(const SfWindowDef *w);
extern void sf_window_def_arg(Datum d, SfWindowDef *w);
extern SfDelivery *sf_unpack_deliveries(ArrayType *arr, bool with_offset,
										int **nullfield_out, int *n_out);
extern void sf_batch_null_error(int index, int field,
								bool with_offset) pg_attribute_noreturn();
extern void sf_empty_event_id_error(int index) pg_attribute_noreturn();

/*
 * Raise the error of delivery index (0-based) of a batch unpacked by
 * sf_unpack_deliveries if it has a NULL (nullfield NULL: none has).
 * with_offset: a delivery of ingest_batch, else an event of append_batch.
 */
static inline void
sf_check_batch_nulls(const int *nullfield, int index, bool with_offset)
{
	if (nullfield != NULL && unlikely(nullfield[index] != -2))
		sf_batch_null_error(index, nullfield[index], with_offset);
}

/*
 * Refuse an empty event_id: index < 0 for the one of ingest, ingest_batch
 * and append, else the 0-based event of append_batch, which the error
 * names.
 */
static inline void
sf_check_event_id(const SfDelivery *d, int index)
{
	if (unlikely(d->event_id_len == 0))
		sf_empty_event_id_error(index);
}

/*
 * The write core (write.c, write_array.c; docs/ingestion.md): every SQL
 * function that delivers events is one form of one write, named by the
 * four axes below.  Its C entry point (sf_ + the SQL name, in write.c) is
 * a one-line alias that hands its constant form to the core, which the
 * compiler folds: each alias compiles to the specialized code it had
 * before the core existed, so an alias costs nothing per call.
 */
typedef enum SfWriteSource
{
	SF_SRC_ROW,					/* one event in the arguments */
	SF_SRC_ARRAY,				/* an array of composite deliveries */
	SF_SRC_JSON					/* a jsonb array (ingest_json.c) */
} SfWriteSource;

typedef struct SfWriteForm
{
	const char *name;			/* the SQL function */
	SfWriteSource source;
	bool		measures;		/* payload measures bigint[], rows with
								 * aggregates (else value bigint, change) */
	bool		assign;			/* offsets assigned (append forms; JSON:
								 * decided by element 1) */
	bool		count;			/* returns the number of changes */
} SfWriteForm;

/*
 * Unpacked deliveries, applied all or none by sf_write_batch.  bad (NULL:
 * every delivery is complete) per delivery: -2 complete, -1 a NULL
 * delivery, SF_BAD_MEASURES a bad measures array (in ds[i].value, as a
 * Datum, for its error), else the index of its first NULL field (of
 * streamforge.delivery, streamforge.event or measures_delivery).  The
 * errors' words are those of the 0.3.0 function each loop served:
 * "event %d" for classic events without offsets (append_batch,
 * ingest_json), else "delivery %d".
 */
#define SF_BAD_MEASURES 6
typedef struct SfWriteBatch
{
	SfDelivery *ds;
	int			n;
	const int  *bad;
	int64	   *mv;				/* measures: n * width words; NULL: value */
	bool		assign;			/* each takes its partition's next offset */
	bool		json;			/* from a JSON array: errors say "element" */
	bool		quiet;			/* changes to the outputs only, no rows
								 * returned (an attached table's trigger) */
} SfWriteBatch;

/*
 * Give d the next offset of its partition (the append forms).  Caller
 * holds the pipeline open for writing (its row locked), and must ingest d
 * before it assigns the next one.  An unknown partition gets offset 0: the
 * engine then raises the unknown-partition error, which comes before
 * offsets.
 */
static inline void
sf_assign_offset(const SfPipeline *p, SfDelivery *d)
{
	int			i = sf_partition_index(&p->def, d->partition);

	d->source_offset = (i < 0) ? 0 : p->partitions[i].consumed + 1;
}

/*
 * A pipeline with writers => 'parallel' (issue 46): its changes are made at
 * commit (persist/sequencer.c), so the write forms that return them are
 * refused until provisional rows exist (design, build plan step 9).
 */
static inline bool
sf_is_parallel(const SfPipeline *p)
{
	return unlikely(p->def.writers == SF_WRITERS_PARALLEL);
}

static inline pg_attribute_noreturn() void
sf_parallel_rows_refused(const SfPipeline *p, const char *form)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("%s cannot return the changes of parallel pipeline \"%s\"",
					form, p->def.name),
			 errdetail("The changes of a pipeline with writers => 'parallel' are made when the transaction commits."),
			 errhint("Use ingest_count() or ingest_measures_count(), which return the number of events accepted, and read the changes from the changelog (streamforge.changelog).")));
}

/* write_array.c */
extern void sf_write_array(FunctionCallInfo fcinfo, const SfWriteForm *form);
extern void sf_write_batch(FunctionCallInfo fcinfo, SfPipeline *p,
						   int64 late_before, const SfWriteBatch *b);
extern void sf_measures_values(const SfPipeline *p, ArrayType *arr,
							   int64 *out, int index);
extern void sf_batch_measures(const SfPipeline *p, SfWriteBatch *b,
							  const Datum *arrays);
extern void sf_unpack_measures(const SfPipeline *p, ArrayType *arr,
							   SfWriteBatch *b);
/* attach_check.c: the checks of an attachment's triggers */
extern int64 sf_attach_check(Oid source, const char *trigger_name, char **args,
							 int n, bool for_insert, bool *isnull);
extern void sf_batch_measures_words(const SfPipeline *p, SfWriteBatch *b,
									const int64 *words, int nwords,
									const uint64 *masks);

/* ingest_json.c */
extern void sf_write_json(FunctionCallInfo fcinfo, const SfWriteForm *form);

/* timeunit.c: converting interval windows to the time unit */
extern ArrayType *sf_windows_to_units(ArrayType *wins, bool has_unit,
									  int64 unit_us);
extern Datum sf_window_to_units(Datum window, const char *pipeline);
extern int64 sf_time_to_units(TimestampTz t, const Interval *unit);
extern bool sf_round_event_times;

/* define.c: an ENUM option's argument (codec/options.def) */
extern uint8 sf_option_enum_arg(const SfOption *o, Datum d);

/* measures.c: create_pipeline's measures and aggregates */
extern void sf_measures_arg(FunctionCallInfo fcinfo, int m, int a,
							SfPipelineDef *def);

/* aggregate_args.c: create_aggregate's aggregates of two arguments */
extern const SfAggOps *sf_aggregate_sf_ops(Oid aggfnoid);
extern void sf_aggregate_two_args(struct Aggref *a, const SfAggOps *o,
								  struct Node **arg, struct Node **arg2,
								  int64 *fraction);
extern int64 sf_aggregate_time_precision_us(struct Node *node);
extern bool sf_aggregate_row_security(Oid relid);

/* aggregate_keys.c: the engine key of a GROUP BY expression */
extern struct Node *sf_aggregate_canonical_key(struct Node *e);

/* privileges.c: calling internal functions as the extension's owner */
extern Datum sf_call_as_owner(FunctionCallInfo fcinfo, SfPrivilege privilege,
							  const char *signature);
/* aggregate_sql.c, aggregate_owner.c: create_aggregate */
extern bool sf_aggregate_key_type_ok(Oid typ);
extern void sf_aggregate_refuse_temp(Node *node, const char *where);
extern Datum sf_call_internal(const char *signature, int nargs,
							  const Datum *args, const bool *nulls,
							  bool *isnull);
/* aggregate_join.c: joins with dimension tables rewritten as lookups */
struct Query;
extern bool sf_aggregate_join_rewrite(struct Query *q, const char *pipeline,
									  struct StringInfoData *joins);
extern Datum sf_aggregate_join_spec(Datum spec, Datum plan);
/* aggregate_join_directory.c: a backend's directory of a dimension's rows */
typedef struct SfJoinDirectory SfJoinDirectory;
extern int	sf_join_directory_memory;
extern bool sf_join_directory_type_ok(Oid type);
extern SfJoinDirectory *sf_join_directory(Relation heap, AttrNumber keyatt);
extern HeapTuple sf_join_directory_fetch(SfJoinDirectory *d, Relation heap,
										 TupleDesc desc, Datum key);
extern void sf_join_directory_note(SfJoinDirectory *d, Relation heap,
								   Datum key, ItemPointer tid);
/* the counters of one join in this backend, shown by join_stats() */
typedef struct SfJoinStats
{
	char		pipeline[NAMEDATALEN * 2];	/* hash key: pipeline, join */
	int32		join;
	char		relation[NAMEDATALEN * 2 + 8];
	int64		probes;			/* lookups (by the index or the directory) */
	int64		misses;			/* lookups that found no row */
	int64		dropped;		/* events an inner join dropped */
	int64		directory_hits; /* lookups the directory answered */
	Oid			dim;			/* the dimension and key column of the */
	AttrNumber	keyatt;			/* directory, if any */
} SfJoinStats;
extern SfJoinStats *sf_join_stats_entry(const char *pipeline, int join,
										const char *relation);
/* aggregate_top.c: a top-N query split into its aggregate and its top-N */
extern Datum sf_aggregate_top_split(char *sql, char **inner);
extern Datum sf_aggregate_top_spec(Datum top, Datum plan);

/* the Unix epoch in PostgreSQL's microseconds since 2000-01-01 (needs utils/timestamp.h) */
#define SF_UNIX_EPOCH_US \
	((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY)

#endif							/* SF_API_H */
