/*
 * direct.c: the core's C write entry (src/api/direct.h), found through the
 * library of streamforge.ingest_batch.
 *
 * A batch mapped in C (cmap.c), or made by an aggregate subscription's
 * expressions (aggrow.c, aggmap.c), used to become an array of
 * streamforge.delivery (measures_delivery) tuples and a statement calling
 * ingest_batch (ingest_measures_batch), which took the array apart again.  The core exports the
 * same write without the array: this file finds it in the library that
 * pg_proc names for ingest_batch (a C function whose prosrc is
 * sf_ingest_batch; on a scale-out router ingest_batch is a PL/Proxy
 * wrapper, and the statement stays), by the symbol of its layout version.
 * A core without the symbol leaves the statement too.
 *
 * The statement checked the current user's EXECUTE on ingest_batch (the
 * core checks the pipeline's ingest privilege itself, either way): the
 * worker checks it before each direct batch, and without it runs the
 * statement, whose error is then the one the user sees.
 * streamforge_kafka.direct_ingest = off keeps the statement (diagnosis,
 * and the tests comparing the two).
 *
 * An aggregate subscription's deliveries (aggrow.c, aggmap.c) are written
 * here too: as rows of the delivery type, or as their fields when aggrow.c
 * evaluates the expressions of the row apart.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"

#include "kafka.h"
#include "worker.h"

bool		sfk_direct_ingest = true;

/*
 * The core's direct entry, or NULL; *proc: the oid of the SQL function the
 * statement would call (ingest_measures_batch with measures, else
 * ingest_batch).  SPI connected.
 */
SfDirectIngestFn
sfk_direct_entry(bool measures, Oid *proc)
{
	bool		isnull;
	char	   *probin;
	SfDirectIngestFn fn;
	Oid			types[2] = {TEXTOID, TEXTOID};
	Datum		args[2];

	*proc = InvalidOid;
	args[0] = CStringGetTextDatum(measures ?
								  "streamforge.ingest_measures_batch(pg_catalog.text, streamforge.measures_delivery[])" :
								  "streamforge.ingest_batch(pg_catalog.text, streamforge.delivery[])");
	args[1] = CStringGetTextDatum(measures ? "sf_ingest_measures_batch" : "sf_ingest_batch");
	if (SPI_execute_with_args("SELECT p.oid, p.probin FROM pg_catalog.pg_proc AS p "
							  "JOIN pg_catalog.pg_language AS l ON l.oid OPERATOR(pg_catalog.=) p.prolang "
							  "WHERE p.oid OPERATOR(pg_catalog.=) pg_catalog.to_regprocedure($1) "
							  "AND l.lanname OPERATOR(pg_catalog.=) 'c' "
							  "AND p.prosrc OPERATOR(pg_catalog.=) $2",
							  2, types, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not look up streamforge's batch functions");
	if (SPI_processed != 1)
		return NULL;
	*proc = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	probin = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
	if (probin == NULL)
		return NULL;
	fn = (SfDirectIngestFn) load_external_function(probin, SF_DIRECT_INGEST_SYMBOL,
												   false, NULL);
	return fn;
}

/*
 * Whether this batch may take the entry (it is there, on, and allowed);
 * the first batch that does says so at DEBUG1.
 */
bool
sfk_direct_usable(SfDirectIngestFn fn, Oid proc)
{
	static bool said = false;

	if (fn == NULL || !sfk_direct_ingest ||
		pg_proc_aclcheck(proc, GetUserId(), ACL_EXECUTE) != ACLCHECK_OK)
		return false;
	if (!said)
	{
		ereport(DEBUG1,
				(errmsg_internal("streamforge_kafka: subscription %d: batches go to streamforge's C write entry",
								 sfk_sub.id)));
		said = true;
	}
	return true;
}

/*
 * Delivery d from the values of a streamforge.delivery (or
 * measures_delivery: value not read) row; *bad its first NULL field, as
 * ingest_batch would find it (the write reads nothing else of a delivery
 * with one).  The partition's C string is made once into *pname, the
 * caller's slot for the row's Kafka partition.
 */
void
sfk_direct_fill(SfDirectDelivery *d, int *bad, const Datum *values,
				const bool *nulls, char **pname, bool measures)
{
	int			f;

	*bad = SF_DIRECT_COMPLETE;
	for (f = 0; f < 6; f++)
		if (nulls[f])
		{
			*bad = f;
			return;
		}
	if (*pname == NULL)
		*pname = TextDatumGetCString(values[0]);
	d->partition = *pname;
	d->source_offset = DatumGetInt64(values[1]);
	d->event_id = VARDATA_ANY(DatumGetPointer(values[2]));
	d->event_id_len = VARSIZE_ANY_EXHDR(DatumGetPointer(values[2]));
	d->key = VARDATA_ANY(DatumGetPointer(values[3]));
	d->key_len = VARSIZE_ANY_EXHDR(DatumGetPointer(values[3]));
	d->event_time = DatumGetInt64(values[4]);
	d->value = measures ? 0 : DatumGetInt64(values[5]);
}

/* the core's direct entry for an aggregate subscription's deliveries */
static struct
{
	bool		resolved;
	bool		measures;
	SfDirectIngestFn fn;
	Oid			proc;
} agg_direct;

/*
 * Whether this batch's deliveries go to the core's C entry (direct.c), as
 * the current user (the subscriber's, not the table owner's).
 */
bool
sfk_aggregate_direct(bool measures)
{
	if (!agg_direct.resolved || agg_direct.measures != measures)
	{
		agg_direct.fn = sfk_direct_entry(measures, &agg_direct.proc);
		agg_direct.measures = measures;
		agg_direct.resolved = true;
	}
	return sfk_direct_usable(agg_direct.fn, agg_direct.proc);
}

/*
 * The direct write of n elements given as the fields of their deliveries:
 * vals and nulls hold 6 per element (those of a streamforge.delivery or
 * measures_delivery row), rownulls[i] for an element that does not match;
 * trailing as sfk_aggregate_deliver_rows.  sfk_aggregate_direct said yes.
 */
void
sfk_aggregate_deliver_values(const char *pipeline, bool measures, int nparts,
							 int32 *kparts, int *trailing, Datum *vals, bool *nulls,
							 bool *rownulls, int n)
{
	SfDirectDelivery *dd = palloc(sizeof(SfDirectDelivery) * Max(n, 1));
	int		   *bad = palloc(sizeof(int) * Max(n, 1));
	Datum	   *mv = palloc(sizeof(Datum) * Max(n, 1));
	char	  **pnames = palloc0(sizeof(char *) * Max(nparts, 1));
	int			nout = 0;
	int			i;

	memset(trailing, 0, sizeof(int) * nparts);
	for (i = 0; i < n; i++)
	{
		int32		kp = kparts[i];
		Datum	   *values = vals + 6 * i;
		bool	   *isnull = nulls + 6 * i;
		SfDirectDelivery d = {0};
		int			b;
		int64		at;
		int			q;

		if (rownulls[i])
		{
			trailing[kp]++;
			continue;
		}
		sfk_direct_fill(&d, &b, values, isnull, &pnames[kp], measures);
		at = isnull[1] ? 0 : DatumGetInt64(values[1]);
		/* the trailing elements first, as copies at its offset - q */
		for (q = trailing[kp]; q >= 0; q--)
		{
			d.source_offset = at - q;
			dd[nout] = d;
			bad[nout] = b;
			mv[nout] = measures ? values[5] : (Datum) 0;
			nout++;
		}
		trailing[kp] = 0;
	}
	if (nout > 0)
	{
		SfDirectBatch batch;

		batch.pipeline = pipeline;
		batch.ds = dd;
		batch.n = nout;
		batch.bad = bad;
		batch.measures = measures ? mv : NULL;
		agg_direct.fn(&batch);
	}
}

/*
 * Ingests the deliveries rows[i] (composite values of the pipeline's
 * delivery type, one per element; nulls[i] for an element that does not
 * match).  An element that does not match is delivered with the next one
 * of its partition that does, as the same event at its offset minus one,
 * two, ...; those at the end of a partition are counted in trailing.  The
 * deliveries go to the core's C entry when it may take them (direct.c),
 * else as an array to one ingest_batch or ingest_measures_batch.
 */
void
sfk_aggregate_deliver_rows(const char *pipeline, bool measures, int nparts,
						   int32 *kparts, int *trailing, Datum *rows, bool *rownulls,
						   int n)
{
	int			i;
	Datum	   *out;
	int			nout = 0;
	TupleDesc	desc = NULL;
	Oid			rowtype = InvalidOid;

	if (sfk_aggregate_direct(measures))
	{
		Datum	   *vals = palloc(sizeof(Datum) * 6 * Max(n, 1));
		bool	   *nulls = palloc(sizeof(bool) * 6 * Max(n, 1));

		for (i = 0; i < n; i++)
		{
			HeapTupleHeader th;
			HeapTupleData tup;

			if (rownulls[i])
				continue;
			th = DatumGetHeapTupleHeader(rows[i]);
			if (desc == NULL)
				desc = lookup_rowtype_tupdesc_copy(HeapTupleHeaderGetTypeId(th),
												   HeapTupleHeaderGetTypMod(th));
			tup.t_len = HeapTupleHeaderGetDatumLength(th);
			ItemPointerSetInvalid(&tup.t_self);
			tup.t_tableOid = InvalidOid;
			tup.t_data = th;
			heap_deform_tuple(&tup, desc, vals + 6 * i, nulls + 6 * i);
		}
		sfk_aggregate_deliver_values(pipeline, measures, nparts, kparts, trailing,
									 vals, nulls, rownulls, n);
		return;
	}
	memset(trailing, 0, sizeof(int) * nparts);
	out = palloc(sizeof(Datum) * Max(n, 1));
	for (i = 0; i < n; i++)
	{
		int32		kp = kparts[i];
		HeapTupleHeader th;
		HeapTupleData tup;
		Datum		values[6];
		bool		nulls[6];
		int64		at;
		int			q;

		if (rownulls[i])
		{
			trailing[kp]++;
			continue;
		}
		th = DatumGetHeapTupleHeader(rows[i]);
		if (desc == NULL)
		{
			rowtype = HeapTupleHeaderGetTypeId(th);
			desc = lookup_rowtype_tupdesc_copy(rowtype, HeapTupleHeaderGetTypMod(th));
		}
		if (trailing[kp] == 0)
		{
			out[nout++] = PointerGetDatum(th);
			continue;
		}
		tup.t_len = HeapTupleHeaderGetDatumLength(th);
		ItemPointerSetInvalid(&tup.t_self);
		tup.t_tableOid = InvalidOid;
		tup.t_data = th;
		heap_deform_tuple(&tup, desc, values, nulls);
		at = DatumGetInt64(values[1]);
		for (q = trailing[kp]; q > 0; q--)
		{
			values[1] = Int64GetDatum(at - q);
			out[nout++] = HeapTupleGetDatum(heap_form_tuple(desc, values, nulls));
		}
		trailing[kp] = 0;
		out[nout++] = PointerGetDatum(th);
	}
	if (nout > 0)
	{
		Datum		iargs[2];
		Oid			itypes[2] = {TEXTOID, get_array_type(rowtype)};
		int			dims[1] = {nout};
		int			lbs[1] = {1};

		iargs[0] = CStringGetTextDatum(pipeline);
		iargs[1] = PointerGetDatum(construct_md_array(out, NULL, 1, dims, lbs, rowtype,
													  -1, false, TYPALIGN_DOUBLE));
		if (SPI_execute_with_args(measures ?
								  "SELECT pg_catalog.count(*) FROM streamforge.ingest_measures_batch($1, $2)" :
								  "SELECT pg_catalog.count(*) FROM streamforge.ingest_batch($1, $2)",
								  2, itypes, iargs, NULL, false, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not ingest the deliveries of an aggregate subscription");
	}
}
