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
