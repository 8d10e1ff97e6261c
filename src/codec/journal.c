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
 *
 * A journal row holds one entry in that format, or several (persist.c
 * buffers the entries of a transaction's top-level write calls and stores
 * each run of consecutive positions as one row before commit):
 *
 *		uint8	format			SF_JOURNAL_FORMAT_SEQUENCE
 *		then, until the end:	uint32 len, then len bytes: one entry of
 *								format SF_JOURNAL_FORMAT, as above
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
#include "utils/elog.h"

#include "codec/codec.h"
#include "engine/engine.h"

#define SF_JOURNAL_FORMAT	1
#define SF_JOURNAL_FORMAT_SEQUENCE	2

#define SF_JOURNAL_INGEST		'I'
#define SF_JOURNAL_ADVANCE		'A'
#define SF_JOURNAL_MARK_IDLE	'M'

/* The smallest encoded delivery: partition, offset, 2 lengths, time, value */
#define SF_JOURNAL_MIN_DELIVERY	(2 + 8 + 4 + 4 + 8 + 8)

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

/*
 * The entry of an ingest or ingest_batch call: the n deliveries, which the
 * engine has all accepted (as new events, duplicates or offset replays).
 * Initializes buf (in CurrentMemoryContext) and encodes into it after
 * VARHDRSZ free bytes (codec.h); storing the entry is persist's business
 * (sf_persist_journal_ingest).
 */
void
sf_journal_encode_ingest(StringInfo buf, SfPipeline *p, const SfDelivery *d,
						 int n)
{
	int			i;

	Assert(n >= 0);
	journal_begin(buf, SF_JOURNAL_INGEST);
	pq_sendint32(buf, (uint32) n);
	for (i = 0; i < n; i++)
	{
		CHECK_FOR_INTERRUPTS();
		pq_sendint16(buf, (uint16) journal_partition_index(p, d[i].partition));
		pq_sendint64(buf, d[i].source_offset);
		pq_sendint32(buf, (uint32) d[i].event_id_len);
		appendBinaryStringInfo(buf, d[i].event_id, d[i].event_id_len);
		pq_sendint32(buf, (uint32) d[i].key_len);
		appendBinaryStringInfo(buf, d[i].key, d[i].key_len);
		pq_sendint64(buf, d[i].event_time);
		pq_sendint64(buf, d[i].value);
	}
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
			if (n < 1 || (uint8) sub[0] != SF_JOURNAL_FORMAT)
				journal_corrupt(&r, "An entry of a sequence is not a single entry.");
			sf_journal_replay(p, sub, n);
		}
		return;
	}
	if (format != SF_JOURNAL_FORMAT)
		ereport(ERROR,
				errcode(ERRCODE_DATA_CORRUPTED),
				errmsg("corrupt journal entry for pipeline \"%s\"",
					   p->def.name),
				errdetail("Expected journal format %d, found %d.",
						  SF_JOURNAL_FORMAT, format));
	kind = journal_read_uint8(&r);

	/*
	 * The entry was accepted under the streamforge.max_live_buckets of its
	 * time: a lower setting now must not make the pipeline unloadable.
	 */
	was_replaying = sf_replaying_journal;
	sf_replaying_journal = true;
	PG_TRY();
	{
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
