/*-------------------------------------------------------------------------
 *
 * args.c
 *	  Argument and result helpers shared by the SQL functions of api/:
 *	  the one "X must not be null" error and the pipeline argument
 *	  (sf_arg_not_null, sf_arg_text, sf_arg_pipeline, inline in api.h),
 *	  composite arguments
 *	  (sf_deform_composite, the window_def and delivery[] arguments), the
 *	  errors of a batch's deliveries, and the rows and changes the calls
 *	  return (sf_return_changes; sf_finish_write in api.h).
 *
 * Callers: only the files of api/.  The helpers on the per-row path of
 * ingest, ingest_count and append (the not-null checks, the event_id
 * check, sf_finish_write) are static inline in api.h with their errors
 * here, so that moving them here added no call per row.
 *
 * Memory: arguments and results are built in the caller's memory context
 * (the SQL function's, reset by the executor after the call); text and
 * composite values may point into the (detoasted) arguments, which live as
 * long.  Every set-returning function materializes its result in one call
 * (InitMaterializedSRF; an empty change list returns no tuplestore at all,
 * see sf_return_changes), so nothing is held across calls.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/args.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/arrayaccess.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#include "api/api.h"

/* The error of sf_arg_not_null (api.h) */
void
sf_arg_null_error(const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
			 errmsg("%s must not be null", what)));
}

/* Fill values from a composite tuple's header, as heap_deform_tuple does */
static inline void
deform_header(HeapTupleHeader th, TupleDesc tupdesc, Datum *values,
			  bool *nulls)
{
	HeapTupleData tuple;

	tuple.t_len = HeapTupleHeaderGetDatumLength(th);
	ItemPointerSetInvalid(&tuple.t_self);
	tuple.t_tableOid = InvalidOid;
	tuple.t_data = th;
	heap_deform_tuple(&tuple, tupdesc, values, nulls);
}

/*
 * Deform the composite datum d, of a row type of the extension called type
 * with natts columns, into values and nulls.  Returns its tuple descriptor,
 * reference-counted: the caller releases it (ReleaseTupleDesc) once it has
 * no more use for it.  The values point into d.  For one value per call;
 * sf_unpack_deliveries looks the descriptor of an array up once.
 */
TupleDesc
sf_deform_composite(Datum d, int natts, const char *type, Datum *values,
					bool *nulls)
{
	HeapTupleHeader th = DatumGetHeapTupleHeader(d);
	TupleDesc	tupdesc;

	tupdesc = lookup_rowtype_tupdesc(HeapTupleHeaderGetTypeId(th),
									 HeapTupleHeaderGetTypMod(th));
	if (tupdesc->natts != natts)
		elog(ERROR, "streamforge: unexpected %s layout", type);
	deform_header(th, tupdesc, values, nulls);
	return tupdesc;
}

/* Validate a window definition; shared by the constructors and create */
void
sf_validate_window(const SfWindowDef *w)
{
	char	   *msg;
	char	   *detail;

	sf_validate_name("window", w->name);
	if (!sf_window_check(w, &msg, &detail))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s", msg),
				 errdetail("%s", detail)));
}

/* A window_def row (possibly hand-built) as an SfWindowDef; NULLs are 22004 */
static void
window_from_datum(Datum d, SfWindowDef *w)
{
	TupleDesc	tupdesc;
	Datum		values[5];
	bool		nulls[5];
	char	   *name;
	char	   *kind;
	const SfWindowOps *o;
	bool		needed[5] = {true, true, false, false, false};
	int			i;

	tupdesc = sf_deform_composite(d, 5, "window_def", values, nulls);
	ReleaseTupleDesc(tupdesc);

	if (nulls[0])
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("window name must not be null")));
	name = TextDatumGetCString(values[0]);
	sf_validate_name("window", name);
	strlcpy(w->name, name, sizeof(w->name));
	if (nulls[1])
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("kind of window \"%s\" must not be null", w->name)));
	kind = TextDatumGetCString(values[1]);
	o = sf_window_ops_by_name(kind);
	if (o == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("window \"%s\" has unknown kind \"%s\"", w->name, sf_msg_cstr(kind)),
				 errhint("Use %s.", sf_window_ctor_hint())));
	w->kind = o->kind;
	/* size, step, gap: columns 2 to 4, params bits 0 to 2 */
	for (i = 0; i < SF_WPARAM_NBITS; i++)
		needed[2 + i] = (o->params & (1 << i)) != 0;
	for (i = 2; i < 5; i++)
	{
		if (needed[i] && nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s of window \"%s\" must not be null",
							sf_window_param_name(1 << (i - 2)), w->name)));
		if (!needed[i] && !nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s window \"%s\" takes no %s", kind, w->name,
							sf_window_param_name(1 << (i - 2)))));
	}
	w->size = nulls[2] ? 0 : DatumGetInt64(values[2]);
	w->step = nulls[3] ? 0 : DatumGetInt64(values[3]);
	w->gap = nulls[4] ? 0 : DatumGetInt64(values[4]);
}

/* A window_def datum, checked as create_pipeline checks it (define.c, manage.c) */
void
sf_window_def_arg(Datum d, SfWindowDef *w)
{
	window_from_datum(d, w);
	sf_validate_window(w);
}

/*
 * The miss of sf_arg_text_kept (api.h): data[0..len) as a C string, kept in
 * kept[*nkept] in fn_mcxt while *nkept < max, else in the caller's context
 * (freed with the call's, as text_to_cstring's copy was).
 */
char *
sf_kept_text_add(FunctionCallInfo fcinfo, SfKeptText *kept, int *nkept,
				 int max, const char *data, int len)
{
	MemoryContext old;
	char	   *str;

	if (*nkept >= max)
		return pnstrdup(data, len);
	old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	str = pnstrdup(data, len);
	MemoryContextSwitchTo(old);
	kept[*nkept].len = len;
	kept[*nkept].str = str;
	(*nkept)++;
	return str;
}

/*
 * Whether tupdesc is the layout unpack_known reads: natts columns, none
 * dropped, text partition [int8 source_offset] text event_id, text key, int8
 * event_time, int8 value.  The extension's types always are; anything else
 * (a type altered by hand) takes heap_deform_tuple's path.
 */
static bool
delivery_layout_known(TupleDesc tupdesc, bool with_offset)
{
	static const Oid delivery_types[] = {TEXTOID, INT8OID, TEXTOID, TEXTOID,
	INT8OID, INT8OID};
	static const Oid event_types[] = {TEXTOID, TEXTOID, TEXTOID, INT8OID,
	INT8OID};
	const Oid  *types = with_offset ? delivery_types : event_types;
	int			ncols = with_offset ? 6 : 5;

	if (tupdesc->natts != ncols)
		return false;
	for (int f = 0; f < ncols; f++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, f);

		if (att->attisdropped || att->atttypid != types[f])
			return false;
	}
	return true;
}

/* A text column at *off of a tuple's data: its bytes, *off moved past it */
static inline void
known_text(const char *tp, uint32 *off, const char **data, int *len)
{
	const char *v;

	*off = att_align_pointer(*off, TYPALIGN_INT, -1, tp + *off);
	v = tp + *off;
	*off = att_addlength_pointer(*off, -1, v);
	if (VARATT_IS_SHORT(v))
	{
		*data = VARDATA_SHORT(v);
		*len = VARSIZE_SHORT(v) - VARHDRSZ_SHORT;
	}
	else if (!VARATT_IS_EXTENDED(v))
	{
		*data = VARDATA(v);
		*len = VARSIZE(v) - VARHDRSZ;
	}
	else
		sf_text_bytes(PointerGetDatum(v), data, len);	/* compressed inline */
}

/* An int8 column at *off of a tuple's data, *off moved past it */
static inline int64
known_int8(const char *tp, uint32 *off)
{
	int64		v;

	*off = att_align_nominal(*off, TYPALIGN_DOUBLE);
	memcpy(&v, tp + *off, sizeof(int64));
	*off += sizeof(int64);
	return v;
}

/*
 * The distinct partition names of one batch, each copied once (deliveries
 * of a batch come from a few partitions): the NUL-terminated copy of the
 * name data[0..len), made on its first use.  Past SF_BATCH_NAMES distinct
 * names, each further delivery gets its own copy.
 */
#define SF_BATCH_NAMES 16
typedef struct BatchNames
{
	int			n;
	int			last;			/* the entry found last */
	int			len[SF_BATCH_NAMES];
	char	   *name[SF_BATCH_NAMES];
} BatchNames;

static inline const char *
batch_name(BatchNames *names, const char *data, int len)
{
	int			i = names->last;
	char	   *copy;

	if (i < names->n && names->len[i] == len &&
		sf_equal_bytes(names->name[i], data, len))
		return names->name[i];
	for (i = 0; i < names->n; i++)
		if (names->len[i] == len && sf_equal_bytes(names->name[i], data, len))
		{
			names->last = i;
			return names->name[i];
		}
	copy = pnstrdup(data, len);
	if (names->n < SF_BATCH_NAMES)
	{
		names->len[names->n] = len;
		names->name[names->n] = copy;
		names->last = names->n++;
	}
	return copy;
}

/*
 * Read a delivery (with_offset) or an event of the known layout
 * (delivery_layout_known) from its tuple, without heap_deform_tuple: false
 * if th has NULLs or fewer columns than the type (then the caller deforms
 * it).  The text values point into th, the partition into names.
 */
static inline bool
unpack_known(HeapTupleHeader th, bool with_offset, BatchNames *names,
			 SfDelivery *d)
{
	const char *tp;
	uint32		off = 0;
	const char *part;
	int			part_len;

	if ((th->t_infomask & HEAP_HASNULL) != 0 ||
		HeapTupleHeaderGetNatts(th) != (with_offset ? 6 : 5))
		return false;
	tp = (const char *) th + th->t_hoff;
	known_text(tp, &off, &part, &part_len);
	d->partition = batch_name(names, part, part_len);
	d->source_offset = with_offset ? known_int8(tp, &off) : -1;
	known_text(tp, &off, &d->event_id, &d->event_id_len);
	known_text(tp, &off, &d->key, &d->key_len);
	d->event_time = known_int8(tp, &off);
	d->value = known_int8(tp, &off);
	return true;
}

/*
 * The deliveries of an array of streamforge.delivery (with_offset) or
 * streamforge.event (no source_offset column), in array order, with
 * *n_out elements.  A NULL is only recorded, in nullfield (per element: -2
 * complete, -1 a NULL element, else the first NULL column of the array's
 * own type): the first failing delivery in array order decides the error,
 * and an earlier one may fail in the engine.
 *
 * The elements are read in place (array_iter), and a complete element of
 * the extension's own layout by that layout (unpack_known); partition
 * names are copied once per batch (BatchNames).  Others are deformed.
 */
SfDelivery *
sf_unpack_deliveries(ArrayType *arr, bool with_offset, int **nullfield_out,
					 int *n_out)
{
	int			ncols = with_offset ? 6 : 5;
	int			off = with_offset ? 1 : 0;	/* columns after partition */
	int			n;
	int			i;
	SfDelivery *ds;
	int		   *nullfield;
	TupleDesc	tupdesc = NULL;
	bool		known = false;
	Oid			elemtype = ARR_ELEMTYPE(arr);
	int16		typlen;
	bool		typbyval;
	char		typalign;
	array_iter	it;
	BatchNames	names;

	get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
	n = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
	ds = palloc_extended(Max(n, 1) * sizeof(SfDelivery), MCXT_ALLOC_HUGE);
	nullfield = palloc_extended(Max(n, 1) * sizeof(int), MCXT_ALLOC_HUGE);
	names.n = 0;
	names.last = 0;
	array_iter_setup(&it, (AnyArrayType *) arr);

	for (i = 0; i < n; i++)
	{
		HeapTupleHeader th;
		Datum		elem;
		bool		isnull;
		Datum		values[6];
		bool		nulls[6];
		SfDelivery *d = &ds[i];
		int			f;

		CHECK_FOR_INTERRUPTS();
		elem = array_iter_next(&it, &isnull, i, typlen, typbyval, typalign);
		nullfield[i] = -2;
		if (isnull)
		{
			nullfield[i] = -1;
			continue;
		}
		/* an element of an array is stored plain: no call to see that */
		if (likely(!VARATT_IS_EXTENDED(DatumGetPointer(elem))))
			th = (HeapTupleHeader) DatumGetPointer(elem);
		else
			th = DatumGetHeapTupleHeader(elem);
		if (tupdesc == NULL)
		{
			tupdesc = lookup_rowtype_tupdesc_copy(HeapTupleHeaderGetTypeId(th),
												  HeapTupleHeaderGetTypMod(th));
			if (tupdesc->natts != ncols)
				elog(ERROR, "streamforge: unexpected %s layout",
					 with_offset ? "delivery" : "event");
			known = delivery_layout_known(tupdesc, with_offset);
		}
		if (known && unpack_known(th, with_offset, &names, d))
			continue;
		deform_header(th, tupdesc, values, nulls);
		for (f = 0; f < ncols; f++)
			if (nulls[f])
				break;
		if (f < ncols)
		{
			nullfield[i] = f;
			continue;
		}
		d->partition = TextDatumGetCString(values[0]);
		d->source_offset = with_offset ? DatumGetInt64(values[1]) : -1;
		sf_text_bytes(values[1 + off], &d->event_id, &d->event_id_len);
		sf_text_bytes(values[2 + off], &d->key, &d->key_len);
		d->event_time = DatumGetInt64(values[3 + off]);
		d->value = DatumGetInt64(values[4 + off]);
	}
	*nullfield_out = nullfield;
	*n_out = n;
	return ds;
}

/* The error of sf_check_batch_nulls (api.h): see there */
void
sf_batch_null_error(int index, int field, bool with_offset)
{
	/* the columns of streamforge.delivery and of streamforge.event */
	static const char *const delivery_fields[] = {
		"partition", "source_offset", "event_id", "key", "event_time", "value"
	};
	static const char *const event_fields[] = {
		"partition", "event_id", "key", "event_time", "value"
	};

	Assert(field >= -1 && field < (with_offset ? 6 : 5));
	if (with_offset)
	{
		if (field == -1)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("delivery %d of the batch must not be null", index + 1)));
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s of delivery %d of the batch must not be null",
						delivery_fields[field], index + 1)));
	}
	if (field == -1)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("event %d of the batch must not be null", index + 1)));
	ereport(ERROR,
			(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
			 errmsg("%s of event %d of the batch must not be null",
					event_fields[field], index + 1)));
}

/* The error of sf_check_event_id (api.h): see there */
void
sf_empty_event_id_error(int index)
{
	if (index < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("event_id must not be empty")));
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("event_id of event %d of the batch must not be empty",
					index + 1)));
}
