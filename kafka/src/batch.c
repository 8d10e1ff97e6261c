/*
 * batch.c: one batch of a subscription's worker (worker.c starts it and
 * loops): collect up to batch_size messages, map and ingest them in one
 * transaction with the pipeline's offsets, find the bad messages one by
 * one when the batch fails with a data error, record the high watermarks;
 * and the pause on lost offsets.  The header of worker.c says how offsets,
 * bad messages and restarts behave.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/timestamp.h"

#include "kafka.h"
#include "worker.h"

#define SF_OFFSET_CONFLICT MAKE_SQLSTATE('S','F','0','0','1')
#define SF_IDENTITY_CONFLICT MAKE_SQLSTATE('S','F','0','0','2')


static bytea *
to_bytea(const void *p, size_t len)
{
	bytea	   *b = palloc(VARHDRSZ + len);

	SET_VARSIZE(b, VARHDRSZ + len);
	if (len > 0)
		memcpy(VARDATA(b), p, len);
	return b;
}

/* the consumer's queue and the messages of one call, kept across batches */
static rd_kafka_queue_t *queue = NULL;
static rd_kafka_message_t **fetched = NULL;

/*
 * Takes message m into msgs[*n] (or records the error it carries); false
 * for an error that ends the batch (lost offsets, an outage: the caller
 * stops once the messages of its call are taken; any other error is left
 * in *failure, thrown once they are destroyed).
 */
static bool
take(rd_kafka_message_t *m, Msg *msgs, int *n, char **failure)
{
	if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR)
	{
		Msg		   *msg = &msgs[*n];
		rd_kafka_timestamp_type_t tstype;

		if (m->partition < 0 || m->partition >= sfk_sub.nparts || !SFK_OWNS(m->partition))
		{
			ereport(WARNING,
					(errmsg("streamforge_kafka: subscription %d: message of unknown partition %d ignored",
							sfk_sub.id, (int) m->partition)));
			return true;
		}
		msg->part = m->partition;
		msg->offset = m->offset;
		msg->key = m->key ? to_bytea(m->key, m->key_len) : NULL;
		msg->payload = m->payload ? to_bytea(m->payload, m->len) : NULL;
		msg->ts = rd_kafka_message_timestamp(m, &tstype);
		(*n)++;
		return true;
	}
	if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF)
		return true;
	if ((m->err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET ||
		 m->err == RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE))
	{
		/* issue 43, item 5: a state, not a restart every second */
		if (sfk_lost_part < 0)
		{
			sfk_lost_part = m->partition;
			snprintf(sfk_lost_reason, sizeof(sfk_lost_reason), "%s", rd_kafka_message_errstr(m));
		}
		return false;
	}
	if (m->err == RD_KAFKA_RESP_ERR__TRANSPORT ||
		m->err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN)
	{
		sfk_outage = true;
		snprintf(sfk_outage_reason, sizeof(sfk_outage_reason), "%s", rd_kafka_message_errstr(m));
		return false;
	}
	/* any other error: thrown once the call's messages are destroyed */
	if (*failure == NULL)
		*failure = pstrdup(rd_kafka_message_errstr(m));
	return false;
}

/*
 * Collects up to batch_size messages, waiting max_wait at most: many
 * messages per call of librdkafka (rd_kafka_consume_batch_queue), not one
 * (issue 43, item 3).  The messages a call returned after an error that
 * ends the batch are still taken: their offsets follow those before.
 */
int
sfk_collect(Msg *msgs)
{
	int			n = 0;
	bool		more = true;
	char	   *failure = NULL;
	TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), sfk_sub.max_wait);

	if (queue == NULL)
	{
		queue = rd_kafka_queue_get_consumer(sfk_consumer);
		if (queue == NULL)
			elog(ERROR, "librdkafka has no consumer queue");
		fetched = MemoryContextAlloc(TopMemoryContext,
									 sizeof(rd_kafka_message_t *) * sfk_sub.batch_size);
	}
	while (more && n < sfk_sub.batch_size && !sfk_outage && sfk_lost_part < 0)
	{
		long		left = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), deadline);
		ssize_t		got;
		ssize_t		i;

		got = rd_kafka_consume_batch_queue(queue, (int) Min(left, 100L), fetched,
										   sfk_sub.batch_size - n);
		if (got < 0)
			ereport(ERROR,
					(errcode(ERRCODE_CONNECTION_FAILURE),
					 errmsg("could not consume topic \"%s\": %s", sfk_sub.topic,
							rd_kafka_err2str(rd_kafka_last_error()))));
		for (i = 0; i < got; i++)
			if (!take(fetched[i], msgs, &n, &failure))
				more = false;
		for (i = 0; i < got; i++)
			rd_kafka_message_destroy(fetched[i]);
		if (failure != NULL)
			ereport(ERROR,
					(errcode(ERRCODE_CONNECTION_FAILURE),
					 errmsg("could not consume topic \"%s\": %s", sfk_sub.topic, failure)));
		CHECK_FOR_INTERRUPTS();
		if (left <= 0)
			break;
	}
	return n;
}

/*
 * Adds message m at its offset, after the partition's pending skipped
 * offsets (delivered the same event).  consumed/pending are the
 * tentative positions of this batch.
 */
static void
elems_add_msg(Elems *e, Msg *m, int64 *consumed, int64 *pending, Datum *pnames)
{
	int64		j;
	int64		expect = consumed[m->part] + pending[m->part] + 1;

	if (m->offset != expect)
		ereport(ERROR,
				(errcode(SF_OFFSET_CONFLICT),
				 errmsg("offset conflict in partition %d of topic \"%s\"", m->part, sfk_sub.topic),
				 errdetail("The next offset is " INT64_FORMAT ", the cluster sent " INT64_FORMAT ".",
						   expect, m->offset),
				 errhint("Messages are consumed at their Kafka offsets: a gap (a compacted or transactional topic) is not skipped.")));
	for (j = 1; j <= pending[m->part]; j++)
		sfk_elems_add(e, m, consumed[m->part] + j, pnames[m->part]);
	sfk_elems_add(e, m, m->offset, pnames[m->part]);
}

/* Runs the mapping statement over the elements. */
static void
run_elems(Elems *e)
{
	Datum		args[8];

	if (sfk_sub.aggrow)
	{
		sfk_aggrow_run(e, sfk_sub.pipeline, sfk_sub.measures, sfk_sub.nparts,
					   sfk_sub.trailing);
		return;
	}
	if (sfk_sub.cmap)
	{
		memset(sfk_sub.trailing, 0, sizeof(int) * sfk_sub.nparts);
		sfk_cmap_run(e, sfk_sub.pipeline);
		return;
	}
	args[0] = CStringGetTextDatum(sfk_sub.pipeline);
	args[1] = PointerGetDatum(sfk_mk_array(e->pn, NULL, e->n, TEXTOID));
	args[2] = PointerGetDatum(sfk_mk_array(e->po, NULL, e->n, INT8OID));
	args[3] = PointerGetDatum(sfk_mk_array(e->k, e->knull, e->n, BYTEAOID));
	args[4] = PointerGetDatum(sfk_mk_array(e->p, e->pnull, e->n, BYTEAOID));
	args[5] = PointerGetDatum(sfk_mk_array(e->ts, NULL, e->n, INT8OID));
	args[6] = PointerGetDatum(sfk_mk_array(e->ko, NULL, e->n, INT8OID));
	args[7] = PointerGetDatum(sfk_mk_array(e->kp, NULL, e->n, INT4OID));
	if (sfk_sub.aggregate)
	{
		int32	   *kparts = palloc(sizeof(int32) * Max(e->n, 1));
		int			i;

		for (i = 0; i < e->n; i++)
			kparts[i] = DatumGetInt32(e->kp[i]);
		sfk_run_aggregate(sfk_sub.plan, args, sfk_sub.agg_relid, sfk_sub.pipeline,
						  sfk_sub.measures, sfk_sub.nparts, kparts, sfk_sub.trailing);
		return;
	}
	memset(sfk_sub.trailing, 0, sizeof(int) * sfk_sub.nparts);
	if (SPI_execute_plan(sfk_sub.plan, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "the mapping statement of subscription %d failed", sfk_sub.id);
}

/*
 * Whether an error of the mapping statement is the message's: a data
 * exception (class 22, the JSON errors 2203x included), a program limit
 * (class 54: 54001, the stack depth of a deeply nested message, 54000),
 * an event id seen with other content (SF002).  Anything else (a revoked
 * privilege, an offset gap, a dropped pipeline, a cancel) is not.
 */
static bool
is_bad_message_error(ErrorData *edata)
{
	return ERRCODE_TO_CATEGORY(edata->sqlerrcode) == ERRCODE_DATA_EXCEPTION ||
		ERRCODE_TO_CATEGORY(edata->sqlerrcode) == ERRCODE_PROGRAM_LIMIT_EXCEEDED ||
		edata->sqlerrcode == SF_IDENTITY_CONFLICT ||
		edata->sqlerrcode == ERRCODE_UNTRANSLATABLE_CHARACTER ||
		edata->sqlerrcode == ERRCODE_CHARACTER_NOT_IN_REPERTOIRE;
}

/*
 * Runs the elements in a subtransaction: NULL when they went in, the
 * error when it is a bad message's (anything else is thrown again).
 */
static ErrorData *
try_elems(Elems *e)
{
	MemoryContext oldcontext = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;
	ErrorData  *volatile edata = NULL;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(oldcontext);
	PG_TRY();
	{
		run_elems(e);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcontext);
		CurrentResourceOwner = oldowner;
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(oldcontext);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcontext);
		CurrentResourceOwner = oldowner;
		if (!is_bad_message_error((ErrorData *) edata))
			ReThrowError((ErrorData *) edata);
	}
	PG_END_TRY();
	return (ErrorData *) edata;
}

/* A dead letter, in the batch's transaction (kept once). */
static void
reject(Msg *m, ErrorData *edata)
{
	Datum		args[10];
	Oid			types[10] = {INT4OID, TEXTOID, TEXTOID, INT4OID, INT8OID, BYTEAOID,
	BYTEAOID, INT8OID, TEXTOID, TEXTOID};
	char		nulls[10] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};

	args[0] = Int32GetDatum(sfk_sub.id);
	args[1] = CStringGetTextDatum(sfk_sub.pipeline);
	args[2] = CStringGetTextDatum(sfk_sub.topic);
	args[3] = Int32GetDatum(m->part);
	args[4] = Int64GetDatum(m->offset);
	args[5] = m->key ? PointerGetDatum(m->key) : (Datum) 0;
	nulls[5] = m->key ? ' ' : 'n';
	args[6] = m->payload ? PointerGetDatum(m->payload) : (Datum) 0;
	nulls[6] = m->payload ? ' ' : 'n';
	args[7] = Int64GetDatum(m->ts);
	args[8] = CStringGetTextDatum(edata->message ? edata->message : "unknown error");
	args[9] = CStringGetTextDatum(unpack_sql_state(edata->sqlerrcode));
	if (sfk_spi_as_owner("INSERT INTO streamforge_kafka.rejected AS r "
							  "(subscription, pipeline, topic, partition, \"offset\", key, payload, "
							  "kafka_timestamp, error, sqlstate, role) "
							  "SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, s.role "
							  "FROM streamforge_kafka.subscription AS s WHERE s.id OPERATOR(pg_catalog.=) $1 "
							  "ON CONFLICT (subscription, partition, \"offset\") DO UPDATE "
							  "SET error = EXCLUDED.error, sqlstate = EXCLUDED.sqlstate, "
							  "rejected_at = pg_catalog.now()",
							  10, types, args, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not record a rejected message");
	ereport(LOG,
			(errmsg("streamforge_kafka: subscription %d: message at offset " INT64_FORMAT
					" of partition %d of topic \"%s\" rejected (%s): %s",
					sfk_sub.id, m->offset, m->part, sfk_sub.topic,
					sfk_sub.stop_on_error ? "the subscription stops" : "skipped",
					edata->message ? edata->message : "unknown error")));
}

/*
 * Records the high watermarks that moved; written[i] is what partition i's
 * row holds once the batch commits (issue 43, item 7: 0.3.0 remembered the
 * value librdkafka held after the commit, which a fetch could have moved
 * meanwhile, and then never wrote that value).
 */
static const char record_hw_sql[] =
"INSERT INTO streamforge_kafka.partition_status AS h "
"(subscription, kafka_partition, high_watermark) VALUES ($1, $2, $3) "
"ON CONFLICT (subscription, kafka_partition) DO UPDATE "
"SET high_watermark = EXCLUDED.high_watermark, "
"updated_at = pg_catalog.now()";

static void
record_watermarks(int64 *written)
{
	int			i;

	for (i = 0; i < sfk_sub.nparts; i++)
	{
		int64		lo = -1,
					hi = -1;
		Datum		args[3];
		Oid			types[3] = {INT4OID, INT4OID, INT8OID};

		written[i] = sfk_sub.hw_saved[i];
		if (!SFK_OWNS(i))
			continue;			/* another worker's */
		if (rd_kafka_get_watermark_offsets(sfk_consumer, sfk_sub.topic, i, &lo, &hi) != RD_KAFKA_RESP_ERR_NO_ERROR ||
			hi < 0 || hi == sfk_sub.hw_saved[i])
			continue;
		written[i] = hi;
		args[0] = Int32GetDatum(sfk_sub.id);
		args[1] = Int32GetDatum(i);
		args[2] = Int64GetDatum(hi);
		if (sfk_spi_kept(record_hw_sql, true, 3, types, args, NULL, false, 0) != SPI_OK_INSERT)
			elog(ERROR, "could not record a high watermark");
	}
}

/*
 * The pending offsets of a partition beyond batch_size (a lost range an
 * admin skipped, lost.c: possibly millions) go ahead of the batch,
 * batch_size per transaction, each delivered with the partition's first
 * message of the batch, as the batch would (the first delivery of its
 * event, then duplicates).  A batch then holds at most batch_size pending
 * offsets per partition, whatever the range's length: one batch of them
 * all overflowed an int and MaxAllocSize.  A worker that stops between
 * two of these transactions starts again from the pipeline's offsets,
 * inside the recorded range (sfk_skipped_ranges).  A message the mapping
 * refuses, or an aggregate's that does not match its WHERE, leaves the
 * rest to the batch, which handles both (one by one).  Returns false when
 * the worker is to stop (the subscription gone or paused).
 */
static bool
deliver_skipped(Msg *msgs, int n, MemoryContext batchcxt)
{
	MemoryContext chunkcxt = NULL;

	for (int p = 0; p < sfk_sub.nparts; p++)
	{
		Msg		   *m = NULL;
		Datum		pname;

		for (int i = 0; i < n && m == NULL; i++)
			if (msgs[i].part == p)
				m = &msgs[i];
		while (m != NULL && sfk_sub.pending[p] > sfk_sub.batch_size)
		{
			Elems		e;
			int			chunk = sfk_sub.batch_size;
			int			done;

			CHECK_FOR_INTERRUPTS();
			sfk_begin_tx("streamforge_kafka: skipped offsets");
			if (!sfk_subscription_active())
			{
				sfk_commit_tx();
				return false;
			}
			/* not batchcxt itself: it holds the messages */
			if (chunkcxt == NULL)
				chunkcxt = AllocSetContextCreate(batchcxt, "streamforge_kafka skipped offsets",
												 ALLOCSET_DEFAULT_SIZES);
			MemoryContextSwitchTo(chunkcxt);
			pname = CStringGetTextDatum(sfk_sub.pnames[p]);
			sfk_elems_init(&e, chunk);
			for (int j = 1; j <= chunk; j++)
				sfk_elems_add(&e, m, sfk_sub.consumed[p] + j, pname);
			done = try_elems(&e) == NULL ? chunk - sfk_sub.trailing[p] : 0;
			MemoryContextSwitchTo(TopMemoryContext);
			sfk_commit_tx();
			MemoryContextReset(chunkcxt);
			if (done < chunk)
				break;
			sfk_sub.consumed[p] += chunk;
			sfk_sub.pending[p] -= chunk;
		}
	}
	return true;
}

static const char advance_sql[] =
"SELECT pg_catalog.count(*) FROM streamforge.advance($1, $2, $3)";

/*
 * One batch, in one transaction.  Returns false when the worker is to
 * stop (subscription gone or paused, or stopped on a bad message).
 */
bool
sfk_run_batch(Msg *msgs, int n, MemoryContext batchcxt)
{
	int64	   *consumed;
	int64	   *pending;
	int64	   *maxts;
	Datum	   *pnames;
	Elems		e;
	ErrorData  *edata;
	bool		stopped = false;
	int			i;
	int64	   *newprog;
	int64	   *hw_written;
	static TimestampTz last_tx = 0;
	TimestampTz now = GetCurrentTimestamp();

	/*
	 * Nothing came: a transaction (the subscription's check, the high
	 * watermarks) once a second, not at every max_wait (an idle worker
	 * committed ten empty transactions a second).
	 */
	if (n == 0 && !TimestampDifferenceExceeds(last_tx, now, 1000))
		return true;
	last_tx = now;
	if (n > 0 && !deliver_skipped(msgs, n, batchcxt))
		return false;
	sfk_begin_tx("streamforge_kafka: batch");
	if (!sfk_subscription_active())
	{
		sfk_commit_tx();
		return false;
	}
	MemoryContextSwitchTo(batchcxt);
	consumed = palloc(sizeof(int64) * sfk_sub.nparts);
	pending = palloc(sizeof(int64) * sfk_sub.nparts);
	maxts = palloc(sizeof(int64) * sfk_sub.nparts);
	newprog = palloc(sizeof(int64) * sfk_sub.nparts);
	pnames = palloc(sizeof(Datum) * sfk_sub.nparts);
	for (i = 0; i < sfk_sub.nparts; i++)
	{
		consumed[i] = sfk_sub.consumed[i];
		pending[i] = sfk_sub.pending[i];
		maxts[i] = -1;
		newprog[i] = sfk_sub.progress[i];
		pnames[i] = CStringGetTextDatum(sfk_sub.pnames[i]);
	}

	if (n > 0)
	{
		int64		total = n;

		/* at most batch_size pending offsets each (deliver_skipped) */
		for (i = 0; i < sfk_sub.nparts; i++)
			total += pending[i];
		if (total > MaxAllocSize / sizeof(Datum))
			elog(ERROR, "a batch of " INT64_FORMAT " deliveries is too large", total);
		sfk_elems_init(&e, (int) total);
		for (i = 0; i < n; i++)
		{
			elems_add_msg(&e, &msgs[i], consumed, pending, pnames);
			consumed[msgs[i].part] = msgs[i].offset;
			pending[msgs[i].part] = 0;
		}
		edata = try_elems(&e);
		if (edata == NULL)
		{
			/* an aggregate's non-matching offsets at the end stay pending */
			for (i = 0; i < sfk_sub.nparts; i++)
				if (sfk_sub.trailing[i] > 0)
				{
					consumed[i] -= sfk_sub.trailing[i];
					pending[i] = sfk_sub.trailing[i];
				}
		}
		else
		{
			/* a bad message: one by one, to find it (them) */
			for (i = 0; i < sfk_sub.nparts; i++)
			{
				consumed[i] = sfk_sub.consumed[i];
				pending[i] = sfk_sub.pending[i];
			}
			for (i = 0; i < n; i++)
			{
				Msg		   *m = &msgs[i];

				CHECK_FOR_INTERRUPTS();
				e.n = 0;
				elems_add_msg(&e, m, consumed, pending, pnames);
				edata = try_elems(&e);
				if (edata == NULL)
				{
					/* an aggregate's message that does not match: pending */
					consumed[m->part] = m->offset - sfk_sub.trailing[m->part];
					pending[m->part] = sfk_sub.trailing[m->part];
					continue;
				}
				reject(m, edata);
				if (sfk_sub.stop_on_error)
				{
					char	   *err = psprintf("message at offset " INT64_FORMAT " of partition %d: %s",
											   m->offset, m->part, edata->message);

					sfk_stop_subscription(err);
					stopped = true;
					n = i;		/* the messages after it are not consumed */
					break;
				}
				pending[m->part]++;
			}
		}
		for (i = 0; i < n; i++)
			if (msgs[i].ts >= 0)
				maxts[msgs[i].part] = Max(maxts[msgs[i].part], msgs[i].ts);
	}

	/* progress: the largest Kafka timestamp minus out_of_orderness */
	for (i = 0; i < sfk_sub.nparts; i++)
	{
		int64		p;
		Datum		args[3];
		Oid			types[3] = {TEXTOID, TEXTOID, INT8OID};

		if (maxts[i] < 0)
			continue;
		p = sfk_ms_to_units(maxts[i], sfk_sub.unit_us) - sfk_sub.ooo;
		if (p <= sfk_sub.progress[i])
			continue;
		args[0] = CStringGetTextDatum(sfk_sub.pipeline);
		args[1] = pnames[i];
		args[2] = Int64GetDatum(p);
		if (sfk_spi_kept(advance_sql, false, 3, types, args, NULL, false, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not advance partition \"%s\"", sfk_sub.pnames[i]);
		newprog[i] = p;
	}
	/*
	 * In the batch's context, read after the commit: every SPI call leaves
	 * CurrentMemoryContext at SPI's procedure context, which the commit
	 * deletes (a use after free that crashed the worker once a large
	 * message had been mapped in the batch).
	 */
	hw_written = MemoryContextAlloc(batchcxt, sizeof(int64) * sfk_sub.nparts);
	record_watermarks(hw_written);
	MemoryContextSwitchTo(TopMemoryContext);
	sfk_commit_tx();

	/* committed: the positions are the batch's */
	for (i = 0; i < sfk_sub.nparts; i++)
	{
		sfk_sub.consumed[i] = consumed[i];
		sfk_sub.pending[i] = pending[i];
		sfk_sub.progress[i] = newprog[i];
		sfk_sub.hw_saved[i] = hw_written[i];
	}
	return !stopped;
}

/*
 * The cluster no longer has the next offset of partition sfk_lost_part
 * (retention overtook the sfk_consumer, or the topic was recreated): the
 * subscription pauses with the state 'offsets lost' and an error that says
 * where each side stands.  The pipeline's offsets stay as they are (docs/
 * kafka.md, "Lost offsets").
 */
void
sfk_stop_lost_offsets(void)
{
	int64		lo = -1,
				hi = -1;
	char	   *error;

	(void) rd_kafka_query_watermark_offsets(sfk_consumer, sfk_sub.topic, sfk_lost_part, &lo, &hi, 5000);
	error = psprintf("offsets lost in partition %d of topic \"%s\": the next offset is " INT64_FORMAT
					 ", the partition holds offsets " INT64_FORMAT " to " INT64_FORMAT " (%s)",
					 sfk_lost_part, sfk_sub.topic, sfk_sub.consumed[sfk_lost_part] + sfk_sub.pending[sfk_lost_part] + 1,
					 lo, hi - 1, sfk_lost_reason);
	ereport(WARNING,
			(errmsg("streamforge_kafka: subscription %d: %s", sfk_sub.id, error),
			 errhint("The subscription is paused. See \"Lost offsets\" in docs/kafka.md.")));
	sfk_begin_tx("streamforge_kafka: lost offsets");
	if (sfk_subscription_active())
		sfk_pause_subscription(error, "offsets lost");
	sfk_commit_tx();
}
