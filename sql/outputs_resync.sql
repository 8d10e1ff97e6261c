-- resync_outputs() (and so restore()) keeps the finalized results rows
-- with seq NULL that configure_outputs or a restore copied from visible():
-- a resync of outputs that already agree changes nothing (docs/outputs.md).
\set VERBOSITY sqlstate

-- the reproduction of issue 12: [0,10) is finalized, its row has seq NULL
SELECT streamforge.create_pipeline('rs', ARRAY['p0'], ARRAY[streamforge.fixed('w',10)], 5);
SELECT count(*) FROM streamforge.ingest('rs','p0',0,'e0','k',5,1);
SELECT count(*) FROM streamforge.advance('rs','p0',12);
SELECT streamforge.configure_outputs('rs');
SELECT count(*) FROM streamforge.advance('rs','p0',100);
SELECT * FROM streamforge.visible('rs');
CREATE TEMP TABLE before AS
  SELECT * FROM streamforge.results WHERE pipeline = 'rs';
SELECT window_name, key, window_start, window_end, count, sum, seq
  FROM before ORDER BY window_start;
SELECT streamforge.resync_outputs('rs');
-- nothing changed: the same rows, seq included
SELECT count(*) AS results_rows,
       count(*) FILTER (WHERE (SELECT count(*) FROM before AS b
                                WHERE b IS NOT DISTINCT FROM r) = 1) AS unchanged
  FROM streamforge.results AS r WHERE pipeline = 'rs';

-- a mix of rows: copied (seq NULL), written by changes, finalized and live
SELECT count(*) FROM streamforge.ingest('rs','p0',1,'e1','k',101,2);
SELECT count(*) FROM streamforge.ingest('rs','p0',2,'e2','j',105,3);
SELECT count(*) FROM streamforge.advance('rs','p0',130);
SELECT count(*) FROM streamforge.ingest('rs','p0',3,'e3','k',128,4);
DROP TABLE before;
CREATE TEMP TABLE before AS
  SELECT * FROM streamforge.results WHERE pipeline = 'rs';
SELECT window_name, key, window_start, window_end, count, sum, seq
  FROM before ORDER BY window_start, key;
SELECT streamforge.resync_outputs('rs');
SELECT count(*) AS results_rows,
       count(*) FILTER (WHERE (SELECT count(*) FROM before AS b
                                WHERE b IS NOT DISTINCT FROM r) = 1) AS unchanged
  FROM streamforge.results AS r WHERE pipeline = 'rs';

-- restore() to a checkpoint taken now, after more changes: the changes
-- past the checkpoint are undone, every older row (seq NULL too) stays
CREATE TEMP TABLE cp AS SELECT streamforge.checkpoint('rs') AS c;
SELECT count(*) FROM streamforge.ingest('rs','p0',4,'e4','k',129,10);
SELECT count(*) FROM streamforge.ingest('rs','p0',5,'e5','n',127,1);
SELECT count(*) FROM streamforge.advance('rs','p0',200);
SELECT window_name, key, window_start, window_end, count, sum, seq
  FROM streamforge.results WHERE pipeline = 'rs' ORDER BY window_start, key;
SELECT streamforge.restore('rs', (SELECT c FROM cp));
SELECT count(*) AS results_rows,
       count(*) FILTER (WHERE (SELECT count(*) FROM before AS b
                                WHERE b IS NOT DISTINCT FROM r) = 1) AS unchanged
  FROM streamforge.results AS r WHERE pipeline = 'rs';
SELECT max(seq) AS last_changelog_seq FROM streamforge.changelog WHERE pipeline = 'rs';
SELECT (streamforge.stats('rs')).changes_emitted;

-- the same without the changelog: an address touched after the
-- checkpoint cannot be reset from the changelog, so its row is rebuilt
-- from visible() when visible() still shows it; the rest stays
SELECT streamforge.configure_outputs('rs', changelog => false);
SELECT count(*) FROM streamforge.ingest('rs','p0',4,'e4','k',129,10);
SELECT count(*) FROM streamforge.advance('rs','p0',200);
SELECT streamforge.restore('rs', (SELECT c FROM cp));
SELECT count(*) AS results_rows,
       count(*) FILTER (WHERE (SELECT count(*) FROM before AS b
                                WHERE b IS NOT DISTINCT FROM r) = 1) AS unchanged
  FROM streamforge.results AS r WHERE pipeline = 'rs';
SELECT window_name, key, window_start, window_end, count, sum, seq
  FROM streamforge.results WHERE pipeline = 'rs' ORDER BY window_start, key;

SELECT streamforge.drop_pipeline('rs');

-- ------------------------------------------------------------------------
-- Final rows rebuilt from remembered events; seqs across definition changes
-- ------------------------------------------------------------------------
-- Final rows rebuilt from remembered events, and seqs across definition
-- changes in the emit modes with final changes (issue 40 items 4 and 9).
--
-- 4. docs/semantics.md: an event is late when event_time + lateness <
--    watermark, a bucket is finalized when watermark > end + lateness; so
--    with lateness 4 an event at 1 is late at watermark 13 although
--    [0,10) is finalized only at 15.  It is never counted (late_events()
--    has it), and the rows that resync_outputs, restore and
--    configure_outputs(backfill => true) rebuild from the remembered
--    events must not count it either (docs/outputs.md: the table then
--    holds what it would hold had the outputs been on from the start).
\c -
\set VERBOSITY default
\set VERBOSITY default
SELECT streamforge.create_pipeline(p, ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10), streamforge.sliding('s', 10, 5),
          streamforge.session('g', 3)], lateness => 4)
  FROM unnest(ARRAY['s5r_on', 's5r_bf']) AS p;
SELECT streamforge.configure_outputs('s5r_on');
SELECT count(*) FROM unnest(ARRAY['s5r_on', 's5r_bf']) AS p,
  streamforge.ingest_batch(p, ARRAY[
    ROW('p', 0, 'e0', 'k', 1, 1), ROW('p', 1, 'e1', 'k', 6, 2)]::streamforge.delivery[]);
SELECT count(*) FROM unnest(ARRAY['s5r_on', 's5r_bf']) AS p, streamforge.advance(p, 'p', 13);
-- late, no change; [0,10) (and the session [6,9) and the sliding [0,10)
-- and [5,15)) are still live
SELECT count(*) FROM unnest(ARRAY['s5r_on', 's5r_bf']) AS p,
  streamforge.ingest(p, 'p', 2, 'late', 'k', 1, 100);
SELECT p, event_id, event_time FROM unnest(ARRAY['s5r_on', 's5r_bf']) AS p,
  streamforge.late_events(p) ORDER BY 1;
SELECT window_name, window_start, window_end, count, sum
  FROM streamforge.live('s5r_on') ORDER BY 1, 2;
SELECT count(*) FROM unnest(ARRAY['s5r_on', 's5r_bf']) AS p,
  streamforge.ingest(p, 'p', 3, 'e3', 'k', 30, 4);
-- every bucket of the late event's time is finalized now (20 > 10 + 4)
SELECT count(*) FROM unnest(ARRAY['s5r_on', 's5r_bf']) AS p, streamforge.advance(p, 'p', 20);
CREATE TABLE res_on AS
SELECT window_name, key, window_start, window_end, count, sum, min, max, final
  FROM streamforge.results WHERE pipeline = 's5r_on';
SELECT window_name, window_start, window_end, count, sum, final
  FROM res_on ORDER BY 1, 3;
-- (a) backfill: the twin's results rows, the late event left out
SELECT streamforge.configure_outputs('s5r_bf', backfill => true);
SELECT window_name, window_start, window_end, count, sum, final
  FROM streamforge.results WHERE pipeline = 's5r_bf' ORDER BY 1, 3;
CREATE FUNCTION diff(pl text) RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM (
    (SELECT window_name, key, window_start, window_end, count, sum, min, max, final
       FROM streamforge.results WHERE pipeline = pl
     EXCEPT SELECT * FROM res_on)
    UNION ALL
    (SELECT * FROM res_on
     EXCEPT SELECT window_name, key, window_start, window_end, count, sum, min, max, final
       FROM streamforge.results WHERE pipeline = pl)) AS d $$;
SELECT diff('s5r_bf') AS differences;
-- (b) resync after the changelog was trimmed: the final rows come from the
-- remembered events
CREATE TABLE cp AS SELECT streamforge.checkpoint('s5r_on') AS c;
SELECT streamforge.trim_changelog('s5r_on', 1000) AS trimmed;
SELECT streamforge.resync_outputs('s5r_on');
SELECT diff('s5r_on') AS differences;
SELECT window_name, window_start, window_end, count, sum, final
  FROM streamforge.results WHERE pipeline = 's5r_on' AND window_start < 20 ORDER BY 1, 3;
-- (c) restore of the checkpoint into a pipeline that went on: its rows
-- come back, the late event still left out
SELECT count(*) FROM streamforge.ingest('s5r_on', 'p', 4, 'e4', 'k', 41, 7);
SELECT count(*) FROM streamforge.advance('s5r_on', 'p', 80);
SELECT streamforge.trim_changelog('s5r_on', 1000) AS trimmed;
SELECT streamforge.restore('s5r_on', (SELECT c FROM cp));
SELECT diff('s5r_on') AS differences;
-- and in a new backend, a resync again
\c -
SELECT streamforge.resync_outputs('s5r_on');
SELECT diff('s5r_on') AS differences;
-- (d) the row of [0,10) itself rebuilt: a lateness raise to 11 (the most
-- the late event allows: 1 + 11 < 13) brings it back, an event changes
-- it, the lower lateness finalizes it again; once those changes are
-- trimmed, the restore derives [0,10)'s row (and the sliding and session
-- rows around it) from the remembered events, the late one left out
SELECT count(*) FROM streamforge.set_lateness('s5r_on', 12);
SELECT count(*) FROM streamforge.set_lateness('s5r_on', 11);
SELECT op, window_name, window_start, count, sum
  FROM streamforge.ingest('s5r_on', 'p', 4, 'e4', 'k', 9, 9) ORDER BY seq;
SELECT count(*) FROM streamforge.set_lateness('s5r_on', 4);
SELECT window_name, window_start, window_end, count, sum, final
  FROM streamforge.results WHERE pipeline = 's5r_on' AND window_start < 20 ORDER BY 1, 3;
SELECT streamforge.trim_changelog('s5r_on', 1000) > 0 AS trimmed;
SELECT streamforge.restore('s5r_on', (SELECT c FROM cp));
SELECT diff('s5r_on') AS differences;
SELECT window_name, window_start, window_end, count, sum, final
  FROM streamforge.results WHERE pipeline = 's5r_on' AND window_start < 20 ORDER BY 1, 3;
SELECT streamforge.drop_pipeline(p) FROM unnest(ARRAY['s5r_on', 's5r_bf']) AS p;

-- 9. docs/semantics.md (emit modes): a final change "is numbered by seq
-- like every change".  Definition changes (set_lateness, add_window,
-- set_out_of_orderness, drop_window, add_partition, set_idle_timeout) in
-- 'final' and 'update+final' mode: the seqs the calls return, the
-- changelog's and changes_emitted run on 1..n, none skipped or reused.
-- A twin in 'update' mode (s5d) runs the same calls.
CREATE TABLE got (pipeline text, step text, seq bigint, op text);
SELECT streamforge.create_pipeline(p, ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('w', 10), streamforge.session('s', 3)], lateness => 5,
    emit => m)
  FROM (VALUES ('s5f', 'final'), ('s5u', 'update+final'), ('s5d', 'update')) AS v(p, m);
SELECT streamforge.configure_outputs(p) FROM unnest(ARRAY['s5f', 's5u', 's5d']) AS p;
INSERT INTO got SELECT p, '1 ingest', c.seq, c.op FROM unnest(ARRAY['s5f', 's5u', 's5d']) AS p,
  streamforge.ingest_batch(p, ARRAY(SELECT ROW(CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END,
      i / 2, 'e' || i, 'k' || (i % 2), i * 3, i)::streamforge.delivery
    FROM generate_series(0, 9) AS i)) AS c;
INSERT INTO got SELECT p, '2 advance', c.seq, c.op FROM unnest(ARRAY['s5f', 's5u', 's5d']) AS p,
  LATERAL (SELECT * FROM streamforge.advance(p, 'a', 22) UNION ALL
           SELECT * FROM streamforge.advance(p, 'b', 22)) AS c;
INSERT INTO got SELECT p, '3 set_lateness', c.seq, c.op FROM unnest(ARRAY['s5f', 's5u', 's5d']) AS p,
  streamforge.set_lateness(p, 2) AS c;
\c -
INSERT INTO got SELECT p, '4 after set_lateness', c.seq, c.op FROM unnest(ARRAY['s5f', 's5u', 's5d']) AS p,
  LATERAL (SELECT * FROM streamforge.advance(p, 'a', 35) UNION ALL
           SELECT * FROM streamforge.advance(p, 'b', 35)) AS c;
INSERT INTO got SELECT p, '5 add_window', c.seq, c.op FROM unnest(ARRAY['s5f', 's5u', 's5d']) AS p,
  streamforge.add_window(p, streamforge.fixed('w2', 20)) AS c;
INSERT INTO got SELECT p, '6 after add_window', c.seq, c.op FROM unnest(ARRAY['s5f', 's5u', 's5d']) AS p,
  LATERAL (SELECT * FROM streamforge.ingest(p, 'a', 5, 'x1', 'k0', 40, 1) UNION ALL
           SELECT * FROM streamforge.advance(p, 'a', 60) UNION ALL
           SELECT * FROM streamforge.advance(p, 'b', 60)) AS c;
SELECT count(*) FROM unnest(ARRAY['s5f', 's5u', 's5d']) AS p,
  streamforge.set_out_of_orderness(p, 1);
INSERT INTO got SELECT p, '7 after set_out_of_orderness', c.seq, c.op
  FROM unnest(ARRAY['s5f', 's5u', 's5d']) AS p,
  LATERAL (SELECT * FROM streamforge.ingest(p, 'a', 6, 'x2', 'k0', 70, 1) UNION ALL
           SELECT * FROM streamforge.ingest(p, 'b', 5, 'x3', 'k1', 75, 1) UNION ALL
           SELECT * FROM streamforge.advance(p, 'a', 90) UNION ALL
           SELECT * FROM streamforge.advance(p, 'b', 90)) AS c;
INSERT INTO got SELECT p, '8 drop_window', c.seq, c.op FROM unnest(ARRAY['s5f', 's5u', 's5d']) AS p,
  streamforge.drop_window(p, 'w2') AS c;
INSERT INTO got SELECT p, '9 add_partition', c.seq, c.op FROM unnest(ARRAY['s5f', 's5u', 's5d']) AS p,
  streamforge.add_partition(p, 'c') AS c;
SELECT count(*) FROM unnest(ARRAY['s5f', 's5u', 's5d']) AS p,
  streamforge.set_idle_timeout(p, interval '1 day');
\c -
INSERT INTO got SELECT p, '10 after the last changes', c.seq, c.op
  FROM unnest(ARRAY['s5f', 's5u', 's5d']) AS p,
  LATERAL (SELECT * FROM streamforge.ingest(p, 'a', 7, 'x4', 'k0', 95, 1) UNION ALL
           SELECT * FROM streamforge.advance(p, 'a', 120) UNION ALL
           SELECT * FROM streamforge.advance(p, 'b', 120) UNION ALL
           SELECT * FROM streamforge.advance(p, 'c', 120)) AS c;
SELECT pipeline, step, min(seq), max(seq), count(*),
       string_agg(DISTINCT op, ',' ORDER BY op) AS ops
  FROM got GROUP BY 1, 2 ORDER BY 1, 3;
-- no seq skipped or reused: what the calls returned, the changelog, the count
SELECT pipeline, count(*) AS changes, count(DISTINCT seq) AS distinct_seqs,
       min(seq), max(seq) FROM got GROUP BY 1 ORDER BY 1;
SELECT pipeline, count(*) AS changes, count(DISTINCT seq) AS distinct_seqs,
       min(seq), max(seq) FROM streamforge.changelog
 WHERE pipeline IN ('s5f', 's5u', 's5d') GROUP BY 1 ORDER BY 1;
SELECT count(*) AS mismatched FROM got g
  FULL JOIN (SELECT pipeline, seq, op FROM streamforge.changelog
              WHERE pipeline IN ('s5f', 's5u', 's5d')) AS c USING (pipeline, seq)
 WHERE g.op IS DISTINCT FROM c.op;
SELECT name, changes_emitted FROM streamforge.pipeline_info
 WHERE name IN ('s5f', 's5u', 's5d') ORDER BY 1;
SELECT streamforge.drop_pipeline(p) FROM unnest(ARRAY['s5f', 's5u', 's5d']) AS p;
DROP TABLE got, res_on, cp;
DROP FUNCTION diff(text);

-- ------------------------------------------------------------------------
-- Rows rebuilt at the finalization boundary
-- ------------------------------------------------------------------------
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
\c -
\set VERBOSITY default
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
