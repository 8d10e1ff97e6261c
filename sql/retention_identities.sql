-- retention_identities: docs/semantics.md "Retention", the retention argument and rule 1
-- (identities below the horizon H = watermark - lateness - retention are
-- forgotten: a later delivery of the event_id is a new unique event).

-- the argument: NULL keeps everything; negative is 22023, checked after
-- existence and after the other arguments
SELECT streamforge.create_pipeline('ri', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], lateness => 0, retention => 5);
SELECT streamforge.create_pipeline('ri', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], 0, -1);
SELECT streamforge.create_pipeline('ri_bad', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], -1, -1);
SELECT streamforge.create_pipeline('ri_bad', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], 0, -1);
SELECT streamforge.create_pipeline('ri_all', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)]);
SELECT name, lateness, retention FROM streamforge.pipeline
 WHERE name LIKE 'ri%' ORDER BY name;

-- no watermark, no horizon: everything is remembered
SELECT * FROM streamforge.ingest('ri', 'p', 0, 'e1', 'k', 3, 10);
SELECT * FROM streamforge.ingest('ri', 'p', 1, 'e2', 'k', 17, 1);
SELECT * FROM streamforge.ingest('ri', 'p', 2, 'e1', 'k', 3, 11);   -- SF002

-- watermark 20: H = 20 - 0 - 5 = 15; e1 (time 3) is forgotten, e2 (17) not
SELECT seq, op, window_start, count, sum FROM streamforge.advance('ri', 'p', 20);
SELECT remembered_identities, accepted, late_events
  FROM streamforge.stats('ri');
SELECT * FROM streamforge.ingest('ri', 'p', 2, 'e2', 'k', 17, 99);  -- SF002 still

-- e1 again, even with another value: a new unique event, late (3 < 20)
SELECT * FROM streamforge.ingest('ri', 'p', 2, 'e1', 'k', 3, 99);
SELECT late_seq, source_offset, event_id, event_time, value, watermark
  FROM streamforge.late_events('ri');
-- that late identity is below H too: forgotten at once, so once more
SELECT * FROM streamforge.ingest('ri', 'p', 3, 'e1', 'k', 3, 99);
SELECT late_seq, source_offset, event_id, value FROM streamforge.late_events('ri');

-- event_time = H is remembered (the rule is event_time < H)
SELECT * FROM streamforge.ingest('ri', 'p', 4, 'e3', 'k', 15, 1);
SELECT * FROM streamforge.ingest('ri', 'p', 5, 'e3', 'k', 15, 2);   -- SF002
SELECT * FROM streamforge.ingest('ri', 'p', 5, 'e3', 'k', 15, 1);   -- a duplicate
SELECT * FROM streamforge.advance('ri', 'p', 21);                   -- H = 16
SELECT * FROM streamforge.ingest('ri', 'p', 6, 'e3', 'k', 15, 2);   -- new, late
SELECT late_seq, source_offset, event_id, event_time, value, watermark
  FROM streamforge.late_events('ri');

-- a forgotten event_id delivered with a time at or above H is accepted
-- into the windows again (with lateness 0 it must be >= the watermark)
SELECT seq, op, window_start, count, sum
  FROM streamforge.ingest('ri', 'p', 7, 'e1', 'k', 25, 7);
SELECT seq, op, window_start, count, sum FROM streamforge.advance('ri', 'p', 30);
SELECT window_start, window_end, count, sum FROM streamforge.live('ri');

-- the same calls without retention: identity conflicts, as in 0.1.0
SELECT * FROM streamforge.ingest('ri_all', 'p', 0, 'e1', 'k', 3, 10);
SELECT count(*) FROM streamforge.advance('ri_all', 'p', 20);
SELECT * FROM streamforge.ingest('ri_all', 'p', 1, 'e1', 'k', 3, 99);  -- SF002

-- the horizon is computed exactly: no 22003 at the ends of bigint
SELECT streamforge.create_pipeline('ri_edge', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], lateness => 0,
    retention => 9223372036854775807);
-- H = min - 0 - max: below the bigint minimum, so there is no horizon
SELECT count(*) FROM streamforge.advance('ri_edge', 'p', -9223372036854775808);
SELECT count(*) FROM streamforge.ingest('ri_edge', 'p', 0, 'a', 'k', -9223372036854775800, 1);
-- H = -1 - max = min: a horizon, below which nothing can be
SELECT count(*) FROM streamforge.advance('ri_edge', 'p', -1);
SELECT remembered_identities FROM streamforge.stats('ri_edge');
-- H = max - 0 - max = 0: the event (time < 0) is forgotten
SELECT count(*) FROM streamforge.advance('ri_edge', 'p', 9223372036854775807);
SELECT remembered_identities FROM streamforge.stats('ri_edge');
SELECT * FROM streamforge.ingest('ri_edge', 'p', 1, 'a', 'k', -9223372036854775800, 2);
SELECT late_seq, event_id, event_time, value, watermark
  FROM streamforge.late_events('ri_edge');

SELECT streamforge.drop_pipeline(n) FROM unnest(ARRAY['ri', 'ri_all', 'ri_edge']) n;
