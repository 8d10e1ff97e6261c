-- streamforge install script, part 6: getting data in (0.2.0).
--
-- Sources without offsets (append, append_batch: src/append.c), pipelines
-- with a time unit (the *_ts and *_interval functions: src/timeunit.c and
-- the SQL below), JSON deliveries (ingest_json) and tables attached to a
-- pipeline (attach, detach).  docs/ingestion.md describes them.
--
-- Everything here except append, append_batch, ingest_json and time_unit
-- is SQL or PL/pgSQL running as the caller (no SECURITY DEFINER): each
-- function reaches the pipeline only through the C functions, which check
-- the caller's privilege.  Each sets search_path, so the caller's search_path
-- cannot redirect anything; every name is schema-qualified anyway.

-- ----------------------------------------------------------------
-- Storage: the time unit of a pipeline (NULL: none, as for 0.1.0)
-- ----------------------------------------------------------------

ALTER TABLE streamforge.pipeline ADD COLUMN time_unit interval;

-- ----------------------------------------------------------------
-- Sources without offsets
-- ----------------------------------------------------------------

-- An event without a source offset, for append_batch.
CREATE TYPE streamforge.event AS (
    partition text,
    event_id text,
    key text,
    event_time bigint,
    value bigint
);
COMMENT ON TYPE streamforge.event IS
    'an event without a source offset, for streamforge.append_batch';

CREATE FUNCTION streamforge.append(pipeline text, partition text,
    event_id text, key text, event_time bigint, value bigint)
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_append'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 2;
COMMENT ON FUNCTION streamforge.append(text, text, text, text, bigint, bigint) IS
    'delivers one event at the partition''s next offset, assigned under the pipeline''s lock';

CREATE FUNCTION streamforge.append_batch(pipeline text,
    events streamforge.event[])
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_append_batch'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge.append_batch(text, streamforge.event[]) IS
    'delivers events in array order at their partitions'' next offsets, all or none';

-- ----------------------------------------------------------------
-- Time units: exact conversions between timestamptz/interval and units
-- ----------------------------------------------------------------

CREATE FUNCTION streamforge.time_unit(pipeline text)
RETURNS interval
AS 'MODULE_PATHNAME', 'sf_time_unit'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION streamforge.time_unit(text) IS
    'the time unit of a pipeline, NULL if it has none';

-- An interval as microseconds.  Months and years have no fixed length and
-- are refused; a day is 86,400 seconds (windows are aligned to the Unix
-- epoch, in UTC, whatever the session's time zone).
CREATE FUNCTION streamforge_internal.interval_us(i interval)
RETURNS bigint
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF i IS NULL THEN
        RAISE EXCEPTION 'interval must not be null' USING ERRCODE = '22004';
    ELSIF extract(year FROM i) OPERATOR(pg_catalog.<>) 0
          OR extract(month FROM i) OPERATOR(pg_catalog.<>) 0 THEN
        RAISE EXCEPTION 'interval "%" must not contain months or years', i
            USING ERRCODE = '22023',
                  DETAIL = 'A month has no fixed length in microseconds.';
    END IF;
    RETURN (extract(epoch FROM i) OPERATOR(pg_catalog.*) 1000000)::bigint;
END
$$;
COMMENT ON FUNCTION streamforge_internal.interval_us(interval) IS
    'an interval without months as microseconds (a day is 86,400 seconds)';

-- A positive time unit as microseconds; NULL raises 22023 naming the
-- pipeline (a pipeline without a time unit).
CREATE FUNCTION streamforge_internal.unit_us(unit interval, pipeline text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    us bigint;
BEGIN
    IF unit IS NULL THEN
        IF pipeline IS NULL THEN
            RAISE EXCEPTION 'time unit must not be null' USING ERRCODE = '22004';
        END IF;
        RAISE EXCEPTION 'pipeline "%" has no time unit', pipeline
            USING ERRCODE = '22023',
                  HINT = 'Give times as bigint, or create the pipeline with time_unit => interval ''1 millisecond'' (or another unit).';
    END IF;
    us := streamforge_internal.interval_us(unit);
    IF us OPERATOR(pg_catalog.<=) 0 THEN
        RAISE EXCEPTION 'time unit must be greater than zero' USING ERRCODE = '22023';
    END IF;
    RETURN us;
END
$$;
COMMENT ON FUNCTION streamforge_internal.unit_us(interval, text) IS
    'a positive time unit as microseconds (internal helper)';

-- timestamptz -> units since the Unix epoch, exactly: a timestamp that is
-- not a whole number of units is an error, never rounded.
CREATE FUNCTION streamforge.time_to_units(t timestamptz, unit interval)
RETURNS bigint
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    u bigint := streamforge_internal.unit_us(unit);
    us numeric;
BEGIN
    IF t IS NULL THEN
        RAISE EXCEPTION 'timestamp must not be null' USING ERRCODE = '22004';
    ELSIF NOT isfinite(t) THEN
        RAISE EXCEPTION 'timestamp must be finite' USING ERRCODE = '22023';
    END IF;
    us := extract(epoch FROM t) OPERATOR(pg_catalog.*) 1000000;
    IF us OPERATOR(pg_catalog.%) u OPERATOR(pg_catalog.<>) 0 THEN
        RAISE EXCEPTION 'timestamp "%" is not a whole number of time units', t
            USING ERRCODE = '22023',
                  DETAIL = format('The time unit is %s.', unit),
                  HINT = 'Truncate the timestamp to the unit (date_bin), or choose a finer unit.';
    END IF;
    RETURN (us OPERATOR(pg_catalog./) u)::bigint;
END
$$;
COMMENT ON FUNCTION streamforge.time_to_units(timestamptz, interval) IS
    'a timestamp as a whole number of units since the Unix epoch, exactly';

-- interval -> units, exactly.
CREATE FUNCTION streamforge.interval_to_units(i interval, unit interval)
RETURNS bigint
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    u bigint := streamforge_internal.unit_us(unit);
    us bigint := streamforge_internal.interval_us(i);
BEGIN
    IF us OPERATOR(pg_catalog.%) u OPERATOR(pg_catalog.<>) 0 THEN
        RAISE EXCEPTION 'interval "%" is not a whole number of time units', i
            USING ERRCODE = '22023',
                  DETAIL = format('The time unit is %s.', unit);
    END IF;
    RETURN us OPERATOR(pg_catalog./) u;
END
$$;
COMMENT ON FUNCTION streamforge.interval_to_units(interval, interval) IS
    'an interval as a whole number of units, exactly';

-- units since the Unix epoch -> timestamptz.  Built from hours and
-- microseconds so that no time zone's daylight saving time enters; the
-- hours in two halves, each of which fits make_interval's integer.  A time
-- that timestamptz cannot hold is 22008, as PostgreSQL's own "timestamp out
-- of range" (docs/ingestion.md).
CREATE FUNCTION streamforge.units_to_time(t bigint, unit interval)
RETURNS timestamptz
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    total numeric;      -- microseconds since the epoch
    h numeric;          -- whole hours of it
    h1 numeric;         -- about half of them
    -- (OPERATOR() forms all share one precedence: parenthesize)
BEGIN
    IF t IS NULL THEN
        RETURN NULL;
    END IF;
    total := t::numeric OPERATOR(pg_catalog.*) streamforge_internal.unit_us(unit);
    -- timestamptz's range, 4714-11-24 00:00:00+00 BC to 294277-01-01
    -- 00:00:00+00 (excluded), in microseconds since the Unix epoch
    IF total OPERATOR(pg_catalog.<) (-210866803200000000)::numeric
       OR total OPERATOR(pg_catalog.>=) 9224318016000000000::numeric THEN
        RAISE EXCEPTION 'timestamp out of range'
            USING ERRCODE = '22008',
                  DETAIL = pg_catalog.format('Time %s in units of %s is outside the range of timestamptz.', t, unit),
                  HINT = 'The bigint reads (streamforge.live(), visible(), watermark()) give every time.';
    END IF;
    h := floor(total OPERATOR(pg_catalog./) 3600000000);
    h1 := trunc(h OPERATOR(pg_catalog./) 2);
    RETURN '1970-01-01 00:00:00+00'::timestamptz
           OPERATOR(pg_catalog.+) make_interval(0, 0, 0, 0, h1::integer, 0, 0)
           OPERATOR(pg_catalog.+) make_interval(0, 0, 0, 0,
               (h OPERATOR(pg_catalog.-) h1)::integer, 0, 0)
           OPERATOR(pg_catalog.+) make_interval(0, 0, 0, 0, 0, 0,
               ((total OPERATOR(pg_catalog.-) (h OPERATOR(pg_catalog.*) 3600000000))
                OPERATOR(pg_catalog./) 1000000)::double precision);
END
$$;
COMMENT ON FUNCTION streamforge.units_to_time(bigint, interval) IS
    'units since the Unix epoch as a timestamp (NULL stays NULL)';

-- Window constructors taking intervals.  The sizes are kept in
-- microseconds, with the kind marked "/us"; create_pipeline converts them
-- to the pipeline's time unit (and refuses them without one).
CREATE FUNCTION streamforge.fixed_interval(name text, size interval)
RETURNS streamforge.window_def
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    w streamforge.window_def;
BEGIN
    IF size IS NULL THEN
        RAISE EXCEPTION 'size must not be null' USING ERRCODE = '22004';
    END IF;
    w := streamforge.fixed(name, streamforge_internal.interval_us(size));
    w.kind := w.kind OPERATOR(pg_catalog.||) '/us';
    RETURN w;
END
$$;
COMMENT ON FUNCTION streamforge.fixed_interval(text, interval) IS
    'a fixed (tumbling) window whose size is an interval (needs a pipeline time unit)';

CREATE FUNCTION streamforge.sliding_interval(name text, size interval, step interval)
RETURNS streamforge.window_def
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    w streamforge.window_def;
BEGIN
    IF size IS NULL THEN
        RAISE EXCEPTION 'size must not be null' USING ERRCODE = '22004';
    ELSIF step IS NULL THEN
        RAISE EXCEPTION 'step must not be null' USING ERRCODE = '22004';
    END IF;
    w := streamforge.sliding(name, streamforge_internal.interval_us(size),
                             streamforge_internal.interval_us(step));
    w.kind := w.kind OPERATOR(pg_catalog.||) '/us';
    RETURN w;
END
$$;
COMMENT ON FUNCTION streamforge.sliding_interval(text, interval, interval) IS
    'a sliding (hopping) window whose size and step are intervals (needs a pipeline time unit)';

CREATE FUNCTION streamforge.session_interval(name text, gap interval)
RETURNS streamforge.window_def
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    w streamforge.window_def;
BEGIN
    IF gap IS NULL THEN
        RAISE EXCEPTION 'gap must not be null' USING ERRCODE = '22004';
    END IF;
    w := streamforge.session(name, streamforge_internal.interval_us(gap));
    w.kind := w.kind OPERATOR(pg_catalog.||) '/us';
    RETURN w;
END
$$;
COMMENT ON FUNCTION streamforge.session_interval(text, interval) IS
    'a session window whose gap is an interval (needs a pipeline time unit)';

-- Write calls taking timestamptz: converted with the pipeline's unit.
CREATE FUNCTION streamforge.ingest_ts(pipeline text, partition text,
    source_offset bigint, event_id text, key text, event_time timestamptz,
    value bigint)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE ROWS 2
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    unit interval := streamforge.time_unit(pipeline);
BEGIN
    PERFORM streamforge_internal.unit_us(unit, pipeline);
    RETURN QUERY SELECT * FROM streamforge.ingest(pipeline, partition,
        source_offset, event_id, key,
        streamforge.time_to_units(event_time, unit), value);
END
$$;
COMMENT ON FUNCTION streamforge.ingest_ts(text, text, bigint, text, text, timestamptz, bigint) IS
    'delivers one event whose time is a timestamp (the pipeline needs a time unit)';

CREATE FUNCTION streamforge.append_ts(pipeline text, partition text,
    event_id text, key text, event_time timestamptz, value bigint)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE ROWS 2
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    unit interval := streamforge.time_unit(pipeline);
BEGIN
    PERFORM streamforge_internal.unit_us(unit, pipeline);
    RETURN QUERY SELECT * FROM streamforge.append(pipeline, partition,
        event_id, key, streamforge.time_to_units(event_time, unit), value);
END
$$;
COMMENT ON FUNCTION streamforge.append_ts(text, text, text, text, timestamptz, bigint) IS
    'delivers one event whose time is a timestamp at the partition''s next offset';

CREATE FUNCTION streamforge.advance_ts(pipeline text, partition text,
    progress timestamptz)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    unit interval := streamforge.time_unit(pipeline);
BEGIN
    PERFORM streamforge_internal.unit_us(unit, pipeline);
    RETURN QUERY SELECT * FROM streamforge.advance(pipeline, partition,
        streamforge.time_to_units(progress, unit));
END
$$;
COMMENT ON FUNCTION streamforge.advance_ts(text, text, timestamptz) IS
    'reports a partition''s progress as a timestamp (the pipeline needs a time unit)';

-- Results with timestamptz bounds.
CREATE FUNCTION streamforge.visible_ts(pipeline text)
RETURNS TABLE (window_name text, key text, window_start timestamptz,
               window_end timestamptz, count bigint, sum numeric, min bigint,
               max bigint)
LANGUAGE plpgsql VOLATILE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    unit interval := streamforge.time_unit(pipeline);
BEGIN
    PERFORM streamforge_internal.unit_us(unit, pipeline);
    RETURN QUERY SELECT r.window_name, r.key,
        streamforge.units_to_time(r.window_start, unit),
        streamforge.units_to_time(r.window_end, unit),
        r.count, r.sum, r.min, r.max
      FROM streamforge.visible(pipeline) AS r;
END
$$;
COMMENT ON FUNCTION streamforge.visible_ts(text) IS
    'visible() with timestamp window bounds (the pipeline needs a time unit)';

CREATE FUNCTION streamforge.live_ts(pipeline text)
RETURNS TABLE (window_name text, key text, window_start timestamptz,
               window_end timestamptz, count bigint, sum numeric, min bigint,
               max bigint)
LANGUAGE plpgsql VOLATILE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    unit interval := streamforge.time_unit(pipeline);
BEGIN
    PERFORM streamforge_internal.unit_us(unit, pipeline);
    RETURN QUERY SELECT r.window_name, r.key,
        streamforge.units_to_time(r.window_start, unit),
        streamforge.units_to_time(r.window_end, unit),
        r.count, r.sum, r.min, r.max
      FROM streamforge.live(pipeline) AS r;
END
$$;
COMMENT ON FUNCTION streamforge.live_ts(text) IS
    'live() with timestamp window bounds (the pipeline needs a time unit)';

CREATE FUNCTION streamforge.watermark_ts(pipeline text)
RETURNS timestamptz
LANGUAGE plpgsql VOLATILE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    unit interval := streamforge.time_unit(pipeline);
BEGIN
    PERFORM streamforge_internal.unit_us(unit, pipeline);
    RETURN streamforge.units_to_time(streamforge.watermark(pipeline), unit);
END
$$;
COMMENT ON FUNCTION streamforge.watermark_ts(text) IS
    'watermark() as a timestamp, NULL before there is one (the pipeline needs a time unit)';

-- The durable results (streamforge.results, row-level security applies)
-- with timestamp bounds.
CREATE FUNCTION streamforge.results_ts(pipeline text)
RETURNS TABLE (window_name text, key text, window_start timestamptz,
               window_end timestamptz, count bigint, sum numeric, min bigint,
               max bigint, seq bigint)
LANGUAGE plpgsql VOLATILE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    unit interval := streamforge.time_unit(pipeline);
BEGIN
    PERFORM streamforge_internal.unit_us(unit, pipeline);
    RETURN QUERY SELECT r.window_name::text, r.key::text,
        streamforge.units_to_time(r.window_start, unit),
        streamforge.units_to_time(r.window_end, unit),
        r.count, r.sum, r.min, r.max, r.seq
      FROM streamforge.results AS r
     WHERE r.pipeline OPERATOR(pg_catalog.=) results_ts.pipeline
     ORDER BY r.window_name, r.key, r.window_start, r.window_end;
END
$$;
COMMENT ON FUNCTION streamforge.results_ts(text) IS
    'the pipeline''s rows of streamforge.results with timestamp bounds';

-- ----------------------------------------------------------------
-- JSON
-- ----------------------------------------------------------------

-- ingest_json(pipeline, deliveries): a JSON array of delivery objects
-- {"partition", "source_offset", "event_id", "key", "event_time", "value"},
-- applied like ingest_batch; or, when the first element has no
-- source_offset, of events applied like append_batch.  With a time unit,
-- event_time may be a timestamp string.  All or none.  In C
-- (src/ingest_json.c): it checks the caller's ingest privilege first, like
-- the other write calls.
CREATE FUNCTION streamforge.ingest_json(pipeline text, deliveries jsonb)
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_ingest_json'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge.ingest_json(text, jsonb) IS
    'delivers a JSON array of deliveries (or of events without offsets), all or none';

-- ----------------------------------------------------------------
-- Tables attached to a pipeline
-- ----------------------------------------------------------------
--
-- attach() creates two triggers on the table, named after the pipeline:
-- a statement-level AFTER INSERT trigger with a transition table, which
-- appends the statement's new rows (one append_batch per statement, so a
-- COPY of a million rows is one batch) in the inserting transaction, and a
-- row-level BEFORE UPDATE trigger that refuses to change what a mapping
-- reads.  DELETE and TRUNCATE are ignored: the events stay consumed.
--
-- The mappings are SQL expressions over the table's columns, stored (as
-- fully qualified, type-converted expressions) in the triggers' arguments,
-- so pg_dump carries an attachment with its table, and restoring the
-- table's rows (which pg_dump does before it creates triggers) ingests
-- nothing twice.
--
-- Privileges: the triggers run as the inserting role (no SECURITY
-- DEFINER), which therefore needs the ingest privilege on the pipeline;
-- an insert by a role without it fails with 42501 and inserts nothing.
-- Only the table's owner may attach (the expressions are code that will
-- run as whoever inserts, like any trigger the owner writes).  The trigger
-- functions pin search_path to pg_catalog, pg_temp, so the mappings mean
-- the same thing for every inserting role: qualify your own functions.

-- The trigger name of an attachment of pipeline to a table.
CREATE FUNCTION streamforge_internal.attach_trigger_name(pipeline text)
RETURNS name
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN ('streamforge_attach_' OPERATOR(pg_catalog.||) pg_catalog.left(pg_catalog.md5(pipeline), 16))::name;
COMMENT ON FUNCTION streamforge_internal.attach_trigger_name(text) IS
    'the name of the INSERT trigger that attaches a pipeline to a table (internal helper)';

-- The arguments of a trigger (pg_trigger.tgargs) as text[].
CREATE FUNCTION streamforge_internal.trigger_args(args bytea)
RETURNS text[]
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    result text[] := '{}';
    rest bytea := args;
    i integer;
BEGIN
    LOOP
        i := position('\x00'::bytea IN rest);
        EXIT WHEN i OPERATOR(pg_catalog.=) 0;
        result := result OPERATOR(pg_catalog.||) convert_from(substr(rest, 1, i OPERATOR(pg_catalog.-) 1), current_setting('server_encoding'));
        rest := substr(rest, i OPERATOR(pg_catalog.+) 1);
    END LOOP;
    RETURN result;
END
$$;
COMMENT ON FUNCTION streamforge_internal.trigger_args(bytea) IS
    'the arguments of a trigger as text[] (internal helper)';

-- The type of a mapping expression over the table (with no row read).
CREATE FUNCTION streamforge_internal.attach_expr_type(source regclass, expr text)
RETURNS regtype
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t regtype;
BEGIN
    FOR t IN EXECUTE format('SELECT pg_catalog.pg_typeof((SELECT %s FROM %s AS new_rows LIMIT 0))',
                            expr, source)
    LOOP
    END LOOP;
    RETURN t;
END
$$;
COMMENT ON FUNCTION streamforge_internal.attach_expr_type(regclass, text) IS
    'the type of a mapping expression over a table (internal helper)';

-- The statement-level AFTER INSERT trigger of an attachment.  Arguments:
-- pipeline, then the expressions of partition, event_id, key, event_time
-- (in units) and value.
CREATE FUNCTION streamforge_internal.attached_insert()
RETURNS trigger
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n bigint;
BEGIN
    IF TG_NARGS OPERATOR(pg_catalog.<>) 6 OR TG_LEVEL OPERATOR(pg_catalog.<>) 'STATEMENT'
       OR TG_OP OPERATOR(pg_catalog.<>) 'INSERT' THEN
        RAISE EXCEPTION 'streamforge_internal.attached_insert() must be created by streamforge.attach()'
            USING ERRCODE = '39P01';
    END IF;
    -- a cursor: exactly one query, whatever the expressions contain
    FOR n IN EXECUTE format(
        'SELECT pg_catalog.count(*) FROM streamforge.append_batch($1, '
        'ARRAY(SELECT ROW(%s, %s, %s, %s, %s)::streamforge.event FROM new_rows))',
        TG_ARGV[1], TG_ARGV[2], TG_ARGV[3], TG_ARGV[4], TG_ARGV[5])
        USING TG_ARGV[0]
    LOOP
    END LOOP;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION streamforge_internal.attached_insert() IS
    'trigger of streamforge.attach: appends the inserted rows to the pipeline';

-- The row-level BEFORE UPDATE trigger of an attachment: an update that
-- changes what the mappings read is refused; others pass.
CREATE FUNCTION streamforge_internal.attached_update()
RETURNS trigger
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    q text;
    o text;
    n text;
BEGIN
    IF TG_NARGS OPERATOR(pg_catalog.<>) 6 OR TG_LEVEL OPERATOR(pg_catalog.<>) 'ROW'
       OR TG_OP OPERATOR(pg_catalog.<>) 'UPDATE' THEN
        RAISE EXCEPTION 'streamforge_internal.attached_update() must be created by streamforge.attach()'
            USING ERRCODE = '39P01';
    END IF;
    q := format('SELECT ROW(%s, %s, %s, %s, %s)::streamforge.event::pg_catalog.text '
                'FROM (SELECT ($1).*) AS new_rows',
                TG_ARGV[1], TG_ARGV[2], TG_ARGV[3], TG_ARGV[4], TG_ARGV[5]);
    FOR o IN EXECUTE q USING OLD LOOP END LOOP;
    FOR n IN EXECUTE q USING NEW LOOP END LOOP;
    IF o IS DISTINCT FROM n THEN
        RAISE EXCEPTION 'cannot change an event of table % attached to pipeline "%"',
                        TG_RELID::regclass, TG_ARGV[0]
            USING ERRCODE = '0A000',
                  DETAIL = format('The pipeline consumed the row as %s; the update would make it %s.', o, n),
                  HINT = 'Insert a correcting row instead, with a new event id.';
    END IF;
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION streamforge_internal.attached_update() IS
    'trigger of streamforge.attach: refuses updates that change an ingested event';

-- attach(pipeline, source, event_id, key, event_time, value, partition):
-- from now on, every row inserted into source is an event of pipeline,
-- delivered at its partition's next offset in the inserting transaction.
-- Each mapping is an SQL expression over the table's columns; partition
-- defaults to the pipeline's only partition.  event_time may be an
-- integer (in the pipeline's units) or a timestamptz, timestamp (read as
-- UTC) or date when the pipeline has a time unit; value an integer.
CREATE FUNCTION streamforge.attach(pipeline text, source regclass,
    event_id text, key text, event_time text, value text DEFAULT '1',
    partition text DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    tg name;
    unit interval;
    parts text[];
    typ regtype;
    p_expr text;
    id_expr text;
    key_expr text;
    time_expr text;
    value_expr text;
    args text;
BEGIN
    IF pipeline IS NULL THEN
        RAISE EXCEPTION 'pipeline must not be null' USING ERRCODE = '22004';
    END IF;
    PERFORM streamforge.require_privilege(pipeline, 'ingest');
    IF source IS NULL OR event_id IS NULL OR key IS NULL OR event_time IS NULL
       OR value IS NULL THEN
        RAISE EXCEPTION 'arguments of attach must not be null'
            USING ERRCODE = '22004',
                  DETAIL = 'Only partition may be null (the pipeline''s only partition).';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_class AS c
                    WHERE c.oid OPERATOR(pg_catalog.=) source
                      AND c.relkind OPERATOR(pg_catalog.=) ANY (ARRAY['r', 'p']::"char"[])) THEN
        RAISE EXCEPTION '"%" is not a table', source USING ERRCODE = '42809';
    END IF;
    IF NOT pg_has_role((SELECT c.relowner FROM pg_catalog.pg_class AS c
                         WHERE c.oid OPERATOR(pg_catalog.=) source), 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of table %', source USING ERRCODE = '42501';
    END IF;
    tg := streamforge_internal.attach_trigger_name(pipeline);
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_trigger AS t
                WHERE t.tgrelid OPERATOR(pg_catalog.=) source
                  AND t.tgname OPERATOR(pg_catalog.=) tg) THEN
        RAISE EXCEPTION 'pipeline "%" is already attached to table %', pipeline, source
            USING ERRCODE = '42710';
    END IF;

    IF partition IS NULL THEN
        SELECT pg_catalog.array_agg(p.partition) INTO parts
          FROM streamforge.partitions(pipeline) AS p;
        IF pg_catalog.cardinality(parts) OPERATOR(pg_catalog.<>) 1 THEN
            RAISE EXCEPTION 'pipeline "%" has % partitions', pipeline, pg_catalog.cardinality(parts)
                USING ERRCODE = '22023',
                      HINT = 'Pass partition => an expression, or a quoted partition name such as ''''''p0''''''.';
        END IF;
        partition := quote_literal(parts[1]);
    END IF;

    p_expr := format('(%s)::pg_catalog.text', partition);
    id_expr := format('(%s)::pg_catalog.text', event_id);
    key_expr := format('(%s)::pg_catalog.text', key);

    typ := streamforge_internal.attach_expr_type(source, event_time);
    IF typ OPERATOR(pg_catalog.=) ANY (ARRAY['smallint', 'integer', 'bigint']::regtype[]) THEN
        time_expr := format('(%s)::pg_catalog.int8', event_time);
    ELSIF typ OPERATOR(pg_catalog.=) ANY (ARRAY['timestamp with time zone', 'timestamp without time zone', 'date']::regtype[]) THEN
        unit := streamforge.time_unit(pipeline);
        PERFORM streamforge_internal.unit_us(unit, pipeline);
        time_expr := format('streamforge.time_to_units(%s, %L::pg_catalog.interval)',
            CASE WHEN typ OPERATOR(pg_catalog.=) 'timestamp with time zone'::regtype
                 THEN format('(%s)', event_time)
                 ELSE format('pg_catalog.timezone(''UTC'', (%s)::pg_catalog.timestamp)', event_time) END,
            unit);
    ELSE
        RAISE EXCEPTION 'event_time must be an integer or a timestamp'
            USING ERRCODE = '42804',
                  DETAIL = format('The expression %s is of type %s.', event_time, typ);
    END IF;

    typ := streamforge_internal.attach_expr_type(source, value);
    IF typ OPERATOR(pg_catalog.<>) ALL (ARRAY['smallint', 'integer', 'bigint']::regtype[]) THEN
        RAISE EXCEPTION 'value must be an integer'
            USING ERRCODE = '42804',
                  DETAIL = format('The expression %s is of type %s.', value, typ);
    END IF;
    value_expr := format('(%s)::pg_catalog.int8', value);

    -- the whole row must evaluate (no row is read)
    EXECUTE format('SELECT ROW(%s, %s, %s, %s, %s)::streamforge.event FROM %s AS new_rows LIMIT 0',
                   p_expr, id_expr, key_expr, time_expr, value_expr, source);

    args := format('%L, %L, %L, %L, %L, %L', pipeline, p_expr, id_expr,
                   key_expr, time_expr, value_expr);
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %s REFERENCING NEW TABLE AS new_rows '
                   'FOR EACH STATEMENT EXECUTE FUNCTION streamforge_internal.attached_insert(%s)',
                   tg, source, args);
    EXECUTE format('CREATE TRIGGER %I BEFORE UPDATE ON %s '
                   'FOR EACH ROW EXECUTE FUNCTION streamforge_internal.attached_update(%s)',
                   tg OPERATOR(pg_catalog.||) '_update', source, args);
END
$$;
COMMENT ON FUNCTION streamforge.attach(text, regclass, text, text, text, text, text) IS
    'ingests every row inserted into a table as an event of a pipeline';

-- detach(pipeline, source): drops the triggers of attach().  Needs
-- ownership of the table; the pipeline need not exist any more.
CREATE FUNCTION streamforge.detach(pipeline text, source regclass)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    tg name;
BEGIN
    IF pipeline IS NULL OR source IS NULL THEN
        RAISE EXCEPTION 'arguments of detach must not be null' USING ERRCODE = '22004';
    END IF;
    tg := streamforge_internal.attach_trigger_name(pipeline);
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_trigger AS t
                    WHERE t.tgrelid OPERATOR(pg_catalog.=) source
                      AND t.tgname OPERATOR(pg_catalog.=) tg) THEN
        RAISE EXCEPTION 'pipeline "%" is not attached to table %', pipeline, source
            USING ERRCODE = '42704';
    END IF;
    EXECUTE format('DROP TRIGGER %I ON %s', tg, source);
    EXECUTE format('DROP TRIGGER IF EXISTS %I ON %s', tg OPERATOR(pg_catalog.||) '_update', source);
END
$$;
COMMENT ON FUNCTION streamforge.detach(text, regclass) IS
    'stops ingesting a table''s inserted rows into a pipeline';

-- The attachments in this database (of the tables the role can see in
-- pg_trigger, like \d).
CREATE VIEW streamforge.attachments AS
SELECT t.tgrelid::regclass AS source,
       a.args[1] AS pipeline,
       a.args[2] AS partition,
       a.args[3] AS event_id,
       a.args[4] AS key,
       a.args[5] AS event_time,
       a.args[6] AS value,
       t.tgname AS trigger_name
  FROM pg_catalog.pg_trigger AS t,
       LATERAL (SELECT streamforge_internal.trigger_args(t.tgargs) AS args) AS a
 WHERE t.tgfoid OPERATOR(pg_catalog.=) 'streamforge_internal.attached_insert()'::pg_catalog.regprocedure;
COMMENT ON VIEW streamforge.attachments IS
    'tables attached to pipelines, with the mapping expressions';
GRANT SELECT ON streamforge.attachments TO PUBLIC;

-- ----------------------------------------------------------------
-- Per-row ingestion returning a count (issue 14, item 1; src/sf_sql.c)
-- ----------------------------------------------------------------
-- ingest_count: ingest (same checks, privileges, errors, persistence and
-- outputs), returning the number of changes instead of the rows.  Not
-- set-returning, so PL/pgSQL runs `n := streamforge.ingest_count(...)`
-- without starting the executor per call.
CREATE FUNCTION streamforge.ingest_count(pipeline text, partition text,
    source_offset bigint, event_id text, key text, event_time bigint,
    value bigint)
RETURNS integer
AS 'MODULE_PATHNAME', 'sf_ingest_count'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge.ingest_count(text, text, bigint, text, text, bigint, bigint) IS
    'deliver one event like ingest; returns the number of changes it caused';
