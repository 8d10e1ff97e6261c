-- The outputs' rows are written in bulk (0.4.0, issue 42 item 1;
-- src/persist/sink_bulk.c): table_multi_insert and the index entries, as
-- COPY FROM writes them, in batches of 1,000 rows.  What an INSERT would
-- check is checked (the unique keys, NOT NULL, the CHECK of op), the
-- generated avg is computed, and a trigger someone added to an output
-- table still fires: the sink then writes that table with its INSERT
-- statement.
\set VERBOSITY sqlstate

SELECT streamforge.create_pipeline('bk', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], 5, time_unit => interval '1 second');
SELECT streamforge.configure_outputs('bk');

-- one call: 2,500 events over 250 keys and 10 windows (2,500 changes, more
-- than two batches of 1,000), then 300 late events in one call
SELECT count(*) FROM streamforge.ingest_batch('bk', ARRAY(
    SELECT ROW('p', i, 'e' || i, 'k' || (i % 250), i / 250 * 10, i)::streamforge.delivery
      FROM generate_series(0, 2499) AS i));
SELECT count(*) FROM streamforge.ingest_batch('bk', ARRAY(
    SELECT ROW('p', 2500 + i, 'l' || i, 'k' || i, 0, 1)::streamforge.delivery
      FROM generate_series(0, 299) AS i));

-- the changelog: every change once, seq 1..n without a gap
SELECT count(*), min(seq), max(seq), count(DISTINCT seq),
       count(*) FILTER (WHERE window_start_ts = to_timestamp(window_start)) AS ts_ok
  FROM streamforge.changelog WHERE pipeline = 'bk';
-- the results: the changelog applied (the last change of each address),
-- with the generated avg
SELECT count(*) AS rows,
       count(*) FILTER (WHERE r.avg = r.sum / r.count) AS avg_ok,
       count(*) FILTER (WHERE r.window_end_ts = to_timestamp(r.window_end)) AS ts_ok
  FROM streamforge.results AS r WHERE r.pipeline = 'bk';
SELECT count(*) AS differ FROM (
    (SELECT window_name, key, window_start, window_end, count, sum, min, max, seq
       FROM streamforge.results WHERE pipeline = 'bk'
     EXCEPT ALL
     SELECT DISTINCT ON (window_name, key, window_start) window_name, key,
            window_start, window_end, count, sum, min, max, seq
       FROM streamforge.changelog WHERE pipeline = 'bk'
      ORDER BY window_name, key, window_start, seq DESC)
    UNION ALL
    (SELECT DISTINCT ON (window_name, key, window_start) window_name, key,
            window_start, window_end, count, sum, min, max, seq
       FROM streamforge.changelog WHERE pipeline = 'bk'
      ORDER BY window_name, key, window_start, seq DESC
     EXCEPT ALL
     SELECT window_name, key, window_start, window_end, count, sum, min, max, seq
       FROM streamforge.results WHERE pipeline = 'bk')) AS d;
-- and what visible() shows
SELECT count(*) AS differ FROM (
    (SELECT key, window_start, count FROM streamforge.visible('bk')
     EXCEPT ALL
     SELECT key, window_start, count FROM streamforge.results WHERE pipeline = 'bk')
    UNION ALL
    (SELECT key, window_start, count FROM streamforge.results WHERE pipeline = 'bk'
     EXCEPT ALL
     SELECT key, window_start, count FROM streamforge.visible('bk'))) AS d;
-- the late output: 300 rows, late_seq 1..300
SELECT count(*), min(late_seq), max(late_seq), count(DISTINCT event_id),
       count(*) FILTER (WHERE event_time_ts = to_timestamp(event_time)) AS ts_ok
  FROM streamforge.late_output WHERE pipeline = 'bk';
-- the indexes have every row: by key (hash), by address, by primary key
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) FROM streamforge.results WHERE key = 'k7';
SELECT count(*) FROM streamforge.results
 WHERE pipeline = 'bk' AND window_name = 'w' AND window_start = 0
   AND md5(key) = md5('k249');
SELECT count(*) FROM streamforge.changelog WHERE pipeline = 'bk' AND seq = 2500;
SELECT count(*) FROM streamforge.late_output WHERE pipeline = 'bk' AND late_seq = 300;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- a rolled back call leaves nothing, and the next one writes the same seq
BEGIN;
SELECT count(*) FROM streamforge.ingest('bk', 'p', 2800, 'x1', 'k1', 95, 1);
SAVEPOINT s;
SELECT count(*) FROM streamforge.ingest('bk', 'p', 2801, 'x2', 'k2', 96, 1);
SELECT max(seq) FROM streamforge.changelog WHERE pipeline = 'bk';
ROLLBACK TO SAVEPOINT s;
SELECT max(seq) FROM streamforge.changelog WHERE pipeline = 'bk';
COMMIT;
SELECT seq, op, key, window_start, count FROM streamforge.changelog
 WHERE pipeline = 'bk' AND seq > 2500 ORDER BY seq;

-- a trigger on an output table (only its owner or a superuser can add
-- one) fires for every row, as before 0.4.0: the sink writes that table
-- with its INSERT statement
CREATE TABLE bk_seen (tab text, key text);
CREATE FUNCTION bk_seen() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO bk_seen VALUES (TG_TABLE_NAME, NEW.key);
    RETURN NEW;
END $$;
CREATE TRIGGER bk_seen AFTER INSERT ON streamforge.changelog
    FOR EACH ROW EXECUTE FUNCTION bk_seen();
CREATE TRIGGER bk_seen AFTER INSERT ON streamforge.late_output
    FOR EACH ROW EXECUTE FUNCTION bk_seen();
SELECT count(*) FROM streamforge.ingest_batch('bk', ARRAY[
    ROW('p', 2900, 'y1', 'k1', 97, 1), ROW('p', 2901, 'y2', 'k2', 97, 1),
    ROW('p', 2902, 'y3', 'k3', 1, 1)]::streamforge.delivery[]);
SELECT tab, key, count(*) FROM bk_seen GROUP BY tab, key ORDER BY tab, key;
SELECT seq, op, key, window_start, count FROM streamforge.changelog
 WHERE pipeline = 'bk' AND seq > 2503 ORDER BY seq;
SELECT key, count, seq FROM streamforge.results
 WHERE pipeline = 'bk' AND window_start = 90 AND key IN ('k1', 'k2') ORDER BY key;
SELECT late_seq, event_id, key FROM streamforge.late_output
 WHERE pipeline = 'bk' AND late_seq > 300;
DROP TRIGGER bk_seen ON streamforge.changelog;
DROP TRIGGER bk_seen ON streamforge.late_output;

-- a BEFORE trigger that refuses a row refuses the call
CREATE FUNCTION bk_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'refused %', NEW.key USING ERRCODE = 'P0001';
END $$;
CREATE TRIGGER bk_refuse BEFORE INSERT ON streamforge.results
    FOR EACH ROW EXECUTE FUNCTION bk_refuse();
SELECT count(*) FROM streamforge.ingest('bk', 'p', 2950, 'z1', 'k5', 98, 1);
DROP TRIGGER bk_refuse ON streamforge.results;
SELECT count(*) FROM streamforge.ingest('bk', 'p', 2950, 'z1', 'k5', 98, 1);
SELECT key, count FROM streamforge.results
 WHERE pipeline = 'bk' AND window_start = 90 AND key = 'k5';

SELECT streamforge.drop_pipeline('bk');
SELECT count(*) FROM streamforge.changelog WHERE pipeline = 'bk';
DROP TABLE bk_seen;
DROP FUNCTION bk_seen();
DROP FUNCTION bk_refuse();
