-- The time forms of every time or duration argument (issue 45 item 3,
-- docs/reference.md "Times and durations"), and the calls on several
-- pipelines (item 1, docs/progress.md "Scheduling"): each time form gives
-- exactly what its bigint form gives, refuses a pipeline without a time
-- unit with 22023 as the *_ts functions do, and passes NULL as the bigint
-- form does.  An untyped literal goes to the text form: digits are units
-- (0.3.0's meaning), anything else an interval.
\set SHOW_CONTEXT never
\set VERBOSITY default
SET timezone = 'Europe/Paris';

SELECT streamforge.create_pipeline(n, ARRAY['a', 'b'],
         ARRAY[streamforge.fixed_interval('w', '10 seconds')],
         time_unit => '1 millisecond', lateness => 60000, emit => 'final')
  FROM unnest(ARRAY['tf_big', 'tf_ivl', 'tf_txt']) AS u(n);
SELECT streamforge.create_pipeline('tf_none', ARRAY['a'],
         ARRAY[streamforge.fixed('w', 10)]);
-- the same events in the three pipelines
SELECT count(*) FROM unnest(ARRAY['tf_big', 'tf_ivl', 'tf_txt']) AS u(n),
       generate_series(0, 11) AS g(i),
       streamforge.ingest(u.n, 'a', g.i, 'e' || g.i, 'k' || (g.i % 2), g.i * 2500, g.i);
SELECT count(*) FROM unnest(ARRAY['tf_big', 'tf_ivl', 'tf_txt']) AS u(n),
       LATERAL (SELECT count(*) FROM streamforge.advance(u.n, 'a', 40000)) AS a1,
       LATERAL (SELECT count(*) FROM streamforge.advance(u.n, 'b', 40000)) AS a2;

-- set_lateness: bigint, interval, untyped literal; the same changes (emit
-- final: the lower lateness finalizes and emits the windows that ended by
-- 35000)
CREATE TEMP TABLE ch AS
SELECT 'big' AS form, c.* FROM streamforge.set_lateness('tf_big', 5000) AS c
UNION ALL
SELECT 'ivl', c.* FROM streamforge.set_lateness('tf_ivl', interval '5 seconds') AS c
UNION ALL
SELECT 'txt', c.* FROM streamforge.set_lateness('tf_txt', '5 seconds') AS c;
SELECT form, count(*) FROM ch GROUP BY form ORDER BY form;
SELECT count(*) AS differences FROM (
  (SELECT op, window_name, key, window_start, window_end, count, sum FROM ch WHERE form = 'big'
   EXCEPT ALL
   SELECT op, window_name, key, window_start, window_end, count, sum FROM ch WHERE form = 'ivl')
  UNION ALL
  (SELECT op, window_name, key, window_start, window_end, count, sum FROM ch WHERE form = 'ivl'
   EXCEPT ALL
   SELECT op, window_name, key, window_start, window_end, count, sum FROM ch WHERE form = 'big')
  UNION ALL
  (SELECT op, window_name, key, window_start, window_end, count, sum FROM ch WHERE form = 'txt'
   EXCEPT ALL
   SELECT op, window_name, key, window_start, window_end, count, sum FROM ch WHERE form = 'big')) AS d;
SELECT n, streamforge.definition(n) -> 'lateness' AS lateness
  FROM unnest(ARRAY['tf_big', 'tf_ivl', 'tf_txt']) AS u(n) ORDER BY n;
-- digits in a literal are units, as in 0.3.0
SELECT count(*) FROM streamforge.set_lateness('tf_txt', '4000');
SELECT streamforge.definition('tf_txt') -> 'lateness' AS lateness;
SELECT count(*) FROM streamforge.set_lateness('tf_txt', ' +3000 ');
SELECT streamforge.definition('tf_txt') -> 'lateness' AS lateness;
-- other spellings of an interval
SELECT count(*) FROM streamforge.set_lateness('tf_txt', '00:00:03');
SELECT streamforge.definition('tf_txt') -> 'lateness' AS lateness;
-- not whole units, months, not an interval
SELECT count(*) FROM streamforge.set_lateness('tf_txt', '1.5 ms');
SELECT count(*) FROM streamforge.set_lateness('tf_txt', '1 month');
SELECT count(*) FROM streamforge.set_lateness('tf_txt', 'soon');
-- NULL means what it means in the bigint form (here an error)
SELECT count(*) FROM streamforge.set_lateness('tf_txt', NULL);
SELECT count(*) FROM streamforge.set_lateness('tf_txt', NULL::interval);
SELECT count(*) FROM streamforge.set_lateness('tf_txt', NULL::bigint);
-- without a time unit: 22023; digits still work
SELECT count(*) FROM streamforge.set_lateness('tf_none', interval '5 seconds');
SELECT count(*) FROM streamforge.set_lateness('tf_none', '5 seconds');
SELECT count(*) FROM streamforge.set_lateness('tf_none', '5');
SELECT streamforge.definition('tf_none') -> 'lateness' AS lateness;
DO $$
BEGIN
    PERFORM streamforge.set_lateness('tf_none', interval '1 second');
EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE 'SQLSTATE %', SQLSTATE;
END
$$;

-- set_retention
SELECT count(*) FROM streamforge.set_retention('tf_big', 3600000);
SELECT count(*) FROM streamforge.set_retention('tf_ivl', interval '1 hour');
SELECT count(*) FROM streamforge.set_retention('tf_txt', '1 hour');
SELECT n, streamforge.definition(n) -> 'retention' AS retention
  FROM unnest(ARRAY['tf_big', 'tf_ivl', 'tf_txt']) AS u(n) ORDER BY n;
SELECT count(*) FROM streamforge.set_retention('tf_txt', '7200000');
SELECT streamforge.definition('tf_txt') -> 'retention' AS retention;
SELECT count(*) FROM streamforge.set_retention('tf_ivl', NULL::interval);
SELECT count(*) FROM streamforge.set_retention('tf_txt', NULL);
SELECT n, streamforge.definition(n) -> 'retention' AS retention
  FROM unnest(ARRAY['tf_ivl', 'tf_txt']) AS u(n) ORDER BY n;
SELECT count(*) FROM streamforge.set_retention('tf_none', interval '1 hour');
SELECT count(*) FROM streamforge.set_retention('tf_none', '1 hour');

-- set_out_of_orderness
SELECT streamforge.set_out_of_orderness('tf_big', 2000);
SELECT streamforge.set_out_of_orderness('tf_ivl', interval '2 seconds');
SELECT streamforge.set_out_of_orderness('tf_txt', '2 seconds');
SELECT n, streamforge.out_of_orderness(n)
  FROM unnest(ARRAY['tf_big', 'tf_ivl', 'tf_txt']) AS u(n) ORDER BY n;
SELECT streamforge.set_out_of_orderness('tf_txt', '1500');
SELECT streamforge.out_of_orderness('tf_txt');
SELECT streamforge.set_out_of_orderness('tf_ivl', NULL::interval);
SELECT streamforge.set_out_of_orderness('tf_txt', NULL);
SELECT n, streamforge.out_of_orderness(n) IS NULL AS off
  FROM unnest(ARRAY['tf_ivl', 'tf_txt']) AS u(n) ORDER BY n;
SELECT streamforge.set_out_of_orderness('tf_none', interval '2 seconds');
SELECT streamforge.set_out_of_orderness('tf_none', '2 seconds');
SELECT streamforge.set_out_of_orderness('tf_none', '2');
SELECT streamforge.out_of_orderness('tf_none');

-- units_to_time with the pipeline's unit
SELECT streamforge.units_to_time('tf_big', 1500) = streamforge.units_to_time(1500, '1 millisecond') AS same,
       streamforge.units_to_time('tf_big', 1500);
SELECT streamforge.units_to_time('tf_big', 9223372036854775807);
SELECT streamforge.units_to_time('tf_big', NULL::bigint);
-- two untyped literals are ambiguous between the two forms (42725): one
-- needs a type
SELECT streamforge.units_to_time(NULL, '1 second');
SELECT streamforge.units_to_time('tf_none', 1500);
SELECT streamforge.units_to_time('tf_missing', 1500);
-- round trip over the watermark
SELECT streamforge.units_to_time('tf_big', streamforge.watermark('tf_big')) = streamforge.watermark_ts('tf_big') AS same;

-- advance_to_now of one partition with an interval delay: the progress
-- is the bigint form's, clock_now('ms') - 3600000, between the clock read
-- before and after
CREATE TEMP TABLE clock (before bigint, after bigint);
INSERT INTO clock SELECT streamforge.clock_now('ms'), NULL;
SELECT count(*) FROM streamforge.advance_to_now('tf_ivl', 'b', interval '1 hour');
SELECT count(*) FROM streamforge.advance_to_now('tf_txt', 'b', '1 hour');
SELECT count(*) FROM streamforge.advance_to_now('tf_big', 'b', 3600000, 'ms');
UPDATE clock SET after = streamforge.clock_now('ms');
SELECT p.n, t.progress BETWEEN c.before - 3600000 AND c.after - 3600000 AS in_range
  FROM clock AS c, unnest(ARRAY['tf_big', 'tf_ivl', 'tf_txt']) AS p(n),
       streamforge.partitions(p.n) AS t
 WHERE t.partition = 'b' ORDER BY 1;
-- digits: units of ms, as the bigint form's default unit
SELECT count(*) FROM streamforge.advance_to_now('tf_txt', 'a', '5000');
SELECT count(*) FROM streamforge.advance_to_now('tf_txt', 'a', delay => '1 minute');
SELECT count(*) FROM streamforge.advance_to_now('tf_ivl', 'a', NULL::interval);
SELECT count(*) FROM streamforge.advance_to_now('tf_ivl', 'a', interval '-1 second');
SELECT count(*) FROM streamforge.advance_to_now('tf_none', 'a', interval '1 second');
SELECT count(*) FROM streamforge.advance_to_now('tf_none', 'a', '1 second');

-- several pipelines: every partition, including one added later, at one
-- instant; one row per pipeline, each once, in byte order
SELECT count(*) FROM streamforge.add_partition('tf_ivl', 'c');
DELETE FROM clock;
INSERT INTO clock SELECT streamforge.clock_now('ms'), NULL;
SELECT pipeline FROM streamforge.advance_to_now(ARRAY['tf_ivl', 'tf_big', 'tf_ivl'], interval '30 minutes');
UPDATE clock SET after = streamforge.clock_now('ms');
SELECT p.n, t.partition, t.progress BETWEEN c.before - 1800000 AND c.after - 1800000 AS in_range
  FROM clock AS c, unnest(ARRAY['tf_big', 'tf_ivl']) AS p(n),
       streamforge.partitions(p.n) AS t ORDER BY 1, 2;
SELECT count(DISTINCT t.progress) AS one_instant
  FROM unnest(ARRAY['tf_big', 'tf_ivl']) AS p(n), streamforge.partitions(p.n) AS t;
-- progress never goes down: tf_txt's partition a stays at now - 5 s
SELECT pipeline FROM streamforge.advance_to_now(ARRAY['tf_txt'], interval '1 hour');
SELECT t.partition, t.progress > c.before - 3600000 AS kept
  FROM clock AS c, streamforge.partitions('tf_txt') AS t ORDER BY 1;
-- an untyped array literal is an array too; the default delay is zero
SELECT pipeline FROM streamforge.advance_to_now('{tf_big}');
SELECT count(*) FROM streamforge.advance_to_now(ARRAY[]::text[]);
SELECT count(*) FROM streamforge.advance_to_now(ARRAY['tf_big', 'tf_none']);
SELECT count(*) FROM streamforge.advance_to_now(ARRAY['tf_big', NULL]);
SELECT count(*) FROM streamforge.advance_to_now(NULL::text[]);
SELECT count(*) FROM streamforge.advance_to_now(ARRAY['tf_big'], NULL);
SELECT count(*) FROM streamforge.advance_to_now(ARRAY['tf_big'], '-1 second');
SELECT count(*) FROM streamforge.advance_to_now(ARRAY[['tf_big']]);
SELECT count(*) FROM streamforge.advance_to_now(ARRAY['tf_missing']);
-- nothing was advanced by the calls that failed
SELECT t.progress IS NULL AS untouched FROM streamforge.partitions('tf_none') AS t;

-- tick_pipelines: tick of each (with or without a time unit)
SELECT * FROM streamforge.tick_pipelines(ARRAY['tf_none', 'tf_big', 'tf_none']);
SELECT * FROM streamforge.tick_pipelines(ARRAY[]::text[]);
SELECT * FROM streamforge.tick_pipelines(ARRAY['tf_big', NULL]);
SELECT * FROM streamforge.tick_pipelines(NULL);
SELECT * FROM streamforge.tick_pipelines(ARRAY['tf_missing']);

-- scheduling without pg_cron: 55000, and no jobs to list
SELECT streamforge.schedule_advance(ARRAY['tf_big'], '* * * * *', interval '5 seconds');
SELECT streamforge.schedule_advance('tf_big', 'a', '* * * * *', interval '5 seconds');
SELECT streamforge.schedule_advance('tf_big', 'a', '* * * * *', '5 seconds');
SELECT streamforge.schedule_tick(ARRAY['tf_big'], '* * * * *');
SELECT streamforge.unschedule_advance(ARRAY['tf_big']);
SELECT streamforge.unschedule_tick(ARRAY['tf_big']);
SELECT streamforge.schedule_tick(ARRAY[]::text[], '* * * * *');
SELECT streamforge.schedule_tick(NULL, '* * * * *');
SELECT streamforge.schedule_advance(ARRAY['tf_big'], NULL);
SELECT * FROM streamforge.scheduled_jobs();

SELECT streamforge.drop_pipeline(n)
  FROM unnest(ARRAY['tf_big', 'tf_ivl', 'tf_txt', 'tf_none']) AS u(n);
