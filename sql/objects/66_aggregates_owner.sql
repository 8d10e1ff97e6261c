-- streamforge objects: what create_aggregate runs, and
-- what runs as the extension's owner for it (issue 37; the rest of the
-- aggregates is 65_aggregates.sql).  aggregate_create's result changed
-- (0.3.0: void), and both it and create_aggregate have an argument more,
-- idle_timeout (issue 45): sql/migrations/0.4.0.sql drops the old ones
-- first.
--
-- Security (docs/security.md, "What runs as the extension's owner"):
-- 0.3.0 let any role with USAGE call aggregate_create and
-- aggregate_register with a plan or spec of its own; a key "type" naming a
-- domain whose CHECK called the role's function went into an index of
-- streamforge.results, where the CHECK ran as the extension's owner.  Now
--   - create_aggregate is C: it analyzes the query, calls aggregate_create
--     (as the caller) and aggregate_register (admin on the pipeline, CREATE
--     on the schema, ownership of the table, as the caller; then
--     aggregate_register_internal as the owner) through fmgr; none of them
--     is EXECUTE-able by PUBLIC;
--   - the planner describes a domain key by its base type, and refuses a
--     key type whose text input could run anybody's code (composite,
--     range, array of a domain);
--   - aggregate_register_internal and the index trigger check every type
--     the row names again, as the owner (aggregate_type_ok; aggregates:
--     only the integer and numeric types create_aggregate makes; index
--     keys: a fixed list of built-in types, whatever the row says);
--   - the views are security barriers (finding 4): a reader's function in
--     WHERE never sees a row before the view's pipeline filter.

-- Whether an aggregate's views and index may decode a key of the type: a
-- base type or an enum, or an array of one; never a domain, whose CHECK
-- would run as the extension's owner (issue 37).  The check, as the
-- extension's owner, of every type a registry row names.
CREATE OR REPLACE FUNCTION streamforge_internal.aggregate_type_ok(typ regtype)
RETURNS boolean
AS 'MODULE_PATHNAME', 'sf_aggregate_type_ok'
LANGUAGE C STABLE STRICT PARALLEL SAFE;
REVOKE ALL ON FUNCTION streamforge_internal.aggregate_type_ok(regtype) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.aggregate_type_ok(regtype) IS
    'whether an aggregate''s views and index may decode a key of the type: never a domain (internal helper)';

-- The row trigger of streamforge.aggregate (aggregate_index) and
-- aggregate_register_internal are in 66_aggregates_views.sql, which
-- applies the same checks: index columns from a fixed list of types,
-- never a domain as a key, integer aggregate types only, security-barrier
-- views.

-- create_aggregate(name, query, ...): C (src/api/aggregate_sql.c), as the
-- caller: the query is analyzed in the caller's search_path
-- (aggregate_plan), mapped by aggregate_create, registered by
-- aggregate_register; those helpers are closed to PUBLIC (issue 37), the C
-- function calls them with what it produced itself.  The views go in the
-- caller's current schema.
-- idle_timeout (0.4.0, issue 45) is create_pipeline's: NULL never marks a
-- partition idle by itself (docs/progress.md); appended, so the old
-- signature is dropped by sql/migrations/0.4.0.sql.  So is writers (0.4.0,
-- issue 46): create_pipeline's, 'parallel' only with several partitions.
CREATE OR REPLACE FUNCTION streamforge.create_aggregate(name text, query text,
    lateness interval DEFAULT '00:00:00', out_of_orderness interval DEFAULT NULL,
    emit text DEFAULT 'update', event_id text DEFAULT NULL,
    partition text DEFAULT NULL, partitions text[] DEFAULT NULL,
    retention interval DEFAULT NULL, idle_timeout interval DEFAULT NULL,
    writers text DEFAULT 'serial')
RETURNS void
AS 'MODULE_PATHNAME', 'sf_create_aggregate'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge.create_aggregate(text, text, interval, interval,
    text, text, text, text[], interval, interval, text) IS
    'creates a pipeline, its attachment and its views from a GROUP BY query over a table';

-- The mapping of an analyzed query to a pipeline, as the caller (called by
-- create_aggregate only).
CREATE OR REPLACE FUNCTION streamforge_internal.aggregate_create(name text, query text,
    plan jsonb, view_schema text, lateness interval, out_of_orderness interval,
    emit text, event_id text, partition text, partitions text[],
    retention interval, idle_timeout interval DEFAULT NULL,
    writers text DEFAULT 'serial')
RETURNS jsonb
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
                        (SELECT k.args[CASE WHEN size_us <= 0 THEN 1 ELSE 2 END]
                           FROM streamforge_internal.window_kinds() AS k(k_kind, k_params,
                                    k_merging, k_marker, k_proc, args)
                          WHERE k.k_marker = kind)
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
        -- max_by(x, y), min_by(x, y): the order y is a measure too (issue 44)
        IF a ->> 'arg2' IS NOT NULL AND a ->> 'arg2' <> ALL (exprs) THEN
            exprs := exprs || (a ->> 'arg2');
            IF (a ->> 'arg2_type')::regtype <> ALL (ARRAY['smallint', 'integer', 'bigint']::regtype[]) THEN
                RAISE EXCEPTION 'aggregates over an expression of type % are not supported', (a ->> 'arg2_type')::regtype
                    USING ERRCODE = '0A000',
                          DETAIL = format('The expression %s is of type %s; the engine aggregates integers.', a ->> 'arg2', (a ->> 'arg2_type')::regtype),
                          HINT = 'Aggregate an integer expression, for example the amount in cents.';
            END IF;
            IF NOT (a ->> 'arg2_not_null')::boolean THEN
                nullable := nullable || (a ->> 'arg2');
            END IF;
        END IF;
        IF NOT EXISTS (SELECT FROM streamforge_internal.aggregate_functions() AS f
                        WHERE f.name = a ->> 'func' AND f.classic) THEN
            use_measures := true;
        END IF;
    END LOOP;
    -- a nullable expression (a nullable column, agg(x) FILTER (WHERE f)
    -- described as agg over CASE WHEN f THEN x END): a nullable measure
    -- "mN NULL" of a measures pipeline, whose aggregates ignore its NULLs
    -- as SQL's do (issue 38, defect 5).  The first measure is never
    -- nullable (the engine's rule): 1 goes first if it would be.
    use_measures := use_measures OR cardinality(exprs) > 1 OR cardinality(nullable) > 0;
    IF use_measures THEN
        IF cardinality(nullable) > 0 AND exprs[1] = ANY (nullable) THEN
            exprs := ARRAY['1'] || exprs;
        END IF;
        i := 0;
        FOR a IN SELECT e.value FROM jsonb_array_elements(plan -> 'aggregates') WITH ORDINALITY AS e
                  ORDER BY e.ordinality
        LOOP
            i := i + 1;
            engine_aggs := engine_aggs || CASE
                WHEN a ->> 'func' = 'count' AND a ->> 'arg' = ANY (nullable)
                THEN format('count(m%s) AS a%s', array_position(exprs, a ->> 'arg'), i)
                WHEN a ->> 'func' = 'count' THEN format('count AS a%s', i)
                WHEN a ->> 'func' = 'count_if'
                THEN format('count_if(m%s %s %s) AS a%s', array_position(exprs, a ->> 'arg'),
                            a ->> 'filter_op', (a ->> 'filter_value')::bigint, i)
                WHEN a ->> 'arg2' IS NOT NULL
                THEN format('%s(m%s, m%s) AS a%s', a ->> 'func', array_position(exprs, a ->> 'arg'),
                            array_position(exprs, a ->> 'arg2'), i)
                -- a percentile: its fraction in millionths, spelled 0.dddddd or 1
                WHEN a ->> 'fraction_millionths' IS NOT NULL
                THEN format('%s(m%s, %s) AS a%s', a ->> 'func', array_position(exprs, a ->> 'arg'),
                            CASE WHEN (a ->> 'fraction_millionths')::bigint = 1000000 THEN '1'
                                 ELSE '0.' || lpad((a ->> 'fraction_millionths')::bigint::text, 6, '0') END, i)
                ELSE format('%s(m%s) AS a%s', a ->> 'func', array_position(exprs, a ->> 'arg'), i) END;
            aggs := aggs || jsonb_build_object('name', a ->> 'name', 'func', a ->> 'func',
                                               'type', a ->> 'type', 'member', format('a%s', i));
        END LOOP;
        measure_names := ARRAY(SELECT format('m%s', n)
                                      || CASE WHEN exprs[n] = ANY (nullable) THEN ' NULL' ELSE '' END
                                 FROM generate_series(1, cardinality(exprs)) AS n);
    ELSE
        measure := exprs[1];
        FOR a IN SELECT e.value FROM jsonb_array_elements(plan -> 'aggregates') WITH ORDINALITY AS e
                  ORDER BY e.ordinality
        LOOP
            aggs := aggs || jsonb_build_object('name', a ->> 'name', 'func', a ->> 'func',
                                               'type', a ->> 'type');
        END LOOP;
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
    -- parallel writers (issue 46) write different partitions at once; the
    -- inserts of one partition wait for each other's claim of its lane, so
    -- with one partition the mode would only cost (docs/sql-aggregates.md)
    IF writers IS NOT DISTINCT FROM 'parallel' AND cardinality(parts) < 2 THEN
        RAISE EXCEPTION 'an aggregate with writers => ''parallel'' needs several partitions'
            USING ERRCODE = '22023',
                  DETAIL = 'Concurrent inserts into the table write in parallel only when their rows go to different partitions; with one partition they wait for each other as with writers => ''serial''.',
                  HINT = 'Give partitions => the partitions, and partition => an expression of the row that names one of them.';
    END IF;

    -- the window is named after its marker; its params in units, in order
    wdef := streamforge_internal.window_from_marker(kind, kind,
                ARRAY[size_us / unit_us, slide_us / unit_us]);
    PERFORM streamforge.create_pipeline(name, parts, ARRAY[wdef],
        lateness => lateness_us / unit_us, retention => retention_us / unit_us,
        time_unit => unit, emit => emit, out_of_orderness => ooo_us / unit_us,
        idle_timeout => idle_timeout, writers => writers,
        measures => measure_names, aggregates => CASE WHEN use_measures THEN engine_aggs END);
    PERFORM streamforge.configure_outputs(name, changelog => false, results => true,
                                          late => false, notify => false);
    PERFORM streamforge.attach(name, source, event_id => event_id, key => key_expr,
        event_time => win ->> 'time', value => COALESCE(measure, '1'),
        partition => CASE WHEN partition IS NULL THEN NULL ELSE format('(%s)::pg_catalog.text', partition) END,
        filter => filter, measures => CASE WHEN use_measures THEN exprs END);
    -- the views and the registry row: aggregate_register, called by
    -- create_aggregate (C) with this spec
    RETURN jsonb_build_object('unit_us', unit_us, 'spec',
        CASE WHEN use_measures
             THEN jsonb_build_object('window', kind, 'keys', shown, 'aggregates', aggs, 'measures', true)
             ELSE jsonb_build_object('window', kind, 'keys', shown, 'aggregates', aggs) END);
END
$$;
REVOKE ALL ON FUNCTION streamforge_internal.aggregate_create(text, text, jsonb, text,
    interval, interval, text, text, text, text[], interval, interval, text) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.aggregate_create(text, text, jsonb, text,
    interval, interval, text, text, text, text[], interval, interval, text) IS
    'creates the pipeline and attachment of an aggregate, returns its time unit and the spec of its views (internal helper of create_aggregate)';

