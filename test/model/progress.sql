--
-- Built-in progress against explicit advance calls (docs/progress.md,
-- issue 26).  Load after model.sql.
--
-- sfm.with_advances(src, dst, n) writes scenario dst: the operations of
-- src with, after each one the model accepts, the explicit
-- advance(partition, event_time - n) that out_of_orderness => n implies.
-- run_model on dst checks the engine against the model on that trace.
--
-- sfm.run_builtin(src, n, pl_builtin, pl_explicit, lo, hi) runs src's
-- operations on a pipeline with out_of_orderness n (consecutive ingests
-- sometimes as one ingest_batch) and, side by side, on a pipeline without
-- it that gets the explicit advance after each delivery that was
-- accepted, and requires the same outcome, the same changes in the same
-- order with the same seq, and the same live(), visible(), late_events(),
-- partitions() and watermark() after every operation.

CREATE FUNCTION sfm.with_advances(p_src text, p_dst text, n bigint)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    o sfm.ops;
    a sfm.ops;
    expect text;
    i int := 0;
    gen text := p_dst || ' (generator)';
BEGIN
    DELETE FROM sfm.win WHERE scn = p_dst;
    DELETE FROM sfm.scenario WHERE scn = p_dst;
    DELETE FROM sfm.ops WHERE scn = p_dst;
    INSERT INTO sfm.scenario SELECT p_dst, s.parts, s.lateness, s.keys, s.retention
      FROM sfm.scenario s WHERE s.scn = p_src;
    INSERT INTO sfm.win SELECT p_dst, w.pos, w.name, w.kind, w.size, w.step, w.gap
      FROM sfm.win w WHERE w.scn = p_src;
    PERFORM sfm.model_reset(gen, p_src);
    FOR o IN SELECT * FROM sfm.ops x WHERE x.scn = p_src ORDER BY x.i LOOP
        expect := sfm.model_op(gen, o);
        IF expect NOT LIKE 'SF%' THEN
            PERFORM sfm.model_forget(gen);
        END IF;
        i := i + 1;
        o.scn := p_dst;
        o.i := i;
        INSERT INTO sfm.ops VALUES (o.*);
        IF expect = 'accepted' AND o.t::numeric - n >= -9223372036854775808 THEN
            a := ROW(p_dst, i + 1, 'advance', o.part, NULL, NULL, NULL,
                     o.t - n, NULL, 'advance');
            PERFORM sfm.model_op(gen, a);
            PERFORM sfm.model_forget(gen);
            i := i + 1;
            INSERT INTO sfm.ops VALUES (a.*);
        END IF;
    END LOOP;
END $$;

-- The changes of one call as text, in the order returned
CREATE FUNCTION sfm.chg_text(c streamforge.change[]) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(array_agg(x::text ORDER BY n), '{}')
      FROM unnest(c) WITH ORDINALITY AS x(seq, op, window_name, key,
             window_start, window_end, count, sum, min, max, n)
$$;

CREATE TABLE sfm.builtin_summary (
    pl          text PRIMARY KEY,
    ops         bigint NOT NULL DEFAULT 0,
    batches     bigint NOT NULL DEFAULT 0,
    implied     bigint NOT NULL DEFAULT 0,   -- explicit advances inserted
    moved       bigint NOT NULL DEFAULT 0,   -- of which returned changes
    changes     bigint NOT NULL DEFAULT 0
);

CREATE PROCEDURE sfm.run_builtin(p_src text, n bigint, pb text, pe text,
                                 lo int DEFAULT 1, hi int DEFAULT 2147483647,
                                 p_batch float8 DEFAULT 0.3)
LANGUAGE plpgsql AS $$
DECLARE
    opv sfm.ops[];
    o sfm.ops;
    k int;
    m int;
    ctx text;
    got_b text;
    got_e text;
    msg text;
    cb streamforge.change[];
    ce streamforge.change[];
    c1 streamforge.change[];
    acc_before bigint;
    nimplied int;
    nmoved int;
BEGIN
    opv := ARRAY(SELECT x FROM sfm.ops x
                  WHERE x.scn = p_src AND x.i BETWEEN lo AND hi ORDER BY x.i);
    IF lo = 1 THEN
        PERFORM sfm.create(pb, p_src);
        PERFORM streamforge.set_out_of_orderness(pb, n);
        PERFORM sfm.create(pe, p_src);
        INSERT INTO sfm.builtin_summary (pl) VALUES (pb);
    END IF;
    k := 1;
    WHILE k <= cardinality(opv) LOOP
        o := opv[k];
        -- a run of m consecutive new deliveries goes to pb as one batch
        m := 1;
        IF o.kind = 'ingest' AND random() < p_batch THEN
            WHILE k + m <= cardinality(opv) AND m < 8
                  AND opv[k + m].kind = 'ingest'
                  AND opv[k + m].intent IN ('new', 'dup', 'replay') LOOP
                m := m + 1;
            END LOOP;
            IF o.intent NOT IN ('new', 'dup', 'replay') THEN
                m := 1;
            END IF;
        END IF;
        ctx := format('pipelines %s/%s, operations %s..%s: %s', pb, pe, o.i,
                      opv[k + m - 1].i, sfm.op_text(o));

        got_b := 'ok';
        BEGIN
            IF m > 1 THEN
                cb := ARRAY(SELECT c FROM streamforge.ingest_batch(pb, ARRAY(
                        SELECT ROW(x.part, x.off, x.eid, x.key, x.t, x.v)::streamforge.delivery
                          FROM unnest(opv[k:k + m - 1]) AS x ORDER BY x.i)) AS c);
            ELSE
                cb := ARRAY(SELECT c FROM sfm.engine_op(pb, o) AS c);
            END IF;
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS got_b = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
            cb := '{}';
        END;

        got_e := 'ok';
        ce := '{}';
        nimplied := 0;
        nmoved := 0;
        BEGIN
            FOR j IN k .. k + m - 1 LOOP
                SELECT s.accepted INTO acc_before FROM streamforge.stats(pe) s;
                c1 := ARRAY(SELECT c FROM sfm.engine_op(pe, opv[j]) AS c);
                ce := ce || c1;
                IF opv[j].kind = 'ingest'
                   AND (SELECT s.accepted FROM streamforge.stats(pe) s) > acc_before
                   AND opv[j].t::numeric - n >= -9223372036854775808 THEN
                    c1 := ARRAY(SELECT c FROM streamforge.advance(pe, opv[j].part,
                                                                  opv[j].t - n) AS c);
                    ce := ce || c1;
                    nimplied := nimplied + 1;
                    nmoved := nmoved + (cardinality(c1) > 0)::int;
                END IF;
            END LOOP;
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS got_e = RETURNED_SQLSTATE;
            ce := '{}';
        END;

        IF got_b <> got_e THEN
            PERFORM sfm.fail(ctx, 'different outcomes',
                             format('built-in %s (%s), explicit %s', got_b, msg, got_e));
        END IF;
        PERFORM sfm.same(ctx, 'changes', sfm.chg_text(cb), sfm.chg_text(ce));
        PERFORM sfm.same(ctx, 'live()', sfm.e_live(pb), sfm.e_live(pe));
        PERFORM sfm.same(ctx, 'visible()', sfm.e_visible(pb), sfm.e_visible(pe));
        PERFORM sfm.same(ctx, 'late_events()', sfm.e_late(pb), sfm.e_late(pe));
        PERFORM sfm.same(ctx, 'partitions()', sfm.e_parts(pb), sfm.e_parts(pe));
        PERFORM sfm.same(ctx, 'watermark()',
                         ARRAY[streamforge.watermark(pb)::text],
                         ARRAY[streamforge.watermark(pe)::text]);
        UPDATE sfm.builtin_summary s SET ops = s.ops + m,
            batches = s.batches + (m > 1)::int,
            implied = s.implied + CASE WHEN got_e = 'ok' THEN nimplied ELSE 0 END,
            moved = s.moved + CASE WHEN got_e = 'ok' THEN nmoved ELSE 0 END,
            changes = s.changes + cardinality(cb)
         WHERE s.pl = pb;
        k := k + m;
        COMMIT;
    END LOOP;
END $$;
