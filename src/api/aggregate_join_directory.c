/*-------------------------------------------------------------------------
 *
 * aggregate_join_directory.c
 *	  What a backend keeps of the joins of aggregates between lookups
 *	  (aggregate_join_lookup.c): the directories of dimensions' rows by key
 *	  (where the row of a key was last seen, its tuple id, so that a lookup
 *	  reads that heap tuple instead of descending the dimension's index:
 *	  issue 47 item 4; docs/joins.md, "A directory of the dimension's
 *	  rows"), and the counters of the lookups that join_stats() shows.
 *
 * Nothing in a directory is trusted.  A lookup fetches the tuple at the
 * remembered id with the statement's snapshot, as heap_fetch does (an id
 * past the line pointers of its page, a dead, redirected or invisible
 * tuple gives nothing), from the buffer that held its block last if it
 * still does (ReadRecentBuffer checks the buffer's tag), and compares its
 * key with the key looked up.  If the tuple is
 * visible and has the key, it is the row the index would find: the index
 * is unique, immediate and not partial, so at most one row with the key is
 * visible to a snapshot, and the key types are those whose equality is the
 * identity of their bits (integers, oid, date, the timestamps, bool), the
 * key column's own type.  Otherwise the index is probed as before and the
 * row it finds is remembered.  So whatever happened to the dimension since
 * an id was remembered (an update, a delete, a rollback, TRUNCATE, VACUUM
 * FULL, the table dropped and another made with its oid), a lookup gives
 * what the index would.  An id past the relation's end (a truncation by
 * VACUUM leaves them) is not read: the number of blocks is read once per
 * statement, under the lock the lookup holds on the dimension for the
 * transaction, with which a truncation conflicts.  A new relfilenode
 * (TRUNCATE, VACUUM FULL, CLUSTER, a rewriting ALTER TABLE) or key type
 * starts the directory over.
 *
 * A serializable transaction does not use it: the index probe also takes
 * the predicate lock on the index page that detects a concurrent insertion
 * of a key that was not found.
 *
 * A directory is filled by a sweep over the dimension's blocks, paced by
 * the lookups: each adds SF_DIRECTORY_SWEEP_ROWS rows to the sweep's
 * credit, and the sweep reads whole blocks while it has credit.  (Paced by
 * the lookups it misses, the sweep would slow down as it fills: with keys
 * spread evenly it would never end.)  A row costs the sweep about 100 to
 * 150 instructions and an index probe about 8,000 more than a directory
 * hit, so while it runs a lookup costs at most about half as much again as
 * an index probe, no statement pays for a scan of the whole dimension, and
 * a dimension of R rows is in the directory after R / 32 lookups (1M rows:
 * 31,250).  Rows inserted after the sweep passed their block are
 * remembered when a probe finds them.
 *
 * Memory: an entry is 16 bytes (a key, a tuple id), in a simplehash table
 * of a power of two entries at most 90% full: 32 MB for 1M rows; and the
 * recent buffers, 4 bytes per block (1M rows: 22 kB).  The
 * directories of a backend together stay within
 * streamforge.join_directory_memory (0 turns them off): a directory that
 * would grow past it first evicts the least recently used of the others
 * idle long enough (dir_evict), and if that is not enough, stops growing
 * (it still answers for the keys it holds and keeps their ids current).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/aggregate_join_directory.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/xact.h"
#include "funcapi.h"
#include "catalog/pg_am.h"
#include "catalog/pg_type.h"
#include "lib/ilist.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/proc.h"
#include "utils/memutils.h"
#include "utils/hsearch.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "api/api.h"
#include "engine/hashmix.h"

/* rows added to the sweep's credit by a lookup the directory missed */
#define SF_DIRECTORY_SWEEP_ROWS 32

int			sf_join_directory_memory = 65536;	/* kB */

typedef struct DirEntry
{
	Datum		key;
	ItemPointerData tid;
	char		status;
} DirEntry;

/* the finalizer of MurmurHash3's 64-bit hash (engine/hashmix.h) */
static inline uint32
dir_hash(Datum key)
{
	return (uint32) sf_murmurhash64((uint64) key);
}

#define SH_PREFIX dirhash
#define SH_ELEMENT_TYPE DirEntry
#define SH_KEY_TYPE Datum
#define SH_KEY key
#define SH_HASH_KEY(tb, k) dir_hash(k)
#define SH_EQUAL(tb, a, b) ((a) == (b))
/*
 * A table grows only when it is 90% full (never earlier for a long probe
 * run), so that dir_put can check the memory limit before each doubling;
 * with keys mixed by dir_hash, runs stay short at that fill
 */
#define SH_GROW_MIN_FILLFACTOR 1.0
#define SH_SCOPE static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

struct SfJoinDirectory
{
	dlist_node	node;			/* in directories */
	Oid			relid;			/* the dimension */
	AttrNumber	keyatt;			/* its key column */
	Oid			keytype;		/* the key column's type when filled */
	Oid			relfilenode;	/* the dimension's storage when filled */
	MemoryContext cxt;			/* the table's memory */
	dirhash_hash *rows;
	Size		bytes;			/* the table's entries */
	uint64		used;			/* when last used (statement stamp) */
	LocalTransactionId lxid;	/* the statement nblocks was read for */
	CommandId	cid;
	BlockNumber nblocks;		/* the dimension's blocks in that statement */
	BlockNumber sweep_next;		/* the next block the sweep reads */
	BlockNumber sweep_end;		/* the blocks when the sweep began */
	int64		credit;			/* rows the sweep may read */
	Buffer	   *recent;			/* per block: the buffer that last held it */
	BlockNumber nrecent;		/* the blocks recent has room for */
	Size		recent_bytes;	/* its size */
	bool		sweep_done;
	bool		full;			/* at the memory limit: no new keys */
};

static MemoryContext dir_cxt = NULL;
static dlist_head directories = DLIST_STATIC_INIT(directories);
static uint64 dir_clock = 0;
static Size dir_bytes = 0;		/* of every directory */

/* the first size of a table: small, it grows as the sweep fills it */
#define SF_DIRECTORY_FIRST_SIZE 1024

static void
dir_clear(SfJoinDirectory *d)
{
	if (d->cxt != NULL)
		MemoryContextDelete(d->cxt);
	d->cxt = NULL;
	d->rows = NULL;
	d->recent = NULL;
	d->nrecent = 0;
	dir_bytes -= d->bytes + d->recent_bytes;
	d->recent_bytes = 0;
	d->bytes = 0;
	d->sweep_next = 0;
	d->sweep_end = InvalidBlockNumber;
	d->credit = 0;
	d->sweep_done = false;
	d->full = false;
}

static bool
dir_start(SfJoinDirectory *d)
{
	Size		first = SF_DIRECTORY_FIRST_SIZE * sizeof(DirEntry) * 2;

	if (dir_bytes + first > (Size) sf_join_directory_memory * 1024)
		return false;
	d->cxt = AllocSetContextCreate(dir_cxt, "streamforge join directory",
								   ALLOCSET_DEFAULT_SIZES);
	d->rows = dirhash_create(d->cxt, SF_DIRECTORY_FIRST_SIZE, NULL);
	d->bytes = d->rows->size * sizeof(DirEntry);
	dir_bytes += d->bytes;
	return true;
}

static void
dir_free(SfJoinDirectory *d)
{
	dir_clear(d);
	dlist_delete(&d->node);
	pfree(d);
}

/*
 * Evict the least recently used directories other than keep until the
 * directories take at most limit bytes; whether they do.  Only those idle
 * for more lookups than sweeping them in took (their keys / 32): two
 * directories that do not both fit, used in turns, would otherwise drop
 * each other at every turn and be swept in again; so the one that needs
 * room stops growing instead, until the other has been idle that long.
 */
static bool
dir_evict(SfJoinDirectory *keep, Size limit)
{
	while (dir_bytes > limit)
	{
		dlist_iter	it;
		SfJoinDirectory *lru = NULL;

		dlist_foreach(it, &directories)
		{
			SfJoinDirectory *d = dlist_container(SfJoinDirectory, node, it.cur);
			uint64		idle_for = d->rows == NULL ? 0 :
				d->rows->members / SF_DIRECTORY_SWEEP_ROWS;

			if (d != keep && d->bytes > 0 && dir_clock - d->used > idle_for &&
				(lru == NULL || d->used < lru->used))
				lru = d;
		}
		if (lru == NULL)
			return false;
		dir_free(lru);
	}
	return true;
}

/*
 * Whether a key column's type is one whose equality is the identity of its
 * Datum (so that a key's Datum is its hash key), by value
 */
bool
sf_join_directory_type_ok(Oid type)
{
	switch (type)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case OIDOID:
		case DATEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case BOOLOID:
			return true;
		default:
			return false;
	}
}

/*
 * The directory of the dimension heap's key column, current for this
 * statement, or NULL if directories are off or this transaction may not
 * use one.  The caller has checked the column's type
 * (sf_join_directory_type_ok) and the index (unique, immediate, not
 * partial, on the column), and holds a lock on heap for the transaction.
 */
SfJoinDirectory *
sf_join_directory(Relation heap, AttrNumber keyatt)
{
	Oid			keytype = TupleDescAttr(RelationGetDescr(heap), keyatt - 1)->atttypid;
	SfJoinDirectory *d = NULL;
	dlist_iter	it;

	if (sf_join_directory_memory <= 0 || IsolationIsSerializable() ||
		heap->rd_rel->relam != HEAP_TABLE_AM_OID ||
		!sf_join_directory_type_ok(keytype))
		return NULL;
	if (dir_cxt == NULL)
		dir_cxt = AllocSetContextCreate(TopMemoryContext,
										"streamforge join directories",
										ALLOCSET_SMALL_SIZES);
	dlist_foreach(it, &directories)
	{
		SfJoinDirectory *e = dlist_container(SfJoinDirectory, node, it.cur);

		if (e->relid == RelationGetRelid(heap) && e->keyatt == keyatt)
		{
			d = e;
			break;
		}
	}
	if (d == NULL)
	{
		d = MemoryContextAllocZero(dir_cxt, sizeof(SfJoinDirectory));
		d->relid = RelationGetRelid(heap);
		d->keyatt = keyatt;
		d->keytype = keytype;
		d->relfilenode = heap->rd_node.relNode;
		d->sweep_end = InvalidBlockNumber;
		dlist_push_head(&directories, &d->node);
	}
	d->used = ++dir_clock;
	if (d->lxid == MyProc->lxid && d->cid == GetCurrentCommandId(false) && d->rows != NULL)
		return d;

	/* a new statement: the dimension's storage, its end, the limit */
	if (d->keytype != keytype || d->relfilenode != heap->rd_node.relNode)
	{
		dir_clear(d);
		d->keytype = keytype;
		d->relfilenode = heap->rd_node.relNode;
	}
	if (!dir_evict(d, (Size) sf_join_directory_memory * 1024))
		dir_clear(d);
	if (d->rows == NULL && !dir_start(d))
		return NULL;
	/*
	 * A full directory may grow again when there is room for its next
	 * table: the limit was raised, or others were dropped or have been
	 * idle long enough to be
	 */
	if (d->full && d->bytes <= (Size) sf_join_directory_memory * 1024 &&
		dir_evict(d, (Size) sf_join_directory_memory * 1024 - d->bytes))
		d->full = false;
	d->nblocks = RelationGetNumberOfBlocks(heap);
	d->lxid = MyProc->lxid;
	d->cid = GetCurrentCommandId(false);
	return d;
}

/*
 * The buffer holding block blk of heap, pinned: the one that held it last
 * time if it still does (ReadRecentBuffer: no look-up in the shared buffer
 * mapping table, whose random probes cost as much as the rest of a
 * lookup), else read
 */
static Buffer
dir_read(SfJoinDirectory *d, Relation heap, BlockNumber blk)
{
	Buffer		buf;

	if (blk < d->nrecent && BufferIsValid(d->recent[blk]) &&
		ReadRecentBuffer(heap->rd_node, MAIN_FORKNUM, blk, d->recent[blk]))
		return d->recent[blk];
	buf = ReadBuffer(heap, blk);
	if (blk >= d->nrecent)
	{
		BlockNumber n = Max(d->nblocks, blk + 1);

		/* 4 bytes per block of the dimension, within the limit */
		if (dir_bytes + sizeof(Buffer) * (n - d->nrecent) >
			(Size) sf_join_directory_memory * 1024)
			return buf;
		dir_bytes += sizeof(Buffer) * (n - d->nrecent);
		d->recent_bytes = sizeof(Buffer) * n;
		if (d->recent == NULL)
			d->recent = MemoryContextAllocZero(d->cxt, sizeof(Buffer) * n);
		else
		{
			d->recent = repalloc(d->recent, sizeof(Buffer) * n);
			memset(d->recent + d->nrecent, 0, sizeof(Buffer) * (n - d->nrecent));
		}
		d->nrecent = n;
	}
	d->recent[blk] = buf;
	return buf;
}

/*
 * The row of key that the directory knows of, if it is still there: a copy
 * of the tuple in the current memory context, or NULL.  As heap_fetch with
 * the statement's snapshot (not in a serializable transaction: no predicate
 * lock), from the buffer dir_read gives.
 */
HeapTuple
sf_join_directory_fetch(SfJoinDirectory *d, Relation heap, TupleDesc desc,
						Datum key)
{
	DirEntry   *e = dirhash_lookup(d->rows, key);
	HeapTupleData tup;
	Buffer		buf;
	Page		page;
	ItemId		lp;
	OffsetNumber off;
	HeapTuple	result = NULL;
	bool		isnull;

	if (e == NULL || ItemPointerGetBlockNumberNoCheck(&e->tid) >= d->nblocks)
		return NULL;
	buf = dir_read(d, heap, ItemPointerGetBlockNumberNoCheck(&e->tid));
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	off = ItemPointerGetOffsetNumberNoCheck(&e->tid);
	if (off >= FirstOffsetNumber && off <= PageGetMaxOffsetNumber(page) &&
		ItemIdIsNormal(lp = PageGetItemId(page, off)))
	{
		tup.t_data = (HeapTupleHeader) PageGetItem(page, lp);
		tup.t_len = ItemIdGetLength(lp);
		tup.t_tableOid = RelationGetRelid(heap);
		tup.t_self = e->tid;
		if (HeapTupleSatisfiesVisibility(&tup, GetActiveSnapshot(), buf) &&
			heap_getattr(&tup, d->keyatt, desc, &isnull) == key && !isnull)
			result = heap_copytuple(&tup);
	}
	UnlockReleaseBuffer(buf);
	return result;
}

/* Remember key's tuple id, unless the directory is full and lacks it */
static void
dir_put(SfJoinDirectory *d, Datum key, ItemPointer tid)
{
	DirEntry   *e;
	bool		found;

	if (d->full || d->rows->members >= d->rows->grow_threshold)
	{
		Size		limit = (Size) sf_join_directory_memory * 1024;
		Size		more = d->rows->size * sizeof(DirEntry);	/* doubling */

		if (!d->full && (more > limit || !dir_evict(d, limit - more)))
			d->full = true;
		if (d->full)
		{
			e = dirhash_lookup(d->rows, key);
			if (e != NULL)
				e->tid = *tid;
			return;
		}
	}
	e = dirhash_insert(d->rows, key, &found);
	e->tid = *tid;
	if (d->rows->size * sizeof(DirEntry) != d->bytes)
	{
		dir_bytes += d->rows->size * sizeof(DirEntry) - d->bytes;
		d->bytes = d->rows->size * sizeof(DirEntry);
	}
}

/* Read the next block of the sweep: the rows it held, or -1 at the end */
static int
dir_sweep_block(SfJoinDirectory *d, Relation heap, Snapshot snapshot)
{
	TupleDesc	desc = RelationGetDescr(heap);
	BlockNumber blk = d->sweep_next;
	Buffer		buf;
	Page		page;
	int			rows = 0;

	if (d->sweep_end == InvalidBlockNumber)
		d->sweep_end = d->nblocks;
	if (d->full)
		return -1;
	if (blk >= d->sweep_end || blk >= d->nblocks)
	{
		d->sweep_done = true;
		return -1;
	}
	d->sweep_next++;
	buf = dir_read(d, heap, blk);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	if (!PageIsNew(page))
	{
		OffsetNumber maxoff = PageGetMaxOffsetNumber(page);

		for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
		{
			ItemId		lp = PageGetItemId(page, off);
			HeapTupleData tup;
			Datum		key;
			bool		isnull;

			if (!ItemIdIsNormal(lp))
				continue;
			rows++;
			tup.t_data = (HeapTupleHeader) PageGetItem(page, lp);
			tup.t_len = ItemIdGetLength(lp);
			tup.t_tableOid = RelationGetRelid(heap);
			ItemPointerSet(&tup.t_self, blk, off);
			if (!HeapTupleSatisfiesVisibility(&tup, snapshot, buf))
				continue;
			key = heap_getattr(&tup, d->keyatt, desc, &isnull);
			if (!isnull)
				dir_put(d, key, &tup.t_self);
		}
	}
	UnlockReleaseBuffer(buf);
	/* filled up in this block: read it again once there is room */
	if (d->full)
		d->sweep_next = blk;
	return rows;
}

/*
 * After a lookup: remember the id of the row an index probe of key found
 * (tid; NULL if none, or if the directory answered), and let the sweep
 * read its share of rows
 */
void
sf_join_directory_note(SfJoinDirectory *d, Relation heap, Datum key,
					   ItemPointer tid)
{
	if (tid != NULL)
		dir_put(d, key, tid);
	if (d->sweep_done || d->full)
		return;
	d->credit += SF_DIRECTORY_SWEEP_ROWS;
	while (d->credit > 0)
	{
		int			rows = dir_sweep_block(d, heap, GetActiveSnapshot());

		if (rows < 0)
			break;
		d->credit -= Max(rows, 1);
	}
}

/* The keys a directory holds */
static int64
directory_keys(Oid relid, AttrNumber keyatt)
{
	dlist_iter	it;

	dlist_foreach(it, &directories)
	{
		SfJoinDirectory *d = dlist_container(SfJoinDirectory, node, it.cur);

		if (d->relid == relid && d->keyatt == keyatt)
			return d->rows == NULL ? 0 : d->rows->members;
	}
	return 0;
}

static HTAB *join_stats = NULL;

/* The counters of the join-th join of pipeline, which reads relation */
SfJoinStats *
sf_join_stats_entry(const char *pipeline, int join, const char *relation)
{
	SfJoinStats key = {{0}};
	SfJoinStats *e;
	bool		found;

	if (join_stats == NULL)
	{
		HASHCTL		ctl = {0};

		ctl.keysize = offsetof(SfJoinStats, relation);
		ctl.entrysize = sizeof(SfJoinStats);
		ctl.hcxt = TopMemoryContext;
		join_stats = hash_create("streamforge join stats", 16, &ctl,
								 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	strlcpy(key.pipeline, pipeline, sizeof(key.pipeline));
	key.join = join;
	e = hash_search(join_stats, &key, HASH_ENTER, &found);
	if (!found)
	{
		e->probes = e->misses = e->dropped = e->directory_hits = 0;
		e->dim = InvalidOid;
		e->keyatt = 0;
	}
	strlcpy(e->relation, relation, sizeof(e->relation));
	return e;
}

/* join_stats(): this backend's counters */
PG_FUNCTION_INFO_V1(sf_join_stats);

Datum
sf_join_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	HASH_SEQ_STATUS seq;
	SfJoinStats *e;

	InitMaterializedSRF(fcinfo, 0);
	if (join_stats == NULL)
		return (Datum) 0;
	hash_seq_init(&seq, join_stats);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		Datum		values[8];
		bool		nulls[8] = {0};

		values[0] = CStringGetTextDatum(e->pipeline);
		values[1] = Int32GetDatum(e->join);
		values[2] = CStringGetTextDatum(e->relation);
		values[3] = Int64GetDatum(e->probes);
		values[4] = Int64GetDatum(e->misses);
		values[5] = Int64GetDatum(e->dropped);
		values[6] = Int64GetDatum(e->directory_hits);
		values[7] = Int64GetDatum(OidIsValid(e->dim) ?
								  directory_keys(e->dim, e->keyatt) : 0);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
