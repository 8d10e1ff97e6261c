-- create_aggregate (issue 29): every construct outside the supported form
-- is refused with 0A000 and a message naming it; nothing is created.
-- FILTER on any aggregate and nullable arguments are accepted since 0.4.0
-- (issue 38, defect 5: aggregate_sql_nullable); their rows say accepted
-- (try drops what it created).
SET client_min_messages = warning;
CREATE TABLE ev (id bigint PRIMARY KEY, page text NOT NULL, n integer NOT NULL,
                 m integer, f double precision NOT NULL, at timestamptz NOT NULL);
CREATE TABLE other (id bigint PRIMARY KEY, page text);
CREATE VIEW ev_view AS SELECT * FROM ev;
CREATE TABLE ev_parted (id bigint, at timestamptz NOT NULL) PARTITION BY RANGE (at);
CREATE TABLE ev_rls (id bigint PRIMARY KEY, at timestamptz NOT NULL);
ALTER TABLE ev_rls ENABLE ROW LEVEL SECURITY;

CREATE FUNCTION pg_temp.try(q text, emit text DEFAULT 'update',
                            ooo interval DEFAULT NULL) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM streamforge.create_aggregate('refused', q, emit => emit,
                                         out_of_orderness => ooo);
    PERFORM streamforge.drop_aggregate('refused');
    RETURN 'accepted';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END
$$;

SELECT construct, pg_temp.try(q) AS outcome
  FROM (VALUES
    ('two statements', $$SELECT 1; SELECT 2$$),
    ('not a SELECT', $$INSERT INTO other VALUES (1, 'x')$$),
    ('VALUES', $$VALUES (1)$$),
    ('WITH', $$WITH e AS (SELECT * FROM ev) SELECT count(*) FROM e GROUP BY streamforge.tumble(now(), '1 minute')$$),
    ('UNION', $$SELECT count(*) FROM ev GROUP BY streamforge.tumble(at, '1 minute') UNION SELECT 1$$),
    ('DISTINCT', $$SELECT DISTINCT page, count(*) FROM ev GROUP BY page, streamforge.tumble(at, '1 minute')$$),
    ('HAVING', $$SELECT page, count(*) FROM ev GROUP BY page, streamforge.tumble(at, '1 minute') HAVING count(*) > 1$$),
    ('ORDER BY', $$SELECT page, count(*) FROM ev GROUP BY page, streamforge.tumble(at, '1 minute') ORDER BY page$$),
    ('LIMIT', $$SELECT page, count(*) FROM ev GROUP BY page, streamforge.tumble(at, '1 minute') LIMIT 10$$),
    ('window function', $$SELECT page, count(*), rank() OVER () FROM ev GROUP BY page, streamforge.tumble(at, '1 minute')$$),
    ('GROUPING SETS', $$SELECT page, count(*) FROM ev GROUP BY ROLLUP (page), streamforge.tumble(at, '1 minute')$$),
    ('subquery in WHERE', $$SELECT page, count(*) FROM ev WHERE page IN (SELECT page FROM other) GROUP BY page, streamforge.tumble(at, '1 minute')$$),
    ('set-returning function', $$SELECT page, count(*), generate_series(1, 2) FROM ev GROUP BY page, streamforge.tumble(at, '1 minute')$$),
    ('join', $$SELECT ev.page, count(*) FROM ev JOIN other USING (id) GROUP BY ev.page, streamforge.tumble(at, '1 minute')$$),
    ('two tables', $$SELECT ev.page, count(*) FROM ev, other GROUP BY ev.page, streamforge.tumble(at, '1 minute')$$),
    ('subquery in FROM', $$SELECT page, count(*) FROM (SELECT * FROM ev) AS s GROUP BY page, streamforge.tumble(at, '1 minute')$$),
    ('function in FROM', $$SELECT count(*) FROM generate_series(1, 3) AS g GROUP BY streamforge.tumble(now(), '1 minute')$$),
    ('TABLESAMPLE', $$SELECT page, count(*) FROM ev TABLESAMPLE SYSTEM (10) GROUP BY page, streamforge.tumble(at, '1 minute')$$),
    ('ONLY', $$SELECT page, count(*) FROM ONLY ev GROUP BY page, streamforge.tumble(at, '1 minute')$$),
    ('a view', $$SELECT page, count(*) FROM ev_view GROUP BY page, streamforge.tumble(at, '1 minute')$$),
    ('a partitioned table', $$SELECT count(*) FROM ev_parted GROUP BY streamforge.tumble(at, '1 minute')$$),
    ('row-level security', $$SELECT count(*) FROM ev_rls GROUP BY streamforge.tumble(at, '1 minute')$$),
    ('no GROUP BY', $$SELECT count(*) FROM ev$$),
    ('no window', $$SELECT page, count(*) FROM ev GROUP BY page$$),
    ('two windows', $$SELECT count(*) FROM ev GROUP BY streamforge.tumble(at, '1 minute'), streamforge.tumble(at, '1 hour')$$),
    ('window in the select list', $$SELECT streamforge.tumble(at, '1 minute') AS w, count(*) FROM ev GROUP BY 1$$),
    ('window in WHERE', $$SELECT count(*) FROM ev WHERE streamforge.tumble(at, '1 minute') > now() GROUP BY streamforge.tumble(at, '1 minute')$$),
    ('window in an aggregate', $$SELECT max(streamforge.tumble(at, '1 minute')) FROM ev GROUP BY streamforge.session(at, '1 minute')$$),
    ('session window outside the GROUP BY', $$SELECT count(*) FROM ev WHERE streamforge.session(at, '1 minute') IS NULL GROUP BY streamforge.tumble(at, '1 minute')$$),
    ('window size not a constant', $$SELECT count(*) FROM ev GROUP BY streamforge.tumble(at, n * interval '1 minute')$$),
    ('window size of months', $$SELECT count(*) FROM ev GROUP BY streamforge.tumble(at, interval '1 month')$$),
    ('window size of 0', $$SELECT count(*) FROM ev GROUP BY streamforge.tumble(at, interval '0 minutes')$$),
    ('hop slide of 0', $$SELECT count(*) FROM ev GROUP BY streamforge.hop(at, interval '1 minute', interval '0 minutes')$$),
    ('volatile window time', $$SELECT count(*) FROM ev GROUP BY streamforge.tumble(clock_timestamp(), '1 minute')$$),
    ('column neither grouped nor aggregated', $$SELECT page, n, count(*) FROM ev GROUP BY page, streamforge.tumble(at, '1 minute')$$),
    ('expression over grouped columns', $$SELECT upper(page), count(*) FROM ev GROUP BY page, streamforge.tumble(at, '1 minute')$$),
    ('unsupported aggregate', $$SELECT string_agg(page, ',') FROM ev GROUP BY streamforge.tumble(at, '1 minute')$$),
    ('DISTINCT in an aggregate', $$SELECT sum(DISTINCT n) FROM ev GROUP BY streamforge.tumble(at, '1 minute')$$),
    ('ORDER BY in an aggregate', $$SELECT sum(n ORDER BY n) FROM ev GROUP BY streamforge.tumble(at, '1 minute')$$),
    ('FILTER', $$SELECT sum(n) FILTER (WHERE n > 1) FROM ev GROUP BY streamforge.tumble(at, '1 minute')$$),
    ('ordered-set aggregate', $$SELECT mode() WITHIN GROUP (ORDER BY n) FROM ev GROUP BY streamforge.tumble(at, '1 minute')$$),
    ('system column', $$SELECT count(*) FROM ev WHERE xmin::text <> '' GROUP BY streamforge.tumble(at, '1 minute')$$),
    ('whole-row reference', $$SELECT count(*) FROM ev GROUP BY ev, streamforge.tumble(at, '1 minute')$$),
    ('volatile function in WHERE', $$SELECT count(*) FROM ev WHERE random() < 0.5 GROUP BY streamforge.tumble(at, '1 minute')$$),
    ('volatile function in GROUP BY', $$SELECT count(*) FROM ev GROUP BY random() < 0.5, streamforge.tumble(at, '1 minute')$$),
    ('no aggregate', $$SELECT page FROM ev GROUP BY page, streamforge.tumble(at, '1 minute')$$),
    ('aggregate named final', $$SELECT count(*) AS final FROM ev GROUP BY streamforge.tumble(at, '1 minute')$$),
    ('two measures, one nullable', $$SELECT sum(n), max(m) FROM ev GROUP BY streamforge.tumble(at, '1 minute')$$),
    ('measure of type double precision', $$SELECT sum(f) FROM ev GROUP BY streamforge.tumble(at, '1 minute')$$),
    ('count(*) with a nullable measure', $$SELECT count(*), sum(m) FROM ev GROUP BY streamforge.tumble(at, '1 minute')$$),
    ('session over a nullable measure', $$SELECT max(m) FROM ev GROUP BY streamforge.session(at, '1 minute')$$)
  ) AS t(construct, q);

-- an unknown emit mode, a negative out-of-orderness
SELECT pg_temp.try($$SELECT count(*) FROM ev GROUP BY streamforge.tumble(at, '1 minute')$$,
                   emit => 'sometimes') AS emit_unknown;
SELECT pg_temp.try($$SELECT count(*) FROM ev GROUP BY streamforge.tumble(at, '1 minute')$$,
                   ooo => interval '-5 seconds') AS negative_out_of_orderness;

-- PostgreSQL's own errors come first, with their codes
SELECT pg_temp.try($$SELECT count(*) FROM nosuch GROUP BY streamforge.tumble(now(), '1 minute')$$) AS unknown_table;
SELECT pg_temp.try($$SELEC count(*)$$) AS syntax_error;

-- nothing was made
SELECT count(*) AS pipelines FROM streamforge.pipeline;
SELECT count(*) AS aggregates FROM streamforge.aggregate;
SELECT count(*) AS attachments FROM streamforge.attachments;

-- its tables go, for a later test that names its own ev (installcheck
-- runs every test in one database)
DROP VIEW ev_view;
DROP TABLE ev, other, ev_parted, ev_rls;
