-- approx_count_distinct(m) (0.4.0, issue 44): a HyperLogLog sketch
-- (docs/aggregates.md, "approx_count_distinct"; src/engine/agg_hll.c),
-- exact up to 1024 distinct values per bucket.  Fixed, sliding and
-- session windows, late corrections of an emitted row, a session merge, a
-- rollback, the checkpoint round trip (format version 3, "state_var"),
-- hostile states; then the dense form: its estimates at 1025, 20000 and
-- 100000 distinct values, session merges of exact and dense sketches, and
-- determinism (the same events in another order and through other merges
-- give the same checkpoint words).
CREATE SCHEMA hd;
SET search_path = hd, public;
\i test/sql/checkpoint_forge.sql
SET search_path = public;

SELECT streamforge.create_pipeline('hd', ARRAY['p0'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 10, 5),
          streamforge.session('g', 5)],
    lateness => 20,
    measures => ARRAY['amount', 'user_id NULL'],
    aggregates => ARRAY['count', 'approx_count_distinct(user_id) AS users',
                        'count(user_id)']);
SELECT * FROM streamforge.aggregate_columns('hd');

-- key k: users 1, 2, 1, NULL at t = 1..4
SELECT count(*) FROM streamforge.ingest_measures_batch('hd', ARRAY[
    ROW('p0', 0, 'e1', 'k', 1, ARRAY[10, 1])::streamforge.measures_delivery,
    ROW('p0', 1, 'e2', 'k', 2, ARRAY[10, 2])::streamforge.measures_delivery,
    ROW('p0', 2, 'e3', 'k', 3, ARRAY[20, 1])::streamforge.measures_delivery,
    ROW('p0', 3, 'e4', 'k', 4, ARRAY[30, NULL])::streamforge.measures_delivery]);
-- a duplicate delivery changes nothing
SELECT count(*) FROM streamforge.ingest_measures('hd', 'p0', 4, 'e1', 'k', 1, ARRAY[10, 1]);
-- f [0,10), s [-5,5) and [0,10), g [1,9): 4 events, users {1,2}
SELECT window_name, key, window_start, window_end, count, aggregates
FROM streamforge.live_aggregates('hd') ORDER BY window_name, key, window_start;

-- sessions: user 3 at t=20, users 3 and 4 at t=30 and 31 (two sessions),
-- then user 5 at t=25 joins them: [20,36), users {3,4,5}
SELECT count(*) FROM streamforge.ingest_measures_batch('hd', ARRAY[
    ROW('p0', 5, 'e5', 'k', 20, ARRAY[1, 3])::streamforge.measures_delivery,
    ROW('p0', 6, 'e6', 'k', 30, ARRAY[1, 3])::streamforge.measures_delivery,
    ROW('p0', 7, 'e6b', 'k', 31, ARRAY[1, 4])::streamforge.measures_delivery]);
SELECT window_start, window_end, count, aggregates
FROM streamforge.live_aggregates('hd') WHERE window_name = 'g' ORDER BY window_start;
SELECT count(*) FROM streamforge.ingest_measures('hd', 'p0', 8, 'e7', 'k', 25, ARRAY[2, 5]);
SELECT window_start, window_end, count, aggregates
FROM streamforge.live_aggregates('hd') WHERE window_name = 'g' ORDER BY window_start;

-- late corrections of an emitted row: f [0,10) is emitted with users 2;
-- a late event of user 2 leaves it at 2 (count 5), one of user 7 makes it 3
SELECT streamforge.configure_outputs('hd', changelog => true);
SELECT count(*) FROM streamforge.advance('hd', 'p0', 12);
SELECT count(*) FROM streamforge.ingest_measures('hd', 'p0', 9, 'e8', 'k', 5, ARRAY[10, 2]);
SELECT count(*) FROM streamforge.ingest_measures('hd', 'p0', 10, 'e9', 'k', 6, ARRAY[40, 7]);
SELECT seq, op, window_start, window_end, count, aggregates FROM streamforge.changelog
WHERE pipeline = 'hd' AND window_name = 'f' ORDER BY seq;

-- a rollback leaves the sketches as they were
BEGIN;
SELECT count(*) FROM streamforge.ingest_measures('hd', 'p0', 11, 'e10', 'k', 7, ARRAY[50, 8]);
SELECT aggregates FROM streamforge.live_aggregates('hd')
WHERE window_name = 'f' AND window_start = 0;
ROLLBACK;
SELECT aggregates FROM streamforge.live_aggregates('hd')
WHERE window_name = 'f' AND window_start = 0;

-- checkpoints: format version 3; f [0,10)'s sketch is exact: the
-- murmur3-finalizer hashes of users 1, 2, 7 in unsigned order
-- (h(1) = 0xb456bcfc34c2cb2c, negative as int64, is the largest;
-- h(2) = 0x3abf2a20650683e7, h(7) = 0x740729cbe468d1dd)
CREATE TABLE hd.ck AS SELECT streamforge.checkpoint('hd') AS c;
SELECT get_byte(c, 9) AS format_version FROM hd.ck;
SELECT w -> 'state_var' AS state_var
  FROM hd.ck, jsonb_array_elements(streamforge.inspect_checkpoint(c) -> 'windows') AS w
 WHERE w ->> 'window_name' = 'f' AND w ->> 'window_start' = '0';
-- round trip: the same bytes and aggregates; the restored sketches go on
-- counting (user 2 is known, user 9 is not)
CREATE TABLE hd.before AS SELECT * FROM streamforge.live_aggregates('hd');
SELECT streamforge.restore('hd', (SELECT c FROM hd.ck));
SELECT streamforge.checkpoint('hd') = (SELECT c FROM hd.ck) AS same_bytes;
SELECT count(*) AS differing FROM (
    (SELECT * FROM streamforge.live_aggregates('hd') EXCEPT SELECT * FROM hd.before)
    UNION ALL
    (SELECT * FROM hd.before EXCEPT SELECT * FROM streamforge.live_aggregates('hd'))) x;
SELECT count(*) FROM streamforge.ingest_measures_batch('hd', ARRAY[
    ROW('p0', 11, 'e11', 'k', 8, ARRAY[10, 2])::streamforge.measures_delivery,
    ROW('p0', 12, 'e12', 'k', 9, ARRAY[10, 9])::streamforge.measures_delivery]);
SELECT window_name, window_start, count, aggregates FROM streamforge.live_aggregates('hd')
WHERE window_start = 0 ORDER BY window_name;

-- hostile states: each refused with SF003 and the sketch's reason, none
-- crashes.  A pipeline of one bucket, 6 events, values 1, 2, 7 (its
-- document stays under 4096 bytes, uncompressed): state_var
-- [[h(2), h(7), h(1)]]
SELECT streamforge.create_pipeline('hh', ARRAY['p0'], ARRAY[streamforge.fixed('f', 10)],
    measures => ARRAY['v'], aggregates => ARRAY['approx_count_distinct(v)']);
SELECT count(*) FROM streamforge.ingest_measures_batch('hh', ARRAY(
    SELECT ROW('p0', i, 'e' || i, 'k', 1, ARRAY[v])::streamforge.measures_delivery
      FROM unnest(ARRAY[1, 2, 7, 1, 2, 7]) WITH ORDINALITY AS u(v, i0), LATERAL (SELECT i0 - 1 AS i) x));
DROP TABLE hd.ck;
CREATE TABLE hd.ck AS SELECT streamforge.checkpoint('hh') AS c;
SET search_path = hd, public;
CREATE TABLE hd.doc AS SELECT hd.doc(c) AS d FROM hd.ck;
CREATE TABLE hd.sv AS
SELECT substring(d FROM '"state_var":\[\[[-0-9,]*\]\]') AS sv FROM hd.doc;
SELECT sv FROM hd.sv;
CREATE FUNCTION hd.try(cp bytea) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    st text; msg text; det text;
BEGIN
    PERFORM streamforge.restore('hh', cp);
    RETURN 'accepted';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
                            det = PG_EXCEPTION_DETAIL;
    RETURN st || ': ' || msg || coalesce(' | ' || nullif(det, ''), '');
END $$;
CREATE FUNCTION hd.forged(new_sv text) RETURNS text LANGUAGE sql AS $$
    SELECT hd.try(hd.envelope(convert_to(replace(d, sv, '"state_var":[' || new_sv || ']'),
                                         getdatabaseencoding()), 3))
      FROM hd.doc, hd.sv
$$;
SELECT 'control' AS "case", hd.try(hd.envelope(convert_to(d, getdatabaseencoding()), 3)) FROM hd.doc
UNION ALL SELECT 'unsorted', hd.forged('[' || (SELECT string_agg(x, ',' ORDER BY o DESC)
    FROM unnest(string_to_array(substring(sv FROM 16 FOR length(sv) - 17), ','))
         WITH ORDINALITY AS u(x, o)) || ']') FROM hd.sv
UNION ALL SELECT 'repeated', hd.forged('[5,5]')
UNION ALL SELECT 'other hashes', hd.forged('[1,2,3]')
UNION ALL SELECT 'more words than events', hd.forged('[1,2,3,4,5,6,7]')
-- dense: -1, then (index << 8 | value) two per word
UNION ALL SELECT 'dense, value 52', hd.forged('[-1,52]')
UNION ALL SELECT 'dense, value 0', hd.forged('[-1,' || ((1::bigint << 8) << 32) || ']')
UNION ALL SELECT 'dense, descending', hd.forged('[-1,' || ((5 << 8 | 1) | ((3::bigint << 8 | 1) << 32)) || ']')
UNION ALL SELECT 'dense, index 16384', hd.forged('[-1,' || (16384 << 8 | 1) || ']')
UNION ALL SELECT 'dense, not the events''', hd.forged('[-1,' || (1 << 8 | 1) || ']')
UNION ALL SELECT 'not an array', hd.forged('7');
SET search_path = public;
-- the pipeline kept its state through the refusals
SELECT window_name, window_start, count, aggregates FROM streamforge.live_aggregates('hh');

-- the dense form: one bucket per key of 1024, 1025, 20000 and 100000
-- distinct values (multiples of 7, each twice); 1024 is exact, the others
-- are estimates, each within 1% of the truth here (the standard error is
-- 0.81%: docs/aggregates.md), next to count_distinct's exact count
SELECT streamforge.create_pipeline('hb', ARRAY['p0'], ARRAY[streamforge.fixed('f', 1000)],
    measures => ARRAY['v'],
    aggregates => ARRAY['approx_count_distinct(v) AS approx', 'count_distinct(v) AS exact']);
SELECT sum(n) FROM (SELECT count(*) AS n FROM streamforge.ingest_measures_batch('hb', ARRAY(
    SELECT ROW('p0', row_number() OVER () - 1, k || '-' || r || '-' || i, k, 1, ARRAY[i * 7])::streamforge.measures_delivery
      FROM (VALUES ('a', 1024), ('b', 1025), ('c', 20000), ('d', 100000)) AS x(k, n),
           generate_series(1, n) AS i, generate_series(1, 2) AS r))) z;
SELECT key, (aggregates ->> 'approx')::bigint AS approx, (aggregates ->> 'exact')::bigint AS exact,
       abs((aggregates ->> 'approx')::numeric / (aggregates ->> 'exact')::numeric - 1) < 0.01 AS within_1pct
  FROM streamforge.live_aggregates('hb') ORDER BY key;
-- a dense sketch is -1 and its registers above 0, two per word (up to
-- 8193 words); the round trip keeps the bytes
SELECT w ->> 'key' AS key, w -> 'state_var' -> 0 -> 0 AS first_word,
       jsonb_array_length(w -> 'state_var' -> 0) AS words
  FROM jsonb_array_elements(streamforge.inspect_checkpoint(streamforge.checkpoint('hb')) -> 'windows') AS w
 ORDER BY 1;
CREATE TABLE hd.ckb AS SELECT streamforge.checkpoint('hb') AS c;
SELECT streamforge.restore('hb', (SELECT c FROM hd.ckb));
SELECT streamforge.checkpoint('hb') = (SELECT c FROM hd.ckb) AS same_bytes;

-- determinism and session merges: 3000 distinct values, 30 per time unit
-- at t = 0..99, into a session window (gap 10) and a fixed one (100).
-- hx1 takes them in time order; hx2 backwards in time, t = 60..99 first,
-- then t = 0..39 (two sessions, each dense: 1200 values), then t = 40..59
-- late, which merges them; hx3 in time order too but the values of each
-- t reversed.  Their sketches are the same words, and their values
-- estimate 3000 (an exact set merged with dense ones in hx2's middle
-- events' sessions)
CREATE TABLE hd.trace AS
SELECT i, i / 30 AS t, (i * 7919) % 100003 AS v FROM generate_series(0, 2999) AS i;
SELECT streamforge.create_pipeline(n, ARRAY['p0'],
    ARRAY[streamforge.session('g', 10), streamforge.fixed('f', 100)],
    lateness => 1000, measures => ARRAY['v'],
    aggregates => ARRAY['count', 'approx_count_distinct(v)'])
  FROM unnest(ARRAY['hx1', 'hx2', 'hx3']) AS n;
SELECT count(*) FROM streamforge.ingest_measures_batch('hx1', ARRAY(
    SELECT ROW('p0', i, 'e' || i, 'k', t, ARRAY[v])::streamforge.measures_delivery
      FROM hd.trace ORDER BY i));
SELECT count(*) FROM streamforge.ingest_measures_batch('hx2', ARRAY(
    SELECT ROW('p0', row_number() OVER (ORDER BY i DESC) - 1, 'e' || i, 'k', t,
               ARRAY[v])::streamforge.measures_delivery
      FROM hd.trace WHERE t >= 60 ORDER BY i DESC));
SELECT count(*) FROM streamforge.ingest_measures_batch('hx2', ARRAY(
    SELECT ROW('p0', 1200 + row_number() OVER (ORDER BY i DESC) - 1, 'e' || i, 'k', t,
               ARRAY[v])::streamforge.measures_delivery
      FROM hd.trace WHERE t < 40 ORDER BY i DESC));
SELECT window_name, window_start, window_end, count, aggregates
  FROM streamforge.live_aggregates('hx2') ORDER BY 1, 2;
SELECT count(*) FROM streamforge.ingest_measures_batch('hx2', ARRAY(
    SELECT ROW('p0', 2400 + row_number() OVER (ORDER BY i DESC) - 1, 'e' || i, 'k', t,
               ARRAY[v])::streamforge.measures_delivery
      FROM hd.trace WHERE t BETWEEN 40 AND 59 ORDER BY i DESC));
SELECT count(*) FROM streamforge.ingest_measures_batch('hx3', ARRAY(
    SELECT ROW('p0', row_number() OVER (ORDER BY t, i DESC) - 1, 'e' || i, 'k', t,
               ARRAY[v])::streamforge.measures_delivery
      FROM hd.trace ORDER BY t, i DESC));
SELECT n, window_name, window_start, window_end, count, aggregates
  FROM unnest(ARRAY['hx1', 'hx2', 'hx3']) AS n, streamforge.live_aggregates(n)
 ORDER BY 2, 1;
CREATE TABLE hd.words AS
SELECT n, w ->> 'window_name' AS window_name, w -> 'state_var' AS state_var
  FROM unnest(ARRAY['hx1', 'hx2', 'hx3']) AS n,
       jsonb_array_elements(streamforge.inspect_checkpoint(streamforge.checkpoint(n)) -> 'windows') AS w;
SELECT window_name, count(*) AS pipelines, count(DISTINCT state_var) AS different_words,
       min(state_var -> 0 ->> 0) AS tag
  FROM hd.words GROUP BY 1 ORDER BY 1;

-- a definition change rebuilds the sketches from the remembered events:
-- a window f2 of 50 on hx1, backfilled: [0,50) and [50,100), 1500 values each
SELECT count(*) FROM streamforge.add_window('hx1', streamforge.fixed('f2', 50));
SELECT window_start, count, aggregates FROM streamforge.live_aggregates('hx1')
 WHERE window_name = 'f2' ORDER BY 1;

-- spellings: the normalized form, the default name, what is refused
SELECT streamforge.create_pipeline('hd3', ARRAY['p0'], ARRAY[streamforge.fixed('f', 10)],
    measures => ARRAY['a'], aggregates => ARRAY['approx_count_distinct( a )']);
SELECT name, type, func, measure FROM streamforge.aggregate_columns('hd3');
SELECT streamforge.inspect_checkpoint(streamforge.checkpoint('hd3')) -> 'definition' -> 'aggregates';
SELECT streamforge.create_pipeline('bad', ARRAY['p0'], ARRAY[streamforge.fixed('f', 10)],
    measures => ARRAY['a'], aggregates => ARRAY['approx_count_distinct']);
SELECT streamforge.create_pipeline('bad', ARRAY['p0'], ARRAY[streamforge.fixed('f', 10)],
    measures => ARRAY['a'], aggregates => ARRAY['approx_count_distinct(*)']);

-- finalization frees the sketches
SELECT count(*) FROM streamforge.advance('hb', 'p0', 5000);
SELECT count(*) AS live FROM streamforge.live_aggregates('hb');

SELECT streamforge.drop_pipeline(n)
  FROM unnest(ARRAY['hd', 'hh', 'hb', 'hx1', 'hx2', 'hx3', 'hd3']) AS n;
DROP SCHEMA hd CASCADE;
