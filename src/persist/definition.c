/*-------------------------------------------------------------------------
 *
 * definition.c
 *	  A pipeline's definition in its row: the one document
 *	  streamforge.pipeline.definition (codec/options.def), loaded by one
 *	  statement and read by the codec's strict reader; and how often a
 *	  backend loaded it (the metric cache_loads).
 *
 * The column is jsonb, whose text orders keys by length first, so the
 * loader spells it canonically again (jsonb_canonical) before the
 * strict reader (sf_definition_read) takes it: a document that
 * create_pipeline or a definition change would not have written is a
 * corrupt definition (XX001), never a crash.  (The canonical spelling of
 * jsonb is here, not in the codec, which uses no fmgr.)  The writers are
 * sf_persist_create (persist.c) and sf_persist_redefine (redefine.c): each
 * writes the whole document (sf_definition_text).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/definition.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

#include "codec/codec.h"
#include "engine/engine.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

/* ----------------------------------------------------------------
 * Loads per pipeline (streamforge_internal.cache_loads)
 * ----------------------------------------------------------------
 */

typedef struct LoadCount
{
	char		name[SF_NAME_MAX + 1];
	int64		loads;
} LoadCount;

static HTAB *load_counts;

static void
count_load(const char *name)
{
	bool		found;
	LoadCount  *c;

	if (load_counts == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = SF_NAME_MAX + 1;
		ctl.entrysize = sizeof(LoadCount);
		ctl.hcxt = TopMemoryContext;
		load_counts = hash_create("streamforge loads", 16, &ctl,
								  HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	}
	c = hash_search(load_counts, name, HASH_ENTER, &found);
	c->loads = found ? c->loads + 1 : 1;
}

/*
 * How often this backend built pipeline name from its tables (a cold
 * load, a rebuild after eviction or another backend's compaction, a
 * restore): the definition is loaded each time.
 */
int64
sf_progress_cache_loads(const char *name)
{
	LoadCount  *c;

	if (load_counts == NULL)
		return 0;
	c = hash_search(load_counts, name, HASH_FIND, NULL);
	return c != NULL ? c->loads : 0;
}

/* ----------------------------------------------------------------
 * jsonb in canonical JSON
 * ----------------------------------------------------------------
 */

typedef struct CanonPair
{
	JsonbValue	key;
	JsonbValue	value;
} CanonPair;

static int
canon_pair_cmp(const void *a, const void *b)
{
	const JsonbValue *ka = &((const CanonPair *) a)->key;
	const JsonbValue *kb = &((const CanonPair *) b)->key;
	int			c = memcmp(ka->val.string.val, kb->val.string.val,
						   Min(ka->val.string.len, kb->val.string.len));

	if (c != 0)
		return c;
	return (ka->val.string.len > kb->val.string.len) -
		(ka->val.string.len < kb->val.string.len);
}

static void canon_container(StringInfo buf, JsonbContainer *jc);

static void
canon_value(StringInfo buf, JsonbValue *v)
{
	switch (v->type)
	{
		case jbvNull:
			appendStringInfoString(buf, "null");
			break;
		case jbvBool:
			appendStringInfoString(buf, v->val.boolean ? "true" : "false");
			break;
		case jbvNumeric:
			/* verbatim: the strict reader refuses "5.0" */
			appendStringInfoString(buf,
								   DatumGetCString(DirectFunctionCall1(numeric_out,
																	   NumericGetDatum(v->val.numeric))));
			break;
		case jbvString:
			sf_json_write_string(buf, v->val.string.val, v->val.string.len);
			break;
		case jbvBinary:
			canon_container(buf, v->val.binary.data);
			break;
		default:
			elog(ERROR, "streamforge: unexpected jsonb value type %d", (int) v->type);
	}
}

static void
canon_container(StringInfo buf, JsonbContainer *jc)
{
	check_stack_depth();
	CHECK_FOR_INTERRUPTS();
	if (JsonContainerIsScalar(jc))
	{
		JsonbValue	v;

		if (!JsonbExtractScalar(jc, &v))
			elog(ERROR, "streamforge: invalid jsonb scalar");
		canon_value(buf, &v);
	}
	else if (JsonContainerIsArray(jc))
	{
		uint32		n = JsonContainerSize(jc);

		appendStringInfoCharMacro(buf, '[');
		for (uint32 i = 0; i < n; i++)
		{
			JsonbValue *v = getIthJsonbValueFromContainer(jc, i);

			if (i > 0)
				appendStringInfoCharMacro(buf, ',');
			canon_value(buf, v);
			pfree(v);
		}
		appendStringInfoCharMacro(buf, ']');
	}
	else
	{
		uint32		n = JsonContainerSize(jc);
		CanonPair  *pairs = palloc(Max(n, 1) * sizeof(CanonPair));
		uint32		np = 0;
		JsonbIterator *it = JsonbIteratorInit(jc);
		JsonbValue	v;
		JsonbIteratorToken tok;

		while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
		{
			if (tok == WJB_KEY)
			{
				if (np >= n)
					elog(ERROR, "streamforge: invalid jsonb object");
				pairs[np].key = v;
			}
			else if (tok == WJB_VALUE)
				pairs[np++].value = v;
		}
		qsort(pairs, np, sizeof(CanonPair), canon_pair_cmp);
		appendStringInfoCharMacro(buf, '{');
		for (uint32 i = 0; i < np; i++)
		{
			if (i > 0)
				appendStringInfoCharMacro(buf, ',');
			sf_json_write_string(buf, pairs[i].key.val.string.val,
								 pairs[i].key.val.string.len);
			appendStringInfoCharMacro(buf, ':');
			canon_value(buf, &pairs[i].value);
		}
		appendStringInfoCharMacro(buf, '}');
		pfree(pairs);
	}
}

/*
 * The jsonb value jc in canonical JSON: keys in byte order (jsonb orders
 * them by length first), strings as sf_json_write_string writes them,
 * numbers verbatim (numeric_out), no whitespace; the strict reader then
 * reads it.
 */
static void
jsonb_canonical(StringInfo buf, JsonbContainer *jc)
{
	canon_container(buf, jc);
}

/* ----------------------------------------------------------------
 * Storing and loading
 * ----------------------------------------------------------------
 */

/* The document of def as stored: text, cast to jsonb by the statement */
Datum
sf_definition_text(const SfPipelineDef *def)
{
	StringInfoData buf;

	initStringInfo(&buf);
	sf_definition_write(&buf, def, SF_OPT_STORED);
	return PointerGetDatum(cstring_to_text_with_len(buf.data, buf.len));
}

/*
 * Load the definition of pipeline id from its row (PLAN_DEF), in the
 * current memory context.  Caller must be connected to SPI with a
 * snapshot pushed.  A document the strict reader refuses raises XX001
 * with the reader's detail.
 */
void
sf_load_def(const char *name, int64 id, SfPipelineDef *def)
{
	MemoryContext cxt = CurrentMemoryContext;
	Datum		arg = Int64GetDatum(id);
	Datum		d;
	bool		isnull;

	count_load(name);
	sf_exec(PLAN_DEF, &arg, NULL, true, SPI_OK_SELECT);
	if (SPI_processed != 1)
		elog(ERROR, "streamforge: pipeline \"%s\" vanished", name);
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1,
					  &isnull);
	if (isnull)
		ereport(ERROR,
				errcode(ERRCODE_DATA_CORRUPTED),
				errmsg("corrupt definition of pipeline \"%s\"", name),
				errdetail("The definition is null."));

	PG_TRY();
	{
		Jsonb	   *jb = DatumGetJsonbP(d);
		StringInfoData buf;

		initStringInfo(&buf);
		jsonb_canonical(&buf, &jb->root);
		sf_definition_read(buf.data, buf.len, def);
	}
	PG_CATCH();
	{
		ErrorData  *e;

		MemoryContextSwitchTo(cxt);
		e = CopyErrorData();
		if (e->sqlerrcode != ERRCODE_SF_INVALID_CHECKPOINT)
			PG_RE_THROW();
		FlushErrorState();
		ereport(ERROR,
				errcode(ERRCODE_DATA_CORRUPTED),
				errmsg("corrupt definition of pipeline \"%s\"", name),
				e->detail ? errdetail("%s", e->detail) : 0);
	}
	PG_END_TRY();
	strlcpy(def->name, name, sizeof(def->name));
	sf_def_normalize(def);
}
