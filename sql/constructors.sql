-- constructors: fixed(), sliding() and session() build window definitions
-- and reject a size, step or gap of 0 or less (22023) and NULLs (22004).
\set VERBOSITY sqlstate
-- valid definitions
SELECT * FROM streamforge.fixed('f', 10);
SELECT * FROM streamforge.sliding('s', 10, 5);
SELECT * FROM streamforge.session('g', 30);
-- a size that is not a multiple of the step is legal
SELECT * FROM streamforge.sliding('s', 10, 4);
-- so is a size smaller than the step
SELECT * FROM streamforge.sliding('s', 3, 5);
-- the smallest and the largest sizes
SELECT * FROM streamforge.fixed('f', 1);
SELECT * FROM streamforge.fixed('f', 9223372036854775807);
SELECT * FROM streamforge.session('g', 1);
-- fixed: size 0 or negative
SELECT streamforge.fixed('f', 0);
SELECT streamforge.fixed('f', -1);
SELECT streamforge.fixed('f', '-9223372036854775808'::bigint);
-- sliding: size or step 0 or negative
SELECT streamforge.sliding('s', 0, 5);
SELECT streamforge.sliding('s', -10, 5);
SELECT streamforge.sliding('s', 10, 0);
SELECT streamforge.sliding('s', 10, -5);
-- session: gap 0 or negative
SELECT streamforge.session('g', 0);
SELECT streamforge.session('g', -30);
-- NULL arguments
SELECT streamforge.fixed(NULL, 10);
SELECT streamforge.fixed('f', NULL);
SELECT streamforge.sliding(NULL, 10, 5);
SELECT streamforge.sliding('s', NULL, 5);
SELECT streamforge.sliding('s', 10, NULL);
SELECT streamforge.session(NULL, 30);
SELECT streamforge.session('g', NULL);
-- a definition with an invalid name is rejected at the latest by
-- create_pipeline(): empty, or longer than 63 bytes
SELECT streamforge.create_pipeline('constructors', ARRAY['p'], ARRAY[streamforge.fixed('', 10)]);
SELECT streamforge.create_pipeline('constructors', ARRAY['p'], ARRAY[streamforge.session(repeat('w', 64), 10)]);
-- 63 bytes is fine; the constructors' results are accepted
SELECT streamforge.create_pipeline('constructors', ARRAY['p'],
    ARRAY[streamforge.fixed(repeat('w', 63), 10),
          streamforge.sliding('s', 3, 5),
          streamforge.session('g', 1)]);
SELECT streamforge.drop_pipeline('constructors');
