/*
 * aggrow.c: the messages of an aggregate subscription made rows in C
 * (issue 43, item 3).
 *
 * aggmap.c's statement maps a batch in SQL: each message converted and
 * parsed as jsonb, each column a call of a field function.  Here the worker
 * builds the rows of the aggregate's table itself (json.c reads the JSON
 * fields in one pass; the columns are converted with their types' input
 * functions by sfk_convert_field, as the field functions do; an ISO 8601
 * UTC timestamp is read directly), and the attachment's expressions
 * (WHERE, key, event time, value or measures) apply to the rows exactly as
 * the INSERT trigger applies them to its transition table.  The deliveries
 * go in as aggmap.c's do (sfk_aggregate_deliver_rows, direct.c), or, when
 * they go to the core's C entry, as the fields of the row expression taken
 * apart (split_expr): no delivery tuple to form and deform, no key array.
 *
 * The expressions are not run by a statement over an array of rows: the
 * statement that would (sfk_aggrow_prepare) is analysed at each batch and
 * its one expression planned and evaluated in C for each row as it is made
 * (rows_expr, sfk_aggrow_run): no array to build and take apart, no
 * function scan, no sort.  An expression that is not over the row's columns only (a
 * subquery, a set-returning function: create_aggregate refuses them)
 * keeps aggmap.c's statement.
 *
 * A message json.c does not read (a \u escape, an exponent, ...) is parsed
 * by jsonb_in and read by sfk_json_lookup, as json_field reads it: same
 * values, same errors.  A column with a type modifier keeps the statement
 * of aggmap.c for the whole subscription (its cast applies the modifier).
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parse_coerce.h"
#include "tcop/tcopprot.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"

#include "engine/keytext.h"
#include "kafka.h"

typedef enum ColKind
{
	C_NULL,						/* not mapped */
	C_KEY,
	C_TS,
	C_OFFSET,
	C_PART,
	C_ID,
	C_PAYLOAD,
	C_JSON,
	C_CSV
} ColKind;

typedef struct RowCol
{
	ColKind		kind;
	const char *spec;			/* the field, for errors */
	Oid			typid;
	FmgrInfo	in;
	Oid			ioparam;
	bool		string;			/* of the string category (CSV: '' is '') */
	int			key;			/* C_JSON: json.c's key */
	char	  **path;			/* C_JSON */
	int			npath;
	int			csvcol;			/* C_CSV */
	int64		unit_us;		/* of a number for a timestamp */
} RowCol;

static struct
{
	bool		json;
	char	   *topic;
	int			ncols;
	RowCol	   *cols;
	RowCol		id;				/* the mapping's event_id, or kind C_NULL */
	bool		id_default;		/* topic/partition/offset */
	SfkJsonKeys keys;
	Oid			relid;			/* the aggregate's table */
	Oid			rowtype;
	TupleDesc	desc;
	char	   *sql;			/* the attachment's expressions: rows_expr */
	Oid			argtypes[4];
	TupleDesc	scandesc;		/* new_rows: pn, po, id, the columns, n */
	bool		need_payload;	/* a column reads the payload */
	char	   *scanbuf;
	int			scanlen;
} ar;

static Expr *rows_expr(void);

/* A field spec of a column: false when aggrow does not read it. */
static bool
col_of(RowCol *rc, SfkAggCol *c, bool json, int64 unit_us)
{
	Oid			infunc;
	char	   *s = c->spec;

	memset(rc, 0, sizeof(*rc));
	rc->spec = c->spec;
	rc->typid = c->typid;
	rc->unit_us = unit_us;
	if (!c->mapped)
	{
		rc->kind = C_NULL;
		return true;
	}
	if (c->typmod != -1)
		return false;
	getTypeInputInfo(c->typid, &infunc, &rc->ioparam);
	fmgr_info_cxt(infunc, &rc->in, TopMemoryContext);
	rc->string = TypeCategory(c->typid) == TYPCATEGORY_STRING;
	if (c->csvcol > 0)
	{
		rc->kind = C_CSV;
		rc->csvcol = c->csvcol;
		return !json;
	}
	if (strcmp(s, "kafka_key") == 0)
		rc->kind = C_KEY, rc->unit_us = 0;
	else if (strcmp(s, "kafka_timestamp") == 0)
		rc->kind = C_TS, rc->unit_us = 1000;
	else if (strcmp(s, "kafka_offset") == 0)
		rc->kind = C_OFFSET, rc->unit_us = 0;
	else if (strcmp(s, "kafka_partition") == 0)
		rc->kind = C_PART, rc->unit_us = 0;
	else if (strcmp(s, "kafka_id") == 0)
		rc->kind = C_ID, rc->unit_us = 0;
	else if (strcmp(s, "payload") == 0)
		rc->kind = C_PAYLOAD;
	else if (json)
	{
		/* a key, or a path of keys $.a.b (aggmap.c checked it) */
		char	   *copy = MemoryContextStrdup(TopMemoryContext, s[0] == '$' ? s + 2 : s);
		char	   *p;

		rc->kind = C_JSON;
		rc->path = MemoryContextAlloc(TopMemoryContext, sizeof(char *) * (strlen(copy) + 1));
		rc->npath = 0;
		rc->path[rc->npath++] = copy;
		if (s[0] == '$')
			for (p = copy; *p; p++)
				if (*p == '.')
				{
					*p = '\0';
					rc->path[rc->npath++] = p + 1;
				}
		rc->key = ar.keys.n;
		if (!sfk_json_key(&ar.keys, rc->path, rc->npath))
			return false;
	}
	else
		return false;
	return true;
}

/*
 * Prepares the rows of an aggregate subscription (SPI connected): false
 * when a column or an expression needs aggmap.c's statement.
 */
bool
sfk_aggrow_prepare(SfkAggInfo *info, const char *format, const char *topic, int64 unit_us)
{
	StringInfoData buf;
	Oid			types[4];
	int			i;
	MemoryContext old;

	if (GetDatabaseEncoding() != PG_UTF8)
		return false;
	old = MemoryContextSwitchTo(TopMemoryContext);
	memset(&ar.keys, 0, sizeof(ar.keys));
	ar.json = strcmp(format, "json") == 0;
	ar.topic = pstrdup(topic);
	ar.relid = info->relid;
	ar.ncols = info->ncols;
	ar.cols = palloc0(sizeof(RowCol) * Max(info->ncols, 1));
	for (i = 0; i < info->ncols; i++)
		if (!col_of(&ar.cols[i], &info->cols[i], ar.json, unit_us))
		{
			MemoryContextSwitchTo(old);
			return false;
		}
	ar.id.kind = C_NULL;
	ar.id_default = false;
	if (info->idcol.mapped)
	{
		if (!col_of(&ar.id, &info->idcol, ar.json, unit_us))
		{
			MemoryContextSwitchTo(old);
			return false;
		}
	}
	else if (info->id_expr == NULL)
		ar.id_default = true;
	ar.need_payload = false;
	for (i = 0; i < ar.ncols; i++)
		if (ar.cols[i].kind == C_JSON || ar.cols[i].kind == C_CSV || ar.cols[i].kind == C_PAYLOAD)
			ar.need_payload = true;
	if (ar.id.kind == C_JSON || ar.id.kind == C_CSV || ar.id.kind == C_PAYLOAD)
		ar.need_payload = true;
	ar.rowtype = get_rel_type_id(info->relid);
	ar.desc = lookup_rowtype_tupdesc_copy(ar.rowtype, -1);
	MemoryContextSwitchTo(old);
	if (ar.desc->natts != info->ncols)
		return false;			/* dropped columns: the statement reads them */

	/* the attachment's expressions over the rows, as its trigger runs them */
	initStringInfo(&buf);
	appendStringInfoString(&buf, "SELECT CASE WHEN ");
	if (info->filter)
		appendStringInfo(&buf, "COALESCE((%s), false)", info->filter);
	else
		appendStringInfoString(&buf, "true");
	appendStringInfo(&buf, " THEN ROW(new_rows.sfk_pn, new_rows.sfk_po, %s, %s, %s, %s)::streamforge.%s END "
					 "FROM ROWS FROM (pg_catalog.unnest($1), pg_catalog.unnest($2), "
					 "pg_catalog.unnest($3), pg_catalog.unnest($4)) WITH ORDINALITY "
					 "AS new_rows(sfk_pn, sfk_po, sfk_id",
					 info->id_expr ? info->id_expr : "new_rows.sfk_id",
					 info->key_expr, info->time_expr, info->value_expr,
					 info->measures ? "measures_delivery" : "delivery");
	for (i = 0; i < info->ncols; i++)
		appendStringInfo(&buf, ", %s", quote_identifier(info->cols[i].name));
	appendStringInfoString(&buf, ", sfk_n) ORDER BY new_rows.sfk_n");
	types[0] = TEXTARRAYOID;
	types[1] = INT8ARRAYOID;
	types[2] = TEXTARRAYOID;
	types[3] = get_array_type(ar.rowtype);
	ar.sql = MemoryContextStrdup(TopMemoryContext, buf.data);
	memcpy(ar.argtypes, types, sizeof(types));
	if (rows_expr() == NULL)
		return false;
	old = MemoryContextSwitchTo(TopMemoryContext);
	ar.scandesc = CreateTemplateTupleDesc(info->ncols + 4);
	TupleDescInitEntry(ar.scandesc, 1, "sfk_pn", TEXTOID, -1, 0);
	TupleDescInitEntry(ar.scandesc, 2, "sfk_po", INT8OID, -1, 0);
	TupleDescInitEntry(ar.scandesc, 3, "sfk_id", TEXTOID, -1, 0);
	for (i = 0; i < info->ncols; i++)
	{
		Form_pg_attribute a = TupleDescAttr(ar.desc, i);

		TupleDescInitEntry(ar.scandesc, i + 4, NameStr(a->attname), a->atttypid,
						   a->atttypmod, 0);
		TupleDescInitEntryCollation(ar.scandesc, i + 4, a->attcollation);
	}
	TupleDescInitEntry(ar.scandesc, info->ncols + 4, "sfk_n", INT8OID, -1, 0);
	MemoryContextSwitchTo(old);
	return true;
}

/*
 * Whether an expression reads anything but a column of new_rows (sublinks,
 * aggregates and window functions: rows_expr reads the Query's flags).
 */
static bool
not_plain_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
	{
		Var		   *v = (Var *) node;

		return v->varno != 1 || v->varlevelsup != 0 || v->varattno <= 0 ||
			v->varattno > ar.ncols + 4;
	}
	if (IsA(node, Param))
		return true;
	return expression_tree_walker(node, not_plain_walker, context);
}

/*
 * The statement's one expression (a delivery or NULL for a row of
 * new_rows), analysed now, as a cached plan is revalidated at each
 * execution: the functions and operators of the day, the caller's search
 * path.  NULL when it is not one expression over the columns of new_rows
 * only (a subquery, a set-returning function, ...): the plan runs it.
 */
static Expr *
rows_expr(void)
{
	List	   *raw = pg_parse_query(ar.sql);
	List	   *queries;
	Query	   *q;
	TargetEntry *tle;

	if (list_length(raw) != 1)
		return NULL;
	queries = pg_analyze_and_rewrite_fixedparams(linitial_node(RawStmt, raw), ar.sql,
												 ar.argtypes, 4, NULL);
	if (list_length(queries) != 1)
		return NULL;
	q = linitial_node(Query, queries);
	if (q->commandType != CMD_SELECT || q->hasSubLinks || q->hasTargetSRFs ||
		q->hasAggs || q->hasWindowFuncs || q->jointree->quals != NULL ||
		list_length(q->rtable) != 1 || list_length(q->targetList) < 1)
		return NULL;
	tle = linitial_node(TargetEntry, q->targetList);
	if (tle->resjunk || not_plain_walker((Node *) tle->expr, NULL))
		return NULL;
	return tle->expr;
}

/* days of each month */
static const int mdays[2][13] = {
	{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31},
	{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}
};

static inline int
digits(const char *s, int n)
{
	int			v = 0;

	while (n-- > 0)
	{
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s++ - '0');
	}
	return v;
}

/*
 * YYYY-MM-DDTHH:MM:SS[.f{1,6}](Z|+00:00) as a timestamptz, or false
 * (timestamptz_in then reads it).
 */
static bool
iso_utc(const char *s, int len, TimestampTz *out)
{
	int			y,
				mo,
				d,
				h,
				mi,
				sec;
	int			fus = 0;
	int			p = 19;
	int			scale = 100000;

	if (len < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') ||
		s[13] != ':' || s[16] != ':')
		return false;
	y = digits(s, 4);
	mo = digits(s + 5, 2);
	d = digits(s + 8, 2);
	h = digits(s + 11, 2);
	mi = digits(s + 14, 2);
	sec = digits(s + 17, 2);
	if (y < 1 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 ||
		sec < 0 || sec > 59)
		return false;
	if (d > mdays[(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)) ? 1 : 0][mo])
		return false;
	if (s[p] == '.')
	{
		p++;
		if (p >= len || s[p] < '0' || s[p] > '9')
			return false;
		while (p < len && s[p] >= '0' && s[p] <= '9')
		{
			if (scale == 0)
				return false;	/* more than microseconds: rounding */
			fus += (s[p] - '0') * scale;
			scale /= 10;
			p++;
		}
	}
	if (!((len - p == 1 && s[p] == 'Z') ||
		  (len - p == 6 && memcmp(s + p, "+00:00", 6) == 0)))
		return false;
	*out = ((int64) (date2j(y, mo, d) - POSTGRES_EPOCH_JDATE) * SECS_PER_DAY +
			(h * 60 + mi) * 60 + sec) * USECS_PER_SEC + fus;
	return true;
}

/* The value s (len bytes) of column rc. */
static Datum
convert(RowCol *rc, const char *s, int len)
{
	if (rc->typid == TIMESTAMPTZOID)
	{
		TimestampTz t;

		if (iso_utc(s, len, &t))
			return TimestampTzGetDatum(t);
	}
	else if (rc->typid == TEXTOID)
		return PointerGetDatum(cstring_to_text_with_len(s, len));
	else if (rc->typid == INT8OID || rc->typid == INT4OID)
	{
		int64		v;

		if (sfk_parse_int8(s, len, &v) &&
			(rc->typid == INT8OID || (v >= PG_INT32_MIN && v <= PG_INT32_MAX)))
			return rc->typid == INT8OID ? Int64GetDatum(v) : Int32GetDatum((int32) v);
	}
	return sfk_convert_field(rc->typid, &rc->in, rc->ioparam, pnstrdup(s, len),
							 rc->spec, rc->unit_us);
}

static void
missing(RowCol *rc)
{
	ereport(ERROR,
			(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
			 errmsg("field \"%s\" is missing from the message", rc->spec)));
}

/* What a message reads its columns from. */
typedef struct Source
{
	Msg		   *m;
	char	   *payload;		/* converted (slow JSON, CSV), or NULL */
	bool		scanned;		/* vals hold the JSON fields (json.c) */
	SfkJsonValue vals[SFK_JSON_MAX_KEYS];
	Jsonb	   *j;				/* slow JSON */
	char	  **csv;
	int			ncsv;
	bool		nopayload;
} Source;

/* The value of column rc in the message: *isnull for NULL. */
static Datum
column_value(RowCol *rc, Source *src, bool *isnull)
{
	Msg		   *m = src->m;
	char	   *t;

	*isnull = false;
	switch (rc->kind)
	{
		case C_NULL:
			break;
		case C_KEY:
			if (m->key == NULL)
				break;
			t = TextDatumGetCString(DirectFunctionCall2(pg_convert_from, PointerGetDatum(m->key),
														CStringGetDatum("UTF8")));
			return convert(rc, t, strlen(t));
		case C_TS:
			t = psprintf(INT64_FORMAT, m->ts);
			return convert(rc, t, strlen(t));
		case C_OFFSET:
			t = psprintf(INT64_FORMAT, m->offset);
			return convert(rc, t, strlen(t));
		case C_PART:
			t = psprintf("%d", m->part);
			return convert(rc, t, strlen(t));
		case C_ID:
			t = psprintf("%s/%d/" INT64_FORMAT, ar.topic, m->part, m->offset);
			return convert(rc, t, strlen(t));
		case C_PAYLOAD:
			if (src->nopayload)
				break;
			if (src->scanned)
				return convert(rc, VARDATA(m->payload), VARSIZE(m->payload) - VARHDRSZ);
			return convert(rc, src->payload, strlen(src->payload));
		case C_JSON:
			if (src->nopayload)
				break;
			if (src->scanned)
			{
				SfkJsonValue *v = &src->vals[rc->key];

				if (v->kind == SFK_JSON_MISSING)
					missing(rc);
				if (v->kind == SFK_JSON_NULL)
					break;
				return convert(rc, v->s, v->len);
			}
			t = sfk_json_lookup(src->j, (const char *const *) rc->path, rc->npath, rc->spec);
			if (t == NULL)
				break;
			return convert(rc, t, strlen(t));
		case C_CSV:
			if (src->nopayload)
				break;
			if (rc->csvcol > src->ncsv)
				missing(rc);
			t = src->csv[rc->csvcol - 1];
			if (t[0] == '\0' && !rc->string)
				break;
			return convert(rc, t, strlen(t));
	}
	*isnull = true;
	return (Datum) 0;
}

/* Reads the payload of a message as the statement of aggmap.c does. */
static void
read_payload(Source *src)
{
	Msg		   *m = src->m;
	int			len;

	src->m = m;
	src->payload = NULL;
	src->scanned = false;
	src->j = NULL;
	src->csv = NULL;
	src->ncsv = 0;
	src->nopayload = m->payload == NULL;
	if (src->nopayload || !ar.need_payload)
		return;
	len = VARSIZE(m->payload) - VARHDRSZ;
	if (ar.json)
	{
		if (len > ar.scanlen)
		{
			if (ar.scanbuf)
				pfree(ar.scanbuf);
			ar.scanlen = Max(len, 1024);
			ar.scanbuf = MemoryContextAlloc(TopMemoryContext, ar.scanlen);
		}
		if (sfk_json_scan(VARDATA(m->payload), len, &ar.keys, src->vals, ar.scanbuf))
		{
			src->scanned = true;
			return;
		}
	}
	src->payload = TextDatumGetCString(DirectFunctionCall2(pg_convert_from,
														   PointerGetDatum(m->payload),
														   CStringGetDatum("UTF8")));
	if (ar.json)
		src->j = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(src->payload)));
	else
	{
		/* string_to_array(payload, ','): '' has no column */
		char	   *p = pstrdup(src->payload);
		char	   *q;
		int			cap = 1;

		for (q = p; *q; q++)
			if (*q == ',')
				cap++;
		src->csv = palloc(sizeof(char *) * cap);
		if (*p != '\0')
		{
			src->csv[src->ncsv++] = p;
			for (q = p; *q; q++)
				if (*q == ',')
				{
					*q = '\0';
					src->csv[src->ncsv++] = q + 1;
				}
		}
	}
}

/*
 * The statement's expression taken apart: CASE WHEN filter THEN ROW(pn, po,
 * id, key, time, value)::delivery END.  Its parts are evaluated in the
 * expression's order into the fields of the delivery, so that no row is
 * formed to be deformed again by the write, and, as the core's attachment
 * writes its rows (src/persist/attach_rows.c): a key ARRAY[e::text,
 * ...]::text is written from its elements as array_out writes a text[],
 * not made an array and printed; an integer's text (x::text, the event id
 * of most aggregates) as its output function writes it.
 */
typedef struct Part
{
	ExprState  *whole;
	ExprState  *intarg;			/* x of x::text for an integer x, or NULL */
	Oid			inttype;
} Part;

typedef struct Split
{
	ExprState  *filter;			/* NULL without a WHERE */
	Part		f[6];			/* the delivery's fields (f[3] unused with keys) */
	Part	   *keys;			/* the key's elements, or NULL */
	int			nkeys;
	StringInfoData key;
	ExprState **measures;		/* ARRAY[...] of int8 measures' elements, or NULL */
	int			nmeasures;
	Datum	   *mvals;
	bool	   *mnulls;
} Split;

static void
part_init(Part *p, Expr *e)
{
	p->whole = ExecInitExpr(e, NULL);
	p->intarg = NULL;
	p->inttype = InvalidOid;
	if (IsA(e, CoerceViaIO) && ((CoerceViaIO *) e)->resulttype == TEXTOID)
	{
		Expr	   *arg = ((CoerceViaIO *) e)->arg;
		Oid			type = exprType((Node *) arg);

		/*
		 * A NULL integer evaluates the whole expression: only where that
		 * evaluates the integer again to the same NULL, without effects
		 */
		if ((type == INT2OID || type == INT4OID || type == INT8OID) &&
			!contain_volatile_functions((Node *) arg))
		{
			p->intarg = ExecInitExpr(arg, NULL);
			p->inttype = type;
		}
	}
}

/*
 * Takes expr (planned) apart into sp, its states initialised in the
 * current memory context (the executor's checks of EXECUTE, in the
 * expression's order); false when it is not the expression sfk_aggrow_prepare
 * makes.
 */
static bool
split_expr(Expr *expr, bool measures, Split *sp)
{
	Expr	   *filter = NULL;
	RowExpr    *row;
	Expr	   *args[6];
	ListCell   *lc;
	int			f;

	if (IsA(expr, CaseExpr))
	{
		CaseExpr   *c = (CaseExpr *) expr;
		CaseWhen   *w;

		if (c->arg != NULL || list_length(c->args) != 1 || c->defresult == NULL ||
			!IsA(c->defresult, Const) || !((Const *) c->defresult)->constisnull)
			return false;
		w = linitial_node(CaseWhen, c->args);
		if (exprType((Node *) w->expr) != BOOLOID)
			return false;
		filter = w->expr;
		expr = w->result;
	}
	if (!IsA(expr, RowExpr))
		return false;
	row = (RowExpr *) expr;
	if (list_length(row->args) != 6)
		return false;
	foreach(lc, row->args)
	{
		static const Oid types[5] = {TEXTOID, INT8OID, TEXTOID, TEXTOID, INT8OID};

		f = foreach_current_index(lc);
		args[f] = lfirst(lc);
		if (exprType((Node *) args[f]) !=
			(f < 5 ? types[f] : measures ? INT8ARRAYOID : INT8OID))
			return false;
	}
	memset(sp, 0, sizeof(*sp));
	sp->filter = filter ? ExecInitExpr(filter, NULL) : NULL;
	for (f = 0; f < 6; f++)
	{
		Expr	   *e = args[f];

		if (f == 3 && IsA(e, CoerceViaIO) && ((CoerceViaIO *) e)->resulttype == TEXTOID &&
			IsA(((CoerceViaIO *) e)->arg, ArrayExpr))
		{
			ArrayExpr  *a = (ArrayExpr *) ((CoerceViaIO *) e)->arg;

			if (!a->multidims && a->element_typeid == TEXTOID &&
				a->array_typeid == TEXTARRAYOID && list_length(a->elements) > 0)
			{
				sp->nkeys = list_length(a->elements);
				sp->keys = palloc(sizeof(Part) * sp->nkeys);
				foreach(lc, a->elements)
					part_init(&sp->keys[foreach_current_index(lc)], lfirst(lc));
				continue;
			}
		}
		if (f == 5 && measures && IsA(e, ArrayExpr))
		{
			ArrayExpr  *a = (ArrayExpr *) e;

			if (!a->multidims && a->element_typeid == INT8OID &&
				a->array_typeid == INT8ARRAYOID && list_length(a->elements) > 0)
			{
				sp->nmeasures = list_length(a->elements);
				sp->measures = palloc(sizeof(ExprState *) * sp->nmeasures);
				sp->mvals = palloc(sizeof(Datum) * sp->nmeasures);
				sp->mnulls = palloc(sizeof(bool) * sp->nmeasures);
				foreach(lc, a->elements)
					sp->measures[foreach_current_index(lc)] = ExecInitExpr(lfirst(lc), NULL);
				continue;
			}
		}
		part_init(&sp->f[f], e);
	}
	initStringInfo(&sp->key);
	return true;
}

/*
 * The measures' int8[] from its elements, evaluated in order, as
 * ExecEvalArrayExpr and construct_md_array make it (one dimension, lower
 * bound 1, a null bitmap only with a NULL element), without their
 * general work for each row.
 */
static Datum
measures_array(Split *sp, ExprContext *econtext)
{
	int			n = sp->nmeasures;
	int			nonnull = 0;
	bool		hasnull = false;
	int			off;
	ArrayType  *a;
	int64	   *data;
	int			k;

	for (k = 0; k < n; k++)
	{
		sp->mvals[k] = ExecEvalExpr(sp->measures[k], econtext, &sp->mnulls[k]);
		if (sp->mnulls[k])
			hasnull = true;
		else
			nonnull++;
	}
	off = hasnull ? ARR_OVERHEAD_WITHNULLS(1, n) : ARR_OVERHEAD_NONULLS(1);
	a = palloc0(off + sizeof(int64) * nonnull);
	SET_VARSIZE(a, off + sizeof(int64) * nonnull);
	a->ndim = 1;
	a->dataoffset = hasnull ? off : 0;
	a->elemtype = INT8OID;
	ARR_DIMS(a)[0] = n;
	ARR_LBOUND(a)[0] = 1;
	data = (int64 *) ((char *) a + off);
	for (k = 0; k < n; k++)
	{
		if (sp->mnulls[k])
			continue;
		if (hasnull)
			ARR_NULLBITMAP(a)[k / 8] |= 1 << (k % 8);
		*data++ = DatumGetInt64(sp->mvals[k]);
	}
	return PointerGetDatum(a);
}

/* A part's value; *digits (if not NULL): an integer's text */
static Datum
part_value(Part *p, ExprContext *econtext, bool *isnull, bool *digits)
{
	if (digits != NULL)
		*digits = false;
	if (p->intarg != NULL)
	{
		Datum		d = ExecEvalExpr(p->intarg, econtext, isnull);

		if (!*isnull)
		{
			char		buf[MAXINT8LEN + 1];
			int			len;

			if (p->inttype == INT2OID)
				len = pg_itoa(DatumGetInt16(d), buf);
			else if (p->inttype == INT4OID)
				len = pg_ltoa(DatumGetInt32(d), buf);
			else
				len = pg_lltoa(DatumGetInt64(d), buf);
			if (digits != NULL)
				*digits = true;
			return PointerGetDatum(cstring_to_text_with_len(buf, len));
		}
	}
	return ExecEvalExpr(p->whole, econtext, isnull);
}

/*
 * The fields of the delivery of the row in econtext's scan slot into
 * values and isnull (6 each): false when the row does not match.
 */
static bool
split_eval(Split *sp, ExprContext *econtext, Datum *values, bool *isnull)
{
	int			f;
	int			k;

	if (sp->filter != NULL)
	{
		bool		null;
		Datum		d = ExecEvalExpr(sp->filter, econtext, &null);

		if (null || !DatumGetBool(d))
			return false;
	}
	for (f = 0; f < 6; f++)
	{
		if (f == 5 && sp->measures != NULL)
		{
			values[5] = measures_array(sp, econtext);
			isnull[5] = false;
			continue;
		}
		if (f != 3 || sp->keys == NULL)
		{
			values[f] = part_value(&sp->f[f], econtext, &isnull[f], NULL);
			continue;
		}
		resetStringInfo(&sp->key);
		appendStringInfoChar(&sp->key, '{');
		for (k = 0; k < sp->nkeys; k++)
		{
			bool		null;
			bool		digits;
			Datum		d = part_value(&sp->keys[k], econtext, &null, &digits);

			if (k > 0)
				appendStringInfoChar(&sp->key, ',');
			if (null)
				appendStringInfoString(&sp->key, "NULL");
			else
			{
				text	   *t = DatumGetTextPP(d);

				if (digits)
					appendBinaryStringInfo(&sp->key, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
				else
					sf_key_element_out(&sp->key, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
			}
		}
		appendStringInfoChar(&sp->key, '}');
		values[3] = PointerGetDatum(cstring_to_text_with_len(sp->key.data, sp->key.len));
		isnull[3] = false;
	}
	return true;
}

/*
 * Maps the elements to rows of the aggregate's table, applies the
 * attachment's expressions to each row as it is made and ingests the
 * deliveries of those that match (trailing: as sfk_run_aggregate).
 *
 * The statement's expression is planned as a statement's would be
 * (expression_planner) and initialised by the executor (ExecInitExpr
 * checks EXECUTE on its functions), whole or, for the C entry, in parts
 * (split_expr); each message's columns go straight into the slot it is
 * evaluated over, in the batch's memory, where the deliveries live until
 * they are ingested.  Whether the C entry takes the batch is decided
 * first, as the subscriber (sfk_aggregate_direct checks its EXECUTE).
 */
void
sfk_aggrow_run(Elems *e, const char *pipeline, bool measures, int nparts,
			   int *trailing)
{
	int			n = e->n;
	int32	   *kparts = palloc(sizeof(int32) * Max(n, 1));
	Datum	   *rows = palloc(sizeof(Datum) * Max(n, 1));
	bool	   *rownulls = palloc(sizeof(bool) * Max(n, 1));
	Expr	   *expr;
	SfkTableOwner saved;
	EState	   *estate;
	ExprState  *state = NULL;
	MemoryContext old;
	bool		split = false;
	Split		sp;
	Datum	   *vals = NULL;
	bool	   *nulls = NULL;
	ExprContext *econtext;
	TupleTableSlot *slot;
	Source		src;
	int			i;
	int			c;

	/* the deliveries go to the core's C entry, as the subscriber? */
	if (sfk_aggregate_direct(measures))
	{
		split = true;
		vals = palloc(sizeof(Datum) * 6 * Max(n, 1));
		nulls = palloc(sizeof(bool) * 6 * Max(n, 1));
	}
	/* the aggregate's expressions, as its table's owner (admin.c) */
	sfk_become_table_owner(ar.relid, &saved);
	expr = rows_expr();
	if (expr == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the expressions of aggregate subscription of pipeline \"%s\" changed",
						pipeline),
				 errhint("The worker restarts and reads them again.")));
	estate = CreateExecutorState();
	/* as ExecPrepareExpr, or taken apart for the C entry */
	old = MemoryContextSwitchTo(estate->es_query_cxt);
	expr = (Expr *) expression_planner(expr);
	if (split)
		split = split_expr(expr, measures, &sp);
	if (!split)
		state = ExecInitExpr(expr, NULL);
	MemoryContextSwitchTo(old);
	econtext = GetPerTupleExprContext(estate);
	slot = MakeSingleTupleTableSlot(ar.scandesc, &TTSOpsVirtual);
	econtext->ecxt_scantuple = slot;

	/* what SPI gives each statement: the commands before, a new snapshot */
	CommandCounterIncrement();
	PushActiveSnapshot(GetTransactionSnapshot());
	for (i = 0; i < n; i++)
	{
		Msg		   *m = e->m[i];
		Datum	   *values = slot->tts_values;
		bool	   *isnull = slot->tts_isnull;

		kparts[i] = m->part;
		src.m = m;
		read_payload(&src);
		ExecClearTuple(slot);
		/* new_rows: pn, po, id, the table's columns, n */
		values[0] = e->pn[i];
		isnull[0] = false;
		values[1] = e->po[i];
		isnull[1] = false;
		/* the columns, then the event id: a message's first error */
		for (c = 0; c < ar.ncols; c++)
			values[c + 3] = column_value(&ar.cols[c], &src, &isnull[c + 3]);
		if (ar.id.kind != C_NULL)
			values[2] = column_value(&ar.id, &src, &isnull[2]);
		else if (ar.id_default)
		{
			values[2] = CStringGetTextDatum(psprintf("%s/%d/" INT64_FORMAT, ar.topic,
													 m->part, m->offset));
			isnull[2] = false;
		}
		else
		{
			values[2] = (Datum) 0;
			isnull[2] = true;
		}
		values[ar.ncols + 3] = Int64GetDatum(i + 1);
		isnull[ar.ncols + 3] = false;
		ExecStoreVirtualTuple(slot);
		if (split)
			rownulls[i] = !split_eval(&sp, econtext, vals + 6 * i, nulls + 6 * i);
		else
			rows[i] = ExecEvalExpr(state, econtext, &rownulls[i]);
	}
	PopActiveSnapshot();
	ExecDropSingleTupleTableSlot(slot);
	FreeExecutorState(estate);
	sfk_restore_table_owner(&saved);
	if (split)
		sfk_aggregate_deliver_values(pipeline, measures, nparts, kparts, trailing,
									 vals, nulls, rownulls, n);
	else
		sfk_aggregate_deliver_rows(pipeline, measures, nparts, kparts, trailing,
								   rows, rownulls, n);
}
