-- strength3_compact: compact(pipeline, min_journal_bytes) compacts exactly
-- when the journal since the last snapshot holds at least
-- min_journal_bytes, as this backend's cache counts them (issue 24: mutant
-- journal-bytes-zero of scripts/mutants-0.3.tsv; metrics only ever asked
-- for more bytes than the journal had, which a count of 0 answers alike).
SELECT streamforge.create_pipeline('s3c', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)]);
SELECT count(*) FROM streamforge.ingest('s3c', 'p', 0, 'e1', 'k', 1, 1);
SELECT count(*) FROM streamforge.ingest('s3c', 'p', 1, 'e2', 'k', 2, 1);
CREATE TABLE s3c_j AS SELECT journal_rows, journal_bytes FROM streamforge.metrics
 WHERE pipeline = 's3c';
SELECT journal_rows, journal_bytes > 0 AS has_bytes FROM s3c_j;
-- one byte more than the journal holds: no compaction
SELECT streamforge.compact('s3c', journal_bytes + 1) FROM s3c_j;
SELECT journal_rows FROM streamforge.metrics WHERE pipeline = 's3c';
-- exactly what it holds: compacts, and the journal is empty
SELECT streamforge.compact('s3c', journal_bytes) FROM s3c_j;
SELECT journal_rows, journal_bytes FROM streamforge.metrics WHERE pipeline = 's3c';
-- an empty journal holds less than one byte
SELECT streamforge.compact('s3c', 1);
-- a new backend counts what it loads: one byte suffices after one call
SELECT count(*) FROM streamforge.ingest('s3c', 'p', 2, 'e3', 'k', 3, 1);
\c -
SELECT streamforge.compact('s3c', 1);
SELECT journal_rows FROM streamforge.metrics WHERE pipeline = 's3c';
SELECT key, window_start, count, sum FROM streamforge.live('s3c');
DROP TABLE s3c_j;
SELECT streamforge.drop_pipeline('s3c');
