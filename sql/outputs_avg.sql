-- The results table's avg column: the exact mean sum / count, as numeric,
-- kept by PostgreSQL (a generated column) with every row the sink writes;
-- numeric division, so a mean that is not a terminating decimal is rounded
-- to numeric division scale (16 digits after the point at least).
\set VERBOSITY sqlstate

SELECT streamforge.create_pipeline('avg', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], 100);
SELECT streamforge.configure_outputs('avg');
SELECT count(*) FROM streamforge.advance('avg', 'p', 10);
SELECT count(*) FROM streamforge.ingest_batch('avg', ARRAY[
    ROW('p', 0, 'a', 'one', 1, 7),
    ROW('p', 1, 'b', 'thirds', 2, 1), ROW('p', 2, 'c', 'thirds', 3, 1),
    ROW('p', 3, 'd', 'thirds', 4, 2),
    ROW('p', 4, 'e', 'neg', 5, -3), ROW('p', 5, 'f', 'neg', 6, -4),
    ROW('p', 6, 'g', 'big', 7, 9223372036854775807),
    ROW('p', 7, 'h', 'big', 8, 9223372036854775807)]::streamforge.delivery[]);
SELECT key, count, sum, avg
  FROM streamforge.results WHERE pipeline = 'avg' ORDER BY key;
-- a correction rewrites the row, and its avg with it
SELECT count(*) FROM streamforge.ingest('avg', 'p', 8, 'i', 'one', 9, 8);
SELECT key, count, sum, avg FROM streamforge.results
 WHERE pipeline = 'avg' AND key = 'one';
-- rows copied from visible() have it too
SELECT streamforge.disable_outputs('avg');
SELECT streamforge.configure_outputs('avg');
SELECT key, avg, seq FROM streamforge.results WHERE pipeline = 'avg' ORDER BY key;
-- it is computed, never written
UPDATE streamforge.results SET avg = 0 WHERE pipeline = 'avg';
SELECT column_name, data_type, is_generated, generation_expression
  FROM information_schema.columns
 WHERE table_schema = 'streamforge' AND table_name = 'results'
   AND column_name = 'avg';

SELECT streamforge.drop_pipeline('avg');
