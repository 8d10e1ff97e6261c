-- streamforge objects: the SQL interface of docs/semantics.md "The interface".
--
-- Every function is implemented in C (src/api/).  Write functions are
-- VOLATILE and PARALLEL UNSAFE: they lock the pipeline's row and append to
-- its journal.  Readers are VOLATILE too, because what they return depends
-- on other sessions' commits, and PARALLEL RESTRICTED since they use the
-- backend's pipeline cache.

-- The window constructors: one C entry point for every kind, which reads
-- the kind from the function's name and its params in order (src/api/
-- define.c; the kinds: src/engine/window_kinds.c).  sf_fixed, sf_sliding
-- and sf_session stay in the library for the 0.1.0 - 0.3.0 scripts.
CREATE OR REPLACE FUNCTION streamforge.fixed(name text, size bigint)
RETURNS streamforge.window_def
AS 'MODULE_PATHNAME', 'sf_window_ctor'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE OR REPLACE FUNCTION streamforge.sliding(name text, size bigint, step bigint)
RETURNS streamforge.window_def
AS 'MODULE_PATHNAME', 'sf_window_ctor'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE OR REPLACE FUNCTION streamforge.session(name text, gap bigint)
RETURNS streamforge.window_def
AS 'MODULE_PATHNAME', 'sf_window_ctor'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- retention (NULL: keep everything) bounds its state to the horizon
-- watermark - lateness - retention (docs/retention.md); time_unit (0.2.0,
-- 60_ingest.sql) is what one unit of the pipeline's bigint times is (NULL:
-- none, times are only bigint); emit is the emit mode (0.3.0, 45_emit.sql);
-- out_of_orderness (bigint, in the time unit) and idle_timeout the built-in
-- progress (0.3.0, 72_progress.sql); measures and aggregates make a
-- measures pipeline (0.3.0, 85_measures.sql, docs/aggregates.md; NULL: one
-- unnamed value).  Arguments are only ever appended, so that every call of
-- an older release means what it meant.
-- (An interval form of create_pipeline would make a positional NULL
-- lateness ambiguous, and the API has one function per name: with a time
-- unit, pass streamforge.interval_to_units(interval, time_unit).)
-- @options create_pipeline begin (scripts/options.pl writes this from src/codec/options.def)
CREATE OR REPLACE FUNCTION streamforge.create_pipeline(name text,
    partitions text[],
    windows streamforge.window_def[],
    lateness bigint DEFAULT 0,
    retention bigint DEFAULT NULL,
    time_unit interval DEFAULT NULL,
    emit text DEFAULT 'update',
    out_of_orderness bigint DEFAULT NULL,
    idle_timeout interval DEFAULT NULL,
    measures text[] DEFAULT NULL,
    aggregates text[] DEFAULT NULL,
    writers text DEFAULT 'serial')
RETURNS void
AS 'MODULE_PATHNAME', 'sf_create_pipeline'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION streamforge.create_pipeline(
    text, text[], streamforge.window_def[], bigint, bigint, interval, text,
    bigint, interval, text[], text[], text) IS
    'create a pipeline with its partitions, windows and allowed lateness';
-- @options end

-- The definition as one document (docs/management.md, "A pipeline's
-- definition"): the members and their spelling are those of the table of
-- options (src/codec/options.def), the checkpoint's "definition" plus
-- time_unit and idle_timeout when set.  definition_of takes
-- create_pipeline's arguments and returns the document create_pipeline
-- would store, after all its checks but the pipeline's existence; it
-- creates nothing (the router compares it with the shards',
-- create_sharded_pipeline).
CREATE OR REPLACE FUNCTION streamforge.definition(pipeline text)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'sf_definition'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION streamforge.definition(text) IS
    'the definition of a pipeline as one document: partitions, windows and every option set';

-- @options definition_of begin (scripts/options.pl writes this from src/codec/options.def)
CREATE OR REPLACE FUNCTION streamforge.definition_of(name text,
    partitions text[],
    windows streamforge.window_def[],
    lateness bigint DEFAULT 0,
    retention bigint DEFAULT NULL,
    time_unit interval DEFAULT NULL,
    emit text DEFAULT 'update',
    out_of_orderness bigint DEFAULT NULL,
    idle_timeout interval DEFAULT NULL,
    measures text[] DEFAULT NULL,
    aggregates text[] DEFAULT NULL,
    writers text DEFAULT 'serial')
RETURNS jsonb
AS 'MODULE_PATHNAME', 'sf_definition_of'
LANGUAGE C STABLE PARALLEL SAFE;

COMMENT ON FUNCTION streamforge.definition_of(
    text, text[], streamforge.window_def[], bigint, bigint, interval, text,
    bigint, interval, text[], text[], text) IS
    'the definition document create_pipeline would store for these arguments (creates nothing)';
-- @options end

-- create_pipeline's arguments are only ever appended (src/codec/
-- options.def): on an update that adds one, the CREATE OR REPLACE above
-- made a new overload of create_pipeline and definition_of; the older
-- ones go here, so that a new option needs no DROP in a migration (no
-- CASCADE: a user's object that calls an old one stops the update).  A
-- no-op on a fresh install.
DO $sf$
DECLARE
    f pg_catalog.regprocedure;
BEGIN
    FOR f IN SELECT p.oid::pg_catalog.regprocedure FROM pg_catalog.pg_proc AS p
              WHERE p.pronamespace OPERATOR(pg_catalog.=) 'streamforge'::pg_catalog.regnamespace
                AND p.proname OPERATOR(pg_catalog.=) ANY (ARRAY['create_pipeline', 'definition_of'])
                AND p.pronargs OPERATOR(pg_catalog.<>)
                    (SELECT pg_catalog.max(q.pronargs) FROM pg_catalog.pg_proc AS q
                      WHERE q.pronamespace OPERATOR(pg_catalog.=) p.pronamespace
                        AND q.proname OPERATOR(pg_catalog.=) p.proname)
    LOOP
        EXECUTE pg_catalog.format('DROP FUNCTION %s', f);
    END LOOP;
END
$sf$;

-- The table of options (src/codec/options.def), in create_pipeline's
-- argument order; the regress test "definition" checks the signatures
-- above and pipeline_info's columns against it.
CREATE OR REPLACE FUNCTION streamforge_internal.options(OUT name text,
    OUT sql_type text, OUT sql_default text, OUT since text,
    OUT checkpointed boolean, OUT omitted_at_default boolean)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'sf_options_list'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION streamforge_internal.options() IS
    'the options of a pipeline definition, in create_pipeline''s argument order (internal)';

CREATE OR REPLACE FUNCTION streamforge.drop_pipeline(name text)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_drop_pipeline'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION streamforge.ingest(pipeline text, partition text,
    source_offset bigint, event_id text, key text, event_time bigint,
    value bigint)
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_ingest'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 2;

CREATE OR REPLACE FUNCTION streamforge.ingest_batch(pipeline text,
    deliveries streamforge.delivery[])
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_ingest_batch'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION streamforge.advance(pipeline text, partition text,
    progress bigint)
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_advance'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION streamforge.mark_idle(pipeline text, partition text)
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_mark_idle'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION streamforge.checkpoint(pipeline text)
RETURNS bytea
AS 'MODULE_PATHNAME', 'sf_checkpoint'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

CREATE OR REPLACE FUNCTION streamforge.restore(pipeline text, checkpoint bytea)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_restore'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION streamforge.inspect_checkpoint(checkpoint bytea)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'sf_inspect_checkpoint'
LANGUAGE C IMMUTABLE PARALLEL SAFE STRICT;

CREATE OR REPLACE FUNCTION streamforge.watermark(pipeline text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sf_watermark'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

CREATE OR REPLACE FUNCTION streamforge.live(pipeline text)
RETURNS SETOF streamforge.result
AS 'MODULE_PATHNAME', 'sf_live'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

CREATE OR REPLACE FUNCTION streamforge.visible(pipeline text)
RETURNS SETOF streamforge.result
AS 'MODULE_PATHNAME', 'sf_visible'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

CREATE OR REPLACE FUNCTION streamforge.late_events(pipeline text)
RETURNS SETOF streamforge.late_event
AS 'MODULE_PATHNAME', 'sf_late_events'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

CREATE OR REPLACE FUNCTION streamforge.partitions(pipeline text)
RETURNS TABLE (partition text, consumed_offset bigint, progress bigint,
               idle boolean)
AS 'MODULE_PATHNAME', 'sf_partitions'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

CREATE OR REPLACE FUNCTION streamforge.stats(pipeline text,
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
