-- test/model/twins.sql
--
-- Support code for the metamorphic tests (sql/random_batch.sql,
-- random_reorder.sql, random_txn.sql): run the same generated operations
-- (sfm.gen in model.sql, which must be loaded first) through pipelines
-- that must behave identically, and compare every outcome, every change
-- and the whole observable state.  The first difference raises an error
-- whose DETAIL names the operation and shows both sides.

-- The outcome of one call: 'ok' or the SQLSTATE, and the changes as text
-- (seq and op included) in the order returned.
CREATE TYPE sfm.outcome AS (state text, changes text[]);

CREATE FUNCTION sfm.try_op(pl text, o sfm.ops) RETURNS sfm.outcome
LANGUAGE plpgsql AS $$
DECLARE
    res sfm.outcome;
BEGIN
    res.state := 'ok';
    BEGIN
        res.changes := (SELECT coalesce(array_agg(ROW(c.seq, c.op, c.window_name, c.key,
                                      c.window_start, c.window_end, c.count, c.sum, c.min,
                                      c.max)::text ORDER BY c.n), '{}')
                          FROM sfm.engine_op(pl, o) WITH ORDINALITY AS c(seq, op,
                               window_name, key, window_start, window_end, count, sum,
                               min, max, n));
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS res.state = RETURNED_SQLSTATE;
        res.changes := '{}';
    END;
    RETURN res;
END $$;

CREATE FUNCTION sfm.try_batch(pl text, d streamforge.delivery[]) RETURNS sfm.outcome
LANGUAGE plpgsql AS $$
DECLARE
    res sfm.outcome;
BEGIN
    res.state := 'ok';
    BEGIN
        res.changes := (SELECT coalesce(array_agg(ROW(c.seq, c.op, c.window_name, c.key,
                                      c.window_start, c.window_end, c.count, c.sum, c.min,
                                      c.max)::text ORDER BY c.n), '{}')
                          FROM streamforge.ingest_batch(pl, d) WITH ORDINALITY AS c(seq, op,
                               window_name, key, window_start, window_end, count, sum,
                               min, max, n));
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS res.state = RETURNED_SQLSTATE;
        res.changes := '{}';
    END;
    RETURN res;
END $$;

-- Compare two outcomes.
CREATE FUNCTION sfm.same_outcome(ctx text, what text, got sfm.outcome, want sfm.outcome)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF got.state IS DISTINCT FROM want.state THEN
        PERFORM sfm.fail(ctx, what || ': different outcome',
                         format('got %s, expected %s', got.state, want.state));
    END IF;
    PERFORM sfm.same(ctx, what || ': changes', got.changes, want.changes);
END $$;

-- Every observable view of a pipeline, as one list of text rows.
CREATE FUNCTION sfm.e_state(pl text) RETURNS text[] LANGUAGE sql AS $$
    SELECT ARRAY['watermark ' || coalesce(streamforge.watermark(pl)::text, 'NULL'), 'live:']
           || coalesce(sfm.e_live(pl), '{}') || ARRAY['visible:']
           || coalesce(sfm.e_visible(pl), '{}') || ARRAY['late_events:']
           || coalesce(sfm.e_late(pl), '{}') || ARRAY['partitions:']
           || coalesce(sfm.e_parts(pl), '{}')
$$;

-- ----------------------------------------------------------------
-- (a) ingest_batch == the same single ingest calls
-- ----------------------------------------------------------------

-- Pipeline a gets single calls, pipeline b the same deliveries in random
-- batches of 1..maxbatch consecutive ingests.  A batch containing a
-- failing delivery (or, 10% of the time, a NULL element) must fail as a
-- whole with the SQLSTATE of its first failing element and change nothing;
-- then b gets the batch of the deliveries that succeeded on a.
CREATE FUNCTION sfm.run_batch(p_scn text, a text, b text, maxbatch int)
RETURNS TABLE (scenario text, ops int, batches int, batch_sizes text,
               failed_batches int, null_batches int, changes int)
LANGUAGE plpgsql AS $$
DECLARE
    opv sfm.ops[];
    n int;
    i int := 1;
    j int;
    sz int;
    nullpos int;
    oa sfm.outcome;
    ob sfm.outcome;
    want sfm.outcome;
    dels streamforge.delivery[];
    good streamforge.delivery[];
    d streamforge.delivery;
    ctx text;
    cp1 bytea;
    cp2 bytea;
    nbatch int := 0;
    nfail int := 0;
    nnull int := 0;
    nchg int := 0;
    sizes int[] := '{}';
BEGIN
    opv := ARRAY(SELECT o FROM sfm.ops o WHERE o.scn = p_scn ORDER BY o.i);
    n := cardinality(opv);
    PERFORM sfm.create(a, p_scn);
    PERFORM sfm.create(b, p_scn);
    WHILE i <= n LOOP
        IF opv[i].kind <> 'ingest' THEN
            ctx := format('pipelines %s/%s, operation %s: %s', a, b, i, sfm.op_text(opv[i]));
            oa := sfm.try_op(a, opv[i]);
            ob := sfm.try_op(b, opv[i]);
            PERFORM sfm.same_outcome(ctx, b, ob, oa);
            nchg := nchg + cardinality(oa.changes);
            i := i + 1;
        ELSE
            sz := sfm.rint(1, maxbatch);
            nullpos := CASE WHEN random() < 0.1 THEN sfm.rint(1, sz) END;
            want := ROW('ok', '{}');
            dels := '{}';
            good := '{}';
            j := i;
            WHILE j <= n AND j < i + sz AND opv[j].kind = 'ingest' LOOP
                IF nullpos = j - i + 1 THEN
                    dels := array_append(dels, NULL::streamforge.delivery);
                    IF want.state = 'ok' THEN
                        want.state := '22004';
                    END IF;
                END IF;
                d := ROW(opv[j].part, opv[j].off, opv[j].eid, opv[j].key, opv[j].t, opv[j].v);
                dels := array_append(dels, d);
                oa := sfm.try_op(a, opv[j]);
                IF oa.state = 'ok' THEN
                    good := array_append(good, d);
                    want.changes := want.changes || oa.changes;
                ELSIF want.state = 'ok' THEN
                    want.state := oa.state;
                END IF;
                j := j + 1;
            END LOOP;
            ctx := format('pipelines %s/%s, batch of operations %s..%s: %s', a, b, i, j - 1, dels);
            nbatch := nbatch + 1;
            sizes := array_append(sizes, cardinality(dels));
            IF want.state <> 'ok' THEN
                -- the whole batch fails with its first error, changing nothing
                nfail := nfail + 1;
                nnull := nnull + (nullpos IS NOT NULL AND nullpos <= j - i)::int;
                cp1 := streamforge.checkpoint(b);
                ob := sfm.try_batch(b, dels);
                PERFORM sfm.same_outcome(ctx, 'failing batch', ob, ROW(want.state, '{}')::sfm.outcome);
                cp2 := streamforge.checkpoint(b);
                IF cp1 IS DISTINCT FROM cp2 THEN
                    PERFORM sfm.fail(ctx, 'a failed batch changed the checkpoint', '');
                END IF;
                ctx := format('pipelines %s/%s, batch of operations %s..%s without failures: %s',
                              a, b, i, j - 1, good);
            END IF;
            ob := sfm.try_batch(b, good);
            PERFORM sfm.same_outcome(ctx, 'batch', ob, ROW('ok', want.changes)::sfm.outcome);
            nchg := nchg + cardinality(want.changes);
            i := j;
        END IF;
        PERFORM sfm.same(ctx, 'state of the batch pipeline', sfm.e_state(b), sfm.e_state(a));
    END LOOP;
    RETURN QUERY SELECT p_scn, n, nbatch,
        (SELECT string_agg(format('%s:%s', s, c), ' ' ORDER BY s)
           FROM (SELECT s, count(*) AS c FROM unnest(sizes) s GROUP BY s) x),
        nfail, nnull, nchg;
END $$;

-- Run every operation of the scenario again on two pipelines that must be
-- in the same state (after a reconnection, which makes both reload from
-- their persisted state): every delivery is now a replay or a conflict,
-- and both pipelines must answer alike and end in the same state.
CREATE FUNCTION sfm.replay_pair(p_scn text, a text, b text)
RETURNS TABLE (scenario text, ops int, ok int, failed int, changes int)
LANGUAGE plpgsql AS $$
DECLARE
    o sfm.ops;
    oa sfm.outcome;
    ob sfm.outcome;
    ctx text;
    nok int := 0;
    nfail int := 0;
    nchg int := 0;
BEGIN
    PERFORM sfm.same(format('pipelines %s/%s after reconnecting', a, b),
                     'state of ' || b, sfm.e_state(b), sfm.e_state(a));
    FOR o IN SELECT * FROM sfm.ops x WHERE x.scn = p_scn ORDER BY x.i LOOP
        ctx := format('pipelines %s/%s, replaying operation %s: %s', a, b, o.i, sfm.op_text(o));
        oa := sfm.try_op(a, o);
        ob := sfm.try_op(b, o);
        PERFORM sfm.same_outcome(ctx, b, ob, oa);
        IF oa.state = 'ok' THEN nok := nok + 1; ELSE nfail := nfail + 1; END IF;
        nchg := nchg + cardinality(oa.changes);
    END LOOP;
    PERFORM sfm.same(format('pipelines %s/%s after the replay', a, b),
                     'state of ' || b, sfm.e_state(b), sfm.e_state(a));
    RETURN QUERY SELECT p_scn, nok + nfail, nok, nfail, nchg;
END $$;

-- ----------------------------------------------------------------
-- (c) permuted declarations change nothing
-- ----------------------------------------------------------------

-- Twin 0 is declared in the scenario's order, twins 1..k with random
-- permutations of the partition and window lists.  Every outcome and
-- change (seq included) and the whole state must be identical after every
-- operation.  Half way, each twin restores twin 0's checkpoint (an
-- equivalent definition), which must leave its state as it is.
CREATE FUNCTION sfm.run_twins(p_scn text, base text, ntwins int)
RETURNS TABLE (scenario text, twins int, declarations text, ops int,
               changes int, restores int)
LANGUAGE plpgsql AS $$
DECLARE
    opv sfm.ops[];
    n int;
    pl text[] := '{}';
    decl text[] := '{}';
    wp int[];
    pp int[];
    o0 sfm.outcome;
    ok sfm.outcome;
    ctx text;
    st text[];
    cp bytea;
    nchg int := 0;
    nrest int := 0;
BEGIN
    opv := ARRAY(SELECT o FROM sfm.ops o WHERE o.scn = p_scn ORDER BY o.i);
    n := cardinality(opv);
    FOR k IN 0..ntwins LOOP
        pl := array_append(pl, format('%s_%s', base, k));
        IF k = 0 THEN
            wp := NULL;
            pp := NULL;
        ELSE
            wp := sfm.perm((SELECT count(*)::int FROM sfm.win w WHERE w.scn = p_scn));
            pp := sfm.perm((SELECT cardinality(s.parts) FROM sfm.scenario s WHERE s.scn = p_scn));
        END IF;
        PERFORM sfm.create(pl[k + 1], p_scn, wp, pp);
        decl := array_append(decl, format('%s%s',
            sfm.parts(p_scn, pp),
            (SELECT array_agg(d.name) FROM unnest(sfm.wdefs(p_scn, wp)) d)));
    END LOOP;
    FOR i IN 1..n LOOP
        ctx := format('twins %s, declarations %s, operation %s: %s', pl, decl, i, sfm.op_text(opv[i]));
        o0 := sfm.try_op(pl[1], opv[i]);
        nchg := nchg + cardinality(o0.changes);
        st := sfm.e_state(pl[1]);
        FOR k IN 2..ntwins + 1 LOOP
            ok := sfm.try_op(pl[k], opv[i]);
            PERFORM sfm.same_outcome(ctx, pl[k], ok, o0);
            PERFORM sfm.same(ctx, 'state of ' || pl[k], sfm.e_state(pl[k]), st);
        END LOOP;
        IF i = n / 2 THEN
            cp := streamforge.checkpoint(pl[1]);
            FOR k IN 2..ntwins + 1 LOOP
                PERFORM streamforge.restore(pl[k], cp);
                PERFORM sfm.same(ctx, 'state of ' || pl[k] || ' after restoring ' || pl[1] || '''s checkpoint',
                                 sfm.e_state(pl[k]), st);
                nrest := nrest + 1;
            END LOOP;
        END IF;
    END LOOP;
    FOR k IN 1..ntwins + 1 LOOP
        PERFORM streamforge.drop_pipeline(pl[k]);
    END LOOP;
    RETURN QUERY SELECT p_scn, ntwins + 1, array_to_string(decl, ' '), n, nchg, nrest;
END $$;

-- ----------------------------------------------------------------
-- (b) splitting a stream across transactions changes nothing
-- ----------------------------------------------------------------

-- Outcomes per run and operation, and final states per run.
CREATE TABLE sfm.log (
    run text, i int, outcome sfm.outcome,
    PRIMARY KEY (run, i)
);
CREATE TABLE sfm.snap (
    run text PRIMARY KEY, state text[], checkpoint bytea
);

-- Apply operations lo..hi of a scenario, logging their outcomes (in the
-- caller's transaction).
CREATE FUNCTION sfm.apply_range(p_scn text, pl text, run text, lo int, hi int)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    o sfm.ops;
    n int := 0;
BEGIN
    FOR o IN SELECT * FROM sfm.ops x WHERE x.scn = p_scn AND x.i BETWEEN lo AND hi ORDER BY x.i LOOP
        INSERT INTO sfm.log VALUES (run, o.i, sfm.try_op(pl, o));
        n := n + 1;
    END LOOP;
    RETURN n;
END $$;

-- Apply operations lo..hi in random chunks of 1..maxchunk operations, one
-- transaction each.  A quarter of the chunks are first applied and rolled
-- back, then applied again: a rolled-back call never happened.
CREATE PROCEDURE sfm.apply_chunked(p_scn text, pl text, run text, lo int, hi int,
                                   maxchunk int)
LANGUAGE plpgsql AS $$
DECLARE
    a int := lo;
    b int;
BEGIN
    WHILE a <= hi LOOP
        b := least(hi, a + sfm.rint(1, maxchunk)::int - 1);
        IF random() < 0.25 THEN
            PERFORM sfm.apply_range(p_scn, pl, run, a, b);
            ROLLBACK;
        END IF;
        PERFORM sfm.apply_range(p_scn, pl, run, a, b);
        COMMIT;
        a := b + 1;
    END LOOP;
END $$;

CREATE FUNCTION sfm.snapshot(pl text, run text) RETURNS void LANGUAGE sql AS $$
    INSERT INTO sfm.snap VALUES (run, sfm.e_state(pl), streamforge.checkpoint(pl));
$$;

-- Compare the outcomes and final state of two runs.
CREATE FUNCTION sfm.compare_runs(p_scn text, run text, ref text)
RETURNS TABLE (scenario text, ops bigint, changes bigint, errors bigint,
               same_checkpoint boolean)
LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT o.i, o AS op, x.outcome AS got, y.outcome AS want
               FROM sfm.ops o
               LEFT JOIN sfm.log x ON x.run = compare_runs.run AND x.i = o.i
               LEFT JOIN sfm.log y ON y.run = ref AND y.i = o.i
              WHERE o.scn = p_scn ORDER BY o.i LOOP
        IF r.got IS NULL OR r.want IS NULL THEN
            PERFORM sfm.fail(format('operation %s: %s', r.i, sfm.op_text(r.op)),
                             'operation missing from a run', format('%s: %s, %s: %s', run, r.got, ref, r.want));
        END IF;
        PERFORM sfm.same_outcome(format('run %s vs %s, operation %s: %s', run, ref, r.i, sfm.op_text(r.op)),
                                 run, r.got, r.want);
    END LOOP;
    IF (SELECT count(*) FROM sfm.log l WHERE l.run = compare_runs.run)
       <> (SELECT count(*) FROM sfm.ops o WHERE o.scn = p_scn) THEN
        PERFORM sfm.fail(format('run %s', run), 'operations logged more than once', '');
    END IF;
    PERFORM sfm.same(format('run %s vs %s: final state', run, ref), 'state',
                     (SELECT state FROM sfm.snap WHERE snap.run = compare_runs.run),
                     (SELECT state FROM sfm.snap WHERE snap.run = ref));
    -- the same state gives identical checkpoint bytes
    SELECT s1.checkpoint AS c1, s2.checkpoint AS c2 INTO r
      FROM sfm.snap s1, sfm.snap s2
     WHERE s1.run = compare_runs.run AND s2.run = ref;
    IF r.c1 IS DISTINCT FROM r.c2 THEN
        PERFORM sfm.fail(format('run %s vs %s: final state', run, ref),
            'checkpoint bytes differ',
            format(E'%s: %s bytes, %s: %s bytes\n%s: %s\n%s: %s', run, length(r.c1), ref, length(r.c2),
                   run, left(streamforge.inspect_checkpoint(r.c1)::text, 2000),
                   ref, left(streamforge.inspect_checkpoint(r.c2)::text, 2000)));
    END IF;
    RETURN QUERY
        SELECT p_scn, count(*),
               sum(cardinality((l.outcome).changes))::bigint,
               count(*) FILTER (WHERE (l.outcome).state <> 'ok'),
               (SELECT s1.checkpoint = s2.checkpoint FROM sfm.snap s1, sfm.snap s2
                 WHERE s1.run = compare_runs.run AND s2.run = ref)
          FROM sfm.log l WHERE l.run = ref;
END $$;
