/*-------------------------------------------------------------------------
 *
 * limits.c
 *	  Limits that every part of streamforge shares, checked where input
 *	  enters (docs/security.md, "Resource limits").
 *
 * A pipeline definition is checked once, at create_pipeline, against the
 * limits of the parts that later load, compact and checkpoint it
 * (sf_check_def_limits), so that nothing it accepts fails later.  The
 * number of live buckets is capped by streamforge.max_live_buckets
 * (sf_max_live_buckets; the GUC itself is defined by the SQL glue), checked
 * before anything creates buckets: an event (sf_check_live_buckets,
 * inline in engine_int.h), a
 * change of definition (redefine.c) and a checkpoint given to restore or
 * inspect_checkpoint (codec.c).  The other paths that build buckets copy at
 * most the ones a pipeline has (set_retention, compaction) or rebuild a
 * pipeline's own stored state (loading, journal replay), which a lowered
 * setting must not make unloadable.  Input that an error message repeats
 * (a name, an event id, a key) is cut to SF_MSG_MAX bytes at a character
 * boundary (sf_msg_str), so that a 1 MB id cannot make a 1 MB log line.
 *
 * This file belongs to the engine and calls no other layer: the checkpoint
 * size limit (streamforge.max_checkpoint_size) is the codec's (codec.c).
 * Every layer calls it (engine.h); the SQL glue (api/module.c) defines the
 * setting that sf_max_live_buckets holds, and journal.c sets
 * sf_replaying_journal around a replay.  sf_msg_str allocates its result in
 * the caller's CurrentMemoryContext.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/limits.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "mb/pg_wchar.h"

#include "engine/engine.h"
#include "engine/engine_int.h"

/* streamforge.max_live_buckets; 0: no cap */
int			sf_max_live_buckets = SF_DEFAULT_MAX_LIVE_BUCKETS;

/*
 * True while a journal entry is replayed (journal.c): the entry was
 * accepted under the setting of its time, and a lower one must not make
 * the pipeline unloadable, so the live-bucket cap is not checked.
 */
bool		sf_replaying_journal = false;

/*
 * s (len bytes) as an error message may repeat it: at most SF_MSG_MAX
 * bytes, cut at a character boundary and marked with "..." when cut.
 * The result is palloc'd.
 */
const char *
sf_msg_str(const char *s, Size len)
{
	int			cut;
	char	   *out;

	if (len <= SF_MSG_MAX)
		return pnstrdup(s, len);
	cut = pg_mbcliplen(s, (int) Min(len, (Size) SF_MSG_MAX * 2), SF_MSG_MAX);
	out = palloc(cut + 4);
	memcpy(out, s, cut);
	memcpy(out + cut, "...", 4);
	return out;
}

const char *
sf_msg_cstr(const char *s)
{
	return sf_msg_str(s, strlen(s));
}

/*
 * Refuse a definition that a later part could not handle.  Caller has
 * validated each window.
 */
void
sf_check_def_limits(const SfPipelineDef *def)
{
	int64		buckets = 0;

	if (def->npartitions > SF_MAX_PARTITIONS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a pipeline can have at most %d partitions",
						SF_MAX_PARTITIONS),
				 errdetail("The definition has %d.", def->npartitions)));
	for (int i = 0; i < def->nwindows; i++)
		buckets += sf_window_max_buckets(&def->windows[i]);
	if (buckets > SF_MAX_EVENT_BUCKETS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the windows of a pipeline can put one event into at most %d buckets",
						SF_MAX_EVENT_BUCKETS),
				 errdetail("The windows given put one event into up to " INT64_FORMAT " buckets.",
						   buckets)));
}

/*
 * The error of sf_check_live_buckets (engine_int.h, inline: it runs for
 * every event): pipeline p would pass streamforge.max_live_buckets with
 * more new buckets (54000).
 */
void
sf_live_buckets_exceeded(const SfPipeline *p, int64 more)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("pipeline \"%s\" would have more than %d live buckets",
					p->def.name, sf_max_live_buckets),
			 errdetail("It has " INT64_FORMAT " live buckets; this event would add up to " INT64_FORMAT ".",
					   (int64) p->nbuckets, more),
			 errhint("Raise streamforge.max_live_buckets, or advance the watermark so that buckets are finalized.")));
}
