/*-------------------------------------------------------------------------
 *
 * parallel.h
 *	  The engine's parts of parallel writers (issue 46,
 *	  docs/design/parallel-writers.md): the fingerprint index of the head
 *	  (fingerprint.c), a writer's transaction delta and event log
 *	  (delta.c), and the head with its apply of a committed transaction
 *	  (head.c).  Build plan, section 12, step 2.
 *
 *	fingerprint.c	the index of every committed event id (design 4.2)
 *	delta.c			a writer's transaction: lane deliveries, the view clock,
 *					the event log and the delta (4.4); deciding lateness and
 *					readiness again under another clock (4.5 steps 4, 7a)
 *	head.c			the head: its lanes, the validation and apply of a
 *					transaction (4.5 steps 4, 5, 7a), and the merge of head
 *					and lanes into one serial-form state (6.7)
 *
 * Call order: delta.c calls no function of head.c; head.c calls delta.c's.
 *
 * Public to the layers above, as engine.h.  Nothing here is reached by a
 * serial pipeline.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/parallel.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SF_ENGINE_PARALLEL_H
#define SF_ENGINE_PARALLEL_H

#include "engine/engine.h"

/*
 * The fingerprint index (design, section 4.2): every remembered event id
 * of a parallel pipeline as a 64-bit hash (sf_fp_hash, independent of
 * identity.c's 32-bit one), the lane that first delivered it and 48 bits
 * of location (the identity's handle in a loaded lane, or the head journal
 * position that introduced it).  Open addressing, linear probing, 16-byte
 * slots, backward-shift deletion.  Two ids with the same hash take two
 * slots: a probe visits every slot of its hash (sf_fp_next), so a
 * collision costs an exact check, never a wrong answer.  A miss proves the
 * id unknown.
 */
#define SF_FP_LOC_MAX	((UINT64CONST(1) << 48) - 1)

typedef struct SfFpSlot
{
	uint64		hash;			/* 0: empty (sf_fp_hash never returns 0) */
	uint64		where;			/* lane << 48 | location */
} SfFpSlot;

typedef struct SfFingerprints
{
	MemoryContext cxt;
	SfFpSlot   *slots;
	uint64		mask;			/* capacity - 1, a power of two */
	uint64		n;				/* slots in use */
} SfFingerprints;

/* a probe's position, for sf_fp_next */
typedef struct SfFpCursor
{
	uint64		hash;
	uint64		pos;
	bool		started;
} SfFpCursor;

extern uint64 sf_fp_hash(const char *id, uint32 len);
extern SfFingerprints *sf_fp_create(MemoryContext cxt, uint64 expected);
extern void sf_fp_insert(SfFingerprints *fp, uint64 hash, uint16 lane,
						 uint64 loc);
extern void sf_fp_insert_all(SfFingerprints *fp, const SfFingerprints *from);
extern void sf_fp_start(SfFpCursor *c, uint64 hash);
extern bool sf_fp_next(const SfFingerprints *fp, SfFpCursor *c,
					   uint16 *lane, uint64 *loc);
extern bool sf_fp_remove(SfFingerprints *fp, uint64 hash, uint16 lane,
						 uint64 loc);
extern bool sf_fp_relocate(SfFingerprints *fp, uint64 hash, uint16 lane,
						   uint64 from, uint64 to);


/*
 * A clock on its own (design 4.4, 4.5): the progress and idle flag of each
 * partition and the watermark, with clock.c's rules (the watermark is the
 * minimum progress of the active partitions, once all have reported, and
 * never decreases).  A writer's view clock is one (a copy of the head's at
 * its first call, moved by its own reports and built-in progress only);
 * the validation replays the committed clock in one.
 */
typedef struct SfClockPart
{
	bool		has_progress;
	bool		idle;
	int64		progress;
} SfClockPart;

typedef struct SfClockView
{
	int			n;
	SfClockPart *parts;			/* [n], in definition order */
	bool		has_watermark;
	int64		watermark;
} SfClockView;

/*
 * The head of a parallel pipeline as one backend holds it (design 4.2):
 * p has the windows, the clock, seq and the late rows, and no identities
 * or deliveries (its late rows own copies of their events, marked
 * forgotten); fp holds every committed unique event id, located in the
 * lane that first delivered it.  lanes[i] is the lane of partition i: an
 * SfPipeline with the pipeline's partitions and no windows, of which only
 * partition i is used.  In this step every lane is loaded, so every
 * fingerprint's location is a handle in its lane (lanes loaded on demand,
 * and locations that are head journal positions, are step 5's).
 *
 * Ownership: everything lives in cxt (p, the lanes and fp in children or
 * in it); deleting it frees the head.
 */
typedef struct SfHead
{
	MemoryContext cxt;
	SfPipeline *p;
	SfFingerprints *fp;
	SfPipeline **lanes;			/* [p->def.npartitions] */
	uint64		version;		/* transactions committed */
	/* counters for stats and tests */
	int64		redecides;		/* transactions whose decisions changed */
	int64		collisions;		/* events that became duplicates at commit */
	int64		exact_applies;	/* applied event by event (near the limit) */
} SfHead;

/*
 * One entry of a transaction's log (design 4.4), in call order: a unique
 * event (its identity is in its lane, at handle), an advance, a mark_idle,
 * a finish (design 6.3: expanded at commit into the advances of
 * sf_finish_order on the committed clock), or the end of a write call (so
 * that the apply can tell each call's changes apart).  Duplicates and
 * offset replays change only their lane and are not logged.  The flags
 * are the decisions of the clock the log was last decided under: the view
 * clock at call time, the committed clock after a re-decide.
 */
#define SF_TXN_EVENT	0
#define SF_TXN_ADVANCE	1
#define SF_TXN_IDLE		2
#define SF_TXN_CALL_END	3		/* the end of a write call */
#define SF_TXN_FINISH	4		/* finish: its advances are the commit's */

#define SF_TXN_LATE		0x01	/* late: a late row, no windows */
#define SF_TXN_ALONE	0x02	/* touches a ready bucket: applied alone */
#define SF_TXN_DUP		0x04	/* another lane committed its id first */

typedef struct SfTxnOp
{
	uint8		kind;			/* SF_TXN_EVENT, _ADVANCE, _IDLE, _FINISH,
								 * _CALL_END */
	uint8		flags;			/* SF_TXN_LATE, _ALONE, _DUP */
	uint16		lane;			/* partition index */
	uint32		handle;			/* event: its identity in the lane */
	int64		value;			/* event: source offset; advance: progress */
} SfTxnOp;

struct sf_deltatab_hash;
struct sf_dsesstab_hash;

/*
 * A writer's transaction on one parallel pipeline (design 4.4), from its
 * first call to its commit.  Its deliveries are in the lanes (which the
 * claims make its own), its unique events in ops, the events that touched
 * only pending buckets aggregated in delta (one partial SfAgg per bucket
 * address), its new event ids in newids (lane and handle: found by its own
 * later deliveries, and by the probes of other writers' commits).
 *
 * Ownership: everything lives in cxt, a child of the caller's context;
 * sf_txn_free deletes it.  Keys in delta are the lanes' interned keys.
 */
typedef struct SfTxn
{
	MemoryContext cxt;
	SfHead	   *head;
	uint64		base;			/* head->version at the first call */
	SfClockView view;
	SfFingerprints *newids;
	struct sf_deltatab_hash *delta;
	SfTxnOp    *ops;
	int64		nops;
	int64		ops_cap;
	bool		collided;		/* a commit since base delivered a new id */
	bool		stale;			/* delta and flags to be decided again */
	bool		committed;
	bool		has_sessions;	/* a merging window: sessions in the delta */
	/*
	 * After the commit: call k's changes are out->items[call_end[k - 1]
	 * .. call_end[k]) of sf_head_commit's out (call_end[-1] being out's
	 * length before), for the calls ended by sf_txn_end_call.
	 */
	int		   *call_end;
	int			ncalls;
	/* window assignment scratch, room for one event's buckets */
	int64	   *starts;
	int64	   *ends;
	/* counters for stats and tests */
	int64		deliveries;
	int64		unique;
	int64		late;
	int64		alone;
	int64		duplicates;
	int64		replays;

	/*
	 * A measures pipeline: mp holds the delta's measures words and states
	 * (a pipeline without windows, in cxt; NULL otherwise).  Its unique
	 * events are numbered 1, 2, ... in log order (their lane identities'
	 * arrival), and the commit rebases them after the head's arrivals:
	 * arrival_base is the head's arrivals before the commit (design 13,
	 * risk 10, "Step 1, verified").
	 */
	SfPipeline *mp;
	int64		arrival_base;
	/* the delta's sessions (merging windows only, else NULL), and their number */
	struct sf_dsesstab_hash *sessions;
	int64		nsessions;
} SfTxn;

/*
 * A subtransaction's mark (design 4.4, "Savepoints"): what its abort
 * truncates the transaction back to.  The lanes' records are not in it:
 * the layers above discard the claimed lanes and rebuild them from the
 * tables, and hand the rebuilt ones to sf_head_replace_lane.
 */
typedef struct SfTxnMark
{
	int64		nops;
	int			ncalls;
	SfClockView view;			/* a copy, in the transaction's context */
	int64		deliveries;
	int64		unique;
	int64		late;
	int64		alone;
	int64		duplicates;
	int64		replays;
} SfTxnMark;

/* delta.c: a writer's transaction */
extern void sf_clock_view_init(SfClockView *c, const SfPipeline *p);
extern void sf_clock_view_advance(SfClockView *c, int partition,
								  int64 progress);
extern void sf_clock_view_idle(SfClockView *c, int partition);
extern void sf_clock_view_finish(SfClockView *c);
extern void sf_clock_view_accept(SfClockView *c, const SfPipelineDef *def,
								 int partition, int64 event_time);
extern SfTxn *sf_txn_begin(MemoryContext parent, SfHead *h);
extern void sf_txn_ingest(SfTxn *t, const SfDelivery *d);
extern void sf_txn_ingest_measures(SfTxn *t, const SfDelivery *d,
								   const int64 *measures);
extern void sf_txn_advance(SfTxn *t, const char *partition, int64 progress);
extern void sf_txn_mark_idle(SfTxn *t, const char *partition);
extern void sf_txn_finish(SfTxn *t);
extern void sf_txn_end_call(SfTxn *t);
extern void sf_txn_mark(SfTxn *t, SfTxnMark *m);
extern void sf_txn_rollback_to(SfTxn *t, const SfTxnMark *m);
extern void sf_txn_note_commit(SfTxn *t, const SfTxn *other);
extern bool sf_txn_decide(SfTxn *t, const SfPipeline *clock, bool rebuild);
extern int64 sf_txn_delta_size(const SfTxn *t);
extern void sf_txn_delta_foreach(SfTxn *t,
								 void (*fn) (void *arg, int window,
											 const SfString *key,
											 int64 start, int64 end,
											 const SfAgg *agg),
								 void *arg);
extern void sf_txn_free(SfTxn *t);

/* head.c: the head, the apply of a committed transaction, the merge */
extern SfHead *sf_head_create(MemoryContext parent, const SfPipelineDef *def);
extern void sf_head_commit(SfHead *h, SfTxn *t, SfChangeList *out);
extern SfPipeline *sf_head_merge(MemoryContext parent, SfHead *h);
extern void sf_head_replace_lane(SfHead *h, SfTxn *t, int lane,
								 SfPipeline *rebuilt);

#endif							/* SF_ENGINE_PARALLEL_H */
