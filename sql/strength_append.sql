-- strength_append: the calls without offsets (append, append_batch,
-- ingest_json without source_offset) write the durable outputs and the
-- journal like ingest and ingest_batch (issue 24).

-- 1. Outputs.  Each call's changes go to the changelog and the results,
-- its own late events (only those) to the late output, and the outputs
-- agree with the state afterwards.
SELECT streamforge.create_pipeline('sa', ARRAY['p', 'q'],
    ARRAY[streamforge.fixed('f', 10)], lateness => 20);
SELECT streamforge.configure_outputs('sa');
SELECT count(*) FROM streamforge.append('sa', 'p', 'a0', 'k', 1, 1);
SELECT count(*) FROM streamforge.append('sa', 'q', 'a1', 'k', 2, 2);
SELECT count(*) FROM streamforge.advance('sa', 'p', 30);
SELECT count(*) FROM streamforge.advance('sa', 'q', 30);
-- at watermark 30 an event before 10 is late, one in [10, 20) updates a
-- visible row; each call comes after the pipeline already has late rows
SELECT count(*) FROM streamforge.append('sa', 'p', 'l0', 'k', 3, 1);
SELECT op, window_start, count, sum FROM streamforge.append('sa', 'p', 'c0', 'k', 15, 10);
SELECT op, window_start, count, sum FROM streamforge.append_batch('sa', ARRAY[
    ROW('p', 'l1', 'k', 4, 1)::streamforge.event,
    ROW('q', 'b0', 'k', 16, 20)::streamforge.event,
    ROW('q', 'l2', 'k', 5, 1)::streamforge.event]);
SELECT op, window_start, count, sum FROM streamforge.ingest_json('sa', '[
    {"partition": "p", "event_id": "l3", "key": "k", "event_time": 6, "value": 1},
    {"partition": "p", "event_id": "j0", "key": "k", "event_time": 17, "value": 30}]');
SELECT count(*) FROM streamforge.advance('sa', 'p', 50);
SELECT count(*) FROM streamforge.advance('sa', 'q', 50);
SELECT seq, op, window_name, key, window_start, count, sum
  FROM streamforge.changelog WHERE pipeline = 'sa' ORDER BY seq;
SELECT window_name, key, window_start, count, sum, seq
  FROM streamforge.results WHERE pipeline = 'sa' ORDER BY window_start;
SELECT late_seq, partition, source_offset, event_id, event_time, watermark
  FROM streamforge.late_output WHERE pipeline = 'sa' ORDER BY late_seq;
-- the late output is the pipeline's late events, the changelog its seq
SELECT (SELECT array_agg(late_seq ORDER BY late_seq) FROM streamforge.late_output
         WHERE pipeline = 'sa')
     = (SELECT array_agg(late_seq ORDER BY late_seq) FROM streamforge.late_events('sa'))
       AS late_output_complete,
       (SELECT max(seq) FROM streamforge.changelog WHERE pipeline = 'sa')
     = (SELECT changes_emitted FROM streamforge.stats('sa')) AS changelog_complete;

-- 2. The journal: a batch of one event (append_batch, ingest_json without
-- offsets) is journalled like a longer one, so a new connection has it.
SELECT streamforge.create_pipeline('sa_j', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)]);
SELECT count(*) FROM streamforge.append_batch('sa_j',
    ARRAY[ROW('p', 'b1', 'k', 1, 1)::streamforge.event]);
SELECT count(*) FROM streamforge.ingest_json('sa_j',
    '[{"partition": "p", "event_id": "j1", "key": "k", "event_time": 2, "value": 2}]');
SELECT count(*) FROM streamforge.append('sa_j', 'p', 'a1', 'k', 3, 3);
-- an empty batch changes nothing, and journals nothing
SELECT count(*) FROM streamforge.append_batch('sa_j', ARRAY[]::streamforge.event[]);
SELECT count(*) FROM streamforge.ingest_json('sa_j', '[]');
SELECT count(*) AS journal_rows FROM streamforge.journal
 WHERE pipeline_id = (SELECT id FROM streamforge.pipeline WHERE name = 'sa_j');
\c -
SELECT * FROM streamforge.partitions('sa_j');
SELECT key, count, sum FROM streamforge.live('sa_j');

-- clean up
SELECT count(streamforge.drop_pipeline(name)) FROM unnest(ARRAY['sa', 'sa_j']) AS name;
