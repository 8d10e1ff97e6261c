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

-- ------------------------------------------------------------------------
-- Exact aggregates at the edges of their 128- and 192-bit state
-- ------------------------------------------------------------------------
-- the exact aggregates of a measures pipeline at
-- the edges of their state (issue 40 item 5 and the boundary sweep of
-- must-show 2).  docs/aggregates.md and docs/sql-aggregates.md promise
-- PostgreSQL's own values and digits: sums are 128-bit, sums of squares
-- 192-bit integers.  Every aggregate is compared, as text, with
-- PostgreSQL's over the same values, for every bucket of a fixed, a
-- sliding and a session window, through: single ingests, one batch, session
-- merges, corrections of emitted rows (no retraction for fixed and
-- sliding), checkpoint/restore, a new backend (journal replay, and a
-- snapshot after compaction).
--
-- The keys:
--   edge      int64's edges (-2^63, -2^63 + 1, -1, 0, 1, 2^63 - 2, 2^63 - 1)
--   carry192  3 x (-2^63)^2 + (2^63 - 1)^2 + ... = 2^128 - 1, then 1^2: the
--             low word's carry overflows the middle word into the top one
--   carry64   (2^32)^2 = 2^64 and its neighbours: carries into the middle word
--   big       300 values near +-2^62: the sum of squares is near 2^132
--   sess      two sessions of 20 values near +-2^62 each (sums of squares
--             past 2^128 each), merged by later events
--   sess2     a session whose sum of squares is 2^128 - 1 merged with one
--             whose sum of squares is 1: the merge's carry runs into the
--             top word
\c -
CREATE TABLE s5b_v (id int PRIMARY KEY, k text NOT NULL, t bigint NOT NULL, a bigint NOT NULL);
INSERT INTO s5b_v
SELECT row_number() OVER (ORDER BY g, ord), k, t, a FROM (
    -- edge: t 100 .. 113
    SELECT 1 AS g, i AS ord, 'edge' AS k, 100 + i AS t,
           (ARRAY[-9223372036854775808, 9223372036854775807, -9223372036854775807,
                  9223372036854775806, 0, -1, 1])[i % 7 + 1] AS a
      FROM generate_series(0, 13) AS i
    UNION ALL
    -- carry192: t 200 .. 211, in this arrival order
    SELECT 2, i, 'carry192', 200 + i,
           (ARRAY[-9223372036854775808, -9223372036854775808, -9223372036854775808,
                  9223372036854775807, 4294967295, 92681, 408, 19, 1, 1, 1, 1])[i + 1]
      FROM generate_series(0, 11) AS i
    UNION ALL
    -- carry64: t 250 .. 257
    SELECT 3, i, 'carry64', 250 + i,
           (ARRAY[4294967296, -4294967296, 4294967295, 4294967297, -3037000499,
                  3037000500, -4294967297, 4294967296])[i + 1]
      FROM generate_series(0, 7) AS i
    UNION ALL
    -- big: t 300 .. 349, 300 values
    SELECT 4, i, 'big', 300 + i % 50,
           (CASE WHEN i % 2 = 0 THEN 1 ELSE -1 END) * (4611686018427387904 + i * 123456789012345)
             + (CASE WHEN i % 3 = 0 THEN -7 ELSE 5 END)
      FROM generate_series(0, 299) AS i
    UNION ALL
    -- sess: [500, 520) and [540, 560), then 525, 532, 538 bridge them
    SELECT 5, i, 'sess', CASE WHEN i < 20 THEN 500 + i ELSE 520 + i END,
           (CASE WHEN i % 2 = 0 THEN -1 ELSE 1 END) * (4611686018427387904 + i * 98765432109)
      FROM generate_series(0, 39) AS i
    UNION ALL
    SELECT 6, i, 'sess', (ARRAY[525, 532, 538])[i + 1], (ARRAY[3, -4611686018427387904, 9223372036854775807])[i + 1]
      FROM generate_series(0, 2) AS i
    UNION ALL
    -- sess2: [600, 621) with 2^128 - 1 as its sum of squares, [628, 638)
    -- with 1, then 620 (value 0) bridges them
    SELECT 7, i, 'sess2', 600 + i,
           (ARRAY[-9223372036854775808, -9223372036854775808, -9223372036854775808,
                  9223372036854775807, 4294967295, 92681, 408, 19, 1, 1, 1])[i + 1]
      FROM generate_series(0, 10) AS i
    UNION ALL
    SELECT 8, 0, 'sess2', 628, 1
    UNION ALL
    SELECT 9, 0, 'sess2', 620, 0) AS s;
-- the sums of squares reached, exactly
SELECT k, count(*), sum(a::numeric * a) AS sum_of_squares,
       sum(a::numeric * a) >= 2::numeric ^ 128 AS past_2_128
  FROM s5b_v GROUP BY k ORDER BY k;

-- PostgreSQL's values per bucket: fixed [0, 1000), sliding 40 / 10, session gap 10
CREATE VIEW s5b_fixed AS SELECT 'w'::text AS window_name, k, (t / 1000) * 1000 AS window_start, a FROM s5b_v;
CREATE VIEW s5b_sliding AS
SELECT 'sl'::text AS window_name, k, s AS window_start, a
  FROM s5b_v, generate_series((t / 10) * 10 - 30, (t / 10) * 10, 10) AS s;
-- a session: consecutive events (by time) at most the gap (10) apart
-- (docs/semantics.md: [a, b) and [c, d) merge when a <= d and c <= b)
CREATE VIEW s5b_session AS
SELECT 's'::text AS window_name, k,
       min(t) OVER (PARTITION BY k, grp) AS window_start, a
  FROM (SELECT *, sum(CASE WHEN t - prev > 10 THEN 1 ELSE 0 END) OVER (PARTITION BY k ORDER BY t, id) AS grp
          FROM (SELECT *, lag(t, 1, t) OVER (PARTITION BY k ORDER BY t, id) AS prev FROM s5b_v) AS x) AS y;
CREATE VIEW s5b_expected AS
SELECT window_name, k AS key, window_start, count(*) AS count,
       jsonb_build_object('count', count(*)::text, 'sum_a', sum(a)::text, 'avg_a', avg(a)::text, 'min_a', min(a)::text,
           'max_a', max(a)::text, 'var_pop_a', var_pop(a)::text, 'var_samp_a', var_samp(a)::text,
           'stddev_pop_a', stddev_pop(a)::text, 'stddev_samp_a', stddev_samp(a)::text,
           'neg', (count(*) FILTER (WHERE a < 0))::text,
           'ge_big', (count(*) FILTER (WHERE a >= 4611686018427387904))::text) AS agg
  FROM (SELECT * FROM s5b_fixed UNION ALL SELECT * FROM s5b_sliding
        UNION ALL SELECT * FROM s5b_session) AS u
 GROUP BY 1, 2, 3;
-- streamforge's, as text
CREATE FUNCTION s5b_got(pl text) RETURNS TABLE (window_name text, key text,
    window_start bigint, count bigint, agg jsonb)
LANGUAGE sql AS $$
  SELECT window_name, key, window_start, count,
         (SELECT jsonb_object_agg(e.key, e.value #>> '{}') FROM jsonb_each(aggregates) AS e)
    FROM streamforge.live_aggregates(pl) $$;
-- the buckets that differ (none), and how many were compared
CREATE FUNCTION s5b_diff(pl text) RETURNS TABLE (side text, window_name text, key text,
    window_start bigint, count bigint, agg jsonb)
LANGUAGE sql AS $$
  (SELECT 'streamforge', * FROM s5b_got(pl) EXCEPT SELECT 'streamforge', * FROM s5b_expected)
  UNION ALL
  (SELECT 'postgres', * FROM s5b_expected EXCEPT SELECT 'postgres', * FROM s5b_got(pl))
  UNION ALL
  SELECT 'compared ' || count(*), NULL, NULL, NULL, NULL, NULL FROM s5b_got(pl) $$;

SELECT streamforge.create_pipeline(p, ARRAY['p'],
    ARRAY[streamforge.fixed('w', 1000), streamforge.sliding('sl', 40, 10),
          streamforge.session('s', 10)], lateness => 1000,
    measures => ARRAY['a'],
    aggregates => ARRAY['count', 'sum(a)', 'avg(a)', 'min(a)', 'max(a)', 'var_pop(a)',
        'var_samp(a)', 'stddev_pop(a)', 'stddev_samp(a)', 'count_if(a < 0) AS neg',
        'count_if(a >= 4611686018427387904) AS ge_big'])
  FROM unnest(ARRAY['s5b_one', 's5b_batch', 's5b_restored']) AS p;
-- one at a time, in id order; a watermark in the middle (600: every
-- bucket before it emitted, none finalized) makes the later events
-- corrections of emitted rows (a retraction and an upsert each; the
-- fixed window [0, 1000) is not emitted yet)
CREATE FUNCTION s5b_ingest(pl text, lo int, hi int) RETURNS TABLE (op text, window_name text, n bigint)
LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    CREATE TEMP TABLE s5b_changes (op text, window_name text);
    FOR r IN SELECT * FROM s5b_v WHERE id BETWEEN lo AND hi ORDER BY id LOOP
        INSERT INTO s5b_changes
        SELECT c.op, c.window_name
          FROM streamforge.ingest_measures(pl, 'p', r.id - 1, 'e' || r.id, r.k, r.t, ARRAY[r.a]) AS c;
    END LOOP;
    RETURN QUERY SELECT c.op, c.window_name, count(*) FROM s5b_changes AS c GROUP BY 1, 2 ORDER BY 1, 2;
    DROP TABLE s5b_changes;
END $$;
SELECT * FROM s5b_ingest('s5b_one', 1, 250);
SELECT count(*) FROM streamforge.advance('s5b_one', 'p', 600);
SELECT * FROM s5b_ingest('s5b_one', 251, 1000);
SELECT * FROM s5b_diff('s5b_one');
-- the twin gets one batch
SELECT count(*) FROM streamforge.ingest_measures_batch('s5b_batch', ARRAY(
    SELECT ROW('p', id - 1, 'e' || id, k, t, ARRAY[a])::streamforge.measures_delivery
      FROM s5b_v ORDER BY id));
SELECT * FROM s5b_diff('s5b_batch');
-- the carry and merge cases, shown
SELECT window_name, key, window_start, count, agg ->> 'var_pop_a' AS var_pop_a,
       agg ->> 'stddev_samp_a' AS stddev_samp_a
  FROM s5b_got('s5b_batch') WHERE key IN ('carry192', 'sess', 'sess2') AND window_name <> 'sl'
 ORDER BY 1, 2, 3;
-- checkpoint and restore
SELECT streamforge.restore('s5b_restored', streamforge.checkpoint('s5b_one'));
SELECT * FROM s5b_diff('s5b_restored');
SELECT streamforge.checkpoint('s5b_restored') = streamforge.checkpoint('s5b_one') AS same_checkpoint;
-- a new backend: s5b_one and s5b_batch from their journals, s5b_restored
-- from a snapshot
SELECT streamforge.compact('s5b_restored', min_journal_bytes => 0) AS compacted;
\c -
SELECT * FROM s5b_diff('s5b_one');
SELECT * FROM s5b_diff('s5b_batch');
SELECT * FROM s5b_diff('s5b_restored');
-- the visible rows (every bucket emitted at 1500) carry the live buckets'
-- values
SELECT count(*) FROM streamforge.advance('s5b_batch', 'p', 1500);
SELECT count(*) AS differ FROM (
    SELECT window_name, key, window_start, count, aggregates FROM streamforge.visible_aggregates('s5b_batch')
    EXCEPT SELECT window_name, key, window_start, count, aggregates FROM streamforge.live_aggregates('s5b_batch')) AS d;
SELECT streamforge.drop_pipeline(p)
  FROM unnest(ARRAY['s5b_one', 's5b_batch', 's5b_restored']) AS p;

-- Each aggregate alone (its state then starts at word 0 of the bucket),
-- and count_if with every operator at the edges, over the keys edge and
-- carry64, in a fixed window and in sessions merged out of order (one
-- per key in the end), against PostgreSQL's
CREATE FUNCTION s5b_alone(spec text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    r text;
BEGIN
    -- a fixed window, and sessions of gap 3 built out of order (the times
    -- divisible by 4 first: separate sessions, then the others merge them)
    PERFORM streamforge.create_pipeline('s5b_alone', ARRAY['p'],
        ARRAY[streamforge.fixed('w', 1000), streamforge.session('s', 3)],
        lateness => 1000, measures => ARRAY['a'], aggregates => ARRAY[spec || ' AS x']);
    PERFORM count(*) FROM streamforge.ingest_measures_batch('s5b_alone', ARRAY(
        SELECT ROW('p', row_number() OVER (ORDER BY t % 4 <> 0, id) - 1, 'e' || id, k, t,
                   ARRAY[a])::streamforge.measures_delivery
          FROM s5b_v WHERE k IN ('edge', 'carry64') ORDER BY t % 4 <> 0, id));
    SELECT string_agg(window_name || ':' || key || ':' || (aggregates ->> 'x'), ' '
                      ORDER BY window_name, key)
      INTO r FROM streamforge.live_aggregates('s5b_alone');
    PERFORM streamforge.drop_pipeline('s5b_alone');
    RETURN r;
END $$;
CREATE VIEW s5b_edge AS SELECT * FROM s5b_v WHERE k IN ('edge', 'carry64');
SELECT spec, got AS streamforge, postgres, got IS NOT DISTINCT FROM postgres AS same
  FROM (VALUES
    ('sum(a)', (SELECT string_agg(w || ':' || k || ':' || v, ' ' ORDER BY w, k) FROM (SELECT k, sum(a)::text AS v FROM s5b_edge GROUP BY k) AS g, unnest(ARRAY['s', 'w']) AS w)),
    ('min(a)', (SELECT string_agg(w || ':' || k || ':' || v, ' ' ORDER BY w, k) FROM (SELECT k, min(a)::text AS v FROM s5b_edge GROUP BY k) AS g, unnest(ARRAY['s', 'w']) AS w)),
    ('max(a)', (SELECT string_agg(w || ':' || k || ':' || v, ' ' ORDER BY w, k) FROM (SELECT k, max(a)::text AS v FROM s5b_edge GROUP BY k) AS g, unnest(ARRAY['s', 'w']) AS w)),
    ('first(a)', (SELECT string_agg(w || ':' || k || ':' || v, ' ' ORDER BY w, k) FROM (SELECT k, (array_agg(a ORDER BY t, id))[1]::text AS v FROM s5b_edge GROUP BY k) AS g, unnest(ARRAY['s', 'w']) AS w)),
    ('last(a)', (SELECT string_agg(w || ':' || k || ':' || v, ' ' ORDER BY w, k) FROM (SELECT k, (array_agg(a ORDER BY t DESC, id DESC))[1]::text AS v FROM s5b_edge GROUP BY k) AS g, unnest(ARRAY['s', 'w']) AS w)),
    ('var_pop(a)', (SELECT string_agg(w || ':' || k || ':' || v, ' ' ORDER BY w, k) FROM (SELECT k, var_pop(a)::text AS v FROM s5b_edge GROUP BY k) AS g, unnest(ARRAY['s', 'w']) AS w)),
    ('count_if(a = 0)', (SELECT string_agg(w || ':' || k || ':' || v, ' ' ORDER BY w, k) FROM (SELECT k, count(*) FILTER (WHERE a = 0)::text AS v FROM s5b_edge GROUP BY k) AS g, unnest(ARRAY['s', 'w']) AS w)),
    ('count_if(a <> 0)', (SELECT string_agg(w || ':' || k || ':' || v, ' ' ORDER BY w, k) FROM (SELECT k, count(*) FILTER (WHERE a <> 0)::text AS v FROM s5b_edge GROUP BY k) AS g, unnest(ARRAY['s', 'w']) AS w)),
    ('count_if(a < -9223372036854775807)', (SELECT string_agg(w || ':' || k || ':' || v, ' ' ORDER BY w, k) FROM (SELECT k, count(*) FILTER (WHERE a < -9223372036854775807)::text AS v FROM s5b_edge GROUP BY k) AS g, unnest(ARRAY['s', 'w']) AS w)),
    ('count_if(a <= -9223372036854775808)', (SELECT string_agg(w || ':' || k || ':' || v, ' ' ORDER BY w, k) FROM (SELECT k, count(*) FILTER (WHERE a <= -9223372036854775808)::text AS v FROM s5b_edge GROUP BY k) AS g, unnest(ARRAY['s', 'w']) AS w)),
    ('count_if(a > 9223372036854775806)', (SELECT string_agg(w || ':' || k || ':' || v, ' ' ORDER BY w, k) FROM (SELECT k, count(*) FILTER (WHERE a > 9223372036854775806)::text AS v FROM s5b_edge GROUP BY k) AS g, unnest(ARRAY['s', 'w']) AS w)),
    ('count_if(a >= 9223372036854775807)', (SELECT string_agg(w || ':' || k || ':' || v, ' ' ORDER BY w, k) FROM (SELECT k, count(*) FILTER (WHERE a >= 9223372036854775807)::text AS v FROM s5b_edge GROUP BY k) AS g, unnest(ARRAY['s', 'w']) AS w)),
    ('count_if(a >= 4294967296)', (SELECT string_agg(w || ':' || k || ':' || v, ' ' ORDER BY w, k) FROM (SELECT k, count(*) FILTER (WHERE a >= 4294967296)::text AS v FROM s5b_edge GROUP BY k) AS g, unnest(ARRAY['s', 'w']) AS w)),
    ('count_if(a > 4294967296)', (SELECT string_agg(w || ':' || k || ':' || v, ' ' ORDER BY w, k) FROM (SELECT k, count(*) FILTER (WHERE a > 4294967296)::text AS v FROM s5b_edge GROUP BY k) AS g, unnest(ARRAY['s', 'w']) AS w)),
    ('count_if(a <= -1)', (SELECT string_agg(w || ':' || k || ':' || v, ' ' ORDER BY w, k) FROM (SELECT k, count(*) FILTER (WHERE a <= -1)::text AS v FROM s5b_edge GROUP BY k) AS g, unnest(ARRAY['s', 'w']) AS w))
  ) AS v(spec, postgres), LATERAL (SELECT s5b_alone(spec) AS got) AS g
 ORDER BY spec;
DROP VIEW s5b_edge;
DROP FUNCTION s5b_alone(text);
DROP FUNCTION s5b_diff(text);
DROP FUNCTION s5b_ingest(text, int, int);
DROP FUNCTION s5b_got(text);
DROP VIEW s5b_expected, s5b_fixed, s5b_sliding, s5b_session;
DROP TABLE s5b_v;
