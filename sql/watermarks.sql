-- watermarks: per-partition progress never decreases; the global watermark
-- is the minimum progress of the non-idle partitions once each of them has
-- reported, never decreases, and holds with no non-idle partition;
-- mark_idle() takes a partition out, advance() brings it back (docs/semantics.md "Exact rules" 6).
\set VERBOSITY sqlstate
-- lateness 1000 keeps every bucket live
SELECT streamforge.create_pipeline('watermarks', ARRAY['p3', 'p1', 'p2'], ARRAY[streamforge.fixed('f', 10)], 1000);
-- no watermark before any report
SELECT streamforge.watermark('watermarks');
-- byte order of names; progress NULL until the first report
SELECT * FROM streamforge.partitions('watermarks');
SELECT * FROM streamforge.advance('watermarks', 'p1', 50);
SELECT * FROM streamforge.advance('watermarks', 'p2', 30);
-- p3 has not reported yet: still no watermark
SELECT streamforge.watermark('watermarks');
-- without a watermark nothing is ready
SELECT * FROM streamforge.ingest('watermarks', 'p1', 0, 'e1', 'k', 5, 1);
-- the last report defines the watermark: min(50, 30, 40) = 30
SELECT * FROM streamforge.advance('watermarks', 'p3', 40);
SELECT streamforge.watermark('watermarks');
-- a lower report is ignored
SELECT * FROM streamforge.advance('watermarks', 'p2', 20);
SELECT * FROM streamforge.partitions('watermarks');
-- min(50, 45, 40) = 40
SELECT * FROM streamforge.advance('watermarks', 'p2', 45);
SELECT streamforge.watermark('watermarks');
-- [50, 60) is not ready at 40
SELECT * FROM streamforge.ingest('watermarks', 'p1', 1, 'e2', 'k', 55, 2);
-- idle p3 leaves the minimum: min(50, 45) = 45
SELECT * FROM streamforge.mark_idle('watermarks', 'p3');
SELECT streamforge.watermark('watermarks');
SELECT * FROM streamforge.partitions('watermarks');
-- marking it idle again changes nothing
SELECT * FROM streamforge.mark_idle('watermarks', 'p3');
-- advance reactivates p3 although 10 is below its progress 40; the lower
-- value is ignored, and min(50, 45, 40) = 40 would rewind: the watermark holds
SELECT * FROM streamforge.advance('watermarks', 'p3', 10);
SELECT * FROM streamforge.partitions('watermarks');
SELECT streamforge.watermark('watermarks');
-- min(50, 70, 40) = 40: still held at 45
SELECT * FROM streamforge.advance('watermarks', 'p2', 70);
-- min(50, 70, 65) = 50; [50, 60) needs 60
SELECT * FROM streamforge.advance('watermarks', 'p3', 65);
SELECT streamforge.watermark('watermarks');
-- mark_idle can move the watermark: min(70, 65) = 65 makes [50, 60) ready
SELECT * FROM streamforge.mark_idle('watermarks', 'p1');
SELECT * FROM streamforge.mark_idle('watermarks', 'p2');
-- no non-idle partition left: the watermark holds
SELECT * FROM streamforge.mark_idle('watermarks', 'p3');
SELECT streamforge.watermark('watermarks');
SELECT * FROM streamforge.partitions('watermarks');
-- events neither reactivate an idle partition nor move the watermark
SELECT * FROM streamforge.ingest('watermarks', 'p2', 0, 'e3', 'k', 150, 4);
SELECT * FROM streamforge.partitions('watermarks');
SELECT streamforge.watermark('watermarks');
-- p1 comes back with progress 50 (30 is ignored): min(50) would rewind, so 65 holds
SELECT * FROM streamforge.advance('watermarks', 'p1', 30);
SELECT streamforge.watermark('watermarks');
SELECT * FROM streamforge.advance('watermarks', 'p1', 100);
SELECT streamforge.watermark('watermarks');
SELECT * FROM streamforge.partitions('watermarks');
-- bad arguments
SELECT * FROM streamforge.advance('watermarks', 'p4', 200);
SELECT * FROM streamforge.advance('watermarks', NULL, 200);
SELECT * FROM streamforge.advance('watermarks', 'p1', NULL);
SELECT * FROM streamforge.mark_idle('watermarks', 'p4');
SELECT * FROM streamforge.mark_idle('watermarks', NULL);
SELECT streamforge.watermark('watermarks');
SELECT streamforge.drop_pipeline('watermarks');
-- a partition that is idle before it ever reported does not hold the
-- watermark back
SELECT streamforge.create_pipeline('watermarks2', ARRAY['a', 'b'], ARRAY[streamforge.fixed('f', 10)]);
SELECT * FROM streamforge.mark_idle('watermarks2', 'b');
SELECT streamforge.watermark('watermarks2');
SELECT * FROM streamforge.advance('watermarks2', 'a', 10);
SELECT streamforge.watermark('watermarks2');
SELECT * FROM streamforge.partitions('watermarks2');
-- b comes back with 3: min(10, 3) = 3 would rewind, so 10 holds
SELECT * FROM streamforge.advance('watermarks2', 'b', 3);
SELECT * FROM streamforge.partitions('watermarks2');
SELECT streamforge.watermark('watermarks2');
-- min(10, 20) = 10, then min(15, 20) = 15
SELECT * FROM streamforge.advance('watermarks2', 'b', 20);
SELECT streamforge.watermark('watermarks2');
SELECT * FROM streamforge.advance('watermarks2', 'a', 15);
SELECT streamforge.watermark('watermarks2');
SELECT streamforge.drop_pipeline('watermarks2');
-- every partition idle before any report: no watermark; then a negative one
SELECT streamforge.create_pipeline('watermarks3', ARRAY['a'], ARRAY[streamforge.fixed('f', 10)]);
SELECT * FROM streamforge.mark_idle('watermarks3', 'a');
SELECT streamforge.watermark('watermarks3');
SELECT * FROM streamforge.advance('watermarks3', 'a', -5);
SELECT streamforge.watermark('watermarks3');
SELECT * FROM streamforge.advance('watermarks3', 'a', '-9223372036854775808'::bigint);
SELECT * FROM streamforge.partitions('watermarks3');
SELECT streamforge.drop_pipeline('watermarks3');
