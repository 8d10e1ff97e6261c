-- retention_late: docs/semantics.md "Retention" rule 3.  A late event whose recorded watermark
-- is below H leaves late_events(); its late_seq is never reused.  A late
-- row outlives its identity (forgotten by time) as long as its watermark
-- is at or above H.

SELECT streamforge.create_pipeline('rl', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], lateness => 0, retention => 10);
SELECT count(*) FROM streamforge.advance('rl', 'p', 100);
-- H = 90: both late, the identity of l1 (time 50) is forgotten at once
SELECT * FROM streamforge.ingest('rl', 'p', 0, 'l1', 'k', 50, 1);
SELECT * FROM streamforge.ingest('rl', 'p', 1, 'l2', 'k', 95, 2);
SELECT count(*) FROM streamforge.advance('rl', 'p', 105);
SELECT * FROM streamforge.ingest('rl', 'p', 2, 'l3', 'k', 96, 3);
SELECT late_seq, source_offset, event_id, key, event_time, value, watermark
  FROM streamforge.late_events('rl');
SELECT remembered_identities, remembered_late_events, forgotten_late_events,
       late_events FROM streamforge.stats('rl');

-- watermark 111: H = 101 > 100, the rows of watermark 100 go; the row of
-- watermark 105 stays, though the identity of l3 (time 96) is forgotten
SELECT count(*) FROM streamforge.advance('rl', 'p', 111);
SELECT late_seq, source_offset, event_id, key, event_time, value, watermark
  FROM streamforge.late_events('rl');
SELECT remembered_identities, remembered_late_events, forgotten_late_events,
       late_events FROM streamforge.stats('rl');

-- a new late event continues the late_seq
SELECT * FROM streamforge.ingest('rl', 'p', 3, 'l1', 'k', 50, 1);
SELECT late_seq, event_id, watermark FROM streamforge.late_events('rl');

-- all forgotten: late_seq still continues, across a restore too
SELECT count(*) FROM streamforge.advance('rl', 'p', 200);
SELECT count(*) FROM streamforge.late_events('rl');
SELECT streamforge.create_pipeline('rl2', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], lateness => 0, retention => 10);
SELECT streamforge.restore('rl2', streamforge.checkpoint('rl'));
SELECT * FROM streamforge.ingest('rl2', 'p', 4, 'l9', 'k', 1, 1);
SELECT late_seq, event_id, watermark FROM streamforge.late_events('rl2');
SELECT late_events, forgotten_late_events FROM streamforge.stats('rl2');

SELECT streamforge.drop_pipeline(n) FROM unnest(ARRAY['rl', 'rl2']) n;

-- ------------------------------------------------------------------------
-- A late row keeps its key through key collections
-- ------------------------------------------------------------------------
\c -
\set VERBOSITY sqlstate
-- docs/retention.md (issue 40 item 13): "A late row outlives its identity: it keeps its
-- event's key, time and value until its own watermark falls below the
-- horizon", and a key collection frees only the keys nothing uses, late
-- rows included.  The late event's identity is forgotten at once (time
-- 50 < H = 90); then two collections run (each after more than 1024 new
-- keys, of the late key's length), and the late row still has its key:
-- late_events(), the checkpoint (restored into a twin) and a new backend.
-- (The late output is written by the late event's own call, before any
-- collection, and never rebuilt from the state.)
SELECT streamforge.create_pipeline(p, ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    lateness => 0, retention => 10)
  FROM unnest(ARRAY['s5k', 's5k_twin']) AS p;
SELECT count(*) FROM streamforge.advance('s5k', 'p', 100);
SELECT count(*) FROM streamforge.ingest('s5k', 'p', 0, 'late', 'lk00000', 50, 7);
SELECT remembered_identities, remembered_late_events FROM streamforge.stats('s5k');
SELECT count(*) FROM streamforge.ingest_batch('s5k', ARRAY(
    SELECT ROW('p', i, 'n' || i, 'nk' || lpad(i::text, 5, '0'), 100 + i % 10, i)::streamforge.delivery
      FROM generate_series(1, 1100) AS i));
-- (the next call collects)
SELECT late_seq, event_id, key, event_time, value, watermark FROM streamforge.late_events('s5k');
SELECT count(*) FROM streamforge.ingest_batch('s5k', ARRAY(
    SELECT ROW('p', i, 'n' || i, 'nk' || lpad(i::text, 5, '0'), 100 + i % 10, i)::streamforge.delivery
      FROM generate_series(1101, 3500) AS i));
SELECT late_seq, event_id, key, event_time, value, watermark FROM streamforge.late_events('s5k');
SELECT count(*) FROM streamforge.advance('s5k', 'p', 110);
SELECT late_seq, event_id, key, event_time, value, watermark FROM streamforge.late_events('s5k');
SELECT l->>'event_id' AS event_id, l->>'key' AS key
  FROM jsonb_array_elements(streamforge.inspect_checkpoint(streamforge.checkpoint('s5k')) -> 'late') AS l;
SELECT streamforge.restore('s5k_twin', streamforge.checkpoint('s5k'));
SELECT late_seq, event_id, key, event_time, value, watermark FROM streamforge.late_events('s5k_twin');

-- a new backend loads it from its snapshot and journal: the same
\c -
SELECT late_seq, event_id, key, event_time, value, watermark FROM streamforge.late_events('s5k');
-- its watermark falls below the horizon: it goes
SELECT count(*) FROM streamforge.advance('s5k', 'p', 111);
SELECT count(*) AS late_rows FROM streamforge.late_events('s5k');
SELECT streamforge.drop_pipeline(p) FROM unnest(ARRAY['s5k', 's5k_twin']) AS p;
