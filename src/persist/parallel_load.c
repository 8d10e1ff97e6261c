/*-------------------------------------------------------------------------
 *
 * parallel_load.c
 *	  A parallel pipeline's head and lanes brought to a committed version in
 *	  a backend: loaded from the snapshots and journals, or caught up from
 *	  the journal rows committed since the version it holds (issue 46,
 *	  docs/design/parallel-writers.md, sections 4.4-4.5; build plan steps
 *	  4 and 5).
 *
 * A committed state is named by the pipeline row's version (parallel.c's
 * header says why).  Every committed transaction adds, under the head
 * lock, one row per lane it delivered to (format 3), a K row after it when
 * not empty (format 6), and one head entry (format 5), and bumps the
 * version by one; a compaction or a restore stores new snapshots and
 * empties the journals, and bumps the snapshot version.  So a head at
 * version v reaches a later version v' of the same snapshot version by
 * the lane rows after the positions it includes, then the v' - v head
 * entries after its head position: catching up (sf_par_catch_up).  Across
 * a snapshot version, or after a drop, only a load reaches it
 * (sf_par_load).
 *
 * An open transaction's head is caught up, never loaded (its lanes hold
 * its deliveries): at each claim of a lane, so that the lane is the
 * committed one before the transaction's first delivery there (design
 * 4.4, 3), and by the sequencer before and under the head lock (design
 * 4.5, steps 1 and 3).  The lanes it delivered to receive no rows: its
 * claims exclude every other writer of them.  Each head entry applied
 * also probes the transaction's new ids (design 5.2: a hit is a collision,
 * confirmed exactly by sf_head_commit).  A snapshot version that moved
 * since the head's (a compaction or a restore committed since its base)
 * cannot be caught up: the commit re-executes the transaction on a head
 * loaded anew (par_reexecute, design 4.5 7b); a claim fails with 40001.
 *
 * Errors: a catch-up that fails half-way leaves a half-changed head.
 * pe->catching says so to parallel.c's callbacks: an abort discards the
 * head; a subtransaction abort in an open transaction marks it lost, and
 * its commit then fails.
 *
 * Memory: a load builds the head under CurTransactionContext and moves it
 * under parallel.c's context once complete; a catch-up adds to the head's
 * contexts; the load maps and decoded rows live in the caller's context.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/parallel_load.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "codec/codec.h"
#include "engine/engine.h"
#include "engine/parallel.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

/* the K entry's format byte (codec/parallel_codec.c) */
#define SF_LANE_K_FORMAT	6

static SPIPlanPtr load_plans[3];

static const SfPlanText lanes_text = {
	"SELECT lane, snapshot, offset_replays_base FROM streamforge.lane "
	"WHERE pipeline_id OPERATOR(pg_catalog.=) $1 ORDER BY lane",
	1, {INT8OID}
};

static const SfPlanText lane_rows_text = {
	"SELECT lane, pos, entry FROM streamforge.lane_journal "
	"WHERE pipeline_id OPERATOR(pg_catalog.=) $1 ORDER BY lane, pos",
	1, {INT8OID}
};

/* the rows of each lane after position $2[lane + 1] */
static const SfPlanText lane_rows_since_text = {
	"SELECT lane, pos, entry FROM streamforge.lane_journal "
	"WHERE pipeline_id OPERATOR(pg_catalog.=) $1 "
	"AND pos OPERATOR(pg_catalog.>) "
	"($2::pg_catalog.int8[])[lane OPERATOR(pg_catalog.+) 1] "
	"ORDER BY lane, pos",
	2, {INT8OID, INT8ARRAYOID}
};


static bytea *
tuple_bytea(int row, int col)
{
	bool		isnull;
	Datum		d = SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc,
								  col, &isnull);

	return isnull ? NULL : DatumGetByteaPP(d);
}

static int64
tuple_int64(int row, int col)
{
	bool		isnull;
	Datum		d = SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc,
								  col, &isnull);

	if (isnull)
		return 0;
	if (SPI_gettypeid(SPI_tuptable->tupdesc, col) == INT4OID)
		return DatumGetInt32(d);
	return DatumGetInt64(d);
}

/*
 * Lane i of h after the rows of the current SPI result (lane, pos, entry)
 * that are lane i's, among the first nrows: its K entries registered
 * first, then its deliveries (head_replay.c).  Raises *pos to the last
 * position, adds the bytes to *bytes.
 */
static void
lane_rows(SfHead *h, int i, uint64 nrows, int64 *pos, int64 *bytes)
{
	const SfPipelineDef *def = &h->p->def;
	SfLaneLoad	l;

	sf_lane_load_begin(&l, h->lanes[i], i);
	for (int pass = 0; pass < 2; pass++)
		for (uint64 r = 0; r < nrows; r++)
		{
			bytea	   *b;
			const char *data;
			Size		len;
			bool		k;

			if (tuple_int64(r, 1) != i)
				continue;
			CHECK_FOR_INTERRUPTS();
			b = tuple_bytea(r, 3);
			data = VARDATA_ANY(b);
			len = VARSIZE_ANY_EXHDR(b);
			k = len > 0 && (uint8) data[0] == SF_LANE_K_FORMAT;
			if (pass == 0 && k)
				sf_lane_load_k(&l, sf_lane_k_decode(def, data, len));
			else if (pass == 1 && !k)
				sf_lane_entry_replay(&l, data, len);
			if (pass == 1)
			{
				*pos = Max(*pos, tuple_int64(r, 2));
				*bytes += len;
			}
		}
	sf_lane_load_end(&l);
}

/*
 * Load pe's head and lanes at the row version of the pushed snapshot
 * (design 4.3): the head snapshot with every lane's snapshot (taken
 * together), then each lane's rows (its K entries registered first, then
 * its deliveries), then the head entries; the head then moves under cxt.
 * Caller has discarded pe's head and is connected to SPI as the owner with
 * a snapshot pushed.
 */
void
sf_par_load(SfParEntry *pe, const SfPipelineDef *def, const SfRowInfo *row,
			MemoryContext cxt)
{
	int			np = def->npartitions;
	Datum		arg = Int64GetDatum(row->id);
	const char **lanes = palloc0(Max(np, 1) * sizeof(char *));
	Size	   *lens = palloc0(Max(np, 1) * sizeof(Size));
	int64	   *replays = palloc0(Max(np, 1) * sizeof(int64));
	int64	   *lane_pos = palloc0(Max(np, 1) * sizeof(int64));
	bytea	   *head_snap;
	SfHead	   *h;
	int64		bytes = 0;
	int64		snap_len = 0;
	int64		head_pos = 0;
	uint64		nrows;
	int			nlanes = 0;

	Assert(pe->head == NULL && pe->txn == NULL);
	sf_exec(PLAN_SNAPSHOT_GET, &arg, NULL, true, SPI_OK_SELECT);
	if (SPI_processed != 1)
		elog(ERROR, "streamforge: pipeline \"%s\" vanished", def->name);
	head_snap = tuple_bytea(0, 1);
	sf_run_plan(&load_plans[0], &lanes_text, &arg, NULL, true,
				SPI_OK_SELECT);
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		int			l = (int) tuple_int64(r, 1);
		bytea	   *b = tuple_bytea(r, 2);

		if (l < 0 || l >= np)
			ereport(ERROR,
					errcode(ERRCODE_DATA_CORRUPTED),
					errmsg("lane %d of pipeline \"%s\" is out of range", l,
						   def->name));
		nlanes++;
		replays[l] = tuple_int64(r, 3);
		if (b != NULL)
		{
			lanes[l] = VARDATA_ANY(b);
			lens[l] = VARSIZE_ANY_EXHDR(b);
			snap_len += lens[l];
		}
		else if (head_snap != NULL)
			ereport(ERROR,
					errcode(ERRCODE_DATA_CORRUPTED),
					errmsg("lane %d of pipeline \"%s\" has no snapshot", l,
						   def->name));
	}
	if (nlanes != np)
		ereport(ERROR,
				errcode(ERRCODE_DATA_CORRUPTED),
				errmsg("pipeline \"%s\" has %d lanes, expected %d",
					   def->name, nlanes, np));

	/* built under the transaction: an error cannot leak it */
	if (head_snap == NULL)
		h = sf_head_create(CurTransactionContext, def);
	else
	{
		snap_len += VARSIZE_ANY_EXHDR(head_snap);
		h = sf_head_snapshot_decode(CurTransactionContext, def,
									VARDATA_ANY(head_snap),
									VARSIZE_ANY_EXHDR(head_snap), lanes, lens);
	}
	for (int i = 0; i < np; i++)
		h->lanes[i]->offset_replays = replays[i];

	/* the lanes' rows, per lane: the K entries first (head_replay.c) */
	sf_run_plan(&load_plans[1], &lane_rows_text, &arg, NULL, true,
				SPI_OK_SELECT);
	nrows = SPI_processed;
	for (int i = 0; i < np; i++)
		lane_rows(h, i, nrows, &lane_pos[i], &bytes);

	/* the head entries since the head snapshot */
	{
		Datum		args[2] = {arg, Int64GetDatum(0)};

		sf_exec(PLAN_JOURNAL_GET, args, NULL, true, SPI_OK_SELECT);
	}
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		bytea	   *b = tuple_bytea(r, 2);
		SfChangeList out = {0};

		CHECK_FOR_INTERRUPTS();
		sf_head_entry_replay(h, VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b), &out);
		head_pos = tuple_int64(r, 1);
		bytes += VARSIZE_ANY_EXHDR(b);
	}

	/* complete: the entry takes it over */
	MemoryContextSetParent(h->cxt, cxt);
	pe->head = h;
	if (pe->lane_pos != NULL)
		pfree(pe->lane_pos);
	pe->lane_pos = MemoryContextAlloc(cxt, Max(np, 1) * sizeof(int64));
	memcpy(pe->lane_pos, lane_pos, Max(np, 1) * sizeof(int64));
	pe->id = row->id;
	pe->relid = row->relid;
	pe->version = row->version;
	pe->snapshot_version = row->snapshot_version;
	pe->snapshot_len = snap_len;
	pe->head_pos = head_pos;
	pe->journal_bytes = bytes;
}


/*
 * Whether pe's head reaches the committed row row by catching up: the
 * same pipeline, the same snapshots, a version not older
 */
bool
sf_par_can_catch_up(const SfParEntry *pe, const SfRowInfo *row)
{
	return pe->head != NULL && pe->id == row->id && pe->relid == row->relid &&
		pe->snapshot_version == row->snapshot_version &&
		pe->version >= 0 && pe->version <= row->version;
}

/* Whether a new id of head entry e is one of t's (design 5.2) */
static bool
probe_new_ids(const SfTxn *t, const SfHeadEntry *e)
{
	for (int64 i = 0; i < e->nfps; i++)
	{
		SfFpCursor	c;
		uint16		lane;
		uint64		loc;

		sf_fp_start(&c, e->fps[i].hash);
		if (sf_fp_next(t->newids, &c, &lane, &loc))
			return true;
	}
	return false;
}

/*
 * Bring pe's head from its version to row's, committed since with the
 * same snapshots (sf_par_can_catch_up): the lane rows after the positions
 * it includes, then the head entries after its position, each probed
 * against the open transaction's new ids (the file header has the rules).
 * Caller is connected to SPI as the owner with a snapshot pushed that
 * sees row.
 */
void
sf_par_catch_up(SfParEntry *pe, const SfRowInfo *row)
{
	SfHead	   *h = pe->head;
	SfTxn	   *t = pe->txn;
	const SfPipelineDef *def = &h->p->def;
	int			np = def->npartitions;
	Datum	   *pos = palloc(Max(np, 1) * sizeof(Datum));
	bool	   *moved = palloc0(Max(np, 1) * sizeof(bool));
	Datum		args[2];
	uint64		nrows;
	int64		bytes = 0;
	int64		entries = 0;

	Assert(sf_par_can_catch_up(pe, row));
	if (row->version == pe->version)
		return;
	pe->catching = true;

	for (int i = 0; i < np; i++)
		pos[i] = Int64GetDatum(pe->lane_pos[i]);
	args[0] = Int64GetDatum(pe->id);
	args[1] = PointerGetDatum(construct_array(pos, np, INT8OID, 8,
											  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	sf_run_plan(&load_plans[2], &lane_rows_since_text, args, NULL, true,
				SPI_OK_SELECT);
	nrows = SPI_processed;
	for (uint64 r = 0; r < nrows; r++)
	{
		int64		l = tuple_int64(r, 1);

		if (l < 0 || l >= np)
			ereport(ERROR,
					errcode(ERRCODE_DATA_CORRUPTED),
					errmsg("lane " INT64_FORMAT " of pipeline \"%s\" is out of range",
						   l, def->name));
		moved[l] = true;
	}
	for (int i = 0; i < np; i++)
	{
		if (!moved[i])
			continue;
		/* the claim excludes other writers of a lane the transaction wrote */
		if (t != NULL && pe->log[i].n > 0)
			elog(ERROR, "streamforge: lane %d of pipeline \"%s\" moved under its claim",
				 i, def->name);
		lane_rows(h, i, nrows, &pe->lane_pos[i], &bytes);
		if (t != NULL)
		{
			/*
			 * Committed rows, not the transaction's: a savepoint's abort
			 * keeps them, and the lane's first delivery records its offset
			 * before (the head entry's lane table) from here
			 */
			for (int k = 0; k < pe->nmarks; k++)
			{
				pe->marks[k].consumed[i] = h->lanes[i]->partitions[i].consumed;
				pe->marks[k].replays[i] = h->lanes[i]->offset_replays;
			}
			if (t->lane_from != NULL)
				t->lane_from[i] = -2;
		}
	}

	/* the head entries since */
	args[1] = Int64GetDatum(pe->head_pos);
	sf_exec(PLAN_JOURNAL_GET, args, NULL, true, SPI_OK_SELECT);
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		bytea	   *b = tuple_bytea(r, 2);
		const char *data = VARDATA_ANY(b);
		Size		len = VARSIZE_ANY_EXHDR(b);
		SfChangeList out = {0};

		CHECK_FOR_INTERRUPTS();
		if (t != NULL && !t->collided)
		{
			SfHeadEntry *e = sf_head_entry_decode(def, data, len);

			if (probe_new_ids(t, e))
				t->collided = true;
		}
		sf_head_entry_replay(h, data, len, &out);
		pe->head_pos = tuple_int64(r, 1);
		bytes += len;
		entries++;
	}
	if (entries != row->version - pe->version)
		ereport(ERROR,
				errcode(ERRCODE_DATA_CORRUPTED),
				errmsg("pipeline \"%s\" has " INT64_FORMAT " head entries since version " INT64_FORMAT ", expected " INT64_FORMAT,
					   def->name, entries, pe->version,
					   row->version - pe->version));
	pe->version = row->version;
	pe->journal_bytes += bytes;
	pe->catching = false;
}

static SPIPlanPtr unput_plan;

static const SfPlanText lane_unput_text = {
	"DELETE FROM streamforge.lane_journal "
	"WHERE pipeline_id OPERATOR(pg_catalog.=) $1 "
	"AND lane OPERATOR(pg_catalog.=) $2 AND pos OPERATOR(pg_catalog.=) $3",
	3, {INT8OID, INT4OID, INT8OID}
};

/*
 * Delete the lane rows the sequencer wrote before the head lock
 * (sequencer.c's put_delivery_rows), before a re-execution's load, which
 * would find them.  Caller is connected to SPI as the owner, with a
 * snapshot pushed for the load: it is made to see the deletes (pushed
 * before them, it would not).
 */
static void
discard_early_rows(SfParEntry *pe)
{
	bool		deleted = false;
	int			np;

	if (pe->log == NULL || pe->head == NULL)
		return;
	np = pe->head->p->def.npartitions;
	for (int i = 0; i < np; i++)
	{
		Datum		values[3];

		if (pe->log[i].early_pos == 0)
			continue;
		values[0] = Int64GetDatum(pe->id);
		values[1] = Int32GetDatum(i);
		values[2] = Int64GetDatum(pe->log[i].early_pos);
		sf_run_plan(&unput_plan, &lane_unput_text, values, NULL, false,
					SPI_OK_DELETE);
		if (SPI_processed != 1)
			elog(ERROR, "streamforge: lane %d of pipeline \"%s\" lost its row at " INT64_FORMAT,
				 i, pe->name, pe->log[i].early_pos);
		pe->log[i].early_pos = 0;
		deleted = true;
	}
	if (deleted)
	{
		CommandCounterIncrement();
		UpdateActiveSnapshotCommandId();
	}
}

/*
 * The definition par_reexecute loads row with: pe's own, or the one a
 * definition change (redefine_par.c) committed since pe's transaction
 * began.  A transaction re-executes on a
 * new definition only if it delivered nothing (a definition change claims
 * every lane, so a transaction with deliveries ended before it or claimed
 * after it, which a claim refuses) and the partitions are the same (its
 * advances and idle marks name partitions by index): otherwise 40001.
 * Caller is connected to SPI as the owner with a snapshot pushed that
 * sees row.
 */
pg_noinline static const SfPipelineDef *
redefined_def(SfParEntry *pe, const SfRowInfo *row, SfPipelineDef *buf)
{
	const SfPipelineDef *def = &pe->head->p->def;
	text	   *had;
	text	   *now;

	sf_load_def(pe->name, row->id, buf);
	had = DatumGetTextPP(sf_definition_text(def));
	now = DatumGetTextPP(sf_definition_text(buf));
	if (VARSIZE_ANY_EXHDR(had) == VARSIZE_ANY_EXHDR(now) &&
		memcmp(VARDATA_ANY(had), VARDATA_ANY(now), VARSIZE_ANY_EXHDR(had)) == 0)
		return def;
	for (int64 k = 0; k < pe->txn->nops; k++)
		if (pe->txn->ops[k].kind == SF_TXN_EVENT)
			sf_par_moved_error(pe, "Its definition was changed since this transaction's first delivery.");
	for (int i = 0; i < def->npartitions; i++)
		if (pe->log != NULL && pe->log[i].n > 0)
			sf_par_moved_error(pe, "Its definition was changed since this transaction's first delivery.");
	for (int i = 0; i < def->npartitions; i++)
		if (def->npartitions != buf->npartitions ||
			strcmp(def->partitions[i], buf->partitions[i]) != 0)
			sf_par_moved_error(pe, "Its partitions were changed since this transaction's first write.");
	if (def->npartitions != buf->npartitions)
		sf_par_moved_error(pe, "Its partitions were changed since this transaction's first write.");
	return buf;
}

/*
 * Re-execute pe's open transaction on the committed state row, which a
 * catch-up cannot reach (design 4.5, 7b: a compaction or a restore
 * committed since the transaction's base emptied the journals): load the
 * head and lanes anew at row, and give the transaction the new head with
 * its own lanes in place of the loaded ones.  Its lanes are the committed
 * ones with its deliveries after them (its claims kept every other writer
 * out), so each loaded lane must be the committed part of the
 * transaction's (sf_head_adopt_lane);
 * a restore that changed one of them fails with 40001 as before.  The
 * commit then decides the whole log again on the committed clock (stale)
 * and checks every new id against the committed ones (collided): its
 * decisions, duplicates and SF002 are those of a serial run after row, as
 * a re-decide makes them (7a).  Only at commit: a write call holds the
 * head it was given.  Caller is connected to SPI as the owner with a snapshot pushed that sees
 * row.
 */
static void
par_reexecute(SfParEntry *pe, const SfRowInfo *row)
{
	SfHead	   *old = pe->head;
	SfTxn	   *t = pe->txn;
	SfPipelineDef newdef;

	/* row's definition: a definition change may be one (redefine_par.c) */
	const SfPipelineDef *def = redefined_def(pe, row, &newdef);
	int			np = def->npartitions;
	SfHead	   *h;

	pe->catching = true;
	/* the load must not find the transaction's own rows (sequencer.c) */
	discard_early_rows(pe);
	pe->head = NULL;
	pe->txn = NULL;
	PG_TRY();
	{
		sf_par_load(pe, def, row, MemoryContextGetParent(old->cxt));
	}
	PG_CATCH();
	{
		/* the abort discards old (pe->catching) */
		if (pe->head != NULL)
			MemoryContextDelete(pe->head->cxt);
		pe->head = old;
		pe->txn = t;
		PG_RE_THROW();
	}
	PG_END_TRY();
	h = pe->head;
	pe->head = old;				/* until every lane is adopted */
	pe->txn = t;
	for (int i = 0; i < np; i++)
	{
		if (pe->log[i].n > 0)
		{
			if (t->lane_from == NULL || t->lane_from[i] < -1 ||
				!sf_head_adopt_lane(h, i, old->lanes[i], t->lane_from[i]))
			{
				MemoryContextDelete(h->cxt);
				sf_par_moved_error(pe, "Its state was restored to one without this transaction's partitions as it found them.");
			}
			old->lanes[i] = NULL;
			continue;
		}
		/*
		 * Committed rows only: as after a catch-up (sf_par_catch_up), a lane
		 * that moved holds no delivery of the transaction (rolled back) for
		 * the head entry's lane table.  The marks need no update: this is
		 * the commit.
		 */
		if (t->lane_from != NULL &&
			(h->lanes[i]->partitions[i].consumed !=
			 old->lanes[i]->partitions[i].consumed ||
			 h->lanes[i]->offset_replays != old->lanes[i]->offset_replays))
			t->lane_from[i] = -2;
	}
	pe->head = h;
	t->head = h;
	t->stale = true;
	t->collided = true;
	MemoryContextDelete(old->cxt);
	pe->catching = false;
}

/*
 * Bring the head of pe, which the current transaction writes, to the
 * latest committed version (design 4.4, 3; 4.5, 1 and 3): a claim's lane
 * is then the committed one, and the sequencer's validation compares with
 * the committed head.  A drop committed meanwhile is 42704, a recreation
 * 40001; a compaction or a restore, which a catch-up cannot cross,
 * re-executes the transaction if reexecute (at commit: par_reexecute),
 * else is 40001.  acl: if not NULL, set to the latest row's grants (in the
 * caller's context).
 */
void
sf_par_sync_latest(SfParEntry *pe, SfAcl *acl, bool reexecute)
{
	MemoryContext callercxt = CurrentMemoryContext;
	SfSavedUser saved;
	SfRowInfo	row = {0};
	Datum		arg;

	if (pe->lost)
		sf_par_moved_error(pe, "A catch-up of this transaction's view of the pipeline failed.");
	sf_become_owner(&saved);
	SPI_connect();
	PushActiveSnapshot(GetLatestSnapshot());
	arg = CStringGetTextDatum(pe->name);
	sf_exec(PLAN_OPEN_READ, &arg, NULL, true, SPI_OK_SELECT);
	if (SPI_processed != 1)
		sf_unknown_pipeline(pe->name);
	sf_read_row(&row, true, callercxt);
	if (row.version != pe->version)
	{
		if (sf_par_can_catch_up(pe, &row))
			sf_par_catch_up(pe, &row);
		else if (pe->id != row.id || pe->relid != row.relid)
			sf_par_moved_error(pe, "The pipeline was dropped and created again.");
		else if (reexecute && pe->txn != NULL)
			par_reexecute(pe, &row);
		else
			sf_par_moved_error(pe, "Its state was compacted or restored since this transaction's first write, and a write call cannot re-execute it (the commit can).");
	}
	PopActiveSnapshot();
	SPI_finish();
	sf_restore_user(&saved);
	if (acl != NULL)
		*acl = row.acl;
	else if (row.acl.grants != NULL)
		pfree(row.acl.grants);
}

/*
 * The transaction cannot be sequenced on the committed state: a
 * serialization failure, which clients retry (detail: why)
 */
void
sf_par_moved_error(const SfParEntry *pe, const char *detail)
{
	ereport(ERROR,
			errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
			errmsg("parallel pipeline \"%s\" changed since this transaction's first write",
				   pe->name),
			errdetail("%s", detail),
			errhint("Retry the transaction."));
}
