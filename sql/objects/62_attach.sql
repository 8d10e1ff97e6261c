-- streamforge objects: tables attached to a pipeline
-- (attach, detach; 0.2.0, bound to the pipeline's identity in 0.3.0).
-- docs/ingestion.md describes them.
--
-- The trigger functions attached tables call (attached_insert,
-- attached_update) keep their signatures: users' triggers name them.
--
-- attach() creates two triggers on the table, named after the pipeline:
-- a statement-level AFTER INSERT trigger with a transition table, which
-- appends the statement's new rows (one append_batch per statement, so a
-- COPY of a million rows is one batch) in the inserting transaction, and a
-- row-level AFTER UPDATE trigger that refuses to change what a mapping
-- reads.  DELETE and TRUNCATE are ignored: the events stay consumed.
--
-- The mappings are SQL expressions over the table's columns, stored (as
-- fully qualified, type-converted expressions) in the triggers' arguments,
-- so pg_dump carries an attachment with its table, and restoring the
-- table's rows (which pg_dump does before it creates triggers) ingests
-- nothing twice.  The arguments are, in order: the pipeline's name, the
-- expressions of partition, event_id, key, event_time (in units) and
-- value, the pipeline's id, the numbers of the columns the expressions
-- read and those columns' names and types at attach time.
--
-- An attachment may have a filter (0.3.0, issue 29; create_aggregate's
-- WHERE): a boolean expression over the row, the tenth argument of the
-- triggers (an attachment without one has nine, as before).  Rows for
-- which it is not true are not ingested; an update that changes whether a
-- row matches is refused like one that changes a mapped value.
--
-- An attachment of a measures pipeline (0.3.0, issue 29; attach(...,
-- measures => ARRAY[...])) has eleven arguments: the sixth is the
-- expression ARRAY[(m1)::int8, ...]::int8[] of its measures, the tenth its
-- filter or '' for none, the eleventh the word measures; its insert
-- trigger calls append_measures_batch (86_attach_measures.sql).  The
-- other attachments keep the arguments they had.
--
-- Identity: an attachment is bound to its pipeline's id (never reused;
-- pg_dump carries ids over), not to its name.  drop_pipeline detaches
-- first (src/api/define.c calls drop_attachments below as the extension's
-- owner); an attachment left bound to a dropped pipeline (a table restored
-- without its pipeline, a trigger made by hand) refuses every insert, and a
-- pipeline created since under the same name receives nothing.
--
-- The columns: the update trigger's WHEN clause names every column the
-- mappings read, so that PostgreSQL refuses DROP COLUMN and ALTER COLUMN
-- TYPE of them (pg_depend); a rename is caught by the insert trigger,
-- which compares the columns' names and types with those at attach time.
-- The update trigger has a transition table, so that PostgreSQL refuses to
-- make the table a partition or an inheritance child (whose rows inserted
-- through the parent would never reach the trigger); attach() refuses
-- partitioned tables, partitions and tables in an inheritance hierarchy,
-- and the insert trigger refuses once the table has gained a child.
--
-- Privileges: the triggers run as the inserting role (no SECURITY
-- DEFINER), which therefore needs the ingest privilege on the pipeline;
-- an insert by a role without it fails with 42501 and inserts nothing.
-- Only the table's owner may attach (the expressions are code that will
-- run as whoever inserts, like any trigger the owner writes), and the
-- owner must have the ingest privilege: attach() checks it, and so does
-- the insert trigger at every statement, so that a trigger made by hand
-- (CREATE TRIGGER needs EXECUTE on the trigger function, which table owners
-- must keep for attach() and pg_restore) gains nothing that attach() would
-- not give.
--
-- Settings: the trigger functions pin search_path to pg_catalog, pg_temp,
-- so the mappings mean the same thing for every inserting role (qualify
-- your own functions), and the settings that change how values convert to
-- and from text (TimeZone, DateStyle, IntervalStyle, extra_float_digits,
-- bytea_output, lc_numeric, lc_monetary, lc_time,
-- standard_conforming_strings, transform_null_equals), so that a retried
-- insert maps to the same events whatever the inserting session's settings.
-- Not timezone_abbreviations: setting it reads its file, at every call.

-- The trigger name of an attachment of pipeline to a table:
-- 'streamforge_attach_' and the first 16 hex digits of md5(pipeline).  C
-- since 0.4.0 (src/api/attach_check.c), where the triggers' check uses the
-- same code.
CREATE OR REPLACE FUNCTION streamforge_internal.attach_trigger_name(pipeline text)
RETURNS name
AS 'MODULE_PATHNAME', 'sf_attach_trigger_name_sql'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION streamforge_internal.attach_trigger_name(text) IS
    'the name of the INSERT trigger that attaches a pipeline to a table (internal helper)';

-- The arguments of a trigger (pg_trigger.tgargs) as text[].
CREATE OR REPLACE FUNCTION streamforge_internal.trigger_args(args bytea)
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
        i := pg_catalog.position(rest, '\x00'::pg_catalog.bytea);
        EXIT WHEN i OPERATOR(pg_catalog.=) 0;
        result := result OPERATOR(pg_catalog.||) pg_catalog.convert_from(pg_catalog.substr(rest, 1, i OPERATOR(pg_catalog.-) 1), pg_catalog.current_setting('server_encoding'));
        rest := pg_catalog.substr(rest, i OPERATOR(pg_catalog.+) 1);
    END LOOP;
    RETURN result;
END
$$;
COMMENT ON FUNCTION streamforge_internal.trigger_args(bytea) IS
    'the arguments of a trigger as text[] (internal helper)';

-- The type of a mapping expression over the table (with no row read).
CREATE OR REPLACE FUNCTION streamforge_internal.attach_expr_type(source regclass, expr text)
RETURNS regtype
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t regtype;
BEGIN
    FOR t IN EXECUTE pg_catalog.format('SELECT pg_catalog.pg_typeof((SELECT %s FROM %s AS new_rows LIMIT 0))',
                                       expr, source)
    LOOP
    END LOOP;
    RETURN t;
END
$$;
COMMENT ON FUNCTION streamforge_internal.attach_expr_type(regclass, text) IS
    'the type of a mapping expression over a table (internal helper)';

-- The id of the pipeline named pipeline, NULL if there is none, 42501
-- unless the current user may read it: the id names the pipeline's
-- notification channel, which notify_channel tells only its readers (0.3.0
-- told any role, issue 37).  C (src/api/privileges.c): checks read as the
-- caller; the id is read as the extension's owner (0.4.0: by a kept plan;
-- the SQL function pipeline_id_internal that read it is dropped).
CREATE OR REPLACE FUNCTION streamforge_internal.pipeline_id(pipeline text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sf_pipeline_id'
LANGUAGE C STABLE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION streamforge_internal.pipeline_id(text) IS
    'the id of a pipeline the current user may read, NULL if none (internal helper of attachments)';

-- The names and types of the given columns of a table, in column order
-- ('' for none): what an attachment's mappings read.  Every pg_attribute
-- row whose number is listed counts, a dropped column's too.  C since
-- 0.4.0 (src/api/attach_check.c), where the triggers' check uses the same
-- code.
CREATE OR REPLACE FUNCTION streamforge_internal.attach_columns(source regclass, attnums smallint[])
RETURNS text
AS 'MODULE_PATHNAME', 'sf_attach_columns_sql'
LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION streamforge_internal.attach_columns(regclass, smallint[]) IS
    'the names and types of columns of a table (internal helper of attachments)';

-- What the triggers of an attachment check before they do anything: that
-- the trigger is one attach() would have made (its arguments, its name),
-- that the columns the mappings read are those of attach time, and, for
-- the insert trigger, that the table has no child, that the pipeline
-- bound is the one of that name and that the table's owner may ingest into
-- it.  args: the trigger's arguments (1-based).  Returns the pipeline's id.
CREATE OR REPLACE FUNCTION streamforge_internal.attach_check(source regclass,
    trigger_name name, args text[], for_insert boolean)
RETURNS bigint
-- C since 0.4.0 (src/api/attach_check.c; PL/pgSQL before, the same checks,
-- errors and order): the insert trigger runs it once per statement
AS 'MODULE_PATHNAME', 'sf_attach_check_sql'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge_internal.attach_check(regclass, name, text[], boolean) IS
    'checks a trigger of an attachment before it runs (internal helper)';

-- The error of an inserted row whose mapping of field (partition,
-- event_id, key, event_time or value) is NULL (0.4.0, issue 45, item 4):
-- names the table, the pipeline and the column or expression the mapping
-- reads, as attach() was given it.  The insert trigger calls it only for
-- such a row, as the second argument of COALESCE, so a row that maps to
-- no NULL costs nothing more.  expr: the stored mapping (attachments).
CREATE OR REPLACE FUNCTION streamforge_internal.attach_null_error(field text,
    expr text, source regclass, pipeline text)
RETURNS text
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
SET standard_conforming_strings = on
AS $$
DECLARE
    shown text := expr;
    m text[];
BEGIN
    -- the expression attach() was given, without the conversion it added
    m := pg_catalog.regexp_match(expr, '^\((.*)\)::pg_catalog\.(text|int8)$');
    IF m IS NULL THEN
        m := pg_catalog.regexp_match(expr, '^streamforge\.time_to_units\(\((.*)\), ''[^'']*''::pg_catalog\.interval\)$');
    END IF;
    IF m IS NULL THEN
        m := pg_catalog.regexp_match(expr, '^streamforge\.time_to_units\(pg_catalog\.timezone\(''UTC'', \((.*)\)::pg_catalog\.timestamp\), ''[^'']*''::pg_catalog\.interval\)$');
    END IF;
    IF m IS NOT NULL THEN
        shown := m[1];
    END IF;
    RAISE EXCEPTION '% of a row inserted into table % must not be null', field, source
        USING ERRCODE = '22004',
              DETAIL = pg_catalog.format('Table %s is attached to pipeline "%s" with %s from %s %s.',
                  source, pipeline, field,
                  CASE WHEN shown OPERATOR(pg_catalog.~) '^([a-z_][a-z0-9_$]*|"([^"]|"")+")$'
                       THEN 'column' ELSE 'the expression' END,
                  shown);
END
$$;
COMMENT ON FUNCTION streamforge_internal.attach_null_error(text, text, regclass, text) IS
    'raises the error of an inserted row whose mapping is null (internal helper of attachments)';

-- The rows query of an attachment's insert trigger (0.4.0, issue 42, item
-- 3): one SELECT over the trigger's transition table new_rows, with one
-- column per mapping, in the order of streamforge.event (partition,
-- event_id, key, event_time, value) or, for a measures attachment, of
-- streamforge.measures_delivery without its source_offset (the measures
-- bigint[] last), and the attachment's filter as its WHERE.  Each mapping
-- but measures raises the error that names it when a row's is NULL
-- (attach_null_error, evaluated only then).  $1 is the pipeline's name,
-- $2 the table (regclass).  args: the trigger's arguments (1-based).
-- The C trigger (src/api/attach_insert.c) prepares the query once per
-- trigger and backend and reads its rows straight into the batch that
-- append_batch (append_measures_batch) would apply; it is the one place
-- where the SQL of an insert is made (anything that changes how rows map,
-- such as a join, changes it here).
CREATE OR REPLACE FUNCTION streamforge_internal.attach_insert_query(args text[])
RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n integer := COALESCE(pg_catalog.cardinality(args), 0);
    named text[];
    tm text[];
BEGIN
    -- each mapping but measures, or the error that names it when a row's
    -- is NULL (attach_null_error; evaluated only then)
    named := ARRAY(SELECT pg_catalog.format('COALESCE(%s, streamforge_internal.attach_null_error(%L, %L, $2, $1)%s)',
                                            args[f.i OPERATOR(pg_catalog.+) 1], f.field, args[f.i OPERATOR(pg_catalog.+) 1],
                                            CASE WHEN f.i OPERATOR(pg_catalog.>=) 4 THEN '::pg_catalog.int8' ELSE '' END)
                     FROM (VALUES (1, 'partition'), (2, 'event_id'), (3, 'key'),
                                  (4, 'event_time'), (5, 'value')) AS f(i, field)
                    ORDER BY f.i);
    -- a timestamp mapping: the NULL test goes inside time_to_units, which
    -- refuses a NULL with words of its own
    tm := pg_catalog.regexp_match(args[5],
        '^streamforge\.time_to_units\(pg_catalog\.timezone\(''UTC'', \((.*)\)::pg_catalog\.timestamp\), (''[^'']*''::pg_catalog\.interval)\)$');
    IF tm IS NOT NULL THEN
        named[4] := pg_catalog.format('streamforge.time_to_units(pg_catalog.timezone(''UTC'', '
                                      'COALESCE((%s)::pg_catalog.timestamp, streamforge_internal.attach_null_error(%L, %L, $2, $1)::pg_catalog.timestamp)), %s)',
                                      tm[1], 'event_time', args[5], tm[2]);
    ELSE
        tm := pg_catalog.regexp_match(args[5],
            '^streamforge\.time_to_units\(\((.*)\), (''[^'']*''::pg_catalog\.interval)\)$');
        IF tm IS NOT NULL THEN
            named[4] := pg_catalog.format('streamforge.time_to_units(COALESCE((%s), streamforge_internal.attach_null_error(%L, %L, $2, $1)::pg_catalog.timestamptz), %s)',
                                          tm[1], 'event_time', args[5], tm[2]);
        END IF;
    END IF;
    IF n OPERATOR(pg_catalog.=) 11 THEN
        -- a measures pipeline: append_measures_batch assigns the offsets
        RETURN pg_catalog.format('SELECT %s, %s, %s, %s, %s FROM new_rows%s',
            named[1], named[2], named[3], named[4], args[6],
            CASE WHEN args[10] OPERATOR(pg_catalog.<>) ''
                 THEN pg_catalog.format(' WHERE (%s)', args[10]) ELSE '' END);
    END IF;
    RETURN pg_catalog.format('SELECT %s, %s, %s, %s, %s FROM new_rows%s',
        named[1], named[2], named[3], named[4], named[5],
        CASE WHEN n OPERATOR(pg_catalog.>=) 10
             THEN pg_catalog.format(' WHERE (%s)', args[10]) ELSE '' END);
END
$$;
COMMENT ON FUNCTION streamforge_internal.attach_insert_query(text[]) IS
    'the query of the rows an attachment''s insert trigger ingests (internal helper)';

-- The statement-level AFTER INSERT trigger of an attachment (C since
-- 0.4.0, src/api/attach_insert.c; PL/pgSQL before): attach_check, the
-- rows of attach_insert_query applied as append_batch (or
-- append_measures_batch) would apply them, in one batch, then the check
-- that the pipeline is still the one bound.  It runs as the inserting
-- role, with the settings below.
CREATE OR REPLACE FUNCTION streamforge_internal.attached_insert()
RETURNS trigger
AS 'MODULE_PATHNAME', 'sf_attached_insert'
LANGUAGE C VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
-- @mapping-settings;
COMMENT ON FUNCTION streamforge_internal.attached_insert() IS
    'trigger of streamforge.attach: appends the inserted rows to the pipeline';

-- The row-level AFTER UPDATE trigger of an attachment: an update that
-- changes what the mappings read is refused; others pass.
CREATE OR REPLACE FUNCTION streamforge_internal.attached_update()
RETURNS trigger
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
-- @mapping-settings
AS $$
DECLARE
    q text;
    o text;
    n text;
BEGIN
    IF TG_LEVEL OPERATOR(pg_catalog.<>) 'ROW' OR TG_OP OPERATOR(pg_catalog.<>) 'UPDATE' THEN
        RAISE EXCEPTION 'streamforge_internal.attached_update() must be created by streamforge.attach()'
            USING ERRCODE = '39P01';
    END IF;
    PERFORM streamforge_internal.attach_check(TG_RELID, TG_NAME,
                                              ARRAY(SELECT pg_catalog.unnest(TG_ARGV)), false);
    -- with a filter, a row that does not match is no event (NULL)
    -- (a measures attachment's row is a record: its sixth field an array)
    q := pg_catalog.format('SELECT CASE WHEN %s THEN ROW(%s, %s, %s, %s, %s)%s::pg_catalog.text END '
                           'FROM (SELECT ($1).*) AS new_rows',
                           CASE WHEN TG_NARGS OPERATOR(pg_catalog.>=) 10
                                     AND TG_ARGV[9] OPERATOR(pg_catalog.<>) ''
                                THEN pg_catalog.format('COALESCE((%s), false)', TG_ARGV[9])
                                ELSE 'true' END,
                           TG_ARGV[1], TG_ARGV[2], TG_ARGV[3], TG_ARGV[4], TG_ARGV[5],
                           CASE WHEN TG_NARGS OPERATOR(pg_catalog.=) 11 THEN ''
                                ELSE '::streamforge.event' END);
    FOR o IN EXECUTE q USING OLD LOOP END LOOP;
    FOR n IN EXECUTE q USING NEW LOOP END LOOP;
    IF (o IS NULL) OPERATOR(pg_catalog.<>) (n IS NULL) THEN
        RAISE EXCEPTION 'cannot change whether a row of table % matches the filter of pipeline "%"',
                        TG_RELID::pg_catalog.regclass, TG_ARGV[0]
            USING ERRCODE = '0A000',
                  DETAIL = pg_catalog.format('The filter is %s; the row %s it before the update and %s after.',
                                             TG_ARGV[9], CASE WHEN o IS NULL THEN 'did not match' ELSE 'matched' END,
                                             CASE WHEN n IS NULL THEN 'would not' ELSE 'would' END),
                  HINT = 'Insert a new row instead.';
    END IF;
    IF o IS DISTINCT FROM n THEN
        RAISE EXCEPTION 'cannot change an event of table % attached to pipeline "%"',
                        TG_RELID::pg_catalog.regclass, TG_ARGV[0]
            USING ERRCODE = '0A000',
                  DETAIL = pg_catalog.format('The pipeline consumed the row as %s; the update would make it %s.', o, n),
                  HINT = 'Insert a correcting row instead, with a new event id.';
    END IF;
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION streamforge_internal.attached_update() IS
    'trigger of streamforge.attach: refuses updates that change an ingested event';

-- Create the two triggers of an attachment, with the mappings already
-- converted (as attach() does, or as a trigger of 0.2.0 holds them).  The
-- columns the mappings read come from the dependencies of a temporary view
-- over them; a whole-row reference reads every column, and so does any
-- mapping when no temporary view can be made.  Runs as the caller: it does
-- nothing the caller could not do with CREATE TRIGGER, and the triggers
-- check themselves (attach_check).
CREATE OR REPLACE FUNCTION streamforge_internal.attach_create_triggers(
    pipeline text, pipeline_id bigint, source regclass, p_expr text,
    id_expr text, key_expr text, time_expr text, value_expr text,
    filter_expr text DEFAULT NULL, measures boolean DEFAULT false)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
-- @mapping-settings
AS $$
DECLARE
    tg name := streamforge_internal.attach_trigger_name(pipeline);
    attnums smallint[];
    whole_row boolean;
    probe regclass;
    guard text;
    args text;
BEGIN
    BEGIN
        EXECUTE pg_catalog.format('CREATE TEMPORARY VIEW streamforge_attach_probe AS '
                                  'SELECT ROW(%s, %s, %s, %s, %s)%s AS e, (%s) AS f FROM %s AS new_rows',
                                  p_expr, id_expr, key_expr, time_expr, value_expr,
                                  CASE WHEN measures THEN '' ELSE '::streamforge.event' END,
                                  COALESCE(filter_expr, 'true'), source);
        probe := 'pg_temp.streamforge_attach_probe'::pg_catalog.regclass;
        SELECT pg_catalog.array_agg(DISTINCT d.refobjsubid::pg_catalog.int2 ORDER BY d.refobjsubid::pg_catalog.int2)
          INTO attnums
          FROM pg_catalog.pg_rewrite AS r
          JOIN pg_catalog.pg_depend AS d
            ON d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_rewrite'::pg_catalog.regclass
           AND d.objid OPERATOR(pg_catalog.=) r.oid
         WHERE r.ev_class OPERATOR(pg_catalog.=) probe
           AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
           AND d.refobjid OPERATOR(pg_catalog.=) source
           AND d.refobjsubid OPERATOR(pg_catalog.>) 0;
        SELECT r.ev_action::pg_catalog.text OPERATOR(pg_catalog.~~) '% :varattno 0 %' INTO whole_row
          FROM pg_catalog.pg_rewrite AS r
         WHERE r.ev_class OPERATOR(pg_catalog.=) probe;
        EXECUTE 'DROP VIEW pg_temp.streamforge_attach_probe';
    EXCEPTION WHEN OTHERS THEN
        whole_row := true;
    END;
    IF whole_row THEN
        SELECT pg_catalog.array_agg(a.attnum ORDER BY a.attnum) INTO attnums
          FROM pg_catalog.pg_attribute AS a
         WHERE a.attrelid OPERATOR(pg_catalog.=) source
           AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped;
    END IF;
    attnums := COALESCE(attnums, '{}');

    -- always true, but names the columns: PostgreSQL refuses to drop or
    -- retype a column a trigger's WHEN clause reads
    SELECT pg_catalog.string_agg(pg_catalog.format('(OLD.%I IS NULL) IS NOT NULL', a.attname),
                                 ' AND ' ORDER BY a.attnum)
      INTO guard
      FROM pg_catalog.pg_attribute AS a
     WHERE a.attrelid OPERATOR(pg_catalog.=) source
       AND a.attnum OPERATOR(pg_catalog.=) ANY (attnums);

    args := pg_catalog.format('%L, %L, %L, %L, %L, %L, %L, %L, %L', pipeline, p_expr,
                              id_expr, key_expr, time_expr, value_expr,
                              pipeline_id::pg_catalog.text, attnums::pg_catalog.text,
                              streamforge_internal.attach_columns(source, attnums))
            OPERATOR(pg_catalog.||) CASE WHEN measures
                                         THEN pg_catalog.format(', %L, %L', COALESCE(filter_expr, ''), 'measures')
                                         WHEN filter_expr IS NULL THEN ''
                                         ELSE pg_catalog.format(', %L', filter_expr) END;
    EXECUTE pg_catalog.format('CREATE TRIGGER %I AFTER INSERT ON %s REFERENCING NEW TABLE AS new_rows '
                              'FOR EACH STATEMENT EXECUTE FUNCTION streamforge_internal.attached_insert(%s)',
                              tg, source, args);
    EXECUTE pg_catalog.format('CREATE TRIGGER %I AFTER UPDATE ON %s REFERENCING OLD TABLE AS old_rows '
                              'FOR EACH ROW %s EXECUTE FUNCTION streamforge_internal.attached_update(%s)',
                              tg::pg_catalog.text OPERATOR(pg_catalog.||) '_update', source,
                              CASE WHEN guard IS NULL THEN ''
                                   ELSE pg_catalog.format('WHEN (%s)', guard) END,
                              args);
END
$$;
COMMENT ON FUNCTION streamforge_internal.attach_create_triggers(text, bigint, regclass, text, text, text, text, text, text, boolean) IS
    'creates the triggers of an attachment (internal helper)';

-- attach(pipeline, source, event_id, key, event_time, value, partition):
-- from now on, every row inserted into source is an event of pipeline,
-- delivered at its partition's next offset in the inserting transaction.
-- Each mapping is an SQL expression over the table's columns; partition
-- defaults to the pipeline's only partition.  event_time may be an
-- integer (in the pipeline's units) or a timestamptz, timestamp (read as
-- UTC) or date when the pipeline has a time unit; value an integer.
-- filter (0.3.0): a boolean expression; rows for which it is not true are
-- not ingested.  measures (0.3.0): for a measures pipeline, one integer
-- expression per measure, in the pipeline's order, instead of value.
CREATE OR REPLACE FUNCTION streamforge.attach(pipeline text, source regclass,
    event_id text, key text, event_time text, value text DEFAULT '1',
    partition text DEFAULT NULL, filter text DEFAULT NULL,
    measures text[] DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
-- @mapping-settings
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
    rel record;
    nm integer;
    m text;
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
    SELECT c.relkind, c.relowner, c.relispartition, n.nspname INTO rel
      FROM pg_catalog.pg_class AS c
      JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
     WHERE c.oid OPERATOR(pg_catalog.=) source;
    IF NOT FOUND OR rel.relkind OPERATOR(pg_catalog.<>) ALL (ARRAY['r', 'p']::pg_catalog."char"[]) THEN
        RAISE EXCEPTION '"%" is not a table', source USING ERRCODE = '42809';
    END IF;
    IF NOT pg_catalog.pg_has_role(rel.relowner, 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of table %', source USING ERRCODE = '42501';
    END IF;
    IF rel.nspname OPERATOR(pg_catalog.=) ANY (ARRAY['streamforge', 'streamforge_internal']::pg_catalog.name[])
       OR EXISTS (SELECT 1 FROM pg_catalog.pg_depend AS d
                    JOIN pg_catalog.pg_extension AS e
                      ON e.oid OPERATOR(pg_catalog.=) d.refobjid
                   WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
                     AND d.objid OPERATOR(pg_catalog.=) source
                     AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
                     AND d.deptype OPERATOR(pg_catalog.=) 'e'
                     AND e.extname OPERATOR(pg_catalog.=) 'streamforge') THEN
        RAISE EXCEPTION 'cannot attach table % of extension streamforge', source
            USING ERRCODE = '0A000',
                  DETAIL = 'Every write call writes the extension''s own tables; an attachment to one would make each of them fail.';
    END IF;
    IF rel.relkind OPERATOR(pg_catalog.=) 'p' OR rel.relispartition
       OR EXISTS (SELECT 1 FROM pg_catalog.pg_inherits AS i
                   WHERE i.inhparent OPERATOR(pg_catalog.=) source
                      OR i.inhrelid OPERATOR(pg_catalog.=) source) THEN
        RAISE EXCEPTION 'cannot attach table % to a pipeline', source
            USING ERRCODE = '0A000',
                  DETAIL = CASE WHEN rel.relkind OPERATOR(pg_catalog.=) 'p' THEN 'It is a partitioned table.'
                                WHEN rel.relispartition THEN 'It is a partition.'
                                ELSE 'It has an inheritance parent or child.' END,
                  HINT = 'Attach a table without partitions, parent or children: rows inserted straight into a partition or child table, or routed to a partition through its parent, would bypass the attachment.';
    END IF;
    tg := streamforge_internal.attach_trigger_name(pipeline);
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_trigger AS t
                WHERE t.tgrelid OPERATOR(pg_catalog.=) source
                  AND t.tgname OPERATOR(pg_catalog.=) tg) THEN
        IF (SELECT a.pipeline_id FROM streamforge.attachments AS a
             WHERE a.source OPERATOR(pg_catalog.=) attach.source
               AND a.trigger_name OPERATOR(pg_catalog.=) tg)
           IS DISTINCT FROM streamforge_internal.pipeline_id(pipeline) THEN
            RAISE EXCEPTION 'table % is attached to a dropped pipeline "%"', source, pipeline
                USING ERRCODE = '42710',
                      HINT = 'Detach it first with streamforge.detach().';
        END IF;
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
        partition := pg_catalog.quote_literal(parts[1]);
    END IF;

    p_expr := pg_catalog.format('(%s)::pg_catalog.text', partition);
    id_expr := pg_catalog.format('(%s)::pg_catalog.text', event_id);
    key_expr := pg_catalog.format('(%s)::pg_catalog.text', key);

    typ := streamforge_internal.attach_expr_type(source, event_time);
    IF typ OPERATOR(pg_catalog.=) ANY (ARRAY['smallint', 'integer', 'bigint']::pg_catalog.regtype[]) THEN
        time_expr := pg_catalog.format('(%s)::pg_catalog.int8', event_time);
    ELSIF typ OPERATOR(pg_catalog.=) ANY (ARRAY['timestamp with time zone', 'timestamp without time zone', 'date']::pg_catalog.regtype[]) THEN
        unit := streamforge.time_unit(pipeline);
        PERFORM streamforge_internal.unit_us(unit, pipeline);
        time_expr := pg_catalog.format('streamforge.time_to_units(%s, %L::pg_catalog.interval)',
            CASE WHEN typ OPERATOR(pg_catalog.=) 'timestamp with time zone'::pg_catalog.regtype
                 THEN pg_catalog.format('(%s)', event_time)
                 ELSE pg_catalog.format('pg_catalog.timezone(''UTC'', (%s)::pg_catalog.timestamp)', event_time) END,
            unit);
    ELSE
        RAISE EXCEPTION 'event_time must be an integer or a timestamp'
            USING ERRCODE = '42804',
                  DETAIL = pg_catalog.format('The expression %s is of type %s.', event_time, typ);
    END IF;

    -- value, or the measures of a measures pipeline
    nm := streamforge_internal.pipeline_nmeasures(pipeline);
    IF measures IS NULL AND nm IS NOT NULL THEN
        RAISE EXCEPTION 'pipeline "%" has % measures', pipeline, nm
            USING ERRCODE = '22023',
                  HINT = 'Pass measures => ARRAY[...], one integer expression per measure.';
    ELSIF measures IS NOT NULL AND nm IS NULL THEN
        RAISE EXCEPTION 'pipeline "%" has one unnamed measure', pipeline
            USING ERRCODE = '22023',
                  HINT = 'Pass value => an integer expression, not measures.';
    ELSIF measures IS NOT NULL THEN
        IF value OPERATOR(pg_catalog.<>) '1' THEN
            RAISE EXCEPTION 'value and measures cannot both be given'
                USING ERRCODE = '22023';
        END IF;
        IF pg_catalog.array_ndims(measures) IS DISTINCT FROM 1 THEN
            RAISE EXCEPTION 'measures must be a one-dimensional array'
                USING ERRCODE = '22023';
        END IF;
        IF pg_catalog.cardinality(measures) OPERATOR(pg_catalog.<>) nm THEN
            RAISE EXCEPTION 'pipeline "%" has % measures, not %', pipeline, nm,
                            pg_catalog.cardinality(measures)
                USING ERRCODE = '22023',
                      HINT = 'Pass a one-dimensional array of one integer expression per measure.';
        END IF;
        IF pg_catalog.array_position(measures, NULL) IS NOT NULL THEN
            RAISE EXCEPTION 'element % of measures must not be null', pg_catalog.array_position(measures, NULL)
                USING ERRCODE = '22004';
        END IF;
        value_expr := '';
        FOREACH m IN ARRAY measures LOOP
            typ := streamforge_internal.attach_expr_type(source, m);
            IF typ OPERATOR(pg_catalog.<>) ALL (ARRAY['smallint', 'integer', 'bigint']::pg_catalog.regtype[]) THEN
                RAISE EXCEPTION 'measures must be integers'
                    USING ERRCODE = '42804',
                          DETAIL = pg_catalog.format('The expression %s is of type %s.', m, typ);
            END IF;
            value_expr := value_expr OPERATOR(pg_catalog.||)
                          CASE WHEN value_expr OPERATOR(pg_catalog.=) '' THEN '' ELSE ', ' END
                          OPERATOR(pg_catalog.||) pg_catalog.format('(%s)::pg_catalog.int8', m);
        END LOOP;
        value_expr := pg_catalog.format('ARRAY[%s]::pg_catalog.int8[]', value_expr);
    END IF;
    IF measures IS NULL THEN
        typ := streamforge_internal.attach_expr_type(source, value);
        IF typ OPERATOR(pg_catalog.<>) ALL (ARRAY['smallint', 'integer', 'bigint']::pg_catalog.regtype[]) THEN
            RAISE EXCEPTION 'value must be an integer'
                USING ERRCODE = '42804',
                      DETAIL = pg_catalog.format('The expression %s is of type %s.', value, typ);
        END IF;
        value_expr := pg_catalog.format('(%s)::pg_catalog.int8', value);
    END IF;

    IF filter IS NOT NULL THEN
        typ := streamforge_internal.attach_expr_type(source, filter);
        IF typ OPERATOR(pg_catalog.<>) 'boolean'::pg_catalog.regtype THEN
            RAISE EXCEPTION 'filter must be a boolean expression'
                USING ERRCODE = '42804',
                      DETAIL = pg_catalog.format('The expression %s is of type %s.', filter, typ);
        END IF;
    END IF;

    -- the whole row must evaluate (no row is read)
    EXECUTE pg_catalog.format('SELECT ROW(%s, %s, %s, %s, %s)%s FROM %s AS new_rows WHERE (%s) LIMIT 0',
                              p_expr, id_expr, key_expr, time_expr, value_expr,
                              CASE WHEN measures IS NULL THEN '::streamforge.event' ELSE '' END,
                              source, COALESCE(filter, 'true'));

    PERFORM streamforge_internal.attach_create_triggers(pipeline,
        streamforge_internal.pipeline_id(pipeline), source, p_expr, id_expr,
        key_expr, time_expr, value_expr, filter, measures IS NOT NULL);
END
$$;
COMMENT ON FUNCTION streamforge.attach(text, regclass, text, text, text, text, text, text, text[]) IS
    'ingests every row inserted into a table as an event of a pipeline';

-- detach(pipeline, source): drops the triggers of attach().  Needs
-- ownership of the table; the pipeline need not exist any more.
CREATE OR REPLACE FUNCTION streamforge.detach(pipeline text, source regclass)
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
    EXECUTE pg_catalog.format('DROP TRIGGER %I ON %s', tg, source);
    EXECUTE pg_catalog.format('DROP TRIGGER IF EXISTS %I ON %s', tg::pg_catalog.text OPERATOR(pg_catalog.||) '_update', source);
END
$$;
COMMENT ON FUNCTION streamforge.detach(text, regclass) IS
    'stops ingesting a table''s inserted rows into a pipeline';

-- drop_attachments(pipeline): detach every table attached to the pipeline
-- (bound to its id, or of 0.2.0 and naming it).  drop_pipeline calls it
-- first, as the extension's owner, once the caller is known to have the
-- admin privilege (src/api/define.c); nobody else may.  A table the
-- extension's owner may not alter keeps its triggers, with a warning:
-- bound to the dropped pipeline, they refuse every insert.
CREATE OR REPLACE FUNCTION streamforge_internal.drop_attachments(pipeline text)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    id text := streamforge_internal.pipeline_id(pipeline)::pg_catalog.text;
    r record;
BEGIN
    FOR r IN SELECT t.tgrelid::pg_catalog.regclass AS source, t.tgname
               FROM pg_catalog.pg_trigger AS t,
                    LATERAL (SELECT streamforge_internal.trigger_args(t.tgargs) AS args) AS a
              WHERE t.tgfoid OPERATOR(pg_catalog.=) ANY (ARRAY['streamforge_internal.attached_insert()',
                                                               'streamforge_internal.attached_update()']::pg_catalog.regprocedure[])
                AND a.args[1] OPERATOR(pg_catalog.=) pipeline
                AND (pg_catalog.cardinality(a.args) OPERATOR(pg_catalog.=) 6
                     OR a.args[7] OPERATOR(pg_catalog.=) id)
              ORDER BY t.tgrelid, t.tgname
    LOOP
        BEGIN
            EXECUTE pg_catalog.format('DROP TRIGGER %I ON %s', r.tgname, r.source);
        EXCEPTION WHEN insufficient_privilege THEN
            RAISE WARNING 'table % stays attached to the dropped pipeline "%"', r.source, pipeline
                USING DETAIL = 'The extension''s owner may not drop its triggers; they refuse every insert into the table.',
                      HINT = pg_catalog.format('The table''s owner can detach it: SELECT streamforge.detach(%L, %L);',
                                               pipeline, r.source::pg_catalog.text);
        END;
    END LOOP;
END
$$;
REVOKE ALL ON FUNCTION streamforge_internal.drop_attachments(text) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.drop_attachments(text) IS
    'detaches every table attached to a pipeline, for drop_pipeline (internal helper)';

-- The attachments in this database (of the tables the role can see in
-- pg_trigger, like \d).  pipeline_id: the pipeline bound (NULL for an
-- attachment of 0.2.0); an attachment whose pipeline_id is no pipeline's
-- is bound to a dropped pipeline.
CREATE OR REPLACE VIEW streamforge.attachments WITH (security_barrier) AS
SELECT t.tgrelid::pg_catalog.regclass AS source,
       a.args[1] AS pipeline,
       a.args[2] AS partition,
       a.args[3] AS event_id,
       a.args[4] AS key,
       a.args[5] AS event_time,
       a.args[6] AS value,
       t.tgname AS trigger_name,
       CASE WHEN a.args[7] OPERATOR(pg_catalog.~) '^[0-9]{1,18}$'
            THEN a.args[7]::pg_catalog.int8 END AS pipeline_id,
       CASE WHEN a.args[10] OPERATOR(pg_catalog.<>) '' THEN a.args[10] END AS filter
  FROM pg_catalog.pg_trigger AS t,
       LATERAL (SELECT streamforge_internal.trigger_args(t.tgargs) AS args) AS a
 WHERE t.tgfoid OPERATOR(pg_catalog.=) 'streamforge_internal.attached_insert()'::pg_catalog.regprocedure;
COMMENT ON VIEW streamforge.attachments IS
    'tables attached to pipelines, with the mapping expressions';
GRANT SELECT ON streamforge.attachments TO PUBLIC;
