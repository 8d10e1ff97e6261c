-- A grant, revoke or set_owner undone by ROLLBACK TO SAVEPOINT is undone
-- for the rest of the transaction too, also for write calls that find the
-- pipeline already locked by the transaction (they trust the cached
-- owner and grants); and so are the other per-pipeline things a
-- subtransaction can change (definition, outputs).
\set SHOW_CONTEXT never
CREATE ROLE regress_sf_sp_bob;
GRANT USAGE ON SCHEMA streamforge TO regress_sf_sp_bob;
SELECT streamforge.create_pipeline('sp', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)]);

-- a grant rolled back: refused
BEGIN;
SELECT count(*) FROM streamforge.ingest('sp', 'p', 0, 'e0', 'k', 1, 1);
SAVEPOINT a;
SELECT streamforge.grant_privilege('sp', 'regress_sf_sp_bob', 'ingest');
ROLLBACK TO SAVEPOINT a;
SET LOCAL ROLE regress_sf_sp_bob;
SELECT count(*) FROM streamforge.ingest('sp', 'p', 1, 'e1', 'k', 2, 1);
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;

-- the same, granted two savepoints deep, released into the outer one that
-- is rolled back: refused
BEGIN;
SELECT count(*) FROM streamforge.ingest('sp', 'p', 0, 'e0', 'k', 1, 1);
SAVEPOINT a;
SAVEPOINT b;
SELECT streamforge.grant_privilege('sp', 'regress_sf_sp_bob', 'ingest');
RELEASE SAVEPOINT b;
ROLLBACK TO SAVEPOINT a;
SET LOCAL ROLE regress_sf_sp_bob;
SELECT count(*) FROM streamforge.ingest('sp', 'p', 1, 'e1', 'k', 2, 1);
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;

-- nested: the outer grant stays when the inner revoke is rolled back, and
-- goes when the outer savepoint is
BEGIN;
SELECT count(*) FROM streamforge.ingest('sp', 'p', 0, 'e0', 'k', 1, 1);
SAVEPOINT a;
SELECT streamforge.grant_privilege('sp', 'regress_sf_sp_bob', 'ingest');
SAVEPOINT b;
SELECT streamforge.revoke_privilege('sp', 'regress_sf_sp_bob', 'ingest');
ROLLBACK TO SAVEPOINT b;
SET LOCAL ROLE regress_sf_sp_bob;
SELECT count(*) FROM streamforge.ingest('sp', 'p', 1, 'e1', 'k', 2, 1);
RESET ROLE;
ROLLBACK TO SAVEPOINT a;
SELECT count(*) FROM streamforge.ingest('sp', 'p', 1, 'e1b', 'k', 2, 1);
SET LOCAL ROLE regress_sf_sp_bob;
SELECT count(*) FROM streamforge.ingest('sp', 'p', 2, 'e2', 'k', 3, 1);
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;

-- a granted savepoint that is released keeps the grant
BEGIN;
SELECT count(*) FROM streamforge.ingest('sp', 'p', 0, 'e0', 'k', 1, 1);
SAVEPOINT a;
SELECT streamforge.grant_privilege('sp', 'regress_sf_sp_bob', 'ingest');
RELEASE SAVEPOINT a;
SET LOCAL ROLE regress_sf_sp_bob;
SELECT count(*) FROM streamforge.ingest('sp', 'p', 1, 'e1', 'k', 2, 1);
ROLLBACK;

-- a revoke rolled back: allowed
SELECT streamforge.grant_privilege('sp', 'regress_sf_sp_bob', 'ingest');
BEGIN;
SELECT count(*) FROM streamforge.ingest('sp', 'p', 0, 'e0', 'k', 1, 1);
SAVEPOINT a;
SELECT streamforge.revoke_privilege('sp', 'regress_sf_sp_bob', 'ingest');
ROLLBACK TO SAVEPOINT a;
SET LOCAL ROLE regress_sf_sp_bob;
SELECT count(*) FROM streamforge.ingest('sp', 'p', 1, 'e1', 'k', 2, 1);
COMMIT;
RESET ROLE;
SELECT consumed_offset FROM streamforge.partitions('sp');

-- a revoke in a PL/pgSQL exception block that fails: allowed
BEGIN;
SELECT count(*) FROM streamforge.ingest('sp', 'p', 2, 'e2', 'k', 3, 1);
DO $$
BEGIN
    PERFORM streamforge.revoke_privilege('sp', 'regress_sf_sp_bob', 'ingest');
    RAISE EXCEPTION 'undo';
EXCEPTION WHEN raise_exception THEN
    NULL;
END
$$;
SET LOCAL ROLE regress_sf_sp_bob;
SELECT count(*) FROM streamforge.ingest('sp', 'p', 3, 'e3', 'k', 4, 1);
ROLLBACK;
SELECT streamforge.revoke_privilege('sp', 'regress_sf_sp_bob', 'ingest');

-- set_owner rolled back: the would-be owner is refused
BEGIN;
SELECT count(*) FROM streamforge.ingest('sp', 'p', 2, 'e2', 'k', 3, 1);
SAVEPOINT a;
SELECT streamforge.set_owner('sp', 'regress_sf_sp_bob');
ROLLBACK TO SAVEPOINT a;
SET LOCAL ROLE regress_sf_sp_bob;
SELECT count(*) FROM streamforge.ingest('sp', 'p', 3, 'e3', 'k', 4, 1);
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;

-- ... and a rolled-back move away from the owner leaves it the owner
SELECT streamforge.set_owner('sp', 'regress_sf_sp_bob');
BEGIN;
SET LOCAL ROLE regress_sf_sp_bob;
SELECT count(*) FROM streamforge.ingest('sp', 'p', 2, 'e2', 'k', 3, 1);
RESET ROLE;
SAVEPOINT a;
SELECT streamforge.set_owner('sp', current_user);
ROLLBACK TO SAVEPOINT a;
SET LOCAL ROLE regress_sf_sp_bob;
SELECT count(*) FROM streamforge.ingest('sp', 'p', 3, 'e3', 'k', 4, 1);
COMMIT;
RESET ROLE;
SELECT streamforge.set_owner('sp', current_user);
SELECT consumed_offset FROM streamforge.partitions('sp');

-- a lateness raised in a rolled-back savepoint: an event behind the
-- watermark is late again
SELECT streamforge.create_pipeline('sl', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)]);
SELECT count(*) FROM streamforge.advance('sl', 'p', 100);
BEGIN;
SELECT count(*) FROM streamforge.ingest('sl', 'p', 0, 'e0', 'k', 200, 1);
SAVEPOINT a;
SELECT count(*) FROM streamforge.set_lateness('sl', 1000);
ROLLBACK TO SAVEPOINT a;
SELECT count(*) FROM streamforge.ingest('sl', 'p', 1, 'e1', 'k', 50, 1);
SELECT late_events FROM streamforge.stats('sl');
COMMIT;
SELECT late_events FROM streamforge.stats('sl');
SELECT event_id FROM streamforge.late_events('sl');
SELECT streamforge.drop_pipeline('sl');

-- outputs configured in a rolled-back savepoint write nothing
BEGIN;
SELECT count(*) FROM streamforge.ingest('sp', 'p', 4, 'e6', 'k', 150, 1);
SAVEPOINT a;
SELECT streamforge.configure_outputs('sp');
ROLLBACK TO SAVEPOINT a;
SELECT count(*) FROM streamforge.ingest('sp', 'p', 5, 'e7', 'k', 160, 1);
SELECT * FROM streamforge.advance('sp', 'p', 200);
COMMIT;
SELECT count(*) AS changelog_rows FROM streamforge.changelog WHERE pipeline = 'sp';
SELECT count(*) AS results_rows FROM streamforge.results WHERE pipeline = 'sp';
-- ... and outputs disabled in one keep writing
SELECT streamforge.configure_outputs('sp');
BEGIN;
SELECT count(*) FROM streamforge.ingest('sp', 'p', 6, 'e8', 'k', 250, 1);
SAVEPOINT a;
SELECT streamforge.disable_outputs('sp');
ROLLBACK TO SAVEPOINT a;
SELECT count(*) FROM streamforge.ingest('sp', 'p', 7, 'e9', 'k', 260, 1);
SELECT * FROM streamforge.advance('sp', 'p', 300);
COMMIT;
SELECT window_start, count, sum FROM streamforge.results WHERE pipeline = 'sp' ORDER BY window_start;

SELECT streamforge.drop_pipeline('sp');
REVOKE USAGE ON SCHEMA streamforge FROM regress_sf_sp_bob;
DROP ROLE regress_sf_sp_bob;
