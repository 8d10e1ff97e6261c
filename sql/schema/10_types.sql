-- streamforge schema: the composite types, in their current form.
--
-- Install only (sql/build.sh): an update changes a type in
-- sql/migrations/<version>.sql (ALTER TYPE ... ADD ATTRIBUTE appends, so
-- a new attribute goes last here too).  Their comments are in
-- sql/objects/ (70_comments.sql and the piece that uses the type).

-- A window definition, made by streamforge.fixed(), .sliding() and
-- .session().  create_pipeline() validates it again, so a hand-built row
-- gets the same errors as a bad constructor call.
CREATE TYPE streamforge.window_def AS (
    name text,
    kind text,          -- 'fixed' | 'sliding' | 'session'
    size bigint,        -- fixed, sliding
    step bigint,        -- sliding
    gap bigint          -- session
);

CREATE TYPE streamforge.change AS (
    seq bigint,
    op text,            -- 'retract' | 'upsert'
    window_name text,
    key text,
    window_start bigint,
    window_end bigint,
    count bigint,
    sum numeric,
    min bigint,
    max bigint
);

CREATE TYPE streamforge.result AS (
    window_name text,
    key text,
    window_start bigint,
    window_end bigint,
    count bigint,
    sum numeric,
    min bigint,
    max bigint
);

CREATE TYPE streamforge.delivery AS (
    partition text,
    source_offset bigint,
    event_id text,
    key text,
    event_time bigint,
    value bigint
);

CREATE TYPE streamforge.late_event AS (
    late_seq bigint,
    partition text,
    source_offset bigint,
    event_id text,
    key text,
    event_time bigint,
    value bigint,
    watermark bigint
);

-- An event without a source offset, for append_batch (0.2.0).
CREATE TYPE streamforge.event AS (
    partition text,
    event_id text,
    key text,
    event_time bigint,
    value bigint
);

-- A delivery of a measures pipeline, for ingest_measures_batch (0.3.0).
CREATE TYPE streamforge.measures_delivery AS (
    partition text,
    source_offset bigint,
    event_id text,
    key text,
    event_time bigint,
    measures bigint[]
);

-- A change of a measures pipeline: the declared aggregates by name.
CREATE TYPE streamforge.measures_change AS (
    seq bigint,
    op text,            -- 'retract' | 'upsert'
    window_name text,
    key text,
    window_start bigint,
    window_end bigint,
    count bigint,
    aggregates jsonb
);

-- A row of live_aggregates() and visible_aggregates().
CREATE TYPE streamforge.measures_result AS (
    window_name text,
    key text,
    window_start bigint,
    window_end bigint,
    count bigint,
    aggregates jsonb
);
