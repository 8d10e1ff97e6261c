-- bad_inputs: every row of the catalogue in test/bad-inputs.md, run here,
-- with the SQLSTATE it gets.  test/run.d/bad-inputs-sync.sh checks that
-- the rows below and the catalogue's table are the same.  Each statement
-- runs in a subtransaction that is always rolled back, and the pipeline's
-- checkpoint afterwards proves that no bad input changed anything.
\set VERBOSITY sqlstate
CREATE FUNCTION pg_temp.outcome(stmt text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    BEGIN
        EXECUTE stmt;
        RAISE EXCEPTION USING ERRCODE = 'SFOK0';
    EXCEPTION WHEN OTHERS THEN
        RETURN CASE WHEN SQLSTATE = 'SFOK0' THEN '00000' ELSE SQLSTATE END;
    END;
END
$$;
SELECT streamforge.create_pipeline('bad', ARRAY['p', 'q'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 10, 5),
          streamforge.session('g', 5)], 5);
SELECT count(*) FROM streamforge.ingest('bad', 'p', 0, 'e0', 'k', 1, 1);
SELECT count(*) FROM streamforge.ingest('bad', 'q', 0, 'e1', 'k', 12, 2);
SELECT count(*) FROM streamforge.advance('bad', 'p', 20);
SELECT count(*) FROM streamforge.advance('bad', 'q', 20);
SELECT streamforge.checkpoint('bad') AS good_checkpoint \gset
-- a checkpoint taken under the default limits, for rows 96 and 97
CREATE TEMP TABLE bad_checkpoint AS SELECT streamforge.checkpoint('bad') AS cp;
CREATE TEMP TABLE catalogue (id int, input text, stmt text, expected text);
INSERT INTO catalogue VALUES
(1, 'create_pipeline: NULL name', $$SELECT streamforge.create_pipeline(NULL, ARRAY['p'], ARRAY[streamforge.fixed('f', 10)])$$, '22004'),
(2, 'create_pipeline: empty name', $$SELECT streamforge.create_pipeline('', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)])$$, '22023'),
(3, 'create_pipeline: name of 64 bytes', $$SELECT streamforge.create_pipeline(repeat('n', 64), ARRAY['p'], ARRAY[streamforge.fixed('f', 10)])$$, '22023'),
(4, 'create_pipeline: name of 64 bytes in 32 two-byte characters', $$SELECT streamforge.create_pipeline(repeat('é', 32), ARRAY['p'], ARRAY[streamforge.fixed('f', 10)])$$, '22023'),
(5, 'create_pipeline: existing name', $$SELECT streamforge.create_pipeline('bad', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)])$$, '42710'),
(6, 'create_pipeline: NULL partitions', $$SELECT streamforge.create_pipeline('b2', NULL, ARRAY[streamforge.fixed('f', 10)])$$, '22004'),
(7, 'create_pipeline: NULL partition name', $$SELECT streamforge.create_pipeline('b2', ARRAY['p', NULL], ARRAY[streamforge.fixed('f', 10)])$$, '22004'),
(8, 'create_pipeline: no partitions', $$SELECT streamforge.create_pipeline('b2', ARRAY[]::text[], ARRAY[streamforge.fixed('f', 10)])$$, '22023'),
(9, 'create_pipeline: duplicate partitions', $$SELECT streamforge.create_pipeline('b2', ARRAY['p', 'p'], ARRAY[streamforge.fixed('f', 10)])$$, '22023'),
(10, 'create_pipeline: empty partition name', $$SELECT streamforge.create_pipeline('b2', ARRAY[''], ARRAY[streamforge.fixed('f', 10)])$$, '22023'),
(11, 'create_pipeline: partition name of 64 bytes', $$SELECT streamforge.create_pipeline('b2', ARRAY[repeat('p', 64)], ARRAY[streamforge.fixed('f', 10)])$$, '22023'),
(12, 'create_pipeline: partitions as a 2-D array (flattened, accepted)', $$SELECT streamforge.create_pipeline('b2', ARRAY[['p'], ['q']], ARRAY[streamforge.fixed('f', 10)])$$, '00000'),
(13, 'create_pipeline: NULL windows', $$SELECT streamforge.create_pipeline('b2', ARRAY['p'], NULL)$$, '22004'),
(14, 'create_pipeline: NULL window', $$SELECT streamforge.create_pipeline('b2', ARRAY['p'], ARRAY[NULL::streamforge.window_def])$$, '22004'),
(15, 'create_pipeline: no windows', $$SELECT streamforge.create_pipeline('b2', ARRAY['p'], ARRAY[]::streamforge.window_def[])$$, '22023'),
(16, 'create_pipeline: duplicate window names', $$SELECT streamforge.create_pipeline('b2', ARRAY['p'], ARRAY[streamforge.fixed('f', 10), streamforge.session('f', 5)])$$, '22023'),
(17, 'create_pipeline: negative lateness', $$SELECT streamforge.create_pipeline('b2', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)], -1)$$, '22023'),
(18, 'create_pipeline: NULL lateness', $$SELECT streamforge.create_pipeline('b2', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)], NULL)$$, '22004'),
(19, 'create_pipeline: hand-made window of unknown kind', $$SELECT streamforge.create_pipeline('b2', ARRAY['p'], ARRAY['(w,weird,1,,)'::streamforge.window_def])$$, '22023'),
(20, 'create_pipeline: hand-made window without kind', $$SELECT streamforge.create_pipeline('b2', ARRAY['p'], ARRAY['(w,,1,,)'::streamforge.window_def])$$, '22004'),
(21, 'create_pipeline: hand-made fixed window with a step', $$SELECT streamforge.create_pipeline('b2', ARRAY['p'], ARRAY['(w,fixed,10,2,)'::streamforge.window_def])$$, '22023'),
(22, 'create_pipeline: hand-made fixed window of negative size', $$SELECT streamforge.create_pipeline('b2', ARRAY['p'], ARRAY['(w,fixed,-1,,)'::streamforge.window_def])$$, '22023'),
(23, 'create_pipeline: hand-made session window without gap', $$SELECT streamforge.create_pipeline('b2', ARRAY['p'], ARRAY['(w,session,,,)'::streamforge.window_def])$$, '22004'),
(24, 'fixed: size 0', $$SELECT streamforge.fixed('f', 0)$$, '22023'),
(25, 'fixed: NULL size', $$SELECT streamforge.fixed('f', NULL)$$, '22004'),
(26, 'fixed: NULL name', $$SELECT streamforge.fixed(NULL, 10)$$, '22004'),
(27, 'fixed: name of 64 bytes', $$SELECT streamforge.fixed(repeat('w', 64), 10)$$, '22023'),
(28, 'sliding: step 0', $$SELECT streamforge.sliding('s', 10, 0)$$, '22023'),
(29, 'sliding: negative size', $$SELECT streamforge.sliding('s', -10, 5)$$, '22023'),
(30, 'sliding: over 100000 buckets per event', $$SELECT streamforge.sliding('s', 1000000, 1)$$, '22023'),
(31, 'session: gap -1', $$SELECT streamforge.session('g', -1)$$, '22023'),
(32, 'window_def: too many fields', $$SELECT ROW('a', 'b', 1, 2, 3, 4)::streamforge.window_def$$, '42846'),
(33, 'ingest: unknown pipeline', $$SELECT * FROM streamforge.ingest('nope', 'p', 1, 'x', 'k', 1, 1)$$, '42704'),
(34, 'ingest: NULL pipeline', $$SELECT * FROM streamforge.ingest(NULL, 'p', 1, 'x', 'k', 1, 1)$$, '22004'),
(35, 'ingest: empty pipeline name', $$SELECT * FROM streamforge.ingest('', 'p', 1, 'x', 'k', 1, 1)$$, '42704'),
(36, 'ingest: pipeline name of 10000 bytes', $$SELECT * FROM streamforge.ingest(repeat('n', 10000), 'p', 1, 'x', 'k', 1, 1)$$, '42704'),
(37, 'ingest: pipeline name with quotes and backslashes', $$SELECT * FROM streamforge.ingest('b''a\d"', 'p', 1, 'x', 'k', 1, 1)$$, '42704'),
(38, 'ingest: unknown partition', $$SELECT * FROM streamforge.ingest('bad', 'r', 1, 'x', 'k', 1, 1)$$, '22023'),
(39, 'ingest: NULL partition', $$SELECT * FROM streamforge.ingest('bad', NULL, 1, 'x', 'k', 1, 1)$$, '22004'),
(40, 'ingest: NULL offset', $$SELECT * FROM streamforge.ingest('bad', 'p', NULL, 'x', 'k', 1, 1)$$, '22004'),
(41, 'ingest: NULL event_id', $$SELECT * FROM streamforge.ingest('bad', 'p', 1, NULL, 'k', 1, 1)$$, '22004'),
(42, 'ingest: NULL key', $$SELECT * FROM streamforge.ingest('bad', 'p', 1, 'x', NULL, 1, 1)$$, '22004'),
(43, 'ingest: NULL event_time', $$SELECT * FROM streamforge.ingest('bad', 'p', 1, 'x', 'k', NULL, 1)$$, '22004'),
(44, 'ingest: NULL value', $$SELECT * FROM streamforge.ingest('bad', 'p', 1, 'x', 'k', 1, NULL)$$, '22004'),
(45, 'ingest: empty event_id', $$SELECT * FROM streamforge.ingest('bad', 'p', 1, '', 'k', 1, 1)$$, '22023'),
(46, 'ingest: negative offset', $$SELECT * FROM streamforge.ingest('bad', 'p', -1, 'x', 'k', 1, 1)$$, 'SF001'),
(47, 'ingest: offset gap', $$SELECT * FROM streamforge.ingest('bad', 'p', 5, 'x', 'k', 1, 1)$$, 'SF001'),
(48, 'ingest: another delivery at a consumed offset', $$SELECT * FROM streamforge.ingest('bad', 'p', 0, 'e0', 'k', 1, 2)$$, 'SF001'),
(49, 'ingest: known event_id, other value', $$SELECT * FROM streamforge.ingest('bad', 'p', 1, 'e1', 'k', 12, 3)$$, 'SF002'),
(50, 'ingest: offset beyond bigint (numeric argument)', $$SELECT * FROM streamforge.ingest('bad', 'p', 9223372036854775808, 'x', 'k', 1, 1)$$, '42883'),
(51, 'ingest: event_time + lateness beyond bigint', $$SELECT * FROM streamforge.ingest('bad', 'p', 1, 'x', 'k', 9223372036854775807, 1)$$, '22003'),
(52, 'ingest: window end beyond bigint', $$SELECT * FROM streamforge.ingest('bad', 'p', 1, 'x', 'k', 9223372036854775800, 1)$$, '22003'),
(53, 'ingest: sliding start below bigint', $$SELECT * FROM streamforge.ingest('bad_other', 'p', 0, 'x', 'k', -9223372036854775808, 1)$$, '22003'),
(54, 'ingest: text with a NUL byte', $$SELECT * FROM streamforge.ingest('bad', 'p', 1, E'x\000', 'k', 1, 1)$$, '22021'),
(55, 'ingest: key that is not valid UTF-8', $$SELECT * FROM streamforge.ingest('bad', 'p', 1, 'x', convert_from('\xff'::bytea, 'UTF8'), 1, 1)$$, '22021'),
(56, 'ingest_batch: NULL array', $$SELECT * FROM streamforge.ingest_batch('bad', NULL)$$, '22004'),
(57, 'ingest_batch: NULL delivery', $$SELECT * FROM streamforge.ingest_batch('bad', ARRAY[NULL::streamforge.delivery])$$, '22004'),
(58, 'ingest_batch: delivery with a NULL field', $$SELECT * FROM streamforge.ingest_batch('bad', ARRAY[ROW('p', 1, 'x', NULL, 1, 1)]::streamforge.delivery[])$$, '22004'),
(59, 'ingest_batch: good delivery, then a conflict', $$SELECT * FROM streamforge.ingest_batch('bad', ARRAY[ROW('p', 1, 'x', 'k', 13, 1), ROW('p', 2, 'e1', 'k', 0, 0)]::streamforge.delivery[])$$, 'SF002'),
(60, 'ingest_batch: unknown partition after good deliveries', $$SELECT * FROM streamforge.ingest_batch('bad', ARRAY[ROW('p', 1, 'x', 'k', 13, 1), ROW('z', 0, 'y', 'k', 13, 1)]::streamforge.delivery[])$$, '22023'),
(61, 'ingest_batch: text that is not a delivery', $$SELECT * FROM streamforge.ingest_batch('bad', '{"(p,1,x)"}')$$, '22P02'),
(62, 'ingest_batch: unknown pipeline', $$SELECT * FROM streamforge.ingest_batch('nope', ARRAY[]::streamforge.delivery[])$$, '42704'),
(63, 'advance: unknown partition', $$SELECT * FROM streamforge.advance('bad', 'r', 100)$$, '22023'),
(64, 'advance: NULL progress', $$SELECT * FROM streamforge.advance('bad', 'p', NULL)$$, '22004'),
(65, 'advance: NULL partition', $$SELECT * FROM streamforge.advance('bad', NULL, 100)$$, '22004'),
(66, 'mark_idle: unknown partition', $$SELECT * FROM streamforge.mark_idle('bad', 'r')$$, '22023'),
(67, 'mark_idle: unknown pipeline', $$SELECT * FROM streamforge.mark_idle('nope', 'p')$$, '42704'),
(68, 'restore: NULL checkpoint', $$SELECT streamforge.restore('bad', NULL)$$, '22004'),
(69, 'restore: empty checkpoint', $$SELECT streamforge.restore('bad', '\x')$$, 'SF003'),
(70, 'restore: random bytes', $$SELECT streamforge.restore('bad', decode(repeat('deadbeef', 100), 'hex'))$$, 'SF003'),
(71, 'restore: truncated checkpoint', $$SELECT streamforge.restore('bad', substring(streamforge.checkpoint('bad') FROM 1 FOR 40))$$, 'SF003'),
(72, 'restore: checkpoint with a byte flipped', $$SELECT streamforge.restore('bad', set_byte(streamforge.checkpoint('bad'), 30, get_byte(streamforge.checkpoint('bad'), 30) # 1))$$, 'SF003'),
(73, 'restore: checkpoint with 1 MB appended', $$SELECT streamforge.restore('bad', streamforge.checkpoint('bad') || decode(repeat('00', 1048576), 'hex'))$$, 'SF003'),
(74, 'restore: checkpoint of a pipeline defined differently', $$SELECT streamforge.restore('bad', streamforge.checkpoint('bad_other'))$$, 'SF003'),
(75, 'restore: unknown pipeline', $$SELECT streamforge.restore('nope', streamforge.checkpoint('bad'))$$, '42704'),
(76, 'inspect_checkpoint: random bytes', $$SELECT streamforge.inspect_checkpoint('\x00ff00ff')$$, 'SF003'),
(77, 'checkpoint: unknown pipeline', $$SELECT streamforge.checkpoint('nope')$$, '42704'),
(78, 'watermark: NULL pipeline', $$SELECT streamforge.watermark(NULL)$$, '22004'),
(79, 'live: unknown pipeline', $$SELECT * FROM streamforge.live('nope')$$, '42704'),
(80, 'drop_pipeline: unknown pipeline', $$SELECT streamforge.drop_pipeline('nope')$$, '42704'),
(81, 'drop_pipeline: NULL', $$SELECT streamforge.drop_pipeline(NULL)$$, '22004'),
(82, 'grant: unknown role', $$SELECT streamforge.grant('bad', 'regress_sf_no_such_role', 'read')$$, '42704'),
(83, 'grant: unknown privilege', $$SELECT streamforge.grant('bad', 'public', 'write')$$, '22023'),
(84, 'grant: NULL role', $$SELECT streamforge.grant('bad', NULL, 'read')$$, '22004'),
(85, 'grant: unknown pipeline', $$SELECT streamforge.grant('nope', 'public', 'read')$$, '42704'),
(86, 'revoke: NULL privilege', $$SELECT streamforge.revoke('bad', 'public', NULL)$$, '22004'),
(87, 'set_owner: PUBLIC as owner', $$SELECT streamforge.set_owner('bad', 'public')$$, '42704'),
(88, 'has_pipeline_privilege: unknown pipeline', $$SELECT streamforge.has_pipeline_privilege('nope', 'read')$$, '42704'),
(89, 'configure_outputs: unknown pipeline', $$SELECT streamforge.configure_outputs('nope')$$, '42704'),
(90, 'configure_outputs: NULL switch', $$SELECT streamforge.configure_outputs('bad', NULL)$$, '22004'),
(91, 'clock_now: unknown unit', $$SELECT streamforge.clock_now('h')$$, '22023'),
(92, 'advance_to_now: negative delay', $$SELECT * FROM streamforge.advance_to_now('bad', 'p', -1)$$, '22023'),
(93, 'schedule_advance without pg_cron', $$SELECT streamforge.schedule_advance('bad', 'p', '* * * * *')$$, '55000'),
(94, 'create_pipeline: 32768 partitions', $$SELECT streamforge.create_pipeline('b2', (SELECT array_agg('p' || i) FROM generate_series(1, 32768) i), ARRAY[streamforge.fixed('f', 10)])$$, '54000'),
(95, 'create_pipeline: windows putting one event into more than 1000000 buckets', $$SELECT streamforge.create_pipeline('b2', ARRAY['p'], (SELECT array_agg(streamforge.sliding('s' || i, 100000, 1)) FROM generate_series(1, 11) i))$$, '54000'),
(96, 'restore: document larger than streamforge.max_checkpoint_size', $$SELECT streamforge.restore('bad', cp) FROM bad_checkpoint, (SELECT set_config('streamforge.max_checkpoint_size', '1kB', true)) s$$, '54000'),
(97, 'inspect_checkpoint: document larger than streamforge.max_checkpoint_size', $$SELECT streamforge.inspect_checkpoint(cp) FROM bad_checkpoint, (SELECT set_config('streamforge.max_checkpoint_size', '1kB', true)) s$$, '54000'),
(98, 'ingest: unknown pipeline named by 1 MB (the message repeats 64 bytes)', $$SELECT * FROM streamforge.ingest(repeat('n', 1048576), 'p', 1, 'x', 'k', 1, 1)$$, '42704'),
(99, 'ingest: event past streamforge.max_live_buckets', $$SELECT streamforge.ingest('bad', 'p', 1, 'n1', 'k', 30, 1) FROM (SELECT set_config('streamforge.max_live_buckets', '1', true)) s$$, '54000'),
(100, 'ingest: in a read-only transaction', $$SELECT streamforge.ingest('bad', 'p', 1, 'n1', 'k', 30, 1) FROM (SELECT set_config('transaction_read_only', 'on', true)) s$$, '25006'),
(101, 'checkpoint: state larger than streamforge.max_checkpoint_size', $$SELECT streamforge.checkpoint('bad') FROM (SELECT set_config('streamforge.max_checkpoint_size', '1kB', true)) s$$, '54000'),
(150, 'add_partition: existing partition', $$SELECT * FROM streamforge.add_partition('bad', 'p')$$, '22023'),
(151, 'add_partition: NULL partition', $$SELECT * FROM streamforge.add_partition('bad', NULL)$$, '22004'),
(152, 'add_partition: partition name of 64 bytes', $$SELECT * FROM streamforge.add_partition('bad', repeat('x', 64))$$, '22023'),
(153, 'add_partition: unknown pipeline', $$SELECT * FROM streamforge.add_partition('nope', 'x')$$, '42704'),
(154, 'add_window: existing window name', $$SELECT * FROM streamforge.add_window('bad', streamforge.fixed('f', 20))$$, '22023'),
(155, 'add_window: NULL definition', $$SELECT * FROM streamforge.add_window('bad', NULL)$$, '22004'),
(156, 'add_window: window of size 0', $$SELECT * FROM streamforge.add_window('bad', ROW('x', 'fixed', 0, NULL, NULL)::streamforge.window_def)$$, '22023'),
(157, 'drop_window: unknown window', $$SELECT * FROM streamforge.drop_window('bad', 'x')$$, '22023'),
(158, 'drop_window: the last window', $$SELECT * FROM streamforge.drop_window('bad_other', 's')$$, '22023'),
(159, 'drop_window: NULL window name', $$SELECT * FROM streamforge.drop_window('bad', NULL)$$, '22004'),
(160, 'set_lateness: negative', $$SELECT * FROM streamforge.set_lateness('bad', -1)$$, '22023'),
(161, 'set_lateness: NULL', $$SELECT * FROM streamforge.set_lateness('bad', NULL)$$, '22004'),
(162, 'set_lateness: unknown pipeline', $$SELECT * FROM streamforge.set_lateness('nope', 1)$$, '42704'),
(200, 'add_window: interval window, pipeline without a time unit', $$SELECT * FROM streamforge.add_window('bad', streamforge.fixed_interval('x', interval '1 minute'))$$, '22023'),
(201, 'add_window: sliding_interval window, pipeline without a time unit', $$SELECT * FROM streamforge.add_window('bad', streamforge.sliding_interval('x', interval '10 minutes', interval '1 minute'))$$, '22023'),
(202, 'units_to_time: past the range of timestamptz', $$SELECT streamforge.units_to_time(9223372036854775807, interval '1 hour')$$, '22008'),
(203, 'units_to_time: before the range of timestamptz', $$SELECT streamforge.units_to_time(-9223372036854775808, interval '1 second')$$, '22008'),
(204, 'units_to_time: the largest bigint of microseconds (year 294247, accepted)', $$SELECT streamforge.units_to_time(9223372036854775807, interval '1 microsecond')$$, '00000'),
(205, 'watermark: unknown pipeline equal but for case (the hint names it)', $$SELECT streamforge.watermark('BAD')$$, '42704'),
(220, 'attach: the extension''s own table streamforge.journal', $$SELECT streamforge.attach('bad', 'streamforge.journal', 'pos', 'pos::text', 'pos', partition => '''p''')$$, '0A000'),
(221, 'attach: the extension''s own table streamforge.pipeline', $$SELECT streamforge.attach('bad', 'streamforge.pipeline', 'id', 'name', 'id', partition => '''p''')$$, '0A000'),
(240, 'time_to_units: a time whose microseconds do not fit in bigint', $$SELECT streamforge.time_to_units('294270-01-01 00:00:00+00', '1 microsecond')$$, '22003'),
(241, 'time_to_units: the first microsecond past bigint', $$SELECT streamforge.time_to_units('294247-01-10 04:00:54.775808+00', '1 microsecond')$$, '22003'),
(242, 'time_to_units: a far time not a whole number of milliseconds', $$SELECT streamforge.time_to_units('294270-01-01 00:00:00.000616+00', '1 millisecond')$$, '22023'),
(243, 'time_to_units: the last millisecond of timestamptz''s range (accepted)', $$SELECT streamforge.time_to_units('294276-12-31 23:59:59.999+00', '1 millisecond')$$, '00000'),
(260, 'final_rows (internal): NULL pipeline', $$SELECT * FROM streamforge_internal.final_rows(NULL, ARRAY['f'], ARRAY['k'], ARRAY[0], ARRAY[10])$$, '22004'),
(261, 'final_rows (internal): unknown pipeline', $$SELECT * FROM streamforge_internal.final_rows('nope', ARRAY['f'], ARRAY['k'], ARRAY[0], ARRAY[10])$$, '42704'),
(262, 'final_rows (internal): address arrays of different lengths', $$SELECT * FROM streamforge_internal.final_rows('bad', ARRAY['f'], ARRAY['k', 'j'], ARRAY[0], ARRAY[10])$$, '2202E'),
(263, 'final_rows (internal): NULL in an address array', $$SELECT * FROM streamforge_internal.final_rows('bad', ARRAY['f'], ARRAY['k'], ARRAY[NULL::bigint], ARRAY[10])$$, '22004'),
(264, 'final_rows (internal): unknown window, reversed bounds (skipped)', $$SELECT * FROM streamforge_internal.final_rows('bad', ARRAY['nope', 'f'], ARRAY['k', 'k'], ARRAY[0, 9223372036854775807], ARRAY[10, -9223372036854775808])$$, '00000'),
(270, 'create_pipeline: time_unit of 0 seconds, with an interval window', $$SELECT streamforge.create_pipeline('bad_tu', ARRAY['p'], ARRAY[streamforge.fixed_interval('m', interval '1 minute')], time_unit => interval '0 seconds')$$, '22023'),
(271, 'create_pipeline: time_unit of 0 seconds, bigint windows', $$SELECT streamforge.create_pipeline('bad_tu', ARRAY['p'], ARRAY[streamforge.fixed('m', 60)], time_unit => interval '0 seconds')$$, '22023'),
(272, 'create_pipeline: negative time_unit, with an interval window', $$SELECT streamforge.create_pipeline('bad_tu', ARRAY['p'], ARRAY[streamforge.fixed_interval('m', interval '1 minute')], time_unit => interval '-1 second')$$, '22023'),
(273, 'create_pipeline: negative time_unit, bigint windows', $$SELECT streamforge.create_pipeline('bad_tu', ARRAY['p'], ARRAY[streamforge.fixed('m', 60)], time_unit => interval '-1 second')$$, '22023'),
(274, 'append_batch: NULL partition in an event', $$SELECT * FROM streamforge.append_batch('bad', ARRAY[ROW(NULL, 'x', 'k', 1, 1)::streamforge.event])$$, '22004'),
(275, 'ingest_batch: NULL partition in a delivery', $$SELECT * FROM streamforge.ingest_batch('bad', ARRAY[ROW(NULL, 2, 'x', 'k', 1, 1)::streamforge.delivery])$$, '22004');
SELECT streamforge.create_pipeline('bad_other', ARRAY['p'], ARRAY[streamforge.sliding('s', 10, 5)]);
SELECT id, input, expected, pg_temp.outcome(stmt) AS got,
       CASE WHEN pg_temp.outcome(stmt) = expected THEN '' ELSE 'MISMATCH' END AS check
  FROM catalogue ORDER BY id;
-- nothing changed
SELECT streamforge.checkpoint('bad') = :'good_checkpoint'::bytea AS unchanged;
SELECT count(*) AS pipelines FROM streamforge.pipeline WHERE name LIKE 'b%';
SELECT streamforge.drop_pipeline('bad');
SELECT streamforge.drop_pipeline('bad_other');
