-- Joins as of event time with a validity that has only its start
-- ("d.valid_from <= c.at"), validity columns changed under an aggregate,
-- and direct calls of the lookup with other arguments row by row
-- (docs/joins.md; the review of issue 47).
SET client_min_messages = warning;
SET TimeZone = 'UTC';

-- 1. start only: an event gets the latest version that started by its
-- time (an as-of join), whatever the index's order; not the oldest
CREATE TABLE band_hist (sku integer, band text NOT NULL,
                        valid_from timestamptz NOT NULL,
                        PRIMARY KEY (sku, valid_from));
INSERT INTO band_hist VALUES (1, 'low', '2026-12-01 00:00'),
                             (1, 'mid', '2026-12-01 12:00:20'),
                             (1, 'high', '2026-12-01 12:00:40'),
                             (2, 'low', '2026-12-01 12:00:30');
-- the same history, indexed latest first
CREATE TABLE band_desc (sku integer, band text NOT NULL,
                        valid_from timestamptz NOT NULL);
CREATE UNIQUE INDEX band_desc_key ON band_desc (sku, valid_from DESC);
INSERT INTO band_desc SELECT sku, upper(band), valid_from FROM band_hist;
CREATE TABLE sales (id integer PRIMARY KEY, sku integer, at timestamptz NOT NULL);
SELECT streamforge.create_aggregate('by_band', $$
    SELECT h.band, count(*) AS n
      FROM sales s JOIN band_hist h ON h.sku = s.sku AND h.valid_from <= s.at
     GROUP BY h.band, streamforge.tumble(s.at, interval '1 minute')
$$, lateness => interval '1 hour');
SELECT streamforge.create_aggregate('by_band_desc', $$
    SELECT h.band, count(*) AS n
      FROM sales s JOIN band_desc h ON s.at >= h.valid_from AND h.sku = s.sku
     GROUP BY h.band, streamforge.tumble(s.at, interval '1 minute')
$$, lateness => interval '1 hour');
-- sale 6 at 12:00:20 exactly (mid started then); sale 4 of sku 2 before
-- its first version (dropped); sale 7 late, after the history moved on
INSERT INTO sales VALUES (1, 1, '2026-12-01 12:00:10'), (2, 1, '2026-12-01 12:00:25'),
                         (3, 1, '2026-12-01 12:00:45'), (4, 2, '2026-12-01 12:00:10'),
                         (5, 2, '2026-12-01 12:00:35'), (6, 1, '2026-12-01 12:00:20');
INSERT INTO sales VALUES (7, 1, '2026-12-01 12:00:05');
-- low: 1, 5, 7; mid: 2, 6; high: 3
SELECT band, n FROM by_band_live ORDER BY 1;
SELECT band, n FROM by_band_desc_live ORDER BY 1;
-- the reference: the latest version as of each sale
SELECT h.band, count(*)
  FROM sales s CROSS JOIN LATERAL
       (SELECT band FROM band_hist h WHERE h.sku = s.sku AND h.valid_from <= s.at
         ORDER BY h.valid_from DESC LIMIT 1) h
 GROUP BY 1 ORDER BY 1;

-- 2. a validity column renamed, or of another type, under the aggregate:
-- the insert fails with 42804 and a hint, nothing is counted, nothing
-- crashes; renamed back, the inserts go on
\set VERBOSITY default
ALTER TABLE band_hist RENAME COLUMN valid_from TO starts;
INSERT INTO sales VALUES (8, 1, '2026-12-01 12:00:50');
ALTER TABLE band_hist RENAME COLUMN starts TO valid_from;
INSERT INTO sales VALUES (8, 1, '2026-12-01 12:00:50');
SELECT band, n FROM by_band_live ORDER BY 1;
CREATE TABLE page_hist (page integer, section text, valid tstzrange,
                        PRIMARY KEY (page, valid));
INSERT INTO page_hist VALUES (1, 'news', '[2026-12-01 00:00,)');
CREATE TABLE views (id integer PRIMARY KEY, page integer, at timestamptz NOT NULL);
SELECT streamforge.create_aggregate('by_section', $$
    SELECT h.section, count(*) AS n
      FROM views v JOIN page_hist h ON h.page = v.page AND v.at <@ h.valid
     GROUP BY h.section, streamforge.tumble(v.at, interval '1 minute')
$$);
INSERT INTO views VALUES (1, 1, '2026-12-01 12:00:10');
ALTER TABLE page_hist ALTER COLUMN valid TYPE text;
INSERT INTO views VALUES (2, 1, '2026-12-01 12:00:20');
SELECT section, n FROM by_section_live;

-- 3. a direct call whose arguments change from row to row: each row is
-- looked up with its own aggregate, join and column (before, the first
-- row's lookup served every row of the statement)
SELECT a, streamforge_internal.join_value(NULL::text, a, 1, 'band',
                                          '2026-12-01 12:00:30'::timestamptz, 1) AS band
  FROM (VALUES ('by_band'), ('by_band_desc'), ('by_band')) AS v(a);
SELECT streamforge_internal.join_value(NULL::text, 'by_band', 1, c,
                                       '2026-12-01 12:00:30'::timestamptz, 1)
  FROM (VALUES ('band'), ('sku')) AS v(c);

-- 4. a dimension with inheritance children: its index does not hold
-- their rows, so it is refused (0A000) unless joined ONLY
CREATE TABLE dim_parent (k integer PRIMARY KEY, v text);
CREATE TABLE dim_child () INHERITS (dim_parent);
SELECT streamforge.create_aggregate('by_inh', $$
    SELECT d.v, count(*) AS n FROM sales s JOIN dim_parent d ON d.k = s.sku
     GROUP BY d.v, streamforge.tumble(s.at, interval '1 minute') $$);
SELECT streamforge.create_aggregate('by_inh', $$
    SELECT d.v, count(*) AS n FROM sales s JOIN ONLY dim_parent d ON d.k = s.sku
     GROUP BY d.v, streamforge.tumble(s.at, interval '1 minute') $$);
SELECT streamforge.drop_aggregate('by_inh');
DROP TABLE dim_child, dim_parent;

SELECT streamforge.drop_aggregate('by_band');
SELECT streamforge.drop_aggregate('by_band_desc');
SELECT streamforge.drop_aggregate('by_section');
DROP TABLE sales, views, band_hist, band_desc, page_hist;
