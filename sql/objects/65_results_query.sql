-- streamforge objects: results you can query (0.3.0, issue 25
-- item 6; docs/outputs.md, Reading the results).
--
-- results_address serves the sink's lookups of one address (its md5(key)
-- lets keys of any length fit); a lookup by key needs an index on the key
-- itself.  A hash index takes keys of any length, so
-- "WHERE pipeline = $1 AND key = $2" (and a time range on top) is an index
-- scan whatever the table's size: bench/results_lookup.sh measures it.
-- (The index results_key is in sql/schema/20_tables.sql.)

-- (results_ts, with a key and a time range: 60_ingest.sql.)

-- ----------------------------------------------------------------
-- Timestamps end to end (issue 25 item 5; docs/outputs.md, Tables)
-- ----------------------------------------------------------------

-- For a pipeline with a time unit the outputs carry timestamps too,
-- converted as the _ts reads convert (NULL without a time unit, and
-- outside timestamptz's range): written by src/persist/sink.c with every
-- row, and by results_fill_ts for the rows copied or derived in SQL.
-- (The columns window_start_ts, window_end_ts and event_time_ts are in
-- sql/schema/20_tables.sql.)

-- t in units of unit as timestamptz, NULL outside timestamptz's range
CREATE OR REPLACE FUNCTION streamforge_internal.units_to_time_or_null(t bigint, unit interval)
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
CREATE OR REPLACE FUNCTION streamforge_internal.outputs_fill_ts(pipeline text)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    unit interval;
BEGIN
    SELECT (p.definition OPERATOR(pg_catalog.->>) 'time_unit')::pg_catalog.interval INTO unit
      FROM streamforge.pipeline AS p
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
