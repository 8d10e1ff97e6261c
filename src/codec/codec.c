/*-------------------------------------------------------------------------
 *
 * codec.c
 *	  Checkpoint codec: a pipeline's state <-> canonical checkpoint bytes.
 *
 * A checkpoint is a 24-byte envelope (magic, format version, flags, payload
 * length, document length, CRC-32) followed by a canonical JSON document,
 * zlib-compressed when it is longer than 4 KiB.  docs/checkpoint-format.md
 * describes every byte; this file is its only implementation.
 *
 * Encoding only reads the pipeline.  Decoding never trusts its input: it
 * runs in four phases, and only the last one touches the engine.
 *
 *	1. envelope: magic, version, flags, lengths and checksum are checked
 *	   before anything is allocated, so a hostile length costs nothing;
 *	2. parse: the strict pull reader of canonjson.c reads the document
 *	   against its fixed schema into scratch structures (CkDoc).  It accepts
 *	   exactly one spelling of every value: keys in schema (= byte) order
 *	   with no whitespace, no unknown, missing or repeated keys, integers
 *	   without leading zeros or fractions, one escape per byte.  Nesting is
 *	   fixed by the schema, so there is no recursion;
 *	3. validate (codec_validate.c): every rule of SPEC.md section 4, first per part (the
 *	   definition, the clock, the delivery history, the late output, the
 *	   window index document and the changelog document, each with its own
 *	   function), then the parts against each other: the changelog's visible
 *	   rows are the ready view of the live buckets, and the live buckets are
 *	   re-derived from the accepted identities (see ck_check_derivation);
 *	4. build: a new pipeline is made with the engine's own functions, and
 *	   re-encoded; the result must equal the document byte for byte, which
 *	   makes "canonical" a property we check rather than hope for.
 *
 * Memory: scratch data lives in a child of the caller's CurrentMemoryContext
 * that is deleted before returning.  The new pipeline lives in its own
 * context under the given parent (sf_pipeline_create).  On any error both
 * are deleted in a PG_CATCH block before the error propagates, so a caller
 * that passes a long-lived parent (the pipeline cache) leaks nothing.
 *
 * No function here keeps state between calls.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <zlib.h>

#include "miscadmin.h"
#include "port/pg_bswap.h"

#include "codec/codec.h"
#include "codec/codec_int.h"
#include "engine/engine.h"

/* ----------------------------------------------------------------
 * Envelope layout (all integers big-endian)
 * ----------------------------------------------------------------
 */
#define CK_MAGIC			"SFCKPT\r\n"
#define CK_MAGIC_LEN		8
#define CK_OFF_VERSION		8	/* uint16 */
#define CK_OFF_FLAGS		10	/* uint16 */
#define CK_OFF_PAYLOAD_LEN	12	/* uint32: bytes after the header */
#define CK_OFF_JSON_LEN		16	/* uint32: length of the JSON document */
#define CK_OFF_CRC			20	/* uint32: CRC-32 of bytes 0..19 + payload */
#define CK_HEADER_LEN		24

#define CK_FORMAT_VERSION	1
#define CK_FLAG_ZLIB		0x0001
#define CK_KNOWN_FLAGS		CK_FLAG_ZLIB

/* Documents longer than this are stored compressed, shorter ones never */
#define CK_COMPRESS_THRESHOLD	4096
#define CK_ZLIB_LEVEL		6

/* Longest document we accept: it must fit one palloc with a terminator */
#define CK_MAX_JSON			((Size) MaxAllocSize - 1)

/* deflate cannot expand data by more than this ratio (RFC 1951 limits) */
#define CK_ZLIB_MAX_RATIO	1032

/* ----------------------------------------------------------------
 * Small helpers
 * ----------------------------------------------------------------
 */

static inline void
ck_put32(char *dst, uint32 v)
{
	v = pg_hton32(v);
	memcpy(dst, &v, 4);
}

static inline void
ck_put16(char *dst, uint16 v)
{
	v = pg_hton16(v);
	memcpy(dst, &v, 2);
}

static inline uint32
ck_get32(const char *src)
{
	uint32		v;

	memcpy(&v, src, 4);
	return pg_ntoh32(v);
}

static inline uint16
ck_get16(const char *src)
{
	uint16		v;

	memcpy(&v, src, 2);
	return pg_ntoh16(v);
}

/* Grow a scratch array so that it holds at least n + 1 elements */
static void *
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

static void
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

static void
ck_write_window_def(StringInfo buf, const SfWindowDef *w)
{
	const char *kind = sf_window_kind_name(w->kind);

	appendStringInfoCharMacro(buf, '{');
	switch (w->kind)
	{
		case SF_WINDOW_FIXED:
			sf_json_write_key(buf, "kind", true);
			sf_json_write_string(buf, kind, strlen(kind));
			sf_json_write_key(buf, "name", false);
			sf_json_write_string(buf, w->name, strlen(w->name));
			sf_json_write_key(buf, "size", false);
			sf_json_write_int64(buf, w->size);
			break;
		case SF_WINDOW_SLIDING:
			sf_json_write_key(buf, "kind", true);
			sf_json_write_string(buf, kind, strlen(kind));
			sf_json_write_key(buf, "name", false);
			sf_json_write_string(buf, w->name, strlen(w->name));
			sf_json_write_key(buf, "size", false);
			sf_json_write_int64(buf, w->size);
			sf_json_write_key(buf, "step", false);
			sf_json_write_int64(buf, w->step);
			break;
		case SF_WINDOW_SESSION:
			sf_json_write_key(buf, "gap", true);
			sf_json_write_int64(buf, w->gap);
			sf_json_write_key(buf, "kind", false);
			sf_json_write_string(buf, kind, strlen(kind));
			sf_json_write_key(buf, "name", false);
			sf_json_write_string(buf, w->name, strlen(w->name));
			break;
	}
	appendStringInfoCharMacro(buf, '}');
}

/*
 * The whole document.  Top-level keys in byte order: changelog, clock,
 * definition, identities, late, sources, windows.
 */
static void
ck_write_document(SfPipeline *p, StringInfo buf)
{
	const SfPipelineDef *def = &p->def;
	SfRow	   *rows;
	int64		nrows;
	SfIdentity **ids;
	int64		nids;

	appendStringInfoCharMacro(buf, '{');

	/* changelog: {sequence, visible} */
	sf_json_write_key(buf, "changelog", true);
	appendStringInfoCharMacro(buf, '{');
	sf_json_write_key(buf, "sequence", true);
	sf_json_write_int64(buf, p->seq);
	sf_json_write_key(buf, "visible", false);
	nrows = sf_collect_rows(p, true, &rows);
	ck_write_rows(buf, p, rows, nrows);
	pfree(rows);
	appendStringInfoCharMacro(buf, '}');

	/* clock */
	sf_json_write_key(buf, "clock", false);
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

	/* definition */
	sf_json_write_key(buf, "definition", false);
	appendStringInfoCharMacro(buf, '{');
	sf_json_write_key(buf, "lateness", true);
	sf_json_write_int64(buf, def->lateness);
	sf_json_write_key(buf, "partitions", false);
	appendStringInfoCharMacro(buf, '[');
	for (int i = 0; i < def->npartitions; i++)
	{
		if (i > 0)
			appendStringInfoCharMacro(buf, ',');
		sf_json_write_string(buf, def->partitions[i], strlen(def->partitions[i]));
	}
	appendStringInfoCharMacro(buf, ']');
	if (def->has_retention)
	{
		/* only with retention: without, the document is that of 0.1.0 */
		sf_json_write_key(buf, "retention", false);
		sf_json_write_int64(buf, def->retention);
	}
	sf_json_write_key(buf, "windows", false);
	appendStringInfoCharMacro(buf, '[');
	for (int i = 0; i < def->nwindows; i++)
	{
		if (i > 0)
			appendStringInfoCharMacro(buf, ',');
		ck_write_window_def(buf, &def->windows[i]);
	}
	appendStringInfoCharMacro(buf, ']');
	appendStringInfoCharMacro(buf, '}');

	/* identities, in event_id byte order */
	sf_json_write_key(buf, "identities", false);
	appendStringInfoCharMacro(buf, '[');
	ids = sf_identity_array(p, &nids);
	for (int64 i = 0; i < nids; i++)
	{
		const SfIdentity *id = ids[i];

		CHECK_FOR_INTERRUPTS();
		if (i > 0)
			appendStringInfoCharMacro(buf, ',');
		appendStringInfoCharMacro(buf, '{');
		sf_json_write_key(buf, "event_id", true);
		sf_json_write_string(buf, id->event_id, id->event_id_len);
		sf_json_write_key(buf, "event_time", false);
		sf_json_write_int64(buf, id->event_time);
		sf_json_write_key(buf, "key", false);
		sf_json_write_string(buf, id->key->data, id->key->len);
		sf_json_write_key(buf, "late", false);
		sf_json_write_bool(buf, id->late);
		sf_json_write_key(buf, "value", false);
		sf_json_write_int64(buf, id->value);
		appendStringInfoCharMacro(buf, '}');
	}
	if (ids)
		pfree(ids);
	appendStringInfoCharMacro(buf, ']');

	/* late output, in late_seq order */
	sf_json_write_key(buf, "late", false);
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
	if (def->has_retention)
	{
		/* late_seq is never reused, even when every row is forgotten */
		sf_json_write_key(buf, "late_sequence", false);
		sf_json_write_int64(buf, p->late_forgotten + p->nlate);
	}

	/* sources: the event delivered at every consumed offset */
	sf_json_write_key(buf, "sources", false);
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

	/* windows: the window index document, live rows in address order */
	sf_json_write_key(buf, "windows", false);
	nrows = sf_collect_rows(p, false, &rows);
	ck_write_rows(buf, p, rows, nrows);
	pfree(rows);

	appendStringInfoCharMacro(buf, '}');
}

/* Wrap a document into the envelope (see docs/checkpoint-format.md) */
static bytea *
ck_wrap(const char *json, Size jsonlen)
{
	const char *payload = json;
	Size		payloadlen = jsonlen;
	uint16		flags = 0;
	char	   *compressed = NULL;
	bytea	   *result;
	char	   *hdr;
	uLong		crc;

	if (jsonlen > CK_MAX_JSON)
		ereport(ERROR,
				errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				errmsg("checkpoint too large"),
				errdetail("The checkpoint document needs %zu bytes, the maximum is %zu.",
						  jsonlen, CK_MAX_JSON));

	/*
	 * restore and inspect_checkpoint refuse a document past this setting
	 * (sf_check_checkpoint_size): producing one would only defer the error
	 * to the restore that needs it.
	 */
	if ((uint64) jsonlen > (uint64) sf_max_checkpoint_size * 1024)
		ereport(ERROR,
				errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				errmsg("checkpoint document exceeds streamforge.max_checkpoint_size"),
				errdetail("The checkpoint document needs %zu bytes, more than streamforge.max_checkpoint_size (%d kB).",
						  jsonlen, sf_max_checkpoint_size),
				errhint("A superuser can raise streamforge.max_checkpoint_size."));

	if (jsonlen > CK_COMPRESS_THRESHOLD)
	{
		uLongf		clen = compressBound((uLong) jsonlen);
		int			rc;

		compressed = palloc_extended(clen, MCXT_ALLOC_HUGE);
		rc = compress2((Bytef *) compressed, &clen, (const Bytef *) json,
					   (uLong) jsonlen, CK_ZLIB_LEVEL);
		if (rc != Z_OK)
			elog(ERROR, "could not compress checkpoint: zlib error %d", rc);
		payload = compressed;
		payloadlen = clen;
		flags |= CK_FLAG_ZLIB;
	}

	if (payloadlen > MaxAllocSize - VARHDRSZ - CK_HEADER_LEN)
		ereport(ERROR,
				errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				errmsg("checkpoint too large"),
				errdetail("The checkpoint needs %zu bytes, the maximum is %zu.",
						  payloadlen + CK_HEADER_LEN,
						  (Size) (MaxAllocSize - VARHDRSZ)));

	result = palloc(VARHDRSZ + CK_HEADER_LEN + payloadlen);
	SET_VARSIZE(result, VARHDRSZ + CK_HEADER_LEN + payloadlen);
	hdr = VARDATA(result);
	memcpy(hdr, CK_MAGIC, CK_MAGIC_LEN);
	ck_put16(hdr + CK_OFF_VERSION, CK_FORMAT_VERSION);
	ck_put16(hdr + CK_OFF_FLAGS, flags);
	ck_put32(hdr + CK_OFF_PAYLOAD_LEN, (uint32) payloadlen);
	ck_put32(hdr + CK_OFF_JSON_LEN, (uint32) jsonlen);
	memcpy(hdr + CK_HEADER_LEN, payload, payloadlen);
	crc = crc32(0L, (const Bytef *) hdr, CK_OFF_CRC);
	crc = crc32(crc, (const Bytef *) payload, (uInt) payloadlen);
	ck_put32(hdr + CK_OFF_CRC, (uint32) crc);

	if (compressed)
		pfree(compressed);
	return result;
}

/*
 * sf_checkpoint_encode
 *		The checkpoint bytes of p's current state, palloc'd in the caller's
 *		CurrentMemoryContext.  p is only read.  The same state always gives
 *		the same bytes (with a given zlib build, for compressed documents).
 *		A document longer than streamforge.max_checkpoint_size (or 1 GB) is
 *		refused with 54000, so that every checkpoint produced under a setting
 *		restores under it.
 */
bytea *
sf_checkpoint_encode(SfPipeline *p)
{
	StringInfoData json;
	bytea	   *result;

	initStringInfo(&json);
	ck_write_document(p, &json);
	result = ck_wrap(json.data, json.len);
	pfree(json.data);
	return result;
}

/* ----------------------------------------------------------------
 * Phase 1: the envelope
 * ----------------------------------------------------------------
 */

/*
 * Check the envelope of data[0..len) and return its document (palloc'd when
 * it had to be decompressed, else pointing into data).  Nothing is allocated
 * before the declared lengths are known to be consistent with len.
 */
static const char *
ck_unwrap(const char *data, Size len, Size *jsonlen)
{
	uint16		version;
	uint16		flags;
	uint32		payloadlen;
	uint32		declared;
	uint32		stored_crc;
	uLong		crc;
	const char *payload;

	if (len < CK_HEADER_LEN)
		ck_error(CK_ENVELOPE,
				 "The checkpoint is %zu bytes long, shorter than its %d-byte header.",
				 len, CK_HEADER_LEN);
	if (memcmp(data, CK_MAGIC, CK_MAGIC_LEN) != 0)
		ck_error(CK_ENVELOPE,
				 "The checkpoint does not start with the streamforge magic bytes.");
	version = ck_get16(data + CK_OFF_VERSION);
	if (version != CK_FORMAT_VERSION)
		ck_error(CK_ENVELOPE,
				 "The checkpoint has format version %u, this build reads version %d.",
				 version, CK_FORMAT_VERSION);
	payloadlen = ck_get32(data + CK_OFF_PAYLOAD_LEN);
	if ((Size) payloadlen != len - CK_HEADER_LEN)
		ck_error(CK_ENVELOPE,
				 "The header declares a payload of %u bytes, but %zu bytes follow it.",
				 payloadlen, len - CK_HEADER_LEN);
	payload = data + CK_HEADER_LEN;

	stored_crc = ck_get32(data + CK_OFF_CRC);
	crc = crc32(0L, (const Bytef *) data, CK_OFF_CRC);
	crc = crc32(crc, (const Bytef *) payload, payloadlen);
	if ((uint32) crc != stored_crc)
		ck_error(CK_ENVELOPE, "Expected checksum %u, found %u.",
				 (uint32) crc, stored_crc);

	flags = ck_get16(data + CK_OFF_FLAGS);
	if ((flags & ~CK_KNOWN_FLAGS) != 0)
		ck_error(CK_ENVELOPE, "The header has unknown flags 0x%04x.",
				 (unsigned) (flags & ~CK_KNOWN_FLAGS));
	declared = ck_get32(data + CK_OFF_JSON_LEN);
	if ((Size) declared > CK_MAX_JSON)
		ck_error(CK_ENVELOPE,
				 "The header declares a document of %u bytes, more than the maximum of %zu.",
				 declared, CK_MAX_JSON);

	if ((flags & CK_FLAG_ZLIB) == 0)
	{
		if (declared != payloadlen)
			ck_error(CK_ENVELOPE,
					 "The header declares an uncompressed document of %u bytes, but the payload has %u bytes.",
					 declared, payloadlen);
		if (declared > CK_COMPRESS_THRESHOLD)
			ck_error(CK_ENVELOPE,
					 "A document of %u bytes must be stored compressed.",
					 declared);
		*jsonlen = declared;
		return payload;
	}
	else
	{
		char	   *json;
		uLongf		outlen = declared;
		uLong		inlen = payloadlen;
		int			rc;

		if (declared <= CK_COMPRESS_THRESHOLD)
			ck_error(CK_ENVELOPE,
					 "A document of %u bytes must be stored uncompressed.",
					 declared);
		if ((uint64) declared > (uint64) payloadlen * CK_ZLIB_MAX_RATIO)
			ck_error(CK_ENVELOPE,
					 "The header declares a document of %u bytes, more than %u compressed bytes can hold.",
					 declared, payloadlen);
		json = palloc_extended((Size) declared + 1, MCXT_ALLOC_HUGE);
		rc = uncompress2((Bytef *) json, &outlen, (const Bytef *) payload, &inlen);
		if (rc != Z_OK)
			ck_error(CK_ENVELOPE,
					 "The compressed payload does not inflate to the declared %u bytes (zlib error %d).",
					 declared, rc);
		if (outlen != declared || inlen != payloadlen)
			ck_error(CK_ENVELOPE,
					 "The compressed payload inflates to %lu bytes from %lu of its %u bytes, expected %u bytes from all of them.",
					 (unsigned long) outlen, (unsigned long) inlen,
					 payloadlen, declared);
		json[declared] = '\0';
		*jsonlen = declared;
		return json;
	}
}

/* ----------------------------------------------------------------
 * Phase 2: the strict parser
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

static CkRow *
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

static void
rd_changelog(SfJsonReader *r, CkDoc *doc)
{
	sf_json_char(r, '{');
	sf_json_key(r, "sequence", true);
	doc->sequence = sf_json_int64(r, "sequence");
	sf_json_key(r, "visible", false);
	doc->visible = rd_rows(r, "visible", &doc->nvisible);
	sf_json_char(r, '}');
}

static void
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

/* A name (partition, window): copied into a fixed-size definition slot */
static void
rd_name(SfJsonReader *r, const char *field, char *dst)
{
	SfJsonStr		s;

	sf_json_string(r, field, &s);
	if (s.len < 1 || s.len > SF_NAME_MAX)
		ck_error(CK_DEFINITION,
				 "The %s name \"%s\" is not between 1 and %d bytes long.",
				 field, sf_msg_str(s.data, s.len), SF_NAME_MAX);
	memcpy(dst, s.data, s.len + 1);
	pfree(s.data);
}

static void
rd_window_def(SfJsonReader *r, SfWindowDef *w)
{
	SfJsonStr		kind;

	memset(w, 0, sizeof(SfWindowDef));
	sf_json_char(r, '{');
	/* "gap" sorts before "kind", so a session starts differently */
	if (sf_json_peek(r, '"') && r->len - r->pos > 4 &&
		memcmp(r->s + r->pos, "\"gap\"", 5) == 0)
	{
		sf_json_key(r, "gap", true);
		w->gap = sf_json_int64(r, "gap");
		sf_json_key(r, "kind", false);
		sf_json_string(r, "kind", &kind);
		if (!sf_window_kind_parse(kind.data, &w->kind) ||
			w->kind != SF_WINDOW_SESSION)
			ck_error(CK_DOCUMENT,
					 "A window with a \"gap\" must be of kind \"session\", not \"%s\".",
					 sf_msg_str(kind.data, kind.len));
		sf_json_key(r, "name", false);
		rd_name(r, "window", w->name);
	}
	else
	{
		sf_json_key(r, "kind", true);
		sf_json_string(r, "kind", &kind);
		sf_json_key(r, "name", false);
		rd_name(r, "window", w->name);
		sf_json_key(r, "size", false);
		w->size = sf_json_int64(r, "size");
		if (!sf_window_kind_parse(kind.data, &w->kind) ||
			w->kind == SF_WINDOW_SESSION)
			ck_error(CK_DOCUMENT,
					 "Window \"%s\" has kind \"%s\"; a window with a \"size\" is \"fixed\" or \"sliding\".",
					 w->name, sf_msg_str(kind.data, kind.len));
		if (w->kind == SF_WINDOW_SLIDING)
		{
			sf_json_key(r, "step", false);
			w->step = sf_json_int64(r, "step");
		}
	}
	sf_json_char(r, '}');
}

static void
rd_definition(SfJsonReader *r, CkDoc *doc)
{
	int64		cap = 0;

	sf_json_char(r, '{');
	sf_json_key(r, "lateness", true);
	doc->def.lateness = sf_json_int64(r, "lateness");
	sf_json_key(r, "partitions", false);
	if (sf_json_array_begin(r, "partitions"))
	{
		do
		{
			if (doc->ndefpartitions >= PG_INT16_MAX)
				ck_error(CK_DEFINITION, "The definition has too many partitions.");
			doc->def.partitions = ck_grow(doc->def.partitions, &cap,
										  doc->ndefpartitions,
										  sizeof(*doc->def.partitions));
			rd_name(r, "partition",
					doc->def.partitions[doc->ndefpartitions++]);
		} while (sf_json_array_next(r));
	}
	/* "retention" sorts between "partitions" and "windows" (SPEC.md 6) */
	if (sf_json_literal(r, ",\"retention\":"))
	{
		doc->def.has_retention = true;
		doc->def.retention = sf_json_int64(r, "retention");
	}
	sf_json_key(r, "windows", false);
	cap = 0;
	if (sf_json_array_begin(r, "windows"))
	{
		do
		{
			/* SfBucket.window is a uint16 */
			if (doc->ndefwindows >= PG_UINT16_MAX)
				ck_error(CK_DEFINITION, "The definition has too many windows.");
			doc->def.windows = ck_grow(doc->def.windows, &cap,
									   doc->ndefwindows, sizeof(SfWindowDef));
			rd_window_def(r, &doc->def.windows[doc->ndefwindows++]);
		} while (sf_json_array_next(r));
	}
	sf_json_char(r, '}');
	doc->def.npartitions = (int) doc->ndefpartitions;
	doc->def.nwindows = (int) doc->ndefwindows;
}

/* Binary search of an event_id among the (sorted) identities; -1 if absent */
static int64
ck_find_identity(const CkDoc *doc, const SfJsonStr *event_id)
{
	int64		lo = 0,
				hi = doc->nids - 1;

	while (lo <= hi)
	{
		int64		mid = lo + (hi - lo) / 2;
		int			c = ck_str_cmp(&doc->ids[mid].event_id, event_id);

		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

static void
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
		sf_json_key(r, "event_id", true);
		sf_json_string(r, "event_id", &id->event_id);
		sf_json_key(r, "event_time", false);
		id->event_time = sf_json_int64(r, "event_time");
		sf_json_key(r, "key", false);
		sf_json_string(r, "key", &id->key);
		sf_json_key(r, "late", false);
		id->late = sf_json_bool(r, "late");
		sf_json_key(r, "value", false);
		id->value = sf_json_int64(r, "value");
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

static void
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

static void
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
				SfJsonStr		eid;
				int64		idx;

				src->deliveries = ck_grow(src->deliveries, &dcap, src->n,
										  sizeof(int64));
				if (doc->def.has_retention && sf_json_literal(r, "null"))
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

static void
ck_parse(const char *json, Size len, CkDoc *doc)
{
	SfJsonReader	r = {json, len, 0};

	memset(doc, 0, sizeof(CkDoc));
	sf_json_char(&r, '{');
	sf_json_key(&r, "changelog", true);
	rd_changelog(&r, doc);
	sf_json_key(&r, "clock", false);
	rd_clock(&r, doc);
	sf_json_key(&r, "definition", false);
	rd_definition(&r, doc);
	sf_json_key(&r, "identities", false);
	rd_identities(&r, doc);
	sf_json_key(&r, "late", false);
	rd_late(&r, doc);
	if (doc->def.has_retention)
	{
		sf_json_key(&r, "late_sequence", false);
		doc->late_sequence = sf_json_int64(&r, "late_sequence");
	}
	else
		doc->late_sequence = doc->nlate;
	sf_json_key(&r, "sources", false);
	rd_sources(&r, doc);
	sf_json_key(&r, "windows", false);
	doc->rows = rd_rows(&r, "windows", &doc->nrows);
	sf_json_char(&r, '}');
	if (r.pos != r.len)
		ck_error(CK_DOCUMENT,
				 "The document ends at byte %zu, but %zu more bytes follow.",
				 r.pos, r.len - r.pos);
}

/* ----------------------------------------------------------------
 * Phase 4: build the pipeline with the engine's functions
 * ----------------------------------------------------------------
 */

/*
 * Build a new pipeline from a validated document.  The clock is restored
 * first, because sf_bucket_restore files each bucket as pending or ready by
 * the current watermark.
 */
static SfPipeline *
ck_build(MemoryContext parent, const SfPipelineDef *def, CkDoc *doc,
		 SfPipeline *volatile *result)
{
	SfPipeline *p;

	p = sf_pipeline_create(parent, def);
	*result = p;

	for (int i = 0; i < def->npartitions; i++)
	{
		p->partitions[i].has_progress = doc->clock[i].has_progress;
		p->partitions[i].progress = doc->clock[i].progress;
		p->partitions[i].idle = doc->clock[i].idle;
	}
	p->has_watermark = doc->has_watermark;
	p->watermark = doc->watermark;

	for (int64 k = 0; k < doc->nids; k++)
	{
		CkIdentity *id = &doc->ids[k];
		SfString   *key;

		if ((k & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		key = sf_intern_key(p, id->key.data, id->key.len);
		id->built = sf_identity_add(p, id->event_id.data, id->event_id.len,
									key, id->event_time, id->value, id->late,
									&id->built_handle);
	}

	for (int i = 0; i < def->npartitions; i++)
	{
		const CkSource *src = &doc->sources[i];

		if (src->base > 0)
			sf_partition_set_base(p, i, src->base);
		for (int64 o = 0; o < src->n; o++)
		{
			int64		k = src->deliveries[o];

			if ((o & 1023) == 0)
				CHECK_FOR_INTERRUPTS();
			sf_partition_append(p, i, k == CK_FORGOTTEN ? 0 : doc->ids[k].built_handle);
		}
	}

	p->late_forgotten = doc->late_sequence - doc->nlate;
	for (int64 n = 0; n < doc->nlate; n++)
	{
		const CkLate *le = &doc->late[n];

		if (le->identity >= 0)
			sf_late_append(p, le->pindex, le->source_offset,
						   doc->ids[le->identity].built, le->watermark);
		else
		{
			/* a late row whose identity is forgotten (retention) */
			sf_late_append_forgotten(p, le->pindex, le->source_offset,
									 le->event_id.data, le->event_id.len,
									 le->key.data, le->key.len,
									 le->event_time, le->value,
									 le->watermark);
		}
		if (p->late_forgotten + p->nlate != le->late_seq ||
			p->late[n].late_seq != le->late_seq)
			elog(ERROR, "streamforge: late output of restored pipeline out of step at late_seq " INT64_FORMAT,
				 le->late_seq);
	}

	for (int64 k = 0; k < doc->nrows; k++)
	{
		const CkRow *row = &doc->rows[k];
		SfString   *key;

		if ((k & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		key = sf_intern_key(p, row->key.data, row->key.len);
		if (sf_bucket_lookup(p, row->window, key, row->start) != NULL)
			ck_error(CK_STATE, "The live bucket %s appears twice.",
					 ck_row_desc(row));
		if (!sf_bucket_restore(p, row->window, key, row->start, row->end,
							   &row->agg))
			ck_error(CK_STATE,
					 "The live session %s touches or overlaps another session of its key.",
					 ck_row_desc(row));
	}

	p->seq = doc->sequence;

	/* forgets nothing (validated), but notes the horizon */
	sf_retention_forget(p);
	return p;
}

/*
 * The restored state must encode to exactly the document it came from.
 * Together with the strict parser this rejects every non-canonical
 * spelling, and it guards against any field the validation above missed.
 */
static void
ck_check_reencode(SfPipeline *p, const char *json, Size jsonlen)
{
	StringInfoData buf;
	Size		i;

	initStringInfo(&buf);
	ck_write_document(p, &buf);
	if ((Size) buf.len == jsonlen && memcmp(buf.data, json, jsonlen) == 0)
	{
		pfree(buf.data);
		return;
	}
	for (i = 0; i < jsonlen && i < (Size) buf.len; i++)
		if (buf.data[i] != json[i])
			break;
	ck_error(CK_DOCUMENT,
			 "The document is not the canonical encoding of its state: they differ from byte %zu on.",
			 i);
}

/*
 * Decode and validate a checkpoint.  With a target definition, build the
 * restored pipeline under parent and return it; without (inspection), build
 * it in scratch memory, throw it away and return NULL, with the validated
 * document in *json_out.
 */
/* not inlined: its locals must not live in ck_decode's PG_TRY frame */
static pg_noinline void
ck_decode_steps(MemoryContext parent, const SfPipelineDef *target,
				const char *data, Size len, char **json_out, bool capped,
				MemoryContext scratch, MemoryContext oldcxt,
				SfPipeline *volatile *p)
{
	const char *json;
	Size		jsonlen;
	CkDoc		doc;

	MemoryContextSwitchTo(scratch);
	json = ck_unwrap(data, len, &jsonlen);
	ck_parse(json, jsonlen, &doc);
	ck_check_definition(&doc, target);

	/*
	 * restore and inspect_checkpoint: streamforge.max_live_buckets, before
	 * the buckets are built (the parsed document is bounded by
	 * max_checkpoint_size already)
	 */
	if (capped && sf_max_live_buckets > 0 &&
		doc.nrows > (int64) sf_max_live_buckets)
	{
		if (target != NULL)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("pipeline \"%s\" would have more than %d live buckets",
							target->name, sf_max_live_buckets),
					 errdetail("The checkpoint holds " INT64_FORMAT " live buckets.",
							   (int64) doc.nrows),
					 errhint("A superuser can raise streamforge.max_live_buckets.")));
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("checkpoint holds more than %d live buckets",
						sf_max_live_buckets),
				 errdetail("The checkpoint holds " INT64_FORMAT " live buckets; validating it builds them.",
						   (int64) doc.nrows),
				 errhint("A superuser can raise streamforge.max_live_buckets.")));
	}
	if (target == NULL)
		strlcpy(doc.def.name, "checkpoint", sizeof(doc.def.name));
	else
		strlcpy(doc.def.name, target->name, sizeof(doc.def.name));
	ck_check_clock(&doc);
	ck_check_sources(&doc);
	ck_check_late(&doc);
	ck_window_index_decode(&doc, doc.rows, doc.nrows);
	ck_changelog_decode(&doc, doc.visible, doc.nvisible);
	ck_check_views(&doc);
	ck_check_derivation(&doc);

	/* here target, if given, equals doc.def field for field */
	ck_build(target ? parent : scratch, target ? target : &doc.def, &doc, p);
	ck_check_reencode(*p, json, jsonlen);

	MemoryContextSwitchTo(oldcxt);
	if (json_out)
		*json_out = pnstrdup(json, jsonlen);
}

/*
 * Decode and validate a checkpoint.  With a target definition, build the
 * restored pipeline under parent and return it; without (inspection), build
 * it in scratch memory, throw it away and return NULL, with the validated
 * document in *json_out.
 */
static SfPipeline *
ck_decode(MemoryContext parent, const SfPipelineDef *target,
		  const char *data, Size len, char **json_out, bool capped)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	MemoryContext scratch;
	SfPipeline *volatile p = NULL;

	scratch = AllocSetContextCreate(CurrentMemoryContext,
									"streamforge checkpoint decode",
									ALLOCSET_DEFAULT_SIZES);
	PG_TRY();
	{
		ck_decode_steps(parent, target, data, len, json_out, capped, scratch,
						oldcxt, &p);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(oldcxt);
		if (p != NULL)
			sf_pipeline_free(p);
		MemoryContextDelete(scratch);
		PG_RE_THROW();
	}
	PG_END_TRY();

	MemoryContextDelete(scratch);	/* and p with it, without a target */
	return target ? p : NULL;
}

/*
 * sf_checkpoint_decode
 *		Validate a checkpoint and build a new pipeline (a child context of
 *		parent) with the state it holds, for a pipeline defined by def.
 *
 * def must be normalized; the checkpoint's definition must be equivalent.
 * Any problem raises SF003 "invalid checkpoint: ..."; then nothing is left
 * behind, neither in parent nor in CurrentMemoryContext.
 */
SfPipeline *
sf_checkpoint_decode(MemoryContext parent, const SfPipelineDef *def,
					 const char *data, Size len)
{
	Assert(def != NULL);
	return ck_decode(parent, def, data, len, NULL, false);
}

/*
 * sf_checkpoint_restore
 *		sf_checkpoint_decode for restore(): a checkpoint holding more live
 *		buckets than streamforge.max_live_buckets is refused (54000) before
 *		they are built.  Loading a pipeline's own stored state is never
 *		refused (sf_checkpoint_decode), so that lowering the setting cannot
 *		make a pipeline unloadable.
 */
SfPipeline *
sf_checkpoint_restore(MemoryContext parent, const SfPipelineDef *def,
					  const char *data, Size len)
{
	Assert(def != NULL);
	return ck_decode(parent, def, data, len, NULL, true);
}

/*
 * sf_checkpoint_document
 *		The JSON document of a checkpoint, after the same validation as a
 *		restore into a pipeline with the checkpoint's own definition (and
 *		the same streamforge.max_live_buckets, since validating builds the
 *		buckets).  palloc'd in CurrentMemoryContext, NUL-terminated.
 */
/*
 * The length of the JSON document a checkpoint's envelope declares, read
 * without inflating anything: 0 unless the envelope is intact (magic,
 * version, payload length, checksum) and the length one decoding could
 * accept, so that corrupt input keeps its SF003.  Decoding refuses a
 * payload that inflates to any other length.  Cost: one CRC pass over the
 * (compressed) bytes.
 */
static Size
sf_checkpoint_declared_size(const char *data, Size len)
{
	uLong		crc;
	Size		declared;

	if (len < CK_HEADER_LEN || memcmp(data, CK_MAGIC, CK_MAGIC_LEN) != 0 ||
		ck_get16(data + CK_OFF_VERSION) != CK_FORMAT_VERSION ||
		(Size) ck_get32(data + CK_OFF_PAYLOAD_LEN) != len - CK_HEADER_LEN)
		return 0;
	declared = (Size) ck_get32(data + CK_OFF_JSON_LEN);
	if (declared > CK_MAX_JSON)
		return 0;
	crc = crc32(0L, (const Bytef *) data, CK_OFF_CRC);
	crc = crc32(crc, (const Bytef *) data + CK_HEADER_LEN,
				(uInt) (len - CK_HEADER_LEN));
	if ((uint32) crc != ck_get32(data + CK_OFF_CRC))
		return 0;
	return declared;
}

char *
sf_checkpoint_document(const char *data, Size len)
{
	char	   *json = NULL;

	ck_decode(NULL, NULL, data, len, &json, true);
	return json;
}

/* streamforge.max_checkpoint_size, in kB: documents restore may inflate */
int			sf_max_checkpoint_size = SF_DEFAULT_MAX_CHECKPOINT_SIZE;

/*
 * Refuse (54000) a checkpoint given to restore or inspect_checkpoint whose
 * document is larger than streamforge.max_checkpoint_size, before it is
 * inflated: a small compressed checkpoint can declare up to 1 GB.
 */
void
sf_check_checkpoint_size(const char *data, Size len)
{
	Size		declared = sf_checkpoint_declared_size(data, len);

	if ((uint64) declared > (uint64) sf_max_checkpoint_size * 1024)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("checkpoint document exceeds streamforge.max_checkpoint_size"),
				 errdetail("The checkpoint holds a document of %zu bytes, the limit is %d kB.",
						   declared, sf_max_checkpoint_size),
				 errhint("A superuser can raise streamforge.max_checkpoint_size.")));
}
