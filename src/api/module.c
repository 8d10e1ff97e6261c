/*-------------------------------------------------------------------------
 *
 * module.c
 *	  The module: PG_MODULE_MAGIC and _PG_init.
 *
 * _PG_init defines the settings of the engine and the codec
 * (streamforge.max_live_buckets, limits.c; streamforge.max_checkpoint_size,
 * codec/codec.c) here, and has persist.c define its own (the cache and
 * compaction settings, sf_persist_init) and register its transaction
 * callbacks; then it reserves the streamforge. prefix.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/module.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "fmgr.h"
#include "utils/guc.h"

#include "api/api.h"

PG_MODULE_MAGIC;

void
_PG_init(void)
{
	sf_persist_init();
	DefineCustomIntVariable("streamforge.max_live_buckets",
							"Most live buckets a pipeline may hold.",
							"An event that could take a pipeline past it is refused; 0 means no limit.",
							&sf_max_live_buckets,
							SF_DEFAULT_MAX_LIVE_BUCKETS, 0, INT_MAX,
							PGC_SUSET, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("streamforge.max_checkpoint_size",
							"Largest checkpoint document checkpoint produces and restore and inspect_checkpoint accept.",
							"The size of the document inflated from a compressed checkpoint; larger ones are refused before inflating, and never produced.",
							&sf_max_checkpoint_size,
							SF_DEFAULT_MAX_CHECKPOINT_SIZE, 1, MAX_KILOBYTES,
							PGC_SUSET, GUC_UNIT_KB,
							NULL, NULL, NULL);
	MarkGUCPrefixReserved("streamforge");
}
