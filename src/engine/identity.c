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
 *	  in the identity), in 256 segments chosen by the hash's top bits,
 *	  each at most 64-80% full (its own limit), with tombstones for the
 *	  identities retention forgets.  A segment doubles up to a 256th of
 *	  ID_TABLE_DOUBLE_MAX (2^20) slots and grows by a quarter above, so
 *	  that only large tables trade rehashes for memory; it grows in one
 *	  call, and the segments' different limits spread their growths (issue
 *	  39: see "The event_id table" below), so no call pays for
 *	  re-inserting more than a few 256ths of the identities.  The hash in
 *	  the slot costs 4 bytes a slot
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
static void
prefault_pages(void *ptr, Size len, Size min_len)
{
#if defined(MADV_POPULATE_WRITE) || defined(MADV_HUGEPAGE)
	uintptr_t	page = 4096;
	uintptr_t	start = ((uintptr_t) ptr + page - 1) & ~(page - 1);
	uintptr_t	end = ((uintptr_t) ptr + len) & ~(page - 1);

	if (len < min_len || end <= start)
		return;
#ifdef MADV_HUGEPAGE
	if (end - start >= 2 * 1024 * 1024)
		(void) madvise((void *) start, end - start, MADV_HUGEPAGE);
#endif
#ifdef MADV_POPULATE_WRITE
	(void) madvise((void *) start, end - start, MADV_POPULATE_WRITE);
#endif
#endif
}

void
sf_mem_prefault(void *ptr, Size len)
{
	prefault_pages(ptr, len, 1024 * 1024);
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
	id->foreign = false;
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
 * Segments (issue 39).  The table is ID_SEGMENTS independent tables,
 * chosen by the top ID_SEG_BITS bits of the hash; each grows in one call,
 * re-inserting only its own entries (a 256th of the table), when its
 * used and deleted slots pass its grow_at.  A single table re-inserted
 * every identity in one call when it grew (100-250 ms at 5M identities);
 * migrating it a few slots per insert instead spread that work but left
 * each call of a migration 2-4x the median (the new table's fresh pages,
 * written at the migration's pace) and its lookups in an old table filling
 * past 80%.  With segments, hashes spread evenly, so all segments would
 * fill and grow in the same call; so each segment grows at its own load,
 * from 64% (segment 0) to 80% (the last), a spread of exactly the growth
 * factor of a large segment (1.25): their growths are spread evenly over
 * the inserts between two growths of one segment, a few per
 * ingest_batch call at any size.  The average load, and the memory per
 * identity, is that of a single table growing at 72% (9 bytes a slot:
 * 12.5 bytes an identity on average above 2^20 slots).
 *
 * A lookup, insert or delete probes one segment: one shift more than a
 * single table.  A segment doubles below ID_SEG_DOUBLE_MAX slots and grows
 * by a quarter above; a segment mostly of tombstones (retention) is
 * rehashed in place.  Nothing persisted depends on the table: every
 * encoder sorts the identities by handle.
 * ----------------------------------------------------------------
 */
#define ID_SEG_BITS		8
#define ID_SEGMENTS		(1 << ID_SEG_BITS)
#define ID_SEG_INIT		8			/* slots of a new segment */
#define ID_SEG_DOUBLE_MAX	(ID_TABLE_DOUBLE_MAX / ID_SEGMENTS)

static inline SfIdSeg *
seg_of(const SfIdTable *t, uint32 hash)
{
	return &t->segs[hash >> (32 - ID_SEG_BITS)];
}

/* Where the search for hash starts in its segment: multiply-shift */
static inline uint32
seg_home(uint32 hash, uint32 cap)
{
	return (uint32) (((uint64) (uint32) (hash << ID_SEG_BITS) * cap) >> 32);
}

static inline uint32
seg_next(uint32 i, uint32 cap)
{
	return i + 1 == cap ? 0 : i + 1;
}

/*
 * The used + deleted slots above which segment index of cap slots grows:
 * from 64% of cap (segment 0) to 80% (the last), in 1/1024ths.
 */
static inline uint32
seg_grow_at(int index, uint32 cap)
{
	uint64		lim = 655 + (uint64) (819 - 655) * index / (ID_SEGMENTS - 1);

	return (uint32) Max((uint64) cap * lim / 1024, 1);
}

/*
 * Map the whole pages of a new array now (a decoder's bulk insert, which
 * writes all of it at once), with huge pages where possible; like
 * sf_mem_prefault for any size.
 */
static void
seg_prefault(void *ptr, Size len)
{
	prefault_pages(ptr, len, 0);
}

/*
 * Rehash segment index into newcap slots, in one call (a 256th of the
 * table).  prefault: map the new arrays at once (a decoder's reserve).
 */
static void
seg_resize(SfPipeline *p, int index, uint32 newcap, bool prefault)
{
	SfIdSeg    *s = &p->idtable.segs[index];
	SfIdSlot   *old = s->slots;
	uint8	   *oldtags = s->tags;
	uint32		oldcap = s->cap;
	SfIdSlot   *slots;
	uint8	   *tags;

	slots = MemoryContextAllocHuge(p->cxt, (Size) newcap * sizeof(SfIdSlot));
	tags = MemoryContextAllocHuge(p->cxt, newcap);
	if (prefault)
		seg_prefault(slots, (Size) newcap * sizeof(SfIdSlot));
	memset(tags, TAG_EMPTY, newcap);
	/* the hashes are in the slots: the old one is read in order, no identity */
	for (uint32 i = 0; i < oldcap; i++)
	{
		uint32		j;

		if (oldtags[i] < 2)
			continue;
		j = seg_home(old[i].hash, newcap);
		while (tags[j] != TAG_EMPTY)
			j = seg_next(j, newcap);
		slots[j] = old[i];
		tags[j] = oldtags[i];
	}
	s->slots = slots;
	s->tags = tags;
	s->cap = newcap;
	s->tomb = 0;
	s->grow_at = seg_grow_at(index, newcap);
	p->idtable.hint_valid = false;
	if (old)
	{
		pfree(old);
		pfree(oldtags);
	}
}

void
sf_idtable_init(SfPipeline *p)
{
	SfIdTable  *t = &p->idtable;

	t->segs = MemoryContextAllocZero(p->cxt, ID_SEGMENTS * sizeof(SfIdSeg));
	t->hint_valid = false;
	for (int i = 0; i < ID_SEGMENTS; i++)
		seg_resize(p, i, ID_SEG_INIT, false);
}

/*
 * One segment's search for event_id: sets the hint when it is not there.
 * Always inlined: it is the whole of a lookup, once per event.
 */
static pg_attribute_always_inline SfIdentity *
probe(SfPipeline *p, const SfIdSeg *s, const char *event_id, int len,
	  uint32 hash, uint32 *handle)
{
	SfIdTable  *t = &p->idtable;
	const uint8 *tags = s->tags;
	const SfIdSlot *slots = s->slots;
	uint32		cap = s->cap;
	uint32		i = seg_home(hash, cap);
	uint8		tag = hash_tag(hash);
	uint32		free_slot = PG_UINT32_MAX;

	for (;;)
	{
		uint8		c = tags[i];

		if (c == TAG_EMPTY)
		{
			t->hint_slot = free_slot != PG_UINT32_MAX ? free_slot : i;
			t->hint_hash = hash;
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
		else if (c == TAG_TOMB && free_slot == PG_UINT32_MAX)
			free_slot = i;
		i = seg_next(i, cap);
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
	return probe(p, seg_of(&p->idtable, hash), event_id, len, hash, handle);
}

/* Add an identity whose event_id the table does not hold */
void
sf_idtable_insert(SfPipeline *p, uint32 handle, uint32 hash)
{
	SfIdTable  *t = &p->idtable;
	SfIdSeg    *s = seg_of(t, hash);
	uint32		i;

	if (unlikely(s->used + s->tomb + 1 > s->grow_at))
	{
		uint64		newcap = s->cap;

		/* mostly live entries: grow; mostly tombstones: rehash in place */
		if ((uint64) (s->used + 1) * 5 > (uint64) s->cap * 2)
			newcap = s->cap < ID_SEG_DOUBLE_MAX ?
				(uint64) s->cap * 2 : (uint64) s->cap + s->cap / 4;
		if (newcap > PG_UINT32_MAX / 2)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("pipeline \"%s\" remembers too many events",
							p->def.name)));
		seg_resize(p, (int) (s - t->segs), (uint32) newcap, false);
	}
	if (t->hint_valid && t->hint_hash == hash)
		i = t->hint_slot;
	else
	{
		i = seg_home(hash, s->cap);
		while (s->tags[i] >= 2)
			i = seg_next(i, s->cap);
	}
	Assert(s->tags[i] < 2);
	if (s->tags[i] == TAG_TOMB)
		s->tomb--;
	s->slots[i].handle = handle;
	s->slots[i].hash = hash;
	s->tags[i] = hash_tag(hash);
	s->used++;
	t->hint_valid = false;
}

/* Retention: take a remembered identity out of the table */
static void
idtable_delete(SfPipeline *p, SfIdentity *id)
{
	SfIdTable  *t = &p->idtable;
	SfIdSeg    *s = seg_of(t, id->hash);
	uint32		i = seg_home(id->hash, s->cap);
	uint8		tag = hash_tag(id->hash);

	for (;;)
	{
		uint8		c = s->tags[i];

		if (c == TAG_EMPTY)
			elog(ERROR, "streamforge: forgotten identity not in the table");
		if (c == tag && sf_id_ptr(p, s->slots[i].handle) == id)
			break;
		i = seg_next(i, s->cap);
	}
	s->tags[i] = TAG_TOMB;
	s->used--;
	s->tomb++;
	t->hint_valid = false;
}

/* Start loading the table slot where event_id's search begins */
void
sf_idtable_prefetch(SfPipeline *p, uint32 hash)
{
#ifdef __GNUC__
	SfIdSeg    *s = seg_of(&p->idtable, hash);
	uint32		i = seg_home(hash, s->cap);

	__builtin_prefetch(&s->tags[i]);
	__builtin_prefetch(&s->slots[i]);
#endif
}

/* The same, for the layers above (a decoder's bulk insert) */
void
sf_idtable_prefetch_hash(SfPipeline *p, uint32 hash)
{
	sf_idtable_prefetch(p, hash);
}

/*
 * Make room for n more identities (a decoder that knows how many it will
 * add), every segment at about two thirds full after them, so that
 * neither the load nor the ingests that follow it grow a segment soon;
 * each resized segment is mapped at once.
 */
void
sf_idtable_reserve(SfPipeline *p, uint64 n)
{
	SfIdTable  *t = &p->idtable;
	uint64		share = n / ID_SEGMENTS;

	/* the identities' blocks (about 48 bytes each) are prefaulted too */
	p->idstore.prefault_until = (uint32) Min((uint64) p->idstore.nblocks +
											 n * 48 / ID_BLOCK + 1,
											 ID_MAX_BLOCKS);
	/* a segment's share of random hashes: the mean, plus some deviations */
	share += share / 8 + 16;
	for (int i = 0; i < ID_SEGMENTS; i++)
	{
		SfIdSeg    *s = &t->segs[i];
		uint64		want = (uint64) s->used + share;
		uint64		newcap;

		if (want + s->tomb <= s->grow_at)
			continue;
		newcap = Max(want + want / 2, s->cap);
		if (newcap > PG_UINT32_MAX / 2)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("pipeline \"%s\" remembers too many events",
							p->def.name)));
		CHECK_FOR_INTERRUPTS();
		seg_resize(p, i, (uint32) newcap, true);
	}
}

/*
 * Iterate: *pos starts at 0; returns false at the end.  A position is a
 * segment (high 32 bits) and a slot in it.
 */
static inline bool
idtable_step(SfIdTable *t, uint64 *pos, uint32 *handle)
{
	for (;;)
	{
		uint64		seg = *pos >> 32;
		uint32		i = (uint32) *pos;
		SfIdSeg    *s;

		if (seg >= ID_SEGMENTS)
			return false;
		s = &t->segs[seg];
		if (i >= s->cap)
		{
			*pos = (seg + 1) << 32;
			continue;
		}
		(*pos)++;
		if (s->tags[i] >= 2)
		{
			*handle = s->slots[i].handle;
			return true;
		}
	}
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
