/*-------------------------------------------------------------------------
 *
 * codec_definition.c
 *	  The "definition" part of a checkpoint document: written and read.
 *
 * A pipeline's definition (partitions, windows, lateness, retention, and
 * the 0.3.0 members that only a pipeline using them has: aggregates and
 * measures of a version 2 document, emit, out_of_orderness) in the one
 * spelling docs/checkpoint-format.md gives, keys in byte order.  The only
 * place where window kinds are spelled.  Callers: codec.c
 * (ck_write_document, ck_parse); nothing here keeps state.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/codec/codec_definition.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "codec/codec.h"
#include "codec/codec_int.h"
#include "engine/engine.h"

/*
 * One element of "definition"."windows": keys in byte order ("gap" < "kind"
 * < "name" < "size" < "step"), the kind's params only
 */
static void
ck_write_window_def(StringInfo buf, const SfWindowDef *w)
{
	const SfWindowOps *o = sf_window_ops(w->kind);

	appendStringInfoCharMacro(buf, '{');
	if (o->params & SF_WPARAM_GAP)
	{
		sf_json_write_key(buf, "gap", true);
		sf_json_write_int64(buf, w->gap);
	}
	sf_json_write_key(buf, "kind", !(o->params & SF_WPARAM_GAP));
	sf_json_write_string(buf, o->name, strlen(o->name));
	sf_json_write_key(buf, "name", false);
	sf_json_write_string(buf, w->name, strlen(w->name));
	if (o->params & SF_WPARAM_SIZE)
	{
		sf_json_write_key(buf, "size", false);
		sf_json_write_int64(buf, w->size);
	}
	if (o->params & SF_WPARAM_STEP)
	{
		sf_json_write_key(buf, "step", false);
		sf_json_write_int64(buf, w->step);
	}
	appendStringInfoCharMacro(buf, '}');
}

/* "definition": the pipeline's definition (docs/semantics.md, Checkpoints, 6) */
void
ck_write_definition(StringInfo buf, const SfPipelineDef *def)
{
	appendStringInfoCharMacro(buf, '{');
	if (def->measures != NULL)
		ck_write_def_aggregates(buf, def->measures);
	if (def->emit != SF_EMIT_UPDATE)
	{
		/* only in another mode than 'update': else the document is 0.2.0's */
		const char *emit = sf_emit_mode_name(def->emit);

		sf_json_write_key(buf, "emit", def->measures == NULL);
		sf_json_write_string(buf, emit, strlen(emit));
	}
	sf_json_write_key(buf, "lateness",
					  def->measures == NULL && def->emit == SF_EMIT_UPDATE);
	sf_json_write_int64(buf, def->lateness);
	if (def->measures != NULL)
		ck_write_def_measures(buf, def->measures);
	if (def->has_out_of_orderness)
	{
		/* only when set (docs/progress.md): without, the document is unchanged */
		sf_json_write_key(buf, "out_of_orderness", false);
		sf_json_write_int64(buf, def->out_of_orderness);
	}
	sf_json_write_key(buf, "partitions", false);
	appendStringInfoCharMacro(buf, '[');
	for (int i = 0; i < def->npartitions; i++)
	{
		if (i > 0)
			appendStringInfoCharMacro(buf, ',');
		sf_json_write_string(buf, def->partitions[i], strlen(def->partitions[i]));
	}
	appendStringInfoCharMacro(buf, ']');
	if (def->has_retention)
	{
		/* only with retention: without, the document is that of 0.1.0 */
		sf_json_write_key(buf, "retention", false);
		sf_json_write_int64(buf, def->retention);
	}
	sf_json_write_key(buf, "windows", false);
	appendStringInfoCharMacro(buf, '[');
	for (int i = 0; i < def->nwindows; i++)
	{
		if (i > 0)
			appendStringInfoCharMacro(buf, ',');
		ck_write_window_def(buf, &def->windows[i]);
	}
	appendStringInfoCharMacro(buf, ']');
	appendStringInfoCharMacro(buf, '}');
}

/* A name (partition, window): copied into a fixed-size definition slot */
static void
rd_name(SfJsonReader *r, const char *field, char *dst)
{
	SfJsonStr	s;

	sf_json_string(r, field, &s);
	if (s.len < 1 || s.len > SF_NAME_MAX)
		ck_error(CK_DEFINITION,
				 "The %s name \"%s\" is not between 1 and %d bytes long.",
				 field, sf_msg_str(s.data, s.len), SF_NAME_MAX);
	memcpy(dst, s.data, s.len + 1);
	pfree(s.data);
}

static void
rd_window_def(SfJsonReader *r, SfWindowDef *w)
{
	SfJsonStr	kind;
	const SfWindowOps *o;

	memset(w, 0, sizeof(SfWindowDef));
	sf_json_char(r, '{');
	/* "gap" sorts before "kind", so a gap-based kind starts differently */
	if (sf_json_peek(r, '"') && r->len - r->pos > 4 &&
		memcmp(r->s + r->pos, "\"gap\"", 5) == 0)
	{
		sf_json_key(r, "gap", true);
		w->gap = sf_json_int64(r, "gap");
		sf_json_key(r, "kind", false);
		sf_json_string(r, "kind", &kind);
		o = sf_window_ops_by_name(kind.data);
		if (o == NULL || !(o->params & SF_WPARAM_GAP))
			ck_error(CK_DOCUMENT,
					 "A window with a \"gap\" must be of kind %s, not \"%s\".",
					 sf_window_kinds_with(SF_WPARAM_GAP),
					 sf_msg_str(kind.data, kind.len));
		sf_json_key(r, "name", false);
		rd_name(r, "window", w->name);
		if (o->params & SF_WPARAM_SIZE)
		{
			sf_json_key(r, "size", false);
			w->size = sf_json_int64(r, "size");
		}
	}
	else
	{
		sf_json_key(r, "kind", true);
		sf_json_string(r, "kind", &kind);
		sf_json_key(r, "name", false);
		rd_name(r, "window", w->name);
		sf_json_key(r, "size", false);
		w->size = sf_json_int64(r, "size");
		o = sf_window_ops_by_name(kind.data);
		if (o == NULL || !(o->params & SF_WPARAM_SIZE) ||
			(o->params & SF_WPARAM_GAP))
			ck_error(CK_DOCUMENT,
					 "Window \"%s\" has kind \"%s\"; a window with a \"size\" is %s.",
					 w->name, sf_msg_str(kind.data, kind.len),
					 sf_window_kinds_with(SF_WPARAM_SIZE));
	}
	w->kind = o->kind;
	if (o->params & SF_WPARAM_STEP)
	{
		sf_json_key(r, "step", false);
		w->step = sf_json_int64(r, "step");
	}
	sf_json_char(r, '}');
}

/* "definition": into doc->def, whose arrays are scratch */
void
ck_read_definition(SfJsonReader *r, CkDoc *doc)
{
	int64		cap = 0;

	sf_json_char(r, '{');
	if (r->version >= 2)
		ck_read_def_aggregates(r, doc);
	/* "emit" (0.3.0) sorts after "aggregates", and only a mode other than 'update' has it */
	if (sf_json_literal(r, r->version >= 2 ? ",\"emit\":" : "\"emit\":"))
	{
		char		emit[SF_NAME_MAX + 1];

		rd_name(r, "emit mode", emit);
		if (!sf_emit_mode_parse(emit, &doc->def.emit) ||
			doc->def.emit == SF_EMIT_UPDATE)
			ck_error(CK_DEFINITION, "The definition has an invalid emit mode.");
	}
	sf_json_key(r, "lateness",
				r->version < 2 && doc->def.emit == SF_EMIT_UPDATE);
	doc->def.lateness = sf_json_int64(r, "lateness");
	if (r->version >= 2)
		ck_read_def_measures(r, doc);
	/* "out_of_orderness" sorts between "measures" and "partitions" */
	if (sf_json_literal(r, ",\"out_of_orderness\":"))
	{
		doc->def.has_out_of_orderness = true;
		doc->def.out_of_orderness = sf_json_int64(r, "out_of_orderness");
	}
	sf_json_key(r, "partitions", false);
	if (sf_json_array_begin(r, "partitions"))
	{
		do
		{
			if (doc->ndefpartitions >= PG_INT16_MAX)
				ck_error(CK_DEFINITION, "The definition has too many partitions.");
			doc->def.partitions = ck_grow(doc->def.partitions, &cap,
										  doc->ndefpartitions,
										  sizeof(*doc->def.partitions));
			rd_name(r, "partition",
					doc->def.partitions[doc->ndefpartitions++]);
		} while (sf_json_array_next(r));
	}
	/* "retention" sorts between "partitions" and "windows" (docs/semantics.md, Retention) */
	if (sf_json_literal(r, ",\"retention\":"))
	{
		doc->def.has_retention = true;
		doc->def.retention = sf_json_int64(r, "retention");
	}
	sf_json_key(r, "windows", false);
	cap = 0;
	if (sf_json_array_begin(r, "windows"))
	{
		do
		{
			/* SfBucket.window is a uint16 */
			if (doc->ndefwindows >= PG_UINT16_MAX)
				ck_error(CK_DEFINITION, "The definition has too many windows.");
			doc->def.windows = ck_grow(doc->def.windows, &cap,
									   doc->ndefwindows, sizeof(SfWindowDef));
			rd_window_def(r, &doc->def.windows[doc->ndefwindows++]);
		} while (sf_json_array_next(r));
	}
	sf_json_char(r, '}');
	doc->def.npartitions = (int) doc->ndefpartitions;
	doc->def.nwindows = (int) doc->ndefwindows;
}
