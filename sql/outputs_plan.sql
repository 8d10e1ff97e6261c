-- The results-table statements of the sink cost one index lookup per
-- address whatever plan the planner would choose for a join: a call with
-- 10,000 changes to addresses the results table already holds completes
-- with hash and merge joins disabled.  (It once joined the addresses with
-- the table, and a nested loop over both sides took minutes.)  Not a
-- timing test: the statement_timeout is a generous guard against the
-- quadratic plan, far above what the call needs.
\set VERBOSITY sqlstate

-- The sink's statements are prepared and kept for the backend's lifetime,
-- so they are planned here, with hash and merge joins off, while the
-- results table is nearly empty; then the table grows.
SET enable_hashjoin = off;
SET enable_mergejoin = off;

-- [0,10) is ready at watermark 10 and can be corrected until 1000010
SELECT streamforge.create_pipeline('plan', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], 1000000);
SELECT streamforge.configure_outputs('plan');
SELECT count(*) FROM streamforge.advance('plan', 'p', 10);
-- a few small corrections of one key (the plans are built, then kept)
SELECT sum(l.c) AS changes FROM generate_series(0, 9) AS i,
       LATERAL (SELECT count(*) AS c
                  FROM streamforge.ingest('plan', 'p', i, 's' || i, 'x', 0, i)) AS l;
SELECT count(*) FROM streamforge.results WHERE pipeline = 'plan';

-- 10,000 keys: 10,000 upserts, 10,000 results rows
SELECT count(*) FROM streamforge.ingest_batch('plan',
    ARRAY(SELECT ROW('p', 10 + i, 'a' || i, 'k' || i, 1, i)::streamforge.delivery
            FROM generate_series(0, 9999) AS i));
-- and 20,000 rows of [10,20) that the corrections below do not touch
SELECT count(*) FROM streamforge.ingest_batch('plan',
    ARRAY(SELECT ROW('p', 10010 + i, 'o' || i, 'o' || i, 15, i)::streamforge.delivery
            FROM generate_series(0, 19999) AS i));
SELECT count(*) FROM streamforge.advance('plan', 'p', 20);
SELECT window_start, count(*) FROM streamforge.results
 WHERE pipeline = 'plan' GROUP BY 1 ORDER BY 1;

-- Before the fix each of these two calls took about 30 s here; now well
-- under a second.
SET statement_timeout = '15s';
-- the same 10,000 addresses again: a retraction and an upsert each, and
-- each address deleted from the results table before its row is written
SELECT count(*) FROM streamforge.ingest_batch('plan',
    ARRAY(SELECT ROW('p', 30010 + i, 'b' || i, 'k' || i, 2, i)::streamforge.delivery
            FROM generate_series(0, 9999) AS i));
-- and back: 10,000 retractions and upserts once more, to deleted-and-written rows
SELECT count(*) FROM streamforge.ingest_batch('plan',
    ARRAY(SELECT ROW('p', 40010 + i, 'c' || i, 'k' || i, 3, 1)::streamforge.delivery
            FROM generate_series(0, 9999) AS i));
RESET statement_timeout;

-- one row per address, with the last change (x: count 10, sum 45;
-- k<i>: count 3, sum i + i + 1)
SELECT key = 'x' AS x, count(*) AS rows, count(DISTINCT key) AS keys,
       min(count), max(count), sum(sum) AS total, min(seq), max(seq)
  FROM streamforge.results WHERE pipeline = 'plan' AND window_start = 0
 GROUP BY 1 ORDER BY 1;
SELECT count(*) AS rows_differing_from_visible FROM (
    SELECT window_name, key, window_start, window_end, count, sum, min, max
      FROM streamforge.results WHERE pipeline = 'plan'
    EXCEPT
    SELECT * FROM streamforge.visible('plan')) AS d;

SELECT streamforge.drop_pipeline('plan');
