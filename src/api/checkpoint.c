/*-------------------------------------------------------------------------
 *
 * checkpoint.c
 *	  checkpoint, restore and inspect_checkpoint (docs/semantics.md, Checkpoints): the
 *	  canonical checkpoint bytes of a pipeline (codec/codec.c), and
 *	  replacing a pipeline's state by them (persist.c).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/api/checkpoint.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "api/api.h"

PG_FUNCTION_INFO_V1(sf_checkpoint);
Datum
sf_checkpoint(PG_FUNCTION_ARGS)
{
	SfPipeline *p = sf_arg_pipeline(fcinfo, false);
	MemoryContext cxt = CurrentMemoryContext;
	bytea	   *volatile result = NULL;

	/* a state past one document's size: say so, and what to do */
	PG_TRY();
	{
		/* a parallel pipeline's head and lanes merged (issue 46) */
		result = sf_is_parallel(p) ? sf_persist_parallel_checkpoint(p) :
			sf_checkpoint_encode(p);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		if (edata->sqlerrcode != ERRCODE_PROGRAM_LIMIT_EXCEEDED &&
			edata->sqlerrcode != ERRCODE_OUT_OF_MEMORY)
			PG_RE_THROW();
		FlushErrorState();
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("state of pipeline \"%s\" is too large for a checkpoint",
						p->def.name),
				 errdetail("%s", edata->detail ? edata->detail : edata->message),
				 edata->hint ?
				 errhint("%s", edata->hint) :
				 errhint("Advance the watermark so that buckets are finalized, or lower streamforge.max_live_buckets.")));
	}
	PG_END_TRY();
	PG_RETURN_BYTEA_P(result);
}

PG_FUNCTION_INFO_V1(sf_restore);
Datum
sf_restore(PG_FUNCTION_ARGS)
{
	char	   *name = sf_arg_text(fcinfo, 0, "pipeline");
	bytea	   *cp;

	sf_arg_not_null(fcinfo, 1, "checkpoint");
	cp = PG_GETARG_BYTEA_PP(1);
	/* a parallel pipeline's is installed at commit, with its outputs */
	if (sf_persist_restore(name, VARDATA_ANY(cp), VARSIZE_ANY_EXHDR(cp)))
		sf_sink_restore(name);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(sf_inspect_checkpoint);
Datum
sf_inspect_checkpoint(PG_FUNCTION_ARGS)
{
	bytea	   *cp = PG_GETARG_BYTEA_PP(0);
	char	   *doc;

	sf_check_checkpoint_size(VARDATA_ANY(cp), VARSIZE_ANY_EXHDR(cp));
	doc = sf_checkpoint_document(VARDATA_ANY(cp), VARSIZE_ANY_EXHDR(cp));

	/*
	 * A document past jsonb's limit gets jsonb's own error, before
	 * jsonb_in builds structures larger than palloc allows (XX000).
	 */
	if (strlen(doc) > JENTRY_OFFLENMASK)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("total size of jsonb object elements exceeds the maximum of %d bytes",
						JENTRY_OFFLENMASK)));
	return DirectFunctionCall1(jsonb_in, CStringGetDatum(doc));
}
