-- streamforge install script: results you can query (0.3.0, issue 25
-- item 6; docs/outputs.md, Reading the results).
--
-- results_address serves the sink's lookups of one address (its md5(key)
-- lets keys of any length fit); a lookup by key needs an index on the key
-- itself.  A hash index takes keys of any length, so
-- "WHERE pipeline = $1 AND key = $2" (and a time range on top) is an index
-- scan whatever the table's size: bench/results_lookup.sh measures it.
CREATE INDEX results_key ON streamforge.results USING hash (key);

-- results_ts gains a key and a time range, and the final and epoch columns
-- (0.3.0).  window_from and window_to bound window_start from below and
-- window_end from above, inclusive; they must be whole units of the
-- pipeline's time unit (time_to_units).
DROP FUNCTION streamforge.results_ts(text);
CREATE FUNCTION streamforge.results_ts(pipeline text, for_key text DEFAULT NULL,
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
BEGIN
    PERFORM streamforge_internal.unit_us(unit, pipeline);
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
-- Timestamps end to end (issue 25 item 5; docs/outputs.md, Tables)
-- ----------------------------------------------------------------

-- For a pipeline with a time unit the outputs carry timestamps too,
-- converted as the _ts reads convert (NULL without a time unit, and
-- outside timestamptz's range): written by src/persist/sink.c with every
-- row, and by results_fill_ts for the rows copied or derived in SQL.
ALTER TABLE streamforge.changelog ADD COLUMN window_start_ts timestamptz,
    ADD COLUMN window_end_ts timestamptz;
ALTER TABLE streamforge.results ADD COLUMN window_start_ts timestamptz,
    ADD COLUMN window_end_ts timestamptz;
ALTER TABLE streamforge.late_output ADD COLUMN event_time_ts timestamptz;

-- t in units of unit as timestamptz, NULL outside timestamptz's range
CREATE FUNCTION streamforge_internal.units_to_time_or_null(t bigint, unit interval)
RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT CASE WHEN t::pg_catalog.numeric OPERATOR(pg_catalog.*)
                     streamforge_internal.unit_us(unit)::pg_catalog.numeric
                     OPERATOR(pg_catalog.>=) (0 OPERATOR(pg_catalog.-) 210866803200000000)::pg_catalog.numeric
                 AND t::pg_catalog.numeric OPERATOR(pg_catalog.*)
                     streamforge_internal.unit_us(unit)::pg_catalog.numeric
                     OPERATOR(pg_catalog.<) 9224318016000000000::pg_catalog.numeric
                THEN streamforge.units_to_time(t, unit) END;
END;

-- Fill the timestamp columns of the pipeline's rows that lack them (rows
-- copied from visible(), derived by resync_outputs or backfill, or written
-- before 0.3.0).  Internal: run as the extension's owner.
CREATE FUNCTION streamforge_internal.outputs_fill_ts(pipeline text)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    unit interval;
BEGIN
    SELECT p.time_unit INTO unit FROM streamforge.pipeline AS p
     WHERE p.name OPERATOR(pg_catalog.=) outputs_fill_ts.pipeline;
    IF unit IS NULL THEN
        RETURN;
    END IF;
    UPDATE streamforge.results AS r
       SET window_start_ts = streamforge_internal.units_to_time_or_null(r.window_start, unit),
           window_end_ts = streamforge_internal.units_to_time_or_null(r.window_end, unit)
     WHERE r.pipeline OPERATOR(pg_catalog.=) outputs_fill_ts.pipeline
       AND r.window_start_ts IS NULL;
    UPDATE streamforge.changelog AS c
       SET window_start_ts = streamforge_internal.units_to_time_or_null(c.window_start, unit),
           window_end_ts = streamforge_internal.units_to_time_or_null(c.window_end, unit)
     WHERE c.pipeline OPERATOR(pg_catalog.=) outputs_fill_ts.pipeline
       AND c.window_start_ts IS NULL;
    UPDATE streamforge.late_output AS l
       SET event_time_ts = streamforge_internal.units_to_time_or_null(l.event_time, unit)
     WHERE l.pipeline OPERATOR(pg_catalog.=) outputs_fill_ts.pipeline
       AND l.event_time_ts IS NULL;
END
$$;

REVOKE ALL ON FUNCTION streamforge_internal.units_to_time_or_null(bigint, interval),
    streamforge_internal.outputs_fill_ts(text) FROM PUBLIC;
