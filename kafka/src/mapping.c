/*
 * mapping.c: a subscription's mapping as one SQL statement.
 *
 * A worker delivers a batch with one statement: the batch's messages come
 * in as arrays (unnest), each message's fields are mapped by SQL
 * expressions (JSON paths, CSV columns, the Kafka key, offset or
 * timestamp), and streamforge.ingest_batch() takes the deliveries in
 * array order.  A message the expressions cannot map raises an error
 * (invalid JSON, a missing field, a value that is no bigint); the worker
 * then maps the batch message by message to find it (worker.c).
 *
 * Parameters of the statement:
 *   $1 text     the pipeline
 *   $2 text[]   the pipeline partition of each element
 *   $3 int8[]   the pipeline offset of each element
 *   $4 bytea[]  Kafka keys          $5 bytea[]  payloads
 *   $6 int8[]   Kafka timestamps (milliseconds since the Unix epoch)
 *   $7 int8[]   Kafka offsets       $8 int4[]   Kafka partitions
 * It returns the number of changes.
 */
#include "postgres.h"

#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"

#include "kafka.h"

PG_FUNCTION_INFO_V1(sfk_mapping_sql);
PG_FUNCTION_INFO_V1(sfk_missing_field);

static const char *const field_names[] = {
	"event_id", "key", "event_time", "value", "partition_prefix", NULL
};

/* The time unit in microseconds, 0 for none. */
int64
sfk_unit_us(Interval *unit)
{
	if (unit == NULL)
		return 0;
	if (unit->month != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a time unit of months cannot convert Kafka timestamps")));
	return unit->time + (int64) unit->day * USECS_PER_DAY;
}

/* A Kafka timestamp (milliseconds) in the pipeline's units. */
int64
sfk_ms_to_units(int64 ms, int64 unit_us)
{
	int128		us = (int128) ms * 1000;
	int128		q;

	if (unit_us <= 0)
		return ms;
	q = us / unit_us;
	if (us % unit_us != 0 && us < 0)
		q--;
	return (int64) q;
}

/* The SQL expression (text) of one field spec. */
static void
field_expr(StringInfo buf, const char *format, const char *field,
		   JsonbValue *v, const char *topic)
{
	if (v->type == jbvString)
	{
		char	   *s = pnstrdup(v->val.string.val, v->val.string.len);

		if (strcmp(s, "kafka_key") == 0)
			appendStringInfoString(buf, "pg_catalog.convert_from(m.k, 'UTF8')");
		else if (strcmp(s, "kafka_timestamp") == 0)
			appendStringInfoString(buf, "m.ts::pg_catalog.text");
		else if (strcmp(s, "kafka_offset") == 0)
			appendStringInfoString(buf, "m.ko::pg_catalog.text");
		else if (strcmp(s, "kafka_partition") == 0)
			appendStringInfoString(buf, "m.kp::pg_catalog.text");
		else if (strcmp(s, "kafka_id") == 0)
			appendStringInfo(buf, "%s OPERATOR(pg_catalog.||) m.kp::pg_catalog.text "
							 "OPERATOR(pg_catalog.||) '/' OPERATOR(pg_catalog.||) m.ko::pg_catalog.text",
							 quote_literal_cstr(psprintf("%s/", topic)));
		else if (strcmp(s, "payload") == 0)
			appendStringInfoString(buf, "x.payload");
		else if (strcmp(format, "json") == 0 && s[0] == '$')
		{
			/* checks the path now */
			(void) DirectFunctionCall1(jsonpath_in, CStringGetDatum(s));
			appendStringInfo(buf, "COALESCE(pg_catalog.jsonb_path_query_first(x.j, %s::pg_catalog.jsonpath) "
							 "OPERATOR(pg_catalog.#>>) '{}'::pg_catalog.text[], "
							 "streamforge_kafka.missing_field(%s, %s))",
							 quote_literal_cstr(s), quote_literal_cstr(field), quote_literal_cstr(s));
		}
		else if (strcmp(format, "json") == 0)
			appendStringInfo(buf, "COALESCE(x.j OPERATOR(pg_catalog.->>) %s, "
							 "streamforge_kafka.missing_field(%s, %s))", quote_literal_cstr(s),
							 quote_literal_cstr(field), quote_literal_cstr(s));
		else
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("mapping of \"%s\" is not valid for format \"%s\": \"%s\"",
							field, format, s),
					 errhint("A field is kafka_key, kafka_timestamp, kafka_offset, kafka_partition, kafka_id, payload, a JSON path or key (json) or a column number (csv).")));
		return;
	}
	if (v->type == jbvNumeric && strcmp(format, "csv") == 0)
	{
		int32		col = DatumGetInt32(DirectFunctionCall1(numeric_int4,
															NumericGetDatum(v->val.numeric)));

		if (col < 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("column %d of \"%s\" is out of range", col, field),
					 errdetail("CSV columns are numbered from 1.")));
		appendStringInfo(buf, "COALESCE(x.c[%d], streamforge_kafka.missing_field(%s, %s))", col,
						 quote_literal_cstr(field), quote_literal_cstr(psprintf("column %d", col)));
		return;
	}
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("mapping of \"%s\" must be a string%s", field,
					strcmp(format, "csv") == 0 ? " or a column number" : "")));
}

static bool
get_field(Jsonb *mapping, const char *name, JsonbValue *out)
{
	return getKeyJsonValueFromContainer(&mapping->root, name, strlen(name), out) != NULL;
}

/* Kafka timestamps in units, as SQL over the column "col" (int8). */
static void
ms_expr(StringInfo buf, const char *col, int64 unit_us)
{
	if (unit_us <= 0)
		appendStringInfoString(buf, col);
	else
		appendStringInfo(buf, "(%s OPERATOR(pg_catalog.*) 1000) OPERATOR(pg_catalog./) "
						 INT64_FORMAT "::pg_catalog.int8", col, unit_us);
}

char *
sfk_build_mapping_sql(const char *format, Jsonb *mapping, const char *topic,
					  int64 unit_us)
{
	StringInfoData buf;
	JsonbValue	v;
	JsonbIterator *it;
	JsonbIteratorToken tok;
	bool		time_is_ts = false;

	if (strcmp(format, "json") != 0 && strcmp(format, "csv") != 0 &&
		strcmp(format, "text") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown format \"%s\"", format),
				 errhint("The formats are json, csv and text.")));
	if (!JB_ROOT_IS_OBJECT(mapping) || JB_ROOT_IS_SCALAR(mapping))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("mapping must be a JSON object")));
	/* no unknown fields */
	it = JsonbIteratorInit(&mapping->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
		{
			char	   *k = pnstrdup(v.val.string.val, v.val.string.len);
			int			i;

			for (i = 0; field_names[i] != NULL; i++)
				if (strcmp(field_names[i], k) == 0)
					break;
			if (field_names[i] == NULL)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("unknown field \"%s\" in mapping", k),
						 errhint("The fields are event_id, key, event_time, value and partition_prefix.")));
		}
	}
	if (get_field(mapping, "partition_prefix", &v) && v.type != jbvString)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("partition_prefix must be a string")));

	initStringInfo(&buf);
	appendStringInfoString(&buf,
						   "SELECT pg_catalog.count(*) FROM streamforge.ingest_batch($1, ARRAY("
						   "SELECT ROW(m.pn, m.po, f.event_id, f.key, ");
	/* event_time */
	if (!get_field(mapping, "event_time", &v) ||
		(v.type == jbvString && v.val.string.len == 15 &&
		 strncmp(v.val.string.val, "kafka_timestamp", 15) == 0))
	{
		time_is_ts = true;
		ms_expr(&buf, "m.ts", unit_us);
	}
	else
	{
		appendStringInfoString(&buf,
							   "CASE WHEN f.t OPERATOR(pg_catalog.~) '^\\s*-?[0-9]+\\s*$' "
							   "THEN f.t::pg_catalog.int8 ELSE ");
		if (unit_us > 0)
			appendStringInfo(&buf,
							 "streamforge.time_to_units(f.t::pg_catalog.timestamptz, "
							 "'" INT64_FORMAT " microseconds'::pg_catalog.interval)", unit_us);
		else
			appendStringInfoString(&buf, "streamforge_kafka.no_time_unit(f.t)");
		appendStringInfoString(&buf, " END");
	}
	appendStringInfoString(&buf, ", f.v::pg_catalog.int8)::streamforge.delivery "
						   "FROM ROWS FROM (pg_catalog.unnest($2::pg_catalog.text[]), "
						   "pg_catalog.unnest($3::pg_catalog.int8[]), "
						   "pg_catalog.unnest($4::pg_catalog.bytea[]), "
						   "pg_catalog.unnest($5::pg_catalog.bytea[]), "
						   "pg_catalog.unnest($6::pg_catalog.int8[]), "
						   "pg_catalog.unnest($7::pg_catalog.int8[]), "
						   "pg_catalog.unnest($8::pg_catalog.int4[])) WITH ORDINALITY "
						   "AS m(pn, po, k, p, ts, ko, kp, n) "
						   "CROSS JOIN LATERAL (SELECT y.payload, ");
	if (strcmp(format, "json") == 0)
		appendStringInfoString(&buf, "y.payload::pg_catalog.jsonb AS j");
	else if (strcmp(format, "csv") == 0)
		appendStringInfoString(&buf, "pg_catalog.string_to_array(y.payload, ',') AS c");
	else
		appendStringInfoString(&buf, "NULL::pg_catalog.text AS t");
	appendStringInfoString(&buf, " FROM (SELECT pg_catalog.convert_from(m.p, 'UTF8') AS payload) AS y) AS x "
						   "CROSS JOIN LATERAL (SELECT ");
	/* event_id */
	if (get_field(mapping, "event_id", &v))
		field_expr(&buf, format, "event_id", &v, topic);
	else
	{
		v.type = jbvString;
		v.val.string.val = "kafka_id";
		v.val.string.len = 8;
		field_expr(&buf, format, "event_id", &v, topic);
	}
	appendStringInfoString(&buf, " AS event_id, ");
	/* key */
	if (get_field(mapping, "key", &v))
		field_expr(&buf, format, "key", &v, topic);
	else
		appendStringInfoString(&buf,
							   "COALESCE(pg_catalog.convert_from(m.k, 'UTF8'), '')");
	appendStringInfoString(&buf, " AS key, ");
	if (!time_is_ts && get_field(mapping, "event_time", &v))
		field_expr(&buf, format, "event_time", &v, topic);
	else
		appendStringInfoString(&buf, "NULL::pg_catalog.text");
	appendStringInfoString(&buf, " AS t, ");
	if (get_field(mapping, "value", &v))
		field_expr(&buf, format, "value", &v, topic);
	else
		appendStringInfoString(&buf, "'1'::pg_catalog.text");
	appendStringInfoString(&buf, " AS v) AS f ORDER BY m.n))");
	return buf.data;
}

/*
 * streamforge_kafka.mapping_sql(format, mapping, topic, time_unit): the
 * statement of a mapping, or the error that makes it invalid.
 */
Datum
sfk_mapping_sql(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("format, mapping and topic must not be null")));
	PG_RETURN_TEXT_P(cstring_to_text(
		sfk_build_mapping_sql(text_to_cstring(PG_GETARG_TEXT_PP(0)),
							  PG_GETARG_JSONB_P(1),
							  text_to_cstring(PG_GETARG_TEXT_PP(2)),
							  PG_ARGISNULL(3) ? 0 : sfk_unit_us(PG_GETARG_INTERVAL_P(3)))));
}

/*
 * streamforge_kafka.missing_field(field, spec): the error of a message
 * without the field a mapping reads (issue 45, item 4: it names the field;
 * 0.3.0 said "key of delivery 1 of the batch must not be null").
 */
Datum
sfk_missing_field(PG_FUNCTION_ARGS)
{
	ereport(ERROR,
			(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
			 errmsg("field \"%s\" of %s is missing from the message or null",
					PG_ARGISNULL(1) ? "?" : text_to_cstring(PG_GETARG_TEXT_PP(1)),
					PG_ARGISNULL(0) ? "?" : text_to_cstring(PG_GETARG_TEXT_PP(0)))));
	PG_RETURN_NULL();
}
