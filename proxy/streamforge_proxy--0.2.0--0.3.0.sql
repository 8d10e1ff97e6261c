-- streamforge_proxy 0.2.0 -> 0.3.0 (issue 21 for the router, docs/scale-out.md).
--
-- 0.3.0 changes no type, table or column: it refuses a schema streamforge
-- that someone else prepared (the check below, also the first statement of
-- streamforge_proxy--0.3.0.sql) and binds every definition to pg_catalog:
--   - every PL/pgSQL and PL/Proxy function gets SET search_path =
--     pg_catalog, pg_temp (CREATE OR REPLACE FUNCTION below: the bodies,
--     attributes and comments are those of streamforge_proxy--0.3.0.sql);
--   - the SQL functions' bodies are fully qualified (name_hash's cast);
--   - the CHECK constraint of sharded_pipelines is made again with a
--     qualified operator;
--   - inspect_checkpoint() checks that the SQL/MED server "streamforge"
--     exists before the PL/Proxy call.
-- After it the catalog equals a fresh 0.3.0 install (test/t/101_proxy_takeover.pl).
-- This file is written by hand from streamforge_proxy--0.3.0.sql: a change
-- to a function there is made here too.

\echo Use "ALTER EXTENSION streamforge_proxy UPDATE TO '0.3.0'" to load this file. \quit

-- ------------------------------------------------------------------
-- The schema is the extension's (issue 21 for streamforge; the same check,
-- sql/install/05_schemas.sql, adapted).  Runs first, in CREATE EXTENSION
-- and in every ALTER EXTENSION UPDATE, before any object is created or
-- replaced.  The control file's "schema = streamforge" makes CREATE
-- EXTENSION use an existing schema of that name whoever made it: a role
-- with CREATE on the router database could pre-create it with look-alikes
-- (streamforge.fixed(text, integer) matches streamforge.fixed('f', 10)
-- better than the extension's fixed(text, bigint)) that a superuser
-- calling the router would run, or drop and replace the extension's
-- objects as the schema's owner.  So the schema streamforge, if it exists,
-- must be
--   - owned by a superuser or by the extension's owner,
--   - closed to CREATE for every other role (PUBLIC included),
--   - free of objects that are not members of streamforge_proxy (at CREATE
--     EXTENSION: empty; streamforge itself, which uses the same schema,
--     counts as such an object: install the router in its own database).
-- Otherwise the command fails before it has changed anything, with 42P06
-- or 42501 (docs/security.md, "Threat model"; docs/scale-out.md).
--
-- The block runs with the script's search_path (streamforge, then the
-- schema of plproxy, with pg_catalog searched first), where a look-alike
-- may already exist: every name in it is qualified.
-- ------------------------------------------------------------------
DO LANGUAGE plpgsql $schema$
DECLARE
    ext pg_catalog.oid;
    extowner pg_catalog.oid;
    nsp record;
    bad record;
    nbad pg_catalog.int8;
BEGIN
    SELECT e.oid, e.extowner INTO ext, extowner
      FROM pg_catalog.pg_extension AS e
     WHERE e.extname OPERATOR(pg_catalog.=) 'streamforge_proxy';
    FOR nsp IN
        SELECT n.oid, n.nspname, n.nspowner, n.nspacl,
               pg_catalog.pg_get_userbyid(n.nspowner) AS owner_name
          FROM pg_catalog.pg_namespace AS n
         WHERE n.nspname OPERATOR(pg_catalog.=) 'streamforge'
         ORDER BY n.nspname
    LOOP
        IF nsp.nspowner OPERATOR(pg_catalog.<>) extowner
           AND NOT (SELECT r.rolsuper FROM pg_catalog.pg_roles AS r
                     WHERE r.oid OPERATOR(pg_catalog.=) nsp.nspowner) THEN
            RAISE EXCEPTION USING
                ERRCODE = '42501',
                MESSAGE = pg_catalog.format('schema "%s" is owned by role "%s", which is neither a superuser nor the owner of extension "streamforge_proxy"',
                                            nsp.nspname, nsp.owner_name),
                DETAIL = 'The owner of a schema can drop and replace the objects in it, and the router''s functions run with the privileges of whoever calls them, superusers included.',
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
                DETAIL = 'A role that may create objects in the schema can create functions or operators that callers of the router''s functions (superusers included) would run instead of the extension''s.',
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
                MESSAGE = pg_catalog.format('schema "%s" contains %s, which is not a member of extension "streamforge_proxy"',
                                            nsp.nspname, bad.what),
                DETAIL = pg_catalog.format('The schema holds %s %s that the extension did not create.  Such an object can be called instead of the one the router''s callers mean.',
                                           nbad, CASE WHEN nbad OPERATOR(pg_catalog.=) 1 THEN 'object' ELSE 'objects' END),
                HINT = 'Find out who created them and why, then move them to another schema or drop them, and run the command again.';
        END IF;
    END LOOP;
END
$schema$;

-- ------------------------------------------------------------------
-- Placement: the CHECK constraint, qualified (same name, same meaning)
-- ------------------------------------------------------------------
ALTER TABLE streamforge.sharded_pipelines
    DROP CONSTRAINT sharded_pipelines_shards_check,
    ADD CONSTRAINT sharded_pipelines_shards_check CHECK (shards OPERATOR(pg_catalog.>) 0);

-- ------------------------------------------------------------------
-- Functions: every one replaced by its 0.3.0 definition
-- ------------------------------------------------------------------
-- A stable 32-bit hash of a name: the first 4 bytes of its MD5, the same
-- on every platform and PostgreSQL version (hashtext() is not promised to be).
CREATE OR REPLACE FUNCTION streamforge.name_hash(name text)
RETURNS integer
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT (('x' OPERATOR(pg_catalog.||)
             pg_catalog.substr(pg_catalog.md5(name), 1, 8))::pg_catalog.bit(32))::pg_catalog.int4
$$;
COMMENT ON FUNCTION streamforge.name_hash(text) IS
    'stable hash of a pipeline or partition name; its low bits choose the shard';

-- The number of shards: the options p0, p1, ... of the SQL/MED server
-- "streamforge".
CREATE OR REPLACE FUNCTION streamforge.shard_count()
RETURNS integer
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n integer;
BEGIN
    SELECT pg_catalog.count(*)::integer INTO n
      FROM pg_catalog.pg_foreign_server s,
           pg_catalog.pg_options_to_table(s.srvoptions) o
     WHERE s.srvname OPERATOR(pg_catalog.=) 'streamforge'
       AND o.option_name OPERATOR(pg_catalog.~) '^p[0-9]+$';
    IF n OPERATOR(pg_catalog.=) 0 THEN
        RAISE EXCEPTION 'cluster "streamforge" is not configured'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Create the server streamforge of the foreign data wrapper plproxy with the options p0, p1, ... (docs/scale-out.md).';
    END IF;
    RETURN n;
END
$$;
COMMENT ON FUNCTION streamforge.shard_count() IS
    'number of shards of the cluster streamforge (PL/Proxy SQL/MED server options p0 .. pN-1)';

-- The shard of a name among n shards (PL/Proxy's mapping: hash & (n - 1)).
CREATE OR REPLACE FUNCTION streamforge.shard_of(name text, shards integer DEFAULT NULL)
RETURNS integer
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT streamforge.name_hash(name) OPERATOR(pg_catalog.&)
           (COALESCE(shards, streamforge.shard_count()) OPERATOR(pg_catalog.-) 1)
$$;
COMMENT ON FUNCTION streamforge.shard_of(text, integer) IS
    'shard of a pipeline name (placed pipelines) or of a partition name (sharded pipelines)';

-- The shards a call on pipeline goes to: for a partition call (ingest) the
-- partition's shard if the pipeline is sharded; for a pipeline-wide call
-- (partition NULL, all_shards) every shard if it is sharded; otherwise the
-- pipeline's own shard.  Raises 22004 for a NULL pipeline, like streamforge.
CREATE OR REPLACE FUNCTION streamforge.px_route(pipeline text, partition text,
    all_shards boolean)
RETURNS integer[]
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n integer := streamforge.shard_count();
    created integer;
BEGIN
    IF pipeline IS NULL THEN
        RAISE EXCEPTION 'pipeline must not be null'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    SELECT p.shards INTO created FROM streamforge.sharded_pipelines p
     WHERE p.pipeline OPERATOR(pg_catalog.=) px_route.pipeline;
    IF created IS NULL THEN
        RETURN ARRAY[streamforge.shard_of(pipeline, n)];
    END IF;
    IF created OPERATOR(pg_catalog.<>) n THEN
        RAISE EXCEPTION 'pipeline "%" is sharded over % shards, but cluster "streamforge" has %',
                pipeline, created, n
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Changing the shard count moves partitions between shards; restore the cluster''s former membership.';
    END IF;
    IF all_shards THEN
        RETURN ARRAY(SELECT pg_catalog.generate_series(0, n OPERATOR(pg_catalog.-) 1));
    END IF;
    IF partition IS NULL THEN
        RAISE EXCEPTION 'partition must not be null'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    RETURN ARRAY[streamforge.shard_of(partition, n)];
END
$$;
COMMENT ON FUNCTION streamforge.px_route(text, text, boolean) IS
    'internal: the shards a call on a pipeline (and partition) goes to';

-- Turns PL/Proxy's own failures (a shard that cannot be reached, a lost
-- connection: SQLSTATE XX000, message "PL/Proxy function ...") into 08006
-- naming the shards; returns for anything else, which the caller re-raises
-- unchanged (errors raised by a data node keep their SQLSTATE anyway).
CREATE OR REPLACE FUNCTION streamforge.px_unreachable(shards integer[], message text)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- PL/Proxy's libpq-level failures (its other errors, like a bad
    -- SPLIT, are bugs of this extension and pass unchanged)
    IF message OPERATOR(pg_catalog.~)
       '^PL/Proxy function .*(PQ[A-Za-z]+|connect timeout|query timeout|Lost result|Remote error|Unfinished connection)' THEN
        RAISE EXCEPTION 'could not reach % of cluster "streamforge"',
                CASE WHEN pg_catalog.array_length(shards, 1) OPERATOR(pg_catalog.=) 1
                     THEN 'shard ' OPERATOR(pg_catalog.||) shards[1]
                     ELSE pg_catalog.format('the shard in database "%s"',
                              COALESCE(pg_catalog.substring(message, '\[([^]]*)\]'), '?'))
                END
            USING ERRCODE = 'connection_failure',
                  DETAIL = message,
                  HINT = 'Calls for the other shards go on.  Retry when the shard is back; replayed deliveries are no-ops.';
    END IF;
END
$$;
COMMENT ON FUNCTION streamforge.px_unreachable(integer[], text) IS
    'internal: raise a PL/Proxy connection failure as 08006 naming the shard; returns for any other error';

-- ------------------------------------------------------------------
-- Remote calls (PL/Proxy).  px_shard: one target; px_shards: a SPLIT array
-- of shard numbers, each shard receives its own number.
-- ------------------------------------------------------------------
CREATE OR REPLACE FUNCTION streamforge.px_create(px_shards integer[], name text,
    partitions text[], windows streamforge.window_def[], lateness bigint,
    retention bigint, time_unit interval)
RETURNS SETOF integer
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS px_create
      FROM streamforge.create_pipeline(name, partitions, windows, lateness,
                                       retention, time_unit) r;
$$;

CREATE OR REPLACE FUNCTION streamforge.px_drop(px_shards integer[], name text)
RETURNS SETOF integer
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS px_drop FROM streamforge.drop_pipeline(name) r;
$$;

CREATE OR REPLACE FUNCTION streamforge.px_ingest(px_shard integer, pipeline text,
    partition text, source_offset bigint, event_id text, key text,
    event_time bigint, value bigint)
RETURNS SETOF streamforge.change
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    RUN ON px_shard;
    SELECT c.*, px_shard AS shard
      FROM streamforge.ingest(pipeline, partition, source_offset, event_id,
                              key, event_time, value) c;
$$;

CREATE OR REPLACE FUNCTION streamforge.px_ingest_batch(px_shard integer, pipeline text,
    deliveries streamforge.delivery[])
RETURNS SETOF streamforge.change
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    RUN ON px_shard;
    SELECT c.*, px_shard AS shard
      FROM streamforge.ingest_batch(pipeline, deliveries) c;
$$;

-- A batch split by shard: batches[i] is the text of the delivery[] for
-- shard px_shards[i] (PL/Proxy sends arrays as text anyway).
CREATE OR REPLACE FUNCTION streamforge.px_ingest_batch_split(px_shards integer[],
    pipeline text, batches text[])
RETURNS SETOF streamforge.change
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards, batches;
    RUN ON px_shards;
    SELECT c.*, (px_shards)[1] AS shard
      FROM streamforge.ingest_batch(pipeline,
               ((batches)[1])::streamforge.delivery[]) c;
$$;

CREATE OR REPLACE FUNCTION streamforge.px_advance(px_shards integer[], pipeline text,
    partition text, progress bigint)
RETURNS SETOF streamforge.change
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT c.*, (px_shards)[1] AS shard
      FROM streamforge.advance(pipeline, partition, progress) c;
$$;

CREATE OR REPLACE FUNCTION streamforge.px_mark_idle(px_shards integer[], pipeline text,
    partition text)
RETURNS SETOF streamforge.change
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT c.*, (px_shards)[1] AS shard
      FROM streamforge.mark_idle(pipeline, partition) c;
$$;

CREATE OR REPLACE FUNCTION streamforge.px_watermark(px_shards integer[], pipeline text,
    OUT shard integer, OUT watermark bigint)
RETURNS SETOF record
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS shard, streamforge.watermark(pipeline) AS watermark;
$$;

CREATE OR REPLACE FUNCTION streamforge.px_live(px_shards integer[], pipeline text)
RETURNS SETOF streamforge.result
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT r.* FROM streamforge.live(pipeline) r;
$$;

CREATE OR REPLACE FUNCTION streamforge.px_visible(px_shards integer[], pipeline text)
RETURNS SETOF streamforge.result
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT r.* FROM streamforge.visible(pipeline) r;
$$;

CREATE OR REPLACE FUNCTION streamforge.px_late_events(px_shards integer[], pipeline text)
RETURNS SETOF streamforge.late_event
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT l.*, (px_shards)[1] AS shard FROM streamforge.late_events(pipeline) l;
$$;

CREATE OR REPLACE FUNCTION streamforge.px_partitions(px_shards integer[], pipeline text,
    OUT partition text, OUT consumed_offset bigint, OUT progress bigint,
    OUT idle boolean)
RETURNS SETOF record
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT p.* FROM streamforge.partitions(pipeline) p;
$$;

CREATE OR REPLACE FUNCTION streamforge.px_stats(px_shards integer[], pipeline text,
    OUT deliveries bigint, OUT accepted bigint, OUT duplicate_ids bigint,
    OUT late_events bigint, OUT offset_replays bigint,
    OUT changes_emitted bigint, OUT live_buckets bigint,
    OUT visible_rows bigint, OUT partitions integer,
    OUT idle_partitions integer, OUT remembered_identities bigint,
    OUT remembered_offsets bigint, OUT remembered_late_events bigint,
    OUT forgotten_offsets bigint, OUT forgotten_late_events bigint)
RETURNS SETOF record
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT s.* FROM streamforge.stats(pipeline) s;
$$;

CREATE OR REPLACE FUNCTION streamforge.px_checkpoint(px_shard integer, pipeline text)
RETURNS bytea
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    RUN ON px_shard;
    SELECT streamforge.checkpoint(pipeline) AS px_checkpoint;
$$;

CREATE OR REPLACE FUNCTION streamforge.px_restore(px_shard integer, pipeline text,
    checkpoint bytea)
RETURNS integer
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    RUN ON px_shard;
    SELECT px_shard AS px_restore FROM streamforge.restore(pipeline, checkpoint) r;
$$;

-- inspect_checkpoint() reads only its argument: any shard will do.
CREATE OR REPLACE FUNCTION streamforge.px_inspect_checkpoint(checkpoint bytea)
RETURNS jsonb
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    RUN ON ANY;
    SELECT streamforge.inspect_checkpoint(checkpoint) AS px_inspect_checkpoint;
$$;

COMMENT ON FUNCTION streamforge.px_checkpoint(integer, text) IS
    'internal: checkpoint on one shard';
COMMENT ON FUNCTION streamforge.px_restore(integer, text, bytea) IS
    'internal: restore on one shard';
COMMENT ON FUNCTION streamforge.px_inspect_checkpoint(bytea) IS
    'internal: inspect_checkpoint on any shard';
COMMENT ON FUNCTION streamforge.px_create(integer[], text, text[], streamforge.window_def[], bigint, bigint, interval) IS
    'internal: create_pipeline on the given shards';
COMMENT ON FUNCTION streamforge.px_drop(integer[], text) IS
    'internal: drop_pipeline on the given shards';
COMMENT ON FUNCTION streamforge.px_ingest(integer, text, text, bigint, text, text, bigint, bigint) IS
    'internal: ingest on one shard';
COMMENT ON FUNCTION streamforge.px_ingest_batch(integer, text, streamforge.delivery[]) IS
    'internal: ingest_batch on one shard';
COMMENT ON FUNCTION streamforge.px_ingest_batch_split(integer[], text, text[]) IS
    'internal: ingest_batch of a batch split by shard';
COMMENT ON FUNCTION streamforge.px_advance(integer[], text, text, bigint) IS
    'internal: advance on the given shards';
COMMENT ON FUNCTION streamforge.px_mark_idle(integer[], text, text) IS
    'internal: mark_idle on the given shards';
COMMENT ON FUNCTION streamforge.px_watermark(integer[], text) IS
    'internal: watermark of each given shard';
COMMENT ON FUNCTION streamforge.px_live(integer[], text) IS
    'internal: live rows of the given shards';
COMMENT ON FUNCTION streamforge.px_visible(integer[], text) IS
    'internal: visible rows of the given shards';
COMMENT ON FUNCTION streamforge.px_late_events(integer[], text) IS
    'internal: late events of the given shards';
COMMENT ON FUNCTION streamforge.px_partitions(integer[], text) IS
    'internal: partitions of the given shards';
COMMENT ON FUNCTION streamforge.px_stats(integer[], text) IS
    'internal: stats of the given shards';

-- ------------------------------------------------------------------
-- Window constructors: computed here, with streamforge's checks and errors
-- (the data node checks the definitions again at create_pipeline).
-- ------------------------------------------------------------------
CREATE OR REPLACE FUNCTION streamforge.px_check_window(w streamforge.window_def)
RETURNS streamforge.window_def
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    what text;
    v bigint;
BEGIN
    IF w.name IS NULL THEN
        RAISE EXCEPTION 'window name must not be null' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF pg_catalog.octet_length(w.name) OPERATOR(pg_catalog.=) 0 THEN
        RAISE EXCEPTION 'window name must not be empty' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.octet_length(w.name) OPERATOR(pg_catalog.>) 63 THEN
        RAISE EXCEPTION 'window name "%" is too long', w.name
            USING ERRCODE = 'invalid_parameter_value', DETAIL = 'Names are at most 63 bytes long.';
    END IF;
    FOREACH what IN ARRAY CASE w.kind WHEN 'fixed' THEN ARRAY['size']
                                      WHEN 'sliding' THEN ARRAY['size', 'step']
                                      ELSE ARRAY['gap'] END LOOP
        v := CASE what WHEN 'size' THEN w.size WHEN 'step' THEN w.step ELSE w.gap END;
        IF v IS NULL THEN
            RAISE EXCEPTION '% must not be null', what USING ERRCODE = 'null_value_not_allowed';
        END IF;
        IF v OPERATOR(pg_catalog.<=) 0 THEN
            RAISE EXCEPTION '% of window "%" must be greater than zero', what, w.name
                USING ERRCODE = 'invalid_parameter_value', DETAIL = pg_catalog.format('The %s given is %s.', what, v);
        END IF;
    END LOOP;
    IF w.kind OPERATOR(pg_catalog.=) 'sliding'
       AND (w.size::numeric OPERATOR(pg_catalog.+) w.step OPERATOR(pg_catalog.-) 1)
           OPERATOR(pg_catalog./) w.step OPERATOR(pg_catalog.>=) 100001 THEN
        RAISE EXCEPTION 'sliding window "%" puts each event into too many buckets', w.name
            USING ERRCODE = 'invalid_parameter_value', DETAIL = 'size / step must be at most 100000.';
    END IF;
    RETURN w;
END
$$;
COMMENT ON FUNCTION streamforge.px_check_window(streamforge.window_def) IS
    'internal: the checks of the window constructors';

CREATE OR REPLACE FUNCTION streamforge.fixed(name text, size bigint)
RETURNS streamforge.window_def
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT streamforge.px_check_window(ROW(name, 'fixed', size, NULL, NULL)::streamforge.window_def) $$;

CREATE OR REPLACE FUNCTION streamforge.sliding(name text, size bigint, step bigint)
RETURNS streamforge.window_def
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT streamforge.px_check_window(ROW(name, 'sliding', size, step, NULL)::streamforge.window_def) $$;

CREATE OR REPLACE FUNCTION streamforge.session(name text, gap bigint)
RETURNS streamforge.window_def
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT streamforge.px_check_window(ROW(name, 'session', NULL, NULL, gap)::streamforge.window_def) $$;

COMMENT ON FUNCTION streamforge.fixed(text, bigint) IS
    'window definition: fixed windows of the given size';
COMMENT ON FUNCTION streamforge.sliding(text, bigint, bigint) IS
    'window definition: sliding windows of the given size every step';
COMMENT ON FUNCTION streamforge.session(text, bigint) IS
    'window definition: session windows closed by the given gap';

-- ------------------------------------------------------------------
-- The API
-- ------------------------------------------------------------------
CREATE OR REPLACE FUNCTION streamforge.create_pipeline(name text, partitions text[],
    windows streamforge.window_def[], lateness bigint DEFAULT 0,
    retention bigint DEFAULT NULL, time_unit interval DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shards integer[];
BEGIN
    IF name IS NULL THEN
        RAISE EXCEPTION 'pipeline name must not be null' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF EXISTS (SELECT FROM streamforge.sharded_pipelines p
                WHERE p.pipeline OPERATOR(pg_catalog.=) name) THEN
        RAISE EXCEPTION 'pipeline "%" already exists', name USING ERRCODE = 'duplicate_object';
    END IF;
    shards := ARRAY[streamforge.shard_of(name)];
    BEGIN
        PERFORM streamforge.px_create(shards, name, partitions, windows, lateness,
            retention, time_unit);
    EXCEPTION WHEN internal_error THEN
        PERFORM streamforge.px_unreachable(shards, SQLERRM);
        RAISE;
    END;
END
$$;
COMMENT ON FUNCTION streamforge.create_pipeline(text, text[], streamforge.window_def[], bigint, bigint, interval) IS
    'create a pipeline on the shard chosen by the hash of its name (distribution a)';

CREATE OR REPLACE FUNCTION streamforge.create_sharded_pipeline(name text,
    partitions text[], windows streamforge.window_def[],
    lateness bigint DEFAULT 0, retention bigint DEFAULT NULL,
    time_unit interval DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n integer := streamforge.shard_count();
    shards integer[];
BEGIN
    IF name IS NULL THEN
        RAISE EXCEPTION 'pipeline name must not be null' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    BEGIN
        INSERT INTO streamforge.sharded_pipelines (pipeline, shards) VALUES (name, n);
    EXCEPTION WHEN unique_violation THEN
        RAISE EXCEPTION 'pipeline "%" already exists', name USING ERRCODE = 'duplicate_object';
    END;
    shards := ARRAY(SELECT pg_catalog.generate_series(0, n OPERATOR(pg_catalog.-) 1));
    BEGIN
        PERFORM streamforge.px_create(shards, name, partitions, windows, lateness,
            retention, time_unit);
    EXCEPTION WHEN internal_error THEN
        PERFORM streamforge.px_unreachable(shards, SQLERRM);
        RAISE;
    END;
END
$$;
COMMENT ON FUNCTION streamforge.create_sharded_pipeline(text, text[], streamforge.window_def[], bigint, bigint, interval) IS
    'create a pipeline on every shard, each shard owning the partitions that hash to it (distribution b)';

CREATE OR REPLACE FUNCTION streamforge.drop_pipeline(name text)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shards integer[] := streamforge.px_route(name, NULL, true);
BEGIN
    BEGIN
        PERFORM streamforge.px_drop(shards, name);
    EXCEPTION WHEN internal_error THEN
        PERFORM streamforge.px_unreachable(shards, SQLERRM);
        RAISE;
    END;
    DELETE FROM streamforge.sharded_pipelines p WHERE p.pipeline OPERATOR(pg_catalog.=) name;
END
$$;
COMMENT ON FUNCTION streamforge.drop_pipeline(text) IS
    'drop a pipeline on its shard, or on every shard if it is sharded';

CREATE OR REPLACE FUNCTION streamforge.ingest(pipeline text, partition text,
    source_offset bigint, event_id text, key text, event_time bigint,
    value bigint)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE ROWS 2
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shard integer := (streamforge.px_route(pipeline, partition, false))[1];
BEGIN
    RETURN QUERY SELECT * FROM streamforge.px_ingest(shard, pipeline, partition,
        source_offset, event_id, key, event_time, value);
EXCEPTION WHEN internal_error THEN
    PERFORM streamforge.px_unreachable(ARRAY[shard], SQLERRM);
    RAISE;
END
$$;
COMMENT ON FUNCTION streamforge.ingest(text, text, bigint, text, text, bigint, bigint) IS
    'deliver one event, on the shard of the pipeline or of its partition';

CREATE OR REPLACE FUNCTION streamforge.ingest_batch(pipeline text,
    deliveries streamforge.delivery[])
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    targets integer[] := streamforge.px_route(pipeline, NULL, true);
    n integer;
    batches text[];
BEGIN
    -- One target: a placed pipeline, or a sharded one on a single shard.
    IF pg_catalog.array_length(targets, 1) OPERATOR(pg_catalog.=) 1 THEN
        RETURN QUERY SELECT * FROM streamforge.px_ingest_batch(targets[1], pipeline, deliveries);
        RETURN;
    END IF;
    IF deliveries IS NULL THEN
        RAISE EXCEPTION 'deliveries must not be null' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    -- Split by the shard of each delivery's partition, keeping array order
    -- within each shard.  A NULL element or partition goes to shard 0,
    -- which refuses it with streamforge's error.
    n := pg_catalog.array_length(targets, 1);
    SELECT pg_catalog.array_agg(g.shard ORDER BY g.shard),
           pg_catalog.array_agg(g.batch::text ORDER BY g.shard)
      INTO targets, batches
      FROM (SELECT COALESCE(streamforge.shard_of((d.e).partition, n), 0) AS shard,
                   pg_catalog.array_agg(d.e ORDER BY d.ord) AS batch
              FROM (SELECT pg_catalog.unnest(deliveries) AS e,
                           pg_catalog.generate_series(1, pg_catalog.cardinality(deliveries)) AS ord) d
             GROUP BY 1) g;
    IF targets IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM streamforge.px_ingest_batch_split(targets, pipeline, batches) c
        ORDER BY c.shard, c.seq;
EXCEPTION WHEN internal_error THEN
    PERFORM streamforge.px_unreachable(targets, SQLERRM);
    RAISE;
END
$$;
COMMENT ON FUNCTION streamforge.ingest_batch(text, streamforge.delivery[]) IS
    'deliver events in order; a sharded pipeline''s batch is split by partition and applied per shard';

CREATE OR REPLACE FUNCTION streamforge.advance(pipeline text, partition text,
    progress bigint)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shards integer[] := streamforge.px_route(pipeline, partition, true);
BEGIN
    RETURN QUERY SELECT * FROM streamforge.px_advance(shards, pipeline, partition, progress) c
        ORDER BY c.shard, c.seq;
EXCEPTION WHEN internal_error THEN
    PERFORM streamforge.px_unreachable(shards, SQLERRM);
    RAISE;
END
$$;
COMMENT ON FUNCTION streamforge.advance(text, text, bigint) IS
    'report progress of a partition; for a sharded pipeline on every shard';

CREATE OR REPLACE FUNCTION streamforge.mark_idle(pipeline text, partition text)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shards integer[] := streamforge.px_route(pipeline, partition, true);
BEGIN
    RETURN QUERY SELECT * FROM streamforge.px_mark_idle(shards, pipeline, partition) c
        ORDER BY c.shard, c.seq;
EXCEPTION WHEN internal_error THEN
    PERFORM streamforge.px_unreachable(shards, SQLERRM);
    RAISE;
END
$$;
COMMENT ON FUNCTION streamforge.mark_idle(text, text) IS
    'take a partition out of the watermark; for a sharded pipeline on every shard';

-- checkpoint and restore of a placed pipeline go to its shard.  A sharded
-- pipeline has one state per shard: take and restore each shard's with
-- streamforge.checkpoint()/restore() on the shard's database.
CREATE OR REPLACE FUNCTION streamforge.px_one_shard(pipeline text, what text)
RETURNS integer
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shards integer[] := streamforge.px_route(pipeline, NULL, true);
BEGIN
    IF pg_catalog.array_length(shards, 1) OPERATOR(pg_catalog.>) 1 THEN
        RAISE EXCEPTION '% of a sharded pipeline is not supported through the router', what
            USING ERRCODE = 'feature_not_supported',
                  HINT = pg_catalog.format('Call streamforge.%s() on the database of each shard.', what);
    END IF;
    RETURN shards[1];
END
$$;
COMMENT ON FUNCTION streamforge.px_one_shard(text, text) IS
    'internal: the shard of a placed pipeline; 0A000 for a sharded one';

CREATE OR REPLACE FUNCTION streamforge.checkpoint(pipeline text)
RETURNS bytea
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shard integer := streamforge.px_one_shard(pipeline, 'checkpoint');
BEGIN
    RETURN streamforge.px_checkpoint(shard, pipeline);
EXCEPTION WHEN internal_error THEN
    PERFORM streamforge.px_unreachable(ARRAY[shard], SQLERRM);
    RAISE;
END
$$;
COMMENT ON FUNCTION streamforge.checkpoint(text) IS
    'the state of a placed pipeline as canonical bytes, from its shard';

CREATE OR REPLACE FUNCTION streamforge.restore(pipeline text, checkpoint bytea)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shard integer := streamforge.px_one_shard(pipeline, 'restore');
BEGIN
    PERFORM streamforge.px_restore(shard, pipeline, checkpoint);
EXCEPTION WHEN internal_error THEN
    PERFORM streamforge.px_unreachable(ARRAY[shard], SQLERRM);
    RAISE;
END
$$;
COMMENT ON FUNCTION streamforge.restore(text, bytea) IS
    'replace the state of a placed pipeline with a checkpoint, on its shard';

CREATE OR REPLACE FUNCTION streamforge.inspect_checkpoint(checkpoint bytea)
RETURNS jsonb
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- the SQL/MED server must exist before PL/Proxy looks the cluster up
    -- (see the top of this file): shard_count() raises if it does not
    PERFORM streamforge.shard_count();
    RETURN streamforge.px_inspect_checkpoint(checkpoint);
EXCEPTION WHEN internal_error THEN
    PERFORM streamforge.px_unreachable(ARRAY[]::integer[], SQLERRM);
    RAISE;
END
$$;
COMMENT ON FUNCTION streamforge.inspect_checkpoint(bytea) IS
    'the document inside a checkpoint, decoded by any shard';

-- Reads of a sharded pipeline merge the shards: the watermark is the lowest
-- (NULL while a shard has none), results are in address order.
CREATE OR REPLACE FUNCTION streamforge.watermark(pipeline text)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shards integer[] := streamforge.px_route(pipeline, NULL, true);
    result bigint;
BEGIN
    SELECT CASE WHEN pg_catalog.bool_or(w.watermark IS NULL) THEN NULL
                ELSE pg_catalog.min(w.watermark) END
      INTO result
      FROM streamforge.px_watermark(shards, pipeline) w;
    RETURN result;
EXCEPTION WHEN internal_error THEN
    PERFORM streamforge.px_unreachable(shards, SQLERRM);
    RAISE;
END
$$;
COMMENT ON FUNCTION streamforge.watermark(text) IS
    'global watermark; for a sharded pipeline the lowest of the shards'' (NULL if one has none)';

CREATE OR REPLACE FUNCTION streamforge.live(pipeline text)
RETURNS SETOF streamforge.result
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shards integer[] := streamforge.px_route(pipeline, NULL, true);
BEGIN
    RETURN QUERY SELECT * FROM streamforge.px_live(shards, pipeline) r
        ORDER BY r.window_name COLLATE "C", r.key COLLATE "C", r.window_start, r.window_end;
EXCEPTION WHEN internal_error THEN
    PERFORM streamforge.px_unreachable(shards, SQLERRM);
    RAISE;
END
$$;
COMMENT ON FUNCTION streamforge.live(text) IS
    'live buckets, merged over the shards, in address order';

CREATE OR REPLACE FUNCTION streamforge.visible(pipeline text)
RETURNS SETOF streamforge.result
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shards integer[] := streamforge.px_route(pipeline, NULL, true);
BEGIN
    RETURN QUERY SELECT * FROM streamforge.px_visible(shards, pipeline) r
        ORDER BY r.window_name COLLATE "C", r.key COLLATE "C", r.window_start, r.window_end;
EXCEPTION WHEN internal_error THEN
    PERFORM streamforge.px_unreachable(shards, SQLERRM);
    RAISE;
END
$$;
COMMENT ON FUNCTION streamforge.visible(text) IS
    'emitted rows, merged over the shards, in address order';

CREATE OR REPLACE FUNCTION streamforge.late_events(pipeline text)
RETURNS SETOF streamforge.late_event
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shards integer[] := streamforge.px_route(pipeline, NULL, true);
BEGIN
    RETURN QUERY SELECT * FROM streamforge.px_late_events(shards, pipeline) l
        ORDER BY l.shard, l.late_seq;
EXCEPTION WHEN internal_error THEN
    PERFORM streamforge.px_unreachable(shards, SQLERRM);
    RAISE;
END
$$;
COMMENT ON FUNCTION streamforge.late_events(text) IS
    'late events, merged over the shards, in (shard, late_seq) order';

-- A partition's consumed offset is its own shard's (the others never
-- receive its deliveries: -1); progress is the lowest (NULL while a shard
-- has none) and idle holds only if it is idle on every shard, so a consumer
-- resuming from here re-sends what a failed shard missed.
CREATE OR REPLACE FUNCTION streamforge.partitions(pipeline text)
RETURNS TABLE (partition text, consumed_offset bigint, progress bigint,
               idle boolean)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shards integer[] := streamforge.px_route(pipeline, NULL, true);
BEGIN
    RETURN QUERY
        SELECT p.partition, pg_catalog.max(p.consumed_offset),
               CASE WHEN pg_catalog.bool_or(p.progress IS NULL) THEN NULL
                    ELSE pg_catalog.min(p.progress) END,
               pg_catalog.bool_and(p.idle)
          FROM streamforge.px_partitions(shards, pipeline) p
         GROUP BY p.partition
         ORDER BY p.partition COLLATE "C";
EXCEPTION WHEN internal_error THEN
    PERFORM streamforge.px_unreachable(shards, SQLERRM);
    RAISE;
END
$$;
COMMENT ON FUNCTION streamforge.partitions(text) IS
    'partitions with consumed offset, progress and idleness, merged over the shards';

CREATE OR REPLACE FUNCTION streamforge.stats(pipeline text,
    OUT deliveries bigint, OUT accepted bigint, OUT duplicate_ids bigint,
    OUT late_events bigint, OUT offset_replays bigint,
    OUT changes_emitted bigint, OUT live_buckets bigint,
    OUT visible_rows bigint, OUT partitions integer,
    OUT idle_partitions integer, OUT remembered_identities bigint,
    OUT remembered_offsets bigint, OUT remembered_late_events bigint,
    OUT forgotten_offsets bigint, OUT forgotten_late_events bigint)
RETURNS record
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shards integer[] := streamforge.px_route(pipeline, NULL, true);
BEGIN
    SELECT pg_catalog.sum(s.deliveries)::bigint, pg_catalog.sum(s.accepted)::bigint,
           pg_catalog.sum(s.duplicate_ids)::bigint, pg_catalog.sum(s.late_events)::bigint,
           pg_catalog.sum(s.offset_replays)::bigint, pg_catalog.sum(s.changes_emitted)::bigint,
           pg_catalog.sum(s.live_buckets)::bigint, pg_catalog.sum(s.visible_rows)::bigint,
           pg_catalog.max(s.partitions), pg_catalog.min(s.idle_partitions),
           pg_catalog.sum(s.remembered_identities)::bigint,
           pg_catalog.sum(s.remembered_offsets)::bigint,
           pg_catalog.sum(s.remembered_late_events)::bigint,
           pg_catalog.sum(s.forgotten_offsets)::bigint,
           pg_catalog.sum(s.forgotten_late_events)::bigint
      INTO deliveries, accepted, duplicate_ids, late_events, offset_replays,
           changes_emitted, live_buckets, visible_rows, partitions, idle_partitions,
           remembered_identities, remembered_offsets, remembered_late_events,
           forgotten_offsets, forgotten_late_events
      FROM streamforge.px_stats(shards, pipeline) s;
EXCEPTION WHEN internal_error THEN
    PERFORM streamforge.px_unreachable(shards, SQLERRM);
    RAISE;
END
$$;
COMMENT ON FUNCTION streamforge.stats(text) IS
    'statistics, summed over the shards (partitions: each shard has all; idle_partitions: the fewest)';
