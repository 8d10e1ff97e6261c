-- streamforge objects: the top-N per window of an aggregate (0.4.0, issue
-- 44, item 4; docs/sql-aggregates.md, "Top-N per window").
--
--   SELECT streamforge.create_aggregate('hot_pages', $$
--       SELECT * FROM (
--           SELECT page, count(*) AS clicks,
--                  ROW_NUMBER() OVER (PARTITION BY streamforge.tumble(clicked_at, interval '1 minute')
--                                     ORDER BY count(*) DESC) AS rn
--             FROM clicks
--            GROUP BY page, streamforge.tumble(clicked_at, interval '1 minute')) AS t
--        WHERE rn <= 3
--   $$);
--
-- create_aggregate (C, src/api/aggregate_sql.c) splits such a query
-- (src/api/aggregate_top.c): its subquery without the ROW_NUMBER() item
-- is the aggregate, made as any other; the rest is checked against the
-- aggregate's plan by aggregate_top_spec below and kept in the
-- aggregate's spec as "top".  aggregate_register_internal then calls
-- aggregate_top_register, which makes the view <name>_top:
--
--   SELECT * FROM (SELECT v.*, row_number() OVER (PARTITION BY
--       v.window_start, v.window_end[, partition columns] ORDER BY v.<order>
--       <direction>, <grouping columns> ASC NULLS LAST) AS rn
--     FROM <name> AS v) AS t WHERE rn <= N
--
-- (with the query's outer select list instead of * when it names columns:
-- "columns" in the description),
--
-- so the view is the query's own ROW_NUMBER() over the aggregate's
-- results, with the tie rule made explicit: equal values are ranked by
-- the grouping columns, in the select list's order, ascending, NULLs last
-- (every grouping column must be in the select list, so that the order is
-- total).
--
-- Its changelog, streamforge.top_changelog (sql/schema/20_tables.sql), is
-- kept by the sink in the transaction of each write call
-- (src/persist/sink_top.c): aggregate_top_snapshot before the call's
-- results are written, aggregate_top_apply after, both restricted to the
-- windows the call changed.

-- ----------------------------------------------------------------
-- The changelog's privileges: as streamforge.changelog's (50_security.sql)
-- ----------------------------------------------------------------

DROP POLICY IF EXISTS top_changelog_read ON streamforge.top_changelog;
CREATE POLICY top_changelog_read ON streamforge.top_changelog
    FOR SELECT TO PUBLIC
    USING (EXISTS (SELECT 1 FROM streamforge.pipelines AS v
                    WHERE v.name OPERATOR(pg_catalog.=) top_changelog.pipeline));
REVOKE ALL ON streamforge.top_changelog FROM PUBLIC;
GRANT SELECT ON streamforge.top_changelog TO PUBLIC;
COMMENT ON TABLE streamforge.top_changelog IS
    'the changes of the top-N of the aggregates made by create_aggregate with a ROW_NUMBER() query';

-- ----------------------------------------------------------------
-- The sink's cache of which pipelines have a top-N
-- ----------------------------------------------------------------

CREATE OR REPLACE FUNCTION streamforge_internal.aggregate_top_changed()
RETURNS trigger
AS 'MODULE_PATHNAME', 'sf_aggregate_top_changed'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION streamforge_internal.aggregate_top_changed() FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.aggregate_top_changed() IS
    'trigger of streamforge.aggregate: invalidates the outputs'' cached configuration, which says which aggregates have a top-N';

CREATE OR REPLACE TRIGGER aggregate_top_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON streamforge.aggregate
    FOR EACH STATEMENT EXECUTE FUNCTION streamforge_internal.aggregate_top_changed();

-- ----------------------------------------------------------------
-- The description, checked against the aggregate's plan
-- ----------------------------------------------------------------

-- aggregate_top_spec(plan, top): top (aggregate_top.c: n, order,
-- descending, nulls_first, rank, partition) checked against the plan of
-- the aggregate (aggregate_plan), as {"top": top + keys}.  Called by
-- create_aggregate (C) as the caller.
CREATE OR REPLACE FUNCTION streamforge_internal.aggregate_top_spec(plan jsonb, top jsonb)
RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    keys text[];
    aggs text[];
    p text;
    hint constant text := 'A top-N per window is SELECT * FROM (SELECT ..., ROW_NUMBER() OVER (PARTITION BY <window>[, grouping columns] ORDER BY <aggregate> [DESC]) AS rn FROM t GROUP BY ...) AS x WHERE rn <= N (docs/sql-aggregates.md, Top-N per window).';
BEGIN
    IF EXISTS (SELECT FROM jsonb_array_elements(plan -> 'keys') AS k WHERE k ->> 'name' IS NULL) THEN
        RAISE EXCEPTION 'every GROUP BY expression of a top-N query must be in the select list'
            USING ERRCODE = '0A000',
                  DETAIL = 'Rows of equal value are ranked by their grouping columns, which must all be shown.',
                  HINT = hint;
    END IF;
    SELECT array_agg(k ->> 'name' ORDER BY o) INTO keys
      FROM jsonb_array_elements(plan -> 'keys') WITH ORDINALITY AS e(k, o);
    SELECT array_agg(a ->> 'name' ORDER BY o) INTO aggs
      FROM jsonb_array_elements(plan -> 'aggregates') WITH ORDINALITY AS e(a, o);
    IF NOT (top ->> 'order') = ANY (COALESCE(aggs, '{}')) THEN
        RAISE EXCEPTION 'the ORDER BY of ROW_NUMBER() must be one of the aggregates, not "%"', top ->> 'order'
            USING ERRCODE = '0A000', HINT = hint;
    END IF;
    FOR p IN SELECT jsonb_array_elements_text(top -> 'partition') LOOP
        IF NOT p = ANY (COALESCE(keys, '{}')) THEN
            RAISE EXCEPTION 'the PARTITION BY of ROW_NUMBER() may name the window and grouping columns, not "%"', p
                USING ERRCODE = '0A000', HINT = hint;
        END IF;
    END LOOP;
    IF (top ->> 'rank') = ANY (COALESCE(keys, '{}') || COALESCE(aggs, '{}')
                               || ARRAY['window_start', 'window_end', 'final']) THEN
        RAISE EXCEPTION 'the rank of a top-N query cannot be named "%", a column of the aggregate', top ->> 'rank'
            USING ERRCODE = '0A000', HINT = hint;
    END IF;
    FOR p IN SELECT jsonb_array_elements_text(top -> 'columns') LOOP
        IF NOT p = ANY (COALESCE(keys, '{}') || COALESCE(aggs, '{}')
                        || ARRAY['window_start', 'window_end', 'final', top ->> 'rank']) THEN
            RAISE EXCEPTION 'column "%" of the select list of a top-N query is not a column of its subquery', p
                USING ERRCODE = '0A000', HINT = hint;
        END IF;
    END LOOP;
    RETURN jsonb_build_object('top', top || jsonb_build_object('keys', to_jsonb(COALESCE(keys, '{}'))));
END
$$;
REVOKE ALL ON FUNCTION streamforge_internal.aggregate_top_spec(jsonb, jsonb) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.aggregate_top_spec(jsonb, jsonb) IS
    'the top-N of a create_aggregate query, checked against the aggregate''s plan (internal helper)';

-- ----------------------------------------------------------------
-- The view and the first changes, as the extension's owner
-- ----------------------------------------------------------------

-- aggregate_top_register(pipeline, schema, view, spec): the view
-- <view>_top, and an 'insert' change for each row it has already (the
-- table's rows create_aggregate ingested).  Called by
-- aggregate_register_internal (66_aggregates_views.sql).
CREATE OR REPLACE FUNCTION streamforge_internal.aggregate_top_register(pipeline text,
    view_schema text, view_name text, spec jsonb)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    top jsonb := spec -> 'top';
    parts text := '';
    ties text := '';
    cols text := '*';
    p text;
BEGIN
    FOR p IN SELECT jsonb_array_elements_text(top -> 'partition') LOOP
        parts := parts || format(', v.%I', p);
    END LOOP;
    FOR p IN SELECT jsonb_array_elements_text(top -> 'keys') LOOP
        ties := ties || format(', v.%I ASC NULLS LAST', p);
    END LOOP;
    IF top ? 'columns' THEN
        SELECT string_agg(format('t.%I', c), ', ' ORDER BY o) INTO cols
          FROM jsonb_array_elements_text(top -> 'columns') WITH ORDINALITY AS e(c, o);
    END IF;
    EXECUTE format(
        'CREATE VIEW %I.%I AS SELECT %s FROM ('
        'SELECT v.*, pg_catalog.row_number() OVER (PARTITION BY v.window_start, v.window_end%s '
        'ORDER BY v.%I %s NULLS %s%s) AS %I FROM %I.%I AS v) AS t '
        'WHERE t.%I OPERATOR(pg_catalog.<=) %s',
        view_schema, view_name || '_top', cols, parts, top ->> 'order',
        CASE WHEN (top ->> 'descending')::boolean THEN 'DESC' ELSE 'ASC' END,
        CASE WHEN (top ->> 'nulls_first')::boolean THEN 'FIRST' ELSE 'LAST' END,
        ties, top ->> 'rank', view_schema, view_name, top ->> 'rank',
        (top ->> 'n')::bigint);
    EXECUTE format('GRANT SELECT ON %I.%I TO PUBLIC', view_schema, view_name || '_top');
    EXECUTE format('COMMENT ON VIEW %I.%I IS %L', view_schema, view_name || '_top',
                   format('top %s per window of streamforge aggregate "%s" (streamforge.create_aggregate)',
                          top ->> 'n', pipeline));
    PERFORM streamforge_internal.aggregate_top_apply(pipeline, NULL, '[]');
END
$$;
REVOKE ALL ON FUNCTION streamforge_internal.aggregate_top_register(text, text, text, jsonb) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.aggregate_top_register(text, text, text, jsonb) IS
    'makes the view <name>_top of an aggregate with a top-N, as the extension''s owner (internal helper)';

-- ----------------------------------------------------------------
-- The changelog, kept by the sink (src/persist/sink_top.c)
-- ----------------------------------------------------------------

-- The rows of <name>_top in the windows that start at starts (NULL: all),
-- as [[rank, row], ...], row every column of <name> but final (whatever
-- <name>_top's select list shows).
CREATE OR REPLACE FUNCTION streamforge_internal.aggregate_top_snapshot(pipeline text, starts bigint[])
RETURNS jsonb
LANGUAGE plpgsql STABLE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    a record;
    top jsonb;
    rank text;
    parts text := '';
    ties text := '';
    p text;
    r jsonb;
BEGIN
    SELECT g.view_schema, g.view_name, g.unit_us, g.spec INTO a
      FROM streamforge.aggregate AS g WHERE g.name = pipeline;
    IF NOT FOUND OR NOT a.spec ? 'top' THEN
        RETURN '[]';
    END IF;
    top := a.spec -> 'top';
    rank := top ->> 'rank';
    -- <name>_top's ranking over every column of <name> (the view may
    -- show fewer: its select list)
    FOR p IN SELECT jsonb_array_elements_text(top -> 'partition') LOOP
        parts := parts || format(', v.%I', p);
    END LOOP;
    FOR p IN SELECT jsonb_array_elements_text(top -> 'keys') LOOP
        ties := ties || format(', v.%I ASC NULLS LAST', p);
    END LOOP;
    EXECUTE format(
        'SELECT COALESCE(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_array(t.%I, '
        'pg_catalog.to_jsonb(t) OPERATOR(pg_catalog.-) %L OPERATOR(pg_catalog.-) ''final'')), ''[]'') '
        'FROM (SELECT v.*, pg_catalog.row_number() OVER (PARTITION BY v.window_start, v.window_end%s '
        'ORDER BY v.%I %s NULLS %s%s) AS %I FROM %I.%I AS v '
        'WHERE $1 IS NULL OR v.window_start OPERATOR(pg_catalog.=) ANY ($1)) AS t '
        'WHERE t.%I OPERATOR(pg_catalog.<=) %s',
        rank, rank, parts, top ->> 'order',
        CASE WHEN (top ->> 'descending')::boolean THEN 'DESC' ELSE 'ASC' END,
        CASE WHEN (top ->> 'nulls_first')::boolean THEN 'FIRST' ELSE 'LAST' END,
        ties, rank, a.view_schema, a.view_name, rank, (top ->> 'n')::bigint)
        INTO r
        USING (SELECT array_agg(streamforge_internal.aggregate_time(s, a.unit_us)) FROM unnest(starts) AS s);
    RETURN r;
END
$$;
REVOKE ALL ON FUNCTION streamforge_internal.aggregate_top_snapshot(text, bigint[]) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.aggregate_top_snapshot(text, bigint[]) IS
    'the top-N rows of an aggregate in some windows, as jsonb (internal helper of the outputs)';

-- The changes from before (a snapshot of the same windows) to now,
-- appended to streamforge.top_changelog: 'delete' for a row that left
-- the top N (with its last rank and values), 'insert' for one that
-- entered, 'update' for one whose rank (old_rank: the previous) or
-- values changed; deletes first, then updates, then inserts, each by
-- window and rank, and rows of the same rank in different partitions of
-- a window (PARTITION BY beyond the window) by their identity's jsonb
-- order, so that seq does not depend on the join's plan.  A row is
-- identified by its window and grouping columns.  The caller holds the pipeline's row lock (the sink), so seq
-- is consecutive.
CREATE OR REPLACE FUNCTION streamforge_internal.aggregate_top_apply(pipeline text,
    starts bigint[], before jsonb)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    after jsonb := streamforge_internal.aggregate_top_snapshot(pipeline, starts);
    ids text[];
    last bigint;
BEGIN
    SELECT ARRAY['window_start', 'window_end'] || array_agg(k)
      INTO ids
      FROM streamforge.aggregate AS g,
           LATERAL jsonb_array_elements_text(g.spec -> 'top' -> 'keys') AS k
     WHERE g.name = pipeline;
    IF ids IS NULL THEN
        ids := ARRAY['window_start', 'window_end'];
    END IF;
    SELECT COALESCE(max(c.seq), 0) INTO last
      FROM streamforge.top_changelog AS c WHERE c.pipeline = aggregate_top_apply.pipeline;
    INSERT INTO streamforge.top_changelog AS c
        (pipeline, seq, op, window_start, window_end, rank, old_rank, row)
    SELECT aggregate_top_apply.pipeline,
           last + row_number() OVER (ORDER BY d.o, (d.r ->> 'window_start')::timestamptz,
                                              (d.r ->> 'window_end')::timestamptz, d.rk, d.id),
           d.op, (d.r ->> 'window_start')::timestamptz, (d.r ->> 'window_end')::timestamptz,
           d.rk, d.old_rk, d.r
      FROM (SELECT CASE WHEN a.id IS NULL THEN 'delete'
                        WHEN b.id IS NULL THEN 'insert' ELSE 'update' END AS op,
                   CASE WHEN a.id IS NULL THEN 0 WHEN b.id IS NULL THEN 2 ELSE 1 END AS o,
                   COALESCE(a.r, b.r) AS r, COALESCE(a.rk, b.rk) AS rk,
                   CASE WHEN a.id IS NOT NULL AND b.id IS NOT NULL THEN b.rk END AS old_rk,
                   COALESCE(a.id, b.id) AS id
              FROM (SELECT (e ->> 0)::bigint AS rk, e -> 1 AS r,
                           (SELECT jsonb_object_agg(k, e -> 1 -> k) FROM unnest(ids) AS k) AS id
                      FROM jsonb_array_elements(before) AS e) AS b
              FULL JOIN
                   (SELECT (e ->> 0)::bigint AS rk, e -> 1 AS r,
                           (SELECT jsonb_object_agg(k, e -> 1 -> k) FROM unnest(ids) AS k) AS id
                      FROM jsonb_array_elements(after) AS e) AS a
                ON a.id = b.id
             WHERE a.id IS NULL OR b.id IS NULL OR a.rk <> b.rk OR a.r <> b.r) AS d;
END
$$;
REVOKE ALL ON FUNCTION streamforge_internal.aggregate_top_apply(text, bigint[], jsonb) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.aggregate_top_apply(text, bigint[], jsonb) IS
    'appends the changes of an aggregate''s top-N in some windows to streamforge.top_changelog (internal helper of the outputs)';

-- results_retention's trim (trim_results_internal, 40_outputs.sql) of an
-- aggregate with a top-N (since branch h44b): the top-N rows of the
-- windows it drops, before, and a 'delete' for each after
-- (aggregate_top_apply of those windows, now empty), so that replaying
-- top_changelog keeps giving <name>_top when the trim drops windows no
-- call changes.  Without a top-N, trim_results_internal alone.  Run by
-- the sink after a write call's own top-N changes (sink_top.c) and by
-- trim_results; bounded by the windows it drops (one index range per
-- window name, as the trim).  Returns the number of results rows deleted.
CREATE OR REPLACE FUNCTION streamforge_internal.aggregate_top_trim(pipeline text)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    h bigint;
    names text[];
    starts bigint[];
    before jsonb;
    n bigint;
    rid bigint;
BEGIN
    IF pipeline IS NULL THEN
        RAISE EXCEPTION 'pipeline must not be null' USING ERRCODE = '22004';
    END IF;
    PERFORM 1 FROM streamforge.aggregate AS g
     WHERE g.name OPERATOR(pg_catalog.=) aggregate_top_trim.pipeline
       AND g.spec OPERATOR(pg_catalog.?) 'top';
    IF FOUND THEN
        PERFORM 1 FROM streamforge.output_config AS c
         WHERE c.pipeline OPERATOR(pg_catalog.=) aggregate_top_trim.pipeline
           AND c.results AND c.results_retention;
    END IF;
    IF FOUND THEN
        -- seq is consecutive under the pipeline's row lock (the sink holds
        -- it already; trim_results takes it here)
        PERFORM 1 FROM streamforge.pipeline AS p
         WHERE p.name OPERATOR(pg_catalog.=) aggregate_top_trim.pipeline
           FOR UPDATE;
        h := streamforge_internal.retention_horizon_internal(pipeline);
    END IF;
    IF h IS NOT NULL THEN
        -- the windows trim_results_internal drops
        SELECT pg_catalog.array_agg(w.e OPERATOR(pg_catalog.->>) 'name') INTO names
          FROM streamforge.pipeline AS p,
               pg_catalog.jsonb_array_elements(p.definition OPERATOR(pg_catalog.->) 'windows') AS w(e)
         WHERE p.name OPERATOR(pg_catalog.=) aggregate_top_trim.pipeline;
        SELECT pg_catalog.array_agg(DISTINCT r.window_start) INTO starts
          FROM streamforge.results AS r
         WHERE r.pipeline OPERATOR(pg_catalog.=) aggregate_top_trim.pipeline
           AND r.window_name OPERATOR(pg_catalog.=) ANY (names)
           AND r.window_start OPERATOR(pg_catalog.<) h
           AND r.window_end OPERATOR(pg_catalog.<=) h;
        -- (0.4.0) an aggregate's table (66_aggregates_views.sql)
        SELECT g.results_id INTO rid FROM streamforge.aggregate AS g
         WHERE g.name OPERATOR(pg_catalog.=) aggregate_top_trim.pipeline;
        IF rid IS NOT NULL THEN
            EXECUTE format('SELECT pg_catalog.array_agg(DISTINCT r.start_u) FROM %s AS r '
                           'WHERE r.start_u OPERATOR(pg_catalog.<) $1 '
                           'AND r.end_u OPERATOR(pg_catalog.<=) $1',
                           streamforge_internal.aggregate_results_table(rid))
               INTO starts USING h;
        END IF;
    END IF;
    IF starts IS NOT NULL THEN
        before := streamforge_internal.aggregate_top_snapshot(pipeline, starts);
    END IF;
    n := streamforge_internal.trim_results_internal(pipeline);
    IF before IS NOT NULL AND before OPERATOR(pg_catalog.<>) '[]' THEN
        PERFORM streamforge_internal.aggregate_top_apply(pipeline, starts, before);
    END IF;
    RETURN n;
END
$$;
REVOKE ALL ON FUNCTION streamforge_internal.aggregate_top_trim(text) FROM PUBLIC;
COMMENT ON FUNCTION streamforge_internal.aggregate_top_trim(text) IS
    'results_retention''s trim of an aggregate, with the deletes of the rows it drops from its top-N in streamforge.top_changelog (internal helper of the outputs)';
