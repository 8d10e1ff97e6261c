-- streamforge objects: the defining query of a pipeline
-- for the view of every pipeline (docs/management.md, 85_metrics.sql).

-- ----------------------------------------------------------------
-- The pipelines, in one view
-- ----------------------------------------------------------------

-- The defining query of a pipeline made by create_aggregate (NULL for
-- others), for pipeline_info; plpgsql, so that the update from 0.2.0 can create it
-- before streamforge.aggregates (65_aggregates.sql, issue 29) exists.
CREATE OR REPLACE FUNCTION streamforge_internal.pipeline_query(pipeline text)
RETURNS text
LANGUAGE plpgsql STABLE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN (SELECT a.query FROM streamforge.aggregates AS a WHERE a.name = pipeline);
END
$$;
COMMENT ON FUNCTION streamforge_internal.pipeline_query(text) IS
    'the query of an aggregate, NULL for another pipeline (internal helper of pipeline_info)';

-- The view itself, pipeline_info, is in 85_metrics.sql: its last columns
-- come from partition_progress (72_progress.sql).
