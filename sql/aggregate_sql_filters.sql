-- FILTER and argument expressions with SQL's NULL semantics (issue 38,
-- defect 5, the part that needs no nullable measure): any boolean FILTER
-- of count(*) (AND, OR, NOT, CASE, IS NULL, comparisons over nullable
-- columns: Nexmark q17's count(*) FILTER (WHERE price >= 10000 AND price
-- < 1000000)) is count_if over CASE WHEN f THEN 1 ELSE 0 END; an argument
-- that cannot be NULL (COALESCE with a NOT NULL argument, CASE with an
-- ELSE, (a AND b)::int over NOT NULL columns) is a NOT NULL measure.
-- Compared with PostgreSQL's own GROUP BY over rows with NULLs in every
-- nullable position.
SET client_min_messages = warning;
SET TimeZone = 'UTC';
CREATE TABLE bids (id integer PRIMARY KEY, auction text NOT NULL, price bigint, qty integer NOT NULL,
                   flag boolean, at timestamptz NOT NULL);
SELECT streamforge.create_aggregate('bid_stats', $$
    SELECT auction, count(*) AS n,
           count(*) FILTER (WHERE price >= 10000 AND price < 1000000) AS mid,
           count(*) FILTER (WHERE price < 10000) AS low,
           count(*) FILTER (WHERE qty > 2) AS many,
           count(*) FILTER (WHERE flag) AS flagged,
           count(*) FILTER (WHERE flag IS NOT TRUE OR price IS NULL) AS other,
           count(*) FILTER (WHERE CASE WHEN qty > 1 THEN price > 5 END) AS cased,
           count(*) FILTER (WHERE NOT (price > 100 OR qty = 1)) AS negated,
           sum(COALESCE(price, 0)) AS total,
           sum((qty > 1 AND qty < 5)::integer) AS in_range,
           max(CASE WHEN qty > 3 THEN qty ELSE 0 END) AS big,
           min(GREATEST(qty, price)) AS least_greatest,
           avg(COALESCE(price, -1)) AS mean
      FROM bids
     GROUP BY auction, streamforge.tumble(at, interval '1 minute')
$$, out_of_orderness => interval '0 seconds');
-- one measure per distinct expression, count_if for every FILTER
SELECT name, func, measure FROM streamforge.aggregate_columns('bid_stats') ORDER BY ordinality;
INSERT INTO bids VALUES
    (1, 'a', 20000, 1, true, '2026-11-30 12:00:01+00'),
    (2, 'a', NULL, 3, NULL, '2026-11-30 12:00:02+00'),
    (3, 'a', 5, 4, false, '2026-11-30 12:00:03+00'),
    (4, 'b', NULL, 1, NULL, '2026-11-30 12:00:04+00'),
    (5, 'b', 2000000, 5, true, '2026-11-30 12:00:05+00'),
    (6, 'a', 999999, 2, NULL, '2026-11-30 12:01:06+00'),   -- finalizes 12:00 mid-statement
    (7, 'c', NULL, 1, false, '2026-11-30 12:01:07+00'),
    (8, 'a', 10000, 2, true, '2026-11-30 12:01:08+00');
INSERT INTO bids VALUES
    (9, 'c', NULL, 2, NULL, '2026-11-30 12:01:09+00'),
    (10, 'b', 100, 1, false, '2026-11-30 12:01:10+00'),
    (11, 'b', 101, 9, true, '2026-11-30 12:02:11+00');
CREATE VIEW bid_expected AS
    SELECT auction, streamforge.tumble(at, interval '1 minute') AS window_start, count(*) AS n,
           count(*) FILTER (WHERE price >= 10000 AND price < 1000000) AS mid,
           count(*) FILTER (WHERE price < 10000) AS low,
           count(*) FILTER (WHERE qty > 2) AS many,
           count(*) FILTER (WHERE flag) AS flagged,
           count(*) FILTER (WHERE flag IS NOT TRUE OR price IS NULL) AS other,
           count(*) FILTER (WHERE CASE WHEN qty > 1 THEN price > 5 END) AS cased,
           count(*) FILTER (WHERE NOT (price > 100 OR qty = 1)) AS negated,
           sum(COALESCE(price, 0)) AS total,
           sum((qty > 1 AND qty < 5)::integer) AS in_range,
           max(CASE WHEN qty > 3 THEN qty ELSE 0 END) AS big,
           min(GREATEST(qty, price)) AS least_greatest,
           avg(COALESCE(price, -1)) AS mean
      FROM bids GROUP BY 1, 2;
-- the emitted windows and the live ones, both ways, as text
SELECT (SELECT count(*) FROM bid_stats) AS emitted,
       NOT EXISTS (SELECT (s.*)::text FROM (SELECT auction, window_start, n, mid, low, many, flagged, other, cased,
                                                  negated, total, in_range, big, least_greatest, mean FROM bid_stats) AS s
                   EXCEPT SELECT (e.*)::text FROM bid_expected AS e) AS emitted_same,
       NOT EXISTS ((SELECT (e.*)::text FROM bid_expected AS e)
                   EXCEPT (SELECT (s.*)::text FROM (SELECT auction, window_start, n, mid, low, many, flagged, other, cased,
                                                          negated, total, in_range, big, least_greatest, mean FROM bid_stats_live
                                                    UNION ALL
                                                    SELECT auction, window_start, n, mid, low, many, flagged, other, cased,
                                                          negated, total, in_range, big, least_greatest, mean FROM bid_stats
                                                     WHERE final) AS s)) AS all_same;
SELECT auction, window_start, n, mid, low, many, flagged, other, cased, negated, total, in_range, big,
       least_greatest, mean, final
  FROM bid_stats ORDER BY window_start, auction;
SELECT * FROM bid_expected WHERE window_start < '2026-11-30 12:02+00' ORDER BY window_start, auction;

-- accepted since the rest of defect 5 (nullable measures; refused with
-- 0A000 before): an aggregate of a nullable expression in a measures
-- pipeline, FILTER on another aggregate than count(*), a CASE without ELSE
-- (aggregate_sql_nullable and random_aggregate_sql_nullable check their
-- values); the measures they get
SELECT streamforge.create_aggregate('bid_nullable', $$
    SELECT auction, count(*) FILTER (WHERE qty > 1) AS n, sum(price) AS s FROM bids
     GROUP BY auction, streamforge.tumble(at, interval '1 minute')$$);
SELECT measures, aggregates FROM streamforge.pipeline_info WHERE name = 'bid_nullable';
SELECT streamforge.drop_aggregate('bid_nullable');
SELECT streamforge.create_aggregate('bid_nullable', $$
    SELECT auction, sum(qty) FILTER (WHERE price > 1) AS s FROM bids
     GROUP BY auction, streamforge.tumble(at, interval '1 minute')$$);
SELECT measures, aggregates FROM streamforge.pipeline_info WHERE name = 'bid_nullable';
SELECT streamforge.drop_aggregate('bid_nullable');
SELECT streamforge.create_aggregate('bid_nullable', $$
    SELECT auction, var_pop(CASE WHEN qty > 1 THEN qty END) AS s FROM bids
     GROUP BY auction, streamforge.tumble(at, interval '1 minute')$$);
SELECT measures, aggregates FROM streamforge.pipeline_info WHERE name = 'bid_nullable';
SELECT streamforge.drop_aggregate('bid_nullable');

-- session windows: a row that bridges two sessions merges them, and the
-- merged state is the FILTERs' over both (compared with a gaps-and-islands
-- GROUP BY: a session starts at a row more than 30 seconds after the
-- previous one of its auction)
CREATE TABLE sbids (id integer PRIMARY KEY, auction text NOT NULL, price bigint, qty integer NOT NULL,
                    at timestamptz NOT NULL);
SELECT streamforge.create_aggregate('sbid_stats', $$
    SELECT auction, count(*) AS n,
           count(*) FILTER (WHERE price >= 10000 AND price < 1000000) AS mid,
           count(*) FILTER (WHERE price IS NULL OR qty > 2) AS odd,
           sum(COALESCE(price, 0)) AS total
      FROM sbids
     GROUP BY auction, streamforge.session(at, interval '30 seconds')
$$, out_of_orderness => interval '10 minutes');
INSERT INTO sbids VALUES
    (1, 'a', 20000, 1, '2026-11-30 12:00:00+00'),
    (2, 'a', NULL, 3, '2026-11-30 12:00:50+00'),
    (3, 'b', 5, 1, '2026-11-30 12:00:10+00');
SELECT auction, window_start, n, mid, odd, total FROM sbid_stats_live ORDER BY auction, window_start;
INSERT INTO sbids VALUES
    (4, 'a', 500000, 4, '2026-11-30 12:00:25+00'),   -- bridges a's two sessions
    (5, 'b', NULL, 1, '2026-11-30 12:00:35+00'),
    (6, 'b', 30000, 9, '2026-11-30 12:02:00+00');
CREATE VIEW sbid_expected AS
    SELECT auction, min(at) AS window_start, count(*) AS n,
           count(*) FILTER (WHERE price >= 10000 AND price < 1000000) AS mid,
           count(*) FILTER (WHERE price IS NULL OR qty > 2) AS odd,
           sum(COALESCE(price, 0)) AS total
      FROM (SELECT *, sum(CASE WHEN at - prev > interval '30 seconds' THEN 1 ELSE 0 END)
                          OVER (PARTITION BY auction ORDER BY at) AS session
              FROM (SELECT *, lag(at) OVER (PARTITION BY auction ORDER BY at) AS prev FROM sbids) AS l) AS s
     GROUP BY auction, session;
SELECT auction, window_start, n, mid, odd, total FROM sbid_stats_live ORDER BY auction, window_start;
SELECT auction, window_start, n, mid, odd, total FROM sbid_expected ORDER BY auction, window_start;
SELECT NOT EXISTS ((SELECT auction, window_start, n, mid, odd, total FROM sbid_stats_live)
                   EXCEPT (SELECT * FROM sbid_expected))
   AND NOT EXISTS ((SELECT * FROM sbid_expected)
                   EXCEPT (SELECT auction, window_start, n, mid, odd, total FROM sbid_stats_live)) AS same;
SELECT streamforge.drop_aggregate('sbid_stats');
DROP VIEW sbid_expected;
DROP TABLE sbids;

SELECT streamforge.drop_aggregate('bid_stats');
DROP VIEW bid_expected;
DROP TABLE bids;
