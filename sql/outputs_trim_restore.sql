-- trim_changelog, then restore() to a checkpoint taken before a lateness
-- raise and lower (issue 21): the finalized results rows the raise brought
-- back, and the lower finalized again, are rebuilt although the changelog
-- rows that reported them at the checkpoint are trimmed.
\set VERBOSITY sqlstate

SELECT streamforge.create_pipeline('otr', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], 0);
SELECT streamforge.configure_outputs('otr');
SELECT count(*) FROM streamforge.ingest('otr', 'p', 0, 'e0', 'k', 1, 1);
SELECT count(*) FROM streamforge.advance('otr', 'p', 20);   -- [0,10) final
SELECT count(*) FROM streamforge.ingest('otr', 'p', 1, 'e1', 'k', 25, 2);
CREATE TEMP TABLE cp AS SELECT streamforge.checkpoint('otr') AS c;
SELECT window_start, count, sum, seq FROM streamforge.results
 WHERE pipeline = 'otr' ORDER BY window_start;
SELECT count(*) FROM streamforge.set_lateness('otr', 50);  -- brings [0,10) back
SELECT count(*) FROM streamforge.ingest('otr', 'p', 2, 'e2', 'k', 3, 4);
SELECT count(*) FROM streamforge.set_lateness('otr', 0);   -- final again
SELECT window_start, count, sum, seq FROM streamforge.results
 WHERE pipeline = 'otr' ORDER BY window_start;
SELECT streamforge.trim_changelog('otr', 1000);
SELECT streamforge.restore('otr', (SELECT c FROM cp));
SELECT window_start, count, sum, seq FROM streamforge.results
 WHERE pipeline = 'otr' ORDER BY window_start;
SELECT streamforge.drop_pipeline('otr');

-- Several windows (fixed, sliding, session) and keys, with a retention
-- whose horizon forgets nothing yet: every results row of the checkpoint
-- comes back as it was, whatever was trimmed, and with the changelog off.
SELECT streamforge.create_pipeline('otr2', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10), streamforge.sliding('s', 20, 10),
          streamforge.session('g', 5)], 0, retention => 1000);
SELECT streamforge.configure_outputs('otr2');
SELECT count(*) FROM streamforge.ingest_batch('otr2', ARRAY[
    ROW('p', 0, 'a1', 'a', 1, 1), ROW('p', 1, 'a2', 'a', 3, 2),
    ROW('p', 2, 'b1', 'b', 12, 3), ROW('p', 3, 'b2', 'b', 31, 4),
    ROW('p', 4, 'a3', 'a', 44, 5)]::streamforge.delivery[]);
SELECT count(*) FROM streamforge.advance('otr2', 'p', 60);
SELECT count(*) FROM streamforge.ingest('otr2', 'p', 5, 'a4', 'a', 65, 6);
CREATE TEMP TABLE cp2 AS SELECT streamforge.checkpoint('otr2') AS c;
CREATE TEMP TABLE res2 AS
SELECT window_name, key, window_start, window_end, count, sum, min, max
  FROM streamforge.results WHERE pipeline = 'otr2';
SELECT window_name, key, window_start, window_end, count, sum, seq
  FROM streamforge.results WHERE pipeline = 'otr2' ORDER BY 1, 2, 3;
SELECT (streamforge.stats('otr2')).changes_emitted AS checkpoint_seq;
-- a raise brings every finalized row back; new events change some (and
-- merge sessions: b [12,17) and [31,36) are retracted); the lower
-- finalizes them again
SELECT count(*) FROM streamforge.set_lateness('otr2', 100);
SELECT count(*) FROM streamforge.ingest_batch('otr2', ARRAY[
    ROW('p', 6, 'a5', 'a', 2, 10), ROW('p', 7, 'b3', 'b', 14, 20),
    ROW('p', 8, 'b4', 'b', 33, 30)]::streamforge.delivery[]);
SELECT count(*) FROM streamforge.set_lateness('otr2', 0);
SELECT count(*) AS changed_rows FROM (
    SELECT window_name, key, window_start, window_end, count, sum, min, max
      FROM streamforge.results WHERE pipeline = 'otr2'
    EXCEPT SELECT * FROM res2) AS d;
-- the checkpoint's results rows against the table's after a restore
CREATE FUNCTION pg_temp.res2_diff() RETURNS TABLE (side text, window_name text,
    key text, window_start bigint, window_end bigint, count bigint)
LANGUAGE sql AS $$
    (SELECT 'missing', window_name, key, window_start, window_end, count
       FROM (SELECT * FROM res2 EXCEPT
             SELECT window_name, key, window_start, window_end, count, sum, min, max
               FROM streamforge.results WHERE pipeline = 'otr2') AS m)
    UNION ALL
    (SELECT 'extra', window_name, key, window_start, window_end, count
       FROM (SELECT window_name, key, window_start, window_end, count, sum, min, max
               FROM streamforge.results WHERE pipeline = 'otr2'
             EXCEPT SELECT * FROM res2) AS e)
    ORDER BY 1, 2, 3, 4
$$;

-- trimmed up to the checkpoint's seq: the rows past it are still there
BEGIN;
SELECT streamforge.trim_changelog('otr2', 16);
SELECT streamforge.restore('otr2', (SELECT c FROM cp2));
SELECT * FROM pg_temp.res2_diff();
ROLLBACK;

-- trimmed past the end: nothing of the changelog left
BEGIN;
SELECT streamforge.trim_changelog('otr2', 1000) > 0 AS trimmed;
SELECT streamforge.restore('otr2', (SELECT c FROM cp2));
SELECT * FROM pg_temp.res2_diff();
SELECT count(*) AS seq_null FROM streamforge.results
 WHERE pipeline = 'otr2' AND seq IS NULL;
ROLLBACK;

-- the changelog off: nothing to reset the rows to, derived all the same
BEGIN;
SELECT streamforge.configure_outputs('otr2', changelog => false);
SELECT streamforge.restore('otr2', (SELECT c FROM cp2));
SELECT * FROM pg_temp.res2_diff();
ROLLBACK;

-- nothing trimmed: the changelog gives every row with its seq, as before
BEGIN;
SELECT streamforge.restore('otr2', (SELECT c FROM cp2));
SELECT * FROM pg_temp.res2_diff();
SELECT count(*) AS seq_null FROM streamforge.results
 WHERE pipeline = 'otr2' AND seq IS NULL;
ROLLBACK;

-- trim_late_output and a late event past the checkpoint: the late rows
-- past the restored late_seq go, the results stay right
BEGIN;
SELECT count(*) FROM streamforge.ingest('otr2', 'p', 9, 'late', 'a', 1, 99);
SELECT streamforge.trim_late_output('otr2', 1000);
SELECT streamforge.trim_changelog('otr2', 1000) > 0 AS trimmed;
SELECT streamforge.restore('otr2', (SELECT c FROM cp2));
SELECT * FROM pg_temp.res2_diff();
SELECT count(*) AS late_rows FROM streamforge.late_output WHERE pipeline = 'otr2';
ROLLBACK;

-- the internal function is the extension owner's only
CREATE ROLE regress_sf_otr;
SET ROLE regress_sf_otr;
SELECT * FROM streamforge_internal.final_rows('otr2', NULL, NULL, NULL, NULL);
RESET ROLE;
DROP ROLE regress_sf_otr;
-- and checks its arguments
SELECT * FROM streamforge_internal.final_rows('otr2', ARRAY['w'], ARRAY[]::text[],
    NULL, NULL);
SELECT * FROM streamforge_internal.final_rows('otr2', ARRAY['w'], ARRAY[NULL],
    ARRAY[0], ARRAY[10]);
SELECT * FROM streamforge_internal.final_rows(NULL, NULL, NULL, NULL, NULL);
SELECT * FROM streamforge_internal.final_rows('otr2', ARRAY['nope', 'w', 'w'],
    ARRAY['a', 'a', 'zz'], ARRAY[0, 60, 0], ARRAY[10, 70, 10]);
SELECT streamforge.drop_pipeline('otr2');
