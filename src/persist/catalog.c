/*-------------------------------------------------------------------------
 *
 * catalog.c
 *	  Statements on streamforge.pipeline that persist.c does not run
 *	  itself: the "did you mean" hint of an unknown pipeline, and storing and
 *	  reading a pipeline's time unit (api/timeunit.c converts).
 *
 * Every statement runs as the extension's owner (sf_become_owner, acl.c),
 * since the pipeline table is closed to everybody else, and is fully
 * schema-qualified (test/run.d/sql-qualified.sh).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/catalog.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/varlena.h"

#include "engine/engine.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

/* ----------------------------------------------------------------
 * Hint for an unknown pipeline
 * ----------------------------------------------------------------
 */

/* At most this many suggestions */
#define SF_SIMILAR_MAX	3

/*
 * Past this many pipelines, only names equal but for case are suggested,
 * found through the index pipeline_name_lower, so that the hint costs
 * O(log n), not a scan of every pipeline (issue 21)
 */
#define SF_SIMILAR_SCAN_MAX	1000

/*
 * A hint naming the pipelines whose names are close to name (edit distance
 * at most a third of its length, at least 1, or equal but for case), among
 * those the session's role may read; NULL if there is none.  With more than
 * SF_SIMILAR_SCAN_MAX pipelines, only names equal but for case (an index
 * lookup): the edit distance would need every name.
 *
 * Runs as the extension's owner, with a schema-qualified statement, since
 * the pipeline table is closed to everybody else.  The role whose
 * privileges filter the names is the session's current role
 * (GetOuterUserId), which the message is shown to: the caller may be
 * running as the extension's owner or a SECURITY DEFINER function's owner
 * by now, and no name the session's role may not read is revealed.
 */
char *
similar_pipelines(const char *name)
{
	Oid			role = GetOuterUserId();
	int			len = strlen(name);
	int			limit = Max(1, len / 3);
	char	   *best[SF_SIMILAR_MAX];
	int			bestd[SF_SIMILAR_MAX];
	int			nbest = 0;
	MemoryContext callercxt = CurrentMemoryContext;
	SfSavedUser saved;
	uint64		i;
	int			k;
	StringInfoData buf;

	if (len == 0 || len > SF_NAME_MAX || !IsTransactionState())
		return NULL;

	sf_become_owner(&saved);
	SPI_connect();
	if (SPI_execute("SELECT name, owner, readers, ingesters, admins "
					"FROM streamforge.pipeline",
					true, SF_SIMILAR_SCAN_MAX + 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the pipelines");
	if (SPI_processed > SF_SIMILAR_SCAN_MAX)
	{
		Oid			argtypes[1] = {TEXTOID};
		Datum		args[1];

		args[0] = CStringGetTextDatum(name);
		SPI_freetuptable(SPI_tuptable);
		if (SPI_execute_with_args("SELECT name, owner, readers, ingesters, admins "
								  "FROM streamforge.pipeline "
								  "WHERE pg_catalog.lower(name) OPERATOR(pg_catalog.=) pg_catalog.lower($1) "
								  "ORDER BY name LIMIT 100",
								  1, argtypes, args, NULL, true, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not read the pipelines");
		limit = 0;
	}
	for (i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		char	   *cand = SPI_getvalue(tup, desc, 1);
		int			d;
		bool		isnull[4];
		Datum		v[4];
		SfAcl		acl;

		CHECK_FOR_INTERRUPTS();
		if (cand == NULL)
			continue;
		if (pg_strcasecmp(cand, name) == 0)
			d = 0;
		else
			d = varstr_levenshtein_less_equal(name, len, cand, strlen(cand),
											  1, 1, 1, limit, false);
		if (d > limit)
			continue;
		for (k = 0; k < 4; k++)
		{
			v[k] = SPI_getbinval(tup, desc, k + 2, &isnull[k]);
			if (isnull[k])
				break;
		}
		if (k < 4)
			continue;
		sf_acl_from_datums(&acl, v[0], v[1], v[2], v[3]);
		if (sf_acl_privilege(&acl, role) == SF_PRIV_NONE)
			continue;

		/* keep the closest, ties by name */
		for (k = nbest; k > 0; k--)
		{
			if (bestd[k - 1] < d ||
				(bestd[k - 1] == d && strcmp(best[k - 1], cand) < 0))
				break;
			if (k < SF_SIMILAR_MAX)
			{
				best[k] = best[k - 1];
				bestd[k] = bestd[k - 1];
			}
		}
		if (k < SF_SIMILAR_MAX)
		{
			best[k] = MemoryContextStrdup(callercxt, cand);
			bestd[k] = d;
			if (nbest < SF_SIMILAR_MAX)
				nbest++;
		}
	}
	SPI_finish();
	sf_restore_user(&saved);

	if (nbest == 0)
		return NULL;
	initStringInfo(&buf);
	appendStringInfoString(&buf, nbest == 1 ? "Perhaps you meant pipeline " :
						   "Perhaps you meant one of the pipelines ");
	for (k = 0; k < nbest; k++)
		appendStringInfo(&buf, "%s\"%s\"", k == 0 ? "" :
						 k == nbest - 1 ? " or " : ", ", best[k]);
	appendStringInfoChar(&buf, '.');
	return buf.data;
}

/* ----------------------------------------------------------------
 * Time units (api/timeunit.c)
 * ----------------------------------------------------------------
 */

/*
 * Store the time unit of a pipeline created in this transaction.  Caller
 * has created it (create_pipeline), so the row exists and nobody else sees
 * it yet.
 */
void
sf_time_unit_store(const char *pipeline, Interval *unit)
{
	SfSavedUser saved;
	Oid			argtypes[2] = {TEXTOID, INTERVALOID};
	Datum		args[2];
	int			rc;

	args[0] = CStringGetTextDatum(pipeline);
	args[1] = IntervalPGetDatum(unit);
	sf_become_owner(&saved);
	SPI_connect();
	rc = SPI_execute_with_args("UPDATE streamforge.pipeline "
							   "SET time_unit = $2 "
							   "WHERE name OPERATOR(pg_catalog.=) $1",
							   2, argtypes, args, NULL, false, 0);
	if (rc != SPI_OK_UPDATE || SPI_processed != 1)
		elog(ERROR, "streamforge: could not store the time unit of pipeline \"%s\"",
			 pipeline);
	SPI_finish();
	sf_restore_user(&saved);
}

/*
 * The time unit of a pipeline, NULL if it has none.  Caller has checked
 * the caller's privilege on the pipeline (the query runs as the owner).
 * The result is palloc'd in the caller's context.
 */
Interval *
sf_time_unit_get(const char *pipeline)
{
	SfSavedUser saved;
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1];
	Interval   *result = NULL;
	MemoryContext cxt = CurrentMemoryContext;
	int			rc;

	args[0] = CStringGetTextDatum(pipeline);
	sf_become_owner(&saved);
	SPI_connect();
	rc = SPI_execute_with_args("SELECT time_unit FROM streamforge.pipeline "
							   "WHERE name OPERATOR(pg_catalog.=) $1",
							   1, argtypes, args, NULL, true, 0);
	if (rc == SPI_OK_SELECT && SPI_processed == 1)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0],
									  SPI_tuptable->tupdesc, 1, &isnull);

		if (!isnull)
		{
			result = MemoryContextAlloc(cxt, sizeof(Interval));
			memcpy(result, DatumGetIntervalP(d), sizeof(Interval));
		}
	}
	SPI_finish();
	sf_restore_user(&saved);
	return result;
}
