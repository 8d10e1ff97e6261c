/*-------------------------------------------------------------------------
 *
 * keys.c
 *	  A pipeline's interned keys: the key table, interning, the delivery
 *	  prefetch of its slot, and freeing the keys retention no longer needs.
 *
 * Keys are interned, so buckets and identities share them and compare them
 * by pointer.  Without retention they are bump-allocated from an arena and
 * live as long as the pipeline; with retention they are palloc'd and freed
 * by sf_keys_collect once nothing refers to them.  Everything lives in
 * p->cxt.  (Split from engine.c in issue 23's last push, which took it past
 * the 1,000-line limit.)
 *
 * Callers: engine.c (interning on ingest, creating the table), the
 * decoders, redefine.c and final_rows.c (sf_intern_key, engine.h), persist
 * (sf_keys_collect), the snapshot encoder (sf_keys_array).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/keys.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "miscadmin.h"

#include "engine/engine.h"
#include "engine/engine_int.h"

/* ----------------------------------------------------------------
 * Interned keys (a simplehash instance)
 * ----------------------------------------------------------------
 */
typedef struct SfStrEntry
{
	SfString   *str;
	char		status;
	bool		marked;			/* sf_keys_collect: referenced */
} SfStrEntry;

static inline bool
string_equal(const SfString *a, const SfString *b)
{
	return a->hash == b->hash && a->len == b->len &&
		sf_equal_bytes(a->data, b->data, a->len);
}

#define SH_PREFIX		sf_strtab
#define SH_ELEMENT_TYPE	SfStrEntry
#define SH_KEY_TYPE		SfString *
#define SH_KEY			str
#define SH_HASH_KEY(tb, key)	((key)->hash)
#define SH_EQUAL(tb, a, b)		string_equal(a, b)
#define SH_SCOPE		static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

#define ARENA_BLOCK		(64 * 1024)

uint32
sf_hash_bytes(const char *data, int len)
{
	return hash_bytes((const unsigned char *) data, len);
}

/*
 * Memory that lives as long as the pipeline (the keys of a pipeline without
 * retention).  Large requests get their own chunk; small ones are carved
 * from 64 kB blocks without chunk headers.
 */
static void *
arena_alloc(SfPipeline *p, Size size)
{
	void	   *r;

	size = MAXALIGN(size);
	if (size > ARENA_BLOCK / 4)
		return MemoryContextAllocHuge(p->cxt, size);
	if (p->arena_left < size)
	{
		p->arena = MemoryContextAlloc(p->cxt, ARENA_BLOCK);
		p->arena_left = ARENA_BLOCK;
	}
	r = p->arena;
	p->arena += size;
	p->arena_left -= size;
	return r;
}

static SfString *
string_copy_hashed(SfPipeline *p, const char *data, int len, uint32 hash)
{
	SfString   *s = arena_alloc(p, offsetof(SfString, data) + len);

	s->hash = hash;
	s->len = len;
	memcpy(s->data, data, len);
	return s;
}

/*
 * A probe string for a lookup: on the stack when small, else palloc'd in
 * the caller's context.
 */
#define PROBE_STACK		256
typedef union SfProbeBuf
{
	SfString	s;
	char		buf[offsetof(SfString, data) + PROBE_STACK];
} SfProbeBuf;

static SfString *
make_probe(SfProbeBuf *pb, const char *data, int len, uint32 hash)
{
	SfString   *s;

	if (len <= PROBE_STACK)
		s = &pb->s;
	else
		s = palloc(offsetof(SfString, data) + len);
	s->hash = hash;
	s->len = len;
	sf_copy_bytes(s->data, data, len);
	return s;
}


/*
 * The interned copy of a key.  A lookup first: nearly every key is already
 * interned, and simplehash's lookup is cheaper than its insert (issue 23).
 */
SfString *
sf_intern_key_hashed(SfPipeline *p, const char *data, int len, uint32 hash)
{
	SfProbeBuf	pb;
	SfString   *probe = make_probe(&pb, data, len, hash);
	SfStrEntry *e;
	bool		found;

	/*
	 * Not when the table is due to grow: the insert grows it even for a key
	 * it holds, and the table's layout (its iteration order, hence the
	 * order in which a collection frees keys) must stay what it was.
	 */
	if (likely(p->keys->members < p->keys->grow_threshold))
	{
		e = sf_strtab_lookup_hash(p->keys, probe, hash);
		if (likely(e != NULL))
			return e->str;
	}
	e = sf_strtab_insert_hash(p->keys, probe, hash, &found);
	if (!found)
	{
		if (p->keys_freeable)
		{
			SfString   *s = MemoryContextAlloc(p->cxt,
											   offsetof(SfString, data) + len);

			s->hash = hash;
			s->len = len;
			memcpy(s->data, data, len);
			e->str = s;
		}
		else
			e->str = string_copy_hashed(p, data, len, hash);
		e->marked = false;
		p->keys_new++;
	}
	return e->str;
}

SfString *
sf_intern_key(SfPipeline *p, const char *data, int len)
{
	return sf_intern_key_hashed(p, data, len, sf_hash_bytes(data, len));
}


/*
 * Hash a delivery's event_id and key and start loading the identity and
 * key table slots for them, so that the lookups a few deliveries later find
 * them in cache.  With a million remembered events, the identity slot is a
 * cache (and TLB) miss that otherwise costs more than the rest of the
 * ingest.  The hashes are for sf_engine_ingest_hashed().
 */
void
sf_delivery_prefetch(SfPipeline *p, const SfDelivery *d, SfDeliveryHash *h)
{
	sf_delivery_hash(d, h);
#ifdef __GNUC__
	__builtin_prefetch(&p->keys->data[h->key & p->keys->sizemask]);
#endif
	sf_idtable_prefetch(p, h->event_id);
}

/* An empty key table for a new pipeline, in cxt */
void
sf_keys_init(SfPipeline *p, MemoryContext cxt)
{
	p->keys = sf_strtab_create(cxt, 256, NULL);
}

/* ----------------------------------------------------------------
 * Freeing the keys retention no longer needs (docs/semantics.md, Retention)
 *
 * With retention, buckets, identities and late rows come and go, and so do
 * the keys they use; a key that none of them refers to any more would cost
 * its bytes and its table slot forever (issue 21).  Keys carry no reference
 * count: the changes an operation returns and its dirty set refer to keys
 * too, and live until the SQL call has turned them into tuples.  Instead
 * sf_keys_collect, which persist.c calls when it hands the pipeline to a
 * new call (when nothing but the state refers to a key), marks the key of
 * every remembered identity, of every identity a delivery slot or late row
 * holds, and of every live bucket (session lists hold only keys of live
 * session buckets), then frees the unmarked ones.  It runs once keys_new
 * keys were interned since the last collection, at least
 * SF_KEYS_COLLECT_MIN and at least half of what that collection looked at,
 * so its cost is amortized O(1) per interned key and the dead keys never
 * exceed half of the live state plus SF_KEYS_COLLECT_MIN.  Keys are only
 * in memory: checkpoints and snapshots do not change.
 * ----------------------------------------------------------------
 */
static inline void
key_mark(SfPipeline *p, SfString *key)
{
	SfStrEntry *e = sf_strtab_lookup_hash(p->keys, key, key->hash);

	if (e == NULL || e->str != key)
		elog(ERROR, "streamforge: key not interned");
	e->marked = true;
}

static void
bucket_key_mark(SfPipeline *p, SfBucket *b, void *arg)
{
	key_mark(p, b->key);
}

/* sf_keys_collect (engine.h) once its inline test says it is due */
void
sf_keys_collect_due(SfPipeline *p)
{
	SfIdentity *id;
	uint64		pos = 0;
	int64		looked = 0;
	int64		swept = 0;
	sf_strtab_iterator it;
	SfStrEntry *e;

	/*
	 * mark.  The loops check for interrupts: a cancel leaves marks that keep
	 * a key one collection longer, or keys deleted that nothing used, and
	 * the pipeline is sound either way.
	 */
	while ((id = sf_idtable_next(p, &pos)) != NULL)
	{
		if ((++looked & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		key_mark(p, id->key);
	}
	for (int i = 0; i < p->def.npartitions; i++)
	{
		const SfPartition *part = &p->partitions[i];

		for (int64 o = part->base; o <= part->consumed; o++)
		{
			uint32		h = part->deliveries[part->head + (o - part->base)];

			if ((o & 4095) == 0)
				CHECK_FOR_INTERRUPTS();
			if (h != 0)
				key_mark(p, sf_id_ptr(p, h)->key);
		}
		looked += part->consumed + 1 - part->base;
	}
	for (int64 i = 0; i < p->nlate; i++)
	{
		if ((i & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		key_mark(p, p->late[i].event->key);
	}
	looked += p->nlate;
	sf_buckets_foreach(p, bucket_key_mark, NULL);
	looked += p->nbuckets;

	/* sweep: iterating backwards, simplehash allows deleting the current */
	looked += p->keys->members;
	sf_strtab_start_iterate(p->keys, &it);
	while ((e = sf_strtab_iterate(p->keys, &it)) != NULL)
	{
		if ((++swept & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		if (e->marked)
			e->marked = false;
		else
		{
			SfString   *s = e->str;

			sf_strtab_delete_item(p->keys, e);
			pfree(s);
		}
	}

	/* a table left mostly empty is rebuilt at a size for what remains */
	if (p->keys->size > 1024 && p->keys->members < p->keys->size / 8)
	{
		struct sf_strtab_hash *old = p->keys;
		struct sf_strtab_hash *keys;

		keys = sf_strtab_create(p->cxt, Max(256, old->members * 2), NULL);
		sf_strtab_start_iterate(old, &it);
		while ((e = sf_strtab_iterate(old, &it)) != NULL)
		{
			bool		found;
			SfStrEntry *ne = sf_strtab_insert_hash(keys, e->str,
												   e->str->hash, &found);

			ne->str = e->str;
			ne->marked = false;
		}
		sf_strtab_destroy(old);
		p->keys = keys;
	}

	p->keys_new = 0;
	p->keys_threshold = Max(SF_KEYS_COLLECT_MIN, looked / 2);
}

/* Every interned key, in no order, palloc'd in CurrentMemoryContext */
SfString  **
sf_keys_array(SfPipeline *p, int64 *n)
{
	SfString  **arr;
	sf_strtab_iterator it;
	SfStrEntry *e;
	int64		i = 0;

	arr = palloc_extended(Max(p->keys->members, 1) * sizeof(SfString *),
						  MCXT_ALLOC_HUGE);
	sf_strtab_start_iterate(p->keys, &it);
	while ((e = sf_strtab_iterate(p->keys, &it)) != NULL)
	{
		if ((i & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		arr[i++] = e->str;
	}
	*n = i;
	return arr;
}
