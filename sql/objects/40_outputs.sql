-- streamforge objects: durable outputs and scheduling.
--
-- Outputs are opt-in per pipeline (configure_outputs).  src/persist/sink.c writes
-- them in the transaction of every write call (ingest, ingest_batch,
-- advance, mark_idle), right after the call's journal entry, so they commit
-- and roll back with the pipeline's state.  See docs/outputs.md.
--
-- Every row names its pipeline; the foreign keys drop a pipeline's outputs
-- with the pipeline.  The tables are configuration tables (pg_dump keeps
-- them).  Privileges (50_security.sql, docs/security.md): nobody but their
-- owner, the extension's owner, may write them; sink.c writes them as that
-- owner once the caller's privilege on the pipeline is checked.  Other
-- roles may read the rows of the pipelines they may read.

-- The tables (output_config, changelog, results, late_output) are in
-- sql/schema/20_tables.sql; their privileges and policies in
-- 50_security.sql.

-- Any change to output_config (including the cascade from a dropped
-- pipeline) invalidates every backend's cached copy at commit.
CREATE OR REPLACE FUNCTION streamforge_internal.output_config_changed()
RETURNS trigger
AS 'MODULE_PATHNAME', 'sf_output_config_changed'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE TRIGGER output_config_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON streamforge.output_config
    FOR EACH STATEMENT EXECUTE FUNCTION streamforge_internal.output_config_changed();

-- ----------------------------------------------------------------
-- Configuration
-- ----------------------------------------------------------------

-- Turn a pipeline's outputs on or off.  Takes the pipeline's row lock, so
-- it waits for write calls in progress and write calls wait for it.
-- Enabling results copies visible() into the results table (rows finalized
-- before that are not known any more); disabling results deletes the
-- pipeline's rows, since they would no longer be kept up to date.  The
-- changelog and the late output keep their rows when disabled.
-- results_retention (0.2.0) drops the final results rows older than the
-- pipeline's retention horizon (trim_results_internal below).
--
-- Needs the admin privilege on the pipeline.  configure_outputs() checks it
-- as the caller and then runs configure_outputs_internal() as the
-- extension's owner (src/persist/acl.c), which may write the tables; nobody else
-- may call the internal function.
CREATE OR REPLACE FUNCTION streamforge_internal.configure_outputs_internal(pipeline text,
    changelog boolean, results boolean, late boolean, notify boolean,
    results_retention boolean)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    old_results boolean;
    typed boolean;
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
    -- (0.4.0) an aggregate's rows, here in streamforge.results' shape
    -- until the end (66_aggregates_results.sql)
    typed := streamforge_internal.aggregate_results_unpack(configure_outputs_internal.pipeline);

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

    IF typed THEN
        -- the rows copied from visible() have no aggregates yet: filled
        -- before they are typed (86_outputs_aggregates.sql)
        IF results THEN
            PERFORM streamforge_internal.outputs_fill_aggregates(configure_outputs_internal.pipeline);
        END IF;
        PERFORM streamforge_internal.aggregate_results_pack(configure_outputs_internal.pipeline);
    END IF;
    IF results AND results_retention THEN
        -- (0.4.0) with an aggregate's top-N's deletes (67_aggregates_top.sql)
        PERFORM streamforge_internal.aggregate_top_trim(configure_outputs_internal.pipeline);
    END IF;
END
$$;

-- backfill (0.3.0): add the rows finalized before, from the remembered
-- events (configure_outputs_backfill, 45_emit.sql).
CREATE OR REPLACE FUNCTION streamforge.configure_outputs(pipeline text,
    changelog boolean DEFAULT true, results boolean DEFAULT true,
    late boolean DEFAULT true, notify boolean DEFAULT true,
    results_retention boolean DEFAULT false, backfill boolean DEFAULT false)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_configure_outputs'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION streamforge.configure_outputs(text, boolean, boolean,
    boolean, boolean, boolean, boolean) IS
'Turn the pipeline''s durable outputs (changelog, results, late output, notifications) on or off; results_retention drops final results rows older than the retention horizon; backfill adds the rows finalized before, from the remembered events. Needs admin.';

REVOKE ALL ON FUNCTION streamforge_internal.configure_outputs_internal(text, boolean,
    boolean, boolean, boolean, boolean) FROM PUBLIC;

-- All outputs off: configure_outputs with every switch false.
CREATE OR REPLACE FUNCTION streamforge.disable_outputs(pipeline text)
RETURNS void
LANGUAGE sql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT streamforge.configure_outputs(pipeline, false, false, false, false, false);
END;

COMMENT ON FUNCTION streamforge.disable_outputs(text) IS
'Turn every output of the pipeline off (configure_outputs with every switch false). Needs admin.';

-- resync_outputs_internal, the body of resync_outputs(), is in
-- 41_outputs_resync.sql.

CREATE OR REPLACE FUNCTION streamforge.resync_outputs(pipeline text)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_resync_outputs'
LANGUAGE C VOLATILE PARALLEL UNSAFE;


-- ----------------------------------------------------------------
-- Trimming the outputs (0.2.0)
-- ----------------------------------------------------------------

-- The changelog and the late output grow until consumers trim what they
-- have consumed: trim_changelog deletes the rows with seq <= up_to_seq,
-- trim_late_output those with late_seq <= up_to_late_seq; each returns the
-- number of rows deleted.  Trimmed rows are gone for every consumer, so a
-- trim needs the admin privilege (a role that may only read cannot destroy
-- rows other consumers still need).  Nothing brings trimmed rows back:
-- write calls append only new numbers, and resync_outputs (so restore)
-- only deletes from these two tables.  The internal functions run as the
-- extension's owner once the C wrappers (src/api/outputs.c) checked admin.
-- Trims keep what the slowest registered consumer still needs: with a
-- bound, they trim at most up to it; without one (NULL), exactly up to it
-- (nothing without consumers; 0.3.0, 55_consumers.sql).
CREATE OR REPLACE FUNCTION streamforge_internal.trim_changelog_internal(pipeline text,
    up_to_seq bigint)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n bigint;
    slowest bigint;
BEGIN
    IF pipeline IS NULL THEN
        RAISE EXCEPTION 'arguments of trim_changelog must not be null'
            USING ERRCODE = '22004';
    END IF;
    SELECT pg_catalog.min(c.seq) INTO slowest FROM streamforge.consumer AS c
     WHERE c.pipeline OPERATOR(pg_catalog.=) trim_changelog_internal.pipeline;
    -- (0.3.0) no bound given: up to the slowest consumer, nothing without one
    IF up_to_seq IS NULL THEN
        IF slowest IS NULL THEN
            RETURN 0;
        END IF;
        up_to_seq := slowest;
    END IF;
    DELETE FROM streamforge.changelog AS c
     WHERE c.pipeline OPERATOR(pg_catalog.=) trim_changelog_internal.pipeline
       AND c.seq OPERATOR(pg_catalog.<=) trim_changelog_internal.up_to_seq
       AND (slowest IS NULL OR c.seq OPERATOR(pg_catalog.<=) slowest);
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;

CREATE OR REPLACE FUNCTION streamforge_internal.trim_late_output_internal(pipeline text,
    up_to_late_seq bigint)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n bigint;
    slowest bigint;
BEGIN
    IF pipeline IS NULL THEN
        RAISE EXCEPTION 'arguments of trim_late_output must not be null'
            USING ERRCODE = '22004';
    END IF;
    SELECT pg_catalog.min(c.late_seq) INTO slowest FROM streamforge.consumer AS c
     WHERE c.pipeline OPERATOR(pg_catalog.=) trim_late_output_internal.pipeline;
    -- (0.3.0) no bound given: up to the slowest consumer, nothing without one
    IF up_to_late_seq IS NULL THEN
        IF slowest IS NULL THEN
            RETURN 0;
        END IF;
        up_to_late_seq := slowest;
    END IF;
    DELETE FROM streamforge.late_output AS l
     WHERE l.pipeline OPERATOR(pg_catalog.=) trim_late_output_internal.pipeline
       AND l.late_seq OPERATOR(pg_catalog.<=) trim_late_output_internal.up_to_late_seq
       AND (slowest IS NULL OR l.late_seq OPERATOR(pg_catalog.<=) slowest);
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;

-- The retention horizon H = watermark - lateness - retention of a pipeline
-- (docs/outputs.md, "Results retention"), computed exactly: NULL when the pipeline
-- has no retention, no watermark, or H is below the bigint range.  The
-- lateness and retention are read from the pipeline's definition document
-- (streamforge.pipeline.definition; reading the whole row as JSON would
-- detoast the pipeline's snapshot on every call).
CREATE OR REPLACE FUNCTION streamforge_internal.retention_horizon_internal(pipeline text)
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
    SELECT (p.definition OPERATOR(pg_catalog.->>) 'lateness')::pg_catalog.int8,
           (p.definition OPERATOR(pg_catalog.->>) 'retention')::pg_catalog.int8
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
-- after each write call that wrote results (src/persist/sink.c); one index range
-- per window, so it costs what it deletes.
CREATE OR REPLACE FUNCTION streamforge_internal.trim_results_internal(pipeline text)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    h bigint;
    names text[];
    n bigint;
    m bigint;
    rid bigint;
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
    h := streamforge_internal.retention_horizon_internal(pipeline);
    IF h IS NULL THEN
        RETURN 0;
    END IF;
    SELECT pg_catalog.array_agg(w.e OPERATOR(pg_catalog.->>) 'name') INTO names
      FROM streamforge.pipeline AS p,
           pg_catalog.jsonb_array_elements(p.definition OPERATOR(pg_catalog.->) 'windows') AS w(e)
     WHERE p.name OPERATOR(pg_catalog.=) trim_results_internal.pipeline;
    DELETE FROM streamforge.results AS r
     WHERE r.pipeline OPERATOR(pg_catalog.=) trim_results_internal.pipeline
       AND r.window_name OPERATOR(pg_catalog.=) ANY (names)
       AND r.window_start OPERATOR(pg_catalog.<) h
       AND r.window_end OPERATOR(pg_catalog.<=) h;
    GET DIAGNOSTICS n = ROW_COUNT;
    -- (0.4.0) an aggregate's table (66_aggregates_views.sql)
    SELECT g.results_id INTO rid FROM streamforge.aggregate AS g
     WHERE g.name OPERATOR(pg_catalog.=) trim_results_internal.pipeline;
    IF rid IS NOT NULL THEN
        EXECUTE format('DELETE FROM %s AS r WHERE r.start_u OPERATOR(pg_catalog.<) $1 '
                       'AND r.end_u OPERATOR(pg_catalog.<=) $1',
                       streamforge_internal.aggregate_results_table(rid)) USING h;
        GET DIAGNOSTICS m = ROW_COUNT;
        n := n + m;
    END IF;
    RETURN n;
END
$$;

REVOKE ALL ON FUNCTION streamforge_internal.trim_changelog_internal(text, bigint),
    streamforge_internal.trim_late_output_internal(text, bigint),
    streamforge_internal.retention_horizon_internal(text),
    streamforge_internal.trim_results_internal(text) FROM PUBLIC;

-- The bound is optional (0.3.0): without it (or NULL), up to the slowest
-- registered consumer.
CREATE OR REPLACE FUNCTION streamforge.trim_changelog(pipeline text,
    up_to_seq bigint DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sf_trim_changelog'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION streamforge.trim_changelog(text, bigint) IS
'Delete the pipeline''s changelog rows with seq <= up_to_seq (consumed by every consumer); returns the number deleted. Needs admin.';

CREATE OR REPLACE FUNCTION streamforge.trim_late_output(pipeline text,
    up_to_late_seq bigint DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sf_trim_late_output'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION streamforge.trim_late_output(text, bigint) IS
'Delete the pipeline''s late output rows with late_seq <= up_to_late_seq; returns the number deleted. Needs admin.';

CREATE OR REPLACE FUNCTION streamforge.trim_results(pipeline text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sf_trim_results'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION streamforge.trim_results(text) IS
'With results_retention on, delete the pipeline''s results rows whose window ended at or before the retention horizon; returns the number deleted. Needs admin.';

-- ----------------------------------------------------------------
-- Progress from the wall clock
-- ----------------------------------------------------------------

-- clock_timestamp() as a count of units since the Unix epoch, rounded down.
-- unit: 'us', 'ms', 's' or 'min'.
CREATE OR REPLACE FUNCTION streamforge.clock_now(unit text DEFAULT 'ms')
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    per_second numeric;
BEGIN
    per_second := CASE unit
        WHEN 'us' THEN 1000000
        WHEN 'ms' THEN 1000
        WHEN 's' THEN 1
        WHEN 'min' THEN 1.0 / 60
    END;
    IF unit IS NULL THEN
        RAISE EXCEPTION 'unit must not be null' USING ERRCODE = '22004';
    ELSIF per_second IS NULL THEN
        RAISE EXCEPTION 'unknown time unit "%"', unit
            USING ERRCODE = '22023',
                  HINT = 'The unit must be one of us, ms, s, min.';
    END IF;
    RETURN floor(extract(epoch FROM clock_timestamp()) * per_second)::bigint;
END
$$;

-- Report progress clock_now(unit) - delay for a partition: the call an
-- application (or a pg_cron job) makes when event times are wall-clock
-- times and no event is expected more than delay units behind the clock.
CREATE OR REPLACE FUNCTION streamforge.advance_to_now(pipeline text, partition text,
    delay bigint DEFAULT 0, unit text DEFAULT 'ms')
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF pipeline IS NULL THEN
        RAISE EXCEPTION 'pipeline must not be null' USING ERRCODE = '22004';
    ELSIF partition IS NULL THEN
        RAISE EXCEPTION 'partition must not be null' USING ERRCODE = '22004';
    ELSIF delay IS NULL THEN
        RAISE EXCEPTION 'delay must not be null' USING ERRCODE = '22004';
    ELSIF delay < 0 THEN
        RAISE EXCEPTION 'delay must not be negative'
            USING ERRCODE = '22023',
                  DETAIL = format('The delay given is %s.', delay);
    END IF;
    RETURN QUERY
        SELECT * FROM streamforge.advance(pipeline, partition,
                                          streamforge.clock_now(unit) - delay);
END
$$;

-- ----------------------------------------------------------------
-- Scheduling with pg_cron (optional)
-- ----------------------------------------------------------------

-- The pg_cron job name of a partition's scheduled advance:
-- 'streamforge.advance ["pipeline", "partition"]'.  JSON quoting keeps it
-- unambiguous whatever the names contain.
CREATE OR REPLACE FUNCTION streamforge.advance_job_name(pipeline text, partition text)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN 'streamforge.advance '
       OPERATOR(pg_catalog.||) pg_catalog.jsonb_build_array(pipeline, partition)::text;

-- Raises a clear error when pg_cron is not installed in this database.
CREATE OR REPLACE FUNCTION streamforge.require_pg_cron()
RETURNS void
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF pg_catalog.to_regnamespace('cron') IS NULL
       OR NOT EXISTS (SELECT 1 FROM pg_catalog.pg_extension
                       WHERE extname OPERATOR(pg_catalog.=) 'pg_cron') THEN
        RAISE EXCEPTION 'pg_cron is not installed in database "%"',
                        pg_catalog.current_database()
            USING ERRCODE = '55000',
                  HINT = 'Add pg_cron to shared_preload_libraries, set '
                      'cron.database_name to this database, restart, and run '
                      'CREATE EXTENSION pg_cron; or call '
                      'streamforge.advance_to_now() from your own scheduler.';
    END IF;
END
$$;

-- Schedule advance_to_now(pipeline, partition, delay, unit) with pg_cron.
-- schedule is a pg_cron schedule ('* * * * *'; '30 seconds' from pg_cron
-- 1.5 on).  Scheduling the same partition again replaces its schedule.
-- Returns the pg_cron job id.  The job runs as the calling role (so it
-- needs the ingest privilege when it runs); scheduling needs admin.
CREATE OR REPLACE FUNCTION streamforge.schedule_advance(pipeline text, partition text,
    schedule text, delay bigint DEFAULT 0, unit text DEFAULT 'ms')
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    jobid bigint;
BEGIN
    IF pipeline IS NULL OR partition IS NULL OR schedule IS NULL
       OR delay IS NULL OR unit IS NULL THEN
        RAISE EXCEPTION 'arguments of schedule_advance must not be null'
            USING ERRCODE = '22004';
    END IF;
    -- 42704 or 42501
    PERFORM streamforge.require_privilege(pipeline, 'admin');
    PERFORM streamforge.require_pg_cron();
    -- fail now, not at every run: the partition, delay and unit must be
    -- valid
    IF NOT EXISTS (SELECT 1 FROM streamforge.partitions(schedule_advance.pipeline) AS t
                    WHERE t.partition OPERATOR(pg_catalog.=) schedule_advance.partition) THEN
        RAISE EXCEPTION 'partition "%" does not exist in pipeline "%"',
                        partition, pipeline
            USING ERRCODE = '22023';
    END IF;
    IF delay < 0 THEN
        RAISE EXCEPTION 'delay must not be negative'
            USING ERRCODE = '22023',
                  DETAIL = format('The delay given is %s.', delay);
    END IF;
    PERFORM streamforge.clock_now(unit);

    EXECUTE 'SELECT cron.schedule($1, $2, $3)'
       INTO jobid
      USING streamforge.advance_job_name(pipeline, partition), schedule,
            format('SELECT pg_catalog.count(*) FROM streamforge.advance_to_now(%L, %L, %s, %L)',
                   pipeline, partition, delay, unit);
    RETURN jobid;
END
$$;

-- Remove a partition's scheduled advance.  Returns false when there was
-- none (for the calling role).  Needs the admin privilege; a role that lost
-- it can still remove its own job with cron.unschedule().
CREATE OR REPLACE FUNCTION streamforge.unschedule_advance(pipeline text, partition text)
RETURNS boolean
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    found_job boolean;
BEGIN
    IF pipeline IS NULL OR partition IS NULL THEN
        RAISE EXCEPTION 'arguments of unschedule_advance must not be null'
            USING ERRCODE = '22004';
    END IF;
    PERFORM streamforge.require_privilege(pipeline, 'admin');
    PERFORM streamforge.require_pg_cron();
    EXECUTE 'SELECT EXISTS (SELECT 1 FROM cron.job WHERE jobname OPERATOR(pg_catalog.=) $1)'
       INTO found_job
      USING streamforge.advance_job_name(pipeline, partition);
    IF found_job THEN
        EXECUTE 'SELECT cron.unschedule($1)'
          USING streamforge.advance_job_name(pipeline, partition);
    END IF;
    RETURN found_job;
END
$$;

-- The scheduled advances the calling role can see (pg_cron shows a role
-- its own jobs).  Empty when pg_cron is not installed.
CREATE OR REPLACE FUNCTION streamforge.scheduled_advances()
RETURNS TABLE (pipeline text, partition text, jobid bigint, schedule text,
               command text, active boolean)
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF pg_catalog.to_regnamespace('cron') IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY EXECUTE
        'SELECT n.doc ->> 0, n.doc ->> 1, j.jobid, j.schedule, j.command, j.active
           FROM cron.job AS j,
                LATERAL (SELECT pg_catalog.substr(j.jobname, 21)::jsonb) AS n(doc)
          WHERE j.jobname LIKE ''streamforge.advance [%''
          ORDER BY 1, 2';
END
$$;
