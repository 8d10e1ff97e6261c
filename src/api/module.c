/*-------------------------------------------------------------------------
 *
 * module.c
 *	  The module: PG_MODULE_MAGIC and _PG_init.
 *
 * Where the settings are defined: the engine and the codec may not use
 * the GUC machinery (src/README.md), so _PG_init defines theirs here, over
 * the variables they own: streamforge.max_live_buckets
 * (sf_max_live_buckets, engine/limits.c) and streamforge.max_checkpoint_size
 * (sf_max_checkpoint_size, codec/codec.c).  The storage settings are
 * defined by persistence itself: sf_persist_init (persist/persist.c)
 * defines streamforge.compaction_threshold and streamforge.cache_size and
 * registers the transaction callbacks.  Then the streamforge. prefix is
 * reserved, so that a misspelt streamforge.* setting is an error.
 * Next to another streamforge library (an update script), none is defined.
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

#include "commands/extension.h"
#include "fmgr.h"
#include "utils/guc.h"

#include "api/api.h"

PG_MODULE_MAGIC;

/*
 * Whether another streamforge library is loaded in this backend: every
 * version defines streamforge.max_live_buckets (a placeholder, from a SET
 * before any library was loaded, does not count).
 */
static bool
other_library_loaded(void)
{
	return GetConfigOption("streamforge.max_live_buckets", true, false) != NULL &&
		(GetConfigOptionFlags("streamforge.max_live_buckets", true) &
		 GUC_CUSTOM_PLACEHOLDER) == 0;
}

void
_PG_init(void)
{
	/*
	 * Each version has its own library (streamforge-<version>; the release
	 * 0.3.0's serves older databases as "streamforge", docs/packaging.md).
	 * Two meet in one backend in the update script that moves a database
	 * from the one to the other (the frozen steps of an update from 0.1.0
	 * or 0.2.0 run the older one), and when a session that used the old one
	 * calls a function after ALTER EXTENSION UPDATE.  Both would define the
	 * same settings (an error).  Inside the update script this one defines
	 * none (its variables keep their boot values) and registers its
	 * callbacks; anywhere else it refuses: the session must reconnect.  The
	 * library is linked with -Bsymbolic, so that its calls never reach the
	 * other library's functions of the same names.  If this errors, dfmgr
	 * does not record the library, so every later call errors the same way.
	 */
	if (other_library_loaded())
	{
		if (!creating_extension)
			sf_foreign_library_error();
		sf_foreign_library = true;
		sf_persist_init(false);
		return;
	}
	sf_persist_init(true);
	sf_compact_init();			/* 0.3.0, issue 26: persist/compact.c */
	sf_redefine_init();			/* 0.4.0, issue 39: persist/redefine.c */
	sf_options_init();			/* 0.4.0, issue 41: codec/codec_definition.c */
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
	/* 0.3.0, issue 25: docs/ingestion.md, Timestamps */
	DefineCustomBoolVariable("streamforge.round_event_times",
							 "Rounds a timestamp that is not a whole number of time units down to the unit.",
							 "Off: such a timestamp is an error (22023).",
							 &sf_round_event_times,
							 false,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	/* 0.4.0, issue 47: docs/joins.md, "A directory of the dimension's rows" */
	DefineCustomIntVariable("streamforge.join_directory_memory",
							"Memory a backend may keep for the directories of the dimension tables its aggregates join.",
							"A directory remembers where the row of each key is, so that a lookup reads it without descending the index; 0 turns them off.",
							&sf_join_directory_memory,
							65536, 0, MAX_KILOBYTES,
							PGC_USERSET, GUC_UNIT_KB,
							NULL, NULL, NULL);
	MarkGUCPrefixReserved("streamforge");
}
