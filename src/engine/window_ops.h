/*-------------------------------------------------------------------------
 *
 * window_ops.h
 *	  The window kinds (issue 41, item 1): one operations table per kind,
 *	  registered in one array (engine/window_kinds.c).  Public: the layers
 *	  above reach it through engine/engine.h, which includes it.
 *
 * The window module is window_ops.h, window_kinds.c (the table, the names
 * and the cold operations: checks, descriptions, lookups), window.c (the
 * hot assignment, a switch) and session.c (the session merge rule).
 * Nothing else in src/ names an SF_WINDOW_* kind constant or compares
 * w->kind (test/run.d/layers.sh, rule "kinds"): the other files read the
 * table's facts (params, merge, period) or call the helpers below.
 *
 * Cost: the per-event paths do not go through a function pointer.
 * sf_assign_windows() and sf_window_max_buckets() keep their switch in
 * window.c (the same instructions as 0.3.0); "does this window merge" is
 * the inline sf_window_merges() below, one compare.  The table's function
 * pointers serve cold paths only.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/window_ops.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SF_WINDOW_OPS_H
#define SF_WINDOW_OPS_H

/*
 * The kinds.  The value is persisted: it is the kind byte of the binary
 * snapshot (codec/snapshot.c), so a value is never reused or renumbered;
 * a new kind takes the next one.  sf_window_kinds[k].kind == k.
 */
typedef enum SfWindowKind
{
	SF_WINDOW_FIXED = 0,
	SF_WINDOW_SLIDING = 1,
	SF_WINDOW_SESSION = 2
} SfWindowKind;

#define SF_WINDOW_NKINDS 3

typedef struct SfWindowDef
{
	char		name[SF_NAME_MAX + 1];
	SfWindowKind kind;
	int64		size;			/* with SF_WPARAM_SIZE */
	int64		step;			/* with SF_WPARAM_STEP */
	int64		gap;			/* with SF_WPARAM_GAP */
} SfWindowDef;

/*
 * The parameters a kind takes, among window_def's three bigint columns, in
 * this order.  Their names ("size", "step", "gap") are those of the SQL
 * constructors' arguments, the checkpoint's keys and the messages.
 */
#define SF_WPARAM_SIZE	0x01
#define SF_WPARAM_STEP	0x02
#define SF_WPARAM_GAP	0x04
#define SF_WPARAM_NBITS 3

/*
 * How the buckets of a kind come about.
 *	ASSIGNED: an event's buckets are a function of its time alone
 *	  (sf_assign_windows); the live index holds them by (window, key, start).
 *	MERGING: an event starts [t, t + gap) and merges with the live buckets
 *	  of its key it touches (session.c); a merging kind takes "gap".
 */
typedef enum SfWindowMerge
{
	SF_WINDOW_ASSIGNED = 0,
	SF_WINDOW_MERGING = 1
} SfWindowMerge;

typedef struct SfWindowOps
{
	SfWindowKind kind;
	const char *name;			/* "fixed": window_def.kind, the catalog, the
								 * checkpoint's "kind", the constructor */
	uint8		params;			/* SF_WPARAM_*: which of size/step/gap */
	SfWindowMerge merge;

	/*
	 * create_aggregate's GROUP BY marker (api/aggregate_sql.c,
	 * 66_aggregates_*.sql): the spec's "window" value ("tumble"), the
	 * function the query calls (session's is renamed in the raw tree, see
	 * aggregate_sql.c) and its interval arguments after ts, in params
	 * order, as the messages name them.
	 */
	const char *marker;
	const char *marker_proc;
	const char *marker_args[SF_WPARAM_NBITS];

	/*
	 * Aligned kinds: every bucket is [k * step, k * step + size) for the
	 * returned size and step (fixed: size, size; sliding: size, step).  The
	 * checkpoint's derivation (codec_derive.c) and the redefinition's count
	 * (redefine.c) rely on it.  Every ASSIGNED kind has it today; a
	 * kind without it needs those callers to assign event by event.
	 */
	void		(*period) (const SfWindowDef *w, int64 *size, int64 *step);

	/*
	 * Assigned kinds: whether [start, end) is one of w's buckets (the
	 * checkpoint's validation of live buckets, codec_validate.c).  An
	 * aligned kind uses sf_window_aligned_bucket_ok; NULL for a merging
	 * kind, whose buckets the codec checks by session's rule.
	 */
	bool		(*bucket_ok) (const SfWindowDef *w, int64 start, int64 end);

	/*
	 * A kind's own validity beyond its params being positive (sliding: the
	 * bucket limit): NULL if valid, else the primary message (palloc'd) and
	 * *detail.  NULL pointer: nothing more to check.
	 */
	char	   *(*check) (const SfWindowDef *w, char **detail);
} SfWindowOps;

/* engine/window_kinds.c: the registry */
extern PGDLLIMPORT const SfWindowOps sf_window_kinds[SF_WINDOW_NKINDS];

/* The kind's operations; kind must be valid (snapshot.c checks its byte) */
static inline const SfWindowOps *
sf_window_ops(SfWindowKind kind)
{
	Assert((int) kind >= 0 && (int) kind < SF_WINDOW_NKINDS);
	return &sf_window_kinds[kind];
}

/* By name ("fixed") or by create_aggregate marker ("tumble"): NULL if none */
extern const SfWindowOps *sf_window_ops_by_name(const char *name);
extern const SfWindowOps *sf_window_ops_by_marker(const char *marker);

/* The kind's name; raises on an invalid kind (a hostile catalog value) */
extern const char *sf_window_kind_name(SfWindowKind kind);

/* The names of the kinds that take param p, for messages: "\"fixed\" or \"sliding\"" */
extern char *sf_window_kinds_with(uint8 param);

/* The name of param bit p ("size", "step", "gap"); w's value of it */
extern const char *sf_window_param_name(uint8 p);
extern int64 sf_window_param(const SfWindowDef *w, uint8 p);
extern void sf_window_set_param(SfWindowDef *w, uint8 p, int64 v);

/*
 * Whether w is a valid window: each param positive, in params order, then
 * the kind's check.  On false, *msg and *detail are the texts of the error
 * (create_pipeline and the constructors raise them with 22023; the codec
 * wraps them in its own).
 */
extern bool sf_window_check(const SfWindowDef *w, char **msg, char **detail);

/* The bucket_ok of aligned kinds: start a multiple of step, end - start = size */
extern bool sf_window_aligned_bucket_ok(const SfWindowDef *w, int64 start,
										int64 end);

/* "fixed(size 10)", "sliding(size 20, step 5)", "session(gap 5)" */
extern char *sf_window_describe(const SfWindowDef *w);

/* The constructors, for hints: "streamforge.fixed(), ... or streamforge.session()" */
extern char *sf_window_ctor_hint(void);

/*
 * Whether two definitions of one window name are the same window: kind and
 * the kind's params.
 */
extern bool sf_window_def_same(const SfWindowDef *a, const SfWindowDef *b);

/*
 * Hot: whether an event's bucket in w merges with its neighbours.  Inline,
 * one compare, no table load.  window_kinds.c asserts that it agrees with
 * the table's merge rule.
 */
static inline bool
sf_window_merges(const SfWindowDef *w)
{
	return w->kind == SF_WINDOW_SESSION;
}

/* window.c: hot, a switch over the kinds (unchanged from 0.3.0) */
extern int	sf_assign_windows(const SfWindowDef *w, int64 event_time,
							  int64 lateness, int64 *starts, int64 *ends,
							  int max);
extern int	sf_window_max_buckets(const SfWindowDef *w);

#endif							/* SF_WINDOW_OPS_H */
