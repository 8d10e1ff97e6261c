--
-- Randomized test of measures pipelines (issue 27) against a brute-force
-- SQL model: after every call, every live bucket's declared aggregates
-- must be exactly (as text: digits and scale) what PostgreSQL's own
-- aggregates give over the bucket's accepted events, first/last by
-- (event_time, arrival).  The workload has duplicates, late events,
-- corrections within the lateness, session merges, negative values and
-- measures near 2^62 (sums past 2^63, sums of squares past 2^128), and
-- runs on a pipeline with retention too.  The same calls are fed to a
-- second pipeline in batches (ingest_measures_batch): its changes and
-- aggregates must be those of the one-by-one calls.  Every 40 calls a
-- checkpoint restores into a third pipeline and must re-encode to the
-- same bytes.  A summary row means every check passed.
--
SET synchronous_commit = off;
CREATE SCHEMA mr;
-- the accepted unique events of the model: arrival order, late or not
CREATE TABLE mr.ev (pipeline text, event_id text, key text, t bigint,
    a bigint, b bigint, arrival bigint, late boolean,
    PRIMARY KEY (pipeline, event_id));
CREATE TABLE mr.changes (pipeline text, seq bigint, op text, window_name text,
    key text, window_start bigint, window_end bigint, count bigint,
    aggregates text);
CREATE TABLE mr.stats (scenario text, calls int, checks int, buckets int,
    late int, duplicates int, restores int);

-- what PostgreSQL's aggregates give over the events of one bucket
CREATE FUNCTION mr.model(p text, k text, s bigint, e bigint) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
        'count', count(*),
        'sum_a', sum(a), 'avg_a', avg(a), 'min_a', min(a), 'max_a', max(a),
        'var_pop_a', var_pop(a), 'var_samp_a', var_samp(a),
        'stddev_pop_a', stddev_pop(a), 'stddev_samp_a', stddev_samp(a),
        'first_a', (array_agg(a ORDER BY t, arrival))[1],
        'last_a', (array_agg(a ORDER BY t DESC, arrival DESC))[1],
        'sum_b', sum(b), 'avg_b', avg(b), 'min_b', min(b), 'max_b', max(b),
        'var_pop_b', var_pop(b), 'var_samp_b', var_samp(b),
        'stddev_pop_b', stddev_pop(b), 'stddev_samp_b', stddev_samp(b),
        'first_b', (array_agg(b ORDER BY t, arrival))[1],
        'last_b', (array_agg(b ORDER BY t DESC, arrival DESC))[1],
        'pos', count(*) FILTER (WHERE a > 0),
        'small_b', count(*) FILTER (WHERE b <= 3))::text
    FROM mr.ev
    WHERE pipeline = p AND NOT late AND key = k AND t >= s AND t < e
$$;

-- every live bucket of p against the model; returns the number checked
CREATE FUNCTION mr.check(p text, what text) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    r record;
    n int := 0;
    want text;
BEGIN
    FOR r IN SELECT * FROM streamforge.live_aggregates(p) LOOP
        want := mr.model(p, r.key, r.window_start, r.window_end);
        IF r.aggregates::text IS DISTINCT FROM want THEN
            RAISE EXCEPTION 'after %: bucket % % [%, %) of % has %, the model %',
                what, r.window_name, r.key, r.window_start, r.window_end, p,
                r.aggregates, want;
        END IF;
        n := n + 1;
    END LOOP;
    RETURN n;
END $$;

CREATE FUNCTION mr.define(p text, retention bigint) RETURNS void
LANGUAGE sql AS $$
    SELECT streamforge.create_pipeline(p, ARRAY['p0', 'p1'],
        ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 12, 5),
              streamforge.session('g', 4)],
        lateness => 6, retention => retention,
        measures => ARRAY['a', 'b'],
        aggregates => ARRAY['count',
            'sum(a)', 'avg(a)', 'min(a)', 'max(a)', 'var_pop(a)',
            'var_samp(a)', 'stddev_pop(a)', 'stddev_samp(a)', 'first(a)',
            'last(a)',
            'sum(b)', 'avg(b)', 'min(b)', 'max(b)', 'var_pop(b)',
            'var_samp(b)', 'stddev_pop(b)', 'stddev_samp(b)', 'first(b)',
            'last(b)', 'count_if(a > 0) AS pos', 'count_if(b <= 3) AS small_b'])
$$;

CREATE PROCEDURE mr.run(scenario text, seed float8, ncalls int,
    retention bigint, big boolean)
LANGUAGE plpgsql AS $$
DECLARE
    p text := scenario;
    pb text := scenario || '_batch';
    pc text := scenario || '_copy';
    off bigint[] := ARRAY[0, 0];
    pend streamforge.measures_delivery[] := '{}';
    clock bigint := 0;
    arrivals bigint := 0;
    st mr.stats;
    part int;
    eid text;
    k text;
    t bigint;
    a bigint;
    b bigint;
    wm bigint;
    old mr.ev;
    ck bytea;
BEGIN
    PERFORM setseed(seed);
    PERFORM mr.define(p, retention);
    PERFORM mr.define(pb, retention);
    PERFORM mr.define(pc, retention);
    st := ROW(scenario, 0, 0, 0, 0, 0, 0);
    FOR i IN 1 .. ncalls LOOP
        part := 1 + floor(random() * 2)::int;
        IF random() < 0.15 THEN
            -- progress: flush the batch first, then advance both
            IF cardinality(pend) > 0 THEN
                INSERT INTO mr.changes SELECT pb, c.seq, c.op, c.window_name,
                    c.key, c.window_start, c.window_end, c.count, c.aggregates::text
                FROM streamforge.ingest_measures_batch(pb, pend) AS c;
                pend := '{}';
            END IF;
            clock := clock + floor(random() * 8)::bigint;
            INSERT INTO mr.changes SELECT p, c.seq, c.op, c.window_name, c.key,
                c.window_start, c.window_end, c.count, NULL
            FROM streamforge.advance(p, 'p' || (part - 1), clock) AS c;
            INSERT INTO mr.changes SELECT pb, c.seq, c.op, c.window_name, c.key,
                c.window_start, c.window_end, c.count, NULL
            FROM streamforge.advance(pb, 'p' || (part - 1), clock) AS c;
        ELSE
            IF random() < 0.2 AND EXISTS (SELECT 1 FROM mr.ev WHERE pipeline = p) THEN
                -- a duplicate: the same event again, at a new offset
                SELECT * INTO old FROM mr.ev WHERE pipeline = p
                    ORDER BY random() LIMIT 1;
                eid := old.event_id; k := old.key; t := old.t; a := old.a; b := old.b;
                st.duplicates := st.duplicates + 1;
            ELSE
                eid := 'e' || i;
                k := (ARRAY['x', 'y', ''])[1 + floor(random() * 3)::int];
                t := clock - 10 + floor(random() * 16)::bigint;
                a := floor(random() * 21)::bigint - 10;
                IF big THEN
                    b := (ARRAY[4611686018427387903, -4611686018427387904,
                                9223372036854775807, -9223372036854775808,
                                3, 1])[1 + floor(random() * 6)::int];
                ELSE
                    b := floor(random() * 7)::bigint;
                END IF;
                wm := streamforge.watermark(p);
                arrivals := arrivals + 1;
                INSERT INTO mr.ev VALUES (p, eid, k, t, a, b, arrivals,
                    wm IS NOT NULL AND t + 6 < wm);
                IF wm IS NOT NULL AND t + 6 < wm THEN
                    st.late := st.late + 1;
                END IF;
            END IF;
            INSERT INTO mr.changes SELECT p, c.seq, c.op, c.window_name, c.key,
                c.window_start, c.window_end, c.count, c.aggregates::text
            FROM streamforge.ingest_measures(p, 'p' || (part - 1),
                off[part], eid, k, t, ARRAY[a, b]) AS c;
            pend := pend || ROW('p' || (part - 1), off[part], eid, k, t,
                ARRAY[a, b])::streamforge.measures_delivery;
            off[part] := off[part] + 1;
            IF cardinality(pend) >= 1 + floor(random() * 6)::int THEN
                INSERT INTO mr.changes SELECT pb, c.seq, c.op, c.window_name,
                    c.key, c.window_start, c.window_end, c.count, c.aggregates::text
                FROM streamforge.ingest_measures_batch(pb, pend) AS c;
                pend := '{}';
            END IF;
        END IF;
        st.calls := st.calls + 1;
        st.buckets := st.buckets + mr.check(p, 'call ' || i);
        st.checks := st.checks + 1;
        IF i % 40 = 0 THEN
            ck := streamforge.checkpoint(p);
            PERFORM streamforge.restore(pc, ck);
            IF streamforge.checkpoint(pc) IS DISTINCT FROM ck THEN
                RAISE EXCEPTION 'after call %: the restored checkpoint re-encodes differently', i;
            END IF;
            IF (SELECT array_agg(x::text ORDER BY x::text) FROM streamforge.live_aggregates(pc) x)
               IS DISTINCT FROM
               (SELECT array_agg(x::text ORDER BY x::text) FROM streamforge.live_aggregates(p) x) THEN
                RAISE EXCEPTION 'after call %: the restored pipeline reads differently', i;
            END IF;
            st.restores := st.restores + 1;
        END IF;
    END LOOP;
    IF cardinality(pend) > 0 THEN
        INSERT INTO mr.changes SELECT pb, c.seq, c.op, c.window_name, c.key,
            c.window_start, c.window_end, c.count, c.aggregates::text
        FROM streamforge.ingest_measures_batch(pb, pend) AS c;
    END IF;
    -- batch/stream equivalence: the same changes, seq for seq
    IF EXISTS (
        (SELECT seq, op, window_name, key, window_start, window_end, count, aggregates
         FROM mr.changes WHERE pipeline = p
         EXCEPT ALL
         SELECT seq, op, window_name, key, window_start, window_end, count, aggregates
         FROM mr.changes WHERE pipeline = pb)
        UNION ALL
        (SELECT seq, op, window_name, key, window_start, window_end, count, aggregates
         FROM mr.changes WHERE pipeline = pb
         EXCEPT ALL
         SELECT seq, op, window_name, key, window_start, window_end, count, aggregates
         FROM mr.changes WHERE pipeline = p)) THEN
        RAISE EXCEPTION 'the batched pipeline emitted other changes';
    END IF;
    IF (SELECT array_agg(x::text ORDER BY x::text) FROM streamforge.live_aggregates(pb) x)
       IS DISTINCT FROM
       (SELECT array_agg(x::text ORDER BY x::text) FROM streamforge.live_aggregates(p) x) THEN
        RAISE EXCEPTION 'the batched pipeline reads differently';
    END IF;
    INSERT INTO mr.stats SELECT st.*;
END $$;

-- small values: ties in time, session merges, corrections
CALL mr.run('small', 0.27, 300, NULL, false);
-- values near 2^62 and the bigint extremes, with a retention, compacted
-- whenever the journal passes four times the snapshot (its snapshots are
-- binary, format 3: until 0.3.0 they were checkpoints, compacted at every
-- call)
SET streamforge.compaction_threshold = 0;
CALL mr.run('big', 0.61, 300, 8, true);
RESET streamforge.compaction_threshold;
SELECT name, snapshot IS NOT NULL AS compacted,
       pg_catalog.get_byte(snapshot, 8) AS snapshot_format
FROM streamforge.pipeline WHERE name IN ('big', 'small') ORDER BY name;
SELECT scenario, calls, checks, buckets > 1000 AS many_buckets,
       late > 0 AS some_late, duplicates > 0 AS some_duplicates, restores
FROM mr.stats ORDER BY scenario;
-- the stored state (snapshot and journal) rebuilds the same aggregates in
-- a new backend
CREATE TABLE mr.before AS SELECT 'small' AS p, x::text AS r
    FROM streamforge.live_aggregates('small') x
    UNION ALL SELECT 'big', x::text FROM streamforge.live_aggregates('big') x;
\c -
SET synchronous_commit = off;
SELECT p, count(*) AS rows,
       bool_and(r IN (SELECT x::text FROM streamforge.live_aggregates(p) x)) AS same
FROM mr.before GROUP BY p ORDER BY p;
SELECT mr.check('small', 'reconnect') > 0 AS checked,
       mr.check('big', 'reconnect') > 0 AS checked_big;
-- sums past 2^63 did occur
SELECT count(*) > 0 AS sums_past_2_63 FROM streamforge.live_aggregates('big') x
WHERE abs((x.aggregates ->> 'sum_b')::numeric) > 9223372036854775807;
SELECT count(streamforge.drop_pipeline(n)) FROM unnest(ARRAY['small', 'small_batch',
    'small_copy', 'big', 'big_batch', 'big_copy']) AS n;
DROP SCHEMA mr CASCADE;
