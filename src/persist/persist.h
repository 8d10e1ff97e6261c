/*-------------------------------------------------------------------------
 *
 * persist.h
 *	  The public interface of persistence (src/persist/): pipelines stored
 *	  in the extension's tables and cached per backend, the privilege
 *	  model, and the durable outputs.
 *
 * Persistence runs SPI in the caller's transaction and is the only layer
 * that does (test/run.d/layers.sh checks it); it defines no SQL-callable
 * function (those are api/'s).  It uses the engine and the codec through
 * their public headers.  persist_int.h is private to src/persist/.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/persist.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SF_PERSIST_H
#define SF_PERSIST_H

#include "datatype/timestamp.h"

#include "engine/engine.h"

/* ----------------------------------------------------------------
 * Privileges on pipelines (acl.c)
 * ----------------------------------------------------------------
 */

/* Each privilege includes the ones below it */
typedef enum SfPrivilege
{
	SF_PRIV_NONE = 0,
	SF_PRIV_READ = 1,
	SF_PRIV_INGEST = 2,
	SF_PRIV_ADMIN = 3
} SfPrivilege;

/* One grant: a role (InvalidOid: PUBLIC) and the privilege it was given */
typedef struct SfGrant
{
	Oid			role;
	SfPrivilege privilege;
} SfGrant;

/* Who may use a pipeline: its owner (admin) and its grants */
typedef struct SfAcl
{
	Oid			owner;
	int			ngrants;
	SfGrant    *grants;
} SfAcl;

/*
 * The user id and security context to return to after sf_become_owner(),
 * and the GUC nest level that pins search_path meanwhile
 */
typedef struct SfSavedUser
{
	Oid			userid;
	int			sec_context;
	int			guc_nestlevel;
} SfSavedUser;

typedef SfPipeline *(*SfRedefineFn) (SfPipeline *old, void *arg);

/* ----------------------------------------------------------------
 * Prototypes, grouped by defining file
 * ----------------------------------------------------------------
 */

/* acl.c: privileges on pipelines, running queries as the extension's owner */
extern void sf_become_owner(SfSavedUser *saved);
extern Oid	sf_extension_owner(void);
extern void sf_restore_user(const SfSavedUser *saved);
extern void sf_acl_from_datums(SfAcl *acl, Datum owner, Datum readers,
							   Datum ingesters, Datum admins);
extern SfPrivilege sf_acl_privilege(const SfAcl *acl, Oid role);
extern void sf_acl_check(const SfAcl *acl, const char *pipeline,
						 Oid role, SfPrivilege required);
extern const char *sf_privilege_name(SfPrivilege privilege);
extern SfPrivilege sf_privilege_parse(const char *s);

/* catalog.c: the read-only check of a write, a pipeline's time unit */
extern void sf_persist_check_writable(const char *name);
extern Interval *sf_time_unit_get(const char *pipeline);

/* compact.c: the journal since the snapshot, compact()'s decision */
extern void sf_compact_init(void);
extern double sf_persist_load_estimate(const char *name);
extern PGDLLEXPORT void sf_compact_worker_main(Datum main_arg);
extern int64 sf_persist_journal_bytes(const char *name);
extern bool sf_persist_compact_due(const char *name);

/* datum.c: engine values as datums */
extern Datum sf_int128_numeric(int128 v);
extern Datum sf_string_text(const SfString *s);

/* persist.c: pipelines stored in the extension's tables, cached per backend */
extern void sf_persist_init(bool define_gucs);
extern void sf_persist_create(const SfPipelineDef *def);
extern bool sf_persist_drop(const char *name);
extern SfPipeline *sf_persist_open(const char *name, bool for_write);
extern void sf_persist_journal_ingest(SfPipeline *p, const SfDelivery *d,
									  const SfDeliveryHash *h, int n);
extern void sf_persist_journal_ingest_measures(SfPipeline *p,
											   const SfDelivery *d,
											   const SfDeliveryHash *h, int n,
											   const int64 *measures);
extern void sf_persist_journal_advance(SfPipeline *p, const char *partition,
									   int64 progress);
extern void sf_persist_journal_mark_idle(SfPipeline *p,
										 const char *partition);
extern bool sf_persist_restore(const char *name, const char *data, Size len);

/*
 * parallel.c: write calls on a pipeline with writers => 'parallel' (issue
 * 46, build plan step 4).  The pipeline comes from sf_persist_open as for
 * a serial one; its changes are the commit's (sequencer.c).
 */
typedef void (*SfParCheck) (void *arg, int i);
extern int64 sf_persist_parallel_ingest(SfPipeline *p, SfDelivery *ds, int n,
										const int64 *mv, bool assign,
										SfParCheck check, void *arg);
extern void sf_persist_parallel_lock(SfPipeline *p, const bool *named);
extern void sf_persist_parallel_advance(SfPipeline *p, const char *partition,
										int64 progress);
extern void sf_persist_parallel_mark_idle(SfPipeline *p,
										  const char *partition);
extern void sf_persist_parallel_finish(SfPipeline *p);
extern bytea *sf_persist_parallel_checkpoint(SfPipeline *p);
extern void sf_persist_parallel_stats(SfPipeline *p, SfStats *s);
extern int64 sf_persist_parallel_consumed(SfPipeline *p, int i);
extern void sf_persist_parallel_create(const SfPipelineDef *def);
extern bool sf_persist_parallel_restore(const char *name, const char *data,
										Size len);
extern int	sf_persist_parallel_compact(const char *name, int64 min_bytes);
extern void sf_persist_check_new(const char *name);
extern bool sf_persist_find(const char *name, int64 *id);
extern void sf_persist_get_acl(const char *name, bool for_update,
							   SfAcl *acl);
extern void sf_persist_set_acl(const char *name, const SfAcl *acl);

/*
 * version.c: the library against the installed extension, and against the
 * other streamforge library a backend may have loaded (module.c)
 */
extern bool sf_foreign_library;
extern void sf_foreign_library_error(void) pg_attribute_noreturn();

/* redefine.c: definition changes stored */
extern void sf_redefine_init(void);
extern SfPipeline *sf_persist_redefine(const char *name, SfRedefineFn build,
									   void *arg);
extern SfPipeline *sf_persist_redefine_concurrently(const char *name,
													SfRedefineFn build,
													void *arg);

/*
 * recompute_rows.c: the mapping of a recompute (streamforge.recompute) run
 * as the source table's owner; mappings is an event[] or a
 * measures_delivery[] (measures), dropped a text[], in the caller's
 * memory context
 */
typedef struct SfRecomputeRows
{
	bool		measures;
	Datum		mappings;
	bool		mappings_null;
	Datum		dropped;
	bool		dropped_null;
	int64		from_unit;
	bool		from_null;
	int64		to_unit;
	bool		to_null;
} SfRecomputeRows;

extern void sf_persist_recompute_rows(Datum aggregate, bool aggregate_null,
									  Datum from_time, bool from_null,
									  Datum to_time, bool to_null,
									  SfRecomputeRows *out);

/* notify.c: the notifications' pipeline id; one notification per call */
extern int64 sf_persist_pipeline_id(const char *name);
extern int	sf_notify_kept(void);
extern void sf_notify_coalesce(int from);
/* definition.c: how often this backend loaded a pipeline's definition */
extern int64 sf_progress_cache_loads(const char *name);

/* activity.c: when partitions last received a delivery and a report */
extern void sf_activity_note(const char *pipeline, const char *partition,
							 bool report);
extern void sf_activity_note_deliveries(const SfPipeline *p,
										const SfDeliveryHash *h, int n);
extern void sf_activity_get(const char *pipeline, int n,
							char (*names)[SF_NAME_MAX + 1],
							TimestampTz *delivery, TimestampTz *report,
							TimestampTz *since);
extern void sf_activity_watch(const char *pipeline);

/* sink.c: durable outputs (changelog, results, late events) and NOTIFY */
/* measures.c: measures pipelines (docs/aggregates.md) */
extern Datum sf_agg_datum(const SfAggValue *v, bool *isnull);
extern Datum sf_aggregates_jsonb(const SfMeasuresDef *md, const SfAgg *agg);

extern void sf_sink_emit(SfPipeline *p, const SfChangeList *changes,
						 int64 late_from);
extern void sf_sink_emit_calls(SfPipeline *p, const SfChangeList *changes,
							   int ncalls, const int *call_end,
							   const int64 *call_seq, const int64 *call_late,
							   int64 late_from);
extern void sf_sink_drop(const char *pipeline);
extern void sf_sink_restore(const char *pipeline);

/*
 * attach_rows.c: the statements of an attached table's insert trigger
 * (api/attach_insert.c): the rows of its transition table as its mappings
 * make them (into a DestReceiver)
 */
struct TriggerData;
struct _DestReceiver;
extern void sf_attach_begin(struct TriggerData *td);
extern void sf_attach_end(void);
extern void sf_attach_rows(const struct TriggerData *td,
						   struct _DestReceiver *dest, bool split_measures);

#endif							/* SF_PERSIST_H */
