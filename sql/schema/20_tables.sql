-- streamforge schema: every table, sequence and index, in its current form.
--
-- Install only (sql/build.sh).  An update changes storage in
-- sql/migrations/<version>.sql, and the two must agree: a fresh install and
-- an updated database have the same catalog (test/t/090_upgrade.pl
-- compares them).  So columns are only ever appended: a new column goes
-- last in its CREATE TABLE here and into the migration (ALTER TABLE ... ADD
-- COLUMN puts it last too); every constraint and index has a name.  The
-- columns below are in the order the releases added them.
-- Privileges, policies, triggers and comments on these tables are
-- sql/objects/ (re-run by every update).
--
-- The tables that hold every pipeline.
--
-- A pipeline's persisted state is its snapshot (src/codec/snapshot.c: the
-- binary form without retention, checkpoint bytes with it; NULL for the
-- empty initial state) followed by its journal entries, replayed in pos
-- order.  version identifies a committed state: each transaction that writes
-- the pipeline bumps it (taking the row lock).  Only src/persist/ writes these tables; see docs/persistence.md.
--
-- The tables are registered as configuration tables, so pg_dump carries the
-- pipelines over.  Nobody but their owner (the extension's owner) may read
-- or write them: the C functions check the caller's privilege on the
-- pipeline and then run their queries as the extension's owner
-- (docs/security.md).

-- Pipeline ids are never reused, so a dropped and re-created pipeline never
-- matches a backend's stale cache entry.
CREATE SEQUENCE streamforge.pipeline_id_seq;

CREATE TABLE streamforge.pipeline (
    id bigint PRIMARY KEY
        DEFAULT pg_catalog.nextval('streamforge.pipeline_id_seq'::pg_catalog.regclass),
    name text COLLATE "C" NOT NULL UNIQUE,
    -- The definition's columns of 0.1.0-0.3.0 (partitions to lateness here,
    -- time_unit to aggregates below), NULL in every row since 0.4.0: the
    -- definition is the one document in "definition" (last column).  They
    -- stay, without their NOT NULL and CHECKs, only so that a dump of a
    -- database at 0.1.0-0.3.0 (pg_dump lists them in its COPY) restores
    -- into 0.4.0: the trigger pipeline_legacy_definition
    -- (sql/objects/27_definition_legacy.sql) moves what such a row brings
    -- into "definition" and sets them to NULL again.  Nothing reads them.
    partitions text[],
    windows streamforge.window_def[],
    lateness bigint,
    version bigint NOT NULL DEFAULT 0,      -- bumped by each writing transaction
    snapshot_version bigint NOT NULL DEFAULT 0,     -- version the snapshot was taken in
    snapshot bytea,                         -- NULL: the empty initial state
    offset_replays_base bigint NOT NULL DEFAULT 0,  -- stats() counter at snapshot
    -- privileges (src/persist/acl.c, docs/security.md): the owner has admin; each
    -- grantee is in at most one of the three lists, 0 ('-') is PUBLIC.
    -- regrole, so that pg_dump writes role names and a restore into
    -- another cluster maps them to that cluster's roles.
    owner regrole NOT NULL,
    readers regrole[] NOT NULL DEFAULT '{}',
    ingesters regrole[] NOT NULL DEFAULT '{}',
    admins regrole[] NOT NULL DEFAULT '{}',
    -- (0.2.0-0.3.0, NULL since 0.4.0: see partitions above)
    time_unit interval,
    retention bigint,
    out_of_orderness bigint,
    idle_timeout interval,
    emit text COLLATE "C",
    measures text[],
    aggregates text[],
    -- when the snapshot was last written (a compaction, a restore or a
    -- definition change; 0.3.0, docs/monitoring.md), set by the trigger
    -- pipeline_compacted (sql/objects/85_metrics.sql)
    compacted_at timestamptz,
    -- the definition (0.4.0, issue 41; src/codec/options.def): the one
    -- document streamforge.definition() shows, written whole by
    -- create_pipeline and every definition change, read by the strict
    -- reader of src/persist/definition.c (which refuses a corrupt one with
    -- XX001); no CHECK, the loader validates.  Last, where the update's
    -- ADD COLUMN puts it.
    definition jsonb NOT NULL,
    -- (every function, operator and cast of a definition is qualified:
    -- the script's search_path starts with the extension's schema)
    CONSTRAINT pipeline_name_check
        CHECK (pg_catalog.octet_length(name) OPERATOR(pg_catalog.>=) 1
               AND pg_catalog.octet_length(name) OPERATOR(pg_catalog.<=) 63),
    CONSTRAINT pipeline_version_check
        CHECK (snapshot_version OPERATOR(pg_catalog.>=) 0
               AND snapshot_version OPERATOR(pg_catalog.<=) version)
) WITH (fillfactor = 50);   -- room for HOT updates of version

ALTER SEQUENCE streamforge.pipeline_id_seq OWNED BY streamforge.pipeline.id;

-- The unknown-pipeline hint's lookup of names equal but for case, past
-- a thousand pipelines (src/persist/catalog.c, similar_pipelines).
CREATE INDEX pipeline_name_lower ON streamforge.pipeline (pg_catalog.lower(name));

-- The write calls since the snapshot, at increasing positions: a row holds
-- one call's inputs, or (since 0.2.0) the sequence of inputs of several
-- consecutive calls of one transaction, buffered until its commit; its pos
-- is the last call's position (binary format: src/codec/journal.c).
CREATE TABLE streamforge.journal (
    pipeline_id bigint NOT NULL
        REFERENCES streamforge.pipeline (id) ON DELETE CASCADE,
    pos bigint NOT NULL,
    entry bytea NOT NULL,
    PRIMARY KEY (pipeline_id, pos)
);

-- Snapshots are zlib-compressed already, and journal entries are written
-- once and read rarely: storing both out of line without pglz keeps a large
-- ingest_batch from spending its time compressing its own journal entry.
ALTER TABLE streamforge.pipeline ALTER COLUMN snapshot SET STORAGE EXTERNAL;
ALTER TABLE streamforge.journal ALTER COLUMN entry SET STORAGE EXTERNAL;

SELECT pg_catalog.pg_extension_config_dump('streamforge.pipeline', '');
SELECT pg_catalog.pg_extension_config_dump('streamforge.journal', '');
SELECT pg_catalog.pg_extension_config_dump('streamforge.pipeline_id_seq', '');

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
-- Durable outputs (docs/outputs.md).  Outputs are opt-in per pipeline
-- (configure_outputs).  src/persist/sink.c writes them in the transaction of
-- every write call, right after the call's journal entry, so they commit
-- and roll back with the pipeline's state.  Every row names its pipeline;
-- the foreign keys drop a pipeline's outputs with the pipeline.  Other
-- roles may read the rows of the pipelines they may read (row-level
-- security, sql/objects/50_security.sql).
-- ----------------------------------------------------------------

-- Which outputs each pipeline has.  A pipeline without a row has none.
-- Backends cache this table; the trigger output_config_changed
-- (sql/objects/40_outputs.sql) tells them when it changes.
CREATE TABLE streamforge.output_config (
    pipeline text COLLATE "C" PRIMARY KEY
        REFERENCES streamforge.pipeline (name) ON DELETE CASCADE,
    changelog boolean NOT NULL,
    results boolean NOT NULL,
    late boolean NOT NULL,
    notify boolean NOT NULL,
    configured_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    -- drop final results rows older than the retention horizon (0.2.0)
    results_retention boolean NOT NULL DEFAULT false,
    -- the outputs' epoch (0.3.0, docs/outputs.md, Epochs): set by the
    -- trigger output_config_epoch from output_epoch_seq
    epoch bigint NOT NULL DEFAULT 1
);

-- The outbox: every change, in seq order.  seq is the pipeline's own,
-- consecutive and written in the transaction that made the change, so a
-- reader polling "seq > last seen" after commit sees no gap and no
-- duplicate while the changelog is enabled.
CREATE TABLE streamforge.changelog (
    -- no foreign key to streamforge.pipeline (0.4.0, issue 42): the sink
    -- writes only for the pipeline it holds locked, and drop_pipeline
    -- deletes the rows (sf_sink_drop), without a check per row written
    pipeline text COLLATE "C" NOT NULL,
    seq bigint NOT NULL,
    op text NOT NULL,
    window_name text COLLATE "C" NOT NULL,
    key text COLLATE "C" NOT NULL,
    window_start bigint NOT NULL,
    window_end bigint NOT NULL,
    count bigint NOT NULL,
    sum numeric NOT NULL,
    min bigint NOT NULL,
    max bigint NOT NULL,
    PRIMARY KEY (pipeline, seq),
    -- 'final' since 0.3.0 (emit modes, docs/semantics.md)
    CONSTRAINT changelog_op_check
        CHECK (op OPERATOR(pg_catalog.=) ANY
               (ARRAY['retract'::pg_catalog.text, 'upsert'::pg_catalog.text,
                      'final'::pg_catalog.text])),
    -- the outputs' epoch of the change (0.3.0)
    epoch bigint NOT NULL DEFAULT 1,
    -- for a pipeline with a time unit, the bounds as timestamps too
    -- (0.3.0), converted as the _ts reads convert (NULL without a time
    -- unit, and outside timestamptz's range)
    window_start_ts timestamptz,
    window_end_ts timestamptz,
    -- a measures pipeline's declared aggregates (0.3.0; NULL for a
    -- one-measure pipeline)
    aggregates jsonb
);

-- The durable results: the changelog applied (upserts written, retractions
-- deleted).  Finalization does not delete, so rows stay here after
-- visible() has forgotten them.  seq is the change that wrote the row, NULL
-- for a row copied from visible() when the output was enabled.
--
-- At most one row per address (pipeline, window_name, key, window_start,
-- window_end): sink.c deletes an address before it writes it.  The index
-- holds md5(key) instead of the key so that keys of any length fit; the
-- key itself is always compared exactly.
CREATE TABLE streamforge.results (
    -- no foreign key to streamforge.pipeline (0.4.0, issue 42): the sink
    -- writes only for the pipeline it holds locked, and drop_pipeline
    -- deletes the rows (sf_sink_drop), without a check per row written
    pipeline text COLLATE "C" NOT NULL,
    window_name text COLLATE "C" NOT NULL,
    key text COLLATE "C" NOT NULL,
    window_start bigint NOT NULL,
    window_end bigint NOT NULL,
    count bigint NOT NULL,
    sum numeric NOT NULL,
    min bigint NOT NULL,
    max bigint NOT NULL,
    seq bigint,
    -- the exact mean, sum / count (0.2.0; last, where ALTER TABLE puts it
    -- on the table of 0.1.0)
    -- (0.3.0: CASE instead of NULLIF, whose "=" is not qualified)
    avg numeric GENERATED ALWAYS AS
        (sum OPERATOR(pg_catalog./)
         (CASE WHEN count OPERATOR(pg_catalog.=) 0 THEN NULL
               ELSE count END)::pg_catalog.numeric) STORED,
    -- whether the row is final (0.3.0, emit modes)
    final boolean NOT NULL DEFAULT false,
    -- the outputs' epoch the row was written in (0.3.0)
    epoch bigint NOT NULL DEFAULT 1,
    -- the bounds as timestamps (0.3.0, as in changelog)
    window_start_ts timestamptz,
    window_end_ts timestamptz,
    -- a measures pipeline's declared aggregates (0.3.0; NULL for a
    -- one-measure pipeline, and for rows not written by a change, such as
    -- those copied from visible() when results are enabled)
    aggregates jsonb
);

CREATE INDEX results_address ON streamforge.results
    (pipeline, window_name, window_start, pg_catalog.md5(key));

-- The rows 'update' mode has to mark final after a call that finalized
-- buckets (src/persist/sink.c; 0.3.0).
CREATE INDEX results_open ON streamforge.results (pipeline, window_end)
    WHERE NOT final;

-- A lookup by key (0.3.0, docs/outputs.md, Reading the results):
-- results_address's md5(key) serves the sink's lookups of one address; a
-- hash index takes keys of any length, so "WHERE pipeline = $1 AND key =
-- $2" (and a time range on top) is an index scan whatever the table's
-- size: bench/results_lookup.sh measures it.
CREATE INDEX results_key ON streamforge.results USING hash (key);

-- The late output: every late event, in late_seq order.
CREATE TABLE streamforge.late_output (
    -- no foreign key to streamforge.pipeline (0.4.0, issue 42): the sink
    -- writes only for the pipeline it holds locked, and drop_pipeline
    -- deletes the rows (sf_sink_drop), without a check per row written
    pipeline text COLLATE "C" NOT NULL,
    late_seq bigint NOT NULL,
    partition text COLLATE "C" NOT NULL,
    source_offset bigint NOT NULL,
    event_id text COLLATE "C" NOT NULL,
    key text COLLATE "C" NOT NULL,
    event_time bigint NOT NULL,
    value bigint NOT NULL,
    watermark bigint NOT NULL,
    PRIMARY KEY (pipeline, late_seq),
    -- the event time as a timestamp (0.3.0, as in changelog)
    event_time_ts timestamptz
);

SELECT pg_catalog.pg_extension_config_dump('streamforge.output_config', '');
SELECT pg_catalog.pg_extension_config_dump('streamforge.changelog', '');
SELECT pg_catalog.pg_extension_config_dump('streamforge.results', '');
SELECT pg_catalog.pg_extension_config_dump('streamforge.late_output', '');


-- The outputs' epoch: a new one is taken by resync_outputs (so by
-- restore), which may rewind the changelog's seq numbers, and when a
-- pipeline's outputs are turned on (again: what happened while they were
-- off is not in them).  It is carried by every changelog and results row
-- written and by every notification, so that a consumer that sees an
-- epoch other than its own knows to rebuild (docs/outputs.md, Epochs).
-- Epochs come from one sequence, so a pipeline's epochs only grow and
-- never repeat; 1 is the epoch of the outputs of 0.2.0.
CREATE SEQUENCE streamforge.output_epoch_seq START WITH 2;
SELECT pg_catalog.pg_extension_config_dump('streamforge.output_epoch_seq', '');

-- Consumer bookmarks (0.3.0, docs/outputs.md, Consumer bookmarks).
CREATE TABLE streamforge.consumer (
    pipeline text COLLATE "C" NOT NULL
        REFERENCES streamforge.pipeline (name) ON DELETE CASCADE,
    name text COLLATE "C" NOT NULL,
    owner regrole NOT NULL,         -- who may commit it
    seq bigint NOT NULL DEFAULT 0,          -- last change processed
    late_seq bigint NOT NULL DEFAULT 0,     -- last late event processed
    epoch bigint,                   -- the outputs' epoch at the last commit
    registered_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    committed_at timestamptz,
    PRIMARY KEY (pipeline, name),
    CONSTRAINT consumer_name_check
        CHECK (pg_catalog.octet_length(name) OPERATOR(pg_catalog.>=) 1
               AND pg_catalog.octet_length(name) OPERATOR(pg_catalog.<=) 63)
);

SELECT pg_catalog.pg_extension_config_dump('streamforge.consumer', '');

-- The aggregates made by create_aggregate (0.3.0, docs/aggregates.md).
-- One row per aggregate: its pipeline (the same name), the query as given,
-- the table, the views' schema and name, the time unit, and the shape of
-- the views (spec: window, keys, aggregates; written by
-- aggregate_register_internal only).  A configuration table: pg_dump
-- carries it over; dropping the pipeline drops the row (and its index).
CREATE TABLE streamforge.aggregate (
    name text COLLATE "C" PRIMARY KEY
        REFERENCES streamforge.pipeline (name) ON DELETE CASCADE,
    query text NOT NULL,
    source regclass NOT NULL,
    view_schema text NOT NULL,
    view_name text NOT NULL,
    unit_us bigint NOT NULL,
    spec jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    -- the table of its results, streamforge_results.a<results_id> (0.4.0,
    -- issue 42 item 2; objects/66_aggregates_views.sql); NULL: an aggregate
    -- of 0.3.0 whose rows are still in streamforge.results
    results_id bigint UNIQUE
);
SELECT pg_catalog.pg_extension_config_dump('streamforge.aggregate', '');

-- The numbers of the aggregates' results tables (0.4.0): drawn when an
-- aggregate is made, never reused, never from a caller's text.
CREATE SEQUENCE streamforge.aggregate_results_seq;
SELECT pg_catalog.pg_extension_config_dump('streamforge.aggregate_results_seq', '');

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


-- Row-level security shows each role the rows of the pipelines it may read
-- (the policies: sql/objects/50_security.sql, 55_consumers.sql).
ALTER TABLE streamforge.output_config ENABLE ROW LEVEL SECURITY;
ALTER TABLE streamforge.changelog ENABLE ROW LEVEL SECURITY;
ALTER TABLE streamforge.results ENABLE ROW LEVEL SECURITY;
ALTER TABLE streamforge.late_output ENABLE ROW LEVEL SECURITY;
ALTER TABLE streamforge.consumer ENABLE ROW LEVEL SECURITY;
