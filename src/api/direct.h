/*-------------------------------------------------------------------------
 *
 * direct.h
 *	  The write entry of streamforge for C code of another extension in the
 *	  same backend (streamforge_kafka's worker): a batch of deliveries as C
 *	  values, applied as ingest_batch applies its array, without the array.
 *
 * The caller finds the entry through the library of the C function behind
 * streamforge.ingest_batch(text, streamforge.delivery[]) (pg_proc.probin,
 * with prosrc 'sf_ingest_batch'; or ingest_measures_batch's), by load_external_function(probin,
 * SF_DIRECT_INGEST_SYMBOL, false, NULL): a library without the symbol (an
 * older streamforge) gives NULL, and the caller keeps the SQL call.  The
 * symbol carries the version of this layout: a change of SfDirectBatch or
 * SfDirectDelivery is a new symbol.  Nothing here is reachable from SQL.
 *
 * What the entry does is what the SQL call does, in the same order and
 * with the same errors: the pipeline opened for writing by name (the
 * current user's ingest privilege, before and after locking its row), the
 * kind of the pipeline, each delivery's first NULL field and empty
 * event_id when its turn comes, the engine, the journal, the outputs and
 * their notifications.  It returns no rows (the changes go to the outputs
 * as those of an attached table's trigger do).  Whether the current user
 * may EXECUTE ingest_batch (ingest_measures_batch, with measures) is the
 * caller's to check first: the SQL call's own check.
 *
 * This header is self-contained (postgres.h types only), so that the
 * other extension can include it without the rest of src/.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/direct.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SF_DIRECT_H
#define SF_DIRECT_H

/* the field indexes of SfDirectBatch.bad, those of streamforge.delivery */
#define SF_DIRECT_COMPLETE (-2)
#define SF_DIRECT_NULL_DELIVERY (-1)

/*
 * One delivery, as a row of streamforge.delivery: the same layout as the
 * engine's SfDelivery (direct.c checks it at compile time).
 */
typedef struct SfDirectDelivery
{
	const char *partition;		/* NUL-terminated */
	int64		source_offset;
	const char *event_id;		/* event_id_len bytes, not terminated */
	int			event_id_len;
	const char *key;			/* key_len bytes, not terminated */
	int			key_len;
	int64		event_time;
	int64		value;			/* one-measure pipelines */
} SfDirectDelivery;

typedef struct SfDirectBatch
{
	const char *pipeline;		/* NUL-terminated */
	SfDirectDelivery *ds;		/* n deliveries, in their order */
	int			n;

	/*
	 * NULL when every delivery is complete; else per delivery
	 * SF_DIRECT_COMPLETE, SF_DIRECT_NULL_DELIVERY or the 0-based field of
	 * streamforge.delivery (partition 0 ... value 5) that is its first
	 * NULL: the delivery's error when its turn comes, as ingest_batch's.
	 */
	const int  *bad;

	/*
	 * NULL for a one-measure pipeline (ingest_batch: each delivery's value);
	 * for a measures pipeline (ingest_measures_batch) each delivery's
	 * measures, a bigint[] Datum as that function's measures column (read
	 * where the delivery is complete; value is then not read).
	 */
	const Datum *measures;
} SfDirectBatch;

#define SF_DIRECT_INGEST_SYMBOL "sf_direct_ingest_v1"
typedef void (*SfDirectIngestFn) (const SfDirectBatch *batch);

extern PGDLLEXPORT void sf_direct_ingest_v1(const SfDirectBatch *batch);

#endif							/* SF_DIRECT_H */
