/*-------------------------------------------------------------------------
 *
 * shim.c
 *	  The few PostgreSQL backend functions the engine and the checkpoint
 *	  codec call, reimplemented for a standalone libFuzzer binary.
 *
 * The backend cannot be linked as a library, so the fuzz target links the
 * extension's engine and codec objects against this file instead:
 *
 *	- memory contexts: every chunk carries a header linking it into its
 *	  context, so that MemoryContextDelete and MemoryContextReset free
 *	  exactly what PostgreSQL would, and AddressSanitizer sees every use after free;
 *	- ereport/elog: errstart/errfinish record the SQLSTATE and the message,
 *	  and an ERROR longjmps to PG_exception_stack like the backend does
 *	  (PG_TRY/PG_CATCH in the codec work unchanged);
 *	- StringInfo, psprintf, pairing heap, hash_bytes, qsort_arg,
 *	  pg_verifymbstr (the database encoding is taken to be UTF-8), strlcpy.
 *
 * and, for the targets, inputs with their checksums made right
 * (shim_snapshot_fixed, shim_checkpoint_fixed).
 *
 * Only what the fuzz target needs is here; anything else is a link error.
 * Allocation limits mirror the backend's (MaxAllocSize unless "huge"), so a
 * request PostgreSQL would refuse is refused here too, as an ERROR.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  test/fuzz/shim.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include "common/hashfn.h"
#include "lib/pairingheap.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "nodes/memnodes.h"
#include "port/pg_bswap.h"
#include "utils/memutils.h"

#include "shim.h"

/* port.h maps these to PostgreSQL's own printf; the shim is that printf */
#undef vsnprintf
#undef snprintf
#undef fprintf
#undef vfprintf
#undef qsort

/* ----------------------------------------------------------------
 * Memory contexts
 * ----------------------------------------------------------------
 */
typedef struct ShimChunk
{
	struct ShimChunk *prev;
	struct ShimChunk *next;
	Size		size;
	MemoryContext context;		/* right before the data, as in PostgreSQL */
} ShimChunk;

typedef struct ShimContext
{
	MemoryContextData header;	/* only name, parent, firstchild, nextchild used */
	ShimChunk	chunks;			/* circular list head */
} ShimContext;

MemoryContext CurrentMemoryContext = NULL;
MemoryContext TopMemoryContext = NULL;
MemoryContext ErrorContext = NULL;

volatile sig_atomic_t InterruptPending = false;
sigjmp_buf *PG_exception_stack = NULL;
ErrorContextCallback *error_context_stack = NULL;

static void shim_oom(Size size) pg_attribute_noreturn();

MemoryContext
AllocSetContextCreateInternal(MemoryContext parent, const char *name,
							  Size minContextSize, Size initBlockSize,
							  Size maxBlockSize)
{
	ShimContext *c = calloc(1, sizeof(ShimContext));

	if (c == NULL)
		abort();
	c->header.type = T_AllocSetContext;
	c->header.name = name;
	c->header.parent = parent;
	c->chunks.prev = c->chunks.next = &c->chunks;
	if (parent)
	{
		c->header.nextchild = parent->firstchild;
		if (parent->firstchild)
			parent->firstchild->prevchild = &c->header;
		parent->firstchild = &c->header;
	}
	return &c->header;
}

static void
shim_unlink_child(MemoryContext context)
{
	MemoryContext parent = context->parent;

	if (parent == NULL)
		return;
	if (context->prevchild)
		context->prevchild->nextchild = context->nextchild;
	else
		parent->firstchild = context->nextchild;
	if (context->nextchild)
		context->nextchild->prevchild = context->prevchild;
	context->parent = NULL;
	context->prevchild = context->nextchild = NULL;
}

void
MemoryContextDelete(MemoryContext context)
{
	ShimContext *c = (ShimContext *) context;
	ShimChunk  *ch;

	while (context->firstchild)
		MemoryContextDelete(context->firstchild);
	shim_unlink_child(context);
	ch = c->chunks.next;
	while (ch != &c->chunks)
	{
		ShimChunk  *next = ch->next;

		free(ch);
		ch = next;
	}
	if (CurrentMemoryContext == context)
		CurrentMemoryContext = NULL;	/* a later palloc crashes: a bug */
	free(c);
}

/* Free every chunk and delete every child; the context itself stays */
void
MemoryContextReset(MemoryContext context)
{
	ShimContext *c = (ShimContext *) context;
	ShimChunk  *ch;

	while (context->firstchild)
		MemoryContextDelete(context->firstchild);
	ch = c->chunks.next;
	while (ch != &c->chunks)
	{
		ShimChunk  *next = ch->next;

		free(ch);
		ch = next;
	}
	c->chunks.prev = c->chunks.next = &c->chunks;
}

void
MemoryContextSetParent(MemoryContext context, MemoryContext new_parent)
{
	shim_unlink_child(context);
	if (new_parent)
	{
		context->parent = new_parent;
		context->nextchild = new_parent->firstchild;
		if (new_parent->firstchild)
			new_parent->firstchild->prevchild = context;
		new_parent->firstchild = context;
	}
}

static void
shim_oom(Size size)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("invalid memory alloc request size %zu", size)));
	abort();					/* not reached */
}

static void *
shim_alloc(MemoryContext context, Size size, int flags)
{
	ShimContext *c = (ShimContext *) context;
	ShimChunk  *ch;

	if (context == NULL)
		abort();
	if (((flags & MCXT_ALLOC_HUGE) != 0 && !AllocHugeSizeIsValid(size)) ||
		((flags & MCXT_ALLOC_HUGE) == 0 && !AllocSizeIsValid(size)))
		shim_oom(size);
	ch = malloc(sizeof(ShimChunk) + size);
	if (ch == NULL)
	{
		if (flags & MCXT_ALLOC_NO_OOM)
			return NULL;
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	}
	ch->size = size;
	ch->context = context;
	ch->next = c->chunks.next;
	ch->prev = &c->chunks;
	c->chunks.next->prev = ch;
	c->chunks.next = ch;
	if (flags & MCXT_ALLOC_ZERO)
		memset(ch + 1, 0, size);
	return ch + 1;
}

void *
MemoryContextAlloc(MemoryContext context, Size size)
{
	return shim_alloc(context, size, 0);
}

void *
MemoryContextAllocZero(MemoryContext context, Size size)
{
	return shim_alloc(context, size, MCXT_ALLOC_ZERO);
}

void *
MemoryContextAllocExtended(MemoryContext context, Size size, int flags)
{
	return shim_alloc(context, size, flags);
}

void *
MemoryContextAllocHuge(MemoryContext context, Size size)
{
	return shim_alloc(context, size, MCXT_ALLOC_HUGE);
}

void *
palloc(Size size)
{
	return shim_alloc(CurrentMemoryContext, size, 0);
}

void *
palloc0(Size size)
{
	return shim_alloc(CurrentMemoryContext, size, MCXT_ALLOC_ZERO);
}

void *
palloc_extended(Size size, int flags)
{
	return shim_alloc(CurrentMemoryContext, size, flags);
}

void
pfree(void *pointer)
{
	ShimChunk  *ch = ((ShimChunk *) pointer) - 1;

	ch->prev->next = ch->next;
	ch->next->prev = ch->prev;
	free(ch);
}

static void *
shim_realloc(void *pointer, Size size, int flags)
{
	ShimChunk  *old = ((ShimChunk *) pointer) - 1;
	void	   *p = shim_alloc(old->context, size, flags);

	memcpy(p, pointer, Min(size, old->size));
	pfree(pointer);
	return p;
}

void *
repalloc(void *pointer, Size size)
{
	return shim_realloc(pointer, size, 0);
}

void *
repalloc_huge(void *pointer, Size size)
{
	return shim_realloc(pointer, size, MCXT_ALLOC_HUGE);
}

char *
pstrdup(const char *in)
{
	return pnstrdup(in, strlen(in));
}

char *
pnstrdup(const char *in, Size len)
{
	char	   *out;

	len = strnlen(in, len);
	out = palloc(len + 1);
	memcpy(out, in, len);
	out[len] = '\0';
	return out;
}

char *
psprintf(const char *fmt,...)
{
	va_list		ap;
	int			n;
	char	   *out;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	out = palloc(n + 1);
	va_start(ap, fmt);
	vsnprintf(out, n + 1, fmt, ap);
	va_end(ap);
	return out;
}

int
pg_snprintf(char *str, size_t count, const char *fmt,...)
{
	va_list		ap;
	int			n;

	va_start(ap, fmt);
	n = vsnprintf(str, count, fmt, ap);
	va_end(ap);
	return n;
}

int
pg_vsnprintf(char *str, size_t count, const char *fmt, va_list args)
{
	return vsnprintf(str, count, fmt, args);
}

int
pg_fprintf(FILE *stream, const char *fmt,...)
{
	va_list		ap;
	int			n;

	va_start(ap, fmt);
	n = vfprintf(stream, fmt, ap);
	va_end(ap);
	return n;
}

size_t
strlcpy(char *dst, const char *src, size_t siz)
{
	size_t		len = strlen(src);

	if (siz > 0)
	{
		size_t		n = Min(len, siz - 1);

		memcpy(dst, src, n);
		dst[n] = '\0';
	}
	return len;
}

/* ----------------------------------------------------------------
 * Errors
 * ----------------------------------------------------------------
 */
static int	shim_elevel;
int			shim_sqlerrcode;
char		shim_message[1024];
char		shim_detail[1024];

bool
errstart_cold(int elevel, const char *domain)
{
	return errstart(elevel, domain);
}

bool
errstart(int elevel, const char *domain)
{
	if (elevel < ERROR)
		return false;
	shim_elevel = elevel;
	shim_sqlerrcode = ERRCODE_INTERNAL_ERROR;
	shim_message[0] = shim_detail[0] = '\0';
	return true;
}

int
errcode(int sqlerrcode)
{
	shim_sqlerrcode = sqlerrcode;
	return 0;
}

int
errmsg(const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(shim_message, sizeof(shim_message), fmt, ap);
	va_end(ap);
	return 0;
}

int
errmsg_internal(const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(shim_message, sizeof(shim_message), fmt, ap);
	va_end(ap);
	return 0;
}

int
errdetail(const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(shim_detail, sizeof(shim_detail), fmt, ap);
	va_end(ap);
	return 0;
}

/* hints are not checked by the fuzz target: format and drop them */
int
errhint(const char *fmt,...)
{
	char		buf[256];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return 0;
}

void
errfinish(const char *filename, int lineno, const char *funcname)
{
	if (shim_elevel >= FATAL || PG_exception_stack == NULL)
	{
		fprintf(stderr, "shim: uncaught error at %s:%d: %s\n", filename,
				lineno, shim_message);
		abort();
	}
	siglongjmp(*PG_exception_stack, 1);
}

void
pg_re_throw(void)
{
	if (PG_exception_stack == NULL)
		abort();
	siglongjmp(*PG_exception_stack, 1);
}

/*
 * The error being handled, as a PG_CATCH block sees it (journal.c's replay
 * copies it; the fuzz target never replays a journal, but the codec layer
 * links whole)
 */
ErrorData *
CopyErrorData(void)
{
	ErrorData  *edata = palloc0(sizeof(ErrorData));

	edata->elevel = shim_elevel;
	edata->sqlerrcode = shim_sqlerrcode;
	edata->message = pstrdup(shim_message);
	edata->detail = shim_detail[0] ? pstrdup(shim_detail) : NULL;
	return edata;
}

void
FlushErrorState(void)
{
	shim_sqlerrcode = 0;
	shim_message[0] = shim_detail[0] = '\0';
}

void
FreeErrorData(ErrorData *edata)
{
	if (edata->message)
		pfree(edata->message);
	if (edata->detail)
		pfree(edata->detail);
	pfree(edata);
}

void
ProcessInterrupts(void)
{
	InterruptPending = false;
}

/* ----------------------------------------------------------------
 * StringInfo
 * ----------------------------------------------------------------
 */
StringInfo
makeStringInfo(void)
{
	StringInfo	res = palloc(sizeof(StringInfoData));

	initStringInfo(res);
	return res;
}

void
initStringInfo(StringInfo str)
{
	str->maxlen = 1024;
	str->data = palloc(str->maxlen);
	resetStringInfo(str);
}

void
resetStringInfo(StringInfo str)
{
	str->data[0] = '\0';
	str->len = 0;
	str->cursor = 0;
}

void
enlargeStringInfo(StringInfo str, int needed)
{
	int			newlen;

	if (needed < 0 || ((Size) needed) >= (MaxAllocSize - (Size) str->len))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("out of memory")));
	needed += str->len + 1;
	if (needed <= str->maxlen)
		return;
	newlen = 2 * str->maxlen;
	while (needed > newlen)
		newlen = 2 * newlen;
	if (newlen > (int) MaxAllocSize)
		newlen = (int) MaxAllocSize;
	str->data = repalloc(str->data, newlen);
	str->maxlen = newlen;
}

void
appendBinaryStringInfo(StringInfo str, const char *data, int datalen)
{
	enlargeStringInfo(str, datalen);
	memcpy(str->data + str->len, data, datalen);
	str->len += datalen;
	str->data[str->len] = '\0';
}

void
appendStringInfoString(StringInfo str, const char *s)
{
	appendBinaryStringInfo(str, s, strlen(s));
}

void
appendStringInfoChar(StringInfo str, char ch)
{
	appendBinaryStringInfo(str, &ch, 1);
}

void
appendStringInfo(StringInfo str, const char *fmt,...)
{
	va_list		ap;
	int			n;
	char		small[128];

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < (int) sizeof(small))
	{
		appendBinaryStringInfo(str, small, n);
		return;
	}
	enlargeStringInfo(str, n);
	va_start(ap, fmt);
	vsnprintf(str->data + str->len, n + 1, fmt, ap);
	va_end(ap);
	str->len += n;
}

/* ----------------------------------------------------------------
 * Pairing heap (same contract as src/backend/lib/pairingheap.c: the root
 * is the node that compares greatest)
 * ----------------------------------------------------------------
 */
static pairingheap_node *
ph_merge(pairingheap *heap, pairingheap_node *a, pairingheap_node *b)
{
	if (a == NULL)
		return b;
	if (b == NULL)
		return a;
	if (heap->ph_compare(a, b, heap->ph_arg) < 0)
	{
		pairingheap_node *t = a;

		a = b;
		b = t;
	}
	/* b becomes a's first child */
	if (a->first_child)
		a->first_child->prev_or_parent = b;
	b->prev_or_parent = a;
	b->next_sibling = a->first_child;
	a->first_child = b;
	return a;
}

/* Two-pass merge of a sibling list into one tree */
static pairingheap_node *
ph_merge_children(pairingheap *heap, pairingheap_node *children)
{
	pairingheap_node *pairs = NULL;
	pairingheap_node *result;

	if (children == NULL || children->next_sibling == NULL)
	{
		if (children)
			children->prev_or_parent = NULL;
		return children;
	}
	while (children)
	{
		pairingheap_node *a = children;
		pairingheap_node *b = a->next_sibling;
		pairingheap_node *m;

		children = b ? b->next_sibling : NULL;
		a->next_sibling = a->prev_or_parent = NULL;
		if (b)
			b->next_sibling = b->prev_or_parent = NULL;
		m = ph_merge(heap, a, b);
		m->next_sibling = pairs;
		pairs = m;
	}
	result = pairs;
	pairs = pairs->next_sibling;
	result->next_sibling = NULL;
	while (pairs)
	{
		pairingheap_node *next = pairs->next_sibling;

		pairs->next_sibling = NULL;
		result = ph_merge(heap, result, pairs);
		pairs = next;
	}
	result->prev_or_parent = NULL;
	return result;
}

void
pairingheap_add(pairingheap *heap, pairingheap_node *node)
{
	node->first_child = node->next_sibling = node->prev_or_parent = NULL;
	heap->ph_root = ph_merge(heap, heap->ph_root, node);
	heap->ph_root->prev_or_parent = NULL;
	heap->ph_root->next_sibling = NULL;
}

pairingheap_node *
pairingheap_first(pairingheap *heap)
{
	if (heap->ph_root == NULL)
		abort();
	return heap->ph_root;
}

pairingheap_node *
pairingheap_remove_first(pairingheap *heap)
{
	pairingheap_node *root = heap->ph_root;

	if (root == NULL)
		abort();
	heap->ph_root = ph_merge_children(heap, root->first_child);
	root->first_child = root->next_sibling = root->prev_or_parent = NULL;
	return root;
}

void
pairingheap_remove(pairingheap *heap, pairingheap_node *node)
{
	pairingheap_node *sub;

	if (node == heap->ph_root)
	{
		(void) pairingheap_remove_first(heap);
		return;
	}
	/* unlink node from its parent's child list */
	if (node->prev_or_parent->first_child == node)
		node->prev_or_parent->first_child = node->next_sibling;
	else
		node->prev_or_parent->next_sibling = node->next_sibling;
	if (node->next_sibling)
		node->next_sibling->prev_or_parent = node->prev_or_parent;
	sub = ph_merge_children(heap, node->first_child);
	node->first_child = node->next_sibling = node->prev_or_parent = NULL;
	heap->ph_root = ph_merge(heap, heap->ph_root, sub);
}

/* ----------------------------------------------------------------
 * Hashing, sorting, encoding
 * ----------------------------------------------------------------
 */
uint32
hash_bytes(const unsigned char *k, int keylen)
{
	uint32		h = 2166136261u;	/* FNV-1a: any hash will do here */

	for (int i = 0; i < keylen; i++)
		h = (h ^ k[i]) * 16777619u;
	return h;
}

void
pg_qsort(void *base, size_t nel, size_t elsize,
		 int (*cmp) (const void *, const void *))
{
	qsort(base, nel, elsize, cmp);
}

void
qsort_arg(void *base, size_t nel, size_t elsize, qsort_arg_comparator cmp,
		  void *arg)
{
	qsort_r(base, nel, elsize, cmp, arg);
}

/* The database encoding is UTF-8 here */
bool
pg_verifymbstr(const char *mbstr, int len, bool noError)
{
	const unsigned char *s = (const unsigned char *) mbstr;
	int			i = 0;

	while (i < len)
	{
		unsigned char c = s[i];
		int			n;
		uint32		cp;

		if (c == 0)
			return false;
		if (c < 0x80)
		{
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			n = 1, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			n = 2, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			n = 3, cp = c & 0x07;
		else
			return false;
		for (int k = 1; k <= n; k++)
		{
			if (i + k >= len || (s[i + k] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if ((n == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
			(n == 3 && (cp < 0x10000 || cp > 0x10ffff)))
			return false;
		i += n + 1;
	}
	return true;
}

/* As in elog.c: the five-character SQLSTATE of an error code */
char *
unpack_sql_state(int sql_state)
{
	static char buf[12];

	for (int i = 0; i < 5; i++)
	{
		buf[i] = PGUNSIXBIT(sql_state);
		sql_state >>= 6;
	}
	buf[5] = '\0';
	return buf;
}

/* mbutils.c: the fuzz target's strings are bytes; cut anywhere */
int
pg_mbcliplen(const char *mbstr, int len, int limit)
{
	return len < limit ? len : limit;
}

/* ----------------------------------------------------------------
 * Inputs made to pass the checksums, so that mutations reach the decoders
 * (shared by the targets)
 * ----------------------------------------------------------------
 */

/*
 * The input with the length and CRC of its header made right (malloc'd;
 * NULL if it is no binary snapshot header)
 */
uint8_t *
shim_snapshot_fixed(const uint8_t *data, size_t size)
{
	uint8_t    *out;
	uint64		len;
	uint32		crc;

	if (size < 24 || memcmp(data, "SFSNAPB\n", 8) != 0)
		return NULL;
	out = malloc(size);
	memcpy(out, data, size);
	len = size - 24;
	crc = (uint32) crc32(crc32(0L, Z_NULL, 0), out + 24, (uInt) len);
	for (int i = 0; i < 4; i++)
		out[12 + i] = (uint8) (crc >> (8 * i));
	for (int i = 0; i < 8; i++)
		out[16 + i] = (uint8) (len >> (8 * i));
	return out;
}

/*
 * The input with a correct envelope around its bytes 24.. taken as the
 * document (compressed when longer than 4 KiB, as the encoder does), so
 * that mutations of the document reach the parser and the validator
 * instead of failing the checksum.  malloc'd; NULL for short inputs.
 */
uint8_t *
shim_checkpoint_fixed(const uint8_t *data, size_t size, size_t *outsize)
{
	const uint8_t *doc = data + 24;
	uLong		doclen = size - 24;
	uLongf		plen = doclen;
	uint8_t    *out;
	uint16		flags = 0;
	uint32		v;
	uLong		crc;

	if (size < 24 || doclen > 1024 * 1024)
		return NULL;
	out = malloc(24 + compressBound(doclen));
	if (doclen > 4096)
	{
		plen = compressBound(doclen);
		if (compress2(out + 24, &plen, doc, doclen, 6) != Z_OK)
			abort();
		flags = 1;
	}
	else
		memcpy(out + 24, doc, doclen);
	memcpy(out, "SFCKPT\r\n", 8);
	out[8] = 0;
	out[9] = 1;
	out[10] = 0;
	out[11] = flags;
	v = pg_hton32((uint32) plen);
	memcpy(out + 12, &v, 4);
	v = pg_hton32((uint32) doclen);
	memcpy(out + 16, &v, 4);
	crc = crc32(0L, out, 20);
	crc = crc32(crc, out + 24, plen);
	v = pg_hton32((uint32) crc);
	memcpy(out + 20, &v, 4);
	*outsize = 24 + plen;
	return out;
}
