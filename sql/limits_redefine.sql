-- limits_redefine: streamforge.max_live_buckets holds for every path that
-- creates buckets, not only for events (issue 21, item 2 and smaller
-- items): add_window and set_lateness count the buckets a change would
-- keep and derive before they build any, restore counts the checkpoint's,
-- and a refused change leaves the pipeline as it was.  Also: the highest
-- lateness set_lateness's hint offers, interval windows in add_window,
-- timestamps past timestamptz's range (22008), the bounded
-- unknown-pipeline hint.
SET client_min_messages = warning;
CREATE SCHEMA limr;
SET search_path = limr, public;
-- 'ok', or SQLSTATE: message (detail) [hint]
CREATE FUNCTION try(stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    st text; msg text; det text; hin text;
BEGIN
    EXECUTE stmt;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
                            det = PG_EXCEPTION_DETAIL, hin = PG_EXCEPTION_HINT;
    RETURN st || ': ' || msg || coalesce(' | ' || nullif(det, ''), '')
           || coalesce(' [' || nullif(hin, '') || ']', '');
END $$;
-- what a refused change must leave as it was
CREATE FUNCTION state(pipeline text) RETURNS text LANGUAGE sql AS $$
    SELECT format('windows %s lateness %s live %s visible %s changes %s',
                  i.windows, i.lateness, i.live_buckets, i.visible_rows,
                  i.changes_emitted)
      FROM streamforge.pipeline_info AS i WHERE i.name = pipeline
$$;
RESET client_min_messages;

-- add_window: the issue's case at a small scale.  5 events and a sliding
-- window of 100 one-unit steps would make 500 buckets; with a cap of 50 it
-- is refused before any is built, and nothing changes.
SELECT streamforge.create_pipeline('lr_add', ARRAY['p'],
    ARRAY[streamforge.fixed('f', 10)]);
SELECT count(*) FROM streamforge.ingest_batch('lr_add', (SELECT array_agg(
    ROW('p', i, 'e' || i, 'k' || i, 1000 + i, 1)::streamforge.delivery
    ORDER BY i) FROM generate_series(0, 4) i));
SELECT streamforge.checkpoint('lr_add') AS add_cp \gset
SET streamforge.max_live_buckets = 50;
SELECT state('lr_add');
SELECT try($$SELECT * FROM streamforge.add_window('lr_add', streamforge.sliding('s', 100, 1))$$);
SELECT state('lr_add');
SELECT streamforge.checkpoint('lr_add') = :'add_cp' AS unchanged;
-- 5 + 45 = 50 buckets: at the cap exactly, accepted
SELECT count(*) FROM streamforge.add_window('lr_add', streamforge.sliding('s9', 9, 1));
SELECT state('lr_add');
SELECT try($$SELECT * FROM streamforge.add_window('lr_add', streamforge.fixed('g', 5))$$);
SELECT streamforge.drop_pipeline('lr_add');

-- The count is exact, not a bound per event: 40 events of one key, one
-- unit apart, in a sliding window of 10 one-unit steps are 49 buckets
-- (starts 991 to 1039), not 400; the finalized buckets are not counted.
SELECT streamforge.create_pipeline('lr_exact', ARRAY['p'],
    ARRAY[streamforge.fixed('f', 1000)]);
SELECT count(*) FROM streamforge.ingest_batch('lr_exact', (SELECT array_agg(
    ROW('p', i, 'e' || i, 'k', 1000 + i, 1)::streamforge.delivery
    ORDER BY i) FROM generate_series(0, 39) i));
SELECT state('lr_exact');
SELECT try($$SELECT * FROM streamforge.add_window('lr_exact', streamforge.sliding('s', 10, 1))$$);
SELECT state('lr_exact');
-- a watermark at 1030 finalizes the buckets ending before it (lateness
-- 0): starts 1020 to 1039 are left, 20 of them, with the fixed one 21
SELECT count(*) FROM streamforge.drop_window('lr_exact', 's');
SELECT count(*) FROM streamforge.advance('lr_exact', 'p', 1030);
SET streamforge.max_live_buckets = 20;
SELECT try($$SELECT * FROM streamforge.add_window('lr_exact', streamforge.sliding('s', 10, 1))$$);
SET streamforge.max_live_buckets = 21;
SELECT count(*) FROM streamforge.add_window('lr_exact', streamforge.sliding('s', 10, 1));
SELECT state('lr_exact');
SELECT streamforge.drop_pipeline('lr_exact');

-- Sessions: one per run of events less than a gap apart, per key.  Three
-- keys with two runs each are six sessions, whatever the order the events
-- came in.
SELECT streamforge.create_pipeline('lr_sess', ARRAY['p'],
    ARRAY[streamforge.fixed('f', 100000)]);
SELECT count(*) FROM streamforge.ingest_batch('lr_sess', (SELECT array_agg(
    ROW('p', n - 1, 'e' || t, 'k' || (t % 3), t, 1)::streamforge.delivery
    ORDER BY n) FROM (SELECT row_number() OVER (ORDER BY md5(t::text)) AS n, t
      FROM (SELECT generate_series(0, 8) AS t
            UNION ALL SELECT generate_series(500, 508)) AS x) AS y));
SELECT state('lr_sess');
SET streamforge.max_live_buckets = 8;
SELECT try($$SELECT * FROM streamforge.add_window('lr_sess', streamforge.session('v', 10))$$);
SET streamforge.max_live_buckets = 9;
SELECT count(*) FROM streamforge.add_window('lr_sess', streamforge.session('v', 10));
SELECT state('lr_sess');
SELECT streamforge.drop_pipeline('lr_sess');
RESET streamforge.max_live_buckets;

-- set_lateness: a higher lateness brings back finalized buckets, counted
-- first.  30 events in 30 one-unit buckets, all finalized at watermark 100.
SELECT streamforge.create_pipeline('lr_late', ARRAY['p'],
    ARRAY[streamforge.fixed('f', 1)]);
SELECT count(*) FROM streamforge.ingest_batch('lr_late', (SELECT array_agg(
    ROW('p', i, 'e' || i, 'k', i, 1)::streamforge.delivery ORDER BY i)
    FROM generate_series(0, 9) i));
SELECT count(*) FROM streamforge.advance('lr_late', 'p', 50);
SELECT count(*) FROM streamforge.ingest_batch('lr_late', (SELECT array_agg(
    ROW('p', i, 'e' || i, 'k', 40 + i, 1)::streamforge.delivery ORDER BY i)
    FROM generate_series(10, 29) i));
SELECT count(*) FROM streamforge.advance('lr_late', 'p', 100);
SET streamforge.max_live_buckets = 10;
SELECT state('lr_late');
SELECT streamforge.checkpoint('lr_late') AS late_cp \gset
SELECT try($$SELECT * FROM streamforge.set_lateness('lr_late', 1000)$$);
SELECT state('lr_late');
SELECT streamforge.checkpoint('lr_late') = :'late_cp' AS unchanged;
-- lateness 39: the buckets ending at 61 or later, [60, 61) to [69, 70)
SELECT try($$SELECT * FROM streamforge.set_lateness('lr_late', 40)$$);
SELECT count(*) FROM streamforge.set_lateness('lr_late', 39);
SELECT state('lr_late');
SELECT streamforge.checkpoint('lr_late') AS ten_cp \gset

-- Over a lowered cap, a change that adds no bucket still passes (a lower
-- lateness, a new partition, a dropped window); one that adds any is
-- refused.
SET streamforge.max_live_buckets = 11;
SELECT count(*) FROM streamforge.add_window('lr_late', streamforge.fixed('g', 100000));
SET streamforge.max_live_buckets = 3;
SELECT count(*) FROM streamforge.add_partition('lr_late', 'q');
SELECT try($$SELECT * FROM streamforge.add_window('lr_late', streamforge.fixed('h', 100000))$$);
SELECT count(*) FROM streamforge.drop_window('lr_late', 'g');
SELECT count(*) FROM streamforge.set_lateness('lr_late', 35);
SELECT state('lr_late');
SELECT streamforge.drop_pipeline('lr_late');

-- restore: a checkpoint with more live buckets than the cap is refused
-- before they are built; the pipeline keeps its state.
SELECT streamforge.create_pipeline('lr_rest', ARRAY['p'],
    ARRAY[streamforge.fixed('f', 1)], lateness => 39);
SELECT try($$SELECT streamforge.restore('lr_rest', '$$ || :'ten_cp' || $$')$$);
SELECT state('lr_rest');
-- inspect_checkpoint builds them too, to validate
SELECT try($$SELECT streamforge.inspect_checkpoint('$$ || :'ten_cp' || $$')$$);
SET streamforge.max_live_buckets = 10;
SELECT jsonb_typeof(streamforge.inspect_checkpoint(:'ten_cp')) AS inspected;
SELECT try($$SELECT streamforge.restore('lr_rest', '$$ || :'ten_cp' || $$')$$);
SELECT state('lr_rest');
RESET streamforge.max_live_buckets;
SELECT streamforge.drop_pipeline('lr_rest');

-- A lower cap does not make a pipeline unloadable: the journal entries
-- replayed when it is rebuilt from its tables were accepted under the cap
-- of their time.  New events are refused as before.
SELECT streamforge.create_pipeline('lr_replay', ARRAY['p'],
    ARRAY[streamforge.fixed('f', 1)]);
SELECT count(*) FROM streamforge.ingest_batch('lr_replay', (SELECT array_agg(
    ROW('p', i, 'e' || i, 'k', i, 1)::streamforge.delivery ORDER BY i)
    FROM generate_series(0, 4) i));
SET streamforge.max_live_buckets = 2;
-- a failed call throws the cached pipeline away
SELECT try($$SELECT * FROM streamforge.ingest('lr_replay', 'p', 0, 'e0', 'k', 0, 2)$$);
SELECT state('lr_replay');
SELECT try($$SELECT * FROM streamforge.ingest('lr_replay', 'p', 5, 'e5', 'k', 5, 1)$$);
SELECT state('lr_replay');
RESET streamforge.max_live_buckets;
SELECT streamforge.drop_pipeline('lr_replay');

-- set_lateness's hint: the highest lateness possible is the lowest over
-- every late event, not the first conflicting one's (lateness 0,
-- watermark 20, late events at 15 and 18: 1, not 4).
SELECT streamforge.create_pipeline('lr_hint', ARRAY['p'],
    ARRAY[streamforge.fixed('f', 10)]);
SELECT count(*) FROM streamforge.advance('lr_hint', 'p', 20);
SELECT count(*) FROM streamforge.ingest('lr_hint', 'p', 0, 'a', 'k', 15, 1);
SELECT count(*) FROM streamforge.ingest('lr_hint', 'p', 1, 'b', 'k', 18, 1);
SELECT late_seq, event_time, watermark FROM streamforge.late_events('lr_hint');
SELECT try($$SELECT * FROM streamforge.set_lateness('lr_hint', 10)$$);
SELECT try($$SELECT * FROM streamforge.set_lateness('lr_hint', 2)$$);
SELECT count(*) FROM streamforge.set_lateness('lr_hint', 1);
SELECT lateness FROM streamforge.pipeline_info WHERE name = 'lr_hint';
SELECT streamforge.drop_pipeline('lr_hint');

-- add_window with interval windows: converted to the pipeline's unit as
-- create_pipeline converts them.
SELECT streamforge.create_pipeline('lr_unit', ARRAY['p'],
    ARRAY[streamforge.fixed_interval('m', interval '1 minute')],
    lateness => 100000, time_unit => interval '1 second');
SELECT count(*) FROM streamforge.add_window('lr_unit', streamforge.fixed_interval('h', interval '1 hour'));
SELECT count(*) FROM streamforge.add_window('lr_unit', streamforge.sliding_interval('s', interval '10 minutes', interval '5 minutes'));
SELECT count(*) FROM streamforge.add_window('lr_unit', streamforge.session_interval('v', interval '30 seconds'));
SELECT windows FROM streamforge.pipeline_info WHERE name = 'lr_unit';
SELECT try($$SELECT * FROM streamforge.add_window('lr_unit', streamforge.fixed_interval('x', interval '1.5 seconds'))$$);
SELECT try($$SELECT * FROM streamforge.add_window('lr_unit', streamforge.fixed_interval('x', interval '1 month'))$$);
SELECT try($$SELECT * FROM streamforge.add_window('lr_unit', streamforge.fixed_interval('h', interval '2 hours'))$$);
SELECT streamforge.create_pipeline('lr_nounit', ARRAY['p'],
    ARRAY[streamforge.fixed('f', 10)]);
SELECT try($$SELECT * FROM streamforge.add_window('lr_nounit', streamforge.fixed_interval('m', interval '1 minute'))$$);
SELECT streamforge.drop_pipeline('lr_nounit');

-- Times timestamptz cannot hold are 22008 (PostgreSQL's "timestamp out of
-- range"), never 22003; the ones it can hold convert, up to its last
-- microsecond.
SET TimeZone = 'UTC';
SELECT streamforge.units_to_time(9223372036854775806, interval '1 microsecond');
SELECT try($$SELECT streamforge.units_to_time(9223372036854775806, interval '1 hour')$$);
-- the largest bigint is +infinity (streamforge.finish(), docs/progress.md)
SELECT streamforge.units_to_time(9223372036854775807, interval '1 hour');
SELECT try($$SELECT streamforge.units_to_time(-9223372036854775808, interval '1 second')$$);
SELECT streamforge.units_to_time(9224318015999, interval '1 second');
SELECT streamforge.units_to_time(9224318015999999, interval '1 millisecond');
SELECT try($$SELECT streamforge.units_to_time(9224318016000000, interval '1 millisecond')$$);
SELECT streamforge.units_to_time(streamforge.time_to_units('250000-06-01 12:34:56.789+00', interval '1 millisecond'), interval '1 millisecond');
SELECT streamforge.units_to_time(-210866803200, interval '1 second');
SELECT try($$SELECT streamforge.units_to_time(-210866803201, interval '1 second')$$);
-- a far-future bucket: the reads that show it fail with 22008, the others
-- do not (the watermark is still representable)
SELECT count(*) FROM streamforge.ingest('lr_unit', 'p', 0, 'far', 'k', 9000000000000000000, 1);
SELECT count(*) FROM streamforge.ingest('lr_unit', 'p', 1, 'near', 'k', 60, 1);
SELECT count(*) FROM streamforge.advance('lr_unit', 'p', 7200);
SELECT try($$SELECT * FROM streamforge.live_ts('lr_unit')$$);
SELECT window_name, window_start, window_end, count FROM streamforge.visible_ts('lr_unit')
 ORDER BY 1, 2;
SELECT streamforge.watermark_ts('lr_unit');
-- the bigint reads give every time
SELECT window_name, window_start FROM streamforge.live('lr_unit') ORDER BY 1, 2;
-- a watermark timestamptz cannot hold (the far buckets are finalized)
SELECT count(*) FROM streamforge.advance('lr_unit', 'p', 9100000000000000000);
SELECT count(*) FROM streamforge.visible_ts('lr_unit');
SELECT try($$SELECT streamforge.watermark_ts('lr_unit')$$);
RESET TimeZone;
SELECT streamforge.drop_pipeline('lr_unit');

-- The unknown-pipeline hint: edit distance among a few pipelines; past a
-- thousand, only names equal but for case, looked up through the index.
SELECT streamforge.create_pipeline('lr_Orders', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)]);
SELECT try($$SELECT streamforge.watermark('lr_ordrs')$$);
SELECT try($$SELECT streamforge.watermark('LR_ORDERS')$$);
SELECT count(*) FROM (SELECT streamforge.create_pipeline('lr_bulk_' || i, ARRAY['p'],
    ARRAY[streamforge.fixed('f', 10)]) FROM generate_series(1, 1000) i) AS x;
SELECT try($$SELECT streamforge.watermark('lr_ordrs')$$);
SELECT try($$SELECT streamforge.watermark('LR_ORDERS')$$);
SELECT try($$SELECT streamforge.watermark('lr_bulk_1001')$$);
-- the lookup of the hint uses the index on lower(name) (whether as a bitmap
-- or a plain index scan depends on the statistics autovacuum may have
-- gathered by now: only the index is checked)
SET enable_seqscan = off;
DO $$
DECLARE
    l text;
    found boolean := false;
BEGIN
    FOR l IN EXPLAIN (COSTS OFF) SELECT name FROM streamforge.pipeline
        WHERE pg_catalog.lower(name) OPERATOR(pg_catalog.=) pg_catalog.lower('LR_ORDERS'::text)
    LOOP
        found := found OR l LIKE '%Index%Scan%pipeline_name_lower%';
    END LOOP;
    RAISE NOTICE 'the hint''s lookup uses pipeline_name_lower: %', found;
END $$;
RESET enable_seqscan;
SELECT count(*) FROM (SELECT streamforge.drop_pipeline(name) FROM streamforge.pipeline
  WHERE name LIKE 'lr\_%') AS x;

DROP SCHEMA limr CASCADE;
