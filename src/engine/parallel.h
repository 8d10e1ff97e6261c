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
	/*
	 * Each lane's consumed offset as of the last transaction the head
	 * applied ([npartitions], -1: none; NULL until the first commit or
	 * head entry): the lane table of the head entry and snapshot
	 * (head_entry.c).
	 */
	int64	   *lane_consumed;
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
	/*
	 * And the pipeline's seq and late_seq after call k: what a serial
	 * pipeline's sink notifies after the call (persist/sink.c)
	 */
	int64	   *call_seq;
	int64	   *call_late;
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
	/* what sf_head_commit applied, for the head journal entry (head_entry.c) */
	struct SfHeadEntry *entry;
	/*
	 * The lanes it delivered to (its claims): lane_from[i] is lane i's
	 * consumed offset before its first delivery there, -2 if none
	 * ([npartitions], NULL before the first delivery)
	 */
	int64	   *lane_from;
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
extern bool sf_head_adopt_lane(SfHead *h, int lane, SfPipeline *mine,
							   int64 committed);
extern void sf_head_apply_event(SfPipeline *p, const SfIdentity *id,
								SfChangeList *out);

/*
 * A committed transaction in outcome form (design 4.3, "Head entries";
 * head_entry.c): what sf_head_commit applied to the head, recorded as it
 * applies it (t->entry), and what the codec's format 5 entry holds.
 * sf_head_apply_entry applies one to another head with the same engine
 * code, so that seq and late_seq are recomputed, not stored:
 *
 *	delta	the transaction's delta, merged first (pending buckets only);
 *			absent when every event was applied alone
 *	ops		in call order: an event applied alone (E: its key, time and
 *			value), a late event (L: its row, with the watermark at its
 *			point), an advance (R; finish is recorded as the advances it
 *			expanded to), a mark_idle (I), and built-in progress (P: a
 *			partition's progress after its accepted events; consecutive
 *			ones of a partition are one while the watermark stays, so a
 *			replay costs per watermark move, not per event)
 *	fps		the new unique ids: fingerprint, lane, and the offset of the
 *			delivery that introduced them (a handle means nothing in
 *			another backend)
 *	lanes	the consumed offset of every lane that moved
 *	counters	the transaction's deliveries, unique, late, alone,
 *			duplicates and offset replays (stats)
 *
 * Pointers (keys, event ids) point into the lanes (recorded) or into the
 * decoded bytes (decoded): an entry lives no longer than they do.
 */
#define SF_HE_EVENT		'E'
#define SF_HE_LATE		'L'
#define SF_HE_PROGRESS	'P'
#define SF_HE_ADVANCE	'R'
#define SF_HE_IDLE		'I'

#define SF_HE_NCOUNTERS	6

typedef struct SfHeDelta
{
	int			window;
	int			key_len;
	const char *key;
	int64		start;
	int64		end;
	SfAgg		agg;
} SfHeDelta;

typedef struct SfHeOp
{
	uint8		kind;			/* SF_HE_* */
	uint16		lane;			/* partition index */
	int			key_len;		/* E, L */
	int			event_id_len;	/* L */
	int64		offset;			/* E, L: source offset */
	int64		value;			/* E, L: value; P, R: progress */
	int64		event_time;		/* E, L */
	const char *key;			/* E, L */
	const char *event_id;		/* L */
	const int64 *mv;			/* E, L of a measures pipeline: the event's
								 * arrival (global) and measure words, 1 +
								 * width of them; else NULL */
} SfHeOp;

typedef struct SfHeFp
{
	uint64		hash;
	uint16		lane;
	int64		offset;			/* in its lane */
} SfHeFp;

typedef struct SfHeLane
{
	uint16		lane;
	int64		prev;			/* consumed before the transaction */
	int64		consumed;
} SfHeLane;

typedef struct SfHeadEntry
{
	SfHeDelta  *delta;
	int64		ndelta;
	int64		delta_cap;
	SfHeOp	   *ops;
	int64		nops;
	int64		ops_cap;
	SfHeFp	   *fps;
	int64		nfps;
	SfHeLane   *lanes;
	int			nlanes;
	int64		counters[SF_HE_NCOUNTERS];
	/*
	 * A measures pipeline: the head's arrivals before the transaction (its
	 * new ids are base + 1 .. base + nfps; the delta's first/last picks
	 * hold local numbers, rebased by it at the replay, design 13, risk 10)
	 */
	int64		arrival_base;
	/* recording: per lane, the P op a later one may replace (-1: none) */
	int64	   *last_p;
} SfHeadEntry;

/*
 * A lane's K entry (design 4.3, 5.4; the codec's format 6): the offsets of
 * a transaction's deliveries in the lane whose outcome a lane-local replay
 * cannot derive: 'L' a new event that was late, 'F' a duplicate of another
 * lane's event (late: that event's flag).  Retention's horizon will be
 * another kind.  A measures pipeline's also holds the arrival number of
 * each new event of the lane (its global one, base + local: design 13,
 * risk 10), in offset order.
 */
typedef struct SfLaneKArrival
{
	int64		offset;
	int64		arrival;
} SfLaneKArrival;

typedef struct SfLaneKItem
{
	uint8		kind;			/* 'L' or 'F' */
	bool		late;
	int64		offset;
} SfLaneKItem;

typedef struct SfLaneK
{
	int			lane;
	int64		n;
	SfLaneKItem *items;			/* in offset order */
	int64		arrival_base;	/* measures: the head's arrivals before */
	int64		narrivals;
	SfLaneKArrival *arrivals;	/* measures: in offset order */
} SfLaneK;

/*
 * A lane being loaded from its journal rows (design 4.3, "Lane entries";
 * head_replay.c): the deliveries of its format 3 entries in offset order,
 * their outcomes from the lane's own history (a map of its own event ids)
 * and from the K entries of the same range, all registered first (a K
 * row follows the rows of its transaction).
 */
typedef struct SfLaneLoad
{
	SfPipeline *lane;
	int			pi;				/* its partition */
	SfFingerprints *ids;		/* its own event ids -> handles */
	SfFingerprints *k;			/* offset + 1 -> K kind << 1 | late */
	SfFingerprints *arr;		/* measures: offset + 1 -> arrival */
} SfLaneLoad;

/*
 * head_clock.c: a run of built-in progress advances replayed as one
 * release (design 4.5, "The clock replay coalesced"): the watermarks the
 * run reached since its last flush, increasing
 */
typedef struct SfClockRun
{
	int			n;
	int			cap;
	int64	   *wm;
} SfClockRun;

extern void sf_clock_run_init(SfClockRun *r);
extern void sf_clock_run_free(SfClockRun *r);
extern void sf_head_clock_advance(SfPipeline *p, SfClockRun *r, int pi,
								  int64 progress);
extern void sf_head_clock_accept(SfPipeline *p, SfClockRun *r, int pi,
								 int64 event_time);
extern void sf_head_clock_flush(SfPipeline *p, SfClockRun *r,
								SfChangeList *out);

/* head_entry.c: the recording of sf_head_commit */
extern void sf_head_entry_start(SfHead *h, SfTxn *t);
extern void sf_head_entry_add(SfTxn *t, uint8 kind, int lane, int64 value,
							  const SfIdentity *id);
extern void sf_head_entry_accept(SfTxn *t, SfPipeline *p, SfClockRun *run,
								 int lane, int64 event_time);
extern void sf_head_entry_end(SfHead *h, SfTxn *t);
extern SfHeOp *sf_head_entry_new_op(SfHeadEntry *e);
extern int64 *sf_head_lane_table(SfHead *h);

/* head_replay.c: an entry applied, lanes built, a serial state split */
extern void sf_head_apply_entry(SfHead *h, const SfHeadEntry *e,
								SfChangeList *out);
extern uint32 sf_lane_add(SfPipeline *lane, int pi, const char *event_id,
						  int event_id_len, const char *key, int key_len,
						  int64 event_time, int64 value, bool late,
						  bool foreign, const int64 *measures);
extern void sf_lane_load_delivery_measures(SfLaneLoad *l,
										   const SfDelivery *d,
										   const int64 *mv);
extern void sf_head_index_offset(SfHead *h, int pi, int64 offset,
								 uint64 hash);
extern void sf_lane_load_begin(SfLaneLoad *l, SfPipeline *lane, int pi);
extern void sf_lane_load_k(SfLaneLoad *l, const SfLaneK *k);
extern void sf_lane_load_delivery(SfLaneLoad *l, const SfDelivery *d);
extern void sf_lane_load_end(SfLaneLoad *l);
extern SfHead *sf_head_split(MemoryContext parent, SfPipeline *serial);

#endif							/* SF_ENGINE_PARALLEL_H */
