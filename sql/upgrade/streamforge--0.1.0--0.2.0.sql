-- streamforge 0.1.0 -> 0.2.0 (ALTER EXTENSION streamforge UPDATE TO '0.2.0')
--
-- Every storage and SQL API change of 0.2.0, applied to a database that runs
-- 0.1.0.  Each section names the change and the file of sql/install/ whose
-- definitions it brings over; after this script the extension's objects are
-- exactly those of a fresh CREATE EXTENSION at 0.2.0 (test/t/090_upgrade.pl
-- compares them), and pipelines, outputs, grants and checkpoints of 0.1.0
-- keep working.

\echo Use "ALTER EXTENSION streamforge UPDATE TO '0.2.0'" to load this file. \quit

-- ----------------------------------------------------------------
-- Outputs (sql/install/40_outputs.sql): avg in the results table,
-- results_retention, resync keeping finalized rows, trims
-- ----------------------------------------------------------------

-- The exact mean of every results row (issue 15), a generated column;
-- ALTER TABLE computes it for the rows 0.1.0 wrote.  One results table
-- holds the rows of every pipeline, so this covers them all.
ALTER TABLE streamforge.results ADD COLUMN avg numeric GENERATED ALWAYS AS
    (sum OPERATOR(pg_catalog./) NULLIF(count, 0)::numeric) STORED;

-- configure_outputs gains results_retention (issue 13): the switch is a
-- new column of output_config, false for the pipelines of 0.1.0, and the
-- functions are replaced by their six-argument versions (disable_outputs
-- calls configure_outputs, so it goes first and comes back after).
ALTER TABLE streamforge.output_config
    ADD COLUMN results_retention boolean NOT NULL DEFAULT false;

DROP FUNCTION streamforge.disable_outputs(text);
DROP FUNCTION streamforge.configure_outputs(text, boolean, boolean, boolean,
    boolean);
DROP FUNCTION streamforge.configure_outputs_internal(text, boolean, boolean,
    boolean, boolean);

CREATE FUNCTION streamforge.configure_outputs_internal(pipeline text,
    changelog boolean, results boolean, late boolean, notify boolean,
    results_retention boolean)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    old_results boolean;
BEGIN
    IF pipeline IS NULL THEN
        RAISE EXCEPTION 'pipeline must not be null' USING ERRCODE = '22004';
    END IF;
    IF changelog IS NULL OR results IS NULL OR late IS NULL OR notify IS NULL
       OR results_retention IS NULL THEN
        RAISE EXCEPTION 'output switches must not be null' USING ERRCODE = '22004';
    END IF;
    PERFORM 1 FROM streamforge.pipeline AS p
     WHERE p.name OPERATOR(pg_catalog.=) configure_outputs_internal.pipeline
       FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'pipeline "%" does not exist', pipeline
            USING ERRCODE = '42704';
    END IF;

    SELECT c.results INTO old_results FROM streamforge.output_config AS c
     WHERE c.pipeline OPERATOR(pg_catalog.=) configure_outputs_internal.pipeline;
    old_results := coalesce(old_results, false);

    IF results AND NOT old_results THEN
        DELETE FROM streamforge.results AS r
         WHERE r.pipeline OPERATOR(pg_catalog.=) configure_outputs_internal.pipeline;
        INSERT INTO streamforge.results (pipeline, window_name, key,
                window_start, window_end, count, sum, min, max, seq)
        SELECT configure_outputs_internal.pipeline, v.window_name, v.key,
               v.window_start, v.window_end, v.count, v.sum, v.min, v.max,
               NULL
          FROM streamforge.visible(configure_outputs_internal.pipeline) AS v;
    ELSIF old_results AND NOT results THEN
        DELETE FROM streamforge.results AS r
         WHERE r.pipeline OPERATOR(pg_catalog.=) configure_outputs_internal.pipeline;
    END IF;

    IF changelog OR results OR late OR notify THEN
        INSERT INTO streamforge.output_config AS c
               (pipeline, changelog, results, late, notify, results_retention)
        VALUES (configure_outputs_internal.pipeline, configure_outputs_internal.changelog,
                configure_outputs_internal.results, configure_outputs_internal.late,
                configure_outputs_internal.notify,
                configure_outputs_internal.results_retention)
        ON CONFLICT ON CONSTRAINT output_config_pkey DO UPDATE
           SET changelog = excluded.changelog, results = excluded.results,
               late = excluded.late, notify = excluded.notify,
               results_retention = excluded.results_retention,
               configured_at = pg_catalog.now();
    ELSE
        DELETE FROM streamforge.output_config AS c
         WHERE c.pipeline OPERATOR(pg_catalog.=) configure_outputs_internal.pipeline;
    END IF;

    IF results AND results_retention THEN
        PERFORM streamforge.trim_results_internal(configure_outputs_internal.pipeline);
    END IF;
END
$$;

CREATE FUNCTION streamforge.configure_outputs(pipeline text,
    changelog boolean DEFAULT true, results boolean DEFAULT true,
    late boolean DEFAULT true, notify boolean DEFAULT true,
    results_retention boolean DEFAULT false)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_configure_outputs'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION streamforge.configure_outputs(text, boolean, boolean,
    boolean, boolean, boolean) IS
'Turn the pipeline''s durable outputs (changelog, results, late output, notifications) on or off; results_retention drops final results rows older than the retention horizon. Needs admin.';

REVOKE ALL ON FUNCTION streamforge.configure_outputs_internal(text, boolean,
    boolean, boolean, boolean, boolean) FROM PUBLIC;

CREATE FUNCTION streamforge.disable_outputs(pipeline text)
RETURNS void
LANGUAGE sql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT streamforge.configure_outputs(pipeline, false, false, false, false, false);
END;

COMMENT ON FUNCTION streamforge.disable_outputs(text) IS
'Turn every output of the pipeline off (configure_outputs with every switch false). Needs admin.';

-- resync_outputs keeps the finalized results rows (issue 12) and re-applies
-- results_retention.
CREATE OR REPLACE FUNCTION streamforge.resync_outputs_internal(pipeline text)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    cfg streamforge.output_config;
    st record;
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
    SELECT * INTO cfg FROM streamforge.output_config AS c
     WHERE c.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline;
    st := streamforge.stats(pipeline);

    IF coalesce(cfg.results, false) THEN
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
                window_start, window_end, count, sum, min, max, seq)
        SELECT l.pipeline, l.window_name, l.key, l.window_start,
               l.window_end, l.count, l.sum, l.min, l.max, l.seq
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
         WHERE l.op OPERATOR(pg_catalog.=) 'upsert' AND cfg.changelog;
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
                window_start, window_end, count, sum, min, max, seq)
        SELECT resync_outputs_internal.pipeline, v.window_name, v.key, v.window_start,
               v.window_end, v.count, v.sum, v.min, v.max, NULL
          FROM streamforge.visible(resync_outputs_internal.pipeline) AS v
         WHERE NOT EXISTS (
                SELECT 1 FROM streamforge.results AS r
                 WHERE r.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
                   AND (r.window_name, r.key, r.window_start, r.window_end)
                       OPERATOR(pg_catalog.=) (v.window_name, v.key, v.window_start, v.window_end));
        -- what results_retention dropped stays dropped
        PERFORM streamforge.trim_results_internal(resync_outputs_internal.pipeline);
    END IF;
END
$$;

-- Trimming the outputs (issue 13): trim_changelog, trim_late_output,
-- trim_results and their internal functions.
CREATE FUNCTION streamforge.trim_changelog_internal(pipeline text,
    up_to_seq bigint)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n bigint;
BEGIN
    IF pipeline IS NULL OR up_to_seq IS NULL THEN
        RAISE EXCEPTION 'arguments of trim_changelog must not be null'
            USING ERRCODE = '22004';
    END IF;
    DELETE FROM streamforge.changelog AS c
     WHERE c.pipeline OPERATOR(pg_catalog.=) trim_changelog_internal.pipeline
       AND c.seq OPERATOR(pg_catalog.<=) trim_changelog_internal.up_to_seq;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;

CREATE FUNCTION streamforge.trim_late_output_internal(pipeline text,
    up_to_late_seq bigint)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n bigint;
BEGIN
    IF pipeline IS NULL OR up_to_late_seq IS NULL THEN
        RAISE EXCEPTION 'arguments of trim_late_output must not be null'
            USING ERRCODE = '22004';
    END IF;
    DELETE FROM streamforge.late_output AS l
     WHERE l.pipeline OPERATOR(pg_catalog.=) trim_late_output_internal.pipeline
       AND l.late_seq OPERATOR(pg_catalog.<=) trim_late_output_internal.up_to_late_seq;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;

-- The retention horizon H = watermark - lateness - retention of a pipeline
-- (docs/outputs.md, "Results retention"), computed exactly: NULL when the pipeline
-- has no retention, no watermark, or H is below the bigint range.  The
-- retention is read from the pipeline's row as JSON, so this works before
-- and after streamforge.pipeline gains its retention column.
CREATE FUNCTION streamforge.retention_horizon_internal(pipeline text)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    lateness bigint;
    retention bigint;
    watermark bigint;
    h numeric;
BEGIN
    SELECT p.lateness,
           (pg_catalog.to_jsonb(p) OPERATOR(pg_catalog.->>) 'retention')::bigint
      INTO lateness, retention
      FROM streamforge.pipeline AS p
     WHERE p.name OPERATOR(pg_catalog.=) retention_horizon_internal.pipeline;
    IF retention IS NULL THEN
        RETURN NULL;
    END IF;
    watermark := streamforge.watermark(pipeline);
    IF watermark IS NULL THEN
        RETURN NULL;
    END IF;
    h := watermark::numeric OPERATOR(pg_catalog.-) lateness::numeric
         OPERATOR(pg_catalog.-) retention::numeric;
    IF h OPERATOR(pg_catalog.<) (-9223372036854775808)::numeric THEN
        RETURN NULL;
    END IF;
    RETURN h::bigint;
END
$$;

-- With results_retention on (configure_outputs), delete the pipeline's
-- results rows whose window ended at or before the retention horizon:
-- they are final (H <= watermark - lateness) and hold only events the
-- pipeline has forgotten.  Returns the number of rows deleted (0 when
-- results_retention is off or there is no horizon).  The sink runs it
-- after each write call that wrote results (src/sink.c); one index range
-- per window, so it costs what it deletes.
CREATE FUNCTION streamforge.trim_results_internal(pipeline text)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    h bigint;
    names text[];
    n bigint;
BEGIN
    IF pipeline IS NULL THEN
        RAISE EXCEPTION 'pipeline must not be null' USING ERRCODE = '22004';
    END IF;
    PERFORM 1 FROM streamforge.output_config AS c
     WHERE c.pipeline OPERATOR(pg_catalog.=) trim_results_internal.pipeline
       AND c.results AND c.results_retention;
    IF NOT FOUND THEN
        RETURN 0;
    END IF;
    h := streamforge.retention_horizon_internal(pipeline);
    IF h IS NULL THEN
        RETURN 0;
    END IF;
    SELECT pg_catalog.array_agg((w).name) INTO names
      FROM streamforge.pipeline AS p, pg_catalog.unnest(p.windows) AS w
     WHERE p.name OPERATOR(pg_catalog.=) trim_results_internal.pipeline;
    DELETE FROM streamforge.results AS r
     WHERE r.pipeline OPERATOR(pg_catalog.=) trim_results_internal.pipeline
       AND r.window_name OPERATOR(pg_catalog.=) ANY (names)
       AND r.window_start OPERATOR(pg_catalog.<) h
       AND r.window_end OPERATOR(pg_catalog.<=) h;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;

REVOKE ALL ON FUNCTION streamforge.trim_changelog_internal(text, bigint),
    streamforge.trim_late_output_internal(text, bigint),
    streamforge.retention_horizon_internal(text),
    streamforge.trim_results_internal(text) FROM PUBLIC;

CREATE FUNCTION streamforge.trim_changelog(pipeline text, up_to_seq bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sf_trim_changelog'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION streamforge.trim_changelog(text, bigint) IS
'Delete the pipeline''s changelog rows with seq <= up_to_seq (consumed by every consumer); returns the number deleted. Needs admin.';

CREATE FUNCTION streamforge.trim_late_output(pipeline text,
    up_to_late_seq bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sf_trim_late_output'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION streamforge.trim_late_output(text, bigint) IS
'Delete the pipeline''s late output rows with late_seq <= up_to_late_seq; returns the number deleted. Needs admin.';

CREATE FUNCTION streamforge.trim_results(pipeline text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sf_trim_results'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION streamforge.trim_results(text) IS
'With results_retention on, delete the pipeline''s results rows whose window ended at or before the retention horizon; returns the number deleted. Needs admin.';
