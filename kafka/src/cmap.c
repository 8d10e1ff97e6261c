/*
 * cmap.c: a subscription's mapping (subscribe) run in C (issue 43, item 3).
 *
 * The statement of mapping.c maps a batch with SQL expressions, about 40
 * µs per message.  When every field of a mapping is one this file reads
 * (kafka_* fields, payload, a JSON key or a path of plain keys "$.a.b", a
 * CSV column), the worker maps the batch here instead, with the same
 * functions the statement calls (convert_from, jsonb_in, int8in,
 * timestamptz_in, streamforge.time_to_units, the missing-field error) and
 * no SQL per message, builds the streamforge.delivery[] array and runs one
 * ingest_batch for the batch.  The deliveries, and the errors (their
 * SQLSTATEs), are those of the statement; a mapping with another field (a
 * JSON path with filters, subscripts or quoted keys) keeps the statement.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"

#include "kafka.h"

typedef enum FieldKind
{
	F_NONE,						/* the default of the field */
	F_KEY,
	F_TS,
	F_OFFSET,
	F_PART,
	F_ID,
	F_PAYLOAD,
	F_JSON,
	F_CSV
} FieldKind;

typedef struct Field
{
	FieldKind	kind;
	const char *name;			/* event_id, key, event_time, value */
	const char *spec;			/* as written, for the missing-field error */
	int			npath;
	char	  **path;			/* F_JSON */
	int			col;			/* F_CSV, from 1 */
} Field;

static struct
{
	bool		ready;
	char	   *format;
	char	   *topic;
	int64		unit_us;
	Interval   *unit;
	Field		f[4];			/* event_id, key, event_time, value */
	bool		time_is_ts;
	bool		need_payload;	/* a field reads the payload */
	Oid			deliv_type;
	Oid			deliv_array;
	TupleDesc	desc;
	FmgrInfo	time_to_units;
	SPIPlanPtr	plan;
	SfDirectIngestFn direct;	/* the core's C write entry, or NULL */
	Oid			ingest_proc;	/* ingest_batch, for its EXECUTE check */
	bool		fast;			/* JSON read by json.c first */
	SfkJsonKeys keys;			/* the JSON fields' paths */
	int			keyof[4];		/* the key of each JSON field, or -1 */
} cm;

/* the decoded strings of a message (json.c), grown as needed */
static char *scanbuf = NULL;
static int	scanbuf_len = 0;

static const char *const names[4] = {"event_id", "key", "event_time", "value"};

/* A path of plain keys "$.a.b", or false. */
static bool
parse_path(const char *s, Field *f)
{
	char	   *copy;
	char	   *p;

	if (s[0] != '$' || s[1] != '.')
		return false;
	copy = MemoryContextStrdup(TopMemoryContext, s + 2);
	f->path = MemoryContextAlloc(TopMemoryContext, sizeof(char *) * (strlen(copy) + 1));
	f->npath = 0;
	p = copy;
	for (;;)
	{
		char	   *q = p;

		if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || *q == '_'))
			return false;
		while ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || *q == '_' ||
			   (*q >= '0' && *q <= '9'))
			q++;
		/* jsonpath's keywords are no plain keys */
		f->path[f->npath++] = p;
		if (*q == '\0')
			break;
		if (*q != '.')
			return false;
		*q = '\0';
		p = q + 1;
	}
	for (int i = 0; i < f->npath; i++)
		if (strcmp(f->path[i], "type") == 0 || strcmp(f->path[i], "size") == 0 ||
			strcmp(f->path[i], "double") == 0 || strcmp(f->path[i], "ceiling") == 0 ||
			strcmp(f->path[i], "floor") == 0 || strcmp(f->path[i], "abs") == 0 ||
			strcmp(f->path[i], "datetime") == 0 || strcmp(f->path[i], "keyvalue") == 0 ||
			strcmp(f->path[i], "last") == 0 || strcmp(f->path[i], "true") == 0 ||
			strcmp(f->path[i], "false") == 0 || strcmp(f->path[i], "null") == 0 ||
			strcmp(f->path[i], "strict") == 0 || strcmp(f->path[i], "lax") == 0 ||
			strcmp(f->path[i], "exists") == 0 || strcmp(f->path[i], "like_regex") == 0 ||
			strcmp(f->path[i], "starts") == 0 || strcmp(f->path[i], "with") == 0 ||
			strcmp(f->path[i], "is") == 0 || strcmp(f->path[i], "unknown") == 0 ||
			strcmp(f->path[i], "to") == 0 || strcmp(f->path[i], "flag") == 0)
			return false;
	return true;
}

/*
 * Reads a mapping (already checked by sfk_build_mapping_sql): false when a
 * field is one the statement must map.  SPI connected (the type and the
 * function are looked up).
 */
bool
sfk_cmap_prepare(const char *format, Jsonb *mapping, const char *topic, int64 unit_us)
{
	int			i;
	Oid			types[2];
	bool		isnull;
	Oid			fn;

	cm.ready = false;
	for (i = 0; i < 4; i++)
	{
		Field	   *f = &cm.f[i];
		JsonbValue	v;

		memset(f, 0, sizeof(*f));
		f->name = names[i];
		if (getKeyJsonValueFromContainer(&mapping->root, names[i], strlen(names[i]), &v) == NULL)
		{
			f->kind = i == 0 ? F_ID : F_NONE;
			if (i == 2)
				f->kind = F_TS;
			continue;
		}
		if (v.type == jbvNumeric)
		{
			f->kind = F_CSV;
			f->col = DatumGetInt32(DirectFunctionCall1(numeric_int4, NumericGetDatum(v.val.numeric)));
			f->spec = MemoryContextStrdup(TopMemoryContext, psprintf("column %d", f->col));
			continue;
		}
		if (v.type != jbvString)
			return false;
		f->spec = MemoryContextStrdup(TopMemoryContext,
									  pnstrdup(v.val.string.val, v.val.string.len));
		if (strcmp(f->spec, "kafka_key") == 0)
			f->kind = F_KEY;
		else if (strcmp(f->spec, "kafka_timestamp") == 0)
			f->kind = F_TS;
		else if (strcmp(f->spec, "kafka_offset") == 0)
			f->kind = F_OFFSET;
		else if (strcmp(f->spec, "kafka_partition") == 0)
			f->kind = F_PART;
		else if (strcmp(f->spec, "kafka_id") == 0)
			f->kind = F_ID;
		else if (strcmp(f->spec, "payload") == 0)
			f->kind = F_PAYLOAD;
		else if (strcmp(format, "json") == 0 && f->spec[0] == '$')
		{
			f->kind = F_JSON;
			if (!parse_path(f->spec, f))
				return false;
		}
		else if (strcmp(format, "json") == 0)
		{
			f->kind = F_JSON;
			f->npath = 1;
			f->path = MemoryContextAlloc(TopMemoryContext, sizeof(char *));
			f->path[0] = (char *) f->spec;
		}
		else
			return false;
	}
	cm.time_is_ts = cm.f[2].kind == F_TS;
	/* the JSON fields in one pass (json.c) when the database is UTF-8 */
	memset(&cm.keys, 0, sizeof(cm.keys));
	cm.fast = strcmp(format, "json") == 0 && GetDatabaseEncoding() == PG_UTF8;
	for (i = 0; i < 4; i++)
	{
		cm.keyof[i] = -1;
		if (cm.f[i].kind == F_JSON && cm.fast)
		{
			cm.keyof[i] = cm.keys.n;
			if (!sfk_json_key(&cm.keys, cm.f[i].path, cm.f[i].npath))
				cm.fast = false;
		}
	}
	/*
	 * The statement converts and parses the payload only for a field that
	 * reads it (the planner drops the unused columns): a mapping of Kafka
	 * fields only accepts any payload, as it did.
	 */
	cm.need_payload = false;
	for (i = 0; i < 4; i++)
		if (cm.f[i].kind == F_PAYLOAD || cm.f[i].kind == F_JSON || cm.f[i].kind == F_CSV)
			cm.need_payload = true;

	if (SPI_execute("SELECT 'streamforge.delivery'::pg_catalog.regtype::pg_catalog.oid, "
					"'streamforge.time_to_units(pg_catalog.timestamptz, pg_catalog.interval)'"
					"::pg_catalog.regprocedure::pg_catalog.oid", true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not look up streamforge.delivery");
	cm.deliv_type = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	fn = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	cm.deliv_array = get_array_type(cm.deliv_type);
	fmgr_info_cxt(fn, &cm.time_to_units, TopMemoryContext);
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		cm.desc = lookup_rowtype_tupdesc_copy(cm.deliv_type, -1);
		cm.format = pstrdup(format);
		cm.topic = pstrdup(topic);
		cm.unit_us = unit_us;
		if (unit_us > 0)
		{
			cm.unit = palloc0(sizeof(Interval));
			cm.unit->time = unit_us;
		}
		MemoryContextSwitchTo(old);
	}
	types[0] = TEXTOID;
	types[1] = cm.deliv_array;
	cm.plan = SPI_prepare("SELECT pg_catalog.count(*) FROM streamforge.ingest_batch($1, $2)",
						  2, types);
	if (cm.plan == NULL)
		elog(ERROR, "could not prepare ingest_batch");
	SPI_keepplan(cm.plan);
	cm.direct = sfk_direct_entry(false, &cm.ingest_proc);
	cm.ready = true;
	return true;
}

static void
missing(Field *f)
{
	ereport(ERROR,
			(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
			 errmsg("field \"%s\" of %s is missing from the message or null",
					f->spec, f->name)));
}

/* ->> of a JSON value: NULL for a JSON null */
static char *
json_text(JsonbValue *v)
{
	switch (v->type)
	{
		case jbvNull:
			return NULL;
		case jbvString:
			return pnstrdup(v->val.string.val, v->val.string.len);
		case jbvNumeric:
			return DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(v->val.numeric)));
		case jbvBool:
			return v->val.boolean ? "true" : "false";
		case jbvBinary:
			return JsonbToCString(NULL, v->val.binary.data, v->val.binary.len);
		default:
			return NULL;
	}
}

/*
 * The first item of a lax jsonpath of keys from container c (arrays met on
 * the way are unwrapped, as lax mode does), or NULL.
 */
static bool
lax_path(JsonbContainer *c, char **path, int n, JsonbValue *out)
{
	JsonbValue	v;

	if (n == 0)
		return false;
	if (JsonContainerIsArray(c))
	{
		JsonbIterator *it = JsonbIteratorInit(c);
		JsonbIteratorToken tok;

		while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
			if (tok == WJB_ELEM && v.type == jbvBinary &&
				lax_path(v.val.binary.data, path, n, out))
				return true;
		return false;
	}
	if (!JsonContainerIsObject(c))
		return false;
	if (getKeyJsonValueFromContainer(c, path[0], strlen(path[0]), &v) == NULL)
		return false;
	if (n == 1)
	{
		*out = v;
		return true;
	}
	if (v.type != jbvBinary)
		return false;
	return lax_path(v.val.binary.data, path + 1, n - 1, out);
}

/* The text of field f of a message (NULL: none). */
static char *
field_text(Field *f, Msg *m, char *payload, Jsonb *j, char **csv, int ncsv)
{
	JsonbValue	v;

	switch (f->kind)
	{
		case F_KEY:
			if (m->key == NULL)
				return NULL;
			return TextDatumGetCString(DirectFunctionCall2(pg_convert_from, PointerGetDatum(m->key),
														   CStringGetDatum("UTF8")));
		case F_TS:
			return psprintf(INT64_FORMAT, m->ts);
		case F_OFFSET:
			return psprintf(INT64_FORMAT, m->offset);
		case F_PART:
			return psprintf("%d", m->part);
		case F_ID:
			return psprintf("%s/%d/" INT64_FORMAT, cm.topic, m->part, m->offset);
		case F_PAYLOAD:
			return payload;
		case F_JSON:
			if (j == NULL)
				missing(f);
			if (f->spec[0] == '$')
			{
				if (JB_ROOT_IS_SCALAR(j) || !lax_path(&j->root, f->path, f->npath, &v))
					missing(f);
			}
			else if (!JB_ROOT_IS_OBJECT(j) || JB_ROOT_IS_SCALAR(j) ||
					 getKeyJsonValueFromContainer(&j->root, f->path[0], strlen(f->path[0]), &v) == NULL)
				missing(f);
			{
				char	   *t = json_text(&v);

				if (t == NULL)
					missing(f);
				return t;
			}
		case F_CSV:
			if (csv == NULL || f->col > ncsv)
				missing(f);
			return csv[f->col - 1];
		case F_NONE:
			break;
	}
	return NULL;
}

static bool
is_integer(const char *s)
{
	const char *p = s;

	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v')
		p++;
	if (*p == '-')
		p++;
	if (*p < '0' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9')
		p++;
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v')
		p++;
	return *p == '\0';
}

/*
 * The text of field f on the fast path: false when the slow path must map
 * the message (a missing or null field: its error; a key that is not
 * UTF-8).  small: room for a number.
 */
static bool
fast_text(int i, Msg *m, SfkJsonValue *vals, const char **s, int *len, char *small)
{
	Field	   *f = &cm.f[i];

	switch (f->kind)
	{
		case F_JSON:
			if (vals[cm.keyof[i]].kind == SFK_JSON_MISSING ||
				vals[cm.keyof[i]].kind == SFK_JSON_NULL)
				return false;
			*s = vals[cm.keyof[i]].s;
			*len = vals[cm.keyof[i]].len;
			return true;
		case F_KEY:
			if (m->key == NULL ||
				pg_encoding_verifymbstr(PG_UTF8, VARDATA(m->key), VARSIZE(m->key) - VARHDRSZ) !=
				VARSIZE(m->key) - VARHDRSZ)
				return false;
			*s = VARDATA(m->key);
			*len = VARSIZE(m->key) - VARHDRSZ;
			return true;
		case F_TS:
			*len = snprintf(small, 64, INT64_FORMAT, m->ts);
			break;
		case F_OFFSET:
			*len = snprintf(small, 64, INT64_FORMAT, m->offset);
			break;
		case F_PART:
			*len = snprintf(small, 64, "%d", m->part);
			break;
		case F_ID:
		case F_PAYLOAD:
		case F_CSV:
		case F_NONE:
			return false;
	}
	*s = small;
	return true;
}

/* A text datum of field i, or false (the slow path). */
static bool
fast_text_datum(int i, Msg *m, SfkJsonValue *vals, Datum *d)
{
	const char *s;
	int			len;
	char		small[64];

	switch (cm.f[i].kind)
	{
		case F_ID:
			*d = CStringGetTextDatum(psprintf("%s/%d/" INT64_FORMAT, cm.topic, m->part, m->offset));
			return true;
		case F_PAYLOAD:
			*d = PointerGetDatum(cstring_to_text_with_len(VARDATA(m->payload),
														  VARSIZE(m->payload) - VARHDRSZ));
			return true;
		default:
			if (!fast_text(i, m, vals, &s, &len, small))
				return false;
			*d = PointerGetDatum(cstring_to_text_with_len(s, len));
			return true;
	}
}

/* An int8 of field i, or false (the slow path: int8in decides). */
static bool
fast_int8(int i, Msg *m, SfkJsonValue *vals, int64 *v)
{
	const char *s;
	int			len;
	char		small[64];

	if (cm.f[i].kind == F_ID || cm.f[i].kind == F_PAYLOAD)
		return false;
	if (!fast_text(i, m, vals, &s, &len, small))
		return false;
	return sfk_parse_int8(s, len, v);
}

/*
 * A message mapped without jsonb (json.c): false when the slow path must
 * map it (the values then come from jsonb_in and int8in, or their error).
 */
static bool
fast_message(Msg *m, Datum *values, bool *nulls)
{
	SfkJsonValue vals[SFK_JSON_MAX_KEYS];
	int64		v;

	if (cm.need_payload)
	{
		int			len;

		if (m->payload == NULL)
			return false;
		len = VARSIZE(m->payload) - VARHDRSZ;
		if (len > scanbuf_len)
		{
			if (scanbuf)
				pfree(scanbuf);
			scanbuf_len = Max(len, 1024);
			scanbuf = MemoryContextAlloc(TopMemoryContext, scanbuf_len);
		}
		if (!sfk_json_scan(VARDATA(m->payload), len, &cm.keys, vals, scanbuf))
			return false;
	}
	/* event_id */
	if (!fast_text_datum(0, m, vals, &values[2]))
		return false;
	/* key: the Kafka key, '' without one, by default */
	if (cm.f[1].kind == F_NONE)
	{
		if (m->key == NULL)
			values[3] = CStringGetTextDatum("");
		else
		{
			Field		kf = cm.f[1];
			bool		ok;

			cm.f[1].kind = F_KEY;
			ok = fast_text_datum(1, m, vals, &values[3]);
			cm.f[1] = kf;
			if (!ok)
				return false;
		}
	}
	else if (!fast_text_datum(1, m, vals, &values[3]))
		return false;
	/* event_time: a number of units (a timestamp: the slow path) */
	if (cm.time_is_ts)
		values[4] = Int64GetDatum(cm.unit_us <= 0 ? m->ts : (m->ts * 1000) / cm.unit_us);
	else if (fast_int8(2, m, vals, &v))
		values[4] = Int64GetDatum(v);
	else
		return false;
	/* value: 1 by default */
	if (cm.f[3].kind == F_NONE)
		values[5] = Int64GetDatum(1);
	else if (fast_int8(3, m, vals, &v))
		values[5] = Int64GetDatum(v);
	else
		return false;
	memset(nulls, 0, sizeof(bool) * 6);
	return true;
}

/*
 * Maps the elements (the messages at their pipeline offsets) to
 * deliveries and ingests them: through the core's C entry (direct.c) when
 * it may, else with one ingest_batch of an array of them.
 */
void
sfk_cmap_run(Elems *e, const char *pipeline)
{
	bool		direct = sfk_direct_usable(cm.direct, cm.ingest_proc);
	Datum	   *out = NULL;
	SfDirectDelivery *dd = NULL;
	int		   *bad = NULL;
	char	  **pnames = NULL;
	int			i;
	Datum		args[2];
	int			dims[1];
	int			lbs[1] = {1};

	if (direct)
	{
		int			maxpart = 0;

		dd = palloc(sizeof(SfDirectDelivery) * Max(e->n, 1));
		bad = palloc(sizeof(int) * Max(e->n, 1));
		for (i = 0; i < e->n; i++)
			maxpart = Max(maxpart, e->m[i]->part);
		pnames = palloc0(sizeof(char *) * (maxpart + 1));
	}
	else
		out = palloc(sizeof(Datum) * Max(e->n, 1));
	for (i = 0; i < e->n; i++)
	{
		Msg		   *m = e->m[i];
		char	   *payload = NULL;
		Jsonb	   *j = NULL;
		char	  **csv = NULL;
		int			ncsv = 0;
		Datum		values[6];
		bool		nulls[6] = {false, false, false, false, false, false};
		char	   *t;

		values[0] = e->pn[i];
		values[1] = e->po[i];
		if (cm.fast && fast_message(m, values, nulls))
		{
			if (direct)
				sfk_direct_fill(&dd[i], &bad[i], values, nulls, &pnames[m->part], false);
			else
				out[i] = HeapTupleGetDatum(heap_form_tuple(cm.desc, values, nulls));
			continue;
		}
		memset(nulls, 0, sizeof(nulls));
		if (m->payload != NULL && cm.need_payload)
		{
			payload = TextDatumGetCString(DirectFunctionCall2(pg_convert_from,
															  PointerGetDatum(m->payload),
															  CStringGetDatum("UTF8")));
			if (strcmp(cm.format, "json") == 0)
				j = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(payload)));
			else if (strcmp(cm.format, "csv") == 0)
			{
				/* string_to_array(payload, ','): '' has no column */
				char	   *p = pstrdup(payload);
				int			cap = 1;
				char	   *q;

				for (q = p; *q; q++)
					if (*q == ',')
						cap++;
				csv = palloc(sizeof(char *) * cap);
				if (*p != '\0')
				{
					csv[ncsv++] = p;
					for (q = p; *q; q++)
						if (*q == ',')
						{
							*q = '\0';
							csv[ncsv++] = q + 1;
						}
				}
			}
		}
		values[0] = e->pn[i];
		values[1] = e->po[i];
		/* event_id */
		t = field_text(&cm.f[0], m, payload, j, csv, ncsv);
		nulls[2] = t == NULL;
		values[2] = t ? CStringGetTextDatum(t) : (Datum) 0;
		/* key: the Kafka key, '' without one, by default */
		if (cm.f[1].kind == F_NONE)
		{
			t = m->key ? field_text(&(Field) {.kind = F_KEY}, m, NULL, NULL, NULL, 0) : "";
		}
		else
			t = field_text(&cm.f[1], m, payload, j, csv, ncsv);
		nulls[3] = t == NULL;
		values[3] = t ? CStringGetTextDatum(t) : (Datum) 0;
		/* event_time */
		if (cm.time_is_ts)
			values[4] = Int64GetDatum(cm.unit_us <= 0 ? m->ts : (m->ts * 1000) / cm.unit_us);
		else
		{
			t = field_text(&cm.f[2], m, payload, j, csv, ncsv);
			if (t == NULL)
				nulls[4] = true;
			else if (is_integer(t))
				values[4] = DirectFunctionCall1(int8in, CStringGetDatum(t));
			else if (cm.unit_us > 0)
			{
				Datum		ts = DirectFunctionCall3(timestamptz_in, CStringGetDatum(t),
													 ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));

				values[4] = FunctionCall2(&cm.time_to_units, ts, IntervalPGetDatum(cm.unit));
			}
			else
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_DATETIME_FORMAT),
						 errmsg("event time \"%s\" is not a number of units", t),
						 errdetail("The pipeline has no time unit to convert a timestamp with.")));
		}
		/* value: 1 by default */
		if (cm.f[3].kind == F_NONE)
			values[5] = Int64GetDatum(1);
		else
		{
			t = field_text(&cm.f[3], m, payload, j, csv, ncsv);
			nulls[5] = t == NULL;
			values[5] = t ? DirectFunctionCall1(int8in, CStringGetDatum(t)) : (Datum) 0;
		}
		if (direct)
			sfk_direct_fill(&dd[i], &bad[i], values, nulls, &pnames[m->part], false);
		else
			out[i] = HeapTupleGetDatum(heap_form_tuple(cm.desc, values, nulls));
	}
	if (direct)
	{
		SfDirectBatch b;

		b.pipeline = pipeline;
		b.ds = dd;
		b.n = e->n;
		b.bad = bad;
		b.measures = NULL;
		cm.direct(&b);
		return;
	}
	dims[0] = e->n;
	args[0] = CStringGetTextDatum(pipeline);
	args[1] = PointerGetDatum(construct_md_array(out, NULL, 1, dims, lbs, cm.deliv_type,
												 -1, false, TYPALIGN_DOUBLE));
	if (SPI_execute_plan(cm.plan, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not ingest the batch");
}
