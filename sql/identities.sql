-- identities: an event_id is global across partitions.  A known event_id
-- with the same (key, event_time, value) at a new offset consumes that
-- offset and changes nothing; with a different identity it is SF002.
\set VERBOSITY sqlstate
-- lateness 1000 and watermark 100: every change shows up immediately
SELECT streamforge.create_pipeline('identities', ARRAY['a', 'b'], ARRAY[streamforge.fixed('f', 10)], 1000);
SELECT * FROM streamforge.advance('identities', 'a', 100);
SELECT * FROM streamforge.advance('identities', 'b', 100);
SELECT * FROM streamforge.ingest('identities', 'a', 0, 'x', 'k', 1, 5);
-- the same event through partition b: consumes b's offset 0, no rows
SELECT * FROM streamforge.ingest('identities', 'b', 0, 'x', 'k', 1, 5);
SELECT * FROM streamforge.partitions('identities');
-- the event counts once
SELECT * FROM streamforge.live('identities');
-- the duplicate is stored at b's offset 0: replaying it there is a no-op ...
SELECT * FROM streamforge.ingest('identities', 'b', 0, 'x', 'k', 1, 5);
-- ... and anything else there is an offset conflict
SELECT * FROM streamforge.ingest('identities', 'b', 0, 'y', 'k', 1, 5);
-- a known event_id with a different key, event_time or value: SF002
SELECT * FROM streamforge.ingest('identities', 'b', 1, 'x', 'k2', 1, 5);
SELECT * FROM streamforge.ingest('identities', 'b', 1, 'x', 'k', 2, 5);
SELECT * FROM streamforge.ingest('identities', 'b', 1, 'x', 'k', 1, 6);
-- also in the partition that first delivered it
SELECT * FROM streamforge.ingest('identities', 'a', 1, 'x', 'k', 1, 6);
-- the conflicts consumed nothing
SELECT * FROM streamforge.partitions('identities');
-- a duplicate in the same partition, at its next offset: consumed, no rows
SELECT * FROM streamforge.ingest('identities', 'a', 1, 'x', 'k', 1, 5);
-- event_ids are compared byte for byte: 'X' is a new event
SELECT * FROM streamforge.ingest('identities', 'b', 1, 'X', 'k', 1, 5);
-- so is 'x ' (trailing space)
SELECT * FROM streamforge.ingest('identities', 'b', 2, 'x ', 'k', 1, 5);
-- 'X' again, through partition a: a duplicate, no rows
SELECT * FROM streamforge.ingest('identities', 'a', 2, 'X', 'k', 1, 5);
SELECT * FROM streamforge.partitions('identities');
SELECT * FROM streamforge.live('identities');
-- identities belong to their pipeline: another pipeline may reuse the ids
-- (identities still exists and knows 'x' as (k, 1, 5))
SELECT streamforge.create_pipeline('identities2', ARRAY['a'], ARRAY[streamforge.fixed('f', 10)]);
SELECT * FROM streamforge.ingest('identities2', 'a', 0, 'x', 'other', 50, 7);
SELECT * FROM streamforge.live('identities2');
SELECT streamforge.drop_pipeline('identities2');
SELECT streamforge.drop_pipeline('identities');
