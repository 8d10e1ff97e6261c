-- streamforge objects: built-in progress (0.3.0, issue 26;
-- docs/progress.md).
--
-- out_of_orderness: NULL (the default) keeps the contract of 0.1.0 (events
-- never move progress); N makes each accepted event on a partition report
-- event_time - N for it, as if advance had been called after it.
-- idle_timeout: NULL (the default) never marks a partition idle by
-- itself; an interval marks an active partition idle once it has had no
-- delivery and no report for that long, by the transaction clock
-- (api/progress.c), as a journaled mark_idle.  Both are members of the
-- pipeline's definition document; it and the table partition_activity
-- are in sql/schema/20_tables.sql.

REVOKE ALL ON streamforge.partition_activity FROM PUBLIC;


-- Changing the rule (admin).  NULL turns it off.  It moves no progress by
-- itself; the next accepted event of each partition applies the new rule.
CREATE OR REPLACE FUNCTION streamforge.set_out_of_orderness(pipeline text,
    out_of_orderness bigint)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_set_out_of_orderness'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge.set_out_of_orderness(text, bigint) IS
    'sets the built-in progress rule: each accepted event reports event_time - out_of_orderness (NULL: off)';

CREATE OR REPLACE FUNCTION streamforge.out_of_orderness(pipeline text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sf_out_of_orderness'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION streamforge.out_of_orderness(text) IS
    'the built-in progress rule of a pipeline, in its units (NULL: none)';

-- Idle detection by time (admin to change; NULL: off)
CREATE OR REPLACE FUNCTION streamforge.set_idle_timeout(pipeline text,
    idle_timeout interval)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_set_idle_timeout'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge.set_idle_timeout(text, interval) IS
    'marks a partition idle after idle_timeout without a delivery or a report (NULL: never)';

-- The idle decisions due now, for pg_cron (ingest privilege); every write
-- call on the pipeline makes them too.
CREATE OR REPLACE FUNCTION streamforge.tick(pipeline text)
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_tick'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge.tick(text) IS
    'marks idle the partitions whose idle_timeout has passed; returns the changes';

-- The end of the input (ingest privilege, as advance): every partition
-- reports progress 9223372036854775807, the bigint maximum, which reads as
-- +infinity (docs/progress.md, "The end of the input").  Every window is
-- emitted and finalized; later events are late.  Finishing a finished
-- pipeline changes nothing.
CREATE OR REPLACE FUNCTION streamforge.finish(pipeline text)
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_finish_input'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- Several pipelines in one transaction (ingest privilege on each): their
-- call-time locks in the one lock order, the names' byte order, and for a
-- parallel pipeline the claims of its partitions (partitions: those named
-- that it has; NULL: all; empty: none) in theirs, so that a transaction
-- that starts with it never meets 55P03 (docs/persistence.md, "Several
-- pipelines in one transaction").
CREATE OR REPLACE FUNCTION streamforge.lock_pipelines(pipelines text[],
    partitions text[] DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_lock_pipelines'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- partitions() and who holds the watermark, the lag behind the fastest
-- partition, the last delivery and report (read privilege)
CREATE OR REPLACE FUNCTION streamforge.partition_progress(pipeline text)
RETURNS TABLE (partition text, consumed_offset bigint, progress bigint,
               idle boolean, holds_watermark boolean, lag bigint,
               last_delivery timestamptz, last_report timestamptz)
AS 'MODULE_PATHNAME', 'sf_partition_progress'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION streamforge.partition_progress(text) IS
    'per partition: progress, whether it holds the watermark, lag behind the fastest, last delivery and report';
