/*-------------------------------------------------------------------------
 *
 * attach_rows.c
 *	  The statements of an attached table's insert trigger (0.4.0, issue
 *	  42, item 3; api/attach_insert.c is the trigger, sql/objects/
 *	  62_attach.sql the SQL around it).
 *
 * The trigger runs three statements per INSERT statement, in its SPI
 * connection, as the inserting role:
 *
 *	 - streamforge_internal.attach_check(...): the checks of the trigger
 *	   before it does anything (its form, the columns, the pipeline bound,
 *	   the table owner's privilege); returns the pipeline's id;
 *	 - the rows query: streamforge_internal.attach_insert_query(args)
 *	   makes it from the trigger's arguments (one SELECT over the
 *	   transition table new_rows, one column per mapping, in the order of
 *	   streamforge.event or, for a measures attachment, of
 *	   measures_delivery without source_offset); its rows go to the
 *	   caller's DestReceiver, one slot at a time;
 *	 - streamforge_internal.pipeline_id(name), once the batch is applied:
 *	   the pipeline is still the one bound.
 *
 * The rows query is prepared once per trigger and backend, and kept
 * (SPI_keepplan) with the arguments it was made from: a trigger whose
 * arguments changed (a new attachment under the same trigger oid cannot
 * happen, but ALTER TRIGGER ... RENAME keeps the oid) gets a new one.
 * PostgreSQL's plan cache replans it after DDL on what it reads, with the
 * transition table of the statement at hand (SPI's query environment).
 *
 * Memory: the cache of rows queries lives in CacheMemoryContext.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/attach_rows.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "tcop/pquery.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "persist/persist.h"
#include "persist/persist_int.h"

static const SfPlanText check_text = {
	"SELECT streamforge_internal.attach_check($1, $2, $3, true)",
	3, {REGCLASSOID, NAMEOID, TEXTARRAYOID}
};
static const SfPlanText query_text = {
	"SELECT streamforge_internal.attach_insert_query($1)",
	1, {TEXTARRAYOID}
};
static const SfPlanText id_text = {
	"SELECT streamforge_internal.pipeline_id($1)",
	1, {TEXTOID}
};
static SPIPlanPtr check_plan;
static SPIPlanPtr query_plan;
static SPIPlanPtr id_plan;

/* A trigger's kept rows query, by the trigger's oid */
typedef struct RowsQuery
{
	Oid			tgoid;			/* the hash key */
	char	   *args;			/* the arguments it was made from, \0-separated */
	int			args_len;
	SPIPlanPtr	plan;
} RowsQuery;

static HTAB *rows_queries;

/* The trigger's arguments as one \0-separated string, and its length */
static char *
joined_args(const Trigger *tg, int *len)
{
	StringInfoData s;

	initStringInfo(&s);
	for (int i = 0; i < tg->tgnargs; i++)
		appendBinaryStringInfo(&s, tg->tgargs[i], strlen(tg->tgargs[i]) + 1);
	*len = s.len;
	return s.data;
}

/* The trigger's arguments as a text[] */
static Datum
args_array(const Trigger *tg)
{
	Datum	   *elems = palloc(Max(tg->tgnargs, 1) * sizeof(Datum));

	for (int i = 0; i < tg->tgnargs; i++)
		elems[i] = CStringGetTextDatum(tg->tgargs[i]);
	return PointerGetDatum(construct_array(elems, tg->tgnargs, TEXTOID, -1,
										   false, TYPALIGN_INT));
}

/*
 * attach_check for the insert trigger td: returns the id of the pipeline
 * bound.  Caller is connected to SPI.
 */
int64
sf_attach_check(const TriggerData *td)
{
	Datum		values[3];
	bool		isnull;
	Datum		id;

	values[0] = ObjectIdGetDatum(RelationGetRelid(td->tg_relation));
	values[1] = DirectFunctionCall1(namein,
									CStringGetDatum(td->tg_trigger->tgname));
	values[2] = args_array(td->tg_trigger);
	sf_run_plan(&check_plan, &check_text, values, NULL, false, SPI_OK_SELECT);
	if (SPI_processed != 1)
		elog(ERROR, "streamforge: attach_check returned %d rows",
			 (int) SPI_processed);
	id = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1,
					   &isnull);
	if (isnull)
		elog(ERROR, "streamforge: attach_check returned no pipeline id");
	return DatumGetInt64(id);
}

/* The kept rows query of trigger tg, made on first use */
static SPIPlanPtr
rows_plan(const Trigger *tg)
{
	RowsQuery  *q;
	bool		found;
	int			len;
	char	   *args = joined_args(tg, &len);

	if (rows_queries == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(RowsQuery);
		ctl.hcxt = CacheMemoryContext;
		rows_queries = hash_create("streamforge attach rows queries", 16, &ctl,
								   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	q = hash_search(rows_queries, &tg->tgoid, HASH_ENTER, &found);
	if (found && q->plan != NULL && q->args_len == len &&
		memcmp(q->args, args, len) == 0)
		return q->plan;
	if (!found)
	{
		q->args = NULL;
		q->plan = NULL;
	}
	else
	{
		if (q->plan != NULL)
			SPI_freeplan(q->plan);
		q->plan = NULL;
		if (q->args != NULL)
			pfree(q->args);
		q->args = NULL;
	}
	{
		Datum		values[1];
		bool		isnull;
		char	   *sql;
		Oid			argtypes[2] = {TEXTOID, REGCLASSOID};
		SPIPlanPtr	plan;

		values[0] = args_array(tg);
		sf_run_plan(&query_plan, &query_text, values, NULL, false,
					SPI_OK_SELECT);
		if (SPI_processed != 1)
			elog(ERROR, "streamforge: attach_insert_query returned %d rows",
				 (int) SPI_processed);
		sql = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
		isnull = (sql == NULL);
		if (isnull)
			elog(ERROR, "streamforge: attach_insert_query returned NULL");
		plan = SPI_prepare(sql, 2, argtypes);
		if (plan == NULL)
			elog(ERROR, "streamforge: could not prepare the rows of trigger \"%s\": %s",
				 tg->tgname, SPI_result_code_string(SPI_result));
		if (SPI_keepplan(plan) != 0)
			elog(ERROR, "streamforge: could not keep the rows of trigger \"%s\"",
				 tg->tgname);
		q->args = MemoryContextAlloc(CacheMemoryContext, Max(len, 1));
		memcpy(q->args, args, len);
		q->args_len = len;
		q->plan = plan;
	}
	return q->plan;
}

/*
 * Run the rows query of the insert trigger td into dest, as the current
 * role: $1 is the pipeline's name (the trigger's first argument), $2 the
 * table.  Caller is connected to SPI and has registered td's transition
 * tables (SPI_register_trigger_data).
 */
void
sf_attach_rows(const TriggerData *td, DestReceiver *dest)
{
	SPIPlanPtr	plan = rows_plan(td->tg_trigger);
	ParamListInfo params = makeParamList(2);
	Portal		portal;

	params->params[0].value = CStringGetTextDatum(td->tg_trigger->tgargs[0]);
	params->params[0].isnull = false;
	params->params[0].pflags = PARAM_FLAG_CONST;
	params->params[0].ptype = TEXTOID;
	params->params[1].value = ObjectIdGetDatum(RelationGetRelid(td->tg_relation));
	params->params[1].isnull = false;
	params->params[1].pflags = PARAM_FLAG_CONST;
	params->params[1].ptype = REGCLASSOID;

	/*
	 * Through a portal, as PL/pgSQL's FOR over EXECUTE ran it in 0.3.0: an
	 * error the mapping raises (a NULL, a dimension table's privilege) then
	 * carries no "SQL statement" context quoting the generated query, which
	 * SPI_execute_plan would add.
	 */
	portal = SPI_cursor_open_with_paramlist(NULL, plan, params, false);
	(void) PortalRunFetch(portal, FETCH_FORWARD, FETCH_ALL, dest);
	SPI_cursor_close(portal);
}

/*
 * The id of the pipeline named name that the current role may read, or
 * *isnull (streamforge_internal.pipeline_id).  Caller is connected to SPI.
 */
int64
sf_attach_pipeline_id(const char *name, bool *isnull)
{
	Datum		values[1];
	Datum		id;

	values[0] = CStringGetTextDatum(name);
	sf_run_plan(&id_plan, &id_text, values, NULL, false, SPI_OK_SELECT);
	if (SPI_processed != 1)
		elog(ERROR, "streamforge: pipeline_id returned %d rows",
			 (int) SPI_processed);
	id = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1,
					   isnull);
	return *isnull ? 0 : DatumGetInt64(id);
}

/*
 * Connect the insert trigger td to SPI, with its transition tables, and
 * disconnect it (sf_attach_end) once its statements have run.
 */
void
sf_attach_begin(TriggerData *td)
{
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "streamforge: SPI_connect failed");
	if (SPI_register_trigger_data(td) != SPI_OK_TD_REGISTER)
		elog(ERROR, "streamforge: could not register the transition table");
}

void
sf_attach_end(void)
{
	if (SPI_finish() != SPI_OK_FINISH)
		elog(ERROR, "streamforge: SPI_finish failed");
}
