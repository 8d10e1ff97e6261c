-- streamforge objects: consumer bookmarks (0.3.0, issue 25 item 4;
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

REVOKE ALL ON streamforge.consumer FROM PUBLIC;
GRANT SELECT ON streamforge.consumer TO PUBLIC;
DROP POLICY IF EXISTS consumer_read ON streamforge.consumer;
CREATE POLICY consumer_read ON streamforge.consumer
    FOR SELECT TO PUBLIC
    USING (EXISTS (SELECT 1 FROM streamforge.pipelines AS v
                    WHERE v.name OPERATOR(pg_catalog.=) consumer.pipeline));

CREATE OR REPLACE FUNCTION streamforge_internal.register_consumer_internal(pipeline text,
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
CREATE OR REPLACE FUNCTION streamforge_internal.consumer_for_update(pipeline text,
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

CREATE OR REPLACE FUNCTION streamforge_internal.commit_consumer_internal(pipeline text,
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

CREATE OR REPLACE FUNCTION streamforge_internal.drop_consumer_internal(pipeline text,
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

CREATE OR REPLACE FUNCTION streamforge.register_consumer(pipeline text, name text)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_register_consumer'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge.register_consumer(text, text) IS
'register a named consumer bookmark of the pipeline''s outputs, owned by the calling role (read)';

CREATE OR REPLACE FUNCTION streamforge.commit_consumer(pipeline text, name text,
    seq bigint, late_seq bigint DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_commit_consumer'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge.commit_consumer(text, text, bigint, bigint) IS
'record the last seq (and late_seq) a consumer processed (the consumer''s role, or admin)';

CREATE OR REPLACE FUNCTION streamforge.drop_consumer(pipeline text, name text)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_drop_consumer'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge.drop_consumer(text, text) IS
'drop a consumer bookmark (the consumer''s role, or admin)';

-- Each consumer's lag: the changes and late events it has not committed
-- (up to the pipeline's last seq and late_seq in its outputs).  Shows the
-- consumers of the pipelines the role may read.
CREATE OR REPLACE VIEW streamforge.consumer_lag WITH (security_invoker = true) AS
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

-- (The trims keep what the slowest registered consumer still needs:
-- trim_changelog_internal and trim_late_output_internal, 40_outputs.sql.)

COMMENT ON TABLE streamforge.consumer IS
    'consumer bookmarks of the pipelines'' outputs: the last seq and late_seq each consumer committed';
COMMENT ON VIEW streamforge.consumer_lag IS
    'each consumer''s bookmark and how many changes and late events it has not committed';
