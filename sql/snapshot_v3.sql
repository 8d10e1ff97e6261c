--
-- Binary snapshots of pipelines with retention or measures (snapshot
-- format version 3, 0.4.0, issue 39; src/codec/snapshot.c).  Until 0.3.0
-- such a pipeline kept the canonical checkpoint as its snapshot, whose
-- decode parses, re-derives and re-encodes every identity (a measures
-- pipeline of 1M events took 9-11 s to load).
--
-- Randomized, against a reference: each scenario feeds two identical
-- pipelines the same calls (per-row and multi-row calls across window
-- boundaries, duplicates, late events, rolled-back calls, advances on two
-- partitions); one of them is compacted at random points (its snapshot is
-- then version 3, and the journal after it holds the calls since), the
-- reference never is (its journal replays).  After every round a new
-- backend loads both: same checkpoint bytes (the canonical state), same
-- late events, and the next round's calls return the same changes.
-- Scenarios: measures with variable-size states (count_distinct,
-- percentile, approx aggregates, a nullable measure) with and without
-- retention; retention alone; and a retention removed (partitions that no
-- longer start at offset 0).
--
SET synchronous_commit = off;
CREATE SCHEMA sv;
CREATE TABLE sv.state (scenario text PRIMARY KEY, seed float8, clock bigint,
    off0 bigint, off1 bigint, n bigint, compactions int, rollbacks int);
CREATE TABLE sv.mismatch (scenario text, round int, what text);
-- the events delivered, for duplicates (the same event again)
CREATE TABLE sv.ev (scenario text, n bigint, k text, t bigint, a bigint,
    b bigint, c bigint, PRIMARY KEY (scenario, n));

CREATE FUNCTION sv.define(p text, measures boolean, retention bigint)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF measures THEN
        PERFORM streamforge.create_pipeline(p, ARRAY['p0', 'p1'],
            ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 12, 5),
                  streamforge.session('g', 4)],
            lateness => 6, retention => retention,
            measures => ARRAY['a', 'b', 'c NULL'],
            aggregates => ARRAY['count', 'count_distinct(a)', 'sum(a)',
                'percentile_disc(b, 0.5) AS med', 'approx_percentile(b, 0.9) AS p90',
                'approx_count_distinct(b) AS acd', 'max_by(a, b)', 'min(c)',
                'count(c)', 'first(c)', 'avg(b)']);
    ELSE
        PERFORM streamforge.create_pipeline(p, ARRAY['p0', 'p1'],
            ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 12, 5),
                  streamforge.session('g', 4)],
            lateness => 6, retention => retention);
    END IF;
END $$;

CREATE FUNCTION sv.setup(scenario text, seed float8, measures boolean,
    retention bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM sv.define(scenario, measures, retention);
    PERFORM sv.define(scenario || '_ref', measures, retention);
    INSERT INTO sv.state VALUES (scenario, seed, 0, 0, 0, 0, 0, 0);
END $$;

-- one round of calls, the same to both pipelines; their changes compared
CREATE FUNCTION sv.round(sc text, r int, ncalls int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    p text := sc;
    q text := sc || '_ref';
    st sv.state;
    has_measures boolean;
    part int;
    batch streamforge.measures_delivery[];
    plain streamforge.delivery[];
    nb int;
    dup bigint;
    eid text;
    k text;
    t bigint;
    a bigint;
    b bigint;
    c bigint;
    x text;
    y text;
BEGIN
    SELECT * INTO st FROM sv.state s WHERE s.scenario = sc;
    PERFORM setseed(st.seed);
    has_measures := sc LIKE 'sv3m%';
    FOR i IN 1 .. ncalls LOOP
        part := floor(random() * 2)::int;
        IF random() < 0.15 THEN
            st.clock := st.clock + floor(random() * 9)::bigint;
            SELECT string_agg(ch::text, ';' ORDER BY ch.seq) INTO x
              FROM streamforge.advance(p, 'p' || part, st.clock) ch;
            SELECT string_agg(ch::text, ';' ORDER BY ch.seq) INTO y
              FROM streamforge.advance(q, 'p' || part, st.clock) ch;
        ELSE
            -- a call of 1 to 6 deliveries, across window boundaries
            nb := 1 + floor(random() * 6)::int;
            batch := '{}';
            plain := '{}';
            FOR j IN 1 .. nb LOOP
                IF random() < 0.15 AND st.n > 0 THEN
                    dup := 1 + floor(random() * st.n)::bigint;
                    SELECT 'e' || e.n, e.k, e.t, e.a, e.b, e.c
                      INTO STRICT eid, k, t, a, b, c
                      FROM sv.ev e WHERE e.scenario = sc AND e.n = dup;
                ELSE
                    st.n := st.n + 1;
                    eid := 'e' || st.n;
                    k := (ARRAY['x', 'y', 'z', ''])[1 + floor(random() * 4)::int];
                    t := st.clock - 12 + floor(random() * 20)::bigint;
                    a := floor(random() * 21)::bigint - 10;
                    b := (ARRAY[4611686018427387903, -9223372036854775808,
                                9223372036854775807, 3, 1, 0, -5])[1 + floor(random() * 7)::int];
                    c := CASE WHEN random() < 0.3 THEN NULL
                              ELSE floor(random() * 5)::bigint END;
                    INSERT INTO sv.ev VALUES (sc, st.n, k, t, a, b, c);
                END IF;
                IF part = 0 THEN
                    batch := batch || ROW('p0', st.off0, eid, k, t, ARRAY[a, b, c])::streamforge.measures_delivery;
                    plain := plain || ROW('p0', st.off0, eid, k, t, a)::streamforge.delivery;
                    st.off0 := st.off0 + 1;
                ELSE
                    batch := batch || ROW('p1', st.off1, eid, k, t, ARRAY[a, b, c])::streamforge.measures_delivery;
                    plain := plain || ROW('p1', st.off1, eid, k, t, a)::streamforge.delivery;
                    st.off1 := st.off1 + 1;
                END IF;
            END LOOP;
            IF has_measures THEN
                SELECT string_agg(ch::text, ';' ORDER BY ch.seq) INTO x
                  FROM streamforge.ingest_measures_batch(p, batch) ch;
                SELECT string_agg(ch::text, ';' ORDER BY ch.seq) INTO y
                  FROM streamforge.ingest_measures_batch(q, batch) ch;
            ELSE
                SELECT string_agg(ch::text, ';' ORDER BY ch.seq) INTO x
                  FROM streamforge.ingest_batch(p, plain) ch;
                SELECT string_agg(ch::text, ';' ORDER BY ch.seq) INTO y
                  FROM streamforge.ingest_batch(q, plain) ch;
            END IF;
        END IF;
        IF x IS DISTINCT FROM y THEN
            INSERT INTO sv.mismatch VALUES (sc, r, 'changes of call ' || i);
        END IF;
        IF random() < 0.05 THEN
            -- a call rolled back, in the compacted pipeline only
            BEGIN
                IF has_measures THEN
                    PERFORM count(*) FROM streamforge.ingest_measures(p, 'p0',
                        st.off0, 'rolled back ' || r || '.' || i, 'x', st.clock,
                        ARRAY[99, 99, 99]);
                ELSE
                    PERFORM count(*) FROM streamforge.ingest(p, 'p0', st.off0,
                        'rolled back ' || r || '.' || i, 'x', st.clock, 99);
                END IF;
                RAISE EXCEPTION 'roll back';
            EXCEPTION WHEN raise_exception THEN
                st.rollbacks := st.rollbacks + 1;
            END;
        END IF;
        IF random() < 0.08 THEN
            PERFORM streamforge.compact(p, 0);
            st.compactions := st.compactions + 1;
        END IF;
    END LOOP;
    -- the round ends with a snapshot half the time: else the journal since
    -- the last one replays on top of it
    IF random() < 0.5 THEN
        PERFORM streamforge.compact(p, 0);
        st.compactions := st.compactions + 1;
    END IF;
    st.seed := random() * 2 - 1;
    UPDATE sv.state SET seed = st.seed, clock = st.clock, off0 = st.off0,
        off1 = st.off1, n = st.n, compactions = st.compactions,
        rollbacks = st.rollbacks
     WHERE scenario = sc;
END $$;

-- in a new backend: both pipelines load (one from its snapshot), and read
-- the same
CREATE FUNCTION sv.compare(scenario text, r int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    p text := scenario;
    q text := scenario || '_ref';
BEGIN
    IF streamforge.checkpoint(p) IS DISTINCT FROM streamforge.checkpoint(q) THEN
        INSERT INTO sv.mismatch VALUES (scenario, r, 'checkpoint');
    END IF;
    IF (SELECT array_agg(x::text ORDER BY x.late_seq) FROM streamforge.late_events(p) x)
       IS DISTINCT FROM
       (SELECT array_agg(x::text ORDER BY x.late_seq) FROM streamforge.late_events(q) x) THEN
        INSERT INTO sv.mismatch VALUES (scenario, r, 'late events');
    END IF;
    IF (SELECT array_agg(x::text ORDER BY x::text) FROM streamforge.visible(p) x)
       IS DISTINCT FROM
       (SELECT array_agg(x::text ORDER BY x::text) FROM streamforge.visible(q) x) THEN
        INSERT INTO sv.mismatch VALUES (scenario, r, 'visible');
    END IF;
END $$;

CREATE FUNCTION sv.step(r int, ncalls int) RETURNS void LANGUAGE sql AS $$
    SELECT sv.round(scenario, r, ncalls) FROM sv.state ORDER BY scenario;
$$;
CREATE FUNCTION sv.check(r int) RETURNS void LANGUAGE sql AS $$
    SELECT sv.compare(scenario, r) FROM sv.state ORDER BY scenario;
$$;

SELECT sv.setup('sv3m_ret', 0.31, true, 15);
SELECT sv.setup('sv3m_all', -0.42, true, NULL);
SELECT sv.setup('sv3r_only', 0.17, false, 10);
SELECT sv.setup('sv3r_lowered', 0.58, false, 8);

SELECT sv.step(1, 60);
\c -
SELECT sv.check(1);
SELECT sv.step(2, 60);
\c -
SELECT sv.check(2);
-- definition changes, each stored as a new snapshot that is decoded
-- before it is stored (both pipelines: the definitions stay alike): the
-- retention of sv3r_lowered is lowered (its partitions' first offsets are
-- past 0), sv3m_all gets a window, backfilled from what it remembers
SELECT count(*) >= 0 AS lowered FROM unnest(ARRAY['sv3r_lowered', 'sv3r_lowered_ref']) AS p,
    LATERAL streamforge.set_retention(p, 5::bigint);
SELECT count(*) >= 0 AS added FROM unnest(ARRAY['sv3m_all', 'sv3m_all_ref']) AS p,
    LATERAL streamforge.add_window(p, streamforge.fixed('h', 7));
SELECT min(first_offset) > 0 AS past_zero FROM (
    SELECT (streamforge.inspect_checkpoint(streamforge.checkpoint('sv3r_lowered'))
            -> 'sources' -> 0 ->> 'base')::bigint AS first_offset) s;
SELECT sv.step(3, 60);
\c -
SELECT sv.check(3);
SELECT sv.step(4, 80);
\c -
SELECT sv.check(4);
SELECT sv.step(5, 80);
\c -
SELECT sv.check(5);

-- what the scenarios did, and that they agreed throughout
SELECT scenario, n > 150 AS many_events, compactions >= 5 AS compacted,
       x.late_events > 0 AS some_late, x.duplicate_ids > 0 AS some_duplicates,
       rollbacks > 0 AS some_rollbacks, x.forgotten_offsets > 0 AS forgot
  FROM sv.state, LATERAL streamforge.stats(scenario || '_ref') x
 ORDER BY scenario;
SELECT * FROM sv.mismatch ORDER BY scenario, round, what;

-- the snapshots are binary, version 3; a pipeline with neither retention
-- nor measures keeps version 2
SELECT streamforge.create_pipeline('sv_plain', ARRAY['p'],
    ARRAY[streamforge.fixed('f', 10)]);
SELECT count(*) FROM streamforge.ingest('sv_plain', 'p', 0, 'e', 'k', 1, 1);
SELECT streamforge.compact(p, 0) FROM unnest(ARRAY['sv3m_ret', 'sv3m_all', 'sv3r_only',
    'sv3r_lowered', 'sv_plain']) AS p;
SELECT name, encode(substring(snapshot FROM 1 FOR 7), 'escape') AS magic,
       get_byte(snapshot, 8) AS format
  FROM streamforge.pipeline
 WHERE name IN ('sv3m_ret', 'sv3m_all', 'sv3r_only', 'sv3r_lowered', 'sv_plain')
 ORDER BY name;

-- a damaged version 3 snapshot is an error that names the pipeline, not a
-- crash; so is one whose definition is not the pipeline's (another
-- pipeline's snapshot planted)
CREATE TABLE sv.saved AS SELECT name, snapshot FROM streamforge.pipeline
 WHERE name IN ('sv3m_ret', 'sv3m_all');
UPDATE streamforge.pipeline
   SET snapshot = overlay(snapshot PLACING '\xff'::bytea FROM 120 FOR 1)
 WHERE name = 'sv3m_ret';
UPDATE streamforge.pipeline
   SET snapshot = (SELECT snapshot FROM sv.saved WHERE name = 'sv3m_ret')
 WHERE name = 'sv3m_all';
\c -
SELECT streamforge.watermark('sv3m_ret');
SELECT streamforge.watermark('sv3m_all');
UPDATE streamforge.pipeline p SET snapshot = s.snapshot
  FROM sv.saved s WHERE s.name = p.name;
\c -
SELECT sv.check(6);
SELECT * FROM sv.mismatch ORDER BY scenario, round, what;

-- what 0.1.0 - 0.3.0 stored for these pipelines, the checkpoint as the
-- snapshot (their journals empty after the compactions above), still
-- loads; the next compaction stores format 3
UPDATE streamforge.pipeline p SET snapshot = streamforge.checkpoint(p.name)
 WHERE name IN ('sv3m_ret', 'sv3m_all', 'sv3r_only', 'sv3r_lowered');
SELECT name, encode(substring(snapshot FROM 1 FOR 7), 'escape') AS magic,
       (SELECT count(*) FROM streamforge.journal j WHERE j.pipeline_id = p.id) AS journal_rows
  FROM streamforge.pipeline p
 WHERE name IN ('sv3m_ret', 'sv3m_all', 'sv3r_only', 'sv3r_lowered') ORDER BY name;
\c -
SELECT sv.check(7);
SELECT streamforge.compact(p, 0) FROM unnest(ARRAY['sv3m_ret', 'sv3m_all',
    'sv3r_only', 'sv3r_lowered']) AS p;
SELECT name, get_byte(snapshot, 8) AS format FROM streamforge.pipeline
 WHERE name IN ('sv3m_ret', 'sv3m_all', 'sv3r_only', 'sv3r_lowered') ORDER BY name;
\c -
SELECT sv.check(8);
SELECT * FROM sv.mismatch ORDER BY scenario, round, what;

SELECT count(*) FROM sv.state, LATERAL (
    SELECT streamforge.drop_pipeline(scenario)
    UNION ALL SELECT streamforge.drop_pipeline(scenario || '_ref')) d;
SELECT streamforge.drop_pipeline('sv_plain');
DROP SCHEMA sv CASCADE;
