--
-- strength5_misc: issue 40 items 6, 7, 10, 11, 12 and 13, each from the
-- documentation's promise.
--
\set VERBOSITY sqlstate

-- 6. docs/sql-aggregates.md, Privileges: creating an aggregate needs CREATE
-- on the current schema (the views go there).  The role owns its table in
-- a schema where it may create, but its current schema is one where it
-- may not: refused (42501), and nothing is left behind.
CREATE ROLE regress_s5_agg;
CREATE SCHEMA s5_mine AUTHORIZATION regress_s5_agg;
CREATE SCHEMA s5_theirs;
GRANT USAGE ON SCHEMA s5_theirs TO regress_s5_agg;
GRANT USAGE ON SCHEMA streamforge TO regress_s5_agg;
SET ROLE regress_s5_agg;
CREATE TABLE s5_mine.clicks (id bigint PRIMARY KEY, page text NOT NULL,
                             at timestamptz NOT NULL);
SET search_path = s5_theirs, public;
SELECT streamforge.create_aggregate('s5_clicks', $$
    SELECT page, count(*) AS n FROM s5_mine.clicks
     GROUP BY page, streamforge.tumble(at, interval '1 minute')$$);
RESET ROLE;
SELECT count(*) AS pipelines FROM streamforge.pipeline WHERE name = 's5_clicks';
SELECT count(*) AS relations FROM pg_class WHERE relname LIKE 's5_clicks%';
-- with CREATE on it, the same call makes the three views there
GRANT CREATE ON SCHEMA s5_theirs TO regress_s5_agg;
SET ROLE regress_s5_agg;
SELECT streamforge.create_aggregate('s5_clicks', $$
    SELECT page, count(*) AS n FROM s5_mine.clicks
     GROUP BY page, streamforge.tumble(at, interval '1 minute')$$) IS NOT NULL AS created;
SELECT c.relname, n.nspname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relname LIKE 's5_clicks%' ORDER BY 1;
-- a path that starts with a missing schema: the current schema is the
-- first that exists (s5_theirs), still without CREATE: refused
SELECT streamforge.drop_aggregate('s5_clicks');
RESET ROLE;
REVOKE CREATE ON SCHEMA s5_theirs FROM regress_s5_agg;
SET ROLE regress_s5_agg;
SET search_path = s5_missing, s5_theirs, public;
SELECT streamforge.create_aggregate('s5_clicks', $$
    SELECT page, count(*) AS n FROM s5_mine.clicks
     GROUP BY page, streamforge.tumble(at, interval '1 minute')$$);
RESET ROLE;
RESET search_path;
SELECT count(*) AS pipelines FROM streamforge.pipeline WHERE name = 's5_clicks';
SET client_min_messages = warning;
DROP SCHEMA s5_mine CASCADE;
RESET client_min_messages;
DROP SCHEMA s5_theirs;
REVOKE USAGE ON SCHEMA streamforge FROM regress_s5_agg;
DROP ROLE regress_s5_agg;

-- 7. docs/aggregates.md: ingest_measures_batch's deliveries carry a
-- source_offset; a NULL one is refused (22004) and consumes nothing,
-- alone or after good deliveries; append_measures_batch ignores it
SELECT streamforge.create_pipeline('s5m', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    measures => ARRAY['a', 'b']);
SELECT * FROM streamforge.ingest_measures_batch('s5m', ARRAY[
    ROW('p', NULL, 'e0', 'k', 1, ARRAY[1, 2])]::streamforge.measures_delivery[]);
SELECT * FROM streamforge.ingest_measures_batch('s5m', ARRAY[
    ROW('p', 0, 'e0', 'k', 1, ARRAY[1, 2]),
    ROW('p', NULL, 'e1', 'k', 2, ARRAY[1, 2])]::streamforge.measures_delivery[]);
\set VERBOSITY default
SELECT * FROM streamforge.ingest_measures_batch('s5m', ARRAY[
    ROW('p', 0, 'e0', 'k', 1, ARRAY[1, 2]),
    ROW('p', NULL, 'e1', 'k', 2, ARRAY[1, 2])]::streamforge.measures_delivery[]);
\set VERBOSITY sqlstate
SELECT partition, consumed_offset FROM streamforge.partitions('s5m');
SELECT deliveries, accepted FROM streamforge.stats('s5m');
-- offset 0 is still free
SELECT count(*) FROM streamforge.ingest_measures_batch('s5m', ARRAY[
    ROW('p', 0, 'e0', 'k', 1, ARRAY[1, 2])]::streamforge.measures_delivery[]);
SELECT count(*) FROM streamforge.append_measures_batch('s5m', ARRAY[
    ROW('p', NULL, 'e1', 'k', 2, ARRAY[3, 4])]::streamforge.measures_delivery[]);
SELECT partition, consumed_offset FROM streamforge.partitions('s5m');

-- 10. docs/monitoring.md: compact_target_load_ms = -1 means compact(p)
-- never compacts by itself; min_journal_bytes => 0 still does
SET streamforge.compact_target_load_ms = -1;
SELECT streamforge.compact('s5m') AS compacted;
SELECT streamforge.compact('s5m', min_journal_bytes => 0) AS compacted_anyway;
-- (a journal whose replay is at least a quarter of the snapshot's decode:
-- docs/monitoring.md, compact())
SELECT count(*) FROM streamforge.ingest_measures_batch('s5m', ARRAY(
    SELECT ROW('p', i, 'e' || i, 'k' || (i % 7), i, ARRAY[5, 6])::streamforge.measures_delivery
      FROM generate_series(2, 201) AS i));
SELECT streamforge.compact('s5m') AS compacted;
-- the same journal compacts with a target of 0 ms
SET streamforge.compact_target_load_ms = 0;
SELECT streamforge.compact('s5m') AS compacted;
RESET streamforge.compact_target_load_ms;
SELECT streamforge.drop_pipeline('s5m');

-- 11. docs/sql-aggregates.md: streamforge.tumble(ts, size) is the start of
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

-- 12. docs/aggregates.md: the default name is func_measure, a name of 1 to
-- 63 bytes: exactly 63 is accepted (and 64 refused)
SELECT streamforge.create_pipeline('s5n', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    measures => ARRAY[repeat('m', 51)],
    aggregates => ARRAY['stddev_samp(' || repeat('m', 51) || ')',
                        'var_samp(' || repeat('m', 51) || ')']);
SELECT name, octet_length(name) FROM streamforge.aggregate_columns('s5n') ORDER BY 2, 1;
SELECT count(*) FROM streamforge.ingest_measures('s5n', 'p', 0, 'e', 'k', 1, ARRAY[4]);
SELECT count(*) FROM streamforge.ingest_measures('s5n', 'p', 1, 'f', 'k', 2, ARRAY[6]);
SELECT aggregates FROM streamforge.live_aggregates('s5n');
SELECT streamforge.drop_pipeline('s5n');
SELECT streamforge.create_pipeline('s5n', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    measures => ARRAY[repeat('m', 52)],
    aggregates => ARRAY['stddev_samp(' || repeat('m', 52) || ')']);
-- an explicit name of 63 bytes too
SELECT streamforge.create_pipeline('s5n', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    measures => ARRAY['m'], aggregates => ARRAY['sum(m) AS ' || repeat('s', 63)]);
SELECT octet_length(name) FROM streamforge.aggregate_columns('s5n') WHERE name LIKE 's%';
SELECT streamforge.drop_pipeline('s5n');

-- 13. docs/retention.md: "A late row outlives its identity: it keeps its
-- event's key, time and value until its own watermark falls below the
-- horizon", and a key collection frees only the keys nothing uses, late
-- rows included.  The late event's identity is forgotten at once (time
-- 50 < H = 90); then two collections run (each after more than 1024 new
-- keys, of the late key's length), and the late row still has its key:
-- late_events(), the checkpoint (restored into a twin) and a new backend.
-- (The late output is written by the late event's own call, before any
-- collection, and never rebuilt from the state.)
SELECT streamforge.create_pipeline(p, ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    lateness => 0, retention => 10)
  FROM unnest(ARRAY['s5k', 's5k_twin']) AS p;
SELECT count(*) FROM streamforge.advance('s5k', 'p', 100);
SELECT count(*) FROM streamforge.ingest('s5k', 'p', 0, 'late', 'lk00000', 50, 7);
SELECT remembered_identities, remembered_late_events FROM streamforge.stats('s5k');
SELECT count(*) FROM streamforge.ingest_batch('s5k', ARRAY(
    SELECT ROW('p', i, 'n' || i, 'nk' || lpad(i::text, 5, '0'), 100 + i % 10, i)::streamforge.delivery
      FROM generate_series(1, 1100) AS i));
-- (the next call collects)
SELECT late_seq, event_id, key, event_time, value, watermark FROM streamforge.late_events('s5k');
SELECT count(*) FROM streamforge.ingest_batch('s5k', ARRAY(
    SELECT ROW('p', i, 'n' || i, 'nk' || lpad(i::text, 5, '0'), 100 + i % 10, i)::streamforge.delivery
      FROM generate_series(1101, 3500) AS i));
SELECT late_seq, event_id, key, event_time, value, watermark FROM streamforge.late_events('s5k');
SELECT count(*) FROM streamforge.advance('s5k', 'p', 110);
SELECT late_seq, event_id, key, event_time, value, watermark FROM streamforge.late_events('s5k');
SELECT l->>'event_id' AS event_id, l->>'key' AS key
  FROM jsonb_array_elements(streamforge.inspect_checkpoint(streamforge.checkpoint('s5k')) -> 'late') AS l;
SELECT streamforge.restore('s5k_twin', streamforge.checkpoint('s5k'));
SELECT late_seq, event_id, key, event_time, value, watermark FROM streamforge.late_events('s5k_twin');

-- a new backend loads it from its snapshot and journal: the same
\c -
SELECT late_seq, event_id, key, event_time, value, watermark FROM streamforge.late_events('s5k');
-- its watermark falls below the horizon: it goes
SELECT count(*) FROM streamforge.advance('s5k', 'p', 111);
SELECT count(*) AS late_rows FROM streamforge.late_events('s5k');
SELECT streamforge.drop_pipeline(p) FROM unnest(ARRAY['s5k', 's5k_twin']) AS p;
