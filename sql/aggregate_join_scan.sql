-- The dimension lookups' open index scans (issue 47 item 4, docs/joins.md
-- "Cost"): a call site keeps its scan open from its first probe to the end
-- of the statement, and an error releases it.  Here: statements that fail
-- after their probes (at top level, in a savepoint, in a PL/pgSQL
-- exception block), each followed by inserts and by DDL on the dimension
-- in the same transaction, which PostgreSQL refuses while a scan of this
-- session still uses the table; the results against the plain SQL join.
-- And a column added to the dimension with a default after its rows: the
-- lookup reads the default, as the plain query does.
SET client_min_messages = warning;
SET TimeZone = 'UTC';
\set VERBOSITY terse
CREATE TABLE sc_pages (page integer PRIMARY KEY, section text NOT NULL);
INSERT INTO sc_pages SELECT g, 's' || (g % 3) FROM generate_series(1, 100) AS g;
CREATE TABLE sc_clicks (id integer PRIMARY KEY, page integer,
                        amount integer NOT NULL, div integer NOT NULL,
                        at timestamptz NOT NULL);
SELECT streamforge.create_aggregate('sc_by_section', $$
    SELECT d.section, count(*) AS n, sum(c.amount / c.div) AS total
      FROM sc_clicks c JOIN sc_pages d ON d.page = c.page
     GROUP BY d.section, streamforge.tumble(c.at, interval '1 minute') $$);
-- the events ids lo..hi; div 0 on id bad (division by zero after the
-- probes of the rows before it)
CREATE FUNCTION sc_ins(lo integer, hi integer, bad integer DEFAULT 0)
RETURNS void LANGUAGE sql AS $$
    INSERT INTO sc_clicks
    SELECT g, g % 120, g % 7, CASE WHEN g = bad THEN 0 ELSE 1 END,
           '2026-12-01 12:00:00+00'::timestamptz + g * interval '1 second'
      FROM generate_series(lo, hi) AS g $$;
-- the aggregate next to the plain join: the rows that differ (none)
CREATE FUNCTION sc_diff() RETURNS TABLE (side text, section text,
    window_start timestamptz, n bigint, total bigint) LANGUAGE sql AS $$
    WITH agg AS (SELECT v.section, v.window_start, v.n, v.total::bigint AS total
                   FROM sc_by_section_live v),
         ref AS (SELECT d.section, streamforge.tumble(c.at, interval '1 minute') AS window_start,
                        count(*) AS n, sum(c.amount / c.div)::bigint AS total
                   FROM sc_clicks c JOIN sc_pages d ON d.page = c.page
                  GROUP BY 1, 2)
    (SELECT 'agg', * FROM agg EXCEPT SELECT 'agg', * FROM ref)
    UNION ALL
    (SELECT 'ref', * FROM ref EXCEPT SELECT 'ref', * FROM agg) $$;

-- 1. a failed statement at top level, then inserts and an ALTER TABLE of
-- the dimension in one transaction
SELECT sc_ins(1, 40, 30);
BEGIN;
SELECT sc_ins(1, 20);
SELECT sc_ins(21, 40);
ALTER TABLE sc_pages ALTER COLUMN section SET STATISTICS 50;
COMMIT;
SELECT * FROM sc_diff();

-- 2. in a savepoint: a statement fails after its probes, is rolled back,
-- the transaction goes on and alters the dimension
BEGIN;
SAVEPOINT a;
SELECT sc_ins(41, 80, 75);
ROLLBACK TO SAVEPOINT a;
SELECT sc_ins(41, 60);
SAVEPOINT b;
SELECT sc_ins(61, 80);
RELEASE SAVEPOINT b;
ALTER TABLE sc_pages ALTER COLUMN section SET STATISTICS 60;
COMMIT;
SELECT * FROM sc_diff();

-- 3. in a PL/pgSQL exception block, twice in one statement, then inserts
-- that see a dimension row changed by the block, and an ALTER TABLE
BEGIN;
DO $$
BEGIN
    BEGIN
        PERFORM sc_ins(81, 100, 90);
    EXCEPTION WHEN division_by_zero THEN
        UPDATE sc_pages SET section = 'moved' WHERE page = 95;
    END;
    BEGIN
        PERFORM sc_ins(81, 100, 99);
    EXCEPTION WHEN division_by_zero THEN
        NULL;
    END;
    PERFORM sc_ins(81, 100);
END $$;
ALTER TABLE sc_pages ALTER COLUMN section SET STATISTICS 70;
COMMIT;
SELECT count(*) AS events, count(*) FILTER (WHERE page = 95) AS moved FROM sc_clicks;
SELECT * FROM sc_diff();
SELECT n FROM sc_by_section_live WHERE section = 'moved';

-- 4. a column added with a default after the rows were written (stored
-- as a missing value of the old rows): the lookup reads 'eu'
ALTER TABLE sc_pages ADD COLUMN region text NOT NULL DEFAULT 'eu';
SELECT streamforge.create_aggregate('sc_by_region', $$
    SELECT d.region, count(*) AS n
      FROM sc_clicks c JOIN sc_pages d ON d.page = c.page
     GROUP BY d.region, streamforge.tumble(c.at, interval '1 hour') $$);
INSERT INTO sc_pages VALUES (101, 's2', 'us');
-- index entries of dead rows (the keys moved away and back): the probes
-- that meet them mark them killed, memory the scan keeps to its end
UPDATE sc_pages SET page = page + 1000 WHERE page BETWEEN 1 AND 5;
UPDATE sc_pages SET page = page - 1000 WHERE page > 1000;
SELECT sc_ins(101, 125);
SELECT region, n FROM sc_by_region_live ORDER BY region;
SELECT d.region, count(*) AS n FROM sc_clicks c JOIN sc_pages d ON d.page = c.page
 WHERE c.id > 100 GROUP BY d.region ORDER BY d.region;

-- 5. the counters are the session's and not transactional: the rolled
-- back statement's probes and drops are counted (pages 101..105: 102 to
-- 105 missing); a DISCARD ALL keeps them
SELECT pipeline, join_no, dimension, probes, misses, dropped
  FROM streamforge.join_stats() WHERE pipeline = 'sc_by_region';
BEGIN;
SELECT sc_ins(221, 225);
ROLLBACK;
SELECT pipeline, join_no, dimension, probes, misses, dropped
  FROM streamforge.join_stats() WHERE pipeline = 'sc_by_region';
DISCARD ALL;
SELECT pipeline, join_no, dimension, probes, misses, dropped
  FROM streamforge.join_stats() WHERE pipeline = 'sc_by_region';
SET client_min_messages = warning;

SELECT streamforge.drop_aggregate(n) FROM unnest(ARRAY['sc_by_section', 'sc_by_region']) AS n;
DROP TABLE sc_clicks, sc_pages;
DROP FUNCTION sc_ins(integer, integer, integer);
DROP FUNCTION sc_diff();
