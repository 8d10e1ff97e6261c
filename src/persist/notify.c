/*-------------------------------------------------------------------------
 *
 * notify.c
 *	  The notifications of the durable outputs (0.3.0, issue 25).
 *
 * A notification names its pipeline by id, never by name: any role may
 * LISTEN on any channel, so a name in a payload would tell a role without
 * any privilege on the pipeline that it exists and when it changes.  The
 * payload is
 *
 *	{"pipeline_id": 17, "epoch": 1, "seq": 42, "late_seq": 3}
 *
 * sent on channel "streamforge_changes" (every pipeline) and on
 * "streamforge_changes_17" (this one); streamforge.notify_channel(name)
 * tells a role that may read the pipeline its channel and id.  The same
 * payload is sent by resync_outputs (sql/objects/45_emit.sql), which
 * restore() runs, so that a listener learns of the new epoch.
 *
 * A write call's notification is not handed to PostgreSQL at once: it is
 * kept, with the subtransaction that made it, and queued (Async_Notify)
 * when the transaction commits (or prepares: then PostgreSQL refuses the
 * PREPARE, as it always did).  A subtransaction's abort forgets what it
 * kept, as PostgreSQL would; and a restore() of the pipeline later in the
 * transaction (sf_notify_forget_pipeline) forgets the notifications of
 * the calls it undid, whose seq numbers the restored pipeline emits again
 * and whose changelog rows resync_outputs deletes: sent at commit, they
 * told a listener of work that did not survive the transaction (issue 38).
 * A restore() rolled back to a savepoint gives them back.
 *
 * A parallel pipeline's calls (issue 46) keep nothing when they run: their
 * changes are made at commit by the sequencer, which keeps one
 * notification per call, with the seq and late_seq after it
 * (sf_sink_emit_calls, sink.c), in the pre-commit driver (precommit.c),
 * before sf_notify_precommit queues them all.  So they follow the
 * notifications the transaction's serial pipelines kept, and the
 * transactions of a parallel pipeline's writers notify in commit order.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/notify.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "commands/async.h"
#include "lib/stringinfo.h"
#include "utils/memutils.h"

#include "engine/engine.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

#define SF_NOTIFY_CHANNEL	"streamforge_changes"

/* A kept notification, in TopTransactionContext */
typedef struct SfKeptNotify
{
	int64		id;				/* the pipeline's */
	SubTransactionId subid;		/* that made it */
	SubTransactionId forgotten; /* by a restore() in it; Invalid: not */
	char	   *payload;
} SfKeptNotify;

static SfKeptNotify *kept = NULL;
static int	nkept = 0;
static int	maxkept = 0;

/*
 * Keep the notification of a write call on pipeline name (open in this
 * backend's cache) with its outputs' epoch, last seq and last late_seq;
 * it is queued at commit (sf_notify_xact_callback)
 */
void
sf_notify_changes(const char *name, int64 epoch, int64 seq, int64 late_seq)
{
	SfCacheEntry *entry = sf_cache_lookup(name, false);
	MemoryContext old;
	SfKeptNotify *k;
	int64		id;

	if (entry != NULL)
		id = entry->id;
	else if (!sf_par_id(name, &id))	/* a parallel pipeline's (issue 46) */
		elog(ERROR, "streamforge: pipeline \"%s\" is not open", name);
	old = MemoryContextSwitchTo(TopTransactionContext);
	if (nkept == maxkept)
	{
		maxkept = Max(16, maxkept * 2);
		kept = kept == NULL
			? palloc(maxkept * sizeof(SfKeptNotify))
			: repalloc(kept, maxkept * sizeof(SfKeptNotify));
	}
	k = &kept[nkept];
	k->id = id;
	k->subid = GetCurrentSubTransactionId();
	k->forgotten = InvalidSubTransactionId;
	k->payload = psprintf("{\"pipeline_id\": " INT64_FORMAT
						  ", \"epoch\": " INT64_FORMAT ", \"seq\": " INT64_FORMAT
						  ", \"late_seq\": " INT64_FORMAT "}",
						  id, epoch, seq, late_seq);
	nkept++;
	MemoryContextSwitchTo(old);
}

/*
 * The number of notifications kept so far in this transaction: where those
 * of the call about to write start (sf_notify_coalesce)
 */
int
sf_notify_kept(void)
{
	return nkept;
}

/*
 * A write call kept kept[from ..]: the notification of its idle decisions
 * (api/progress.c, which writes their changes to the outputs before the
 * call's own work) and its own.  Keep only the last, which has the call's
 * last seq and late_seq: one notification per call (docs/outputs.md),
 * where two told a listener of the same call, one with an older seq.
 */
void
sf_notify_coalesce(int from)
{
	if (from < 0 || nkept - from < 2)
		return;
	kept[from] = kept[nkept - 1];
	nkept = from + 1;
}

/*
 * restore() replaces pipeline name's state (open in this backend's cache):
 * forget the kept notifications of its calls so far in this transaction
 */
void
sf_notify_forget_pipeline(const char *name)
{
	SfCacheEntry *entry = sf_cache_lookup(name, false);
	SubTransactionId subid = GetCurrentSubTransactionId();

	if (entry == NULL)
		return;
	for (int i = 0; i < nkept; i++)
		if (kept[i].id == entry->id &&
			kept[i].forgotten == InvalidSubTransactionId)
			kept[i].forgotten = subid;
}

/*
 * The end of subtransaction mySubid: on abort, what it kept is dropped
 * and what it forgot comes back; on commit, both become its parent's.
 * Subtransaction ids grow, so those of mySubid and its children are all
 * >= mySubid (as in cache.c).  Registered by persist.c, as the transaction
 * callback below.
 */
void
sf_notify_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						   SubTransactionId parentSubid, void *arg)
{
	bool		abort = event == SUBXACT_EVENT_ABORT_SUB;
	int			n = 0;

	if (!abort && event != SUBXACT_EVENT_COMMIT_SUB)
		return;

	for (int i = 0; i < nkept; i++)
	{
		SfKeptNotify *k = &kept[i];

		if (k->forgotten != InvalidSubTransactionId && k->forgotten >= mySubid)
			k->forgotten = abort ? InvalidSubTransactionId : parentSubid;
		if (k->subid >= mySubid)
		{
			if (abort)
				continue;
			k->subid = parentSubid;
		}
		kept[n++] = *k;
	}
	nkept = n;
}

/*
 * Before commit or prepare: queue the kept notifications that no restore()
 * forgot, in the order of their calls, on both channels.  At the end of the
 * transaction, forget them (TopTransactionContext goes).
 */
void
sf_notify_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			kept = NULL;
			nkept = 0;
			maxkept = 0;
			return;
		default:
			return;
	}
}

/*
 * At PRE_COMMIT and PRE_PREPARE: queue the kept notifications (a PREPARE
 * is then refused by PostgreSQL, as a NOTIFY's).  Called by the pre-commit
 * driver (precommit.c), last.
 */
void
sf_notify_precommit(void)
{
	for (int i = 0; i < nkept; i++)
	{
		char		channel[NAMEDATALEN];

		if (kept[i].forgotten != InvalidSubTransactionId)
			continue;
		snprintf(channel, sizeof(channel), SF_NOTIFY_CHANNEL "_" INT64_FORMAT,
				 kept[i].id);
		Async_Notify(SF_NOTIFY_CHANNEL, kept[i].payload);
		Async_Notify(channel, kept[i].payload);
	}
	nkept = 0;
}

/*
 * The id of pipeline name, which the caller has opened (sf_persist_open,
 * which checked its privilege)
 */
int64
sf_persist_pipeline_id(const char *name)
{
	SfCacheEntry *entry = sf_cache_lookup(name, false);
	int64		id;

	if (entry != NULL)
		return entry->id;
	if (!sf_par_id(name, &id))	/* a parallel pipeline's (issue 46) */
		elog(ERROR, "streamforge: pipeline \"%s\" is not open", name);
	return id;
}
