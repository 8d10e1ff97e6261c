/*-------------------------------------------------------------------------
 *
 * sequencer.c
 *	  The sequencer of parallel pipelines: a writer's transaction applied
 *	  to the head at pre-commit, under the head lock (issue 46,
 *	  docs/design/parallel-writers.md, section 4.5; build plan steps 4-5).
 *
 * Run by the pre-commit driver (precommit.c) after the buffered journal
 * and the activity flush and before the notifications, for every parallel
 * pipeline the transaction wrote, in name order (design 8.1).  For each:
 *
 *	1. catch the head up with the transactions committed since it was last
 *	   caught up (parallel_load.c), without the lock, and again after each
 *	   commit that held the lock when it was asked for (lock_head), so
 *	   that nothing is left for step 2 in the common case;
 *	2. take the head lock (sf_par_head_tag, transaction-level, released
 *	   after the commit is visible: design 7.1), catch up the rest, and
 *	   bump the row's version, with the latest snapshot whatever the
 *	   isolation level (catalog.c's sf_latest_writes); a compaction or
 *	   restore committed since the base cannot be caught up: the
 *	   transaction is re-executed on the state loaded anew
 *	   (parallel_load.c's par_reexecute), or fails with 40001;
 *	3. apply the transaction to the head (sf_head_commit): when the head
 *	   moved since the base, the collisions the catch-ups' probes found
 *	   (a duplicate, or SF002) and the decisions checked against the
 *	   committed clock and made again where one differs (design 4.5, 4
 *	   and 7a; 22003 and 54000 as the serial run raises them); then the
 *	   delta and the log in call order, which numbers seq and late_seq;
 *	4. write the outputs call by call (sf_sink_emit_calls: changelog,
 *	   results, late output, one notification per call kept for
 *	   notify.c), each lane's row of the transaction's deliveries
 *	   (format 3) and its K entry (format 6) when not empty, and the head
 *	   entry (format 5);
 *	5. compact when the rows since the snapshots passed the limit of the
 *	   serial journal (persist.c's compaction_limit): the head snapshot
 *	   and every lane's, taken together, replace the journals (design 6.6;
 *	   all lanes are loaded in step 4, so the head compacts with them).
 *
 *	6. run the transaction's exclusive operations on the pipeline
 *	   (restore, drop, grants, compact: exclusive.c), recorded at their
 *	   calls, under the head lock (run_exclusive).
 *
 * Also here: the lanes of a new parallel pipeline
 * (sf_persist_parallel_create).
 *
 * An error anywhere aborts the transaction; parallel.c's callback then
 * discards the head, which the sequencer may have changed half-way.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/sequencer.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/lock.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "codec/codec.h"
#include "engine/engine.h"
#include "engine/parallel.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

static SPIPlanPtr seq_plans[4];

static const SfPlanText lane_create_text = {
	"INSERT INTO streamforge.lane (pipeline_id, lane, partition, version, "
	"snapshot_version) "
	"SELECT p.id, g OPERATOR(pg_catalog.-) 1, ($2::pg_catalog.text[])[g], 0, 0 "
	"FROM streamforge.pipeline p, "
	"pg_catalog.generate_series(1, pg_catalog.cardinality($2::pg_catalog.text[])) g "
	"WHERE p.name OPERATOR(pg_catalog.=) $1",
	2, {TEXTOID, TEXTARRAYOID}
};

static const SfPlanText lane_put_text = {
	"INSERT INTO streamforge.lane_journal (pipeline_id, lane, pos, entry) "
	"VALUES ($1, $2, $3, $4)",
	4, {INT8OID, INT4OID, INT8OID, BYTEAOID}
};

static const SfPlanText lane_snapshot_text = {
	"UPDATE streamforge.lane SET snapshot = $3, snapshot_version = $4, "
	"offset_replays_base = $5, last_pos = 0 "
	"WHERE pipeline_id OPERATOR(pg_catalog.=) $1 "
	"AND lane OPERATOR(pg_catalog.=) $2",
	5, {INT8OID, INT4OID, BYTEAOID, INT8OID, INT8OID}
};

static const SfPlanText lane_clear_text = {
	"DELETE FROM streamforge.lane_journal "
	"WHERE pipeline_id OPERATOR(pg_catalog.=) $1",
	1, {INT8OID}
};

/*
 * buf, as the encoders leave it (codec.h), as lane lane's next row.
 * Caller is connected to SPI as the owner.
 */
static void
put_lane_row(SfParEntry *pe, int lane, StringInfo buf)
{
	Datum		values[4];

	SET_VARSIZE(buf->data, buf->len);
	values[0] = Int64GetDatum(pe->id);
	values[1] = Int32GetDatum(lane);
	values[2] = Int64GetDatum(pe->lane_pos[lane] + 1);
	values[3] = PointerGetDatum(buf->data);
	sf_run_plan(&seq_plans[0], &lane_put_text, values, NULL, false,
				SPI_OK_INSERT);
	pe->lane_pos[lane]++;
	pe->journal_bytes += buf->len - VARHDRSZ;
	pfree(buf->data);
}

/*
 * Each lane's row of the transaction's deliveries (format 3), unless
 * written already: before the head lock, as it depends only on the lane,
 * which the transaction's claim keeps to it (design 4.4), and whose
 * positions are its own.  A catch-up reads a lane's rows after pe's
 * position, which the row moved past; a compaction or restore by another
 * writer meanwhile does not see the row (uncommitted), but moves the
 * lane's positions: the re-execution that follows at commit deletes the
 * rows first (parallel_load.c's discard_early_rows) and the sequencer
 * writes them again under the lock.
 */
pg_noinline static void
put_delivery_rows(SfParEntry *pe)
{
	SfHead	   *h = pe->head;
	const SfMeasuresDef *md = h->p->def.measures;
	int			np = h->p->def.npartitions;
	SfSavedUser saved;
	StringInfoData buf;

	sf_become_owner(&saved);
	SPI_connect();
	for (int i = 0; i < np; i++)
	{
		SfParLaneLog *lg = &pe->log[i];
		SfDeliveryHash *hs;

		if (lg->n == 0 || lg->early_pos != 0)
			continue;
		hs = palloc0(lg->n * sizeof(SfDeliveryHash));
		for (int k = 0; k < lg->n; k++)
			hs[k].partition = i;
		if (md != NULL)
			sf_journal_encode_ingest_measures(&buf, h->lanes[i], lg->ds, hs,
											  lg->n, lg->mv);
		else
			sf_journal_encode_ingest(&buf, h->lanes[i], lg->ds, hs, lg->n);
		lg->early_pos = pe->lane_pos[i] + 1;
		put_lane_row(pe, i, &buf);
		pfree(hs);
	}
	SPI_finish();
	sf_restore_user(&saved);
}

/*
 * The head and every lane of pe as their snapshots, taken in the row
 * version version (which the caller's transaction wrote), and the
 * journals emptied (design 6.6).  Caller holds the head lock.
 */
void
sf_par_store_snapshots(SfParEntry *pe, int64 version)
{
	SfHead	   *h = pe->head;
	int			np = h->p->def.npartitions;
	Datum		values[5];
	Datum		arg = Int64GetDatum(pe->id);
	SfSavedUser saved;
	bytea	   *snap;
	int64		len;

	sf_become_owner(&saved);
	SPI_connect();
	snap = sf_head_snapshot_encode(h);
	len = VARSIZE(snap) - VARHDRSZ;
	values[0] = arg;
	values[1] = PointerGetDatum(snap);
	values[2] = Int64GetDatum(0);
	sf_exec(PLAN_SNAPSHOT_PUT, values, NULL, false, SPI_OK_UPDATE_RETURNING);
	if (SPI_processed != 1)
		elog(ERROR, "streamforge: pipeline \"%s\" vanished", pe->name);
	sf_exec(PLAN_JOURNAL_CLEAR, &arg, NULL, false, SPI_OK_DELETE);
	for (int i = 0; i < np; i++)
	{
		bytea	   *l = sf_lane_snapshot_encode(h, i);

		CHECK_FOR_INTERRUPTS();
		len += VARSIZE(l) - VARHDRSZ;
		values[0] = arg;
		values[1] = Int32GetDatum(i);
		values[2] = PointerGetDatum(l);
		values[3] = Int64GetDatum(version);
		values[4] = Int64GetDatum(h->lanes[i]->offset_replays);
		sf_run_plan(&seq_plans[1], &lane_snapshot_text, values, NULL, false,
					SPI_OK_UPDATE);
		if (SPI_processed != 1)
			elog(ERROR, "streamforge: lane %d of pipeline \"%s\" vanished",
				 i, pe->name);
		pfree(l);
		pe->lane_pos[i] = 0;
	}
	sf_run_plan(&seq_plans[2], &lane_clear_text, &arg, NULL, false,
				SPI_OK_DELETE);
	SPI_finish();
	sf_restore_user(&saved);
	pe->snapshot_version = version;
	pe->snapshot_len = len;
	pe->head_pos = 0;
	pe->journal_bytes = 0;
}

/*
 * sf_par_sync_latest (re-executing if need be), saying at DEBUG1 when it
 * caught up commits under the head lock tag (isolation:parallel_headlock)
 */
static void
sync_head(SfParEntry *pe, const LOCKTAG *tag, SfAcl *acl)
{
	int64		before = pe->version;
	bool		locked = LockHeldByMe(tag, ExclusiveLock);

	sf_par_sync_latest(pe, acl, true);
	if (locked && pe->version != before)
		elog(DEBUG1, "streamforge: parallel pipeline \"%s\": commits caught up under the head lock",
			 pe->name);
}

/*
 * Take the head lock of pe (tag) with as little as possible left to catch
 * up under it (design 4.5, 1-2): catch up without the lock, then take it
 * only if it is free at once; if it is busy, wait until its holder has
 * committed, let it go again, and catch up with that commit outside the
 * lock too.  After SF_HEAD_TRIES busy rounds wait and keep it, as before:
 * the caller catches up the rest under the lock.  Safe either way: nothing
 * done here is more than a catch-up, and the caller's check of the row's
 * version under the lock decides.  A commit that lands between the last
 * catch-up here and a lock taken at once is caught up by the caller, under
 * the lock (rare: it had to take and release the lock in that window).
 */
#define SF_HEAD_TRIES 4

pg_noinline static void
lock_head(SfParEntry *pe, const LOCKTAG *tag)
{
	for (int round = 0;; round++)
	{
		sync_head(pe, tag, NULL);
		if (round == SF_HEAD_TRIES)
			break;
		if (LockAcquire(tag, ExclusiveLock, false, true) != LOCKACQUIRE_NOT_AVAIL)
			return;
		/* busy: wait for its holder's commit (the one wait decision) */
		sf_par_lock(tag);
		LockRelease(tag, ExclusiveLock, false);
	}
	sf_par_lock(tag);
}

/* Sequence pe's transaction (the file header has the steps) */
static void
sequence(SfParEntry *pe)
{
	SfTxn	   *t = pe->txn;
	SfHead	   *h;
	const SfPipelineDef *def;
	SfChangeList out = {0};
	LOCKTAG		tag;
	SfSavedUser saved;
	SfAcl		acl;
	Datum		arg;
	Datum		values[3];
	StringInfoData buf;
	int64		version;
	int64		late_before;
	bool		isnull;

	/*
	 * nothing to commit: no lock, no version; or dropped by the transaction
	 * itself, which takes its writes with it (the head goes at the end)
	 */
	if (pe->dropped_subid != InvalidSubTransactionId)
		return;
	if (t->nops == 0 && t->deliveries == 0)
	{
		pe->sequenced = true;
		return;
	}

	/* the lane rows, then catch up without the lock */
	put_delivery_rows(pe);
	sf_par_head_tag(&tag, pe->id);
	lock_head(pe, &tag);

	/*
	 * Nothing commits to the pipeline from here, so its rows' latest
	 * versions stay ours to write: the statements run with the latest
	 * snapshot (design 4.5, 6), also under REPEATABLE READ and SERIALIZABLE,
	 * where the transaction's snapshot predates the commits caught up with
	 * (sf_latest_writes; reset by sf_sequencer_run_all on error).
	 */
	PushActiveSnapshot(GetLatestSnapshot());
	sf_latest_writes(true);

	/*
	 * and the rest.  A revoke committed since the calls fails the commit
	 * (design 4.5, 3), as the calls of a serial writer after it would have
	 * failed.
	 */
	sync_head(pe, &tag, &acl);
	sf_acl_check(&acl, pe->name, pe->writer, SF_PRIV_INGEST);
	/* the head now, as a re-execution may have replaced it */
	h = pe->head;
	def = &h->p->def;
	sf_become_owner(&saved);
	SPI_connect();
	arg = CStringGetTextDatum(pe->name);
	sf_exec(PLAN_OPEN_WRITE, &arg, NULL, false, SPI_OK_UPDATE_RETURNING);
	if (SPI_processed != 1)
		sf_unknown_pipeline(pe->name);
	version = sf_getint64(3, &isnull);
	if (sf_getint64(2, &isnull) != pe->id || version - 1 != pe->version)
		sf_par_moved_error(pe, "Another transaction committed to it without its head lock.");
	SPI_finish();
	sf_restore_user(&saved);

	late_before = sf_late_keep(h->p);
	sf_head_commit(h, t, &out);
	/* the outputs and notifications call by call, as serial writes them */
	sf_sink_emit_calls(h->p, &out, t->ncalls, t->call_end, t->call_seq,
					   t->call_late, late_before);

	/* each lane's deliveries (discarded by a re-execution), then its K entry */
	put_delivery_rows(pe);
	sf_become_owner(&saved);
	SPI_connect();
	for (int k = 0; k < t->entry->nlanes; k++)
	{
		int			lane = t->entry->lanes[k].lane;

		if (sf_lane_k_encode(&buf, h, t, t->entry, lane))
			put_lane_row(pe, lane, &buf);
	}
	sf_head_entry_encode(&buf, def, t->entry);
	SET_VARSIZE(buf.data, buf.len);
	values[0] = Int64GetDatum(pe->id);
	values[1] = Int64GetDatum(pe->head_pos + 1);
	values[2] = PointerGetDatum(buf.data);
	sf_exec(PLAN_JOURNAL_PUT, values, NULL, false, SPI_OK_INSERT);
	pe->head_pos++;
	pe->journal_bytes += buf.len - VARHDRSZ;
	pfree(buf.data);
	SPI_finish();
	sf_restore_user(&saved);

	pe->version = version;
	pe->sequenced = true;

	/* compaction, as the serial journal's limit says (persist.c) */
	{
		int64		limit = sf_compaction_limit_bytes(pe->snapshot_len);

		if (limit >= 0 && pe->journal_bytes > limit)
			sf_par_store_snapshots(pe, version);
	}
	sf_latest_writes(false);
	PopActiveSnapshot();
}

/*
 * Store the lanes of a new parallel pipeline (design 4.3), one per
 * partition, numbered by the partition's index in the definition.
 * Caller has stored its row in this transaction.
 */
void
sf_persist_parallel_create(const SfPipelineDef *def)
{
	Datum		values[2];
	Datum	   *parts = palloc(Max(def->npartitions, 1) * sizeof(Datum));
	SfSavedUser saved;

	for (int i = 0; i < def->npartitions; i++)
		parts[i] = CStringGetTextDatum(def->partitions[i]);
	values[0] = CStringGetTextDatum(def->name);
	values[1] = PointerGetDatum(construct_array(parts, def->npartitions,
												TEXTOID, -1, false,
												TYPALIGN_INT));
	sf_become_owner(&saved);
	SPI_connect();
	sf_run_plan(&seq_plans[3], &lane_create_text, values, NULL, false,
				SPI_OK_INSERT);
	if (SPI_processed != (uint64) def->npartitions)
		elog(ERROR, "streamforge: the lanes of pipeline \"%s\" were not stored",
			 def->name);
	SPI_finish();
	sf_restore_user(&saved);
}

/*
 * The exclusive operations of the transaction on pe (exclusive.c), after
 * its own writes were sequenced: the head lock (held already if it wrote
 * pe), then each action in call order, with the latest snapshot active
 * and the statements that write using it (the head lock keeps every other
 * sequencer out; design 8.1).  A drop ends the list: the pipeline is gone.
 */
static void
run_exclusive(SfParEntry *pe)
{
	LOCKTAG		tag;

	if (pe->excl == NULL || pe->excl->first == NULL)
		return;
	sf_par_head_tag(&tag, pe->id);
	sf_par_lock(&tag);
	/* reset by sf_sequencer_run_all on error */
	sf_latest_writes(true);
	PushActiveSnapshot(GetLatestSnapshot());
	for (SfParExclAct *a = pe->excl->first; a != NULL; a = a->next)
	{
		CHECK_FOR_INTERRUPTS();
		a->fn(pe, a->arg);
		if (a->op == SF_EXCL_DROP)
			break;
	}
	sf_latest_writes(false);
	PopActiveSnapshot();
}

/*
 * The sequencers of the transaction's parallel pipelines, in name order
 * (precommit.c)
 */
void
sf_sequencer_run_all(void)
{
	int			n;
	SfParEntry **all;

	if (sf_par_count() == 0)
		return;
	all = sf_par_open_txns(&n);
	if (n == 0)
		return;
	sf_par_sequencing(true);
	/* pre-commit runs no statement: the sequencers' statements need one */
	PushActiveSnapshot(GetTransactionSnapshot());
	PG_TRY();
	{
		for (int i = 0; i < n; i++)
		{
			if (all[i]->txn != NULL)
				sequence(all[i]);
			run_exclusive(all[i]);
		}
	}
	PG_FINALLY();
	{
		sf_latest_writes(false);
	}
	PG_END_TRY();
	PopActiveSnapshot();
	sf_par_sequencing(false);
	if (all != NULL)
		pfree(all);
}
