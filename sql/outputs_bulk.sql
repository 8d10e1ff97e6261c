-- The outputs' rows are written in bulk (0.4.0, issue 42 item 1;
-- src/persist/sink_bulk.c): table_multi_insert and the index entries, as
-- COPY FROM writes them, in batches of 1,000 rows.  What an INSERT would
-- check is checked (the unique keys, NOT NULL, the CHECK of op), the
-- generated avg is computed, and a trigger someone added to an output
-- table still fires: the sink then writes that table with its INSERT
-- statement.
\set VERBOSITY sqlstate

SELECT streamforge.create_pipeline('bk', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], 5, time_unit => interval '1 second',
    out_of_orderness => 0);
SELECT streamforge.configure_outputs('bk');

-- one call: 2,500 events over 250 keys and 10 windows (the 9 windows it
-- closes: 2,250 final rows, more than two batches of 1,000), then 300 late
-- events in one call
SELECT count(*) FROM streamforge.ingest_batch('bk', ARRAY(
    SELECT ROW('p', i, 'e' || i, 'k' || (i % 250), i / 250 * 10, i)::streamforge.delivery
      FROM generate_series(0, 2499) AS i));
SELECT count(*) FROM streamforge.ingest_batch('bk', ARRAY(
    SELECT ROW('p', 2500 + i, 'l' || i, 'k' || i, 0, 1)::streamforge.delivery
      FROM generate_series(0, 299) AS i));
SELECT max(seq) AS s0 FROM streamforge.changelog WHERE pipeline = 'bk' \gset

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
     SELECT * FROM (SELECT DISTINCT ON (window_name, key, window_start)
            window_name, key, window_start, window_end, count, sum, min, max, seq
       FROM streamforge.changelog WHERE pipeline = 'bk'
      ORDER BY window_name, key, window_start, seq DESC) AS l)
    UNION ALL
    (SELECT * FROM (SELECT DISTINCT ON (window_name, key, window_start)
            window_name, key, window_start, window_end, count, sum, min, max, seq
       FROM streamforge.changelog WHERE pipeline = 'bk'
      ORDER BY window_name, key, window_start, seq DESC) AS l
     EXCEPT ALL
     SELECT window_name, key, window_start, window_end, count, sum, min, max, seq
       FROM streamforge.results WHERE pipeline = 'bk')) AS d;
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
SELECT count(*) FROM streamforge.changelog WHERE pipeline = 'bk' AND seq = :s0;
SELECT count(*) FROM streamforge.late_output WHERE pipeline = 'bk' AND late_seq = 300;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- a rolled back call leaves nothing (x2 closes window 90: 250 rows)
BEGIN;
SELECT count(*) FROM streamforge.ingest('bk', 'p', 2800, 'x1', 'k1', 95, 1);
SAVEPOINT s;
SELECT count(*) FROM streamforge.ingest('bk', 'p', 2801, 'x2', 'k2', 120, 1);
SELECT max(seq) FROM streamforge.changelog WHERE pipeline = 'bk';
ROLLBACK TO SAVEPOINT s;
SELECT max(seq) FROM streamforge.changelog WHERE pipeline = 'bk';
COMMIT;
SELECT seq, op, key, window_start, count FROM streamforge.changelog
 WHERE pipeline = 'bk' AND seq > :s0 ORDER BY seq;

-- a trigger on an output table (only its owner or a superuser can add
-- one) fires for every row, as before 0.4.0: the sink writes that table
-- with its INSERT statement
CREATE TABLE bk_seen (tab text, key text);
CREATE FUNCTION bk_seen() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO public.bk_seen VALUES (TG_TABLE_NAME, NEW.key);
    RETURN NEW;
END $$;
CREATE TRIGGER bk_seen AFTER INSERT ON streamforge.changelog
    FOR EACH ROW EXECUTE FUNCTION bk_seen();
CREATE TRIGGER bk_seen AFTER INSERT ON streamforge.late_output
    FOR EACH ROW EXECUTE FUNCTION bk_seen();
SELECT max(seq) AS s1 FROM streamforge.changelog WHERE pipeline = 'bk' \gset
SELECT count(*) FROM streamforge.ingest_batch('bk', ARRAY[
    ROW('p', 2801, 'y1', 'k1', 97, 1), ROW('p', 2802, 'y2', 'k2', 97, 1),
    ROW('p', 2803, 'y3', 'k3', 1, 1),
    ROW('p', 2804, 'y4', 'k4', 130, 1)]::streamforge.delivery[]);
SELECT tab, count(*), count(DISTINCT key) FROM bk_seen GROUP BY tab ORDER BY tab;
SELECT count(*), min(seq) - :s1 AS first, max(seq) - :s1 AS last
  FROM streamforge.changelog WHERE pipeline = 'bk' AND seq > :s1;
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
SELECT count(*) FROM streamforge.ingest('bk', 'p', 2805, 'z1', 'k5', 145, 1);
DROP TRIGGER bk_refuse ON streamforge.results;
SELECT count(*) FROM streamforge.ingest('bk', 'p', 2805, 'z1', 'k5', 145, 1);
SELECT key, window_start, count FROM streamforge.results
 WHERE pipeline = 'bk' AND window_start = 130;

-- a column someone added with a DEFAULT gets its default, as with the
-- INSERT statement: the bulk path evaluates the defaults of the columns
-- it does not give (a volatile one per row); in a transaction rolled
-- back, so that no other test sees the columns
SELECT max(seq) AS s2 FROM streamforge.changelog WHERE pipeline = 'bk' \gset
SELECT max(late_seq) AS l2 FROM streamforge.late_output WHERE pipeline = 'bk' \gset
BEGIN;
CREATE SEQUENCE bk_defseq;
ALTER TABLE streamforge.changelog ADD COLUMN bk_note text DEFAULT 'noted',
    ADD COLUMN bk_n bigint;
ALTER TABLE streamforge.changelog ALTER COLUMN bk_n SET DEFAULT nextval('bk_defseq');
ALTER TABLE streamforge.late_output ADD COLUMN bk_flag integer DEFAULT 7;
-- k0 and k1 at 150, k9 at 170 (which closes window 150), a late event
SELECT count(*) FROM streamforge.ingest_batch('bk', ARRAY(
    SELECT ROW('p', 2806 + i, 'd' || i, CASE WHEN i < 3 THEN 'k' || (i % 2) ELSE 'k9' END,
               CASE WHEN i < 3 THEN 150 WHEN i = 3 THEN 170 ELSE 0 END, 1)::streamforge.delivery
      FROM generate_series(0, 4) AS i));
SELECT op, key, bk_note, bk_n FROM streamforge.changelog
 WHERE pipeline = 'bk' AND seq > :s2 ORDER BY seq;
SELECT event_id, bk_flag FROM streamforge.late_output
 WHERE pipeline = 'bk' AND late_seq > :l2 ORDER BY late_seq;
ROLLBACK;
SELECT streamforge.drop_pipeline('bk');
SELECT count(*) FROM streamforge.changelog WHERE pipeline = 'bk';
DROP TABLE bk_seen;
DROP FUNCTION bk_seen();
DROP FUNCTION bk_refuse();
