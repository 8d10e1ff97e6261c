/*-------------------------------------------------------------------------
 *
 * sink_bulk.c
 *	  Bulk insertion of the durable outputs' rows (0.4.0, issue 42 item 1):
 *	  the rows of one call go into streamforge.changelog, streamforge.results
 *	  or streamforge.late_output the way COPY FROM writes them, with
 *	  table_multi_insert (heap_multi_insert: one WAL record and one buffer
 *	  lock per page, not per row) and ExecInsertIndexTuples per row, with
 *	  no statement, plan, executor node or per-row look-up of any kind.
 *	  Used by sink_rows.c.
 *
 * What an INSERT statement would do, and what is done here instead:
 *
 * - Privileges: the sink runs as the extension's owner (sf_become_owner),
 *   which owns these tables; the caller's privilege on the pipeline was
 *   checked when the pipeline was opened (acl.c).  No ACL check is made.
 * - Row-level security: the tables enable it (for the readers' policies,
 *   sql/objects/50_security.sql), which does not apply to their owner
 *   unless someone forces it (ALTER TABLE ... FORCE ROW LEVEL SECURITY).
 *   If it applies to the current user (check_enable_rls), this file
 *   writes nothing and the caller runs its INSERT statement, whose
 *   policies' WITH CHECK then apply as before.
 * - Triggers: the extension defines none on these tables; only their
 *   owner (or a superuser) could add one.  If the table has any trigger
 *   at all, this file writes nothing and the caller runs its INSERT
 *   statement, so a trigger someone added still fires as it did.
 * - Constraints (NOT NULL, the CHECK of changelog.op) and the stored
 *   generated column (results.avg) are checked and computed as COPY does
 *   (ExecConstraints, ExecComputeStoredGenerated); unique indexes are
 *   checked by ExecInsertIndexTuples; partial and expression indexes are
 *   maintained by it too.
 * - Foreign keys: none since 0.4.0 (sql/schema/20_tables.sql).
 *
 * Columns are matched by name, so a table updated from an older release
 * (whose columns were appended by ALTER TABLE, and may have dropped ones)
 * is written like a fresh one; a column not given gets its default, as
 * with the INSERT statement (a column someone added with a DEFAULT), or
 * NULL without one.
 *
 * The rows are visible to the next command of the transaction
 * (CommandCounterIncrement at the end), as after an SPI statement.
 *
 * Memory: everything lives in the caller's current context, or in the
 * EState's, which is freed before returning; the slots are dropped.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/sink_bulk.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "executor/executor.h"
#include "executor/nodeModifyTable.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "nodes/primnodes.h"
#include "rewrite/rewriteHandler.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"

#include "engine/engine.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

/* Rows buffered before a table_multi_insert, as COPY's MAX_BUFFERED_TUPLES */
#define SF_BULK_BUFFERED	1000

/* The open table and its executor state, for one sf_bulk_insert */
typedef struct SfBulk
{
	Relation	rel;
	EState	   *estate;
	ResultRelInfo *rri;
	BulkInsertState bistate;
	CommandId	cid;
	bool		check;			/* has CHECK constraints */
	bool		notnull;		/* has NOT NULL columns */
	bool		generated;		/* has stored generated columns ... */
	int		   *copies;			/* ... and, if each is a copy of another
								 * column of its type, which: the attribute
								 * index, -1 for others; else NULL */
	TupleDesc	slotdesc;		/* the slots' descriptor (bulk_slot) */
	TupleTableSlot *slots[SF_BULK_BUFFERED];
	int			nslots;			/* slots made */
	int			nused;			/* slots filled, not yet written */
} SfBulk;

/* Write the buffered rows and their index entries (CopyMultiInsertBufferFlush) */
static void
bulk_flush(SfBulk *b)
{
	int			i;

	if (b->nused == 0)
		return;
	table_multi_insert(b->rel, b->slots, b->nused, b->cid, 0, b->bistate);
	for (i = 0; i < b->nused; i++)
	{
		if (b->rri->ri_NumIndices > 0)
		{
			List	   *recheck;

			recheck = ExecInsertIndexTuples(b->rri, b->slots[i], b->estate,
											false, false, NULL, NIL);
			list_free(recheck);
		}
		ExecClearTuple(b->slots[i]);
		ResetPerTupleExprContext(b->estate);
	}
	b->nused = 0;
}

/*
 * The stored generated columns of rel when each is a plain copy of another
 * column of the same type and typmod (a one-measure aggregate's count, as
 * aggregate_make_table makes it): copies[a] is the attribute index it
 * copies, -1 for the other columns.  NULL when any is an expression: then
 * ExecComputeStoredGenerated computes them (and materializes the row, which
 * a copy need not: table_multi_insert forms the tuple anyway).
 */
static int *
bulk_generated_copies(Relation rel)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int		   *copies = palloc(desc->natts * sizeof(int));

	for (int a = 0; a < desc->natts; a++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, a);
		Node	   *expr;
		Var		   *var;
		Form_pg_attribute src;

		copies[a] = -1;
		if (att->attisdropped || att->attgenerated != ATTRIBUTE_GENERATED_STORED)
			continue;
		expr = build_column_default(rel, a + 1);
		if (expr == NULL || !IsA(expr, Var))
			break;
		var = (Var *) expr;
		if (var->varlevelsup != 0 || var->varattno <= 0 ||
			var->varattno > desc->natts)
			break;
		src = TupleDescAttr(desc, var->varattno - 1);
		if (src->attisdropped || src->attgenerated ||
			src->atttypid != att->atttypid || src->atttypmod != att->atttypmod ||
			var->vartype != att->atttypid || var->vartypmod != att->atttypmod)
			break;
		copies[a] = var->varattno - 1;
	}
	for (int a = 0; a < desc->natts; a++)
		if (copies[a] < 0 && !TupleDescAttr(desc, a)->attisdropped &&
			TupleDescAttr(desc, a)->attgenerated == ATTRIBUTE_GENERATED_STORED)
		{
			pfree(copies);
			return NULL;
		}
	return copies;
}

/*
 * A slot for b's rows.  Its descriptor is b's own copy of the table's, not
 * reference-counted: a slot made on the relation's descriptor pins it in
 * the current resource owner, and each pin and release of the up to
 * SF_BULK_BUFFERED slots searched the owner's array of pinned
 * descriptors, about 6,000 instructions per slot (a third of the heap
 * insert of the row it carries).  The copy has the same attributes and
 * lives in the caller's context, as long as the slots.
 */
static TupleTableSlot *
bulk_slot(SfBulk *b)
{
	if (b->slotdesc == NULL)
		b->slotdesc = CreateTupleDescCopyConstr(RelationGetDescr(b->rel));
	Assert(b->slotdesc->tdrefcount == -1);
	return MakeSingleTupleTableSlot(b->slotdesc, table_slot_callbacks(b->rel));
}

/*
 * Whether a NOT NULL column of the row is null: only then need
 * ExecConstraints look at it (without CHECK constraints), and it raises the
 * error an INSERT statement would
 */
static bool
bulk_has_null(TupleDesc desc, TupleTableSlot *slot)
{
	for (int a = 0; a < desc->natts; a++)
		if (slot->tts_isnull[a] && TupleDescAttr(desc, a)->attnotnull)
			return true;
	return false;
}

/*
 * Insert n rows into streamforge.<table>: column k of row i is
 * cols[k].values[i] (NULL if cols[k].nulls and cols[k].nulls[i]), or
 * cols[k].constant for every row if cols[k].values is NULL.  Returns false,
 * having written nothing, if the table has triggers or row-level security
 * applies to the current user: the caller then runs its INSERT statement
 * (see the header comment).  Caller is the extension's owner and holds the
 * pipeline's row lock.
 */
bool
sf_bulk_insert(const char *table, const SfBulkColumn *cols, int ncols, int n)
{
	Oid			nsp = get_namespace_oid("streamforge", false);
	Oid			relid = get_relname_relid(table, nsp);

	if (!OidIsValid(relid))
		elog(ERROR, "streamforge: table streamforge.%s is missing", table);
	return sf_bulk_insert_rel(relid, cols, ncols, n);
}

/*
 * sf_bulk_insert into the table relid, which the extension's owner owns
 * (groundwork of issue 42 item 2: an aggregate's typed results table,
 * docs/design/typed-results.md; today only through sf_bulk_insert)
 */
bool
sf_bulk_insert_rel(Oid relid, const SfBulkColumn *cols, int ncols, int n)
{
	SfBulk		b;
	TupleDesc	desc;
	int		   *attidx;
	ExprState **defaults;		/* of the columns not given, or NULL */
	ExprContext *econtext;
	int			natts;
	int			i;
	int			k;

	if (n == 0)
		return true;

	b.rel = table_open(relid, RowExclusiveLock);
	if (b.rel->trigdesc != NULL ||
		check_enable_rls(relid, InvalidOid, true) == RLS_ENABLED)
	{
		table_close(b.rel, RowExclusiveLock);
		return false;
	}
	desc = RelationGetDescr(b.rel);
	natts = desc->natts;

	/* attidx[a]: the column of cols that gives attribute a + 1, or -1 */
	attidx = palloc(natts * sizeof(int));
	for (i = 0; i < natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		attidx[i] = -1;
		if (att->attisdropped || att->attgenerated)
			continue;
		for (k = 0; k < ncols; k++)
			if (strcmp(NameStr(att->attname), cols[k].name) == 0)
			{
				attidx[i] = k;
				break;
			}
	}
	for (k = 0; k < ncols; k++)
	{
		for (i = 0; i < natts; i++)
			if (attidx[i] == k)
				break;
		if (i == natts)
			elog(ERROR, "streamforge: column \"%s\" of table %s.%s is missing",
				 cols[k].name,
				 get_namespace_name(RelationGetNamespace(b.rel)),
				 RelationGetRelationName(b.rel));
	}

	b.estate = CreateExecutorState();
	econtext = GetPerTupleExprContext(b.estate);

	/* the defaults of the columns not given, as COPY FROM evaluates them */
	defaults = palloc0(natts * sizeof(ExprState *));
	for (i = 0; i < natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		Node	   *def;

		if (attidx[i] >= 0 || att->attisdropped || att->attgenerated)
			continue;
		def = build_column_default(b.rel, i + 1);
		if (def != NULL)
			defaults[i] = ExecPrepareExpr((Expr *) def, b.estate);
	}

	b.rri = makeNode(ResultRelInfo);
	InitResultRelInfo(b.rri, b.rel, 0, NULL, 0);
	ExecOpenIndices(b.rri, false);
	/* a ring of buffers for large writes only, as COPY's */
	b.bistate = n >= SF_BULK_BUFFERED ? GetBulkInsertState() : NULL;
	b.cid = GetCurrentCommandId(true);
	b.check = desc->constr != NULL && desc->constr->num_check > 0;
	b.notnull = desc->constr != NULL && desc->constr->has_not_null;
	b.generated = desc->constr != NULL && desc->constr->has_generated_stored;
	b.copies = b.generated ? bulk_generated_copies(b.rel) : NULL;
	b.slotdesc = NULL;
	b.nslots = 0;
	b.nused = 0;

	for (i = 0; i < n; i++)
	{
		TupleTableSlot *slot;
		int			a;

		if (b.nused == b.nslots)
			b.slots[b.nslots++] = bulk_slot(&b);
		slot = b.slots[b.nused];
		ExecClearTuple(slot);
		for (a = 0; a < natts; a++)
		{
			const SfBulkColumn *c;

			if (attidx[a] < 0)
			{
				/* in the caller's context: the row waits for bulk_flush */
				if (defaults[a] != NULL)
					slot->tts_values[a] = ExecEvalExpr(defaults[a], econtext,
													   &slot->tts_isnull[a]);
				else
				{
					slot->tts_values[a] = (Datum) 0;
					slot->tts_isnull[a] = true;
				}
				continue;
			}
			c = &cols[attidx[a]];
			if (c->values == NULL)
			{
				slot->tts_values[a] = c->constant;
				slot->tts_isnull[a] = c->constant_null;
			}
			else
			{
				slot->tts_values[a] = c->values[i];
				slot->tts_isnull[a] = c->nulls != NULL && c->nulls[i];
			}
		}
		ExecStoreVirtualTuple(slot);
		if (b.copies != NULL)
		{
			for (a = 0; a < natts; a++)
				if (b.copies[a] >= 0)
				{
					slot->tts_values[a] = slot->tts_values[b.copies[a]];
					slot->tts_isnull[a] = slot->tts_isnull[b.copies[a]];
				}
		}
		else if (b.generated)
			ExecComputeStoredGenerated(b.rri, b.estate, slot, CMD_INSERT);
		if (b.check || (b.notnull && bulk_has_null(desc, slot)))
			ExecConstraints(b.rri, slot, b.estate);
		b.nused++;
		if (b.nused == SF_BULK_BUFFERED)
		{
			CHECK_FOR_INTERRUPTS();
			bulk_flush(&b);
		}
	}
	bulk_flush(&b);

	if (b.bistate != NULL)
		FreeBulkInsertState(b.bistate);
	table_finish_bulk_insert(b.rel, 0);
	for (i = 0; i < b.nslots; i++)
		ExecDropSingleTupleTableSlot(b.slots[i]);
	ExecCloseIndices(b.rri);
	FreeExecutorState(b.estate);
	table_close(b.rel, NoLock);
	pfree(attidx);
	pfree(defaults);

	/* the rows are seen by the transaction's next command */
	CommandCounterIncrement();
	return true;
}
