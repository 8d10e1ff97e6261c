-- create_aggregate groups as PostgreSQL's GROUP BY does (issue 38, defect
-- 2): values equal under their type's equality are one group, whatever
-- their text (numeric 1 = 1.0 = 1.00, float8 -0 = 0); a type whose equal
-- values can have different texts and no canonical form (interval, jsonb,
-- arrays of numeric), and a nondeterministic collation, are refused.
-- Every accepted type family is compared with PostgreSQL's own GROUP BY
-- over the same rows (keys NULL included).
SET client_min_messages = warning;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, MDY';

-- kt_<name>(id, k, v, at): key_agg creates the aggregate over it (before
-- the rows: the attachment ingests what is inserted), key_check compares
-- its live view with GROUP BY k over the table: the number of groups, and
-- (k, count, sum) both ways by equality (EXCEPT, NULLs equal).
CREATE FUNCTION key_agg(tab text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format($q$SELECT streamforge.create_aggregate(%L, 'SELECT k, count(*) AS n, sum(v) AS s FROM %I
                      GROUP BY k, streamforge.tumble(at, interval ''1 hour'')')$q$, tab || '_agg', tab);
END
$$;
CREATE FUNCTION key_check(tab text) RETURNS TABLE (groups bigint, pg_groups bigint, same boolean)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format($q$
        SELECT (SELECT count(*) FROM %1$I),
               (SELECT count(*) FROM (SELECT k FROM %2$I GROUP BY k) AS g),
               NOT EXISTS ((SELECT k, n, s FROM %1$I) EXCEPT (SELECT k, count(*), sum(v) FROM %2$I GROUP BY k))
               AND NOT EXISTS ((SELECT k, count(*), sum(v) FROM %2$I GROUP BY k) EXCEPT (SELECT k, n, s FROM %1$I))$q$,
        tab || '_agg_live', tab);
END
$$;

-- integers: the text is canonical, the key is the expression as it stands
CREATE TABLE kt_int (id serial PRIMARY KEY, k bigint, v integer NOT NULL, at timestamptz NOT NULL);
SELECT key_agg('kt_int');
INSERT INTO kt_int (k, v, at) VALUES (1, 1, '2026-11-30 12:00'), (01, 2, '2026-11-30 12:01'),
    (-0, 4, '2026-11-30 12:02'), (0, 8, '2026-11-30 12:03'), (NULL, 16, '2026-11-30 12:04'),
    (NULL, 32, '2026-11-30 12:05'), (9223372036854775807, 64, '2026-11-30 12:06');
SELECT * FROM key_check('kt_int');
SELECT key FROM streamforge.attachments WHERE pipeline = 'kt_int_agg';

-- numeric: 1 = 1.0 = 1.00, 0 = -0.0 = 0.000, 1e3 = 1000, NaN = NaN:
-- grouped by trim_scale()
CREATE TABLE kt_num (id serial PRIMARY KEY, k numeric, v integer NOT NULL, at timestamptz NOT NULL);
SELECT key_agg('kt_num');
INSERT INTO kt_num (k, v, at) VALUES ('1', 1, '2026-11-30 12:00'), ('1.0', 2, '2026-11-30 12:01'),
    ('1.00', 4, '2026-11-30 12:02'), ('0', 8, '2026-11-30 12:03'), ('-0.0', 16, '2026-11-30 12:04'),
    ('0.000', 32, '2026-11-30 12:05'), ('1e3', 64, '2026-11-30 12:06'), ('1000', 128, '2026-11-30 12:07'),
    ('NaN', 256, '2026-11-30 12:08'), ('nan', 512, '2026-11-30 12:09'), ('1.5', 1024, '2026-11-30 12:10'),
    ('1.50', 2048, '2026-11-30 12:11'), (NULL, 4096, '2026-11-30 12:12'), ('-1.10', 8192, '2026-11-30 12:13'),
    ('-1.1', 16384, '2026-11-30 12:14');
SELECT * FROM key_check('kt_num');
SELECT key FROM streamforge.attachments WHERE pipeline = 'kt_num_agg';
SELECT k, n, s FROM kt_num_agg_live ORDER BY k;
-- a typed column: one scale for every value
CREATE TABLE kt_num2 (id serial PRIMARY KEY, k numeric(10,2) NOT NULL, v integer NOT NULL, at timestamptz NOT NULL);
SELECT key_agg('kt_num2');
INSERT INTO kt_num2 (k, v, at) VALUES (1, 1, '2026-11-30 12:00'), (1.001, 2, '2026-11-30 12:01'), (2.5, 4, '2026-11-30 12:02');
SELECT * FROM key_check('kt_num2');
SELECT k, n, s FROM kt_num2_agg_live ORDER BY k;
-- (its values all have scale 2: the key is the column as it stands)
SELECT key FROM streamforge.attachments WHERE pipeline = 'kt_num2_agg';

-- float8 and float4: -0 = 0, NaN = NaN (every NaN), Infinity; 0.1 + 0.2
-- and 0.3 differ, and stay apart
CREATE TABLE kt_f8 (id serial PRIMARY KEY, k float8, v integer NOT NULL, at timestamptz NOT NULL);
SELECT key_agg('kt_f8');
INSERT INTO kt_f8 (k, v, at) VALUES ('-0', 1, '2026-11-30 12:00'), ('0', 2, '2026-11-30 12:01'),
    ('NaN', 4, '2026-11-30 12:02'), ('-0'::float8 * 'NaN', 8, '2026-11-30 12:03'),
    ('Infinity', 16, '2026-11-30 12:04'), ('-Infinity', 32, '2026-11-30 12:05'),
    (0.1::float8 + 0.2::float8, 64, '2026-11-30 12:06'), (0.3, 128, '2026-11-30 12:07'),
    (NULL, 256, '2026-11-30 12:08'), (-1.5, 512, '2026-11-30 12:09'), (-1.50, 1024, '2026-11-30 12:10');
SELECT * FROM key_check('kt_f8');
SELECT key FROM streamforge.attachments WHERE pipeline = 'kt_f8_agg';
SELECT k, n, s FROM kt_f8_agg_live ORDER BY k;
CREATE TABLE kt_f4 (id serial PRIMARY KEY, k real, v integer NOT NULL, at timestamptz NOT NULL);
SELECT key_agg('kt_f4');
INSERT INTO kt_f4 (k, v, at) VALUES ('-0', 1, '2026-11-30 12:00'), ('0', 2, '2026-11-30 12:01'),
    ('NaN', 4, '2026-11-30 12:02'), ('0.1', 8, '2026-11-30 12:03'), ('0.10', 16, '2026-11-30 12:04');
SELECT * FROM key_check('kt_f4');

-- text under deterministic collations: equality is that of the bytes
CREATE TABLE kt_text (id serial PRIMARY KEY, k text COLLATE "C", v integer NOT NULL, at timestamptz NOT NULL);
SELECT key_agg('kt_text');
INSERT INTO kt_text (k, v, at) VALUES ('a', 1, '2026-11-30 12:00'), ('A', 2, '2026-11-30 12:01'),
    ('a ', 4, '2026-11-30 12:02'), ('a', 8, '2026-11-30 12:03'), ('', 16, '2026-11-30 12:04'),
    (NULL, 32, '2026-11-30 12:05'), ('"{,}"', 64, '2026-11-30 12:06'), ('NULL', 128, '2026-11-30 12:07');
SELECT * FROM key_check('kt_text');
CREATE TABLE kt_text_icu (id serial PRIMARY KEY, k text COLLATE "und-x-icu", v integer NOT NULL, at timestamptz NOT NULL);
SELECT key_agg('kt_text_icu');
INSERT INTO kt_text_icu (k, v, at) SELECT k, v, at FROM kt_text;
SELECT * FROM key_check('kt_text_icu');
-- bpchar: its equality ignores trailing spaces, and so does its text
CREATE TABLE kt_char (id serial PRIMARY KEY, k char(4), v integer NOT NULL, at timestamptz NOT NULL);
SELECT key_agg('kt_char');
INSERT INTO kt_char (k, v, at) VALUES ('a', 1, '2026-11-30 12:00'), ('a  ', 2, '2026-11-30 12:01'),
    ('A', 4, '2026-11-30 12:02'), ('', 8, '2026-11-30 12:03'), ('    ', 16, '2026-11-30 12:04');
SELECT * FROM key_check('kt_char');
-- a nondeterministic (case-insensitive) collation: 'a' = 'A', which no
-- text gives: refused, with a hint
CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE TABLE kt_ci (id serial PRIMARY KEY, k text COLLATE ci, v integer NOT NULL, at timestamptz NOT NULL);
SELECT 'a' = 'A' COLLATE ci AS equal_in_sql;
\set VERBOSITY default
SELECT streamforge.create_aggregate('kt_ci_agg', $$SELECT k, count(*) AS n FROM kt_ci
    GROUP BY k, streamforge.tumble(at, interval '1 hour')$$);
-- the hint's way out: a deterministic collation in the GROUP BY
SELECT streamforge.create_aggregate('kt_ci_agg', $$SELECT k COLLATE "C" AS k, count(*) AS n FROM kt_ci
    GROUP BY k COLLATE "C", streamforge.tumble(at, interval '1 hour')$$);
SELECT streamforge.drop_aggregate('kt_ci_agg');
\set VERBOSITY terse

-- uuid (input case and hyphens do not matter), boolean
CREATE TABLE kt_uuid (id serial PRIMARY KEY, k uuid, v integer NOT NULL, at timestamptz NOT NULL);
SELECT key_agg('kt_uuid');
INSERT INTO kt_uuid (k, v, at) VALUES ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 1, '2026-11-30 12:00'),
    ('A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', 2, '2026-11-30 12:01'),
    ('{a0eebc999c0b4ef8bb6d6bb9bd380a11}', 4, '2026-11-30 12:02'),
    ('00000000-0000-0000-0000-000000000000', 8, '2026-11-30 12:03');
SELECT * FROM key_check('kt_uuid');
CREATE TABLE kt_bool (id serial PRIMARY KEY, k boolean, v integer NOT NULL, at timestamptz NOT NULL);
SELECT key_agg('kt_bool');
INSERT INTO kt_bool (k, v, at) VALUES ('t', 1, '2026-11-30 12:00'), ('yes', 2, '2026-11-30 12:01'),
    ('off', 4, '2026-11-30 12:02'), (NULL, 8, '2026-11-30 12:03');
SELECT * FROM key_check('kt_bool');

-- date and timestamptz: one instant in several zones is one group
CREATE TABLE kt_date (id serial PRIMARY KEY, k date, v integer NOT NULL, at timestamptz NOT NULL);
SELECT key_agg('kt_date');
INSERT INTO kt_date (k, v, at) VALUES ('2026-11-30', 1, '2026-11-30 12:00'), ('11/30/2026', 2, '2026-11-30 12:01'),
    ('2026-12-01', 4, '2026-11-30 12:02'), ('infinity', 8, '2026-11-30 12:03');
SELECT * FROM key_check('kt_date');
CREATE TABLE kt_tstz (id serial PRIMARY KEY, k timestamptz, v integer NOT NULL, at timestamptz NOT NULL);
SELECT key_agg('kt_tstz');
INSERT INTO kt_tstz (k, v, at) VALUES ('2026-11-30 12:00:00+00', 1, '2026-11-30 12:00'),
    ('2026-11-30 13:00:00+01', 2, '2026-11-30 12:01'), ('2026-11-30 07:00:00-05', 4, '2026-11-30 12:02'),
    ('2026-11-30 12:00:00.000001+00', 8, '2026-11-30 12:03');
SET TimeZone = 'America/New_York';   -- the attachment's settings are its own
INSERT INTO kt_tstz (k, v, at) VALUES ('2026-11-30 07:00:00', 16, '2026-11-30 07:04');
SET TimeZone = 'UTC';
SELECT * FROM key_check('kt_tstz');

-- enums: one label per value
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE kt_enum (id serial PRIMARY KEY, k mood, v integer NOT NULL, at timestamptz NOT NULL);
SELECT key_agg('kt_enum');
INSERT INTO kt_enum (k, v, at) VALUES ('sad', 1, '2026-11-30 12:00'), ('happy', 2, '2026-11-30 12:01'),
    ('sad', 4, '2026-11-30 12:02');
SELECT * FROM key_check('kt_enum');

-- arrays of integers and text: equal arrays have the same text (bounds
-- included: '[0:1]={1,2}' <> '{1,2}' in SQL too)
CREATE TABLE kt_arr (id serial PRIMARY KEY, k integer[], v integer NOT NULL, at timestamptz NOT NULL);
SELECT key_agg('kt_arr');
INSERT INTO kt_arr (k, v, at) VALUES ('{1,2}', 1, '2026-11-30 12:00'), ('{ 1 , 02 }', 2, '2026-11-30 12:01'),
    ('[0:1]={1,2}', 4, '2026-11-30 12:02'), ('{}', 8, '2026-11-30 12:03'), ('{NULL}', 16, '2026-11-30 12:04'),
    ('{{1,2}}', 32, '2026-11-30 12:05');
SELECT * FROM key_check('kt_arr');
CREATE TABLE kt_tarr (id serial PRIMARY KEY, k text[], v integer NOT NULL, at timestamptz NOT NULL);
SELECT key_agg('kt_tarr');
INSERT INTO kt_tarr (k, v, at) VALUES ('{a,b}', 1, '2026-11-30 12:00'), ('{"a",b}', 2, '2026-11-30 12:01'),
    ('{"a ",b}', 4, '2026-11-30 12:02'), ('{A,b}', 8, '2026-11-30 12:03');
SELECT * FROM key_check('kt_tarr');

-- several keys of different families together
CREATE TABLE kt_multi (id serial PRIMARY KEY, a numeric NOT NULL, b float8 NOT NULL, c text NOT NULL,
                       v integer NOT NULL, at timestamptz NOT NULL);
SELECT streamforge.create_aggregate('kt_multi_agg', $$SELECT a, b, c, count(*) AS n, sum(v) AS s FROM kt_multi
    GROUP BY a, b, c, streamforge.tumble(at, interval '1 hour')$$);
INSERT INTO kt_multi (a, b, c, v, at) VALUES (1.0, -0, 'x', 1, '2026-11-30 12:00'), (1, 0, 'x', 2, '2026-11-30 12:01'),
    (1.00, 0, 'y', 4, '2026-11-30 12:02');
SELECT a, b, c, n, s FROM kt_multi_agg_live ORDER BY c;
SELECT a, b, c, count(*), sum(v) FROM kt_multi GROUP BY a, b, c ORDER BY c;

-- refused, type by type: equal values with different texts and no
-- canonical form
CREATE TABLE kt_other (id serial PRIMARY KEY, i interval NOT NULL, j jsonb NOT NULL, na numeric[] NOT NULL,
                       fa float8[] NOT NULL, ca char(2)[] NOT NULL, v integer NOT NULL, at timestamptz NOT NULL);
SELECT interval '1 day' = interval '24 hours' AS interval_equal, '1.0'::jsonb = '1'::jsonb AS jsonb_equal;
SELECT streamforge.create_aggregate('kt_other_agg', $$SELECT i, count(*) AS n FROM kt_other
    GROUP BY i, streamforge.tumble(at, interval '1 hour')$$);
SELECT streamforge.create_aggregate('kt_other_agg', $$SELECT j, count(*) AS n FROM kt_other
    GROUP BY j, streamforge.tumble(at, interval '1 hour')$$);
SELECT streamforge.create_aggregate('kt_other_agg', $$SELECT na, count(*) AS n FROM kt_other
    GROUP BY na, streamforge.tumble(at, interval '1 hour')$$);
SELECT streamforge.create_aggregate('kt_other_agg', $$SELECT fa, count(*) AS n FROM kt_other
    GROUP BY fa, streamforge.tumble(at, interval '1 hour')$$);
SELECT streamforge.create_aggregate('kt_other_agg', $$SELECT ca, count(*) AS n FROM kt_other
    GROUP BY ca, streamforge.tumble(at, interval '1 hour')$$);
-- the way out: a canonical expression of a supported type
SELECT streamforge.create_aggregate('kt_other_agg', $$SELECT extract(epoch FROM i) AS secs, count(*) AS n FROM kt_other
    GROUP BY extract(epoch FROM i), streamforge.tumble(at, interval '1 hour')$$);
SELECT count(*) FROM streamforge.aggregates WHERE name = 'kt_other_agg';

-- clean up
SELECT streamforge.drop_aggregate(name) FROM streamforge.aggregates WHERE name LIKE 'kt\_%' ORDER BY name;
DROP TABLE kt_int, kt_num, kt_num2, kt_f8, kt_f4, kt_text, kt_text_icu, kt_char, kt_ci, kt_uuid, kt_bool,
    kt_date, kt_tstz, kt_enum, kt_arr, kt_tarr, kt_multi, kt_other;
DROP TYPE mood;
DROP COLLATION ci;
DROP FUNCTION key_agg(text), key_check(text);
