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
 */
#include "postgres.h"

#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"

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
