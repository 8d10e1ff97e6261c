/*-------------------------------------------------------------------------
 *
 * locks.c
 *	  The lock order of streamforge's locks (issue 46, build plan step 7;
 *	  docs/design/parallel-writers.md, section 8.1): the locktags, and the
 *	  one wait decision of the call-time locks.
 *
 * Every lock streamforge takes has a rank, and a transaction only waits for
 * a lock ranked above every streamforge lock it holds:
 *	1. call-time locks, ordered by (pipeline name in byte order, lane): the
 *	   claim under which a serial pipeline's row lock is taken (lane -1,
 *	   persist.c's claim_row) and the claims of a parallel pipeline's lanes
 *	   (parallel.c's par_claim), both through sf_claim_lock;
 *	2. the pre-commit row writes of partition_activity (activity.c), in
 *	   (pipeline, partition) order;
 *	3. head locks, taken only by the sequencers at pre-commit, in name
 *	   order (sequencer.c, through sf_par_lock).
 * A call-time lock is tried without waiting; when busy, the caller waits
 * if it holds no call-time lock ranked at or above it, and raises 55P03 at
 * once otherwise.  A wait-for cycle among these locks would need a
 * downward wait, so none can form.
 *
 * The locktags are ADVISORY(database, pipeline id folded to 32 bits, lane,
 * field4) with field4 values of our own (0x5347 claim, 0x5348 head; the
 * background worker's is 0x5346, coldload.c), distinct from pg_advisory_*'s
 * (1 and 2).  All are transaction-level: released at the end of the
 * transaction, or of the subtransaction that took them if it aborts.
 *
 * Memory: the list of the call-time locks the current transaction took
 * lives in claims_cxt, a child of TopMemoryContext, reset when another
 * transaction claims.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/locks.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "utils/memutils.h"

#include "engine/engine.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

/* design 8.1: the claim's and the head lock's field4 */
#define SF_CLAIM_FIELD4		0x5347
#define SF_HEAD_FIELD4		0x5348

/* The claim of lane lane of pipeline id */
void
sf_par_claim_tag(LOCKTAG *tag, int64 id, int lane)
{
	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId,
						 (uint32) (id ^ (id >> 32)), (uint32) lane,
						 SF_CLAIM_FIELD4);
}

/* The head lock of pipeline id */
void
sf_par_head_tag(LOCKTAG *tag, int64 id)
{
	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId,
						 (uint32) (id ^ (id >> 32)), 0, SF_HEAD_FIELD4);
}

/*
 * The call-time locks (rank 1 of design 8.1) the current transaction took,
 * for the wait rule of sf_claim_lock: each with its rank, (pipeline name
 * in byte order, lane), lane -1 being a serial pipeline's claim.  A lock a
 * subtransaction's abort released is still listed; LockHeldByMe tells.
 * The list belongs to one transaction (claims_lxid) and is emptied when
 * another one claims; it lives in claims_cxt, a child of TopMemoryContext.
 */
typedef struct SfHeldClaim
{
	char	   *pipeline;
	char	   *partition;		/* NULL for lane -1 */
	int			lane;
	LOCKTAG		tag;
} SfHeldClaim;

static MemoryContext claims_cxt = NULL;
static SfHeldClaim *claims = NULL;
static int	nclaims = 0;
static int	claims_cap = 0;
static LocalTransactionId claims_lxid = InvalidLocalTransactionId;

/* The list of the current transaction: emptied if it was another's */
static void
claims_current(void)
{
	if (claims_cxt == NULL)
		claims_cxt = AllocSetContextCreate(TopMemoryContext,
										   "streamforge call-time locks",
										   ALLOCSET_SMALL_SIZES);
	if (claims_lxid != MyProc->lxid)
	{
		MemoryContextReset(claims_cxt);
		claims = NULL;
		nclaims = 0;
		claims_cap = 0;
		claims_lxid = MyProc->lxid;
	}
}

/* The rank order of design 8.1: the pipeline's name in byte order, the lane */
static int
claim_rank_cmp(const char *p1, int lane1, const char *p2, int lane2)
{
	int			c = strcmp(p1, p2);

	if (c != 0)
		return c;
	return lane1 < lane2 ? -1 : (lane1 > lane2 ? 1 : 0);
}

/* A call-time lock held now ranked at or above (pipeline, lane), or NULL */
static const SfHeldClaim *
claim_at_or_above(const char *pipeline, int lane)
{
	claims_current();
	for (int k = 0; k < nclaims; k++)
		if (claim_rank_cmp(claims[k].pipeline, claims[k].lane,
						   pipeline, lane) >= 0 &&
			LockHeldByMe(&claims[k].tag, ExclusiveLock))
			return &claims[k];
	return NULL;
}

static void
claim_note(const LOCKTAG *tag, const char *pipeline, int lane,
		   const char *partition)
{
	SfHeldClaim *c;

	claims_current();
	if (nclaims == claims_cap)
	{
		claims_cap = Max(8, 2 * claims_cap);
		claims = claims == NULL ?
			MemoryContextAlloc(claims_cxt, claims_cap * sizeof(SfHeldClaim)) :
			repalloc(claims, claims_cap * sizeof(SfHeldClaim));
	}
	c = &claims[nclaims++];
	c->pipeline = MemoryContextStrdup(claims_cxt, pipeline);
	c->partition = partition == NULL ? NULL :
		MemoryContextStrdup(claims_cxt, partition);
	c->lane = lane;
	c->tag = *tag;
}

/*
 * A head lock taken at the call by a definition change of a parallel
 * pipeline (redefine_par.c), held until its transaction ends: the last of
 * them (early_tag) of the transaction early_lxid.  It breaks the order of
 * design 8.1 (a head lock, rank 3, held while the transaction goes on to
 * take call-time locks and other pipelines' head locks), so once a
 * transaction holds one it waits for no streamforge lock: a busy one is
 * 55P03 at once (early_refuse), and no wait-for cycle can pass through
 * it.  A change in a transaction of its own, as documented, never meets
 * this.
 */
static LocalTransactionId early_lxid = InvalidLocalTransactionId;
static LOCKTAG early_tag;

static bool
early_head_held(void)
{
	return early_lxid == MyProc->lxid &&
		LockHeldByMe(&early_tag, ExclusiveLock);
}

static void
early_refuse(const char *what)
{
	ereport(ERROR,
			errcode(ERRCODE_LOCK_NOT_AVAILABLE),
			errmsg("could not lock %s: this transaction changed the definition of a parallel pipeline",
				   what),
			errdetail("A definition change of a parallel pipeline holds its head lock until the transaction ends; waiting for another lock after it could deadlock."),
			errhint("Change the definition of a parallel pipeline in a transaction of its own."));
}

/*
 * Take the call-time lock (design 8.1, rank 1) of lane lane of pipeline
 * pipeline (id id), or, with lane -1, the claim under which a serial
 * pipeline's row lock is taken, until the transaction ends.  The one wait
 * decision of streamforge's call-time locks: the lock is tried without
 * waiting; if another transaction holds it, the caller waits only when it
 * holds no call-time lock ranked at or above it (an upward wait), and
 * raises 55P03 at once otherwise: a wait-for cycle among these locks
 * would need a downward wait, so none can form.  partition names the lane
 * in the error (NULL for lane -1).
 */
void
sf_claim_lock(const char *pipeline, int64 id, int lane, const char *partition)
{
	LOCKTAG		tag;
	LockAcquireResult r;

	sf_par_claim_tag(&tag, id, lane);
	r = LockAcquire(&tag, ExclusiveLock, false, true);
	if (r == LOCKACQUIRE_ALREADY_HELD || r == LOCKACQUIRE_ALREADY_CLEAR)
		return;
	if (r == LOCKACQUIRE_NOT_AVAIL)
	{
		const SfHeldClaim *above;

		if (early_head_held())
			early_refuse(partition == NULL ?
						 psprintf("pipeline \"%s\"", pipeline) :
						 psprintf("partition \"%s\" of pipeline \"%s\"",
								  partition, pipeline));
		above = claim_at_or_above(pipeline, lane);

		if (above != NULL)
		{
			char	   *what = above->partition == NULL ?
				psprintf("pipeline \"%s\"", above->pipeline) :
				psprintf("partition \"%s\" of pipeline \"%s\"",
						 above->partition, above->pipeline);

			if (partition == NULL)
				ereport(ERROR,
						errcode(ERRCODE_LOCK_NOT_AVAILABLE),
						errmsg("could not lock pipeline \"%s\" out of order",
							   pipeline),
						errdetail("Another transaction holds its lock, and this transaction holds the lock of %s, which comes after it in the lock order: waiting could deadlock.",
								  what),
						errhint("Take every lock first, in one call: streamforge.lock_pipelines(pipelines, partitions); or write pipelines in the byte order of their names."));
			ereport(ERROR,
					errcode(ERRCODE_LOCK_NOT_AVAILABLE),
					errmsg("could not lock partition \"%s\" of pipeline \"%s\" out of order",
						   partition, pipeline),
					errdetail("Another transaction holds its lock, and this transaction holds the lock of %s, which comes after it in the lock order: waiting could deadlock.",
							  what),
					errhint("Take every lock first, in one call: streamforge.lock_pipelines(pipelines, partitions); or write pipelines in the byte order of their names, and a parallel pipeline's partitions in theirs."));
		}
		(void) LockAcquire(&tag, ExclusiveLock, false, false);
	}
	claim_note(&tag, pipeline, lane, partition);
}

/*
 * The call-time lock of lane lane of pipeline pipeline (id id), only if it
 * can be taken without waiting: returns false if another transaction holds
 * it.  *taken says whether this call took it (false: held already), so
 * that a caller giving up can release what it took.  Listed for
 * sf_claim_lock's rule as a waited-for claim is.
 */
bool
sf_claim_try(const char *pipeline, int64 id, int lane, const char *partition,
			 bool *taken)
{
	LOCKTAG		tag;
	LockAcquireResult r;

	sf_par_claim_tag(&tag, id, lane);
	r = LockAcquire(&tag, ExclusiveLock, false, true);
	*taken = false;
	if (r == LOCKACQUIRE_NOT_AVAIL)
		return false;
	if (r == LOCKACQUIRE_ALREADY_HELD || r == LOCKACQUIRE_ALREADY_CLEAR)
	{
		/* one more reference: released once by a caller giving up */
		LockRelease(&tag, ExclusiveLock, false);
		return true;
	}
	*taken = true;
	claim_note(&tag, pipeline, lane, partition);
	return true;
}

/*
 * Take a head lock (design 8.1, rank 3) until the transaction ends: it
 * always waits, but after a definition change's head lock (above).  The
 * sequencers take their head locks at pre-commit, in name order, after
 * every call-time lock, and wait for nothing ranked below while holding
 * one.
 */
void
sf_par_lock(const LOCKTAG *tag)
{
	if (early_head_held())
	{
		if (LockAcquire(tag, ExclusiveLock, false, true) == LOCKACQUIRE_NOT_AVAIL)
			early_refuse("the head of a parallel pipeline");
		return;
	}
	(void) LockAcquire(tag, ExclusiveLock, false, false);
}

/*
 * Take the head lock tag at the call, for a definition change of a
 * parallel pipeline, until the transaction ends (see early_head_held)
 */
void
sf_par_lock_early(const LOCKTAG *tag)
{
	sf_par_lock(tag);
	early_tag = *tag;
	early_lxid = MyProc->lxid;
}
