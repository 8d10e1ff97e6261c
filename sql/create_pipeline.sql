-- create_pipeline: the validations of docs/semantics.md "Exact rules" 4 in their order (name,
-- existence, other arguments), drop_pipeline, and the lookup of a pipeline
-- by name in every function (docs/semantics.md "Exact rules" 8).
\set VERBOSITY sqlstate
-- a valid pipeline; partitions come back in byte order, whatever the declaration order
SELECT streamforge.create_pipeline('cp', ARRAY['b', 'a', 'B'], ARRAY[streamforge.fixed('f', 10)]);
SELECT * FROM streamforge.partitions('cp');
-- 1. the name: NULL is 22004, empty or over 63 bytes is 22023
SELECT streamforge.create_pipeline(NULL, ARRAY['p'], ARRAY[streamforge.fixed('f', 10)]);
SELECT streamforge.create_pipeline('', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)]);
SELECT streamforge.create_pipeline(repeat('x', 64), ARRAY['p'], ARRAY[streamforge.fixed('f', 10)]);
-- bytes, not characters: 32 two-byte characters are 64 bytes
SELECT streamforge.create_pipeline(repeat('é', 32), ARRAY['p'], ARRAY[streamforge.fixed('f', 10)]);
-- the name is checked before the other arguments
SELECT streamforge.create_pipeline(NULL, NULL, NULL, NULL);
SELECT streamforge.create_pipeline('', NULL, NULL, NULL);
SELECT streamforge.create_pipeline(repeat('x', 64), ARRAY[]::text[], ARRAY[]::streamforge.window_def[], -1);
-- 2. existence (42710), before the other arguments
SELECT streamforge.create_pipeline('cp', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)]);
SELECT streamforge.create_pipeline('cp', NULL, NULL, NULL);
SELECT streamforge.create_pipeline('cp', ARRAY[]::text[], ARRAY[]::streamforge.window_def[], -1);
-- the failed calls did not touch the existing pipeline
SELECT * FROM streamforge.partitions('cp');
-- 3. the other arguments: NULL arrays or elements (22004)
SELECT streamforge.create_pipeline('cp2', NULL, ARRAY[streamforge.fixed('f', 10)]);
SELECT streamforge.create_pipeline('cp2', ARRAY['p'], NULL);
SELECT streamforge.create_pipeline('cp2', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)], NULL);
SELECT streamforge.create_pipeline('cp2', ARRAY['p', NULL], ARRAY[streamforge.fixed('f', 10)]);
SELECT streamforge.create_pipeline('cp2', ARRAY['p'], ARRAY[streamforge.fixed('f', 10), NULL]);
-- empty lists, duplicate names, invalid names, negative lateness (22023)
SELECT streamforge.create_pipeline('cp2', ARRAY[]::text[], ARRAY[streamforge.fixed('f', 10)]);
SELECT streamforge.create_pipeline('cp2', ARRAY['p'], ARRAY[]::streamforge.window_def[]);
SELECT streamforge.create_pipeline('cp2', ARRAY['p', 'q', 'p'], ARRAY[streamforge.fixed('f', 10)]);
SELECT streamforge.create_pipeline('cp2', ARRAY['p'], ARRAY[streamforge.fixed('w', 10), streamforge.session('w', 5)]);
SELECT streamforge.create_pipeline('cp2', ARRAY['p'], ARRAY[streamforge.fixed('w', 10), streamforge.fixed('w', 10)]);
SELECT streamforge.create_pipeline('cp2', ARRAY[''], ARRAY[streamforge.fixed('f', 10)]);
SELECT streamforge.create_pipeline('cp2', ARRAY[repeat('p', 64)], ARRAY[streamforge.fixed('f', 10)]);
SELECT streamforge.create_pipeline('cp2', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)], -1);
-- none of the failed calls created anything
SELECT * FROM streamforge.partitions('cp2');
-- 63 bytes is the longest name, for pipelines, partitions and windows
SELECT streamforge.create_pipeline(repeat('x', 63), ARRAY[repeat('p', 63)], ARRAY[streamforge.fixed(repeat('w', 63), 10)], 0);
SELECT * FROM streamforge.partitions(repeat('x', 63));
SELECT streamforge.drop_pipeline(repeat('x', 63));
-- names are compared byte for byte: 'CP' is not 'cp'
SELECT streamforge.create_pipeline('CP', ARRAY['p', 'P'], ARRAY[streamforge.fixed('f', 10), streamforge.fixed('F', 10)]);
SELECT * FROM streamforge.partitions('CP');
-- drop_pipeline
SELECT streamforge.drop_pipeline('CP');
SELECT streamforge.drop_pipeline('CP');
SELECT streamforge.drop_pipeline(NULL);
SELECT streamforge.drop_pipeline('');
SELECT streamforge.drop_pipeline(repeat('x', 64));
-- the other pipeline survived
SELECT * FROM streamforge.partitions('cp');
-- a dropped pipeline can be created again, with a fresh state
SELECT * FROM streamforge.ingest('cp', 'a', 0, 'e1', 'k', 1, 1);
SELECT streamforge.drop_pipeline('cp');
SELECT streamforge.create_pipeline('cp', ARRAY['a'], ARRAY[streamforge.fixed('f', 10)]);
SELECT * FROM streamforge.partitions('cp');
-- offset 0 is free again and e1 is unknown: a different value is no conflict
SELECT * FROM streamforge.ingest('cp', 'a', 0, 'e1', 'k', 1, 5);
SELECT * FROM streamforge.live('cp');
SELECT streamforge.drop_pipeline('cp');
-- an unknown pipeline is 42704 in every function
SELECT * FROM streamforge.ingest('nope', 'p', 0, 'e', 'k', 0, 0);
SELECT * FROM streamforge.ingest_batch('nope', ARRAY[ROW('p', 0, 'e', 'k', 0, 0)]::streamforge.delivery[]);
SELECT * FROM streamforge.advance('nope', 'p', 0);
SELECT * FROM streamforge.mark_idle('nope', 'p');
SELECT streamforge.checkpoint('nope');
SELECT streamforge.restore('nope', '\x00'::bytea);
SELECT streamforge.watermark('nope');
SELECT * FROM streamforge.live('nope');
SELECT * FROM streamforge.visible('nope');
SELECT * FROM streamforge.late_events('nope');
SELECT * FROM streamforge.partitions('nope');
SELECT * FROM streamforge.stats('nope');
SELECT streamforge.drop_pipeline('nope');
-- so is an empty name (it cannot exist)
SELECT * FROM streamforge.ingest('', 'p', 0, 'e', 'k', 0, 0);
SELECT * FROM streamforge.ingest_batch('', ARRAY[ROW('p', 0, 'e', 'k', 0, 0)]::streamforge.delivery[]);
SELECT * FROM streamforge.advance('', 'p', 0);
SELECT * FROM streamforge.mark_idle('', 'p');
SELECT streamforge.checkpoint('');
SELECT streamforge.restore('', '\x00'::bytea);
SELECT streamforge.watermark('');
SELECT * FROM streamforge.live('');
SELECT * FROM streamforge.visible('');
SELECT * FROM streamforge.late_events('');
SELECT * FROM streamforge.partitions('');
SELECT * FROM streamforge.stats('');
SELECT streamforge.drop_pipeline('');
-- and a name over 63 bytes (it cannot exist either)
SELECT * FROM streamforge.ingest(repeat('x', 64), 'p', 0, 'e', 'k', 0, 0);
SELECT * FROM streamforge.ingest_batch(repeat('x', 64), ARRAY[ROW('p', 0, 'e', 'k', 0, 0)]::streamforge.delivery[]);
SELECT * FROM streamforge.advance(repeat('x', 64), 'p', 0);
SELECT * FROM streamforge.mark_idle(repeat('x', 64), 'p');
SELECT streamforge.checkpoint(repeat('x', 64));
SELECT streamforge.restore(repeat('x', 64), '\x00'::bytea);
SELECT streamforge.watermark(repeat('x', 64));
SELECT * FROM streamforge.live(repeat('x', 64));
SELECT * FROM streamforge.visible(repeat('x', 64));
SELECT * FROM streamforge.late_events(repeat('x', 64));
SELECT * FROM streamforge.partitions(repeat('x', 64));
SELECT * FROM streamforge.stats(repeat('x', 64));
SELECT streamforge.drop_pipeline(repeat('x', 64));
-- a NULL pipeline name is 22004
SELECT * FROM streamforge.ingest(NULL, 'p', 0, 'e', 'k', 0, 0);
SELECT * FROM streamforge.ingest_batch(NULL, ARRAY[ROW('p', 0, 'e', 'k', 0, 0)]::streamforge.delivery[]);
SELECT * FROM streamforge.advance(NULL, 'p', 0);
SELECT * FROM streamforge.mark_idle(NULL, 'p');
SELECT streamforge.checkpoint(NULL);
SELECT streamforge.restore(NULL, '\x00'::bytea);
SELECT streamforge.watermark(NULL);
SELECT * FROM streamforge.live(NULL);
SELECT * FROM streamforge.visible(NULL);
SELECT * FROM streamforge.late_events(NULL);
SELECT * FROM streamforge.partitions(NULL);
SELECT * FROM streamforge.stats(NULL);
SELECT streamforge.drop_pipeline(NULL);
-- the pipeline is checked before the other arguments
SELECT * FROM streamforge.ingest('nope', NULL, NULL, NULL, NULL, NULL, NULL);
SELECT * FROM streamforge.ingest_batch('nope', NULL);
SELECT * FROM streamforge.ingest_batch('nope', ARRAY[]::streamforge.delivery[]);
SELECT * FROM streamforge.advance('nope', NULL, NULL);
SELECT * FROM streamforge.mark_idle('nope', NULL);

-- ------------------------------------------------------------------------
-- A window kind is one of the three words exactly
-- ------------------------------------------------------------------------
-- a window kind is one of the three words exactly
-- (issue 24: mutant kind-parse-prefix of scripts/mutants-0.3.tsv).  A
-- hand-built window_def whose kind only starts like one ("fixedly",
-- "ses", "slidingly") is refused with 22023 by create_pipeline and
-- add_window, and nothing is created.
\c -
\set VERBOSITY default
SELECT streamforge.create_pipeline('s2d', ARRAY['p'],
    ARRAY[ROW('w', 'fixedly', 10, NULL, NULL)::streamforge.window_def]);
SELECT streamforge.create_pipeline('s2d', ARRAY['p'],
    ARRAY[ROW('w', 'ses', NULL, NULL, 5)::streamforge.window_def]);
SELECT count(*) FROM streamforge.pipeline WHERE name = 's2d';
SELECT streamforge.create_pipeline('s2d', ARRAY['p'],
    ARRAY[ROW('w', 'fixed', 10, NULL, NULL)::streamforge.window_def]);
\set VERBOSITY sqlstate
SELECT streamforge.add_window('s2d', ROW('v', 'slidingly', 10, 5, NULL)::streamforge.window_def);
SELECT streamforge.add_window('s2d', ROW('v', 'Fixed', 10, NULL, NULL)::streamforge.window_def);
\set VERBOSITY default
SELECT streamforge.add_window('s2d', ROW('v', 'sliding', 10, 5, NULL)::streamforge.window_def);
SELECT (streamforge.inspect_checkpoint(streamforge.checkpoint('s2d')) -> 'definition' -> 'windows')::text
    AS windows;

-- clean up
SELECT streamforge.drop_pipeline('s2d');
