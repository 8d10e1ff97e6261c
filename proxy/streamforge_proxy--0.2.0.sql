-- streamforge_proxy: the streamforge SQL API in a router database, routed to
-- data nodes running streamforge with PL/Proxy.  docs/scale-out.md explains
-- the two distributions and the setup; this file is the whole extension.
--
-- Cluster membership is PL/Proxy's: the SQL/MED server "streamforge" of the
-- foreign data wrapper plproxy, whose options p0 .. p<N-1> are the connect
-- strings of the N shards (N a power of two, PL/Proxy's rule).  A shard is
-- one database running streamforge; a machine may hold several.
--
-- Routing (all computed here, in the router):
--   (a) a pipeline created with create_pipeline() lives on one shard,
--       name_hash(pipeline) & (N - 1), and every call goes there;
--   (b) a pipeline created with create_sharded_pipeline() exists on every
--       shard with all its partitions; ingest goes to the shard of the
--       partition, name_hash(partition) & (N - 1); ingest_batch is split by
--       partition; advance, mark_idle, drop and the reads go to all shards.
--       Such pipelines are listed in streamforge.sharded_pipelines.
--
-- Every remote call is its own transaction on its shard (PL/Proxy runs the
-- remote query in autocommit): the router's transaction does not undo it.
--
-- Internal functions are named px_*; each public function is a PL/pgSQL
-- wrapper that computes the target shards and calls one of them.

\echo Use "CREATE EXTENSION streamforge_proxy" to load this file. \quit

-- ------------------------------------------------------------------
-- Types: the same names and columns as streamforge's, so that PL/Proxy can
-- pass them to the data nodes by name.  change and late_event carry the
-- shard that produced the row in an extra last column: seq and late_seq
-- are per shard, a consumer of a sharded pipeline tracks (shard, seq).
-- ------------------------------------------------------------------
CREATE TYPE streamforge.window_def AS (
    name text,
    kind text,          -- 'fixed' | 'sliding' | 'session'
    size bigint,        -- fixed, sliding
    step bigint,        -- sliding
    gap bigint          -- session
);

CREATE TYPE streamforge.change AS (
    seq bigint,
    op text,            -- 'retract' | 'upsert'
    window_name text,
    key text,
    window_start bigint,
    window_end bigint,
    count bigint,
    sum numeric,
    min bigint,
    max bigint,
    shard integer       -- router only: the shard whose seq this is
);

CREATE TYPE streamforge.result AS (
    window_name text,
    key text,
    window_start bigint,
    window_end bigint,
    count bigint,
    sum numeric,
    min bigint,
    max bigint
);

CREATE TYPE streamforge.delivery AS (
    partition text,
    source_offset bigint,
    event_id text,
    key text,
    event_time bigint,
    value bigint
);

CREATE TYPE streamforge.late_event AS (
    late_seq bigint,
    partition text,
    source_offset bigint,
    event_id text,
    key text,
    event_time bigint,
    value bigint,
    watermark bigint,
    shard integer       -- router only: the shard whose late_seq this is
);

COMMENT ON TYPE streamforge.change IS
    'a change of a pipeline''s results; shard: the shard that numbered it (seq is per shard)';
COMMENT ON TYPE streamforge.late_event IS
    'a late event; shard: the shard that numbered it (late_seq is per shard)';

-- ------------------------------------------------------------------
-- Placement
-- ------------------------------------------------------------------
CREATE TABLE streamforge.sharded_pipelines (
    pipeline text PRIMARY KEY,
    shards integer NOT NULL CHECK (shards > 0)
);
COMMENT ON TABLE streamforge.sharded_pipelines IS
    'pipelines sharded by source partition (create_sharded_pipeline) and the shard count they were created with';
REVOKE ALL ON streamforge.sharded_pipelines FROM PUBLIC;
GRANT SELECT ON streamforge.sharded_pipelines TO PUBLIC;
-- the router's only state: pg_dump of the router database keeps it
SELECT pg_catalog.pg_extension_config_dump('streamforge.sharded_pipelines', '');

-- A stable 32-bit hash of a name: the first 4 bytes of its MD5, the same
-- on every platform and PostgreSQL version (hashtext() is not promised to be).
CREATE FUNCTION streamforge.name_hash(name text)
RETURNS integer
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT (('x' OPERATOR(pg_catalog.||)
             pg_catalog.substr(pg_catalog.md5(name), 1, 8))::pg_catalog.bit(32))::integer
$$;
COMMENT ON FUNCTION streamforge.name_hash(text) IS
    'stable hash of a pipeline or partition name; its low bits choose the shard';

-- The number of shards: the options p0, p1, ... of the SQL/MED server
-- "streamforge".
CREATE FUNCTION streamforge.shard_count()
RETURNS integer
LANGUAGE plpgsql STABLE PARALLEL SAFE
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
CREATE FUNCTION streamforge.shard_of(name text, shards integer DEFAULT NULL)
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
CREATE FUNCTION streamforge.px_route(pipeline text, partition text,
    all_shards boolean)
RETURNS integer[]
LANGUAGE plpgsql STABLE PARALLEL SAFE
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
CREATE FUNCTION streamforge.px_unreachable(shards integer[], message text)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL SAFE
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
CREATE FUNCTION streamforge.px_create(px_shards integer[], name text,
    partitions text[], windows streamforge.window_def[], lateness bigint,
    retention bigint, time_unit interval)
RETURNS SETOF integer
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS px_create
      FROM streamforge.create_pipeline(name, partitions, windows, lateness,
                                       retention, time_unit) r;
$$;

CREATE FUNCTION streamforge.px_drop(px_shards integer[], name text)
RETURNS SETOF integer
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS px_drop FROM streamforge.drop_pipeline(name) r;
$$;

CREATE FUNCTION streamforge.px_ingest(px_shard integer, pipeline text,
    partition text, source_offset bigint, event_id text, key text,
    event_time bigint, value bigint)
RETURNS SETOF streamforge.change
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
AS $$
    CLUSTER 'streamforge';
    RUN ON px_shard;
    SELECT c.*, px_shard AS shard
      FROM streamforge.ingest(pipeline, partition, source_offset, event_id,
                              key, event_time, value) c;
$$;

CREATE FUNCTION streamforge.px_ingest_batch(px_shard integer, pipeline text,
    deliveries streamforge.delivery[])
RETURNS SETOF streamforge.change
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
AS $$
    CLUSTER 'streamforge';
    RUN ON px_shard;
    SELECT c.*, px_shard AS shard
      FROM streamforge.ingest_batch(pipeline, deliveries) c;
$$;

-- A batch split by shard: batches[i] is the text of the delivery[] for
-- shard px_shards[i] (PL/Proxy sends arrays as text anyway).
CREATE FUNCTION streamforge.px_ingest_batch_split(px_shards integer[],
    pipeline text, batches text[])
RETURNS SETOF streamforge.change
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards, batches;
    RUN ON px_shards;
    SELECT c.*, (px_shards)[1] AS shard
      FROM streamforge.ingest_batch(pipeline,
               ((batches)[1])::streamforge.delivery[]) c;
$$;

CREATE FUNCTION streamforge.px_advance(px_shards integer[], pipeline text,
    partition text, progress bigint)
RETURNS SETOF streamforge.change
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT c.*, (px_shards)[1] AS shard
      FROM streamforge.advance(pipeline, partition, progress) c;
$$;

CREATE FUNCTION streamforge.px_mark_idle(px_shards integer[], pipeline text,
    partition text)
RETURNS SETOF streamforge.change
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT c.*, (px_shards)[1] AS shard
      FROM streamforge.mark_idle(pipeline, partition) c;
$$;

CREATE FUNCTION streamforge.px_watermark(px_shards integer[], pipeline text,
    OUT shard integer, OUT watermark bigint)
RETURNS SETOF record
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT (px_shards)[1] AS shard, streamforge.watermark(pipeline) AS watermark;
$$;

CREATE FUNCTION streamforge.px_live(px_shards integer[], pipeline text)
RETURNS SETOF streamforge.result
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT r.* FROM streamforge.live(pipeline) r;
$$;

CREATE FUNCTION streamforge.px_visible(px_shards integer[], pipeline text)
RETURNS SETOF streamforge.result
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT r.* FROM streamforge.visible(pipeline) r;
$$;

CREATE FUNCTION streamforge.px_late_events(px_shards integer[], pipeline text)
RETURNS SETOF streamforge.late_event
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT l.*, (px_shards)[1] AS shard FROM streamforge.late_events(pipeline) l;
$$;

CREATE FUNCTION streamforge.px_partitions(px_shards integer[], pipeline text,
    OUT partition text, OUT consumed_offset bigint, OUT progress bigint,
    OUT idle boolean)
RETURNS SETOF record
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT p.* FROM streamforge.partitions(pipeline) p;
$$;

CREATE FUNCTION streamforge.px_stats(px_shards integer[], pipeline text,
    OUT deliveries bigint, OUT accepted bigint, OUT duplicate_ids bigint,
    OUT late_events bigint, OUT offset_replays bigint,
    OUT changes_emitted bigint, OUT live_buckets bigint,
    OUT visible_rows bigint, OUT partitions integer,
    OUT idle_partitions integer, OUT remembered_identities bigint,
    OUT remembered_offsets bigint, OUT remembered_late_events bigint,
    OUT forgotten_offsets bigint, OUT forgotten_late_events bigint)
RETURNS SETOF record
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
AS $$
    CLUSTER 'streamforge';
    SPLIT px_shards;
    RUN ON px_shards;
    SELECT s.* FROM streamforge.stats(pipeline) s;
$$;

CREATE FUNCTION streamforge.px_checkpoint(px_shard integer, pipeline text)
RETURNS bytea
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
AS $$
    CLUSTER 'streamforge';
    RUN ON px_shard;
    SELECT streamforge.checkpoint(pipeline) AS px_checkpoint;
$$;

CREATE FUNCTION streamforge.px_restore(px_shard integer, pipeline text,
    checkpoint bytea)
RETURNS integer
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
AS $$
    CLUSTER 'streamforge';
    RUN ON px_shard;
    SELECT px_shard AS px_restore FROM streamforge.restore(pipeline, checkpoint) r;
$$;

-- inspect_checkpoint() reads only its argument: any shard will do.
CREATE FUNCTION streamforge.px_inspect_checkpoint(checkpoint bytea)
RETURNS jsonb
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
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
CREATE FUNCTION streamforge.px_check_window(w streamforge.window_def)
RETURNS streamforge.window_def
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
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

CREATE FUNCTION streamforge.fixed(name text, size bigint)
RETURNS streamforge.window_def
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT streamforge.px_check_window(ROW(name, 'fixed', size, NULL, NULL)::streamforge.window_def) $$;

CREATE FUNCTION streamforge.sliding(name text, size bigint, step bigint)
RETURNS streamforge.window_def
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT streamforge.px_check_window(ROW(name, 'sliding', size, step, NULL)::streamforge.window_def) $$;

CREATE FUNCTION streamforge.session(name text, gap bigint)
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
CREATE FUNCTION streamforge.create_pipeline(name text, partitions text[],
    windows streamforge.window_def[], lateness bigint DEFAULT 0,
    retention bigint DEFAULT NULL, time_unit interval DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
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

CREATE FUNCTION streamforge.create_sharded_pipeline(name text,
    partitions text[], windows streamforge.window_def[],
    lateness bigint DEFAULT 0, retention bigint DEFAULT NULL,
    time_unit interval DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
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

CREATE FUNCTION streamforge.drop_pipeline(name text)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
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

CREATE FUNCTION streamforge.ingest(pipeline text, partition text,
    source_offset bigint, event_id text, key text, event_time bigint,
    value bigint)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE ROWS 2
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

CREATE FUNCTION streamforge.ingest_batch(pipeline text,
    deliveries streamforge.delivery[])
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
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

CREATE FUNCTION streamforge.advance(pipeline text, partition text,
    progress bigint)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
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

CREATE FUNCTION streamforge.mark_idle(pipeline text, partition text)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
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
CREATE FUNCTION streamforge.px_one_shard(pipeline text, what text)
RETURNS integer
LANGUAGE plpgsql STABLE PARALLEL SAFE
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

CREATE FUNCTION streamforge.checkpoint(pipeline text)
RETURNS bytea
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
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

CREATE FUNCTION streamforge.restore(pipeline text, checkpoint bytea)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
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

CREATE FUNCTION streamforge.inspect_checkpoint(checkpoint bytea)
RETURNS jsonb
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
AS $$
BEGIN
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
CREATE FUNCTION streamforge.watermark(pipeline text)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
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

CREATE FUNCTION streamforge.live(pipeline text)
RETURNS SETOF streamforge.result
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
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

CREATE FUNCTION streamforge.visible(pipeline text)
RETURNS SETOF streamforge.result
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
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

CREATE FUNCTION streamforge.late_events(pipeline text)
RETURNS SETOF streamforge.late_event
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
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
CREATE FUNCTION streamforge.partitions(pipeline text)
RETURNS TABLE (partition text, consumed_offset bigint, progress bigint,
               idle boolean)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
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

CREATE FUNCTION streamforge.stats(pipeline text,
    OUT deliveries bigint, OUT accepted bigint, OUT duplicate_ids bigint,
    OUT late_events bigint, OUT offset_replays bigint,
    OUT changes_emitted bigint, OUT live_buckets bigint,
    OUT visible_rows bigint, OUT partitions integer,
    OUT idle_partitions integer, OUT remembered_identities bigint,
    OUT remembered_offsets bigint, OUT remembered_late_events bigint,
    OUT forgotten_offsets bigint, OUT forgotten_late_events bigint)
RETURNS record
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
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
