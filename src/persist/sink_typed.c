/*-------------------------------------------------------------------------
 *
 * sink_typed.c
 *	  The table of an aggregate's results (0.4.0, issue 42 item 2;
 *	  docs/design/typed-results.md): the rows of an aggregate made by
 *	  create_aggregate go to streamforge_results.a<id>, a table of its own
 *	  shape (sql/objects/66_aggregates_views.sql, aggregate_make_table),
 *	  instead of the shared streamforge.results, whose every row paid for
 *	  the partial indexes of every aggregate.
 *
 * The table's columns, matched by name (sf_bulk_insert_rel):
 *	  key				the engine's key text, exact;
 *	  k<part>			GROUP BY column <part> of the key, typed: the element
 *						of the key (the text of an ARRAY[...]) read by the
 *						column type's input function, as 0.3.0's view cast
 *						aggregate_key_part(key, part);
 *	  window_start, window_end	the bounds (NULL outside timestamptz);
 *	  a<i>				the view's aggregate i, typed: for a measures
 *						pipeline the declared aggregate the spec names
 *						(sf_agg_typed); a one-measure pipeline's are
 *						generated columns (count, sum, min, max or avg of
 *						the row, as 0.3.0's view cast them), computed by the
 *						insert;
 *	  final, seq, epoch, start_u, end_u, count, sum, min, max
 *						as streamforge.results holds them.
 *
 * The rows are the changes applied as sink_rows.c applies them to
 * streamforge.results: every address a call touched is deleted (one
 * statement per chunk, by the table's address index), then the last
 * upsert of each is inserted in bulk.  Should the table have a trigger
 * (only its owner or a superuser could add one), the rows go in by an
 * INSERT statement instead, so that it fires.
 *
 * All run inside SPI, as the extension's owner, in a memory context the
 * caller resets; the caller holds the pipeline's row lock.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/sink_typed.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/rel.h"

#include "engine/engine.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

/* What fills one column of the table */
typedef enum SfTypedSource
{
	TS_KEY,						/* key */
	TS_PART,					/* k<part> */
	TS_START,					/* window_start */
	TS_END,						/* window_end */
	TS_AGG,						/* a<i> */
	TS_FINAL,
	TS_SEQ,
	TS_EPOCH,
	TS_START_U,
	TS_END_U,
	TS_COUNT,
	TS_SUM,
	TS_MIN,
	TS_MAX
} SfTypedSource;

/* One column of the table, and how to fill it */
typedef struct SfTypedColumn
{
	const char *name;
	SfTypedSource source;
	Oid			type;			/* the column's type */
	int			arg;			/* TS_PART: the part, from 1; TS_AGG: i, from 1 */
	FmgrInfo	in;				/* TS_PART: the type's input function */
	Oid			ioparam;
	int			member;			/* TS_AGG, measures: the declared aggregate */
} SfTypedColumn;

/* The table's columns, read from its descriptor */
typedef struct SfTypedLayout
{
	int			ncols;
	SfTypedColumn *cols;
	int			maxpart;		/* the highest part a column reads, 0: none */
	FmgrInfo	array_in;		/* text[]'s input function */
} SfTypedLayout;

static const struct
{
	const char *name;
	SfTypedSource source;
}			fixed_columns[] = {
	{"key", TS_KEY}, {"window_start", TS_START}, {"window_end", TS_END},
	{"final", TS_FINAL}, {"seq", TS_SEQ}, {"epoch", TS_EPOCH},
	{"start_u", TS_START_U}, {"end_u", TS_END_U}, {"count", TS_COUNT},
	{"sum", TS_SUM}, {"min", TS_MIN}, {"max", TS_MAX}
};

/* The name of the table, qualified and quoted, in the current context */
static char *
typed_table_name(Oid relid)
{
	char	   *rel = get_rel_name(relid);

	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("the table of an aggregate's results (OID %u) is missing", relid)));
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									  rel);
}

/* "<letter><digits>" as the number, or -1 */
static int
positional(const char *name, char letter)
{
	int			v = 0;

	if (name[0] != letter || name[1] == '\0' || strlen(name) > 6)
		return -1;
	for (const char *c = name + 1; *c; c++)
	{
		if (*c < '0' || *c > '9')
			return -1;
		v = v * 10 + (*c - '0');
	}
	return v;
}

/*
 * The columns of rel and where their values come from; every column must
 * be one the table of an aggregate has (a column someone added is an
 * error, not a silent NULL)
 */
static void
typed_layout(Relation rel, SfPipeline *p, SfSinkTyped *t, SfTypedLayout *l)
{
	TupleDesc	desc = RelationGetDescr(rel);

	l->cols = palloc0(desc->natts * sizeof(SfTypedColumn));
	l->ncols = 0;
	l->maxpart = 0;
	fmgr_info(F_ARRAY_IN, &l->array_in);
	for (int a = 0; a < desc->natts; a++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, a);
		SfTypedColumn *c = &l->cols[l->ncols];
		const char *name = NameStr(att->attname);
		int			k;

		/*
		 * a one-measure pipeline's aggregates are generated from count,
		 * sum, min and max (aggregate_make_table)
		 */
		if (att->attisdropped || att->attgenerated)
			continue;
		c->name = name;
		c->type = att->atttypid;
		for (k = 0; k < lengthof(fixed_columns); k++)
			if (strcmp(name, fixed_columns[k].name) == 0)
				break;
		if (k < lengthof(fixed_columns))
			c->source = fixed_columns[k].source;
		else if ((c->arg = positional(name, 'k')) > 0)
		{
			Oid			infunc;

			c->source = TS_PART;
			getTypeInputInfo(c->type, &infunc, &c->ioparam);
			fmgr_info(infunc, &c->in);
			l->maxpart = Max(l->maxpart, c->arg);
		}
		else if ((c->arg = positional(name, 'a')) > 0 && c->arg <= t->naggs)
		{
			const char *member = t->aggs[c->arg - 1];
			const SfMeasuresDef *md = p->def.measures;

			c->source = TS_AGG;
			c->member = -1;
			for (int i = 0; md != NULL && i < md->naggs; i++)
				if (strcmp(md->aggs[i].name, member) == 0)
					c->member = i;
			if (c->member < 0)
				elog(ERROR, "streamforge: aggregate \"%s\" of pipeline \"%s\" is not declared",
					 member, p->def.name);
		}
		else
			elog(ERROR, "streamforge: column \"%s\" of table %s is not one of an aggregate's results",
				 name, RelationGetRelationName(rel));
		l->ncols++;
	}
}

/*
 * The elements of a key text in the simple form array_out gives a
 * one-dimensional array whose elements need no quoting: "{a,b,...}" with
 * no quote, backslash, brace, bracket or space inside and no empty
 * element, an element NULL (any case) being a null, as array_in reads it.
 * Returns false for any other text (array_in reads it).
 */
static bool
key_parts_simple(const char *data, int len, int maxpart, char **parts,
				 bool *nulls)
{
	int			part = 1;
	int			from = 1;

	if (len < 2 || data[0] != '{' || data[len - 1] != '}')
		return false;
	if (len == 2)
		return true;			/* an empty array: no parts */
	for (int i = 1; i < len; i++)
	{
		char		c = data[i];

		if (c == ',' || i == len - 1)
		{
			int			n = i - from;

			if (n == 0)
				return false;	/* an empty element: array_in's error */
			if (part <= maxpart)
			{
				nulls[part] = (n == 4 && pg_strncasecmp(data + from, "NULL", 4) == 0);
				parts[part] = nulls[part] ? NULL : pnstrdup(data + from, n);
			}
			part++;
			from = i + 1;
		}
		else if (c == '"' || c == '\\' || c == '{' || c == '}' ||
				 c == '[' || c == ']' || c == ' ' || c == '\t' ||
				 c == '\n' || c == '\r' || c == '\v' || c == '\f')
			return false;
	}
	return true;
}

/*
 * The parts of the key text (an ARRAY[...] of text, as the engine keeps
 * it) into parts[1..maxpart], as C strings (NULL: missing or NULL; a key
 * of more than one dimension has none, as aggregate_key_part answers)
 */
static void
key_parts(SfTypedLayout *l, const SfString *key, char **parts, bool *nulls)
{
	int			maxpart = l->maxpart;
	char	   *str;
	ArrayType  *a;
	Datum	   *elems;
	bool	   *enulls;
	int			n;

	for (int i = 1; i <= maxpart; i++)
	{
		nulls[i] = true;
		parts[i] = NULL;
	}
	if (key_parts_simple(key->data, key->len, maxpart, parts, nulls))
		return;
	for (int i = 1; i <= maxpart; i++)
		nulls[i] = true;
	str = pnstrdup(key->data, key->len);
	a = DatumGetArrayTypeP(InputFunctionCall(&l->array_in, str, TEXTOID, -1));
	if (ARR_NDIM(a) > 1)
		return;
	deconstruct_array(a, TEXTOID, -1, false, TYPALIGN_INT, &elems, &enulls, &n);
	for (int i = 1; i <= maxpart && i <= n; i++)
	{
		nulls[i] = enulls[i - 1];
		if (!nulls[i])
			parts[i] = TextDatumGetCString(elems[i - 1]);
	}
}

/*
 * Insert the rows by a statement (the table has a trigger): one array
 * per column, unnested
 */
static void
typed_insert_statement(Oid relid, const SfTypedLayout *l,
					   const SfBulkColumn *cols, int n)
{
	StringInfoData sql;
	Oid		   *types = palloc(l->ncols * sizeof(Oid));
	Datum	   *values = palloc(l->ncols * sizeof(Datum));
	int			dims[1] = {n};
	int			lbs[1] = {1};

	initStringInfo(&sql);
	appendStringInfo(&sql, "INSERT INTO %s (", typed_table_name(relid));
	for (int k = 0; k < l->ncols; k++)
		appendStringInfo(&sql, "%s%s", k > 0 ? ", " : "",
						 quote_identifier(cols[k].name));
	appendStringInfoString(&sql, ") SELECT * FROM ROWS FROM (");
	for (int k = 0; k < l->ncols; k++)
	{
		Oid			elem = l->cols[k].type;
		int16		len;
		bool		byval;
		char		align;
		Datum	   *v = cols[k].values;
		bool	   *nulls = cols[k].nulls;

		types[k] = get_array_type(elem);
		if (!OidIsValid(types[k]))
			elog(ERROR, "streamforge: type %u has no array type", elem);
		get_typlenbyvalalign(elem, &len, &byval, &align);
		if (v == NULL)
		{
			/* a constant column */
			v = palloc(n * sizeof(Datum));
			nulls = palloc(n * sizeof(bool));
			for (int i = 0; i < n; i++)
			{
				v[i] = cols[k].constant;
				nulls[i] = cols[k].constant_null;
			}
		}
		values[k] = PointerGetDatum(construct_md_array(v, nulls, 1, dims, lbs,
													   elem, len, byval, align));
		appendStringInfo(&sql, "%spg_catalog.unnest($%d)", k > 0 ? ", " : "",
						 k + 1);
	}
	appendStringInfoString(&sql, ")");
	if (SPI_execute_with_args(sql.data, l->ncols, types, values, NULL, false,
							  0) != SPI_OK_INSERT)
		elog(ERROR, "streamforge: could not insert the results of an aggregate");
}

/* The kept statement that deletes the addresses of a chunk */
static SPIPlanPtr
typed_delete_plan(SfSinkTyped *t)
{
	char	   *table;
	char	   *sql;
	Oid			types[3] = {TEXTARRAYOID, INT8ARRAYOID, INT8ARRAYOID};
	SPIPlanPtr	plan;

	if (t->delete_plan != NULL)
		return t->delete_plan;
	table = typed_table_name(t->relid);

	/*
	 * As PLAN_RESULTS_DELETE (sink_rows.c): one look-up per address by the
	 * address index (start_u, hash of the key), the key compared exactly,
	 * then a TID scan.
	 */
	sql = psprintf("DELETE FROM %s AS r "
				   "WHERE r.ctid OPERATOR(pg_catalog.=) ANY (ARRAY("
				   "SELECT x.ctid FROM ROWS FROM (pg_catalog.unnest($1), "
				   "pg_catalog.unnest($2), pg_catalog.unnest($3)) AS a(k, s, e), "
				   "LATERAL (SELECT f.ctid FROM %s AS f "
				   "WHERE f.start_u OPERATOR(pg_catalog.=) a.s "
				   "AND pg_catalog.hashtextextended(f.key, 0::pg_catalog.int8) "
				   "OPERATOR(pg_catalog.=) pg_catalog.hashtextextended(a.k, 0::pg_catalog.int8) "
				   "AND f.key OPERATOR(pg_catalog.=) a.k "
				   "AND f.end_u OPERATOR(pg_catalog.=) a.e OFFSET 0) AS x))",
				   table, table);
	plan = SPI_prepare(sql, 3, types);
	if (plan == NULL)
		elog(ERROR, "streamforge: could not prepare \"%s\": %s", sql,
			 SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "streamforge: could not keep a plan");
	t->delete_plan = plan;
	return plan;
}

/*
 * The largest start_u in the table (one descent of the address index), or
 * PG_INT64_MIN when it is empty: an address that starts after it has no
 * row to delete.  What the DELETE would see: both run under the row lock
 * of the pipeline, the only writer of the table, in the same mode.  Read
 * once per call, before its first chunk: a chunk writes only its own
 * addresses, each address is in one chunk.
 */
int64
sf_sink_typed_max_start(SfSinkTyped *t)
{
	bool		isnull;
	Datum		d;

	if (t->max_plan == NULL)
	{
		char	   *sql = psprintf("SELECT pg_catalog.max(r.start_u) FROM %s AS r",
								   typed_table_name(t->relid));
		SPIPlanPtr	plan = SPI_prepare(sql, 0, NULL);

		if (plan == NULL || SPI_keepplan(plan) != 0)
			elog(ERROR, "streamforge: could not prepare \"%s\"", sql);
		t->max_plan = plan;
	}
	if (SPI_execute_plan(t->max_plan, NULL, NULL, false, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "streamforge: could not read the results of an aggregate");
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	SPI_freetuptable(SPI_tuptable);
	return isnull ? PG_INT64_MIN : DatumGetInt64(d);
}

/*
 * Delete the n addresses (keys, starts, ends) from the table: those that
 * start at or before max, the largest start it had when the call began
 * (sf_sink_typed_max_start), the others have no row; none: no statement
 * (the windows a call emits for the first time usually start after every
 * row of the table)
 */
static void
typed_delete(SfSinkTyped *t, int64 max, const Datum *keys,
			 const Datum *starts, const Datum *ends, int n)
{
	Datum		values[3];
	int			nestlevel;
	SPIPlanPtr	plan;
	Datum	   *k = palloc(n * sizeof(Datum));
	Datum	   *s = palloc(n * sizeof(Datum));
	Datum	   *e = palloc(n * sizeof(Datum));
	int			m = 0;

	for (int i = 0; i < n; i++)
		if (DatumGetInt64(starts[i]) <= max)
		{
			k[m] = keys[i];
			s[m] = starts[i];
			e[m] = ends[i];
			m++;
		}
	if (m == 0)
		return;

	values[0] = PointerGetDatum(construct_array(k, m, TEXTOID, -1, false,
												TYPALIGN_INT));
	values[1] = PointerGetDatum(construct_array(s, m, INT8OID, 8,
												FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	values[2] = PointerGetDatum(construct_array(e, m, INT8OID, 8,
												FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	/* planned once per backend with no sequential scan (sink_rows.c) */
	nestlevel = NewGUCNestLevel();
	(void) set_config_option("enable_seqscan", "off", PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	plan = typed_delete_plan(t);
	if (SPI_execute_plan(plan, values, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "streamforge: could not delete the results of an aggregate");
	AtEOXact_GUC(true, nestlevel);
}

/*
 * Apply the n last changes of their addresses (n <= the sink's chunk), all
 * of the aggregate's window, to the table: delete every address (that
 * starts at or before max_start: typed_delete), insert the upserts, final
 * if their end is below final_below (sf_sink_results)
 */
void
sf_sink_typed_results(SfPipeline *p, SfSinkTyped *t, int64 epoch,
					  int64 unit_us, int64 final_below, int64 max_start,
					  const SfChange *const *last, int n)
{
	Relation	rel;
	SfTypedLayout l;
	SfBulkColumn *cols;
	Datum	   *keys = palloc(n * sizeof(Datum));
	Datum	   *starts = palloc(n * sizeof(Datum));
	Datum	   *ends = palloc(n * sizeof(Datum));
	char	  **parts;
	bool	   *pnulls;
	int			nput = 0;
	bool		have_sum = false;
	int128		last_sum = 0;
	Datum		last_sum_datum = (Datum) 0;

	for (int i = 0; i < n; i++)
	{
		keys[i] = sf_string_text(last[i]->row.addr.key);
		starts[i] = Int64GetDatum(last[i]->row.addr.start);
		ends[i] = Int64GetDatum(last[i]->row.addr.end);
	}
	typed_delete(t, max_start, keys, starts, ends, n);

	rel = table_open(t->relid, AccessShareLock);
	typed_layout(rel, p, t, &l);
	cols = palloc0(l.ncols * sizeof(SfBulkColumn));
	for (int k = 0; k < l.ncols; k++)
	{
		cols[k].name = l.cols[k].name;
		cols[k].values = palloc(n * sizeof(Datum));
		cols[k].nulls = palloc0(n * sizeof(bool));
	}
	parts = palloc((l.maxpart + 1) * sizeof(char *));
	pnulls = palloc((l.maxpart + 1) * sizeof(bool));

	for (int i = 0; i < n; i++)
	{
		const SfChange *c = last[i];
		const SfAgg *agg = &c->row.agg;

		if (c->op == SF_RETRACT)
			continue;
		CHECK_FOR_INTERRUPTS();
		if (l.maxpart > 0)
			key_parts(&l, c->row.addr.key, parts, pnulls);
		for (int k = 0; k < l.ncols; k++)
		{
			const SfTypedColumn *tc = &l.cols[k];
			Datum	   *v = &cols[k].values[nput];
			bool	   *isnull = &cols[k].nulls[nput];
			int64		bound;

			switch (tc->source)
			{
				case TS_KEY:
					*v = keys[i];
					break;
				case TS_PART:
					*isnull = pnulls[tc->arg];
					if (!*isnull)
						*v = InputFunctionCall((FmgrInfo *) &tc->in,
											   parts[tc->arg],
											   tc->ioparam, -1);
					break;
				case TS_START:
				case TS_END:
					bound = tc->source == TS_START ? c->row.addr.start : c->row.addr.end;
					if (unit_us <= 0)
						*isnull = true;
					else
						*v = sf_time_ts(bound, unit_us, isnull);
					break;
				case TS_AGG:
					*v = sf_agg_typed(p->def.measures, agg, tc->member,
									  tc->type, isnull);
					break;
				case TS_FINAL:
					*v = BoolGetDatum(c->op == SF_FINAL ||
									  c->row.addr.end < final_below);
					break;
				case TS_SEQ:
					*v = Int64GetDatum(c->seq);
					break;
				case TS_EPOCH:
					*v = Int64GetDatum(epoch);
					break;
				case TS_START_U:
					*v = Int64GetDatum(c->row.addr.start);
					break;
				case TS_END_U:
					*v = Int64GetDatum(c->row.addr.end);
					break;
				case TS_COUNT:
					*v = Int64GetDatum(agg->count);
					break;
				case TS_SUM:
					/* rows of a call often share their sum: one numeric */
					if (!have_sum || agg->sum != last_sum)
					{
						last_sum = agg->sum;
						last_sum_datum = sf_int128_numeric(agg->sum);
						have_sum = true;
					}
					*v = last_sum_datum;
					break;
				case TS_MIN:
					*v = Int64GetDatum(agg->min);
					break;
				case TS_MAX:
					*v = Int64GetDatum(agg->max);
					break;
			}
		}
		nput++;
	}
	if (nput > 0 && !sf_bulk_insert_rel(t->relid, cols, l.ncols, nput))
		typed_insert_statement(t->relid, &l, cols, nput);
	table_close(rel, AccessShareLock);
}

/*
 * 'update' mode: mark final the rows whose end is below below (watermark
 * - lateness)
 */
void
sf_sink_typed_final(SfSinkTyped *t, int64 below)
{
	Datum		arg = Int64GetDatum(below);

	if (t->final_plan == NULL)
	{
		Oid			type = INT8OID;
		char	   *sql = psprintf("UPDATE %s AS r SET final = true "
								   "WHERE NOT r.final AND r.end_u OPERATOR(pg_catalog.<) $1",
								   typed_table_name(t->relid));
		SPIPlanPtr	plan = SPI_prepare(sql, 1, &type);

		if (plan == NULL || SPI_keepplan(plan) != 0)
			elog(ERROR, "streamforge: could not prepare \"%s\"", sql);
		t->final_plan = plan;
	}
	if (SPI_execute_plan(t->final_plan, &arg, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "streamforge: could not mark the results of an aggregate final");
}

/* Free the kept plans (the configuration cache is reloaded) */
void
sf_sink_typed_forget(SfSinkTyped *t)
{
	if (t->delete_plan != NULL)
		SPI_freeplan(t->delete_plan);
	if (t->final_plan != NULL)
		SPI_freeplan(t->final_plan);
	if (t->max_plan != NULL)
		SPI_freeplan(t->max_plan);
	t->delete_plan = NULL;
	t->final_plan = NULL;
	t->max_plan = NULL;
	sf_sink_top_forget(t->top);
	t->top = NULL;
}
