-- streamforge objects: a row of streamforge.pipeline from a dump of
-- 0.1.0-0.3.0 (issue 41, item 2; docs/persistence.md).

-- Since 0.4.0 a pipeline's definition is the one document in
-- streamforge.pipeline.definition, and the old columns (partitions ...
-- aggregates) are NULL.  A dump taken at 0.1.0-0.3.0 restores its rows
-- with those columns and without a document: this trigger builds the
-- document from them, as the update to 0.4.0 does
-- (sql/migrations/0.4.0.sql, section 4), and sets them to NULL.
-- jsonb_strip_nulls drops the unset options (a NULL emit is 'update')
-- and each window's parameters its kind does not take; an interval as
-- the codec spells it, "P<days>DT<seconds>S".  The loader validates the
-- document (src/persist/definition.c).
CREATE OR REPLACE FUNCTION streamforge_internal.pipeline_legacy_definition()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    NEW.definition := pg_catalog.jsonb_strip_nulls(pg_catalog.jsonb_build_object(
        'aggregates', pg_catalog.to_jsonb(NEW.aggregates),
        'emit', NEW.emit,
        'idle_timeout', CASE WHEN NEW.idle_timeout IS NOT NULL THEN
            pg_catalog.format('P%sDT%sS',
                pg_catalog.date_part('day', NEW.idle_timeout)::pg_catalog.int4,
                pg_catalog.trim_scale(pg_catalog."extract"('epoch', NEW.idle_timeout)
                    OPERATOR(pg_catalog.-) (pg_catalog."extract"('day', NEW.idle_timeout)
                                            OPERATOR(pg_catalog.*) 86400))) END,
        'lateness', NEW.lateness,
        'measures', pg_catalog.to_jsonb(NEW.measures),
        'out_of_orderness', NEW.out_of_orderness,
        'partitions', pg_catalog.to_jsonb(NEW.partitions),
        'retention', NEW.retention,
        'time_unit', CASE WHEN NEW.time_unit IS NOT NULL THEN
            pg_catalog.format('P%sDT%sS',
                pg_catalog.date_part('day', NEW.time_unit)::pg_catalog.int4,
                pg_catalog.trim_scale(pg_catalog."extract"('epoch', NEW.time_unit)
                    OPERATOR(pg_catalog.-) (pg_catalog."extract"('day', NEW.time_unit)
                                            OPERATOR(pg_catalog.*) 86400))) END,
        'windows', (SELECT pg_catalog.jsonb_agg(pg_catalog.to_jsonb(NEW.windows[i]) ORDER BY i)
                      FROM pg_catalog.generate_subscripts(NEW.windows, 1) AS i)));
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
