/*-------------------------------------------------------------------------
 *
 * progress.c
 *	  The columns of built-in progress (docs/progress.md): a pipeline's
 *	  out_of_orderness and idle_timeout, loaded with its definition and
 *	  stored by create_pipeline, set_out_of_orderness and set_idle_timeout.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/progress.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "common/int.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "codec/codec.h"
#include "engine/engine.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

/*
 * The statements, prepared on first use and kept (catalog.c's kept-plan
 * helper calls sf_load_def, which calls this file: the plans are kept here
 * so that the two files do not call each other).
 */
static SPIPlanPtr load_plan;
static SPIPlanPtr store_plan;

/* How often this backend loaded each pipeline's definition (cache loads) */
typedef struct LoadCount
{
	char		name[SF_NAME_MAX + 1];
	int64		loads;
} LoadCount;

static HTAB *load_counts;

static void
run(SPIPlanPtr *slot, const char *sql, int nargs, Oid *types,
	Datum *values, const char *nulls, bool read_only, int expected)
{
	int			rc;

	if (*slot == NULL)
	{
		SPIPlanPtr	plan = SPI_prepare(sql, nargs, types);

		if (plan == NULL || SPI_keepplan(plan) != 0)
			elog(ERROR, "streamforge: could not prepare statement \"%s\"", sql);
		*slot = plan;
	}
	rc = SPI_execute_plan(*slot, values, nulls, read_only, 0);
	if (rc != expected)
		elog(ERROR, "streamforge: could not run statement \"%s\": %s",
			 sql, SPI_result_code_string(rc));
}

/*
 * The out_of_orderness of pipeline id into def (sf_load_def).  Caller is
 * connected to SPI with a snapshot pushed.
 */
void
sf_progress_load_def(const char *name, int64 id, SfPipelineDef *def)
{
	Datum		arg = Int64GetDatum(id);
	bool		isnull;
	Oid			types[1] = {INT8OID};
	Datum		d;

	if (load_counts == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = SF_NAME_MAX + 1;
		ctl.entrysize = sizeof(LoadCount);
		ctl.hcxt = TopMemoryContext;
		load_counts = hash_create("streamforge loads", 16, &ctl,
								  HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	}
	{
		bool		found;
		LoadCount  *c = hash_search(load_counts, name, HASH_ENTER, &found);

		c->loads = found ? c->loads + 1 : 1;
	}

	def->has_out_of_orderness = false;
	def->out_of_orderness = 0;
	def->has_idle_timeout = false;
	def->idle_timeout_us = 0;

	run(&load_plan,
		"SELECT out_of_orderness, idle_timeout "
		"FROM streamforge.pipeline "
		"WHERE id OPERATOR(pg_catalog.=) $1",
		1, types, &arg, NULL, true, SPI_OK_SELECT);
	if (SPI_processed != 1)
		elog(ERROR, "streamforge: pipeline \"%s\" vanished", name);
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	def->has_out_of_orderness = !isnull;
	def->out_of_orderness = isnull ? 0 : DatumGetInt64(d);
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
	def->has_idle_timeout = !isnull;
	if (!isnull)
	{
		memcpy(&def->idle_timeout, DatumGetIntervalP(d), sizeof(Interval));
		sf_option_check(def, sf_option_find("idle_timeout"), SF_OPT_STORED,
						name);
		(void) sf_interval_us(&def->idle_timeout, &def->idle_timeout_us);
	}
	sf_option_check(def, sf_option_find("out_of_orderness"), SF_OPT_STORED,
					name);
}

/*
 * Store the out_of_orderness of def and, with set_idle, idle_timeout
 * (NULL: none) as pipeline's, in the caller's transaction, as the extension's owner.
 */
void
sf_progress_store(const char *pipeline, const SfPipelineDef *def,
				  bool set_idle, Interval *idle_timeout)
{
	SfSavedUser saved;
	Datum		args[4];
	char		nulls[4] = {' ', def->has_out_of_orderness ? ' ' : 'n',
	idle_timeout != NULL ? ' ' : 'n', ' '};
	Oid			types[4] = {TEXTOID, INT8OID, INTERVALOID, BOOLOID};

	args[0] = CStringGetTextDatum(pipeline);
	args[1] = Int64GetDatum(def->out_of_orderness);
	args[2] = idle_timeout != NULL ? IntervalPGetDatum(idle_timeout) : (Datum) 0;
	args[3] = BoolGetDatum(set_idle);
	sf_become_owner(&saved);
	SPI_connect();
	run(&store_plan,
		"UPDATE streamforge.pipeline SET out_of_orderness = $2, "
		"idle_timeout = CASE WHEN $4 THEN $3 ELSE idle_timeout END "
		"WHERE name OPERATOR(pg_catalog.=) $1",
		4, types, args, nulls, false, SPI_OK_UPDATE);
	if (SPI_processed != 1)
		elog(ERROR, "streamforge: could not store the out_of_orderness of pipeline \"%s\"",
				 pipeline);
	SPI_finish();
	sf_restore_user(&saved);
}

/*
 * How often this backend built pipeline name from its tables (a cold
 * load, a rebuild after eviction or another backend's compaction, a
 * restore): the definition is loaded each time.
 */
int64
sf_progress_cache_loads(const char *name)
{
	LoadCount  *c;

	if (load_counts == NULL)
		return 0;
	c = hash_search(load_counts, name, HASH_FIND, NULL);
	return c != NULL ? c->loads : 0;
}
