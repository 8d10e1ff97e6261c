-- streamforge install script, part 7b: built-in progress (0.3.0, issue 26;
-- docs/progress.md).
--
-- out_of_orderness: NULL (the default) keeps the contract of 0.1.0 (events
-- never move progress); N makes each accepted event on a partition report
-- event_time - N for it, as if advance had been called after it.  Added
-- with ALTER TABLE, as the update adds it, so that a fresh install and an
-- updated one have their columns in the same order (after 70_retention.sql's).

ALTER TABLE streamforge.pipeline ADD COLUMN out_of_orderness bigint;
ALTER TABLE streamforge.pipeline
    ADD CONSTRAINT pipeline_out_of_orderness_check
    CHECK (out_of_orderness OPERATOR(pg_catalog.>=) 0);

-- idle_timeout: NULL (the default) never marks a partition idle by
-- itself; an interval marks an active partition idle once it has had no
-- delivery and no report for that long, by the transaction clock
-- (api/progress.c), as a journaled mark_idle.
ALTER TABLE streamforge.pipeline ADD COLUMN idle_timeout interval;

-- When each partition last received a delivery and a report (transaction
-- times, to the second; src/persist/activity.c), and since when it is
-- watched for idleness (set_idle_timeout).  Not part of any state: written
-- before the commit of each transaction that writes the pipeline.
CREATE TABLE streamforge.partition_activity (
    pipeline_id bigint NOT NULL
        REFERENCES streamforge.pipeline (id) ON DELETE CASCADE,
    partition text COLLATE "C" NOT NULL,
    last_delivery timestamptz,
    last_report timestamptz,
    since timestamptz,
    PRIMARY KEY (pipeline_id, partition)
);
SELECT pg_catalog.pg_extension_config_dump('streamforge.partition_activity', '');
REVOKE ALL ON streamforge.partition_activity FROM PUBLIC;

-- create_pipeline gains out_of_orderness (bigint, in the time unit) and
-- idle_timeout, after emit (45_emit.sql), and the measures and aggregates
-- of a measures pipeline (85_measures.sql, docs/aggregates.md; NULL: one
-- unnamed value).  Its final signature is this one.
DROP FUNCTION streamforge.create_pipeline(text, text[],
    streamforge.window_def[], bigint, bigint, interval, text);
CREATE FUNCTION streamforge.create_pipeline(name text, partitions text[],
    windows streamforge.window_def[], lateness bigint DEFAULT 0,
    retention bigint DEFAULT NULL, time_unit interval DEFAULT NULL,
    emit text DEFAULT 'update',
    out_of_orderness bigint DEFAULT NULL, idle_timeout interval DEFAULT NULL,
    measures text[] DEFAULT NULL, aggregates text[] DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_create_pipeline'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- (An interval form of create_pipeline would make a positional NULL
-- lateness ambiguous, and the API has one function per name: with a time
-- unit, pass streamforge.interval_to_units(interval, time_unit).)

-- (70_comments.sql comments the create_pipeline of 30_functions.sql)
COMMENT ON FUNCTION streamforge.create_pipeline(text, text[],
    streamforge.window_def[], bigint, bigint, interval, text, bigint, interval,
    text[], text[]) IS
    'create a pipeline with its partitions, windows and allowed lateness';

-- Changing the rule (admin).  NULL turns it off.  It moves no progress by
-- itself; the next accepted event of each partition applies the new rule.
CREATE FUNCTION streamforge.set_out_of_orderness(pipeline text,
    out_of_orderness bigint)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_set_out_of_orderness'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge.set_out_of_orderness(text, bigint) IS
    'sets the built-in progress rule: each accepted event reports event_time - out_of_orderness (NULL: off)';

CREATE FUNCTION streamforge.out_of_orderness(pipeline text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sf_out_of_orderness'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION streamforge.out_of_orderness(text) IS
    'the built-in progress rule of a pipeline, in its units (NULL: none)';

-- Idle detection by time (admin to change; NULL: off)
CREATE FUNCTION streamforge.set_idle_timeout(pipeline text,
    idle_timeout interval)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_set_idle_timeout'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge.set_idle_timeout(text, interval) IS
    'marks a partition idle after idle_timeout without a delivery or a report (NULL: never)';

-- The idle decisions due now, for pg_cron (ingest privilege); every write
-- call on the pipeline makes them too.
CREATE FUNCTION streamforge.tick(pipeline text)
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_tick'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge.tick(text) IS
    'marks idle the partitions whose idle_timeout has passed; returns the changes';

-- partitions() and who holds the watermark, the lag behind the fastest
-- partition, the last delivery and report (read privilege)
CREATE FUNCTION streamforge.partition_progress(pipeline text)
RETURNS TABLE (partition text, consumed_offset bigint, progress bigint,
               idle boolean, holds_watermark boolean, lag bigint,
               last_delivery timestamptz, last_report timestamptz)
AS 'MODULE_PATHNAME', 'sf_partition_progress'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION streamforge.partition_progress(text) IS
    'per partition: progress, whether it holds the watermark, lag behind the fastest, last delivery and report';
