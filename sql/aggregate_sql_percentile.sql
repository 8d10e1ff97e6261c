-- create_aggregate with percentiles and arg-max (0.4.0, issue 44, items 2,
-- 3 and 5; docs/sql-aggregates.md): percentile_cont(p) and
-- percentile_disc(p) WITHIN GROUP (ORDER BY x) (exact: the values kept),
-- streamforge.approx_percentile(x, p) (the sketch, within 1%),
-- streamforge.max_by(x, y) and min_by(x, y).  Typed view columns, the
-- same values as the query run by PostgreSQL over the table (randomized
-- rows, setseed: out of order and late within the lateness, NULLs, buckets
-- of a few rows to more than the sketch's 256 exact values), a rollback,
-- and the refusals.
SET TimeZone = 'UTC';
CREATE SCHEMA ap;
CREATE TABLE ap.bids (id bigserial PRIMARY KEY, auction integer NOT NULL,
                      price bigint NOT NULL, bidder integer, at timestamptz NOT NULL);
SELECT streamforge.create_aggregate('ap_bids', $$
    SELECT auction, count(*) AS bids,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY price) AS median,
           percentile_disc(0.9) WITHIN GROUP (ORDER BY price) AS p90,
           streamforge.approx_percentile(price, 0.99) AS p99,
           streamforge.max_by(bidder, price) AS winner,
           streamforge.min_by(price, bidder) AS price_of_first_bidder,
           percentile_disc(0.5) WITHIN GROUP (ORDER BY bidder) FILTER (WHERE price > 500) AS high_bidder
      FROM ap.bids
     GROUP BY auction, streamforge.tumble(at, interval '1 minute')
$$, lateness => interval '10 minutes');
SELECT ordinality, name, type, func, measure
  FROM streamforge.aggregate_columns('ap_bids');
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
 WHERE attrelid = 'ap_bids_live'::regclass AND attnum > 0 ORDER BY attnum;

-- hand-checked: auction 1, [12:00, 12:01): prices 100, 300, 200, 300 by
-- bidders 7, 8, NULL, 6: median 250, p90 300 (row ceil(3.6) = 4), p99
-- 300 (exact), winner: price 300 by 8 and 6: 6; price_of_first_bidder:
-- bidder 6: 300; high_bidder: no price above 500: NULL
INSERT INTO ap.bids (auction, price, bidder, at) VALUES
    (1, 100, 7, '2026-11-30 12:00:05'), (1, 300, 8, '2026-11-30 12:00:10'),
    (1, 200, NULL, '2026-11-30 12:00:20'), (1, 300, 6, '2026-11-30 12:00:30');
SELECT * FROM ap_bids_live ORDER BY auction, window_start;
-- a rollback leaves them as they were
BEGIN;
INSERT INTO ap.bids (auction, price, bidder, at) VALUES (1, 900, 1, '2026-11-30 12:00:40');
SELECT winner, high_bidder FROM ap_bids_live;
ROLLBACK;
SELECT winner, high_bidder FROM ap_bids_live;

-- randomized rows, compared with the query run by PostgreSQL
SELECT setseed(0.4403);
INSERT INTO ap.bids (auction, price, bidder, at)
SELECT a, (1 + floor(random() * random() * 100000))::bigint,
       CASE WHEN random() < 0.1 THEN NULL ELSE floor(random() * 50)::int END,
       '2026-11-30 12:00:00'::timestamptz
         + make_interval(secs => floor(random() * (CASE a WHEN 2 THEN 60 ELSE 300 END)))
  FROM generate_series(1, 3000) AS i, LATERAL (SELECT 1 + (i % 4) AS a) x
 ORDER BY random();
SELECT count(*) AS windows, max(t.bids) > 256 AS a_sketch_bucket FROM (
    SELECT auction, streamforge.tumble(at, interval '1 minute') AS ws, count(*) AS bids
      FROM ap.bids GROUP BY 1, 2) t;
CREATE TABLE ap.q AS
SELECT auction, streamforge.tumble(at, interval '1 minute') AS window_start, count(*) AS bids,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY price) AS median,
       percentile_disc(0.9) WITHIN GROUP (ORDER BY price) AS p90,
       percentile_disc(0.99) WITHIN GROUP (ORDER BY price) AS p99_exact,
       streamforge.max_by(bidder, price) AS winner,
       streamforge.min_by(price, bidder) AS price_of_first_bidder,
       percentile_disc(0.5) WITHIN GROUP (ORDER BY bidder) FILTER (WHERE price > 500) AS high_bidder
  FROM ap.bids GROUP BY 1, 2;
-- max_by against ORDER BY ... LIMIT 1, the tie rule included
SELECT count(*) AS winner_differs FROM ap.q
 WHERE winner IS DISTINCT FROM (
       SELECT b.bidder FROM ap.bids b WHERE b.auction = q.auction
          AND streamforge.tumble(b.at, interval '1 minute') = q.window_start
          AND b.bidder IS NOT NULL ORDER BY b.price DESC, b.bidder LIMIT 1);
-- the view against the query: every column but p99 equal, p99 within 1%
-- of the exact percentile_disc (exact up to 256 values)
SELECT count(*) AS rows_compared,
       count(*) FILTER (WHERE v.auction IS NULL OR q.auction IS NULL) AS missing,
       count(*) FILTER (WHERE (v.bids, v.median, v.p90, v.winner, v.price_of_first_bidder, v.high_bidder)
                        IS DISTINCT FROM (q.bids, q.median, q.p90, q.winner, q.price_of_first_bidder, q.high_bidder)) AS differ,
       count(*) FILTER (WHERE q.bids <= 256 AND v.p99 <> q.p99_exact) AS exact_p99_differs,
       count(*) FILTER (WHERE q.bids > 256) AS sketch_rows,
       count(*) FILTER (WHERE abs(v.p99 / q.p99_exact - 1) > 0.01) AS p99_beyond_1pct
  FROM ap_bids_live v FULL JOIN ap.q q ON v.auction = q.auction AND v.window_start = q.window_start;

-- refusals
SELECT streamforge.create_aggregate('ap_bad', $$
    SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY price DESC) AS m FROM ap.bids
     GROUP BY streamforge.tumble(at, interval '1 minute') $$);
SELECT streamforge.create_aggregate('ap_bad', $$
    SELECT percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY price) AS m FROM ap.bids
     GROUP BY streamforge.tumble(at, interval '1 minute') $$);
SELECT streamforge.create_aggregate('ap_bad', $$
    SELECT percentile_disc(auction / 10.0) WITHIN GROUP (ORDER BY price) AS m FROM ap.bids
     GROUP BY auction, streamforge.tumble(at, interval '1 minute') $$);
SELECT streamforge.create_aggregate('ap_bad', $$
    SELECT streamforge.approx_percentile(price, 0.1234567) AS m FROM ap.bids
     GROUP BY streamforge.tumble(at, interval '1 minute') $$);
SELECT streamforge.create_aggregate('ap_bad', $$
    SELECT streamforge.approx_percentile(price, 1.5) AS m FROM ap.bids
     GROUP BY streamforge.tumble(at, interval '1 minute') $$);
SELECT streamforge.create_aggregate('ap_bad', $$
    SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY at) AS m FROM ap.bids
     GROUP BY streamforge.tumble(at, interval '1 minute') $$);

SELECT streamforge.drop_aggregate('ap_bids');
DROP SCHEMA ap CASCADE;
