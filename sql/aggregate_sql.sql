-- create_aggregate (issue 29): a pipeline, an attachment and typed views
-- from a GROUP BY query over a table.
SET client_min_messages = warning;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, MDY';
-- the tables of the aggregates' results are numbered from 1000 here, so
-- that the plans below name them the same whatever ran before
SELECT setval('streamforge.aggregate_results_seq', 1000, false);
CREATE TABLE clicks (id bigserial PRIMARY KEY, page text NOT NULL,
                     country text NOT NULL, status text NOT NULL,
                     amount integer NOT NULL, note text,
                     clicked_at timestamptz NOT NULL);

SELECT streamforge.create_aggregate('clicks_per_minute', $$
    SELECT page, country, count(*) AS clicks, sum(amount) AS revenue,
           avg(amount) AS mean, min(amount) AS least, max(amount) AS most
      FROM clicks
     WHERE status = 'ok'
     GROUP BY page, country, streamforge.tumble(clicked_at, interval '1 minute')
$$, lateness => interval '30 seconds');

-- the pipeline: one fixed window, lateness and unit from the intervals
-- (a timestamptz column has microseconds), the results output, the query
SELECT name, partitions, windows, lateness, time_unit, changelog, results,
       query IS NOT NULL AS has_query
  FROM streamforge.pipeline_info;
SELECT name, source, view_schema, view_name FROM streamforge.aggregates;
-- the attachment: event_id from the primary key, a composite key, the
-- WHERE as its filter
SELECT source, pipeline, partition, event_id, key, event_time, value, filter
  FROM streamforge.attachments;
-- the view: GROUP BY columns with their types, window bounds as
-- timestamptz, each aggregate with its SQL type, final
\d clicks_per_minute
\d clicks_per_minute_live
\d clicks_per_minute_late

INSERT INTO clicks (page, country, status, amount, clicked_at) VALUES
    ('/home', 'FR', 'ok', 10, '2026-11-30 12:00:05+00'),
    ('/home', 'FR', 'ok', 20, '2026-11-30 12:00:41+00'),
    ('/home', 'DE', 'ok', 5, '2026-11-30 12:00:42+00'),
    ('/home', 'FR', 'error', 1000, '2026-11-30 12:00:43+00'),
    ('/docs', 'FR', 'ok', 7, '2026-11-30 12:01:02+00');
-- the row of status 'error' was neither ingested nor remembered
SELECT deliveries, accepted, remembered_identities
  FROM streamforge.stats('clicks_per_minute');
-- open buckets
SELECT * FROM clicks_per_minute_live ORDER BY page, country, window_start;
-- nothing emitted yet
SELECT count(*) FROM clicks_per_minute;
SELECT count(*) FROM streamforge.advance_ts('clicks_per_minute', 'default',
                                            '2026-11-30 12:01:10+00');
SELECT * FROM clicks_per_minute ORDER BY page, country, window_start;
-- a correction within the lateness, and a late row past it
INSERT INTO clicks (page, country, status, amount, clicked_at) VALUES
    ('/home', 'FR', 'ok', 3, '2026-11-30 12:00:59+00');
SELECT count(*) FROM streamforge.advance_ts('clicks_per_minute', 'default',
                                            '2026-11-30 12:01:31+00');
INSERT INTO clicks (page, country, status, amount, clicked_at) VALUES
    ('/home', 'DE', 'ok', 4, '2026-11-30 12:00:50+00');
-- [12:00, 12:01) is final once the watermark passes 12:01:30
SELECT page, country, window_start, clicks, revenue, final
  FROM clicks_per_minute ORDER BY page, country, window_start;
SELECT late_seq, page, country, event_time, value, watermark, event_id
  FROM clicks_per_minute_late;

-- key and time filters are index conditions of the aggregate's index.
-- What is shown is that the index can serve the view's filters: in a
-- database other tests filled (installcheck's), the planner may prefer a
-- scan or the shared table's own index, so both are out of its way here
BEGIN;
DROP INDEX streamforge.results_address;
SET LOCAL enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM clicks_per_minute
 WHERE page = '/home' AND window_start >= now() - interval '1 hour';
EXPLAIN (COSTS OFF) SELECT * FROM clicks_per_minute
 WHERE page = '/home' AND country = 'FR';
ROLLBACK;
-- (0.4.0, issue 42 item 2) the indexes of the aggregate's own table;
-- none on streamforge.results
SELECT pg_catalog.pg_get_indexdef(i.indexrelid) FROM pg_catalog.pg_index AS i
  JOIN streamforge.aggregate AS g
    ON i.indrelid = streamforge_internal.aggregate_results_table(g.results_id)::regclass
 WHERE g.name = 'clicks_per_minute' ORDER BY 1;
SELECT count(*) FROM pg_catalog.pg_index AS i
 WHERE i.indrelid = 'streamforge.results'::regclass
   AND i.indexrelid::regclass::text LIKE 'streamforge.results_aggregate_%';

-- updates: a column the mappings and the filter do not read is free; a
-- mapped one, or one that changes whether the row matches, is refused
UPDATE clicks SET note = 'checked' WHERE page = '/docs';
\set VERBOSITY terse
UPDATE clicks SET amount = 8 WHERE page = '/docs';
UPDATE clicks SET status = 'error' WHERE page = '/docs';
UPDATE clicks SET status = 'ok' WHERE status = 'error';
-- an update between two values that both fail the filter passes: the row
-- is no event
UPDATE clicks SET status = 'failed' WHERE status = 'error';
\set VERBOSITY default
SELECT status, count(*) FROM clicks GROUP BY status ORDER BY status;

-- alter_aggregate: lateness and retention in the aggregate's unit
SELECT streamforge.alter_aggregate('clicks_per_minute', lateness => interval '20 seconds',
                                   retention => interval '1 hour', emit => 'update');
SELECT lateness, retention FROM streamforge.pipeline_info WHERE name = 'clicks_per_minute';
SELECT page, country, window_start, final
  FROM clicks_per_minute ORDER BY page, country, window_start;
-- the emit mode (issue 25): 'final' from now on, the rows already final
-- stay as they are
SELECT streamforge.alter_aggregate('clicks_per_minute', emit => 'final');
SELECT streamforge.emit_mode('clicks_per_minute');

-- emit => 'final' from the start: nothing in the view while a bucket can
-- change (past its end, within the lateness), then one final row
CREATE TABLE orders (id bigint PRIMARY KEY, shop text NOT NULL,
                     amount bigint NOT NULL, at timestamptz NOT NULL);
SELECT streamforge.create_aggregate('orders_final', $$
    SELECT shop, count(*) AS n, sum(amount) AS total FROM orders
     GROUP BY shop, streamforge.tumble(at, interval '1 minute')
$$, lateness => interval '10 seconds', emit => 'final');
SELECT streamforge.emit_mode('orders_final');
INSERT INTO orders VALUES (1, 'a', 5, '2026-11-30 12:00:10+00'),
                          (2, 'a', 7, '2026-11-30 12:00:50+00');
SELECT count(*) FROM streamforge.advance_ts('orders_final', 'default', '2026-11-30 12:01:05+00');
SELECT count(*) AS rows_before_end_plus_lateness FROM orders_final;
-- a correction within the lateness is absorbed before the one row
INSERT INTO orders VALUES (3, 'a', 1, '2026-11-30 12:00:59+00');
SELECT count(*) FROM streamforge.advance_ts('orders_final', 'default', '2026-11-30 12:01:11+00');
SELECT shop, window_start, window_end, n, total, final FROM orders_final;
SELECT streamforge.drop_aggregate('orders_final');

-- out_of_orderness (issue 26): the inserts move the watermark themselves,
-- to the latest event time seen minus 5 seconds; the unit divides it
SELECT streamforge.create_aggregate('orders_ooo', $$
    SELECT shop, sum(amount) AS total FROM orders
     GROUP BY shop, streamforge.tumble(at, interval '1 minute')
$$, out_of_orderness => interval '5 seconds');
SELECT name, lateness, time_unit FROM streamforge.pipeline_info WHERE name = 'orders_ooo';
SELECT streamforge.out_of_orderness('orders_ooo');
INSERT INTO orders VALUES (4, 'b', 2, '2026-11-30 12:05:10+00'),
                          (5, 'b', 3, '2026-11-30 12:06:04+00');
SELECT streamforge.watermark_ts('orders_ooo');
SELECT shop, window_start, total, final FROM orders_ooo;
INSERT INTO orders VALUES (6, 'b', 9, '2026-11-30 12:06:06+00');
SELECT streamforge.watermark_ts('orders_ooo');
SELECT shop, window_start, total, final FROM orders_ooo ORDER BY window_start;
SELECT streamforge.drop_aggregate('orders_ooo');
DROP TABLE orders;

-- hop and session windows, keys that are expressions or integers, no key,
-- count(x) of a nullable expression (since 0.4.0 a nullable measure of a
-- measures pipeline; 0.3.0 filtered its NULL rows out), an
-- event id and a partition named by the caller, a timestamp column
CREATE TABLE readings (sensor integer NOT NULL, site text NOT NULL,
                       serial text NOT NULL, v integer, gw text NOT NULL,
                       at timestamp(0) NOT NULL);
SELECT streamforge.create_aggregate('readings_hop', $$
    SELECT sensor, lower(site) AS site, count(v) AS n, sum(v) AS total
      FROM readings
     GROUP BY sensor, lower(site), streamforge.hop(at, interval '10 minutes', interval '5 minutes')
$$, event_id => 'serial', partition => 'gw', partitions => ARRAY['gw1', 'gw2']);
SELECT streamforge.create_aggregate('readings_session', $$
    SELECT max(sensor) AS peak FROM readings
     GROUP BY streamforge.session(at, interval '2 minutes')
$$, event_id => 'serial', partition => 'gw', partitions => ARRAY['gw1', 'gw2'],
    lateness => interval '1 hour');
SELECT name, partitions, windows, lateness, time_unit
  FROM streamforge.pipeline_info WHERE name LIKE 'readings%' ORDER BY name;
SELECT pipeline, partition, key, event_time, value, filter
  FROM streamforge.attachments WHERE pipeline LIKE 'readings%' ORDER BY pipeline;
\d readings_hop
INSERT INTO readings VALUES
    (1, 'Paris', 'r1', 10, 'gw1', '2026-11-30 12:01:00'),
    (1, 'PARIS', 'r2', NULL, 'gw1', '2026-11-30 12:02:00'),
    (2, 'Lyon', 'r3', 7, 'gw2', '2026-11-30 12:06:00'),
    (1, 'paris', 'r4', 1, 'gw2', '2026-11-30 12:07:00');
SELECT count(*) FROM streamforge.advance_ts('readings_hop', 'gw1', '2026-11-30 13:00:00+00');
SELECT count(*) FROM streamforge.advance_ts('readings_hop', 'gw2', '2026-11-30 13:00:00+00');
SELECT * FROM readings_hop ORDER BY sensor, site, window_start;
SELECT * FROM readings_session_live ORDER BY window_start;

-- privileges
CREATE ROLE regress_sf_agg_owner;
CREATE ROLE regress_sf_agg_reader;
CREATE ROLE regress_sf_agg_other;
GRANT CREATE ON SCHEMA public TO regress_sf_agg_owner;
GRANT USAGE ON SCHEMA streamforge TO regress_sf_agg_owner, regress_sf_agg_reader,
    regress_sf_agg_other;
CREATE TABLE secret (id bigint PRIMARY KEY, grp text NOT NULL, at timestamptz NOT NULL);
ALTER TABLE secret OWNER TO regress_sf_agg_owner;
CREATE TABLE open_t (id bigint PRIMARY KEY, grp text NOT NULL, at timestamptz NOT NULL);
GRANT SELECT ON open_t TO regress_sf_agg_other;
SET ROLE regress_sf_agg_other;
\set VERBOSITY terse
-- no SELECT on the table: refused before anything is made
SELECT streamforge.create_aggregate('stolen', $$
    SELECT grp, count(*) AS n FROM secret GROUP BY grp, streamforge.tumble(at, '1 hour')$$);
-- SELECT but not owner: attach() refuses (its triggers run code at every insert)
SELECT streamforge.create_aggregate('borrowed', $$
    SELECT grp, count(*) AS n FROM open_t GROUP BY grp, streamforge.tumble(at, '1 hour')$$);
\set VERBOSITY default
SET ROLE regress_sf_agg_owner;
SELECT streamforge.create_aggregate('secret_hourly', $$
    SELECT grp, count(*) AS n FROM secret GROUP BY grp, streamforge.tumble(at, '1 hour')$$);
INSERT INTO secret VALUES (1, 'a', '2026-11-30 12:00:00+00'), (2, 'b', '2026-11-30 12:30:00+00');
SELECT count(*) FROM streamforge.advance_ts('secret_hourly', 'default', '2026-11-30 13:00:00+00');
SELECT grp, window_start, n FROM secret_hourly ORDER BY grp;
-- the views belong to the extension's owner, readable by the pipeline's readers
SELECT c.relname, c.relowner = (SELECT e.extowner FROM pg_extension AS e
                                 WHERE e.extname = 'streamforge') AS extension_owns
  FROM pg_class AS c WHERE c.relname LIKE 'secret_hourly%' ORDER BY c.relname;
SET ROLE regress_sf_agg_reader;
\set VERBOSITY terse
SELECT grp, n FROM secret_hourly;
SELECT grp, n FROM secret_hourly_live;
SELECT count(*) FROM secret;
\set VERBOSITY default
SET ROLE regress_sf_agg_owner;
SELECT streamforge.grant('secret_hourly', 'regress_sf_agg_reader', 'read');
SET ROLE regress_sf_agg_reader;
SELECT grp, n FROM secret_hourly ORDER BY grp;
SELECT grp, n FROM secret_hourly_live ORDER BY grp;
\set VERBOSITY terse
SELECT streamforge.drop_aggregate('secret_hourly');
\set VERBOSITY default
SET ROLE regress_sf_agg_owner;
SELECT streamforge.drop_aggregate('secret_hourly');
RESET ROLE;

-- drop_aggregate: views, attachment, pipeline and index go
SELECT streamforge.drop_aggregate('clicks_per_minute');
SELECT streamforge.drop_aggregate('readings_hop');
SELECT streamforge.drop_aggregate('readings_session');
SELECT count(*) AS views FROM pg_class WHERE relname LIKE 'clicks_per_minute%' OR relname LIKE 'readings_%';
SELECT count(*) AS attachments FROM streamforge.attachments;
SELECT count(*) AS pipelines FROM streamforge.pipeline;
SELECT count(*) AS indexes FROM pg_class WHERE relname LIKE 'results_aggregate_%';
-- inserts go on without the pipeline
INSERT INTO clicks (page, country, status, amount, clicked_at) VALUES
    ('/home', 'FR', 'ok', 1, '2026-11-30 13:00:00+00');
\set VERBOSITY terse
-- a pipeline that is not an aggregate
SELECT streamforge.create_pipeline('plain', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)]);
SELECT streamforge.drop_aggregate('plain');
SELECT streamforge.alter_aggregate('plain', lateness => interval '1 second');
SELECT streamforge.drop_aggregate('nope');
\set VERBOSITY default
SELECT streamforge.drop_pipeline('plain');

DROP TABLE secret, open_t;
REVOKE CREATE ON SCHEMA public FROM regress_sf_agg_owner;
REVOKE USAGE ON SCHEMA streamforge FROM regress_sf_agg_owner, regress_sf_agg_reader,
    regress_sf_agg_other;
DROP ROLE regress_sf_agg_owner;
DROP ROLE regress_sf_agg_reader;
DROP ROLE regress_sf_agg_other;

-- ------------------------------------------------------------------------
-- tumble() before 1970
-- ------------------------------------------------------------------------
\c -
\set VERBOSITY sqlstate
-- docs/sql-aggregates.md (issue 40 item 11): streamforge.tumble(ts, size) is the start of
-- the window of size from the epoch that holds ts: date_bin(size, ts,
-- epoch), before 1970 too (where a truncating division would round up)
SELECT t, streamforge.tumble(t, i) AS tumble, date_bin(i, t, timestamptz 'epoch') AS date_bin
  FROM (VALUES (timestamptz '1969-12-31 23:59:59.5+00', interval '1 minute'),
               (timestamptz '1969-12-31 23:59:00+00', interval '1 minute'),
               (timestamptz '1969-12-31 23:58:59.999999+00', interval '1 minute'),
               (timestamptz '1900-03-04 05:06:07+00', interval '1 hour'),
               (timestamptz '1969-12-31 23:59:59.999999+00', interval '1 day'),
               (timestamptz '1970-01-01 00:00:00+00', interval '1 day')) AS v(t, i);
SELECT count(*) AS compared,
       count(*) FILTER (WHERE streamforge.tumble(t, i) <> date_bin(i, t, timestamptz 'epoch'))
           AS differ
  FROM generate_series(timestamptz '1969-12-31 22:00:00+00', timestamptz '1970-01-01 02:00:00+00',
                       interval '7 minutes 13.000001 seconds') AS t,
       unnest(ARRAY[interval '1 second', interval '7 seconds', interval '1 minute',
                    interval '90 seconds', interval '1 hour', interval '1 day',
                    interval '1 microsecond', interval '3 microseconds']) AS i;

