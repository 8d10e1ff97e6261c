-- window_assign_fast: the 64-bit fast path of window assignment (issue 23;
-- src/engine/window.c, sf_assign_windows) gives the buckets of the 128-bit
-- path, on both sides of its bound 2^61 and far from it.  Every bucket is
-- compared with one computed here in numeric: fixed [floor(t / 7) * 7, + 7),
-- sliding every multiple of 3 with start <= t < start + 10, session
-- [t, t + 5), and a fixed window of size 2^61 (never on the fast path).
SELECT streamforge.create_pipeline('wf', ARRAY['p'],
    ARRAY[streamforge.fixed('f', 7), streamforge.sliding('s', 10, 3),
          streamforge.session('g', 5),
          streamforge.fixed('h', 2305843009213693952)]);
CREATE TABLE wf_t AS
SELECT row_number() OVER (ORDER BY t) - 1 AS off, t
  FROM unnest(ARRAY[
    -2305843009213693953, -2305843009213693952, -2305843009213693951,
    -2305843009213693950, 2305843009213693949, 2305843009213693950,
    2305843009213693951, 2305843009213693952, 2305843009213693953,
    -4611686018427387905, 4611686018427387904, -15, -8, -7, -6, -1, 0, 1,
    6, 7, 8, 1000000]::bigint[]) t;
SELECT count(*) FROM streamforge.ingest_batch('wf', ARRAY(
  SELECT ROW('p', off, 'e' || off, 'k' || off, t, 1)::streamforge.delivery
    FROM wf_t ORDER BY off));
CREATE FUNCTION wf_floor(t numeric, n numeric) RETURNS numeric
  LANGUAGE sql AS $$
  SELECT (div(t, n) - CASE WHEN mod(t, n) < 0 THEN 1 ELSE 0 END) * n $$;
CREATE TABLE wf_expected AS
SELECT 'f' AS window_name, 'k' || off AS key, wf_floor(t, 7) AS window_start,
       wf_floor(t, 7) + 7 AS window_end
  FROM wf_t
UNION ALL
SELECT 's', 'k' || off, wf_floor(t, 3) - 3 * k, wf_floor(t, 3) - 3 * k + 10
  FROM wf_t, generate_series(0, 3) k
 WHERE wf_floor(t, 3) - 3 * k + 10 > t
UNION ALL
SELECT 'g', 'k' || off, t, t + 5 FROM wf_t
UNION ALL
SELECT 'h', 'k' || off, wf_floor(t, 2305843009213693952),
       wf_floor(t, 2305843009213693952) + 2305843009213693952
  FROM wf_t;
-- no bucket missing, none extra: both counts are 0
SELECT (SELECT count(*) FROM (
          SELECT window_name, key, window_start::numeric, window_end::numeric
            FROM streamforge.live('wf')
          EXCEPT SELECT * FROM wf_expected) x) AS extra,
       (SELECT count(*) FROM (
          SELECT * FROM wf_expected
          EXCEPT SELECT window_name, key, window_start::numeric, window_end::numeric
            FROM streamforge.live('wf')) x) AS missing,
       (SELECT count(*) FROM streamforge.live('wf')) AS buckets;
-- the buckets around the bound, in full
SELECT window_name, window_start, window_end
  FROM streamforge.live('wf') l JOIN wf_t ON l.key = 'k' || wf_t.off
 WHERE abs(wf_t.t) BETWEEN 2305843009213693950 AND 2305843009213693953
   AND window_name IN ('f', 's')
 ORDER BY wf_t.t, window_name, window_start;
DROP TABLE wf_t, wf_expected;
DROP FUNCTION wf_floor(numeric, numeric);
SELECT streamforge.drop_pipeline('wf');
