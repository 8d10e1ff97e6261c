-- ops_registry: the operations tables of window kinds and aggregate
-- functions (issue 41, item 1; src/engine/window_ops.h, agg_ops.h) as SQL
-- sees them, and the ties between them and the SQL objects, the
-- create_aggregate views and the test model's hand-written lists.  Every
-- check returns the rows that break it: a new kind or function that lacks
-- one of its objects shows here.
SET client_min_messages = warning;

-- the reference tables
SELECT * FROM streamforge_internal.window_kinds();
SELECT * FROM streamforge_internal.aggregate_functions();

-- every kind: its constructor streamforge.<kind>(name, <params>) returning
-- window_def, its <kind>_interval(name, <params> interval), comments on
-- both, and its create_aggregate marker taking ts and one interval per
-- param
SELECT k.kind, 'constructor' AS missing
  FROM streamforge_internal.window_kinds() AS k
 WHERE NOT EXISTS (
        SELECT FROM pg_proc p
         WHERE p.oid = to_regprocedure('streamforge.' || k.kind || '(text'
                                       || repeat(', bigint', cardinality(k.params)) || ')')
           AND p.prorettype = 'streamforge.window_def'::regtype
           AND p.proargnames = ARRAY['name'] || k.params
           AND p.prosrc = 'sf_window_ctor'
           AND obj_description(p.oid, 'pg_proc') IS NOT NULL)
UNION ALL
SELECT k.kind, 'interval constructor'
  FROM streamforge_internal.window_kinds() AS k
 WHERE NOT EXISTS (
        SELECT FROM pg_proc p
         WHERE p.oid = to_regprocedure('streamforge.' || k.kind || '_interval(text'
                                       || repeat(', interval', cardinality(k.params)) || ')')
           AND p.prorettype = 'streamforge.window_def'::regtype
           AND p.proargnames = ARRAY['name'] || k.params
           AND obj_description(p.oid, 'pg_proc') IS NOT NULL)
UNION ALL
SELECT k.kind, 'marker'
  FROM streamforge_internal.window_kinds() AS k
 WHERE NOT EXISTS (
        SELECT FROM pg_proc p
         WHERE p.oid = to_regprocedure(k.marker_proc || '(timestamptz'
                                       || repeat(', interval', cardinality(k.params)) || ')')
           AND cardinality(k.marker_args) = cardinality(k.params));
-- and the functions bound to the constructors' entry point are exactly
-- those: proxy/gen.pl generates the router's window constructors from
-- them (kind window), so the router's kinds are the registry's
-- (test/t/102_proxy_api.pl compares an installed router with a node)
SELECT p.oid::regprocedure AS not_a_kind
  FROM pg_proc p
 WHERE p.prosrc = 'sf_window_ctor'
   AND p.prolang = (SELECT oid FROM pg_language WHERE lanname = 'c')
   AND (p.pronamespace <> 'streamforge'::regnamespace
        OR NOT EXISTS (SELECT FROM streamforge_internal.window_kinds() AS k
                        WHERE k.kind = p.proname));

-- each kind's window from its marker (its params from 20, 5 in order),
-- and the values window_params reads back
SELECT k.kind, x AS window_def,
       streamforge_internal.window_params(x.kind, x.size, x.step, x.gap) AS params
  FROM streamforge_internal.window_kinds() AS k,
       LATERAL streamforge_internal.window_from_marker(k.marker, 'w', ARRAY[20, 5]) AS x
 ORDER BY k.kind;
-- and its checks: the constructors' messages
SELECT streamforge_internal.window_from_marker('hop', 'w', ARRAY[20, 0]);
SELECT streamforge_internal.window_from_marker('hop', 'w', ARRAY[20]);
SELECT streamforge_internal.window_from_marker('cumulate', 'w', ARRAY[20]);
SELECT streamforge_internal.window_params('nope', 1, 2, 3);
SELECT streamforge_internal.window_params(NULL, 1, 2, 3) IS NULL AS null_kind;

-- every function parses (on a nullable measure too) and shows as itself
-- with its SQL type in aggregate_columns
CREATE FUNCTION ops_spelling(name text, arg text) RETURNS text LANGUAGE sql AS $$
    SELECT CASE arg WHEN 'comparison' THEN name || '(m >= 1)'
                    WHEN 'optional_measure' THEN name
                    WHEN 'measure_by_measure' THEN name || '(m, v)'
                    WHEN 'measure_fraction' THEN name || '(m, 0.5)' ELSE name || '(m)' END
$$;
SELECT streamforge.create_pipeline('ops_reg', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    measures => ARRAY['v', 'm NULL'],
    aggregates => ARRAY(SELECT ops_spelling(f.name, f.arg) || ' AS a_' || f.name
                          FROM streamforge_internal.aggregate_functions() AS f));
SELECT f.name, 'aggregate_columns' AS mismatch
  FROM streamforge_internal.aggregate_functions() AS f
 WHERE NOT EXISTS (SELECT FROM streamforge.aggregate_columns('ops_reg') AS c
                    WHERE c.name = 'a_' || f.name AND c.func = f.name
                      AND c.type = f.sql_type);
SELECT streamforge.drop_pipeline('ops_reg');

-- pg_names are pg_catalog aggregates, each mapped onto one function (a
-- name once plain and once as agg(DISTINCT x): count, count_distinct)
SELECT f.name, n AS not_a_pg_aggregate
  FROM streamforge_internal.aggregate_functions() AS f, unnest(f.pg_names) AS n
 WHERE NOT EXISTS (SELECT FROM pg_proc p WHERE p.proname = n AND p.prokind = 'a'
                      AND p.pronamespace = 'pg_catalog'::regnamespace);
SELECT n, f.pg_distinct, count(*) AS mapped_twice
  FROM streamforge_internal.aggregate_functions() AS f, unnest(f.pg_names) AS n
 GROUP BY n, f.pg_distinct HAVING count(*) > 1;
-- one function counts a filter (count(*) FILTER (WHERE x op c))
SELECT count(*) AS from_filter FROM streamforge_internal.aggregate_functions() WHERE from_filter;

-- the classic aggregates (computed from a one-measure pipeline) are those
-- the create_aggregate views compute from count/sum/min/max: each is named
-- in the views' builder, and no other is
SELECT f.name, f.classic,
       position(quote_literal(f.name) IN pg_get_functiondef(
           'streamforge_internal.aggregate_register_internal(text, text, text, regclass, text, bigint, jsonb)'::regprocedure)) > 0 AS in_view_builder
  FROM streamforge_internal.aggregate_functions() AS f
 WHERE f.classic <> (position(quote_literal(f.name) IN pg_get_functiondef(
           'streamforge_internal.aggregate_register_internal(text, text, text, regclass, text, bigint, jsonb)'::regprocedure)) > 0);

-- the test model keeps its own lists (the independent oracle): each kind
-- and function of the registry is in them
\set model `cat test/model/model.sql`
\set ref `cat test/model/ref.sql`
SELECT k.kind, 'test/model/model.sql' AS missing_from
  FROM streamforge_internal.window_kinds() AS k
 WHERE position(quote_literal(k.kind) IN :'model') = 0
UNION ALL
SELECT k.kind, 'test/model/ref.sql'
  FROM streamforge_internal.window_kinds() AS k
 WHERE position(quote_literal(k.kind) IN :'ref') = 0
UNION ALL
SELECT f.name, 'test/model/ref.sql'
  FROM streamforge_internal.aggregate_functions() AS f
 WHERE position(quote_literal(f.name) IN :'ref') = 0
   AND position(chr(39) || f.name || '(' IN :'ref') = 0;
DROP FUNCTION ops_spelling(text, text);
