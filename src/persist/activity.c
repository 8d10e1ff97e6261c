/*-------------------------------------------------------------------------
 *
 * activity.c
 *	  When each partition last received a delivery and a report
 *	  (docs/monitoring.md, docs/progress.md): streamforge.partition_activity.
 *
 * The write calls note the partitions they deliver to or advance
 * (sf_activity_note, from persist.c's journal functions: never during a
 * replay); before the transaction commits or prepares, one statement per
 * pipeline stores the transaction's start time for them.  To keep that off
 * the per-row path, a partition whose stored time this backend knows to be
 * less than a second older is not written again: the times are exact to
 * the second.  A rolled-back transaction stores nothing.  The times are
 * transaction times: what idle_timeout compares (api/progress.c), never
 * part of a pipeline's state, its journal or its checkpoint.
 *
 * Memory: the notes live in TopMemoryContext, one entry per pipeline name
 * this backend has written, with one slot per partition it noted.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/activity.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "engine/engine.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

/* A time already stored less than this long ago is not stored again */
#define SF_ACTIVITY_RESOLUTION	USECS_PER_SEC

typedef struct ActSlot
{
	char		name[SF_NAME_MAX + 1];
	TimestampTz stored_delivery;	/* 0: not known to be stored */
	TimestampTz stored_report;
	bool		delivery;		/* noted in this transaction */
	bool		report;
	SubTransactionId delivery_subid;	/* the subtransaction that noted it */
	SubTransactionId report_subid;
} ActSlot;

typedef struct ActEntry
{
	char		pipeline[SF_NAME_MAX + 1];	/* hash key */
	int			nslots;
	int			cap;
	ActSlot    *slots;
	bool		pending;		/* some slot noted in this transaction */
} ActEntry;

static HTAB *act_hash;

/*
 * The entry act_entry found last: per-row calls on one pipeline find it
 * without hashing the name (issue 23: the hash_search was 230 instructions
 * per ingest call).  Entries are never removed, so the pointer stays valid.
 */
static ActEntry *act_last;
static bool act_pending;
static bool act_callback;
static SPIPlanPtr act_put_plan;
static SPIPlanPtr act_get_plan;

static void act_xact_callback(XactEvent event, void *arg);
static void act_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
								 SubTransactionId parentSubid, void *arg);

static ActEntry *
act_entry(const char *pipeline)
{
	bool		found;
	ActEntry   *e;

	if (likely(act_last != NULL) && strcmp(act_last->pipeline, pipeline) == 0)
		return act_last;
	if (act_hash == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = SF_NAME_MAX + 1;
		ctl.entrysize = sizeof(ActEntry);
		ctl.hcxt = TopMemoryContext;
		act_hash = hash_create("streamforge activity", 16, &ctl,
							   HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	}
	if (!act_callback)
	{
		RegisterXactCallback(act_xact_callback, NULL);
		RegisterSubXactCallback(act_subxact_callback, NULL);
		act_callback = true;
	}
	e = hash_search(act_hash, pipeline, HASH_ENTER, &found);
	if (!found)
	{
		e->nslots = 0;
		e->cap = 0;
		e->slots = NULL;
		e->pending = false;
	}
	act_last = e;
	return e;
}

static ActSlot *
act_slot(ActEntry *e, const char *partition)
{
	for (int i = e->nslots - 1; i >= 0; i--)
		if (strcmp(e->slots[i].name, partition) == 0)
			return &e->slots[i];
	if (e->nslots == e->cap)
	{
		int			cap = e->cap == 0 ? 4 : e->cap * 2;

		e->slots = e->slots == NULL ?
			MemoryContextAlloc(TopMemoryContext, cap * sizeof(ActSlot)) :
			repalloc(e->slots, cap * sizeof(ActSlot));
		e->cap = cap;
	}
	memset(&e->slots[e->nslots], 0, sizeof(ActSlot));
	strlcpy(e->slots[e->nslots].name, partition, SF_NAME_MAX + 1);
	return &e->slots[e->nslots++];
}

/*
 * Note a delivery to (report: an advance of) partition of pipeline in the
 * current transaction.  Cheap when the partition was noted already.
 */
void
sf_activity_note(const char *pipeline, const char *partition, bool report)
{
	TimestampTz now = GetCurrentTransactionStartTimestamp();
	ActEntry   *e = act_entry(pipeline);
	ActSlot    *s = act_slot(e, partition);

	if (report)
	{
		if (s->report ||
			(s->stored_report != 0 &&
			 now - s->stored_report < SF_ACTIVITY_RESOLUTION))
			return;
		s->report = true;
		s->report_subid = GetCurrentSubTransactionId();
	}
	else
	{
		if (s->delivery ||
			(s->stored_delivery != 0 &&
			 now - s->stored_delivery < SF_ACTIVITY_RESOLUTION))
			return;
		s->delivery = true;
		s->delivery_subid = GetCurrentSubTransactionId();
	}
	e->pending = true;
	act_pending = true;
}

/*
 * The deliveries of a call on p: one note per partition delivered to.  A
 * note has no effect after the first of its partition in a transaction, so
 * each partition is noted once, found by the index that the engine resolved
 * for every delivery (h[i].partition, engine.h): a bit per partition, no
 * name compared (issue 23: one note per run of a partition was about 300
 * instructions per event, one per name address about 30).
 */
void
sf_activity_note_deliveries(const SfPipeline *p, const SfDeliveryHash *h,
							int n)
{
	uint64		small[16];		/* 1024 partitions */
	uint64	   *seen = small;
	int			words = (p->def.npartitions + 63) / 64;

	if (n == 1)
	{
		sf_activity_note(p->def.name, p->def.partitions[h[0].partition],
						 false);
		return;
	}
	if (words > (int) lengthof(small))
		seen = palloc0(words * sizeof(uint64));
	else
		memset(small, 0, words * sizeof(uint64));
	for (int i = 0; i < n; i++)
	{
		int			pi = h[i].partition;
		uint64		bit = UINT64CONST(1) << (pi & 63);

		Assert(pi >= 0 && pi < p->def.npartitions);
		if (seen[pi >> 6] & bit)
			continue;
		seen[pi >> 6] |= bit;
		sf_activity_note(p->def.name, p->def.partitions[pi], false);
	}
}

/* Store the notes of one pipeline (connected to SPI, as the owner) */
static void
act_store(ActEntry *e, TimestampTz now)
{
	Datum	   *names = palloc(e->nslots * sizeof(Datum));
	Datum	   *deliv = palloc(e->nslots * sizeof(Datum));
	Datum	   *rep = palloc(e->nslots * sizeof(Datum));
	bool	   *dnull = palloc(e->nslots * sizeof(bool));
	bool	   *rnull = palloc(e->nslots * sizeof(bool));
	int			dims[1];
	int			lbs[1] = {1};
	int			n = 0;
	Datum		args[4];
	static Oid	types[4] = {TEXTOID, TEXTARRAYOID, TIMESTAMPTZARRAYOID,
	TIMESTAMPTZARRAYOID};
	int			rc;

	for (int i = 0; i < e->nslots; i++)
	{
		ActSlot    *s = &e->slots[i];

		if (!s->delivery && !s->report)
			continue;
		names[n] = CStringGetTextDatum(s->name);
		deliv[n] = TimestampTzGetDatum(now);
		dnull[n] = !s->delivery;
		rep[n] = TimestampTzGetDatum(now);
		rnull[n] = !s->report;
		n++;
	}
	if (n == 0)
		return;
	dims[0] = n;
	args[0] = CStringGetTextDatum(e->pipeline);
	args[1] = PointerGetDatum(construct_array(names, n, TEXTOID, -1, false,
											  TYPALIGN_INT));
	args[2] = PointerGetDatum(construct_md_array(deliv, dnull, 1, dims, lbs,
												 TIMESTAMPTZOID, 8,
												 FLOAT8PASSBYVAL,
												 TYPALIGN_DOUBLE));
	args[3] = PointerGetDatum(construct_md_array(rep, rnull, 1, dims, lbs,
												 TIMESTAMPTZOID, 8,
												 FLOAT8PASSBYVAL,
												 TYPALIGN_DOUBLE));
	if (act_put_plan == NULL)
	{
		act_put_plan = SPI_prepare(
			"INSERT INTO streamforge.partition_activity AS a "
			"(pipeline_id, partition, last_delivery, last_report) "
			"SELECT p.id, u.partition, u.d, u.r "
			"FROM streamforge.pipeline AS p, "
			"ROWS FROM (pg_catalog.unnest($2), pg_catalog.unnest($3), "
			"pg_catalog.unnest($4)) AS u(partition, d, r) "
			"WHERE p.name OPERATOR(pg_catalog.=) $1 "
			"ON CONFLICT (pipeline_id, partition) DO UPDATE SET "
			"last_delivery = COALESCE(EXCLUDED.last_delivery, a.last_delivery), "
			"last_report = COALESCE(EXCLUDED.last_report, a.last_report)",
			4, types);
		if (act_put_plan == NULL || SPI_keepplan(act_put_plan) != 0)
			elog(ERROR, "streamforge: could not prepare the activity statement");
	}
	rc = SPI_execute_plan(act_put_plan, args, NULL, false, 0);
	if (rc != SPI_OK_INSERT)
		elog(ERROR, "streamforge: could not store partition activity: %s",
			 SPI_result_code_string(rc));
}

/*
 * Whether streamforge.partition_activity exists: at commit, not if the
 * transaction dropped the extension after its writes (as
 * sf_pending_write_all checks the pipeline table).
 */
static bool
act_table_exists(void)
{
	Oid			nsp = get_namespace_oid("streamforge", true);

	return OidIsValid(nsp) &&
		OidIsValid(get_relname_relid("partition_activity", nsp));
}

/* Store every pending note, before commit or prepare */
static void
act_flush(void)
{
	HASH_SEQ_STATUS it;
	ActEntry   *e;
	TimestampTz now = GetCurrentTransactionStartTimestamp();
	bool		connected = false;
	SfSavedUser saved;

	if (!act_table_exists())
		return;
	hash_seq_init(&it, act_hash);
	while ((e = hash_seq_search(&it)) != NULL)
	{
		if (!e->pending)
			continue;
		if (!connected)
		{
			sf_become_owner(&saved);
			SPI_connect();
			PushActiveSnapshot(GetTransactionSnapshot());
			connected = true;
		}
		act_store(e, now);
	}
	if (connected)
	{
		PopActiveSnapshot();
		SPI_finish();
		sf_restore_user(&saved);
	}
}

/*
 * At PRE_COMMIT and PRE_PREPARE: write the activity the transaction noted.
 * Called by the pre-commit driver (precommit.c), in its order.
 */
void
sf_activity_precommit(void)
{
	if (act_pending)
		act_flush();
}

/* End of the transaction: what was stored is known, the rest forgotten */
static void
act_reset(bool committed)
{
	HASH_SEQ_STATUS it;
	ActEntry   *e;
	TimestampTz now = GetCurrentTransactionStartTimestamp();

	hash_seq_init(&it, act_hash);
	while ((e = hash_seq_search(&it)) != NULL)
	{
		if (!e->pending)
			continue;
		for (int i = 0; i < e->nslots; i++)
		{
			ActSlot    *s = &e->slots[i];

			if (committed && s->delivery)
				s->stored_delivery = now;
			if (committed && s->report)
				s->stored_report = now;
			s->delivery = s->report = false;
		}
		e->pending = false;
	}
	act_pending = false;
}

static void
act_xact_callback(XactEvent event, void *arg)
{
	if (!act_pending)
		return;
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PREPARE:
			act_reset(true);
			break;
		case XACT_EVENT_ABORT:
			act_reset(false);
			break;
		default:
			break;
	}
}

/*
 * The end of subtransaction mySubid: on abort, the deliveries and reports
 * it noted did not happen (a PL/pgSQL exception block or a savepoint rolled
 * back: its calls are undone, so is their activity, or an idle decision
 * would come late by up to the idle_timeout); on commit they become its
 * parent's.  Subtransaction ids grow, so those of mySubid and its children
 * are all >= mySubid.
 */
static void
act_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					 SubTransactionId parentSubid, void *arg)
{
	bool		abort = event == SUBXACT_EVENT_ABORT_SUB;
	HASH_SEQ_STATUS it;
	ActEntry   *e;

	if (!act_pending || (!abort && event != SUBXACT_EVENT_COMMIT_SUB))
		return;
	hash_seq_init(&it, act_hash);
	while ((e = hash_seq_search(&it)) != NULL)
	{
		if (!e->pending)
			continue;
		for (int i = 0; i < e->nslots; i++)
		{
			ActSlot    *s = &e->slots[i];

			if (s->delivery && s->delivery_subid >= mySubid)
			{
				if (abort)
					s->delivery = false;
				else
					s->delivery_subid = parentSubid;
			}
			if (s->report && s->report_subid >= mySubid)
			{
				if (abort)
					s->report = false;
				else
					s->report_subid = parentSubid;
			}
		}
	}
}

/*
 * The stored activity of pipeline's partitions: for each name in names[0
 * .. n), its last delivery, its last report and since when it is watched
 * for idleness (0: none).  Reads as the
 * extension's owner; the caller has checked the read privilege.  Notes of
 * the current transaction are not stored yet: it sees them as of its own
 * start time.
 */
void
sf_activity_get(const char *pipeline, int n, char (*names)[SF_NAME_MAX + 1],
				TimestampTz *delivery, TimestampTz *report, TimestampTz *since)
{
	SfSavedUser saved;
	Datum		arg = CStringGetTextDatum(pipeline);
	Oid			types[1] = {TEXTOID};
	int			rc;
	TimestampTz now = GetCurrentTransactionStartTimestamp();
	ActEntry   *e = act_hash ? hash_search(act_hash, pipeline, HASH_FIND, NULL) : NULL;

	memset(delivery, 0, n * sizeof(TimestampTz));
	memset(report, 0, n * sizeof(TimestampTz));
	memset(since, 0, n * sizeof(TimestampTz));
	sf_become_owner(&saved);
	SPI_connect();
	if (act_get_plan == NULL)
	{
		act_get_plan = SPI_prepare(
			"SELECT a.partition, a.last_delivery, a.last_report, a.since "
			"FROM streamforge.partition_activity AS a, streamforge.pipeline AS p "
			"WHERE p.name OPERATOR(pg_catalog.=) $1 "
			"AND a.pipeline_id OPERATOR(pg_catalog.=) p.id",
			1, types);
		if (act_get_plan == NULL || SPI_keepplan(act_get_plan) != 0)
			elog(ERROR, "streamforge: could not prepare the activity statement");
	}
	rc = SPI_execute_plan(act_get_plan, &arg, NULL, true, 0);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "streamforge: could not read partition activity: %s",
			 SPI_result_code_string(rc));
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		HeapTuple	tup = SPI_tuptable->vals[r];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		char	   *name = SPI_getvalue(tup, desc, 1);
		bool		isnull;
		Datum		d;

		for (int i = 0; name != NULL && i < n; i++)
		{
			if (strcmp(names[i], name) != 0)
				continue;
			d = SPI_getbinval(tup, desc, 2, &isnull);
			if (!isnull)
				delivery[i] = DatumGetTimestampTz(d);
			d = SPI_getbinval(tup, desc, 3, &isnull);
			if (!isnull)
				report[i] = DatumGetTimestampTz(d);
			d = SPI_getbinval(tup, desc, 4, &isnull);
			if (!isnull)
				since[i] = DatumGetTimestampTz(d);
			break;
		}
	}
	SPI_finish();
	sf_restore_user(&saved);

	/* this transaction's own notes */
	if (e != NULL && e->pending)
		for (int i = 0; i < n; i++)
			for (int j = 0; j < e->nslots; j++)
				if (strcmp(names[i], e->slots[j].name) == 0)
				{
					if (e->slots[j].delivery)
						delivery[i] = now;
					if (e->slots[j].report)
						report[i] = now;
				}
}

/*
 * Start watching every partition of pipeline for idleness now (the
 * idle_timeout was set): a partition that never receives anything is
 * idle idle_timeout after this.
 */
void
sf_activity_watch(const char *pipeline)
{
	SfSavedUser saved;
	Datum		arg = CStringGetTextDatum(pipeline);
	Oid			types[1] = {TEXTOID};
	int			rc;

	sf_become_owner(&saved);
	SPI_connect();
	rc = SPI_execute_with_args(
		"INSERT INTO streamforge.partition_activity AS a (pipeline_id, partition, since) "
		"SELECT p.id, u.partition, pg_catalog.transaction_timestamp() "
		"FROM streamforge.pipeline AS p, pg_catalog.jsonb_array_elements_text("
		"p.definition OPERATOR(pg_catalog.->) 'partitions') AS u(partition) "
		"WHERE p.name OPERATOR(pg_catalog.=) $1 "
		"ON CONFLICT (pipeline_id, partition) DO UPDATE SET since = EXCLUDED.since",
		1, types, &arg, NULL, false, 0);
	if (rc != SPI_OK_INSERT)
		elog(ERROR, "streamforge: could not store partition activity: %s",
			 SPI_result_code_string(rc));
	SPI_finish();
	sf_restore_user(&saved);
}
