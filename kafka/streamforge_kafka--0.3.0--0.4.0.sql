-- streamforge_kafka 0.3.0 -> 0.4.0 (ALTER EXTENSION streamforge_kafka
-- UPDATE TO '0.4.0'): least privilege (issue 37).  After it the
-- extension's objects are exactly those of a fresh 0.4.0 install
-- (streamforge_kafka--0.4.0.sql; test/t/144_kafka_privileges.pl compares
-- the catalogs), and the subscriptions, their workers' positions and the
-- dead letters stay as they are.
--
-- - No role but the owner writes the tables any more: 0.3.0 granted
--   INSERT, UPDATE and DELETE to PUBLIC, so a role could insert a
--   subscription with any kafka_partitions and options (finding 3) and
--   take the worker slots (finding 7).  The rows come from subscribe(),
--   the changes from unsubscribe, pause, resume and the new set_on_error
--   (C functions that check as the caller and write as the owner), the
--   workers' writes as the owner too (dead letters whatever the
--   subscriber's own privileges: finding 8).
-- - topic_partitions is no longer PUBLIC (finding 2): subscribe asks the
--   cluster itself, with the options the caller may set.
-- - A row that an earlier version let anyone write is checked by its
--   worker before use (numbers, sizes, options against the privileges of
--   the role it records) and refused with a log line.
-- - Several workers per subscription (issue 46): subscription.workers
--   (1 for every existing subscription: nothing changes for them),
--   worker_status keyed by (subscription, worker), the view's worker
--   column, subscribe's last argument workers and set_workers.

\echo Use "ALTER EXTENSION streamforge_kafka UPDATE TO '0.4.0'" to load this file. \quit

REVOKE INSERT, UPDATE, DELETE ON streamforge_kafka.subscription FROM PUBLIC;
REVOKE INSERT, UPDATE, DELETE ON streamforge_kafka.worker_status FROM PUBLIC;
REVOKE INSERT, UPDATE, DELETE ON streamforge_kafka.partition_status FROM PUBLIC;
REVOKE INSERT, UPDATE, DELETE ON streamforge_kafka.rejected FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION streamforge_kafka.topic_partitions(text, text, jsonb) FROM PUBLIC;

-- The functions that write the subscriptions, now in C (kafka/src/admin.c):
-- the same signatures, defaults and comments as 0.3.0's.

-- Subscribes a pipeline to a topic: Kafka partition n feeds the pipeline
-- partition partition_prefix || n (topic || '-' || n unless the mapping
-- names a prefix), which must exist or is created (add_partition, which
-- needs the admin privilege).  The caller needs the ingest privilege, may
-- set only the options of the allowlist (docs/kafka.md) unless a
-- superuser, and the subscription's worker runs as the caller.  Issue 46
-- adds workers (the workers that share the topic's partitions), so the
-- old signature goes.
DROP FUNCTION streamforge_kafka.subscribe(text, text, text, text, jsonb,
    integer, integer, jsonb, text, bigint);
CREATE FUNCTION streamforge_kafka.subscribe(pipeline text, brokers text,
    topic text, format text DEFAULT 'json', mapping jsonb DEFAULT '{}',
    batch_size integer DEFAULT 1000, max_wait integer DEFAULT 100,
    options jsonb DEFAULT '{}', on_error text DEFAULT 'stop',
    out_of_orderness bigint DEFAULT 0, workers integer DEFAULT 1)
RETURNS integer
AS 'MODULE_PATHNAME', 'sfk_subscribe'
LANGUAGE C VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION streamforge_kafka.subscribe(text, text, text, text, jsonb,
    integer, integer, jsonb, text, bigint, integer) IS
    'consume a Kafka topic into a pipeline, exactly once (ingest privilege)';

-- Removes a subscription; its worker stops after its current batch (which
-- commits or not, whole).  The dead letters stay (a NOTICE says how many)
-- unless purge (issue 45: a new argument, so the old signature goes).
DROP FUNCTION streamforge_kafka.unsubscribe(text, text);
CREATE FUNCTION streamforge_kafka.unsubscribe(pipeline text, topic text,
    purge boolean DEFAULT false)
RETURNS void
AS 'MODULE_PATHNAME', 'sfk_unsubscribe'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

-- Deletes the dead letters of a pipeline and topic that the caller may act
-- for (as unsubscribe checks), whether the subscription exists or not;
-- returns how many (issue 45).
CREATE FUNCTION streamforge_kafka.purge_dead_letters(pipeline text, topic text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sfk_purge_dead_letters'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

-- Pauses a subscription (its worker stops after its current batch).
CREATE OR REPLACE FUNCTION streamforge_kafka.pause(pipeline text, topic text)
RETURNS void
AS 'MODULE_PATHNAME', 'sfk_pause'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

-- Resumes a paused or stopped subscription (clears its error): the
-- launcher starts its worker within a second.
CREATE OR REPLACE FUNCTION streamforge_kafka.resume(pipeline text, topic text)
RETURNS void
AS 'MODULE_PATHNAME', 'sfk_resume'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

-- What a bad message does to the subscription from now on: 'stop' or
-- 'skip' (docs/kafka.md, "Bad messages").
CREATE FUNCTION streamforge_kafka.set_on_error(pipeline text, topic text,
    on_error text)
RETURNS void
AS 'MODULE_PATHNAME', 'sfk_set_on_error'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION streamforge_kafka.set_on_error(text, text, text) IS
    'what a bad message does to the subscription: stop or skip';
COMMENT ON FUNCTION streamforge_kafka.unsubscribe(text, text, boolean) IS
    'remove a subscription; its worker stops after its current batch; purge: its dead letters too';
COMMENT ON FUNCTION streamforge_kafka.purge_dead_letters(text, text) IS
    'delete the dead letters of a pipeline and topic, subscribed or not';

-- ----------------------------------------------------------------
-- Feeding an aggregate (issue 43) and intervals (issue 45, item 3)
-- ----------------------------------------------------------------

-- subscribe with out_of_orderness as an interval, on a pipeline with a
-- time unit (issue 45, item 3): the same as subscribe, out_of_orderness
-- converted to the pipeline's units (rounded down).
CREATE FUNCTION streamforge_kafka.subscribe(pipeline text, brokers text,
    topic text, out_of_orderness interval, format text DEFAULT 'json',
    mapping jsonb DEFAULT '{}', batch_size integer DEFAULT 1000,
    max_wait integer DEFAULT 100, options jsonb DEFAULT '{}',
    on_error text DEFAULT 'stop', workers integer DEFAULT 1)
RETURNS integer
AS 'MODULE_PATHNAME', 'sfk_subscribe_interval'
LANGUAGE C VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

-- Subscribes an aggregate made by streamforge.create_aggregate to a topic
-- (issue 43): each message is mapped to a row of the aggregate's table
-- (columns: {"column": field, ...}, a JSON key or path of keys $.a.b, a CSV
-- column number, or kafka_key, kafka_timestamp, kafka_offset,
-- kafka_partition, kafka_id, payload), and the aggregate's WHERE, key,
-- time and measures apply to it as to a row inserted into the table.  The
-- event id is event_id's field, else the aggregate's own (its table's
-- primary key) when mapped, else topic/partition/offset.  The checks and
-- the privileges are subscribe's.
CREATE FUNCTION streamforge_kafka.subscribe_aggregate(aggregate text,
    brokers text, topic text, columns jsonb, format text DEFAULT 'json',
    event_id jsonb DEFAULT NULL, partition_prefix text DEFAULT NULL,
    batch_size integer DEFAULT 1000, max_wait integer DEFAULT 100,
    options jsonb DEFAULT '{}', on_error text DEFAULT 'stop',
    out_of_orderness interval DEFAULT '0', workers integer DEFAULT 1)
RETURNS integer
AS 'MODULE_PATHNAME', 'sfk_subscribe_aggregate'
LANGUAGE C VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

-- The field functions of an aggregate subscription's statement: a
-- message's value as a column's type (the type of template), in C; an
-- error names the field (kafka/src/aggmap.c).
CREATE FUNCTION streamforge_kafka.field(value text, field text,
    unit_us bigint, template anyelement)
RETURNS anyelement
AS 'MODULE_PATHNAME', 'sfk_field'
LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION streamforge_kafka.json_field(j jsonb, path text[], field text,
    unit_us bigint, template anyelement)
RETURNS anyelement
AS 'MODULE_PATHNAME', 'sfk_json_field'
LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION streamforge_kafka.csv_field(c text[], n integer, field text,
    unit_us bigint, template anyelement)
RETURNS anyelement
AS 'MODULE_PATHNAME', 'sfk_csv_field'
LANGUAGE C STABLE PARALLEL SAFE;

COMMENT ON FUNCTION streamforge_kafka.subscribe(text, text, text, interval, text,
    jsonb, integer, integer, jsonb, text, integer) IS
    'consume a Kafka topic into a pipeline, out_of_orderness as an interval';
COMMENT ON FUNCTION streamforge_kafka.subscribe_aggregate(text, text, text, jsonb,
    text, jsonb, text, integer, integer, jsonb, text, interval, integer) IS
    'consume a Kafka topic into an aggregate of create_aggregate, messages mapped to its table''s columns';
COMMENT ON FUNCTION streamforge_kafka.field(text, text, bigint, anyelement) IS
    'a message''s value as a column''s type (internal helper of aggregate subscriptions)';
COMMENT ON FUNCTION streamforge_kafka.json_field(jsonb, text[], text, bigint, anyelement) IS
    'a JSON message''s member as a column''s type (internal helper of aggregate subscriptions)';
COMMENT ON FUNCTION streamforge_kafka.csv_field(text[], integer, text, bigint, anyelement) IS
    'a CSV message''s column as a column''s type (internal helper of aggregate subscriptions)';

-- The error of a message without a field its mapping reads (issue 45,
-- item 4): 22004, naming the field and what it maps.
CREATE FUNCTION streamforge_kafka.missing_field(field text, spec text)
RETURNS text
AS 'MODULE_PATHNAME', 'sfk_missing_field'
LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION streamforge_kafka.missing_field(text, text) IS
    'raises the error of a message without a mapped field (internal helper of the mappings)';

-- ----------------------------------------------------------------
-- Lost offsets (issue 43, item 5)
-- ----------------------------------------------------------------

-- The offset ranges skipped by skip_lost_offsets: offsets the cluster no
-- longer had when a subscription needed them (retention overtook the
-- worker), who skipped them and when.  Kept after unsubscribe, as an
-- audit.  The pipeline's offsets stay the source of truth: the worker
-- delivers a skipped range with the partition's next message, as it does
-- the offset of a skipped bad message, and reads this table only for the
-- range that starts at the pipeline's next offset.
CREATE TABLE streamforge_kafka.skipped_offsets (
    subscription integer NOT NULL,
    pipeline text NOT NULL,
    topic text NOT NULL,
    kafka_partition integer NOT NULL,
    from_offset bigint NOT NULL,
    to_offset bigint NOT NULL,
    skipped_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    skipped_by name NOT NULL,
    role oid NOT NULL,
    PRIMARY KEY (subscription, kafka_partition, from_offset),
    CHECK (to_offset OPERATOR(pg_catalog.>=) from_offset)
);
ALTER TABLE streamforge_kafka.skipped_offsets ENABLE ROW LEVEL SECURITY;
CREATE POLICY skipped_offsets_own ON streamforge_kafka.skipped_offsets
    USING (pg_catalog.pg_has_role(role, 'USAGE'))
    WITH CHECK (pg_catalog.pg_has_role(role, 'USAGE'));
GRANT SELECT ON streamforge_kafka.skipped_offsets TO PUBLIC;
COMMENT ON TABLE streamforge_kafka.skipped_offsets IS
    'offset ranges skipped by skip_lost_offsets after the cluster lost them: who, when';

-- Skips the offsets that Kafka partition kafka_partition of a paused
-- subscription lost: from the pipeline's next offset to the partition's
-- first offset minus one, recorded in skipped_offsets; returns how many.
-- Then resume() the subscription.  The caller must have the privileges of
-- the subscribing role (as for resume).
CREATE FUNCTION streamforge_kafka.skip_lost_offsets(pipeline text, topic text,
    kafka_partition integer)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sfk_skip_lost_offsets'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION streamforge_kafka.skip_lost_offsets(text, text, integer) IS
    'skip the offsets a paused subscription''s partition lost (retention), recorded in skipped_offsets';

-- ----------------------------------------------------------------
-- Several workers per subscription (issue 46)
-- ----------------------------------------------------------------

-- The number of workers of a subscription, and one status row per worker
-- (the primary key gains the worker; the rows of 0.3.0 are worker 0's).
ALTER TABLE streamforge_kafka.subscription
    ADD COLUMN workers integer NOT NULL DEFAULT 1
        CHECK (workers OPERATOR(pg_catalog.>=) 1
               AND workers OPERATOR(pg_catalog.<=) 64);
ALTER TABLE streamforge_kafka.worker_status
    ADD COLUMN worker integer NOT NULL DEFAULT 0;
ALTER TABLE streamforge_kafka.worker_status
    DROP CONSTRAINT worker_status_pkey,
    ADD PRIMARY KEY (subscription, worker);

-- One row per Kafka partition of each subscription the current user may
-- see: the pipeline partition it feeds, its consumed offset (from the
-- pipeline, the source of truth), the high watermark the worker last saw
-- and the lag (high watermark - consumed offset - 1: the messages not yet
-- in the pipeline), with the subscription's state and the state of the
-- worker that reads the partition (worker: kafka_partition % n, n the
-- subscription's workers, at most its partitions).
CREATE OR REPLACE VIEW streamforge_kafka.subscriptions WITH (security_barrier) AS
SELECT s.id, s.pipeline, s.topic, k.n AS kafka_partition,
       s.partition_prefix OPERATOR(pg_catalog.||) k.n::pg_catalog.text AS partition,
       p.consumed_offset,
       h.high_watermark,
       GREATEST(h.high_watermark OPERATOR(pg_catalog.-) p.consumed_offset
                OPERATOR(pg_catalog.-) 1, 0) AS lag,
       s.paused, s.error, s.on_error,
       w.state AS worker_state, w.pid AS worker_pid, w.retries,
       w.backoff_ms, w.last_error, w.updated_at AS worker_updated_at,
       s.role::pg_catalog.regrole AS role,
       (k.n OPERATOR(pg_catalog.%) LEAST(s.workers, s.kafka_partitions)) AS worker
  FROM (SELECT t.* FROM streamforge_kafka.subscription AS t
         WHERE pg_catalog.pg_has_role(t.role, 'USAGE') OFFSET 0) AS s
 CROSS JOIN LATERAL pg_catalog.generate_series(0,
            s.kafka_partitions OPERATOR(pg_catalog.-) 1) AS k(n)
  LEFT JOIN LATERAL (SELECT q.consumed_offset
                       FROM streamforge.partitions(s.pipeline) AS q
                      WHERE q.partition OPERATOR(pg_catalog.=)
                            (s.partition_prefix OPERATOR(pg_catalog.||) k.n::pg_catalog.text)) AS p
         ON true
  LEFT JOIN streamforge_kafka.partition_status AS h
         ON h.subscription OPERATOR(pg_catalog.=) s.id
        AND h.kafka_partition OPERATOR(pg_catalog.=) k.n
  LEFT JOIN streamforge_kafka.worker_status AS w
         ON w.subscription OPERATOR(pg_catalog.=) s.id
        AND w.worker OPERATOR(pg_catalog.=)
            (k.n OPERATOR(pg_catalog.%) LEAST(s.workers, s.kafka_partitions));


-- Sets the number of workers of a subscription (1 .. 64; more than 1 needs
-- a pipeline with writers => 'parallel', 22023 otherwise): the running
-- workers stop after their current batch and the launcher starts the new
-- set, each worker w of n reading the Kafka partitions k with k % n = w.
-- The caller must have the privileges of the subscribing role (as for
-- pause).
CREATE FUNCTION streamforge_kafka.set_workers(pipeline text, topic text,
    workers integer)
RETURNS void
AS 'MODULE_PATHNAME', 'sfk_set_workers'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION streamforge_kafka.set_workers(text, text, integer) IS
    'the number of workers of a subscription, each reading a share of the topic''s partitions (parallel pipelines)';
