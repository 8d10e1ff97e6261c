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

-- recompute(aggregate, from_time, to_time): the aggregate's mapping (its
-- joins, filter, keys and aggregates' arguments) run again, as the caller,
-- over the rows of its source table as they are now, with the dimension
-- tables as they are now, in one snapshot; the accepted events whose
-- event time is in [from_time, to_time) (NULL: unbounded) and whose
-- windows are all live take the new mapping, or leave, and the live
-- windows are rebuilt.  Admin; the caller reads the source
-- table with its own privileges.
CREATE OR REPLACE FUNCTION streamforge.recompute(aggregate text,
    from_time timestamptz DEFAULT NULL, to_time timestamptz DEFAULT NULL,
    OUT mapped bigint, OUT remapped bigint, OUT removed bigint, OUT changes bigint)
RETURNS record
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
-- the settings of the insert trigger (62_attach.sql, attached_insert): the
-- mapping makes the same keys and values as it did at insert
SET search_path = pg_catalog, pg_temp
SET TimeZone = 'UTC'
SET DateStyle = 'ISO, MDY'
SET IntervalStyle = 'postgres'
SET extra_float_digits = 1
SET bytea_output = 'hex'
SET lc_numeric = 'C'
SET lc_monetary = 'C'
SET lc_time = 'C'
SET standard_conforming_strings = on
SET transform_null_equals = off
AS $$
DECLARE
    src pg_catalog.regclass;
    trig name;
    args text[];
    us bigint;
    f bigint;
    t bigint;
    q text;
    ev streamforge.event[];
    md streamforge.measures_delivery[];
    dropped text[];
    r record;
BEGIN
    IF aggregate IS NULL THEN
        RAISE EXCEPTION 'aggregate must not be null' USING ERRCODE = '22004';
    END IF;
    PERFORM streamforge.require_privilege(aggregate, 'admin');
    SELECT a.source INTO src FROM streamforge.aggregates AS a
     WHERE a.name OPERATOR(pg_catalog.=) aggregate;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'pipeline "%" is not an aggregate', aggregate
            USING ERRCODE = '42704',
                  HINT = 'streamforge.recompute() recomputes an aggregate made by streamforge.create_aggregate().';
    END IF;
    -- the insert trigger attach() made (its name), enabled, and checked as
    -- it checks itself at every insert (attach_check: its arguments, the
    -- columns it reads, the pipeline bound): its mapping is what runs here
    trig := streamforge_internal.attach_trigger_name(aggregate);
    SELECT a.args INTO args
      FROM pg_catalog.pg_trigger AS g,
           LATERAL (SELECT streamforge_internal.trigger_args(g.tgargs) AS args) AS a
     WHERE g.tgrelid OPERATOR(pg_catalog.=) src
       AND g.tgname OPERATOR(pg_catalog.=) trig
       AND g.tgfoid OPERATOR(pg_catalog.=) 'streamforge_internal.attached_insert()'::pg_catalog.regprocedure
       AND g.tgenabled OPERATOR(pg_catalog.<>) 'D'
       AND a.args[1] OPERATOR(pg_catalog.=) aggregate
       AND a.args[7] OPERATOR(pg_catalog.=) streamforge_internal.pipeline_id(aggregate)::pg_catalog.text;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'aggregate "%" is not attached to table %', aggregate, src
            USING ERRCODE = '55000',
                  HINT = 'Its table was detached, or its trigger disabled; recreate the aggregate, or enable the trigger.';
    END IF;
    PERFORM streamforge_internal.attach_check(src, trig, args, true);
    -- the range in the aggregate's time unit: [ceil(from), ceil(to))
    us := streamforge_internal.unit_us(streamforge.time_unit(aggregate), aggregate);
    IF from_time IS NOT NULL AND pg_catalog.isfinite(from_time) THEN
        f := pg_catalog.ceil(pg_catalog.extract('epoch', from_time) OPERATOR(pg_catalog.*) 1000000
                             OPERATOR(pg_catalog./) us)::bigint;
    END IF;
    IF to_time IS NOT NULL AND pg_catalog.isfinite(to_time) THEN
        t := pg_catalog.ceil(pg_catalog.extract('epoch', to_time) OPERATOR(pg_catalog.*) 1000000
                             OPERATOR(pg_catalog./) us)::bigint;
    ELSIF to_time OPERATOR(pg_catalog.=) '-infinity'::timestamptz THEN
        t := -9223372036854775808;
    END IF;
    IF from_time OPERATOR(pg_catalog.=) 'infinity'::timestamptz THEN
        f := 9223372036854775807;
    END IF;

    -- One statement, so one snapshot (READ COMMITTED takes one per
    -- statement): the rows as the insert trigger maps them, and the
    -- event_ids of those its joins and filter drop now (their accepted
    -- events are taken out).  Without a filter, the rows outside the range
    -- are left out before their joins are looked up (the time mapping,
    -- args[5], reads the source row only).
    q := pg_catalog.format('WITH new_rows AS MATERIALIZED (SELECT * FROM %s%s), '
                           'm(p, e, k, t, v) AS (%s) '
                           'SELECT (SELECT %s FROM m '
                           'WHERE ($3 IS NULL OR m.t OPERATOR(pg_catalog.>=) $3) '
                           'AND ($4 IS NULL OR m.t OPERATOR(pg_catalog.<) $4)), %s',
                           src,
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
                           CASE WHEN pg_catalog.cardinality(args) OPERATOR(pg_catalog.=) 11
                                THEN 'pg_catalog.array_agg(ROW(m.p, NULL::pg_catalog.int8, m.e, m.k, m.t, m.v)::streamforge.measures_delivery)'
                                ELSE 'pg_catalog.array_agg(ROW(m.p, m.e, m.k, m.t, m.v)::streamforge.event)' END,
                           CASE WHEN pg_catalog.cardinality(args) OPERATOR(pg_catalog.>=) 10
                                     AND args[10] OPERATOR(pg_catalog.<>) ''
                                THEN pg_catalog.format('(SELECT pg_catalog.array_agg(d.e) FROM '
                                                       '(SELECT (%s)::pg_catalog.text AS e FROM new_rows '
                                                       'WHERE NOT COALESCE((%s), false)) AS d WHERE d.e IS NOT NULL)',
                                                       args[3], args[10])
                                ELSE 'NULL::text[]' END);
    IF pg_catalog.cardinality(args) OPERATOR(pg_catalog.=) 11 THEN
        EXECUTE q INTO md, dropped USING aggregate, src, f, t;
        SELECT * INTO r FROM streamforge_internal.recompute_measures(aggregate,
            COALESCE(md, '{}'), dropped, f, t);
    ELSE
        EXECUTE q INTO ev, dropped USING aggregate, src, f, t;
        SELECT * INTO r FROM streamforge_internal.recompute_events(aggregate,
            COALESCE(ev, '{}'), dropped, f, t);
    END IF;
    mapped := r.mapped;
    remapped := r.remapped;
    removed := r.removed;
    changes := r.changes;
END
$$;
COMMENT ON FUNCTION streamforge.recompute(text, timestamptz, timestamptz) IS
    'recomputes the live windows of an aggregate with its dimension tables as they are now (admin)';
