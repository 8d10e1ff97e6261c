-- streamforge objects: repairing the final rows of a measures
-- pipeline that 0.3.0 wrote with another bucket's aggregates (0.4.0,
-- issue 38 defect 1; docs/outputs.md, "restore() and the outputs").
--
-- In 0.3.0 a final change of a measures pipeline kept a pointer to its
-- bucket's aggregate state; when one call finalized a bucket and then
-- created a new one, the new bucket took that state over before the rows
-- were written, and the final row went to the changelog and the results
-- table with the new bucket's aggregates (count, sum, min and max, the
-- contract's columns, were right).  Nothing in the catalog tells such a
-- row from a right one, so resync_outputs (41_outputs_resync.sql) checks
-- every final row of a measures pipeline against the row its remembered
-- events give, and rewrites the aggregates of those that differ.

-- The final rows of pipeline (results rows marked final, changelog rows
-- of op 'final') whose aggregates are not those final_rows_aggregates
-- derives for their address and count get the derived ones; a row the
-- remembered events no longer give (below the retention horizon) stays.
-- Nothing for a pipeline that is not a measures pipeline.  Returns how
-- many rows it rewrote.  Run as the extension's owner by
-- resync_outputs_internal.
CREATE OR REPLACE FUNCTION streamforge_internal.outputs_repair_final_aggregates(pipeline text)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    uw text[];
    uk text[];
    us bigint[];
    ue bigint[];
    n bigint;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM streamforge.pipeline AS p
                    WHERE p.name OPERATOR(pg_catalog.=) outputs_repair_final_aggregates.pipeline
                      AND p.definition OPERATOR(pg_catalog.?) 'measures') THEN
        RETURN 0;
    END IF;
    SELECT pg_catalog.array_agg(a.window_name), pg_catalog.array_agg(a.key),
           pg_catalog.array_agg(a.window_start), pg_catalog.array_agg(a.window_end)
      INTO uw, uk, us, ue
      FROM (SELECT r.window_name, r.key, r.window_start, r.window_end
              FROM streamforge.results AS r
             WHERE r.pipeline OPERATOR(pg_catalog.=) outputs_repair_final_aggregates.pipeline
               AND r.final AND r.aggregates IS NOT NULL
            UNION
            SELECT c.window_name, c.key, c.window_start, c.window_end
              FROM streamforge.changelog AS c
             WHERE c.pipeline OPERATOR(pg_catalog.=) outputs_repair_final_aggregates.pipeline
               AND c.op OPERATOR(pg_catalog.=) 'final'
               AND c.aggregates IS NOT NULL) AS a;
    IF uw IS NULL THEN
        RETURN 0;
    END IF;
    WITH f AS MATERIALIZED (
        SELECT * FROM streamforge_internal.final_rows_aggregates(
            outputs_repair_final_aggregates.pipeline, uw, uk, us, ue)),
    r AS (
        UPDATE streamforge.results AS r SET aggregates = f.aggregates
          FROM f
         WHERE r.pipeline OPERATOR(pg_catalog.=) outputs_repair_final_aggregates.pipeline
           AND r.final
           AND (r.window_name, r.key, r.window_start, r.window_end, r.count)
               OPERATOR(pg_catalog.=) (f.window_name, f.key, f.window_start, f.window_end, f.count)
           AND r.aggregates IS DISTINCT FROM f.aggregates
        RETURNING 1),
    c AS (
        UPDATE streamforge.changelog AS c SET aggregates = f.aggregates
          FROM f
         WHERE c.pipeline OPERATOR(pg_catalog.=) outputs_repair_final_aggregates.pipeline
           AND c.op OPERATOR(pg_catalog.=) 'final'
           AND (c.window_name, c.key, c.window_start, c.window_end, c.count)
               OPERATOR(pg_catalog.=) (f.window_name, f.key, f.window_start, f.window_end, f.count)
           AND c.aggregates IS DISTINCT FROM f.aggregates
        RETURNING 1)
    SELECT (SELECT pg_catalog.count(*) FROM r) OPERATOR(pg_catalog.+)
           (SELECT pg_catalog.count(*) FROM c) INTO n;
    RETURN n;
END
$$;

REVOKE ALL ON FUNCTION streamforge_internal.outputs_repair_final_aggregates(text) FROM PUBLIC;

COMMENT ON FUNCTION streamforge_internal.outputs_repair_final_aggregates(text) IS
    'internal: rewrites the aggregates of the final rows of a measures pipeline that differ from those its remembered events give (rows written wrong by 0.3.0; resync_outputs)';
