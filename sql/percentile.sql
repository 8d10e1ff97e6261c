-- percentile_cont(m, p), percentile_disc(m, p) and approx_percentile(m, p)
-- (0.4.0, issue 44, item 2; docs/aggregates.md, "Percentiles"): exact
-- (every value kept) and a DDSketch of 1% relative accuracy, exact up to
-- 256 values.  Fixed and session windows, a session merge, a late
-- correction, NULLs, a rollback, the checkpoint round trip (format
-- version 3, "state_var"), the sketch form's words, bad spellings.
SELECT streamforge.create_pipeline('pc', ARRAY['p0'],
    ARRAY[streamforge.fixed('f', 10), streamforge.session('g', 5)],
    lateness => 20,
    measures => ARRAY['v', 'w NULL'],
    aggregates => ARRAY['count', 'percentile_cont(v, 0.5) AS median',
                        'percentile_disc(v, 0.5)', 'approx_percentile(v, 0.5)',
                        'percentile_cont(v, 0.25)', 'percentile_cont(w, 1)',
                        'percentile_disc(v, 0)', 'approx_percentile(w, .75) AS w75']);
SELECT * FROM streamforge.aggregate_columns('pc');

-- f [0,10): v = 10, 40, 20, 30 (w = 1, NULL, NULL, 4)
SELECT count(*) FROM streamforge.ingest_measures_batch('pc', ARRAY[
    ROW('p0', 0, 'e1', 'k', 1, ARRAY[10, 1])::streamforge.measures_delivery,
    ROW('p0', 1, 'e2', 'k', 2, ARRAY[40, NULL])::streamforge.measures_delivery,
    ROW('p0', 2, 'e3', 'k', 3, ARRAY[20, NULL])::streamforge.measures_delivery,
    ROW('p0', 3, 'e4', 'k', 4, ARRAY[30, 4])::streamforge.measures_delivery]);
-- median: rows 1.5 of 0..3: 20 + 0.5 * (30 - 20) = 25; disc 0.5: row
-- ceil(2) = 2: 20; approx (exact here): 20; cont 0.25: row 0.75: 10 +
-- 0.75 * 10 = 17.5; cont(w, 1): 4; disc(v, 0): 10; w75: w {1, 4},
-- row ceil(1.5) = 2: 4
SELECT window_name, key, window_start, window_end, count, aggregates
FROM streamforge.live_aggregates('pc') ORDER BY window_name, key, window_start;

-- sessions merged: t=20 (v 1), t=30 (v 3), then t=25 (v 2): [20,35),
-- median 2
SELECT count(*) FROM streamforge.ingest_measures_batch('pc', ARRAY[
    ROW('p0', 4, 'e5', 'k', 20, ARRAY[1, NULL])::streamforge.measures_delivery,
    ROW('p0', 5, 'e6', 'k', 30, ARRAY[3, NULL])::streamforge.measures_delivery]);
SELECT count(*) FROM streamforge.ingest_measures('pc', 'p0', 6, 'e7', 'k', 25, ARRAY[2, NULL]);
SELECT window_start, window_end, count, aggregates
FROM streamforge.live_aggregates('pc') WHERE window_name = 'g' ORDER BY window_start;

-- a late correction of an emitted row: f [0,10) emitted, then v = 50:
-- values 10..50, median 30
SELECT streamforge.configure_outputs('pc', changelog => true);
SELECT count(*) FROM streamforge.advance('pc', 'p0', 12);
SELECT count(*) FROM streamforge.ingest_measures('pc', 'p0', 7, 'e8', 'k', 5, ARRAY[50, NULL]);
SELECT seq, op, window_start, count, aggregates ->> 'median' AS median,
       aggregates ->> 'percentile_disc_v_5' AS disc
FROM streamforge.changelog WHERE pipeline = 'pc' AND window_name = 'f' ORDER BY seq;

-- a rollback leaves the values as they were
BEGIN;
SELECT count(*) FROM streamforge.ingest_measures('pc', 'p0', 8, 'e9', 'k', 6, ARRAY[1000, 1000]);
SELECT aggregates ->> 'median' FROM streamforge.live_aggregates('pc') WHERE window_name = 'f' AND window_start = 0;
ROLLBACK;
SELECT aggregates ->> 'median' FROM streamforge.live_aggregates('pc') WHERE window_name = 'f' AND window_start = 0;

-- the checkpoint: version 3, each state's values in ascending order
CREATE TABLE pc_ck AS SELECT streamforge.checkpoint('pc') AS c;
SELECT get_byte(c, 9) AS format_version FROM pc_ck;
SELECT w ->> 'window_name' AS window_name, w ->> 'window_start' AS window_start, w -> 'state_var' AS state_var
FROM pc_ck, jsonb_array_elements(streamforge.inspect_checkpoint(c) -> 'windows') AS w ORDER BY 1, 2;
SELECT streamforge.restore('pc', (SELECT c FROM pc_ck));
SELECT streamforge.checkpoint('pc') = (SELECT c FROM pc_ck) AS same_bytes;
SELECT streamforge.definition('pc') -> 'aggregates' AS aggregates;

-- the sketch form: 1000 values 1..1000 in one bucket (in a scattered
-- order): approx_percentile(0.5) is within 1% of 500, the exact 500;
-- 0.99: near 990; the words: one per key, descending, fewer than events
SELECT streamforge.create_pipeline('pc2', ARRAY['p0'], ARRAY[streamforge.fixed('f', 10)],
    measures => ARRAY['v'],
    aggregates => ARRAY['approx_percentile(v, 0.5) AS a50', 'percentile_disc(v, 0.5) AS d50',
                        'approx_percentile(v, 0.99) AS a99', 'percentile_disc(v, 0.99) AS d99',
                        'approx_percentile(v, 0) AS a0', 'approx_percentile(v, 1) AS a100']);
SELECT count(*) FROM streamforge.ingest_measures_batch('pc2', ARRAY(
    SELECT ROW('p0', i - 1, 'e' || i, 'k', 1, ARRAY[(i * 7919) % 1000 + 1])::streamforge.measures_delivery
      FROM generate_series(1, 1000) AS i ORDER BY i));
SELECT (aggregates ->> 'd50')::bigint AS d50, abs((aggregates ->> 'a50')::float8 / 500 - 1) <= 0.01 AS a50_within_1pct,
       (aggregates ->> 'd99')::bigint AS d99, abs((aggregates ->> 'a99')::float8 / 990 - 1) <= 0.01 AS a99_within_1pct,
       aggregates ->> 'a0' AS a0, abs((aggregates ->> 'a100')::float8 / 1000 - 1) <= 0.01 AS a100_within_1pct
FROM streamforge.live_aggregates('pc2');
CREATE TABLE pc_ck2 AS SELECT streamforge.checkpoint('pc2') AS c;
SELECT jsonb_array_length(w -> 'state_var' -> 0) AS sketch_words,
       jsonb_array_length(w -> 'state_var' -> 1) AS kept_values,
       (w -> 'state_var' -> 0 ->> 0)::bigint > (w -> 'state_var' -> 0 ->> 1)::bigint AS descending
FROM pc_ck2, jsonb_array_elements(streamforge.inspect_checkpoint(c) -> 'windows') AS w;
SELECT streamforge.restore('pc2', (SELECT c FROM pc_ck2));
SELECT streamforge.checkpoint('pc2') = (SELECT c FROM pc_ck2) AS same_bytes;

-- bad spellings
SELECT streamforge.create_pipeline('pc_bad', ARRAY['p0'], ARRAY[streamforge.fixed('f', 10)],
    measures => ARRAY['a'], aggregates => ARRAY['percentile_cont(a)']);
SELECT streamforge.create_pipeline('pc_bad', ARRAY['p0'], ARRAY[streamforge.fixed('f', 10)],
    measures => ARRAY['a'], aggregates => ARRAY['approx_percentile(a, 1.5)']);
SELECT streamforge.create_pipeline('pc_bad', ARRAY['p0'], ARRAY[streamforge.fixed('f', 10)],
    measures => ARRAY['a'], aggregates => ARRAY['percentile_disc(a, 0.1234567)']);
SELECT streamforge.create_pipeline('pc_bad', ARRAY['p0'], ARRAY[streamforge.fixed('f', 10)],
    measures => ARRAY['a'], aggregates => ARRAY['percentile_disc(a, -0.5)']);

DROP TABLE pc_ck, pc_ck2;
SELECT streamforge.drop_pipeline('pc');
SELECT streamforge.drop_pipeline('pc2');
