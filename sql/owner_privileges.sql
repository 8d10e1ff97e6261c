-- The extension's owner (the owner of streamforge.pipeline, which may be a
-- role without superuser rights) has every privilege on every pipeline,
-- and the functions notice at once when the tables change owner (acl.c).
-- In a database of its own: changing the owner of the extension's tables
-- rewrites their catalog rows, which other tests list.
SELECT current_database() AS regress_db \gset
CREATE DATABASE sf_owner_privileges;
\c sf_owner_privileges
CREATE EXTENSION streamforge;
CREATE ROLE sf_ext_owner;
CREATE ROLE sf_stranger;
GRANT USAGE ON SCHEMA streamforge TO sf_ext_owner, sf_stranger;
SELECT streamforge.create_pipeline('owned', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
SELECT count(*) FROM streamforge.ingest('owned', 'p', 0, 'e0', 'k', 1, 1);
SELECT current_user AS installer \gset
ALTER TABLE streamforge.pipeline OWNER TO sf_ext_owner;
ALTER TABLE streamforge.journal OWNER TO sf_ext_owner;
-- (an ingest may store its partition's activity: at most once a second,
-- so whether this one does depends on the machine's speed)
ALTER TABLE streamforge.partition_activity OWNER TO sf_ext_owner;

-- the new owner, no superuser, reads and writes a pipeline it was never
-- granted anything on; a stranger may not
SET ROLE sf_ext_owner;
SELECT consumed_offset FROM streamforge.partitions('owned');
SELECT count(*) FROM streamforge.ingest('owned', 'p', 1, 'e1', 'k', 2, 1);
SET ROLE sf_stranger;
SELECT consumed_offset FROM streamforge.partitions('owned');
RESET ROLE;

-- back to the installer: sf_ext_owner is nobody special any more
ALTER TABLE streamforge.pipeline OWNER TO :"installer";
ALTER TABLE streamforge.journal OWNER TO :"installer";
ALTER TABLE streamforge.partition_activity OWNER TO :"installer";
SET ROLE sf_ext_owner;
SELECT consumed_offset FROM streamforge.partitions('owned');
SELECT count(*) FROM streamforge.ingest('owned', 'p', 2, 'e2', 'k', 3, 1);
RESET ROLE;
SELECT consumed_offset FROM streamforge.partitions('owned');

\c :regress_db
DROP DATABASE sf_owner_privileges;
DROP ROLE sf_ext_owner;
DROP ROLE sf_stranger;
