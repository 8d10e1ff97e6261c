/*-------------------------------------------------------------------------
 *
 * append.c
 *	  Deliveries without source offsets: streamforge.append() and
 *	  streamforge.append_batch().
 *
 * A source that has no offsets of its own (a table, a web request, a
 * trigger) cannot pick "consumed_offset + 1" itself: two sessions would
 * pick the same offset, and a rolled-back transaction would leave a gap.
 * Here the extension picks it, after sf_persist_open() has locked the
 * pipeline's row for this transaction and brought the state up to date,
 * so the offset is read and consumed under the same lock that serializes
 * every write call on the pipeline.  A rolled-back call rolls back the
 * offsets it consumed with everything else, so the next committed call
 * takes them: committed offsets have no gaps.
 *
 * The assigned offsets are journalled like any other delivery (the
 * journal holds the offsets, not "next"), so replay, checkpoints and
 * restore see ordinary deliveries.  Deduplication still works by event id:
 * a retried request with the same event id takes a new offset and is a
 * duplicate there, which changes nothing else (docs/semantics.md).
 *
 * The write sequence is ingest's (ingest.c): the engine operation, the
 * journal (sf_persist_journal_ingest), then sf_finish_write (args.c).
 * append_batch's second half (sf_append_deliveries) is also ingest_json's
 * for events without offsets.  Memory: the deliveries and their changes
 * live in the SQL function's context; the strings of event_id and key
 * point into the (detoasted) arguments; the pipeline belongs to
 * persist.c's cache.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/append.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "api/api.h"

/*
 * Give d the next offset of its partition.  Caller must hold the pipeline
 * open for writing (its row locked), and must ingest d before it assigns
 * the next one.  An unknown partition gets offset 0: the engine then
 * raises the unknown-partition error, which comes before offsets.
 */
static void
assign_offset(SfPipeline *p, SfDelivery *d)
{
	int			i = sf_partition_index(&p->def, d->partition);

	d->source_offset = (i < 0) ? 0 : p->partitions[i].consumed + 1;
}

/*
 * append(pipeline, partition, event_id, key, event_time, value): ingest at
 * the partition's next offset.
 */
PG_FUNCTION_INFO_V1(sf_append);
Datum
sf_append(PG_FUNCTION_ARGS)
{
	SfRowArgs  *args = sf_row_args(fcinfo);
	SfPipeline *p;
	SfDelivery	d;
	SfDeliveryHash h;
	SfChangeList changes = {0};
	int64		late_before;

	p = sf_arg_pipeline_row(fcinfo, args);
	late_before = sf_late_keep(p);

	d.partition = sf_arg_partition_row(fcinfo, args, 1);
	sf_arg_not_null(fcinfo, 2, "event_id");
	sf_arg_not_null(fcinfo, 3, "key");
	sf_arg_not_null(fcinfo, 4, "event_time");
	sf_arg_not_null(fcinfo, 5, "value");
	sf_require_kind(p, false);
	sf_text_bytes(PG_GETARG_DATUM(2), &d.event_id, &d.event_id_len);
	sf_text_bytes(PG_GETARG_DATUM(3), &d.key, &d.key_len);
	d.event_time = PG_GETARG_INT64(4);
	d.value = PG_GETARG_INT64(5);
	sf_check_event_id(&d, -1);

	assign_offset(p, &d);
	sf_delivery_hash(&d, &h);
	sf_engine_ingest_hashed(p, &d, &h, &changes);
	sf_persist_journal_ingest(p, &d, &h, 1);
	sf_finish_write(fcinfo, p, &changes, late_before);
	return (Datum) 0;
}

/*
 * Append n unpacked events in array order, all or none, and return their
 * changes as the rows of fcinfo's set-returning call: the second half of
 * append_batch, shared with ingest_json (ingest_json.c).  Caller has opened
 * p for writing (sf_persist_open) and read late_before = sf_late_keep(p) then.
 * nullfield[i] (NULL: every event is complete) is -2 for a complete event,
 * -1 for a NULL one, else the index of its first NULL field: the first
 * failing event in array order decides the error.  The source_offset of
 * each ds[i] is assigned here, in turn (it depends on the events before).
 */
void
sf_append_deliveries(FunctionCallInfo fcinfo, SfPipeline *p, int64 late_before,
					 SfDelivery *ds, const int *nullfield, int n)
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
		sf_check_batch_nulls(nullfield, i, false);
		sf_check_event_id(&ds[i], i);
		assign_offset(p, &ds[i]);
		sf_delivery_prefetch(p, &ds[i], &hashes[i]);
		sf_engine_ingest_hashed(p, &ds[i], &hashes[i], &changes);
	}
	if (n > 0)
		sf_persist_journal_ingest(p, ds, hashes, n);
	sf_finish_write(fcinfo, p, &changes, late_before);
}

/*
 * append_batch(pipeline, events streamforge.event[]): append every event in
 * array order, all or none; like ingest_batch, the first failing event
 * decides the error.
 */
PG_FUNCTION_INFO_V1(sf_append_batch);
Datum
sf_append_batch(PG_FUNCTION_ARGS)
{
	SfPipeline *p;
	SfDelivery *ds;
	int		   *nullfield;
	int			n;
	int64		late_before;

	p = sf_arg_pipeline(fcinfo, true);
	late_before = sf_late_keep(p);

	sf_arg_not_null(fcinfo, 1, "events");
	sf_require_kind(p, false);
	ds = sf_unpack_deliveries(PG_GETARG_ARRAYTYPE_P(1), false, &nullfield, &n);
	sf_append_deliveries(fcinfo, p, late_before, ds, nullfield, n);
	return (Datum) 0;
}
