/*-------------------------------------------------------------------------
 *
 * codec_write.c
 *	  Checkpoint codec: the writers of the document's parts.
 *
 * One writer per top-level key of the checkpoint document (wr_changelog,
 * wr_clock, wr_identities, wr_late, wr_sources; the result rows of
 * "changelog" and "windows" by ck_write_rows), the mirror of the readers in
 * codec_parse.c.  ck_write_document (codec.c) writes the keys and calls
 * them in byte order, and writes the definition itself.  Each appends the
 * one canonical spelling of its part (canonjson.c): keys in byte order,
 * arrays in the order docs/checkpoint-format.md gives.
 *
 * The bytes are the format: ck_check_reencode (codec.c) compares the
 * re-encoding of every decoded checkpoint with its document, so a change
 * here that alters one byte makes every existing checkpoint invalid.
 *
 * The pipeline is only read.  The buffer is the caller's; the temporary
 * arrays (collected rows, identities) are palloc'd in CurrentMemoryContext
 * and freed before returning.  Called only by codec.c.
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
	if (p->def.measures != NULL)
		ck_write_row_state(buf, p, &row->agg);
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

/* "changelog": {sequence, visible}, the visible rows in address order */
void
wr_changelog(StringInfo buf, SfPipeline *p)
{
	SfRow	   *rows;
	int64		nrows;

	appendStringInfoCharMacro(buf, '{');
	sf_json_write_key(buf, "sequence", true);
	sf_json_write_int64(buf, p->seq);
	sf_json_write_key(buf, "visible", false);
	nrows = sf_collect_rows(p, true, &rows);
	ck_write_rows(buf, p, rows, nrows);
	pfree(rows);
	appendStringInfoCharMacro(buf, '}');
}

/* "clock": each partition's progress, in definition order, and the watermark */
void
wr_clock(StringInfo buf, const SfPipeline *p)
{
	const SfPipelineDef *def = &p->def;

	appendStringInfoCharMacro(buf, '{');
	sf_json_write_key(buf, "partitions", true);
	appendStringInfoCharMacro(buf, '[');
	for (int i = 0; i < def->npartitions; i++)
	{
		const SfPartition *part = &p->partitions[i];

		if (i > 0)
			appendStringInfoCharMacro(buf, ',');
		appendStringInfoCharMacro(buf, '{');
		sf_json_write_key(buf, "idle", true);
		sf_json_write_bool(buf, part->idle);
		sf_json_write_key(buf, "partition", false);
		sf_json_write_string(buf, def->partitions[i], strlen(def->partitions[i]));
		sf_json_write_key(buf, "progress", false);
		sf_json_write_opt_int64(buf, part->has_progress, part->progress);
		appendStringInfoCharMacro(buf, '}');
	}
	appendStringInfoCharMacro(buf, ']');
	sf_json_write_key(buf, "watermark", false);
	sf_json_write_opt_int64(buf, p->has_watermark, p->watermark);
	appendStringInfoCharMacro(buf, '}');
}

/* "identities", in event_id byte order */
void
wr_identities(StringInfo buf, SfPipeline *p)
{
	SfIdentity **ids;
	int64		nids;

	appendStringInfoCharMacro(buf, '[');
	ids = sf_identity_array(p, &nids);
	for (int64 i = 0; i < nids; i++)
	{
		const SfIdentity *id = ids[i];

		CHECK_FOR_INTERRUPTS();
		if (i > 0)
			appendStringInfoCharMacro(buf, ',');
		appendStringInfoCharMacro(buf, '{');
		if (p->def.measures != NULL)
			ck_write_id_arrival(buf, p, id);
		sf_json_write_key(buf, "event_id", p->def.measures == NULL);
		sf_json_write_string(buf, id->event_id, id->event_id_len);
		sf_json_write_key(buf, "event_time", false);
		sf_json_write_int64(buf, id->event_time);
		sf_json_write_key(buf, "key", false);
		sf_json_write_string(buf, id->key->data, id->key->len);
		sf_json_write_key(buf, "late", false);
		sf_json_write_bool(buf, id->late);
		if (p->def.measures != NULL)
			ck_write_id_measures(buf, p, id);
		else
		{
			sf_json_write_key(buf, "value", false);
			sf_json_write_int64(buf, id->value);
		}
		appendStringInfoCharMacro(buf, '}');
	}
	if (ids)
		pfree(ids);
	appendStringInfoCharMacro(buf, ']');
}

/* "late": the late output, in late_seq order */
void
wr_late(StringInfo buf, const SfPipeline *p)
{
	const SfPipelineDef *def = &p->def;

	appendStringInfoCharMacro(buf, '[');
	for (int64 i = 0; i < p->nlate; i++)
	{
		const SfLateEvent *le = &p->late[i];
		const char *pname = def->partitions[le->partition];

		CHECK_FOR_INTERRUPTS();
		if (i > 0)
			appendStringInfoCharMacro(buf, ',');
		appendStringInfoCharMacro(buf, '{');
		sf_json_write_key(buf, "event_id", true);
		sf_json_write_string(buf, le->event->event_id, le->event->event_id_len);
		if (def->has_retention)
		{
			/* the row outlives its identity: it carries the event */
			sf_json_write_key(buf, "event_time", false);
			sf_json_write_int64(buf, le->event->event_time);
			sf_json_write_key(buf, "key", false);
			sf_json_write_string(buf, le->event->key->data, le->event->key->len);
		}
		sf_json_write_key(buf, "late_seq", false);
		sf_json_write_int64(buf, le->late_seq);
		sf_json_write_key(buf, "partition", false);
		sf_json_write_string(buf, pname, strlen(pname));
		sf_json_write_key(buf, "source_offset", false);
		sf_json_write_int64(buf, le->source_offset);
		if (def->has_retention)
		{
			sf_json_write_key(buf, "value", false);
			sf_json_write_int64(buf, le->event->value);
		}
		sf_json_write_key(buf, "watermark", false);
		sf_json_write_int64(buf, le->watermark);
		appendStringInfoCharMacro(buf, '}');
	}
	appendStringInfoCharMacro(buf, ']');
}

/* "sources": the event delivered at every consumed offset */
void
wr_sources(StringInfo buf, const SfPipeline *p)
{
	const SfPipelineDef *def = &p->def;

	appendStringInfoCharMacro(buf, '[');
	for (int i = 0; i < def->npartitions; i++)
	{
		const SfPartition *part = &p->partitions[i];

		if (i > 0)
			appendStringInfoCharMacro(buf, ',');
		appendStringInfoCharMacro(buf, '{');
		if (def->has_retention)
		{
			/* offsets below base are forgotten, and so are the nulls */
			sf_json_write_key(buf, "base", true);
			sf_json_write_int64(buf, part->base);
		}
		sf_json_write_key(buf, "deliveries", !def->has_retention);
		appendStringInfoCharMacro(buf, '[');
		for (int64 o = part->base; o <= part->consumed; o++)
		{
			uint32		h = part->deliveries[part->head + (o - part->base)];
			const SfIdentity *id = h ? sf_id_ptr(p, h) : NULL;

			if (((o - part->base) & 1023) == 0)
				CHECK_FOR_INTERRUPTS();
			if (o > part->base)
				appendStringInfoCharMacro(buf, ',');
			if (id == NULL || id->forgotten)
				appendStringInfoString(buf, "null");
			else
				sf_json_write_string(buf, id->event_id, id->event_id_len);
		}
		appendStringInfoCharMacro(buf, ']');
		sf_json_write_key(buf, "partition", false);
		sf_json_write_string(buf, def->partitions[i], strlen(def->partitions[i]));
		appendStringInfoCharMacro(buf, '}');
	}
	appendStringInfoCharMacro(buf, ']');
}
