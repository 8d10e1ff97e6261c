/*-------------------------------------------------------------------------
 *
 * parallel.c
 *	  A parallel pipeline's state in a backend and its write calls (issue
 *	  46, docs/design/parallel-writers.md, build plan steps 4-5).
 *
 * A pipeline created with writers => 'parallel' is held here, not in
 * cache.c: an SfParEntry per pipeline with its head and every lane loaded
 * (engine/parallel.h), the committed row version it equals, and the open
 * transaction's writer state (SfTxn, the lanes it claimed, its deliveries
 * per lane for the lane rows).
 *
 * Storage (design 4.3).  The pipeline's row is the head's: its version is
 * bumped once by every committed transaction (by the sequencer, under the
 * head lock), its snapshot is the head snapshot (version 4, NULL for the
 * empty state), streamforge.journal holds the head entries (format 5) since
 * it.  streamforge.lane holds one row per partition (lane = the partition's
 * index in the definition), with the lane snapshot (version 5) taken
 * together with the head's, and streamforge.lane_journal the lane's rows
 * since: each committed transaction's deliveries to the lane (one format 3
 * entry) followed by its K entry (format 6) when not empty.  A committed
 * state is therefore named by the row version alone.
 *
 * Phases of a write call (design 4.4):
 *	1. sf_par_open(name, true) reads the row without a lock, checks the
 *	   privilege, and brings the entry to the row's version (reused,
 *	   caught up from the rows committed since, or loaded: head and lane
 *	   snapshots, lane rows, head entries; parallel_load.c) unless the
 *	   transaction already wrote it; the transaction's first write records
 *	   the base (sf_txn_begin, the row version) and, in a subtransaction,
 *	   a savepoint mark.
 *	2. The delivery path (sf_persist_parallel_ingest) claims the lane of
 *	   each partition it delivers to, all of a call's first, in lane order
 *	   (a transaction-level lock that waits only upward in the lock order,
 *	   locks.c, design 8.1; then the head is caught up to the latest
 *	   committed version: build step 5), assigns offsets from the lane, runs
 *	   sf_txn_ingest and keeps the delivery for the lane's row.  Reports are
 *	   sf_txn_advance, sf_txn_mark_idle and sf_txn_finish.  Nothing is
 *	   written to a table at call time.
 *	3. At pre-commit the sequencer (sequencer.c) takes the head lock,
 *	   applies the transaction to the head, writes the outputs, the lane
 *	   rows, the K entries and the head entry, and bumps the version.
 *
 * Savepoints: a mark per subtransaction that writes (sf_txn_mark, each
 * lane's consumed offset, replays, log length and claim); its abort takes
 * the transaction back to it and rebuilds the lanes that moved from their
 * own identities up to the marked offset (sf_head_replace_lane), in
 * memory: no row was written.  A top-level abort, a prepare, or an error
 * in the sequencer discards the entry's head: the next use loads it.
 *
 * Reads (sf_par_open(name, false)) return the head's pipeline at the row
 * version of the statement's snapshot; a transaction that wrote the
 * pipeline reads the head as its first write found it (its own writes
 * become visible at commit, design 4.4).
 *
 * Calls: persist.c opens (sf_par_open); sequencer.c sequences, creates
 * and restores; notify.c asks for ids.  This file calls none of them; it
 * calls parallel_load.c, which calls nothing here.
 *
 * Memory: par_cxt (TopMemoryContext) holds the hash and each entry's
 * arrays; a head is built under CurTransactionContext and moved under
 * par_cxt once complete; a transaction's SfTxn lives in a child of
 * par_cxt until the transaction ends.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/parallel.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "codec/codec.h"
#include "engine/engine.h"
#include "engine/parallel.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

static HTAB *par_hash = NULL;
static MemoryContext par_cxt = NULL;
static bool par_sequencing = false;

static SPIPlanPtr par_plans[1];

static const SfPlanText par_writers_text = {
	"SELECT (definition OPERATOR(pg_catalog.->>) 'writers') "
	"OPERATOR(pg_catalog.=) 'parallel' FROM streamforge.pipeline "
	"WHERE name OPERATOR(pg_catalog.=) $1",
	1, {TEXTOID}
};

/* ----------------------------------------------------------------
 * Entries
 * ----------------------------------------------------------------
 */

SfParEntry *
sf_par_lookup(const char *name, bool create)
{
	SfParEntry *pe;
	bool		found;

	if (par_hash == NULL)
	{
		HASHCTL		ctl;

		if (!create)
			return NULL;
		par_cxt = AllocSetContextCreate(TopMemoryContext,
										"streamforge parallel pipelines",
										ALLOCSET_DEFAULT_SIZES);
		ctl.keysize = SF_NAME_MAX + 1;
		ctl.entrysize = sizeof(SfParEntry);
		ctl.hcxt = par_cxt;
		par_hash = hash_create("streamforge parallel pipelines", 8, &ctl,
							   HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	}
	pe = hash_search(par_hash, name, create ? HASH_ENTER : HASH_FIND, &found);
	if (create && !found)
	{
		char		key[SF_NAME_MAX + 1];

		strlcpy(key, pe->name, sizeof(key));
		memset(pe, 0, sizeof(SfParEntry));
		strlcpy(pe->name, key, sizeof(pe->name));
		pe->id = -1;
		pe->version = -1;
	}
	return pe;
}

/* The entry's transaction state goes (its head stays, unless discard) */
void
sf_par_end_txn(SfParEntry *pe, bool discard)
{
	if (pe->txn != NULL)
		sf_txn_free(pe->txn);
	pe->txn = NULL;
	pe->nmarks = 0;
	pe->sequenced = false;
	pe->lost = false;
	pe->dropped_subid = InvalidSubTransactionId;
	if (pe->log != NULL)
	{
		pfree(pe->log);
		pe->log = NULL;
	}
	if (pe->claimed != NULL)
	{
		pfree(pe->claimed);
		pe->claimed = NULL;
	}
	if (pe->marks != NULL)
	{
		pfree(pe->marks);
		pe->marks = NULL;
		pe->marks_cap = 0;
	}
	if (discard && pe->head != NULL)
	{
		MemoryContextDelete(pe->head->cxt);
		pe->head = NULL;
		pe->version = -1;
	}
}

static void
par_forget(SfParEntry *pe)
{
	sf_par_end_txn(pe, true);
	if (pe->lane_pos != NULL)
		pfree(pe->lane_pos);
	if (pe->acl.grants != NULL)
		pfree(pe->acl.grants);
	hash_search(par_hash, pe->name, HASH_REMOVE, NULL);
}

/* The context a head moves to once complete */
MemoryContext
sf_par_context(void)
{
	return par_cxt;
}

/* The id of parallel pipeline name, if this backend holds it */
bool
sf_par_id(const char *name, int64 *id)
{
	SfParEntry *pe = sf_par_lookup(name, false);

	if (pe == NULL || pe->head == NULL)
		return false;
	*id = pe->id;
	return true;
}

/*
 * Parallel pipeline name was dropped in the current subtransaction: its
 * transaction has nothing left to sequence, unless the drop rolls back
 */
void
sf_par_dropped(const char *name)
{
	SfParEntry *pe = sf_par_lookup(name, false);

	if (pe != NULL && pe->txn != NULL &&
		pe->dropped_subid == InvalidSubTransactionId)
		pe->dropped_subid = GetCurrentSubTransactionId();
}

/* How many parallel pipelines this backend holds */
int
sf_par_count(void)
{
	return par_hash == NULL ? 0 : (int) hash_get_num_entries(par_hash);
}

static int
par_name_cmp(const void *a, const void *b)
{
	return strcmp((*(SfParEntry *const *) a)->name,
				  (*(SfParEntry *const *) b)->name);
}

/*
 * The entries the current transaction wrote, or has exclusive operations
 * on (exclusive.c), in name order (design 8.1:
 * the sequencers take their head locks in that order), palloc'd
 */
SfParEntry **
sf_par_open_txns(int *n)
{
	HASH_SEQ_STATUS status;
	SfParEntry *pe;
	SfParEntry **all;

	*n = 0;
	if (par_hash == NULL)
		return NULL;
	all = palloc(Max(hash_get_num_entries(par_hash), 1) * sizeof(SfParEntry *));
	hash_seq_init(&status, par_hash);
	while ((pe = hash_seq_search(&status)) != NULL)
		if (pe->txn != NULL || pe->excl != NULL)
			all[(*n)++] = pe;
	qsort(all, *n, sizeof(SfParEntry *), par_name_cmp);
	return all;
}

/*
 * Whether the pipeline named name is a parallel one: its entry says so,
 * or its row (one statement, only when this backend holds no state of the
 * pipeline).  Caller is connected to SPI as the owner.
 */
static bool
par_is_parallel(const char *name)
{
	Datum		arg;
	bool		isnull;
	Datum		d;

	if (sf_par_lookup(name, false) != NULL)
		return true;
	arg = CStringGetTextDatum(name);
	sf_run_plan(&par_plans[0], &par_writers_text, &arg, NULL, true,
				SPI_OK_SELECT);
	if (SPI_processed != 1)
		return false;
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1,
					  &isnull);
	return !isnull && DatumGetBool(d);
}

/* A savepoint mark of the current subtransaction, if it has none */
static void
par_mark(SfParEntry *pe)
{
	SubTransactionId cur = GetCurrentSubTransactionId();
	int			np = pe->head->p->def.npartitions;
	SfParMark  *m;
	MemoryContext old;

	if (GetCurrentTransactionNestLevel() <= 1 ||
		(pe->nmarks > 0 && pe->marks[pe->nmarks - 1].subid >= cur))
		return;
	old = MemoryContextSwitchTo(pe->txn->cxt);
	if (pe->nmarks == pe->marks_cap)
	{
		pe->marks_cap = Max(4, 2 * pe->marks_cap);
		pe->marks = pe->marks == NULL ?
			MemoryContextAlloc(par_cxt, pe->marks_cap * sizeof(SfParMark)) :
			repalloc(pe->marks, pe->marks_cap * sizeof(SfParMark));
	}
	m = &pe->marks[pe->nmarks++];
	m->subid = cur;
	m->txn = palloc(sizeof(SfTxnMark));
	sf_txn_mark(pe->txn, m->txn);
	m->consumed = palloc(Max(np, 1) * sizeof(int64));
	m->replays = palloc(Max(np, 1) * sizeof(int64));
	m->nlog = palloc(Max(np, 1) * sizeof(int));
	m->claimed = palloc(Max(np, 1) * sizeof(bool));
	for (int i = 0; i < np; i++)
	{
		m->consumed[i] = pe->head->lanes[i]->partitions[i].consumed;
		m->replays[i] = pe->head->lanes[i]->offset_replays;
		m->nlog[i] = pe->log[i].n;
		m->claimed[i] = pe->claimed[i];
	}
	MemoryContextSwitchTo(old);
}

/* The first write of the transaction: the base (design 4.4, 2) */
static void
par_begin(SfParEntry *pe)
{
	int			np = pe->head->p->def.npartitions;

	pe->txn = sf_txn_begin(par_cxt, pe->head);
	pe->base_version = pe->version;
	pe->writer = GetUserId();
	pe->claimed = MemoryContextAllocZero(par_cxt, Max(np, 1) * sizeof(bool));
	pe->log = MemoryContextAllocZero(par_cxt,
									 Max(np, 1) * sizeof(SfParLaneLog));
	pe->sequenced = false;
}

/*
 * sf_persist_open for a parallel pipeline (persist.c): the head's
 * pipeline, or NULL if name is not a parallel pipeline (the serial path
 * goes on; it also raises 42704 for an unknown name).
 */
SfPipeline *
sf_par_open(const char *name, bool for_write)
{
	SfParEntry *pe = sf_par_lookup(name, false);
	SfPrivilege required = for_write ? SF_PRIV_INGEST : SF_PRIV_READ;
	MemoryContext callercxt = CurrentMemoryContext;
	SfSavedUser saved;
	SfRowInfo	row = {0};
	SfPipelineDef def;
	Datum		arg;

	/* after this transaction's drop or restore of it (exclusive.c) */
	if (pe != NULL && pe->excl != NULL)
		sf_par_exclusive_check_open(pe, for_write);

	/* a write call of a transaction that writes it already */
	if (for_write && pe != NULL && pe->txn != NULL && pe->head != NULL &&
		pe->dropped_subid == InvalidSubTransactionId)
	{
		if (pe->lost)
			sf_par_moved_error(pe, "A catch-up of this transaction's view of the pipeline failed.");
		sf_acl_check(&pe->acl, name, GetUserId(), required);
		sf_persist_check_writable(name);
		par_mark(pe);
		return pe->head->p;
	}

	sf_become_owner(&saved);
	SPI_connect();
	if (!par_is_parallel(name))
	{
		SPI_finish();
		sf_restore_user(&saved);
		return NULL;
	}
	if (!IsInParallelMode())
		CommandCounterIncrement();
	PushActiveSnapshot(GetTransactionSnapshot());
	arg = CStringGetTextDatum(name);
	sf_exec(PLAN_OPEN_READ, &arg, NULL, true, SPI_OK_SELECT);
	if (SPI_processed != 1)
	{
		PopActiveSnapshot();
		SPI_finish();
		sf_restore_user(&saved);
		/* kept while this transaction wrote it: a rollback may need it */
		if (pe != NULL && pe->txn == NULL && pe->excl == NULL)
			par_forget(pe);
		return NULL;			/* the serial path raises 42704 */
	}
	sf_read_row(&row, true, callercxt);
	sf_acl_check(&row.acl, name, saved.userid, required);
	if (for_write)
		sf_persist_check_writable(name);

	pe = sf_par_lookup(name, true);
	if (pe->txn == NULL && sf_par_can_catch_up(pe, &row))
		sf_par_catch_up(pe, &row);	/* parallel_load.c */
	else if (pe->txn == NULL)
	{
		sf_load_def(name, row.id, &def);
		if (def.writers != SF_WRITERS_PARALLEL)
		{
			/* dropped and created again as a serial pipeline */
			PopActiveSnapshot();
			SPI_finish();
			sf_restore_user(&saved);
			par_forget(pe);
			return NULL;
		}
		sf_par_end_txn(pe, true);
		sf_par_load(pe, &def, &row, par_cxt);	/* parallel_load.c */
	}
	sf_acl_copy(&pe->acl, &row.acl, par_cxt);	/* frees the old grants */
	PopActiveSnapshot();
	SPI_finish();
	sf_restore_user(&saved);

	if (for_write)
	{
		if (pe->txn == NULL)
			par_begin(pe);
		par_mark(pe);
	}
	return pe->head->p;
}

/* The entry of p, opened for writing in this transaction */
static SfParEntry *
par_writing(SfPipeline *p)
{
	SfParEntry *pe = sf_par_lookup(p->def.name, false);

	if (pe == NULL || pe->head == NULL || pe->head->p != p || pe->txn == NULL)
		elog(ERROR, "streamforge: pipeline \"%s\" was not opened for writing",
			 p->def.name);
	return pe;
}

/* The head of parallel pipeline p as sf_persist_open returned it */
static SfParEntry *
par_of(const SfPipeline *p)
{
	SfParEntry *pe = sf_par_lookup(p->def.name, false);

	if (pe == NULL || pe->head == NULL || pe->head->p != p)
		elog(ERROR, "streamforge: pipeline \"%s\" is not open", p->def.name);
	return pe;
}

/* ----------------------------------------------------------------
 * Write calls
 * ----------------------------------------------------------------
 */

/*
 * Claim lane i for the transaction (design 4.4, 3), once, and catch the
 * head up to the latest committed version: the lane's committed
 * deliveries are then all in it before the transaction's first one there
 * (its offsets, replays and duplicates are the serial run's)
 */
static void
par_claim(SfParEntry *pe, int i)
{
	if (pe->claimed[i])
		return;
	sf_claim_lock(pe->name, pe->id, i, pe->head->p->def.partitions[i]);
	pe->claimed[i] = true;
	sf_par_sync_latest(pe, NULL, false);	/* parallel_load.c */
}

/* Keep delivery d (with its measures mv, or NULL) for lane i's row */
static void
par_log(SfParEntry *pe, int i, const SfDelivery *d, const int64 *mv)
{
	SfParLaneLog *lg = &pe->log[i];
	const SfMeasuresDef *md = pe->head->p->def.measures;
	MemoryContext old = MemoryContextSwitchTo(pe->txn->cxt);
	SfDelivery *c;
	char	   *s;

	if (lg->n == lg->cap)
	{
		lg->cap = Max(16, 2 * lg->cap);
		lg->ds = lg->ds == NULL ? palloc(lg->cap * sizeof(SfDelivery)) :
			repalloc_huge(lg->ds, lg->cap * sizeof(SfDelivery));
		if (md != NULL)
			lg->mv = lg->mv == NULL ?
				palloc(lg->cap * md->width * sizeof(int64)) :
				repalloc_huge(lg->mv, lg->cap * md->width * sizeof(int64));
	}
	c = &lg->ds[lg->n];
	*c = *d;
	c->partition = pe->head->p->def.partitions[i];
	s = palloc(d->event_id_len + d->key_len + 2);
	memcpy(s, d->event_id, d->event_id_len);
	s[d->event_id_len] = '\0';
	c->event_id = s;
	memcpy(s + d->event_id_len + 1, d->key, d->key_len);
	s[d->event_id_len + 1 + d->key_len] = '\0';
	c->key = s + d->event_id_len + 1;
	if (md != NULL)
		memcpy(lg->mv + (Size) lg->n * md->width, mv,
			   md->width * sizeof(int64));
	lg->n++;
	MemoryContextSwitchTo(old);
}

/*
 * Deliver ds[0 .. n) to parallel pipeline p, opened for writing (design
 * 4.4): per delivery check(arg, i) (the caller's checks of its fields),
 * the claim of its lane, its offset if assign, the engine's delivery path
 * (sf_txn_ingest), and the delivery kept for the lane's row.  mv: the
 * measures, width words per delivery, or NULL.  Returns the number of
 * events accepted (new, not late against the transaction's view).
 */
int64
sf_persist_parallel_ingest(SfPipeline *p, SfDelivery *ds, int n,
						   const int64 *mv, bool assign,
						   SfParCheck check, void *arg)
{
	SfParEntry *pe = par_writing(p);
	SfTxn	   *t = pe->txn;
	int64		accepted = (t->unique - t->late);
	const SfMeasuresDef *md = p->def.measures;
	int			np = p->def.npartitions;
	int		   *lanes = palloc_extended(Max(n, 1) * sizeof(int),
										MCXT_ALLOC_HUGE);
	bool	   *named = palloc0(Max(np, 1) * sizeof(bool));
	const char *last = NULL;
	int			last_i = -1;

	/*
	 * Every lane the call delivers to is claimed first, in lane order
	 * (design 8.1), so that one call never waits downward.  The caller's
	 * checks run here, before a partition is read (a bad delivery's fields
	 * are not set); so a bad delivery's error comes before the engine's
	 * errors of the deliveries before it, and the call fails either way.
	 */
	for (int k = 0; k < n; k++)
	{
		CHECK_FOR_INTERRUPTS();
		if (check != NULL)
			check(arg, k);
		if (k == 0 || ds[k].partition != last)
		{
			last = ds[k].partition;
			last_i = sf_partition_index(&p->def, last);
		}
		lanes[k] = last_i;
		if (last_i >= 0)
			named[last_i] = true;
	}
	for (int i = 0; i < np; i++)
		if (named[i])
			par_claim(pe, i);

	for (int k = 0; k < n; k++)
	{
		SfDelivery *d = &ds[k];
		const int64 *m = md == NULL ? NULL : mv + (Size) k * md->width;
		int			i = lanes[k];

		CHECK_FOR_INTERRUPTS();
		if (check != NULL)
			check(arg, k);
		if (i >= 0)
		{
			par_claim(pe, i);
			if (assign)
				d->source_offset = pe->head->lanes[i]->partitions[i].consumed + 1;
		}
		else if (assign)
			d->source_offset = 0;
		/* raises the engine's errors, an unknown partition first */
		if (md != NULL)
			sf_txn_ingest_measures(t, d, m);
		else
			sf_txn_ingest(t, d);
		par_log(pe, i, d, m);
	}
	pfree(lanes);
	pfree(named);
	sf_txn_end_call(t);
	return (t->unique - t->late) - accepted;
}

/*
 * lock_pipelines on parallel pipeline p, opened for writing: claim the
 * lanes of the partitions marked in named (npartitions flags), in lane
 * order (design 8.1)
 */
void
sf_persist_parallel_lock(SfPipeline *p, const bool *named)
{
	SfParEntry *pe = par_writing(p);

	for (int i = 0; i < p->def.npartitions; i++)
	{
		CHECK_FOR_INTERRUPTS();
		if (named[i])
			par_claim(pe, i);
	}
}

/* advance, mark_idle and finish on parallel pipeline p (design 6.3) */
void
sf_persist_parallel_advance(SfPipeline *p, const char *partition,
							int64 progress)
{
	SfParEntry *pe = par_writing(p);

	sf_txn_advance(pe->txn, partition, progress);
	sf_txn_end_call(pe->txn);
	sf_activity_note(p->def.name, partition, true);	/* activity.c */
}

void
sf_persist_parallel_mark_idle(SfPipeline *p, const char *partition)
{
	SfParEntry *pe = par_writing(p);

	sf_txn_mark_idle(pe->txn, partition);
	sf_txn_end_call(pe->txn);
}

void
sf_persist_parallel_finish(SfPipeline *p)
{
	SfParEntry *pe = par_writing(p);

	sf_txn_finish(pe->txn);
	sf_txn_end_call(pe->txn);
}

/*
 * The checkpoint of parallel pipeline p, as sf_persist_open returned it:
 * head and lanes merged into the serial form (design 6.7).  Refused in a
 * transaction that wrote it: its lanes hold deliveries its head does not.
 */
bytea *
sf_persist_parallel_checkpoint(SfPipeline *p)
{
	SfParEntry *pe = par_of(p);

	if (pe->txn != NULL)
		ereport(ERROR,
				errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				errmsg("cannot take the checkpoint of parallel pipeline \"%s\" in a transaction that wrote it",
					   p->def.name),
				errhint("Take it after the transaction commits."));
	return sf_head_checkpoint_encode(pe->head);
}

/*
 * stats() of parallel pipeline p, as sf_persist_open returned it: the
 * head's counters with the deliveries, identities and offset replays of
 * its lanes (design 4.2), as sf_get_stats counts them for the serial form
 * (no retention, no recompute in parallel mode)
 */
void
sf_persist_parallel_stats(SfPipeline *p, SfStats *s)
{
	SfHead	   *h = par_of(p)->head;
	int64		deliveries = 0;
	int64		replays = 0;

	sf_get_stats(h->p, s);
	for (int i = 0; i < p->def.npartitions; i++)
	{
		deliveries += h->lanes[i]->partitions[i].consumed + 1;
		replays += h->lanes[i]->offset_replays;
	}
	s->deliveries = deliveries;
	s->remembered_offsets = deliveries;
	s->remembered_identities = (int64) h->fp->n;
	s->accepted = (int64) h->fp->n - s->late_events;
	s->duplicate_ids = deliveries - (int64) h->fp->n;
	s->offset_replays = replays;
}

/* The consumed offset of partition i of parallel pipeline p (its lane's) */
int64
sf_persist_parallel_consumed(SfPipeline *p, int i)
{
	SfHead	   *h = par_of(p)->head;

	return h->lanes[i]->partitions[i].consumed;
}

/* ----------------------------------------------------------------
 * Transaction callbacks
 * ----------------------------------------------------------------
 */

/*
 * The end of a transaction: a commit keeps the heads the sequencer
 * advanced, anything else discards the heads the transaction changed
 */
void
sf_par_xact_callback(XactEvent event, void *arg)
{
	HASH_SEQ_STATUS status;
	SfParEntry *pe;
	bool		commit;

	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
			commit = true;
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			commit = false;
			break;
		default:
			return;
	}
	par_sequencing = false;
	if (par_hash == NULL)
		return;
	hash_seq_init(&status, par_hash);
	while ((pe = hash_seq_search(&status)) != NULL)
	{
		pe->excl = NULL;		/* in TopTransactionContext (exclusive.c) */
		if (pe->catching)
		{
			/* a catch-up failed half-way (parallel_load.c) */
			pe->catching = false;
			sf_par_end_txn(pe, true);
			continue;
		}
		if (pe->restored)
		{
			pe->restored = false;
			if (!commit)
				sf_par_end_txn(pe, true);
		}
		if (pe->txn == NULL)
			continue;
		sf_par_end_txn(pe, !(commit && pe->sequenced));
	}
}

/* Rebuild lane i of h from its identities up to offset upto */
static SfPipeline *
par_rebuild_lane(SfHead *h, int i, int64 upto, int64 replays)
{
	SfPipeline *old = h->lanes[i];
	SfPartition *part = &old->partitions[i];
	SfPipeline *n = sf_pipeline_create(h->cxt, &old->def);

	for (int64 o = 0; o <= upto; o++)
	{
		SfIdentity *id = sf_id_ptr(old, part->deliveries[part->head + o]);
		uint32		hd;
		SfIdentity *nid = sf_idtable_lookup(n, id->event_id, id->event_id_len,
											sf_hash_event_id(id->event_id,
															 id->event_id_len),
											&hd);

		if (nid == NULL)
		{
			nid = sf_identity_add(n, id->event_id, id->event_id_len,
								  sf_intern_key(n, id->key->data,
												id->key->len),
								  id->event_time, id->value, id->late, &hd);
			nid->foreign = id->foreign;
			if (n->def.measures != NULL)
				memcpy(sf_id_measures(n, nid), sf_id_measures(old, id),
					   (1 + n->def.measures->width) * sizeof(int64));
		}
		sf_partition_append(n, i, hd);
	}
	n->offset_replays = replays;
	return n;
}

/*
 * A subtransaction's abort takes every transaction that wrote in it (or a
 * child) back to its mark: the log, the lanes, the claims (the lock
 * manager released the claims taken since)
 */
void
sf_par_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						SubTransactionId parentSubid, void *arg)
{
	HASH_SEQ_STATUS status;
	SfParEntry *pe;

	if (event != SUBXACT_EVENT_ABORT_SUB || par_hash == NULL ||
		par_sequencing)
		return;
	hash_seq_init(&status, par_hash);
	while ((pe = hash_seq_search(&status)) != NULL)
	{
		SfParMark  *m = NULL;
		int			k;
		int			np;

		if (pe->catching)
		{
			/* a catch-up failed half-way (parallel_load.c) */
			pe->catching = false;
			if (pe->txn == NULL)
				sf_par_end_txn(pe, true);
			else
				pe->lost = true;
		}
		if (pe->excl != NULL)
			sf_par_exclusive_subabort(pe, mySubid);
		if (pe->txn == NULL || pe->head == NULL)
			continue;
		if (pe->dropped_subid != InvalidSubTransactionId &&
			pe->dropped_subid >= mySubid)
			pe->dropped_subid = InvalidSubTransactionId;	/* undone */
		for (k = 0; k < pe->nmarks; k++)
			if (pe->marks[k].subid >= mySubid)
			{
				m = &pe->marks[k];
				break;
			}
		if (m == NULL)
			continue;
		np = pe->head->p->def.npartitions;
		sf_txn_rollback_to(pe->txn, m->txn);
		for (int i = 0; i < np; i++)
		{
			SfPipeline *lane = pe->head->lanes[i];

			if (lane->partitions[i].consumed != m->consumed[i] ||
				lane->offset_replays != m->replays[i])
				sf_head_replace_lane(pe->head, pe->txn, i,
									 par_rebuild_lane(pe->head, i,
													  m->consumed[i],
													  m->replays[i]));
			pe->log[i].n = m->nlog[i];
			pe->claimed[i] = m->claimed[i];
		}
		pe->nmarks = k;
	}
}

/* The sequencer runs (sequencer.c): no subtransaction of its is a mark's */
void
sf_par_sequencing(bool on)
{
	par_sequencing = on;
}
