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
