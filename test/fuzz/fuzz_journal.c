/*-------------------------------------------------------------------------
 *
 * fuzz_journal.c
 *	  libFuzzer target: journal rows -> replay (src/codec/journal.c).
 *
 * An input is one selector byte and the journal rows of a pipeline, in
 * position order, each as a big-endian uint32 length and the row's bytes
 * (the last row takes what is left if its length runs past the end); the
 * seeds (test/fuzz/corpus/journal/, made by test/fuzz/make-corpus.sh from
 * test/fuzz/corpus.sql) are the journals of real pipelines.  The selector's
 * low bit picks the definition of the pipeline the rows are replayed on
 * from its empty state, as a backend does without a snapshot: "fz" below,
 * without (0) or with (1) retention 30.
 *
 * For every input:
 *	1. sf_journal_replay() of each row must either succeed or raise
 *	   ERRCODE_DATA_CORRUPTED (XX001), the corrupt-entry error persist.c
 *	   reports; anything else (another SQLSTATE, an elog, a crash, a
 *	   sanitizer report) is a bug.  The first failing row ends the replay
 *	   and the half-updated pipeline is freed, as persist.c does.  With
 *	   SF_FUZZ_SEEDS_VALID set every row must replay.
 *	2. If every row replayed, the state is one the engine produced: its
 *	   checkpoint must be accepted by the validator, and the state must
 *	   survive the persisted snapshot (sf_snapshot_encode, then
 *	   sf_snapshot_decode: the same checkpoint bytes).
 *	3. Afterwards no memory context is left under the input's own.
 *
 * The backend functions come from shim.c (see fuzz_checkpoint.c).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  test/fuzz/fuzz_journal.c
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

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void pg_attribute_noreturn()
fail(const char *what)
{
	fprintf(stderr, "fuzz_journal: %s\n  sqlstate %s: %s\n  detail: %s\n",
			what, unpack_sql_state(shim_sqlerrcode), shim_message, shim_detail);
	abort();
}

/*
 * The definitions of test/fuzz/corpus.sql, normalized (sorted by name):
 * partitions p0, p1; windows f (fixed 10), g (session 7), s (sliding 20
 * by 5); lateness 5; retention 30 or none.
 */
static void
make_def(SfPipelineDef *def, char (*parts)[SF_NAME_MAX + 1], SfWindowDef *w,
		 bool retention)
{
	memset(def, 0, sizeof(SfPipelineDef));
	strlcpy(def->name, "fz", sizeof(def->name));
	strlcpy(parts[0], "p0", SF_NAME_MAX + 1);
	strlcpy(parts[1], "p1", SF_NAME_MAX + 1);
	def->partitions = parts;
	def->npartitions = 2;
	memset(w, 0, 3 * sizeof(SfWindowDef));
	strlcpy(w[0].name, "f", sizeof(w[0].name));
	w[0].kind = SF_WINDOW_FIXED;
	w[0].size = 10;
	strlcpy(w[1].name, "g", sizeof(w[1].name));
	w[1].kind = SF_WINDOW_SESSION;
	w[1].gap = 7;
	strlcpy(w[2].name, "s", sizeof(w[2].name));
	w[2].kind = SF_WINDOW_SLIDING;
	w[2].size = 20;
	w[2].step = 5;
	def->windows = w;
	def->nwindows = 3;
	def->lateness = 5;
	def->has_retention = retention;
	def->retention = retention ? 30 : 0;
}

/* The checkpoint of p, validated; NULL if it is over the size limit (54000) */
static bytea *
valid_checkpoint(SfPipeline *p, const char *what)
{
	sigjmp_buf	jb;
	sigjmp_buf *save = PG_exception_stack;
	bytea	   *enc = NULL;

	if (sigsetjmp(jb, 0) == 0)
	{
		PG_exception_stack = &jb;
		enc = sf_checkpoint_encode(p);
		(void) sf_checkpoint_document(VARDATA(enc), VARSIZE(enc) - VARHDRSZ);
		PG_exception_stack = save;
		return enc;
	}
	PG_exception_stack = save;
	if (shim_sqlerrcode == ERRCODE_PROGRAM_LIMIT_EXCEEDED)
		return NULL;
	fail(what);
}

static void
check_input(const uint8_t *data, size_t size, bool seed)
{
	MemoryContext top = AllocSetContextCreate(NULL, "fuzz",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext rowcxt;
	char		parts[2][SF_NAME_MAX + 1];
	SfWindowDef windows[3];
	SfPipelineDef def;
	SfPipeline *volatile p;
	sigjmp_buf	jb;
	volatile size_t pos = 1;
	volatile int nrows = 0;

	CurrentMemoryContext = top;
	make_def(&def, parts, windows, (data[0] & 1) != 0);
	p = sf_pipeline_create(top, &def);
	rowcxt = AllocSetContextCreate(top, "row", ALLOCSET_DEFAULT_SIZES);

	if (sigsetjmp(jb, 0) == 0)
	{
		PG_exception_stack = &jb;
		while (size - pos >= 4)
		{
			uint32		n = ((uint32) data[pos] << 24) | ((uint32) data[pos + 1] << 16) |
				((uint32) data[pos + 2] << 8) | (uint32) data[pos + 3];

			pos += 4;
			if (n > size - pos)
				n = size - pos;
			CurrentMemoryContext = rowcxt;
			sf_journal_replay(p, (const char *) data + pos, n);
			CurrentMemoryContext = top;
			MemoryContextReset(rowcxt);
			pos += n;
			nrows++;
		}
	}
	else
	{
		CurrentMemoryContext = top;
		if (seed)
			fail("a seed journal row was refused");
		if (shim_sqlerrcode != ERRCODE_DATA_CORRUPTED)
			fail("a journal row was refused without XX001");
		if (strncmp(shim_message, "corrupt journal entry for pipeline \"fz\"", 39) != 0)
			fail("an XX001 message does not name the corrupt journal entry");
		sf_pipeline_free(p);
		p = NULL;
	}
	PG_exception_stack = NULL;

	if (p != NULL && nrows > 0)
	{
		bytea	   *ckpt = valid_checkpoint(p, "a replayed state is not a valid checkpoint");

		if (ckpt != NULL)
		{
			bytea	   *snap;
			SfPipeline *q;
			bytea	   *ckpt2;

			if (sigsetjmp(jb, 0) == 0)
			{
				PG_exception_stack = &jb;
				snap = sf_snapshot_encode(p);
				q = sf_snapshot_decode(top, &def, VARDATA(snap),
									   VARSIZE(snap) - VARHDRSZ);
				PG_exception_stack = NULL;
			}
			else
				fail("a replayed state does not survive its snapshot");
			ckpt2 = valid_checkpoint(q, "a reloaded snapshot is not a valid checkpoint");
			if (ckpt2 == NULL || VARSIZE(ckpt) != VARSIZE(ckpt2) ||
				memcmp(ckpt, ckpt2, VARSIZE(ckpt)) != 0)
				fail("the snapshot of a replayed state loads as another state");
			sf_pipeline_free(q);
		}
	}
	if (p != NULL)
		sf_pipeline_free(p);
	MemoryContextDelete(rowcxt);
	if (top->firstchild != NULL)
		fail("the replay left memory contexts behind");
	CurrentMemoryContext = NULL;
	MemoryContextDelete(top);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	check_input(data, size, getenv("SF_FUZZ_SEEDS_VALID") != NULL);
	return 0;
}
