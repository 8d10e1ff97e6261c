/*-------------------------------------------------------------------------
 *
 * attach_insert.c
 *	  The statement-level AFTER INSERT trigger of an attached table,
 *	  streamforge_internal.attached_insert() (0.4.0, issue 42, item 3:
 *	  in C; it was PL/pgSQL; sql/objects/62_attach.sql describes
 *	  attachments).
 *
 * Per INSERT statement, as the inserting role, with the settings the
 * function's SET clauses pin (search_path, TimeZone, ...):
 *
 *	 1. attach_check (the trigger's form, the columns read, the pipeline
 *		bound, the table owner's privilege), as before;
 *	 2. the rows of the transition table as the mappings make them: the
 *		query of streamforge_internal.attach_insert_query over new_rows
 *		(one column per mapping, with the NULL errors that name the field
 *		and the filter), prepared once per trigger and backend
 *		(persist/attach_rows.c); its rows come to rows_receive one slot at
 *		a time and are copied into the batch's deliveries;
 *	 3. the batch, as append_batch or append_measures_batch applies it
 *		(sf_write_batch; the pipeline opened by name, so the inserting
 *		role's ingest privilege is checked), its changes handed to the
 *		outputs and not returned;
 *	 4. the pipeline's row, as the batch locked it, is still the one bound
 *		(a pipeline dropped and created again under the same name since
 *		attach_check is another pipeline).
 *
 * So the errors and their order are those of the PL/pgSQL trigger, which
 * built an array of streamforge.event (or measures_delivery) rows from the
 * same query and passed it to append_batch: what this file saves is that
 * array, its rows, and the call's result rows.
 *
 * Memory: everything lives in a context of the call, deleted at its end;
 * strings are copied into blocks of it (StrBlock), never moved.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/attach_insert.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "tcop/dest.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"
#include "utils/regproc.h"
#include "utils/snapmgr.h"

#include "api/api.h"

#define STR_BLOCK_SIZE (64 * 1024)

/* The receiver of the rows query: the batch being built */
typedef struct RowsReceiver
{
	DestReceiver pub;
	bool		measures;		/* a measures attachment */
	int			nwords;			/* measures as columns: how many, else 0 */
	MemoryContext cxt;
	SfDelivery *ds;
	int		   *bad;			/* per delivery: -2 complete, else the field */
	Datum	   *arrays;			/* measures: each delivery's bigint[], or */
	int64	   *words;			/* nwords measures per delivery (0 if NULL) */
	uint64	   *masks;			/* and which were NULL */
	int			n;
	int			cap;
	int			first_cap;		/* the statement's rows, at most 64k */
	char	   *block;			/* strings: the current block */
	Size		used;
	Size		size;
	const char *last_partition;	/* the previous row's, for sharing */
	int			last_partition_len;
} RowsReceiver;

/* len bytes of room in r's string blocks, maxaligned */
static char *
rows_room(RowsReceiver *r, Size len)
{
	char	   *s;

	len = MAXALIGN(len);
	if (r->block == NULL || r->used + len > r->size)
	{
		r->size = Max(STR_BLOCK_SIZE, len);
		r->block = MemoryContextAllocHuge(r->cxt, r->size);
		r->used = 0;
	}
	s = r->block + r->used;
	r->used += len;
	return s;
}

/* A text datum's bytes copied into r (NUL-terminated) */
static const char *
rows_text(RowsReceiver *r, Datum d, int *len_out)
{
	const char *data;
	int			len;
	char	   *s;

	sf_text_bytes(d, &data, &len);
	s = rows_room(r, len + 1);
	memcpy(s, data, len);
	s[len] = '\0';
	*len_out = len;
	return s;
}

/*
 * The rows' columns: partition, event_id, key (text), event_time and value
 * (bigint), or for a measures attachment its measures: a bigint[] (the
 * query's column), or one bigint column each (the direct path of
 * persist/attach_rows.c).
 */
static void
rows_startup(DestReceiver *self, int operation, TupleDesc desc)
{
	RowsReceiver *r = (RowsReceiver *) self;
	static const Oid types[5] = {TEXTOID, TEXTOID, TEXTOID, INT8OID, INT8OID};

	r->nwords = 0;
	if (r->measures && desc->natts >= 5 &&
		TupleDescAttr(desc, 4)->atttypid == INT8OID)
		r->nwords = desc->natts - 4;
	else if (desc->natts != 5)
		elog(ERROR, "streamforge: the rows of an attachment have %d columns",
			 desc->natts);
	for (int i = 0; i < desc->natts; i++)
	{
		Oid			want = (i >= 4 && r->measures && r->nwords == 0)
			? INT8ARRAYOID : types[Min(i, 4)];

		if (TupleDescAttr(desc, i)->atttypid != want)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("mapping %d of the attachment is of type %s, not %s",
							i + 1, format_type_be(TupleDescAttr(desc, i)->atttypid),
							format_type_be(want))));
	}
}

/* p (NULL: a new array) of size bytes, in the current context */
static void *
grown(void *p, Size size)
{
	return p == NULL ? palloc_extended(size, MCXT_ALLOC_HUGE)
		: repalloc_huge(p, size);
}

static bool
rows_receive(TupleTableSlot *slot, DestReceiver *self)
{
	RowsReceiver *r = (RowsReceiver *) self;
	MemoryContext old = MemoryContextSwitchTo(r->cxt);
	SfDelivery *d;
	int			i;
	int			len;

	if (r->n == r->cap)
	{
		r->cap = r->cap == 0 ? Max(1024, r->first_cap) : r->cap * 2;
		r->ds = grown(r->ds, r->cap * sizeof(SfDelivery));
		r->bad = grown(r->bad, r->cap * sizeof(int));
		if (r->nwords > 0)
		{
			r->words = grown(r->words, r->cap * sizeof(int64) * r->nwords);
			r->masks = grown(r->masks, r->cap * sizeof(uint64));
		}
		else if (r->measures)
			r->arrays = grown(r->arrays, r->cap * sizeof(Datum));
	}
	i = r->n++;
	d = &r->ds[i];
	r->bad[i] = -2;
	slot_getallattrs(slot);
	for (int f = 0; f < (r->nwords > 0 ? 4 : 5); f++)
		if (slot->tts_isnull[f])
		{
			/* the field's number in streamforge.event / measures_delivery */
			r->bad[i] = (r->measures && f > 0) ? f + 1 : f;
			MemoryContextSwitchTo(old);
			return true;
		}
	/* the partition: most rows repeat the previous row's */
	{
		const char *data;

		sf_text_bytes(slot->tts_values[0], &data, &len);
		if (r->last_partition != NULL && len == r->last_partition_len &&
			memcmp(data, r->last_partition, len) == 0)
			d->partition = r->last_partition;
		else
		{
			d->partition = rows_text(r, slot->tts_values[0], &len);
			r->last_partition = d->partition;
			r->last_partition_len = len;
		}
	}
	d->source_offset = 0;
	d->event_id = rows_text(r, slot->tts_values[1], &d->event_id_len);
	d->key = rows_text(r, slot->tts_values[2], &d->key_len);
	d->event_time = DatumGetInt64(slot->tts_values[3]);
	if (r->nwords > 0)
	{
		int64	   *w = r->words + (Size) i * r->nwords;
		uint64		mask = 0;

		for (int m = 0; m < r->nwords; m++)
		{
			if (slot->tts_isnull[4 + m])
			{
				mask |= (uint64) 1 << m;
				w[m] = 0;
			}
			else
				w[m] = DatumGetInt64(slot->tts_values[4 + m]);
		}
		r->masks[i] = mask;
		d->value = 0;
	}
	else if (r->measures)
	{
		ArrayType  *a = DatumGetArrayTypeP(slot->tts_values[4]);
		char	   *copy = rows_room(r, VARSIZE(a));

		memcpy(copy, a, VARSIZE(a));
		r->arrays[i] = PointerGetDatum(copy);
		d->value = 0;
	}
	else
		d->value = DatumGetInt64(slot->tts_values[4]);
	MemoryContextSwitchTo(old);
	return true;
}

static void
rows_shutdown(DestReceiver *self)
{
}

static void
rows_destroy(DestReceiver *self)
{
}

/* The error of a trigger that attach() did not make */
static void
not_made_by_attach(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
			 errmsg("streamforge_internal.attached_insert() must be created by streamforge.attach()")));
}

PG_FUNCTION_INFO_V1(sf_attached_insert);
Datum
sf_attached_insert(PG_FUNCTION_ARGS)
{
	TriggerData *td;
	Trigger    *tg;
	RowsReceiver r;
	MemoryContext cxt;
	MemoryContext old;
	int64		id;
	SfPipeline *p;
	int64		late_before;
	SfWriteBatch b = {0};

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("trigger functions can only be called as triggers")));
	td = (TriggerData *) fcinfo->context;
	tg = td->tg_trigger;
	if (!TRIGGER_FIRED_FOR_STATEMENT(td->tg_event) ||
		!TRIGGER_FIRED_BY_INSERT(td->tg_event) ||
		!TRIGGER_FIRED_AFTER(td->tg_event))
		not_made_by_attach();

	cxt = AllocSetContextCreate(CurrentMemoryContext,
								"streamforge attached insert",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	sf_attach_begin(td);
	/* as SPI ran the PL/pgSQL check: the commands before, a new snapshot */
	CommandCounterIncrement();
	PushActiveSnapshot(GetTransactionSnapshot());
	{
		char	  **args = palloc0(sizeof(char *) * (tg->tgnargs + 2));
		bool		isnull;

		for (int i = 0; i < tg->tgnargs; i++)
			args[i + 1] = tg->tgargs[i];
		id = sf_attach_check(RelationGetRelid(td->tg_relation), tg->tgname,
							 args, tg->tgnargs, true, &isnull);
	}
	PopActiveSnapshot();

	memset(&r, 0, sizeof(r));
	r.pub.receiveSlot = rows_receive;
	r.pub.rStartup = rows_startup;
	r.pub.rShutdown = rows_shutdown;
	r.pub.rDestroy = rows_destroy;
	r.pub.mydest = DestNone;
	r.measures = (tg->tgnargs == 11);
	r.cxt = cxt;
	/*
	 * Room for every row the statement inserted, not doubled up to it; up
	 * to 64k rows, so that a huge statement whose rows a filter mostly
	 * drops does not reserve for all of them
	 */
	if (td->tg_newtable != NULL)
		r.first_cap = (int) Min(tuplestore_tuple_count(td->tg_newtable), 65536);
	sf_attach_rows(td, (DestReceiver *) &r, r.measures);

	/* the batch, as append_batch / append_measures_batch applies it */
	MemoryContextSwitchTo(cxt);
	p = sf_open_named(fcinfo, tg->tgargs[0], true);
	late_before = sf_late_keep(p);
	sf_require_kind(p, r.measures);
	b.ds = r.ds;
	b.n = r.n;
	b.bad = r.bad;
	b.assign = true;
	b.quiet = true;
	if (r.nwords > 0)
		sf_batch_measures_words(p, &b, r.words, r.nwords, r.masks);
	else if (r.measures)
		sf_batch_measures(p, &b, r.arrays);
	sf_write_batch(fcinfo, p, late_before, &b);

	/*
	 * The pipeline is locked by this transaction now: is the row of that
	 * name, as locked, the one attach_check bound?
	 */
	if (sf_persist_pipeline_id(tg->tgargs[0]) != id)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("pipeline \"%s\" attached to table %s was dropped",
						tg->tgargs[0],
						DatumGetCString(DirectFunctionCall1(regclassout,
															ObjectIdGetDatum(RelationGetRelid(td->tg_relation)))))));
	sf_attach_end();
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	return PointerGetDatum(NULL);
}
