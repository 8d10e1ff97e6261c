-- streamforge 0.1.0 -> 0.2.0 (ALTER EXTENSION streamforge UPDATE TO '0.2.0')
--
-- Every storage and SQL API change of 0.2.0, applied to a database that runs
-- 0.1.0.  Each section names the change and the file of sql/install/ whose
-- definitions it brings over; after this script the extension's objects are
-- exactly those of a fresh CREATE EXTENSION at 0.2.0 (test/t/090_upgrade.pl
-- compares them), and pipelines, outputs, grants and checkpoints of 0.1.0
-- keep working.

\echo Use "ALTER EXTENSION streamforge UPDATE TO '0.2.0'" to load this file. \quit

-- ----------------------------------------------------------------------
-- Retention (issue 13, SPEC.md section 6; sql/install/20_storage.sql and
-- 30_functions.sql).  A pipeline may forget what its horizon no longer
-- covers.  Existing pipelines get retention NULL: they keep everything and
-- behave, and checkpoint, exactly as under 0.1.0.  stats() gains the
-- remembered/forgotten counters.
-- ----------------------------------------------------------------------
ALTER TABLE streamforge.pipeline ADD COLUMN retention bigint;
ALTER TABLE streamforge.pipeline
    ADD CONSTRAINT pipeline_retention_check CHECK (retention >= 0);

DROP FUNCTION streamforge.create_pipeline(text, text[],
    streamforge.window_def[], bigint);
CREATE FUNCTION streamforge.create_pipeline(name text, partitions text[],
    windows streamforge.window_def[], lateness bigint DEFAULT 0,
    retention bigint DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_create_pipeline'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION streamforge.create_pipeline(text, text[],
    streamforge.window_def[], bigint, bigint) IS
'creates a pipeline; retention (NULL: keep everything) bounds its state to the horizon watermark - lateness - retention';

DROP FUNCTION streamforge.stats(text);
CREATE FUNCTION streamforge.stats(pipeline text,
    OUT deliveries bigint, OUT accepted bigint, OUT duplicate_ids bigint,
    OUT late_events bigint, OUT offset_replays bigint,
    OUT changes_emitted bigint, OUT live_buckets bigint,
    OUT visible_rows bigint, OUT partitions integer,
    OUT idle_partitions integer, OUT remembered_identities bigint,
    OUT remembered_offsets bigint, OUT remembered_late_events bigint,
    OUT forgotten_offsets bigint, OUT forgotten_late_events bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'sf_stats'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION streamforge.stats(text) IS
'counters of a pipeline, and how much of its history it remembers and has forgotten (retention)';
