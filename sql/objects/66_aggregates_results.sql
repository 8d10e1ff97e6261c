-- streamforge objects: the table of an aggregate's results and
-- streamforge.results (0.4.0, issue 42 item 2; docs/design/typed-results.md).
--
-- The sink writes an aggregate's rows into its own table
-- (src/persist/sink_typed.c).  The maintenance paths that rebuild results
-- rows in streamforge.results' shape (configure_outputs, its backfill,
-- resync_outputs after a restore, and what they call: outputs_fill_ts,
-- outputs_fill_aggregates, outputs_repair_final_aggregates) work on
-- streamforge.results as before: for an aggregate they move its rows
-- there first (aggregate_results_unpack) and back into its table when
-- they are done (aggregate_results_pack), in the same transaction, under
-- the pipeline's row lock.  Both run as the extension's owner, like their
-- callers; neither is reachable by PUBLIC.

-- The typed columns of an aggregate's table, as a SELECT list over a row
-- r of streamforge.results: each decoded as 0.3.0's view decoded it (the
-- key parts by their type's input, the aggregates from the engine's
-- columns or the aggregates jsonb), from checked pieces only.  Also the
-- list of the columns, in the same order.
CREATE OR REPLACE FUNCTION streamforge_internal.aggregate_results_decode(spec jsonb,
    unit_us bigint, OUT columns text, OUT exprs text)
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    k jsonb;
    a jsonb;
    i bigint;
    typ regtype;
    measures boolean := COALESCE((spec ->> 'measures')::boolean, false);
BEGIN
    IF unit_us IS NULL OR unit_us <= 0 THEN
        RAISE EXCEPTION 'invalid aggregate definition' USING ERRCODE = '22023';
    END IF;
    columns := 'key, ';
    exprs := 'r.key, ';
    FOR k IN SELECT e.value FROM jsonb_array_elements(spec -> 'keys') WITH ORDINALITY AS e
              ORDER BY e.ordinality
    LOOP
        typ := (k ->> 'type')::regtype;
        IF NOT streamforge_internal.aggregate_type_ok(typ) THEN
            RAISE EXCEPTION 'invalid aggregate definition' USING ERRCODE = '22023';
        END IF;
        columns := columns || format('%I, ', 'k' || (k ->> 'part')::integer);
        exprs := exprs || format('(streamforge_internal.aggregate_key_part(r.key, %s))::%s, ',
                                 (k ->> 'part')::integer, typ);
    END LOOP;
    columns := columns || 'window_start, window_end, ';
    exprs := exprs || format('streamforge_internal.aggregate_time(r.window_start, %s), '
                             'streamforge_internal.aggregate_time(r.window_end, %s), ',
                             unit_us, unit_us);
    FOR a, i IN SELECT e.value, e.ordinality FROM jsonb_array_elements(spec -> 'aggregates') WITH ORDINALITY AS e
                 ORDER BY e.ordinality
    LOOP
        typ := (a ->> 'type')::regtype;
        PERFORM streamforge_internal.aggregate_value_type_check(typ);
        -- (a one-measure pipeline's are generated columns)
        IF measures THEN
            IF a ->> 'member' IS NULL OR a ->> 'member' !~ '^a[0-9]{1,2}$' THEN
                RAISE EXCEPTION 'invalid aggregate definition' USING ERRCODE = '22023';
            END IF;
            columns := columns || format('%I, ', 'a' || i);
            exprs := exprs || format('(r.aggregates OPERATOR(pg_catalog.->>) %L)::%s, ',
                                     a ->> 'member', typ);
        END IF;
    END LOOP;
    columns := columns || 'final, seq, epoch, start_u, end_u, count, sum, min, max';
    exprs := exprs || 'r.final, r.seq, r.epoch, r.window_start, r.window_end, '
        'r.count, r.sum, r.min, r.max';
END
$$;
REVOKE ALL ON FUNCTION streamforge_internal.aggregate_results_decode(jsonb, bigint) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.aggregate_results_decode(jsonb, bigint) IS
    'the typed columns of an aggregate''s results table from a row of streamforge.results (internal helper)';

-- Move the rows of an aggregate's table into streamforge.results, in its
-- shape (a measures pipeline's aggregates jsonb rebuilt from the typed
-- columns, under the declared aggregates' names).  Returns false, having
-- done nothing, for a pipeline that is not an aggregate with a table.
CREATE OR REPLACE FUNCTION streamforge_internal.aggregate_results_unpack(pipeline text)
RETURNS boolean
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    g record;
    a jsonb;
    i bigint;
    members text := '';
    aggregates text := 'NULL::pg_catalog.jsonb';
BEGIN
    SELECT x.results_id, x.spec INTO g FROM streamforge.aggregate AS x
     WHERE x.name OPERATOR(pg_catalog.=) aggregate_results_unpack.pipeline
       AND x.results_id IS NOT NULL;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF COALESCE((g.spec ->> 'measures')::boolean, false) THEN
        FOR a, i IN SELECT e.value, e.ordinality FROM jsonb_array_elements(g.spec -> 'aggregates') WITH ORDINALITY AS e
                     ORDER BY e.ordinality
        LOOP
            IF a ->> 'member' IS NULL OR a ->> 'member' !~ '^a[0-9]{1,2}$' THEN
                RAISE EXCEPTION 'invalid aggregate definition' USING ERRCODE = '22023';
            END IF;
            members := members || format('%L, m.%I, ', a ->> 'member', 'a' || i);
        END LOOP;
        aggregates := format('pg_catalog.jsonb_build_object(%s)', rtrim(members, ', '));
    END IF;
    EXECUTE format('WITH m AS (DELETE FROM %s AS r RETURNING r.*) '
                   'INSERT INTO streamforge.results (pipeline, window_name, key, '
                   'window_start, window_end, count, sum, min, max, seq, final, epoch, '
                   'window_start_ts, window_end_ts, aggregates) '
                   'SELECT %L, %L, m.key, m.start_u, m.end_u, m.count, m.sum, m.min, '
                   'm.max, m.seq, m.final, m.epoch, m.window_start, m.window_end, %s FROM m',
                   streamforge_internal.aggregate_results_table(g.results_id),
                   pipeline, g.spec ->> 'window', aggregates);
    RETURN true;
END
$$;
REVOKE ALL ON FUNCTION streamforge_internal.aggregate_results_unpack(text) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.aggregate_results_unpack(text) IS
    'moves an aggregate''s results rows into streamforge.results, in its shape (internal helper)';

-- Move an aggregate's rows of streamforge.results (its window's) into its
-- table, typed (aggregate_results_decode).  Returns false, having done
-- nothing, for a pipeline that is not an aggregate with a table.
CREATE OR REPLACE FUNCTION streamforge_internal.aggregate_results_pack(pipeline text)
RETURNS boolean
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    g record;
    d record;
BEGIN
    SELECT x.results_id, x.spec, x.unit_us INTO g FROM streamforge.aggregate AS x
     WHERE x.name OPERATOR(pg_catalog.=) aggregate_results_pack.pipeline
       AND x.results_id IS NOT NULL;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    d := streamforge_internal.aggregate_results_decode(g.spec, g.unit_us);
    EXECUTE format('WITH r AS (DELETE FROM streamforge.results AS x '
                   'WHERE x.pipeline OPERATOR(pg_catalog.=) %L '
                   'AND x.window_name OPERATOR(pg_catalog.=) %L RETURNING x.*) '
                   'INSERT INTO %s (%s) SELECT %s FROM r',
                   pipeline, g.spec ->> 'window',
                   streamforge_internal.aggregate_results_table(g.results_id),
                   d.columns, d.exprs);
    RETURN true;
END
$$;
REVOKE ALL ON FUNCTION streamforge_internal.aggregate_results_pack(text) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.aggregate_results_pack(text) IS
    'moves an aggregate''s rows of streamforge.results into its table, typed (internal helper)';


-- move_aggregate_results(name) (0.4.0): an aggregate whose rows are still
-- in streamforge.results (one restored from a dump of 0.3.0 into 0.4.0:
-- the dump's registry row has no table number) gets the table of its
-- results, as the update to 0.4.0 gives it to the others
-- (migrations/0.4.0-post.sql): a number, the table, its rows moved there
-- typed as its view showed them (aggregate_results_pack), its indexes on
-- streamforge.results dropped, its view made again over the table (same
-- columns, owner and grants), every backend's sink told (the registry's
-- trigger aggregate_top_changed).  Under the pipeline's row lock, in the
-- caller's transaction.
-- Admin: the C entry point (src/api/outputs.c) checks it, then runs this
-- as the extension's owner.  Returns the rows moved; an aggregate that has
-- its table already: 0, with a notice.
CREATE OR REPLACE FUNCTION streamforge_internal.move_aggregate_results_internal(name text)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    g record;
    k jsonb;
    rid bigint;
    n bigint;
BEGIN
    IF name IS NULL THEN
        RAISE EXCEPTION 'name must not be null' USING ERRCODE = '22004';
    END IF;
    PERFORM 1 FROM streamforge.pipeline AS p
     WHERE p.name OPERATOR(pg_catalog.=) move_aggregate_results_internal.name
       FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'pipeline "%" does not exist', name USING ERRCODE = '42704';
    END IF;
    SELECT a.view_schema, a.view_name, a.unit_us, a.spec, a.results_id INTO g
      FROM streamforge.aggregate AS a
     WHERE a.name OPERATOR(pg_catalog.=) move_aggregate_results_internal.name;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'pipeline "%" is not an aggregate', name USING ERRCODE = '42704';
    END IF;
    IF g.results_id IS NOT NULL THEN
        RAISE NOTICE 'aggregate "%" has the table of its results already', name;
        RETURN 0;
    END IF;
    -- the key types the views may decode (issue 37): the update leaves
    -- an aggregate keyed by a domain where it was, and so does this
    FOR k IN SELECT e.value FROM pg_catalog.jsonb_array_elements(g.spec OPERATOR(pg_catalog.->) 'keys') AS e
    LOOP
        IF pg_catalog.to_regtype(k OPERATOR(pg_catalog.->>) 'type') IS NULL
           OR NOT streamforge_internal.aggregate_type_ok(pg_catalog.to_regtype(k OPERATOR(pg_catalog.->>) 'type')) THEN
            RAISE EXCEPTION 'aggregate "%" cannot have a table of its results', name
                USING ERRCODE = '0A000',
                      DETAIL = pg_catalog.format('Its key type %s is not allowed.', k OPERATOR(pg_catalog.->>) 'type'),
                      HINT = 'Drop the aggregate and create it again (streamforge.drop_aggregate, create_aggregate).';
        END IF;
    END LOOP;
    rid := pg_catalog.nextval('streamforge.aggregate_results_seq'::pg_catalog.regclass);
    -- the registry's statement trigger aggregate_top_changed tells every
    -- backend's sink to reload its configuration, at commit
    UPDATE streamforge.aggregate AS a SET results_id = rid
     WHERE a.name OPERATOR(pg_catalog.=) move_aggregate_results_internal.name;
    PERFORM streamforge_internal.aggregate_make_table(rid, g.spec);
    SELECT pg_catalog.count(*) INTO n FROM streamforge.results AS r
     WHERE r.pipeline OPERATOR(pg_catalog.=) move_aggregate_results_internal.name
       AND r.window_name OPERATOR(pg_catalog.=) (g.spec OPERATOR(pg_catalog.->>) 'window');
    PERFORM streamforge_internal.aggregate_results_pack(name);
    EXECUTE pg_catalog.format('DROP INDEX IF EXISTS streamforge.%I, streamforge.%I',
                              streamforge_internal.aggregate_index_name(name),
                              streamforge_internal.aggregate_long_key_index_name(name));
    IF pg_catalog.to_regclass(pg_catalog.format('%I.%I', g.view_schema, g.view_name)) IS NOT NULL THEN
        PERFORM streamforge_internal.aggregate_results_view(name, g.view_schema, g.view_name,
                                                            g.unit_us, g.spec, true);
    END IF;
    RETURN n;
END
$$;
REVOKE ALL ON FUNCTION streamforge_internal.move_aggregate_results_internal(text) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.move_aggregate_results_internal(text) IS
    'the body of move_aggregate_results, run as the extension''s owner (internal helper)';

CREATE OR REPLACE FUNCTION streamforge.move_aggregate_results(name text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sf_move_aggregate_results'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
