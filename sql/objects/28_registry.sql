-- streamforge: the operations tables of window kinds and aggregate
-- functions (issue 41, item 1; src/engine/window_ops.h, agg_ops.h), shown
-- to SQL by src/api/registry.c.  The SQL that needs a kind's params or a
-- function's facts reads them here instead of a list of its own; the
-- regress test ops_registry ties each kind's and function's SQL objects to
-- them.  Before the views and functions that call them.

CREATE OR REPLACE FUNCTION streamforge_internal.window_kinds(
    OUT kind text, OUT params text[], OUT merging boolean, OUT marker text,
    OUT marker_proc text, OUT marker_args text[])
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'sf_window_kinds_srf'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION streamforge_internal.window_kinds() IS
    'the window kinds: their params (size, step, gap), whether their buckets merge, their create_aggregate marker';

CREATE OR REPLACE FUNCTION streamforge_internal.aggregate_functions(
    OUT name text, OUT arg text, OUT sql_type regtype, OUT classic boolean,
    OUT pg_names text[], OUT from_filter boolean, OUT pg_distinct boolean)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'sf_aggregate_functions_srf'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION streamforge_internal.aggregate_functions() IS
    'the aggregate functions of measures pipelines: argument form, SQL type, whether a one-measure pipeline computes it, the pg_catalog aggregates create_aggregate maps onto it (as agg(DISTINCT x) if pg_distinct)';

CREATE OR REPLACE FUNCTION streamforge_internal.window_params(kind text,
    size bigint, step bigint, gap bigint)
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'sf_window_params'
LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION streamforge_internal.window_params(text, bigint, bigint, bigint) IS
    'the values of the params a window kind takes, in order';

CREATE OR REPLACE FUNCTION streamforge_internal.window_from_marker(marker text,
    name text, vals bigint[])
RETURNS streamforge.window_def
AS 'MODULE_PATHNAME', 'sf_window_from_marker'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION streamforge_internal.window_from_marker(text, text, bigint[]) IS
    'the window of a create_aggregate marker (tumble, hop, session) with its arguments in units, in order';
