/*-------------------------------------------------------------------------
 *
 * ingest.h
 *	  The SQL glue of the ingestion paths added in 0.2.0: deliveries whose
 *	  offsets the extension assigns (append.c), pipelines with a time unit
 *	  (timeunit.c) and JSON deliveries (ingest_json.c).  Only SQL-facing
 *	  files include this header; the engine knows nothing of them (it
 *	  works in bigint).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef SF_INGEST_H
#define SF_INGEST_H

#include "fmgr.h"
#include "datatype/timestamp.h"
#include "utils/array.h"

#include "streamforge.h"

/* sf_sql.c: unpack a delivery[] or event[] array; a text datum's bytes */
extern SfDelivery *sf_unpack_deliveries(ArrayType *arr, bool with_offset,
										int **nullfield_out, int *n_out);
extern void sf_text_bytes(Datum d, const char **data, int *len);

/* sf_sql.c: apply unpacked deliveries (ingest_batch; ingest_json) */
extern void sf_ingest_deliveries(FunctionCallInfo fcinfo, SfPipeline *p,
								 int64 late_before, SfDelivery *ds,
								 const int *nullfield, int n);

/* append.c: append unpacked events (append_batch; ingest_json) */
extern void sf_append_deliveries(FunctionCallInfo fcinfo, SfPipeline *p,
								 int64 late_before, SfDelivery *ds,
								 const int *nullfield, int n);

/* timeunit.c: create_pipeline's time_unit argument, reading and converting */
extern bool sf_time_unit_arg(FunctionCallInfo fcinfo, int64 *unit_us,
							 Interval **unit);
extern ArrayType *sf_windows_to_units(ArrayType *wins, bool has_unit,
									  int64 unit_us);
extern Datum sf_window_to_units(Datum window, const char *pipeline);
extern void sf_time_unit_store(const char *pipeline, Interval *unit);
extern Interval *sf_time_unit_get(const char *pipeline);
extern int64 sf_time_to_units(TimestampTz t, const Interval *unit);

#endif							/* SF_INGEST_H */
