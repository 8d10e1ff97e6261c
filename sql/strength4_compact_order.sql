-- strength4_compact_order: compact() keeps a pipeline's retention (the
-- state it stores forgets on, before and after a new backend loads it),
-- and the changes of one call come retractions first, then upserts, each
-- in address order even when the call touched the rows in the other
-- order (issue 24, the fourth round of scripts/mutants-0.3.tsv: mutants
-- compact-drops-retention, retract-sort-dropped and sort-two-unsorted).
SELECT streamforge.create_pipeline('s4o', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    retention => 5);
SELECT count(*) FROM streamforge.ingest('s4o', 'p', 0, 'a', 'k', 1, 1);
SELECT count(*) FROM streamforge.ingest('s4o', 'p', 1, 'b', 'k', 12, 2);
SELECT streamforge.compact('s4o', 0);
-- watermark 20, horizon 15: both events are below it and forgotten
SELECT count(*) FROM streamforge.advance('s4o', 'p', 20);
SELECT remembered_identities, remembered_offsets, forgotten_offsets FROM streamforge.stats('s4o');
SELECT count(*) FROM streamforge.ingest('s4o', 'p', 2, 'c', 'k', 23, 3);
\c -
SELECT remembered_identities, remembered_offsets, forgotten_offsets FROM streamforge.stats('s4o');
SELECT count(*) FROM streamforge.advance('s4o', 'p', 30);
SELECT remembered_identities, remembered_offsets, forgotten_offsets FROM streamforge.stats('s4o');
SELECT streamforge.drop_pipeline('s4o');

-- one event in two visible buckets of a sliding window: two retractions
-- and two upserts, which the window assignment touches latest start first
SELECT streamforge.create_pipeline('s4t', ARRAY['p'], ARRAY[streamforge.sliding('s', 10, 5)], 100);
SELECT count(*) FROM streamforge.ingest('s4t', 'p', 0, 'e0', 'k', 6, 1);
SELECT seq, op, window_start, window_end, count, sum FROM streamforge.advance('s4t', 'p', 30);
SELECT seq, op, window_start, window_end, count, sum
  FROM streamforge.ingest('s4t', 'p', 1, 'e1', 'k', 8, 10);
SELECT streamforge.drop_pipeline('s4t');
-- with a session window too: one event that changes three rows, and one
-- that merges two visible sessions (four retractions, three upserts)
SELECT streamforge.create_pipeline('s4s', ARRAY['p'],
    ARRAY[streamforge.sliding('s', 10, 5), streamforge.session('g', 3)], 100);
SELECT count(*) FROM streamforge.ingest('s4s', 'p', 0, 'e0', 'k', 6, 1);
SELECT count(*) FROM streamforge.ingest('s4s', 'p', 1, 'e1', 'k', 12, 2);
SELECT seq, op, window_name, window_start, window_end, count, sum
  FROM streamforge.advance('s4s', 'p', 30);
SELECT seq, op, window_name, window_start, window_end, count, sum
  FROM streamforge.ingest('s4s', 'p', 2, 'e2', 'k', 8, 10);
SELECT seq, op, window_name, window_start, window_end, count, sum
  FROM streamforge.ingest('s4s', 'p', 3, 'e3', 'k', 9, 20);
SELECT streamforge.drop_pipeline('s4s');
