-- The SQLSTATE of a NULL measure (issue 38, defect 8): a NULL element of
-- measures, like every NULL where a value is needed (docs/semantics.md),
-- is 22004; a NULL array too; a wrong length or a second dimension is
-- 22023 (docs/aggregates.md).
SET client_min_messages = warning;
SELECT streamforge.create_pipeline('mn', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], measures => ARRAY['x', 'y']);
\set VERBOSITY sqlstate
SELECT * FROM streamforge.ingest_measures('mn', 'p', 0, 'a', 'k', 1, ARRAY[1, NULL]);
SELECT * FROM streamforge.ingest_measures('mn', 'p', 0, 'a', 'k', 1, ARRAY[NULL, 1]::bigint[]);
SELECT * FROM streamforge.ingest_measures('mn', 'p', 0, 'a', 'k', 1, NULL);
SELECT * FROM streamforge.ingest_measures('mn', 'p', 0, 'a', 'k', 1, ARRAY[1]);
SELECT * FROM streamforge.ingest_measures('mn', 'p', 0, 'a', 'k', 1, ARRAY[[1, 2]]);
SELECT * FROM streamforge.ingest_measures_batch('mn', ARRAY[
    ROW('p', 0, 'a', 'k', 1, ARRAY[1, 2]),
    ROW('p', 1, 'b', 'k', 1, ARRAY[NULL, 2])]::streamforge.measures_delivery[]);
SELECT * FROM streamforge.ingest_measures_batch('mn', ARRAY[
    ROW('p', 0, 'a', 'k', 1, NULL)]::streamforge.measures_delivery[]);
SELECT * FROM streamforge.append_measures_batch('mn', ARRAY[
    ROW('p', NULL, 'a', 'k', 1, ARRAY[1, NULL])]::streamforge.measures_delivery[]);
\set VERBOSITY default
-- nothing was ingested
SELECT deliveries, accepted FROM streamforge.stats('mn');
SELECT streamforge.drop_pipeline('mn');
