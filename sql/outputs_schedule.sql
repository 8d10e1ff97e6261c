-- Progress from the wall clock, and the pg_cron helpers when pg_cron is not
-- installed (test/t/050_outputs_cron.pl runs them with pg_cron).
\set VERBOSITY sqlstate

-- clock_now(unit): clock_timestamp() in units since the epoch, rounded down
SELECT streamforge.clock_now('s') - floor(extract(epoch FROM clock_timestamp()))::bigint
       BETWEEN -1 AND 0 AS seconds_ok;
SELECT streamforge.clock_now() / 1000 - streamforge.clock_now('s') BETWEEN -1 AND 0 AS ms_ok;
SELECT streamforge.clock_now('us') / 1000000 - streamforge.clock_now('s') BETWEEN -1 AND 0 AS us_ok;
SELECT streamforge.clock_now('min') - streamforge.clock_now('s') / 60 BETWEEN -1 AND 0 AS min_ok;
SELECT streamforge.clock_now('hours');
SELECT streamforge.clock_now(NULL);

-- advance_to_now: progress = clock_now(unit) - delay
SELECT streamforge.create_pipeline('out_clock', ARRAY['a'],
    ARRAY[streamforge.fixed('minute', 60)], 86400);
SELECT streamforge.configure_outputs('out_clock');
SELECT count(*) FROM streamforge.ingest('out_clock', 'a', 0, 'e0', 'k',
    streamforge.clock_now('s') - 3600, 1);
-- (the window's bounds depend on the clock: count the changes; the
-- clock before the call bounds the watermark, however slow the machine)
SELECT streamforge.clock_now('s') AS before_advance \gset
SELECT count(*) FROM streamforge.advance_to_now('out_clock', 'a', 600, 's');
SELECT seq, op, window_name, key, window_end - window_start AS width, count, sum
  FROM streamforge.changelog WHERE pipeline = 'out_clock';
SELECT streamforge.watermark('out_clock')
       BETWEEN :before_advance - 600 AND streamforge.clock_now('s') - 600
       AS watermark_ok;
SELECT count(*) AS visible_rows,
       bool_and(window_end <= streamforge.watermark('out_clock')) AS closed
  FROM streamforge.visible('out_clock');
-- progress never decreases: a larger delay changes nothing
SELECT count(*) FROM streamforge.advance_to_now('out_clock', 'a', 7200, 's');
SELECT streamforge.watermark('out_clock') >= :before_advance - 600
       AS watermark_kept;
SELECT count(*) FROM streamforge.advance_to_now('out_clock', 'a');
SELECT streamforge.watermark('out_clock') / 1000000000 >= 1 AS milliseconds_now;
-- errors
SELECT * FROM streamforge.advance_to_now(NULL, 'a');
SELECT * FROM streamforge.advance_to_now('out_clock', NULL);
SELECT * FROM streamforge.advance_to_now('out_clock', 'a', NULL);
SELECT * FROM streamforge.advance_to_now('out_clock', 'a', -1);
SELECT * FROM streamforge.advance_to_now('out_clock', 'a', 0, 'fortnight');
SELECT * FROM streamforge.advance_to_now('out_clock', 'zz');
SELECT * FROM streamforge.advance_to_now('out_nope', 'a');

-- job names are unambiguous whatever the names contain
SELECT streamforge.advance_job_name('clicks', 'web');
SELECT streamforge.advance_job_name('a" "b', 'c');

-- without pg_cron: a clear error with a hint, and no jobs
\set VERBOSITY terse
DO $$
DECLARE
    hint text;
BEGIN
    PERFORM streamforge.schedule_advance('out_clock', 'a', '* * * * *');
EXCEPTION WHEN object_not_in_prerequisite_state THEN
    GET STACKED DIAGNOSTICS hint = PG_EXCEPTION_HINT;
    RAISE NOTICE '%: %', SQLSTATE, replace(SQLERRM, current_database(), '<db>');
    RAISE NOTICE 'hint: %', hint;
END
$$;
\set VERBOSITY sqlstate
SELECT streamforge.unschedule_advance('out_clock', 'a');
SELECT * FROM streamforge.scheduled_advances();
SELECT streamforge.schedule_advance('out_clock', 'a', NULL);

SELECT streamforge.drop_pipeline('out_clock');
