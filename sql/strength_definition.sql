-- strength_definition: what a definition change keeps, and the time unit
-- create_pipeline accepts (issue 24).

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
  FROM streamforge.pipeline p, unnest(p.windows) w WHERE p.name = 'sd_tu';

-- clean up
SELECT count(streamforge.drop_pipeline(name)) FROM unnest(ARRAY['sd', 'sd_r', 'sd_tu']) AS name;
