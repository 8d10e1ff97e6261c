/*-------------------------------------------------------------------------
 *
 * aggregate_sql.c
 *	  The query of streamforge.create_aggregate(): parsed and analyzed by
 *	  PostgreSQL's own parser, checked, and described for the SQL that
 *	  builds the pipeline (sql/install/65_aggregates.sql).
 *
 * streamforge_internal.aggregate_plan(query text) runs raw_parser() and
 * parse_analyze_fixedparams() on the query, in the caller's search_path
 * (so that "FROM clicks" means the table the caller means), then walks the
 * Query tree:
 *
 *   - exactly one SELECT, over exactly one plain table (no join, subquery,
 *     function, CTE, set operation, DISTINCT, HAVING, ORDER BY, LIMIT,
 *     window function, grouping set, sublink, locking clause, TABLESAMPLE);
 *   - a GROUP BY of expressions of the table and of exactly one window
 *     call: streamforge.tumble(ts, size), hop(ts, size, slide) or
 *     session(ts, gap), with constant intervals;
 *   - a select list of GROUP BY expressions, the window call and
 *     aggregates of the supported set (count(*), count(x), sum, min, max,
 *     avg, var_pop, var_samp, variance, stddev_pop, stddev_samp, stddev)
 *     over expressions of the table, nullable or not (arg_not_null), and
 *     count(*) FILTER (WHERE f) (described as count_if over x for f = "x
 *     op c", x NOT NULL, and as count_if(= 1) over CASE WHEN f THEN 1
 *     ELSE 0 END for any other f); agg(x) FILTER (WHERE f) is agg over
 *     CASE WHEN f THEN x END, a nullable argument;
 *   - GROUP BY expressions of the types whose equality a text form gives
 *     (aggregate_keys.c: numeric and floats are normalized, the others
 *     are refused);
 *   - an optional WHERE; no volatile function anywhere.
 *
 * Anything else is 0A000 with a message naming the construct.  The caller
 * must have SELECT on the columns the query reads (ExecCheckRTPerms, as
 * the query itself would be checked).
 *
 * The result is a jsonb document: the table, the window (kind, time
 * expression, sizes in microseconds, the time column's precision), the
 * keys (expression, column name, type), the aggregates (function, argument
 * expression, alias, SQL result type) and the WHERE.  Expressions are
 * deparsed by ruleutils with search_path = pg_catalog, pg_temp, so that
 * every name outside pg_catalog comes out qualified: the attachment's
 * trigger functions evaluate them with that search_path.
 *
 * The mapping to the engine (a one-measure pipeline, or a measures
 * pipeline for several expressions and the variances) is decided in SQL,
 * in streamforge_internal.aggregate_create (65_aggregates.sql); this file
 * only describes the query ("func" is the engine's name: variance and
 * stddev come out as var_samp and stddev_samp).
 *
 * Memory: everything is palloc'd in the caller's context; nothing is kept
 * across calls.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/aggregate_sql.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "common/int.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_class.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/analyze.h"
#include "parser/parse_func.h"
#include "parser/parser.h"
#include "parser/parsetree.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/ruleutils.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "api/api.h"

/* A refusal of a construct of the query */
#define refuse(...) \
	ereport(ERROR, \
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED), \
			 errmsg(__VA_ARGS__), \
			 errhint("streamforge.create_aggregate() takes a SELECT of GROUP BY columns and aggregates over one table, grouped by one of streamforge.tumble(), hop() or session().")))

typedef struct AggWalk
{
	Oid			relid;
	Oid			marker[SF_WINDOW_NKINDS];	/* each kind's marker function */
	const char *where;			/* what is being walked, for messages */
} AggWalk;

/*
 * The oid of a kind's marker function, "<schema>.<name>"(timestamptz, one
 * interval per param), InvalidOid if none
 */
static Oid
marker_oid(const SfWindowOps *o)
{
	Oid			argtypes[1 + SF_WPARAM_NBITS];
	int			nargs = 1;
	char	   *schema;
	char	   *dot;

	if (o->marker_proc == NULL)
		return InvalidOid;
	schema = pstrdup(o->marker_proc);
	dot = strchr(schema, '.');
	Assert(dot != NULL);
	*dot = '\0';
	argtypes[0] = TIMESTAMPTZOID;
	for (int i = 0; i < SF_WPARAM_NBITS; i++)
		if (o->params & (1 << i))
			argtypes[nargs++] = INTERVALOID;
	return LookupFuncName(list_make2(makeString(schema), makeString(dot + 1)),
						  nargs, argtypes, true);
}

/* The kind whose marker funcid is, NULL if none */
static const SfWindowOps *
window_ops_of(Oid funcid, const AggWalk *w)
{
	for (int k = 0; k < SF_WINDOW_NKINDS; k++)
		if (OidIsValid(w->marker[k]) && funcid == w->marker[k])
			return sf_window_ops((SfWindowKind) k);
	return NULL;
}

static bool
is_window_call(Node *node, const AggWalk *w)
{
	return node != NULL && IsA(node, FuncExpr) &&
		window_ops_of(((FuncExpr *) node)->funcid, w) != NULL;
}

/*
 * Refuses what no expression of the query may contain: sublinks, volatile
 * functions, temporary functions, operators and types
 * (sf_aggregate_refuse_temp), system columns,
 * other relations' columns, window calls outside the GROUP BY, aggregates
 * where none belongs.  Returns false to continue the walk.
 */
static bool
check_expr_walker(Node *node, AggWalk *w)
{
	if (node == NULL)
		return false;
	sf_aggregate_refuse_temp(node, w->where);
	if (IsA(node, Var))
	{
		Var		   *v = (Var *) node;

		if (v->varattno <= 0)
			refuse("system columns and whole-row references are not supported in %s", w->where);
		return false;
	}
	if (IsA(node, SubLink))
		refuse("subqueries are not supported in %s", w->where);
	if (IsA(node, Aggref))
		refuse("aggregates are not supported in %s", w->where);
	if (IsA(node, WindowFunc))
		refuse("window functions (OVER) are not supported in %s", w->where);
	if (IsA(node, GroupingFunc))
		refuse("GROUPING() is not supported in %s", w->where);
	if (IsA(node, Param))
		refuse("parameters are not supported in %s", w->where);
	if (IsA(node, NextValueExpr))
		refuse("sequence values are not supported in %s", w->where);
	if (is_window_call(node, w))
		refuse("streamforge.%s() is supported only as an item of GROUP BY",
			   window_ops_of(((FuncExpr *) node)->funcid, w)->marker);
	return expression_tree_walker(node, check_expr_walker, (void *) w);
}

static void
check_expr(Node *node, AggWalk *w, const char *where)
{
	w->where = where;
	check_expr_walker(node, w);
	if (contain_volatile_functions(node))
		refuse("volatile functions are not supported in %s", where);
}

/* Deparses an expression over the table */
static char *
deparse(Node *node, Oid relid)
{
	List	   *ctx = deparse_context_for(get_rel_name(relid), relid);

	return deparse_expression(node, ctx, false, false);
}

/* An interval constant as microseconds, refusing what is not one */
static int64
const_interval_us(Node *node, const char *what)
{
	Const	   *c;
	Interval   *iv;

	node = eval_const_expressions(NULL, node);
	if (!IsA(node, Const) || ((Const *) node)->consttype != INTERVALOID)
		refuse("the %s of the window must be a constant interval", what);
	c = (Const *) node;
	if (c->constisnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the %s of the window must not be null", what)));
	iv = DatumGetIntervalP(c->constvalue);
	if (iv->month != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the %s of the window must not contain months or years", what)));
	if (iv->day > PG_INT64_MAX / USECS_PER_DAY ||
		iv->day < PG_INT64_MIN / USECS_PER_DAY ||
		pg_add_s64_overflow((int64) iv->day * USECS_PER_DAY, iv->time, &(int64){0}))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("the %s of the window is out of range", what)));
	return (int64) iv->day * USECS_PER_DAY + iv->time;
}

static void
json_key(StringInfo buf, const char *key, bool first)
{
	if (!first)
		appendStringInfoString(buf, ", ");
	escape_json(buf, key);
	appendStringInfoString(buf, ": ");
}

static void
json_str(StringInfo buf, const char *key, const char *value, bool first)
{
	json_key(buf, key, first);
	if (value == NULL)
		appendStringInfoString(buf, "null");
	else
		escape_json(buf, value);
}

static void
json_int(StringInfo buf, const char *key, int64 value, bool first)
{
	json_key(buf, key, first);
	appendStringInfo(buf, INT64_FORMAT, value);
}

/* Whether a column of the table is NOT NULL */
static bool
column_not_null(Oid relid, AttrNumber attnum)
{
	HeapTuple	tp = SearchSysCache2(ATTNUM, ObjectIdGetDatum(relid),
									 Int16GetDatum(attnum));
	bool		result = false;

	if (HeapTupleIsValid(tp))
	{
		result = ((Form_pg_attribute) GETSTRUCT(tp))->attnotnull;
		ReleaseSysCache(tp);
	}
	return result;
}

/*
 * Whether an expression over the table is never NULL: a constant, a NOT
 * NULL column, an operator or cast of pg_catalog's, strict, over such
 * expressions (amount * 2, a + b, x::bigint, a >= 10), AND, OR and NOT of
 * such expressions, IS [NOT] NULL and IS [NOT] TRUE tests (never NULL),
 * COALESCE, GREATEST and LEAST with one such argument, and a CASE whose
 * results and ELSE all are (a NULL condition is not true: the ELSE).
 * Anything else (a function call, NULLIF, a CASE without ELSE) is taken as
 * nullable.
 */
static bool
expr_not_null(Node *node, Oid relid)
{
	List	   *args;
	Oid			funcid;
	ListCell   *lc;

	if (IsA(node, Const))
		return !((Const *) node)->constisnull;
	if (IsA(node, Var))
		return column_not_null(relid, ((Var *) node)->varattno);
	if (IsA(node, RelabelType))
		return expr_not_null((Node *) ((RelabelType *) node)->arg, relid);
	if (IsA(node, NullTest) || IsA(node, BooleanTest))
		return true;
	if (IsA(node, BoolExpr))
	{
		foreach(lc, ((BoolExpr *) node)->args)
			if (!expr_not_null((Node *) lfirst(lc), relid))
				return false;
		return true;
	}
	if (IsA(node, CoalesceExpr) || IsA(node, MinMaxExpr))
	{
		args = IsA(node, CoalesceExpr) ? ((CoalesceExpr *) node)->args :
			((MinMaxExpr *) node)->args;
		foreach(lc, args)
			if (expr_not_null((Node *) lfirst(lc), relid))
				return true;
		return false;
	}
	if (IsA(node, CaseExpr))
	{
		CaseExpr   *c = (CaseExpr *) node;

		if (c->defresult == NULL || !expr_not_null((Node *) c->defresult, relid))
			return false;
		foreach(lc, c->args)
			if (!expr_not_null((Node *) lfirst_node(CaseWhen, lc)->result, relid))
				return false;
		return true;
	}
	if (IsA(node, OpExpr))
	{
		funcid = get_opcode(((OpExpr *) node)->opno);
		args = ((OpExpr *) node)->args;
	}
	else if (IsA(node, FuncExpr) &&
			 ((FuncExpr *) node)->funcformat != COERCE_EXPLICIT_CALL)
	{
		funcid = ((FuncExpr *) node)->funcid;
		args = ((FuncExpr *) node)->args;
	}
	else
		return false;
	if (!OidIsValid(funcid) || !func_strict(funcid) ||
		get_func_namespace(funcid) != PG_CATALOG_NAMESPACE)
		return false;
	foreach(lc, args)
		if (!expr_not_null((Node *) lfirst(lc), relid))
			return false;
	return true;
}

/* The name of an aggregate of the supported set, NULL for any other */
static const char *
supported_aggregate(Aggref *a)
{
	char	   *name = get_func_name(a->aggfnoid);
	Oid			nsp = get_func_namespace(a->aggfnoid);

	const SfAggOps *o;

	if (nsp != PG_CATALOG_NAMESPACE || name == NULL)
	{
		o = sf_aggregate_sf_ops(a->aggfnoid);	/* max_by (aggregate_args.c) */
		return o ? o->name : NULL;
	}
	/* the registry's pg_names (agg_ops.h); agg(DISTINCT x) maps apart */
	o = sf_agg_ops_by_pg_name(name, a->aggdistinct != NIL);
	if (o == NULL && a->aggdistinct != NIL)
		o = sf_agg_ops_by_pg_name(name, false); /* DISTINCT is refused */
	return o ? o->name : NULL;
}

/*
 * The aggregate's argument, checked; NULL for count(*).  One of two
 * arguments (aggregate_args.c): *arg2 the second (else NULL), *fraction a
 * percentile's (else -1).
 */
static Node *
aggregate_argument(Aggref *a, AggWalk *w, const char *name, Node **arg2,
				   int64 *fraction)
{
	TargetEntry *arg;
	const SfAggOps *o = sf_agg_ops_by_name(name);
	Node	   *x;

	*arg2 = NULL;
	*fraction = -1;
	if (o->arg == SF_AGGARG_BY || o->arg == SF_AGGARG_FRACTION)
	{
		sf_aggregate_two_args(a, o, &x, arg2, fraction);
		check_expr(x, w, "the argument of an aggregate");
		if (*arg2 != NULL)
			check_expr(*arg2, w, "the argument of an aggregate");
		return x;
	}
	if (a->aggdistinct != NIL && !sf_agg_ops_by_name(name)->pg_distinct)
		refuse("DISTINCT in aggregate %s() is not supported", name);
	if (a->aggorder != NIL)
		refuse("ORDER BY in aggregate %s() is not supported", name);
	if (a->aggkind != AGGKIND_NORMAL || a->aggdirectargs != NIL)
		refuse("ordered-set aggregate %s() is not supported", name);
	if (a->aggstar)
		return NULL;
	if (list_length(a->args) != 1)
		refuse("aggregate %s() with %d arguments is not supported", name,
			   list_length(a->args));
	arg = linitial_node(TargetEntry, a->args);
	check_expr((Node *) arg->expr, w, "the argument of an aggregate");
	return (Node *) arg->expr;
}

static bool
is_integer_type(Oid typ)
{
	return typ == INT2OID || typ == INT4OID || typ == INT8OID;
}

/*
 * count(*) FILTER (WHERE x op c), x a NOT NULL integer expression of the
 * table, op one of pg_catalog's integer comparisons =, <>, <, <=, >, >=
 * and c a non-NULL integer constant (c op x is turned around): the
 * engine's count_if over x, as in 0.3.0.  Sets *x, *op and *c and returns
 * true; false for any other filter (see filter_indicator).
 */
static bool
filter_comparison(Node *filter, AggWalk *w, Node **x, const char **op, int64 *c)
{
	static const char *const ops[] = {"=", "<>", "<", "<=", ">", ">="};
	static const char *const flipped[] = {"=", "<>", ">", ">=", "<", "<="};
	OpExpr	   *e;
	Node	   *l;
	Node	   *r;
	char	   *opname;
	int			k = -1;
	bool		flip = false;
	Const	   *k_const;

	/* as written, before eval_const_expressions inlines anything */
	check_expr(filter, w, "the FILTER of an aggregate");
	if (!IsA(filter, OpExpr) || list_length(((OpExpr *) filter)->args) != 2)
		return false;
	e = (OpExpr *) filter;
	opname = get_opname(e->opno);
	for (int i = 0; i < (int) lengthof(ops); i++)
		if (opname != NULL && strcmp(opname, ops[i]) == 0)
			k = i;
	l = eval_const_expressions(NULL, linitial(e->args));
	r = eval_const_expressions(NULL, lsecond(e->args));
	if (IsA(l, Const) && !IsA(r, Const))
	{
		Node	   *t = l;

		l = r;
		r = t;
		flip = true;
	}
	if (k < 0 || get_func_namespace(get_opcode(e->opno)) != PG_CATALOG_NAMESPACE ||
		!is_integer_type(exprType(l)) || !IsA(r, Const) ||
		!is_integer_type(exprType(r)) || ((Const *) r)->constisnull ||
		!expr_not_null(l, w->relid))
		return false;
	k_const = (Const *) r;
	check_expr(l, w, "the FILTER of an aggregate");
	*x = l;
	*op = flip ? flipped[k] : ops[k];
	*c = k_const->consttype == INT8OID ? DatumGetInt64(k_const->constvalue) :
		k_const->consttype == INT4OID ? (int64) DatumGetInt32(k_const->constvalue) :
		(int64) DatumGetInt16(k_const->constvalue);
	return true;
}

/*
 * Any other FILTER (WHERE f) of count(*): CASE WHEN f THEN 1 ELSE 0 END, a
 * NOT NULL integer measure whose count_if(= 1) is the count.  A NULL f is
 * not true, so the row is not counted: FILTER's own rule.
 */
static Node *
filter_indicator(Node *filter, AggWalk *w)
{
	CaseExpr   *c = makeNode(CaseExpr);
	CaseWhen   *when = makeNode(CaseWhen);

	check_expr(filter, w, "the FILTER of an aggregate");
	when->expr = (Expr *) filter;
	when->result = (Expr *) makeConst(INT4OID, -1, InvalidOid, 4,
									  Int32GetDatum(1), false, true);
	when->location = -1;
	c->casetype = INT4OID;
	c->casecollid = InvalidOid;
	c->arg = NULL;
	c->args = list_make1(when);
	c->defresult = (Expr *) makeConst(INT4OID, -1, InvalidOid, 4,
									  Int32GetDatum(0), false, true);
	c->location = -1;
	return (Node *) c;
}

/*
 * agg(x) FILTER (WHERE f) of any other aggregate: agg over CASE WHEN f
 * THEN x END, which is NULL where f is not true, and every aggregate
 * ignores NULLs (SQL's own equivalence; a nullable measure).
 */
static Node *
filter_argument(Node *filter, Node *arg, AggWalk *w)
{
	CaseExpr   *c = makeNode(CaseExpr);
	CaseWhen   *when = makeNode(CaseWhen);

	check_expr(filter, w, "the FILTER of an aggregate");
	when->expr = (Expr *) filter;
	when->result = (Expr *) arg;
	when->location = -1;
	c->casetype = exprType(arg);
	c->casecollid = exprCollation(arg);
	c->arg = NULL;
	c->args = list_make1(when);
	c->defresult = (Expr *) makeNullConst(exprType(arg), exprTypmod(arg),
										  exprCollation(arg));
	c->location = -1;
	return (Node *) c;
}

/* Describes the checked query as JSON into buf; returns the table */
static Oid
describe(Query *q, StringInfo buf, const char *pipeline)
{
	AggWalk		w = {0};
	RangeTblEntry *rte;
	ListCell   *lc;
	Node	   *window = NULL;
	Index		window_ref = 0;
	StringInfoData keys;
	StringInfoData aggs;
	bool		first_key = true;
	bool		first_agg = true;
	StringInfoData joins;

	for (int k = 0; k < SF_WINDOW_NKINDS; k++)
		w.marker[k] = marker_oid(sf_window_ops((SfWindowKind) k));

	if (q->commandType != CMD_SELECT || q->utilityStmt != NULL)
		refuse("only a SELECT query is supported");
	if (q->cteList != NIL)
		refuse("WITH is not supported");
	if (q->setOperations != NULL)
		refuse("UNION, INTERSECT and EXCEPT are not supported");
	if (q->distinctClause != NIL)
		refuse("DISTINCT is not supported");
	if (q->havingQual != NULL)
		refuse("HAVING is not supported");
	if (q->sortClause != NIL)
		refuse("ORDER BY is not supported");
	if (q->limitCount != NULL || q->limitOffset != NULL)
		refuse("LIMIT and OFFSET are not supported");
	if (q->hasWindowFuncs)
		refuse("window functions (OVER) are not supported");
	if (q->groupingSets != NIL)
		refuse("GROUPING SETS, ROLLUP and CUBE are not supported");
	if (q->hasSubLinks)
		refuse("subqueries are not supported");
	if (q->rowMarks != NIL)
		refuse("FOR UPDATE and FOR SHARE are not supported");
	if (q->hasTargetSRFs)
		refuse("set-returning functions are not supported");
	initStringInfo(&joins);	/* issue 47: joins become lookups */
	(void) sf_aggregate_join_rewrite(q, pipeline, &joins);
	if (q->jointree == NULL || list_length(q->jointree->fromlist) != 1 ||
		list_length(q->rtable) != 1)
		refuse("the query must read exactly one table: joins and lists of tables are not supported");
	rte = linitial_node(RangeTblEntry, q->rtable);
	if (rte->rtekind != RTE_RELATION)
		refuse("the query must read a table: %s in FROM is not supported",
			   rte->rtekind == RTE_SUBQUERY ? "a subquery" :
			   rte->rtekind == RTE_FUNCTION ? "a function" :
			   rte->rtekind == RTE_VALUES ? "VALUES" : "this item");
	if (rte->tablesample != NULL)
		refuse("TABLESAMPLE is not supported");
	if (!rte->inh)
		refuse("ONLY is not supported");
	if (rte->relkind != RELKIND_RELATION)
		refuse("the query must read a plain table: \"%s\" is a %s",
			   get_rel_name(rte->relid),
			   rte->relkind == RELKIND_VIEW ? "view" :
			   rte->relkind == RELKIND_MATVIEW ? "materialized view" :
			   rte->relkind == RELKIND_FOREIGN_TABLE ? "foreign table" :
			   rte->relkind == RELKIND_PARTITIONED_TABLE ? "partitioned table" :
			   "relation of another kind");
	w.relid = rte->relid;
	if (sf_aggregate_row_security(w.relid))
		refuse("table \"%s\" has row-level security, which is not supported",
			   get_rel_name(w.relid));

	/* the caller must be able to read what the query reads */
	ExecCheckRTPerms(q->rtable, true);

	if (q->groupClause == NIL)
		refuse("the query must have a GROUP BY with one of streamforge.tumble(), hop() or session()");

	/* GROUP BY: one window call, other expressions are keys */
	initStringInfo(&keys);
	foreach(lc, q->groupClause)
	{
		SortGroupClause *g = lfirst_node(SortGroupClause, lc);
		TargetEntry *te = get_sortgroupclause_tle(g, q->targetList);
		Node	   *e = (Node *) te->expr;
		Oid			typ = exprType(e);
		int32		typmod = exprTypmod(e);

		if (is_window_call(e, &w))
		{
			if (window != NULL)
				refuse("more than one window call in GROUP BY is not supported");
			window = e;
			window_ref = g->tleSortGroupRef;
			continue;
		}
		check_expr(e, &w, "GROUP BY");
		/* a domain's CHECK must not run where the key is decoded (issue 37) */
		typ = getBaseTypeAndTypmod(typ, &typmod);
		if (!sf_aggregate_key_type_ok(typ))
			refuse("a GROUP BY expression of type %s is not supported",
				   format_type_be(typ));
		appendStringInfoString(&keys, first_key ? "{" : ", {");
		/* the engine key: the text of canonical_key(e) */
		json_str(&keys, "expr", deparse((Node *) sf_aggregate_canonical_key(e), w.relid), true);
		json_str(&keys, "name", te->resjunk ? NULL : te->resname, false);
		json_str(&keys, "type", format_type_with_typemod(typ, typmod), false);
		json_str(&keys, "collation",
				 OidIsValid(exprCollation(e)) ?
				 generate_collation_name(exprCollation(e)) : NULL, false);
		json_key(&keys, "immutable_input", false);
		/* a key column whose text input is immutable can be indexed */
		appendStringInfoString(&keys,
							   (typ == TEXTOID || typ == VARCHAROID ||
								typ == BPCHAROID || typ == NAMEOID ||
								typ == INT2OID || typ == INT4OID ||
								typ == INT8OID || typ == BOOLOID ||
								typ == UUIDOID || typ == NUMERICOID)
							   ? "true" : "false");
		appendStringInfoChar(&keys, '}');
		first_key = false;
	}
	if (window == NULL)
		refuse("the GROUP BY must contain one of streamforge.tumble(), hop() or session()");

	/* the select list: keys, the window call, aggregates */
	initStringInfo(&aggs);
	foreach(lc, q->targetList)
	{
		TargetEntry *te = lfirst_node(TargetEntry, lc);
		Node	   *e = (Node *) te->expr;
		Aggref	   *a;
		const char *name;
		Node	   *arg;
		const char *filter_op;
		int64		filter_c = 0;
		Node	   *arg2;
		int64		fraction;

		if (te->resjunk)
			continue;
		if (te->ressortgroupref != 0)
		{
			if (te->ressortgroupref == window_ref)
				refuse("the window call in the select list is not supported: the view has window_start and window_end");
			continue;			/* a key */
		}
		if (!IsA(e, Aggref))
			refuse("select list item \"%s\" must be a GROUP BY expression or an aggregate",
				   te->resname ? te->resname : "?column?");
		a = (Aggref *) e;
		name = supported_aggregate(a);
		if (name == NULL)
			refuse("aggregate %s is not supported",
				   format_procedure(a->aggfnoid));
		arg = aggregate_argument(a, &w, name, &arg2, &fraction);
		if (a->aggfilter != NULL && arg != NULL)
		{
			arg = filter_argument((Node *) a->aggfilter, arg, &w);
			filter_op = NULL;
		}
		else if (a->aggfilter != NULL)
		{
			/*
			 * count(*) FILTER (WHERE x op c): count_if over x; any other
			 * filter f: count_if(= 1) over CASE WHEN f THEN 1 ELSE 0 END
			 */
			if (!filter_comparison((Node *) a->aggfilter, &w, &arg, &filter_op, &filter_c))
			{
				arg = filter_indicator((Node *) a->aggfilter, &w);
				filter_op = "=";
				filter_c = 1;
			}
			name = sf_agg_ops_from_filter()->name;
		}
		else
			filter_op = NULL;
		if (strcmp(te->resname, "window_start") == 0 ||
			strcmp(te->resname, "window_end") == 0 ||
			strcmp(te->resname, "final") == 0)
			refuse("an aggregate named \"%s\" is not supported: the view has a column of that name",
				   te->resname);
		appendStringInfoString(&aggs, first_agg ? "{" : ", {");
		json_str(&aggs, "func", name, true);
		json_str(&aggs, "arg", arg ? deparse(arg, w.relid) : NULL, false);
		json_str(&aggs, "arg_type", arg ? format_type_be(exprType(arg)) : NULL, false);
		json_key(&aggs, "arg_not_null", false);
		appendStringInfoString(&aggs,
							   (arg == NULL || expr_not_null(arg, w.relid))
							   ? "true" : "false");
		json_str(&aggs, "name", te->resname, false);
		json_str(&aggs, "type", format_type_be(a->aggtype), false);
		if (arg2 != NULL)
		{
			json_str(&aggs, "arg2", deparse(arg2, w.relid), false);
			json_str(&aggs, "arg2_type", format_type_be(exprType(arg2)), false);
			json_key(&aggs, "arg2_not_null", false);
			appendStringInfoString(&aggs, expr_not_null(arg2, w.relid) ? "true" : "false");
		}
		if (fraction >= 0)
			json_int(&aggs, "fraction_millionths", fraction, false);
		if (filter_op != NULL)
		{
			json_str(&aggs, "filter_op", filter_op, false);
			json_int(&aggs, "filter_value", filter_c, false);
		}
		appendStringInfoChar(&aggs, '}');
		first_agg = false;
	}
	if (first_agg)
		refuse("the select list must contain at least one aggregate");

	if (q->jointree->quals != NULL)
		check_expr(q->jointree->quals, &w, "WHERE");

	appendStringInfoChar(buf, '{');
	json_int(buf, "relid", w.relid, true);
	json_str(buf, "relation",
			 quote_qualified_identifier(get_namespace_name(get_rel_namespace(w.relid)),
										get_rel_name(w.relid)), false);
	json_key(buf, "window", false);
	{
		FuncExpr   *f = (FuncExpr *) window;
		Node	   *ts = linitial(f->args);
		const SfWindowOps *o = window_ops_of(f->funcid, &w);

		check_expr(ts, &w, "the time argument of the window");
		appendStringInfoChar(buf, '{');
		json_str(buf, "kind", o->marker, true);
		json_str(buf, "time", deparse(ts, w.relid), false);
		json_int(buf, "precision_us", sf_aggregate_time_precision_us(ts), false);
		/* the interval arguments: positional keys, named as the kind names them */
		json_int(buf, "size_us", const_interval_us(lsecond(f->args),
												   o->marker_args[0]),
				 false);
		if (list_length(f->args) > 2)
			json_int(buf, "slide_us", const_interval_us(lthird(f->args),
														o->marker_args[1]), false);
		appendStringInfoChar(buf, '}');
	}
	json_key(buf, "keys", false);
	appendStringInfo(buf, "[%s]", keys.data);
	json_key(buf, "aggregates", false);
	appendStringInfo(buf, "[%s]", aggs.data);
	json_str(buf, "where",
			 q->jointree->quals ? deparse(q->jointree->quals, w.relid) : NULL, false);
	if (joins.len > 0)
		appendStringInfo(buf, ", \"joins\": %s", joins.data);
	appendStringInfoChar(buf, '}');
	return w.relid;
}

/*
 * streamforge.session(ts, gap) is the session window call.
 * streamforge.session(name, gap) is already the window constructor, and
 * the extension keeps one function per name (an overload would make
 * session('g', NULL) ambiguous, 42725): so every two-argument call named
 * streamforge.session or session in the query is renamed, in the raw parse
 * tree, to the marker streamforge_internal.session_window(timestamptz,
 * interval) before analysis (outside the GROUP BY, the checks then refuse
 * it by name).
 */
static bool
rename_session_calls(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, FuncCall))
	{
		FuncCall   *fc = (FuncCall *) node;
		const char *name = NULL;

		if (list_length(fc->funcname) == 2 &&
			strcmp(strVal(linitial(fc->funcname)), "streamforge") == 0)
			name = strVal(lsecond(fc->funcname));
		else if (list_length(fc->funcname) == 1)
			name = strVal(linitial(fc->funcname));
		if (name != NULL && strcmp(name, "session") == 0 &&
			list_length(fc->args) == 2)
			fc->funcname = list_make2(makeString("streamforge_internal"),
									  makeString("session_window"));
	}
	return raw_expression_tree_walker(node, rename_session_calls, context);
}

/*
 * aggregate_plan(query text) returns jsonb: the query checked and
 * described (see the top of the file).
 */
static Datum
plan_query(char *sql, const char *pipeline, Oid *relid)
{
	List	   *raw;
	RawStmt    *stmt;
	Query	   *q;
	StringInfoData buf;
	int			nest;

	raw = raw_parser(sql, RAW_PARSE_DEFAULT);
	if (list_length(raw) != 1)
		refuse("the query must be exactly one statement, not %d", list_length(raw));
	stmt = linitial_node(RawStmt, raw);
	if (!IsA(stmt->stmt, SelectStmt))
		refuse("only a SELECT query is supported");
	rename_session_calls(stmt->stmt, NULL);
	q = parse_analyze_fixedparams(stmt, sql, NULL, 0, NULL);

	/* deparse with only pg_catalog visible: everything else qualified */
	nest = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog, pg_temp",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
							 true, 0, false);
	initStringInfo(&buf);
	*relid = describe(q, &buf, pipeline);
	AtEOXact_GUC(true, nest);

	return DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data));
}

PG_FUNCTION_INFO_V1(sf_aggregate_plan);

Datum
sf_aggregate_plan(PG_FUNCTION_ARGS)
{
	Oid			relid;

	PG_RETURN_DATUM(plan_query(sf_arg_text(fcinfo, 0, "query"), NULL, &relid));
}


/*
 * create_aggregate(name, query, lateness, out_of_orderness, emit,
 * event_id, partition, partitions, retention, idle_timeout), as the
 * caller: the query
 * analyzed and described here (plan_query), mapped to a pipeline, its
 * outputs and its attachment by aggregate_create (65_aggregates.sql, as
 * the caller, through the public functions), then the views and the
 * registry row by aggregate_register.  The helpers are closed to PUBLIC
 * (issue 37: 0.3.0 let any role hand them a spec of its own); fmgr calls
 * them here without the EXECUTE check, with what this call produced.
 */
PG_FUNCTION_INFO_V1(sf_create_aggregate);

Datum
sf_create_aggregate(PG_FUNCTION_ARGS)
{
	char	   *query = sf_arg_text(fcinfo, 1, "query");
	char	   *aggregate_query;
	Oid			relid;
	Datum		args[13];
	bool		nulls[13];
	Datum		made;
	Datum		top;
	Datum		plan;
	bool		isnull;
	List	   *path;
	int			i;

	/* a top-N (aggregate_top.c): its aggregate's query is planned */
	top = sf_aggregate_top_split(query, &aggregate_query);
	plan = plan_query(aggregate_query,
					  PG_ARGISNULL(0) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(0)),
					  &relid);
	args[2] = plan;
	nulls[2] = false;
	top = sf_aggregate_top_spec(top, args[2]);
	for (i = 0; i < 13; i++)
	{
		if (i == 2 || i == 3)
			continue;
		/* name, query, then the arguments after the query */
		args[i] = i < 2 ? PG_GETARG_DATUM(i) : PG_GETARG_DATUM(i - 2);
		nulls[i] = i < 2 ? PG_ARGISNULL(i) : PG_ARGISNULL(i - 2);
	}
	/* the views go in the caller's current schema (current_schema()) */
	path = fetch_search_path(false);
	nulls[3] = path == NIL;
	args[3] = path == NIL ? (Datum) 0 :
		CStringGetTextDatum(get_namespace_name(linitial_oid(path)));
	made = sf_call_internal("streamforge_internal.aggregate_create("
							"pg_catalog.text, pg_catalog.text, pg_catalog.jsonb, "
							"pg_catalog.text, pg_catalog.interval, pg_catalog.interval, "
							"pg_catalog.text, pg_catalog.text, pg_catalog.text, "
							"pg_catalog.text[], pg_catalog.interval, "
							"pg_catalog.interval, pg_catalog.text)",
							13, args, nulls, &isnull);
	if (isnull)
		elog(ERROR, "streamforge: aggregate_create returned null");

	/* pipeline, view schema, view name, source, query, unit_us, spec */
	args[0] = PG_GETARG_DATUM(0);
	args[1] = args[3];
	args[2] = PG_GETARG_DATUM(0);
	args[3] = ObjectIdGetDatum(relid);
	args[4] = PG_GETARG_DATUM(1);
	args[5] = DirectFunctionCall1(numeric_int8,
								  DirectFunctionCall1(jsonb_numeric,
													  DirectFunctionCall2(jsonb_object_field, made,
																		  CStringGetTextDatum("unit_us"))));
	args[6] = DirectFunctionCall2(jsonb_object_field, made,
								  CStringGetTextDatum("spec"));
	if (top != (Datum) 0)
		args[6] = DirectFunctionCall2(jsonb_concat, args[6], top);
	args[6] = sf_aggregate_join_spec(args[6], plan);
	for (i = 0; i < 7; i++)
		nulls[i] = false;
	nulls[1] = path == NIL;
	/* see the pipeline aggregate_create made, as its next statement would */
	CommandCounterIncrement();
	PushCopiedSnapshot(GetActiveSnapshot());
	UpdateActiveSnapshotCommandId();
	(void) sf_call_internal("streamforge_internal.aggregate_register("
							"pg_catalog.text, pg_catalog.text, pg_catalog.text, "
							"pg_catalog.regclass, pg_catalog.text, pg_catalog.int8, "
							"pg_catalog.jsonb)", 7, args, nulls, &isnull);
	PopActiveSnapshot();
	PG_RETURN_VOID();
}

/*
 * The window markers: streamforge.tumble(ts, size) is the start of the
 * fixed window of ts (date_bin from the Unix epoch), so that the query
 * also runs as a plain query; hop() and session() have no single value
 * and are meaningful only in create_aggregate's query.
 */
PG_FUNCTION_INFO_V1(sf_tumble);

Datum
sf_tumble(PG_FUNCTION_ARGS)
{
	TimestampTz ts = PG_GETARG_TIMESTAMPTZ(0);
	int64		size = const_interval_us((Node *) makeConst(INTERVALOID, -1, InvalidOid, 16,
															PG_GETARG_DATUM(1), false, false),
										 "size");
	int64		t;
	int64		start;

	if (size <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the size of the window must be greater than zero")));
	if (TIMESTAMP_NOT_FINITE(ts))
		PG_RETURN_TIMESTAMPTZ(ts);
	/* microseconds since the Unix epoch */
	if (pg_add_s64_overflow(ts, SF_UNIX_EPOCH_US, &t))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range")));
	start = t - ((t % size) + size) % size;
	PG_RETURN_TIMESTAMPTZ(start - SF_UNIX_EPOCH_US);
}

PG_FUNCTION_INFO_V1(sf_window_marker);

Datum
sf_window_marker(PG_FUNCTION_ARGS)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("streamforge.hop() and streamforge.session(ts, gap) can only be used in the GROUP BY of the query of streamforge.create_aggregate()")));
	PG_RETURN_NULL();
}
