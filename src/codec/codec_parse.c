/*-------------------------------------------------------------------------
 *
 * codec_parse.c
 *	  Checkpoint codec, phase 2: the readers of the document's parts.
 *
 * One reader per top-level key of the checkpoint document (rd_changelog,
 * rd_clock, rd_identities, rd_late, rd_sources; the result rows of
 * "changelog" and "windows" by rd_rows), the mirror of the writers in
 * codec_write.c.  ck_parse (codec.c) reads the keys and calls them in byte
 * order, and reads the definition itself.  Each reads its part, with the
 * pull reader of canonjson.c, into the scratch structures of codec_int.h
 * (CkDoc), accepting exactly the spelling the writer produces.
 *
 * A reader checks only what reading needs: the identities are unique and
 * in event_id byte order, so that the deliveries and late rows that follow
 * them resolve their event_ids by binary search (ck_find_identity).  Every
 * other rule is phase 3's (codec_validate.c, codec_derive.c).  Errors are
 * SF003 (ck_error, or the reader's).
 *
 * Called only by codec.c, in its scratch memory context: everything parsed
 * is palloc'd there and goes with it.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/codec/codec_parse.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "codec/codec.h"
#include "codec/codec_int.h"
#include "engine/engine.h"

/*
 * Grow a scratch array so that it holds at least n + 1 elements (for the
 * readers here and rd_definition in codec.c)
 */
void *
ck_grow(void *arr, int64 *cap, int64 n, Size elsize)
{
	int64		newcap;

	if (n < *cap)
		return arr;
	newcap = (*cap < 8) ? 8 : *cap * 2;
	if ((Size) newcap > MaxAllocSize / elsize)
		newcap = MaxAllocSize / elsize;
	if (newcap <= n)
		ck_error(CK_DOCUMENT, "The document holds more elements than fit in memory.");
	*cap = newcap;
	if (arr == NULL)
		return palloc(newcap * elsize);
	return repalloc(arr, newcap * elsize);
}

/* ----------------------------------------------------------------
 * The parts, in the order of their keys
 * ----------------------------------------------------------------
 */

/* A result row (window index and changelog documents) */
static void
rd_row(SfJsonReader *r, CkRow *row)
{
	memset(row, 0, sizeof(CkRow));
	row->window = -1;
	sf_json_char(r, '{');
	sf_json_key(r, "count", true);
	row->agg.count = sf_json_int64(r, "count");
	sf_json_key(r, "key", false);
	sf_json_string(r, "key", &row->key);
	sf_json_key(r, "max", false);
	row->agg.max = sf_json_int64(r, "max");
	sf_json_key(r, "min", false);
	row->agg.min = sf_json_int64(r, "min");
	if (r->version >= 2)
		ck_read_row_state(r, row);
	sf_json_key(r, "sum", false);
	row->agg.sum = sf_json_int128(r, "sum");
	sf_json_key(r, "window_end", false);
	row->end = sf_json_int64(r, "window_end");
	sf_json_key(r, "window_name", false);
	sf_json_string(r, "window_name", &row->window_name);
	sf_json_key(r, "window_start", false);
	row->start = sf_json_int64(r, "window_start");
	sf_json_char(r, '}');
}

CkRow *
rd_rows(SfJsonReader *r, const char *field, int64 *n)
{
	CkRow	   *rows = NULL;
	int64		cap = 0;

	*n = 0;
	if (sf_json_array_begin(r, field))
	{
		do
		{
			rows = ck_grow(rows, &cap, *n, sizeof(CkRow));
			rd_row(r, &rows[(*n)++]);
		} while (sf_json_array_next(r));
	}
	return rows;
}

void
rd_changelog(SfJsonReader *r, CkDoc *doc)
{
	sf_json_char(r, '{');
	sf_json_key(r, "sequence", true);
	doc->sequence = sf_json_int64(r, "sequence");
	sf_json_key(r, "visible", false);
	doc->visible = rd_rows(r, "visible", &doc->nvisible);
	sf_json_char(r, '}');
}

void
rd_clock(SfJsonReader *r, CkDoc *doc)
{
	int64		cap = 0;

	sf_json_char(r, '{');
	sf_json_key(r, "partitions", true);
	if (sf_json_array_begin(r, "partitions"))
	{
		do
		{
			CkClock    *c;

			doc->clock = ck_grow(doc->clock, &cap, doc->nclock, sizeof(CkClock));
			c = &doc->clock[doc->nclock++];
			sf_json_char(r, '{');
			sf_json_key(r, "idle", true);
			c->idle = sf_json_bool(r, "idle");
			sf_json_key(r, "partition", false);
			sf_json_string(r, "partition", &c->name);
			sf_json_key(r, "progress", false);
			c->progress = sf_json_opt_int64(r, "progress", &c->has_progress);
			sf_json_char(r, '}');
		} while (sf_json_array_next(r));
	}
	sf_json_key(r, "watermark", false);
	doc->watermark = sf_json_opt_int64(r, "watermark", &doc->has_watermark);
	sf_json_char(r, '}');
}

static int
identity_event_id_cmp(const void *elem, const void *target)
{
	return ck_str_cmp(&((const CkIdentity *) elem)->event_id, target);
}

/* The identity (sorted by event_id bytes) with this event_id, or -1 */
static int64
ck_find_identity(const CkDoc *doc, const SfJsonStr *event_id)
{
	return ck_bsearch(doc->ids, sizeof(CkIdentity), 0, doc->nids, event_id,
					  identity_event_id_cmp);
}

void
rd_identities(SfJsonReader *r, CkDoc *doc)
{
	int64		cap = 0;

	if (!sf_json_array_begin(r, "identities"))
		return;
	do
	{
		CkIdentity *id;

		doc->ids = ck_grow(doc->ids, &cap, doc->nids, sizeof(CkIdentity));
		id = &doc->ids[doc->nids++];
		memset(id, 0, sizeof(CkIdentity));
		id->late_row = -1;
		sf_json_char(r, '{');
		if (r->version >= 2)
			ck_read_id_arrival(r, id);
		sf_json_key(r, "event_id", r->version < 2);
		sf_json_string(r, "event_id", &id->event_id);
		sf_json_key(r, "event_time", false);
		id->event_time = sf_json_int64(r, "event_time");
		sf_json_key(r, "key", false);
		sf_json_string(r, "key", &id->key);
		sf_json_key(r, "late", false);
		id->late = sf_json_bool(r, "late");
		if (r->version >= 2)
			ck_read_id_measures(r, id);
		else
		{
			sf_json_key(r, "value", false);
			id->value = sf_json_int64(r, "value");
		}
		sf_json_char(r, '}');

		if (id->event_id.len == 0)
			ck_error(CK_STATE, "Identity %lld has an empty event_id.",
					 (long long) doc->nids);
		if (doc->nids > 1)
		{
			int			c = ck_str_cmp(&doc->ids[doc->nids - 2].event_id,
									   &id->event_id);

			if (c == 0)
				ck_error(CK_STATE, "The event_id \"%s\" has two identities.",
						 sf_msg_str(id->event_id.data, id->event_id.len));
			if (c > 0)
				ck_error(CK_STATE,
						 "The identities are not in event_id byte order at \"%s\".",
						 sf_msg_str(id->event_id.data, id->event_id.len));
		}
	} while (sf_json_array_next(r));
}

void
rd_late(SfJsonReader *r, CkDoc *doc)
{
	int64		cap = 0;

	if (!sf_json_array_begin(r, "late"))
		return;
	do
	{
		CkLate	   *le;

		doc->late = ck_grow(doc->late, &cap, doc->nlate, sizeof(CkLate));
		le = &doc->late[doc->nlate++];
		memset(le, 0, sizeof(CkLate));
		sf_json_char(r, '{');
		sf_json_key(r, "event_id", true);
		sf_json_string(r, "event_id", &le->event_id);
		le->identity = ck_find_identity(doc, &le->event_id);
		if (doc->def.has_retention)
		{
			sf_json_key(r, "event_time", false);
			le->event_time = sf_json_int64(r, "event_time");
			sf_json_key(r, "key", false);
			sf_json_string(r, "key", &le->key);
		}
		sf_json_key(r, "late_seq", false);
		le->late_seq = sf_json_int64(r, "late_seq");
		sf_json_key(r, "partition", false);
		sf_json_string(r, "partition", &le->partition);
		le->pindex = -1;
		sf_json_key(r, "source_offset", false);
		le->source_offset = sf_json_int64(r, "source_offset");
		if (doc->def.has_retention)
		{
			sf_json_key(r, "value", false);
			le->value = sf_json_int64(r, "value");
		}
		sf_json_key(r, "watermark", false);
		le->watermark = sf_json_int64(r, "watermark");
		sf_json_char(r, '}');
	} while (sf_json_array_next(r));
}

void
rd_sources(SfJsonReader *r, CkDoc *doc)
{
	int64		cap = 0;

	if (!sf_json_array_begin(r, "sources"))
		return;
	do
	{
		CkSource   *src;
		int64		dcap = 0;

		doc->sources = ck_grow(doc->sources, &cap, doc->nsources, sizeof(CkSource));
		src = &doc->sources[doc->nsources++];
		memset(src, 0, sizeof(CkSource));
		src->first_unknown_at = -1;
		sf_json_char(r, '{');
		if (doc->def.has_retention)
		{
			sf_json_key(r, "base", true);
			src->base = sf_json_int64(r, "base");
		}
		sf_json_key(r, "deliveries", !doc->def.has_retention);
		if (sf_json_array_begin(r, "deliveries"))
		{
			do
			{
				SfJsonStr	eid;
				int64		idx;

				src->deliveries = ck_grow(src->deliveries, &dcap, src->n,
										  sizeof(int64));
				/* forgotten (retention), or taken out by a recompute */
				if (sf_json_literal(r, "null"))
				{
					src->deliveries[src->n++] = CK_FORGOTTEN;
					continue;
				}
				sf_json_string(r, "deliveries", &eid);
				idx = ck_find_identity(doc, &eid);
				if (idx < 0 && src->first_unknown_at < 0)
				{
					src->first_unknown = eid;
					src->first_unknown_at = src->base + src->n;
				}
				else
					pfree(eid.data);
				src->deliveries[src->n++] = idx;
			} while (sf_json_array_next(r));
		}
		sf_json_key(r, "partition", false);
		sf_json_string(r, "partition", &src->name);
		sf_json_char(r, '}');
	} while (sf_json_array_next(r));
}
