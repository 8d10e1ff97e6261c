-- streamforge objects: the aggregates of the results rows that the
-- outputs' SQL writes for a measures pipeline (0.3.0, issue 27 item 3;
-- docs/aggregates.md, Outputs).
--
-- The sink fills results.aggregates for the rows the changes write.  The
-- rows configure_outputs copies from visible() (40_outputs.sql), those its
-- backfill derives (45_emit.sql) and those resync_outputs rebuilds
-- (41_outputs_resync.sql) are written with the contract's columns;
-- outputs_fill_aggregates, which those functions run last, fills their
-- aggregates.  Every object here is new in 0.3.0.

-- The finalized rows at the given addresses with their aggregates
-- (src/api/outputs_aggregates.c; final_rows with the aggregates jsonb).
-- Internal: run by outputs_fill_aggregates as the extension's owner.
CREATE OR REPLACE FUNCTION streamforge_internal.final_rows_aggregates(pipeline text,
    window_name text[], key text[], window_start bigint[],
    window_end bigint[])
RETURNS SETOF streamforge.measures_result
AS 'MODULE_PATHNAME', 'sf_final_rows_aggregates'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

REVOKE ALL ON FUNCTION streamforge_internal.final_rows_aggregates(text,
    text[], text[], bigint[], bigint[]) FROM PUBLIC;

COMMENT ON FUNCTION streamforge_internal.final_rows_aggregates(text, text[],
    text[], bigint[], bigint[]) IS
    'internal: the finalized rows of a measures pipeline at the given addresses with their aggregates, derived from the remembered events';

-- Fill the aggregates of the pipeline's results rows that have none, for a
-- measures pipeline (nothing for another): a row that visible() shows gets
-- visible_aggregates()'s, a finalized row the one its remembered events
-- give.  A row neither gives keeps NULL: a finalized row whose window
-- starts below the retention horizon (its events are forgotten).  Run as
-- the extension's owner by configure_outputs_backfill and
-- resync_outputs_internal, after they wrote the rows.
CREATE OR REPLACE FUNCTION streamforge_internal.outputs_fill_aggregates(pipeline text)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    uw text[];
    uk text[];
    us bigint[];
    ue bigint[];
BEGIN
    IF NOT EXISTS (SELECT 1 FROM streamforge.pipeline AS p
                    WHERE p.name OPERATOR(pg_catalog.=) outputs_fill_aggregates.pipeline
                      AND p.definition OPERATOR(pg_catalog.?) 'measures')
       OR NOT EXISTS (SELECT 1 FROM streamforge.results AS r
                       WHERE r.pipeline OPERATOR(pg_catalog.=) outputs_fill_aggregates.pipeline
                         AND r.aggregates IS NULL) THEN
        RETURN;
    END IF;
    UPDATE streamforge.results AS r SET aggregates = v.aggregates
      FROM streamforge.visible_aggregates(outputs_fill_aggregates.pipeline) AS v
     WHERE r.pipeline OPERATOR(pg_catalog.=) outputs_fill_aggregates.pipeline
       AND r.aggregates IS NULL
       AND (r.window_name, r.key, r.window_start, r.window_end, r.count)
           OPERATOR(pg_catalog.=) (v.window_name, v.key, v.window_start, v.window_end, v.count);

    SELECT pg_catalog.array_agg(r.window_name), pg_catalog.array_agg(r.key),
           pg_catalog.array_agg(r.window_start), pg_catalog.array_agg(r.window_end)
      INTO uw, uk, us, ue
      FROM streamforge.results AS r
     WHERE r.pipeline OPERATOR(pg_catalog.=) outputs_fill_aggregates.pipeline
       AND r.aggregates IS NULL;
    IF uw IS NULL THEN
        RETURN;
    END IF;
    UPDATE streamforge.results AS r SET aggregates = f.aggregates
      FROM streamforge_internal.final_rows_aggregates(outputs_fill_aggregates.pipeline,
                                                      uw, uk, us, ue) AS f
     WHERE r.pipeline OPERATOR(pg_catalog.=) outputs_fill_aggregates.pipeline
       AND r.aggregates IS NULL
       AND (r.window_name, r.key, r.window_start, r.window_end, r.count)
           OPERATOR(pg_catalog.=) (f.window_name, f.key, f.window_start, f.window_end, f.count);
END
$$;

REVOKE ALL ON FUNCTION streamforge_internal.outputs_fill_aggregates(text) FROM PUBLIC;

COMMENT ON FUNCTION streamforge_internal.outputs_fill_aggregates(text) IS
    'internal: fills the aggregates of the results rows of a measures pipeline that have none (copied, backfilled or resynchronized rows)';
