/*-------------------------------------------------------------------------
 *
 * identity.c
 *	  Where a pipeline keeps its identities: a store addressed by 32-bit
 *	  handles, and the event_id hash table over it.
 *
 * Design.  A remembered delivery costs one identity (for a unique event)
 * and one slot of its partition's history; with a million of them, every
 * byte of those counts (issue 13: at most 60 bytes per remembered
 * delivery).  So:
 *
 *	- an identity is one variable-sized record with its event_id inline
 *	  (SfIdentity, 29 bytes + the event_id, 8-byte aligned), bump-allocated
 *	  from 64 kB blocks;
 *	- it is named by a uint32 handle: block index (19 bits) and offset in
 *	  8-byte units (13 bits); handle 0 is never used.  Delivery slots
 *	  (SfPartition.deliveries) and the hash table hold handles, 4 bytes
 *	  instead of 8;
 *	- the event_id table is open addressing with linear probing over
 *	  slots of a handle and the event_id's hash (8 bytes; the bytes are
 *	  in the identity), at most 80% full, with tombstones for the
 *	  identities retention forgets.  It doubles up to ID_TABLE_DOUBLE_MAX
 *	  (2^20) slots and grows by a quarter above, so that only large tables
 *	  trade rehashes for memory; a growth is incremental (issue 39: the
 *	  old table is migrated a few slots per insert, see "The event_id
 *	  table" below), so no call pays for re-inserting every identity.  The hash in the slot costs 4 bytes a slot
 *	  (about 5.6 per identity at the average load) and saves what a rehash
 *	  cost before issue 23's last push: a read of every identity at a
 *	  random address to recover its hash (a cache miss each, and at a
 *	  million identities every growth by a quarter re-read them all).
 *	  Nothing persisted depends on the table's size or order: every
 *	  encoder sorts the identities by handle.  A parallel byte per slot
 *	  holds its state and 8 bits of the hash, so a probe reads contiguous
 *	  bytes and looks at a slot only when those bits match (an
 *	  unsuccessful search at 80% load probes about 13 slots);
 *	  an unsuccessful lookup leaves its insertion slot as a hint for the
 *	  insert that follows (one probe per new event).
 *
 * A record larger than a quarter block gets a block of its own.  Without
 * retention nothing is ever freed (identities live as long as the
 * pipeline).  With retention each identity is preceded by an SfIdPrefix
 * (the slots that refer to it, and its own handle), and a freed record goes
 * to a free list of its size class, or gives its block back when it had
 * one of its own.
 *
 * Everything lives in p->cxt.  Blocks never move, so pointers to
 * identities stay valid as long as the identity is not freed.
 *
 * Callers: engine.c adds identities, retention.c unlinks and frees them
 * (engine_int.h); the decoders and redefine.c look them up and walk the
 * table (engine.h).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/identity.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/mman.h>

#include "miscadmin.h"

#include "engine/engine.h"
#include "engine/engine_int.h"

#define ID_BLOCK		(64 * 1024)
#define ID_UNIT_BITS	13			/* 8-byte units in a block */
#define ID_MAX_BLOCKS	((1U << (32 - ID_UNIT_BITS)) - 1)	/* top one unused */
#define ID_BIG			(ID_BLOCK / 4)
#define TAG_EMPTY		0
#define TAG_TOMB		1			/* a forgotten entry */
#define ID_TABLE_DOUBLE_MAX	((uint64) 1 << 20)	/* doubles up to this */

/*
 * The tag of an occupied slot: 2 .. 255, from the hash's low bits (the
 * slot index comes from its high bits).
 */
static inline uint8
hash_tag(uint32 hash)
{
	uint8		t = (uint8) hash;

	return t < 2 ? t + 2 : t;
}

/*
 * Where the search for hash starts: multiply-shift, so that the capacity
 * need not be a power of 2 and a large table can grow by a quarter instead
 * of doubling.
 */
static inline uint64
home(uint32 hash, uint64 cap)
{
	return ((uint64) hash * cap) >> 32;
}

static inline uint64
next_slot(uint64 i, uint64 cap)
{
	return i + 1 == cap ? 0 : i + 1;
}
#define ID_NCLASSES		(ID_BIG / 8 + 1)

/*
 * Ask the kernel to back a large new allocation with huge pages where it
 * can, and to map all of it now: one call instead of a page fault per 4 kB
 * page as it is first written (a cold load writes hundreds of megabytes of
 * identities in a row; on a virtual machine a fault costs microseconds).
 * Only the whole pages inside [ptr, ptr + len) are touched; errors (an old
 * kernel, no transparent huge pages) are ignored: the memory is faulted in
 * as it is used, as before.  The caller writes the memory soon anyway.
 */
void
sf_mem_prefault(void *ptr, Size len)
{
#if defined(MADV_POPULATE_WRITE) || defined(MADV_HUGEPAGE)
	uintptr_t	page = 4096;
	uintptr_t	start = ((uintptr_t) ptr + page - 1) & ~(page - 1);
	uintptr_t	end = ((uintptr_t) ptr + len) & ~(page - 1);

	if (len < 1024 * 1024 || end <= start)
		return;
#ifdef MADV_HUGEPAGE
	(void) madvise((void *) start, end - start, MADV_HUGEPAGE);
#endif
#ifdef MADV_POPULATE_WRITE
	(void) madvise((void *) start, end - start, MADV_POPULATE_WRITE);
#endif
#endif
}

/*
 * A new 64 kB block for a large store: carved from a slab of several,
 * allocated at once, a quarter of the store's size at a time (32 to 512
 * blocks), so that the slack is bounded by a quarter.  A slab is
 * prefaulted only for a decoder's bulk insert (sf_idtable_reserve sets
 * prefault_until): on the write path, faulting 32 MB in at once took one
 * ingest_batch call 50-100 ms of CPU at millions of identities (issue 39),
 * where the same pages faulted in as identities are written cost each
 * call a little.
 */
#define ID_SLAB_FROM	32

static char *
store_slab_block(SfPipeline *p)
{
	SfIdStore  *s = &p->idstore;
	char	   *block;

	if (s->slab_left == 0)
	{
		uint32		n = Min(Max(s->nblocks / 4, ID_SLAB_FROM), 512);

		s->slab = MemoryContextAllocHuge(p->cxt, (Size) n * ID_BLOCK);
		if (s->nblocks < s->prefault_until)
			sf_mem_prefault(s->slab, (Size) n * ID_BLOCK);
		s->slab_left = n;
	}
	block = s->slab;
	s->slab += ID_BLOCK;
	s->slab_left--;
	return block;
}

static char *
store_new_block(SfPipeline *p, Size size, uint32 *index)
{
	SfIdStore  *s = &p->idstore;
	char	   *block;

	if (s->nblocks >= ID_MAX_BLOCKS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("pipeline \"%s\" remembers too many events",
						p->def.name)));
	if (s->nblocks >= s->blocks_cap)
	{
		uint32		newcap = s->blocks_cap ? s->blocks_cap * 2 : 64;

		if (s->blocks == NULL)
			s->blocks = MemoryContextAlloc(p->cxt, newcap * sizeof(char *));
		else
			s->blocks = repalloc_huge(s->blocks, (Size) newcap * sizeof(char *));
		s->blocks_cap = newcap;
	}
	if (size == ID_BLOCK && s->nblocks >= ID_SLAB_FROM)
		block = store_slab_block(p);
	else
		block = MemoryContextAllocHuge(p->cxt, size);
	*index = s->nblocks;
	s->blocks[s->nblocks++] = block;
	return block;
}

/*
 * Memory for one record of size bytes, and its handle.  With retention a
 * freed record of the same size class is reused first.
 */
static void *
store_alloc(SfPipeline *p, Size size, uint32 *handle)
{
	SfIdStore  *s = &p->idstore;
	uint32		index;
	char	   *r;

	size = MAXALIGN(size);
	if (size > ID_BIG)
	{
		r = store_new_block(p, size, &index);
		*handle = index << ID_UNIT_BITS;
		return r;
	}
	if (s->free != NULL && s->free[size / 8] != 0)
	{
		*handle = s->free[size / 8];
		r = (char *) sf_id_ptr(p, *handle);
		s->free[size / 8] = *(uint32 *) r;
		return r;
	}
	if (s->left < size)
	{
		s->cur = store_new_block(p, ID_BLOCK, &s->cur_block);
		s->used = 0;
		s->left = ID_BLOCK;
		if (s->cur_block == 0)
		{
			/* handle 0 means "none" */
			s->used = MAXIMUM_ALIGNOF;
			s->left -= MAXIMUM_ALIGNOF;
		}
	}
	*handle = (s->cur_block << ID_UNIT_BITS) | (uint32) (s->used / 8);
	r = s->cur + s->used;
	s->used += size;
	s->left -= size;
	return r;
}

static void
store_free(SfPipeline *p, void *ptr, uint32 handle, Size size)
{
	SfIdStore  *s = &p->idstore;

	size = MAXALIGN(size);
	if (size > ID_BIG)
	{
		uint32		index = handle >> ID_UNIT_BITS;

		pfree(s->blocks[index]);
		s->blocks[index] = NULL;	/* its index is not reused */
		return;
	}
	if (s->free == NULL)
		s->free = MemoryContextAllocZero(p->cxt, ID_NCLASSES * sizeof(uint32));
	*(uint32 *) ptr = s->free[size / 8];
	s->free[size / 8] = handle;
}

static inline Size
identity_size(const SfPipeline *p, int len)
{
	if (unlikely(p->def.measures != NULL))
		return (p->def.has_retention ? sizeof(SfIdPrefix) : 0) +
			MAXALIGN(offsetof(SfIdentity, event_id) + len) +
			(1 + p->def.measures->width) * sizeof(int64);
	return (p->def.has_retention ? sizeof(SfIdPrefix) : 0) +
		offsetof(SfIdentity, event_id) + len;
}

/*
 * A new identity record for event_id (not yet in the table), with its
 * flags clear; the caller fills in the rest.
 */
SfIdentity *
sf_identity_new(SfPipeline *p, const char *event_id, int len, uint32 hash,
				uint32 *handle)
{
	char	   *r;
	SfIdentity *id;

	r = store_alloc(p, identity_size(p, len), handle);
	if (p->def.has_retention)
	{
		SfIdPrefix *pre = (SfIdPrefix *) r;

		pre->nslots = 0;
		pre->handle = *handle;
		r += sizeof(SfIdPrefix);
		/* the handle names the identity, after its prefix */
		*handle += sizeof(SfIdPrefix) / 8;
	}
	id = (SfIdentity *) r;
	id->hash = hash;
	id->event_id_len = len;
	id->late = false;
	id->forgotten = false;
	id->late_held = false;
	sf_copy_bytes(id->event_id, event_id, len);
	return id;
}

/* Retention: give a forgotten identity's memory back */
void
sf_identity_free(SfPipeline *p, SfIdentity *id)
{
	SfIdPrefix *pre = sf_id_prefix(id);

	Assert(p->def.has_retention);
	store_free(p, pre, pre->handle, identity_size(p, id->event_id_len));
}

/* ----------------------------------------------------------------
 * The event_id table
 *
 * Growth is incremental (issue 39): a growth allocates the new table and
 * keeps the old one, and every insert that follows migrates at least
 * ID_MIGRATE_STEP of the old table's slots, in slot order, so that no call
 * pays for re-inserting every identity at once (at 5M identities that was
 * a 100-250 ms pause in one ingest_batch call).  The split between the
 * two tables is by hash, not by entry: the old table's slots below the
 * boundary mig are migrated, and since the home of a hash is monotonic in
 * the hash and mig always stops at an empty slot of the old table (which
 * no probe crosses), every hash whose old home is below mig is in the new
 * table and every other one in the old table.  A lookup, insert or delete
 * therefore probes exactly one table, as before (one extra multiply while
 * a growth is under way).  Migrated old slots become tombstones, so that
 * the probes that wrap around the old table's end still find the entries
 * after them; those wrapped entries (their home is above their slot) stay
 * until the boundary reaches the end, when the old table's first cluster
 * is migrated whole and the old table freed.
 *
 * Which event ids are known never changes: an entry is moved (written in
 * the new table, then made a tombstone in the old) within one step, no
 * step can be interrupted in the middle, and mig advances only after the
 * whole range below it is moved.
 *
 * Memory: between growths, the same slots as before (9 bytes a slot, at
 * most 80% full).  During a growth both tables are allocated, as they
 * were during the one-call rehash; the peak is the same, it only lasts
 * longer (the old table is freed after about cap / ID_MIGRATE_STEP
 * inserts, before the new table can fill: an eighth of the old capacity
 * against the fifth that a growth by a quarter leaves free).  While a
 * growth is under way, the entries inserted into the old table raise its
 * load by at most 1 / ID_MIGRATE_STEP; should it ever run short of empty
 * slots (fewer than a sixteenth), the growth is finished at once.
 * ----------------------------------------------------------------
 */
#define ID_MIGRATE_STEP	8

/* Which table holds hash: the old one while it is being migrated */
static inline bool
in_old(const SfIdTable *t, uint32 hash)
{
	return unlikely(t->ocap != 0) && home(hash, t->ocap) >= t->mig;
}

/*
 * Rehash the whole table into one of newcap slots, in one call: only when
 * no growth is under way (a decoder's reserve and the table's creation).
 */
static void
table_resize(SfPipeline *p, uint64 newcap)
{
	SfIdTable  *t = &p->idtable;
	SfIdSlot   *old = t->slots;
	uint8	   *oldtags = t->tags;
	uint64		oldcap = t->cap;

	Assert(t->ocap == 0);
	t->slots = MemoryContextAllocHuge(p->cxt, newcap * sizeof(SfIdSlot));
	t->tags = MemoryContextAllocHuge(p->cxt, newcap);
	sf_mem_prefault(t->slots, newcap * sizeof(SfIdSlot));
	memset(t->tags, TAG_EMPTY, newcap);
	t->cap = newcap;
	t->tomb = 0;
	t->hint_valid = false;
	/* the hashes are in the slots: the old table is read in order, no identity */
	for (uint64 i = 0; i < oldcap; i++)
	{
		uint64		j;

		if ((i & 65535) == 0)
			CHECK_FOR_INTERRUPTS();
		if (oldtags[i] < 2)
			continue;
		j = home(old[i].hash, newcap);
		while (t->tags[j] != TAG_EMPTY)
			j = next_slot(j, newcap);
		t->slots[j] = old[i];
		t->tags[j] = oldtags[i];
	}
	if (old)
	{
		pfree(old);
		pfree(oldtags);
	}
}

/* Move the old table's live slot i into the new table */
static inline void
migrate_slot(SfIdTable *t, uint64 i)
{
	uint64		j = home(t->oslots[i].hash, t->cap);

	while (t->tags[j] >= 2)
		j = next_slot(j, t->cap);
	if (t->tags[j] == TAG_TOMB)
		t->tomb--;
	t->slots[j] = t->oslots[i];
	t->tags[j] = t->otags[i];
	t->used++;
	t->otags[i] = TAG_TOMB;
	t->oused--;
}

/*
 * Migrate at least nslots more of the old table's slots (up to the next
 * empty one); at its end, the wrapped entries, and free it.  Nothing in a
 * step can fail or be interrupted: between two steps the table is whole.
 */
static void
migrate_step(SfPipeline *p, uint64 nslots)
{
	SfIdTable  *t = &p->idtable;
	uint64		i = t->mig;
	uint64		end = Min(t->ocap, i + nslots);

	/* the boundary stops at an empty slot, which no probe crosses */
	while (end < t->ocap && t->otags[end] != TAG_EMPTY)
		end++;
	for (; i < end; i++)
	{
		/* not the wrapped ones: their hashes are still the old table's */
		if (t->otags[i] >= 2 && home(t->oslots[i].hash, t->ocap) <= i)
			migrate_slot(t, i);
	}
	t->mig = end;
	t->hint_valid = false;
	if (end < t->ocap)
		return;
	/* every live entry left is a wrapped one, in the first cluster */
	for (i = 0; i < t->ocap && t->otags[i] != TAG_EMPTY; i++)
	{
		if (t->otags[i] >= 2)
			migrate_slot(t, i);
	}
	if (t->oused != 0)
		elog(PANIC, "streamforge: event_id table migration lost entries");
	pfree(t->oslots);
	pfree(t->otags);
	t->oslots = NULL;
	t->otags = NULL;
	t->ocap = 0;
	t->mig = 0;
}

/* Finish a growth under way, in one call */
static void
migrate_finish(SfPipeline *p)
{
	while (p->idtable.ocap != 0)
	{
		CHECK_FOR_INTERRUPTS();
		migrate_step(p, 65536);
	}
}

/*
 * Start a growth (or a rehash in place, newcap == cap): the current table
 * becomes the old one, to be migrated by the inserts that follow.
 */
static void
migrate_start(SfPipeline *p, uint64 newcap)
{
	SfIdTable  *t = &p->idtable;
	SfIdSlot   *slots;
	uint8	   *tags;

	migrate_finish(p);
	/*
	 * Not prefaulted (unlike a one-call resize): the migration and the
	 * inserts write the slots' pages over many calls, and faulting tens of
	 * megabytes in here would be the one-call pause again.
	 */
	slots = MemoryContextAllocHuge(p->cxt, newcap * sizeof(SfIdSlot));
	tags = MemoryContextAllocHuge(p->cxt, newcap);
	memset(tags, TAG_EMPTY, newcap);
	t->oslots = t->slots;
	t->otags = t->tags;
	t->ocap = t->cap;
	t->oused = t->used;
	t->oempty = t->cap - t->used - t->tomb;
	t->mig = 0;
	t->slots = slots;
	t->tags = tags;
	t->cap = newcap;
	t->used = 0;
	t->tomb = 0;
	t->hint_valid = false;
}

void
sf_idtable_init(SfPipeline *p)
{
	p->idtable.slots = NULL;
	p->idtable.tags = NULL;
	p->idtable.cap = 0;
	p->idtable.used = 0;
	p->idtable.oslots = NULL;
	p->idtable.otags = NULL;
	p->idtable.ocap = 0;
	p->idtable.oused = 0;
	p->idtable.oempty = 0;
	p->idtable.mig = 0;
	p->idtable.hint_valid = false;
	table_resize(p, 1024);
}

/*
 * One table's search for event_id: sets the hint when it is not there.
 * Always inlined: it is the whole of a lookup, once per event.
 */
static pg_attribute_always_inline SfIdentity *
probe(SfPipeline *p, const SfIdSlot *slots, const uint8 *tags, uint64 cap,
	  bool old, const char *event_id, int len, uint32 hash, uint32 *handle)
{
	SfIdTable  *t = &p->idtable;
	uint64		i = home(hash, cap);
	uint8		tag = hash_tag(hash);
	uint64		free_slot = PG_UINT64_MAX;

	for (;;)
	{
		uint8		c = tags[i];

		if (c == TAG_EMPTY)
		{
			t->hint_slot = free_slot != PG_UINT64_MAX ? free_slot : i;
			t->hint_hash = hash;
			t->hint_old = old;
			t->hint_valid = true;
			return NULL;
		}
		if (c == tag && slots[i].hash == hash)
		{
			SfIdentity *id = sf_id_ptr(p, slots[i].handle);

			if (id->event_id_len == (uint32) len &&
				sf_equal_bytes(id->event_id, event_id, len))
			{
				if (handle)
					*handle = slots[i].handle;
				return id;
			}
		}
		else if (c == TAG_TOMB && free_slot == PG_UINT64_MAX)
			free_slot = i;
		i = next_slot(i, cap);
	}
}

/*
 * The remembered identity of event_id, or NULL; its handle in *handle.
 * When it is not there, the slot where it would go (the first free or
 * deleted one on its probe path) is kept as the table's hint, for the
 * sf_idtable_insert of the same hash that usually follows: one probe for a
 * new event instead of two (issue 23).
 */
SfIdentity *
sf_idtable_lookup(SfPipeline *p, const char *event_id, int len, uint32 hash,
				  uint32 *handle)
{
	SfIdTable  *t = &p->idtable;

	if (in_old(t, hash))
		return probe(p, t->oslots, t->otags, t->ocap, true,
					 event_id, len, hash, handle);
	return probe(p, t->slots, t->tags, t->cap, false,
				 event_id, len, hash, handle);
}

/* Add an identity whose event_id the table does not hold */
void
sf_idtable_insert(SfPipeline *p, uint32 handle, uint32 hash)
{
	SfIdTable  *t = &p->idtable;
	uint64		i;

	if (unlikely((t->used + t->tomb + 1) * 5 > t->cap * 4))
	{
		uint64		newcap = t->cap;

		/* mostly live entries: grow; mostly tombstones: rehash in place */
		if ((t->used + t->oused + 1) * 5 > t->cap * 2)
			newcap = t->cap < ID_TABLE_DOUBLE_MAX ?
				t->cap * 2 : t->cap + t->cap / 4;
		migrate_start(p, newcap);
	}
	if (in_old(t, hash))
	{
		/* a hash not migrated yet: into the old table */
		if (t->hint_valid && t->hint_old && t->hint_hash == hash)
			i = t->hint_slot;
		else
		{
			i = home(hash, t->ocap);
			while (t->otags[i] >= 2)
				i = next_slot(i, t->ocap);
		}
		Assert(t->otags[i] < 2);
		if (t->otags[i] == TAG_EMPTY)
			t->oempty--;
		t->oslots[i].handle = handle;
		t->oslots[i].hash = hash;
		t->otags[i] = hash_tag(hash);
		t->oused++;
	}
	else
	{
		if (t->hint_valid && !t->hint_old && t->hint_hash == hash)
			i = t->hint_slot;
		else
		{
			i = home(hash, t->cap);
			while (t->tags[i] >= 2)
				i = next_slot(i, t->cap);
		}
		Assert(t->tags[i] < 2);
		if (t->tags[i] == TAG_TOMB)
			t->tomb--;
		t->slots[i].handle = handle;
		t->slots[i].hash = hash;
		t->tags[i] = hash_tag(hash);
		t->used++;
	}
	t->hint_valid = false;
	if (unlikely(t->ocap != 0))
	{
		/* the old table must keep empty slots for its probes to end */
		if (t->oempty * 16 < t->ocap)
			migrate_finish(p);
		else
			migrate_step(p, ID_MIGRATE_STEP);
	}
}

/* Retention: take a remembered identity out of the table */
static void
idtable_delete(SfPipeline *p, SfIdentity *id)
{
	SfIdTable  *t = &p->idtable;
	bool		old = in_old(t, id->hash);
	SfIdSlot   *slots = old ? t->oslots : t->slots;
	uint8	   *tags = old ? t->otags : t->tags;
	uint64		cap = old ? t->ocap : t->cap;
	uint64		i = home(id->hash, cap);
	uint8		tag = hash_tag(id->hash);

	for (;;)
	{
		uint8		c = tags[i];

		if (c == TAG_EMPTY)
			elog(ERROR, "streamforge: forgotten identity not in the table");
		if (c == tag && sf_id_ptr(p, slots[i].handle) == id)
			break;
		i = next_slot(i, cap);
	}
	tags[i] = TAG_TOMB;
	if (old)
		t->oused--;
	else
	{
		t->used--;
		t->tomb++;
	}
	t->hint_valid = false;
}

/* Start loading the table slot where event_id's search begins */
void
sf_idtable_prefetch(SfPipeline *p, uint32 hash)
{
#ifdef __GNUC__
	SfIdTable  *t = &p->idtable;
	uint64		i;

	if (in_old(t, hash))
	{
		i = home(hash, t->ocap);
		__builtin_prefetch(&t->otags[i]);
		__builtin_prefetch(&t->oslots[i]);
		return;
	}
	i = home(hash, t->cap);
	__builtin_prefetch(&t->tags[i]);
	__builtin_prefetch(&t->slots[i]);
#endif
}

/* The same, for the layers above (a decoder's bulk insert) */
void
sf_idtable_prefetch_hash(SfPipeline *p, uint32 hash)
{
	sf_idtable_prefetch(p, hash);
}

/*
 * Make room for n more identities in one resize (a decoder that knows how
 * many it will add), at about two thirds full, so that neither the load
 * nor the ingests that follow it rehash the table soon.  A growth under
 * way is finished first.
 */
void
sf_idtable_reserve(SfPipeline *p, uint64 n)
{
	SfIdTable  *t = &p->idtable;
	uint64		want;

	migrate_finish(p);
	/* the identities' blocks (about 48 bytes each) are prefaulted too */
	p->idstore.prefault_until = (uint32) Min((uint64) p->idstore.nblocks +
											 n * 48 / ID_BLOCK + 1,
											 ID_MAX_BLOCKS);
	want = t->used + n;
	if ((want + 1) * 5 <= t->cap * 4)
		return;
	table_resize(p, Max(want + want / 2, t->cap));
}

/*
 * Iterate: *pos starts at 0; returns NULL at the end.  Positions below cap
 * are the table's slots, the next ocap the old table's (during a growth).
 */
static inline bool
idtable_step(SfIdTable *t, uint64 *pos, uint32 *handle)
{
	while (*pos < t->cap)
	{
		uint64		i = (*pos)++;

		if (t->tags[i] >= 2)
		{
			*handle = t->slots[i].handle;
			return true;
		}
	}
	while (*pos - t->cap < t->ocap)
	{
		uint64		i = (*pos)++ - t->cap;

		if (t->otags[i] >= 2)
		{
			*handle = t->oslots[i].handle;
			return true;
		}
	}
	return false;
}

SfIdentity *
sf_idtable_next(SfPipeline *p, uint64 *pos)
{
	uint32		handle;

	if (!idtable_step(&p->idtable, pos, &handle))
		return NULL;
	return sf_id_ptr(p, handle);
}

/* The same, with the identity's handle */
SfIdentity *
sf_idtable_next_handle(SfPipeline *p, uint64 *pos, uint32 *handle)
{
	if (!idtable_step(&p->idtable, pos, handle))
		return NULL;
	return sf_id_ptr(p, *handle);
}

/*
 * Remove a remembered identity from the identity table (retention.c forgets
 * it); the record itself stays valid for the slots and late rows that still
 * refer to it.
 */
void
sf_identity_unlink(SfPipeline *p, SfIdentity *id)
{
	idtable_delete(p, id);
	p->nidentities--;
}
