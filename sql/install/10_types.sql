-- streamforge install script, part 1: types.

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
