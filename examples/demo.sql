-- examples/demo.sql: a small streamforge pipeline, step by step.
--
-- Run by ./scripts/demo.sh in a throwaway cluster; it also runs in any
-- database with psql -f (it creates the extension if needed and replaces a
-- pipeline named "demo").
--
-- The pipeline has two partitions (p0, p1), allowed lateness 5, and three
-- windows over the same events:
--   hop     sliding, size 10, step 5  (every event lands in two buckets)
--   tumble  fixed, size 10
--   visit   session, gap 4            (events closer than 4 merge)
-- Rows come out in address order (window_name, key, window_start,
-- window_end); a window is emitted once the watermark reaches its end.

\set ON_ERROR_STOP 1
\pset null (null)
SET client_min_messages TO warning;
CREATE EXTENSION IF NOT EXISTS streamforge;

DO $$
BEGIN
	PERFORM streamforge.drop_pipeline('demo');
EXCEPTION WHEN undefined_object THEN
	NULL;
END
$$;
RESET client_min_messages;

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
