/*-------------------------------------------------------------------------
 *
 * aggregate_join.c
 *	  Joins of create_aggregate's query with dimension tables (issue 47,
 *	  docs/joins.md): the analyzed query's joins are checked and rewritten
 *	  into a query over the source table alone, whose expressions read the
 *	  dimensions' columns through lookup calls (aggregate_join_lookup.c).
 *
 * A query
 *
 *	 SELECT d.section, count(*) FROM clicks c JOIN pages d ON d.page = c.page
 *	  GROUP BY d.section, streamforge.tumble(c.at, interval '1 minute')
 *
 * becomes, before aggregate_sql.c describes it,
 *
 *	 SELECT streamforge_internal.join_value(NULL::text, 'agg', 1, 'section',
 *			NULL::timestamptz, c.page), count(*) FROM clicks c
 *	  WHERE streamforge_internal.join_found('agg', 1, NULL::timestamptz, c.page)
 *	  GROUP BY 1, streamforge.tumble(c.at, interval '1 minute')
 *
 * (the WHERE's call for an inner join only).  So the attachment's trigger
 * evaluates the mapping expressions as it always did, over the statement's
 * transition table, and each lookup is one probe of the dimension's unique
 * index by the event's key.  The joins themselves are described in the
 * aggregate's spec ("joins", read back at ingest by the lookups: the
 * trusted description, written by the extension's owner).
 *
 * What is accepted: FROM source JOIN d1 ON ... [LEFT] JOIN d2 ON ..., left
 * deep, each ON a conjunction of equalities "d.col = expr" (expr over the
 * source and earlier dimensions) that cover exactly the columns of a
 * unique, non-partial btree index of d without expressions, and for a
 * dimension joined as of event time, a validity condition: "d.valid_from
 * <= t AND t < d.valid_to" (or only the first) over timestamptz columns,
 * or "t <@ d.valid" over a tstzrange column, whose columns complete the
 * unique index after the equated ones.  Anything else is 0A000.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/aggregate_join.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_index.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parse_func.h"
#include "parser/parsetree.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/typcache.h"

#include "api/api.h"

#define refuse_join(...) \
	ereport(ERROR, \
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED), \
			 errmsg(__VA_ARGS__), \
			 errhint("A dimension is joined by FROM source JOIN dim ON dim.key = expr [AND a validity condition], INNER or LEFT, on the columns of a unique index of the dimension (docs/joins.md).")))

/* One dimension of the query */
typedef struct JoinDim
{
	Index		rtindex;
	Oid			relid;
	bool		inner;
	int			nkeys;			/* equated columns, in the index's order */
	AttrNumber	keyatt[INDEX_MAX_KEYS];
	Node	   *keyexpr[INDEX_MAX_KEYS];	/* rewritten: over the source */
	Oid			index;
	AttrNumber	valid_from;		/* 0 if none */
	AttrNumber	valid_to;
	AttrNumber	valid_range;
	Node	   *at;				/* the event time of the validity, NULL if none */
} JoinDim;

typedef struct JoinCtx
{
	const char *pipeline;
	List	   *dims;			/* JoinDim *, in join order */
	Oid			value_fn;
	Oid			found_fn;
} JoinCtx;

static JoinDim *
dim_of(JoinCtx *cx, Index varno)
{
	ListCell   *lc;

	foreach(lc, cx->dims)
		if (((JoinDim *) lfirst(lc))->rtindex == varno)
			return (JoinDim *) lfirst(lc);
	return NULL;
}

static int
dim_number(JoinCtx *cx, JoinDim *d)
{
	ListCell   *lc;

	foreach(lc, cx->dims)
		if (lfirst(lc) == d)
			return foreach_current_index(lc) + 1;
	return 0;
}

static Node *
text_const(const char *s)
{
	return (Node *) makeConst(TEXTOID, -1, DEFAULT_COLLATION_OID, -1,
							  CStringGetTextDatum(s), false, false);
}

static Node *
int4_const(int v)
{
	return (Node *) makeConst(INT4OID, -1, InvalidOid, 4, Int32GetDatum(v),
							  false, true);
}

/* The lookup arguments after the first ones: the time, then the keys */
static List *
lookup_args(JoinDim *d)
{
	List	   *args = NIL;

	args = lappend(args, d->at ? copyObject(d->at) :
				   (Node *) makeNullConst(TIMESTAMPTZOID, -1, InvalidOid));
	for (int i = 0; i < d->nkeys; i++)
		args = lappend(args, copyObject(d->keyexpr[i]));
	return args;
}

/*
 * Replaces each column of a dimension by its lookup; refuses columns of
 * join aliases and of dimensions not joined yet (limit: the number of
 * dimensions joined so far).
 */
typedef struct SubstCtx
{
	JoinCtx    *cx;
	int			limit;
} SubstCtx;

static Node *
subst_mutator(Node *node, SubstCtx *s)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var))
	{
		Var		   *v = (Var *) node;
		JoinDim    *d;
		FuncExpr   *f;
		List	   *args;

		if (v->varlevelsup != 0)
			refuse_join("outer references are not supported in a query with joins");
		if (v->varno == 1)
			return (Node *) copyObject(v);
		d = dim_of(s->cx, v->varno);
		if (d == NULL)
			refuse_join("columns of a join alias are not supported: name the table's columns");
		if (dim_number(s->cx, d) > s->limit)
			refuse_join("the join condition of table \"%s\" reads a table joined after it",
						get_rel_name(d->relid));
		if (v->varattno <= 0)
			refuse_join("system columns and whole-row references of table \"%s\" are not supported",
						get_rel_name(d->relid));
		args = list_make4(makeNullConst(v->vartype, v->vartypmod, v->varcollid),
						  text_const(s->cx->pipeline),
						  int4_const(dim_number(s->cx, d)),
						  text_const(get_attname(d->relid, v->varattno, false)));
		args = list_concat(args, lookup_args(d));
		f = makeFuncExpr(s->cx->value_fn, v->vartype, args, v->varcollid,
						 v->varcollid, COERCE_EXPLICIT_CALL);
		return (Node *) f;
	}
	return expression_tree_mutator(node, subst_mutator, (void *) s);
}

static Node *
subst(JoinCtx *cx, Node *node, int limit)
{
	SubstCtx	s = {cx, limit};

	return subst_mutator(node, &s);
}

/* Whether node reads a column of the relation rtindex */
static bool
reads_rel(Node *node, Index rtindex)
{
	return bms_is_member(rtindex, pull_varnos(NULL, node));
}

/* The column of d that node is, 0 if node is no plain column of d */
static AttrNumber
column_of(Node *node, JoinDim *d)
{
	while (node && IsA(node, RelabelType))
		node = (Node *) ((RelabelType *) node)->arg;
	if (node && IsA(node, Var) && ((Var *) node)->varno == d->rtindex &&
		((Var *) node)->varlevelsup == 0 && ((Var *) node)->varattno > 0)
		return ((Var *) node)->varattno;
	return 0;
}

/* One equality d.col = expr of an ON */
typedef struct JoinEq
{
	AttrNumber	att;
	Oid			opno;			/* with d's column on the left */
	Oid			collid;
	Node	   *expr;			/* the other side, as written */
} JoinEq;

static bool
op_named(Oid opno, const char *name)
{
	char	   *n = get_opname(opno);

	return n != NULL && strcmp(n, name) == 0 &&
		get_func_namespace(get_opcode(opno)) == PG_CATALOG_NAMESPACE;
}

/* Sets d's validity from one conjunct; false if the conjunct is none */
static bool
validity_part(JoinDim *d, OpExpr *e, Node *l, Node *r)
{
	AttrNumber	la = column_of(l, d);
	AttrNumber	ra = column_of(r, d);
	Node	   *t;
	AttrNumber	att;
	bool		from;

	if ((la != 0) == (ra != 0))
		return false;
	att = la ? la : ra;
	t = la ? r : l;
	if (reads_rel(t, d->rtindex))
		return false;
	if (exprType(t) != TIMESTAMPTZOID)
		return false;
	/* t <@ d.valid, d.valid @> t: a tstzrange */
	if ((op_named(e->opno, "<@") && ra) || (op_named(e->opno, "@>") && la))
	{
		if (get_atttype(d->relid, att) != TSTZRANGEOID || d->valid_range)
			return false;
		d->valid_range = att;
	}
	else
	{
		if (get_atttype(d->relid, att) != TIMESTAMPTZOID)
			return false;
		/* d.from <= t, t >= d.from; t < d.to, d.to > t */
		if ((op_named(e->opno, "<=") && la) || (op_named(e->opno, ">=") && ra))
			from = true;
		else if ((op_named(e->opno, "<") && ra) || (op_named(e->opno, ">") && la))
			from = false;
		else
			return false;
		if (from ? d->valid_from != 0 : d->valid_to != 0)
			return false;
		if (from)
			d->valid_from = att;
		else
			d->valid_to = att;
	}
	if (d->at != NULL && !equal(d->at, t))
		refuse_join("the validity condition of table \"%s\" must compare its columns with one time expression",
					get_rel_name(d->relid));
	d->at = t;
	return true;
}

/*
 * The unique index of d whose columns are exactly the equated ones, then
 * the validity's; fills d's keys in the index's order.
 */
static void
choose_index(JoinDim *d, List *eqs)
{
	Relation	rel = table_open(d->relid, AccessShareLock);
	List	   *indexes = RelationGetIndexList(rel);
	ListCell   *lc;
	int			neq = list_length(eqs);
	int			nvalid = (d->valid_from ? 1 : 0) + (d->valid_to ? 1 : 0) +
		(d->valid_range ? 1 : 0);
	StringInfoData cols;

	foreach(lc, indexes)
	{
		Relation	idx = index_open(lfirst_oid(lc), AccessShareLock);
		Form_pg_index ix = idx->rd_index;
		bool		ok = ix->indisunique && ix->indisvalid && ix->indislive &&
			idx->rd_rel->relam == BTREE_AM_OID &&
			heap_attisnull(idx->rd_indextuple, Anum_pg_index_indpred, NULL) &&
			heap_attisnull(idx->rd_indextuple, Anum_pg_index_indexprs, NULL);
		int			nk = ix->indnkeyatts;

		if (ok && (nk == neq || (nk > neq && nk <= neq + nvalid)))
		{
			for (int i = 0; i < nk && ok; i++)
			{
				AttrNumber	a = ix->indkey.values[i];

				if (i < neq)
				{
					ListCell   *le;
					JoinEq	   *found = NULL;

					foreach(le, eqs)
						if (((JoinEq *) lfirst(le))->att == a)
							found = (JoinEq *) lfirst(le);
					if (found == NULL ||
						get_op_opfamily_strategy(found->opno, idx->rd_opfamily[i]) != BTEqualStrategyNumber ||
						(OidIsValid(idx->rd_indcollation[i]) &&
						 found->collid != idx->rd_indcollation[i]))
						ok = false;
					else
					{
						d->keyatt[i] = a;
						d->keyexpr[i] = found->expr;
					}
				}
				else if (a != d->valid_from && a != d->valid_to && a != d->valid_range)
					ok = false;
			}
			/* as of event time, the start of the validity is in the index */
			if (ok && nvalid > 0 && nk == neq)
				ok = false;
			if (ok && nvalid > 0 && d->valid_range == 0)
			{
				bool		has_from = false;

				for (int i = neq; i < nk; i++)
					has_from |= ix->indkey.values[i] == d->valid_from;
				ok = has_from;
			}
		}
		else
			ok = false;
		if (ok)
		{
			d->index = RelationGetRelid(idx);
			d->nkeys = neq;
		}
		index_close(idx, AccessShareLock);
		if (ok)
			break;
	}
	table_close(rel, AccessShareLock);
	if (OidIsValid(d->index))
		return;
	initStringInfo(&cols);
	foreach(lc, eqs)
		appendStringInfo(&cols, "%s%s", cols.len ? ", " : "",
						 quote_identifier(get_attname(d->relid, ((JoinEq *) lfirst(lc))->att, false)));
	if (nvalid > 0)
		appendStringInfo(&cols, ", %s",
						 quote_identifier(get_attname(d->relid, d->valid_range ? d->valid_range : d->valid_from, false)));
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("table \"%s\" has no unique index on the columns it is joined on",
					get_rel_name(d->relid)),
			 errhint("Create a unique index or a primary key on (%s) of \"%s\", or join it on the columns of one.",
					 cols.data, get_rel_name(d->relid))));
}

/* Checks the ON of dimension d and fills its keys and index */
static void
analyze_on(JoinCtx *cx, JoinDim *d, Node *quals)
{
	List	   *eqs = NIL;

	if (quals == NULL)
		refuse_join("a join needs an ON condition");
	{
		List	   *conj = make_ands_implicit((Expr *) quals);
		ListCell   *cc;

		foreach(cc, conj)
		{
			OpExpr	   *e = (OpExpr *) lfirst(cc);
			Node	   *l;
			Node	   *r;
			JoinEq	   *eq;
			AttrNumber	att;
			ListCell   *le;

			if (!IsA(e, OpExpr) || list_length(e->args) != 2)
				refuse_join("the join condition of table \"%s\" must be equalities on its columns and a validity condition",
							get_rel_name(d->relid));
			l = linitial(e->args);
			r = lsecond(e->args);
			if (validity_part(d, e, l, r))
				continue;
			eq = palloc0(sizeof(JoinEq));
			eq->opno = e->opno;
			eq->collid = e->inputcollid;
			if ((att = column_of(l, d)) != 0)
				eq->expr = r;
			else if ((att = column_of(r, d)) != 0)
			{
				eq->expr = l;
				eq->opno = get_commutator(e->opno);
			}
			if (att == 0 || !op_named(e->opno, "=") || !OidIsValid(eq->opno) ||
				reads_rel(eq->expr, d->rtindex))
				refuse_join("the join condition of table \"%s\" must be equalities of its columns with expressions of the tables before it",
							get_rel_name(d->relid));
			foreach(le, eqs)
				if (((JoinEq *) lfirst(le))->att == att)
					refuse_join("column \"%s\" of table \"%s\" is equated twice",
								get_attname(d->relid, att, false), get_rel_name(d->relid));
			eq->att = att;
			eqs = lappend(eqs, eq);
		}
	}
	if (eqs == NIL)
		refuse_join("the join condition of table \"%s\" must equate its key columns",
					get_rel_name(d->relid));
	if (d->valid_to && !d->valid_from)
		refuse_join("the validity condition of table \"%s\" needs its start: d.valid_from <= t AND t < d.valid_to",
					get_rel_name(d->relid));
	choose_index(d, eqs);
	/* the keys and the time as expressions of the source */
	for (int i = 0; i < d->nkeys; i++)
		d->keyexpr[i] = subst(cx, d->keyexpr[i], dim_number(cx, d) - 1);
	if (d->at)
		d->at = subst(cx, d->at, dim_number(cx, d) - 1);
}

/* Collects the dimensions of a left-deep join tree, in order */
static void
collect(JoinCtx *cx, Query *q, Node *n)
{
	JoinExpr   *j;
	RangeTblEntry *rte;
	JoinDim    *d;

	if (IsA(n, RangeTblRef))
	{
		if (((RangeTblRef *) n)->rtindex != 1)
			refuse_join("the first table of FROM must be the source table");
		return;
	}
	if (!IsA(n, JoinExpr))
		refuse_join("this item in FROM is not supported");
	j = (JoinExpr *) n;
	collect(cx, q, j->larg);
	if (j->jointype != JOIN_INNER && j->jointype != JOIN_LEFT)
		refuse_join("only INNER and LEFT joins are supported");
	if (j->usingClause != NIL || j->isNatural)
		refuse_join("JOIN ... USING and NATURAL JOIN are not supported: write JOIN ... ON");
	if (j->alias != NULL)
		refuse_join("an alias of a join is not supported");
	if (!IsA(j->rarg, RangeTblRef))
		refuse_join("the right side of a join must be a table");
	rte = rt_fetch(((RangeTblRef *) j->rarg)->rtindex, q->rtable);
	if (rte->rtekind != RTE_RELATION)
		refuse_join("a joined item must be a table");
	if (rte->relkind != RELKIND_RELATION)
		refuse_join("joined \"%s\" must be a plain table", get_rel_name(rte->relid));
	if (rte->tablesample != NULL)
		refuse_join("TABLESAMPLE is not supported");
	/* the lookup reads the table's own index, not its children's rows */
	if (rte->inh && has_subclass(rte->relid))
		refuse_join("joined \"%s\" has inheritance children, whose rows a lookup of its index would miss: join ONLY \"%s\"",
					get_rel_name(rte->relid), get_rel_name(rte->relid));
	if (sf_aggregate_row_security(rte->relid))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("joined table \"%s\" has row-level security, which is not supported",
						get_rel_name(rte->relid)),
				 errhint("The aggregate reads a dimension with its creator's privileges, for every inserting role: join a table without row-level security.")));
	if (get_rel_persistence(rte->relid) == RELPERSISTENCE_TEMP)
		refuse_join("joined \"%s\" is a temporary table", get_rel_name(rte->relid));
	d = palloc0(sizeof(JoinDim));
	d->rtindex = ((RangeTblRef *) j->rarg)->rtindex;
	d->relid = rte->relid;
	d->inner = j->jointype == JOIN_INNER;
	cx->dims = lappend(cx->dims, d);
	analyze_on(cx, d, j->quals);
}

static void
json_names(StringInfo buf, Oid relid, const AttrNumber *atts, int n)
{
	appendStringInfoChar(buf, '[');
	for (int i = 0; i < n; i++)
	{
		if (i > 0)
			appendStringInfoString(buf, ", ");
		escape_json(buf, get_attname(relid, atts[i], false));
	}
	appendStringInfoChar(buf, ']');
}

static void
json_att(StringInfo buf, const char *key, Oid relid, AttrNumber att)
{
	appendStringInfo(buf, ", \"%s\": ", key);
	if (att == 0)
		appendStringInfoString(buf, "null");
	else
		escape_json(buf, get_attname(relid, att, false));
}

/* The description of the joins, a JSON array, trusted at ingest */
static void
describe_joins(JoinCtx *cx, Query *q, StringInfo buf)
{
	ListCell   *lc;

	appendStringInfoChar(buf, '[');
	foreach(lc, cx->dims)
	{
		JoinDim    *d = (JoinDim *) lfirst(lc);
		RangeTblEntry *rte = rt_fetch(d->rtindex, q->rtable);
		AttrNumber	cols[MaxHeapAttributeNumber];
		int			ncols = 0;
		int			k = -1;

		while ((k = bms_next_member(rte->selectedCols, k)) >= 0)
		{
			AttrNumber	a = k + FirstLowInvalidHeapAttributeNumber;

			if (a > 0)
				cols[ncols++] = a;
		}
		if (foreach_current_index(lc) > 0)
			appendStringInfoString(buf, ", ");
		appendStringInfoString(buf, "{\"relation\": ");
		escape_json(buf, quote_qualified_identifier(get_namespace_name(get_rel_namespace(d->relid)),
													get_rel_name(d->relid)));
		appendStringInfoString(buf, ", \"index\": ");
		escape_json(buf, quote_qualified_identifier(get_namespace_name(get_rel_namespace(d->index)),
													get_rel_name(d->index)));
		appendStringInfo(buf, ", \"inner\": %s, \"mode\": \"%s\", \"keys\": ",
						 d->inner ? "true" : "false",
						 d->at ? "event_time" : "ingestion");
		json_names(buf, d->relid, d->keyatt, d->nkeys);
		json_att(buf, "valid_from", d->relid, d->valid_from);
		json_att(buf, "valid_to", d->relid, d->valid_to);
		json_att(buf, "valid_range", d->relid, d->valid_range);
		appendStringInfoString(buf, ", \"columns\": ");
		json_names(buf, d->relid, cols, ncols);
		appendStringInfoString(buf, ", \"creator\": ");
		escape_json(buf, GetUserNameFromId(GetUserId(), false));
		appendStringInfoChar(buf, '}');
	}
	appendStringInfoChar(buf, ']');
}

static Oid
internal_fn(const char *name, int nargs, const Oid *types)
{
	return LookupFuncName(list_make2(makeString("streamforge_internal"),
									 makeString(pstrdup(name))),
						  nargs, types, false);
}

/*
 * If q joins its source with dimensions: checks the joins, rewrites q
 * into a query over the source alone (see the top of the file) and
 * appends the joins' description to joins (a JSON array); returns true.
 * Returns false, q untouched, for a query without JoinExpr.
 */
bool
sf_aggregate_join_rewrite(Query *q, const char *pipeline, StringInfo joins)
{
	JoinCtx		cx = {0};
	Node	   *where;
	ListCell   *lc;
	List	   *found = NIL;
	Oid			vtypes[6] = {ANYELEMENTOID, TEXTOID, INT4OID, TEXTOID, TIMESTAMPTZOID, ANYOID};
	Oid			ftypes[4] = {TEXTOID, INT4OID, TIMESTAMPTZOID, ANYOID};
	RangeTblEntry *source;

	if (q->jointree == NULL || list_length(q->jointree->fromlist) != 1 ||
		!IsA(linitial(q->jointree->fromlist), JoinExpr))
		return false;
	cx.pipeline = pipeline ? pipeline : "";
	cx.value_fn = internal_fn("join_value", 6, vtypes);
	cx.found_fn = internal_fn("join_found", 4, ftypes);
	source = rt_fetch(1, q->rtable);
	if (source->rtekind != RTE_RELATION)
		refuse_join("the first table of FROM must be the source table");

	/* the creator reads what the query reads: the dimensions too */
	ExecCheckRTPerms(q->rtable, true);

	collect(&cx, q, linitial(q->jointree->fromlist));
	foreach(lc, cx.dims)
	{
		JoinDim    *d = (JoinDim *) lfirst(lc);

		if (d->relid == source->relid)
			refuse_join("joining the source table \"%s\" with itself is not supported",
						get_rel_name(d->relid));
	}

	describe_joins(&cx, q, joins);

	/* the select list, the WHERE: dimensions' columns become lookups */
	q->targetList = (List *) subst(&cx, (Node *) q->targetList, list_length(cx.dims));
	where = subst(&cx, q->jointree->quals, list_length(cx.dims));
	/* an inner join drops the events without their dimension row */
	foreach(lc, cx.dims)
	{
		JoinDim    *d = (JoinDim *) lfirst(lc);

		if (d->inner)
			found = lappend(found,
							makeFuncExpr(cx.found_fn, BOOLOID,
										 list_concat(list_make2(text_const(cx.pipeline),
																int4_const(foreach_current_index(lc) + 1)),
													 lookup_args(d)),
										 InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL));
	}
	if (where != NULL)
		found = lappend(found, where);
	where = found == NIL ? NULL :
		list_length(found) == 1 ? (Node *) linitial(found) :
		(Node *) makeBoolExpr(AND_EXPR, found, -1);

	/* one table: the source */
	q->rtable = list_make1(source);
	q->jointree = makeFromExpr(list_make1(makeNode(RangeTblRef)), where);
	((RangeTblRef *) linitial(q->jointree->fromlist))->rtindex = 1;
	return true;
}

/*
 * The spec of the aggregate's registry row with the joins of its plan
 * (the trusted description the lookups read), spec itself if none
 */
Datum
sf_aggregate_join_spec(Datum spec, Datum plan)
{
	Jsonb	   *p = DatumGetJsonbP(plan);
	JsonbValue	v;
	JsonbValue	key;
	JsonbParseState *st = NULL;
	JsonbValue *res;

	if (getKeyJsonValueFromContainer(&p->root, "joins", 5, &v) == NULL)
		return spec;
	key.type = jbvString;
	key.val.string.val = "joins";
	key.val.string.len = 5;
	(void) pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	(void) pushJsonbValue(&st, WJB_KEY, &key);
	(void) pushJsonbValue(&st, WJB_VALUE, &v);
	res = pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	return DirectFunctionCall2(jsonb_concat, spec,
							   JsonbPGetDatum(JsonbValueToJsonb(res)));
}
