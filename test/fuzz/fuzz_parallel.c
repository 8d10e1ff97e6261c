/*-------------------------------------------------------------------------
 *
 * fuzz_parallel.c
 *	  libFuzzer target: the bytes of a parallel pipeline's head entry
 *	  (format 5) and lane K entry (format 6) -> their decoders and the
 *	  replay of a head entry (src/codec/parallel_codec.c,
 *	  src/engine/head_replay.c; issue 46), for a fixed measures pipeline
 *	  (fixed and session windows, built-in progress, nullable measures,
 *	  first/last picks and variable-size states), whose entries carry the
 *	  most fields.
 *
 * The first byte chooses: even, the rest is a head entry, replayed on an
 * empty head (its delta addresses, E, L, P, R and I ops apply; a new id
 * then fails, since the empty lanes hold none); odd, the rest is a K
 * entry, decoded.  Each must load or raise ERRCODE_DATA_CORRUPTED (XX001);
 * anything else, a crash or a sanitizer report is a bug; memory must be
 * gone after an error.  A head that replayed is then encoded (head
 * snapshot, checkpoint): errors are allowed there, crashes are not.  A
 * seed (SF_FUZZ_SEEDS_VALID) must decode.  The seeds of
 * test/fuzz/corpus/parallel/ are written by hand (the formats are in
 * parallel_codec.c's header).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  test/fuzz/fuzz_parallel.c
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
#include "engine/parallel.h"
#include "shim.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void pg_attribute_noreturn()
fail(const char *what)
{
	fprintf(stderr, "fuzz_parallel: %s\n  sqlstate %s: %s\n  detail: %s\n",
			what, unpack_sql_state(shim_sqlerrcode), shim_message, shim_detail);
	abort();
}

static char parts[3][SF_NAME_MAX + 1] = {"a", "b", "c"};
static SfWindowDef windows[2];
static SfPipelineDef def;

/* the pipeline: built once, as create_pipeline would */
static void
make_def(void)
{
	static char *measures[] = {"v", "w NULL"};
	static char *aggs[] = {"count", "sum(w)", "first(v)", "last(w)",
		"count_distinct(v)", "approx_count_distinct(w)",
	"approx_percentile(v, 0.5)", "max_by(w, v)"};
	MemoryContext old = CurrentMemoryContext;

	CurrentMemoryContext = AllocSetContextCreate(NULL, "fuzz def",
												 ALLOCSET_DEFAULT_SIZES);
	memset(&def, 0, sizeof(def));
	strlcpy(def.name, "fz", sizeof(def.name));
	def.partitions = parts;
	def.npartitions = 3;
	strlcpy(windows[0].name, "f", sizeof(windows[0].name));
	windows[0].kind = SF_WINDOW_FIXED;
	windows[0].size = 10;
	strlcpy(windows[1].name, "s", sizeof(windows[1].name));
	windows[1].kind = SF_WINDOW_SESSION;
	windows[1].gap = 5;
	def.windows = windows;
	def.nwindows = 2;
	def.lateness = 5;
	def.has_out_of_orderness = true;
	def.out_of_orderness = 4;
	def.measures = sf_measures_def_build(measures, 2, aggs, 8);
	CurrentMemoryContext = old;
}

/* run fn(arg): true if it returned, false if it raised */
static bool
attempt(void (*fn) (void *), void *arg)
{
	sigjmp_buf	jb;
	sigjmp_buf *save = PG_exception_stack;
	bool		ok;

	if (sigsetjmp(jb, 0) == 0)
	{
		PG_exception_stack = &jb;
		fn(arg);
		ok = true;
	}
	else
		ok = false;
	PG_exception_stack = save;
	return ok;
}

typedef struct Input
{
	const char *data;
	Size		len;
	SfHead	   *h;
} Input;

static void
do_create(void *arg)
{
	Input	   *in = (Input *) arg;

	in->h = sf_head_create(CurrentMemoryContext, &def);
}

static void
do_decode(void *arg)
{
	Input	   *in = (Input *) arg;

	(void) sf_head_entry_decode(&def, in->data, in->len);
}

static void
do_replay(void *arg)
{
	Input	   *in = (Input *) arg;
	SfChangeList out = {0};

	sf_head_entry_replay(in->h, in->data, in->len, &out);
}

static void
do_encode(void *arg)
{
	Input	   *in = (Input *) arg;

	(void) sf_head_snapshot_encode(in->h);
	(void) sf_head_checkpoint_encode(in->h);
}

static void
do_k(void *arg)
{
	Input	   *in = (Input *) arg;

	(void) sf_lane_k_decode(&def, in->data, in->len);
}

static void
refused(bool seed, const char *what)
{
	if (seed)
		fail(psprintf("a seed %s was refused", what));
	if (shim_sqlerrcode != ERRCODE_DATA_CORRUPTED)
		fail(psprintf("a %s was refused without XX001", what));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bool		seed = getenv("SF_FUZZ_SEEDS_VALID") != NULL;
	MemoryContext top;
	Input		in;

	if (def.measures == NULL)
		make_def();
	if (size < 1)
		return 0;
	top = AllocSetContextCreate(NULL, "fuzz", ALLOCSET_DEFAULT_SIZES);
	CurrentMemoryContext = top;
	in.data = (const char *) data + 1;
	in.len = size - 1;
	in.h = NULL;
	if (data[0] & 1)
	{
		if (!attempt(do_k, &in))
			refused(seed, "K entry");
	}
	else
	{
		if (!attempt(do_decode, &in))
			refused(seed, "head entry");
		CurrentMemoryContext = top;
		if (!attempt(do_create, &in))
			fail("an empty head was not made");
		if (attempt(do_replay, &in))
		{
			CurrentMemoryContext = top;
			(void) attempt(do_encode, &in);
		}
		else if (shim_sqlerrcode != ERRCODE_DATA_CORRUPTED)
			fail("a head entry's replay failed without XX001");
	}
	CurrentMemoryContext = NULL;
	MemoryContextDelete(top);
	return 0;
}
