-- Security round 4 (issue 37), the SQL layer: the attacks of 0.3.0's
-- findings 1, 4, 11 and 13, each as the unprivileged role it needs.  On
-- 0.3.0 finding 1 made regress_sf_agg_attacker a superuser (the log table
-- below got a row written as the extension's owner), finding 4 printed the
-- other pipeline's count, finding 11 returned the other pipeline's id and
-- finding 13 created the aggregate.
\set SHOW_CONTEXT never
\set VERBOSITY default
CREATE ROLE regress_sf_agg_victim;
CREATE ROLE regress_sf_agg_attacker;
GRANT USAGE ON SCHEMA streamforge TO regress_sf_agg_victim, regress_sf_agg_attacker;
CREATE SCHEMA regress_sf_agg_victim AUTHORIZATION regress_sf_agg_victim;
CREATE SCHEMA regress_sf_agg_att AUTHORIZATION regress_sf_agg_attacker;
-- the attacker may look the victim's objects up (not read them)
GRANT USAGE ON SCHEMA regress_sf_agg_victim TO regress_sf_agg_attacker;

-- the victim's aggregate, three rows in one window
SET ROLE regress_sf_agg_victim;
SET search_path = regress_sf_agg_victim;
CREATE TABLE secret (id bigserial PRIMARY KEY, page text NOT NULL,
                     amount integer NOT NULL, t timestamptz NOT NULL);
SELECT streamforge.create_aggregate('regress_sf_agg_secret', $$
    SELECT page, count(*) AS n, sum(amount) AS s FROM secret
     GROUP BY page, streamforge.tumble(t, interval '1 minute')$$);
INSERT INTO secret (page, amount, t) VALUES
    ('/hidden', 40, '2026-01-01 00:00:10+00'), ('/hidden', 1, '2026-01-01 00:00:20+00'),
    ('/hidden', 1, '2026-01-01 00:00:30+00');
SELECT streamforge.advance_ts('regress_sf_agg_secret', 'default', '2026-01-01 00:05:00+00') IS NOT NULL AS advanced;
RESET ROLE;

-- ----------------------------------------------------------------
-- Finding 1: a forged spec with a domain key, straight to the helpers
-- ----------------------------------------------------------------
SET ROLE regress_sf_agg_attacker;
SET search_path = regress_sf_agg_att;
CREATE TABLE log (who name, super boolean);
GRANT INSERT ON log TO PUBLIC;
-- the function a domain's CHECK calls: logs the role it runs as, and
-- tries to make the attacker a superuser (only a superuser may)
CREATE FUNCTION regress_sf_agg_att.evil(text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO regress_sf_agg_att.log VALUES (current_user, false);
    BEGIN
        EXECUTE 'ALTER ROLE regress_sf_agg_attacker SUPERUSER';
        INSERT INTO regress_sf_agg_att.log VALUES (current_user, true);
    EXCEPTION WHEN insufficient_privilege THEN NULL;
    END;
    RETURN true;
END
$$;
CREATE DOMAIN regress_sf_agg_att.evil_text AS text CHECK (regress_sf_agg_att.evil(VALUE));
CREATE TABLE clicks (id bigserial PRIMARY KEY, page text NOT NULL,
                     amount integer NOT NULL, t timestamptz NOT NULL);
SELECT streamforge.create_pipeline('regress_sf_agg_forged', ARRAY['default'],
    ARRAY[streamforge.fixed('tumble', 60000000)]);
-- 0.3.0: EXECUTE to PUBLIC, and the index on streamforge.results ran the
-- CHECK as the extension's owner.  Now: not executable.
SELECT streamforge_internal.aggregate_register('regress_sf_agg_forged', 'regress_sf_agg_att',
    'forged', 'regress_sf_agg_att.clicks', 'q', 1,
    '{"window": "tumble", "keys": [{"part": 1, "name": "k", "type": "regress_sf_agg_att.evil_text", "indexable": true}], "aggregates": []}');
SELECT streamforge_internal.aggregate_create('regress_sf_agg_forged2', 'q',
    '{"relid": 1, "window": {"kind": "tumble", "size_us": 60000000, "precision_us": 1, "time": "t"}, "keys": [{"expr": "page", "name": "k", "type": "regress_sf_agg_att.evil_text", "immutable_input": true}], "aggregates": [{"func": "count", "name": "n", "type": "bigint"}]}',
    'regress_sf_agg_att', '0', NULL, 'update', NULL, NULL, NULL, NULL);
-- what made the attack work on 0.3.0: a results row of the forged
-- pipeline, written by the sink as the extension's owner, went through
-- the index whose expression casts the key to the domain
SELECT streamforge.configure_outputs('regress_sf_agg_forged', results => true);
SELECT count(*) FROM streamforge.ingest('regress_sf_agg_forged', 'default', 0, 'e1', '{x}', 1, 1);
SELECT count(*) FROM streamforge.advance('regress_sf_agg_forged', 'default', 200000000);
SELECT count(*) AS rows_written_as_others, bool_or(super) AS became_superuser
  FROM log WHERE who <> 'regress_sf_agg_attacker';
SELECT streamforge_internal.aggregate_plan('SELECT 1');
SELECT streamforge_internal.aggregate_type_ok('text');
-- through the entry point: a domain key comes out as its base type, so no
-- CHECK of the attacker's runs in the index or the views
CREATE TABLE dclicks (id bigserial PRIMARY KEY, page regress_sf_agg_att.evil_text NOT NULL,
                      amount integer NOT NULL, t timestamptz NOT NULL);
INSERT INTO dclicks (page, amount, t) VALUES ('/d', 1, '2026-01-01 00:00:10+00');
DELETE FROM log;
SELECT streamforge.create_aggregate('regress_sf_agg_dom', $$
    SELECT page, count(*) AS n FROM dclicks
     GROUP BY page, streamforge.tumble(t, interval '1 minute')$$);
INSERT INTO dclicks (page, amount, t) VALUES ('/d', 1, '2026-01-01 00:00:20+00');
SELECT streamforge.advance_ts('regress_sf_agg_dom', 'default', '2026-01-01 00:05:00+00') IS NOT NULL AS advanced;
SELECT page, n, pg_typeof(page) FROM regress_sf_agg_att.regress_sf_agg_dom;
-- the CHECK ran for the attacker's own inserts, as the attacker, never as
-- anybody else
SELECT who, super, count(*) FROM log GROUP BY who, super ORDER BY who, super;
-- a key type whose input could run code is refused by the planner
CREATE TYPE regress_sf_agg_att.pair AS (a regress_sf_agg_att.evil_text, b integer);
CREATE TABLE pclicks (id bigserial PRIMARY KEY, p regress_sf_agg_att.pair NOT NULL,
                      t timestamptz NOT NULL);
SELECT streamforge.create_aggregate('regress_sf_agg_pair', $$
    SELECT p, count(*) AS n FROM pclicks GROUP BY p, streamforge.tumble(t, interval '1 minute')$$);
CREATE TABLE aclicks (id bigserial PRIMARY KEY, p regress_sf_agg_att.evil_text[] NOT NULL,
                      t timestamptz NOT NULL);
SELECT streamforge.create_aggregate('regress_sf_agg_arr', $$
    SELECT p, count(*) AS n FROM aclicks GROUP BY p, streamforge.tumble(t, interval '1 minute')$$);
RESET ROLE;
SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_sf_agg_attacker';

-- the owner-side checks, called as a superuser would (the only roles that
-- may): a domain key, an aggregate of another type, a table of another role
SET search_path = regress_sf_agg_att;
SELECT streamforge_internal.aggregate_register('regress_sf_agg_forged', 'regress_sf_agg_att',
    'forged', 'regress_sf_agg_att.clicks', 'q', 1,
    '{"window": "tumble", "keys": [{"part": 1, "name": "k", "type": "regress_sf_agg_att.evil_text", "indexable": true}], "aggregates": []}');
SELECT streamforge_internal.aggregate_register('regress_sf_agg_forged', 'regress_sf_agg_att',
    'forged', 'regress_sf_agg_att.clicks', 'q', 1,
    '{"window": "tumble", "keys": [], "aggregates": [{"func": "sum", "name": "s", "type": "regress_sf_agg_att.evil_text"}]}');
SELECT streamforge_internal.aggregate_type_ok('regress_sf_agg_att.evil_text'),
       streamforge_internal.aggregate_type_ok('regress_sf_agg_att.evil_text[]'),
       streamforge_internal.aggregate_type_ok('regress_sf_agg_att.pair'),
       streamforge_internal.aggregate_type_ok('text[]'),
       streamforge_internal.aggregate_type_ok('date');
SELECT count(*) AS attacker_log_rows_as_others FROM log WHERE who <> 'regress_sf_agg_attacker';
-- even a role granted EXECUTE on aggregate_register registers only views
-- over a table of its own (the source, 0.3.0 did not check it)
GRANT EXECUTE ON FUNCTION streamforge_internal.aggregate_register(text, text, text, regclass,
    text, bigint, jsonb) TO regress_sf_agg_attacker;
SET ROLE regress_sf_agg_attacker;
SELECT streamforge_internal.aggregate_register('regress_sf_agg_forged', 'regress_sf_agg_att',
    'forged', 'regress_sf_agg_victim.secret', 'q', 1,
    '{"window": "tumble", "keys": [], "aggregates": []}');
RESET ROLE;
REVOKE EXECUTE ON FUNCTION streamforge_internal.aggregate_register(text, text, text, regclass,
    text, bigint, jsonb) FROM regress_sf_agg_attacker;
SET search_path = public;

-- ----------------------------------------------------------------
-- Finding 4: a leaky function in WHERE on an aggregate's view
-- ----------------------------------------------------------------
SET ROLE regress_sf_agg_attacker;
SET search_path = regress_sf_agg_att;
SELECT streamforge.drop_pipeline('regress_sf_agg_forged');
SELECT streamforge.create_aggregate('regress_sf_agg_mine', $$
    SELECT page, count(*) AS n, sum(amount) AS s FROM clicks
     GROUP BY page, streamforge.tumble(t, interval '1 minute')$$);
INSERT INTO clicks (page, amount, t) VALUES ('/mine', 1, '2026-01-01 00:00:10+00');
SELECT streamforge.advance_ts('regress_sf_agg_mine', 'default', '2026-01-01 00:05:00+00') IS NOT NULL AS advanced;
CREATE FUNCTION regress_sf_agg_att.leak(bigint, boolean) RETURNS boolean
LANGUAGE plpgsql COST 0.0000001 AS $$
BEGIN
    RAISE NOTICE 'leak: % %', $1, $2;
    RETURN true;
END
$$;
-- a sequential scan reads every pipeline's rows of streamforge.results:
-- 0.3.0 printed "leak: 3 t" (the victim's count) too
SET enable_indexscan = off;
SET enable_bitmapscan = off;
SELECT page, n FROM regress_sf_agg_mine WHERE leak(n, final);
SELECT page, n FROM regress_sf_agg_mine_live WHERE leak(n, final);
RESET enable_indexscan;
RESET enable_bitmapscan;
SELECT c.relname, c.reloptions FROM pg_class AS c
 WHERE c.relnamespace = 'regress_sf_agg_att'::regnamespace AND c.relkind = 'v'
 ORDER BY c.relname;
-- the victim's view: refused before any row is read
SELECT * FROM regress_sf_agg_victim.regress_sf_agg_secret WHERE leak(n, final);

-- ----------------------------------------------------------------
-- Finding 11: pipeline_id of a pipeline one may not read
-- ----------------------------------------------------------------
SELECT streamforge_internal.pipeline_id('regress_sf_agg_secret');
SELECT streamforge_internal.pipeline_id('regress_sf_agg_no_such_pipeline') IS NULL AS unknown_is_null;
SELECT streamforge_internal.pipeline_id('regress_sf_agg_mine') IS NOT NULL AS own_is_known;
SELECT streamforge.notify_channel('regress_sf_agg_secret');
RESET ROLE;
SET ROLE regress_sf_agg_victim;
SELECT streamforge.grant('regress_sf_agg_secret', 'regress_sf_agg_attacker', 'read');
SET ROLE regress_sf_agg_attacker;
SELECT streamforge_internal.pipeline_id('regress_sf_agg_secret') IS NOT NULL AS readable_is_known;
RESET ROLE;
SET ROLE regress_sf_agg_victim;
SELECT streamforge.revoke('regress_sf_agg_secret', 'regress_sf_agg_attacker', 'read');
RESET ROLE;

-- ----------------------------------------------------------------
-- Finding 13: temporary functions, operators and types in the query
-- ----------------------------------------------------------------
SET ROLE regress_sf_agg_attacker;
SET search_path = regress_sf_agg_att;
CREATE FUNCTION pg_temp.ok(text) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$ SELECT true $$;
CREATE FUNCTION pg_temp.twice(integer) RETURNS integer LANGUAGE sql IMMUTABLE AS $$ SELECT $1 * 2 $$;
CREATE FUNCTION pg_temp.big(integer) RETURNS integer LANGUAGE plpgsql IMMUTABLE AS $$ BEGIN RETURN $1; END $$;
CREATE OPERATOR pg_temp.=== (LEFTARG = text, RIGHTARG = text, FUNCTION = pg_catalog.texteq);
CREATE DOMAIN pg_temp.tint AS integer;
SELECT streamforge.create_aggregate('regress_sf_agg_tmp1', $$
    SELECT page, count(*) AS n FROM clicks WHERE pg_temp.ok(page)
     GROUP BY page, streamforge.tumble(t, interval '1 minute')$$);
SELECT streamforge.create_aggregate('regress_sf_agg_tmp2', $$
    SELECT page, sum(pg_temp.twice(amount)) AS s FROM clicks
     GROUP BY page, streamforge.tumble(t, interval '1 minute')$$);
SELECT streamforge.create_aggregate('regress_sf_agg_tmp3', $$
    SELECT pg_temp.twice(amount) AS a, count(*) AS n FROM clicks
     GROUP BY pg_temp.twice(amount), streamforge.tumble(t, interval '1 minute')$$);
SELECT streamforge.create_aggregate('regress_sf_agg_tmp4', $$
    SELECT page, count(*) FILTER (WHERE pg_temp.big(amount) > 2) AS n FROM clicks
     GROUP BY page, streamforge.tumble(t, interval '1 minute')$$);
SELECT streamforge.create_aggregate('regress_sf_agg_tmp5', $$
    SELECT page, count(*) AS n FROM clicks WHERE page OPERATOR(pg_temp.===) '/mine'
     GROUP BY page, streamforge.tumble(t, interval '1 minute')$$);
SELECT streamforge.create_aggregate('regress_sf_agg_tmp6', $$
    SELECT page, count(*) AS n FROM clicks WHERE amount::pg_temp.tint > 0
     GROUP BY page, streamforge.tumble(t, interval '1 minute')$$);
SELECT count(*) AS temp_aggregates FROM streamforge.aggregates WHERE name LIKE 'regress_sf_agg_tmp%';
RESET ROLE;

-- ----------------------------------------------------------------
-- clean up
-- ----------------------------------------------------------------
DISCARD TEMP;
SET ROLE regress_sf_agg_attacker;
SELECT streamforge.drop_aggregate('regress_sf_agg_mine');
SELECT streamforge.drop_aggregate('regress_sf_agg_dom');
RESET ROLE;
SET ROLE regress_sf_agg_victim;
SELECT streamforge.drop_aggregate('regress_sf_agg_secret');
RESET ROLE;
RESET search_path;
DROP SCHEMA regress_sf_agg_att CASCADE;
DROP SCHEMA regress_sf_agg_victim CASCADE;
REVOKE USAGE ON SCHEMA streamforge FROM regress_sf_agg_victim, regress_sf_agg_attacker;
DROP ROLE regress_sf_agg_victim;
DROP ROLE regress_sf_agg_attacker;

-- ------------------------------------------------------------------------
-- create_aggregate needs CREATE on the current schema
-- ------------------------------------------------------------------------
\c -
\set VERBOSITY default
\set SHOW_CONTEXT errors
\set VERBOSITY sqlstate
-- docs/sql-aggregates.md, Privileges (issue 40 item 6): creating an aggregate needs CREATE
-- on the current schema (the views go there).  The role owns its table in
-- a schema where it may create, but its current schema is one where it
-- may not: refused (42501), and nothing is left behind.
CREATE ROLE regress_s5_agg;
CREATE SCHEMA s5_mine AUTHORIZATION regress_s5_agg;
CREATE SCHEMA s5_theirs;
GRANT USAGE ON SCHEMA s5_theirs TO regress_s5_agg;
GRANT USAGE ON SCHEMA streamforge TO regress_s5_agg;
SET ROLE regress_s5_agg;
CREATE TABLE s5_mine.clicks (id bigint PRIMARY KEY, page text NOT NULL,
                             at timestamptz NOT NULL);
SET search_path = s5_theirs, public;
SELECT streamforge.create_aggregate('s5_clicks', $$
    SELECT page, count(*) AS n FROM s5_mine.clicks
     GROUP BY page, streamforge.tumble(at, interval '1 minute')$$);
RESET ROLE;
SELECT count(*) AS pipelines FROM streamforge.pipeline WHERE name = 's5_clicks';
SELECT count(*) AS relations FROM pg_class WHERE relname LIKE 's5_clicks%';
-- with CREATE on it, the same call makes the three views there
GRANT CREATE ON SCHEMA s5_theirs TO regress_s5_agg;
SET ROLE regress_s5_agg;
SELECT streamforge.create_aggregate('s5_clicks', $$
    SELECT page, count(*) AS n FROM s5_mine.clicks
     GROUP BY page, streamforge.tumble(at, interval '1 minute')$$) IS NOT NULL AS created;
SELECT c.relname, n.nspname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relname LIKE 's5_clicks%' ORDER BY 1;
-- a path that starts with a missing schema: the current schema is the
-- first that exists (s5_theirs), still without CREATE: refused
SELECT streamforge.drop_aggregate('s5_clicks');
RESET ROLE;
REVOKE CREATE ON SCHEMA s5_theirs FROM regress_s5_agg;
SET ROLE regress_s5_agg;
SET search_path = s5_missing, s5_theirs, public;
SELECT streamforge.create_aggregate('s5_clicks', $$
    SELECT page, count(*) AS n FROM s5_mine.clicks
     GROUP BY page, streamforge.tumble(at, interval '1 minute')$$);
RESET ROLE;
RESET search_path;
SELECT count(*) AS pipelines FROM streamforge.pipeline WHERE name = 's5_clicks';
SET client_min_messages = warning;
DROP SCHEMA s5_mine CASCADE;
RESET client_min_messages;
DROP SCHEMA s5_theirs;
REVOKE USAGE ON SCHEMA streamforge FROM regress_s5_agg;
DROP ROLE regress_s5_agg;

