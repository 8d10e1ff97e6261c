-- streamforge 0.4.0: what changed in storage and in signatures since 0.3.0.
--
-- Runs in the update from 0.3.0 only (sql/build.sh), after the guard and
-- before sql/objects/, which then (re)creates every function, view,
-- policy, trigger, privilege and comment in its 0.4.0 form.  Released
-- with 0.4.0, then frozen.  In this order (src/README.md, "Where SQL
-- goes"):
--   1. DROPs of the signatures 0.4.0 removes or changes (CREATE OR
--      REPLACE cannot change a result type, argument names or remove a
--      default; a changed argument list would leave an overload), in
--      dependency order, never CASCADE;
--   2. DROPs of the views whose columns change other than by appending;
--   3. table and type DDL, the same change as sql/schema/ (columns only
--      appended);
--   4. data moves in plain SQL (fixes that need the extension's functions
--      go into 0.4.0-post.sql).

-- ----------------------------------------------------------------
-- 1. Signatures
-- ----------------------------------------------------------------

-- Issue 37 (security round 4): create_aggregate is C, and the result of
-- its internal helper aggregate_create changes.  Issue 45 (item 2) then
-- appends an argument to both, idle_timeout, and issue 46 another,
-- writers: CREATE OR REPLACE would add an
-- overload (and a call with the defaults would be ambiguous), so 0.3.0's
-- create_aggregate is dropped, which frees the old helper (its BEGIN ATOMIC
-- body depends on it), then the helper; objects/66_aggregates_owner.sql
-- creates both anew.  Not CASCADE: a user's object that depends on the
-- old create_aggregate stops the update with PostgreSQL's message naming it.
DROP FUNCTION IF EXISTS streamforge.create_aggregate(text, text, interval,
    interval, text, text, text, text[], interval);
DROP FUNCTION IF EXISTS streamforge_internal.aggregate_create(text, text, jsonb,
    text, interval, interval, text, text, text, text[], interval);

-- Issue 46: create_pipeline and definition_of append an argument, writers
-- (src/codec/options.def): the 0.3.0 forms are dropped so that no
-- overload stays (objects/30_functions.sql creates the new ones).  Not
-- CASCADE, as above.
DROP FUNCTION IF EXISTS streamforge.create_pipeline(text, text[],
    streamforge.window_def[], bigint, bigint, interval, text, bigint,
    interval, text[], text[]);
DROP FUNCTION IF EXISTS streamforge.definition_of(text, text[],
    streamforge.window_def[], bigint, bigint, interval, text, bigint,
    interval, text[], text[]);

-- Issue 46 (step 7): lock_pipelines(text[]), new in 0.4.0 (issue 45),
-- takes a second argument, partitions text[] DEFAULT NULL
-- (objects/72_progress.sql).  0.3.0 has no lock_pipelines, so this finds
-- nothing in a 0.3.0 database; it keeps the one-argument form from staying
-- as an overload wherever it exists.
DROP FUNCTION IF EXISTS streamforge.lock_pipelines(text[]);

-- pipeline_id reads the id itself (src/api/privileges.c, a kept plan as
-- the owner): its SECURITY DEFINER helper of 0.3.0 has no caller left.
DROP FUNCTION IF EXISTS streamforge_internal.pipeline_id_internal(text);

-- ----------------------------------------------------------------
-- 2. Views
-- ----------------------------------------------------------------

-- (none: the metrics view of issue 39 only appends estimated_load_ms;
-- issue 41's views read the definition document with the same columns)

-- ----------------------------------------------------------------
-- 3. Tables and types
-- ----------------------------------------------------------------

-- Issue 39 (item 4): definition changes that do not stop the world.
-- Rows of 0.1.0-0.3.0 hold their snapshot in the row and keep loading
-- from there.
-- Snapshots stored beside the pipeline's row (0.4.0, issue 39).  A
-- definition change (add_window, set_lateness, add_partition, ...) of a
-- pipeline whose new snapshot is large builds that snapshot and writes it
-- here BEFORE it takes the pipeline's row lock (src/persist/redefine.c);
-- under the lock it only sets the row's snapshot to NULL and its
-- snapshot_version to the version this row was stored for, so that
-- writers wait for a small UPDATE instead of the multi-megabyte write of
-- the snapshot (docs/management.md, "The lock a change holds").  A row's
-- snapshot is the pipeline's when pipeline.snapshot is NULL and
-- pipeline.snapshot_version equals this row's snapshot_version; a later
-- compaction or restore writes the snapshot into the pipeline's row again
-- (with a new snapshot_version), which makes this row stale: the next
-- definition change that stores one here deletes it, as does dropping the
-- pipeline.  Only src/persist/ writes this table; see docs/persistence.md.
CREATE TABLE streamforge.stored_snapshot (
    pipeline_id bigint NOT NULL
        REFERENCES streamforge.pipeline (id) ON DELETE CASCADE,
    snapshot_version bigint NOT NULL,
    snapshot bytea NOT NULL,
    PRIMARY KEY (pipeline_id, snapshot_version)
);

-- zlib-compressed already (see streamforge.pipeline's snapshot)
ALTER TABLE streamforge.stored_snapshot ALTER COLUMN snapshot SET STORAGE EXTERNAL;

SELECT pg_catalog.pg_extension_config_dump('streamforge.stored_snapshot', '');

-- The changelog of the aggregates' top-N (0.4.0, issue 44, item 4;
-- docs/sql-aggregates.md, Top-N per window): what each write call changed
-- in the top N of the windows it touched, written by the sink in the
-- call's transaction (src/persist/sink_top.c, 67_aggregates_top.sql).
-- seq is the aggregate's own, consecutive; row is the row of <name>_top
-- without final and the rank (the grouping columns, window_start,
-- window_end, the aggregates); a 'delete' carries the row that left.
CREATE TABLE streamforge.top_changelog (
    pipeline text COLLATE "C" NOT NULL
        REFERENCES streamforge.pipeline (name) ON DELETE CASCADE,
    seq bigint NOT NULL,
    op text NOT NULL
        CONSTRAINT top_changelog_op_check
        CHECK (op OPERATOR(pg_catalog.=) ANY
               (ARRAY['insert'::pg_catalog.text, 'update'::pg_catalog.text,
                      'delete'::pg_catalog.text])),
    window_start timestamptz NOT NULL,
    window_end timestamptz NOT NULL,
    rank bigint NOT NULL,
    old_rank bigint,
    row jsonb NOT NULL,
    PRIMARY KEY (pipeline, seq)
);
ALTER TABLE streamforge.top_changelog ENABLE ROW LEVEL SECURITY;
SELECT pg_catalog.pg_extension_config_dump('streamforge.top_changelog', '');

-- Issue 41 (item 2): a pipeline's definition is one document, the one
-- streamforge.definition() shows (src/codec/options.def), in one column
-- that src/persist/definition.c reads with the strict reader; the ten
-- option columns lose their CHECKs, and their values move into the
-- document in sql/migrations/0.4.0-post.sql, which builds it with the
-- function the restore of an old dump uses
-- (streamforge_internal.legacy_definition, objects/27_definition_legacy.sql).
-- The old columns stay, NULL, without NOT NULL and CHECKs (as in
-- sql/schema/20_tables.sql): only so that a dump taken at 0.1.0-0.3.0
-- restores (its COPY lists them; the trigger pipeline_legacy_definition
-- moves them into the document).
ALTER TABLE streamforge.pipeline ADD COLUMN definition jsonb;
ALTER TABLE streamforge.pipeline
    DROP CONSTRAINT pipeline_retention_check,
    DROP CONSTRAINT pipeline_out_of_orderness_check,
    DROP CONSTRAINT pipeline_emit_check,
    ALTER COLUMN partitions DROP NOT NULL,
    ALTER COLUMN windows DROP NOT NULL,
    ALTER COLUMN lateness DROP NOT NULL;

-- Issue 42 (item 1): the outputs are written without a foreign-key check
-- per row; drop_pipeline deletes a pipeline's rows itself (sf_sink_drop),
-- as the ON DELETE CASCADE of these keys did.
ALTER TABLE streamforge.changelog DROP CONSTRAINT changelog_pipeline_fkey;
ALTER TABLE streamforge.results DROP CONSTRAINT results_pipeline_fkey;
ALTER TABLE streamforge.late_output DROP CONSTRAINT late_output_pipeline_fkey;

-- Issue 46 (step 1 of docs/design/parallel-writers.md, section 12).
-- The lanes of a pipeline with writers => 'parallel' (0.4.0, issue 46;
-- docs/design/parallel-writers.md, section 4.3): one row per source
-- partition, numbered in partition name order when the partition is added
-- and never reused, holding the partition's consumed offset, delivery
-- history and the identities first delivered on it (its snapshot and
-- lane_journal).  A writer claims a lane for its transaction (one writer
-- per partition) and bumps its version; the pipeline's own row is the
-- head's.  Serial pipelines have no rows here.  Only src/persist/ writes
-- these tables; see docs/persistence.md.
CREATE TABLE streamforge.lane (
    pipeline_id bigint NOT NULL
        REFERENCES streamforge.pipeline (id) ON DELETE CASCADE,
    lane integer NOT NULL,
    partition text COLLATE "C" NOT NULL,
    version bigint NOT NULL,
    snapshot_version bigint NOT NULL,
    snapshot bytea,
    offset_replays_base bigint NOT NULL DEFAULT 0,
    last_pos bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (pipeline_id, lane),
    UNIQUE (pipeline_id, partition)
);

-- A lane's journal: its ingest entries since its snapshot (format 3,
-- deliveries only) and the sequencer's K entries, with the epoch rules of
-- streamforge.journal (the epoch is the lane's snapshot_version).
CREATE TABLE streamforge.lane_journal (
    pipeline_id bigint NOT NULL,
    lane integer NOT NULL,
    pos bigint NOT NULL,
    entry bytea NOT NULL,
    PRIMARY KEY (pipeline_id, lane, pos),
    FOREIGN KEY (pipeline_id, lane)
        REFERENCES streamforge.lane (pipeline_id, lane) ON DELETE CASCADE
);

-- zlib-compressed already, and written once (see streamforge.journal)
ALTER TABLE streamforge.lane ALTER COLUMN snapshot SET STORAGE EXTERNAL;
ALTER TABLE streamforge.lane_journal ALTER COLUMN entry SET STORAGE EXTERNAL;

SELECT pg_catalog.pg_extension_config_dump('streamforge.lane', '');
SELECT pg_catalog.pg_extension_config_dump('streamforge.lane_journal', '');

-- ----------------------------------------------------------------
-- 4. Data
-- ----------------------------------------------------------------

-- (none yet)

-- Issue 42 (item 2): an aggregate's results in a table of its own
-- (objects/66_aggregates_views.sql), in a schema of their own; the
-- aggregates of 0.3.0 keep results_id NULL and their rows in
-- streamforge.results.
CREATE SCHEMA streamforge_results;
REVOKE ALL ON SCHEMA streamforge_results FROM PUBLIC;
COMMENT ON SCHEMA streamforge_results IS
    'streamforge: the tables of the aggregates'' results, read through their views';
ALTER TABLE streamforge.aggregate ADD COLUMN results_id bigint UNIQUE;
CREATE SEQUENCE streamforge.aggregate_results_seq;
SELECT pg_catalog.pg_extension_config_dump('streamforge.aggregate_results_seq', '');
