/*-------------------------------------------------------------------------
 *
 * ingest.c
 *	  The write calls of a partition's progress: advance and mark_idle
 *	  (docs/semantics.md, The interface), and finish, the end of input
 *	  (docs/progress.md).  The calls that deliver events are the write
 *	  core's (write.c).
 *
 * Each asks persist.c for the pipeline (locked and current), runs the
 * engine operation, journals the call (sf_persist_journal_*), hands the
 * changes to the outputs and returns them (sf_finish_write).  An engine
 * operation either succeeds or leaves the pipeline for persist.c to throw
 * away (engine/engine.h, "Atomicity").  Memory: the changes live in the
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

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "api/api.h"

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
	if (sf_is_parallel(p))
	{
		/* its changes are the commit's (issue 46): no rows */
		sf_persist_parallel_advance(p, partition, progress);
		sf_finish_write(fcinfo, p, &changes, sf_late_keep(p));
		return (Datum) 0;
	}
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

	if (sf_is_parallel(p))
	{
		/* its changes are the commit's (issue 46): no rows */
		sf_persist_parallel_mark_idle(p, partition);
		sf_finish_write(fcinfo, p, &changes, sf_late_keep(p));
		return (Datum) 0;
	}
	sf_engine_mark_idle(p, partition, &changes);
	sf_persist_journal_mark_idle(p, partition);
	sf_finish_write(fcinfo, p, &changes, sf_late_keep(p));
	return (Datum) 0;
}

/*
 * streamforge.finish(pipeline text): the end of the input.  Every partition
 * reports progress 9223372036854775807 (the bigint maximum: +infinity),
 * as advance() would, one journaled advance per partition that is not
 * there yet (an idle one is reactivated), so the watermark reaches the
 * maximum and every window is emitted and finalized.  Returns the changes.
 * A finished pipeline is left as it is: finish again changes nothing and
 * journals nothing.  Needs the ingest privilege, as advance.  Events that
 * arrive afterwards are late by the usual rule.
 */
PG_FUNCTION_INFO_V1(sf_finish_input);
Datum
sf_finish_input(PG_FUNCTION_ARGS)
{
	SfPipeline *p = sf_arg_pipeline(fcinfo, true);
	char	   *name = pstrdup(p->def.name);
	int64		late_before = sf_late_keep(p);
	int		   *order;
	int			nitems;
	SfChangeList changes = {0};

	if (sf_is_parallel(p))
	{
		/* the advances are decided at commit (issue 46, design 6.3) */
		sf_persist_parallel_finish(p);
		sf_finish_write(fcinfo, p, &changes, late_before);
		return (Datum) 0;
	}
	order = palloc(Max(p->def.npartitions, 1) * sizeof(int));
	nitems = sf_finish_order(p, order);

	for (int k = 0; k < nitems; k++)
	{
		const char *partition;

		CHECK_FOR_INTERRUPTS();
		/* one journal entry per opening: open again for the next */
		if (k > 0)
			p = sf_persist_open(name, true);
		partition = p->def.partitions[order[k]];
		sf_engine_advance(p, partition, PG_INT64_MAX, &changes);
		sf_persist_journal_advance(p, partition, PG_INT64_MAX);
	}
	sf_finish_write(fcinfo, p, &changes, late_before);
	return (Datum) 0;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The elements of text array argument argno, none NULL (22004) */
static char **
text_elements(FunctionCallInfo fcinfo, int argno, const char *what, int *n)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(argno);
	Datum	   *elems;
	bool	   *nulls;
	char	  **out;

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("%s must be a one-dimensional array", what)));
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls,
					  n);
	out = palloc(Max(*n, 1) * sizeof(char *));
	for (int i = 0; i < *n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("element %d of %s must not be null", i + 1, what)));
		out[i] = TextDatumGetCString(elems[i]);
	}
	return out;
}

/*
 * streamforge.lock_pipelines(pipelines text[], partitions text[] DEFAULT
 * NULL): take the call-time locks of every pipeline named (the ingest
 * privilege on each, checked as a write call checks it) in the lock order
 * of docs/design/parallel-writers.md 8.1, whatever the arrays' order: the
 * pipelines in the byte order of their names, and within a parallel
 * pipeline the claims of its partitions in theirs.  A serial pipeline's
 * lock is its row lock (once per transaction); a parallel pipeline's are
 * the claims of the partitions in partitions that it has, or of all of
 * them when partitions is NULL (an empty array: none, as tick_pipelines
 * wants).  A transaction that calls it first with every pipeline and
 * partition it will write holds all its call-time locks before it waits
 * for any other, so it never meets 55P03, whatever order its later calls
 * are in (docs/persistence.md, "Several pipelines in one transaction").
 * NULL elements are an error (22004), duplicates count once, a partition
 * that no pipeline named has is 22023.
 */
PG_FUNCTION_INFO_V1(sf_lock_pipelines);
Datum
sf_lock_pipelines(PG_FUNCTION_ARGS)
{
	char	  **names;
	char	  **parts = NULL;
	bool	   *found = NULL;
	int			n;
	int			nparts = 0;

	sf_arg_not_null(fcinfo, 0, "pipelines");
	names = text_elements(fcinfo, 0, "pipelines", &n);
	if (PG_NARGS() > 1 && !PG_ARGISNULL(1))
	{
		parts = text_elements(fcinfo, 1, "partitions", &nparts);
		found = palloc0(Max(nparts, 1) * sizeof(bool));
	}
	qsort(names, n, sizeof(char *), name_cmp);
	for (int i = 0; i < n; i++)
	{
		SfPipeline *p;
		bool	   *named;

		CHECK_FOR_INTERRUPTS();
		if (i > 0 && strcmp(names[i], names[i - 1]) == 0)
			continue;
		p = sf_persist_open(names[i], true);
		named = palloc0(Max(p->def.npartitions, 1) * sizeof(bool));
		for (int k = 0; k < p->def.npartitions; k++)
			named[k] = (parts == NULL);
		for (int j = 0; j < nparts; j++)
		{
			int			k = sf_partition_index(&p->def, parts[j]);

			if (k >= 0)
			{
				named[k] = true;
				found[j] = true;
			}
		}
		if (sf_is_parallel(p))
			sf_persist_parallel_lock(p, named); /* in lane order */
		pfree(named);
	}
	for (int j = 0; j < nparts; j++)
		if (!found[j])
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("partition \"%s\" is not a partition of any pipeline named",
							parts[j]),
					 errhint("Each element of partitions must be a partition of one of the pipelines named.")));
	PG_RETURN_VOID();
}
