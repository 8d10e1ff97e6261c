/*-------------------------------------------------------------------------
 *
 * args.c
 *	  Argument and result helpers shared by the SQL functions of api/:
 *	  not-null checks, the pipeline argument, window_def and delivery[]
 *	  arguments, and the rows and changes they return.
 *
 * Every set-returning function materializes its result in one call
 * (InitMaterializedSRF; an empty change list returns no tuplestore at all,
 * see sf_return_changes), so nothing is held across calls.  Results are
 * built in the caller's memory context.
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
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"

#include "api/api.h"

void
sf_check_not_null(FunctionCallInfo fcinfo, int argno, const char *what)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", what)));
}

char *
sf_text_arg(FunctionCallInfo fcinfo, int argno, const char *what)
{
	sf_check_not_null(fcinfo, argno, what);
	return text_to_cstring(PG_GETARG_TEXT_PP(argno));
}

/* The pipeline named by argument 0, opened for reading or writing */
SfPipeline *
sf_pipeline_arg(FunctionCallInfo fcinfo, bool for_write)
{
	char	   *name = sf_text_arg(fcinfo, 0, "pipeline");

	return sf_persist_open(name, for_write);
}

/* Fill values[off..off+7] with a row: window_name .. max */
void
sf_row_values(const SfPipeline *p, const SfRow *r, Datum *values,
			  bool *nulls)
{
	values[0] = CStringGetTextDatum(p->def.windows[r->addr.window].name);
	values[1] = sf_string_text(r->addr.key);
	values[2] = Int64GetDatum(r->addr.start);
	values[3] = Int64GetDatum(r->addr.end);
	values[4] = Int64GetDatum(r->agg.count);
	values[5] = sf_int128_numeric(r->agg.sum);
	values[6] = Int64GetDatum(r->agg.min);
	values[7] = Int64GetDatum(r->agg.max);
	memset(nulls, 0, 8 * sizeof(bool));
}

/*
 * Materialize a change list as SETOF streamforge.change.
 *
 * Most per-row write calls change nothing visible (an event into a window
 * that stays open), and a per-row caller pays this once per event: for an
 * empty list, only the caller's context is checked and no tuplestore, tuple
 * descriptor or memory context is made.  A materialize-mode function that
 * leaves setResult NULL returns the empty set (execSRF.c, for both FROM and
 * the target list), so the result is the same as an empty tuplestore's.
 */
void
sf_return_changes(FunctionCallInfo fcinfo, const SfPipeline *p,
				  const SfChangeList *changes)
{
#define SF_CHANGE_COLS 10
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext rowcxt;
	MemoryContext old;
	int			i;

	if (changes->n == 0)
	{
		/* the checks of InitMaterializedSRF, with the same errors */
		if (rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("set-valued function called in context that cannot accept a set")));
		if (!(rsinfo->allowedModes & SFRM_Materialize))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("materialize mode required, but it is not allowed in this context")));
		rsinfo->returnMode = SFRM_Materialize;
		rsinfo->setResult = NULL;
		rsinfo->setDesc = NULL;
		return;
	}

	InitMaterializedSRF(fcinfo, 0);
	Assert(rsinfo->setDesc->natts == SF_CHANGE_COLS);
	rowcxt = AllocSetContextCreate(CurrentMemoryContext, "streamforge row",
								   ALLOCSET_SMALL_SIZES);
	for (i = 0; i < changes->n; i++)
	{
		const SfChange *c = &changes->items[i];
		Datum		values[SF_CHANGE_COLS];
		bool		nulls[SF_CHANGE_COLS];

		CHECK_FOR_INTERRUPTS();
		old = MemoryContextSwitchTo(rowcxt);
		values[0] = Int64GetDatum(c->seq);
		values[1] = CStringGetTextDatum(c->op == SF_RETRACT ? "retract" : "upsert");
		nulls[0] = nulls[1] = false;
		sf_row_values(p, &c->row, values + 2, nulls + 2);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		MemoryContextSwitchTo(old);
		MemoryContextReset(rowcxt);
	}
	MemoryContextDelete(rowcxt);
#undef SF_CHANGE_COLS
}

static void
check_positive(int64 v, const char *what, const char *window)
{
	if (v <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s of window \"%s\" must be greater than zero", what,
						window),
				 errdetail("The %s given is " INT64_FORMAT ".", what, v)));
}

/* Validate a window definition; shared by the constructors and create */
void
sf_validate_window(const SfWindowDef *w)
{
	sf_validate_name("window", w->name);
	switch (w->kind)
	{
		case SF_WINDOW_FIXED:
			check_positive(w->size, "size", w->name);
			break;
		case SF_WINDOW_SLIDING:
			check_positive(w->size, "size", w->name);
			check_positive(w->step, "step", w->name);
			if (((int128) w->size + w->step - 1) / w->step > SF_MAX_SLIDING_BUCKETS)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("sliding window \"%s\" puts each event into too many buckets",
								w->name),
						 errdetail("size / step must be at most %d.",
								   SF_MAX_SLIDING_BUCKETS)));
			break;
		case SF_WINDOW_SESSION:
			check_positive(w->gap, "gap", w->name);
			break;
	}
}

/* A window_def row (possibly hand-built) as an SfWindowDef; NULLs are 22004 */
static void
window_from_datum(Datum d, SfWindowDef *w)
{
	HeapTupleHeader th = DatumGetHeapTupleHeader(d);
	TupleDesc	tupdesc;
	HeapTupleData tuple;
	Datum		values[5];
	bool		nulls[5];
	char	   *name;
	char	   *kind;
	static const char *const params[] = {NULL, NULL, "size", "step", "gap"};
	bool		needed[5] = {true, true, false, false, false};
	int			i;

	tupdesc = lookup_rowtype_tupdesc(HeapTupleHeaderGetTypeId(th),
									 HeapTupleHeaderGetTypMod(th));
	if (tupdesc->natts != 5)
		elog(ERROR, "streamforge: unexpected window_def layout");
	tuple.t_len = HeapTupleHeaderGetDatumLength(th);
	ItemPointerSetInvalid(&tuple.t_self);
	tuple.t_tableOid = InvalidOid;
	tuple.t_data = th;
	heap_deform_tuple(&tuple, tupdesc, values, nulls);
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
	if (!sf_window_kind_parse(kind, &w->kind))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("window \"%s\" has unknown kind \"%s\"", w->name, sf_msg_cstr(kind)),
				 errhint("Use streamforge.fixed(), streamforge.sliding() or streamforge.session().")));
	switch (w->kind)
	{
		case SF_WINDOW_FIXED:
			needed[2] = true;
			break;
		case SF_WINDOW_SLIDING:
			needed[2] = needed[3] = true;
			break;
		case SF_WINDOW_SESSION:
			needed[4] = true;
			break;
	}
	for (i = 2; i < 5; i++)
	{
		if (needed[i] && nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s of window \"%s\" must not be null", params[i],
							w->name)));
		if (!needed[i] && !nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s window \"%s\" takes no %s", kind, w->name,
							params[i])));
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

/* A text datum's bytes (detoasted, not copied, not NUL-terminated) */
void
sf_text_bytes(Datum d, const char **data, int *len)
{
	text	   *t = (text *) pg_detoast_datum_packed((struct varlena *) DatumGetPointer(d));

	*data = VARDATA_ANY(t);
	*len = VARSIZE_ANY_EXHDR(t);
}

/*
 * The deliveries of an array of streamforge.delivery (with_offset) or
 * streamforge.event (no source_offset column), in array order, with
 * *n_out elements.  A NULL is only recorded, in nullfield (per element: -2
 * complete, -1 a NULL element, else the first NULL column of the array's
 * own type): the first failing delivery in array order decides the error,
 * and an earlier one may fail in the engine.
 */
SfDelivery *
sf_unpack_deliveries(ArrayType *arr, bool with_offset, int **nullfield_out,
					 int *n_out)
{
	int			ncols = with_offset ? 6 : 5;
	int			off = with_offset ? 1 : 0;	/* columns after partition */
	Datum	   *elems;
	bool	   *elemnulls;
	int			n;
	int			i;
	SfDelivery *ds;
	int		   *nullfield;
	TupleDesc	tupdesc = NULL;
	Oid			elemtype = ARR_ELEMTYPE(arr);
	int16		typlen;
	bool		typbyval;
	char		typalign;

	get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
	deconstruct_array(arr, elemtype, typlen, typbyval, typalign,
					  &elems, &elemnulls, &n);
	ds = palloc_extended(Max(n, 1) * sizeof(SfDelivery), MCXT_ALLOC_HUGE);
	nullfield = palloc_extended(Max(n, 1) * sizeof(int), MCXT_ALLOC_HUGE);

	for (i = 0; i < n; i++)
	{
		HeapTupleHeader th;
		HeapTupleData tuple;
		Datum		values[6];
		bool		nulls[6];
		SfDelivery *d = &ds[i];
		int			f;

		CHECK_FOR_INTERRUPTS();
		nullfield[i] = -2;
		if (elemnulls[i])
		{
			nullfield[i] = -1;
			continue;
		}
		th = DatumGetHeapTupleHeader(elems[i]);
		if (tupdesc == NULL)
		{
			tupdesc = lookup_rowtype_tupdesc_copy(HeapTupleHeaderGetTypeId(th),
												  HeapTupleHeaderGetTypMod(th));
			if (tupdesc->natts != ncols)
				elog(ERROR, "streamforge: unexpected %s layout",
					 with_offset ? "delivery" : "event");
		}
		tuple.t_len = HeapTupleHeaderGetDatumLength(th);
		ItemPointerSetInvalid(&tuple.t_self);
		tuple.t_tableOid = InvalidOid;
		tuple.t_data = th;
		heap_deform_tuple(&tuple, tupdesc, values, nulls);
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
