/*-------------------------------------------------------------------------
 *
 * leftovers.c
 *	  What a dropped pipeline leaves behind outside streamforge's own
 *	  tables, told to the caller (issue 45, item 5; docs/management.md,
 *	  "What a drop leaves behind").  sf_sink_drop (sink.c) calls it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "persist/persist_int.h"
/*
 * What a dropped pipeline leaves in streamforge_kafka (issue 45, item 5):
 * its subscriptions (their workers stop at their next batch, refused) and
 * their dead letters, which belong to the subscribing roles and are not
 * ours to delete.  One NOTICE per topic, of the rows the caller may see
 * (row level security), with the calls that remove them.  Run as the
 * caller, unprepared: the tables exist only with streamforge_kafka.
 */
void
sf_report_kafka_leftovers(const char *pipeline)
{
	Oid			nsp = get_namespace_oid("streamforge_kafka", true);
	Oid			argtypes[1] = {TEXTOID};
	Datum		arg;

	if (!OidIsValid(nsp) ||
		!OidIsValid(get_relname_relid("subscription", nsp)) ||
		!OidIsValid(get_relname_relid("rejected", nsp)) ||
		pg_namespace_aclcheck(nsp, GetUserId(), ACL_USAGE) != ACLCHECK_OK)
		return;
	SPI_connect();
	arg = CStringGetTextDatum(pipeline);
	if (SPI_execute_with_args("SELECT l.topic, pg_catalog.bool_or(l.subscribed), "
							  "pg_catalog.sum(l.n)::pg_catalog.int8 FROM "
							  "(SELECT s.topic, true AS subscribed, 0 AS n "
							  "FROM streamforge_kafka.subscription AS s "
							  "WHERE s.pipeline OPERATOR(pg_catalog.=) $1 "
							  "UNION ALL SELECT r.topic, false, 1 "
							  "FROM streamforge_kafka.rejected AS r "
							  "WHERE r.pipeline OPERATOR(pg_catalog.=) $1) AS l "
							  "GROUP BY l.topic ORDER BY l.topic COLLATE \"C\"",
							  1, argtypes, &arg, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "streamforge: could not read the Kafka subscriptions");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		char	   *topic = SPI_getvalue(tup, desc, 1);
		bool		isnull;
		bool		subscribed = DatumGetBool(SPI_getbinval(tup, desc, 2, &isnull));
		int64		n = DatumGetInt64(SPI_getbinval(tup, desc, 3, &isnull));
		const char *q_pipeline = quote_literal_cstr(pipeline);
		const char *q_topic = quote_literal_cstr(topic);

		if (subscribed)
			ereport(NOTICE,
					(errmsg_plural("the subscription of pipeline \"%s\" to Kafka topic \"%s\" stays, with " INT64_FORMAT " dead letter",
								   "the subscription of pipeline \"%s\" to Kafka topic \"%s\" stays, with " INT64_FORMAT " dead letters",
								   n, pipeline, topic, n),
					 errdetail("Its worker fails and restarts until the subscription is removed."),
					 errhint("Remove it and its dead letters with SELECT streamforge_kafka.unsubscribe(%s, %s, purge => true);",
							 q_pipeline, q_topic)));
		else
			ereport(NOTICE,
					(errmsg_plural(INT64_FORMAT " dead letter of pipeline \"%s\" from Kafka topic \"%s\" stays",
								   INT64_FORMAT " dead letters of pipeline \"%s\" from Kafka topic \"%s\" stay",
								   n, n, pipeline, topic),
					 errhint("Remove them with SELECT streamforge_kafka.purge_dead_letters(%s, %s);",
							 q_pipeline, q_topic)));
	}
	SPI_finish();
}

