/*-------------------------------------------------------------------------
 *
 * engine.c
 *	  A pipeline's state and the three operations that change it: ingest,
 *	  advance and mark_idle.
 *
 * This file also creates and frees pipelines (keys are interned in
 * keys.c), records deliveries and late rows, and has the functions a
 * rebuild uses to put a state together (sf_identity_add,
 * sf_partition_append, sf_late_append and the like: the codec's decoders,
 * redefine.c, final_rows.c).  The layers
 * above call it through engine.h; a pipeline is used by one backend at a
 * time (persist.c owns it), so nothing here locks.
 *
 * Design.  An operation runs in two phases.  The first checks everything
 * that can fail, in the order docs/semantics.md fixes (partition, offset, identity,
 * then bigint ranges of every bucket the event enters), without changing
 * anything: an error leaves the pipeline exactly as it was.  The second
 * mutates: it records the delivery and the identity, updates the buckets of
 * every window (saving their pre-images in the dirty set, window.c), and
 * finishes with reconciliation and finalization (reconcile.c).  Only out-of-memory can interrupt the
 * second phase; p->busy then stays set and the owner discards the pipeline.
 *
 * Memory.  Everything lives in p->cxt.  Identities are not allocated here
 * but in identity.c's store of handle-addressed blocks, with their event_id
 * inline; with retention, retention.c frees them.  Without retention, keys
 * are bump-allocated from an arena and live as long as the pipeline, since
 * deduplication and the delivery history last for its lifetime; with
 * retention they are palloc'd and freed by sf_keys_collect once nothing
 * refers to them.  Keys are interned, so buckets and identities share them
 * and compare them by pointer.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/engine/engine.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "miscadmin.h"

#include "engine/engine.h"
#include "engine/engine_int.h"

/* ----------------------------------------------------------------
 * Identities (keys are interned in keys.c)
 * ----------------------------------------------------------------
 */
static SfIdentity *
identity_lookup_hashed(SfPipeline *p, const char *event_id, int len,
					   uint32 hash, uint32 *handle)
{
	return sf_idtable_lookup(p, event_id, len, hash, handle);
}

static SfIdentity *
identity_add_hashed(SfPipeline *p, const char *event_id, int event_id_len,
					uint32 hash, SfString *key, int64 event_time, int64 value,
					bool late, uint32 *handle)
{
	SfIdentity *id;

	id = sf_identity_new(p, event_id, event_id_len, hash, handle);
	id->key = key;
	id->event_time = event_time;
	id->value = value;
	id->late = late;
	sf_idtable_insert(p, *handle, hash);
	p->nidentities++;
	if (p->def.has_retention)
		sf_retention_track(p, id);
	return id;
}

/*
 * Remember a new unique event.  The caller has checked that event_id is
 * unknown.
 */
SfIdentity *
sf_identity_add(SfPipeline *p, const char *event_id, int event_id_len,
				SfString *key, int64 event_time, int64 value, bool late,
				uint32 *handle)
{
	return identity_add_hashed(p, event_id, event_id_len,
							   sf_hash_event_id(event_id, event_id_len),
							   key, event_time, value, late, handle);
}

/* The same, for a caller that has event_id's sf_hash_event_id already */
SfIdentity *
sf_identity_add_hash(SfPipeline *p, const char *event_id, int event_id_len,
					 uint32 hash, SfString *key, int64 event_time,
					 int64 value, bool late, uint32 *handle)
{
	return identity_add_hashed(p, event_id, event_id_len, hash, key,
							   event_time, value, late, handle);
}

static int
identity_cmp(const void *a, const void *b)
{
	const SfIdentity *x = *(SfIdentity *const *) a;
	const SfIdentity *y = *(SfIdentity *const *) b;
	int			c = memcmp(x->event_id, y->event_id,
						   Min(x->event_id_len, y->event_id_len));

	if (c != 0)
		return c;
	return (x->event_id_len > y->event_id_len) -
		(x->event_id_len < y->event_id_len);
}

/* All identities sorted by event_id bytes, palloc'd in CurrentMemoryContext */
SfIdentity **
sf_identity_array(SfPipeline *p, int64 *n)
{
	SfIdentity **arr;
	SfIdentity *id;
	uint64		pos = 0;
	int64		i = 0;

	arr = palloc_extended(Max(p->nidentities, 1) * sizeof(SfIdentity *),
						  MCXT_ALLOC_HUGE);
	while ((id = sf_idtable_next(p, &pos)) != NULL)
	{
		if (i >= p->nidentities)
			elog(ERROR, "streamforge: identity count mismatch");
		if ((i & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		arr[i++] = id;
	}
	if (i != p->nidentities)
		elog(ERROR, "streamforge: identity count mismatch");
	if (i > 1)
		qsort(arr, i, sizeof(SfIdentity *), identity_cmp);
	*n = i;
	return arr;
}

/*
 * A large history grows by a quarter, and copying it in the call that
 * fills it took one call tens of milliseconds at millions of deliveries
 * (issue 39: no write call may take more than twice its median).  So once
 * it is three quarters full, the next array is allocated and the slots
 * written so far are copied into it ahead, PARTITION_COPY_STEP per append
 * (5 would do: a quarter of the capacity is left to append), and the growth
 * only copies what is left and swaps the arrays.  The pace is what a call
 * pays: the copy writes the new array's fresh pages, and at 32 slots per
 * append from seven eighths full (128 bytes of new memory per delivery) a
 * 10,000-event call doubled its CPU time for the eight calls of each copy.
 * The slots below head +
 * used never change (appends write past them; the compaction that moves
 * them drops the copy), so the copy stays exact.  Memory: both arrays
 * exist during the last quarter (repalloc's copy had both for one call).
 * A journal replay does not copy ahead: it has no call to keep short, and
 * 24 bytes copied per append between its random accesses cost a cold load
 * (a new backend's, a background worker's) about 180 ns per delivery, 6%
 * of its CPU above 2^20 deliveries (issue 39, a perf profile of the small
 * transactions' pattern); it grows in one copy, as repalloc did.  A copy
 * under way when the replay starts is finished by the growth.
 */
#define PARTITION_GROW_FROM	((int64) 1 << 20)
#define PARTITION_COPY_STEP	6

static inline int64
partition_next_cap(int64 capacity)
{
	return capacity < 64 ? 64 :
		capacity < PARTITION_GROW_FROM ? capacity * 2 :
		capacity + capacity / 4;
}

static void
partition_copy_ahead(SfPipeline *p, SfPartition *part, int64 filled)
{
	int64		n;

	if (part->grow == NULL)
	{
		part->grow_cap = partition_next_cap(part->capacity);
		part->grow = MemoryContextAllocHuge(p->cxt,
											part->grow_cap * sizeof(uint32));
		part->grow_copied = 0;
	}
	n = Min(filled - part->grow_copied, PARTITION_COPY_STEP);
	if (n > 0)
	{
		memcpy(part->grow + part->grow_copied,
			   part->deliveries + part->grow_copied, n * sizeof(uint32));
		part->grow_copied += n;
	}
}

/*
 * The history array of a decoded partition of n deliveries, for the
 * codec's decoders, which fill slots 0 .. n - 1 (consumed and
 * ndeliveries are theirs to set).  With a growth's room: the replay or the
 * write that follows a load appends at once, and a history sized exactly
 * grew on that first append, copying itself whole into fresh memory (at 5M
 * deliveries 20 MB copied into 25 MB of new pages, issue 39).  The slots
 * the decoder writes are prefaulted at once (huge pages where the kernel
 * gives them) instead of 4 kB page by page.
 */
void
sf_partition_alloc(SfPipeline *p, int partition, int64 n)
{
	SfPartition *part = &p->partitions[partition];
	int64		cap = n + n / 4 + 64;

	Assert(part->deliveries == NULL && n > 0);
	part->deliveries = MemoryContextAllocHuge(p->cxt, cap * sizeof(uint32));
	part->capacity = cap;
	sf_mem_prefault(part->deliveries, n * sizeof(uint32));
}

/*
 * Record event (a handle) as the delivery at the partition's next offset.
 * event is 0 only when a restore rebuilds an offset record that is
 * forgotten (retention), or whose event a recompute took out (remap.c).
 * The slots before head are free once the horizon passed them; they are
 * reused when they are at least as many as the slots in use, so appending
 * costs O(1) amortized.
 */
void
sf_partition_append(SfPipeline *p, int partition, uint32 event)
{
	SfPartition *part = &p->partitions[partition];
	int64		next = part->consumed + 1;
	int64		used = next - part->base;

	if (part->head + used >= part->capacity)
	{
		if (part->head > 0 && part->head >= used)
		{
			memmove(part->deliveries, part->deliveries + part->head,
					used * sizeof(uint32));
			part->head = 0;
			if (part->grow != NULL)
			{
				pfree(part->grow);
				part->grow = NULL;
			}
		}
		else if (part->grow != NULL)
		{
			/* the copy made ahead: finish it and swap */
			memcpy(part->grow + part->grow_copied,
				   part->deliveries + part->grow_copied,
				   (part->capacity - part->grow_copied) * sizeof(uint32));
			pfree(part->deliveries);
			part->deliveries = part->grow;
			part->capacity = part->grow_cap;
			part->grow = NULL;
		}
		else
		{
			/*
			 * Double small arrays; grow large ones by a quarter, so that
			 * at most a fifth of a large history's slots are spare (the
			 * copy stays amortized O(1) per delivery).
			 */
			int64		newcap = partition_next_cap(part->capacity);

			if (part->deliveries == NULL)
				part->deliveries = MemoryContextAllocHuge(p->cxt,
														  newcap * sizeof(uint32));
			else
				part->deliveries = repalloc_huge(part->deliveries,
												 newcap * sizeof(uint32));
			part->capacity = newcap;
		}
	}
	else if (unlikely(part->capacity >= PARTITION_GROW_FROM &&
					  part->head + used >= part->capacity - part->capacity / 4) &&
			 !sf_replaying_journal)
		partition_copy_ahead(p, part, part->head + used);
	part->deliveries[part->head + used] = event;
	part->consumed = next;
	p->ndeliveries++;
	p->mutations++;
	if (p->def.has_retention)
	{
		if (event != 0)
			sf_id_prefix(sf_id_ptr(p, event))->nslots++;
		else
			p->forgotten_offsets++;
	}
	else if (unlikely(event == 0))
		p->removed_offsets++;	/* a recompute took its event out */
}

/* The event recorded at a consumed offset, or NULL if it is not held */
SfIdentity *
sf_partition_slot(const SfPipeline *p, const SfPartition *part, int64 offset)
{
	uint32		h;

	Assert(offset <= part->consumed);
	if (offset < part->base)
		return NULL;
	h = part->deliveries[part->head + (offset - part->base)];
	return h ? sf_id_ptr(p, h) : NULL;
}

/*
 * Restore: the offsets below base of an empty partition are consumed and
 * forgotten.
 */
void
sf_partition_set_base(SfPipeline *p, int partition, int64 base)
{
	SfPartition *part = &p->partitions[partition];

	Assert(part->consumed == -1 && part->base == 0);
	part->base = base;
	part->consumed = base - 1;
	p->ndeliveries += base;
	p->forgotten_offsets += base;
}

void
sf_late_append(SfPipeline *p, int partition, int64 offset, SfIdentity *event,
			   int64 watermark)
{
	SfLateEvent *l;
	int64		head = p->late - p->late_alloc;

	if (head + p->nlate >= p->late_capacity)
	{
		if (head > 0 && head >= p->nlate)
		{
			memmove(p->late_alloc, p->late, p->nlate * sizeof(SfLateEvent));
			p->late = p->late_alloc;
		}
		else
		{
			int64		newcap = p->late_capacity ? p->late_capacity * 2 : 16;

			if (p->late_alloc == NULL)
				p->late_alloc = MemoryContextAllocHuge(p->cxt,
													   newcap * sizeof(SfLateEvent));
			else
				p->late_alloc = repalloc_huge(p->late_alloc,
											  newcap * sizeof(SfLateEvent));
			p->late_capacity = newcap;
			p->late = p->late_alloc + head;
		}
	}
	l = &p->late[p->nlate];
	l->late_seq = p->late_forgotten + p->nlate + 1;
	l->partition = partition;
	l->source_offset = offset;
	l->event = event;
	l->watermark = watermark;
	p->nlate++;
	if (p->def.has_retention)
		event->late_held = true;
}

/*
 * Rebuilding a pipeline (restore, a definition or retention change): a late
 * row whose identity retention has forgotten.  The row keeps its event's
 * key, time and value in an identity of its own, marked forgotten and in no
 * table, which retention frees with the row.
 */
void
sf_late_append_forgotten(SfPipeline *p, int partition, int64 offset,
						 const char *event_id, int event_id_len,
						 const char *key, int key_len, int64 event_time,
						 int64 value, int64 watermark)
{
	SfIdentity *event;
	uint32		handle;

	event = sf_identity_new(p, event_id, event_id_len,
							sf_hash_event_id(event_id, event_id_len), &handle);
	event->key = sf_intern_key(p, key, key_len);
	event->event_time = event_time;
	event->value = value;
	event->late = true;
	event->forgotten = true;
	sf_late_append(p, partition, offset, event, watermark);
}

/* ----------------------------------------------------------------
 * Pipeline lifecycle
 * ----------------------------------------------------------------
 */

/*
 * A new, empty pipeline for a normalized definition, in a new memory
 * context under parent.
 */
SfPipeline *
sf_pipeline_create(MemoryContext parent, const SfPipelineDef *def)
{
	MemoryContext cxt;
	MemoryContext old;
	SfPipeline *p;
	int			i;
	int			cap = 0;

	cxt = AllocSetContextCreate(parent, "streamforge pipeline",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);

	p = palloc0(sizeof(SfPipeline));
	p->cxt = cxt;
	p->def = *def;
	p->def.partitions = palloc(Max(def->npartitions, 1) * sizeof(def->partitions[0]));
	memcpy(p->def.partitions, def->partitions,
		   def->npartitions * sizeof(def->partitions[0]));
	p->def.windows = palloc(Max(def->nwindows, 1) * sizeof(SfWindowDef));
	memcpy(p->def.windows, def->windows, def->nwindows * sizeof(SfWindowDef));
	p->def.measures = sf_measures_def_copy(cxt, def->measures);
	if (p->def.measures != NULL && p->def.measures->nvar > 0)
		p->var_cxt = AllocSetContextCreate(cxt, "streamforge aggregate states",
										   ALLOCSET_DEFAULT_SIZES);

	p->partitions = palloc0(Max(def->npartitions, 1) * sizeof(SfPartition));
	for (i = 0; i < def->npartitions; i++)
	{
		strlcpy(p->partitions[i].name, def->partitions[i], SF_NAME_MAX + 1);
		p->partitions[i].consumed = -1;
	}

	sf_keys_init(p, cxt);
	p->keys_freeable = def->has_retention;
	p->keys_threshold = SF_KEYS_COLLECT_MIN;
	sf_idtable_init(p);
	sf_buckets_init(p);
	sf_sessions_init(p);

	for (i = 0; i < def->nwindows; i++)
		cap += sf_window_max_buckets(&def->windows[i]);
	p->assign_cap = Max(cap, 1);
	p->assign_starts = palloc(p->assign_cap * sizeof(int64));
	p->assign_ends = palloc(p->assign_cap * sizeof(int64));
	p->assign_counts = palloc(Max(def->nwindows, 1) * sizeof(int));

	MemoryContextSwitchTo(old);
	return p;
}

void
sf_pipeline_free(SfPipeline *p)
{
	MemoryContextDelete(p->cxt);
}

/* The declared partitions as "a", "b", "c", for a hint (at most 20) */
static char *
partition_list(const SfPipelineDef *def)
{
	StringInfoData buf;
	int			i;

	initStringInfo(&buf);
	for (i = 0; i < def->npartitions && i < 20; i++)
		appendStringInfo(&buf, "%s\"%s\"", i > 0 ? ", " : "",
						 def->partitions[i]);
	if (def->npartitions > 20)
		appendStringInfo(&buf, " and %d more", def->npartitions - 20);
	return buf.data;
}

/*
 * The error of lookup_partition, out of line and cold: its hint would
 * otherwise keep the lookup, on every event's path, from being inlined.
 */
static pg_noinline pg_attribute_cold void
partition_not_found(const SfPipeline *p, const char *name)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("partition \"%s\" does not exist in pipeline \"%s\"",
					sf_msg_cstr(name), p->def.name),
			 errhint("The pipeline's partitions are %s.",
					 partition_list(&p->def))));
}

/*
 * sf_partition_index, inlined: every delivery looks up its partition.  The
 * pipeline remembers the addresses of the last names it found (4 slots by
 * address bits); a name at a remembered address is confirmed with one
 * strcmp (a freed name's address may hold another name later).
 */
static inline int
lookup_partition(SfPipeline *p, const char *name)
{
	int			h = (int) (((uintptr_t) name >> 4) & 3);
	int			i;

	if (p->part_hint_name[h] == name)
	{
		i = p->part_hint_index[h];
		if (likely(i < p->def.npartitions))
		{
			/* strcmp inline: names are short, a call costs more */
			const char *a = name;
			const char *b = p->def.partitions[i];

			while (*a == *b)
			{
				if (*a == '\0')
					return i;
				a++;
				b++;
			}
		}
	}
	i = sf_name_index((const char *) p->def.partitions,
					  sizeof(p->def.partitions[0]),
					  p->def.npartitions, name);
	if (unlikely(i < 0))
		partition_not_found(p, name);
	p->part_hint_name[h] = name;
	p->part_hint_index[h] = i;
	return i;
}

/* ----------------------------------------------------------------
 * Operations
 * ----------------------------------------------------------------
 */
/*
 * errhint naming where an identity was delivered.  Only for an error
 * message: it searches the delivery history (the first partition in name
 * order that holds it, at its lowest offset there).
 */
static int
first_delivery_hint(const SfPipeline *p, const SfIdentity *id)
{
	int			i;

	for (i = 0; i < p->def.npartitions; i++)
	{
		const SfPartition *part = &p->partitions[i];
		int64		o;

		for (o = part->base; o <= part->consumed; o++)
		{
			if ((o & 4095) == 0)
				CHECK_FOR_INTERRUPTS();
			if (sf_partition_slot(p, part, o) == id)
				return errhint("The event was delivered at offset " INT64_FORMAT " of partition \"%s\"; a different event needs a new event_id.",
							   o, part->name);
		}
	}
	return errhint("A different event needs a new event_id.");
}

/*
 * The offset conflict (SF003) of delivery d to partition part of p:
 * a negative offset, an offset that holds held, a different delivery, or
 * (held NULL) an offset past the next one.
 */
void
sf_offset_conflict(const SfPipeline *p, const SfPartition *part,
				   const SfDelivery *d, const SfIdentity *held)
{
	if (d->source_offset < 0)
		ereport(ERROR,
				(errcode(ERRCODE_SF_OFFSET_CONFLICT),
				 errmsg("offset conflict on partition \"%s\" of pipeline \"%s\"",
						part->name, p->def.name),
				 errdetail("Offset " INT64_FORMAT " is negative; offsets start at 0.",
						   d->source_offset)));
	if (held != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_SF_OFFSET_CONFLICT),
				 errmsg("offset conflict on partition \"%s\" of pipeline \"%s\"",
						part->name, p->def.name),
				 errdetail("Offset " INT64_FORMAT " already holds a different delivery (event \"%s\").",
						   d->source_offset,
						   sf_msg_str(held->event_id, held->event_id_len))));
	ereport(ERROR,
			(errcode(ERRCODE_SF_OFFSET_CONFLICT),
			 errmsg("offset conflict on partition \"%s\" of pipeline \"%s\"",
					part->name, p->def.name),
			 errdetail("Expected offset " INT64_FORMAT ", got " INT64_FORMAT ".",
					   part->consumed + 1, d->source_offset),
			 errhint("Deliver offset " INT64_FORMAT " next; streamforge.partitions() shows the consumed_offset of each partition.",
					 part->consumed + 1)));
}

/*
 * The identity conflict (SF002) of delivery d with id, the identity its
 * event id has in p; the hint names where p delivered id.
 */
void
sf_identity_conflict(const SfPipeline *p, const SfDelivery *d,
					 const SfIdentity *id)
{
	ereport(ERROR,
			(errcode(ERRCODE_SF_IDENTITY_CONFLICT),
			 errmsg("identity conflict for event \"%s\" in pipeline \"%s\"",
					sf_msg_str(d->event_id, d->event_id_len),
					p->def.name),
			 errdetail("The event was first delivered with key \"%s\", event_time " INT64_FORMAT " and value " INT64_FORMAT ".",
					   sf_msg_str(id->key->data, id->key->len),
					   id->event_time, id->value),
			 first_delivery_hint(p, id)));
}

/* Count an offset replay of p (sf_offset_check) */
void
sf_count_replay(SfPipeline *p)
{
	if (p->offset_replays == PG_INT64_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("pipeline \"%s\" has counted the most offset replays a bigint holds",
						p->def.name)));
	p->offset_replays++;
	p->mutations++;				/* of a counter only */
}

/*
 * Deliver one event (docs/semantics.md, Deliveries).  Appends the changes
 * it causes to out.
 */
void
sf_engine_ingest(SfPipeline *p, const SfDelivery *d, SfChangeList *out)
{
	SfDeliveryHash h;

	sf_delivery_hash(d, &h);
	sf_engine_ingest_hashed(p, d, &h, out);
}

/*
 * The same, for a caller that already hashed the event_id
 * (sf_delivery_prefetch).
 */
void
sf_engine_ingest_hashed(SfPipeline *p, const SfDelivery *d,
						SfDeliveryHash *h, SfChangeList *out)
{
	SfIdentity *id;
	uint32		handle;
	SfString   *key;
	bool		late = false;
	int		   *nassigned = p->assign_counts;
	int			total = 0;
	int			w;
	const int64 *mv = NULL;
	int			pi;
	SfPartition *part;

	/*
	 * A measures pipeline's delivery comes with its measures (aggregates.c),
	 * taken before anything can raise an error: measures left behind by a
	 * refused delivery (an unknown partition) would be taken by the next
	 * delivery, of a one-measure function too (issue 38).
	 */
	if (unlikely(p->def.measures != NULL))
		mv = sf_take_measures(p);
	pi = lookup_partition(p, d->partition);
	part = &p->partitions[pi];
	h->partition = pi;

	/* offsets */
	if (sf_offset_check(p, part, d, mv, &id))
	{
		sf_count_replay(p);
		h->interned = (id == NULL || id->forgotten) ? NULL : id->key;
		return;					/* a replay: no-op */
	}

	/* identity */
	id = identity_lookup_hashed(p, d->event_id, d->event_id_len, h->event_id,
								&handle);
	if (id != NULL)
	{
		if (!sf_identity_matches(id, d) ||
			(unlikely(mv != NULL) && !sf_measures_match(p, id, mv)))
			sf_identity_conflict(p, d, id);
		/* a duplicate: consumes the offset, changes nothing else */
		sf_partition_append(p, pi, handle);
		h->interned = id->key;
		return;
	}

	/* a new unique event: late? */
	late = sf_event_late(&p->def, p->has_watermark, p->watermark,
						 d->event_time);

	if (!late)
	{
		/* check every bucket's bounds before changing anything */
		total = sf_assign_all(&p->def, d->event_time, p->assign_starts,
							  p->assign_ends, p->assign_cap, nassigned);
		/* new buckets at most: refuse before anything changes */
		sf_check_live_buckets(p, total);
	}

	/* mutate */
	sf_op_begin(p);
	key = sf_intern_key_hashed(p, d->key, d->key_len, h->key);
	h->interned = key;
	id = identity_add_hashed(p, d->event_id, d->event_id_len, h->event_id, key,
							 d->event_time, d->value, late, &handle);
	if (unlikely(mv != NULL))
	{
		sf_id_set_measures(p, id, mv);
		p->cur_event = id;
	}
	sf_partition_append(p, pi, handle);
	if (late)
		sf_late_append(p, pi, d->source_offset, id, p->watermark);
	else
	{
		int			k = 0;

		for (w = 0; w < p->def.nwindows; w++)
		{
			const SfWindowDef *wd = &p->def.windows[w];
			int			n = nassigned[w];
			int			j;

			if (sf_window_merges(wd))
				sf_session_add(p, w, key, p->assign_starts[k],
							   p->assign_ends[k], d->value);
			else
			{
				uint32		kwhash = sf_bucket_key_hash(w, key);

				for (j = 0; j < n; j++)
				{
					SfBucket   *b = sf_bucket_get_hashed(p, w, key, kwhash,
														 p->assign_starts[k + j],
														 p->assign_ends[k + j]);

					/*
					 * Only a ready bucket can change what is visible: an
					 * ingest moves no watermark, so a pending one stays
					 * pending and sf_op_finish would skip its pre-image.
					 */
					if (b->ready)
						sf_dirty_touch(p, b);
					sf_agg_add(&b->agg, d->value);
					if (unlikely(mv != NULL))
						sf_magg_add(p, &b->agg, id);
				}
			}
			k += n;
		}
	}
	sf_op_finish_quick(p, out);
	/* tested here, inline: a pipeline without retention pays no call */
	if (p->def.has_retention)
		sf_retention_forget(p);	/* built-in progress: an advance after the accepted event (progress.c) */
	if (p->def.has_out_of_orderness && !late)
		sf_progress_after_accept(p, pi, d->event_time, out);
}

/*
 * Partition reports progress (docs/semantics.md, Watermarks; 5.6).
 */
void
sf_engine_advance(SfPipeline *p, const char *partition, int64 progress,
				  SfChangeList *out)
{
	sf_engine_advance_index(p, lookup_partition(p, partition), progress, out);
}

/* sf_engine_advance of partition number pi (the head's replay, head_replay.c) */
void
sf_engine_advance_index(SfPipeline *p, int pi, int64 progress,
						SfChangeList *out)
{
	SfPartition *part = &p->partitions[pi];

	sf_op_begin(p);
	part->idle = false;
	if (!part->has_progress || progress > part->progress)
	{
		part->has_progress = true;
		part->progress = progress;
	}
	if (sf_clock_update(p))
		sf_release_ready(p);
	sf_op_finish(p, out);
	if (p->def.has_retention)
		sf_retention_forget(p);
}

void
sf_engine_mark_idle(SfPipeline *p, const char *partition, SfChangeList *out)
{
	SfPartition *part = &p->partitions[lookup_partition(p, partition)];

	sf_op_begin(p);
	part->idle = true;
	if (sf_clock_update(p))
		sf_release_ready(p);
	sf_op_finish(p, out);
	if (p->def.has_retention)
		sf_retention_forget(p);
}

void
sf_get_stats(const SfPipeline *p, SfStats *stats)
{
	int			i;

	memset(stats, 0, sizeof(SfStats));
	stats->deliveries = p->ndeliveries;
	stats->remembered_identities = p->nidentities;
	stats->remembered_offsets = p->ndeliveries - p->forgotten_offsets;
	stats->remembered_late_events = p->nlate;
	stats->forgotten_offsets = p->forgotten_offsets;
	stats->forgotten_late_events = p->late_forgotten;
	/*
	 * Without retention these are the counters of 0.1.0.  With it,
	 * late_events still counts every late event (it is the last late_seq,
	 * which resync_outputs relies on), while accepted and duplicate_ids
	 * describe what is remembered: forgotten identities are not counted.
	 */
	stats->late_events = p->late_forgotten + p->nlate;
	stats->accepted = p->nidentities;
	/* an offset whose event a recompute took out holds no event */
	stats->duplicate_ids = stats->remembered_offsets - p->nidentities -
		p->removed_offsets;
	if (!p->def.has_retention)
		stats->accepted -= p->nlate;
	else
	{
		for (int64 k = 0; k < p->nlate; k++)
			if (!p->late[k].event->forgotten)
				stats->accepted--;
	}
	stats->offset_replays = p->offset_replays;
	stats->changes_emitted = p->seq;
	stats->live_buckets = p->nbuckets;
	stats->visible_rows = p->nready;
	stats->partitions = p->def.npartitions;
	for (i = 0; i < p->def.npartitions; i++)
		if (p->partitions[i].idle)
			stats->idle_partitions++;
}
