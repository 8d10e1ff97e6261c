-- deliveries: source offsets.  Each partition starts at consumed offset -1;
-- a new delivery takes consumed + 1; a consumed offset replays only the
-- identical delivery (a no-op); anything else is SF001.  The offset is
-- checked before the identity.  Errors change nothing, so a corrected
-- delivery can reuse the offset.
\set VERBOSITY sqlstate
-- lateness 1000 and a watermark of 100: events in [0, 100) are accepted
-- and their windows are ready at once, so every change shows up immediately
SELECT streamforge.create_pipeline('deliveries', ARRAY['p', 'q'], ARRAY[streamforge.fixed('f', 10)], 1000);
SELECT * FROM streamforge.advance('deliveries', 'p', 100);
SELECT * FROM streamforge.advance('deliveries', 'q', 100);
SELECT * FROM streamforge.partitions('deliveries');
-- the first offset is 0: offset 1 is a gap
SELECT * FROM streamforge.ingest('deliveries', 'p', 1, 'e1', 'k', 5, 10);
-- a negative offset is never valid
SELECT * FROM streamforge.ingest('deliveries', 'p', -1, 'e1', 'k', 5, 10);
SELECT * FROM streamforge.ingest('deliveries', 'p', '-9223372036854775808'::bigint, 'e1', 'k', 5, 10);
-- offset 0: accepted
SELECT * FROM streamforge.ingest('deliveries', 'p', 0, 'e1', 'k', 5, 10);
-- the identical delivery again: a no-op, no rows, nothing counted twice
SELECT * FROM streamforge.ingest('deliveries', 'p', 0, 'e1', 'k', 5, 10);
SELECT * FROM streamforge.live('deliveries');
-- a different delivery at a consumed offset: different value, event_id, time
SELECT * FROM streamforge.ingest('deliveries', 'p', 0, 'e1', 'k', 5, 11);
SELECT * FROM streamforge.ingest('deliveries', 'p', 0, 'e9', 'k', 5, 10);
SELECT * FROM streamforge.ingest('deliveries', 'p', 0, 'e1', 'k', 6, 10);
-- the offset is checked before the identity: e1 with another key would be
-- SF002 at a new offset, but at a consumed offset or after a gap it is SF001
SELECT * FROM streamforge.ingest('deliveries', 'p', 0, 'e1', 'j', 5, 10);
SELECT * FROM streamforge.ingest('deliveries', 'p', 2, 'e1', 'j', 5, 10);
-- a gap after offset 0
SELECT * FROM streamforge.ingest('deliveries', 'p', 2, 'e2', 'k', 7, -3);
-- the next offset: a correction of the closed window [0, 10)
SELECT * FROM streamforge.ingest('deliveries', 'p', 1, 'e2', 'k', 7, -3);
-- offsets are per partition: q starts at 0 too.  e1 is known with value
-- 10, so value 99 at q's offset 0 is an identity conflict ...
SELECT * FROM streamforge.ingest('deliveries', 'q', 0, 'e1', 'k', 5, 99);
-- ... which consumed nothing: the corrected delivery reuses offset 0,
-- and seq continues at 4
SELECT * FROM streamforge.ingest('deliveries', 'q', 0, 'e3', 'k', 12, 1);
SELECT * FROM streamforge.partitions('deliveries');
-- an older offset still replays as a no-op, and still rejects anything else
SELECT * FROM streamforge.ingest('deliveries', 'p', 0, 'e1', 'k', 5, 10);
SELECT * FROM streamforge.ingest('deliveries', 'p', 0, 'e2', 'k', 7, -3);
-- the key may be empty
SELECT * FROM streamforge.ingest('deliveries', 'p', 2, 'e4', '', 15, 4);
-- an unknown partition is 22023, checked before the offset
SELECT * FROM streamforge.ingest('deliveries', 'r', 0, 'e5', 'k', 1, 1);
SELECT * FROM streamforge.ingest('deliveries', 'P', 3, 'e5', 'k', 1, 1);
SELECT * FROM streamforge.ingest('deliveries', '', 3, 'e5', 'k', 1, 1);
SELECT * FROM streamforge.ingest('deliveries', 'r', 7, 'e5', 'k', 1, 1);
-- NULL arguments are 22004, checked before the partition
SELECT * FROM streamforge.ingest('deliveries', NULL, 3, 'e5', 'k', 1, 1);
SELECT * FROM streamforge.ingest('deliveries', 'p', NULL, 'e5', 'k', 1, 1);
SELECT * FROM streamforge.ingest('deliveries', 'p', 3, NULL, 'k', 1, 1);
SELECT * FROM streamforge.ingest('deliveries', 'p', 3, 'e5', NULL, 1, 1);
SELECT * FROM streamforge.ingest('deliveries', 'p', 3, 'e5', 'k', NULL, 1);
SELECT * FROM streamforge.ingest('deliveries', 'p', 3, 'e5', 'k', 1, NULL);
SELECT * FROM streamforge.ingest('deliveries', 'r', NULL, 'e5', 'k', 1, 1);
-- an empty event_id is 22023
SELECT * FROM streamforge.ingest('deliveries', 'p', 3, '', 'k', 1, 1);
-- none of these errors consumed anything
SELECT * FROM streamforge.partitions('deliveries');
SELECT * FROM streamforge.live('deliveries');
SELECT * FROM streamforge.visible('deliveries');
SELECT streamforge.drop_pipeline('deliveries');
