-- create_aggregate with streamforge.approx_count_distinct(x) (issue 44,
-- items 2 and 5, since branch h44b; docs/sql-aggregates.md, Measures):
-- the SQL aggregate, which PostgreSQL runs as the exact count(DISTINCT x),
-- mapped onto the engine's HyperLogLog sketch.  The view against the same
-- query run by PostgreSQL over the table (count(DISTINCT x)): equal up to
-- 1024 distinct values per bucket, within 4 relative standard errors
-- (4 * 0.81%) beyond; FILTER, NULLs, tumbling and hopping windows,
-- randomized rows out of order and late within the lateness, a rollback,
-- the refusals.
SET TimeZone = 'UTC';
CREATE SCHEMA ad;
CREATE TABLE ad.bids (id bigserial PRIMARY KEY, auction integer NOT NULL,
                      price bigint NOT NULL, bidder integer, at timestamptz NOT NULL);

-- run by PostgreSQL it is count(DISTINCT x): NULLs skipped, 0 for none
SELECT streamforge.approx_count_distinct(x) AS n, count(DISTINCT x) AS exact
  FROM (VALUES (1), (2), (2), (NULL), (3)) AS v(x);
SELECT streamforge.approx_count_distinct(x) FROM (VALUES (NULL::bigint)) AS v(x);
SELECT streamforge.approx_count_distinct(x) FROM (SELECT 1::bigint WHERE false) AS v(x);

SELECT streamforge.create_aggregate('ad_bids', $$
    SELECT auction, count(*) AS bids,
           streamforge.approx_count_distinct(bidder) AS bidders,
           streamforge.approx_count_distinct(price) FILTER (WHERE price > 500) AS high_prices,
           count(DISTINCT bidder) AS bidders_exact
      FROM ad.bids
     GROUP BY auction, streamforge.tumble(at, interval '1 minute')
$$, lateness => interval '10 minutes');
SELECT streamforge.create_aggregate('ad_hop', $$
    SELECT streamforge.approx_count_distinct(bidder) AS bidders
      FROM ad.bids
     GROUP BY streamforge.hop(at, interval '2 minutes', interval '1 minute')
$$, lateness => interval '10 minutes');
SELECT ordinality, name, type, func, measure
  FROM streamforge.aggregate_columns('ad_bids');
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
 WHERE attrelid = 'ad_bids_live'::regclass AND attnum > 0 ORDER BY attnum;

-- hand-checked: auction 1, [12:00, 12:01): bidders 7, 8, NULL, 7 (2
-- distinct); prices 100, 600, 600, 700: above 500, 2 distinct
INSERT INTO ad.bids (auction, price, bidder, at) VALUES
    (1, 100, 7, '2026-11-30 12:00:05'), (1, 600, 8, '2026-11-30 12:00:10'),
    (1, 600, NULL, '2026-11-30 12:00:20'), (1, 700, 7, '2026-11-30 12:00:30');
SELECT * FROM ad_bids_live ORDER BY auction, window_start;
-- a rollback leaves them as they were
BEGIN;
INSERT INTO ad.bids (auction, price, bidder, at) VALUES (1, 900, 1, '2026-11-30 12:00:40');
SELECT bidders, high_prices FROM ad_bids_live;
ROLLBACK;
SELECT bidders, high_prices FROM ad_bids_live;

-- randomized rows in three statements (the later ones partly late),
-- buckets from a few distinct values to thousands: auction 2's minutes
-- hold 2,000 rows of bidders from 0 to 99,999 each
SELECT setseed(0.4404);
INSERT INTO ad.bids (auction, price, bidder, at)
SELECT a, (1 + floor(random() * 1000))::bigint,
       CASE WHEN random() < 0.1 THEN NULL
            WHEN a = 2 THEN floor(random() * 100000)::int
            ELSE floor(random() * (CASE a WHEN 3 THEN 2000 ELSE 50 END))::int END,
       '2026-11-30 12:00:00'::timestamptz
         + make_interval(secs => floor(random() * (CASE a WHEN 2 THEN 120 ELSE 300 END)))
  FROM generate_series(1, 6000) AS i, LATERAL (SELECT 1 + (i % 4) AS a) x
 WHERE i <= 3000
 ORDER BY random();
INSERT INTO ad.bids (auction, price, bidder, at)
SELECT 2, (1 + floor(random() * 1000))::bigint, floor(random() * 100000)::int,
       '2026-11-30 12:00:00'::timestamptz + make_interval(secs => floor(random() * 120))
  FROM generate_series(1, 3000) AS i ORDER BY random();
INSERT INTO ad.bids (auction, price, bidder, at)
SELECT 1 + (i % 4), (1 + floor(random() * 1000))::bigint, floor(random() * 3000)::int,
       '2026-11-30 12:00:00'::timestamptz + make_interval(secs => floor(random() * 300))
  FROM generate_series(1, 2000) AS i ORDER BY random();
CREATE TABLE ad.q AS
SELECT auction, streamforge.tumble(at, interval '1 minute') AS window_start, count(*) AS bids,
       count(DISTINCT bidder) AS bidders,
       count(DISTINCT price) FILTER (WHERE price > 500) AS high_prices,
       streamforge.approx_count_distinct(bidder) AS bidders_sql
  FROM ad.bids GROUP BY 1, 2;
SELECT count(*) AS windows, count(*) FILTER (WHERE bidders > 1024) AS sketch_buckets,
       count(*) FILTER (WHERE high_prices > 1024) AS sketch_filter_buckets,
       count(*) FILTER (WHERE bidders_sql <> bidders) AS sql_differs
  FROM ad.q;
-- the view against the query: exact up to 1024, within 4 * 0.81% beyond
SELECT count(*) AS rows_compared,
       count(*) FILTER (WHERE v.auction IS NULL OR q.auction IS NULL) AS missing,
       count(*) FILTER (WHERE (v.bids, v.bidders_exact) IS DISTINCT FROM (q.bids, q.bidders)) AS differ,
       count(*) FILTER (WHERE q.bidders <= 1024 AND v.bidders <> q.bidders) AS exact_differs,
       count(*) FILTER (WHERE q.high_prices <= 1024 AND v.high_prices IS DISTINCT FROM q.high_prices) AS exact_filter_differs,
       count(*) FILTER (WHERE q.bidders > 1024 AND v.bidders = q.bidders) AS sketch_equal,
       count(*) FILTER (WHERE abs(v.bidders::float8 / q.bidders - 1) > 4 * 0.0081) AS beyond_4_errors
  FROM ad_bids_live v FULL JOIN ad.q q ON v.auction = q.auction AND v.window_start = q.window_start;
-- the hopping windows: every window of two minutes, against the query
SELECT count(*) AS rows_compared,
       count(*) FILTER (WHERE v.window_start IS NULL OR q.ws IS NULL) AS missing,
       count(*) FILTER (WHERE q.n > 1024) AS sketch_rows,
       count(*) FILTER (WHERE q.n <= 1024 AND v.bidders <> q.n) AS exact_differs,
       count(*) FILTER (WHERE abs(v.bidders::float8 / q.n - 1) > 4 * 0.0081) AS beyond_4_errors
  FROM ad_hop_live v
  FULL JOIN (SELECT w.ws, count(DISTINCT b.bidder) AS n
               FROM (SELECT DISTINCT streamforge.tumble(at, interval '1 minute') AS ws FROM ad.bids
                     UNION SELECT streamforge.tumble(at, interval '1 minute') - interval '1 minute' FROM ad.bids) AS w
               JOIN ad.bids AS b ON b.at >= w.ws AND b.at < w.ws + interval '2 minutes'
              GROUP BY w.ws) AS q ON v.window_start = q.ws;

-- refusals: DISTINCT inside it, and a second argument
SELECT streamforge.create_aggregate('ad_bad', $$
    SELECT streamforge.approx_count_distinct(DISTINCT bidder) AS m FROM ad.bids
     GROUP BY streamforge.tumble(at, interval '1 minute') $$);
SELECT streamforge.create_aggregate('ad_bad', $$
    SELECT streamforge.approx_count_distinct(bidder ORDER BY price) AS m FROM ad.bids
     GROUP BY streamforge.tumble(at, interval '1 minute') $$);

SELECT streamforge.drop_aggregate('ad_bids');
SELECT streamforge.drop_aggregate('ad_hop');
DROP SCHEMA ad CASCADE;
