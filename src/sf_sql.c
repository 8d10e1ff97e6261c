/*-------------------------------------------------------------------------
 *
 * sf_sql.c
 *	  The SQL-callable functions of streamforge (SPEC.md section 2).
 *
 * This file is glue only: it checks and converts arguments, asks persist.c
 * for the pipeline (locked and current for write calls), runs the engine,
 * appends the call to the journal, and returns rows.  C names equal the SQL
 * names with an sf_ prefix.
 *
 * Every set-returning function materializes its result in one call
 * (InitMaterializedSRF; an empty change list returns no tuplestore at all,
 * see return_changes), so nothing is held across calls.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#include "ingest.h"
#include "streamforge.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	sf_persist_init();
	DefineCustomIntVariable("streamforge.max_live_buckets",
							"Most live buckets a pipeline may hold.",
							"An event that could take a pipeline past it is refused; 0 means no limit.",
							&sf_max_live_buckets,
							SF_DEFAULT_MAX_LIVE_BUCKETS, 0, INT_MAX,
							PGC_SUSET, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("streamforge.max_checkpoint_size",
							"Largest checkpoint document checkpoint produces and restore and inspect_checkpoint accept.",
							"The size of the document inflated from a compressed checkpoint; larger ones are refused before inflating, and never produced.",
							&sf_max_checkpoint_size,
							SF_DEFAULT_MAX_CHECKPOINT_SIZE, 1, MAX_KILOBYTES,
							PGC_SUSET, GUC_UNIT_KB,
							NULL, NULL, NULL);
	MarkGUCPrefixReserved("streamforge");
}

/* ----------------------------------------------------------------
 * Argument helpers
 * ----------------------------------------------------------------
 */
static void
check_not_null(FunctionCallInfo fcinfo, int argno, const char *what)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", what)));
}

static char *
text_arg(FunctionCallInfo fcinfo, int argno, const char *what)
{
	check_not_null(fcinfo, argno, what);
	return text_to_cstring(PG_GETARG_TEXT_PP(argno));
}

/* The pipeline named by argument 0, opened for reading or writing */
static SfPipeline *
pipeline_arg(FunctionCallInfo fcinfo, bool for_write)
{
	char	   *name = text_arg(fcinfo, 0, "pipeline");

	return sf_persist_open(name, for_write);
}

/* int128 as numeric, exactly */
Datum
sf_int128_numeric(int128 v)
{
	char		buf[48];
	char	   *end = buf + sizeof(buf) - 1;
	char	   *s = end;
	bool		neg = v < 0;
	uint128		u;

	if (v >= PG_INT64_MIN && v <= PG_INT64_MAX)
		return NumericGetDatum(int64_to_numeric((int64) v));
	u = neg ? (uint128) 0 - (uint128) v : (uint128) v;
	*s = '\0';
	do
	{
		*--s = '0' + (int) (u % 10);
		u /= 10;
	} while (u != 0);
	if (neg)
		*--s = '-';
	return DirectFunctionCall3(numeric_in, CStringGetDatum(s),
							   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
}

static Datum
sfstring_text(const SfString *s)
{
	return PointerGetDatum(cstring_to_text_with_len(s->data, s->len));
}

/* Fill values[off..off+7] with a row: window_name .. max */
static void
row_values(const SfPipeline *p, const SfRow *r, Datum *values, bool *nulls)
{
	values[0] = CStringGetTextDatum(p->def.windows[r->addr.window].name);
	values[1] = sfstring_text(r->addr.key);
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
static void
return_changes(FunctionCallInfo fcinfo, const SfPipeline *p,
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
		row_values(p, &c->row, values + 2, nulls + 2);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		MemoryContextSwitchTo(old);
		MemoryContextReset(rowcxt);
	}
	MemoryContextDelete(rowcxt);
#undef SF_CHANGE_COLS
}

/* ----------------------------------------------------------------
 * Window constructors
 * ----------------------------------------------------------------
 */
static const char *const kind_names[] = {"fixed", "sliding", "session"};

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
static void
validate_window(const SfWindowDef *w)
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

static Datum
window_datum(FunctionCallInfo fcinfo, const SfWindowDef *w)
{
	TupleDesc	tupdesc;
	Datum		values[5];
	bool		nulls[5] = {false, false, true, true, true};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);
	values[0] = CStringGetTextDatum(w->name);
	values[1] = CStringGetTextDatum(kind_names[w->kind]);
	switch (w->kind)
	{
		case SF_WINDOW_FIXED:
			values[2] = Int64GetDatum(w->size);
			nulls[2] = false;
			break;
		case SF_WINDOW_SLIDING:
			values[2] = Int64GetDatum(w->size);
			values[3] = Int64GetDatum(w->step);
			nulls[2] = nulls[3] = false;
			break;
		case SF_WINDOW_SESSION:
			values[4] = Int64GetDatum(w->gap);
			nulls[4] = false;
			break;
	}
	return HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls));
}

static void
window_name_arg(FunctionCallInfo fcinfo, SfWindowDef *w)
{
	char	   *name = text_arg(fcinfo, 0, "window name");

	sf_validate_name("window", name);
	strlcpy(w->name, name, sizeof(w->name));
}

PG_FUNCTION_INFO_V1(sf_fixed);
Datum
sf_fixed(PG_FUNCTION_ARGS)
{
	SfWindowDef w = {0};

	window_name_arg(fcinfo, &w);
	check_not_null(fcinfo, 1, "size");
	w.kind = SF_WINDOW_FIXED;
	w.size = PG_GETARG_INT64(1);
	validate_window(&w);
	PG_RETURN_DATUM(window_datum(fcinfo, &w));
}

PG_FUNCTION_INFO_V1(sf_sliding);
Datum
sf_sliding(PG_FUNCTION_ARGS)
{
	SfWindowDef w = {0};

	window_name_arg(fcinfo, &w);
	check_not_null(fcinfo, 1, "size");
	check_not_null(fcinfo, 2, "step");
	w.kind = SF_WINDOW_SLIDING;
	w.size = PG_GETARG_INT64(1);
	w.step = PG_GETARG_INT64(2);
	validate_window(&w);
	PG_RETURN_DATUM(window_datum(fcinfo, &w));
}

PG_FUNCTION_INFO_V1(sf_session);
Datum
sf_session(PG_FUNCTION_ARGS)
{
	SfWindowDef w = {0};

	window_name_arg(fcinfo, &w);
	check_not_null(fcinfo, 1, "gap");
	w.kind = SF_WINDOW_SESSION;
	w.gap = PG_GETARG_INT64(1);
	validate_window(&w);
	PG_RETURN_DATUM(window_datum(fcinfo, &w));
}

/* ----------------------------------------------------------------
 * create_pipeline, drop_pipeline
 * ----------------------------------------------------------------
 */

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
	if (strcmp(kind, "fixed") == 0)
		w->kind = SF_WINDOW_FIXED;
	else if (strcmp(kind, "sliding") == 0)
		w->kind = SF_WINDOW_SLIDING;
	else if (strcmp(kind, "session") == 0)
		w->kind = SF_WINDOW_SESSION;
	else
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

/*
 * The position of the bigint argument called name in the SQL definition
 * this call came through, or -1: the definitions of 0.1.0 and 0.2.0 differ,
 * and the library must serve both (between a package upgrade and ALTER
 * EXTENSION UPDATE).
 */
static int
bigint_arg_by_name(FunctionCallInfo fcinfo, const char *name)
{
	HeapTuple	tup;
	Oid		   *argtypes;
	char	  **argnames;
	char	   *argmodes;
	int			nargs;
	int			found = -1;

	if (fcinfo->flinfo == NULL || !OidIsValid(fcinfo->flinfo->fn_oid))
		return -1;
	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(fcinfo->flinfo->fn_oid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for function %u",
			 fcinfo->flinfo->fn_oid);
	nargs = get_func_arg_info(tup, &argtypes, &argnames, &argmodes);
	for (int i = 0; argnames != NULL && i < nargs && i < PG_NARGS(); i++)
		if (argnames[i] != NULL && strcmp(argnames[i], name) == 0 &&
			argtypes[i] == INT8OID)
			found = i;
	ReleaseSysCache(tup);
	return found;
}

PG_FUNCTION_INFO_V1(sf_create_pipeline);
Datum
sf_create_pipeline(PG_FUNCTION_ARGS)
{
	SfPipelineDef def = {0};
	char	   *name = text_arg(fcinfo, 0, "pipeline name");
	ArrayType  *parts;
	ArrayType  *wins;
	bool		has_unit;
	int64		unit_us = 0;
	Interval   *unit = NULL;
	Datum	   *elems;
	bool	   *elemnulls;
	int			n;
	int			i;

	sf_validate_name("pipeline", name);
	if (sf_persist_exists(name))
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("pipeline \"%s\" already exists", name)));
	strlcpy(def.name, name, sizeof(def.name));

	check_not_null(fcinfo, 1, "partitions");
	check_not_null(fcinfo, 2, "windows");
	check_not_null(fcinfo, 3, "lateness");
	parts = PG_GETARG_ARRAYTYPE_P(1);
	wins = PG_GETARG_ARRAYTYPE_P(2);
	/* interval windows to the time unit (timeunit.c) */
	has_unit = sf_time_unit_arg(fcinfo, &unit_us, &unit);
	wins = sf_windows_to_units(wins, has_unit, unit_us);
	if (array_contains_nulls(parts))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("partition names must not be null")));
	if (array_contains_nulls(wins))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("window definitions must not be null")));

	/* partitions */
	deconstruct_array(parts, TEXTOID, -1, false, TYPALIGN_INT,
					  &elems, &elemnulls, &n);
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a pipeline needs at least one partition")));
	def.npartitions = n;
	def.partitions = palloc(n * sizeof(def.partitions[0]));
	for (i = 0; i < n; i++)
	{
		char	   *pname = TextDatumGetCString(elems[i]);

		sf_validate_name("partition", pname);
		strlcpy(def.partitions[i], pname, SF_NAME_MAX + 1);
	}

	/* windows */
	{
		Oid			elemtype = ARR_ELEMTYPE(wins);
		int16		typlen;
		bool		typbyval;
		char		typalign;

		get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
		deconstruct_array(wins, elemtype, typlen, typbyval, typalign,
						  &elems, &elemnulls, &n);
	}
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a pipeline needs at least one window")));
	if (n > PG_UINT16_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a pipeline can have at most %d windows", PG_UINT16_MAX)));
	def.nwindows = n;
	def.windows = palloc0(n * sizeof(SfWindowDef));
	for (i = 0; i < n; i++)
	{
		window_from_datum(elems[i], &def.windows[i]);
		validate_window(&def.windows[i]);
	}

	sf_check_def_limits(&def);
	sf_def_normalize(&def);

	def.lateness = PG_GETARG_INT64(3);
	if (def.lateness < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lateness must not be negative"),
				 errdetail("The lateness given is " INT64_FORMAT ".", def.lateness)));

	/* SPEC.md 6; 0.1.0's SQL definition passes no retention */
	{
		int			r = bigint_arg_by_name(fcinfo, "retention");

		def.has_retention = r >= 0 && !PG_ARGISNULL(r);
		def.retention = def.has_retention ? PG_GETARG_INT64(r) : 0;
	}
	if (def.retention < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("retention must not be negative"),
				 errdetail("The retention given is " INT64_FORMAT ".", def.retention)));

	sf_persist_create(&def);
	if (has_unit)
		sf_time_unit_store(def.name, unit);
	PG_RETURN_VOID();
}

/*
 * Detach the tables attached to the pipeline (62_attach.sql) before the
 * pipeline goes, so that no attachment outlives it: a pipeline created
 * later under the same name must not receive their rows.  The triggers go
 * first, before the pipeline's row is locked, so that an insert running
 * meanwhile finishes (or waits) instead of deadlocking with the drop.  The
 * tables may belong to other roles: the SQL runs as the extension's owner,
 * once sf_call_as_owner has checked the caller's admin privilege.  The SQL
 * of 0.2.0, still in place between a package upgrade and ALTER EXTENSION
 * UPDATE, has no drop_attachments: nothing to do then.
 */
static void
drop_attachments(FunctionCallInfo fcinfo)
{
	static const char *const signature =
		"streamforge_internal.drop_attachments(pg_catalog.text)";
	Datum		fn;

	LOCAL_FCINFO(lookup, 1);

	InitFunctionCallInfoData(*lookup, NULL, 1, InvalidOid, NULL, NULL);
	lookup->args[0].value = CStringGetTextDatum(signature);
	lookup->args[0].isnull = false;
	fn = to_regprocedure(lookup);
	if (lookup->isnull || !OidIsValid(DatumGetObjectId(fn)))
		return;
	(void) sf_call_as_owner(fcinfo, SF_PRIV_ADMIN, signature);
}

PG_FUNCTION_INFO_V1(sf_drop_pipeline);
Datum
sf_drop_pipeline(PG_FUNCTION_ARGS)
{
	char	   *name = text_arg(fcinfo, 0, "pipeline");

	drop_attachments(fcinfo);
	sf_persist_drop(name);
	sf_sink_drop(name);
	PG_RETURN_VOID();
}

/* ----------------------------------------------------------------
 * Write calls
 * ----------------------------------------------------------------
 */
/* A text datum's bytes (detoasted, not copied, not NUL-terminated) */
void
sf_text_bytes(Datum d, const char **data, int *len)
{
	text	   *t = (text *) pg_detoast_datum_packed((struct varlena *) DatumGetPointer(d));

	*data = VARDATA_ANY(t);
	*len = VARSIZE_ANY_EXHDR(t);
}

static void
check_event_id(const SfDelivery *d)
{
	if (d->event_id_len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("event_id must not be empty")));
}

/*
 * Apply the one delivery in fcinfo's arguments (those of ingest and
 * ingest_count) and collect its changes into *changes, allocated in the
 * caller's context.  The changes have reached the durable outputs when this
 * returns; the caller only chooses how to hand them back.  Returns the
 * pipeline, opened for writing, for return_changes.
 */
static SfPipeline *
ingest_one(FunctionCallInfo fcinfo, SfChangeList *changes)
{
	SfPipeline *p = pipeline_arg(fcinfo, true);
	SfDelivery	d;
	int64		late_before = p->nlate;

	d.partition = text_arg(fcinfo, 1, "partition");
	check_not_null(fcinfo, 2, "source_offset");
	check_not_null(fcinfo, 3, "event_id");
	check_not_null(fcinfo, 4, "key");
	check_not_null(fcinfo, 5, "event_time");
	check_not_null(fcinfo, 6, "value");
	d.source_offset = PG_GETARG_INT64(2);
	sf_text_bytes(PG_GETARG_DATUM(3), &d.event_id, &d.event_id_len);
	sf_text_bytes(PG_GETARG_DATUM(4), &d.key, &d.key_len);
	d.event_time = PG_GETARG_INT64(5);
	d.value = PG_GETARG_INT64(6);
	check_event_id(&d);

	sf_engine_ingest(p, &d, changes);
	sf_journal_ingest(p, &d, 1);
	sf_sink_emit(p, changes, late_before);
	return p;
}

PG_FUNCTION_INFO_V1(sf_ingest);
Datum
sf_ingest(PG_FUNCTION_ARGS)
{
	SfChangeList changes = {0};
	SfPipeline *p = ingest_one(fcinfo, &changes);

	return_changes(fcinfo, p, &changes);
	return (Datum) 0;
}

/*
 * ingest_count: ingest, returning how many changes (rows of ingest) the
 * call caused instead of the changes themselves.  Not set-returning, so
 * PL/pgSQL evaluates `n := streamforge.ingest_count(...)` on its
 * simple-expression path without starting the executor per call; the
 * changes reach the durable outputs (sink.c) all the same.
 */
PG_FUNCTION_INFO_V1(sf_ingest_count);
Datum
sf_ingest_count(PG_FUNCTION_ARGS)
{
	SfChangeList changes = {0};

	(void) ingest_one(fcinfo, &changes);
	PG_RETURN_INT32(changes.n);
}

/* How many deliveries ahead ingest_batch prefetches identity slots */
#define SF_PREFETCH_DISTANCE 8

/*
 * Apply n unpacked deliveries in array order, all or none, and return
 * their changes as the rows of fcinfo's set-returning call: the second half
 * of ingest_batch, shared with ingest_json (ingest_json.c).  Caller has
 * opened p for writing (sf_persist_open) and read late_before = p->nlate
 * then.  nullfield[i] (NULL: every delivery is complete) is -2 for a
 * complete delivery, -1 for a NULL one, else the index of its first NULL
 * field: the first failing delivery in array order decides the error, and
 * an earlier delivery may fail in the engine.
 */
void
sf_ingest_deliveries(FunctionCallInfo fcinfo, SfPipeline *p, int64 late_before,
					 SfDelivery *ds, const int *nullfield, int n)
{
	static const char *const fields[] = {
		"partition", "source_offset", "event_id", "key", "event_time", "value"
	};
	SfDeliveryHash *hashes;		/* from the prefetch */
	SfChangeList changes = {0};
	int			i;

	hashes = palloc_extended(Max(n, 1) * sizeof(SfDeliveryHash),
							 MCXT_ALLOC_HUGE);
	/* Apply in order, prefetching a few deliveries ahead */
	for (i = 0; i < Min(n, SF_PREFETCH_DISTANCE); i++)
		if (nullfield == NULL || nullfield[i] == -2)
			sf_delivery_prefetch(p, &ds[i], &hashes[i]);
	for (i = 0; i < n; i++)
	{
		int			ahead = i + SF_PREFETCH_DISTANCE;

		CHECK_FOR_INTERRUPTS();
		if (ahead < n && (nullfield == NULL || nullfield[ahead] == -2))
			sf_delivery_prefetch(p, &ds[ahead], &hashes[ahead]);
		if (nullfield != NULL && nullfield[i] == -1)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("delivery %d of the batch must not be null", i + 1)));
		if (nullfield != NULL && nullfield[i] >= 0)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s of delivery %d of the batch must not be null",
							fields[nullfield[i]], i + 1)));
		check_event_id(&ds[i]);
		sf_engine_ingest_hashed(p, &ds[i], &hashes[i], &changes);
	}
	if (n > 0)
		sf_journal_ingest(p, ds, n);
	sf_sink_emit(p, &changes, late_before);
	return_changes(fcinfo, p, &changes);
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

PG_FUNCTION_INFO_V1(sf_ingest_batch);
Datum
sf_ingest_batch(PG_FUNCTION_ARGS)
{
	SfPipeline *p = pipeline_arg(fcinfo, true);
	int64		late_before = p->nlate;
	SfDelivery *ds;
	int		   *nullfield;
	int			n;

	check_not_null(fcinfo, 1, "deliveries");
	ds = sf_unpack_deliveries(PG_GETARG_ARRAYTYPE_P(1), true, &nullfield, &n);
	sf_ingest_deliveries(fcinfo, p, late_before, ds, nullfield, n);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(sf_advance);
Datum
sf_advance(PG_FUNCTION_ARGS)
{
	SfPipeline *p = pipeline_arg(fcinfo, true);
	char	   *partition = text_arg(fcinfo, 1, "partition");
	int64		progress;
	SfChangeList changes = {0};

	check_not_null(fcinfo, 2, "progress");
	progress = PG_GETARG_INT64(2);
	sf_engine_advance(p, partition, progress, &changes);
	sf_journal_advance(p, partition, progress);
	sf_sink_emit(p, &changes, p->nlate);
	return_changes(fcinfo, p, &changes);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(sf_mark_idle);
Datum
sf_mark_idle(PG_FUNCTION_ARGS)
{
	SfPipeline *p = pipeline_arg(fcinfo, true);
	char	   *partition = text_arg(fcinfo, 1, "partition");
	SfChangeList changes = {0};

	sf_engine_mark_idle(p, partition, &changes);
	sf_journal_mark_idle(p, partition);
	sf_sink_emit(p, &changes, p->nlate);
	return_changes(fcinfo, p, &changes);
	return (Datum) 0;
}

/* ----------------------------------------------------------------
 * Checkpoints
 * ----------------------------------------------------------------
 */
PG_FUNCTION_INFO_V1(sf_checkpoint);
Datum
sf_checkpoint(PG_FUNCTION_ARGS)
{
	SfPipeline *p = pipeline_arg(fcinfo, false);
	MemoryContext cxt = CurrentMemoryContext;
	bytea	   *volatile result = NULL;

	/* a state past one document's size: say so, and what to do */
	PG_TRY();
	{
		result = sf_checkpoint_encode(p);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		if (edata->sqlerrcode != ERRCODE_PROGRAM_LIMIT_EXCEEDED &&
			edata->sqlerrcode != ERRCODE_OUT_OF_MEMORY)
			PG_RE_THROW();
		FlushErrorState();
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("state of pipeline \"%s\" is too large for a checkpoint",
						p->def.name),
				 errdetail("%s", edata->detail ? edata->detail : edata->message),
				 edata->hint ?
				 errhint("%s", edata->hint) :
				 errhint("Advance the watermark so that buckets are finalized, or lower streamforge.max_live_buckets.")));
	}
	PG_END_TRY();
	PG_RETURN_BYTEA_P(result);
}

PG_FUNCTION_INFO_V1(sf_restore);
Datum
sf_restore(PG_FUNCTION_ARGS)
{
	char	   *name = text_arg(fcinfo, 0, "pipeline");
	bytea	   *cp;

	check_not_null(fcinfo, 1, "checkpoint");
	cp = PG_GETARG_BYTEA_PP(1);
	sf_persist_restore(name, VARDATA_ANY(cp), VARSIZE_ANY_EXHDR(cp));
	sf_sink_restore(name);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(sf_inspect_checkpoint);
Datum
sf_inspect_checkpoint(PG_FUNCTION_ARGS)
{
	bytea	   *cp = PG_GETARG_BYTEA_PP(0);
	char	   *doc;

	sf_check_checkpoint_size(VARDATA_ANY(cp), VARSIZE_ANY_EXHDR(cp));
	doc = sf_checkpoint_document(VARDATA_ANY(cp), VARSIZE_ANY_EXHDR(cp));

	/*
	 * A document past jsonb's limit gets jsonb's own error, before
	 * jsonb_in builds structures larger than palloc allows (XX000).
	 */
	if (strlen(doc) > JENTRY_OFFLENMASK)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("total size of jsonb object elements exceeds the maximum of %d bytes",
						JENTRY_OFFLENMASK)));
	return DirectFunctionCall1(jsonb_in, CStringGetDatum(doc));
}

/* ----------------------------------------------------------------
 * Inspection
 * ----------------------------------------------------------------
 */
PG_FUNCTION_INFO_V1(sf_watermark);
Datum
sf_watermark(PG_FUNCTION_ARGS)
{
	SfPipeline *p = pipeline_arg(fcinfo, false);

	if (!p->has_watermark)
		PG_RETURN_NULL();
	PG_RETURN_INT64(p->watermark);
}

static void
return_rows(FunctionCallInfo fcinfo, bool visible_only)
{
#define SF_RESULT_COLS 8
	SfPipeline *p = pipeline_arg(fcinfo, false);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	SfRow	   *rows;
	int64		n;
	int64		i;
	MemoryContext rowcxt;

	InitMaterializedSRF(fcinfo, 0);
	Assert(rsinfo->setDesc->natts == SF_RESULT_COLS);
	n = sf_collect_rows(p, visible_only, &rows);
	rowcxt = AllocSetContextCreate(CurrentMemoryContext, "streamforge row",
								   ALLOCSET_SMALL_SIZES);
	for (i = 0; i < n; i++)
	{
		Datum		values[SF_RESULT_COLS];
		bool		nulls[SF_RESULT_COLS];
		MemoryContext old;

		CHECK_FOR_INTERRUPTS();
		old = MemoryContextSwitchTo(rowcxt);
		row_values(p, &rows[i], values, nulls);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		MemoryContextSwitchTo(old);
		MemoryContextReset(rowcxt);
	}
	MemoryContextDelete(rowcxt);
#undef SF_RESULT_COLS
}

PG_FUNCTION_INFO_V1(sf_live);
Datum
sf_live(PG_FUNCTION_ARGS)
{
	return_rows(fcinfo, false);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(sf_visible);
Datum
sf_visible(PG_FUNCTION_ARGS)
{
	return_rows(fcinfo, true);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(sf_late_events);
Datum
sf_late_events(PG_FUNCTION_ARGS)
{
#define SF_LATE_COLS 8
	SfPipeline *p = pipeline_arg(fcinfo, false);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int64		i;

	InitMaterializedSRF(fcinfo, 0);
	Assert(rsinfo->setDesc->natts == SF_LATE_COLS);
	for (i = 0; i < p->nlate; i++)
	{
		const SfLateEvent *l = &p->late[i];
		Datum		values[SF_LATE_COLS];
		bool		nulls[SF_LATE_COLS] = {0};

		CHECK_FOR_INTERRUPTS();
		values[0] = Int64GetDatum(l->late_seq);
		values[1] = CStringGetTextDatum(p->def.partitions[l->partition]);
		values[2] = Int64GetDatum(l->source_offset);
		values[3] = PointerGetDatum(cstring_to_text_with_len(l->event->event_id,
															 l->event->event_id_len));
		values[4] = sfstring_text(l->event->key);
		values[5] = Int64GetDatum(l->event->event_time);
		values[6] = Int64GetDatum(l->event->value);
		values[7] = Int64GetDatum(l->watermark);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
#undef SF_LATE_COLS
}

PG_FUNCTION_INFO_V1(sf_partitions);
Datum
sf_partitions(PG_FUNCTION_ARGS)
{
#define SF_PARTITION_COLS 4
	SfPipeline *p = pipeline_arg(fcinfo, false);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			i;

	InitMaterializedSRF(fcinfo, 0);
	Assert(rsinfo->setDesc->natts == SF_PARTITION_COLS);
	for (i = 0; i < p->def.npartitions; i++)
	{
		const SfPartition *part = &p->partitions[i];
		Datum		values[SF_PARTITION_COLS];
		bool		nulls[SF_PARTITION_COLS] = {0};

		values[0] = CStringGetTextDatum(part->name);
		values[1] = Int64GetDatum(part->consumed);
		values[2] = Int64GetDatum(part->progress);
		nulls[2] = !part->has_progress;
		values[3] = BoolGetDatum(part->idle);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
#undef SF_PARTITION_COLS
}

PG_FUNCTION_INFO_V1(sf_stats);
Datum
sf_stats(PG_FUNCTION_ARGS)
{
#define SF_STATS_COLS 15
#define SF_STATS_COLS_010 10	/* the columns of 0.1.0's stats() */
	SfPipeline *p = pipeline_arg(fcinfo, false);
	SfStats		s;
	TupleDesc	tupdesc;
	Datum		values[SF_STATS_COLS];
	bool		nulls[SF_STATS_COLS] = {0};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (tupdesc->natts != SF_STATS_COLS && tupdesc->natts != SF_STATS_COLS_010)
		elog(ERROR, "stats() has an unexpected row type");
	sf_get_stats(p, &s);
	values[0] = Int64GetDatum(s.deliveries);
	values[1] = Int64GetDatum(s.accepted);
	values[2] = Int64GetDatum(s.duplicate_ids);
	values[3] = Int64GetDatum(s.late_events);
	values[4] = Int64GetDatum(s.offset_replays);
	values[5] = Int64GetDatum(s.changes_emitted);
	values[6] = Int64GetDatum(s.live_buckets);
	values[7] = Int64GetDatum(s.visible_rows);
	values[8] = Int32GetDatum((int32) s.partitions);
	values[9] = Int32GetDatum((int32) s.idle_partitions);
	values[10] = Int64GetDatum(s.remembered_identities);
	values[11] = Int64GetDatum(s.remembered_offsets);
	values[12] = Int64GetDatum(s.remembered_late_events);
	values[13] = Int64GetDatum(s.forgotten_offsets);
	values[14] = Int64GetDatum(s.forgotten_late_events);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc),
													  values, nulls)));
#undef SF_STATS_COLS
#undef SF_STATS_COLS_010
}

/* ----------------------------------------------------------------
 * Shared with the management functions (sf_manage.c)
 * ----------------------------------------------------------------
 */

/* A window_def datum, checked as create_pipeline checks it */
void
sf_window_def_arg(Datum d, SfWindowDef *w)
{
	window_from_datum(d, w);
	validate_window(w);
}

/*
 * Materialize changes as SETOF streamforge.change, names from p->def (for
 * the other SQL-facing files: ingest.h, sf_manage.c)
 */
void
sf_return_changes(FunctionCallInfo fcinfo, const SfPipeline *p,
				  const SfChangeList *changes)
{
	return_changes(fcinfo, p, changes);
}
