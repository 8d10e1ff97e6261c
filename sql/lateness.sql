-- lateness: with a global watermark, a unique event is late iff
-- event_time + lateness < watermark (equality is accepted).  A late event
-- is consumed, its identity remembered, one late_events() row records the
-- watermark of that moment, and it touches no window.  An accepted event
-- may correct a window that is already closed (retract, then upsert).
\set VERBOSITY sqlstate
SELECT streamforge.create_pipeline('lateness', ARRAY['p', 'q'], ARRAY[streamforge.fixed('f', 10)], 5);
-- no watermark yet: nothing is late, however old
SELECT * FROM streamforge.ingest('lateness', 'p', 0, 'a', 'k', -100, 1);
SELECT * FROM streamforge.advance('lateness', 'p', 20);
-- watermark 20: [-100, -90) is emitted, then finalized (20 > -90 + 5)
SELECT * FROM streamforge.advance('lateness', 'q', 20);
-- 14 + 5 < 20: late, no changes
SELECT * FROM streamforge.ingest('lateness', 'p', 1, 'b', 'k', 14, 2);
SELECT * FROM streamforge.late_events('lateness');
-- 15 + 5 = 20: accepted; [10, 20) is ready at 20
SELECT * FROM streamforge.ingest('lateness', 'p', 2, 'c', 'k', 15, 4);
-- within lateness: an immediate correction of the closed window
SELECT * FROM streamforge.ingest('lateness', 'q', 0, 'd', 'k', 16, 8);
-- the late event b is in no window
SELECT * FROM streamforge.live('lateness');
-- late_seq is consecutive
SELECT * FROM streamforge.ingest('lateness', 'q', 1, 'e', 'k', 0, 16);
-- watermark 30: [10, 20) is finalized (30 > 20 + 5), silently
SELECT * FROM streamforge.advance('lateness', 'p', 30);
SELECT * FROM streamforge.advance('lateness', 'q', 30);
SELECT * FROM streamforge.live('lateness');
-- 24 + 5 < 30: late, recorded with watermark 30
SELECT * FROM streamforge.ingest('lateness', 'p', 3, 'f', 'k', 24, 32);
-- 25 + 5 = 30: accepted
SELECT * FROM streamforge.ingest('lateness', 'p', 4, 'g', 'k', 25, 64);
-- a late event's identity is remembered: a duplicate at a new offset is
-- consumed without a second late row ...
SELECT * FROM streamforge.ingest('lateness', 'q', 2, 'b', 'k', 14, 2);
-- ... its own offset replays as a no-op ...
SELECT * FROM streamforge.ingest('lateness', 'p', 1, 'b', 'k', 14, 2);
-- ... and a different identity is a conflict
SELECT * FROM streamforge.ingest('lateness', 'q', 3, 'b', 'k', 14, 3);
-- a late event with a new key creates no bucket
SELECT * FROM streamforge.ingest('lateness', 'q', 3, 'h', 'other', 0, 1);
SELECT * FROM streamforge.late_events('lateness');
SELECT * FROM streamforge.live('lateness');
SELECT * FROM streamforge.partitions('lateness');
SELECT streamforge.drop_pipeline('lateness');
-- the default lateness is 0: late iff event_time < watermark
SELECT streamforge.create_pipeline('lateness0', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)]);
SELECT * FROM streamforge.advance('lateness0', 'p', 10);
SELECT * FROM streamforge.ingest('lateness0', 'p', 0, 'a', 'k', 9, 1);
SELECT * FROM streamforge.ingest('lateness0', 'p', 1, 'b', 'k', 10, 2);
-- events never move the watermark
SELECT * FROM streamforge.ingest('lateness0', 'p', 2, 'c', 'k', 1000, 4);
SELECT streamforge.watermark('lateness0');
SELECT * FROM streamforge.late_events('lateness0');
SELECT * FROM streamforge.live('lateness0');
SELECT streamforge.drop_pipeline('lateness0');
