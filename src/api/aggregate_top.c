/*-------------------------------------------------------------------------
 *
 * aggregate_top.c
 *	  Top-N per window in create_aggregate's query (issue 44, item 4):
 *	  the Flink SQL form recognized and split.
 *
 *	  SELECT * FROM (			(or SELECT k, c, rn FROM: columns of x)
 *	      SELECT k, count(*) AS c,
 *	             ROW_NUMBER() OVER (PARTITION BY <window>[, keys]
 *	                                ORDER BY <aggregate> [DESC|ASC]) AS rn
 *	        FROM t GROUP BY k, <window>) AS x
 *	   WHERE rn <= N
 *
 * where <window> is the GROUP BY's window call (or window_start /
 * window_end, Flink's spelling) and <aggregate> one of the select list's
 * aggregates (its expression or its alias).  sf_aggregate_top_split() reads
 * the raw parse tree for the structure and the scanner's token positions
 * for the text: the inner query without its ROW_NUMBER() item is the
 * aggregate's query, planned as any other; the rest is a jsonb description
 * (n, order, descending, nulls_first, partition, rank, and columns when
 * the outer select list is not *) which
 * streamforge_internal.aggregate_top_spec() checks against the plan
 * (67_aggregates_top.sql).  Any other use of a window function is refused
 * here with 0A000 and a hint; a query without one is not a top-N and goes
 * to aggregate_plan as before (which refuses a subquery).
 *
 * Also the trigger of streamforge.aggregate that tells the outputs' sink
 * (src/persist/sink.c, sink_top.c) to read again which pipelines have a
 * top-N.
 *
 * Memory: everything is palloc'd in the caller's context.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/aggregate_top.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "commands/trigger.h"
#include "lib/stringinfo.h"
#include "nodes/parsenodes.h"
#include "parser/parser.h"
#include "parser/parse_target.h"
#include "parser/scanner.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"

#include "api/api.h"

#define TOP_HINT "A top-N per window is SELECT * FROM (SELECT ..., ROW_NUMBER() OVER (PARTITION BY <window>[, grouping columns] ORDER BY <aggregate> [DESC]) AS rn FROM t GROUP BY ...) AS x WHERE rn <= N (docs/sql-aggregates.md, Top-N per window)."

#define refuse_top(...) \
	ereport(ERROR, \
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED), \
			 errmsg(__VA_ARGS__), \
			 errhint(TOP_HINT)))

/* A token of the query: its first byte */
typedef struct TopToken
{
	int			tok;
	int			loc;
} TopToken;

/* the tokens of sql, in order */
static TopToken *
tokenize(const char *sql, int *ntokens)
{
	core_yyscan_t scanner;
	core_yy_extra_type extra;
	core_YYSTYPE yylval;
	YYLTYPE		yylloc;
	int			cap = 64;
	int			n = 0;
	TopToken   *t = palloc(cap * sizeof(TopToken));

	scanner = scanner_init(sql, &extra, &ScanKeywords, ScanKeywordTokens);
	for (;;)
	{
		int			tok = core_yylex(&yylval, &yylloc, scanner);

		if (tok == 0)
			break;
		if (n == cap)
		{
			cap *= 2;
			t = repalloc(t, cap * sizeof(TopToken));
		}
		t[n].tok = tok;
		t[n].loc = yylloc;
		n++;
	}
	scanner_finish(scanner);
	*ntokens = n;
	return t;
}

/* whether token i is the keyword kw (case-insensitive, not quoted) */
static bool
token_is(const char *sql, const TopToken *t, int i, const char *kw)
{
	size_t		len = strlen(kw);
	char		next;

	if (pg_strncasecmp(sql + t[i].loc, kw, len) != 0)
		return false;
	next = sql[t[i].loc + len];
	return !(isalnum((unsigned char) next) || next == '_' || next == '$');
}

/* the index of the token at loc */
static int
token_at(const TopToken *t, int n, int loc)
{
	for (int i = 0; i < n; i++)
		if (t[i].loc == loc)
			return i;
	elog(ERROR, "streamforge: no token at %d", loc);
	return -1;
}

/* the last name of a function call */
static const char *
func_name(FuncCall *fc)
{
	return strVal(llast(fc->funcname));
}

/* whether e is the window call of the GROUP BY (or window_start/end) */
static bool
is_window(Node *e, List *group)
{
	ListCell   *lc;

	if (IsA(e, ColumnRef) && list_length(((ColumnRef *) e)->fields) == 1 &&
		IsA(linitial(((ColumnRef *) e)->fields), String))
	{
		const char *col = strVal(linitial(((ColumnRef *) e)->fields));

		if (strcmp(col, "window_start") == 0 || strcmp(col, "window_end") == 0)
			return true;
	}
	if (!IsA(e, FuncCall))
		return false;
	foreach(lc, group)
	{
		Node	   *g = lfirst(lc);

		/* a window kind's marker (the registry, engine/window_ops.h) */
		if (IsA(g, FuncCall) && equal(g, e) &&
			sf_window_ops_by_marker(func_name((FuncCall *) g)) != NULL)
			return true;
	}
	return false;
}

/*
 * The select-list item e names: one whose expression equals e, or (a bare
 * name) whose output name is e's.  NULL if none.
 */
static const char *
target_name(Node *e, List *targets, ResTarget *skip)
{
	ListCell   *lc;

	foreach(lc, targets)
	{
		ResTarget  *rt = lfirst_node(ResTarget, lc);

		if (rt != skip && equal(rt->val, e))
			return rt->name ? rt->name : FigureColname(rt->val);
	}
	if (IsA(e, ColumnRef) && list_length(((ColumnRef *) e)->fields) == 1 &&
		IsA(linitial(((ColumnRef *) e)->fields), String))
	{
		const char *col = strVal(linitial(((ColumnRef *) e)->fields));

		foreach(lc, targets)
		{
			ResTarget  *rt = lfirst_node(ResTarget, lc);
			const char *name = rt->name ? rt->name : FigureColname(rt->val);

			if (rt != skip && strcmp(name, col) == 0)
				return name;
		}
	}
	return NULL;
}

/* the first window function call in e's top level, or NULL */
static FuncCall *
window_call(Node *e)
{
	if (e != NULL && IsA(e, FuncCall) && ((FuncCall *) e)->over != NULL)
		return (FuncCall *) e;
	return NULL;
}

/* N of "rn <= N", "rn < N" or "rn = 1" */
static int64
top_bound(Node *w, const char *rank)
{
	A_Expr	   *a;
	const char *op;
	A_Const    *c;
	int64		n;

	if (w == NULL || !IsA(w, A_Expr) || ((A_Expr *) w)->kind != AEXPR_OP ||
		list_length(((A_Expr *) w)->name) != 1)
		refuse_top("the WHERE of a top-N query must be \"%s <= N\" with an integer constant N", rank);
	a = (A_Expr *) w;
	op = strVal(linitial(a->name));
	if (!IsA(a->lexpr, ColumnRef) ||
		list_length(((ColumnRef *) a->lexpr)->fields) != 1 ||
		!IsA(linitial(((ColumnRef *) a->lexpr)->fields), String) ||
		strcmp(strVal(linitial(((ColumnRef *) a->lexpr)->fields)), rank) != 0)
		refuse_top("the WHERE of a top-N query must be \"%s <= N\" with an integer constant N", rank);
	if (!IsA(a->rexpr, A_Const) || ((A_Const *) a->rexpr)->isnull ||
		!IsA(&((A_Const *) a->rexpr)->val, Integer))
		refuse_top("the N of a top-N query must be an integer constant");
	c = (A_Const *) a->rexpr;
	n = intVal(&c->val);
	if (strcmp(op, "<=") == 0)
		;
	else if (strcmp(op, "<") == 0)
		n = n - 1;
	else if (strcmp(op, "=") == 0 && n == 1)
		;
	else
		refuse_top("the WHERE of a top-N query must be \"%s <= N\", \"%s < N\" or \"%s = 1\"",
				   rank, rank, rank);
	if (n < 1)
		refuse_top("the N of a top-N query must be at least 1");
	return n;
}

/*
 * The outer select list: NULL for *, else the names it selects as a JSON
 * array (each a column of the subquery, by its name, optionally qualified
 * by the subquery's alias, not renamed); aggregate_top_spec checks that
 * each is a column of the aggregate or the rank.
 */
static char *
outer_columns(List *targets, RangeSubselect *rs)
{
	StringInfoData buf;
	ListCell   *lc;
	bool		first = true;

	if (list_length(targets) == 1 &&
		IsA(linitial_node(ResTarget, targets)->val, ColumnRef) &&
		IsA(llast(((ColumnRef *) linitial_node(ResTarget, targets)->val)->fields), A_Star))
		return NULL;
	initStringInfo(&buf);
	appendStringInfoChar(&buf, '[');
	foreach(lc, targets)
	{
		ResTarget  *rt = lfirst_node(ResTarget, lc);
		ColumnRef  *cr = IsA(rt->val, ColumnRef) ? (ColumnRef *) rt->val : NULL;
		int			nf = cr == NULL ? 0 : list_length(cr->fields);

		if (cr == NULL || nf < 1 || nf > 2 || !IsA(llast(cr->fields), String) ||
			(nf == 2 && (!IsA(linitial(cr->fields), String) || rs->alias == NULL ||
						 strcmp(strVal(linitial(cr->fields)), rs->alias->aliasname) != 0)) ||
			rt->name != NULL)
			refuse_top("the select list of a top-N query must be * or columns of its subquery, not renamed");
		if (!first)
			appendStringInfoString(&buf, ", ");
		first = false;
		escape_json(&buf, strVal(llast(cr->fields)));
	}
	appendStringInfoChar(&buf, ']');
	return buf.data;
}

/*
 * If sql is a top-N query, its aggregate query (*inner, palloc'd) and the
 * description of the top-N (jsonb); else (Datum) 0 and *inner = sql.
 */
Datum
sf_aggregate_top_split(char *sql, char **inner)
{
	List	   *raw;
	SelectStmt *outer;
	SelectStmt *q;
	RangeSubselect *rs;
	ResTarget  *rn_target = NULL;
	FuncCall   *rn_call = NULL;
	WindowDef  *over;
	SortBy	   *sb;
	const char *order;
	ListCell   *lc;
	StringInfoData buf;
	StringInfoData text;
	bool		has_window = false;
	bool		first_part = true;
	TopToken   *t;
	int			n;
	int			i;
	int			from = -1;
	int			open = -1;
	int			close = -1;
	int			depth;
	int			cut_from;
	int			cut_to;
	int64		bound;
	bool		desc;
	bool		nulls_first;
	char	   *columns;

	*inner = sql;
	raw = raw_parser(sql, RAW_PARSE_DEFAULT);
	if (list_length(raw) != 1 ||
		!IsA(linitial_node(RawStmt, raw)->stmt, SelectStmt))
		return (Datum) 0;
	outer = (SelectStmt *) linitial_node(RawStmt, raw)->stmt;
	if (outer->op != SETOP_NONE || list_length(outer->fromClause) != 1 ||
		!IsA(linitial(outer->fromClause), RangeSubselect))
		return (Datum) 0;
	rs = linitial_node(RangeSubselect, outer->fromClause);
	if (!IsA(rs->subquery, SelectStmt))
		return (Datum) 0;
	q = (SelectStmt *) rs->subquery;
	if (q->op != SETOP_NONE)
		return (Datum) 0;
	foreach(lc, q->targetList)
	{
		ResTarget  *rt = lfirst_node(ResTarget, lc);
		FuncCall   *fc = window_call(rt->val);

		if (fc == NULL)
			continue;
		if (rn_call != NULL)
			refuse_top("a top-N query may have only one window function");
		rn_call = fc;
		rn_target = rt;
	}
	if (rn_call == NULL)
		return (Datum) 0;		/* not a top-N: aggregate_plan refuses it */

	/* the window function: ROW_NUMBER() OVER (PARTITION BY ... ORDER BY x) */
	if (strcmp(func_name(rn_call), "row_number") != 0 ||
		list_length(rn_call->funcname) > 2 ||
		(list_length(rn_call->funcname) == 2 &&
		 strcmp(strVal(linitial(rn_call->funcname)), "pg_catalog") != 0))
		refuse_top("window function %s() is not supported in a top-N query",
				   NameListToString(rn_call->funcname));
	if (rn_call->args != NIL || rn_call->agg_star || rn_call->agg_filter != NULL ||
		rn_call->agg_order != NIL || rn_call->agg_distinct)
		refuse_top("ROW_NUMBER() of a top-N query takes no argument, FILTER or ORDER BY of its own");
	if (rn_target->name == NULL)
		refuse_top("ROW_NUMBER() of a top-N query needs a name (AS rn)");
	if (rn_target->val != (Node *) rn_call)
		refuse_top("ROW_NUMBER() of a top-N query must be a select-list item of its own");
	over = rn_call->over;
	if (over->refname != NULL || q->windowClause != NIL)
		refuse_top("a named window (WINDOW w AS ...) is not supported in a top-N query");
	if (list_length(over->orderClause) != 1)
		refuse_top("ROW_NUMBER() of a top-N query must be ordered by exactly one aggregate");
	sb = linitial_node(SortBy, over->orderClause);
	if (sb->sortby_dir == SORTBY_USING)
		refuse_top("ORDER BY ... USING is not supported in a top-N query");
	order = target_name(sb->node, q->targetList, rn_target);
	if (order == NULL)
		refuse_top("the ORDER BY of ROW_NUMBER() must be one of the select list's aggregates");
	desc = sb->sortby_dir == SORTBY_DESC;
	nulls_first = sb->sortby_nulls == SORTBY_NULLS_DEFAULT ? desc :
		sb->sortby_nulls == SORTBY_NULLS_FIRST;

	/* the outer query: SELECT * FROM (...) AS x WHERE rn <= N */
	if (outer->withClause != NULL || outer->distinctClause != NIL ||
		outer->groupClause != NIL || outer->havingClause != NULL ||
		outer->windowClause != NIL || outer->sortClause != NIL ||
		outer->limitCount != NULL || outer->limitOffset != NULL ||
		outer->lockingClause != NIL || outer->intoClause != NULL || rs->lateral)
		refuse_top("a top-N query must be SELECT * FROM (subquery) WHERE %s <= N, with nothing else",
				   rn_target->name);
	columns = outer_columns(outer->targetList, rs);
	bound = top_bound(outer->whereClause, rn_target->name);

	/* the description */
	initStringInfo(&buf);
	appendStringInfo(&buf, "{\"n\": " INT64_FORMAT ", \"order\": ", bound);
	escape_json(&buf, order);
	appendStringInfo(&buf, ", \"descending\": %s, \"nulls_first\": %s, \"rank\": ",
					 desc ? "true" : "false", nulls_first ? "true" : "false");
	escape_json(&buf, rn_target->name);
	appendStringInfoString(&buf, ", \"partition\": [");
	foreach(lc, over->partitionClause)
	{
		Node	   *e = lfirst(lc);
		const char *name;

		if (is_window(e, q->groupClause))
		{
			has_window = true;
			continue;
		}
		name = target_name(e, q->targetList, rn_target);
		if (name == NULL)
			refuse_top("the PARTITION BY of ROW_NUMBER() may name only the window and grouping columns of the select list");
		if (!first_part)
			appendStringInfoString(&buf, ", ");
		first_part = false;
		escape_json(&buf, name);
	}
	appendStringInfoChar(&buf, ']');
	if (columns != NULL)
		appendStringInfo(&buf, ", \"columns\": %s", columns);
	appendStringInfoChar(&buf, '}');
	if (!has_window)
		refuse_top("the PARTITION BY of ROW_NUMBER() must name the window (the window call of the GROUP BY, or window_start and window_end)");

	/*
	 * The text: the inner query is between the parentheses after the outer
	 * FROM; the ROW_NUMBER() item goes, with one comma.
	 */
	t = tokenize(sql, &n);
	depth = 0;
	for (i = 0; i < n && from < 0; i++)
	{
		if (t[i].tok == '(')
			depth++;
		else if (t[i].tok == ')')
			depth--;
		else if (depth == 0 && token_is(sql, t, i, "from"))
			from = i;
	}
	if (from < 0 || from + 1 >= n || t[from + 1].tok != '(')
		refuse_top("a top-N query must be SELECT * FROM (subquery) WHERE %s <= N, with nothing else",
				   rn_target->name);
	open = from + 1;
	depth = 0;
	for (i = open; i < n; i++)
	{
		if (t[i].tok == '(')
			depth++;
		else if (t[i].tok == ')' && --depth == 0)
		{
			close = i;
			break;
		}
	}
	if (close < 0)
		elog(ERROR, "streamforge: unbalanced parentheses in the top-N query");

	/* the ROW_NUMBER() item: from its first token to the next "," or FROM */
	i = token_at(t, n, rn_target->location);
	cut_from = i;
	depth = 0;
	for (; i < close; i++)
	{
		if (t[i].tok == '(')
			depth++;
		else if (t[i].tok == ')')
			depth--;
		else if (depth == 0 && (t[i].tok == ',' || token_is(sql, t, i, "from")))
			break;
	}
	cut_to = i;					/* the "," or FROM after the item */
	if (t[cut_from - 1].tok == ',')
	{
		/* "..., ROW_NUMBER() ... AS rn FROM": drop from the comma */
		cut_from = cut_from - 1;
	}
	else if (t[cut_to].tok == ',')
	{
		/* "SELECT ROW_NUMBER() ... AS rn, k": drop up to the next item */
		cut_to = cut_to + 1;
	}
	else
		refuse_top("the select list of a top-N query's subquery needs an aggregate besides ROW_NUMBER()");

	initStringInfo(&text);
	appendBinaryStringInfo(&text, sql + t[open].loc + 1,
						   t[cut_from].loc - (t[open].loc + 1));
	appendStringInfoChar(&text, ' ');
	appendBinaryStringInfo(&text, sql + t[cut_to].loc,
						   t[close].loc - t[cut_to].loc);
	*inner = text.data;

	return DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data));
}

/*
 * The description of split checked against the aggregate's plan, as
 * {"top": ...} (aggregate_top_spec, 67_aggregates_top.sql); (Datum) 0 for
 * no top-N.
 */
Datum
sf_aggregate_top_spec(Datum top, Datum plan)
{
	Datum		args[2] = {plan, top};
	bool		nulls[2] = {false, false};
	bool		isnull;

	if (top == (Datum) 0)
		return (Datum) 0;
	return sf_call_internal("streamforge_internal.aggregate_top_spec("
							"pg_catalog.jsonb, pg_catalog.jsonb)",
							2, args, nulls, &isnull);
}

/*
 * Statement trigger on streamforge.aggregate: the outputs' sink caches
 * which pipelines have a top-N with its output configuration, so a change
 * of the aggregates invalidates that copy (as output_config_changed does).
 */
PG_FUNCTION_INFO_V1(sf_aggregate_top_changed);
Datum
sf_aggregate_top_changed(PG_FUNCTION_ARGS)
{
	Oid			relid;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("function \"%s\" must be fired as a trigger",
						"aggregate_top_changed")));
	relid = get_relname_relid("output_config",
							  get_namespace_oid("streamforge", false));
	if (OidIsValid(relid))
		CacheInvalidateRelcacheByRelid(relid);
	return PointerGetDatum(NULL);
}
