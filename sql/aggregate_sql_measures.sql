-- create_aggregate over several expressions and the variances (issue 29 on
-- issue 27's measures pipelines), and attach()'s measures form.
SET client_min_messages = warning;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, MDY';
CREATE TABLE mclicks (id bigserial PRIMARY KEY, page text NOT NULL,
                     country text NOT NULL, status text NOT NULL,
                     amount integer NOT NULL, latency_ms integer NOT NULL,
                     clicked_at timestamptz NOT NULL);

-- the example of the issue: two measures, out_of_orderness, emit
SELECT streamforge.create_aggregate('mclicks_per_minute', $$
    SELECT page, country,
           count(*) AS clicks, sum(amount) AS revenue, avg(latency_ms) AS latency
      FROM mclicks
     WHERE status = 'ok'
     GROUP BY page, country, streamforge.tumble(clicked_at, interval '1 minute')
$$, lateness => interval '30 seconds', out_of_orderness => interval '5 seconds', emit => 'update');

-- a measures pipeline: one measure per expression, one aggregate per item
SELECT name, lateness, time_unit, results FROM streamforge.pipeline_info;
SELECT ordinality, name, type, func, measure
  FROM streamforge.aggregate_columns('mclicks_per_minute');
-- attached in the measures form: the sixth argument is the array
SELECT source, pipeline, partition, event_id, key, event_time, value, filter
  FROM streamforge.attachments;
-- the columns have PostgreSQL's types: sum(integer) bigint, avg numeric
\d mclicks_per_minute
\d mclicks_per_minute_live

INSERT INTO mclicks (page, country, status, amount, latency_ms, clicked_at) VALUES
    ('/home', 'FR', 'ok', 10, 100, '2026-11-30 12:00:05+00'),
    ('/home', 'FR', 'ok', 20, 151, '2026-11-30 12:00:41+00'),
    ('/home', 'DE', 'ok', 5, 30, '2026-11-30 12:00:42+00'),
    ('/home', 'FR', 'error', 1000, 9, '2026-11-30 12:00:43+00'),
    ('/docs', 'FR', 'ok', 7, 12, '2026-11-30 12:01:02+00');
-- the row of status 'error' was not ingested; the offsets were assigned
SELECT deliveries, accepted FROM streamforge.stats('mclicks_per_minute');
SELECT partition, consumed_offset FROM streamforge.partitions('mclicks_per_minute');
SELECT * FROM mclicks_per_minute_live ORDER BY page, country, window_start;
-- out_of_orderness: the watermark is 12:01:02 - 5 s, so no window ended
SELECT count(*) FROM mclicks_per_minute;
INSERT INTO mclicks (page, country, status, amount, latency_ms, clicked_at) VALUES
    ('/docs', 'FR', 'ok', 1, 1, '2026-11-30 12:01:06+00');
-- [12:00, 12:01) is emitted (update mode), not final (lateness 30 s)
SELECT * FROM mclicks_per_minute ORDER BY page, country, window_start;
-- a correction within the lateness updates the emitted row
INSERT INTO mclicks (page, country, status, amount, latency_ms, clicked_at) VALUES
    ('/home', 'FR', 'ok', 3, 2, '2026-11-30 12:00:59+00');
SELECT page, country, window_start, clicks, revenue, latency, final
  FROM mclicks_per_minute ORDER BY page, country, window_start;
-- the view equals the plain GROUP BY over the matching rows of the
-- windows that ended (query of the aggregate, run as a query)
SELECT page, country, streamforge.tumble(clicked_at, interval '1 minute') AS window_start,
       count(*) AS clicks, sum(amount) AS revenue, avg(latency_ms) AS latency
  FROM mclicks WHERE status = 'ok'
 GROUP BY page, country, streamforge.tumble(clicked_at, interval '1 minute')
HAVING streamforge.tumble(clicked_at, interval '1 minute') < '2026-11-30 12:01:00+00'
 ORDER BY 1, 2, 3;
-- an update of a measure is refused like one of a mapped value
UPDATE mclicks SET latency_ms = 99 WHERE id = 1;
-- an update of what no mapping reads passes
UPDATE mclicks SET status = 'ok' WHERE id = 1;
SELECT streamforge.drop_aggregate('mclicks_per_minute');
SELECT count(*) FROM streamforge.attachments;

-- every aggregate of the set, over smallint, integer and bigint
CREATE TABLE mtab (id integer PRIMARY KEY, g text NOT NULL, s smallint NOT NULL,
                i integer NOT NULL, b bigint NOT NULL, n integer, at timestamptz NOT NULL);
SELECT streamforge.create_aggregate('m_all', $$
    SELECT g, count(*) AS c, count(i) AS ci, sum(s) AS sum_s, sum(b) AS sum_b,
           min(s) AS min_s, max(b) AS max_b, avg(i) AS avg_i,
           var_pop(i) AS vp, var_samp(b) AS vs, variance(s) AS v,
           stddev_pop(b) AS sp, stddev_samp(i) AS ss, stddev(s) AS sd
      FROM mtab GROUP BY g, streamforge.tumble(at, interval '1 hour')
$$);
SELECT ordinality, name, type, func, measure FROM streamforge.aggregate_columns('m_all');
SELECT value FROM streamforge.attachments WHERE pipeline = 'm_all';
\d m_all_live
INSERT INTO mtab VALUES
    (1, 'x', 3, 10, 9223372036854775807, NULL, '2026-11-30 12:00:00+00'),
    (2, 'x', -7, 11, 9223372036854775807, 1, '2026-11-30 12:10:00+00'),
    (3, 'x', 2, 15, -5, 2, '2026-11-30 12:20:00+00'),
    (4, 'y', 1, 4, 4, 3, '2026-11-30 12:30:00+00');
-- exactly what PostgreSQL computes (a sum past 2^63; one row: NULL samples)
SELECT * FROM m_all_live ORDER BY g;
SELECT g, count(*) AS c, count(i) AS ci, sum(s) AS sum_s, sum(b) AS sum_b,
       min(s) AS min_s, max(b) AS max_b, avg(i) AS avg_i,
       var_pop(i) AS vp, var_samp(b) AS vs, variance(s) AS v,
       stddev_pop(b) AS sp, stddev_samp(i) AS ss, stddev(s) AS sd
  FROM mtab GROUP BY g ORDER BY g;
SELECT count(*) FROM (SELECT g, c, ci, sum_s, sum_b, min_s, max_b, avg_i, vp, vs, v, sp, ss, sd
                        FROM m_all_live
                      EXCEPT ALL
                      SELECT g, count(*), count(i), sum(s), sum(b), min(s), max(b), avg(i),
                             var_pop(i), var_samp(b), variance(s), stddev_pop(b),
                             stddev_samp(i), stddev(s)
                        FROM mtab GROUP BY g) AS d;
SELECT count(*) FROM streamforge.advance_ts('m_all', 'default', '2026-11-30 13:00:00+00');
SELECT g, window_start, window_end, c, sum_b, vp, final FROM m_all ORDER BY g;
SELECT streamforge.drop_aggregate('m_all');

-- count(*) FILTER (WHERE x op constant): the engine's count_if over x (a
-- constant on the left is turned around; -5 and 2::bigint are constants)
SELECT streamforge.create_aggregate('m_if', $$
    SELECT g, count(*) AS c, count(*) FILTER (WHERE i > 10) AS big,
           count(*) FILTER (WHERE -5 >= s) AS low, count(*) FILTER (WHERE b <> 2::bigint) AS not2,
           count(*) FILTER (WHERE i * 2 = 30) AS fifteen
      FROM mtab GROUP BY g, streamforge.tumble(at, interval '1 hour')
$$);
SELECT ordinality, name, type, func, measure FROM streamforge.aggregate_columns('m_if');
SELECT pg_catalog.array_to_string(p.aggregates, ' | ') FROM streamforge.pipeline_info AS p WHERE p.name = 'm_if';
INSERT INTO mtab VALUES
    (5, 'x', 3, 10, 2, NULL, '2026-11-30 12:00:00+00'),
    (6, 'x', -7, 11, 9223372036854775807, 1, '2026-11-30 12:10:00+00'),
    (7, 'x', -5, 15, -5, 2, '2026-11-30 12:20:00+00'),
    (8, 'y', 1, 4, 4, 3, '2026-11-30 12:30:00+00');
SELECT g, c, big, low, not2, fifteen FROM m_if_live ORDER BY g;
SELECT g, count(*) AS c, count(*) FILTER (WHERE i > 10) AS big,
       count(*) FILTER (WHERE -5 >= s) AS low, count(*) FILTER (WHERE b <> 2::bigint) AS not2,
       count(*) FILTER (WHERE i * 2 = 30) AS fifteen
  FROM mtab WHERE id >= 5 GROUP BY g ORDER BY g;
SELECT streamforge.drop_aggregate('m_if');

-- one expression and the aggregates of 0.2.0 stay a one-measure pipeline
SELECT streamforge.create_aggregate('m_one', $$
    SELECT g, count(*) AS c, sum(i) AS s, avg(i) AS a
      FROM mtab GROUP BY g, streamforge.tumble(at, interval '1 hour')
$$);
SELECT ordinality, name, type, func, measure FROM streamforge.aggregate_columns('m_one');
SELECT value FROM streamforge.attachments WHERE pipeline = 'm_one';
-- (the rows inserted before the attachment are not events)
SELECT count(*) FROM m_one_live;
SELECT streamforge.drop_aggregate('m_one');

-- any other FILTER of count(*) (issue 38): count_if over CASE WHEN f
-- THEN 1 ELSE 0 END (sql/aggregate_sql_filters.sql compares them)
SELECT streamforge.create_aggregate('m_bad', $$
    SELECT g, count(*) FILTER (WHERE i > 10 AND s < 0) AS big FROM mtab GROUP BY g, streamforge.tumble(at, interval '1 hour')
$$);
SELECT streamforge.drop_aggregate('m_bad');
SELECT streamforge.create_aggregate('m_bad', $$
    SELECT g, count(*) FILTER (WHERE i > s) AS big FROM mtab GROUP BY g, streamforge.tumble(at, interval '1 hour')
$$);
SELECT streamforge.drop_aggregate('m_bad');
SELECT streamforge.create_aggregate('m_bad', $$
    SELECT g, count(*) FILTER (WHERE g = 'x') AS big FROM mtab GROUP BY g, streamforge.tumble(at, interval '1 hour')
$$);
SELECT streamforge.drop_aggregate('m_bad');
SELECT streamforge.create_aggregate('m_bad', $$
    SELECT g, count(*) FILTER (WHERE n > 1) AS big FROM mtab GROUP BY g, streamforge.tumble(at, interval '1 hour')
$$);
SELECT streamforge.drop_aggregate('m_bad');

-- the refusals that remain
\set VERBOSITY default
\set SHOW_CONTEXT never
-- accepted since 0.4.0 (issue 38, defect 5; nullable measures): a
-- nullable expression with another one, under a variance, FILTER on sum
SELECT streamforge.create_aggregate('m_bad', $$
    SELECT g, sum(i) AS s, sum(n) AS sn FROM mtab GROUP BY g, streamforge.tumble(at, interval '1 hour')
$$);
SELECT streamforge.drop_aggregate('m_bad');
SELECT streamforge.create_aggregate('m_bad', $$
    SELECT g, var_pop(n) AS v FROM mtab GROUP BY g, streamforge.tumble(at, interval '1 hour')
$$);
SELECT streamforge.drop_aggregate('m_bad');
SELECT streamforge.create_aggregate('m_bad', $$
    SELECT g, sum(i) FILTER (WHERE i > 10) AS big FROM mtab GROUP BY g, streamforge.tumble(at, interval '1 hour')
$$);
SELECT streamforge.drop_aggregate('m_bad');
-- a second expression that is no integer
SELECT streamforge.create_aggregate('m_bad', $$
    SELECT g, sum(i) AS s, avg(i::numeric / 2) AS a FROM mtab GROUP BY g, streamforge.tumble(at, interval '1 hour')
$$);
-- DISTINCT, other aggregates
SELECT streamforge.create_aggregate('m_bad', $$
    SELECT g, var_pop(DISTINCT i) AS v FROM mtab GROUP BY g, streamforge.tumble(at, interval '1 hour')
$$);
SELECT streamforge.create_aggregate('m_bad', $$
    SELECT g, bit_and(i) AS v FROM mtab GROUP BY g, streamforge.tumble(at, interval '1 hour')
$$);
SELECT count(*) FROM streamforge.pipeline_info WHERE name = 'm_bad';
\set VERBOSITY terse
\set SHOW_CONTEXT errors

-- attach()'s measures form, by hand
CREATE TABLE morders (id integer PRIMARY KEY, shop text NOT NULL,
                     amount bigint NOT NULL, qty smallint NOT NULL, t bigint NOT NULL,
                     note text);
SELECT streamforge.create_pipeline('morders', ARRAY['p0', 'p1'],
    ARRAY[streamforge.fixed('w', 100)], lateness => 0,
    measures => ARRAY['amount', 'qty'],
    aggregates => ARRAY['count', 'sum(amount)', 'max(qty)', 'var_samp(amount)']);
SELECT streamforge.create_pipeline('classic', ARRAY['p0'], ARRAY[streamforge.fixed('w', 100)]);
-- bad inputs
SELECT streamforge.attach('morders', 'morders', 'id', 'shop', 't', partition => '''p0''');
SELECT streamforge.attach('classic', 'morders', 'id', 'shop', 't', measures => ARRAY['amount']);
SELECT streamforge.attach('morders', 'morders', 'id', 'shop', 't', partition => '''p0''', measures => ARRAY['amount']);
SELECT streamforge.attach('morders', 'morders', 'id', 'shop', 't', partition => '''p0''', measures => ARRAY[['amount'], ['qty']]);
SELECT streamforge.attach('morders', 'morders', 'id', 'shop', 't', partition => '''p0''', measures => ARRAY['amount', NULL]);
SELECT streamforge.attach('morders', 'morders', 'id', 'shop', 't', partition => '''p0''', measures => ARRAY['amount', 'note']);
SELECT streamforge.attach('morders', 'morders', 'id', 'shop', 't', partition => '''p0''', value => 'qty',
                          measures => ARRAY['amount', 'qty']);
SELECT streamforge.attach('morders', 'morders', 'id', 'shop', 't', partition => '''p0''', measures => ARRAY['amount', 'nope']);
SELECT count(*) FROM streamforge.attachments;
-- accepted: two partitions by expression, a filter
SELECT streamforge.attach('morders', 'morders', 'id', 'shop', 't',
                          partition => $$CASE WHEN id % 2 = 0 THEN 'p0' ELSE 'p1' END$$,
                          filter => 'qty > 0', measures => ARRAY['amount', 'qty * 2']);
SELECT value, filter, pipeline_id IS NOT NULL AS bound FROM streamforge.attachments;
INSERT INTO morders VALUES (1, 's', 100, 1, 5), (2, 's', 300, 2, 7), (3, 's', 50, 0, 8),
                          (4, 's', -20, 5, 9), (5, 't', 7, 1, 150);
SELECT partition, consumed_offset FROM streamforge.partitions('morders') ORDER BY partition;
SELECT window_name, key, window_start, count, aggregates
  FROM streamforge.live_aggregates('morders') ORDER BY key, window_start;
-- append_measures_batch, called directly: source_offset is ignored
SELECT op, key, window_start, count, aggregates ->> 'sum_amount' AS sum_amount
  FROM streamforge.append_measures_batch('morders', ARRAY[
       ROW('p1', NULL, 'x1', 't', 160, ARRAY[3, 1]),
       ROW('p1', 42, 'x2', 't', 170, ARRAY[4, 1])]::streamforge.measures_delivery[]);
SELECT partition, consumed_offset FROM streamforge.partitions('morders') ORDER BY partition;
-- a rolled back insert consumes no offset
BEGIN;
INSERT INTO morders VALUES (6, 's', 1, 1, 10);
ROLLBACK;
INSERT INTO morders VALUES (8, 's', 1, 1, 10);
SELECT partition, consumed_offset FROM streamforge.partitions('morders') ORDER BY partition;
-- an update that changes a measure, or whether the row matches, is refused
UPDATE morders SET qty = 3 WHERE id = 1;
UPDATE morders SET qty = 0 WHERE id = 2;
UPDATE morders SET note = 'fine' WHERE id = 2;
SELECT streamforge.drop_pipeline('morders');
-- a trigger made by hand with eleven arguments, the last not "measures":
-- not an attachment; with "measures": one, bound to the dropped pipeline
SELECT format('DROP TRIGGER %I ON morders', streamforge_internal.attach_trigger_name('morders')) AS drop_fake,
       format($f$CREATE TRIGGER %I AFTER INSERT ON morders REFERENCING NEW TABLE AS new_rows
           FOR EACH STATEMENT EXECUTE FUNCTION streamforge_internal.attached_insert(
           'morders', '''p0''', 'id::text', 'shop', 't', 'ARRAY[amount, qty]::int8[]', '1', '{1}',
           'id integer', '', %%L)$f$, streamforge_internal.attach_trigger_name('morders')) AS fake \gset
SELECT format(:'fake', 'values') AS ddl \gset
:ddl;
INSERT INTO morders VALUES (9, 's', 1, 1, 11);
:drop_fake;
SELECT format(:'fake', 'measures') AS ddl \gset
:ddl;
INSERT INTO morders VALUES (9, 's', 1, 1, 11);
:drop_fake;
SELECT count(*) FROM streamforge.attachments;
SELECT streamforge.drop_pipeline('classic');
DROP TABLE mclicks, mtab, morders;
