-- Upserts that repeat (issue 25 item 3; docs/outputs.md, "Upserts may
-- repeat"): raising the lateness brings a finalized bucket back, and its
-- row is upserted again, with the values it was finalized with, without a
-- retraction; a consumer that applies upserts by address (as the results
-- table does) is unaffected.  In a mode with final changes the raise is
-- refused (55000), so a final row is never followed by anything.
\set VERBOSITY sqlstate

SELECT streamforge.create_pipeline('rep', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
SELECT streamforge.configure_outputs('rep');
SELECT count(*) FROM streamforge.ingest('rep', 'p', 0, 'e0', 'k', 1, 4);
SELECT count(*) FROM streamforge.advance('rep', 'p', 11);     -- upsert, then final at once
SELECT count(*) AS visible FROM streamforge.visible('rep');
SELECT seq, op, window_start, count, sum FROM streamforge.set_lateness('rep', 100);
SELECT seq, op, window_start, count, sum FROM streamforge.changelog
 WHERE pipeline = 'rep' ORDER BY seq;
-- the results table holds one row for the address, not final any more
SELECT window_start, count, sum, seq, final FROM streamforge.results WHERE pipeline = 'rep';
-- a correction after the raise is a retraction and an upsert, as always
SELECT seq, op, window_start, count, sum
  FROM streamforge.ingest('rep', 'p', 1, 'e1', 'k', 2, 6);

-- with final changes: refused once there is a watermark
SELECT streamforge.create_pipeline('rep_f', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    emit => 'update+final');
SELECT seq, op FROM streamforge.set_lateness('rep_f', 5);   -- no watermark yet: fine
SELECT count(*) FROM streamforge.advance('rep_f', 'p', 11);
SELECT streamforge.set_lateness('rep_f', 100);
SELECT seq, op FROM streamforge.set_lateness('rep_f', 2);   -- lowering is fine

SELECT streamforge.drop_pipeline('rep');
SELECT streamforge.drop_pipeline('rep_f');
