-- streamforge install script, part 2b (0.4.0, issue 39): snapshots stored
-- beside the pipeline's row.
--
-- A definition change (add_window, set_lateness, add_partition, ...) of a
-- pipeline whose new snapshot is large builds that snapshot and writes it
-- here BEFORE it takes the pipeline's row lock (src/persist/redefine.c);
-- under the lock it only sets the row's snapshot to NULL and its
-- snapshot_version to the version this row was stored for, so that
-- writers wait for a small UPDATE instead of the multi-megabyte write of
-- the snapshot (docs/management.md, "The lock a change holds").  A row's
-- snapshot is the pipeline's when pipeline.snapshot is NULL and
-- pipeline.snapshot_version equals this row's snapshot_version; a later
-- compaction or restore writes the snapshot into the pipeline's row again
-- (with a new snapshot_version), which makes this row stale: the next
-- definition change that stores one here deletes it, as does dropping the
-- pipeline.  Only src/persist/ writes this table; see docs/persistence.md.
CREATE TABLE streamforge.stored_snapshot (
    pipeline_id bigint NOT NULL
        REFERENCES streamforge.pipeline (id) ON DELETE CASCADE,
    snapshot_version bigint NOT NULL,
    snapshot bytea NOT NULL,
    PRIMARY KEY (pipeline_id, snapshot_version)
);

-- zlib-compressed already (see streamforge.pipeline's snapshot)
ALTER TABLE streamforge.stored_snapshot ALTER COLUMN snapshot SET STORAGE EXTERNAL;

SELECT pg_catalog.pg_extension_config_dump('streamforge.stored_snapshot', '');

REVOKE ALL ON streamforge.stored_snapshot FROM PUBLIC;

COMMENT ON TABLE streamforge.stored_snapshot IS
    'storage: snapshots a definition change stored beside its pipeline''s row; internal';
