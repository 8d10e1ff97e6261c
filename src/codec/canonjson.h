/*-------------------------------------------------------------------------
 *
 * canonjson.h
 *	  The canonical JSON of checkpoints (canonjson.c): writer and strict
 *	  pull reader.  Used by the checkpoint codec (codec.c).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef CANONJSON_H
#define CANONJSON_H

#include "engine/engine.h"

/* A string read from a document: palloc'd, NUL-terminated, no NUL inside */
typedef struct SfJsonStr
{
	char	   *data;
	int			len;
} SfJsonStr;

/* The reader's position in a document of len bytes */
typedef struct SfJsonReader
{
	const char *s;
	Size		len;
	Size		pos;
} SfJsonReader;

/* Writer: appends one value (or "key": / ,"key":) in its canonical form */
extern void sf_json_write_string(StringInfo buf, const char *s, int len);
extern void sf_json_write_key(StringInfo buf, const char *key, bool first);
extern void sf_json_write_int64(StringInfo buf, int64 v);
extern void sf_json_write_int128(StringInfo buf, int128 v);
extern void sf_json_write_opt_int64(StringInfo buf, bool has, int64 v);
extern void sf_json_write_bool(StringInfo buf, bool v);
extern char *sf_int128_out(int128 v);

/*
 * Reader: each function consumes exactly the canonical spelling of what the
 * caller's schema expects next, or raises SF003.  field names the value in
 * error details.
 */
extern void sf_json_fail(SfJsonReader *r, const char *expected) pg_attribute_noreturn();
extern void sf_json_char(SfJsonReader *r, char c);
extern bool sf_json_literal(SfJsonReader *r, const char *lit);
extern void sf_json_key(SfJsonReader *r, const char *key, bool first);
extern bool sf_json_array_begin(SfJsonReader *r, const char *field);
extern bool sf_json_array_next(SfJsonReader *r);
extern int64 sf_json_int64(SfJsonReader *r, const char *field);
extern int128 sf_json_int128(SfJsonReader *r, const char *field);
extern int64 sf_json_opt_int64(SfJsonReader *r, const char *field, bool *has);
extern bool sf_json_bool(SfJsonReader *r, const char *field);
extern void sf_json_string(SfJsonReader *r, const char *field, SfJsonStr *out);

static inline bool
sf_json_peek(const SfJsonReader *r, char c)
{
	return r->pos < r->len && r->s[r->pos] == c;
}

#endif							/* CANONJSON_H */
