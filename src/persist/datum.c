/*-------------------------------------------------------------------------
 *
 * datum.c
 *	  Engine values as SQL datums, for the outputs (sink.c) and the SQL
 *	  functions (api/): an exact int128 sum as numeric, an interned string
 *	  as text.
 *
 * Results are palloc'd in the caller's memory context.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/datum.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/numeric.h"

#include "codec/codec.h"
#include "engine/engine.h"
#include "persist/persist.h"

/* int128 as numeric, exactly (the digits of codec's sf_int128_out) */
Datum
sf_int128_numeric(int128 v)
{
	if (v >= PG_INT64_MIN && v <= PG_INT64_MAX)
		return NumericGetDatum(int64_to_numeric((int64) v));
	return DirectFunctionCall3(numeric_in, CStringGetDatum(sf_int128_out(v)),
							   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
}

/* An interned string (a key) as text */
Datum
sf_string_text(const SfString *s)
{
	return PointerGetDatum(cstring_to_text_with_len(s->data, s->len));
}
