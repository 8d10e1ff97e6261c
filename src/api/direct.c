/*-------------------------------------------------------------------------
 *
 * direct.c
 *	  The write entry for C code of another extension in the same backend
 *	  (direct.h): streamforge_kafka's worker hands the deliveries of a batch
 *	  it has mapped in C, instead of forming a streamforge.delivery per
 *	  message and an array for ingest_batch to take apart again.
 *
 * It is ingest_batch (with measures, ingest_measures_batch) without the
 * array and without rows: the pipeline is opened by name for writing as
 * sf_write_array opens it (privilege, lock, idle decisions), its kind
 * checked, the measures arrays read as sf_unpack_measures reads them
 * (sf_batch_measures), then sf_write_batch applies the
 * deliveries all or none, quiet (the changes go to the outputs and their
 * notifications, as an attached table's trigger hands them).  What a
 * statement would give the call, the entry gives it: the commands before
 * it visible and a new snapshot (as SPI gives each statement), and a
 * memory context of its own, freed on return.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/direct.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "api/api.h"
#include "api/direct.h"

/* the caller's deliveries are the engine's, read in place */
StaticAssertDecl(sizeof(SfDirectDelivery) == sizeof(SfDelivery) &&
				 offsetof(SfDirectDelivery, partition) == offsetof(SfDelivery, partition) &&
				 offsetof(SfDirectDelivery, source_offset) == offsetof(SfDelivery, source_offset) &&
				 offsetof(SfDirectDelivery, event_id) == offsetof(SfDelivery, event_id) &&
				 offsetof(SfDirectDelivery, event_id_len) == offsetof(SfDelivery, event_id_len) &&
				 offsetof(SfDirectDelivery, key) == offsetof(SfDelivery, key) &&
				 offsetof(SfDirectDelivery, key_len) == offsetof(SfDelivery, key_len) &&
				 offsetof(SfDirectDelivery, event_time) == offsetof(SfDelivery, event_time) &&
				 offsetof(SfDirectDelivery, value) == offsetof(SfDelivery, value),
				 "SfDirectDelivery must have the layout of SfDelivery");

void
sf_direct_ingest_v1(const SfDirectBatch *batch)
{
	LOCAL_FCINFO(fcinfo, 0);	/* the call's identity (idle decisions) */
	MemoryContext cxt;
	MemoryContext old;
	SfPipeline *p;
	int64		late_before;
	SfWriteBatch b = {0};

	InitFunctionCallInfoData(*fcinfo, NULL, 0, InvalidOid, NULL, NULL);
	cxt = AllocSetContextCreate(CurrentMemoryContext,
								"streamforge direct ingest",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	CommandCounterIncrement();
	PushActiveSnapshot(GetTransactionSnapshot());

	p = sf_open_named(fcinfo, batch->pipeline, true);
	late_before = sf_late_keep(p);
	sf_require_kind(p, batch->measures != NULL);
	b.ds = (SfDelivery *) batch->ds;
	b.n = batch->n;
	b.bad = batch->bad;
	b.quiet = true;
	if (batch->measures != NULL)
	{
		/* sf_batch_measures marks a bad array in a writable copy */
		int		   *bad = palloc_extended(Max(b.n, 1) * sizeof(int), MCXT_ALLOC_HUGE);

		for (int i = 0; i < b.n; i++)
			bad[i] = batch->bad ? batch->bad[i] : SF_DIRECT_COMPLETE;
		b.bad = bad;
		sf_batch_measures(p, &b, batch->measures);
	}
	sf_write_batch(fcinfo, p, late_before, &b);

	PopActiveSnapshot();
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}
