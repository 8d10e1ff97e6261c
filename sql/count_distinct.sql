-- count_distinct(m) (0.4.0, issue 41): the first aggregate with a
-- variable-size state (docs/aggregates.md, "count_distinct").  Fixed,
-- sliding and session windows, late corrections of an emitted row, a
-- session merge (the union of the sets), NULL measures, a rollback, the
-- checkpoint round trip (format version 3, "state_var"), hostile
-- checkpoints and bad spellings.
CREATE SCHEMA cd;
SET search_path = cd, public;
\i test/sql/checkpoint_forge.sql
SET search_path = public;

SELECT streamforge.create_pipeline('cd', ARRAY['p0'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 10, 5),
          streamforge.session('g', 5)],
    lateness => 20,
    measures => ARRAY['amount', 'user_id NULL'],
    aggregates => ARRAY['count', 'count_distinct(user_id) AS users',
                        'count_distinct(amount)', 'count(user_id)']);
SELECT * FROM streamforge.aggregate_columns('cd');

-- key k: users 1, 2, 1, NULL at t = 1..4 (amounts 10, 10, 20, 30)
SELECT count(*) FROM streamforge.ingest_measures_batch('cd', ARRAY[
    ROW('p0', 0, 'e1', 'k', 1, ARRAY[10, 1])::streamforge.measures_delivery,
    ROW('p0', 1, 'e2', 'k', 2, ARRAY[10, 2])::streamforge.measures_delivery,
    ROW('p0', 2, 'e3', 'k', 3, ARRAY[20, 1])::streamforge.measures_delivery,
    ROW('p0', 3, 'e4', 'k', 4, ARRAY[30, NULL])::streamforge.measures_delivery]);
-- a duplicate delivery changes nothing
SELECT count(*) FROM streamforge.ingest_measures('cd', 'p0', 4, 'e1', 'k', 1, ARRAY[10, 1]);
-- f [0,10): 4 events, users {1,2}, amounts {10,20,30}, 3 non-NULL users;
-- s [-5,5) and [0,10) alike; g [1,9) alike
SELECT window_name, key, window_start, window_end, count, aggregates
FROM streamforge.live_aggregates('cd') ORDER BY window_name, key, window_start;

-- sessions: user 3 at t=20, users 3 and 4 at t=30 and 31 (two sessions),
-- then user 5 at t=25 touches both: one session [20,36) of 4 events, users
-- {3} + {3,4} + {5} = 3 (3 counted once)
SELECT count(*) FROM streamforge.ingest_measures_batch('cd', ARRAY[
    ROW('p0', 5, 'e5', 'k', 20, ARRAY[1, 3])::streamforge.measures_delivery,
    ROW('p0', 6, 'e6', 'k', 30, ARRAY[1, 3])::streamforge.measures_delivery,
    ROW('p0', 7, 'e6b', 'k', 31, ARRAY[1, 4])::streamforge.measures_delivery]);
SELECT window_start, window_end, count, aggregates
FROM streamforge.live_aggregates('cd') WHERE window_name = 'g' ORDER BY window_start;
SELECT count(*) FROM streamforge.ingest_measures('cd', 'p0', 8, 'e7', 'k', 25, ARRAY[2, 5]);
SELECT window_start, window_end, count, aggregates
FROM streamforge.live_aggregates('cd') WHERE window_name = 'g' ORDER BY window_start;

-- late corrections of an emitted row: the watermark passes 10, f [0,10)
-- is emitted with users 2; a late event of user 2 leaves it at 2 (count
-- 5), one of user 7 makes it 3: each a retraction and an upsert
SELECT streamforge.configure_outputs('cd', changelog => true);
SELECT count(*) FROM streamforge.advance('cd', 'p0', 12);
SELECT count(*) FROM streamforge.ingest_measures('cd', 'p0', 9, 'e8', 'k', 5, ARRAY[10, 2]);
SELECT count(*) FROM streamforge.ingest_measures('cd', 'p0', 10, 'e9', 'k', 6, ARRAY[40, 7]);
SELECT seq, op, window_start, window_end, count, aggregates FROM streamforge.changelog
WHERE pipeline = 'cd' AND window_name = 'f' ORDER BY seq;
-- the session [1,9) took t=5 and t=6 too: [1,11), users {1,2,7}
SELECT seq, op, window_start, window_end, count, aggregates FROM streamforge.changelog
WHERE pipeline = 'cd' AND window_name = 'g' ORDER BY seq;

-- a rollback leaves the sets as they were
BEGIN;
SELECT count(*) FROM streamforge.ingest_measures('cd', 'p0', 11, 'e10', 'k', 7, ARRAY[50, 8]);
SELECT aggregates FROM streamforge.live_aggregates('cd')
WHERE window_name = 'f' AND window_start = 0;
ROLLBACK;
SELECT aggregates FROM streamforge.live_aggregates('cd')
WHERE window_name = 'f' AND window_start = 0;

-- checkpoints: format version 3, a row's "state_var" holds each set in
-- ascending order (users, then amounts)
CREATE TABLE cd.ck AS SELECT streamforge.checkpoint('cd') AS c;
SELECT get_byte(c, 9) AS format_version FROM cd.ck;
SELECT streamforge.inspect_checkpoint(c) -> 'windows' -> 0 FROM cd.ck;
-- round trip: the same bytes and aggregates; the restored sets go on
-- counting (user 2 is known, user 9 is not)
CREATE TABLE cd.before AS SELECT * FROM streamforge.live_aggregates('cd');
SELECT streamforge.restore('cd', (SELECT c FROM cd.ck));
SELECT streamforge.checkpoint('cd') = (SELECT c FROM cd.ck) AS same_bytes;
SELECT count(*) AS differing FROM (
    (SELECT * FROM streamforge.live_aggregates('cd') EXCEPT SELECT * FROM cd.before)
    UNION ALL
    (SELECT * FROM cd.before EXCEPT SELECT * FROM streamforge.live_aggregates('cd'))) x;
SELECT count(*) FROM streamforge.ingest_measures_batch('cd', ARRAY[
    ROW('p0', 11, 'e11', 'k', 8, ARRAY[10, 2])::streamforge.measures_delivery,
    ROW('p0', 12, 'e12', 'k', 9, ARRAY[10, 9])::streamforge.measures_delivery]);
SELECT window_name, window_start, count, aggregates FROM streamforge.live_aggregates('cd')
WHERE window_start = 0 ORDER BY window_name;

-- finalization frees the sets: past the lateness the rows are final
SELECT count(*) FROM streamforge.advance('cd', 'p0', 100);
SELECT count(*) AS live FROM streamforge.live_aggregates('cd');

-- hostile checkpoints: an unsorted, a repeated, a missing and an extra
-- set, more values than events, a version 2 envelope: SF003 each
SET search_path = cd, public;
CREATE TABLE cd.doc AS SELECT cd.doc(c) AS d FROM cd.ck;
SELECT position('"state_var":[[1,2,7],[10,20,30,40]]' IN d) > 0 AS found FROM cd.doc;
CREATE FUNCTION cd.try(cp bytea) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    st text; msg text; det text;
BEGIN
    PERFORM streamforge.restore('cd', cp);
    RETURN 'accepted';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
                            det = PG_EXCEPTION_DETAIL;
    RETURN st || ': ' || msg || coalesce(' | ' || nullif(det, ''), '');
END $$;
SELECT 'control' AS "case",
       cd.try(cd.envelope(convert_to(d, getdatabaseencoding()), 3)) FROM cd.doc
UNION ALL SELECT 'unsorted', cd.try(cd.envelope(convert_to(
    replace(d, '"state_var":[[1,2,7],[10,20,30,40]]', '"state_var":[[2,1,7],[10,20,30,40]]'),
    getdatabaseencoding()), 3)) FROM cd.doc
UNION ALL SELECT 'repeated', cd.try(cd.envelope(convert_to(
    replace(d, '"state_var":[[1,2,7],[10,20,30,40]]', '"state_var":[[1,1,7],[10,20,30,40]]'),
    getdatabaseencoding()), 3)) FROM cd.doc
UNION ALL SELECT 'wrong set', cd.try(cd.envelope(convert_to(
    replace(d, '"state_var":[[1,2,7],[10,20,30,40]]', '"state_var":[[1,2,8],[10,20,30,40]]'),
    getdatabaseencoding()), 3)) FROM cd.doc
UNION ALL SELECT 'missing set', cd.try(cd.envelope(convert_to(
    replace(d, '"state_var":[[1,2,7],[10,20,30,40]]', '"state_var":[[1,2,7]]'),
    getdatabaseencoding()), 3)) FROM cd.doc
UNION ALL SELECT 'extra set', cd.try(cd.envelope(convert_to(
    replace(d, '"state_var":[[1,2,7],[10,20,30,40]]', '"state_var":[[1,2,7],[10,20,30,40],[]]'),
    getdatabaseencoding()), 3)) FROM cd.doc
UNION ALL SELECT 'more values than events', cd.try(cd.envelope(convert_to(
    replace(d, '"state_var":[[1,2,7],[10,20,30,40]]', '"state_var":[[1,2,3,4,5,6,7],[10,20,30,40]]'),
    getdatabaseencoding()), 3)) FROM cd.doc
UNION ALL SELECT 'not an array', cd.try(cd.envelope(convert_to(
    replace(d, '"state_var":[[1,2,7],[10,20,30,40]]', '"state_var":[7,[10,20,30,40]]'),
    getdatabaseencoding()), 3)) FROM cd.doc
UNION ALL SELECT 'version 2', cd.try(cd.envelope(convert_to(d, getdatabaseencoding()), 2)) FROM cd.doc
UNION ALL SELECT 'version 2, no state_var', cd.try(cd.envelope(convert_to(
    regexp_replace(d, ',"state_var":\[(\[[-0-9,]*\],?)*\]', '', 'g'),
    getdatabaseencoding()), 2)) FROM cd.doc;
SET search_path = public;
-- the pipeline kept its state through the refusals
SELECT count(*) AS live FROM streamforge.live_aggregates('cd');

-- a definition change rebuilds the sets from the remembered events: a
-- copy of cd restored from cd.ck gets a new window f2 of 20, backfilled;
-- f's sets stay as they were
SELECT streamforge.create_pipeline('cd4', ARRAY['p0'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 10, 5),
          streamforge.session('g', 5)],
    lateness => 20,
    measures => ARRAY['amount', 'user_id NULL'],
    aggregates => ARRAY['count', 'count_distinct(user_id) AS users',
                        'count_distinct(amount)', 'count(user_id)']);
SELECT streamforge.restore('cd4', (SELECT c FROM cd.ck));
SELECT count(*) FROM streamforge.add_window('cd4', streamforge.fixed('f2', 20));
-- f2 [0,20): t = 1..6: users {1,2,7}, amounts {10,20,30,40};
-- [20,40): t = 20, 25, 30, 31: users {3,5,4}, amounts {1,2}
SELECT window_name, window_start, count, aggregates FROM streamforge.live_aggregates('cd4')
WHERE window_name IN ('f', 'f2') ORDER BY window_name, window_start;
SELECT count(*) FROM streamforge.set_lateness('cd4', 25);
CREATE TABLE cd.ck4 AS SELECT streamforge.checkpoint('cd4') AS c;
SELECT streamforge.restore('cd4', (SELECT c FROM cd.ck4));
SELECT streamforge.checkpoint('cd4') = (SELECT c FROM cd.ck4) AS same_bytes;

-- a measures pipeline without count_distinct keeps format version 2
SELECT streamforge.create_pipeline('cd2', ARRAY['p0'], ARRAY[streamforge.fixed('f', 10)],
    measures => ARRAY['amount'], aggregates => ARRAY['count', 'sum(amount)']);
SELECT count(*) FROM streamforge.ingest_measures('cd2', 'p0', 0, 'e1', 'k', 1, ARRAY[10]);
SELECT get_byte(streamforge.checkpoint('cd2'), 9) AS format_version;
SELECT strpos(cd.doc(streamforge.checkpoint('cd2')), 'state_var') AS state_var_at;

-- spellings: the normalized form, and what is refused
SELECT streamforge.create_pipeline('cd3', ARRAY['p0'], ARRAY[streamforge.fixed('f', 10)],
    measures => ARRAY['a'], aggregates => ARRAY['count_distinct( a )']);
SELECT name, type, func, measure FROM streamforge.aggregate_columns('cd3');
SELECT streamforge.inspect_checkpoint(streamforge.checkpoint('cd3')) -> 'definition' -> 'aggregates';
SELECT streamforge.create_pipeline('bad', ARRAY['p0'], ARRAY[streamforge.fixed('f', 10)],
    measures => ARRAY['a'], aggregates => ARRAY['count_distinct']);
SELECT streamforge.create_pipeline('bad', ARRAY['p0'], ARRAY[streamforge.fixed('f', 10)],
    measures => ARRAY['a'], aggregates => ARRAY['count_distinct(*)']);
SELECT streamforge.create_pipeline('bad', ARRAY['p0'], ARRAY[streamforge.fixed('f', 10)],
    measures => ARRAY['a'], aggregates => ARRAY['count_distinct(b)']);
SELECT streamforge.create_pipeline('bad', ARRAY['p0'], ARRAY[streamforge.fixed('f', 10)],
    measures => ARRAY['a'], aggregates => ARRAY['count_distinct(a > 1)']);
-- the aggregates of a pipeline cannot be changed by restoring another's
SELECT streamforge.restore('cd3', (SELECT c FROM cd.ck));

-- create_aggregate maps count(DISTINCT x) of an integer onto count_distinct
SET TimeZone = 'UTC';
CREATE TABLE cd.visits (id bigserial PRIMARY KEY, page text NOT NULL,
                        user_id integer, at timestamptz NOT NULL);
SELECT streamforge.create_aggregate('cd_visitors', $$
    SELECT page, count(*) AS visits, count(DISTINCT user_id) AS visitors
      FROM cd.visits
     GROUP BY page, streamforge.tumble(at, interval '1 minute')
$$, lateness => interval '1 minute');
SELECT ordinality, name, type, func, measure
  FROM streamforge.aggregate_columns('cd_visitors');
INSERT INTO cd.visits (page, user_id, at) VALUES
    ('/a', 1, '2026-11-30 12:00:05+00'), ('/a', 1, '2026-11-30 12:00:10+00'),
    ('/a', 2, '2026-11-30 12:00:20+00'), ('/a', NULL, '2026-11-30 12:00:30+00'),
    ('/b', 3, '2026-11-30 12:00:40+00'), ('/a', 5, '2026-11-30 12:01:10+00'),
    ('/a', 1, '2026-11-30 12:00:50+00');
-- /a [12:00, 12:01): 5 visits, users {1, 2}; /b: 1, {3}; /a [12:01): 1, {5}
SELECT * FROM cd_visitors_live ORDER BY page, window_start;
-- the same as the query
SELECT page, streamforge.tumble(at, interval '1 minute') AS window_start,
       count(*) AS visits, count(DISTINCT user_id) AS visitors
  FROM cd.visits GROUP BY 1, 2 ORDER BY 1, 2;
SELECT streamforge.drop_aggregate('cd_visitors');
-- count(DISTINCT x) of a text is refused
SELECT streamforge.create_aggregate('cd_pages', $$
    SELECT count(DISTINCT page) AS pages FROM cd.visits
     GROUP BY streamforge.tumble(at, interval '1 minute') $$);

-- memory: a set lives in the pipeline's context "streamforge aggregate
-- states" (this backend's cache); 20000 distinct values in one bucket
-- take a 32768-entry table (512 kB), freed when the bucket is finalized
SELECT count(*) FROM streamforge.ingest_measures_batch('cd3', ARRAY(
    SELECT ROW('p0', i, 'e' || i, 'k', 1, ARRAY[i])::streamforge.measures_delivery
    FROM generate_series(0, 19999) AS i));
SELECT aggregates FROM streamforge.live_aggregates('cd3');
SELECT sum(total_bytes) > 512 * 1024 AS holds_the_set FROM pg_backend_memory_contexts
WHERE name = 'streamforge aggregate states';
SELECT count(*) FROM streamforge.advance('cd3', 'p0', 100);
SELECT count(*) AS live FROM streamforge.live_aggregates('cd3');
SELECT sum(total_bytes) < 64 * 1024 AS freed FROM pg_backend_memory_contexts
WHERE name = 'streamforge aggregate states';

SELECT streamforge.drop_pipeline(n) FROM unnest(ARRAY['cd', 'cd2', 'cd3', 'cd4']) AS n;
DROP SCHEMA cd CASCADE;
