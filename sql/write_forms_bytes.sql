-- write_forms_bytes: the byte pin of every 0.1.0-0.3.0 write function
-- (issue 41, item 3: one write core behind them).  A one-measure pipeline
-- fed through ingest, ingest_count, append, ingest_batch, append_batch and
-- ingest_json (with and without offsets), and a measures pipeline through
-- ingest_measures, ingest_measures_batch and append_measures_batch, one
-- statement (one transaction, one journal row) per call: the rows each
-- call returns, the md5 of the journal, the checkpoint and the snapshot.
-- The expected output was produced by the code before the write core
-- (6b12cb3), so a changed byte or row of any old form fails here; the
-- measures pipeline's snapshot line changed on purpose with 0.4.0's
-- snapshot format 3 (issue 39: until then it was the checkpoint), and its
-- journal line with 0.4.0's compact measures entries (format 3 kind 'V',
-- issue 42: until then format 1); its checkpoint did not change.
-- Deterministic: fixed ids, times and values, no clock.
SET client_min_messages = warning;
CREATE SCHEMA wfb;
SET search_path = wfb, public;

-- 32 events over two partitions, out of order; event 30 repeats event 3
-- (a duplicate), event 31 is late
CREATE TABLE ev AS
SELECT i, CASE WHEN j % 3 = 0 THEN 'b' ELSE 'a' END AS part,
       'e' || j AS eid, 'k' || (j % 3) AS key,
       CASE WHEN i = 31 THEN 0 ELSE (j * 11) % 37 + j END AS t,
       (j * 13) % 17 - 5 AS v,
       CASE WHEN j % 5 = 0 THEN NULL ELSE j % 7 END AS nv
  FROM generate_series(0, 31) AS i,
       LATERAL (SELECT CASE WHEN i = 30 THEN 3 ELSE i END AS j) AS x;
CREATE TABLE ev_off AS
SELECT i, part, row_number() OVER (PARTITION BY part ORDER BY i) - 1 AS off FROM ev;
CREATE VIEW evo AS SELECT * FROM ev JOIN ev_off USING (i, part);

CREATE FUNCTION journal_md5(pl text) RETURNS text LANGUAGE sql AS $$
    SELECT count(*) || ' rows, ' || md5(string_agg(j.entry, ''::bytea ORDER BY j.pos))
      FROM streamforge.journal j JOIN streamforge.pipeline p ON p.id = j.pipeline_id
     WHERE p.name = pl
$$;
CREATE FUNCTION pins(pl text) RETURNS TABLE (what text, pin text) LANGUAGE plpgsql AS $$
DECLARE
    cp text;
BEGIN
    what := '1 journal'; pin := journal_md5(pl); RETURN NEXT;
    cp := md5(streamforge.checkpoint(pl));
    what := '2 checkpoint'; pin := cp; RETURN NEXT;
    PERFORM streamforge.compact(pl, 0);
    what := '3 snapshot';
    pin := (SELECT length(snapshot) || ' bytes, ' || md5(snapshot)
              FROM streamforge.pipeline WHERE name = pl);
    RETURN NEXT;
    what := '4 checkpoint after compact';
    pin := CASE WHEN md5(streamforge.checkpoint(pl)) = cp THEN 'same' ELSE 'CHANGED' END;
    RETURN NEXT;
END $$;

SELECT streamforge.create_pipeline('wfb_one', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 20, 5),
          streamforge.session('g', 4)], lateness => 3, out_of_orderness => 6);
SELECT streamforge.create_pipeline('wfb_m', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('f', 10), streamforge.session('g', 4)],
    lateness => 3, out_of_orderness => 6,
    measures => ARRAY['v', 'nv NULL'],
    aggregates => ARRAY['count', 'sum(v)', 'min(v)', 'count(nv)', 'max(nv)', 'last(nv)',
        'var_samp(v)']);

-- the one-measure pipeline: each form in turn, the rows of each call
SELECT 'ingest' AS form, c.*
  FROM (SELECT * FROM evo WHERE i < 4 ORDER BY i) e,
       LATERAL streamforge.ingest('wfb_one', part, off, eid, key, t, v) c;
SELECT 'ingest_count' AS form, i,
       streamforge.ingest_count('wfb_one', part, off, eid, key, t, v) AS n
  FROM (SELECT * FROM evo WHERE i BETWEEN 4 AND 7 ORDER BY i) e;
SELECT 'append' AS form, c.*
  FROM (SELECT * FROM evo WHERE i BETWEEN 8 AND 11 ORDER BY i) e,
       LATERAL streamforge.append('wfb_one', part, eid, key, t, v) c;
SELECT 'ingest_batch' AS form, * FROM streamforge.ingest_batch('wfb_one',
    (SELECT array_agg(ROW(part, off, eid, key, t, v)::streamforge.delivery ORDER BY i)
       FROM evo WHERE i BETWEEN 12 AND 17));
SELECT 'append_batch' AS form, * FROM streamforge.append_batch('wfb_one',
    (SELECT array_agg(ROW(part, eid, key, t, v)::streamforge.event ORDER BY i)
       FROM evo WHERE i BETWEEN 18 AND 22));
SELECT 'ingest_json' AS form, * FROM streamforge.ingest_json('wfb_one',
    (SELECT jsonb_agg(jsonb_build_object('partition', part, 'source_offset', off,
         'event_id', eid, 'key', key, 'event_time', t, 'value', v) ORDER BY i)
       FROM evo WHERE i BETWEEN 23 AND 26));
SELECT 'ingest_json events' AS form, * FROM streamforge.ingest_json('wfb_one',
    (SELECT jsonb_agg(jsonb_build_object('partition', part,
         'event_id', eid, 'key', key, 'event_time', t, 'value', v) ORDER BY i)
       FROM evo WHERE i BETWEEN 27 AND 31));
SELECT 'advance' AS form, * FROM streamforge.advance('wfb_one', 'a', 80);

-- the measures pipeline
SELECT 'ingest_measures' AS form, c.*
  FROM (SELECT * FROM evo WHERE i < 10 ORDER BY i) e,
       LATERAL streamforge.ingest_measures('wfb_m', part, off, eid, key, t, ARRAY[v, nv]) c;
SELECT 'ingest_measures_batch' AS form, * FROM streamforge.ingest_measures_batch('wfb_m',
    (SELECT array_agg(ROW(part, off, eid, key, t, ARRAY[v, nv])::streamforge.measures_delivery ORDER BY i)
       FROM evo WHERE i BETWEEN 10 AND 20));
SELECT 'append_measures_batch' AS form, * FROM streamforge.append_measures_batch('wfb_m',
    (SELECT array_agg(ROW(part, NULL, eid, key, t, ARRAY[v, nv])::streamforge.measures_delivery ORDER BY i)
       FROM evo WHERE i BETWEEN 21 AND 31));
SELECT 'advance' AS form, * FROM streamforge.advance('wfb_m', 'a', 80);

SELECT s.late_events, s.duplicate_ids, s.accepted, s.deliveries
  FROM unnest(ARRAY['wfb_one', 'wfb_m']) AS pl, streamforge.stats(pl) AS s;
SELECT * FROM streamforge.visible('wfb_one') ORDER BY window_name, key, window_start;
SELECT * FROM streamforge.visible_aggregates('wfb_m') ORDER BY window_name, key, window_start;
SELECT 'wfb_one' AS pl, * FROM pins('wfb_one');
SELECT 'wfb_m' AS pl, * FROM pins('wfb_m');

SELECT streamforge.drop_pipeline('wfb_one');
SELECT streamforge.drop_pipeline('wfb_m');
DROP SCHEMA wfb CASCADE;
