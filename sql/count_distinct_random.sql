--
-- Randomized test of count_distinct (issue 41, docs/aggregates.md)
-- against SQL's count(DISTINCT ...): measures_random.sql's model and
-- workload (duplicates, late events, corrections within the lateness,
-- session merges, multi-row batches crossing window boundaries, a
-- retention with a snapshot at every call) over three count_distinct
-- aggregates, one of a nullable measure, next to fixed-word ones.  After
-- every call every live bucket must be the model's; at random calls a
-- checkpoint restores into a third pipeline (same bytes, same reads), and
-- a call is rolled back (a subtransaction that fails after its ingest:
-- nothing of it may stay).  At the end a new backend cold-loads the
-- stored state (snapshot and journal) and must read the same.
--
SET synchronous_commit = off;
CREATE SCHEMA cdr;
-- the accepted unique events of the model: arrival order, late or not
CREATE TABLE cdr.ev (pipeline text, event_id text, key text, t bigint,
    a bigint, b bigint, c bigint, arrival bigint, late boolean,
    PRIMARY KEY (pipeline, event_id));
CREATE TABLE cdr.changes (pipeline text, seq bigint, op text, window_name text,
    key text, window_start bigint, window_end bigint, count bigint,
    aggregates text);
CREATE TABLE cdr.stats (scenario text, calls int, checks int, buckets int,
    late int, duplicates int, restores int, rollbacks int);

-- what PostgreSQL's aggregates give over the events of one bucket
CREATE FUNCTION cdr.model(p text, k text, s bigint, e bigint) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
        'count', count(*),
        'count_distinct_a', count(DISTINCT a),
        'sum_a', sum(a),
        'users', count(DISTINCT b),
        'max_b', max(b),
        'count_distinct_c', count(DISTINCT c),
        'count_c', count(c),
        'first_c', (array_agg(c ORDER BY t, arrival) FILTER (WHERE c IS NOT NULL))[1])::text
    FROM cdr.ev
    WHERE pipeline = p AND NOT late AND key = k AND t >= s AND t < e
$$;

-- every live bucket of p against the model; returns the number checked
CREATE FUNCTION cdr.check(p text, what text) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    r record;
    n int := 0;
    want text;
BEGIN
    FOR r IN SELECT * FROM streamforge.live_aggregates(p) LOOP
        want := cdr.model(p, r.key, r.window_start, r.window_end);
        IF r.aggregates::text IS DISTINCT FROM want THEN
            RAISE EXCEPTION 'after %: bucket % % [%, %) of % has %, the model %',
                what, r.window_name, r.key, r.window_start, r.window_end, p,
                r.aggregates, want;
        END IF;
        n := n + 1;
    END LOOP;
    RETURN n;
END $$;

CREATE FUNCTION cdr.define(p text, retention bigint) RETURNS void
LANGUAGE sql AS $$
    SELECT streamforge.create_pipeline(p, ARRAY['p0', 'p1'],
        ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 12, 5),
              streamforge.session('g', 4)],
        lateness => 6, retention => retention,
        measures => ARRAY['a', 'b', 'c NULL'],
        aggregates => ARRAY['count', 'count_distinct(a)', 'sum(a)',
            'count_distinct(b) AS users', 'max(b)', 'count_distinct(c)',
            'count(c)', 'first(c)'])
$$;

CREATE PROCEDURE cdr.run(scenario text, seed float8, ncalls int,
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
    st cdr.stats;
    part int;
    eid text;
    k text;
    t bigint;
    a bigint;
    b bigint;
    c bigint;
    wm bigint;
    old cdr.ev;
    ck bytea;
BEGIN
    PERFORM setseed(seed);
    PERFORM cdr.define(p, retention);
    PERFORM cdr.define(pb, retention);
    PERFORM cdr.define(pc, retention);
    st := ROW(scenario, 0, 0, 0, 0, 0, 0, 0);
    FOR i IN 1 .. ncalls LOOP
        part := 1 + floor(random() * 2)::int;
        IF random() < 0.15 THEN
            -- progress: flush the batch first, then advance both
            IF cardinality(pend) > 0 THEN
                INSERT INTO cdr.changes SELECT pb, c.seq, c.op, c.window_name,
                    c.key, c.window_start, c.window_end, c.count, c.aggregates::text
                FROM streamforge.ingest_measures_batch(pb, pend) AS c;
                pend := '{}';
            END IF;
            clock := clock + floor(random() * 8)::bigint;
            INSERT INTO cdr.changes SELECT p, c.seq, c.op, c.window_name, c.key,
                c.window_start, c.window_end, c.count, NULL
            FROM streamforge.advance(p, 'p' || (part - 1), clock) AS c;
            INSERT INTO cdr.changes SELECT pb, c.seq, c.op, c.window_name, c.key,
                c.window_start, c.window_end, c.count, NULL
            FROM streamforge.advance(pb, 'p' || (part - 1), clock) AS c;
        ELSE
            IF random() < 0.2 AND EXISTS (SELECT 1 FROM cdr.ev WHERE pipeline = p) THEN
                -- a duplicate: the same event again, at a new offset
                SELECT * INTO old FROM cdr.ev WHERE pipeline = p
                    ORDER BY random() LIMIT 1;
                eid := old.event_id; k := old.key; t := old.t; a := old.a; b := old.b; c := old.c;
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
                c := CASE WHEN random() < 0.3 THEN NULL
                          ELSE floor(random() * 5)::bigint END;
                wm := streamforge.watermark(p);
                arrivals := arrivals + 1;
                INSERT INTO cdr.ev VALUES (p, eid, k, t, a, b, c, arrivals,
                    wm IS NOT NULL AND t + 6 < wm);
                IF wm IS NOT NULL AND t + 6 < wm THEN
                    st.late := st.late + 1;
                END IF;
            END IF;
            INSERT INTO cdr.changes SELECT p, c.seq, c.op, c.window_name, c.key,
                c.window_start, c.window_end, c.count, c.aggregates::text
            FROM streamforge.ingest_measures(p, 'p' || (part - 1),
                off[part], eid, k, t, ARRAY[a, b, c]) AS c;
            pend := pend || ROW('p' || (part - 1), off[part], eid, k, t,
                ARRAY[a, b, c])::streamforge.measures_delivery;
            off[part] := off[part] + 1;
            IF cardinality(pend) >= 1 + floor(random() * 6)::int THEN
                INSERT INTO cdr.changes SELECT pb, c.seq, c.op, c.window_name,
                    c.key, c.window_start, c.window_end, c.count, c.aggregates::text
                FROM streamforge.ingest_measures_batch(pb, pend) AS c;
                pend := '{}';
            END IF;
        END IF;
        IF random() < 0.05 THEN
            -- a call rolled back: a new event, then an error
            BEGIN
                PERFORM count(*) FROM streamforge.ingest_measures(p,
                    'p' || (part - 1), off[part], 'rolled back ' || i, 'x',
                    clock, ARRAY[99, 99, 99]);
                RAISE EXCEPTION 'roll back';
            EXCEPTION WHEN raise_exception THEN
                st.rollbacks := st.rollbacks + 1;
            END;
        END IF;
        st.calls := st.calls + 1;
        st.buckets := st.buckets + cdr.check(p, 'call ' || i);
        st.checks := st.checks + 1;
        IF random() < 0.1 THEN
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
        INSERT INTO cdr.changes SELECT pb, c.seq, c.op, c.window_name, c.key,
            c.window_start, c.window_end, c.count, c.aggregates::text
        FROM streamforge.ingest_measures_batch(pb, pend) AS c;
    END IF;
    -- batch/stream equivalence: the same changes, seq for seq
    IF EXISTS (
        (SELECT seq, op, window_name, key, window_start, window_end, count, aggregates
         FROM cdr.changes WHERE pipeline = p
         EXCEPT ALL
         SELECT seq, op, window_name, key, window_start, window_end, count, aggregates
         FROM cdr.changes WHERE pipeline = pb)
        UNION ALL
        (SELECT seq, op, window_name, key, window_start, window_end, count, aggregates
         FROM cdr.changes WHERE pipeline = pb
         EXCEPT ALL
         SELECT seq, op, window_name, key, window_start, window_end, count, aggregates
         FROM cdr.changes WHERE pipeline = p)) THEN
        RAISE EXCEPTION 'the batched pipeline emitted other changes';
    END IF;
    IF (SELECT array_agg(x::text ORDER BY x::text) FROM streamforge.live_aggregates(pb) x)
       IS DISTINCT FROM
       (SELECT array_agg(x::text ORDER BY x::text) FROM streamforge.live_aggregates(p) x) THEN
        RAISE EXCEPTION 'the batched pipeline reads differently';
    END IF;
    INSERT INTO cdr.stats SELECT st.*;
END $$;

-- small values: ties in time, session merges, corrections
CALL cdr.run('cd_small', 0.27, 300, NULL, false);
-- values near 2^62 and the bigint extremes, with a retention, compacted
-- whenever the journal passes four times the snapshot (its snapshots are
-- binary, format 3: until 0.3.0 they were checkpoints, compacted at every
-- call)
SET streamforge.compaction_threshold = 0;
CALL cdr.run('cd_big', 0.61, 300, 8, true);
RESET streamforge.compaction_threshold;
SELECT name, snapshot IS NOT NULL AS compacted,
       pg_catalog.get_byte(snapshot, 8) AS snapshot_format
FROM streamforge.pipeline WHERE name IN ('cd_big', 'cd_small') ORDER BY name;
SELECT scenario, calls, checks, buckets > 1000 AS many_buckets,
       late > 0 AS some_late, duplicates > 0 AS some_duplicates,
       restores > 10 AS restores, rollbacks > 5 AS rollbacks
FROM cdr.stats ORDER BY scenario;
-- the stored state (snapshot and journal) rebuilds the same aggregates in
-- a new backend
CREATE TABLE cdr.before AS SELECT 'cd_small' AS p, x::text AS r
    FROM streamforge.live_aggregates('cd_small') x
    UNION ALL SELECT 'cd_big', x::text FROM streamforge.live_aggregates('cd_big') x;
\c -
SET synchronous_commit = off;
SELECT p, count(*) AS rows,
       bool_and(r IN (SELECT x::text FROM streamforge.live_aggregates(p) x)) AS same
FROM cdr.before GROUP BY p ORDER BY p;
SELECT cdr.check('cd_small', 'reconnect') > 0 AS checked,
       cdr.check('cd_big', 'reconnect') > 0 AS checked_big;
-- repeated values did occur: buckets where count_distinct < count
SELECT p, count(*) FILTER (WHERE (x.aggregates ->> 'users')::bigint < x.count) > 0
           AS repeated_users,
       count(*) FILTER (WHERE (x.aggregates ->> 'count_distinct_c')::bigint
                              < (x.aggregates ->> 'count_c')::bigint) > 0 AS repeated_c,
       count(*) FILTER (WHERE (x.aggregates ->> 'count_c')::bigint < x.count) > 0
           AS some_null_c
FROM unnest(ARRAY['cd_small', 'cd_big']) AS p, streamforge.live_aggregates(p) x
GROUP BY p ORDER BY p;
SELECT count(streamforge.drop_pipeline(n)) FROM unnest(ARRAY['cd_small', 'cd_small_batch',
    'cd_small_copy', 'cd_big', 'cd_big_batch', 'cd_big_copy']) AS n;
DROP SCHEMA cdr CASCADE;
