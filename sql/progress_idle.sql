--
-- Idle detection by time and who holds the watermark (docs/progress.md,
-- issue 26 items 2 and 3).  The transaction clock is simulated by moving
-- the stored activity back (as the superuser that runs the tests): a
-- decision is taken when a call finds a partition silent for longer than
-- its idle_timeout, and it is journaled as a mark_idle.
--
\set VERBOSITY default
-- who holds the watermark, and the lag behind the fastest partition
SELECT streamforge.create_pipeline('pp', ARRAY['a', 'b', 'c'],
    ARRAY[streamforge.fixed('w', 10)]);
SELECT count(*) FROM streamforge.advance('pp', 'a', 5);
SELECT count(*) FROM streamforge.advance('pp', 'b', 9);
-- c has not reported: it holds the watermark back (there is none)
SELECT partition, progress, idle, holds_watermark, lag
  FROM streamforge.partition_progress('pp');
SELECT count(*) FROM streamforge.advance('pp', 'c', 7);
SELECT partition, progress, idle, holds_watermark, lag
  FROM streamforge.partition_progress('pp');
SELECT count(*) FROM streamforge.mark_idle('pp', 'a');
SELECT partition, progress, idle, holds_watermark, lag
  FROM streamforge.partition_progress('pp');
SELECT count(*) FROM streamforge.advance('pp', 'a', 7);
SELECT partition, holds_watermark FROM streamforge.partition_progress('pp');
-- last delivery and last report: transaction times of committed calls
SELECT count(*) FROM streamforge.ingest('pp', 'b', 0, 'e1', 'k', 12, 1);
SELECT partition, last_delivery IS NOT NULL AS delivered,
       last_report IS NOT NULL AS reported,
       last_report <= now() AS not_in_the_future
  FROM streamforge.partition_progress('pp');

-- idle_timeout
SELECT streamforge.create_pipeline('pi', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('w', 10)], idle_timeout => interval '1 hour');
SELECT streamforge.create_pipeline('pi_twin', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('w', 10)]);
SELECT count(*) FROM streamforge.advance('pi', 'a', 10);
SELECT count(*) FROM streamforge.advance('pi', 'b', 20);
SELECT count(*) FROM streamforge.ingest('pi', 'a', 0, 'e1', 'k', 15, 1);
SELECT count(*) FROM streamforge.advance('pi_twin', 'a', 10);
SELECT count(*) FROM streamforge.advance('pi_twin', 'b', 20);
SELECT count(*) FROM streamforge.ingest('pi_twin', 'a', 0, 'e1', 'k', 15, 1);
-- nothing is due yet
SELECT * FROM streamforge.tick('pi');
-- 'a' was last heard of two hours ago
UPDATE streamforge.partition_activity SET last_delivery = last_delivery - interval '2 hours',
       last_report = last_report - interval '2 hours', since = since - interval '2 hours'
 WHERE partition = 'a'
   AND pipeline_id = (SELECT id FROM streamforge.pipeline WHERE name = 'pi');
\c -
-- the next call marks it idle first: the watermark moves to 20, [10, 20)
-- is emitted, then the call's own changes (none) follow
SELECT seq, op, window_start, window_end, count
  FROM streamforge.ingest('pi', 'b', 0, 'e2', 'k', 25, 1);
SELECT partition, progress, idle FROM streamforge.partitions('pi');
-- the decision is journaled as an explicit mark_idle: the twin that gets
-- one has the same checkpoint, and a new backend replays it without a clock
SELECT seq, op, window_start, window_end, count
  FROM streamforge.mark_idle('pi_twin', 'a');
SELECT count(*) FROM streamforge.ingest('pi_twin', 'b', 0, 'e2', 'k', 25, 1);
SELECT streamforge.checkpoint('pi') = streamforge.checkpoint('pi_twin');
\c -
SELECT partition, progress, idle FROM streamforge.partitions('pi');
SELECT streamforge.checkpoint('pi') = streamforge.checkpoint('pi_twin');
-- a report reactivates it, as today
SELECT count(*) FROM streamforge.advance('pi', 'a', 30);
SELECT partition, progress, idle FROM streamforge.partitions('pi');
-- tick: decisions without any other call ('b' and 'a' silent)
UPDATE streamforge.partition_activity SET last_delivery = last_delivery - interval '2 hours',
       last_report = last_report - interval '2 hours', since = since - interval '2 hours'
 WHERE pipeline_id = (SELECT id FROM streamforge.pipeline WHERE name = 'pi');
\c -
SELECT * FROM streamforge.tick('pi');
SELECT partition, progress, idle FROM streamforge.partitions('pi');
-- a partition that never receives anything is idle idle_timeout after the
-- timeout was set
SELECT streamforge.create_pipeline('pi_quiet', ARRAY['p', 'q'],
    ARRAY[streamforge.fixed('w', 10)]);
SELECT count(*) FROM streamforge.advance('pi_quiet', 'p', 10);
SELECT streamforge.set_idle_timeout('pi_quiet', interval '10 minutes');
SELECT * FROM streamforge.tick('pi_quiet');
UPDATE streamforge.partition_activity SET since = since - interval '11 minutes',
       last_report = last_report - interval '11 minutes'
 WHERE pipeline_id = (SELECT id FROM streamforge.pipeline WHERE name = 'pi_quiet');
\c -
SELECT count(*) FROM streamforge.tick('pi_quiet');
SELECT partition, progress, idle FROM streamforge.partitions('pi_quiet');
-- off: nothing is decided any more
SELECT streamforge.set_idle_timeout('pi_quiet', NULL);
SELECT count(*) FROM streamforge.advance('pi_quiet', 'p', 20);
UPDATE streamforge.partition_activity SET last_report = last_report - interval '1 day'
 WHERE pipeline_id = (SELECT id FROM streamforge.pipeline WHERE name = 'pi_quiet');
\c -
SELECT count(*) FROM streamforge.tick('pi_quiet');
SELECT partition, progress, idle FROM streamforge.partitions('pi_quiet');
-- ingest_json decides too
SELECT streamforge.create_pipeline('pi_json', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('w', 10)], idle_timeout => interval '1 hour');
SELECT count(*) FROM streamforge.advance('pi_json', 'a', 10);
SELECT count(*) FROM streamforge.advance('pi_json', 'b', 20);
SELECT count(*) FROM streamforge.ingest('pi_json', 'b', 0, 'j1', 'k', 15, 1);
UPDATE streamforge.partition_activity SET last_report = last_report - interval '2 hours',
       since = since - interval '2 hours'
 WHERE partition = 'a'
   AND pipeline_id = (SELECT id FROM streamforge.pipeline WHERE name = 'pi_json');
\c -
SELECT seq, op, window_start, window_end, count FROM streamforge.ingest_json('pi_json',
    '[{"partition": "b", "source_offset": 1, "event_id": "j2", "key": "k", "event_time": 30, "value": 1}]');
SELECT partition, progress, idle FROM streamforge.partitions('pi_json');
-- errors
SELECT streamforge.set_idle_timeout('pi', interval '0 seconds');
SELECT streamforge.set_idle_timeout('pi', interval '-1 second');
SELECT streamforge.set_idle_timeout('pi', interval '1 month');
SELECT streamforge.tick('missing');
SELECT streamforge.partition_progress('missing');
-- dropping the pipeline drops its activity
SELECT streamforge.drop_pipeline('pi');
SELECT count(*) FROM streamforge.partition_activity a
 WHERE NOT EXISTS (SELECT 1 FROM streamforge.pipeline p WHERE p.id = a.pipeline_id);

-- ------------------------------------------------------------------------
-- Idle decisions reach the outputs; timeouts in one session; holds_watermark
-- ------------------------------------------------------------------------
-- Idle detection by time (docs/progress.md, "Idle detection by time",
-- "Who holds the watermark"), issue 40 items 1-3:
--  1. the changes an idle_timeout decision causes, in tick() or at the
--     start of a write call, "go to the outputs": results and changelog
--     hold them, not only the call's returned rows;
--  2. in one session, a set_idle_timeout after a tick under a long timeout
--     takes effect, and a partition reactivated after every partition went
--     idle times out again (real time: a 1 second timeout, short sleeps);
--  3. holds_watermark is false for an idle partition, whatever its
--     progress; ties all hold; edges of bigint.
-- The transaction clock is simulated, as in progress_idle, by moving the
-- stored activity back (as the superuser that runs the tests) and a new
-- session (a backend remembers when the next decision can be due).
\c -
\set VERBOSITY default
\set VERBOSITY default

-- 1. tick's decisions reach the outputs
SELECT streamforge.create_pipeline('s5i', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('w', 10)], lateness => 20,
    idle_timeout => interval '1 hour');
SELECT streamforge.configure_outputs('s5i');
SELECT count(*) FROM streamforge.advance('s5i', 'a', 1);
SELECT count(*) FROM streamforge.advance('s5i', 'b', 30);
SELECT count(*) FROM streamforge.ingest('s5i', 'b', 0, 'e1', 'k', 3, 7);
SELECT count(*) FROM streamforge.ingest('s5i', 'b', 1, 'e2', 'k', 12, 5);
UPDATE streamforge.partition_activity SET last_delivery = last_delivery - interval '2 hours',
       last_report = last_report - interval '2 hours', since = since - interval '2 hours'
 WHERE partition = 'a'
   AND pipeline_id = (SELECT id FROM streamforge.pipeline WHERE name = 's5i');
\c -
-- 'a' goes idle: the watermark jumps from 1 to 30, [0,10) and [10,20)
-- are emitted
SELECT seq, op, window_start, window_end, count, sum FROM streamforge.tick('s5i');
-- and the outputs have exactly those changes
SELECT seq, op, window_start, window_end, count, sum
  FROM streamforge.changelog WHERE pipeline = 's5i' ORDER BY seq;
SELECT window_start, window_end, count, sum, seq
  FROM streamforge.results WHERE pipeline = 's5i' ORDER BY window_start;
-- 1b. a decision at the start of a write call reaches the outputs too
SELECT count(*) FROM streamforge.advance('s5i', 'a', 30);
SELECT count(*) FROM streamforge.ingest('s5i', 'b', 2, 'e3', 'k', 33, 1);
SELECT count(*) FROM streamforge.advance('s5i', 'b', 50);
UPDATE streamforge.partition_activity SET last_delivery = last_delivery - interval '2 hours',
       last_report = last_report - interval '2 hours', since = since - interval '2 hours'
 WHERE partition = 'a'
   AND pipeline_id = (SELECT id FROM streamforge.pipeline WHERE name = 's5i');
\c -
-- the decision comes first ([30,40) emitted), then the call's own change
SELECT seq, op, window_start, window_end, count, sum
  FROM streamforge.ingest('s5i', 'b', 3, 'e4', 'k', 45, 2);
SELECT seq, op, window_start, window_end, count, sum
  FROM streamforge.changelog WHERE pipeline = 's5i' ORDER BY seq;
SELECT window_start, window_end, count, sum, seq
  FROM streamforge.results WHERE pipeline = 's5i' ORDER BY window_start;
SELECT streamforge.drop_pipeline('s5i');

-- 2. one session throughout: a tick under a long timeout, then a short one
SELECT streamforge.create_pipeline('s5t', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('w', 10)], idle_timeout => interval '1 hour');
SELECT count(*) FROM streamforge.advance('s5t', 'a', 10);
SELECT count(*) FROM streamforge.advance('s5t', 'b', 20);
-- nothing is due for an hour, as this backend now knows
SELECT count(*) FROM streamforge.tick('s5t');
SELECT streamforge.set_idle_timeout('s5t', interval '1 second');
SELECT pg_sleep(1.2);
-- the short timeout applies at once: both partitions are idle
SELECT count(*) FROM streamforge.tick('s5t');
SELECT partition, progress, idle FROM streamforge.partitions('s5t') ORDER BY 1;
-- every partition idle, a check, then 'a' reports again
SELECT count(*) FROM streamforge.tick('s5t');
SELECT count(*) FROM streamforge.advance('s5t', 'a', 25);
SELECT partition, progress, idle FROM streamforge.partitions('s5t') ORDER BY 1;
SELECT pg_sleep(1.2);
-- it times out again
SELECT count(*) FROM streamforge.tick('s5t');
SELECT partition, progress, idle FROM streamforge.partitions('s5t') ORDER BY 1;
SELECT streamforge.drop_pipeline('s5t');

-- 2b. "no delivery and no report for that long": exactly idle_timeout
-- since the last activity is idle, a microsecond less is not (the clock
-- of the check is its transaction's start: the activity is set from it
-- in the same transaction; a new session forgets when a check is due)
SELECT streamforge.create_pipeline('s5x', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('w', 10)], idle_timeout => interval '1 hour');
SELECT count(*) FROM streamforge.advance('s5x', 'a', 10);
SELECT count(*) FROM streamforge.advance('s5x', 'b', 20);
\c -
BEGIN;
UPDATE streamforge.partition_activity
   SET last_delivery = transaction_timestamp() - interval '1 hour' + interval '1 microsecond',
       last_report = transaction_timestamp() - interval '1 hour' + interval '1 microsecond',
       since = transaction_timestamp() - interval '1 hour' + interval '1 microsecond'
 WHERE partition = 'a'
   AND pipeline_id = (SELECT id FROM streamforge.pipeline WHERE name = 's5x');
SELECT count(*) FROM streamforge.tick('s5x');
SELECT partition, idle FROM streamforge.partitions('s5x') ORDER BY 1;
ROLLBACK;
\c -
BEGIN;
UPDATE streamforge.partition_activity
   SET last_delivery = transaction_timestamp() - interval '1 hour',
       last_report = transaction_timestamp() - interval '1 hour',
       since = transaction_timestamp() - interval '1 hour'
 WHERE partition = 'a'
   AND pipeline_id = (SELECT id FROM streamforge.pipeline WHERE name = 's5x');
SELECT count(*) FROM streamforge.tick('s5x');
SELECT partition, idle FROM streamforge.partitions('s5x') ORDER BY 1;
COMMIT;
SELECT streamforge.drop_pipeline('s5x');

-- 3. who holds the watermark: idle partitions never do
SELECT streamforge.create_pipeline('s5h', ARRAY['a', 'b', 'c', 'd'],
    ARRAY[streamforge.fixed('w', 10)]);
SELECT count(*) FROM streamforge.advance('s5h', 'a', 5);
SELECT count(*) FROM streamforge.advance('s5h', 'b', 5);
SELECT count(*) FROM streamforge.advance('s5h', 'c', 9);
-- 'd' has not reported: only it holds
SELECT partition, progress, idle, holds_watermark, lag
  FROM streamforge.partition_progress('s5h') ORDER BY 1;
-- 'd' idle without progress: it does not hold; 'a' and 'b' tie at the minimum
SELECT count(*) FROM streamforge.mark_idle('s5h', 'd');
SELECT partition, progress, idle, holds_watermark, lag
  FROM streamforge.partition_progress('s5h') ORDER BY 1;
SELECT holding_watermark, lag FROM streamforge.pipeline_info WHERE name = 's5h';
-- 'a' idle at the same progress as the minimum: only 'b' holds
SELECT count(*) FROM streamforge.mark_idle('s5h', 'a');
SELECT partition, progress, idle, holds_watermark
  FROM streamforge.partition_progress('s5h') ORDER BY 1;
SELECT holding_watermark FROM streamforge.pipeline_info WHERE name = 's5h';
-- 'b' idle too: 'c' alone; then every partition idle: nobody holds
SELECT count(*) FROM streamforge.mark_idle('s5h', 'b');
SELECT partition, holds_watermark FROM streamforge.partition_progress('s5h') ORDER BY 1;
SELECT count(*) FROM streamforge.mark_idle('s5h', 'c');
SELECT partition, idle, holds_watermark FROM streamforge.partition_progress('s5h') ORDER BY 1;
SELECT holding_watermark FROM streamforge.pipeline_info WHERE name = 's5h';
SELECT streamforge.drop_pipeline('s5h');
-- bigint edges: a partition at the floor holds alone; at the ceiling, a
-- tie holds together, and the lag of the floor overflows to NULL
SELECT streamforge.create_pipeline('s5e', ARRAY['a', 'b', 'c'],
    ARRAY[streamforge.fixed('w', 10)]);
SELECT count(*) FROM streamforge.advance('s5e', 'a', -9223372036854775808);
SELECT count(*) FROM streamforge.advance('s5e', 'b', 9223372036854775807);
SELECT count(*) FROM streamforge.advance('s5e', 'c', 9223372036854775807);
SELECT partition, progress, holds_watermark, lag
  FROM streamforge.partition_progress('s5e') ORDER BY 1;
SELECT count(*) FROM streamforge.mark_idle('s5e', 'a');
SELECT partition, progress, idle, holds_watermark, lag
  FROM streamforge.partition_progress('s5e') ORDER BY 1;
SELECT holding_watermark, lag FROM streamforge.pipeline_info WHERE name = 's5e';
SELECT streamforge.drop_pipeline('s5e');
