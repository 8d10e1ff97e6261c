-- Definition changes of parallel pipelines (issue 46,
-- docs/design/parallel-writers.md, section 6.5): each change on a parallel
-- pipeline gives the same checkpoint (but for the "writers" key), the same
-- changes and the same outputs (changelog with seq, results, late output,
-- live buckets) as the same change on a serial pipeline with the same
-- history, then and after more writes, and for a new connection (a cold
-- load of the new head and lanes).
\set VERBOSITY sqlstate

-- rd_s is serial, rd_p parallel; the calls go to both
SELECT streamforge.create_pipeline('rd_s', ARRAY['a', 'b'],
         ARRAY[streamforge.fixed('f', 10)], 0);
SELECT streamforge.create_pipeline('rd_p', ARRAY['a', 'b'],
         ARRAY[streamforge.fixed('f', 10)], 0, writers => 'parallel');
SELECT streamforge.configure_outputs('rd_s');
SELECT streamforge.configure_outputs('rd_p');

-- one delivery to both pipelines, each in a transaction of its own
CREATE PROCEDURE rd_ingest(part text, off bigint, id text, k text, t bigint,
                           v bigint) LANGUAGE plpgsql AS $$
BEGIN
    PERFORM streamforge.ingest_count('rd_s', part, off, id, k, t, v);
    COMMIT;
    PERFORM streamforge.ingest_count('rd_p', part, off, id, k, t, v);
    COMMIT;
END $$;
CREATE PROCEDURE rd_advance(part text, progress bigint) LANGUAGE plpgsql AS $$
BEGIN
    PERFORM streamforge.advance('rd_s', part, progress);
    COMMIT;
    PERFORM streamforge.advance('rd_p', part, progress);
    COMMIT;
END $$;

-- what differs between the two pipelines: 0 rows each, the same checkpoint
CREATE FUNCTION rd_compare(s text, p text,
    OUT checkpoint_same bool, OUT changelog_rows bigint, OUT changelog_diff bigint,
    OUT results_diff bigint, OUT late_rows bigint, OUT late_diff bigint,
    OUT live_diff bigint)
LANGUAGE plpgsql AS $$
BEGIN
    checkpoint_same :=
        streamforge.inspect_checkpoint(streamforge.checkpoint(s))::jsonb =
        streamforge.inspect_checkpoint(streamforge.checkpoint(p))::jsonb
            #- '{definition,writers}';
    SELECT count(*) INTO changelog_rows FROM streamforge.changelog WHERE pipeline = s;
    SELECT count(*) INTO changelog_diff FROM (
        (SELECT seq, op, window_name, key, window_start, window_end, count, sum, min, max
           FROM streamforge.changelog WHERE pipeline = s
         EXCEPT ALL
         SELECT seq, op, window_name, key, window_start, window_end, count, sum, min, max
           FROM streamforge.changelog WHERE pipeline = p)
        UNION ALL
        (SELECT seq, op, window_name, key, window_start, window_end, count, sum, min, max
           FROM streamforge.changelog WHERE pipeline = p
         EXCEPT ALL
         SELECT seq, op, window_name, key, window_start, window_end, count, sum, min, max
           FROM streamforge.changelog WHERE pipeline = s)) d;
    SELECT count(*) INTO results_diff FROM (
        (SELECT window_name, key, window_start, window_end, count, sum, seq, final
           FROM streamforge.results WHERE pipeline = s
         EXCEPT ALL
         SELECT window_name, key, window_start, window_end, count, sum, seq, final
           FROM streamforge.results WHERE pipeline = p)
        UNION ALL
        (SELECT window_name, key, window_start, window_end, count, sum, seq, final
           FROM streamforge.results WHERE pipeline = p
         EXCEPT ALL
         SELECT window_name, key, window_start, window_end, count, sum, seq, final
           FROM streamforge.results WHERE pipeline = s)) d;
    SELECT count(*) INTO late_rows FROM streamforge.late_output WHERE pipeline = s;
    SELECT count(*) INTO late_diff FROM (
        (SELECT late_seq, partition, source_offset, event_id, key, event_time, value, watermark
           FROM streamforge.late_output WHERE pipeline = s
         EXCEPT ALL
         SELECT late_seq, partition, source_offset, event_id, key, event_time, value, watermark
           FROM streamforge.late_output WHERE pipeline = p)
        UNION ALL
        (SELECT late_seq, partition, source_offset, event_id, key, event_time, value, watermark
           FROM streamforge.late_output WHERE pipeline = p
         EXCEPT ALL
         SELECT late_seq, partition, source_offset, event_id, key, event_time, value, watermark
           FROM streamforge.late_output WHERE pipeline = s)) d;
    SELECT count(*) INTO live_diff FROM (
        (SELECT * FROM streamforge.live(s) EXCEPT ALL SELECT * FROM streamforge.live(p))
        UNION ALL
        (SELECT * FROM streamforge.live(p) EXCEPT ALL SELECT * FROM streamforge.live(s))) d;
END $$;

-- the changelog of one pipeline from seq on, to read by hand
CREATE FUNCTION rd_changes(pipe text, since bigint)
RETURNS TABLE (seq bigint, op text, window_name text, key text,
               window_start bigint, window_end bigint, count bigint, sum numeric)
LANGUAGE sql AS $$
    SELECT seq, op, window_name, key, window_start, window_end, count, sum
      FROM streamforge.changelog WHERE pipeline = pipe AND seq > since
     ORDER BY seq
$$;

-- the history: [0, 10) finalized at watermark 15, [10, 20) live, e4 late
CALL rd_ingest('a', 0, 'e1', 'k1', 3, 1);
CALL rd_ingest('b', 0, 'e2', 'k1', 12, 2);
CALL rd_ingest('a', 1, 'e3', 'k2', 14, 4);
CALL rd_advance('a', 15);
CALL rd_advance('b', 15);
CALL rd_ingest('b', 1, 'e4', 'k1', 5, 8);
SELECT * FROM rd_compare('rd_s', 'rd_p');
SELECT streamforge.watermark('rd_p'), (SELECT count(*) FROM streamforge.late_events('rd_p')) AS late;

-- 1. set_lateness 0 -> 5: an event is late below watermark - 5 now, so
-- after the watermark reaches 22 one at 18 is not late and one at 9 is;
-- the change's own change row is the
-- same on both (seq 2)
SELECT * FROM streamforge.set_lateness('rd_s', 5);
SELECT * FROM streamforge.set_lateness('rd_p', 5);
SELECT streamforge.definition('rd_p')->'lateness' AS lateness;
CALL rd_advance('a', 22);
CALL rd_advance('b', 22);
CALL rd_ingest('a', 2, 'e5', 'k1', 18, 16);
CALL rd_ingest('b', 2, 'e6', 'k2', 9, 32);
SELECT * FROM rd_compare('rd_s', 'rd_p');
-- the parallel pipeline's changes after seq 5, by hand: e5 updates
-- [10, 20) of k1 (e2 at 12 and e5 at 18: count 2, sum 2 + 16); e6 at
-- 9 < 22 - 5 is late, e5 at 18 is not
SELECT * FROM rd_changes('rd_p', 5);
SELECT event_id, watermark FROM streamforge.late_output WHERE pipeline = 'rd_p' ORDER BY late_seq;

-- 2. add_window: the backfill's changes, the same on both (a sliding
-- window of every remembered non-late event)
SELECT count(*) AS serial_changes FROM streamforge.add_window('rd_s', streamforge.sliding('s', 20, 10));
SELECT op, window_name, key, window_start, window_end, count, sum
  FROM streamforge.add_window('rd_p', streamforge.sliding('s', 20, 10))
 ORDER BY seq;
SELECT * FROM rd_compare('rd_s', 'rd_p');

-- 3. set_emit and drop_window
SELECT count(*) FROM streamforge.set_emit('rd_s', 'final');
SELECT count(*) FROM streamforge.set_emit('rd_p', 'final');
SELECT count(*) FROM streamforge.drop_window('rd_s', 'f');
SELECT count(*) FROM streamforge.drop_window('rd_p', 'f');
SELECT * FROM rd_compare('rd_s', 'rd_p');
CALL rd_advance('a', 40);
CALL rd_advance('b', 40);
SELECT * FROM rd_compare('rd_s', 'rd_p');

-- 4. built-in progress: the next event moves its partition's progress
SELECT streamforge.set_out_of_orderness('rd_s', 2);
SELECT streamforge.set_out_of_orderness('rd_p', 2);
CALL rd_ingest('a', 3, 'e7', 'k1', 52, 64);
CALL rd_ingest('b', 3, 'e8', 'k2', 53, 128);
SELECT streamforge.watermark('rd_s') AS serial, streamforge.watermark('rd_p') AS parallel;
SELECT * FROM rd_compare('rd_s', 'rd_p');

-- 5. add_partition: 'c' after the others, 'aa' between them: the lanes are
-- numbered by partition again, and every partition goes on
SELECT count(*) FROM streamforge.add_partition('rd_s', 'c');
SELECT count(*) FROM streamforge.add_partition('rd_p', 'c');
SELECT count(*) FROM streamforge.add_partition('rd_s', 'aa');
SELECT count(*) FROM streamforge.add_partition('rd_p', 'aa');
SELECT lane, partition FROM streamforge.lane l JOIN streamforge.pipeline p ON p.id = l.pipeline_id
 WHERE p.name = 'rd_p' ORDER BY lane;
CALL rd_ingest('aa', 0, 'e9', 'k1', 60, 256);
CALL rd_ingest('c', 0, 'e10', 'k2', 61, 512);
CALL rd_ingest('b', 4, 'e11', 'k1', 62, 1024);
-- a duplicate of an event an older lane holds, and an offset replay
CALL rd_ingest('c', 1, 'e7', 'k1', 52, 64);
CALL rd_ingest('a', 3, 'e7', 'k1', 52, 64);
SELECT * FROM rd_compare('rd_s', 'rd_p');
SELECT partition, consumed_offset FROM streamforge.partitions('rd_p') ORDER BY partition;

-- 6. a new connection loads the new head and lanes
\c
SELECT * FROM rd_compare('rd_s', 'rd_p');
CALL rd_advance('a', 80);
CALL rd_advance('aa', 80);
CALL rd_advance('b', 80);
CALL rd_advance('c', 80);
SELECT * FROM rd_compare('rd_s', 'rd_p');

-- 7. with streamforge.redefine_concurrently off: built under the locks;
-- raising the lateness over what is finalized is refused on both (55000)
SET streamforge.redefine_concurrently = off;
SELECT count(*) FROM streamforge.set_lateness('rd_s', 7);
SELECT count(*) FROM streamforge.set_lateness('rd_p', 7);
SELECT count(*) FROM streamforge.set_lateness('rd_s', 3);
SELECT count(*) FROM streamforge.set_lateness('rd_p', 3);
RESET streamforge.redefine_concurrently;
SELECT * FROM rd_compare('rd_s', 'rd_p');

-- 8. a change rolled back leaves the pipeline as it was; one in a
-- transaction that wrote the pipeline is refused
BEGIN;
SELECT count(*) FROM streamforge.set_lateness('rd_p', 1);
SELECT streamforge.definition('rd_p')->'lateness' AS lateness;
ROLLBACK;
SELECT streamforge.definition('rd_p')->'lateness' AS lateness;
CALL rd_ingest('a', 4, 'e12', 'k1', 85, 2048);
SELECT * FROM rd_compare('rd_s', 'rd_p');
-- two changes in one transaction, then a write in it after them
BEGIN;
SELECT count(*) FROM streamforge.add_window('rd_s', streamforge.fixed('g', 30));
SELECT count(*) FROM streamforge.set_lateness('rd_s', 2);
SELECT streamforge.ingest_count('rd_s', 'c', 2, 'e14', 'k3', 95, 4096);
COMMIT;
BEGIN;
SELECT count(*) FROM streamforge.add_window('rd_p', streamforge.fixed('g', 30));
SELECT count(*) FROM streamforge.set_lateness('rd_p', 2);
SELECT streamforge.ingest_count('rd_p', 'c', 2, 'e14', 'k3', 95, 4096);
COMMIT;
SELECT * FROM rd_compare('rd_s', 'rd_p');
\c
SELECT * FROM rd_compare('rd_s', 'rd_p');
BEGIN;
SELECT streamforge.ingest_count('rd_p', 'a', 5, 'e13', 'k1', 86, 1);
SELECT count(*) FROM streamforge.set_lateness('rd_p', 2);
ROLLBACK;

-- 9. what a parallel pipeline cannot have yet stays refused (0A000);
-- idle_timeout NULL (off) is no change
SELECT streamforge.set_retention('rd_p', 100);
SELECT streamforge.set_idle_timeout('rd_p', '1 minute');
SELECT streamforge.set_idle_timeout('rd_p', NULL);
SELECT streamforge.set_idle_timeout('rd_s', NULL);
SELECT * FROM rd_compare('rd_s', 'rd_p');

-- 10. only an admin changes the definition (42501)
CREATE ROLE rd_ingester;
SELECT streamforge.grant('rd_p', 'rd_ingester', 'ingest');
SET ROLE rd_ingester;
SELECT count(*) FROM streamforge.set_lateness('rd_p', 2);
RESET ROLE;

SELECT streamforge.drop_pipeline('rd_s');
SELECT streamforge.drop_pipeline('rd_p');
DROP ROLE rd_ingester;
