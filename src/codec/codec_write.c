/*-------------------------------------------------------------------------
 *
 * codec_write.c
 *	  Checkpoint codec: the writer of the canonical document.
 *
 * ck_write_document appends the JSON document of a pipeline's state to a
 * buffer, in the one spelling the parser (codec_parse.c) accepts: keys in
 * byte order, canonical values (canonjson.c).  docs/checkpoint-format.md
 * describes the document.  codec.c calls it twice: sf_checkpoint_encode
 * wraps its result into the envelope, and decoding re-encodes the state it
 * built and compares (ck_check_reencode), so any change here changes the
 * format and is caught by that check against every existing checkpoint.
 *
 * The pipeline is only read.  The buffer is the caller's; the temporary
 * arrays (collected rows, identities) are palloc'd in CurrentMemoryContext
 * and freed before returning.  No function here keeps state between calls.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/codec/codec_write.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "codec/codec.h"
#include "codec/codec_int.h"
#include "engine/engine.h"

/* A result row: the columns of streamforge.result, keys in byte order */
static void
ck_write_row(StringInfo buf, const SfPipeline *p, const SfRow *row)
{
	const char *wname = p->def.windows[row->addr.window].name;

	appendStringInfoCharMacro(buf, '{');
	sf_json_write_key(buf, "count", true);
	sf_json_write_int64(buf, row->agg.count);
	sf_json_write_key(buf, "key", false);
	sf_json_write_string(buf, row->addr.key->data, row->addr.key->len);
	sf_json_write_key(buf, "max", false);
	sf_json_write_int64(buf, row->agg.max);
	sf_json_write_key(buf, "min", false);
	sf_json_write_int64(buf, row->agg.min);
	sf_json_write_key(buf, "sum", false);
	sf_json_write_int128(buf, row->agg.sum);
	sf_json_write_key(buf, "window_end", false);
	sf_json_write_int64(buf, row->addr.end);
	sf_json_write_key(buf, "window_name", false);
	sf_json_write_string(buf, wname, strlen(wname));
	sf_json_write_key(buf, "window_start", false);
	sf_json_write_int64(buf, row->addr.start);
	appendStringInfoCharMacro(buf, '}');
}

void
ck_write_rows(StringInfo buf, const SfPipeline *p, const SfRow *rows, int64 n)
{
	appendStringInfoCharMacro(buf, '[');
	for (int64 i = 0; i < n; i++)
	{
		if (i > 0)
			appendStringInfoCharMacro(buf, ',');
		ck_write_row(buf, p, &rows[i]);
	}
	appendStringInfoCharMacro(buf, ']');
}
