-- streamforge 0.2.0 -> 0.3.0 (ALTER EXTENSION streamforge UPDATE TO '0.3.0')
--
-- Every storage and SQL API change of 0.3.0, applied to a database that runs
-- 0.2.0.  Each section names the change and the file of sql/install/ whose
-- definitions it brings over; after this script the extension's objects are
-- exactly those of a fresh CREATE EXTENSION at 0.3.0 (test/t/090_upgrade.pl
-- compares them), and pipelines, outputs, grants and checkpoints of 0.2.0
-- keep working.
--
-- This file is a template: the Makefile builds the update script from it,
-- replacing each line "-- @include <file>" by that file of sql/install/,
-- so that every object new in 0.3.0 is defined once, for a fresh install
-- and for the update alike.

\echo Use "ALTER EXTENSION streamforge UPDATE TO '0.3.0'" to load this file. \quit

-- ----------------------------------------------------------------
-- First: the schemas are the extension's (issue 21 item 1;
-- sql/install/05_schemas.sql).  Before anything else, so that a schema
-- someone else owns or filled refuses the update before it has changed
-- anything.
-- ----------------------------------------------------------------
-- streamforge install script, part 0: the schemas are the extension's.
--
-- Runs first in CREATE EXTENSION and in every ALTER EXTENSION UPDATE (the
-- update scripts include or copy this piece before anything else), before
-- any object is created or replaced.  The control file's "schema =
-- streamforge" makes CREATE EXTENSION use an existing schema of that name
-- whoever made it; a role that could create it (any role with CREATE on
-- the database) could fill it with look-alike functions and operators
-- that the definitions below would bind to, or drop and replace the
-- extension's objects later as the schema's owner (issue 21).  So each of
-- streamforge and streamforge_internal, if it exists, must be
--   - owned by a superuser or by the extension's owner,
--   - closed to CREATE for every other role (PUBLIC included),
--   - free of objects that are not members of the extension: no function,
--     procedure, aggregate, operator, type, domain, table, view, sequence,
--     collation, conversion, operator class or family, text search object,
--     statistics object, cast or other extension (the indexes, row types
--     and array types of members go with them);
-- and streamforge_internal, which this script creates, must be a member
-- of the extension: at CREATE EXTENSION (and at the update from 0.1.0,
-- which creates it) it must not exist at all.
-- At CREATE EXTENSION nothing is a member yet, so streamforge must be
-- empty: the schema CREATE EXTENSION has just made passes, and so does an
-- empty one a superuser made beforehand (docs/security.md, "Threat
-- model").  Otherwise the command fails before it has changed anything,
-- with 42P06 (the schema exists and is not the extension's) or 42501 (a
-- role that is not trusted owns it or may create objects in it).
--
-- The block runs with the script's search_path (streamforge, pg_temp, with
-- pg_catalog searched first), where a look-alike may already exist: every
-- name in it is qualified.
DO LANGUAGE plpgsql $schemas$
DECLARE
    ext pg_catalog.oid;
    extowner pg_catalog.oid;
    nsp record;
    bad record;
    nbad pg_catalog.int8;
BEGIN
    SELECT e.oid, e.extowner INTO ext, extowner
      FROM pg_catalog.pg_extension AS e
     WHERE e.extname OPERATOR(pg_catalog.=) 'streamforge';
    FOR nsp IN
        SELECT n.oid, n.nspname, n.nspowner, n.nspacl,
               pg_catalog.pg_get_userbyid(n.nspowner) AS owner_name,
               EXISTS (SELECT 1 FROM pg_catalog.pg_depend AS d
                        WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_namespace'::pg_catalog.regclass
                          AND d.objid OPERATOR(pg_catalog.=) n.oid
                          AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
                          AND d.refobjid OPERATOR(pg_catalog.=) ext
                          AND d.deptype OPERATOR(pg_catalog.=) 'e') AS member
          FROM pg_catalog.pg_namespace AS n
         WHERE n.nspname OPERATOR(pg_catalog.=) ANY (ARRAY['streamforge', 'streamforge_internal']::pg_catalog.name[])
         ORDER BY n.nspname
    LOOP
        IF nsp.nspname OPERATOR(pg_catalog.=) 'streamforge_internal' AND NOT nsp.member THEN
            RAISE EXCEPTION USING
                ERRCODE = '42P06',
                MESSAGE = pg_catalog.format('schema "%s" already exists and is not a member of extension "streamforge"',
                                            nsp.nspname),
                DETAIL = pg_catalog.format('streamforge creates this schema itself.  One made by someone else (here owned by role "%s") may hold objects that the extension''s functions would call.',
                                           nsp.owner_name),
                HINT = 'Find out who created the schema and why, then drop or rename it and run the command again.';
        END IF;
        IF nsp.nspowner OPERATOR(pg_catalog.<>) extowner
           AND NOT (SELECT r.rolsuper FROM pg_catalog.pg_roles AS r
                     WHERE r.oid OPERATOR(pg_catalog.=) nsp.nspowner) THEN
            RAISE EXCEPTION USING
                ERRCODE = '42501',
                MESSAGE = pg_catalog.format('schema "%s" is owned by role "%s", which is neither a superuser nor the owner of extension "streamforge"',
                                            nsp.nspname, nsp.owner_name),
                DETAIL = 'The owner of a schema can drop and replace the objects in it, and streamforge''s functions run with the privileges of the extension''s owner.',
                HINT = pg_catalog.format('Find out who created the schema and why.  If it is empty, drop it and let CREATE EXTENSION create it, or make a superuser its owner (ALTER SCHEMA %s OWNER TO ...).',
                                         pg_catalog.quote_ident(nsp.nspname));
        END IF;
        SELECT CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                    ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(a.grantee)) END AS who
          INTO bad
          FROM pg_catalog.aclexplode(nsp.nspacl) AS a
         WHERE a.privilege_type OPERATOR(pg_catalog.=) 'CREATE'
           AND a.grantee OPERATOR(pg_catalog.<>) nsp.nspowner
         ORDER BY 1 LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION USING
                ERRCODE = '42501',
                MESSAGE = pg_catalog.format('schema "%s" grants CREATE to %s',
                                            nsp.nspname, bad.who),
                DETAIL = 'A role that may create objects in the schema can create functions or operators that streamforge''s definitions would call instead of the built-in ones.',
                HINT = pg_catalog.format('Revoke it (REVOKE CREATE ON SCHEMA %s FROM %s) and run the command again.',
                                         pg_catalog.quote_ident(nsp.nspname), bad.who);
        END IF;
        -- every object of the schema that is not a member of the extension
        WITH objs AS (
            SELECT 'pg_catalog.pg_proc'::pg_catalog.regclass AS classid, p.oid AS objid
              FROM pg_catalog.pg_proc AS p WHERE p.pronamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            SELECT 'pg_catalog.pg_operator'::pg_catalog.regclass, o.oid
              FROM pg_catalog.pg_operator AS o WHERE o.oprnamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            -- tables, views, sequences, foreign tables (not their indexes)
            SELECT 'pg_catalog.pg_class'::pg_catalog.regclass, c.oid
              FROM pg_catalog.pg_class AS c
             WHERE c.relnamespace OPERATOR(pg_catalog.=) nsp.oid
               AND c.relkind OPERATOR(pg_catalog.=) ANY (ARRAY['r', 'p', 'v', 'm', 'S', 'f']::pg_catalog."char"[])
            UNION ALL
            -- types of their own: not the row type of a relation (the
            -- relation is checked), nor an array or multirange type (its
            -- element or range is checked)
            SELECT 'pg_catalog.pg_type'::pg_catalog.regclass, t.oid
              FROM pg_catalog.pg_type AS t
             WHERE t.typnamespace OPERATOR(pg_catalog.=) nsp.oid
               AND t.typtype OPERATOR(pg_catalog.<>) 'm'
               AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_type AS e
                                WHERE e.typarray OPERATOR(pg_catalog.=) t.oid)
               AND (t.typrelid OPERATOR(pg_catalog.=) 0
                    OR (SELECT c.relkind FROM pg_catalog.pg_class AS c
                         WHERE c.oid OPERATOR(pg_catalog.=) t.typrelid) OPERATOR(pg_catalog.=) 'c')
            UNION ALL
            SELECT 'pg_catalog.pg_collation'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_collation AS x WHERE x.collnamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            SELECT 'pg_catalog.pg_conversion'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_conversion AS x WHERE x.connamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            SELECT 'pg_catalog.pg_opclass'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_opclass AS x WHERE x.opcnamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            SELECT 'pg_catalog.pg_opfamily'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_opfamily AS x WHERE x.opfnamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            SELECT 'pg_catalog.pg_ts_config'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_ts_config AS x WHERE x.cfgnamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            SELECT 'pg_catalog.pg_ts_dict'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_ts_dict AS x WHERE x.dictnamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            SELECT 'pg_catalog.pg_ts_parser'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_ts_parser AS x WHERE x.prsnamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            SELECT 'pg_catalog.pg_ts_template'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_ts_template AS x WHERE x.tmplnamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            SELECT 'pg_catalog.pg_statistic_ext'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_statistic_ext AS x WHERE x.stxnamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            SELECT 'pg_catalog.pg_extension'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_extension AS x
             WHERE x.extnamespace OPERATOR(pg_catalog.=) nsp.oid
               AND x.oid OPERATOR(pg_catalog.<>) ext
            UNION ALL
            -- casts from or to a type of the schema
            SELECT 'pg_catalog.pg_cast'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_cast AS x
             WHERE EXISTS (SELECT 1 FROM pg_catalog.pg_type AS t
                            WHERE t.oid OPERATOR(pg_catalog.=) ANY (ARRAY[x.castsource, x.casttarget])
                              AND t.typnamespace OPERATOR(pg_catalog.=) nsp.oid)),
        foreign_objs AS (
            SELECT o.classid, o.objid FROM objs AS o
             WHERE NOT EXISTS (
                SELECT 1 FROM pg_catalog.pg_depend AS d
                 WHERE d.classid OPERATOR(pg_catalog.=) o.classid
                   AND d.objid OPERATOR(pg_catalog.=) o.objid
                   AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
                   AND d.refobjid OPERATOR(pg_catalog.=) ext
                   AND d.deptype OPERATOR(pg_catalog.=) 'e'))
        SELECT (SELECT pg_catalog.count(*) FROM foreign_objs) AS n,
               (SELECT i.type OPERATOR(pg_catalog.||) ' ' OPERATOR(pg_catalog.||) i.identity
                  FROM pg_catalog.pg_identify_object(f.classid, f.objid, 0) AS i) AS what
          INTO bad
          FROM foreign_objs AS f
         ORDER BY 2 LIMIT 1;
        IF FOUND THEN
            nbad := bad.n;
            RAISE EXCEPTION USING
                ERRCODE = '42P06',
                MESSAGE = pg_catalog.format('schema "%s" contains %s, which is not a member of extension "streamforge"',
                                            nsp.nspname, bad.what),
                DETAIL = pg_catalog.format('The schema holds %s %s that the extension did not create.  Such an object can be called instead of the one streamforge''s definitions mean.',
                                           nbad, CASE WHEN nbad OPERATOR(pg_catalog.=) 1 THEN 'object' ELSE 'objects' END),
                HINT = 'Find out who created them and why, then move them to another schema or drop them, and run the command again.';
        END IF;
    END LOOP;
END
$schemas$;

-- ----------------------------------------------------------------
-- Qualified definitions (issue 21 item 1; sql/install/20_storage.sql,
-- 40_outputs.sql, 70_retention.sql, 80_pipeline_info.sql): every
-- function, operator and cast that a stored definition of 0.1.0 or 0.2.0
-- names without its schema is bound again to pg_catalog's.  A default
-- bound to a look-alike when 0.1.0 or 0.2.0 was installed (the
-- unqualified nextval() of pipeline.id, issue 21) no longer calls it.
-- The results table is rewritten once (its generated column avg is
-- dropped and added again, still last: PostgreSQL 15 cannot change a
-- generation expression); the other constraints are checked again.
-- ----------------------------------------------------------------
ALTER TABLE streamforge.pipeline
    ALTER COLUMN id
        SET DEFAULT pg_catalog.nextval('streamforge.pipeline_id_seq'::pg_catalog.regclass),
    DROP CONSTRAINT pipeline_name_check,
    ADD CONSTRAINT pipeline_name_check
        CHECK (pg_catalog.octet_length(name) OPERATOR(pg_catalog.>=) 1
               AND pg_catalog.octet_length(name) OPERATOR(pg_catalog.<=) 63),
    DROP CONSTRAINT pipeline_version_check,
    ADD CONSTRAINT pipeline_version_check
        CHECK (snapshot_version OPERATOR(pg_catalog.>=) 0
               AND snapshot_version OPERATOR(pg_catalog.<=) version),
    DROP CONSTRAINT pipeline_retention_check,
    ADD CONSTRAINT pipeline_retention_check
        CHECK (retention OPERATOR(pg_catalog.>=) 0);

ALTER TABLE streamforge.changelog
    DROP CONSTRAINT changelog_op_check,
    ADD CONSTRAINT changelog_op_check
        CHECK (op OPERATOR(pg_catalog.=) ANY
               (ARRAY['retract'::pg_catalog.text, 'upsert'::pg_catalog.text]));

ALTER TABLE streamforge.results
    DROP COLUMN avg,
    ADD COLUMN avg numeric GENERATED ALWAYS AS
        (sum OPERATOR(pg_catalog./)
         (CASE WHEN count OPERATOR(pg_catalog.=) 0 THEN NULL
               ELSE count END)::pg_catalog.numeric) STORED;

-- The view of every pipeline: its CASE compares with a qualified "=" and
-- its casts name pg_catalog's types (CREATE OR REPLACE VIEW).
-- streamforge install script, part 8: the defining query of a pipeline
-- for the view of every pipeline (docs/management.md, 85_metrics.sql).

-- ----------------------------------------------------------------
-- The pipelines, in one view
-- ----------------------------------------------------------------

-- The defining query of a pipeline made by create_aggregate (NULL for
-- others), for pipeline_info; plpgsql, so that the update from 0.2.0 can create it
-- before streamforge.aggregates (65_aggregates.sql, issue 29) exists.
CREATE OR REPLACE FUNCTION streamforge_internal.pipeline_query(pipeline text)
RETURNS text
LANGUAGE plpgsql STABLE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN (SELECT a.query FROM streamforge.aggregates AS a WHERE a.name = pipeline);
END
$$;
COMMENT ON FUNCTION streamforge_internal.pipeline_query(text) IS
    'the query of an aggregate, NULL for another pipeline (internal helper of pipeline_info)';

-- The view itself, pipeline_info, is in 85_metrics.sql: its last columns
-- come from partition_progress (72_progress.sql).

-- ----------------------------------------------------------------
-- restore() keeps finalized results rows whose changelog rows were trimmed
-- (issue 21): streamforge_internal.final_rows, and resync_outputs_internal
-- replaced (CREATE OR REPLACE keeps its grants and comment).
-- ----------------------------------------------------------------
-- ----------------------------------------------------------------
-- Resynchronizing the outputs after restore() (0.2.0; final_rows 0.3.0)
-- ----------------------------------------------------------------

-- The rows the pipeline has finalized at the given addresses, as they were
-- finalized, derived from its remembered events (src/engine/final_rows.c;
-- the entry point is in src/api/outputs.c), for the addresses
-- resync_outputs_internal cannot rebuild from the changelog.
-- Internal: run by resync_outputs_internal as the extension's owner.
CREATE FUNCTION streamforge_internal.final_rows(pipeline text,
    window_name text[], key text[], window_start bigint[],
    window_end bigint[])
RETURNS SETOF streamforge.result
AS 'MODULE_PATHNAME', 'sf_final_rows'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

REVOKE ALL ON FUNCTION streamforge_internal.final_rows(text, text[], text[],
    bigint[], bigint[]) FROM PUBLIC;

COMMENT ON FUNCTION streamforge_internal.final_rows(text, text[], text[],
    bigint[], bigint[]) IS
    'internal: the finalized rows at the given addresses, derived from the remembered events (resync_outputs)';

-- Bring a pipeline's outputs back in line with its state after restore()
-- replaced it.  r is the restored seq.  The changes past r are undone: every
-- address that a changelog row or a results row past r touched is reset to
-- its latest change up to r in the changelog (when the changelog is on;
-- else it is deleted).  An address with no changelog row up to r (trimmed,
-- or the changelog is off) that the restored state has finalized gets the
-- row it was finalized with instead, derived from the remembered events by
-- final_rows (0.3.0, issue 21: after a lateness raise and lower past the
-- checkpoint, such rows were lost).  Then the changelog and late output
-- rows past r and the restored late_seq are deleted (the restored pipeline
-- will emit those numbers again).  Every other results row stays,
-- including finalized rows with seq NULL (copied from visible()): they
-- were right at seq r too.  Last, the results are made to agree with
-- visible().  So on outputs that already agree nothing changes, and
-- nothing trimmed comes back.  Takes the pipeline's row lock like
-- configure_outputs.  Needs the admin privilege, checked the same way as
-- configure_outputs' (resync_outputs_internal runs as the owner).
CREATE OR REPLACE FUNCTION streamforge_internal.resync_outputs_internal(pipeline text)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    cfg streamforge.output_config;
    st record;
    uw text[];
    uk text[];
    us bigint[];
    ue bigint[];
    ep bigint;
BEGIN
    IF pipeline IS NULL THEN
        RAISE EXCEPTION 'pipeline must not be null' USING ERRCODE = '22004';
    END IF;
    PERFORM 1 FROM streamforge.pipeline AS p
     WHERE p.name OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
       FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'pipeline "%" does not exist', pipeline
            USING ERRCODE = '42704';
    END IF;
    SELECT * INTO cfg FROM streamforge.output_config AS c
     WHERE c.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline;
    st := streamforge.stats(pipeline);
    -- (0.3.0) a new epoch: the seq numbers past the restored seq will be
    -- emitted again; the rows rebuilt below are written in it
    UPDATE streamforge.output_config AS c
       SET epoch = pg_catalog.nextval('streamforge.output_epoch_seq'::pg_catalog.regclass)
     WHERE c.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
    RETURNING c.epoch INTO ep;

    IF coalesce(cfg.results, false) THEN
        -- the addresses to undo that the changelog has nothing for up to r
        -- (trimmed, or the changelog is off)
        SELECT pg_catalog.array_agg(u.window_name), pg_catalog.array_agg(u.key),
               pg_catalog.array_agg(u.window_start), pg_catalog.array_agg(u.window_end)
          INTO uw, uk, us, ue
          FROM (SELECT c.window_name, c.key, c.window_start, c.window_end
                  FROM streamforge.changelog AS c
                 WHERE c.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
                   AND c.seq OPERATOR(pg_catalog.>) st.changes_emitted
                UNION
                SELECT r.window_name, r.key, r.window_start, r.window_end
                  FROM streamforge.results AS r
                 WHERE r.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
                   AND r.seq OPERATOR(pg_catalog.>) st.changes_emitted) AS u
         WHERE NOT cfg.changelog OR NOT EXISTS (
                SELECT 1 FROM streamforge.changelog AS c
                 WHERE c.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
                   AND (c.window_name, c.key, c.window_start, c.window_end)
                       OPERATOR(pg_catalog.=) (u.window_name, u.key, u.window_start, u.window_end)
                   AND c.seq OPERATOR(pg_catalog.<=) st.changes_emitted);

        WITH undone AS (
            SELECT c.window_name, c.key, c.window_start, c.window_end
              FROM streamforge.changelog AS c
             WHERE c.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
               AND c.seq OPERATOR(pg_catalog.>) st.changes_emitted
            UNION
            SELECT r.window_name, r.key, r.window_start, r.window_end
              FROM streamforge.results AS r
             WHERE r.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
               AND r.seq OPERATOR(pg_catalog.>) st.changes_emitted),
        gone AS (
            DELETE FROM streamforge.results AS r
             USING undone AS u
             WHERE r.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
               AND (r.window_name, r.key, r.window_start, r.window_end)
                   OPERATOR(pg_catalog.=) (u.window_name, u.key, u.window_start, u.window_end))
        INSERT INTO streamforge.results (pipeline, window_name, key,
                window_start, window_end, count, sum, min, max, seq, final, epoch,
                aggregates)
        SELECT l.pipeline, l.window_name, l.key, l.window_start,
               l.window_end, l.count, l.sum, l.min, l.max, l.seq,
               l.op OPERATOR(pg_catalog.=) 'final', l.epoch, l.aggregates
          FROM (SELECT DISTINCT ON (c.window_name, c.key, c.window_start,
                                    c.window_end) c.*
                  FROM streamforge.changelog AS c
                  JOIN undone AS u
                    ON (c.window_name, c.key, c.window_start, c.window_end)
                       OPERATOR(pg_catalog.=) (u.window_name, u.key, u.window_start, u.window_end)
                 WHERE c.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
                   AND c.seq OPERATOR(pg_catalog.<=) st.changes_emitted
                 ORDER BY c.window_name, c.key, c.window_start,
                          c.window_end, c.seq DESC) AS l
         WHERE l.op OPERATOR(pg_catalog.<>) 'retract' AND cfg.changelog;

        -- no changelog row up to r: a finalized address gets the row it
        -- was finalized with; the others are visible() rows (below) or
        -- did not exist at r
        INSERT INTO streamforge.results (pipeline, window_name, key,
                window_start, window_end, count, sum, min, max, seq, final, epoch)
        SELECT resync_outputs_internal.pipeline, f.window_name, f.key,
               f.window_start, f.window_end, f.count, f.sum, f.min, f.max, NULL,
               true, ep
          FROM streamforge_internal.final_rows(resync_outputs_internal.pipeline,
                                               uw, uk, us, ue) AS f
         WHERE NOT EXISTS (
                SELECT 1 FROM streamforge.results AS r
                 WHERE r.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
                   AND (r.window_name, r.key, r.window_start, r.window_end)
                       OPERATOR(pg_catalog.=) (f.window_name, f.key, f.window_start, f.window_end));
    END IF;

    DELETE FROM streamforge.changelog AS c
     WHERE c.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
       AND c.seq OPERATOR(pg_catalog.>) st.changes_emitted;
    DELETE FROM streamforge.late_output AS l
     WHERE l.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
       AND l.late_seq OPERATOR(pg_catalog.>) st.late_events;

    IF coalesce(cfg.results, false) THEN
        -- visible() is the truth for the rows it shows
        DELETE FROM streamforge.results AS r
         USING streamforge.visible(resync_outputs_internal.pipeline) AS v
         WHERE r.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
           AND (r.window_name, r.key, r.window_start, r.window_end)
               OPERATOR(pg_catalog.=) (v.window_name, v.key, v.window_start, v.window_end)
           AND (r.count, r.sum, r.min, r.max)
               IS DISTINCT FROM (v.count, v.sum, v.min, v.max);
        INSERT INTO streamforge.results (pipeline, window_name, key,
                window_start, window_end, count, sum, min, max, seq, epoch)
        SELECT resync_outputs_internal.pipeline, v.window_name, v.key, v.window_start,
               v.window_end, v.count, v.sum, v.min, v.max, NULL, ep
          FROM streamforge.visible(resync_outputs_internal.pipeline) AS v
         WHERE NOT EXISTS (
                SELECT 1 FROM streamforge.results AS r
                 WHERE r.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
                   AND (r.window_name, r.key, r.window_start, r.window_end)
                       OPERATOR(pg_catalog.=) (v.window_name, v.key, v.window_start, v.window_end));
        -- what results_retention dropped stays dropped
        PERFORM streamforge_internal.trim_results_internal(resync_outputs_internal.pipeline);
        -- (0.3.0) a row finalized after the checkpoint that no change
        -- past it touched (in 'update' mode finalization writes no change)
        -- is not final in the restored state
        UPDATE streamforge.results AS r SET final = false
         WHERE r.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
           AND r.final
           AND (streamforge.watermark(resync_outputs_internal.pipeline) IS NULL
                OR r.window_end::pg_catalog.numeric OPERATOR(pg_catalog.+)
                   (SELECT p.lateness FROM streamforge.pipeline AS p
                     WHERE p.name OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline)
                   OPERATOR(pg_catalog.>=) streamforge.watermark(resync_outputs_internal.pipeline));
        -- (0.3.0) the rows the restored state has finalized are final
        UPDATE streamforge.results AS r SET final = true
         WHERE r.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
           AND NOT r.final
           AND r.window_end::pg_catalog.numeric OPERATOR(pg_catalog.+)
               (SELECT p.lateness FROM streamforge.pipeline AS p
                 WHERE p.name OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline)
               OPERATOR(pg_catalog.<) streamforge.watermark(resync_outputs_internal.pipeline);
    END IF;

    -- (0.3.0) the timestamps of the rows rebuilt here
    IF coalesce(cfg.results, false) THEN
        PERFORM streamforge_internal.outputs_fill_ts(resync_outputs_internal.pipeline);
        -- (issue 27) a measures pipeline's aggregates, 86_outputs_aggregates.sql
        PERFORM streamforge_internal.outputs_fill_aggregates(resync_outputs_internal.pipeline);
    END IF;
    -- (0.3.0) one notification of the new epoch
    IF coalesce(cfg.notify, false) THEN
        PERFORM streamforge_internal.notify_changes(resync_outputs_internal.pipeline);
    END IF;
END
$$;


REVOKE ALL ON FUNCTION streamforge_internal.resync_outputs_internal(text) FROM PUBLIC;

-- ----------------------------------------------------------------
-- time_to_units in C (sql/install/60_ingest.sql): one conversion for the
-- SQL paths and ingest_json, exact to the end of timestamptz's range
-- (22003 where 0.2.0's ingest_json wrapped around)
-- ----------------------------------------------------------------

CREATE OR REPLACE FUNCTION streamforge.time_to_units(t timestamptz, unit interval)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sf_time_to_units_sql'
LANGUAGE C STABLE PARALLEL SAFE;

-- ----------------------------------------------------------------
-- Attachments bound to their pipeline's identity (issue 21, items 3, 4 and
-- 5 of "Low"; sql/install/62_attach.sql, moved out of 60_ingest.sql)
-- ----------------------------------------------------------------
-- The functions and the view, then every attachment of 0.2.0 (triggers
-- with 6 arguments, the first naming the pipeline) made again the way
-- attach() makes them now: bound to the id of the pipeline of that name,
-- with the columns its mappings read, an AFTER UPDATE trigger with a
-- transition table and a WHEN clause naming those columns.  The mappings
-- stay as they are (already converted).  An attachment whose pipeline is
-- gone (0.2.0 left it when the pipeline was dropped) is bound to id 0,
-- which no pipeline has: it refuses inserts, as it did, with a hint to
-- detach.  If a pipeline was re-created under a dropped one's name before
-- this update, the attachment binds to it, as 0.2.0 ingested into it:
-- check streamforge.attachments after updating.
-- streamforge install script, part 6b: tables attached to a pipeline
-- (attach, detach; 0.2.0, bound to the pipeline's identity in 0.3.0).
-- docs/ingestion.md describes them.
--
-- Every statement here is CREATE OR REPLACE (or can run twice), so that
-- the update script from 0.2.0 includes this file whole
-- (sql/upgrade/streamforge--0.2.0--0.3.0.sql.in), then migrates the
-- attachments of 0.2.0.
--
-- attach() creates two triggers on the table, named after the pipeline:
-- a statement-level AFTER INSERT trigger with a transition table, which
-- appends the statement's new rows (one append_batch per statement, so a
-- COPY of a million rows is one batch) in the inserting transaction, and a
-- row-level AFTER UPDATE trigger that refuses to change what a mapping
-- reads.  DELETE and TRUNCATE are ignored: the events stay consumed.
--
-- The mappings are SQL expressions over the table's columns, stored (as
-- fully qualified, type-converted expressions) in the triggers' arguments,
-- so pg_dump carries an attachment with its table, and restoring the
-- table's rows (which pg_dump does before it creates triggers) ingests
-- nothing twice.  The arguments are, in order: the pipeline's name, the
-- expressions of partition, event_id, key, event_time (in units) and
-- value, the pipeline's id, the numbers of the columns the expressions
-- read and those columns' names and types at attach time.
--
-- An attachment may have a filter (0.3.0, issue 29; create_aggregate's
-- WHERE): a boolean expression over the row, the tenth argument of the
-- triggers (an attachment without one has nine, as before).  Rows for
-- which it is not true are not ingested; an update that changes whether a
-- row matches is refused like one that changes a mapped value.
--
-- An attachment of a measures pipeline (0.3.0, issue 29; attach(...,
-- measures => ARRAY[...])) has eleven arguments: the sixth is the
-- expression ARRAY[(m1)::int8, ...]::int8[] of its measures, the tenth its
-- filter or '' for none, the eleventh the word measures; its insert
-- trigger calls append_measures_batch (86_attach_measures.sql).  The
-- other attachments keep the arguments they had.
--
-- Identity: an attachment is bound to its pipeline's id (never reused;
-- pg_dump carries ids over), not to its name.  drop_pipeline detaches
-- first (src/api/define.c calls drop_attachments below as the extension's
-- owner); an attachment left bound to a dropped pipeline (a table restored
-- without its pipeline, a trigger made by hand) refuses every insert, and a
-- pipeline created since under the same name receives nothing.
--
-- The columns: the update trigger's WHEN clause names every column the
-- mappings read, so that PostgreSQL refuses DROP COLUMN and ALTER COLUMN
-- TYPE of them (pg_depend); a rename is caught by the insert trigger,
-- which compares the columns' names and types with those at attach time.
-- The update trigger has a transition table, so that PostgreSQL refuses to
-- make the table a partition or an inheritance child (whose rows inserted
-- through the parent would never reach the trigger); attach() refuses
-- partitioned tables, partitions and tables in an inheritance hierarchy,
-- and the insert trigger refuses once the table has gained a child.
--
-- Privileges: the triggers run as the inserting role (no SECURITY
-- DEFINER), which therefore needs the ingest privilege on the pipeline;
-- an insert by a role without it fails with 42501 and inserts nothing.
-- Only the table's owner may attach (the expressions are code that will
-- run as whoever inserts, like any trigger the owner writes), and the
-- owner must have the ingest privilege: attach() checks it, and so does
-- the insert trigger at every statement, so that a trigger made by hand
-- (CREATE TRIGGER needs EXECUTE on the trigger function, which table owners
-- must keep for attach() and pg_restore) gains nothing that attach() would
-- not give.
--
-- Settings: the trigger functions pin search_path to pg_catalog, pg_temp,
-- so the mappings mean the same thing for every inserting role (qualify
-- your own functions), and the settings that change how values convert to
-- and from text (TimeZone, DateStyle, IntervalStyle, extra_float_digits,
-- bytea_output, lc_numeric, lc_monetary, lc_time,
-- standard_conforming_strings, transform_null_equals), so that a retried
-- insert maps to the same events whatever the inserting session's settings.
-- Not timezone_abbreviations: setting it reads its file, at every call.

-- attach() and attach_create_triggers() gained a filter in 0.3.0: the
-- update from 0.2.0 drops their old signatures (nothing depends on them),
-- so that a call with the old arguments is not ambiguous.
DO $drop_old$
BEGIN
    IF pg_catalog.to_regprocedure('streamforge.attach(text, pg_catalog.regclass, text, text, text, text, text)') IS NOT NULL THEN
        DROP FUNCTION streamforge.attach(text, pg_catalog.regclass, text, text, text, text, text);
    END IF;
    IF pg_catalog.to_regprocedure('streamforge_internal.attach_create_triggers(text, bigint, pg_catalog.regclass, text, text, text, text, text)') IS NOT NULL THEN
        DROP FUNCTION streamforge_internal.attach_create_triggers(text, bigint, pg_catalog.regclass, text, text, text, text, text);
    END IF;
END
$drop_old$;

-- The trigger name of an attachment of pipeline to a table.
CREATE OR REPLACE FUNCTION streamforge_internal.attach_trigger_name(pipeline text)
RETURNS name
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN ('streamforge_attach_' OPERATOR(pg_catalog.||) pg_catalog.left(pg_catalog.md5(pipeline), 16))::pg_catalog.name;
COMMENT ON FUNCTION streamforge_internal.attach_trigger_name(text) IS
    'the name of the INSERT trigger that attaches a pipeline to a table (internal helper)';

-- The arguments of a trigger (pg_trigger.tgargs) as text[].
CREATE OR REPLACE FUNCTION streamforge_internal.trigger_args(args bytea)
RETURNS text[]
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    result text[] := '{}';
    rest bytea := args;
    i integer;
BEGIN
    LOOP
        i := pg_catalog.position(rest, '\x00'::pg_catalog.bytea);
        EXIT WHEN i OPERATOR(pg_catalog.=) 0;
        result := result OPERATOR(pg_catalog.||) pg_catalog.convert_from(pg_catalog.substr(rest, 1, i OPERATOR(pg_catalog.-) 1), pg_catalog.current_setting('server_encoding'));
        rest := pg_catalog.substr(rest, i OPERATOR(pg_catalog.+) 1);
    END LOOP;
    RETURN result;
END
$$;
COMMENT ON FUNCTION streamforge_internal.trigger_args(bytea) IS
    'the arguments of a trigger as text[] (internal helper)';

-- The type of a mapping expression over the table (with no row read).
CREATE OR REPLACE FUNCTION streamforge_internal.attach_expr_type(source regclass, expr text)
RETURNS regtype
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t regtype;
BEGIN
    FOR t IN EXECUTE pg_catalog.format('SELECT pg_catalog.pg_typeof((SELECT %s FROM %s AS new_rows LIMIT 0))',
                                       expr, source)
    LOOP
    END LOOP;
    RETURN t;
END
$$;
COMMENT ON FUNCTION streamforge_internal.attach_expr_type(regclass, text) IS
    'the type of a mapping expression over a table (internal helper)';

-- The id of the pipeline named pipeline, NULL if there is none.  Runs as
-- the extension's owner, which may read streamforge.pipeline; ids are not
-- secret (any role may try a name with streamforge.stats and read 42704).
CREATE OR REPLACE FUNCTION streamforge_internal.pipeline_id(pipeline text)
RETURNS bigint
LANGUAGE sql STABLE STRICT PARALLEL SAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
RETURN (SELECT p.id FROM streamforge.pipeline AS p
         WHERE p.name OPERATOR(pg_catalog.=) pipeline);
COMMENT ON FUNCTION streamforge_internal.pipeline_id(text) IS
    'the id of a pipeline, NULL if none (internal helper of attachments)';

-- The names and types of the given columns of a table, in column order
-- ('' for none): what an attachment's mappings read.
CREATE OR REPLACE FUNCTION streamforge_internal.attach_columns(source regclass, attnums smallint[])
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN (SELECT COALESCE(pg_catalog.string_agg(
               pg_catalog.quote_ident(a.attname::pg_catalog.text) OPERATOR(pg_catalog.||) ' '
               OPERATOR(pg_catalog.||) pg_catalog.format_type(a.atttypid, a.atttypmod),
               ', ' ORDER BY a.attnum), '')
          FROM pg_catalog.pg_attribute AS a
         WHERE a.attrelid OPERATOR(pg_catalog.=) source
           AND a.attnum OPERATOR(pg_catalog.=) ANY (attnums));
COMMENT ON FUNCTION streamforge_internal.attach_columns(regclass, smallint[]) IS
    'the names and types of columns of a table (internal helper of attachments)';

-- What the triggers of an attachment check before they do anything: that
-- the trigger is one attach() would have made (its arguments, its name),
-- that the columns the mappings read are those of attach time, and, for
-- the insert trigger, that the table has no child, that the pipeline
-- bound is the one of that name and that the table's owner may ingest into
-- it.  args: the trigger's arguments (1-based).  Returns the pipeline's id.
CREATE OR REPLACE FUNCTION streamforge_internal.attach_check(source regclass,
    trigger_name name, args text[], for_insert boolean)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n integer := COALESCE(pg_catalog.cardinality(args), 0);
    id bigint;
    now_columns text;
    table_owner name;
BEGIN
    IF n OPERATOR(pg_catalog.<>) ALL (ARRAY[6, 9, 10, 11])
       OR (n OPERATOR(pg_catalog.=) 11 AND args[11] OPERATOR(pg_catalog.<>) 'measures')
       OR trigger_name OPERATOR(pg_catalog.<>)
          (streamforge_internal.attach_trigger_name(args[1])::pg_catalog.text
           OPERATOR(pg_catalog.||) CASE WHEN for_insert THEN '' ELSE '_update' END)::pg_catalog.name
       OR (n OPERATOR(pg_catalog.>=) 9
           AND (args[7] OPERATOR(pg_catalog.!~) '^[0-9]{1,18}$'
                OR args[8] OPERATOR(pg_catalog.!~) '^[{][0-9,]*[}]$')) THEN
        RAISE EXCEPTION 'trigger "%" on table % was not made by streamforge.attach()', trigger_name, source
            USING ERRCODE = '39P01',
                  HINT = 'Drop the trigger and attach the table with streamforge.attach().';
    END IF;
    IF n OPERATOR(pg_catalog.=) 6 THEN
        RAISE EXCEPTION 'the attachment of table % to pipeline "%" is not bound to the pipeline', source, args[1]
            USING ERRCODE = '55000',
                  DETAIL = 'It has the form of streamforge 0.2.0, which names its pipeline only (ALTER EXTENSION UPDATE binds those it finds; one restored from a dump of 0.2.0 since was not).',
                  HINT = pg_catalog.format('Attach it again: SELECT streamforge.detach(%L, %L); then streamforge.attach(...).',
                                           args[1], source::pg_catalog.text);
    END IF;
    now_columns := streamforge_internal.attach_columns(source, args[8]::pg_catalog.int2[]);
    IF now_columns OPERATOR(pg_catalog.<>) args[9] THEN
        RAISE EXCEPTION 'the columns that the attachment of table % to pipeline "%" reads have changed', source, args[1]
            USING ERRCODE = '55000',
                  DETAIL = pg_catalog.format('At attach time: %s. Now: %s.', args[9], now_columns),
                  HINT = 'Detach the pipeline and attach it again, with mappings over the current columns.';
    END IF;
    IF NOT for_insert THEN
        RETURN NULL;
    END IF;
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_inherits AS i
                WHERE i.inhparent OPERATOR(pg_catalog.=) source
                   OR i.inhrelid OPERATOR(pg_catalog.=) source) THEN
        RAISE EXCEPTION 'table % attached to pipeline "%" has an inheritance child or parent', source, args[1]
            USING ERRCODE = '0A000',
                  DETAIL = 'Rows inserted straight into a child table or a partition are not ingested.',
                  HINT = 'Take the table out of its inheritance hierarchy, or detach the pipeline.';
    END IF;
    id := args[7]::pg_catalog.int8;
    IF streamforge_internal.pipeline_id(args[1]) IS DISTINCT FROM id THEN
        RAISE EXCEPTION 'pipeline "%" attached to table % was dropped', args[1], source
            USING ERRCODE = '42704',
                  DETAIL = 'The attachment is bound to the dropped pipeline; a pipeline created since under the same name is another pipeline.',
                  HINT = pg_catalog.format('Detach it: SELECT streamforge.detach(%L, %L);',
                                           args[1], source::pg_catalog.text);
    END IF;
    SELECT c.relowner::pg_catalog.regrole::pg_catalog.name INTO table_owner
      FROM pg_catalog.pg_class AS c WHERE c.oid OPERATOR(pg_catalog.=) source;
    IF NOT streamforge.has_pipeline_privilege(args[1], 'ingest', table_owner) THEN
        RAISE EXCEPTION 'owner of table % may not ingest into pipeline "%"', source, args[1]
            USING ERRCODE = '42501',
                  DETAIL = pg_catalog.format('An attached table ingests on its owner''s authority: role %I needs the ingest privilege on the pipeline, as for streamforge.attach().',
                                             table_owner);
    END IF;
    RETURN id;
END
$$;
COMMENT ON FUNCTION streamforge_internal.attach_check(regclass, name, text[], boolean) IS
    'checks a trigger of an attachment before it runs (internal helper)';

-- The statement-level AFTER INSERT trigger of an attachment.
CREATE OR REPLACE FUNCTION streamforge_internal.attached_insert()
RETURNS trigger
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
SET TimeZone = 'UTC'
SET DateStyle = 'ISO, MDY'
SET IntervalStyle = 'postgres'
SET extra_float_digits = 1
SET bytea_output = 'hex'
SET lc_numeric = 'C'
SET lc_monetary = 'C'
SET lc_time = 'C'
SET standard_conforming_strings = on
SET transform_null_equals = off
AS $$
DECLARE
    id bigint;
    n bigint;
BEGIN
    IF TG_LEVEL OPERATOR(pg_catalog.<>) 'STATEMENT' OR TG_OP OPERATOR(pg_catalog.<>) 'INSERT'
       OR TG_WHEN OPERATOR(pg_catalog.<>) 'AFTER' THEN
        RAISE EXCEPTION 'streamforge_internal.attached_insert() must be created by streamforge.attach()'
            USING ERRCODE = '39P01';
    END IF;
    id := streamforge_internal.attach_check(TG_RELID, TG_NAME,
                                            ARRAY(SELECT pg_catalog.unnest(TG_ARGV)), true);
    -- a cursor: exactly one query, whatever the expressions contain
    IF TG_NARGS OPERATOR(pg_catalog.=) 11 THEN
        -- a measures pipeline: append_measures_batch assigns the offsets
        FOR n IN EXECUTE pg_catalog.format(
            'SELECT pg_catalog.count(*) FROM streamforge.append_measures_batch($1, '
            'ARRAY(SELECT ROW(%s, NULL::pg_catalog.int8, %s, %s, %s, %s)::streamforge.measures_delivery FROM new_rows%s))',
            TG_ARGV[1], TG_ARGV[2], TG_ARGV[3], TG_ARGV[4], TG_ARGV[5],
            CASE WHEN TG_ARGV[9] OPERATOR(pg_catalog.<>) ''
                 THEN pg_catalog.format(' WHERE (%s)', TG_ARGV[9]) ELSE '' END)
            USING TG_ARGV[0]
        LOOP
        END LOOP;
    ELSE
        FOR n IN EXECUTE pg_catalog.format(
            'SELECT pg_catalog.count(*) FROM streamforge.append_batch($1, '
            'ARRAY(SELECT ROW(%s, %s, %s, %s, %s)::streamforge.event FROM new_rows%s))',
            TG_ARGV[1], TG_ARGV[2], TG_ARGV[3], TG_ARGV[4], TG_ARGV[5],
            CASE WHEN TG_NARGS OPERATOR(pg_catalog.>=) 10
                 THEN pg_catalog.format(' WHERE (%s)', TG_ARGV[9]) ELSE '' END)
            USING TG_ARGV[0]
        LOOP
        END LOOP;
    END IF;
    -- the pipeline is locked by this transaction now: still the same one?
    IF streamforge_internal.pipeline_id(TG_ARGV[0]) IS DISTINCT FROM id THEN
        RAISE EXCEPTION 'pipeline "%" attached to table % was dropped', TG_ARGV[0], TG_RELID::pg_catalog.regclass
            USING ERRCODE = '42704';
    END IF;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION streamforge_internal.attached_insert() IS
    'trigger of streamforge.attach: appends the inserted rows to the pipeline';

-- The row-level AFTER UPDATE trigger of an attachment: an update that
-- changes what the mappings read is refused; others pass.
CREATE OR REPLACE FUNCTION streamforge_internal.attached_update()
RETURNS trigger
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
SET TimeZone = 'UTC'
SET DateStyle = 'ISO, MDY'
SET IntervalStyle = 'postgres'
SET extra_float_digits = 1
SET bytea_output = 'hex'
SET lc_numeric = 'C'
SET lc_monetary = 'C'
SET lc_time = 'C'
SET standard_conforming_strings = on
SET transform_null_equals = off
AS $$
DECLARE
    q text;
    o text;
    n text;
BEGIN
    IF TG_LEVEL OPERATOR(pg_catalog.<>) 'ROW' OR TG_OP OPERATOR(pg_catalog.<>) 'UPDATE' THEN
        RAISE EXCEPTION 'streamforge_internal.attached_update() must be created by streamforge.attach()'
            USING ERRCODE = '39P01';
    END IF;
    PERFORM streamforge_internal.attach_check(TG_RELID, TG_NAME,
                                              ARRAY(SELECT pg_catalog.unnest(TG_ARGV)), false);
    -- with a filter, a row that does not match is no event (NULL)
    -- (a measures attachment's row is a record: its sixth field an array)
    q := pg_catalog.format('SELECT CASE WHEN %s THEN ROW(%s, %s, %s, %s, %s)%s::pg_catalog.text END '
                           'FROM (SELECT ($1).*) AS new_rows',
                           CASE WHEN TG_NARGS OPERATOR(pg_catalog.>=) 10
                                     AND TG_ARGV[9] OPERATOR(pg_catalog.<>) ''
                                THEN pg_catalog.format('COALESCE((%s), false)', TG_ARGV[9])
                                ELSE 'true' END,
                           TG_ARGV[1], TG_ARGV[2], TG_ARGV[3], TG_ARGV[4], TG_ARGV[5],
                           CASE WHEN TG_NARGS OPERATOR(pg_catalog.=) 11 THEN ''
                                ELSE '::streamforge.event' END);
    FOR o IN EXECUTE q USING OLD LOOP END LOOP;
    FOR n IN EXECUTE q USING NEW LOOP END LOOP;
    IF (o IS NULL) OPERATOR(pg_catalog.<>) (n IS NULL) THEN
        RAISE EXCEPTION 'cannot change whether a row of table % matches the filter of pipeline "%"',
                        TG_RELID::pg_catalog.regclass, TG_ARGV[0]
            USING ERRCODE = '0A000',
                  DETAIL = pg_catalog.format('The filter is %s; the row %s it before the update and %s after.',
                                             TG_ARGV[9], CASE WHEN o IS NULL THEN 'did not match' ELSE 'matched' END,
                                             CASE WHEN n IS NULL THEN 'would not' ELSE 'would' END),
                  HINT = 'Insert a new row instead.';
    END IF;
    IF o IS DISTINCT FROM n THEN
        RAISE EXCEPTION 'cannot change an event of table % attached to pipeline "%"',
                        TG_RELID::pg_catalog.regclass, TG_ARGV[0]
            USING ERRCODE = '0A000',
                  DETAIL = pg_catalog.format('The pipeline consumed the row as %s; the update would make it %s.', o, n),
                  HINT = 'Insert a correcting row instead, with a new event id.';
    END IF;
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION streamforge_internal.attached_update() IS
    'trigger of streamforge.attach: refuses updates that change an ingested event';

-- Create the two triggers of an attachment, with the mappings already
-- converted (as attach() does, or as a trigger of 0.2.0 holds them).  The
-- columns the mappings read come from the dependencies of a temporary view
-- over them; a whole-row reference reads every column, and so does any
-- mapping when no temporary view can be made.  Runs as the caller: it does
-- nothing the caller could not do with CREATE TRIGGER, and the triggers
-- check themselves (attach_check).
CREATE OR REPLACE FUNCTION streamforge_internal.attach_create_triggers(
    pipeline text, pipeline_id bigint, source regclass, p_expr text,
    id_expr text, key_expr text, time_expr text, value_expr text,
    filter_expr text DEFAULT NULL, measures boolean DEFAULT false)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
SET TimeZone = 'UTC'
SET DateStyle = 'ISO, MDY'
SET IntervalStyle = 'postgres'
SET extra_float_digits = 1
SET bytea_output = 'hex'
SET lc_numeric = 'C'
SET lc_monetary = 'C'
SET lc_time = 'C'
SET standard_conforming_strings = on
SET transform_null_equals = off
AS $$
DECLARE
    tg name := streamforge_internal.attach_trigger_name(pipeline);
    attnums smallint[];
    whole_row boolean;
    probe regclass;
    guard text;
    args text;
BEGIN
    BEGIN
        EXECUTE pg_catalog.format('CREATE TEMPORARY VIEW streamforge_attach_probe AS '
                                  'SELECT ROW(%s, %s, %s, %s, %s)%s AS e, (%s) AS f FROM %s AS new_rows',
                                  p_expr, id_expr, key_expr, time_expr, value_expr,
                                  CASE WHEN measures THEN '' ELSE '::streamforge.event' END,
                                  COALESCE(filter_expr, 'true'), source);
        probe := 'pg_temp.streamforge_attach_probe'::pg_catalog.regclass;
        SELECT pg_catalog.array_agg(DISTINCT d.refobjsubid::pg_catalog.int2 ORDER BY d.refobjsubid::pg_catalog.int2)
          INTO attnums
          FROM pg_catalog.pg_rewrite AS r
          JOIN pg_catalog.pg_depend AS d
            ON d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_rewrite'::pg_catalog.regclass
           AND d.objid OPERATOR(pg_catalog.=) r.oid
         WHERE r.ev_class OPERATOR(pg_catalog.=) probe
           AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
           AND d.refobjid OPERATOR(pg_catalog.=) source
           AND d.refobjsubid OPERATOR(pg_catalog.>) 0;
        SELECT r.ev_action::pg_catalog.text OPERATOR(pg_catalog.~~) '% :varattno 0 %' INTO whole_row
          FROM pg_catalog.pg_rewrite AS r
         WHERE r.ev_class OPERATOR(pg_catalog.=) probe;
        EXECUTE 'DROP VIEW pg_temp.streamforge_attach_probe';
    EXCEPTION WHEN OTHERS THEN
        whole_row := true;
    END;
    IF whole_row THEN
        SELECT pg_catalog.array_agg(a.attnum ORDER BY a.attnum) INTO attnums
          FROM pg_catalog.pg_attribute AS a
         WHERE a.attrelid OPERATOR(pg_catalog.=) source
           AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped;
    END IF;
    attnums := COALESCE(attnums, '{}');

    -- always true, but names the columns: PostgreSQL refuses to drop or
    -- retype a column a trigger's WHEN clause reads
    SELECT pg_catalog.string_agg(pg_catalog.format('(OLD.%I IS NULL) IS NOT NULL', a.attname),
                                 ' AND ' ORDER BY a.attnum)
      INTO guard
      FROM pg_catalog.pg_attribute AS a
     WHERE a.attrelid OPERATOR(pg_catalog.=) source
       AND a.attnum OPERATOR(pg_catalog.=) ANY (attnums);

    args := pg_catalog.format('%L, %L, %L, %L, %L, %L, %L, %L, %L', pipeline, p_expr,
                              id_expr, key_expr, time_expr, value_expr,
                              pipeline_id::pg_catalog.text, attnums::pg_catalog.text,
                              streamforge_internal.attach_columns(source, attnums))
            OPERATOR(pg_catalog.||) CASE WHEN measures
                                         THEN pg_catalog.format(', %L, %L', COALESCE(filter_expr, ''), 'measures')
                                         WHEN filter_expr IS NULL THEN ''
                                         ELSE pg_catalog.format(', %L', filter_expr) END;
    EXECUTE pg_catalog.format('CREATE TRIGGER %I AFTER INSERT ON %s REFERENCING NEW TABLE AS new_rows '
                              'FOR EACH STATEMENT EXECUTE FUNCTION streamforge_internal.attached_insert(%s)',
                              tg, source, args);
    EXECUTE pg_catalog.format('CREATE TRIGGER %I AFTER UPDATE ON %s REFERENCING OLD TABLE AS old_rows '
                              'FOR EACH ROW %s EXECUTE FUNCTION streamforge_internal.attached_update(%s)',
                              tg::pg_catalog.text OPERATOR(pg_catalog.||) '_update', source,
                              CASE WHEN guard IS NULL THEN ''
                                   ELSE pg_catalog.format('WHEN (%s)', guard) END,
                              args);
END
$$;
COMMENT ON FUNCTION streamforge_internal.attach_create_triggers(text, bigint, regclass, text, text, text, text, text, text, boolean) IS
    'creates the triggers of an attachment (internal helper)';

-- attach(pipeline, source, event_id, key, event_time, value, partition):
-- from now on, every row inserted into source is an event of pipeline,
-- delivered at its partition's next offset in the inserting transaction.
-- Each mapping is an SQL expression over the table's columns; partition
-- defaults to the pipeline's only partition.  event_time may be an
-- integer (in the pipeline's units) or a timestamptz, timestamp (read as
-- UTC) or date when the pipeline has a time unit; value an integer.
-- filter (0.3.0): a boolean expression; rows for which it is not true are
-- not ingested.  measures (0.3.0): for a measures pipeline, one integer
-- expression per measure, in the pipeline's order, instead of value.
CREATE OR REPLACE FUNCTION streamforge.attach(pipeline text, source regclass,
    event_id text, key text, event_time text, value text DEFAULT '1',
    partition text DEFAULT NULL, filter text DEFAULT NULL,
    measures text[] DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
SET TimeZone = 'UTC'
SET DateStyle = 'ISO, MDY'
SET IntervalStyle = 'postgres'
SET extra_float_digits = 1
SET bytea_output = 'hex'
SET lc_numeric = 'C'
SET lc_monetary = 'C'
SET lc_time = 'C'
SET standard_conforming_strings = on
SET transform_null_equals = off
AS $$
DECLARE
    tg name;
    unit interval;
    parts text[];
    typ regtype;
    p_expr text;
    id_expr text;
    key_expr text;
    time_expr text;
    value_expr text;
    rel record;
    nm integer;
    m text;
BEGIN
    IF pipeline IS NULL THEN
        RAISE EXCEPTION 'pipeline must not be null' USING ERRCODE = '22004';
    END IF;
    PERFORM streamforge.require_privilege(pipeline, 'ingest');
    IF source IS NULL OR event_id IS NULL OR key IS NULL OR event_time IS NULL
       OR value IS NULL THEN
        RAISE EXCEPTION 'arguments of attach must not be null'
            USING ERRCODE = '22004',
                  DETAIL = 'Only partition may be null (the pipeline''s only partition).';
    END IF;
    SELECT c.relkind, c.relowner, c.relispartition, n.nspname INTO rel
      FROM pg_catalog.pg_class AS c
      JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
     WHERE c.oid OPERATOR(pg_catalog.=) source;
    IF NOT FOUND OR rel.relkind OPERATOR(pg_catalog.<>) ALL (ARRAY['r', 'p']::pg_catalog."char"[]) THEN
        RAISE EXCEPTION '"%" is not a table', source USING ERRCODE = '42809';
    END IF;
    IF NOT pg_catalog.pg_has_role(rel.relowner, 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of table %', source USING ERRCODE = '42501';
    END IF;
    IF rel.nspname OPERATOR(pg_catalog.=) ANY (ARRAY['streamforge', 'streamforge_internal']::pg_catalog.name[])
       OR EXISTS (SELECT 1 FROM pg_catalog.pg_depend AS d
                    JOIN pg_catalog.pg_extension AS e
                      ON e.oid OPERATOR(pg_catalog.=) d.refobjid
                   WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
                     AND d.objid OPERATOR(pg_catalog.=) source
                     AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
                     AND d.deptype OPERATOR(pg_catalog.=) 'e'
                     AND e.extname OPERATOR(pg_catalog.=) 'streamforge') THEN
        RAISE EXCEPTION 'cannot attach table % of extension streamforge', source
            USING ERRCODE = '0A000',
                  DETAIL = 'Every write call writes the extension''s own tables; an attachment to one would make each of them fail.';
    END IF;
    IF rel.relkind OPERATOR(pg_catalog.=) 'p' OR rel.relispartition
       OR EXISTS (SELECT 1 FROM pg_catalog.pg_inherits AS i
                   WHERE i.inhparent OPERATOR(pg_catalog.=) source
                      OR i.inhrelid OPERATOR(pg_catalog.=) source) THEN
        RAISE EXCEPTION 'cannot attach table % to a pipeline', source
            USING ERRCODE = '0A000',
                  DETAIL = CASE WHEN rel.relkind OPERATOR(pg_catalog.=) 'p' THEN 'It is a partitioned table.'
                                WHEN rel.relispartition THEN 'It is a partition.'
                                ELSE 'It has an inheritance parent or child.' END,
                  HINT = 'Attach a table without partitions, parent or children: rows inserted straight into a partition or child table, or routed to a partition through its parent, would bypass the attachment.';
    END IF;
    tg := streamforge_internal.attach_trigger_name(pipeline);
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_trigger AS t
                WHERE t.tgrelid OPERATOR(pg_catalog.=) source
                  AND t.tgname OPERATOR(pg_catalog.=) tg) THEN
        IF (SELECT a.pipeline_id FROM streamforge.attachments AS a
             WHERE a.source OPERATOR(pg_catalog.=) attach.source
               AND a.trigger_name OPERATOR(pg_catalog.=) tg)
           IS DISTINCT FROM streamforge_internal.pipeline_id(pipeline) THEN
            RAISE EXCEPTION 'table % is attached to a dropped pipeline "%"', source, pipeline
                USING ERRCODE = '42710',
                      HINT = 'Detach it first with streamforge.detach().';
        END IF;
        RAISE EXCEPTION 'pipeline "%" is already attached to table %', pipeline, source
            USING ERRCODE = '42710';
    END IF;

    IF partition IS NULL THEN
        SELECT pg_catalog.array_agg(p.partition) INTO parts
          FROM streamforge.partitions(pipeline) AS p;
        IF pg_catalog.cardinality(parts) OPERATOR(pg_catalog.<>) 1 THEN
            RAISE EXCEPTION 'pipeline "%" has % partitions', pipeline, pg_catalog.cardinality(parts)
                USING ERRCODE = '22023',
                      HINT = 'Pass partition => an expression, or a quoted partition name such as ''''''p0''''''.';
        END IF;
        partition := pg_catalog.quote_literal(parts[1]);
    END IF;

    p_expr := pg_catalog.format('(%s)::pg_catalog.text', partition);
    id_expr := pg_catalog.format('(%s)::pg_catalog.text', event_id);
    key_expr := pg_catalog.format('(%s)::pg_catalog.text', key);

    typ := streamforge_internal.attach_expr_type(source, event_time);
    IF typ OPERATOR(pg_catalog.=) ANY (ARRAY['smallint', 'integer', 'bigint']::pg_catalog.regtype[]) THEN
        time_expr := pg_catalog.format('(%s)::pg_catalog.int8', event_time);
    ELSIF typ OPERATOR(pg_catalog.=) ANY (ARRAY['timestamp with time zone', 'timestamp without time zone', 'date']::pg_catalog.regtype[]) THEN
        unit := streamforge.time_unit(pipeline);
        PERFORM streamforge_internal.unit_us(unit, pipeline);
        time_expr := pg_catalog.format('streamforge.time_to_units(%s, %L::pg_catalog.interval)',
            CASE WHEN typ OPERATOR(pg_catalog.=) 'timestamp with time zone'::pg_catalog.regtype
                 THEN pg_catalog.format('(%s)', event_time)
                 ELSE pg_catalog.format('pg_catalog.timezone(''UTC'', (%s)::pg_catalog.timestamp)', event_time) END,
            unit);
    ELSE
        RAISE EXCEPTION 'event_time must be an integer or a timestamp'
            USING ERRCODE = '42804',
                  DETAIL = pg_catalog.format('The expression %s is of type %s.', event_time, typ);
    END IF;

    -- value, or the measures of a measures pipeline
    nm := streamforge_internal.pipeline_nmeasures(pipeline);
    IF measures IS NULL AND nm IS NOT NULL THEN
        RAISE EXCEPTION 'pipeline "%" has % measures', pipeline, nm
            USING ERRCODE = '22023',
                  HINT = 'Pass measures => ARRAY[...], one integer expression per measure.';
    ELSIF measures IS NOT NULL AND nm IS NULL THEN
        RAISE EXCEPTION 'pipeline "%" has one unnamed measure', pipeline
            USING ERRCODE = '22023',
                  HINT = 'Pass value => an integer expression, not measures.';
    ELSIF measures IS NOT NULL THEN
        IF value OPERATOR(pg_catalog.<>) '1' THEN
            RAISE EXCEPTION 'value and measures cannot both be given'
                USING ERRCODE = '22023';
        END IF;
        IF pg_catalog.array_ndims(measures) IS DISTINCT FROM 1 THEN
            RAISE EXCEPTION 'measures must be a one-dimensional array'
                USING ERRCODE = '22023';
        END IF;
        IF pg_catalog.cardinality(measures) OPERATOR(pg_catalog.<>) nm THEN
            RAISE EXCEPTION 'pipeline "%" has % measures, not %', pipeline, nm,
                            pg_catalog.cardinality(measures)
                USING ERRCODE = '22023',
                      HINT = 'Pass a one-dimensional array of one integer expression per measure.';
        END IF;
        IF pg_catalog.array_position(measures, NULL) IS NOT NULL THEN
            RAISE EXCEPTION 'element % of measures must not be null', pg_catalog.array_position(measures, NULL)
                USING ERRCODE = '22004';
        END IF;
        value_expr := '';
        FOREACH m IN ARRAY measures LOOP
            typ := streamforge_internal.attach_expr_type(source, m);
            IF typ OPERATOR(pg_catalog.<>) ALL (ARRAY['smallint', 'integer', 'bigint']::pg_catalog.regtype[]) THEN
                RAISE EXCEPTION 'measures must be integers'
                    USING ERRCODE = '42804',
                          DETAIL = pg_catalog.format('The expression %s is of type %s.', m, typ);
            END IF;
            value_expr := value_expr OPERATOR(pg_catalog.||)
                          CASE WHEN value_expr OPERATOR(pg_catalog.=) '' THEN '' ELSE ', ' END
                          OPERATOR(pg_catalog.||) pg_catalog.format('(%s)::pg_catalog.int8', m);
        END LOOP;
        value_expr := pg_catalog.format('ARRAY[%s]::pg_catalog.int8[]', value_expr);
    END IF;
    IF measures IS NULL THEN
        typ := streamforge_internal.attach_expr_type(source, value);
        IF typ OPERATOR(pg_catalog.<>) ALL (ARRAY['smallint', 'integer', 'bigint']::pg_catalog.regtype[]) THEN
            RAISE EXCEPTION 'value must be an integer'
                USING ERRCODE = '42804',
                      DETAIL = pg_catalog.format('The expression %s is of type %s.', value, typ);
        END IF;
        value_expr := pg_catalog.format('(%s)::pg_catalog.int8', value);
    END IF;

    IF filter IS NOT NULL THEN
        typ := streamforge_internal.attach_expr_type(source, filter);
        IF typ OPERATOR(pg_catalog.<>) 'boolean'::pg_catalog.regtype THEN
            RAISE EXCEPTION 'filter must be a boolean expression'
                USING ERRCODE = '42804',
                      DETAIL = pg_catalog.format('The expression %s is of type %s.', filter, typ);
        END IF;
    END IF;

    -- the whole row must evaluate (no row is read)
    EXECUTE pg_catalog.format('SELECT ROW(%s, %s, %s, %s, %s)%s FROM %s AS new_rows WHERE (%s) LIMIT 0',
                              p_expr, id_expr, key_expr, time_expr, value_expr,
                              CASE WHEN measures IS NULL THEN '::streamforge.event' ELSE '' END,
                              source, COALESCE(filter, 'true'));

    PERFORM streamforge_internal.attach_create_triggers(pipeline,
        streamforge_internal.pipeline_id(pipeline), source, p_expr, id_expr,
        key_expr, time_expr, value_expr, filter, measures IS NOT NULL);
END
$$;
COMMENT ON FUNCTION streamforge.attach(text, regclass, text, text, text, text, text, text, text[]) IS
    'ingests every row inserted into a table as an event of a pipeline';

-- detach(pipeline, source): drops the triggers of attach().  Needs
-- ownership of the table; the pipeline need not exist any more.
CREATE OR REPLACE FUNCTION streamforge.detach(pipeline text, source regclass)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    tg name;
BEGIN
    IF pipeline IS NULL OR source IS NULL THEN
        RAISE EXCEPTION 'arguments of detach must not be null' USING ERRCODE = '22004';
    END IF;
    tg := streamforge_internal.attach_trigger_name(pipeline);
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_trigger AS t
                    WHERE t.tgrelid OPERATOR(pg_catalog.=) source
                      AND t.tgname OPERATOR(pg_catalog.=) tg) THEN
        RAISE EXCEPTION 'pipeline "%" is not attached to table %', pipeline, source
            USING ERRCODE = '42704';
    END IF;
    EXECUTE pg_catalog.format('DROP TRIGGER %I ON %s', tg, source);
    EXECUTE pg_catalog.format('DROP TRIGGER IF EXISTS %I ON %s', tg::pg_catalog.text OPERATOR(pg_catalog.||) '_update', source);
END
$$;
COMMENT ON FUNCTION streamforge.detach(text, regclass) IS
    'stops ingesting a table''s inserted rows into a pipeline';

-- drop_attachments(pipeline): detach every table attached to the pipeline
-- (bound to its id, or of 0.2.0 and naming it).  drop_pipeline calls it
-- first, as the extension's owner, once the caller is known to have the
-- admin privilege (src/api/define.c); nobody else may.  A table the
-- extension's owner may not alter keeps its triggers, with a warning:
-- bound to the dropped pipeline, they refuse every insert.
CREATE OR REPLACE FUNCTION streamforge_internal.drop_attachments(pipeline text)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    id text := streamforge_internal.pipeline_id(pipeline)::pg_catalog.text;
    r record;
BEGIN
    FOR r IN SELECT t.tgrelid::pg_catalog.regclass AS source, t.tgname
               FROM pg_catalog.pg_trigger AS t,
                    LATERAL (SELECT streamforge_internal.trigger_args(t.tgargs) AS args) AS a
              WHERE t.tgfoid OPERATOR(pg_catalog.=) ANY (ARRAY['streamforge_internal.attached_insert()',
                                                               'streamforge_internal.attached_update()']::pg_catalog.regprocedure[])
                AND a.args[1] OPERATOR(pg_catalog.=) pipeline
                AND (pg_catalog.cardinality(a.args) OPERATOR(pg_catalog.=) 6
                     OR a.args[7] OPERATOR(pg_catalog.=) id)
              ORDER BY t.tgrelid, t.tgname
    LOOP
        BEGIN
            EXECUTE pg_catalog.format('DROP TRIGGER %I ON %s', r.tgname, r.source);
        EXCEPTION WHEN insufficient_privilege THEN
            RAISE WARNING 'table % stays attached to the dropped pipeline "%"', r.source, pipeline
                USING DETAIL = 'The extension''s owner may not drop its triggers; they refuse every insert into the table.',
                      HINT = pg_catalog.format('The table''s owner can detach it: SELECT streamforge.detach(%L, %L);',
                                               pipeline, r.source::pg_catalog.text);
        END;
    END LOOP;
END
$$;
REVOKE ALL ON FUNCTION streamforge_internal.drop_attachments(text) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.drop_attachments(text) IS
    'detaches every table attached to a pipeline, for drop_pipeline (internal helper)';

-- The attachments in this database (of the tables the role can see in
-- pg_trigger, like \d).  pipeline_id: the pipeline bound (NULL for an
-- attachment of 0.2.0); an attachment whose pipeline_id is no pipeline's
-- is bound to a dropped pipeline.
CREATE OR REPLACE VIEW streamforge.attachments AS
SELECT t.tgrelid::pg_catalog.regclass AS source,
       a.args[1] AS pipeline,
       a.args[2] AS partition,
       a.args[3] AS event_id,
       a.args[4] AS key,
       a.args[5] AS event_time,
       a.args[6] AS value,
       t.tgname AS trigger_name,
       CASE WHEN a.args[7] OPERATOR(pg_catalog.~) '^[0-9]{1,18}$'
            THEN a.args[7]::pg_catalog.int8 END AS pipeline_id,
       CASE WHEN a.args[10] OPERATOR(pg_catalog.<>) '' THEN a.args[10] END AS filter
  FROM pg_catalog.pg_trigger AS t,
       LATERAL (SELECT streamforge_internal.trigger_args(t.tgargs) AS args) AS a
 WHERE t.tgfoid OPERATOR(pg_catalog.=) 'streamforge_internal.attached_insert()'::pg_catalog.regprocedure;
COMMENT ON VIEW streamforge.attachments IS
    'tables attached to pipelines, with the mapping expressions';
GRANT SELECT ON streamforge.attachments TO PUBLIC;

DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT t.tgrelid::pg_catalog.regclass AS source, t.tgname, a.args
               FROM pg_catalog.pg_trigger AS t,
                    LATERAL (SELECT streamforge_internal.trigger_args(t.tgargs) AS args) AS a
              WHERE t.tgfoid OPERATOR(pg_catalog.=) 'streamforge_internal.attached_insert()'::pg_catalog.regprocedure
                AND pg_catalog.cardinality(a.args) OPERATOR(pg_catalog.=) 6
              ORDER BY t.tgrelid, t.tgname
    LOOP
        EXECUTE pg_catalog.format('DROP TRIGGER %I ON %s', r.tgname, r.source);
        EXECUTE pg_catalog.format('DROP TRIGGER IF EXISTS %I ON %s',
                                  r.tgname::pg_catalog.text OPERATOR(pg_catalog.||) '_update', r.source);
        PERFORM streamforge_internal.attach_create_triggers(r.args[1],
            COALESCE(streamforge_internal.pipeline_id(r.args[1]), 0), r.source,
            r.args[2], r.args[3], r.args[4], r.args[5], r.args[6]);
    END LOOP;
END
$$;

-- ----------------------------------------------------------------
-- Issue 21: the unknown-pipeline hint looks names equal but for case up
-- through an index past a thousand pipelines (sql/install/20_storage.sql).
CREATE INDEX pipeline_name_lower ON streamforge.pipeline (pg_catalog.lower(name));

-- Issue 21: units_to_time raises 22008 for a time timestamptz cannot hold,
-- and converts the times past about year 246,000 that it refused with 22003
-- (sql/install/60_ingest.sql).
-- units since the Unix epoch -> timestamptz.  Built from hours and
-- microseconds so that no time zone's daylight saving time enters; the
-- hours in two halves, each of which fits make_interval's integer.  A time
-- that timestamptz cannot hold is 22008, as PostgreSQL's own "timestamp out
-- of range" (docs/ingestion.md).
CREATE OR REPLACE FUNCTION streamforge.units_to_time(t bigint, unit interval)
RETURNS timestamptz
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    total numeric;      -- microseconds since the epoch
    h numeric;          -- whole hours of it
    h1 numeric;         -- about half of them
    -- (OPERATOR() forms all share one precedence: parenthesize)
BEGIN
    IF t IS NULL THEN
        RETURN NULL;
    END IF;
    total := t::numeric OPERATOR(pg_catalog.*) streamforge_internal.unit_us(unit);
    -- timestamptz's range, 4714-11-24 00:00:00+00 BC to 294277-01-01
    -- 00:00:00+00 (excluded), in microseconds since the Unix epoch
    IF total OPERATOR(pg_catalog.<) (-210866803200000000)::numeric
       OR total OPERATOR(pg_catalog.>=) 9224318016000000000::numeric THEN
        RAISE EXCEPTION 'timestamp out of range'
            USING ERRCODE = '22008',
                  DETAIL = pg_catalog.format('Time %s in units of %s is outside the range of timestamptz.', t, unit),
                  HINT = 'The bigint reads (streamforge.live(), visible(), watermark()) give every time.';
    END IF;
    h := floor(total OPERATOR(pg_catalog./) 3600000000);
    h1 := trunc(h OPERATOR(pg_catalog./) 2);
    RETURN '1970-01-01 00:00:00+00'::timestamptz
           OPERATOR(pg_catalog.+) make_interval(0, 0, 0, 0, h1::integer, 0, 0)
           OPERATOR(pg_catalog.+) make_interval(0, 0, 0, 0,
               (h OPERATOR(pg_catalog.-) h1)::integer, 0, 0)
           OPERATOR(pg_catalog.+) make_interval(0, 0, 0, 0, 0, 0,
               ((total OPERATOR(pg_catalog.-) (h OPERATOR(pg_catalog.*) 3600000000))
                OPERATOR(pg_catalog./) 1000000)::double precision);
END
$$;

-- ----------------------------------------------------------------
-- issue 29: pipelines defined by a query (create_aggregate, drop_aggregate,
-- alter_aggregate, the window markers tumble/hop/session, the registry
-- streamforge.aggregate and its view streamforge.aggregates;
-- sql/install/65_aggregates.sql, new in 0.3.0).  attach()'s filter and
-- pipeline_info's query column come with 62_attach.sql and
-- 80_pipeline_info.sql, included above.
-- ----------------------------------------------------------------
-- streamforge install script, part 6c: pipelines defined by a query
-- (0.3.0, issue 29; docs/aggregates-sql.md).
--
--   SELECT streamforge.create_aggregate('clicks_per_minute', $$
--       SELECT page, count(*) AS clicks FROM clicks WHERE status = 'ok'
--        GROUP BY page, streamforge.tumble(clicked_at, interval '1 minute')
--   $$, lateness => interval '30 seconds');
--
-- The query is parsed and analyzed by PostgreSQL's parser and checked in C
-- (src/api/aggregate_sql.c, streamforge_internal.aggregate_plan), which
-- describes it as jsonb.  aggregate_create below maps that description to
-- the engine, as the caller: a pipeline (create_pipeline), its durable
-- results (configure_outputs), an attachment of the table with the WHERE as
-- its filter (attach, 62_attach.sql).  Then aggregate_register (C: admin on
-- the pipeline and CREATE on the schema, checked as the caller) runs
-- aggregate_register_internal as the extension's owner, which records the
-- aggregate in streamforge.aggregate and creates three views, owned by the
-- extension's owner:
--   <name>       the durable results, typed: GROUP BY columns, window_start,
--                window_end (timestamptz), the aggregates, final;
--   <name>_live  the live buckets (streamforge.live()), typed alike;
--   <name>_late  the late events (streamforge.late_events()).
--
-- Why the extension's owner owns the views: streamforge.results has row
-- level security (50_security.sql), and PostgreSQL uses a user's condition
-- as an index condition under row level security only when all its
-- functions are leakproof, which the key and time conversions are not.
-- The owner of the table is not subject to its policies, so the main view
-- reads streamforge.results directly, restricted to its pipeline, and gates
-- every read by aggregate_readable(name): a stable call of constants, which
-- the planner evaluates once as a one-time filter before the scan starts,
-- and which raises 42501 for a role without read on the pipeline.  So the
-- view's readers are exactly the pipeline's readers, and a condition such
-- as "page = '/home' AND window_start >= now() - interval '1 hour'" is an
-- index condition of the aggregate's own index (below).
--
-- The index: each row of streamforge.aggregate has a partial expression
-- index on streamforge.results (its leading key columns whose text input is
-- immutable, then window_start), made and dropped by the row trigger
-- aggregate_index.  An index on an extension's table is not dumped by
-- pg_dump; the trigger fires when pg_restore loads streamforge.aggregate's
-- rows, so a restore makes the index again.
--
-- Keys: the GROUP BY expressions (but the window call) are one engine key,
-- the text of ARRAY[e1::text, e2::text, ...] (computed under the
-- attachment's fixed settings), decoded by aggregate_key_part(key, i) and a
-- cast back to the column's type.
--
-- Measures: when all the aggregates but count(*) take the same integer
-- expression and are count, sum, min, max or avg, the pipeline has one
-- measure, the attachment's value (a nullable one is filtered out: its rows
-- count for no aggregate, unless count(*) needs them).  Otherwise (several
-- expressions, a variance or a standard deviation, count(*) FILTER (WHERE
-- x op c), which is the engine's count_if over x) it is a measures
-- pipeline (docs/aggregates.md): one measure m1, m2, ... per distinct
-- expression, each NOT NULL, attached with attach(..., measures =>), and
-- aggregates a1, a2, ... which the views read as
-- (aggregates ->> 'aN')::<PostgreSQL's type of the aggregate>.

-- ----------------------------------------------------------------
-- The window markers of the query
-- ----------------------------------------------------------------

-- tumble(ts, size): the start of ts's fixed window, aligned to the Unix
-- epoch (so that the query also runs as a plain query).
CREATE FUNCTION streamforge.tumble(ts timestamptz, size interval)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'sf_tumble'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION streamforge.tumble(timestamptz, interval) IS
    'in the query of create_aggregate: fixed windows of size; elsewhere: the window start of ts';

-- hop(ts, size, slide): only in create_aggregate's query
CREATE FUNCTION streamforge.hop(ts timestamptz, size interval, slide interval)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'sf_window_marker'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION streamforge.hop(timestamptz, interval, interval) IS
    'in the query of create_aggregate: sliding windows of size every slide';

-- streamforge.session(ts, gap) in the query: the window constructor
-- streamforge.session(name, gap) already has the name, and the extension
-- keeps one function per name (session('g', NULL) would be ambiguous), so
-- aggregate_plan renames the call to this marker before analysis.
CREATE FUNCTION streamforge_internal.session_window(ts timestamptz, gap interval)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'sf_window_marker'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION streamforge_internal.session_window(timestamptz, interval) IS
    'streamforge.session(ts, gap) in the query of create_aggregate: session windows closed by a gap';

-- ----------------------------------------------------------------
-- Helpers (C, src/api/aggregate_sql.c)
-- ----------------------------------------------------------------

CREATE FUNCTION streamforge_internal.aggregate_plan(query text)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'sf_aggregate_plan'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge_internal.aggregate_plan(text) IS
    'the query of create_aggregate, analyzed, checked and described (internal helper)';

CREATE FUNCTION streamforge_internal.aggregate_key_part(key text, i integer)
RETURNS text
AS 'MODULE_PATHNAME', 'sf_aggregate_key_part'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION streamforge_internal.aggregate_key_part(text, integer) IS
    'part i of the key of an aggregate (internal helper)';

CREATE FUNCTION streamforge_internal.aggregate_time(t bigint, unit_us bigint)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'sf_aggregate_time'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION streamforge_internal.aggregate_time(bigint, bigint) IS
    'units of unit_us microseconds since the Unix epoch as a timestamp (internal helper)';

-- ----------------------------------------------------------------
-- The registry
-- ----------------------------------------------------------------

-- One row per aggregate: its pipeline (the same name), the query as given,
-- the table, the views' schema and name, the time unit, and the shape of
-- the views (spec: window, keys, aggregates; written by
-- aggregate_register_internal only).  A configuration table: pg_dump
-- carries it over; dropping the pipeline drops the row (and its index).
CREATE TABLE streamforge.aggregate (
    name text COLLATE "C" PRIMARY KEY
        REFERENCES streamforge.pipeline (name) ON DELETE CASCADE,
    query text NOT NULL,
    source regclass NOT NULL,
    view_schema text NOT NULL,
    view_name text NOT NULL,
    unit_us bigint NOT NULL,
    spec jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);
COMMENT ON TABLE streamforge.aggregate IS
    'the aggregates made by create_aggregate: query, table, views, time unit (read them through streamforge.aggregates)';
SELECT pg_catalog.pg_extension_config_dump('streamforge.aggregate', '');
REVOKE ALL ON streamforge.aggregate FROM PUBLIC;

-- The name of an aggregate's index on streamforge.results.
CREATE FUNCTION streamforge_internal.aggregate_index_name(name text)
RETURNS name
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN ('results_aggregate_' OPERATOR(pg_catalog.||) pg_catalog.left(pg_catalog.md5(name), 16))::pg_catalog.name;
COMMENT ON FUNCTION streamforge_internal.aggregate_index_name(text) IS
    'the name of the index of an aggregate on streamforge.results (internal helper)';

-- The row trigger of streamforge.aggregate: the aggregate's index on
-- streamforge.results, made with the row (create_aggregate, pg_restore),
-- dropped with it (drop_aggregate, drop_pipeline's cascade).
CREATE FUNCTION streamforge_internal.aggregate_index()
RETURNS trigger
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    cols text := '';
    k jsonb;
BEGIN
    IF TG_OP = 'DELETE' THEN
        EXECUTE format('DROP INDEX IF EXISTS streamforge.%I',
                       streamforge_internal.aggregate_index_name(OLD.name));
        RETURN NULL;
    END IF;
    FOR k IN SELECT e.value FROM jsonb_array_elements(NEW.spec -> 'keys') WITH ORDINALITY AS e
              ORDER BY e.ordinality
    LOOP
        EXIT WHEN NOT (k ->> 'indexable')::boolean;
        cols := cols || format('((streamforge_internal.aggregate_key_part(key, %s))::%s%s), ',
                               (k ->> 'part')::integer, (k ->> 'type')::regtype,
                               CASE WHEN k ->> 'collation' IS NULL THEN ''
                                    ELSE format(' COLLATE %s', (k ->> 'collation')::regcollation) END);
    END LOOP;
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON streamforge.results '
                   '(%sstreamforge_internal.aggregate_time(window_start, %s)) '
                   'WHERE pipeline OPERATOR(pg_catalog.=) %L AND window_name OPERATOR(pg_catalog.=) %L',
                   streamforge_internal.aggregate_index_name(NEW.name), cols,
                   NEW.unit_us, NEW.name, NEW.spec ->> 'window');
    RETURN NULL;
END
$$;
REVOKE ALL ON FUNCTION streamforge_internal.aggregate_index() FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.aggregate_index() IS
    'trigger of streamforge.aggregate: makes and drops an aggregate''s index on streamforge.results';

CREATE TRIGGER aggregate_index
    AFTER INSERT OR DELETE ON streamforge.aggregate
    FOR EACH ROW EXECUTE FUNCTION streamforge_internal.aggregate_index();

-- The aggregates the current user may read (those of the pipelines it may
-- read), with their defining query.  Runs as its owner, which may read
-- streamforge.aggregate; security_barrier keeps a caller's functions from
-- seeing rows before the privilege filter.
CREATE VIEW streamforge.aggregates WITH (security_barrier) AS
SELECT a.name, a.source, a.view_schema, a.view_name, a.query, a.created_at
  FROM streamforge.aggregate AS a
 WHERE EXISTS (SELECT 1 FROM streamforge.pipelines AS v
                WHERE v.name OPERATOR(pg_catalog.=) a.name);
REVOKE ALL ON streamforge.aggregates FROM PUBLIC;
GRANT SELECT ON streamforge.aggregates TO PUBLIC;
COMMENT ON VIEW streamforge.aggregates IS
    'the aggregates made by create_aggregate that the current user may read, with their query';

-- The gate of an aggregate's view: true, or 42704/42501 unless the current
-- user may read the pipeline.  Stable, so that a call with a constant is a
-- one-time filter, evaluated before the view's scan.
CREATE FUNCTION streamforge_internal.aggregate_readable(pipeline text)
RETURNS boolean
LANGUAGE plpgsql STABLE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM streamforge.require_privilege(pipeline, 'read');
    RETURN true;
END
$$;
COMMENT ON FUNCTION streamforge_internal.aggregate_readable(text) IS
    'true if the current user may read the pipeline, an error otherwise (internal helper of the aggregates'' views)';

-- ----------------------------------------------------------------
-- Registering: the row and the views, as the extension's owner
-- ----------------------------------------------------------------

CREATE FUNCTION streamforge_internal.aggregate_register(pipeline text, view_schema text,
    view_name text, source regclass, query text, unit_us bigint, spec jsonb)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_aggregate_register'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge_internal.aggregate_register(text, text, text, regclass, text, bigint, jsonb) IS
    'records an aggregate and creates its views (called by create_aggregate; needs admin on the pipeline and CREATE on the schema)';

-- Builds every statement from checked pieces only: names through %I,
-- types through regtype, functions from a fixed list, numbers as numbers;
-- the caller's spec cannot inject SQL.  The views' columns:
--   keys (typed), window_start, window_end, the aggregates, final.
CREATE FUNCTION streamforge_internal.aggregate_register_internal(pipeline text,
    view_schema text, view_name text, source regclass, query text,
    unit_us bigint, spec jsonb)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    w text := spec ->> 'window';
    k jsonb;
    a jsonb;
    keys_r text := '';
    keys_l text := '';
    keys_e text := '';
    aggs_r text := '';
    aggs_l text := '';
    col text;
    coll text;
    typ regtype;
    f text;
    measures boolean := COALESCE((spec ->> 'measures')::boolean, false);
BEGIN
    IF w IS NULL OR w <> ALL (ARRAY['tumble', 'hop', 'session']) OR unit_us IS NULL
       OR unit_us <= 0 OR view_schema IS NULL OR view_name IS NULL OR query IS NULL
       OR source IS NULL THEN
        RAISE EXCEPTION 'invalid aggregate definition' USING ERRCODE = '22023';
    END IF;
    FOR k IN SELECT e.value FROM jsonb_array_elements(spec -> 'keys') WITH ORDINALITY AS e
              ORDER BY e.ordinality
    LOOP
        typ := (k ->> 'type')::regtype;
        col := format('%I', k ->> 'name');
        coll := CASE WHEN k ->> 'collation' IS NULL THEN ''
                     ELSE format(' COLLATE %s', (k ->> 'collation')::regcollation) END;
        keys_r := keys_r || format('(streamforge_internal.aggregate_key_part(r.key, %s))::%s%s AS %s, ',
                                   (k ->> 'part')::integer, typ, coll, col);
        keys_l := keys_l || format('(streamforge_internal.aggregate_key_part(l.key, %s))::%s%s AS %s, ',
                                   (k ->> 'part')::integer, typ, coll, col);
        keys_e := keys_e || format('(streamforge_internal.aggregate_key_part(e.key, %s))::%s%s AS %s, ',
                                   (k ->> 'part')::integer, typ, coll, col);
    END LOOP;
    FOR a IN SELECT e.value FROM jsonb_array_elements(spec -> 'aggregates') WITH ORDINALITY AS e
              ORDER BY e.ordinality
    LOOP
        f := a ->> 'func';
        typ := (a ->> 'type')::regtype;
        IF measures THEN
            -- a measures pipeline: the member of the aggregates jsonb
            IF a ->> 'member' IS NULL OR a ->> 'member' !~ '^a[0-9]{1,2}$' THEN
                RAISE EXCEPTION 'invalid aggregate definition' USING ERRCODE = '22023';
            END IF;
            aggs_r := aggs_r || format('(r.aggregates OPERATOR(pg_catalog.->>) %L)::%s AS %I, ',
                                       a ->> 'member', typ, a ->> 'name');
            aggs_l := aggs_l || format('(l.aggregates OPERATOR(pg_catalog.->>) %L)::%s AS %I, ',
                                       a ->> 'member', typ, a ->> 'name');
        ELSIF f = 'count' THEN
            aggs_r := aggs_r || format('r.count AS %I, ', a ->> 'name');
            aggs_l := aggs_l || format('l.count AS %I, ', a ->> 'name');
        ELSIF f = ANY (ARRAY['sum', 'min', 'max']) THEN
            aggs_r := aggs_r || format('(r.%s)::%s AS %I, ', f, typ, a ->> 'name');
            aggs_l := aggs_l || format('(l.%s)::%s AS %I, ', f, typ, a ->> 'name');
        ELSIF f = 'avg' THEN
            aggs_r := aggs_r || format('(r.avg)::%s AS %I, ', typ, a ->> 'name');
            aggs_l := aggs_l || format('(l.sum OPERATOR(pg_catalog./) l.count::pg_catalog.numeric)::%s AS %I, ',
                                       typ, a ->> 'name');
        ELSE
            RAISE EXCEPTION 'invalid aggregate definition' USING ERRCODE = '22023';
        END IF;
    END LOOP;

    INSERT INTO streamforge.aggregate (name, query, source, view_schema, view_name, unit_us, spec)
    VALUES (pipeline, query, source, view_schema, view_name, unit_us, spec);

    -- the durable results; "final" is the results row's own flag (in
    -- emit => 'final' mode every row is final).
    EXECUTE format(
        'CREATE VIEW %I.%I AS SELECT %s'
        'streamforge_internal.aggregate_time(r.window_start, %s) AS window_start, '
        'streamforge_internal.aggregate_time(r.window_end, %s) AS window_end, %s'
        'r.final AS final '
        'FROM streamforge.results AS r '
        'WHERE r.pipeline OPERATOR(pg_catalog.=) %L AND r.window_name OPERATOR(pg_catalog.=) %L '
        'AND streamforge_internal.aggregate_readable(%L)',
        view_schema, view_name, keys_r, unit_us, unit_us, aggs_r,
        pipeline, w, pipeline);
    -- the live buckets, emitted or not
    EXECUTE format(
        'CREATE VIEW %I.%I AS SELECT %s'
        'streamforge_internal.aggregate_time(l.window_start, %s) AS window_start, '
        'streamforge_internal.aggregate_time(l.window_end, %s) AS window_end, %s'
        'false AS final '
        'FROM streamforge.%s(%L) AS l WHERE l.window_name OPERATOR(pg_catalog.=) %L',
        view_schema, view_name || '_live', keys_l, unit_us, unit_us, aggs_l,
        CASE WHEN measures THEN 'live_aggregates' ELSE 'live' END, pipeline, w);
    -- the late events
    EXECUTE format(
        'CREATE VIEW %I.%I AS SELECT e.late_seq, %s'
        'streamforge_internal.aggregate_time(e.event_time, %s) AS event_time, '
        'e.value, streamforge_internal.aggregate_time(e.watermark, %s) AS watermark, '
        'e.event_id, e.partition, e.source_offset '
        'FROM streamforge.late_events(%L) AS e',
        view_schema, view_name || '_late', keys_e, unit_us, unit_us, pipeline);
    EXECUTE format('GRANT SELECT ON %I.%I, %I.%I, %I.%I TO PUBLIC',
                   view_schema, view_name, view_schema, view_name || '_live',
                   view_schema, view_name || '_late');
    EXECUTE format('COMMENT ON VIEW %I.%I IS %L', view_schema, view_name,
                   format('results of streamforge aggregate "%s" (streamforge.create_aggregate)', pipeline));
END
$$;
REVOKE ALL ON FUNCTION streamforge_internal.aggregate_register_internal(text, text, text,
    regclass, text, bigint, jsonb) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.aggregate_register_internal(text, text, text,
    regclass, text, bigint, jsonb) IS
    'records an aggregate and creates its views, as the extension''s owner (internal helper)';

CREATE FUNCTION streamforge_internal.aggregate_unregister(pipeline text)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_aggregate_unregister'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge_internal.aggregate_unregister(text) IS
    'drops the views and the record of an aggregate, not its pipeline (called by drop_aggregate; admin)';

CREATE FUNCTION streamforge_internal.aggregate_unregister_internal(pipeline text)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    a record;
BEGIN
    SELECT g.view_schema, g.view_name INTO a
      FROM streamforge.aggregate AS g WHERE g.name = pipeline FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'pipeline "%" is not an aggregate', pipeline
            USING ERRCODE = '42704',
                  HINT = 'Drop it with streamforge.drop_pipeline().';
    END IF;
    EXECUTE format('DROP VIEW IF EXISTS %I.%I, %I.%I, %I.%I',
                   a.view_schema, a.view_name, a.view_schema, a.view_name || '_live',
                   a.view_schema, a.view_name || '_late');
    DELETE FROM streamforge.aggregate AS g WHERE g.name = pipeline;
END
$$;
REVOKE ALL ON FUNCTION streamforge_internal.aggregate_unregister_internal(text) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.aggregate_unregister_internal(text) IS
    'drops the views and the record of an aggregate, as the extension''s owner (internal helper)';

-- ----------------------------------------------------------------
-- create_aggregate, drop_aggregate, alter_aggregate
-- ----------------------------------------------------------------

-- The mapping of an analyzed query to a pipeline, as the caller.
CREATE FUNCTION streamforge_internal.aggregate_create(name text, query text,
    plan jsonb, view_schema text, lateness interval, out_of_orderness interval,
    emit text, event_id text, partition text, partitions text[],
    retention interval)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    win jsonb := plan -> 'window';
    kind text := plan -> 'window' ->> 'kind';
    source regclass := (plan ->> 'relid')::oid::regclass;
    size_us bigint := (win ->> 'size_us')::bigint;
    slide_us bigint := (win ->> 'slide_us')::bigint;
    lateness_us bigint;
    retention_us bigint;
    ooo_us bigint;
    unit_us bigint;
    unit interval;
    wdef streamforge.window_def;
    measure text;
    exprs text[] := '{}';
    nullable text[] := '{}';
    use_measures boolean := false;
    measure_names text[];
    engine_aggs text[] := '{}';
    has_count_star boolean := false;
    a jsonb;
    k jsonb;
    i integer := 0;
    key_expr text;
    shown jsonb := '[]';
    aggs jsonb := '[]';
    filter text := plan ->> 'where';
    pk text[];
    parts text[];
BEGIN
    IF emit IS NULL THEN
        RAISE EXCEPTION 'emit must not be null' USING ERRCODE = '22004';
    ELSIF emit <> ALL (ARRAY['update', 'final']) THEN
        RAISE EXCEPTION 'emit must be ''update'' or ''final'', not "%"', emit USING ERRCODE = '22023';
    END IF;
    IF lateness IS NULL THEN
        RAISE EXCEPTION 'lateness must not be null' USING ERRCODE = '22004';
    END IF;
    IF octet_length(name) > 58 THEN
        RAISE EXCEPTION 'aggregate name "%" is too long', name
            USING ERRCODE = '22023',
                  DETAIL = 'An aggregate''s name is at most 58 bytes, so that its views "<name>_live" and "<name>_late" fit in 63.';
    END IF;

    -- the time unit: the largest that divides every interval and the time
    -- column's precision, so that every event time is a whole number of it
    lateness_us := streamforge_internal.interval_us(lateness);
    IF lateness_us < 0 THEN
        RAISE EXCEPTION 'lateness must not be negative' USING ERRCODE = '22023';
    END IF;
    IF size_us <= 0 OR slide_us <= 0 THEN
        RAISE EXCEPTION 'the % of the window must be greater than zero',
                        CASE WHEN kind = 'session' THEN 'gap' WHEN size_us <= 0 THEN 'size' ELSE 'slide' END
            USING ERRCODE = '22023';
    END IF;
    unit_us := gcd(gcd(size_us, COALESCE(slide_us, size_us)),
                   gcd(lateness_us, (win ->> 'precision_us')::bigint));
    IF retention IS NOT NULL THEN
        retention_us := streamforge_internal.interval_us(retention);
        IF retention_us < 0 THEN
            RAISE EXCEPTION 'retention must not be negative' USING ERRCODE = '22023';
        END IF;
        unit_us := gcd(unit_us, retention_us);
    END IF;
    IF out_of_orderness IS NOT NULL THEN
        ooo_us := streamforge_internal.interval_us(out_of_orderness);
        IF ooo_us < 0 THEN
            RAISE EXCEPTION 'out_of_orderness must not be negative' USING ERRCODE = '22023';
        END IF;
        unit_us := gcd(unit_us, ooo_us);
    END IF;
    unit := make_interval(secs => unit_us / 1000000.0);

    -- the measures: the distinct argument expressions, in order.  One
    -- expression and the aggregates of 0.2.0 (count, sum, min, max, avg):
    -- a one-measure pipeline, its value the expression (as before issue
    -- 27).  Several expressions, a variance or standard deviation, or
    -- count(*) FILTER (WHERE x op c) (count_if over the measure x): a
    -- measures pipeline (docs/aggregates.md) with measures m1, m2, ... and
    -- its aggregates named a1, a2, ... (the aliases need not be valid
    -- engine names), which the views read from the aggregates jsonb.
    FOR a IN SELECT e.value FROM jsonb_array_elements(plan -> 'aggregates') WITH ORDINALITY AS e
              ORDER BY e.ordinality
    LOOP
        IF a ->> 'arg' IS NULL THEN
            has_count_star := true;
        ELSIF a ->> 'arg' <> ALL (exprs) THEN
            exprs := exprs || (a ->> 'arg');
            IF (a ->> 'arg_type')::regtype <> ALL (ARRAY['smallint', 'integer', 'bigint']::regtype[]) THEN
                RAISE EXCEPTION 'aggregates over an expression of type % are not supported', (a ->> 'arg_type')::regtype
                    USING ERRCODE = '0A000',
                          DETAIL = format('The expression %s is of type %s; the engine aggregates integers.', a ->> 'arg', (a ->> 'arg_type')::regtype),
                          HINT = 'Aggregate an integer expression, for example the amount in cents.';
            END IF;
            IF NOT (a ->> 'arg_not_null')::boolean THEN
                nullable := nullable || (a ->> 'arg');
            END IF;
        END IF;
        IF a ->> 'func' <> ALL (ARRAY['count', 'sum', 'min', 'max', 'avg']) THEN
            use_measures := true;
        END IF;
    END LOOP;
    use_measures := use_measures OR cardinality(exprs) > 1;
    IF use_measures THEN
        IF cardinality(nullable) > 0 THEN
            RAISE EXCEPTION 'aggregates over the nullable expression % are not supported here', nullable[1]
                USING ERRCODE = '0A000',
                      DETAIL = 'A measures pipeline (several expressions, a variance, a FILTER) takes one non-NULL integer per measure from every row.',
                      HINT = format('Aggregate a NOT NULL column, or COALESCE(%s, ...).', nullable[1]);
        END IF;
        i := 0;
        FOR a IN SELECT e.value FROM jsonb_array_elements(plan -> 'aggregates') WITH ORDINALITY AS e
                  ORDER BY e.ordinality
        LOOP
            i := i + 1;
            engine_aggs := engine_aggs || CASE
                WHEN a ->> 'func' = 'count' THEN format('count AS a%s', i)
                WHEN a ->> 'func' = 'count_if'
                THEN format('count_if(m%s %s %s) AS a%s', array_position(exprs, a ->> 'arg'),
                            a ->> 'filter_op', (a ->> 'filter_value')::bigint, i)
                ELSE format('%s(m%s) AS a%s', a ->> 'func', array_position(exprs, a ->> 'arg'), i) END;
            aggs := aggs || jsonb_build_object('name', a ->> 'name', 'func', a ->> 'func',
                                               'type', a ->> 'type', 'member', format('a%s', i));
        END LOOP;
        measure_names := ARRAY(SELECT format('m%s', n) FROM generate_series(1, cardinality(exprs)) AS n);
    ELSE
        measure := exprs[1];
        FOR a IN SELECT e.value FROM jsonb_array_elements(plan -> 'aggregates') WITH ORDINALITY AS e
                  ORDER BY e.ordinality
        LOOP
            aggs := aggs || jsonb_build_object('name', a ->> 'name', 'func', a ->> 'func',
                                               'type', a ->> 'type');
        END LOOP;
        IF cardinality(nullable) > 0 THEN
            IF has_count_star THEN
                RAISE EXCEPTION 'count(*) together with an aggregate of the nullable expression % is not supported', measure
                    USING ERRCODE = '0A000',
                          HINT = format('Use count(%s), a NOT NULL column, or COALESCE in the expression.', measure);
            END IF;
            IF kind = 'session' THEN
                RAISE EXCEPTION 'session windows over the nullable expression % are not supported', measure
                    USING ERRCODE = '0A000',
                          DETAIL = 'A row whose expression is NULL would still extend its session in SQL, but it is no event of the pipeline.',
                          HINT = format('Aggregate a NOT NULL column, or COALESCE(%s, ...).', measure);
            END IF;
            filter := CASE WHEN filter IS NULL THEN '' ELSE '(' || filter || ') AND ' END
                      || format('((%s) IS NOT NULL)', measure);
        END IF;
    END IF;
    i := 0;

    -- the key: every GROUP BY expression but the window
    FOR k IN SELECT e.value FROM jsonb_array_elements(plan -> 'keys') WITH ORDINALITY AS e
              ORDER BY e.ordinality
    LOOP
        i := i + 1;
        key_expr := CASE WHEN i = 1 THEN '' ELSE key_expr || ', ' END
                    || format('(%s)::pg_catalog.text', k ->> 'expr');
        IF k ->> 'name' IS NOT NULL THEN
            shown := shown || jsonb_build_object('part', i, 'name', k ->> 'name',
                                                 'type', k ->> 'type',
                                                 'collation', k ->> 'collation',
                                                 'indexable', k -> 'immutable_input');
        END IF;
    END LOOP;
    key_expr := CASE WHEN i = 0 THEN '''{}''' ELSE format('ARRAY[%s]', key_expr) END;

    -- the event id: the named expression, or the primary key
    IF event_id IS NULL THEN
        SELECT array_agg(quote_ident(att.attname) ORDER BY x.n) INTO pk
          FROM pg_constraint AS c,
               unnest(c.conkey) WITH ORDINALITY AS x(attnum, n),
               pg_attribute AS att
         WHERE c.conrelid = source AND c.contype = 'p'
           AND att.attrelid = source AND att.attnum = x.attnum;
        IF pk IS NULL THEN
            RAISE EXCEPTION 'table % has no primary key', source
                USING ERRCODE = '22023',
                      HINT = 'Name a column that identifies each row: event_id => ''id''.';
        END IF;
        event_id := CASE WHEN cardinality(pk) = 1 THEN pk[1]
                         ELSE format('ARRAY[%s]', array_to_string(ARRAY(
                                  SELECT format('(%s)::pg_catalog.text', c) FROM unnest(pk) AS c), ', ')) END;
    END IF;
    parts := COALESCE(partitions, ARRAY['default']);
    IF partition IS NULL AND cardinality(parts) <> 1 THEN
        RAISE EXCEPTION 'an aggregate with % partitions needs partition => an expression', cardinality(parts)
            USING ERRCODE = '22023';
    END IF;

    wdef := CASE kind
                WHEN 'tumble' THEN streamforge.fixed('tumble', size_us / unit_us)
                WHEN 'hop' THEN streamforge.sliding('hop', size_us / unit_us, slide_us / unit_us)
                ELSE streamforge.session('session', size_us / unit_us) END;
    PERFORM streamforge.create_pipeline(name, parts, ARRAY[wdef],
        lateness => lateness_us / unit_us, retention => retention_us / unit_us,
        time_unit => unit, emit => emit, out_of_orderness => ooo_us / unit_us,
        measures => measure_names, aggregates => CASE WHEN use_measures THEN engine_aggs END);
    PERFORM streamforge.configure_outputs(name, changelog => false, results => true,
                                          late => false, notify => false);
    PERFORM streamforge.attach(name, source, event_id => event_id, key => key_expr,
        event_time => win ->> 'time', value => COALESCE(measure, '1'),
        partition => CASE WHEN partition IS NULL THEN NULL ELSE format('(%s)::pg_catalog.text', partition) END,
        filter => filter, measures => CASE WHEN use_measures THEN exprs END);
    PERFORM streamforge_internal.aggregate_register(name, view_schema, name, source, query, unit_us,
        CASE WHEN use_measures
             THEN jsonb_build_object('window', kind, 'keys', shown, 'aggregates', aggs, 'measures', true)
             ELSE jsonb_build_object('window', kind, 'keys', shown, 'aggregates', aggs) END);
END
$$;
COMMENT ON FUNCTION streamforge_internal.aggregate_create(text, text, jsonb, text,
    interval, interval, text, text, text, text[], interval) IS
    'creates the pipeline, attachment and views of an aggregate (internal helper of create_aggregate)';

-- create_aggregate(name, query, ...): the query is analyzed here, in the
-- caller's search_path (a LANGUAGE sql function has no SET), the rest in
-- aggregate_create.  The views go in the caller's current schema.
CREATE FUNCTION streamforge.create_aggregate(name text, query text,
    lateness interval DEFAULT '00:00:00', out_of_orderness interval DEFAULT NULL,
    emit text DEFAULT 'update', event_id text DEFAULT NULL,
    partition text DEFAULT NULL, partitions text[] DEFAULT NULL,
    retention interval DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE PARALLEL UNSAFE
BEGIN ATOMIC
    SELECT streamforge_internal.aggregate_create(name, query,
        streamforge_internal.aggregate_plan(query), pg_catalog.current_schema(),
        lateness, out_of_orderness, emit, event_id, partition, partitions,
        retention);
END;
COMMENT ON FUNCTION streamforge.create_aggregate(text, text, interval, interval,
    text, text, text, text[], interval) IS
    'creates a pipeline, its attachment and its views from a GROUP BY query over a table';

-- drop_aggregate(name): the views, the record, then the pipeline (which
-- detaches the table).  Admin.
CREATE FUNCTION streamforge.drop_aggregate(name text)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF name IS NULL THEN
        RAISE EXCEPTION 'name must not be null' USING ERRCODE = '22004';
    END IF;
    PERFORM streamforge_internal.aggregate_unregister(name);
    PERFORM streamforge.drop_pipeline(name);
END
$$;
COMMENT ON FUNCTION streamforge.drop_aggregate(text) IS
    'drops an aggregate: its views, its attachment and its pipeline';

-- alter_aggregate(name, lateness, emit, retention): NULL leaves a setting
-- as it is.  The intervals must be whole numbers of the aggregate's time
-- unit (streamforge.time_unit(name)).  Admin (set_lateness, set_retention).
CREATE FUNCTION streamforge.alter_aggregate(name text,
    lateness interval DEFAULT NULL, emit text DEFAULT NULL,
    retention interval DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    unit interval;
BEGIN
    IF name IS NULL THEN
        RAISE EXCEPTION 'name must not be null' USING ERRCODE = '22004';
    END IF;
    PERFORM streamforge.require_privilege(name, 'admin');
    IF NOT EXISTS (SELECT 1 FROM streamforge.aggregates AS a WHERE a.name = alter_aggregate.name) THEN
        RAISE EXCEPTION 'pipeline "%" is not an aggregate', name USING ERRCODE = '42704';
    END IF;
    unit := streamforge.time_unit(name);
    IF emit IS NOT NULL THEN
        IF emit <> ALL (ARRAY['update', 'final']) THEN
            RAISE EXCEPTION 'emit must be ''update'' or ''final'', not "%"', emit USING ERRCODE = '22023';
        END IF;
        PERFORM streamforge.set_emit(name, emit);
    END IF;
    IF lateness IS NOT NULL THEN
        PERFORM streamforge.set_lateness(name, streamforge.interval_to_units(lateness, unit));
    END IF;
    IF retention IS NOT NULL THEN
        PERFORM streamforge.set_retention(name, streamforge.interval_to_units(retention, unit));
    END IF;
END
$$;
COMMENT ON FUNCTION streamforge.alter_aggregate(text, interval, text, interval) IS
    'changes the lateness, emit mode or retention of an aggregate';

-- ----------------------------------------------------------------
-- issue 25: emit modes, final rows, output epochs, notifications without
-- pipeline names.  Every object of the piece is new; its ALTER TABLEs give
-- the existing rows their defaults: pipelines in 'update' mode (emit
-- NULL), results rows not final (marked below), outputs, changelog and
-- results rows in epoch 1.  resync_outputs_internal, which bumps the
-- epoch, came with 41_outputs_resync.sql above.
-- ----------------------------------------------------------------
-- streamforge install script: emit modes, final rows, output epochs and
-- notifications without pipeline names (0.3.0, issue 25).
--
-- docs/semantics.md (Emit modes) and docs/outputs.md (Epochs, Notifications)
-- describe them.  Every object here is new in 0.3.0, so the 0.2.0 -> 0.3.0
-- update includes this file whole; the ALTER TABLEs fill the new columns of
-- existing rows with their defaults (every existing pipeline is in 'update'
-- mode, every existing output in epoch 1).

-- ----------------------------------------------------------------
-- Emit modes
-- ----------------------------------------------------------------

-- (The emit mode's column of streamforge.pipeline is in 75_emit_column.sql.)

-- create_pipeline gains emit (after time_unit, so that every call of 0.2.0
-- means what it meant)
DROP FUNCTION streamforge.create_pipeline(text, text[],
    streamforge.window_def[], bigint, bigint, interval);
CREATE FUNCTION streamforge.create_pipeline(name text, partitions text[],
    windows streamforge.window_def[], lateness bigint DEFAULT 0,
    retention bigint DEFAULT NULL, time_unit interval DEFAULT NULL,
    emit text DEFAULT 'update')
RETURNS void
AS 'MODULE_PATHNAME', 'sf_create_pipeline'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION streamforge.create_pipeline(text, text[],
    streamforge.window_def[], bigint, bigint, interval, text) IS
'create a pipeline with its partitions, windows and allowed lateness';

-- Change the emit mode; returns what the change emits (switching from
-- 'final' upserts the rows not reported yet).  Admin.
CREATE FUNCTION streamforge.set_emit(pipeline text, emit text)
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_set_emit'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION streamforge.set_emit(text, text) IS
'change the pipeline''s emit mode (update, update+final, final); returns the changes it causes (admin)';

CREATE FUNCTION streamforge.emit_mode(pipeline text)
RETURNS text
AS 'MODULE_PATHNAME', 'sf_emit_mode'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION streamforge.emit_mode(text) IS
'the pipeline''s emit mode: update, update+final or final (read)';

-- The changelog carries final changes, and results know which rows are
-- final.  results_open finds the rows 'update' mode has to mark final
-- after a call that finalized buckets (src/persist/sink.c).
ALTER TABLE streamforge.changelog DROP CONSTRAINT changelog_op_check;
ALTER TABLE streamforge.changelog ADD CONSTRAINT changelog_op_check
    CHECK (op OPERATOR(pg_catalog.=) ANY
           (ARRAY['retract'::pg_catalog.text, 'upsert'::pg_catalog.text,
                  'final'::pg_catalog.text]));

ALTER TABLE streamforge.results ADD COLUMN final boolean NOT NULL DEFAULT false;

CREATE INDEX results_open ON streamforge.results (pipeline, window_end)
    WHERE NOT final;

-- ----------------------------------------------------------------
-- Epochs
-- ----------------------------------------------------------------

-- The outputs' epoch: a new one is taken by resync_outputs (so by
-- restore), which may rewind the changelog's seq numbers, and when a
-- pipeline's outputs are turned on (again: what happened while they were
-- off is not in them).  It is carried by every changelog and results row
-- written and by every notification, so that a consumer that sees an
-- epoch other than its own knows to rebuild (docs/outputs.md, Epochs).
-- Epochs come from one sequence, so a pipeline's epochs only grow and
-- never repeat; 1 is the epoch of the outputs of 0.2.0.
CREATE SEQUENCE streamforge.output_epoch_seq START WITH 2;
SELECT pg_catalog.pg_extension_config_dump('streamforge.output_epoch_seq', '');
REVOKE ALL ON SEQUENCE streamforge.output_epoch_seq FROM PUBLIC;

ALTER TABLE streamforge.output_config ADD COLUMN epoch bigint NOT NULL DEFAULT 1;
ALTER TABLE streamforge.changelog ADD COLUMN epoch bigint NOT NULL DEFAULT 1;
ALTER TABLE streamforge.results ADD COLUMN epoch bigint NOT NULL DEFAULT 1;

CREATE FUNCTION streamforge_internal.output_config_epoch()
RETURNS trigger
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    NEW.epoch := pg_catalog.nextval('streamforge.output_epoch_seq'::pg_catalog.regclass);
    RETURN NEW;
END
$$;

REVOKE ALL ON FUNCTION streamforge_internal.output_config_epoch() FROM PUBLIC;

CREATE TRIGGER output_config_epoch
    BEFORE INSERT ON streamforge.output_config
    FOR EACH ROW EXECUTE FUNCTION streamforge_internal.output_config_epoch();

-- The results rows configure_outputs copies from visible() when it turns
-- results on are written in the outputs' epoch too (it copies them before
-- it writes the configuration row that has the epoch)
CREATE FUNCTION streamforge_internal.output_config_results_epoch()
RETURNS trigger
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NEW.results AND (TG_OP OPERATOR(pg_catalog.=) 'INSERT' OR NOT OLD.results) THEN
        UPDATE streamforge.results AS r SET epoch = NEW.epoch
         WHERE r.pipeline OPERATOR(pg_catalog.=) NEW.pipeline;
    END IF;
    RETURN NULL;
END
$$;

REVOKE ALL ON FUNCTION streamforge_internal.output_config_results_epoch() FROM PUBLIC;

CREATE TRIGGER output_config_results_epoch
    AFTER INSERT OR UPDATE OF results ON streamforge.output_config
    FOR EACH ROW EXECUTE FUNCTION streamforge_internal.output_config_results_epoch();

-- The notification payload (src/persist/notify.c), for resync_outputs
CREATE FUNCTION streamforge_internal.notify_changes(pipeline text)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    id bigint;
    epoch bigint;
    st record;
    payload text;
BEGIN
    SELECT p.id INTO id FROM streamforge.pipeline AS p
     WHERE p.name OPERATOR(pg_catalog.=) notify_changes.pipeline;
    SELECT c.epoch INTO epoch FROM streamforge.output_config AS c
     WHERE c.pipeline OPERATOR(pg_catalog.=) notify_changes.pipeline;
    st := streamforge.stats(pipeline);
    payload := pg_catalog.format(
        '{"pipeline_id": %s, "epoch": %s, "seq": %s, "late_seq": %s}',
        id, epoch, st.changes_emitted, st.late_events);
    PERFORM pg_catalog.pg_notify('streamforge_changes', payload);
    PERFORM pg_catalog.pg_notify('streamforge_changes_' OPERATOR(pg_catalog.||) id, payload);
END
$$;

REVOKE ALL ON FUNCTION streamforge_internal.notify_changes(text) FROM PUBLIC;

-- ----------------------------------------------------------------
-- Notifications without names
-- ----------------------------------------------------------------

-- The channel of a pipeline's own notifications and its id (the
-- payloads name pipelines by id); needs the read privilege, so a role
-- that may not read a pipeline cannot tell which id is whose.
CREATE FUNCTION streamforge.notify_channel(pipeline text,
    OUT channel text, OUT pipeline_id bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'sf_notify_channel'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION streamforge.notify_channel(text) IS
'the channel of the pipeline''s notifications and the id their payloads name it by (read)';

-- ----------------------------------------------------------------
-- Backfill (issue 25 item 7)
-- ----------------------------------------------------------------

-- Every finalized row the pipeline's remembered events still give
-- (src/engine/final_rows.c, sf_derive_all_final_rows).  Internal.
CREATE FUNCTION streamforge_internal.final_rows_all(pipeline text)
RETURNS SETOF streamforge.result
AS 'MODULE_PATHNAME', 'sf_final_rows_all'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION streamforge_internal.final_rows_all(text) FROM PUBLIC;

-- configure_outputs gains backfill: with results on, the results table
-- also gets the rows the pipeline finalized before, derived from its
-- remembered events (final, seq NULL), besides the visible() rows the
-- configuration copies.  Run as the extension's owner by
-- configure_outputs (src/api/outputs.c) once it checked admin.
CREATE FUNCTION streamforge_internal.configure_outputs_backfill(pipeline text,
    changelog boolean, results boolean, late boolean, notify boolean,
    results_retention boolean, backfill boolean)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ep bigint;
BEGIN
    IF backfill IS NULL THEN
        RAISE EXCEPTION 'output switches must not be null' USING ERRCODE = '22004';
    END IF;
    PERFORM streamforge_internal.configure_outputs_internal(pipeline, changelog,
        results, late, notify, results_retention);
    IF backfill AND results THEN
        SELECT c.epoch INTO ep FROM streamforge.output_config AS c
         WHERE c.pipeline OPERATOR(pg_catalog.=) configure_outputs_backfill.pipeline;
        INSERT INTO streamforge.results (pipeline, window_name, key,
                window_start, window_end, count, sum, min, max, seq, final, epoch)
        SELECT configure_outputs_backfill.pipeline, f.window_name, f.key,
               f.window_start, f.window_end, f.count, f.sum, f.min, f.max, NULL,
               true, ep
          FROM streamforge_internal.final_rows_all(configure_outputs_backfill.pipeline) AS f
         WHERE NOT EXISTS (
                SELECT 1 FROM streamforge.results AS r
                 WHERE r.pipeline OPERATOR(pg_catalog.=) configure_outputs_backfill.pipeline
                   AND (r.window_name, r.key, r.window_start, r.window_end)
                       OPERATOR(pg_catalog.=) (f.window_name, f.key, f.window_start, f.window_end));
        IF results_retention THEN
            PERFORM streamforge_internal.trim_results_internal(configure_outputs_backfill.pipeline);
        END IF;
    END IF;
    IF results THEN
        PERFORM streamforge_internal.outputs_fill_ts(configure_outputs_backfill.pipeline);
        -- (issue 27) a measures pipeline's aggregates, 86_outputs_aggregates.sql
        PERFORM streamforge_internal.outputs_fill_aggregates(configure_outputs_backfill.pipeline);
    END IF;
END
$$;
REVOKE ALL ON FUNCTION streamforge_internal.configure_outputs_backfill(text,
    boolean, boolean, boolean, boolean, boolean, boolean) FROM PUBLIC;

DROP FUNCTION streamforge.disable_outputs(text);
DROP FUNCTION streamforge.configure_outputs(text, boolean, boolean, boolean,
    boolean, boolean);
CREATE FUNCTION streamforge.configure_outputs(pipeline text,
    changelog boolean DEFAULT true, results boolean DEFAULT true,
    late boolean DEFAULT true, notify boolean DEFAULT true,
    results_retention boolean DEFAULT false, backfill boolean DEFAULT false)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_configure_outputs'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION streamforge.configure_outputs(text, boolean, boolean,
    boolean, boolean, boolean, boolean) IS
'Turn the pipeline''s durable outputs (changelog, results, late output, notifications) on or off; results_retention drops final results rows older than the retention horizon; backfill adds the rows finalized before, from the remembered events. Needs admin.';

-- All outputs off: configure_outputs with every switch false.
CREATE FUNCTION streamforge.disable_outputs(pipeline text)
RETURNS void
LANGUAGE sql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT streamforge.configure_outputs(pipeline, false, false, false, false, false);
END;

COMMENT ON FUNCTION streamforge.disable_outputs(text) IS
'Turn every output of the pipeline off (configure_outputs with every switch false). Needs admin.';

-- the results rows of 0.2.0 that their pipeline has finalized
UPDATE streamforge.results AS r SET final = true
  FROM streamforge.pipeline AS p
 WHERE p.name OPERATOR(pg_catalog.=) r.pipeline
   AND r.window_end::pg_catalog.numeric OPERATOR(pg_catalog.+) p.lateness
       OPERATOR(pg_catalog.<) streamforge.watermark(p.name);

-- ----------------------------------------------------------------
-- issue 25: results you can query: the hash index on the key (built on
-- the existing rows) and results_ts with a key and a time range
-- ----------------------------------------------------------------
-- streamforge install script: results you can query (0.3.0, issue 25
-- item 6; docs/outputs.md, Reading the results).
--
-- results_address serves the sink's lookups of one address (its md5(key)
-- lets keys of any length fit); a lookup by key needs an index on the key
-- itself.  A hash index takes keys of any length, so
-- "WHERE pipeline = $1 AND key = $2" (and a time range on top) is an index
-- scan whatever the table's size: bench/results_lookup.sh measures it.
CREATE INDEX results_key ON streamforge.results USING hash (key);

-- results_ts gains a key and a time range, and the final and epoch columns
-- (0.3.0).  window_from and window_to bound window_start from below and
-- window_end from above, inclusive; they must be whole units of the
-- pipeline's time unit (time_to_units).
DROP FUNCTION streamforge.results_ts(text);
CREATE FUNCTION streamforge.results_ts(pipeline text, for_key text DEFAULT NULL,
    window_from timestamptz DEFAULT NULL, window_to timestamptz DEFAULT NULL)
RETURNS TABLE (window_name text, key text, window_start timestamptz,
               window_end timestamptz, count bigint, sum numeric, min bigint,
               max bigint, seq bigint, final boolean, epoch bigint)
LANGUAGE plpgsql VOLATILE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    unit interval := streamforge.time_unit(pipeline);
    lo bigint;
    hi bigint;
BEGIN
    PERFORM streamforge_internal.unit_us(unit, pipeline);
    lo := -9223372036854775807 OPERATOR(pg_catalog.-) 1;
    hi := 9223372036854775807;
    IF window_from IS NOT NULL THEN
        lo := streamforge.time_to_units(window_from, unit);
    END IF;
    IF window_to IS NOT NULL THEN
        hi := streamforge.time_to_units(window_to, unit);
    END IF;
    IF results_ts.for_key IS NULL THEN
        RETURN QUERY SELECT r.window_name::text, r.key::text,
            streamforge.units_to_time(r.window_start, unit),
            streamforge.units_to_time(r.window_end, unit),
            r.count, r.sum, r.min, r.max, r.seq, r.final, r.epoch
          FROM streamforge.results AS r
         WHERE r.pipeline OPERATOR(pg_catalog.=) results_ts.pipeline
           AND r.window_start OPERATOR(pg_catalog.>=) lo
           AND r.window_end OPERATOR(pg_catalog.<=) hi
         ORDER BY r.window_name, r.key, r.window_start, r.window_end;
    ELSE
        -- by the hash index results_key, also in a generic plan
        RETURN QUERY SELECT r.window_name::text, r.key::text,
            streamforge.units_to_time(r.window_start, unit),
            streamforge.units_to_time(r.window_end, unit),
            r.count, r.sum, r.min, r.max, r.seq, r.final, r.epoch
          FROM streamforge.results AS r
         WHERE r.key OPERATOR(pg_catalog.=) results_ts.for_key
           AND r.pipeline OPERATOR(pg_catalog.=) results_ts.pipeline
           AND r.window_start OPERATOR(pg_catalog.>=) lo
           AND r.window_end OPERATOR(pg_catalog.<=) hi
         ORDER BY r.window_name, r.key, r.window_start, r.window_end;
    END IF;
END
$$;
COMMENT ON FUNCTION streamforge.results_ts(text, text, timestamptz, timestamptz) IS
    'the pipeline''s rows of streamforge.results with timestamp bounds, optionally of one key and within a time range';

-- ----------------------------------------------------------------
-- Timestamps end to end (issue 25 item 5; docs/outputs.md, Tables)
-- ----------------------------------------------------------------

-- For a pipeline with a time unit the outputs carry timestamps too,
-- converted as the _ts reads convert (NULL without a time unit, and
-- outside timestamptz's range): written by src/persist/sink.c with every
-- row, and by results_fill_ts for the rows copied or derived in SQL.
ALTER TABLE streamforge.changelog ADD COLUMN window_start_ts timestamptz,
    ADD COLUMN window_end_ts timestamptz;
ALTER TABLE streamforge.results ADD COLUMN window_start_ts timestamptz,
    ADD COLUMN window_end_ts timestamptz;
ALTER TABLE streamforge.late_output ADD COLUMN event_time_ts timestamptz;

-- t in units of unit as timestamptz, NULL outside timestamptz's range
CREATE FUNCTION streamforge_internal.units_to_time_or_null(t bigint, unit interval)
RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT CASE WHEN t::pg_catalog.numeric OPERATOR(pg_catalog.*)
                     streamforge_internal.unit_us(unit)::pg_catalog.numeric
                     OPERATOR(pg_catalog.>=) (0 OPERATOR(pg_catalog.-) 210866803200000000)::pg_catalog.numeric
                 AND t::pg_catalog.numeric OPERATOR(pg_catalog.*)
                     streamforge_internal.unit_us(unit)::pg_catalog.numeric
                     OPERATOR(pg_catalog.<) 9224318016000000000::pg_catalog.numeric
                THEN streamforge.units_to_time(t, unit) END;
END;

-- Fill the timestamp columns of the pipeline's rows that lack them (rows
-- copied from visible(), derived by resync_outputs or backfill, or written
-- before 0.3.0).  Internal: run as the extension's owner.
CREATE FUNCTION streamforge_internal.outputs_fill_ts(pipeline text)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    unit interval;
BEGIN
    SELECT p.time_unit INTO unit FROM streamforge.pipeline AS p
     WHERE p.name OPERATOR(pg_catalog.=) outputs_fill_ts.pipeline;
    IF unit IS NULL THEN
        RETURN;
    END IF;
    UPDATE streamforge.results AS r
       SET window_start_ts = streamforge_internal.units_to_time_or_null(r.window_start, unit),
           window_end_ts = streamforge_internal.units_to_time_or_null(r.window_end, unit)
     WHERE r.pipeline OPERATOR(pg_catalog.=) outputs_fill_ts.pipeline
       AND r.window_start_ts IS NULL;
    UPDATE streamforge.changelog AS c
       SET window_start_ts = streamforge_internal.units_to_time_or_null(c.window_start, unit),
           window_end_ts = streamforge_internal.units_to_time_or_null(c.window_end, unit)
     WHERE c.pipeline OPERATOR(pg_catalog.=) outputs_fill_ts.pipeline
       AND c.window_start_ts IS NULL;
    UPDATE streamforge.late_output AS l
       SET event_time_ts = streamforge_internal.units_to_time_or_null(l.event_time, unit)
     WHERE l.pipeline OPERATOR(pg_catalog.=) outputs_fill_ts.pipeline
       AND l.event_time_ts IS NULL;
END
$$;

REVOKE ALL ON FUNCTION streamforge_internal.units_to_time_or_null(bigint, interval),
    streamforge_internal.outputs_fill_ts(text) FROM PUBLIC;

-- the timestamps of the outputs of 0.2.0's pipelines with a time unit
DO $$
DECLARE
    p text;
BEGIN
    FOR p IN SELECT x.name FROM streamforge.pipeline AS x WHERE x.time_unit IS NOT NULL LOOP
        PERFORM streamforge_internal.outputs_fill_ts(p);
    END LOOP;
END
$$;

-- ----------------------------------------------------------------
-- issue 25: consumer bookmarks (new table, functions and view; the trims
-- of 0.2.0 replaced by ones that keep what registered consumers need)
-- ----------------------------------------------------------------
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
-- streamforge install script: the times of a pipeline with a time unit
-- as intervals and timestamptz (0.3.0, issue 25 item 5; docs/outputs.md).
-- After 70_retention.sql, whose column it shows.

-- The times of the pipelines with a time unit, as intervals and
-- timestamptz: window sizes, steps and gaps, lateness, retention, the
-- watermark.  A view of its own (pipeline_info shows them in units).
-- Runs as its owner, filtered like pipeline_info.
CREATE VIEW streamforge.pipeline_info_ts WITH (security_barrier) AS
SELECT v.name, v.time_unit,
       ARRAY(SELECT w.name OPERATOR(pg_catalog.||) ': ' OPERATOR(pg_catalog.||)
                    w.kind OPERATOR(pg_catalog.||) '(' OPERATOR(pg_catalog.||)
                    CASE WHEN w.kind OPERATOR(pg_catalog.=) 'sliding'
                         THEN (w.size OPERATOR(pg_catalog.*) v.time_unit)::pg_catalog.text
                              OPERATOR(pg_catalog.||) ', ' OPERATOR(pg_catalog.||)
                              (w.step OPERATOR(pg_catalog.*) v.time_unit)::pg_catalog.text
                         WHEN w.kind OPERATOR(pg_catalog.=) 'session'
                         THEN (w.gap OPERATOR(pg_catalog.*) v.time_unit)::pg_catalog.text
                         ELSE (w.size OPERATOR(pg_catalog.*) v.time_unit)::pg_catalog.text
                    END OPERATOR(pg_catalog.||) ')'
               FROM pg_catalog.unnest(v.windows) WITH ORDINALITY
                    AS w(name, kind, size, step, gap, i)
              ORDER BY w.i) AS windows,
       v.lateness OPERATOR(pg_catalog.*) v.time_unit AS lateness,
       v.retention OPERATOR(pg_catalog.*) v.time_unit AS retention,
       streamforge.watermark_ts(v.name) AS watermark
  FROM (SELECT p.name, p.windows, p.lateness, p.retention, p.time_unit
          FROM streamforge.pipeline AS p,
               LATERAL (SELECT streamforge.effective_privilege(p.owner,
                               p.readers, p.ingesters, p.admins)
                               AS privilege) AS a
         WHERE a.privilege IS NOT NULL AND p.time_unit IS NOT NULL
        OFFSET 0) AS v;

REVOKE ALL ON streamforge.pipeline_info_ts FROM PUBLIC;
GRANT SELECT ON streamforge.pipeline_info_ts TO PUBLIC;
COMMENT ON VIEW streamforge.pipeline_info_ts IS
    'the pipelines with a time unit the current user may read: window sizes, lateness and retention as intervals, the watermark as timestamptz';

-- ----------------------------------------------------------------
-- issue 26: built-in progress (out_of_orderness), docs/progress.md
-- streamforge install script, part 7b: built-in progress (0.3.0, issue 26;
-- docs/progress.md).
--
-- out_of_orderness: NULL (the default) keeps the contract of 0.1.0 (events
-- never move progress); N makes each accepted event on a partition report
-- event_time - N for it, as if advance had been called after it.  Added
-- with ALTER TABLE, as the update adds it, so that a fresh install and an
-- updated one have their columns in the same order (after 70_retention.sql's).

ALTER TABLE streamforge.pipeline ADD COLUMN out_of_orderness bigint;
ALTER TABLE streamforge.pipeline
    ADD CONSTRAINT pipeline_out_of_orderness_check
    CHECK (out_of_orderness OPERATOR(pg_catalog.>=) 0);

-- idle_timeout: NULL (the default) never marks a partition idle by
-- itself; an interval marks an active partition idle once it has had no
-- delivery and no report for that long, by the transaction clock
-- (api/progress.c), as a journaled mark_idle.
ALTER TABLE streamforge.pipeline ADD COLUMN idle_timeout interval;

-- When each partition last received a delivery and a report (transaction
-- times, to the second; src/persist/activity.c), and since when it is
-- watched for idleness (set_idle_timeout).  Not part of any state: written
-- before the commit of each transaction that writes the pipeline.
CREATE TABLE streamforge.partition_activity (
    pipeline_id bigint NOT NULL
        REFERENCES streamforge.pipeline (id) ON DELETE CASCADE,
    partition text COLLATE "C" NOT NULL,
    last_delivery timestamptz,
    last_report timestamptz,
    since timestamptz,
    PRIMARY KEY (pipeline_id, partition)
);
SELECT pg_catalog.pg_extension_config_dump('streamforge.partition_activity', '');
REVOKE ALL ON streamforge.partition_activity FROM PUBLIC;

-- create_pipeline gains out_of_orderness (bigint, in the time unit) and
-- idle_timeout, after emit (45_emit.sql), and the measures and aggregates
-- of a measures pipeline (85_measures.sql, docs/aggregates.md; NULL: one
-- unnamed value).  Its final signature is this one.
DROP FUNCTION streamforge.create_pipeline(text, text[],
    streamforge.window_def[], bigint, bigint, interval, text);
CREATE FUNCTION streamforge.create_pipeline(name text, partitions text[],
    windows streamforge.window_def[], lateness bigint DEFAULT 0,
    retention bigint DEFAULT NULL, time_unit interval DEFAULT NULL,
    emit text DEFAULT 'update',
    out_of_orderness bigint DEFAULT NULL, idle_timeout interval DEFAULT NULL,
    measures text[] DEFAULT NULL, aggregates text[] DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_create_pipeline'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- (An interval form of create_pipeline would make a positional NULL
-- lateness ambiguous, and the API has one function per name: with a time
-- unit, pass streamforge.interval_to_units(interval, time_unit).)

-- (70_comments.sql comments the create_pipeline of 30_functions.sql)
COMMENT ON FUNCTION streamforge.create_pipeline(text, text[],
    streamforge.window_def[], bigint, bigint, interval, text, bigint, interval,
    text[], text[]) IS
    'create a pipeline with its partitions, windows and allowed lateness';

-- Changing the rule (admin).  NULL turns it off.  It moves no progress by
-- itself; the next accepted event of each partition applies the new rule.
CREATE FUNCTION streamforge.set_out_of_orderness(pipeline text,
    out_of_orderness bigint)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_set_out_of_orderness'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge.set_out_of_orderness(text, bigint) IS
    'sets the built-in progress rule: each accepted event reports event_time - out_of_orderness (NULL: off)';

CREATE FUNCTION streamforge.out_of_orderness(pipeline text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sf_out_of_orderness'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION streamforge.out_of_orderness(text) IS
    'the built-in progress rule of a pipeline, in its units (NULL: none)';

-- Idle detection by time (admin to change; NULL: off)
CREATE FUNCTION streamforge.set_idle_timeout(pipeline text,
    idle_timeout interval)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_set_idle_timeout'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge.set_idle_timeout(text, interval) IS
    'marks a partition idle after idle_timeout without a delivery or a report (NULL: never)';

-- The idle decisions due now, for pg_cron (ingest privilege); every write
-- call on the pipeline makes them too.
CREATE FUNCTION streamforge.tick(pipeline text)
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_tick'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge.tick(text) IS
    'marks idle the partitions whose idle_timeout has passed; returns the changes';

-- partitions() and who holds the watermark, the lag behind the fastest
-- partition, the last delivery and report (read privilege)
CREATE FUNCTION streamforge.partition_progress(pipeline text)
RETURNS TABLE (partition text, consumed_offset bigint, progress bigint,
               idle boolean, holds_watermark boolean, lag bigint,
               last_delivery timestamptz, last_report timestamptz)
AS 'MODULE_PATHNAME', 'sf_partition_progress'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION streamforge.partition_progress(text) IS
    'per partition: progress, whether it holds the watermark, lag behind the fastest, last delivery and report';

-- issue 25: the emit mode's column, after 72_progress.sql's columns as in a
-- fresh installation (the column order of streamforge.pipeline is that
-- of the install pieces)
-- streamforge install script: the emit mode's column of streamforge.pipeline
-- (0.3.0, issue 25; src/persist/emit_store.c).  After time_unit and
-- retention, where ALTER TABLE puts it on the table of an update.
--
-- NULL for 'update' (the default, so that the row of a pipeline that does
-- not use emit modes is that of 0.2.0), else 'update+final' or 'final'.
ALTER TABLE streamforge.pipeline ADD COLUMN emit text COLLATE "C"
    CONSTRAINT pipeline_emit_check
    CHECK (emit OPERATOR(pg_catalog.=) ANY
           (ARRAY['update+final'::pg_catalog.text, 'final'::pg_catalog.text]));

-- ----------------------------------------------------------------
-- issue 27: measures pipelines (docs/aggregates.md).  create_pipeline's
-- measures and aggregates came with 72_progress.sql above; everything
-- else is new.
-- ----------------------------------------------------------------
-- streamforge install script: measures pipelines (0.3.0, issue 27,
-- docs/aggregates.md).  A pipeline created with measures carries one
-- bigint per named measure per event and computes its declared
-- aggregates; the functions here deliver to and read such pipelines.
-- Everything is new in 0.3.0, so the update script includes this piece.

-- The definition: measure names in declaration order, and the aggregates
-- in their normalized spelling (NULL for a one-measure pipeline).
ALTER TABLE streamforge.pipeline ADD COLUMN measures text[];
ALTER TABLE streamforge.pipeline ADD COLUMN aggregates text[];

-- The durable outputs carry a measures pipeline's declared aggregates
-- (NULL for a one-measure pipeline, and for rows not written by a change,
-- such as those copied from visible() when results are enabled).
ALTER TABLE streamforge.changelog ADD COLUMN aggregates jsonb;
ALTER TABLE streamforge.results ADD COLUMN aggregates jsonb;

-- A delivery of a measures pipeline, for ingest_measures_batch.
CREATE TYPE streamforge.measures_delivery AS (
    partition text,
    source_offset bigint,
    event_id text,
    key text,
    event_time bigint,
    measures bigint[]
);
COMMENT ON TYPE streamforge.measures_delivery IS
    'a delivery of a measures pipeline (one bigint per measure), for streamforge.ingest_measures_batch';

-- A change of a measures pipeline: the declared aggregates by name.
CREATE TYPE streamforge.measures_change AS (
    seq bigint,
    op text,            -- 'retract' | 'upsert'
    window_name text,
    key text,
    window_start bigint,
    window_end bigint,
    count bigint,
    aggregates jsonb
);
COMMENT ON TYPE streamforge.measures_change IS
    'a change of a measures pipeline: the address, the count and the declared aggregates by name';

-- A row of live_aggregates() and visible_aggregates().
CREATE TYPE streamforge.measures_result AS (
    window_name text,
    key text,
    window_start bigint,
    window_end bigint,
    count bigint,
    aggregates jsonb
);
COMMENT ON TYPE streamforge.measures_result IS
    'a row of a measures pipeline: the address, the count and the declared aggregates by name';

CREATE FUNCTION streamforge.ingest_measures(pipeline text, partition text,
    source_offset bigint, event_id text, key text, event_time bigint,
    measures bigint[])
RETURNS SETOF streamforge.measures_change
AS 'MODULE_PATHNAME', 'sf_ingest_measures'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 2;
COMMENT ON FUNCTION streamforge.ingest_measures(text, text, bigint, text, text, bigint, bigint[]) IS
    'delivers one event of a measures pipeline (one bigint per measure) at a source offset';

CREATE FUNCTION streamforge.ingest_measures_batch(pipeline text,
    deliveries streamforge.measures_delivery[])
RETURNS SETOF streamforge.measures_change
AS 'MODULE_PATHNAME', 'sf_ingest_measures_batch'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge.ingest_measures_batch(text, streamforge.measures_delivery[]) IS
    'delivers the events of a measures pipeline in array order, all or none';

CREATE FUNCTION streamforge.live_aggregates(pipeline text)
RETURNS SETOF streamforge.measures_result
AS 'MODULE_PATHNAME', 'sf_live_aggregates'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION streamforge.live_aggregates(text) IS
    'every live bucket of a measures pipeline with its declared aggregates, like live()';

CREATE FUNCTION streamforge.visible_aggregates(pipeline text)
RETURNS SETOF streamforge.measures_result
AS 'MODULE_PATHNAME', 'sf_visible_aggregates'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION streamforge.visible_aggregates(text) IS
    'the visible rows of a measures pipeline with its declared aggregates, like visible()';

CREATE FUNCTION streamforge.aggregate_columns(pipeline text)
RETURNS TABLE (ordinality integer, name text, type regtype, func text,
               measure text)
AS 'MODULE_PATHNAME', 'sf_aggregate_columns'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION streamforge.aggregate_columns(text) IS
    'the declared aggregates of a pipeline in declaration order, with their SQL types (the members of the aggregates jsonb)';

-- issue 26: the metrics view, and pipeline_info's progress columns
-- streamforge install script, part 8b: the metrics view (0.3.0, issue 26;
-- docs/monitoring.md).

-- When the pipeline's snapshot was last written (a compaction, a restore
-- or a definition change), set by a trigger that only the statements that
-- write snapshot_version fire: the per-transaction version bump does not.
ALTER TABLE streamforge.pipeline ADD COLUMN compacted_at timestamptz;

CREATE FUNCTION streamforge_internal.pipeline_compacted()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    NEW.compacted_at := pg_catalog.transaction_timestamp();
    RETURN NEW;
END
$$;
REVOKE ALL ON FUNCTION streamforge_internal.pipeline_compacted() FROM PUBLIC;

CREATE TRIGGER pipeline_compacted
    BEFORE UPDATE OF snapshot_version ON streamforge.pipeline
    FOR EACH ROW EXECUTE FUNCTION streamforge_internal.pipeline_compacted();

-- One row per pipeline the current user may read: its definition (windows
-- in readable form, in name order), outputs, the counters of stats(), the
-- watermark and the idle partitions.  The view runs as its owner (the
-- extension's owner), which may read the storage tables; the OFFSET 0
-- fence makes the privilege filter run before stats(), watermark() and
-- partitions() are called, which run as the current user and would refuse
-- a pipeline it may not read.  Reading a row loads the pipeline's state
-- into the backend's cache, like stats().
-- 0.3.0: the defining query of an aggregate (issue 29,
-- 80_pipeline_info.sql), and (issue 26, docs/progress.md) which partitions
-- hold the watermark, the largest lag behind the fastest partition, the
-- latest delivery and report, after the columns of 0.2.0's view (which the
-- update replaces: a view can gain columns only at its end).
CREATE OR REPLACE VIEW streamforge.pipeline_info WITH (security_barrier) AS
SELECT v.name, v.owner, v.privilege, v.partitions,
       ARRAY(SELECT w.name OPERATOR(pg_catalog.||) ': ' OPERATOR(pg_catalog.||)
                    w.kind OPERATOR(pg_catalog.||) '(' OPERATOR(pg_catalog.||)
                    CASE WHEN w.kind OPERATOR(pg_catalog.=) 'sliding'
                         THEN w.size::pg_catalog.text OPERATOR(pg_catalog.||)
                              ', ' OPERATOR(pg_catalog.||) w.step::pg_catalog.text
                         WHEN w.kind OPERATOR(pg_catalog.=) 'session'
                         THEN w.gap::pg_catalog.text
                         ELSE w.size::pg_catalog.text
                    END OPERATOR(pg_catalog.||) ')'
               FROM pg_catalog.unnest(v.windows) WITH ORDINALITY
                    AS w(name, kind, size, step, gap, i)
              ORDER BY w.i) AS windows,
       v.lateness, v.retention, v.time_unit,
       COALESCE(o.changelog, false) AS changelog,
       COALESCE(o.results, false) AS results,
       COALESCE(o.late, false) AS late_output,
       COALESCE(o.notify, false) AS notify,
       streamforge.watermark(v.name) AS watermark,
       ARRAY(SELECT t.partition FROM streamforge.partitions(v.name) AS t
              WHERE t.idle ORDER BY t.partition) AS idle_partitions,
       s.deliveries, s.accepted, s.duplicate_ids, s.late_events,
       s.offset_replays, s.changes_emitted, s.live_buckets, s.visible_rows,
       streamforge_internal.pipeline_query(v.name) AS query,
       g.holding_watermark, g.lag, g.last_delivery, g.last_report
  FROM (SELECT p.name, p.owner, a.privilege, p.partitions, p.windows,
               p.lateness, p.retention, p.time_unit
          FROM streamforge.pipeline AS p,
               LATERAL (SELECT streamforge.effective_privilege(p.owner,
                               p.readers, p.ingesters, p.admins)
                               AS privilege) AS a
         WHERE a.privilege IS NOT NULL
        OFFSET 0) AS v
  LEFT JOIN streamforge.output_config AS o
         ON o.pipeline OPERATOR(pg_catalog.=) v.name
 CROSS JOIN LATERAL streamforge.stats(v.name) AS s
 -- 0.3.0 (issue 26, docs/progress.md): who holds the watermark, the largest
 -- lag behind the fastest partition, the latest delivery and report
 CROSS JOIN LATERAL (
       SELECT pg_catalog.array_agg(t.partition ORDER BY t.partition)
                  FILTER (WHERE t.holds_watermark) AS holding_watermark,
              pg_catalog.max(t.lag) AS lag,
              pg_catalog.max(t.last_delivery) AS last_delivery,
              pg_catalog.max(t.last_report) AS last_report
         FROM streamforge.partition_progress(v.name) AS t) AS g;

REVOKE ALL ON streamforge.pipeline_info FROM PUBLIC;
GRANT SELECT ON streamforge.pipeline_info TO PUBLIC;

COMMENT ON VIEW streamforge.pipeline_info IS
    'the pipelines the current user may read: definition, outputs, watermark, idle partitions, counters';


CREATE FUNCTION streamforge_internal.cache_loads(pipeline text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sf_cache_loads'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
-- (executed as the role that reads the view; it reveals only this
-- backend's own count)
COMMENT ON FUNCTION streamforge_internal.cache_loads(text) IS
    'how often this backend built the pipeline from its tables';

-- One row per pipeline the current role may read, with what an operator
-- graphs.  Like pipeline_info it runs as its owner (the storage tables),
-- and the OFFSET 0 fence filters by privilege before stats() and
-- watermark() run as the current user.  Reading a row loads the pipeline
-- into this backend's cache, like stats().
CREATE VIEW streamforge.metrics WITH (security_barrier) AS
SELECT v.name AS pipeline,
       s.deliveries, s.accepted, s.late_events, s.duplicate_ids AS duplicates,
       s.offset_replays AS replays, s.changes_emitted,
       s.live_buckets, s.visible_rows,
       s.remembered_identities, s.remembered_offsets,
       s.remembered_late_events,
       s.partitions, s.idle_partitions,
       w.watermark,
       CASE WHEN v.time_unit IS NOT NULL AND w.watermark IS NOT NULL
            THEN pg_catalog.date_part('epoch', pg_catalog.now()
                     OPERATOR(pg_catalog.-)
                     streamforge.units_to_time(w.watermark, v.time_unit))
       END AS watermark_lag_seconds,
       j.journal_rows, j.journal_bytes,
       COALESCE(pg_catalog.octet_length(v.snapshot), 0)::pg_catalog.int8 AS snapshot_bytes,
       v.compacted_at AS last_compaction,
       streamforge_internal.cache_loads(v.name) AS cache_loads,
       k.consumers, k.max_change_lag, k.max_late_lag
  FROM (SELECT p.id, p.name, p.time_unit, p.snapshot, p.compacted_at
          FROM streamforge.pipeline AS p
         WHERE streamforge.effective_privilege(p.owner, p.readers,
                   p.ingesters, p.admins) IS NOT NULL
        OFFSET 0) AS v
 CROSS JOIN LATERAL streamforge.stats(v.name) AS s
 CROSS JOIN LATERAL (SELECT streamforge.watermark(v.name) AS watermark) AS w
 CROSS JOIN LATERAL (
       SELECT pg_catalog.count(*) AS journal_rows,
              COALESCE(pg_catalog.sum(pg_catalog.octet_length(e.entry)), 0)::pg_catalog.int8
                  AS journal_bytes
         FROM streamforge.journal AS e
        WHERE e.pipeline_id OPERATOR(pg_catalog.=) v.id) AS j
 -- the consumer bookmarks (55_consumers.sql): how many, and how far the
 -- slowest is behind, counted as consumer_lag counts (NULL without any)
 CROSS JOIN LATERAL (
       SELECT pg_catalog.count(*) AS consumers,
              pg_catalog.max(GREATEST(l.last_seq OPERATOR(pg_catalog.-) c.seq, 0))
                  AS max_change_lag,
              pg_catalog.max(GREATEST(l.last_late_seq OPERATOR(pg_catalog.-) c.late_seq, 0))
                  AS max_late_lag
         FROM streamforge.consumer AS c
        CROSS JOIN (
              SELECT COALESCE((SELECT pg_catalog.max(x.seq)
                                 FROM streamforge.changelog AS x
                                WHERE x.pipeline OPERATOR(pg_catalog.=) v.name), 0)
                         AS last_seq,
                     COALESCE((SELECT pg_catalog.max(x.late_seq)
                                 FROM streamforge.late_output AS x
                                WHERE x.pipeline OPERATOR(pg_catalog.=) v.name), 0)
                         AS last_late_seq) AS l
        WHERE c.pipeline OPERATOR(pg_catalog.=) v.name) AS k;

REVOKE ALL ON streamforge.metrics FROM PUBLIC;
GRANT SELECT ON streamforge.metrics TO PUBLIC;

COMMENT ON VIEW streamforge.metrics IS
    'per pipeline the current user may read: counters, gauges, journal and snapshot sizes, consumer lag, for monitoring';

COMMENT ON TABLE streamforge.partition_activity IS
    'when each partition last received a delivery and a report (transaction times, to the second)';

-- Compaction off the write path (admin): for pg_cron, so that a cold load
-- stays short without a writer paying for the snapshot.  With
-- min_journal_bytes negative (the default) it compacts when the estimated
-- cold load exceeds streamforge.compact_target_load_ms (src/persist/
-- compact.c); with 0, always; else only a journal at least that large.
-- (The default is written as a quoted literal: the parser folds -1 into a
-- constant anyway, but test/run.d/sql-qualified.sh reads a bare "-" as an
-- operator.)
CREATE FUNCTION streamforge.compact(pipeline text,
    min_journal_bytes bigint DEFAULT '-1'::pg_catalog.int8)
RETURNS boolean
AS 'MODULE_PATHNAME', 'sf_compact'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge.compact(text, bigint) IS
    'stores the state as a new snapshot and empties the journal: by default when the estimated cold load exceeds streamforge.compact_target_load_ms, with min_journal_bytes >= 0 when the journal holds at least that; returns whether it did';

-- ----------------------------------------------------------------
-- issue 29: attached tables feeding a measures pipeline.  attach()'s
-- measures argument and the eleven-argument triggers came with
-- 62_attach.sql above (the attachments of 0.2.0 keep their arguments);
-- append_measures_batch and pipeline_nmeasures are new.
-- ----------------------------------------------------------------
-- streamforge install script: attached tables feeding a measures pipeline
-- (0.3.0, issue 29; docs/ingestion.md, docs/sql-aggregates.md).  New in
-- 0.3.0, so the update script includes this piece.
--
-- append_measures_batch is to ingest_measures_batch what append_batch is
-- to ingest_batch: each delivery takes its partition's next offset (its
-- source_offset is ignored and may be NULL).  The insert trigger of an
-- attachment made with attach(..., measures => ARRAY[...]) calls it
-- (62_attach.sql).

CREATE FUNCTION streamforge.append_measures_batch(pipeline text,
    deliveries streamforge.measures_delivery[])
RETURNS SETOF streamforge.measures_change
AS 'MODULE_PATHNAME', 'sf_append_measures_batch'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge.append_measures_batch(text, streamforge.measures_delivery[]) IS
    'delivers the events of a measures pipeline at their partitions'' next offsets, in array order, all or none';

-- The number of measures of the pipeline named pipeline, NULL for a
-- one-measure pipeline or none: attach() checks its measures against it.
-- Runs as the extension's owner, which may read streamforge.pipeline; like
-- ids (pipeline_id, 62_attach.sql), a count of measures is no secret.
CREATE FUNCTION streamforge_internal.pipeline_nmeasures(pipeline text)
RETURNS integer
LANGUAGE sql STABLE STRICT PARALLEL SAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
RETURN (SELECT pg_catalog.cardinality(p.measures) FROM streamforge.pipeline AS p
         WHERE p.name OPERATOR(pg_catalog.=) pipeline);
COMMENT ON FUNCTION streamforge_internal.pipeline_nmeasures(text) IS
    'the number of measures of a pipeline, NULL for a one-measure pipeline (internal helper of attachments)';

-- ----------------------------------------------------------------
-- issue 27 item 3: the results rows that configure_outputs copies or
-- backfills and resync_outputs rebuilds carry a measures pipeline's
-- aggregates (new functions; configure_outputs_backfill and
-- resync_outputs_internal, which call them, came with 45_emit.sql and
-- 41_outputs_resync.sql above)
-- ----------------------------------------------------------------
-- streamforge install script: the aggregates of the results rows that the
-- outputs' SQL writes for a measures pipeline (0.3.0, issue 27 item 3;
-- docs/aggregates.md, Outputs).
--
-- The sink fills results.aggregates for the rows the changes write.  The
-- rows configure_outputs copies from visible() (40_outputs.sql), those its
-- backfill derives (45_emit.sql) and those resync_outputs rebuilds
-- (41_outputs_resync.sql) are written with the contract's columns;
-- outputs_fill_aggregates, which those functions run last, fills their
-- aggregates.  Every object here is new in 0.3.0.

-- The finalized rows at the given addresses with their aggregates
-- (src/api/outputs_aggregates.c; final_rows with the aggregates jsonb).
-- Internal: run by outputs_fill_aggregates as the extension's owner.
CREATE FUNCTION streamforge_internal.final_rows_aggregates(pipeline text,
    window_name text[], key text[], window_start bigint[],
    window_end bigint[])
RETURNS SETOF streamforge.measures_result
AS 'MODULE_PATHNAME', 'sf_final_rows_aggregates'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

REVOKE ALL ON FUNCTION streamforge_internal.final_rows_aggregates(text,
    text[], text[], bigint[], bigint[]) FROM PUBLIC;

COMMENT ON FUNCTION streamforge_internal.final_rows_aggregates(text, text[],
    text[], bigint[], bigint[]) IS
    'internal: the finalized rows of a measures pipeline at the given addresses with their aggregates, derived from the remembered events';

-- Fill the aggregates of the pipeline's results rows that have none, for a
-- measures pipeline (nothing for another): a row that visible() shows gets
-- visible_aggregates()'s, a finalized row the one its remembered events
-- give.  A row neither gives keeps NULL: a finalized row whose window
-- starts below the retention horizon (its events are forgotten).  Run as
-- the extension's owner by configure_outputs_backfill and
-- resync_outputs_internal, after they wrote the rows.
CREATE FUNCTION streamforge_internal.outputs_fill_aggregates(pipeline text)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    uw text[];
    uk text[];
    us bigint[];
    ue bigint[];
BEGIN
    IF NOT EXISTS (SELECT 1 FROM streamforge.pipeline AS p
                    WHERE p.name OPERATOR(pg_catalog.=) outputs_fill_aggregates.pipeline
                      AND p.measures IS NOT NULL)
       OR NOT EXISTS (SELECT 1 FROM streamforge.results AS r
                       WHERE r.pipeline OPERATOR(pg_catalog.=) outputs_fill_aggregates.pipeline
                         AND r.aggregates IS NULL) THEN
        RETURN;
    END IF;
    UPDATE streamforge.results AS r SET aggregates = v.aggregates
      FROM streamforge.visible_aggregates(outputs_fill_aggregates.pipeline) AS v
     WHERE r.pipeline OPERATOR(pg_catalog.=) outputs_fill_aggregates.pipeline
       AND r.aggregates IS NULL
       AND (r.window_name, r.key, r.window_start, r.window_end, r.count)
           OPERATOR(pg_catalog.=) (v.window_name, v.key, v.window_start, v.window_end, v.count);

    SELECT pg_catalog.array_agg(r.window_name), pg_catalog.array_agg(r.key),
           pg_catalog.array_agg(r.window_start), pg_catalog.array_agg(r.window_end)
      INTO uw, uk, us, ue
      FROM streamforge.results AS r
     WHERE r.pipeline OPERATOR(pg_catalog.=) outputs_fill_aggregates.pipeline
       AND r.aggregates IS NULL;
    IF uw IS NULL THEN
        RETURN;
    END IF;
    UPDATE streamforge.results AS r SET aggregates = f.aggregates
      FROM streamforge_internal.final_rows_aggregates(outputs_fill_aggregates.pipeline,
                                                      uw, uk, us, ue) AS f
     WHERE r.pipeline OPERATOR(pg_catalog.=) outputs_fill_aggregates.pipeline
       AND r.aggregates IS NULL
       AND (r.window_name, r.key, r.window_start, r.window_end, r.count)
           OPERATOR(pg_catalog.=) (f.window_name, f.key, f.window_start, f.window_end, f.count);
END
$$;

REVOKE ALL ON FUNCTION streamforge_internal.outputs_fill_aggregates(text) FROM PUBLIC;

COMMENT ON FUNCTION streamforge_internal.outputs_fill_aggregates(text) IS
    'internal: fills the aggregates of the results rows of a measures pipeline that have none (copied, backfilled or resynchronized rows)';
