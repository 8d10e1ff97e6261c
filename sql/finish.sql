--
-- The end of the input: finish(pipeline) (docs/progress.md, "The end of
-- the input"; issue 45 item 2).  Every partition reports progress
-- 9223372036854775807 (+infinity): every window is emitted and finalized,
-- later events are late, a second finish changes nothing.
--
\set VERBOSITY default
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, MDY';

-- a fixed window of 10, lateness 5, three partitions: a and b reported,
-- c never did (so there is no watermark yet: nothing is emitted)
SELECT streamforge.create_pipeline('fin_u', ARRAY['a', 'b', 'c'],
    ARRAY[streamforge.fixed('w', 10)], lateness => 5);
SELECT count(*) FROM streamforge.ingest_batch('fin_u', ARRAY[
    ROW('a', 0, 'e1', 'k', 3, 1)::streamforge.delivery,
    ROW('a', 1, 'e2', 'k', 14, 2)::streamforge.delivery,
    ROW('b', 0, 'e3', 'k', 27, 4)::streamforge.delivery,
    ROW('b', 1, 'e4', 'j', 8, 8)::streamforge.delivery]);
SELECT count(*) FROM streamforge.advance('fin_u', 'a', 12);
SELECT count(*) FROM streamforge.advance('fin_u', 'b', 30);
SELECT streamforge.watermark('fin_u');
-- finish: the four buckets are emitted in one jump of the watermark
-- ('update': upserts; a finalized bucket leaves visible() silently)
SELECT seq, op, window_name, key, window_start, window_end, count, sum
  FROM streamforge.finish('fin_u') ORDER BY seq;
SELECT streamforge.watermark('fin_u');
SELECT partition, consumed_offset, progress, idle
  FROM streamforge.partitions('fin_u') ORDER BY 1;
SELECT count(*) AS live FROM streamforge.live('fin_u');
SELECT count(*) AS visible FROM streamforge.visible('fin_u');
-- idempotent: no change, no journal entry
SELECT journal_rows AS journal_before FROM streamforge.metrics WHERE pipeline = 'fin_u' \gset
SELECT count(*) FROM streamforge.finish('fin_u');
SELECT journal_rows = :journal_before AS no_new_entry, changes_emitted
  FROM streamforge.metrics WHERE pipeline = 'fin_u';
-- an event after the end is late (100 + 5 < +infinity), whatever its time
SELECT count(*) FROM streamforge.ingest('fin_u', 'a', 2, 'e5', 'k', 100, 16);
SELECT late_seq, partition, source_offset, event_id, event_time, watermark
  FROM streamforge.late_events('fin_u');
-- what finish did is what one advance per partition to the bigint
-- maximum does: the same state as this pipeline's
SELECT streamforge.create_pipeline('fin_by_hand', ARRAY['a', 'b', 'c'],
    ARRAY[streamforge.fixed('w', 10)], lateness => 5);
SELECT count(*) FROM streamforge.ingest_batch('fin_by_hand', ARRAY[
    ROW('a', 0, 'e1', 'k', 3, 1)::streamforge.delivery,
    ROW('a', 1, 'e2', 'k', 14, 2)::streamforge.delivery,
    ROW('b', 0, 'e3', 'k', 27, 4)::streamforge.delivery,
    ROW('b', 1, 'e4', 'j', 8, 8)::streamforge.delivery]);
SELECT count(*) FROM streamforge.advance('fin_by_hand', 'a', 12);
SELECT count(*) FROM streamforge.advance('fin_by_hand', 'b', 30);
SELECT count(*) FROM streamforge.advance('fin_by_hand', 'b', 9223372036854775807);
SELECT count(*) FROM streamforge.advance('fin_by_hand', 'a', 9223372036854775807);
SELECT count(*) FROM streamforge.advance('fin_by_hand', 'c', 9223372036854775807);
SELECT count(*) FROM streamforge.ingest('fin_by_hand', 'a', 2, 'e5', 'k', 100, 16);
SELECT streamforge.checkpoint('fin_by_hand') = streamforge.checkpoint('fin_u') AS same_state;

-- a new backend replays the journal (four advances) to the same state
SELECT streamforge.checkpoint('fin_u') AS ck_fin_u \gset
\c -
\set VERBOSITY default
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, MDY';
SELECT streamforge.checkpoint('fin_u') = :'ck_fin_u' AS same_after_reload;
-- checkpoint and restore: the finished state comes back, still finished
SELECT d -> 'clock' -> 'watermark' AS watermark,
       jsonb_path_query_array(d, '$.clock.partitions[*].progress') AS progress,
       d -> 'windows' AS windows
  FROM (SELECT streamforge.inspect_checkpoint(:'ck_fin_u') AS d) AS x;
-- the snapshot of a finished pipeline, loaded by a new backend
SELECT streamforge.compact('fin_u', 0);
\c -
\set VERBOSITY default
SELECT streamforge.checkpoint('fin_u') = :'ck_fin_u' AS same_from_snapshot;
SELECT streamforge.restore('fin_u', :'ck_fin_u');
SELECT streamforge.checkpoint('fin_u') = :'ck_fin_u' AS same_after_restore;
SELECT streamforge.watermark('fin_u');
SELECT count(*) FROM streamforge.finish('fin_u');
SELECT count(*) FROM streamforge.ingest('fin_u', 'b', 2, 'e6', 'k', 31, 32);
SELECT late_seq, event_id, watermark FROM streamforge.late_events('fin_u');
-- into a new pipeline of the same definition
SELECT streamforge.create_pipeline('fin_u_copy', ARRAY['a', 'b', 'c'],
    ARRAY[streamforge.fixed('w', 10)], lateness => 5);
SELECT streamforge.restore('fin_u_copy', :'ck_fin_u');
SELECT partition, progress, idle FROM streamforge.partitions('fin_u_copy') ORDER BY 1;
SELECT count(*) FROM streamforge.finish('fin_u_copy');

-- ----------------------------------------------------------------
-- A rollback undoes finish: state, journal and outputs
-- ----------------------------------------------------------------
\c -
\set VERBOSITY default
SELECT streamforge.create_pipeline('fin_r', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('w', 10)], emit => 'update+final');
SELECT streamforge.configure_outputs('fin_r', changelog => true, results => true);
SELECT count(*) FROM streamforge.ingest('fin_r', 'a', 0, 'e1', 'k', 3, 1);
SELECT count(*) FROM streamforge.ingest('fin_r', 'b', 0, 'e2', 'k', 15, 1);
SELECT count(*) FROM streamforge.advance('fin_r', 'a', 10);
SELECT count(*) FROM streamforge.advance('fin_r', 'b', 11);
SELECT streamforge.watermark('fin_r');
SELECT seq, op, window_start, count FROM streamforge.changelog
 WHERE pipeline = 'fin_r' ORDER BY seq;
BEGIN;
SELECT seq, op, window_start, window_end, count
  FROM streamforge.finish('fin_r') ORDER BY seq;
SELECT streamforge.watermark('fin_r');
ROLLBACK;
SELECT streamforge.watermark('fin_r');
SELECT partition, progress, idle FROM streamforge.partitions('fin_r') ORDER BY 1;
SELECT seq, op, window_start, count FROM streamforge.changelog
 WHERE pipeline = 'fin_r' ORDER BY seq;
-- the same in a savepoint, and from a new backend (the stored state)
BEGIN;
SAVEPOINT s;
SELECT count(*) FROM streamforge.finish('fin_r');
ROLLBACK TO SAVEPOINT s;
SELECT streamforge.watermark('fin_r');
COMMIT;
\c -
\set VERBOSITY default
SELECT streamforge.watermark('fin_r');
SELECT partition, progress, idle FROM streamforge.partitions('fin_r') ORDER BY 1;
-- committed: the upsert and final of [10, 20), the final of [0, 10)
SELECT seq, op, window_start, window_end, count
  FROM streamforge.finish('fin_r') ORDER BY seq;
SELECT seq, op, window_start, count FROM streamforge.changelog
 WHERE pipeline = 'fin_r' ORDER BY seq;
SELECT window_start, count, final FROM streamforge.results
 WHERE pipeline = 'fin_r' ORDER BY window_start;

-- ----------------------------------------------------------------
-- Emit 'final', an idle partition, a measures pipeline
-- ----------------------------------------------------------------
\c -
\set VERBOSITY default
-- 'final': one final row per bucket, nothing else.  b is idle: the
-- watermark is a's 12 and the session [1, 5) is final already; finish
-- reactivates b (first, so the watermark still jumps once) and finalizes
-- the rest
SELECT streamforge.create_pipeline('fin_f', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('w', 10), streamforge.session('s', 4)],
    lateness => 2, emit => 'final');
SELECT count(*) FROM streamforge.ingest('fin_f', 'a', 0, 'e1', 'k', 1, 1);
SELECT count(*) FROM streamforge.ingest('fin_f', 'a', 1, 'e2', 'k', 11, 1);
SELECT count(*) FROM streamforge.ingest('fin_f', 'b', 0, 'e3', 'k', 13, 1);
SELECT count(*) FROM streamforge.mark_idle('fin_f', 'b');
SELECT seq, op, window_name, window_start, window_end, count
  FROM streamforge.advance('fin_f', 'a', 12) ORDER BY seq;
SELECT seq, op, window_name, window_start, window_end, count
  FROM streamforge.finish('fin_f') ORDER BY seq;
SELECT partition, progress, idle FROM streamforge.partitions('fin_f') ORDER BY 1;
-- a measures pipeline: its final rows, with the declared aggregates
SELECT streamforge.create_pipeline('fin_m', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], emit => 'update+final',
    measures => ARRAY['amount', 'qty'],
    aggregates => ARRAY['count', 'sum(amount)', 'max(qty)']);
SELECT count(*) FROM streamforge.ingest_measures('fin_m', 'p', 0, 'e1', 'k', 1, ARRAY[10, 2]);
SELECT count(*) FROM streamforge.ingest_measures('fin_m', 'p', 1, 'e2', 'k', 25, ARRAY[5, 7]);
SELECT seq, op, window_start, window_end, count FROM streamforge.finish('fin_m') ORDER BY seq;
SELECT count(*) AS visible FROM streamforge.visible_aggregates('fin_m');
SELECT count(*) FROM streamforge.ingest_measures('fin_m', 'p', 2, 'e3', 'k', 2, ARRAY[1, 1]);
SELECT late_seq, event_id FROM streamforge.late_events('fin_m');

-- ----------------------------------------------------------------
-- Timestamps: a finished watermark reads as 'infinity'
-- ----------------------------------------------------------------
\c -
\set VERBOSITY default
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, MDY';
SELECT streamforge.create_pipeline('fin_ts', ARRAY['a'],
    ARRAY[streamforge.fixed_interval('per_minute', interval '1 minute')],
    time_unit => interval '1 second');
SELECT count(*) FROM streamforge.ingest_ts('fin_ts', 'a', 0, 'e1', 'k',
    timestamptz '2026-01-01 10:00:30+00', 1);
SELECT window_start, window_end, count FROM streamforge.finish('fin_ts');
SELECT streamforge.watermark('fin_ts'), streamforge.watermark_ts('fin_ts');
SELECT name, watermark FROM streamforge.pipeline_info_ts WHERE name = 'fin_ts';
SELECT pipeline, watermark, watermark_lag_seconds
  FROM streamforge.metrics WHERE pipeline = 'fin_ts';
SELECT streamforge.units_to_time(9223372036854775807, interval '1 minute') AS max_time,
       streamforge.units_to_time(9223372036854775806, interval '1 microsecond') AS below_max;
SELECT streamforge.units_to_time(9223372036854775806, interval '1 minute');

-- ----------------------------------------------------------------
-- Privileges: finish needs ingest, like advance
-- ----------------------------------------------------------------
\c -
\set VERBOSITY default
CREATE ROLE regress_sf_fin_reader;
CREATE ROLE regress_sf_fin_writer;
GRANT USAGE ON SCHEMA streamforge TO regress_sf_fin_reader, regress_sf_fin_writer;
SELECT streamforge.create_pipeline('fin_priv', ARRAY['a'], ARRAY[streamforge.fixed('w', 10)]);
SELECT streamforge.grant('fin_priv', 'regress_sf_fin_reader', 'read');
SELECT streamforge.grant('fin_priv', 'regress_sf_fin_writer', 'ingest');
SET ROLE regress_sf_fin_reader;
SELECT count(*) FROM streamforge.finish('fin_priv');
SELECT count(*) FROM streamforge.finish('fin_nonexistent');
SET ROLE regress_sf_fin_writer;
SELECT count(*) FROM streamforge.finish('fin_priv');
RESET ROLE;
SELECT streamforge.watermark('fin_priv');
SELECT count(*) FROM streamforge.finish(NULL);

-- ----------------------------------------------------------------
-- An aggregate made by create_aggregate: finish its pipeline;
-- idle_timeout as create_aggregate's argument
-- ----------------------------------------------------------------
\c -
\set VERBOSITY default
SET client_min_messages = warning;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, MDY';
CREATE TABLE fin_clicks (id bigint PRIMARY KEY, page text NOT NULL,
                         clicked_at timestamptz(0) NOT NULL);
SELECT streamforge.create_aggregate('fin_pages', $$
    SELECT page, count(*) AS clicks
      FROM fin_clicks
     GROUP BY page, streamforge.tumble(clicked_at, interval '1 minute')
$$, lateness => interval '30 seconds', emit => 'final',
    idle_timeout => interval '5 minutes');
SELECT streamforge.definition('fin_pages') -> 'idle_timeout' AS idle_timeout,
       streamforge.time_unit('fin_pages') AS time_unit;
INSERT INTO fin_clicks VALUES
    (1, '/home', '2026-01-01 10:00:05+00'),
    (2, '/home', '2026-01-01 10:00:50+00'),
    (3, '/cart', '2026-01-01 10:01:10+00');
-- nothing is final before the end of the input
SELECT count(*) FROM fin_pages;
SELECT op, key, window_start, window_end, count FROM streamforge.finish('fin_pages')
 ORDER BY window_start, key;
SELECT page, window_start, window_end, clicks, final FROM fin_pages
 ORDER BY window_start, page;
-- a row inserted after the end is a late event
INSERT INTO fin_clicks VALUES (4, '/home', '2026-01-01 10:02:00+00');
SELECT late_seq, page, event_time, watermark FROM fin_pages_late;
SELECT count(*) FROM fin_pages;
-- idle_timeout is checked as create_pipeline checks it, and nothing is made
\set VERBOSITY terse
SELECT streamforge.create_aggregate('fin_pages_bad', $$
    SELECT page, count(*) AS clicks FROM fin_clicks
     GROUP BY page, streamforge.tumble(clicked_at, interval '1 minute')
$$, idle_timeout => interval '0 seconds');
\set VERBOSITY default
SELECT count(*) FROM streamforge.pipeline_info WHERE name = 'fin_pages_bad';
-- without it: none, as before
SELECT streamforge.create_aggregate('fin_pages_plain', $$
    SELECT page, count(*) AS clicks FROM fin_clicks
     GROUP BY page, streamforge.tumble(clicked_at, interval '1 minute')
$$);
SELECT streamforge.definition('fin_pages_plain') ? 'idle_timeout' AS has_idle_timeout;
SELECT streamforge.drop_aggregate('fin_pages_plain');
SELECT streamforge.drop_aggregate('fin_pages');
DROP TABLE fin_clicks;
RESET client_min_messages;

-- clean up
SELECT streamforge.drop_pipeline(p)
  FROM unnest(ARRAY['fin_u', 'fin_by_hand', 'fin_u_copy', 'fin_r', 'fin_f',
                    'fin_m', 'fin_ts', 'fin_priv']) AS p;
REVOKE USAGE ON SCHEMA streamforge FROM regress_sf_fin_reader, regress_sf_fin_writer;
DROP ROLE regress_sf_fin_reader;
DROP ROLE regress_sf_fin_writer;
