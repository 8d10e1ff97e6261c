-- streamforge objects: getting data in (0.2.0).
--
-- Sources without offsets (append, append_batch: src/api/append.c), pipelines
-- with a time unit (the *_ts and *_interval functions: src/api/timeunit.c and
-- the SQL below), JSON deliveries (ingest_json) and tables attached to a
-- pipeline (attach, detach: 62_attach.sql).  docs/ingestion.md describes
-- them.
--
-- Everything here except append, append_batch, ingest_json and time_unit
-- is SQL or PL/pgSQL running as the caller (no SECURITY DEFINER): each
-- function reaches the pipeline only through the C functions, which check
-- the caller's privilege.  Each sets search_path, so the caller's search_path
-- cannot redirect anything; every name is schema-qualified anyway.

-- ----------------------------------------------------------------
-- Sources without offsets
-- ----------------------------------------------------------------

-- An event without a source offset, for append_batch (sql/schema/10_types.sql).
COMMENT ON TYPE streamforge.event IS
    'an event without a source offset, for streamforge.append_batch';

CREATE OR REPLACE FUNCTION streamforge.append(pipeline text, partition text,
    event_id text, key text, event_time bigint, value bigint)
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_append'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 2;
COMMENT ON FUNCTION streamforge.append(text, text, text, text, bigint, bigint) IS
    'delivers one event at the partition''s next offset, assigned under the pipeline''s lock';

CREATE OR REPLACE FUNCTION streamforge.append_batch(pipeline text,
    events streamforge.event[])
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_append_batch'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge.append_batch(text, streamforge.event[]) IS
    'delivers events in array order at their partitions'' next offsets, all or none';

-- ----------------------------------------------------------------
-- Time units: exact conversions between timestamptz/interval and units
-- ----------------------------------------------------------------

CREATE OR REPLACE FUNCTION streamforge.time_unit(pipeline text)
RETURNS interval
AS 'MODULE_PATHNAME', 'sf_time_unit'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION streamforge.time_unit(text) IS
    'the time unit of a pipeline, NULL if it has none';

-- An interval as microseconds.  Months and years have no fixed length and
-- are refused; a day is 86,400 seconds (windows are aligned to the Unix
-- epoch, in UTC, whatever the session's time zone).
CREATE OR REPLACE FUNCTION streamforge_internal.interval_us(i interval)
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
CREATE OR REPLACE FUNCTION streamforge_internal.unit_us(unit interval, pipeline text DEFAULT NULL)
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
-- not a whole number of units is an error (22023; rounded down instead with streamforge.round_event_times), and one
-- whose units do not fit in a bigint is an error (22003).  In C, the same
-- routine as ingest_json's event_time strings (src/api/timeunit.c); not
-- strict: a NULL is an error (22004).  STABLE, not IMMUTABLE: the setting
-- streamforge.round_event_times turns the 22023 into rounding down.
CREATE OR REPLACE FUNCTION streamforge.time_to_units(t timestamptz, unit interval)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sf_time_to_units_sql'
LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION streamforge.time_to_units(timestamptz, interval) IS
    'a timestamp as a whole number of units since the Unix epoch, exactly';

-- interval -> units, exactly.
CREATE OR REPLACE FUNCTION streamforge.interval_to_units(i interval, unit interval)
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
-- of range" (docs/ingestion.md); the bigint maximum is 'infinity' (0.4.0:
-- a finished pipeline's watermark, issue 45).
CREATE OR REPLACE FUNCTION streamforge.units_to_time(t bigint, unit interval)
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
    -- the bigint maximum is +infinity: the progress finish() reports
    -- (docs/progress.md, "The end of the input"), in any unit
    IF t OPERATOR(pg_catalog.=) 9223372036854775807 THEN
        PERFORM streamforge_internal.unit_us(unit);
        RETURN 'infinity'::timestamptz;
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
CREATE OR REPLACE FUNCTION streamforge.fixed_interval(name text, size interval)
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

CREATE OR REPLACE FUNCTION streamforge.sliding_interval(name text, size interval, step interval)
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

CREATE OR REPLACE FUNCTION streamforge.session_interval(name text, gap interval)
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
CREATE OR REPLACE FUNCTION streamforge.ingest_ts(pipeline text, partition text,
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

CREATE OR REPLACE FUNCTION streamforge.append_ts(pipeline text, partition text,
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

CREATE OR REPLACE FUNCTION streamforge.advance_ts(pipeline text, partition text,
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
CREATE OR REPLACE FUNCTION streamforge.visible_ts(pipeline text)
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

CREATE OR REPLACE FUNCTION streamforge.live_ts(pipeline text)
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

CREATE OR REPLACE FUNCTION streamforge.watermark_ts(pipeline text)
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
-- A key and a time range, and the final and epoch columns (0.3.0, issue
-- 25 item 6; docs/outputs.md, Reading the results).  window_from and window_to bound window_start from below and
-- window_end from above, inclusive; they must be whole units of the
-- pipeline's time unit (time_to_units).
CREATE OR REPLACE FUNCTION streamforge.results_ts(pipeline text, for_key text DEFAULT NULL,
    window_from timestamptz DEFAULT NULL, window_to timestamptz DEFAULT NULL)
RETURNS TABLE (window_name text, key text, window_start timestamptz,
               window_end timestamptz, count bigint, sum numeric, min bigint,
               max bigint, seq bigint, final boolean, epoch bigint)
LANGUAGE plpgsql VOLATILE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    unit interval := streamforge.time_unit(pipeline);
    lo bigint;
    hi bigint;
    view_name text;
BEGIN
    PERFORM streamforge_internal.unit_us(unit, pipeline);
    -- (0.4.0, issue 42 item 2) an aggregate's results are in a table of
    -- its own, read through its view
    SELECT format('%I.%I', a.view_schema, a.view_name) INTO view_name
      FROM streamforge.aggregates AS a
     WHERE a.name OPERATOR(pg_catalog.=) results_ts.pipeline;
    IF view_name IS NOT NULL THEN
        RAISE EXCEPTION 'the results of aggregate "%" are not in streamforge.results', pipeline
            USING ERRCODE = '0A000',
                  HINT = format('Read its view %s.', view_name);
    END IF;
    lo := -9223372036854775807 OPERATOR(pg_catalog.-) 1;
    hi := 9223372036854775807;
    IF window_from IS NOT NULL THEN
        lo := streamforge.time_to_units(window_from, unit);
    END IF;
    IF window_to IS NOT NULL THEN
        hi := streamforge.time_to_units(window_to, unit);
    END IF;
    IF results_ts.for_key IS NULL THEN
        RETURN QUERY SELECT r.window_name::text, r.key::text,
            streamforge.units_to_time(r.window_start, unit),
            streamforge.units_to_time(r.window_end, unit),
            r.count, r.sum, r.min, r.max, r.seq, r.final, r.epoch
          FROM streamforge.results AS r
         WHERE r.pipeline OPERATOR(pg_catalog.=) results_ts.pipeline
           AND r.window_start OPERATOR(pg_catalog.>=) lo
           AND r.window_end OPERATOR(pg_catalog.<=) hi
         ORDER BY r.window_name, r.key, r.window_start, r.window_end;
    ELSE
        -- by the hash index results_key, also in a generic plan
        RETURN QUERY SELECT r.window_name::text, r.key::text,
            streamforge.units_to_time(r.window_start, unit),
            streamforge.units_to_time(r.window_end, unit),
            r.count, r.sum, r.min, r.max, r.seq, r.final, r.epoch
          FROM streamforge.results AS r
         WHERE r.key OPERATOR(pg_catalog.=) results_ts.for_key
           AND r.pipeline OPERATOR(pg_catalog.=) results_ts.pipeline
           AND r.window_start OPERATOR(pg_catalog.>=) lo
           AND r.window_end OPERATOR(pg_catalog.<=) hi
         ORDER BY r.window_name, r.key, r.window_start, r.window_end;
    END IF;
END
$$;
COMMENT ON FUNCTION streamforge.results_ts(text, text, timestamptz, timestamptz) IS
    'the pipeline''s rows of streamforge.results with timestamp bounds, optionally of one key and within a time range';

-- ----------------------------------------------------------------
-- JSON
-- ----------------------------------------------------------------

-- ingest_json(pipeline, deliveries): a JSON array of delivery objects
-- {"partition", "source_offset", "event_id", "key", "event_time", "value"},
-- applied like ingest_batch; or, when the first element has no
-- source_offset, of events applied like append_batch.  With a time unit,
-- event_time may be a timestamp string.  All or none.  In C
-- (src/api/ingest_json.c): it checks the caller's ingest privilege first, like
-- the other write calls.
CREATE OR REPLACE FUNCTION streamforge.ingest_json(pipeline text, deliveries jsonb)
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_ingest_json'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge.ingest_json(text, jsonb) IS
    'delivers a JSON array of deliveries (or of events without offsets), all or none';

-- Tables attached to a pipeline (attach, detach): 62_attach.sql.

-- ----------------------------------------------------------------
-- Per-row ingestion returning a count (issue 14, item 1; src/api/ingest.c)
-- ----------------------------------------------------------------
-- ingest_count: ingest (same checks, privileges, errors, persistence and
-- outputs), returning the number of changes instead of the rows.  Not
-- set-returning, so PL/pgSQL runs `n := streamforge.ingest_count(...)`
-- without starting the executor per call.
CREATE OR REPLACE FUNCTION streamforge.ingest_count(pipeline text, partition text,
    source_offset bigint, event_id text, key text, event_time bigint,
    value bigint)
RETURNS integer
AS 'MODULE_PATHNAME', 'sf_ingest_count'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge.ingest_count(text, text, bigint, text, text, bigint, bigint) IS
    'deliver one event like ingest; returns the number of changes it caused';
