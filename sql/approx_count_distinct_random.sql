--
-- Randomized test of approx_count_distinct (issue 44, docs/aggregates.md)
-- against SQL's count(DISTINCT ...): random traces (setseed, so the run
-- is reproducible; change the seed to explore) of keys whose buckets hold
-- from a few to 40000 distinct values, with duplicates, events out of
-- order and late within the lateness, session merges, in random batches.
-- Every live bucket of a fixed window must give SQL's count(DISTINCT v)
-- exactly up to 1024 distinct values and within 4 standard errors
-- (4 * 0.81% = 3.24%) beyond; every bucket of every window kind the same
-- against count_distinct's exact count.  A checkpoint restores with the
-- same bytes; a second pipeline fed the same events in another order and
-- other batches has the same sketches (checkpoint words).
--
SET synchronous_commit = off;
CREATE SCHEMA hr;
SELECT setseed(0.44);
-- per key the range of its values (each bucket draws from it)
CREATE TABLE hr.keys AS
SELECT 'k' || k AS key, (ARRAY[20, 600, 1100, 3000, 15000, 60000])[1 + (k % 6)] AS range
  FROM generate_series(0, 11) AS k;
CREATE TABLE hr.ev AS
SELECT row_number() OVER (ORDER BY random()) - 1 AS arrival, key, t, v
  FROM (SELECT k.key, floor(random() * 3000)::bigint AS t,
               floor(random() * k.range)::bigint AS v
          FROM hr.keys k, LATERAL generate_series(1, least(k.range * 2, 20000)) AS i) x;
SELECT count(*) > 50000 AS events, count(DISTINCT (key, v)) > 30000 AS distinct_values FROM hr.ev;

SELECT streamforge.create_pipeline(n, ARRAY['p0'],
    ARRAY[streamforge.fixed('f', 1000), streamforge.sliding('s', 1000, 500),
          streamforge.session('g', 40)],
    lateness => 5000, measures => ARRAY['v'],
    aggregates => ARRAY['approx_count_distinct(v) AS approx', 'count_distinct(v) AS exact'])
  FROM unnest(ARRAY['hr1', 'hr2']) AS n;
-- hr1: the events in arrival order (random in time), batches of 1000;
-- hr2: sorted by value descending, batches of 337
CREATE FUNCTION hr.feed(p text, ord text, batch int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    n bigint := 0;
    total bigint := (SELECT count(*) FROM hr.ev);
BEGIN
    FOR b IN 0 .. (total - 1) / batch LOOP
        EXECUTE format($q$
            SELECT count(*) FROM streamforge.ingest_measures_batch(%L, ARRAY(
                SELECT ROW('p0', o - 1, 'e' || arrival, key, t, ARRAY[v])::streamforge.measures_delivery
                  FROM (SELECT *, row_number() OVER (ORDER BY %s) AS o FROM hr.ev) x
                 WHERE o > %s AND o <= %s ORDER BY o))$q$,
            p, ord, b * batch, (b + 1) * batch);
        n := n + 1;
    END LOOP;
    RETURN n;
END $$;
SELECT hr.feed('hr1', 'arrival', 1000) > 0 AS fed;
-- hr2 is fed, then a checkpoint of it restores with the same bytes
SELECT hr.feed('hr2', 'v DESC, arrival', 337) > 0 AS fed;
CREATE TABLE hr.ck AS SELECT streamforge.checkpoint('hr2') AS c;
SELECT streamforge.restore('hr2', (SELECT c FROM hr.ck));
SELECT streamforge.checkpoint('hr2') = (SELECT c FROM hr.ck) AS same_bytes;

-- fixed windows against SQL
CREATE TABLE hr.sql AS
SELECT key, floor(t / 1000.0)::bigint * 1000 AS window_start, count(*) AS count,
       count(DISTINCT v) AS truth
  FROM hr.ev GROUP BY 1, 2;
CREATE TABLE hr.cmp AS
SELECT l.window_name, l.key, l.window_start, s.truth, (l.aggregates ->> 'exact')::bigint AS exact,
       (l.aggregates ->> 'approx')::bigint AS approx
  FROM streamforge.live_aggregates('hr1') l
  LEFT JOIN hr.sql s ON l.window_name = 'f' AND s.key = l.key AND s.window_start = l.window_start;
SELECT count(*) AS fixed_buckets,
       count(*) FILTER (WHERE truth IS DISTINCT FROM exact) AS exact_wrong,
       count(*) FILTER (WHERE truth <= 1024) AS exact_range,
       count(*) FILTER (WHERE truth <= 1024 AND approx <> truth) AS exact_range_wrong,
       count(*) FILTER (WHERE truth > 1024) AS sketch_range,
       count(*) FILTER (WHERE truth > 1024 AND abs(approx::numeric / truth - 1) > 0.0324) AS beyond_4_sigma
  FROM hr.cmp WHERE window_name = 'f';
SELECT (SELECT count(*) FROM hr.sql) AS sql_buckets;
-- every window kind against count_distinct
SELECT window_name, count(*) AS buckets,
       count(*) FILTER (WHERE exact <= 1024 AND approx <> exact) AS exact_range_wrong,
       count(*) FILTER (WHERE exact > 1024) AS sketch_range,
       count(*) FILTER (WHERE exact > 1024 AND abs(approx::numeric / exact - 1) > 0.0324) AS beyond_4_sigma
  FROM hr.cmp GROUP BY 1 ORDER BY 1;
-- the observed spread of the sketch range: its root mean square relative
-- error near the standard error (0.81%)
SELECT sqrt(avg(power(approx::numeric / exact - 1, 2))) < 0.0125 AS rms_near_standard_error
  FROM hr.cmp WHERE exact > 1024;

-- the same events in another order and other batches: the same sketches
CREATE TABLE hr.words AS
SELECT n, w ->> 'window_name' AS window_name, w ->> 'key' AS key, w ->> 'window_start' AS ws,
       w -> 'state_var' AS state_var
  FROM unnest(ARRAY['hr1', 'hr2']) AS n,
       jsonb_array_elements(streamforge.inspect_checkpoint(streamforge.checkpoint(n)) -> 'windows') AS w;
SELECT count(*) AS rows_compared,
       count(*) FILTER (WHERE a.state_var IS DISTINCT FROM b.state_var) AS different_words,
       count(*) FILTER (WHERE a.state_var -> 0 ->> 0 = '-1') AS dense
  FROM hr.words a FULL JOIN hr.words b
    ON a.window_name = b.window_name AND a.key = b.key AND a.ws = b.ws AND b.n = 'hr2'
 WHERE a.n = 'hr1';

SELECT streamforge.drop_pipeline(n) FROM unnest(ARRAY['hr1', 'hr2']) AS n;
DROP SCHEMA hr CASCADE;
