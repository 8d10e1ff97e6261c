-- create_aggregate's query joins dimension tables (issue 47, items 1-3;
-- docs/joins.md).  Each view is printed next to the plain SQL join over
-- the same events with the dimension as it was at each insert (as of
-- ingestion) or as of each event's time (a validity range).
SET client_min_messages = warning;
SET TimeZone = 'UTC';
CREATE TABLE pages (page integer PRIMARY KEY, section text NOT NULL);
CREATE TABLE users (uid integer PRIMARY KEY, plan text);
CREATE TABLE clicks (id integer PRIMARY KEY, page integer, uid integer,
                     amount integer NOT NULL, at timestamptz NOT NULL);
INSERT INTO pages VALUES (1, 'news'), (2, 'news'), (3, 'sport');
INSERT INTO users VALUES (10, 'free'), (11, 'pro');

-- 1. inner join, GROUP BY and an aggregate over dimension columns
SELECT streamforge.create_aggregate('by_section', $$
    SELECT d.section, count(*) AS n, sum(c.amount) AS total
      FROM clicks c JOIN pages d ON d.page = c.page
     GROUP BY d.section, streamforge.tumble(c.at, interval '1 minute')
$$, out_of_orderness => interval '10 seconds');
-- 2. two left joins (the second on a nullable column of the source)
SELECT streamforge.create_aggregate('by_plan', $$
    SELECT d.section, u.plan, count(*) AS n, max(c.amount) AS top
      FROM clicks c LEFT JOIN pages d ON c.page = d.page
           LEFT JOIN users u ON u.uid = c.uid
     GROUP BY d.section, u.plan, streamforge.tumble(c.at, interval '1 minute')
$$);
-- what the plan made of it: lookups in the mapping, the joins in the spec
SELECT jsonb_pretty(spec -> 'joins') FROM streamforge.aggregate WHERE name = 'by_section';

-- a reference: every insert also records the plain join as it is now
CREATE TABLE ref (id integer, section text, plan text, inner_ok boolean,
                  amount integer, at timestamptz);
CREATE FUNCTION ins(rows text) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
    EXECUTE 'CREATE TEMP TABLE batch ON COMMIT DROP AS SELECT * FROM (VALUES ' || rows
            || ') AS v(id, page, uid, amount, at)';
    INSERT INTO ref SELECT b.id, d.section, u.plan, d.page IS NOT NULL, b.amount, b.at::timestamptz
      FROM batch b LEFT JOIN pages d ON d.page = b.page LEFT JOIN users u ON u.uid = b.uid;
    INSERT INTO clicks SELECT id, page, uid, amount, at::timestamptz FROM batch;
    DROP TABLE batch;
END
$f$;
SELECT ins($$(1, 1, 10, 5, '2026-12-01 12:00:01'), (2, 3, 11, 7, '2026-12-01 12:00:02'),
             (3, 9, 10, 1, '2026-12-01 12:00:03'), (4, 2, NULL, 2, '2026-12-01 12:00:04')$$);
-- page 1 moves to sport, page 9 appears, user 11 goes free: later events
-- see the new rows, the earlier ones stay as aggregated
UPDATE pages SET section = 'sport' WHERE page = 1;
INSERT INTO pages VALUES (9, 'blog');
UPDATE users SET plan = 'free' WHERE uid = 11;
SELECT ins($$(5, 1, 11, 3, '2026-12-01 12:00:05'), (6, 9, 12, 4, '2026-12-01 12:00:06')$$);
-- in one transaction: a dimension change is seen by the next insert
BEGIN;
DELETE FROM pages WHERE page = 2;
SELECT ins($$(7, 2, 10, 8, '2026-12-01 12:00:07'), (8, 3, 10, 6, '2026-12-01 12:00:08')$$);
COMMIT;
-- a rolled back insert leaves nothing, a rolled back dimension change too
BEGIN;
UPDATE pages SET section = 'gone';
SELECT ins($$(9, 3, 10, 100, '2026-12-01 12:00:09')$$);
ROLLBACK;
-- by_section: news@12:00: events 1, 4 (5 + 2); sport: 2, 5, 8 (7 + 3 + 6);
-- blog: 6 (4); events 3 (page 9 before it existed) and 7 (page 2 deleted)
-- dropped
SELECT section, window_start, n, total FROM by_section_live ORDER BY 1;
SELECT section, streamforge.tumble(at, interval '1 minute'), count(*), sum(amount)
  FROM ref WHERE inner_ok GROUP BY 1, 2 ORDER BY 1;
-- by_plan: the events without a page or a user in NULL groups
SELECT section, plan, window_start, n, top FROM by_plan_live ORDER BY 1, 2;
SELECT section, plan, streamforge.tumble(at, interval '1 minute'), count(*), max(amount)
  FROM ref GROUP BY 1, 2, 3 ORDER BY 1, 2;
-- the dropped events are counted (this session's counters)
SELECT pipeline, join_no, dimension, dropped FROM streamforge.join_stats() ORDER BY 1, 2;
-- cold load: the lookups of a new session see the same spec
\c
SET client_min_messages = warning;
SET TimeZone = 'UTC';
SELECT ins($$(10, 3, 11, 9, '2026-12-01 12:00:10')$$);
SELECT section, n, total FROM by_section_live ORDER BY 1;
-- a window closed: the durable results
SELECT ins($$(11, 3, 10, 1, '2026-12-01 12:02:00')$$);
SELECT section, window_start, n, total FROM by_section ORDER BY 1, 2;

-- 3. as of event time: a history with a validity range, and one with
-- valid_from/valid_to columns
CREATE TABLE page_hist (page integer, section text, valid tstzrange,
                        PRIMARY KEY (page, valid));
INSERT INTO page_hist VALUES
    (1, 'news', '[2026-12-01 00:00, 2026-12-01 12:00:30)'),
    (1, 'sport', '[2026-12-01 12:00:30,)');
CREATE TABLE user_hist (uid integer, plan text, valid_from timestamptz,
                        valid_to timestamptz, PRIMARY KEY (uid, valid_from));
INSERT INTO user_hist VALUES (10, 'free', '2026-12-01', '2026-12-01 12:00:40'),
                             (10, 'pro', '2026-12-01 12:00:40', 'infinity');
CREATE TABLE views (id integer PRIMARY KEY, page integer, uid integer,
                    at timestamptz NOT NULL);
SELECT streamforge.create_aggregate('by_version', $$
    SELECT h.section, u.plan, count(*) AS n
      FROM views v JOIN page_hist h ON h.page = v.page AND v.at <@ h.valid
           LEFT JOIN user_hist u ON u.uid = v.uid AND u.valid_from <= v.at AND v.at < u.valid_to
     GROUP BY h.section, u.plan, streamforge.tumble(v.at, interval '1 minute')
$$, lateness => interval '1 hour');
SELECT jsonb_pretty(spec -> 'joins') FROM streamforge.aggregate WHERE name = 'by_version';
INSERT INTO views VALUES (1, 1, 10, '2026-12-01 12:00:10'), (2, 1, 10, '2026-12-01 12:00:35'),
                         (3, 1, 10, '2026-12-01 12:00:45'), (4, 2, 10, '2026-12-01 12:00:50');
-- a late event (12:00:20) after the history moved on: the version of its
-- time, news and free, as if on time; a re-delivery of event 2 (deleted
-- and inserted again) changes nothing
INSERT INTO views VALUES (5, 1, 10, '2026-12-01 12:00:20');
DELETE FROM views WHERE id = 2;
INSERT INTO views VALUES (2, 1, 10, '2026-12-01 12:00:35');
-- news/free: 1, 5; sport/free: 2; sport/pro: 3; event 4 dropped (no page 2)
SELECT section, plan, window_start, n FROM by_version_live ORDER BY 1, 2;
SELECT h.section, u.plan, count(*)
  FROM views v JOIN page_hist h ON h.page = v.page AND v.at <@ h.valid
       LEFT JOIN user_hist u ON u.uid = v.uid AND u.valid_from <= v.at AND v.at < u.valid_to
 GROUP BY 1, 2 ORDER BY 1, 2;
-- checkpoint and restore: the lookups are in the mapping, not the state
SELECT streamforge.restore('by_version', streamforge.checkpoint('by_version'));
INSERT INTO views VALUES (6, 1, 10, '2026-12-01 12:00:31');
SELECT section, plan, n FROM by_version_live ORDER BY 1, 2;

-- 4. refusals (0A000, with a hint): no unique index on the join columns,
-- a condition that is not an equality of the key, RIGHT JOIN, USING, a
-- list of tables, row-level security
CREATE TABLE tags (page integer, tag text);
SELECT streamforge.create_aggregate('bad', $$
    SELECT t.tag, count(*) FROM clicks c JOIN tags t ON t.page = c.page
     GROUP BY t.tag, streamforge.tumble(c.at, interval '1 minute') $$);
SELECT streamforge.create_aggregate('bad', $$
    SELECT d.section, count(*) FROM clicks c JOIN pages d ON d.section = 'x'
     GROUP BY d.section, streamforge.tumble(c.at, interval '1 minute') $$);
SELECT streamforge.create_aggregate('bad', $$
    SELECT d.section, count(*) FROM clicks c JOIN pages d ON d.page > c.page
     GROUP BY d.section, streamforge.tumble(c.at, interval '1 minute') $$);
SELECT streamforge.create_aggregate('bad', $$
    SELECT d.section, count(*) FROM clicks c RIGHT JOIN pages d ON d.page = c.page
     GROUP BY d.section, streamforge.tumble(c.at, interval '1 minute') $$);
SELECT streamforge.create_aggregate('bad', $$
    SELECT count(*) FROM clicks c JOIN pages d USING (page)
     GROUP BY streamforge.tumble(c.at, interval '1 minute') $$);
SELECT streamforge.create_aggregate('bad', $$
    SELECT d.section, count(*) FROM clicks c, pages d WHERE d.page = c.page
     GROUP BY d.section, streamforge.tumble(c.at, interval '1 minute') $$);
ALTER TABLE tags ADD PRIMARY KEY (page);
ALTER TABLE tags ENABLE ROW LEVEL SECURITY;
SELECT streamforge.create_aggregate('bad', $$
    SELECT t.tag, count(*) FROM clicks c JOIN tags t ON t.page = c.page
     GROUP BY t.tag, streamforge.tumble(c.at, interval '1 minute') $$);
-- as of event time, the start of the validity must complete the unique key
CREATE TABLE hist2 (page integer PRIMARY KEY, section text, valid tstzrange);
SELECT streamforge.create_aggregate('bad', $$
    SELECT h.section, count(*) FROM clicks c JOIN hist2 h ON h.page = c.page AND c.at <@ h.valid
     GROUP BY h.section, streamforge.tumble(c.at, interval '1 minute') $$);
SELECT count(*) FROM streamforge.aggregate WHERE name = 'bad';

-- 5. privileges: the aggregate reads the dimension as its creator
RESET client_min_messages;
CREATE ROLE regress_sf_join_creator;
CREATE ROLE regress_sf_join_writer;
GRANT USAGE ON SCHEMA streamforge TO regress_sf_join_creator, regress_sf_join_writer;
CREATE TABLE secret_pages (page integer PRIMARY KEY, section text);
INSERT INTO secret_pages VALUES (1, 'hidden');
CREATE TABLE hits (id integer PRIMARY KEY, page integer, at timestamptz NOT NULL);
ALTER TABLE hits OWNER TO regress_sf_join_creator;
GRANT CREATE ON SCHEMA public TO regress_sf_join_creator;
GRANT SELECT ON secret_pages TO regress_sf_join_creator;
SET ROLE regress_sf_join_creator;
SELECT streamforge.create_aggregate('hits_by_section', $$
    SELECT s.section, count(*) AS n FROM hits h JOIN secret_pages s ON s.page = h.page
     GROUP BY s.section, streamforge.tumble(h.at, interval '1 minute') $$);
SELECT streamforge.grant_privilege('hits_by_section', 'regress_sf_join_writer', 'ingest');
GRANT INSERT ON hits TO regress_sf_join_writer;
RESET ROLE;
-- the writer cannot read the dimension, its events are enriched anyway
SET ROLE regress_sf_join_writer;
SELECT * FROM secret_pages;
INSERT INTO hits VALUES (1, 1, '2026-12-01 12:00:00');
-- a direct call reads what the aggregate reads, for a role that may ingest
-- into it; refused on a pipeline it may not ingest into (42501)
SELECT streamforge_internal.join_value(NULL::integer, 'hits_by_section', 1, 'page', NULL, 1);
SELECT streamforge_internal.join_value(NULL::text, 'by_section', 1, 'section', NULL, 1);
RESET ROLE;
SELECT section, n FROM hits_by_section_live;
-- the creator loses SELECT: every later insert is refused (42501)
REVOKE SELECT ON secret_pages FROM regress_sf_join_creator;
SET ROLE regress_sf_join_writer;
\set VERBOSITY default
INSERT INTO hits VALUES (2, 1, '2026-12-01 12:00:01');
RESET ROLE;
-- row-level security enabled after the creation: refused at ingest (0A000)
GRANT SELECT ON secret_pages TO regress_sf_join_creator;
ALTER TABLE secret_pages ENABLE ROW LEVEL SECURITY;
SET ROLE regress_sf_join_writer;
INSERT INTO hits VALUES (3, 1, '2026-12-01 12:00:02');
RESET ROLE;
ALTER TABLE secret_pages DISABLE ROW LEVEL SECURITY;
SET ROLE regress_sf_join_writer;
INSERT INTO hits VALUES (4, 1, '2026-12-01 12:00:03');
RESET ROLE;
SELECT section, n FROM hits_by_section_live;
SET client_min_messages = warning;
SELECT streamforge.drop_aggregate('hits_by_section');
DROP TABLE hits;
REVOKE ALL ON secret_pages FROM regress_sf_join_creator;
REVOKE CREATE ON SCHEMA public FROM regress_sf_join_creator;
REVOKE USAGE ON SCHEMA streamforge FROM regress_sf_join_creator, regress_sf_join_writer;
DROP ROLE regress_sf_join_creator;
DROP ROLE regress_sf_join_writer;

-- leave nothing for the tests that share the database
SELECT streamforge.drop_aggregate(n) FROM unnest(ARRAY['by_section', 'by_plan', 'by_version']) AS n;
DROP TABLE clicks, pages, users, ref, page_hist, user_hist, views, tags, hist2, secret_pages;
DROP FUNCTION ins(text);
