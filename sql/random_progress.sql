--
-- Randomized test of built-in progress (docs/progress.md, issue 26):
-- out_of_orderness => N against the same trace with the explicit
-- advance(partition, event_time - N) inserted after each accepted event.
--
-- For each scenario (fixed seed): the model of test/model/model.sql checks
-- the engine on the trace with the explicit advances (run_model), and
-- run_builtin (test/model/progress.sql) runs the plain trace on a pipeline
-- with out_of_orderness (consecutive deliveries sometimes as one
-- ingest_batch) next to one without it that gets the explicit advances,
-- comparing outcomes, changes and every view after every operation.
-- Then the two states must be one checkpoint but for the rule, a restore
-- carries the rule over, and a new backend replays the journal to the same
-- state.  A summary row means every check passed.
--
\set ECHO none
\i test/model/model.sql
\i test/model/progress.sql
\set ECHO all
SET synchronous_commit = off;
\x on

-- Two partitions, fixed + sliding + session, lateness 3, N = 4.
DO $$ BEGIN
    PERFORM setseed(0.26);
    PERFORM sfm.define('o1', ARRAY['p2', 'P1'],
        '[["fixed","f",7],["sliding","s",10,3],["session","g",4]]', 3,
        ARRAY['a', 'B', '']);
    PERFORM sfm.gen('o1', 300, -200, p_adv => 0.04, p_idle => 0.04);
    PERFORM sfm.with_advances('o1', 'o1x', 4);
END $$;
CALL sfm.run_model('o1x', 'rp_model_1');
SELECT * FROM sfm.summary('rp_model_1');
SELECT setseed(0.5);
CALL sfm.run_builtin('o1', 4, 'rp_builtin_1', 'rp_explicit_1', 1, 150);
\c -
SET synchronous_commit = off;
-- (the second half from the persisted state, in a new backend)
SELECT setseed(0.6);
CALL sfm.run_builtin('o1', 4, 'rp_builtin_1', 'rp_explicit_1', 151);
SELECT * FROM sfm.builtin_summary WHERE pl = 'rp_builtin_1';

-- Three partitions, N = 0, lateness 0, many idles: reactivation by events.
DO $$ BEGIN
    PERFORM setseed(0.62);
    PERFORM sfm.define('o2', ARRAY['b', '_c', 'A'],
        '[["fixed","F",5],["session","x",3]]', 0, ARRAY['k1', 'k2']);
    PERFORM sfm.gen('o2', 300, -1000, spread => 6, p_adv => 0.02, p_idle => 0.12);
    PERFORM sfm.with_advances('o2', 'o2x', 0);
END $$;
CALL sfm.run_model('o2x', 'rp_model_2');
SELECT * FROM sfm.summary('rp_model_2');
SELECT setseed(0.7);
CALL sfm.run_builtin('o2', 0, 'rp_builtin_2', 'rp_explicit_2', p_batch => 0.5);
SELECT * FROM sfm.builtin_summary WHERE pl = 'rp_builtin_2';

-- With a retention: N = 2, retention 20.
DO $$ BEGIN
    PERFORM setseed(0.44);
    PERFORM sfm.define('o3', ARRAY['q', 'r'],
        '[["fixed","w",4],["sliding","v",6,2]]', 2, ARRAY['x', 'y'], 20);
    PERFORM sfm.gen('o3', 300, 0, p_adv => 0.03, p_idle => 0.05);
    PERFORM sfm.with_advances('o3', 'o3x', 2);
END $$;
CALL sfm.run_model('o3x', 'rp_model_3');
SELECT * FROM sfm.summary('rp_model_3');
SELECT setseed(0.8);
CALL sfm.run_builtin('o3', 2, 'rp_builtin_3', 'rp_explicit_3');
SELECT * FROM sfm.builtin_summary WHERE pl = 'rp_builtin_3';
\x off

-- The states: one checkpoint document but for the definition's rule
SELECT n, (streamforge.inspect_checkpoint(streamforge.checkpoint('rp_builtin_' || n))
           #- '{definition,out_of_orderness}')
          = streamforge.inspect_checkpoint(streamforge.checkpoint('rp_explicit_' || n))
          AS same_state,
       streamforge.inspect_checkpoint(streamforge.checkpoint('rp_builtin_' || n))
           #> '{definition,out_of_orderness}' AS rule
  FROM generate_series(1, 3) AS n;

-- Restore equivalence: a checkpoint restores into a pipeline with the same
-- rule only, and the restored one goes on like the original
SELECT sfm.create('rp_copy_1', 'o1');
SELECT streamforge.restore('rp_copy_1', streamforge.checkpoint('rp_builtin_1'));
SELECT streamforge.set_out_of_orderness('rp_copy_1', 4);
SELECT streamforge.restore('rp_copy_1', streamforge.checkpoint('rp_builtin_1'));
SELECT streamforge.checkpoint('rp_copy_1') = streamforge.checkpoint('rp_builtin_1');
SELECT (SELECT array_agg(c::text) FROM streamforge.ingest('rp_copy_1', 'P1',
            (SELECT consumed_offset + 1 FROM streamforge.partitions('rp_copy_1')
              WHERE partition = 'P1'), 'new-1', 'a', 1000, 1) AS c)
       IS NOT DISTINCT FROM
       (SELECT array_agg(c::text) FROM streamforge.ingest('rp_builtin_1', 'P1',
            (SELECT consumed_offset + 1 FROM streamforge.partitions('rp_builtin_1')
              WHERE partition = 'P1'), 'new-1', 'a', 1000, 1) AS c) AS same_changes;

-- Deterministic replay: a new backend rebuilds each pipeline from its
-- snapshot and journal, to the same checkpoint
CREATE TABLE before_reconnect AS
    SELECT n, streamforge.checkpoint('rp_builtin_' || n) AS ck
      FROM generate_series(1, 3) AS n;
SELECT count(*) FROM before_reconnect;
\c -
SELECT b.n, b.ck = streamforge.checkpoint('rp_builtin_' || b.n) AS same_after_replay
  FROM before_reconnect b ORDER BY b.n;
