/*-------------------------------------------------------------------------
 *
 * api.h
 *	  Declarations shared by the files of src/api/, the SQL-callable
 *	  functions of streamforge (SPEC.md section 2) and _PG_init.
 *
 * api/ is the top layer and the only one with PG_FUNCTION_INFO_V1; it runs
 * no SPI (persist/ does; test/run.d/layers.sh checks both).  Its files
 * check and convert arguments, call the engine, the codec and
 * persistence through their public headers, and return rows.  C names of
 * SQL functions equal the SQL names with an sf_ prefix (sf_grant and
 * sf_revoke also serve grant_privilege and revoke_privilege).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/api.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SF_API_H
#define SF_API_H

#include "fmgr.h"
#include "datatype/timestamp.h"
#include "utils/array.h"

#include "codec/codec.h"
#include "engine/engine.h"
#include "persist/persist.h"

/* module.c */
extern void _PG_init(void);

/* args.c: arguments and results shared by the SQL functions */
extern void sf_check_not_null(FunctionCallInfo fcinfo, int argno,
							  const char *what);
extern char *sf_text_arg(FunctionCallInfo fcinfo, int argno,
						 const char *what);
extern SfPipeline *sf_pipeline_arg(FunctionCallInfo fcinfo, bool for_write);
extern void sf_row_values(const SfPipeline *p, const SfRow *r, Datum *values,
						  bool *nulls);
extern void sf_return_changes(FunctionCallInfo fcinfo, const SfPipeline *p,
							  const SfChangeList *changes);
extern void sf_validate_window(const SfWindowDef *w);
extern void sf_window_def_arg(Datum d, SfWindowDef *w);
extern void sf_text_bytes(Datum d, const char **data, int *len);
extern SfDelivery *sf_unpack_deliveries(ArrayType *arr, bool with_offset,
										int **nullfield_out, int *n_out);

/* ingest.c: apply unpacked deliveries (ingest_batch; ingest_json) */
extern void sf_ingest_deliveries(FunctionCallInfo fcinfo, SfPipeline *p,
								 int64 late_before, SfDelivery *ds,
								 const int *nullfield, int n);

/* append.c: append unpacked events (append_batch; ingest_json) */
extern void sf_append_deliveries(FunctionCallInfo fcinfo, SfPipeline *p,
								 int64 late_before, SfDelivery *ds,
								 const int *nullfield, int n);

/* timeunit.c: create_pipeline's time_unit argument, and converting */
extern bool sf_time_unit_arg(FunctionCallInfo fcinfo, int64 *unit_us,
							 Interval **unit);
extern ArrayType *sf_windows_to_units(ArrayType *wins, bool has_unit,
									  int64 unit_us);
extern Datum sf_window_to_units(Datum window, const char *pipeline);
extern int64 sf_time_to_units(TimestampTz t, const Interval *unit);

/* privileges.c: calling internal functions as the extension's owner */
extern Datum sf_call_as_owner(FunctionCallInfo fcinfo, SfPrivilege privilege,
							  const char *signature);
extern Oid	sf_internal_function(const char *signature);

#endif							/* SF_API_H */
