-- streamforge_kafka 0.4.0: Kafka topics consumed into streamforge pipelines
-- by background workers (docs/kafka.md).  What 0.3.0 installations get by
-- streamforge_kafka--0.3.0--0.4.0.sql: keep the two in step (the TAP test
-- 144_kafka_privileges.pl compares their catalogs).

\echo Use "CREATE EXTENSION streamforge_kafka" to load this file. \quit

-- ----------------------------------------------------------------
-- Tables.  Every row belongs to a role (the subscribing role): row level
-- security lets a role see the rows of the roles whose privileges it has,
-- and nothing else.  No role but the owner writes them: a subscription
-- comes only from subscribe(), and unsubscribe, pause, resume and
-- set_on_error change only the rows the caller may act for (C functions
-- that check as the caller, then write as the owner: kafka/src/admin.c).
-- The workers run as the subscribing role and write their status, the
-- high watermarks and the dead letters the same way.  The launcher,
-- running as the bootstrap superuser, reads every subscription.
-- ----------------------------------------------------------------

-- One row per subscription: a topic consumed into a pipeline.
CREATE TABLE streamforge_kafka.subscription (
    id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    pipeline text NOT NULL,
    brokers text NOT NULL,
    topic text NOT NULL,
    format text NOT NULL
        CHECK (format OPERATOR(pg_catalog.=) ANY (ARRAY['json', 'csv', 'text'])),
    mapping jsonb NOT NULL DEFAULT '{}',
    partition_prefix text NOT NULL,
    kafka_partitions integer NOT NULL
        CHECK (kafka_partitions OPERATOR(pg_catalog.>) 0),
    batch_size integer NOT NULL
        CHECK (batch_size OPERATOR(pg_catalog.>) 0
               AND batch_size OPERATOR(pg_catalog.<=) 100000),
    max_wait integer NOT NULL
        CHECK (max_wait OPERATOR(pg_catalog.>=) 0
               AND max_wait OPERATOR(pg_catalog.<=) 60000),
    out_of_orderness bigint NOT NULL DEFAULT 0
        CHECK (out_of_orderness OPERATOR(pg_catalog.>=) 0),
    on_error text NOT NULL DEFAULT 'stop'
        CHECK (on_error OPERATOR(pg_catalog.=) ANY (ARRAY['skip', 'stop'])),
    options jsonb NOT NULL DEFAULT '{}',
    role oid NOT NULL,
    paused boolean NOT NULL DEFAULT false,
    error text,
    created_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    -- the workers that consume the topic (issue 46): worker w of n reads
    -- the Kafka partitions k with k % n = w (n = least(workers,
    -- kafka_partitions)); more than 1 needs a parallel pipeline
    workers integer NOT NULL DEFAULT 1
        CHECK (workers OPERATOR(pg_catalog.>=) 1
               AND workers OPERATOR(pg_catalog.<=) 64),
    UNIQUE (pipeline, topic)
);

-- The workers of a subscription, one row each (worker: 0 .. workers - 1):
-- its state ('starting', 'running', 'retrying', 'stopped'), the retries of
-- the current outage and the backoff before the next one, the last error.
CREATE TABLE streamforge_kafka.worker_status (
    subscription integer NOT NULL
        REFERENCES streamforge_kafka.subscription ON DELETE CASCADE,
    pid integer,
    state text NOT NULL,
    retries integer NOT NULL DEFAULT 0,
    backoff_ms integer NOT NULL DEFAULT 0,
    last_error text,
    updated_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    worker integer NOT NULL DEFAULT 0,
    PRIMARY KEY (subscription, worker)
);

-- The high watermark (the offset of the next message) of each Kafka
-- partition as the worker last saw it, for the lag.
CREATE TABLE streamforge_kafka.partition_status (
    subscription integer NOT NULL
        REFERENCES streamforge_kafka.subscription ON DELETE CASCADE,
    kafka_partition integer NOT NULL,
    high_watermark bigint NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    PRIMARY KEY (subscription, kafka_partition)
);

-- The dead-letter table: messages that could not be mapped or that the
-- pipeline refused.  Kept after unsubscribe unless purge (purge_dead_letters
-- deletes them later).
CREATE TABLE streamforge_kafka.rejected (
    subscription integer NOT NULL,
    pipeline text NOT NULL,
    topic text NOT NULL,
    partition integer NOT NULL,
    "offset" bigint NOT NULL,
    key bytea,
    payload bytea,
    kafka_timestamp bigint,
    error text NOT NULL,
    sqlstate text NOT NULL,
    role oid NOT NULL,
    rejected_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    PRIMARY KEY (subscription, partition, "offset")
);

ALTER TABLE streamforge_kafka.subscription ENABLE ROW LEVEL SECURITY;
ALTER TABLE streamforge_kafka.worker_status ENABLE ROW LEVEL SECURITY;
ALTER TABLE streamforge_kafka.partition_status ENABLE ROW LEVEL SECURITY;
ALTER TABLE streamforge_kafka.rejected ENABLE ROW LEVEL SECURITY;

CREATE POLICY subscription_own ON streamforge_kafka.subscription
    USING (pg_catalog.pg_has_role(role, 'USAGE'))
    WITH CHECK (pg_catalog.pg_has_role(role, 'USAGE'));
CREATE POLICY worker_status_own ON streamforge_kafka.worker_status
    USING (EXISTS (SELECT FROM streamforge_kafka.subscription AS s
                    WHERE s.id OPERATOR(pg_catalog.=) subscription))
    WITH CHECK (EXISTS (SELECT FROM streamforge_kafka.subscription AS s
                         WHERE s.id OPERATOR(pg_catalog.=) subscription));
CREATE POLICY partition_status_own ON streamforge_kafka.partition_status
    USING (EXISTS (SELECT FROM streamforge_kafka.subscription AS s
                    WHERE s.id OPERATOR(pg_catalog.=) subscription))
    WITH CHECK (EXISTS (SELECT FROM streamforge_kafka.subscription AS s
                         WHERE s.id OPERATOR(pg_catalog.=) subscription));
CREATE POLICY rejected_own ON streamforge_kafka.rejected
    USING (pg_catalog.pg_has_role(role, 'USAGE'))
    WITH CHECK (pg_catalog.pg_has_role(role, 'USAGE'));

GRANT USAGE ON SCHEMA streamforge_kafka TO PUBLIC;
GRANT SELECT ON streamforge_kafka.subscription TO PUBLIC;
GRANT SELECT ON streamforge_kafka.worker_status TO PUBLIC;
GRANT SELECT ON streamforge_kafka.partition_status TO PUBLIC;
GRANT SELECT ON streamforge_kafka.rejected TO PUBLIC;

-- ----------------------------------------------------------------
-- C functions
-- ----------------------------------------------------------------

-- The number of partitions of a topic, asked of the cluster (22023 when
-- the topic does not exist, 08006 when the cluster cannot be reached).
-- It connects where the caller says with the options the caller may set:
-- not PUBLIC (subscribe asks the cluster itself).
CREATE FUNCTION streamforge_kafka.topic_partitions(brokers text, topic text,
    options jsonb DEFAULT '{}')
RETURNS integer
AS 'MODULE_PATHNAME', 'sfk_topic_partitions'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
REVOKE EXECUTE ON FUNCTION streamforge_kafka.topic_partitions(text, text, jsonb) FROM PUBLIC;

-- The statement a worker runs for a batch: the mapping of a subscription
-- as SQL (checks the mapping; 22023 names what is wrong).
CREATE FUNCTION streamforge_kafka.mapping_sql(format text, mapping jsonb,
    topic text, time_unit interval)
RETURNS text
AS 'MODULE_PATHNAME', 'sfk_mapping_sql'
LANGUAGE C STABLE PARALLEL SAFE;

-- The event time of a mapped field that is not a number, for a pipeline
-- without a time unit: an error (the message is rejected).
CREATE FUNCTION streamforge_kafka.no_time_unit(t text)
RETURNS bigint
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION 'event time "%" is not a number of units', t
        USING ERRCODE = '22007',
              DETAIL = 'The pipeline has no time unit to convert a timestamp with.';
END
$$;

-- ----------------------------------------------------------------
-- Subscriptions
-- ----------------------------------------------------------------

-- Subscribes a pipeline to a topic: Kafka partition n feeds the pipeline
-- partition partition_prefix || n (topic || '-' || n unless the mapping
-- names a prefix), which must exist or is created (add_partition, which
-- needs the admin privilege).  The caller needs the ingest privilege, may
-- set only the options of the allowlist (docs/kafka.md) unless a
-- superuser, and the subscription's worker runs as the caller.
CREATE FUNCTION streamforge_kafka.subscribe(pipeline text, brokers text,
    topic text, format text DEFAULT 'json', mapping jsonb DEFAULT '{}',
    batch_size integer DEFAULT 1000, max_wait integer DEFAULT 100,
    options jsonb DEFAULT '{}', on_error text DEFAULT 'stop',
    out_of_orderness bigint DEFAULT 0, workers integer DEFAULT 1)
RETURNS integer
AS 'MODULE_PATHNAME', 'sfk_subscribe'
LANGUAGE C VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

-- Removes a subscription; its worker stops after its current batch (which
-- commits or not, whole).  The dead letters stay (a NOTICE says how many)
-- unless purge.
CREATE FUNCTION streamforge_kafka.unsubscribe(pipeline text, topic text,
    purge boolean DEFAULT false)
RETURNS void
AS 'MODULE_PATHNAME', 'sfk_unsubscribe'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

-- Deletes the dead letters of a pipeline and topic that the caller may act
-- for (as unsubscribe checks), whether the subscription exists or not;
-- returns how many.
CREATE FUNCTION streamforge_kafka.purge_dead_letters(pipeline text, topic text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sfk_purge_dead_letters'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

-- Pauses a subscription (its worker stops after its current batch).
CREATE FUNCTION streamforge_kafka.pause(pipeline text, topic text)
RETURNS void
AS 'MODULE_PATHNAME', 'sfk_pause'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

-- Resumes a paused or stopped subscription (clears its error): the
-- launcher starts its worker within a second.
CREATE FUNCTION streamforge_kafka.resume(pipeline text, topic text)
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

-- One row per Kafka partition of each subscription the current user may
-- see: the pipeline partition it feeds, its consumed offset (from the
-- pipeline, the source of truth), the high watermark the worker last saw
-- and the lag (high watermark - consumed offset - 1: the messages not yet
-- in the pipeline), with the subscription's state and the state of the
-- worker that reads the partition (worker: kafka_partition % n, n the
-- subscription's workers, at most its partitions).
CREATE VIEW streamforge_kafka.subscriptions WITH (security_barrier) AS
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

GRANT SELECT ON streamforge_kafka.subscriptions TO PUBLIC;

COMMENT ON FUNCTION streamforge_kafka.subscribe(text, text, text, text, jsonb,
    integer, integer, jsonb, text, bigint, integer) IS
    'consume a Kafka topic into a pipeline, exactly once (ingest privilege)';
COMMENT ON FUNCTION streamforge_kafka.unsubscribe(text, text, boolean) IS
    'remove a subscription; its worker stops after its current batch; purge: its dead letters too';
COMMENT ON FUNCTION streamforge_kafka.purge_dead_letters(text, text) IS
    'delete the dead letters of a pipeline and topic, subscribed or not';
COMMENT ON FUNCTION streamforge_kafka.pause(text, text) IS
    'stop consuming a subscription until resume()';
COMMENT ON FUNCTION streamforge_kafka.resume(text, text) IS
    'consume a paused or stopped subscription again';
COMMENT ON FUNCTION streamforge_kafka.set_on_error(text, text, text) IS
    'what a bad message does to the subscription: stop or skip';
COMMENT ON VIEW streamforge_kafka.subscriptions IS
    'one row per Kafka partition of each subscription: offsets, lag, worker state';
COMMENT ON TABLE streamforge_kafka.rejected IS
    'dead letters: messages that could not be mapped or that the pipeline refused';

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
