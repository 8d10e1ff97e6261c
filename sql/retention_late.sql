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
