/*-------------------------------------------------------------------------
 *
 * keytext.h
 *	  A key's element written as array_out writes an element of a text[]:
 *	  the canonical key of a GROUP BY of several columns is the text of
 *	  ARRAY[(c1)::text, ...] (docs/sql-aggregates.md), which the attached
 *	  table's trigger (persist/attach_rows.c) and streamforge_kafka's
 *	  aggregate worker (kafka/src/aggrow.c) write from the elements
 *	  without building the array.  Both must write array_out's bytes.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/keytext.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SF_KEYTEXT_H
#define SF_KEYTEXT_H

#include "lib/stringinfo.h"

/*
 * The non-NULL element v (len bytes) appended to s as array_out writes it:
 * quoted (with " and \ escaped) when empty, "NULL" in any case, or holding
 * a brace, the delimiter, a quote, a backslash or white space.
 */
static inline void
sf_key_element_out(StringInfo s, const char *v, int len)
{
	bool		quote = len == 0 ||
		(len == 4 && pg_strncasecmp(v, "NULL", 4) == 0);

	for (int i = 0; i < len && !quote; i++)
	{
		char		ch = v[i];

		if (ch == '"' || ch == '\\' || ch == '{' || ch == '}' || ch == ',' ||
			ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' ||
			ch == '\v' || ch == '\f')
			quote = true;
	}
	if (!quote)
	{
		appendBinaryStringInfo(s, v, len);
		return;
	}
	appendStringInfoChar(s, '"');
	for (int i = 0; i < len; i++)
	{
		if (v[i] == '"' || v[i] == '\\')
			appendStringInfoChar(s, '\\');
		appendStringInfoChar(s, v[i]);
	}
	appendStringInfoChar(s, '"');
}

#endif							/* SF_KEYTEXT_H */
