-- streamforge objects: an aggregate's views and its
-- indexes on streamforge.results (0.3.0, issue 29; long keys: 0.4.0,
-- issue 38; docs/sql-aggregates.md).
--
-- The update from 0.3.0 remakes the indexes and views of the aggregates
-- that exist (sql/migrations/0.4.0-post.sql).
--
-- Long keys (issue 38): an index entry must fit in a third of a btree
-- page.  0.3.0 indexed every key, so one GROUP BY value of a few kB made
-- every later write of the aggregate's results, and so every emission,
-- fail.  Now each aggregate has two partial indexes: keys of at most 2000
-- bytes by their leading key columns and window_start, longer keys by
-- window_start only; the results view is a UNION ALL of two branches with
-- the same predicates.

-- The longest key (its text, in bytes) an aggregate's index holds.  A
-- btree entry must fit in a third of a page (2704 bytes with 8 kB pages):
-- a key of a few kB would make every write of its results fail, and with
-- them every later emission of the aggregate (issue 38).  The key's parts
-- are shorter than the key, so 2000 bytes of parts, their headers and
-- window_start always fit.  Rows of longer keys are indexed by time only
-- (the second index below) and the view reads them through a second branch
-- (aggregate_results_view).
CREATE OR REPLACE FUNCTION streamforge_internal.aggregate_long_key_index_name(name text)
RETURNS name
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN ('results_aggregate_long_' OPERATOR(pg_catalog.||) pg_catalog.left(pg_catalog.md5(name), 16))::pg_catalog.name;
REVOKE ALL ON FUNCTION streamforge_internal.aggregate_long_key_index_name(text) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.aggregate_long_key_index_name(text) IS
    'the name of the index of an aggregate''s long keys on streamforge.results (internal helper)';

-- The indexes of an aggregate on streamforge.results: rows whose key is at
-- most 2000 bytes by the leading key columns whose text input is immutable,
-- then window_start; rows of longer keys by window_start.  Both partial,
-- restricted to the aggregate's pipeline and window; the view's two
-- branches repeat the predicates, so that the planner uses them.
CREATE OR REPLACE FUNCTION streamforge_internal.aggregate_make_indexes(name text, unit_us bigint, spec jsonb)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    cols text := '';
    k jsonb;
BEGIN
    FOR k IN SELECT e.value FROM jsonb_array_elements(spec -> 'keys') WITH ORDINALITY AS e
              ORDER BY e.ordinality
    LOOP
        -- the leading keys whose type's text input is immutable, decided here
        -- from the type, not from the row (a forged "indexable" must not put
        -- a domain's CHECK into an index of the owner's table: issue 37)
        EXIT WHEN NOT COALESCE((k ->> 'indexable')::boolean, false)
               OR (k ->> 'type')::regtype <> ALL (ARRAY['text', 'character varying', 'character',
                      'name', 'smallint', 'integer', 'bigint', 'boolean', 'uuid',
                      'numeric']::regtype[]);
        cols := cols || format('((streamforge_internal.aggregate_key_part(key, %s))::%s%s), ',
                               (k ->> 'part')::integer, (k ->> 'type')::regtype,
                               CASE WHEN k ->> 'collation' IS NULL THEN ''
                                    ELSE format(' COLLATE %s', (k ->> 'collation')::regcollation) END);
    END LOOP;
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON streamforge.results '
                   '(%sstreamforge_internal.aggregate_time(window_start, %s)) '
                   'WHERE pipeline OPERATOR(pg_catalog.=) %L AND window_name OPERATOR(pg_catalog.=) %L '
                   'AND pg_catalog.octet_length(key) OPERATOR(pg_catalog.<=) 2000',
                   streamforge_internal.aggregate_index_name(name), cols,
                   unit_us, name, spec ->> 'window');
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON streamforge.results '
                   '(streamforge_internal.aggregate_time(window_start, %s)) '
                   'WHERE pipeline OPERATOR(pg_catalog.=) %L AND window_name OPERATOR(pg_catalog.=) %L '
                   'AND pg_catalog.octet_length(key) OPERATOR(pg_catalog.>) 2000',
                   streamforge_internal.aggregate_long_key_index_name(name),
                   unit_us, name, spec ->> 'window');
END
$$;
REVOKE ALL ON FUNCTION streamforge_internal.aggregate_make_indexes(text, bigint, jsonb) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.aggregate_make_indexes(text, bigint, jsonb) IS
    'makes the indexes of an aggregate on streamforge.results (internal helper)';

-- The SQL types of the aggregates create_aggregate makes (issue 37): any
-- other type a registry row names is refused (22023) before it becomes a
-- column of a view or of the table of its results.
CREATE OR REPLACE FUNCTION streamforge_internal.aggregate_value_type_check(typ regtype)
RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF typ IS NULL OR typ <> ALL (ARRAY['smallint', 'integer', 'bigint', 'numeric',
                                        'double precision']::regtype[]) THEN
        RAISE EXCEPTION 'invalid aggregate definition'
            USING ERRCODE = '22023',
                  DETAIL = format('An aggregate of type %s is not one create_aggregate makes.', typ);
    END IF;
END
$$;
REVOKE ALL ON FUNCTION streamforge_internal.aggregate_value_type_check(regtype) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.aggregate_value_type_check(regtype) IS
    'refuses a type that is not one of an aggregate create_aggregate makes (internal helper)';

-- The table of an aggregate's durable results (0.4.0, issue 42 item 2;
-- docs/design/typed-results.md): streamforge_results.a<results_id>, a
-- number drawn from streamforge.aggregate_results_seq, never a caller's
-- text.  Quoted and qualified.
CREATE OR REPLACE FUNCTION streamforge_internal.aggregate_results_table(results_id bigint)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN pg_catalog.format('streamforge_results.%I', 'a' OPERATOR(pg_catalog.||) results_id);
REVOKE ALL ON FUNCTION streamforge_internal.aggregate_results_table(bigint) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.aggregate_results_table(bigint) IS
    'the name of the table of an aggregate''s results (internal helper)';

-- Make the table of an aggregate's results, unless it exists (pg_restore
-- made it, and will make its indexes): returns whether it made it.
-- Columns (positional names, so that no alias of the view collides with
-- a bookkeeping column and no caller's text names a column):
--   key            the engine's key, exact (the sink's address);
--   k<part>        each GROUP BY column the view shows, typed;
--   window_start, window_end   the bounds as the view shows them (NULL
--                  outside timestamptz's range);
--   a<i>           each aggregate of the view, typed (a one-measure
--                  pipeline's generated from count, sum, min, max);
--   final, seq, epoch          as in streamforge.results;
--   start_u, end_u the bounds in the pipeline's units (the address);
--   count, sum, min, max       the engine's aggregate of the row, as in
--                  streamforge.results (resync_outputs compares them).
-- Indexes: the sink's address (start_u and a hash of the key: keys of any
-- length), the readers' (the leading GROUP BY columns of scalar types,
-- then window_start, for keys of at most 2000 bytes; longer keys by
-- window_start), and the rows 'update' mode has to mark final.  Every
-- piece is checked: types through aggregate_type_ok and a fixed list,
-- collations through regcollation, numbers as numbers.
CREATE OR REPLACE FUNCTION streamforge_internal.aggregate_make_table(results_id bigint, spec jsonb)
RETURNS boolean
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t text := streamforge_internal.aggregate_results_table(results_id);
    n text := 'a' || results_id;
    cols text := '';
    aggs text := '';
    idx text := '';
    lead boolean := true;
    k jsonb;
    a jsonb;
    i bigint;
    typ regtype;
BEGIN
    IF results_id IS NULL OR results_id <= 0 OR spec IS NULL THEN
        RAISE EXCEPTION 'invalid aggregate definition' USING ERRCODE = '22023';
    END IF;
    IF pg_catalog.to_regclass(t) IS NOT NULL THEN
        RETURN false;
    END IF;
    FOR k IN SELECT e.value FROM jsonb_array_elements(spec -> 'keys') WITH ORDINALITY AS e
              ORDER BY e.ordinality
    LOOP
        typ := (k ->> 'type')::regtype;
        -- never a domain: the table is the owner's (issue 37)
        IF NOT streamforge_internal.aggregate_type_ok(typ) THEN
            RAISE EXCEPTION 'invalid aggregate definition'
                USING ERRCODE = '22023',
                      DETAIL = format('A key of type %s cannot be decoded by the views.', typ);
        END IF;
        cols := cols || format('%I %s%s, ', 'k' || (k ->> 'part')::integer, typ,
                               CASE WHEN k ->> 'collation' IS NULL THEN ''
                                    ELSE format(' COLLATE %s', (k ->> 'collation')::regcollation) END);
        -- scalar types whose stored value is not longer than its text by
        -- more than a header, so that a key of 2000 bytes fits an entry
        IF lead AND typ = ANY (ARRAY['text', 'character varying', 'character',
                  'name', 'smallint', 'integer', 'bigint', 'boolean', 'uuid', 'numeric',
                  'timestamp with time zone', 'timestamp without time zone', 'date',
                  'real', 'double precision']::regtype[]) THEN
            idx := idx || format('%I, ', 'k' || (k ->> 'part')::integer);
        ELSE
            lead := false;
        END IF;
    END LOOP;
    FOR a, i IN SELECT e.value, e.ordinality FROM jsonb_array_elements(spec -> 'aggregates') WITH ORDINALITY AS e
                 ORDER BY e.ordinality
    LOOP
        typ := (a ->> 'type')::regtype;
        PERFORM streamforge_internal.aggregate_value_type_check(typ);
        IF COALESCE((spec ->> 'measures')::boolean, false) THEN
            aggs := aggs || format('%I %s, ', 'a' || i, typ);
        ELSE
            -- a one-measure pipeline's: computed from count, sum, min and
            -- max as 0.3.0's view computed them (results.avg for avg)
            aggs := aggs || format('%I %s GENERATED ALWAYS AS (%s) STORED, ', 'a' || i, typ,
                CASE a ->> 'func'
                    WHEN 'count' THEN 'count'
                    WHEN 'sum' THEN format('(sum)::%s', typ)
                    WHEN 'min' THEN format('(min)::%s', typ)
                    WHEN 'max' THEN format('(max)::%s', typ)
                    WHEN 'avg' THEN format('(sum OPERATOR(pg_catalog./) (CASE WHEN count '
                                           'OPERATOR(pg_catalog.=) 0 THEN NULL ELSE count '
                                           'END)::pg_catalog.numeric)::%s', typ)
                END);
            IF a ->> 'func' IS NULL OR a ->> 'func' <> ALL (ARRAY['count', 'sum', 'min', 'max', 'avg']) THEN
                RAISE EXCEPTION 'invalid aggregate definition' USING ERRCODE = '22023';
            END IF;
        END IF;
    END LOOP;
    EXECUTE format('CREATE TABLE %s (key text COLLATE "C" NOT NULL, %s'
                   'window_start timestamptz, window_end timestamptz, %s'
                   'final boolean NOT NULL DEFAULT false, seq bigint, '
                   'epoch bigint NOT NULL DEFAULT 1, start_u bigint NOT NULL, '
                   'end_u bigint NOT NULL, count bigint NOT NULL, sum numeric NOT NULL, '
                   'min bigint NOT NULL, max bigint NOT NULL)', t, cols, aggs);
    -- (no grant: a new table's privileges are its owner's alone)
    EXECUTE format('CREATE INDEX %I ON %s (start_u, pg_catalog.hashtextextended(key, 0::pg_catalog.int8))',
                   n || '_address', t);
    EXECUTE format('CREATE INDEX %I ON %s (%swindow_start) '
                   'WHERE pg_catalog.octet_length(key) OPERATOR(pg_catalog.<=) 2000',
                   n || '_keys', t, idx);
    EXECUTE format('CREATE INDEX %I ON %s (window_start) '
                   'WHERE pg_catalog.octet_length(key) OPERATOR(pg_catalog.>) 2000',
                   n || '_long', t);
    EXECUTE format('CREATE INDEX %I ON %s (end_u) WHERE NOT final', n || '_open', t);
    EXECUTE format('COMMENT ON TABLE %s IS %L', t,
                   'results of a streamforge aggregate (streamforge.aggregate.results_id), read through its views');
    RETURN true;
END
$$;
REVOKE ALL ON FUNCTION streamforge_internal.aggregate_make_table(bigint, jsonb) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.aggregate_make_table(bigint, jsonb) IS
    'makes the table of an aggregate''s results (internal helper)';

-- The row trigger of streamforge.aggregate: the aggregate's indexes on
-- streamforge.results, made with the row (create_aggregate, pg_restore),
-- dropped with it (drop_aggregate, drop_pipeline's cascade); on a restore,
-- the results view made again in this version's form.
CREATE OR REPLACE FUNCTION streamforge_internal.aggregate_index()
RETURNS trigger
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    left_views text;
BEGIN
    IF TG_OP = 'DELETE' THEN
        IF OLD.results_id IS NOT NULL THEN
            -- the table of its results (0.4.0): the results view reads it,
            -- so drop_pipeline drops the views with it, and says so
            SELECT pg_catalog.string_agg(format('%I.%I', OLD.view_schema, v.name), ', ' ORDER BY v.ord)
              INTO left_views
              FROM (VALUES (1, OLD.view_name || '_top'), (2, OLD.view_name),
                           (3, OLD.view_name || '_live'), (4, OLD.view_name || '_late')) AS v (ord, name)
             WHERE pg_catalog.to_regclass(format('%I.%I', OLD.view_schema, v.name)) IS NOT NULL;
            IF left_views IS NOT NULL THEN
                EXECUTE format('DROP VIEW %s', left_views);
                RAISE NOTICE 'dropped the views of aggregate "%": %', OLD.name, left_views
                    USING DETAIL = 'They read the results of a pipeline that no longer exists.';
            END IF;
            EXECUTE format('DROP TABLE IF EXISTS %s',
                           streamforge_internal.aggregate_results_table(OLD.results_id));
            RETURN NULL;
        END IF;
        -- an aggregate of 0.3.0 whose rows are in streamforge.results
        EXECUTE format('DROP INDEX IF EXISTS streamforge.%I, streamforge.%I',
                       streamforge_internal.aggregate_index_name(OLD.name),
                       streamforge_internal.aggregate_long_key_index_name(OLD.name));
        -- drop_pipeline of an aggregate (drop_aggregate drops the views
        -- first): the views stay, and say so (issue 45, item 5); a top-N's
        -- <name>_top reads <name>, so it is named, and dropped, first
        SELECT pg_catalog.string_agg(format('%I.%I', OLD.view_schema, v.name), ', ' ORDER BY v.ord)
          INTO left_views
          FROM (VALUES (1, OLD.view_name || '_top'), (2, OLD.view_name),
                       (3, OLD.view_name || '_live'), (4, OLD.view_name || '_late')) AS v (ord, name)
         WHERE pg_catalog.to_regclass(format('%I.%I', OLD.view_schema, v.name)) IS NOT NULL;
        IF left_views IS NOT NULL THEN
            RAISE NOTICE 'the views of aggregate "%" stay: %', OLD.name, left_views
                USING DETAIL = 'They read a pipeline that no longer exists (streamforge.drop_aggregate drops an aggregate with its views).',
                      HINT = format('Drop them with DROP VIEW IF EXISTS %s;', left_views);
        END IF;
        RETURN NULL;
    END IF;
    IF NEW.results_id IS NOT NULL THEN
        -- (0.4.0) the table of its results; on pg_restore it exists
        -- already, and its indexes come after the rows
        PERFORM streamforge_internal.aggregate_make_table(NEW.results_id, NEW.spec);
    ELSE
        PERFORM streamforge_internal.aggregate_make_indexes(NEW.name, NEW.unit_us, NEW.spec);
    END IF;
    -- pg_restore: the view it made is the dumped one, maybe of 0.3.0 (one
    -- branch, which the partial indexes cannot serve): made again in this
    -- version's form.  (create_aggregate inserts the row before it makes
    -- the views.)
    IF pg_catalog.to_regclass(format('%I.%I', NEW.view_schema, NEW.view_name)) IS NOT NULL THEN
        PERFORM streamforge_internal.aggregate_results_view(NEW.name, NEW.view_schema, NEW.view_name,
                                                            NEW.unit_us, NEW.spec, true);
    END IF;
    RETURN NULL;
END
$$;
REVOKE ALL ON FUNCTION streamforge_internal.aggregate_index() FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.aggregate_index() IS
    'trigger of streamforge.aggregate: makes and drops an aggregate''s index on streamforge.results';

CREATE OR REPLACE TRIGGER aggregate_index
    AFTER INSERT OR DELETE ON streamforge.aggregate
    FOR EACH ROW EXECUTE FUNCTION streamforge_internal.aggregate_index();

-- The view of an aggregate's durable results (streamforge.results): the
-- key columns, window_start and window_end, the aggregates, and final (the
-- results row's own flag; in emit => 'final' mode every row is final).
-- Two branches of a UNION ALL, one per index of aggregate_make_indexes
-- (keys of at most 2000 bytes, and longer ones), each with its index's
-- predicate, so that a condition on the key columns and window_start is
-- an index condition of the first and the second scans the long keys'
-- rows of the time range only.  Every read is gated by
-- aggregate_readable(pipeline).  or_replace: the update from 0.3.0, whose
-- views had one branch (same columns).
CREATE OR REPLACE FUNCTION streamforge_internal.aggregate_results_view(pipeline text,
    view_schema text, view_name text, unit_us bigint, spec jsonb, or_replace boolean)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    w text := spec ->> 'window';
    k jsonb;
    a jsonb;
    keys_r text := '';
    aggs_r text := '';
    typ regtype;
    f text;
    branch text;
    measures boolean := COALESCE((spec ->> 'measures')::boolean, false);
    rid bigint;
    i bigint;
BEGIN
    FOR k IN SELECT e.value FROM jsonb_array_elements(spec -> 'keys') WITH ORDINALITY AS e
              ORDER BY e.ordinality
    LOOP
        -- never a domain: the views and the index are the owner's (issue 37)
        IF NOT streamforge_internal.aggregate_type_ok((k ->> 'type')::regtype) THEN
            RAISE EXCEPTION 'invalid aggregate definition'
                USING ERRCODE = '22023',
                      DETAIL = format('A key of type %s cannot be decoded by the views.', (k ->> 'type')::regtype);
        END IF;
        keys_r := keys_r || format('(streamforge_internal.aggregate_key_part(r.key, %s))::%s%s AS %s, ',
                                   (k ->> 'part')::integer, (k ->> 'type')::regtype,
                                   CASE WHEN k ->> 'collation' IS NULL THEN ''
                                        ELSE format(' COLLATE %s', (k ->> 'collation')::regcollation) END,
                                   format('%I', k ->> 'name'));
    END LOOP;
    FOR a IN SELECT e.value FROM jsonb_array_elements(spec -> 'aggregates') WITH ORDINALITY AS e
              ORDER BY e.ordinality
    LOOP
        f := a ->> 'func';
        typ := (a ->> 'type')::regtype;
        PERFORM streamforge_internal.aggregate_value_type_check(typ);
        IF measures THEN
            IF a ->> 'member' IS NULL OR a ->> 'member' !~ '^a[0-9]{1,2}$' THEN
                RAISE EXCEPTION 'invalid aggregate definition' USING ERRCODE = '22023';
            END IF;
            aggs_r := aggs_r || format('(r.aggregates OPERATOR(pg_catalog.->>) %L)::%s AS %I, ',
                                       a ->> 'member', typ, a ->> 'name');
        ELSIF f = 'count' THEN
            aggs_r := aggs_r || format('r.count AS %I, ', a ->> 'name');
        ELSIF f = ANY (ARRAY['sum', 'min', 'max']) THEN
            aggs_r := aggs_r || format('(r.%s)::%s AS %I, ', f, typ, a ->> 'name');
        ELSIF f = 'avg' THEN
            aggs_r := aggs_r || format('(r.avg)::%s AS %I, ', typ, a ->> 'name');
        ELSE
            RAISE EXCEPTION 'invalid aggregate definition' USING ERRCODE = '22023';
        END IF;
    END LOOP;
    -- The two branches read the rows of short and of long keys (one per
    -- index of aggregate_make_indexes, each with its index's length
    -- predicate); the pipeline's filter and the read gate are the view's
    -- own quals, OUTSIDE the UNION ALL: PostgreSQL flattens a UNION ALL
    -- into an append relation whose branches are no security barriers, so
    -- a filter inside them would be ordered by cost with a reader's leaky
    -- function (issue 37, finding 4).  Leakproof conditions on the key
    -- columns and window_start still reach the branches as index
    -- conditions.
    SELECT g.results_id INTO rid FROM streamforge.aggregate AS g
     WHERE g.name OPERATOR(pg_catalog.=) aggregate_results_view.pipeline;
    IF rid IS NOT NULL THEN
        -- (0.4.0, issue 42 item 2) the table of its own: typed columns,
        -- read as they are; the same two branches, each with the
        -- predicate of its index (aggregate_make_table)
        keys_r := '';
        FOR k IN SELECT e.value FROM jsonb_array_elements(spec -> 'keys') WITH ORDINALITY AS e
                  ORDER BY e.ordinality
        LOOP
            keys_r := keys_r || format('r.%I AS %I, ', 'k' || (k ->> 'part')::integer, k ->> 'name');
        END LOOP;
        aggs_r := '';
        FOR a, i IN SELECT e.value, e.ordinality FROM jsonb_array_elements(spec -> 'aggregates') WITH ORDINALITY AS e
                     ORDER BY e.ordinality
        LOOP
            aggs_r := aggs_r || format('r.%I AS %I, ', 'a' || i, a ->> 'name');
        END LOOP;
        branch := 'SELECT r.* FROM ' || streamforge_internal.aggregate_results_table(rid) || ' AS r '
            'WHERE pg_catalog.octet_length(r.key) OPERATOR(pg_catalog.%s) 2000';
        EXECUTE format('CREATE %sVIEW %I.%I WITH (security_barrier) AS SELECT %s'
                       'r.window_start AS window_start, r.window_end AS window_end, %s'
                       'r.final AS final '
                       'FROM (%s UNION ALL %s) AS r '
                       'WHERE streamforge_internal.aggregate_readable(%L)',
                       CASE WHEN or_replace THEN 'OR REPLACE ' ELSE '' END, view_schema, view_name,
                       keys_r, aggs_r, format(branch, '<='), format(branch, '>'), pipeline);
        RETURN;
    END IF;
    branch := 'SELECT r.* FROM streamforge.results AS r '
        'WHERE pg_catalog.octet_length(r.key) OPERATOR(pg_catalog.%s) 2000';
    EXECUTE format('CREATE %sVIEW %I.%I WITH (security_barrier) AS SELECT %s'
                   'streamforge_internal.aggregate_time(r.window_start, %s) AS window_start, '
                   'streamforge_internal.aggregate_time(r.window_end, %s) AS window_end, %s'
                   'r.final AS final '
                   'FROM (%s UNION ALL %s) AS r '
                   'WHERE r.pipeline OPERATOR(pg_catalog.=) %L AND r.window_name OPERATOR(pg_catalog.=) %L '
                   'AND streamforge_internal.aggregate_readable(%L)',
                   CASE WHEN or_replace THEN 'OR REPLACE ' ELSE '' END, view_schema, view_name,
                   keys_r, unit_us, unit_us, aggs_r,
                   format(branch, '<='), format(branch, '>'),
                   pipeline, w, pipeline);
END
$$;
REVOKE ALL ON FUNCTION streamforge_internal.aggregate_results_view(text, text, text, bigint,
    jsonb, boolean) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.aggregate_results_view(text, text, text, bigint, jsonb, boolean) IS
    'creates the view of an aggregate''s durable results, as the extension''s owner (internal helper)';

-- Builds every statement from checked pieces only: names through %I,
-- types through regtype, functions from a fixed list, numbers as numbers;
-- the caller's spec cannot inject SQL.  The views' columns:
--   keys (typed), window_start, window_end, the aggregates, final.
CREATE OR REPLACE FUNCTION streamforge_internal.aggregate_register_internal(pipeline text,
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
    keys_l text := '';
    keys_e text := '';
    aggs_l text := '';
    col text;
    coll text;
    typ regtype;
    f text;
    measures boolean := COALESCE((spec ->> 'measures')::boolean, false);
BEGIN
    IF w IS NULL OR NOT EXISTS (SELECT FROM streamforge_internal.window_kinds() AS wk
                                WHERE wk.marker = w) OR unit_us IS NULL
       OR unit_us <= 0 OR view_schema IS NULL OR view_name IS NULL OR query IS NULL
       OR source IS NULL THEN
        RAISE EXCEPTION 'invalid aggregate definition' USING ERRCODE = '22023';
    END IF;
    FOR k IN SELECT e.value FROM jsonb_array_elements(spec -> 'keys') WITH ORDINALITY AS e
              ORDER BY e.ordinality
    LOOP
        -- never a domain: the views and the index are the owner's (issue 37)
        IF NOT streamforge_internal.aggregate_type_ok((k ->> 'type')::regtype) THEN
            RAISE EXCEPTION 'invalid aggregate definition'
                USING ERRCODE = '22023',
                      DETAIL = format('A key of type %s cannot be decoded by the views.', (k ->> 'type')::regtype);
        END IF;
        typ := (k ->> 'type')::regtype;
        col := format('%I', k ->> 'name');
        coll := CASE WHEN k ->> 'collation' IS NULL THEN ''
                     ELSE format(' COLLATE %s', (k ->> 'collation')::regcollation) END;
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
        PERFORM streamforge_internal.aggregate_value_type_check(typ);
        IF measures THEN
            -- a measures pipeline: the member of the aggregates jsonb
            IF a ->> 'member' IS NULL OR a ->> 'member' !~ '^a[0-9]{1,2}$' THEN
                RAISE EXCEPTION 'invalid aggregate definition' USING ERRCODE = '22023';
            END IF;
            aggs_l := aggs_l || format('(l.aggregates OPERATOR(pg_catalog.->>) %L)::%s AS %I, ',
                                       a ->> 'member', typ, a ->> 'name');
        ELSIF f = 'count' THEN
            aggs_l := aggs_l || format('l.count AS %I, ', a ->> 'name');
        ELSIF f = ANY (ARRAY['sum', 'min', 'max']) THEN
            aggs_l := aggs_l || format('(l.%s)::%s AS %I, ', f, typ, a ->> 'name');
        ELSIF f = 'avg' THEN
            aggs_l := aggs_l || format('(l.sum OPERATOR(pg_catalog./) l.count::pg_catalog.numeric)::%s AS %I, ',
                                       typ, a ->> 'name');
        ELSE
            RAISE EXCEPTION 'invalid aggregate definition' USING ERRCODE = '22023';
        END IF;
    END LOOP;

    -- its row, whose trigger makes the table of its results (0.4.0)
    INSERT INTO streamforge.aggregate (name, query, source, view_schema, view_name, unit_us, spec,
                                       results_id)
    VALUES (pipeline, query, source, view_schema, view_name, unit_us, spec,
            pg_catalog.nextval('streamforge.aggregate_results_seq'::pg_catalog.regclass));

    -- the durable results
    PERFORM streamforge_internal.aggregate_results_view(pipeline, view_schema, view_name,
                                                        unit_us, spec, false);
    -- the live buckets, emitted or not
    EXECUTE format(
        'CREATE VIEW %I.%I WITH (security_barrier) AS SELECT %s'
        'streamforge_internal.aggregate_time(l.window_start, %s) AS window_start, '
        'streamforge_internal.aggregate_time(l.window_end, %s) AS window_end, %s'
        'false AS final '
        'FROM streamforge.%s(%L) AS l WHERE l.window_name OPERATOR(pg_catalog.=) %L',
        view_schema, view_name || '_live', keys_l, unit_us, unit_us, aggs_l,
        CASE WHEN measures THEN 'live_aggregates' ELSE 'live' END, pipeline, w);
    -- the late events
    EXECUTE format(
        'CREATE VIEW %I.%I WITH (security_barrier) AS SELECT e.late_seq, %s'
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
    -- a top-N (issue 44): the view <name>_top (67_aggregates_top.sql)
    IF spec ? 'top' THEN
        PERFORM streamforge_internal.aggregate_top_register(pipeline, view_schema, view_name, spec);
    END IF;
END
$$;
REVOKE ALL ON FUNCTION streamforge_internal.aggregate_register_internal(text, text, text,
    regclass, text, bigint, jsonb) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.aggregate_register_internal(text, text, text,
    regclass, text, bigint, jsonb) IS
    'records an aggregate and creates its views, as the extension''s owner (internal helper)';

