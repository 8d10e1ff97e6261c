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
 *	3. validate: every rule of SPEC.md section 4, first per part (the
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

#include "canonjson.h"
#include "streamforge.h"

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
 * Errors
 *
 * Every rejection is SF003 with one of four primary messages, and a detail
 * that names the offending part.
 * ----------------------------------------------------------------
 */
#define CK_ENVELOPE		"corrupt envelope"
#define CK_DOCUMENT		"malformed document"
#define CK_DEFINITION	"incompatible pipeline definition"
#define CK_STATE		"inconsistent state"

#define ck_error(kind, ...) \
	ereport(ERROR, \
			errcode(ERRCODE_SF_INVALID_CHECKPOINT), \
			errmsg("invalid checkpoint: %s", (kind)), \
			errdetail(__VA_ARGS__))

/* ----------------------------------------------------------------
 * Scratch structures of a parsed document
 * ----------------------------------------------------------------
 */

/* A result row of the window index or the changelog document */
typedef struct CkRow
{
	SfJsonStr		window_name;
	int			window;			/* index into def.windows, once resolved */
	SfJsonStr		key;
	int64		start;
	int64		end;
	SfAgg		agg;
	SfAgg		derived;		/* ck_check_derivation: from the identities */
} CkRow;

typedef struct CkClock
{
	SfJsonStr		name;
	bool		has_progress;
	int64		progress;
	bool		idle;
} CkClock;

typedef struct CkIdentity
{
	SfJsonStr		event_id;
	SfJsonStr		key;
	int64		event_time;
	int64		value;
	bool		late;
	int64		ndeliveries;	/* how often the sources deliver it */
	int64		late_row;		/* index into doc->late, or -1 */
	SfIdentity *built;			/* phase 4 */
} CkIdentity;

typedef struct CkSource
{
	SfJsonStr		name;
	int64		n;				/* consumed offset + 1 */
	int64	   *deliveries;		/* identity index per offset, -1: unknown */
	SfJsonStr		first_unknown;	/* the first unresolved event_id */
	int64		first_unknown_at;
} CkSource;

typedef struct CkLate
{
	SfJsonStr		event_id;
	int64		identity;		/* index into doc->ids, -1: unknown */
	int64		late_seq;
	SfJsonStr		partition;
	int			pindex;			/* resolved partition */
	int64		source_offset;
	int64		watermark;
} CkLate;

typedef struct CkDoc
{
	/* "changelog" */
	int64		sequence;
	CkRow	   *visible;
	int64		nvisible;
	/* "clock" */
	CkClock    *clock;
	int64		nclock;
	bool		has_watermark;
	int64		watermark;
	/* "definition" (partition and window name arrays point into it) */
	SfPipelineDef def;
	int64		ndefpartitions;
	int64		ndefwindows;
	/* "identities", sorted by event_id bytes */
	CkIdentity *ids;
	int64		nids;
	/* "late", in late_seq order */
	CkLate	   *late;
	int64		nlate;
	/* "sources" */
	CkSource   *sources;
	int64		nsources;
	/* "windows": the window index document */
	CkRow	   *rows;
	int64		nrows;
} CkDoc;

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

/* Byte-wise comparison of two strings, shorter first on a common prefix */
static int
ck_bytes_cmp(const char *a, int alen, const char *b, int blen)
{
	int			c = memcmp(a, b, Min(alen, blen));

	if (c != 0)
		return c;
	return (alen > blen) - (alen < blen);
}

static inline int
ck_str_cmp(const SfJsonStr *a, const SfJsonStr *b)
{
	return ck_bytes_cmp(a->data, a->len, b->data, b->len);
}

/* Human-readable address of a row, for error details */
static char *
ck_row_desc(const CkRow *r)
{
	return psprintf("window \"%s\", key \"%s\", [" INT64_FORMAT ", " INT64_FORMAT ")",
					r->window_name.data, r->key.data, r->start, r->end);
}

/* Floor division for a positive divisor, in 128 bits (never overflows) */
static inline int128
ck_floor_div(int128 a, int128 b)
{
	int128		q = a / b;

	if ((a % b != 0) && (a < 0))
		q--;
	return q;
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
	appendStringInfoCharMacro(buf, '{');
	switch (w->kind)
	{
		case SF_WINDOW_FIXED:
			sf_json_write_key(buf, "kind", true);
			appendStringInfoString(buf, "\"fixed\"");
			sf_json_write_key(buf, "name", false);
			sf_json_write_string(buf, w->name, strlen(w->name));
			sf_json_write_key(buf, "size", false);
			sf_json_write_int64(buf, w->size);
			break;
		case SF_WINDOW_SLIDING:
			sf_json_write_key(buf, "kind", true);
			appendStringInfoString(buf, "\"sliding\"");
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
			appendStringInfoString(buf, "\"session\"");
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
		sf_json_write_string(buf, id->event_id->data, id->event_id->len);
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
		sf_json_write_string(buf, le->event->event_id->data, le->event->event_id->len);
		sf_json_write_key(buf, "late_seq", false);
		sf_json_write_int64(buf, le->late_seq);
		sf_json_write_key(buf, "partition", false);
		sf_json_write_string(buf, pname, strlen(pname));
		sf_json_write_key(buf, "source_offset", false);
		sf_json_write_int64(buf, le->source_offset);
		sf_json_write_key(buf, "watermark", false);
		sf_json_write_int64(buf, le->watermark);
		appendStringInfoCharMacro(buf, '}');
	}
	appendStringInfoCharMacro(buf, ']');

	/* sources: the event delivered at every consumed offset */
	sf_json_write_key(buf, "sources", false);
	appendStringInfoCharMacro(buf, '[');
	for (int i = 0; i < def->npartitions; i++)
	{
		const SfPartition *part = &p->partitions[i];

		if (i > 0)
			appendStringInfoCharMacro(buf, ',');
		appendStringInfoCharMacro(buf, '{');
		sf_json_write_key(buf, "deliveries", true);
		appendStringInfoCharMacro(buf, '[');
		for (int64 o = 0; o <= part->consumed; o++)
		{
			const SfString *eid = part->deliveries[o]->event_id;

			if ((o & 1023) == 0)
				CHECK_FOR_INTERRUPTS();
			if (o > 0)
				appendStringInfoCharMacro(buf, ',');
			sf_json_write_string(buf, eid->data, eid->len);
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
				 field, s.data, SF_NAME_MAX);
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
		if (strcmp(kind.data, "session") != 0)
			ck_error(CK_DOCUMENT,
					 "A window with a \"gap\" must be of kind \"session\", not \"%s\".",
					 kind.data);
		w->kind = SF_WINDOW_SESSION;
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
		if (strcmp(kind.data, "fixed") == 0)
			w->kind = SF_WINDOW_FIXED;
		else if (strcmp(kind.data, "sliding") == 0)
		{
			w->kind = SF_WINDOW_SLIDING;
			sf_json_key(r, "step", false);
			w->step = sf_json_int64(r, "step");
		}
		else
			ck_error(CK_DOCUMENT,
					 "Window \"%s\" has kind \"%s\"; a window with a \"size\" is \"fixed\" or \"sliding\".",
					 w->name, kind.data);
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
						 id->event_id.data);
			if (c > 0)
				ck_error(CK_STATE,
						 "The identities are not in event_id byte order at \"%s\".",
						 id->event_id.data);
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
		sf_json_key(r, "late_seq", false);
		le->late_seq = sf_json_int64(r, "late_seq");
		sf_json_key(r, "partition", false);
		sf_json_string(r, "partition", &le->partition);
		le->pindex = -1;
		sf_json_key(r, "source_offset", false);
		le->source_offset = sf_json_int64(r, "source_offset");
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
		sf_json_key(r, "deliveries", true);
		if (sf_json_array_begin(r, "deliveries"))
		{
			do
			{
				SfJsonStr		eid;
				int64		idx;

				src->deliveries = ck_grow(src->deliveries, &dcap, src->n,
										  sizeof(int64));
				sf_json_string(r, "deliveries", &eid);
				idx = ck_find_identity(doc, &eid);
				if (idx < 0 && src->first_unknown_at < 0)
				{
					src->first_unknown = eid;
					src->first_unknown_at = src->n;
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
 * Phase 3: validation
 *
 * Each function checks one part of the document, relying only on the parts
 * checked before it (the order is that of ck_decode).
 * ----------------------------------------------------------------
 */

static char *
ck_window_desc(const SfWindowDef *w)
{
	switch (w->kind)
	{
		case SF_WINDOW_FIXED:
			return psprintf("fixed(size " INT64_FORMAT ")", w->size);
		case SF_WINDOW_SLIDING:
			return psprintf("sliding(size " INT64_FORMAT ", step " INT64_FORMAT ")",
							w->size, w->step);
		case SF_WINDOW_SESSION:
			return psprintf("session(gap " INT64_FORMAT ")", w->gap);
	}
	return pstrdup("unknown");
}

static bool
ck_window_def_equal(const SfWindowDef *a, const SfWindowDef *b)
{
	if (a->kind != b->kind || strcmp(a->name, b->name) != 0)
		return false;
	switch (a->kind)
	{
		case SF_WINDOW_FIXED:
			return a->size == b->size;
		case SF_WINDOW_SLIDING:
			return a->size == b->size && a->step == b->step;
		case SF_WINDOW_SESSION:
			return a->gap == b->gap;
	}
	return false;
}

/*
 * The checkpoint's own definition must be valid (as create_pipeline would
 * accept it) and, when restoring, equivalent to the target's (SPEC 5.9).
 * Both are normalized: partitions and windows sorted by name.
 */
static void
ck_check_definition(const CkDoc *doc, const SfPipelineDef *target)
{
	const SfPipelineDef *def = &doc->def;
	int			i,
				j;

	if (def->npartitions < 1)
		ck_error(CK_DEFINITION, "The definition has no partition.");
	if (def->nwindows < 1)
		ck_error(CK_DEFINITION, "The definition has no window.");
	if (def->lateness < 0)
		ck_error(CK_DEFINITION, "The definition has a negative lateness " INT64_FORMAT ".",
				 def->lateness);
	for (i = 1; i < def->npartitions; i++)
		if (strcmp(def->partitions[i - 1], def->partitions[i]) >= 0)
			ck_error(CK_DEFINITION,
					 "The partitions of the definition are not unique and in byte order at \"%s\".",
					 def->partitions[i]);
	for (i = 0; i < def->nwindows; i++)
	{
		const SfWindowDef *w = &def->windows[i];

		if (i > 0 && strcmp(def->windows[i - 1].name, w->name) >= 0)
			ck_error(CK_DEFINITION,
					 "The windows of the definition are not unique and in byte order at \"%s\".",
					 w->name);
		if ((w->kind != SF_WINDOW_SESSION && w->size <= 0) ||
			(w->kind == SF_WINDOW_SLIDING && w->step <= 0) ||
			(w->kind == SF_WINDOW_SESSION && w->gap <= 0) ||
			(w->kind == SF_WINDOW_SLIDING &&
			 ((int128) w->size + w->step - 1) / w->step > SF_MAX_SLIDING_BUCKETS))
			ck_error(CK_DEFINITION, "Window \"%s\" has an invalid definition %s.",
					 w->name, ck_window_desc(w));
	}

	if (target == NULL)
		return;

	/* equivalence: walk both sorted name lists */
	for (i = 0, j = 0; i < def->npartitions || j < target->npartitions;)
	{
		int			c;

		if (i >= def->npartitions)
			c = 1;
		else if (j >= target->npartitions)
			c = -1;
		else
			c = strcmp(def->partitions[i], target->partitions[j]);
		if (c < 0)
			ck_error(CK_DEFINITION,
					 "The checkpoint has partition \"%s\", the pipeline has not.",
					 def->partitions[i]);
		if (c > 0)
			ck_error(CK_DEFINITION,
					 "The pipeline has partition \"%s\", the checkpoint has not.",
					 target->partitions[j]);
		i++, j++;
	}
	for (i = 0, j = 0; i < def->nwindows || j < target->nwindows;)
	{
		int			c;

		if (i >= def->nwindows)
			c = 1;
		else if (j >= target->nwindows)
			c = -1;
		else
			c = strcmp(def->windows[i].name, target->windows[j].name);
		if (c < 0)
			ck_error(CK_DEFINITION,
					 "The checkpoint has window \"%s\", the pipeline has not.",
					 def->windows[i].name);
		if (c > 0)
			ck_error(CK_DEFINITION,
					 "The pipeline has window \"%s\", the checkpoint has not.",
					 target->windows[j].name);
		if (!ck_window_def_equal(&def->windows[i], &target->windows[j]))
			ck_error(CK_DEFINITION,
					 "Window \"%s\" is %s in the checkpoint and %s in the pipeline.",
					 def->windows[i].name, ck_window_desc(&def->windows[i]),
					 ck_window_desc(&target->windows[j]));
		i++, j++;
	}
	if (def->lateness != target->lateness)
		ck_error(CK_DEFINITION,
				 "The checkpoint has lateness " INT64_FORMAT ", the pipeline " INT64_FORMAT ".",
				 def->lateness, target->lateness);
}

/*
 * The clock.  Rules (docs/checkpoint-format.md, "Validation"):
 *	- one entry per partition of the definition, in its order;
 *	- a watermark is the minimum progress of the active partitions at some
 *	  moment, and progress never decreases: some partition's progress is at
 *	  least the watermark;
 *	- the watermark is recomputed after every clock change and never
 *	  decreases: when at least one partition is active and every active
 *	  partition has reported, the watermark exists and is at least their
 *	  minimum progress.
 */
static void
ck_check_clock(const CkDoc *doc)
{
	const SfPipelineDef *def = &doc->def;
	bool		any_active = false;
	bool		all_reported = true;
	bool		any_progress = false;
	int64		min_active = PG_INT64_MAX;
	int64		max_progress = PG_INT64_MIN;

	if (doc->nclock != def->npartitions)
		ck_error(CK_STATE,
				 "The clock has %lld partitions, the definition %d.",
				 (long long) doc->nclock, def->npartitions);
	for (int i = 0; i < def->npartitions; i++)
	{
		const CkClock *c = &doc->clock[i];

		if (strcmp(c->name.data, def->partitions[i]) != 0)
			ck_error(CK_STATE,
					 "The clock lists partition \"%s\" where the definition has \"%s\".",
					 c->name.data, def->partitions[i]);
		if (c->has_progress)
		{
			any_progress = true;
			max_progress = Max(max_progress, c->progress);
		}
		if (!c->idle)
		{
			any_active = true;
			if (c->has_progress)
				min_active = Min(min_active, c->progress);
			else
				all_reported = false;
		}
	}

	if (doc->has_watermark && (!any_progress || max_progress < doc->watermark))
		ck_error(CK_STATE,
				 "The watermark " INT64_FORMAT " is above the progress of every partition.",
				 doc->watermark);
	if (any_active && all_reported)
	{
		if (!doc->has_watermark)
			ck_error(CK_STATE,
					 "Every active partition has reported progress, but there is no watermark.");
		if (doc->watermark < min_active)
			ck_error(CK_STATE,
					 "The watermark " INT64_FORMAT " is below " INT64_FORMAT ", the minimum progress of the active partitions.",
					 doc->watermark, min_active);
	}
}

/*
 * The delivery history: one source per partition, in definition order;
 * every delivery names a known identity, and every identity is delivered.
 */
static void
ck_check_sources(CkDoc *doc)
{
	const SfPipelineDef *def = &doc->def;

	if (doc->nsources != def->npartitions)
		ck_error(CK_STATE,
				 "The sources have %lld partitions, the definition %d.",
				 (long long) doc->nsources, def->npartitions);
	for (int i = 0; i < def->npartitions; i++)
	{
		const CkSource *src = &doc->sources[i];

		if (strcmp(src->name.data, def->partitions[i]) != 0)
			ck_error(CK_STATE,
					 "The sources list partition \"%s\" where the definition has \"%s\".",
					 src->name.data, def->partitions[i]);
		if (src->first_unknown_at >= 0)
			ck_error(CK_STATE,
					 "Offset %lld of partition \"%s\" delivers event_id \"%s\", which has no identity.",
					 (long long) src->first_unknown_at, src->name.data,
					 src->first_unknown.data);
		for (int64 o = 0; o < src->n; o++)
			doc->ids[src->deliveries[o]].ndeliveries++;
	}
	for (int64 k = 0; k < doc->nids; k++)
		if (doc->ids[k].ndeliveries == 0)
			ck_error(CK_STATE, "Identity \"%s\" is never delivered.",
					 doc->ids[k].event_id.data);
}

/*
 * The late output.  Rules: late_seq runs 1..n; each row names a late
 * identity, a partition and a consumed offset that delivered that identity;
 * each late identity has exactly one row; the event was late at the row's
 * watermark (event_time + lateness < watermark); watermarks never decrease
 * in late_seq order and never exceed the current one; the late rows of one
 * partition are in offset order; and no delivery of a late identity
 * precedes its late row in that partition (the first delivery of an
 * event_id makes it known, so only that one can be late).
 */
static void
ck_check_late(CkDoc *doc)
{
	const SfPipelineDef *def = &doc->def;
	int64	   *last_offset;

	last_offset = palloc(sizeof(int64) * def->npartitions);
	for (int i = 0; i < def->npartitions; i++)
		last_offset[i] = -1;

	for (int64 n = 0; n < doc->nlate; n++)
	{
		CkLate	   *le = &doc->late[n];
		CkIdentity *id;
		const CkSource *src;

		if (le->late_seq != n + 1)
			ck_error(CK_STATE,
					 "Late event %lld has late_seq " INT64_FORMAT "; late_seq runs from 1 without gaps.",
					 (long long) (n + 1), le->late_seq);
		if (le->identity < 0)
			ck_error(CK_STATE,
					 "Late event " INT64_FORMAT " names event_id \"%s\", which has no identity.",
					 le->late_seq, le->event_id.data);
		id = &doc->ids[le->identity];
		if (!id->late)
			ck_error(CK_STATE,
					 "Late event " INT64_FORMAT " names event_id \"%s\", whose identity is not late.",
					 le->late_seq, le->event_id.data);
		if (id->late_row >= 0)
			ck_error(CK_STATE, "Identity \"%s\" has two late events.",
					 id->event_id.data);
		id->late_row = n;
		le->pindex = sf_partition_index(def, le->partition.data);
		if (le->pindex < 0)
			ck_error(CK_STATE,
					 "Late event " INT64_FORMAT " names unknown partition \"%s\".",
					 le->late_seq, le->partition.data);
		src = &doc->sources[le->pindex];
		if (le->source_offset < 0 || le->source_offset >= src->n)
			ck_error(CK_STATE,
					 "Late event " INT64_FORMAT " is at offset " INT64_FORMAT " of partition \"%s\", which has consumed offsets up to %lld.",
					 le->late_seq, le->source_offset, le->partition.data,
					 (long long) (src->n - 1));
		if (src->deliveries[le->source_offset] != le->identity)
			ck_error(CK_STATE,
					 "Late event " INT64_FORMAT " names event_id \"%s\", but offset " INT64_FORMAT " of partition \"%s\" delivered \"%s\".",
					 le->late_seq, le->event_id.data, le->source_offset,
					 le->partition.data,
					 doc->ids[src->deliveries[le->source_offset]].event_id.data);
		if (le->source_offset <= last_offset[le->pindex])
			ck_error(CK_STATE,
					 "Late event " INT64_FORMAT " is at offset " INT64_FORMAT " of partition \"%s\", not after the previous late event there.",
					 le->late_seq, le->source_offset, le->partition.data);
		last_offset[le->pindex] = le->source_offset;
		if (!doc->has_watermark)
			ck_error(CK_STATE,
					 "Late event " INT64_FORMAT " exists, but there is no watermark.",
					 le->late_seq);
		if (le->watermark > doc->watermark)
			ck_error(CK_STATE,
					 "Late event " INT64_FORMAT " has watermark " INT64_FORMAT ", above the current watermark " INT64_FORMAT ".",
					 le->late_seq, le->watermark, doc->watermark);
		if (n > 0 && le->watermark < doc->late[n - 1].watermark)
			ck_error(CK_STATE,
					 "Late event " INT64_FORMAT " has watermark " INT64_FORMAT ", below the watermark of the late event before it.",
					 le->late_seq, le->watermark);
		if ((int128) id->event_time + def->lateness >= (int128) le->watermark)
			ck_error(CK_STATE,
					 "Late event " INT64_FORMAT " (event_time " INT64_FORMAT ") was not late at watermark " INT64_FORMAT " with lateness " INT64_FORMAT ".",
					 le->late_seq, id->event_time, le->watermark, def->lateness);
	}

	for (int64 k = 0; k < doc->nids; k++)
		if (doc->ids[k].late && doc->ids[k].late_row < 0)
			ck_error(CK_STATE, "Identity \"%s\" is late but has no late event.",
					 doc->ids[k].event_id.data);

	/* no delivery of a late identity before its late row, in its partition */
	for (int i = 0; i < def->npartitions; i++)
	{
		const CkSource *src = &doc->sources[i];

		for (int64 o = 0; o < src->n; o++)
		{
			const CkIdentity *id = &doc->ids[src->deliveries[o]];
			const CkLate *le;

			if ((o & 1023) == 0)
				CHECK_FOR_INTERRUPTS();
			if (!id->late)
				continue;
			le = &doc->late[id->late_row];
			if (le->pindex == i && o < le->source_offset)
				ck_error(CK_STATE,
						 "Event_id \"%s\" is delivered at offset %lld of partition \"%s\" before its late event at offset " INT64_FORMAT ".",
						 id->event_id.data, (long long) o, def->partitions[i],
						 le->source_offset);
		}
	}
	pfree(last_offset);
}

/* Address order: window (by name, = index), key bytes, start, end */
static int
ck_row_cmp(const CkRow *a, const CkRow *b)
{
	int			c;

	if (a->window != b->window)
		return (a->window > b->window) - (a->window < b->window);
	c = ck_str_cmp(&a->key, &b->key);
	if (c != 0)
		return c;
	if (a->start != b->start)
		return (a->start > b->start) - (a->start < b->start);
	return (a->end > b->end) - (a->end < b->end);
}

/*
 * An aggregate over count >= 1 values in [min, max]: min <= max, the sum
 * within [count * min, count * max], and one value has min = max = sum.
 */
static void
ck_check_agg(const CkRow *row, const char *what)
{
	const SfAgg *a = &row->agg;

	if (a->count < 1)
		ck_error(CK_STATE, "The %s %s has count " INT64_FORMAT "; a bucket holds at least one event.",
				 what, ck_row_desc(row), a->count);
	if (a->min > a->max)
		ck_error(CK_STATE, "The %s %s has min " INT64_FORMAT " above max " INT64_FORMAT ".",
				 what, ck_row_desc(row), a->min, a->max);
	if (a->count == 1 && (a->min != a->max || a->sum != (int128) a->min))
		ck_error(CK_STATE,
				 "The %s %s holds one event, but its min, max and sum differ.",
				 what, ck_row_desc(row));
	if (a->sum < (int128) a->count * a->min || a->sum > (int128) a->count * a->max)
		ck_error(CK_STATE,
				 "The %s %s has sum %s outside [count * min, count * max].",
				 what, ck_row_desc(row), sf_int128_out(a->sum));
}

/* Resolve window names and check address order of a row list */
static void
ck_check_row_order(const SfPipelineDef *def, CkRow *rows, int64 n,
				   const char *what)
{
	for (int64 i = 0; i < n; i++)
	{
		CkRow	   *row = &rows[i];

		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		row->window = sf_window_index(def, row->window_name.data);
		if (row->window < 0)
			ck_error(CK_STATE, "The %s %s names an unknown window.",
					 what, ck_row_desc(row));
		if (i > 0)
		{
			int			c = ck_row_cmp(&rows[i - 1], row);

			if (c == 0)
				ck_error(CK_STATE, "The %s %s appears twice.",
						 what, ck_row_desc(row));
			if (c > 0)
				ck_error(CK_STATE, "The %ss are not in address order at %s.",
						 what, ck_row_desc(row));
		}
	}
}

/*
 * The window index document (WindowIndex.restore of the contract): result
 * rows in address order with known windows, unique addresses and valid
 * aggregates; fixed and sliding buckets aligned to their window; live
 * sessions of one (window, key) apart (touching ones would have merged) and
 * between gap and count * gap wide; no bucket whose end + lateness
 * overflows bigint (the engine rejects such events with 22003).
 */
static void
ck_window_index_decode(const CkDoc *doc, CkRow *rows, int64 n)
{
	const SfPipelineDef *def = &doc->def;

	ck_check_row_order(def, rows, n, "live bucket");
	for (int64 i = 0; i < n; i++)
	{
		const CkRow *row = &rows[i];
		const SfWindowDef *w = &def->windows[row->window];
		int128		width = (int128) row->end - row->start;

		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		ck_check_agg(row, "live bucket");
		switch (w->kind)
		{
			case SF_WINDOW_FIXED:
			case SF_WINDOW_SLIDING:
				{
					int64		step = (w->kind == SF_WINDOW_FIXED) ? w->size : w->step;

					if (row->start % step != 0 || width != w->size)
						ck_error(CK_STATE,
								 "The live bucket %s is not aligned to window \"%s\", %s.",
								 ck_row_desc(row), w->name, ck_window_desc(w));
					break;
				}
			case SF_WINDOW_SESSION:
				if (width < w->gap || width > (int128) row->agg.count * w->gap)
					ck_error(CK_STATE,
							 "The live session %s is %s wide, outside [gap, count * gap] = [" INT64_FORMAT ", %s].",
							 ck_row_desc(row), sf_int128_out(width), w->gap,
							 sf_int128_out((int128) row->agg.count * w->gap));
				if (i > 0 && rows[i - 1].window == row->window &&
					ck_str_cmp(&rows[i - 1].key, &row->key) == 0 &&
					rows[i - 1].end >= row->start)
					ck_error(CK_STATE,
							 "The live sessions %s and [" INT64_FORMAT ", " INT64_FORMAT ") touch or overlap; they would have merged.",
							 ck_row_desc(&rows[i - 1]), row->start, row->end);
				break;
		}
		if ((int128) row->end + def->lateness > PG_INT64_MAX)
			ck_error(CK_STATE,
					 "The live bucket %s cannot exist: its end plus the lateness overflows bigint.",
					 ck_row_desc(row));
	}
}

/*
 * The changelog document (Changelog.restore of the contract): a sequence
 * that is a non-negative bigint, and visible rows in address order with
 * known windows, unique addresses and valid aggregates.
 */
static void
ck_changelog_decode(const CkDoc *doc, CkRow *rows, int64 n)
{
	if (doc->sequence < 0)
		ck_error(CK_STATE, "The changelog sequence is " INT64_FORMAT "; it cannot be negative.",
				 doc->sequence);
	ck_check_row_order(&doc->def, rows, n, "emitted row");
	for (int64 i = 0; i < n; i++)
		ck_check_agg(&rows[i], "emitted row");
}

static bool
ck_agg_equal(const SfAgg *a, const SfAgg *b)
{
	return a->count == b->count && a->sum == b->sum &&
		a->min == b->min && a->max == b->max;
}

/*
 * The operator states against each other and the clock: no live bucket is
 * due for finalization (watermark > end + lateness), the emitted rows are
 * exactly the ready view of the live buckets (end <= watermark), and the
 * sequence has numbered at least one upsert per emitted row.
 */
static void
ck_check_views(const CkDoc *doc)
{
	int64		i = 0,
				j = 0;
	int64		lateness = doc->def.lateness;

	for (int64 k = 0; k < doc->nrows; k++)
	{
		const CkRow *row = &doc->rows[k];

		if (doc->has_watermark &&
			(int128) doc->watermark > (int128) row->end + lateness)
			ck_error(CK_STATE,
					 "The live bucket %s should have been finalized: the watermark " INT64_FORMAT " is past its end plus the lateness.",
					 ck_row_desc(row), doc->watermark);
	}

	/* merge walk over the ready live rows and the emitted rows */
	for (;;)
	{
		const CkRow *live = NULL;
		const CkRow *vis = NULL;
		int			c;

		while (i < doc->nrows && !(doc->has_watermark &&
								   doc->rows[i].end <= doc->watermark))
			i++;
		if (i < doc->nrows)
			live = &doc->rows[i];
		if (j < doc->nvisible)
			vis = &doc->visible[j];
		if (live == NULL && vis == NULL)
			break;
		CHECK_FOR_INTERRUPTS();
		if (live == NULL)
			c = 1;
		else if (vis == NULL)
			c = -1;
		else
			c = ck_row_cmp(live, vis);
		if (c < 0)
			ck_error(CK_STATE,
					 "The ready live bucket %s is not among the emitted rows.",
					 ck_row_desc(live));
		if (c > 0)
			ck_error(CK_STATE,
					 "The emitted row %s is not in the ready view of the live buckets.",
					 ck_row_desc(vis));
		if (!ck_agg_equal(&live->agg, &vis->agg))
			ck_error(CK_STATE,
					 "The emitted row %s differs from its live bucket.",
					 ck_row_desc(vis));
		i++;
		j++;
	}

	if (doc->sequence < doc->nvisible)
		ck_error(CK_STATE,
				 "The changelog sequence " INT64_FORMAT " is smaller than the %lld emitted rows need.",
				 doc->sequence, (long long) doc->nvisible);
}

static void
ck_agg_add(SfAgg *a, int64 value)
{
	if (a->count == 0)
	{
		a->min = a->max = value;
		a->sum = 0;
	}
	else
	{
		a->min = Min(a->min, value);
		a->max = Max(a->max, value);
	}
	a->count++;
	a->sum += value;
}

/* The live row of window rows[lo..hi) with this key and start, or -1 */
static int64
ck_find_row(const CkRow *rows, int64 lo, int64 hi, const SfJsonStr *key,
			int64 start)
{
	hi--;
	while (lo <= hi)
	{
		int64		mid = lo + (hi - lo) / 2;
		int			c = ck_str_cmp(&rows[mid].key, key);

		if (c == 0)
			c = (rows[mid].start > start) - (rows[mid].start < start);
		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

static int
ck_identity_order_cmp(const void *a, const void *b, void *arg)
{
	const CkDoc *doc = arg;
	const CkIdentity *x = &doc->ids[*(const int64 *) a];
	const CkIdentity *y = &doc->ids[*(const int64 *) b];
	int			c = ck_str_cmp(&x->key, &y->key);

	if (c != 0)
		return c;
	if (x->event_time != y->event_time)
		return (x->event_time > y->event_time) - (x->event_time < y->event_time);
	return ck_str_cmp(&x->event_id, &y->event_id);
}

/*
 * The live buckets against the delivery history.
 *
 * Finalized buckets are forgotten, but which ones are finalized is known:
 * exactly those with watermark > end + lateness.  An accepted (not late)
 * event never enters a finalized bucket (event_time + lateness >= watermark
 * and end > event_time), and no later event can: a bucket past its lateness
 * only receives late events, and a session past its lateness cannot touch a
 * later accepted event.  So the live buckets are a pure function of the
 * accepted identities, the watermark and the definition:
 *
 *	- fixed/sliding: each bucket [s, s + size) containing an accepted event
 *	  with watermark <= s + size + lateness is live, and its aggregate is
 *	  that of exactly the accepted events of its key inside it;
 *	- session: per key, the accepted events merge into components (an event
 *	  joins when event_time <= the component's end); each component not
 *	  finalized is a live session with exactly that address and aggregate.
 *
 * Every accepted event's buckets were range-checked when it was accepted
 * (SPEC 5.1), so a bucket bound outside bigint means the event could not
 * have been accepted.  Cost: one binary search per (event, live bucket)
 * pair, bounded by the live rows present in the document.
 */
static void
ck_check_derivation(CkDoc *doc)
{
	const SfPipelineDef *def = &doc->def;
	int64		lateness = def->lateness;
	int64	   *wlo = palloc0(sizeof(int64) * def->nwindows);
	int64	   *whi = palloc0(sizeof(int64) * def->nwindows);
	int64	   *order;
	int64		nacc = 0;
	int64		ops = 0;

	/* each window's rows are one contiguous range (address order) */
	for (int64 k = doc->nrows - 1; k >= 0; k--)
		wlo[doc->rows[k].window] = k;
	for (int64 k = 0; k < doc->nrows; k++)
		whi[doc->rows[k].window] = k + 1;

	for (int64 k = 0; k < doc->nrows; k++)
		memset(&doc->rows[k].derived, 0, sizeof(SfAgg));

	order = palloc(sizeof(int64) * Max(doc->nids, 1));
	for (int64 k = 0; k < doc->nids; k++)
		if (!doc->ids[k].late)
			order[nacc++] = k;

	/* fixed and sliding windows */
	for (int64 a = 0; a < nacc; a++)
	{
		const CkIdentity *id = &doc->ids[order[a]];
		int128		t = id->event_time;

		for (int wi = 0; wi < def->nwindows; wi++)
		{
			const SfWindowDef *w = &def->windows[wi];
			int64		step;
			int128		top,
						lowest,
						first;

			if (w->kind == SF_WINDOW_SESSION)
				continue;
			step = (w->kind == SF_WINDOW_FIXED) ? w->size : w->step;
			top = ck_floor_div(t, step) * step;
			lowest = t - w->size + 1;
			if (top < lowest)
				continue;		/* sliding with size < step: in no window */
			first = top - ((top - lowest) / step) * step;
			if (first < PG_INT64_MIN || top + w->size + lateness > PG_INT64_MAX)
				ck_error(CK_STATE,
						 "Identity \"%s\" (event_time " INT64_FORMAT ") is accepted, but a bucket of window \"%s\" for it overflows bigint; such an event is rejected.",
						 id->event_id.data, id->event_time, w->name);
			for (int128 s = top; s >= first; s -= step)
			{
				int64		k;

				if (doc->has_watermark &&
					(int128) doc->watermark > s + w->size + lateness)
					break;		/* this and earlier buckets are finalized */
				if ((++ops & 1023) == 0)
					CHECK_FOR_INTERRUPTS();
				k = ck_find_row(doc->rows, wlo[wi], whi[wi], &id->key, (int64) s);
				if (k < 0)
					ck_error(CK_STATE,
							 "Identity \"%s\" (key \"%s\", event_time " INT64_FORMAT ") belongs to bucket [" INT64_FORMAT ", " INT64_FORMAT ") of window \"%s\", which is neither live nor finalized.",
							 id->event_id.data, id->key.data, id->event_time,
							 (int64) s, (int64) (s + w->size), w->name);
				ck_agg_add(&doc->rows[k].derived, id->value);
			}
		}
	}
	for (int64 k = 0; k < doc->nrows; k++)
	{
		const CkRow *row = &doc->rows[k];

		if (def->windows[row->window].kind == SF_WINDOW_SESSION)
			continue;
		if (row->derived.count == 0)
			ck_error(CK_STATE,
					 "The live bucket %s holds no accepted event.",
					 ck_row_desc(row));
		if (!ck_agg_equal(&row->agg, &row->derived))
			ck_error(CK_STATE,
					 "The aggregate of live bucket %s differs from that of its " INT64_FORMAT " accepted events.",
					 ck_row_desc(row), row->derived.count);
	}

	/* session windows: sweep the accepted events by (key, event_time) */
	qsort_arg(order, nacc, sizeof(int64), ck_identity_order_cmp, doc);
	for (int wi = 0; wi < def->nwindows; wi++)
	{
		const SfWindowDef *w = &def->windows[wi];
		int64		a = 0;

		if (w->kind != SF_WINDOW_SESSION)
			continue;
		while (a < nacc)
		{
			const CkIdentity *id = &doc->ids[order[a]];
			int128		start = id->event_time;
			int128		end = start + w->gap;
			SfAgg		agg = {0};
			int64		k;
			const CkRow *row;

			/* grow one component of this key */
			for (;;)
			{
				if ((int128) id->event_time + w->gap + lateness > PG_INT64_MAX)
					ck_error(CK_STATE,
							 "Identity \"%s\" (event_time " INT64_FORMAT ") is accepted, but its session in window \"%s\" overflows bigint; such an event is rejected.",
							 id->event_id.data, id->event_time, w->name);
				end = Max(end, (int128) id->event_time + w->gap);
				ck_agg_add(&agg, id->value);
				if ((++ops & 1023) == 0)
					CHECK_FOR_INTERRUPTS();
				a++;
				if (a >= nacc)
					break;
				if (ck_str_cmp(&doc->ids[order[a]].key, &id->key) != 0 ||
					doc->ids[order[a]].event_time > end)
					break;
				id = &doc->ids[order[a]];
			}
			if (doc->has_watermark && (int128) doc->watermark > end + lateness)
				continue;		/* finalized */
			k = ck_find_row(doc->rows, wlo[wi], whi[wi], &id->key, (int64) start);
			if (k < 0)
				ck_error(CK_STATE,
						 "The accepted events of key \"%s\" form session [" INT64_FORMAT ", " INT64_FORMAT ") of window \"%s\", which is neither live nor finalized.",
						 id->key.data, (int64) start, (int64) end, w->name);
			row = &doc->rows[k];
			if (row->end != end || !ck_agg_equal(&row->agg, &agg))
				ck_error(CK_STATE,
						 "The live session %s differs from the session [" INT64_FORMAT ", " INT64_FORMAT ") that its " INT64_FORMAT " accepted events form.",
						 ck_row_desc(row), (int64) start, (int64) end, agg.count);
			doc->rows[k].derived = agg;
		}
	}
	for (int64 k = 0; k < doc->nrows; k++)
	{
		const CkRow *row = &doc->rows[k];

		if (def->windows[row->window].kind == SF_WINDOW_SESSION &&
			row->derived.count == 0)
			ck_error(CK_STATE,
					 "The live session %s is not formed by the accepted events.",
					 ck_row_desc(row));
	}

	pfree(order);
	pfree(wlo);
	pfree(whi);
}

/* ----------------------------------------------------------------
 * Phase 4: build the pipeline with the engine's functions
 * ----------------------------------------------------------------
 */

/*
 * Build a new pipeline from a validated document.  The clock is restored
 * first, because sf_bucket_insert files each bucket as pending or ready by
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
									key, id->event_time, id->value, id->late);
	}

	for (int i = 0; i < def->npartitions; i++)
	{
		const CkSource *src = &doc->sources[i];

		for (int64 o = 0; o < src->n; o++)
		{
			if ((o & 1023) == 0)
				CHECK_FOR_INTERRUPTS();
			sf_partition_append(p, i, doc->ids[src->deliveries[o]].built);
		}
	}

	for (int64 n = 0; n < doc->nlate; n++)
	{
		const CkLate *le = &doc->late[n];

		sf_late_append(p, le->pindex, le->source_offset,
					   doc->ids[le->identity].built, le->watermark);
		if (p->nlate != le->late_seq || p->late[n].late_seq != le->late_seq)
			elog(ERROR, "late output of restored pipeline out of step at late_seq " INT64_FORMAT,
				 le->late_seq);
	}

	for (int64 k = 0; k < doc->nrows; k++)
	{
		const CkRow *row = &doc->rows[k];
		SfString   *key;
		SfBucket   *b;

		if ((k & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		key = sf_intern_key(p, row->key.data, row->key.len);
		if (sf_bucket_lookup(p, row->window, key, row->start) != NULL)
			ck_error(CK_STATE, "The live bucket %s appears twice.",
					 ck_row_desc(row));
		b = sf_bucket_insert(p, row->window, key, row->start, row->end);
		b->agg = row->agg;
		if (def->windows[row->window].kind == SF_WINDOW_SESSION &&
			!sf_session_insert_bucket(p, b))
			ck_error(CK_STATE,
					 "The live session %s touches or overlaps another session of its key.",
					 ck_row_desc(row));
	}

	p->seq = doc->sequence;
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
				const char *data, Size len, char **json_out,
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
		  const char *data, Size len, char **json_out)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	MemoryContext scratch;
	SfPipeline *volatile p = NULL;

	scratch = AllocSetContextCreate(CurrentMemoryContext,
									"streamforge checkpoint decode",
									ALLOCSET_DEFAULT_SIZES);
	PG_TRY();
	{
		ck_decode_steps(parent, target, data, len, json_out, scratch, oldcxt,
						&p);
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
	return ck_decode(parent, def, data, len, NULL);
}

/*
 * sf_checkpoint_document
 *		The JSON document of a checkpoint, after the same validation as a
 *		restore into a pipeline with the checkpoint's own definition.
 *		palloc'd in CurrentMemoryContext, NUL-terminated.
 */
char *
sf_checkpoint_document(const char *data, Size len)
{
	char	   *json = NULL;

	ck_decode(NULL, NULL, data, len, &json);
	return json;
}
