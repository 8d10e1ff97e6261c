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
 * payload is sent by resync_outputs (sql/install/45_emit.sql), which
 * restore() runs, so that a listener learns of the new epoch.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/notify.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/async.h"
#include "lib/stringinfo.h"

#include "engine/engine.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

#define SF_NOTIFY_CHANNEL	"streamforge_changes"

/*
 * Queue the notifications of pipeline name (open in this backend's cache)
 * with its outputs' epoch, last seq and last late_seq
 */
void
sf_notify_changes(const char *name, int64 epoch, int64 seq, int64 late_seq)
{
	SfCacheEntry *entry = sf_cache_lookup(name, false);
	StringInfoData buf;
	char		channel[NAMEDATALEN];

	if (entry == NULL)
		elog(ERROR, "streamforge: pipeline \"%s\" is not open", name);
	initStringInfo(&buf);
	appendStringInfo(&buf, "{\"pipeline_id\": " INT64_FORMAT
					 ", \"epoch\": " INT64_FORMAT ", \"seq\": " INT64_FORMAT
					 ", \"late_seq\": " INT64_FORMAT "}",
					 entry->id, epoch, seq, late_seq);
	snprintf(channel, sizeof(channel), SF_NOTIFY_CHANNEL "_" INT64_FORMAT,
			 entry->id);
	Async_Notify(SF_NOTIFY_CHANNEL, buf.data);
	Async_Notify(channel, buf.data);
	pfree(buf.data);
}

/*
 * The id of pipeline name, which the caller has opened (sf_persist_open,
 * which checked its privilege)
 */
int64
sf_persist_pipeline_id(const char *name)
{
	SfCacheEntry *entry = sf_cache_lookup(name, false);

	if (entry == NULL)
		elog(ERROR, "streamforge: pipeline \"%s\" is not open", name);
	return entry->id;
}
