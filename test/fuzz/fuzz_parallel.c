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
 * The first byte chooses (modulo 4):
 *	0	the rest is a head entry, replayed on an empty head (its delta
 *		addresses, E, L, P, R and I ops apply; a new id then fails, since
 *		the empty lanes hold none);
 *	1	the rest is a K entry, decoded;
 *	2	the rest is a head snapshot (version 4) and the snapshots of the
 *		three lanes (version 5), each but the last after a 4-byte
 *		little-endian length: decoded together as a cold load does;
 *	3	the rest is a checkpoint, restored as a parallel pipeline's
 *		(split by partition).
 * Each must load or raise ERRCODE_DATA_CORRUPTED (XX001; a checkpoint:
 * SF003 or 54000, as a serial restore); anything else, a crash or a
 * sanitizer report is a bug; memory must be gone after an error.  A head
 * that replayed is then encoded (head snapshot, checkpoint): errors are
 * allowed there, crashes are not.  A head that snapshots decoded must
 * encode, decode again and encode to the same bytes, and its checkpoint
 * must encode.  A checkpoint split into head and lanes must merge back
 * into the bytes of the serial pipeline it restores to, and its head and
 * lane snapshots must decode.  Snapshots and checkpoints are tried as they
 * are, then with their checksums made right (shim.c), so that mutations
 * reach the decoders.  A seed (SF_FUZZ_SEEDS_VALID) must decode.  The
 * entry seeds of test/fuzz/corpus/parallel/ are written by hand (the
 * formats are in parallel_codec.c's header); the snapshot and checkpoint
 * seeds by this target itself: SF_FUZZ_MAKE_SEEDS=<directory> runs a few
 * transactions on three lanes (late events, sessions, NULL measures,
 * advances, an idle partition), writes snap-*.bin and ckpt-*.bin there
 * and exits.
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
int			LLVMFuzzerInitialize(int *argc, char ***argv);

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

/* ----------------------------------------------------------------
 * Snapshots (mode 2) and checkpoints (mode 3)
 * ----------------------------------------------------------------
 */

#define NBLOBS 4				/* the head's snapshot, then each lane's */

typedef struct Snaps
{
	const char *blob[NBLOBS];
	Size		len[NBLOBS];
	SfHead	   *h;
	bytea	   *enc[NBLOBS];	/* h encoded */
} Snaps;

/* in's bytes cut into the blobs: a 4-byte length before each but the last */
static void
cut_blobs(const char *data, Size len, Snaps *x)
{
	Size		pos = 0;

	for (int i = 0; i < NBLOBS; i++)
	{
		Size		n = len - pos;

		if (i < NBLOBS - 1)
		{
			uint32		v = 0;

			if (len - pos < 4)
				pos = len;
			else
			{
				for (int b = 0; b < 4; b++)
					v |= (uint32) (uint8) data[pos + b] << (8 * b);
				pos += 4;
			}
			n = Min((Size) v, len - pos);
		}
		x->blob[i] = data + pos;
		x->len[i] = n;
		pos += n;
	}
}

static void
do_snap_decode(void *arg)
{
	Snaps	   *x = (Snaps *) arg;
	const char *lanes[NBLOBS - 1];
	Size		lens[NBLOBS - 1];

	for (int i = 1; i < NBLOBS; i++)
	{
		lanes[i - 1] = x->blob[i];
		lens[i - 1] = x->len[i];
	}
	x->h = sf_head_snapshot_decode(CurrentMemoryContext, &def, x->blob[0],
								   x->len[0], lanes, lens);
}

static void
do_snap_encode(void *arg)
{
	Snaps	   *x = (Snaps *) arg;

	x->enc[0] = sf_head_snapshot_encode(x->h);
	for (int i = 1; i < NBLOBS; i++)
		x->enc[i] = sf_lane_snapshot_encode(x->h, i - 1);
}

static void
do_snap_checkpoint(void *arg)
{
	Snaps	   *x = (Snaps *) arg;

	(void) sf_head_checkpoint_encode(x->h);
}

/* x's blobs taken from its encoding */
static void
blobs_of_enc(Snaps *x)
{
	for (int i = 0; i < NBLOBS; i++)
	{
		x->blob[i] = VARDATA(x->enc[i]);
		x->len[i] = VARSIZE(x->enc[i]) - VARHDRSZ;
	}
}

static bool
same_bytes(const bytea *a, const bytea *b)
{
	return VARSIZE(a) == VARSIZE(b) &&
		memcmp(VARDATA(a), VARDATA(b), VARSIZE(a) - VARHDRSZ) == 0;
}

/* mode 2 on one input: see the head comment */
static void
check_snaps(const char *data, Size len, bool seed)
{
	Snaps		x;
	Snaps		y;

	memset(&x, 0, sizeof(x));
	cut_blobs(data, len, &x);
	if (!attempt(do_snap_decode, &x))
	{
		refused(seed, "snapshot");
		return;
	}
	if (!attempt(do_snap_encode, &x))
		fail("a decoded head did not encode");
	if (!attempt(do_snap_checkpoint, &x))
		fail("a decoded head's checkpoint did not encode");
	memset(&y, 0, sizeof(y));
	blobs_of_enc(&x);
	memcpy(y.blob, x.blob, sizeof(y.blob));
	memcpy(y.len, x.len, sizeof(y.len));
	if (!attempt(do_snap_decode, &y))
		fail("a head's encoding did not decode");
	if (!attempt(do_snap_encode, &y))
		fail("a head decoded from its encoding did not encode");
	for (int i = 0; i < NBLOBS; i++)
		if (!same_bytes(x.enc[i], y.enc[i]))
			fail(psprintf("snapshot %d does not encode to the same bytes twice", i));
}

typedef struct Ckpt
{
	const char *data;
	Size		len;
	SfPipeline *serial;
	SfHead	   *h;
	bytea	   *merged;
	bytea	   *plain;
	Snaps		snaps;
} Ckpt;

static void
do_ckpt_restore(void *arg)
{
	Ckpt	   *c = (Ckpt *) arg;

	c->serial = sf_checkpoint_restore(CurrentMemoryContext, &def, c->data,
									  c->len);
}

static void
do_ckpt_split(void *arg)
{
	Ckpt	   *c = (Ckpt *) arg;

	c->plain = sf_checkpoint_encode(c->serial);
	c->h = sf_head_split(CurrentMemoryContext, c->serial);
	c->merged = sf_head_checkpoint_encode(c->h);
	c->snaps.h = c->h;
	do_snap_encode(&c->snaps);
}

/* mode 3 on one input: see the head comment */
static void
check_checkpoint(const char *data, Size len, bool seed)
{
	Ckpt		c;
	Snaps		y;

	memset(&c, 0, sizeof(c));
	c.data = data;
	c.len = len;
	if (!attempt(do_ckpt_restore, &c))
	{
		if (seed)
			fail("a seed checkpoint was refused");
		if (shim_sqlerrcode != ERRCODE_SF_INVALID_CHECKPOINT &&
			shim_sqlerrcode != ERRCODE_PROGRAM_LIMIT_EXCEEDED)
			fail("a checkpoint was refused without SF003 or 54000");
		return;
	}
	if (!attempt(do_ckpt_split, &c))
		fail("a restored checkpoint did not split, merge or encode");
	if (!same_bytes(c.plain, c.merged))
		fail("a checkpoint split and merged is not the serial pipeline's");
	memset(&y, 0, sizeof(y));
	blobs_of_enc(&c.snaps);
	memcpy(y.blob, c.snaps.blob, sizeof(y.blob));
	memcpy(y.len, c.snaps.len, sizeof(y.len));
	if (!attempt(do_snap_decode, &y))
		fail("the snapshots of a split checkpoint did not decode");
}

/* the input (one snapshot or checkpoint blob each) with checksums made right */
static void
check_fixed(const uint8_t *data, size_t size, int mode)
{
	if (mode == 3)
	{
		size_t		n;
		uint8_t    *fixed = shim_checkpoint_fixed(data, size, &n);

		if (fixed != NULL)
		{
			check_checkpoint((const char *) fixed, n, false);
			free(fixed);
		}
	}
	else
	{
		Snaps		x;
		StringInfoData b;
		MemoryContext top = CurrentMemoryContext;

		cut_blobs((const char *) data, size, &x);
		initStringInfo(&b);
		for (int i = 0; i < NBLOBS; i++)
		{
			uint8_t    *fixed = shim_snapshot_fixed((const uint8_t *) x.blob[i],
													x.len[i]);
			const char *blob = fixed != NULL ? (const char *) fixed : x.blob[i];

			if (i < NBLOBS - 1)
				for (int k = 0; k < 4; k++)
					appendStringInfoChar(&b, (char) (x.len[i] >> (8 * k)));
			appendBinaryStringInfo(&b, blob, x.len[i]);
			free(fixed);
		}
		if ((Size) b.len != size || memcmp(b.data, data, size) != 0)
			check_snaps(b.data, b.len, false);
		CurrentMemoryContext = top;
	}
}

/* ----------------------------------------------------------------
 * Seeds of modes 2 and 3 (SF_FUZZ_MAKE_SEEDS)
 * ----------------------------------------------------------------
 */

static void
seed_write(const char *dir, const char *name, int mode, const char *data,
		   Size len)
{
	char		path[1024];
	FILE	   *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (f == NULL || fputc(mode, f) == EOF ||
		fwrite(data, 1, len, f) != len || fclose(f) != 0)
	{
		fprintf(stderr, "fuzz_parallel: cannot write %s\n", path);
		exit(1);
	}
}

/* h's snapshots as a mode 2 input, and its checkpoint as a mode 3 one */
static void
seed_head(const char *dir, SfHead *h, int n)
{
	Snaps		x;
	StringInfoData b;
	bytea	   *ckpt = sf_head_checkpoint_encode(h);

	x.h = h;
	do_snap_encode(&x);
	initStringInfo(&b);
	for (int i = 0; i < NBLOBS; i++)
	{
		uint32		len = VARSIZE(x.enc[i]) - VARHDRSZ;

		if (i < NBLOBS - 1)
			for (int k = 0; k < 4; k++)
				appendStringInfoChar(&b, (char) (len >> (8 * k)));
		appendBinaryStringInfo(&b, VARDATA(x.enc[i]), len);
	}
	seed_write(dir, psprintf("snap-%d.bin", n), 2, b.data, b.len);
	seed_write(dir, psprintf("ckpt-%d.bin", n), 3, VARDATA(ckpt),
			   VARSIZE(ckpt) - VARHDRSZ);
}

/*
 * Transactions of one lane each, in turn: new events (a late one now and
 * then, gaps that start sessions, NULL measures), an advance, once an idle
 * partition; the head's snapshots and checkpoint are written after a few.
 */
static void
make_seeds(const char *dir)
{
	const SfMeasuresDef *md = def.measures;
	SfHead	   *h = sf_head_create(CurrentMemoryContext, &def);
	uint32		rnd = 46;
	int64		now = 100;
	int			id = 0;

	for (int txn = 0; txn < 18; txn++)
	{
		int			pi = txn % 3;
		SfPipeline *lane = h->lanes[pi];
		SfTxn	   *t = sf_txn_begin(CurrentMemoryContext, h);
		SfChangeList out = {0};

		for (int i = 0; i < 5; i++)
		{
			SfDelivery	d = {0};
			int64	   *mv = palloc0(md->width * sizeof(int64));

			rnd = rnd * 1103515245 + 12345;
			now += (rnd >> 16) % 3 + ((rnd >> 20) % 9 == 0 ? 7 : 0);
			mv[0] = (int64) ((rnd >> 8) % 21) - 10;
			if ((rnd >> 12) % 4 == 0)
				mv[md->nmeasures] = 1 << 1;
			else
				mv[1] = (int64) ((rnd >> 4) % 5);
			d.partition = parts[pi];
			d.source_offset = lane->partitions[pi].consumed + 1;
			d.event_id = psprintf("e%d", id++);
			d.event_id_len = strlen(d.event_id);
			d.key = (rnd >> 24) % 2 == 0 ? "k1" : "k2";
			d.key_len = 2;
			d.event_time = (rnd >> 18) % 6 == 0 ? now - 12 : now;
			d.value = mv[0];
			sf_txn_ingest_measures(t, &d, mv);
			sf_txn_end_call(t);
		}
		if (txn % 2 == 1)
		{
			sf_txn_advance(t, parts[pi], now - 2);
			sf_txn_end_call(t);
		}
		if (txn == 7)
		{
			sf_txn_mark_idle(t, parts[2]);
			sf_txn_end_call(t);
		}
		sf_head_commit(h, t, &out);
		sf_txn_free(t);
		if (txn == 2 || txn == 9 || txn == 17)
			seed_head(dir, h, txn);
	}
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("SF_FUZZ_MAKE_SEEDS");

	if (dir != NULL)
	{
		MemoryContext top = AllocSetContextCreate(NULL, "seeds",
												  ALLOCSET_DEFAULT_SIZES);
		sigjmp_buf	jb;

		make_def();
		CurrentMemoryContext = top;
		if (sigsetjmp(jb, 0) == 0)
		{
			PG_exception_stack = &jb;
			make_seeds(dir);
		}
		else
			fail("the seeds were not made");
		exit(0);
	}
	return 0;
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
	switch (data[0] % 4)
	{
		case 1:
			if (!attempt(do_k, &in))
				refused(seed, "K entry");
			break;
		case 2:
			check_snaps(in.data, in.len, seed);
			CurrentMemoryContext = top;
			if (!seed)
				check_fixed((const uint8_t *) in.data, in.len, 2);
			break;
		case 3:
			check_checkpoint(in.data, in.len, seed);
			CurrentMemoryContext = top;
			if (!seed)
				check_fixed((const uint8_t *) in.data, in.len, 3);
			break;
		default:
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
			break;
	}
	CurrentMemoryContext = NULL;
	MemoryContextDelete(top);
	return 0;
}
