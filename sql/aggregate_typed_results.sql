-- The table of an aggregate's results (0.4.0, issue 42 item 2;
-- docs/sql-aggregates.md, "The table of its results"): the sink writes the
-- typed values in C (src/persist/sink_typed.c); they must be exactly what
-- 0.3.0's views decoded from streamforge.results, and the maintenance
-- paths (configure_outputs, checkpoint and restore, results_retention,
-- finish, drop_aggregate) must keep them so.
--
-- Five aggregates over one table: measures pipelines in 'update' and
-- 'final' mode (every aggregate create_aggregate takes, FILTERs, nullable
-- arguments), one-measure pipelines over smallint, bigint and integer (a
-- hop), grouped by text, varchar COLLATE "C", integer, bigint, numeric,
-- boolean, uuid, date, timestamptz, an enum, integer[], double precision,
-- NULL keys and keys of more than 2000 bytes.  tr_check() checks every row
-- of an aggregate's table against 0.3.0's decoding of the same row (the
-- changelog keeps the jsonb and the count/sum/min/max the sink wrote) and
-- the view against a plain GROUP BY; it prints counts of mismatches (0
-- expected), and a self-check shows that a wrong cell is counted.
SET client_min_messages = warning;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, MDY';
\pset null '(null)'
-- the tables of the aggregates' results are numbered from 3000 here
SELECT setval('streamforge.aggregate_results_seq', 3000, false);

CREATE TYPE tr_mood AS ENUM ('sad', 'ok', 'happy');
-- the GROUP BY values of six groups (a row's keys are its group's)
CREATE TABLE tr_keys (g integer PRIMARY KEY, g_text text NOT NULL, g_vc varchar(12), g_int integer,
    g_big bigint, g_num numeric, g_bool boolean, g_uuid uuid, g_date date, g_ts timestamptz,
    g_mood tr_mood, g_arr integer[], g_nul text, g_flt double precision);
INSERT INTO tr_keys VALUES
 (1, 'alpha', 'B', 1, 9000000000, 1.50, true, '00000000-0000-0000-0000-000000000001',
  '2026-01-01', '2026-01-01 10:00:00+00', 'happy', '{1,2}', NULL, 0.1),
 (2, 'beta', 'a', -2, -1, 1.500, false, 'ffffffff-ffff-ffff-ffff-ffffffffffff',
  '1999-12-31', '1999-12-31 23:59:59.999999+00', 'sad', '{}', 'NULL', 1e300),
 (3, 'x, "y" {z} \', 'q\"', 2147483647, -9223372036854775808, 123456789012345678901234567890.123, true,
  'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'infinity', '-infinity', 'ok', '{NULL,3}', '', -0.0),
 (4, 'delta', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
 (5, '', '', 0, 0, -0.000001, false, '00000000-0000-0000-0000-000000000000',
  '2026-03-01', '2026-03-01 12:00:00.5+01', 'sad', '{-2147483648}', ' spaced ', 'NaN'),
 (6, repeat('L', 2100), 'long', 6, 6, 6.000, true, '66666666-6666-6666-6666-666666666666',
  '2026-06-06', '2026-06-06 06:06:06+00', 'ok', '{6}', repeat('N', 2100), 6);
CREATE TABLE tr_ev (id integer PRIMARY KEY, g_text text NOT NULL, g_vc varchar(12), g_int integer,
    g_big bigint, g_num numeric, g_bool boolean, g_uuid uuid, g_date date, g_ts timestamptz,
    g_mood tr_mood, g_arr integer[], g_nul text, g_flt double precision,
    s smallint NOT NULL, i integer, b bigint NOT NULL, bn bigint, n integer NOT NULL,
    at timestamptz NOT NULL);

-- a measures pipeline, 'update', with a retention (used in 2b)
SELECT streamforge.create_aggregate('tr_upd', $$
    SELECT g_text, g_vc COLLATE "C" AS g_vc, g_int, g_big, g_num, g_bool,
           count(*) AS n_all, count(i) AS n_i, sum(s) AS sum_s, sum(i) AS sum_i, sum(b) AS sum_b,
           min(s) AS min_s, max(s) AS max_s, min(i) AS min_i, max(i) AS max_i,
           min(b) AS min_b, max(b) AS max_b, avg(s) AS avg_s, avg(i) AS avg_i, avg(b) AS avg_b,
           var_pop(i) AS var_pop_i, var_samp(b) AS var_samp_b, variance(s) AS variance_s,
           stddev_pop(b) AS stddev_pop_b, stddev_samp(i) AS stddev_samp_i, stddev(s) AS stddev_s,
           count(*) FILTER (WHERE s > 10) AS n_s_gt_10, sum(b) FILTER (WHERE g_bool) AS sum_b_true,
           max(i) FILTER (WHERE s < 0 OR bn IS NULL) AS max_i_f, avg(bn) FILTER (WHERE n <> 2) AS avg_bn_f
      FROM tr_ev
     GROUP BY g_text, g_vc COLLATE "C", g_int, g_big, g_num, g_bool, streamforge.tumble(at, interval '1 minute')
$$, lateness => interval '30 seconds', out_of_orderness => interval '5 seconds', emit => 'update',
    retention => interval '1 minute');
-- a measures pipeline, 'final': percentiles, distinct counts, arg-max
SELECT streamforge.create_aggregate('tr_fin', $$
    SELECT g_uuid, g_date, g_ts, g_mood, g_arr, g_nul, g_flt,
           count(*) AS n_all, count(bn) AS n_bn, sum(bn) AS sum_bn, min(bn) AS min_bn, max(bn) AS max_bn,
           avg(bn) AS avg_bn, stddev_samp(bn) AS sd_bn, var_pop(s) AS vp_s, sum(n) AS sum_n,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY i) AS pc_i,
           percentile_disc(0.25) WITHIN GROUP (ORDER BY s) AS pd_s,
           percentile_disc(0.75) WITHIN GROUP (ORDER BY b) AS pd_b,
           percentile_disc(0.5) WITHIN GROUP (ORDER BY n) AS pd_n,
           count(DISTINCT s) AS nd_s, streamforge.approx_count_distinct(i) AS ad_i,
           streamforge.approx_percentile(b, 0.5) AS ap_b,
           streamforge.max_by(b, i) AS max_by_b, streamforge.min_by(i, b) AS min_by_i,
           sum(s) FILTER (WHERE i IS NULL) AS sum_s_f, min(n) AS min_n
      FROM tr_ev
     GROUP BY g_uuid, g_date, g_ts, g_mood, g_arr, g_nul, g_flt, streamforge.tumble(at, interval '1 minute')
$$, lateness => interval '30 seconds', out_of_orderness => interval '5 seconds', emit => 'final');
-- one-measure pipelines: smallint ('update', a WHERE), bigint ('final'),
-- integer (a hop, 'update')
SELECT streamforge.create_aggregate('tr_one_s', $$
    SELECT g_text, count(*) AS c, sum(s) AS sm, min(s) AS mn, max(s) AS mx, avg(s) AS av
      FROM tr_ev WHERE g_text <> 'beta'
     GROUP BY g_text, streamforge.tumble(at, interval '1 minute')
$$, lateness => interval '30 seconds', out_of_orderness => interval '5 seconds');
SELECT streamforge.create_aggregate('tr_one_b', $$
    SELECT g_int, count(b) AS c, sum(b) AS sm, min(b) AS mn, max(b) AS mx, avg(b) AS av
      FROM tr_ev
     GROUP BY g_int, streamforge.tumble(at, interval '1 minute')
$$, lateness => interval '30 seconds', out_of_orderness => interval '5 seconds', emit => 'final');
SELECT streamforge.create_aggregate('tr_one_i', $$
    SELECT g_mood, g_nul, count(*) AS c, sum(n) AS sm, min(n) AS mn, max(n) AS mx, avg(n) AS av
      FROM tr_ev
     GROUP BY g_mood, g_nul, streamforge.hop(at, interval '1 minute', interval '30 seconds')
$$, lateness => interval '30 seconds', out_of_orderness => interval '5 seconds');
SELECT name, emit, measures IS NOT NULL AS measures, cardinality(aggregates) AS declared
  FROM streamforge.pipeline_info WHERE name LIKE 'tr\_%' ORDER BY name;
-- the tables (numbered by the sequence set above)
SELECT g.name, streamforge_internal.aggregate_results_table(g.results_id) AS results_table
  FROM streamforge.aggregate AS g WHERE g.name LIKE 'tr\_%' ORDER BY g.results_id;
SELECT streamforge_internal.aggregate_results_table(results_id) AS t_upd
  FROM streamforge.aggregate WHERE name = 'tr_upd' \gset
SELECT streamforge_internal.aggregate_results_table(results_id) AS t_fin
  FROM streamforge.aggregate WHERE name = 'tr_fin' \gset
SELECT streamforge_internal.aggregate_results_table(results_id) AS t_one_s
  FROM streamforge.aggregate WHERE name = 'tr_one_s' \gset
SELECT streamforge_internal.aggregate_results_table(results_id) AS t_one_b
  FROM streamforge.aggregate WHERE name = 'tr_one_b' \gset
SELECT streamforge_internal.aggregate_results_table(results_id) AS t_one_i
  FROM streamforge.aggregate WHERE name = 'tr_one_i' \gset
-- the changelog and the late output too: the changelog keeps what the
-- sink wrote (the aggregates jsonb, count/sum/min/max), which the checks
-- decode as 0.3.0's views did
SELECT streamforge.configure_outputs(n, changelog => true, results => true, late => true, notify => false)
  FROM unnest(ARRAY['tr_fin', 'tr_one_b', 'tr_one_i', 'tr_one_s', 'tr_upd']) AS n;

-- The expected rows of each view: a plain GROUP BY over the source rows
-- that were not late (date_bin for the tumble), with the view's columns.
-- A numeric key is shown as trim_scale of the value, a double precision
-- one as x + 0 (docs/sql-aggregates.md, "Grouping keys").
CREATE VIEW tr_exp_tr_upd AS
SELECT g_text, g_vc COLLATE "C" AS g_vc, g_int, g_big, trim_scale(g_num) AS g_num, g_bool,
       date_bin('1 minute', at, 'epoch') AS window_start,
       date_bin('1 minute', at, 'epoch') + interval '1 minute' AS window_end,
       count(*) AS n_all, count(i) AS n_i, sum(s) AS sum_s, sum(i) AS sum_i, sum(b) AS sum_b,
       min(s) AS min_s, max(s) AS max_s, min(i) AS min_i, max(i) AS max_i,
       min(b) AS min_b, max(b) AS max_b, avg(s) AS avg_s, avg(i) AS avg_i, avg(b) AS avg_b,
       var_pop(i) AS var_pop_i, var_samp(b) AS var_samp_b, variance(s) AS variance_s,
       stddev_pop(b) AS stddev_pop_b, stddev_samp(i) AS stddev_samp_i, stddev(s) AS stddev_s,
       count(*) FILTER (WHERE s > 10) AS n_s_gt_10, sum(b) FILTER (WHERE g_bool) AS sum_b_true,
       max(i) FILTER (WHERE s < 0 OR bn IS NULL) AS max_i_f, avg(bn) FILTER (WHERE n <> 2) AS avg_bn_f
  FROM tr_ev
 WHERE id::text NOT IN (SELECT l.event_id FROM streamforge.late_output AS l WHERE l.pipeline = 'tr_upd')
 GROUP BY g_text, g_vc COLLATE "C", g_int, g_big, g_num, g_bool, date_bin('1 minute', at, 'epoch');
CREATE VIEW tr_exp_tr_fin AS
SELECT g_uuid, g_date, g_ts, g_mood, g_arr, g_nul, g_flt + 0 AS g_flt,
       date_bin('1 minute', at, 'epoch') AS window_start,
       date_bin('1 minute', at, 'epoch') + interval '1 minute' AS window_end,
       count(*) AS n_all, count(bn) AS n_bn, sum(bn) AS sum_bn, min(bn) AS min_bn, max(bn) AS max_bn,
       avg(bn) AS avg_bn, stddev_samp(bn) AS sd_bn, var_pop(s) AS vp_s, sum(n) AS sum_n,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY i) AS pc_i,
       percentile_disc(0.25) WITHIN GROUP (ORDER BY s) AS pd_s,
       percentile_disc(0.75) WITHIN GROUP (ORDER BY b) AS pd_b,
       percentile_disc(0.5) WITHIN GROUP (ORDER BY n) AS pd_n,
       count(DISTINCT s) AS nd_s, streamforge.approx_count_distinct(i) AS ad_i,
       streamforge.approx_percentile(b, 0.5) AS ap_b,
       streamforge.max_by(b, i) AS max_by_b, streamforge.min_by(i, b) AS min_by_i,
       sum(s) FILTER (WHERE i IS NULL) AS sum_s_f, min(n) AS min_n
  FROM tr_ev
 WHERE id::text NOT IN (SELECT l.event_id FROM streamforge.late_output AS l WHERE l.pipeline = 'tr_fin')
 GROUP BY g_uuid, g_date, g_ts, g_mood, g_arr, g_nul, g_flt, date_bin('1 minute', at, 'epoch');
CREATE VIEW tr_exp_tr_one_s AS
SELECT g_text, date_bin('1 minute', at, 'epoch') AS window_start,
       date_bin('1 minute', at, 'epoch') + interval '1 minute' AS window_end,
       count(*) AS c, sum(s) AS sm, min(s) AS mn, max(s) AS mx, avg(s) AS av
  FROM tr_ev
 WHERE g_text <> 'beta'
   AND id::text NOT IN (SELECT l.event_id FROM streamforge.late_output AS l WHERE l.pipeline = 'tr_one_s')
 GROUP BY g_text, date_bin('1 minute', at, 'epoch');
CREATE VIEW tr_exp_tr_one_b AS
SELECT g_int, date_bin('1 minute', at, 'epoch') AS window_start,
       date_bin('1 minute', at, 'epoch') + interval '1 minute' AS window_end,
       count(b) AS c, sum(b) AS sm, min(b) AS mn, max(b) AS mx, avg(b) AS av
  FROM tr_ev
 WHERE id::text NOT IN (SELECT l.event_id FROM streamforge.late_output AS l WHERE l.pipeline = 'tr_one_b')
 GROUP BY g_int, date_bin('1 minute', at, 'epoch');
-- the hop: a row is in the two windows that start at the two slides
-- before it
CREATE VIEW tr_exp_tr_one_i AS
SELECT g_mood, g_nul, w.ws AS window_start, w.ws + interval '1 minute' AS window_end,
       count(*) AS c, sum(n) AS sm, min(n) AS mn, max(n) AS mx, avg(n) AS av
  FROM tr_ev
 CROSS JOIN LATERAL (VALUES (date_bin('30 seconds', at, 'epoch')),
                            (date_bin('30 seconds', at, 'epoch') - interval '30 seconds')) AS w (ws)
 WHERE id::text NOT IN (SELECT l.event_id FROM streamforge.late_output AS l WHERE l.pipeline = 'tr_one_i')
 GROUP BY g_mood, g_nul, w.ws;

-- Whether the view of aggregate agg shows the window [ws, we): emitted
-- ('update': the watermark reached its end; 'final': the watermark passed
-- its end plus the lateness) and not dropped by results_retention (its
-- window ends at or before the horizon).
CREATE FUNCTION tr_shown(agg text, ws timestamptz, we timestamptz) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
DECLARE
    p record;
    s_u numeric;
    e_u numeric;
    h bigint;
BEGIN
    SELECT i.emit, i.lateness, i.watermark, g.unit_us, o.results_retention INTO p
      FROM streamforge.pipeline_info AS i
      JOIN streamforge.aggregate AS g ON g.name = i.name
      JOIN streamforge.output_config AS o ON o.pipeline = i.name
     WHERE i.name = agg;
    s_u := extract(epoch FROM ws) * 1000000 / p.unit_us;
    e_u := extract(epoch FROM we) * 1000000 / p.unit_us;
    IF p.watermark IS NULL OR e_u > p.watermark
       OR (p.emit = 'final' AND e_u + p.lateness >= p.watermark) THEN
        RETURN false;
    END IF;
    IF p.results_retention THEN
        h := streamforge_internal.retention_horizon_internal(agg);
        IF h IS NOT NULL AND s_u < h AND e_u <= h THEN
            RETURN false;
        END IF;
    END IF;
    RETURN true;
END
$$;

-- The checks of one aggregate's table of results, over every row:
--   rows       rows in the table; by_seq: of them, those whose seq is that
--              of a changelog row;
--   keys_bad   rows with a k<part> that is not, as a value and as text,
--              (aggregate_key_part(key, part))::type (0.3.0's decoding);
--   bounds_bad rows whose window_start or window_end is not
--              aggregate_time(start_u or end_u, unit_us);
--   aggs_bad   rows with an a<i> that is not, as a value and as text,
--              0.3.0's decoding of the row's source: the changelog row of
--              its seq ((aggregates ->> member)::type for a measures
--              pipeline, count, sum, min, max or avg for a one-measure
--              one); for a row with seq NULL (copied from the state) the
--              aggregates outputs_fill_aggregates would have filled in
--              (visible_aggregates(), or for a final row those of its
--              remembered events), or the row's own count/sum/min/max (one
--              measure); a row with a seq and no source counts, a row with
--              seq NULL whose source is gone (a final row whose events the
--              retention forgot, after finish()) is not compared (it was
--              when it was copied, and view_bad still compares it);
--   book_bad   rows with a seq whose changelog row is missing, a
--              retraction, not the last change of its address, of another
--              address or count/sum/min/max, or a 'final' change of a row
--              not final;
--   final_bad  rows whose final is not "watermark > end + lateness";
--   view_bad   rows of the view, and of tr_exp_<agg> for the windows the
--              view shows (tr_shown) and the condition extra, that the
--              other lacks, compared as text.
CREATE FUNCTION tr_check(agg text, extra text DEFAULT 'true')
RETURNS TABLE (aggregate text, rows bigint, by_seq bigint, keys_bad bigint, bounds_bad bigint,
               aggs_bad bigint, book_bad bigint, final_bad bigint, view_bad bigint)
LANGUAGE plpgsql AS $$
DECLARE
    g record;
    t text;
    k jsonb;
    a jsonb;
    i bigint;
    ex text;
    keys_x text := 'false';
    aggs_x text := 'false';
    measures boolean;
    src text;
    cols text;
    cond text;
BEGIN
    SELECT x.results_id, x.spec, x.unit_us, x.view_name, p.lateness, p.watermark INTO g
      FROM streamforge.aggregate AS x JOIN streamforge.pipeline_info AS p ON p.name = x.name
     WHERE x.name = agg;
    t := streamforge_internal.aggregate_results_table(g.results_id);
    measures := coalesce((g.spec ->> 'measures')::boolean, false);
    FOR k IN SELECT e.value FROM jsonb_array_elements(g.spec -> 'keys') AS e LOOP
        ex := format('(streamforge_internal.aggregate_key_part(t.key, %s))::%s%s',
                     (k ->> 'part')::integer, (k ->> 'type')::regtype,
                     CASE WHEN k ->> 'collation' IS NULL THEN ''
                          ELSE ' COLLATE ' || (k ->> 'collation')::regcollation END);
        keys_x := keys_x || format(' OR t.%1$I IS DISTINCT FROM %2$s OR t.%1$I::text IS DISTINCT FROM (%2$s)::text',
                                   'k' || (k ->> 'part')::integer, ex);
    END LOOP;
    FOR a, i IN SELECT e.value, e.ordinality FROM jsonb_array_elements(g.spec -> 'aggregates') WITH ORDINALITY AS e LOOP
        IF measures THEN
            ex := format('(s.aggregates ->> %L)::%s', a ->> 'member', (a ->> 'type')::regtype);
        ELSIF a ->> 'func' = 'count' THEN
            ex := 's.count';
        ELSIF a ->> 'func' = 'avg' THEN
            -- streamforge.results.avg, cast as the view cast it
            ex := format('(s.sum / (CASE WHEN s.count = 0 THEN NULL ELSE s.count END)::numeric)::%s',
                         (a ->> 'type')::regtype);
        ELSE
            ex := format('(s.%s)::%s', a ->> 'func', (a ->> 'type')::regtype);
        END IF;
        aggs_x := aggs_x || format(' OR t.%1$I IS DISTINCT FROM %2$s OR t.%1$I::text IS DISTINCT FROM (%2$s)::text',
                                   'a' || i, ex);
    END LOOP;
    IF measures THEN
        src := format('LEFT JOIN LATERAL (SELECT v.aggregates FROM streamforge.visible_aggregates(%1$L) AS v '
                      'WHERE t.seq IS NULL AND (v.window_name, v.key, v.window_start, v.window_end) '
                      '    = (%2$L, t.key, t.start_u, t.end_u) '
                      'UNION ALL SELECT f.aggregates FROM streamforge_internal.final_rows_aggregates(%1$L, '
                      '    ARRAY[%2$L], ARRAY[t.key], ARRAY[t.start_u], ARRAY[t.end_u]) AS f '
                      'WHERE t.seq IS NULL AND t.final LIMIT 1) AS st ON true '
                      'CROSS JOIN LATERAL (SELECT CASE WHEN t.seq IS NULL THEN st.aggregates '
                      '    ELSE c.aggregates END AS aggregates) AS s',
                      agg, g.spec ->> 'window');
    ELSE
        src := 'CROSS JOIN LATERAL (SELECT CASE WHEN t.seq IS NULL THEN t.count ELSE c.count END AS count, '
               'CASE WHEN t.seq IS NULL THEN t.sum ELSE c.sum END AS sum, '
               'CASE WHEN t.seq IS NULL THEN t.min ELSE c.min END AS min, '
               'CASE WHEN t.seq IS NULL THEN t.max ELSE c.max END AS max, '
               'CASE WHEN t.seq IS NULL OR c.seq IS NOT NULL THEN true END AS found) AS s';
    END IF;
    EXECUTE format(
        'SELECT count(*), count(c.seq), '
        'count(*) FILTER (WHERE %1$s), '
        'count(*) FILTER (WHERE t.window_start IS DISTINCT FROM streamforge_internal.aggregate_time(t.start_u, %2$s) '
        '    OR t.window_end IS DISTINCT FROM streamforge_internal.aggregate_time(t.end_u, %2$s)), '
        'count(*) FILTER (WHERE (%4$s AND t.seq IS NOT NULL) OR (NOT (%4$s) AND (%3$s))), '
        'count(*) FILTER (WHERE t.seq IS NOT NULL AND (c.seq IS NULL OR c.op = ''retract'' '
        '    OR (c.window_name, c.key, c.window_start, c.window_end, c.count, c.sum, c.min, c.max) '
        '       IS DISTINCT FROM (%5$L, t.key, t.start_u, t.end_u, t.count, t.sum, t.min, t.max) '
        '    OR (c.op = ''final'' AND NOT t.final) '
        '    OR EXISTS (SELECT 1 FROM streamforge.changelog AS l WHERE l.pipeline = %6$L AND l.seq > t.seq '
        '               AND (l.window_name, l.key, l.window_start, l.window_end) '
        '                 = (c.window_name, c.key, c.window_start, c.window_end)))), '
        'count(*) FILTER (WHERE t.final IS DISTINCT FROM coalesce(t.end_u::numeric + %7$s < %8$s, false)) '
        'FROM %9$s AS t LEFT JOIN streamforge.changelog AS c ON c.pipeline = %6$L AND c.seq = t.seq %10$s',
        keys_x, g.unit_us, aggs_x,
        CASE WHEN measures THEN 's.aggregates IS NULL' ELSE 's.found IS NULL' END,
        g.spec ->> 'window', agg, g.lateness, coalesce(g.watermark::text, 'NULL'), t, src)
      INTO rows, by_seq, keys_bad, bounds_bad, aggs_bad, book_bad, final_bad;
    SELECT string_agg(format('(%I)::text', attname), ', ' ORDER BY attnum) INTO cols
      FROM pg_attribute WHERE attrelid = ('tr_exp_' || agg)::regclass AND attnum > 0;
    cond := format('tr_shown(%L, window_start, window_end) AND (%s)', agg, extra);
    EXECUTE format('SELECT count(*) FROM ((SELECT %1$s FROM %2$I EXCEPT ALL SELECT %1$s FROM %3$I WHERE %4$s) '
                   'UNION ALL (SELECT %1$s FROM %3$I WHERE %4$s EXCEPT ALL SELECT %1$s FROM %2$I)) AS d',
                   cols, g.view_name, 'tr_exp_' || agg, cond)
      INTO view_bad;
    aggregate := agg;
    RETURN NEXT;
END
$$;
-- tr_check of every aggregate
CREATE FUNCTION tr_check_all()
RETURNS TABLE (aggregate text, rows bigint, by_seq bigint, keys_bad bigint, bounds_bad bigint,
               aggs_bad bigint, book_bad bigint, final_bad bigint, view_bad bigint)
LANGUAGE sql AS $$
    SELECT c.* FROM unnest(ARRAY['tr_fin', 'tr_one_b', 'tr_one_i', 'tr_one_s', 'tr_upd']) AS n,
                    LATERAL tr_check(n) AS c
     ORDER BY 1
$$;
-- the rows of an aggregate's view, as text
CREATE FUNCTION tr_view_rows(agg text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format('SELECT v::text FROM %I AS v', agg);
END
$$;
-- 'ok: ' and the first column of q's first row, or its error's SQLSTATE,
-- message and hint
CREATE FUNCTION tr_try(q text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    r text;
    h text;
BEGIN
    EXECUTE q INTO r;
    RETURN 'ok: ' || coalesce(r, 'NULL');
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS h = PG_EXCEPTION_HINT;
    RETURN SQLSTATE || ': ' || SQLERRM || CASE WHEN h <> '' THEN ' (' || h || ')' ELSE '' END;
END
$$;

-- The rows are staged in tr_in; :feed inserts the staged rows not fed yet,
-- with their group's keys, in one statement, in id order.
CREATE TABLE tr_in (id integer PRIMARY KEY, g integer NOT NULL, s smallint NOT NULL, i integer,
                    b bigint NOT NULL, bn bigint, n integer NOT NULL, at timestamptz NOT NULL);
\set feed 'INSERT INTO tr_ev SELECT r.id, k.g_text, k.g_vc, k.g_int, k.g_big, k.g_num, k.g_bool, k.g_uuid, k.g_date, k.g_ts, k.g_mood, k.g_arr, k.g_nul, k.g_flt, r.s, r.i, r.b, r.bn, r.n, r.at FROM tr_in AS r JOIN tr_keys AS k USING (g) WHERE r.id NOT IN (SELECT id FROM tr_ev) ORDER BY r.id'

-- 1. Value identity.  Eleven rows in one statement over two windows: the
-- watermark (5 s behind the largest time) reaches 12:01:05 at row 9, so
-- [12:00, 12:01) is emitted, and rows 10 and 100 (12:00:35 + 30 s is the
-- watermark: not late) correct it in the same statement.  Extremes: sums
-- past bigint, smallint and integer bounds, all-NULL arguments.
INSERT INTO tr_in VALUES
 (1, 1, 5, 10, 100, NULL, 1, '2026-03-01 12:00:05+00'),
 (2, 2, -32768, NULL, -5, 7, 2, '2026-03-01 12:00:10+00'),
 (3, 3, 32767, 2147483647, 9223372036854775807, 9223372036854775807, 3, '2026-03-01 12:00:15+00'),
 (4, 3, 32767, 2147483647, 9223372036854775807, -9223372036854775808, 4, '2026-03-01 12:00:20+00'),
 (5, 4, 0, NULL, 0, NULL, 5, '2026-03-01 12:00:25+00'),
 (6, 1, 11, -3, 7, 2, 6, '2026-03-01 12:00:40+00'),
 (7, 5, 12, 4, -9223372036854775808, 1, -7, '2026-03-01 12:00:59.999999+00'),
 (8, 1, 1, 1, 1, 1, 8, '2026-03-01 12:01:00+00'),
 (9, 2, 2, NULL, 2, NULL, 9, '2026-03-01 12:01:10+00'),
 (10, 4, -1, 6, -6, -6, 10, '2026-03-01 12:00:45+00'),
 (100, 6, 20, 21, 22, 23, 24, '2026-03-01 12:00:35+00');
:feed;
-- a correction of [12:00, 12:01) within the lateness (row 11); the
-- watermark reaches 12:02:15: [12:00, 12:01) is final, [12:01, 12:02)
-- emitted
INSERT INTO tr_in VALUES
 (11, 1, -1, NULL, 3, NULL, 11, '2026-03-01 12:00:50+00'),
 (12, 5, 100, 100, 100, 100, 12, '2026-03-01 12:01:40+00'),
 (13, 3, -5, -5, -5, -5, 13, '2026-03-01 12:02:20+00'),
 (14, 2, 3, 3, 3, 3, 14, '2026-03-01 12:02:10+00');
:feed;
-- row 15 is too late (the late output); row 16 corrects [12:01, 12:02)
-- (12:01:45 + 30 s is the watermark); row 17 moves the watermark to
-- 12:03:00: [12:01, 12:02) is final, [12:02, 12:03) emitted and then
-- corrected by rows 18 and 19
INSERT INTO tr_in VALUES
 (15, 1, 7, 7, 7, 7, 15, '2026-03-01 12:00:30+00'),
 (16, 2, 4, 4, 4, 4, 16, '2026-03-01 12:01:45+00'),
 (17, 4, 5, NULL, 5, NULL, 17, '2026-03-01 12:03:05+00'),
 (18, 5, 6, 6, 6, 6, 18, '2026-03-01 12:02:59+00'),
 (19, 5, 7, 7, 7, 7, 19, '2026-03-01 12:02:58+00');
:feed;
-- progress for every pipeline: [12:02, 12:03) is final ('update' mode
-- marks it so without a change)
SELECT n, count(c.*) AS changes
  FROM unnest(ARRAY['tr_fin', 'tr_one_b', 'tr_one_i', 'tr_one_s', 'tr_upd']) AS n
  LEFT JOIN LATERAL streamforge.advance_ts(n, 'default', '2026-03-01 12:03:40+00') AS c ON true
 GROUP BY n ORDER BY n;
SELECT pipeline, late_seq, event_id FROM streamforge.late_output WHERE pipeline LIKE 'tr\_%' ORDER BY 1, 2;
SELECT * FROM tr_check_all();

-- a few rows to read: the one-measure views (avg: sum / count, numeric)
SELECT left(g_text, 12) AS g_text, window_start, window_end, c, sm, mn, mx, av, final
  FROM tr_one_s ORDER BY window_start, g_text;
SELECT * FROM tr_one_b ORDER BY window_start, g_int;
SELECT g_mood, left(g_nul, 8) AS g_nul, window_start, c, sm, mn, mx, av, final
  FROM tr_one_i WHERE window_start = '2026-03-01 12:00:30+00' ORDER BY g_mood, g_nul;
-- the key text and its typed parts
SELECT left(key, 40) AS key, octet_length(key) AS key_len, left(k1, 12) AS k1, k2, k3, k4, k5, k6
  FROM :t_upd WHERE window_start = '2026-03-01 12:00+00' ORDER BY key;
SELECT left(key, 60) AS key, k1, k2, k3, k4, k5, left(k6, 8) AS k6, k7
  FROM :t_fin WHERE window_start = '2026-03-01 12:00+00' ORDER BY key;
-- measures: one group, every aggregate
\x
SELECT * FROM tr_upd WHERE g_text = 'alpha' AND window_start = '2026-03-01 12:00+00';
SELECT * FROM tr_fin WHERE g_mood = 'happy' AND window_start = '2026-03-01 12:00+00';
\x

-- self-check: a wrong cell is counted
BEGIN;
-- the same value, another scale (5.0000000000000000 as 5.00): the text differs
UPDATE :t_upd SET a12 = round(a12, 2) WHERE k1 = 'alpha' AND window_start = '2026-03-01 12:00+00';
-- the last bit of a double precision (percentile_cont)
UPDATE :t_fin SET a10 = 3.5000000000000004 WHERE k4 = 'happy' AND window_start = '2026-03-01 12:00+00';
-- a key part
UPDATE :t_fin SET k2 = k2 + 1
 WHERE k1 = 'ffffffff-ffff-ffff-ffff-ffffffffffff' AND window_start = '2026-03-01 12:02+00';
-- the engine's sum of a measures pipeline (not shown by the view)
UPDATE :t_fin SET sum = sum + 1 WHERE k4 = 'ok' AND window_start = '2026-03-01 12:02+00';
UPDATE :t_one_s SET window_end = window_end + interval '1 microsecond'
 WHERE k1 = 'alpha' AND window_start = '2026-03-01 12:01+00';
-- a one-measure pipeline's aggregates are generated from the engine's
-- count, sum, min and max: max, and with it a4 (mx)
UPDATE :t_one_b SET max = max - 1 WHERE k1 = 1 AND window_start = '2026-03-01 12:00+00';
-- a row missing
DELETE FROM :t_one_i WHERE k1 = 'happy' AND window_start = '2026-03-01 12:00+00';
UPDATE :t_upd SET final = false WHERE k1 = 'beta' AND window_start = '2026-03-01 12:02+00';
SELECT * FROM tr_check_all();
ROLLBACK;
SELECT * FROM tr_check_all();

-- 2a. A checkpoint, more rows, a restore: each view is what it was at the
-- checkpoint.  Rows 20 to 24 (24 is late) finalize and emit windows and
-- correct one of tr_one_i.
CREATE TABLE tr_cp AS
SELECT n AS name, streamforge.checkpoint(n) AS bytes
  FROM unnest(ARRAY['tr_fin', 'tr_one_b', 'tr_one_i', 'tr_one_s', 'tr_upd']) AS n;
CREATE TABLE tr_at_cp AS
SELECT c.name, r AS row FROM tr_cp AS c, LATERAL tr_view_rows(c.name) AS r;
INSERT INTO tr_in VALUES
 (20, 1, 9, 9, 9, 9, 20, '2026-03-01 12:03:10+00'),
 (21, 3, 8, NULL, 8, NULL, 21, '2026-03-01 12:03:20+00'),
 (22, 2, 10, 10, 10, 10, 22, '2026-03-01 12:04:20+00'),
 (23, 5, 11, 11, 11, 11, 23, '2026-03-01 12:05:30+00'),
 (24, 4, 12, 12, 12, 12, 24, '2026-03-01 12:01:00+00');
:feed;
SELECT * FROM tr_check_all();
-- the rows of each view that differ from the checkpoint's
SELECT c.name, (SELECT count(*) FROM ((SELECT r FROM tr_view_rows(c.name) AS r
                                       EXCEPT ALL SELECT a.row FROM tr_at_cp AS a WHERE a.name = c.name)
                                      UNION ALL
                                      (SELECT a.row FROM tr_at_cp AS a WHERE a.name = c.name
                                       EXCEPT ALL SELECT r FROM tr_view_rows(c.name) AS r)) AS d) AS differences
  FROM tr_cp AS c ORDER BY 1;
SELECT streamforge.restore(name, bytes) FROM tr_cp ORDER BY name;
SELECT c.name, (SELECT count(*) FROM ((SELECT r FROM tr_view_rows(c.name) AS r
                                       EXCEPT ALL SELECT a.row FROM tr_at_cp AS a WHERE a.name = c.name)
                                      UNION ALL
                                      (SELECT a.row FROM tr_at_cp AS a WHERE a.name = c.name
                                       EXCEPT ALL SELECT r FROM tr_view_rows(c.name) AS r)) AS d) AS differences
  FROM tr_cp AS c ORDER BY 1;
-- the restored pipelines never saw rows 20 to 24: out of the source
-- table too (the attachments ignore a DELETE)
DELETE FROM tr_ev WHERE id BETWEEN 20 AND 24;
DELETE FROM tr_in WHERE id BETWEEN 20 AND 24;
SELECT * FROM tr_check_all();
-- rows after the restore (row 28 is late)
INSERT INTO tr_in VALUES
 (25, 1, 9, 9, 9, 9, 25, '2026-03-01 12:03:10+00'),
 (26, 3, 8, NULL, 8, NULL, 26, '2026-03-01 12:03:20+00'),
 (27, 2, 10, 10, 10, 10, 27, '2026-03-01 12:04:20+00'),
 (28, 4, 12, 12, 12, 12, 28, '2026-03-01 12:02:50+00');
:feed;
SELECT * FROM tr_check_all();

-- 2b. results_retention: tr_upd has a retention of 1 minute; the rows of
-- the windows that end at or before its horizon, watermark - lateness -
-- retention, go
SELECT streamforge_internal.aggregate_time(watermark - lateness - retention, 1) AS horizon
  FROM streamforge.pipeline_info WHERE name = 'tr_upd';
SELECT window_start, count(*) FROM :t_upd GROUP BY 1 ORDER BY 1;
SELECT streamforge.configure_outputs('tr_upd', changelog => true, results => true, late => true,
                                     notify => false, results_retention => true);
SELECT window_start, count(*) FROM :t_upd GROUP BY 1 ORDER BY 1;
SELECT * FROM tr_check('tr_upd');
-- and at the end of each write call that writes results
INSERT INTO tr_in VALUES
 (29, 1, 14, 14, 14, 14, 29, '2026-03-01 12:04:05+00'),
 (30, 3, 15, NULL, 15, NULL, 30, '2026-03-01 12:04:50+00'),
 (31, 4, 16, 16, 16, 16, 31, '2026-03-01 12:04:55+00'),
 (32, 5, 13, 13, 13, 13, 32, '2026-03-01 12:05:10+00');
:feed;
SELECT streamforge_internal.aggregate_time(watermark - lateness - retention, 1) AS horizon
  FROM streamforge.pipeline_info WHERE name = 'tr_upd';
SELECT window_start, count(*) FROM :t_upd GROUP BY 1 ORDER BY 1;
SELECT * FROM tr_check_all();

-- 2c. Results off, then on again: the rows come back from the state,
-- visible() (the emitted windows not final yet), and with backfill the
-- final ones too, from the remembered events.  0.3.0 filled a measures
-- pipeline's aggregates of such rows (outputs_fill_aggregates).  Found
-- by this test, then fixed: tr_upd's rows copied from visible() came back
-- with NULL aggregates (configure_outputs_internal packed them before
-- they were filled, and the backfill's unpack rebuilt a jsonb of NULLs,
-- which outputs_fill_aggregates passes by); configure_outputs_internal
-- now fills them before it packs them.
SELECT streamforge.configure_outputs(n, changelog => true, results => false, late => true, notify => false)
  FROM unnest(ARRAY['tr_fin', 'tr_one_b', 'tr_one_s', 'tr_upd']) AS n;
SELECT (SELECT count(*) FROM :t_upd) AS upd, (SELECT count(*) FROM :t_fin) AS fin,
       (SELECT count(*) FROM :t_one_s) AS one_s, (SELECT count(*) FROM :t_one_b) AS one_b,
       (SELECT count(*) FROM tr_upd) + (SELECT count(*) FROM tr_fin)
       + (SELECT count(*) FROM tr_one_s) + (SELECT count(*) FROM tr_one_b) AS in_views;
SELECT streamforge.configure_outputs(n, changelog => true, results => true, late => true, notify => false)
  FROM unnest(ARRAY['tr_one_s', 'tr_upd']) AS n;
SELECT streamforge.configure_outputs(n, changelog => true, results => true, late => true, notify => false,
                                     backfill => true)
  FROM unnest(ARRAY['tr_fin', 'tr_one_b']) AS n;
-- without backfill, the windows not final: those that end at watermark -
-- lateness or later
SELECT name, streamforge_internal.aggregate_time(watermark - lateness, 1) AS open_from
  FROM streamforge.pipeline_info WHERE name IN ('tr_one_s', 'tr_upd') ORDER BY 1;
SELECT streamforge_internal.aggregate_time(watermark - lateness, 1) AS open_one_s
  FROM streamforge.pipeline_info WHERE name = 'tr_one_s' \gset
SELECT streamforge_internal.aggregate_time(watermark - lateness, 1) AS open_upd
  FROM streamforge.pipeline_info WHERE name = 'tr_upd' \gset
SELECT * FROM tr_check('tr_fin')
UNION ALL
SELECT * FROM tr_check('tr_one_b')
UNION ALL
SELECT * FROM tr_check('tr_one_s', format('window_end >= %L', :'open_one_s'))
UNION ALL
SELECT * FROM tr_check('tr_upd', format('window_end >= %L', :'open_upd'));
SELECT left(g_text, 12) AS g_text, window_start, c, sm, mn, mx, av, final
  FROM tr_one_s ORDER BY window_start, g_text;
SELECT left(g_text, 12) AS g_text, window_start, n_all, n_i, sum_s, avg_s, var_pop_i, final
  FROM tr_upd ORDER BY window_start, g_text;
SELECT left(key, 20) AS key, k1, window_start, a1, a2, a3, a12, a15, final, seq
  FROM :t_upd ORDER BY window_start, key;
-- what they should be
SELECT left(g_text, 12) AS g_text, window_start, n_all, n_i, sum_s, avg_s, var_pop_i
  FROM tr_exp_tr_upd WHERE window_end >= :'open_upd' AND tr_shown('tr_upd', window_start, window_end)
 ORDER BY window_start, g_text;

-- 3. The end of the input: every window emitted and final.
SELECT n, count(c.*) AS changes
  FROM unnest(ARRAY['tr_fin', 'tr_one_b', 'tr_one_i', 'tr_one_s', 'tr_upd']) AS n
  LEFT JOIN LATERAL streamforge.finish(n) AS c ON true
 GROUP BY n ORDER BY n;
SELECT * FROM tr_check('tr_fin')
UNION ALL
SELECT * FROM tr_check('tr_one_b')
UNION ALL
SELECT * FROM tr_check('tr_one_i')
UNION ALL
SELECT * FROM tr_check('tr_one_s', format('window_end >= %L', :'open_one_s'))
UNION ALL
SELECT * FROM tr_check('tr_upd', format('window_end >= %L', :'open_upd'));

-- 4. Readers.  The view needs the pipeline's read privilege; the table is
-- closed to every role but the extension's owner, the pipeline's owner
-- included; results_ts names the view.
CREATE ROLE regress_tr_nobody;
CREATE ROLE regress_tr_reader;
CREATE ROLE regress_tr_owner;
SELECT streamforge.grant('tr_fin', 'regress_tr_reader', 'read');
SET ROLE regress_tr_nobody;
SELECT tr_try('SELECT count(*) FROM tr_fin');
SELECT tr_try('SELECT count(*) FROM tr_fin_live');
SELECT tr_try(format('SELECT count(*) FROM %s', :'t_fin'));
RESET ROLE;
SET ROLE regress_tr_reader;
SELECT tr_try('SELECT count(*) FROM tr_fin');
SELECT tr_try('SELECT count(*) FROM tr_upd');
SELECT tr_try(format('SELECT count(*) FROM %s', :'t_fin'));
SELECT tr_try(format('SELECT count(*) FROM %s', :'t_upd'));
RESET ROLE;
-- neither the schema nor the table is open to them
SELECT r, has_schema_privilege(r, 'streamforge_results', 'USAGE') AS schema_usage,
       has_table_privilege(r, :'t_fin', 'SELECT') AS table_select
  FROM unnest(ARRAY['regress_tr_nobody', 'regress_tr_reader', 'regress_tr_owner']) AS r ORDER BY r;
-- an aggregate of a role that is not a superuser
GRANT CREATE ON SCHEMA public TO regress_tr_owner;
GRANT USAGE ON SCHEMA streamforge TO regress_tr_owner;
SET ROLE regress_tr_owner;
CREATE TABLE tr_own (id integer PRIMARY KEY, k text NOT NULL, v integer NOT NULL, at timestamptz NOT NULL);
SELECT streamforge.create_aggregate('tr_own_agg', $$
    SELECT k, sum(v) AS total FROM tr_own GROUP BY k, streamforge.tumble(at, interval '1 minute')
$$, emit => 'final');
INSERT INTO tr_own VALUES (1, 'a', 5, '2026-03-01 12:00:00+00'), (2, 'a', 6, '2026-03-01 12:00:30+00');
SELECT count(*) FROM streamforge.finish('tr_own_agg');
SELECT * FROM tr_own_agg;
SELECT tr_try('SELECT count(*) FROM streamforge_results.a3005');
SELECT tr_try('SELECT count(*) FROM streamforge.results_ts(''tr_own_agg'')');
SELECT streamforge.drop_aggregate('tr_own_agg');
DROP TABLE tr_own;
RESET ROLE;
REVOKE CREATE ON SCHEMA public FROM regress_tr_owner;
REVOKE USAGE ON SCHEMA streamforge FROM regress_tr_owner;
SELECT tr_try('SELECT count(*) FROM streamforge.results_ts(''tr_upd'')');

-- 5. drop_aggregate drops the table and its indexes
SELECT count(*) FILTER (WHERE relkind = 'r') AS tables, count(*) FILTER (WHERE relkind = 'i') AS indexes
  FROM pg_class
 WHERE relnamespace = 'streamforge_results'::regnamespace AND relname ~ '^a300[0-5](_|$)';
SELECT streamforge.drop_aggregate(n)
  FROM unnest(ARRAY['tr_fin', 'tr_one_b', 'tr_one_i', 'tr_one_s', 'tr_upd']) AS n;
SELECT count(*) FILTER (WHERE relkind = 'r') AS tables, count(*) FILTER (WHERE relkind = 'i') AS indexes
  FROM pg_class
 WHERE relnamespace = 'streamforge_results'::regnamespace AND relname ~ '^a300[0-5](_|$)';
SELECT count(*) AS views FROM pg_class WHERE relname ~ '^tr_(upd|fin|one_[sbi])' AND relkind = 'v';
SELECT count(*) AS rows_left FROM streamforge.changelog WHERE pipeline LIKE 'tr\_%';

DROP VIEW tr_exp_tr_upd, tr_exp_tr_fin, tr_exp_tr_one_s, tr_exp_tr_one_b, tr_exp_tr_one_i;
DROP FUNCTION tr_check_all(), tr_check(text, text), tr_shown(text, timestamptz, timestamptz),
    tr_view_rows(text), tr_try(text);
DROP TABLE tr_ev, tr_in, tr_keys, tr_cp, tr_at_cp;
DROP TYPE tr_mood;
DROP ROLE regress_tr_nobody, regress_tr_reader, regress_tr_owner;

-- 6. Rows of one call whose sums are 0 after rows whose sums are not: the
-- typed rows share the numeric of a run of equal sums (sink_typed.c), and
-- each row still gets its own
CREATE TABLE tz_ev (id integer PRIMARY KEY, g integer NOT NULL, v bigint NOT NULL,
    at timestamptz NOT NULL);
SELECT streamforge.create_aggregate('tz_sum', $$
    SELECT g, count(*) AS c, sum(v) AS sm FROM tz_ev
     GROUP BY g, streamforge.tumble(at, interval '1 minute')
$$) IS NOT NULL AS made;
-- sums 0, 5, 0, 7, 0, -3, 0 by g; the rows are written by one call, finish()
INSERT INTO tz_ev VALUES
 (1, 1, 0, '2026-04-01 00:00:01+00'), (2, 2, 5, '2026-04-01 00:00:02+00'),
 (3, 3, 4, '2026-04-01 00:00:03+00'), (4, 3, -4, '2026-04-01 00:00:04+00'),
 (5, 4, 7, '2026-04-01 00:00:05+00'), (6, 5, 0, '2026-04-01 00:00:06+00'),
 (7, 6, -3, '2026-04-01 00:00:07+00'), (8, 7, 2, '2026-04-01 00:00:08+00'),
 (9, 7, -2, '2026-04-01 00:00:09+00');
SELECT count(*) AS changes FROM streamforge.finish('tz_sum');
SELECT g, c, sm FROM tz_sum ORDER BY g;
SELECT count(*) AS mismatches
  FROM tz_sum AS a FULL JOIN (SELECT g, count(*) AS c, sum(v) AS sm FROM tz_ev GROUP BY g) AS e USING (g)
 WHERE a.c IS DISTINCT FROM e.c OR a.sm IS DISTINCT FROM e.sm;
SELECT streamforge.drop_aggregate('tz_sum');
DROP TABLE tz_ev;
