/*-------------------------------------------------------------------------
 *
 * measures.c
 *	  The SQL functions of measures pipelines (docs/aggregates.md):
 *	  create_pipeline's measures and aggregates arguments,
 *	  ingest_measures, ingest_measures_batch, append_measures_batch,
 *	  live_aggregates,
 *	  visible_aggregates and aggregate_columns.
 *
 * A measures delivery is applied like ingest's (sf_engine_ingest_measures),
 * journalled as a 'V' entry (codec/journal.c), handed to the durable
 * outputs like every change (sf_sink_emit), and returned as
 * streamforge.measures_change rows: the address, the count and the
 * declared aggregates as one jsonb (persist/measures.c).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/measures.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "parser/parse_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/typcache.h"

#include "api/api.h"

/* A text[] argument's non-NULL elements as C strings; NULL elements: 22004 */
static char **
text_array_arg(ArrayType *arr, const char *what, int *n)
{
	Datum	   *elems;
	bool	   *nulls;
	char	  **out;

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a one-dimensional array", what)));
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, n);
	out = palloc(Max(*n, 1) * sizeof(char *));
	for (int i = 0; i < *n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("element %d of %s must not be null", i + 1, what)));
		out[i] = TextDatumGetCString(elems[i]);
	}
	return out;
}

/*
 * create_pipeline's measures and aggregates, arguments m and a (-1: the
 * SQL definition has none, as before 0.3.0): def->measures, or NULL for a
 * one-measure pipeline.
 */
void
sf_measures_arg(FunctionCallInfo fcinfo, int m, int a, SfPipelineDef *def)
{
	bool		has_m = m >= 0 && !PG_ARGISNULL(m);
	bool		has_a = a >= 0 && !PG_ARGISNULL(a);
	char	  **measures;
	char	  **aggs = NULL;
	int			nm,
				na = -1;

	def->measures = NULL;
	if (!has_m)
	{
		if (has_a)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("aggregates need measures"),
					 errhint("Name the pipeline's measures with measures => ARRAY['...'].")));
		return;
	}
	measures = text_array_arg(PG_GETARG_ARRAYTYPE_P(m), "measures", &nm);
	if (has_a)
		aggs = text_array_arg(PG_GETARG_ARRAYTYPE_P(a), "aggregates", &na);
	def->measures = sf_measures_def_build(measures, nm, aggs, na);
}

/*
 * A measures bigint[] as the delivery's width words into out: the
 * measures, then with nullable measures the NULL mask (a NULL element of
 * a measure declared NULL is 0 with its bit set; of any other measure
 * 22004).  index: the delivery's in a batch, -1 for ingest_measures.
 */
static void
measures_values(SfPipeline *p, ArrayType *arr, int64 *out, int index)
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

/* Materialize changes (or rows, with changes NULL) with their aggregates */
static void
put_measures_rows(FunctionCallInfo fcinfo, SfPipeline *p,
				  const SfChangeList *changes, const SfRow *rows, int64 n)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext rowcxt;
	int			off = changes ? 2 : 0;

	InitMaterializedSRF(fcinfo, 0);
	rowcxt = AllocSetContextCreate(CurrentMemoryContext, "streamforge row",
								   ALLOCSET_SMALL_SIZES);
	for (int64 i = 0; i < n; i++)
	{
		const SfRow *r = changes ? &changes->items[i].row : &rows[i];
		Datum		values[8];
		bool		nulls[8] = {0};
		MemoryContext old;

		CHECK_FOR_INTERRUPTS();
		old = MemoryContextSwitchTo(rowcxt);
		if (changes)
		{
			values[0] = Int64GetDatum(changes->items[i].seq);
			values[1] = CStringGetTextDatum(sf_change_op_name(changes->items[i].op));
		}
		values[off + 0] = CStringGetTextDatum(p->def.windows[r->addr.window].name);
		values[off + 1] = sf_string_text(r->addr.key);
		values[off + 2] = Int64GetDatum(r->addr.start);
		values[off + 3] = Int64GetDatum(r->addr.end);
		values[off + 4] = Int64GetDatum(r->agg.count);
		values[off + 5] = sf_aggregates_jsonb(p->def.measures, &r->agg);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		MemoryContextSwitchTo(old);
		MemoryContextReset(rowcxt);
	}
	MemoryContextDelete(rowcxt);
}

/*
 * The tail of a measures write call, as sf_finish_write (api.h): the
 * outputs, then the rows, its idle decisions' first, with their aggregates.
 */
static void
finish_measures_write(FunctionCallInfo fcinfo, SfPipeline *p,
					  const SfChangeList *changes, int64 late_before)
{
	sf_sink_emit(p, changes, late_before);
	if (unlikely(sf_idle_out.fcinfo == fcinfo))
		changes = sf_with_idle(changes);
	put_measures_rows(fcinfo, p, changes, NULL, changes->n);
}

PG_FUNCTION_INFO_V1(sf_ingest_measures);
Datum
sf_ingest_measures(PG_FUNCTION_ARGS)
{
	SfPipeline *p = sf_arg_pipeline(fcinfo, true);
	int64		late_before = sf_late_keep(p);
	SfChangeList changes = {0};
	SfDelivery	d;
	int64		mv[SF_MAX_MEASURE_WORDS];

	d.partition = sf_arg_text(fcinfo, 1, "partition");
	sf_arg_not_null(fcinfo, 2, "source_offset");
	sf_arg_not_null(fcinfo, 3, "event_id");
	sf_arg_not_null(fcinfo, 4, "key");
	sf_arg_not_null(fcinfo, 5, "event_time");
	sf_arg_not_null(fcinfo, 6, "measures");
	sf_require_kind(p, true);
	d.source_offset = PG_GETARG_INT64(2);
	sf_text_bytes(PG_GETARG_DATUM(3), &d.event_id, &d.event_id_len);
	sf_text_bytes(PG_GETARG_DATUM(4), &d.key, &d.key_len);
	d.event_time = PG_GETARG_INT64(5);
	measures_values(p, PG_GETARG_ARRAYTYPE_P(6), mv, -1);
	d.value = mv[0];
	sf_check_event_id(&d, -1);

	sf_engine_ingest_measures(p, &d, NULL, mv, &changes);
	sf_persist_journal_ingest_measures(p, &d, 1, mv);
	finish_measures_write(fcinfo, p, &changes, late_before);
	return (Datum) 0;
}

/*
 * The measures of delivery index's measures array into out (md->width
 * words), without deconstructing it: true if it is a one-dimensional
 * array of exactly nmeasures bigints, NULL only where a measure is
 * declared NULL, else false (the caller raises the error with
 * measures_values, when the delivery's turn comes).
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

/* How many deliveries ahead ingest_measures_batch prefetches */
#define SF_MEASURES_PREFETCH 8

/*
 * ingest_measures_batch: all deliveries are unpacked first (a delivery
 * with a NULL or a bad measures array is only marked), then applied in
 * array order with the identity slots prefetched a few deliveries ahead,
 * as ingest_batch does; a marked delivery raises its error when its turn
 * comes, so the first failing delivery in array order decides the error.
 *
 * With append (append_measures_batch, the trigger of an attachment of a
 * measures pipeline, issue 29), each delivery's source_offset is ignored
 * (it may be NULL) and it takes its partition's next offset when its turn
 * comes, as append_batch's events do (append.c): the pipeline's row is
 * locked for this transaction, so the offsets are consumed without gaps.
 */
static void
measures_batch(FunctionCallInfo fcinfo, bool append)
{
	SfPipeline *p = sf_arg_pipeline(fcinfo, true);
	int64		late_before = sf_late_keep(p);
	SfChangeList changes = {0};
	ArrayType  *arr;
	Datum	   *elems;
	bool	   *elemnulls;
	int			n;
	int			nm;
	SfDelivery *ds;
	int64	   *mv;
	int		   *bad;			/* -2 ok, -1 NULL delivery, 0..5 NULL field, 6 measures */
	SfDeliveryHash *hashes;
	TupleDesc	tupdesc = NULL;
	static const char *const fields[] = {
		"partition", "source_offset", "event_id", "key", "event_time",
		"measures"
	};

	sf_arg_not_null(fcinfo, 1, "deliveries");
	sf_require_kind(p, true);
	nm = p->def.measures->width;	/* the words of a delivery's measures */
	arr = PG_GETARG_ARRAYTYPE_P(1);
	{
		int16		typlen;
		bool		typbyval;
		char		typalign;

		get_typlenbyvalalign(ARR_ELEMTYPE(arr), &typlen, &typbyval, &typalign);
		deconstruct_array(arr, ARR_ELEMTYPE(arr), typlen, typbyval, typalign,
						  &elems, &elemnulls, &n);
	}
	ds = palloc_extended(Max(n, 1) * sizeof(SfDelivery), MCXT_ALLOC_HUGE);
	mv = palloc_extended(Max(n, 1) * (Size) nm * sizeof(int64), MCXT_ALLOC_HUGE);
	bad = palloc_extended(Max(n, 1) * sizeof(int), MCXT_ALLOC_HUGE);
	hashes = palloc_extended(Max(n, 1) * sizeof(SfDeliveryHash), MCXT_ALLOC_HUGE);
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
			if (nulls[f] && !(append && f == 1))
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
			bad[i] = 6;
			d->value = values[5];	/* the array, for the error */
			continue;
		}
		d->value = mv[(Size) i * nm];
	}
	for (int i = 0; i < Min(n, SF_MEASURES_PREFETCH); i++)
		if (bad[i] == -2)
			sf_delivery_prefetch(p, &ds[i], &hashes[i]);
	for (int i = 0; i < n; i++)
	{
		int			ahead = i + SF_MEASURES_PREFETCH;

		CHECK_FOR_INTERRUPTS();
		if (ahead < n && bad[ahead] == -2)
			sf_delivery_prefetch(p, &ds[ahead], &hashes[ahead]);
		if (unlikely(bad[i] != -2))
		{
			if (bad[i] == -1)
				ereport(ERROR,
						(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
						 errmsg("delivery %d of the batch must not be null", i + 1)));
			if (bad[i] < 6)
				ereport(ERROR,
						(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
						 errmsg("%s of delivery %d of the batch must not be null",
								fields[bad[i]], i + 1)));
			/* raises the measures array's error */
			measures_values(p, DatumGetArrayTypeP((Datum) ds[i].value),
							mv + (Size) i * nm, i);
			elog(ERROR, "streamforge: measures of delivery %d rejected", i + 1);
		}
		sf_check_event_id(&ds[i], -1);
		if (append)
		{
			int			part = sf_partition_index(&p->def, ds[i].partition);

			/* an unknown partition: the engine's error, before offsets */
			ds[i].source_offset = part < 0 ? 0 : p->partitions[part].consumed + 1;
		}
		sf_engine_ingest_measures(p, &ds[i], &hashes[i], mv + (Size) i * nm,
								  &changes);
	}
	if (n > 0)
		sf_persist_journal_ingest_measures(p, ds, n, mv);
	finish_measures_write(fcinfo, p, &changes, late_before);
}

PG_FUNCTION_INFO_V1(sf_ingest_measures_batch);
Datum
sf_ingest_measures_batch(PG_FUNCTION_ARGS)
{
	measures_batch(fcinfo, false);
	return (Datum) 0;
}

/*
 * append_measures_batch(pipeline, deliveries): ingest_measures_batch at
 * each partition's next offsets (source_offset ignored).
 */
PG_FUNCTION_INFO_V1(sf_append_measures_batch);
Datum
sf_append_measures_batch(PG_FUNCTION_ARGS)
{
	measures_batch(fcinfo, true);
	return (Datum) 0;
}

static void
return_measures_rows(FunctionCallInfo fcinfo, bool visible_only)
{
	SfPipeline *p = sf_arg_pipeline(fcinfo, false);
	SfRow	   *rows = NULL;
	int64		n;

	if (p->def.measures == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("pipeline \"%s\" has one unnamed measure", p->def.name),
				 errhint("Read it with streamforge.live() or visible().")));
	/* as visible(): 'final' emits no row that can still change */
	if (visible_only && p->def.emit == SF_EMIT_FINAL)
		n = 0;
	else
		n = sf_collect_rows(p, visible_only, &rows);
	put_measures_rows(fcinfo, p, NULL, rows, n);
}

PG_FUNCTION_INFO_V1(sf_live_aggregates);
Datum
sf_live_aggregates(PG_FUNCTION_ARGS)
{
	return_measures_rows(fcinfo, false);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(sf_visible_aggregates);
Datum
sf_visible_aggregates(PG_FUNCTION_ARGS)
{
	return_measures_rows(fcinfo, true);
	return (Datum) 0;
}

/*
 * The declared aggregates with their SQL types.  A one-measure pipeline
 * has count, sum, min and max of its value (the columns of live()).
 */
PG_FUNCTION_INFO_V1(sf_aggregate_columns);
Datum
sf_aggregate_columns(PG_FUNCTION_ARGS)
{
	SfPipeline *p = sf_arg_pipeline(fcinfo, false);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	const SfMeasuresDef *md = p->def.measures ? p->def.measures :
		sf_measures_def_classic();

	InitMaterializedSRF(fcinfo, 0);
	for (int i = 0; i < md->naggs; i++)
	{
		const SfAggDef *a = &md->aggs[i];
		const SfAggOps *o = sf_agg_ops(a->func);
		Datum		values[5];
		bool		nulls[5] = {0};

		values[0] = Int32GetDatum(i + 1);
		values[1] = CStringGetTextDatum(a->name);
		values[2] = ObjectIdGetDatum(strcmp(o->sql_type, "bigint") == 0 ?
									 INT8OID : NUMERICOID);
		values[3] = CStringGetTextDatum(o->name);
		if (a->measure >= 0)
			values[4] = CStringGetTextDatum(md->names[a->measure]);
		else
			nulls[4] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
