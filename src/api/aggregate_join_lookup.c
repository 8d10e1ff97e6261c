/*-------------------------------------------------------------------------
 *
 * aggregate_join_lookup.c
 *	  The lookups of an aggregate's dimension tables at ingest (issue 47,
 *	  docs/joins.md): the calls that aggregate_join.c puts in the mapping
 *	  expressions of the attachment.
 *
 *	 streamforge_internal.join_value(NULL::T, pipeline, join, column, at,
 *									 VARIADIC keys "any") returns T
 *		the column of the dimension row of the join-th join of the
 *		aggregate pipeline whose unique index has the keys (and, as of event
 *		time, whose validity contains at), NULL if there is none;
 *	 streamforge_internal.join_found(pipeline, join, at, VARIADIC keys)
 *		whether there is one (an inner join's filter: false drops the event
 *		and counts it, streamforge.join_stats()).
 *
 * What is trusted is the aggregate's spec (streamforge.aggregate.spec ->
 * 'joins', written by the extension's owner from the analyzed query), not
 * the arguments: a call names a pipeline, a join of it and a column; the
 * dimension, its index, the key columns, the validity, the columns the
 * query read and the creator come from the spec.  Once per statement (and
 * per call site: FmgrInfo.fn_extra), a call checks that the current user
 * may ingest into the pipeline (so a direct call reads nothing the
 * inserting role could not make the aggregate read), that the creator may
 * still SELECT the dimension (or the columns the query read), that the
 * dimension has no row-level security, and that the column is one the
 * query read.  The dimension is then read by its index with the active
 * snapshot, without any check of the current user's privileges on it: as
 * its creator would.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/aggregate_join_lookup.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/skey.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "lib/ilist.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/hsearch.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rangetypes.h"
#include "utils/rel.h"
#include "utils/regproc.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"
#include "utils/varlena.h"

#include "api/api.h"


/*
 * One call site's index scan of its dimension, open from its first probe
 * to the end of the executor that evaluates the call (the deletion of its
 * context, a child of the call's fn_mcxt), so that a probe is an
 * index_rescan and not an open, a begin and an end (issue 47 item 4).  Its
 * relcache references and buffer pins belong to a resource owner of its
 * own (a child of the transaction's), so that they are released where the
 * scan is closed whatever owner is current there.  A transaction abort
 * releases every open scan's owner before PostgreSQL releases the
 * transaction's; a subtransaction abort those the subtransaction opened
 * (whether or not the failed statement's executor memory goes with it, a
 * scan left open would keep the dimension in use, refusing an ALTER
 * TABLE) and the one whose probe it interrupted (the next probe reopens
 * it).  No lock is taken: lookup_setup locked the dimension and its index
 * in the statement.
 */
typedef struct JoinScan
{
	dlist_node	node;			/* in open_scans while open */
	MemoryContext cxt;			/* its memory; deleting it closes the scan */
	MemoryContextCallback cb;
	ResourceOwner owner;
	Relation	heap;
	Relation	idx;
	IndexScanDesc scan;
	TupleTableSlot *slot;
	SubTransactionId subid;		/* the subtransaction that opened it */
	bool		open;
} JoinScan;

static dlist_head open_scans = DLIST_STATIC_INIT(open_scans);
static JoinScan *probing = NULL;	/* the scan of the probe under way */
static bool scan_callbacks = false;

/* One call site's lookup, for one statement */
typedef struct JoinLookup
{
	LocalTransactionId lxid;	/* the statement it was checked for */
	CommandId	cid;
	char		pipeline[NAMEDATALEN * 2];	/* the arguments it was set up */
	int32		join;			/* for: a direct call may change them */
	char		column[NAMEDATALEN * 2];	/* between rows */
	size_t		pipeline_len;
	size_t		column_len;
	Oid			dim;
	Oid			index;
	int			nkeys;
	int			keyarg;			/* the first key argument */
	ScanKeyData keys[INDEX_MAX_KEYS];
	Oid			probe_index;	/* the index probed: index, or a hash index */
	ScanKeyData hkey;			/* the hash index's key (probe_index != index) */
	AttrNumber	keyatt;			/* the dimension's key column (one key) */
	bool		directory;		/* may use a directory of the dimension */
	int16		keylen[INDEX_MAX_KEYS];	/* the key arguments' typlen, typbyval */
	bool		keybyval[INDEX_MAX_KEYS];
	AttrNumber	attnum;			/* the column returned, 0 for join_found */
	AttrNumber	valid_from;
	AttrNumber	valid_to;
	AttrNumber	valid_range;
	TypeCacheEntry *range_tc;
	bool		event_time;
	ScanDirection dir;			/* of the probe: the latest start first if
								 * the validity has no end */
	TupleDesc	desc;			/* the dimension's, for the row slots */
	SfJoinStats *stats;
	JoinScan   *scan;			/* NULL until the first probe */
	bool		constant;		/* pipeline, join and column are constants */
	Oid			userid;			/* the user it was checked for */
} JoinLookup;

/*
 * The last probe of each index (a few slots, by the index's oid), shared
 * by every call site of the statement: join_found and the join_value of
 * each column of one event cost one probe, and so do consecutive events
 * with the same key.  Valid for one statement (transaction and command
 * id); the row is a copy, in the slot's context.
 */
#define SF_JOIN_SLOTS 8

typedef struct JoinRowSlot
{
	Oid			index;
	LocalTransactionId lxid;
	CommandId	cid;
	MemoryContext cxt;
	int			nkeys;
	Datum		keys[INDEX_MAX_KEYS];
	bool		event_time;
	TimestampTz at;
	bool		found;
	HeapTuple	tuple;
} JoinRowSlot;

static JoinRowSlot row_slots[SF_JOIN_SLOTS];

static void hash_index_of(JoinLookup *lk, Relation heap);

/* A member of a jsonb object, false if absent */
static bool
jfield(JsonbContainer *c, const char *key, JsonbValue *v)
{
	return getKeyJsonValueFromContainer(c, key, strlen(key), v) != NULL;
}

static char *
jstr(JsonbContainer *c, const char *key)
{
	JsonbValue	v;

	if (!jfield(c, key, &v) || v.type != jbvString)
		return NULL;
	return pnstrdup(v.val.string.val, v.val.string.len);
}

/* The names of a jsonb array of strings member, as a List of char * */
static List *
jnames(JsonbContainer *c, const char *key)
{
	JsonbValue	v;
	List	   *result = NIL;

	if (!jfield(c, key, &v) || v.type != jbvBinary)
		return NIL;
	for (uint32 i = 0; i < JsonContainerSize(v.val.binary.data); i++)
	{
		JsonbValue *e = getIthJsonbValueFromContainer(v.val.binary.data, i);

		if (e != NULL && e->type == jbvString)
			result = lappend(result, pnstrdup(e->val.string.val, e->val.string.len));
	}
	return result;
}

static bool
name_in(List *names, const char *name)
{
	ListCell   *lc;

	foreach(lc, names)
		if (strcmp((char *) lfirst(lc), name) == 0)
			return true;
	return false;
}

/*
 * The join-th join of the aggregate pipeline's spec (a jsonb copied in
 * the caller's context), or an error
 */
static JsonbContainer *
spec_join(const char *pipeline, int join)
{
	Oid			nsp = get_namespace_oid("streamforge", false);
	Oid			relid = get_relname_relid("aggregate", nsp);
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tup;
	AttrNumber	name_att;
	AttrNumber	spec_att;
	Jsonb	   *spec = NULL;
	JsonbValue	v;
	JsonbValue *j;

	if (!OidIsValid(relid))
		elog(ERROR, "streamforge: table streamforge.aggregate is missing");
	name_att = get_attnum(relid, "name");
	spec_att = get_attnum(relid, "spec");
	rel = table_open(relid, AccessShareLock);
	scan = table_beginscan(rel, GetActiveSnapshot(), 0, NULL);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		bool		isnull;
		Datum		d = heap_getattr(tup, name_att, RelationGetDescr(rel), &isnull);

		if (isnull || strcmp(TextDatumGetCString(d), pipeline) != 0)
			continue;
		d = heap_getattr(tup, spec_att, RelationGetDescr(rel), &isnull);
		if (!isnull)
			spec = DatumGetJsonbPCopy(d);
		break;
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	if (spec == NULL || !jfield(&spec->root, "joins", &v) || v.type != jbvBinary ||
		join < 1 || (uint32) join > JsonContainerSize(v.val.binary.data) ||
		(j = getIthJsonbValueFromContainer(v.val.binary.data, join - 1)) == NULL ||
		j->type != jbvBinary)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("aggregate \"%s\" has no join %d", pipeline, join),
				 errdetail("streamforge_internal.join_value() and join_found() are called by the attachments of aggregates that join dimension tables.")));
	return j->val.binary.data;
}

static Oid
relation_named(const char *qualified)
{
	return RangeVarGetRelid(makeRangeVarFromNameList(stringToQualifiedNameList(qualified)),
							AccessShareLock, false);
}

/* The index of a join is no longer the one its aggregate was made with */
static void
index_changed(const char *index, const char *pipeline)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("the index %s of aggregate \"%s\" changed", index, pipeline),
			 errhint("Recreate the aggregate.")));
}

/*
 * The number of a validity column named by the spec (0 if the spec names
 * none), checked to still exist with its type: a column renamed, dropped
 * or retyped since the aggregate was made would otherwise be read as
 * column 0, or a text as a timestamp.
 */
static AttrNumber
validity_column(Oid dim, const char *name, Oid type, const char *relation,
				const char *pipeline)
{
	AttrNumber	att;

	if (name == NULL)
		return 0;
	att = get_attnum(dim, name);
	if (att <= 0 || get_atttype(dim, att) != type)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("validity column \"%s\" of table %s joined by aggregate \"%s\" was dropped, renamed or changed type",
						name, relation, pipeline),
				 errhint("Recreate the aggregate.")));
	return att;
}

/*
 * The checks of a statement and the lookup's setup (see the top of the
 * file).  column is NULL for join_found.
 */
static void
lookup_setup(FunctionCallInfo fcinfo, JoinLookup *lk, const char *pipeline,
			 int join, const char *column, int keyarg)
{
	MemoryContext old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	Relation	heap;
	JsonbContainer *j = spec_join(pipeline, join);
	char	   *relation = jstr(j, "relation");
	char	   *index = jstr(j, "index");
	char	   *creator = jstr(j, "creator");
	char	   *vf = jstr(j, "valid_from");
	char	   *vt = jstr(j, "valid_to");
	char	   *vr = jstr(j, "valid_range");
	List	   *keys = jnames(j, "keys");
	List	   *columns = jnames(j, "columns");
	SfAcl		acl;
	Oid			creator_id;
	Relation	idx;
	int			nargs = PG_NARGS();
	ListCell   *lc;

	if (relation == NULL || index == NULL || creator == NULL || keys == NIL)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("join %d of aggregate \"%s\" is malformed", join, pipeline),
				 errhint("Recreate the aggregate.")));

	/* the caller may ingest into the pipeline (as its trigger does) */
	sf_persist_get_acl(pipeline, false, &acl);
	sf_acl_check(&acl, pipeline, GetUserId(), SF_PRIV_INGEST);

	lk->dim = relation_named(relation);
	lk->index = relation_named(index);
	creator_id = get_role_oid(creator, false);
	if (get_rel_relkind(lk->dim) != RELKIND_RELATION)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("dimension %s of aggregate \"%s\" is not a table", relation, pipeline),
				 errhint("Recreate the aggregate.")));
	if (sf_aggregate_row_security(lk->dim))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("table %s joined by aggregate \"%s\" has row-level security, which is not supported",
						relation, pipeline),
				 errhint("Disable row-level security on the table or drop the aggregate.")));
	/* the creator may still read what the query read */
	if (pg_class_aclcheck(lk->dim, creator_id, ACL_SELECT) != ACLCHECK_OK)
		foreach(lc, columns)
		{
			AttrNumber	a = get_attnum(lk->dim, (char *) lfirst(lc));

			if (a == InvalidAttrNumber ||
				pg_attribute_aclcheck(lk->dim, a, creator_id, ACL_SELECT) != ACLCHECK_OK)
				ereport(ERROR,
						(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
						 errmsg("role \"%s\", the creator of aggregate \"%s\", may not read table %s",
								creator, pipeline, relation),
						 errdetail("An aggregate reads its dimension tables with the privileges of the role that created it."),
						 errhint("GRANT SELECT ON %s TO %s, or drop the aggregate.",
								 relation, quote_identifier(creator))));
		}
	if (column != NULL)
	{
		if (!name_in(columns, column))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("aggregate \"%s\" does not read column \"%s\" of table %s",
							pipeline, column, relation)));
		lk->attnum = get_attnum(lk->dim, column);
		if (lk->attnum <= 0 ||
			get_atttype(lk->dim, lk->attnum) != get_fn_expr_argtype(fcinfo->flinfo, 0))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column \"%s\" of table %s joined by aggregate \"%s\" was dropped or changed type",
							column, relation, pipeline),
					 errhint("Recreate the aggregate.")));
	}
	lk->valid_from = validity_column(lk->dim, vf, TIMESTAMPTZOID, relation, pipeline);
	lk->valid_to = validity_column(lk->dim, vt, TIMESTAMPTZOID, relation, pipeline);
	lk->valid_range = validity_column(lk->dim, vr, TSTZRANGEOID, relation, pipeline);
	lk->event_time = vf != NULL || vr != NULL;
	/* as of event time, the validity's start at least (aggregate_join.c) */
	if (lk->event_time && lk->valid_from == 0 && lk->valid_range == 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("join %d of aggregate \"%s\" is malformed", join, pipeline),
				 errhint("Recreate the aggregate.")));
	if (lk->valid_range)
		lk->range_tc = lookup_type_cache(get_atttype(lk->dim, lk->valid_range),
										 TYPECACHE_RANGE_INFO);

	/* the scan keys: the index's equality with each key's type */
	lk->nkeys = list_length(keys);
	lk->keyarg = keyarg;
	if (nargs - keyarg != lk->nkeys || lk->nkeys > INDEX_MAX_KEYS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("join %d of aggregate \"%s\" takes %d keys, not %d",
						join, pipeline, lk->nkeys, nargs - keyarg)));
	idx = index_open(lk->index, AccessShareLock);
	if (idx->rd_index->indrelid != lk->dim || !idx->rd_index->indisunique ||
		idx->rd_index->indnkeyatts < lk->nkeys)
		index_changed(index, pipeline);
	for (int i = 0; i < lk->nkeys; i++)
	{
		Oid			right = get_fn_expr_argtype(fcinfo->flinfo, keyarg + i);
		Oid			opno = get_opfamily_member(idx->rd_opfamily[i],
											   idx->rd_opcintype[i], right,
											   BTEqualStrategyNumber);

		if (idx->rd_index->indkey.values[i] != get_attnum(lk->dim, (char *) list_nth(keys, i)) ||
			!OidIsValid(opno))
			index_changed(index, pipeline);
		get_typlenbyval(right, &lk->keylen[i], &lk->keybyval[i]);
		ScanKeyEntryInitialize(&lk->keys[i], 0, i + 1, BTEqualStrategyNumber,
							   right, idx->rd_indcollation[i], get_opcode(opno),
							   (Datum) 0);
	}

	/*
	 * A validity with a start and no end ("d.valid_from <= c.at"): every
	 * version that started by the event's time satisfies it, and the one
	 * meant is the latest of them, as of the event's time.  The index is
	 * (keys, valid_from) (aggregate_join.c), so the probe reads the
	 * versions latest first and takes the first that started by then.
	 * Otherwise the versions are read in the index's order and the first
	 * valid one wins.
	 */
	lk->dir = ForwardScanDirection;
	if (lk->valid_from != 0 && lk->valid_to == 0)
	{
		int			pos = -1;

		for (int i = lk->nkeys; i < idx->rd_index->indnkeyatts; i++)
			if (idx->rd_index->indkey.values[i] == lk->valid_from)
				pos = i;
		if (pos < 0)
			index_changed(index, pipeline);
		if ((idx->rd_indoption[pos] & INDOPTION_DESC) == 0)
			lk->dir = BackwardScanDirection;
	}
	lk->keyatt = idx->rd_index->indkey.values[0];

	/*
	 * A directory of the dimension's rows (aggregate_join_directory.c) for
	 * one key of a type whose equality is the identity of its bits, the
	 * key column's own type, and an index that makes the visible row of a
	 * key unique: immediate, not partial
	 */
	lk->directory = !lk->event_time && lk->nkeys == 1 && lk->keyatt > 0 &&
		idx->rd_index->indimmediate &&
		heap_attisnull(idx->rd_indextuple, Anum_pg_index_indpred, NULL) &&
		sf_join_directory_type_ok(get_atttype(lk->dim, lk->keyatt)) &&
		lk->keys[0].sk_subtype == get_atttype(lk->dim, lk->keyatt);
	index_close(idx, AccessShareLock);
	heap = table_open(lk->dim, AccessShareLock);
	lk->probe_index = lk->index;
	if (!lk->event_time && lk->nkeys == 1)
		hash_index_of(lk, heap);
	/* with the missing values of columns added with a default */
	lk->desc = CreateTupleDescCopyConstr(RelationGetDescr(heap));
	table_close(heap, AccessShareLock);
	lk->stats = sf_join_stats_entry(pipeline, join, relation);
	if (lk->directory)
	{
		lk->stats->dim = lk->dim;
		lk->stats->keyatt = lk->keyatt;
	}
	strlcpy(lk->pipeline, pipeline, sizeof(lk->pipeline));
	lk->join = join;
	strlcpy(lk->column, column ? column : "", sizeof(lk->column));
	lk->pipeline_len = strlen(lk->pipeline);
	lk->column_len = strlen(lk->column);
	lk->lxid = MyProc->lxid;
	lk->cid = GetCurrentCommandId(false);
	lk->userid = GetUserId();
	MemoryContextSwitchTo(old);
}

/*
 * An as-of-ingestion join on one column probes a hash index of the
 * dimension on that column if there is one (docs/joins.md, "Cost"): it
 * reads one bucket page where the unique btree index is descended from
 * its root, for the same row, since the unique index still guarantees
 * that there is at most one.  The index must be usable as the planner
 * would use it (valid, ready, not partial, on the column itself, and old
 * enough for this transaction if it was built over broken HOT chains) and
 * its equality the operator of the btree's scan key; it is locked for the
 * transaction like the btree index.  A hash index holds hash codes, not
 * keys: the probe compares the key of the row it finds (xs_recheck).
 */
static void
hash_index_of(JoinLookup *lk, Relation heap)
{
	List	   *indexes = RelationGetIndexList(heap);
	ListCell   *lc;

	foreach(lc, indexes)
	{
		Oid			ixoid = lfirst_oid(lc);
		Relation	idx;
		Form_pg_index ix;
		Oid			opno;

		idx = index_open(ixoid, AccessShareLock);
		ix = idx->rd_index;
		opno = idx->rd_rel->relam != HASH_AM_OID ? InvalidOid :
			get_opfamily_member(idx->rd_opfamily[0], idx->rd_opcintype[0],
								lk->keys[0].sk_subtype, HTEqualStrategyNumber);
		if (OidIsValid(opno) && ix->indisvalid && ix->indisready && ix->indislive &&
			ix->indnatts == 1 && ix->indkey.values[0] == lk->keyatt &&
			heap_attisnull(idx->rd_indextuple, Anum_pg_index_indpred, NULL) &&
			heap_attisnull(idx->rd_indextuple, Anum_pg_index_indexprs, NULL) &&
			(!ix->indcheckxmin ||
			 TransactionIdPrecedes(HeapTupleHeaderGetXmin(idx->rd_indextuple->t_data),
								   TransactionXmin)) &&
			get_opcode(opno) == lk->keys[0].sk_func.fn_oid &&
			idx->rd_indcollation[0] == lk->keys[0].sk_collation)
		{
			ScanKeyEntryInitialize(&lk->hkey, 0, 1, HTEqualStrategyNumber,
								   lk->keys[0].sk_subtype, idx->rd_indcollation[0],
								   get_opcode(opno), (Datum) 0);
			lk->probe_index = ixoid;
			/* locked until the end of the transaction, as the btree is */
			index_close(idx, NoLock);
			break;
		}
		index_close(idx, AccessShareLock);
	}
	list_free(indexes);
}

/*
 * Whether the row in slot has the key the probe looked for: a lossy index
 * (hash) finds rows by their key's hash code
 */
static bool
key_matches(JoinLookup *lk, TupleTableSlot *slot, Datum key)
{
	bool		isnull;
	Datum		d = slot_getattr(slot, lk->keyatt, &isnull);

	return !isnull &&
		DatumGetBool(FunctionCall2Coll(&lk->hkey.sk_func, lk->hkey.sk_collation,
									   d, key));
}

/* Whether the version in slot is valid at at */
static bool
valid_at(JoinLookup *lk, TupleTableSlot *slot, TimestampTz at)
{
	bool		isnull;
	Datum		d;

	if (lk->valid_range)
	{
		d = slot_getattr(slot, lk->valid_range, &isnull);
		return !isnull &&
			range_contains_elem_internal(lk->range_tc, DatumGetRangeTypeP(d),
										 TimestampTzGetDatum(at));
	}
	d = slot_getattr(slot, lk->valid_from, &isnull);
	if (isnull || DatumGetTimestampTz(d) > at)
		return false;
	if (lk->valid_to)
	{
		d = slot_getattr(slot, lk->valid_to, &isnull);
		if (isnull || !(at < DatumGetTimestampTz(d)))
			return false;
	}
	return true;
}


/*
 * Close an open scan: with clean, as its probes left it (index_endscan,
 * the relations closed); else after an error, where only its resource
 * owner's release is safe (its memory goes with its context).
 */
static void
scan_close(JoinScan *js, bool clean)
{
	ResourceOwner save = CurrentResourceOwner;

	if (!js->open)
		return;
	dlist_delete(&js->node);
	js->open = false;
	if (probing == js)
		probing = NULL;
	if (clean)
	{
		CurrentResourceOwner = js->owner;
		if (js->slot != NULL)
			ExecDropSingleTupleTableSlot(js->slot);
		if (js->scan != NULL)
			index_endscan(js->scan);
		if (js->idx != NULL)
			index_close(js->idx, NoLock);
		if (js->heap != NULL)
			table_close(js->heap, NoLock);
		CurrentResourceOwner = save;
	}
	js->slot = NULL;
	js->scan = NULL;
	js->idx = NULL;
	js->heap = NULL;
	ResourceOwnerRelease(js->owner, RESOURCE_RELEASE_BEFORE_LOCKS, clean, false);
	ResourceOwnerRelease(js->owner, RESOURCE_RELEASE_LOCKS, clean, false);
	ResourceOwnerRelease(js->owner, RESOURCE_RELEASE_AFTER_LOCKS, clean, false);
	ResourceOwnerDelete(js->owner);
	js->owner = NULL;
}

/* The end of the executor that evaluated the call: its context goes */
static void
scan_context_gone(void *arg)
{
	scan_close((JoinScan *) arg, true);
}

static void
scan_xact_callback(XactEvent event, void *arg)
{
	dlist_mutable_iter it;

	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			/* none should be left: their executors ended */
			dlist_foreach_modify(it, &open_scans)
				scan_close(dlist_container(JoinScan, node, it.cur), true);
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			dlist_foreach_modify(it, &open_scans)
				scan_close(dlist_container(JoinScan, node, it.cur), false);
			break;
		default:
			break;
	}
}

static void
scan_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					  SubTransactionId parentSubid, void *arg)
{
	dlist_mutable_iter it;

	if (event != SUBXACT_EVENT_ABORT_SUB)
		return;
	/*
	 * Those opened in the subtransaction (or in a subtransaction of it:
	 * they started later) and a probe the error interrupted; the others
	 * are as they were
	 */
	dlist_foreach_modify(it, &open_scans)
	{
		JoinScan   *js = dlist_container(JoinScan, node, it.cur);

		if (js->subid >= mySubid || js == probing)
			scan_close(js, false);
	}
}

/* The call site's scan, open (in this statement's snapshot) */
static JoinScan *
scan_of(FunctionCallInfo fcinfo, JoinLookup *lk)
{
	JoinScan   *js = lk->scan;
	ResourceOwner save = CurrentResourceOwner;
	MemoryContext old;

	if (js == NULL)
	{
		MemoryContext cxt = AllocSetContextCreate(fcinfo->flinfo->fn_mcxt,
												  "streamforge join scan",
												  ALLOCSET_DEFAULT_SIZES);

		js = MemoryContextAllocZero(cxt, sizeof(JoinScan));
		js->cxt = cxt;
		js->cb.func = scan_context_gone;
		js->cb.arg = js;
		MemoryContextRegisterResetCallback(cxt, &js->cb);
		lk->scan = js;
	}
	/* another statement of the same call site may name another join */
	if (js->open && (RelationGetRelid(js->heap) != lk->dim ||
					 RelationGetRelid(js->idx) != lk->probe_index ||
					 js->scan->numberOfKeys != lk->nkeys))
		scan_close(js, true);
	if (js->open)
		return js;
	if (!scan_callbacks)
	{
		RegisterXactCallback(scan_xact_callback, NULL);
		RegisterSubXactCallback(scan_subxact_callback, NULL);
		scan_callbacks = true;
	}
	old = MemoryContextSwitchTo(js->cxt);
	js->owner = ResourceOwnerCreate(TopTransactionResourceOwner,
									"streamforge join scan");
	dlist_push_head(&open_scans, &js->node);
	js->open = true;
	js->subid = GetCurrentSubTransactionId();
	probing = js;
	CurrentResourceOwner = js->owner;
	js->heap = table_open(lk->dim, NoLock);
	js->idx = index_open(lk->probe_index, NoLock);
	js->scan = index_beginscan(js->heap, js->idx, GetActiveSnapshot(), lk->nkeys, 0);
	js->slot = table_slot_create(js->heap, NULL);
	CurrentResourceOwner = save;
	probing = NULL;
	MemoryContextSwitchTo(old);
	return js;
}

/*
 * The probe: the slot holding the row of the keys (valid at at), or NULL
 * if a key or the time is NULL (no row is equal to NULL).
 */
static JoinRowSlot *
probe(FunctionCallInfo fcinfo, JoinLookup *lk, int atarg)
{
	bool		at_null = PG_ARGISNULL(atarg);
	TimestampTz at = at_null ? 0 : PG_GETARG_TIMESTAMPTZ(atarg);
	JoinRowSlot *rs = &row_slots[lk->index % SF_JOIN_SLOTS];
	ScanKeyData sk[INDEX_MAX_KEYS];
	JoinScan   *js;
	ResourceOwner save;
	MemoryContext old;
	bool		same;
	bool		rescanned = false;
	SfJoinDirectory *dir = NULL;
	ItemPointerData tid;

	for (int i = 0; i < lk->nkeys; i++)
		if (PG_ARGISNULL(lk->keyarg + i))
			return NULL;
	if (lk->event_time && at_null)
		return NULL;
	/* the same keys as the index's last probe in this statement */
	same = rs->index == lk->index && rs->lxid == lk->lxid && rs->cid == lk->cid &&
		rs->nkeys == lk->nkeys && rs->event_time == lk->event_time &&
		(!lk->event_time || rs->at == at);
	for (int i = 0; same && i < lk->nkeys; i++)
		same = datumIsEqual(rs->keys[i], PG_GETARG_DATUM(lk->keyarg + i),
							lk->keybyval[i], lk->keylen[i]);
	if (same)
		return rs;

	if (rs->cxt == NULL)
		rs->cxt = AllocSetContextCreate(TopMemoryContext, "streamforge join row",
										ALLOCSET_SMALL_SIZES);
	MemoryContextReset(rs->cxt);
	rs->index = InvalidOid;
	js = scan_of(fcinfo, lk);
	if (lk->probe_index != lk->index)
		sk[0] = lk->hkey;
	else
		memcpy(sk, lk->keys, sizeof(ScanKeyData) * lk->nkeys);
	for (int i = 0; i < lk->nkeys; i++)
		sk[i].sk_argument = PG_GETARG_DATUM(lk->keyarg + i);
	rs->found = false;
	rs->tuple = NULL;
	lk->stats->probes++;
	save = CurrentResourceOwner;
	CurrentResourceOwner = js->owner;
	probing = js;

	/* the row where the directory saw it, if it is still there */
	if (lk->directory &&
		(dir = sf_join_directory(js->heap, lk->keyatt)) != NULL)
	{
		old = MemoryContextSwitchTo(rs->cxt);
		rs->tuple = sf_join_directory_fetch(dir, js->heap, lk->desc,
											PG_GETARG_DATUM(lk->keyarg));
		MemoryContextSwitchTo(old);
		if (rs->tuple != NULL)
		{
			rs->found = true;
			lk->stats->directory_hits++;
			sf_join_directory_note(dir, js->heap, (Datum) 0, NULL);
			probing = NULL;
			CurrentResourceOwner = save;
			goto remember;
		}
	}

	/* the statement's snapshot (the scan may have begun in another) */
	js->scan->xs_snapshot = GetActiveSnapshot();
	/*
	 * What the index AM allocates lazily (btree's killed items, on a dead
	 * tuple) lives as long as the scan: in its context, not the caller's
	 * per-tuple one, or index_endscan frees it twice
	 */
	for (;;)
	{
		bool		got;

		old = MemoryContextSwitchTo(js->cxt);
		if (!rescanned)
		{
			index_rescan(js->scan, sk, lk->nkeys, NULL, 0);
			rescanned = true;
		}
		got = index_getnext_slot(js->scan, lk->dir, js->slot);
		MemoryContextSwitchTo(old);
		if (!got)
			break;
		if (js->scan->xs_recheck &&
			!key_matches(lk, js->slot, PG_GETARG_DATUM(lk->keyarg)))
			continue;
		if (lk->event_time && !valid_at(lk, js->slot, at))
			continue;
		rs->found = true;
		old = MemoryContextSwitchTo(rs->cxt);
		rs->tuple = ExecCopySlotHeapTuple(js->slot);
		MemoryContextSwitchTo(old);
		tid = js->slot->tts_tid;
		break;
	}
	ExecClearTuple(js->slot);
	if (dir != NULL)
		sf_join_directory_note(dir, js->heap, PG_GETARG_DATUM(lk->keyarg),
							   rs->found ? &tid : NULL);
	probing = NULL;
	CurrentResourceOwner = save;
	if (!rs->found)
		lk->stats->misses++;
remember:
	/* the keys of the probe */
	old = MemoryContextSwitchTo(rs->cxt);
	for (int i = 0; i < lk->nkeys; i++)
		rs->keys[i] = datumCopy(PG_GETARG_DATUM(lk->keyarg + i),
								lk->keybyval[i], lk->keylen[i]);
	MemoryContextSwitchTo(old);
	rs->nkeys = lk->nkeys;
	rs->event_time = lk->event_time;
	rs->at = at;
	rs->lxid = lk->lxid;
	rs->cid = lk->cid;
	rs->index = lk->index;
	return rs;
}

/* Whether a text argument is the string s of slen bytes */
static bool
arg_is(FunctionCallInfo fcinfo, int arg, const char *s, size_t slen)
{
	text	   *t = PG_GETARG_TEXT_PP(arg);

	return VARSIZE_ANY_EXHDR(t) == slen && memcmp(VARDATA_ANY(t), s, slen) == 0;
}

/* Whether argument argnum of the call is a constant of its expression */
static bool
arg_const(FunctionCallInfo fcinfo, int argnum)
{
	Node	   *expr = fcinfo->flinfo->fn_expr;
	List	   *args;

	if (expr == NULL || !IsA(expr, FuncExpr))
		return false;
	args = ((FuncExpr *) expr)->args;
	return argnum < list_length(args) && IsA(list_nth(args, argnum), Const);
}

/*
 * The call site's lookup, checked for this statement and these arguments
 * (the attachment's calls pass constants: checked once per statement; a
 * direct call may pass others row by row, each checked)
 */
static JoinLookup *
lookup_of(FunctionCallInfo fcinfo, int first, int columnarg, int keyarg)
{
	JoinLookup *lk = (JoinLookup *) fcinfo->flinfo->fn_extra;

	/* constant arguments, set up for this statement and user: nothing new */
	if (lk != NULL && lk->constant && lk->stats != NULL &&
		lk->lxid == MyProc->lxid && lk->cid == GetCurrentCommandId(false) &&
		lk->userid == GetUserId())
		return lk;
	if (PG_ARGISNULL(first) || PG_ARGISNULL(first + 1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("pipeline and join must not be null")));
	if (lk == NULL)
	{
		lk = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(JoinLookup));
		lk->constant = arg_const(fcinfo, first) && arg_const(fcinfo, first + 1) &&
			(columnarg < 0 || arg_const(fcinfo, columnarg));
		fcinfo->flinfo->fn_extra = lk;
	}
	if (columnarg >= 0 && PG_ARGISNULL(columnarg))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("column must not be null")));
	if (lk->lxid != MyProc->lxid || lk->cid != GetCurrentCommandId(false) ||
		lk->stats == NULL || lk->join != PG_GETARG_INT32(first + 1) ||
		!arg_is(fcinfo, first, lk->pipeline, lk->pipeline_len) ||
		(columnarg >= 0 && !arg_is(fcinfo, columnarg, lk->column, lk->column_len)))
		lookup_setup(fcinfo, lk, text_to_cstring(PG_GETARG_TEXT_PP(first)),
					 PG_GETARG_INT32(first + 1),
					 columnarg < 0 ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(columnarg)),
					 keyarg);
	return lk;
}

/* join_value(NULL::T, pipeline, join, column, at, VARIADIC keys) */
PG_FUNCTION_INFO_V1(sf_join_value);

Datum
sf_join_value(PG_FUNCTION_ARGS)
{
	JoinLookup *lk;
	JoinRowSlot *rs;
	Datum		d;
	bool		isnull;
	Form_pg_attribute att;

	lk = lookup_of(fcinfo, 1, 3, 5);
	rs = probe(fcinfo, lk, 4);
	if (rs == NULL || !rs->found)
		PG_RETURN_NULL();
	d = heap_getattr(rs->tuple, lk->attnum, lk->desc, &isnull);
	if (isnull)
		PG_RETURN_NULL();
	att = TupleDescAttr(lk->desc, lk->attnum - 1);
	/* a copy: the slot is reused by the next probe of another key */
	PG_RETURN_DATUM(datumCopy(d, att->attbyval, att->attlen));
}

/* join_found(pipeline, join, at, VARIADIC keys) */
PG_FUNCTION_INFO_V1(sf_join_found);

Datum
sf_join_found(PG_FUNCTION_ARGS)
{
	JoinLookup *lk = lookup_of(fcinfo, 0, -1, 3);
	JoinRowSlot *rs = probe(fcinfo, lk, 2);

	if (rs == NULL || !rs->found)
	{
		lk->stats->dropped++;
		PG_RETURN_BOOL(false);
	}
	PG_RETURN_BOOL(true);
}
