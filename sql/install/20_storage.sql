-- streamforge install script, part 2: the tables that hold every pipeline.
--
-- A pipeline's persisted state is its snapshot (src/codec/snapshot.c: the
-- binary form without retention, checkpoint bytes with it; NULL for the
-- empty initial state) followed by its journal entries, replayed in pos
-- order.  version identifies a committed state: each transaction that writes
-- the pipeline bumps it (taking the row lock).  Only src/persist/ writes these tables; see docs/persistence.md.
--
-- The tables are registered as configuration tables, so pg_dump carries the
-- pipelines over.  Nobody but their owner (the extension's owner) may read
-- or write them: the C functions check the caller's privilege on the
-- pipeline and then run their queries as the extension's owner
-- (docs/security.md).

-- Pipeline ids are never reused, so a dropped and re-created pipeline never
-- matches a backend's stale cache entry.
CREATE SEQUENCE streamforge.pipeline_id_seq;

CREATE TABLE streamforge.pipeline (
    id bigint PRIMARY KEY
        DEFAULT pg_catalog.nextval('streamforge.pipeline_id_seq'::pg_catalog.regclass),
    name text COLLATE "C" NOT NULL UNIQUE,
    partitions text[] NOT NULL,             -- sorted by name (byte order)
    windows streamforge.window_def[] NOT NULL,  -- sorted by name
    lateness bigint NOT NULL,
    version bigint NOT NULL DEFAULT 0,      -- bumped by each writing transaction
    snapshot_version bigint NOT NULL DEFAULT 0,     -- version the snapshot was taken in
    snapshot bytea,                         -- NULL: the empty initial state
    offset_replays_base bigint NOT NULL DEFAULT 0,  -- stats() counter at snapshot
    -- privileges (src/persist/acl.c, docs/security.md): the owner has admin; each
    -- grantee is in at most one of the three lists, 0 ('-') is PUBLIC.
    -- regrole, so that pg_dump writes role names and a restore into
    -- another cluster maps them to that cluster's roles.
    owner regrole NOT NULL,
    readers regrole[] NOT NULL DEFAULT '{}',
    ingesters regrole[] NOT NULL DEFAULT '{}',
    admins regrole[] NOT NULL DEFAULT '{}',
    -- (every function, operator and cast of a definition is qualified:
    -- the script's search_path starts with the extension's schema)
    CONSTRAINT pipeline_name_check
        CHECK (pg_catalog.octet_length(name) OPERATOR(pg_catalog.>=) 1
               AND pg_catalog.octet_length(name) OPERATOR(pg_catalog.<=) 63),
    CONSTRAINT pipeline_version_check
        CHECK (snapshot_version OPERATOR(pg_catalog.>=) 0
               AND snapshot_version OPERATOR(pg_catalog.<=) version)
) WITH (fillfactor = 50);   -- room for HOT updates of version

ALTER SEQUENCE streamforge.pipeline_id_seq OWNED BY streamforge.pipeline.id;

-- The unknown-pipeline hint's lookup of names equal but for case, past
-- a thousand pipelines (src/persist/catalog.c, similar_pipelines).
CREATE INDEX pipeline_name_lower ON streamforge.pipeline (pg_catalog.lower(name));

-- The write calls since the snapshot, at increasing positions: a row holds
-- one call's inputs, or (since 0.2.0) the sequence of inputs of several
-- consecutive calls of one transaction, buffered until its commit; its pos
-- is the last call's position (binary format: src/codec/journal.c).
CREATE TABLE streamforge.journal (
    pipeline_id bigint NOT NULL
        REFERENCES streamforge.pipeline (id) ON DELETE CASCADE,
    pos bigint NOT NULL,
    entry bytea NOT NULL,
    PRIMARY KEY (pipeline_id, pos)
);

-- Snapshots are zlib-compressed already, and journal entries are written
-- once and read rarely: storing both out of line without pglz keeps a large
-- ingest_batch from spending its time compressing its own journal entry.
ALTER TABLE streamforge.pipeline ALTER COLUMN snapshot SET STORAGE EXTERNAL;
ALTER TABLE streamforge.journal ALTER COLUMN entry SET STORAGE EXTERNAL;

SELECT pg_catalog.pg_extension_config_dump('streamforge.pipeline', '');
SELECT pg_catalog.pg_extension_config_dump('streamforge.journal', '');
SELECT pg_catalog.pg_extension_config_dump('streamforge.pipeline_id_seq', '');

REVOKE ALL ON streamforge.pipeline, streamforge.journal FROM PUBLIC;
REVOKE ALL ON SEQUENCE streamforge.pipeline_id_seq FROM PUBLIC;
