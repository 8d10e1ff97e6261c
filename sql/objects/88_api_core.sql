-- streamforge install script: the forms of the write and read cores that
-- 0.3.0 had for one kind of pipeline only (issue 41, item 3;
-- docs/ingestion.md, docs/aggregates.md).  New in 0.4.0: the update
-- template includes this piece.
--
-- Each C function is a form of the write core (src/api/write.c): the same
-- checks, order of errors, journal, outputs and privileges as its
-- one-measure twin, with measures bigint[] instead of value bigint and
-- streamforge.measures_change rows.  The _ts functions are written as
-- ingest_ts, append_ts, live_ts and visible_ts are (60_ingest.sql): the
-- pipeline's time unit (read privilege), then the bigint form.  Their
-- comments are in 98_comments.sql.

CREATE OR REPLACE FUNCTION streamforge.append_measures(pipeline text, partition text,
    event_id text, key text, event_time bigint, measures bigint[])
RETURNS SETOF streamforge.measures_change
AS 'MODULE_PATHNAME', 'sf_append_measures'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 2;

CREATE OR REPLACE FUNCTION streamforge.ingest_measures_count(pipeline text,
    partition text, source_offset bigint, event_id text, key text,
    event_time bigint, measures bigint[])
RETURNS integer
AS 'MODULE_PATHNAME', 'sf_ingest_measures_count'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION streamforge.ingest_measures_json(pipeline text,
    deliveries jsonb)
RETURNS SETOF streamforge.measures_change
AS 'MODULE_PATHNAME', 'sf_ingest_measures_json'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION streamforge.ingest_measures_ts(pipeline text, partition text,
    source_offset bigint, event_id text, key text, event_time timestamptz,
    measures bigint[])
RETURNS SETOF streamforge.measures_change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE ROWS 2
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    unit interval := streamforge.time_unit(pipeline);
BEGIN
    PERFORM streamforge_internal.unit_us(unit, pipeline);
    RETURN QUERY SELECT * FROM streamforge.ingest_measures(pipeline,
        partition, source_offset, event_id, key,
        streamforge.time_to_units(event_time, unit), measures);
END
$$;

CREATE OR REPLACE FUNCTION streamforge.append_measures_ts(pipeline text, partition text,
    event_id text, key text, event_time timestamptz, measures bigint[])
RETURNS SETOF streamforge.measures_change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE ROWS 2
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    unit interval := streamforge.time_unit(pipeline);
BEGIN
    PERFORM streamforge_internal.unit_us(unit, pipeline);
    RETURN QUERY SELECT * FROM streamforge.append_measures(pipeline,
        partition, event_id, key,
        streamforge.time_to_units(event_time, unit), measures);
END
$$;

CREATE OR REPLACE FUNCTION streamforge.live_aggregates_ts(pipeline text)
RETURNS TABLE (window_name text, key text, window_start timestamptz,
               window_end timestamptz, count bigint, aggregates jsonb)
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
        r.count, r.aggregates
      FROM streamforge.live_aggregates(pipeline) AS r;
END
$$;

CREATE OR REPLACE FUNCTION streamforge.visible_aggregates_ts(pipeline text)
RETURNS TABLE (window_name text, key text, window_start timestamptz,
               window_end timestamptz, count bigint, aggregates jsonb)
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
        r.count, r.aggregates
      FROM streamforge.visible_aggregates(pipeline) AS r;
END
$$;
