-- measures pipelines: the edge cases of each aggregate (issue 27)
SELECT streamforge.create_pipeline('me', ARRAY['p0', 'p1'],
    ARRAY[streamforge.fixed('w', 100), streamforge.session('s', 4)],
    lateness => 10,
    measures => ARRAY['a', 'b'],
    aggregates => ARRAY['count', 'sum(a)', 'avg(a)', 'min(a)', 'max(a)',
        'var_pop(a)', 'var_samp(a)', 'stddev_pop(a)', 'stddev_samp(a)',
        'first(b)', 'last(b)', 'count_if(a < -5) AS neg']);
-- one event: var_samp and stddev_samp are NULL, var_pop 0
SELECT * FROM streamforge.ingest_measures('me', 'p0', 0, 'e0', 'one', 1, ARRAY[-7, 70]);
SELECT window_name, count, aggregates FROM streamforge.live_aggregates('me')
WHERE key = 'one' ORDER BY window_name;
-- what PostgreSQL says for one value
SELECT var_pop(x), var_samp(x), stddev_pop(x), stddev_samp(x), avg(x)
FROM (VALUES (-7::bigint)) AS v(x);
-- ties: same event_time, across partitions: first is the one accepted
-- first, last the one accepted last
SELECT count(*) FROM streamforge.ingest_measures('me', 'p1', 0, 't1', 'tie', 5, ARRAY[1, 10]);
SELECT count(*) FROM streamforge.ingest_measures('me', 'p0', 1, 't2', 'tie', 5, ARRAY[2, 20]);
SELECT count(*) FROM streamforge.ingest_measures('me', 'p1', 1, 't3', 'tie', 5, ARRAY[3, 30]);
SELECT window_name, aggregates -> 'first_b' AS first_b, aggregates -> 'last_b' AS last_b
FROM streamforge.live_aggregates('me') WHERE key = 'tie' ORDER BY window_name;
-- an earlier event becomes first even when it arrives last
SELECT count(*) FROM streamforge.ingest_measures('me', 'p0', 2, 't0', 'tie', 4, ARRAY[0, 99]);
SELECT window_name, aggregates -> 'first_b' AS first_b, aggregates -> 'last_b' AS last_b
FROM streamforge.live_aggregates('me') WHERE key = 'tie' AND window_name = 'w';
-- sums past 2^63, and the variance of the bigint extremes, exactly
SELECT count(*) FROM streamforge.ingest_measures_batch('me', ARRAY[
    ROW('p0', 3, 'x1', 'big', 50, ARRAY[9223372036854775807, 0]),
    ROW('p0', 4, 'x2', 'big', 51, ARRAY[9223372036854775807, 0]),
    ROW('p0', 5, 'x3', 'big', 52, ARRAY[-9223372036854775808, 0])
    ]::streamforge.measures_delivery[]);
SELECT aggregates ->> 'sum_a' AS sum_a, aggregates ->> 'avg_a' AS avg_a,
       aggregates ->> 'var_pop_a' AS var_pop_a,
       aggregates ->> 'var_samp_a' AS var_samp_a,
       aggregates ->> 'stddev_pop_a' AS stddev_pop_a,
       aggregates ->> 'stddev_samp_a' AS stddev_samp_a
FROM streamforge.live_aggregates('me') WHERE key = 'big' AND window_name = 'w';
SELECT sum(x)::text AS sum_a, avg(x)::text AS avg_a, var_pop(x)::text AS var_pop_a,
       var_samp(x)::text AS var_samp_a, stddev_pop(x)::text AS stddev_pop_a,
       stddev_samp(x)::text AS stddev_samp_a
FROM (VALUES (9223372036854775807::bigint), (9223372036854775807),
             (-9223372036854775808)) AS v(x);
-- negative values, count_if with a negative constant
SELECT count(*) FROM streamforge.ingest_measures_batch('me', ARRAY[
    ROW('p1', 2, 'n1', 'neg', 60, ARRAY[-3, 0]),
    ROW('p1', 3, 'n2', 'neg', 61, ARRAY[-30, 0]),
    ROW('p1', 4, 'n3', 'neg', 62, ARRAY[-6, 0])
    ]::streamforge.measures_delivery[]);
SELECT aggregates ->> 'sum_a' AS sum_a, aggregates ->> 'min_a' AS min_a,
       aggregates ->> 'max_a' AS max_a, aggregates ->> 'avg_a' AS avg_a,
       aggregates ->> 'neg' AS neg
FROM streamforge.live_aggregates('me') WHERE key = 'neg' AND window_name = 'w';
-- closing everything
SELECT count(*) FROM streamforge.advance('me', 'p0', 200);
SELECT count(*) FROM streamforge.advance('me', 'p1', 200);
SELECT streamforge.drop_pipeline('me');
-- session merges: [20, 24) and [26, 30) merge when 23 arrives; first/last
-- come from the merged sessions; the retractions carry the old aggregates
SELECT streamforge.create_pipeline('ms', ARRAY['p'],
    ARRAY[streamforge.session('s', 4)], lateness => 100,
    measures => ARRAY['v'],
    aggregates => ARRAY['count', 'first(v)', 'last(v)', 'sum(v)']);
SELECT count(*) FROM streamforge.ingest_measures('ms', 'p', 0, 'a', 'k', 26, ARRAY[2]);
SELECT count(*) FROM streamforge.ingest_measures('ms', 'p', 1, 'b', 'k', 20, ARRAY[1]);
SELECT * FROM streamforge.advance('ms', 'p', 40);
SELECT seq, op, window_start, window_end, count, aggregates
FROM streamforge.ingest_measures('ms', 'p', 2, 'c', 'k', 23, ARRAY[3]);
SELECT * FROM streamforge.visible_aggregates('ms');
-- a correction within the lateness retracts and upserts with aggregates
SELECT seq, op, window_start, window_end, count, aggregates
FROM streamforge.ingest_measures('ms', 'p', 3, 'd', 'k', 30, ARRAY[4]);
-- default aggregates: count, then sum, min, max of each measure
SELECT streamforge.create_pipeline('md', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], measures => ARRAY['x', 'y']);
SELECT ordinality, name, type FROM streamforge.aggregate_columns('md');
-- arity, NULLs and identities
SELECT * FROM streamforge.ingest_measures('md', 'p', 0, 'a', 'k', 1, ARRAY[1]);
SELECT * FROM streamforge.ingest_measures('md', 'p', 0, 'a', 'k', 1, ARRAY[1, 2, 3]);
SELECT * FROM streamforge.ingest_measures('md', 'p', 0, 'a', 'k', 1, ARRAY[1, NULL]);
SELECT * FROM streamforge.ingest_measures('md', 'p', 0, 'a', 'k', 1, ARRAY[[1, 2]]);
SELECT * FROM streamforge.ingest_measures_batch('md', ARRAY[
    ROW('p', 0, 'a', 'k', 1, ARRAY[1, 2]),
    ROW('p', 1, 'b', 'k', 1, ARRAY[NULL, 2])]::streamforge.measures_delivery[]);
SELECT * FROM streamforge.ingest('md', 'p', 0, 'a', 'k', 1, 1);
SELECT * FROM streamforge.ingest_batch('md', ARRAY[('p', 0, 'a', 'k', 1, 1)]::streamforge.delivery[]);
SELECT count(*) FROM streamforge.ingest_measures('md', 'p', 0, 'a', 'k', 1, ARRAY[1, 2]);
-- a replay of the offset with the same measures is a no-op, other
-- measures are an offset conflict, another offset an identity conflict
SELECT count(*) FROM streamforge.ingest_measures('md', 'p', 0, 'a', 'k', 1, ARRAY[1, 2]);
SELECT * FROM streamforge.ingest_measures('md', 'p', 0, 'a', 'k', 1, ARRAY[1, 3]);
SELECT * FROM streamforge.ingest_measures('md', 'p', 1, 'a', 'k', 1, ARRAY[1, 3]);
SELECT count(*) FROM streamforge.ingest_measures('md', 'p', 1, 'a', 'k', 1, ARRAY[1, 2]);
SELECT deliveries, accepted, duplicate_ids, offset_replays FROM streamforge.stats('md');
SELECT * FROM streamforge.live_aggregates('md');
-- a measures checkpoint does not restore into a pipeline with other
-- aggregates (same windows)
SELECT streamforge.create_pipeline('md2', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], measures => ARRAY['x', 'y'],
    aggregates => ARRAY['count']);
SELECT streamforge.restore('md2', streamforge.checkpoint('md'));
SELECT streamforge.create_pipeline('md1', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
SELECT streamforge.restore('md1', streamforge.checkpoint('md'));
SELECT streamforge.restore('md', streamforge.checkpoint('md1'));
SELECT count(streamforge.drop_pipeline(n)) FROM unnest(ARRAY['ms', 'md', 'md1', 'md2']) AS n;
-- definition changes rebuild the aggregates from the remembered events
SELECT streamforge.create_pipeline('mr', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], lateness => 0,
    measures => ARRAY['v'], aggregates => ARRAY['count', 'sum(v)', 'first(v)', 'last(v)', 'var_samp(v)']);
SELECT count(*) FROM streamforge.ingest_measures_batch('mr', ARRAY[
    ROW('p', 0, 'a', 'k', 3, ARRAY[5]), ROW('p', 1, 'b', 'k', 1, ARRAY[7]),
    ROW('p', 2, 'c', 'k', 3, ARRAY[9]), ROW('p', 3, 'd', 'k', 14, ARRAY[1])
    ]::streamforge.measures_delivery[]);
SELECT count(*) FROM streamforge.add_window('mr', streamforge.session('s', 5));
SELECT count(*) FROM streamforge.set_lateness('mr', 20);
SELECT * FROM streamforge.live_aggregates('mr');
SELECT streamforge.drop_pipeline('mr');
