-- The writers option (issue 46, docs/design/parallel-writers.md, build plan
-- step 1): 'serial' is the default and leaves every document as before
-- (no "writers" key); 'parallel' is accepted since step 4 (its key in the
-- document, a lane per partition); a bad mode is 22023; the lane tables
-- exist, closed.
\set VERBOSITY sqlstate

-- the default and an explicit 'serial': same stored document, no key
SELECT streamforge.create_pipeline('pd_a', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
SELECT streamforge.create_pipeline('pd_b', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    writers => 'serial');
SELECT streamforge.definition('pd_a') = streamforge.definition('pd_b') AS same,
       streamforge.definition('pd_b') ? 'writers' AS has_key;
SELECT name, writers FROM streamforge.pipeline_info WHERE name LIKE 'pd_%' ORDER BY name;
SELECT streamforge.definition_of('x', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    writers => 'serial');
-- the checkpoint has no key either (its bytes are those of 0.3.0)
SELECT position('writers' IN convert_from(substring(streamforge.checkpoint('pd_b') FROM 25),
                                          getdatabaseencoding())) AS ck_key;

-- 'parallel': the key in the document, one lane per partition
SELECT streamforge.create_pipeline('pd_c', ARRAY['p', 'q'], ARRAY[streamforge.fixed('w', 10)],
    writers => 'parallel');
SELECT streamforge.definition_of('pd_c', ARRAY['p', 'q'], ARRAY[streamforge.fixed('w', 10)],
    writers => 'parallel');
SELECT streamforge.definition('pd_c') ->> 'writers' AS writers;
SELECT l.lane, l.partition, l.snapshot IS NULL AS no_snapshot
  FROM streamforge.lane l JOIN streamforge.pipeline p ON p.id = l.pipeline_id
 WHERE p.name = 'pd_c' ORDER BY l.lane;
-- a parallel pipeline's drop acts at commit, so its name stays taken in
-- the transaction that dropped it: creating it again there is 0A000 (not
-- 42710), and nothing changed; rolled back to a savepoint, the drop no
-- longer holds the name; after the commit, the create works
BEGIN;
SELECT streamforge.drop_pipeline('pd_c');
\set VERBOSITY default
SELECT streamforge.create_pipeline('pd_c', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    writers => 'parallel');
\set VERBOSITY sqlstate
ROLLBACK;
BEGIN;
SAVEPOINT s;
SELECT streamforge.drop_pipeline('pd_c');
ROLLBACK TO SAVEPOINT s;
SELECT streamforge.create_pipeline('pd_c', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    writers => 'parallel');
ROLLBACK;
SELECT p.name, count(l.lane) AS lanes
  FROM streamforge.pipeline p JOIN streamforge.lane l ON l.pipeline_id = p.id
 WHERE p.name = 'pd_c' GROUP BY p.name;
SELECT streamforge.drop_pipeline('pd_c');
SELECT streamforge.create_pipeline('pd_c', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    writers => 'parallel');
SELECT streamforge.drop_pipeline('pd_c');
-- an unknown mode, and NULL
SELECT streamforge.create_pipeline('pd_c', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    writers => 'concurrent');
SELECT streamforge.create_pipeline('pd_c', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    writers => NULL);

-- the lane tables: there, empty for serial pipelines, closed to PUBLIC
SELECT count(*) FROM streamforge.lane;
SELECT count(*) FROM streamforge.lane_journal;
SELECT c.relname, has_table_privilege('public', c.oid, 'SELECT') AS public_select
  FROM pg_class c WHERE c.oid IN ('streamforge.lane'::regclass,
                                  'streamforge.lane_journal'::regclass)
 ORDER BY 1;

SELECT streamforge.drop_pipeline(p) FROM unnest(ARRAY['pd_a', 'pd_b']) AS p;
