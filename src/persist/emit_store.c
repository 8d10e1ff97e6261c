/*-------------------------------------------------------------------------
 *
 * emit_store.c
 *	  A pipeline's emit mode in streamforge.pipeline.emit (0.3.0).
 *
 * The column (sql/schema/20_tables.sql) is NULL for the default mode,
 * 'update', so that a pipeline that does not use emit modes has the row it
 * had in 0.2.0; any other mode is stored by its name (engine/emit.c).  Its
 * definition loader (sf_load_def, catalog.c) reads it with
 * sf_emit_load; create_pipeline and set_emit write it with
 * sf_persist_set_emit.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/emit_store.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "engine/engine.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

/*
 * Run once per definition load or mode change, so not kept as plans
 * (catalog.c's kept plans would make the two files call each other)
 */
#define EMIT_LOAD_SQL \
	"SELECT emit FROM streamforge.pipeline WHERE id OPERATOR(pg_catalog.=) $1"
#define EMIT_STORE_SQL \
	"UPDATE streamforge.pipeline SET emit = $2 WHERE name OPERATOR(pg_catalog.=) $1"

/*
 * def->emit of pipeline id from its row.  Caller is in SPI with a snapshot
 * pushed, as the extension's owner (sf_load_def).
 */
void
sf_emit_load(const char *name, int64 id, SfPipelineDef *def)
{
	Datum		arg = Int64GetDatum(id);
	Oid			argtype = INT8OID;
	char	   *emit;

	def->emit = SF_EMIT_UPDATE;
	if (SPI_execute_with_args(EMIT_LOAD_SQL, 1, &argtype, &arg, NULL, true,
							  0) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "streamforge: pipeline \"%s\" vanished", name);
	emit = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	if (emit != NULL &&
		(!sf_emit_mode_parse(emit, &def->emit) || def->emit == SF_EMIT_UPDATE))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("the definition of pipeline \"%s\" is corrupt", name),
				 errdetail("The emit mode \"%s\" is unknown.", sf_msg_cstr(emit))));
}

/*
 * Store the emit mode of the pipeline named name, in the caller's
 * transaction.  Caller holds the pipeline's row lock and has checked the
 * admin privilege (or created the pipeline).
 */
void
sf_persist_set_emit(const char *name, uint8 emit)
{
	Datum		values[2];
	char		nulls[2] = {' ', ' '};
	Oid			argtypes[2] = {TEXTOID, TEXTOID};
	SfSavedUser saved;

	values[0] = CStringGetTextDatum(name);
	values[1] = (Datum) 0;
	if (emit == SF_EMIT_UPDATE)
		nulls[1] = 'n';
	else
		values[1] = CStringGetTextDatum(sf_emit_mode_name(emit));
	sf_become_owner(&saved);
	SPI_connect();
	if (SPI_execute_with_args(EMIT_STORE_SQL, 2, argtypes, values, nulls,
							  false, 0) != SPI_OK_UPDATE || SPI_processed != 1)
		elog(ERROR, "streamforge: pipeline \"%s\" vanished", name);
	SPI_finish();
	sf_restore_user(&saved);
}
