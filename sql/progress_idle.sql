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
