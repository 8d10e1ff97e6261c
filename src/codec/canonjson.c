/*-------------------------------------------------------------------------
 *
 * canonjson.c
 *	  The canonical JSON of checkpoints: a writer that spells every value
 *	  one way, and a strict reader that accepts nothing else.
 *
 * Canonical spelling (docs/checkpoint-format.md, "Canonical JSON"): no
 * whitespace; object keys in byte order, each once; integers as
 * -?(0|[1-9][0-9]*), never "-0", no fraction or exponent; strings are raw
 * bytes except '"' and '\\' (escaped as \" and \\\\) and bytes 0x01-0x1f
 * (escaped as \u00xx, lower-case hex); NUL and invalid text in the
 * database encoding are rejected.  The reader is a pull parser: the caller
 * asks for exactly the key, type or bracket its schema expects next, so
 * there is no recursion and no generic tree.
 *
 * Every reader error is SF003 "invalid checkpoint: malformed document" with
 * the byte position in the detail.  Nothing here keeps state between calls;
 * strings are palloc'd in CurrentMemoryContext.
 *
 * Callers: the checkpoint codec (codec_write.c and codec.c write,
 * codec_parse.c and codec.c read; codec_int.h declares it), and
 * test/fuzz/fuzz_checkpoint.c, which reads definitions with the reader.
 * sf_int128_out (codec.h) also spells sums in codec_validate.c's error
 * details and in persist/datum.c's numeric values.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/codec/canonjson.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "mb/pg_wchar.h"
#include "miscadmin.h"

#include "codec/codec.h"
#include "codec/codec_int.h"
#include "engine/engine.h"

#define cj_error(...) \
	ereport(ERROR, \
			errcode(ERRCODE_SF_INVALID_CHECKPOINT), \
			errmsg("invalid checkpoint: malformed document"), \
			errdetail(__VA_ARGS__))

/* ----------------------------------------------------------------
 * Writer
 * ----------------------------------------------------------------
 */

/*
 * Strings are written byte for byte, escaping only '"', '\' and the control
 * bytes below 0x20 (as \u00xx, lower-case hex).  Keys and event ids are
 * database text, so the bytes are valid in the database encoding.
 */
void
sf_json_write_string(StringInfo buf, const char *s, int len)
{
	int			run = 0;

	appendStringInfoCharMacro(buf, '"');
	for (int i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) s[i];

		if (c != '"' && c != '\\' && c >= 0x20)
			continue;
		appendBinaryStringInfo(buf, s + run, i - run);
		run = i + 1;
		if (c == '"' || c == '\\')
		{
			appendStringInfoCharMacro(buf, '\\');
			appendStringInfoCharMacro(buf, (char) c);
		}
		else
			appendStringInfo(buf, "\\u%04x", c);
	}
	appendBinaryStringInfo(buf, s + run, len - run);
	appendStringInfoCharMacro(buf, '"');
}

void
sf_json_write_key(StringInfo buf, const char *key, bool first)
{
	if (!first)
		appendStringInfoCharMacro(buf, ',');
	appendStringInfoCharMacro(buf, '"');
	appendStringInfoString(buf, key);
	appendBinaryStringInfo(buf, "\":", 2);
}

void
sf_json_write_int64(StringInfo buf, int64 v)
{
	appendStringInfo(buf, INT64_FORMAT, v);
}

void
sf_json_write_opt_int64(StringInfo buf, bool has, int64 v)
{
	if (has)
		sf_json_write_int64(buf, v);
	else
		appendBinaryStringInfo(buf, "null", 4);
}

void
sf_json_write_bool(StringInfo buf, bool v)
{
	if (v)
		appendBinaryStringInfo(buf, "true", 4);
	else
		appendBinaryStringInfo(buf, "false", 5);
}


void
sf_json_write_int128(StringInfo buf, int128 v)
{
	char		digits[48];
	char	   *p = digits + sizeof(digits) - 1;
	uint128		u = (v < 0) ? (uint128) 0 - (uint128) v : (uint128) v;

	*p = '\0';
	do
	{
		*--p = '0' + (int) (u % 10);
		u /= 10;
	} while (u != 0);
	if (v < 0)
		*--p = '-';
	appendStringInfoString(buf, p);
}

/* The decimal spelling of an int128, palloc'd (for error details) */
char *
sf_int128_out(int128 v)
{
	char		buf[48];
	char	   *p = buf + sizeof(buf) - 1;
	uint128		u;
	bool		neg = v < 0;

	*p = '\0';
	u = neg ? (uint128) 0 - (uint128) v : (uint128) v;
	do
	{
		*--p = '0' + (int) (u % 10);
		u /= 10;
	} while (u != 0);
	if (neg)
		*--p = '-';
	return pstrdup(p);
}

/* ----------------------------------------------------------------
 * Reader
 * ----------------------------------------------------------------
 */

/* Raise SF003: expected is not what the document has at r's position */
static pg_attribute_noreturn() void
json_fail(SfJsonReader *r, const char *expected)
{
	if (r->pos >= r->len)
		cj_error(
				 "Expected %s at byte %zu of the document, found its end.",
				 expected, r->pos);
	else
	{
		unsigned char c = (unsigned char) r->s[r->pos];

		if (c >= 0x20 && c < 0x7f)
			cj_error(
					 "Expected %s at byte %zu of the document, found \"%c\".",
					 expected, r->pos, c);
		else
			cj_error(
					 "Expected %s at byte %zu of the document, found byte 0x%02x.",
					 expected, r->pos, c);
	}
}

void
sf_json_char(SfJsonReader *r, char c)
{
	if (!sf_json_peek(r, c))
	{
		char		what[8];

		snprintf(what, sizeof(what), "\"%c\"", c);
		json_fail(r, what);
	}
	r->pos++;
}

bool
sf_json_literal(SfJsonReader *r, const char *lit)
{
	Size		n = strlen(lit);

	if (r->len - r->pos >= n && memcmp(r->s + r->pos, lit, n) == 0)
	{
		r->pos += n;
		return true;
	}
	return false;
}

/* The next member's key, which must be exactly key (schema order) */
void
sf_json_key(SfJsonReader *r, const char *key, bool first)
{
	Size		n = strlen(key);

	if (!first)
		sf_json_char(r, ',');
	if (r->len - r->pos < n + 3 || r->s[r->pos] != '"' ||
		memcmp(r->s + r->pos + 1, key, n) != 0 ||
		r->s[r->pos + 1 + n] != '"' || r->s[r->pos + 2 + n] != ':')
		cj_error( "Expected key \"%s\" at byte %zu of the document.",
				 key, r->pos);
	r->pos += n + 3;
}

/*
 * Array iteration: call sf_json_array_begin, then sf_json_array_next before each
 * element; it returns false at the closing bracket.
 */
bool
sf_json_array_begin(SfJsonReader *r, const char *field)
{
	char		what[80];

	if (!sf_json_peek(r, '['))
	{
		snprintf(what, sizeof(what), "an array for \"%s\"", field);
		json_fail(r, what);
	}
	r->pos++;
	if (sf_json_peek(r, ']'))
	{
		r->pos++;
		return false;
	}
	return true;
}

bool
sf_json_array_next(SfJsonReader *r)
{
	CHECK_FOR_INTERRUPTS();
	if (sf_json_peek(r, ','))
	{
		r->pos++;
		return true;
	}
	if (sf_json_peek(r, ']'))
	{
		r->pos++;
		return false;
	}
	json_fail(r, "\",\" or \"]\"");
}

/* Digits of a canonical integer: -?(0|[1-9][0-9]*), no fraction/exponent */
static uint128
json_digits(SfJsonReader *r, const char *field, bool *neg, uint128 limit_pos,
		  uint128 limit_neg)
{
	uint128		acc = 0;
	Size		start = r->pos;
	char		what[96];

	*neg = false;
	if (sf_json_peek(r, '-'))
	{
		*neg = true;
		r->pos++;
	}
	if (r->pos >= r->len || !isdigit((unsigned char) r->s[r->pos]))
	{
		r->pos = start;
		snprintf(what, sizeof(what), "an integer for \"%s\"", field);
		json_fail(r, what);
	}
	if (r->s[r->pos] == '0')
	{
		r->pos++;
		if (*neg)
			cj_error(
					 "The integer for \"%s\" at byte %zu of the document is \"-0\".",
					 field, start);
		if (r->pos < r->len && isdigit((unsigned char) r->s[r->pos]))
			cj_error(
					 "The integer for \"%s\" at byte %zu of the document has a leading zero.",
					 field, start);
	}
	else
	{
		uint128		limit = *neg ? limit_neg : limit_pos;

		while (r->pos < r->len && isdigit((unsigned char) r->s[r->pos]))
		{
			int			d = r->s[r->pos] - '0';

			if (acc > (limit - d) / 10)
				cj_error(
						 "The integer for \"%s\" at byte %zu of the document is out of range.",
						 field, start);
			acc = acc * 10 + d;
			r->pos++;
		}
	}
	if (r->pos < r->len &&
		(r->s[r->pos] == '.' || r->s[r->pos] == 'e' || r->s[r->pos] == 'E'))
		cj_error(
				 "The number for \"%s\" at byte %zu of the document is not an integer.",
				 field, start);
	return acc;
}

int64
sf_json_int64(SfJsonReader *r, const char *field)
{
	bool		neg;
	uint128		u = json_digits(r, field, &neg, (uint128) PG_INT64_MAX,
							  (uint128) PG_INT64_MAX + 1);

	if (neg)
		return (int64) (0 - (uint64) u);
	return (int64) u;
}

int128
sf_json_int128(SfJsonReader *r, const char *field)
{
	uint128		max128 = ((uint128) 1 << 127) - 1;
	bool		neg;
	uint128		u = json_digits(r, field, &neg, max128, max128 + 1);

	if (neg)
		return (int128) ((uint128) 0 - u);
	return (int128) u;
}

int64
sf_json_opt_int64(SfJsonReader *r, const char *field, bool *has)
{
	if (sf_json_literal(r, "null"))
	{
		*has = false;
		return 0;
	}
	*has = true;
	return sf_json_int64(r, field);
}

bool
sf_json_bool(SfJsonReader *r, const char *field)
{
	char		what[80];

	if (sf_json_literal(r, "true"))
		return true;
	if (sf_json_literal(r, "false"))
		return false;
	snprintf(what, sizeof(what), "true or false for \"%s\"", field);
	json_fail(r, what);
}

static inline int
json_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;					/* upper case is not canonical */
}

/*
 * A string in its one canonical spelling: raw bytes except '"' and '\'
 * (escaped as \" and \\) and bytes 0x01..0x1f (escaped as \u00xx, lower
 * case).  NUL cannot occur in database text and is rejected, as is anything
 * not valid in the database encoding.
 */
void
sf_json_string(SfJsonReader *r, const char *field, SfJsonStr *out)
{
	Size		start;
	Size		i;
	Size		outlen = 0;
	char	   *dst;
	char		what[80];

	if (!sf_json_peek(r, '"'))
	{
		snprintf(what, sizeof(what), "a string for \"%s\"", field);
		json_fail(r, what);
	}
	start = ++r->pos;

	/* pass 1: validate and measure */
	for (i = start;; i++)
	{
		unsigned char c;

		if (i >= r->len)
			cj_error(
					 "The string for \"%s\" at byte %zu of the document is not terminated.",
					 field, start - 1);
		c = (unsigned char) r->s[i];
		if (c == '"')
			break;
		if (c < 0x20)
			cj_error(
					 "The string for \"%s\" has an unescaped control byte 0x%02x at byte %zu of the document.",
					 field, c, i);
		if (c == '\\')
		{
			if (i + 1 < r->len && (r->s[i + 1] == '"' || r->s[i + 1] == '\\'))
				i++;
			else if (i + 5 < r->len && r->s[i + 1] == 'u' &&
					 r->s[i + 2] == '0' && r->s[i + 3] == '0' &&
					 json_hexval(r->s[i + 4]) >= 0 && json_hexval(r->s[i + 4]) <= 1 &&
					 json_hexval(r->s[i + 5]) >= 0)
			{
				if (r->s[i + 4] == '0' && r->s[i + 5] == '0')
					cj_error(
							 "The string for \"%s\" contains a NUL byte at byte %zu of the document.",
							 field, i);
				i += 5;
			}
			else
				cj_error(
						 "The string for \"%s\" has a non-canonical escape at byte %zu of the document.",
						 field, i);
		}
		outlen++;
	}
	if (outlen > (Size) PG_INT32_MAX - 1)
		cj_error( "The string for \"%s\" is too long.", field);

	/* pass 2: copy */
	dst = palloc(outlen + 1);
	out->data = dst;
	out->len = (int) outlen;
	for (i = start; r->s[i] != '"'; i++)
	{
		if (r->s[i] != '\\')
			*dst++ = r->s[i];
		else if (r->s[i + 1] != 'u')
			*dst++ = r->s[++i];
		else
		{
			*dst++ = (char) (json_hexval(r->s[i + 4]) * 16 + json_hexval(r->s[i + 5]));
			i += 5;
		}
	}
	*dst = '\0';
	r->pos = i + 1;

	if (!pg_verifymbstr(out->data, out->len, true))
		cj_error(
				 "The string for \"%s\" ending at byte %zu of the document is not valid in the database encoding.",
				 field, r->pos);
}

