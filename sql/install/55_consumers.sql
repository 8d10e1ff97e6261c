-- streamforge install script: consumer bookmarks (0.3.0, issue 25 item 4;
-- docs/outputs.md, Consumer bookmarks).
--
-- A consumer registers a named bookmark on a pipeline's outputs and
-- commits the last seq (and late_seq) it has processed; consumer_lag shows
-- how far behind each one is; trims never remove a row a registered
-- consumer still needs.  A bookmark belongs to the role that registered
-- it: only that role (or an admin of the pipeline) may commit or drop it.
-- The C entry points (src/api/consumers.c) check the read privilege and
-- call the internal functions below as the extension's owner, with the
-- calling role.  Every object here is new in 0.3.0.

CREATE TABLE streamforge.consumer (
    pipeline text COLLATE "C" NOT NULL
        REFERENCES streamforge.pipeline (name) ON DELETE CASCADE,
    name text COLLATE "C" NOT NULL,
    owner regrole NOT NULL,         -- who may commit it
    seq bigint NOT NULL DEFAULT 0,          -- last change processed
    late_seq bigint NOT NULL DEFAULT 0,     -- last late event processed
    epoch bigint,                   -- the outputs' epoch at the last commit
    registered_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    committed_at timestamptz,
    PRIMARY KEY (pipeline, name),
    CONSTRAINT consumer_name_check
        CHECK (pg_catalog.octet_length(name) OPERATOR(pg_catalog.>=) 1
               AND pg_catalog.octet_length(name) OPERATOR(pg_catalog.<=) 63)
);

SELECT pg_catalog.pg_extension_config_dump('streamforge.consumer', '');
REVOKE ALL ON streamforge.consumer FROM PUBLIC;
GRANT SELECT ON streamforge.consumer TO PUBLIC;
ALTER TABLE streamforge.consumer ENABLE ROW LEVEL SECURITY;
CREATE POLICY consumer_read ON streamforge.consumer
    FOR SELECT TO PUBLIC
    USING (EXISTS (SELECT 1 FROM streamforge.pipelines AS v
                    WHERE v.name OPERATOR(pg_catalog.=) consumer.pipeline));

CREATE FUNCTION streamforge_internal.register_consumer_internal(pipeline text,
    name text, caller oid)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF name IS NULL THEN
        RAISE EXCEPTION 'consumer name must not be null' USING ERRCODE = '22004';
    END IF;
    IF pg_catalog.octet_length(name) OPERATOR(pg_catalog.<) 1
       OR pg_catalog.octet_length(name) OPERATOR(pg_catalog.>) 63 THEN
        RAISE EXCEPTION 'invalid consumer name'
            USING ERRCODE = '22023',
                  DETAIL = 'A consumer name is 1 to 63 bytes long.';
    END IF;
    INSERT INTO streamforge.consumer AS c (pipeline, name, owner)
    VALUES (register_consumer_internal.pipeline, register_consumer_internal.name,
            caller::pg_catalog.regrole)
    ON CONFLICT ON CONSTRAINT consumer_pkey DO NOTHING;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'consumer "%" of pipeline "%" already exists', name, pipeline
            USING ERRCODE = '42710';
    END IF;
END
$$;

-- The bookmark, locked, once the caller is known to own it or to be an
-- admin of the pipeline (42501 otherwise; 42704 for none)
CREATE FUNCTION streamforge_internal.consumer_for_update(pipeline text,
    name text, caller oid)
RETURNS streamforge.consumer
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c streamforge.consumer;
BEGIN
    SELECT * INTO c FROM streamforge.consumer AS k
     WHERE k.pipeline OPERATOR(pg_catalog.=) consumer_for_update.pipeline
       AND k.name OPERATOR(pg_catalog.=) consumer_for_update.name
       FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'consumer "%" of pipeline "%" does not exist', name, pipeline
            USING ERRCODE = '42704',
                  HINT = 'Register it with streamforge.register_consumer().';
    END IF;
    IF c.owner::pg_catalog.oid OPERATOR(pg_catalog.<>) caller
       AND NOT streamforge.has_pipeline_privilege(pipeline, 'admin',
                   (SELECT r.rolname FROM pg_catalog.pg_roles AS r
                     WHERE r.oid OPERATOR(pg_catalog.=) caller)) THEN
        RAISE EXCEPTION 'permission denied for consumer "%" of pipeline "%"', name, pipeline
            USING ERRCODE = '42501',
                  DETAIL = pg_catalog.format('The consumer belongs to role %s.', c.owner);
    END IF;
    RETURN c;
END
$$;

CREATE FUNCTION streamforge_internal.commit_consumer_internal(pipeline text,
    name text, seq bigint, late_seq bigint, caller oid)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c streamforge.consumer;
BEGIN
    IF seq IS NULL THEN
        RAISE EXCEPTION 'seq must not be null' USING ERRCODE = '22004';
    END IF;
    IF seq OPERATOR(pg_catalog.<) 0 OR late_seq OPERATOR(pg_catalog.<) 0 THEN
        RAISE EXCEPTION 'seq and late_seq must not be negative' USING ERRCODE = '22023';
    END IF;
    c := streamforge_internal.consumer_for_update(pipeline, name, caller);
    UPDATE streamforge.consumer AS k
       SET seq = commit_consumer_internal.seq,
           late_seq = coalesce(commit_consumer_internal.late_seq, k.late_seq),
           epoch = (SELECT o.epoch FROM streamforge.output_config AS o
                     WHERE o.pipeline OPERATOR(pg_catalog.=) commit_consumer_internal.pipeline),
           committed_at = pg_catalog.now()
     WHERE k.pipeline OPERATOR(pg_catalog.=) commit_consumer_internal.pipeline
       AND k.name OPERATOR(pg_catalog.=) commit_consumer_internal.name;
END
$$;

CREATE FUNCTION streamforge_internal.drop_consumer_internal(pipeline text,
    name text, caller oid)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c streamforge.consumer;
BEGIN
    c := streamforge_internal.consumer_for_update(pipeline, name, caller);
    DELETE FROM streamforge.consumer AS k
     WHERE k.pipeline OPERATOR(pg_catalog.=) drop_consumer_internal.pipeline
       AND k.name OPERATOR(pg_catalog.=) drop_consumer_internal.name;
END
$$;

REVOKE ALL ON FUNCTION streamforge_internal.register_consumer_internal(text, text, oid),
    streamforge_internal.consumer_for_update(text, text, oid),
    streamforge_internal.commit_consumer_internal(text, text, bigint, bigint, oid),
    streamforge_internal.drop_consumer_internal(text, text, oid) FROM PUBLIC;

CREATE FUNCTION streamforge.register_consumer(pipeline text, name text)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_register_consumer'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge.register_consumer(text, text) IS
'register a named consumer bookmark of the pipeline''s outputs, owned by the calling role (read)';

CREATE FUNCTION streamforge.commit_consumer(pipeline text, name text,
    seq bigint, late_seq bigint DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_commit_consumer'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge.commit_consumer(text, text, bigint, bigint) IS
'record the last seq (and late_seq) a consumer processed (the consumer''s role, or admin)';

CREATE FUNCTION streamforge.drop_consumer(pipeline text, name text)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_drop_consumer'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge.drop_consumer(text, text) IS
'drop a consumer bookmark (the consumer''s role, or admin)';

-- Each consumer's lag: the changes and late events it has not committed
-- (up to the pipeline's last seq and late_seq in its outputs).  Shows the
-- consumers of the pipelines the role may read.
CREATE VIEW streamforge.consumer_lag WITH (security_invoker = true) AS
SELECT c.pipeline, c.name, c.owner, c.seq, c.late_seq, c.epoch,
       o.epoch AS current_epoch,
       greatest(coalesce(l.last_seq, 0) OPERATOR(pg_catalog.-) c.seq, 0)
           AS changes_behind,
       greatest(coalesce(t.last_late_seq, 0) OPERATOR(pg_catalog.-) c.late_seq, 0)
           AS late_behind,
       c.committed_at
  FROM streamforge.consumer AS c
  LEFT JOIN streamforge.output_config AS o ON o.pipeline OPERATOR(pg_catalog.=) c.pipeline
  LEFT JOIN LATERAL (SELECT pg_catalog.max(x.seq) AS last_seq FROM streamforge.changelog AS x
                      WHERE x.pipeline OPERATOR(pg_catalog.=) c.pipeline) AS l ON true
  LEFT JOIN LATERAL (SELECT pg_catalog.max(x.late_seq) AS last_late_seq
                       FROM streamforge.late_output AS x
                      WHERE x.pipeline OPERATOR(pg_catalog.=) c.pipeline) AS t ON true;
REVOKE ALL ON streamforge.consumer_lag FROM PUBLIC;
GRANT SELECT ON streamforge.consumer_lag TO PUBLIC;

-- Trims keep what the slowest registered consumer still needs: with a
-- bound, they trim at most up to it; without one (NULL), exactly up to it
-- (nothing without consumers).  (Replaces the 0.2.0
-- bodies of 40_outputs.sql.)
CREATE OR REPLACE FUNCTION streamforge_internal.trim_changelog_internal(pipeline text,
    up_to_seq bigint)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n bigint;
    slowest bigint;
BEGIN
    IF pipeline IS NULL THEN
        RAISE EXCEPTION 'arguments of trim_changelog must not be null'
            USING ERRCODE = '22004';
    END IF;
    SELECT pg_catalog.min(c.seq) INTO slowest FROM streamforge.consumer AS c
     WHERE c.pipeline OPERATOR(pg_catalog.=) trim_changelog_internal.pipeline;
    -- (0.3.0) no bound given: up to the slowest consumer, nothing without one
    IF up_to_seq IS NULL THEN
        IF slowest IS NULL THEN
            RETURN 0;
        END IF;
        up_to_seq := slowest;
    END IF;
    DELETE FROM streamforge.changelog AS c
     WHERE c.pipeline OPERATOR(pg_catalog.=) trim_changelog_internal.pipeline
       AND c.seq OPERATOR(pg_catalog.<=) trim_changelog_internal.up_to_seq
       AND (slowest IS NULL OR c.seq OPERATOR(pg_catalog.<=) slowest);
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;

CREATE OR REPLACE FUNCTION streamforge_internal.trim_late_output_internal(pipeline text,
    up_to_late_seq bigint)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n bigint;
    slowest bigint;
BEGIN
    IF pipeline IS NULL THEN
        RAISE EXCEPTION 'arguments of trim_late_output must not be null'
            USING ERRCODE = '22004';
    END IF;
    SELECT pg_catalog.min(c.late_seq) INTO slowest FROM streamforge.consumer AS c
     WHERE c.pipeline OPERATOR(pg_catalog.=) trim_late_output_internal.pipeline;
    -- (0.3.0) no bound given: up to the slowest consumer, nothing without one
    IF up_to_late_seq IS NULL THEN
        IF slowest IS NULL THEN
            RETURN 0;
        END IF;
        up_to_late_seq := slowest;
    END IF;
    DELETE FROM streamforge.late_output AS l
     WHERE l.pipeline OPERATOR(pg_catalog.=) trim_late_output_internal.pipeline
       AND l.late_seq OPERATOR(pg_catalog.<=) trim_late_output_internal.up_to_late_seq
       AND (slowest IS NULL OR l.late_seq OPERATOR(pg_catalog.<=) slowest);
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;

-- The trims' bound becomes optional: without it (or NULL), up to the
-- slowest registered consumer (C entry points of 40_outputs.sql)
CREATE OR REPLACE FUNCTION streamforge.trim_changelog(pipeline text,
    up_to_seq bigint DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sf_trim_changelog'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION streamforge.trim_late_output(pipeline text,
    up_to_late_seq bigint DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sf_trim_late_output'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON TABLE streamforge.consumer IS
    'consumer bookmarks of the pipelines'' outputs: the last seq and late_seq each consumer committed';
COMMENT ON VIEW streamforge.consumer_lag IS
    'each consumer''s bookmark and how many changes and late events it has not committed';
