-- strength2_definition: a window kind is one of the three words exactly
-- (issue 24: mutant kind-parse-prefix of scripts/mutants-0.3.tsv).  A
-- hand-built window_def whose kind only starts like one ("fixedly",
-- "ses", "slidingly") is refused with 22023 by create_pipeline and
-- add_window, and nothing is created.
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
