/*-------------------------------------------------------------------------
 *
 * journal.c
 *	  The journal entries a write call appends, and their replay.
 *
 * Every successful write call (ingest, ingest_batch, append, append_batch,
 * ingest_json, advance, mark_idle) adds one entry holding its inputs to the
 * pipeline's journal: this file encodes it (sf_journal_encode_*), and
 * persist/persist.c stores it (sf_persist_journal_*) at the pipeline's next
 * journal position.  A call at the transaction's top level is buffered
 * until commit (or until the buffer is large), and the buffered entries of
 * consecutive positions are stored as one row, at the position of the last
 * (sf_journal_sequence, SF_JOURNAL_FORMAT_SEQUENCE below); a call inside a
 * subtransaction is stored at once, one entry per row.  The engine is
 * deterministic, so replaying the entries after a snapshot, in position
 * order, rebuilds exactly the state, seq and late_seq that the original
 * calls produced, including the offset_replays counter.  Entries are
 * inputs, never outputs: an entry costs what the call delivered, not what
 * the pipeline holds.
 *
 * Entry format (all integers big-endian, fixed width):
 *
 *		uint8	format			SF_JOURNAL_FORMAT
 *		uint8	kind			'I' ingest, 'A' advance, 'M' mark_idle
 *		'I':	uint32 n, then n deliveries:
 *				uint16 partition	index into def.partitions (sorted by name,
 *									so stable across restore)
 *				int64  source_offset
 *				uint32 len, bytes	event_id
 *				uint32 len, bytes	key
 *				int64  event_time
 *				int64  value
 *		'A':	uint16 partition, int64 progress
 *		'M':	uint16 partition
 *		'V':	(0.3.0, measures pipelines: ingest_measures, ingest_measures_batch;
 *				read only since 0.4.0, which writes them in format 3)
 *				uint32 n, uint16 nmeasures, then n deliveries as for 'I'
 *				with nmeasures int64 measures in place of value; a
 *				pipeline with nullable measures (0.4.0) has one word
 *				more, nmeasures + 1, the last the delivery's NULL mask
 *				(bit m: measure m is NULL, its word 0)
 *
 * Since 0.3.0 an ingest entry is written in the compact format 3 instead
 * (format 1 entries of 0.1.0 and 0.2.0, and advance and mark_idle entries,
 * which stay format 1, replay as before; a database still at 0.1.0 or
 * 0.2.0 runs the compat library, release 0.3.0's, which writes format 1
 * for it, docs/packaging.md):
 *
 *		uint8	format			SF_JOURNAL_FORMAT_COMPACT
 *		uint8	kind			'I' (or 'V', below)
 *		varint	n, then n deliveries:
 *				varint partition	index into def.partitions
 *				zigzag varint		source_offset minus the offset of the
 *									last delivery of the same partition in
 *									the entry (0 for its first: a cache of
 *									SF_JOURNAL_OFFSET_SLOTS partitions by
 *									index modulo its size, which the reader
 *									keeps the same way)
 *				varint shared, varint len, len bytes
 *									event_id: the first shared bytes of the
 *									previous delivery's event_id, then these
 *				varint ref			key: 0 for a new one, then varint len,
 *									len bytes (it becomes key ref 1, 2, ...
 *									in the order of appearance), else the
 *									ref-th new key of the entry
 *				zigzag varint		event_time minus the previous delivery's
 *									(0 for the first)
 *				zigzag varint		value
 *		'V':	(0.4.0, measures pipelines; format 1 'V' entries of 0.3.0
 *				replay as before) varint n, varint nmeasures (the words of
 *				format 1's 'V'), then n deliveries as for 'I' with
 *				nmeasures zigzag varints in place of the value
 *
 * A varint is LEB128 (7 bits a byte, low first, at most 10 bytes), a zigzag
 * varint the varint of (v << 1) ^ (v >> 63); differences wrap around in 64
 * bits.  Event ids, offsets and times of a batch are nearly sequential and
 * its keys repeat, so a delivery of the benchmark takes about 13 bytes
 * instead of 47 (docs/performance.md).
 *
 * A journal row holds one entry in one of those formats, or several (persist.c
 * buffers the entries of a transaction's top-level write calls and stores
 * each run of consecutive positions as one row before commit):
 *
 *		uint8	format			SF_JOURNAL_FORMAT_SEQUENCE
 *		then, until the end:	uint32 len, then len bytes: one entry of
 *								format SF_JOURNAL_FORMAT or
 *								SF_JOURNAL_FORMAT_COMPACT, as above
 *
 * A sequence is replayed entry by entry, exactly as separate rows would be.
 *
 * Replay validates every field against the pipeline and the entry's length
 * and raises ERRCODE_DATA_CORRUPTED for anything that does not fit; an
 * entry the engine rejects is reported the same way.  Entries are built
 * and parsed in the caller's memory context; nothing here is kept.
 * Called only by persist/persist.c.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/codec/journal.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "libpq/pqformat.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "utils/elog.h"

#include "codec/codec.h"
#include "engine/engine.h"

#define SF_JOURNAL_FORMAT	1
#define SF_JOURNAL_FORMAT_SEQUENCE	2
#define SF_JOURNAL_FORMAT_COMPACT	3

#define SF_JOURNAL_INGEST		'I'
#define SF_JOURNAL_ADVANCE		'A'
#define SF_JOURNAL_MARK_IDLE	'M'
#define SF_JOURNAL_INGEST_MEASURES	'V'

/* The smallest encoded delivery: partition, offset, 2 lengths, time, value */
#define SF_JOURNAL_MIN_DELIVERY	(2 + 8 + 4 + 4 + 8 + 8)

/* The smallest compact delivery: one byte per field */
#define SF_JOURNAL_MIN_COMPACT	7

/* The partitions whose last offset a compact entry remembers (power of 2) */
#define SF_JOURNAL_OFFSET_SLOTS	16

/* The most bytes a compact delivery adds besides its event_id and key */
#define SF_JOURNAL_COMPACT_BOUND	(3 + 10 + 5 + 5 + 5 + 5 + 10 + 10)

/* The encoder's key table: at most this many slots (power of 2) */
#define SF_JOURNAL_KEY_SLOTS_MAX	8192

/* A bounds-checked reader over one entry */
typedef struct JournalReader
{
	const SfPipeline *p;
	const unsigned char *data;
	Size		len;
	Size		pos;
} JournalReader;

static int	journal_partition_index(SfPipeline *p, const char *name);
static void journal_begin(StringInfo buf, char kind);
static void journal_corrupt(const JournalReader *r, const char *detail)
			pg_attribute_noreturn();
static const unsigned char *journal_read(JournalReader *r, Size n);
static uint8 journal_read_uint8(JournalReader *r);
static uint32 journal_read_uint32(JournalReader *r);
static int64 journal_read_int64(JournalReader *r);
static int	journal_read_partition(JournalReader *r);
static const char *journal_read_string(JournalReader *r, int *len);
static void journal_replay_op(SfPipeline *p, JournalReader *r, uint8 kind);
static void journal_replay_compact(SfPipeline *p, JournalReader *r,
								   uint8 kind);

/*
 * The index of a partition the call just used successfully.  The engine has
 * already accepted the name, so a miss is a bug in the caller.
 */
static int
journal_partition_index(SfPipeline *p, const char *name)
{
	int			i = sf_partition_index(&p->def, name);

	if (i < 0 || i > PG_UINT16_MAX)
		elog(ERROR, "streamforge: cannot journal unknown partition \"%s\"", name);
	return i;
}

/*
 * Start an entry in buf: its first VARHDRSZ bytes are left for a varlena
 * header (codec.h), so that persist can store a large entry as a bytea
 * without copying it.
 */
static void
journal_begin(StringInfo buf, char kind)
{
	initStringInfo(buf);
	buf->len = VARHDRSZ;		/* initStringInfo gives 1 kB */
	buf->data[buf->len] = '\0';
	pq_sendbyte(buf, SF_JOURNAL_FORMAT);
	pq_sendbyte(buf, kind);
}

static inline char *
put_varint(char *w, uint64 v)
{
	while (v >= 0x80)
	{
		*w++ = (char) (v | 0x80);
		v >>= 7;
	}
	*w++ = (char) v;
	return w;
}

/* The zigzag varint of the difference cur - prev, wrapping in 64 bits */
static inline char *
put_delta(char *w, int64 cur, int64 prev)
{
	int64		d = (int64) ((uint64) cur - (uint64) prev);

	return put_varint(w, ((uint64) d << 1) ^ (uint64) (d >> 63));
}

/* A slot of the encoder's key table: an interned key (engine.h), its ref */
typedef struct KeySlot
{
	const SfString *key;		/* NULL: empty */
	int32		ref;
} KeySlot;

/*
 * The bytes a and b of len have in common at their start.  A word at a
 * time on little-endian machines (event ids of a batch share most of
 * their bytes).
 */
static inline int
shared_prefix(const char *a, const char *b, int len)
{
	int			i = 0;

#ifndef WORDS_BIGENDIAN
	for (; i + 8 <= len; i += 8)
	{
		uint64		x,
					y;

		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
			return i + pg_rightmost_one_pos64(x ^ y) / 8;
	}
	if (i + 4 <= len)
	{
		uint32		x,
					y;

		memcpy(&x, a + i, 4);
		memcpy(&y, b + i, 4);
		if (x != y)
			return i + pg_rightmost_one_pos32(x ^ y) / 8;
		i += 4;
	}
#endif
	for (; i < len; i++)
		if (a[i] != b[i])
			break;
	return i;
}

/* Copy len bytes to w and return the end; short ones inline (engine.h) */
static inline char *
put_bytes(char *w, const char *src, int len)
{
	sf_copy_bytes(w, src, len);
	return w + len;
}

/*
 * The compact entry (format 3) of an ingest or ingest_batch call (kind 'I':
 * a value per delivery) or of a measures call (kind 'V': nm measure words
 * per delivery): the n deliveries, which the engine has all accepted (as
 * new events, duplicates or offset replays); h[i] is what the engine
 * derived from d[i] (engine.h:
 * its partition's index and its interned key).  Initializes buf (in
 * CurrentMemoryContext) and encodes into it after VARHDRSZ free bytes
 * (codec.h); storing the entry is
 * persist's business (sf_persist_journal_ingest).  The space every
 * delivery can take at most is reserved once for the whole entry, and the
 * fields are written in place (issue 23: one enlargeStringInfo per
 * delivery, libc calls for a few bytes each and a partition name lookup per
 * change of partition cost about 150 instructions per delivery).
 */
static void
encode_compact(StringInfo buf, SfPipeline *p, const SfDelivery *d,
			   const SfDeliveryHash *h, int n, char kind, int nm,
			   const int64 *measures)
{
	int64		last_offset[SF_JOURNAL_OFFSET_SLOTS];
	int			slot_part[SF_JOURNAL_OFFSET_SLOTS];
	KeySlot    *keys = NULL;
	uint32		key_mask = 0;
	int32		nkeys = 0;
	int			part;
	const char *prev_id = NULL;
	int			prev_id_len = 0;
	int64		prev_time = 0;
	Size		bound = 0;
	bool		reserved;
	char	   *w;
	int			i;

	Assert(n >= 0 && h != NULL);
	initStringInfo(buf);
	buf->len = VARHDRSZ;		/* initStringInfo gives 1 kB */
	w = buf->data + buf->len;
	*w++ = SF_JOURNAL_FORMAT_COMPACT;
	*w++ = kind;
	w = put_varint(w, (uint32) n);
	if (kind == SF_JOURNAL_INGEST_MEASURES)
		w = put_varint(w, (uint32) nm);
	buf->len = w - buf->data;
	for (i = 0; i < SF_JOURNAL_OFFSET_SLOTS; i++)
		slot_part[i] = -1;
	if (n > 1)
	{
		uint32		nslots = 16;

		while (nslots < SF_JOURNAL_KEY_SLOTS_MAX && nslots < 2 * (uint32) n)
			nslots *= 2;
		keys = palloc0(nslots * sizeof(KeySlot));
		key_mask = nslots - 1;
	}

	/*
	 * Reserve the whole entry's bound at once when it fits in a StringInfo;
	 * else (a bound past 1 GB, whose entry may still fit) per delivery, as
	 * before.
	 */
	for (i = 0; i < n; i++)
		bound += SF_JOURNAL_COMPACT_BOUND + (Size) 10 * nm +
			(Size) d[i].event_id_len + (Size) d[i].key_len;
	reserved = bound < MaxAllocSize - (Size) buf->len - 1;
	if (reserved)
		enlargeStringInfo(buf, (int) bound);

	for (i = 0; i < n; i++)
	{
		const SfDelivery *di = &d[i];
		int			s;
		int			shared;

		CHECK_FOR_INTERRUPTS();
		if (unlikely(!reserved))
			enlargeStringInfo(buf, SF_JOURNAL_COMPACT_BOUND + 10 * nm +
							  di->event_id_len + di->key_len);
		w = buf->data + buf->len;

		/* partition: the index the engine found (h[i].partition) */
		part = h[i].partition;
		Assert(part >= 0 && part < p->def.npartitions);
		w = put_varint(w, (uint32) part);
		s = part & (SF_JOURNAL_OFFSET_SLOTS - 1);
		w = put_delta(w, di->source_offset,
					  slot_part[s] == part ? last_offset[s] : 0);
		slot_part[s] = part;
		last_offset[s] = di->source_offset;

		/* event_id: the prefix it shares with the previous one */
		shared = shared_prefix(prev_id, di->event_id,
							   Min(prev_id_len, di->event_id_len));
		w = put_varint(w, (uint32) shared);
		w = put_varint(w, (uint32) (di->event_id_len - shared));
		w = put_bytes(w, di->event_id + shared, di->event_id_len - shared);
		prev_id = di->event_id;
		prev_id_len = di->event_id_len;

		/*
		 * key: a ref to an earlier new key of the entry, or a new one.  The
		 * engine interned it (h[i].interned), so its address stands for its
		 * bytes within the call: one slot read, no compare of bytes, no
		 * earlier delivery read back.  Two keys of one slot, or a key at a
		 * forgotten offset (no interned key), are written anew: any choice
		 * of new keys and refs replays the same, as long as every new key
		 * takes the next ref, as the reader counts them (nkeys).
		 */
		if (keys != NULL && h[i].interned != NULL)
		{
			const SfString *k = h[i].interned;
			KeySlot    *ks = &keys[h[i].key & key_mask];	/* k's hash */

			if (ks->key == k)
				w = put_varint(w, (uint32) ks->ref);
			else
			{
				*w++ = 0;
				w = put_varint(w, (uint32) di->key_len);
				w = put_bytes(w, di->key, di->key_len);
				ks->key = k;
				ks->ref = ++nkeys;
			}
		}
		else
		{
			/* a new key all the same: the reader gives it ref nkeys + 1 */
			*w++ = 0;
			w = put_varint(w, (uint32) di->key_len);
			w = put_bytes(w, di->key, di->key_len);
			nkeys++;
		}

		w = put_delta(w, di->event_time, prev_time);
		prev_time = di->event_time;
		if (kind == SF_JOURNAL_INGEST)
			w = put_delta(w, di->value, 0);
		else
		{
			const int64 *mv = measures + (Size) i * nm;

			for (int k = 0; k < nm; k++)
				w = put_delta(w, mv[k], 0);
		}
		buf->len = w - buf->data;
	}
	buf->data[buf->len] = '\0';
	if (keys != NULL)
		pfree(keys);
}

void
sf_journal_encode_ingest(StringInfo buf, SfPipeline *p, const SfDelivery *d,
						 const SfDeliveryHash *h, int n)
{
	encode_compact(buf, p, d, h, n, SF_JOURNAL_INGEST, 0, NULL);
}

/*
 * The entry of an ingest_measures or ingest_measures_batch call (kind 'V'),
 * compact since 0.4.0 (issue 42): measures[i * nmeasures ...] are delivery
 * i's measure words, each a zigzag varint after the delivery's time (most
 * are small: counts of 0 or 1, ids), in place of the value.
 */
void
sf_journal_encode_ingest_measures(StringInfo buf, SfPipeline *p,
								  const SfDelivery *d, const SfDeliveryHash *h,
								  int n, const int64 *measures)
{
	encode_compact(buf, p, d, h, n, SF_JOURNAL_INGEST_MEASURES,
				   p->def.measures->width, measures);
}

/* The entry of an advance call, into buf (initialized here) */
void
sf_journal_encode_advance(StringInfo buf, SfPipeline *p,
						  const char *partition, int64 progress)
{
	journal_begin(buf, SF_JOURNAL_ADVANCE);
	pq_sendint16(buf, (uint16) journal_partition_index(p, partition));
	pq_sendint64(buf, progress);
}

/* The entry of a mark_idle call, into buf (initialized here) */
void
sf_journal_encode_mark_idle(StringInfo buf, SfPipeline *p,
							const char *partition)
{
	journal_begin(buf, SF_JOURNAL_MARK_IDLE);
	pq_sendint16(buf, (uint16) journal_partition_index(p, partition));
}

/* ----------------------------------------------------------------
 * Replay
 * ----------------------------------------------------------------
 */

static void
journal_corrupt(const JournalReader *r, const char *detail)
{
	ereport(ERROR,
			errcode(ERRCODE_DATA_CORRUPTED),
			errmsg("corrupt journal entry for pipeline \"%s\"",
				   r->p->def.name),
			errdetail("%s", detail));
}

static const unsigned char *
journal_read(JournalReader *r, Size n)
{
	const unsigned char *result;

	if (n > r->len - r->pos)
		journal_corrupt(r, "The entry is truncated.");
	result = r->data + r->pos;
	r->pos += n;
	return result;
}

static uint8
journal_read_uint8(JournalReader *r)
{
	return *journal_read(r, 1);
}

static uint32
journal_read_uint32(JournalReader *r)
{
	const unsigned char *b = journal_read(r, 4);

	return ((uint32) b[0] << 24) | ((uint32) b[1] << 16) |
		((uint32) b[2] << 8) | (uint32) b[3];
}

static int64
journal_read_int64(JournalReader *r)
{
	uint64		hi = journal_read_uint32(r);
	uint64		lo = journal_read_uint32(r);

	return (int64) ((hi << 32) | lo);
}

static int
journal_read_partition(JournalReader *r)
{
	const unsigned char *b = journal_read(r, 2);
	int			i = ((int) b[0] << 8) | (int) b[1];

	if (i >= r->p->def.npartitions)
		journal_corrupt(r, "The entry names a partition the pipeline does not have.");
	return i;
}

/* A length-prefixed string; points into the entry, not NUL-terminated */
static const char *
journal_read_string(JournalReader *r, int *len)
{
	uint32		n = journal_read_uint32(r);

	if (n > MaxAllocSize)
		journal_corrupt(r, "A string length is out of range.");
	*len = (int) n;
	return (const char *) journal_read(r, n);
}

/* A varint (format 3) */
static uint64
journal_read_varint(JournalReader *r)
{
	uint64		v = 0;
	int			shift = 0;

	for (;;)
	{
		uint8		b;

		if (r->pos >= r->len)
			journal_corrupt(r, "The entry is truncated.");
		b = r->data[r->pos++];
		if (shift == 63 && b > 1)
			journal_corrupt(r, "A number is out of range.");
		v |= (uint64) (b & 0x7f) << shift;
		if ((b & 0x80) == 0)
			return v;
		shift += 7;
		if (shift > 63)
			journal_corrupt(r, "A number is out of range.");
	}
}

/* A varint that must be at most max */
static uint32
journal_read_count(JournalReader *r, uint64 max)
{
	uint64		v = journal_read_varint(r);

	if (v > max)
		journal_corrupt(r, "A length or count is out of range.");
	return (uint32) v;
}

/* prev plus a zigzag varint difference, wrapping in 64 bits */
static int64
journal_read_delta(JournalReader *r, int64 prev)
{
	uint64		z = journal_read_varint(r);
	uint64		d = (z >> 1) ^ (~(z & 1) + 1);

	return (int64) ((uint64) prev + d);
}

/*
 * sf_journal_replay_to: while set, the deliveries of format 3 ingest
 * entries go to this function instead of the engine (a parallel
 * pipeline's lane, parallel_codec.c)
 */
static void (*replay_deliver) (void *arg, const SfDelivery *d,
							   const int64 *mv) = NULL;
static void *replay_deliver_arg = NULL;

/*
 * Parse and apply the deliveries of a compact entry (format 3, see the top
 * of the file) of kind 'I' or 'V', after its kind.
 */
static void
journal_replay_compact(SfPipeline *p, JournalReader *r, uint8 kind)
{
	SfChangeList changes = {0};
	int64		last_offset[SF_JOURNAL_OFFSET_SLOTS];
	int			slot_part[SF_JOURNAL_OFFSET_SLOTS];
	uint32		n;
	uint32		i;
	uint32		nkeys = 0;
	const char **key_data;
	int		   *key_len;
	char	   *id = NULL;
	int			id_len = 0;
	int			id_cap = 0;
	int64		prev_time = 0;
	int			nm = 0;
	int64		mv[SF_MAX_MEASURE_WORDS];

	n = journal_read_count(r, (r->len - r->pos) / SF_JOURNAL_MIN_COMPACT);
	if (kind == SF_JOURNAL_INGEST_MEASURES)
	{
		nm = (int) journal_read_count(r, SF_MAX_MEASURE_WORDS);
		if (p->def.measures == NULL || nm != p->def.measures->width)
			journal_corrupt(r, "The entry's measures do not match the pipeline's.");
	}
	key_data = palloc_extended(Max(n, 1) * sizeof(char *), MCXT_ALLOC_HUGE);
	key_len = palloc_extended(Max(n, 1) * sizeof(int), MCXT_ALLOC_HUGE);
	for (i = 0; i < SF_JOURNAL_OFFSET_SLOTS; i++)
		slot_part[i] = -1;
	for (i = 0; i < n; i++)
	{
		SfDelivery	d;
		int			part;
		int			s;
		uint32		shared;
		uint32		suffix;
		uint32		ref;

		CHECK_FOR_INTERRUPTS();
		part = (int) journal_read_count(r, PG_INT32_MAX);
		if (part >= p->def.npartitions)
			journal_corrupt(r, "The entry names a partition the pipeline does not have.");
		d.partition = p->def.partitions[part];
		s = part & (SF_JOURNAL_OFFSET_SLOTS - 1);
		d.source_offset = journal_read_delta(r, slot_part[s] == part ?
											 last_offset[s] : 0);
		slot_part[s] = part;
		last_offset[s] = d.source_offset;

		shared = journal_read_count(r, id_len);
		suffix = journal_read_count(r, r->len - r->pos);
		if ((uint64) shared + suffix > MaxAllocSize)
			journal_corrupt(r, "A string length is out of range.");
		if ((int) (shared + suffix) > id_cap)
		{
			Size		cap = Max(64, (Size) 2 * (shared + suffix));

			if (cap > MaxAllocSize)
				cap = shared + suffix;
			id = id == NULL ? palloc(cap) : repalloc(id, cap);
			id_cap = (int) cap;
		}
		if (suffix > 0)
			memcpy(id + shared, journal_read(r, suffix), suffix);
		id_len = shared + suffix;
		d.event_id = id;
		d.event_id_len = id_len;

		ref = journal_read_count(r, nkeys);
		if (ref == 0)
		{
			uint32		len = journal_read_count(r, r->len - r->pos);

			key_data[nkeys] = (const char *) journal_read(r, len);
			key_len[nkeys] = (int) len;
			ref = ++nkeys;
		}
		d.key = key_data[ref - 1];
		d.key_len = key_len[ref - 1];

		d.event_time = journal_read_delta(r, prev_time);
		prev_time = d.event_time;
		if (d.event_id_len == 0)
			journal_corrupt(r, "A delivery has an empty event_id.");
		changes.n = 0;
		if (kind == SF_JOURNAL_INGEST)
		{
			d.value = journal_read_delta(r, 0);
			if (unlikely(replay_deliver != NULL))
				replay_deliver(replay_deliver_arg, &d, NULL);
			else
				sf_engine_ingest(p, &d, &changes);
			continue;
		}
		for (int k = 0; k < nm; k++)
			mv[k] = journal_read_delta(r, 0);
		d.value = mv[0];
		if (!sf_measures_valid(p->def.measures, mv))
			journal_corrupt(r, "A delivery's NULL mask names a measure that is not nullable, or a NULL measure has a value.");
		if (unlikely(replay_deliver != NULL))
			replay_deliver(replay_deliver_arg, &d, mv);
		else
			sf_engine_ingest_measures(p, &d, NULL, mv, &changes);
	}
	if (r->pos != r->len)
		journal_corrupt(r, "The entry has trailing bytes.");
}

/* Parse and apply the body of one entry */
static void
journal_replay_op(SfPipeline *p, JournalReader *r, uint8 kind)
{
	SfChangeList changes = {0};

	switch (kind)
	{
		case SF_JOURNAL_INGEST:
			{
				uint32		n = journal_read_uint32(r);
				uint32		i;

				if (n > (r->len - r->pos) / SF_JOURNAL_MIN_DELIVERY)
					journal_corrupt(r, "The delivery count exceeds the entry.");
				for (i = 0; i < n; i++)
				{
					SfDelivery	d;

					CHECK_FOR_INTERRUPTS();
					d.partition = p->def.partitions[journal_read_partition(r)];
					d.source_offset = journal_read_int64(r);
					d.event_id = journal_read_string(r, &d.event_id_len);
					d.key = journal_read_string(r, &d.key_len);
					d.event_time = journal_read_int64(r);
					d.value = journal_read_int64(r);
					if (d.event_id_len == 0)
						journal_corrupt(r, "A delivery has an empty event_id.");
					/* as text arguments are: a checkpoint and the outputs need it */
					if (!pg_verifymbstr(d.event_id, d.event_id_len, true) ||
						!pg_verifymbstr(d.key, d.key_len, true))
						journal_corrupt(r, "A delivery's event_id or key is not valid in the database encoding.");
					changes.n = 0;
					sf_engine_ingest(p, &d, &changes);
				}
				break;
			}
		case SF_JOURNAL_INGEST_MEASURES:
			{
				uint32		n = journal_read_uint32(r);
				const unsigned char *b = journal_read(r, 2);
				int			nm = ((int) b[0] << 8) | (int) b[1];
				int64		mv[SF_MAX_MEASURE_WORDS];

				if (p->def.measures == NULL || nm != p->def.measures->width)
					journal_corrupt(r, "The entry's measures do not match the pipeline's.");
				if (n > (r->len - r->pos) / SF_JOURNAL_MIN_DELIVERY)
					journal_corrupt(r, "The delivery count exceeds the entry.");
				for (uint32 i = 0; i < n; i++)
				{
					SfDelivery	d;

					CHECK_FOR_INTERRUPTS();
					d.partition = p->def.partitions[journal_read_partition(r)];
					d.source_offset = journal_read_int64(r);
					d.event_id = journal_read_string(r, &d.event_id_len);
					d.key = journal_read_string(r, &d.key_len);
					d.event_time = journal_read_int64(r);
					for (int k = 0; k < nm; k++)
						mv[k] = journal_read_int64(r);
					d.value = mv[0];
					if (d.event_id_len == 0)
						journal_corrupt(r, "A delivery has an empty event_id.");
					if (!sf_measures_valid(p->def.measures, mv))
						journal_corrupt(r, "A delivery's NULL mask names a measure that is not nullable, or a NULL measure has a value.");
					changes.n = 0;
					sf_engine_ingest_measures(p, &d, NULL, mv, &changes);
				}
				break;
			}
		case SF_JOURNAL_ADVANCE:
			{
				int			part = journal_read_partition(r);
				int64		progress = journal_read_int64(r);

				sf_engine_advance(p, p->def.partitions[part], progress,
								  &changes);
				break;
			}
		case SF_JOURNAL_MARK_IDLE:
			sf_engine_mark_idle(p, p->def.partitions[journal_read_partition(r)],
								&changes);
			break;
		default:
			journal_corrupt(r, "The entry kind is unknown.");
	}
	if (r->pos != r->len)
		journal_corrupt(r, "The entry has trailing bytes.");
}

/*
 * The journal row holding count entries: entries is their concatenation,
 * each preceded by its length (uint32, big-endian).  One entry is stored as
 * it is, so that a row of a single call reads the same as in 0.1.0.
 */
bytea *
sf_journal_sequence(const char *entries, Size len, int count)
{
	bytea	   *b;

	Assert(count >= 1 && len > 4);
	if (count == 1)
	{
		b = palloc(VARHDRSZ + len - 4);
		SET_VARSIZE(b, VARHDRSZ + len - 4);
		memcpy(VARDATA(b), entries + 4, len - 4);
		return b;
	}
	b = palloc(VARHDRSZ + 1 + len);
	SET_VARSIZE(b, VARHDRSZ + 1 + len);
	*(uint8 *) VARDATA(b) = SF_JOURNAL_FORMAT_SEQUENCE;
	memcpy(VARDATA(b) + 1, entries, len);
	return b;
}

/*
 * Apply one journal entry to p, exactly as the original call did.
 *
 * The changes the replay produces are dropped (they were returned when the
 * call ran), so the caller should run this in a short-lived memory context.
 * An entry the engine rejects means the stored state is corrupt: the
 * engine's input errors are reported as ERRCODE_DATA_CORRUPTED, anything
 * else (cancel, out of memory) propagates unchanged.  On error p may be
 * half-updated and must be thrown away (persist.c does).
 */
void
sf_journal_replay(SfPipeline *p, const char *data, Size len)
{
	JournalReader r;
	MemoryContext oldcxt = CurrentMemoryContext;
	uint8		format;
	uint8		kind;
	bool		was_replaying;

	r.p = p;
	r.data = (const unsigned char *) data;
	r.len = len;
	r.pos = 0;

	format = journal_read_uint8(&r);
	if (format == SF_JOURNAL_FORMAT_SEQUENCE)
	{
		while (r.pos < r.len)
		{
			uint32		n = journal_read_uint32(&r);
			const char *sub;

			if (n > r.len - r.pos)
				journal_corrupt(&r, "The entry is truncated.");
			sub = (const char *) journal_read(&r, n);
			if (n < 1 || ((uint8) sub[0] != SF_JOURNAL_FORMAT &&
						   (uint8) sub[0] != SF_JOURNAL_FORMAT_COMPACT))
				journal_corrupt(&r, "An entry of a sequence is not a single entry.");
			sf_journal_replay(p, sub, n);
		}
		return;
	}
	if (format != SF_JOURNAL_FORMAT && format != SF_JOURNAL_FORMAT_COMPACT)
		ereport(ERROR,
				errcode(ERRCODE_DATA_CORRUPTED),
				errmsg("corrupt journal entry for pipeline \"%s\"",
					   p->def.name),
				errdetail("Expected journal format %d or %d, found %d.",
						  SF_JOURNAL_FORMAT, SF_JOURNAL_FORMAT_COMPACT, format),
				format > SF_JOURNAL_FORMAT_COMPACT ?
				errhint("A newer streamforge library may have written it: if the package was upgraded, reconnect.") : 0);
	kind = journal_read_uint8(&r);
	if (format == SF_JOURNAL_FORMAT_COMPACT && kind != SF_JOURNAL_INGEST &&
		kind != SF_JOURNAL_INGEST_MEASURES)
		journal_corrupt(&r, "The entry kind is unknown.");
	if (replay_deliver != NULL && format != SF_JOURNAL_FORMAT_COMPACT)
		journal_corrupt(&r, "A lane's entry is not a format 3 ingest entry.");

	/*
	 * The entry was accepted under the streamforge.max_live_buckets of its
	 * time: a lower setting now must not make the pipeline unloadable.
	 */
	was_replaying = sf_replaying_journal;
	sf_replaying_journal = true;
	PG_TRY();
	{
		if (format == SF_JOURNAL_FORMAT_COMPACT)
			journal_replay_compact(p, &r, kind);
		else
			journal_replay_op(p, &r, kind);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		sf_replaying_journal = was_replaying;
		MemoryContextSwitchTo(oldcxt);
		edata = CopyErrorData();
		switch (edata->sqlerrcode)
		{
			case ERRCODE_SF_OFFSET_CONFLICT:
			case ERRCODE_SF_IDENTITY_CONFLICT:
			case ERRCODE_INVALID_PARAMETER_VALUE:
			case ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE:
			case ERRCODE_NULL_VALUE_NOT_ALLOWED:
				FlushErrorState();
				ereport(ERROR,
						errcode(ERRCODE_DATA_CORRUPTED),
						errmsg("corrupt journal entry for pipeline \"%s\"",
							   p->def.name),
						errdetail("Replaying the entry failed: %s",
								  edata->message));
				break;
			default:
				FreeErrorData(edata);
				PG_RE_THROW();
		}
	}
	PG_END_TRY();
	sf_replaying_journal = was_replaying;
}

/*
 * sf_journal_replay_to
 *		sf_journal_replay of the entries of a parallel pipeline's lane
 *		(format 3 ingest entries, or a sequence of them): each delivery goes
 *		to deliver(arg, d, mv) instead of the engine (mv: its measure words,
 *		NULL for a delivery of kind 'I'); p is the lane (its
 *		definition names the partitions).  Any other entry is corrupt
 *		(XX001).
 */
void
sf_journal_replay_to(SfPipeline *p, const char *data, Size len,
					 void (*deliver) (void *arg, const SfDelivery *d,
									  const int64 *mv),
					 void *arg)
{
	replay_deliver = deliver;
	replay_deliver_arg = arg;
	PG_TRY();
	{
		sf_journal_replay(p, data, len);
	}
	PG_FINALLY();
	{
		replay_deliver = NULL;
		replay_deliver_arg = NULL;
	}
	PG_END_TRY();
}
