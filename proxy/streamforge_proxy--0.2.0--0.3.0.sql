-- streamforge_proxy 0.2.0 -> 0.3.0 (issues 21 and 30, docs/scale-out.md).
--
-- Template: proxy/gen.pl expands it into streamforge_proxy--0.2.0--0.3.0.sql
-- (make), from the same pieces as the fresh install script
-- streamforge_proxy--0.3.0.sql.in, with every CREATE FUNCTION made a
-- CREATE OR REPLACE FUNCTION: nothing is written twice.
--
-- 0.3.0 refuses a schema streamforge that someone else prepared (issue 21:
-- the check below, also the first statement of streamforge_proxy--0.3.0.sql)
-- and binds every definition to pg_catalog; it routes the whole API
-- (issue 30: the wrappers generated from proxy/api.tsv, the type event that
-- append_batch takes, repair_sharded_pipeline, the sharded checkpoint).
-- The 0.2.0 remote functions whose signature changed are dropped first.
-- After it the catalog equals a fresh 0.3.0 install (test/t/101_proxy_takeover.pl).

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
-- Types new in 0.3.0 (those of 0.2.0 are unchanged)
-- ------------------------------------------------------------------
CREATE TYPE streamforge.event AS (
    partition text,
    event_id text,
    key text,
    event_time bigint,
    value bigint
);

CREATE TYPE streamforge.measures_change AS (
    seq bigint,
    op text,
    window_name text,
    key text,
    window_start bigint,
    window_end bigint,
    count bigint,
    aggregates jsonb
);

CREATE TYPE streamforge.measures_delivery AS (
    partition text,
    source_offset bigint,
    event_id text,
    key text,
    event_time bigint,
    measures bigint[]
);

CREATE TYPE streamforge.measures_result AS (
    window_name text,
    key text,
    window_start bigint,
    window_end bigint,
    count bigint,
    aggregates jsonb
);

-- ------------------------------------------------------------------
-- Placement: the CHECK constraint, qualified (same name, same meaning)
-- ------------------------------------------------------------------
ALTER TABLE streamforge.sharded_pipelines
    DROP CONSTRAINT sharded_pipelines_shards_check,
    ADD CONSTRAINT sharded_pipelines_shards_check CHECK (shards OPERATOR(pg_catalog.>) 0);

-- ------------------------------------------------------------------
-- 0.2.0's remote calls whose signature 0.3.0 changes (internal)
-- ------------------------------------------------------------------
DROP FUNCTION streamforge.px_ingest(integer, text, text, bigint, text, text, bigint, bigint);
DROP FUNCTION streamforge.px_ingest_batch(integer, text, streamforge.delivery[]);
DROP FUNCTION streamforge.px_ingest_batch_split(integer[], text, text[]);
DROP FUNCTION IF EXISTS streamforge.px_create(integer[], text, text[], streamforge.window_def[], bigint, bigint, interval);

-- ------------------------------------------------------------------
-- 0.2.0's API functions whose arguments 0.3.0 changes (created again
-- below): create_pipeline (emit, out_of_orderness, idle_timeout,
-- measures, aggregates), configure_outputs (backfill), results_ts (key
-- and time filters)
-- ------------------------------------------------------------------
DROP FUNCTION IF EXISTS streamforge.create_pipeline(text, text[], streamforge.window_def[], bigint, bigint, interval);
DROP FUNCTION IF EXISTS streamforge.configure_outputs(text, boolean, boolean, boolean, boolean, boolean);
DROP FUNCTION IF EXISTS streamforge.results_ts(text);

-- ------------------------------------------------------------------
-- Functions: every one replaced by its 0.3.0 definition, or created
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

-- Whether a failed remote call is retried once (the generated wrappers;
-- proxy/api.tsv marks the calls that are not: noretry).  A data node that
-- restarted since this router backend's last call to it has closed the
-- connection PL/Proxy keeps: the next call on it fails before the node
-- runs anything, with the node's 57P01 (a fast or smart shutdown told the
-- idle connection so) or PL/Proxy's "Lost result" / lost connection (an
-- immediate stop or a crash).  PL/Proxy has dropped that connection by
-- then, so the retry connects anew.  A node that cannot be reached (refused
-- or timed-out connection, query timeout) is not retried.
CREATE OR REPLACE FUNCTION streamforge.px_retry(state text, message text)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT state OPERATOR(pg_catalog.=) ANY (ARRAY['57P01', '57P02'])
        OR (state OPERATOR(pg_catalog.=) 'XX000'
            AND message OPERATOR(pg_catalog.~)
                '^PL/Proxy function .*(Lost result|server closed the connection|no connection to the server|terminating connection)')
$$;
COMMENT ON FUNCTION streamforge.px_retry(text, text) IS
    'internal: whether a failed remote call met a connection that a restarted node closed (retried once)';

-- ------------------------------------------------------------------
-- Remote calls (PL/Proxy).  px_shard: one target; px_shards: a SPLIT array
-- of shard numbers, each shard receives its own number.
-- ------------------------------------------------------------------
CREATE OR REPLACE FUNCTION streamforge.px_create(px_shards integer[], name text,
    partitions text[], windows streamforge.window_def[], lateness bigint,
    retention bigint, time_unit interval, emit text DEFAULT 'update',
    out_of_orderness bigint DEFAULT NULL, idle_timeout interval DEFAULT NULL,
    measures text[] DEFAULT NULL, aggregates text[] DEFAULT NULL)
RETURNS SETOF integer
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS px_create
      FROM streamforge.create_pipeline(name, partitions, windows, lateness,
                                       retention, time_unit, emit,
                                       out_of_orderness, idle_timeout,
                                       measures, aggregates) r;
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

COMMENT ON FUNCTION streamforge.px_checkpoint(integer, text) IS
    'internal: checkpoint on one shard';
COMMENT ON FUNCTION streamforge.px_restore(integer, text, bytea) IS
    'internal: restore on one shard';
COMMENT ON FUNCTION streamforge.px_create(integer[], text, text[], streamforge.window_def[], bigint, bigint, interval, text, bigint, interval, text[], text[]) IS
    'internal: create_pipeline on the given shards';
COMMENT ON FUNCTION streamforge.px_drop(integer[], text) IS
    'internal: drop_pipeline on the given shards';
COMMENT ON FUNCTION streamforge.px_watermark(integer[], text) IS
    'internal: watermark of each given shard';
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
    retention bigint DEFAULT NULL, time_unit interval DEFAULT NULL,
    emit text DEFAULT 'update', out_of_orderness bigint DEFAULT NULL,
    idle_timeout interval DEFAULT NULL, measures text[] DEFAULT NULL,
    aggregates text[] DEFAULT NULL)
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
            retention, time_unit, emit, out_of_orderness, idle_timeout,
            measures, aggregates);
    EXCEPTION WHEN internal_error THEN
        PERFORM streamforge.px_unreachable(shards, SQLERRM);
        RAISE;
    END;
END
$$;
COMMENT ON FUNCTION streamforge.create_pipeline(text, text[], streamforge.window_def[], bigint, bigint, interval, text, bigint, interval, text[], text[]) IS
    'create a pipeline on the shard chosen by the hash of its name (distribution a)';

-- ------------------------------------------------------------------
-- Sharded pipelines: create, drop and repair (issue 30).  A call that
-- fails half-way (a shard down) leaves the pipeline on some shards; each
-- of these calls finishes what an earlier one left, so calling it again
-- once the shard is back converges:
--   create_sharded_pipeline  creates it where it is missing; a shard that
--                            has it already counts if it has the requested
--                            definition and no delivery (else 42710);
--   drop_pipeline            drops it where it exists; the router's row
--                            goes when no shard has it;
--   repair_sharded_pipeline  either of those for a pipeline left half-made
--                            (listed or not), with a row per shard saying
--                            what it did.
-- ------------------------------------------------------------------
-- The definition of a pipeline on each shard that has it (and may read
-- it), in streamforge.pipeline_info's form.
CREATE OR REPLACE FUNCTION streamforge.px_definition(px_shards integer[], name text,
    OUT shard integer, OUT partitions text[], OUT windows text[],
    OUT lateness bigint, OUT retention bigint, OUT time_unit interval,
    OUT deliveries bigint)
RETURNS SETOF record
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS shard, i.partitions, i.windows, i.lateness,
           i.retention, i.time_unit, i.deliveries
      FROM streamforge.pipeline_info i
     WHERE i.name OPERATOR(pg_catalog.=) name;
$$;
COMMENT ON FUNCTION streamforge.px_definition(integer[], text) IS
    'internal: the definition of a pipeline on each given shard that has it';

-- A definition as pipeline_info shows it: partitions and windows sorted by
-- name (byte order), windows as "name: kind(size[, step])".
CREATE OR REPLACE FUNCTION streamforge.px_windows_text(windows streamforge.window_def[])
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT ARRAY(SELECT w.name OPERATOR(pg_catalog.||) ': ' OPERATOR(pg_catalog.||)
                        w.kind OPERATOR(pg_catalog.||) '(' OPERATOR(pg_catalog.||)
                        CASE WHEN w.kind OPERATOR(pg_catalog.=) 'sliding'
                             THEN w.size::pg_catalog.text OPERATOR(pg_catalog.||)
                                  ', ' OPERATOR(pg_catalog.||) w.step::pg_catalog.text
                             WHEN w.kind OPERATOR(pg_catalog.=) 'session'
                             THEN w.gap::pg_catalog.text
                             ELSE w.size::pg_catalog.text
                        END OPERATOR(pg_catalog.||) ')'
                   FROM pg_catalog.unnest(windows) AS w
                  ORDER BY w.name COLLATE "C")
$$;
COMMENT ON FUNCTION streamforge.px_windows_text(streamforge.window_def[]) IS
    'internal: window definitions as streamforge.pipeline_info shows them';

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
    missing integer[];
    defs jsonb;
    bad record;
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
    -- Every shard must answer before anything is created: an earlier call
    -- may have created it on some (a shard was down then).
    BEGIN
        SELECT COALESCE(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(d)), '[]') INTO defs
          FROM streamforge.px_definition(shards, name) d;
    EXCEPTION WHEN internal_error THEN
        PERFORM streamforge.px_unreachable(shards, SQLERRM);
        RAISE;
    END;
    SELECT e.shard, e.deliveries INTO bad FROM pg_catalog.jsonb_to_recordset(defs) AS e(shard integer, partitions text[], windows text[], lateness bigint, retention bigint, time_unit interval, deliveries bigint)
     WHERE e.partitions IS DISTINCT FROM
               ARRAY(SELECT p FROM pg_catalog.unnest(create_sharded_pipeline.partitions) p ORDER BY p COLLATE "C")
        OR e.windows IS DISTINCT FROM streamforge.px_windows_text(create_sharded_pipeline.windows)
        OR e.lateness IS DISTINCT FROM create_sharded_pipeline.lateness
        OR e.retention IS DISTINCT FROM create_sharded_pipeline.retention
        OR e.time_unit IS DISTINCT FROM create_sharded_pipeline.time_unit
        OR e.deliveries OPERATOR(pg_catalog.<>) 0
     ORDER BY e.shard LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'pipeline "%" already exists on shard %', name, bad.shard
            USING ERRCODE = 'duplicate_object',
                  DETAIL = CASE WHEN bad.deliveries OPERATOR(pg_catalog.<>) 0
                                THEN 'It has received deliveries.'
                                ELSE 'It has another definition.' END,
                  HINT = 'A sharded pipeline that an earlier call created half-way has the same definition and no delivery on the shards it reached.';
    END IF;
    missing := ARRAY(SELECT s FROM pg_catalog.unnest(shards) s
                      WHERE s OPERATOR(pg_catalog.<>) ALL (ARRAY(SELECT e.shard FROM pg_catalog.jsonb_to_recordset(defs) AS e(shard integer, partitions text[], windows text[], lateness bigint, retention bigint, time_unit interval, deliveries bigint)))
                      ORDER BY s);
    IF pg_catalog.cardinality(missing) OPERATOR(pg_catalog.>) 0 THEN
        BEGIN
            PERFORM streamforge.px_create(missing, name, partitions, windows, lateness,
                retention, time_unit);
        EXCEPTION WHEN internal_error THEN
            PERFORM streamforge.px_unreachable(missing, SQLERRM);
            RAISE;
        END;
    END IF;
END
$$;
COMMENT ON FUNCTION streamforge.create_sharded_pipeline(text, text[], streamforge.window_def[], bigint, bigint, interval) IS
    'create a pipeline on every shard, each shard owning the partitions that hash to it (distribution b); finishes a create that failed half-way';

-- Drop on the shards that have it.  A shard without it is done (a drop
-- that failed half-way dropped it there); the router's row goes with the
-- last shard.
CREATE OR REPLACE FUNCTION streamforge.px_drop_where_exists(px_shards integer[], name text)
RETURNS SETOF integer
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT CASE WHEN EXISTS (SELECT FROM streamforge.pipeline_info i
                              WHERE i.name OPERATOR(pg_catalog.=) name)
                THEN (SELECT (px_shards)[1] FROM streamforge.drop_pipeline(name) d)
           END AS px_drop_where_exists;
$$;
COMMENT ON FUNCTION streamforge.px_drop_where_exists(integer[], text) IS
    'internal: drop_pipeline on the given shards that have the pipeline';

CREATE OR REPLACE FUNCTION streamforge.drop_pipeline(name text)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shards integer[] := streamforge.px_route(name, NULL, true);
BEGIN
    BEGIN
        IF pg_catalog.cardinality(shards) OPERATOR(pg_catalog.=) 1 THEN
            PERFORM streamforge.px_drop(shards, name);
        ELSE
            PERFORM streamforge.px_drop_where_exists(shards, name);
        END IF;
    EXCEPTION WHEN internal_error THEN
        PERFORM streamforge.px_unreachable(shards, SQLERRM);
        RAISE;
    END;
    DELETE FROM streamforge.sharded_pipelines p WHERE p.pipeline OPERATOR(pg_catalog.=) name;
END
$$;
COMMENT ON FUNCTION streamforge.drop_pipeline(text) IS
    'drop a pipeline on its shard, or on every shard that has it if it is sharded';

-- repair_sharded_pipeline(name): for a pipeline in sharded_pipelines,
-- create it on the shards that lack it, with the definition the others
-- agree on; for a pipeline not listed that exists on a shard other than
-- its placement shard (a create that failed half-way), list it and do the
-- same.  drop => true drops it on every shard instead and forgets it.
CREATE OR REPLACE FUNCTION streamforge.repair_sharded_pipeline(name text,
    drop boolean DEFAULT false)
RETURNS TABLE (shard integer, action text)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n integer := streamforge.shard_count();
    shards integer[];
    listed boolean;
    ndefs integer;
    def record;
    defs jsonb;
    missing integer[];
BEGIN
    IF name IS NULL THEN
        RAISE EXCEPTION 'pipeline name must not be null' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    shards := ARRAY(SELECT pg_catalog.generate_series(0, n OPERATOR(pg_catalog.-) 1));
    listed := EXISTS (SELECT FROM streamforge.sharded_pipelines p
                       WHERE p.pipeline OPERATOR(pg_catalog.=) repair_sharded_pipeline.name);
    BEGIN
        SELECT COALESCE(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(d)), '[]') INTO defs
          FROM streamforge.px_definition(shards, name) d;
    EXCEPTION WHEN internal_error THEN
        PERFORM streamforge.px_unreachable(shards, SQLERRM);
        RAISE;
    END;
    IF NOT listed THEN
        IF NOT EXISTS (SELECT FROM pg_catalog.jsonb_to_recordset(defs) AS e(shard integer, partitions text[], windows text[], lateness bigint, retention bigint, time_unit interval, deliveries bigint)
                        WHERE e.shard OPERATOR(pg_catalog.<>) streamforge.shard_of(name, n)) THEN
            RAISE EXCEPTION 'pipeline "%" is not a sharded pipeline', name
                USING ERRCODE = 'undefined_object',
                      DETAIL = 'It is not in streamforge.sharded_pipelines and no shard but its placement shard has it.';
        END IF;
        INSERT INTO streamforge.sharded_pipelines (pipeline, shards) VALUES (name, n);
    END IF;
    IF drop THEN
        BEGIN
            PERFORM streamforge.px_drop_where_exists(shards, name);
        EXCEPTION WHEN internal_error THEN
            PERFORM streamforge.px_unreachable(shards, SQLERRM);
            RAISE;
        END;
        DELETE FROM streamforge.sharded_pipelines p
         WHERE p.pipeline OPERATOR(pg_catalog.=) repair_sharded_pipeline.name;
        RETURN QUERY SELECT e.shard, 'dropped'::text FROM pg_catalog.jsonb_to_recordset(defs) AS e(shard integer, partitions text[], windows text[], lateness bigint, retention bigint, time_unit interval, deliveries bigint) ORDER BY e.shard;
        RETURN;
    END IF;
    SELECT pg_catalog.count(DISTINCT (e.partitions, e.windows, e.lateness, e.retention, e.time_unit))::integer
      INTO ndefs FROM pg_catalog.jsonb_to_recordset(defs) AS e(shard integer, partitions text[], windows text[], lateness bigint, retention bigint, time_unit interval, deliveries bigint);
    IF ndefs OPERATOR(pg_catalog.=) 0 THEN
        -- no shard has it: the router's row is all that is left
        DELETE FROM streamforge.sharded_pipelines p
         WHERE p.pipeline OPERATOR(pg_catalog.=) repair_sharded_pipeline.name;
        RETURN QUERY SELECT s, 'absent, forgotten'::text FROM pg_catalog.unnest(shards) s;
        RETURN;
    END IF;
    IF ndefs OPERATOR(pg_catalog.>) 1 THEN
        RAISE EXCEPTION 'the shards of pipeline "%" have different definitions', name
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Drop it on the shards whose definition is wrong (on their databases), then repair again.';
    END IF;
    SELECT * INTO def FROM pg_catalog.jsonb_to_recordset(defs) AS e(shard integer, partitions text[], windows text[], lateness bigint, retention bigint, time_unit interval, deliveries bigint) ORDER BY e.shard LIMIT 1;
    missing := ARRAY(SELECT s FROM pg_catalog.unnest(shards) s
                      WHERE s OPERATOR(pg_catalog.<>) ALL (ARRAY(SELECT e.shard FROM pg_catalog.jsonb_to_recordset(defs) AS e(shard integer, partitions text[], windows text[], lateness bigint, retention bigint, time_unit interval, deliveries bigint)))
                      ORDER BY s);
    IF pg_catalog.cardinality(missing) OPERATOR(pg_catalog.>) 0 THEN
        BEGIN
            PERFORM streamforge.px_create(missing, name, def.partitions,
                ARRAY(SELECT ROW(m[1], m[2], CASE WHEN m[2] OPERATOR(pg_catalog.<>) 'session' THEN m[3]::bigint END,
                                 m[4]::bigint, CASE WHEN m[2] OPERATOR(pg_catalog.=) 'session' THEN m[3]::bigint END
                                )::streamforge.window_def
                        FROM pg_catalog.unnest(def.windows) w,
                             pg_catalog.regexp_match(w, '^(.*): (fixed|sliding|session)\(([0-9]+)(?:, ([0-9]+))?\)$') m),
                def.lateness, def.retention, def.time_unit);
        EXCEPTION WHEN internal_error THEN
            PERFORM streamforge.px_unreachable(missing, SQLERRM);
            RAISE;
        END;
    END IF;
    RETURN QUERY SELECT s, CASE WHEN s OPERATOR(pg_catalog.=) ANY (missing) THEN 'created'
                                ELSE 'present' END
                   FROM pg_catalog.unnest(shards) s;
END
$$;
COMMENT ON FUNCTION streamforge.repair_sharded_pipeline(text, boolean) IS
    'finish a create_sharded_pipeline or drop_pipeline that failed half-way (drop: drop it everywhere)';

-- checkpoint and restore of a placed pipeline go to its shard (the bytes
-- are the node's).  A sharded pipeline has one state per shard: its
-- checkpoint through the router is one document holding each shard's
-- checkpoint and the shard map (docs/scale-out.md, "Checkpoints of a
-- sharded pipeline"), taken by one parallel call; restore() takes it back
-- and refuses a document of another pipeline layout: another shard count,
-- or another partition set.
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

CREATE OR REPLACE FUNCTION streamforge.px_checkpoints(px_shards integer[], pipeline text,
    OUT shard integer, OUT checkpoint bytea, OUT partitions text[])
RETURNS SETOF record
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS shard, streamforge.checkpoint(pipeline) AS checkpoint,
           ARRAY(SELECT p.partition FROM streamforge.partitions(pipeline) p
                  ORDER BY p.partition COLLATE "C") AS partitions;
$$;
COMMENT ON FUNCTION streamforge.px_checkpoints(integer[], text) IS
    'internal: checkpoint and partitions of each given shard';

CREATE OR REPLACE FUNCTION streamforge.px_restores(px_shards integer[], pipeline text,
    checkpoints bytea[])
RETURNS SETOF integer
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards, checkpoints;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS px_restores
      FROM streamforge.restore(pipeline, (checkpoints)[1]) r;
$$;
COMMENT ON FUNCTION streamforge.px_restores(integer[], text, bytea[]) IS
    'internal: restore each given shard from its own checkpoint';

CREATE OR REPLACE FUNCTION streamforge.checkpoint(pipeline text)
RETURNS bytea
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shards integer[] := streamforge.px_route(pipeline, NULL, true);
    doc jsonb;
    cks bytea[];
    parts jsonb;
BEGIN
    IF NOT EXISTS (SELECT FROM streamforge.sharded_pipelines p
                    WHERE p.pipeline OPERATOR(pg_catalog.=) checkpoint.pipeline) THEN
        RETURN streamforge.px_checkpoint(shards[1], pipeline);
    END IF;
    -- one document: format, pipeline, shard count, shard map (each
    -- partition's owner) and the shards' checkpoints in shard order
    SELECT pg_catalog.array_agg(c.checkpoint ORDER BY c.shard),
           (pg_catalog.array_agg(pg_catalog.array_to_json(c.partitions)::pg_catalog.jsonb ORDER BY c.shard))[1]
      INTO cks, parts
      FROM streamforge.px_checkpoints(shards, pipeline) c;
    doc := pg_catalog.jsonb_build_object(
               'format', 'streamforge_proxy sharded checkpoint',
               'version', 1,
               'pipeline', pipeline,
               'shards', pg_catalog.cardinality(shards),
               'shard_map', (SELECT COALESCE(pg_catalog.jsonb_object_agg(m.p, streamforge.shard_of(m.p, pg_catalog.cardinality(shards))), '{}')
                               FROM pg_catalog.jsonb_array_elements_text(parts) AS m(p)),
               'checkpoints', (SELECT pg_catalog.jsonb_agg(pg_catalog.encode(k.c, 'base64') ORDER BY k.o)
                                 FROM pg_catalog.unnest(cks) WITH ORDINALITY AS k(c, o)));
    RETURN pg_catalog.convert_to(doc::pg_catalog.text, 'UTF8');
EXCEPTION WHEN internal_error THEN
    PERFORM streamforge.px_unreachable(shards, SQLERRM);
    RAISE;
END
$$;
COMMENT ON FUNCTION streamforge.checkpoint(text) IS
    'the state of a placed pipeline as canonical bytes, from its shard; of a sharded pipeline, one document of every shard''s checkpoint and the shard map';

CREATE OR REPLACE FUNCTION streamforge.restore(pipeline text, checkpoint bytea)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shards integer[] := streamforge.px_route(pipeline, NULL, true);
    n integer := pg_catalog.cardinality(shards);
    doc jsonb;
    parts text[];
    want jsonb;
BEGIN
    IF NOT EXISTS (SELECT FROM streamforge.sharded_pipelines p
                    WHERE p.pipeline OPERATOR(pg_catalog.=) restore.pipeline) THEN
        PERFORM streamforge.px_restore(shards[1], pipeline, checkpoint);
        RETURN;
    END IF;
    IF checkpoint IS NULL THEN
        RAISE EXCEPTION 'checkpoint must not be null' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    BEGIN
        doc := pg_catalog.convert_from(checkpoint, 'UTF8')::jsonb;
    EXCEPTION WHEN OTHERS THEN
        doc := NULL;
    END;
    IF doc IS NULL OR pg_catalog.jsonb_typeof(doc) IS DISTINCT FROM 'object'
       OR (doc OPERATOR(pg_catalog.->>) 'format') IS DISTINCT FROM 'streamforge_proxy sharded checkpoint'
       OR (doc OPERATOR(pg_catalog.->>) 'version') IS DISTINCT FROM '1'
       OR pg_catalog.jsonb_typeof(doc OPERATOR(pg_catalog.->) 'checkpoints') IS DISTINCT FROM 'array'
       OR pg_catalog.jsonb_typeof(doc OPERATOR(pg_catalog.->) 'shard_map') IS DISTINCT FROM 'object' THEN
        RAISE EXCEPTION 'not a checkpoint of a sharded pipeline'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = pg_catalog.format('Pipeline "%s" is sharded: restore() through the router takes the document that checkpoint() through the router returns.', pipeline);
    END IF;
    -- the shard map: the same shard count, and the partitions of the
    -- pipeline owned by the same shards (shard_of is a function of the
    -- name and the count, so the same count and partitions mean the same map)
    BEGIN
        SELECT ARRAY(SELECT p.partition FROM streamforge.px_partitions(ARRAY[shards[1]], pipeline) p
                      ORDER BY p.partition COLLATE "C")
          INTO parts;
    EXCEPTION WHEN internal_error THEN
        PERFORM streamforge.px_unreachable(ARRAY[shards[1]], SQLERRM);
        RAISE;
    END;
    SELECT COALESCE(pg_catalog.jsonb_object_agg(m.p, streamforge.shard_of(m.p, n)), '{}')
      INTO want FROM pg_catalog.unnest(parts) AS m(p);
    IF (doc OPERATOR(pg_catalog.->>) 'shards') IS DISTINCT FROM n::pg_catalog.text
       OR pg_catalog.jsonb_array_length(doc OPERATOR(pg_catalog.->) 'checkpoints') OPERATOR(pg_catalog.<>) n
       OR (doc OPERATOR(pg_catalog.->) 'shard_map') OPERATOR(pg_catalog.<>) want THEN
        RAISE EXCEPTION 'the checkpoint is of another shard map'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = pg_catalog.format('It holds %s shards and the partitions %s; pipeline "%s" has %s shards and the partitions %s.',
                                             doc OPERATOR(pg_catalog.->>) 'shards',
                                             (SELECT pg_catalog.array_agg(k ORDER BY k COLLATE "C")
                                                FROM pg_catalog.jsonb_object_keys(doc OPERATOR(pg_catalog.->) 'shard_map') k),
                                             pipeline, n, parts),
                  HINT = 'Restore each shard''s checkpoint on its database, or restore into a sharded pipeline of the same partitions on a cluster of the same shard count.';
    END IF;
    BEGIN
        PERFORM streamforge.px_restores(shards, pipeline,
            ARRAY(SELECT pg_catalog.decode(c.value, 'base64')
                    FROM pg_catalog.jsonb_array_elements_text(doc OPERATOR(pg_catalog.->) 'checkpoints')
                         WITH ORDINALITY AS c(value, o)
                   ORDER BY c.o));
    EXCEPTION WHEN internal_error THEN
        PERFORM streamforge.px_unreachable(shards, SQLERRM);
        RAISE;
    END;
END
$$;
COMMENT ON FUNCTION streamforge.restore(text, bytea) IS
    'replace the state of a placed pipeline with a checkpoint, on its shard; of a sharded pipeline, every shard''s from the document checkpoint() returned';

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
    -- a connection that a restarted node closed is retried once (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            SELECT CASE WHEN pg_catalog.bool_or(w.watermark IS NULL) THEN NULL
                        ELSE pg_catalog.min(w.watermark) END
              INTO result
              FROM streamforge.px_watermark(shards, pipeline) w;
            RETURN result;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(shards, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.watermark(text) IS
    'global watermark; for a sharded pipeline the lowest of the shards'' (NULL if one has none)';


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
    -- a connection that a restarted node closed is retried once (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            RETURN QUERY
                SELECT p.partition, pg_catalog.max(p.consumed_offset),
                       CASE WHEN pg_catalog.bool_or(p.progress IS NULL) THEN NULL
                            ELSE pg_catalog.min(p.progress) END,
                       pg_catalog.bool_and(p.idle)
                  FROM streamforge.px_partitions(shards, pipeline) p
                 GROUP BY p.partition
                 ORDER BY p.partition COLLATE "C";
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(shards, SQLERRM);
            RAISE;
        END;
    END LOOP;
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
    -- a connection that a restarted node closed is retried once (px_retry)
    FOR px_try IN 1 .. 2 LOOP
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
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(shards, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.stats(text) IS
    'statistics, summed over the shards (partitions: each shard has all; idle_partitions: the fewest)';

-- ------------------------------------------------------------------
-- Generated by proxy/gen.pl from proxy/api.tsv and the signatures of
-- sql/install/*.sql: do not edit here.
-- ------------------------------------------------------------------
-- fixed_interval: kind any (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_fixed_interval(name text, size interval)
RETURNS streamforge.window_def
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    RUN ON ANY;
    SELECT px_r.* FROM streamforge.fixed_interval(name, size) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_fixed_interval(text, interval) IS
    'internal: fixed_interval on any shard';

CREATE OR REPLACE FUNCTION streamforge.fixed_interval(name text, size interval)
RETURNS streamforge.window_def
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- the SQL/MED server must exist before PL/Proxy looks the cluster up
    PERFORM streamforge.shard_count();
    RETURN streamforge.px_fixed_interval($1, $2);
EXCEPTION WHEN internal_error THEN
    PERFORM streamforge.px_unreachable(ARRAY[]::integer[], SQLERRM);
    RAISE;
END
$$;
COMMENT ON FUNCTION streamforge.fixed_interval(text, interval) IS
    'a fixed (tumbling) window whose size is an interval (needs a pipeline time unit) (computed by any shard)';

-- sliding_interval: kind any (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_sliding_interval(name text, size interval, step interval)
RETURNS streamforge.window_def
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    RUN ON ANY;
    SELECT px_r.* FROM streamforge.sliding_interval(name, size, step) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_sliding_interval(text, interval, interval) IS
    'internal: sliding_interval on any shard';

CREATE OR REPLACE FUNCTION streamforge.sliding_interval(name text, size interval, step interval)
RETURNS streamforge.window_def
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- the SQL/MED server must exist before PL/Proxy looks the cluster up
    PERFORM streamforge.shard_count();
    RETURN streamforge.px_sliding_interval($1, $2, $3);
EXCEPTION WHEN internal_error THEN
    PERFORM streamforge.px_unreachable(ARRAY[]::integer[], SQLERRM);
    RAISE;
END
$$;
COMMENT ON FUNCTION streamforge.sliding_interval(text, interval, interval) IS
    'a sliding (hopping) window whose size and step are intervals (needs a pipeline time unit) (computed by any shard)';

-- session_interval: kind any (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_session_interval(name text, gap interval)
RETURNS streamforge.window_def
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    RUN ON ANY;
    SELECT px_r.* FROM streamforge.session_interval(name, gap) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_session_interval(text, interval) IS
    'internal: session_interval on any shard';

CREATE OR REPLACE FUNCTION streamforge.session_interval(name text, gap interval)
RETURNS streamforge.window_def
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- the SQL/MED server must exist before PL/Proxy looks the cluster up
    PERFORM streamforge.shard_count();
    RETURN streamforge.px_session_interval($1, $2);
EXCEPTION WHEN internal_error THEN
    PERFORM streamforge.px_unreachable(ARRAY[]::integer[], SQLERRM);
    RAISE;
END
$$;
COMMENT ON FUNCTION streamforge.session_interval(text, interval) IS
    'a session window whose gap is an interval (needs a pipeline time unit) (computed by any shard)';

-- ingest: kind partition (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_ingest(px_shards integer[], pipeline text, partition text, source_offset bigint, event_id text, key text, event_time bigint, value bigint)
RETURNS SETOF streamforge.change
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT px_r.*, (px_shards)[1] AS shard FROM streamforge.ingest(pipeline, partition, source_offset, event_id, key, event_time, value) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_ingest(integer[], text, text, bigint, text, text, bigint, bigint) IS
    'internal: ingest on the given shards';

CREATE OR REPLACE FUNCTION streamforge.ingest(pipeline text, partition text, source_offset bigint, event_id text, key text, event_time bigint, value bigint)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, $2, false);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            RETURN QUERY SELECT * FROM streamforge.px_ingest(px_targets, $1, $2, $3, $4, $5, $6, $7) px_r ORDER BY px_r.shard, px_r.seq;
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.ingest(text, text, bigint, text, text, bigint, bigint) IS
    'ingest (routed: partition)';

-- ingest_ts: kind partition (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_ingest_ts(px_shards integer[], pipeline text, partition text, source_offset bigint, event_id text, key text, event_time timestamptz, value bigint)
RETURNS SETOF streamforge.change
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT px_r.*, (px_shards)[1] AS shard FROM streamforge.ingest_ts(pipeline, partition, source_offset, event_id, key, event_time, value) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_ingest_ts(integer[], text, text, bigint, text, text, timestamptz, bigint) IS
    'internal: ingest_ts on the given shards';

CREATE OR REPLACE FUNCTION streamforge.ingest_ts(pipeline text, partition text, source_offset bigint, event_id text, key text, event_time timestamptz, value bigint)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, $2, false);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            RETURN QUERY SELECT * FROM streamforge.px_ingest_ts(px_targets, $1, $2, $3, $4, $5, $6, $7) px_r ORDER BY px_r.shard, px_r.seq;
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.ingest_ts(text, text, bigint, text, text, timestamptz, bigint) IS
    'delivers one event whose time is a timestamp (the pipeline needs a time unit) (routed: partition)';

-- ingest_count: kind partition (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_ingest_count(px_shards integer[], pipeline text, partition text, source_offset bigint, event_id text, key text, event_time bigint, value bigint)
RETURNS TABLE (px_shard integer, px_value integer)
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS px_shard, streamforge.ingest_count(pipeline, partition, source_offset, event_id, key, event_time, value) AS px_value;
$$;
COMMENT ON FUNCTION streamforge.px_ingest_count(integer[], text, text, bigint, text, text, bigint, bigint) IS
    'internal: ingest_count on the given shards';

CREATE OR REPLACE FUNCTION streamforge.ingest_count(pipeline text, partition text, source_offset bigint, event_id text, key text, event_time bigint, value bigint)
RETURNS integer
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, $2, false);
    px_v integer;
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            SELECT (pg_catalog.array_agg(px_r.px_value))[1] INTO px_v FROM streamforge.px_ingest_count(px_targets, $1, $2, $3, $4, $5, $6, $7) px_r;
            RETURN px_v;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.ingest_count(text, text, bigint, text, text, bigint, bigint) IS
    'deliver one event like ingest; returns the number of changes it caused (routed: partition)';

-- append: kind partition (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_append(px_shards integer[], pipeline text, partition text, event_id text, key text, event_time bigint, value bigint)
RETURNS SETOF streamforge.change
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT px_r.*, (px_shards)[1] AS shard FROM streamforge.append(pipeline, partition, event_id, key, event_time, value) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_append(integer[], text, text, text, text, bigint, bigint) IS
    'internal: append on the given shards';

CREATE OR REPLACE FUNCTION streamforge.append(pipeline text, partition text, event_id text, key text, event_time bigint, value bigint)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, $2, false);
BEGIN
    BEGIN
        RETURN QUERY SELECT * FROM streamforge.px_append(px_targets, $1, $2, $3, $4, $5, $6) px_r ORDER BY px_r.shard, px_r.seq;
        RETURN;
    EXCEPTION WHEN internal_error THEN
        PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
        RAISE;
    END;
END
$$;
COMMENT ON FUNCTION streamforge.append(text, text, text, text, bigint, bigint) IS
    'delivers one event at the partition''s next offset, assigned under the pipeline''s lock (routed: partition)';

-- append_ts: kind partition (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_append_ts(px_shards integer[], pipeline text, partition text, event_id text, key text, event_time timestamptz, value bigint)
RETURNS SETOF streamforge.change
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT px_r.*, (px_shards)[1] AS shard FROM streamforge.append_ts(pipeline, partition, event_id, key, event_time, value) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_append_ts(integer[], text, text, text, text, timestamptz, bigint) IS
    'internal: append_ts on the given shards';

CREATE OR REPLACE FUNCTION streamforge.append_ts(pipeline text, partition text, event_id text, key text, event_time timestamptz, value bigint)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, $2, false);
BEGIN
    BEGIN
        RETURN QUERY SELECT * FROM streamforge.px_append_ts(px_targets, $1, $2, $3, $4, $5, $6) px_r ORDER BY px_r.shard, px_r.seq;
        RETURN;
    EXCEPTION WHEN internal_error THEN
        PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
        RAISE;
    END;
END
$$;
COMMENT ON FUNCTION streamforge.append_ts(text, text, text, text, timestamptz, bigint) IS
    'delivers one event whose time is a timestamp at the partition''s next offset (routed: partition)';

-- ingest_batch: kind split (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_ingest_batch(px_shards integer[], pipeline text, px_batches text[])
RETURNS SETOF streamforge.change
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards, px_batches;
    RUN ON px_shards;
    SELECT px_r.*, (px_shards)[1] AS shard FROM streamforge.ingest_batch(pipeline, ((px_batches)[1])::streamforge.delivery[]) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_ingest_batch(integer[], text, text[]) IS
    'internal: ingest_batch on the given shards';

CREATE OR REPLACE FUNCTION streamforge.ingest_batch(pipeline text, deliveries streamforge.delivery[])
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_all integer[] := streamforge.px_route($1, NULL, true);
    px_targets integer[] := px_all;
    px_batches text[];
    px_firsts bigint[];
    px_n integer;
    px_i integer;
    px_o bigint;
    px_state text;
    px_msg text;
    px_detail text;
    px_hint text;
    px_s text;
    px_m text;
    px_d text;
    px_h text;
    px_failed integer;
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            -- One target (a placed pipeline, a sharded one on one shard), or a
            -- batch that only the data node can judge: sent whole.
            IF pg_catalog.cardinality(px_all) OPERATOR(pg_catalog.=) 1 THEN
                px_targets := px_all[1:1];
                px_batches := ARRAY[$2::pg_catalog.text];
            ELSIF $2 IS NULL THEN
                RAISE EXCEPTION 'deliveries must not be null' USING ERRCODE = 'null_value_not_allowed';
            ELSE
                -- split by the shard of each element's partition, array order kept
                -- within each shard; an element without a partition goes to shard
                -- 0, which refuses it with streamforge's error
                px_n := pg_catalog.cardinality(px_all);
                SELECT pg_catalog.array_agg(px_g.s ORDER BY px_g.s),
                       pg_catalog.array_agg(px_g.b ORDER BY px_g.s),
                       pg_catalog.array_agg(px_g.f ORDER BY px_g.s)
                  INTO px_targets, px_batches, px_firsts
                  FROM (SELECT COALESCE(streamforge.shard_of(px_e.p, px_n), 0) AS s,
                               pg_catalog.array_agg(px_e.e ORDER BY px_e.o)::pg_catalog.text AS b, pg_catalog.min(px_e.o) AS f
                          FROM (SELECT px_d.e, px_d.o, (px_d.e).partition AS p
                              FROM (SELECT pg_catalog.unnest($2) AS e,
                                           pg_catalog.generate_series(1, pg_catalog.cardinality($2)) AS o) px_d) px_e
                         GROUP BY 1) px_g;
                IF px_targets IS NULL THEN
                    RETURN;
                END IF;
            END IF;
            RETURN QUERY SELECT * FROM streamforge.px_ingest_batch(px_targets, $1, px_batches) px_r ORDER BY px_r.shard, px_r.seq;
            RETURN;
        EXCEPTION
          WHEN query_canceled THEN
            RAISE;
          WHEN OTHERS THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            IF pg_catalog.cardinality(px_targets) OPERATOR(pg_catalog.>) 1
               AND pg_catalog.cardinality(px_batches) OPERATOR(pg_catalog.=) pg_catalog.cardinality(px_targets) THEN
                FOR px_i IN 1 .. pg_catalog.cardinality(px_targets) LOOP
                    BEGIN
                        RETURN QUERY SELECT * FROM streamforge.px_ingest_batch(ARRAY[px_targets[px_i]], $1, ARRAY[px_batches[px_i]]) px_r ORDER BY px_r.shard, px_r.seq;
                    EXCEPTION
                        WHEN query_canceled THEN
                            RAISE;
                        WHEN OTHERS THEN
                            GET STACKED DIAGNOSTICS px_s = RETURNED_SQLSTATE, px_m = MESSAGE_TEXT,
                                px_d = PG_EXCEPTION_DETAIL, px_h = PG_EXCEPTION_HINT;
                            IF px_o IS NULL OR px_firsts[px_i] OPERATOR(pg_catalog.<) px_o THEN
                                px_o := px_firsts[px_i];
                                px_failed := px_targets[px_i];
                                px_state := px_s;
                                px_msg := px_m;
                                px_detail := px_d;
                                px_hint := px_h;
                            END IF;
                    END;
                END LOOP;
                IF px_state IS NULL THEN
                    RETURN;     -- every part went through alone
                END IF;
                IF px_state OPERATOR(pg_catalog.=) 'XX000' THEN
                    PERFORM streamforge.px_unreachable(ARRAY[px_failed], px_msg);
                END IF;
                RAISE EXCEPTION USING ERRCODE = px_state, MESSAGE = px_msg,
                    DETAIL = COALESCE(px_detail, ''), HINT = COALESCE(px_hint, '');
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.ingest_batch(text, streamforge.delivery[]) IS
    'deliver events in array order, all or none; returns their changes (routed: split)';

-- ingest_measures: kind partition (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_ingest_measures(px_shards integer[], pipeline text, partition text, source_offset bigint, event_id text, key text, event_time bigint, measures bigint[])
RETURNS SETOF streamforge.measures_change
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT px_r.* FROM streamforge.ingest_measures(pipeline, partition, source_offset, event_id, key, event_time, measures) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_ingest_measures(integer[], text, text, bigint, text, text, bigint, bigint[]) IS
    'internal: ingest_measures on the given shards';

CREATE OR REPLACE FUNCTION streamforge.ingest_measures(pipeline text, partition text, source_offset bigint, event_id text, key text, event_time bigint, measures bigint[])
RETURNS SETOF streamforge.measures_change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, $2, false);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            RETURN QUERY SELECT * FROM streamforge.px_ingest_measures(px_targets, $1, $2, $3, $4, $5, $6, $7) px_r ORDER BY px_r.window_name COLLATE "C", px_r.key COLLATE "C", px_r.window_start, px_r.window_end;
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.ingest_measures(text, text, bigint, text, text, bigint, bigint[]) IS
    'delivers one event of a measures pipeline (one bigint per measure) at a source offset (routed: partition)';

-- ingest_measures_batch: kind split (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_ingest_measures_batch(px_shards integer[], pipeline text, px_batches text[])
RETURNS SETOF streamforge.measures_change
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards, px_batches;
    RUN ON px_shards;
    SELECT px_r.* FROM streamforge.ingest_measures_batch(pipeline, ((px_batches)[1])::streamforge.measures_delivery[]) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_ingest_measures_batch(integer[], text, text[]) IS
    'internal: ingest_measures_batch on the given shards';

CREATE OR REPLACE FUNCTION streamforge.ingest_measures_batch(pipeline text, deliveries streamforge.measures_delivery[])
RETURNS SETOF streamforge.measures_change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_all integer[] := streamforge.px_route($1, NULL, true);
    px_targets integer[] := px_all;
    px_batches text[];
    px_firsts bigint[];
    px_n integer;
    px_i integer;
    px_o bigint;
    px_state text;
    px_msg text;
    px_detail text;
    px_hint text;
    px_s text;
    px_m text;
    px_d text;
    px_h text;
    px_failed integer;
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            -- One target (a placed pipeline, a sharded one on one shard), or a
            -- batch that only the data node can judge: sent whole.
            IF pg_catalog.cardinality(px_all) OPERATOR(pg_catalog.=) 1 THEN
                px_targets := px_all[1:1];
                px_batches := ARRAY[$2::pg_catalog.text];
            ELSIF $2 IS NULL THEN
                RAISE EXCEPTION 'deliveries must not be null' USING ERRCODE = 'null_value_not_allowed';
            ELSE
                -- split by the shard of each element's partition, array order kept
                -- within each shard; an element without a partition goes to shard
                -- 0, which refuses it with streamforge's error
                px_n := pg_catalog.cardinality(px_all);
                SELECT pg_catalog.array_agg(px_g.s ORDER BY px_g.s),
                       pg_catalog.array_agg(px_g.b ORDER BY px_g.s),
                       pg_catalog.array_agg(px_g.f ORDER BY px_g.s)
                  INTO px_targets, px_batches, px_firsts
                  FROM (SELECT COALESCE(streamforge.shard_of(px_e.p, px_n), 0) AS s,
                               pg_catalog.array_agg(px_e.e ORDER BY px_e.o)::pg_catalog.text AS b, pg_catalog.min(px_e.o) AS f
                          FROM (SELECT px_d.e, px_d.o, (px_d.e).partition AS p
                              FROM (SELECT pg_catalog.unnest($2) AS e,
                                           pg_catalog.generate_series(1, pg_catalog.cardinality($2)) AS o) px_d) px_e
                         GROUP BY 1) px_g;
                IF px_targets IS NULL THEN
                    RETURN;
                END IF;
            END IF;
            RETURN QUERY SELECT * FROM streamforge.px_ingest_measures_batch(px_targets, $1, px_batches) px_r ORDER BY px_r.window_name COLLATE "C", px_r.key COLLATE "C", px_r.window_start, px_r.window_end;
            RETURN;
        EXCEPTION
          WHEN query_canceled THEN
            RAISE;
          WHEN OTHERS THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            IF pg_catalog.cardinality(px_targets) OPERATOR(pg_catalog.>) 1
               AND pg_catalog.cardinality(px_batches) OPERATOR(pg_catalog.=) pg_catalog.cardinality(px_targets) THEN
                FOR px_i IN 1 .. pg_catalog.cardinality(px_targets) LOOP
                    BEGIN
                        RETURN QUERY SELECT * FROM streamforge.px_ingest_measures_batch(ARRAY[px_targets[px_i]], $1, ARRAY[px_batches[px_i]]) px_r ORDER BY px_r.window_name COLLATE "C", px_r.key COLLATE "C", px_r.window_start, px_r.window_end;
                    EXCEPTION
                        WHEN query_canceled THEN
                            RAISE;
                        WHEN OTHERS THEN
                            GET STACKED DIAGNOSTICS px_s = RETURNED_SQLSTATE, px_m = MESSAGE_TEXT,
                                px_d = PG_EXCEPTION_DETAIL, px_h = PG_EXCEPTION_HINT;
                            IF px_o IS NULL OR px_firsts[px_i] OPERATOR(pg_catalog.<) px_o THEN
                                px_o := px_firsts[px_i];
                                px_failed := px_targets[px_i];
                                px_state := px_s;
                                px_msg := px_m;
                                px_detail := px_d;
                                px_hint := px_h;
                            END IF;
                    END;
                END LOOP;
                IF px_state IS NULL THEN
                    RETURN;     -- every part went through alone
                END IF;
                IF px_state OPERATOR(pg_catalog.=) 'XX000' THEN
                    PERFORM streamforge.px_unreachable(ARRAY[px_failed], px_msg);
                END IF;
                RAISE EXCEPTION USING ERRCODE = px_state, MESSAGE = px_msg,
                    DETAIL = COALESCE(px_detail, ''), HINT = COALESCE(px_hint, '');
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.ingest_measures_batch(text, streamforge.measures_delivery[]) IS
    'delivers the events of a measures pipeline in array order, all or none (routed: split)';

-- live_aggregates: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_live_aggregates(px_shards integer[], pipeline text)
RETURNS SETOF streamforge.measures_result
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT px_r.* FROM streamforge.live_aggregates(pipeline) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_live_aggregates(integer[], text) IS
    'internal: live_aggregates on the given shards';

CREATE OR REPLACE FUNCTION streamforge.live_aggregates(pipeline text)
RETURNS SETOF streamforge.measures_result
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            RETURN QUERY SELECT * FROM streamforge.px_live_aggregates(px_targets, $1) px_r ORDER BY px_r.window_name COLLATE "C", px_r.key COLLATE "C", px_r.window_start, px_r.window_end;
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.live_aggregates(text) IS
    'every live bucket of a measures pipeline with its declared aggregates, like live() (routed: pipeline)';

-- visible_aggregates: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_visible_aggregates(px_shards integer[], pipeline text)
RETURNS SETOF streamforge.measures_result
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT px_r.* FROM streamforge.visible_aggregates(pipeline) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_visible_aggregates(integer[], text) IS
    'internal: visible_aggregates on the given shards';

CREATE OR REPLACE FUNCTION streamforge.visible_aggregates(pipeline text)
RETURNS SETOF streamforge.measures_result
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            RETURN QUERY SELECT * FROM streamforge.px_visible_aggregates(px_targets, $1) px_r ORDER BY px_r.window_name COLLATE "C", px_r.key COLLATE "C", px_r.window_start, px_r.window_end;
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.visible_aggregates(text) IS
    'the visible rows of a measures pipeline with its declared aggregates, like visible() (routed: pipeline)';

-- aggregate_columns: kind one (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_aggregate_columns(px_shards integer[], pipeline text)
RETURNS TABLE (ordinality integer, name text, type regtype, func text, measure text)
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT px_r.* FROM streamforge.aggregate_columns(pipeline) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_aggregate_columns(integer[], text) IS
    'internal: aggregate_columns on the given shards';

CREATE OR REPLACE FUNCTION streamforge.aggregate_columns(pipeline text)
RETURNS TABLE (ordinality integer, name text, type regtype, func text, measure text)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := ARRAY[streamforge.px_one_shard($1, 'aggregate_columns')];
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            RETURN QUERY SELECT * FROM streamforge.px_aggregate_columns(px_targets, $1) px_r;
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.aggregate_columns(text) IS
    'the declared aggregates of a pipeline in declaration order, with their SQL types (the members of the aggregates jsonb) (routed: one)';

-- append_batch: kind split (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_append_batch(px_shards integer[], pipeline text, px_batches text[])
RETURNS SETOF streamforge.change
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards, px_batches;
    RUN ON px_shards;
    SELECT px_r.*, (px_shards)[1] AS shard FROM streamforge.append_batch(pipeline, ((px_batches)[1])::streamforge.event[]) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_append_batch(integer[], text, text[]) IS
    'internal: append_batch on the given shards';

CREATE OR REPLACE FUNCTION streamforge.append_batch(pipeline text, events streamforge.event[])
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_all integer[] := streamforge.px_route($1, NULL, true);
    px_targets integer[] := px_all;
    px_batches text[];
    px_firsts bigint[];
    px_n integer;
BEGIN
    BEGIN
        -- One target (a placed pipeline, a sharded one on one shard), or a
        -- batch that only the data node can judge: sent whole.
        IF pg_catalog.cardinality(px_all) OPERATOR(pg_catalog.=) 1 THEN
            px_targets := px_all[1:1];
            px_batches := ARRAY[$2::pg_catalog.text];
        ELSIF $2 IS NULL THEN
            RAISE EXCEPTION 'events must not be null' USING ERRCODE = 'null_value_not_allowed';
        ELSE
            -- split by the shard of each element's partition, array order kept
            -- within each shard; an element without a partition goes to shard
            -- 0, which refuses it with streamforge's error
            px_n := pg_catalog.cardinality(px_all);
            SELECT pg_catalog.array_agg(px_g.s ORDER BY px_g.s),
                   pg_catalog.array_agg(px_g.b ORDER BY px_g.s),
                   pg_catalog.array_agg(px_g.f ORDER BY px_g.s)
              INTO px_targets, px_batches, px_firsts
              FROM (SELECT COALESCE(streamforge.shard_of(px_e.p, px_n), 0) AS s,
                           pg_catalog.array_agg(px_e.e ORDER BY px_e.o)::pg_catalog.text AS b, pg_catalog.min(px_e.o) AS f
                      FROM (SELECT px_d.e, px_d.o, (px_d.e).partition AS p
                          FROM (SELECT pg_catalog.unnest($2) AS e,
                                       pg_catalog.generate_series(1, pg_catalog.cardinality($2)) AS o) px_d) px_e
                     GROUP BY 1) px_g;
            IF px_targets IS NULL THEN
                RETURN;
            END IF;
        END IF;
        RETURN QUERY SELECT * FROM streamforge.px_append_batch(px_targets, $1, px_batches) px_r ORDER BY px_r.shard, px_r.seq;
        RETURN;
    EXCEPTION WHEN internal_error THEN
        PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
        RAISE;
    END;
END
$$;
COMMENT ON FUNCTION streamforge.append_batch(text, streamforge.event[]) IS
    'delivers events in array order at their partitions'' next offsets, all or none (routed: split)';

-- append_measures_batch: kind split (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_append_measures_batch(px_shards integer[], pipeline text, px_batches text[])
RETURNS SETOF streamforge.measures_change
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards, px_batches;
    RUN ON px_shards;
    SELECT px_r.* FROM streamforge.append_measures_batch(pipeline, ((px_batches)[1])::streamforge.measures_delivery[]) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_append_measures_batch(integer[], text, text[]) IS
    'internal: append_measures_batch on the given shards';

CREATE OR REPLACE FUNCTION streamforge.append_measures_batch(pipeline text, deliveries streamforge.measures_delivery[])
RETURNS SETOF streamforge.measures_change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_all integer[] := streamforge.px_route($1, NULL, true);
    px_targets integer[] := px_all;
    px_batches text[];
    px_firsts bigint[];
    px_n integer;
BEGIN
    BEGIN
        -- One target (a placed pipeline, a sharded one on one shard), or a
        -- batch that only the data node can judge: sent whole.
        IF pg_catalog.cardinality(px_all) OPERATOR(pg_catalog.=) 1 THEN
            px_targets := px_all[1:1];
            px_batches := ARRAY[$2::pg_catalog.text];
        ELSIF $2 IS NULL THEN
            RAISE EXCEPTION 'deliveries must not be null' USING ERRCODE = 'null_value_not_allowed';
        ELSE
            -- split by the shard of each element's partition, array order kept
            -- within each shard; an element without a partition goes to shard
            -- 0, which refuses it with streamforge's error
            px_n := pg_catalog.cardinality(px_all);
            SELECT pg_catalog.array_agg(px_g.s ORDER BY px_g.s),
                   pg_catalog.array_agg(px_g.b ORDER BY px_g.s),
                   pg_catalog.array_agg(px_g.f ORDER BY px_g.s)
              INTO px_targets, px_batches, px_firsts
              FROM (SELECT COALESCE(streamforge.shard_of(px_e.p, px_n), 0) AS s,
                           pg_catalog.array_agg(px_e.e ORDER BY px_e.o)::pg_catalog.text AS b, pg_catalog.min(px_e.o) AS f
                      FROM (SELECT px_d.e, px_d.o, (px_d.e).partition AS p
                          FROM (SELECT pg_catalog.unnest($2) AS e,
                                       pg_catalog.generate_series(1, pg_catalog.cardinality($2)) AS o) px_d) px_e
                     GROUP BY 1) px_g;
            IF px_targets IS NULL THEN
                RETURN;
            END IF;
        END IF;
        RETURN QUERY SELECT * FROM streamforge.px_append_measures_batch(px_targets, $1, px_batches) px_r ORDER BY px_r.window_name COLLATE "C", px_r.key COLLATE "C", px_r.window_start, px_r.window_end;
        RETURN;
    EXCEPTION WHEN internal_error THEN
        PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
        RAISE;
    END;
END
$$;
COMMENT ON FUNCTION streamforge.append_measures_batch(text, streamforge.measures_delivery[]) IS
    'delivers the events of a measures pipeline at their partitions'' next offsets, in array order, all or none (routed: split)';

-- ingest_json: kind split (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_ingest_json(px_shards integer[], pipeline text, px_batches text[])
RETURNS SETOF streamforge.change
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards, px_batches;
    RUN ON px_shards;
    SELECT px_r.*, (px_shards)[1] AS shard FROM streamforge.ingest_json(pipeline, ((px_batches)[1])::jsonb) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_ingest_json(integer[], text, text[]) IS
    'internal: ingest_json on the given shards';

CREATE OR REPLACE FUNCTION streamforge.ingest_json(pipeline text, deliveries jsonb)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_all integer[] := streamforge.px_route($1, NULL, true);
    px_targets integer[] := px_all;
    px_batches text[];
    px_firsts bigint[];
    px_n integer;
BEGIN
    BEGIN
        -- One target (a placed pipeline, a sharded one on one shard), or a
        -- batch that only the data node can judge: sent whole.
        IF pg_catalog.cardinality(px_all) OPERATOR(pg_catalog.=) 1
           OR pg_catalog.jsonb_typeof($2) IS DISTINCT FROM 'array' THEN
            px_targets := px_all[1:1];
            px_batches := ARRAY[$2::pg_catalog.text];
        ELSIF $2 IS NULL THEN
            RAISE EXCEPTION 'deliveries must not be null' USING ERRCODE = 'null_value_not_allowed';
        ELSE
            -- split by the shard of each element's partition, array order kept
            -- within each shard; an element without a partition goes to shard
            -- 0, which refuses it with streamforge's error
            px_n := pg_catalog.cardinality(px_all);
            SELECT pg_catalog.array_agg(px_g.s ORDER BY px_g.s),
                   pg_catalog.array_agg(px_g.b ORDER BY px_g.s),
                   pg_catalog.array_agg(px_g.f ORDER BY px_g.s)
              INTO px_targets, px_batches, px_firsts
              FROM (SELECT COALESCE(streamforge.shard_of(px_e.p, px_n), 0) AS s,
                           pg_catalog.jsonb_agg(px_e.e ORDER BY px_e.o)::pg_catalog.text AS b, pg_catalog.min(px_e.o) AS f
                      FROM (SELECT px_d.e, px_d.o, px_d.e OPERATOR(pg_catalog.->>) 'partition' AS p
                          FROM pg_catalog.jsonb_array_elements($2) WITH ORDINALITY AS px_d(e, o)) px_e
                     GROUP BY 1) px_g;
            IF px_targets IS NULL THEN
                RETURN;
            END IF;
        END IF;
        RETURN QUERY SELECT * FROM streamforge.px_ingest_json(px_targets, $1, px_batches) px_r ORDER BY px_r.shard, px_r.seq;
        RETURN;
    EXCEPTION WHEN internal_error THEN
        PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
        RAISE;
    END;
END
$$;
COMMENT ON FUNCTION streamforge.ingest_json(text, jsonb) IS
    'delivers a JSON array of deliveries (or of events without offsets), all or none (routed: split)';

-- advance: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_advance(px_shards integer[], pipeline text, partition text, progress bigint)
RETURNS SETOF streamforge.change
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT px_r.*, (px_shards)[1] AS shard FROM streamforge.advance(pipeline, partition, progress) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_advance(integer[], text, text, bigint) IS
    'internal: advance on the given shards';

CREATE OR REPLACE FUNCTION streamforge.advance(pipeline text, partition text, progress bigint)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            RETURN QUERY SELECT * FROM streamforge.px_advance(px_targets, $1, $2, $3) px_r ORDER BY px_r.shard, px_r.seq;
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.advance(text, text, bigint) IS
    'report a partition''s event-time progress; returns the changes it caused (routed: pipeline)';

-- advance_ts: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_advance_ts(px_shards integer[], pipeline text, partition text, progress timestamptz)
RETURNS SETOF streamforge.change
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT px_r.*, (px_shards)[1] AS shard FROM streamforge.advance_ts(pipeline, partition, progress) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_advance_ts(integer[], text, text, timestamptz) IS
    'internal: advance_ts on the given shards';

CREATE OR REPLACE FUNCTION streamforge.advance_ts(pipeline text, partition text, progress timestamptz)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            RETURN QUERY SELECT * FROM streamforge.px_advance_ts(px_targets, $1, $2, $3) px_r ORDER BY px_r.shard, px_r.seq;
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.advance_ts(text, text, timestamptz) IS
    'reports a partition''s progress as a timestamp (the pipeline needs a time unit) (routed: pipeline)';

-- mark_idle: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_mark_idle(px_shards integer[], pipeline text, partition text)
RETURNS SETOF streamforge.change
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT px_r.*, (px_shards)[1] AS shard FROM streamforge.mark_idle(pipeline, partition) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_mark_idle(integer[], text, text) IS
    'internal: mark_idle on the given shards';

CREATE OR REPLACE FUNCTION streamforge.mark_idle(pipeline text, partition text)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            RETURN QUERY SELECT * FROM streamforge.px_mark_idle(px_targets, $1, $2) px_r ORDER BY px_r.shard, px_r.seq;
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.mark_idle(text, text) IS
    'take a partition out of the watermark until it reports again (routed: pipeline)';

-- add_partition: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_add_partition(px_shards integer[], pipeline text, partition text)
RETURNS SETOF streamforge.change
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT px_r.*, (px_shards)[1] AS shard FROM streamforge.add_partition(pipeline, partition) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_add_partition(integer[], text, text) IS
    'internal: add_partition on the given shards';

CREATE OR REPLACE FUNCTION streamforge.add_partition(pipeline text, partition text)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            RETURN QUERY SELECT * FROM streamforge.px_add_partition(px_targets, $1, $2) px_r ORDER BY px_r.shard, px_r.seq;
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.add_partition(text, text) IS
    'add a partition to a running pipeline; it starts idle (admin) (routed: pipeline)';

-- add_window: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_add_window(px_shards integer[], pipeline text, definition streamforge.window_def)
RETURNS SETOF streamforge.change
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT px_r.*, (px_shards)[1] AS shard FROM streamforge.add_window(pipeline, definition) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_add_window(integer[], text, streamforge.window_def) IS
    'internal: add_window on the given shards';

CREATE OR REPLACE FUNCTION streamforge.add_window(pipeline text, definition streamforge.window_def)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            RETURN QUERY SELECT * FROM streamforge.px_add_window(px_targets, $1, $2) px_r ORDER BY px_r.shard, px_r.seq;
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.add_window(text, streamforge.window_def) IS
    'add a window to a running pipeline; it sees later events only (admin) (routed: pipeline)';

-- drop_window: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_drop_window(px_shards integer[], pipeline text, window_name text)
RETURNS SETOF streamforge.change
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT px_r.*, (px_shards)[1] AS shard FROM streamforge.drop_window(pipeline, window_name) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_drop_window(integer[], text, text) IS
    'internal: drop_window on the given shards';

CREATE OR REPLACE FUNCTION streamforge.drop_window(pipeline text, window_name text)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            RETURN QUERY SELECT * FROM streamforge.px_drop_window(px_targets, $1, $2) px_r ORDER BY px_r.shard, px_r.seq;
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.drop_window(text, text) IS
    'drop a window of a running pipeline, retracting its visible rows (admin) (routed: pipeline)';

-- set_lateness: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_set_lateness(px_shards integer[], pipeline text, lateness bigint)
RETURNS SETOF streamforge.change
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT px_r.*, (px_shards)[1] AS shard FROM streamforge.set_lateness(pipeline, lateness) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_set_lateness(integer[], text, bigint) IS
    'internal: set_lateness on the given shards';

CREATE OR REPLACE FUNCTION streamforge.set_lateness(pipeline text, lateness bigint)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            RETURN QUERY SELECT * FROM streamforge.px_set_lateness(px_targets, $1, $2) px_r ORDER BY px_r.shard, px_r.seq;
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.set_lateness(text, bigint) IS
    'change the allowed lateness of a running pipeline (admin) (routed: pipeline)';

-- set_retention: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_set_retention(px_shards integer[], pipeline text, retention bigint)
RETURNS SETOF streamforge.change
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT px_r.*, (px_shards)[1] AS shard FROM streamforge.set_retention(pipeline, retention) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_set_retention(integer[], text, bigint) IS
    'internal: set_retention on the given shards';

CREATE OR REPLACE FUNCTION streamforge.set_retention(pipeline text, retention bigint)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            RETURN QUERY SELECT * FROM streamforge.px_set_retention(px_targets, $1, $2) px_r ORDER BY px_r.shard, px_r.seq;
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.set_retention(text, bigint) IS
    'change the retention of a running pipeline, NULL: keep everything (admin) (routed: pipeline)';

-- set_emit: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_set_emit(px_shards integer[], pipeline text, emit text)
RETURNS SETOF streamforge.change
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT px_r.*, (px_shards)[1] AS shard FROM streamforge.set_emit(pipeline, emit) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_set_emit(integer[], text, text) IS
    'internal: set_emit on the given shards';

CREATE OR REPLACE FUNCTION streamforge.set_emit(pipeline text, emit text)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            RETURN QUERY SELECT * FROM streamforge.px_set_emit(px_targets, $1, $2) px_r ORDER BY px_r.shard, px_r.seq;
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.set_emit(text, text) IS
    'change the pipeline''s emit mode (update, update+final, final); returns the changes it causes (admin) (routed: pipeline)';

-- emit_mode: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_emit_mode(px_shards integer[], pipeline text)
RETURNS TABLE (px_shard integer, px_value text)
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS px_shard, streamforge.emit_mode(pipeline) AS px_value;
$$;
COMMENT ON FUNCTION streamforge.px_emit_mode(integer[], text) IS
    'internal: emit_mode on the given shards';

CREATE OR REPLACE FUNCTION streamforge.emit_mode(pipeline text)
RETURNS text
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
    px_v text;
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            SELECT (pg_catalog.array_agg(px_r.px_value ORDER BY px_r.px_shard))[1] INTO px_v FROM streamforge.px_emit_mode(px_targets, $1) px_r;
            RETURN px_v;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.emit_mode(text) IS
    'the pipeline''s emit mode: update, update+final or final (read) (routed: pipeline)';

-- set_out_of_orderness: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_set_out_of_orderness(px_shards integer[], pipeline text, out_of_orderness bigint)
RETURNS SETOF integer
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS px_set_out_of_orderness FROM streamforge.set_out_of_orderness(pipeline, out_of_orderness) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_set_out_of_orderness(integer[], text, bigint) IS
    'internal: set_out_of_orderness on the given shards';

CREATE OR REPLACE FUNCTION streamforge.set_out_of_orderness(pipeline text, out_of_orderness bigint)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            PERFORM streamforge.px_set_out_of_orderness(px_targets, $1, $2);
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.set_out_of_orderness(text, bigint) IS
    'sets the built-in progress rule: each accepted event reports event_time - out_of_orderness (NULL: off) (routed: pipeline)';

-- out_of_orderness: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_out_of_orderness(px_shards integer[], pipeline text)
RETURNS TABLE (px_shard integer, px_value bigint)
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS px_shard, streamforge.out_of_orderness(pipeline) AS px_value;
$$;
COMMENT ON FUNCTION streamforge.px_out_of_orderness(integer[], text) IS
    'internal: out_of_orderness on the given shards';

CREATE OR REPLACE FUNCTION streamforge.out_of_orderness(pipeline text)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
    px_v bigint;
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            SELECT (pg_catalog.array_agg(px_r.px_value ORDER BY px_r.px_shard))[1] INTO px_v FROM streamforge.px_out_of_orderness(px_targets, $1) px_r;
            RETURN px_v;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.out_of_orderness(text) IS
    'the built-in progress rule of a pipeline, in its units (NULL: none) (routed: pipeline)';

-- set_idle_timeout: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_set_idle_timeout(px_shards integer[], pipeline text, idle_timeout interval)
RETURNS SETOF integer
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS px_set_idle_timeout FROM streamforge.set_idle_timeout(pipeline, idle_timeout) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_set_idle_timeout(integer[], text, interval) IS
    'internal: set_idle_timeout on the given shards';

CREATE OR REPLACE FUNCTION streamforge.set_idle_timeout(pipeline text, idle_timeout interval)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            PERFORM streamforge.px_set_idle_timeout(px_targets, $1, $2);
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.set_idle_timeout(text, interval) IS
    'marks a partition idle after idle_timeout without a delivery or a report (NULL: never) (routed: pipeline)';

-- tick: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_tick(px_shards integer[], pipeline text)
RETURNS SETOF streamforge.change
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT px_r.*, (px_shards)[1] AS shard FROM streamforge.tick(pipeline) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_tick(integer[], text) IS
    'internal: tick on the given shards';

CREATE OR REPLACE FUNCTION streamforge.tick(pipeline text)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            RETURN QUERY SELECT * FROM streamforge.px_tick(px_targets, $1) px_r ORDER BY px_r.shard, px_r.seq;
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.tick(text) IS
    'marks idle the partitions whose idle_timeout has passed; returns the changes (routed: pipeline)';

-- compact: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_compact(px_shards integer[], pipeline text, min_journal_bytes bigint)
RETURNS TABLE (px_shard integer, px_value boolean)
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS px_shard, streamforge.compact(pipeline, min_journal_bytes) AS px_value;
$$;
COMMENT ON FUNCTION streamforge.px_compact(integer[], text, bigint) IS
    'internal: compact on the given shards';

CREATE OR REPLACE FUNCTION streamforge.compact(pipeline text, min_journal_bytes bigint DEFAULT '-1'::pg_catalog.int8)
RETURNS boolean
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
    px_v boolean;
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            SELECT pg_catalog.bool_and(px_r.px_value) INTO px_v FROM streamforge.px_compact(px_targets, $1, $2) px_r;
            RETURN px_v;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.compact(text, bigint) IS
    'stores the state as a new snapshot and empties the journal: by default when the estimated cold load exceeds streamforge.compact_target_load_ms, with min_journal_bytes >= 0 when the journal holds at least that; returns whether it did (routed: pipeline)';

-- configure_outputs: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_configure_outputs(px_shards integer[], pipeline text, changelog boolean, results boolean, late boolean, notify boolean, results_retention boolean, backfill boolean)
RETURNS SETOF integer
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS px_configure_outputs FROM streamforge.configure_outputs(pipeline, changelog, results, late, notify, results_retention, backfill) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_configure_outputs(integer[], text, boolean, boolean, boolean, boolean, boolean, boolean) IS
    'internal: configure_outputs on the given shards';

CREATE OR REPLACE FUNCTION streamforge.configure_outputs(pipeline text, changelog boolean DEFAULT true, results boolean DEFAULT true, late boolean DEFAULT true, notify boolean DEFAULT true, results_retention boolean DEFAULT false, backfill boolean DEFAULT false)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            PERFORM streamforge.px_configure_outputs(px_targets, $1, $2, $3, $4, $5, $6, $7);
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.configure_outputs(text, boolean, boolean, boolean, boolean, boolean, boolean) IS
    'Turn the pipeline''s durable outputs (changelog, results, late output, notifications) on or off; results_retention drops final results rows older than the retention horizon; backfill adds the rows finalized before, from the remembered events. Needs admin. (routed: pipeline)';

-- disable_outputs: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_disable_outputs(px_shards integer[], pipeline text)
RETURNS SETOF integer
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS px_disable_outputs FROM streamforge.disable_outputs(pipeline) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_disable_outputs(integer[], text) IS
    'internal: disable_outputs on the given shards';

CREATE OR REPLACE FUNCTION streamforge.disable_outputs(pipeline text)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            PERFORM streamforge.px_disable_outputs(px_targets, $1);
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.disable_outputs(text) IS
    'Turn every output of the pipeline off (configure_outputs with every switch false). Needs admin. (routed: pipeline)';

-- resync_outputs: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_resync_outputs(px_shards integer[], pipeline text)
RETURNS SETOF integer
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS px_resync_outputs FROM streamforge.resync_outputs(pipeline) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_resync_outputs(integer[], text) IS
    'internal: resync_outputs on the given shards';

CREATE OR REPLACE FUNCTION streamforge.resync_outputs(pipeline text)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            PERFORM streamforge.px_resync_outputs(px_targets, $1);
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.resync_outputs(text) IS
    'bring the outputs back in line with the state after restore() (admin) (routed: pipeline)';

-- trim_results: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_trim_results(px_shards integer[], pipeline text)
RETURNS TABLE (px_shard integer, px_value bigint)
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS px_shard, streamforge.trim_results(pipeline) AS px_value;
$$;
COMMENT ON FUNCTION streamforge.px_trim_results(integer[], text) IS
    'internal: trim_results on the given shards';

CREATE OR REPLACE FUNCTION streamforge.trim_results(pipeline text)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
    px_v bigint;
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            SELECT pg_catalog.sum(px_r.px_value)::bigint INTO px_v FROM streamforge.px_trim_results(px_targets, $1) px_r;
            RETURN px_v;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.trim_results(text) IS
    'With results_retention on, delete the pipeline''s results rows whose window ended at or before the retention horizon; returns the number deleted. Needs admin. (routed: pipeline)';

-- trim_changelog: kind one (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_trim_changelog(px_shards integer[], pipeline text, up_to_seq bigint)
RETURNS TABLE (px_shard integer, px_value bigint)
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS px_shard, streamforge.trim_changelog(pipeline, up_to_seq) AS px_value;
$$;
COMMENT ON FUNCTION streamforge.px_trim_changelog(integer[], text, bigint) IS
    'internal: trim_changelog on the given shards';

CREATE OR REPLACE FUNCTION streamforge.trim_changelog(pipeline text, up_to_seq bigint DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := ARRAY[streamforge.px_one_shard($1, 'trim_changelog')];
    px_v bigint;
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            SELECT (pg_catalog.array_agg(px_r.px_value))[1] INTO px_v FROM streamforge.px_trim_changelog(px_targets, $1, $2) px_r;
            RETURN px_v;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.trim_changelog(text, bigint) IS
    'Delete the pipeline''s changelog rows with seq <= up_to_seq (consumed by every consumer); returns the number deleted. Needs admin. (routed: one)';

-- trim_late_output: kind one (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_trim_late_output(px_shards integer[], pipeline text, up_to_late_seq bigint)
RETURNS TABLE (px_shard integer, px_value bigint)
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS px_shard, streamforge.trim_late_output(pipeline, up_to_late_seq) AS px_value;
$$;
COMMENT ON FUNCTION streamforge.px_trim_late_output(integer[], text, bigint) IS
    'internal: trim_late_output on the given shards';

CREATE OR REPLACE FUNCTION streamforge.trim_late_output(pipeline text, up_to_late_seq bigint DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := ARRAY[streamforge.px_one_shard($1, 'trim_late_output')];
    px_v bigint;
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            SELECT (pg_catalog.array_agg(px_r.px_value))[1] INTO px_v FROM streamforge.px_trim_late_output(px_targets, $1, $2) px_r;
            RETURN px_v;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.trim_late_output(text, bigint) IS
    'Delete the pipeline''s late output rows with late_seq <= up_to_late_seq; returns the number deleted. Needs admin. (routed: one)';

-- register_consumer: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_register_consumer(px_shards integer[], pipeline text, name text)
RETURNS SETOF integer
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS px_register_consumer FROM streamforge.register_consumer(pipeline, name) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_register_consumer(integer[], text, text) IS
    'internal: register_consumer on the given shards';

CREATE OR REPLACE FUNCTION streamforge.register_consumer(pipeline text, name text)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            PERFORM streamforge.px_register_consumer(px_targets, $1, $2);
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.register_consumer(text, text) IS
    'register a named consumer bookmark of the pipeline''s outputs, owned by the calling role (read) (routed: pipeline)';

-- commit_consumer: kind one (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_commit_consumer(px_shards integer[], pipeline text, name text, seq bigint, late_seq bigint)
RETURNS SETOF integer
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS px_commit_consumer FROM streamforge.commit_consumer(pipeline, name, seq, late_seq) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_commit_consumer(integer[], text, text, bigint, bigint) IS
    'internal: commit_consumer on the given shards';

CREATE OR REPLACE FUNCTION streamforge.commit_consumer(pipeline text, name text, seq bigint, late_seq bigint DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := ARRAY[streamforge.px_one_shard($1, 'commit_consumer')];
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            PERFORM streamforge.px_commit_consumer(px_targets, $1, $2, $3, $4);
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.commit_consumer(text, text, bigint, bigint) IS
    'record the last seq (and late_seq) a consumer processed (the consumer''s role, or admin) (routed: one)';

-- drop_consumer: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_drop_consumer(px_shards integer[], pipeline text, name text)
RETURNS SETOF integer
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS px_drop_consumer FROM streamforge.drop_consumer(pipeline, name) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_drop_consumer(integer[], text, text) IS
    'internal: drop_consumer on the given shards';

CREATE OR REPLACE FUNCTION streamforge.drop_consumer(pipeline text, name text)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            PERFORM streamforge.px_drop_consumer(px_targets, $1, $2);
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.drop_consumer(text, text) IS
    'drop a consumer bookmark (the consumer''s role, or admin) (routed: pipeline)';

-- grant: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_grant(px_shards integer[], pipeline text, role name, privilege text)
RETURNS SETOF integer
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS px_grant FROM streamforge.grant(pipeline, role, privilege) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_grant(integer[], text, name, text) IS
    'internal: grant on the given shards';

CREATE OR REPLACE FUNCTION streamforge.grant(pipeline text, role name, privilege text)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            PERFORM streamforge.px_grant(px_targets, $1, $2, $3);
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.grant(text, name, text) IS
    'give a role read, ingest or admin on a pipeline (admin); unqualified: grant_privilege() (routed: pipeline)';

-- revoke: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_revoke(px_shards integer[], pipeline text, role name, privilege text)
RETURNS SETOF integer
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS px_revoke FROM streamforge.revoke(pipeline, role, privilege) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_revoke(integer[], text, name, text) IS
    'internal: revoke on the given shards';

CREATE OR REPLACE FUNCTION streamforge.revoke(pipeline text, role name, privilege text)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            PERFORM streamforge.px_revoke(px_targets, $1, $2, $3);
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.revoke(text, name, text) IS
    'take a privilege on a pipeline from a role (admin); unqualified: revoke_privilege() (routed: pipeline)';

-- grant_privilege: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_grant_privilege(px_shards integer[], pipeline text, role name, privilege text)
RETURNS SETOF integer
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS px_grant_privilege FROM streamforge.grant_privilege(pipeline, role, privilege) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_grant_privilege(integer[], text, name, text) IS
    'internal: grant_privilege on the given shards';

CREATE OR REPLACE FUNCTION streamforge.grant_privilege(pipeline text, role name, privilege text)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            PERFORM streamforge.px_grant_privilege(px_targets, $1, $2, $3);
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.grant_privilege(text, name, text) IS
    'give a role read, ingest or admin on a pipeline (admin) (routed: pipeline)';

-- revoke_privilege: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_revoke_privilege(px_shards integer[], pipeline text, role name, privilege text)
RETURNS SETOF integer
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS px_revoke_privilege FROM streamforge.revoke_privilege(pipeline, role, privilege) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_revoke_privilege(integer[], text, name, text) IS
    'internal: revoke_privilege on the given shards';

CREATE OR REPLACE FUNCTION streamforge.revoke_privilege(pipeline text, role name, privilege text)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            PERFORM streamforge.px_revoke_privilege(px_targets, $1, $2, $3);
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.revoke_privilege(text, name, text) IS
    'take a privilege on a pipeline from a role (admin) (routed: pipeline)';

-- set_owner: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_set_owner(px_shards integer[], pipeline text, new_owner name)
RETURNS SETOF integer
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS px_set_owner FROM streamforge.set_owner(pipeline, new_owner) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_set_owner(integer[], text, name) IS
    'internal: set_owner on the given shards';

CREATE OR REPLACE FUNCTION streamforge.set_owner(pipeline text, new_owner name)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            PERFORM streamforge.px_set_owner(px_targets, $1, $2);
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.set_owner(text, name) IS
    'give a pipeline to another role (admin) (routed: pipeline)';

-- has_pipeline_privilege: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_has_pipeline_privilege(px_shards integer[], pipeline text, privilege text, role name)
RETURNS TABLE (px_shard integer, px_value boolean)
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS px_shard, streamforge.has_pipeline_privilege(pipeline, privilege, role) AS px_value;
$$;
COMMENT ON FUNCTION streamforge.px_has_pipeline_privilege(integer[], text, text, name) IS
    'internal: has_pipeline_privilege on the given shards';

CREATE OR REPLACE FUNCTION streamforge.has_pipeline_privilege(pipeline text, privilege text, role name DEFAULT CURRENT_USER)
RETURNS boolean
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
    px_v boolean;
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            SELECT pg_catalog.bool_and(px_r.px_value) INTO px_v FROM streamforge.px_has_pipeline_privilege(px_targets, $1, $2, $3) px_r;
            RETURN px_v;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.has_pipeline_privilege(text, text, name) IS
    'whether a role has a privilege on a pipeline (routed: pipeline)';

-- require_privilege: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_require_privilege(px_shards integer[], pipeline text, privilege text)
RETURNS SETOF integer
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS px_require_privilege FROM streamforge.require_privilege(pipeline, privilege) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_require_privilege(integer[], text, text) IS
    'internal: require_privilege on the given shards';

CREATE OR REPLACE FUNCTION streamforge.require_privilege(pipeline text, privilege text)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            PERFORM streamforge.px_require_privilege(px_targets, $1, $2);
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.require_privilege(text, text) IS
    'raise 42704 or 42501 unless the current user has the privilege (routed: pipeline)';

-- inspect_checkpoint: kind any (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_inspect_checkpoint(checkpoint bytea)
RETURNS jsonb
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    RUN ON ANY;
    SELECT streamforge.inspect_checkpoint(checkpoint) AS px_inspect_checkpoint;
$$;
COMMENT ON FUNCTION streamforge.px_inspect_checkpoint(bytea) IS
    'internal: inspect_checkpoint on any shard';

CREATE OR REPLACE FUNCTION streamforge.inspect_checkpoint(checkpoint bytea)
RETURNS jsonb
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- the SQL/MED server must exist before PL/Proxy looks the cluster up
    PERFORM streamforge.shard_count();
    RETURN streamforge.px_inspect_checkpoint($1);
EXCEPTION WHEN internal_error THEN
    PERFORM streamforge.px_unreachable(ARRAY[]::integer[], SQLERRM);
    RAISE;
END
$$;
COMMENT ON FUNCTION streamforge.inspect_checkpoint(bytea) IS
    'validate checkpoint bytes and show their JSON document (computed by any shard)';

-- watermark_ts: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_watermark_ts(px_shards integer[], pipeline text)
RETURNS TABLE (px_shard integer, px_value timestamptz)
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS px_shard, streamforge.watermark_ts(pipeline) AS px_value;
$$;
COMMENT ON FUNCTION streamforge.px_watermark_ts(integer[], text) IS
    'internal: watermark_ts on the given shards';

CREATE OR REPLACE FUNCTION streamforge.watermark_ts(pipeline text)
RETURNS timestamptz
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
    px_v timestamptz;
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            SELECT CASE WHEN pg_catalog.bool_or(px_r.px_value IS NULL) THEN NULL ELSE pg_catalog.min(px_r.px_value) END INTO px_v FROM streamforge.px_watermark_ts(px_targets, $1) px_r;
            RETURN px_v;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.watermark_ts(text) IS
    'watermark() as a timestamp, NULL before there is one (the pipeline needs a time unit) (routed: pipeline)';

-- time_unit: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_time_unit(px_shards integer[], pipeline text)
RETURNS TABLE (px_shard integer, px_value interval)
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS px_shard, streamforge.time_unit(pipeline) AS px_value;
$$;
COMMENT ON FUNCTION streamforge.px_time_unit(integer[], text) IS
    'internal: time_unit on the given shards';

CREATE OR REPLACE FUNCTION streamforge.time_unit(pipeline text)
RETURNS interval
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
    px_v interval;
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            SELECT (pg_catalog.array_agg(px_r.px_value ORDER BY px_r.px_shard))[1] INTO px_v FROM streamforge.px_time_unit(px_targets, $1) px_r;
            RETURN px_v;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.time_unit(text) IS
    'the time unit of a pipeline, NULL if it has none (routed: pipeline)';

-- live: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_live(px_shards integer[], pipeline text)
RETURNS SETOF streamforge.result
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT px_r.* FROM streamforge.live(pipeline) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_live(integer[], text) IS
    'internal: live on the given shards';

CREATE OR REPLACE FUNCTION streamforge.live(pipeline text)
RETURNS SETOF streamforge.result
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            RETURN QUERY SELECT * FROM streamforge.px_live(px_targets, $1) px_r ORDER BY px_r.window_name COLLATE "C", px_r.key COLLATE "C", px_r.window_start, px_r.window_end;
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.live(text) IS
    'every live bucket, ready or not, in address order (routed: pipeline)';

-- visible: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_visible(px_shards integer[], pipeline text)
RETURNS SETOF streamforge.result
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT px_r.* FROM streamforge.visible(pipeline) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_visible(integer[], text) IS
    'internal: visible on the given shards';

CREATE OR REPLACE FUNCTION streamforge.visible(pipeline text)
RETURNS SETOF streamforge.result
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            RETURN QUERY SELECT * FROM streamforge.px_visible(px_targets, $1) px_r ORDER BY px_r.window_name COLLATE "C", px_r.key COLLATE "C", px_r.window_start, px_r.window_end;
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.visible(text) IS
    'the emitted rows: ready buckets not finalized yet, in address order (routed: pipeline)';

-- live_avg: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_live_avg(px_shards integer[], pipeline text)
RETURNS TABLE (window_name text, key text, window_start bigint, window_end bigint, count bigint, sum numeric, min bigint, max bigint, avg numeric)
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT px_r.* FROM streamforge.live_avg(pipeline) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_live_avg(integer[], text) IS
    'internal: live_avg on the given shards';

CREATE OR REPLACE FUNCTION streamforge.live_avg(pipeline text)
RETURNS TABLE (window_name text, key text, window_start bigint, window_end bigint, count bigint, sum numeric, min bigint, max bigint, avg numeric)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            RETURN QUERY SELECT * FROM streamforge.px_live_avg(px_targets, $1) px_r ORDER BY px_r.window_name COLLATE "C", px_r.key COLLATE "C", px_r.window_start, px_r.window_end;
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.live_avg(text) IS
    'live() with avg = sum / count as numeric (routed: pipeline)';

-- visible_avg: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_visible_avg(px_shards integer[], pipeline text)
RETURNS TABLE (window_name text, key text, window_start bigint, window_end bigint, count bigint, sum numeric, min bigint, max bigint, avg numeric)
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT px_r.* FROM streamforge.visible_avg(pipeline) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_visible_avg(integer[], text) IS
    'internal: visible_avg on the given shards';

CREATE OR REPLACE FUNCTION streamforge.visible_avg(pipeline text)
RETURNS TABLE (window_name text, key text, window_start bigint, window_end bigint, count bigint, sum numeric, min bigint, max bigint, avg numeric)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            RETURN QUERY SELECT * FROM streamforge.px_visible_avg(px_targets, $1) px_r ORDER BY px_r.window_name COLLATE "C", px_r.key COLLATE "C", px_r.window_start, px_r.window_end;
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.visible_avg(text) IS
    'visible() with avg = sum / count as numeric (routed: pipeline)';

-- live_ts: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_live_ts(px_shards integer[], pipeline text)
RETURNS TABLE (window_name text, key text, window_start timestamptz, window_end timestamptz, count bigint, sum numeric, min bigint, max bigint)
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT px_r.* FROM streamforge.live_ts(pipeline) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_live_ts(integer[], text) IS
    'internal: live_ts on the given shards';

CREATE OR REPLACE FUNCTION streamforge.live_ts(pipeline text)
RETURNS TABLE (window_name text, key text, window_start timestamptz, window_end timestamptz, count bigint, sum numeric, min bigint, max bigint)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            RETURN QUERY SELECT * FROM streamforge.px_live_ts(px_targets, $1) px_r ORDER BY px_r.window_name COLLATE "C", px_r.key COLLATE "C", px_r.window_start, px_r.window_end;
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.live_ts(text) IS
    'live() with timestamp window bounds (the pipeline needs a time unit) (routed: pipeline)';

-- visible_ts: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_visible_ts(px_shards integer[], pipeline text)
RETURNS TABLE (window_name text, key text, window_start timestamptz, window_end timestamptz, count bigint, sum numeric, min bigint, max bigint)
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT px_r.* FROM streamforge.visible_ts(pipeline) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_visible_ts(integer[], text) IS
    'internal: visible_ts on the given shards';

CREATE OR REPLACE FUNCTION streamforge.visible_ts(pipeline text)
RETURNS TABLE (window_name text, key text, window_start timestamptz, window_end timestamptz, count bigint, sum numeric, min bigint, max bigint)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            RETURN QUERY SELECT * FROM streamforge.px_visible_ts(px_targets, $1) px_r ORDER BY px_r.window_name COLLATE "C", px_r.key COLLATE "C", px_r.window_start, px_r.window_end;
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.visible_ts(text) IS
    'visible() with timestamp window bounds (the pipeline needs a time unit) (routed: pipeline)';

-- results_ts: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_results_ts(px_shards integer[], pipeline text, for_key text, window_from timestamptz, window_to timestamptz)
RETURNS TABLE (window_name text, key text, window_start timestamptz, window_end timestamptz, count bigint, sum numeric, min bigint, max bigint, seq bigint, final boolean, epoch bigint)
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT px_r.* FROM streamforge.results_ts(pipeline, for_key, window_from, window_to) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_results_ts(integer[], text, text, timestamptz, timestamptz) IS
    'internal: results_ts on the given shards';

CREATE OR REPLACE FUNCTION streamforge.results_ts(pipeline text, for_key text DEFAULT NULL, window_from timestamptz DEFAULT NULL, window_to timestamptz DEFAULT NULL)
RETURNS TABLE (window_name text, key text, window_start timestamptz, window_end timestamptz, count bigint, sum numeric, min bigint, max bigint, seq bigint, final boolean, epoch bigint)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            RETURN QUERY SELECT * FROM streamforge.px_results_ts(px_targets, $1, $2, $3, $4) px_r ORDER BY px_r.window_name COLLATE "C", px_r.key COLLATE "C", px_r.window_start, px_r.window_end;
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.results_ts(text, text, timestamptz, timestamptz) IS
    'the pipeline''s rows of streamforge.results with timestamp bounds, optionally of one key and within a time range (routed: pipeline)';

-- late_events: kind pipeline (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_late_events(px_shards integer[], pipeline text)
RETURNS SETOF streamforge.late_event
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT px_r.*, (px_shards)[1] AS shard FROM streamforge.late_events(pipeline) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_late_events(integer[], text) IS
    'internal: late_events on the given shards';

CREATE OR REPLACE FUNCTION streamforge.late_events(pipeline text)
RETURNS SETOF streamforge.late_event
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := streamforge.px_route($1, NULL, true);
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            RETURN QUERY SELECT * FROM streamforge.px_late_events(px_targets, $1) px_r ORDER BY px_r.shard, px_r.late_seq;
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.late_events(text) IS
    'the late events, in late_seq order (routed: pipeline)';

-- partition_progress: kind one (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_partition_progress(px_shards integer[], pipeline text)
RETURNS TABLE (partition text, consumed_offset bigint, progress bigint, idle boolean, holds_watermark boolean, lag bigint, last_delivery timestamptz, last_report timestamptz)
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT px_r.* FROM streamforge.partition_progress(pipeline) px_r;
$$;
COMMENT ON FUNCTION streamforge.px_partition_progress(integer[], text) IS
    'internal: partition_progress on the given shards';

CREATE OR REPLACE FUNCTION streamforge.partition_progress(pipeline text)
RETURNS TABLE (partition text, consumed_offset bigint, progress bigint, idle boolean, holds_watermark boolean, lag bigint, last_delivery timestamptz, last_report timestamptz)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    px_targets integer[] := ARRAY[streamforge.px_one_shard($1, 'partition_progress')];
BEGIN
    -- a lost connection (a node restarted since the last call) is
    -- retried once on a new one (px_retry)
    FOR px_try IN 1 .. 2 LOOP
        BEGIN
            RETURN QUERY SELECT * FROM streamforge.px_partition_progress(px_targets, $1) px_r;
            RETURN;
        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN
            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN
                CONTINUE;
            END IF;
            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);
            RAISE;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.partition_progress(text) IS
    'per partition: progress, whether it holds the watermark, lag behind the fastest, last delivery and report (routed: one)';

-- interval_to_units: kind any (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_interval_to_units(i interval, unit interval)
RETURNS bigint
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    RUN ON ANY;
    SELECT streamforge.interval_to_units(i, unit) AS px_interval_to_units;
$$;
COMMENT ON FUNCTION streamforge.px_interval_to_units(interval, interval) IS
    'internal: interval_to_units on any shard';

CREATE OR REPLACE FUNCTION streamforge.interval_to_units(i interval, unit interval)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- the SQL/MED server must exist before PL/Proxy looks the cluster up
    PERFORM streamforge.shard_count();
    RETURN streamforge.px_interval_to_units($1, $2);
EXCEPTION WHEN internal_error THEN
    PERFORM streamforge.px_unreachable(ARRAY[]::integer[], SQLERRM);
    RAISE;
END
$$;
COMMENT ON FUNCTION streamforge.interval_to_units(interval, interval) IS
    'an interval as a whole number of units, exactly (computed by any shard)';

-- time_to_units: kind any (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_time_to_units(t timestamptz, unit interval)
RETURNS bigint
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    RUN ON ANY;
    SELECT streamforge.time_to_units(t, unit) AS px_time_to_units;
$$;
COMMENT ON FUNCTION streamforge.px_time_to_units(timestamptz, interval) IS
    'internal: time_to_units on any shard';

CREATE OR REPLACE FUNCTION streamforge.time_to_units(t timestamptz, unit interval)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- the SQL/MED server must exist before PL/Proxy looks the cluster up
    PERFORM streamforge.shard_count();
    RETURN streamforge.px_time_to_units($1, $2);
EXCEPTION WHEN internal_error THEN
    PERFORM streamforge.px_unreachable(ARRAY[]::integer[], SQLERRM);
    RAISE;
END
$$;
COMMENT ON FUNCTION streamforge.time_to_units(timestamptz, interval) IS
    'a timestamp as a whole number of units since the Unix epoch, exactly (computed by any shard)';

-- units_to_time: kind any (proxy/api.tsv)
CREATE OR REPLACE FUNCTION streamforge.px_units_to_time(t bigint, unit interval)
RETURNS timestamptz
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    CLUSTER 'streamforge';
    RUN ON ANY;
    SELECT streamforge.units_to_time(t, unit) AS px_units_to_time;
$$;
COMMENT ON FUNCTION streamforge.px_units_to_time(bigint, interval) IS
    'internal: units_to_time on any shard';

CREATE OR REPLACE FUNCTION streamforge.units_to_time(t bigint, unit interval)
RETURNS timestamptz
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- the SQL/MED server must exist before PL/Proxy looks the cluster up
    PERFORM streamforge.shard_count();
    RETURN streamforge.px_units_to_time($1, $2);
EXCEPTION WHEN internal_error THEN
    PERFORM streamforge.px_unreachable(ARRAY[]::integer[], SQLERRM);
    RAISE;
END
$$;
COMMENT ON FUNCTION streamforge.units_to_time(bigint, interval) IS
    'units since the Unix epoch as a timestamp (NULL stays NULL) (computed by any shard)';
