--
-- Metamorphic test: splitting a stream across transactions and sessions
-- changes nothing (docs/semantics.md "Transactions").
--
-- Run "single" applies all generated operations in one transaction.  Then
-- the pipeline is dropped and created again, and run "chunked" applies the
-- same operations in random chunks, one transaction each (a procedure
-- COMMITs between chunks; a quarter of the chunks are first applied and
-- rolled back), across two reconnections, in separate top-level
-- statements, a rolled-back transaction block and a ROLLBACK TO SAVEPOINT.
-- Every outcome and change (seq included), the final state and the
-- checkpoint bytes must equal those of the single run.
--
\set ECHO none
\i test/model/model.sql
\i test/model/twins.sql
\set ECHO all
\x on

DO $$ BEGIN
    PERFORM setseed(0.91);
    PERFORM sfm.define('t1', ARRAY['p1', 'p2', 'p3'],
        '[["fixed","f",5],["sliding","s",7,3],["session","g",4]]', 4,
        ARRAY['a', 'b', 'c']);
    PERFORM sfm.gen('t1', 600, -150, p_idle => 0.05);
END $$;

-- run "single": one transaction
SELECT sfm.create('random_txn', 't1');
SELECT sfm.apply_range('t1', 'random_txn', 'single', 1, 600);
SELECT sfm.snapshot('random_txn', 'single');
SELECT streamforge.drop_pipeline('random_txn');

-- run "chunked"
SELECT sfm.create('random_txn', 't1');
DO $$ BEGIN PERFORM setseed(0.92); END $$;
CALL sfm.apply_chunked('t1', 'random_txn', 'chunked', 1, 250, 15);
\c -
SET client_min_messages = warning;
DO $$ BEGIN PERFORM setseed(0.93); END $$;
CALL sfm.apply_chunked('t1', 'random_txn', 'chunked', 251, 450, 30);
BEGIN;
SELECT sfm.apply_range('t1', 'random_txn', 'chunked', 451, 500);
ROLLBACK;
SELECT sfm.apply_range('t1', 'random_txn', 'chunked', 451, 480);
SELECT sfm.apply_range('t1', 'random_txn', 'chunked', 481, 500);
\c -
SET client_min_messages = warning;
BEGIN;
SELECT sfm.apply_range('t1', 'random_txn', 'chunked', 501, 540);
SAVEPOINT s;
SELECT sfm.apply_range('t1', 'random_txn', 'chunked', 541, 580);
ROLLBACK TO SAVEPOINT s;
SELECT sfm.apply_range('t1', 'random_txn', 'chunked', 541, 600);
COMMIT;
SELECT sfm.snapshot('random_txn', 'chunked');
SELECT * FROM sfm.compare_runs('t1', 'chunked', 'single');

\x off
SELECT streamforge.drop_pipeline('random_txn');
DROP SCHEMA sfm CASCADE;
