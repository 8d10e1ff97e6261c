-- streamforge objects: a row of streamforge.pipeline from a dump of
-- 0.1.0-0.3.0 (issue 41, item 2; docs/persistence.md).

-- Since 0.4.0 a pipeline's definition is the one document in
-- streamforge.pipeline.definition, and the old columns (partitions ...
-- aggregates) are NULL.  A dump taken at 0.1.0-0.3.0 restores its rows
-- with those columns and without a document: this trigger builds the
-- document from them, as the update to 0.4.0 does
-- (sql/migrations/0.4.0-post.sql), and sets them to NULL.
-- jsonb_strip_nulls drops the unset options (a NULL emit is 'update')
-- and each window's parameters its kind does not take.  The loader
-- validates the document (src/persist/definition.c).
-- An interval as the codec spells it, "P<days>DT<seconds>S" (OPERATOR()
-- binds all alike, left to right: the parentheses are needed).
CREATE OR REPLACE FUNCTION streamforge_internal.legacy_interval(i interval)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN pg_catalog.format('P%sDT%sS',
    pg_catalog.date_part('day', i)::pg_catalog.int4,
    pg_catalog.trim_scale(pg_catalog."extract"('epoch', i)
        OPERATOR(pg_catalog.-) (pg_catalog."extract"('day', i)
                                OPERATOR(pg_catalog.*) 86400)));
REVOKE ALL ON FUNCTION streamforge_internal.legacy_interval(interval) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.legacy_interval(interval) IS
    'an interval as the definition document spells it (internal)';

-- The definition document of a row with the old columns: used by the
-- trigger below and by the update from 0.3.0 (sql/migrations/0.4.0-post.sql).
CREATE OR REPLACE FUNCTION streamforge_internal.legacy_definition(p streamforge.pipeline)
RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN pg_catalog.jsonb_strip_nulls(pg_catalog.jsonb_build_object(
    'aggregates', pg_catalog.to_jsonb(p.aggregates),
    'emit', p.emit,
    'idle_timeout', streamforge_internal.legacy_interval(p.idle_timeout),
    'lateness', p.lateness,
    'measures', pg_catalog.to_jsonb(p.measures),
    'out_of_orderness', p.out_of_orderness,
    'partitions', pg_catalog.to_jsonb(p.partitions),
    'retention', p.retention,
    'time_unit', streamforge_internal.legacy_interval(p.time_unit),
    'windows', (SELECT pg_catalog.jsonb_agg(pg_catalog.to_jsonb(p.windows[i]) ORDER BY i)
                  FROM pg_catalog.generate_subscripts(p.windows, 1) AS i)));
REVOKE ALL ON FUNCTION streamforge_internal.legacy_definition(streamforge.pipeline) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.legacy_definition(streamforge.pipeline) IS
    'the definition document of a pipeline row of 0.1.0-0.3.0 (internal)';

CREATE OR REPLACE FUNCTION streamforge_internal.pipeline_legacy_definition()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    NEW.definition := streamforge_internal.legacy_definition(NEW);
    NEW.partitions := NULL;
    NEW.windows := NULL;
    NEW.lateness := NULL;
    NEW.time_unit := NULL;
    NEW.retention := NULL;
    NEW.out_of_orderness := NULL;
    NEW.idle_timeout := NULL;
    NEW.emit := NULL;
    NEW.measures := NULL;
    NEW.aggregates := NULL;
    RETURN NEW;
END
$$;
REVOKE ALL ON FUNCTION streamforge_internal.pipeline_legacy_definition() FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.pipeline_legacy_definition() IS
    'builds the definition document of a pipeline row restored from a dump of 0.1.0-0.3.0 (internal)';

CREATE OR REPLACE TRIGGER pipeline_legacy_definition
    BEFORE INSERT ON streamforge.pipeline
    FOR EACH ROW WHEN (NEW.definition IS NULL)
    EXECUTE FUNCTION streamforge_internal.pipeline_legacy_definition();
