--
-- Randomized test: the engine against an independent brute-force model.
--
-- Each scenario generates a deterministic random stream of operations
-- (fixed seed) and runs it through one pipeline and through the model of
-- test/model/model.sql, comparing after every operation the outcome,
-- every change (seq, order, exact retractions, no no-op pairs), and
-- live(), visible(), watermark(), late_events() and partitions().  The
-- first disagreement raises an error naming the operation and showing both
-- sides, so a summary row below means that every check passed.
--
\set ECHO none
\i test/model/model.sql
\set ECHO all
-- the model's tables churn: don't wait for a disk flush at every operation
SET synchronous_commit = off;
\x on

-- Two partitions, fixed + sliding (size not a multiple of step) + session,
-- lateness 0, negative and positive times, keys including the empty key.
DO $$ BEGIN
    PERFORM setseed(0.11);
    PERFORM sfm.define('m1', ARRAY['p2', 'P1'],
        '[["fixed","f",7],["sliding","s",10,3],["session","g",4]]', 0,
        ARRAY['a', 'B', '']);
    PERFORM sfm.gen('m1', 400, -200);
END $$;
CALL sfm.run_model('m1', 'random_model_1');
SELECT * FROM sfm.summary('random_model_1');

-- Three partitions, only negative times, lateness 6 (corrections of
-- emitted rows), sliding with size a multiple of step and size < step.
DO $$ BEGIN
    PERFORM setseed(0.22);
    PERFORM sfm.define('m2', ARRAY['b', '_c', 'A'],
        '[["sliding","m",12,4],["sliding","n",3,5],["session","x",3],["fixed","F",5]]', 6,
        ARRAY['k1', 'k2']);
    PERFORM sfm.gen('m2', 400, -1000);
END $$;
-- (split across two connections: the second half starts from the
-- persisted state)
CALL sfm.run_model('m2', 'random_model_2', 1, 200);
\c -
SET client_min_messages = warning;
SET synchronous_commit = off;
CALL sfm.run_model('m2', 'random_model_2', 201);
SELECT * FROM sfm.summary('random_model_2');

-- Four partitions, many advances and idles, tiny windows (fixed size 1,
-- sliding size == step, session gap 1), lateness 2.
DO $$ BEGIN
    PERFORM setseed(0.33);
    PERFORM sfm.define('m3', ARRAY['q', 'Q', 'q q', 'q0'],
        '[["fixed","w",1],["sliding","w b",6,6],["session","W",1],["sliding","wa",7,2]]', 2,
        ARRAY['x', 'X', '']);
    PERFORM sfm.gen('m3', 400, -50, spread => 6, lag => 4, p_adv => 0.2, p_idle => 0.08);
END $$;
CALL sfm.run_model('m3', 'random_model_3');
SELECT * FROM sfm.summary('random_model_3');

-- Sessions that merge often (wide gap, two keys, very out-of-order times),
-- lateness 15 so that merges and corrections reach emitted rows.
DO $$ BEGIN
    PERFORM setseed(0.44);
    PERFORM sfm.define('m4', ARRAY['one', 'two'],
        '[["session","long",10],["session","short",2],["fixed","f25",25],["sliding","s20",20,7]]', 15,
        ARRAY['a', 'b']);
    PERFORM sfm.gen('m4', 400, -300, spread => 30, lag => 12);
END $$;
-- (split across two connections: the second half starts from the
-- persisted state)
CALL sfm.run_model('m4', 'random_model_4', 1, 200);
\c -
SET client_min_messages = warning;
SET synchronous_commit = off;
CALL sfm.run_model('m4', 'random_model_4', 201);
SELECT * FROM sfm.summary('random_model_4');

-- One key, partitions going idle and coming back often (the watermark
-- holds while none is active), lateness 0.
DO $$ BEGIN
    PERFORM setseed(0.55);
    PERFORM sfm.define('m5', ARRAY['r', 's', 't'],
        '[["fixed","a",4],["session","b",3],["sliding","c",5,2]]', 0,
        ARRAY['k']);
    PERFORM sfm.gen('m5', 400, 10, spread => 8, lag => 6, p_adv => 0.2, p_idle => 0.15);
END $$;
CALL sfm.run_model('m5', 'random_model_5');
SELECT * FROM sfm.summary('random_model_5');

\x off
SELECT streamforge.drop_pipeline(p)
  FROM unnest(ARRAY['random_model_1', 'random_model_2', 'random_model_3',
                    'random_model_4', 'random_model_5']) AS p;
DROP SCHEMA sfm CASCADE;
