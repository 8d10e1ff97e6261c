/*-------------------------------------------------------------------------
 *
 * codec.c
 *	  Checkpoint codec: a pipeline's state <-> canonical checkpoint bytes.
 *
 * A checkpoint is a 24-byte envelope (magic, format version, flags, payload
 * length, document length, CRC-32) followed by a canonical JSON document,
 * zlib-compressed when it is longer than 4 KiB.  docs/checkpoint-format.md
 * describes every byte; this file and the ones it calls are its only
 * implementation.
 *
 * Encoding only reads the pipeline: ck_write_document writes one part per
 * top-level key (the definition here, the other parts in codec_write.c),
 * and ck_wrap puts the envelope around it.  Decoding never trusts its
 * input: it runs in four phases, and only the last one touches the engine.
 *
 *	1. envelope (ck_unwrap): magic, version, flags, lengths and checksum are
 *	   checked before anything is allocated, so a hostile length costs
 *	   nothing;
 *	2. parse (ck_parse here, the readers of the parts in codec_parse.c): the
 *	   strict pull reader of canonjson.c reads the document against its
 *	   fixed schema into scratch structures (CkDoc, codec_int.h).  It
 *	   accepts exactly one spelling of every value: keys in schema (= byte)
 *	   order with no whitespace, no unknown, missing or repeated keys,
 *	   integers without leading zeros or fractions, one escape per byte.
 *	   Nesting is fixed by the schema, so there is no recursion;
 *	3. validate: every rule of docs/semantics.md, Checkpoints, first per part
 *	   (codec_validate.c: the definition, the clock, the delivery history,
 *	   the late output, the window index document and the changelog
 *	   document, each with its own function), then the parts against each
 *	   other: the changelog's visible rows are the ready view of the live
 *	   buckets (ck_check_views), and the live buckets are re-derived from
 *	   the accepted identities (codec_derive.c, ck_check_derivation);
 *	4. build (ck_build): a new pipeline is made with the engine's own
 *	   functions, and re-encoded; the result must equal the document byte
 *	   for byte (ck_check_reencode), which makes "canonical" a property we
 *	   check rather than hope for.
 *
 * The definition part is read and written by codec_definition.c, the
 * only place where window kinds are spelled.  The other files of the codec
 * call nothing in this one: codec.c calls them.
 *
 * Memory: scratch data lives in a child of the caller's CurrentMemoryContext
 * that is deleted before returning.  The new pipeline lives in its own
 * context under the given parent (sf_pipeline_create).  On any error both
 * are deleted in a PG_CATCH block before the error propagates, so a caller
 * that passes a long-lived parent (the pipeline cache) leaks nothing.
 *
 * Callers: api/checkpoint.c (checkpoint, inspect_checkpoint),
 * persist/persist.c (restore) and snapshot.c, which stores and loads a
 * checkpoint as the snapshot of a pipeline the binary form cannot hold.
 * No function here keeps state between calls; the one setting,
 * streamforge.max_checkpoint_size (sf_max_checkpoint_size), is defined by
 * api/module.c.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/codec/codec.c
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
#define CK_FORMAT_MEASURES	2	/* measures pipelines (codec_measures.c) */
#define CK_FORMAT_VAR		3	/* with variable-size aggregate states */
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

/* ----------------------------------------------------------------
 * Encoding: the document (the parts other than the definition are
 * codec_write.c's) and the envelope
 * ----------------------------------------------------------------
 */

/*
 * ck_write_document
 *		Append the document of p's state to buf.  Top-level keys in byte
 *		order: changelog, clock, definition, identities, late,
 *		(late_sequence,) sources, windows; one writer per key, the mirror of
 *		ck_parse's readers.  p is only read.
 */
static void
ck_write_document(SfPipeline *p, StringInfo buf)
{
	SfRow	   *rows;
	int64		nrows;

	appendStringInfoCharMacro(buf, '{');
	if (p->def.measures != NULL)
	{
		/* version 2: the last arrival number given */
		sf_json_write_key(buf, "arrivals", true);
		sf_json_write_int64(buf, p->arrivals);
	}
	sf_json_write_key(buf, "changelog", p->def.measures == NULL);
	wr_changelog(buf, p);
	sf_json_write_key(buf, "clock", false);
	wr_clock(buf, p);
	sf_json_write_key(buf, "definition", false);
	ck_write_definition(buf, &p->def);
	sf_json_write_key(buf, "identities", false);
	wr_identities(buf, p);
	sf_json_write_key(buf, "late", false);
	wr_late(buf, p);
	if (p->def.has_retention)
	{
		/* late_seq is never reused, even when every row is forgotten */
		sf_json_write_key(buf, "late_sequence", false);
		sf_json_write_int64(buf, p->late_forgotten + p->nlate);
	}
	sf_json_write_key(buf, "sources", false);
	wr_sources(buf, p);

	/* windows: the window index document, live rows in address order */
	sf_json_write_key(buf, "windows", false);
	nrows = sf_collect_rows(p, false, &rows);
	ck_write_rows(buf, p, rows, nrows);
	pfree(rows);

	appendStringInfoCharMacro(buf, '}');
}

/* Wrap a document into the envelope (see docs/checkpoint-format.md) */
static bytea *
ck_wrap(const char *json, Size jsonlen, uint16 version)
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
			elog(ERROR, "streamforge: could not compress checkpoint: zlib error %d", rc);
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
	ck_put16(hdr + CK_OFF_VERSION, version);
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
	result = ck_wrap(json.data, json.len,
					 p->def.measures == NULL ? CK_FORMAT_VERSION :
					 p->def.measures->nvar > 0 ? CK_FORMAT_VAR :
					 CK_FORMAT_MEASURES);
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
ck_unwrap(const char *data, Size len, Size *jsonlen, int *version_out)
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
	if (version != CK_FORMAT_VERSION && version != CK_FORMAT_MEASURES &&
		version != CK_FORMAT_VAR)
		ck_error(CK_ENVELOPE,
				 "The checkpoint has format version %u, this build reads versions %d to %d.",
				 version, CK_FORMAT_VERSION, CK_FORMAT_VAR);
	*version_out = version;
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
 * Phase 2: the document (the parts other than the definition are
 * codec_parse.c's)
 * ----------------------------------------------------------------
 */

/*
 * The document json[0..len) into doc: each top-level key, in byte order,
 * then the end of the input.  The mirror of ck_write_document.
 */
static void
ck_parse(const char *json, Size len, CkDoc *doc, int version)
{
	SfJsonReader r = {json, len, 0, version};

	memset(doc, 0, sizeof(CkDoc));
	sf_json_char(&r, '{');
	if (version >= 2)
	{
		sf_json_key(&r, "arrivals", true);
		doc->arrivals = sf_json_int64(&r, "arrivals");
	}
	sf_json_key(&r, "changelog", version < 2);
	rd_changelog(&r, doc);
	sf_json_key(&r, "clock", false);
	rd_clock(&r, doc);
	sf_json_key(&r, "definition", false);
	ck_read_definition(&r, doc);
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
		if (def->measures != NULL)
			ck_build_identity(p, id, id->built);
	}
	p->arrivals = doc->arrivals;

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
 * The four phases of ck_decode, run in scratch: the built pipeline is set
 * in *p as soon as it exists (so that ck_decode can free it on error), and
 * the validated document is copied into oldcxt as *json_out if asked.
 * capped: refuse more live buckets than streamforge.max_live_buckets.
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
	int			version;

	MemoryContextSwitchTo(scratch);
	json = ck_unwrap(data, len, &jsonlen, &version);
	ck_parse(json, jsonlen, &doc, version);
	ck_check_definition(&doc, target);
	ck_check_measures(&doc, version);

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
	ck_check_built_aggregates(*p);
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
 * The length of the JSON document a checkpoint's envelope declares, read
 * without inflating anything: 0 unless the envelope is intact (magic,
 * version, payload length, checksum) and the length one decoding could
 * accept, so that corrupt input keeps its SF003.  Decoding refuses a
 * payload that inflates to any other length.  Cost: one CRC pass over the
 * (compressed) bytes.
 */
static Size
ck_declared_size(const char *data, Size len)
{
	uLong		crc;
	Size		declared;

	if (len < CK_HEADER_LEN || memcmp(data, CK_MAGIC, CK_MAGIC_LEN) != 0 ||
		(ck_get16(data + CK_OFF_VERSION) != CK_FORMAT_VERSION &&
		 ck_get16(data + CK_OFF_VERSION) != CK_FORMAT_MEASURES) ||
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

/*
 * sf_checkpoint_document
 *		The JSON document of a checkpoint, after the same validation as a
 *		restore into a pipeline with the checkpoint's own definition (and
 *		the same streamforge.max_live_buckets, since validating builds the
 *		buckets).  palloc'd in CurrentMemoryContext, NUL-terminated.
 */
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
	Size		declared = ck_declared_size(data, len);

	if ((uint64) declared > (uint64) sf_max_checkpoint_size * 1024)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("checkpoint document exceeds streamforge.max_checkpoint_size"),
				 errdetail("The checkpoint holds a document of %zu bytes, the limit is %d kB.",
						   declared, sf_max_checkpoint_size),
				 errhint("A superuser can raise streamforge.max_checkpoint_size.")));
}

/* ----------------------------------------------------------------
 * The stored definition (persist/definition.c)
 * ----------------------------------------------------------------
 */

/*
 * A stored document (streamforge.pipeline.definition, in the canonical
 * spelling: persist/definition.c) into def, allocated in the current memory
 * context: every option, in the one spelling sf_definition_write gives,
 * the definition valid as a checkpoint's must be and each option by its
 * validator.  Anything else raises SF003; the caller (persist) re-raises
 * it as the pipeline's corruption.
 */
void
sf_definition_read(const char *s, int len, SfPipelineDef *def)
{
	SfJsonReader r = {s, len, 0, 2};
	CkDoc	   *doc = palloc0(sizeof(CkDoc));

	ck_read_stored_definition(&r, doc);
	if (r.pos != r.len)
		ck_error(CK_DOCUMENT, "The definition has trailing bytes at byte %d.",
				 (int) r.pos);
	ck_check_definition(doc, NULL);
	for (int i = 0; i < sf_noptions; i++)
	{
		const SfOption *o = &sf_options[i];
		SfOptProblem problem;

		if (o->check == NULL || !sf_opt_is_set(&doc->def, o))
			continue;
		problem = o->check(&doc->def, o);
		if (problem != SF_OPT_OK)
			ck_error(CK_DEFINITION, "The %s is %s.", o->name,
					 problem == SF_OPT_NEGATIVE ? "negative" : "not positive");
	}
	*def = doc->def;
	if (def->has_idle_timeout &&
		!sf_interval_us(&def->idle_timeout, &def->idle_timeout_us))
		ck_error(CK_DEFINITION, "The idle_timeout is out of range.");
	/* the one spelling: what the writer gives for it, byte for byte */
	{
		StringInfoData again;

		initStringInfo(&again);
		sf_definition_write(&again, def, SF_OPT_STORED);
		if (again.len != len || memcmp(again.data, s, len) != 0)
			ck_error(CK_DEFINITION, "The definition is not spelled as create_pipeline writes it.");
		pfree(again.data);
	}
}
