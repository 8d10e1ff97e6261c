-- strength_outputs: the durable outputs of one call that makes more
-- changes or late events than one statement of the sink writes (8192 rows
-- each, src/persist/sink.c): every row arrives, once (issue 24).
SELECT streamforge.create_pipeline('so', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)]);
SELECT streamforge.configure_outputs('so');
-- 20,000 keys, one bucket each; the advance makes 20,000 changes at once
SELECT count(*) FROM streamforge.ingest_batch('so',
    (SELECT array_agg(ROW('p', i, 'e' || i, 'k' || i, 1, i)::streamforge.delivery ORDER BY i)
       FROM generate_series(0, 19999) AS i));
SELECT count(*) FROM streamforge.advance('so', 'p', 20);
SELECT count(*) AS rows, count(DISTINCT seq) AS seqs, min(seq), max(seq), sum(sum)
  FROM streamforge.changelog WHERE pipeline = 'so';
SELECT count(*) AS rows, min(seq), max(seq), sum(sum)
  FROM streamforge.results WHERE pipeline = 'so';
-- 20,000 late events in one call
SELECT count(*) FROM streamforge.ingest_batch('so',
    (SELECT array_agg(ROW('p', 20000 + i, 'l' || i, 'k', 2, i)::streamforge.delivery ORDER BY i)
       FROM generate_series(0, 19999) AS i));
SELECT count(*) AS rows, min(late_seq), max(late_seq), sum(value), min(source_offset), max(source_offset)
  FROM streamforge.late_output WHERE pipeline = 'so';
SELECT late_events FROM streamforge.stats('so');

-- clean up
SELECT streamforge.drop_pipeline('so');
