-- streamforge objects: privileges on pipelines.
--
-- A pipeline belongs to the role that created it; other roles use it
-- through grants of read, ingest or admin (each includes the ones before
-- it).  The C functions check the caller's privilege and then run their
-- own queries as the extension's owner, so the tables themselves stay
-- closed to everybody else.  See docs/security.md and src/persist/acl.c.

CREATE OR REPLACE FUNCTION streamforge.grant(pipeline text, role name, privilege text)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_grant'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION streamforge.revoke(pipeline text, role name, privilege text)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_revoke'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION streamforge.set_owner(pipeline text, new_owner name)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_set_owner'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- Like has_table_privilege: whether role (by default the current user) has
-- the privilege on the pipeline.  An unknown pipeline is an error (42704).
CREATE OR REPLACE FUNCTION streamforge.has_pipeline_privilege(pipeline text,
    privilege text, role name DEFAULT CURRENT_USER)
RETURNS boolean
AS 'MODULE_PATHNAME', 'sf_has_pipeline_privilege'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

-- Raises 42704 (no such pipeline) or 42501 (permission denied) unless the
-- current user has the privilege; for functions built on streamforge's.
CREATE OR REPLACE FUNCTION streamforge.require_privilege(pipeline text, privilege text)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_require_privilege'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

-- The privilege such an owner and grants give the current user: 'admin',
-- 'ingest', 'read', or NULL.  A pure function of its arguments and the
-- current user's role memberships (no SECURITY DEFINER, no table access).
CREATE OR REPLACE FUNCTION streamforge.effective_privilege(owner regrole,
    readers regrole[], ingesters regrole[], admins regrole[])
RETURNS text
AS 'MODULE_PATHNAME', 'sf_effective_privilege'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

-- The pipelines the current user may use, with its privilege on each.
-- The view runs as its owner (the extension's owner), which may read
-- streamforge.pipeline; security_barrier keeps a caller's functions from
-- seeing rows before the privilege filter has removed them.
CREATE OR REPLACE VIEW streamforge.pipelines WITH (security_barrier) AS
SELECT p.name, p.owner, a.privilege, p.readers, p.ingesters, p.admins
  FROM streamforge.pipeline AS p,
       LATERAL (SELECT streamforge.effective_privilege(p.owner, p.readers,
                       p.ingesters, p.admins) AS privilege) AS a
 WHERE a.privilege IS NOT NULL;

REVOKE ALL ON streamforge.pipelines FROM PUBLIC;
GRANT SELECT ON streamforge.pipelines TO PUBLIC;

-- The output tables: PUBLIC may SELECT them (40_outputs.sql), and
-- row-level security shows each role the rows of the pipelines it may
-- read.  Their owner (the extension's owner, as which src/persist/sink.c writes
-- them) and superusers are not subject to the policies.  Nobody else may
-- write them.
-- (ENABLE ROW LEVEL SECURITY: sql/schema/20_tables.sql.)

DROP POLICY IF EXISTS output_config_read ON streamforge.output_config;
CREATE POLICY output_config_read ON streamforge.output_config
    FOR SELECT TO PUBLIC
    USING (EXISTS (SELECT 1 FROM streamforge.pipelines AS v
                    WHERE v.name OPERATOR(pg_catalog.=) output_config.pipeline));
DROP POLICY IF EXISTS changelog_read ON streamforge.changelog;
CREATE POLICY changelog_read ON streamforge.changelog
    FOR SELECT TO PUBLIC
    USING (EXISTS (SELECT 1 FROM streamforge.pipelines AS v
                    WHERE v.name OPERATOR(pg_catalog.=) changelog.pipeline));
DROP POLICY IF EXISTS results_read ON streamforge.results;
CREATE POLICY results_read ON streamforge.results
    FOR SELECT TO PUBLIC
    USING (EXISTS (SELECT 1 FROM streamforge.pipelines AS v
                    WHERE v.name OPERATOR(pg_catalog.=) results.pipeline));
DROP POLICY IF EXISTS late_output_read ON streamforge.late_output;
CREATE POLICY late_output_read ON streamforge.late_output
    FOR SELECT TO PUBLIC
    USING (EXISTS (SELECT 1 FROM streamforge.pipelines AS v
                    WHERE v.name OPERATOR(pg_catalog.=) late_output.pipeline));

REVOKE ALL ON streamforge.output_config, streamforge.changelog,
    streamforge.results, streamforge.late_output FROM PUBLIC;
GRANT SELECT ON streamforge.output_config, streamforge.changelog,
    streamforge.results, streamforge.late_output TO PUBLIC;
REVOKE ALL ON streamforge.pipeline, streamforge.journal,
    streamforge.stored_snapshot, streamforge.lane, streamforge.lane_journal
    FROM PUBLIC;
REVOKE ALL ON SEQUENCE streamforge.pipeline_id_seq, streamforge.output_epoch_seq FROM PUBLIC;

-- Called only as a trigger; nobody needs to call it directly.
REVOKE ALL ON FUNCTION streamforge_internal.output_config_changed() FROM PUBLIC;
