/*-------------------------------------------------------------------------
 *
 * engine.h
 *	  The public interface of the engine (src/engine/): the types of a
 *	  pipeline's state and the operations on it.
 *
 * The engine keeps one pipeline's state in memory and implements the
 * processing contract of docs/semantics.md (all but Checkpoints):
 *
 *	definition.c	definitions: names, normalization, lookup by name, the
 *					window kinds' names
 *	engine.c		a pipeline's lifecycle, interned keys, deliveries and late
 *					rows, the three operations (ingest, advance, mark_idle),
 *					stats; the functions a decoder builds a state with
 *	clock.c			partition progress and the watermark
 *	window.c		window assignment, aggregates, the live bucket index and
 *					the dirty set of an operation
 *	session.c		session windows: ordered sessions per key, merging
 *	reconcile.c		the changes an operation emits, finalization
 *	identity.c		the identity store and the event_id table
 *	retention.c		the retention horizon and what it forgets
 *	redefine.c		definition and retention changes of a live pipeline
 *	final_rows.c	finalized rows rebuilt from the remembered events
 *	limits.c		limits every layer shares, input clipped in messages
 *	progress.c		built-in progress (out_of_orderness), who holds the
 *					watermark, the order in which finish advances
 *	aggregates.c	measures pipelines: definitions, per-bucket aggregate state
 *	measures_ops.c	measures pipelines: deliveries, checking the state
 *
 * It knows nothing of fmgr, SPI, transactions or GUCs (test/run.d/layers.sh
 * checks it): the layers above drive it.  The codec (codec/codec.h) turns
 * its state into bytes and back, persistence (persist/persist.h) stores it,
 * and the SQL functions (api/) call it.  This header is all they may use;
 * engine_int.h is private to src/engine/.
 *
 * Ownership: every allocation belonging to a pipeline lives in
 * SfPipeline->cxt (or one of its children); deleting that context frees the
 * pipeline entirely.  Results handed to callers (SfChangeList) live in the
 * caller's CurrentMemoryContext.
 *
 * Atomicity: an engine operation validates everything that can fail (offsets,
 * identities, bigint ranges) before it mutates anything.  Should it still
 * fail half-way (out of memory, a cancel inside a batch), p->busy stays set
 * and the owner must throw the pipeline away and rebuild it (persist.c does).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/engine.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SF_ENGINE_H
#define SF_ENGINE_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "lib/pairingheap.h"
#include "lib/stringinfo.h"
#include "utils/memutils.h"

/* SQLSTATEs of docs/semantics.md, The interface */
#define ERRCODE_SF_OFFSET_CONFLICT		MAKE_SQLSTATE('S','F','0','0','1')
#define ERRCODE_SF_IDENTITY_CONFLICT	MAKE_SQLSTATE('S','F','0','0','2')
#define ERRCODE_SF_INVALID_CHECKPOINT	MAKE_SQLSTATE('S','F','0','0','3')

/* Names (pipelines, partitions, windows): non-empty, at most 63 bytes */
#define SF_NAME_MAX			63

/* A sliding window may put one event into at most this many buckets */
#define SF_MAX_SLIDING_BUCKETS	100000

/*
 * Limits create_pipeline enforces, so that whatever it accepts can be
 * loaded, compacted and checkpointed (limits.c, docs/security.md): the
 * checkpoint codec numbers partitions in 15 bits, and the engine keeps one
 * array slot per bucket an event can enter, in all windows together.
 */
#define SF_MAX_PARTITIONS		32767
#define SF_MAX_EVENT_BUCKETS	1000000

/* Input repeated in an error message is cut to this many bytes (limits.c) */
#define SF_MSG_MAX				64

/* Defaults of streamforge.max_live_buckets and max_checkpoint_size (kB) */
#define SF_DEFAULT_MAX_LIVE_BUCKETS		4000000
#define SF_DEFAULT_MAX_CHECKPOINT_SIZE	(512 * 1024)

/* ----------------------------------------------------------------
 * Pipeline definition
 * ----------------------------------------------------------------
 */
/* the window kinds and SfWindowDef: the window module's public header */
#include "engine/window_ops.h"

/*
 * When a pipeline emits (docs/semantics.md, Emit modes; emit.c): 'update'
 * (upserts and corrections, the default, 0 so that a zeroed definition is
 * today's), 'update+final' (the same plus one final change per bucket when
 * it is finalized) and 'final' (only the final change).
 */
typedef enum SfEmitMode
{
	SF_EMIT_UPDATE = 0,
	SF_EMIT_UPDATE_FINAL = 1,
	SF_EMIT_FINAL = 2
} SfEmitMode;

/*
 * Who may write a pipeline at the same time (docs/design/parallel-writers.md,
 * section 4.1): 'serial' (one writer at a time, today's; 0 so that a zeroed
 * definition is today's) or 'parallel' (one writer per partition: lanes and
 * a head, sequenced at commit; not yet accepted by create_pipeline, issue 46).
 */
typedef enum SfWritersMode
{
	SF_WRITERS_SERIAL = 0,
	SF_WRITERS_PARALLEL = 1
} SfWritersMode;

/*
 * A pipeline definition.  Partitions and windows are kept sorted by name
 * (byte order), whatever order they were declared in: their array index is
 * their rank in address order, and two equivalent definitions are equal
 * field by field.
 */
typedef struct SfPipelineDef
{
	char		name[SF_NAME_MAX + 1];
	int			npartitions;
	char	  (*partitions)[SF_NAME_MAX + 1];
	int			nwindows;
	SfWindowDef *windows;
	int64		lateness;
	bool		has_retention;	/* false: remember everything (docs/semantics.md, Retention) */
	int64		retention;		/* >= 0, with has_retention */
	uint8		emit;			/* SfEmitMode; not in sf_def_equivalent */
	/* built-in progress (progress.c, docs/progress.md); false: none */
	bool		has_out_of_orderness;
	int64		out_of_orderness;	/* >= 0, with has_out_of_orderness */
	/* idle detection by time (api/progress.c); the engine never reads it */
	bool		has_idle_timeout;
	int64		idle_timeout_us;	/* > 0, with has_idle_timeout */
	Interval	idle_timeout;	/* as given, with has_idle_timeout (the
								 * stored document spells it) */
	/* the time unit of interval windows (api/timeunit.c); engine never reads it */
	bool		has_time_unit;
	Interval	time_unit;		/* as given, with has_time_unit */
	struct SfMeasuresDef *measures;	/* NULL: one unnamed value (aggregates.c) */
	uint8		writers;		/* SfWritersMode (0.4.0, issue 46) */
} SfPipelineDef;

/* ----------------------------------------------------------------
 * Strings, identities, deliveries
 * ----------------------------------------------------------------
 */

/* An immutable, interned byte string (a key or an event_id). */
typedef struct SfString
{
	uint32		hash;
	uint32		len;
	char		data[FLEXIBLE_ARRAY_MEMBER];	/* not NUL-terminated */
} SfString;

/*
 * A unique event.  Every delivery of the event (at any partition and offset)
 * points at this one record (by its handle, identity.c), which holds the
 * event_id inline.  Without retention it lives as long as the pipeline.
 * With retention (retention.c) it is preceded by an SfIdPrefix, forgotten
 * once its event_time falls below the horizon (removed from the identity
 * table), and freed when no delivery slot or late row refers to it any
 * more.
 */
typedef struct SfIdentity
{
	SfString   *key;			/* interned */
	int64		event_time;
	int64		value;
	uint32		hash;			/* of the event_id */
	uint32		event_id_len;
	bool		late:1;			/* went to the late output instead of windows */
	bool		forgotten:1;	/* below the horizon: no longer in the table */
	bool		late_held:1;	/* retention: a late row refers to it */
	bool		foreign:1;		/* a parallel pipeline's lane only
								 * (engine/parallel.h): the content of an
								 * offset whose event another identity
								 * holds, in no index */
	char		event_id[FLEXIBLE_ARRAY_MEMBER];	/* not NUL-terminated */
} SfIdentity;

/* Retention only: in front of each identity */
typedef struct SfIdPrefix
{
	uint32		nslots;			/* delivery slots referring to it */
	uint32		handle;			/* of the record, prefix included */
} SfIdPrefix;

static inline SfIdPrefix *
sf_id_prefix(SfIdentity *id)
{
	return (SfIdPrefix *) ((char *) id - sizeof(SfIdPrefix));
}

/* Where identities live (identity.c): blocks addressed by 32-bit handles */
typedef struct SfIdStore
{
	char	  **blocks;
	uint32		nblocks;
	uint32		blocks_cap;
	char	   *cur;			/* the block being filled */
	uint32		cur_block;
	Size		used;
	Size		left;
	uint32	   *free;			/* retention: free list per 8-byte size class */
	char	   *slab;			/* blocks carved from one allocation (large stores) */
	uint32		slab_left;		/* blocks left in it */
	uint32		prefault_until;	/* slabs are prefaulted below this block */
} SfIdStore;

/* A slot of the event_id table: the identity's handle and its hash */
typedef struct SfIdSlot
{
	uint32		handle;
	uint32		hash;			/* so that a rehash reads no identity */
} SfIdSlot;

/*
 * One segment of the event_id table: open addressing over slots, grown on
 * its own (identity.c).
 */
typedef struct SfIdSeg
{
	SfIdSlot   *slots;
	uint8	   *tags;			/* per slot: 0 empty, 1 deleted, else hash bits */
	uint32		cap;
	uint32		used;
	uint32		tomb;
	uint32		grow_at;		/* used + tomb above which it grows */
} SfIdSeg;

/*
 * The event_id table: ID_SEGMENTS segments chosen by the hash's top bits,
 * each an open-addressing table that grows (or rehashes) in one call at a
 * load that differs from segment to segment, so that no call rehashes
 * more than a few of them (identity.c, "The event_id table").
 */
typedef struct SfIdTable
{
	SfIdSeg    *segs;
	/*
	 * The last unsuccessful lookup's insertion slot (the first free or
	 * deleted slot on its probe path) and hash, so that the insert that
	 * follows it does not probe again; hint_valid is cleared by anything
	 * that changes the table.
	 */
	uint32		hint_slot;
	uint32		hint_hash;
	bool		hint_valid;
} SfIdTable;

/* A delivery as it comes from SQL (not stored in this form). */
typedef struct SfDelivery
{
	const char *partition;		/* NUL-terminated */
	int64		source_offset;
	const char *event_id;
	int			event_id_len;
	const char *key;
	int			key_len;
	int64		event_time;
	int64		value;
} SfDelivery;

/*
 * What the engine derives from a delivery: the hashes of its event_id and
 * key (sf_delivery_prefetch, sf_delivery_hash), and, once
 * sf_engine_ingest_hashed accepted it, the index of its partition in
 * def.partitions and its interned key (NULL at a forgotten offset, whose
 * identity keeps no key).  An interned key stands for its bytes for as
 * long as the call lasts (keys are collected only between calls, keys.c):
 * the journal encoder tells repeated keys of an entry by it
 * (codec/journal.c), and the partition index saves the encoder and the
 * activity notes (persist/activity.c) a lookup by name.
 */
typedef struct SfDeliveryHash
{
	uint32		event_id;
	uint32		key;
	int32		partition;
	const SfString *interned;
} SfDeliveryHash;

/*
 * A partition's delivery history.  deliveries[head + (o - base)] is the event
 * delivered at offset o, for base <= o <= consumed; offsets below base are
 * forgotten (retention), and so is a slot that is NULL or whose identity is
 * forgotten.  Without retention base and head stay 0.
 */
typedef struct SfPartition
{
	char		name[SF_NAME_MAX + 1];
	int64		consumed;		/* -1 before the first delivery */
	uint32	   *deliveries;		/* identity handles; capacity slots */
	int64		capacity;
	int64		base;			/* first offset still held */
	int64		head;			/* its slot in deliveries */
	/*
	 * A large history's next array, filled ahead of its growth (a few
	 * slots per append, engine.c), or NULL: grow_copied slots copied.
	 */
	uint32	   *grow;
	int64		grow_cap;
	int64		grow_copied;
	bool		has_progress;
	int64		progress;
	bool		idle;
} SfPartition;

typedef struct SfLateEvent
{
	int64		late_seq;
	int			partition;		/* index into def.partitions */
	int64		source_offset;
	SfIdentity *event;
	int64		watermark;
} SfLateEvent;

/* ----------------------------------------------------------------
 * Aggregates and buckets
 * ----------------------------------------------------------------
 */

/*
 * count, sum, min, max over the unique accepted events of a bucket.  The
 * sum is exact: 128 bits hold the sum of 2^63 values of 64 bits.
 */
typedef struct SfAgg
{
	int64		count;
	int64		min;
	int64		max;
	int64	   *ext;			/* measures pipelines: the declared aggregates'
								 * state (aggregates.c); NULL otherwise */
	int128		sum;
} SfAgg;

/*
 * A live bucket: a (window, key, start, end) address and its aggregate.
 *
 * A bucket sits in exactly one of the pipeline's two end-ordered heaps:
 * "pending" while end > watermark, "ready" once end <= watermark and until
 * it is finalized (watermark > end + lateness).  The visible (emitted) rows
 * between operations are exactly the ready buckets, so no copy of them is
 * kept; an operation saves the pre-image of each bucket it touches in its
 * dirty set (window.c; reconcile.c turns it into changes).
 */
typedef struct SfBucket
{
	pairingheap_node hnode;		/* in pending or ready heap */
	SfString   *key;
	int64		start;
	int64		end;
	SfAgg		agg;
	uint32		dirty_epoch;	/* == p->epoch when in this op's dirty set */
	int32		dirty_index;	/* its entry in p->dirty, valid with epoch */
	uint16		window;			/* index into def.windows */
	bool		ready;			/* in the ready heap */
} SfBucket;

/* Address of a row: what the output orders and identifies rows by */
typedef struct SfAddress
{
	int			window;
	SfString   *key;
	int64		start;
	int64		end;
} SfAddress;

/* A row of live(), visible(), or a change */
typedef struct SfRow
{
	SfAddress	addr;
	SfAgg		agg;
} SfRow;

typedef enum SfChangeOp
{
	SF_RETRACT = 0,
	SF_UPSERT = 1,
	SF_FINAL = 2				/* the bucket's final values (emit.c) */
} SfChangeOp;

/* A change's op as the SQL functions and the outputs spell it */
static inline const char *
sf_change_op_name(SfChangeOp op)
{
	return op == SF_RETRACT ? "retract" : op == SF_UPSERT ? "upsert" : "final";
}

typedef struct SfChange
{
	int64		seq;
	SfChangeOp	op;
	SfRow		row;
} SfChange;

/* A growable array of changes, allocated in the caller's context */
typedef struct SfChangeList
{
	int			n;
	int			cap;
	SfChange   *items;
} SfChangeList;

/* An address whose finalized row is wanted (sf_derive_final_rows) */
typedef struct SfWanted
{
	int			window;			/* index in the definition, -1: none */
	const char *key;
	int			key_len;
	int64		start;
	int64		end;
} SfWanted;

/* Hash tables (simplehash instances, defined in engine.c/window.c/session.c) */
struct sf_strtab_hash;
struct sf_buckettab_hash;
struct sf_sesstab_hash;

/* ----------------------------------------------------------------
 * A pipeline's whole state
 * ----------------------------------------------------------------
 */
typedef struct SfPipeline
{
	MemoryContext cxt;			/* owns everything below */
	SfPipelineDef def;

	/* sources */
	SfPartition *partitions;	/* [def.npartitions], same order as def */

	/* clock */
	bool		has_watermark;
	int64		watermark;

	/* identities and interned keys */
	struct sf_strtab_hash *keys;	/* interned keys */

	/*
	 * With retention, keys are palloc'd one by one (not from the arena) and
	 * those no longer referenced are freed by sf_keys_collect once keys_new
	 * keys were interned since the last collection, keys_threshold: a
	 * number proportional to what the collection looked at, so that it
	 * costs amortized O(1) per new key.
	 */
	bool		keys_freeable;
	int64		keys_new;
	int64		keys_threshold;
	SfIdStore	idstore;		/* identity records (identity.c) */
	SfIdTable	idtable;		/* event_id -> identity handle */

	/*
	 * The partition names the last deliveries named, by address, and their
	 * index (lookup_partition in engine.c): a batch's deliveries share one
	 * copy of each name, so one strcmp confirms a hit instead of a binary
	 * search.  Only a hint: a hit is always checked by content.
	 */
	const char *part_hint_name[4];
	int			part_hint_index[4];
	int64		nidentities;
	int64		ndeliveries;	/* sum over partitions of consumed + 1 */

	/*
	 * late output: late[0 .. nlate - 1] are the remembered rows, late_seq
	 * late_forgotten + 1 onwards; late points into late_alloc.
	 */
	SfLateEvent *late;
	int64		nlate;
	int64		late_capacity;	/* of late_alloc */
	SfLateEvent *late_alloc;
	int64		late_forgotten; /* rows forgotten (retention) */

	/*
	 * The late rows of the running write call (sf_late_keep): rows from
	 * late_seq late_keep_from on (0: none) that the retention forgets
	 * during the call move to late_kept (contiguous in late_seq order,
	 * their identities still held), so that the call's outputs get them;
	 * sf_late_release lets them go.
	 */
	int64		late_keep_from;
	SfLateEvent *late_kept;
	int64		nlate_kept;
	int64		late_kept_cap;

	/*
	 * retention (retention.c): the horizon of the last forgetting, and the
	 * remembered identities in a min-heap by event_time, so that forgetting
	 * costs what it forgets.
	 */
	bool		has_horizon;
	int64		horizon;
	SfIdentity **idheap;
	int64		nidheap;
	int64		idheap_cap;
	int64		forgotten_ids;	/* since this pipeline was built */
	int64		forgotten_offsets;	/* offset records not held */
	int64		removed_offsets;	/* without retention: offsets whose event a
									 * recompute took out (remap.c) */

	/* windows */
	struct sf_buckettab_hash *buckets;	/* (window, key, start) -> bucket */
	struct sf_sesstab_hash *sessions;	/* (window, key) -> SfSessionList */
	pairingheap pending;		/* live buckets with end > watermark */
	pairingheap ready;			/* live buckets with end <= watermark */
	int64		nbuckets;
	int64		nready;
	SfBucket   *free_buckets;	/* recycled bucket structs (via hnode) */

	/* output */
	int64		seq;			/* last seq emitted, 0 before any */

	/* per-operation scratch: the dirty set (window.c, reconcile.c) */
	uint32		epoch;
	struct SfDirty *dirty;		/* engine_int.h */
	int			ndirty;
	int			dirty_cap;

	/* window assignment scratch: room for one event's buckets */
	int64	   *assign_starts;
	int64	   *assign_ends;
	int			assign_cap;
	int		   *assign_counts;	/* [def.nwindows] */

	/*
	 * bump allocator for the keys of a pipeline without retention (engine.c;
	 * never freed one by one).  Identities live in idstore.
	 */
	char	   *arena;
	Size		arena_left;

	/* bucket structs are carved from blocks of this many */
	SfBucket   *bucket_block;
	int			bucket_block_left;

	/* set while an operation runs; a pipeline found busy is broken */
	bool		busy;

	/*
	 * Bumped by everything that changes the state (operations, deliveries,
	 * replays), so that an owner can tell whether a pipeline still equals an
	 * earlier version of itself (persist.c keeps its cache across an abort
	 * that changed nothing).
	 */
	uint64		mutations;

	/* counters that are not derivable from the state (not checkpointed) */
	int64		offset_replays;

	/*
	 * Buckets finalized since this pipeline was built, and the value the
	 * durable outputs last caught up with (persist/sink.c marks results
	 * final); neither is checkpointed.
	 */
	uint64		finalized;
	uint64		finalized_synced;

	/*
	 * Measures pipelines (aggregates.c): the arrival number of the last
	 * unique event (first/last break ties by it), and while an ingest of
	 * one runs, its measures.
	 */
	int64		arrivals;
	const int64 *cur_measures;

	/*
	 * The variable-size states of the buckets' aggregates (agg_ops.h), a
	 * child of cxt; NULL unless an aggregate has one.
	 */
	MemoryContext var_cxt;
	const SfIdentity *cur_event;	/* the event being added to windows */
} SfPipeline;

/* The identity a handle names (identity.c) */
static inline SfIdentity *
sf_id_ptr(const SfPipeline *p, uint32 handle)
{
	return (SfIdentity *) (p->idstore.blocks[handle >> 13] +
						   ((Size) (handle & 0x1FFF) << 3));
}

/*
 * Measures pipelines (docs/aggregates.md): the declared measures and
 * aggregates, and where each aggregate's state lives in a bucket's ext
 * words.
 */
/* the aggregate functions, SfAggDef, SfMeasuresDef: the aggregate module's */
#include "engine/agg_ops.h"

/* Counters for streamforge.stats() */
typedef struct SfStats
{
	int64		deliveries;
	int64		accepted;		/* unique events that reached windows */
	int64		duplicate_ids;	/* deliveries of an already known event_id */
	int64		late_events;
	int64		offset_replays;
	int64		changes_emitted;
	int64		live_buckets;
	int64		visible_rows;
	int64		partitions;
	int64		idle_partitions;
	/* what is remembered and forgotten (docs/semantics.md, Retention) */
	int64		remembered_identities;
	int64		remembered_offsets;
	int64		remembered_late_events;
	int64		forgotten_offsets;
	int64		forgotten_late_events;
} SfStats;

/* floor(a / b) for b > 0, in 128 bits so that nothing overflows */
static inline int128
sf_floor_div(int128 a, int128 b)
{
	int128		q = a / b;

	if ((a % b) != 0 && a < 0)
		q--;
	return q;
}

/*
 * Address order: window (windows are sorted by name, so their index is
 * their rank), key bytes, start, end.  Interned keys compare by pointer
 * first.  Inline because every sort of rows and changes is made of it.
 */
static inline int
sf_address_order(const SfAddress *a, const SfAddress *b)
{
	int			c;

	if (a->window != b->window)
		return a->window < b->window ? -1 : 1;
	if (a->key != b->key)
	{
		c = memcmp(a->key->data, b->key->data, Min(a->key->len, b->key->len));
		if (c != 0)
			return c;
		if (a->key->len != b->key->len)
			return a->key->len < b->key->len ? -1 : 1;
	}
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	return 0;
}

/* ----------------------------------------------------------------
 * Prototypes, grouped by defining file
 * ----------------------------------------------------------------
 */

/* definition.c: names, normalization, lookup by name */
extern void sf_validate_name(const char *what, const char *name);
extern void sf_def_normalize(SfPipelineDef *def);
extern bool sf_def_equivalent(const SfPipelineDef *a, const SfPipelineDef *b);
extern const char *sf_writers_mode_name(uint8 writers);
extern bool sf_writers_mode_parse(const char *name, uint8 *writers);
extern int	sf_partition_index(const SfPipelineDef *def, const char *name);
extern int	sf_window_index(const SfPipelineDef *def, const char *name);

/* engine.c: pipeline lifecycle and the three operations */
extern SfPipeline *sf_pipeline_create(MemoryContext parent,
									  const SfPipelineDef *def);
extern void sf_pipeline_free(SfPipeline *p);
extern void sf_engine_ingest(SfPipeline *p, const SfDelivery *d,
							 SfChangeList *out);
extern void sf_engine_ingest_hashed(SfPipeline *p, const SfDelivery *d,
									SfDeliveryHash *h,
									SfChangeList *out);
extern void sf_delivery_prefetch(SfPipeline *p, const SfDelivery *d,
								 SfDeliveryHash *h);
extern void sf_engine_advance(SfPipeline *p, const char *partition,
							  int64 progress, SfChangeList *out);
extern void sf_engine_mark_idle(SfPipeline *p, const char *partition,
								SfChangeList *out);
extern void sf_get_stats(const SfPipeline *p, SfStats *stats);

/*
 * Copy and compare a few bytes inline: keys, event ids, their suffixes in
 * the journal and partition names are mostly up to 16 bytes, for which a
 * libc call costs more than the work (issue 23).  Overlapping loads and
 * stores, never past either end.
 */
static inline void
sf_copy_bytes(char *dst, const char *src, int len)
{
	if (len >= 8 && len <= 16)
	{
		uint64		a,
					b;

		memcpy(&a, src, 8);
		memcpy(&b, src + len - 8, 8);
		memcpy(dst, &a, 8);
		memcpy(dst + len - 8, &b, 8);
	}
	else if (len >= 4 && len < 8)
	{
		uint32		a,
					b;

		memcpy(&a, src, 4);
		memcpy(&b, src + len - 4, 4);
		memcpy(dst, &a, 4);
		memcpy(dst + len - 4, &b, 4);
	}
	else if (len > 0 && len < 4)
	{
		/* 1 to 3 bytes: first, middle and last (the same byte twice) */
		dst[0] = src[0];
		dst[len >> 1] = src[len >> 1];
		dst[len - 1] = src[len - 1];
	}
	else if (len > 0)
		memcpy(dst, src, len);
}

static inline bool
sf_equal_bytes(const char *x, const char *y, int len)
{
	if (len >= 8 && len <= 16)
	{
		uint64		x1,
					y1,
					x2,
					y2;

		memcpy(&x1, x, 8);
		memcpy(&y1, y, 8);
		memcpy(&x2, x + len - 8, 8);
		memcpy(&y2, y + len - 8, 8);
		return ((x1 ^ y1) | (x2 ^ y2)) == 0;
	}
	if (len >= 4 && len < 8)
	{
		uint32		x1,
					y1,
					x2,
					y2;

		memcpy(&x1, x, 4);
		memcpy(&y1, y, 4);
		memcpy(&x2, x + len - 4, 4);
		memcpy(&y2, y + len - 4, 4);
		return ((x1 ^ y1) | (x2 ^ y2)) == 0;
	}
	if (len < 4)
		return len <= 0 ||
			(x[0] == y[0] && x[len >> 1] == y[len >> 1] &&
			 x[len - 1] == y[len - 1]);
	return memcmp(x, y, len) == 0;
}

/* engine.c: building state (the codec's decoders, redefine.c, final_rows.c) */
extern uint32 sf_hash_bytes(const char *data, int len);

/*
 * The hash of an event_id, for the identity table (identity.c): a short
 * event_id (at most 16 bytes, as most are) is read as two overlapping
 * words and mixed (murmur3's 64-bit finalizer), in about 20 instructions
 * instead of hash_bytes' 70; a longer one goes through hash_bytes.  The
 * value is never persisted, and nothing persisted depends on the table's
 * order (identity.c), so only its consistency matters: every lookup and
 * insert of an event_id hashes it here.
 */
static inline uint32
sf_hash_event_id(const char *data, int len)
{
	uint64		a,
				b;
	uint64		h;

	if (len > 16)
		return sf_hash_bytes(data, len);
	if (len >= 8)
	{
		memcpy(&a, data, 8);
		memcpy(&b, data + len - 8, 8);
	}
	else if (len >= 4)
	{
		uint32		lo,
					hi;

		memcpy(&lo, data, 4);
		memcpy(&hi, data + len - 4, 4);
		a = lo;
		b = hi;
	}
	else if (len > 0)
	{
		a = (uint64) (unsigned char) data[0] |
			((uint64) (unsigned char) data[len / 2] << 8) |
			((uint64) (unsigned char) data[len - 1] << 16);
		b = 0;
	}
	else
		a = b = 0;
	h = (a ^ UINT64CONST(0x9E3779B97F4A7C15)) * UINT64CONST(0xFF51AFD7ED558CCD);
	h ^= (b + (uint64) len) * UINT64CONST(0xC4CEB9FE1A85EC53);
	h ^= h >> 33;
	h *= UINT64CONST(0xFF51AFD7ED558CCD);
	h ^= h >> 33;
	h *= UINT64CONST(0xC4CEB9FE1A85EC53);
	h ^= h >> 33;
	return (uint32) h ^ (uint32) (h >> 32);
}

/*
 * The hashes of a delivery's event_id and key, as sf_engine_ingest_hashed
 * takes them: sf_delivery_prefetch's, without the prefetch (per-row calls)
 */
static inline void
sf_delivery_hash(const SfDelivery *d, SfDeliveryHash *h)
{
	h->event_id = sf_hash_event_id(d->event_id, d->event_id_len);
	h->key = sf_hash_bytes(d->key, d->key_len);
}
extern SfString *sf_intern_key(SfPipeline *p, const char *data, int len);
extern SfIdentity *sf_identity_add(SfPipeline *p, const char *event_id,
								   int event_id_len, SfString *key,
								   int64 event_time, int64 value, bool late,
								   uint32 *handle);
extern SfIdentity *sf_identity_add_hash(SfPipeline *p, const char *event_id,
										int event_id_len, uint32 hash,
										SfString *key, int64 event_time,
										int64 value, bool late,
										uint32 *handle);
extern void sf_partition_append(SfPipeline *p, int partition, uint32 event);
extern void sf_partition_alloc(SfPipeline *p, int partition, int64 n);
extern void sf_partition_set_base(SfPipeline *p, int partition, int64 base);
extern void sf_late_append(SfPipeline *p, int partition, int64 offset,
						   SfIdentity *event, int64 watermark);
extern void sf_late_append_forgotten(SfPipeline *p, int partition,
									 int64 offset, const char *event_id,
									 int event_id_len, const char *key,
									 int key_len, int64 event_time,
									 int64 value, int64 watermark);
extern SfIdentity **sf_identity_array(SfPipeline *p, int64 *n);
extern SfString **sf_keys_array(SfPipeline *p, int64 *n);
extern void sf_keys_collect_due(SfPipeline *p);

/*
 * Free the keys nothing refers to any more, when enough new ones have been
 * interned since the last collection (retention only).  The test is inline:
 * every call that opens a pipeline for writing runs it.
 */
static inline void
sf_keys_collect(SfPipeline *p)
{
	if (p->keys_freeable && !p->busy && p->keys_new >= p->keys_threshold)
		sf_keys_collect_due(p);
}

/* identity.c: the identity store and the event_id table */
extern SfIdentity *sf_idtable_lookup(SfPipeline *p, const char *event_id,
									 int len, uint32 hash, uint32 *handle);
extern SfIdentity *sf_idtable_next_handle(SfPipeline *p, uint64 *pos,
										  uint32 *handle);
extern void sf_idtable_reserve(SfPipeline *p, uint64 n);
extern void sf_mem_prefault(void *ptr, Size len);
extern void sf_idtable_prefetch_hash(SfPipeline *p, uint32 hash);

/* window.c: the live index, aggregates, rows */
extern SfBucket *sf_bucket_lookup(SfPipeline *p, int window, SfString *key,
								  int64 start);
extern bool sf_agg_equal(const SfAgg *a, const SfAgg *b);
extern int	sf_address_cmp(const SfPipeline *p, const SfAddress *a,
						   const SfAddress *b);
extern int64 sf_collect_rows(SfPipeline *p, bool visible_only, SfRow **rows);

/* session.c: putting back a live bucket (any window kind) */
extern bool sf_bucket_restore(SfPipeline *p, int window, SfString *key,
							  int64 start, int64 end, const SfAgg *agg);

/* progress.c: built-in progress (docs/progress.md) */
extern void sf_progress_after_accept(SfPipeline *p, int partition,
									 int64 event_time, SfChangeList *out);
extern void sf_progress_holders(const SfPipeline *p, bool *holds,
								int64 *fastest, bool *has_fastest);
extern int	sf_finish_order(const SfPipeline *p, int *order);

/* retention.c: the retention horizon of docs/semantics.md, Retention */
extern bool sf_horizon(const SfPipelineDef *def, bool has_watermark,
					   int64 watermark, int64 *horizon);
extern void sf_retention_forget(SfPipeline *p);
extern int64 sf_late_keep(SfPipeline *p);
extern const SfLateEvent *sf_late_row(const SfPipeline *p, int64 late_seq);
extern void sf_late_release(SfPipeline *p);

/* final_rows.c: finalized rows rebuilt from the remembered events */
extern int64 sf_derive_final_rows(SfPipeline *p, SfWanted *wanted, int n,
								  SfRow **rows, SfPipeline **scratchp);
extern int64 sf_derive_all_final_rows(SfPipeline *p, SfRow **rows,
									  SfPipeline **scratchp);

/* emit.c: emit modes */
extern const char *sf_emit_mode_name(uint8 emit);
extern bool sf_emit_mode_parse(const char *name, uint8 *emit);
extern void sf_emit_redefined(SfPipeline *old, SfPipeline *p,
							  const SfPipelineDef *names, SfChangeList *out,
							  int first);

/* redefine.c: carrying a pipeline's state over to a new definition */
extern SfPipeline *sf_pipeline_redefine(MemoryContext parent, SfPipeline *old,
										const SfPipelineDef *def,
										SfChangeList *out,
										SfPipelineDef *names);
extern SfPipeline *sf_pipeline_with_retention(MemoryContext parent,
											  SfPipeline *p,
											  bool has_retention,
											  int64 retention);

/*
 * redefine.c: a recompute, new mappings of accepted events (api/recompute.c,
 * docs/joins.md, "Recomputing")
 */
typedef struct SfRemap
{
	const SfDelivery *ds;		/* the new mappings: event_id, key, time,
								 * value */
	const int64 *mv;			/* measures pipelines: width words each */
	int			n;
	const SfDelivery *dropped;	/* events that no longer map (event_id):
								 * taken out of the pipeline */
	int			ndropped;
	bool		has_from;		/* events with event_time >= from only */
	bool		has_to;			/* events with event_time < to only */
	int64		from;
	int64		to;
	int64		matched;		/* out: accepted events mapped */
	int64		remapped;		/* out: of which changed */
	int64		removed;		/* out: accepted events taken out */
} SfRemap;
extern SfPipeline *sf_pipeline_remap(MemoryContext parent, SfPipeline *old,
									 SfRemap *r, SfChangeList *out,
									 SfPipelineDef *names);

/* agg_funcs.c, aggregates.c, measures_ops.c: measures and declared aggregates (docs/aggregates.md) */
extern SfMeasuresDef *sf_measures_def_build(char **measures, int nmeasures,
											char **aggs, int naggs);
extern SfMeasuresDef *sf_measures_def_copy(MemoryContext cxt,
										   const SfMeasuresDef *md);
extern bool sf_measures_def_equal(const SfMeasuresDef *a,
								  const SfMeasuresDef *b);
extern char *sf_agg_spelling(const SfAggDef *a, const SfMeasuresDef *md);
extern char *sf_measure_spelling(const SfMeasuresDef *md, int m);
extern bool sf_measures_valid(const SfMeasuresDef *md, const int64 *mv);
extern void sf_agg_value(const SfMeasuresDef *md, const SfAgg *agg, int i,
						 SfAggValue *v);
extern int64 *sf_id_measures(const SfPipeline *p, const SfIdentity *id);
extern void sf_engine_ingest_measures(SfPipeline *p, const SfDelivery *d,
									  SfDeliveryHash *h,
									  const int64 *measures,
									  SfChangeList *out);
extern void sf_measures_arity_error(const SfPipeline *p, int n)
			pg_attribute_noreturn();
extern bool sf_magg_equal(const SfMeasuresDef *md, const SfAgg *a,
						  const SfAgg *b);
extern void sf_magg_add(SfPipeline *p, SfAgg *agg, const SfIdentity *id);
extern int64 *sf_magg_copy(const SfMeasuresDef *md, const int64 *ext);
extern void sf_magg_release(const SfMeasuresDef *md, int64 *ext);
extern int64 sf_magg_var_words(const SfMeasuresDef *md, const int64 *ext,
							   int k, int64 **words);
extern bool sf_magg_var_load(const SfMeasuresDef *md, int64 *ext, int k,
							 const int64 *words, int64 n,
							 const char **detail);
extern bool sf_magg_check(SfPipeline *p, SfAddress *bad);

/* limits.c: limits every part shares */
extern int	sf_max_live_buckets;
extern bool sf_replaying_journal;
extern const char *sf_msg_str(const char *s, Size len);
extern const char *sf_msg_cstr(const char *s);
extern void sf_check_def_limits(const SfPipelineDef *def);

#endif							/* SF_ENGINE_H */
