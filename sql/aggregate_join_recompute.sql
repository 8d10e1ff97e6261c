-- streamforge.recompute(aggregate, from, to) (issue 47, item 3;
-- docs/joins.md "Recomputing"): a dimension row that changed after events
-- were aggregated changes nothing until asked; recompute maps the accepted
-- events again with the dimensions as they are now and rebuilds the live
-- windows.  A finalized row never changes; late events are not decided
-- again; an event that no longer passes an inner join is taken out (its
-- offset stays consumed); a retention that has forgotten events refuses it
-- (55000).  Each result is
-- compared with the plain SQL join over the events with the dimension as
-- it is now, for the windows still live.
SET client_min_messages = warning;
SET TimeZone = 'UTC';
CREATE TABLE rc_pages (page integer PRIMARY KEY, section text NOT NULL, w integer);
CREATE TABLE rc_users (uid integer PRIMARY KEY, plan text);
CREATE TABLE rc_clicks (id integer PRIMARY KEY, page integer, uid integer,
                        amount integer NOT NULL, at timestamptz NOT NULL);
INSERT INTO rc_pages VALUES (1, 'news', 1), (2, 'sport', 2), (3, 'tech', 3);
INSERT INTO rc_users VALUES (10, 'free'), (11, 'pro');
-- an inner and a left join; FILTER and avg make it a measures pipeline
SELECT streamforge.create_aggregate('rc_agg', $$
    SELECT d.section, u.plan, count(*) AS n, sum(c.amount) AS total,
           avg(c.amount) AS mean, count(*) FILTER (WHERE d.w > 1) AS heavy,
           max(d.w) AS top_w
      FROM rc_clicks c JOIN rc_pages d ON d.page = c.page
           LEFT JOIN rc_users u ON u.uid = c.uid
     GROUP BY d.section, u.plan, streamforge.tumble(c.at, interval '1 minute')
$$, lateness => interval '1 minute');
-- a one-measure aggregate (no FILTER, no avg) over the same events
SELECT streamforge.create_aggregate('rc_one', $$
    SELECT d.section, count(*) AS n
      FROM rc_clicks c JOIN rc_pages d ON d.page = c.page
     GROUP BY d.section, streamforge.tumble(c.at, interval '1 minute')
$$, lateness => interval '1 minute');
SELECT streamforge.configure_outputs('rc_agg');
SELECT a.pipeline, a.filter IS NOT NULL AS has_filter,
       cardinality(streamforge_internal.trigger_args(t.tgargs)) AS nargs
  FROM streamforge.attachments AS a JOIN pg_trigger AS t ON t.tgname = a.trigger_name
 WHERE a.pipeline IN ('rc_agg', 'rc_one') ORDER BY 1;
-- events over three minutes; page 9 has no row: the inner join drops it
INSERT INTO rc_clicks VALUES
    (1, 1, 10, 5, '2026-12-01 12:00:01+00'), (2, 2, 11, 7, '2026-12-01 12:00:02+00'),
    (3, 3, NULL, 1, '2026-12-01 12:00:03+00'), (4, 1, 11, 2, '2026-12-01 12:01:03+00'),
    (5, 2, 10, 4, '2026-12-01 12:01:30+00'), (6, 9, 10, 8, '2026-12-01 12:02:00+00'),
    (7, 3, 11, 6, '2026-12-01 12:02:10+00');
-- the first minute's window is finalized once the watermark passes
-- 12:02:00 (end + lateness); the second is ready, still live
SELECT count(*) FROM streamforge.advance_ts('rc_agg', 'default', '2026-12-01 12:02:05+00');
SELECT count(*) FROM streamforge.advance_ts('rc_one', 'default', '2026-12-01 12:02:05+00');
SELECT section, plan, window_start, n, total, mean, heavy, top_w, final
  FROM rc_agg ORDER BY window_start, section, plan;

-- the plain join over the events, with the dimensions as they are now, for
-- the windows still live (its rows, and the view's, that the other lacks)
CREATE VIEW rc_diff AS
WITH want AS (SELECT d.section, u.plan, streamforge.tumble(c.at, interval '1 minute') AS window_start,
                     count(*) AS n, sum(c.amount) AS total, avg(c.amount) AS mean,
                     count(*) FILTER (WHERE d.w > 1) AS heavy, max(d.w) AS top_w
                FROM rc_clicks c JOIN rc_pages d ON d.page = c.page
                     LEFT JOIN rc_users u ON u.uid = c.uid
               GROUP BY 1, 2, 3),
     got AS (SELECT section, plan, window_start, n, total, mean, heavy, top_w FROM rc_agg_live)
(SELECT 'missing' AS d, * FROM (SELECT * FROM want WHERE window_start >= '2026-12-01 12:01:00+00'
                                EXCEPT SELECT * FROM got) x)
UNION ALL
(SELECT 'extra', * FROM (SELECT * FROM got EXCEPT SELECT * FROM want) y);

-- dimension changes: nothing is recomputed until asked
UPDATE rc_pages SET section = 'sport', w = 5 WHERE page = 1;
UPDATE rc_users SET plan = 'team' WHERE uid = 10;
DELETE FROM rc_users WHERE uid = 11;
SELECT section, plan, window_start, n, total, top_w FROM rc_agg_live ORDER BY window_start, section, plan;
SELECT max(seq) AS seq_before FROM streamforge.changelog WHERE pipeline = 'rc_agg' \gset

-- a rolled back recompute changes nothing
BEGIN;
SELECT * FROM streamforge.recompute('rc_agg');
ROLLBACK;
SELECT section, plan, window_start, n, total, top_w FROM rc_agg_live ORDER BY window_start, section, plan;

-- the accepted events of live windows are mapped: 4, 5 and 7 (events 1-3
-- are in the finalized first minute and keep their mapping; event 6 was
-- dropped, never accepted); 4 (page 1, user 11 gone), 5 (user 10) and 7
-- (user 11 gone: NULL plan) change
SELECT * FROM streamforge.recompute('rc_agg');
SELECT * FROM rc_diff;
-- the finalized first minute keeps what it was; the live second minute
-- is rebuilt
SELECT section, plan, window_start, n, total, mean, heavy, top_w, final
  FROM rc_agg ORDER BY window_start, section, plan;
-- the changes of the ready window went to the changelog: its old rows
-- retracted, the new ones upserted
SELECT op, key, window_start_ts, count, aggregates
  FROM streamforge.changelog
 WHERE pipeline = 'rc_agg' AND seq > :seq_before ORDER BY seq;
-- again: nothing changes
SELECT * FROM streamforge.recompute('rc_agg');

-- a range of event times: [from, to); only its events take the new row
UPDATE rc_pages SET section = 'tech2' WHERE page = 3;
UPDATE rc_pages SET w = 6 WHERE page = 2;
SELECT * FROM streamforge.recompute('rc_agg', '2026-12-01 12:02:00+00', '2026-12-01 12:03:00+00');
SELECT section, plan, window_start, n, total, top_w FROM rc_agg_live ORDER BY window_start, section, plan;
SELECT * FROM streamforge.recompute('rc_agg', NULL, '2026-12-01 12:02:00+00');
SELECT * FROM rc_diff;
-- the one-measure aggregate, whole
SELECT * FROM streamforge.recompute('rc_one');
SELECT section, window_start, n FROM rc_one_live ORDER BY window_start, section;

-- a late event is not decided again: it stays in the late output
INSERT INTO rc_clicks VALUES (8, 2, 10, 3, '2026-12-01 12:00:30+00');
SELECT event_id, section, plan, event_time FROM rc_agg_late;
UPDATE rc_pages SET section = 'late2' WHERE page = 2;
SELECT * FROM streamforge.recompute('rc_agg');
SELECT event_id, section, plan, event_time FROM rc_agg_late;

-- an accepted event that no longer passes the inner join is taken out:
-- event 7 (12:02:10) leaves the live window; event 3 (12:00:03) is in the
-- finalized minute and keeps its mapping and its final row; first in a
-- range without them
DELETE FROM rc_pages WHERE page = 3;
SELECT * FROM streamforge.recompute('rc_agg', '2026-12-01 12:01:00+00', '2026-12-01 12:02:00+00');
SELECT * FROM streamforge.recompute('rc_agg');
SELECT * FROM rc_diff;
SELECT section, plan, window_start, n, total, final FROM rc_agg ORDER BY window_start, section, plan;
SELECT section, plan, window_start, n, total FROM rc_agg_live ORDER BY window_start, section, plan;
SELECT * FROM streamforge.recompute('rc_agg');
SELECT * FROM streamforge.recompute('rc_one');
SELECT section, window_start, n FROM rc_one_live ORDER BY window_start, section;
-- the page comes back: a recompute adds no event the pipeline does not
-- hold; a re-delivery does, as the first delivery of an event an inner
-- join dropped: event 7 is aggregated again
INSERT INTO rc_pages VALUES (3, 'tech3', 3);
SELECT * FROM streamforge.recompute('rc_agg');
BEGIN;
CREATE TEMP TABLE again ON COMMIT DROP AS SELECT * FROM rc_clicks WHERE id = 7;
DELETE FROM rc_clicks WHERE id = 7;
INSERT INTO rc_clicks SELECT * FROM again;
COMMIT;
-- event 3 kept its mapping (page 3 as 'tech'): a re-delivery of it with
-- the row as it is now is an identity conflict, as before any recompute
BEGIN;
CREATE TEMP TABLE again ON COMMIT DROP AS SELECT * FROM rc_clicks WHERE id = 3;
DELETE FROM rc_clicks WHERE id = 3;
INSERT INTO rc_clicks SELECT * FROM again;
ROLLBACK;
SELECT * FROM rc_diff;
SELECT event_id, section, plan, event_time FROM rc_agg_late ORDER BY late_seq;
SELECT section, window_start, n FROM rc_one_live ORDER BY window_start, section;

-- the state is stored: a new session loads it, checkpoint/restore keeps it
\c
SET client_min_messages = warning;
SET TimeZone = 'UTC';
SELECT * FROM rc_diff;
SELECT section, window_start, n FROM rc_one_live ORDER BY window_start, section;
SELECT streamforge.restore('rc_agg', streamforge.checkpoint('rc_agg'));
SELECT streamforge.restore('rc_one', streamforge.checkpoint('rc_one'));
SELECT * FROM rc_diff;
SELECT section, window_start, n FROM rc_one_live ORDER BY window_start, section;
-- the offsets of the events taken out stay consumed, with no event
-- (the document after the checkpoint's 24-byte header, docs/checkpoint-format.md)
SELECT p ->> 'partition' AS partition, p -> 'deliveries' AS deliveries
  FROM jsonb_array_elements(convert_from(substring(streamforge.checkpoint('rc_one') FROM 25),
                                         'UTF8')::jsonb -> 'sources') AS p;
-- a re-delivery of an event re-mapped is a duplicate for both aggregates
-- once both are recomputed (before, rc_one's mapping of event 2 names the
-- old section: SF002, docs/joins.md)
UPDATE rc_pages SET section = 'news' WHERE page = 2;
BEGIN;
CREATE TEMP TABLE again ON COMMIT DROP AS SELECT * FROM rc_clicks WHERE id = 5;
DELETE FROM rc_clicks WHERE id = 5;
INSERT INTO rc_clicks SELECT * FROM again;
ROLLBACK;
SELECT * FROM streamforge.recompute('rc_one');
SELECT * FROM streamforge.recompute('rc_agg');
BEGIN;
CREATE TEMP TABLE again ON COMMIT DROP AS SELECT * FROM rc_clicks WHERE id = 5;
DELETE FROM rc_clicks WHERE id = 5;
INSERT INTO rc_clicks SELECT * FROM again;
COMMIT;
SELECT * FROM rc_diff;

-- errors
SELECT * FROM streamforge.recompute(NULL);
SELECT * FROM streamforge.recompute('rc_nope');
SELECT streamforge.create_pipeline('rc_plain', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)]);
SELECT * FROM streamforge.recompute('rc_plain');
SELECT streamforge.drop_pipeline('rc_plain');
CREATE ROLE regress_rc_reader;
GRANT USAGE ON SCHEMA streamforge TO regress_rc_reader;
SELECT streamforge.grant_privilege('rc_agg', 'regress_rc_reader', 'read');
GRANT SELECT ON rc_clicks TO regress_rc_reader;
SET ROLE regress_rc_reader;
SELECT * FROM streamforge.recompute('rc_agg');
-- the internal function checks admin too
SELECT * FROM streamforge_internal.recompute_measures('rc_agg', '{}', NULL, NULL, NULL);
RESET ROLE;
-- an admin recomputes only with the privileges of the source table's
-- owner, which the mapping runs with (below): an admin that is not a
-- member of that role is refused, with or without SELECT on the table
CREATE ROLE regress_rc_admin;
GRANT USAGE ON SCHEMA streamforge TO regress_rc_admin;
SELECT streamforge.grant_privilege('rc_agg', 'regress_rc_admin', 'admin');
SET ROLE regress_rc_admin;
\set VERBOSITY terse
SELECT * FROM streamforge.recompute('rc_agg');
RESET ROLE;
GRANT SELECT ON rc_clicks TO regress_rc_admin;
SET ROLE regress_rc_admin;
SELECT * FROM streamforge.recompute('rc_agg');
\set VERBOSITY default
RESET ROLE;
-- the wrong kind of mappings for the pipeline
SELECT * FROM streamforge_internal.recompute_events('rc_agg', '{}', NULL, NULL, NULL);
-- a mapping with another time than its event's
SELECT * FROM streamforge_internal.recompute_events('rc_one',
    ARRAY[ROW('default', '4', '{sport}', 0, 1)::streamforge.event], NULL, NULL, NULL);
-- one event mapped twice, differently
SELECT * FROM streamforge_internal.recompute_events('rc_one',
    ARRAY[ROW('default', '4', '{a}', 1796126463000000, 1)::streamforge.event,
          ROW('default', '4', '{b}', 1796126463000000, 1)::streamforge.event], NULL, NULL, NULL);
-- a NULL field
SELECT * FROM streamforge_internal.recompute_events('rc_one',
    ARRAY[ROW('default', '4', NULL, 1796126463000000, 1)::streamforge.event], NULL, NULL, NULL);

-- a top-N over a join (docs/sql-aggregates.md, Top-N per window): the
-- recompute's changes move rows in and out of the top 2, in top_changelog
CREATE TABLE rc_cat (auction integer PRIMARY KEY, category text NOT NULL);
INSERT INTO rc_cat VALUES (1, 'a'), (2, 'b'), (3, 'c');
CREATE TABLE rc_bids (id integer PRIMARY KEY, auction integer NOT NULL,
                      price integer NOT NULL, ts timestamptz NOT NULL);
SELECT streamforge.create_aggregate('rc_hot', $$
    SELECT * FROM (
        SELECT c.category, count(*) AS bids, max(b.price) AS top_price,
               ROW_NUMBER() OVER (PARTITION BY streamforge.tumble(b.ts, interval '1 minute')
                                  ORDER BY count(*) DESC) AS rn
          FROM rc_bids b JOIN rc_cat c ON c.auction = b.auction
         GROUP BY c.category, streamforge.tumble(b.ts, interval '1 minute')) AS t
     WHERE rn <= 2
$$, lateness => interval '1 minute');
INSERT INTO rc_bids VALUES (1, 1, 10, '2026-12-01 10:00:01+00'), (2, 2, 11, '2026-12-01 10:00:02+00'),
    (3, 2, 12, '2026-12-01 10:00:03+00'), (4, 3, 13, '2026-12-01 10:00:04+00'),
    (5, 3, 14, '2026-12-01 10:00:05+00'), (6, 3, 15, '2026-12-01 10:00:06+00');
SELECT count(*) FROM streamforge.advance_ts('rc_hot', 'default', '2026-12-01 10:01:30+00');
SELECT category, bids, top_price, rn FROM rc_hot_top ORDER BY window_start, rn;
SELECT max(seq) AS top_before FROM streamforge.top_changelog WHERE pipeline = 'rc_hot' \gset
-- auction 2 moves to category a: a has 3 bids (ties with c), b leaves
UPDATE rc_cat SET category = 'a' WHERE auction = 2;
SELECT * FROM streamforge.recompute('rc_hot');
SELECT category, bids, top_price, rn FROM rc_hot_top ORDER BY window_start, rn;
SELECT op, row ->> 'category' AS category, row ->> 'bids' AS bids
  FROM streamforge.top_changelog WHERE pipeline = 'rc_hot' AND seq > :top_before ORDER BY seq;
SELECT streamforge.drop_aggregate('rc_hot');
DROP TABLE rc_bids, rc_cat;

-- sessions: taking an event out, or moving it to another key, splits and
-- merges sessions; a piece past its lateness at once would be finalized
-- without being emitted, a session reaching a finalized one would count
-- its events again: refused (55000), nothing changes (the engine's own
-- entry, recompute_events, with the mappings given)
SELECT streamforge.create_pipeline('rc_s1', ARRAY['p'], ARRAY[streamforge.session('s', 10)], 5);
SELECT count(*) FROM streamforge.ingest('rc_s1', 'p', 0, 'e0', 'A', 0, 1);
SELECT count(*) FROM streamforge.ingest('rc_s1', 'p', 1, 'e8', 'A', 8, 1);
SELECT count(*) FROM streamforge.advance('rc_s1', 'p', 19);
-- taking e8 out of [0, 18) leaves [0, 10), past end + lateness (15 < 19)
SELECT * FROM streamforge_internal.recompute_events('rc_s1',
    ARRAY[ROW('p', 'e0', 'A', 0, 1)]::streamforge.event[], ARRAY['e8'], NULL, NULL);
SELECT key, window_start, window_end, count FROM streamforge.live('rc_s1');
SELECT streamforge.create_pipeline('rc_s2', ARRAY['p'], ARRAY[streamforge.session('s', 10)], 5);
SELECT count(*) FROM streamforge.ingest('rc_s2', 'p', 0, 'b0', 'B', 0, 1);
SELECT count(*) FROM streamforge.ingest('rc_s2', 'p', 1, 'a9', 'A', 9, 1);
SELECT count(*) FROM streamforge.ingest('rc_s2', 'p', 2, 'a15', 'A', 15, 1);
SELECT count(*) FROM streamforge.advance('rc_s2', 'p', 16);
-- B's [0, 10) is finalized (10 + 5 < 16); a9 moved to B would reach it
SELECT * FROM streamforge_internal.recompute_events('rc_s2',
    ARRAY[ROW('p', 'a9', 'B', 9, 1)]::streamforge.event[], NULL, NULL, NULL);
-- a15 moved to B makes a live session [15, 25) of B, apart: accepted
SELECT * FROM streamforge_internal.recompute_events('rc_s2',
    ARRAY[ROW('p', 'a15', 'B', 15, 1)]::streamforge.event[], NULL, NULL, NULL);
SELECT key, window_start, window_end, count FROM streamforge.live('rc_s2') ORDER BY key, window_start;
-- the offset of an event taken out holds no event: not a duplicate
SELECT * FROM streamforge_internal.recompute_events('rc_s2', '{}', ARRAY['a9'], NULL, NULL);
SELECT deliveries, accepted, duplicate_ids FROM streamforge.stats('rc_s2');
SELECT streamforge.drop_pipeline('rc_s1'), streamforge.drop_pipeline('rc_s2');

-- the mapping runs with the insert trigger's settings, whatever the
-- caller's: a timestamptz group key is the same text in Tokyo
CREATE TABLE rc_k (id integer PRIMARY KEY, opened timestamptz NOT NULL, at timestamptz NOT NULL);
SELECT streamforge.create_aggregate('rc_kagg', $$
    SELECT c.opened, count(*) AS n FROM rc_k c
     GROUP BY c.opened, streamforge.tumble(c.at, interval '1 minute') $$);
INSERT INTO rc_k VALUES (1, '2026-12-01 00:00:00+00', '2026-12-01 12:00:01+00'),
                        (2, '2026-12-01 00:00:00+00', '2026-12-01 12:00:02+00');
SET TimeZone = 'Asia/Tokyo';
SET DateStyle = 'SQL, DMY';
SELECT * FROM streamforge.recompute('rc_kagg');
RESET DateStyle;
SET TimeZone = 'UTC';
-- only the trigger attach() made, enabled, is read: a disabled look-alike
-- (the table owner's, with another filter) is not
CREATE TABLE rc_k_log (who text);
CREATE FUNCTION rc_k_evil() RETURNS boolean LANGUAGE sql
    AS $$ INSERT INTO rc_k_log VALUES (current_user) RETURNING true $$;
DO $d$
DECLARE a text[];
BEGIN
    SELECT streamforge_internal.trigger_args(tgargs) INTO a FROM pg_trigger
     WHERE tgrelid = 'rc_k'::regclass
       AND tgfoid = 'streamforge_internal.attached_insert()'::regprocedure;
    a[10] := 'public.rc_k_evil()';
    EXECUTE format('CREATE TRIGGER aaa AFTER INSERT ON rc_k REFERENCING NEW TABLE AS new_rows '
                   'FOR EACH STATEMENT EXECUTE FUNCTION streamforge_internal.attached_insert(%s)',
                   (SELECT string_agg(quote_literal(x), ', ') FROM unnest(a) AS x));
END $d$;
ALTER TABLE rc_k DISABLE TRIGGER aaa;
SELECT * FROM streamforge.recompute('rc_kagg');
SELECT count(*) AS evil_runs FROM rc_k_log;
-- the attachment's own trigger disabled: refused
ALTER TABLE rc_k DISABLE TRIGGER ALL;
SELECT * FROM streamforge.recompute('rc_kagg');
ALTER TABLE rc_k ENABLE TRIGGER ALL;
DROP TRIGGER aaa ON rc_k;
SELECT streamforge.drop_aggregate('rc_kagg');
DROP TABLE rc_k, rc_k_log;
DROP FUNCTION rc_k_evil();

-- a row the WHERE rejects may have a NULL time (it never made an event):
-- a range still works; and a row that shares an event_id with an event
-- and that the WHERE rejects does not take the event out
CREATE TABLE rc_n (id integer PRIMARY KEY, eid text NOT NULL, section text NOT NULL,
                   amount integer, at timestamptz);
SELECT streamforge.create_aggregate('rc_nagg', $$
    SELECT c.section, count(*) AS n FROM rc_n c WHERE c.amount > 0
     GROUP BY c.section, streamforge.tumble(c.at, interval '1 minute') $$,
    event_id => 'eid');
INSERT INTO rc_n VALUES (1, 'x', 'a', 1, '2026-12-01 12:00:01+00'), (2, 'y', 'a', 0, NULL),
                        (3, 'x', 'a', 0, '2026-12-01 12:00:01+00');
SELECT * FROM streamforge.recompute('rc_nagg', '2026-12-01 12:00:00+00');
SELECT * FROM streamforge.recompute('rc_nagg');
SELECT section, n FROM rc_nagg_live;
SELECT streamforge.drop_aggregate('rc_nagg');
DROP TABLE rc_n;

-- retention: once it has forgotten events, a recompute needs every live
-- window to hold remembered events only.  A retention as long as the
-- window (1 minute: the horizon is the watermark minus a minute, before
-- every live window's start) recomputes; a 2-minute hop with a 30-second
-- retention has a live window that starts before the horizon: refused.
SELECT streamforge.create_aggregate('rc_ret', $$
    SELECT d.section, count(*) AS n
      FROM rc_clicks c JOIN rc_pages d ON d.page = c.page
     GROUP BY d.section, streamforge.tumble(c.at, interval '1 minute')
$$, retention => interval '1 minute');
SELECT streamforge.create_aggregate('rc_ret2', $$
    SELECT d.section, count(*) AS n
      FROM rc_clicks c JOIN rc_pages d ON d.page = c.page
     GROUP BY d.section, streamforge.hop(c.at, interval '2 minutes', interval '1 minute')
$$, retention => interval '30 seconds');
INSERT INTO rc_clicks VALUES (20, 1, 10, 1, '2026-12-01 13:00:00+00');
SELECT * FROM streamforge.recompute('rc_ret');
INSERT INTO rc_clicks VALUES (21, 1, 10, 1, '2026-12-01 13:10:00+00'),
                             (22, 2, 10, 1, '2026-12-01 13:10:10+00');
SELECT count(*) FROM streamforge.advance_ts('rc_ret', 'default', '2026-12-01 13:10:00+00');
SELECT count(*) FROM streamforge.advance_ts('rc_ret2', 'default', '2026-12-01 13:10:00+00');
SELECT remembered_identities, forgotten_offsets FROM streamforge.stats('rc_ret');
UPDATE rc_pages SET section = 'ret' WHERE page = 1;
SELECT * FROM streamforge.recompute('rc_ret');
SELECT section, window_start, n FROM rc_ret_live ORDER BY window_start, section;
SELECT * FROM streamforge.recompute('rc_ret2');

-- the mapping runs as the source table's owner, in a security-restricted
-- operation (as REFRESH MATERIALIZED VIEW runs its query): a superuser who
-- recomputes an aggregate whose key calls its owner's code does not run
-- that code as a superuser, and the code cannot change the session
CREATE ROLE regress_rc_owner;
GRANT USAGE ON SCHEMA streamforge TO regress_rc_owner;
CREATE SCHEMA regress_rc_own AUTHORIZATION regress_rc_owner;
SET ROLE regress_rc_owner;
SET search_path = regress_rc_own;
CREATE TABLE regress_rc_own.rc_o (id integer PRIMARY KEY, page text NOT NULL,
                                  at timestamptz NOT NULL);
CREATE TABLE regress_rc_own.rc_o_log (who text, what text);
CREATE FUNCTION regress_rc_own.rc_o_note() RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
    BEGIN
        EXECUTE 'UNLISTEN rc_o_nothing';
        INSERT INTO regress_rc_own.rc_o_log VALUES (current_user, 'unrestricted');
    EXCEPTION WHEN insufficient_privilege THEN
        INSERT INTO regress_rc_own.rc_o_log VALUES (current_user, SQLERRM);
    END;
END $f$;
-- immutable by its declaration, not by what it calls
CREATE FUNCTION regress_rc_own.rc_o_key(p text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $f$
BEGIN
    PERFORM regress_rc_own.rc_o_note();
    RETURN p;
END $f$;
SELECT streamforge.create_aggregate('rc_own', $$
    SELECT regress_rc_own.rc_o_key(c.page) AS page, count(*) AS n FROM regress_rc_own.rc_o c
     GROUP BY regress_rc_own.rc_o_key(c.page), streamforge.tumble(c.at, interval '1 minute') $$);
INSERT INTO regress_rc_own.rc_o VALUES (1, '/a', '2026-12-01 12:00:01+00'),
                                       (2, '/b', '2026-12-01 12:00:02+00');
SELECT who, what, count(*) FROM regress_rc_own.rc_o_log GROUP BY 1, 2 ORDER BY 1, 2;
DELETE FROM regress_rc_own.rc_o_log;
RESET ROLE;
RESET search_path;
SELECT * FROM streamforge.recompute('rc_own');
SELECT who, what, count(*) FROM regress_rc_own.rc_o_log GROUP BY 1, 2 ORDER BY 1, 2;
SELECT page, n FROM regress_rc_own.rc_own_live ORDER BY page;
-- the owner may recompute too: the same
SET ROLE regress_rc_owner;
SELECT * FROM streamforge.recompute('rc_own');
RESET ROLE;
-- an admin of the aggregate that is not a member of the owner's role is
-- refused (the mapping would run with privileges it does not have, on
-- its demand); a member of the owner's role may recompute
CREATE ROLE regress_rc_member;
CREATE ROLE regress_rc_other;
GRANT regress_rc_owner TO regress_rc_member;
GRANT USAGE ON SCHEMA streamforge TO regress_rc_member, regress_rc_other;
SET ROLE regress_rc_owner;
SELECT streamforge.grant_privilege('rc_own', 'regress_rc_other', 'admin');
GRANT USAGE ON SCHEMA regress_rc_own TO regress_rc_other;
GRANT SELECT ON regress_rc_own.rc_o TO regress_rc_other;
RESET ROLE;
SET ROLE regress_rc_other;
SELECT * FROM streamforge.recompute('rc_own');
RESET ROLE;
SET ROLE regress_rc_member;
SELECT * FROM streamforge.recompute('rc_own');
RESET ROLE;
-- row-level security on the table, which its owner would bypass: refused
ALTER TABLE regress_rc_own.rc_o ENABLE ROW LEVEL SECURITY;
SELECT * FROM streamforge.recompute('rc_own');
ALTER TABLE regress_rc_own.rc_o DISABLE ROW LEVEL SECURITY;
SET ROLE regress_rc_owner;
SELECT streamforge.drop_aggregate('rc_own');
RESET ROLE;
DROP SCHEMA regress_rc_own CASCADE;
DROP OWNED BY regress_rc_owner, regress_rc_member, regress_rc_other;
DROP ROLE regress_rc_member, regress_rc_other, regress_rc_owner;

-- leave nothing for the tests that share the database
DROP VIEW rc_diff;
SELECT streamforge.drop_aggregate('rc_agg'), streamforge.drop_aggregate('rc_one'),
       streamforge.drop_aggregate('rc_ret'), streamforge.drop_aggregate('rc_ret2');
DROP TABLE rc_clicks, rc_pages, rc_users;
DROP OWNED BY regress_rc_reader, regress_rc_admin;
DROP ROLE regress_rc_reader, regress_rc_admin;
