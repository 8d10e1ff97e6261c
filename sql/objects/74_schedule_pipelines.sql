-- streamforge objects: calls and pg_cron jobs on several pipelines at once
-- (0.4.0, issue 45 item 1; docs/progress.md, "Scheduling", and
-- docs/persistence.md, "Several pipelines in one transaction").
--
-- A statement such as SELECT tick(p) FROM unnest(ARRAY[...]) takes each
-- pipeline's write lock as it reaches it, so two such jobs that list the
-- same pipelines in other orders (or a job and a transaction that writes
-- them in another order) can deadlock.  tick_pipelines and
-- advance_to_now(pipelines text[], ...) take every lock first, with
-- lock_pipelines (the names' byte order), and only then tick or advance
-- each pipeline: two of them never deadlock with each other, nor with a
-- writer of one pipeline per transaction.  They claim no partition of a
-- parallel pipeline (partitions '{}'): tick and advance of a parallel
-- pipeline take no call-time lock (docs/design/parallel-writers.md 8.1).
--
-- schedule_advance(pipelines text[], ...) and schedule_tick(pipelines
-- text[], ...) make one pg_cron job of such a call.  The job covers every
-- partition each pipeline has when it runs (partitions added later too):
-- no job per partition.  The 0.3.0 per-partition jobs (40_outputs.sql)
-- stay as they were.

-- The set of pipelines of a multi-pipeline call or job: every name once,
-- in the byte order lock_pipelines takes them.  NULL, a NULL element (22004)
-- and an array of more than one dimension (2202E) are refused, with the
-- messages of lock_pipelines.
CREATE OR REPLACE FUNCTION streamforge_internal.pipeline_set(pipelines text[])
RETURNS text[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    i integer;
BEGIN
    IF pipelines IS NULL THEN
        RAISE EXCEPTION 'pipelines must not be null' USING ERRCODE = '22004';
    ELSIF pg_catalog.array_ndims(pipelines) OPERATOR(pg_catalog.>) 1 THEN
        RAISE EXCEPTION 'pipelines must be a one-dimensional array'
            USING ERRCODE = '2202E';
    END IF;
    i := pg_catalog.array_position(pipelines, NULL);
    IF i IS NOT NULL THEN
        RAISE EXCEPTION 'element % of pipelines must not be null',
              i OPERATOR(pg_catalog.-) pg_catalog.array_lower(pipelines, 1) OPERATOR(pg_catalog.+) 1
            USING ERRCODE = '22004';
    END IF;
    RETURN ARRAY(SELECT DISTINCT t.p COLLATE "C"
                   FROM pg_catalog.unnest(pipelines) AS t(p)
                  ORDER BY 1);
END
$$;
COMMENT ON FUNCTION streamforge_internal.pipeline_set(text[]) IS
    'the pipelines of a multi-pipeline call: each once, in byte order (internal helper)';

-- tick() of several pipelines in one transaction, every lock taken first
-- (ingest privilege on each).  One row per pipeline: the number of changes
-- its tick returned.
CREATE OR REPLACE FUNCTION streamforge.tick_pipelines(pipelines text[])
RETURNS TABLE (pipeline text, changes bigint)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    names text[] := streamforge_internal.pipeline_set(pipelines);
    p text;
BEGIN
    PERFORM streamforge.lock_pipelines(names, '{}');
    FOREACH p IN ARRAY names LOOP
        tick_pipelines.pipeline := p;
        SELECT pg_catalog.count(*) INTO tick_pipelines.changes
          FROM streamforge.tick(p);
        RETURN NEXT;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.tick_pipelines(text[]) IS
    'tick() of several pipelines in one transaction, their locks taken first in one fixed order; one row per pipeline with its number of changes';

-- advance_to_now of every partition of several pipelines (or of one: an
-- array of one name), every lock taken first (ingest privilege on each).
-- Each pipeline needs a time unit (22023 otherwise, before any lock): its
-- progress is floor((now - delay) / time unit), now being
-- clock_timestamp() read once, after the locks, for every pipeline.  The
-- partitions are those the pipeline has when the call runs.  One row per
-- pipeline: the number of changes its advances returned.
CREATE OR REPLACE FUNCTION streamforge.advance_to_now(pipelines text[],
    delay interval DEFAULT '0 seconds')
RETURNS TABLE (pipeline text, changes bigint)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    names text[] := streamforge_internal.pipeline_set(pipelines);
    p text;
    part text;
    delay_us bigint;
    now_us numeric;
    u bigint;
    progress bigint;
    n bigint;
BEGIN
    IF delay IS NULL THEN
        RAISE EXCEPTION 'delay must not be null' USING ERRCODE = '22004';
    END IF;
    delay_us := streamforge_internal.interval_us(delay);
    IF delay_us OPERATOR(pg_catalog.<) 0 THEN
        RAISE EXCEPTION 'delay must not be negative'
            USING ERRCODE = '22023',
                  DETAIL = pg_catalog.format('The delay given is %s.', delay);
    END IF;
    FOREACH p IN ARRAY names LOOP
        PERFORM streamforge_internal.unit_us(streamforge.time_unit(p), p);
    END LOOP;
    PERFORM streamforge.lock_pipelines(names, '{}');
    now_us := pg_catalog.floor(EXTRACT(epoch FROM pg_catalog.clock_timestamp())
                               OPERATOR(pg_catalog.*) 1000000);
    FOREACH p IN ARRAY names LOOP
        u := streamforge_internal.unit_us(streamforge.time_unit(p), p);
        progress := pg_catalog.floor((now_us OPERATOR(pg_catalog.-) delay_us)
                                     OPERATOR(pg_catalog./) u)::bigint;
        n := 0;
        FOR part IN SELECT t.partition FROM streamforge.partitions(p) AS t
                     ORDER BY t.partition COLLATE "C" LOOP
            n := n OPERATOR(pg_catalog.+)
                 (SELECT pg_catalog.count(*) FROM streamforge.advance(p, part, progress));
        END LOOP;
        advance_to_now.pipeline := p;
        advance_to_now.changes := n;
        RETURN NEXT;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.advance_to_now(text[], interval) IS
    'advance_to_now of every partition of the pipelines, their locks taken first in one fixed order (each needs a time unit); one row per pipeline with its number of changes';

-- ----------------------------------------------------------------
-- pg_cron jobs of several pipelines
-- ----------------------------------------------------------------

-- The job name: 'streamforge.advance_to_now ["a", "b"]' or
-- 'streamforge.tick ["a", "b"]', the pipelines of pipeline_set (so the
-- same set in any order, or with repeats, names the same job).
CREATE OR REPLACE FUNCTION streamforge_internal.pipelines_job_name(kind text,
    pipelines text[])
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN 'streamforge.' OPERATOR(pg_catalog.||) kind OPERATOR(pg_catalog.||) ' '
       OPERATOR(pg_catalog.||)
       pg_catalog.to_jsonb(streamforge_internal.pipeline_set(pipelines))::text;
COMMENT ON FUNCTION streamforge_internal.pipelines_job_name(text, text[]) IS
    'the pg_cron job name of a multi-pipeline job (internal helper)';

-- Checks of a multi-pipeline schedule, before any job exists: admin on
-- every pipeline (42704, 42501), pg_cron installed, at least one pipeline.
CREATE OR REPLACE FUNCTION streamforge_internal.pipelines_job_check(pipelines text[],
    what text)
RETURNS text[]
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    names text[] := streamforge_internal.pipeline_set(pipelines);
    p text;
BEGIN
    IF pg_catalog.cardinality(names) OPERATOR(pg_catalog.=) 0 THEN
        RAISE EXCEPTION 'pipelines of % must not be empty', what
            USING ERRCODE = '22023';
    END IF;
    FOREACH p IN ARRAY names LOOP
        PERFORM streamforge.require_privilege(p, 'admin');
    END LOOP;
    PERFORM streamforge.require_pg_cron();
    RETURN names;
END
$$;
COMMENT ON FUNCTION streamforge_internal.pipelines_job_check(text[], text) IS
    'the checks of a multi-pipeline schedule: admin on each pipeline, pg_cron (internal helper)';

-- Schedule advance_to_now(pipelines, delay) with pg_cron: one job for
-- every partition of every pipeline named, partitions added later
-- included.  Scheduling the same set of pipelines again replaces its
-- schedule.  Returns the job id.  Needs admin on each pipeline; the job
-- runs as the calling role (ingest on each when it runs).  The command
-- gives the delay in microseconds, whatever the session's IntervalStyle.
-- Each pipeline
-- needs a time unit (checked now).  An array of one name schedules one
-- whole pipeline.
CREATE OR REPLACE FUNCTION streamforge.schedule_advance(pipelines text[],
    schedule text, delay interval DEFAULT '0 seconds')
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    names text[];
    p text;
    jobid bigint;
BEGIN
    IF pipelines IS NULL OR schedule IS NULL OR delay IS NULL THEN
        RAISE EXCEPTION 'arguments of schedule_advance must not be null'
            USING ERRCODE = '22004';
    END IF;
    names := streamforge_internal.pipelines_job_check(pipelines, 'schedule_advance');
    -- fail now, not at every run
    IF streamforge_internal.interval_us(delay) OPERATOR(pg_catalog.<) 0 THEN
        RAISE EXCEPTION 'delay must not be negative'
            USING ERRCODE = '22023',
                  DETAIL = pg_catalog.format('The delay given is %s.', delay);
    END IF;
    FOREACH p IN ARRAY names LOOP
        PERFORM streamforge_internal.unit_us(streamforge.time_unit(p), p);
    END LOOP;
    EXECUTE 'SELECT cron.schedule($1, $2, $3)'
       INTO jobid
      USING streamforge_internal.pipelines_job_name('advance_to_now', names), schedule,
            pg_catalog.format('SELECT pg_catalog.count(*) FROM streamforge.advance_to_now(%L::text[], %L::interval)',
                              names,
                              streamforge_internal.interval_us(delay)::text
                              OPERATOR(pg_catalog.||) ' microseconds');
    RETURN jobid;
END
$$;
COMMENT ON FUNCTION streamforge.schedule_advance(text[], text, interval) IS
    'schedules one pg_cron job of advance_to_now(pipelines, delay): every partition of every pipeline, locks in one fixed order';

-- Schedule tick_pipelines(pipelines) with pg_cron, as schedule_advance.
CREATE OR REPLACE FUNCTION streamforge.schedule_tick(pipelines text[], schedule text)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    names text[];
    jobid bigint;
BEGIN
    IF pipelines IS NULL OR schedule IS NULL THEN
        RAISE EXCEPTION 'arguments of schedule_tick must not be null'
            USING ERRCODE = '22004';
    END IF;
    names := streamforge_internal.pipelines_job_check(pipelines, 'schedule_tick');
    EXECUTE 'SELECT cron.schedule($1, $2, $3)'
       INTO jobid
      USING streamforge_internal.pipelines_job_name('tick', names), schedule,
            pg_catalog.format('SELECT pg_catalog.count(*) FROM streamforge.tick_pipelines(%L::text[])',
                              names);
    RETURN jobid;
END
$$;
COMMENT ON FUNCTION streamforge.schedule_tick(text[], text) IS
    'schedules one pg_cron job of tick_pipelines(pipelines), locks in one fixed order';

-- Remove a multi-pipeline job (the same set of pipelines, in any order).
-- false when there was none (for the calling role).  Needs admin on each.
CREATE OR REPLACE FUNCTION streamforge_internal.unschedule_pipelines(kind text,
    pipelines text[], what text)
RETURNS boolean
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    names text[];
    found_job boolean;
BEGIN
    IF pipelines IS NULL THEN
        RAISE EXCEPTION 'arguments of % must not be null', what
            USING ERRCODE = '22004';
    END IF;
    names := streamforge_internal.pipelines_job_check(pipelines, what);
    EXECUTE 'SELECT EXISTS (SELECT 1 FROM cron.job WHERE jobname OPERATOR(pg_catalog.=) $1)'
       INTO found_job
      USING streamforge_internal.pipelines_job_name(kind, names);
    IF found_job THEN
        EXECUTE 'SELECT cron.unschedule($1)'
          USING streamforge_internal.pipelines_job_name(kind, names);
    END IF;
    RETURN found_job;
END
$$;
COMMENT ON FUNCTION streamforge_internal.unschedule_pipelines(text, text[], text) IS
    'removes a multi-pipeline pg_cron job (internal helper)';

CREATE OR REPLACE FUNCTION streamforge.unschedule_advance(pipelines text[])
RETURNS boolean
LANGUAGE sql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
RETURN streamforge_internal.unschedule_pipelines('advance_to_now', pipelines,
                                                 'unschedule_advance');
COMMENT ON FUNCTION streamforge.unschedule_advance(text[]) IS
    'removes the pg_cron job schedule_advance(pipelines, ...) made; false if there was none';

CREATE OR REPLACE FUNCTION streamforge.unschedule_tick(pipelines text[])
RETURNS boolean
LANGUAGE sql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
RETURN streamforge_internal.unschedule_pipelines('tick', pipelines,
                                                 'unschedule_tick');
COMMENT ON FUNCTION streamforge.unschedule_tick(text[]) IS
    'removes the pg_cron job schedule_tick made; false if there was none';

-- Every streamforge pg_cron job the calling role can see (pg_cron shows a
-- role its own jobs): kind 'advance' (one partition, schedule_advance of
-- 0.3.0), 'advance_to_now' (every partition of pipelines) or 'tick';
-- partition is NULL but for kind 'advance'.  Empty when pg_cron is not
-- installed.
CREATE OR REPLACE FUNCTION streamforge.scheduled_jobs()
RETURNS TABLE (kind text, pipelines text[], partition text, jobid bigint,
               schedule text, command text, active boolean)
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF pg_catalog.to_regnamespace('cron') IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY EXECUTE
        'SELECT n.kind, n.pipelines, n.partition, j.jobid, j.schedule, j.command, j.active
           FROM (SELECT * FROM cron.job AS j0
                  WHERE pg_catalog.starts_with(j0.jobname, ''streamforge.advance ['')
                     OR pg_catalog.starts_with(j0.jobname, ''streamforge.advance_to_now ['')
                     OR pg_catalog.starts_with(j0.jobname, ''streamforge.tick ['')
                 OFFSET 0) AS j,
                LATERAL (SELECT pg_catalog.substr(j.jobname, 13,
                                    pg_catalog.strpos(j.jobname, '' ['') - 13) AS kind,
                                pg_catalog.substr(j.jobname,
                                    pg_catalog.strpos(j.jobname, '' ['') + 1)::jsonb AS doc) AS d,
                LATERAL (SELECT d.kind,
                                CASE WHEN d.kind = ''advance''
                                     THEN ARRAY[d.doc ->> 0]
                                     ELSE ARRAY(SELECT pg_catalog.jsonb_array_elements_text(d.doc)) END,
                                CASE WHEN d.kind = ''advance'' THEN d.doc ->> 1 END)
                    AS n(kind, pipelines, partition)
          ORDER BY 1, 2, 3';
END
$$;
COMMENT ON FUNCTION streamforge.scheduled_jobs() IS
    'the streamforge pg_cron jobs of the calling role: per-partition advances, multi-pipeline advance_to_now and tick jobs';

-- drop_pipeline (src/persist/sink.c, as the caller, when pg_cron is
-- installed and its schema usable) removes the per-partition jobs of the
-- pipeline, then calls this for the multi-pipeline jobs that name it,
-- among those of the calling role: a job of that pipeline alone is
-- removed; a job of several is scheduled again for the others, with the
-- same schedule and delay, under the name of the new set, and the old job
-- removed.  Jobs of other roles (a superuser sees them) stay and fail from
-- then on, as the per-partition ones of 0.3.0 did for roles that could
-- not see them.  Returns the number of jobs removed.
CREATE OR REPLACE FUNCTION streamforge_internal.cron_forget_pipeline(pipeline text)
RETURNS integer
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    j record;
    rest text[];
    n integer := 0;
BEGIN
    IF pg_catalog.to_regnamespace('cron') IS NULL THEN
        RETURN 0;
    END IF;
    FOR j IN EXECUTE
        'SELECT d.jobid, d.schedule, d.command, d.kind, d.names
           FROM (SELECT c.jobid, c.schedule, c.command,
                        pg_catalog.substr(c.jobname, 13,
                            pg_catalog.strpos(c.jobname, '' ['') OPERATOR(pg_catalog.-) 13) AS kind,
                        ARRAY(SELECT pg_catalog.jsonb_array_elements_text(
                                  pg_catalog.substr(c.jobname,
                                      pg_catalog.strpos(c.jobname, '' ['') OPERATOR(pg_catalog.+) 1)::pg_catalog.jsonb)) AS names
                   FROM cron.job AS c
                  WHERE (pg_catalog.starts_with(c.jobname, ''streamforge.advance_to_now ['')
                         OR pg_catalog.starts_with(c.jobname, ''streamforge.tick [''))
                    AND c.username OPERATOR(pg_catalog.=) CURRENT_USER::text
                 OFFSET 0) AS d
          WHERE $1 OPERATOR(pg_catalog.=) ANY (d.names)'
      USING pipeline
    LOOP
        rest := pg_catalog.array_remove(j.names, pipeline);
        IF pg_catalog.cardinality(rest) OPERATOR(pg_catalog.>) 0 THEN
            EXECUTE 'SELECT cron.schedule($1, $2, $3)'
              USING streamforge_internal.pipelines_job_name(j.kind, rest), j.schedule,
                    pg_catalog.replace(j.command,
                        pg_catalog.quote_literal(j.names::text) OPERATOR(pg_catalog.||) '::text[]',
                        pg_catalog.quote_literal(rest::text) OPERATOR(pg_catalog.||) '::text[]');
        END IF;
        EXECUTE 'SELECT cron.unschedule($1)' USING j.jobid;
        n := n OPERATOR(pg_catalog.+) 1;
    END LOOP;
    RETURN n;
END
$$;
COMMENT ON FUNCTION streamforge_internal.cron_forget_pipeline(text) IS
    'drop_pipeline: the multi-pipeline pg_cron jobs of the caller that name the pipeline, removed or scheduled again without it (internal helper)';
