/*-------------------------------------------------------------------------
 *
 * fuzz_snapshot.c
 *	  libFuzzer target: stored snapshot bytes -> sf_snapshot_decode
 *	  (src/codec/snapshot.c, the binary form a backend loads without a
 *	  parse or a re-validation).
 *
 * The seeds (test/fuzz/corpus/snapshot/, made by test/fuzz/make-corpus.sh
 * from test/fuzz/corpus.sql) are the binary snapshots of real pipelines.
 * The pipeline's definition, which persist.c would pass from the
 * pipeline's row, is read here from the snapshot's own definition section
 * (with format 3 its measures and aggregates too, built by the engine),
 * and must be one create_pipeline accepts (otherwise a fixed one is used,
 * which the decoder then refuses as not the pipeline's).
 *
 * For every input:
 *	1. sf_snapshot_decode() must either load it or raise
 *	   ERRCODE_DATA_CORRUPTED (XX001; or SF003 for an input that is not a
 *	   binary snapshot, which goes to the checkpoint decoder); anything
 *	   else, or a crash or a sanitizer report, is a bug.  Memory it
 *	   allocated must be gone after an error.
 *	2. If loaded: its live buckets are consistent (count >= 1, min <= max,
 *	   the sum within [count * min, count * max]: the decoder checks them).
 *	   Beyond that the bounds checks promise only that a damaged snapshot
 *	   does not crash the backend (the CRC is what catches damage), so the
 *	   engine must then run ingest / advance / mark_idle and encode the
 *	   state again (snapshot and checkpoint) without a crash; errors are
 *	   allowed.  A seed (SF_FUZZ_SEEDS_VALID) must load into a valid state:
 *	   its checkpoint is accepted, and its snapshot loads back into the
 *	   same checkpoint.
 *
 * Every input is tried twice: as it is, and with its header's length and
 * CRC made right (shim_snapshot_fixed in shim.c), so that the fuzzer explores the payload
 * and not only the checksum.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  test/fuzz/fuzz_snapshot.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

#include "utils/memutils.h"

#include "codec/codec.h"
#include "engine/engine.h"
#include "shim.h"

#define SNAP_HEADER		24
#define MAX_DEF_ITEMS	64

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void pg_attribute_noreturn()
fail(const char *what)
{
	fprintf(stderr, "fuzz_snapshot: %s\n  sqlstate %s: %s\n  detail: %s\n",
			what, unpack_sql_state(shim_sqlerrcode), shim_message, shim_detail);
	abort();
}

/* A bounds-checked little-endian reader over the definition section */
typedef struct Reader
{
	const uint8_t *s;
	size_t		len;
	size_t		pos;
	bool		bad;
} Reader;

static uint64
get(Reader *r, int n)
{
	uint64		v = 0;

	if (r->bad || r->len - r->pos < (size_t) n)
	{
		r->bad = true;
		return 0;
	}
	for (int i = 0; i < n; i++)
		v |= (uint64) r->s[r->pos + i] << (8 * i);
	r->pos += n;
	return v;
}

static void
get_name(Reader *r, char *dst)
{
	uint32		len = (uint32) get(r, 4);

	if (r->bad || len < 1 || len > SF_NAME_MAX || r->len - r->pos < len ||
		memchr(r->s + r->pos, '\0', len) != NULL)
	{
		r->bad = true;
		dst[0] = '\0';
		return;
	}
	memcpy(dst, r->s + r->pos, len);
	dst[len] = '\0';
	r->pos += len;
}

/* The format version in a snapshot's header (the caller checked its size) */
static uint32
get_version(const uint8_t *data)
{
	return (uint32) data[8] | ((uint32) data[9] << 8) |
		((uint32) data[10] << 16) | ((uint32) data[11] << 24);
}

/*
 * Version 3's part of the definition: the writers mode and, with measures,
 * the aggregates' and measures' spellings, built into def->measures by the
 * engine as create_pipeline would (in CurrentMemoryContext); false if it
 * is not one create_pipeline accepts.
 */
static bool
read_def_v3(Reader *r, SfPipelineDef *def)
{
	uint8		writers = (uint8) get(r, 1);
	uint8		has = (uint8) get(r, 1);
	char	  **sp[2];
	int			n[2];
	sigjmp_buf	jb;
	SfMeasuresDef *volatile md = NULL;

	if (r->bad || writers != SF_WRITERS_SERIAL || has > 1)
		return false;
	def->writers = writers;
	if (!has)
		return true;
	for (int part = 0; part < 2; part++)
	{
		n[part] = (int) get(r, 4);
		if (r->bad || n[part] < 1 || n[part] > SF_MAX_AGGREGATES)
			return false;
		sp[part] = palloc(n[part] * sizeof(char *));
		for (int i = 0; i < n[part]; i++)
		{
			uint32		len = (uint32) get(r, 4);

			if (r->bad || len < 1 || len > 1024 || r->len - r->pos < len ||
				memchr(r->s + r->pos, '\0', len) != NULL)
				return false;
			sp[part][i] = pnstrdup((const char *) r->s + r->pos, len);
			r->pos += len;
		}
	}
	if (sigsetjmp(jb, 0) == 0)
	{
		PG_exception_stack = &jb;
		md = sf_measures_def_build(sp[1], n[1], sp[0], n[0]);
	}
	PG_exception_stack = NULL;
	if (md == NULL)
		return false;
	def->measures = md;
	return true;
}

/*
 * The definition in the snapshot's payload, if it is one create_pipeline
 * could have made (normalized: names sorted and unique; sizes positive; a
 * sliding window of at most 1000 buckets per event, to keep the target
 * fast); else false.
 */
static bool
read_def(const uint8_t *data, size_t size, SfPipelineDef *def,
		 char (*parts)[SF_NAME_MAX + 1], SfWindowDef *w)
{
	Reader		r = {data, size, SNAP_HEADER, false};

	if (size < SNAP_HEADER || memcmp(data, "SFSNAPB\n", 8) != 0)
		return false;
	memset(def, 0, sizeof(SfPipelineDef));
	strlcpy(def->name, "fz", sizeof(def->name));
	def->lateness = (int64) get(&r, 8);
	def->has_retention = get(&r, 1) != 0;
	def->retention = (int64) get(&r, 8);
	if (!def->has_retention)
		def->retention = 0;
	def->npartitions = (int) get(&r, 4);
	if (r.bad || def->lateness < 0 || def->retention < 0 ||
		def->npartitions < 1 || def->npartitions > MAX_DEF_ITEMS)
		return false;
	for (int i = 0; i < def->npartitions; i++)
	{
		get_name(&r, parts[i]);
		if (r.bad || (i > 0 && strcmp(parts[i - 1], parts[i]) >= 0))
			return false;
	}
	def->partitions = parts;
	def->nwindows = (int) get(&r, 4);
	if (r.bad || def->nwindows < 1 || def->nwindows > MAX_DEF_ITEMS)
		return false;
	memset(w, 0, sizeof(SfWindowDef) * def->nwindows);
	for (int i = 0; i < def->nwindows; i++)
	{
		get_name(&r, w[i].name);
		w[i].kind = (SfWindowKind) get(&r, 1);
		w[i].size = (int64) get(&r, 8);
		w[i].step = (int64) get(&r, 8);
		w[i].gap = (int64) get(&r, 8);
		if (r.bad || (i > 0 && strcmp(w[i - 1].name, w[i].name) >= 0))
			return false;
		switch (w[i].kind)
		{
			case SF_WINDOW_FIXED:
				if (w[i].size <= 0)
					return false;
				w[i].step = w[i].gap = 0;
				break;
			case SF_WINDOW_SLIDING:
				if (w[i].size <= 0 || w[i].step <= 0 ||
					w[i].size / w[i].step > 1000)
					return false;
				w[i].gap = 0;
				break;
			case SF_WINDOW_SESSION:
				if (w[i].gap <= 0)
					return false;
				w[i].size = w[i].step = 0;
				break;
			default:
				return false;
		}
	}
	def->windows = w;
	if (get_version(data) >= 3 && !read_def_v3(&r, def))
		return false;
	return true;
}

static void
fixed_def(SfPipelineDef *def, char (*parts)[SF_NAME_MAX + 1], SfWindowDef *w)
{
	memset(def, 0, sizeof(SfPipelineDef));
	strlcpy(def->name, "fz", sizeof(def->name));
	strlcpy(parts[0], "p", SF_NAME_MAX + 1);
	def->partitions = parts;
	def->npartitions = 1;
	memset(w, 0, sizeof(SfWindowDef));
	strlcpy(w[0].name, "f", sizeof(w[0].name));
	w[0].kind = SF_WINDOW_FIXED;
	w[0].size = 10;
	def->windows = w;
	def->nwindows = 1;
}

/* Run one step; false if it raised an error (any: see the head comment) */
typedef enum
{
	OP_INGEST,
	OP_ADVANCE,
	OP_IDLE,
	OP_SNAPSHOT,
	OP_CHECKPOINT
} OpKind;

static bool
run_op(SfPipeline *p, OpKind kind, int pi, int64 t, uint32 h)
{
	sigjmp_buf	jb;
	sigjmp_buf *save = PG_exception_stack;
	SfChangeList out = {0};
	SfDelivery	d;

	if (sigsetjmp(jb, 0) == 0)
	{
		PG_exception_stack = &jb;
		switch (kind)
		{
			case OP_INGEST:
				memset(&d, 0, sizeof(d));
				d.partition = p->def.partitions[pi];
				d.source_offset = p->partitions[pi].consumed + 1;
				d.event_id = "\x1f" "fuzz-new-event";
				d.event_id_len = strlen(d.event_id);
				d.key = "k";
				d.key_len = 1;
				d.event_time = t;
				d.value = (int64) (h >> 3) - (int64) (1u << 28);
				sf_engine_ingest(p, &d, &out);
				/* and the same event again, elsewhere: a duplicate */
				pi = (pi + 1) % p->def.npartitions;
				d.partition = p->def.partitions[pi];
				d.source_offset = p->partitions[pi].consumed + 1;
				out.n = 0;
				sf_engine_ingest(p, &d, &out);
				break;
			case OP_ADVANCE:
				sf_engine_advance(p, p->def.partitions[pi], t, &out);
				break;
			case OP_IDLE:
				sf_engine_mark_idle(p, p->def.partitions[pi], &out);
				break;
			case OP_SNAPSHOT:
				(void) sf_snapshot_encode(p);
				break;
			case OP_CHECKPOINT:
				(void) sf_checkpoint_encode(p);
				break;
		}
		PG_exception_stack = save;
		return true;
	}
	PG_exception_stack = save;
	return false;
}

/* A seed: a valid state whose snapshot loads back into the same state */
static void
check_seed_state(SfPipeline *p, const SfPipelineDef *def)
{
	sigjmp_buf	jb;
	bytea	   *c1,
			   *c2,
			   *snap;
	SfPipeline *q;

	if (sigsetjmp(jb, 0) == 0)
	{
		PG_exception_stack = &jb;
		c1 = sf_checkpoint_encode(p);
		(void) sf_checkpoint_document(VARDATA(c1), VARSIZE(c1) - VARHDRSZ);
		snap = sf_snapshot_encode(p);
		q = sf_snapshot_decode(CurrentMemoryContext, def, VARDATA(snap),
							   VARSIZE(snap) - VARHDRSZ);
		c2 = sf_checkpoint_encode(q);
		PG_exception_stack = NULL;
	}
	else
		fail("a seed snapshot does not load into a valid state");
	if (VARSIZE(c1) != VARSIZE(c2) || memcmp(c1, c2, VARSIZE(c1)) != 0)
		fail("a seed snapshot, encoded again, loads into another state");
	sf_pipeline_free(q);
}

/*
 * A loaded snapshot's live buckets are what a checkpoint may hold: count
 * >= 1, min <= max, the sum within [count * min, count * max] (the decoder
 * checks them: a forged bucket must not reach the engine's arithmetic)
 */
static void
check_buckets(SfPipeline *p)
{
	SfRow	   *rows;
	int64		n = sf_collect_rows(p, false, &rows);

	for (int64 i = 0; i < n; i++)
	{
		const SfAgg *a = &rows[i].agg;

		if (a->count < 1 || a->min > a->max ||
			a->sum < (int128) a->min * a->count ||
			a->sum > (int128) a->max * a->count)
			fail("a loaded snapshot holds an inconsistent bucket");
	}
	pfree(rows);
}

static void
check_input(const uint8_t *data, size_t size, bool seed)
{
	MemoryContext top = AllocSetContextCreate(NULL, "fuzz",
											  ALLOCSET_DEFAULT_SIZES);
	char		parts[MAX_DEF_ITEMS][SF_NAME_MAX + 1];
	SfWindowDef windows[MAX_DEF_ITEMS];
	SfPipelineDef def;
	SfPipeline *volatile p = NULL;
	sigjmp_buf	jb;
	bool		binary;

	CurrentMemoryContext = top;
	binary = read_def(data, size, &def, parts, windows);
	if (!binary)
		fixed_def(&def, parts, windows);
	CurrentMemoryContext = top;
	if (sigsetjmp(jb, 0) == 0)
	{
		PG_exception_stack = &jb;
		p = sf_snapshot_decode(top, &def, (const char *) data, size);
		PG_exception_stack = NULL;
	}
	else
	{
		PG_exception_stack = NULL;
		CurrentMemoryContext = top;
		if (seed)
			fail("a seed snapshot was refused");
		if (shim_sqlerrcode != ERRCODE_DATA_CORRUPTED &&
			shim_sqlerrcode != ERRCODE_SF_INVALID_CHECKPOINT)
			fail("a snapshot was refused without XX001 (or SF003)");
		if (top->firstchild != NULL)
			fail("a refused snapshot left memory contexts behind");
	}

	if (p != NULL)
	{
		uint32		h = 2166136261u;
		int64		base;
		int			pi;

		if (seed)
			check_seed_state(p, &def);
		check_buckets(p);
		for (size_t i = 0; i < size; i++)
			h = (h ^ data[i]) * 16777619u;
		pi = h % def.npartitions;
		base = p->has_watermark ? p->watermark : 0;
		base = Min(base, PG_INT64_MAX - 64);
		(void) run_op(p, OP_SNAPSHOT, 0, 0, h);
		(void) run_op(p, OP_CHECKPOINT, 0, 0, h);
		if (!run_op(p, OP_INGEST, pi, base + (int64) (h % 7), h) && p->busy)
			goto done;
		if (!run_op(p, OP_ADVANCE, (pi + 1) % def.npartitions,
					base + (int64) (h % 23), h) && p->busy)
			goto done;
		if (!run_op(p, OP_IDLE, pi, 0, h) && p->busy)
			goto done;
		(void) run_op(p, OP_SNAPSHOT, 0, 0, h);
		(void) run_op(p, OP_CHECKPOINT, 0, 0, h);
done:
		sf_pipeline_free(p);
	}
	CurrentMemoryContext = NULL;
	MemoryContextDelete(top);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bool		seeds = getenv("SF_FUZZ_SEEDS_VALID") != NULL;
	uint8_t    *fixed;

	check_input(data, size, seeds);
	if (!seeds && (fixed = shim_snapshot_fixed(data, size)) != NULL)
	{
		if (memcmp(fixed, data, size) != 0)
			check_input(fixed, size, false);
		free(fixed);
	}
	return 0;
}
