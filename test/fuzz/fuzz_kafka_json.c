/*-------------------------------------------------------------------------
 *
 * fuzz_kafka_json.c
 *	  libFuzzer target: a Kafka message's bytes -> the worker's JSON scan
 *	  (kafka/src/json.c, sfk_json_scan), differential against PostgreSQL's
 *	  own JSON parser (src/common/jsonapi.c, the parser of json and jsonb
 *	  input, linked from libpgcommon).
 *
 * The scan reads the values of a fixed set of key paths from a message in
 * one pass, or answers false, and the worker then reads the message through
 * jsonb (the slow path).  So for every input:
 *	1. the scan must not crash, read or write outside the message and its
 *	   buffer, or raise an error (AddressSanitizer, UBSan);
 *	2. when it answers true, the message must be what jsonb accepts (valid
 *	   UTF-8, no NUL byte, one JSON value that pg_parse_json takes), and
 *	   every key's value must be jsonb's: absent where the message has no
 *	   such member; for a member that appears twice, the last one (jsonb
 *	   keeps the last); null, a boolean, a number (the text as written,
 *	   which the scan only takes in numeric_out's spelling), or a string
 *	   with its escapes decoded; never an object or an array (the slow path
 *	   writes those).
 * The paths: a, b.c, b.d, x, a again (two keys of one path), n.m.o, the
 * empty name, ts, a non-ASCII name, q.r.  (A path that is another's
 * parent sends every message holding it to the slow path: not here.)
 * Seeds: test/fuzz/corpus/kafka_json/ (messages of the kinds test 148 sends).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  test/fuzz/fuzz_kafka_json.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/jsonapi.h"
#include "mb/pg_wchar.h"
#include "utils/memutils.h"

#include "kafka.h"
#include "shim.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NKEYS 10
#define MAX_DEPTH 64
#define KIND_OBJECT 100			/* the reference's: an object or an array */

static char *paths[NKEYS][3] = {
	{"a"}, {"b", "c"}, {"b", "d"}, {"x"}, {"a"}, {"n", "m", "o"}, {""},
	{"ts"}, {"\xc3\xa9"}, {"q", "r"}
};
static int	npaths[NKEYS] = {1, 2, 2, 1, 1, 3, 1, 1, 1, 2};
static SfkJsonKeys keys;

static void pg_attribute_noreturn()
fail(const char *what)
{
	fprintf(stderr, "fuzz_kafka_json: %s\n", what);
	abort();
}

/* ----------------------------------------------------------------
 * The reference: pg_parse_json's callbacks follow the path
 * ----------------------------------------------------------------
 */

typedef struct RefValue
{
	int			kind;			/* SfkJsonKind, or KIND_OBJECT */
	const char *s;
	int			len;
} RefValue;

typedef struct Ref
{
	const char *stack[MAX_DEPTH];	/* member names; NULL: an array element */
	int			depth;
	bool		deep;			/* deeper than MAX_DEPTH: no key matches */
	int			deep_depth;
	RefValue	v[NKEYS];
} Ref;

/* the keys whose path is the current one: set each to kind, s, len */
static void
ref_set(Ref *r, int kind, const char *s, int len)
{
	if (r->deep_depth > 0)
		return;
	for (int i = 0; i < NKEYS; i++)
	{
		bool		same = npaths[i] == r->depth;

		for (int j = 0; same && j < r->depth; j++)
			same = r->stack[j] != NULL && strcmp(r->stack[j], paths[i][j]) == 0;
		if (same)
		{
			r->v[i].kind = kind;
			r->v[i].s = s;
			r->v[i].len = len;
		}
	}
}

static void
ref_push(Ref *r, const char *name)
{
	if (r->deep_depth > 0 || r->depth == MAX_DEPTH)
		r->deep_depth++;
	else
		r->stack[r->depth++] = name;
}

static void
ref_pop(Ref *r)
{
	if (r->deep_depth > 0)
		r->deep_depth--;
	else
		r->depth--;
}

static void
ref_field_start(void *state, char *fname, bool isnull)
{
	ref_push((Ref *) state, fname);
}

static void
ref_field_end(void *state, char *fname, bool isnull)
{
	ref_pop((Ref *) state);
}

static void
ref_element_start(void *state, bool isnull)
{
	ref_push((Ref *) state, NULL);
}

static void
ref_element_end(void *state, bool isnull)
{
	ref_pop((Ref *) state);
}

static void
ref_struct_start(void *state)
{
	ref_set((Ref *) state, KIND_OBJECT, NULL, 0);
}

static void
ref_scalar(void *state, char *token, JsonTokenType type)
{
	Ref		   *r = (Ref *) state;

	switch (type)
	{
		case JSON_TOKEN_STRING:
			ref_set(r, SFK_JSON_STRING, token, strlen(token));
			break;
		case JSON_TOKEN_NUMBER:
			ref_set(r, SFK_JSON_NUMBER, token, strlen(token));
			break;
		case JSON_TOKEN_TRUE:
		case JSON_TOKEN_FALSE:
			ref_set(r, SFK_JSON_BOOL, token, strlen(token));
			break;
		case JSON_TOKEN_NULL:
			ref_set(r, SFK_JSON_NULL, NULL, 0);
			break;
		default:
			fail("pg_parse_json gave a scalar of another token type");
	}
}

/* true if jsonb takes the message: r then holds each key's value */
static bool
reference(const char *data, size_t size, Ref *r)
{
	JsonSemAction sem;
	JsonLexContext *lex;
	char	   *copy;

	memset(r, 0, sizeof(Ref));
	if (pg_encoding_verifymbstr(PG_UTF8, data, size) != (int) size)
		return false;			/* a NUL byte or bad UTF-8: refused as text */
	memset(&sem, 0, sizeof(sem));
	sem.semstate = r;
	sem.object_start = ref_struct_start;
	sem.array_start = ref_struct_start;
	sem.object_field_start = ref_field_start;
	sem.object_field_end = ref_field_end;
	sem.array_element_start = ref_element_start;
	sem.array_element_end = ref_element_end;
	sem.scalar = ref_scalar;
	copy = pnstrdup(data, size);
	lex = makeJsonLexContextCstringLen(copy, size, PG_UTF8, true);
	return pg_parse_json(lex, &sem) == JSON_SUCCESS;
}

/* ----------------------------------------------------------------
 * The target
 * ----------------------------------------------------------------
 */

static void
make_keys(void)
{
	TopMemoryContext = AllocSetContextCreate(NULL, "fuzz keys",
											 ALLOCSET_DEFAULT_SIZES);
	CurrentMemoryContext = TopMemoryContext;
	memset(&keys, 0, sizeof(keys));
	for (int i = 0; i < NKEYS; i++)
		if (!sfk_json_key(&keys, paths[i], npaths[i]))
			fail("a key was refused");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	MemoryContext top;
	sigjmp_buf	jb;
	SfkJsonValue out[NKEYS];
	char	   *text;
	char	   *buf;
	bool		fast = false;
	Ref			ref;

	if (TopMemoryContext == NULL)
		make_keys();
	top = AllocSetContextCreate(NULL, "fuzz", ALLOCSET_DEFAULT_SIZES);
	CurrentMemoryContext = top;
	/* exactly the message's bytes, so that a read past them is reported */
	text = malloc(Max(size, 1));
	buf = malloc(Max(size, 1));
	memcpy(text, data, size);
	if (sigsetjmp(jb, 0) == 0)
	{
		PG_exception_stack = &jb;
		fast = sfk_json_scan(text, (int) size, &keys, out, buf);
		PG_exception_stack = NULL;
	}
	else
		fail("the scan raised an error");

	if (fast)
	{
		if (!reference(text, size, &ref))
			fail("the scan took a message that jsonb refuses");
		for (int i = 0; i < NKEYS; i++)
		{
			const SfkJsonValue *o = &out[i];
			const RefValue *w = &ref.v[i];

			if (w->kind == KIND_OBJECT)
				fail(psprintf("key %d: the scan took an object or array value", i));
			if ((int) o->kind != w->kind)
				fail(psprintf("key %d: kind %d, jsonb's %d", i, (int) o->kind,
							  w->kind));
			if (o->kind == SFK_JSON_STRING || o->kind == SFK_JSON_NUMBER ||
				o->kind == SFK_JSON_BOOL)
			{
				if (o->len != w->len || memcmp(o->s, w->s, o->len) != 0)
					fail(psprintf("key %d: \"%.*s\", jsonb's \"%.*s\"", i,
								  o->len, o->s, w->len, w->s));
				if (!((o->s >= text && o->s + o->len <= text + size) ||
					  (o->s >= buf && o->s + o->len <= buf + size) ||
					  o->kind == SFK_JSON_BOOL))
					fail(psprintf("key %d: its value is outside the message and the buffer", i));
			}
		}
	}
	free(text);
	free(buf);
	CurrentMemoryContext = NULL;
	MemoryContextDelete(top);
	return 0;
}
