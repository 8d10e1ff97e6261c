-- Outputs turned on late, backfilled (issue 25 item 7; docs/outputs.md,
-- Turning outputs on and off): configure_outputs(..., backfill => true)
-- writes into the results table the rows the pipeline finalized before,
-- derived from its remembered events, so that it holds what it would hold
-- had the outputs been on from the start (rows finalized and dropped by a
-- retention excepted).
\set VERBOSITY sqlstate

-- twins: 'bf_on' has outputs from the start, 'bf_late' gets them later
SELECT streamforge.create_pipeline(p, ARRAY['p'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 10, 5),
          streamforge.session('g', 3)], lateness => 4)
  FROM unnest(ARRAY['bf_on', 'bf_late']) AS p;
SELECT streamforge.configure_outputs('bf_on');
SELECT count(*) FROM unnest(ARRAY['bf_on', 'bf_late']) AS p,
       streamforge.ingest_batch(p, ARRAY(
           SELECT ROW('p', i, 'e' || i, 'k' || (i % 3), (i * 7) % 60 + i, i)::streamforge.delivery
             FROM generate_series(0, 59) AS i));
SELECT count(*) FROM unnest(ARRAY['bf_on', 'bf_late']) AS p,
       streamforge.advance(p, 'p', 70);

-- without backfill: only the visible() rows, nothing finalized
SELECT streamforge.configure_outputs('bf_late');
SELECT count(*) AS rows, count(*) FILTER (WHERE final) AS final_rows
  FROM streamforge.results WHERE pipeline = 'bf_late';
-- with backfill (results turned on again): every row
SELECT streamforge.disable_outputs('bf_late');
SELECT streamforge.configure_outputs('bf_late', backfill => true);
SELECT pipeline, count(*) AS rows, count(*) FILTER (WHERE final) AS final_rows
  FROM streamforge.results WHERE pipeline IN ('bf_on', 'bf_late') GROUP BY 1 ORDER BY 1;
-- the same rows, values and final flags as the twin's
SELECT count(*) AS differences FROM (
    (SELECT window_name, key, window_start, window_end, count, sum, min, max, final
       FROM streamforge.results WHERE pipeline = 'bf_on'
     EXCEPT
     SELECT window_name, key, window_start, window_end, count, sum, min, max, final
       FROM streamforge.results WHERE pipeline = 'bf_late')
    UNION ALL
    (SELECT window_name, key, window_start, window_end, count, sum, min, max, final
       FROM streamforge.results WHERE pipeline = 'bf_late'
     EXCEPT
     SELECT window_name, key, window_start, window_end, count, sum, min, max, final
       FROM streamforge.results WHERE pipeline = 'bf_on')) AS d;
-- backfilled rows have no seq, and the current epoch
SELECT count(*) FILTER (WHERE seq IS NULL) = count(*) AS no_seq,
       bool_and(r.epoch = c.epoch) AS current_epoch
  FROM streamforge.results r JOIN streamforge.output_config c USING (pipeline)
 WHERE pipeline = 'bf_late';
-- backfill again changes nothing
SELECT streamforge.configure_outputs('bf_late', backfill => true);
SELECT count(*) AS rows FROM streamforge.results WHERE pipeline = 'bf_late';

-- with a retention, rows starting below the horizon are not recovered
SELECT streamforge.create_pipeline('bf_ret', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)],
    retention => 20);
SELECT count(*) FROM streamforge.ingest_batch('bf_ret', ARRAY(
    SELECT ROW('p', i, 'e' || i, 'k', i * 5, 1)::streamforge.delivery
      FROM generate_series(0, 19) AS i));
SELECT count(*) FROM streamforge.advance('bf_ret', 'p', 100);
SELECT streamforge.configure_outputs('bf_ret', backfill => true);
SELECT window_start, count, final FROM streamforge.results WHERE pipeline = 'bf_ret'
 ORDER BY 1;

-- errors
SELECT streamforge.configure_outputs('bf_late', backfill => NULL);

SELECT streamforge.drop_pipeline(p) FROM unnest(ARRAY['bf_on', 'bf_late', 'bf_ret']) AS p;
