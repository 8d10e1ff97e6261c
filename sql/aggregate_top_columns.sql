-- Top-N per window (issue 44, item 4) with an outer select list of
-- columns: SELECT auction, bids, rn FROM (... ROW_NUMBER() ... AS rn ...)
-- WHERE rn <= N makes <name>_top with those columns, in that order; the
-- changelog's rows keep every column of the aggregate.
SET client_min_messages = warning;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, MDY';
CREATE TABLE cbids (id bigserial PRIMARY KEY, auction integer NOT NULL,
                    price integer NOT NULL, ts timestamptz NOT NULL);
SELECT streamforge.create_aggregate('hotc', $$
    SELECT auction, t.bids, rn FROM (
        SELECT auction, count(*) AS bids, max(price) AS best,
               ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY bids DESC) AS rn
          FROM cbids
         GROUP BY auction, streamforge.tumble(ts, interval '1 minute')) AS t
     WHERE rn <= 2
$$, lateness => interval '1 minute');
\d hotc_top
SELECT spec -> 'top' -> 'columns' AS columns FROM streamforge.aggregate WHERE name = 'hotc';
INSERT INTO cbids (auction, price, ts) VALUES
    (1, 10, '2026-12-01 10:00:01+00'), (2, 11, '2026-12-01 10:00:02+00'),
    (2, 12, '2026-12-01 10:00:03+00'), (3, 13, '2026-12-01 10:00:04+00'),
    (3, 14, '2026-12-01 10:00:05+00'), (3, 15, '2026-12-01 10:00:06+00');
SELECT count(*) FROM streamforge.advance_ts('hotc', 'default', '2026-12-01 10:01:30+00');
-- auction 3 (3 bids), then 2 (2 bids)
SELECT * FROM hotc_top ORDER BY rn;
-- a late bid: auction 1 ties with 2 at 2 bids and wins the tie (smaller
-- auction), 2 leaves
INSERT INTO cbids (auction, price, ts) VALUES (1, 30, '2026-12-01 10:00:30+00');
SELECT * FROM hotc_top ORDER BY rn;
-- the changelog's rows have every column of the aggregate (best too)
SELECT seq, op, rank, old_rank, row ->> 'auction' AS auction, row ->> 'bids' AS bids,
       row ->> 'best' AS best, row ? 'window_end' AS has_window_end
  FROM streamforge.top_changelog WHERE pipeline = 'hotc' ORDER BY seq;
-- the view is the query's own ranking over the aggregate's rows
SELECT count(*) AS differs FROM (
    (SELECT * FROM hotc_top
     EXCEPT ALL
     SELECT auction, bids, rn FROM (SELECT *, row_number() OVER (PARTITION BY window_start, window_end
                                                                 ORDER BY bids DESC, auction) AS rn
                                      FROM hotc) x WHERE rn <= 2)
    UNION ALL
    (SELECT auction, bids, rn FROM (SELECT *, row_number() OVER (PARTITION BY window_start, window_end
                                                                 ORDER BY bids DESC, auction) AS rn
                                      FROM hotc) x WHERE rn <= 2
     EXCEPT ALL
     SELECT * FROM hotc_top)) d;
SELECT streamforge.drop_aggregate('hotc');

-- refused (0A000): a renamed column, an expression, another alias, a
-- column the subquery does not have
\set q_in ' FROM (SELECT auction, count(*) AS bids, row_number() OVER (PARTITION BY window_start ORDER BY count(*) DESC) AS rn FROM cbids GROUP BY auction, streamforge.tumble(ts, interval \'1 minute\')) AS t WHERE rn <= 2'
\set VERBOSITY default
SELECT streamforge.create_aggregate('hotr', 'SELECT auction, bids AS b' || :'q_in');
SELECT streamforge.create_aggregate('hotr', 'SELECT auction, bids + 1' || :'q_in');
SELECT streamforge.create_aggregate('hotr', 'SELECT x.auction' || :'q_in');
SELECT streamforge.create_aggregate('hotr', 'SELECT auction, price' || :'q_in');
SELECT count(*) AS left_behind FROM streamforge.aggregate WHERE name = 'hotr';
DROP TABLE cbids;
