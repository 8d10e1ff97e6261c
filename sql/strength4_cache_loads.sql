-- strength4_cache_loads: the metrics view's cache_loads counts every time
-- this backend builds the pipeline from its tables (here: the first load
-- and each restore), not only the first one (issue 24, the fourth round
-- of scripts/mutants-0.3.tsv: mutant cache-loads-stuck; metrics reads it
-- only once after a reconnect).
SELECT streamforge.create_pipeline('s4l', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
SELECT count(*) FROM streamforge.ingest('s4l', 'p', 0, 'e0', 'k', 1, 5);
\c -
SELECT streamforge.watermark('s4l');
SELECT cache_loads FROM streamforge.metrics WHERE pipeline = 's4l';
-- a cached pipeline is not loaded again
SELECT count(*) FROM streamforge.ingest('s4l', 'p', 1, 'e1', 'k', 2, 6);
SELECT cache_loads FROM streamforge.metrics WHERE pipeline = 's4l';
-- restore builds it from the checkpoint's state: one more
SELECT streamforge.restore('s4l', streamforge.checkpoint('s4l'));
SELECT count(*) FROM streamforge.live('s4l');
SELECT cache_loads FROM streamforge.metrics WHERE pipeline = 's4l';
SELECT streamforge.restore('s4l', streamforge.checkpoint('s4l'));
SELECT count(*) FROM streamforge.live('s4l');
SELECT cache_loads FROM streamforge.metrics WHERE pipeline = 's4l';
SELECT streamforge.drop_pipeline('s4l');
