-- create_aggregate's writers option (issue 46): 'serial' (the default) or
-- 'parallel', passed to the pipeline it creates.  A parallel aggregate
-- with two partitions gives the same views and checkpoint (but for the
-- "writers" key) as a serial one fed the same rows; one partition, a
-- retention or an unknown mode is refused.  Two sessions inserting at once
-- are test/specs/parallel_aggregate.spec.
SET client_min_messages = warning;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, MDY';
\set VERBOSITY default

CREATE TABLE ap_rows (id bigint PRIMARY KEY, page text NOT NULL,
                      amount integer NOT NULL, at timestamptz NOT NULL);
CREATE TABLE as_rows (LIKE ap_rows INCLUDING ALL);

-- the rows go to partition p0 or p1 by the parity of their id
SELECT streamforge.create_aggregate('ap', $$
    SELECT page, count(*) AS n, sum(amount) AS total
      FROM ap_rows
     GROUP BY page, streamforge.tumble(at, interval '1 minute')
$$, partitions => ARRAY['p0', 'p1'], partition => $$'p' || (id % 2)$$,
    lateness => interval '10 seconds', writers => 'parallel');
SELECT streamforge.create_aggregate('as_', $$
    SELECT page, count(*) AS n, sum(amount) AS total
      FROM as_rows
     GROUP BY page, streamforge.tumble(at, interval '1 minute')
$$, partitions => ARRAY['p0', 'p1'], partition => $$'p' || (id % 2)$$,
    lateness => interval '10 seconds');
SELECT name, streamforge.definition(name)->>'writers' AS writers, partitions
  FROM streamforge.pipeline_info WHERE name IN ('ap', 'as_') ORDER BY name;
SELECT l.lane, l.partition FROM streamforge.lane l
  JOIN streamforge.pipeline p ON p.id = l.pipeline_id WHERE p.name = 'ap'
 ORDER BY l.lane;

-- the same rows into both tables, one statement each, then one at a time
-- (a late one)
INSERT INTO ap_rows VALUES
    (1, '/a', 10, '2026-12-01 12:00:05+00'), (2, '/a', 20, '2026-12-01 12:00:15+00'),
    (3, '/b', 5, '2026-12-01 12:00:45+00'), (4, '/a', 1, '2026-12-01 12:01:30+00');
INSERT INTO as_rows VALUES
    (1, '/a', 10, '2026-12-01 12:00:05+00'), (2, '/a', 20, '2026-12-01 12:00:15+00'),
    (3, '/b', 5, '2026-12-01 12:00:45+00'), (4, '/a', 1, '2026-12-01 12:01:30+00');
SELECT count(*) FROM unnest(ARRAY['p0', 'p1']) p,
  streamforge.advance('ap', p,
    extract(epoch FROM timestamptz '2026-12-01 12:01:25+00')::bigint * 1000000);
SELECT count(*) FROM unnest(ARRAY['p0', 'p1']) p,
  streamforge.advance('as_', p,
    extract(epoch FROM timestamptz '2026-12-01 12:01:25+00')::bigint * 1000000);
INSERT INTO ap_rows VALUES (5, '/a', 100, '2026-12-01 12:00:20+00');
INSERT INTO as_rows VALUES (5, '/a', 100, '2026-12-01 12:00:20+00');
INSERT INTO ap_rows VALUES (6, '/b', 7, '2026-12-01 12:01:40+00');
INSERT INTO as_rows VALUES (6, '/b', 7, '2026-12-01 12:01:40+00');

-- the parallel aggregate's view, by hand: [12:00, 12:01) is final (the
-- watermark 12:01:25 passed its end plus 10 s: rows 1 and 2 on /a, 3 on
-- /b), row 5 came late; [12:01, 12:02) is live, not emitted yet (rows 4
-- and 6)
SELECT page, window_start, n, total, final FROM ap ORDER BY window_start, page;
SELECT page, window_start, n, total, final FROM ap_live ORDER BY window_start, page;
SELECT event_id, partition FROM ap_late;
-- the serial one's is the same, and so are the checkpoints
SELECT count(*) AS differing FROM (
    (SELECT page, window_start, window_end, n, total, final FROM ap
     EXCEPT ALL
     SELECT page, window_start, window_end, n, total, final FROM as_)
    UNION ALL
    (SELECT page, window_start, window_end, n, total, final FROM as_
     EXCEPT ALL
     SELECT page, window_start, window_end, n, total, final FROM ap)) d;
SELECT streamforge.inspect_checkpoint(streamforge.checkpoint('as_'))::jsonb =
       streamforge.inspect_checkpoint(streamforge.checkpoint('ap'))::jsonb
           #- '{definition,writers}' AS checkpoint_same;
SELECT partition, consumed_offset FROM streamforge.partitions('ap') ORDER BY partition;

-- refused: one partition (22023), an unknown mode (create_pipeline's
-- 22023), a retention (0A000, as create_pipeline refuses it); nothing is
-- left behind
\set VERBOSITY terse
CREATE TABLE ap_one_rows (id bigint PRIMARY KEY, at timestamptz NOT NULL);
SELECT streamforge.create_aggregate('ap_one', $$
    SELECT count(*) FROM ap_one_rows GROUP BY streamforge.tumble(at, interval '1 minute')
$$, writers => 'parallel');
SELECT streamforge.create_aggregate('ap_one', $$
    SELECT count(*) FROM ap_one_rows GROUP BY streamforge.tumble(at, interval '1 minute')
$$, partitions => ARRAY['p0', 'p1'], partition => $$'p' || (id % 2)$$,
    writers => 'many');
SELECT streamforge.create_aggregate('ap_one', $$
    SELECT count(*) FROM ap_one_rows GROUP BY streamforge.tumble(at, interval '1 minute')
$$, partitions => ARRAY['p0', 'p1'], partition => $$'p' || (id % 2)$$,
    retention => interval '1 hour', writers => 'parallel');
\set VERBOSITY default
SELECT count(*) FROM streamforge.pipeline_info WHERE name = 'ap_one';
-- 'serial' spelled out is the default's pipeline
SELECT streamforge.create_aggregate('ap_one', $$
    SELECT count(*) FROM ap_one_rows GROUP BY streamforge.tumble(at, interval '1 minute')
$$, writers => 'serial');
SELECT streamforge.definition('ap_one') ? 'writers' AS has_writers_key;

SELECT streamforge.drop_aggregate(a) FROM unnest(ARRAY['ap', 'as_', 'ap_one']) a;
DROP TABLE ap_rows, as_rows, ap_one_rows;
