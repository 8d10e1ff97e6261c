-- measures_final_mid_call (issue 38, defect 1): one multi-row call that
-- finalizes a bucket of a measures pipeline and then creates a new bucket.
-- In 0.3.0 the final change kept a pointer to its bucket's measure state;
-- finalization recycled the bucket, the next new bucket of the same call
-- took its state, and the final row was written (after the call) with the
-- new bucket's aggregates: here x's final rows came out with z's sums
-- (7, 7) instead of (10, 100).  Every path that writes several events in
-- one call: ingest_measures_batch, append_measures_batch, INSERT and COPY
-- into an aggregate's table; fixed, sliding and session windows; emit
-- 'final' and 'update+final'.  x's final rows must carry
-- {"sum(a)": 10, "sum(b)": 100, "max(b)": 100}: the call's returned rows,
-- the changelog and the results table.

-- one pipeline per (window, emit, path); returns the final rows of the
-- call, of the changelog and of the results table, one line each
CREATE FUNCTION fmc_run(w streamforge.window_def, emit text, path text)
RETURNS TABLE (source text, key text, window_start bigint, count bigint,
               aggregates jsonb)
LANGUAGE plpgsql AS $$
DECLARE
    d streamforge.measures_delivery[] := ARRAY[
        ROW('p', 0, 'e0', 'x', 1, ARRAY[10, 100]),
        -- the watermark passes every bucket of x: final
        ROW('p', 1, 'e1', 'y', 30, ARRAY[1, 1]),
        -- a new bucket of the same call
        ROW('p', 2, 'e2', 'z', 31, ARRAY[7, 7])]::streamforge.measures_delivery[];
BEGIN
    PERFORM streamforge.create_pipeline('fmc', ARRAY['p'], ARRAY[w],
        emit => emit, out_of_orderness => 0, measures => ARRAY['a', 'b'],
        aggregates => ARRAY['sum(a)', 'sum(b)', 'max(b)']);
    PERFORM streamforge.configure_outputs('fmc');
    CREATE TEMP TABLE fmc_out OF streamforge.measures_change;
    IF path = 'ingest_measures_batch' THEN
        INSERT INTO fmc_out SELECT * FROM streamforge.ingest_measures_batch('fmc', d);
    ELSE
        INSERT INTO fmc_out SELECT * FROM streamforge.append_measures_batch('fmc', d);
    END IF;
    RETURN QUERY
        SELECT 'call', c.key, c.window_start, c.count, c.aggregates
          FROM fmc_out AS c WHERE c.op = 'final'
        UNION ALL
        SELECT 'changelog', c.key, c.window_start, c.count, c.aggregates
          FROM streamforge.changelog AS c
         WHERE c.pipeline = 'fmc' AND c.op = 'final'
        UNION ALL
        SELECT 'results', r.key, r.window_start, r.count, r.aggregates
          FROM streamforge.results AS r
         WHERE r.pipeline = 'fmc' AND r.final
         ORDER BY 1, 2, 3;
    DROP TABLE fmc_out;
    PERFORM streamforge.drop_pipeline('fmc');
END
$$;

SELECT * FROM fmc_run(streamforge.fixed('w', 10), 'final', 'ingest_measures_batch');
SELECT * FROM fmc_run(streamforge.fixed('w', 10), 'update+final', 'ingest_measures_batch');
SELECT * FROM fmc_run(streamforge.fixed('w', 10), 'final', 'append_measures_batch');
SELECT * FROM fmc_run(streamforge.fixed('w', 10), 'update+final', 'append_measures_batch');
SELECT * FROM fmc_run(streamforge.sliding('w', 10, 5), 'final', 'ingest_measures_batch');
SELECT * FROM fmc_run(streamforge.sliding('w', 10, 5), 'update+final', 'append_measures_batch');
SELECT * FROM fmc_run(streamforge.session('w', 5), 'final', 'ingest_measures_batch');
SELECT * FROM fmc_run(streamforge.session('w', 5), 'update+final', 'append_measures_batch');

-- 'update+final': the upserts of the same call were right in 0.3.0 too;
-- the results row of x is the final one, with x's own sums
SELECT streamforge.create_pipeline('fmc', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    emit => 'update+final', out_of_orderness => 0, measures => ARRAY['a', 'b'],
    aggregates => ARRAY['sum(a)', 'sum(b)', 'max(b)']);
SELECT seq, op, key, window_start, count, aggregates
  FROM streamforge.ingest_measures_batch('fmc', ARRAY[
        ROW('p', 0, 'e0', 'x', 1, ARRAY[10, 100]),
        ROW('p', 1, 'e1', 'y', 30, ARRAY[1, 1]),
        ROW('p', 2, 'e2', 'z', 31, ARRAY[7, 7])]::streamforge.measures_delivery[]);
SELECT streamforge.drop_pipeline('fmc');

-- the issue's reproduction: INSERT of three rows into an aggregate's table
CREATE TABLE fmc_t (id int PRIMARY KEY, k text NOT NULL, a int NOT NULL,
                    b int NOT NULL, ts timestamptz NOT NULL);
SELECT streamforge.create_aggregate('fmc_m', $$
    SELECT k, count(*) AS n, sum(a) AS sa, sum(b) AS sb
      FROM fmc_t GROUP BY k, streamforge.tumble(ts, interval '1 minute')
$$, out_of_orderness => interval '5 seconds', emit => 'final');
INSERT INTO fmc_t VALUES
    (1, 'x', 10, 100, '2026-11-30 12:00:10+00'),
    (2, 'y',  1,   1, '2026-11-30 12:01:10+00'),   -- x@12:00 is final
    (3, 'z',  7,   7, '2026-11-30 12:01:20+00');   -- a new bucket
SELECT k, window_start, n, sa, sb, final FROM fmc_m ORDER BY k, window_start;
-- and COPY, with session windows
CREATE TABLE fmc_s (id int PRIMARY KEY, k text NOT NULL, a int NOT NULL,
                    b int NOT NULL, ts timestamptz NOT NULL);
SELECT streamforge.create_aggregate('fmc_sm', $$
    SELECT k, count(*) AS n, sum(a) AS sa, sum(b) AS sb
      FROM fmc_s GROUP BY k, streamforge.session(ts, interval '30 seconds')
$$, out_of_orderness => interval '5 seconds', emit => 'final');
COPY fmc_s FROM STDIN;
1	x	10	100	2026-11-30 12:00:10+00
2	y	1	1	2026-11-30 12:01:10+00
3	z	7	7	2026-11-30 12:01:20+00
\.
SELECT k, window_start, n, sa, sb, final FROM fmc_sm ORDER BY k, window_start;
SELECT streamforge.drop_aggregate('fmc_m');
SELECT streamforge.drop_aggregate('fmc_sm');
DROP TABLE fmc_t, fmc_s;
DROP FUNCTION fmc_run;
