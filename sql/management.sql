-- management: changing a running pipeline (docs/management.md).  Each
-- change keeps the state, returns the changes it causes, and needs admin.
\set VERBOSITY default
SELECT streamforge.create_pipeline('m', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)], 0);
SELECT count(*) FROM streamforge.ingest('m', 'p', 0, 'a', 'k', 3, 5);
SELECT * FROM streamforge.advance('m', 'p', 10);
SELECT streamforge.checkpoint('m') AS before_change \gset

-- add a partition: it starts idle, so the watermark stays at 10
SELECT * FROM streamforge.add_partition('m', 'q');
SELECT * FROM streamforge.partitions('m');
SELECT streamforge.watermark('m');
-- events on it are accepted (events never reactivate a partition)
SELECT * FROM streamforge.ingest('m', 'q', 0, 'b', 'k', 12, 7);
-- p moves on, q is still idle: the watermark follows p alone
SELECT * FROM streamforge.advance('m', 'p', 20);
-- q reports 15 for the first time: from now on it holds the watermark
-- back, but the watermark (20) never goes back
SELECT * FROM streamforge.advance('m', 'q', 15);
SELECT * FROM streamforge.advance('m', 'p', 40);
SELECT streamforge.watermark('m');
SELECT * FROM streamforge.partitions('m');
SELECT * FROM streamforge.advance('m', 'q', 30);
SELECT streamforge.watermark('m');
-- an existing partition name
SELECT * FROM streamforge.add_partition('m', 'q');
SELECT * FROM streamforge.add_partition('m', '');
SELECT * FROM streamforge.add_partition('m', NULL);
-- an unknown partition: the hint names the declared ones
SELECT * FROM streamforge.advance('m', 'r', 1);

-- add a window: it is backfilled from the remembered accepted events (a at
-- 3, b at 12), as if it had existed from the start: [-10, 10), [0, 20) are
-- finalized by now (watermark 30, lateness 0), [10, 30) is ready and
-- upserted
SELECT * FROM streamforge.add_window('m', streamforge.sliding('s', 20, 10));
SELECT * FROM streamforge.live('m');
SELECT * FROM streamforge.ingest('m', 'p', 1, 'c', 'k', 35, 1);
SELECT * FROM streamforge.live('m');
SELECT * FROM streamforge.advance('m', 'q', 40);
-- an existing window name, whatever its definition
SELECT * FROM streamforge.add_window('m', streamforge.fixed('s', 20));
SELECT * FROM streamforge.add_window('m', streamforge.sliding('s', 20, 10));
-- a bad definition gets create_pipeline's errors
SELECT * FROM streamforge.add_window('m', ROW('x', 'fixed', 0, NULL, NULL)::streamforge.window_def);
SELECT * FROM streamforge.add_window('m', ROW('x', 'tumbling', 5, NULL, NULL)::streamforge.window_def);
SELECT * FROM streamforge.add_window('m', NULL);

-- drop a window: its visible rows are retracted, with the next seq
SELECT * FROM streamforge.visible('m');
SELECT * FROM streamforge.drop_window('m', 's');
SELECT * FROM streamforge.visible('m');
SELECT * FROM streamforge.stats('m');
SELECT * FROM streamforge.drop_window('m', 's');
-- dropping the last window is refused
SELECT * FROM streamforge.drop_window('m', 'f');
-- seq continues after the retractions
SELECT * FROM streamforge.ingest('m', 'p', 2, 'd', 'k', 41, 2);
SELECT * FROM streamforge.advance('m', 'p', 50);
SELECT * FROM streamforge.advance('m', 'q', 50);

-- a checkpoint taken before a change is not equivalent any more
SELECT streamforge.restore('m', :'before_change');

-- lateness: lowering it finalizes the ready buckets with
-- watermark > end + lateness at once, without retraction; raising it
-- brings back the buckets the new lateness keeps live
SELECT streamforge.create_pipeline('lt', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)], 100);
SELECT count(*) FROM streamforge.ingest_batch('lt', ARRAY[
    ROW('p', 0, 'a', 'k', 5, 1), ROW('p', 1, 'b', 'k', 15, 2),
    ROW('p', 2, 'c', 'k', 25, 3)]::streamforge.delivery[]);
SELECT * FROM streamforge.advance('lt', 'p', 30);
SELECT * FROM streamforge.visible('lt');
SELECT * FROM streamforge.set_lateness('lt', 200);
SELECT * FROM streamforge.visible('lt');
-- 30 > 10 + 15 and 30 > 20 + 5, not 30 > 30 + 5: two buckets finalized
SELECT * FROM streamforge.set_lateness('lt', 5);
SELECT * FROM streamforge.visible('lt');
SELECT * FROM streamforge.live('lt');
-- raising it again brings back what the new lateness keeps live, as if it
-- had always been the lateness: [10, 20) (30 <= 20 + 15), not [0, 10)
SELECT * FROM streamforge.set_lateness('lt', 15);
SELECT * FROM streamforge.visible('lt');
SELECT * FROM streamforge.set_lateness('lt', 5);
-- the new lateness decides what is late: 20 + 5 < 30
SELECT * FROM streamforge.ingest('lt', 'p', 3, 'd', 'k', 20, 4);
SELECT late_seq, event_id, watermark FROM streamforge.late_events('lt');
-- a late event is never decided again: with lateness 10, d (20 + 10 = 30)
-- would not have been late
SELECT * FROM streamforge.set_lateness('lt', 10);
SELECT * FROM streamforge.set_lateness('lt', 9);
SELECT * FROM streamforge.set_lateness('lt', 5);
SELECT * FROM streamforge.set_lateness('lt', -1);
SELECT * FROM streamforge.set_lateness('lt', NULL);
-- end + lateness must fit in bigint, as for an event (22003)
SELECT streamforge.create_pipeline('big', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)]);
SELECT count(*) FROM streamforge.ingest('big', 'p', 0, 'a', 'k', 5, 1);
SELECT * FROM streamforge.set_lateness('big', 9223372036854775807);
SELECT * FROM streamforge.set_lateness('big', 9223372036854775797);
SELECT lateness FROM streamforge.pipeline_info WHERE name = 'big';
SELECT streamforge.drop_pipeline('big');
SELECT * FROM streamforge.partitions('lt');

-- each change is transactional
BEGIN;
SELECT * FROM streamforge.add_window('lt', streamforge.session('g', 5));
SELECT * FROM streamforge.add_partition('lt', 'z');
ROLLBACK;
SELECT partitions, windows, lateness FROM streamforge.pipeline_info WHERE name = 'lt';
BEGIN;
SELECT * FROM streamforge.add_window('lt', streamforge.session('g', 5));
SAVEPOINT s;
SELECT * FROM streamforge.drop_window('lt', 'f');
ROLLBACK TO SAVEPOINT s;
COMMIT;
SELECT partitions, windows, lateness FROM streamforge.pipeline_info WHERE name = 'lt';
SELECT * FROM streamforge.ingest('lt', 'p', 4, 'e', 'k', 31, 1);
SELECT * FROM streamforge.live('lt');

-- the new definition persists: a checkpoint restores onto it, and the
-- state survives a new connection (the backend's cache is gone)
SELECT streamforge.restore('lt', streamforge.checkpoint('lt'));
\c
\set VERBOSITY default
SELECT partitions, windows, lateness FROM streamforge.pipeline_info WHERE name = 'lt';
SELECT * FROM streamforge.live('lt');
SELECT * FROM streamforge.stats('lt');

-- unknown pipeline (with similar names the caller may read), unknown window
SELECT * FROM streamforge.add_partition('nope', 'x');
SELECT * FROM streamforge.add_partition('lx', 'x');
SELECT * FROM streamforge.watermark('LT');
SELECT * FROM streamforge.drop_window('lt', 'nope');
SELECT * FROM streamforge.set_lateness(NULL, 1);
-- the pipeline is checked before the arguments, as in write calls
SELECT * FROM streamforge.set_lateness('nope', -1);
SELECT * FROM streamforge.add_window('nope', ROW('x', 'fixed', 0, NULL, NULL)::streamforge.window_def);

-- admin only; an ingester gets 42501 before anything else is looked at
CREATE ROLE sf_mgmt_reader;
GRANT USAGE ON SCHEMA streamforge TO sf_mgmt_reader;
SELECT streamforge.grant_privilege('lt', 'sf_mgmt_reader', 'ingest');
SELECT * FROM streamforge.watermark('mx');
SET ROLE sf_mgmt_reader;
SELECT * FROM streamforge.set_lateness('lt', 1);
SELECT * FROM streamforge.add_partition('lt', 'x');
SELECT * FROM streamforge.add_partition('lt', NULL);
-- the hint names only pipelines the role may read: not m
SELECT * FROM streamforge.watermark('mx');
SELECT name, partitions, windows, lateness FROM streamforge.pipeline_info;
RESET ROLE;

-- the outputs receive the retractions of a dropped window
SELECT streamforge.create_pipeline('mo', ARRAY['p'], ARRAY[streamforge.fixed('a', 10), streamforge.fixed('b', 5)]);
SELECT streamforge.configure_outputs('mo');
SELECT count(*) FROM streamforge.ingest('mo', 'p', 0, 'x', 'k', 1, 1);
SELECT * FROM streamforge.advance('mo', 'p', 5);
SELECT * FROM streamforge.drop_window('mo', 'b');
SELECT seq, op, window_name, key, window_start FROM streamforge.changelog WHERE pipeline = 'mo' ORDER BY seq;
SELECT window_name, key, window_start, seq FROM streamforge.results WHERE pipeline = 'mo' ORDER BY 1, 2;
-- a new window's ready rows reach the outputs too
SELECT * FROM streamforge.add_window('mo', streamforge.fixed('c', 5));
SELECT window_name, key, window_start, seq FROM streamforge.results WHERE pipeline = 'mo' ORDER BY 1, 2;
SELECT streamforge.drop_pipeline('mo');
SELECT streamforge.drop_pipeline('m');
SELECT streamforge.drop_pipeline('lt');
REVOKE USAGE ON SCHEMA streamforge FROM sf_mgmt_reader;
DROP ROLE sf_mgmt_reader;

-- ------------------------------------------------------------------------
-- What a definition change keeps; the time unit create_pipeline accepts
-- ------------------------------------------------------------------------
-- what a definition change keeps, and the time unit
-- create_pipeline accepts (issue 24).
\c -
\set VERBOSITY default

-- 1. Definition changes (add_window, drop_window, add_partition,
-- set_lateness, set_retention) rebuild the pipeline but keep every counter
-- of stats() that is not about windows: deliveries, accepted, duplicates,
-- late events, offset replays, and what is remembered and forgotten; also
-- in a new connection, which loads the snapshot the change wrote.
SELECT streamforge.create_pipeline('sd', ARRAY['p', 'q'],
    ARRAY[streamforge.fixed('f', 10)], lateness => 5);
SELECT count(*) FROM streamforge.ingest_batch('sd', ARRAY[
    ROW('p', 0, 'e0', 'k', 1, 1)::streamforge.delivery,
    ROW('p', 1, 'e1', 'k', 12, 2)::streamforge.delivery,
    ROW('p', 0, 'e0', 'k', 1, 1)::streamforge.delivery,      -- replay
    ROW('p', 1, 'e1', 'k', 12, 2)::streamforge.delivery,     -- replay
    ROW('q', 0, 'e1', 'k', 12, 2)::streamforge.delivery,     -- duplicate
    ROW('q', 1, 'e2', 'j', 25, 3)::streamforge.delivery]);
SELECT count(*) FROM streamforge.advance('sd', 'p', 40);
SELECT count(*) FROM streamforge.advance('sd', 'q', 40);
SELECT count(*) FROM streamforge.ingest('sd', 'p', 2, 'late', 'k', 3, 4);
SELECT count(*) FROM streamforge.ingest('sd', 'q', 1, 'e2', 'j', 25, 3);  -- replay
CREATE VIEW sd_counters AS
SELECT deliveries, accepted, duplicate_ids, late_events, offset_replays,
       remembered_identities, remembered_offsets, remembered_late_events,
       forgotten_offsets, forgotten_late_events
  FROM streamforge.stats('sd');
CREATE TABLE sd_steps (step int, what text, counters text);
INSERT INTO sd_steps SELECT 0, 'before', c::text FROM sd_counters c;
SELECT * FROM sd_counters;
SELECT count(*) FROM streamforge.add_window('sd', streamforge.sliding('s', 20, 10));
INSERT INTO sd_steps SELECT 1, 'add_window', c::text FROM sd_counters c;
SELECT count(*) FROM streamforge.add_partition('sd', 'r');
INSERT INTO sd_steps SELECT 2, 'add_partition', c::text FROM sd_counters c;
SELECT count(*) FROM streamforge.drop_window('sd', 'f');
INSERT INTO sd_steps SELECT 3, 'drop_window', c::text FROM sd_counters c;
SELECT count(*) FROM streamforge.set_lateness('sd', 2);
INSERT INTO sd_steps SELECT 4, 'set_lateness lower', c::text FROM sd_counters c;
SELECT count(*) FROM streamforge.set_lateness('sd', 20);
INSERT INTO sd_steps SELECT 5, 'set_lateness higher', c::text FROM sd_counters c;
SELECT count(*) FROM streamforge.set_retention('sd', 1000);
INSERT INTO sd_steps SELECT 6, 'set_retention', c::text FROM sd_counters c;
\c -
INSERT INTO sd_steps SELECT 7, 'new connection', c::text FROM sd_counters c;
SELECT step, what, counters = (SELECT counters FROM sd_steps WHERE step = 0) AS kept
  FROM sd_steps ORDER BY step;
SELECT partitions, idle_partitions FROM streamforge.stats('sd');
-- and the replay counter goes on counting from there
SELECT count(*) FROM streamforge.ingest('sd', 'p', 0, 'e0', 'k', 1, 1);
SELECT offset_replays FROM streamforge.stats('sd');
\c -
SELECT offset_replays FROM streamforge.stats('sd');

-- The same with a retention that has forgotten events and a late row, and
-- still remembers one (the horizon is 40 - 5 - 10 = 25); changes that would
-- need the forgotten history are refused (55000).
SELECT streamforge.create_pipeline('sd_r', ARRAY['p'],
    ARRAY[streamforge.fixed('f', 10), streamforge.fixed('g', 5)],
    lateness => 5, retention => 10);
SELECT count(*) FROM streamforge.ingest_batch('sd_r', ARRAY[
    ROW('p', 0, 'e0', 'k', 1, 1)::streamforge.delivery,
    ROW('p', 1, 'e1', 'k', 2, 1)::streamforge.delivery,
    ROW('p', 1, 'e1', 'k', 2, 1)::streamforge.delivery]);
SELECT count(*) FROM streamforge.advance('sd_r', 'p', 20);
SELECT count(*) FROM streamforge.ingest('sd_r', 'p', 2, 'late', 'k', 3, 1);
SELECT count(*) FROM streamforge.ingest('sd_r', 'p', 3, 'e3', 'k', 30, 1);
SELECT count(*) FROM streamforge.advance('sd_r', 'p', 40);
SELECT count(*) FROM streamforge.ingest('sd_r', 'p', 0, 'other', 'x', 1, 1);  -- forgotten offset: a replay
CREATE VIEW sd_r_counters AS
SELECT deliveries, accepted, duplicate_ids, late_events, offset_replays,
       remembered_identities, remembered_offsets, remembered_late_events,
       forgotten_offsets, forgotten_late_events
  FROM streamforge.stats('sd_r');
CREATE TABLE sd_r_steps (step int, what text, counters text);
INSERT INTO sd_r_steps SELECT 0, 'before', c::text FROM sd_r_counters c;
SELECT * FROM sd_r_counters;
SELECT count(*) FROM streamforge.add_window('sd_r', streamforge.fixed('h', 10));
SELECT count(*) FROM streamforge.set_lateness('sd_r', 6);
SELECT count(*) FROM streamforge.add_partition('sd_r', 'q');
INSERT INTO sd_r_steps SELECT 1, 'add_partition', c::text FROM sd_r_counters c;
SELECT count(*) FROM streamforge.drop_window('sd_r', 'g');
INSERT INTO sd_r_steps SELECT 2, 'drop_window', c::text FROM sd_r_counters c;
SELECT count(*) FROM streamforge.set_lateness('sd_r', 4);
INSERT INTO sd_r_steps SELECT 3, 'set_lateness lower', c::text FROM sd_r_counters c;
SELECT count(*) FROM streamforge.set_retention('sd_r', 8);
INSERT INTO sd_r_steps SELECT 4, 'set_retention lower', c::text FROM sd_r_counters c;
\c -
INSERT INTO sd_r_steps SELECT 5, 'new connection', c::text FROM sd_r_counters c;
SELECT step, what, counters = (SELECT counters FROM sd_r_steps WHERE step = 0) AS kept
  FROM sd_r_steps ORDER BY step;

-- 2. time_unit must be greater than zero (22023), whether or not a window
-- is given as an interval; a zero unit would divide by zero.
SELECT streamforge.create_pipeline('sd_tu', ARRAY['p'],
    ARRAY[streamforge.fixed_interval('m', interval '1 minute')],
    time_unit => interval '0 seconds');
SELECT streamforge.create_pipeline('sd_tu', ARRAY['p'],
    ARRAY[streamforge.fixed('m', 60)], time_unit => interval '0 seconds');
SELECT streamforge.create_pipeline('sd_tu', ARRAY['p'],
    ARRAY[streamforge.fixed_interval('m', interval '1 minute')],
    time_unit => interval '-1 second');
SELECT streamforge.create_pipeline('sd_tu', ARRAY['p'],
    ARRAY[streamforge.fixed('m', 60)], time_unit => interval '-1 second');
-- made of parts that cancel out, or of days less time: the same
SELECT streamforge.create_pipeline('sd_tu', ARRAY['p'],
    ARRAY[streamforge.fixed('m', 60)], time_unit => interval '1 day -24 hours');
SELECT streamforge.create_pipeline('sd_tu', ARRAY['p'],
    ARRAY[streamforge.fixed('m', 60)], time_unit => interval '1 day -25 hours');
\set VERBOSITY sqlstate
SELECT streamforge.create_pipeline('sd_tu', ARRAY['p'],
    ARRAY[streamforge.fixed_interval('m', interval '1 minute')],
    time_unit => interval '0 seconds');
SELECT streamforge.create_pipeline('sd_tu', ARRAY['p'],
    ARRAY[streamforge.fixed('m', 60)], time_unit => interval '-1 second');
\set VERBOSITY default
SELECT count(*) FROM streamforge.pipeline WHERE name = 'sd_tu';
-- the smallest unit there is, one microsecond, is fine
SELECT streamforge.create_pipeline('sd_tu', ARRAY['p'],
    ARRAY[streamforge.fixed_interval('m', interval '1 minute')],
    time_unit => interval '1 microsecond');
SELECT streamforge.time_unit('sd_tu'), w.name, w.size
  FROM streamforge.pipeline p,
       unnest(ARRAY(SELECT jsonb_populate_record(NULL::streamforge.window_def, e)
                      FROM jsonb_array_elements(p.definition -> 'windows') AS e)) w
 WHERE p.name = 'sd_tu';

-- clean up
SELECT count(streamforge.drop_pipeline(name)) FROM unnest(ARRAY['sd', 'sd_r', 'sd_tu']) AS name;

-- ------------------------------------------------------------------------
-- add_partition refuses every partition the pipeline has
-- ------------------------------------------------------------------------
-- add_partition refuses every partition the pipeline
-- has, the first in byte order too (issue 24:
-- scripts/mutants-0.3.tsv: mutant add-partition-dup-first; the tests
-- added the last partition again).
\c -
\set VERBOSITY default
SELECT streamforge.create_pipeline('s4p', ARRAY['b', 'a'], ARRAY[streamforge.fixed('w', 10)]);
\set VERBOSITY terse
SELECT * FROM streamforge.add_partition('s4p', 'a');
SELECT * FROM streamforge.add_partition('s4p', 'b');
\set VERBOSITY default
SELECT * FROM streamforge.add_partition('s4p', 'c');
SELECT partition, consumed_offset FROM streamforge.partitions('s4p') ORDER BY partition;
SELECT streamforge.drop_pipeline('s4p');
