/*-------------------------------------------------------------------------
 *
 * precommit.c
 *	  The one pre-commit driver of the extension (issue 46, build plan
 *	  step 1, docs/design/parallel-writers.md, section 4.5).
 *
 * What must be done inside a transaction just before it commits (or is
 * prepared) runs here, in a fixed order, instead of in the order in which
 * the files registered their transaction callbacks (PostgreSQL calls the
 * last registered first, and activity.c registers lazily):
 *
 *	1. the buffered journal entries (pending.c), which commit with the
 *	   transaction;
 *	2. the partitions' activity (activity.c);
 *	3. the sequencer of each parallel pipeline the transaction wrote, in
 *	   name order (sequencer.c, issue 46);
 *	4. the notifications (notify.c), last, so that they carry the seq
 *	   the sequencers assign.
 *
 * The other callbacks keep their end-of-transaction work (resets,
 * discards); none of them does anything at PRE_COMMIT any more.  This file
 * is above cache.c, pending.c, activity.c and notify.c in the call graph
 * (test/run.d/layers.sh: no cycle) and only persist.c calls it.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/precommit.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"

#include "persist/persist.h"
#include "persist/persist_int.h"

/* The pre-commit driver, registered by sf_persist_init */
void
sf_precommit_callback(XactEvent event, void *arg)
{
	if (event != XACT_EVENT_PRE_COMMIT && event != XACT_EVENT_PRE_PREPARE)
		return;
	sf_pending_write_all();
	sf_activity_precommit();
	sf_sequencer_run_all();		/* sequencer.c */
	sf_notify_precommit();
}
