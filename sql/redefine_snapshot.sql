-- After a definition change the stored snapshot is the one a compaction
-- writes (docs/persistence.md, "Snapshots"; issue 21): binary (magic
-- "SFSNAPB\n") without retention, so a cold load afterwards costs what it
-- costs after a compaction; the canonical checkpoint ("SFCKPT\r\n") with a
-- retention.  A new backend loads it to the same state.
\set VERBOSITY sqlstate

SELECT streamforge.create_pipeline('rds', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10), streamforge.session('g', 5)], 5);
SELECT count(*) FROM streamforge.ingest_batch('rds', ARRAY[
    ROW('p', 0, 'a', 'k', 1, 1), ROW('p', 1, 'b', 'k', 12, 2),
    ROW('p', 2, 'c', 'j', 25, 3), ROW('p', 3, 'a', 'k', 1, 1),
    ROW('p', 4, 'd', 'k', 40, 4)]::streamforge.delivery[]);
SELECT count(*) FROM streamforge.advance('rds', 'p', 30);
SELECT count(*) FROM streamforge.ingest('rds', 'p', 5, 'e', 'k', 2, 5);  -- late

-- the stored snapshot's format marker, and whether the journal is empty
CREATE FUNCTION rds_format() RETURNS TABLE (format text, journal bigint)
LANGUAGE sql AS $$
    SELECT CASE WHEN p.snapshot IS NULL THEN 'none'
           ELSE CASE pg_catalog.substr(p.snapshot, 1, 8)
             WHEN pg_catalog.convert_to(E'SFSNAPB\n', 'UTF8') THEN 'binary'
             WHEN pg_catalog.convert_to(E'SFCKPT\r\n', 'UTF8') THEN 'checkpoint'
             ELSE 'other' END END,
           (SELECT pg_catalog.count(*) FROM streamforge.journal AS j
             WHERE j.pipeline_id = p.id)
      FROM streamforge.pipeline AS p WHERE p.name = 'rds'
$$;
-- state to compare after reconnecting (not temporary: \c ends the session)
CREATE TABLE rds_before (step text PRIMARY KEY, c bytea);

SELECT * FROM rds_format();    -- the snapshot create_pipeline wrote

SELECT count(*) FROM streamforge.add_partition('rds', 'q');
SELECT * FROM rds_format();
INSERT INTO rds_before VALUES ('add_partition', streamforge.checkpoint('rds'));
\c
SELECT streamforge.checkpoint('rds') = c AS same_state
  FROM rds_before WHERE step = 'add_partition';

SELECT count(*) FROM streamforge.add_window('rds', streamforge.sliding('s', 20, 10));
SELECT * FROM rds_format();
INSERT INTO rds_before VALUES ('add_window', streamforge.checkpoint('rds'));
\c
SELECT streamforge.checkpoint('rds') = c AS same_state
  FROM rds_before WHERE step = 'add_window';

SELECT count(*) FROM streamforge.drop_window('rds', 'g');
SELECT * FROM rds_format();
INSERT INTO rds_before VALUES ('drop_window', streamforge.checkpoint('rds'));
\c
SELECT streamforge.checkpoint('rds') = c AS same_state
  FROM rds_before WHERE step = 'drop_window';

SELECT count(*) FROM streamforge.set_lateness('rds', 20);
SELECT * FROM rds_format();
INSERT INTO rds_before VALUES ('raise', streamforge.checkpoint('rds'));
\c
SELECT streamforge.checkpoint('rds') = c AS same_state
  FROM rds_before WHERE step = 'raise';

SELECT count(*) FROM streamforge.set_lateness('rds', 0);
SELECT * FROM rds_format();
INSERT INTO rds_before VALUES ('lower', streamforge.checkpoint('rds'));
\c
SELECT streamforge.checkpoint('rds') = c AS same_state
  FROM rds_before WHERE step = 'lower';
-- and the pipeline goes on from the loaded state, then replays it again
SELECT count(*) FROM streamforge.ingest('rds', 'q', 0, 'f', 'j', 33, 6);
INSERT INTO rds_before VALUES ('journal', streamforge.checkpoint('rds'));
SELECT * FROM rds_format();
\c
SELECT streamforge.checkpoint('rds') = c AS same_state
  FROM rds_before WHERE step = 'journal';

-- with a retention the snapshot is binary too (format 3), as after a
-- compaction; removing the retention keeps it binary
SELECT count(*) FROM streamforge.set_retention('rds', 1000);
SELECT * FROM rds_format();
INSERT INTO rds_before VALUES ('retention', streamforge.checkpoint('rds'));
\c
SELECT streamforge.checkpoint('rds') = c AS same_state
  FROM rds_before WHERE step = 'retention';
SELECT count(*) FROM streamforge.set_retention('rds', NULL);
SELECT * FROM rds_format();
INSERT INTO rds_before VALUES ('no_retention', streamforge.checkpoint('rds'));
\c
SELECT streamforge.checkpoint('rds') = c AS same_state
  FROM rds_before WHERE step = 'no_retention';

-- a change rolled back leaves the snapshot it had
BEGIN;
SELECT count(*) FROM streamforge.set_lateness('rds', 3);
ROLLBACK;
\c
SELECT streamforge.checkpoint('rds') = c AS same_state
  FROM rds_before WHERE step = 'no_retention';

DROP TABLE rds_before;
DROP FUNCTION rds_format();
SELECT streamforge.drop_pipeline('rds');
