-- examples/demo.sql: streamforge in two parts, step by step.
--
-- Run by ./scripts/demo.sh in a throwaway cluster; it also runs in any
-- database with psql -f (it creates the extension if needed and replaces
-- the table demo_clicks, the aggregate clicks_per_minute and the pipeline
-- demo).  docs/demo.md explains the output; test/t/080_docs.pl runs this
-- file and checks that docs/demo.md shows what it prints.
--
-- Part 1: an aggregate defined by a query over a table with timestamps
-- (create_aggregate): clicks per page per minute, with 30 seconds of
-- allowed lateness; the watermark follows the clicks, 5 seconds behind the
-- latest.  Rows are INSERTed in several statements, one of them late but
-- in time to correct its minute, one too late, one that finalizes a
-- minute.  It ends with the typed view, the late rows and the changelog.
--
-- Part 2: the pipeline API underneath, with bigint times: two partitions
-- (p0, p1), allowed lateness 5, and three windows over the same events:
--   hop     sliding, size 10, step 5  (every event lands in two buckets)
--   tumble  fixed, size 10
--   visit   session, gap 4            (events closer than 4 merge)
-- Rows come out in address order (window_name, key, window_start,
-- window_end); a window is emitted once the watermark reaches its end.

\set ON_ERROR_STOP 1
\pset null (null)
SET client_min_messages TO warning;
SET TimeZone TO 'UTC';
CREATE EXTENSION IF NOT EXISTS streamforge;

DO $$
BEGIN
	PERFORM streamforge.drop_aggregate('clicks_per_minute');
EXCEPTION WHEN undefined_object THEN
	NULL;
END
$$;
DROP TABLE IF EXISTS demo_clicks;
DO $$
BEGIN
	PERFORM streamforge.drop_pipeline('demo');
EXCEPTION WHEN undefined_object THEN
	NULL;
END
$$;
RESET client_min_messages;

\echo '######## Part 1: an aggregate defined by a query, over timestamps ########'
\echo
\echo '== 1. A table of clicks, and the aggregate: clicks per page per minute.'
\echo '==    Every INSERT into demo_clicks feeds it, in the inserting transaction.'
CREATE TABLE demo_clicks (id bigserial PRIMARY KEY, page text NOT NULL,
                          clicked_at timestamptz NOT NULL);
SELECT streamforge.create_aggregate('clicks_per_minute', $$
    SELECT page, count(*) AS clicks
      FROM demo_clicks
     GROUP BY page, streamforge.tumble(clicked_at, interval '1 minute')
$$, lateness => interval '30 seconds', out_of_orderness => interval '5 seconds');
-- keep the changelog and the late output too (the view needs only results)
SELECT streamforge.configure_outputs('clicks_per_minute');

\echo
\echo '== 2. Three clicks in the minute 12:00.  The watermark is 5 seconds'
\echo '==    behind the latest click, 12:00:36: the minute is still open, so it'
\echo '==    is only in clicks_per_minute_live, not in the view.'
INSERT INTO demo_clicks (page, clicked_at) VALUES
    ('/home', '2026-12-01 12:00:05+00'),
    ('/docs', '2026-12-01 12:00:20+00'),
    ('/home', '2026-12-01 12:00:41+00');
SELECT streamforge.watermark_ts('clicks_per_minute') AS watermark;
SELECT page, window_start, clicks FROM clicks_per_minute_live ORDER BY window_start, page;

\echo
\echo '== 3. A click at 12:01:20 moves the watermark to 12:01:15, past the end'
\echo '==    of the minute 12:00: its rows are emitted into the view.'
INSERT INTO demo_clicks (page, clicked_at) VALUES ('/home', '2026-12-01 12:01:20+00');
SELECT page, window_start, clicks, final FROM clicks_per_minute ORDER BY window_start, page;

\echo
\echo '== 4. A late click: 12:00:59 arrives after the watermark passed 12:01,'
\echo '==    but within the 30 seconds of lateness (12:00:59 + 30 s >= 12:01:15).'
\echo '==    It corrects /home at 12:00 from 2 to 3 clicks.'
INSERT INTO demo_clicks (page, clicked_at) VALUES ('/home', '2026-12-01 12:00:59+00');
SELECT page, window_start, clicks, final FROM clicks_per_minute ORDER BY window_start, page;

\echo
\echo '== 5. A click at 12:02:40: the watermark, 12:02:35, passes 12:01 + 30 s,'
\echo '==    so the minute 12:00 is final (no more corrections), and the minute'
\echo '==    12:01 ends before it, so that one is emitted (and final too).'
INSERT INTO demo_clicks (page, clicked_at) VALUES ('/docs', '2026-12-01 12:02:40+00');
SELECT page, window_start, clicks, final FROM clicks_per_minute ORDER BY window_start, page;

\echo
\echo '== 6. A click at 11:59:50 is too late (11:59:50 + 30 s < 12:02:35): it'
\echo '==    changes no window and is set aside in clicks_per_minute_late.'
INSERT INTO demo_clicks (page, clicked_at) VALUES ('/home', '2026-12-01 11:59:50+00');

\echo
\echo '======== What the aggregate holds ========'
\echo
\echo '== The typed view clicks_per_minute: one row per page and minute, with'
\echo '==    window_start and window_end as timestamptz and clicks as bigint.'
SELECT * FROM clicks_per_minute ORDER BY window_start, page;

\echo
\echo '== The late rows, clicks_per_minute_late: the click of step 6 and the'
\echo '==    watermark it missed.'
SELECT late_seq, page, event_time, watermark FROM clicks_per_minute_late ORDER BY late_seq;

\echo
\echo '== The changelog of the aggregate (streamforge.changelog): every change'
\echo '==    in seq order; the late click of step 4 is a retraction of the old'
\echo '==    row and an upsert of the new one (seq 3 and 4).'
SELECT seq, op, (key::text[])[1] AS page,
       to_char(window_start_ts, 'HH24:MI') || '-' || to_char(window_end_ts, 'HH24:MI') AS minute,
       count AS clicks
  FROM streamforge.changelog
 WHERE pipeline = 'clicks_per_minute'
 ORDER BY seq;

\echo
\echo '######## Part 2: the pipeline API underneath, with bigint times ########'
\echo
\echo '== 0. The pipeline: partitions p0 and p1, three windows, lateness 5.'
SELECT streamforge.create_pipeline('demo',
	ARRAY['p0', 'p1'],
	ARRAY[streamforge.fixed('tumble', 10),
		  streamforge.sliding('hop', 10, 5),
		  streamforge.session('visit', 4)],
	lateness => 5);

\echo
\echo '== 1. Four events arrive in one batch.  No partition has reported'
\echo '==    progress, so there is no watermark yet and nothing is emitted.'
SELECT * FROM streamforge.ingest_batch('demo', ARRAY[
	('p0', 0, 'e1', 'a', 1, 10),
	('p0', 1, 'e2', 'a', 3, 20),
	('p1', 0, 'e3', 'b', 4, 5),
	('p1', 1, 'e4', 'a', 12, 7)]::streamforge.delivery[]);

\echo
\echo '== 2. p0 reports progress 12: p1 has not reported, still no watermark.'
SELECT * FROM streamforge.advance('demo', 'p0', 12);
SELECT streamforge.watermark('demo');

\echo
\echo '== 3. p1 reports progress 10: the watermark becomes min(12, 10) = 10 and'
\echo '==    every window ending at or before 10 is emitted.'
SELECT * FROM streamforge.advance('demo', 'p1', 10);
SELECT streamforge.watermark('demo');

\echo
\echo '== 4. e5 (time 6) is behind the watermark but within the lateness'
\echo '==    (6 + 5 >= 10): it is accepted and corrects three emitted rows.'
\echo '==    Retractions of the old values come first, then the upserts; the'
\echo '==    visit session [1,7) grows into [1,10).'
SELECT * FROM streamforge.ingest('demo', 'p0', 2, 'e5', 'a', 6, 1);

\echo
\echo '== 5. e6 (time 2) is too late (2 + 5 < 10): it goes to late_events()'
\echo '==    and touches no window.'
SELECT * FROM streamforge.ingest('demo', 'p1', 2, 'e6', 'b', 2, 100);

\echo
\echo '== 6. A duplicate delivery: e4 again, now at p0 offset 3.  The offset is'
\echo '==    consumed, nothing else changes.'
SELECT * FROM streamforge.ingest('demo', 'p0', 3, 'e4', 'a', 12, 7);

\echo
\echo '== 7. An offset replay: p0 offset 1 again, with the same delivery.  A no-op.'
SELECT * FROM streamforge.ingest('demo', 'p0', 1, 'e2', 'a', 3, 20);

\echo
\echo '== 8. A different delivery at a consumed offset is refused (SQLSTATE SF001)'
\echo '==    and changes nothing.'
DO $$
BEGIN
	PERFORM streamforge.ingest('demo', 'p0', 1, 'e9', 'a', 3, 20);
EXCEPTION WHEN SQLSTATE 'SF001' THEN
	RAISE NOTICE 'refused with SQLSTATE %: %', SQLSTATE, SQLERRM;
END
$$;

\echo
\echo '== 9. p0 moves to 20, but p1 holds the watermark at 10: no change.'
SELECT * FROM streamforge.advance('demo', 'p0', 20);

\echo
\echo '== 10. p1 goes idle: the watermark is now p0 alone, 20.  Four more windows'
\echo '==     are emitted; the windows that ended before 15 (20 > end + 5) are'
\echo '==     final and leave the live state without a retraction.'
SELECT * FROM streamforge.mark_idle('demo', 'p1');
SELECT streamforge.watermark('demo');

\echo
\echo '== Late events:'
SELECT * FROM streamforge.late_events('demo');

\echo
\echo '== Emitted rows still open to correction, visible():'
SELECT * FROM streamforge.visible('demo');

\echo
\echo '== Partitions:'
SELECT * FROM streamforge.partitions('demo');
