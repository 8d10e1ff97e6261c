-- streamforge_internal.recompute_events on pipelines with a session window
-- (docs/joins.md "Recomputing", src/engine/remap.c: in_live_windows,
-- check_sessions, remap_plan), against a model, over many random traces
-- (sql/random_aggregate_recompute.sql has fixed windows only).  Each
-- trace: a pipeline with a session window (gap 6 to 20, lateness 0 to 8),
-- a third of them with a fixed window beside it, one or two partitions,
-- two or three keys; one to three rounds of random ingests (single and
-- multi-row ingest_batch, out of order, late events, duplicates, also of
-- re-mapped events, re-deliveries of events a recompute took out) and
-- advances (sessions finalize), each round ending with a random recompute:
-- new keys and values for a random subset of the events (finalized, late,
-- taken out and unknown ones too, which it must leave alone; sometimes the
-- same mapping twice), or the part of one live session before (after) a
-- time moved to another key or taken out; a random dropped subset; a
-- random [from, to) range (either bound NULL); sometimes a mapping with
-- another event time or two different mappings of one event (SF002 when
-- the event is one the recompute re-maps).  At random, a checkpoint
-- restored into a new pipeline, which the trace may go on with.
--
-- The model (rs_ev: each event id's mapping and status, 'acc' accepted,
-- 'late', 'gone' taken out) is written from the rules, not from the
-- engine: an event is late if event_time + lateness < watermark (the
-- minimum of the partitions' progress, once every partition has one); the
-- sessions of a key are the runs of its accepted events at most a gap
-- apart (an event at t is [t, t + gap); touching sessions merge), a
-- session [start, end) is finalized once watermark > end + lateness, a
-- fixed bucket likewise; live() is every bucket not finalized, visible()
-- those with end <= watermark.  A recompute re-maps (or takes out) the
-- accepted events in the range (a mapping's own time for a mapping, the
-- event's for a take-out; a mapping wins over a take-out) whose session
-- and fixed bucket are live; it is refused (55000) when some accepted
-- event is in a live session after it and not before, or before and not
-- after; SF002 when a mapping it considers has another time than its
-- event, or an event has two different ones.  Checked: the outcome,
-- (mapped, remapped, removed, changes: the visible rows that differ),
-- live(), visible(), late_events() and the watermark after each
-- recompute (unchanged when refused), before it and after each restore.
-- Output: counts only; a disagreement adds to mismatches, ends its trace
-- and prints a WARNING with the trace's calls (a script that replays it)
-- and the model's expectation.
SET client_min_messages = warning;
-- the model's queries are small: no JIT compilation
SET jit = off;
SELECT setseed(0.2718);

CREATE TABLE rs_par (gap bigint, lat bigint, fsize bigint, wm bigint, rf bigint, rt bigint);
INSERT INTO rs_par VALUES (10, 5, NULL, NULL, NULL, NULL);
ANALYZE rs_par;
-- the model: every event id the pipeline has seen, its mapping (key, v)
-- and status st; nkey, nv, nst: the same after the recompute under test;
-- remapped: a recompute changed its mapping
CREATE TABLE rs_ev (id text PRIMARY KEY, key text, t bigint, v bigint, st text,
                    nkey text, nv bigint, nst text, remapped boolean DEFAULT false);
-- the recompute's arguments
CREATE TABLE rs_map (n serial, id text, key text, t bigint, v bigint);
CREATE TABLE rs_drop (id text);
-- the mappings the recompute considers (et: the event's own time)
CREATE TABLE rs_cons (n integer, id text, key text, t bigint, v bigint, et bigint);
-- one row per recompute
CREATE TABLE rs_out (trace integer, round integer, watermark boolean, fixed boolean,
                     outcome text, split boolean, merge boolean, mapped bigint, remapped bigint,
                     removed bigint, changes bigint, restored boolean, late integer,
                     duplicates integer, duplicates_remapped integer, delivered_again integer,
                     mismatches integer);

-- each accepted event (before, nw false, or after the recompute) with the
-- session it is in (cs, ce) and whether that session is live
CREATE FUNCTION rs_cl(nw boolean)
RETURNS TABLE (id text, k text, t bigint, v bigint, cs bigint, ce bigint, live boolean)
LANGUAGE sql STABLE AS $$
    WITH e AS (
        SELECT x.id, CASE WHEN nw THEN x.nkey ELSE x.key END AS k, x.t,
               CASE WHEN nw THEN x.nv ELSE x.v END AS v
          FROM rs_ev AS x
         WHERE CASE WHEN nw THEN x.nst ELSE x.st END = 'acc'),
    b AS (
        SELECT e.*, CASE WHEN e.t - lag(e.t) OVER w <= p.gap THEN 0 ELSE 1 END AS brk
          FROM e, rs_par AS p
        WINDOW w AS (PARTITION BY e.k ORDER BY e.t, e.id)),
    c AS (
        SELECT b.*, sum(b.brk) OVER (PARTITION BY b.k ORDER BY b.t, b.id ROWS UNBOUNDED PRECEDING) AS cid
          FROM b)
    SELECT s.id, s.k, s.t, s.v, s.cs, s.ce, p.wm IS NULL OR s.ce + p.lat >= p.wm
      FROM (SELECT c.id, c.k, c.t, c.v, min(c.t) OVER (PARTITION BY c.k, c.cid) AS cs,
                   max(c.t) OVER (PARTITION BY c.k, c.cid) + p.gap AS ce
              FROM c, rs_par AS p) AS s, rs_par AS p
$$;

-- the rows live() (vis false) or visible() (vis true) should show
CREATE FUNCTION rs_rows(nw boolean, vis boolean)
RETURNS TABLE (window_name text, key text, window_start bigint, window_end bigint,
               count bigint, sum numeric, min bigint, max bigint)
LANGUAGE sql STABLE AS $$
    SELECT r.* FROM (
        SELECT 's'::text AS window_name, c.k AS key, c.cs AS window_start, c.ce AS window_end,
               count(*) AS count, sum(c.v)::numeric AS sum, min(c.v) AS min, max(c.v) AS max
          FROM rs_cl(nw) AS c
         WHERE c.live
         GROUP BY c.k, c.cs, c.ce
        UNION ALL
        SELECT 'f', CASE WHEN nw THEN x.nkey ELSE x.key END, x.t / p.fsize * p.fsize,
               x.t / p.fsize * p.fsize + p.fsize, count(*), sum(CASE WHEN nw THEN x.nv ELSE x.v END),
               min(CASE WHEN nw THEN x.nv ELSE x.v END), max(CASE WHEN nw THEN x.nv ELSE x.v END)
          FROM rs_ev AS x, rs_par AS p
         WHERE p.fsize IS NOT NULL AND CASE WHEN nw THEN x.nst ELSE x.st END = 'acc'
           AND (p.wm IS NULL OR x.t / p.fsize * p.fsize + p.fsize + p.lat >= p.wm)
         GROUP BY 1, 2, 3, 4) AS r, rs_par AS p
     WHERE NOT vis OR (p.wm IS NOT NULL AND r.window_end <= p.wm)
$$;

-- the accepted events whose every bucket is live (the range aside)
CREATE FUNCTION rs_live_events()
RETURNS TABLE (id text, t bigint)
LANGUAGE sql STABLE AS $$
    SELECT c.id, c.t FROM rs_cl(false) AS c, rs_par AS p
     WHERE c.live
       AND (p.wm IS NULL OR p.fsize IS NULL OR c.t / p.fsize * p.fsize + p.fsize + p.lat >= p.wm)
$$;

-- the differences between what pipeline pn shows (live, visible, its late
-- events, its watermark) and the model (nw: the state after the
-- recompute), NULL if none
CREATE FUNCTION rs_diff(pn text, nw boolean) RETURNS text
LANGUAGE sql AS $$
    SELECT nullif(concat_ws(' ',
        (SELECT 'live missing: ' || string_agg(x::text, ' ' ORDER BY x::text)
           FROM (SELECT * FROM rs_rows(nw, false) EXCEPT ALL SELECT * FROM streamforge.live(pn)) AS x),
        (SELECT 'live extra: ' || string_agg(x::text, ' ' ORDER BY x::text)
           FROM (SELECT * FROM streamforge.live(pn) EXCEPT ALL SELECT * FROM rs_rows(nw, false)) AS x),
        (SELECT 'visible missing: ' || string_agg(x::text, ' ' ORDER BY x::text)
           FROM (SELECT * FROM rs_rows(nw, true) EXCEPT ALL SELECT * FROM streamforge.visible(pn)) AS x),
        (SELECT 'visible extra: ' || string_agg(x::text, ' ' ORDER BY x::text)
           FROM (SELECT * FROM streamforge.visible(pn) EXCEPT ALL SELECT * FROM rs_rows(nw, true)) AS x),
        (SELECT 'late missing: ' || string_agg(x::text, ' ' ORDER BY x::text)
           FROM (SELECT e.id, e.key, e.t, e.v FROM rs_ev AS e WHERE e.st = 'late'
                 EXCEPT ALL
                 SELECT l.event_id, l.key, l.event_time, l.value FROM streamforge.late_events(pn) AS l) AS x),
        (SELECT 'late extra: ' || string_agg(x::text, ' ' ORDER BY x::text)
           FROM (SELECT l.event_id, l.key, l.event_time, l.value FROM streamforge.late_events(pn) AS l
                 EXCEPT ALL
                 SELECT e.id, e.key, e.t, e.v FROM rs_ev AS e WHERE e.st = 'late') AS x),
        (SELECT 'watermark ' || coalesce(w::text, 'none') || ', the model ' || coalesce(p.wm::text, 'none')
           FROM streamforge.watermark(pn) AS w, rs_par AS p WHERE w IS DISTINCT FROM p.wm)), '')
$$;

-- a random element of a
CREATE FUNCTION rs_pick(a anyarray) RETURNS anyelement LANGUAGE sql VOLATILE AS $$
    SELECT a[1 + floor(random() * cardinality(a))::integer]
$$;

-- one trace (its rounds go to rs_out)
CREATE FUNCTION rs_trace(tr integer) RETURNS void LANGUAGE plpgsql AS $f$
DECLARE
    c_gap bigint := rs_pick(ARRAY[10, 10, 15, 20, 6]);
    c_lat bigint := rs_pick(ARRAY[5, 5, 5, 0, 3, 8]);
    c_fsize bigint := CASE WHEN random() < 0.35 THEN rs_pick(ARRAY[10, 7, 15]) END;
    np integer := 1 + (random() < 0.4)::integer;
    keys text[] := (ARRAY['a', 'b', 'c'])[1:2 + (random() < 0.4)::integer];
    nrounds integer := 1 + floor(random() * 3)::integer;
    nops integer;
    drift integer := rs_pick(ARRAY[3, 5, 7]);
    rk integer;
    cut bigint;
    upper boolean;
    slice_drop boolean;
    parts text[] := (ARRAY['p0', 'p1'])[1:np];
    wins streamforge.window_def[];
    pn text := 'rs_a';
    offs bigint[] := ARRAY[0, 0];
    prog bigint[] := ARRAY[NULL, NULL]::bigint[];
    c_wm bigint;
    cur bigint := floor(random() * 5)::bigint;
    nid integer := 0;
    ops text[] := '{}';
    rbad integer;
    n_late integer;
    n_dup integer;
    n_dup_remapped integer;
    n_again integer;
    msg text;
    pi integer;
    e rs_ev;
    d_id text;
    d_k text;
    d_t bigint;
    d_v bigint;
    dl streamforge.delivery[];
    marr streamforge.event[];
    darr text[];
    r_from bigint;
    r_to bigint;
    q double precision;
    qd double precision;
    want_outcome text;
    outcome text;
    split boolean;
    merge boolean;
    want record;
    g_mapped bigint;
    g_remapped bigint;
    g_removed bigint;
    g_changes bigint;
    want_changes bigint;
    restored boolean;
    cp bytea;
    pn2 text;
BEGIN
    -- an unexpected error ends the trace (all of it rolled back) as a
    -- mismatch
    BEGIN
        wins := ARRAY[streamforge.session('s', c_gap)];
        IF c_fsize IS NOT NULL THEN
            wins := wins || streamforge.fixed('f', c_fsize);
        END IF;
        UPDATE rs_par SET gap = c_gap, lat = c_lat, fsize = c_fsize, wm = NULL;
        DELETE FROM rs_ev;
        ops := ops || format('SELECT streamforge.create_pipeline(%L, %L, %L::streamforge.window_def[], %s);',
                             pn, parts, wins, c_lat);
        PERFORM streamforge.create_pipeline(pn, parts, wins, c_lat);

        FOR round IN 1 .. nrounds LOOP
            rbad := 0;
            n_late := 0;
            n_dup := 0;
            n_dup_remapped := 0;
            n_again := 0;
            -- ingests and advances; half the time, a last advance of the
            -- partition behind, to a few units before the latest event time
            nops := 4 + floor(random() * 9)::integer;
            FOR op IN 1 .. nops + 1 LOOP
                pi := 1 + floor(random() * np)::integer;
                IF op > nops THEN
                    EXIT WHEN random() < 0.5;
                    pi := CASE WHEN np = 1 OR prog[1] IS NULL THEN 1 WHEN prog[2] IS NULL THEN 2
                               WHEN prog[1] <= prog[2] THEN 1 ELSE 2 END;
                END IF;
                IF op > nops OR random() < 0.3 THEN
                    d_t := cur + 3 - floor(random() * CASE WHEN op > nops THEN 10 ELSE 14 END)::bigint;
                    IF prog[pi] IS NULL OR d_t > prog[pi] THEN
                        prog[pi] := d_t;
                    END IF;
                    IF np = 1 OR (prog[1] IS NOT NULL AND prog[2] IS NOT NULL) THEN
                        c_wm := greatest(c_wm, CASE WHEN np = 1 THEN prog[1] ELSE least(prog[1], prog[2]) END);
                    END IF;
                    UPDATE rs_par SET wm = c_wm;
                    ops := ops || format('SELECT count(*) FROM streamforge.advance(%L, %L, %s);', pn, parts[pi], d_t);
                    PERFORM count(*) FROM streamforge.advance(pn, parts[pi], d_t);
                    CONTINUE;
                END IF;
                -- one delivery, or a batch of two to five
                dl := '{}';
                FOR j IN 1 .. CASE WHEN random() < 0.55 THEN 1 ELSE 2 + floor(random() * 4)::integer END LOOP
                    e := NULL;
                    IF nid > 0 AND random() < 0.15 THEN
                        SELECT * INTO e FROM rs_ev AS x ORDER BY x.id COLLATE "C"
                         OFFSET floor(random() * (SELECT count(*) FROM rs_ev)) LIMIT 1;
                    END IF;
                    IF e.id IS NOT NULL AND e.st <> 'gone' THEN
                        -- a duplicate: the mapping the pipeline holds
                        n_dup := n_dup + 1;
                        n_dup_remapped := n_dup_remapped + e.remapped::integer;
                        d_id := e.id;
                        d_k := e.key;
                        d_t := e.t;
                        d_v := e.v;
                    ELSE
                        IF e.id IS NOT NULL THEN
                            -- an event a recompute took out, delivered again:
                            -- a first delivery, with any mapping
                            n_again := n_again + 1;
                            d_id := e.id;
                            d_t := e.t;
                        ELSE
                            nid := nid + 1;
                            d_id := 'e' || nid;
                            d_t := greatest(0, cur + CASE WHEN random() < 0.07 THEN 6 + floor(random() * 16)
                                                        ELSE floor(random() * drift) END
                                             - CASE WHEN random() < 0.35 THEN floor(random() * 20) ELSE 0 END);
                            cur := greatest(cur, d_t);
                        END IF;
                        d_k := rs_pick(keys);
                        d_v := floor(random() * 20)::bigint - 5;
                        n_late := n_late + (c_wm IS NOT NULL AND d_t + c_lat < c_wm)::integer;
                        INSERT INTO rs_ev AS x VALUES (d_id, d_k, d_t, d_v,
                                                       CASE WHEN c_wm IS NOT NULL AND d_t + c_lat < c_wm THEN 'late' ELSE 'acc' END)
                        ON CONFLICT ON CONSTRAINT rs_ev_pkey DO UPDATE SET key = EXCLUDED.key, v = EXCLUDED.v,
                                                                            st = EXCLUDED.st, remapped = false;
                    END IF;
                    dl := dl || ROW(parts[pi], offs[pi], d_id, d_k, d_t, d_v)::streamforge.delivery;
                    offs[pi] := offs[pi] + 1;
                END LOOP;
                IF cardinality(dl) = 1 THEN
                    ops := ops || format('SELECT count(*) FROM streamforge.ingest(%L, %L, %s, %L, %L, %s, %s);',
                                         pn, dl[1].partition, dl[1].source_offset, dl[1].event_id,
                                         dl[1].key, dl[1].event_time, dl[1].value);
                    PERFORM count(*) FROM streamforge.ingest(pn, dl[1].partition, dl[1].source_offset,
                                                             dl[1].event_id, dl[1].key, dl[1].event_time,
                                                             dl[1].value);
                ELSE
                    ops := ops || format('SELECT count(*) FROM streamforge.ingest_batch(%L, %L::streamforge.delivery[]);',
                                         pn, dl);
                    PERFORM count(*) FROM streamforge.ingest_batch(pn, dl);
                END IF;
            END LOOP;

            -- the engine agrees with the model before the recompute
            msg := rs_diff(pn, false);
            IF msg IS NOT NULL THEN
                rbad := rbad + 1;
                RAISE WARNING E'trace % round %: before the recompute: %\nthe calls:\n%', tr, round, msg,
                    array_to_string(ops, E'\n');
            END IF;

            -- the recompute's arguments: mappings of a random share q of the
            -- ids seen (a new key or value, or the same), and of unknown ids;
            -- takes-out of a share qd; the range
            q := rs_pick(ARRAY[0.15, 0.4, 0.7, 1.0]);
            qd := rs_pick(ARRAY[0, 0.1, 0.3]);
            DELETE FROM rs_map;
            DELETE FROM rs_drop;
            INSERT INTO rs_map (id, key, t, v)
            SELECT x.id, CASE WHEN random() < 0.3 THEN x.key ELSE rs_pick(keys) END, x.t,
                   CASE WHEN random() < 0.5 THEN x.v ELSE floor(random() * 20)::bigint - 5 END
              FROM (SELECT * FROM rs_ev ORDER BY id COLLATE "C") AS x WHERE random() < q;
            IF random() < 0.4 THEN
                -- or: the events of one live session (long ones more often)
                -- before (or from) a time moved to another key, or taken out
                SELECT c.k, c.cs, c.cs + floor(random() * (c.ce - c.cs))::bigint INTO d_k, d_t, cut
                  FROM (SELECT * FROM rs_cl(false) AS l WHERE l.live ORDER BY l.id COLLATE "C") AS c
                 ORDER BY (c.ce - c.cs) * random() DESC LIMIT 1;
                upper := random() < 0.5;
                slice_drop := random() < 0.25;
                DELETE FROM rs_map;
                INSERT INTO rs_map (id, key, t, v)
                SELECT c.id, rs_pick(array_remove(keys, d_k)), c.t, c.v
                  FROM (SELECT * FROM rs_cl(false) AS l ORDER BY l.id COLLATE "C") AS c
                 WHERE NOT slice_drop AND c.k = d_k AND c.cs = d_t AND (c.t >= cut) = upper;
                INSERT INTO rs_drop
                SELECT c.id FROM rs_cl(false) AS c
                 WHERE slice_drop AND c.k = d_k AND c.cs = d_t AND (c.t >= cut) = upper
                 ORDER BY c.id COLLATE "C";
            END IF;
            INSERT INTO rs_map (id, key, t, v)
            SELECT 'x' || g, rs_pick(keys), floor(random() * (cur + 10))::bigint, 1
              FROM generate_series(1, floor(random() * 3)::integer) AS g;
            IF random() < 0.15 THEN
                -- the same mapping twice
                INSERT INTO rs_map (id, key, t, v)
                SELECT m.id, m.key, m.t, m.v FROM rs_map AS m ORDER BY m.n LIMIT 2;
            END IF;
            IF random() < 0.06 THEN
                -- another event time
                INSERT INTO rs_map (id, key, t, v)
                SELECT x.id, x.key, x.t + 1 + floor(random() * 3)::bigint, x.v
                  FROM rs_ev AS x ORDER BY x.id COLLATE "C"
                 OFFSET floor(random() * (SELECT count(*) FROM rs_ev)) LIMIT 1;
            END IF;
            IF random() < 0.06 THEN
                -- a second, different mapping
                INSERT INTO rs_map (id, key, t, v)
                SELECT m.id, m.key, m.t, m.v + 1 FROM rs_map AS m ORDER BY m.n
                 OFFSET floor(random() * (SELECT count(*) FROM rs_map)) LIMIT 1;
            END IF;
            INSERT INTO rs_drop
            SELECT x.id FROM (SELECT * FROM rs_ev ORDER BY id COLLATE "C") AS x WHERE random() < qd;
            IF random() < 0.2 THEN
                INSERT INTO rs_drop VALUES ('x9');
            END IF;
            -- the range: none, from only, to only, or both (sometimes empty),
            -- around the live sessions
            rk := floor(random() * 4)::integer;
            r_from := CASE WHEN rk IN (1, 3) THEN coalesce(c_wm, cur) - 20 + floor(random() * 25)::bigint END;
            r_to := CASE WHEN rk = 2 THEN coalesce(c_wm, cur) - 15 + floor(random() * 30)::bigint
                         WHEN rk = 3 THEN r_from - 3 + floor(random() * 33)::bigint END;
            UPDATE rs_par SET rf = r_from, rt = r_to;
            SELECT array_agg(ROW('ignored', m.id, m.key, m.t, m.v)::streamforge.event ORDER BY m.n)
              INTO marr FROM rs_map AS m;
            SELECT array_agg(d.id) INTO darr FROM rs_drop AS d;

            -- the model's expectation
            UPDATE rs_ev SET nkey = key, nv = v, nst = st;
            -- the mappings the recompute considers: mapping time in the range,
            -- of an accepted event whose buckets are all live
            DELETE FROM rs_cons;
            INSERT INTO rs_cons
            SELECT m.*, l.t AS et FROM rs_map AS m JOIN rs_live_events() AS l ON l.id = m.id, rs_par AS p
             WHERE (p.rf IS NULL OR m.t >= p.rf) AND (p.rt IS NULL OR m.t < p.rt);
            IF EXISTS (SELECT FROM rs_cons AS c WHERE c.t <> c.et)
               OR EXISTS (SELECT FROM rs_cons AS c GROUP BY c.id HAVING count(DISTINCT (c.key, c.v)) > 1) THEN
                want_outcome := 'conflict';
            ELSE
                UPDATE rs_ev AS x SET nkey = c.key, nv = c.v FROM rs_cons AS c WHERE c.id = x.id;
                UPDATE rs_ev AS x SET nst = 'gone'
                  FROM rs_live_events() AS l, rs_par AS p
                 WHERE l.id = x.id AND (p.rf IS NULL OR l.t >= p.rf) AND (p.rt IS NULL OR l.t < p.rt)
                   AND x.id IN (SELECT d.id FROM rs_drop AS d)
                   AND x.id NOT IN (SELECT c.id FROM rs_cons AS c);
                SELECT (SELECT count(DISTINCT c.id) FROM rs_cons AS c) AS mapped,
                       (SELECT count(*) FROM rs_ev AS x
                         WHERE x.id IN (SELECT c.id FROM rs_cons AS c)
                           AND (x.key, x.v) IS DISTINCT FROM (x.nkey, x.nv)) AS remapped,
                       (SELECT count(*) FROM rs_ev AS x WHERE x.st = 'acc' AND x.nst = 'gone') AS removed
                  INTO want;
                -- an event in a live session after and not before, or before and not after
                SELECT coalesce(bool_or(b.live AND NOT a.live), false),
                       coalesce(bool_or(a.live AND NOT b.live), false)
                  INTO split, merge
                  FROM rs_cl(false) AS b JOIN rs_cl(true) AS a ON a.id = b.id;
                split := split AND c_wm IS NOT NULL;
                merge := merge AND c_wm IS NOT NULL;
                want_outcome := CASE WHEN split OR merge THEN 'refused' ELSE 'ok' END;
                -- the changes: the visible rows that differ before and after
                want_changes := (SELECT count(*) FROM (SELECT * FROM rs_rows(false, true)
                                                       EXCEPT ALL SELECT * FROM rs_rows(true, true)) AS x)
                              + (SELECT count(*) FROM (SELECT * FROM rs_rows(true, true)
                                                       EXCEPT ALL SELECT * FROM rs_rows(false, true)) AS x);
            END IF;

            -- the engine's
            ops := ops || format('SELECT * FROM streamforge_internal.recompute_events(%L, %L::streamforge.event[], %L::text[], %s, %s);',
                                 pn, marr, darr, coalesce(r_from::text, 'NULL'), coalesce(r_to::text, 'NULL'));
            g_mapped := NULL;
            g_remapped := NULL;
            g_removed := NULL;
            g_changes := NULL;
            BEGIN
                SELECT r.mapped, r.remapped, r.removed, r.changes INTO g_mapped, g_remapped, g_removed, g_changes
                  FROM streamforge_internal.recompute_events(pn, coalesce(marr, '{}'), darr, r_from, r_to) AS r;
                outcome := 'ok';
            EXCEPTION
                WHEN SQLSTATE '55000' THEN
                    outcome := 'refused';
                WHEN SQLSTATE 'SF002' THEN
                    outcome := 'conflict';
            END;
            msg := NULL;
            IF outcome <> want_outcome THEN
                msg := format('outcome %s, the model %s', outcome, want_outcome);
            ELSIF outcome = 'ok' THEN
                IF (g_mapped, g_remapped, g_removed, g_changes)
                   IS DISTINCT FROM (want.mapped, want.remapped, want.removed, want_changes) THEN
                    msg := format('returned (%s,%s,%s,%s), the model (%s,%s,%s,%s)', g_mapped, g_remapped,
                                  g_removed, g_changes, want.mapped, want.remapped, want.removed, want_changes);
                END IF;
                msg := concat_ws('; ', msg, rs_diff(pn, true));
            ELSE
                msg := rs_diff(pn, false);
            END IF;
            IF nullif(msg, '') IS NOT NULL THEN
                rbad := rbad + 1;
                RAISE WARNING E'trace % round %: %\nthe model before: %\nthe model after: %\nthe calls:\n%',
                    tr, round, msg,
                    (SELECT string_agg(format('%s %s t=%s v=%s %s', x.id, x.key, x.t, x.v, x.st), ', ' ORDER BY x.t, x.id)
                       FROM rs_ev AS x),
                    (SELECT string_agg(format('%s %s t=%s v=%s %s', x.id, x.nkey, x.t, x.nv, x.nst), ', ' ORDER BY x.t, x.id)
                       FROM rs_ev AS x),
                    array_to_string(ops, E'\n');
            END IF;
            IF outcome = 'ok' THEN
                UPDATE rs_ev SET remapped = remapped OR (key, v) IS DISTINCT FROM (nkey, nv),
                                 key = nkey, v = nv, st = nst;
            END IF;

            -- a checkpoint restored into a new pipeline, which the trace may
            -- go on with
            restored := random() < 0.3;
            IF restored THEN
                pn2 := CASE WHEN pn = 'rs_a' THEN 'rs_b' ELSE 'rs_a' END;
                ops := ops || format('SELECT streamforge.create_pipeline(%L, %L, %L::streamforge.window_def[], %s);',
                                     pn2, parts, wins, c_lat)
                           || format('SELECT streamforge.restore(%L, streamforge.checkpoint(%L));', pn2, pn);
                cp := streamforge.checkpoint(pn);
                PERFORM streamforge.create_pipeline(pn2, parts, wins, c_lat);
                PERFORM streamforge.restore(pn2, cp);
                msg := rs_diff(pn2, false);
                IF msg IS NOT NULL THEN
                    rbad := rbad + 1;
                    RAISE WARNING E'trace % round %: after restore: %\nthe calls:\n%', tr, round, msg,
                        array_to_string(ops, E'\n');
                END IF;
                IF random() < 0.5 THEN
                    ops := ops || format('SELECT streamforge.drop_pipeline(%L);', pn);
                    PERFORM streamforge.drop_pipeline(pn);
                    pn := pn2;
                ELSE
                    ops := ops || format('SELECT streamforge.drop_pipeline(%L);', pn2);
                    PERFORM streamforge.drop_pipeline(pn2);
                END IF;
            END IF;

            INSERT INTO rs_out VALUES (tr, round, c_wm IS NOT NULL, c_fsize IS NOT NULL, outcome,
                                      split AND want_outcome = 'refused', merge AND want_outcome = 'refused',
                                      g_mapped, g_remapped, g_removed, g_changes, restored,
                                      n_late, n_dup, n_dup_remapped, n_again, rbad);
            -- the model no longer follows the pipeline: the trace ends
            EXIT WHEN rbad > 0;
        END LOOP;
        PERFORM streamforge.drop_pipeline(pn);
    EXCEPTION WHEN OTHERS THEN
        RAISE WARNING E'trace %: unexpected error %: %\nthe calls:\n%', tr, SQLSTATE, SQLERRM,
            array_to_string(ops, E'\n');
        INSERT INTO rs_out (trace, round, outcome, mismatches) VALUES (tr, 0, 'error', 1);
    END;
END
$f$;

-- the traces, each its own transaction (the model's tables stay small)
CREATE PROCEDURE rs_run(ntraces integer) LANGUAGE plpgsql AS $$
BEGIN
    FOR tr IN 1 .. ntraces LOOP
        PERFORM rs_trace(tr);
        COMMIT;
    END LOOP;
END
$$;
CALL rs_run(300);

-- (the model's verdicts are exact; the mix of traces is printed as
-- bounds: which choices a trace makes can follow the order of rows that
-- the planner may return differently from run to run under load)
SELECT count(DISTINCT trace) AS traces, count(*) FILTER (WHERE round > 0) >= 400 AS recomputes_400,
       count(*) FILTER (WHERE outcome = 'ok') >= 300 AS accepted_300,
       count(*) FILTER (WHERE outcome = 'refused') >= 20 AS refused_20,
       count(*) FILTER (WHERE outcome = 'conflict') >= 5 AS conflicts_5,
       count(*) FILTER (WHERE outcome = 'error') AS errors,
       sum(mismatches) AS mismatches
  FROM rs_out;
-- the traces were not trivial
SELECT count(*) FILTER (WHERE split) >= 10 AS refused_split,
       count(*) FILTER (WHERE merge) >= 5 AS refused_merge,
       count(*) FILTER (WHERE outcome = 'refused' AND fixed) >= 1 AS refused_with_fixed,
       count(*) FILTER (WHERE outcome = 'ok' AND watermark) >= 100 AS accepted_with_watermark,
       count(*) FILTER (WHERE outcome = 'ok' AND fixed) >= 50 AS accepted_with_fixed,
       count(*) FILTER (WHERE remapped > 0) >= 100 AS remapping,
       count(*) FILTER (WHERE mapped > remapped) >= 50 AS unchanged_mappings,
       count(*) FILTER (WHERE removed > 0) >= 50 AS removing,
       count(*) FILTER (WHERE changes > 0) >= 20 AS changing,
       count(*) FILTER (WHERE restored) >= 50 AS restores,
       count(*) FILTER (WHERE round > 1) >= 100 AS later_rounds,
       sum(late) >= 100 AS late_events, sum(duplicates) >= 300 AS duplicates,
       sum(duplicates_remapped) >= 10 AS duplicates_remapped, sum(delivered_again) >= 5 AS delivered_again
  FROM rs_out;
-- every pipeline was dropped
SELECT count(*) AS pipelines_left FROM streamforge.pipelines WHERE name LIKE 'rs\_%';

DROP PROCEDURE rs_run(integer);
DROP FUNCTION rs_trace(integer), rs_pick(anyarray), rs_diff(text, boolean), rs_live_events(),
    rs_rows(boolean, boolean), rs_cl(boolean);
DROP TABLE rs_par, rs_ev, rs_map, rs_drop, rs_cons, rs_out;
