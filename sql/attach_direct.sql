-- The attached table's trigger evaluates the rows plan's expressions
-- itself (issue 42 item 3, issue 47 item 4; persist/attach_rows.c,
-- rows_direct): a key ARRAY[(e)::text, ...]::text is written from its
-- elements as array_out writes a text[], a measures attachment's measures
-- come as words, an integer cast to text is written as its output
-- function writes it; anything else (a subquery) runs the plan.  Every
-- key below is compared with the text PostgreSQL's own array_out makes
-- of the same elements, and the hand-checked list shows the quoting.
SET client_min_messages = warning;
SET TimeZone = 'UTC';

-- text keys: quoting of every kind, NULL, multibyte; a second part of
-- every integer type
CREATE TABLE dk (id integer PRIMARY KEY, t text, s smallint, i integer,
                 b bigint, v integer, at timestamptz NOT NULL);
SELECT streamforge.create_aggregate('dk_agg', $q$
    SELECT t, s, i, b, count(*) AS n, sum(v) AS total FROM dk
     GROUP BY t, s, i, b, streamforge.tumble(at, interval '1 hour') $q$);
INSERT INTO dk VALUES
    (1, 'plain', 1, 1, 1, 1, '2026-12-01 10:00'),
    (2, '', -32768, -2147483648, -9223372036854775808, 2, '2026-12-01 10:01'),
    (3, 'NULL', 32767, 2147483647, 9223372036854775807, 4, '2026-12-01 10:02'),
    (4, 'nUlL', 0, 0, 0, 8, '2026-12-01 10:03'),
    (5, NULL, NULL, NULL, NULL, 16, '2026-12-01 10:04'),
    (6, 'a b', 7, 7, 7, 32, '2026-12-01 10:05'),
    (7, 'a,b', 7, 7, 7, 64, '2026-12-01 10:06'),
    (8, 'say "hi"', 7, 7, 7, 128, '2026-12-01 10:07'),
    (9, 'back\slash', 7, 7, 7, 256, '2026-12-01 10:08'),
    (10, '{braces}', 7, 7, 7, 512, '2026-12-01 10:09'),
    (11, E'tab\there', 7, 7, 7, 1024, '2026-12-01 10:10'),
    (12, E'line\nbreak', 7, 7, 7, 2048, '2026-12-01 10:11'),
    (13, 'été', 7, 7, 7, 4096, '2026-12-01 10:12'),
    (14, 'NULLS', 7, 7, 7, 8192, '2026-12-01 10:13'),
    (15, 'plain', 1, 1, 1, 16384, '2026-12-01 10:14');
-- the pipeline's keys, as written (hand-checked: quoted when empty,
-- "NULL" in any case, or holding white space, a comma, a quote, a
-- backslash or a brace; a NULL part bare)
SELECT key, count FROM streamforge.live_aggregates_ts('dk_agg') ORDER BY count DESC, key COLLATE "C";
-- the same bytes as array_out's, for every row
SELECT (SELECT count(*) FROM streamforge.live_aggregates_ts('dk_agg')) AS keys,
       NOT EXISTS (SELECT key FROM streamforge.live_aggregates_ts('dk_agg')
                   EXCEPT
                   SELECT ARRAY[t::text, s::text, i::text, b::text]::text FROM dk) AS same_keys,
       NOT EXISTS (SELECT ARRAY[t::text, s::text, i::text, b::text]::text FROM dk
                   EXCEPT
                   SELECT key FROM streamforge.live_aggregates_ts('dk_agg')) AS all_keys;
-- and the view reads them back as the table's values
SELECT t, s, i, b, n, total FROM dk_agg_live ORDER BY total;

-- randomized: keys of the characters that need quoting, and others,
-- compared with array_out's over 2,000 rows in statements of 250
CREATE TABLE dr (id integer PRIMARY KEY, k1 text, k2 text, v integer, at timestamptz NOT NULL);
SELECT streamforge.create_aggregate('dr_agg', $q$
    SELECT k1, k2, count(*) AS n, sum(v) AS total FROM dr
     GROUP BY k1, k2, streamforge.tumble(at, interval '1 day') $q$);
SELECT setseed(0.42);
CREATE TEMP TABLE chars AS
  SELECT ARRAY['a', 'N', 'u', 'L', 'l', ' ', ',', '"', '\', '{', '}', E'\t', E'\n', E'\r', E'\f', E'\v', 'é', '€', ''] AS c;
DO $$
BEGIN
    FOR b IN 0..7 LOOP
        INSERT INTO dr
        SELECT g,
               CASE WHEN random() < 0.05 THEN NULL
                    ELSE (SELECT string_agg(c[1 + floor(random() * 19)::int], '')
                            FROM chars, generate_series(1, floor(random() * 4)::int + (g % 2)) AS x) END,
               CASE WHEN random() < 0.1 THEN 'NULL' WHEN random() < 0.1 THEN ''
                    ELSE (SELECT string_agg(c[1 + floor(random() * 19)::int], '')
                            FROM chars, generate_series(1, 1 + (g % 3)) AS x) END,
               g, '2026-12-01'
          FROM generate_series(b * 250 + 1, b * 250 + 250) AS g;
    END LOOP;
END
$$;
SELECT (SELECT count(*) FROM (SELECT k1, k2 FROM dr GROUP BY 1, 2) AS g) AS pg_groups,
       (SELECT count(*) FROM streamforge.live_aggregates_ts('dr_agg')) AS keys,
       NOT EXISTS ((SELECT key, count FROM streamforge.live_aggregates_ts('dr_agg'))
                   EXCEPT
                   (SELECT ARRAY[k1, k2]::text, count(*) FROM dr GROUP BY k1, k2)) AS same_keys,
       NOT EXISTS ((SELECT k1, k2, n, total FROM dr_agg_live)
                   EXCEPT
                   (SELECT k1, k2, count(*), sum(v) FROM dr GROUP BY k1, k2)) AS same_view;

-- measures as words: a nullable measure's NULLs, and a NULL where the
-- pipeline's measure is not declared NULL (the error names the delivery
-- and the measure, as ingest_measures_batch's does)
SELECT streamforge.create_pipeline('dm', ARRAY['default'],
    ARRAY[streamforge.fixed('w', 3600)],
    time_unit => interval '1 second',
    measures => ARRAY['one', 'x NULL', 'y'],
    aggregates => ARRAY['count', 'count(x)', 'sum(x)', 'sum(y)']) IS NOT NULL AS created;
CREATE TABLE dm_src (id bigint PRIMARY KEY, k text, x bigint, y bigint, at timestamptz NOT NULL);
SELECT streamforge.attach('dm', 'dm_src', 'id', 'k', 'at',
                          measures => ARRAY['1', 'x', 'y']) IS NOT NULL AS attached;
INSERT INTO dm_src VALUES (1, 'a', 5, 1, '2026-12-01 10:00'), (2, 'a', NULL, 2, '2026-12-01 10:01'),
                          (3, 'b', NULL, 4, '2026-12-01 10:02');
SELECT key, count, aggregates FROM streamforge.live_aggregates_ts('dm') ORDER BY key;
INSERT INTO dm_src VALUES (4, 'a', 1, 1, '2026-12-01 10:03'), (5, 'a', 1, NULL, '2026-12-01 10:04');
SELECT key, count FROM streamforge.live_aggregates_ts('dm') ORDER BY key;

-- a mapping the direct path does not evaluate (a subquery) runs the
-- plan: the same key, the same rows
CREATE TABLE ds (id integer PRIMARY KEY, k text, at timestamptz NOT NULL);
SELECT streamforge.create_pipeline('ds', ARRAY['default'],
    ARRAY[streamforge.fixed('w', 3600)],
    time_unit => interval '1 second') IS NOT NULL AS created;
SELECT streamforge.attach('ds', 'ds', 'id', '(SELECT upper(k))', 'at') IS NOT NULL AS attached;
INSERT INTO ds VALUES (1, 'x', '2026-12-01 10:00'), (2, 'x', '2026-12-01 10:01'), (3, 'y y', '2026-12-01 10:02');
SELECT key, count FROM streamforge.live_ts('ds') ORDER BY key;

-- differential: one table attached to two pipelines with the same
-- mappings, but one key wrapped in a subquery, which keeps that
-- attachment on the plan's path; random statements of 1 to 40 rows
-- (NULL keys, NULL measures, a filter, integer and text key parts of
-- every quoting case) must give both pipelines the same keys, counts and
-- aggregates.
SELECT streamforge.create_pipeline(name, ARRAY['default'],
    ARRAY[streamforge.fixed('w', 3600)],
    time_unit => interval '1 second',
    measures => ARRAY['one', 'v NULL', 'w NULL'],
    aggregates => ARRAY['count', 'count(v)', 'sum(v)', 'min(w)', 'max(w)']) IS NOT NULL AS created
  FROM (VALUES ('dd_direct'), ('dd_plan')) AS p(name) ORDER BY name;
CREATE TABLE dd (id bigint PRIMARY KEY, k1 text, k2 integer, v bigint, w bigint, at timestamptz NOT NULL);
SELECT streamforge.attach('dd_direct', 'dd', 'id', 'ARRAY[k1, k2::text]::text', 'at',
                          filter => 'v IS NOT NULL OR w IS NULL OR w > 3',
                          measures => ARRAY['1', 'v', 'w']) IS NOT NULL AS attached,
       streamforge.attach('dd_plan', 'dd', 'id', '(SELECT ARRAY[k1, k2::text]::text)', 'at',
                          filter => 'v IS NOT NULL OR w IS NULL OR w > 3',
                          measures => ARRAY['1', 'v', 'w']) IS NOT NULL AS attached_too;
SELECT setseed(0.7);
DO $$
DECLARE
    next bigint := 1;
    rows integer;
BEGIN
    FOR s IN 1..60 LOOP
        rows := 1 + floor(random() * 40)::int;
        INSERT INTO dd
        SELECT next + g,
               CASE WHEN random() < 0.1 THEN NULL
                    ELSE (SELECT string_agg(c[1 + floor(random() * 19)::int], '')
                            FROM chars, generate_series(0, floor(random() * 3)::int) AS x) END,
               CASE WHEN random() < 0.1 THEN NULL ELSE floor(random() * 5)::int - 2 END,
               CASE WHEN random() < 0.2 THEN NULL ELSE floor(random() * 10)::bigint END,
               CASE WHEN random() < 0.2 THEN NULL ELSE floor(random() * 10)::bigint END,
               timestamptz '2026-12-01 10:00' + floor(random() * 7200) * interval '1 second'
          FROM generate_series(0, rows - 1) AS g;
        next := next + rows;
    END LOOP;
END
$$;
SELECT (SELECT count(*) FROM dd) AS source_rows,
       (SELECT sum(count) FROM streamforge.live_aggregates_ts('dd_direct')) AS events,
       (SELECT count(*) FROM streamforge.live_aggregates_ts('dd_direct')) AS buckets,
       NOT EXISTS ((SELECT key, window_start, count, aggregates FROM streamforge.live_aggregates_ts('dd_direct'))
                   EXCEPT ALL
                   (SELECT key, window_start, count, aggregates FROM streamforge.live_aggregates_ts('dd_plan')))
       AND NOT EXISTS ((SELECT key, window_start, count, aggregates FROM streamforge.live_aggregates_ts('dd_plan'))
                   EXCEPT ALL
                   (SELECT key, window_start, count, aggregates FROM streamforge.live_aggregates_ts('dd_direct'))) AS same,
       (SELECT count(*) FROM dd WHERE v IS NOT NULL OR w IS NULL OR w > 3) AS filtered_rows;

-- attach_check (C since 0.4.0) on the form of 0.2.0: six arguments, the
-- pipeline named but not bound; the error, its detail and hint as the
-- PL/pgSQL check wrote them
CREATE TABLE dl (id integer, k text, t bigint);
DO $$
BEGIN
    EXECUTE format($t$CREATE TRIGGER %I AFTER INSERT ON dl REFERENCING NEW TABLE AS new_rows
                      FOR EACH STATEMENT EXECUTE FUNCTION streamforge_internal.attached_insert(
                      'legacy', '''default''', '(id)::pg_catalog.text', '(k)::pg_catalog.text',
                      '(t)::pg_catalog.int8', '1')$t$,
                   'streamforge_attach_' || left(md5('legacy'), 16));
END
$$;
INSERT INTO dl VALUES (1, 'a', 1);
DROP TABLE dl;

-- clean up
SELECT streamforge.drop_aggregate('dk_agg'), streamforge.drop_aggregate('dr_agg');
DROP TABLE dm_src, ds, dk, dr, dd;
SELECT streamforge.drop_pipeline('dm'), streamforge.drop_pipeline('ds'),
       streamforge.drop_pipeline('dd_direct'), streamforge.drop_pipeline('dd_plan');
SELECT count(*) AS attachments_left FROM streamforge.attachments
 WHERE pipeline IN ('dk_agg', 'dr_agg', 'dm', 'ds', 'dd_direct', 'dd_plan');
