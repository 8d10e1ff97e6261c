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
--                window_end (timestamptz), the aggregates, final (a UNION
--                ALL of two branches, one per index: 66_aggregates_views.sql);
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
-- The indexes (66_aggregates_views.sql): each row of streamforge.aggregate
-- has two partial indexes on streamforge.results, for keys of at most 2000
-- bytes (their leading key columns whose text input is immutable, then
-- window_start) and for longer ones (window_start), made and dropped by
-- the row trigger aggregate_index.  An index on an extension's table is
-- not dumped by pg_dump; the trigger fires when pg_restore loads
-- streamforge.aggregate's rows, so a restore makes the indexes again.
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

-- The indexes (aggregate_make_indexes) and the row trigger that makes
-- them: 66_aggregates_views.sql.

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

-- aggregate_register_internal, the views and the indexes: 66_aggregates_views.sql

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
