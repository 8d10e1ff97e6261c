--
-- Rows rebuilt by restore/resync_outputs and backfill at the finalization
-- boundary: watermark = window_end + lateness (issue 38 item 11, the
-- mutant final-rows-boundary).
--
-- docs/semantics.md: a bucket is finalized when watermark > end + lateness,
-- so at watermark = end + lateness it is not final yet, and in emit mode
-- 'final' nothing of it has been reported: visible() is empty and the
-- results table holds final rows only.  docs/outputs.md: restore() runs
-- resync_outputs, which gives an address touched past the restored seq
-- the row the restored state has finalized, if it has; and
-- configure_outputs(backfill => true) writes the rows the pipeline has
-- finalized.  A checkpoint taken exactly at the boundary and restored
-- after the bucket was finalized must therefore leave no row for it; the
-- row comes back, final, when the watermark passes the boundary again.
\set VERBOSITY default
SELECT streamforge.create_pipeline(p, ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10), streamforge.sliding('s', 10, 5),
          streamforge.session('g', 3)],
    lateness => 2, emit => e)
  FROM (VALUES ('s6b_final', 'final'), ('s6b_uf', 'update+final'),
               ('s6b_bf', 'final')) AS v(p, e);
SELECT streamforge.configure_outputs(p)
  FROM unnest(ARRAY['s6b_final', 's6b_uf']) AS p;
-- events at 4 and 6: [0,10), [-5,5), [0,10), [5,15) and the session
-- [4,9) (ends 10, 10, 5, 15 and 9)
SELECT count(*) FROM unnest(ARRAY['s6b_final', 's6b_uf', 's6b_bf']) AS p,
  streamforge.ingest_batch(p, ARRAY[
    ROW('p', 0, 'e0', 'k', 4, 1), ROW('p', 1, 'e1', 'k', 6, 2)]::streamforge.delivery[]);
-- watermark 12 = 10 + 2: [-5,5) and the session [4,9) are final, [0,10)
-- of both windows is at the boundary, not final
SELECT count(*) FROM unnest(ARRAY['s6b_final', 's6b_uf', 's6b_bf']) AS p,
  streamforge.advance(p, 'p', 12);
CREATE FUNCTION res(pl text) RETURNS TABLE (window_name text, window_start bigint,
    window_end bigint, count bigint, sum numeric, final boolean) LANGUAGE sql AS $$
  SELECT window_name, window_start, window_end, count, sum, final
    FROM streamforge.results WHERE pipeline = pl ORDER BY 1, 2 $$;
SELECT * FROM res('s6b_final');
SELECT * FROM res('s6b_uf');
-- backfill at the boundary: the final rows only
SELECT streamforge.configure_outputs('s6b_bf', backfill => true);
SELECT * FROM res('s6b_bf');
CREATE TABLE cp AS SELECT p, streamforge.checkpoint(p) AS c
  FROM unnest(ARRAY['s6b_final', 's6b_uf']) AS p;
-- past the boundary: [0,10) of both windows is final
SELECT count(*) FROM unnest(ARRAY['s6b_final', 's6b_uf', 's6b_bf']) AS p,
  streamforge.advance(p, 'p', 13);
SELECT * FROM res('s6b_final');
-- the restore at the boundary: [0,10)'s final rows were written past the
-- checkpoint's seq, the changelog has no row of them up to it, and the
-- restored state has not finalized them: they go, the rows final at the
-- checkpoint stay
SELECT streamforge.restore(p, (SELECT c FROM cp WHERE cp.p = v.p))
  FROM unnest(ARRAY['s6b_final', 's6b_uf']) AS v(p);
SELECT * FROM res('s6b_final');
-- 'update+final': [0,10) is visible, not final
SELECT * FROM res('s6b_uf');
SELECT streamforge.resync_outputs('s6b_final');
SELECT * FROM res('s6b_final');
-- past the boundary again: the final rows come back
SELECT count(*) FROM unnest(ARRAY['s6b_final', 's6b_uf']) AS p,
  streamforge.advance(p, 'p', 13);
SELECT * FROM res('s6b_final');
SELECT * FROM res('s6b_uf');
SELECT streamforge.drop_pipeline(p)
  FROM unnest(ARRAY['s6b_final', 's6b_uf', 's6b_bf']) AS p;
DROP FUNCTION res(text);
DROP TABLE cp;
