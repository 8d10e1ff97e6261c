/*
 * kafka.h: the few cross-file declarations of streamforge_kafka.
 *
 *   module.c   _PG_init, the settings, the launcher (one static background
 *              worker that starts a worker per active subscription)
 *   worker.c   the worker of one subscription: start, status, the loop
 *   batch.c    its batches: consume, map, ingest, advance, commit, one
 *              transaction per batch (worker.h: what the two share)
 *   mapping.c  a subscription's mapping as one SQL statement
 *   cmap.c     a subscription's mapping in C, when its fields allow
 *   aggmap.c   the mapping of a subscription that feeds an aggregate
 *              (subscribe_aggregate), the field functions
 *   aggrow.c   the rows of such a subscription made in C, the attachment's
 *              expression evaluated for each row, in parts for the C entry
 *   elems.c    the arrays of a batch's statement
 *   json.c     the values of a few keys of a JSON message, in one pass
 *   direct.c   the core's C write entry (src/api/direct.h), found through
 *              ingest_batch's library, for the batches of cmap.c, aggmap.c
 *              and aggrow.c; an aggregate subscription's deliveries
 *   client.c   librdkafka handles from a subscription's brokers and
 *              options, topic metadata (topic_partitions)
 *   options.c  the options a role may set (the allowlist), librdkafka's
 *              log through ereport
 *   lost.c     skip_lost_offsets, and the skipped ranges a worker starts after
 *   admin.c    subscribe, unsubscribe, pause, resume, set_on_error: the
 *              only writers of the subscriptions, and the checks of a
 *              stored subscription the worker runs before using it
 */
#ifndef SFK_KAFKA_H
#define SFK_KAFKA_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/jsonb.h"

#include <librdkafka/rdkafka.h>

#include "api/direct.h"

/* settings (module.c) */
extern char *sfk_database;
extern int	sfk_max_workers;
extern int	sfk_restart_time;
extern int	sfk_retry_max_ms;
extern int	sfk_fetch_nice;
extern int	sfk_max_workers_per_role;

/*
 * Bounds of a subscription (subscribe() refuses more; a worker refuses a
 * stored row beyond them before allocating anything for it).
 */
#define SFK_MAX_PARTITIONS 10000	/* Kafka partitions of one subscription */
#define SFK_MAX_BATCH 100000		/* batch_size */
#define SFK_MAX_WAIT 60000			/* max_wait, ms */
#define SFK_TOPIC_MAX 249			/* Kafka's limit on a topic name */
#define SFK_BROKERS_MAX 8192		/* bytes of brokers */
#define SFK_PREFIX_MAX 63			/* bytes of partition_prefix (a partition name's limit) */
#define SFK_MAPPING_MAX 65536		/* bytes of the mapping */
#define SFK_OPTIONS_MAX (4 * 1048576)	/* bytes of the options */
#define SFK_MAX_WORKERS 64			/* workers of one subscription */

/*
 * The locks of a subscription's workers (issue 46), advisory locktags of
 * the database, (subscription, n, field4): SFK_LOCK_WORKER with n the
 * worker (one process per worker slot), SFK_LOCK_PARTITION with n a Kafka
 * partition (one worker per partition, across a change of workers).  The
 * core's claims use field4 0x5347 and 0x5348, SQL's advisory locks 1 and 2.
 */
#define SFK_LOCK_WORKER 0x5f4b
#define SFK_LOCK_PARTITION 0x5f4c

/*
 * Worker w of n (n = least(workers, kafka_partitions)) reads the Kafka
 * partitions k with k % n == w: stable for a given n, every partition read
 * by exactly one worker, the counts within one of each other.
 */
#define SFK_OWNER(k, n) ((k) % (n))

/* direct.c */
extern bool sfk_direct_ingest;
extern SfDirectIngestFn sfk_direct_entry(bool measures, Oid *proc);
extern bool sfk_direct_usable(SfDirectIngestFn fn, Oid proc);
extern void sfk_direct_fill(SfDirectDelivery *d, int *bad, const Datum *values,
							const bool *nulls, char **pname, bool measures);
extern void sfk_aggregate_deliver_rows(const char *pipeline, bool measures, int nparts,
									   int32 *kparts, int *trailing, Datum *rows,
									   bool *rownulls, int n);
extern bool sfk_aggregate_direct(bool measures);
extern void sfk_aggregate_deliver_values(const char *pipeline, bool measures, int nparts,
										 int32 *kparts, int *trailing, Datum *vals,
										 bool *nulls, bool *rownulls, int n);

/* module.c */
extern PGDLLEXPORT void sfk_launcher_main(Datum arg);
extern void sfk_wake_launcher_at_commit(void);

/* worker.c */
extern PGDLLEXPORT void sfk_worker_main(Datum arg);

/* what the launcher passes a worker in bgw_extra */
typedef struct SfkWorkerArgs
{
	Oid			database;
	Oid			role;
	int32		subscription;
	int32		worker;			/* 0 .. n - 1 (issue 46) */
} SfkWorkerArgs;

/* the name of worker w of a subscription (application_name) */
extern void sfk_worker_name(char *buf, int32 subscription, int32 worker);

/* mapping.c */
extern char *sfk_build_mapping_sql(const char *format, Jsonb *mapping,
								   const char *topic, int64 unit_us);
extern int64 sfk_unit_us(Interval *unit);
extern int64 sfk_ms_to_units(int64 ms, int64 unit_us);

/* aggmap.c */
/* a column of an aggregate's table, and the field that feeds it */
typedef struct SfkAggCol
{
	char	   *name;
	Oid			typid;
	int32		typmod;
	bool		mapped;
	char	   *spec;			/* the field as the mapping writes it, "column N" for CSV */
	int			csvcol;			/* CSV: from 1; else 0 */
} SfkAggCol;

/* what the batch statement of an aggregate subscription is made of */
typedef struct SfkAggInfo
{
	Oid			relid;			/* the aggregate's table */
	bool		measures;
	int			ncols;
	SfkAggCol  *cols;
	char	   *filter;			/* or NULL */
	char	   *key_expr;
	char	   *time_expr;
	char	   *value_expr;
	char	   *id_expr;		/* the attachment's event id, or NULL */
	SfkAggCol	idcol;			/* the mapping's event_id (mapped), if any */
} SfkAggInfo;

extern char *sfk_build_aggregate_sql(const char *pipeline, const char *format,
									 Jsonb *mapping, const char *topic,
									 int64 unit_us, bool *measures,
									 char **table_partition, SfkAggInfo *info);
extern Datum sfk_convert_field(Oid type, FmgrInfo *in, Oid ioparam, const char *s,
							   const char *field, int64 unit_us);
extern char *sfk_json_lookup(Jsonb *j, const char *const *path, int n, const char *field);
extern void sfk_aggregate_deliver(const char *pipeline, bool measures, int nparts,
								  int32 *kparts, int *trailing);
extern void sfk_run_aggregate(SPIPlanPtr plan, Datum *args, Oid relid,
							  const char *pipeline, bool measures, int nparts,
							  int32 *kparts, int *trailing);
extern bool sfk_is_aggregate_mapping(Jsonb *mapping);
extern int64 sfk_interval_units(const char *pipeline, Interval *iv, const char *what);

/* worker.c, elems.c: one consumed message, copied out of librdkafka */
typedef struct Msg
{
	int32		part;
	int64		offset;
	bytea	   *key;			/* NULL: no key */
	bytea	   *payload;		/* NULL: no payload */
	int64		ts;				/* milliseconds, -1 if none */
} Msg;

/* elems.c */
/* The arrays of one statement: elements delivered in order. */
typedef struct Elems
{
	int			n;
	int			cap;
	Datum	   *pn,
			   *po,
			   *k,
			   *p,
			   *ts,
			   *ko,
			   *kp;
	bool	   *knull,
			   *pnull;
	Msg		  **m;				/* the message of each element */
} Elems;

extern void sfk_elems_init(Elems *e, int cap);
extern void sfk_elems_add(Elems *e, Msg *m, int64 at, Datum pname);
extern ArrayType *sfk_mk_array(Datum *d, bool *nulls, int n, Oid type);

/* cmap.c */
extern bool sfk_cmap_prepare(const char *format, Jsonb *mapping, const char *topic,
							 int64 unit_us);
extern void sfk_cmap_run(Elems *e, const char *pipeline);

/* json.c: the values of a few keys of a JSON message, in one pass */
#define SFK_JSON_MAX_KEYS 32

typedef enum SfkJsonKind
{
	SFK_JSON_MISSING,
	SFK_JSON_NULL,
	SFK_JSON_STRING,
	SFK_JSON_NUMBER,			/* s: the number as numeric_out writes it */
	SFK_JSON_BOOL				/* s: "true" or "false" */
} SfkJsonKind;

typedef struct SfkJsonValue
{
	SfkJsonKind kind;
	const char *s;				/* not terminated */
	int			len;
} SfkJsonValue;

typedef struct SfkJsonKey
{
	int			npath;
	char	  **path;
	int		   *klen;
	int			same;			/* during a scan: the key of the same path */
} SfkJsonKey;

/* the depths at which the scan picks a member's keys by its first byte */
#define SFK_JSON_FIRST_DEPTH 2

typedef struct SfkJsonKeys
{
	int			n;
	SfkJsonKey	k[SFK_JSON_MAX_KEYS];
	/* the keys whose component at depth d starts with byte c ([d][0]: "") */
	uint32		first[SFK_JSON_FIRST_DEPTH][256];
} SfkJsonKeys;

extern bool sfk_json_key(SfkJsonKeys *keys, char **path, int n);
extern bool sfk_json_scan(const char *text, int len, SfkJsonKeys *keys,
						  SfkJsonValue *out, char *buf);
extern bool sfk_parse_int8(const char *s, int len, int64 *out);

/* aggrow.c */
extern bool sfk_aggrow_prepare(SfkAggInfo *info, const char *format, const char *topic,
							   int64 unit_us);
extern void sfk_aggrow_run(Elems *e, const char *pipeline, bool measures, int nparts,
						   int *trailing);

/* lost.c */
extern void sfk_skipped_ranges(int32 subscription, int nparts, const int64 *consumed,
							   int64 *pending);

/* client.c */
extern rd_kafka_conf_t *sfk_make_conf(const char *brokers, Jsonb *options,
									  const char *group_id, bool superuser);
extern rd_kafka_t *sfk_oneshot_client(rd_kafka_type_t type, const char *brokers,
									  Jsonb *options, bool superuser);
extern void sfk_oneshot_done(rd_kafka_t *rk);
extern int	sfk_topic_partition_count(const char *brokers, const char *topic,
									  Jsonb *options, bool superuser);
extern int	sfk_count_partitions(rd_kafka_t *rk, const char *topic,
								 int timeout_ms, char *errbuf, size_t errlen);

/* options.c */
extern void sfk_check_options(Jsonb *options, bool superuser);
extern void sfk_conf_set_log(rd_kafka_conf_t *conf);
extern void sfk_serve_log(rd_kafka_t *rk);
extern void sfk_log_flush(void);

/* admin.c */
typedef struct SfkSavedUser
{
	Oid			userid;
	int			sec_context;
} SfkSavedUser;

extern void sfk_become_owner(SfkSavedUser *saved);
extern int	sfk_spi_as_owner(const char *sql, int nargs, Oid *types, Datum *args,
							 const char *nulls, bool read_only, long count);
extern void sfk_restore_user(SfkSavedUser *saved);
extern int	sfk_spi_kept(const char *sql, bool as_owner, int nargs, Oid *types,
						 Datum *args, const char *nulls, bool read_only, long count);

/*
 * The role an aggregate's expressions run as in the worker (admin.c): the
 * owner of its table, restricted, at a new GUC nest level
 */
typedef struct SfkTableOwner
{
	Oid			userid;
	int			sec_context;
	int			nestlevel;
} SfkTableOwner;

extern Oid	sfk_check_table_owner(Oid relid);
extern void sfk_become_table_owner(Oid relid, SfkTableOwner *saved);
extern void sfk_restore_table_owner(SfkTableOwner *saved);
extern void sfk_check_topic(const char *topic);
extern void sfk_check_brokers(const char *brokers);

#endif							/* SFK_KAFKA_H */
