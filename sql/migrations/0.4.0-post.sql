-- streamforge 0.4.0: data fixes that need the extension's 0.4.0 functions.
--
-- Runs in the update from 0.3.0 only, after sql/objects/ (sql/build.sh).
-- Released with 0.4.0, then frozen.

-- Issue 41 (item 2): the definition document of every pipeline, built
-- from the old columns (sql/migrations/0.4.0.sql added the column), which
-- then become NULL.  jsonb_strip_nulls drops the unset options (a NULL
-- emit is 'update', absent from the document) and each window's
-- parameters its kind does not take, which is exactly the codec's
-- spelling.  Checkpoints stay byte-identical: the loaded definition is
-- the same.  First in this file: what follows may load pipelines.
UPDATE streamforge.pipeline AS p
   SET definition = streamforge_internal.legacy_definition(p),
       partitions = NULL, windows = NULL, lateness = NULL, time_unit = NULL,
       retention = NULL, out_of_orderness = NULL, idle_timeout = NULL,
       emit = NULL, measures = NULL, aggregates = NULL;
ALTER TABLE streamforge.pipeline ALTER COLUMN definition SET NOT NULL;

-- Issue 37 (security round 4): the aggregates made by 0.3.0.  Their views
-- become security barriers; an index whose spec names a key type the check
-- now refuses (a domain, as the attack of finding 1 left behind) is
-- dropped, with a warning, so that no insert into streamforge.results runs
-- its CHECK as the owner again.
DO $$
DECLARE
    a record;
    k jsonb;
BEGIN
    FOR a IN SELECT g.name, g.view_schema, g.view_name, g.spec
               FROM streamforge.aggregate AS g ORDER BY g.name
    LOOP
        FOR k IN SELECT e.value FROM pg_catalog.jsonb_array_elements(a.spec OPERATOR(pg_catalog.->) 'keys') AS e
        LOOP
            IF pg_catalog.to_regtype(k OPERATOR(pg_catalog.->>) 'type') IS NULL
               OR NOT streamforge_internal.aggregate_type_ok(pg_catalog.to_regtype(k OPERATOR(pg_catalog.->>) 'type')) THEN
                EXECUTE pg_catalog.format('DROP INDEX IF EXISTS streamforge.%I',
                                          streamforge_internal.aggregate_index_name(a.name));
                RAISE WARNING 'dropped the index of aggregate "%": its key type % is not allowed',
                              a.name, k OPERATOR(pg_catalog.->>) 'type'
                    USING HINT = 'Drop the aggregate and create it again (streamforge.drop_aggregate, create_aggregate).';
                EXIT;
            END IF;
        END LOOP;
        IF pg_catalog.to_regclass(pg_catalog.format('%I.%I', a.view_schema, a.view_name)) IS NOT NULL THEN
            EXECUTE pg_catalog.format('ALTER VIEW %I.%I SET (security_barrier)', a.view_schema, a.view_name);
        END IF;
        IF pg_catalog.to_regclass(pg_catalog.format('%I.%I', a.view_schema, a.view_name OPERATOR(pg_catalog.||) '_live')) IS NOT NULL THEN
            EXECUTE pg_catalog.format('ALTER VIEW %I.%I SET (security_barrier)', a.view_schema, a.view_name OPERATOR(pg_catalog.||) '_live');
        END IF;
        IF pg_catalog.to_regclass(pg_catalog.format('%I.%I', a.view_schema, a.view_name OPERATOR(pg_catalog.||) '_late')) IS NOT NULL THEN
            EXECUTE pg_catalog.format('ALTER VIEW %I.%I SET (security_barrier)', a.view_schema, a.view_name OPERATOR(pg_catalog.||) '_late');
        END IF;
    END LOOP;
END
$$;

-- Issue 38 (defect 4, long GROUP BY values) and issue 42 (item 2): each
-- aggregate of 0.3.0 gets the table of its results (objects/
-- 66_aggregates_views.sql), its rows move there from streamforge.results,
-- typed as its view decoded them (aggregate_results_pack: the values the
-- view showed before the update), its indexes on streamforge.results go
-- and its view reads the new table (same columns, owner and grants).  An
-- aggregate whose key type the check of issue 37 now refuses (above: its
-- index was dropped, with a warning) stays as it was.  The numbers are
-- drawn in name order.
UPDATE streamforge.aggregate AS g SET results_id = n.id
  FROM (SELECT x.name, pg_catalog.nextval('streamforge.aggregate_results_seq'::pg_catalog.regclass) AS id
          FROM (SELECT a.name FROM streamforge.aggregate AS a
                 WHERE a.results_id IS NULL
                   AND NOT EXISTS (
                       SELECT FROM pg_catalog.jsonb_array_elements(a.spec OPERATOR(pg_catalog.->) 'keys') AS e
                        WHERE pg_catalog.to_regtype(e.value OPERATOR(pg_catalog.->>) 'type') IS NULL
                           OR NOT streamforge_internal.aggregate_type_ok(
                                  pg_catalog.to_regtype(e.value OPERATOR(pg_catalog.->>) 'type')))
                 ORDER BY a.name) AS x) AS n
 WHERE g.name OPERATOR(pg_catalog.=) n.name;

DO $$
DECLARE
    a record;
    t text;
BEGIN
    FOR a IN SELECT g.name, g.view_schema, g.view_name, g.unit_us, g.spec, g.results_id
               FROM streamforge.aggregate AS g
              WHERE g.results_id IS NOT NULL ORDER BY g.name
    LOOP
        t := streamforge_internal.aggregate_results_table(a.results_id);
        PERFORM streamforge_internal.aggregate_make_table(a.results_id, a.spec);
        -- made by the update, the table would be a member of the
        -- extension, which a fresh install's tables are not (and pg_dump
        -- would not write it); owned by the extension's owner, as
        -- create_aggregate makes it
        EXECUTE pg_catalog.format('ALTER EXTENSION streamforge DROP TABLE %s', t);
        EXECUTE pg_catalog.format('ALTER TABLE %s OWNER TO %I', t,
                                  (SELECT pg_catalog.pg_get_userbyid(e.extowner)
                                     FROM pg_catalog.pg_extension AS e
                                    WHERE e.extname OPERATOR(pg_catalog.=) 'streamforge'));
        PERFORM streamforge_internal.aggregate_results_pack(a.name);
        EXECUTE pg_catalog.format('DROP INDEX IF EXISTS streamforge.%I, streamforge.%I',
                                  streamforge_internal.aggregate_index_name(a.name),
                                  streamforge_internal.aggregate_long_key_index_name(a.name));
        -- the view is not the extension's (pg_dump writes it), and an
        -- extension's script may replace only its own objects: it is the
        -- extension's for the time of the replacement
        IF pg_catalog.to_regclass(pg_catalog.format('%I.%I', a.view_schema, a.view_name)) IS NOT NULL THEN
            EXECUTE pg_catalog.format('ALTER EXTENSION streamforge ADD VIEW %I.%I', a.view_schema, a.view_name);
            PERFORM streamforge_internal.aggregate_results_view(a.name, a.view_schema, a.view_name,
                                                                a.unit_us, a.spec, true);
            EXECUTE pg_catalog.format('ALTER EXTENSION streamforge DROP VIEW %I.%I', a.view_schema, a.view_name);
        END IF;
    END LOOP;
END
$$;
