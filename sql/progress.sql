--
-- Built-in progress (docs/progress.md, issue 26): out_of_orderness.
--
\set VERBOSITY default
SELECT streamforge.create_pipeline('bp', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('w', 10)], out_of_orderness => 5);
SELECT streamforge.out_of_orderness('bp');
-- an accepted event reports its time - 5 for its partition
SELECT count(*) FROM streamforge.ingest('bp', 'a', 0, 'e1', 'k', 3, 1);
SELECT partition, progress, idle FROM streamforge.partitions('bp') ORDER BY 1;
SELECT * FROM streamforge.advance('bp', 'b', 100);
SELECT streamforge.watermark('bp');
-- the implied advance to 12 passes [0, 10): its upsert is returned by the ingest
SELECT seq, op, window_start, window_end, count
  FROM streamforge.ingest('bp', 'a', 1, 'e2', 'k', 17, 1);
SELECT streamforge.watermark('bp');
-- a late event, a duplicate and a replay report nothing
SELECT count(*) FROM streamforge.ingest('bp', 'a', 2, 'e3', 'k', 6, 1);
SELECT count(*) FROM streamforge.ingest('bp', 'b', 0, 'e2', 'k', 17, 1);
SELECT count(*) FROM streamforge.ingest('bp', 'a', 1, 'e2', 'k', 17, 1);
SELECT partition, progress, idle FROM streamforge.partitions('bp') ORDER BY 1;
-- an explicit advance still only raises; a lower event time does not lower
SELECT count(*) FROM streamforge.advance('bp', 'a', 14);
SELECT count(*) FROM streamforge.ingest('bp', 'a', 3, 'e4', 'k', 15, 1);
SELECT partition, progress FROM streamforge.partitions('bp') ORDER BY 1;
-- like advance, an accepted event reactivates an idle partition (the
-- idle 'a' lets the watermark move to 100: 16 is late and reports nothing,
-- 120 is accepted and reports 115)
SELECT seq, op, window_start, window_end, count
  FROM streamforge.mark_idle('bp', 'a');
SELECT count(*) FROM streamforge.ingest('bp', 'a', 4, 'e5', 'k', 16, 1);
SELECT partition, progress, idle FROM streamforge.partitions('bp') ORDER BY 1;
SELECT count(*) FROM streamforge.ingest('bp', 'a', 5, 'e5b', 'k', 120, 1);
SELECT partition, progress, idle FROM streamforge.partitions('bp') ORDER BY 1;
-- a batch: each delivery's implied advance after it, in array order
-- (x3 is accepted, 12 + 5 >= 15, and reports 12 < 15: nothing; x4
-- reports 25, which emits [10, 20) with x2 and x3, and finalizes [0, 10))
SELECT streamforge.create_pipeline('bp_batch', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], lateness => 5, out_of_orderness => 0);
SELECT seq, op, window_start, window_end, count
  FROM streamforge.ingest_batch('bp_batch', ARRAY[
    ('p', 0, 'x1', 'k', 5, 1), ('p', 1, 'x2', 'k', 15, 1),
    ('p', 2, 'x3', 'k', 12, 1), ('p', 3, 'x4', 'k', 25, 1)]::streamforge.delivery[]);
SELECT partition, progress FROM streamforge.partitions('bp_batch');
-- event_time - N below the bigint minimum reports nothing
SELECT streamforge.create_pipeline('bp_min', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 1)], out_of_orderness => 1);
SELECT count(*) FROM streamforge.ingest('bp_min', 'p', 0, 'm1', 'k',
    -9223372036854775808, 1);
SELECT partition, progress FROM streamforge.partitions('bp_min');

-- the rule is in the checkpoint's definition, and in restore's equivalence
SELECT streamforge.inspect_checkpoint(streamforge.checkpoint('bp'))->'definition';
SELECT streamforge.create_pipeline('bp_plain', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('w', 10)]);
SELECT streamforge.restore('bp_plain', streamforge.checkpoint('bp'));
SELECT streamforge.restore('bp', streamforge.checkpoint('bp_plain'));
SELECT streamforge.create_pipeline('bp_copy', ARRAY['b', 'a'],
    ARRAY[streamforge.fixed('w', 10)], out_of_orderness => 5);
SELECT streamforge.restore('bp_copy', streamforge.checkpoint('bp'));
SELECT streamforge.checkpoint('bp_copy') = streamforge.checkpoint('bp');
-- the restored pipeline applies the rule
SELECT seq, op, window_start, window_end, count
  FROM streamforge.ingest('bp_copy', 'a', 6, 'e6', 'k', 131, 1);
SELECT partition, progress FROM streamforge.partitions('bp_copy') ORDER BY 1;
-- without the rule, no member at all
SELECT streamforge.inspect_checkpoint(streamforge.checkpoint('bp_plain'))->'definition';

-- a new backend replays the journal under the rule
SELECT partition, consumed_offset, progress FROM streamforge.partitions('bp') ORDER BY 1;
\c -
SELECT partition, consumed_offset, progress FROM streamforge.partitions('bp') ORDER BY 1;
SELECT seq, op, window_start, window_end, count
  FROM streamforge.ingest('bp', 'a', 6, 'e6', 'k', 131, 1);
SELECT streamforge.checkpoint('bp_copy') = streamforge.checkpoint('bp');

-- changing the rule: moves nothing by itself; NULL turns it off
SELECT streamforge.set_out_of_orderness('bp', 1);
SELECT partition, progress FROM streamforge.partitions('bp') ORDER BY 1;
SELECT count(*) FROM streamforge.ingest('bp', 'a', 7, 'e7', 'k', 132, 1);
SELECT partition, progress FROM streamforge.partitions('bp') ORDER BY 1;
SELECT streamforge.set_out_of_orderness('bp', NULL);
SELECT streamforge.out_of_orderness('bp');
SELECT count(*) FROM streamforge.ingest('bp', 'a', 8, 'e8', 'k', 140, 1);
SELECT partition, progress FROM streamforge.partitions('bp') ORDER BY 1;
\c -
SELECT streamforge.out_of_orderness('bp');
SELECT partition, consumed_offset, progress FROM streamforge.partitions('bp') ORDER BY 1;

-- with a time unit, an interval
SELECT streamforge.create_pipeline('bp_ts', ARRAY['web'],
    ARRAY[streamforge.fixed_interval('m', interval '1 minute')],
    time_unit => interval '1 millisecond',
    out_of_orderness => streamforge.interval_to_units(interval '5 seconds',
                                                      interval '1 millisecond'));
SELECT streamforge.out_of_orderness('bp_ts');
SELECT streamforge.set_out_of_orderness('bp_ts',
    streamforge.interval_to_units(interval '2 seconds', streamforge.time_unit('bp_ts')));
SELECT streamforge.out_of_orderness('bp_ts');
SELECT count(*) FROM streamforge.ingest_ts('bp_ts', 'web', 0, 'c1', '/home',
    timestamptz '2026-11-30 12:00:05+00', 1);
SELECT streamforge.watermark_ts('bp_ts') AT TIME ZONE 'UTC';

-- errors
SELECT streamforge.create_pipeline('bp_bad', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], out_of_orderness => -1);
SELECT streamforge.set_out_of_orderness('bp_ts',
    streamforge.interval_to_units(interval '1.5 milliseconds', streamforge.time_unit('bp_ts')));
SELECT streamforge.set_out_of_orderness('bp', -3);
SELECT streamforge.set_out_of_orderness('bp_missing', 1);
