/*
 * admin.c: the functions that write the subscriptions.
 *
 * No role but the extension's owner may write the tables of the schema
 * streamforge_kafka (PUBLIC has SELECT, under row level security): a row
 * of streamforge_kafka.subscription is what a worker runs, as the role it
 * names, with the options and the numbers it holds, so it comes only from
 * subscribe(), which checks every piece as the caller (the pipeline's
 * ingest privilege, the options the caller may set, the mapping, the
 * bounds, the topic's partitions as the cluster reports them) and then
 * inserts the row as the owner.  unsubscribe(), pause(), resume() and
 * set_on_error() change a row the caller may act for (its own role's, or
 * one whose privileges it has: pg_has_role USAGE, as the row level
 * security of the tables says) and nothing else.
 *
 * None of them is SECURITY DEFINER: they run as the caller, which is what
 * the checks need, and switch to the owner (SECURITY_LOCAL_USERID_CHANGE,
 * a security-restricted operation) for one fixed, schema-qualified
 * statement.  An error restores the user: the transaction's abort does.
 * The worker uses the same switch for its status, its dead letters and
 * its stop (worker.c).
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "kafka.h"

PG_FUNCTION_INFO_V1(sfk_subscribe);
PG_FUNCTION_INFO_V1(sfk_subscribe_interval);
PG_FUNCTION_INFO_V1(sfk_subscribe_aggregate);
PG_FUNCTION_INFO_V1(sfk_unsubscribe);
PG_FUNCTION_INFO_V1(sfk_pause);
PG_FUNCTION_INFO_V1(sfk_resume);
PG_FUNCTION_INFO_V1(sfk_set_on_error);
PG_FUNCTION_INFO_V1(sfk_purge_dead_letters);
PG_FUNCTION_INFO_V1(sfk_set_workers);

/* The owner of the extension's tables. */
static Oid
kafka_owner(void)
{
	Oid			nsp = get_namespace_oid("streamforge_kafka", false);
	Oid			rel = get_relname_relid("subscription", nsp);
	HeapTuple	tup;
	Oid			owner;

	if (!OidIsValid(rel))
		elog(ERROR, "table streamforge_kafka.subscription is missing");
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(rel));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", rel);
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	return owner;
}

void
sfk_become_owner(SfkSavedUser *saved)
{
	Oid			owner = kafka_owner();

	GetUserIdAndSecContext(&saved->userid, &saved->sec_context);
	SetUserIdAndSecContext(owner, saved->sec_context |
						   SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
}

void
sfk_restore_user(SfkSavedUser *saved)
{
	SetUserIdAndSecContext(saved->userid, saved->sec_context);
}

/*
 * Runs the expressions of an aggregate as the owner of its table relid, in
 * a security-restricted operation at a new GUC nest level, until
 * sfk_restore_table_owner: as PostgreSQL's logical replication applies
 * changes as the table's owner (16's run_as_owner off) and REFRESH
 * MATERIALIZED VIEW runs its query.  The aggregate's GROUP BY, WHERE,
 * FILTER and arguments are its owner's code: a superuser who subscribes
 * an aggregate never runs that code with its own privileges, nor can the
 * code change the worker's session.  The owner is looked up at each call
 * (ALTER TABLE ... OWNER TO takes effect at the next batch), and the
 * current role must have its privileges (sfk_check_table_owner: a
 * superuser, the owner, a member of its role; as PostgreSQL 16 requires
 * of a subscription's owner), or the owner's code would run with rights
 * the subscriber does not have, on inputs it chooses.  An error ends both
 * with the transaction.
 */
/*
 * The owner of table relid (the aggregate's), which the current role must
 * have the privileges of (sfk_become_table_owner says why)
 */
Oid
sfk_check_table_owner(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			owner;

	if (!HeapTupleIsValid(tup))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("the table of the subscribed aggregate is gone")));
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	if (!has_privs_of_role(GetUserId(), owner))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to feed the aggregate of table \"%s\"",
						get_rel_name(relid)),
				 errdetail("Its expressions run as role \"%s\", the owner of the table, whose privileges the current user does not have.",
						   GetUserNameFromId(owner, false)),
				 errhint("Subscribe as that role, or as a member of it.")));
	return owner;
}

void
sfk_become_table_owner(Oid relid, SfkTableOwner *saved)
{
	Oid			owner = sfk_check_table_owner(relid);

	GetUserIdAndSecContext(&saved->userid, &saved->sec_context);
	SetUserIdAndSecContext(owner, saved->sec_context |
						   SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	saved->nestlevel = NewGUCNestLevel();
}

void
sfk_restore_table_owner(SfkTableOwner *saved)
{
	AtEOXact_GUC(false, saved->nestlevel);
	SetUserIdAndSecContext(saved->userid, saved->sec_context);
}

/*
 * Runs a statement on the extension's tables as their owner: the role a
 * worker runs as has no privilege on them but SELECT (admin.c).  The
 * statements are fixed and schema-qualified.
 */
int
sfk_spi_as_owner(const char *sql, int nargs, Oid *types, Datum *args,
			 const char *nulls, bool read_only, long count)
{
	SfkSavedUser saved;
	int			ret;

	sfk_become_owner(&saved);
	ret = SPI_execute_with_args(sql, nargs, types, args, nulls, read_only, count);
	sfk_restore_user(&saved);
	return ret;
}

/*
 * The worker's fixed statements of each batch (the subscription's check,
 * an advance and a high watermark per partition: 26 statements a batch
 * for 25 partitions), prepared once and kept (SPI_keepplan) instead of
 * parsed, analysed and planned at every execution: the plan cache
 * revalidates them (DDL, search_path) as it does a prepared statement's.
 * sql must be a string constant: it is known by its address.  When
 * as_owner, prepared and run as the extension's owner, as
 * sfk_spi_as_owner.
 */
int
sfk_spi_kept(const char *sql, bool as_owner, int nargs, Oid *types, Datum *args,
			 const char *nulls, bool read_only, long count)
{
	static struct
	{
		const char *sql;
		SPIPlanPtr	plan;
	}			kept[8];
	static int	nkept = 0;
	SPIPlanPtr	plan = NULL;
	SfkSavedUser saved;
	int			ret;
	int			i;

	if (as_owner)
		sfk_become_owner(&saved);
	for (i = 0; i < nkept; i++)
		if (kept[i].sql == sql)
			plan = kept[i].plan;
	if (plan == NULL)
	{
		if (nkept >= lengthof(kept))
			elog(ERROR, "too many kept statements");
		plan = SPI_prepare(sql, nargs, types);
		if (plan == NULL || SPI_keepplan(plan) != 0)
			elog(ERROR, "could not prepare a statement of the worker: %s",
				 SPI_result_code_string(SPI_result));
		kept[nkept].sql = sql;
		kept[nkept].plan = plan;
		nkept++;
	}
	ret = SPI_execute_plan(plan, args, nulls, read_only, count);
	if (as_owner)
		sfk_restore_user(&saved);
	return ret;
}

/* A Kafka topic name: 1 to 249 of [a-zA-Z0-9._-] (22023). */
void
sfk_check_topic(const char *topic)
{
	const char *p;

	for (p = topic; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			  (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '-'))
			break;
	if (*p != '\0' || p == topic || p - topic > SFK_TOPIC_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid Kafka topic name"),
				 errdetail("A topic name is 1 to %d of the characters a-z, A-Z, 0-9, \".\", \"_\" and \"-\".",
						   SFK_TOPIC_MAX)));
}

/* Brokers: 1 to SFK_BROKERS_MAX bytes, no control character (22023). */
void
sfk_check_brokers(const char *brokers)
{
	const unsigned char *p;

	for (p = (const unsigned char *) brokers; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("brokers must not contain control characters")));
	if (p == (const unsigned char *) brokers || strlen(brokers) > SFK_BROKERS_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("brokers must be 1 to %d bytes long", SFK_BROKERS_MAX)));
}

/*
 * streamforge_kafka.subscribe(pipeline, brokers, topic, format, mapping,
 * batch_size, max_wait, options, on_error, out_of_orderness): the checks
 * of 0.3.0's subscribe, in the same order with the same errors, then the
 * options against the caller's privileges, then the row, inserted as the
 * owner.  Returns the subscription's id.
 */
/* What subscribe() stores, checked by subscribe_row. */
typedef struct SubArgs
{
	char	   *pipeline;
	char	   *brokers;
	char	   *topic;
	char	   *format;
	Jsonb	   *mapping;
	int32		batch_size;
	int32		max_wait;
	Jsonb	   *options;
	char	   *on_error;
	int64		ooo;
	Interval   *ooo_interval;	/* or NULL: ooo is in units */
	bool		aggregate;		/* subscribe_aggregate */
	int32		workers;
} SubArgs;

static int32 subscribe_row(SubArgs *a);

/*
 * The number of workers of a subscription to pipeline (issue 46): 1 ..
 * SFK_MAX_WORKERS, and more than 1 only for a pipeline with writers =>
 * 'parallel'.  A serial pipeline is written by one transaction at a time
 * (its row lock): several workers would wait for each other's batches and
 * gain nothing, so they are refused rather than allowed to look like a
 * speed-up.  SPI connected.
 */
static void
check_workers(const char *pipeline, int32 workers)
{
	Datum		arg = CStringGetTextDatum(pipeline);
	Oid			type = TEXTOID;
	bool		isnull;
	bool		parallel = false;

	if (workers < 1 || workers > SFK_MAX_WORKERS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("workers %d is out of range", workers),
				 errdetail("workers is between 1 and %d.", SFK_MAX_WORKERS)));
	if (workers == 1)
		return;
	/* as the owner: the catalog row; the caller's privilege is checked apart */
	if (sfk_spi_as_owner("SELECT (p.definition OPERATOR(pg_catalog.->>) 'writers') "
						 "OPERATOR(pg_catalog.=) 'parallel' FROM streamforge.pipeline AS p "
						 "WHERE p.name OPERATOR(pg_catalog.=) $1",
						 1, &type, &arg, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the writers of pipeline \"%s\"", pipeline);
	if (SPI_processed == 1)
	{
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

		parallel = !isnull && DatumGetBool(d);
	}
	if (!parallel)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("pipeline \"%s\" has one writer at a time: its subscriptions have one worker",
						pipeline),
				 errdetail("Several workers write one pipeline at once only when it was created with writers => 'parallel'; on this pipeline they would wait for each other's batches."),
				 errhint("Create the pipeline with streamforge.create_pipeline(..., writers => 'parallel'), or keep workers => 1.")));
}

Datum
sfk_subscribe(PG_FUNCTION_ARGS)
{
	SubArgs		a;
	int			i;

	for (i = 0; i < 11; i++)
		if (PG_ARGISNULL(i))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("arguments of subscribe must not be null")));
	memset(&a, 0, sizeof(a));
	a.pipeline = text_to_cstring(PG_GETARG_TEXT_PP(0));
	a.brokers = text_to_cstring(PG_GETARG_TEXT_PP(1));
	a.topic = text_to_cstring(PG_GETARG_TEXT_PP(2));
	a.format = text_to_cstring(PG_GETARG_TEXT_PP(3));
	a.mapping = PG_GETARG_JSONB_P(4);
	a.batch_size = PG_GETARG_INT32(5);
	a.max_wait = PG_GETARG_INT32(6);
	a.options = PG_GETARG_JSONB_P(7);
	a.on_error = text_to_cstring(PG_GETARG_TEXT_PP(8));
	a.ooo = PG_GETARG_INT64(9);
	a.workers = PG_GETARG_INT32(10);
	PG_RETURN_INT32(subscribe_row(&a));
}

/*
 * streamforge_kafka.subscribe(pipeline, brokers, topic, out_of_orderness
 * interval, format, mapping, batch_size, max_wait, options, on_error): the
 * same, out_of_orderness an interval on a pipeline with a time unit
 * (issue 45, item 3).
 */
Datum
sfk_subscribe_interval(PG_FUNCTION_ARGS)
{
	SubArgs		a;
	int			i;

	for (i = 0; i < 11; i++)
		if (PG_ARGISNULL(i))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("arguments of subscribe must not be null")));
	memset(&a, 0, sizeof(a));
	a.pipeline = text_to_cstring(PG_GETARG_TEXT_PP(0));
	a.brokers = text_to_cstring(PG_GETARG_TEXT_PP(1));
	a.topic = text_to_cstring(PG_GETARG_TEXT_PP(2));
	a.ooo_interval = PG_GETARG_INTERVAL_P(3);
	a.format = text_to_cstring(PG_GETARG_TEXT_PP(4));
	a.mapping = PG_GETARG_JSONB_P(5);
	a.batch_size = PG_GETARG_INT32(6);
	a.max_wait = PG_GETARG_INT32(7);
	a.options = PG_GETARG_JSONB_P(8);
	a.on_error = text_to_cstring(PG_GETARG_TEXT_PP(9));
	a.workers = PG_GETARG_INT32(10);
	PG_RETURN_INT32(subscribe_row(&a));
}

/*
 * streamforge_kafka.subscribe_aggregate(aggregate, brokers, topic, columns,
 * format, event_id, partition_prefix, batch_size, max_wait, options,
 * on_error, out_of_orderness interval): a subscription that feeds an
 * aggregate made by create_aggregate through its table's mapping
 * (aggmap.c; issue 43, item 1).  The mapping stored is {"columns":
 * columns, "event_id": event_id, "partition_prefix": partition_prefix}.
 */
Datum
sfk_subscribe_aggregate(PG_FUNCTION_ARGS)
{
	SubArgs		a;
	int			i;
	StringInfoData m;

	for (i = 0; i < 13; i++)
		if (PG_ARGISNULL(i) && i != 5 && i != 6)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("arguments of subscribe_aggregate must not be null"),
					 errdetail("Only event_id and partition_prefix may be null.")));
	memset(&a, 0, sizeof(a));
	a.aggregate = true;
	a.pipeline = text_to_cstring(PG_GETARG_TEXT_PP(0));
	a.brokers = text_to_cstring(PG_GETARG_TEXT_PP(1));
	a.topic = text_to_cstring(PG_GETARG_TEXT_PP(2));
	a.format = text_to_cstring(PG_GETARG_TEXT_PP(4));
	initStringInfo(&m);
	appendStringInfo(&m, "{\"columns\": %s",
					 JsonbToCString(NULL, &PG_GETARG_JSONB_P(3)->root, VARSIZE(PG_GETARG_JSONB_P(3))));
	if (!PG_ARGISNULL(5))
		appendStringInfo(&m, ", \"event_id\": %s",
						 JsonbToCString(NULL, &PG_GETARG_JSONB_P(5)->root, VARSIZE(PG_GETARG_JSONB_P(5))));
	if (!PG_ARGISNULL(6))
	{
		appendStringInfoString(&m, ", \"partition_prefix\": ");
		escape_json(&m, text_to_cstring(PG_GETARG_TEXT_PP(6)));
	}
	appendStringInfoChar(&m, '}');
	a.mapping = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(m.data)));
	a.batch_size = PG_GETARG_INT32(7);
	a.max_wait = PG_GETARG_INT32(8);
	a.options = PG_GETARG_JSONB_P(9);
	a.on_error = text_to_cstring(PG_GETARG_TEXT_PP(10));
	a.ooo_interval = PG_GETARG_INTERVAL_P(11);
	a.workers = PG_GETARG_INT32(12);
	PG_RETURN_INT32(subscribe_row(&a));
}

/*
 * The checks of 0.3.0's subscribe, in the same order with the same
 * errors, then the options against the caller's privileges, then the row,
 * inserted as the owner.  Returns the subscription's id.
 */
static int32
subscribe_row(SubArgs *a)
{
	char	   *pipeline = a->pipeline;
	char	   *brokers = a->brokers;
	char	   *topic = a->topic;
	char	   *format = a->format;
	Jsonb	   *mapping = a->mapping;
	int32		batch_size = a->batch_size;
	int32		max_wait = a->max_wait;
	Jsonb	   *options = a->options;
	char	   *on_error = a->on_error;
	int64		ooo = a->ooo;
	Oid			caller = GetUserId();
	char	   *prefix;
	int			n;
	int		   *missing;
	int			nmissing;
	uint64		r;
	int			i;
	bool		isnull;
	int32		id;
	SfkSavedUser saved;
	char	   *table_partition = NULL;

	SPI_connect();
	{
		Datum		arg = CStringGetTextDatum(pipeline);
		Oid			type = TEXTOID;

		if (SPI_execute_with_args("SELECT streamforge.require_privilege($1, 'ingest')",
								  1, &type, &arg, NULL, false, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not check the ingest privilege");
	}
	check_workers(pipeline, a->workers);
	if (a->ooo_interval != NULL)
		ooo = sfk_interval_units(pipeline, a->ooo_interval, "out_of_orderness");
	if (strcmp(format, "json") != 0 && strcmp(format, "csv") != 0 &&
		strcmp(format, "text") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown format \"%s\"", format),
				 errhint("The formats are json, csv and text.")));
	if (strcmp(on_error, "skip") != 0 && strcmp(on_error, "stop") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown on_error \"%s\"", on_error),
				 errhint("on_error is skip or stop.")));
	if (batch_size < 1 || batch_size > SFK_MAX_BATCH)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("batch_size %d is out of range", batch_size),
				 errdetail("batch_size is between 1 and %d.", SFK_MAX_BATCH)));
	if (max_wait < 0 || max_wait > SFK_MAX_WAIT)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_wait %d is out of range", max_wait),
				 errdetail("max_wait is between 0 and %d milliseconds.", SFK_MAX_WAIT)));
	if (ooo < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("out_of_orderness must not be negative")));
	sfk_check_options(options, superuser());
	sfk_check_brokers(brokers);
	sfk_check_topic(topic);
	if (VARSIZE(mapping) > SFK_MAPPING_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the mapping is too large"),
				 errdetail("It takes %zu bytes; the limit is %d.",
						   (size_t) VARSIZE(mapping), SFK_MAPPING_MAX)));

	/*
	 * A pipeline subscribe cannot feed is refused here (issue 43, item 2):
	 * a measures pipeline (one value per message), an aggregate's pipeline
	 * (its WHERE, FILTER and measures apply to its table's rows:
	 * subscribe_aggregate maps messages to them).
	 */
	if (!a->aggregate)
	{
		Datum		arg = CStringGetTextDatum(pipeline);
		Oid			type = TEXTOID;

		if (SPI_execute_with_args("SELECT EXISTS (SELECT FROM streamforge.aggregates AS a "
								  "WHERE a.name OPERATOR(pg_catalog.=) $1), "
								  "streamforge_internal.pipeline_nmeasures($1)",
								  1, &type, &arg, NULL, false, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not read the pipeline");
		if (DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)))
			ereport(ERROR,
					(errcode(ERRCODE_WRONG_OBJECT_TYPE),
					 errmsg("pipeline \"%s\" is an aggregate made by create_aggregate", pipeline),
					 errdetail("Its WHERE, FILTER and measures apply to rows of its table, not to the fields of this mapping."),
					 errhint("Feed it with streamforge_kafka.subscribe_aggregate(%s, brokers, topic, columns => ...).",
							 quote_literal_cstr(pipeline))));
		(void) SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
		if (!isnull)
			ereport(ERROR,
					(errcode(ERRCODE_WRONG_OBJECT_TYPE),
					 errmsg("pipeline \"%s\" has %d measures: subscribe cannot feed it", pipeline,
							DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull))),
					 errdetail("A subscription's mapping gives one value per message.")));
	}

	/* checks the mapping; the prefix */
	if (a->aggregate)
	{
		Datum		arg = CStringGetTextDatum(pipeline);
		Oid			type = TEXTOID;
		Datum		unit;
		int64		unit_us;
		bool		measures;
		JsonbValue	v;
		SfkAggInfo	info;

		if (SPI_execute_with_args("SELECT streamforge.time_unit($1)", 1, &type, &arg,
								  NULL, false, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not read the time unit");
		unit = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		unit_us = isnull ? 0 : sfk_unit_us(DatumGetIntervalP(unit));
		(void) sfk_build_aggregate_sql(pipeline, format, mapping, topic, unit_us, &measures,
									   &table_partition, &info);
		/* its expressions will run as its table's owner: refused up front */
		(void) sfk_check_table_owner(info.relid);
		if (getKeyJsonValueFromContainer(&mapping->root, "partition_prefix", 16, &v) != NULL &&
			v.type == jbvString)
			prefix = pnstrdup(v.val.string.val, v.val.string.len);
		else
			prefix = psprintf("%s-", topic);
		if (strlen(prefix) > SFK_PREFIX_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("partition_prefix is longer than %d bytes", SFK_PREFIX_MAX)));
	}
	else
	{
		Datum		args[4];
		Oid			types[4] = {TEXTOID, JSONBOID, TEXTOID, TEXTOID};

		args[0] = CStringGetTextDatum(format);
		args[1] = JsonbPGetDatum(mapping);
		args[2] = CStringGetTextDatum(topic);
		args[3] = CStringGetTextDatum(pipeline);
		if (SPI_execute_with_args("SELECT streamforge_kafka.mapping_sql($1, $2, $3, streamforge.time_unit($4)) IS NOT NULL, "
								  "COALESCE($2 OPERATOR(pg_catalog.->>) 'partition_prefix', "
								  "$3 OPERATOR(pg_catalog.||) '-')",
								  4, types, args, NULL, false, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not check the mapping");
		prefix = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
	}

	n = sfk_topic_partition_count(brokers, topic, options, superuser());
	if (n > SFK_MAX_PARTITIONS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("topic \"%s\" has %d partitions, more than a subscription can consume",
						topic, n),
				 errdetail("The limit is %d partitions.", SFK_MAX_PARTITIONS)));

	/*
	 * An aggregate's table and the topic never share a pipeline partition
	 * (issue 43, item 6): a row inserted into the table would take the
	 * offset of a Kafka message, which would then be a duplicate.
	 */
	if (a->aggregate)
	{
		if (table_partition == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("aggregate \"%s\" routes the rows of its table by an expression", pipeline),
					 errdetail("The rows inserted into its table could go to a partition of the topic and take the offsets of its messages."),
					 errhint("Feed the topic into an aggregate made without partition => an expression.")));
		for (i = 0; i < n; i++)
			if (strcmp(table_partition, psprintf("%s%d", prefix, i)) == 0)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("partition \"%s\" of aggregate \"%s\" receives the rows of its table", table_partition, pipeline),
						 errdetail("Kafka partition %d of topic \"%s\" would feed it too: a row inserted into the table would take the offset of a message.",
								   i, topic),
						 errhint("Pass another partition_prefix.")));
	}

	/* the pipeline partitions that are missing, created (admin privilege) */
	{
		Datum		args[3];
		Oid			types[3] = {TEXTOID, TEXTOID, INT4OID};

		args[0] = CStringGetTextDatum(pipeline);
		args[1] = CStringGetTextDatum(prefix);
		args[2] = Int32GetDatum(n);
		if (SPI_execute_with_args("SELECT g.i FROM pg_catalog.generate_series(0, $3 OPERATOR(pg_catalog.-) 1) AS g(i) "
								  "WHERE NOT EXISTS (SELECT FROM streamforge.partitions($1) AS p "
								  "WHERE p.partition OPERATOR(pg_catalog.=) "
								  "($2 OPERATOR(pg_catalog.||) g.i::pg_catalog.text)) ORDER BY g.i",
								  3, types, args, NULL, false, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not read the partitions");
		nmissing = (int) SPI_processed;
		missing = palloc(sizeof(int) * Max(nmissing, 1));
		for (r = 0; r < SPI_processed; r++)
			missing[r] = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[r],
													 SPI_tuptable->tupdesc, 1, &isnull));
		for (i = 0; i < nmissing; i++)
		{
			Datum		pargs[2];
			Oid			ptypes[2] = {TEXTOID, TEXTOID};

			pargs[0] = args[0];
			pargs[1] = CStringGetTextDatum(psprintf("%s%d", prefix, missing[i]));
			if (SPI_execute_with_args("SELECT pg_catalog.count(*) FROM streamforge.add_partition($1, $2)",
									  2, ptypes, pargs, NULL, false, 0) != SPI_OK_SELECT)
				elog(ERROR, "could not add a partition");
		}
	}

	/* the row, as the owner */
	{
		Datum		args[14];
		Oid			types[14] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, JSONBOID, TEXTOID,
		INT4OID, INT4OID, INT4OID, INT8OID, TEXTOID, JSONBOID, OIDOID, INT4OID};

		args[0] = CStringGetTextDatum(pipeline);
		args[1] = CStringGetTextDatum(brokers);
		args[2] = CStringGetTextDatum(topic);
		args[3] = CStringGetTextDatum(format);
		args[4] = JsonbPGetDatum(mapping);
		args[5] = CStringGetTextDatum(prefix);
		args[6] = Int32GetDatum(n);
		args[7] = Int32GetDatum(batch_size);
		args[8] = Int32GetDatum(max_wait);
		args[9] = Int64GetDatum(ooo);
		args[10] = CStringGetTextDatum(on_error);
		args[11] = JsonbPGetDatum(options);
		args[12] = ObjectIdGetDatum(caller);
		args[13] = Int32GetDatum(a->workers);
		sfk_become_owner(&saved);
		if (SPI_execute_with_args("INSERT INTO streamforge_kafka.subscription AS s "
								  "(pipeline, brokers, topic, format, mapping, partition_prefix, "
								  "kafka_partitions, batch_size, max_wait, out_of_orderness, on_error, "
								  "options, role, workers) "
								  "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) "
								  "RETURNING s.id",
								  14, types, args, NULL, false, 0) != SPI_OK_INSERT_RETURNING)
			elog(ERROR, "could not insert the subscription");
		id = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
		sfk_wake_launcher_at_commit();	/* as the owner: it reads pg_stat_activity */
		sfk_restore_user(&saved);
	}
	SPI_finish();
	return id;
}

/*
 * Runs sql (an UPDATE or DELETE of the subscription of pipeline $1 and
 * topic $2 the caller $3 may act for, $4 an extra argument) as the owner;
 * 42704 when there is no such row.
 */
static void
change_subscription(FunctionCallInfo fcinfo, const char *sql, int expect,
					const char *extra)
{
	char	   *pipeline = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *topic = text_to_cstring(PG_GETARG_TEXT_PP(1));
	Datum		args[4];
	Oid			types[4] = {TEXTOID, TEXTOID, OIDOID, TEXTOID};
	SfkSavedUser saved;
	int			ret;

	args[0] = CStringGetTextDatum(pipeline);
	args[1] = CStringGetTextDatum(topic);
	args[2] = ObjectIdGetDatum(GetUserId());
	args[3] = extra ? CStringGetTextDatum(extra) : (Datum) 0;
	SPI_connect();
	sfk_become_owner(&saved);
	ret = SPI_execute_with_args(sql, extra ? 4 : 3, types, args, NULL, false, 0);
	if (ret != expect)
		elog(ERROR, "could not change the subscription");
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("pipeline \"%s\" has no subscription to topic \"%s\"",
						pipeline, topic)));
	sfk_wake_launcher_at_commit();	/* resumed: its worker starts at once */
	sfk_restore_user(&saved);
	SPI_finish();
}

#define SFK_MINE "s.pipeline OPERATOR(pg_catalog.=) $1 AND s.topic OPERATOR(pg_catalog.=) $2 " \
	"AND pg_catalog.pg_has_role($3, s.role, 'USAGE')"

/*
 * Deletes, as the owner, the dead letters of pipeline and topic whose role
 * the caller has the privileges of (those it sees), whether or not their
 * subscription still exists; returns how many.
 */
static int64
purge_dead_letters(const char *pipeline, const char *topic)
{
	Datum		args[3];
	Oid			types[3] = {TEXTOID, TEXTOID, OIDOID};
	SfkSavedUser saved;
	int			ret;
	int64		n;

	args[0] = CStringGetTextDatum(pipeline);
	args[1] = CStringGetTextDatum(topic);
	args[2] = ObjectIdGetDatum(GetUserId());
	SPI_connect();
	sfk_become_owner(&saved);
	ret = SPI_execute_with_args("DELETE FROM streamforge_kafka.rejected AS s WHERE " SFK_MINE,
								3, types, args, NULL, false, 0);
	sfk_restore_user(&saved);
	if (ret != SPI_OK_DELETE)
		elog(ERROR, "could not delete the dead letters");
	n = (int64) SPI_processed;
	SPI_finish();
	return n;
}

/* The dead letters of pipeline and topic the caller sees. */
static int64
count_dead_letters(const char *pipeline, const char *topic)
{
	Datum		args[2];
	Oid			types[2] = {TEXTOID, TEXTOID};
	bool		isnull;
	int64		n;

	args[0] = CStringGetTextDatum(pipeline);
	args[1] = CStringGetTextDatum(topic);
	SPI_connect();
	/* as the caller: row level security shows the rows it may act for */
	if (SPI_execute_with_args("SELECT pg_catalog.count(*) FROM streamforge_kafka.rejected AS r "
							  "WHERE r.pipeline OPERATOR(pg_catalog.=) $1 "
							  "AND r.topic OPERATOR(pg_catalog.=) $2",
							  2, types, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not count the dead letters");
	n = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_finish();
	return n;
}

/*
 * streamforge_kafka.unsubscribe(pipeline, topic, purge): with purge, the
 * subscription's dead letters go too; without, a NOTICE says how many stay
 * (issue 45, item 5).
 */
Datum
sfk_unsubscribe(PG_FUNCTION_ARGS)
{
	char	   *pipeline = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *topic = text_to_cstring(PG_GETARG_TEXT_PP(1));
	bool		purge = PG_GETARG_BOOL(2);
	int64		n;

	change_subscription(fcinfo,
						"DELETE FROM streamforge_kafka.subscription AS s WHERE " SFK_MINE,
						SPI_OK_DELETE, NULL);
	if (purge)
		(void) purge_dead_letters(pipeline, topic);
	else if ((n = count_dead_letters(pipeline, topic)) > 0)
		ereport(NOTICE,
				(errmsg_plural(INT64_FORMAT " dead letter of pipeline \"%s\" from topic \"%s\" stays in streamforge_kafka.rejected",
							   INT64_FORMAT " dead letters of pipeline \"%s\" from topic \"%s\" stay in streamforge_kafka.rejected",
							   n, n, pipeline, topic),
				 errhint("Remove them with SELECT streamforge_kafka.purge_dead_letters(%s, %s);",
						 quote_literal_cstr(pipeline), quote_literal_cstr(topic))));
	PG_RETURN_VOID();
}

/*
 * streamforge_kafka.purge_dead_letters(pipeline, topic): deletes the dead
 * letters of pipeline and topic the caller may act for (the check of
 * unsubscribe), of a subscription that exists or not; returns how many.
 */
Datum
sfk_purge_dead_letters(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(purge_dead_letters(text_to_cstring(PG_GETARG_TEXT_PP(0)),
									   text_to_cstring(PG_GETARG_TEXT_PP(1))));
}

/* streamforge_kafka.pause(pipeline, topic) */
Datum
sfk_pause(PG_FUNCTION_ARGS)
{
	change_subscription(fcinfo,
						"UPDATE streamforge_kafka.subscription AS s SET paused = true WHERE " SFK_MINE,
						SPI_OK_UPDATE, NULL);
	PG_RETURN_VOID();
}

/* streamforge_kafka.resume(pipeline, topic): also clears the error */
Datum
sfk_resume(PG_FUNCTION_ARGS)
{
	change_subscription(fcinfo,
						"UPDATE streamforge_kafka.subscription AS s SET paused = false, error = NULL WHERE " SFK_MINE,
						SPI_OK_UPDATE, NULL);
	PG_RETURN_VOID();
}

/* streamforge_kafka.set_on_error(pipeline, topic, on_error) */
Datum
sfk_set_on_error(PG_FUNCTION_ARGS)
{
	char	   *on_error = text_to_cstring(PG_GETARG_TEXT_PP(2));

	if (strcmp(on_error, "skip") != 0 && strcmp(on_error, "stop") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown on_error \"%s\"", on_error),
				 errhint("on_error is skip or stop.")));
	change_subscription(fcinfo,
						"UPDATE streamforge_kafka.subscription AS s SET on_error = $4 WHERE " SFK_MINE,
						SPI_OK_UPDATE, on_error);
	PG_RETURN_VOID();
}

/*
 * streamforge_kafka.set_workers(pipeline, topic, workers): the number of
 * workers of such a subscription (issue 46; check_workers says which).
 * Its running workers see the change at their next batch and exit; the
 * launcher, woken at commit, starts the new set (kafka/src/module.c).
 */
Datum
sfk_set_workers(PG_FUNCTION_ARGS)
{
	int32		workers = PG_GETARG_INT32(2);

	SPI_connect();
	check_workers(text_to_cstring(PG_GETARG_TEXT_PP(0)), workers);
	SPI_finish();
	change_subscription(fcinfo,
						"UPDATE streamforge_kafka.subscription AS s "
						"SET workers = pg_catalog.int4($4) WHERE " SFK_MINE,
						SPI_OK_UPDATE, psprintf("%d", workers));
	PG_RETURN_VOID();
}
