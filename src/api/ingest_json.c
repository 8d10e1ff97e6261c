/*-------------------------------------------------------------------------
 *
 * ingest_json.c
 *	  The JSON forms of the write core (write.c):
 *	  streamforge.ingest_json(pipeline, deliveries jsonb) and
 *	  ingest_measures_json: a JSON array of deliveries, or of events
 *	  without offsets, applied all or none.
 *
 * SQL glue only: this file turns the array into SfDelivery structs and
 * hands them to sf_write_batch (write_array.c), ingest_batch's loop, or,
 * when the first element has no "source_offset", append_batch's (for
 * ingest_measures_json: ingest_measures_batch's, offsets given or
 * assigned), so the engine, journal, sink and error order are theirs.
 * ingest_measures_json's elements carry "measures", an array of one
 * integral number per measure (null only for a measure declared NULL),
 * instead of "value".  The caller's privilege is checked first, when the pipeline is
 * opened for writing, as every write call does.
 *
 * Phases of a call, which fix the order of the errors:
 *	1. every element, in array order: an object with exactly the fields of
 *	   its kind (an unknown field first, the least in the database's
 *	   collation, like ORDER BY; then the first missing field in the order
 *	   partition, source_offset, event_id, key, event_time, value), no JSON
 *	   null, strings where strings belong, integral numbers within bigint;
 *	2. the event_time strings (only with a time unit), read like
 *	   PostgreSQL's timestamptz input and converted exactly, as
 *	   streamforge.time_to_units() does: the first bad one fails;
 *	3. the deliveries, in array order, by the engine (SF001, SF002, ...),
 *	   whose errors carry "element N of the array, event_id ..." as
 *	   their context (write_array.c).
 *
 * Memory: everything lives in the calling function's context.  The
 * strings of event_id and key point into the (detoasted) jsonb argument,
 * which outlives the call's use of them; partition names are copied, as
 * the engine wants them NUL-terminated.  Error messages repeat at most
 * SF_MSG_MAX bytes of any input (sf_msg_str).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/ingest_json.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_collation.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"
#include "utils/varlena.h"

#include "api/api.h"

/* The fields of an element, in the order their absence is reported */
#define JF_PARTITION	0
#define JF_OFFSET		1
#define JF_EVENT_ID		2
#define JF_KEY			3
#define JF_TIME			4
#define JF_VALUE		5
#define JF_NFIELDS		6

static const char *const json_fields[JF_NFIELDS] = {
	"partition", "source_offset", "event_id", "key", "event_time", "value"
};

/* The name of field f in the elements of call's form */
#define JSON_FIELD(call, f) \
	((f) == JF_VALUE && (call)->p->def.measures != NULL ? "measures" : json_fields[f])

#define SF_OFFSET_HINT "Give source_offset in every element, or in none: the extension then assigns the offsets."

/* What one call knows: the pipeline, and its time unit once looked up */
typedef struct JsonCall
{
	const char *pipeline;
	const SfPipeline *p;		/* measures: a measures form (ingest_measures_json) */
	int64	   *mv;				/* its measures, width words per element */
	bool		with_offset;	/* from the first element */
	bool		unit_known;		/* unit looked up */
	Interval   *unit;			/* NULL: no time unit */
	Numeric		int8_min;		/* bigint bounds, made on first use */
	Numeric		int8_max;
} JsonCall;

/* An event_time given as a string, converted in phase 2 */
typedef struct JsonTime
{
	int			index;			/* 0-based element */
	const char *str;
	int			len;
} JsonTime;

/* jsonb_typeof() of a value */
static const char *
json_type_name(const JsonbValue *v)
{
	switch (v->type)
	{
		case jbvNull:
			return "null";
		case jbvString:
			return "string";
		case jbvNumeric:
			return "number";
		case jbvBool:
			return "boolean";
		case jbvArray:
			return "array";
		case jbvObject:
			return "object";
		case jbvBinary:
			return JsonContainerIsObject(v->val.binary.data) ? "object" : "array";
		default:
			elog(ERROR, "streamforge: unexpected jsonb value type %d", (int) v->type);
	}
	return NULL;				/* keep compiler quiet */
}

static bool
json_has_unit(JsonCall *call)
{
	if (!call->unit_known)
	{
		call->unit = sf_time_unit_get(call->pipeline);
		call->unit_known = true;
	}
	return call->unit != NULL;
}

static bool
json_field_known(const JsonCall *call, const char *key, int len)
{
	int			f;

	for (f = 0; f < JF_NFIELDS; f++)
	{
		if (f == JF_OFFSET && !call->with_offset)
			continue;
		if ((int) strlen(JSON_FIELD(call, f)) == len &&
			memcmp(JSON_FIELD(call, f), key, len) == 0)
			return true;
	}
	return false;
}

/*
 * Raise the error of the unknown field of element ord (1-based) that
 * ORDER BY would list first.  Caller knows there is one.
 */
static void
json_unknown_field(const JsonCall *call, JsonbContainer *obj, int ord)
{
	JsonbIterator *it = JsonbIteratorInit(obj);
	JsonbIteratorToken tok;
	JsonbValue	v;
	const char *least = NULL;
	int			least_len = 0;

	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok != WJB_KEY || json_field_known(call, v.val.string.val, v.val.string.len))
			continue;
		if (least == NULL ||
			varstr_cmp(v.val.string.val, v.val.string.len, least, least_len,
					   DEFAULT_COLLATION_OID) < 0)
		{
			least = v.val.string.val;
			least_len = v.val.string.len;
		}
	}
	if (least == NULL)
		elog(ERROR, "streamforge: element %d has no unknown field", ord);
	if (least_len == (int) strlen("source_offset") &&
		memcmp(least, "source_offset", least_len) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("element %d has a field \"source_offset\", but element 1 has none",
						ord),
				 errhint(SF_OFFSET_HINT)));
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("element %d has an unknown field \"%s\"",
					ord, sf_msg_str(least, least_len)),
			 errhint("The fields are partition, source_offset, event_id, key, event_time and %s.",
					 JSON_FIELD(call, JF_VALUE))));
}

/* A JSON number as it prints, at most SF_MSG_MAX bytes of it */
static const char *
json_number_str(Numeric num)
{
	char	   *s = DatumGetCString(DirectFunctionCall1(numeric_out,
														NumericGetDatum(num)));

	return sf_msg_str(s, strlen(s));
}

/* Field f of element ord (1-based), a JSON number, as a bigint */
static int64
json_int8(JsonCall *call, Numeric num, const char *field, int ord)
{
	Datum		n = NumericGetDatum(num);

	/* a display scale of 0 is integral; else compare with its truncation */
	if (DatumGetInt32(DirectFunctionCall1(numeric_scale, n)) != 0)
	{
		Datum		t = DirectFunctionCall2(numeric_trunc, n, Int32GetDatum(0));

		if (DatumGetInt32(DirectFunctionCall2(numeric_cmp, n, t)) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("field \"%s\" of element %d must be an integer",
							field, ord),
					 errdetail("Found %s.", json_number_str(num))));
		n = t;
	}
	if (call->int8_min == NULL)
	{
		call->int8_min = int64_to_numeric(PG_INT64_MIN);
		call->int8_max = int64_to_numeric(PG_INT64_MAX);
	}
	if (DatumGetInt32(DirectFunctionCall2(numeric_cmp, n,
										  NumericGetDatum(call->int8_min))) < 0 ||
		DatumGetInt32(DirectFunctionCall2(numeric_cmp, n,
										  NumericGetDatum(call->int8_max))) > 0)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("field \"%s\" of element %d is out of range for type bigint",
						field, ord),
				 errdetail("Found %s.", json_number_str(num))));
	return DatumGetInt64(DirectFunctionCall1(numeric_int8, n));
}

/*
 * The field "measures" of element ord (1-based) of a measures form, a JSON
 * array of one integral number per measure in declaration order (null
 * only for a measure declared NULL), as the delivery's width words into
 * out (sf_measures_values' layout: the measures, then the NULL mask).
 */
static void
json_measures(JsonCall *call, JsonbValue *v, int ord, int64 *out)
{
	const SfMeasuresDef *md = call->p->def.measures;
	JsonbIterator *it;
	JsonbIteratorToken tok;
	JsonbValue	e;
	uint64		mask = 0;
	int			n;
	int			i = 0;

	if (v->type != jbvBinary || !JsonContainerIsArray(v->val.binary.data) ||
		JsonContainerIsScalar(v->val.binary.data))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("field \"measures\" of element %d must be an array",
						ord),
				 errdetail("Found a JSON %s.", json_type_name(v))));
	n = JsonContainerSize(v->val.binary.data);
	if (n != md->nmeasures)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("field \"measures\" of element %d has %d elements, pipeline \"%s\" has %d measures",
						ord, n, call->p->def.name, md->nmeasures),
				 errhint("measures must have exactly one element per measure, in declaration order.")));
	it = JsonbIteratorInit(v->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &e, true)) != WJB_DONE)
	{
		if (tok != WJB_ELEM)
			continue;
		if (e.type == jbvNull)
		{
			if ((md->nullable & (1U << i)) == 0)
				ereport(ERROR,
						(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
						 errmsg("measure \"%s\" of element %d must not be null",
								md->names[i], ord)));
			mask |= (uint64) 1 << i;
			out[i++] = 0;
			continue;
		}
		if (e.type != jbvNumeric)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("measure \"%s\" of element %d must be a number",
							md->names[i], ord),
					 errdetail("Found a JSON %s.", json_type_name(&e))));
		out[i++] = json_int8(call, e.val.numeric, "measures", ord);
	}
	Assert(i == n);
	if (md->nullable != 0)
		out[n] = (int64) mask;
}

/*
 * Check element ord (1-based) and unpack it into d.  A string event_time
 * (with a time unit) is only recorded in *time_str for phase 2; the return
 * value says whether it was.
 */
static bool
json_element(JsonCall *call, JsonbValue *elem, int ord, SfDelivery *d,
			 JsonTime *time_str)
{
	JsonbContainer *obj;
	JsonbValue	vals[JF_NFIELDS];
	bool		found[JF_NFIELDS];
	int			nfound = 0;
	int			f;
	bool		is_time_str = false;

	if (elem->type != jbvBinary || !JsonContainerIsObject(elem->val.binary.data))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("element %d of the array must be an object", ord),
				 errdetail("Found a JSON %s.", json_type_name(elem))));
	obj = elem->val.binary.data;

	for (f = 0; f < JF_NFIELDS; f++)
	{
		found[f] = false;
		if (f == JF_OFFSET && !call->with_offset)
			continue;
		found[f] = getKeyJsonValueFromContainer(obj, JSON_FIELD(call, f),
												strlen(JSON_FIELD(call, f)),
												&vals[f]) != NULL;
		if (found[f])
			nfound++;
	}
	if ((int) JsonContainerSize(obj) > nfound)
		json_unknown_field(call, obj, ord);

	for (f = 0; f < JF_NFIELDS; f++)
	{
		JsonbValue *v = &vals[f];

		if (f == JF_OFFSET && !call->with_offset)
			continue;
		if (!found[f])
		{
			if (f == JF_OFFSET)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("element %d has no field \"source_offset\", but element 1 has one",
								ord),
						 errhint(SF_OFFSET_HINT)));
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("element %d has no field \"%s\"", ord, JSON_FIELD(call, f))));
		}
		if (v->type == jbvNull)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("field \"%s\" of element %d must not be null",
							JSON_FIELD(call, f), ord)));
		switch (f)
		{
			case JF_PARTITION:
			case JF_EVENT_ID:
			case JF_KEY:
				if (v->type != jbvString)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("field \"%s\" of element %d must be a string",
									json_fields[f], ord),
							 errdetail("Found a JSON %s.", json_type_name(v))));
				if (f == JF_PARTITION)
					d->partition = pnstrdup(v->val.string.val, v->val.string.len);
				else if (f == JF_EVENT_ID)
				{
					d->event_id = v->val.string.val;
					d->event_id_len = v->val.string.len;
				}
				else
				{
					d->key = v->val.string.val;
					d->key_len = v->val.string.len;
				}
				break;
			case JF_VALUE:
				if (call->p->def.measures != NULL)
				{
					json_measures(call, v, ord, call->mv +
								  (Size) (ord - 1) * call->p->def.measures->width);
					d->value = call->mv[(Size) (ord - 1) * call->p->def.measures->width];
					break;
				}
				/* FALLTHROUGH */
			default:
				if (f == JF_TIME && v->type == jbvString && json_has_unit(call))
				{
					/* a timestamp: converted in phase 2 */
					time_str->index = ord - 1;
					time_str->str = v->val.string.val;
					time_str->len = v->val.string.len;
					is_time_str = true;
					break;
				}
				if (v->type != jbvNumeric)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("field \"%s\" of element %d must be %s",
									JSON_FIELD(call, f), ord,
									(f == JF_TIME && json_has_unit(call))
									? "a number or a timestamp string" : "a number"),
							 errdetail("Found a JSON %s.", json_type_name(v))));
				if (f == JF_OFFSET)
					d->source_offset = json_int8(call, v->val.numeric, json_fields[f], ord);
				else if (f == JF_TIME)
					d->event_time = json_int8(call, v->val.numeric, json_fields[f], ord);
				else
					d->value = json_int8(call, v->val.numeric, json_fields[f], ord);
				break;
		}
	}
	return is_time_str;
}

/*
 * msg with its quoted part (PostgreSQL's datetime errors quote the input
 * between the first and the last double quote) cut to SF_MSG_MAX bytes.
 */
static const char *
json_clip_quoted(const char *msg)
{
	const char *first = strchr(msg, '"');
	const char *last = strrchr(msg, '"');
	StringInfoData buf;

	if (first == NULL || last <= first + 1 + SF_MSG_MAX)
		return msg;
	initStringInfo(&buf);
	appendBinaryStringInfo(&buf, msg, first + 1 - msg);
	appendStringInfoString(&buf, sf_msg_str(first + 1, last - first - 1));
	appendStringInfoString(&buf, last);
	return buf.data;
}

/*
 * The event_time string t of its element as units: timestamptz input, then
 * the exact conversion of time_to_units.  A data exception (class 22) of
 * either becomes the error of the field, with its SQLSTATE; anything else
 * (out of memory, a cancel) passes unchanged.
 */
static int64
json_time(JsonCall *call, const JsonTime *t)
{
	MemoryContext cxt = CurrentMemoryContext;
	char	   *str = pnstrdup(t->str, t->len);
	int64		result = 0;

	PG_TRY();
	{
		TimestampTz ts;

		ts = DatumGetTimestampTz(DirectFunctionCall3(timestamptz_in,
													 CStringGetDatum(str),
													 ObjectIdGetDatum(InvalidOid),
													 Int32GetDatum(-1)));
		result = sf_time_to_units(ts, call->unit);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		if (ERRCODE_TO_CATEGORY(edata->sqlerrcode) != ERRCODE_DATA_EXCEPTION)
			PG_RE_THROW();
		FlushErrorState();
		/* rethrown as our own error: the transaction's abort cleans up */
		ereport(ERROR,
				(errcode(edata->sqlerrcode),
				 errmsg("field \"event_time\" of element %d is not a valid time: %s",
						t->index + 1, json_clip_quoted(edata->message))));
	}
	PG_END_TRY();
	return result;
}

/*
 * The JSON forms of the write core (write.c): ingest_json(pipeline,
 * deliveries jsonb) and ingest_measures_json; see the file header.
 */
void
sf_write_json(FunctionCallInfo fcinfo, const SfWriteForm *form)
{
	JsonCall	call = {0};
	SfPipeline *p;
	int64		late_before;
	Jsonb	   *jb;
	JsonbIterator *it;
	JsonbIteratorToken tok;
	JsonbValue	v;
	SfDelivery *ds;
	JsonTime   *times = NULL;	/* the string event_times, in array order */
	int			ntimes = 0;
	int			maxtimes = 0;
	int			n;
	int			i;
	SfWriteBatch b = {0};

	call.pipeline = sf_arg_text(fcinfo, 0, "pipeline");
	p = sf_persist_open(call.pipeline, true);	/* privilege first */
	if (unlikely(p->def.has_idle_timeout))
		p = sf_idle_check(fcinfo, p);	/* progress.c */
	late_before = sf_late_keep(p);

	sf_arg_not_null(fcinfo, 1, "deliveries");
	sf_require_kind(p, form->measures);
	call.p = p;
	jb = PG_GETARG_JSONB_P(1);
	if (!JB_ROOT_IS_ARRAY(jb) || JB_ROOT_IS_SCALAR(jb))
	{
		JsonbValue	root;

		if (JB_ROOT_IS_SCALAR(jb))
			JsonbExtractScalar(&jb->root, &root);
		else
		{
			root.type = jbvBinary;
			root.val.binary.data = &jb->root;
		}
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("deliveries must be a JSON array"),
				 errdetail("Found a JSON %s.", json_type_name(&root))));
	}

	/* Phase 1: check and unpack every element */
	n = JsonContainerSize(&jb->root);
	ds = palloc_extended(Max(n, 1) * sizeof(SfDelivery), MCXT_ALLOC_HUGE);
	if (form->measures)
		call.mv = palloc_extended(Max(n, 1) * (Size) p->def.measures->width *
								  sizeof(int64), MCXT_ALLOC_HUGE);
	it = JsonbIteratorInit(&jb->root);
	tok = JsonbIteratorNext(&it, &v, true);
	Assert(tok == WJB_BEGIN_ARRAY);
	for (i = 0; i < n; i++)
	{
		JsonTime	t;

		CHECK_FOR_INTERRUPTS();
		tok = JsonbIteratorNext(&it, &v, true);
		if (tok != WJB_ELEM)
			elog(ERROR, "streamforge: unexpected jsonb iterator token %d", (int) tok);
		if (i == 0)
			call.with_offset =
				v.type == jbvBinary && JsonContainerIsObject(v.val.binary.data) &&
				getKeyJsonValueFromContainer(v.val.binary.data, "source_offset",
											 strlen("source_offset"), NULL) != NULL;
		if (json_element(&call, &v, i + 1, &ds[i], &t))
		{
			if (ntimes == maxtimes)
			{
				maxtimes = Max(8, maxtimes * 2);
				times = times == NULL
					? palloc_extended(maxtimes * sizeof(JsonTime), MCXT_ALLOC_HUGE)
					: repalloc_huge(times, maxtimes * sizeof(JsonTime));
			}
			times[ntimes++] = t;
		}
	}

	/* Phase 2: the timestamp strings */
	for (i = 0; i < ntimes; i++)
	{
		CHECK_FOR_INTERRUPTS();
		ds[times[i].index].event_time = json_time(&call, &times[i]);
	}

	/* Phase 3: the batch's own path (ingest_batch's, append_batch's, ...) */
	b.ds = ds;
	b.n = n;
	b.mv = call.mv;
	b.assign = !call.with_offset;
	b.json = true;
	sf_write_batch(fcinfo, p, late_before, &b);
}
