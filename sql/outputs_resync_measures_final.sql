-- outputs_resync_measures_final (issue 38, defect 1): resync_outputs()
-- rewrites the final rows of a measures pipeline whose aggregates are not
-- those the pipeline finalized, as 0.3.0 wrote them when one call
-- finalized a bucket and then created a new one (measures_final_mid_call
-- shows the cause).  Such rows are made here by hand, as a superuser, in
-- the results table and in the changelog; resync_outputs() gives them
-- back the aggregates the remembered events give, and leaves every other
-- row, and the rows of a pipeline that is not a measures pipeline, as
-- they are.

SELECT streamforge.create_pipeline('orf', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    emit => 'update+final', out_of_orderness => 0, measures => ARRAY['a', 'b'],
    aggregates => ARRAY['sum(a)', 'sum(b)', 'avg(b)']);
SELECT streamforge.configure_outputs('orf');
SELECT count(*) FROM streamforge.ingest_measures_batch('orf', ARRAY[
    ROW('p', 0, 'e0', 'x', 1, ARRAY[10, 100]),
    ROW('p', 1, 'e1', 'x', 2, ARRAY[20, 300]),
    ROW('p', 2, 'e2', 'y', 5, ARRAY[1, 1]),
    ROW('p', 3, 'e3', 'z', 31, ARRAY[7, 7]),
    ROW('p', 4, 'e4', 'z', 45, ARRAY[8, 8])]::streamforge.measures_delivery[]);
-- x@0, y@0 and z@30 are final, z@40 is pending
SELECT window_start, key, count, final, aggregates
  FROM streamforge.results WHERE pipeline = 'orf' ORDER BY window_start, key;
CREATE TABLE orf_before AS
    SELECT * FROM streamforge.results WHERE pipeline = 'orf';
CREATE TABLE orf_cl_before AS
    SELECT * FROM streamforge.changelog WHERE pipeline = 'orf';

-- what 0.3.0 wrote: x's final row with z's aggregates, in both tables;
-- y's final row only in the results table
UPDATE streamforge.results SET aggregates = '{"sum_a": 7, "sum_b": 7, "avg_b": 7.0000000000000000}'
 WHERE pipeline = 'orf' AND key = 'x';
UPDATE streamforge.changelog SET aggregates = '{"sum_a": 7, "sum_b": 7, "avg_b": 7.0000000000000000}'
 WHERE pipeline = 'orf' AND key = 'x' AND op = 'final';
UPDATE streamforge.results SET aggregates = '{"sum_a": 0, "sum_b": 0, "avg_b": 0}'
 WHERE pipeline = 'orf' AND key = 'y';
SELECT streamforge.resync_outputs('orf');
SELECT window_start, key, count, final, aggregates
  FROM streamforge.results WHERE pipeline = 'orf' ORDER BY window_start, key;
-- every row is as the pipeline wrote it, to the text of its aggregates,
-- the changelog too
SELECT count(*) AS results_differ FROM (
    SELECT window_name, key, window_start, window_end, count, sum, min, max,
           seq, final, aggregates::text FROM orf_before
    EXCEPT
    SELECT window_name, key, window_start, window_end, count, sum, min, max,
           seq, final, aggregates::text
      FROM streamforge.results WHERE pipeline = 'orf') AS d;
SELECT count(*) AS changelog_differ FROM (
    SELECT seq, op, window_name, key, window_start, window_end, count,
           aggregates::text FROM orf_cl_before
    EXCEPT
    SELECT seq, op, window_name, key, window_start, window_end, count,
           aggregates::text
      FROM streamforge.changelog WHERE pipeline = 'orf') AS d;
SELECT seq, op, key, window_start, aggregates
  FROM streamforge.changelog WHERE pipeline = 'orf' AND op = 'final' ORDER BY seq;
-- on outputs that agree, resync_outputs changes nothing of these rows
SELECT streamforge.resync_outputs('orf');
SELECT count(*) AS differ FROM (
    SELECT window_name, key, window_start, window_end, aggregates::text FROM orf_before
    EXCEPT
    SELECT window_name, key, window_start, window_end, aggregates::text
      FROM streamforge.results WHERE pipeline = 'orf') AS d;

-- 'final' mode, with a session window
SELECT streamforge.create_pipeline('orf_s', ARRAY['p'], ARRAY[streamforge.session('s', 5)],
    emit => 'final', out_of_orderness => 0, measures => ARRAY['a'],
    aggregates => ARRAY['sum(a)', 'max(a)']);
SELECT streamforge.configure_outputs('orf_s');
SELECT count(*) FROM streamforge.ingest_measures_batch('orf_s', ARRAY[
    ROW('p', 0, 'e0', 'x', 1, ARRAY[10]),
    ROW('p', 1, 'e1', 'x', 3, ARRAY[20]),
    ROW('p', 2, 'e2', 'y', 30, ARRAY[1]),
    ROW('p', 3, 'e3', 'z', 31, ARRAY[7])]::streamforge.measures_delivery[]);
UPDATE streamforge.results SET aggregates = '{"sum_a": 7, "max_a": 7}'
 WHERE pipeline = 'orf_s' AND key = 'x';
SELECT streamforge.resync_outputs('orf_s');
SELECT window_start, window_end, key, count, final, aggregates
  FROM streamforge.results WHERE pipeline = 'orf_s' ORDER BY window_start, key;

-- a one-measure pipeline: resync_outputs leaves its final rows alone
SELECT streamforge.create_pipeline('orf_1', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    emit => 'final');
SELECT streamforge.configure_outputs('orf_1');
SELECT count(*) FROM streamforge.ingest_batch('orf_1', ARRAY[
    ROW('p', 0, 'e0', 'x', 1, 10),
    ROW('p', 1, 'e1', 'z', 31, 7)]::streamforge.delivery[]);
SELECT count(*) FROM streamforge.advance('orf_1', 'p', 31);
SELECT streamforge.resync_outputs('orf_1');
SELECT window_start, key, count, sum, final, aggregates
  FROM streamforge.results WHERE pipeline = 'orf_1' ORDER BY window_start, key;

SELECT streamforge.drop_pipeline('orf');
SELECT streamforge.drop_pipeline('orf_s');
SELECT streamforge.drop_pipeline('orf_1');
DROP TABLE orf_before, orf_cl_before;
