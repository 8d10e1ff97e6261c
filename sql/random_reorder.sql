--
-- Metamorphic test: the declaration order of partitions and windows in
-- create_pipeline changes nothing (docs/semantics.md: output is in address order,
-- names compare by bytes).
--
-- Twin 0 is declared in the order given below, the other twins with random
-- permutations of both lists.  After every operation each twin must have
-- returned exactly twin 0's outcome and changes (seq included) and show
-- the same watermark, live(), visible(), late_events() and partitions().
-- Half way each twin restores twin 0's checkpoint (an equivalent
-- definition: same sets, other order), which must leave its state as it
-- is, and processing continues identically.
--
\set ECHO none
\i test/model/model.sql
\i test/model/twins.sql
\set ECHO all
\x on

-- Names whose byte order differs from declaration order and from a
-- case-insensitive order ('B' < '_' < 'a' in bytes).
DO $$ BEGIN
    PERFORM setseed(0.81);
    PERFORM sfm.define('r1', ARRAY['b', 'a', 'B', '_'],
        '[["sliding","b",8,3],["fixed","a",5],["session","B",3],["fixed","_a",2],["session","aa",6]]', 2,
        ARRAY['a', 'B', '_', 'b']);
    PERFORM sfm.gen('r1', 500, -60, p_idle => 0.05);
END $$;
SELECT * FROM sfm.run_twins('r1', 'random_reorder_1', 3);

-- Sessions and sliding windows only, lateness 0, two partitions.
DO $$ BEGIN
    PERFORM setseed(0.82);
    PERFORM sfm.define('r2', ARRAY['zz', 'z'],
        '[["session","s2",2],["sliding","s1",4,4],["session","S",7],["sliding","s",5,2]]', 0,
        ARRAY['x', 'y']);
    PERFORM sfm.gen('r2', 500, -250, spread => 20);
END $$;
SELECT * FROM sfm.run_twins('r2', 'random_reorder_2', 3);

\x off
DROP SCHEMA sfm CASCADE;
