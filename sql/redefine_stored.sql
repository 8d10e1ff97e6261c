-- A definition change whose new snapshot is large (over 256 kB) stores it
-- in streamforge.stored_snapshot before it takes the pipeline's row lock,
-- and under the lock only sets the row's snapshot to NULL and its
-- snapshot_version to the stored one's (issue 39, item 4;
-- docs/management.md, "The lock a change holds").  Every backend loads
-- the same state from it, the journal after it replays, a compaction or
-- restore puts the snapshot back into the row, a stale stored snapshot is
-- deleted by the next change that stores one, and drop_pipeline deletes
-- them all.  Small snapshots stay in the row (redefine_snapshot).
\set VERBOSITY sqlstate

SELECT streamforge.create_pipeline('rst', ARRAY['p0', 'p1'],
    ARRAY[streamforge.fixed('m', 60), streamforge.session('v', 30)], 100);
SELECT count(*) FROM streamforge.ingest_batch('rst', ARRAY(
    SELECT ROW('p' || (i % 2), i / 2, 'e' || i, 'k' || (i * 7919 % 1000),
               i / 100 + (i * 31 % 50), i % 97)::streamforge.delivery
      FROM generate_series(0, 39999) AS i));
SELECT count(*) FROM unnest(ARRAY['p0', 'p1']) AS p,
       LATERAL streamforge.advance('rst', p, 300);

-- where the pipeline's snapshot is: in its row, stored beside it (for the
-- row's snapshot_version), or none; how many stored snapshots it has; its
-- journal rows (positive positions)
CREATE FUNCTION rst_where() RETURNS TABLE (snapshot text, stored bigint, journal bigint)
LANGUAGE sql AS $$
    SELECT CASE WHEN p.snapshot IS NOT NULL THEN 'row'
                WHEN EXISTS (SELECT 1 FROM streamforge.stored_snapshot AS s
                              WHERE s.pipeline_id = p.id
                                AND s.snapshot_version = p.snapshot_version
                                AND octet_length(s.snapshot) > 256 * 1024)
                THEN 'stored'
                ELSE 'none' END,
           (SELECT count(*) FROM streamforge.stored_snapshot AS s
             WHERE s.pipeline_id = p.id),
           (SELECT count(*) FROM streamforge.journal AS j
             WHERE j.pipeline_id = p.id AND j.pos > 0)
      FROM streamforge.pipeline AS p WHERE p.name = 'rst'
$$;
-- state to compare after reconnecting (\c: a new backend, a cold load)
CREATE TABLE rst_before (step text PRIMARY KEY, c bytea);

SELECT * FROM rst_where();

SELECT count(*) FROM streamforge.add_window('rst', streamforge.fixed('h', 600));
SELECT * FROM rst_where();
INSERT INTO rst_before VALUES ('add_window', streamforge.checkpoint('rst'));
\c
SELECT streamforge.checkpoint('rst') = c AS same_state
  FROM rst_before WHERE step = 'add_window';

-- the next change stores its own and deletes the one it replaces
SELECT count(*) FROM streamforge.set_lateness('rst', 200);
SELECT * FROM rst_where();
INSERT INTO rst_before VALUES ('raise', streamforge.checkpoint('rst'));
\c
SELECT streamforge.checkpoint('rst') = c AS same_state
  FROM rst_before WHERE step = 'raise';

SELECT count(*) FROM streamforge.set_lateness('rst', 100);
SELECT count(*) FROM streamforge.add_partition('rst', 'p2');
SELECT * FROM rst_where();
-- writes after the change: journaled after the stored snapshot
SELECT count(*) FROM streamforge.ingest_batch('rst', ARRAY[
    ROW('p2', 0, 'x1', 'k1', 450, 1), ROW('p1', 20000, 'x2', 'k2', 451, 2)]::streamforge.delivery[]);
SELECT count(*) FROM unnest(ARRAY['p0', 'p1', 'p2']) AS p,
       LATERAL streamforge.advance('rst', p, 460);
SELECT * FROM rst_where();
INSERT INTO rst_before VALUES ('journal', streamforge.checkpoint('rst'));
\c
SELECT streamforge.checkpoint('rst') = c AS same_state
  FROM rst_before WHERE step = 'journal';

-- with a retention (the snapshot is the canonical checkpoint) and an emit mode
SELECT count(*) FROM streamforge.set_retention('rst', 1000000000);
SELECT * FROM rst_where();
SELECT count(*) FROM streamforge.set_emit('rst', 'final');
SELECT * FROM rst_where();
INSERT INTO rst_before VALUES ('emit', streamforge.checkpoint('rst'));
\c
SELECT streamforge.checkpoint('rst') = c AS same_state
  FROM rst_before WHERE step = 'emit';

-- a change rolled back leaves the stored snapshot it had, and no other
BEGIN;
SELECT count(*) FROM streamforge.add_window('rst', streamforge.fixed('d', 120));
SELECT * FROM rst_where();
ROLLBACK;
SELECT * FROM rst_where();
\c
SELECT streamforge.checkpoint('rst') = c AS same_state
  FROM rst_before WHERE step = 'emit';

-- a second change in the transaction (it holds the lock already) builds
-- and writes under the lock, into the row; so does a change with
-- streamforge.redefine_concurrently off.  The stored snapshot is stale then.
BEGIN;
SELECT count(*) FROM streamforge.add_window('rst', streamforge.fixed('d', 120));
SELECT * FROM rst_where();
SELECT count(*) FROM streamforge.drop_window('rst', 'd');
COMMIT;
SELECT * FROM rst_where();
INSERT INTO rst_before VALUES ('locked', streamforge.checkpoint('rst'));
\c
SELECT streamforge.checkpoint('rst') = c AS same_state
  FROM rst_before WHERE step = 'locked';
SET streamforge.redefine_concurrently = off;
SELECT count(*) FROM streamforge.set_lateness('rst', 90);
RESET streamforge.redefine_concurrently;
SELECT * FROM rst_where();
-- the next change that stores one deletes the stale one
SELECT count(*) FROM streamforge.drop_window('rst', 'h');
SELECT * FROM rst_where();

-- a compaction puts the snapshot back into the row
SELECT streamforge.compact('rst', 0);
SELECT * FROM rst_where();
INSERT INTO rst_before VALUES ('compact', streamforge.checkpoint('rst'));
\c
SELECT streamforge.checkpoint('rst') = c AS same_state
  FROM rst_before WHERE step = 'compact';

-- restoring a checkpoint taken from a stored snapshot
SELECT count(*) FROM streamforge.set_lateness('rst', 80);
SELECT * FROM rst_where();
INSERT INTO rst_before VALUES ('restore', streamforge.checkpoint('rst'));
SELECT count(*) FROM streamforge.ingest('rst', 'p2', 1, 'z1', 'k3', 470, 9);
SELECT streamforge.checkpoint('rst') = c AS same_state
  FROM rst_before WHERE step = 'restore';
SELECT streamforge.restore('rst', c) FROM rst_before WHERE step = 'restore';
SELECT * FROM rst_where();
\c
SELECT streamforge.checkpoint('rst') = c AS same_state
  FROM rst_before WHERE step = 'restore';

-- drop_pipeline deletes its stored snapshots
SELECT count(*) FROM streamforge.set_lateness('rst', 70);
SELECT * FROM rst_where();
SELECT id AS rst_id FROM streamforge.pipeline WHERE name = 'rst' \gset
SELECT streamforge.drop_pipeline('rst');
SELECT count(*) FROM streamforge.stored_snapshot WHERE pipeline_id = :rst_id;

DROP TABLE rst_before;
DROP FUNCTION rst_where();
