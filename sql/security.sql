-- security: privileges on pipelines (docs/security.md).  A pipeline belongs
-- to the role that created it; other roles get read, ingest or admin
-- (each includes the ones before it) with streamforge.grant().  The
-- extension's tables are closed to everybody but the extension's owner.
\set VERBOSITY sqlstate

-- run a statement and undo its effects: 'ok' or the SQLSTATE of its error,
-- plus the current user afterwards (an error inside a call that runs as
-- the extension's owner must leave the caller's identity in place)
CREATE FUNCTION public.sec_try(stmt text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    me name := current_user;
BEGIN
    BEGIN
        EXECUTE stmt;
        RAISE EXCEPTION USING ERRCODE = 'SFOK0';
    EXCEPTION WHEN OTHERS THEN
        RETURN CASE WHEN SQLSTATE = 'SFOK0' THEN 'ok' ELSE SQLSTATE END
            || CASE WHEN current_user <> me
                    THEN ' (now ' || current_user || '!)' ELSE '' END;
    END;
END
$$;

CREATE ROLE regress_sf_sec_alice;
CREATE ROLE regress_sf_sec_bob;
CREATE ROLE regress_sf_sec_carol;
CREATE ROLE regress_sf_sec_team NOLOGIN;
CREATE ROLE regress_sf_sec_member IN ROLE regress_sf_sec_team;
CREATE ROLE regress_sf_sec_noinherit NOINHERIT IN ROLE regress_sf_sec_team;
CREATE ROLE regress_sf_sec_deputy IN ROLE regress_sf_sec_alice;
GRANT USAGE ON SCHEMA streamforge TO regress_sf_sec_alice, regress_sf_sec_bob,
    regress_sf_sec_carol, regress_sf_sec_member, regress_sf_sec_noinherit,
    regress_sf_sec_deputy, regress_sf_sec_team;

-- the tables: nothing for other roles, except SELECT on the outputs (under
-- row-level security) and on the view of the caller's pipelines
SELECT t AS extension_table,
       has_table_privilege('regress_sf_sec_bob', t, 'SELECT') AS sel,
       has_table_privilege('regress_sf_sec_bob', t, 'INSERT') AS ins,
       has_table_privilege('regress_sf_sec_bob', t, 'UPDATE') AS upd,
       has_table_privilege('regress_sf_sec_bob', t, 'DELETE') AS del,
       has_table_privilege('regress_sf_sec_bob', t, 'TRUNCATE') AS trunc,
       c.relrowsecurity AS rls
  FROM unnest(ARRAY['streamforge.pipeline', 'streamforge.journal',
                    'streamforge.output_config', 'streamforge.changelog',
                    'streamforge.results', 'streamforge.late_output',
                    'streamforge.pipelines']) AS t,
       pg_class c
 WHERE c.oid = t::regclass
 ORDER BY t;
SELECT has_sequence_privilege('regress_sf_sec_bob', 'streamforge.pipeline_id_seq',
                              'USAGE') AS seq_usage;

-- a role with nothing but USAGE on the schema creates a pipeline; it owns it
SET ROLE regress_sf_sec_alice;
SELECT streamforge.create_pipeline('sec_p', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('f', 10)], 5);
SELECT * FROM streamforge.ingest('sec_p', 'a', 0, 'e0', 'k', 1, 7);
SELECT * FROM streamforge.advance('sec_p', 'a', 20);
SELECT name, owner, privilege, readers, ingesters, admins
  FROM streamforge.pipelines WHERE name = 'sec_p';
-- the tables stay closed to the owner of a pipeline too
SELECT count(*) FROM streamforge.pipeline;
SELECT count(*) FROM streamforge.journal;
UPDATE streamforge.pipeline SET version = 0;
INSERT INTO streamforge.changelog VALUES ('sec_p', 99, 'upsert', 'f', 'k', 0, 10, 1, 1, 1, 1);
DELETE FROM streamforge.results;
RESET ROLE;
SELECT owner FROM streamforge.pipeline WHERE name = 'sec_p';

-- a checkpoint to restore, readable by everybody
CREATE TABLE public.sec_checkpoint AS
    SELECT streamforge.checkpoint('sec_p') AS cp;
GRANT SELECT ON public.sec_checkpoint TO PUBLIC;

-- every function, by the privilege it needs, for bob with each privilege
CREATE TABLE public.sec_calls (id int, needs text, call text);
GRANT SELECT ON public.sec_calls TO PUBLIC;
INSERT INTO public.sec_calls VALUES
    (1, 'read', $$SELECT streamforge.watermark('sec_p')$$),
    (2, 'read', $$SELECT * FROM streamforge.live('sec_p')$$),
    (3, 'read', $$SELECT * FROM streamforge.visible('sec_p')$$),
    (4, 'read', $$SELECT * FROM streamforge.late_events('sec_p')$$),
    (5, 'read', $$SELECT * FROM streamforge.partitions('sec_p')$$),
    (6, 'read', $$SELECT * FROM streamforge.stats('sec_p')$$),
    (7, 'read', $$SELECT streamforge.checkpoint('sec_p')$$),
    (8, 'read', $$SELECT streamforge.require_privilege('sec_p', 'read')$$),
    (10, 'ingest', $$SELECT * FROM streamforge.ingest('sec_p', 'a', 1, 'e1', 'k', 2, 1)$$),
    (11, 'ingest', $$SELECT * FROM streamforge.ingest_batch('sec_p', ARRAY[ROW('b', 0, 'e2', 'k', 3, 1)]::streamforge.delivery[])$$),
    (12, 'ingest', $$SELECT * FROM streamforge.advance('sec_p', 'b', 30)$$),
    (13, 'ingest', $$SELECT * FROM streamforge.mark_idle('sec_p', 'b')$$),
    (14, 'ingest', $$SELECT * FROM streamforge.advance_to_now('sec_p', 'b')$$),
    (15, 'ingest', $$SELECT * FROM streamforge.ingest('sec_p', 'a', 0, 'e0', 'k', 1, 7)$$),
    (20, 'admin', $$SELECT streamforge.restore('sec_p', (SELECT cp FROM public.sec_checkpoint))$$),
    (21, 'admin', $$SELECT streamforge.drop_pipeline('sec_p')$$),
    (22, 'admin', $$SELECT streamforge.grant('sec_p', 'regress_sf_sec_carol', 'read')$$),
    (23, 'admin', $$SELECT streamforge.revoke('sec_p', 'regress_sf_sec_bob', 'admin')$$),
    (24, 'admin', $$SELECT streamforge.configure_outputs('sec_p')$$),
    (25, 'admin', $$SELECT streamforge.disable_outputs('sec_p')$$),
    (26, 'admin', $$SELECT streamforge.resync_outputs('sec_p')$$),
    (27, 'admin', $$SELECT streamforge.schedule_advance('sec_p', 'a', '* * * * *')$$),
    (28, 'admin', $$SELECT streamforge.unschedule_advance('sec_p', 'a')$$),
    (29, 'admin', $$SELECT streamforge.require_privilege('sec_p', 'admin')$$),
    (30, 'owner', $$SELECT streamforge.set_owner('sec_p', 'regress_sf_sec_alice')$$),
    (31, 'none', $$SELECT streamforge.has_pipeline_privilege('sec_p', 'read')$$),
    (32, 'none', $$SELECT count(*) FROM streamforge.pipelines$$);

CREATE TABLE public.sec_matrix (id int, level text, outcome text);
GRANT INSERT ON public.sec_matrix TO PUBLIC;
SET ROLE regress_sf_sec_bob;
INSERT INTO public.sec_matrix SELECT id, 'none', public.sec_try(call) FROM public.sec_calls;
RESET ROLE;
SELECT streamforge.grant('sec_p', 'regress_sf_sec_bob', 'read');
SET ROLE regress_sf_sec_bob;
INSERT INTO public.sec_matrix SELECT id, 'read', public.sec_try(call) FROM public.sec_calls;
RESET ROLE;
SELECT streamforge.grant('sec_p', 'regress_sf_sec_bob', 'ingest');
SET ROLE regress_sf_sec_bob;
INSERT INTO public.sec_matrix SELECT id, 'ingest', public.sec_try(call) FROM public.sec_calls;
RESET ROLE;
SELECT streamforge.grant('sec_p', 'regress_sf_sec_bob', 'admin');
SET ROLE regress_sf_sec_bob;
INSERT INTO public.sec_matrix SELECT id, 'admin', public.sec_try(call) FROM public.sec_calls;
RESET ROLE;
SET ROLE regress_sf_sec_alice;
INSERT INTO public.sec_matrix SELECT id, 'owner', public.sec_try(call) FROM public.sec_calls;
RESET ROLE;
SELECT c.id, c.needs, c.call,
       max(m.outcome) FILTER (WHERE m.level = 'none') AS "none",
       max(m.outcome) FILTER (WHERE m.level = 'read') AS "read",
       max(m.outcome) FILTER (WHERE m.level = 'ingest') AS "ingest",
       max(m.outcome) FILTER (WHERE m.level = 'admin') AS "admin",
       max(m.outcome) FILTER (WHERE m.level = 'owner') AS "owner"
  FROM public.sec_calls c JOIN public.sec_matrix m USING (id)
 GROUP BY c.id, c.needs, c.call ORDER BY c.id;
-- every rule at once: a call fails with 42501 exactly below its privilege
SELECT count(*) AS violations
  FROM public.sec_calls c JOIN public.sec_matrix m USING (id)
 WHERE c.needs IN ('read', 'ingest', 'admin', 'owner')
   AND ((array_position(ARRAY['none', 'read', 'ingest', 'admin', 'owner'], m.level)
         < array_position(ARRAY['none', 'read', 'ingest', 'admin', 'owner'], c.needs))
        <> (m.outcome = '42501'));
-- nothing above changed the pipeline (every call was undone)
SELECT * FROM streamforge.partitions('sec_p');
SELECT streamforge.checkpoint('sec_p') = (SELECT cp FROM public.sec_checkpoint) AS unchanged;

-- grant and revoke: a role's grant only moves along read < ingest < admin
SELECT name, readers, ingesters, admins FROM streamforge.pipelines WHERE name = 'sec_p';
SELECT streamforge.grant('sec_p', 'regress_sf_sec_bob', 'read');   -- keeps admin
SELECT admins FROM streamforge.pipelines WHERE name = 'sec_p';
SELECT streamforge.revoke('sec_p', 'regress_sf_sec_bob', 'admin');  -- leaves ingest
SELECT readers, ingesters, admins FROM streamforge.pipelines WHERE name = 'sec_p';
SELECT streamforge.has_pipeline_privilege('sec_p', p, 'regress_sf_sec_bob') AS bob,
       p AS privilege
  FROM unnest(ARRAY['read', 'ingest', 'admin']) AS p;
SELECT streamforge.revoke('sec_p', 'regress_sf_sec_bob', 'read');   -- all gone
SELECT readers, ingesters, admins FROM streamforge.pipelines WHERE name = 'sec_p';
SELECT streamforge.revoke('sec_p', 'regress_sf_sec_carol', 'read'); -- nothing to revoke
-- privilege names are case-insensitive; anything else is 22023
SELECT streamforge.grant('sec_p', 'regress_sf_sec_carol', 'READ');
SELECT streamforge.grant('sec_p', 'regress_sf_sec_carol', 'write');
SELECT streamforge.grant('sec_p', 'regress_sf_sec_nobody', 'read');
SELECT streamforge.grant('sec_p', NULL, 'read');
SELECT streamforge.grant(NULL, 'regress_sf_sec_carol', 'read');
SELECT streamforge.grant('sec_p', 'regress_sf_sec_carol', NULL);
SELECT streamforge.grant('no_such_pipeline', 'regress_sf_sec_carol', 'read');
SELECT streamforge.has_pipeline_privilege('no_such_pipeline', 'read');
SELECT streamforge.revoke('sec_p', 'regress_sf_sec_carol', 'read');

-- roles: membership counts as PostgreSQL counts it (has_privs_of_role)
SELECT streamforge.grant('sec_p', 'regress_sf_sec_team', 'ingest');
SET ROLE regress_sf_sec_member;     -- inherits team's privileges
SELECT public.sec_try($$SELECT * FROM streamforge.ingest('sec_p', 'a', 1, 'e1', 'k', 2, 1)$$) AS member_ingest;
SELECT public.sec_try($$SELECT streamforge.restore('sec_p', (SELECT cp FROM public.sec_checkpoint))$$) AS member_restore;
RESET ROLE;
SET ROLE regress_sf_sec_noinherit;  -- a member without INHERIT has to SET ROLE
SELECT public.sec_try($$SELECT * FROM streamforge.ingest('sec_p', 'a', 1, 'e1', 'k', 2, 1)$$) AS noinherit_ingest;
SET ROLE regress_sf_sec_team;
SELECT public.sec_try($$SELECT * FROM streamforge.ingest('sec_p', 'a', 1, 'e1', 'k', 2, 1)$$) AS as_team_ingest;
RESET ROLE;
SET ROLE regress_sf_sec_deputy;     -- a member of the owner has admin
SELECT public.sec_try($$SELECT streamforge.restore('sec_p', (SELECT cp FROM public.sec_checkpoint))$$) AS deputy_restore;
SELECT name, owner, privilege FROM streamforge.pipelines WHERE name = 'sec_p';
RESET ROLE;
SELECT streamforge.revoke('sec_p', 'regress_sf_sec_team', 'read');
-- PUBLIC
SELECT streamforge.grant('sec_p', 'public', 'read');
SELECT readers FROM streamforge.pipelines WHERE name = 'sec_p';
SET ROLE regress_sf_sec_carol;
SELECT streamforge.watermark('sec_p');
SELECT public.sec_try($$SELECT * FROM streamforge.advance('sec_p', 'a', 40)$$) AS public_advance;
RESET ROLE;
SELECT streamforge.revoke('sec_p', 'public', 'read');
SET ROLE regress_sf_sec_carol;
SELECT streamforge.watermark('sec_p');
RESET ROLE;

-- privileges hold inside a transaction that already holds the pipeline's
-- lock: the cached copy follows grant, revoke and SET ROLE
BEGIN;
SELECT * FROM streamforge.ingest('sec_p', 'a', 1, 'e1', 'k', 2, 1);
SET LOCAL ROLE regress_sf_sec_bob;
SELECT public.sec_try($$SELECT * FROM streamforge.ingest('sec_p', 'a', 2, 'e2', 'k', 2, 1)$$) AS bob_in_locked_txn;
RESET ROLE;
SELECT streamforge.grant('sec_p', 'regress_sf_sec_bob', 'ingest');
SET LOCAL ROLE regress_sf_sec_bob;
SELECT count(*) FROM streamforge.ingest('sec_p', 'a', 2, 'e2', 'k', 2, 1);
RESET ROLE;
SELECT streamforge.revoke('sec_p', 'regress_sf_sec_bob', 'read');
SET LOCAL ROLE regress_sf_sec_bob;
SELECT public.sec_try($$SELECT * FROM streamforge.ingest('sec_p', 'a', 3, 'e3', 'k', 2, 1)$$) AS bob_after_revoke;
ROLLBACK;

-- a failed privilege check in a savepoint leaves the caller's identity and
-- releases the row lock with the savepoint
BEGIN;
SET LOCAL ROLE regress_sf_sec_bob;
SAVEPOINT s;
SELECT * FROM streamforge.ingest('sec_p', 'a', 1, 'e1', 'k', 2, 1);
ROLLBACK TO SAVEPOINT s;
SELECT current_user;
SAVEPOINT t;
SELECT streamforge.watermark('no_such_pipeline');
ROLLBACK TO SAVEPOINT t;
SELECT current_user;
ROLLBACK;
SELECT current_user = session_user AS identity_restored;

-- the output tables show each role the rows of the pipelines it may read
SET ROLE regress_sf_sec_alice;
SELECT streamforge.configure_outputs('sec_p');
SELECT streamforge.create_pipeline('sec_q', ARRAY['a'], ARRAY[streamforge.fixed('f', 10)]);
SELECT streamforge.configure_outputs('sec_q');
SELECT count(*) FROM streamforge.ingest('sec_q', 'a', 0, 'q0', 'k', 1, 1);
SELECT count(*) FROM streamforge.advance('sec_q', 'a', 10);
SELECT count(*) FROM streamforge.ingest('sec_p', 'a', 1, 'e1', 'k', 2, 3);
SELECT count(*) FROM streamforge.advance('sec_p', 'a', 100);
SELECT count(*) FROM streamforge.advance('sec_p', 'b', 100);
SELECT count(*) FROM streamforge.ingest('sec_p', 'b', 0, 'late', 'k', 1, 1);
SELECT pipeline, count(*) FROM streamforge.changelog GROUP BY 1 ORDER BY 1;
RESET ROLE;
SELECT streamforge.grant('sec_p', 'regress_sf_sec_bob', 'read');
SET ROLE regress_sf_sec_bob;
SELECT pipeline, seq, op, key, window_start, count, sum FROM streamforge.changelog ORDER BY 1, 2;
SELECT pipeline, key, window_start, count, sum FROM streamforge.results ORDER BY 1, 2, 3;
SELECT pipeline, late_seq, event_id FROM streamforge.late_output ORDER BY 1, 2;
SELECT pipeline FROM streamforge.output_config ORDER BY 1;
-- and nobody writes them directly
DELETE FROM streamforge.changelog WHERE pipeline = 'sec_p';
UPDATE streamforge.results SET count = 0;
INSERT INTO streamforge.late_output SELECT * FROM streamforge.late_output;
TRUNCATE streamforge.output_config;
RESET ROLE;
SET ROLE regress_sf_sec_carol;
SELECT count(*) AS carol_sees FROM streamforge.changelog;
RESET ROLE;

-- set_owner follows ALTER TABLE ... OWNER TO: the owner (or a member of
-- it) who is a member of the new owner; superusers always
SET ROLE regress_sf_sec_bob;
SELECT streamforge.set_owner('sec_q', 'regress_sf_sec_bob');
RESET ROLE;
SET ROLE regress_sf_sec_alice;
SELECT streamforge.set_owner('sec_q', 'regress_sf_sec_bob');
SELECT streamforge.set_owner('sec_q', 'regress_sf_sec_alice');
RESET ROLE;
SELECT streamforge.set_owner('sec_q', 'regress_sf_sec_bob');
SELECT streamforge.set_owner('sec_q', 'public');
SELECT name, owner FROM streamforge.pipeline WHERE name LIKE 'sec\_%' ORDER BY 1;
SET ROLE regress_sf_sec_bob;
SELECT name, owner, privilege FROM streamforge.pipelines ORDER BY 1;
SELECT streamforge.drop_pipeline('sec_q');
RESET ROLE;

-- a role dropped while it owns pipelines: PostgreSQL does not know about
-- pipelines, so DROP ROLE succeeds; the pipeline is left to superusers
-- (and its grantees) until a superuser gives it a new owner.  REASSIGN
-- OWNED and DROP OWNED do not touch pipelines.
CREATE ROLE regress_sf_sec_dave;
GRANT USAGE ON SCHEMA streamforge TO regress_sf_sec_dave;
SET ROLE regress_sf_sec_dave;
SELECT streamforge.create_pipeline('sec_d', ARRAY['a'], ARRAY[streamforge.fixed('f', 10)]);
RESET ROLE;
REASSIGN OWNED BY regress_sf_sec_dave TO regress_sf_sec_alice;
DROP OWNED BY regress_sf_sec_dave;
SELECT owner FROM streamforge.pipeline WHERE name = 'sec_d';
DROP ROLE regress_sf_sec_dave;
SELECT owner::text ~ '^[0-9]+$' AS owner_is_a_dangling_oid
  FROM streamforge.pipeline WHERE name = 'sec_d';
SET ROLE regress_sf_sec_alice;
SELECT streamforge.watermark('sec_d');
RESET ROLE;
SELECT streamforge.set_owner('sec_d', 'regress_sf_sec_alice');
SELECT name, owner FROM streamforge.pipelines WHERE name = 'sec_d';
SELECT streamforge.drop_pipeline('sec_d');

-- a drop by a non-owner without admin fails and changes nothing
SET ROLE regress_sf_sec_carol;
SELECT streamforge.drop_pipeline('sec_p');
RESET ROLE;
SELECT count(*) AS still_there FROM streamforge.pipeline WHERE name = 'sec_p';

-- search_path cannot redirect anything streamforge runs: a schema early in
-- the path with an always-true text equality and look-alike functions
CREATE SCHEMA sec_evil;
CREATE FUNCTION sec_evil.texteq(text, text) RETURNS boolean
    LANGUAGE sql IMMUTABLE AS 'SELECT true';
CREATE OPERATOR sec_evil.= (LEFTARG = text, RIGHTARG = text,
                            FUNCTION = sec_evil.texteq);
CREATE FUNCTION sec_evil.unnest(anyarray) RETURNS SETOF anyelement
    LANGUAGE sql AS 'SELECT NULL::text::anyelement WHERE false';
CREATE FUNCTION sec_evil.md5(text) RETURNS text
    LANGUAGE sql IMMUTABLE AS 'SELECT ''0''';
CREATE FUNCTION sec_evil.now() RETURNS timestamptz
    LANGUAGE sql AS 'SELECT ''epoch''::timestamptz';
CREATE FUNCTION sec_evil.octet_length(bytea) RETURNS integer
    LANGUAGE sql AS 'SELECT -1';
GRANT USAGE ON SCHEMA sec_evil TO PUBLIC;
SET ROLE regress_sf_sec_alice;
SET search_path = sec_evil, pg_catalog, public;
SELECT 'x'::text = 'y'::text AS evil_equality_active;
SELECT streamforge.create_pipeline('sec_e', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('f', 10), streamforge.session('s', 3)]);
SELECT streamforge.configure_outputs('sec_e');
SELECT * FROM streamforge.ingest_batch('sec_e', ARRAY[
    ROW('a', 0, 'x0', 'k1', 1, 1), ROW('a', 1, 'x1', 'k2', 2, 2)]::streamforge.delivery[]);
SELECT * FROM streamforge.advance('sec_e', 'a', 50);
SELECT * FROM streamforge.advance('sec_e', 'b', 50);
SELECT * FROM streamforge.ingest('sec_e', 'a', 2, 'x2', 'k1', 3, 3);
SELECT key, window_start, count, sum FROM streamforge.results
 WHERE pipeline OPERATOR(pg_catalog.=) 'sec_e' ORDER BY 1, 2;
SELECT streamforge.restore('sec_e', streamforge.checkpoint('sec_e'));
SELECT * FROM streamforge.partitions('sec_e');
SELECT streamforge.grant('sec_e', 'regress_sf_sec_bob', 'read');
SELECT name, readers FROM streamforge.pipelines
 WHERE name OPERATOR(pg_catalog.=) 'sec_e';
SELECT streamforge.drop_pipeline('sec_e');
RESET search_path;
RESET ROLE;
SELECT count(*) AS leftovers FROM streamforge.changelog WHERE pipeline = 'sec_e';
DROP SCHEMA sec_evil CASCADE;

-- clean up
SELECT streamforge.drop_pipeline('sec_p');
DROP TABLE public.sec_checkpoint, public.sec_calls, public.sec_matrix;
DROP FUNCTION public.sec_try(text);
REVOKE USAGE ON SCHEMA streamforge FROM regress_sf_sec_alice, regress_sf_sec_bob,
    regress_sf_sec_carol, regress_sf_sec_member, regress_sf_sec_noinherit,
    regress_sf_sec_deputy, regress_sf_sec_team;
DROP ROLE regress_sf_sec_alice, regress_sf_sec_bob, regress_sf_sec_carol,
    regress_sf_sec_member, regress_sf_sec_noinherit, regress_sf_sec_team,
    regress_sf_sec_deputy;
