-- streamforge objects: the SQL aggregates that create_aggregate maps onto
-- the engine's and that PostgreSQL 15 lacks (0.4.0, issue 44, items 2, 3
-- and 5; docs/sql-aggregates.md).  In create_aggregate's query they are
-- recognised by name (src/api/aggregate_args.c) and never run; anywhere
-- else they are ordinary aggregates computing the same value in SQL (the
-- reference of the randomized tests):
--   streamforge.max_by(x bigint, y bigint): x of the row of the greatest
--     y; of equal y the smallest x; rows with a NULL x or y skipped;
--   streamforge.min_by(x, y): the same with the smallest y;
--   streamforge.approx_percentile(x bigint, p double precision): here the
--     exact percentile_disc(p) WITHIN GROUP (ORDER BY x) as double
--     precision, which the engine's sketch approximates within 1%;
--   streamforge.approx_count_distinct(x bigint) (since branch h44b): here
--     the exact count(DISTINCT x), which the engine's HyperLogLog sketch
--     gives exactly up to 1024 distinct values and estimates beyond
--     (relative standard error 0.81%).
-- The transition functions are closed to PUBLIC: PostgreSQL checks their
-- EXECUTE as the aggregate's owner.

CREATE OR REPLACE FUNCTION streamforge_internal.max_by_step(s bigint[], x bigint, y bigint)
RETURNS bigint[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN x IS NULL OR y IS NULL THEN s
                WHEN s IS NULL OR y > s[1] OR (y = s[1] AND x < s[2]) THEN ARRAY[y, x]
                ELSE s END
$$;
REVOKE ALL ON FUNCTION streamforge_internal.max_by_step(bigint[], bigint, bigint) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.max_by_step(bigint[], bigint, bigint) IS
    'transition function of streamforge.max_by: {order, value} of the best row (internal helper)';

CREATE OR REPLACE FUNCTION streamforge_internal.min_by_step(s bigint[], x bigint, y bigint)
RETURNS bigint[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN x IS NULL OR y IS NULL THEN s
                WHEN s IS NULL OR y < s[1] OR (y = s[1] AND x < s[2]) THEN ARRAY[y, x]
                ELSE s END
$$;
REVOKE ALL ON FUNCTION streamforge_internal.min_by_step(bigint[], bigint, bigint) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.min_by_step(bigint[], bigint, bigint) IS
    'transition function of streamforge.min_by: {order, value} of the best row (internal helper)';

CREATE OR REPLACE FUNCTION streamforge_internal.by_value(s bigint[])
RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT s[2] $$;
REVOKE ALL ON FUNCTION streamforge_internal.by_value(bigint[]) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.by_value(bigint[]) IS
    'final function of streamforge.max_by and min_by (internal helper)';

-- {fraction in millionths, the values...}
CREATE OR REPLACE FUNCTION streamforge_internal.percentile_step(s bigint[], x bigint, p double precision)
RETURNS bigint[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT COALESCE(s, ARRAY[round(p * 1000000)::bigint])
           || CASE WHEN x IS NULL THEN '{}'::bigint[] ELSE ARRAY[x] END
$$;
REVOKE ALL ON FUNCTION streamforge_internal.percentile_step(bigint[], bigint, double precision) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.percentile_step(bigint[], bigint, double precision) IS
    'transition function of streamforge.approx_percentile: the fraction and the values (internal helper)';

-- percentile_disc's row: ceil(p * n), at least 1 (as PostgreSQL's)
CREATE OR REPLACE FUNCTION streamforge_internal.percentile_final(s bigint[])
RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT (SELECT v FROM unnest(s[2:]) AS v ORDER BY v
             OFFSET greatest(ceil((s[1]::double precision / 1000000)
                                  * (cardinality(s) - 1))::bigint - 1, 0)
             LIMIT 1)::double precision
$$;
REVOKE ALL ON FUNCTION streamforge_internal.percentile_final(bigint[]) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.percentile_final(bigint[]) IS
    'final function of streamforge.approx_percentile (internal helper)';

CREATE OR REPLACE AGGREGATE streamforge.max_by(bigint, bigint) (
    SFUNC = streamforge_internal.max_by_step, STYPE = bigint[],
    FINALFUNC = streamforge_internal.by_value, PARALLEL = SAFE
);
COMMENT ON AGGREGATE streamforge.max_by(bigint, bigint) IS
    'the value of the row of the greatest order (of equal orders the smallest value; NULLs skipped): create_aggregate maps it onto the engine''s max_by';

CREATE OR REPLACE AGGREGATE streamforge.min_by(bigint, bigint) (
    SFUNC = streamforge_internal.min_by_step, STYPE = bigint[],
    FINALFUNC = streamforge_internal.by_value, PARALLEL = SAFE
);
COMMENT ON AGGREGATE streamforge.min_by(bigint, bigint) IS
    'the value of the row of the smallest order (of equal orders the smallest value; NULLs skipped): create_aggregate maps it onto the engine''s min_by';

CREATE OR REPLACE AGGREGATE streamforge.approx_percentile(bigint, double precision) (
    SFUNC = streamforge_internal.percentile_step, STYPE = bigint[],
    FINALFUNC = streamforge_internal.percentile_final, PARALLEL = SAFE
);
COMMENT ON AGGREGATE streamforge.approx_percentile(bigint, double precision) IS
    'percentile_disc(p) as double precision (exact here): create_aggregate maps it onto the engine''s sketch, within 1%';

-- {the non-NULL values...}
CREATE OR REPLACE FUNCTION streamforge_internal.distinct_step(s bigint[], x bigint)
RETURNS bigint[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN x IS NULL THEN s ELSE s || x END
$$;
REVOKE ALL ON FUNCTION streamforge_internal.distinct_step(bigint[], bigint) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.distinct_step(bigint[], bigint) IS
    'transition function of streamforge.approx_count_distinct: the values (internal helper)';

CREATE OR REPLACE FUNCTION streamforge_internal.distinct_final(s bigint[])
RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT count(DISTINCT v) FROM unnest(s) AS v
$$;
REVOKE ALL ON FUNCTION streamforge_internal.distinct_final(bigint[]) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.distinct_final(bigint[]) IS
    'final function of streamforge.approx_count_distinct (internal helper)';

CREATE OR REPLACE AGGREGATE streamforge.approx_count_distinct(bigint) (
    SFUNC = streamforge_internal.distinct_step, STYPE = bigint[], INITCOND = '{}',
    FINALFUNC = streamforge_internal.distinct_final, PARALLEL = SAFE
);
COMMENT ON AGGREGATE streamforge.approx_count_distinct(bigint) IS
    'count(DISTINCT x) (exact here): create_aggregate maps it onto the engine''s HyperLogLog sketch, exact up to 1024 distinct values, then within a relative standard error of 0.81%';
