--
-- The measures write functions return the changes of their idle decisions
-- first, then their own, like the classic ones (docs/progress.md; issue 38,
-- the model's second session, item 4).  The clock is simulated by moving the
-- stored activity back, as in progress_idle.  lateness 100: an event into a
-- window the watermark passed is an upsert of the call's own.
--
SELECT streamforge.create_pipeline('mi', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('w', 10)], idle_timeout => interval '1 hour',
    lateness => 100, measures => ARRAY['m1'], aggregates => ARRAY['count', 'sum(m1)']);
SELECT streamforge.configure_outputs('mi');
SELECT count(*) FROM streamforge.advance('mi', 'a', 10);
SELECT count(*) FROM streamforge.advance('mi', 'b', 20);
SELECT seq, op, window_start, window_end, count, aggregates
  FROM streamforge.ingest_measures('mi', 'a', 0, 'e1', 'k', 15, ARRAY[7]);
-- 'a' was last heard of two hours ago
UPDATE streamforge.partition_activity SET last_delivery = last_delivery - interval '2 hours',
       last_report = last_report - interval '2 hours', since = since - interval '2 hours'
 WHERE partition = 'a'
   AND pipeline_id = (SELECT id FROM streamforge.pipeline WHERE name = 'mi');
\c -
-- ingest_measures marks 'a' idle first: the watermark moves to 20, [10, 20)
-- is emitted (seq 1), then the call's own change of it (seq 2 and 3)
SELECT seq, op, window_start, window_end, count, aggregates
  FROM streamforge.ingest_measures('mi', 'b', 0, 'e2', 'k', 12, ARRAY[5]);
SELECT partition, progress, idle FROM streamforge.partitions('mi');
-- the outputs have the same changes, once each
SELECT seq, op, window_start, window_end, count FROM streamforge.changelog
 WHERE pipeline = 'mi' ORDER BY seq;

-- ingest_measures_batch: 'a' reports again, 'b' falls silent
SELECT count(*) FROM streamforge.ingest_measures('mi', 'a', 1, 'e3', 'k', 22, ARRAY[4]);
SELECT count(*) FROM streamforge.advance('mi', 'a', 30);
UPDATE streamforge.partition_activity SET last_delivery = last_delivery - interval '2 hours',
       last_report = last_report - interval '2 hours', since = since - interval '2 hours'
 WHERE partition = 'b'
   AND pipeline_id = (SELECT id FROM streamforge.pipeline WHERE name = 'mi');
\c -
-- the decision (b idle: the watermark moves to 30, [20, 30) emitted, seq 4),
-- then the batch's changes of it (seq 5 to 8)
SELECT seq, op, window_start, window_end, count, aggregates
  FROM streamforge.ingest_measures_batch('mi', ARRAY[
      ROW('a', 2, 'e4', 'k', 25, ARRAY[1]::bigint[]),
      ROW('a', 3, 'e5', 'k', 26, ARRAY[2]::bigint[])]::streamforge.measures_delivery[]);
SELECT seq, op, window_start, window_end, count FROM streamforge.changelog
 WHERE pipeline = 'mi' ORDER BY seq;

-- append_measures_batch: 'b' reports again, 'a' falls silent
SELECT count(*) FROM streamforge.advance('mi', 'b', 40);
SELECT count(*) FROM streamforge.ingest_measures('mi', 'b', 1, 'e6', 'k', 33, ARRAY[3]);
UPDATE streamforge.partition_activity SET last_delivery = last_delivery - interval '2 hours',
       last_report = last_report - interval '2 hours', since = since - interval '2 hours'
 WHERE partition = 'a'
   AND pipeline_id = (SELECT id FROM streamforge.pipeline WHERE name = 'mi');
\c -
-- the decision (a idle: the watermark moves to 40, [30, 40) emitted, seq 9),
-- then the call's change of it (seq 10 and 11)
SELECT seq, op, window_start, window_end, count, aggregates
  FROM streamforge.append_measures_batch('mi', ARRAY[
      ROW('b', NULL, 'e7', 'k', 35, ARRAY[6]::bigint[])]::streamforge.measures_delivery[]);
SELECT seq, op, window_start, window_end, count FROM streamforge.changelog
 WHERE pipeline = 'mi' ORDER BY seq;
SELECT partition, progress, idle FROM streamforge.partitions('mi');
SELECT streamforge.drop_pipeline('mi');
