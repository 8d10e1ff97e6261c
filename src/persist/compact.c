/*-------------------------------------------------------------------------
 *
 * compact.c
 *	  How much journal a pipeline has since its snapshot, and whether
 *	  streamforge.compact (api/metrics.c, docs/monitoring.md) should
 *	  compact it: the estimated cold load against
 *	  streamforge.compact_target_load_ms.
 *
 * A backend that loads a pipeline decodes its snapshot and replays the
 * journal after it.  Both costs are linear, so the cold load is estimated
 * from the sizes the cache already knows, with per-unit costs measured by
 * bench/coldload.sh (docs/performance.md, "Cold load"):
 *
 *	 load = snapshot bytes x SF_LOAD_NS_PER_SNAPSHOT_BYTE
 *		  + journal bytes x SF_LOAD_NS_PER_JOURNAL_BYTE
 *		  + journal entries x SF_LOAD_NS_PER_JOURNAL_ENTRY
 *
 * Compacting turns the journal's replay into (about) the decode of a
 * larger snapshot, which costs about half as much per event, and writes the
 * whole state once.  So the automatic decision compacts a journal when the
 * estimated load exceeds the target, and only when its replay costs at
 * least a quarter of the snapshot's decode: a state whose snapshot alone
 * takes longer than the target is then not rewritten at every scheduled
 * run for a few new entries, and its cold load stays below 1.25 times the
 * snapshot's decode.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/compact.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/guc.h"

#include "engine/engine.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

/*
 * Per-unit cold-load costs (CPU), from bench/coldload.sh at 1M deliveries
 * (bench/results/coldload-2026-12-01-25d58a9.md): a binary snapshot
 * decodes at about 5.3 ns a byte; replaying the journal of ingest_batch
 * and advance calls (entry format 3, about 9 bytes an event) costs about
 * 40 ns a byte, and an entry's own cost (fetching and detoasting the row,
 * its header) is below the measurement's resolution: 20,000 one-event
 * entries replay in at most 10 ms, so 0.5 us an entry bounds it.
 */
#define SF_LOAD_NS_PER_SNAPSHOT_BYTE	5.5
#define SF_LOAD_NS_PER_JOURNAL_BYTE		40.0
#define SF_LOAD_NS_PER_JOURNAL_ENTRY	500.0

/* streamforge.compact_target_load_ms; -1: compact() decides never */
static int	compact_target_load_ms = 500;

void
sf_compact_init(void)
{
	DefineCustomIntVariable("streamforge.compact_target_load_ms",
							"Estimated cold load above which streamforge.compact() compacts a pipeline.",
							"compact(pipeline) without min_journal_bytes compacts when the estimated time to load the pipeline (snapshot decode and journal replay) exceeds this, and the journal's replay is at least a quarter of the snapshot's decode; -1: never.",
							&compact_target_load_ms,
							500, -1, 3600 * 1000,
							PGC_USERSET, GUC_UNIT_MS,
							NULL, NULL, NULL);
}

/* The estimated cold load of entry, split into decode and replay (ms) */
static void
load_estimate(const SfCacheEntry *entry, double *decode_ms, double *replay_ms)
{
	*decode_ms = (double) entry->snapshot_len * SF_LOAD_NS_PER_SNAPSHOT_BYTE / 1e6;
	*replay_ms = ((double) entry->journal_bytes * SF_LOAD_NS_PER_JOURNAL_BYTE +
				  (double) entry->last_pos * SF_LOAD_NS_PER_JOURNAL_ENTRY) / 1e6;
}

/*
 * The bytes of journal entries of pipeline name since its snapshot, as
 * the backend's cache counts them (the pipeline is opened for reading:
 * the read privilege is checked, and a stale cache entry catches up).
 */
int64
sf_persist_journal_bytes(const char *name)
{
	SfCacheEntry *entry;

	(void) sf_persist_open(name, false);
	entry = sf_cache_lookup(name, false);
	return entry != NULL ? entry->journal_bytes : 0;
}

/*
 * Whether compact(name) without min_journal_bytes should compact: the
 * journal is not empty, the estimated cold load exceeds
 * streamforge.compact_target_load_ms, and the journal's replay is at
 * least a quarter of the snapshot's decode (see the head of the file).
 * Opens the pipeline for reading, like sf_persist_journal_bytes.
 */
bool
sf_persist_compact_due(const char *name)
{
	SfCacheEntry *entry;
	double		decode_ms;
	double		replay_ms;

	(void) sf_persist_open(name, false);
	entry = sf_cache_lookup(name, false);
	if (entry == NULL || compact_target_load_ms < 0 || entry->last_pos == 0)
		return false;
	load_estimate(entry, &decode_ms, &replay_ms);
	return decode_ms + replay_ms > (double) compact_target_load_ms &&
		4.0 * replay_ms >= decode_ms;
}
