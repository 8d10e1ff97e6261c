-- finalization: after reconciliation, buckets with watermark > end + lateness
-- leave the live index and their emitted rows are forgotten without a
-- retraction.  live() is every live bucket, visible() the emitted rows.
\set VERBOSITY sqlstate
SELECT streamforge.create_pipeline('finalization', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)], 10);
SELECT * FROM streamforge.ingest('finalization', 'p', 0, 'a', 'k', 5, 1);
SELECT * FROM streamforge.ingest('finalization', 'p', 1, 'b', 'k', 15, 2);
SELECT * FROM streamforge.advance('finalization', 'p', 10);
-- live: both buckets; visible: the ready one
SELECT * FROM streamforge.live('finalization');
SELECT * FROM streamforge.visible('finalization');
-- watermark 20 = 10 + lateness: [0, 10) is kept (not 20 > 20)
SELECT * FROM streamforge.advance('finalization', 'p', 20);
SELECT * FROM streamforge.visible('finalization');
-- watermark 21 > 10 + 10: [0, 10) is finalized, without a retraction
SELECT * FROM streamforge.advance('finalization', 'p', 21);
SELECT * FROM streamforge.live('finalization');
SELECT * FROM streamforge.visible('finalization');
-- an event for the finalized window is late (9 + 10 < 21)
SELECT * FROM streamforge.ingest('finalization', 'p', 2, 'c', 'k', 9, 4);
-- [10, 20) is still live: 11 + 10 = 21 is accepted and corrects it
SELECT * FROM streamforge.ingest('finalization', 'p', 3, 'd', 'k', 11, 8);
SELECT * FROM streamforge.ingest('finalization', 'p', 4, 'e', 'k', 35, 16);
SELECT * FROM streamforge.ingest('finalization', 'p', 5, 'f', 'k', 150, 32);
-- one call both emits [30, 40) and then finalizes it, with [10, 20)
SELECT * FROM streamforge.advance('finalization', 'p', 100);
-- what is left: the pending [150, 160), visible nowhere
SELECT * FROM streamforge.live('finalization');
SELECT * FROM streamforge.visible('finalization');
SELECT * FROM streamforge.advance('finalization', 'p', 170);
SELECT * FROM streamforge.visible('finalization');
SELECT * FROM streamforge.advance('finalization', 'p', 171);
SELECT * FROM streamforge.live('finalization');
SELECT * FROM streamforge.visible('finalization');
-- finalized or not, an event behind the watermark by more than lateness is late
SELECT * FROM streamforge.ingest('finalization', 'p', 6, 'g', 'k', 155, 64);
SELECT * FROM streamforge.late_events('finalization');
SELECT streamforge.drop_pipeline('finalization');
