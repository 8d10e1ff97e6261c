/*-------------------------------------------------------------------------
 *
 * compact.c
 *	  How much journal a pipeline has since its snapshot, for
 *	  streamforge.compact (api/metrics.c, docs/monitoring.md).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/compact.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "engine/engine.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

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
