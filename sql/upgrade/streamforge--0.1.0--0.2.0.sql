-- streamforge 0.1.0 -> 0.2.0 (ALTER EXTENSION streamforge UPDATE TO '0.2.0')
--
-- Every storage and SQL API change of 0.2.0, applied to a database that runs
-- 0.1.0.  Each section names the change and the file of sql/install/ whose
-- definitions it brings over; after this script the extension's objects are
-- exactly those of a fresh CREATE EXTENSION at 0.2.0 (test/t/090_upgrade.pl
-- compares them), and pipelines, outputs, grants and checkpoints of 0.1.0
-- keep working.
--
-- Frozen as released with 0.2.0 (it was generated from a template and the
-- install pieces of 0.2.0; those pieces have moved on since).  Only a
-- security fix may change it, so that a 0.1.0 database is never updated
-- through a script that a later release knows to be unsafe: 0.3.0 made it
-- refuse look-alike schemas and qualify every call (issue 21).

\echo Use "ALTER EXTENSION streamforge UPDATE TO '0.2.0'" to load this file. \quit

-- ----------------------------------------------------------------
-- First: the schemas are the extension's (added in 0.3.0, issue 21; a
-- copy of sql/install/05_schemas.sql of 0.3.0)
-- ----------------------------------------------------------------
--
--
-- Runs first in CREATE EXTENSION and in every ALTER EXTENSION UPDATE (the
-- update scripts include or copy this piece before anything else), before
-- any object is created or replaced.  The control file's "schema =
-- streamforge" makes CREATE EXTENSION use an existing schema of that name
-- whoever made it; a role that could create it (any role with CREATE on
-- the database) could fill it with look-alike functions and operators
-- that the definitions below would bind to, or drop and replace the
-- extension's objects later as the schema's owner (issue 21).  So each of
-- streamforge and streamforge_internal, if it exists, must be
--   - owned by a superuser or by the extension's owner,
--   - closed to CREATE for every other role (PUBLIC included),
--   - free of objects that are not members of the extension: no function,
--     procedure, aggregate, operator, type, domain, table, view, sequence,
--     collation, conversion, operator class or family, text search object,
--     statistics object, cast or other extension (the indexes, row types
--     and array types of members go with them);
-- and streamforge_internal, which this script creates, must be a member
-- of the extension: at CREATE EXTENSION (and at the update from 0.1.0,
-- which creates it) it must not exist at all.
-- At CREATE EXTENSION nothing is a member yet, so streamforge must be
-- empty: the schema CREATE EXTENSION has just made passes, and so does an
-- empty one a superuser made beforehand (docs/security.md, "Threat
-- model").  Otherwise the command fails before it has changed anything,
-- with 42P06 (the schema exists and is not the extension's) or 42501 (a
-- role that is not trusted owns it or may create objects in it).
--
-- The block runs with the script's search_path (streamforge, pg_temp, with
-- pg_catalog searched first), where a look-alike may already exist: every
-- name in it is qualified.
DO LANGUAGE plpgsql $schemas$
DECLARE
    ext pg_catalog.oid;
    extowner pg_catalog.oid;
    nsp record;
    bad record;
    nbad pg_catalog.int8;
BEGIN
    SELECT e.oid, e.extowner INTO ext, extowner
      FROM pg_catalog.pg_extension AS e
     WHERE e.extname OPERATOR(pg_catalog.=) 'streamforge';
    FOR nsp IN
        SELECT n.oid, n.nspname, n.nspowner, n.nspacl,
               pg_catalog.pg_get_userbyid(n.nspowner) AS owner_name,
               EXISTS (SELECT 1 FROM pg_catalog.pg_depend AS d
                        WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_namespace'::pg_catalog.regclass
                          AND d.objid OPERATOR(pg_catalog.=) n.oid
                          AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
                          AND d.refobjid OPERATOR(pg_catalog.=) ext
                          AND d.deptype OPERATOR(pg_catalog.=) 'e') AS member
          FROM pg_catalog.pg_namespace AS n
         WHERE n.nspname OPERATOR(pg_catalog.=) ANY (ARRAY['streamforge', 'streamforge_internal']::pg_catalog.name[])
         ORDER BY n.nspname
    LOOP
        IF nsp.nspname OPERATOR(pg_catalog.=) 'streamforge_internal' AND NOT nsp.member THEN
            RAISE EXCEPTION USING
                ERRCODE = '42P06',
                MESSAGE = pg_catalog.format('schema "%s" already exists and is not a member of extension "streamforge"',
                                            nsp.nspname),
                DETAIL = pg_catalog.format('streamforge creates this schema itself.  One made by someone else (here owned by role "%s") may hold objects that the extension''s functions would call.',
                                           nsp.owner_name),
                HINT = 'Find out who created the schema and why, then drop or rename it and run the command again.';
        END IF;
        IF nsp.nspowner OPERATOR(pg_catalog.<>) extowner
           AND NOT (SELECT r.rolsuper FROM pg_catalog.pg_roles AS r
                     WHERE r.oid OPERATOR(pg_catalog.=) nsp.nspowner) THEN
            RAISE EXCEPTION USING
                ERRCODE = '42501',
                MESSAGE = pg_catalog.format('schema "%s" is owned by role "%s", which is neither a superuser nor the owner of extension "streamforge"',
                                            nsp.nspname, nsp.owner_name),
                DETAIL = 'The owner of a schema can drop and replace the objects in it, and streamforge''s functions run with the privileges of the extension''s owner.',
                HINT = pg_catalog.format('Find out who created the schema and why.  If it is empty, drop it and let CREATE EXTENSION create it, or make a superuser its owner (ALTER SCHEMA %s OWNER TO ...).',
                                         pg_catalog.quote_ident(nsp.nspname));
        END IF;
        SELECT CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                    ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(a.grantee)) END AS who
          INTO bad
          FROM pg_catalog.aclexplode(nsp.nspacl) AS a
         WHERE a.privilege_type OPERATOR(pg_catalog.=) 'CREATE'
           AND a.grantee OPERATOR(pg_catalog.<>) nsp.nspowner
         ORDER BY 1 LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION USING
                ERRCODE = '42501',
                MESSAGE = pg_catalog.format('schema "%s" grants CREATE to %s',
                                            nsp.nspname, bad.who),
                DETAIL = 'A role that may create objects in the schema can create functions or operators that streamforge''s definitions would call instead of the built-in ones.',
                HINT = pg_catalog.format('Revoke it (REVOKE CREATE ON SCHEMA %s FROM %s) and run the command again.',
                                         pg_catalog.quote_ident(nsp.nspname), bad.who);
        END IF;
        -- every object of the schema that is not a member of the extension
        WITH objs AS (
            SELECT 'pg_catalog.pg_proc'::pg_catalog.regclass AS classid, p.oid AS objid
              FROM pg_catalog.pg_proc AS p WHERE p.pronamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            SELECT 'pg_catalog.pg_operator'::pg_catalog.regclass, o.oid
              FROM pg_catalog.pg_operator AS o WHERE o.oprnamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            -- tables, views, sequences, foreign tables (not their indexes)
            SELECT 'pg_catalog.pg_class'::pg_catalog.regclass, c.oid
              FROM pg_catalog.pg_class AS c
             WHERE c.relnamespace OPERATOR(pg_catalog.=) nsp.oid
               AND c.relkind OPERATOR(pg_catalog.=) ANY (ARRAY['r', 'p', 'v', 'm', 'S', 'f']::pg_catalog."char"[])
            UNION ALL
            -- types of their own: not the row type of a relation (the
            -- relation is checked), nor an array or multirange type (its
            -- element or range is checked)
            SELECT 'pg_catalog.pg_type'::pg_catalog.regclass, t.oid
              FROM pg_catalog.pg_type AS t
             WHERE t.typnamespace OPERATOR(pg_catalog.=) nsp.oid
               AND t.typtype OPERATOR(pg_catalog.<>) 'm'
               AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_type AS e
                                WHERE e.typarray OPERATOR(pg_catalog.=) t.oid)
               AND (t.typrelid OPERATOR(pg_catalog.=) 0
                    OR (SELECT c.relkind FROM pg_catalog.pg_class AS c
                         WHERE c.oid OPERATOR(pg_catalog.=) t.typrelid) OPERATOR(pg_catalog.=) 'c')
            UNION ALL
            SELECT 'pg_catalog.pg_collation'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_collation AS x WHERE x.collnamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            SELECT 'pg_catalog.pg_conversion'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_conversion AS x WHERE x.connamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            SELECT 'pg_catalog.pg_opclass'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_opclass AS x WHERE x.opcnamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            SELECT 'pg_catalog.pg_opfamily'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_opfamily AS x WHERE x.opfnamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            SELECT 'pg_catalog.pg_ts_config'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_ts_config AS x WHERE x.cfgnamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            SELECT 'pg_catalog.pg_ts_dict'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_ts_dict AS x WHERE x.dictnamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            SELECT 'pg_catalog.pg_ts_parser'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_ts_parser AS x WHERE x.prsnamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            SELECT 'pg_catalog.pg_ts_template'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_ts_template AS x WHERE x.tmplnamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            SELECT 'pg_catalog.pg_statistic_ext'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_statistic_ext AS x WHERE x.stxnamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            SELECT 'pg_catalog.pg_extension'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_extension AS x
             WHERE x.extnamespace OPERATOR(pg_catalog.=) nsp.oid
               AND x.oid OPERATOR(pg_catalog.<>) ext
            UNION ALL
            -- casts from or to a type of the schema
            SELECT 'pg_catalog.pg_cast'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_cast AS x
             WHERE EXISTS (SELECT 1 FROM pg_catalog.pg_type AS t
                            WHERE t.oid OPERATOR(pg_catalog.=) ANY (ARRAY[x.castsource, x.casttarget])
                              AND t.typnamespace OPERATOR(pg_catalog.=) nsp.oid)),
        foreign_objs AS (
            SELECT o.classid, o.objid FROM objs AS o
             WHERE NOT EXISTS (
                SELECT 1 FROM pg_catalog.pg_depend AS d
                 WHERE d.classid OPERATOR(pg_catalog.=) o.classid
                   AND d.objid OPERATOR(pg_catalog.=) o.objid
                   AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
                   AND d.refobjid OPERATOR(pg_catalog.=) ext
                   AND d.deptype OPERATOR(pg_catalog.=) 'e'))
        SELECT (SELECT pg_catalog.count(*) FROM foreign_objs) AS n,
               (SELECT i.type OPERATOR(pg_catalog.||) ' ' OPERATOR(pg_catalog.||) i.identity
                  FROM pg_catalog.pg_identify_object(f.classid, f.objid, 0) AS i) AS what
          INTO bad
          FROM foreign_objs AS f
         ORDER BY 2 LIMIT 1;
        IF FOUND THEN
            nbad := bad.n;
            RAISE EXCEPTION USING
                ERRCODE = '42P06',
                MESSAGE = pg_catalog.format('schema "%s" contains %s, which is not a member of extension "streamforge"',
                                            nsp.nspname, bad.what),
                DETAIL = pg_catalog.format('The schema holds %s %s that the extension did not create.  Such an object can be called instead of the one streamforge''s definitions mean.',
                                           nbad, CASE WHEN nbad OPERATOR(pg_catalog.=) 1 THEN 'object' ELSE 'objects' END),
                HINT = 'Find out who created them and why, then move them to another schema or drop them, and run the command again.';
        END IF;
    END LOOP;
END
$schemas$;

-- ----------------------------------------------------------------
-- The schema of internal helpers (sql/install/15_internal.sql): the
-- trigger function of output_config moves there; the sections below
-- create the other internal functions there.
-- ----------------------------------------------------------------

-- streamforge install script, part 1b: the schema of internal helpers.
--
-- Functions nobody calls directly (trigger functions, and the bodies that
-- the outputs functions run as the extension's owner: src/acl.c looks them
-- up here) live in their own schema, so that \df streamforge.* shows the
-- API.  Everyone may look names up in it (the helpers that public
-- functions and attached tables' triggers call run as the caller), but the
-- bodies that run as the extension's owner are closed to PUBLIC one by one
-- (REVOKE ALL ON FUNCTION ... FROM PUBLIC where they are created).
CREATE SCHEMA streamforge_internal;
REVOKE ALL ON SCHEMA streamforge_internal FROM PUBLIC;
GRANT USAGE ON SCHEMA streamforge_internal TO PUBLIC;
COMMENT ON SCHEMA streamforge_internal IS
    'streamforge: internal helpers, not part of the API';

ALTER FUNCTION streamforge.output_config_changed()
    SET SCHEMA streamforge_internal;

-- ----------------------------------------------------------------
-- Getting data in (issue 14, items 2-5; sql/install/30_functions.sql and
-- sql/install/60_ingest.sql; docs/ingestion.md)
--
-- create_pipeline gains its last parameter, time_unit interval DEFAULT
-- NULL (created again in the retention section below, with retention
-- before it; the C entry point is the same and finds both by name, so
-- 0.1.0's definition keeps working until this update runs).
-- streamforge.pipeline gains the column time_unit, NULL (no unit) for
-- every 0.1.0 pipeline.  Then every object of 60_ingest.sql.  No persisted format changes: assigned
-- offsets are journalled as ordinary offsets, and a pipeline's time unit
-- lives only in its row (checkpoints hold none).
-- ----------------------------------------------------------------

-- streamforge install script, part 6: getting data in (0.2.0).
--
-- Sources without offsets (append, append_batch: src/append.c), pipelines
-- with a time unit (the *_ts and *_interval functions: src/timeunit.c and
-- the SQL below), JSON deliveries (ingest_json) and tables attached to a
-- pipeline (attach, detach).  docs/ingestion.md describes them.
--
-- Everything here except append, append_batch, ingest_json and time_unit
-- is SQL or PL/pgSQL running as the caller (no SECURITY DEFINER): each
-- function reaches the pipeline only through the C functions, which check
-- the caller's privilege.  Each sets search_path, so the caller's search_path
-- cannot redirect anything; every name is schema-qualified anyway.

-- ----------------------------------------------------------------
-- Storage: the time unit of a pipeline (NULL: none, as for 0.1.0)
-- ----------------------------------------------------------------

ALTER TABLE streamforge.pipeline ADD COLUMN time_unit interval;

-- ----------------------------------------------------------------
-- Sources without offsets
-- ----------------------------------------------------------------

-- An event without a source offset, for append_batch.
CREATE TYPE streamforge.event AS (
    partition text,
    event_id text,
    key text,
    event_time bigint,
    value bigint
);
COMMENT ON TYPE streamforge.event IS
    'an event without a source offset, for streamforge.append_batch';

CREATE FUNCTION streamforge.append(pipeline text, partition text,
    event_id text, key text, event_time bigint, value bigint)
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_append'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 2;
COMMENT ON FUNCTION streamforge.append(text, text, text, text, bigint, bigint) IS
    'delivers one event at the partition''s next offset, assigned under the pipeline''s lock';

CREATE FUNCTION streamforge.append_batch(pipeline text,
    events streamforge.event[])
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_append_batch'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge.append_batch(text, streamforge.event[]) IS
    'delivers events in array order at their partitions'' next offsets, all or none';

-- ----------------------------------------------------------------
-- Time units: exact conversions between timestamptz/interval and units
-- ----------------------------------------------------------------

CREATE FUNCTION streamforge.time_unit(pipeline text)
RETURNS interval
AS 'MODULE_PATHNAME', 'sf_time_unit'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION streamforge.time_unit(text) IS
    'the time unit of a pipeline, NULL if it has none';

-- An interval as microseconds.  Months and years have no fixed length and
-- are refused; a day is 86,400 seconds (windows are aligned to the Unix
-- epoch, in UTC, whatever the session's time zone).
CREATE FUNCTION streamforge_internal.interval_us(i interval)
RETURNS bigint
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF i IS NULL THEN
        RAISE EXCEPTION 'interval must not be null' USING ERRCODE = '22004';
    ELSIF extract(year FROM i) OPERATOR(pg_catalog.<>) 0
          OR extract(month FROM i) OPERATOR(pg_catalog.<>) 0 THEN
        RAISE EXCEPTION 'interval "%" must not contain months or years', i
            USING ERRCODE = '22023',
                  DETAIL = 'A month has no fixed length in microseconds.';
    END IF;
    RETURN (extract(epoch FROM i) OPERATOR(pg_catalog.*) 1000000)::bigint;
END
$$;
COMMENT ON FUNCTION streamforge_internal.interval_us(interval) IS
    'an interval without months as microseconds (a day is 86,400 seconds)';

-- A positive time unit as microseconds; NULL raises 22023 naming the
-- pipeline (a pipeline without a time unit).
CREATE FUNCTION streamforge_internal.unit_us(unit interval, pipeline text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    us bigint;
BEGIN
    IF unit IS NULL THEN
        IF pipeline IS NULL THEN
            RAISE EXCEPTION 'time unit must not be null' USING ERRCODE = '22004';
        END IF;
        RAISE EXCEPTION 'pipeline "%" has no time unit', pipeline
            USING ERRCODE = '22023',
                  HINT = 'Give times as bigint, or create the pipeline with time_unit => interval ''1 millisecond'' (or another unit).';
    END IF;
    us := streamforge_internal.interval_us(unit);
    IF us OPERATOR(pg_catalog.<=) 0 THEN
        RAISE EXCEPTION 'time unit must be greater than zero' USING ERRCODE = '22023';
    END IF;
    RETURN us;
END
$$;
COMMENT ON FUNCTION streamforge_internal.unit_us(interval, text) IS
    'a positive time unit as microseconds (internal helper)';

-- timestamptz -> units since the Unix epoch, exactly: a timestamp that is
-- not a whole number of units is an error, never rounded.
CREATE FUNCTION streamforge.time_to_units(t timestamptz, unit interval)
RETURNS bigint
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    u bigint := streamforge_internal.unit_us(unit);
    us numeric;
BEGIN
    IF t IS NULL THEN
        RAISE EXCEPTION 'timestamp must not be null' USING ERRCODE = '22004';
    ELSIF NOT isfinite(t) THEN
        RAISE EXCEPTION 'timestamp must be finite' USING ERRCODE = '22023';
    END IF;
    us := extract(epoch FROM t) OPERATOR(pg_catalog.*) 1000000;
    IF us OPERATOR(pg_catalog.%) u OPERATOR(pg_catalog.<>) 0 THEN
        RAISE EXCEPTION 'timestamp "%" is not a whole number of time units', t
            USING ERRCODE = '22023',
                  DETAIL = format('The time unit is %s.', unit),
                  HINT = 'Truncate the timestamp to the unit (date_bin), or choose a finer unit.';
    END IF;
    RETURN (us OPERATOR(pg_catalog./) u)::bigint;
END
$$;
COMMENT ON FUNCTION streamforge.time_to_units(timestamptz, interval) IS
    'a timestamp as a whole number of units since the Unix epoch, exactly';

-- interval -> units, exactly.
CREATE FUNCTION streamforge.interval_to_units(i interval, unit interval)
RETURNS bigint
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    u bigint := streamforge_internal.unit_us(unit);
    us bigint := streamforge_internal.interval_us(i);
BEGIN
    IF us OPERATOR(pg_catalog.%) u OPERATOR(pg_catalog.<>) 0 THEN
        RAISE EXCEPTION 'interval "%" is not a whole number of time units', i
            USING ERRCODE = '22023',
                  DETAIL = format('The time unit is %s.', unit);
    END IF;
    RETURN us OPERATOR(pg_catalog./) u;
END
$$;
COMMENT ON FUNCTION streamforge.interval_to_units(interval, interval) IS
    'an interval as a whole number of units, exactly';

-- units since the Unix epoch -> timestamptz.  Built from hours and
-- microseconds so that no time zone's daylight saving time enters.
CREATE FUNCTION streamforge.units_to_time(t bigint, unit interval)
RETURNS timestamptz
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    total numeric;      -- microseconds since the epoch
    h numeric;          -- whole hours of it
    -- (OPERATOR() forms all share one precedence: parenthesize)
BEGIN
    IF t IS NULL THEN
        RETURN NULL;
    END IF;
    total := t::numeric OPERATOR(pg_catalog.*) streamforge_internal.unit_us(unit);
    h := floor(total OPERATOR(pg_catalog./) 3600000000);
    RETURN '1970-01-01 00:00:00+00'::timestamptz
           OPERATOR(pg_catalog.+) make_interval(0, 0, 0, 0, h::integer, 0, 0)
           OPERATOR(pg_catalog.+) make_interval(0, 0, 0, 0, 0, 0,
               ((total OPERATOR(pg_catalog.-) (h OPERATOR(pg_catalog.*) 3600000000))
                OPERATOR(pg_catalog./) 1000000)::double precision);
END
$$;
COMMENT ON FUNCTION streamforge.units_to_time(bigint, interval) IS
    'units since the Unix epoch as a timestamp (NULL stays NULL)';

-- Window constructors taking intervals.  The sizes are kept in
-- microseconds, with the kind marked "/us"; create_pipeline converts them
-- to the pipeline's time unit (and refuses them without one).
CREATE FUNCTION streamforge.fixed_interval(name text, size interval)
RETURNS streamforge.window_def
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    w streamforge.window_def;
BEGIN
    IF size IS NULL THEN
        RAISE EXCEPTION 'size must not be null' USING ERRCODE = '22004';
    END IF;
    w := streamforge.fixed(name, streamforge_internal.interval_us(size));
    w.kind := w.kind OPERATOR(pg_catalog.||) '/us';
    RETURN w;
END
$$;
COMMENT ON FUNCTION streamforge.fixed_interval(text, interval) IS
    'a fixed (tumbling) window whose size is an interval (needs a pipeline time unit)';

CREATE FUNCTION streamforge.sliding_interval(name text, size interval, step interval)
RETURNS streamforge.window_def
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    w streamforge.window_def;
BEGIN
    IF size IS NULL THEN
        RAISE EXCEPTION 'size must not be null' USING ERRCODE = '22004';
    ELSIF step IS NULL THEN
        RAISE EXCEPTION 'step must not be null' USING ERRCODE = '22004';
    END IF;
    w := streamforge.sliding(name, streamforge_internal.interval_us(size),
                             streamforge_internal.interval_us(step));
    w.kind := w.kind OPERATOR(pg_catalog.||) '/us';
    RETURN w;
END
$$;
COMMENT ON FUNCTION streamforge.sliding_interval(text, interval, interval) IS
    'a sliding (hopping) window whose size and step are intervals (needs a pipeline time unit)';

CREATE FUNCTION streamforge.session_interval(name text, gap interval)
RETURNS streamforge.window_def
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    w streamforge.window_def;
BEGIN
    IF gap IS NULL THEN
        RAISE EXCEPTION 'gap must not be null' USING ERRCODE = '22004';
    END IF;
    w := streamforge.session(name, streamforge_internal.interval_us(gap));
    w.kind := w.kind OPERATOR(pg_catalog.||) '/us';
    RETURN w;
END
$$;
COMMENT ON FUNCTION streamforge.session_interval(text, interval) IS
    'a session window whose gap is an interval (needs a pipeline time unit)';

-- Write calls taking timestamptz: converted with the pipeline's unit.
CREATE FUNCTION streamforge.ingest_ts(pipeline text, partition text,
    source_offset bigint, event_id text, key text, event_time timestamptz,
    value bigint)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE ROWS 2
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    unit interval := streamforge.time_unit(pipeline);
BEGIN
    PERFORM streamforge_internal.unit_us(unit, pipeline);
    RETURN QUERY SELECT * FROM streamforge.ingest(pipeline, partition,
        source_offset, event_id, key,
        streamforge.time_to_units(event_time, unit), value);
END
$$;
COMMENT ON FUNCTION streamforge.ingest_ts(text, text, bigint, text, text, timestamptz, bigint) IS
    'delivers one event whose time is a timestamp (the pipeline needs a time unit)';

CREATE FUNCTION streamforge.append_ts(pipeline text, partition text,
    event_id text, key text, event_time timestamptz, value bigint)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE ROWS 2
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    unit interval := streamforge.time_unit(pipeline);
BEGIN
    PERFORM streamforge_internal.unit_us(unit, pipeline);
    RETURN QUERY SELECT * FROM streamforge.append(pipeline, partition,
        event_id, key, streamforge.time_to_units(event_time, unit), value);
END
$$;
COMMENT ON FUNCTION streamforge.append_ts(text, text, text, text, timestamptz, bigint) IS
    'delivers one event whose time is a timestamp at the partition''s next offset';

CREATE FUNCTION streamforge.advance_ts(pipeline text, partition text,
    progress timestamptz)
RETURNS SETOF streamforge.change
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    unit interval := streamforge.time_unit(pipeline);
BEGIN
    PERFORM streamforge_internal.unit_us(unit, pipeline);
    RETURN QUERY SELECT * FROM streamforge.advance(pipeline, partition,
        streamforge.time_to_units(progress, unit));
END
$$;
COMMENT ON FUNCTION streamforge.advance_ts(text, text, timestamptz) IS
    'reports a partition''s progress as a timestamp (the pipeline needs a time unit)';

-- Results with timestamptz bounds.
CREATE FUNCTION streamforge.visible_ts(pipeline text)
RETURNS TABLE (window_name text, key text, window_start timestamptz,
               window_end timestamptz, count bigint, sum numeric, min bigint,
               max bigint)
LANGUAGE plpgsql VOLATILE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    unit interval := streamforge.time_unit(pipeline);
BEGIN
    PERFORM streamforge_internal.unit_us(unit, pipeline);
    RETURN QUERY SELECT r.window_name, r.key,
        streamforge.units_to_time(r.window_start, unit),
        streamforge.units_to_time(r.window_end, unit),
        r.count, r.sum, r.min, r.max
      FROM streamforge.visible(pipeline) AS r;
END
$$;
COMMENT ON FUNCTION streamforge.visible_ts(text) IS
    'visible() with timestamp window bounds (the pipeline needs a time unit)';

CREATE FUNCTION streamforge.live_ts(pipeline text)
RETURNS TABLE (window_name text, key text, window_start timestamptz,
               window_end timestamptz, count bigint, sum numeric, min bigint,
               max bigint)
LANGUAGE plpgsql VOLATILE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    unit interval := streamforge.time_unit(pipeline);
BEGIN
    PERFORM streamforge_internal.unit_us(unit, pipeline);
    RETURN QUERY SELECT r.window_name, r.key,
        streamforge.units_to_time(r.window_start, unit),
        streamforge.units_to_time(r.window_end, unit),
        r.count, r.sum, r.min, r.max
      FROM streamforge.live(pipeline) AS r;
END
$$;
COMMENT ON FUNCTION streamforge.live_ts(text) IS
    'live() with timestamp window bounds (the pipeline needs a time unit)';

CREATE FUNCTION streamforge.watermark_ts(pipeline text)
RETURNS timestamptz
LANGUAGE plpgsql VOLATILE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    unit interval := streamforge.time_unit(pipeline);
BEGIN
    PERFORM streamforge_internal.unit_us(unit, pipeline);
    RETURN streamforge.units_to_time(streamforge.watermark(pipeline), unit);
END
$$;
COMMENT ON FUNCTION streamforge.watermark_ts(text) IS
    'watermark() as a timestamp, NULL before there is one (the pipeline needs a time unit)';

-- The durable results (streamforge.results, row-level security applies)
-- with timestamp bounds.
CREATE FUNCTION streamforge.results_ts(pipeline text)
RETURNS TABLE (window_name text, key text, window_start timestamptz,
               window_end timestamptz, count bigint, sum numeric, min bigint,
               max bigint, seq bigint)
LANGUAGE plpgsql VOLATILE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    unit interval := streamforge.time_unit(pipeline);
BEGIN
    PERFORM streamforge_internal.unit_us(unit, pipeline);
    RETURN QUERY SELECT r.window_name::text, r.key::text,
        streamforge.units_to_time(r.window_start, unit),
        streamforge.units_to_time(r.window_end, unit),
        r.count, r.sum, r.min, r.max, r.seq
      FROM streamforge.results AS r
     WHERE r.pipeline OPERATOR(pg_catalog.=) results_ts.pipeline
     ORDER BY r.window_name, r.key, r.window_start, r.window_end;
END
$$;
COMMENT ON FUNCTION streamforge.results_ts(text) IS
    'the pipeline''s rows of streamforge.results with timestamp bounds';

-- ----------------------------------------------------------------
-- JSON
-- ----------------------------------------------------------------

-- ingest_json(pipeline, deliveries): a JSON array of delivery objects
-- {"partition", "source_offset", "event_id", "key", "event_time", "value"},
-- applied like ingest_batch; or, when the first element has no
-- source_offset, of events applied like append_batch.  With a time unit,
-- event_time may be a timestamp string.  All or none.  In C
-- (src/ingest_json.c): it checks the caller's ingest privilege first, like
-- the other write calls.
CREATE FUNCTION streamforge.ingest_json(pipeline text, deliveries jsonb)
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_ingest_json'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge.ingest_json(text, jsonb) IS
    'delivers a JSON array of deliveries (or of events without offsets), all or none';

-- ----------------------------------------------------------------
-- Tables attached to a pipeline
-- ----------------------------------------------------------------
--
-- attach() creates two triggers on the table, named after the pipeline:
-- a statement-level AFTER INSERT trigger with a transition table, which
-- appends the statement's new rows (one append_batch per statement, so a
-- COPY of a million rows is one batch) in the inserting transaction, and a
-- row-level BEFORE UPDATE trigger that refuses to change what a mapping
-- reads.  DELETE and TRUNCATE are ignored: the events stay consumed.
--
-- The mappings are SQL expressions over the table's columns, stored (as
-- fully qualified, type-converted expressions) in the triggers' arguments,
-- so pg_dump carries an attachment with its table, and restoring the
-- table's rows (which pg_dump does before it creates triggers) ingests
-- nothing twice.
--
-- Privileges: the triggers run as the inserting role (no SECURITY
-- DEFINER), which therefore needs the ingest privilege on the pipeline;
-- an insert by a role without it fails with 42501 and inserts nothing.
-- Only the table's owner may attach (the expressions are code that will
-- run as whoever inserts, like any trigger the owner writes).  The trigger
-- functions pin search_path to pg_catalog, pg_temp, so the mappings mean
-- the same thing for every inserting role: qualify your own functions.

-- The trigger name of an attachment of pipeline to a table.
CREATE FUNCTION streamforge_internal.attach_trigger_name(pipeline text)
RETURNS name
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN ('streamforge_attach_' OPERATOR(pg_catalog.||) pg_catalog.left(pg_catalog.md5(pipeline), 16))::name;
COMMENT ON FUNCTION streamforge_internal.attach_trigger_name(text) IS
    'the name of the INSERT trigger that attaches a pipeline to a table (internal helper)';

-- The arguments of a trigger (pg_trigger.tgargs) as text[].
CREATE FUNCTION streamforge_internal.trigger_args(args bytea)
RETURNS text[]
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    result text[] := '{}';
    rest bytea := args;
    i integer;
BEGIN
    LOOP
        i := position('\x00'::bytea IN rest);
        EXIT WHEN i OPERATOR(pg_catalog.=) 0;
        result := result OPERATOR(pg_catalog.||) convert_from(substr(rest, 1, i OPERATOR(pg_catalog.-) 1), current_setting('server_encoding'));
        rest := substr(rest, i OPERATOR(pg_catalog.+) 1);
    END LOOP;
    RETURN result;
END
$$;
COMMENT ON FUNCTION streamforge_internal.trigger_args(bytea) IS
    'the arguments of a trigger as text[] (internal helper)';

-- The type of a mapping expression over the table (with no row read).
CREATE FUNCTION streamforge_internal.attach_expr_type(source regclass, expr text)
RETURNS regtype
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t regtype;
BEGIN
    FOR t IN EXECUTE format('SELECT pg_catalog.pg_typeof((SELECT %s FROM %s AS new_rows LIMIT 0))',
                            expr, source)
    LOOP
    END LOOP;
    RETURN t;
END
$$;
COMMENT ON FUNCTION streamforge_internal.attach_expr_type(regclass, text) IS
    'the type of a mapping expression over a table (internal helper)';

-- The statement-level AFTER INSERT trigger of an attachment.  Arguments:
-- pipeline, then the expressions of partition, event_id, key, event_time
-- (in units) and value.
CREATE FUNCTION streamforge_internal.attached_insert()
RETURNS trigger
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n bigint;
BEGIN
    IF TG_NARGS OPERATOR(pg_catalog.<>) 6 OR TG_LEVEL OPERATOR(pg_catalog.<>) 'STATEMENT'
       OR TG_OP OPERATOR(pg_catalog.<>) 'INSERT' THEN
        RAISE EXCEPTION 'streamforge_internal.attached_insert() must be created by streamforge.attach()'
            USING ERRCODE = '39P01';
    END IF;
    -- a cursor: exactly one query, whatever the expressions contain
    FOR n IN EXECUTE format(
        'SELECT pg_catalog.count(*) FROM streamforge.append_batch($1, '
        'ARRAY(SELECT ROW(%s, %s, %s, %s, %s)::streamforge.event FROM new_rows))',
        TG_ARGV[1], TG_ARGV[2], TG_ARGV[3], TG_ARGV[4], TG_ARGV[5])
        USING TG_ARGV[0]
    LOOP
    END LOOP;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION streamforge_internal.attached_insert() IS
    'trigger of streamforge.attach: appends the inserted rows to the pipeline';

-- The row-level BEFORE UPDATE trigger of an attachment: an update that
-- changes what the mappings read is refused; others pass.
CREATE FUNCTION streamforge_internal.attached_update()
RETURNS trigger
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    q text;
    o text;
    n text;
BEGIN
    IF TG_NARGS OPERATOR(pg_catalog.<>) 6 OR TG_LEVEL OPERATOR(pg_catalog.<>) 'ROW'
       OR TG_OP OPERATOR(pg_catalog.<>) 'UPDATE' THEN
        RAISE EXCEPTION 'streamforge_internal.attached_update() must be created by streamforge.attach()'
            USING ERRCODE = '39P01';
    END IF;
    q := format('SELECT ROW(%s, %s, %s, %s, %s)::streamforge.event::pg_catalog.text '
                'FROM (SELECT ($1).*) AS new_rows',
                TG_ARGV[1], TG_ARGV[2], TG_ARGV[3], TG_ARGV[4], TG_ARGV[5]);
    FOR o IN EXECUTE q USING OLD LOOP END LOOP;
    FOR n IN EXECUTE q USING NEW LOOP END LOOP;
    IF o IS DISTINCT FROM n THEN
        RAISE EXCEPTION 'cannot change an event of table % attached to pipeline "%"',
                        TG_RELID::regclass, TG_ARGV[0]
            USING ERRCODE = '0A000',
                  DETAIL = format('The pipeline consumed the row as %s; the update would make it %s.', o, n),
                  HINT = 'Insert a correcting row instead, with a new event id.';
    END IF;
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION streamforge_internal.attached_update() IS
    'trigger of streamforge.attach: refuses updates that change an ingested event';

-- attach(pipeline, source, event_id, key, event_time, value, partition):
-- from now on, every row inserted into source is an event of pipeline,
-- delivered at its partition's next offset in the inserting transaction.
-- Each mapping is an SQL expression over the table's columns; partition
-- defaults to the pipeline's only partition.  event_time may be an
-- integer (in the pipeline's units) or a timestamptz, timestamp (read as
-- UTC) or date when the pipeline has a time unit; value an integer.
CREATE FUNCTION streamforge.attach(pipeline text, source regclass,
    event_id text, key text, event_time text, value text DEFAULT '1',
    partition text DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    tg name;
    unit interval;
    parts text[];
    typ regtype;
    p_expr text;
    id_expr text;
    key_expr text;
    time_expr text;
    value_expr text;
    args text;
BEGIN
    IF pipeline IS NULL THEN
        RAISE EXCEPTION 'pipeline must not be null' USING ERRCODE = '22004';
    END IF;
    PERFORM streamforge.require_privilege(pipeline, 'ingest');
    IF source IS NULL OR event_id IS NULL OR key IS NULL OR event_time IS NULL
       OR value IS NULL THEN
        RAISE EXCEPTION 'arguments of attach must not be null'
            USING ERRCODE = '22004',
                  DETAIL = 'Only partition may be null (the pipeline''s only partition).';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_class AS c
                    WHERE c.oid OPERATOR(pg_catalog.=) source
                      AND c.relkind OPERATOR(pg_catalog.=) ANY (ARRAY['r', 'p']::"char"[])) THEN
        RAISE EXCEPTION '"%" is not a table', source USING ERRCODE = '42809';
    END IF;
    IF NOT pg_has_role((SELECT c.relowner FROM pg_catalog.pg_class AS c
                         WHERE c.oid OPERATOR(pg_catalog.=) source), 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of table %', source USING ERRCODE = '42501';
    END IF;
    tg := streamforge_internal.attach_trigger_name(pipeline);
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_trigger AS t
                WHERE t.tgrelid OPERATOR(pg_catalog.=) source
                  AND t.tgname OPERATOR(pg_catalog.=) tg) THEN
        RAISE EXCEPTION 'pipeline "%" is already attached to table %', pipeline, source
            USING ERRCODE = '42710';
    END IF;

    IF partition IS NULL THEN
        SELECT pg_catalog.array_agg(p.partition) INTO parts
          FROM streamforge.partitions(pipeline) AS p;
        IF pg_catalog.cardinality(parts) OPERATOR(pg_catalog.<>) 1 THEN
            RAISE EXCEPTION 'pipeline "%" has % partitions', pipeline, pg_catalog.cardinality(parts)
                USING ERRCODE = '22023',
                      HINT = 'Pass partition => an expression, or a quoted partition name such as ''''''p0''''''.';
        END IF;
        partition := quote_literal(parts[1]);
    END IF;

    p_expr := format('(%s)::pg_catalog.text', partition);
    id_expr := format('(%s)::pg_catalog.text', event_id);
    key_expr := format('(%s)::pg_catalog.text', key);

    typ := streamforge_internal.attach_expr_type(source, event_time);
    IF typ OPERATOR(pg_catalog.=) ANY (ARRAY['smallint', 'integer', 'bigint']::regtype[]) THEN
        time_expr := format('(%s)::pg_catalog.int8', event_time);
    ELSIF typ OPERATOR(pg_catalog.=) ANY (ARRAY['timestamp with time zone', 'timestamp without time zone', 'date']::regtype[]) THEN
        unit := streamforge.time_unit(pipeline);
        PERFORM streamforge_internal.unit_us(unit, pipeline);
        time_expr := format('streamforge.time_to_units(%s, %L::pg_catalog.interval)',
            CASE WHEN typ OPERATOR(pg_catalog.=) 'timestamp with time zone'::regtype
                 THEN format('(%s)', event_time)
                 ELSE format('pg_catalog.timezone(''UTC'', (%s)::pg_catalog.timestamp)', event_time) END,
            unit);
    ELSE
        RAISE EXCEPTION 'event_time must be an integer or a timestamp'
            USING ERRCODE = '42804',
                  DETAIL = format('The expression %s is of type %s.', event_time, typ);
    END IF;

    typ := streamforge_internal.attach_expr_type(source, value);
    IF typ OPERATOR(pg_catalog.<>) ALL (ARRAY['smallint', 'integer', 'bigint']::regtype[]) THEN
        RAISE EXCEPTION 'value must be an integer'
            USING ERRCODE = '42804',
                  DETAIL = format('The expression %s is of type %s.', value, typ);
    END IF;
    value_expr := format('(%s)::pg_catalog.int8', value);

    -- the whole row must evaluate (no row is read)
    EXECUTE format('SELECT ROW(%s, %s, %s, %s, %s)::streamforge.event FROM %s AS new_rows LIMIT 0',
                   p_expr, id_expr, key_expr, time_expr, value_expr, source);

    args := format('%L, %L, %L, %L, %L, %L', pipeline, p_expr, id_expr,
                   key_expr, time_expr, value_expr);
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %s REFERENCING NEW TABLE AS new_rows '
                   'FOR EACH STATEMENT EXECUTE FUNCTION streamforge_internal.attached_insert(%s)',
                   tg, source, args);
    EXECUTE format('CREATE TRIGGER %I BEFORE UPDATE ON %s '
                   'FOR EACH ROW EXECUTE FUNCTION streamforge_internal.attached_update(%s)',
                   tg OPERATOR(pg_catalog.||) '_update', source, args);
END
$$;
COMMENT ON FUNCTION streamforge.attach(text, regclass, text, text, text, text, text) IS
    'ingests every row inserted into a table as an event of a pipeline';

-- detach(pipeline, source): drops the triggers of attach().  Needs
-- ownership of the table; the pipeline need not exist any more.
CREATE FUNCTION streamforge.detach(pipeline text, source regclass)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    tg name;
BEGIN
    IF pipeline IS NULL OR source IS NULL THEN
        RAISE EXCEPTION 'arguments of detach must not be null' USING ERRCODE = '22004';
    END IF;
    tg := streamforge_internal.attach_trigger_name(pipeline);
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_trigger AS t
                    WHERE t.tgrelid OPERATOR(pg_catalog.=) source
                      AND t.tgname OPERATOR(pg_catalog.=) tg) THEN
        RAISE EXCEPTION 'pipeline "%" is not attached to table %', pipeline, source
            USING ERRCODE = '42704';
    END IF;
    EXECUTE format('DROP TRIGGER %I ON %s', tg, source);
    EXECUTE format('DROP TRIGGER IF EXISTS %I ON %s', tg OPERATOR(pg_catalog.||) '_update', source);
END
$$;
COMMENT ON FUNCTION streamforge.detach(text, regclass) IS
    'stops ingesting a table''s inserted rows into a pipeline';

-- The attachments in this database (of the tables the role can see in
-- pg_trigger, like \d).
CREATE VIEW streamforge.attachments AS
SELECT t.tgrelid::pg_catalog.regclass AS source,
       a.args[1] AS pipeline,
       a.args[2] AS partition,
       a.args[3] AS event_id,
       a.args[4] AS key,
       a.args[5] AS event_time,
       a.args[6] AS value,
       t.tgname AS trigger_name
  FROM pg_catalog.pg_trigger AS t,
       LATERAL (SELECT streamforge_internal.trigger_args(t.tgargs) AS args) AS a
 WHERE t.tgfoid OPERATOR(pg_catalog.=) 'streamforge_internal.attached_insert()'::pg_catalog.regprocedure;
COMMENT ON VIEW streamforge.attachments IS
    'tables attached to pipelines, with the mapping expressions';
GRANT SELECT ON streamforge.attachments TO PUBLIC;

-- ----------------------------------------------------------------
-- Per-row ingestion returning a count (issue 14, item 1; src/sf_sql.c)
-- ----------------------------------------------------------------
-- ingest_count: ingest (same checks, privileges, errors, persistence and
-- outputs), returning the number of changes instead of the rows.  Not
-- set-returning, so PL/pgSQL runs `n := streamforge.ingest_count(...)`
-- without starting the executor per call.
CREATE FUNCTION streamforge.ingest_count(pipeline text, partition text,
    source_offset bigint, event_id text, key text, event_time bigint,
    value bigint)
RETURNS integer
AS 'MODULE_PATHNAME', 'sf_ingest_count'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge.ingest_count(text, text, bigint, text, text, bigint, bigint) IS
    'deliver one event like ingest; returns the number of changes it caused';

-- ----------------------------------------------------------------
-- Outputs (sql/install/40_outputs.sql): avg in the results table,
-- results_retention, resync keeping finalized rows, trims
-- ----------------------------------------------------------------

-- The exact mean of every results row (issue 15), a generated column;
-- ALTER TABLE computes it for the rows 0.1.0 wrote.  One results table
-- holds the rows of every pipeline, so this covers them all.
ALTER TABLE streamforge.results ADD COLUMN avg numeric GENERATED ALWAYS AS
    (sum OPERATOR(pg_catalog./)
     (CASE WHEN count OPERATOR(pg_catalog.=) 0 THEN NULL
           ELSE count END)::pg_catalog.numeric) STORED;

-- configure_outputs gains results_retention (issue 13): the switch is a
-- new column of output_config, false for the pipelines of 0.1.0, and the
-- functions are replaced by their six-argument versions (disable_outputs
-- calls configure_outputs, so it goes first and comes back after).
ALTER TABLE streamforge.output_config
    ADD COLUMN results_retention boolean NOT NULL DEFAULT false;

DROP FUNCTION streamforge.disable_outputs(text);
DROP FUNCTION streamforge.configure_outputs(text, boolean, boolean, boolean,
    boolean);
DROP FUNCTION streamforge.configure_outputs_internal(text, boolean, boolean,
    boolean, boolean);

CREATE FUNCTION streamforge_internal.configure_outputs_internal(pipeline text,
    changelog boolean, results boolean, late boolean, notify boolean,
    results_retention boolean)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    old_results boolean;
BEGIN
    IF pipeline IS NULL THEN
        RAISE EXCEPTION 'pipeline must not be null' USING ERRCODE = '22004';
    END IF;
    IF changelog IS NULL OR results IS NULL OR late IS NULL OR notify IS NULL
       OR results_retention IS NULL THEN
        RAISE EXCEPTION 'output switches must not be null' USING ERRCODE = '22004';
    END IF;
    PERFORM 1 FROM streamforge.pipeline AS p
     WHERE p.name OPERATOR(pg_catalog.=) configure_outputs_internal.pipeline
       FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'pipeline "%" does not exist', pipeline
            USING ERRCODE = '42704';
    END IF;

    SELECT c.results INTO old_results FROM streamforge.output_config AS c
     WHERE c.pipeline OPERATOR(pg_catalog.=) configure_outputs_internal.pipeline;
    old_results := coalesce(old_results, false);

    IF results AND NOT old_results THEN
        DELETE FROM streamforge.results AS r
         WHERE r.pipeline OPERATOR(pg_catalog.=) configure_outputs_internal.pipeline;
        INSERT INTO streamforge.results (pipeline, window_name, key,
                window_start, window_end, count, sum, min, max, seq)
        SELECT configure_outputs_internal.pipeline, v.window_name, v.key,
               v.window_start, v.window_end, v.count, v.sum, v.min, v.max,
               NULL
          FROM streamforge.visible(configure_outputs_internal.pipeline) AS v;
    ELSIF old_results AND NOT results THEN
        DELETE FROM streamforge.results AS r
         WHERE r.pipeline OPERATOR(pg_catalog.=) configure_outputs_internal.pipeline;
    END IF;

    IF changelog OR results OR late OR notify THEN
        INSERT INTO streamforge.output_config AS c
               (pipeline, changelog, results, late, notify, results_retention)
        VALUES (configure_outputs_internal.pipeline, configure_outputs_internal.changelog,
                configure_outputs_internal.results, configure_outputs_internal.late,
                configure_outputs_internal.notify,
                configure_outputs_internal.results_retention)
        ON CONFLICT ON CONSTRAINT output_config_pkey DO UPDATE
           SET changelog = excluded.changelog, results = excluded.results,
               late = excluded.late, notify = excluded.notify,
               results_retention = excluded.results_retention,
               configured_at = pg_catalog.now();
    ELSE
        DELETE FROM streamforge.output_config AS c
         WHERE c.pipeline OPERATOR(pg_catalog.=) configure_outputs_internal.pipeline;
    END IF;

    IF results AND results_retention THEN
        PERFORM streamforge_internal.trim_results_internal(configure_outputs_internal.pipeline);
    END IF;
END
$$;

CREATE FUNCTION streamforge.configure_outputs(pipeline text,
    changelog boolean DEFAULT true, results boolean DEFAULT true,
    late boolean DEFAULT true, notify boolean DEFAULT true,
    results_retention boolean DEFAULT false)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_configure_outputs'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION streamforge.configure_outputs(text, boolean, boolean,
    boolean, boolean, boolean) IS
'Turn the pipeline''s durable outputs (changelog, results, late output, notifications) on or off; results_retention drops final results rows older than the retention horizon. Needs admin.';

REVOKE ALL ON FUNCTION streamforge_internal.configure_outputs_internal(text, boolean,
    boolean, boolean, boolean, boolean) FROM PUBLIC;

CREATE FUNCTION streamforge.disable_outputs(pipeline text)
RETURNS void
LANGUAGE sql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT streamforge.configure_outputs(pipeline, false, false, false, false, false);
END;

COMMENT ON FUNCTION streamforge.disable_outputs(text) IS
'Turn every output of the pipeline off (configure_outputs with every switch false). Needs admin.';

-- resync_outputs keeps the finalized results rows (issue 12) and re-applies
-- results_retention.
DROP FUNCTION streamforge.resync_outputs_internal(text);
CREATE FUNCTION streamforge_internal.resync_outputs_internal(pipeline text)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    cfg streamforge.output_config;
    st record;
BEGIN
    IF pipeline IS NULL THEN
        RAISE EXCEPTION 'pipeline must not be null' USING ERRCODE = '22004';
    END IF;
    PERFORM 1 FROM streamforge.pipeline AS p
     WHERE p.name OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
       FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'pipeline "%" does not exist', pipeline
            USING ERRCODE = '42704';
    END IF;
    SELECT * INTO cfg FROM streamforge.output_config AS c
     WHERE c.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline;
    st := streamforge.stats(pipeline);

    IF coalesce(cfg.results, false) THEN
        WITH undone AS (
            SELECT c.window_name, c.key, c.window_start, c.window_end
              FROM streamforge.changelog AS c
             WHERE c.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
               AND c.seq OPERATOR(pg_catalog.>) st.changes_emitted
            UNION
            SELECT r.window_name, r.key, r.window_start, r.window_end
              FROM streamforge.results AS r
             WHERE r.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
               AND r.seq OPERATOR(pg_catalog.>) st.changes_emitted),
        gone AS (
            DELETE FROM streamforge.results AS r
             USING undone AS u
             WHERE r.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
               AND (r.window_name, r.key, r.window_start, r.window_end)
                   OPERATOR(pg_catalog.=) (u.window_name, u.key, u.window_start, u.window_end))
        INSERT INTO streamforge.results (pipeline, window_name, key,
                window_start, window_end, count, sum, min, max, seq)
        SELECT l.pipeline, l.window_name, l.key, l.window_start,
               l.window_end, l.count, l.sum, l.min, l.max, l.seq
          FROM (SELECT DISTINCT ON (c.window_name, c.key, c.window_start,
                                    c.window_end) c.*
                  FROM streamforge.changelog AS c
                  JOIN undone AS u
                    ON (c.window_name, c.key, c.window_start, c.window_end)
                       OPERATOR(pg_catalog.=) (u.window_name, u.key, u.window_start, u.window_end)
                 WHERE c.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
                   AND c.seq OPERATOR(pg_catalog.<=) st.changes_emitted
                 ORDER BY c.window_name, c.key, c.window_start,
                          c.window_end, c.seq DESC) AS l
         WHERE l.op OPERATOR(pg_catalog.=) 'upsert' AND cfg.changelog;
    END IF;

    DELETE FROM streamforge.changelog AS c
     WHERE c.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
       AND c.seq OPERATOR(pg_catalog.>) st.changes_emitted;
    DELETE FROM streamforge.late_output AS l
     WHERE l.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
       AND l.late_seq OPERATOR(pg_catalog.>) st.late_events;

    IF coalesce(cfg.results, false) THEN
        -- visible() is the truth for the rows it shows
        DELETE FROM streamforge.results AS r
         USING streamforge.visible(resync_outputs_internal.pipeline) AS v
         WHERE r.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
           AND (r.window_name, r.key, r.window_start, r.window_end)
               OPERATOR(pg_catalog.=) (v.window_name, v.key, v.window_start, v.window_end)
           AND (r.count, r.sum, r.min, r.max)
               IS DISTINCT FROM (v.count, v.sum, v.min, v.max);
        INSERT INTO streamforge.results (pipeline, window_name, key,
                window_start, window_end, count, sum, min, max, seq)
        SELECT resync_outputs_internal.pipeline, v.window_name, v.key, v.window_start,
               v.window_end, v.count, v.sum, v.min, v.max, NULL
          FROM streamforge.visible(resync_outputs_internal.pipeline) AS v
         WHERE NOT EXISTS (
                SELECT 1 FROM streamforge.results AS r
                 WHERE r.pipeline OPERATOR(pg_catalog.=) resync_outputs_internal.pipeline
                   AND (r.window_name, r.key, r.window_start, r.window_end)
                       OPERATOR(pg_catalog.=) (v.window_name, v.key, v.window_start, v.window_end));
        -- what results_retention dropped stays dropped
        PERFORM streamforge_internal.trim_results_internal(resync_outputs_internal.pipeline);
    END IF;
END
$$;

REVOKE ALL ON FUNCTION streamforge_internal.resync_outputs_internal(text) FROM PUBLIC;

-- Trimming the outputs (issue 13): trim_changelog, trim_late_output,
-- trim_results and their internal functions.
CREATE FUNCTION streamforge_internal.trim_changelog_internal(pipeline text,
    up_to_seq bigint)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n bigint;
BEGIN
    IF pipeline IS NULL OR up_to_seq IS NULL THEN
        RAISE EXCEPTION 'arguments of trim_changelog must not be null'
            USING ERRCODE = '22004';
    END IF;
    DELETE FROM streamforge.changelog AS c
     WHERE c.pipeline OPERATOR(pg_catalog.=) trim_changelog_internal.pipeline
       AND c.seq OPERATOR(pg_catalog.<=) trim_changelog_internal.up_to_seq;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;

CREATE FUNCTION streamforge_internal.trim_late_output_internal(pipeline text,
    up_to_late_seq bigint)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n bigint;
BEGIN
    IF pipeline IS NULL OR up_to_late_seq IS NULL THEN
        RAISE EXCEPTION 'arguments of trim_late_output must not be null'
            USING ERRCODE = '22004';
    END IF;
    DELETE FROM streamforge.late_output AS l
     WHERE l.pipeline OPERATOR(pg_catalog.=) trim_late_output_internal.pipeline
       AND l.late_seq OPERATOR(pg_catalog.<=) trim_late_output_internal.up_to_late_seq;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;

-- The retention horizon H = watermark - lateness - retention of a pipeline
-- (docs/outputs.md, "Results retention"), computed exactly: NULL when the pipeline
-- has no retention, no watermark, or H is below the bigint range.  The
-- retention is the column of 70_retention.sql (reading the row as JSON
-- would detoast the pipeline's whole snapshot on every call).
CREATE FUNCTION streamforge_internal.retention_horizon_internal(pipeline text)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    lateness bigint;
    retention bigint;
    watermark bigint;
    h numeric;
BEGIN
    SELECT p.lateness,
           p.retention
      INTO lateness, retention
      FROM streamforge.pipeline AS p
     WHERE p.name OPERATOR(pg_catalog.=) retention_horizon_internal.pipeline;
    IF retention IS NULL THEN
        RETURN NULL;
    END IF;
    watermark := streamforge.watermark(pipeline);
    IF watermark IS NULL THEN
        RETURN NULL;
    END IF;
    h := watermark::numeric OPERATOR(pg_catalog.-) lateness::numeric
         OPERATOR(pg_catalog.-) retention::numeric;
    IF h OPERATOR(pg_catalog.<) (-9223372036854775808)::numeric THEN
        RETURN NULL;
    END IF;
    RETURN h::bigint;
END
$$;

-- With results_retention on (configure_outputs), delete the pipeline's
-- results rows whose window ended at or before the retention horizon:
-- they are final (H <= watermark - lateness) and hold only events the
-- pipeline has forgotten.  Returns the number of rows deleted (0 when
-- results_retention is off or there is no horizon).  The sink runs it
-- after each write call that wrote results (src/sink.c); one index range
-- per window, so it costs what it deletes.
CREATE FUNCTION streamforge_internal.trim_results_internal(pipeline text)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    h bigint;
    names text[];
    n bigint;
BEGIN
    IF pipeline IS NULL THEN
        RAISE EXCEPTION 'pipeline must not be null' USING ERRCODE = '22004';
    END IF;
    PERFORM 1 FROM streamforge.output_config AS c
     WHERE c.pipeline OPERATOR(pg_catalog.=) trim_results_internal.pipeline
       AND c.results AND c.results_retention;
    IF NOT FOUND THEN
        RETURN 0;
    END IF;
    h := streamforge_internal.retention_horizon_internal(pipeline);
    IF h IS NULL THEN
        RETURN 0;
    END IF;
    SELECT pg_catalog.array_agg((w).name) INTO names
      FROM streamforge.pipeline AS p, pg_catalog.unnest(p.windows) AS w
     WHERE p.name OPERATOR(pg_catalog.=) trim_results_internal.pipeline;
    DELETE FROM streamforge.results AS r
     WHERE r.pipeline OPERATOR(pg_catalog.=) trim_results_internal.pipeline
       AND r.window_name OPERATOR(pg_catalog.=) ANY (names)
       AND r.window_start OPERATOR(pg_catalog.<) h
       AND r.window_end OPERATOR(pg_catalog.<=) h;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;

REVOKE ALL ON FUNCTION streamforge_internal.trim_changelog_internal(text, bigint),
    streamforge_internal.trim_late_output_internal(text, bigint),
    streamforge_internal.retention_horizon_internal(text),
    streamforge_internal.trim_results_internal(text) FROM PUBLIC;

CREATE FUNCTION streamforge.trim_changelog(pipeline text, up_to_seq bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sf_trim_changelog'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION streamforge.trim_changelog(text, bigint) IS
'Delete the pipeline''s changelog rows with seq <= up_to_seq (consumed by every consumer); returns the number deleted. Needs admin.';

CREATE FUNCTION streamforge.trim_late_output(pipeline text,
    up_to_late_seq bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sf_trim_late_output'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION streamforge.trim_late_output(text, bigint) IS
'Delete the pipeline''s late output rows with late_seq <= up_to_late_seq; returns the number deleted. Needs admin.';

CREATE FUNCTION streamforge.trim_results(pipeline text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sf_trim_results'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION streamforge.trim_results(text) IS
'With results_retention on, delete the pipeline''s results rows whose window ended at or before the retention horizon; returns the number deleted. Needs admin.';

-- ----------------------------------------------------------------------
-- Retention (issue 13, SPEC.md section 6; sql/install/20_storage.sql and
-- 30_functions.sql; docs/retention.md).  A pipeline may forget what its
-- horizon no longer covers.  Existing pipelines get retention NULL: they
-- keep everything and behave, and checkpoint, exactly as under 0.1.0.
-- create_pipeline gains retention bigint DEFAULT NULL after lateness (its
-- place in SPEC.md; time_unit follows it); the C entry point finds both by
-- name, so every earlier definition keeps working until this update runs.
-- stats() gains the remembered/forgotten counters (the C function fills
-- as many columns as its definition has).  Persisted formats: checkpoints
-- of pipelines without retention are unchanged; snapshots written from
-- now on may be binary (docs/persistence.md, "Snapshots"), and 0.1.0
-- snapshots load as they are.
-- ----------------------------------------------------------------------
-- streamforge install script, part 7: retention (0.2.0, issue 13; SPEC.md
-- section 6, docs/retention.md).
--
-- A pipeline's retention, NULL (the default) keeping everything.  Added with
-- ALTER TABLE, as the update from 0.1.0 adds it, so that a fresh install
-- and an updated one have their columns in the same order.  The functions
-- that take and report it (create_pipeline, stats) are in
-- 30_functions.sql.

ALTER TABLE streamforge.pipeline ADD COLUMN retention bigint;
ALTER TABLE streamforge.pipeline
    ADD CONSTRAINT pipeline_retention_check CHECK (retention OPERATOR(pg_catalog.>=) 0);

DROP FUNCTION streamforge.create_pipeline(text, text[],
    streamforge.window_def[], bigint);
CREATE FUNCTION streamforge.create_pipeline(name text, partitions text[],
    windows streamforge.window_def[], lateness bigint DEFAULT 0,
    retention bigint DEFAULT NULL, time_unit interval DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_create_pipeline'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION streamforge.create_pipeline(text, text[],
    streamforge.window_def[], bigint, bigint, interval) IS
'creates a pipeline; retention (NULL: keep everything) bounds its state to the horizon watermark - lateness - retention';

DROP FUNCTION streamforge.stats(text);
CREATE FUNCTION streamforge.stats(pipeline text,
    OUT deliveries bigint, OUT accepted bigint, OUT duplicate_ids bigint,
    OUT late_events bigint, OUT offset_replays bigint,
    OUT changes_emitted bigint, OUT live_buckets bigint,
    OUT visible_rows bigint, OUT partitions integer,
    OUT idle_partitions integer, OUT remembered_identities bigint,
    OUT remembered_offsets bigint, OUT remembered_late_events bigint,
    OUT forgotten_offsets bigint, OUT forgotten_late_events bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'sf_stats'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION streamforge.stats(text) IS
'counters of a pipeline, and how much of its history it remembers and has forgotten (retention)';

-- ----------------------------------------------------------------
-- Pipeline management and the psql experience (issue 15):
-- sql/install/60_management.sql, 70_comments.sql and 80_pipeline_info.sql.
-- Internal helpers move to schema streamforge_internal (src/acl.c still
-- finds them in schema streamforge before this update); new functions
-- add_partition, add_window, drop_window, set_lateness, set_retention,
-- grant_privilege, revoke_privilege, live_avg, visible_avg; view
-- pipeline_info (it shows the retention column added above); a comment
-- on every public function, type, view and table.
-- ----------------------------------------------------------------

-- streamforge install script, part 6: managing pipelines (docs/management.md).
--
-- Definition changes of a running pipeline; averages next to live() and
-- visible(); names for grant and revoke that work unqualified.  The view of
-- every pipeline the caller may read is in 80_pipeline_info.sql.

-- ----------------------------------------------------------------
-- Definition changes
-- ----------------------------------------------------------------

-- Each needs the admin privilege, runs in the caller's transaction, and
-- returns the changes it caused (which the outputs receive as well).
CREATE FUNCTION streamforge.add_partition(pipeline text, partition text)
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_add_partition'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION streamforge.add_window(pipeline text,
    definition streamforge.window_def)
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_add_window'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION streamforge.drop_window(pipeline text, window_name text)
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_drop_window'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION streamforge.set_lateness(pipeline text, lateness bigint)
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_set_lateness'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- NULL retention keeps everything.  Not STRICT: NULL is a value here.
CREATE FUNCTION streamforge.set_retention(pipeline text, retention bigint)
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_set_retention'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- ----------------------------------------------------------------
-- Names that work unqualified (GRANT and REVOKE are reserved words)
-- ----------------------------------------------------------------
CREATE FUNCTION streamforge.grant_privilege(pipeline text, role name,
    privilege text)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_grant'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION streamforge.revoke_privilege(pipeline text, role name,
    privilege text)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_revoke'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- ----------------------------------------------------------------
-- Averages
-- ----------------------------------------------------------------

-- live() and visible() with avg = sum / count, an exact numeric quotient
-- rounded as numeric division rounds (at least 16 significant digits).
-- The change and result types stay as the contract defines them.
CREATE FUNCTION streamforge.live_avg(pipeline text)
RETURNS TABLE (window_name text, key text, window_start bigint,
               window_end bigint, count bigint, sum numeric, min bigint,
               max bigint, avg numeric)
LANGUAGE sql VOLATILE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT r.window_name, r.key, r.window_start, r.window_end, r.count,
           r.sum, r.min, r.max,
           r.sum OPERATOR(pg_catalog./) r.count::pg_catalog.numeric
      FROM streamforge.live(pipeline) AS r;
END;

CREATE FUNCTION streamforge.visible_avg(pipeline text)
RETURNS TABLE (window_name text, key text, window_start bigint,
               window_end bigint, count bigint, sum numeric, min bigint,
               max bigint, avg numeric)
LANGUAGE sql VOLATILE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT r.window_name, r.key, r.window_start, r.window_end, r.count,
           r.sum, r.min, r.max,
           r.sum OPERATOR(pg_catalog./) r.count::pg_catalog.numeric
      FROM streamforge.visible(pipeline) AS r;
END;

-- The view of every pipeline, pipeline_info, is in 80_pipeline_info.sql:
-- it reads the retention column, which 70_retention.sql adds.
-- streamforge install script, part 7: comments, shown by \df+, \dT+, \dv+.
--
-- Every public function, type and view has one (sql/comments.sql fails for
-- any that has none).  The reference is README.md.

COMMENT ON TYPE streamforge.window_def IS
    'window definition made by fixed(), sliding() or session()';
COMMENT ON TYPE streamforge.change IS
    'a change of the emitted results: retract or upsert of one row, with its seq';
COMMENT ON TYPE streamforge.result IS
    'a result row: window, key, bounds and count, sum, min, max';
COMMENT ON TYPE streamforge.delivery IS
    'one delivery for ingest_batch(): partition, offset, event_id, key, event_time, value';
COMMENT ON TYPE streamforge.late_event IS
    'an event that arrived after the watermark passed its time plus lateness';

COMMENT ON FUNCTION streamforge.fixed(text, bigint) IS
    'tumbling window of size units: [floor(t/size)*size, +size)';
COMMENT ON FUNCTION streamforge.sliding(text, bigint, bigint) IS
    'sliding window of size units, starting every step units';
COMMENT ON FUNCTION streamforge.session(text, bigint) IS
    'session window: events closer than gap units merge into one session';
COMMENT ON FUNCTION streamforge.drop_pipeline(text) IS
    'drop a pipeline, its state and its outputs (admin)';
-- create_pipeline and ingest change their arguments in 0.2.0 (retention,
-- time units): comment them whatever their signature
DO $$
DECLARE
    f pg_catalog.regprocedure;
BEGIN
    FOR f IN SELECT p.oid FROM pg_catalog.pg_proc AS p
              WHERE p.pronamespace OPERATOR(pg_catalog.=) 'streamforge'::pg_catalog.regnamespace
                AND p.proname OPERATOR(pg_catalog.=) 'create_pipeline'
    LOOP
        EXECUTE pg_catalog.format('COMMENT ON FUNCTION %s IS %L', f,
            'create a pipeline with its partitions, windows and allowed lateness');
    END LOOP;
    FOR f IN SELECT p.oid FROM pg_catalog.pg_proc AS p
              WHERE p.pronamespace OPERATOR(pg_catalog.=) 'streamforge'::pg_catalog.regnamespace
                AND p.proname OPERATOR(pg_catalog.=) 'ingest'
    LOOP
        EXECUTE pg_catalog.format('COMMENT ON FUNCTION %s IS %L', f,
            'deliver one event; returns the changes it caused');
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.ingest_batch(text, streamforge.delivery[]) IS
    'deliver events in array order, all or none; returns their changes';
COMMENT ON FUNCTION streamforge.advance(text, text, bigint) IS
    'report a partition''s event-time progress; returns the changes it caused';
COMMENT ON FUNCTION streamforge.mark_idle(text, text) IS
    'take a partition out of the watermark until it reports again';
COMMENT ON FUNCTION streamforge.checkpoint(text) IS
    'the pipeline''s whole state as checkpoint bytes';
COMMENT ON FUNCTION streamforge.restore(text, bytea) IS
    'replace the pipeline''s state by a checkpoint of an equivalent definition (admin)';
COMMENT ON FUNCTION streamforge.inspect_checkpoint(bytea) IS
    'validate checkpoint bytes and show their JSON document';
COMMENT ON FUNCTION streamforge.watermark(text) IS
    'the global watermark, NULL until there is one';
COMMENT ON FUNCTION streamforge.live(text) IS
    'every live bucket, ready or not, in address order';
COMMENT ON FUNCTION streamforge.visible(text) IS
    'the emitted rows: ready buckets not finalized yet, in address order';
COMMENT ON FUNCTION streamforge.late_events(text) IS
    'the late events, in late_seq order';
COMMENT ON FUNCTION streamforge.partitions(text) IS
    'each partition''s consumed offset (-1: none yet), progress and idleness';

COMMENT ON FUNCTION streamforge.resync_outputs(text) IS
    'bring the outputs back in line with the state after restore() (admin)';
COMMENT ON FUNCTION streamforge.clock_now(text) IS
    'the wall clock as units (us, ms, s, min) since the Unix epoch';
COMMENT ON FUNCTION streamforge.advance_to_now(text, text, bigint, text) IS
    'advance a partition to the wall clock minus a delay';
COMMENT ON FUNCTION streamforge.advance_job_name(text, text) IS
    'the pg_cron job name of a partition''s scheduled advance';
COMMENT ON FUNCTION streamforge.require_pg_cron() IS
    'raise an error unless pg_cron is installed in this database';
COMMENT ON FUNCTION streamforge.schedule_advance(text, text, text, bigint,
    text) IS
    'schedule advance_to_now() for a partition with pg_cron (admin)';
COMMENT ON FUNCTION streamforge.unschedule_advance(text, text) IS
    'remove a partition''s scheduled advance (admin)';
COMMENT ON FUNCTION streamforge.scheduled_advances() IS
    'the scheduled advances the current role can see';

COMMENT ON FUNCTION streamforge.grant(text, name, text) IS
    'give a role read, ingest or admin on a pipeline (admin); unqualified: grant_privilege()';
COMMENT ON FUNCTION streamforge.revoke(text, name, text) IS
    'take a privilege on a pipeline from a role (admin); unqualified: revoke_privilege()';
COMMENT ON FUNCTION streamforge.grant_privilege(text, name, text) IS
    'give a role read, ingest or admin on a pipeline (admin)';
COMMENT ON FUNCTION streamforge.revoke_privilege(text, name, text) IS
    'take a privilege on a pipeline from a role (admin)';
COMMENT ON FUNCTION streamforge.set_owner(text, name) IS
    'give a pipeline to another role (admin)';
COMMENT ON FUNCTION streamforge.has_pipeline_privilege(text, text, name) IS
    'whether a role has a privilege on a pipeline';
COMMENT ON FUNCTION streamforge.require_privilege(text, text) IS
    'raise 42704 or 42501 unless the current user has the privilege';
COMMENT ON FUNCTION streamforge.effective_privilege(regrole, regrole[],
    regrole[], regrole[]) IS
    'the privilege such an owner and grants give the current user';

COMMENT ON FUNCTION streamforge.add_partition(text, text) IS
    'add a partition to a running pipeline; it starts idle (admin)';
COMMENT ON FUNCTION streamforge.add_window(text, streamforge.window_def) IS
    'add a window to a running pipeline; it sees later events only (admin)';
COMMENT ON FUNCTION streamforge.drop_window(text, text) IS
    'drop a window of a running pipeline, retracting its visible rows (admin)';
COMMENT ON FUNCTION streamforge.set_lateness(text, bigint) IS
    'change the allowed lateness of a running pipeline (admin)';
COMMENT ON FUNCTION streamforge.set_retention(text, bigint) IS
    'change the retention of a running pipeline, NULL: keep everything (admin)';
COMMENT ON FUNCTION streamforge.live_avg(text) IS
    'live() with avg = sum / count as numeric';
COMMENT ON FUNCTION streamforge.visible_avg(text) IS
    'visible() with avg = sum / count as numeric';

-- pipeline_info's comment is in 80_pipeline_info.sql.
COMMENT ON VIEW streamforge.pipelines IS
    'the pipelines the current user may use, with its privilege and the grants';

COMMENT ON TABLE streamforge.pipeline IS
    'storage: one row per pipeline (definition, snapshot, privileges); internal';
COMMENT ON TABLE streamforge.journal IS
    'storage: the write calls since a pipeline''s snapshot; internal';
COMMENT ON TABLE streamforge.output_config IS
    'which outputs each pipeline has (configure_outputs)';
COMMENT ON TABLE streamforge.changelog IS
    'output: every change of the pipelines with a changelog, in seq order';
COMMENT ON TABLE streamforge.results IS
    'output: the changelog applied, finalized rows included';
COMMENT ON TABLE streamforge.late_output IS
    'output: every late event of the pipelines with a late output';

COMMENT ON FUNCTION streamforge_internal.output_config_changed() IS
    'internal: trigger invalidating the cached output configuration';
COMMENT ON FUNCTION streamforge_internal.configure_outputs_internal(text,
    boolean, boolean, boolean, boolean, boolean) IS
    'internal: body of configure_outputs(), run as the extension''s owner';
COMMENT ON FUNCTION streamforge_internal.resync_outputs_internal(text) IS
    'internal: body of resync_outputs(), run as the extension''s owner';
COMMENT ON FUNCTION streamforge_internal.trim_changelog_internal(text, bigint) IS
    'internal: body of trim_changelog(), run as the extension''s owner';
COMMENT ON FUNCTION streamforge_internal.trim_late_output_internal(text, bigint) IS
    'internal: body of trim_late_output(), run as the extension''s owner';
COMMENT ON FUNCTION streamforge_internal.trim_results_internal(text) IS
    'internal: body of trim_results(), run as the extension''s owner';
COMMENT ON FUNCTION streamforge_internal.retention_horizon_internal(text) IS
    'internal: a pipeline''s retention horizon, NULL when it has none';
-- streamforge install script, part 8: the view of every pipeline
-- (docs/management.md).  After 70_retention.sql, whose column it shows.

-- ----------------------------------------------------------------
-- The pipelines, in one view
-- ----------------------------------------------------------------

-- One row per pipeline the current user may read: its definition (windows
-- in readable form, in name order), outputs, the counters of stats(), the
-- watermark and the idle partitions.  The view runs as its owner (the
-- extension's owner), which may read the storage tables; the OFFSET 0
-- fence makes the privilege filter run before stats(), watermark() and
-- partitions() are called, which run as the current user and would refuse
-- a pipeline it may not read.  Reading a row loads the pipeline's state
-- into the backend's cache, like stats().
CREATE VIEW streamforge.pipeline_info WITH (security_barrier) AS
SELECT v.name, v.owner, v.privilege, v.partitions,
       ARRAY(SELECT w.name OPERATOR(pg_catalog.||) ': ' OPERATOR(pg_catalog.||)
                    w.kind OPERATOR(pg_catalog.||) '(' OPERATOR(pg_catalog.||)
                    CASE WHEN w.kind OPERATOR(pg_catalog.=) 'sliding'
                         THEN w.size::pg_catalog.text OPERATOR(pg_catalog.||)
                              ', ' OPERATOR(pg_catalog.||) w.step::pg_catalog.text
                         WHEN w.kind OPERATOR(pg_catalog.=) 'session'
                         THEN w.gap::pg_catalog.text
                         ELSE w.size::pg_catalog.text
                    END OPERATOR(pg_catalog.||) ')'
               FROM pg_catalog.unnest(v.windows) WITH ORDINALITY
                    AS w(name, kind, size, step, gap, i)
              ORDER BY w.i) AS windows,
       v.lateness, v.retention, v.time_unit,
       COALESCE(o.changelog, false) AS changelog,
       COALESCE(o.results, false) AS results,
       COALESCE(o.late, false) AS late_output,
       COALESCE(o.notify, false) AS notify,
       streamforge.watermark(v.name) AS watermark,
       ARRAY(SELECT t.partition FROM streamforge.partitions(v.name) AS t
              WHERE t.idle ORDER BY t.partition) AS idle_partitions,
       s.deliveries, s.accepted, s.duplicate_ids, s.late_events,
       s.offset_replays, s.changes_emitted, s.live_buckets, s.visible_rows
  FROM (SELECT p.name, p.owner, a.privilege, p.partitions, p.windows,
               p.lateness, p.retention, p.time_unit
          FROM streamforge.pipeline AS p,
               LATERAL (SELECT streamforge.effective_privilege(p.owner,
                               p.readers, p.ingesters, p.admins)
                               AS privilege) AS a
         WHERE a.privilege IS NOT NULL
        OFFSET 0) AS v
  LEFT JOIN streamforge.output_config AS o
         ON o.pipeline OPERATOR(pg_catalog.=) v.name
 CROSS JOIN LATERAL streamforge.stats(v.name) AS s;

REVOKE ALL ON streamforge.pipeline_info FROM PUBLIC;
GRANT SELECT ON streamforge.pipeline_info TO PUBLIC;

COMMENT ON VIEW streamforge.pipeline_info IS
    'the pipelines the current user may read: definition, outputs, watermark, idle partitions, counters';

-- ----------------------------------------------------------------
-- Journal epochs (issue 11, item 2; src/persist.c, docs/persistence.md)
-- ----------------------------------------------------------------
-- Nothing to convert.  Journal positions now start again at 1 after every
-- compaction and restore, in every backend; the epoch is the pipeline's
-- snapshot_version, which 0.1.0 already stores.  A 0.1.0 journal whose
-- positions continue from before its snapshot is read as it is: only the
-- order of the positions within one snapshot's journal matters.

-- ----------------------------------------------------------------
-- Buffered journal entries (issue 14, item 1; src/persist.c, src/journal.c)
-- ----------------------------------------------------------------
-- Nothing to convert.  A journal row may now hold several entries (format
-- byte 2); rows of one entry keep the 0.1.0 format (1), and 0.1.0 rows are
-- read as they are.  Only a 0.1.0 library could not read the new rows:
-- after ALTER EXTENSION UPDATE, do not go back to the 0.1.0 library.
