-- measures_final: a measures pipeline whose changes include final ones
-- (emit 'update+final' and 'final'): the calls returning
-- streamforge.measures_change spell a final change 'final', as the
-- changelog and streamforge.change do, and the results row a final change
-- writes carries its aggregates, as every results row of a measures
-- pipeline does (docs/aggregates.md).  Found by the fourth mutant round of
-- issue 24 (measures-change-op, sink-measures-final-too survived).
SELECT streamforge.create_pipeline('mf_uf', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    emit => 'update+final', out_of_orderness => 0,
    measures => ARRAY['a'], aggregates => ARRAY['sum(a)']);
SELECT streamforge.configure_outputs('mf_uf');
-- event time 1 opens [0, 10); event time 12 moves the watermark to 12,
-- past 10: [0, 10) is final, [10, 20) opens
SELECT seq, op, window_start, count, aggregates
  FROM streamforge.ingest_measures('mf_uf', 'p', 0, 'e0', 'k', 1, ARRAY[5]);
SELECT seq, op, window_start, count, aggregates
  FROM streamforge.ingest_measures('mf_uf', 'p', 1, 'e1', 'k', 12, ARRAY[7]);
SELECT seq, op, window_start, count, aggregates
  FROM streamforge.changelog WHERE pipeline = 'mf_uf' ORDER BY seq;
SELECT window_start, count, final, aggregates
  FROM streamforge.results WHERE pipeline = 'mf_uf' ORDER BY window_start;
SELECT streamforge.drop_pipeline('mf_uf');

-- emit 'final': no upserts, the final change alone writes the row
SELECT streamforge.create_pipeline('mf_f', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    emit => 'final', out_of_orderness => 0,
    measures => ARRAY['a'], aggregates => ARRAY['sum(a)', 'max(a)']);
SELECT streamforge.configure_outputs('mf_f');
SELECT count(*) FROM streamforge.ingest_measures('mf_f', 'p', 0, 'e0', 'k', 1, ARRAY[5]);
SELECT count(*) FROM streamforge.ingest_measures('mf_f', 'p', 1, 'e1', 'k', 3, ARRAY[9]);
SELECT seq, op, window_start, count, aggregates
  FROM streamforge.ingest_measures('mf_f', 'p', 2, 'e2', 'k', 15, ARRAY[2]);
SELECT window_start, count, final, aggregates
  FROM streamforge.results WHERE pipeline = 'mf_f' ORDER BY window_start;
SELECT streamforge.drop_pipeline('mf_f');
