/*-------------------------------------------------------------------------
 *
 * progress.c
 *	  The SQL functions of built-in progress and of watching a pipeline
 *	  (docs/progress.md, docs/monitoring.md): create_pipeline's
 *	  out_of_orderness argument, set_out_of_orderness, and the progress
 *	  columns of partitions().
 *
 * set_out_of_orderness is a definition change: like set_retention it
 * copies the state under the new definition and stores it as a new
 * snapshot (persist.c, sf_persist_redefine), because the journal replays
 * each call under the definition it ran under.  It changes no window by
 * itself, so it returns no changes.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/progress.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "common/int.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "api/api.h"

/* The changes of the idle decisions of the current call (sf_idle_check) */
SfIdleOut	sf_idle_out;

/* An idle_timeout as microseconds: no months, positive */
static int64
idle_timeout_us(const Interval *iv)
{
	int64		us;

	if (iv->month != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("idle_timeout must not contain months or years"),
				 errdetail("A month has no fixed length in microseconds.")));
	if (pg_mul_s64_overflow((int64) iv->day, USECS_PER_DAY, &us) ||
		pg_add_s64_overflow(us, iv->time, &us))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("idle_timeout is out of range")));
	if (us <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("idle_timeout must be greater than zero")));
	return us;
}

typedef struct ProgressChange
{
	bool		idle;			/* false: out_of_orderness, true: idle_timeout */
	bool		has;
	int64		value;
	Interval	iv;				/* idle_timeout as given, with has */
} ProgressChange;

/*
 * The SfRedefineFn of set_out_of_orderness and set_idle_timeout: a copy
 * under the new rule, stored as a new snapshot, so that every backend
 * reloads the definition.
 */
static SfPipeline *
progress_build(SfPipeline *old, void *arg)
{
	ProgressChange *c = (ProgressChange *) arg;
	SfPipeline *p;

	p = sf_pipeline_with_retention(CurTransactionContext, old,
								   old->def.has_retention,
								   old->def.retention);
	if (c->idle)
	{
		p->def.has_idle_timeout = c->has;
		p->def.idle_timeout_us = c->has ? c->value : 0;
		p->def.idle_timeout = c->iv;
	}
	else
	{
		p->def.has_out_of_orderness = c->has;
		p->def.out_of_orderness = c->has ? c->value : 0;
	}
	return p;
}

/*
 * streamforge.set_out_of_orderness(pipeline text, out_of_orderness bigint):
 * NULL turns built-in progress off.  Admin.  Moves no progress by itself:
 * the next accepted event applies the new rule.
 */
PG_FUNCTION_INFO_V1(sf_set_out_of_orderness);
Datum
sf_set_out_of_orderness(PG_FUNCTION_ARGS)
{
	char	   *pipeline = sf_arg_text(fcinfo, 0, "pipeline");
	ProgressChange c = {.idle = false};

	c.has = !PG_ARGISNULL(1);
	c.value = c.has ? PG_GETARG_INT64(1) : 0;
	if (c.value < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("out_of_orderness must not be negative"),
				 errdetail("The out_of_orderness given is " INT64_FORMAT ".",
						   c.value)));
	(void) sf_persist_redefine(pipeline, progress_build, &c);
	PG_RETURN_VOID();
}

/*
 * streamforge.set_idle_timeout(pipeline text, idle_timeout interval): NULL
 * turns idle detection by time off.  Admin.  Every partition is watched
 * from now on: one that receives nothing is idle idle_timeout from now.
 */
PG_FUNCTION_INFO_V1(sf_set_idle_timeout);
Datum
sf_set_idle_timeout(PG_FUNCTION_ARGS)
{
	char	   *pipeline = sf_arg_text(fcinfo, 0, "pipeline");
	ProgressChange c = {.idle = true};
	Interval   *iv = PG_ARGISNULL(1) ? NULL : PG_GETARG_INTERVAL_P(1);

	c.has = iv != NULL;
	c.value = c.has ? idle_timeout_us(iv) : 0;
	if (c.has)
		c.iv = *iv;
	(void) sf_persist_redefine(pipeline, progress_build, &c);
	if (c.has)
		sf_activity_watch(pipeline);
	PG_RETURN_VOID();
}

/* streamforge.out_of_orderness(pipeline text): the rule, NULL if none (read) */
PG_FUNCTION_INFO_V1(sf_out_of_orderness);
Datum
sf_out_of_orderness(PG_FUNCTION_ARGS)
{
	SfPipeline *p = sf_arg_pipeline(fcinfo, false);

	if (!p->def.has_out_of_orderness)
		PG_RETURN_NULL();
	PG_RETURN_INT64(p->def.out_of_orderness);
}

/* ----------------------------------------------------------------
 * Idle detection by time (docs/progress.md)
 * ----------------------------------------------------------------
 */

/*
 * Per pipeline name, the earliest transaction time at which one of its
 * active partitions can time out, as of this backend's last look: before
 * it, nothing can (activity only ever gets later), so the check reads
 * nothing.
 */
typedef struct IdleDue
{
	char		name[SF_NAME_MAX + 1];
	int64		timeout;		/* the idle_timeout it was computed with */
	TimestampTz due;
} IdleDue;

static HTAB *idle_due;

/*
 * An abort undoes the decisions it made, and the partitions they marked
 * idle are due again at once: forget every due time computed since (all of
 * them: a due time is only a bound below which nothing is looked at).
 */
static void
idle_forget_due(void)
{
	HASH_SEQ_STATUS it;
	IdleDue    *d;

	if (idle_due == NULL)
		return;
	hash_seq_init(&it, idle_due);
	while ((d = hash_seq_search(&it)) != NULL)
		d->due = DT_NOBEGIN;
}

/* Forget the idle changes of a call that failed */
static void
idle_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_COMMIT ||
		event == XACT_EVENT_PREPARE)
		memset(&sf_idle_out, 0, sizeof(sf_idle_out));
	if (event == XACT_EVENT_ABORT)
		idle_forget_due();
}

static void
idle_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					  SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
	{
		memset(&sf_idle_out, 0, sizeof(sf_idle_out));
		idle_forget_due();
	}
}

/*
 * Mark idle, as explicit mark_idle calls that are journaled, every active
 * partition of p (opened for writing by the call fcinfo) that has had no
 * delivery and no report for its idle_timeout, by the transaction clock.
 * The changes go to the outputs now and are returned first by the call
 * (sf_finish_write).  Called by sf_arg_pipeline for a pipeline with an
 * idle_timeout; returns the pipeline, opened for writing again.
 */
SfPipeline *
sf_idle_check(FunctionCallInfo fcinfo, SfPipeline *p)
{
	static bool callbacks = false;
	TimestampTz now = GetCurrentTransactionStartTimestamp();
	int			n = p->def.npartitions;
	TimestampTz *deliv;
	TimestampTz *rep;
	TimestampTz *since;
	TimestampTz due = DT_NOEND;
	TimestampTz at_least;
	IdleDue    *d;
	bool		found;
	MemoryContext old;

	if (idle_due == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = SF_NAME_MAX + 1;
		ctl.entrysize = sizeof(IdleDue);
		ctl.hcxt = TopMemoryContext;
		idle_due = hash_create("streamforge idle", 16, &ctl,
							   HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	}
	if (!callbacks)
	{
		RegisterXactCallback(idle_xact_callback, NULL);
		RegisterSubXactCallback(idle_subxact_callback, NULL);
		callbacks = true;
	}
	/* decisions of an earlier call that returned no rows are its own */
	memset(&sf_idle_out, 0, sizeof(sf_idle_out));
	d = hash_search(idle_due, p->def.name, HASH_ENTER, &found);
	if (found && d->timeout == p->def.idle_timeout_us && now < d->due)
		return p;

	deliv = palloc(n * sizeof(TimestampTz));
	rep = palloc(n * sizeof(TimestampTz));
	since = palloc(n * sizeof(TimestampTz));
	sf_activity_get(p->def.name, n, p->def.partitions, deliv, rep, since);

	old = MemoryContextSwitchTo(TopTransactionContext);
	for (int i = 0; i < n; i++)
	{
		TimestampTz last = Max(deliv[i], Max(rep[i], since[i]));
		TimestampTz at;

		if (p->partitions[i].idle || last == 0)
			continue;
		if (pg_add_s64_overflow(last, p->def.idle_timeout_us, &at))
			at = DT_NOEND;
		if (now >= at)
		{
			/* one journal entry per opening: open again for the next */
			sf_engine_mark_idle(p, p->def.partitions[i], &sf_idle_out.changes);
			sf_persist_journal_mark_idle(p, p->def.partitions[i]);
			p = sf_persist_open(p->def.name, true);
		}
		else if (at < due)
			due = at;
	}
	MemoryContextSwitchTo(old);

	/*
	 * An idle partition (or one without activity) can only time out after
	 * new activity, which is at least as late as now
	 */
	if (pg_add_s64_overflow(now, p->def.idle_timeout_us, &at_least))
		at_least = DT_NOEND;
	d->due = Min(due, at_least);
	d->timeout = p->def.idle_timeout_us;
	if (sf_idle_out.changes.n > 0)
	{
		sf_idle_out.notify_from = sf_notify_kept();
		sf_sink_emit(p, &sf_idle_out.changes, sf_late_keep(p));
		sf_idle_out.fcinfo = fcinfo;
	}
	pfree(deliv);
	pfree(rep);
	pfree(since);
	return p;
}

/*
 * The changes a write call returns when idle decisions came first (the
 * caller checked sf_idle_out.fcinfo == fcinfo): theirs, then the call's,
 * in a new list (the outputs have both already).  Keeps one notification
 * for both and forgets the decisions.
 */
const SfChangeList *
sf_with_idle(const SfChangeList *changes)
{
	SfChangeList *all = palloc0(sizeof(SfChangeList));

	all->n = sf_idle_out.changes.n + changes->n;
	all->cap = all->n;
	all->items = palloc(Max(all->n, 1) * sizeof(SfChange));
	memcpy(all->items, sf_idle_out.changes.items,
		   sf_idle_out.changes.n * sizeof(SfChange));
	if (changes->n > 0)
		memcpy(all->items + sf_idle_out.changes.n, changes->items,
			   changes->n * sizeof(SfChange));
	/* the call's outputs are written: one notification for both */
	sf_notify_coalesce(sf_idle_out.notify_from);
	memset(&sf_idle_out, 0, sizeof(sf_idle_out));
	return all;
}

/*
 * streamforge.tick(pipeline text): the idle decisions due now, for a
 * scheduler (pg_cron) to call when nothing else calls the pipeline.
 * Needs the ingest privilege; returns the changes the decisions caused.
 */
PG_FUNCTION_INFO_V1(sf_tick);
Datum
sf_tick(PG_FUNCTION_ARGS)
{
	SfPipeline *p = sf_arg_pipeline(fcinfo, true);
	SfChangeList none = {0};

	sf_finish_write(fcinfo, p, &none, sf_late_keep(p));
	return (Datum) 0;
}

/* ----------------------------------------------------------------
 * Who holds the watermark
 * ----------------------------------------------------------------
 */

/*
 * streamforge.partition_progress(pipeline text): per partition, in address
 * order, partitions()'s columns plus whether it holds the watermark, its
 * lag behind the fastest partition, and its last delivery and report.
 */
PG_FUNCTION_INFO_V1(sf_partition_progress);
Datum
sf_partition_progress(PG_FUNCTION_ARGS)
{
#define SF_PROGRESS_COLS 8
	SfPipeline *p = sf_arg_pipeline(fcinfo, false);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			n = p->def.npartitions;
	bool	   *holds = palloc(n * sizeof(bool));
	TimestampTz *deliv = palloc(n * sizeof(TimestampTz));
	TimestampTz *rep = palloc(n * sizeof(TimestampTz));
	TimestampTz *since = palloc(n * sizeof(TimestampTz));
	int64		fastest;
	bool		has_fastest;

	sf_progress_holders(p, holds, &fastest, &has_fastest);
	sf_activity_get(p->def.name, n, p->def.partitions, deliv, rep, since);
	InitMaterializedSRF(fcinfo, 0);
	if (rsinfo->setDesc->natts != SF_PROGRESS_COLS)
		elog(ERROR, "streamforge: partition_progress must return %d columns",
			 SF_PROGRESS_COLS);
	for (int i = 0; i < n; i++)
	{
		const SfPartition *part = &p->partitions[i];
		Datum		values[SF_PROGRESS_COLS];
		bool		nulls[SF_PROGRESS_COLS] = {0};
		int			c = 0;
		int64		lag;

		CHECK_FOR_INTERRUPTS();
		values[c++] = CStringGetTextDatum(part->name);
		values[c++] = Int64GetDatum(part->consumed);
		nulls[c] = !part->has_progress;
		values[c++] = Int64GetDatum(part->progress);
		values[c++] = BoolGetDatum(part->idle);
		values[c++] = BoolGetDatum(holds[i]);
		/* NULL when it does not fit in a bigint */
		nulls[c] = !part->has_progress ||
			pg_sub_s64_overflow(fastest, part->progress, &lag);
		values[c] = Int64GetDatum(nulls[c] ? 0 : lag);
		c++;
		nulls[c] = deliv[i] == 0;
		values[c++] = TimestampTzGetDatum(deliv[i]);
		nulls[c] = rep[i] == 0;
		values[c++] = TimestampTzGetDatum(rep[i]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
#undef SF_PROGRESS_COLS
}
