/*-------------------------------------------------------------------------
 *
 * write_array.c
 *	  The write core's batches (write.c): the array forms (ingest_batch,
 *	  append_batch, ingest_measures_batch, append_measures_batch), and
 *	  sf_write_batch, which applies unpacked deliveries all or none for
 *	  them and for the JSON forms (ingest_json.c).
 *
 * A batch is unpacked first (a delivery with a NULL or a bad measures
 * array is only marked), then applied in array order: a marked delivery
 * raises its error when its turn comes, so the first failing delivery in
 * array order decides the error, and an earlier one may fail in the
 * engine.  sf_write_batch picks one of three loops per call, never per
 * delivery: one-measure deliveries with offsets (identity slots prefetched
 * a few deliveries ahead), one-measure events whose offsets are assigned,
 * and measures deliveries (offsets given or assigned).  The loops and
 * their error words are those of 0.3.0's ingest_batch, append_batch and
 * ingest_measures_batch, moved here unchanged.
 *
 * Errors name their delivery (issue 45, item 4): while a loop applies
 * delivery i, an error context callback (batch_error_callback) adds its
 * 1-based index and event_id to any error raised about it, in the words of
 * the form's own messages; the loops only store i.
 *
 * Assigned offsets (docs/ingestion.md, "append"): a source without offsets
 * of its own cannot pick "consumed_offset + 1" itself, so the extension
 * picks it, after sf_persist_open has locked the pipeline's row for this
 * transaction: committed offsets have no gaps.  They are journalled like
 * any other delivery, so replay, checkpoints and restore see ordinary
 * deliveries.
 *
 * Memory: the deliveries and their changes live in the SQL function's
 * context; the strings of event_id and key point into the (detoasted)
 * arguments; the pipeline belongs to persist.c's cache.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/write_array.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"

#include "api/api.h"

/* How many deliveries ahead the loops prefetch identity slots */
#define SF_PREFETCH_DISTANCE 8

/*
 * The error context of a batch (docs/ingestion.md, "Errors name their
 * input"): the delivery being applied, by its 1-based index in the array
 * and its event_id, so that an error the engine raises about it (an
 * unknown partition, an offset or identity conflict, a bound out of
 * range, the measures' arity) names it.  The loops store the index only;
 * the words are built when an error is raised.
 */
typedef struct BatchErrCxt
{
	const SfWriteBatch *b;
	int			i;				/* 0-based delivery applied now; -1: none */
} BatchErrCxt;

static void
batch_error_callback(void *arg)
{
	const BatchErrCxt *c = (const BatchErrCxt *) arg;
	const SfWriteBatch *b = c->b;
	const SfDelivery *d;
	const char *what;
	const char *whole;

	if (c->i < 0 || c->i >= b->n)
		return;
	/* an incomplete delivery: its error names it, and it has no event_id */
	if (b->bad != NULL && b->bad[c->i] != -2 && b->bad[c->i] != SF_BAD_MEASURES)
		return;
	d = &b->ds[c->i];
	/* the words of the form's own errors (api.h, SfWriteBatch) */
	what = b->json ? "element" : (b->assign && b->mv == NULL) ? "event" : "delivery";
	whole = b->json ? "the array" : "the batch";
	if (d->event_id_len == 0)
		errcontext("%s %d of %s", what, c->i + 1, whole);
	else
		errcontext("%s %d of %s, event_id \"%s\"", what, c->i + 1, whole,
				   sf_msg_str(d->event_id, d->event_id_len));
}

/*
 * A measures bigint[] as the delivery's width words into out: the
 * measures, then with nullable measures the NULL mask (a NULL element of
 * a measure declared NULL is 0 with its bit set; of any other measure
 * 22004).  index: the delivery's in a batch, -1 for a row form.
 */
void
sf_measures_values(const SfPipeline *p, ArrayType *arr, int64 *out, int index)
{
	uint64		mask = 0;

	Datum	   *elems;
	bool	   *nulls;
	int			n;

	if (p->def.measures == NULL)
		sf_measures_arity_error(p, 0);
	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("measures must be a one-dimensional array")));
	deconstruct_array(arr, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
					  &elems, &nulls, &n);
	if (n != p->def.measures->nmeasures)
		sf_measures_arity_error(p, n);
	for (int i = 0; i < n; i++)
	{
		if (nulls[i] && (p->def.measures->nullable & (1U << i)) != 0)
		{
			mask |= (uint64) 1 << i;
			out[i] = 0;
			continue;
		}
		if (nulls[i])
		{
			if (index < 0)
				ereport(ERROR,
						(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
						 errmsg("measure \"%s\" must not be null",
								p->def.measures->names[i])));
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("measure \"%s\" of delivery %d of the batch must not be null",
							p->def.measures->names[i], index + 1)));
		}
		out[i] = DatumGetInt64(elems[i]);
	}
	if (p->def.measures->nullable != 0)
		out[n] = (int64) mask;
}

/*
 * The measures of delivery index's measures array into out (md->width
 * words), without deconstructing it: true if it is a one-dimensional
 * array of exactly nmeasures bigints, NULL only where a measure is
 * declared NULL, else false (the caller raises the error with
 * sf_measures_values, when the delivery's turn comes).
 */
static inline bool
measures_fast(Datum d, const SfMeasuresDef *md, int64 *out)
{
	ArrayType  *arr = DatumGetArrayTypeP(d);
	int			nm = md->nmeasures;

	if (ARR_NDIM(arr) != 1 || ARR_DIMS(arr)[0] != nm ||
		ARR_ELEMTYPE(arr) != INT8OID)
		return false;
	if (ARR_HASNULL(arr))
	{
		bits8	   *bitmap = ARR_NULLBITMAP(arr);
		const int64 *data = (const int64 *) ARR_DATA_PTR(arr);
		uint64		mask = 0;

		for (int i = 0; i < nm; i++)
		{
			if ((bitmap[i / 8] & (1 << (i % 8))) == 0)
			{
				if ((md->nullable & (1U << i)) == 0)
					return false;
				mask |= (uint64) 1 << i;
				out[i] = 0;
			}
			else
				out[i] = *data++;
		}
		out[nm] = (int64) mask;
	}
	else
	{
		memcpy(out, ARR_DATA_PTR(arr), nm * sizeof(int64));
		if (md->nullable != 0)
			out[nm] = 0;
	}
	if ((Pointer) arr != DatumGetPointer(d))
		pfree(arr);
	return true;
}

/* Raise the error of measures delivery i of b, which has a bad field */
static pg_noinline pg_attribute_noreturn() void
measures_bad(const SfPipeline *p, const SfWriteBatch *b, int i)
{
	static const char *const fields[] = {
		"partition", "source_offset", "event_id", "key", "event_time",
		"measures"
	};
	const int  *bad = b->bad;

	if (bad[i] == -1)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("delivery %d of the batch must not be null", i + 1)));
	if (bad[i] < SF_BAD_MEASURES)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s of delivery %d of the batch must not be null",
						fields[bad[i]], i + 1)));
	/* raises the measures array's error */
	sf_measures_values(p, DatumGetArrayTypeP((Datum) b->ds[i].value),
					   b->mv + (Size) i * p->def.measures->width, i);
	elog(ERROR, "streamforge: measures of delivery %d rejected", i + 1);
}

/*
 * The tail of a batch: its changes to the outputs, then as the call's rows
 * unless quiet (an attached table's trigger, the direct entry: no rows).
 */
static inline void
batch_finish(FunctionCallInfo fcinfo, SfPipeline *p,
			 const SfChangeList *changes, int64 late_before, bool aggregates,
			 bool quiet)
{
	if (quiet)
	{
		sf_sink_emit(p, changes, late_before);
		/* one notification for the idle decisions and the rows, as 0.3.0 */
		if (unlikely(sf_idle_out.fcinfo == fcinfo))
			(void) sf_with_idle(changes);
	}
	else
		sf_finish_write_as(fcinfo, p, changes, late_before, aggregates);
}

/*
 * One-measure deliveries with their offsets (ingest_batch; ingest_json
 * with offsets; the direct entry of direct.c, quiet), prefetching a few
 * deliveries ahead.
 */
static void
ingest_loop(FunctionCallInfo fcinfo, SfPipeline *p, int64 late_before,
			SfDelivery *ds, const int *nullfield, int n, BatchErrCxt *cx,
			bool quiet)
{
	SfDeliveryHash *hashes;		/* from the prefetch */
	SfChangeList changes = {0};
	int			i;

	hashes = palloc_extended(Max(n, 1) * sizeof(SfDeliveryHash),
							 MCXT_ALLOC_HUGE);
	/* Apply in order, prefetching a few deliveries ahead */
	for (i = 0; i < Min(n, SF_PREFETCH_DISTANCE); i++)
		if (nullfield == NULL || nullfield[i] == -2)
			sf_delivery_prefetch(p, &ds[i], &hashes[i]);
	for (i = 0; i < n; i++)
	{
		int			ahead = i + SF_PREFETCH_DISTANCE;

		CHECK_FOR_INTERRUPTS();
		if (ahead < n && (nullfield == NULL || nullfield[ahead] == -2))
			sf_delivery_prefetch(p, &ds[ahead], &hashes[ahead]);
		cx->i = i;
		sf_check_batch_nulls(nullfield, i, true);
		sf_check_event_id(&ds[i], -1);
		sf_engine_ingest_hashed(p, &ds[i], &hashes[i], &changes);
	}
	cx->i = -1;
	if (n > 0)
		sf_persist_journal_ingest(p, ds, hashes, n);
	batch_finish(fcinfo, p, &changes, late_before, false, quiet);
}

/*
 * One-measure events at their partitions' next offsets (append_batch;
 * ingest_json without offsets).  The source_offset of each ds[i] is
 * assigned in turn (it depends on the events before).
 */
static void
append_loop(FunctionCallInfo fcinfo, SfPipeline *p, int64 late_before,
			SfDelivery *ds, const int *nullfield, int n, BatchErrCxt *cx,
			bool quiet)
{
	SfChangeList changes = {0};
	SfDeliveryHash *hashes;		/* and interned keys, for the journal */
	int			i;

	hashes = palloc_extended(Max(n, 1) * sizeof(SfDeliveryHash),
							 MCXT_ALLOC_HUGE);
	/* An error aborts the call and with it everything applied so far */
	for (i = 0; i < n; i++)
	{
		CHECK_FOR_INTERRUPTS();
		cx->i = i;
		sf_check_batch_nulls(nullfield, i, false);
		sf_check_event_id(&ds[i], i);
		sf_assign_offset(p, &ds[i]);
		sf_delivery_prefetch(p, &ds[i], &hashes[i]);
		sf_engine_ingest_hashed(p, &ds[i], &hashes[i], &changes);
	}
	cx->i = -1;
	if (n > 0)
		sf_persist_journal_ingest(p, ds, hashes, n);
	batch_finish(fcinfo, p, &changes, late_before, false, quiet);
}

/*
 * Measures deliveries (ingest_measures_batch, append_measures_batch,
 * ingest_measures_json): with assign, each delivery's source_offset is
 * ignored and it takes its partition's next offset when its turn comes.
 */
static void
measures_loop(FunctionCallInfo fcinfo, SfPipeline *p, int64 late_before,
			  const SfWriteBatch *b, BatchErrCxt *cx)
{
	SfDelivery *ds = b->ds;
	const int  *bad = b->bad;
	int			n = b->n;
	int			nm = p->def.measures->width;	/* words per delivery */
	SfChangeList changes = {0};
	SfDeliveryHash *hashes;

	hashes = palloc_extended(Max(n, 1) * sizeof(SfDeliveryHash), MCXT_ALLOC_HUGE);
	for (int i = 0; i < Min(n, SF_PREFETCH_DISTANCE); i++)
		if (bad == NULL || bad[i] == -2)
			sf_delivery_prefetch(p, &ds[i], &hashes[i]);
	for (int i = 0; i < n; i++)
	{
		int			ahead = i + SF_PREFETCH_DISTANCE;

		CHECK_FOR_INTERRUPTS();
		if (ahead < n && (bad == NULL || bad[ahead] == -2))
			sf_delivery_prefetch(p, &ds[ahead], &hashes[ahead]);
		cx->i = i;
		if (bad != NULL && unlikely(bad[i] != -2))
			measures_bad(p, b, i);
		sf_check_event_id(&ds[i], -1);
		if (b->assign)
			sf_assign_offset(p, &ds[i]);
		sf_engine_ingest_measures(p, &ds[i], &hashes[i], b->mv + (Size) i * nm,
								  &changes);
	}
	cx->i = -1;
	if (n > 0)
		sf_persist_journal_ingest_measures(p, ds, hashes, n, b->mv);
	batch_finish(fcinfo, p, &changes, late_before, true, b->quiet);
}

/* What a parallel batch checks per delivery, in the serial loops' order */
typedef struct ParallelCheckArg
{
	const SfPipeline *p;
	const SfWriteBatch *b;
	BatchErrCxt *cx;
} ParallelCheckArg;

static void
parallel_check(void *arg, int i)
{
	ParallelCheckArg *a = (ParallelCheckArg *) arg;
	const SfWriteBatch *b = a->b;

	a->cx->i = i;
	if (b->mv != NULL)
	{
		if (b->bad != NULL && unlikely(b->bad[i] != -2))
			measures_bad(a->p, b, i);
		sf_check_event_id(&b->ds[i], -1);
	}
	else
	{
		sf_check_batch_nulls(b->bad, i, !b->assign);
		sf_check_event_id(&b->ds[i], b->assign ? i : -1);
	}
}

/*
 * A batch of a parallel pipeline (issue 46): only the quiet entries (an
 * attached table's trigger, the direct entry) take one, since the changes
 * are the commit's; the array and jsonb forms that return rows are refused.
 */
static pg_noinline void
parallel_batch(FunctionCallInfo fcinfo, SfPipeline *p, const SfWriteBatch *b,
			   BatchErrCxt *cx)
{
	ParallelCheckArg a = {p, b, cx};

	if (!b->quiet)
		sf_parallel_rows_refused(p, get_func_name(fcinfo->flinfo->fn_oid));
	(void) sf_persist_parallel_ingest(p, b->ds, b->n, b->mv, b->assign,
									  parallel_check, &a);
	cx->i = -1;
}

/*
 * Apply an unpacked batch of p, all or none, and return its changes as the
 * rows of fcinfo's set-returning call.  Caller has opened p for writing
 * (sf_persist_open) and taken late_before = sf_late_keep(p) then.
 */
void
sf_write_batch(FunctionCallInfo fcinfo, SfPipeline *p, int64 late_before,
			   const SfWriteBatch *b)
{
	BatchErrCxt cx;
	ErrorContextCallback errcb;

	cx.b = b;
	cx.i = -1;
	errcb.callback = batch_error_callback;
	errcb.arg = &cx;
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;
	if (sf_is_parallel(p))
		parallel_batch(fcinfo, p, b, &cx);
	else if (b->mv != NULL)
		measures_loop(fcinfo, p, late_before, b, &cx);
	else if (b->assign)
		append_loop(fcinfo, p, late_before, b->ds, b->bad, b->n, &cx,
					b->quiet);
	else
		ingest_loop(fcinfo, p, late_before, b->ds, b->bad, b->n, &cx,
					b->quiet);
	error_context_stack = errcb.previous;
}

/*
 * The measures of b's deliveries from their bigint[] arrays (one per
 * delivery; that of a delivery with a bad field is not read), into b->mv,
 * as sf_unpack_measures reads them: a bad array marks its delivery
 * SF_BAD_MEASURES, for its error when its turn comes.  b->bad must be
 * writable.
 */
void
sf_batch_measures(const SfPipeline *p, SfWriteBatch *b, const Datum *arrays)
{
	int			nm = p->def.measures->width;	/* words per delivery */
	int		   *bad = (int *) b->bad;

	b->mv = palloc_extended(Max(b->n, 1) * (Size) nm * sizeof(int64),
							MCXT_ALLOC_HUGE);
	for (int i = 0; i < b->n; i++)
	{
		if (bad[i] != -2)
			continue;
		if (!measures_fast(arrays[i], p->def.measures, b->mv + (Size) i * nm))
		{
			bad[i] = SF_BAD_MEASURES;
			b->ds[i].value = arrays[i];
			continue;
		}
		b->ds[i].value = b->mv[(Size) i * nm];
	}
}

/*
 * As sf_batch_measures, from the measures as words: nwords per delivery
 * (0 where NULL), masks[i] the NULLs of delivery i.  A delivery whose
 * measures would not pass measures_fast (not nmeasures of them, a NULL
 * where a measure is not declared NULL) gets them as the bigint[] the
 * query would have made, for sf_measures_values' error in its turn.
 */
void
sf_batch_measures_words(const SfPipeline *p, SfWriteBatch *b,
						const int64 *words, int nwords, const uint64 *masks)
{
	const SfMeasuresDef *md = p->def.measures;
	int			nm = md->width;	/* words per delivery */
	int		   *bad = (int *) b->bad;

	b->mv = palloc_extended(Max(b->n, 1) * (Size) nm * sizeof(int64),
							MCXT_ALLOC_HUGE);
	for (int i = 0; i < b->n; i++)
	{
		const int64 *w = words + (Size) i * nwords;
		int64	   *out = b->mv + (Size) i * nm;

		if (bad[i] != -2)
			continue;
		if (nwords != md->nmeasures ||
			(masks[i] & ~(uint64) md->nullable) != 0)
		{
			Datum	   *elems = palloc(sizeof(Datum) * nwords);
			bool	   *nulls = palloc(sizeof(bool) * nwords);
			int			dims[1] = {nwords};
			int			lbs[1] = {1};

			for (int m = 0; m < nwords; m++)
			{
				elems[m] = Int64GetDatum(w[m]);
				nulls[m] = (masks[i] & ((uint64) 1 << m)) != 0;
			}
			bad[i] = SF_BAD_MEASURES;
			b->ds[i].value = PointerGetDatum(construct_md_array(elems, nulls, 1, dims, lbs,
																INT8OID, 8, FLOAT8PASSBYVAL,
																TYPALIGN_DOUBLE));
			continue;
		}
		memcpy(out, w, nwords * sizeof(int64));
		if (md->nullable != 0)
			out[nwords] = (int64) masks[i];
		b->ds[i].value = out[0];
	}
}

/*
 * The deliveries of a measures_delivery[] into b (source_offset ignored,
 * and allowed to be NULL, with assign).
 */
void
sf_unpack_measures(const SfPipeline *p, ArrayType *arr, SfWriteBatch *b)
{
	Datum	   *elems;
	bool	   *elemnulls;
	int			n;
	int			nm = p->def.measures->width;	/* words per delivery */
	SfDelivery *ds;
	int64	   *mv;
	int		   *bad;
	TupleDesc	tupdesc = NULL;
	int16		typlen;
	bool		typbyval;
	char		typalign;

	get_typlenbyvalalign(ARR_ELEMTYPE(arr), &typlen, &typbyval, &typalign);
	deconstruct_array(arr, ARR_ELEMTYPE(arr), typlen, typbyval, typalign,
					  &elems, &elemnulls, &n);
	ds = palloc_extended(Max(n, 1) * sizeof(SfDelivery), MCXT_ALLOC_HUGE);
	mv = palloc_extended(Max(n, 1) * (Size) nm * sizeof(int64), MCXT_ALLOC_HUGE);
	bad = palloc_extended(Max(n, 1) * sizeof(int), MCXT_ALLOC_HUGE);
	for (int i = 0; i < n; i++)
	{
		HeapTupleHeader th;
		HeapTupleData tuple;
		Datum		values[6];
		bool		nulls[6];
		SfDelivery *d = &ds[i];

		CHECK_FOR_INTERRUPTS();
		bad[i] = -2;
		if (elemnulls[i])
		{
			bad[i] = -1;
			continue;
		}
		th = DatumGetHeapTupleHeader(elems[i]);
		if (tupdesc == NULL)
		{
			tupdesc = lookup_rowtype_tupdesc_copy(HeapTupleHeaderGetTypeId(th),
												  HeapTupleHeaderGetTypMod(th));
			if (tupdesc->natts != 6)
				elog(ERROR, "streamforge: unexpected measures_delivery layout");
		}
		tuple.t_len = HeapTupleHeaderGetDatumLength(th);
		ItemPointerSetInvalid(&tuple.t_self);
		tuple.t_tableOid = InvalidOid;
		tuple.t_data = th;
		heap_deform_tuple(&tuple, tupdesc, values, nulls);
		for (int f = 0; f < 6; f++)
			if (nulls[f] && !(b->assign && f == 1))
			{
				bad[i] = f;
				break;
			}
		if (bad[i] != -2)
			continue;
		d->partition = TextDatumGetCString(values[0]);
		d->source_offset = nulls[1] ? 0 : DatumGetInt64(values[1]);
		sf_text_bytes(values[2], &d->event_id, &d->event_id_len);
		sf_text_bytes(values[3], &d->key, &d->key_len);
		d->event_time = DatumGetInt64(values[4]);
		if (!measures_fast(values[5], p->def.measures, mv + (Size) i * nm))
		{
			bad[i] = SF_BAD_MEASURES;
			d->value = values[5];	/* the array, for the error */
			continue;
		}
		d->value = mv[(Size) i * nm];
	}
	b->ds = ds;
	b->n = n;
	b->bad = bad;
	b->mv = mv;
}

/*
 * The array forms: (pipeline, deliveries delivery[] | events event[] |
 * deliveries measures_delivery[]).  Opened for writing first (privilege),
 * then the array must not be NULL, then the pipeline's kind.
 */
void
sf_write_array(FunctionCallInfo fcinfo, const SfWriteForm *form)
{
	SfPipeline *p = sf_arg_pipeline(fcinfo, true);
	int64		late_before = sf_late_keep(p);
	SfWriteBatch b = {0};

	b.assign = form->assign;
	sf_arg_not_null(fcinfo, 1,
					form->assign && !form->measures ? "events" : "deliveries");
	sf_require_kind(p, form->measures);
	if (form->measures)
		sf_unpack_measures(p, PG_GETARG_ARRAYTYPE_P(1), &b);
	else
	{
		int		   *nullfield;

		b.ds = sf_unpack_deliveries(PG_GETARG_ARRAYTYPE_P(1), !form->assign,
									&nullfield, &b.n);
		b.bad = nullfield;
	}
	sf_write_batch(fcinfo, p, late_before, &b);
}
