-- Trimming the outputs (docs/outputs.md, "Trimming"): consumers' rows of
-- the changelog up to a seq, of the late output up to a late_seq; with
-- results_retention, the final results rows older than the retention
-- horizon.  A trim takes the admin privilege; nothing trimmed comes back.
\set VERBOSITY sqlstate

SELECT streamforge.create_pipeline('tr', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], 5);
SELECT streamforge.configure_outputs('tr');
SELECT count(*) FROM streamforge.advance('tr', 'p', 0);
SELECT count(*) FROM streamforge.ingest('tr', 'p', 0, 'e0', 'k', 1, 1);
SELECT count(*) FROM streamforge.advance('tr', 'p', 10);
SELECT count(*) FROM streamforge.ingest('tr', 'p', 1, 'e1', 'k', 2, 2);  -- late
SELECT count(*) FROM streamforge.advance('tr', 'p', 30);
SELECT count(*) FROM streamforge.ingest('tr', 'p', 2, 'e2', 'k', 3, 3);  -- late
SELECT count(*) FROM streamforge.ingest('tr', 'p', 3, 'e3', 'k', 4, 4);  -- late
CREATE TEMP TABLE cp AS SELECT streamforge.checkpoint('tr') AS c;
SELECT seq, op, window_start, count FROM streamforge.changelog
 WHERE pipeline = 'tr' ORDER BY seq;
SELECT late_seq, event_id FROM streamforge.late_output
 WHERE pipeline = 'tr' ORDER BY late_seq;

-- the privilege: admin.  read and ingest may not trim (42501)
CREATE ROLE regress_sf_trim_reader;
CREATE ROLE regress_sf_trim_ingester;
CREATE ROLE regress_sf_trim_admin;
GRANT USAGE ON SCHEMA streamforge TO regress_sf_trim_reader,
    regress_sf_trim_ingester, regress_sf_trim_admin;
SELECT streamforge.grant('tr', 'regress_sf_trim_reader', 'read');
SELECT streamforge.grant('tr', 'regress_sf_trim_ingester', 'ingest');
SELECT streamforge.grant('tr', 'regress_sf_trim_admin', 'admin');
SET ROLE regress_sf_trim_reader;
SELECT count(*) AS readable FROM streamforge.changelog WHERE pipeline = 'tr';
SELECT streamforge.trim_changelog('tr', 100);
SELECT streamforge.trim_late_output('tr', 100);
SELECT streamforge.trim_results('tr');
-- and not by writing the tables either
DELETE FROM streamforge.changelog WHERE pipeline = 'tr';
RESET ROLE;
SET ROLE regress_sf_trim_ingester;
SELECT streamforge.trim_changelog('tr', 100);
SELECT streamforge.trim_late_output('tr', 100);
RESET ROLE;
SELECT count(*) AS changelog_rows FROM streamforge.changelog WHERE pipeline = 'tr';

-- an admin trims what every consumer has read: the rows up to the number
SET ROLE regress_sf_trim_admin;
SELECT streamforge.trim_changelog('tr', 2);
SELECT streamforge.trim_changelog('tr', 2);    -- again: nothing left to trim
SELECT streamforge.trim_late_output('tr', 1);
RESET ROLE;
SELECT seq FROM streamforge.changelog WHERE pipeline = 'tr' ORDER BY seq;
SELECT late_seq FROM streamforge.late_output WHERE pipeline = 'tr' ORDER BY late_seq;

-- new rows go on with the next numbers; a consumer polling seq > last
-- seen sees no difference
SELECT count(*) FROM streamforge.ingest('tr', 'p', 4, 'e4', 'k', 25, 5);
SELECT count(*) FROM streamforge.advance('tr', 'p', 40);
SELECT seq, op, window_start FROM streamforge.changelog WHERE pipeline = 'tr' ORDER BY seq;

-- nothing trimmed comes back: not by resync_outputs(), not by restore()
SELECT streamforge.resync_outputs('tr');
SELECT streamforge.restore('tr', (SELECT c FROM cp));
SELECT seq FROM streamforge.changelog WHERE pipeline = 'tr' ORDER BY seq;
SELECT late_seq FROM streamforge.late_output WHERE pipeline = 'tr' ORDER BY late_seq;
-- the rows past the checkpoint are gone, the trimmed ones stay gone
SELECT (streamforge.stats('tr')).changes_emitted,
       (streamforge.stats('tr')).late_events;

-- trimming everything, and past the end, is fine
SELECT streamforge.trim_changelog('tr', 9223372036854775807);
SELECT streamforge.trim_late_output('tr', -1);
SELECT count(*) FROM streamforge.changelog WHERE pipeline = 'tr';

-- no bound (0.3.0): up to the slowest registered consumer, so nothing
-- here (sql/consumers.sql)
SELECT streamforge.trim_changelog('tr', NULL);
SELECT streamforge.trim_late_output('tr');

-- errors
SELECT streamforge.trim_changelog(NULL, 1);
SELECT streamforge.trim_changelog('tr_nope', 1);
SELECT streamforge.trim_results('tr_nope');
SELECT streamforge.trim_results(NULL);
SELECT streamforge.configure_outputs('tr', results_retention => NULL);

-- Results retention.  The results table keeps final rows for good unless
-- results_retention is on; then the rows whose window ended at or before
-- the horizon H = watermark - lateness - retention are dropped.  Without a
-- retention (NULL) there is no horizon and nothing is dropped.
SELECT streamforge.create_pipeline('trr', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10), streamforge.sliding('s', 20, 10)], 5);
SELECT streamforge.configure_outputs('trr', results_retention => true);
SELECT results_retention FROM streamforge.output_config WHERE pipeline = 'trr';
SELECT count(*) FROM streamforge.advance('trr', 'p', 0);
SELECT count(*) FROM streamforge.ingest_batch('trr', ARRAY[
    ROW('p', 0, 'a', 'k', 1, 1), ROW('p', 1, 'b', 'k', 15, 2),
    ROW('p', 2, 'c', 'k', 25, 3), ROW('p', 3, 'd', 'k', 35, 4)]::streamforge.delivery[]);
SELECT count(*) FROM streamforge.advance('trr', 'p', 50);
SELECT streamforge.trim_results('trr');
SELECT window_name, window_start, window_end, count FROM streamforge.results
 WHERE pipeline = 'trr' ORDER BY 1, 2;

-- A retention is fixed at create_pipeline(..., retention => N) so far;
-- this test gives trr one by hand, in a transaction rolled back at the
-- end, and has the pipeline rebuilt under it (a new version and snapshot
-- version: the next call replays its history under retention 20, which
-- forgets what that horizon forgets, as a pipeline created with it would
-- have).  retention 20, lateness 5, watermark 50: H = 25.
BEGIN;
UPDATE streamforge.pipeline
   SET definition = jsonb_set(definition, '{retention}', '20'),
       version = version + 1, snapshot_version = version + 1
 WHERE name = 'trr';
-- a reader may not trim; an admin may, and it drops windows ending <= 25
SAVEPOINT s;
SET ROLE regress_sf_trim_reader;
SELECT streamforge.trim_results('trr');
ROLLBACK TO s;
RESET ROLE;
SELECT streamforge.trim_results('trr');
SELECT window_name, window_start, window_end, count FROM streamforge.results
 WHERE pipeline = 'trr' ORDER BY 1, 2;
CREATE TEMP TABLE cp2 AS SELECT streamforge.checkpoint('trr') AS c;
-- the sink trims after each write call that writes results (from the
-- advance to 60 on, H = 35)
SELECT count(*) FROM streamforge.ingest('trr', 'p', 4, 'e', 'k', 48, 5);
SELECT count(*) FROM streamforge.advance('trr', 'p', 60);
SELECT count(*) FROM streamforge.ingest('trr', 'p', 5, 'f', 'k', 58, 6);
SELECT window_name, window_start, window_end, count FROM streamforge.results
 WHERE pipeline = 'trr' ORDER BY 1, 2;
-- and resync_outputs() or restore() does not bring them back
SELECT streamforge.resync_outputs('trr');
SELECT window_name, window_start, window_end, count FROM streamforge.results
 WHERE pipeline = 'trr' ORDER BY 1, 2;
-- back to watermark 50 (H = 25): the changes since are undone, and s
-- [10,30) and w [20,30), final then too, do not come back
SELECT streamforge.restore('trr', (SELECT c FROM cp2));
SELECT window_name, window_start, window_end, count FROM streamforge.results
 WHERE pipeline = 'trr' ORDER BY 1, 2;
SELECT count(*) FROM streamforge.ingest('trr', 'p', 4, 'e', 'k', 48, 5);
SELECT count(*) FROM streamforge.advance('trr', 'p', 60);
SELECT count(*) FROM streamforge.ingest('trr', 'p', 5, 'f', 'k', 58, 6);
-- results_retention off: nothing is dropped any more
SELECT streamforge.configure_outputs('trr');
SELECT count(*) FROM streamforge.advance('trr', 'p', 100);
SELECT count(*) FROM streamforge.ingest('trr', 'p', 6, 'g', 'k', 96, 7);
SELECT streamforge.trim_results('trr');
SELECT window_name, window_start, window_end, count FROM streamforge.results
 WHERE pipeline = 'trr' ORDER BY 1, 2;
-- a horizon before every window (H = 95 - 9223372036854775807), or none
-- (retention NULL): nothing is dropped
UPDATE streamforge.pipeline SET definition = jsonb_set(definition, '{retention}', '9223372036854775807') WHERE name = 'trr';
SELECT streamforge.configure_outputs('trr', results_retention => true);
SELECT streamforge.trim_results('trr');
UPDATE streamforge.pipeline SET definition = definition - 'retention' WHERE name = 'trr';
SELECT streamforge.trim_results('trr');
SELECT count(*) AS results_rows FROM streamforge.results WHERE pipeline = 'trr';
ROLLBACK;

SELECT streamforge.drop_pipeline('tr');
SELECT streamforge.drop_pipeline('trr');
REVOKE USAGE ON SCHEMA streamforge FROM regress_sf_trim_reader,
    regress_sf_trim_ingester, regress_sf_trim_admin;
DROP ROLE regress_sf_trim_reader, regress_sf_trim_ingester,
    regress_sf_trim_admin;
