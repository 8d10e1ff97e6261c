/*-------------------------------------------------------------------------
 *
 * write.c
 *	  The write core: every SQL function that delivers events, as one form
 *	  of one write (docs/ingestion.md, "One write, many forms").
 *
 * A form is a row of write_forms below: where the events come from (the
 * arguments of one row, an array of composite deliveries, a jsonb array),
 * what each carries (value bigint, or measures bigint[] with rows that
 * carry the declared aggregates), whether the extension assigns the source
 * offsets (the append forms), and whether the call returns its changes or
 * their number.  The SQL name of a form is its C entry point with an sf_
 * prefix: a one-line alias handing its constant form to write_call, which
 * the compiler inlines and folds, so that each entry point is the
 * specialized code it was before there was a core (no lookup, no branch on
 * the form per call; bench/callgrind.sh measures it).  One-measure forms
 * refuse a measures pipeline and measures forms a one-measure pipeline
 * (sf_require_kind, 22023), as in 0.3.0.
 *
 * A new form that combines existing axes is one row of write_forms, one
 * alias and its SQL definition.  The row path is write_row here; arrays
 * are write_array.c's, jsonb ingest_json.c's; both end in sf_write_batch.
 *
 * The check order of a row write, shared by all its forms: the pipeline
 * (opened by name: privilege, lock, idle decisions), the partition, the
 * not-null checks in argument order, the pipeline's kind, the payload
 * (a measures array's errors), the event_id, then the engine (unknown
 * partition, offsets, ...).  Memory: the delivery and its changes live in
 * the SQL function's context; the pipeline belongs to persist.c's cache.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/write.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/array.h"
#include "utils/lsyscache.h"

#include "api/api.h"

typedef enum SfWriteFormId
{
	SF_FORM_INGEST,
	SF_FORM_INGEST_COUNT,
	SF_FORM_APPEND,
	SF_FORM_INGEST_MEASURES,
	SF_FORM_INGEST_MEASURES_COUNT,
	SF_FORM_APPEND_MEASURES,
	SF_FORM_INGEST_BATCH,
	SF_FORM_APPEND_BATCH,
	SF_FORM_INGEST_MEASURES_BATCH,
	SF_FORM_APPEND_MEASURES_BATCH,
	SF_FORM_INGEST_JSON,
	SF_FORM_INGEST_MEASURES_JSON
} SfWriteFormId;

/* name, source, measures, assign, count */
static const SfWriteForm write_forms[] = {
	[SF_FORM_INGEST] = {"ingest", SF_SRC_ROW, false, false, false},
	[SF_FORM_INGEST_COUNT] = {"ingest_count", SF_SRC_ROW, false, false, true},
	[SF_FORM_APPEND] = {"append", SF_SRC_ROW, false, true, false},
	[SF_FORM_INGEST_MEASURES] = {"ingest_measures", SF_SRC_ROW, true, false, false},
	[SF_FORM_INGEST_MEASURES_COUNT] = {"ingest_measures_count", SF_SRC_ROW, true, false, true},
	[SF_FORM_APPEND_MEASURES] = {"append_measures", SF_SRC_ROW, true, true, false},
	[SF_FORM_INGEST_BATCH] = {"ingest_batch", SF_SRC_ARRAY, false, false, false},
	[SF_FORM_APPEND_BATCH] = {"append_batch", SF_SRC_ARRAY, false, true, false},
	[SF_FORM_INGEST_MEASURES_BATCH] = {"ingest_measures_batch", SF_SRC_ARRAY, true, false, false},
	[SF_FORM_APPEND_MEASURES_BATCH] = {"append_measures_batch", SF_SRC_ARRAY, true, true, false},
	[SF_FORM_INGEST_JSON] = {"ingest_json", SF_SRC_JSON, false, false, false},
	[SF_FORM_INGEST_MEASURES_JSON] = {"ingest_measures_json", SF_SRC_JSON, true, false, false},
};

/*
 * write_row on a parallel pipeline (issue 46): the count forms return the
 * number of events accepted, the others are refused (the changes are the
 * commit's).  Out of line: the serial per-row path does not grow.
 */
static pg_noinline Datum
write_row_parallel(FunctionCallInfo fcinfo, SfPipeline *p, SfDelivery *d,
				   const int64 *mv, bool assign, bool count)
{
	if (!count)
		sf_parallel_rows_refused(p, get_func_name(fcinfo->flinfo->fn_oid));
	sf_check_event_id(d, -1);
	PG_RETURN_INT32((int32) sf_persist_parallel_ingest(p, d, 1, mv, assign,
													   NULL, NULL));
}

/*
 * One event from the arguments: (pipeline, partition, [source_offset,]
 * event_id, key, event_time, value | measures), source_offset absent when
 * assign.  Returns the changes as rows, or their number (count: idle
 * decisions' rows are not counted, as ingest_count never did).
 */
static pg_attribute_always_inline Datum
write_row(FunctionCallInfo fcinfo, bool measures, bool assign, bool count)
{
	SfRowArgs  *args = sf_row_args(fcinfo);
	SfPipeline *p = sf_arg_pipeline_row(fcinfo, args);
	int64		late_before = sf_late_keep(p);
	int			o = assign ? 0 : 1; /* argument offset after partition */
	SfChangeList changes = {0};
	SfDelivery	d;
	SfDeliveryHash h;
	int64		mv[SF_MAX_MEASURE_WORDS];

	d.partition = sf_arg_partition_row(fcinfo, args, 1);
	if (!assign)
		sf_arg_not_null(fcinfo, 2, "source_offset");
	sf_arg_not_null(fcinfo, 2 + o, "event_id");
	sf_arg_not_null(fcinfo, 3 + o, "key");
	sf_arg_not_null(fcinfo, 4 + o, "event_time");
	sf_arg_not_null(fcinfo, 5 + o, measures ? "measures" : "value");
	sf_require_kind(p, measures);
	if (!assign)
		d.source_offset = PG_GETARG_INT64(2);
	sf_text_bytes(PG_GETARG_DATUM(2 + o), &d.event_id, &d.event_id_len);
	sf_text_bytes(PG_GETARG_DATUM(3 + o), &d.key, &d.key_len);
	d.event_time = PG_GETARG_INT64(4 + o);
	if (measures)
	{
		sf_measures_values(p, PG_GETARG_ARRAYTYPE_P(5 + o), mv, -1);
		d.value = mv[0];
	}
	else
		d.value = PG_GETARG_INT64(5 + o);
	if (sf_is_parallel(p))
		return write_row_parallel(fcinfo, p, &d, measures ? mv : NULL, assign,
								  count);
	sf_check_event_id(&d, -1);

	if (assign)
		sf_assign_offset(p, &d);
	if (measures)
	{
		sf_delivery_hash(&d, &h);
		sf_engine_ingest_measures(p, &d, &h, mv, &changes);
		sf_persist_journal_ingest_measures(p, &d, &h, 1, mv);
	}
	else
	{
		sf_delivery_hash(&d, &h);
		sf_engine_ingest_hashed(p, &d, &h, &changes);
		sf_persist_journal_ingest(p, &d, &h, 1);
	}
	if (count)
	{
		sf_sink_emit(p, &changes, late_before);
		PG_RETURN_INT32(changes.n);
	}
	sf_finish_write_as(fcinfo, p, &changes, late_before, measures);
	return (Datum) 0;
}

/* The core: the write of one form (constant in every caller) */
static pg_attribute_always_inline Datum
write_call(FunctionCallInfo fcinfo, SfWriteFormId id)
{
	const SfWriteForm *form = &write_forms[id];

	switch (form->source)
	{
		case SF_SRC_ROW:
			return write_row(fcinfo, form->measures, form->assign, form->count);
		case SF_SRC_ARRAY:
			sf_write_array(fcinfo, form);
			break;
		case SF_SRC_JSON:
			sf_write_json(fcinfo, form);
			break;
	}
	return (Datum) 0;
}

/*
 * The entry points, one per SQL function (0.1.0: ingest, ingest_batch;
 * 0.2.0: ingest_count, append, append_batch, ingest_json; 0.3.0:
 * ingest_measures, ingest_measures_batch, append_measures_batch; 0.4.0:
 * ingest_measures_count, append_measures, ingest_measures_json).
 */
PG_FUNCTION_INFO_V1(sf_ingest);
Datum
sf_ingest(PG_FUNCTION_ARGS)
{
	return write_call(fcinfo, SF_FORM_INGEST);
}

PG_FUNCTION_INFO_V1(sf_ingest_count);
Datum
sf_ingest_count(PG_FUNCTION_ARGS)
{
	return write_call(fcinfo, SF_FORM_INGEST_COUNT);
}

PG_FUNCTION_INFO_V1(sf_append);
Datum
sf_append(PG_FUNCTION_ARGS)
{
	return write_call(fcinfo, SF_FORM_APPEND);
}

PG_FUNCTION_INFO_V1(sf_ingest_measures);
Datum
sf_ingest_measures(PG_FUNCTION_ARGS)
{
	return write_call(fcinfo, SF_FORM_INGEST_MEASURES);
}

PG_FUNCTION_INFO_V1(sf_ingest_measures_count);
Datum
sf_ingest_measures_count(PG_FUNCTION_ARGS)
{
	return write_call(fcinfo, SF_FORM_INGEST_MEASURES_COUNT);
}

PG_FUNCTION_INFO_V1(sf_append_measures);
Datum
sf_append_measures(PG_FUNCTION_ARGS)
{
	return write_call(fcinfo, SF_FORM_APPEND_MEASURES);
}

PG_FUNCTION_INFO_V1(sf_ingest_batch);
Datum
sf_ingest_batch(PG_FUNCTION_ARGS)
{
	return write_call(fcinfo, SF_FORM_INGEST_BATCH);
}

PG_FUNCTION_INFO_V1(sf_append_batch);
Datum
sf_append_batch(PG_FUNCTION_ARGS)
{
	return write_call(fcinfo, SF_FORM_APPEND_BATCH);
}

PG_FUNCTION_INFO_V1(sf_ingest_measures_batch);
Datum
sf_ingest_measures_batch(PG_FUNCTION_ARGS)
{
	return write_call(fcinfo, SF_FORM_INGEST_MEASURES_BATCH);
}

PG_FUNCTION_INFO_V1(sf_append_measures_batch);
Datum
sf_append_measures_batch(PG_FUNCTION_ARGS)
{
	return write_call(fcinfo, SF_FORM_APPEND_MEASURES_BATCH);
}

PG_FUNCTION_INFO_V1(sf_ingest_json);
Datum
sf_ingest_json(PG_FUNCTION_ARGS)
{
	return write_call(fcinfo, SF_FORM_INGEST_JSON);
}

PG_FUNCTION_INFO_V1(sf_ingest_measures_json);
Datum
sf_ingest_measures_json(PG_FUNCTION_ARGS)
{
	return write_call(fcinfo, SF_FORM_INGEST_MEASURES_JSON);
}
