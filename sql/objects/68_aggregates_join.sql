-- streamforge objects: joins of create_aggregate's query with dimension
-- tables (0.4.0, issue 47; docs/joins.md).
--
-- src/api/aggregate_join.c rewrites the analyzed query's joins into calls
-- of the lookups below in the attachment's mapping expressions; each call
-- probes the dimension's unique index with the event's key (and time, as
-- of event time), in the inserting statement's snapshot, with the
-- privileges of the aggregate's creator (checked at every statement,
-- src/api/aggregate_join_lookup.c).  They run as the inserting role and
-- must be callable by it: EXECUTE to PUBLIC, listed in docs/security.md.
-- A direct call reads a dimension only for a caller with the ingest
-- privilege on the aggregate, and only the columns its query read.

-- join_value(NULL::T, pipeline, join, column, at, keys...): the column of
-- the dimension row, NULL if none.  STABLE: it reads a table in the
-- statement's snapshot.  Its cost keeps the planner from evaluating it
-- before cheaper conditions.
CREATE OR REPLACE FUNCTION streamforge_internal.join_value(typ anyelement,
    pipeline text, join_no integer, "column" text, at timestamptz,
    VARIADIC keys "any")
RETURNS anyelement
AS 'MODULE_PATHNAME', 'sf_join_value'
LANGUAGE C STABLE PARALLEL RESTRICTED COST 100;
COMMENT ON FUNCTION streamforge_internal.join_value(anyelement, text, integer, text, timestamptz, "any") IS
    'a column of the dimension row of an aggregate''s join, by the dimension''s unique index (internal helper of attachments)';

-- join_found(pipeline, join, at, keys...): whether the dimension has the
-- row; false drops the event (an inner join) and counts it.
CREATE OR REPLACE FUNCTION streamforge_internal.join_found(pipeline text,
    join_no integer, at timestamptz, VARIADIC keys "any")
RETURNS boolean
AS 'MODULE_PATHNAME', 'sf_join_found'
LANGUAGE C STABLE PARALLEL RESTRICTED COST 100;
COMMENT ON FUNCTION streamforge_internal.join_found(text, integer, timestamptz, "any") IS
    'whether the dimension row of an aggregate''s inner join exists; false drops the event (internal helper of attachments)';

-- join_stats(): this session's counters of the joins it looked up.
CREATE OR REPLACE FUNCTION streamforge.join_stats(OUT pipeline text,
    OUT join_no integer, OUT dimension text, OUT probes bigint,
    OUT misses bigint, OUT dropped bigint, OUT directory_hits bigint,
    OUT directory_keys bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'sf_join_stats'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION streamforge.join_stats() IS
    'the current session''s counters of the dimension lookups of aggregates: lookups, misses, events dropped by inner joins, lookups answered by the directory of the dimension''s rows, the keys in that directory';
