-- Timestamps end to end (issue 25 item 5; docs/outputs.md, Tables): the
-- outputs of a pipeline with a time unit carry timestamptz columns
-- (changelog and results window_start_ts and window_end_ts, late_output
-- event_time_ts), and pipeline_info_ts shows its times as intervals and
-- its watermark as timestamptz.  Without a time unit they are NULL.
\set VERBOSITY sqlstate
SET timezone = 'UTC';

SELECT streamforge.create_pipeline('ts_p', ARRAY['web'],
    ARRAY[streamforge.fixed_interval('per_minute', interval '1 minute'),
          streamforge.session_interval('visit', interval '90 seconds')],
    lateness => 30, retention => 3600, time_unit => interval '1 second');
SELECT streamforge.configure_outputs('ts_p');
SELECT count(*) FROM streamforge.append_ts('ts_p', 'web', 'c1', 'home',
    timestamptz '2026-11-30 12:00:05+00', 1);
SELECT count(*) FROM streamforge.append_ts('ts_p', 'web', 'c2', 'home',
    timestamptz '2026-11-30 12:00:50+00', 1);
SELECT count(*) FROM streamforge.advance_ts('ts_p', 'web', timestamptz '2026-11-30 12:03:00+00');
-- late: 12:00:10 + 30 s < 12:03
SELECT count(*) FROM streamforge.append_ts('ts_p', 'web', 'c3', 'home',
    timestamptz '2026-11-30 12:00:10+00', 1);

SELECT seq, op, window_name, window_start_ts, window_end_ts,
       window_start_ts = streamforge.units_to_time(window_start, interval '1 second') AS same
  FROM streamforge.changelog WHERE pipeline = 'ts_p' ORDER BY seq;
SELECT window_name, window_start_ts, window_end_ts, final
  FROM streamforge.results WHERE pipeline = 'ts_p' ORDER BY 1, 2;
SELECT late_seq, event_time, event_time_ts FROM streamforge.late_output WHERE pipeline = 'ts_p';

-- rows copied from visible() and backfilled rows get them too
SELECT count(*) FROM streamforge.append_ts('ts_p', 'web', 'c4', 'docs',
    timestamptz '2026-11-30 12:02:40+00', 1);
SELECT count(*) FROM streamforge.advance_ts('ts_p', 'web', timestamptz '2026-11-30 12:03:10+00');
SELECT streamforge.disable_outputs('ts_p');
SELECT streamforge.configure_outputs('ts_p', backfill => true);
SELECT window_name, key, window_start_ts, window_end_ts, final, seq IS NULL AS copied
  FROM streamforge.results WHERE pipeline = 'ts_p' ORDER BY 1, 2, 3;

-- the pipeline's times as intervals and timestamptz
SELECT name, time_unit, windows, lateness, retention, watermark
  FROM streamforge.pipeline_info_ts WHERE name = 'ts_p';

-- without a time unit: NULL, and no row in pipeline_info_ts
SELECT streamforge.create_pipeline('ts_none', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
SELECT streamforge.configure_outputs('ts_none');
SELECT count(*) FROM streamforge.ingest('ts_none', 'p', 0, 'e', 'k', 1, 1);
SELECT count(*) FROM streamforge.advance('ts_none', 'p', 100);
SELECT count(*) FROM streamforge.ingest('ts_none', 'p', 1, 'l', 'k', 2, 1);
SELECT (SELECT count(window_start_ts) FROM streamforge.changelog WHERE pipeline = 'ts_none') AS changelog_ts,
       (SELECT count(window_end_ts) FROM streamforge.results WHERE pipeline = 'ts_none') AS results_ts,
       (SELECT count(event_time_ts) FROM streamforge.late_output WHERE pipeline = 'ts_none') AS late_ts,
       (SELECT count(*) FROM streamforge.pipeline_info_ts WHERE name = 'ts_none') AS info_rows;

-- event times that are not whole units: an error, unless
-- streamforge.round_event_times rounds them down (the DEFAULT now() trap)
SELECT count(*) FROM streamforge.append_ts('ts_p', 'web', 'r1', 'home',
    timestamptz '2026-11-30 12:05:07.999+00', 1);
SET streamforge.round_event_times = on;
SELECT count(*) FROM streamforge.append_ts('ts_p', 'web', 'r1', 'home',
    timestamptz '2026-11-30 12:05:07.999+00', 1);
SELECT streamforge.time_to_units(timestamptz '1969-12-31 23:59:59.5+00', interval '1 second') AS before_epoch,
       streamforge.time_to_units(timestamptz '1970-01-01 00:00:00.5+00', interval '1 second') AS after_epoch;
RESET streamforge.round_event_times;
SELECT i ->> 'event_id' AS event_id,
       streamforge.units_to_time((i ->> 'event_time')::bigint, interval '1 second') AS event_time
  FROM jsonb_array_elements(streamforge.inspect_checkpoint(streamforge.checkpoint('ts_p'))::jsonb
                            -> 'identities') AS i
 WHERE i ->> 'event_id' = 'r1';
SELECT streamforge.drop_pipeline('ts_p');
SELECT streamforge.drop_pipeline('ts_none');
