-- Deliveries without offsets: append() and append_batch() take the
-- partition's next offset under the pipeline's lock.
\set SHOW_CONTEXT never
SELECT streamforge.create_pipeline('ap', ARRAY['p0', 'p1'],
    ARRAY[streamforge.fixed('w', 10)]);

-- offsets 0, 1 on p0, 0 on p1
SELECT count(*) FROM streamforge.append('ap', 'p0', 'e1', 'k', 1, 10);
SELECT count(*) FROM streamforge.append('ap', 'p0', 'e2', 'k', 2, 20);
SELECT count(*) FROM streamforge.append('ap', 'p1', 'e3', 'k', 3, 30);
SELECT * FROM streamforge.partitions('ap');

-- a retried request (same event id, same content) takes an offset and is
-- a duplicate there: the window counts e1 once
SELECT count(*) FROM streamforge.append('ap', 'p0', 'e1', 'k', 1, 10);
SELECT * FROM streamforge.live('ap');
SELECT deliveries, accepted, duplicate_ids FROM streamforge.stats('ap');

-- the same event id with other content is SF002 and consumes nothing
SELECT count(*) FROM streamforge.append('ap', 'p0', 'e1', 'k', 1, 11);
SELECT consumed_offset FROM streamforge.partitions('ap') WHERE partition = 'p0';

-- a rolled-back append leaves no gap: the next one takes the same offset
BEGIN;
SELECT count(*) FROM streamforge.append('ap', 'p0', 'e4', 'k', 4, 40);
SELECT consumed_offset FROM streamforge.partitions('ap') WHERE partition = 'p0';
ROLLBACK;
SELECT count(*) FROM streamforge.append('ap', 'p0', 'e5', 'k', 5, 50);
SELECT consumed_offset FROM streamforge.partitions('ap') WHERE partition = 'p0';

-- ...also after a savepoint rollback
BEGIN;
SAVEPOINT s;
SELECT count(*) FROM streamforge.append('ap', 'p1', 'e6', 'k', 6, 60);
ROLLBACK TO SAVEPOINT s;
SELECT count(*) FROM streamforge.append('ap', 'p1', 'e7', 'k', 7, 70);
COMMIT;
SELECT * FROM streamforge.partitions('ap');

-- the offsets are ordinary deliveries: replaying one with ingest is a no-op
SELECT count(*) FROM streamforge.ingest('ap', 'p1', 1, 'e7', 'k', 7, 70);
-- and the next explicit offset follows the assigned ones
SELECT count(*) FROM streamforge.ingest('ap', 'p1', 2, 'e8', 'k', 8, 80);

-- a batch: offsets in array order, per partition
SELECT count(*) FROM streamforge.append_batch('ap', ARRAY[
    ('p0', 'b1', 'k', 11, 1),
    ('p1', 'b2', 'k', 12, 2),
    ('p0', 'b3', 'j', 13, 3)]::streamforge.event[]);
SELECT * FROM streamforge.partitions('ap');

-- all or none: the third event fails, the first two are not applied
SELECT count(*) FROM streamforge.append_batch('ap', ARRAY[
    ('p0', 'c1', 'k', 14, 1),
    ('p0', 'c2', 'k', 15, 2),
    ('nope', 'c3', 'k', 16, 3)]::streamforge.event[]);
SELECT count(*) FROM streamforge.append_batch('ap', ARRAY[
    ('p0', 'c1', 'k', 14, 1),
    ('p0', 'c2', 'k', 15, NULL)]::streamforge.event[]);
SELECT count(*) FROM streamforge.append_batch('ap', ARRAY[
    ('p0', 'c1', 'k', 14, 1), NULL]::streamforge.event[]);
SELECT count(*) FROM streamforge.append_batch('ap', ARRAY[
    ('p0', '', 'k', 14, 1)]::streamforge.event[]);
SELECT * FROM streamforge.partitions('ap');
SELECT count(*) FROM streamforge.append_batch('ap', '{}');
SELECT count(*) FROM streamforge.append_batch('ap', NULL);

-- errors: pipeline first, then arguments, then partition
SELECT count(*) FROM streamforge.append('nope', 'p0', 'x', 'k', 1, 1);
SELECT count(*) FROM streamforge.append(NULL, 'p0', 'x', 'k', 1, 1);
SELECT count(*) FROM streamforge.append('ap', NULL, 'x', 'k', 1, 1);
SELECT count(*) FROM streamforge.append('ap', 'p0', NULL, 'k', 1, 1);
SELECT count(*) FROM streamforge.append('ap', 'p0', 'x', 'k', 1, NULL);
SELECT count(*) FROM streamforge.append('ap', 'p0', '', 'k', 1, 1);
SELECT count(*) FROM streamforge.append('ap', 'p9', 'x', 'k', 1, 1);

-- changes come back as from ingest
SELECT * FROM streamforge.advance('ap', 'p0', 100);
SELECT * FROM streamforge.advance('ap', 'p1', 100);
-- a late event keeps its assigned offset in late_events()
SELECT * FROM streamforge.append('ap', 'p1', 'late', 'k', 1, 5);
SELECT late_seq, partition, source_offset, event_id FROM streamforge.late_events('ap');

-- the state survives a checkpoint round trip
SELECT streamforge.checkpoint('ap') AS cp \gset
SELECT streamforge.create_pipeline('ap2', ARRAY['p0', 'p1'],
    ARRAY[streamforge.fixed('w', 10)]);
SELECT streamforge.restore('ap2', :'cp');
SELECT count(*) FROM streamforge.append('ap2', 'p0', 'after', 'k', 200, 1);
SELECT * FROM streamforge.partitions('ap2');

-- ------------------------------------------------------------------------
-- The calls without offsets write the outputs and the journal
-- ------------------------------------------------------------------------
-- the calls without offsets (append, append_batch,
-- ingest_json without source_offset) write the durable outputs and the
-- journal like ingest and ingest_batch (issue 24).
\c -
\set SHOW_CONTEXT errors

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
