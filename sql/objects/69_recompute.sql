-- streamforge objects: recomputing an aggregate's live windows with its
-- dimension tables as they are now (0.4.0, issue 47, item 3; docs/joins.md,
-- "Recomputing"; src/api/recompute.c).
--
-- recompute_events / recompute_measures(pipeline, mappings, dropped, from,
-- to): the new mappings of a pipeline's accepted events (streamforge.event
-- or measures_delivery rows, source_offset ignored) and the event_ids that
-- no longer map; the accepted events with event_time in [from, to) (NULL:
-- unbounded) get their new key and value, or are taken out, the live
-- windows are rebuilt and the changes go to the outputs.  C: checks `admin` on the pipeline as the
-- caller (before and after locking its row), as a definition change does.
-- EXECUTE to PUBLIC: streamforge.recompute, which runs as its caller,
-- calls them (docs/security.md).
CREATE OR REPLACE FUNCTION streamforge_internal.recompute_events(pipeline text,
    events streamforge.event[], dropped text[], from_time bigint, to_time bigint,
    OUT mapped bigint, OUT remapped bigint, OUT removed bigint, OUT changes bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'sf_recompute_events'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge_internal.recompute_events(text, streamforge.event[], text[], bigint, bigint) IS
    'gives accepted events of a pipeline new keys and values and rebuilds its live windows (admin; internal helper of recompute)';

CREATE OR REPLACE FUNCTION streamforge_internal.recompute_measures(pipeline text,
    deliveries streamforge.measures_delivery[], dropped text[], from_time bigint,
    to_time bigint, OUT mapped bigint, OUT remapped bigint, OUT removed bigint, OUT changes bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'sf_recompute_measures'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge_internal.recompute_measures(text, streamforge.measures_delivery[], text[], bigint, bigint) IS
    'gives accepted events of a measures pipeline new keys and measures and rebuilds its live windows (admin; internal helper of recompute)';

-- recompute_plan(aggregate, from_time, to_time): what recompute_rows runs,
-- checked as the caller: `admin` on the aggregate, the insert trigger
-- attach() made (by name, enabled, checked by attach_check as each insert
-- checks it), and from it the text of the mapping statement (the trigger's
-- query, attach_insert_query, over the source table) with the range in
-- the aggregate's time unit ([ceil(from), ceil(to))).  It runs nothing of
-- the mapping.  EXECUTE to PUBLIC: recompute_rows calls it as its caller.
CREATE OR REPLACE FUNCTION streamforge_internal.recompute_plan(aggregate text,
    from_time timestamptz, to_time timestamptz, OUT source pg_catalog.regclass,
    OUT measures boolean, OUT query text, OUT from_unit bigint, OUT to_unit bigint)
RETURNS record
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    trig name;
    args text[];
    us bigint;
BEGIN
    IF aggregate IS NULL THEN
        RAISE EXCEPTION 'aggregate must not be null' USING ERRCODE = '22004';
    END IF;
    PERFORM streamforge.require_privilege(aggregate, 'admin');
    SELECT a.source INTO source FROM streamforge.aggregates AS a
     WHERE a.name OPERATOR(pg_catalog.=) aggregate;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'pipeline "%" is not an aggregate', aggregate
            USING ERRCODE = '42704',
                  HINT = 'streamforge.recompute() recomputes an aggregate made by streamforge.create_aggregate().';
    END IF;
    -- the insert trigger attach() made (its name), enabled, and checked as
    -- it checks itself at every insert (attach_check: its arguments, the
    -- columns it reads, the pipeline bound): its mapping is what runs
    trig := streamforge_internal.attach_trigger_name(aggregate);
    SELECT a.args INTO args
      FROM pg_catalog.pg_trigger AS g,
           LATERAL (SELECT streamforge_internal.trigger_args(g.tgargs) AS args) AS a
     WHERE g.tgrelid OPERATOR(pg_catalog.=) source
       AND g.tgname OPERATOR(pg_catalog.=) trig
       AND g.tgfoid OPERATOR(pg_catalog.=) 'streamforge_internal.attached_insert()'::pg_catalog.regprocedure
       AND g.tgenabled OPERATOR(pg_catalog.<>) 'D'
       AND a.args[1] OPERATOR(pg_catalog.=) aggregate
       AND a.args[7] OPERATOR(pg_catalog.=) streamforge_internal.pipeline_id(aggregate)::pg_catalog.text;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'aggregate "%" is not attached to table %', aggregate, source
            USING ERRCODE = '55000',
                  HINT = 'Its table was detached, or its trigger disabled; recreate the aggregate, or enable the trigger.';
    END IF;
    PERFORM streamforge_internal.attach_check(source, trig, args, true);
    -- the range in the aggregate's time unit: [ceil(from), ceil(to))
    us := streamforge_internal.unit_us(streamforge.time_unit(aggregate), aggregate);
    IF from_time IS NOT NULL AND pg_catalog.isfinite(from_time) THEN
        from_unit := pg_catalog.ceil(pg_catalog.extract('epoch', from_time) OPERATOR(pg_catalog.*) 1000000
                                     OPERATOR(pg_catalog./) us)::bigint;
    END IF;
    IF to_time IS NOT NULL AND pg_catalog.isfinite(to_time) THEN
        to_unit := pg_catalog.ceil(pg_catalog.extract('epoch', to_time) OPERATOR(pg_catalog.*) 1000000
                                   OPERATOR(pg_catalog./) us)::bigint;
    ELSIF to_time OPERATOR(pg_catalog.=) '-infinity'::timestamptz THEN
        to_unit := -9223372036854775808;
    END IF;
    IF from_time OPERATOR(pg_catalog.=) 'infinity'::timestamptz THEN
        from_unit := 9223372036854775807;
    END IF;
    measures := pg_catalog.cardinality(args) OPERATOR(pg_catalog.=) 11;

    -- One statement, so one snapshot (READ COMMITTED takes one per
    -- statement): the rows as the insert trigger maps them, and the
    -- event_ids of those its joins and filter drop now (their accepted
    -- events are taken out).  Without a filter, the rows outside the range
    -- are left out before their joins are looked up (the time mapping,
    -- args[5], reads the source row only).  Parameters: $1 the aggregate,
    -- $2 its source table, $3 and $4 the range.
    query := pg_catalog.format('WITH new_rows AS MATERIALIZED (SELECT * FROM %s%s), '
                               'm(p, e, k, t, v) AS (%s) '
                               'SELECT (SELECT %s FROM m '
                               'WHERE ($3 IS NULL OR m.t OPERATOR(pg_catalog.>=) $3) '
                               'AND ($4 IS NULL OR m.t OPERATOR(pg_catalog.<) $4)), %s',
                               source,
                               -- a row its filter rejects may have a NULL time,
                               -- which the time mapping refuses: without a filter
                               -- every row made an event (or failed its insert)
                               CASE WHEN pg_catalog.cardinality(args) OPERATOR(pg_catalog.>=) 10
                                         AND args[10] OPERATOR(pg_catalog.<>) ''
                                    THEN ''
                                    ELSE pg_catalog.format(' WHERE ($3 IS NULL OR (%s) OPERATOR(pg_catalog.>=) $3) '
                                                           'AND ($4 IS NULL OR (%s) OPERATOR(pg_catalog.<) $4)',
                                                           args[5], args[5]) END,
                               streamforge_internal.attach_insert_query(args),
                               CASE WHEN measures
                                    THEN 'pg_catalog.array_agg(ROW(m.p, NULL::pg_catalog.int8, m.e, m.k, m.t, m.v)::streamforge.measures_delivery)'
                                    ELSE 'pg_catalog.array_agg(ROW(m.p, m.e, m.k, m.t, m.v)::streamforge.event)' END,
                               CASE WHEN pg_catalog.cardinality(args) OPERATOR(pg_catalog.>=) 10
                                         AND args[10] OPERATOR(pg_catalog.<>) ''
                                    THEN pg_catalog.format('(SELECT pg_catalog.array_agg(d.e) FROM '
                                                           '(SELECT (%s)::pg_catalog.text AS e FROM new_rows '
                                                           'WHERE NOT COALESCE((%s), false)) AS d WHERE d.e IS NOT NULL)',
                                                           args[3], args[10])
                                    ELSE 'NULL::text[]' END);
END
$$;
COMMENT ON FUNCTION streamforge_internal.recompute_plan(text, timestamptz, timestamptz) IS
    'checks a recompute as its caller and gives the text of the mapping statement it runs (admin; internal helper of recompute)';

-- recompute_rows(aggregate, from_time, to_time): the mapping statement of
-- recompute_plan run, as the source table's owner in a security-restricted
-- operation (as REFRESH MATERIALIZED VIEW runs its query): the
-- expressions of the aggregate are its owner's, never run with the
-- privileges of a superuser who recomputes, nor with more than their
-- owner's.  C (persist/recompute_rows.c): the caller needs the privileges
-- of the table's owner and SELECT on the table (or on all its columns);
-- a table with row-level security is refused.
-- The settings of the insert trigger (62_attach.sql, attached_insert):
-- the mapping makes the same keys and values as it did at insert.
-- EXECUTE to PUBLIC: streamforge.recompute, which runs as its caller,
-- calls it (docs/security.md).
CREATE OR REPLACE FUNCTION streamforge_internal.recompute_rows(aggregate text,
    from_time timestamptz, to_time timestamptz, OUT measures boolean,
    OUT events streamforge.event[], OUT deliveries streamforge.measures_delivery[],
    OUT dropped text[], OUT from_unit bigint, OUT to_unit bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'sf_recompute_rows'
LANGUAGE C VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
-- @mapping-settings;
COMMENT ON FUNCTION streamforge_internal.recompute_rows(text, timestamptz, timestamptz) IS
    'runs the mapping of a recompute as the source table''s owner (admin and SELECT on the table; internal helper of recompute)';

-- recompute(aggregate, from_time, to_time): the aggregate's mapping (its
-- joins, filter, keys and aggregates' arguments) run again over the rows
-- of its source table as they are now, with the dimension tables as they
-- are now, in one snapshot, as the table's owner (recompute_rows); the
-- accepted events whose event time is in [from_time, to_time) (NULL:
-- unbounded) and whose windows are all live take the new mapping, or
-- leave, and the live windows are rebuilt.  Admin, and SELECT on the
-- source table.
CREATE OR REPLACE FUNCTION streamforge.recompute(aggregate text,
    from_time timestamptz DEFAULT NULL, to_time timestamptz DEFAULT NULL,
    OUT mapped bigint, OUT remapped bigint, OUT removed bigint, OUT changes bigint)
RETURNS record
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    m record;
    r record;
BEGIN
    SELECT * INTO m FROM streamforge_internal.recompute_rows(aggregate, from_time, to_time);
    IF m.measures THEN
        SELECT * INTO r FROM streamforge_internal.recompute_measures(aggregate,
            COALESCE(m.deliveries, '{}'), m.dropped, m.from_unit, m.to_unit);
    ELSE
        SELECT * INTO r FROM streamforge_internal.recompute_events(aggregate,
            COALESCE(m.events, '{}'), m.dropped, m.from_unit, m.to_unit);
    END IF;
    mapped := r.mapped;
    remapped := r.remapped;
    removed := r.removed;
    changes := r.changes;
END
$$;
COMMENT ON FUNCTION streamforge.recompute(text, timestamptz, timestamptz) IS
    'recomputes the live windows of an aggregate with its dimension tables as they are now (admin)';
