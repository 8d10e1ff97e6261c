-- GROUP BY values longer than a btree entry (issue 38, defect 4): an
-- aggregate's index holds keys of at most 2000 bytes, a second index the
-- longer ones, and the view reads both.  In 0.3.0 one 10 kB value made
-- every later emission of the aggregate fail on its index ("index row size
-- exceeds btree maximum"), so that its watermark never moved again.
SET client_min_messages = warning;
SET TimeZone = 'UTC';
-- the tables of the aggregates' results are numbered from 2000 here (the
-- plans below name them)
SELECT setval('streamforge.aggregate_results_seq', 2000, false);
-- 10,240 bytes that do not compress (the index would store a compressed
-- value inline)
CREATE FUNCTION long_text(seed text) RETURNS text LANGUAGE sql IMMUTABLE
RETURN (SELECT string_agg(md5(seed || i), '' ORDER BY i) FROM generate_series(1, 320) AS i);
SELECT octet_length(long_text('a'));

-- through INSERT into the aggregate's table, emitted as the watermark
-- (out_of_orderness 0) passes the windows
CREATE TABLE lk (id integer PRIMARY KEY, k text NOT NULL, v integer NOT NULL, at timestamptz NOT NULL);
SELECT streamforge.create_aggregate('lk_agg', $$
    SELECT k, count(*) AS n, sum(v) AS s FROM lk GROUP BY k, streamforge.tumble(at, interval '1 minute')
$$, out_of_orderness => interval '0 seconds');
INSERT INTO lk VALUES (1, long_text('a'), 10, '2026-11-30 12:00:10+00'),
                      (2, 'short', 1, '2026-11-30 12:00:20+00');
INSERT INTO lk VALUES (3, long_text('a'), 5, '2026-11-30 12:01:10+00');   -- emits 12:00
INSERT INTO lk VALUES (4, long_text('b'), 7, '2026-11-30 12:02:10+00'),   -- emits 12:01
                      (5, 'short', 2, '2026-11-30 12:02:20+00');
INSERT INTO lk VALUES (6, 'short', 3, '2026-11-30 12:03:10+00');          -- emits 12:02
SELECT streamforge.watermark('lk_agg') = extract(epoch FROM timestamptz '2026-11-30 12:03:10+00') * 1000000
    AS watermark_moved;
SELECT octet_length(k) AS len, left(k, 8) AS head, window_start, n, s, final
  FROM lk_agg ORDER BY window_start, len;
-- the same as PostgreSQL's GROUP BY over the emitted windows
SELECT NOT EXISTS (
    (SELECT k, window_start, n, s FROM lk_agg)
    EXCEPT
    (SELECT k, streamforge.tumble(at, interval '1 minute'), count(*), sum(v) FROM lk
      WHERE at < '2026-11-30 12:03+00' GROUP BY k, streamforge.tumble(at, interval '1 minute'))) AS same,
       (SELECT count(*) FROM lk_agg) AS rows;
-- a long key is found by equality (second branch), a short one through
-- the index
SELECT window_start, n, s FROM lk_agg WHERE k = long_text('a') ORDER BY window_start;
SELECT window_start, n, s FROM lk_agg WHERE k = 'short' ORDER BY window_start;
-- (scans of the whole table off: with the few rows of this database the
-- planner's choice depended on what the tests before this one left in
-- streamforge.results)
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT n FROM lk_agg WHERE k = 'short' AND window_start >= '2026-11-30 12:00+00';
RESET enable_seqscan;
RESET enable_bitmapscan;
-- a key of exactly 2000 bytes and one of 2001 (the key is the text of the
-- array: braces around the value)
INSERT INTO lk VALUES (7, repeat('x', 1998), 1, '2026-11-30 12:04:10+00'),
                      (8, repeat('y', 1999), 1, '2026-11-30 12:04:20+00');
INSERT INTO lk VALUES (9, 'short', 1, '2026-11-30 12:05:10+00');
-- (0.4.0) the aggregate's rows are in its own table
SELECT streamforge_internal.aggregate_results_table(results_id) AS lk_table
  FROM streamforge.aggregate WHERE name = 'lk_agg' \gset
SELECT octet_length(key) AS key_len, count FROM :lk_table
 WHERE start_u = extract(epoch FROM timestamptz '2026-11-30 12:04+00') * 1000000
 ORDER BY key_len;
SELECT left(k, 1), octet_length(k) FROM lk_agg WHERE window_start = '2026-11-30 12:04+00' ORDER BY 1;

-- through ingest_measures into a measures aggregate's pipeline, with a key
-- made as the attachment makes it (the text of ARRAY[k])
CREATE TABLE lkm (id integer PRIMARY KEY, k text NOT NULL, a integer NOT NULL, b integer NOT NULL,
                  at timestamptz NOT NULL);
SELECT streamforge.create_aggregate('lkm_agg', $$
    SELECT k, count(*) AS n, sum(a) AS sa, max(b) AS mb FROM lkm
     GROUP BY k, streamforge.tumble(at, interval '1 minute')
$$, out_of_orderness => interval '0 seconds');
SELECT count(*) FROM streamforge.ingest_measures('lkm_agg', 'default', 0, 'x1', ARRAY[long_text('c')]::text,
    (extract(epoch FROM timestamptz '2026-11-30 12:00:10+00') * 1000000)::bigint, ARRAY[4, 40]);
SELECT count(*) FROM streamforge.ingest_measures('lkm_agg', 'default', 1, 'x2', ARRAY[long_text('c')]::text,
    (extract(epoch FROM timestamptz '2026-11-30 12:01:10+00') * 1000000)::bigint, ARRAY[6, 60]);
SELECT count(*) FROM streamforge.ingest_measures('lkm_agg', 'default', 2, 'x3', ARRAY['short']::text,
    (extract(epoch FROM timestamptz '2026-11-30 12:02:10+00') * 1000000)::bigint, ARRAY[1, 1]);
SELECT octet_length(k) AS len, window_start, n, sa, mb, final FROM lkm_agg ORDER BY window_start;
SELECT window_start, n FROM lkm_agg WHERE k = long_text('c') ORDER BY window_start;

-- the indexes (0.4.0: of the aggregates' own tables)
SELECT pg_catalog.pg_get_indexdef(i.indexrelid) FROM pg_catalog.pg_index AS i
  JOIN streamforge.aggregate AS g
    ON i.indrelid = streamforge_internal.aggregate_results_table(g.results_id)::regclass
 WHERE g.name LIKE 'lk%'
 ORDER BY 1;
SELECT streamforge.drop_aggregate('lk_agg');
SELECT streamforge.drop_aggregate('lkm_agg');
-- their tables went with them
SELECT count(*) FROM pg_catalog.pg_class AS c
 WHERE c.relnamespace = 'streamforge_results'::regnamespace
   AND c.relname IN ('a2000', 'a2001');
DROP TABLE lk, lkm;
DROP FUNCTION long_text(text);
