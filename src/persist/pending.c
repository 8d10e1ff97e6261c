/*-------------------------------------------------------------------------
 *
 * pending.c
 *	  The buffered journal: the journal entries of a transaction's
 *	  top-level write calls, kept in memory and stored before commit or
 *	  prepare, one row per run of consecutive positions (SfPending,
 *	  persist_int.h, says why and how superseding works).
 *
 * Callers: persist.c (buffer, flush, supersede) and cache.c (replay into a
 * rebuilt pipeline; the transaction callbacks write, reset and end
 * subtransactions).  The buffer lives in pending_cxt under
 * TopMemoryContext and is reset at the end of every transaction;
 * pending_hash is NULL when nothing is buffered.  The writers need the
 * caller connected to SPI as the extension's owner, except
 * sf_pending_write_all, which connects itself.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/pending.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "port/pg_bswap.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "codec/codec.h"
#include "engine/engine.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

static HTAB *pending_hash = NULL;	/* in pending_cxt; NULL: nothing */
static MemoryContext pending_cxt = NULL;

/*
 * The entry of pending_hash found last: per-row calls on one pipeline find it
 * without hashing.  Entries are never removed one by one, only all at once
 * with the table (sf_pending_reset), which clears this too.
 */
static SfPending *pending_last = NULL;

/* ----------------------------------------------------------------
 * Buffered journal entries (pending_hash)
 * ----------------------------------------------------------------
 */

SfPending *
sf_pending_lookup(int64 id, bool create)
{
	SfPending  *pend;
	bool		found;

	if (pending_last != NULL && pending_last->id == id)
		return pending_last;
	if (pending_hash == NULL)
	{
		HASHCTL		ctl;

		if (!create)
			return NULL;
		if (pending_cxt == NULL)
			pending_cxt = AllocSetContextCreate(TopMemoryContext,
												   "streamforge pending journal",
												   ALLOCSET_DEFAULT_SIZES);
		ctl.keysize = sizeof(int64);
		ctl.entrysize = sizeof(SfPending);
		ctl.hcxt = pending_cxt;
		pending_hash = hash_create("streamforge pending journal", 16, &ctl,
								 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	pend = hash_search(pending_hash, &id, create ? HASH_ENTER : HASH_FIND,
					   &found);
	if (create && !found)
	{
		pend->runs = NULL;
		pend->tail = NULL;
		pend->bytes = 0;
	}
	if (pend != NULL)
		pending_last = pend;
	return pend;
}

/* Forget every buffered entry (end of transaction) */
void
sf_pending_reset(void)
{
	pending_hash = NULL;
	pending_last = NULL;
	if (pending_cxt != NULL)
		MemoryContextReset(pending_cxt);
}

/*
 * Buffer the journal entry of a top-level write call on entry's pipeline,
 * at the next position, and return the pipeline's buffer.  One reservation
 * for the length word and the bytes, written in place (per-row calls add
 * one short entry each).
 */
SfPending *
sf_pending_add(SfCacheEntry *entry, const char *data, Size len)
{
	SfPending  *pend = sf_pending_lookup(entry->id, true);
	SfPendingRun *run = pend->tail;
	int64		pos = entry->last_pos + 1;
	MemoryContext old = MemoryContextSwitchTo(pending_cxt);
	char	   *w;
	uint32		nlen;

	pend->relid = entry->relid;
	if (run == NULL || run->superseded != InvalidSubTransactionId ||
		run->last_pos != pos - 1)
	{
		run = palloc(sizeof(SfPendingRun));
		run->count = 0;
		initStringInfo(&run->data);
		run->superseded = InvalidSubTransactionId;
		run->next = NULL;
		if (pend->tail != NULL)
			pend->tail->next = run;
		else
			pend->runs = run;
		pend->tail = run;
	}
	enlargeStringInfo(&run->data, sizeof(uint32) + len);
	w = run->data.data + run->data.len;
	nlen = pg_hton32((uint32) len);	/* as pq_sendint32 writes it */
	memcpy(w, &nlen, sizeof(uint32));
	memcpy(w + sizeof(uint32), data, len);
	run->data.len += sizeof(uint32) + len;
	run->data.data[run->data.len] = '\0';
	run->count++;
	run->last_pos = pos;
	MemoryContextSwitchTo(old);
	pend->bytes += len;
	entry->last_pos = pos;
	entry->journal_bytes += len;
	return pend;
}

/*
 * Store the live runs of pend as journal rows and forget them all (the
 * superseded ones too: at the top level, nothing can revive them any more).
 * Only at the top level, or just before it commits: rows written inside a
 * subtransaction would vanish with it.  Caller must be connected to SPI as
 * the owner.
 */
void
sf_pending_write(SfPending *pend)
{
	SfPendingRun *run;

	for (run = pend->runs; run != NULL; run = run->next)
	{
		Datum		values[3];

		if (run->superseded != InvalidSubTransactionId)
			continue;
		values[0] = Int64GetDatum(pend->id);
		values[1] = Int64GetDatum(run->last_pos);
		values[2] = PointerGetDatum(sf_journal_sequence(run->data.data,
														run->data.len,
														run->count));
		sf_exec(PLAN_JOURNAL_PUT, values, NULL, false, SPI_OK_INSERT);
	}
	for (run = pend->runs; run != NULL;)
	{
		SfPendingRun *next = run->next;

		pfree(run->data.data);
		pfree(run);
		run = next;
	}
	pend->runs = NULL;
	pend->tail = NULL;
	pend->bytes = 0;
}

/*
 * sf_pending_write for every pipeline, as the owner; the entries of
 * pipelines whose table is gone (DROP EXTENSION) are dropped.
 */
void
sf_pending_write_all(void)
{
	HASH_SEQ_STATUS status;
	SfPending  *pend;
	SfSavedUser saved;
	Oid			nsp;
	Oid			relid = InvalidOid;

	if (pending_hash == NULL)
		return;
	nsp = get_namespace_oid("streamforge", true);
	if (OidIsValid(nsp))
		relid = get_relname_relid("pipeline", nsp);
	if (!OidIsValid(relid))
		return;
	sf_become_owner(&saved);
	SPI_connect();
	/* at commit, no statement's snapshot is active any more */
	PushActiveSnapshot(GetTransactionSnapshot());
	hash_seq_init(&status, pending_hash);
	while ((pend = hash_seq_search(&status)) != NULL)
		if (pend->runs != NULL && pend->relid == relid)
			sf_pending_write(pend);
	PopActiveSnapshot();
	SPI_finish();
	sf_restore_user(&saved);
}

/*
 * A new snapshot or a drop of pipeline id in the current subtransaction
 * covers every buffered entry of it.
 */
void
sf_pending_supersede(int64 id)
{
	SfPending  *pend = sf_pending_lookup(id, false);
	SfPendingRun *run;

	if (pend == NULL)
		return;
	for (run = pend->runs; run != NULL; run = run->next)
		if (run->superseded == InvalidSubTransactionId)
			run->superseded = GetCurrentSubTransactionId();
	pend->bytes = 0;
}

/*
 * End of subtransaction mySubid: on abort, the runs it superseded live
 * again; on commit, they are superseded by its parent.
 */
void
sf_pending_subxact_end(bool abort, SubTransactionId mySubid,
					   SubTransactionId parentSubid)
{
	HASH_SEQ_STATUS status;
	SfPending  *pend;

	if (pending_hash == NULL)
		return;
	hash_seq_init(&status, pending_hash);
	while ((pend = hash_seq_search(&status)) != NULL)
	{
		SfPendingRun *run;

		pend->bytes = 0;
		for (run = pend->runs; run != NULL; run = run->next)
		{
			if (run->superseded != InvalidSubTransactionId &&
				run->superseded >= mySubid)
				run->superseded = abort ? InvalidSubTransactionId : parentSubid;
			if (run->superseded == InvalidSubTransactionId)
				pend->bytes += run->data.len - 4 * run->count;
		}
	}
}

/*
 * Replay run onto p, unless superseded; add its bytes to *bytes and raise
 * *last to its position.
 */
void
sf_pending_replay_run(SfPipeline *p, const SfPendingRun *run, int64 *bytes,
					  int64 *last)
{
	int			off = 0;

	if (run->superseded != InvalidSubTransactionId)
		return;
	while (off < run->data.len)
	{
		uint32		n;

		CHECK_FOR_INTERRUPTS();
		memcpy(&n, run->data.data + off, sizeof(n));
		n = pg_ntoh32(n);
		sf_journal_replay(p, run->data.data + off + 4, n);
		off += 4 + n;
		*bytes += n;
	}
	*last = Max(*last, run->last_pos);
}
