-- streamforge objects: pipelines defined by a query
-- (0.3.0, issue 29; docs/aggregates-sql.md).
--
--   SELECT streamforge.create_aggregate('clicks_per_minute', $$
--       SELECT page, count(*) AS clicks FROM clicks WHERE status = 'ok'
--        GROUP BY page, streamforge.tumble(clicked_at, interval '1 minute')
--   $$, lateness => interval '30 seconds');
--
-- The query is parsed and analyzed by PostgreSQL's parser and checked in C
-- (src/api/aggregate_sql.c, streamforge_internal.aggregate_plan), which
-- describes it as jsonb.  aggregate_create (66_aggregates_owner.sql) maps that description to
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
-- Measures: when all the aggregates but count(*) take the same NOT NULL
-- integer expression and are count, sum, min, max or avg, the pipeline has
-- one measure, the attachment's value.  Otherwise (several expressions, a
-- nullable expression, a variance or a standard deviation, a FILTER) it is
-- a measures pipeline (docs/aggregates.md): one measure m1, m2, ... per
-- distinct expression, "mN NULL" for a nullable one (agg(x) FILTER (WHERE
-- f) is agg over CASE WHEN f THEN x END; count(*) FILTER is count_if),
-- attached with attach(..., measures =>), and
-- aggregates a1, a2, ... which the views read as
-- (aggregates ->> 'aN')::<PostgreSQL's type of the aggregate>.

-- ----------------------------------------------------------------
-- The window markers of the query
-- ----------------------------------------------------------------

-- tumble(ts, size): the start of ts's fixed window, aligned to the Unix
-- epoch (so that the query also runs as a plain query).
CREATE OR REPLACE FUNCTION streamforge.tumble(ts timestamptz, size interval)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'sf_tumble'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION streamforge.tumble(timestamptz, interval) IS
    'in the query of create_aggregate: fixed windows of size; elsewhere: the window start of ts';

-- hop(ts, size, slide): only in create_aggregate's query
CREATE OR REPLACE FUNCTION streamforge.hop(ts timestamptz, size interval, slide interval)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'sf_window_marker'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION streamforge.hop(timestamptz, interval, interval) IS
    'in the query of create_aggregate: sliding windows of size every slide';

-- streamforge.session(ts, gap) in the query: the window constructor
-- streamforge.session(name, gap) already has the name, and the extension
-- keeps one function per name (session('g', NULL) would be ambiguous), so
-- aggregate_plan renames the call to this marker before analysis.
CREATE OR REPLACE FUNCTION streamforge_internal.session_window(ts timestamptz, gap interval)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'sf_window_marker'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
REVOKE ALL ON FUNCTION streamforge_internal.session_window(timestamptz, interval) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.session_window(timestamptz, interval) IS
    'streamforge.session(ts, gap) in the query of create_aggregate: session windows closed by a gap';

-- ----------------------------------------------------------------
-- Helpers (C, src/api/aggregate_sql.c)
-- ----------------------------------------------------------------

CREATE OR REPLACE FUNCTION streamforge_internal.aggregate_plan(query text)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'sf_aggregate_plan'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION streamforge_internal.aggregate_plan(text) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.aggregate_plan(text) IS
    'the query of create_aggregate, analyzed, checked and described (internal helper)';

CREATE OR REPLACE FUNCTION streamforge_internal.aggregate_key_part(key text, i integer)
RETURNS text
AS 'MODULE_PATHNAME', 'sf_aggregate_key_part'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION streamforge_internal.aggregate_key_part(text, integer) IS
    'part i of the key of an aggregate (internal helper)';

CREATE OR REPLACE FUNCTION streamforge_internal.aggregate_time(t bigint, unit_us bigint)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'sf_aggregate_time'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION streamforge_internal.aggregate_time(bigint, bigint) IS
    'units of unit_us microseconds since the Unix epoch as a timestamp (internal helper)';

-- ----------------------------------------------------------------
-- The registry
-- ----------------------------------------------------------------

-- (The table streamforge.aggregate is in sql/schema/20_tables.sql.)
COMMENT ON TABLE streamforge.aggregate IS
    'the aggregates made by create_aggregate: query, table, views, time unit (read them through streamforge.aggregates)';
REVOKE ALL ON streamforge.aggregate FROM PUBLIC;

-- The name of an aggregate's index on streamforge.results.
CREATE OR REPLACE FUNCTION streamforge_internal.aggregate_index_name(name text)
RETURNS name
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN ('results_aggregate_' OPERATOR(pg_catalog.||) pg_catalog.left(pg_catalog.md5(name), 16))::pg_catalog.name;
REVOKE ALL ON FUNCTION streamforge_internal.aggregate_index_name(text) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.aggregate_index_name(text) IS
    'the name of the index of an aggregate on streamforge.results (internal helper)';

-- The indexes (aggregate_make_indexes) and the row trigger that makes
-- them: 66_aggregates_views.sql.

-- The aggregates the current user may read (those of the pipelines it may
-- read), with their defining query.  Runs as its owner, which may read
-- streamforge.aggregate; security_barrier keeps a caller's functions from
-- seeing rows before the privilege filter.
CREATE OR REPLACE VIEW streamforge.aggregates WITH (security_barrier) AS
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
CREATE OR REPLACE FUNCTION streamforge_internal.aggregate_readable(pipeline text)
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

CREATE OR REPLACE FUNCTION streamforge_internal.aggregate_register(pipeline text, view_schema text,
    view_name text, source regclass, query text, unit_us bigint, spec jsonb)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_aggregate_register'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION streamforge_internal.aggregate_register(text, text, text, regclass, text, bigint, jsonb) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.aggregate_register(text, text, text, regclass, text, bigint, jsonb) IS
    'records an aggregate and creates its views (called by create_aggregate; needs admin on the pipeline, CREATE on the schema and ownership of the table)';

-- aggregate_register_internal, the views and the indexes: 66_aggregates_views.sql

CREATE OR REPLACE FUNCTION streamforge_internal.aggregate_unregister(pipeline text)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_aggregate_unregister'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge_internal.aggregate_unregister(text) IS
    'drops the views and the record of an aggregate, not its pipeline (called by drop_aggregate; admin)';

CREATE OR REPLACE FUNCTION streamforge_internal.aggregate_unregister_internal(pipeline text)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    a record;
BEGIN
    SELECT g.view_schema, g.view_name, g.spec INTO a
      FROM streamforge.aggregate AS g WHERE g.name = pipeline FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'pipeline "%" is not an aggregate', pipeline
            USING ERRCODE = '42704',
                  HINT = 'Drop it with streamforge.drop_pipeline().';
    END IF;
    -- a top-N's view first, which reads <name> (67_aggregates_top.sql)
    IF a.spec ? 'top' THEN
        EXECUTE format('DROP VIEW IF EXISTS %I.%I', a.view_schema, a.view_name || '_top');
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

-- drop_aggregate(name): the views, the record, then the pipeline (which
-- detaches the table).  Admin.
CREATE OR REPLACE FUNCTION streamforge.drop_aggregate(name text)
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
CREATE OR REPLACE FUNCTION streamforge.alter_aggregate(name text,
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
