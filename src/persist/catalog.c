/*-------------------------------------------------------------------------
 *
 * catalog.c
 *	  Every statement on streamforge.pipeline and streamforge.journal,
 *	  prepared once per backend and kept; the readers of their result rows;
 *	  a pipeline's definition read from and written as its row's columns;
 *	  the "did you mean" hint of an unknown pipeline; a pipeline's time
 *	  unit (api/timeunit.c converts).  Also the kept-plan helper that
 *	  sink.c's statements on the output tables use.
 *
 * Every statement runs as the extension's owner (sf_become_owner, acl.c),
 * since the tables are closed to everybody else, and is fixed text, fully
 * schema-qualified, with operators spelled OPERATOR(pg_catalog.x)
 * (test/run.d/sql-qualified.sh), so the caller's search_path cannot
 * redirect it.  Callers are the files of src/persist/; they connect to SPI
 * as the owner before they call the functions that take a result from
 * SPI_tuptable, except the ones that connect themselves (the hint, the
 * time unit).  Plans live in CacheMemoryContext (SPI_keepplan) for the
 * backend's lifetime; PostgreSQL's plan cache replans them after DDL.
 *
 * This file calls nothing in src/persist/ but acl.c: raising "does not
 * exist" here does not touch the cache (persist.c forgets the entry
 * first), so that the cache (cache.c) sits above the catalog.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/catalog.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/timestamp.h"
#include "utils/varlena.h"
#include "utils/snapmgr.h"

#include "codec/codec.h"
#include "engine/engine.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

/*
 * Every statement names its objects with their schema and uses
 * OPERATOR(pg_catalog.=), so the caller's search_path cannot redirect it.
 * They run as the extension's owner (acl.c).
 */
#define SF_ROW_COLUMNS \
	"tableoid, id, version, snapshot_version, " \
	"pg_catalog.octet_length(snapshot), offset_replays_base, " \
	"owner, readers, ingesters, admins"
#define SF_ROW_NCOLUMNS 10

static const SfPlanText catalog_plan_text[NUM_PLANS] = {
	[PLAN_OPEN_WRITE] = {
		"UPDATE streamforge.pipeline "
		"SET version = version OPERATOR(pg_catalog.+) 1 "
		"WHERE name OPERATOR(pg_catalog.=) $1 RETURNING " SF_ROW_COLUMNS,
		1, {TEXTOID}
	},
	[PLAN_OPEN_READ] = {
		"SELECT " SF_ROW_COLUMNS ", xmin FROM streamforge.pipeline "
		"WHERE name OPERATOR(pg_catalog.=) $1",
		1, {TEXTOID}
	},
	/* the definition (definition.c): the one statement that loads it */
	[PLAN_DEF] = {
		"SELECT definition FROM streamforge.pipeline "
		"WHERE id OPERATOR(pg_catalog.=) $1",
		1, {INT8OID}
	},
	/*
	 * The snapshot is the row's, or, when the row's is NULL, the one a
	 * definition change stored beside it for its snapshot_version
	 * (redefine.c, streamforge.stored_snapshot); NULL for the empty initial
	 * state.
	 */
	[PLAN_SNAPSHOT_GET] = {
		"SELECT COALESCE(p.snapshot, "
		"(SELECT s.snapshot FROM streamforge.stored_snapshot s "
		"WHERE s.pipeline_id OPERATOR(pg_catalog.=) p.id "
		"AND s.snapshot_version OPERATOR(pg_catalog.=) p.snapshot_version)) "
		"FROM streamforge.pipeline p WHERE p.id OPERATOR(pg_catalog.=) $1",
		1, {INT8OID}
	},
	[PLAN_JOURNAL_GET] = {
		"SELECT pos, entry FROM streamforge.journal "
		"WHERE pipeline_id OPERATOR(pg_catalog.=) $1 "
		"AND pos OPERATOR(pg_catalog.>) $2 ORDER BY pos",
		2, {INT8OID, INT8OID}
	},
	[PLAN_JOURNAL_PUT] = {
		"INSERT INTO streamforge.journal (pipeline_id, pos, entry) "
		"VALUES ($1, $2, $3)",
		3, {INT8OID, INT8OID, BYTEAOID}
	},
	[PLAN_JOURNAL_CLEAR] = {
		"DELETE FROM streamforge.journal "
		"WHERE pipeline_id OPERATOR(pg_catalog.=) $1",
		1, {INT8OID}
	},
	[PLAN_SNAPSHOT_PUT] = {
		"UPDATE streamforge.pipeline SET snapshot = $2, "
		"snapshot_version = version, offset_replays_base = $3 "
		"WHERE id OPERATOR(pg_catalog.=) $1 RETURNING version",
		3, {INT8OID, BYTEAOID, INT8OID}
	},
	/* a new pipeline: its whole definition (definition.c) */
	[PLAN_CREATE] = {
		"INSERT INTO streamforge.pipeline (name, definition, owner) "
		"VALUES ($1, $2::pg_catalog.jsonb, $3) "
		"ON CONFLICT (name) DO NOTHING RETURNING id",
		3, {TEXTOID, TEXTOID, REGROLEOID}
	},
	[PLAN_DROP] = {
		"DELETE FROM streamforge.pipeline "
		"WHERE name OPERATOR(pg_catalog.=) $1 "
		"RETURNING id, owner, readers, ingesters, admins",
		1, {TEXTOID}
	},
	[PLAN_ACL_GET] = {
		"SELECT owner, readers, ingesters, admins, id FROM streamforge.pipeline "
		"WHERE name OPERATOR(pg_catalog.=) $1",
		1, {TEXTOID}
	},
	[PLAN_ACL_LOCK] = {
		"SELECT owner, readers, ingesters, admins FROM streamforge.pipeline "
		"WHERE name OPERATOR(pg_catalog.=) $1 FOR NO KEY UPDATE",
		1, {TEXTOID}
	},
	[PLAN_ACL_PUT] = {
		"UPDATE streamforge.pipeline SET owner = $2, readers = $3, "
		"ingesters = $4, admins = $5 WHERE name OPERATOR(pg_catalog.=) $1",
		5, {TEXTOID, REGROLEOID, REGROLEARRAYOID, REGROLEARRAYOID,
		REGROLEARRAYOID}
	},
	[PLAN_EXISTS] = {
		"SELECT id FROM streamforge.pipeline "
		"WHERE name OPERATOR(pg_catalog.=) $1",
		1, {TEXTOID}
	},

	/*
	 * A definition change (sf_persist_redefine): the whole document of the
	 * new definition (definition.c), and the snapshot
	 */
	[PLAN_REDEFINE] = {
		"UPDATE streamforge.pipeline SET definition = $2::pg_catalog.jsonb, "
		"snapshot = $3, snapshot_version = version, "
		"offset_replays_base = $4 "
		"WHERE id OPERATOR(pg_catalog.=) $1 RETURNING version",
		4, {INT8OID, TEXTOID, BYTEAOID, INT8OID}
	},
	/* the "did you mean" hint (similar_pipelines) */
	[PLAN_SIMILAR_ALL] = {
		"SELECT name, owner, readers, ingesters, admins "
		"FROM streamforge.pipeline",
		0, {InvalidOid}
	},
	[PLAN_SIMILAR_CASE] = {
		"SELECT name, owner, readers, ingesters, admins "
		"FROM streamforge.pipeline "
		"WHERE pg_catalog.lower(name) OPERATOR(pg_catalog.=) pg_catalog.lower($1) "
		"ORDER BY name LIMIT 100",
		1, {TEXTOID}
	},
	/* the time unit (sf_time_unit_get) */
	[PLAN_TIME_UNIT_GET] = {
		"SELECT (definition OPERATOR(pg_catalog.->>) 'time_unit')"
		"::pg_catalog.interval FROM streamforge.pipeline "
		"WHERE name OPERATOR(pg_catalog.=) $1",
		1, {TEXTOID}
	},

	/*
	 * 0.4.0, issue 39: background snapshots (compact.c), journal rows at
	 * negative positions whose entry starts with a 16-byte header naming
	 * the journal epoch ($2 of PLAN_SIDE_GET).  The latest of the epoch
	 * is the one at the lowest position.
	 */
	[PLAN_SIDE_GET] = {
		"SELECT pos, entry FROM streamforge.journal "
		"WHERE pipeline_id OPERATOR(pg_catalog.=) $1 "
		"AND pos OPERATOR(pg_catalog.<) 0 "
		"AND pg_catalog.substr(entry, 1, 16) OPERATOR(pg_catalog.=) $2 "
		"ORDER BY pos LIMIT 1",
		2, {INT8OID, BYTEAOID}
	},
	[PLAN_SIDE_PUT] = {
		"INSERT INTO streamforge.journal (pipeline_id, pos, entry) "
		"SELECT $1, $2, $3 FROM streamforge.pipeline "
		"WHERE id OPERATOR(pg_catalog.=) $1 "
		"AND snapshot_version OPERATOR(pg_catalog.=) $4 "
		"ON CONFLICT DO NOTHING",
		4, {INT8OID, INT8OID, BYTEAOID, INT8OID}
	},
	/*
	 * The worker deletes only rows no other transaction has locked (SKIP
	 * LOCKED): a compaction, restore or definition change deleting the
	 * whole journal meanwhile may wait for it, but it never waits for them,
	 * so the two cannot deadlock.
	 */
	[PLAN_SIDE_PRUNE] = {
		"DELETE FROM streamforge.journal "
		"WHERE ctid OPERATOR(pg_catalog.=) ANY (ARRAY("
		"SELECT ctid FROM streamforge.journal "
		"WHERE pipeline_id OPERATOR(pg_catalog.=) $1 "
		"AND pos OPERATOR(pg_catalog.<) 0 "
		"AND pos OPERATOR(pg_catalog.<>) $2 "
		"FOR UPDATE SKIP LOCKED))",
		2, {INT8OID, INT8OID}
	},

	/*
	 * 0.4.0, issue 39: the snapshot a definition change stores before it
	 * takes the pipeline's lock ($2: the snapshot_version it is for), and
	 * the stale ones it deletes first (redefine.c).  Nothing but a
	 * definition change and drop_pipeline deletes them, and none of those
	 * statements locks the pipeline's row (no foreign key: its KEY SHARE
	 * lock would make two concurrent changes deadlock on their FOR UPDATE).
	 */
	[PLAN_STORED_PUT] = {
		"INSERT INTO streamforge.stored_snapshot "
		"(pipeline_id, snapshot_version, snapshot) "
		"SELECT $1, $2, $3 FROM streamforge.pipeline "
		"WHERE id OPERATOR(pg_catalog.=) $1 "
		"ON CONFLICT DO NOTHING",
		3, {INT8OID, INT8OID, BYTEAOID}
	},
	[PLAN_STORED_PRUNE] = {
		"DELETE FROM streamforge.stored_snapshot "
		"WHERE pipeline_id OPERATOR(pg_catalog.=) $1 "
		"AND snapshot_version OPERATOR(pg_catalog.<) $2",
		2, {INT8OID, INT8OID}
	},
	[PLAN_STORED_DROP] = {
		"DELETE FROM streamforge.stored_snapshot "
		"WHERE pipeline_id OPERATOR(pg_catalog.=) $1",
		1, {INT8OID}
	},

	/*
	 * 0.4.0, issue 39: the journal rows of epoch $3 a background snapshot
	 * makes unneeded, at positions up to $2 (compact.c); only while $3 is
	 * the current epoch in the statement's snapshot, since a compaction
	 * that committed meanwhile starts its positions at 1 again.
	 */
	[PLAN_SIDE_TRUNCATE] = {
		"DELETE FROM streamforge.journal "
		"WHERE ctid OPERATOR(pg_catalog.=) ANY (ARRAY("
		"SELECT j.ctid FROM streamforge.journal j "
		"WHERE j.pipeline_id OPERATOR(pg_catalog.=) $1 "
		"AND j.pos OPERATOR(pg_catalog.>) 0 "
		"AND j.pos OPERATOR(pg_catalog.<=) $2 "
		"AND EXISTS (SELECT FROM streamforge.pipeline p "
		"WHERE p.id OPERATOR(pg_catalog.=) $1 "
		"AND p.snapshot_version OPERATOR(pg_catalog.=) $3) "
		"FOR UPDATE OF j SKIP LOCKED))",
		3, {INT8OID, INT8OID, INT8OID}
	},
	/*
	 * Whether a background snapshot of the epoch ($2: its key) had the
	 * journal truncated past position $3 (the big-endian bytes of the
	 * position through which it was: bytea order is numeric order here)
	 */
	[PLAN_SIDE_PAST] = {
		"SELECT FROM streamforge.journal "
		"WHERE pipeline_id OPERATOR(pg_catalog.=) $1 "
		"AND pos OPERATOR(pg_catalog.<) 0 "
		"AND pg_catalog.substr(entry, 1, 16) OPERATOR(pg_catalog.=) $2 "
		"AND pg_catalog.substr(entry, 33, 8) OPERATOR(pg_catalog.>) $3 "
		"LIMIT 1",
		3, {INT8OID, BYTEAOID, BYTEAOID}
	},
	/* The latest background snapshot of the epoch: its header and size */
	[PLAN_SIDE_HEAD] = {
		"SELECT pos, pg_catalog.substr(entry, 1, 40), "
		"pg_catalog.octet_length(entry) FROM streamforge.journal "
		"WHERE pipeline_id OPERATOR(pg_catalog.=) $1 "
		"AND pos OPERATOR(pg_catalog.<) 0 "
		"AND pg_catalog.substr(entry, 1, 16) OPERATOR(pg_catalog.=) $2 "
		"ORDER BY pos LIMIT 1",
		2, {INT8OID, BYTEAOID}
	},
};

static SPIPlanPtr catalog_plans[NUM_PLANS];

/* ----------------------------------------------------------------
 * Kept plans
 * ----------------------------------------------------------------
 */

/*
 * The kept plan of statement text, prepared on first use into *slot (a
 * static of the caller's, NULL until then) and kept for the backend's
 * lifetime.  Caller is connected to SPI.
 */
SPIPlanPtr
sf_keep_plan(SPIPlanPtr *slot, const SfPlanText *text)
{
	if (*slot == NULL)
	{
		SPIPlanPtr	plan;

		plan = SPI_prepare(text->sql, text->nargs, (Oid *) text->argtypes);
		if (plan == NULL)
			elog(ERROR, "streamforge: could not prepare statement \"%s\": %s",
				 text->sql, SPI_result_code_string(SPI_result));
		if (SPI_keepplan(plan) != 0)
			elog(ERROR, "streamforge: could not keep statement \"%s\"",
				 text->sql);
		*slot = plan;
	}
	return *slot;
}

/*
 * Whether sf_run_plan's statements that write run with the latest
 * snapshot instead of the transaction's (sf_latest_writes)
 */
static bool latest_writes = false;

/*
 * Make the statements that write run with the latest snapshot, whatever
 * the isolation level, until called again with false; returns the setting
 * before.  For the sequencer of a parallel pipeline (design 4.5, 6): under
 * REPEATABLE READ its update of the pipeline row and its outputs would
 * otherwise meet the row versions committed since the transaction's
 * snapshot and fail with 40001.  Only for statements on rows that the
 * caller's lock keeps every other writer from (the head lock): as in
 * ri_triggers.c's checks, the latest snapshot sees their last committed
 * versions, and no crosscheck snapshot is given, so the update of a row
 * committed after the transaction's snapshot is no serialization failure.
 * Caller resets it on error (PG_FINALLY).
 */
bool
sf_latest_writes(bool on)
{
	bool		before = latest_writes;

	latest_writes = on;
	return before;
}

/*
 * Run the kept plan of text (see sf_keep_plan) and check its result code.
 * read_only statements use the active snapshot; the others take a new one
 * per statement (so that, under READ COMMITTED, a row lock wait ends on
 * the latest committed row), or the latest one in sf_latest_writes' mode.
 */
void
sf_run_plan(SPIPlanPtr *slot, const SfPlanText *text, Datum *values,
			const char *nulls, bool read_only, int expected)
{
	int			rc;

	if (latest_writes && !read_only)
		rc = SPI_execute_snapshot(sf_keep_plan(slot, text), values, nulls,
								  GetLatestSnapshot(), InvalidSnapshot,
								  false, true, 0);
	else
		rc = SPI_execute_plan(sf_keep_plan(slot, text), values, nulls,
							  read_only, 0);
	if (rc != expected)
		elog(ERROR, "streamforge: could not run statement \"%s\": %s",
			 text->sql, SPI_result_code_string(rc));
}

/*
 * streamforge.compaction_threshold, in kB; -1 disables compaction
 * (defined by persist.c; here so that sequencer.c reads it too)
 */
int			sf_compaction_threshold = 64 * 1024;

/*
 * The journal bytes since a snapshot of snapshot_len bytes above which a
 * parallel pipeline (no retention) is compacted, as persist.c's
 * compaction_limit; -1: never (sequencer.c)
 */
int64
sf_compaction_limit_bytes(int64 snapshot_len)
{
	if (sf_compaction_threshold < 0)
		return -1;
	return Max((int64) sf_compaction_threshold * 1024, 4 * snapshot_len);
}

/* The kept plan of one of this file's statements */
SPIPlanPtr
sf_plan(SfPlanId id)
{
	return sf_keep_plan(&catalog_plans[id], &catalog_plan_text[id]);
}

/* Run one of this file's statements (see sf_run_plan) */
void
sf_exec(SfPlanId id, Datum *values, const char *nulls, bool read_only,
		int expected)
{
	sf_run_plan(&catalog_plans[id], &catalog_plan_text[id], values, nulls,
				read_only, expected);
}

/* ----------------------------------------------------------------
 * Result rows
 * ----------------------------------------------------------------
 */

int64
sf_getint64(int col, bool *isnull)
{
	Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
								  col, isnull);

	return *isnull ? 0 : DatumGetInt64(d);
}

/*
 * Read the owner, readers, ingesters and admins columns, at col and the
 * three after it, of the first result row into acl, allocated in cxt.
 */
void
sf_read_acl(SfAcl *acl, HeapTuple tup, TupleDesc desc, int col,
			MemoryContext cxt)
{
	Datum		d[4];
	bool		isnull;
	int			i;
	MemoryContext old;

	for (i = 0; i < 4; i++)
	{
		d[i] = SPI_getbinval(tup, desc, col + i, &isnull);
		if (isnull)
			elog(ERROR, "streamforge: pipeline privileges are null");
	}
	old = MemoryContextSwitchTo(cxt);
	sf_acl_from_datums(acl, d[0], d[1], d[2], d[3]);
	MemoryContextSwitchTo(old);
}

/*
 * Read SF_ROW_COLUMNS of the (single) result row; the acl is allocated in
 * cxt.
 */
void
sf_read_row(SfRowInfo *row, bool with_xmin, MemoryContext cxt)
{
	HeapTuple	tup = SPI_tuptable->vals[0];
	TupleDesc	desc = SPI_tuptable->tupdesc;
	bool		isnull;

	row->relid = DatumGetObjectId(SPI_getbinval(tup, desc, 1, &isnull));
	row->id = sf_getint64(2, &isnull);
	row->version = sf_getint64(3, &isnull);
	row->snapshot_version = sf_getint64(4, &isnull);
	row->snapshot_len = DatumGetInt32(SPI_getbinval(tup, desc, 5, &isnull));
	if (isnull)
		row->snapshot_len = 0;
	row->offset_replays_base = sf_getint64(6, &isnull);
	sf_read_acl(&row->acl, tup, desc, 7, cxt);
	row->ours = false;
	if (with_xmin)
	{
		TransactionId xmin;

		xmin = DatumGetTransactionId(SPI_getbinval(tup, desc,
												   SF_ROW_NCOLUMNS + 1,
												   &isnull));
		row->ours = TransactionIdIsCurrentTransactionId(xmin);
	}
}

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
static char *
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
	if (SPI_execute_plan(sf_plan(PLAN_SIMILAR_ALL), NULL, NULL, true,
						 SF_SIMILAR_SCAN_MAX + 1) != SPI_OK_SELECT)
		elog(ERROR, "streamforge: could not read the pipelines");
	if (SPI_processed > SF_SIMILAR_SCAN_MAX)
	{
		Datum		arg = CStringGetTextDatum(name);

		SPI_freetuptable(SPI_tuptable);
		sf_exec(PLAN_SIMILAR_CASE, &arg, NULL, true, SPI_OK_SELECT);
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

/*
 * Raise 42704 for the pipeline name, with a "did you mean" hint.  A caller
 * that may have a cache entry for name forgets it first (persist.c).
 */
void
sf_unknown_pipeline(const char *name)
{
	char	   *hint;

	hint = similar_pipelines(name);
	ereport(ERROR,
			errcode(ERRCODE_UNDEFINED_OBJECT),
			errmsg("pipeline \"%s\" does not exist", sf_msg_cstr(name)),
			hint ? errhint("%s", hint) : 0);
}

/*
 * A write in a read-only transaction (or on a standby) is refused with
 * the pipeline's name, not the internal statement's.
 */
void
sf_persist_check_writable(const char *name)
{
	if (XactReadOnly)
		ereport(ERROR,
				errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				errmsg("cannot change pipeline \"%s\" in a read-only transaction",
					   sf_msg_cstr(name)));
}

/* regrole[] of the grants of acl with exactly the given privilege */
Datum
sf_acl_array(const SfAcl *acl, SfPrivilege privilege)
{
	Datum	   *elems = palloc(Max(acl->ngrants, 1) * sizeof(Datum));
	int			n = 0;
	int			i;

	for (i = 0; i < acl->ngrants; i++)
		if (acl->grants[i].privilege == privilege)
			elems[n++] = ObjectIdGetDatum(acl->grants[i].role);
	return PointerGetDatum(construct_array(elems, n, REGROLEOID, sizeof(Oid),
										   true, TYPALIGN_INT));
}

/* ----------------------------------------------------------------
 * Time units (api/timeunit.c)
 * ----------------------------------------------------------------
 */

/*
 * The time unit of a pipeline, NULL if it has none.  Caller has checked
 * the caller's privilege on the pipeline (the query runs as the owner).
 * The result is palloc'd in the caller's context.
 */
Interval *
sf_time_unit_get(const char *pipeline)
{
	SfSavedUser saved;
	Datum		args[1];
	Interval   *result = NULL;
	MemoryContext cxt = CurrentMemoryContext;
	int			rc;

	args[0] = CStringGetTextDatum(pipeline);
	sf_become_owner(&saved);
	SPI_connect();
	rc = SPI_execute_plan(sf_plan(PLAN_TIME_UNIT_GET), args, NULL, true, 0);
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
