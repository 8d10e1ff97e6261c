-- test/model/ref.sql
--
-- A reference model of 0.3.0's semantics and a randomized driver that
-- compares the extension with it after every call (issue 38, items 10 and
-- 11).  Loaded by sql/random_model2*.sql with "\i test/model/ref.sql";
-- everything lives in schema "sfr".  docs/testing.md ("The reference
-- model") describes what it covers and how to run more traces.
--
-- The model is independent of the C code: plain SQL over tables of the
-- accepted events, deliveries, identities and late events.  After every
-- step of a call (one delivery, the advance that out_of_orderness implies
-- after it, an advance, a mark_idle) it recomputes every bucket from the
-- accepted events (fixed windows by floor division, sliding windows over
-- the multiples of the step, sessions as gaps-and-islands), with every
-- aggregate computed by PostgreSQL's own aggregate functions over the
-- bucket's events (exact numeric text), and derives the changes from
-- docs/semantics.md: the ready view (end <= watermark) against the rows
-- emitted so far (retractions, then upserts, each in address order), then
-- the buckets with watermark > end + lateness are finalized (a 'final'
-- change in 'update+final' and 'final', nothing in 'update').  The emit
-- mode only decides which of those changes are reported; the model's
-- emitted set is the same in every mode.
--
-- The model's state lives in ordinary tables in the transaction of the
-- call, so a rolled-back call or savepoint rolls the model back with the
-- engine: the oracle for rollbacks is the same code.
--
-- Pipelines of three kinds: "classic" (create_pipeline, one value),
-- "measures" (create_pipeline with measures and every aggregate), "agg"
-- (create_aggregate over a table, fed by INSERTs of one or several rows).

SET client_min_messages = warning;
-- the model's queries are small but their estimates are not: no JIT
SET jit = off;
DROP SCHEMA IF EXISTS sfr CASCADE;
CREATE SCHEMA sfr;
CREATE EXTENSION IF NOT EXISTS dblink;

-- ----------------------------------------------------------------
-- Configuration and state of the current trace (one pipeline)
-- ----------------------------------------------------------------

CREATE TABLE sfr.cfg (
    kind        text NOT NULL,          -- classic, measures, agg
    pl          text NOT NULL,
    lateness    bigint NOT NULL,
    ooo         bigint,                 -- out_of_orderness
    base        bigint NOT NULL,        -- agg: event time offset (seconds)
    parts       text[] NOT NULL,
    pid         bigint,                 -- pipeline id (notifications)
    channel     text,
    idle        boolean NOT NULL DEFAULT false,  -- has an idle_timeout
    tu          boolean NOT NULL DEFAULT false,  -- time_unit 1 second (_ts calls)
    ret         bigint                  -- retention (NULL: none)
);

CREATE TABLE sfr.win (
    pos int PRIMARY KEY, name text NOT NULL, kind text NOT NULL,
    size bigint, step bigint, gap bigint
);

CREATE TABLE sfr.st (
    wm          bigint,
    seq         bigint NOT NULL DEFAULT 0,
    late_seq    bigint NOT NULL DEFAULT 0,
    arr         bigint NOT NULL DEFAULT 0,
    mode        text NOT NULL,
    agg_off     bigint NOT NULL DEFAULT -1,  -- agg: last consumed offset
    agg_id      int NOT NULL DEFAULT 0,      -- agg: last row id used
    -- idle_timeout: the driver moved every partition's last delivery,
    -- report and watch two hours back (the timeout is about one hour),
    -- so the next write call or tick marks every active partition idle
    jump        boolean NOT NULL DEFAULT false,
    -- retention: the highest horizon watermark - lateness - retention
    -- reached so far (what is below it is forgotten for good)
    hz          bigint
);

CREATE TABLE sfr.part (
    part text PRIMARY KEY, consumed bigint NOT NULL DEFAULT -1,
    progress bigint, idle boolean NOT NULL DEFAULT false
);

CREATE TABLE sfr.deliv (
    part text, off bigint, eid text, key text, t bigint, m bigint[],
    PRIMARY KEY (part, off)
);

CREATE TABLE sfr.ident (eid text PRIMARY KEY, key text, t bigint, m bigint[]);

-- accepted (not late) events; arr is the order of acceptance
CREATE TABLE sfr.ev (arr bigint PRIMARY KEY, eid text, key text, t bigint, m bigint[]);

CREATE TABLE sfr.late (
    late_seq bigint PRIMARY KEY, part text, off bigint, eid text, key text,
    t bigint, v bigint, wm bigint
);

-- a bucket or row: address, contract columns (count and first measure),
-- and "ag", the text of its declared aggregates (measures: the jsonb;
-- agg: the typed row of the aggregate's view)
CREATE TABLE sfr.emitted (
    wname text, key text, ws bigint, we bigint, cnt bigint, sm numeric,
    mn bigint, mx bigint, ag text, PRIMARY KEY (wname, key, ws, we)
);
CREATE TABLE sfr.fin (wname text, key text, ws bigint, we bigint,
                      PRIMARY KEY (wname, key, ws, we));
CREATE TABLE sfr.res (
    wname text, key text, ws bigint, we bigint, cnt bigint, sm numeric,
    mn bigint, mx bigint, ag text, final boolean NOT NULL,
    PRIMARY KEY (wname, key, ws, we)
);
CREATE TABLE sfr.clog (
    seq bigint PRIMARY KEY, op text, wname text, key text, ws bigint,
    we bigint, cnt bigint, sm numeric, mn bigint, mx bigint, ag text
);
-- the changes of the current call, in order
CREATE TABLE sfr.out (
    ord serial PRIMARY KEY, seq bigint, op text, wname text, key text,
    ws bigint, we bigint, cnt bigint, sm numeric, mn bigint, mx bigint,
    ag text
);
-- scratch: the buckets of the current step
CREATE TABLE sfr.b (
    wname text, key text, ws bigint, we bigint, cnt bigint, sm numeric,
    mn bigint, mx bigint, ag text, PRIMARY KEY (wname, key, ws, we)
);

-- failures of the run (one per failing trace) and what ran
CREATE TABLE sfr.failure (seed int PRIMARY KEY, step int, what text, detail text);
CREATE TABLE sfr.ran (seed int PRIMARY KEY, kind text, mode text, steps int,
                      calls int, changes int, finals int, lates int,
                      rollbacks int, remote int, cold int, restores int,
                      multi_final int, jumps int NOT NULL DEFAULT 0);

CREATE FUNCTION sfr.floordiv(a bigint, b bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN a % b < 0 THEN a / b - 1 ELSE a / b END
$$;

CREATE FUNCTION sfr.rint(lo bigint, hi bigint) RETURNS bigint
LANGUAGE sql VOLATILE AS $$ SELECT lo + floor(random() * (hi - lo + 1))::bigint $$;

-- Every bucket of the accepted events that is not finalized, with its
-- aggregates.
CREATE FUNCTION sfr.m_buckets()
RETURNS TABLE (wname text, key text, ws bigint, we bigint, cnt bigint,
               sm numeric, mn bigint, mx bigint, ag text)
LANGUAGE sql STABLE AS $$
WITH memb AS (
    SELECT w.name, e.key, sfr.floordiv(e.t, w.size) * w.size AS s,
           sfr.floordiv(e.t, w.size) * w.size + w.size AS en, e.arr, e.t, e.m
      FROM sfr.win w CROSS JOIN sfr.ev e WHERE w.kind = 'fixed'
    UNION ALL
    SELECT w.name, e.key, g.s, g.s + w.size, e.arr, e.t, e.m
      FROM sfr.win w CROSS JOIN sfr.ev e
      CROSS JOIN LATERAL generate_series(
            -sfr.floordiv(-(e.t - w.size + 1), w.step) * w.step,
            sfr.floordiv(e.t, w.step) * w.step, w.step) AS g(s)
     WHERE w.kind = 'sliding'
    UNION ALL
    SELECT name, key, min(t) OVER isl, max(t + gap) OVER isl, arr, t, m
      FROM (SELECT name, key, arr, t, m, gap,
                   sum(brk) OVER (PARTITION BY name, key ORDER BY t, arr
                                  ROWS UNBOUNDED PRECEDING) AS island
              FROM (SELECT w.name, e.key, e.arr, e.t, e.m, w.gap,
                           CASE WHEN e.t <= max(e.t + w.gap) OVER (
                                    PARTITION BY w.name, e.key ORDER BY e.t, e.arr
                                    ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
                                THEN 0 ELSE 1 END AS brk
                      FROM sfr.win w CROSS JOIN sfr.ev e
                     WHERE w.kind = 'session') s0) s1
    WINDOW isl AS (PARTITION BY name, key, island)
)
SELECT b.name, b.key, b.s, b.en, count(*), sum(b.m[1]), min(b.m[1]), max(b.m[1]),
       CASE (SELECT kind FROM sfr.cfg)
       WHEN 'measures' THEN jsonb_build_object(
            'count', count(*),
            'sum_m1', sum(b.m[1]),
            'avg_m2', avg(b.m[2]),
            'min_m1', min(b.m[1]),
            'max_m2', max(b.m[2]),
            'var_pop_m1', var_pop(b.m[1]),
            'var_samp_m2', var_samp(b.m[2]),
            'stddev_pop_m2', stddev_pop(b.m[2]),
            'stddev_samp_m1', stddev_samp(b.m[1]),
            'first_m1', (array_agg(b.m[1] ORDER BY b.t, b.arr))[1],
            'last_m2', (array_agg(b.m[2] ORDER BY b.t DESC, b.arr DESC))[1],
            'big', count(*) FILTER (WHERE b.m[1] >= 3),
            'count_distinct_m2', count(DISTINCT b.m[2]),
            -- exact below 1025 distinct values (the model's buckets hold fewer)
            'approx_count_distinct_m2', count(DISTINCT b.m[2]),
            -- issue 44: PostgreSQL's ordered-set aggregates; arg-max as
            -- ORDER BY ... LIMIT 1 with the tie rule (the smallest value);
            -- the sketch is exact below 257 values (the model's buckets
            -- hold fewer, and their values are in its exact keys anyway)
            'percentile_cont_m1_25', percentile_cont(0.25) WITHIN GROUP (ORDER BY b.m[1]),
            'percentile_disc_m2_5', percentile_disc(0.5) WITHIN GROUP (ORDER BY b.m[2]),
            'approx_percentile_m2_9', (percentile_disc(0.9) WITHIN GROUP (ORDER BY b.m[2]))::float8,
            'max_by_m1_m2', (array_agg(b.m[1] ORDER BY b.m[2] DESC, b.m[1]))[1],
            'min_by_m2_m1', (array_agg(b.m[2] ORDER BY b.m[1], b.m[2]))[1])::text
       WHEN 'agg' THEN ROW(count(*), sum(b.m[1]::int), avg(b.m[2]::int),
            min(b.m[1]::int), max(b.m[2]::int), var_pop(b.m[1]::int),
            var_samp(b.m[2]::int), stddev_pop(b.m[1]::int),
            stddev_samp(b.m[2]::int), stddev(b.m[1]::int),
            variance(b.m[2]::int),
            count(*) FILTER (WHERE b.m[1]::int >= 3),
            count(DISTINCT b.m[2]::int))::text
       END
  FROM memb b
 WHERE NOT EXISTS (SELECT 1 FROM sfr.fin f WHERE f.wname = b.name
                      AND f.key = b.key AND f.ws = b.s AND f.we = b.en)
 GROUP BY b.name, b.key, b.s, b.en
$$;

-- Append a change of the current call (and apply it to the model's
-- changelog and results).
CREATE FUNCTION sfr.m_out(p_op text, r sfr.b) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    s bigint;
BEGIN
    UPDATE sfr.st SET seq = seq + 1 RETURNING seq INTO s;
    INSERT INTO sfr.out (seq, op, wname, key, ws, we, cnt, sm, mn, mx, ag)
    VALUES (s, p_op, r.wname, r.key, r.ws, r.we, r.cnt, r.sm, r.mn, r.mx, r.ag);
    INSERT INTO sfr.clog VALUES (s, p_op, r.wname, r.key, r.ws, r.we, r.cnt,
                                 r.sm, r.mn, r.mx, r.ag);
    IF p_op = 'retract' THEN
        DELETE FROM sfr.res x WHERE (x.wname, x.key, x.ws, x.we) = (r.wname, r.key, r.ws, r.we);
    ELSE
        INSERT INTO sfr.res VALUES (r.wname, r.key, r.ws, r.we, r.cnt, r.sm,
                                    r.mn, r.mx, r.ag, p_op = 'final')
        ON CONFLICT (wname, key, ws, we) DO UPDATE
           SET cnt = excluded.cnt, sm = excluded.sm, mn = excluded.mn,
               mx = excluded.mx, ag = excluded.ag, final = excluded.final;
    END IF;
END $$;

-- The changes after one step: the ready view against the emitted rows,
-- then finalization.
CREATE FUNCTION sfr.m_emit() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    st sfr.st;
    lat bigint := (SELECT lateness FROM sfr.cfg);
    upd boolean;
    r sfr.b;
BEGIN
    SELECT * INTO st FROM sfr.st;
    IF st.wm IS NULL THEN
        RETURN;
    END IF;
    upd := st.mode IN ('update', 'update+final');
    DELETE FROM sfr.b;
    INSERT INTO sfr.b SELECT * FROM sfr.m_buckets();
    -- retractions: emitted rows that vanished or changed
    FOR r IN SELECT e.* FROM sfr.emitted e
              WHERE NOT EXISTS (SELECT 1 FROM sfr.b b
                                 WHERE (b.wname, b.key, b.ws, b.we, b.cnt, b.sm, b.mn, b.mx, b.ag)
                                       IS NOT DISTINCT FROM
                                       (e.wname, e.key, e.ws, e.we, e.cnt, e.sm, e.mn, e.mx, e.ag)
                                   AND b.we <= st.wm)
              ORDER BY e.wname COLLATE "C", e.key COLLATE "C", e.ws, e.we LOOP
        IF upd THEN
            PERFORM sfr.m_out('retract', r);
        END IF;
        DELETE FROM sfr.emitted e WHERE (e.wname, e.key, e.ws, e.we) = (r.wname, r.key, r.ws, r.we);
    END LOOP;
    -- upserts: ready rows not emitted with these values
    FOR r IN SELECT b.* FROM sfr.b b
              WHERE b.we <= st.wm
                AND NOT EXISTS (SELECT 1 FROM sfr.emitted e
                                 WHERE (e.wname, e.key, e.ws, e.we) = (b.wname, b.key, b.ws, b.we))
              ORDER BY b.wname COLLATE "C", b.key COLLATE "C", b.ws, b.we LOOP
        IF upd THEN
            PERFORM sfr.m_out('upsert', r);
        END IF;
        INSERT INTO sfr.emitted VALUES (r.*);
    END LOOP;
    -- finalization
    FOR r IN SELECT b.* FROM sfr.b b WHERE st.wm > b.we + lat
              ORDER BY b.wname COLLATE "C", b.key COLLATE "C", b.ws, b.we LOOP
        IF st.mode <> 'update' THEN
            PERFORM sfr.m_out('final', r);
        ELSE
            UPDATE sfr.res x SET final = true
             WHERE (x.wname, x.key, x.ws, x.we) = (r.wname, r.key, r.ws, r.we);
        END IF;
        DELETE FROM sfr.emitted e WHERE (e.wname, e.key, e.ws, e.we) = (r.wname, r.key, r.ws, r.we);
        INSERT INTO sfr.fin VALUES (r.wname, r.key, r.ws, r.we);
    END LOOP;
END $$;

-- The watermark after a change of progress or idleness.
CREATE FUNCTION sfr.m_clock() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    nactive bigint;
    nrep bigint;
    lo bigint;
BEGIN
    SELECT count(*), count(progress), min(progress) INTO nactive, nrep, lo
      FROM sfr.part WHERE NOT idle;
    IF nactive > 0 AND nrep = nactive THEN
        UPDATE sfr.st SET wm = greatest(wm, lo);
    END IF;
    IF (SELECT ret FROM sfr.cfg) IS NOT NULL THEN
        PERFORM sfr.m_forget();
    END IF;
END $$;

-- Retention (docs/semantics.md, "Retention"): the horizon only rises (the
-- watermark never decreases; a lower lateness raises it, and what was
-- forgotten stays forgotten when a higher one lowers it).
CREATE FUNCTION sfr.m_forget() RETURNS void LANGUAGE sql AS $$
    UPDATE sfr.st s SET hz = greatest(s.hz, s.wm - c.lateness - c.ret)
      FROM sfr.cfg c WHERE c.ret IS NOT NULL AND s.wm IS NOT NULL
$$;

-- idle_timeout (docs/progress.md): a write call or tick after a jump of
-- the clock marks idle, before its own work, every active partition (in
-- the order of the definition), as explicit mark_idle calls would.
CREATE FUNCTION sfr.m_decide() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    p text;
BEGIN
    IF NOT (SELECT jump FROM sfr.st) THEN
        RETURN;
    END IF;
    FOREACH p IN ARRAY (SELECT parts FROM sfr.cfg) LOOP
        IF NOT (SELECT idle FROM sfr.part WHERE part = p) THEN
            PERFORM sfr.m_idle(p);
        END IF;
    END LOOP;
    UPDATE sfr.st SET jump = false;
END $$;

CREATE FUNCTION sfr.m_advance(p text, t bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    UPDATE sfr.part SET idle = false, progress = greatest(progress, t) WHERE part = p;
    PERFORM sfr.m_clock();
    PERFORM sfr.m_emit();
END $$;

CREATE FUNCTION sfr.m_idle(p text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    UPDATE sfr.part SET idle = true WHERE part = p;
    PERFORM sfr.m_clock();
    PERFORM sfr.m_emit();
END $$;

-- One delivery.  Returns its outcome; raises SF001 / SF002 (the call then
-- fails and the caller's subtransaction rolls the model back).
CREATE FUNCTION sfr.m_deliver(p text, o bigint, id text, k text, t bigint, m bigint[])
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    c bigint;
    d sfr.deliv;
    idn sfr.ident;
    st sfr.st;
    cf sfr.cfg;
    known boolean;
BEGIN
    SELECT * INTO cf FROM sfr.cfg;
    SELECT consumed INTO c FROM sfr.part WHERE part = p;
    IF o < 0 OR o > c + 1 THEN
        RAISE EXCEPTION 'model: offset conflict' USING ERRCODE = 'SF001';
    END IF;
    IF o <= c THEN
        SELECT * INTO d FROM sfr.deliv WHERE part = p AND off = o;
        SELECT * INTO st FROM sfr.st;
        -- a replay, or a forgotten offset record: a no-op whatever it carries
        IF (d.eid, d.key, d.t, d.m) = (id, k, t, m) OR d.t < st.hz THEN
            RETURN 'replay';
        END IF;
        RAISE EXCEPTION 'model: offset conflict' USING ERRCODE = 'SF001';
    END IF;
    SELECT * INTO idn FROM sfr.ident WHERE eid = id;
    -- a forgotten identity (event time below the horizon) is unknown
    known := FOUND AND NOT coalesce(idn.t < (SELECT hz FROM sfr.st), false);
    IF known AND (idn.key, idn.t, idn.m) IS DISTINCT FROM (k, t, m) THEN
        RAISE EXCEPTION 'model: identity conflict' USING ERRCODE = 'SF002';
    END IF;
    UPDATE sfr.part SET consumed = o WHERE part = p;
    INSERT INTO sfr.deliv VALUES (p, o, id, k, t, m);
    IF known THEN
        RETURN 'dup';
    END IF;
    INSERT INTO sfr.ident VALUES (id, k, t, m)
        ON CONFLICT (eid) DO UPDATE SET key = excluded.key, t = excluded.t, m = excluded.m;
    SELECT * INTO st FROM sfr.st;
    IF st.wm IS NOT NULL AND t + cf.lateness < st.wm THEN
        UPDATE sfr.st SET late_seq = late_seq + 1;
        INSERT INTO sfr.late VALUES (st.late_seq + 1, p, o, id, k, t, m[1], st.wm);
        RETURN 'late';
    END IF;
    UPDATE sfr.st SET arr = arr + 1;
    INSERT INTO sfr.ev VALUES (st.arr + 1, id, k, t, m);
    PERFORM sfr.m_emit();
    IF cf.ooo IS NOT NULL THEN
        PERFORM sfr.m_advance(p, t - cf.ooo);
    END IF;
    RETURN 'accepted';
END $$;

-- set_emit: from 'final' to an update mode, an upsert of every row the
-- watermark has passed (none was reported); otherwise nothing.
CREATE FUNCTION sfr.m_set_emit(newmode text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    old text := (SELECT mode FROM sfr.st);
    r sfr.b;
BEGIN
    UPDATE sfr.st SET mode = newmode;
    IF old = 'final' AND newmode <> 'final' THEN
        FOR r IN SELECT e.* FROM sfr.emitted e
                  ORDER BY e.wname COLLATE "C", e.key COLLATE "C", e.ws, e.we LOOP
            PERFORM sfr.m_out('upsert', r);
        END LOOP;
    END IF;
END $$;

-- set_lateness (docs/management.md, "Change the lateness"): lower, the
-- buckets it puts past their lateness are finalized at once; higher, the
-- finalized buckets it keeps live come back and the ready ones are
-- upserted (refused with 55000 in the modes with final changes once there
-- is a watermark, and with 22023 if a remembered late event would not
-- have been late).
CREATE FUNCTION sfr.m_set_lateness(newlat bigint) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    st sfr.st;
    lat bigint := (SELECT lateness FROM sfr.cfg);
BEGIN
    SELECT * INTO st FROM sfr.st;
    IF newlat > lat THEN
        -- (the late events first, as the engine checks them: the pages
        -- give no order)
        IF EXISTS (SELECT 1 FROM sfr.late l WHERE NOT coalesce(l.wm < st.hz, false)
                      AND l.t + newlat >= l.wm) THEN
            PERFORM sfr.m_fail('22023');
        END IF;
        IF st.mode <> 'update' AND st.wm IS NOT NULL THEN
            PERFORM sfr.m_fail('55000');
        END IF;
        IF st.wm IS NOT NULL THEN
            DELETE FROM sfr.fin f WHERE st.wm <= f.we + newlat;
        END IF;
    END IF;
    UPDATE sfr.cfg SET lateness = newlat;
    PERFORM sfr.m_emit();
    PERFORM sfr.m_forget();
END $$;

-- set_retention: what the new horizon covers is forgotten at once
-- (the driver only lowers it or sets one where there was none: raising
-- or removing one is refused once something is forgotten).
CREATE FUNCTION sfr.m_set_retention(r bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    UPDATE sfr.cfg SET ret = r;
    PERFORM sfr.m_forget();
END $$;

-- append: a delivery at the partition's next offset
CREATE FUNCTION sfr.m_append(p text, id text, k text, t bigint, m bigint[])
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM sfr.m_deliver(p, (SELECT consumed + 1 FROM sfr.part WHERE part = p), id, k, t, m);
END $$;

-- ----------------------------------------------------------------
-- Comparing
-- ----------------------------------------------------------------

CREATE FUNCTION sfr.same(what text, got text[], exp text[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF coalesce(got, '{}') IS DISTINCT FROM coalesce(exp, '{}') THEN
        RAISE EXCEPTION 'model mismatch: %', what USING ERRCODE = 'SFM01',
            DETAIL = format(E'engine: %s\nmodel:  %s', coalesce(got, '{}'), coalesce(exp, '{}'));
    END IF;
END $$;

-- The changes of the call in the model, as the engine returns them
-- (measures pipelines' ingest functions: measures_change; every other
-- call: change).
CREATE FUNCTION sfr.m_rows(measures_change boolean) RETURNS text[]
LANGUAGE sql STABLE AS $$
    SELECT coalesce(array_agg(CASE WHEN measures_change
            THEN ROW(seq, op, wname, key, ws, we, cnt, ag::jsonb)::streamforge.measures_change::text
            ELSE ROW(seq, op, wname, key, ws, we, cnt, sm, mn, mx)::streamforge.change::text END
           ORDER BY ord), '{}')
      FROM sfr.out
$$;

-- Compare every read of the engine with the model.
CREATE FUNCTION sfr.check_state() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    cf sfr.cfg;
    st sfr.st;
    vtxt text;
    bk sfr.b[];
    rtab text;
    rwin text;
    rtxt text[];
BEGIN
    SELECT * INTO cf FROM sfr.cfg;
    SELECT * INTO st FROM sfr.st;
    bk := ARRAY(SELECT ROW(x.*)::sfr.b FROM sfr.m_buckets() x);
    IF streamforge.watermark(cf.pl) IS DISTINCT FROM st.wm THEN
        RAISE EXCEPTION 'model mismatch: watermark()' USING ERRCODE = 'SFM01',
            DETAIL = format('engine %s, model %s', streamforge.watermark(cf.pl), st.wm);
    END IF;
    IF cf.tu THEN
        PERFORM sfr.same('watermark_ts()', ARRAY[streamforge.watermark_ts(cf.pl)::text],
                         ARRAY[to_timestamp(st.wm)::text]);
        PERFORM sfr.same('live_ts()',
            ARRAY(SELECT x::text FROM streamforge.live_ts(cf.pl) x
                   ORDER BY x.window_name COLLATE "C", x.key COLLATE "C", x.window_start, x.window_end),
            ARRAY(SELECT ROW(wname, key, to_timestamp(ws), to_timestamp(we), cnt, sm, mn, mx)::text
                    FROM unnest(bk) ORDER BY wname COLLATE "C", key COLLATE "C", ws, we));
        PERFORM sfr.same('visible_ts()',
            ARRAY(SELECT x::text FROM streamforge.visible_ts(cf.pl) x
                   ORDER BY x.window_name COLLATE "C", x.key COLLATE "C", x.window_start, x.window_end),
            ARRAY(SELECT ROW(wname, key, to_timestamp(ws), to_timestamp(we), cnt, sm, mn, mx)::text
                    FROM sfr.emitted WHERE st.mode <> 'final'
                   ORDER BY wname COLLATE "C", key COLLATE "C", ws, we));
    END IF;
    PERFORM sfr.same('partitions()',
        ARRAY(SELECT ROW(x.partition, x.consumed_offset, x.progress, x.idle)::text
                FROM streamforge.partitions(cf.pl) x),
        ARRAY(SELECT ROW(part, consumed, progress, idle)::text
                FROM sfr.part ORDER BY part COLLATE "C"));
    PERFORM sfr.same('late_events()',
        ARRAY(SELECT x::text FROM streamforge.late_events(cf.pl) x ORDER BY x.late_seq),
        ARRAY(SELECT ROW(late_seq, part, off, eid, key, t, v, wm)::streamforge.late_event::text
                FROM sfr.late WHERE NOT coalesce(wm < st.hz, false) ORDER BY late_seq));
    PERFORM sfr.same('late_output',
        ARRAY(SELECT ROW(x.late_seq, x.partition, x.source_offset, x.event_id,
                         x.key, x.event_time, x.value, x.watermark)::text
                FROM streamforge.late_output x WHERE x.pipeline = cf.pl
               ORDER BY x.late_seq),
        ARRAY(SELECT ROW(late_seq, part, off, eid, key, t, v, wm)::text
                FROM sfr.late ORDER BY late_seq));
    -- live and visible, contract columns
    PERFORM sfr.same('live()',
        ARRAY(SELECT x::text FROM streamforge.live(cf.pl) x
               ORDER BY x.window_name COLLATE "C", x.key COLLATE "C", x.window_start, x.window_end),
        ARRAY(SELECT ROW(wname, key, ws, we, cnt, sm, mn, mx)::streamforge.result::text
                FROM unnest(bk)
               ORDER BY wname COLLATE "C", key COLLATE "C", ws, we));
    PERFORM sfr.same('visible()',
        ARRAY(SELECT x::text FROM streamforge.visible(cf.pl) x
               ORDER BY x.window_name COLLATE "C", x.key COLLATE "C", x.window_start, x.window_end),
        ARRAY(SELECT ROW(wname, key, ws, we, cnt, sm, mn, mx)::streamforge.result::text
                FROM sfr.emitted WHERE st.mode <> 'final'
               ORDER BY wname COLLATE "C", key COLLATE "C", ws, we));
    IF cf.kind = 'measures' THEN
        PERFORM sfr.same('live_aggregates()',
            ARRAY(SELECT ROW(x.window_name, x.key, x.window_start, x.window_end, x.count,
                             x.aggregates::text)::text
                    FROM streamforge.live_aggregates(cf.pl) x
                   ORDER BY x.window_name COLLATE "C", x.key COLLATE "C", x.window_start, x.window_end),
            ARRAY(SELECT ROW(wname, key, ws, we, cnt, ag)::text FROM unnest(bk)
                   ORDER BY wname COLLATE "C", key COLLATE "C", ws, we));
        PERFORM sfr.same('visible_aggregates()',
            ARRAY(SELECT ROW(x.window_name, x.key, x.window_start, x.window_end, x.count,
                             x.aggregates::text)::text
                    FROM streamforge.visible_aggregates(cf.pl) x
                   ORDER BY x.window_name COLLATE "C", x.key COLLATE "C", x.window_start, x.window_end),
            ARRAY(SELECT ROW(wname, key, ws, we, cnt, ag)::text FROM sfr.emitted
                   WHERE st.mode <> 'final'
                   ORDER BY wname COLLATE "C", key COLLATE "C", ws, we));
    ELSIF cf.kind = 'agg' THEN
        PERFORM sfr.same('visible_aggregates() (addresses and counts)',
            ARRAY(SELECT ROW(x.window_name, x.key, x.window_start, x.window_end, x.count)::text
                    FROM streamforge.visible_aggregates(cf.pl) x
                   ORDER BY x.window_name COLLATE "C", x.key COLLATE "C", x.window_start, x.window_end),
            ARRAY(SELECT ROW(wname, key, ws, we, cnt)::text FROM sfr.emitted
                   WHERE st.mode <> 'final'
                   ORDER BY wname COLLATE "C", key COLLATE "C", ws, we));
        -- the aggregate's views, typed
        EXECUTE format($q$
            SELECT array_agg(ROW(ARRAY[k]::text, extract(epoch FROM window_start)::bigint,
                                 extract(epoch FROM window_end)::bigint,
                                 ROW(n, sa, ab, mi, mx, vp, vs, sp, ss, sd, vr, big, db)::text,
                                 final)::text
                             ORDER BY ARRAY[k]::text COLLATE "C", window_start, window_end)
              FROM %I $q$, cf.pl || '_live') INTO vtxt;
        PERFORM sfr.same('the aggregate''s _live view', vtxt::text[],
            ARRAY(SELECT ROW(key, ws, we, ag, false)::text FROM unnest(bk)
                   ORDER BY key COLLATE "C", ws, we));
        EXECUTE format($q$
            SELECT array_agg(ROW(ARRAY[k]::text, extract(epoch FROM window_start)::bigint,
                                 extract(epoch FROM window_end)::bigint,
                                 ROW(n, sa, ab, mi, mx, vp, vs, sp, ss, sd, vr, big, db)::text,
                                 final)::text
                             ORDER BY ARRAY[k]::text COLLATE "C", window_start, window_end)
              FROM %I $q$, cf.pl) INTO vtxt;
        PERFORM sfr.same('the aggregate''s view', vtxt::text[],
            ARRAY(SELECT ROW(key, ws, we, ag, final)::text FROM sfr.res
                   ORDER BY key COLLATE "C", ws, we));
    END IF;
    -- durable outputs: streamforge.results, and for an aggregate the table
    -- of its results (0.4.0, issue 42 item 2) in the same shape
    SELECT streamforge_internal.aggregate_results_table(g.results_id), g.spec ->> 'window'
      INTO rtab, rwin
      FROM streamforge.aggregate g WHERE g.name = cf.pl AND g.results_id IS NOT NULL;
    IF rtab IS NULL THEN
        rtab := '(SELECT NULL::text AS key, 0::bigint AS start_u, 0::bigint AS end_u, '
                '0::bigint AS count, 0::numeric AS sum, 0::bigint AS min, 0::bigint AS max, '
                'false AS final WHERE false)';
    END IF;
    EXECUTE format($q$
        SELECT ARRAY(SELECT r FROM (
            SELECT ROW(x.window_name, x.key, x.window_start, x.window_end, x.count,
                       x.sum, x.min, x.max, x.final,
                       CASE WHEN %L = 'measures' THEN x.aggregates::text END)::text AS r,
                   x.window_name AS w, x.key AS k, x.window_start AS s, x.window_end AS e
              FROM streamforge.results x WHERE x.pipeline = %L
            UNION ALL
            SELECT ROW(%L::text, t.key, t.start_u, t.end_u, t.count, t.sum, t.min, t.max,
                       t.final, NULL::text)::text, %L, t.key, t.start_u, t.end_u
              FROM %s t) AS u
          ORDER BY u.w COLLATE "C", u.k COLLATE "C", u.s, u.e) $q$,
        cf.kind, cf.pl, rwin, rwin, rtab) INTO rtxt;
    PERFORM sfr.same('streamforge.results', rtxt,
        ARRAY(SELECT ROW(wname, key, ws, we, cnt, sm, mn, mx, final,
                         CASE WHEN cf.kind = 'measures' THEN ag END)::text
                FROM sfr.res ORDER BY wname COLLATE "C", key COLLATE "C", ws, we));
    PERFORM sfr.same('streamforge.changelog',
        ARRAY(SELECT ROW(x.seq, x.op, x.window_name, x.key, x.window_start, x.window_end,
                         x.count, x.sum, x.min, x.max,
                         CASE WHEN cf.kind = 'measures' THEN x.aggregates::text END)::text
                FROM streamforge.changelog x WHERE x.pipeline = cf.pl ORDER BY x.seq),
        ARRAY(SELECT ROW(seq, op, wname, key, ws, we, cnt, sm, mn, mx,
                         CASE WHEN cf.kind = 'measures' THEN ag END)::text
                FROM sfr.clog ORDER BY seq));
END $$;

-- ----------------------------------------------------------------
-- The driver
-- ----------------------------------------------------------------

CREATE FUNCTION sfr.connstr() RETURNS text LANGUAGE sql STABLE AS $$
    SELECT format('dbname=%s port=%s host=%s user=%s application_name=sfr_driver',
                  current_database(), current_setting('port'),
                  split_part(current_setting('unix_socket_directories'), ',', 1),
                  current_user)
$$;

-- The payload of a notification the call must send, read after it.
CREATE FUNCTION sfr.payload() RETURNS text LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object('pipeline_id', c.pid,
               'epoch', (SELECT o.epoch FROM streamforge.output_config o WHERE o.pipeline = c.pl),
               'seq', s.seq, 'late_seq', s.late_seq)::text
      FROM sfr.cfg c, sfr.st s
$$;

-- Set up the trace of a seed: drop the last pipeline, choose a
-- configuration, create it.
CREATE FUNCTION sfr.setup(seed int, p_kind text DEFAULT NULL) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    kind text;
    mode text;
    lat bigint;
    ooo bigint;
    nparts int;
    wk text;
    a bigint;
    b bigint;
    q text;
    pname text;
    pidle float8;
BEGIN
    PERFORM setseed(((seed::bigint * 7919) % 1000003)::float8 / 1000003);
    IF to_regclass('public.rm2a') IS NOT NULL THEN
        PERFORM streamforge.drop_aggregate('rm2a');
    END IF;
    DROP TABLE IF EXISTS public.rm2_src;
    PERFORM streamforge.drop_pipeline(p.name) FROM streamforge.pipelines p
      WHERE p.name IN ('rm2', 'rm2a');
    DELETE FROM sfr.cfg; DELETE FROM sfr.win; DELETE FROM sfr.st;
    DELETE FROM sfr.part; DELETE FROM sfr.deliv; DELETE FROM sfr.ident;
    DELETE FROM sfr.ev; DELETE FROM sfr.late; DELETE FROM sfr.emitted;
    DELETE FROM sfr.fin; DELETE FROM sfr.res; DELETE FROM sfr.clog;
    DELETE FROM sfr.out; DELETE FROM sfr.b;

    kind := coalesce(p_kind, (ARRAY['classic', 'measures', 'measures', 'agg'])[sfr.rint(1, 4)]);
    mode := (ARRAY['update', 'update+final', 'final'])[sfr.rint(1, 3)];
    IF kind = 'agg' AND mode = 'update+final' THEN
        mode := 'final';        -- create_aggregate takes 'update' or 'final'
    END IF;
    lat := (ARRAY[0, 0, 1, 2, 3, 5])[sfr.rint(1, 6)];
    ooo := CASE WHEN random() < 0.7 THEN sfr.rint(0, 3) END;
    wk := (ARRAY['fixed', 'fixed', 'sliding', 'session'])[sfr.rint(1, 4)];
    a := sfr.rint(2, 6);
    b := CASE wk WHEN 'sliding' THEN sfr.rint(1, a) WHEN 'session' THEN sfr.rint(1, 3) END;
    IF kind = 'agg' THEN
        pname := 'rm2a';
        INSERT INTO sfr.cfg VALUES (kind, pname, lat, ooo, 1800000000, ARRAY['default']);
        INSERT INTO sfr.win VALUES (1,
            CASE wk WHEN 'fixed' THEN 'tumble' WHEN 'sliding' THEN 'hop' ELSE 'session' END,
            wk, CASE WHEN wk <> 'session' THEN a END, CASE WHEN wk = 'sliding' THEN b END,
            CASE WHEN wk = 'session' THEN b END);
        CREATE TABLE public.rm2_src (id int PRIMARY KEY, k text NOT NULL,
            a int NOT NULL, b int NOT NULL, ts timestamptz(0) NOT NULL, ok boolean NOT NULL);
        q := format($q$SELECT k, count(*) AS n, sum(a) AS sa, avg(b) AS ab, min(a) AS mi,
                   max(b) AS mx, var_pop(a) AS vp, var_samp(b) AS vs, stddev_pop(a) AS sp,
                   stddev_samp(b) AS ss, stddev(a) AS sd, variance(b) AS vr,
                   count(*) FILTER (WHERE a >= 3) AS big, count(DISTINCT b) AS db
              FROM public.rm2_src WHERE ok GROUP BY k, %s$q$,
            CASE wk WHEN 'fixed' THEN format('streamforge.tumble(ts, interval %L)', a || ' seconds')
                    WHEN 'sliding' THEN format('streamforge.hop(ts, interval %L, interval %L)',
                                               a || ' seconds', b || ' seconds')
                    ELSE format('streamforge.session(ts, interval %L)', b || ' seconds') END);
        PERFORM streamforge.create_aggregate(pname, q, lateness => make_interval(secs => lat),
            out_of_orderness => CASE WHEN ooo IS NOT NULL THEN make_interval(secs => ooo) END,
            emit => mode);
    ELSE
        pname := 'rm2';
        nparts := sfr.rint(1, 2);
        INSERT INTO sfr.cfg VALUES (kind, pname, lat, ooo, 0,
                                    (ARRAY['p', 'q'])[1:nparts]);
        INSERT INTO sfr.win VALUES (1, 'w', wk,
            CASE WHEN wk <> 'session' THEN a END, CASE WHEN wk = 'sliding' THEN b END,
            CASE WHEN wk = 'session' THEN b END);
        IF random() < 0.3 THEN
            INSERT INTO sfr.win VALUES (2, 'f', 'fixed', sfr.rint(3, 9), NULL, NULL);
        END IF;
        -- an idle_timeout (the driver moves the clock: sfr.jump) and a
        -- retention, each now and then
        pidle := CASE WHEN kind = 'classic' THEN 0.5 ELSE 0.3 END;
        UPDATE sfr.cfg SET idle = random() < pidle,
                           ret = CASE WHEN random() < 0.3 THEN sfr.rint(0, 4) END,
                           tu = random() < 0.3;
        PERFORM streamforge.create_pipeline(pname, (SELECT parts FROM sfr.cfg),
            ARRAY(SELECT CASE w.kind WHEN 'fixed' THEN streamforge.fixed(w.name, w.size)
                      WHEN 'sliding' THEN streamforge.sliding(w.name, w.size, w.step)
                      ELSE streamforge.session(w.name, w.gap) END
                    FROM sfr.win w ORDER BY w.pos),
            lateness => lat, emit => mode, out_of_orderness => ooo,
            idle_timeout => CASE WHEN (SELECT idle FROM sfr.cfg) THEN interval '1 hour' END,
            retention => (SELECT ret FROM sfr.cfg),
            time_unit => CASE WHEN (SELECT tu FROM sfr.cfg) THEN interval '1 second' END,
            measures => CASE WHEN kind = 'measures' THEN ARRAY['m1', 'm2'] END,
            aggregates => CASE WHEN kind = 'measures' THEN ARRAY['count', 'sum(m1)',
                'avg(m2)', 'min(m1)', 'max(m2)', 'var_pop(m1)', 'var_samp(m2)',
                'stddev_pop(m2)', 'stddev_samp(m1)', 'first(m1)', 'last(m2)',
                'count_if(m1 >= 3) AS big', 'count_distinct(m2)',
                'approx_count_distinct(m2)', 'percentile_cont(m1, 0.25)',
                'percentile_disc(m2, 0.5)', 'approx_percentile(m2, 0.9)',
                'max_by(m1, m2)', 'min_by(m2, m1)'] END);
    END IF;
    PERFORM streamforge.configure_outputs(pname, changelog => true, results => true,
                                          late => true, notify => true);
    UPDATE sfr.cfg c SET pid = n.pipeline_id, channel = n.channel
      FROM streamforge.notify_channel(pname) n;
    INSERT INTO sfr.st (mode) VALUES (mode);
    INSERT INTO sfr.part (part) SELECT unnest(parts) FROM sfr.cfg;
END $$;

-- A new event's delivery for the generator: (part, off, eid, key, t, m).
CREATE TYPE sfr.dl AS (part text, off bigint, eid text, key text, t bigint, m bigint[]);

-- Generate the deliveries of one call: n events from the clock clk on,
-- times moving forward across window boundaries (so that a multi-row
-- call finalizes windows half way through and opens new buckets after),
-- some out of order or late, with replays and duplicates now and then.
CREATE FUNCTION sfr.gen_dl(n int, clk bigint, nxt jsonb, neid int,
                           OUT dls sfr.dl[], OUT clk2 bigint, OUT nxt2 jsonb,
                           OUT neid2 int)
LANGUAGE plpgsql AS $$
DECLARE
    cf sfr.cfg;
    d sfr.dl;
    t bigint := clk;
    r float8;
    o bigint;
    old sfr.deliv;
    prep float8;
    pdup float8;
BEGIN
    SELECT * INTO cf FROM sfr.cfg;
    prep := CASE WHEN cf.ret IS NOT NULL THEN 0.12 ELSE 0.05 END;
    pdup := CASE WHEN cf.ret IS NOT NULL THEN 0.25 ELSE 0.10 END;
    dls := '{}';
    FOR i IN 1..n LOOP
        d.part := cf.parts[sfr.rint(1, cardinality(cf.parts))];
        o := (nxt ->> d.part)::bigint;
        r := random();
        IF r < prep AND o > 0 AND cf.kind <> 'agg' THEN
            -- a replay of a consumed offset (with a retention, the
            -- oldest ones now and then: those the horizon forgets first)
            SELECT * INTO old FROM sfr.deliv WHERE part = d.part
             ORDER BY CASE WHEN cf.ret IS NOT NULL THEN sfr.deliv.t END, sfr.deliv.off
             OFFSET (sfr.rint(0, o - 1) / CASE WHEN cf.ret IS NOT NULL THEN 4 ELSE 1 END) LIMIT 1;
            IF FOUND THEN
                d := ROW(old.part, old.off, old.eid, old.key, old.t, old.m);
                IF cf.ret IS NOT NULL AND random() < 0.5 THEN
                    -- another delivery at a consumed offset: SF001, or a
                    -- no-op if the horizon forgot the offset's record
                    d.m[1] := d.m[1] + 1;
                END IF;
                dls := dls || d;
                CONTINUE;
            END IF;
        END IF;
        d.off := o;
        nxt := jsonb_set(nxt, ARRAY[d.part], to_jsonb(o + 1));
        IF r < pdup AND cf.kind <> 'agg' AND EXISTS (SELECT 1 FROM sfr.ident) THEN
            -- a duplicate: a known identity at a new offset (with a
            -- retention, mostly one of the oldest: forgotten, it is a new
            -- event, maybe late; remembered, a duplicate)
            SELECT x.eid, x.key, x.t, x.m INTO d.eid, d.key, d.t, d.m FROM sfr.ident x
             ORDER BY CASE WHEN cf.ret IS NOT NULL THEN x.t END, x.eid
             OFFSET (sfr.rint(0, (SELECT count(*) - 1 FROM sfr.ident))
                     / CASE WHEN cf.ret IS NOT NULL THEN 3 ELSE 1 END) LIMIT 1;
            dls := dls || d;
            CONTINUE;
        END IF;
        neid := neid + 1;
        d.eid := 'e' || neid;
        d.key := (ARRAY['a', 'b', 'c'])[sfr.rint(1, CASE WHEN random() < 0.5 THEN 1 ELSE 3 END)];
        IF cf.kind = 'agg' THEN
            d.key := ARRAY[d.key]::text;
        END IF;
        IF random() < 0.15 THEN
            d.t := t - sfr.rint(0, 8);              -- out of order, maybe late
        ELSE
            t := t + sfr.rint(0, 4);
            d.t := t;
        END IF;
        d.t := d.t + cf.base;
        d.m := CASE cf.kind WHEN 'classic' THEN ARRAY[sfr.rint(-5, 9)]
                            ELSE ARRAY[sfr.rint(-3, 9), sfr.rint(-5, 20)] END;
        dls := dls || d;
    END LOOP;
    clk2 := t;
    nxt2 := nxt;
    neid2 := neid;
END $$;

-- The model's side of a call's deliveries, in array order.
CREATE FUNCTION sfr.m_deliver_all(dls sfr.dl[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    d sfr.dl;
BEGIN
    FOREACH d IN ARRAY dls LOOP
        PERFORM sfr.m_deliver(d.part, d.off, d.eid, d.key, d.t, d.m);
    END LOOP;
END $$;

-- Run one call on the engine: locally, on the second backend, or on a new
-- connection (a cold load).  Returns its rows as text, in order.
CREATE FUNCTION sfr.engine(q text, via text) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
    rows text[];
BEGIN
    IF q LIKE 'INSERT %' THEN
        -- an INSERT into an aggregate's table returns no changes
        IF via = 'local' THEN
            EXECUTE q;
        ELSE
            IF via = 'cold' THEN
                PERFORM dblink_connect('sfr_cold', sfr.connstr());
            END IF;
            PERFORM dblink_exec(CASE via WHEN 'cold' THEN 'sfr_cold' ELSE 'sfr_b2' END, q);
            IF via = 'cold' THEN
                PERFORM dblink_disconnect('sfr_cold');
            END IF;
        END IF;
        RETURN '{}';
    ELSIF via = 'local' THEN
        EXECUTE format('SELECT coalesce(array_agg(x ORDER BY o) FILTER (WHERE o > 0), ''{}'') FROM (%s) s(x, o)', q)
           INTO rows;
    ELSE
        IF via = 'cold' THEN
            PERFORM dblink_connect('sfr_cold', sfr.connstr());
        END IF;
        BEGIN
            SELECT coalesce(array_agg(x ORDER BY o) FILTER (WHERE o > 0), '{}') INTO rows
              FROM dblink(CASE via WHEN 'cold' THEN 'sfr_cold' ELSE 'sfr_b2' END, q)
                   AS r(x text, o bigint);
        EXCEPTION WHEN OTHERS THEN
            IF via = 'cold' THEN
                PERFORM dblink_disconnect('sfr_cold');
            END IF;
            RAISE;
        END;
        IF via = 'cold' THEN
            PERFORM dblink_disconnect('sfr_cold');
        END IF;
    END IF;
    RETURN rows;
END $$;

-- A call: the engine's rows and error against the model's.  Returns the
-- notification payload it must send (NULL: none).
CREATE FUNCTION sfr.call(what text, q text, via text, model text,
                         measures_rows boolean DEFAULT false)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    got text[];
    gerr text := 'ok';
    gmsg text;
    eerr text := 'ok';
    exp text[];
    lseq bigint := (SELECT late_seq FROM sfr.st);
    notify text;
BEGIN
    -- the model first, in a subtransaction of its own
    BEGIN
        DELETE FROM sfr.out;
        EXECUTE model;
        exp := sfr.m_rows(measures_rows);
        IF exp <> '{}' OR (SELECT late_seq FROM sfr.st) <> lseq THEN
            notify := 'yes';
        END IF;
        IF q LIKE 'INSERT %' THEN
            exp := '{}';        -- an INSERT returns no changes
        END IF;
        -- keep the model's state: leave the block normally
    EXCEPTION WHEN SQLSTATE 'SF001' OR SQLSTATE 'SF002' OR SQLSTATE '22004'
                   OR SQLSTATE '22023' OR SQLSTATE '55000' THEN
        eerr := SQLSTATE;
    END;
    BEGIN
        got := sfr.engine(q, via);
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS gerr = RETURNED_SQLSTATE, gmsg = MESSAGE_TEXT;
    END;
    IF gerr <> eerr THEN
        RAISE EXCEPTION 'model mismatch: outcome of %', what USING ERRCODE = 'SFM01',
            DETAIL = format('engine %s %s, model %s', gerr, coalesce(gmsg, ''), eerr);
    END IF;
    IF eerr = 'ok' THEN
        PERFORM sfr.same('rows returned by ' || what, got, exp);
    END IF;
    IF notify IS NOT NULL AND eerr = 'ok' THEN
        RETURN sfr.payload();
    END IF;
    RETURN NULL;
END $$;

-- A call the model refuses: it fails with this SQLSTATE, nothing changes.
CREATE FUNCTION sfr.m_fail(code text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'model: refused' USING ERRCODE = code;
END $$;

-- One step of a trace: choose a call and run it (engine and model).
-- Returns the payloads of the notifications it must have sent once
-- committed.  "wrap": commit, savepoint (the call inside a block that is
-- rolled back, then maybe another call), rollback (the caller rolls the
-- transaction back), remote (the second backend), cold (a new connection).
CREATE FUNCTION sfr.step(wrap text, INOUT clk bigint, INOUT neid int,
                         OUT notes text[], OUT what text)
LANGUAGE plpgsql AS $$
DECLARE
    cf sfr.cfg;
    n text;
    w2 text;
BEGIN
    SELECT * INTO cf FROM sfr.cfg;
    notes := '{}';
    IF wrap = 'end' THEN
        what := 'restore(checkpoint()) at the end of the trace';
        PERFORM sfr.call(what, format('SELECT streamforge.restore(%L, streamforge.checkpoint(%L))::text, 0::bigint',
                                      cf.pl, cf.pl), 'local', 'SELECT 1');
        notes := ARRAY[sfr.payload()];
    ELSIF wrap = 'savepoint' THEN
        BEGIN
            -- one to three calls in a block that is rolled back
            what := '';
            FOR i IN 1..sfr.rint(1, 3) LOOP
                SELECT s.clk, s.neid, s.what, s.n INTO clk, neid, w2, n
                  FROM sfr.one_call('local', clk, neid) s;
                what := what || CASE WHEN i > 1 THEN '; ' ELSE '' END || w2;
            END LOOP;
            RAISE EXCEPTION 'roll back' USING ERRCODE = 'SFM02';
        EXCEPTION WHEN SQLSTATE 'SFM02' THEN
            NULL;
        END;
        what := 'savepoint rolled back: ' || what;
        IF random() < 0.5 THEN
            SELECT s.clk, s.neid, s.what, s.n INTO clk, neid, w2, n
              FROM sfr.one_call('local', clk, neid) s;
            what := what || '; then ' || w2;
            IF n IS NOT NULL THEN
                notes := notes || n;
            END IF;
        END IF;
    ELSE
        SELECT s.clk, s.neid, s.what, s.n INTO clk, neid, what, n
          FROM sfr.one_call(CASE WHEN wrap IN ('remote', 'cold') THEN wrap ELSE 'local' END,
                            clk, neid) s;
        IF n IS NOT NULL THEN
            notes := notes || n;
        END IF;
    END IF;
END $$;

CREATE FUNCTION sfr.one_call(via text, INOUT clk bigint, INOUT neid int,
                             OUT what text, OUT n text)
LANGUAGE plpgsql AS $$
DECLARE
    cf sfr.cfg;
    st sfr.st;
    r float8 := random();
    nxt jsonb;
    dls sfr.dl[];
    d sfr.dl;
    p text;
    q text;
    model text;
    k int;
    mode text;
    ok boolean[];
    vals text;
    dec text;
BEGIN
    SELECT * INTO cf FROM sfr.cfg;
    SELECT * INTO st FROM sfr.st;
    -- the model's idle decisions, before a write call's own work
    dec := CASE WHEN cf.idle THEN 'SELECT sfr.m_decide(); ' ELSE '' END;
    SELECT jsonb_object_agg(part, consumed + 1) INTO nxt FROM sfr.part;
    p := cf.parts[sfr.rint(1, cardinality(cf.parts))];
    IF r < 0.50 THEN
        -- deliveries: one or several
        k := CASE WHEN random() < 0.4 THEN 1 ELSE sfr.rint(2, 7)::int END;
        clk := clk + sfr.rint(0, 3);
        SELECT g.dls, g.clk2, g.nxt2, g.neid2 INTO dls, clk, nxt, neid
          FROM sfr.gen_dl(k, clk, nxt, neid) g;
        model := format(dec || 'SELECT sfr.m_deliver_all(%L::sfr.dl[])', dls);
        IF cf.kind = 'agg' THEN
            -- INSERT of the rows into the aggregate's table; some filtered
            -- out by its WHERE (neither ingested nor remembered)
            SELECT string_agg(format('(%s, %L, %s, %s, to_timestamp(%s), %s)',
                                     st.agg_id + i, (x.key::text[])[1], x.m[1], x.m[2], x.t,
                                     CASE WHEN x.i % 5 = 4 THEN 'false' ELSE 'true' END), ', ' ORDER BY i)
              INTO vals
              FROM unnest(dls) WITH ORDINALITY x(part, off, eid, key, t, m, i);
            -- the model's deliveries: the rows the filter keeps, at the
            -- next offsets, their event id the primary key
            model := format('UPDATE sfr.st SET agg_id = agg_id + %s, agg_off = agg_off + %s; SELECT sfr.m_deliver_all(%L::sfr.dl[])',
                cardinality(dls),
                (SELECT count(*) FROM generate_series(1, cardinality(dls)) i WHERE i % 5 <> 4),
                ARRAY(SELECT ROW('default', st.agg_off + row_number() OVER (ORDER BY x.i),
                                 (st.agg_id + x.i)::text, x.key, x.t, x.m)::sfr.dl
                        FROM unnest(dls) WITH ORDINALITY x(part, off, eid, key, t, m, i)
                       WHERE x.i % 5 <> 4 ORDER BY x.i));
            q := format('INSERT INTO public.rm2_src VALUES %s', vals);
            what := format('INSERT of %s rows %s', cardinality(dls), vals);
        ELSIF cf.kind = 'classic' THEN
            IF k = 1 AND random() < 0.3 THEN
                -- append: the partition's next offset, whatever d.off says
                d := dls[1];
                q := format('SELECT ROW(c.seq, c.op, c.w, c.k, c.s, c.e, c.n, c.su, c.mi, c.ma)::streamforge.change::text, o FROM streamforge.append(%L, %L, %L, %L, %s, %s) WITH ORDINALITY c(seq, op, w, k, s, e, n, su, mi, ma, o)',
                            cf.pl, d.part, d.eid, d.key, d.t, d.m[1]);
                model := format(dec || 'SELECT sfr.m_append(%L, %L, %L, %s, %L::bigint[])',
                                d.part, d.eid, d.key, d.t, d.m);
            ELSIF k = 1 AND cf.tu AND random() < 0.5 THEN
                -- ingest_ts: the event time as a timestamp, in seconds
                d := dls[1];
                q := format('SELECT ROW(c.seq, c.op, c.w, c.k, c.s, c.e, c.n, c.su, c.mi, c.ma)::streamforge.change::text, o FROM streamforge.ingest_ts(%L, %L, %s, %L, %L, to_timestamp(%s), %s) WITH ORDINALITY c(seq, op, w, k, s, e, n, su, mi, ma, o)',
                            cf.pl, d.part, d.off, d.eid, d.key, d.t, d.m[1]);
            ELSIF k = 1 THEN
                d := dls[1];
                q := format('SELECT ROW(c.seq, c.op, c.w, c.k, c.s, c.e, c.n, c.su, c.mi, c.ma)::streamforge.change::text, o FROM streamforge.ingest(%L, %L, %s, %L, %L, %s, %s) WITH ORDINALITY c(seq, op, w, k, s, e, n, su, mi, ma, o)',
                            cf.pl, d.part, d.off, d.eid, d.key, d.t, d.m[1]);
            ELSIF random() < 0.25 THEN
                -- ingest_json, with offsets: as ingest_batch
                q := format('SELECT ROW(c.seq, c.op, c.w, c.k, c.s, c.e, c.n, c.su, c.mi, c.ma)::streamforge.change::text, o FROM streamforge.ingest_json(%L, %L::jsonb) WITH ORDINALITY c(seq, op, w, k, s, e, n, su, mi, ma, o)',
                            cf.pl, (SELECT jsonb_agg(jsonb_build_object('partition', x.part,
                                        'source_offset', x.off, 'event_id', x.eid, 'key', x.key,
                                        'event_time', x.t, 'value', x.m[1]) ORDER BY x.i)
                                      FROM unnest(dls) WITH ORDINALITY x(part, off, eid, key, t, m, i)));
            ELSE
                q := format('SELECT ROW(c.seq, c.op, c.w, c.k, c.s, c.e, c.n, c.su, c.mi, c.ma)::streamforge.change::text, o FROM streamforge.ingest_batch(%L, %L::streamforge.delivery[]) WITH ORDINALITY c(seq, op, w, k, s, e, n, su, mi, ma, o)',
                            cf.pl, ARRAY(SELECT ROW(x.part, x.off, x.eid, x.key, x.t, x.m[1])::streamforge.delivery
                                           FROM unnest(dls) x));
            END IF;
            what := format('ingest of %s', dls);
        ELSE
            IF k = 1 THEN
                d := dls[1];
                q := format('SELECT ROW(c.seq, c.op, c.w, c.k, c.s, c.e, c.n, c.a)::streamforge.measures_change::text, o FROM streamforge.ingest_measures(%L, %L, %s, %L, %L, %s, %L::bigint[]) WITH ORDINALITY c(seq, op, w, k, s, e, n, a, o)',
                            cf.pl, d.part, d.off, d.eid, d.key, d.t, d.m);
            ELSE
                q := format('SELECT ROW(c.seq, c.op, c.w, c.k, c.s, c.e, c.n, c.a)::streamforge.measures_change::text, o FROM streamforge.ingest_measures_batch(%L, %L::streamforge.measures_delivery[]) WITH ORDINALITY c(seq, op, w, k, s, e, n, a, o)',
                            cf.pl, ARRAY(SELECT ROW(x.part, x.off, x.eid, x.key, x.t, x.m)::streamforge.measures_delivery
                                           FROM unnest(dls) x));
            END IF;
            what := format('ingest_measures of %s', dls);
        END IF;
        n := sfr.call(what, q, via, model, cf.kind = 'measures');
        RETURN;
    END IF;
    IF r < 0.63 THEN
        -- advance: mostly forward, sometimes below
        k := (clk + cf.base - sfr.rint(0, 6) + sfr.rint(0, 3))::int;
        q := format('SELECT ROW(c.seq, c.op, c.w, c.k, c.s, c.e, c.n, c.su, c.mi, c.ma)::streamforge.change::text, o FROM streamforge.advance(%L, %L, %s) WITH ORDINALITY c(seq, op, w, k, s, e, n, su, mi, ma, o)',
                    cf.pl, p, k);
        IF cf.tu AND random() < 0.5 THEN
            q := format('SELECT ROW(c.seq, c.op, c.w, c.k, c.s, c.e, c.n, c.su, c.mi, c.ma)::streamforge.change::text, o FROM streamforge.advance_ts(%L, %L, to_timestamp(%s)) WITH ORDINALITY c(seq, op, w, k, s, e, n, su, mi, ma, o)',
                        cf.pl, p, k);
        END IF;
        model := format(dec || 'SELECT sfr.m_advance(%L, %s)', p, k);
        what := format('advance(%s, %s)', p, k);
    ELSIF r < 0.68 THEN
        q := format('SELECT ROW(c.seq, c.op, c.w, c.k, c.s, c.e, c.n, c.su, c.mi, c.ma)::streamforge.change::text, o FROM streamforge.mark_idle(%L, %L) WITH ORDINALITY c(seq, op, w, k, s, e, n, su, mi, ma, o)',
                    cf.pl, p);
        model := format(dec || 'SELECT sfr.m_idle(%L)', p);
        what := format('mark_idle(%s)', p);
    ELSIF r < 0.74 THEN
        mode := (ARRAY['update', 'update+final', 'final'])[sfr.rint(1, 3)];
        -- set_emit from 'final' to an update mode on a measures pipeline
        -- with outputs on and two ready rows crashed the backend (0.3.0:
        -- docs/testing.md, "What it found"); fixed, so on by default
        q := format('SELECT ROW(c.seq, c.op, c.w, c.k, c.s, c.e, c.n, c.su, c.mi, c.ma)::streamforge.change::text, o FROM streamforge.set_emit(%L, %L) WITH ORDINALITY c(seq, op, w, k, s, e, n, su, mi, ma, o)',
                    cf.pl, mode);
        model := format('SELECT sfr.m_set_emit(%L)', mode);
        what := format('set_emit(%s) from %s', mode, st.mode);
    ELSIF r < 0.82 THEN
        -- restore of the pipeline's own checkpoint: nothing changes but the
        -- outputs' epoch; one notification
        what := 'restore(checkpoint())';
        q := format('SELECT streamforge.restore(%L, streamforge.checkpoint(%L))::text, 0::bigint',
                    cf.pl, cf.pl);
        PERFORM sfr.call(what, q, via, 'SELECT 1');
        n := sfr.payload();
        RETURN;
    ELSIF r < 0.85 THEN
        what := 'compact()';
        q := format('SELECT streamforge.compact(%L, 0)::text, 0::bigint', cf.pl);
        model := 'SELECT 1';
    ELSIF r < 0.88 OR cf.kind = 'agg' AND r < 0.925 THEN
        what := 'tick()';
        q := format('SELECT ROW(c.seq, c.op, c.w, c.k, c.s, c.e, c.n, c.su, c.mi, c.ma)::streamforge.change::text, o FROM streamforge.tick(%L) WITH ORDINALITY c(seq, op, w, k, s, e, n, su, mi, ma, o)',
                    cf.pl);
        model := 'SELECT sfr.m_decide()';
    ELSIF r < 0.91 THEN
        -- set_lateness, up or down (not up with a retention: the buckets
        -- a raise brings back are rebuilt from the remembered events only)
        k := sfr.rint(0, 6)::int;
        IF cf.ret IS NOT NULL THEN
            k := least(k, cf.lateness);
        END IF;
        q := format('SELECT ROW(c.seq, c.op, c.w, c.k, c.s, c.e, c.n, c.su, c.mi, c.ma)::streamforge.change::text, o FROM streamforge.set_lateness(%L, %s) WITH ORDINALITY c(seq, op, w, k, s, e, n, su, mi, ma, o)',
                    cf.pl, k);
        model := format('SELECT sfr.m_set_lateness(%s)', k);
        what := format('set_lateness(%s) from %s', k, cf.lateness);
    ELSIF r < 0.925 THEN
        -- set_retention: lower, or one where there was none
        k := sfr.rint(0, coalesce(cf.ret, 6))::int;
        q := format('SELECT ROW(c.seq, c.op, c.w, c.k, c.s, c.e, c.n, c.su, c.mi, c.ma)::streamforge.change::text, o FROM streamforge.set_retention(%L, %s) WITH ORDINALITY c(seq, op, w, k, s, e, n, su, mi, ma, o)',
                    cf.pl, k);
        model := format('SELECT sfr.m_set_retention(%s)', k);
        what := format('set_retention(%s) from %s', k, cf.ret);
    ELSE
        -- refused calls: nothing changes
        k := sfr.rint(1, 4)::int;
        IF cf.kind = 'agg' THEN
            k := 4;
        END IF;
        CASE k
        WHEN 1 THEN     -- an offset gap
            what := 'ingest at a gap';
            IF cf.kind = 'classic' THEN
                q := format('SELECT ROW(c.seq, c.op, c.w, c.k, c.s, c.e, c.n, c.su, c.mi, c.ma)::streamforge.change::text, o FROM streamforge.ingest(%L, %L, %s, ''gap'', ''a'', 0, 1) WITH ORDINALITY c(seq, op, w, k, s, e, n, su, mi, ma, o)',
                            cf.pl, p, (nxt ->> p)::bigint + 1);
            ELSE
                q := format('SELECT ROW(c.seq, c.op, c.w, c.k, c.s, c.e, c.n, c.a)::streamforge.measures_change::text, o FROM streamforge.ingest_measures(%L, %L, %s, ''gap'', ''a'', 0, ARRAY[1, 2]) WITH ORDINALITY c(seq, op, w, k, s, e, n, a, o)',
                            cf.pl, p, (nxt ->> p)::bigint + 1);
            END IF;
            model := 'SELECT sfr.m_fail(''SF001'')';
        WHEN 2 THEN     -- a NULL event id
            what := 'ingest with a NULL event_id';
            IF cf.kind = 'classic' THEN
                q := format('SELECT ROW(c.seq, c.op, c.w, c.k, c.s, c.e, c.n, c.su, c.mi, c.ma)::streamforge.change::text, o FROM streamforge.ingest(%L, %L, %s, NULL, ''a'', 0, 1) WITH ORDINALITY c(seq, op, w, k, s, e, n, su, mi, ma, o)',
                            cf.pl, p, (nxt ->> p)::bigint);
            ELSE
                q := format('SELECT ROW(c.seq, c.op, c.w, c.k, c.s, c.e, c.n, c.a)::streamforge.measures_change::text, o FROM streamforge.ingest_measures(%L, %L, %s, NULL, ''a'', 0, ARRAY[1, 2]) WITH ORDINALITY c(seq, op, w, k, s, e, n, a, o)',
                            cf.pl, p, (nxt ->> p)::bigint);
            END IF;
            model := 'SELECT sfr.m_fail(''22004'')';
        WHEN 3 THEN     -- the other kind's function
            what := 'ingest function of the other pipeline kind';
            IF cf.kind = 'classic' THEN
                q := format('SELECT ROW(c.seq, c.op, c.w, c.k, c.s, c.e, c.n, c.a)::streamforge.measures_change::text, o FROM streamforge.ingest_measures(%L, %L, %s, ''wrong'', ''a'', 0, ARRAY[1]) WITH ORDINALITY c(seq, op, w, k, s, e, n, a, o)',
                            cf.pl, p, (nxt ->> p)::bigint);
            ELSE
                q := format('SELECT ROW(c.seq, c.op, c.w, c.k, c.s, c.e, c.n, c.su, c.mi, c.ma)::streamforge.change::text, o FROM streamforge.ingest(%L, %L, %s, ''wrong'', ''a'', 0, 1) WITH ORDINALITY c(seq, op, w, k, s, e, n, su, mi, ma, o)',
                            cf.pl, p, (nxt ->> p)::bigint);
            END IF;
            model := 'SELECT sfr.m_fail(''22023'')';
        ELSE            -- an unknown partition
            what := 'advance of an unknown partition';
            q := format('SELECT ROW(c.seq, c.op, c.w, c.k, c.s, c.e, c.n, c.su, c.mi, c.ma)::streamforge.change::text, o FROM streamforge.advance(%L, ''nope'', 0) WITH ORDINALITY c(seq, op, w, k, s, e, n, su, mi, ma, o)',
                        cf.pl);
            model := 'SELECT sfr.m_fail(''22023'')';
        END CASE;
    END IF;
    n := sfr.call(what, q, via, model);
END $$;

-- Notifications the listener got for the trace's pipeline since the last
-- look (it listens on streamforge_changes, every pipeline's channel, and
-- keeps those naming this pipeline's id).  The listener runs a statement
-- first: a backend sends the notifications it has received before it
-- answers.
CREATE FUNCTION sfr.notes_got() RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
    id bigint := (SELECT pid FROM sfr.cfg);
BEGIN
    PERFORM dblink_exec('sfr_lsn', 'SET application_name = sfr_listener');
    RETURN coalesce((SELECT array_agg(x.extra::jsonb::text ORDER BY x.extra::jsonb::text)
                       FROM dblink_get_notify('sfr_lsn') x
                      WHERE x.notify_name = 'streamforge_changes'
                        AND (x.extra::jsonb ->> 'pipeline_id')::bigint = id), '{}');
END $$;

-- Run the traces of seeds lo..hi.  Each trace: a pipeline of a random
-- kind, steps of random calls, each its own transaction, everything
-- compared after each.  A failing trace is recorded in sfr.failure (with
-- the seed, the step and what differed) and the run goes on with the next.
CREATE PROCEDURE sfr.run(lo int, hi int, nsteps int DEFAULT 10, p_kind text DEFAULT NULL)
LANGUAGE plpgsql AS $$
DECLARE
    clk bigint;
    neid int;
    wrap text;
    notes text[];
    got text[];
    what text;
    err text;
    detail text;
    r float8;
    cf sfr.cfg;
    allnotes text[];
    jumped boolean;
    decided boolean := false;
    every_step_notes boolean := current_setting('sfr.every_step_notes', true) = 'on';
BEGIN
    IF NOT ('sfr_lsn' = ANY (coalesce(dblink_get_connections(), '{}'))) THEN
        PERFORM dblink_connect('sfr_lsn', sfr.connstr());
        PERFORM dblink_connect('sfr_b2', sfr.connstr());
        PERFORM dblink_exec('sfr_b2', 'SET lock_timeout = ''20s''');
        PERFORM dblink_exec('sfr_lsn', 'LISTEN streamforge_changes');
    END IF;
    FOR sd IN lo..hi LOOP
        err := NULL;
        BEGIN
            PERFORM sfr.setup(sd, p_kind);
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS err = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL;
            INSERT INTO sfr.failure VALUES (sd, 0, 'setup: ' || err, detail);
            COMMIT;
            CONTINUE;
        END;
        SELECT * INTO cf FROM sfr.cfg;
        COMMIT;
        allnotes := '{}';
        jumped := false;
        clk := sfr.rint(-10, 10);
        neid := 0;
        FOR s IN 1..nsteps + 1 LOOP
            r := random();
            -- the last step restores the pipeline's own checkpoint, which
            -- must restore and change nothing but the outputs' epoch
            wrap := CASE WHEN s > nsteps THEN 'end' ELSE CASE WHEN r < 0.62 THEN 'commit' WHEN r < 0.79 THEN 'savepoint'
                         WHEN r < 0.88 THEN 'rollback' WHEN r < 0.975 THEN 'remote'
                         ELSE 'cold' END END;
            what := NULL;
            IF cf.idle AND s <= nsteps AND NOT jumped AND random() < 0.45 THEN
                -- idle_timeout: the clock jumps two hours (every
                -- partition's activity moves back; set_idle_timeout, to
                -- another timeout of about an hour, makes every backend
                -- look again: they cache when the next decision can come)
                -- (a timeout of this seed and step alone: a backend's
                -- cache outlives a pipeline of the same name)
                PERFORM streamforge.set_idle_timeout(cf.pl,
                    interval '1 hour' + make_interval(secs => (sd::bigint * 1000 + s) / 1000000.0));
                UPDATE streamforge.partition_activity a
                   SET last_delivery = a.last_delivery - interval '2 hours',
                       last_report = a.last_report - interval '2 hours',
                       since = a.since - interval '2 hours'
                 WHERE a.pipeline_id = cf.pid;
                UPDATE sfr.st SET jump = true;
                jumped := true;
                COMMIT;
            END IF;
            BEGIN
                SELECT x.clk, x.neid, x.notes, x.what INTO clk, neid, notes, what
                  FROM sfr.step(wrap, clk, neid) x;
            EXCEPTION WHEN OTHERS THEN
                GET STACKED DIAGNOSTICS err = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL;
                detail := coalesce(detail, '') || E'\ncontext: ' || wrap;
            END;
            IF wrap = 'rollback' THEN
                ROLLBACK;
                notes := '{}';
            ELSE
                COMMIT;
            END IF;
            IF err IS NULL THEN
                BEGIN
                    PERFORM sfr.check_state();
                    -- the notifications of a transaction: one per distinct payload
                    allnotes := allnotes || ARRAY(SELECT DISTINCT x::jsonb::text FROM unnest(notes) x);
                    IF s > nsteps OR every_step_notes THEN
                        got := sfr.notes_got();
                        PERFORM sfr.same('notifications (sorted)', got,
                            ARRAY(SELECT x FROM unnest(allnotes) x ORDER BY 1));
                        allnotes := '{}';
                    END IF;
                EXCEPTION WHEN OTHERS THEN
                    GET STACKED DIAGNOSTICS err = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL;
                    detail := coalesce(detail, '') || E'\nafter: ' || wrap || ' ' || coalesce(what, '');
                END;
            END IF;
            IF err IS NOT NULL THEN
                INSERT INTO sfr.failure VALUES (sd, s, err, detail);
                COMMIT;
                EXIT;
            END IF;
            IF current_setting('sfr.debug', true) = 'on' THEN
                RAISE NOTICE 'seed % step %: % %, jump %', sd, s, wrap, what, (SELECT jump FROM sfr.st);
            END IF;
            IF jumped AND NOT (SELECT jump FROM sfr.st) THEN
                -- the decisions were made and committed: the clock comes
                -- back (what was written since stays)
                UPDATE streamforge.partition_activity a
                   SET last_delivery = CASE WHEN a.last_delivery < now() - interval '90 minutes'
                                            THEN a.last_delivery + interval '2 hours' ELSE a.last_delivery END,
                       last_report = CASE WHEN a.last_report < now() - interval '90 minutes'
                                          THEN a.last_report + interval '2 hours' ELSE a.last_report END,
                       since = CASE WHEN a.since < now() - interval '90 minutes'
                                    THEN a.since + interval '2 hours' ELSE a.since END
                 WHERE a.pipeline_id = cf.pid;
                jumped := false;
                decided := true;
            END IF;
            UPDATE sfr.ran x SET steps = x.steps + 1 WHERE x.seed = sd;
            IF NOT FOUND THEN
                INSERT INTO sfr.ran (seed, kind, mode, steps)
                SELECT sd, c.kind, (SELECT mode FROM sfr.st), 1 FROM sfr.cfg c;
            END IF;
            IF decided THEN
                UPDATE sfr.ran x SET jumps = x.jumps + 1 WHERE x.seed = sd;
                decided := false;
            END IF;
            COMMIT;
        END LOOP;
    END LOOP;
END $$;
