/*
 * json.c: the values of a few keys of a JSON message, read in one pass
 * without building a jsonb (issue 43, item 3).
 *
 * The worker's mappings (cmap.c, aggmap.c) read a handful of members of
 * each message.  jsonb_in builds the whole document (a tree of JsonbValues,
 * then the binary form) and numeric_out writes each number again; this scan
 * validates the text and keeps a pointer to each wanted value instead.
 *
 * It reads the common case only and says so: sfk_json_scan returns false
 * for anything it does not read exactly as jsonb_in and the ->> operator
 * would (a \u escape, a number with an exponent or a negative zero, a
 * duplicate key on a wanted path, an array on a wanted path, a wanted
 * object or array, nesting deeper than SFK_JSON_DEPTH, any syntax error, a
 * byte sequence that is not UTF-8).  The caller then maps the message the
 * slow way, which gives jsonb's value or its error (with its SQLSTATE and
 * message) for that message: the fast path never decides an error.
 */
#include "postgres.h"

#include "mb/pg_wchar.h"
#include "port/pg_bitutils.h"
#include "utils/memutils.h"

#include "kafka.h"

#define SFK_JSON_DEPTH 32

/*
 * The scan keeps its position in a local pointer that each function takes
 * and returns (NULL: the slow path must read the message), so that the
 * compiler holds it in a register; the rest of its state is here.
 */
typedef struct JScan
{
	const char *end;
	SfkJsonKeys *keys;
	SfkJsonValue *out;
	int		   *hits;
	char	   *buf;			/* decoded strings */
	int			buflen;
} JScan;

/*
 * The bytes that end a string's run of plain bytes: the quote, the
 * backslash, the control characters (an error) and the bytes of non-ASCII
 * characters (verified as UTF-8, string by string: outside a string such a
 * byte is a syntax error anyway).
 */
static bool special_ready = false;
static bool special[256];

static void
init_special(void)
{
	int			c;

	for (c = 0; c < 256; c++)
		special[c] = c < 0x20 || c >= 0x80 || c == '"' || c == '\\';
	special_ready = true;
}

static inline const char *
skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* after a number or a literal: a delimiter, else the slow path decides */
static inline bool
delimited(const char *p, const char *end)
{
	if (p >= end)
		return true;
	switch (*p)
	{
		case ' ':
		case '\t':
		case '\n':
		case '\r':
		case ',':
		case ']':
		case '}':
		case ':':
			return true;
	}
	return false;
}

/* whether the n bytes at a are those at b (keys are short: no call) */
static inline bool
same_bytes(const char *a, const char *b, int n)
{
	while (n-- > 0)
		if (*a++ != *b++)
			return false;
	return true;
}

/*
 * A string at p (the opening quote): its bytes decoded into s->buf when it
 * has escapes, else a pointer into the text; its non-ASCII bytes must be
 * UTF-8.  Returns the position after the closing quote.
 */
static const char *
scan_string(JScan *s, const char *p, const char **str, int *len)
{
	const char *end = s->end;
	const char *start;
	bool		high = false;
	char	   *d;

	p++;
	start = p;
	for (;;)
	{
		while (p < end && !special[(unsigned char) *p])
			p++;
		if (p >= end)
			return NULL;
		if ((unsigned char) *p < 0x80)
			break;
		high = true;
		p++;
	}
	if (*p == '"')
	{
		if (high && pg_encoding_verifymbstr(PG_UTF8, start, p - start) != p - start)
			return NULL;
		*str = start;
		*len = p - start;
		return p + 1;
	}
	if (*p != '\\')
		return NULL;			/* a control character */
	/* escapes: decode into the buffer (never longer than the text) */
	d = s->buf + s->buflen;
	memcpy(d, start, p - start);
	*str = d;
	d += p - start;
	while (p < end && *p != '"')
	{
		char		c = *p;

		if ((unsigned char) c < 0x20)
			return NULL;
		if (c == '\\')
		{
			if (++p >= end)
				return NULL;
			switch (*p)
			{
				case '"':
				case '\\':
				case '/':
					c = *p;
					break;
				case 'b':
					c = '\b';
					break;
				case 'f':
					c = '\f';
					break;
				case 'n':
					c = '\n';
					break;
				case 'r':
					c = '\r';
					break;
				case 't':
					c = '\t';
					break;
				default:
					return NULL;	/* \u and anything else: the slow path */
			}
		}
		*d++ = c;
		p++;
	}
	if (p >= end)
		return NULL;
	/* the escapes are ASCII: the raw text is UTF-8 if the string is */
	if (pg_encoding_verifymbstr(PG_UTF8, start, p - start) != p - start)
		return NULL;
	*len = d - *str;
	s->buflen += *len;
	return p + 1;
}

/* A number as JSON writes it; NULL for an exponent or a negative zero. */
static const char *
scan_number(const char *p, const char *end)
{
	const char *start = p;
	bool		zero = true;

	if (*p == '-')
		p++;
	if (p >= end || *p < '0' || *p > '9')
		return NULL;
	if (*p == '0')
	{
		p++;
		if (p < end && *p >= '0' && *p <= '9')
			return NULL;
	}
	else
		while (p < end && *p >= '0' && *p <= '9')
		{
			zero = false;
			p++;
		}
	if (p < end && *p == '.')
	{
		p++;
		if (p >= end || *p < '0' || *p > '9')
			return NULL;
		while (p < end && *p >= '0' && *p <= '9')
		{
			if (*p != '0')
				zero = false;
			p++;
		}
	}
	if (p < end && (*p == 'e' || *p == 'E'))
		return NULL;
	if (zero && *start == '-')
		return NULL;
	return delimited(p, end) ? p : NULL;
}

static const char *scan_value(JScan *s, const char *p, int depth, uint32 mask,
							  int found);

/*
 * An object at p; mask: the keys whose path leads here (their first depth
 * components matched).
 */
static const char *
scan_object(JScan *s, const char *p, int depth, uint32 mask)
{
	const char *end = s->end;

	p = skip_ws(p + 1, end);
	if (p < end && *p == '}')
		return p + 1;
	for (;;)
	{
		const char *k;
		int			klen;
		uint32		sub = 0;
		int			found = -1;
		uint32		m;

		if (p >= end || *p != '"' || (p = scan_string(s, p, &k, &klen)) == NULL)
			return NULL;
		p = skip_ws(p, end);
		if (p >= end || *p != ':')
			return NULL;
		p = skip_ws(p + 1, end);
		/* a member's first byte selects the keys it may be a component of */
		m = mask;
		if (depth < SFK_JSON_FIRST_DEPTH)
			m &= s->keys->first[depth][klen > 0 ? (unsigned char) k[0] : 0];
		for (; m != 0; m &= m - 1)
		{
			int			i = pg_rightmost_one_pos32(m);
			SfkJsonKey *key = &s->keys->k[i];

			if (key->klen[depth] != klen ||
				!same_bytes(key->path[depth], k, klen))
				continue;
			/* a duplicate on a wanted path: jsonb keeps the last, whole */
			if (++s->hits[i] > key->npath)
				return NULL;
			if (key->npath == depth + 1)
			{
				if (found >= 0)
				{
					/* two keys of the same path: the first reads, the other copies */
					key->same = found;
					continue;
				}
				found = i;
			}
			else
				sub |= 1u << i;
		}
		if ((p = scan_value(s, p, depth + 1, sub, found)) == NULL)
			return NULL;
		p = skip_ws(p, end);
		if (p >= end)
			return NULL;
		if (*p == '}')
			return p + 1;
		if (*p != ',')
			return NULL;
		p = skip_ws(p + 1, end);
	}
}

/*
 * A value at p.  mask: keys whose path goes on inside it (it must then be
 * an object); found: the key whose value it is, or -1.
 */
static const char *
scan_value(JScan *s, const char *p, int depth, uint32 mask, int found)
{
	const char *end = s->end;
	SfkJsonValue *v = found >= 0 ? &s->out[found] : NULL;

	if (depth > SFK_JSON_DEPTH || p >= end)
		return NULL;
	switch (*p)
	{
		case '{':
			if (v != NULL)
				return NULL;	/* a wanted object: the slow path writes it */
			return scan_object(s, p, depth, mask);
		case '[':
			if (v != NULL || mask != 0)
				return NULL;
			p = skip_ws(p + 1, end);
			if (p < end && *p == ']')
				return p + 1;
			for (;;)
			{
				if ((p = scan_value(s, p, depth + 1, 0, -1)) == NULL)
					return NULL;
				p = skip_ws(p, end);
				if (p >= end)
					return NULL;
				if (*p == ']')
					return p + 1;
				if (*p != ',')
					return NULL;
				p = skip_ws(p + 1, end);
			}
		case '"':
			{
				const char *str;
				int			len;

				if (mask != 0 || (p = scan_string(s, p, &str, &len)) == NULL)
					return NULL;
				if (v != NULL)
				{
					v->kind = SFK_JSON_STRING;
					v->s = str;
					v->len = len;
				}
				return p;
			}
		case 't':
		case 'f':
		case 'n':
			{
				const char *lit = *p == 't' ? "true" : *p == 'f' ? "false" : "null";
				int			len = *p == 'f' ? 5 : 4;

				if (mask != 0 || end - p < len || memcmp(p, lit, len) != 0)
					return NULL;
				p += len;
				if (!delimited(p, end))
					return NULL;
				if (v != NULL)
				{
					v->kind = lit[0] == 'n' ? SFK_JSON_NULL : SFK_JSON_BOOL;
					v->s = lit;
					v->len = len;
				}
				return p;
			}
		default:
			{
				const char *start = p;

				if (mask != 0 || (p = scan_number(p, end)) == NULL)
					return NULL;
				if (v != NULL)
				{
					v->kind = SFK_JSON_NUMBER;
					v->s = start;
					v->len = p - start;
				}
				return p;
			}
	}
}

/*
 * Reads the values of keys from the JSON text (len bytes; buf has len
 * bytes for decoded strings).  out[i] is key i's value, SFK_JSON_MISSING
 * when the message has no such member.  False: the slow path must read
 * this message.
 */
bool
sfk_json_scan(const char *text, int len, SfkJsonKeys *keys, SfkJsonValue *out, char *buf)
{
	JScan		s;
	int			hits[SFK_JSON_MAX_KEYS];
	const char *p;
	const char *end = text + len;
	int			i;

	Assert(keys->n <= SFK_JSON_MAX_KEYS);
	if (!special_ready)
		init_special();
	s.end = end;
	s.keys = keys;
	s.out = out;
	s.hits = hits;
	s.buf = buf;
	s.buflen = 0;
	for (i = 0; i < keys->n; i++)
	{
		out[i].kind = SFK_JSON_MISSING;
		hits[i] = 0;
		keys->k[i].same = -1;
	}
	p = skip_ws(text, end);
	/* the root must be an object that the keys lead into */
	if (p >= end || *p != '{')
		return false;
	p = scan_value(&s, p, 0, keys->n == 0 ? 0 : (uint32) ((1ull << keys->n) - 1), -1);
	if (p == NULL)
		return false;
	if (skip_ws(p, end) != end)
		return false;
	for (i = 0; i < keys->n; i++)
		if (keys->k[i].same >= 0)
			out[i] = out[keys->k[i].same];
	return true;
}

/*
 * Sets key i of keys to the path of n components (borrowed): false when it
 * takes more than the scan reads.
 */
bool
sfk_json_key(SfkJsonKeys *keys, char **path, int n)
{
	SfkJsonKey *k;
	int			j;

	if (keys->n >= SFK_JSON_MAX_KEYS || n < 1 || n > SFK_JSON_DEPTH)
		return false;
	k = &keys->k[keys->n++];
	k->npath = n;
	k->path = path;
	k->klen = MemoryContextAlloc(TopMemoryContext, sizeof(int) * n);
	for (j = 0; j < n; j++)
	{
		k->klen[j] = strlen(path[j]);
		if (j < SFK_JSON_FIRST_DEPTH)
			keys->first[j][k->klen[j] > 0 ? (unsigned char) path[j][0] : 0] |=
				1u << (keys->n - 1);
	}
	k->same = -1;
	return true;
}

/*
 * A plain integer (optional blanks, an optional minus, digits), as int8in
 * reads it: false for anything else or out of range (int8in then decides).
 */
bool
sfk_parse_int8(const char *s, int len, int64 *out)
{
	const char *p = s;
	const char *end = s + len;
	bool		neg = false;
	uint64		v = 0;
	int			digits = 0;

	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	if (p < end && *p == '-')
	{
		neg = true;
		p++;
	}
	while (p < end && *p >= '0' && *p <= '9')
	{
		if (++digits > 18)
			return false;
		v = v * 10 + (*p - '0');
		p++;
	}
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	if (digits == 0 || p != end)
		return false;
	*out = neg ? -(int64) v : (int64) v;
	return true;
}
