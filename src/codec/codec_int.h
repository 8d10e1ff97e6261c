/*-------------------------------------------------------------------------
 *
 * codec_int.h
 *	  Private to src/codec/: the canonical JSON writer and reader
 *	  (canonjson.c), the errors the checkpoint codec raises, the scratch
 *	  structures of a parsed document, and the functions the checkpoint
 *	  codec's files call in each other (codec.c calls the others; they call
 *	  nothing in codec.c).  test/fuzz/fuzz_checkpoint.c includes it for the
 *	  JSON reader.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/codec/codec_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SF_CODEC_INT_H
#define SF_CODEC_INT_H

#include "codec/codec.h"
#include "engine/engine.h"

/* ----------------------------------------------------------------
 * Canonical JSON (canonjson.c): writer and strict pull reader
 * ----------------------------------------------------------------
 */

/* A string read from a document: palloc'd, NUL-terminated, no NUL inside */
typedef struct SfJsonStr
{
	char	   *data;
	int			len;
} SfJsonStr;

/* The reader's position in a document of len bytes */
typedef struct SfJsonReader
{
	const char *s;
	Size		len;
	Size		pos;
	int			version;		/* of the checkpoint format being read */
} SfJsonReader;

/* Writer: appends one value (or "key": / ,"key":) in its canonical form */
extern void sf_json_write_string(StringInfo buf, const char *s, int len);
extern void sf_json_write_key(StringInfo buf, const char *key, bool first);
extern void sf_json_write_int64(StringInfo buf, int64 v);
extern void sf_json_write_int128(StringInfo buf, int128 v);
extern void sf_json_write_opt_int64(StringInfo buf, bool has, int64 v);
extern void sf_json_write_bool(StringInfo buf, bool v);

/*
 * Reader: each function consumes exactly the canonical spelling of what the
 * caller's schema expects next, or raises SF003.  field names the value in
 * error details.
 */
extern void sf_json_char(SfJsonReader *r, char c);
extern bool sf_json_literal(SfJsonReader *r, const char *lit);
extern void sf_json_key(SfJsonReader *r, const char *key, bool first);
extern bool sf_json_array_begin(SfJsonReader *r, const char *field);
extern bool sf_json_array_next(SfJsonReader *r);
extern int64 sf_json_int64(SfJsonReader *r, const char *field);
extern int128 sf_json_int128(SfJsonReader *r, const char *field);
extern int64 sf_json_opt_int64(SfJsonReader *r, const char *field, bool *has);
extern bool sf_json_bool(SfJsonReader *r, const char *field);
extern void sf_json_string(SfJsonReader *r, const char *field, SfJsonStr *out);

static inline bool
sf_json_peek(const SfJsonReader *r, char c)
{
	return r->pos < r->len && r->s[r->pos] == c;
}

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
	SfJsonStr	window_name;
	int			window;			/* index into def.windows, once resolved */
	SfJsonStr	key;
	int64		start;
	int64		end;
	SfAgg		agg;			/* version 2: ext is the row's "state" */
	SfAgg		derived;		/* ck_check_derivation: from the identities */
	int			nstate;			/* version 2: words in agg.ext */
	/* version 3: "state_var", each variable-size state's words */
	int			nvar;
	int64	  **var_words;
	int64	   *var_n;
} CkRow;

typedef struct CkClock
{
	SfJsonStr	name;
	bool		has_progress;
	int64		progress;
	bool		idle;
} CkClock;

typedef struct CkIdentity
{
	SfJsonStr	event_id;
	SfJsonStr	key;
	int64		event_time;
	int64		value;
	bool		late;
	int64		ndeliveries;	/* how often the sources deliver it */
	int64		late_row;		/* index into doc->late, or -1 */
	SfIdentity *built;			/* phase 4 */
	uint32		built_handle;
	/* version 2 (measures pipelines) */
	int64		arrival;
	int64	   *measures;
	int			nmeasures;
	uint64		nulls;			/* bit m: measure m is null (0.4.0) */
} CkIdentity;

/* A delivery whose offset record is forgotten (retention: null) */
#define CK_FORGOTTEN	(-2)

typedef struct CkSource
{
	SfJsonStr	name;
	int64		base;			/* offset of deliveries[0] (0 without retention) */
	int64		n;				/* consumed offset + 1 - base */
	int64	   *deliveries;		/* identity index per offset, -1: unknown,
								 * CK_FORGOTTEN: forgotten */
	SfJsonStr	first_unknown;	/* the first unresolved event_id */
	int64		first_unknown_at;
} CkSource;

typedef struct CkLate
{
	SfJsonStr	event_id;
	int64		identity;		/* index into doc->ids, -1: unknown */
	/* retention only: the event itself (its identity may be forgotten) */
	SfJsonStr	key;
	int64		event_time;
	int64		value;
	int64		late_seq;
	SfJsonStr	partition;
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
	/* "late_sequence" (retention only): the last late_seq ever */
	int64		late_sequence;
	/* the horizon of docs/semantics.md, Retention, from the definition and the clock */
	bool		has_horizon;
	int64		horizon;
	/* version 2: "arrivals", and the definition's "aggregates" spellings */
	int64		arrivals;
	char	  **aggs;
	int			naggs;
	/* "sources" */
	CkSource   *sources;
	int64		nsources;
	/* "windows": the window index document */
	CkRow	   *rows;
	int64		nrows;
} CkDoc;

/* ----------------------------------------------------------------
 * Helpers shared by the checkpoint codec's files, and its phases
 * ----------------------------------------------------------------
 */

/* Byte-wise comparison of two strings, shorter first on a common prefix */
static inline int
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

/*
 * Binary search of the sorted elements [lo, hi) of base (elsize bytes
 * each): the index of the element equal to target, or -1.  cmp(elem,
 * target) is negative, zero or positive as elem sorts before, with or after
 * target.  Inline, so that each caller's cmp is inlined into the loop.
 */
static inline int64
ck_bsearch(const void *base, Size elsize, int64 lo, int64 hi,
		   const void *target,
		   int (*cmp) (const void *elem, const void *target))
{
	hi--;
	while (lo <= hi)
	{
		int64		mid = lo + (hi - lo) / 2;
		int			c = cmp((const char *) base + mid * elsize, target);

		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/*
 * Human-readable address of a row, for error details (inline: codec.c,
 * codec_validate.c and codec_derive.c use it, and the last two call
 * nothing in codec.c)
 */
static inline char *
ck_row_desc(const CkRow *r)
{
	return psprintf("window \"%s\", key \"%s\", [" INT64_FORMAT ", " INT64_FORMAT ")",
					sf_msg_str(r->window_name.data, r->window_name.len), sf_msg_str(r->key.data, r->key.len), r->start, r->end);
}

/* codec_parse.c: phase 2, the readers of the parts ck_parse (codec.c) reads */
extern void *ck_grow(void *arr, int64 *cap, int64 n, Size elsize);
extern CkRow *rd_rows(SfJsonReader *r, const char *field, int64 *n);
extern void rd_changelog(SfJsonReader *r, CkDoc *doc);
extern void rd_clock(SfJsonReader *r, CkDoc *doc);
extern void rd_identities(SfJsonReader *r, CkDoc *doc);
extern void rd_late(SfJsonReader *r, CkDoc *doc);
extern void rd_sources(SfJsonReader *r, CkDoc *doc);

/* codec_write.c: the writers of the parts ck_write_document (codec.c) writes */
extern void ck_write_rows(StringInfo buf, const SfPipeline *p,
						  const SfRow *rows, int64 n);
extern void wr_changelog(StringInfo buf, SfPipeline *p);
extern void wr_clock(StringInfo buf, const SfPipeline *p);
extern void wr_identities(StringInfo buf, SfPipeline *p);
extern void wr_late(StringInfo buf, const SfPipeline *p);
extern void wr_sources(StringInfo buf, const SfPipeline *p);

/* codec_validate.c: phase 3, in the order codec.c runs them */
extern void ck_check_definition(const CkDoc *doc, const SfPipelineDef *target);
extern void ck_check_clock(CkDoc *doc);
extern void ck_check_sources(CkDoc *doc);
extern void ck_check_late(CkDoc *doc);
extern void ck_window_index_decode(const CkDoc *doc, CkRow *rows, int64 n);
extern void ck_changelog_decode(const CkDoc *doc, CkRow *rows, int64 n);
extern void ck_check_views(const CkDoc *doc);

/* codec_measures.c: format version 2, measures pipelines */
extern void ck_write_def_aggregates(StringInfo buf, const SfMeasuresDef *md);
extern void ck_write_def_measures(StringInfo buf, const SfMeasuresDef *md);
extern void ck_write_id_arrival(StringInfo buf, const SfPipeline *p,
								const SfIdentity *id);
extern void ck_write_id_measures(StringInfo buf, const SfPipeline *p,
								 const SfIdentity *id);
extern void ck_write_row_state(StringInfo buf, const SfPipeline *p,
							   const SfAgg *agg);
extern void ck_read_def_aggregates(SfJsonReader *r, CkDoc *doc);
extern void ck_read_def_measures(SfJsonReader *r, CkDoc *doc);
extern void ck_read_id_arrival(SfJsonReader *r, CkIdentity *id);
extern void ck_read_id_measures(SfJsonReader *r, CkIdentity *id);
extern void ck_read_row_state(SfJsonReader *r, CkRow *row);
extern void ck_check_measures(CkDoc *doc, int version);
extern void ck_build_identity(SfPipeline *p, const CkIdentity *id,
							  SfIdentity *built);
extern void ck_check_built_aggregates(SfPipeline *p);

/* codec_definition.c: the "definition" part, written and read */
extern void ck_write_definition(StringInfo buf, const SfPipelineDef *def);
extern void ck_read_definition(SfJsonReader *r, CkDoc *doc);
extern void ck_read_stored_definition(SfJsonReader *r, CkDoc *doc);

/* codec_derive.c: phase 3, last: the live buckets from the identities */
extern void ck_check_derivation(CkDoc *doc);

#endif							/* SF_CODEC_INT_H */
