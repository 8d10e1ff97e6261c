/*-------------------------------------------------------------------------
 *
 * parallel_check.h
 *	  Private to parallel_check.c and parallel_codec_check.c: the random
 *	  two-writer run of the internal test functions of parallel writers
 *	  (issue 46), and the codec's checks it calls (build plan step 3).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/parallel_check.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SF_API_PARALLEL_CHECK_H
#define SF_API_PARALLEL_CHECK_H

#include "engine/parallel.h"

/* what a run exercised */
typedef struct PcSummary
{
	int64		transactions;
	int64		deliveries;
	int64		late;
	int64		alone;
	int64		duplicates;
	int64		replays;
	int64		redecides;
	int64		collisions;
	int64		changes;
	int64		checkpoints;
	int64		exact;
	int64		rollbacks;
	int			error;			/* the SQLSTATE that ended it, or 0 */
} PcSummary;

/*
 * The codec's checks of a run (parallel_codec_check.c), called by the run
 * through these pointers (a call back into that file would be a cycle,
 * src/README.md): at its start, after every commit (t committed on h with
 * nchanges changes; ds: its deliveries, in call order), and whenever no
 * transaction is open (h's merged checkpoint is serial_ck; the checks may
 * replace *h).
 */
typedef struct PcCodec PcCodec;
struct PcCodec
{
	void		(*start) (PcCodec *c, MemoryContext cxt, SfHead *h,
						  int64 seed);
	void		(*commit) (PcCodec *c, SfHead *h, SfTxn *t, int nchanges,
						   const SfDelivery *ds, int64 *const *mvs, int nds);
	void		(*quiet) (PcCodec *c, SfHead **h, const bytea *serial_ck);
};

/* parallel_check.c */
extern void sf_pc_run(const char *name, int32 calls, int64 seed,
					  bool conflict, PcCodec *codec, PcSummary *sum);

#endif							/* SF_API_PARALLEL_CHECK_H */
