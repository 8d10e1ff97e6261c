/*-------------------------------------------------------------------------
 *
 * measures_ops.c
 *	  Operations of measures pipelines built on the rest of the engine: a
 *	  delivery with measures, and the check that every live bucket's
 *	  aggregate state is the one its remembered events give (the
 *	  checkpoint validator's, codec/codec_measures.c).
 *
 * aggregates.c holds the definitions and the bucket state; it calls no
 * other file of the engine, so that the bucket code can call it.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/measures_ops.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "engine/engine.h"
#include "engine/engine_int.h"

/*
 * Deliver one event of a measures pipeline: sf_engine_ingest_hashed with
 * its measures (nmeasures of them, checked by the caller).  d->value must
 * be measures[0].
 */
void
sf_engine_ingest_measures(SfPipeline *p, const SfDelivery *d,
						  SfDeliveryHash *h, const int64 *measures,
						  SfChangeList *out)
{
	SfDeliveryHash hh;

	if (p->def.measures == NULL)
		sf_measures_arity_error(p, 0);
	if (h == NULL)
	{
		sf_delivery_hash(d, &hh);
		h = &hh;
	}
	p->cur_measures = measures;
	sf_engine_ingest_hashed(p, d, h, out);
}

/*
 * Whether every live bucket of p holds the aggregate state its remembered
 * events give (the checkpoint validator's check of version 2 states): the
 * buckets are built again from the accepted events in a scratch pipeline
 * without a watermark, as final_rows.c does, and compared.  A bucket that
 * starts below the retention horizon may hold forgotten events and is not
 * compared.  On a mismatch, *bad is its address (its key is p's).
 */
bool
sf_magg_check(SfPipeline *p, SfAddress *bad)
{
	const SfMeasuresDef *md = p->def.measures;
	SfPipeline *q;
	SfIdentity **ids;
	int64		nids;
	SfRow	   *rows;
	int64		nrows;
	SfChangeList scratch = {0};
	bool		has_horizon;
	int64		horizon = 0;
	bool		ok = true;

	has_horizon = sf_horizon(&p->def, p->has_watermark, p->watermark,
							 &horizon);
	q = sf_pipeline_create(CurrentMemoryContext, &p->def);
	ids = sf_identity_array(p, &nids);
	sf_op_begin(q);
	for (int64 i = 0; i < nids; i++)
	{
		const SfIdentity *id = ids[i];
		SfString   *key;

		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		if (id->late || id->forgotten)
			continue;
		key = sf_intern_key(q, id->key->data, id->key->len);
		for (int w = 0; w < q->def.nwindows; w++)
			sf_derive_event(q, w, id, key, 0, 0);
	}
	sf_op_finish(q, &scratch);

	nrows = sf_collect_rows(p, false, &rows);
	for (int64 i = 0; i < nrows && ok; i++)
	{
		const SfRow *r = &rows[i];
		SfBucket   *b;

		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		if (has_horizon && r->addr.start < horizon)
			continue;
		b = sf_bucket_lookup(q, r->addr.window,
							 sf_intern_key(q, r->addr.key->data, r->addr.key->len),
							 r->addr.start);
		if (b == NULL || b->end != r->addr.end ||
			b->agg.count != r->agg.count ||
			!sf_magg_equal(md, &b->agg, &r->agg))
		{
			*bad = r->addr;
			ok = false;
		}
	}
	pfree(rows);
	if (ids)
		pfree(ids);
	sf_pipeline_free(q);
	return ok;
}
