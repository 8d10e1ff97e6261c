-- Randomized test of emit modes (issue 25 item 1; docs/semantics.md, Emit
-- modes): the operations sfm.gen generates (fixed seeds) run through three
-- pipelines of one scenario, in modes 'update', 'update+final' and
-- 'final'; test/model/emit.sql checks after every operation that the
-- outcomes agree, that 'update+final' is 'update' plus final changes, that
-- 'final' emits only those, and that each final row is the last upsert of
-- its bucket in 'update' mode; at the end, that the final rows are exactly
-- the finalized buckets.  Each block prints how many operations succeeded and how many
-- changes and final rows they made.
\i test/model/model.sql
\i test/model/emit.sql
SET synchronous_commit = off;

-- fixed + sliding + session, lateness 0, keys including the empty key
DO $$ BEGIN
    PERFORM setseed(0.61);
    PERFORM sfm.define('e1', ARRAY['p2', 'P1'],
        '[["fixed","f",7],["sliding","s",10,3],["session","g",4]]', 0,
        ARRAY['a', 'B', '']);
    PERFORM sfm.gen('e1', 400, -200);
END $$;
SELECT * FROM sfm.run_emit('e1', 'random_emit_1');

-- lateness 15: corrections of emitted rows and sessions merging into
-- emitted ones before they are final
DO $$ BEGIN
    PERFORM setseed(0.62);
    PERFORM sfm.define('e2', ARRAY['one', 'two'],
        '[["session","long",10],["session","short",2],["fixed","f25",25],["sliding","s20",20,7]]', 15,
        ARRAY['a', 'b']);
    PERFORM sfm.gen('e2', 400, -300, spread => 30, lag => 12);
END $$;
SELECT * FROM sfm.run_emit('e2', 'random_emit_2');

-- many advances and idle partitions, tiny windows, lateness 2
DO $$ BEGIN
    PERFORM setseed(0.63);
    PERFORM sfm.define('e3', ARRAY['q', 'Q', 'q0'],
        '[["fixed","w",1],["sliding","w b",6,6],["session","W",1]]', 2,
        ARRAY['x', 'X']);
    PERFORM sfm.gen('e3', 400, -50, spread => 6, lag => 4, p_adv => 0.2, p_idle => 0.08);
END $$;
SELECT * FROM sfm.run_emit('e3', 'random_emit_3');

SELECT count(streamforge.drop_pipeline(p.name)) AS dropped
  FROM streamforge.pipelines AS p WHERE p.name LIKE 'random\_emit\_%';
DROP SCHEMA sfm CASCADE;
