-- test/model/emit.sql
--
-- Support code for the randomized test of emit modes (sql/random_emit.sql,
-- docs/semantics.md, Emit modes), loaded after model.sql: run the same
-- generated operations (sfm.gen) through three pipelines of one scenario,
-- in modes 'update', 'update+final' and 'final', and check after every
-- operation that
--
--   1. the three outcomes (success or SQLSTATE) are the same;
--   2. 'update+final' emits exactly what 'update' emits (op, address,
--      values, in order) plus final changes, which come last;
--   3. 'final' emits exactly the final changes of 'update+final', and
--      nothing else, with consecutive seq numbers;
--   4. every final change has the values of the last upsert of its address
--      in 'update' mode (the last change of the address, and an upsert),
--      and no address is final twice;
--
-- and at the end that the final rows are exactly the addresses whose last
-- change in 'update' mode is an upsert and whose window the watermark has
-- passed by more than the lateness.  The first difference raises an error
-- (sfm.fail) naming the operation.

CREATE TABLE sfm.emit_last (
    run text, window_name text, key text, window_start bigint, window_end bigint,
    op text, count bigint, sum numeric, min bigint, max bigint,
    PRIMARY KEY (run, window_name, key, window_start, window_end));
CREATE TABLE sfm.emit_final (
    run text, window_name text, key text, window_start bigint, window_end bigint,
    count bigint, sum numeric, min bigint, max bigint, seq bigint,
    PRIMARY KEY (run, window_name, key, window_start, window_end));

-- One operation on pl: its outcome and changes (none on an error)
CREATE FUNCTION sfm.emit_try(pl text, o sfm.ops, OUT state text,
                             OUT changes streamforge.change[])
LANGUAGE plpgsql AS $$
BEGIN
    state := 'ok';
    BEGIN
        changes := (SELECT coalesce(array_agg(ROW(c.seq, c.op, c.window_name, c.key,
                                      c.window_start, c.window_end, c.count, c.sum,
                                      c.min, c.max)::streamforge.change ORDER BY c.n), '{}')
                      FROM sfm.engine_op(pl, o) WITH ORDINALITY AS c(seq, op,
                           window_name, key, window_start, window_end, count, sum,
                           min, max, n));
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE;
        changes := '{}';
    END;
END $$;

-- The changes as text without seq; only op ops (NULL: all but 'final')
CREATE FUNCTION sfm.emit_text(cs streamforge.change[], want text)
RETURNS text[] LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(array_agg(ROW(c.op, c.window_name, c.key, c.window_start,
                                  c.window_end, c.count, c.sum, c.min, c.max)::text
                              ORDER BY n), '{}')
      FROM unnest(cs) WITH ORDINALITY AS c(seq, op, window_name, key, window_start,
                                           window_end, count, sum, min, max, n)
     WHERE (want IS NULL AND c.op <> 'final') OR c.op = want
$$;

-- Create base_u, base_uf and base_f for scenario p_scn and run every
-- operation through the three; returns the number of operations that
-- succeeded, of changes in 'update' mode and of final rows.
CREATE FUNCTION sfm.run_emit(p_scn text, base text, OUT ok_ops bigint,
                             OUT update_changes bigint, OUT final_rows bigint)
LANGUAGE plpgsql AS $$
DECLARE
    o sfm.ops;
    u record;
    uf record;
    f record;
    c streamforge.change;
    l sfm.emit_last;
    ctx text;
    fseq bigint := 0;
    lateness bigint := (SELECT s.lateness FROM sfm.scenario s WHERE s.scn = p_scn);
    wm bigint;
BEGIN
    ok_ops := 0;
    update_changes := 0;
    DELETE FROM sfm.emit_last WHERE run = base;
    DELETE FROM sfm.emit_final WHERE run = base;
    PERFORM sfm.create(base || '_u', p_scn);
    PERFORM sfm.create(base || '_uf', p_scn);
    PERFORM sfm.create(base || '_f', p_scn);
    PERFORM count(*) FROM streamforge.set_emit(base || '_uf', 'update+final');
    PERFORM count(*) FROM streamforge.set_emit(base || '_f', 'final');

    FOR o IN SELECT * FROM sfm.ops x WHERE x.scn = p_scn ORDER BY x.i LOOP
        ctx := format('%s, op %s: %s', base, o.i, sfm.op_text(o));
        u := sfm.emit_try(base || '_u', o);
        uf := sfm.emit_try(base || '_uf', o);
        f := sfm.emit_try(base || '_f', o);
        -- 1
        IF u.state IS DISTINCT FROM uf.state OR u.state IS DISTINCT FROM f.state THEN
            PERFORM sfm.fail(ctx, 'different outcomes',
                             format('update %s, update+final %s, final %s',
                                    u.state, uf.state, f.state));
        END IF;
        ok_ops := ok_ops + (u.state = 'ok')::int;
        update_changes := update_changes + cardinality(u.changes);
        -- 2
        IF sfm.emit_text(uf.changes, NULL) IS DISTINCT FROM sfm.emit_text(u.changes, NULL) THEN
            PERFORM sfm.fail(ctx, 'update+final differs from update',
                             format('update+final %s, update %s', uf.changes, u.changes));
        END IF;
        IF EXISTS (SELECT 1 FROM unnest(uf.changes) WITH ORDINALITY AS x(seq, op, w, k, s, e,
                          cnt, sm, mn, mx, i)
                    WHERE x.op <> 'final' AND x.i > (SELECT min(y.i) FROM unnest(uf.changes)
                          WITH ORDINALITY AS y(seq, op, w, k, s, e, cnt, sm, mn, mx, i)
                          WHERE y.op = 'final')) THEN
            PERFORM sfm.fail(ctx, 'a final change before an upsert or retraction',
                             uf.changes::text);
        END IF;
        -- 3
        IF sfm.emit_text(f.changes, 'final') IS DISTINCT FROM sfm.emit_text(uf.changes, 'final')
           OR cardinality(sfm.emit_text(f.changes, 'final')) <> cardinality(f.changes) THEN
            PERFORM sfm.fail(ctx, 'final differs from the finals of update+final',
                             format('final %s, update+final %s', f.changes, uf.changes));
        END IF;
        FOREACH c IN ARRAY f.changes LOOP
            fseq := fseq + 1;
            IF c.seq <> fseq THEN
                PERFORM sfm.fail(ctx, 'seq not consecutive in final mode',
                                 format('got %s, expected %s', c.seq, fseq));
            END IF;
        END LOOP;
        -- 4: apply update's changes, then check each final change
        FOREACH c IN ARRAY u.changes LOOP
            INSERT INTO sfm.emit_last VALUES (base, c.window_name, c.key, c.window_start,
                c.window_end, c.op, c.count, c.sum, c.min, c.max)
            ON CONFLICT (run, window_name, key, window_start, window_end) DO UPDATE
               SET op = excluded.op, count = excluded.count, sum = excluded.sum,
                   min = excluded.min, max = excluded.max;
        END LOOP;
        FOREACH c IN ARRAY f.changes LOOP
            SELECT * INTO l FROM sfm.emit_last x
             WHERE x.run = base AND (x.window_name, x.key, x.window_start, x.window_end)
                   = (c.window_name, c.key, c.window_start, c.window_end);
            IF l.op IS DISTINCT FROM 'upsert'
               OR (l.count, l.sum, l.min, l.max) IS DISTINCT FROM (c.count, c.sum, c.min, c.max) THEN
                PERFORM sfm.fail(ctx, 'a final row is not the last upsert in update mode',
                                 format('final %s, last in update mode %s', c, l));
            END IF;
            BEGIN
                INSERT INTO sfm.emit_final VALUES (base, c.window_name, c.key,
                    c.window_start, c.window_end, c.count, c.sum, c.min, c.max, c.seq);
            EXCEPTION WHEN unique_violation THEN
                PERFORM sfm.fail(ctx, 'an address is final twice', c::text);
            END;
        END LOOP;
    END LOOP;

    -- the final rows are exactly the finalized buckets' last upserts
    wm := streamforge.watermark(base || '_u');
    IF EXISTS (
        (SELECT window_name, key, window_start, window_end, count, sum, min, max
           FROM sfm.emit_last
          WHERE run = base AND op = 'upsert' AND wm IS NOT NULL
            AND window_end::numeric + lateness < wm
         EXCEPT
         SELECT window_name, key, window_start, window_end, count, sum, min, max
           FROM sfm.emit_final WHERE run = base)
        UNION ALL
        (SELECT window_name, key, window_start, window_end, count, sum, min, max
           FROM sfm.emit_final WHERE run = base
         EXCEPT
         SELECT window_name, key, window_start, window_end, count, sum, min, max
           FROM sfm.emit_last
          WHERE run = base AND op = 'upsert' AND wm IS NOT NULL
            AND window_end::numeric + lateness < wm)) THEN
        PERFORM sfm.fail(base, 'the final rows are not the finalized buckets',
                         format('watermark %s', wm));
    END IF;
    SELECT count(*) INTO final_rows FROM sfm.emit_final WHERE run = base;
END $$;
