-- create_aggregate over nullable columns and FILTER on every aggregate
-- (issue 38, defect 5; docs/sql-aggregates.md, "NULLs and FILTER").  Every
-- aggregate ignores NULLs as PostgreSQL's do; count(*) counts rows; an
-- aggregate that saw no value is NULL (count 0); agg(x) FILTER (WHERE f)
-- is agg over CASE WHEN f THEN x END.  The expected values were worked
-- out by hand (comments); each view is printed next to the same GROUP BY
-- run by PostgreSQL.  0.3.0 refused every query here with 0A000.
SET client_min_messages = warning;
SET TimeZone = 'UTC';
CREATE TABLE pay (id integer PRIMARY KEY, k text NOT NULL, amount integer, tip bigint,
                  ok boolean, at timestamptz NOT NULL);
SELECT streamforge.create_aggregate('pay_stats', $$
    SELECT k, count(*) AS n, count(amount) AS c_amount, sum(amount) AS s_amount,
           avg(amount) AS a_amount, min(tip) AS min_tip, max(tip) AS max_tip,
           var_pop(amount) AS vp, var_samp(amount) AS vs, stddev_pop(amount) AS sp,
           stddev_samp(amount) AS ss,
           sum(amount) FILTER (WHERE ok) AS s_ok, count(tip) FILTER (WHERE amount > 10) AS c_big,
           avg(tip) FILTER (WHERE ok IS NOT TRUE) AS a_not_ok,
           max(amount) FILTER (WHERE tip IS NULL) AS mx_no_tip
      FROM pay GROUP BY k, streamforge.tumble(at, interval '1 minute')
$$, out_of_orderness => interval '10 seconds');
-- a measures pipeline: 1 first (the first measure is never nullable), then
-- one nullable measure per distinct nullable expression; count(amount) is
-- count(m2), a count of its non-NULL values
SELECT measures, aggregates FROM streamforge.pipeline_info WHERE name = 'pay_stats';
INSERT INTO pay VALUES
    -- x@12:00: amounts 10, NULL, 30; tips NULL, 5, 7; ok t, NULL, f
    (1, 'x', 10, NULL, true, '2026-11-30 12:00:01+00'),
    (2, 'x', NULL, 5, NULL, '2026-11-30 12:00:02+00'),
    (3, 'x', 30, 7, false, '2026-11-30 12:00:03+00'),
    -- y@12:00: only NULLs
    (4, 'y', NULL, NULL, NULL, '2026-11-30 12:00:04+00'),
    -- z@12:00: one amount (sample variance NULL)
    (5, 'z', 4, 1, true, '2026-11-30 12:00:05+00'),
    -- x@12:01: past 12:01:10, x@12:00 is emitted in the middle of the statement
    (6, 'x', NULL, NULL, true, '2026-11-30 12:01:20+00'),
    (7, 'x', 2, NULL, NULL, '2026-11-30 12:01:21+00');
-- x@12:00: n 3, count 2, sum 40, avg 20, min tip 5, max tip 7, var_pop 100,
--   var_samp 200, stddev_pop 10, stddev_samp 14.14..., sum FILTER (ok) 10,
--   count(tip) FILTER (amount > 10) 1 (row 3), avg(tip) FILTER (ok IS NOT
--   TRUE) (5 + 7) / 2 = 6, max(amount) FILTER (tip IS NULL) 10;
-- y@12:00: n 1, counts 0, everything else NULL;
-- z@12:00: n 1, count 1, sum 4, avg 4, var_pop 0, var_samp NULL, s_ok 4,
--   c_big 0, a_not_ok NULL, mx_no_tip NULL;
-- x@12:01: n 2, count 1, sum 2, min/max tip NULL, s_ok NULL (row 6's
--   amount is NULL, row 7 is not ok), c_big 0, a_not_ok NULL, mx_no_tip 2.
-- live: the window still open (the 12:00 ones are final, lateness 0)
SELECT * FROM pay_stats_live ORDER BY k, window_start;
-- PostgreSQL's GROUP BY
SELECT k, streamforge.tumble(at, interval '1 minute') AS window_start,
       count(*) AS n, count(amount) AS c_amount, sum(amount) AS s_amount,
       avg(amount) AS a_amount, min(tip) AS min_tip, max(tip) AS max_tip,
       var_pop(amount) AS vp, var_samp(amount) AS vs, stddev_pop(amount) AS sp,
       stddev_samp(amount) AS ss,
       sum(amount) FILTER (WHERE ok) AS s_ok, count(tip) FILTER (WHERE amount > 10) AS c_big,
       avg(tip) FILTER (WHERE ok IS NOT TRUE) AS a_not_ok,
       max(amount) FILTER (WHERE tip IS NULL) AS mx_no_tip
  FROM pay GROUP BY 1, 2 ORDER BY 1, 2;
-- the emitted results: the 12:00 windows, final in the middle of the
-- statement, as PostgreSQL's rows above
SELECT * FROM pay_stats ORDER BY k, window_start;

-- a nullable expression alone (0.3.0 filtered its NULL rows out, so an
-- all-NULL group had no row; PostgreSQL's GROUP BY has one, with NULL)
SELECT streamforge.create_aggregate('pay_tips', $$
    SELECT k, sum(tip) AS tips, count(tip) AS c FROM pay
     GROUP BY k, streamforge.tumble(at, interval '1 minute')
$$);
INSERT INTO pay VALUES (8, 'y', 1, NULL, NULL, '2026-11-30 12:02:00+00'),
                       (9, 'y', 1, 3, NULL, '2026-11-30 12:02:30+00');
-- y@12:02: tips 3, c 1 (the rows of before the aggregate are not its)
SELECT k, window_start, tips, c FROM pay_tips_live ORDER BY k, window_start;
INSERT INTO pay VALUES (10, 'w', 1, NULL, NULL, '2026-11-30 12:02:00+00');
SELECT k, window_start, tips, c FROM pay_tips_live WHERE k = 'w';

-- session windows: a row whose argument is NULL extends its session as in
-- SQL; sessions of NULLs only merge into NULL aggregates
SELECT streamforge.create_aggregate('pay_sessions', $$
    SELECT k, count(*) AS n, sum(amount) AS s, min(amount) FILTER (WHERE ok) AS m
      FROM pay GROUP BY k, streamforge.session(at, interval '30 seconds')
$$);
INSERT INTO pay VALUES
    (11, 's', NULL, NULL, true, '2026-11-30 13:00:00+00'),
    (12, 's', 7, NULL, false, '2026-11-30 13:01:00+00'),
    (13, 't', NULL, NULL, NULL, '2026-11-30 13:00:00+00'),
    (14, 't', NULL, NULL, NULL, '2026-11-30 13:01:00+00');
-- two sessions each for s and t
SELECT k, window_start, window_end, n, s, m FROM pay_sessions_live ORDER BY k, window_start;
-- 13:00:30 touches both ([13:00:30, 13:01:00): sessions that meet merge):
-- s [13:00:00, 13:01:30) n 3, s 7 + 5 = 12, m 5 (rows 11 and 15 are ok,
-- 11's amount is NULL); t: n 3, s NULL, m NULL
INSERT INTO pay VALUES
    (15, 's', 5, NULL, true, '2026-11-30 13:00:30+00'),
    (16, 't', NULL, NULL, true, '2026-11-30 13:00:30+00');
SELECT k, window_start, window_end, n, s, m FROM pay_sessions_live ORDER BY k, window_start;

-- sliding windows with a FILTER over a nullable column
SELECT streamforge.create_aggregate('pay_hop', $$
    SELECT count(*) AS n, max(tip) FILTER (WHERE amount IS NOT NULL) AS mt
      FROM pay GROUP BY streamforge.hop(at, interval '2 minutes', interval '1 minute')
$$);
INSERT INTO pay VALUES (17, 'h', NULL, 9, NULL, '2026-11-30 14:00:30+00'),
                       (18, 'h', 1, 4, NULL, '2026-11-30 14:01:30+00');
-- [13:59, 14:01): n 1, mt NULL (row 17 has no amount); [14:00, 14:02): n 2,
-- mt 4; [14:01, 14:03): n 1, mt 4
SELECT window_start, window_end, n, mt FROM pay_hop_live ORDER BY window_start;

-- late rows of a nullable aggregate: value is the first measure (1)
SELECT streamforge.create_aggregate('pay_late', $$
    SELECT k, sum(tip) AS tips FROM pay GROUP BY k, streamforge.tumble(at, interval '1 minute')
$$, out_of_orderness => interval '0 seconds');
INSERT INTO pay VALUES (19, 'l', NULL, NULL, NULL, '2026-11-30 15:05:00+00'),
                       (20, 'l', NULL, NULL, NULL, '2026-11-30 15:00:00+00');
SELECT k, event_time, value, event_id FROM pay_late_late;
SELECT k, window_start, tips FROM pay_late_live;

-- the pipeline's own checkpoint restores, byte for byte
SELECT streamforge.restore('pay_stats', streamforge.checkpoint('pay_stats'));
CREATE TEMP TABLE ck AS SELECT streamforge.checkpoint('pay_stats') AS c;
SELECT streamforge.restore('pay_stats', (SELECT c FROM ck));
SELECT streamforge.checkpoint('pay_stats') = (SELECT c FROM ck) AS same_bytes;
SELECT k, window_start, n, c_amount, s_amount, vs, s_ok FROM pay_stats_live ORDER BY k, window_start;

SELECT streamforge.drop_aggregate(n)
  FROM unnest(ARRAY['pay_stats', 'pay_tips', 'pay_sessions', 'pay_hop', 'pay_late']) AS n;
DROP TABLE pay;
