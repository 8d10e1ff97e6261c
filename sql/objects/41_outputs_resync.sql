-- ----------------------------------------------------------------
-- Resynchronizing the outputs after restore() (0.2.0; final_rows 0.3.0)
-- ----------------------------------------------------------------

-- The rows the pipeline has finalized at the given addresses, as they were
-- finalized, derived from its remembered events (src/engine/final_rows.c;
-- the entry point is in src/api/outputs.c), for the addresses
-- resync_outputs_internal cannot rebuild from the changelog.
-- Internal: run by resync_outputs_internal as the extension's owner.
CREATE OR REPLACE FUNCTION streamforge_internal.final_rows(pipeline text,
    window_name text[], key text[], window_start bigint[],
    window_end bigint[])
RETURNS SETOF streamforge.result
AS 'MODULE_PATHNAME', 'sf_final_rows'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

REVOKE ALL ON FUNCTION streamforge_internal.final_rows(text, text[], text[],
    bigint[], bigint[]) FROM PUBLIC;

COMMENT ON FUNCTION streamforge_internal.final_rows(text, text[], text[],
    bigint[], bigint[]) IS
    'internal: the finalized rows at the given addresses, derived from the remembered events (resync_outputs)';

-- Bring a pipeline's outputs back in line with its state after restore()
-- replaced it.  r is the restored seq.  The changes past r are undone: every
-- address that a changelog row or a results row past r touched is reset to
-- its latest change up to r in the changelog (when the changelog is on;
-- else it is deleted).  An address with no changelog row up to r (trimmed,
-- or the changelog is off) that the restored state has finalized gets the
-- row it was finalized with instead, derived from the remembered events by
-- final_rows (0.3.0, issue 21: after a lateness raise and lower past the
-- checkpoint, such rows were lost).  Then the changelog and late output
-- rows past r and the restored late_seq are deleted (the restored pipeline
-- will emit those numbers again).  Every other results row stays,
-- including finalized rows with seq NULL (copied from visible()): they
-- were right at seq r too.  Last, the results are made to agree with
-- visible().  So on outputs that already agree nothing changes, and
-- nothing trimmed comes back.  Takes the pipeline's row lock like
-- configure_outputs.  Needs the admin privilege, checked the same way as
-- configure_outputs' (resync_outputs_internal runs as the owner).
CREATE OR REPLACE FUNCTION streamforge_internal.resync_outputs_internal(pipeline text)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    cfg streamforge.output_config;
    st record;
    uw text[];
    uk text[];
    us bigint[];
    ue bigint[];
    ep bigint;
    top_before jsonb;
    typed boolean;
BEGIN
    IF pipeline IS NULL THEN
        RAISE EXCEPTION 'pipeline must not be null' USING ERRCODE = '22004';
    END IF;
    PERFORM 1 FROM streamforge.pipeline AS p
     WHERE p.name OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
       FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'pipeline "%" does not exist', pipeline
            USING ERRCODE = '42704';
    END IF;
    -- (0.4.0, issue 44) an aggregate's top-N before (67_aggregates_top.sql)
    top_before := streamforge_internal.aggregate_top_snapshot(resync_outputs_internal.pipeline, NULL);
    -- (0.4.0) an aggregate's rows, here in streamforge.results' shape
    -- until the end (66_aggregates_results.sql)
    typed := streamforge_internal.aggregate_results_unpack(resync_outputs_internal.pipeline);
    SELECT * INTO cfg FROM streamforge.output_config AS c
     WHERE c.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline;
    st := streamforge.stats(pipeline);
    -- (0.3.0) a new epoch: the seq numbers past the restored seq will be
    -- emitted again; the rows rebuilt below are written in it
    UPDATE streamforge.output_config AS c
       SET epoch = pg_catalog.nextval('streamforge.output_epoch_seq'::pg_catalog.regclass)
     WHERE c.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
    RETURNING c.epoch INTO ep;

    IF coalesce(cfg.results, false) THEN
        -- the addresses to undo that the changelog has nothing for up to r
        -- (trimmed, or the changelog is off)
        SELECT pg_catalog.array_agg(u.window_name), pg_catalog.array_agg(u.key),
               pg_catalog.array_agg(u.window_start), pg_catalog.array_agg(u.window_end)
          INTO uw, uk, us, ue
          FROM (SELECT c.window_name, c.key, c.window_start, c.window_end
                  FROM streamforge.changelog AS c
                 WHERE c.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
                   AND c.seq OPERATOR(pg_catalog.>) st.changes_emitted
                UNION
                SELECT r.window_name, r.key, r.window_start, r.window_end
                  FROM streamforge.results AS r
                 WHERE r.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
                   AND r.seq OPERATOR(pg_catalog.>) st.changes_emitted) AS u
         WHERE NOT cfg.changelog OR NOT EXISTS (
                SELECT 1 FROM streamforge.changelog AS c
                 WHERE c.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
                   AND (c.window_name, c.key, c.window_start, c.window_end)
                       OPERATOR(pg_catalog.=) (u.window_name, u.key, u.window_start, u.window_end)
                   AND c.seq OPERATOR(pg_catalog.<=) st.changes_emitted);

        WITH undone AS (
            SELECT c.window_name, c.key, c.window_start, c.window_end
              FROM streamforge.changelog AS c
             WHERE c.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
               AND c.seq OPERATOR(pg_catalog.>) st.changes_emitted
            UNION
            SELECT r.window_name, r.key, r.window_start, r.window_end
              FROM streamforge.results AS r
             WHERE r.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
               AND r.seq OPERATOR(pg_catalog.>) st.changes_emitted),
        gone AS (
            DELETE FROM streamforge.results AS r
             USING undone AS u
             WHERE r.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
               AND (r.window_name, r.key, r.window_start, r.window_end)
                   OPERATOR(pg_catalog.=) (u.window_name, u.key, u.window_start, u.window_end))
        INSERT INTO streamforge.results (pipeline, window_name, key,
                window_start, window_end, count, sum, min, max, seq, final, epoch,
                aggregates)
        SELECT l.pipeline, l.window_name, l.key, l.window_start,
               l.window_end, l.count, l.sum, l.min, l.max, l.seq,
               l.op OPERATOR(pg_catalog.=) 'final', l.epoch, l.aggregates
          FROM (SELECT DISTINCT ON (c.window_name, c.key, c.window_start,
                                    c.window_end) c.*
                  FROM streamforge.changelog AS c
                  JOIN undone AS u
                    ON (c.window_name, c.key, c.window_start, c.window_end)
                       OPERATOR(pg_catalog.=) (u.window_name, u.key, u.window_start, u.window_end)
                 WHERE c.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
                   AND c.seq OPERATOR(pg_catalog.<=) st.changes_emitted
                 ORDER BY c.window_name, c.key, c.window_start,
                          c.window_end, c.seq DESC) AS l
         WHERE l.op OPERATOR(pg_catalog.<>) 'retract' AND cfg.changelog;

        -- no changelog row up to r: a finalized address gets the row it
        -- was finalized with; the others are visible() rows (below) or
        -- did not exist at r
        INSERT INTO streamforge.results (pipeline, window_name, key,
                window_start, window_end, count, sum, min, max, seq, final, epoch)
        SELECT resync_outputs_internal.pipeline, f.window_name, f.key,
               f.window_start, f.window_end, f.count, f.sum, f.min, f.max, NULL,
               true, ep
          FROM streamforge_internal.final_rows(resync_outputs_internal.pipeline,
                                               uw, uk, us, ue) AS f
         WHERE NOT EXISTS (
                SELECT 1 FROM streamforge.results AS r
                 WHERE r.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
                   AND (r.window_name, r.key, r.window_start, r.window_end)
                       OPERATOR(pg_catalog.=) (f.window_name, f.key, f.window_start, f.window_end));
    END IF;

    DELETE FROM streamforge.changelog AS c
     WHERE c.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
       AND c.seq OPERATOR(pg_catalog.>) st.changes_emitted;
    DELETE FROM streamforge.late_output AS l
     WHERE l.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
       AND l.late_seq OPERATOR(pg_catalog.>) st.late_events;

    IF coalesce(cfg.results, false) THEN
        -- visible() is the truth for the rows it shows
        DELETE FROM streamforge.results AS r
         USING streamforge.visible(resync_outputs_internal.pipeline) AS v
         WHERE r.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
           AND (r.window_name, r.key, r.window_start, r.window_end)
               OPERATOR(pg_catalog.=) (v.window_name, v.key, v.window_start, v.window_end)
           AND (r.count, r.sum, r.min, r.max)
               IS DISTINCT FROM (v.count, v.sum, v.min, v.max);
        INSERT INTO streamforge.results (pipeline, window_name, key,
                window_start, window_end, count, sum, min, max, seq, epoch)
        SELECT resync_outputs_internal.pipeline, v.window_name, v.key, v.window_start,
               v.window_end, v.count, v.sum, v.min, v.max, NULL, ep
          FROM streamforge.visible(resync_outputs_internal.pipeline) AS v
         WHERE NOT EXISTS (
                SELECT 1 FROM streamforge.results AS r
                 WHERE r.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
                   AND (r.window_name, r.key, r.window_start, r.window_end)
                       OPERATOR(pg_catalog.=) (v.window_name, v.key, v.window_start, v.window_end));
        -- what results_retention dropped stays dropped
        PERFORM streamforge_internal.trim_results_internal(resync_outputs_internal.pipeline);
        -- (0.3.0) a row finalized after the checkpoint that no change
        -- past it touched (in 'update' mode finalization writes no change)
        -- is not final in the restored state
        UPDATE streamforge.results AS r SET final = false
         WHERE r.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
           AND r.final
           AND (streamforge.watermark(resync_outputs_internal.pipeline) IS NULL
                OR r.window_end::pg_catalog.numeric OPERATOR(pg_catalog.+)
                   (SELECT (p.definition OPERATOR(pg_catalog.->>) 'lateness')::pg_catalog.int8 FROM streamforge.pipeline AS p
                     WHERE p.name OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline)
                   OPERATOR(pg_catalog.>=) streamforge.watermark(resync_outputs_internal.pipeline));
        -- (0.3.0) the rows the restored state has finalized are final
        UPDATE streamforge.results AS r SET final = true
         WHERE r.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
           AND NOT r.final
           AND r.window_end::pg_catalog.numeric OPERATOR(pg_catalog.+)
               (SELECT (p.definition OPERATOR(pg_catalog.->>) 'lateness')::pg_catalog.int8 FROM streamforge.pipeline AS p
                 WHERE p.name OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline)
               OPERATOR(pg_catalog.<) streamforge.watermark(resync_outputs_internal.pipeline);
    END IF;

    -- (0.3.0) the timestamps of the rows rebuilt here
    IF coalesce(cfg.results, false) THEN
        PERFORM streamforge_internal.outputs_fill_ts(resync_outputs_internal.pipeline);
        -- (issue 27) a measures pipeline's aggregates, 86_outputs_aggregates.sql
        PERFORM streamforge_internal.outputs_fill_aggregates(resync_outputs_internal.pipeline);
        -- (0.4.0, issue 38) final rows 0.3.0 wrote with another bucket's
        -- aggregates, 87_outputs_repair.sql
        PERFORM streamforge_internal.outputs_repair_final_aggregates(resync_outputs_internal.pipeline);
        IF typed THEN
            PERFORM streamforge_internal.aggregate_results_pack(resync_outputs_internal.pipeline);
        END IF;
        -- (0.4.0, issue 44) the top-N's changes: from before to now
        IF top_before <> '[]' THEN
            PERFORM streamforge_internal.aggregate_top_apply(resync_outputs_internal.pipeline,
                                                             NULL, top_before);
        END IF;
    END IF;
    -- (0.3.0) one notification of the new epoch
    IF coalesce(cfg.notify, false) THEN
        PERFORM streamforge_internal.notify_changes(resync_outputs_internal.pipeline);
    END IF;
END
$$;


REVOKE ALL ON FUNCTION streamforge_internal.resync_outputs_internal(text) FROM PUBLIC;
