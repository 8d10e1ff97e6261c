-- inspection: watermark(), live(), visible(), late_events(), partitions()
-- and stats() of a pipeline, before and after some traffic.  Names and keys
-- are ordered by bytes ('B' < '_' < 'a' < 'b', 'K' < 'k'), whatever the
-- database's collation.
\set VERBOSITY sqlstate
SELECT streamforge.create_pipeline('inspection', ARRAY['b', 'a', 'B', '_'],
    ARRAY[streamforge.session('s', 5), streamforge.fixed('f', 10)]);
-- a new pipeline: no watermark, nothing live, no progress yet
SELECT streamforge.watermark('inspection');
SELECT * FROM streamforge.partitions('inspection');
SELECT * FROM streamforge.live('inspection');
SELECT * FROM streamforge.visible('inspection');
SELECT * FROM streamforge.late_events('inspection');
SELECT deliveries, accepted, duplicate_ids, late_events, changes_emitted,
       live_buckets, visible_rows, partitions, idle_partitions
  FROM streamforge.stats('inspection');
SELECT * FROM streamforge.ingest('inspection', 'a', 0, 'e1', 'k', 3, 1);
SELECT * FROM streamforge.ingest('inspection', 'b', 0, 'e2', 'K', 12, 2);
SELECT * FROM streamforge.ingest('inspection', 'B', 0, 'e1', 'k', 3, 1);
-- address order: window name, key, start, end
SELECT * FROM streamforge.live('inspection');
SELECT * FROM streamforge.advance('inspection', 'a', 10);
SELECT * FROM streamforge.advance('inspection', 'b', 10);
SELECT * FROM streamforge.advance('inspection', 'B', 10);
-- '_' has not reported
SELECT streamforge.watermark('inspection');
SELECT * FROM streamforge.mark_idle('inspection', '_');
SELECT streamforge.watermark('inspection');
-- 9 + 0 < 10: late
SELECT * FROM streamforge.ingest('inspection', 'a', 1, 'e3', 'k', 9, 4);
-- s [3, 8) was emitted and then finalized (10 > 8): neither live nor visible
SELECT * FROM streamforge.live('inspection');
SELECT * FROM streamforge.visible('inspection');
SELECT * FROM streamforge.late_events('inspection');
SELECT * FROM streamforge.partitions('inspection');
-- 4 deliveries: 2 accepted events, 1 duplicate, 1 late
SELECT deliveries, accepted, duplicate_ids, late_events, changes_emitted,
       live_buckets, visible_rows, partitions, idle_partitions
  FROM streamforge.stats('inspection');
-- reading changes nothing
SELECT streamforge.watermark('inspection');
SELECT count(*) FROM streamforge.live('inspection');
SELECT streamforge.drop_pipeline('inspection');
