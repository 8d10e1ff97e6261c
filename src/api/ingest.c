/*-------------------------------------------------------------------------
 *
 * ingest.c
 *	  The write calls with source offsets: ingest, ingest_count,
 *	  ingest_batch, advance and mark_idle (docs/semantics.md, The interface).
 *
 * Each asks persist.c for the pipeline (locked and current), runs the
 * engine operation, journals the call (sf_persist_journal_*), hands the
 * changes to the outputs and returns them (sf_finish_write; ingest_count
 * returns their number instead).  An engine operation either succeeds or
 * leaves the pipeline for persist.c to throw away (engine/engine.h,
 * "Atomicity").
 *
 * ingest and ingest_count are the per-row path: their argument checks and
 * the write's tail are inline (api.h), so a call makes no more function
 * calls than the work needs.  Memory: deliveries and changes live in the
 * SQL function's context; the pipeline belongs to persist.c's cache.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/ingest.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"

#include "api/api.h"

/*
 * Apply the one delivery in fcinfo's arguments (those of ingest and
 * ingest_count), journal it, and collect its changes into *changes,
 * allocated in the caller's context; *late_before is the first late_seq it
 * may record (sf_late_keep, engine.h).  The caller hands the changes to the outputs and
 * chooses how to return them.  Returns the pipeline, opened for writing.
 */
static SfPipeline *
ingest_one(FunctionCallInfo fcinfo, SfChangeList *changes, int64 *late_before)
{
	SfRowArgs  *args = sf_row_args(fcinfo);
	SfPipeline *p = sf_arg_pipeline_row(fcinfo, args);
	SfDelivery	d;
	SfDeliveryHash h;

	*late_before = sf_late_keep(p);
	d.partition = sf_arg_partition_row(fcinfo, args, 1);
	sf_arg_not_null(fcinfo, 2, "source_offset");
	sf_arg_not_null(fcinfo, 3, "event_id");
	sf_arg_not_null(fcinfo, 4, "key");
	sf_arg_not_null(fcinfo, 5, "event_time");
	sf_arg_not_null(fcinfo, 6, "value");
	sf_require_kind(p, false);
	d.source_offset = PG_GETARG_INT64(2);
	sf_text_bytes(PG_GETARG_DATUM(3), &d.event_id, &d.event_id_len);
	sf_text_bytes(PG_GETARG_DATUM(4), &d.key, &d.key_len);
	d.event_time = PG_GETARG_INT64(5);
	d.value = PG_GETARG_INT64(6);
	sf_check_event_id(&d, -1);

	sf_delivery_hash(&d, &h);
	sf_engine_ingest_hashed(p, &d, &h, changes);
	sf_persist_journal_ingest(p, &d, &h, 1);
	return p;
}

PG_FUNCTION_INFO_V1(sf_ingest);
Datum
sf_ingest(PG_FUNCTION_ARGS)
{
	SfChangeList changes = {0};
	int64		late_before;
	SfPipeline *p = ingest_one(fcinfo, &changes, &late_before);

	sf_finish_write(fcinfo, p, &changes, late_before);
	return (Datum) 0;
}

/*
 * ingest_count: ingest, returning how many changes (rows of ingest) the
 * call caused instead of the changes themselves.  Not set-returning, so
 * PL/pgSQL evaluates `n := streamforge.ingest_count(...)` on its
 * simple-expression path without starting the executor per call; the
 * changes reach the durable outputs (sink.c) all the same.
 */
PG_FUNCTION_INFO_V1(sf_ingest_count);
Datum
sf_ingest_count(PG_FUNCTION_ARGS)
{
	SfChangeList changes = {0};
	int64		late_before;
	SfPipeline *p = ingest_one(fcinfo, &changes, &late_before);

	sf_sink_emit(p, &changes, late_before);
	PG_RETURN_INT32(changes.n);
}

/* How many deliveries ahead ingest_batch prefetches identity slots */
#define SF_PREFETCH_DISTANCE 8

/*
 * Apply n unpacked deliveries in array order, all or none, and return
 * their changes as the rows of fcinfo's set-returning call: the second half
 * of ingest_batch, shared with ingest_json (ingest_json.c).  Caller has
 * opened p for writing (sf_persist_open) and taken late_before =
 * sf_late_keep(p) then.  nullfield[i] (NULL: every delivery is complete) is -2 for a
 * complete delivery, -1 for a NULL one, else the index of its first NULL
 * field: the first failing delivery in array order decides the error, and
 * an earlier delivery may fail in the engine.
 */
void
sf_ingest_deliveries(FunctionCallInfo fcinfo, SfPipeline *p, int64 late_before,
					 SfDelivery *ds, const int *nullfield, int n)
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
		sf_check_batch_nulls(nullfield, i, true);
		sf_check_event_id(&ds[i], -1);
		sf_engine_ingest_hashed(p, &ds[i], &hashes[i], &changes);
	}
	if (n > 0)
		sf_persist_journal_ingest(p, ds, hashes, n);
	sf_finish_write(fcinfo, p, &changes, late_before);
}

PG_FUNCTION_INFO_V1(sf_ingest_batch);
Datum
sf_ingest_batch(PG_FUNCTION_ARGS)
{
	SfPipeline *p = sf_arg_pipeline(fcinfo, true);
	int64		late_before = sf_late_keep(p);
	SfDelivery *ds;
	int		   *nullfield;
	int			n;

	sf_arg_not_null(fcinfo, 1, "deliveries");
	sf_require_kind(p, false);
	ds = sf_unpack_deliveries(PG_GETARG_ARRAYTYPE_P(1), true, &nullfield, &n);
	sf_ingest_deliveries(fcinfo, p, late_before, ds, nullfield, n);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(sf_advance);
Datum
sf_advance(PG_FUNCTION_ARGS)
{
	SfPipeline *p = sf_arg_pipeline(fcinfo, true);
	char	   *partition = sf_arg_text(fcinfo, 1, "partition");
	int64		progress;
	SfChangeList changes = {0};

	sf_arg_not_null(fcinfo, 2, "progress");
	progress = PG_GETARG_INT64(2);
	sf_engine_advance(p, partition, progress, &changes);
	sf_persist_journal_advance(p, partition, progress);
	sf_finish_write(fcinfo, p, &changes, sf_late_keep(p));
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(sf_mark_idle);
Datum
sf_mark_idle(PG_FUNCTION_ARGS)
{
	SfPipeline *p = sf_arg_pipeline(fcinfo, true);
	char	   *partition = sf_arg_text(fcinfo, 1, "partition");
	SfChangeList changes = {0};

	sf_engine_mark_idle(p, partition, &changes);
	sf_persist_journal_mark_idle(p, partition);
	sf_finish_write(fcinfo, p, &changes, sf_late_keep(p));
	return (Datum) 0;
}
