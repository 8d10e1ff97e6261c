-- restore() replaces a pipeline's state; resync_outputs() then brings its
-- outputs back in line (docs/outputs.md): the changelog and late output
-- are cut back to the restored seq and late_seq, and the results rebuilt.
\set VERBOSITY sqlstate

SELECT streamforge.create_pipeline('out_r', ARRAY['a'],
    ARRAY[streamforge.fixed('f', 10)], 10);
SELECT streamforge.configure_outputs('out_r');
SELECT count(*) FROM streamforge.ingest('out_r', 'a', 0, 'e0', 'k', 1, 5);
SELECT count(*) FROM streamforge.advance('out_r', 'a', 20);
CREATE TEMP TABLE cp AS SELECT streamforge.checkpoint('out_r') AS c;

-- after the checkpoint: new windows, finalization, a late event
SELECT count(*) FROM streamforge.ingest('out_r', 'a', 1, 'e1', 'k', 12, 7);
SELECT count(*) FROM streamforge.ingest('out_r', 'a', 2, 'e2', 'k', 25, 1);
SELECT count(*) FROM streamforge.advance('out_r', 'a', 40);
SELECT count(*) FROM streamforge.ingest('out_r', 'a', 3, 'e3', 'k', 2, 1);
SELECT seq, op, window_start, count FROM streamforge.changelog
 WHERE pipeline = 'out_r' ORDER BY seq;
SELECT late_seq, event_id FROM streamforge.late_output WHERE pipeline = 'out_r';

-- back to the checkpoint: restore() resynchronizes the outputs in the same
-- transaction, so the changelog never holds a seq the pipeline emits again
SELECT streamforge.restore('out_r', (SELECT c FROM cp));
SELECT seq, op, window_start, count FROM streamforge.changelog
 WHERE pipeline = 'out_r' ORDER BY seq;
SELECT count(*) AS late_rows FROM streamforge.late_output WHERE pipeline = 'out_r';
SELECT window_start, count, sum, seq FROM streamforge.results
 WHERE pipeline = 'out_r' ORDER BY window_start;

-- and the pipeline goes on from there
SELECT * FROM streamforge.ingest('out_r', 'a', 1, 'e9', 'k', 15, 9);
SELECT seq, op, window_start, count FROM streamforge.changelog
 WHERE pipeline = 'out_r' ORDER BY seq;
SELECT window_start, count, sum, seq FROM streamforge.results
 WHERE pipeline = 'out_r' ORDER BY window_start;

-- resync_outputs() can be called by hand too; it changes nothing now
SELECT streamforge.resync_outputs('out_r');
SELECT seq, op, window_start, count FROM streamforge.changelog
 WHERE pipeline = 'out_r' ORDER BY seq;

-- without the changelog, the rows touched after the checkpoint are rebuilt
-- from visible(); the others keep their seq
SELECT streamforge.configure_outputs('out_r', changelog => false);
SELECT streamforge.restore('out_r', (SELECT c FROM cp));
SELECT window_start, count, sum, seq FROM streamforge.results
 WHERE pipeline = 'out_r' ORDER BY window_start;

SELECT streamforge.resync_outputs(NULL);
SELECT streamforge.resync_outputs('out_nope');
SELECT streamforge.drop_pipeline('out_r');
