/*-------------------------------------------------------------------------
 *
 * persist_int.h
 *	  Declarations shared by the files of src/persist/ and nobody else:
 *	  the cache entry and the pipeline row (cache.c), the buffered journal
 *	  (pending.c), the prepared statements and row readers (catalog.c).
 *
 * Files outside src/persist/ use persist/persist.h only
 * (test/run.d/layers.sh checks it).  Inside the folder, calls go one way:
 * persist.c uses cache.c, pending.c, catalog.c and acl.c; cache.c uses
 * pending.c, catalog.c and acl.c; pending.c uses catalog.c and acl.c;
 * catalog.c uses acl.c; sink.c and sink_rows.c use catalog.c, datum.c and acl.c.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/persist_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SF_PERSIST_INT_H
#define SF_PERSIST_INT_H

#include "access/htup.h"
#include "access/tupdesc.h"
#include "access/xact.h"
#include "executor/spi.h"
#include "lib/ilist.h"
#include "lib/stringinfo.h"
#include "storage/lock.h"

#include "persist/persist.h"

typedef struct SfCacheEntry
{
	char		name[SF_NAME_MAX + 1];	/* hash key, must be first */
	Oid			relid;			/* OID of streamforge.pipeline */
	int64		id;
	int64		version;		/* -1: invalid */
	int64		snapshot_version;
	int64		snapshot_len;	/* bytes of the stored snapshot */
	int64		last_pos;		/* last journal row included, 0: none */
	int64		journal_bytes;	/* bytes of the journal rows included */

	/*
	 * What a cold load of the pipeline decodes and replays (issue 39,
	 * compact.c): the snapshot it starts from (the stored one, or the
	 * latest background snapshot of the epoch, at position load_pos), its
	 * bytes, and the journal bytes, deliveries, changes and identities
	 * the state had at that position.
	 */
	int64		load_pos;
	int64		load_len;
	int64		load_journal_bytes;
	int64		load_deliveries;
	int64		load_seq;
	int64		load_identities;
	SfPipeline *pipeline;		/* NULL: invalid */
	SfAcl		acl;			/* owner and grants, as of the last read */

	/*
	 * The latest subtransaction of the current transaction that changed
	 * acl (sf_persist_set_acl), and whether a subtransaction abort undid
	 * such a change since acl was read: the locked path of
	 * sf_persist_open, which trusts acl, then reads the row again.
	 */
	SubTransactionId acl_subid;
	bool		acl_stale;

	/*
	 * What the pipeline looked like when the current transaction first
	 * opened it for writing, if that was the committed state at version:
	 * an abort that finds the same pipeline with the same mutation count
	 * keeps it instead of rebuilding (see sf_xact_callback).
	 */
	bool		clean_valid;
	SfPipeline *clean_pipeline;
	uint64		clean_mutations;
	int64		clean_version;	/* the committed version it equals */
	int64		compact_after;	/* journal bytes before compacting again,
								 * after a state too large to snapshot */
	SubTransactionId modified_subid;	/* Invalid: no uncommitted changes */
	bool		locked;			/* this transaction holds the row lock */
	bool		journal_pending;	/* opened for write, not journaled yet */
	dlist_node	lru_node;		/* in cache_lru, most recently used first */
	int64		mem;			/* bytes charged to cache_bytes */
} SfCacheEntry;

/* What the pipeline row says */
typedef struct SfRowInfo
{
	Oid			relid;
	int64		id;
	int64		version;
	int64		snapshot_version;
	int64		snapshot_len;
	int64		offset_replays_base;
	SfAcl		acl;			/* grants in the caller's memory context */
	bool		ours;			/* row version written by this transaction */
} SfRowInfo;

/*
 * Journal entries not yet in the table.  The entries of write calls made
 * at the top level of a transaction (no savepoint or exception block
 * active) are buffered here and stored before commit or prepare, one row
 * per run of consecutive positions, instead of one INSERT per call.  Their
 * positions are taken at once (entry->last_pos), so the rows keep the order
 * of the calls, whatever a subtransaction writes in between.  Only the
 * abort of the whole transaction can undo a top-level call, and it discards
 * this buffer with everything else; a savepoint rollback never does, and
 * discards only cached state, which is rebuilt from the tables plus this
 * buffer.  A new snapshot (compaction, restore) or a drop in subtransaction
 * S covers the buffered runs: they are marked superseded by S, dropped
 * when the top level commits, and live again if S (or an ancestor) aborts.
 */
typedef struct SfPendingRun
{
	int64		last_pos;		/* position of its last entry: the row's pos */
	int			count;			/* entries */
	StringInfoData data;		/* entries, each after its uint32 length */
	SubTransactionId superseded;	/* Invalid: live */
	struct SfPendingRun *next;
} SfPendingRun;

typedef struct SfPending
{
	int64		id;				/* hash key: the pipeline id */
	Oid			relid;			/* OID of the streamforge.pipeline it is in */
	SfPendingRun *runs;			/* in position order */
	SfPendingRun *tail;
	int64		bytes;			/* entry bytes of the live runs */
} SfPending;

/* Flush a pipeline's buffer at the top level once it holds this much */
#define SF_PENDING_FLUSH	(16 * 1024)

/* catalog.c's prepared statements, kept for the backend's lifetime */
typedef enum SfPlanId
{
	PLAN_OPEN_WRITE,
	PLAN_OPEN_READ,
	PLAN_DEF,
	PLAN_SNAPSHOT_GET,
	PLAN_JOURNAL_GET,
	PLAN_JOURNAL_PUT,
	PLAN_JOURNAL_CLEAR,
	PLAN_SNAPSHOT_PUT,
	PLAN_CREATE,
	PLAN_DROP,
	PLAN_ACL_GET,
	PLAN_ACL_LOCK,
	PLAN_ACL_PUT,
	PLAN_EXISTS,
	PLAN_REDEFINE,
	PLAN_SIMILAR_ALL,
	PLAN_SIMILAR_CASE,
	PLAN_TIME_UNIT_GET,
	PLAN_SIDE_GET,
	PLAN_SIDE_PUT,
	PLAN_SIDE_PRUNE,
	PLAN_STORED_PUT,
	PLAN_STORED_PRUNE,
	PLAN_STORED_DROP,
	PLAN_SIDE_TRUNCATE,
	PLAN_SIDE_PAST,
	PLAN_SIDE_HEAD,
	NUM_PLANS
} SfPlanId;

/* The text of a statement to prepare and keep (sf_keep_plan) */
typedef struct SfPlanText
{
	const char *sql;
	int			nargs;
	Oid			argtypes[16];
} SfPlanText;

/* measures.c */
extern Datum sf_sink_aggregates(const SfPipeline *p, const SfAgg *const *aggs,
								int n, bool *isnull);
extern Datum sf_value_as(Datum d, Oid source, Oid target);
extern Datum sf_agg_typed(const SfMeasuresDef *md, const SfAgg *agg, int i,
						  Oid target, bool *isnull);

/*
 * sink_typed.c: the table of an aggregate's results (0.4.0, issue 42 item
 * 2), streamforge_results.a<id>, for the changes of the aggregate's window.
 * Kept in the sink's configuration cache (sink.c), in its context.
 */
typedef struct SfSinkTyped
{
	Oid			relid;			/* the table */
	char	   *window;			/* the aggregate's window */
	int			naggs;			/* a measures aggregate's a1 .. a<naggs>: */
	char	  **aggs;			/* the declared aggregate (member) each reads */
	SPIPlanPtr	delete_plan;	/* kept plans of the table, or NULL */
	SPIPlanPtr	final_plan;
	SPIPlanPtr	max_plan;
	struct SfSinkTop *top;		/* its top-N (sink_top.c), or NULL */
} SfSinkTyped;

extern int64 sf_sink_typed_max_start(SfSinkTyped *t);
extern void sf_sink_typed_results(SfPipeline *p, SfSinkTyped *t, int64 epoch,
								  int64 unit_us, int64 final_below,
								  int64 max_start,
								  const SfChange *const *last, int n);
extern void sf_sink_typed_final(SfSinkTyped *t, int64 below);
extern void sf_sink_typed_forget(SfSinkTyped *t);

/* sink_top.c: the top-N of an aggregate, kept with its results */
typedef struct SfSinkTop SfSinkTop;
typedef struct SfTopSnapshot SfTopSnapshot;
extern SfTopSnapshot *sf_sink_top_before(Datum name, SfSinkTyped *typed,
										 const SfChangeList *changes);
extern void sf_sink_top_apply(SfTopSnapshot *before);
extern void sf_sink_top_trim(Datum name);
extern void sf_sink_top_forget(SfSinkTop *top);

/* coldload.c: cold-load estimate and background snapshots (issue 39) */
extern void sf_coldload_init(void);
extern void sf_coldload_in_worker(void);
extern void sf_coldload_estimate(const SfCacheEntry *entry, double *decode,
								 double *replay);
extern bytea *sf_side_entry(const SfCacheEntry *entry, const SfPipeline *p,
							const bytea *snap, int64 truncated);
extern bool sf_side_truncated_past(int64 id, int64 epoch, int64 last_pos);
extern void sf_side_lock(const char *name);
extern bool sf_compact_side_covers(SfCacheEntry *entry, int64 bytes,
								   int64 limit);
extern void sf_compact_note_snapshot(SfCacheEntry *entry, const SfPipeline *p,
									 int64 len);
extern void sf_compact_after_write(SfCacheEntry *entry, SfPipeline *p);
extern void sf_compact_at_xact_end(bool commit);
extern SfPipeline *sf_side_snapshot_load(MemoryContext parent,
										 const SfPipelineDef *def, int64 id,
										 int64 epoch, int64 *pos,
										 int64 *journal_bytes,
										 int64 *offset_replays, int64 *len);

/* acl.c */
extern void sf_acl_copy(SfAcl *dst, const SfAcl *src, MemoryContext cxt);

/* version.c */
extern void sf_check_library_version(void);
extern char *sf_installed_version(void);

/* catalog.c: prepared statements, row readers, definitions */
extern SPIPlanPtr sf_keep_plan(SPIPlanPtr *slot, const SfPlanText *text);
extern void sf_run_plan(SPIPlanPtr *slot, const SfPlanText *text,
						Datum *values, const char *nulls, bool read_only,
						int expected);
extern bool sf_latest_writes(bool on);
extern SPIPlanPtr sf_plan(SfPlanId id);
extern void sf_exec(SfPlanId id, Datum *values, const char *nulls,
					bool read_only, int expected);
extern int64 sf_getint64(int col, bool *isnull);
extern void sf_read_acl(SfAcl *acl, HeapTuple tup, TupleDesc desc, int col,
						MemoryContext cxt);
extern void sf_read_row(SfRowInfo *row, bool with_xmin, MemoryContext cxt);
extern pg_attribute_noreturn() void sf_unknown_pipeline(const char *name);

/*
 * A name that cannot be stored is simply unknown (docs/semantics.md,
 * Exact rules, 8).  No cache entry can exist for such a name, so there is
 * nothing to forget.  Inline: every call runs it.
 */
static inline void
sf_check_lookup_name(const char *name)
{
	size_t		len = strlen(name);

	if (unlikely(len == 0 || len > SF_NAME_MAX))
		sf_unknown_pipeline(name);
}

/* definition.c: the definition's column */
extern void sf_load_def(const char *name, int64 id, SfPipelineDef *def);
extern Datum sf_definition_text(const SfPipelineDef *def);

/*
 * sink_bulk.c: rows written as COPY FROM writes them.  A column of n rows:
 * values[i] (NULL where nulls[i], if nulls is set), or, if values is NULL,
 * constant (NULL if constant_null) in every row.
 */
typedef struct SfBulkColumn
{
	const char *name;
	Datum	   *values;
	bool	   *nulls;
	Datum		constant;
	bool		constant_null;
} SfBulkColumn;

extern bool sf_bulk_insert(const char *table, const SfBulkColumn *cols,
						   int ncols, int n);
extern bool sf_bulk_insert_rel(Oid relid, const SfBulkColumn *cols,
							   int ncols, int n);

/* sink_rows.c: the rows of the changelog, the results and the late output */
extern void sf_sink_changelog(SfPipeline *p, Datum name, int64 epoch,
							  int64 unit_us, const SfChange *items, int n);
extern void sf_sink_results(SfPipeline *p, Datum name, int64 epoch,
							int64 unit_us, int64 final_below,
							const SfChangeList *changes,
							SfSinkTyped *typed);
extern void sf_sink_late(SfPipeline *p, Datum name, int64 unit_us,
						 int64 from, int n);

/* sink_ts.c */
extern Datum sf_ts_array(const int64 *times, int n, int64 unit_us,
						 bool *isnull);
extern Datum sf_time_ts(int64 t, int64 unit_us, bool *isnull);
extern void sf_ts_column(SfBulkColumn *col, const int64 *times, int n,
						 int64 unit_us);

/* notify.c */
extern void sf_notify_changes(const char *name, int64 epoch, int64 seq,
							  int64 late_seq);
extern void sf_notify_forget_pipeline(const char *name);
extern void sf_notify_xact_callback(XactEvent event, void *arg);
extern void sf_notify_precommit(void);

/* precommit.c: the one pre-commit driver */
extern void sf_precommit_callback(XactEvent event, void *arg);

/* activity.c: the pre-commit flush (precommit.c) */
extern void sf_activity_precommit(void);
extern void sf_notify_subxact_callback(SubXactEvent event,
									   SubTransactionId mySubid,
									   SubTransactionId parentSubid,
									   void *arg);

extern Datum sf_acl_array(const SfAcl *acl, SfPrivilege privilege);

/* cache.c: the per-backend cache of pipelines */
extern int	sf_cache_size;
extern SfCacheEntry *sf_cache_lookup(const char *name, bool create);
extern void sf_cache_account(SfCacheEntry *entry);
extern void sf_cache_touch(SfCacheEntry *entry);
extern void sf_cache_invalidate(SfCacheEntry *entry);
extern void sf_cache_discard(SfCacheEntry *entry);
extern void sf_cache_forget(const char *name);
extern void sf_cache_enforce(SfCacheEntry *keep);
extern void sf_mark_modified(SfCacheEntry *entry, SubTransactionId subid);
extern SfCacheEntry *sf_cache_write_hint;

/*
 * The entry of name, if cached: the write hint first, so that the per-row
 * calls of a transaction do not hash the name.  Inline, as before the
 * layer split: every per-row call runs both.
 */
static inline SfCacheEntry *
sf_cache_find(const char *name)
{
	if (sf_cache_write_hint != NULL &&
		strcmp(sf_cache_write_hint->name, name) == 0)
		return sf_cache_write_hint;
	return sf_cache_lookup(name, false);
}

/* The entry of p, if p is cached: the write hint first */
static inline SfCacheEntry *
sf_cache_find_pipeline(const SfPipeline *p)
{
	if (sf_cache_write_hint != NULL && sf_cache_write_hint->pipeline == p)
		return sf_cache_write_hint;
	return sf_cache_lookup(p->def.name, false);
}
extern void sf_cache_begin_write(SfCacheEntry *entry);
extern bool sf_cache_subabort_discarded(void);
extern void sf_cache_adopt(SfCacheEntry *entry, SfPipeline *p);
extern void sf_cache_copy_acl(SfCacheEntry *entry, const SfAcl *acl);
extern void sf_cache_set_acl(const char *name, const SfAcl *acl);
extern void sf_cache_sync(SfCacheEntry *entry, const char *name,
						  const SfRowInfo *row, int64 current_version);
extern void sf_xact_callback(XactEvent event, void *arg);
extern void sf_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
								SubTransactionId parentSubid, void *arg);

/* pending.c: the buffered journal */
extern SfPending *sf_pending_lookup(int64 id, bool create);
extern void sf_pending_reset(void);
extern SfPending *sf_pending_add(SfCacheEntry *entry, const char *data,
								 Size len);
extern void sf_pending_write(SfPending *pend);
extern void sf_pending_write_all(void);
extern void sf_pending_supersede(int64 id);
extern void sf_pending_subxact_end(bool abort, SubTransactionId mySubid,
								   SubTransactionId parentSubid);
extern void sf_pending_replay_run(SfPipeline *p, const SfPendingRun *run,
								  int64 *bytes, int64 *last);

/*
 * parallel.c, parallel_load.c and sequencer.c: a parallel pipeline as one backend holds it
 * (issue 46, docs/design/parallel-writers.md, build plan step 4).  The
 * head with every lane loaded (engine/parallel.h), the committed row
 * version it equals, the journal positions it includes, and the open
 * transaction's writer state.
 */
typedef struct SfParLaneLog
{
	SfDelivery *ds;				/* the transaction's deliveries to the lane,
								 * strings copied into the transaction */
	int64	   *mv;				/* measures: width words per delivery */
	int			n;
	int			cap;
	int64		early_pos;		/* position of its row written before the
								 * head lock (sequencer.c); 0: none */
} SfParLaneLog;

typedef struct SfParMark
{
	SubTransactionId subid;
	struct SfTxnMark *txn;
	int64	   *consumed;		/* [np] each lane's consumed offset */
	int64	   *replays;		/* [np] each lane's offset replays */
	int		   *nlog;			/* [np] each lane's log length */
	bool	   *claimed;		/* [np] */
} SfParMark;

typedef struct SfParEntry
{
	char		name[SF_NAME_MAX + 1];	/* hash key, must be first */
	int64		id;
	Oid			relid;
	int64		version;		/* committed row version held; -1: invalid */
	int64		snapshot_version;
	int64		snapshot_len;	/* head and lane snapshots' bytes */
	int64		head_pos;		/* last head journal row included */
	int64		journal_bytes;	/* head and lane rows since the snapshots */
	int64	   *lane_pos;		/* [np] last lane_journal row included */
	struct SfHead *head;		/* NULL: invalid */
	SfAcl		acl;
	/* the current transaction's writes, NULL when none */
	struct SfTxn *txn;
	int64		base_version;	/* the row version its first call found */
	Oid			writer;			/* the role of its first write call */
	bool	   *claimed;		/* [np] lanes claimed */
	SfParLaneLog *log;			/* [np] */
	SfParMark  *marks;			/* savepoint marks, by increasing subid */
	int			nmarks;
	int			marks_cap;
	bool		sequenced;		/* the sequencer ran: version is the new one */
	bool		restored;		/* restored in this transaction */
	SubTransactionId dropped_subid; /* dropped in it; Invalid: not */
	bool		catching;		/* a catch-up of head is under way */
	bool		lost;			/* one failed in the open transaction */
	struct SfParExcl *excl;		/* exclusive.c's actions; NULL: none */
} SfParEntry;

extern int	sf_par_count(void);
extern bool sf_par_id(const char *name, int64 *id);
extern void sf_par_dropped(const char *name);
extern SfParEntry **sf_par_open_txns(int *n);
extern void sf_par_xact_callback(XactEvent event, void *arg);
extern void sf_par_subxact_callback(SubXactEvent event,
									SubTransactionId mySubid,
									SubTransactionId parentSubid, void *arg);
extern SfPipeline *sf_par_open(const char *name, bool for_write);
extern SfParEntry *sf_par_lookup(const char *name, bool create);
extern void sf_par_end_txn(SfParEntry *pe, bool discard);
extern MemoryContext sf_par_context(void);
extern void sf_par_sequencing(bool on);

/* locks.c: the lock order (design 8.1) */
extern void sf_par_claim_tag(LOCKTAG *tag, int64 id, int lane);
extern void sf_par_head_tag(LOCKTAG *tag, int64 id);
extern void sf_par_lock(const LOCKTAG *tag);
extern void sf_par_lock_early(const LOCKTAG *tag);
extern void sf_claim_lock(const char *pipeline, int64 id, int lane,
						  const char *partition);
extern bool sf_claim_try(const char *pipeline, int64 id, int lane,
						 const char *partition, bool *taken);

/*
 * exclusive.c: exclusive operations on parallel pipelines, at pre-commit
 * under the head lock (design 8.1).  An action: fn(pe, arg), run by the
 * sequencer (sequencer.c, run_exclusive) in call order.
 */
typedef enum SfParExclKind
{
	SF_EXCL_RESTORE,
	SF_EXCL_DROP,
	SF_EXCL_ACL,
	SF_EXCL_COMPACT,
	SF_EXCL_OTHER				/* e.g. definition changes */
} SfParExclKind;

typedef void (*SfParExclFn) (SfParEntry *pe, void *arg);

typedef struct SfParExclAct
{
	SfParExclKind op;
	SubTransactionId subid;		/* recorded in; its rollback takes it back */
	SfParExclFn fn;
	void	   *arg;
	struct SfParExclAct *next;
} SfParExclAct;

/* pe->excl: the transaction's actions on one pipeline, in call order */
typedef struct SfParExcl
{
	SfParExclAct *first;
	SfParExclAct *last;
	bool		acl_locked;		/* sf_persist_get_acl(for_update) claimed */
} SfParExcl;

/*
 * Inline, as parallel.c and sequencer.c use them and exclusive.c calls
 * both (no call cycle between files, test/run.d/layers.sh)
 */

/* The last pending action op on pe (NULL allowed), or NULL */
static inline SfParExclAct *
sf_par_exclusive_find(const SfParEntry *pe, SfParExclKind op)
{
	SfParExclAct *found = NULL;

	if (pe == NULL || pe->excl == NULL)
		return NULL;
	for (SfParExclAct *a = pe->excl->first; a != NULL; a = a->next)
		if (a->op == op)
			found = a;
	return found;
}

/* A subtransaction's abort: the actions recorded in it (or a child) go */
static inline void
sf_par_exclusive_subabort(SfParEntry *pe, SubTransactionId sub)
{
	SfParExcl  *x = pe->excl;
	SfParExclAct *keep = NULL;

	for (SfParExclAct *a = x->first; a != NULL; a = a->next)
	{
		if (a->subid >= sub)
		{
			if (keep == NULL)
				x->first = NULL;
			else
				keep->next = NULL;
			break;
		}
		keep = a;
	}
	x->last = keep;
}

/*
 * The transaction's later calls on pe after its exclusive operations
 * (parallel.c's sf_par_open): a pending drop makes it unknown (42704), a
 * pending restore refuses write calls (0A000: they would run on the state
 * the restore replaces at commit)
 */
static inline void
sf_par_exclusive_check_open(const SfParEntry *pe, bool for_write)
{
	if (sf_par_exclusive_find(pe, SF_EXCL_DROP) != NULL)
		sf_unknown_pipeline(pe->name);
	if (for_write && sf_par_exclusive_find(pe, SF_EXCL_RESTORE) != NULL)
		ereport(ERROR,
				errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				errmsg("cannot write parallel pipeline \"%s\" in a transaction that restored it",
					   pe->name),
				errdetail("The restore is installed at commit."),
				errhint("Write it in a transaction of its own."));
}

extern void sf_par_exclusive_claim(SfParEntry *pe, bool every_lane);
extern void sf_par_exclusive_add(SfParEntry *pe, SfParExclKind op,
								 SfParExclFn fn, void *arg);
extern bool sf_par_exclusive_drop(const char *name);
extern bool sf_par_exclusive_drop_pending(const char *name);
extern bool sf_par_exclusive_acl(const char *name, bool for_update,
								 SfAcl *acl);
extern bool sf_par_exclusive_set_acl(const char *name, const SfAcl *acl);

extern void sf_sequencer_run_all(void);
extern void sf_par_store_snapshots(SfParEntry *pe, int64 version);

/* redefine_par.c: definition changes of parallel pipelines */
extern SfPipeline *sf_par_redefine(const char *name, SfRedefineFn build,
								   void *arg, bool early);

/* parallel_load.c */
extern void sf_par_load(SfParEntry *pe, const SfPipelineDef *def,
						const SfRowInfo *row, MemoryContext cxt);
extern bool sf_par_can_catch_up(const SfParEntry *pe, const SfRowInfo *row);
extern void sf_par_catch_up(SfParEntry *pe, const SfRowInfo *row);
extern void sf_par_sync_latest(SfParEntry *pe, SfAcl *acl,
							   bool reexecute);
extern pg_attribute_noreturn() void sf_par_moved_error(const SfParEntry *pe,
													   const char *detail);
extern int	sf_compaction_threshold;
extern int64 sf_compaction_limit_bytes(int64 snapshot_len);

/* leftovers.c */
extern void sf_report_kafka_leftovers(const char *pipeline);

#endif							/* SF_PERSIST_INT_H */
