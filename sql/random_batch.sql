--
-- Metamorphic test: ingest_batch behaves exactly like the same ingest calls
-- in array order (docs/semantics.md "Deliveries" and "Exact rules" 5).
--
-- The same generated deliveries go to one pipeline as single calls and to
-- a twin in random batches.  Every batch must return exactly the
-- concatenated changes (seq included) of the single calls; a batch with a
-- failing delivery or a NULL element fails as a whole with the SQLSTATE of
-- its first failing element and leaves the checkpoint bytes unchanged.
-- The whole state of both pipelines is compared after every step.  The
-- first difference raises an error naming the batch and showing both sides.
--
\set ECHO none
\i test/model/model.sql
\i test/model/twins.sql
\set ECHO all
\x on

-- Two partitions, fixed + sliding + session, lateness 3, batches of 1..8.
DO $$ BEGIN
    PERFORM setseed(0.61);
    PERFORM sfm.define('b1', ARRAY['p', 'P'],
        '[["session","g",5],["fixed","f",6],["sliding","s",9,4]]', 3,
        ARRAY['a', 'b', 'A']);
    PERFORM sfm.gen('b1', 700, -100);
END $$;
SELECT * FROM sfm.run_batch('b1', 'random_batch_1_single', 'random_batch_1_batch', 8);

-- Three partitions, sessions merging often, lateness 0, batches of 1..40.
DO $$ BEGIN
    PERFORM setseed(0.62);
    PERFORM sfm.define('b2', ARRAY['x', 'y', 'z'],
        '[["session","wide",9],["sliding","tiny",2,7],["fixed","neg",10]]', 0,
        ARRAY['k', '']);
    PERFORM sfm.gen('b2', 700, -400, spread => 25, lag => 5, p_adv => 0.06, p_idle => 0.02);
END $$;
SELECT * FROM sfm.run_batch('b2', 'random_batch_2_single', 'random_batch_2_batch', 40);

-- After reconnecting, both pipelines of each pair reload their persisted
-- state: it must agree, and replaying every operation must give the same
-- outcomes (replays, conflicts) on both.
\c -
SET client_min_messages = warning;
SELECT * FROM sfm.replay_pair('b1', 'random_batch_1_single', 'random_batch_1_batch');
SELECT * FROM sfm.replay_pair('b2', 'random_batch_2_single', 'random_batch_2_batch');

\x off
SELECT streamforge.drop_pipeline(p)
  FROM unnest(ARRAY['random_batch_1_single', 'random_batch_1_batch',
                    'random_batch_2_single', 'random_batch_2_batch']) AS p;
DROP SCHEMA sfm CASCADE;
