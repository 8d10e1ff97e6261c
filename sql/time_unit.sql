-- Pipelines with a time unit: timestamptz event times and interval window
-- sizes, without epoch arithmetic in SQL.
\set SHOW_CONTEXT never
SET timezone = 'Europe/Paris';   -- results must not depend on it

-- exact conversions
SELECT streamforge.time_to_units('1970-01-01 00:01:00+00'::timestamptz, '1 millisecond');
SELECT streamforge.time_to_units('2026-03-29 01:59:59.999+00'::timestamptz, '1 millisecond');
SELECT streamforge.time_to_units('1969-12-31 23:59:59+00'::timestamptz, '1 second');
SELECT streamforge.interval_to_units(interval '1 day 2 hours', '1 minute');
SELECT streamforge.units_to_time(60000, '1 millisecond');
SELECT streamforge.units_to_time(-1, '1 second');
SELECT streamforge.units_to_time(1774749599999, '1 millisecond');   -- around the DST change
-- (0.4.0: an untyped NULL is ambiguous since units_to_time(pipeline,
-- bigint) exists, issue 45 item 3: give it a type)
SELECT streamforge.units_to_time(NULL::bigint, '1 second');
-- what cannot be represented exactly is an error
SELECT streamforge.time_to_units('1970-01-01 00:00:00.5+00'::timestamptz, '1 second');
SELECT streamforge.interval_to_units(interval '90 seconds', '1 minute');
SELECT streamforge.interval_to_units(interval '1 month', '1 second');
SELECT streamforge.interval_to_units(interval '1 year', '1 day');
SELECT streamforge.time_to_units('infinity'::timestamptz, '1 second');
SELECT streamforge.time_to_units(now(), interval '0 seconds');
SELECT streamforge.time_to_units(now(), interval '-1 second');
SELECT streamforge.time_to_units(NULL::timestamptz, '1 second');

-- interval windows need a pipeline with a time unit
SELECT streamforge.fixed_interval('m', interval '1 minute');
SELECT streamforge.create_pipeline('nounit', ARRAY['p'],
    ARRAY[streamforge.fixed_interval('m', interval '1 minute')]);
SELECT streamforge.create_pipeline('tu', ARRAY['p'],
    ARRAY[streamforge.fixed_interval('m', interval '1 minute')],
    time_unit => interval '1 month');
SELECT streamforge.create_pipeline('tu', ARRAY['p'],
    ARRAY[streamforge.fixed_interval('m', interval '1 minute')],
    time_unit => interval '7 seconds');
SELECT streamforge.fixed_interval('m', interval '0 seconds');
SELECT streamforge.sliding_interval('s', interval '1 minute', NULL);
SELECT streamforge.session_interval('s', interval '1 month');

-- the pipeline: milliseconds, interval windows (bigint sizes are units)
SELECT streamforge.create_pipeline('tu', ARRAY['p', 'q'],
    ARRAY[streamforge.fixed_interval('per_minute', interval '1 minute'),
          streamforge.sliding_interval('hop', interval '2 minutes', interval '1 minute'),
          streamforge.session_interval('visit', interval '30 seconds'),
          streamforge.fixed('per_second', 1000)],
    lateness => 5000, time_unit => interval '1 millisecond');
SELECT streamforge.time_unit('tu');

-- timestamptz in, timestamptz out
SELECT count(*) FROM streamforge.ingest_ts('tu', 'p', 0, 'e1', 'k',
    '2026-11-30 12:00:10+00'::timestamptz, 1);
SELECT count(*) FROM streamforge.append_ts('tu', 'p', 'e2', 'k',
    '2026-11-30 12:00:20+00'::timestamptz, 2);
SELECT count(*) FROM streamforge.append_ts('tu', 'q', 'e3', 'k',
    '2026-11-30 13:00:40+01'::timestamptz, 3);
SELECT count(*) FROM streamforge.ingest_ts('tu', 'p', 2, 'e4', 'k',
    '2026-11-30 12:00:00.0005+00'::timestamptz, 4);   -- not a whole ms
SELECT * FROM streamforge.live_ts('tu');
SELECT * FROM streamforge.advance_ts('tu', 'p', '2026-11-30 12:02:00+00'::timestamptz);
SELECT * FROM streamforge.advance_ts('tu', 'q', '2026-11-30 12:01:00+00'::timestamptz);
SELECT streamforge.watermark_ts('tu'), streamforge.watermark('tu');
SELECT * FROM streamforge.visible_ts('tu');
-- the durable results, too
SELECT streamforge.configure_outputs('tu');
SELECT window_name, key, window_start, window_end, count FROM streamforge.results_ts('tu');

-- mixing: timestamptz calls on a pipeline without a time unit
SELECT streamforge.create_pipeline('nounit', ARRAY['p'], ARRAY[streamforge.fixed('m', 60)]);
SELECT streamforge.time_unit('nounit') IS NULL AS no_unit;
SELECT count(*) FROM streamforge.ingest_ts('nounit', 'p', 0, 'e', 'k', now(), 1);
SELECT count(*) FROM streamforge.advance_ts('nounit', 'p', now());
SELECT * FROM streamforge.visible_ts('nounit');
SELECT streamforge.watermark_ts('nope');

-- a timestamp table attached to a pipeline with a unit
CREATE TABLE tu_events (id text, k text, at timestamptz, local_at timestamp, d date);
SELECT streamforge.attach('tu', 'tu_events', 'id', 'k', 'at', partition => '''p''');
INSERT INTO tu_events (id, k, at) VALUES ('t1', 'tk', '2026-11-30 12:03:01+00');
SELECT * FROM streamforge.live_ts('tu') WHERE key = 'tk';
INSERT INTO tu_events (id, k, at) VALUES ('t2', 'tk', '2026-11-30 12:03:01.0001+00');
SELECT streamforge.detach('tu', 'tu_events');
-- timestamp without time zone is read as UTC, whatever the session's zone
SELECT streamforge.attach('tu', 'tu_events', 'id', 'k', 'local_at', partition => '''q''');
INSERT INTO tu_events (id, k, local_at) VALUES ('t3', 'tl', '2026-11-30 12:03:30');
SELECT * FROM streamforge.live_ts('tu') WHERE key = 'tl';
SELECT streamforge.detach('tu', 'tu_events');
SELECT streamforge.attach('nounit', 'tu_events', 'id', 'k', 'at');
DROP TABLE tu_events;

-- the bigint interface is unchanged and the bounds agree
SELECT window_name, key, window_start, window_end FROM streamforge.visible('tu');
SELECT streamforge.drop_pipeline('tu');
SELECT streamforge.drop_pipeline('nounit');
