/*-------------------------------------------------------------------------
 *
 * manage.c
 *	  Managing pipelines: definition changes of a running pipeline,
 *	  add_partition, add_window, drop_window, set_lateness and
 *	  set_retention.
 *
 * Each is SQL glue: it checks its arguments, lets persist/redefine.c check
 * the admin privilege and lock the pipeline
 * (sf_persist_redefine_concurrently), checks the change against the
 * current definition, builds the new state (engine/redefine.c), and
 * returns the changes the definition change caused, which the outputs
 * (persist/sink.c) receive too.  The build may run before the lock is
 * taken, and more than once, if writers commit meanwhile
 * (persist/redefine.c): manage_build starts afresh each time.  Each is
 * one call in the caller's transaction: an error or a rollback undoes it.  See
 * docs/management.md.  The internal-function lookup (sf_call_as_owner) and
 * the did-you-mean hint of an unknown pipeline live elsewhere
 * (privileges.c; persist/catalog.c).
 *
 * Memory: the new state is built in CurTransactionContext, where
 * persist.c's cache adopts it (sf_persist_redefine_concurrently); the
 * change list and the combined window names (ManageOp.names) are built in
 * the SQL function's context, and live until the changes are returned.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/manage.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "lib/stringinfo.h"

#include "api/api.h"

typedef enum ManageKind
{
	MANAGE_ADD_PARTITION,
	MANAGE_ADD_WINDOW,
	MANAGE_DROP_WINDOW,
	MANAGE_SET_LATENESS,
	MANAGE_SET_RETENTION
} ManageKind;

/* One definition change: its arguments, and what it did */
typedef struct ManageOp
{
	ManageKind	kind;
	FunctionCallInfo fcinfo;	/* argument 1 is the change's */
	char		name[SF_NAME_MAX + 1];	/* partition or window */
	SfWindowDef window;			/* MANAGE_ADD_WINDOW */
	int64		lateness;		/* MANAGE_SET_LATENESS */
	bool		has_retention;	/* MANAGE_SET_RETENTION (false: keep all) */
	int64		retention;		/* MANAGE_SET_RETENTION, if has_retention */
	MemoryContext cxt;			/* the SQL function's */
	SfPipelineDef names;		/* in cxt: old and new windows, by name */
	SfChangeList changes;		/* in cxt; window indexes into names */
} ManageOp;

/* The windows of def as "a", "b", "c", for a hint */
static char *
window_list(const SfPipelineDef *def)
{
	StringInfoData buf;
	int			i;

	initStringInfo(&buf);
	for (i = 0; i < def->nwindows; i++)
		appendStringInfo(&buf, "%s\"%s\"", i > 0 ? ", " : "",
						 def->windows[i].name);
	return buf.data;
}

/* Deep copy of a definition into the current memory context */
static void
def_copy(SfPipelineDef *dst, const SfPipelineDef *src, int extra_partitions,
		 int extra_windows)
{
	*dst = *src;
	dst->partitions = palloc((src->npartitions + extra_partitions) *
							 sizeof(dst->partitions[0]));
	memcpy(dst->partitions, src->partitions,
		   src->npartitions * sizeof(dst->partitions[0]));
	dst->windows = palloc((src->nwindows + extra_windows) * sizeof(SfWindowDef));
	memcpy(dst->windows, src->windows, src->nwindows * sizeof(SfWindowDef));
}

/*
 * Check the change's argument (argument 1), once the pipeline is known and
 * the caller's privilege checked, as write calls check theirs (docs/semantics.md
 * section 3: pipeline, then arguments).
 */
static void
manage_args(ManageOp *op, const char *pipeline)
{
	FunctionCallInfo fcinfo = op->fcinfo;
	char	   *name;

	switch (op->kind)
	{
		case MANAGE_ADD_PARTITION:
		case MANAGE_DROP_WINDOW:
			name = sf_arg_text(fcinfo, 1, op->kind == MANAGE_ADD_PARTITION ?
							   "partition" : "window name");
			sf_validate_name(op->kind == MANAGE_ADD_PARTITION ? "partition" :
							 "window", name);
			strlcpy(op->name, name, sizeof(op->name));
			break;
		case MANAGE_ADD_WINDOW:
			sf_arg_not_null(fcinfo, 1, "window definition");
			/* an interval window, in the pipeline's unit (timeunit.c) */
			sf_window_def_arg(sf_window_to_units(PG_GETARG_DATUM(1), pipeline),
							  &op->window);
			break;
		case MANAGE_SET_LATENESS:
			sf_arg_not_null(fcinfo, 1, "lateness");
			op->lateness = PG_GETARG_INT64(1);
			if (op->lateness < 0)
				ereport(ERROR,
						errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("lateness must not be negative"),
						errdetail("The lateness given is " INT64_FORMAT ".",
								  op->lateness));
			break;
		case MANAGE_SET_RETENTION:
			/* NULL keeps everything (docs/semantics.md, Retention) */
			op->has_retention = !PG_ARGISNULL(1);
			op->retention = op->has_retention ? PG_GETARG_INT64(1) : 0;
			if (op->has_retention && op->retention < 0)
				ereport(ERROR,
						errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("retention must not be negative"),
						errdetail("The retention given is " INT64_FORMAT ".",
								  op->retention));
			break;
	}
}

/*
 * The SfRedefineFn of every change: the caller is known to be an admin;
 * check the change against the current definition and build the new
 * state.  The pipeline is locked, or old is its latest committed state,
 * read without the lock: a build whose state is not the committed one
 * when the lock is taken is thrown away, and this runs again.
 */
static SfPipeline *
manage_build(SfPipeline *old, void *arg)
{
	ManageOp   *op = (ManageOp *) arg;
	MemoryContext oldcxt = MemoryContextSwitchTo(op->cxt);
	SfPipelineDef def;
	SfPipeline *p;
	int			i;

	op->changes.n = 0;			/* a build before may have left some */
	manage_args(op, old->def.name);

	/*
	 * A retention changes no window (docs/semantics.md, Retention: an event below the horizon
	 * is late anyway), so no rebuild: retention.c copies the state and
	 * forgets what the new horizon forgets, or refuses (55000) to move the
	 * horizon back over what is already forgotten.  No changes result.
	 */
	if (op->kind == MANAGE_SET_RETENTION)
	{
		p = sf_pipeline_with_retention(CurTransactionContext, old,
									   op->has_retention, op->retention);
		op->names = p->def;
		MemoryContextSwitchTo(oldcxt);
		return p;
	}

	def_copy(&def, &old->def, 1, 1);

	switch (op->kind)
	{
		case MANAGE_ADD_PARTITION:
			if (sf_partition_index(&old->def, op->name) >= 0)
				ereport(ERROR,
						errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("partition \"%s\" already exists in pipeline \"%s\"",
							   op->name, old->def.name));
			/* sf_check_def_limits below refuses too many partitions */
			strlcpy(def.partitions[def.npartitions++], op->name,
					SF_NAME_MAX + 1);
			break;
		case MANAGE_ADD_WINDOW:
			if (sf_window_index(&old->def, op->window.name) >= 0)
				ereport(ERROR,
						errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("window \"%s\" already exists in pipeline \"%s\"",
							   op->window.name, old->def.name),
						errhint("Drop the window first with streamforge.drop_window(), or choose another name."));
			if (def.nwindows >= PG_UINT16_MAX)
				ereport(ERROR,
						errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						errmsg("a pipeline can have at most %d windows",
							   PG_UINT16_MAX));
			def.windows[def.nwindows++] = op->window;
			break;
		case MANAGE_DROP_WINDOW:
			i = sf_window_index(&old->def, op->name);
			if (i < 0)
				ereport(ERROR,
						errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("window \"%s\" does not exist in pipeline \"%s\"",
							   op->name, old->def.name),
						errhint("The pipeline's windows are %s.",
								window_list(&old->def)));
			if (old->def.nwindows == 1)
				ereport(ERROR,
						errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("cannot drop the last window of pipeline \"%s\"",
							   old->def.name),
						errdetail("A pipeline needs at least one window."),
						errhint("Add the window that replaces it first, or drop the pipeline."));
			memmove(&def.windows[i], &def.windows[i + 1],
					(def.nwindows - i - 1) * sizeof(SfWindowDef));
			def.nwindows--;
			break;
		case MANAGE_SET_LATENESS:
			def.lateness = op->lateness;
			break;
		case MANAGE_SET_RETENTION:
			pg_unreachable();
	}
	/* what create_pipeline would refuse, a change refuses too (limits.c) */
	sf_check_def_limits(&def);
	sf_def_normalize(&def);
	p = sf_pipeline_redefine(CurTransactionContext, old, &def, &op->changes,
							 &op->names);
	MemoryContextSwitchTo(oldcxt);
	return p;
}

/* Run op on the pipeline named by argument 0 and return its changes */
static Datum
manage_run(FunctionCallInfo fcinfo, ManageOp *op)
{
	char	   *pipeline = sf_arg_text(fcinfo, 0, "pipeline");
	SfPipeline *p;
	SfPipeline	named;

	op->cxt = CurrentMemoryContext;
	op->fcinfo = fcinfo;
	p = sf_persist_redefine_concurrently(pipeline, manage_build, op);

	/*
	 * The changes name windows of both definitions (a retraction may name a
	 * dropped window): hand the outputs and the result a read-only view of
	 * the new state whose windows are both definitions'.
	 */
	named = *p;
	named.def = op->names;
	/* the measures of p, not of the old definition, freed with old */
	named.def.measures = p->def.measures;
	sf_finish_write(fcinfo, &named, &op->changes, sf_late_keep(p));
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(sf_add_partition);
Datum
sf_add_partition(PG_FUNCTION_ARGS)
{
	ManageOp	op = {.kind = MANAGE_ADD_PARTITION};

	return manage_run(fcinfo, &op);
}

PG_FUNCTION_INFO_V1(sf_add_window);
Datum
sf_add_window(PG_FUNCTION_ARGS)
{
	ManageOp	op = {.kind = MANAGE_ADD_WINDOW};

	return manage_run(fcinfo, &op);
}

PG_FUNCTION_INFO_V1(sf_drop_window);
Datum
sf_drop_window(PG_FUNCTION_ARGS)
{
	ManageOp	op = {.kind = MANAGE_DROP_WINDOW};

	return manage_run(fcinfo, &op);
}

PG_FUNCTION_INFO_V1(sf_set_lateness);
Datum
sf_set_lateness(PG_FUNCTION_ARGS)
{
	ManageOp	op = {.kind = MANAGE_SET_LATENESS};

	return manage_run(fcinfo, &op);
}

PG_FUNCTION_INFO_V1(sf_set_retention);
Datum
sf_set_retention(PG_FUNCTION_ARGS)
{
	ManageOp	op = {.kind = MANAGE_SET_RETENTION};

	return manage_run(fcinfo, &op);
}
