-- The C insert trigger of an attachment (issue 42, item 3) keeps the plan
-- of its rows query per trigger and session: it must follow every change
-- that the PL/pgSQL trigger, which planned each statement anew, followed.
-- Each step is checked against plain SQL over the table.
\set SHOW_CONTEXT never
SELECT streamforge.create_pipeline('kp', ARRAY['p0'],
    ARRAY[streamforge.fixed('w', 10)]);
CREATE TABLE kp_raw (id bigint PRIMARY KEY, page text NOT NULL,
                     t bigint NOT NULL, n integer NOT NULL DEFAULT 1);
CREATE FUNCTION kp_weight(n integer) RETURNS bigint LANGUAGE sql IMMUTABLE
    RETURN n;
SELECT streamforge.attach('kp', 'kp_raw', event_id => 'id', key => 'page',
    event_time => 't', value => 'public.kp_weight(n)');
CREATE VIEW kp_check AS
SELECT (SELECT pg_catalog.jsonb_agg(x ORDER BY x.key, x.window_start)
          FROM (SELECT key, window_start, count, sum
                  FROM streamforge.live('kp')) AS x)
       IS NOT DISTINCT FROM
       (SELECT pg_catalog.jsonb_agg(y ORDER BY y.key, y.window_start)
          FROM (SELECT page AS key, t / 10 * 10 AS window_start,
                       count(*) AS count, sum(public.kp_weight(n)) AS sum
                  FROM kp_raw GROUP BY 1, 2) AS y) AS same;

-- the first statement prepares the plan, the next ones reuse it
INSERT INTO kp_raw VALUES (1, '/a', 1, 1), (2, '/b', 2, 2);
INSERT INTO kp_raw VALUES (3, '/a', 11, 3);
SELECT same FROM kp_check;

-- the function a mapping calls is replaced: the next statement calls the
-- new one (the old rows keep what they were ingested with)
CREATE OR REPLACE FUNCTION kp_weight(n integer) RETURNS bigint LANGUAGE sql
    IMMUTABLE RETURN n * 100;
INSERT INTO kp_raw VALUES (4, '/c', 21, 1);
SELECT key, sum FROM streamforge.live('kp') WHERE key = '/c';

-- a column added, a column of no mapping dropped: the plan is made again
ALTER TABLE kp_raw ADD COLUMN note text;
INSERT INTO kp_raw VALUES (5, '/c', 22, 2, 'x');
ALTER TABLE kp_raw DROP COLUMN note;
INSERT INTO kp_raw VALUES (6, '/c', 23, 3);
SELECT key, count, sum FROM streamforge.live('kp') WHERE key = '/c';

-- another role inserts with the same plan: its own privileges count
CREATE ROLE regress_sf_kp_writer;
GRANT INSERT ON kp_raw TO regress_sf_kp_writer;
SET ROLE regress_sf_kp_writer;
INSERT INTO kp_raw VALUES (7, '/d', 31, 1);   -- 42501: no ingest privilege
RESET ROLE;
SELECT streamforge.grant('kp', 'regress_sf_kp_writer', 'ingest');
SET ROLE regress_sf_kp_writer;
INSERT INTO kp_raw VALUES (7, '/d', 31, 1);
RESET ROLE;
SELECT key, count FROM streamforge.live('kp') WHERE key = '/d';

-- detached and attached again with other mappings (a new trigger, same
-- name): the new mappings count
SELECT streamforge.detach('kp', 'kp_raw');
SELECT streamforge.attach('kp', 'kp_raw', event_id => 'id',
    key => 'upper(page)', event_time => 't');
INSERT INTO kp_raw VALUES (8, '/e', 41, 5);
SELECT key, count, sum FROM streamforge.live('kp') WHERE window_start = 40;

-- the trigger renamed: refused, as by the PL/pgSQL trigger (39P01)
SELECT streamforge_internal.attach_trigger_name('kp') AS tg \gset
ALTER TRIGGER :"tg" ON kp_raw RENAME TO kp_renamed;
INSERT INTO kp_raw VALUES (9, '/e', 42, 1);
ALTER TRIGGER kp_renamed ON kp_raw RENAME TO :"tg";

-- a statement that inserts no row still opens the pipeline (privileges,
-- as append_batch of an empty array did), and a filter may leave none
INSERT INTO kp_raw SELECT 100, '/z', 1, 1 WHERE false;
SELECT streamforge.revoke('kp', 'regress_sf_kp_writer', 'ingest');
SET ROLE regress_sf_kp_writer;
INSERT INTO kp_raw SELECT 100, '/z', 1, 1 WHERE false;   -- 42501
RESET ROLE;

-- a new session (DISCARD ALL keeps the backend's kept plans, a
-- reconnection does not): the same results
DISCARD ALL;
INSERT INTO kp_raw VALUES (10, '/e', 43, 1);
\c
INSERT INTO kp_raw VALUES (11, '/e', 44, 1);
SELECT key, count FROM streamforge.live('kp') WHERE window_start = 40;
SELECT consumed_offset FROM streamforge.partitions('kp');

DROP TABLE kp_raw CASCADE;
SELECT streamforge.drop_pipeline('kp');
DROP FUNCTION kp_weight(integer);
DROP ROLE regress_sf_kp_writer;
