-- retention_offsets: docs/semantics.md "Retention" rule 2.  A consumed offset whose recorded
-- delivery has event_time < H is forgotten: a delivery there is a replay
-- no-op whatever it carries.  Offsets still remembered keep SF001.

SELECT streamforge.create_pipeline('ro', ARRAY['p', 'q'],
    ARRAY[streamforge.fixed('w', 10)], lateness => 2, retention => 3);

-- offset 0 carries a late-arriving old event, offset 1 a recent one
SELECT count(*) FROM streamforge.ingest('ro', 'p', 0, 'a', 'k', 1, 1);
SELECT count(*) FROM streamforge.ingest('ro', 'p', 1, 'b', 'k', 12, 1);
SELECT count(*) FROM streamforge.ingest('ro', 'p', 2, 'c', 'k', 4, 1);
SELECT count(*) FROM streamforge.advance('ro', 'p', 10);
SELECT count(*) FROM streamforge.advance('ro', 'q', 10);
-- watermark 10, H = 10 - 2 - 3 = 5: offsets 0 (time 1) and 2 (time 4) are
-- forgotten, offset 1 (time 12) is not
SELECT remembered_offsets, forgotten_offsets, offset_replays
  FROM streamforge.stats('ro');

-- anything at a forgotten offset is a replay: no rows, no error
SELECT * FROM streamforge.ingest('ro', 'p', 0, 'zzz', 'other', 999, -5);
SELECT * FROM streamforge.ingest('ro', 'p', 2, 'a', 'k', 1, 1);
SELECT offset_replays, deliveries FROM streamforge.stats('ro');
-- a remembered offset still demands the identical delivery
SELECT * FROM streamforge.ingest('ro', 'p', 1, 'b', 'k', 12, 1);
SELECT * FROM streamforge.ingest('ro', 'p', 1, 'b', 'k', 12, 2);    -- SF001
-- gaps and negative offsets are still conflicts
SELECT * FROM streamforge.ingest('ro', 'p', 4, 'd', 'k', 20, 1);    -- SF001
SELECT * FROM streamforge.ingest('ro', 'p', -1, 'd', 'k', 20, 1);   -- SF001
-- consumed offsets are unchanged by forgetting
SELECT partition, consumed_offset FROM streamforge.partitions('ro');

-- the horizon passes offset 1 as well (watermark 20, H = 15)
SELECT count(*) FROM streamforge.advance('ro', 'p', 20);
SELECT count(*) FROM streamforge.advance('ro', 'q', 20);
SELECT remembered_offsets, forgotten_offsets FROM streamforge.stats('ro');
SELECT * FROM streamforge.ingest('ro', 'p', 1, 'b', 'k', 12, 2);
-- the next offset is a new delivery as usual; its event is remembered
SELECT count(*) FROM streamforge.ingest('ro', 'p', 3, 'd', 'k', 21, 1);
SELECT * FROM streamforge.ingest('ro', 'p', 3, 'd', 'k', 21, 2);    -- SF001
SELECT remembered_offsets, forgotten_offsets FROM streamforge.stats('ro');

-- a duplicate delivery is an offset record of the same event: forgotten
-- together with its identity
SELECT count(*) FROM streamforge.ingest('ro', 'q', 0, 'd', 'k', 21, 1);  -- dup
SELECT remembered_identities, remembered_offsets FROM streamforge.stats('ro');
SELECT count(*) FROM streamforge.advance('ro', 'p', 30);
SELECT count(*) FROM streamforge.advance('ro', 'q', 30);
SELECT remembered_identities, remembered_offsets, forgotten_offsets
  FROM streamforge.stats('ro');
SELECT * FROM streamforge.ingest('ro', 'q', 0, 'x', 'y', 0, 0);

-- in one transaction, rolled back: nothing was forgotten for anyone
BEGIN;
SELECT count(*) FROM streamforge.ingest('ro', 'p', 4, 'e', 'k', 40, 1);
SELECT count(*) FROM streamforge.advance('ro', 'p', 60);
SELECT count(*) FROM streamforge.advance('ro', 'q', 60);
SELECT remembered_offsets FROM streamforge.stats('ro');
ROLLBACK;
SELECT remembered_offsets, forgotten_offsets FROM streamforge.stats('ro');

SELECT streamforge.drop_pipeline('ro');
