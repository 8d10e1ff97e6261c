/*-------------------------------------------------------------------------
 *
 * codec_measures.c
 *	  The parts of checkpoint format version 2 that measures pipelines add
 *	  (docs/checkpoint-format.md, "Version 2"; docs/aggregates.md):
 *	  "arrivals", the definition's "aggregates" and "measures", an
 *	  identity's "arrival" and "measures" (in place of "value"), a row's
 *	  "state", their validation, and building them into a pipeline.
 *
 * A one-measure pipeline writes and reads none of this: its checkpoints
 * are version 1, byte for byte those of 0.2.0.  codec.c, codec_write.c
 * and codec_parse.c call these functions only when the document is
 * version 2 (SfJsonReader.version) or the pipeline has measures.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/codec/codec_measures.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "codec/codec.h"
#include "codec/codec_int.h"
#include "engine/engine.h"

/* ----------------------------------------------------------------
 * Writing
 * ----------------------------------------------------------------
 */

static void
write_int64_array(StringInfo buf, const int64 *v, int n)
{
	appendStringInfoCharMacro(buf, '[');
	for (int i = 0; i < n; i++)
	{
		if (i > 0)
			appendStringInfoCharMacro(buf, ',');
		sf_json_write_int64(buf, v[i]);
	}
	appendStringInfoCharMacro(buf, ']');
}

/* The definition's "aggregates" (first key) */
void
ck_write_def_aggregates(StringInfo buf, const SfMeasuresDef *md)
{
	sf_json_write_key(buf, "aggregates", true);
	appendStringInfoCharMacro(buf, '[');
	for (int i = 0; i < md->naggs; i++)
	{
		char	   *s = sf_agg_spelling(&md->aggs[i], md);

		if (i > 0)
			appendStringInfoCharMacro(buf, ',');
		sf_json_write_string(buf, s, strlen(s));
		pfree(s);
	}
	appendStringInfoCharMacro(buf, ']');
}

/* The definition's "measures" (after "lateness") */
void
ck_write_def_measures(StringInfo buf, const SfMeasuresDef *md)
{
	sf_json_write_key(buf, "measures", false);
	appendStringInfoCharMacro(buf, '[');
	for (int i = 0; i < md->nmeasures; i++)
	{
		char	   *s = sf_measure_spelling(md, i);

		if (i > 0)
			appendStringInfoCharMacro(buf, ',');
		sf_json_write_string(buf, s, strlen(s));
		pfree(s);
	}
	appendStringInfoCharMacro(buf, ']');
}

/* An identity's "arrival" (first key) */
void
ck_write_id_arrival(StringInfo buf, const SfPipeline *p, const SfIdentity *id)
{
	sf_json_write_key(buf, "arrival", true);
	sf_json_write_int64(buf, sf_id_measures(p, id)[0]);
}

/* An identity's "measures" (last key, in place of "value") */
void
ck_write_id_measures(StringInfo buf, const SfPipeline *p, const SfIdentity *id)
{
	const SfMeasuresDef *md = p->def.measures;
	const int64 *m = sf_id_measures(p, id) + 1;
	uint64		nulls = md->nullable ? (uint64) m[md->nmeasures] : 0;

	sf_json_write_key(buf, "measures", false);
	appendStringInfoCharMacro(buf, '[');
	for (int i = 0; i < md->nmeasures; i++)
	{
		if (i > 0)
			appendStringInfoCharMacro(buf, ',');
		if (nulls & ((uint64) 1 << i))
			appendStringInfoString(buf, "null");	/* a nullable measure's */
		else
			sf_json_write_int64(buf, m[i]);
	}
	appendStringInfoCharMacro(buf, ']');
}

/*
 * A row's "state" (between "min" and "sum"), and with variable-size
 * aggregate states (version 3) its "state_var": each state's words, in
 * aggregate order
 */
void
ck_write_row_state(StringInfo buf, const SfPipeline *p, const SfAgg *agg)
{
	const SfMeasuresDef *md = p->def.measures;

	sf_json_write_key(buf, "state", false);
	write_int64_array(buf, agg->ext, md->nwords);
	if (md->nvar == 0)
		return;
	sf_json_write_key(buf, "state_var", false);
	appendStringInfoCharMacro(buf, '[');
	for (int k = 0; k < md->nvar; k++)
	{
		int64	   *words;
		int64		n = sf_magg_var_words(md, agg->ext, k, &words);

		if (k > 0)
			appendStringInfoCharMacro(buf, ',');
		appendStringInfoCharMacro(buf, '[');
		for (int64 i = 0; i < n; i++)
		{
			if (i > 0)
				appendStringInfoCharMacro(buf, ',');
			sf_json_write_int64(buf, words[i]);
		}
		appendStringInfoCharMacro(buf, ']');
		pfree(words);
	}
	appendStringInfoCharMacro(buf, ']');
}

/* ----------------------------------------------------------------
 * Reading
 * ----------------------------------------------------------------
 */
/* Room for element n of arr (this file's own: it calls no other reader) */
static void *
grow(void *arr, int64 *cap, int64 n, Size elsize)
{
	if (n < *cap)
		return arr;
	*cap = *cap ? *cap * 2 : 8;
	return arr ? repalloc(arr, *cap * elsize) : palloc(*cap * elsize);
}

static int64 *
read_int64_array(SfJsonReader *r, const char *field, int *n)
{
	int64	   *v = NULL;
	int64		cap = 0;
	int64		k = 0;

	if (sf_json_array_begin(r, field))
	{
		do
		{
			if (k >= PG_INT16_MAX)
				ck_error(CK_DOCUMENT, "The array \"%s\" is too long.", field);
			v = grow(v, &cap, k, sizeof(int64));
			v[k++] = sf_json_int64(r, field);
		} while (sf_json_array_next(r));
	}
	*n = (int) k;
	return v;
}

static char **
read_string_array(SfJsonReader *r, const char *field, int *n)
{
	char	  **v = NULL;
	int64		cap = 0;
	int64		k = 0;

	if (sf_json_array_begin(r, field))
	{
		do
		{
			SfJsonStr	s;

			if (k >= SF_MAX_AGGREGATES)
				ck_error(CK_DEFINITION, "The definition has too many %s.", field);
			v = grow(v, &cap, k, sizeof(char *));
			sf_json_string(r, field, &s);
			v[k++] = s.data;
		} while (sf_json_array_next(r));
	}
	*n = (int) k;
	return v;
}

/* The definition's "aggregates" (version 2), into doc */
void
ck_read_def_aggregates(SfJsonReader *r, CkDoc *doc)
{
	sf_json_key(r, "aggregates", true);
	doc->aggs = read_string_array(r, "aggregates", &doc->naggs);
}

/* The definition's "measures" (version 2); builds doc->def.measures */
void
ck_read_def_measures(SfJsonReader *r, CkDoc *doc)
{
	MemoryContext cxt = CurrentMemoryContext;
	char	  **names;
	int			n;

	sf_json_key(r, "measures", false);
	names = read_string_array(r, "measures", &n);
	PG_TRY();
	{
		doc->def.measures = sf_measures_def_build(names, n, doc->aggs,
												  doc->naggs);
	}
	PG_CATCH();
	{
		ErrorData  *e;

		MemoryContextSwitchTo(cxt);
		e = CopyErrorData();
		FlushErrorState();
		ck_error(CK_DEFINITION, "The measures or aggregates are invalid: %s",
				 e->message);
	}
	PG_END_TRY();
	/* the spelling must be the normalized one: re-encoding checks it */
}

/* An identity's "arrival" (version 2) */
void
ck_read_id_arrival(SfJsonReader *r, CkIdentity *id)
{
	sf_json_key(r, "arrival", true);
	id->arrival = sf_json_int64(r, "arrival");
}

/*
 * An identity's "measures" (version 2); value is the first.  A null
 * element (a nullable measure's, 0.4.0) is 0 with its bit in id->nulls;
 * ck_check_measures checks that its measure is nullable.
 */
void
ck_read_id_measures(SfJsonReader *r, CkIdentity *id)
{
	int64	   *v = NULL;
	int64		cap = 0;
	int64		k = 0;

	sf_json_key(r, "measures", false);
	id->nulls = 0;
	if (sf_json_array_begin(r, "measures"))
	{
		do
		{
			if (k >= SF_MAX_MEASURES)
				ck_error(CK_STATE, "The identity \"%s\" has more than %d measures.",
						 sf_msg_str(id->event_id.data, id->event_id.len),
						 SF_MAX_MEASURES);
			v = grow(v, &cap, k, sizeof(int64));
			if (sf_json_literal(r, "null"))
			{
				id->nulls |= (uint64) 1 << k;
				v[k++] = 0;
			}
			else
				v[k++] = sf_json_int64(r, "measures");
		} while (sf_json_array_next(r));
	}
	id->measures = v;
	id->nmeasures = (int) k;
	id->value = id->nmeasures > 0 ? id->measures[0] : 0;
}

/*
 * A row's "state" (version 2), and "state_var" (version 3): kept as words
 * until the definition is known (ck_check_measures loads them)
 */
void
ck_read_row_state(SfJsonReader *r, CkRow *row)
{
	int64		cap = 0;

	sf_json_key(r, "state", false);
	row->agg.ext = read_int64_array(r, "state", &row->nstate);
	if (row->agg.ext == NULL)
		row->agg.ext = palloc0(sizeof(int64));
	if (r->version < 3)
		return;
	sf_json_key(r, "state_var", false);
	if (!sf_json_array_begin(r, "state_var"))
		return;
	do
	{
		int64	   *v = NULL;
		int64		vcap = 0;
		int64		n = 0;

		if (row->nvar >= SF_MAX_AGGREGATES)
			ck_error(CK_STATE, "A row of key \"%s\" has more than %d variable-size states.",
					 sf_msg_str(row->key.data, row->key.len), SF_MAX_AGGREGATES);
		if (sf_json_array_begin(r, "state_var"))
		{
			do
			{
				/* a state holds at most one word per event of its bucket */
				if (n >= row->agg.count)
					ck_error(CK_STATE,
							 "A row of key \"%s\" has a variable-size state of more values than its " INT64_FORMAT " events.",
							 sf_msg_str(row->key.data, row->key.len),
							 row->agg.count);
				v = grow(v, &vcap, n, sizeof(int64));
				v[n++] = sf_json_int64(r, "state_var");
			} while (sf_json_array_next(r));
		}
		if (row->nvar >= cap)
		{
			int64		c = cap;

			row->var_words = grow(row->var_words, &c, row->nvar, sizeof(int64 *));
			row->var_n = grow(row->var_n, &cap, row->nvar, sizeof(int64));
		}
		row->var_words[row->nvar] = v;
		row->var_n[row->nvar] = n;
		row->nvar++;
	} while (sf_json_array_next(r));
}

/* ----------------------------------------------------------------
 * Validation and building
 * ----------------------------------------------------------------
 */
static int
int64_cmp(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return (x > y) - (x < y);
}

/*
 * Every row's state of the definition's size, and its variable-size
 * states (version 3) loaded into its ext, after the fixed words
 */
static void
check_rows(const SfMeasuresDef *md, CkRow *rows, int64 n)
{
	for (int64 i = 0; i < n; i++)
	{
		CkRow	   *row = &rows[i];

		if (row->nstate != md->nwords)
			ck_error(CK_STATE,
					 "The row %s has a state of %d words, its aggregates need %d.",
					 ck_row_desc(row), row->nstate, md->nwords);
		if (md->nvar == 0)
			continue;
		if (row->nvar != md->nvar)
			ck_error(CK_STATE,
					 "The row %s has %d variable-size states, its aggregates need %d.",
					 ck_row_desc(row), row->nvar, md->nvar);
		row->agg.ext = repalloc(row->agg.ext,
								Max(md->nwords + md->nvar, 1) * sizeof(int64));
		memset(row->agg.ext + md->nwords, 0, md->nvar * sizeof(int64));
		for (int k = 0; k < md->nvar; k++)
		{
			const char *detail = NULL;

			if (!sf_magg_var_load(md, row->agg.ext, k, row->var_words[k],
								  row->var_n[k], &detail))
				ck_error(CK_STATE,
						 "The row %s has an invalid variable-size state %d: %s.",
						 ck_row_desc(row), k + 1, detail);
		}
	}
}

/*
 * Version 2's own checks, once the definition is known: a version 2
 * document is a measures pipeline's; every identity has one value per
 * measure and an arrival in 1 .. arrivals, no two the same; every row
 * a state of the definition's size.  Whether the states are those of the
 * events is checked on the built pipeline (ck_check_built_aggregates).
 */
void
ck_check_measures(CkDoc *doc, int version)
{
	const SfMeasuresDef *md = doc->def.measures;
	int64	   *arr;
	int64		n = 0;

	if (version == 1)
		return;
	if (md == NULL)
		ck_error(CK_DEFINITION, "A version %d checkpoint needs measures.",
				 version);
	/* version 3 exactly when an aggregate has a variable-size state */
	if (md->nvar > 0 && version < 3)
		ck_error(CK_DEFINITION,
				 "The aggregates have variable-size states, which a version %d checkpoint cannot hold.",
				 version);
	if (md->nvar == 0 && version >= 3)
		ck_error(CK_DEFINITION,
				 "A version %d checkpoint needs an aggregate with a variable-size state.",
				 version);
	if (doc->arrivals < 0)
		ck_error(CK_STATE, "The arrivals counter " INT64_FORMAT " is negative.",
				 doc->arrivals);
	arr = palloc(Max(doc->nids, 1) * sizeof(int64));
	for (int64 k = 0; k < doc->nids; k++)
	{
		const CkIdentity *id = &doc->ids[k];

		if (id->nmeasures != md->nmeasures)
			ck_error(CK_STATE,
					 "The identity \"%s\" has %d measures, the definition %d.",
					 sf_msg_str(id->event_id.data, id->event_id.len),
					 id->nmeasures, md->nmeasures);
		if ((id->nulls & ~(uint64) md->nullable) != 0)
			ck_error(CK_STATE,
					 "The identity \"%s\" has a null measure the definition does not declare nullable.",
					 sf_msg_str(id->event_id.data, id->event_id.len));
		if (id->arrival < 1 || id->arrival > doc->arrivals)
			ck_error(CK_STATE,
					 "The identity \"%s\" has arrival " INT64_FORMAT ", outside 1 .. " INT64_FORMAT ".",
					 sf_msg_str(id->event_id.data, id->event_id.len),
					 id->arrival, doc->arrivals);
		arr[n++] = id->arrival;
	}
	qsort(arr, n, sizeof(int64), int64_cmp);
	for (int64 k = 1; k < n; k++)
		if (arr[k] == arr[k - 1])
			ck_error(CK_STATE, "Two identities have arrival " INT64_FORMAT ".",
					 arr[k]);
	pfree(arr);
	check_rows(md, doc->rows, doc->nrows);
	check_rows(md, doc->visible, doc->nvisible);
}

/* Phase 4: an identity's measures and arrival into the built one */
void
ck_build_identity(SfPipeline *p, const CkIdentity *id, SfIdentity *built)
{
	int64	   *m = sf_id_measures(p, built);

	m[0] = id->arrival;
	memcpy(m + 1, id->measures, id->nmeasures * sizeof(int64));
	if (p->def.measures->nullable != 0)
		m[1 + id->nmeasures] = (int64) id->nulls;
}

/*
 * After phase 4: every live bucket's state must be the one its remembered
 * events give (sf_magg_check).
 */
void
ck_check_built_aggregates(SfPipeline *p)
{
	SfAddress	bad;

	if (p->def.measures == NULL)
		return;
	if (!sf_magg_check(p, &bad))
		ck_error(CK_STATE,
				 "The aggregate state of the live bucket of window \"%s\", key \"%s\", [" INT64_FORMAT ", " INT64_FORMAT ") is not the one its events give.",
				 p->def.windows[bad.window].name,
				 sf_msg_str(bad.key->data, bad.key->len), bad.start, bad.end);
}
