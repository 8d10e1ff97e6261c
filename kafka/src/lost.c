/*
 * lost.c: lost offsets (issue 43, item 5).
 *
 * When the cluster no longer has a partition's next offset (retention
 * overtook the worker, or the topic was recreated), the worker pauses the
 * subscription with the state 'offsets lost' (batch.c).  The admin then
 * decides: skip_lost_offsets records the range from the pipeline's next
 * offset to the partition's first offset minus one in
 * streamforge_kafka.skipped_offsets (partition, from, to, when, by whom),
 * and resume() starts the worker again.  The pipeline's offsets stay the
 * source of truth: nothing here writes them.  The worker reads the range
 * that starts at the pipeline's next offset (sfk_skipped_ranges), seeks to
 * its end and delivers the range with the partition's next message, as it
 * does the offset of a skipped bad message (worker.c's header).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "kafka.h"

PG_FUNCTION_INFO_V1(sfk_skip_lost_offsets);

/*
 * The first and next offsets of a partition, asked of the cluster with the
 * subscription's options (the subscribing role's privileges).
 */
static void
partition_bounds(const char *brokers, const char *topic, int part, Jsonb *options,
				 bool superuser, int64 *lo, int64 *hi)
{
	rd_kafka_t *rk = sfk_oneshot_client(RD_KAFKA_CONSUMER, brokers, options, superuser);
	rd_kafka_resp_err_t err;

	err = rd_kafka_query_watermark_offsets(rk, topic, part, lo, hi, 10000);
	sfk_oneshot_done(rk);
	if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("could not read the offsets of partition %d of topic \"%s\" from \"%s\": %s",
						part, topic, brokers, rd_kafka_err2str(err))));
}

/*
 * streamforge_kafka.skip_lost_offsets(pipeline, topic, kafka_partition):
 * for a paused subscription the caller may act for (the check of resume),
 * records the lost range of the partition and returns its length.
 */
Datum
sfk_skip_lost_offsets(PG_FUNCTION_ARGS)
{
	char	   *pipeline = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *topic = text_to_cstring(PG_GETARG_TEXT_PP(1));
	int32		part = PG_GETARG_INT32(2);
	Datum		args[9];
	Oid			types[9] = {TEXTOID, TEXTOID, OIDOID};
	bool		isnull;
	int32		id;
	char	   *brokers;
	char	   *prefix;
	int32		nparts;
	bool		paused;
	Oid			role;
	Jsonb	   *options;
	int64		consumed;
	int64		lo = -1,
				hi = -1;
	int64		from;
	int			ret;

	args[0] = CStringGetTextDatum(pipeline);
	args[1] = CStringGetTextDatum(topic);
	args[2] = ObjectIdGetDatum(GetUserId());
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "could not connect to SPI");
	ret = sfk_spi_as_owner("SELECT s.id, s.brokers, s.partition_prefix, s.kafka_partitions, "
								"s.paused, s.role, s.options FROM streamforge_kafka.subscription AS s "
								"WHERE s.pipeline OPERATOR(pg_catalog.=) $1 "
								"AND s.topic OPERATOR(pg_catalog.=) $2 "
								"AND pg_catalog.pg_has_role($3, s.role, 'USAGE') FOR UPDATE",
						   3, types, args, NULL, false, 1);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not read the subscription");
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("pipeline \"%s\" has no subscription to topic \"%s\"", pipeline, topic)));
	id = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	brokers = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
	prefix = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3);
	nparts = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 4, &isnull));
	paused = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 5, &isnull));
	role = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 6, &isnull));
	options = DatumGetJsonbPCopy(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 7, &isnull));
	if (part < 0 || part >= nparts)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("topic \"%s\" has no partition %d in this subscription", topic, part),
				 errdetail("The subscription reads partitions 0 to %d.", nparts - 1)));
	if (!paused)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the subscription of pipeline \"%s\" to topic \"%s\" is not paused",
						pipeline, topic),
				 errhint("Offsets are skipped while the worker is stopped: pause() it first.")));

	/* where the pipeline stands (the caller's privileges on it) */
	args[2] = CStringGetTextDatum(psprintf("%s%d", prefix, part));
	types[2] = TEXTOID;
	if (SPI_execute_with_args("SELECT p.consumed_offset FROM streamforge.partitions($1) AS p "
							  "WHERE p.partition OPERATOR(pg_catalog.=) $3",
							  3, types, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the partitions");
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("pipeline \"%s\" has no partition \"%s%d\"", pipeline, prefix, part)));
	consumed = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	from = consumed + 1;

	partition_bounds(brokers, topic, part, options, superuser_arg(role), &lo, &hi);
	if (lo <= from)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("partition %d of topic \"%s\" lost no offset", part, topic),
				 errdetail("The pipeline's next offset is " INT64_FORMAT "; the partition holds offsets "
						   INT64_FORMAT " to " INT64_FORMAT ".", from, lo, hi - 1),
				 errhint("Resume the subscription: SELECT streamforge_kafka.resume(%s, %s);",
						 quote_literal_cstr(pipeline), quote_literal_cstr(topic))));

	/* recorded as the owner; a range of the same start grew: replaced */
	{
		Oid			itypes[9] = {INT4OID, TEXTOID, TEXTOID, INT4OID, INT8OID, INT8OID,
		NAMEOID, OIDOID};
		Datum		iargs[9];

		iargs[0] = Int32GetDatum(id);
		iargs[1] = CStringGetTextDatum(pipeline);
		iargs[2] = CStringGetTextDatum(topic);
		iargs[3] = Int32GetDatum(part);
		iargs[4] = Int64GetDatum(from);
		iargs[5] = Int64GetDatum(lo - 1);
		iargs[6] = DirectFunctionCall1(namein, CStringGetDatum(GetUserNameFromId(GetUserId(), false)));
		iargs[7] = ObjectIdGetDatum(role);
		ret = sfk_spi_as_owner("INSERT INTO streamforge_kafka.skipped_offsets AS k "
									"(subscription, pipeline, topic, kafka_partition, from_offset, "
									"to_offset, skipped_by, role) "
									"VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
									"ON CONFLICT (subscription, kafka_partition, from_offset) DO UPDATE "
									"SET to_offset = EXCLUDED.to_offset, skipped_by = EXCLUDED.skipped_by, "
									"skipped_at = pg_catalog.now()",
							   8, itypes, iargs, NULL, false, 0);
		if (ret != SPI_OK_INSERT)
			elog(ERROR, "could not record the skipped offsets");
	}
	ereport(LOG,
			(errmsg("streamforge_kafka: subscription %d: offsets " INT64_FORMAT " to " INT64_FORMAT
					" of partition %d of topic \"%s\" skipped by role \"%s\"",
					id, from, lo - 1, part, topic, GetUserNameFromId(GetUserId(), false))));
	SPI_finish();
	PG_RETURN_INT64(lo - from);
}

/*
 * For a worker (SPI connected): pending[i] = the offsets left of the
 * skipped range of Kafka partition i that holds the pipeline's next offset
 * consumed[i] + 1 (from it to the range's end), else 0.  The range starts
 * there, or before it when a worker delivered part of it and stopped
 * (batch.c delivers a long range batch_size offsets per transaction).
 * Of two such ranges (more was lost while one was delivered), the longer.
 */
void
sfk_skipped_ranges(int32 subscription, int nparts, const int64 *consumed, int64 *pending)
{
	Datum		arg = Int32GetDatum(subscription);
	Oid			type = INT4OID;
	int			ret;
	uint64		r;

	memset(pending, 0, sizeof(int64) * nparts);
	ret = sfk_spi_as_owner("SELECT k.kafka_partition, k.from_offset, k.to_offset "
								"FROM streamforge_kafka.skipped_offsets AS k "
								"WHERE k.subscription OPERATOR(pg_catalog.=) $1",
						   1, &type, &arg, NULL, true, 0);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not read the skipped offsets");
	for (r = 0; r < SPI_processed; r++)
	{
		bool		isnull;
		int32		part = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 1, &isnull));
		int64		from = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 2, &isnull));
		int64		to = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 3, &isnull));

		if (part >= 0 && part < nparts && from <= consumed[part] + 1 &&
			consumed[part] + 1 <= to)
			pending[part] = Max(pending[part], to - consumed[part]);
	}
}
