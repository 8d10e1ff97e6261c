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

/* ----------------------------------------------------------------
 * The options (options.def) and the document's writer
 * ----------------------------------------------------------------
 */

static bool
has_partitions(const SfPipelineDef *def)
{
	return true;
}

static void
write_partitions(StringInfo buf, const SfPipelineDef *def, bool first)
{
	sf_json_write_key(buf, "partitions", first);
	appendStringInfoCharMacro(buf, '[');
	for (int i = 0; i < def->npartitions; i++)
	{
		if (i > 0)
			appendStringInfoCharMacro(buf, ',');
		sf_json_write_string(buf, def->partitions[i], strlen(def->partitions[i]));
	}
	appendStringInfoCharMacro(buf, ']');
}

static void
write_windows(StringInfo buf, const SfPipelineDef *def, bool first)
{
	sf_json_write_key(buf, "windows", first);
	appendStringInfoCharMacro(buf, '[');
	for (int i = 0; i < def->nwindows; i++)
	{
		if (i > 0)
			appendStringInfoCharMacro(buf, ',');
		ck_write_window_def(buf, &def->windows[i]);
	}
	appendStringInfoCharMacro(buf, ']');
}

static bool
has_measures(const SfPipelineDef *def)
{
	return def->measures != NULL;
}

/* "aggregates" sorts first, "measures" after "lateness" */
static void
write_aggregates(StringInfo buf, const SfPipelineDef *def, bool first)
{
	Assert(first);
	ck_write_def_aggregates(buf, def->measures);
}

static void
write_measures(StringInfo buf, const SfPipelineDef *def, bool first)
{
	Assert(!first);
	ck_write_def_measures(buf, def->measures);
}

static bool read_partitions(SfJsonReader *r, CkDoc *doc, bool first);
static bool read_windows(SfJsonReader *r, CkDoc *doc, bool first);
static bool read_measures(SfJsonReader *r, CkDoc *doc, bool first);
static bool read_aggregates(SfJsonReader *r, CkDoc *doc, bool first);

static const SfOptHooks sf_opt_partitions = {has_partitions, write_partitions, read_partitions};
static const SfOptHooks sf_opt_windows = {has_partitions, write_windows, read_windows};
static const SfOptHooks sf_opt_measures = {has_measures, write_measures, read_measures};
static const SfOptHooks sf_opt_aggregates = {has_measures, write_aggregates, read_aggregates};
static const SfOptEnum sf_opt_emit = {
	sf_emit_mode_parse, sf_emit_mode_name, SF_EMIT_UPDATE, "emit mode",
	"The emit modes are \"update\", \"update+final\" and \"final\"."
};
static const SfOptEnum sf_opt_writers = {
	sf_writers_mode_parse, sf_writers_mode_name, SF_WRITERS_SERIAL, "writers mode",
	"The writers modes are \"serial\" and \"parallel\"."
};

#define SF_NO_HAS -1
#define SF_HAS(field) ((int) offsetof(SfPipelineDef, field))
#define SF_OPTION(name, sql_type, sql_default, kind, since, flags, field, has_field, check, ext) \
	{#name, sql_type, sql_default, SF_OPT_KIND_##kind, since, flags, \
	 (int) offsetof(SfPipelineDef, field), has_field, check, ext},

const SfOption sf_options[] = {
#include "codec/options.def"
};
const int	sf_noptions = lengthof(sf_options);

#undef SF_OPTION
#undef SF_HAS
#undef SF_NO_HAS

/* sf_options in key (byte) order: the order of the document */
static const SfOption *by_key[lengthof(sf_options)];

static int
option_key_cmp(const void *a, const void *b)
{
	return strcmp((*(const SfOption *const *) a)->name,
				  (*(const SfOption *const *) b)->name);
}

/*
 * Sort the options by key and check the table's rules: unique names, and
 * every option after 0.1.0 absent at its default (the checkpoints of
 * pipelines not using it stay byte-identical, and the documents stored
 * before it existed load).
 */
void
sf_options_init(void)
{
	if (by_key[0] != NULL)
		return;
	for (int i = 0; i < sf_noptions; i++)
	{
		const SfOption *o = &sf_options[i];

		/*
		 * After 0.1.0, absent at its default: the checkpoints of pipelines
		 * not using it stay byte-identical, and the stored documents of
		 * the pipelines created before it still load
		 */
		if (o->since > SF_V(0, 1, 0) && !(o->flags & SF_OPT_OMIT))
			elog(ERROR, "streamforge: option \"%s\" is not omitted at its default",
				 o->name);
		if ((o->flags & SF_OPT_CK) && o->kind == SF_OPT_KIND_INTERVAL)
			elog(ERROR, "streamforge: option \"%s\": an interval cannot be checkpointed",
				 o->name);
		by_key[i] = o;
	}
	qsort(by_key, sf_noptions, sizeof(by_key[0]), option_key_cmp);
	for (int i = 1; i < sf_noptions; i++)
		if (strcmp(by_key[i - 1]->name, by_key[i]->name) == 0)
			elog(ERROR, "streamforge: option \"%s\" is defined twice",
				 by_key[i]->name);
}

/* The option of that name (argument, key), NULL if none */
const SfOption *
sf_option_find(const char *name)
{
	for (int i = 0; i < sf_noptions; i++)
		if (strcmp(sf_options[i].name, name) == 0)
			return &sf_options[i];
	return NULL;
}

/*
 * The document of def, keys in byte order: each present member by its
 * kind (a NOTNULL scalar is always present, an OMIT one only when set).
 * SF_OPT_CHECKPOINT: the checkpoint's "definition" (docs/semantics.md,
 * Checkpoints, 6), the CK members only; SF_OPT_STORED adds the others.
 */
void
sf_definition_write(StringInfo buf, const SfPipelineDef *def, SfOptContext ctx)
{
	bool		first = true;

	sf_options_init();
	appendStringInfoCharMacro(buf, '{');
	for (int i = 0; i < sf_noptions; i++)
	{
		const SfOption *o = by_key[i];

		if (ctx == SF_OPT_CHECKPOINT && !(o->flags & SF_OPT_CK))
			continue;
		if ((o->flags & SF_OPT_OMIT) && !sf_opt_is_set(def, o))
			continue;
		switch (o->kind)
		{
			case SF_OPT_KIND_CUSTOM:
				((const SfOptHooks *) o->ext)->write(buf, def, first);
				break;
			case SF_OPT_KIND_INT64:
				sf_json_write_key(buf, o->name, first);
				sf_json_write_int64(buf, sf_opt_int64(def, o));
				break;
			case SF_OPT_KIND_ENUM:
				{
					const char *v = ((const SfOptEnum *) o->ext)->name(sf_opt_enum(def, o));

					sf_json_write_key(buf, o->name, first);
					sf_json_write_string(buf, v, strlen(v));
				}
				break;
			case SF_OPT_KIND_INTERVAL:
				sf_json_write_key(buf, o->name, first);
				sf_interval_write(buf, sf_opt_interval(def, o));
				break;
		}
		first = false;
	}
	appendStringInfoCharMacro(buf, '}');
}

/* "definition": the pipeline's definition (docs/semantics.md, Checkpoints, 6) */
void
ck_write_definition(StringInfo buf, const SfPipelineDef *def)
{
	sf_definition_write(buf, def, SF_OPT_CHECKPOINT);
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

/* "partitions" (every version) */
static bool
read_partitions(SfJsonReader *r, CkDoc *doc, bool first)
{
	int64		cap = 0;

	sf_json_key(r, "partitions", first);
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
	return true;
}

/* "windows" (every version) */
static bool
read_windows(SfJsonReader *r, CkDoc *doc, bool first)
{
	int64		cap = 0;

	sf_json_key(r, "windows", first);
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
	return true;
}

/* "aggregates" and "measures": in every version 2 document, in no other */
static bool
read_aggregates(SfJsonReader *r, CkDoc *doc, bool first)
{
	if (r->version < 2)
		return false;
	Assert(first);
	ck_read_def_aggregates(r, doc);
	return true;
}

static bool
read_measures(SfJsonReader *r, CkDoc *doc, bool first)
{
	if (r->version < 2)
		return false;
	Assert(!first);
	ck_read_def_measures(r, doc);
	return true;
}

/*
 * An interval as the document spells it (sf_interval_write), and nothing
 * else: parsed, then written again and compared.
 */
static void
rd_interval(SfJsonReader *r, const char *field, Interval *iv)
{
	SfJsonStr	s;
	const char *c;
	char	   *end;
	long		day;
	bool		neg = false;
	uint64		secs = 0;
	uint64		frac = 0;
	int			nfrac = 0;
	StringInfoData again;

	sf_json_string(r, field, &s);
	c = s.data;
	if (*c++ != 'P')
		goto bad;
	errno = 0;
	day = strtol(c, &end, 10);
	if (errno != 0 || end == c || day < PG_INT32_MIN || day > PG_INT32_MAX ||
		end[0] != 'D' || end[1] != 'T')
		goto bad;
	c = end + 2;
	if (*c == '-')
	{
		neg = true;
		c++;
	}
	if (!isdigit((unsigned char) *c))
		goto bad;
	while (isdigit((unsigned char) *c))
	{
		if (secs > (uint64) PG_INT64_MAX / USECS_PER_SEC)
			goto bad;
		secs = secs * 10 + (*c++ - '0');
	}
	if (*c == '.')
	{
		c++;
		while (isdigit((unsigned char) *c) && nfrac < 6)
		{
			frac = frac * 10 + (*c++ - '0');
			nfrac++;
		}
		if (nfrac == 0)
			goto bad;
	}
	if (c[0] != 'S' || c[1] != '\0')
		goto bad;
	while (nfrac++ < 6)
		frac *= 10;
	iv->month = 0;
	iv->day = (int32) day;
	iv->time = (int64) (secs * USECS_PER_SEC + frac);
	if (iv->time < 0)
		goto bad;
	if (neg)
		iv->time = -iv->time;
	initStringInfo(&again);
	sf_interval_write(&again, iv);
	if (again.len != s.len + 2 || memcmp(again.data + 1, s.data, s.len) != 0)
		goto bad;
	pfree(again.data);
	pfree(s.data);
	return;
bad:
	ck_error(CK_DEFINITION, "The %s \"%s\" is not an interval spelled \"P<days>DT<seconds>S\".",
			 field, sf_msg_str(s.data, s.len));
}

/*
 * A definition document into doc->def, whose arrays are scratch: the
 * options of ctx's document (SF_OPT_CHECKPOINT: the checkpointed ones,
 * SF_OPT_STORED: all) in key order, each by its kind: a NOTNULL scalar
 * must be there, an OMIT one may be absent (then unset); an ENUM at its
 * default is never written, so reading it is an error.
 */
static void
read_definition(SfJsonReader *r, CkDoc *doc, SfOptContext ctx)
{
	bool		first = true;

	sf_options_init();
	sf_json_char(r, '{');
	for (int i = 0; i < sf_noptions; i++)
	{
		const SfOption *o = by_key[i];
		bool		present = true;

		if (ctx == SF_OPT_CHECKPOINT && !(o->flags & SF_OPT_CK))
			continue;
		if (o->kind == SF_OPT_KIND_CUSTOM && ctx == SF_OPT_STORED &&
			(o->flags & SF_OPT_OMIT))
		{
			/* a stored document has what is set only */
			char		lit[NAMEDATALEN + 4];
			int			n = snprintf(lit, sizeof(lit), "%s\"%s\":",
									 first ? "" : ",", o->name);

			if (r->len - r->pos < n || memcmp(r->s + r->pos, lit, n) != 0)
				continue;
		}
		if (o->kind == SF_OPT_KIND_CUSTOM)
			present = ((const SfOptHooks *) o->ext)->read(r, doc, first);
		else if (o->flags & SF_OPT_OMIT)
		{
			char		lit[NAMEDATALEN + 4];

			snprintf(lit, sizeof(lit), "%s\"%s\":", first ? "" : ",", o->name);
			present = sf_json_literal(r, lit);
		}
		else
			sf_json_key(r, o->name, first);
		if (!present)
			continue;
		switch (o->kind)
		{
			case SF_OPT_KIND_INT64:
				sf_opt_set_int64(&doc->def, o, sf_json_int64(r, o->name));
				break;
			case SF_OPT_KIND_ENUM:
				{
					const SfOptEnum *e = (const SfOptEnum *) o->ext;
					char		name[SF_NAME_MAX + 1];
					uint8		v;

					rd_name(r, e->noun, name);
					if (!e->parse(name, &v) || v == e->dflt)
						ck_error(CK_DEFINITION, "The definition has an invalid %s.",
								 e->noun);
					sf_opt_set_enum(&doc->def, o, v);
				}
				break;
			case SF_OPT_KIND_INTERVAL:
				{
					Interval	iv;

					/* stored only: never SF_OPT_CK (sf_options_init) */
					Assert(ctx == SF_OPT_STORED);
					rd_interval(r, o->name, &iv);
					sf_opt_set_interval(&doc->def, o, &iv);
				}
				break;
			case SF_OPT_KIND_CUSTOM:
				break;
		}
		first = false;
	}
	sf_json_char(r, '}');
	doc->def.npartitions = (int) doc->ndefpartitions;
	doc->def.nwindows = (int) doc->ndefwindows;
}

/* "definition" of a checkpoint */
void
ck_read_definition(SfJsonReader *r, CkDoc *doc)
{
	read_definition(r, doc, SF_OPT_CHECKPOINT);
}

/* "definition" of a stored document (sf_definition_read): every option */
void
ck_read_stored_definition(SfJsonReader *r, CkDoc *doc)
{
	read_definition(r, doc, SF_OPT_STORED);
}
