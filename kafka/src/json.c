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
#include "utils/memutils.h"

#include "kafka.h"

#define SFK_JSON_DEPTH 32

typedef struct JScan
{
	const char *p;
	const char *end;
	SfkJsonKeys *keys;
	SfkJsonValue *out;
	int		   *hits;
	char	   *buf;			/* decoded strings */
	int			buflen;
} JScan;

static inline void
skip_ws(JScan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

/* after a number or a literal: a delimiter, else the slow path decides */
static inline bool
delimited(JScan *s)
{
	if (s->p >= s->end)
		return true;
	switch (*s->p)
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

/*
 * A string at s->p (the opening quote): its bytes decoded into s->buf when
 * it has escapes, else a pointer into the text.
 */
static bool
scan_string(JScan *s, const char **str, int *len)
{
	const char *start;
	char	   *d;

	s->p++;
	start = s->p;
	while (s->p < s->end && *s->p != '"' && *s->p != '\\')
	{
		if ((unsigned char) *s->p < 0x20)
			return false;
		s->p++;
	}
	if (s->p >= s->end)
		return false;
	if (*s->p == '"')
	{
		*str = start;
		*len = s->p - start;
		s->p++;
		return true;
	}
	/* escapes: decode into the buffer (never longer than the text) */
	d = s->buf + s->buflen;
	memcpy(d, start, s->p - start);
	*str = d;
	d += s->p - start;
	while (s->p < s->end && *s->p != '"')
	{
		char		c = *s->p;

		if ((unsigned char) c < 0x20)
			return false;
		if (c == '\\')
		{
			if (++s->p >= s->end)
				return false;
			switch (*s->p)
			{
				case '"':
				case '\\':
				case '/':
					c = *s->p;
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
					return false;	/* \u and anything else: the slow path */
			}
		}
		*d++ = c;
		s->p++;
	}
	if (s->p >= s->end)
		return false;
	s->p++;
	*len = d - *str;
	s->buflen += *len;
	return true;
}

/* A number as JSON writes it; false for an exponent or a negative zero. */
static bool
scan_number(JScan *s)
{
	const char *start = s->p;
	bool		zero = true;

	if (*s->p == '-')
		s->p++;
	if (s->p >= s->end || *s->p < '0' || *s->p > '9')
		return false;
	if (*s->p == '0')
	{
		s->p++;
		if (s->p < s->end && *s->p >= '0' && *s->p <= '9')
			return false;
	}
	else
		while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
		{
			zero = false;
			s->p++;
		}
	if (s->p < s->end && *s->p == '.')
	{
		s->p++;
		if (s->p >= s->end || *s->p < '0' || *s->p > '9')
			return false;
		while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
		{
			if (*s->p != '0')
				zero = false;
			s->p++;
		}
	}
	if (s->p < s->end && (*s->p == 'e' || *s->p == 'E'))
		return false;
	if (zero && *start == '-')
		return false;
	return delimited(s);
}

static bool scan_value(JScan *s, int depth, uint32 mask, int *found);

/*
 * An object at s->p; mask: the keys whose path leads here (their first
 * depth components matched).
 */
static bool
scan_object(JScan *s, int depth, uint32 mask)
{
	s->p++;
	skip_ws(s);
	if (s->p < s->end && *s->p == '}')
	{
		s->p++;
		return true;
	}
	for (;;)
	{
		const char *k;
		int			klen;
		uint32		sub = 0;
		int			found = -1;
		int			i;

		if (s->p >= s->end || *s->p != '"' || !scan_string(s, &k, &klen))
			return false;
		skip_ws(s);
		if (s->p >= s->end || *s->p != ':')
			return false;
		s->p++;
		skip_ws(s);
		for (i = 0; mask != 0 && i < s->keys->n; i++)
		{
			SfkJsonKey *key = &s->keys->k[i];

			if ((mask & (1u << i)) == 0 || key->klen[depth] != klen ||
				memcmp(key->path[depth], k, klen) != 0)
				continue;
			/* a duplicate on a wanted path: jsonb keeps the last, whole */
			if (++s->hits[i] > key->npath)
				return false;
			if (key->npath == depth + 1)
			{
				if (found >= 0)
				{
					/* two keys of the same path: the first reads, the other copies */
					s->keys->k[i].same = found;
					continue;
				}
				found = i;
			}
			else
				sub |= 1u << i;
		}
		if (!scan_value(s, depth + 1, sub, &found))
			return false;
		skip_ws(s);
		if (s->p >= s->end)
			return false;
		if (*s->p == '}')
		{
			s->p++;
			return true;
		}
		if (*s->p != ',')
			return false;
		s->p++;
		skip_ws(s);
	}
}

/*
 * A value at s->p.  mask: keys whose path goes on inside it (it must then
 * be an object); *found: the key whose value it is, or -1.
 */
static bool
scan_value(JScan *s, int depth, uint32 mask, int *found)
{
	SfkJsonValue *v = *found >= 0 ? &s->out[*found] : NULL;

	if (depth > SFK_JSON_DEPTH || s->p >= s->end)
		return false;
	switch (*s->p)
	{
		case '{':
			if (v != NULL)
				return false;	/* a wanted object: the slow path writes it */
			return scan_object(s, depth, mask);
		case '[':
			if (v != NULL || mask != 0)
				return false;
			s->p++;
			skip_ws(s);
			if (s->p < s->end && *s->p == ']')
			{
				s->p++;
				return true;
			}
			for (;;)
			{
				int			none = -1;

				if (!scan_value(s, depth + 1, 0, &none))
					return false;
				skip_ws(s);
				if (s->p >= s->end)
					return false;
				if (*s->p == ']')
				{
					s->p++;
					return true;
				}
				if (*s->p != ',')
					return false;
				s->p++;
				skip_ws(s);
			}
		case '"':
			{
				const char *str;
				int			len;

				if (mask != 0 || !scan_string(s, &str, &len))
					return false;
				if (v != NULL)
				{
					v->kind = SFK_JSON_STRING;
					v->s = str;
					v->len = len;
				}
				return true;
			}
		case 't':
		case 'f':
		case 'n':
			{
				const char *lit = *s->p == 't' ? "true" : *s->p == 'f' ? "false" : "null";
				int			len = strlen(lit);

				if (mask != 0 || s->end - s->p < len || memcmp(s->p, lit, len) != 0)
					return false;
				s->p += len;
				if (!delimited(s))
					return false;
				if (v != NULL)
				{
					v->kind = lit[0] == 'n' ? SFK_JSON_NULL : SFK_JSON_BOOL;
					v->s = lit;
					v->len = len;
				}
				return true;
			}
		default:
			{
				const char *start = s->p;

				if (mask != 0 || !scan_number(s))
					return false;
				if (v != NULL)
				{
					v->kind = SFK_JSON_NUMBER;
					v->s = start;
					v->len = s->p - start;
				}
				return true;
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
	int			found = -1;
	int			i;

	Assert(keys->n <= SFK_JSON_MAX_KEYS);
	if (pg_encoding_verifymbstr(PG_UTF8, text, len) != len)
		return false;
	s.p = text;
	s.end = text + len;
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
	skip_ws(&s);
	/* the root must be an object that the keys lead into */
	if (s.p >= s.end || *s.p != '{')
		return false;
	if (!scan_value(&s, 0, keys->n == 0 ? 0 : (uint32) ((1ull << keys->n) - 1), &found))
		return false;
	skip_ws(&s);
	if (s.p != s.end)
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
		k->klen[j] = strlen(path[j]);
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
