-- streamforge objects: the time forms of the calls whose time or duration
-- arguments are counts of the pipeline's time unit (0.4.0, issue 45 item
-- 3; docs/reference.md, "Times and durations", lists every such argument
-- and its time form).
--
-- An interval overload beside a bigint one makes a call with an untyped
-- literal, f('p', '5 seconds') or f('p', '5000'), ambiguous (42725): both
-- types accept it and neither is of the string category.  So each duration
-- argument below gets two overloads beside its bigint form:
--   - interval: the duration, converted to whole units of the pipeline's
--     time unit (interval_to_units; 22023 if the pipeline has none, or if
--     the duration is not a whole number of units);
--   - text, which PostgreSQL prefers for an untyped literal: a string of
--     digits (with an optional sign) is a count of units, exactly as the
--     bigint form took it in 0.3.0 ('5000' means what it meant); anything
--     else is read as an interval ('5 seconds', '00:00:05').
-- A bigint (or an integer literal) still goes to the bigint form, a typed
-- interval to the interval form.  NULL means what it means in the bigint
-- form and needs no time unit.

-- true for a count of units (digits, an optional sign) or NULL
CREATE OR REPLACE FUNCTION streamforge_internal.is_unit_count(v text)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN v IS NULL OR v OPERATOR(pg_catalog.~) '^\s*[+-]?[0-9]+\s*$';
COMMENT ON FUNCTION streamforge_internal.is_unit_count(text) IS
    'whether a duration given as text is a count of units (internal helper)';

-- A duration as whole units of the pipeline's time unit; NULL stays NULL
-- (and needs no time unit).  22023 for a pipeline without a time unit.
CREATE OR REPLACE FUNCTION streamforge_internal.duration_units(pipeline text,
    d interval)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    unit interval;
BEGIN
    IF d IS NULL THEN
        RETURN NULL;
    END IF;
    unit := streamforge.time_unit(pipeline);
    PERFORM streamforge_internal.unit_us(unit, pipeline);
    RETURN streamforge.interval_to_units(d, unit);
END
$$;
COMMENT ON FUNCTION streamforge_internal.duration_units(text, interval) IS
    'a duration as whole units of the pipeline''s time unit (internal helper)';

-- units_to_time with the pipeline's time unit (22023 without one; NULL
-- stays NULL, but an untyped NULL is ambiguous with units_to_time(bigint,
-- interval): write NULL::bigint).  No time_to_units(pipeline, timestamptz):
-- with two untyped literals it would be ambiguous with
-- time_to_units(timestamptz, interval); the *_ts calls convert themselves.
CREATE OR REPLACE FUNCTION streamforge.units_to_time(pipeline text, t bigint)
RETURNS timestamptz
LANGUAGE plpgsql VOLATILE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    unit interval := streamforge.time_unit(pipeline);
BEGIN
    PERFORM streamforge_internal.unit_us(unit, pipeline);
    RETURN streamforge.units_to_time(t, unit);
END
$$;
COMMENT ON FUNCTION streamforge.units_to_time(text, bigint) IS
    'a time of the pipeline, in its units, as a timestamp (the pipeline needs a time unit)';

-- ----------------------------------------------------------------
-- Definition changes (admin, as their bigint forms)
-- ----------------------------------------------------------------

CREATE OR REPLACE FUNCTION streamforge.set_lateness(pipeline text, lateness interval)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN QUERY SELECT * FROM streamforge.set_lateness(pipeline,
        streamforge_internal.duration_units(pipeline, lateness));
END
$$;
COMMENT ON FUNCTION streamforge.set_lateness(text, interval) IS
    'set_lateness with an interval (the pipeline needs a time unit)';

CREATE OR REPLACE FUNCTION streamforge.set_lateness(pipeline text, lateness text)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF streamforge_internal.is_unit_count(lateness) THEN
        RETURN QUERY SELECT * FROM streamforge.set_lateness(pipeline, lateness::bigint);
    ELSE
        RETURN QUERY SELECT * FROM streamforge.set_lateness(pipeline, lateness::interval);
    END IF;
END
$$;
COMMENT ON FUNCTION streamforge.set_lateness(text, text) IS
    'set_lateness with an untyped literal: digits are units, anything else an interval';

CREATE OR REPLACE FUNCTION streamforge.set_retention(pipeline text, retention interval)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN QUERY SELECT * FROM streamforge.set_retention(pipeline,
        streamforge_internal.duration_units(pipeline, retention));
END
$$;
COMMENT ON FUNCTION streamforge.set_retention(text, interval) IS
    'set_retention with an interval (the pipeline needs a time unit)';

CREATE OR REPLACE FUNCTION streamforge.set_retention(pipeline text, retention text)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF streamforge_internal.is_unit_count(retention) THEN
        RETURN QUERY SELECT * FROM streamforge.set_retention(pipeline, retention::bigint);
    ELSE
        RETURN QUERY SELECT * FROM streamforge.set_retention(pipeline, retention::interval);
    END IF;
END
$$;
COMMENT ON FUNCTION streamforge.set_retention(text, text) IS
    'set_retention with an untyped literal: digits are units, anything else an interval';

CREATE OR REPLACE FUNCTION streamforge.set_out_of_orderness(pipeline text,
    out_of_orderness interval)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM streamforge.set_out_of_orderness(pipeline,
        streamforge_internal.duration_units(pipeline, out_of_orderness));
END
$$;
COMMENT ON FUNCTION streamforge.set_out_of_orderness(text, interval) IS
    'set_out_of_orderness with an interval (the pipeline needs a time unit)';

CREATE OR REPLACE FUNCTION streamforge.set_out_of_orderness(pipeline text,
    out_of_orderness text)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF streamforge_internal.is_unit_count(out_of_orderness) THEN
        PERFORM streamforge.set_out_of_orderness(pipeline, out_of_orderness::bigint);
    ELSE
        PERFORM streamforge.set_out_of_orderness(pipeline, out_of_orderness::interval);
    END IF;
END
$$;
COMMENT ON FUNCTION streamforge.set_out_of_orderness(text, text) IS
    'set_out_of_orderness with an untyped literal: digits are units, anything else an interval';

-- ----------------------------------------------------------------
-- Progress from the wall clock, per partition (ingest; node)
-- ----------------------------------------------------------------

-- advance_to_now with the delay an interval: progress
-- floor((clock_timestamp() - delay) / time unit), the same as the bigint
-- form with the unit the pipeline's (for 1 ms: clock_now('ms') - delay in
-- ms).  The pipeline needs a time unit.
CREATE OR REPLACE FUNCTION streamforge.advance_to_now(pipeline text, partition text,
    delay interval)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    u bigint;
    delay_us bigint;
    now_us numeric;
BEGIN
    IF pipeline IS NULL THEN
        RAISE EXCEPTION 'pipeline must not be null' USING ERRCODE = '22004';
    ELSIF partition IS NULL THEN
        RAISE EXCEPTION 'partition must not be null' USING ERRCODE = '22004';
    ELSIF delay IS NULL THEN
        RAISE EXCEPTION 'delay must not be null' USING ERRCODE = '22004';
    END IF;
    delay_us := streamforge_internal.interval_us(delay);
    IF delay_us OPERATOR(pg_catalog.<) 0 THEN
        RAISE EXCEPTION 'delay must not be negative'
            USING ERRCODE = '22023',
                  DETAIL = pg_catalog.format('The delay given is %s.', delay);
    END IF;
    u := streamforge_internal.unit_us(streamforge.time_unit(pipeline), pipeline);
    now_us := pg_catalog.floor(EXTRACT(epoch FROM pg_catalog.clock_timestamp())
                               OPERATOR(pg_catalog.*) 1000000);
    RETURN QUERY SELECT * FROM streamforge.advance(pipeline, partition,
        pg_catalog.floor((now_us OPERATOR(pg_catalog.-) delay_us)
                         OPERATOR(pg_catalog./) u)::bigint);
END
$$;
COMMENT ON FUNCTION streamforge.advance_to_now(text, text, interval) IS
    'reports a partition''s progress as the clock minus an interval (the pipeline needs a time unit)';

CREATE OR REPLACE FUNCTION streamforge.advance_to_now(pipeline text, partition text,
    delay text)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF streamforge_internal.is_unit_count(delay) THEN
        RETURN QUERY SELECT * FROM streamforge.advance_to_now(pipeline, partition, delay::bigint);
    ELSE
        RETURN QUERY SELECT * FROM streamforge.advance_to_now(pipeline, partition, delay::interval);
    END IF;
END
$$;
COMMENT ON FUNCTION streamforge.advance_to_now(text, text, text) IS
    'advance_to_now with an untyped literal delay: digits are units of ms (as the bigint form), anything else an interval';

-- schedule_advance of one partition with the delay an interval (admin);
-- the job (named as the bigint form's, which it replaces) runs
-- advance_to_now(pipeline, partition, interval), the delay in
-- microseconds whatever the session's IntervalStyle.
CREATE OR REPLACE FUNCTION streamforge.schedule_advance(pipeline text, partition text,
    schedule text, delay interval)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    jobid bigint;
BEGIN
    IF pipeline IS NULL OR partition IS NULL OR schedule IS NULL
       OR delay IS NULL THEN
        RAISE EXCEPTION 'arguments of schedule_advance must not be null'
            USING ERRCODE = '22004';
    END IF;
    PERFORM streamforge.require_privilege(pipeline, 'admin');
    PERFORM streamforge.require_pg_cron();
    IF NOT EXISTS (SELECT 1 FROM streamforge.partitions(schedule_advance.pipeline) AS t
                    WHERE t.partition OPERATOR(pg_catalog.=) schedule_advance.partition) THEN
        RAISE EXCEPTION 'partition "%" does not exist in pipeline "%"',
                        partition, pipeline
            USING ERRCODE = '22023';
    END IF;
    IF streamforge_internal.interval_us(delay) OPERATOR(pg_catalog.<) 0 THEN
        RAISE EXCEPTION 'delay must not be negative'
            USING ERRCODE = '22023',
                  DETAIL = pg_catalog.format('The delay given is %s.', delay);
    END IF;
    PERFORM streamforge_internal.unit_us(streamforge.time_unit(pipeline), pipeline);
    EXECUTE 'SELECT cron.schedule($1, $2, $3)'
       INTO jobid
      USING streamforge.advance_job_name(pipeline, partition), schedule,
            pg_catalog.format('SELECT pg_catalog.count(*) FROM streamforge.advance_to_now(%L, %L, %L::interval)',
                              pipeline, partition,
                              streamforge_internal.interval_us(delay)::text
                              OPERATOR(pg_catalog.||) ' microseconds');
    RETURN jobid;
END
$$;
COMMENT ON FUNCTION streamforge.schedule_advance(text, text, text, interval) IS
    'schedules advance_to_now of one partition with an interval delay (the pipeline needs a time unit)';

CREATE OR REPLACE FUNCTION streamforge.schedule_advance(pipeline text, partition text,
    schedule text, delay text)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF streamforge_internal.is_unit_count(delay) THEN
        RETURN streamforge.schedule_advance(pipeline, partition, schedule, delay::bigint);
    END IF;
    RETURN streamforge.schedule_advance(pipeline, partition, schedule, delay::interval);
END
$$;
COMMENT ON FUNCTION streamforge.schedule_advance(text, text, text, text) IS
    'schedule_advance with an untyped literal delay: digits are units of ms (as the bigint form), anything else an interval';
