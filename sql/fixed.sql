-- fixed: [floor(t / size) * size, start + size), half-open, floor division
-- for negative times; a bucket is ready once end <= watermark.
\set VERBOSITY sqlstate
-- two fixed windows; address order is by window name, then key (bytes: 'K' < 'k')
SELECT streamforge.create_pipeline('fixed', ARRAY['p'], ARRAY[streamforge.fixed('tens', 10), streamforge.fixed('fives', 5)]);
-- t = 0 and t = 9 share [0, 10); t = 10 starts [10, 20)
SELECT * FROM streamforge.ingest('fixed', 'p', 0, 'e0', 'k', 0, 1);
SELECT * FROM streamforge.ingest('fixed', 'p', 1, 'e1', 'k', 9, 2);
SELECT * FROM streamforge.ingest('fixed', 'p', 2, 'e2', 'k', 10, 3);
-- negative times: -1 is in [-10, 0), -10 too, -11 in [-20, -10)
SELECT * FROM streamforge.ingest('fixed', 'p', 3, 'e3', 'k', -1, 4);
SELECT * FROM streamforge.ingest('fixed', 'p', 4, 'e4', 'k', -10, 5);
SELECT * FROM streamforge.ingest('fixed', 'p', 5, 'e5', 'k', -11, 6);
-- another key
SELECT * FROM streamforge.ingest('fixed', 'p', 6, 'e6', 'K', 4, 7);
SELECT * FROM streamforge.live('fixed');
-- no watermark: nothing visible
SELECT * FROM streamforge.visible('fixed');
-- watermark 0: every bucket with end <= 0 is upserted, in address order
SELECT * FROM streamforge.advance('fixed', 'p', 0);
-- then lateness 0 finalizes the buckets with end < 0; those ending at 0 stay
SELECT * FROM streamforge.visible('fixed');
SELECT * FROM streamforge.live('fixed');
-- watermark 9: [5, 10) is not ready yet (end 10 > 9), [0, 5) is
SELECT * FROM streamforge.advance('fixed', 'p', 9);
-- watermark 10: end 10 <= 10 is ready
SELECT * FROM streamforge.advance('fixed', 'p', 10);
SELECT * FROM streamforge.visible('fixed');
SELECT * FROM streamforge.live('fixed');
-- at watermark 10 with lateness 0, t = 10 is accepted (10 + 0 is not < 10)
SELECT * FROM streamforge.ingest('fixed', 'p', 7, 'e7', 'k', 10, 8);
-- a window of size 1 holds exactly one time
SELECT streamforge.create_pipeline('fixed1', ARRAY['p'], ARRAY[streamforge.fixed('one', 1)]);
SELECT * FROM streamforge.ingest('fixed1', 'p', 0, 'a', 'k', -1, 1);
SELECT * FROM streamforge.ingest('fixed1', 'p', 1, 'b', 'k', 0, 2);
SELECT * FROM streamforge.ingest('fixed1', 'p', 2, 'c', 'k', 0, 3);
SELECT * FROM streamforge.live('fixed1');
SELECT streamforge.drop_pipeline('fixed1');
SELECT streamforge.drop_pipeline('fixed');
