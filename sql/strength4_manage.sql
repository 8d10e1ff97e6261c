-- strength4_manage: add_partition refuses every partition the pipeline
-- has, the first in byte order too (issue 24, the fourth round of
-- scripts/mutants-0.3.tsv: mutant add-partition-dup-first; the tests
-- added the last partition again).
SELECT streamforge.create_pipeline('s4p', ARRAY['b', 'a'], ARRAY[streamforge.fixed('w', 10)]);
\set VERBOSITY terse
SELECT * FROM streamforge.add_partition('s4p', 'a');
SELECT * FROM streamforge.add_partition('s4p', 'b');
\set VERBOSITY default
SELECT * FROM streamforge.add_partition('s4p', 'c');
SELECT partition, consumed_offset FROM streamforge.partitions('s4p') ORDER BY partition;
SELECT streamforge.drop_pipeline('s4p');
