-- Top-N per window (issue 44, item 4): create_aggregate's query in the
-- Flink SQL form, ROW_NUMBER() OVER (PARTITION BY <window> ORDER BY agg)
-- <= N; the view <name>_top and its changelog streamforge.top_changelog.
SET client_min_messages = warning;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, MDY';
CREATE TABLE bids (id bigserial PRIMARY KEY, auction integer NOT NULL,
                   bidder text NOT NULL, price integer NOT NULL,
                   ts timestamptz NOT NULL);

-- Nexmark q5-like: the two hottest auctions per minute (top 2 by count)
SELECT streamforge.create_aggregate('hot', $$
    SELECT * FROM (
        SELECT auction, count(*) AS bids, max(price) AS top_price,
               ROW_NUMBER() OVER (PARTITION BY streamforge.tumble(ts, interval '1 minute')
                                  ORDER BY count(*) DESC) AS rn
          FROM bids
         GROUP BY auction, streamforge.tumble(ts, interval '1 minute')) AS t
     WHERE rn <= 2
$$, lateness => interval '1 minute');
\d hot_top
SELECT spec -> 'top' AS top FROM streamforge.aggregate WHERE name = 'hot';

INSERT INTO bids (auction, bidder, price, ts) VALUES
    (1, 'a', 10, '2026-12-01 10:00:01+00'),
    (2, 'b', 11, '2026-12-01 10:00:02+00'),
    (2, 'c', 12, '2026-12-01 10:00:03+00'),
    (3, 'a', 13, '2026-12-01 10:00:04+00'),
    (3, 'b', 14, '2026-12-01 10:00:05+00'),
    (3, 'c', 15, '2026-12-01 10:00:06+00'),
    (1, 'a', 16, '2026-12-01 10:01:01+00');
SELECT count(*) FROM streamforge.advance_ts('hot', 'default', '2026-12-01 10:01:30+00');
-- [10:00, 10:01): auction 3 (3 bids), then 2 (2 bids); 1 (1 bid) is out
SELECT * FROM hot ORDER BY window_start, auction;
SELECT * FROM hot_top ORDER BY window_start, rn;
SELECT seq, op, window_start, rank, old_rank, row ->> 'auction' AS auction, row ->> 'bids' AS bids
  FROM streamforge.top_changelog WHERE pipeline = 'hot' ORDER BY seq;

-- late corrections: auction 1 gets 2 more bids in [10:00, 10:01) (3 bids,
-- ties with auction 3: the tie goes to the smaller auction, so 1 is
-- first, 3 second, and 2 leaves)
INSERT INTO bids (auction, bidder, price, ts) VALUES
    (1, 'b', 20, '2026-12-01 10:00:30+00'),
    (1, 'c', 21, '2026-12-01 10:00:31+00');
SELECT * FROM hot_top ORDER BY window_start, rn;
SELECT seq, op, window_start, rank, old_rank, row ->> 'auction' AS auction, row ->> 'bids' AS bids
  FROM streamforge.top_changelog WHERE pipeline = 'hot' AND seq > 2 ORDER BY seq;

-- a rolled back insert changes nothing
BEGIN;
INSERT INTO bids (auction, bidder, price, ts) VALUES
    (2, 'x', 1, '2026-12-01 10:00:50+00'),
    (2, 'y', 1, '2026-12-01 10:00:51+00');
SELECT * FROM hot_top ORDER BY window_start, rn;
ROLLBACK;
SELECT * FROM hot_top ORDER BY window_start, rn;
SELECT max(seq) FROM streamforge.top_changelog WHERE pipeline = 'hot';

-- the second window is emitted: auction 1 alone
SELECT count(*) FROM streamforge.advance_ts('hot', 'default', '2026-12-01 10:02:00+00');
SELECT * FROM hot_top ORDER BY window_start, rn;
SELECT seq, op, window_start, rank, old_rank, row ->> 'auction' AS auction, row ->> 'bids' AS bids
  FROM streamforge.top_changelog WHERE pipeline = 'hot' AND seq > 5 ORDER BY seq;

-- Nexmark q19-like: the top 2 bids' prices per auction and window
-- (partitioned by a grouping column, ordered ascending by an alias)
SELECT streamforge.create_aggregate('cheap', $$
    SELECT * FROM (
        SELECT auction, bidder, min(price) AS low,
               ROW_NUMBER() OVER (PARTITION BY window_start, window_end, auction
                                  ORDER BY low) AS rn
          FROM bids
         GROUP BY auction, bidder, streamforge.tumble(ts, interval '1 minute')) AS t
     WHERE rn < 3
$$, emit => 'final');
SELECT spec -> 'top' AS top FROM streamforge.aggregate WHERE name = 'cheap';
INSERT INTO bids (auction, bidder, price, ts) VALUES
    (7, 'a', 30, '2026-12-01 10:05:01+00'),
    (7, 'b', 25, '2026-12-01 10:05:02+00'),
    (7, 'c', 25, '2026-12-01 10:05:03+00'),
    (7, 'a', 20, '2026-12-01 10:05:04+00'),
    (8, 'a', 40, '2026-12-01 10:05:05+00'),
    (8, 'b', 41, '2026-12-01 10:06:05+00');
-- emit 'final': nothing before the windows are final
SELECT count(*) FROM cheap_top;
SELECT count(*) FROM streamforge.finish('cheap');
-- auction 7: a (20), then b and c at 25: b first (the tie rule); 8 alone
SELECT auction, bidder, window_start, low, final, rn FROM cheap_top ORDER BY window_start, auction, rn;
SELECT op, count(*) FROM streamforge.top_changelog WHERE pipeline = 'cheap' GROUP BY op;
-- the changelog in seq order: the windows in order, and in a window the
-- rows of one rank of different auctions (partitions) by their identity
-- (window, auction, bidder), whatever the plan of the diff
SELECT seq, op, window_start, rank, row ->> 'auction' AS auction, row ->> 'bidder' AS bidder
  FROM streamforge.top_changelog WHERE pipeline = 'cheap' ORDER BY seq;
-- the same ranks in two partitions, whose identities' jsonb order (its
-- keys by length: bidder first) is not the partitions' order: auction 8
-- (bidder a) comes before auction 7 (bidder b)
CREATE TABLE bids2 (LIKE bids INCLUDING ALL);
SELECT streamforge.create_aggregate('cheap2', $$
    SELECT * FROM (
        SELECT auction, bidder, min(price) AS low,
               ROW_NUMBER() OVER (PARTITION BY window_start, window_end, auction
                                  ORDER BY low) AS rn
          FROM bids2
         GROUP BY auction, bidder, streamforge.tumble(ts, interval '1 minute')) AS t
     WHERE rn < 3
$$);
INSERT INTO bids2 (auction, bidder, price, ts) VALUES
    (7, 'b', 30, '2026-12-01 10:05:01+00'),
    (8, 'a', 40, '2026-12-01 10:05:05+00'),
    (7, 'c', 35, '2026-12-01 10:05:06+00'),
    (8, 'c', 45, '2026-12-01 10:05:07+00');
SELECT count(*) FROM streamforge.finish('cheap2');
SELECT seq, op, window_start, rank, row ->> 'auction' AS auction, row ->> 'bidder' AS bidder
  FROM streamforge.top_changelog WHERE pipeline = 'cheap2' ORDER BY seq;
SELECT streamforge.drop_aggregate('cheap2');
DROP TABLE bids2;

-- the view equals PostgreSQL's own ROW_NUMBER() over the same rows
-- (tumble works in a plain query)
SELECT * FROM (
    SELECT auction, count(*) AS bids,
           ROW_NUMBER() OVER (PARTITION BY streamforge.tumble(ts, interval '1 minute')
                              ORDER BY count(*) DESC, auction) AS rn
      FROM bids WHERE ts < '2026-12-01 10:02:00+00'
     GROUP BY auction, streamforge.tumble(ts, interval '1 minute')) AS t
 WHERE rn <= 2
EXCEPT ALL
SELECT auction, bids, rn FROM hot_top;
SELECT count(*) FROM hot_top;

-- privileges: the view and the changelog follow the pipeline's
CREATE ROLE regress_sf_top_reader;
CREATE ROLE regress_sf_top_stranger;
GRANT USAGE ON SCHEMA streamforge TO regress_sf_top_reader, regress_sf_top_stranger;
SELECT streamforge.grant_privilege('hot', 'regress_sf_top_reader', 'read');
SET ROLE regress_sf_top_reader;
SELECT count(*) FROM hot_top;
SELECT pipeline, count(*) FROM streamforge.top_changelog GROUP BY pipeline;
RESET ROLE;
SET ROLE regress_sf_top_stranger;
SELECT count(*) FROM hot_top;
SELECT pipeline, count(*) FROM streamforge.top_changelog GROUP BY pipeline;
RESET ROLE;

-- drop_aggregate drops the view and the changes
SELECT streamforge.drop_aggregate('hot');
SELECT streamforge.drop_aggregate('cheap');
SELECT to_regclass('hot_top'), count(*) FROM streamforge.top_changelog;
-- refusals: 0A000 with the form in the hint; nothing is left behind
\set q_head 'SELECT * FROM (SELECT auction, bidder, count(*) AS n, '
\set q_group ' FROM bids GROUP BY auction, bidder, streamforge.tumble(ts, interval \'1 minute\')) AS t'
-- RANK() and DENSE_RANK(): ties would make the N rows more than N
SELECT streamforge.create_aggregate('r1', :'q_head' || 'rank() OVER (PARTITION BY window_start ORDER BY count(*) DESC) AS rn' || :'q_group' || ' WHERE rn <= 2');
-- two window functions
SELECT streamforge.create_aggregate('r2', :'q_head' || 'row_number() OVER (PARTITION BY window_start ORDER BY count(*)) AS rn, row_number() OVER (PARTITION BY window_start ORDER BY count(*) DESC) AS rn2' || :'q_group' || ' WHERE rn <= 2');
-- ORDER BY a grouping column, an expression of the table, two items
SELECT streamforge.create_aggregate('r3', :'q_head' || 'row_number() OVER (PARTITION BY window_start ORDER BY auction) AS rn' || :'q_group' || ' WHERE rn <= 2');
SELECT streamforge.create_aggregate('r3', :'q_head' || 'row_number() OVER (PARTITION BY window_start ORDER BY sum(price) DESC) AS rn' || :'q_group' || ' WHERE rn <= 2');
SELECT streamforge.create_aggregate('r3', :'q_head' || 'row_number() OVER (PARTITION BY window_start ORDER BY count(*) DESC, auction) AS rn' || :'q_group' || ' WHERE rn <= 2');
-- N not a constant, another condition, another comparison
SELECT streamforge.create_aggregate('r4', :'q_head' || 'row_number() OVER (PARTITION BY window_start ORDER BY count(*) DESC) AS rn' || :'q_group' || ' WHERE rn <= 1 + 1');
SELECT streamforge.create_aggregate('r4', :'q_head' || 'row_number() OVER (PARTITION BY window_start ORDER BY count(*) DESC) AS rn' || :'q_group' || ' WHERE rn <= 2 AND auction > 1');
SELECT streamforge.create_aggregate('r4', :'q_head' || 'row_number() OVER (PARTITION BY window_start ORDER BY count(*) DESC) AS rn' || :'q_group' || ' WHERE rn = 2');
SELECT streamforge.create_aggregate('r4', :'q_head' || 'row_number() OVER (PARTITION BY window_start ORDER BY count(*) DESC) AS rn' || :'q_group' || ' WHERE rn <= 0');
-- the outer select list is * or columns of the subquery, not renamed,
-- not expressions, not of another alias
SELECT streamforge.create_aggregate('r5', 'SELECT auction AS a, n FROM (SELECT auction, bidder, count(*) AS n, row_number() OVER (PARTITION BY window_start ORDER BY count(*) DESC) AS rn' || :'q_group' || ' WHERE rn <= 2');
-- PARTITION BY without the window, or by a column not in the select list
SELECT streamforge.create_aggregate('r6', :'q_head' || 'row_number() OVER (PARTITION BY auction ORDER BY count(*) DESC) AS rn' || :'q_group' || ' WHERE rn <= 2');
SELECT streamforge.create_aggregate('r6', :'q_head' || 'row_number() OVER (PARTITION BY window_start, price ORDER BY count(*) DESC) AS rn' || :'q_group' || ' WHERE rn <= 2');
SELECT streamforge.create_aggregate('r6', :'q_head' || 'row_number() OVER (PARTITION BY window_start, n ORDER BY count(*) DESC) AS rn' || :'q_group' || ' WHERE rn <= 2');
-- a GROUP BY column not in the select list (ties would not be ordered)
SELECT streamforge.create_aggregate('r7', 'SELECT * FROM (SELECT auction, count(*) AS n, row_number() OVER (PARTITION BY window_start ORDER BY count(*) DESC) AS rn' || :'q_group' || ' WHERE rn <= 2');
-- no name, a name of a column, a named window
SELECT streamforge.create_aggregate('r8', :'q_head' || 'row_number() OVER (PARTITION BY window_start ORDER BY count(*) DESC)' || :'q_group' || ' WHERE row_number <= 2');
SELECT streamforge.create_aggregate('r8', :'q_head' || 'row_number() OVER (PARTITION BY window_start ORDER BY count(*) DESC) AS bidder' || :'q_group' || ' WHERE bidder <= 2');
SELECT streamforge.create_aggregate('r8', $$
    SELECT * FROM (SELECT auction, bidder, count(*) AS n, row_number() OVER w AS rn
                     FROM bids GROUP BY auction, bidder, streamforge.tumble(ts, interval '1 minute')
                   WINDOW w AS (PARTITION BY streamforge.tumble(ts, interval '1 minute') ORDER BY count(*))) AS t
     WHERE rn <= 2 $$);
-- ROW_NUMBER() in an expression: not a top-N, a subquery (aggregate_plan)
SELECT streamforge.create_aggregate('r9', $$
    SELECT * FROM (SELECT auction, bidder, count(*) AS n,
                          row_number() OVER (PARTITION BY streamforge.tumble(ts, interval '1 minute') ORDER BY count(*)) + 1 AS rn
                     FROM bids GROUP BY auction, bidder, streamforge.tumble(ts, interval '1 minute')) AS t
     WHERE rn <= 2 $$);
SELECT count(*) FROM streamforge.pipeline_info WHERE name ~ '^r[0-9]$';

DROP TABLE bids;
REVOKE USAGE ON SCHEMA streamforge FROM regress_sf_top_reader, regress_sf_top_stranger;
DROP ROLE regress_sf_top_reader;
DROP ROLE regress_sf_top_stranger;
