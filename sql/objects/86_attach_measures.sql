-- streamforge objects: attached tables feeding a measures pipeline
-- (0.3.0, issue 29; docs/ingestion.md, docs/sql-aggregates.md).
--
-- append_measures_batch is to ingest_measures_batch what append_batch is
-- to ingest_batch: each delivery takes its partition's next offset (its
-- source_offset is ignored and may be NULL).  The insert trigger of an
-- attachment made with attach(..., measures => ARRAY[...]) calls it
-- (62_attach.sql).

CREATE OR REPLACE FUNCTION streamforge.append_measures_batch(pipeline text,
    deliveries streamforge.measures_delivery[])
RETURNS SETOF streamforge.measures_change
AS 'MODULE_PATHNAME', 'sf_append_measures_batch'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge.append_measures_batch(text, streamforge.measures_delivery[]) IS
    'delivers the events of a measures pipeline at their partitions'' next offsets, in array order, all or none';

-- The number of measures of the pipeline named pipeline, NULL for a
-- one-measure pipeline or none: attach() checks its measures against it.
-- Runs as the extension's owner, which may read streamforge.pipeline; like
-- ids (pipeline_id, 62_attach.sql), a count of measures is no secret.
CREATE OR REPLACE FUNCTION streamforge_internal.pipeline_nmeasures(pipeline text)
RETURNS integer
LANGUAGE sql STABLE STRICT PARALLEL SAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
RETURN (SELECT pg_catalog.jsonb_array_length(p.definition OPERATOR(pg_catalog.->) 'measures')::pg_catalog.int4
          FROM streamforge.pipeline AS p
         WHERE p.name OPERATOR(pg_catalog.=) pipeline);
COMMENT ON FUNCTION streamforge_internal.pipeline_nmeasures(text) IS
    'the number of measures of a pipeline, NULL for a one-measure pipeline (internal helper of attachments)';
