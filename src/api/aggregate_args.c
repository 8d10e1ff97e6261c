/*-------------------------------------------------------------------------
 *
 * aggregate_args.c
 *	  create_aggregate's aggregates of two arguments (issue 44, items 2,
 *	  3 and 5): max_by(x, y) and min_by(x, y) (SQL aggregates of schema
 *	  streamforge: PostgreSQL 15 has none), streamforge.approx_percentile
 *	  (x, p), and PostgreSQL's ordered-set percentile_cont(p) and
 *	  percentile_disc(p) WITHIN GROUP (ORDER BY x).  aggregate_sql.c calls
 *	  these and checks the expressions they return as every argument.
 *	  Also two facts aggregate_sql.c reads from the catalog: the time
 *	  column's precision and whether the table has row-level security.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/aggregate_args.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/stratnum.h"
#include "catalog/namespace.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "datatype/timestamp.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "api/api.h"

#define refuse_arg(...) \
	ereport(ERROR, \
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED), \
			 errmsg(__VA_ARGS__), \
			 errhint("Write max_by(x, y), min_by(x, y), approx_percentile(x, p) or percentile_cont(p) / percentile_disc(p) WITHIN GROUP (ORDER BY x), p a constant from 0 to 1 of at most 6 decimals; see docs/sql-aggregates.md.")))

/* The registry's row of an SQL aggregate of schema streamforge, or NULL */
const SfAggOps *
sf_aggregate_sf_ops(Oid aggfnoid)
{
	char	   *name = get_func_name(aggfnoid);
	Oid			nsp = get_func_namespace(aggfnoid);

	if (name == NULL || nsp != get_namespace_oid("streamforge", true))
		return NULL;
	return sf_agg_ops_by_sf_name(name);
}

/* A fraction from 0 to 1 given as a constant, in millionths */
static int64
fraction_arg(Node *e, const char *name)
{
	Node	   *c = eval_const_expressions(NULL, e);
	double		d;
	int64		k;

	if (!IsA(c, Const) || exprType(c) != FLOAT8OID || ((Const *) c)->constisnull)
		refuse_arg("the fraction of %s() must be a constant of type double precision", name);
	d = DatumGetFloat8(((Const *) c)->constvalue);
	if (!(d >= 0.0 && d <= 1.0))
		refuse_arg("the fraction of %s() must be from 0 to 1", name);
	k = (int64) llround(d * SF_FRACTION_UNIT);
	if ((double) k / SF_FRACTION_UNIT != d)
		refuse_arg("the fraction of %s() must have at most 6 decimals", name);
	return k;
}

/*
 * The integer expression under PostgreSQL's implicit cast to double
 * precision (percentile_cont(p) WITHIN GROUP (ORDER BY x) casts x)
 */
static Node *
strip_implicit_cast(Node *e)
{
	if (IsA(e, FuncExpr) &&
		((FuncExpr *) e)->funcformat == COERCE_IMPLICIT_CAST &&
		list_length(((FuncExpr *) e)->args) == 1)
	{
		Node	   *x = linitial(((FuncExpr *) e)->args);
		Oid			t = exprType(x);

		if (t == INT2OID || t == INT4OID || t == INT8OID)
			return x;
	}
	return e;
}

/*
 * The arguments of aggregate a, mapped onto o (of argument form
 * SF_AGGARG_BY or SF_AGGARG_FRACTION): *arg the value, *arg2 the order
 * (max_by, min_by; else NULL), *fraction the fraction in millionths
 * (percentiles; else -1).  Refuses with 0A000 what is not supported.
 */
void
sf_aggregate_two_args(Aggref *a, const SfAggOps *o, Node **arg, Node **arg2,
					  int64 *fraction)
{
	*arg2 = NULL;
	*fraction = -1;
	if (a->aggdistinct != NIL)
		refuse_arg("DISTINCT in aggregate %s() is not supported", o->name);
	if (a->aggkind == AGGKIND_ORDERED_SET)
	{
		SortGroupClause *s;
		Oid			opfamily,
					opcintype;
		int16		strategy;

		/* percentile_cont(p) WITHIN GROUP (ORDER BY x [ASC]) */
		if (o->arg != SF_AGGARG_FRACTION || list_length(a->aggdirectargs) != 1 ||
			list_length(a->args) != 1 || list_length(a->aggorder) != 1)
			refuse_arg("ordered-set aggregate %s() of this form is not supported", o->name);
		s = linitial_node(SortGroupClause, a->aggorder);
		if (!get_ordering_op_properties(s->sortop, &opfamily, &opcintype, &strategy) ||
			strategy != BTLessStrategyNumber)
			refuse_arg("%s() WITHIN GROUP (ORDER BY x DESC) is not supported", o->name);
		*fraction = fraction_arg(linitial(a->aggdirectargs), o->name);
		*arg = strip_implicit_cast((Node *) linitial_node(TargetEntry, a->args)->expr);
		return;
	}
	if (a->aggkind != AGGKIND_NORMAL || a->aggorder != NIL ||
		list_length(a->args) != 2 || a->aggstar)
		refuse_arg("aggregate %s() of this form is not supported", o->name);
	*arg = (Node *) linitial_node(TargetEntry, a->args)->expr;
	if (o->arg == SF_AGGARG_BY)
		*arg2 = (Node *) lsecond_node(TargetEntry, a->args)->expr;
	else
		*fraction = fraction_arg((Node *) lsecond_node(TargetEntry, a->args)->expr,
								 o->name);
}

/*
 * The precision of the time argument, in microseconds: a column of type
 * date is whole days, timestamp(p) and timestamptz(p) 10^(6-p)
 * microseconds; anything else 1.
 */
int64
sf_aggregate_time_precision_us(Node *node)
{
	int64		us = 1;
	int			p;

	/* look through the implicit cast to timestamptz */
	while (IsA(node, FuncExpr) &&
		   ((FuncExpr *) node)->funcformat == COERCE_IMPLICIT_CAST &&
		   list_length(((FuncExpr *) node)->args) == 1)
		node = linitial(((FuncExpr *) node)->args);
	if (!IsA(node, Var))
		return 1;
	if (((Var *) node)->vartype == DATEOID)
		return USECS_PER_DAY;
	if (((Var *) node)->vartype != TIMESTAMPOID &&
		((Var *) node)->vartype != TIMESTAMPTZOID)
		return 1;
	p = ((Var *) node)->vartypmod;
	if (p < 0 || p >= 6)
		return 1;
	for (; p < 6; p++)
		us *= 10;
	return us;
}

/*
 * Whether row-level security is enabled on the table: its attachment would
 * ingest every row, whatever the policies let the views' readers see.
 */
bool
sf_aggregate_row_security(Oid relid)
{
	HeapTuple	tp = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	bool		result = false;

	if (HeapTupleIsValid(tp))
	{
		result = ((Form_pg_class) GETSTRUCT(tp))->relrowsecurity;
		ReleaseSysCache(tp);
	}
	return result;
}
