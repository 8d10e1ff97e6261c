/*-------------------------------------------------------------------------
 *
 * ingest.c
 *	  The write calls with source offsets: ingest, ingest_count,
 *	  ingest_batch, advance and mark_idle (SPEC.md section 2).
 *
 * Each asks persist.c for the pipeline (locked and current), runs the
 * engine operation, journals the call (sf_persist_journal_*), hands the
 * changes to the outputs (sf_sink_emit) and returns them.  An engine
 * operation either succeeds or leaves the pipeline for persist.c to throw
 * away (engine/engine.h, "Atomicity").
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
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"

#include "api/api.h"

static void
check_event_id(const SfDelivery *d)
{
	if (d->event_id_len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("event_id must not be empty")));
}

/*
 * Apply the one delivery in fcinfo's arguments (those of ingest and
 * ingest_count) and collect its changes into *changes, allocated in the
 * caller's context.  The changes have reached the durable outputs when this
 * returns; the caller only chooses how to hand them back.  Returns the
 * pipeline, opened for writing, for return_changes.
 */
static SfPipeline *
ingest_one(FunctionCallInfo fcinfo, SfChangeList *changes)
{
	SfPipeline *p = sf_pipeline_arg(fcinfo, true);
	SfDelivery	d;
	int64		late_before = p->nlate;

	d.partition = sf_text_arg(fcinfo, 1, "partition");
	sf_check_not_null(fcinfo, 2, "source_offset");
	sf_check_not_null(fcinfo, 3, "event_id");
	sf_check_not_null(fcinfo, 4, "key");
	sf_check_not_null(fcinfo, 5, "event_time");
	sf_check_not_null(fcinfo, 6, "value");
	d.source_offset = PG_GETARG_INT64(2);
	sf_text_bytes(PG_GETARG_DATUM(3), &d.event_id, &d.event_id_len);
	sf_text_bytes(PG_GETARG_DATUM(4), &d.key, &d.key_len);
	d.event_time = PG_GETARG_INT64(5);
	d.value = PG_GETARG_INT64(6);
	check_event_id(&d);

	sf_engine_ingest(p, &d, changes);
	sf_persist_journal_ingest(p, &d, 1);
	sf_sink_emit(p, changes, late_before);
	return p;
}

PG_FUNCTION_INFO_V1(sf_ingest);
Datum
sf_ingest(PG_FUNCTION_ARGS)
{
	SfChangeList changes = {0};
	SfPipeline *p = ingest_one(fcinfo, &changes);

	sf_return_changes(fcinfo, p, &changes);
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

	(void) ingest_one(fcinfo, &changes);
	PG_RETURN_INT32(changes.n);
}

/* How many deliveries ahead ingest_batch prefetches identity slots */
#define SF_PREFETCH_DISTANCE 8

/*
 * Apply n unpacked deliveries in array order, all or none, and return
 * their changes as the rows of fcinfo's set-returning call: the second half
 * of ingest_batch, shared with ingest_json (ingest_json.c).  Caller has
 * opened p for writing (sf_persist_open) and read late_before = p->nlate
 * then.  nullfield[i] (NULL: every delivery is complete) is -2 for a
 * complete delivery, -1 for a NULL one, else the index of its first NULL
 * field: the first failing delivery in array order decides the error, and
 * an earlier delivery may fail in the engine.
 */
void
sf_ingest_deliveries(FunctionCallInfo fcinfo, SfPipeline *p, int64 late_before,
					 SfDelivery *ds, const int *nullfield, int n)
{
	static const char *const fields[] = {
		"partition", "source_offset", "event_id", "key", "event_time", "value"
	};
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
		if (nullfield != NULL && nullfield[i] == -1)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("delivery %d of the batch must not be null", i + 1)));
		if (nullfield != NULL && nullfield[i] >= 0)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s of delivery %d of the batch must not be null",
							fields[nullfield[i]], i + 1)));
		check_event_id(&ds[i]);
		sf_engine_ingest_hashed(p, &ds[i], &hashes[i], &changes);
	}
	if (n > 0)
		sf_persist_journal_ingest(p, ds, n);
	sf_sink_emit(p, &changes, late_before);
	sf_return_changes(fcinfo, p, &changes);
}

PG_FUNCTION_INFO_V1(sf_ingest_batch);
Datum
sf_ingest_batch(PG_FUNCTION_ARGS)
{
	SfPipeline *p = sf_pipeline_arg(fcinfo, true);
	int64		late_before = p->nlate;
	SfDelivery *ds;
	int		   *nullfield;
	int			n;

	sf_check_not_null(fcinfo, 1, "deliveries");
	ds = sf_unpack_deliveries(PG_GETARG_ARRAYTYPE_P(1), true, &nullfield, &n);
	sf_ingest_deliveries(fcinfo, p, late_before, ds, nullfield, n);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(sf_advance);
Datum
sf_advance(PG_FUNCTION_ARGS)
{
	SfPipeline *p = sf_pipeline_arg(fcinfo, true);
	char	   *partition = sf_text_arg(fcinfo, 1, "partition");
	int64		progress;
	SfChangeList changes = {0};

	sf_check_not_null(fcinfo, 2, "progress");
	progress = PG_GETARG_INT64(2);
	sf_engine_advance(p, partition, progress, &changes);
	sf_persist_journal_advance(p, partition, progress);
	sf_sink_emit(p, &changes, p->nlate);
	sf_return_changes(fcinfo, p, &changes);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(sf_mark_idle);
Datum
sf_mark_idle(PG_FUNCTION_ARGS)
{
	SfPipeline *p = sf_pipeline_arg(fcinfo, true);
	char	   *partition = sf_text_arg(fcinfo, 1, "partition");
	SfChangeList changes = {0};

	sf_engine_mark_idle(p, partition, &changes);
	sf_persist_journal_mark_idle(p, partition);
	sf_sink_emit(p, &changes, p->nlate);
	sf_return_changes(fcinfo, p, &changes);
	return (Datum) 0;
}
