/*-------------------------------------------------------------------------
 *
 * attach_rows.c
 *	  The statements of an attached table's insert trigger (0.4.0, issue
 *	  42, item 3; api/attach_insert.c is the trigger, sql/objects/
 *	  62_attach.sql the SQL around it).
 *
 * The trigger's checks are api/attach_check.c's; this file runs, in the
 * trigger's SPI connection, as the inserting role:
 *
 *	 - the rows query: streamforge_internal.attach_insert_query(args)
 *	   makes it from the trigger's arguments (one SELECT over the
 *	   transition table new_rows, one column per mapping, in the order of
 *	   streamforge.event or, for a measures attachment, of
 *	   measures_delivery without source_offset); its rows go to the
 *	   caller's DestReceiver, one slot at a time, evaluated here
 *	   (rows_direct) when the plan is the plain scan it makes, else by
 *	   the plan through a portal.
 *
 * The rows query is prepared once per trigger and backend, and kept
 * (SPI_keepplan) with the arguments it was made from: a trigger whose
 * arguments changed (a new attachment under the same trigger oid cannot
 * happen, but ALTER TRIGGER ... RENAME keeps the oid) gets a new one.
 * PostgreSQL's plan cache replans it after DDL on what it reads, with the
 * transition table of the statement at hand (SPI's query environment).
 *
 * Memory: the cache of rows queries lives in CacheMemoryContext.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/attach_rows.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "tcop/pquery.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/plancache.h"
#include "utils/snapmgr.h"

#include "engine/keytext.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

static const SfPlanText query_text = {
	"SELECT streamforge_internal.attach_insert_query($1)",
	1, {TEXTARRAYOID}
};
static SPIPlanPtr query_plan;

/* A trigger's kept rows query, by the trigger's oid */
typedef struct RowsQuery
{
	Oid			tgoid;			/* the hash key */
	char	   *args;			/* the arguments it was made from, \0-separated */
	int			args_len;
	SPIPlanPtr	plan;
} RowsQuery;

static HTAB *rows_queries;

/* The trigger's arguments as one \0-separated string, and its length */
static char *
joined_args(const Trigger *tg, int *len)
{
	StringInfoData s;

	initStringInfo(&s);
	for (int i = 0; i < tg->tgnargs; i++)
		appendBinaryStringInfo(&s, tg->tgargs[i], strlen(tg->tgargs[i]) + 1);
	*len = s.len;
	return s.data;
}

/* The trigger's arguments as a text[] */
static Datum
args_array(const Trigger *tg)
{
	Datum	   *elems = palloc(Max(tg->tgnargs, 1) * sizeof(Datum));

	for (int i = 0; i < tg->tgnargs; i++)
		elems[i] = CStringGetTextDatum(tg->tgargs[i]);
	return PointerGetDatum(construct_array(elems, tg->tgnargs, TEXTOID, -1,
										   false, TYPALIGN_INT));
}

/* The kept rows query of trigger tg, made on first use */
static SPIPlanPtr
rows_plan(const Trigger *tg)
{
	RowsQuery  *q;
	bool		found;
	int			len;
	char	   *args = joined_args(tg, &len);

	if (rows_queries == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(RowsQuery);
		ctl.hcxt = CacheMemoryContext;
		rows_queries = hash_create("streamforge attach rows queries", 16, &ctl,
								   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	q = hash_search(rows_queries, &tg->tgoid, HASH_ENTER, &found);
	if (found && q->plan != NULL && q->args_len == len &&
		memcmp(q->args, args, len) == 0)
		return q->plan;
	if (!found)
	{
		q->args = NULL;
		q->plan = NULL;
	}
	else
	{
		if (q->plan != NULL)
			SPI_freeplan(q->plan);
		q->plan = NULL;
		if (q->args != NULL)
			pfree(q->args);
		q->args = NULL;
	}
	{
		Datum		values[1];
		bool		isnull;
		char	   *sql;
		Oid			argtypes[2] = {TEXTOID, REGCLASSOID};
		SPIPlanPtr	plan;

		values[0] = args_array(tg);
		sf_run_plan(&query_plan, &query_text, values, NULL, false,
					SPI_OK_SELECT);
		if (SPI_processed != 1)
			elog(ERROR, "streamforge: attach_insert_query returned %d rows",
				 (int) SPI_processed);
		sql = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
		isnull = (sql == NULL);
		if (isnull)
			elog(ERROR, "streamforge: attach_insert_query returned NULL");
		plan = SPI_prepare(sql, 2, argtypes);
		if (plan == NULL)
			elog(ERROR, "streamforge: could not prepare the rows of trigger \"%s\": %s",
				 tg->tgname, SPI_result_code_string(SPI_result));
		if (SPI_keepplan(plan) != 0)
			elog(ERROR, "streamforge: could not keep the rows of trigger \"%s\"",
				 tg->tgname);
		q->args = MemoryContextAlloc(CacheMemoryContext, Max(len, 1));
		memcpy(q->args, args, len);
		q->args_len = len;
		q->plan = plan;
	}
	return q->plan;
}

/*
 * A text column or key element of the direct path: the expression, and
 * when it is an integer cast to text (the event id, a key of integers),
 * the integer, which the direct path writes as int2out/int4out/int8out
 * would, into buf (a text value, reused from row to row: a row's values
 * are consumed before the next row is evaluated).
 */
typedef struct TextExpr
{
	ExprState  *whole;
	ExprState  *intarg;
	Oid			inttype;
	text	   *buf;
} TextExpr;

/* e as a TextExpr, its states made in the current memory context */
static void
text_expr(TextExpr *t, Expr *e, Expr *inner)
{
	t->whole = ExecInitExpr(e, NULL);
	t->intarg = NULL;
	t->inttype = InvalidOid;
	t->buf = NULL;
	if (inner != NULL && IsA(inner, CoerceViaIO) &&
		((CoerceViaIO *) inner)->resulttype == TEXTOID)
	{
		Expr	   *arg = ((CoerceViaIO *) inner)->arg;
		Oid			type = exprType((Node *) arg);

		/*
		 * A NULL integer evaluates the whole expression: only where that
		 * evaluates the integer again to the same NULL, without effects
		 */
		if ((type == INT2OID || type == INT4OID || type == INT8OID) &&
			!contain_volatile_functions((Node *) arg))
		{
			t->intarg = ExecInitExpr(arg, NULL);
			t->inttype = type;
			t->buf = palloc(VARHDRSZ + MAXINT8LEN + 1);
		}
	}
}

/*
 * A TextExpr's value (a text datum); *digits (if not NULL): whether it is
 * an integer's text, which has nothing array_out would quote
 */
static Datum
text_eval(const TextExpr *t, ExprContext *econtext, bool *isnull, bool *digits)
{
	if (digits != NULL)
		*digits = false;
	if (t->intarg != NULL)
	{
		Datum		d = ExecEvalExpr(t->intarg, econtext, isnull);
		int			len;

		if (!*isnull)
		{
			if (t->inttype == INT2OID)
				len = pg_itoa(DatumGetInt16(d), VARDATA(t->buf));
			else if (t->inttype == INT4OID)
				len = pg_ltoa(DatumGetInt32(d), VARDATA(t->buf));
			else
				len = pg_lltoa(DatumGetInt64(d), VARDATA(t->buf));
			SET_VARSIZE(t->buf, VARHDRSZ + len);
			if (digits != NULL)
				*digits = true;
			return PointerGetDatum(t->buf);
		}
	}
	return ExecEvalExpr(t->whole, econtext, isnull);
}

/*
 * Whether the rows plan is what attach_insert_query makes: one scan of
 * the transition table, a filter, five columns, nothing else (no
 * subplan, no set-returning function, no whole-row or system column).
 */
static bool
plain_vars_walker(Node *node, void *natts)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
	{
		Var		   *v = (Var *) node;

		return v->varno != 1 || v->varlevelsup != 0 || v->varattno <= 0 ||
			v->varattno > *(int *) natts;
	}
	if (IsA(node, SubPlan) || IsA(node, AlternativeSubPlan))
		return true;
	return expression_tree_walker(node, plain_vars_walker, natts);
}

static bool
rows_plan_is_plain(const PlannedStmt *stmt, int natts)
{
	const Plan *scan = stmt->planTree;
	ListCell   *lc;

	if (stmt->commandType != CMD_SELECT || stmt->subplans != NIL ||
		list_length(stmt->rtable) != 1 || !IsA(scan, NamedTuplestoreScan) ||
		((const Scan *) scan)->scanrelid != 1 ||
		scan->lefttree != NULL || scan->righttree != NULL ||
		scan->initPlan != NIL || list_length(scan->targetlist) != 5)
		return false;
	foreach(lc, scan->targetlist)
		if (lfirst_node(TargetEntry, lc)->resjunk)
			return false;
	return !plain_vars_walker((Node *) scan->targetlist, &natts) &&
		!plain_vars_walker((Node *) scan->qual, &natts);
}

/*
 * timezone('UTC', ts) as ts relabeled timestamptz, where 'UTC' is a fixed
 * offset of zero in this session's timezone_abbreviations (as in every set
 * PostgreSQL ships): timestamp_zone then returns its argument's value
 * (dt2local by 0; infinities as they are; nothing out of range).  It is
 * how attach_insert_query maps a timestamp event_time (62_attach.sql), and
 * the name's parsing cost ~350 instructions per row.  Checked when the
 * expressions are made, at every statement.
 */
static Node *
utc_relabeled(Node *node, void *utc_zero)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, FuncExpr) &&
		((FuncExpr *) node)->funcid == F_TIMEZONE_TEXT_TIMESTAMP &&
		list_length(((FuncExpr *) node)->args) == 2)
	{
		Const	   *zone = linitial(((FuncExpr *) node)->args);

		if (IsA(zone, Const) && zone->consttype == TEXTOID && !zone->constisnull &&
			strcmp(TextDatumGetCString(zone->constvalue), "UTC") == 0)
		{
			if (*(int *) utc_zero < 0)
			{
				char		utc[] = "utc";
				int			offset;
				pg_tz	   *tz;
				int			type = DecodeTimezoneAbbrev(0, utc, &offset, &tz);

				*(int *) utc_zero = (type == TZ || type == DTZ) && offset == 0;
			}
			if (*(int *) utc_zero)
				return (Node *) makeRelabelType((Expr *) utc_relabeled(lsecond(((FuncExpr *) node)->args),
																	   utc_zero),
												TIMESTAMPTZOID, -1, InvalidOid,
												COERCE_IMPLICIT_CAST);
		}
	}
	return expression_tree_mutator(node, utc_relabeled, utc_zero);
}

/* COALESCE(x, ...) -> x, else e itself */
static Expr *
coalesced(Expr *e)
{
	if (IsA(e, CoalesceExpr))
		return linitial(((CoalesceExpr *) e)->args);
	return e;
}

/*
 * The direct path (issue 42 item 3, issue 47 item 4): the rows plan's
 * filter and columns, as PostgreSQL planned them, evaluated here over the
 * transition table's tuples, without the executor's scan and projection,
 * and with what the plan builds only to be taken apart not built:
 *
 *	- a key ARRAY[(e)::text, ...]::text is written from its elements, as
 *	  array_out writes a text[] (key_element), not as an array;
 *	- a measures attachment's ARRAY[(m)::int8, ...] (split_measures) comes
 *	  to dest as one bigint column per measure, not as an array;
 *	- an integer cast to text (the event id, a key of integers) is written
 *	  as its output function writes it.
 *
 * Everything else is the plan's own expressions, evaluated in the same
 * order as the portal would (the filter, then the columns in order), under
 * a snapshot taken as SPI_cursor_open takes it: same values, same errors.
 * Returns false, having evaluated nothing, when the plan is not the plain
 * scan attach_insert_query makes (sf_attach_rows then runs the portal).
 */
static bool
rows_direct(const TriggerData *td, SPIPlanPtr plan, ParamListInfo params,
			DestReceiver *dest, bool split_measures)
{
	CachedPlan *cplan = SPI_plan_get_cached_plan(plan);
	TupleDesc	reldesc = RelationGetDescr(td->tg_relation);
	PlannedStmt *stmt;
	Plan	   *scan;
	EState	   *estate;
	ExprContext *econtext;
	MemoryContext old;
	ExprState  *qual;
	TextExpr	cols[3];		/* partition, event id, whole key */
	TextExpr   *keys = NULL;	/* the key's elements, or NULL */
	int			nkeys = 0;
	List	   *tail = NIL;		/* event_time, then the value or measures */
	ProjectionInfo *tailproj;	/* all of them, one evaluation per row */
	TupleTableSlot *tailslot;
	bool		measures = false;	/* the value's elements, */
	int			nmeasures = 0;	/* how many */
	TupleDesc	outdesc;
	TupleTableSlot *in;
	TupleTableSlot *out;
	Tuplestorestate *ts = td->tg_newtable;
	int			readptr;
	StringInfoData key;
	Expr	   *e;

	if (cplan == NULL)
		return false;
	stmt = list_length(cplan->stmt_list) == 1
		? linitial_node(PlannedStmt, cplan->stmt_list) : NULL;
	if (stmt == NULL || ts == NULL ||
		!rows_plan_is_plain(stmt, reldesc->natts))
	{
		ReleaseCachedPlan(cplan, CurrentResourceOwner);
		return false;
	}
	scan = stmt->planTree;

	/*
	 * The states live in the estate's memory: its deletion ends what the
	 * expressions opened (the dimension scans of the join look-ups)
	 */
	estate = CreateExecutorState();
	estate->es_param_list_info = params;
	old = MemoryContextSwitchTo(estate->es_query_cxt);
	qual = ExecInitQual(scan->qual, NULL);
	for (int c = 0; c < 2; c++)
	{
		e = list_nth_node(TargetEntry, scan->targetlist, c)->expr;
		text_expr(&cols[c], e, coalesced(e));
	}
	e = list_nth_node(TargetEntry, scan->targetlist, 2)->expr;
	{
		Expr	   *k = coalesced(e);

		if (IsA(k, CoerceViaIO) && ((CoerceViaIO *) k)->resulttype == TEXTOID &&
			IsA(((CoerceViaIO *) k)->arg, ArrayExpr))
		{
			ArrayExpr  *a = (ArrayExpr *) ((CoerceViaIO *) k)->arg;
			ListCell   *lc;

			if (!a->multidims && a->element_typeid == TEXTOID &&
				a->array_typeid == TEXTARRAYOID)
			{
				nkeys = list_length(a->elements);
				keys = palloc(sizeof(TextExpr) * Max(nkeys, 1));
				foreach(lc, a->elements)
					text_expr(&keys[foreach_current_index(lc)], lfirst(lc), lfirst(lc));
			}
		}
		if (keys == NULL)
			text_expr(&cols[2], e, NULL);
	}
	{
		int			utc_zero = -1;	/* not known yet */

		e = list_nth_node(TargetEntry, scan->targetlist, 3)->expr;
		tail = lappend(tail, makeTargetEntry((Expr *) utc_relabeled((Node *) e, &utc_zero),
											 1, NULL, false));
	}
	e = list_nth_node(TargetEntry, scan->targetlist, 4)->expr;
	if (split_measures && IsA(e, ArrayExpr) && !((ArrayExpr *) e)->multidims &&
		((ArrayExpr *) e)->element_typeid == INT8OID &&
		list_length(((ArrayExpr *) e)->elements) > 0 &&
		list_length(((ArrayExpr *) e)->elements) <= 64)
	{
		ListCell   *lc;

		measures = true;
		nmeasures = list_length(((ArrayExpr *) e)->elements);
		foreach(lc, ((ArrayExpr *) e)->elements)
			tail = lappend(tail, makeTargetEntry(lfirst(lc), list_length(tail) + 1,
												 NULL, false));
	}
	else
		tail = lappend(tail, makeTargetEntry(e, 2, NULL, false));

	outdesc = CreateTemplateTupleDesc(4 + Max(nmeasures, 1));
	TupleDescInitEntry(outdesc, 1, "partition", TEXTOID, -1, 0);
	TupleDescInitEntry(outdesc, 2, "event_id", TEXTOID, -1, 0);
	TupleDescInitEntry(outdesc, 3, "key", TEXTOID, -1, 0);
	TupleDescInitEntry(outdesc, 4, "event_time", INT8OID, -1, 0);
	if (!measures)
		TupleDescInitEntry(outdesc, 5, "value", exprType((Node *) e), -1, 0);
	for (int m = 0; m < nmeasures; m++)
		TupleDescInitEntry(outdesc, 5 + m, NULL, INT8OID, -1, 0);
	in = MakeSingleTupleTableSlot(reldesc, &TTSOpsMinimalTuple);
	out = MakeSingleTupleTableSlot(outdesc, &TTSOpsVirtual);
	initStringInfo(&key);
	readptr = tuplestore_alloc_read_pointer(ts, EXEC_FLAG_REWIND);
	MemoryContextSwitchTo(old);

	econtext = GetPerTupleExprContext(estate);
	econtext->ecxt_param_list_info = params;
	econtext->ecxt_scantuple = in;
	/* the last columns, in their order, as one projection (one call) */
	old = MemoryContextSwitchTo(estate->es_query_cxt);
	tailslot = MakeSingleTupleTableSlot(ExecTypeFromTL(tail), &TTSOpsVirtual);
	tailproj = ExecBuildProjectionInfo(tail, econtext, tailslot, NULL, reldesc);
	MemoryContextSwitchTo(old);
	dest->rStartup(dest, CMD_SELECT, outdesc);

	/* what SPI_cursor_open gives a statement: the commands before, a snapshot */
	CommandCounterIncrement();
	PushActiveSnapshot(GetTransactionSnapshot());
	tuplestore_select_read_pointer(ts, readptr);
	tuplestore_rescan(ts);
	for (;;)
	{
		Datum	   *values = out->tts_values;
		bool	   *isnull = out->tts_isnull;

		CHECK_FOR_INTERRUPTS();
		ResetExprContext(econtext);
		tuplestore_select_read_pointer(ts, readptr);
		if (!tuplestore_gettupleslot(ts, true, false, in))
			break;
		if (!ExecQual(qual, econtext))
			continue;
		old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
		ExecClearTuple(out);
		values[0] = text_eval(&cols[0], econtext, &isnull[0], NULL);
		values[1] = text_eval(&cols[1], econtext, &isnull[1], NULL);
		if (keys == NULL)
			values[2] = text_eval(&cols[2], econtext, &isnull[2], NULL);
		else
		{
			/* a text value in key's buffer: its header, then the bytes */
			resetStringInfo(&key);
			key.len = VARHDRSZ;
			appendStringInfoChar(&key, '{');
			for (int k = 0; k < nkeys; k++)
			{
				bool		null;
				bool		digits;
				Datum		d = text_eval(&keys[k], econtext, &null, &digits);

				if (k > 0)
					appendStringInfoChar(&key, ',');
				if (null)
					appendStringInfoString(&key, "NULL");
				else if (digits)
					appendBinaryStringInfo(&key, VARDATA(DatumGetPointer(d)),
										   VARSIZE(DatumGetPointer(d)) - VARHDRSZ);
				else
				{
					text	   *t = DatumGetTextPP(d);

					sf_key_element_out(&key, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
				}
			}
			appendStringInfoChar(&key, '}');
			SET_VARSIZE(key.data, key.len);
			values[2] = PointerGetDatum(key.data);
			isnull[2] = false;
		}
		ExecProject(tailproj);
		memcpy(values + 3, tailslot->tts_values, sizeof(Datum) * (1 + Max(nmeasures, 1)));
		memcpy(isnull + 3, tailslot->tts_isnull, sizeof(bool) * (1 + Max(nmeasures, 1)));
		ExecStoreVirtualTuple(out);
		MemoryContextSwitchTo(old);
		dest->receiveSlot(out, dest);
	}
	PopActiveSnapshot();
	dest->rShutdown(dest);
	ExecDropSingleTupleTableSlot(in);
	ExecDropSingleTupleTableSlot(out);
	ExecDropSingleTupleTableSlot(tailslot);
	FreeExecutorState(estate);
	ReleaseCachedPlan(cplan, CurrentResourceOwner);
	return true;
}

/*
 * Run the rows query of the insert trigger td into dest, as the current
 * role: $1 is the pipeline's name (the trigger's first argument), $2 the
 * table.  Caller is connected to SPI and has registered td's transition
 * tables (SPI_register_trigger_data).  split_measures: dest takes a
 * measures attachment's measures as one bigint column each (rows_direct)
 * when the plan allows it, else as the bigint[] of the query.
 */
void
sf_attach_rows(const TriggerData *td, DestReceiver *dest, bool split_measures)
{
	SPIPlanPtr	plan = rows_plan(td->tg_trigger);
	ParamListInfo params = makeParamList(2);
	Portal		portal;

	params->params[0].value = CStringGetTextDatum(td->tg_trigger->tgargs[0]);
	params->params[0].isnull = false;
	params->params[0].pflags = PARAM_FLAG_CONST;
	params->params[0].ptype = TEXTOID;
	params->params[1].value = ObjectIdGetDatum(RelationGetRelid(td->tg_relation));
	params->params[1].isnull = false;
	params->params[1].pflags = PARAM_FLAG_CONST;
	params->params[1].ptype = REGCLASSOID;

	if (rows_direct(td, plan, params, dest, split_measures))
		return;

	/*
	 * Through a portal, as PL/pgSQL's FOR over EXECUTE ran it in 0.3.0: an
	 * error the mapping raises (a NULL, a dimension table's privilege) then
	 * carries no "SQL statement" context quoting the generated query, which
	 * SPI_execute_plan would add.
	 */
	portal = SPI_cursor_open_with_paramlist(NULL, plan, params, false);
	(void) PortalRunFetch(portal, FETCH_FORWARD, FETCH_ALL, dest);
	SPI_cursor_close(portal);
}

/*
 * Connect the insert trigger td to SPI, with its transition tables, and
 * disconnect it (sf_attach_end) once its statements have run.
 */
void
sf_attach_begin(TriggerData *td)
{
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "streamforge: SPI_connect failed");
	if (SPI_register_trigger_data(td) != SPI_OK_TD_REGISTER)
		elog(ERROR, "streamforge: could not register the transition table");
}

void
sf_attach_end(void)
{
	if (SPI_finish() != SPI_OK_FINISH)
		elog(ERROR, "streamforge: SPI_finish failed");
}
