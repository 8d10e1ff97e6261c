-- Nullable measures (issue 38, defect 5; docs/aggregates.md, "NULL
-- measures"): a measure declared 'name NULL' takes NULL elements of
-- measures; every aggregate of it ignores them, as SQL's do; count(m)
-- counts its non-NULL values; an aggregate that saw no value is NULL
-- (count 0).  Each result below is checked by hand against the events.
SELECT streamforge.create_pipeline('n', ARRAY['p0'],
    ARRAY[streamforge.fixed('w', 10), streamforge.session('s', 5)],
    lateness => 5,
    measures => ARRAY['one', 'x NULL', 'y null'],
    aggregates => ARRAY['count', 'count(x)', 'sum(x)', 'avg(x)', 'min(x)',
        'max(x)', 'var_pop(x)', 'var_samp(x)', 'stddev_pop(x)',
        'stddev_samp(x)', 'first(x)', 'last(x)', 'count_if(x >= 10) AS big',
        'sum(y)', 'count(one)']);
SELECT * FROM streamforge.aggregate_columns('n');
-- the declaration is normalized to 'name NULL' in the catalog
SELECT measures FROM streamforge.pipeline_info WHERE name = 'n';
-- key k: x = NULL, 10, NULL, 20; y always NULL
SELECT seq, window_name, window_start, count, aggregates
  FROM streamforge.ingest_measures('n', 'p0', 0, 'e0', 'k', 1, ARRAY[1, NULL, NULL]);
SELECT count(*) FROM streamforge.ingest_measures_batch('n', ARRAY[
    ROW('p0', 1, 'e1', 'k', 2, ARRAY[1, 10, NULL])::streamforge.measures_delivery,
    ROW('p0', 2, 'e2', 'k', 3, ARRAY[1, NULL, NULL])::streamforge.measures_delivery,
    ROW('p0', 3, 'e3', 'k', 4, ARRAY[1, 20, NULL])::streamforge.measures_delivery]);
-- key only_null: one event, x NULL: every aggregate of x NULL, count(x) 0
SELECT count(*) FROM streamforge.ingest_measures('n', 'p0', 4, 'e4', 'only_null', 2, ARRAY[7, NULL, NULL]);
SELECT window_name, key, window_start, window_end, count, aggregates
  FROM streamforge.live_aggregates('n') ORDER BY window_name, key, window_start;
-- duplicates: the same event with the same NULLs is a duplicate, with a
-- value where it had NULL a conflict
SELECT count(*) FROM streamforge.ingest_measures('n', 'p0', 5, 'e0', 'k', 1, ARRAY[1, NULL, NULL]);
SELECT count(*) FROM streamforge.ingest_measures('n', 'p0', 6, 'e0', 'k', 1, ARRAY[1, 0, NULL]);
-- a NULL of a measure not declared NULL is still 22004 (first, batch)
SELECT count(*) FROM streamforge.ingest_measures('n', 'p0', 6, 'e9', 'k', 1, ARRAY[NULL, 1, 1]);
SELECT count(*) FROM streamforge.ingest_measures_batch('n', ARRAY[
    ROW('p0', 6, 'e9', 'k', 1, ARRAY[NULL, 1, 1])::streamforge.measures_delivery]);
-- the first measure cannot be nullable; a bad declaration
SELECT streamforge.create_pipeline('bad', ARRAY['p0'], ARRAY[streamforge.fixed('w', 10)],
    measures => ARRAY['x NULL', 'y']);
SELECT streamforge.create_pipeline('bad', ARRAY['p0'], ARRAY[streamforge.fixed('w', 10)],
    measures => ARRAY['a', 'x NULLS']);
-- sessions merge: s1 [20, 25) with x NULL, s2 [27, 32) with x 5, then an
-- event at 24 with x NULL bridges them: one session, count(x) 1, sum 5
SELECT count(*) FROM streamforge.ingest_measures_batch('n', ARRAY[
    ROW('p0', 6, 's1', 'm', 20, ARRAY[1, NULL, NULL])::streamforge.measures_delivery,
    ROW('p0', 7, 's2', 'm', 27, ARRAY[1, 5, 3])::streamforge.measures_delivery]);
SELECT window_name, window_start, window_end, count, aggregates ->> 'count_x' AS cx, aggregates ->> 'sum_x' AS sx,
       aggregates ->> 'min_x' AS mn, aggregates ->> 'first_x' AS fx, aggregates ->> 'sum_y' AS sy
  FROM streamforge.live_aggregates('n') WHERE key = 'm' ORDER BY window_name, window_start;
SELECT count(*) FROM streamforge.ingest_measures('n', 'p0', 8, 's3', 'm', 24, ARRAY[1, NULL, NULL]);
SELECT window_name, window_start, window_end, count, aggregates ->> 'count_x' AS cx, aggregates ->> 'sum_x' AS sx,
       aggregates ->> 'min_x' AS mn, aggregates ->> 'first_x' AS fx, aggregates ->> 'sum_y' AS sy
  FROM streamforge.live_aggregates('n') WHERE key = 'm' ORDER BY window_name, window_start;
-- NULL-only sessions merging: both sides without a value stay NULL
SELECT count(*) FROM streamforge.ingest_measures_batch('n', ARRAY[
    ROW('p0', 9, 'z1', 'z', 40, ARRAY[1, NULL, NULL])::streamforge.measures_delivery,
    ROW('p0', 10, 'z2', 'z', 46, ARRAY[1, NULL, NULL])::streamforge.measures_delivery,
    ROW('p0', 11, 'z3', 'z', 43, ARRAY[1, NULL, NULL])::streamforge.measures_delivery]);
SELECT window_name, window_start, window_end, count, aggregates ->> 'count_x' AS cx, aggregates ->> 'sum_x' AS sx,
       aggregates ->> 'max_x' AS mx
  FROM streamforge.live_aggregates('n') WHERE key = 'z' ORDER BY window_name, window_start;
-- the checkpoint: "x NULL" in the definition, null elements, the
-- non-NULL count first in a nullable measure's state
SELECT streamforge.inspect_checkpoint(streamforge.checkpoint('n')) -> 'definition' -> 'measures';
SELECT i -> 'measures' FROM jsonb_array_elements(
    streamforge.inspect_checkpoint(streamforge.checkpoint('n')) -> 'identities') AS i
 WHERE i ->> 'event_id' IN ('e0', 'e1', 's2') ORDER BY i ->> 'event_id';
-- x: count, sum (2), sumsq (3), min, max, first (3), last (3); y: count,
-- sum (2); then count_if: k's x values are 10 (time 2, arrival 2) and 20
-- (time 4, arrival 4); only_null's state is all zeros
SELECT r ->> 'key' AS key, r -> 'state' AS state FROM jsonb_array_elements(
    streamforge.inspect_checkpoint(streamforge.checkpoint('n')) -> 'windows') AS r
 WHERE r ->> 'key' IN ('k', 'only_null') AND r ->> 'window_name' = 'w' ORDER BY 1;
-- restore of its own checkpoint: the same bytes, the same aggregates
CREATE TEMP TABLE ck AS SELECT streamforge.checkpoint('n') AS c;
CREATE TEMP TABLE before AS SELECT * FROM streamforge.live_aggregates('n');
SELECT streamforge.restore('n', (SELECT c FROM ck));
SELECT streamforge.checkpoint('n') = (SELECT c FROM ck) AS same_bytes;
SELECT count(*) AS differing FROM (
    (SELECT * FROM streamforge.live_aggregates('n') EXCEPT SELECT * FROM before)
    UNION ALL (SELECT * FROM before EXCEPT SELECT * FROM streamforge.live_aggregates('n'))) AS d;
-- late events keep their NULLs: the watermark passes 10 + 5, then k@1
SELECT count(*) FROM streamforge.advance('n', 'p0', 60);
SELECT count(*) FROM streamforge.ingest_measures('n', 'p0', 12, 'late1', 'k', 1, ARRAY[3, NULL, 4]);
SELECT event_id, key, event_time, value FROM streamforge.late_events('n');
SELECT i -> 'measures' FROM jsonb_array_elements(
    streamforge.inspect_checkpoint(streamforge.checkpoint('n')) -> 'identities') AS i
 WHERE i ->> 'event_id' = 'late1';
-- a cold load (a new connection: the snapshot, then the journal of the
-- calls since, with their NULL masks) gives the same checkpoint
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT dblink_connect('nl_cold', format('dbname=%s port=%s host=%s user=%s',
    current_database(), current_setting('port'),
    split_part(current_setting('unix_socket_directories'), ',', 1), current_user));
SELECT c = streamforge.checkpoint('n') AS cold_load_same
  FROM dblink('nl_cold', 'SELECT streamforge.checkpoint(''n'')') AS t(c bytea);
SELECT c = streamforge.checkpoint('n') AS after_compact_same
  FROM dblink('nl_cold', 'SELECT streamforge.compact(''n''), streamforge.checkpoint(''n'')') AS t(x text, c bytea);
-- definition changes carry the identities with their NULL masks over:
-- add_window builds the new window from the remembered events, then
-- set_retention forgets what is below its horizon; the state restores and
-- cold-loads the same
CREATE TEMP TABLE before3 AS SELECT * FROM streamforge.live_aggregates('n');
SELECT count(*) FROM streamforge.add_window('n', streamforge.fixed('w2', 100));
SELECT count(*) FROM streamforge.ingest_measures_batch('n', ARRAY[
    ROW('p0', 13, 'a1', 'k', 70, ARRAY[1, NULL, 2])::streamforge.measures_delivery,
    ROW('p0', 14, 'a2', 'k', 71, ARRAY[1, 8, NULL])::streamforge.measures_delivery]);
-- w2 [0, 100): every remembered event but the late one: k has e0..e3,
-- a1, a2 (x: 10, 20, 8; y: 2), m s1..s3 (x 5, y 3), z and only_null
-- none
SELECT window_name, key, window_start, count, aggregates ->> 'count_x' AS cx,
       aggregates ->> 'sum_x' AS sx, aggregates ->> 'sum_y' AS sy
  FROM streamforge.live_aggregates('n') WHERE window_name = 'w2';
-- the buckets of before did not change (a1 and a2 open new ones)
SELECT count(*) AS changed FROM (SELECT * FROM before3 EXCEPT
    SELECT * FROM streamforge.live_aggregates('n')) AS d;
SELECT count(*) FROM streamforge.set_retention('n', 20);
SELECT streamforge.restore('n', streamforge.checkpoint('n'));
SELECT c = streamforge.checkpoint('n') AS cold_load_same
  FROM dblink('nl_cold', 'SELECT streamforge.checkpoint(''n'')') AS t(c bytea);
SELECT dblink_disconnect('nl_cold');
SELECT streamforge.drop_pipeline(n) FROM unnest(ARRAY['n']) AS n;
DROP EXTENSION dblink;
-- the durable outputs carry the NULLs: changelog and results rows of a
-- bucket whose x is NULL only (b) and of one with a value (a)
SELECT streamforge.create_pipeline('no', ARRAY['p0'], ARRAY[streamforge.fixed('w', 10)],
    measures => ARRAY['one', 'x NULL'], aggregates => ARRAY['count', 'count(x)', 'avg(x)', 'last(x)']);
SELECT streamforge.configure_outputs('no', changelog => true, results => true);
SELECT count(*) FROM streamforge.ingest_measures_batch('no', ARRAY[
    ROW('p0', 0, 'a1', 'a', 1, ARRAY[1, 4])::streamforge.measures_delivery,
    ROW('p0', 1, 'a2', 'a', 2, ARRAY[1, NULL])::streamforge.measures_delivery,
    ROW('p0', 2, 'b1', 'b', 3, ARRAY[1, NULL])::streamforge.measures_delivery]);
SELECT count(*) FROM streamforge.advance('no', 'p0', 10);
SELECT op, key, count, aggregates FROM streamforge.changelog WHERE pipeline = 'no' ORDER BY seq;
SELECT key, count, aggregates FROM streamforge.results WHERE pipeline = 'no' ORDER BY key;
SELECT streamforge.drop_pipeline('no');
