-- A session whose library is older than the installed extension (it loaded
-- the library before a package upgrade) is told to reconnect, before it can
-- misread what a newer library wrote.  An older installed version (between
-- the package upgrade and ALTER EXTENSION UPDATE) keeps working.
\set VERBOSITY default
SELECT streamforge.create_pipeline('lv', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
SELECT * FROM streamforge.ingest('lv', 'p', 0, 'e0', 'k', 1, 5);
-- the database was updated for a newer library than this session's
UPDATE pg_catalog.pg_extension SET extversion = '0.9.0' WHERE extname = 'streamforge';
\c
SELECT * FROM streamforge.live('lv');
SELECT * FROM streamforge.ingest('lv', 'p', 1, 'e1', 'k', 2, 5);
-- a newer patch release counts too
UPDATE pg_catalog.pg_extension SET extversion = '0.4.1' WHERE extname = 'streamforge';
SELECT * FROM streamforge.live('lv');
-- older definitions than the library are served
UPDATE pg_catalog.pg_extension SET extversion = '0.2.0' WHERE extname = 'streamforge';
SELECT * FROM streamforge.live('lv');
-- within a session, the check runs again once functions change
-- (ALTER EXTENSION UPDATE replaces them), not on every call
UPDATE pg_catalog.pg_extension SET extversion = '1.0.0' WHERE extname = 'streamforge';
SELECT * FROM streamforge.live('lv');
CREATE FUNCTION public.lv_touch() RETURNS int LANGUAGE sql AS 'SELECT 1';
SELECT * FROM streamforge.live('lv');
-- a version string that is not major.minor.patch is not compared
UPDATE pg_catalog.pg_extension SET extversion = 'devel' WHERE extname = 'streamforge';
DROP FUNCTION public.lv_touch();
SELECT * FROM streamforge.live('lv');
UPDATE pg_catalog.pg_extension SET extversion = '0.4.0' WHERE extname = 'streamforge';
\c
SELECT * FROM streamforge.ingest('lv', 'p', 1, 'e1', 'k', 2, 5);
-- Each version has its own library, streamforge-<version> (docs/packaging.md,
-- "The libraries"); "streamforge" is the compat library that serves the SQL
-- of 0.1.0 to 0.3.0 (release 0.3.0's).  A session that loaded it, here by
-- LOAD, as a server that preloads "streamforge" would, cannot use this
-- version's library: told to reconnect (55000), on every call, and not
-- "attempt to redefine parameter".
\c
LOAD 'streamforge';
SELECT streamforge.watermark('lv');
SELECT * FROM streamforge.live('lv');
\c
SELECT streamforge.watermark('lv');
SELECT streamforge.drop_pipeline('lv');
