/*
 * aggmap.c: a subscription that feeds an aggregate made by
 * streamforge.create_aggregate (subscribe_aggregate, issue 43 items 1-2).
 *
 * Such a subscription's mapping is {"columns": {column: field, ...},
 * "event_id": field, "partition_prefix": text}: each message becomes a row
 * typed as the aggregate's source table (new_rows), and the aggregate's
 * own attachment (the arguments of the INSERT trigger that
 * create_aggregate made with streamforge.attach) turns it into a delivery
 * exactly as an INSERT of that row would: the same WHERE (filter), key,
 * event time and value or measures expressions, under the same settings
 * (the worker sets them at start).  Only the partition and the offset
 * differ: Kafka partition n is pipeline partition prefix || n, at the
 * message's Kafka offset.
 *
 * The batch statement returns, for each element in order, its delivery
 * or NULL when the row does not match the filter.  A message that does not
 * match consumes its offset without an event, as a skipped message does
 * (worker.c): its offset is delivered the next matching message of the
 * partition (then a duplicate at its own offset, a no-op), and the
 * trailing non-matching offsets of a partition stay pending.
 *
 * The field functions (field, json_field, csv_field) convert a message's
 * value to a column's type in C with the type's input function; an error
 * names the field, and a missing field is an error that names it.  A
 * number for a timestamp column is a count of the pipeline's units since
 * the Unix epoch (milliseconds for kafka_timestamp).
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "datatype/timestamp.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "parser/parse_coerce.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"

#include "kafka.h"

PG_FUNCTION_INFO_V1(sfk_field);
PG_FUNCTION_INFO_V1(sfk_json_field);
PG_FUNCTION_INFO_V1(sfk_csv_field);

/* ---------------------------------------------------------------- */
/* The field functions                                                */
/* ---------------------------------------------------------------- */

typedef struct FieldCache
{
	Oid			type;
	FmgrInfo	in;
	Oid			ioparam;
} FieldCache;

static bool
all_digits(const char *s)
{
	const char *p = s;

	while (*p == ' ')
		p++;
	if (*p == '-')
		p++;
	if (*p < '0' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9')
		p++;
	while (*p == ' ')
		p++;
	return *p == '\0';
}

/*
 * The value s of field as type (in, ioparam: its input function): a number
 * of units for a timestamp, else the input function, an error naming the
 * field.  Shared by the field functions and the worker (aggrow.c).
 */
Datum
sfk_convert_field(Oid type, FmgrInfo *in, Oid ioparam, const char *s,
				  const char *field, int64 unit_us)
{
	MemoryContext cxt = CurrentMemoryContext;
	Datum		result = (Datum) 0;

	if ((type == TIMESTAMPTZOID || type == TIMESTAMPOID) && all_digits(s))
	{
		int64		n;
		int128		us;

		if (unit_us <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_DATETIME_FORMAT),
					 errmsg("field \"%s\": \"%s\" is a number, not a timestamp", field, s),
					 errdetail("The pipeline has no time unit to read a number of units with.")));
		n = DatumGetInt64(DirectFunctionCall1(int8in, CStringGetDatum(s)));
		us = (int128) n * unit_us - (int128) ((POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY);
		if (us < (int128) MIN_TIMESTAMP || us >= (int128) END_TIMESTAMP)
			ereport(ERROR,
					(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
					 errmsg("field \"%s\": time %s is out of range", field, s)));
		return Int64GetDatum((int64) us);
	}
	PG_TRY();
	{
		result = InputFunctionCall(in, (char *) s, ioparam, -1);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		edata->message = psprintf("field \"%s\": %s", field, edata->message);
		ReThrowError(edata);
	}
	PG_END_TRY();
	return result;
}

/* The value s of field as the function's result type. */
static Datum
convert(FunctionCallInfo fcinfo, const char *s, const char *field, int64 unit_us)
{
	Oid			type = get_fn_expr_rettype(fcinfo->flinfo);
	FieldCache *fc = (FieldCache *) fcinfo->flinfo->fn_extra;

	if (!OidIsValid(type))
		elog(ERROR, "could not determine the type of field \"%s\"", field);
	if (fc == NULL || fc->type != type)
	{
		Oid			infunc;

		fc = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(FieldCache));
		getTypeInputInfo(type, &infunc, &fc->ioparam);
		fmgr_info_cxt(infunc, &fc->in, fcinfo->flinfo->fn_mcxt);
		fc->type = type;
		fcinfo->flinfo->fn_extra = fc;
	}
	return sfk_convert_field(type, &fc->in, fc->ioparam, s, field, unit_us);
}

/*
 * streamforge_kafka.field(value text, field text, unit_us bigint,
 * template anyelement): value as the type of template (NULL stays NULL).
 */
Datum
sfk_field(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_NULL();
	return convert(fcinfo, text_to_cstring(PG_GETARG_TEXT_PP(0)),
				   text_to_cstring(PG_GETARG_TEXT_PP(1)),
				   PG_ARGISNULL(2) ? 0 : PG_GETARG_INT64(2));
}

static void
missing(const char *field)
{
	ereport(ERROR,
			(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
			 errmsg("field \"%s\" is missing from the message", field)));
}

/*
 * The member at path (n keys) of j as text, NULL for a JSON null: the
 * message must be an object, and a missing member is an error naming
 * field.  Shared by json_field and the worker (aggrow.c).
 */
char *
sfk_json_lookup(Jsonb *j, const char *const *path, int n, const char *field)
{
	JsonbContainer *c = &j->root;
	JsonbValue	v;
	JsonbValue *found = NULL;
	int			i;

	if (JB_ROOT_IS_SCALAR(j) || !JB_ROOT_IS_OBJECT(j))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the message is not a JSON object"),
				 errdetail("Field \"%s\" is read from a JSON object.", field)));
	for (i = 0; i < n; i++)
	{
		found = getKeyJsonValueFromContainer(c, path[i], strlen(path[i]), &v);
		if (found == NULL)
			missing(field);
		if (i < n - 1)
		{
			if (found->type != jbvBinary || !JsonContainerIsObject(found->val.binary.data))
				missing(field);
			c = found->val.binary.data;
		}
	}
	if (found == NULL)
		missing(field);
	switch (found->type)
	{
		case jbvNull:
			return NULL;
		case jbvString:
			return pnstrdup(found->val.string.val, found->val.string.len);
		case jbvNumeric:
			return DatumGetCString(DirectFunctionCall1(numeric_out,
													   NumericGetDatum(found->val.numeric)));
		case jbvBool:
			return found->val.boolean ? "true" : "false";
		case jbvBinary:
			return JsonbToCString(NULL, found->val.binary.data, found->val.binary.len);
		default:
			elog(ERROR, "unexpected JSON value of field \"%s\"", field);
	}
	return NULL;
}

/*
 * streamforge_kafka.json_field(j jsonb, path text[], field text, unit_us
 * bigint, template anyelement): the member at path of j as the type of
 * template; a JSON null is NULL, a missing member an error naming field.
 */
Datum
sfk_json_field(PG_FUNCTION_ARGS)
{
	ArrayType  *path;
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	int			i;
	char	   *field;
	char	  **keys;
	char	   *s;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		PG_RETURN_NULL();
	path = PG_GETARG_ARRAYTYPE_P(1);
	field = text_to_cstring(PG_GETARG_TEXT_PP(2));
	deconstruct_array(path, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	keys = palloc(sizeof(char *) * Max(n, 1));
	for (i = 0; i < n; i++)
		keys[i] = TextDatumGetCString(elems[i]);
	s = sfk_json_lookup(PG_GETARG_JSONB_P(0), (const char *const *) keys, n, field);
	if (s == NULL)
		PG_RETURN_NULL();
	return convert(fcinfo, s, field, PG_ARGISNULL(3) ? 0 : PG_GETARG_INT64(3));
}

/*
 * streamforge_kafka.csv_field(c text[], n integer, field text, unit_us
 * bigint, template anyelement): column n (from 1) of a CSV line as the type
 * of template; an empty column is NULL but for a text type; a line with
 * fewer columns is an error naming field.
 */
Datum
sfk_csv_field(PG_FUNCTION_ARGS)
{
	ArrayType  *a;
	int32		col;
	char	   *field;
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	char	   *s;
	Oid			type;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		PG_RETURN_NULL();
	a = PG_GETARG_ARRAYTYPE_P(0);
	col = PG_GETARG_INT32(1);
	field = text_to_cstring(PG_GETARG_TEXT_PP(2));
	deconstruct_array(a, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	if (col < 1 || col > n || nulls[col - 1])
		missing(field);
	s = TextDatumGetCString(elems[col - 1]);
	type = get_fn_expr_rettype(fcinfo->flinfo);
	if (s[0] == '\0' && TypeCategory(type) != TYPCATEGORY_STRING)
		PG_RETURN_NULL();
	return convert(fcinfo, s, field, PG_ARGISNULL(3) ? 0 : PG_GETARG_INT64(3));
}

/* ---------------------------------------------------------------- */
/* The statement                                                      */
/* ---------------------------------------------------------------- */

typedef struct Column
{
	char	   *name;
	char	   *type;			/* format_type */
	Oid			typid;
	bool		mapped;
	int32		typmod;
} Column;

/* The arguments of a trigger (pg_trigger.tgargs). */
static char **
split_tgargs(bytea *b, int *n)
{
	char	   *p = VARDATA_ANY(b);
	char	   *end = p + VARSIZE_ANY_EXHDR(b);
	char	  **args = palloc(sizeof(char *) * 16);

	*n = 0;
	while (p < end && *n < 16)
	{
		char	   *z = memchr(p, '\0', end - p);

		if (z == NULL)
			break;
		args[(*n)++] = pstrdup(p);
		p = z + 1;
	}
	return args;
}

/*
 * The pipeline partition the table's rows go to when the attachment's
 * partition expression is a constant, ('name')::pg_catalog.text as attach()
 * writes it, or NULL.
 */
static char *
table_partition_of(const char *expr)
{
	const char *head = "('";
	const char *tail = "')::pg_catalog.text";
	size_t		len = strlen(expr);
	StringInfoData buf;
	const char *p;
	const char *end;

	if (len < strlen(head) + strlen(tail) || strncmp(expr, head, 2) != 0 ||
		strcmp(expr + len - strlen(tail), tail) != 0)
		return NULL;
	initStringInfo(&buf);
	end = expr + len - strlen(tail);
	for (p = expr + 2; p < end; p++)
	{
		if (*p == '\'')
		{
			if (p + 1 < end && p[1] == '\'')
				p++;
			else
				return NULL;
		}
		appendStringInfoChar(&buf, *p);
	}
	return buf.data;
}

/* Whether expression expr names the column ident (a quoted identifier). */
static bool
names_column(const char *expr, const char *ident)
{
	size_t		len = strlen(ident);
	const char *p = expr;

	while ((p = strstr(p, ident)) != NULL)
	{
		char		before = p == expr ? ' ' : p[-1];
		char		after = p[len];

		if (!(isalnum((unsigned char) before) || before == '_' || before == '"' ||
			  before == '$') &&
			!(isalnum((unsigned char) after) || after == '_' || after == '"' ||
			  after == '$'))
			return true;
		p += len;
	}
	return false;
}

/* The SQL of one field spec, as the type of column col. */
static void
field_sql(StringInfo buf, const char *format, Column *col, JsonbValue *v,
		  const char *topic, int64 unit_us)
{
	const char *tmpl = psprintf("NULL::%s", col->type);

	if (v->type == jbvString)
	{
		char	   *s = pnstrdup(v->val.string.val, v->val.string.len);
		char	   *lit = quote_literal_cstr(s);

		if (strcmp(s, "kafka_key") == 0)
			appendStringInfo(buf, "streamforge_kafka.field(pg_catalog.convert_from(m.sfk_k, 'UTF8'), %s, 0, %s)",
							 lit, tmpl);
		else if (strcmp(s, "kafka_timestamp") == 0)
			appendStringInfo(buf, "streamforge_kafka.field(m.sfk_ts::pg_catalog.text, %s, 1000, %s)",
							 lit, tmpl);
		else if (strcmp(s, "kafka_offset") == 0)
			appendStringInfo(buf, "streamforge_kafka.field(m.sfk_ko::pg_catalog.text, %s, 0, %s)",
							 lit, tmpl);
		else if (strcmp(s, "kafka_partition") == 0)
			appendStringInfo(buf, "streamforge_kafka.field(m.sfk_kp::pg_catalog.text, %s, 0, %s)",
							 lit, tmpl);
		else if (strcmp(s, "kafka_id") == 0)
			appendStringInfo(buf, "streamforge_kafka.field(%s OPERATOR(pg_catalog.||) m.sfk_kp::pg_catalog.text "
							 "OPERATOR(pg_catalog.||) '/' OPERATOR(pg_catalog.||) m.sfk_ko::pg_catalog.text, %s, 0, %s)",
							 quote_literal_cstr(psprintf("%s/", topic)), lit, tmpl);
		else if (strcmp(s, "payload") == 0)
			appendStringInfo(buf, "streamforge_kafka.field(x.sfk_payload, %s, " INT64_FORMAT ", %s)",
							 lit, unit_us, tmpl);
		else if (strcmp(format, "json") == 0)
		{
			/* a key, or a path of keys $.a.b */
			StringInfoData arr;
			char	   *p = s;
			char	   *dot;

			if (p[0] == '$')
			{
				if (p[1] != '.' || p[2] == '\0')
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("field \"%s\" of column \"%s\" is not a path of keys", s, col->name),
							 errhint("A JSON field is a key (\"page\") or a path of keys (\"$.meta.page\").")));
				p += 2;
			}
			initStringInfo(&arr);
			appendStringInfoString(&arr, "ARRAY[");
			for (;;)
			{
				dot = s[0] == '$' ? strchr(p, '.') : NULL;
				if (dot)
					*dot = '\0';
				if (*p == '\0')
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("field of column \"%s\" has an empty key", col->name)));
				appendStringInfoString(&arr, quote_literal_cstr(p));
				if (!dot)
					break;
				appendStringInfoString(&arr, ", ");
				p = dot + 1;
			}
			appendStringInfoString(&arr, "]::pg_catalog.text[]");
			appendStringInfo(buf, "streamforge_kafka.json_field(x.sfk_j, %s, %s, " INT64_FORMAT ", %s)",
							 arr.data, lit, unit_us, tmpl);
		}
		else
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("field of column \"%s\" is not valid for format \"%s\": \"%s\"",
							col->name, format, s),
					 errhint("A field is kafka_key, kafka_timestamp, kafka_offset, kafka_partition, kafka_id, payload, a JSON key or path of keys (json) or a column number (csv).")));
		return;
	}
	if (v->type == jbvNumeric && strcmp(format, "csv") == 0)
	{
		int32		n = DatumGetInt32(DirectFunctionCall1(numeric_int4,
														  NumericGetDatum(v->val.numeric)));

		if (n < 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("CSV column %d of column \"%s\" is out of range", n, col->name),
					 errdetail("CSV columns are numbered from 1.")));
		appendStringInfo(buf, "streamforge_kafka.csv_field(x.sfk_c, %d, %s, " INT64_FORMAT ", %s)",
						 n, quote_literal_cstr(psprintf("column %d", n)), unit_us, tmpl);
		return;
	}
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("field of column \"%s\" must be a string%s", col->name,
					strcmp(format, "csv") == 0 ? " or a column number" : "")));
}

/* The field of a column, as field_sql read it (already checked). */
static void
agg_field_of(SfkAggCol *c, JsonbValue *v)
{
	if (v->type == jbvNumeric)
	{
		c->csvcol = DatumGetInt32(DirectFunctionCall1(numeric_int4,
													  NumericGetDatum(v->val.numeric)));
		c->spec = psprintf("column %d", c->csvcol);
	}
	else
		c->spec = pnstrdup(v->val.string.val, v->val.string.len);
}

/*
 * The batch statement of a subscription of format and mapping to the
 * aggregate pipeline (SPI connected).  Checks the mapping against the
 * aggregate's table (22023 names what is wrong); *measures tells which
 * ingest function takes its deliveries.
 */
char *
sfk_build_aggregate_sql(const char *pipeline, const char *format, Jsonb *mapping,
						const char *topic, int64 unit_us, bool *measures,
						char **table_partition, SfkAggInfo *info)
{
	Datum		arg = CStringGetTextDatum(pipeline);
	Oid			type = TEXTOID;
	Oid			relid;
	bool		isnull;
	Datum		d;
	char	  **args;
	int			nargs;
	Column	   *cols;
	int			ncols;
	uint64		r;
	JsonbValue	v;
	JsonbValue	colsv;
	JsonbIterator *it;
	JsonbIteratorToken tok;
	StringInfoData buf;
	char	   *id_expr;
	char	   *filter;
	int			i;

	if (strcmp(format, "json") != 0 && strcmp(format, "csv") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("format \"%s\" cannot feed an aggregate", format),
				 errhint("The formats of subscribe_aggregate are json and csv.")));
	if (!JB_ROOT_IS_OBJECT(mapping) || JB_ROOT_IS_SCALAR(mapping) ||
		getKeyJsonValueFromContainer(&mapping->root, "columns", 7, &colsv) == NULL ||
		colsv.type != jbvBinary || !JsonContainerIsObject(colsv.val.binary.data))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the columns of the mapping must be a JSON object")));

	/* the aggregate's table, and its attachment's trigger arguments */
	if (SPI_execute_with_args("SELECT a.source::pg_catalog.oid FROM streamforge.aggregates AS a "
							  "WHERE a.name OPERATOR(pg_catalog.=) $1",
							  1, &type, &arg, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the aggregates");
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("\"%s\" is not an aggregate made by streamforge.create_aggregate", pipeline),
				 errhint("subscribe_aggregate feeds an aggregate; subscribe feeds a pipeline.")));
	relid = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	{
		Datum		targs[2];
		Oid			ttypes[2] = {OIDOID, TEXTOID};

		targs[0] = ObjectIdGetDatum(relid);
		targs[1] = arg;
		/*
		 * The trigger attach() made, as recompute_plan reads it
		 * (69_recompute.sql): its name, its function, its pipeline, and
		 * checked by attach_check as each insert checks it.  Its
		 * expressions run as the table's owner (admin.c): a look-alike of
		 * another function or pipeline is not read.
		 */
		if (SPI_execute_with_args("SELECT t.tgargs, streamforge_internal.attach_check(t.tgrelid, t.tgname, a.args, true) "
								  "FROM pg_catalog.pg_trigger AS t, "
								  "LATERAL (SELECT streamforge_internal.trigger_args(t.tgargs) AS args) AS a "
								  "WHERE t.tgrelid OPERATOR(pg_catalog.=) $1 "
								  "AND t.tgname OPERATOR(pg_catalog.=) streamforge_internal.attach_trigger_name($2) "
								  "AND t.tgfoid OPERATOR(pg_catalog.=) 'streamforge_internal.attached_insert()'::pg_catalog.regprocedure "
								  "AND a.args[1] OPERATOR(pg_catalog.=) $2 "
								  "AND a.args[7] OPERATOR(pg_catalog.=) streamforge_internal.pipeline_id($2)::pg_catalog.text",
								  2, ttypes, targs, NULL, false, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not read the attachment");
	}
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("aggregate \"%s\" has no attachment to its table", pipeline)));
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	args = split_tgargs(DatumGetByteaPP(d), &nargs);
	if (nargs != 9 && nargs != 10 && !(nargs == 11 && strcmp(args[10], "measures") == 0))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the attachment of aggregate \"%s\" has a form subscribe_aggregate cannot read", pipeline)));
	*measures = nargs == 11;
	if (table_partition)
		*table_partition = table_partition_of(args[1]);
	filter = nargs >= 10 && args[9][0] != '\0' ? args[9] : NULL;

	/* the table's columns */
	{
		Datum		a = ObjectIdGetDatum(relid);
		Oid			t = OIDOID;

		if (SPI_execute_with_args("SELECT a.attname::pg_catalog.text, "
								  "pg_catalog.format_type(a.atttypid, a.atttypmod), a.atttypid, a.atttypmod "
								  "FROM pg_catalog.pg_attribute AS a "
								  "WHERE a.attrelid OPERATOR(pg_catalog.=) $1 "
								  "AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped "
								  "ORDER BY a.attnum",
								  1, &t, &a, NULL, false, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not read the columns");
	}
	ncols = (int) SPI_processed;
	cols = palloc0(sizeof(Column) * Max(ncols, 1));
	for (r = 0; r < SPI_processed; r++)
	{
		cols[r].name = SPI_getvalue(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 1);
		cols[r].type = SPI_getvalue(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 2);
		cols[r].typid = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[r],
													   SPI_tuptable->tupdesc, 3, &isnull));
		cols[r].typmod = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[r],
													 SPI_tuptable->tupdesc, 4, &isnull));
	}

	/* no unknown key of the mapping, no unknown column */
	it = JsonbIteratorInit(&mapping->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
		if (tok == WJB_KEY)
		{
			char	   *k = pnstrdup(v.val.string.val, v.val.string.len);

			if (strcmp(k, "columns") != 0 && strcmp(k, "event_id") != 0 &&
				strcmp(k, "partition_prefix") != 0)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("unknown key \"%s\" in the mapping of an aggregate", k)));
		}
	it = JsonbIteratorInit(colsv.val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
		if (tok == WJB_KEY)
		{
			char	   *k = pnstrdup(v.val.string.val, v.val.string.len);

			for (i = 0; i < ncols; i++)
				if (strcmp(cols[i].name, k) == 0)
					break;
			if (i == ncols)
				ereport(ERROR,
						(errcode(ERRCODE_UNDEFINED_COLUMN),
						 errmsg("table %s of aggregate \"%s\" has no column \"%s\"",
								get_rel_name(relid), pipeline, k)));
			cols[i].mapped = true;
		}

	/*
	 * Every column the attachment reads is mapped, but those only its event
	 * id reads: without them the event id is topic/partition/offset.
	 */
	id_expr = args[2];
	for (i = 0; i < ncols; i++)
	{
		const char *ident = quote_identifier(cols[i].name);
		bool		other;

		if (cols[i].mapped)
			continue;
		other = names_column(args[3], ident) || names_column(args[4], ident) ||
			names_column(args[5], ident) || (filter && names_column(filter, ident));
		if (other)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("the mapping leaves out column \"%s\", which aggregate \"%s\" reads",
							cols[i].name, pipeline),
					 errhint("Map it to a field of the message: \"columns\": {\"%s\": ...}.", cols[i].name)));
		if (names_column(id_expr, ident))
			id_expr = NULL;
	}

	initStringInfo(&buf);
	appendStringInfoString(&buf, "SELECT CASE WHEN ");
	if (filter)
		appendStringInfo(&buf, "COALESCE((%s), false)", filter);
	else
		appendStringInfoString(&buf, "true");
	appendStringInfoString(&buf, " THEN ROW(m.sfk_pn, m.sfk_po, ");
	if (getKeyJsonValueFromContainer(&mapping->root, "event_id", 8, &v) != NULL)
	{
		Column		c = {"event_id", "pg_catalog.text", TEXTOID, true};

		field_sql(&buf, format, &c, &v, topic, unit_us);
	}
	else if (id_expr)
		appendStringInfoString(&buf, id_expr);
	else
		appendStringInfo(&buf, "%s OPERATOR(pg_catalog.||) m.sfk_kp::pg_catalog.text "
						 "OPERATOR(pg_catalog.||) '/' OPERATOR(pg_catalog.||) m.sfk_ko::pg_catalog.text",
						 quote_literal_cstr(psprintf("%s/", topic)));
	appendStringInfo(&buf, ", %s, %s, %s)::streamforge.%s END ",
					 args[3], args[4], args[5],
					 *measures ? "measures_delivery" : "delivery");
	appendStringInfoString(&buf,
						   "FROM ROWS FROM (pg_catalog.unnest($2::pg_catalog.text[]), "
						   "pg_catalog.unnest($3::pg_catalog.int8[]), "
						   "pg_catalog.unnest($4::pg_catalog.bytea[]), "
						   "pg_catalog.unnest($5::pg_catalog.bytea[]), "
						   "pg_catalog.unnest($6::pg_catalog.int8[]), "
						   "pg_catalog.unnest($7::pg_catalog.int8[]), "
						   "pg_catalog.unnest($8::pg_catalog.int4[])) WITH ORDINALITY "
						   "AS m(sfk_pn, sfk_po, sfk_k, sfk_p, sfk_ts, sfk_ko, sfk_kp, sfk_n) "
						   "CROSS JOIN LATERAL (SELECT y.sfk_payload, ");
	if (strcmp(format, "json") == 0)
		appendStringInfoString(&buf, "y.sfk_payload::pg_catalog.jsonb AS sfk_j");
	else
		appendStringInfoString(&buf, "pg_catalog.string_to_array(y.sfk_payload, ',') AS sfk_c");
	appendStringInfoString(&buf, " FROM (SELECT pg_catalog.convert_from(m.sfk_p, 'UTF8') AS sfk_payload) AS y) AS x "
						   "CROSS JOIN LATERAL (SELECT ");
	for (i = 0; i < ncols; i++)
	{
		if (i > 0)
			appendStringInfoString(&buf, ", ");
		if (cols[i].mapped)
		{
			(void) getKeyJsonValueFromContainer(colsv.val.binary.data, cols[i].name,
												strlen(cols[i].name), &v);
			field_sql(&buf, format, &cols[i], &v, topic, unit_us);
			appendStringInfo(&buf, "::%s", cols[i].type);
		}
		else
			appendStringInfo(&buf, "NULL::%s", cols[i].type);
		appendStringInfo(&buf, " AS %s", quote_identifier(cols[i].name));
	}
	if (ncols == 0)
		appendStringInfoString(&buf, "1 AS sfk_none");
	appendStringInfoString(&buf, ") AS new_rows ORDER BY m.sfk_n");
	if (info)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		memset(info, 0, sizeof(*info));
		info->relid = relid;
		info->measures = *measures;
		info->filter = filter ? pstrdup(filter) : NULL;
		info->key_expr = pstrdup(args[3]);
		info->time_expr = pstrdup(args[4]);
		info->value_expr = pstrdup(args[5]);
		info->ncols = ncols;
		info->cols = palloc0(sizeof(SfkAggCol) * Max(ncols, 1));
		for (i = 0; i < ncols; i++)
		{
			SfkAggCol  *c = &info->cols[i];

			c->name = pstrdup(cols[i].name);
			c->typid = cols[i].typid;
			c->typmod = cols[i].typmod;
			c->mapped = cols[i].mapped;
			if (c->mapped)
			{
				(void) getKeyJsonValueFromContainer(colsv.val.binary.data, cols[i].name,
													strlen(cols[i].name), &v);
				agg_field_of(c, &v);
			}
		}
		if (getKeyJsonValueFromContainer(&mapping->root, "event_id", 8, &v) != NULL)
		{
			info->idcol.name = "event_id";
			info->idcol.typid = TEXTOID;
			info->idcol.typmod = -1;
			info->idcol.mapped = true;
			agg_field_of(&info->idcol, &v);
		}
		else if (id_expr)
			info->id_expr = pstrdup(id_expr);
		MemoryContextSwitchTo(old);
	}
	return buf.data;
}

/*
 * Runs the statement of an aggregate subscription over the elements, then
 * ingests the deliveries of the rows that match: a non-matching element's
 * offset is delivered by the next matching element of its Kafka partition
 * (its copy at that offset), and trailing[p] counts the non-matching
 * offsets left at the end of Kafka partition p (pending).
 */
void
sfk_run_aggregate(SPIPlanPtr plan, Datum *args, Oid relid, const char *pipeline,
				  bool measures, int nparts, int32 *kparts, int *trailing)
{
	SfkTableOwner saved;
	int			ret;

	/* the aggregate's expressions, as its table's owner (admin.c) */
	sfk_become_table_owner(relid, &saved);
	ret = SPI_execute_plan(plan, args, NULL, false, 0);
	sfk_restore_table_owner(&saved);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "the mapping statement of an aggregate subscription failed");
	sfk_aggregate_deliver(pipeline, measures, nparts, kparts, trailing);
}

/*
 * Ingests the deliveries of the rows of SPI_tuptable (one per element,
 * NULL for a row that does not match), as sfk_run_aggregate says.
 */
void
sfk_aggregate_deliver(const char *pipeline, bool measures, int nparts,
					  int32 *kparts, int *trailing)
{
	uint64		n = SPI_processed;
	Datum	   *rows = palloc(sizeof(Datum) * Max(n, 1));
	bool	   *nulls = palloc(sizeof(bool) * Max(n, 1));
	uint64		i;

	for (i = 0; i < n; i++)
		rows[i] = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &nulls[i]);
	sfk_aggregate_deliver_rows(pipeline, measures, nparts, kparts, trailing,
							   rows, nulls, (int) n);
}

/* Whether a stored mapping is an aggregate subscription's. */
bool
sfk_is_aggregate_mapping(Jsonb *mapping)
{
	JsonbValue	v;

	return JB_ROOT_IS_OBJECT(mapping) && !JB_ROOT_IS_SCALAR(mapping) &&
		getKeyJsonValueFromContainer(&mapping->root, "columns", 7, &v) != NULL;
}

/*
 * A duration argument (what: its name) in the units of pipeline (SPI
 * connected): 22023 when the pipeline has no time unit or the interval is
 * negative or has months; rounded down to a whole number of units.
 */
int64
sfk_interval_units(const char *pipeline, Interval *iv, const char *what)
{
	Datum		arg = CStringGetTextDatum(pipeline);
	Oid			type = TEXTOID;
	bool		isnull;
	Datum		unit;
	int64		unit_us;
	int64		us;

	if (iv->month == 0 && iv->day == 0 && iv->time == 0)
		return 0;
	if (SPI_execute_with_args("SELECT streamforge.time_unit($1)", 1, &type, &arg,
							  NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the time unit");
	unit = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is an interval but pipeline \"%s\" has no time unit", what, pipeline),
				 errhint("Pass %s as a number of the pipeline's units.", what)));
	unit_us = sfk_unit_us(DatumGetIntervalP(unit));
	if (iv->month != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be in months", what)));
	us = iv->time + (int64) iv->day * USECS_PER_DAY;
	if (us < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be negative", what)));
	return unit_us > 0 ? us / unit_us : us;
}
