-- measures_forms: the write and read forms 0.4.0 adds for measures
-- pipelines (issue 41, item 3: every form for every kind of pipeline), each
-- run against its 0.3.0 equivalent on a twin pipeline fed the same events:
--   append_measures        ~ ingest_measures at the partition's next offset
--   ingest_measures_count  ~ count(*) of ingest_measures
--   ingest_measures_json   ~ ingest_measures_batch (with source_offset),
--                            append_measures_batch (without), and
--                            ingest_measures_ts (timestamp strings)
--   ingest_measures_ts, append_measures_ts
--                          ~ ingest_measures / append_measures of
--                            time_to_units(event_time)
--   live_aggregates_ts, visible_aggregates_ts
--                          ~ live_aggregates / visible_aggregates with
--                            units_to_time bounds
-- Equal means: the same rows returned by every call, and the same
-- checkpoint (inspect_checkpoint without the pipeline's name).  Then the
-- errors of the new forms.
SET client_min_messages = warning;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, MDY';
CREATE SCHEMA mf;
SET search_path = mf, public;

-- twins: two partitions, a fixed and a session window, built-in progress
-- (so that deliveries emit rows), a nullable measure, a time unit of 1 s
CREATE FUNCTION mk(pl text) RETURNS void LANGUAGE sql AS $$
    SELECT streamforge.create_pipeline(pl, ARRAY['a', 'b'],
        ARRAY[streamforge.fixed('f', 10), streamforge.session('g', 4)],
        lateness => 2, out_of_orderness => 3,
        time_unit => interval '1 second',
        measures => ARRAY['x', 'y NULL'],
        aggregates => ARRAY['count', 'sum(x)', 'min(x)', 'count(y)', 'max(y)', 'last(y)'])
$$;
-- the checkpoint of pl: its bytes (they do not name the pipeline)
CREATE FUNCTION cp(pl text) RETURNS bytea LANGUAGE sql AS $$
    SELECT streamforge.checkpoint(pl)
$$;

-- 16 events: out of order, two partitions; events 12 and 13 move the
-- watermark (out_of_orderness 3) to 27 and the windows before emit; event
-- 14 repeats event 2 (a duplicate), event 15 is late (time 1); NULL y on
-- every fourth
CREATE TABLE ev AS
SELECT i, CASE WHEN j % 3 = 0 THEN 'b' ELSE 'a' END AS part,
       'e' || j AS eid, 'k' || (j % 2) AS key,
       CASE WHEN i = 12 THEN 30 WHEN i = 13 THEN 31 WHEN i = 15 THEN 1
            ELSE (j * 7) % 19 END AS t,
       j - 4 AS x, CASE WHEN j % 4 = 0 THEN NULL ELSE j * 2 END AS y
  FROM generate_series(0, 15) AS i,
       LATERAL (SELECT CASE WHEN i = 14 THEN 2 ELSE i END AS j) AS jj;
CREATE TABLE ev_off AS
SELECT i, part, row_number() OVER (PARTITION BY part ORDER BY i) - 1 AS off
  FROM ev;
CREATE VIEW evo AS SELECT * FROM ev JOIN ev_off USING (i, part);
SELECT i, part, off, eid, key, t, x, y FROM evo ORDER BY i;

-- the rows of every call, kept per pipeline (op, address, count, aggregates)
CREATE TABLE got (pl text, i int, ord bigint, seq bigint, op text,
                  window_name text, key text, window_start bigint,
                  window_end bigint, count bigint, aggregates jsonb);
CREATE FUNCTION keep(pl text, i int, r streamforge.measures_change[])
RETURNS int LANGUAGE sql AS $$
    INSERT INTO got SELECT pl, i, u.o, u.seq, u.op, u.window_name, u.key,
        u.window_start, u.window_end, u.count, u.aggregates
      FROM unnest(r) WITH ORDINALITY
           AS u(seq, op, window_name, key, window_start, window_end, count, aggregates, o);
    SELECT coalesce(cardinality(r), 0)
$$;
-- the rows of a and b differ in nothing but the pipeline
CREATE FUNCTION same_rows(a text, b text) RETURNS boolean LANGUAGE sql AS $$
    SELECT NOT EXISTS (
        (SELECT i, ord, seq, op, window_name, key, window_start, window_end, count, aggregates
           FROM got WHERE pl = a
         EXCEPT ALL
         SELECT i, ord, seq, op, window_name, key, window_start, window_end, count, aggregates
           FROM got WHERE pl = b)
        UNION ALL
        (SELECT i, ord, seq, op, window_name, key, window_start, window_end, count, aggregates
           FROM got WHERE pl = b
         EXCEPT ALL
         SELECT i, ord, seq, op, window_name, key, window_start, window_end, count, aggregates
           FROM got WHERE pl = a))
$$;

SELECT mk(pl) FROM unnest(ARRAY['mf_ing', 'mf_app', 'mf_cnt', 'mf_batch',
    'mf_json', 'mf_abatch', 'mf_ajson', 'mf_ts', 'mf_ats', 'mf_jts']) AS pl;

-- 1. append_measures ~ ingest_measures, one call per event in order
SELECT sum(keep('mf_ing', i, ARRAY(SELECT c FROM streamforge.ingest_measures(
           'mf_ing', part, off, eid, key, t, ARRAY[x, y]) AS c))) AS ing_rows,
       sum(keep('mf_app', i, ARRAY(SELECT c FROM streamforge.append_measures(
           'mf_app', part, eid, key, t, ARRAY[x, y]) AS c))) AS app_rows
  FROM (SELECT * FROM evo ORDER BY i) AS e;
-- what ingest_measures returned (checked by hand: see the expected file)
SELECT i, ord, seq, op, window_name, key, window_start, window_end, count, aggregates
  FROM got WHERE pl = 'mf_ing' ORDER BY i, ord;
SELECT same_rows('mf_ing', 'mf_app') AS same_rows,
       cp('mf_ing') = cp('mf_app') AS same_checkpoint;
SELECT name, consumed FROM streamforge.partitions('mf_app') AS pa(name, consumed, progress, idle)
 ORDER BY name;

-- 2. ingest_measures_count ~ count(*) of ingest_measures, per call
CREATE TABLE counts (i int, n int);
INSERT INTO counts
SELECT i, streamforge.ingest_measures_count('mf_cnt', part, off, eid, key, t, ARRAY[x, y])
  FROM (SELECT * FROM evo ORDER BY i) AS e;
SELECT c.i, c.n AS counted,
       (SELECT count(*) FROM got g WHERE g.pl = 'mf_ing' AND g.i = c.i) AS ingest_rows
  FROM counts c ORDER BY c.i;
SELECT bool_and(c.n = (SELECT count(*) FROM got g WHERE g.pl = 'mf_ing' AND g.i = c.i))
         AS same_counts,
       cp('mf_cnt') = cp('mf_ing') AS same_checkpoint
  FROM counts c;

-- 3. ingest_measures_json with source_offset ~ ingest_measures_batch;
-- without ~ append_measures_batch (one call each, the events in order)
SELECT keep('mf_batch', 0, ARRAY(SELECT c FROM streamforge.ingest_measures_batch('mf_batch',
           (SELECT array_agg(ROW(part, off, eid, key, t, ARRAY[x, y])::streamforge.measures_delivery
                             ORDER BY i) FROM evo)) AS c)) AS batch_rows,
       keep('mf_json', 0, ARRAY(SELECT c FROM streamforge.ingest_measures_json('mf_json',
           (SELECT jsonb_agg(jsonb_build_object('partition', part, 'source_offset', off,
                'event_id', eid, 'key', key, 'event_time', t, 'measures', jsonb_build_array(x, y))
                ORDER BY i) FROM evo)) AS c)) AS json_rows;
SELECT same_rows('mf_batch', 'mf_json') AS same_rows,
       cp('mf_batch') = cp('mf_json') AS same_checkpoint,
       cp('mf_batch') = cp('mf_ing') AS same_as_row_by_row;
SELECT keep('mf_abatch', 0, ARRAY(SELECT c FROM streamforge.append_measures_batch('mf_abatch',
           (SELECT array_agg(ROW(part, NULL, eid, key, t, ARRAY[x, y])::streamforge.measures_delivery
                             ORDER BY i) FROM evo)) AS c)) AS batch_rows,
       keep('mf_ajson', 0, ARRAY(SELECT c FROM streamforge.ingest_measures_json('mf_ajson',
           (SELECT jsonb_agg(jsonb_build_object('partition', part,
                'event_id', eid, 'key', key, 'event_time', t, 'measures', jsonb_build_array(x, y))
                ORDER BY i) FROM evo)) AS c)) AS json_rows;
SELECT same_rows('mf_abatch', 'mf_ajson') AS same_rows,
       cp('mf_abatch') = cp('mf_ajson') AS same_checkpoint,
       cp('mf_ajson') = cp('mf_ing') AS same_as_row_by_row;

-- 4. the _ts forms ~ the bigint forms of time_to_units(event_time); the
-- JSON form with timestamp strings ~ ingest_measures_ts
CREATE VIEW evt AS
SELECT *, timestamptz '2026-01-01 00:00:00+00' + t * interval '1 second' AS ts FROM evo;
SELECT sum(keep('mf_ts', i, ARRAY(SELECT c FROM streamforge.ingest_measures_ts(
           'mf_ts', part, off, eid, key, ts, ARRAY[x, y]) AS c))) AS ts_rows,
       sum(keep('mf_ats', i, ARRAY(SELECT c FROM streamforge.append_measures_ts(
           'mf_ats', part, eid, key, ts, ARRAY[x, y]) AS c))) AS append_ts_rows
  FROM (SELECT * FROM evt ORDER BY i) AS e;
SELECT keep('mf_jts', 0, ARRAY(SELECT c FROM streamforge.ingest_measures_json('mf_jts',
           (SELECT jsonb_agg(jsonb_build_object('partition', part, 'source_offset', off,
                'event_id', eid, 'key', key, 'event_time', ts::text,
                'measures', jsonb_build_array(x, y)) ORDER BY i) FROM evt)) AS c)) AS json_rows;
-- event times 1767225600 + t: the same rows as mf_ing's shifted by that
SELECT bool_and(g.window_start = h.window_start + 1767225600 AND
                g.window_end = h.window_end + 1767225600 AND
                (g.op, g.key, g.count, g.aggregates) = (h.op, h.key, h.count, h.aggregates))
         AND count(*) = (SELECT count(*) FROM got WHERE pl = 'mf_ing') AS ts_rows_shifted
  FROM got g JOIN got h USING (i, ord)
 WHERE g.pl = 'mf_ts' AND h.pl = 'mf_ing';
SELECT same_rows('mf_ts', 'mf_ats') AS same_rows_append,
       cp('mf_ts') = cp('mf_ats') AS same_checkpoint_append,
       cp('mf_ts') = cp('mf_jts') AS same_checkpoint_json;

-- 5. live_aggregates_ts / visible_aggregates_ts ~ the bigint reads; the
-- watermark at 41 makes [30, 40) visible (lateness 2)
SELECT * FROM streamforge.live_aggregates_ts('mf_ts') ORDER BY window_name, key, window_start;
SELECT count(*) FROM streamforge.advance_ts('mf_ts', 'a', timestamptz '2026-01-01 00:00:41+00');
SELECT count(*) FROM streamforge.advance_ts('mf_ts', 'b', timestamptz '2026-01-01 00:00:41+00');
SELECT * FROM streamforge.visible_aggregates_ts('mf_ts') ORDER BY window_name, key, window_start;
SELECT (SELECT array_agg(ROW(window_name, key, streamforge.units_to_time(window_start, interval '1 second'),
                 streamforge.units_to_time(window_end, interval '1 second'), count, aggregates)::text
                 ORDER BY window_name, key, window_start)
          FROM streamforge.live_aggregates('mf_ts'))
     = (SELECT array_agg(r::text ORDER BY window_name, key, window_start)
          FROM streamforge.live_aggregates_ts('mf_ts') AS r) AS live_same,
       (SELECT count(*) FROM streamforge.live_aggregates_ts('mf_ts')) AS live_rows,
       (SELECT array_agg(ROW(window_name, key, streamforge.units_to_time(window_start, interval '1 second'),
                 streamforge.units_to_time(window_end, interval '1 second'), count, aggregates)::text
                 ORDER BY window_name, key, window_start)
          FROM streamforge.visible_aggregates('mf_ts'))
     = (SELECT array_agg(r::text ORDER BY window_name, key, window_start)
          FROM streamforge.visible_aggregates_ts('mf_ts') AS r) AS visible_same,
       (SELECT count(*) FROM streamforge.visible_aggregates_ts('mf_ts')) AS visible_rows;

-- 6. errors of the new forms (SQLSTATE and message)
\set VERBOSITY default
-- the kind checks: a one-measure pipeline is refused, as by ingest_measures
SELECT streamforge.create_pipeline('mf_one', ARRAY['a'], ARRAY[streamforge.fixed('f', 10)]);
SELECT * FROM streamforge.append_measures('mf_one', 'a', 'e', 'k', 1, ARRAY[1]);
SELECT streamforge.ingest_measures_count('mf_one', 'a', 0, 'e', 'k', 1, ARRAY[1]);
SELECT * FROM streamforge.ingest_measures_json('mf_one', '[]');
SELECT * FROM streamforge.live_aggregates_ts('mf_one');
-- and the one-measure forms refuse a measures pipeline
SELECT * FROM streamforge.ingest_json('mf_ing', '[]');
-- not-null checks in argument order, after the pipeline
SELECT * FROM streamforge.append_measures('mf_ing', NULL, 'e', 'k', 1, ARRAY[1, 2]);
SELECT * FROM streamforge.append_measures('mf_ing', 'a', 'e', 'k', NULL, ARRAY[1, 2]);
SELECT streamforge.ingest_measures_count('mf_ing', 'a', NULL, 'e', 'k', 1, NULL);
SELECT streamforge.ingest_measures_count('mf_ing', 'a', 20, 'e', 'k', 1, NULL);
-- the measures array: its length, a NULL of a measure not declared NULL
SELECT * FROM streamforge.append_measures('mf_ing', 'a', 'e', 'k', 1, ARRAY[1]);
SELECT * FROM streamforge.append_measures('mf_ing', 'a', 'e', 'k', 1, ARRAY[NULL, 2]);
SELECT * FROM streamforge.append_measures('mf_ing', 'a', '', 'k', 1, ARRAY[1, 2]);
SELECT * FROM streamforge.append_measures('mf_ing', 'zz', 'e', 'k', 1, ARRAY[1, 2]);
-- ingest_measures_json: the field is "measures"
SELECT * FROM streamforge.ingest_measures_json('mf_ing',
    '[{"partition": "a", "event_id": "e", "key": "k", "event_time": 1, "value": 1}]');
SELECT * FROM streamforge.ingest_measures_json('mf_ing',
    '[{"partition": "a", "event_id": "e", "key": "k", "event_time": 1}]');
SELECT * FROM streamforge.ingest_measures_json('mf_ing',
    '[{"partition": "a", "event_id": "e", "key": "k", "event_time": 1, "measures": 1}]');
SELECT * FROM streamforge.ingest_measures_json('mf_ing',
    '[{"partition": "a", "event_id": "e", "key": "k", "event_time": 1, "measures": null}]');
SELECT * FROM streamforge.ingest_measures_json('mf_ing',
    '[{"partition": "a", "event_id": "e", "key": "k", "event_time": 1, "measures": [1, 2, 3]}]');
SELECT * FROM streamforge.ingest_measures_json('mf_ing',
    '[{"partition": "a", "event_id": "e", "key": "k", "event_time": 1, "measures": [null, 2]}]');
SELECT * FROM streamforge.ingest_measures_json('mf_ing',
    '[{"partition": "a", "event_id": "e", "key": "k", "event_time": 1, "measures": [1, "2"]}]');
SELECT * FROM streamforge.ingest_measures_json('mf_ing',
    '[{"partition": "a", "event_id": "e", "key": "k", "event_time": 1, "measures": [1.5, 2]}]');
SELECT * FROM streamforge.ingest_measures_json('mf_ing',
    '[{"partition": "a", "event_id": "e", "key": "k", "event_time": 1, "measures": [1, 9223372036854775808]}]');
SELECT * FROM streamforge.ingest_measures_json('mf_ing',
    '[{"partition": "a", "event_id": "", "key": "k", "event_time": 1, "measures": [1, 2]}]');
SELECT * FROM streamforge.ingest_measures_json('mf_ing',
    '[{"partition": "a", "event_id": "e", "key": "k", "event_time": "soon", "measures": [1, 2]}]');
-- the _ts forms need a time unit
SELECT * FROM streamforge.append_measures_ts('mf_one', 'a', 'e', 'k', now(), ARRAY[1]);
-- accepted: a NULL for the measure declared NULL, an integral 40.0, an
-- empty array; the twins differ then (the comparison can fail)
SELECT op, window_name, key, window_start, count, aggregates
  FROM streamforge.ingest_measures_json('mf_json',
    '[{"partition": "a", "event_id": "n1", "key": "k9", "event_time": 40.0, "measures": [7, null]}]')
 ORDER BY window_name, op;
SELECT count(*) FROM streamforge.ingest_measures_json('mf_json', '[]');
SELECT window_name, key, window_start, count, aggregates
  FROM streamforge.live_aggregates('mf_json') WHERE key = 'k9' ORDER BY window_name;
SELECT name, consumed FROM streamforge.partitions('mf_json') AS pa(name, consumed, progress, idle)
 ORDER BY name;
SELECT cp('mf_json') = cp('mf_batch') AS still_same;

SELECT streamforge.drop_pipeline(pl) FROM unnest(ARRAY['mf_ing', 'mf_app', 'mf_cnt',
    'mf_batch', 'mf_json', 'mf_abatch', 'mf_ajson', 'mf_ts', 'mf_ats', 'mf_jts', 'mf_one']) AS pl;
DROP SCHEMA mf CASCADE;
