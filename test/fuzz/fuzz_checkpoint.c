/*-------------------------------------------------------------------------
 *
 * fuzz_checkpoint.c
 *	  libFuzzer target: checkpoint bytes -> decode + validate (+ use).
 *
 * For every input:
 *	1. sf_checkpoint_document() must either accept it or raise SF003; any
 *	   other error (an elog, an out-of-memory, 22003...) or a crash is a bug.
 *	   Either way the scratch memory must be gone afterwards.
 *	2. If accepted, the input is a valid state: decoding it against its own
 *	   definition must succeed, its re-encoding must have the same document,
 *	   and the engine must be able to run advance / ingest / mark_idle on it
 *	   (only the engine's own SQLSTATEs SF001, SF002, 22003 may be raised),
 *	   after which its checkpoint must again be accepted: the validator must
 *	   accept every state the engine produces from a valid one.
 *
 * Every input is tried twice: as it is, and with its bytes 24.. wrapped in
 * a correct envelope (see shim_checkpoint_fixed in shim.c), so that the fuzzer explores the
 * document and not only the checksum.
 *
 * The backend functions come from shim.c; errors longjmp to the sigsetjmp
 * points below, like PG_TRY does.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  test/fuzz/fuzz_checkpoint.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

#include "utils/memutils.h"

#include "codec/codec.h"
#include "codec/codec_int.h"
#include "engine/engine.h"
#include "shim.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void pg_attribute_noreturn()
fail(const char *what)
{
	fprintf(stderr, "fuzz_checkpoint: %s\n  sqlstate %s: %s\n  detail: %s\n",
			what, unpack_sql_state(shim_sqlerrcode), shim_message, shim_detail);
	abort();
}

/* The definition inside an accepted (hence canonical) document */
static void
read_definition(const char *doc, SfPipelineDef *def)
{
	const char *at = strstr(doc, "\"definition\":");
	SfJsonReader r;
	int			cap = 0;

	if (at == NULL)
		fail("accepted document has no definition");
	memset(def, 0, sizeof(SfPipelineDef));
	strlcpy(def->name, "fuzz", sizeof(def->name));
	r.s = at + strlen("\"definition\":");
	r.len = strlen(r.s);
	r.pos = 0;
	sf_json_char(&r, '{');
	sf_json_key(&r, "lateness", true);
	def->lateness = sf_json_int64(&r, "lateness");
	sf_json_key(&r, "partitions", false);
	def->partitions = palloc(sizeof(*def->partitions) * 64);
	cap = 64;
	if (sf_json_array_begin(&r, "partitions"))
	{
		do
		{
			SfJsonStr	s;

			if (def->npartitions == cap)
			{
				cap *= 2;
				def->partitions = repalloc(def->partitions, sizeof(*def->partitions) * cap);
			}
			sf_json_string(&r, "partition", &s);
			strlcpy(def->partitions[def->npartitions++], s.data, SF_NAME_MAX + 1);
		} while (sf_json_array_next(&r));
	}
	if (sf_json_literal(&r, ",\"retention\":"))
	{
		def->has_retention = true;
		def->retention = sf_json_int64(&r, "retention");
	}
	sf_json_key(&r, "windows", false);
	cap = 64;
	def->windows = palloc0(sizeof(SfWindowDef) * cap);
	if (sf_json_array_begin(&r, "windows"))
	{
		do
		{
			SfWindowDef *w;
			SfJsonStr	s;

			if (def->nwindows == cap)
			{
				cap *= 2;
				def->windows = repalloc(def->windows, sizeof(SfWindowDef) * cap);
			}
			w = &def->windows[def->nwindows++];
			memset(w, 0, sizeof(SfWindowDef));
			sf_json_char(&r, '{');
			if (sf_json_literal(&r, "\"gap\":"))
			{
				w->kind = SF_WINDOW_SESSION;
				w->gap = sf_json_int64(&r, "gap");
				sf_json_key(&r, "kind", false);
				sf_json_string(&r, "kind", &s);
				sf_json_key(&r, "name", false);
				sf_json_string(&r, "name", &s);
				strlcpy(w->name, s.data, sizeof(w->name));
			}
			else
			{
				sf_json_key(&r, "kind", true);
				sf_json_string(&r, "kind", &s);
				w->kind = strcmp(s.data, "fixed") == 0 ? SF_WINDOW_FIXED : SF_WINDOW_SLIDING;
				sf_json_key(&r, "name", false);
				sf_json_string(&r, "name", &s);
				strlcpy(w->name, s.data, sizeof(w->name));
				sf_json_key(&r, "size", false);
				w->size = sf_json_int64(&r, "size");
				if (w->kind == SF_WINDOW_SLIDING)
				{
					sf_json_key(&r, "step", false);
					w->step = sf_json_int64(&r, "step");
				}
			}
			sf_json_char(&r, '}');
		} while (sf_json_array_next(&r));
	}
}

/* Run one engine operation; false if it raised one of the engine's errors */
typedef enum
{
	OP_ADVANCE,
	OP_INGEST,
	OP_IDLE
} OpKind;

static bool
run_op(SfPipeline *p, OpKind kind, const char *partition, int64 progress,
	   const SfDelivery *d)
{
	sigjmp_buf	jb;
	sigjmp_buf *save = PG_exception_stack;
	SfChangeList out = {0};

	if (sigsetjmp(jb, 0) == 0)
	{
		PG_exception_stack = &jb;
		switch (kind)
		{
			case OP_ADVANCE:
				sf_engine_advance(p, partition, progress, &out);
				break;
			case OP_INGEST:
				sf_engine_ingest(p, d, &out);
				break;
			case OP_IDLE:
				sf_engine_mark_idle(p, partition, &out);
				break;
		}
		PG_exception_stack = save;
		return true;
	}
	PG_exception_stack = save;
	if (shim_sqlerrcode != ERRCODE_SF_OFFSET_CONFLICT &&
		shim_sqlerrcode != ERRCODE_SF_IDENTITY_CONFLICT &&
		shim_sqlerrcode != ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE)
		fail("engine operation on a restored pipeline raised an unexpected error");
	return false;
}

static void
exercise(const char *doc, const uint8_t *data, size_t size)
{
	SfPipelineDef def;
	SfPipeline *p;
	bytea	   *enc;
	char	   *doc2;
	uint32		h = 2166136261u;
	SfDelivery	d;
	int			pi;
	int64		base;

	read_definition(doc, &def);

	p = sf_checkpoint_decode(CurrentMemoryContext, &def, (const char *) data, size);
	enc = sf_checkpoint_encode(p);
	doc2 = sf_checkpoint_document(VARDATA(enc), VARSIZE(enc) - VARHDRSZ);
	if (strcmp(doc, doc2) != 0)
		fail("re-encoded checkpoint has another document");

	/*
	 * A sliding window may legally put one event into up to 100000 buckets;
	 * then a single ingest and the checkpoints after it cost seconds under
	 * the sanitizers.  Such inputs are still decoded and re-encoded above;
	 * only the engine round is skipped, to keep the fuzzer fast.
	 */
	for (int i = 0; i < def.nwindows; i++)
		if (def.windows[i].kind == SF_WINDOW_SLIDING &&
			def.windows[i].size / def.windows[i].step > 1000)
			return;

	for (size_t i = 0; i < size; i++)
		h = (h ^ data[i]) * 16777619u;
	pi = h % def.npartitions;
	base = p->has_watermark ? p->watermark : 0;
	base = Min(base, PG_INT64_MAX - 64);

	/* a new event at the watermark (never late), then clock moves */
	memset(&d, 0, sizeof(d));
	d.partition = def.partitions[pi];
	d.source_offset = p->partitions[pi].consumed + 1;
	d.event_id = "\x1f" "fuzz-new-event";
	d.event_id_len = strlen(d.event_id);
	d.key = "k";
	d.key_len = 1;
	d.event_time = base + (int64) (h % 7);
	d.value = (int64) (h >> 3) - (int64) (1u << 28);
	if (!run_op(p, OP_INGEST, NULL, 0, &d) && p->busy)
		return;
	if (!run_op(p, OP_ADVANCE, def.partitions[(pi + 1) % def.npartitions],
				base + (int64) (h % 23), NULL) && p->busy)
		return;
	if (!run_op(p, OP_IDLE, def.partitions[pi], 0, NULL) && p->busy)
		return;
	/* a duplicate delivery of the same event elsewhere */
	d.partition = def.partitions[(pi + 1) % def.npartitions];
	d.source_offset = p->partitions[(pi + 1) % def.npartitions].consumed + 1;
	if (!run_op(p, OP_INGEST, NULL, 0, &d) && p->busy)
		return;

	/* the engine's state must be a valid checkpoint again */
	enc = sf_checkpoint_encode(p);
	(void) sf_checkpoint_document(VARDATA(enc), VARSIZE(enc) - VARHDRSZ);

	/*
	 * and so must the same state under another retention (retention.c): a
	 * smaller one, or any one while nothing is forgotten
	 */
	if (!p->def.has_retention || h % 40 <= p->def.retention ||
		(p->forgotten_offsets == 0 && p->late_forgotten == 0))
	{
		SfPipeline *q = sf_pipeline_with_retention(CurrentMemoryContext, p,
												   true, (int64) (h % 40));

		enc = sf_checkpoint_encode(q);
		(void) sf_checkpoint_document(VARDATA(enc), VARSIZE(enc) - VARHDRSZ);
		if (!run_op(q, OP_INGEST, NULL, 0, &d) && q->busy)
			return;
		enc = sf_checkpoint_encode(q);
		(void) sf_checkpoint_document(VARDATA(enc), VARSIZE(enc) - VARHDRSZ);
		sf_pipeline_free(q);
	}
	sf_pipeline_free(p);
}

static void
check_input(const uint8_t *data, size_t size, bool seed)
{
	MemoryContext top = AllocSetContextCreate(NULL, "fuzz",
											  ALLOCSET_DEFAULT_SIZES);
	sigjmp_buf	jb;
	volatile int stage = 0;

	CurrentMemoryContext = top;
	if (sigsetjmp(jb, 0) == 0)
	{
		char	   *doc;

		PG_exception_stack = &jb;
		doc = sf_checkpoint_document((const char *) data, size);
		if (top->firstchild != NULL)
			fail("sf_checkpoint_document left memory contexts behind");
		stage = 1;
		exercise(doc, data, size);
	}
	else
	{
		if (stage == 0 && seed)
			fail("a seed checkpoint was rejected");
		if (stage == 0 && shim_sqlerrcode != ERRCODE_SF_INVALID_CHECKPOINT)
			fail("a checkpoint was rejected without SF003");
		if (stage == 0 && strncmp(shim_message, "invalid checkpoint", 18) != 0)
			fail("an SF003 message does not start with \"invalid checkpoint\"");
		if (stage == 0 && top->firstchild != NULL)
			fail("a rejected checkpoint left memory contexts behind");
		if (stage == 1)
			fail("a valid checkpoint failed to restore, re-encode or re-validate");
	}
	PG_exception_stack = NULL;
	CurrentMemoryContext = NULL;
	MemoryContextDelete(top);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bool		seeds = getenv("SF_FUZZ_SEEDS_VALID") != NULL;
	uint8_t    *fixed;
	size_t		fixedsize;

	/* the input as it is: envelope checks included */
	check_input(data, size, seeds);
	/* the same document in a correct envelope */
	if (!seeds && (fixed = shim_checkpoint_fixed(data, size, &fixedsize)) != NULL)
	{
		check_input(fixed, fixedsize, false);
		free(fixed);
	}
	return 0;
}
