-- test/model/model.sql
--
-- Support code for the randomized and metamorphic regression tests
-- (sql/random_*.sql), loaded with "\i test/model/model.sql" from the
-- directory pg_regress runs in.  Everything lives in schema "sfm", which
-- each test file creates on load and drops at its end.
--
-- Three parts:
--
-- 1. A deterministic random operation generator (sfm.gen): given a scenario
--    (partitions, windows, lateness, keys, knobs) and the seed set with
--    setseed(), it writes a stream of ingest / advance / mark_idle
--    operations to sfm.ops.  By construction it produces new events,
--    out-of-order and very late event times, duplicate event ids (same
--    identity, possibly on another partition), replays of consumed offsets,
--    and deliveries that must fail with SF001 (gap, negative offset,
--    different delivery at a consumed offset) or SF002 (known event id with
--    a different identity).  Its "intent" column says which.
--
-- 2. An independent brute-force model of docs/semantics.md, written in
--    plain SQL: offsets, identities, the clock, lateness, and the live
--    buckets recomputed from scratch from the accepted events after every
--    operation (fixed with floor division, sliding via generate_series over
--    the multiples of step, sessions via gaps-and-islands).  The model keeps
--    its own set of finalized bucket addresses, and a "visible" table that
--    it maintains only by applying the changes the engine emits.
--
-- 3. A checker (procedure sfm.run_model, one transaction per operation)
--    that drives one pipeline and the model op by op and compares, after
--    every operation: the outcome (success, or the SQLSTATE and message
--    prefix, with identical checkpoint bytes before and after a failure),
--    the change stream (seq consecutive from 1, retracts before upserts,
--    each group in byte-wise address order, every retract removing exactly
--    a visible row with its exact values, no no-op pairs, visible == ready
--    view), live(), visible(), watermark(), late_events() and partitions().
--    The first disagreement raises an error whose DETAIL names the
--    operation and shows both sides; sfm.summary() reports what ran.
--
-- The engine-vs-engine helpers of the metamorphic tests are in twins.sql.

SET client_min_messages = warning;
DROP SCHEMA IF EXISTS sfm CASCADE;
CREATE SCHEMA sfm;

-- ----------------------------------------------------------------
-- Scenarios and generated operations
-- ----------------------------------------------------------------

CREATE TABLE sfm.scenario (
    scn         text PRIMARY KEY,
    parts       text[] NOT NULL,    -- partition names, declaration order
    lateness    bigint NOT NULL,
    keys        text[] NOT NULL,
    retention   bigint              -- docs/semantics.md "Retention"; NULL keeps everything
);

-- Window definitions of a scenario; "pos" is the declaration order.
CREATE TABLE sfm.win (
    scn         text,
    pos         int,
    name        text NOT NULL,
    kind        text NOT NULL CHECK (kind IN ('fixed', 'sliding', 'session')),
    size        bigint,
    step        bigint,
    gap         bigint,
    PRIMARY KEY (scn, pos),
    UNIQUE (scn, name)
);

CREATE TABLE sfm.ops (
    scn         text,
    i           int,
    kind        text NOT NULL CHECK (kind IN ('ingest', 'advance', 'idle')),
    part        text NOT NULL,
    off         bigint,             -- ingest
    eid         text,               -- ingest
    key         text,               -- ingest
    t           bigint,             -- ingest: event time; advance: progress
    v           bigint,             -- ingest
    intent      text NOT NULL,      -- new, dup, replay, sf001, sf002, advance, idle
    PRIMARY KEY (scn, i)
);

-- Define a scenario.  wins is a JSON array of [kind, name, a(, b)].
CREATE FUNCTION sfm.define(p_scn text, p_parts text[], p_wins jsonb,
                           p_lateness bigint, p_keys text[],
                           p_retention bigint DEFAULT NULL)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    w jsonb;
    n int := 0;
BEGIN
    DELETE FROM sfm.win WHERE scn = p_scn;
    DELETE FROM sfm.scenario WHERE scn = p_scn;
    INSERT INTO sfm.scenario VALUES (p_scn, p_parts, p_lateness, p_keys,
                                     p_retention);
    FOR w IN SELECT value FROM jsonb_array_elements(p_wins) LOOP
        n := n + 1;
        INSERT INTO sfm.win VALUES (p_scn, n, w->>1, w->>0,
            CASE WHEN w->>0 IN ('fixed', 'sliding') THEN (w->>2)::bigint END,
            CASE WHEN w->>0 = 'sliding' THEN (w->>3)::bigint END,
            CASE WHEN w->>0 = 'session' THEN (w->>2)::bigint END);
    END LOOP;
END $$;

-- The window_def array of a scenario, in declaration order or permuted
-- (perm[i] = declaration position of the i-th element).
CREATE FUNCTION sfm.wdefs(p_scn text, perm int[] DEFAULT NULL)
RETURNS streamforge.window_def[] LANGUAGE sql STABLE AS $$
    SELECT array_agg(CASE w.kind
            WHEN 'fixed' THEN streamforge.fixed(w.name, w.size)
            WHEN 'sliding' THEN streamforge.sliding(w.name, w.size, w.step)
            ELSE streamforge.session(w.name, w.gap) END
           ORDER BY coalesce(array_position(perm, w.pos), w.pos))
    FROM sfm.win w WHERE w.scn = p_scn
$$;

CREATE FUNCTION sfm.parts(p_scn text, perm int[] DEFAULT NULL)
RETURNS text[] LANGUAGE sql STABLE AS $$
    SELECT array_agg(s.parts[k] ORDER BY coalesce(array_position(perm, k), k))
    FROM sfm.scenario s, generate_subscripts(s.parts, 1) AS k
    WHERE s.scn = p_scn
$$;

-- A random permutation of 1..n (uses random(), so it follows setseed()).
CREATE FUNCTION sfm.perm(n int) RETURNS int[] LANGUAGE plpgsql AS $$
DECLARE
    a int[] := ARRAY(SELECT generate_series(1, n));
    j int;
    tmp int;
BEGIN
    FOR i IN REVERSE n..2 LOOP
        j := 1 + floor(random() * i)::int;
        tmp := a[i]; a[i] := a[j]; a[j] := tmp;
    END LOOP;
    RETURN a;
END $$;

CREATE FUNCTION sfm.create(pl text, p_scn text, wperm int[] DEFAULT NULL,
                           pperm int[] DEFAULT NULL)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM streamforge.create_pipeline(pl, sfm.parts(p_scn, pperm),
                                        sfm.wdefs(p_scn, wperm),
                                        (SELECT lateness FROM sfm.scenario
                                         WHERE scn = p_scn),
                                        (SELECT retention FROM sfm.scenario
                                         WHERE scn = p_scn));
END $$;

-- Pick an integer in [lo, hi].
CREATE FUNCTION sfm.rint(lo bigint, hi bigint) RETURNS bigint
LANGUAGE sql VOLATILE AS $$ SELECT lo + floor(random() * (hi - lo + 1))::bigint $$;

-- Generate n operations for scenario p_scn.  Knobs: the clock starts at
-- clock0 and moves by 0..2 per operation; new events are up to "spread"
-- behind the clock (and up to 3 ahead), 8% are far behind; an advance
-- reports the clock minus up to "lag"; p_adv / p_idle are the probabilities
-- of an advance / mark_idle operation.
CREATE FUNCTION sfm.gen(p_scn text, n int, clock0 bigint,
                        spread int DEFAULT 15, lag int DEFAULT 10,
                        p_adv float8 DEFAULT 0.10, p_idle float8 DEFAULT 0.03)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    sc sfm.scenario;
    np int;
    nxt bigint[];               -- next offset per partition (index in parts)
    prog bigint[];              -- last progress the generator reported
    clk bigint := clock0;
    nnew int := 0;
    k int;
    r float8;
    e sfm.ops;
    o sfm.ops;
    pt text;
    pick bigint;
BEGIN
    SELECT * INTO sc FROM sfm.scenario WHERE scn = p_scn;
    np := cardinality(sc.parts);
    nxt := array_fill(0::bigint, ARRAY[np]);
    prog := array_fill(clock0, ARRAY[np]);
    DELETE FROM sfm.ops WHERE scn = p_scn;
    FOR i IN 1..n LOOP
        clk := clk + sfm.rint(0, 2);
        k := sfm.rint(1, np)::int;
        pt := sc.parts[k];
        o := ROW(p_scn, i, 'ingest', pt, NULL, NULL, NULL, NULL, NULL, NULL);
        r := random();
        IF r < p_adv THEN
            o.kind := 'advance';
            o.intent := 'advance';
            IF random() < 0.15 THEN
                o.t := prog[k] - sfm.rint(0, 2 * lag);  -- at or below: ignored
            ELSE
                o.t := clk - sfm.rint(0, lag);
            END IF;
            prog[k] := greatest(prog[k], o.t);
        ELSIF r < p_adv + p_idle THEN
            o.kind := 'idle';
            o.intent := 'idle';
        ELSE
            r := random();
            IF r < 0.06 AND nxt[k] > 0 THEN
                -- replay of a consumed offset with its exact delivery
                pick := sfm.rint(0, nxt[k] - 1);
                SELECT * INTO STRICT e FROM sfm.ops
                 WHERE scn = p_scn AND part = pt AND off = pick
                   AND intent IN ('new', 'dup');
                o.off := e.off; o.eid := e.eid; o.key := e.key; o.t := e.t; o.v := e.v;
                o.intent := 'replay';
            ELSIF r < 0.10 AND nnew > 0 THEN
                -- known event id, same identity, next offset (any partition)
                pick := sfm.rint(0, nnew - 1);
                SELECT * INTO STRICT e FROM sfm.ops
                 WHERE scn = p_scn AND intent = 'new'
                 ORDER BY i OFFSET pick LIMIT 1;
                o.off := nxt[k]; o.eid := e.eid; o.key := e.key; o.t := e.t; o.v := e.v;
                o.intent := 'dup';
                nxt[k] := nxt[k] + 1;
            ELSIF r < 0.12 AND nnew > 0 THEN
                -- known event id, different identity: SF002
                pick := sfm.rint(0, nnew - 1);
                SELECT * INTO STRICT e FROM sfm.ops
                 WHERE scn = p_scn AND intent = 'new'
                 ORDER BY i OFFSET pick LIMIT 1;
                o.off := nxt[k]; o.eid := e.eid; o.key := e.key; o.t := e.t; o.v := e.v;
                CASE sfm.rint(0, 2)
                    WHEN 0 THEN o.v := o.v + 1;
                    WHEN 1 THEN o.t := o.t - 1;
                    ELSE o.key := o.key || '#';
                END CASE;
                o.intent := 'sf002';
            ELSIF r < 0.14 THEN
                -- offset conflicts: SF001 (checked before identity)
                o.eid := format('%s-x%s', p_scn, i);
                o.key := sc.keys[sfm.rint(1, cardinality(sc.keys))];
                o.t := clk;
                o.v := 1;
                r := random();
                IF r < 0.4 OR nxt[k] = 0 THEN
                    o.off := nxt[k] + sfm.rint(1, 3);           -- gap
                ELSIF r < 0.55 THEN
                    o.off := -sfm.rint(1, 3);                    -- negative
                ELSE
                    -- a different delivery at a consumed offset
                    pick := sfm.rint(0, nxt[k] - 1);
                    SELECT * INTO STRICT e FROM sfm.ops
                     WHERE scn = p_scn AND part = pt AND off = pick
                       AND intent IN ('new', 'dup');
                    o.off := e.off; o.eid := e.eid; o.key := e.key; o.t := e.t; o.v := e.v;
                    CASE sfm.rint(0, 3)
                        WHEN 0 THEN o.v := o.v - 1;
                        WHEN 1 THEN o.t := o.t + 1;
                        WHEN 2 THEN o.key := o.key || '#';
                        ELSE o.eid := format('%s-y%s', p_scn, i);
                    END CASE;
                END IF;
                o.intent := 'sf001';
            ELSE
                -- a new event
                o.off := nxt[k];
                o.eid := format('%s-%s', p_scn, i);
                o.key := sc.keys[sfm.rint(1, cardinality(sc.keys))];
                IF random() < 0.08 THEN
                    o.t := clk - spread - sfm.rint(0, 3 * spread);
                ELSE
                    o.t := clk - sfm.rint(0, spread) + sfm.rint(0, 3);
                END IF;
                o.v := sfm.rint(-20, 20);
                o.intent := 'new';
                nxt[k] := nxt[k] + 1;
                nnew := nnew + 1;
            END IF;
        END IF;
        INSERT INTO sfm.ops VALUES (o.*);
    END LOOP;
END $$;

CREATE FUNCTION sfm.op_text(o sfm.ops) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE o.kind
        WHEN 'ingest' THEN format('ingest(partition %L, offset %s, event_id %L, key %L, time %s, value %s) [%s]',
                                  o.part, o.off, o.eid, o.key, o.t, o.v, o.intent)
        WHEN 'advance' THEN format('advance(partition %L, progress %s)', o.part, o.t)
        ELSE format('mark_idle(partition %L)', o.part) END
$$;

-- Run one operation against the engine, returning its changes in order.
CREATE FUNCTION sfm.engine_op(pl text, o sfm.ops)
RETURNS SETOF streamforge.change LANGUAGE plpgsql AS $$
BEGIN
    IF o.kind = 'ingest' THEN
        RETURN QUERY SELECT * FROM streamforge.ingest(pl, o.part, o.off, o.eid, o.key, o.t, o.v);
    ELSIF o.kind = 'advance' THEN
        RETURN QUERY SELECT * FROM streamforge.advance(pl, o.part, o.t);
    ELSE
        RETURN QUERY SELECT * FROM streamforge.mark_idle(pl, o.part);
    END IF;
END $$;

-- ----------------------------------------------------------------
-- The model
-- ----------------------------------------------------------------

CREATE TABLE sfm.m_pipe (
    pl          text PRIMARY KEY,
    scn         text NOT NULL,
    lateness    bigint NOT NULL,
    retention   bigint,
    wm          bigint,
    last_seq    bigint NOT NULL DEFAULT 0,
    -- statistics for the summary
    nops        bigint NOT NULL DEFAULT 0,
    naccepted   bigint NOT NULL DEFAULT 0,
    nlate       bigint NOT NULL DEFAULT 0,
    ndup        bigint NOT NULL DEFAULT 0,
    nreplay     bigint NOT NULL DEFAULT 0,
    nsf001      bigint NOT NULL DEFAULT 0,
    nsf002      bigint NOT NULL DEFAULT 0,
    nadvance    bigint NOT NULL DEFAULT 0,
    nidle       bigint NOT NULL DEFAULT 0,
    nretract    bigint NOT NULL DEFAULT 0,
    nupsert     bigint NOT NULL DEFAULT 0,
    nfinal      bigint NOT NULL DEFAULT 0,
    nmerge      bigint NOT NULL DEFAULT 0,  -- retracts of vanished addresses
    ncorrect    bigint NOT NULL DEFAULT 0,  -- retract+upsert of one address
    maxlive     bigint NOT NULL DEFAULT 0,
    nreact      bigint NOT NULL DEFAULT 0,  -- advances of an idle partition
    nlower      bigint NOT NULL DEFAULT 0,  -- advances below the progress
    nheld       bigint NOT NULL DEFAULT 0,  -- clock ops leaving no active partition
    nedge       bigint NOT NULL DEFAULT 0,  -- accepted with t + lateness = watermark
    nforgot     bigint NOT NULL DEFAULT 0,  -- identities forgotten (retention)
    nchecks     bigint NOT NULL DEFAULT 0
);

CREATE TABLE sfm.m_part (
    pl          text,
    part        text,
    consumed    bigint NOT NULL DEFAULT -1,
    progress    bigint,
    idle        boolean NOT NULL DEFAULT false,
    PRIMARY KEY (pl, part)
);

-- every consumed delivery, at its offset (minus those forgotten)
CREATE TABLE sfm.m_deliv (
    pl text, part text, off bigint, eid text, key text, t bigint, v bigint,
    PRIMARY KEY (pl, part, off)
);

-- every unique event id and its identity (minus those forgotten)
CREATE TABLE sfm.m_ident (
    pl text, eid text, key text, t bigint, v bigint,
    PRIMARY KEY (pl, eid)
);

-- the unique accepted (not late) events; with retention an event_id can
-- be accepted again once forgotten, never with the same time
CREATE TABLE sfm.m_event (
    pl text, eid text, key text, t bigint, v bigint,
    PRIMARY KEY (pl, eid, t)
);

-- the late output; gone: forgotten by the retention horizon
CREATE TABLE sfm.m_late (
    pl text, late_seq bigint, part text, off bigint, eid text, key text,
    t bigint, v bigint, wm bigint, gone boolean NOT NULL DEFAULT false,
    PRIMARY KEY (pl, late_seq)
);

-- addresses of finalized buckets
CREATE TABLE sfm.m_final (
    pl text, wname text, key text, ws bigint, we bigint,
    PRIMARY KEY (pl, wname, key, ws, we)
);

-- the rows emitted and not retracted (nor forgotten by finalization),
-- maintained only by applying the engine's changes
CREATE TABLE sfm.m_vis (
    pl text, wname text, key text, ws bigint, we bigint,
    cnt bigint, sm numeric, mn bigint, mx bigint,
    PRIMARY KEY (pl, wname, key, ws, we)
);

-- a bucket or row; the model's live buckets are held in arrays of these
CREATE TYPE sfm.brow AS (
    wname text, key text, ws bigint, we bigint,
    cnt bigint, sm numeric, mn bigint, mx bigint
);

-- scratch: the changes of the current op

CREATE TABLE sfm.m_chg (
    pl text, ord bigint, seq bigint, op text, wname text, key text,
    ws bigint, we bigint, cnt bigint, sm numeric, mn bigint, mx bigint,
    PRIMARY KEY (pl, ord)
);

CREATE FUNCTION sfm.model_reset(pl text, p_scn text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM sfm.m_pipe m WHERE m.pl = $1;
    DELETE FROM sfm.m_part m WHERE m.pl = $1;
    DELETE FROM sfm.m_deliv m WHERE m.pl = $1;
    DELETE FROM sfm.m_ident m WHERE m.pl = $1;
    DELETE FROM sfm.m_event m WHERE m.pl = $1;
    DELETE FROM sfm.m_late m WHERE m.pl = $1;
    DELETE FROM sfm.m_final m WHERE m.pl = $1;
    DELETE FROM sfm.m_vis m WHERE m.pl = $1;
    DELETE FROM sfm.m_chg m WHERE m.pl = $1;
    INSERT INTO sfm.m_pipe (pl, scn, lateness, retention)
        SELECT $1, s.scn, s.lateness, s.retention
          FROM sfm.scenario s WHERE s.scn = p_scn;
    INSERT INTO sfm.m_part (pl, part)
        SELECT $1, unnest(s.parts) FROM sfm.scenario s WHERE s.scn = p_scn;
END $$;

-- Floor division for b > 0 (bigint "/" truncates toward zero).
CREATE FUNCTION sfm.floordiv(a bigint, b bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN a % b < 0 THEN a / b - 1 ELSE a / b END
$$;

-- Every bucket of the accepted events, recomputed from scratch (finalized
-- ones included; the caller removes those).
CREATE FUNCTION sfm.model_buckets(p text)
RETURNS TABLE (wname text, key text, ws bigint, we bigint,
               cnt bigint, sm numeric, mn bigint, mx bigint)
LANGUAGE sql STABLE AS $$
WITH ev AS (
    SELECT e.eid, e.key, e.t, e.v FROM sfm.m_event e WHERE e.pl = p
), w AS (
    SELECT w.* FROM sfm.win w JOIN sfm.m_pipe m ON m.scn = w.scn WHERE m.pl = p
), fx AS (
    -- start = floor(t / size) * size, with true floor division
    SELECT w.name, ev.key, sfm.floordiv(ev.t, w.size) * w.size AS s,
           w.size, ev.v
      FROM w CROSS JOIN ev WHERE w.kind = 'fixed'
), sl AS (
    -- every multiple s of step with s <= t < s + size
    SELECT w.name, ev.key, g.s, w.size, ev.v
      FROM w CROSS JOIN ev
      CROSS JOIN LATERAL generate_series(
            -sfm.floordiv(-(ev.t - w.size + 1), w.step) * w.step,  -- ceil
            sfm.floordiv(ev.t, w.step) * w.step,
            w.step) AS g(s)
     WHERE w.kind = 'sliding'
), se0 AS (
    -- an interval [t, t + gap) starts a new island unless it intersects or
    -- touches the union of the earlier ones (t <= their max end)
    SELECT w.name, ev.key, ev.t, ev.v, w.gap,
           CASE WHEN ev.t <= max(ev.t + w.gap) OVER (
                    PARTITION BY w.name, ev.key ORDER BY ev.t, ev.eid
                    ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
                THEN 0 ELSE 1 END AS brk,
           ev.eid
      FROM w CROSS JOIN ev WHERE w.kind = 'session'
), se AS (
    SELECT name, key, t, v, gap,
           sum(brk) OVER (PARTITION BY name, key ORDER BY t, eid
                          ROWS UNBOUNDED PRECEDING) AS island
      FROM se0
)
SELECT name, key, s, s + size, count(*), sum(v), min(v), max(v)
  FROM fx GROUP BY name, key, s, size
UNION ALL
SELECT name, key, s, s + size, count(*), sum(v), min(v), max(v)
  FROM sl GROUP BY name, key, s, size
UNION ALL
SELECT name, key, min(t), max(t + gap), count(*), sum(v), min(v), max(v)
  FROM se GROUP BY name, key, island
$$;

-- The model's live buckets: every bucket that is not finalized.
CREATE FUNCTION sfm.model_live(p text) RETURNS sfm.brow[] LANGUAGE plpgsql AS $$
BEGIN
    RETURN ARRAY(
        SELECT ROW(b.*)::sfm.brow FROM sfm.model_buckets(p) b
         WHERE NOT EXISTS (SELECT 1 FROM sfm.m_final f
                            WHERE f.pl = p AND f.wname = b.wname AND f.key = b.key
                              AND f.ws = b.ws AND f.we = b.we));
END $$;

-- The model's visible rows.
CREATE FUNCTION sfm.model_vis(p text) RETURNS sfm.brow[] LANGUAGE plpgsql AS $$
BEGIN
    RETURN ARRAY(SELECT ROW(v.wname, v.key, v.ws, v.we, v.cnt, v.sm, v.mn, v.mx)::sfm.brow
                   FROM sfm.m_vis v WHERE v.pl = p);
END $$;

-- The global watermark after a change of partition progress or idleness:
-- the minimum progress of the non-idle partitions once all have reported;
-- never decreasing; held when no partition is active.
CREATE FUNCTION sfm.model_clock(p text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    nactive bigint;
    nreported bigint;
    lo bigint;
BEGIN
    SELECT count(*), count(progress), min(progress)
      INTO nactive, nreported, lo
      FROM sfm.m_part WHERE pl = p AND NOT idle;
    IF nactive > 0 AND nreported = nactive THEN
        UPDATE sfm.m_pipe SET wm = greatest(wm, lo) WHERE pl = p;
    END IF;
END $$;

-- Apply one operation to the model.  Returns its outcome: 'accepted',
-- 'late', 'dup', 'replay', 'advance', 'idle', or the SQLSTATE it must
-- fail with ('SF001', 'SF002'), in which case the model is unchanged.
CREATE FUNCTION sfm.model_op(p text, o sfm.ops) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    c bigint;
    d sfm.m_deliv;
    idn sfm.m_ident;
    known boolean;
    mp sfm.m_pipe;
BEGIN
    SELECT * INTO mp FROM sfm.m_pipe WHERE pl = p;
    IF o.kind = 'advance' THEN
        UPDATE sfm.m_pipe m SET
            nreact = nreact + (SELECT x.idle::int FROM sfm.m_part x
                                WHERE x.pl = p AND x.part = o.part),
            nlower = nlower + (SELECT coalesce((o.t < x.progress)::int, 0) FROM sfm.m_part x
                                WHERE x.pl = p AND x.part = o.part)
         WHERE m.pl = p;
        -- reactivates; a lower report is ignored
        UPDATE sfm.m_part SET idle = false, progress = greatest(progress, o.t)
         WHERE pl = p AND part = o.part;
        PERFORM sfm.model_clock(p);
        RETURN 'advance';
    ELSIF o.kind = 'idle' THEN
        UPDATE sfm.m_part SET idle = true WHERE pl = p AND part = o.part;
        PERFORM sfm.model_clock(p);
        UPDATE sfm.m_pipe m SET nheld = nheld + 1
         WHERE m.pl = p AND NOT EXISTS (SELECT 1 FROM sfm.m_part x
                                         WHERE x.pl = p AND NOT x.idle);
        RETURN 'idle';
    END IF;

    -- offset first
    SELECT consumed INTO c FROM sfm.m_part WHERE pl = p AND part = o.part;
    IF o.off < 0 OR o.off > c + 1 THEN
        RETURN 'SF001';
    END IF;
    IF o.off <= c THEN
        SELECT * INTO d FROM sfm.m_deliv WHERE pl = p AND part = o.part AND off = o.off;
        IF NOT FOUND THEN
            RETURN 'replay';    -- docs/semantics.md "Retention" rule 2: a forgotten offset record
        END IF;
        IF d.eid = o.eid AND d.key = o.key AND d.t = o.t AND d.v = o.v THEN
            RETURN 'replay';
        END IF;
        RETURN 'SF001';
    END IF;

    -- then identity
    SELECT * INTO idn FROM sfm.m_ident WHERE pl = p AND eid = o.eid;
    known := FOUND;
    IF known AND NOT (idn.key = o.key AND idn.t = o.t AND idn.v = o.v) THEN
        RETURN 'SF002';
    END IF;

    UPDATE sfm.m_part SET consumed = o.off WHERE pl = p AND part = o.part;
    INSERT INTO sfm.m_deliv VALUES (p, o.part, o.off, o.eid, o.key, o.t, o.v);
    IF known THEN
        RETURN 'dup';
    END IF;
    INSERT INTO sfm.m_ident VALUES (p, o.eid, o.key, o.t, o.v);
    IF mp.wm IS NOT NULL AND o.t + mp.lateness < mp.wm THEN
        INSERT INTO sfm.m_late
        SELECT p, coalesce(max(late_seq), 0) + 1, o.part, o.off, o.eid, o.key,
               o.t, o.v, mp.wm
          FROM sfm.m_late WHERE pl = p;
        RETURN 'late';
    END IF;
    INSERT INTO sfm.m_event VALUES (p, o.eid, o.key, o.t, o.v);
    IF o.t + mp.lateness = mp.wm THEN
        UPDATE sfm.m_pipe SET nedge = nedge + 1 WHERE pl = p;
    END IF;
    RETURN 'accepted';
END $$;

-- docs/semantics.md "Retention", literally: after a successful call, forget every identity and
-- offset record with event_time < H and every late event with watermark <
-- H, where H = watermark - lateness - retention (in numeric: exact).
CREATE FUNCTION sfm.model_forget(p text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    mp sfm.m_pipe;
    h numeric;
    n bigint;
BEGIN
    SELECT * INTO mp FROM sfm.m_pipe WHERE pl = p;
    IF mp.retention IS NULL OR mp.wm IS NULL THEN
        RETURN;
    END IF;
    h := mp.wm::numeric - mp.lateness - mp.retention;
    IF h < -9223372036854775808 THEN
        RETURN;                 -- below the bigint minimum: no horizon
    END IF;
    DELETE FROM sfm.m_ident WHERE pl = p AND t < h;
    GET DIAGNOSTICS n = ROW_COUNT;
    DELETE FROM sfm.m_deliv WHERE pl = p AND t < h;
    UPDATE sfm.m_late SET gone = true WHERE pl = p AND wm < h AND NOT gone;
    UPDATE sfm.m_pipe SET nforgot = nforgot + n WHERE pl = p;
END $$;

-- ----------------------------------------------------------------
-- Comparison helpers
-- ----------------------------------------------------------------

-- Raise a test failure with the context of the operation.
CREATE FUNCTION sfm.fail(ctx text, what text, detail text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'random test failure: %', what
        USING DETAIL = ctx || E'\n' || detail;
END $$;

-- Compare two ordered lists of rows (as text); on a difference, raise with
-- the first differing position and the rows around it.
CREATE FUNCTION sfm.same(ctx text, what text, eng text[], mdl text[])
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    i int := 1;
BEGIN
    eng := coalesce(eng, '{}');
    mdl := coalesce(mdl, '{}');
    IF eng = mdl THEN
        RETURN;
    END IF;
    WHILE eng[i] IS NOT DISTINCT FROM mdl[i] LOOP
        i := i + 1;
    END LOOP;
    PERFORM sfm.fail(ctx, what,
        format(E'first difference at row %s: engine %s, expected %s\n'
               'engine (%s rows) from row %s: %s\nexpected (%s rows) from row %s: %s',
               i, coalesce(eng[i], '(none)'), coalesce(mdl[i], '(none)'),
               cardinality(eng), greatest(i - 2, 1),
               array_to_string(eng[greatest(i - 2, 1):i + 4], ' '),
               cardinality(mdl), greatest(i - 2, 1),
               array_to_string(mdl[greatest(i - 2, 1):i + 4], ' ')));
END $$;

-- Text forms of the engine's views, in the order the engine returns them.
CREATE FUNCTION sfm.e_live(pl text) RETURNS text[] LANGUAGE sql AS $$
    SELECT array_agg(ROW(r.window_name, r.key, r.window_start, r.window_end,
                         r.count, r.sum, r.min, r.max)::text ORDER BY n)
      FROM streamforge.live(pl) WITH ORDINALITY AS r(window_name, key, window_start,
                                  window_end, count, sum, min, max, n)
$$;

CREATE FUNCTION sfm.e_visible(pl text) RETURNS text[] LANGUAGE sql AS $$
    SELECT array_agg(ROW(r.window_name, r.key, r.window_start, r.window_end,
                         r.count, r.sum, r.min, r.max)::text ORDER BY n)
      FROM streamforge.visible(pl) WITH ORDINALITY AS r(window_name, key, window_start,
                                     window_end, count, sum, min, max, n)
$$;

CREATE FUNCTION sfm.e_late(pl text) RETURNS text[] LANGUAGE sql AS $$
    SELECT array_agg(ROW(r.late_seq, r.partition, r.source_offset, r.event_id,
                         r.key, r.event_time, r.value, r.watermark)::text ORDER BY n)
      FROM streamforge.late_events(pl) WITH ORDINALITY AS r(late_seq, partition,
             source_offset, event_id, key, event_time, value, watermark, n)
$$;

CREATE FUNCTION sfm.e_parts(pl text) RETURNS text[] LANGUAGE sql AS $$
    SELECT array_agg(ROW(r.partition, r.consumed_offset, r.progress, r.idle)::text
                     ORDER BY n)
      FROM streamforge.partitions(pl) WITH ORDINALITY AS r(partition,
             consumed_offset, progress, idle, n)
$$;

-- Text forms of a row set held in one of the model's tables, in address
-- order (bytewise).
CREATE FUNCTION sfm.rows_text(rows sfm.brow[]) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT array_agg(ROW(r.wname, r.key, r.ws, r.we, r.cnt, r.sm, r.mn, r.mx)::text
                     ORDER BY r.wname COLLATE "C", r.key COLLATE "C", r.ws, r.we)
      FROM unnest(rows) AS r
$$;

-- ----------------------------------------------------------------
-- Checking one operation
-- ----------------------------------------------------------------

-- Check the changes of the operation just run (in sfm.m_chg) and apply
-- them to the model's visible table; then finalize.  The model's events
-- and clock must already reflect the operation.  Returns the model's live
-- buckets after the operation.
CREATE FUNCTION sfm.check_changes(p text, ctx text) RETURNS sfm.brow[]
LANGUAGE plpgsql AS $$
DECLARE
    live sfm.brow[];
    mp sfm.m_pipe;
    n bigint;
    bad record;
    nfin bigint;
    nlive bigint;
BEGIN
    SELECT * INTO mp FROM sfm.m_pipe WHERE pl = p;

    -- seq consecutive, continuing the pipeline's sequence
    SELECT * INTO bad FROM sfm.m_chg
     WHERE pl = p AND (seq IS DISTINCT FROM mp.last_seq + ord
                       OR op IS NULL OR op NOT IN ('retract', 'upsert')
                       OR wname IS NULL OR key IS NULL OR ws IS NULL OR we IS NULL
                       OR cnt IS NULL OR sm IS NULL OR mn IS NULL OR mx IS NULL)
     ORDER BY ord LIMIT 1;
    IF FOUND THEN
        PERFORM sfm.fail(ctx, 'change with a wrong seq, op or a NULL field',
            format('last seq before the operation %s; change #%s: %s',
                   mp.last_seq, bad.ord, bad));
    END IF;

    -- all retracts first, then all upserts, each in strict address order
    IF (SELECT array_agg(ord ORDER BY ord) FROM sfm.m_chg WHERE pl = p)
       IS DISTINCT FROM
       (SELECT array_agg(ord ORDER BY op = 'upsert', wname COLLATE "C",
                         key COLLATE "C", ws, we, ord)
          FROM sfm.m_chg WHERE pl = p) THEN
        PERFORM sfm.fail(ctx, 'changes not in order (retracts, then upserts, each by address)',
            (SELECT string_agg(format('%s %s %s', seq, op, ROW(wname, key, ws, we)), E'\n' ORDER BY ord)
               FROM sfm.m_chg WHERE pl = p));
    END IF;
    SELECT count(*) - count(DISTINCT (op, wname, key, ws, we)) INTO n
      FROM sfm.m_chg WHERE pl = p;
    IF n <> 0 THEN
        PERFORM sfm.fail(ctx, 'one address twice in a group of changes',
            (SELECT string_agg(format('%s %s %s', seq, op, ROW(wname, key, ws, we)), E'\n' ORDER BY ord)
               FROM sfm.m_chg WHERE pl = p));
    END IF;

    -- an unchanged row emits nothing
    SELECT r.seq AS rseq, u.seq AS useq, ROW(u.wname, u.key, u.ws, u.we, u.cnt, u.sm, u.mn, u.mx) AS row
      INTO bad
      FROM sfm.m_chg r JOIN sfm.m_chg u
        ON u.pl = r.pl AND u.wname = r.wname AND u.key = r.key AND u.ws = r.ws AND u.we = r.we
     WHERE r.pl = p AND r.op = 'retract' AND u.op = 'upsert'
       AND u.cnt = r.cnt AND u.sm = r.sm AND u.mn = r.mn AND u.mx = r.mx
     LIMIT 1;
    IF FOUND THEN
        PERFORM sfm.fail(ctx, 'an unchanged row was retracted and upserted',
                         format('seq %s and %s: %s', bad.rseq, bad.useq, bad.row));
    END IF;

    -- every retract removes exactly a visible row, with its exact values
    SELECT c.seq, ROW(c.wname, c.key, c.ws, c.we, c.cnt, c.sm, c.mn, c.mx) AS row,
           (SELECT ROW(v.wname, v.key, v.ws, v.we, v.cnt, v.sm, v.mn, v.mx)
              FROM sfm.m_vis v
             WHERE v.pl = p AND v.wname = c.wname AND v.key = c.key
               AND v.ws = c.ws AND v.we = c.we) AS vis
      INTO bad
      FROM sfm.m_chg c
     WHERE c.pl = p AND c.op = 'retract'
       AND NOT EXISTS (SELECT 1 FROM sfm.m_vis v
                        WHERE v.pl = p AND v.wname = c.wname AND v.key = c.key
                          AND v.ws = c.ws AND v.we = c.we AND v.cnt = c.cnt
                          AND v.sm = c.sm AND v.mn = c.mn AND v.mx = c.mx)
     ORDER BY c.ord LIMIT 1;
    IF FOUND THEN
        PERFORM sfm.fail(ctx, 'retract of a row that is not visible with these values',
                         format('seq %s retracts %s; visible at that address: %s',
                                bad.seq, bad.row, coalesce(bad.vis::text, '(nothing)')));
    END IF;
    DELETE FROM sfm.m_vis v USING sfm.m_chg c
     WHERE v.pl = p AND c.pl = p AND c.op = 'retract' AND v.wname = c.wname
       AND v.key = c.key AND v.ws = c.ws AND v.we = c.we;

    -- every upsert adds a row at an address that is not visible
    SELECT c.seq, ROW(c.wname, c.key, c.ws, c.we, c.cnt, c.sm, c.mn, c.mx) AS row
      INTO bad
      FROM sfm.m_chg c
     WHERE c.pl = p AND c.op = 'upsert'
       AND EXISTS (SELECT 1 FROM sfm.m_vis v
                    WHERE v.pl = p AND v.wname = c.wname AND v.key = c.key
                      AND v.ws = c.ws AND v.we = c.we)
     ORDER BY c.ord LIMIT 1;
    IF FOUND THEN
        PERFORM sfm.fail(ctx, 'upsert of a visible address without a retract',
                         format('seq %s upserts %s', bad.seq, bad.row));
    END IF;
    INSERT INTO sfm.m_vis
    SELECT p, wname, key, ws, we, cnt, sm, mn, mx FROM sfm.m_chg
     WHERE pl = p AND op = 'upsert';

    -- after applying them, the visible rows are the ready view of the live
    -- buckets (before this operation's finalization)
    live := sfm.model_live(p);
    PERFORM sfm.same(ctx, 'visible rows after applying the changes vs the ready view of the model',
        sfm.rows_text(sfm.model_vis(p)),
        sfm.rows_text(ARRAY(SELECT l FROM unnest(live) l
                             WHERE mp.wm IS NOT NULL AND l.we <= mp.wm)));

    -- statistics: corrections (retract + upsert of one address) and
    -- retractions of addresses that vanished (session merges)
    UPDATE sfm.m_pipe m SET
        nretract = nretract + (SELECT count(*) FROM sfm.m_chg c WHERE c.pl = p AND op = 'retract'),
        nupsert = nupsert + (SELECT count(*) FROM sfm.m_chg c WHERE c.pl = p AND op = 'upsert'),
        ncorrect = ncorrect + (SELECT count(*) FROM sfm.m_chg r JOIN sfm.m_chg u
                                 ON u.pl = r.pl AND u.wname = r.wname AND u.key = r.key
                                AND u.ws = r.ws AND u.we = r.we
                              WHERE r.pl = p AND r.op = 'retract' AND u.op = 'upsert'),
        nmerge = nmerge + (SELECT count(*) FROM sfm.m_chg r
                            WHERE r.pl = p AND r.op = 'retract'
                              AND NOT EXISTS (SELECT 1 FROM unnest(live) l
                                               WHERE l.wname = r.wname
                                                 AND l.key = r.key AND l.ws = r.ws
                                                 AND l.we = r.we)),
        last_seq = last_seq + (SELECT count(*) FROM sfm.m_chg c WHERE c.pl = p),
        maxlive = greatest(maxlive, cardinality(live))
     WHERE m.pl = p;

    -- finalization: buckets with watermark > end + lateness leave the live
    -- index, and their visible rows are forgotten without a retraction
    IF mp.wm IS NOT NULL THEN
        INSERT INTO sfm.m_final
        SELECT p, l.wname, l.key, l.ws, l.we FROM unnest(live) l
         WHERE mp.wm > l.we + mp.lateness;
        GET DIAGNOSTICS nfin = ROW_COUNT;
        IF nfin > 0 THEN
            live := ARRAY(SELECT l FROM unnest(live) l WHERE NOT mp.wm > l.we + mp.lateness);
            DELETE FROM sfm.m_vis WHERE pl = p AND mp.wm > we + mp.lateness;
            UPDATE sfm.m_pipe SET nfinal = nfinal + nfin WHERE pl = p;
        END IF;
    END IF;
    RETURN live;
END $$;

-- Compare every observable view of the engine with the model.
CREATE FUNCTION sfm.check_state(p text, ctx text, live sfm.brow[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    mp sfm.m_pipe;
    ewm bigint;
    vis text[];
BEGIN
    SELECT * INTO mp FROM sfm.m_pipe WHERE pl = p;
    PERFORM sfm.same(ctx, 'live()', sfm.e_live(p), sfm.rows_text(live));
    vis := sfm.rows_text(sfm.model_vis(p));
    PERFORM sfm.same(ctx, 'visible()', sfm.e_visible(p), vis);
    -- the model's visible rows are its ready view after finalization too
    PERFORM sfm.same(ctx, 'model visible rows vs model ready view after finalization',
        vis, sfm.rows_text(ARRAY(SELECT l FROM unnest(live) l
                                  WHERE mp.wm IS NOT NULL AND l.we <= mp.wm)));
    ewm := streamforge.watermark(p);
    IF ewm IS DISTINCT FROM mp.wm THEN
        PERFORM sfm.fail(ctx, 'watermark()',
                         format('engine %s, expected %s', ewm, mp.wm));
    END IF;
    PERFORM sfm.same(ctx, 'late_events()', sfm.e_late(p),
        ARRAY(SELECT ROW(late_seq, part, off, eid, key, t, v, wm)::text
                FROM sfm.m_late WHERE pl = p AND NOT gone ORDER BY late_seq));
    -- what is remembered and forgotten (stats(), docs/semantics.md "Retention")
    PERFORM sfm.same(ctx, 'stats() remembered/forgotten',
        ARRAY(SELECT ROW(s.remembered_identities, s.remembered_offsets,
                         s.remembered_late_events, s.forgotten_offsets,
                         s.forgotten_late_events, s.late_events)::text
                FROM streamforge.stats(p) s),
        ARRAY[ROW((SELECT count(*) FROM sfm.m_ident WHERE pl = p),
                  (SELECT count(*) FROM sfm.m_deliv WHERE pl = p),
                  (SELECT count(*) FROM sfm.m_late WHERE pl = p AND NOT gone),
                  (SELECT sum(consumed + 1) FROM sfm.m_part WHERE pl = p)
                  - (SELECT count(*) FROM sfm.m_deliv WHERE pl = p),
                  (SELECT count(*) FROM sfm.m_late WHERE pl = p AND gone),
                  (SELECT count(*) FROM sfm.m_late WHERE pl = p))::text]);
    PERFORM sfm.same(ctx, 'partitions()', sfm.e_parts(p),
        ARRAY(SELECT ROW(part, consumed, progress, idle)::text
                FROM sfm.m_part WHERE pl = p ORDER BY part COLLATE "C"));
END $$;

-- Drive pipeline pl (created here) and the model through the operations of
-- scenario p_scn, checking everything after every operation.  Each
-- operation is committed (the model's tables churn; committing lets their
-- dead rows be pruned), which also makes every operation its own
-- transaction on the engine's side.  Operations lo..hi run; lo = 1
-- creates the pipeline and resets the model, so that a scenario can be
-- split across connections (the engine then reloads its persisted state).
-- See sfm.summary() for the result.
CREATE PROCEDURE sfm.run_model(p_scn text, pl text, lo int DEFAULT 1,
                               hi int DEFAULT 2147483647)
LANGUAGE plpgsql AS $$
DECLARE
    opv sfm.ops[];
    o sfm.ops;
    expect text;
    got text;
    msg text;
    ctx text;
    cp_before bytea;
    cp_after bytea;
    prefix text;
    live sfm.brow[];
BEGIN
    opv := ARRAY(SELECT x FROM sfm.ops x
                  WHERE x.scn = p_scn AND x.i BETWEEN lo AND hi ORDER BY x.i);
    IF lo = 1 THEN
        PERFORM sfm.create(pl, p_scn);
        PERFORM sfm.model_reset(pl, p_scn);
        PERFORM sfm.check_state(pl, format('pipeline %s: after create_pipeline', pl), '{}');
    ELSE
        PERFORM sfm.check_state(pl, format('pipeline %s: before operation %s', pl, lo),
                                sfm.model_live(pl));
    END IF;
    COMMIT;
    FOR n IN 1..cardinality(opv) LOOP
        o := opv[n];
        ctx := format('pipeline %s, operation %s: %s', pl, o.i, sfm.op_text(o));
        expect := sfm.model_op(pl, o);
        IF expect NOT LIKE 'SF%' THEN
            PERFORM sfm.model_forget(pl);
        END IF;
        -- the generator built the operation for this outcome (with a
        -- retention, forgetting turns conflicts into replays or new events)
        IF NOT (expect = o.intent OR upper(o.intent) = expect
                OR (o.intent = 'new' AND expect IN ('accepted', 'late'))
                OR (SELECT m.retention IS NOT NULL FROM sfm.m_pipe m
                     WHERE m.pl = run_model.pl)) THEN
            PERFORM sfm.fail(ctx, 'model outcome differs from the generator''s intent',
                             format('model %s', expect));
        END IF;
        IF expect LIKE 'SF%' THEN
            prefix := CASE expect WHEN 'SF001' THEN 'offset conflict'
                                  ELSE 'identity conflict' END;
            cp_before := streamforge.checkpoint(pl);
        END IF;

        DELETE FROM sfm.m_chg c WHERE c.pl = run_model.pl;
        got := 'ok';
        BEGIN
            INSERT INTO sfm.m_chg
            SELECT run_model.pl, c.n, c.seq, c.op, c.window_name, c.key,
                   c.window_start, c.window_end, c.count, c.sum, c.min, c.max
              FROM sfm.engine_op(pl, o) WITH ORDINALITY AS c(seq, op, window_name,
                     key, window_start, window_end, count, sum, min, max, n);
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS got = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
        END;

        IF expect LIKE 'SF%' THEN
            IF got <> expect OR msg NOT LIKE prefix || '%' THEN
                PERFORM sfm.fail(ctx, 'wrong outcome',
                    format('expected SQLSTATE %s, got %s: %s', expect, got,
                           coalesce(msg, '(no error)')));
            END IF;
            cp_after := streamforge.checkpoint(pl);
            IF cp_after IS DISTINCT FROM cp_before THEN
                PERFORM sfm.fail(ctx, 'a failed delivery changed the checkpoint', '');
            END IF;
        ELSIF got <> 'ok' THEN
            PERFORM sfm.fail(ctx, 'unexpected error',
                             format('expected %s, got SQLSTATE %s: %s', expect, got, msg));
        ELSIF expect NOT IN ('accepted', 'advance', 'idle')
              AND EXISTS (SELECT 1 FROM sfm.m_chg c WHERE c.pl = run_model.pl) THEN
            PERFORM sfm.fail(ctx, 'a replay, duplicate or late event returned changes',
                             format('outcome %s', expect));
        END IF;

        UPDATE sfm.m_pipe m SET nops = nops + 1,
            naccepted = naccepted + (expect = 'accepted')::int,
            nlate = nlate + (expect = 'late')::int,
            ndup = ndup + (expect = 'dup')::int,
            nreplay = nreplay + (expect = 'replay')::int,
            nsf001 = nsf001 + (expect = 'SF001')::int,
            nsf002 = nsf002 + (expect = 'SF002')::int,
            nadvance = nadvance + (expect = 'advance')::int,
            nidle = nidle + (expect = 'idle')::int
         WHERE m.pl = run_model.pl;

        live := sfm.check_changes(pl, ctx);
        PERFORM sfm.check_state(pl, ctx, live);
        UPDATE sfm.m_pipe m SET nchecks = nchecks + 1 WHERE m.pl = run_model.pl;
        COMMIT;
    END LOOP;
END $$;

CREATE FUNCTION sfm.summary(pl text)
RETURNS TABLE (scenario text, ops bigint, checked bigint, accepted bigint,
               late bigint, dups bigint, replays bigint, sf001 bigint,
               sf002 bigint, advances bigint, idles bigint, retracts bigint,
               upserts bigint, corrections bigint, vanished bigint,
               finalized bigint, max_live bigint, reactivations bigint,
               lower_reports bigint, all_idle bigint, accepted_at_edge bigint,
               all_checked boolean)
LANGUAGE sql AS $$
    -- all_checked: every operation of the scenario ran and passed its checks
    SELECT m.scn, m.nops, m.nchecks, m.naccepted, m.nlate, m.ndup, m.nreplay,
           m.nsf001, m.nsf002, m.nadvance, m.nidle, m.nretract, m.nupsert,
           m.ncorrect, m.nmerge, m.nfinal, m.maxlive, m.nreact, m.nlower,
           m.nheld, m.nedge,
           m.nchecks = m.nops
           AND m.nops = (SELECT count(*) FROM sfm.ops o WHERE o.scn = m.scn)
      FROM sfm.m_pipe m WHERE m.pl = summary.pl
$$;

-- What the retention horizon did in a run (docs/semantics.md "Retention"): identities, offset
-- records and late events the model forgot, and how often a delivery at a
-- forgotten offset was a replay or a forgotten event_id came back.
CREATE FUNCTION sfm.retention_summary(pl text)
RETURNS TABLE (forgotten_identities bigint, forgotten_offsets bigint,
               forgotten_late_events bigint, remembered_identities bigint)
LANGUAGE sql AS $$
    SELECT m.nforgot,
           (SELECT sum(x.consumed + 1) FROM sfm.m_part x WHERE x.pl = m.pl)
           - (SELECT count(*) FROM sfm.m_deliv d WHERE d.pl = m.pl),
           (SELECT count(*) FROM sfm.m_late l WHERE l.pl = m.pl AND l.gone),
           (SELECT count(*) FROM sfm.m_ident i WHERE i.pl = m.pl)
      FROM sfm.m_pipe m WHERE m.pl = retention_summary.pl
$$;
