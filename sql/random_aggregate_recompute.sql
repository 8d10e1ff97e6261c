-- streamforge.recompute on a randomized trace (issue 47, item 3;
-- docs/joins.md "Recomputing"), against a model.  Two aggregates over the
-- same source table, tumbling 10 s windows, lateness 5 s:
--   rr_a  an inner join and a WHERE on the dimension, FILTER and avg (a
--         measures pipeline);
--   rr_b  a left join (NULL group) and a WHERE on the dimension (one
--         measure: an events pipeline).
-- Steps: dimension changes, multi-row inserts crossing window boundaries
-- (some late, some the join or WHERE drops), re-deliveries (SF002 when the
-- mapping the pipeline holds differs), source rows deleted, watermark
-- advances (windows finalize), checkpoint/restore of both aggregates, and
-- recomputes of random ranges, some rolled back; sometimes a whole step is
-- rolled back (model and pipeline together).  Part of the trace runs in
-- one transaction, part commits after every step; a checkpoint/restore and
-- a cold load (\c) in between.
--
-- The model (rr_ref) holds, for each event a pipeline holds, the mapping
-- it holds: at insert the join and WHERE as they are then (dropped rows
-- are not in it, late events are in rr_late only); at recompute(from, to),
-- each of its rows with event time in range whose source row exists takes
-- the dimension row as it is now, or leaves (removed) if the join or WHERE
-- drops it now; a re-delivery of an event held (in rr_ref or rr_late) with
-- another mapping is SF002, with the same one a duplicate; an event held
-- by neither is a first delivery.  Checked after every step (a step after
-- which the comparisons print other rows than after the step before goes
-- to rr_mismatch, with its kind): the live windows (window_end + lateness
-- >= watermark) against the model grouped alike; the emitted rows of the
-- view <name> not final against the model's ready live windows; its final
-- rows against the model as it was when they finalized (rr_final, a
-- snapshot at each advance: a final row never changes, whatever a
-- recompute or restore does later); the late events; the watermark.  Every
-- recompute's (mapped, remapped, removed, changes) against the model's
-- (changes: in update mode, a retraction of each ready live row that a
-- recompute changes or removes, an upsert of each it changes or adds).
-- Every comparison prints no row when it agrees.
SET client_min_messages = warning;
SET TimeZone = 'UTC';
SELECT setseed(0.347);
CREATE TABLE rr_dim (page integer PRIMARY KEY, section text NOT NULL, weight integer);
INSERT INTO rr_dim SELECT g, 's' || (g % 4), CASE WHEN g % 7 = 0 THEN NULL ELSE g % 4 END
  FROM generate_series(1, 20) AS g;
CREATE TABLE rr_ev (id integer PRIMARY KEY, page integer, amount integer NOT NULL,
                    at timestamptz NOT NULL);
SELECT streamforge.create_aggregate('rr_a', $$
    SELECT d.section, count(*) AS n, sum(e.amount) AS total, avg(e.amount) AS mean,
           max(d.weight) AS top_w, count(*) FILTER (WHERE d.weight > 1) AS heavy,
           sum(e.amount) FILTER (WHERE d.weight > 1) AS heavy_total
      FROM rr_ev e JOIN rr_dim d ON d.page = e.page
     WHERE d.section <> 's4'
     GROUP BY d.section, streamforge.tumble(e.at, interval '10 seconds')
$$, lateness => interval '5 seconds');
SELECT streamforge.create_aggregate('rr_b', $$
    SELECT d.section, count(*) AS n, sum(e.amount) AS total
      FROM rr_ev e LEFT JOIN rr_dim d ON d.page = e.page
     WHERE d.weight IS DISTINCT FROM 0
     GROUP BY d.section, streamforge.tumble(e.at, interval '10 seconds')
$$, lateness => interval '5 seconds');
-- rr_a is a measures pipeline (11 trigger arguments), rr_b is not
SELECT a.pipeline, a.filter IS NOT NULL AS has_filter,
       cardinality(streamforge_internal.trigger_args(t.tgargs)) AS nargs
  FROM streamforge.attachments AS a JOIN pg_trigger AS t ON t.tgname = a.trigger_name
 WHERE a.pipeline IN ('rr_a', 'rr_b') ORDER BY 1;

-- the model
CREATE TABLE rr_state (k text PRIMARY KEY, v bigint);
-- next_id, max_us (the latest event time), wm (the watermark, NULL before
-- the first advance); the rest count what the trace did
INSERT INTO rr_state VALUES ('next_id', 1), ('max_us', 0), ('wm', NULL), ('steps', 0),
    ('redelivered', 0), ('conflicts', 0), ('readded', 0), ('deleted', 0), ('restores', 0),
    ('advances', 0), ('advances_ready', 0), ('advances_live2', 0),
    ('recomputes', 0), ('recomputes_remapping', 0), ('recomputes_removing', 0),
    ('recomputes_changing', 0), ('recomputes_rolled_back', 0),
    ('range0', 0), ('range1', 0), ('range2', 0), ('range3', 0);
-- the mapping each pipeline ('a', 'b') holds for each accepted event, and
-- for each late event (weight: only rr_a maps it)
CREATE TABLE rr_ref (p text, id integer, section text, weight integer, amount integer,
                     at timestamptz, PRIMARY KEY (p, id));
CREATE TABLE rr_late (LIKE rr_ref INCLUDING ALL);
-- events a recompute took out (until delivered again)
CREATE TABLE rr_removed (p text, id integer, PRIMARY KEY (p, id));
-- the model's rows of each window as it finalized
CREATE TABLE rr_final (p text, section text, window_start timestamptz, n bigint, total bigint,
                       mean numeric, top_w integer, heavy bigint, heavy_total bigint);
-- the ready live rows before a recompute (for its expected changes)
CREATE TABLE rr_snap (p text, section text, window_start timestamptz, n bigint, total bigint,
                      mean numeric, top_w integer, heavy bigint, heavy_total bigint,
                      lo integer, hi integer);
-- what disagreed, and after which step (printed at the checkpoints)
CREATE TABLE rr_mismatch (step bigint, what text);
CREATE TABLE rr_last_diff (d text);
INSERT INTO rr_last_diff VALUES (NULL);

-- times: microseconds after 2026-12-01 12:00:00+00
CREATE FUNCTION rr_ts(us bigint) RETURNS timestamptz LANGUAGE sql IMMUTABLE
AS $$ SELECT '2026-12-01 12:00:00+00'::timestamptz + us * interval '1 microsecond' $$;
CREATE FUNCTION rr_us(ts timestamptz) RETURNS bigint LANGUAGE sql IMMUTABLE
AS $$ SELECT (extract(epoch FROM ts - '2026-12-01 12:00:00+00'::timestamptz) * 1000000)::bigint $$;
-- the model's watermark, NULL before the first advance
CREATE FUNCTION rr_wm() RETURNS timestamptz LANGUAGE sql STABLE
AS $$ SELECT rr_ts(v) FROM rr_state WHERE k = 'wm' $$;
-- whether the (one, 10-second) window of an event at ts is still live:
-- only such an event is re-mapped or taken out by a recompute (the
-- finalized rows are what the remembered events give)
CREATE FUNCTION rr_live(ts timestamptz) RETURNS boolean LANGUAGE sql STABLE
AS $$ SELECT rr_wm() IS NULL OR streamforge.tumble(ts, interval '10 seconds') + interval '15 seconds' >= rr_wm() $$;
-- a pipeline's mapping of a page with the dimension as it is now: whether
-- the join and WHERE keep the event, its section and weight
CREATE FUNCTION rr_map(pp text, pg integer, OUT ok boolean, OUT section text, OUT weight integer)
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN pp = 'a' THEN d.page IS NOT NULL AND d.section <> 's4'
                ELSE d.weight IS DISTINCT FROM 0 END,
           d.section, CASE WHEN pp = 'a' THEN d.weight END
      FROM (SELECT 1) AS one LEFT JOIN rr_dim AS d ON d.page = pg
$$;

-- the model's rows, as each aggregate groups them (lo, hi: the bucket's
-- min and max of rr_b's one measure, which its changes carry)
CREATE VIEW rr_model AS
SELECT p, section, streamforge.tumble(at, interval '10 seconds') AS window_start,
       count(*) AS n, sum(amount) AS total,
       CASE WHEN p = 'a' THEN avg(amount) END AS mean,
       max(weight) AS top_w,
       CASE WHEN p = 'a' THEN count(*) FILTER (WHERE weight > 1) END AS heavy,
       sum(amount) FILTER (WHERE weight > 1) AS heavy_total,
       CASE WHEN p = 'b' THEN min(amount) END AS lo,
       CASE WHEN p = 'b' THEN max(amount) END AS hi
  FROM rr_ref GROUP BY 1, 2, 3;
-- the windows the watermark has passed (emitted) and still live
CREATE VIEW rr_model_ready AS
SELECT m.* FROM rr_model AS m
 WHERE m.window_start + interval '10 seconds' <= rr_wm()
   AND m.window_start + interval '15 seconds' >= rr_wm();

-- what the pipelines show
CREATE VIEW rr_got_live AS
SELECT 'a' AS p, section, window_start, n, total, mean, top_w, heavy, heavy_total
  FROM rr_a_live
UNION ALL
SELECT 'b', section, window_start, n, total, NULL::numeric, NULL::integer, NULL::bigint, NULL::bigint
  FROM rr_b_live;
CREATE VIEW rr_got_emitted AS
SELECT 'a' AS p, section, window_start, n, total, mean, top_w, heavy, heavy_total, final
  FROM rr_a
UNION ALL
SELECT 'b', section, window_start, n, total, NULL::numeric, NULL::integer, NULL::bigint, NULL::bigint,
       final
  FROM rr_b;

-- the comparisons: the rows of each side the other lacks
CREATE VIEW rr_diff AS
WITH want_live AS (
        SELECT p, section, window_start, n, total, mean, top_w, heavy, heavy_total
          FROM rr_model
         WHERE rr_wm() IS NULL OR window_start + interval '15 seconds' >= rr_wm()),
     want_emitted AS (
        SELECT p, section, window_start, n, total, mean, top_w, heavy, heavy_total, false AS final
          FROM rr_model_ready
        UNION ALL
        SELECT *, true FROM rr_final)
(SELECT 'live missing' AS d, *, NULL::boolean AS final
   FROM (SELECT * FROM want_live EXCEPT ALL SELECT * FROM rr_got_live) AS x)
UNION ALL
(SELECT 'live extra', *, NULL FROM (SELECT * FROM rr_got_live EXCEPT ALL SELECT * FROM want_live) AS x)
UNION ALL
(SELECT 'emitted missing', * FROM (SELECT * FROM want_emitted EXCEPT ALL SELECT * FROM rr_got_emitted) AS x)
UNION ALL
(SELECT 'emitted extra', * FROM (SELECT * FROM rr_got_emitted EXCEPT ALL SELECT * FROM want_emitted) AS x);
CREATE VIEW rr_diff_late AS
WITH got AS (SELECT 'a' AS p, event_id::integer AS id, section FROM rr_a_late
             UNION ALL
             SELECT 'b', event_id::integer, section FROM rr_b_late),
     want AS (SELECT p, id, section FROM rr_late)
(SELECT 'late missing' AS d, * FROM (SELECT * FROM want EXCEPT ALL SELECT * FROM got) AS x)
UNION ALL
(SELECT 'late extra', * FROM (SELECT * FROM got EXCEPT ALL SELECT * FROM want) AS x)
UNION ALL
SELECT 'watermark', v.pp, NULL, streamforge.watermark_ts('rr_' || v.pp)::text
  FROM (VALUES ('a'), ('b')) AS v (pp)
 WHERE streamforge.watermark_ts('rr_' || v.pp) IS DISTINCT FROM rr_wm();

-- the model of a first delivery of event eid (a new row, or a row deleted
-- and inserted again that a pipeline does not hold): the join and WHERE as
-- they are now; late if event_time + lateness < watermark
CREATE FUNCTION rr_model_deliver(eid integer) RETURNS void LANGUAGE plpgsql AS $f$
DECLARE
    e rr_ev;
    m record;
    pp text;
BEGIN
    SELECT * INTO STRICT e FROM rr_ev WHERE id = eid;
    FOREACH pp IN ARRAY ARRAY['a', 'b'] LOOP
        CONTINUE WHEN EXISTS (SELECT FROM rr_ref AS r WHERE r.p = pp AND r.id = eid)
                   OR EXISTS (SELECT FROM rr_late AS l WHERE l.p = pp AND l.id = eid);
        m := rr_map(pp, e.page);
        CONTINUE WHEN NOT m.ok;
        IF e.at + interval '5 seconds' < rr_wm() THEN
            INSERT INTO rr_late VALUES (pp, eid, m.section, m.weight, e.amount, e.at);
        ELSE
            INSERT INTO rr_ref VALUES (pp, eid, m.section, m.weight, e.amount, e.at);
        END IF;
        DELETE FROM rr_removed AS x WHERE x.p = pp AND x.id = eid;
        IF FOUND THEN
            UPDATE rr_state SET v = v + 1 WHERE k = 'readded';
        END IF;
    END LOOP;
END
$f$;

-- whether a re-delivery of the rows ids is an identity conflict: a
-- pipeline holds one of them (accepted or late) with another mapping
-- than the join gives now, and the join and WHERE keep it now
CREATE FUNCTION rr_model_conflict(ids integer[]) RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT EXISTS (
        SELECT FROM rr_ev AS e CROSS JOIN (VALUES ('a'), ('b')) AS v (pp),
               LATERAL rr_map(v.pp, e.page) AS m,
               LATERAL (SELECT r.section, r.weight FROM rr_ref AS r WHERE r.p = v.pp AND r.id = e.id
                        UNION ALL
                        SELECT l.section, l.weight FROM rr_late AS l WHERE l.p = v.pp AND l.id = e.id) AS h
         WHERE e.id = ANY (ids) AND m.ok
           AND (h.section, h.weight) IS DISTINCT FROM (m.section, m.weight))
$$;

-- the model of recompute(rr_<pp>, f, t): each event held with event time
-- in [f, t) in a live window whose source row exists takes its mapping
-- now, or leaves; the
-- expected counts, and the expected changes: the ready live rows that
-- differ before and after (a retraction for each old one, an upsert for
-- each new one)
CREATE FUNCTION rr_model_recompute(pp text, f timestamptz, t timestamptz,
    OUT mapped bigint, OUT remapped bigint, OUT removed bigint, OUT changes bigint)
LANGUAGE plpgsql AS $f$
BEGIN
    DELETE FROM rr_snap;
    INSERT INTO rr_snap SELECT * FROM rr_model_ready WHERE p = pp;
    SELECT count(*) FILTER (WHERE m.ok),
           count(*) FILTER (WHERE m.ok AND (r.section, r.weight) IS DISTINCT FROM (m.section, m.weight)),
           count(*) FILTER (WHERE NOT m.ok)
      INTO mapped, remapped, removed
      FROM rr_ref AS r JOIN rr_ev AS e ON e.id = r.id, LATERAL rr_map(pp, e.page) AS m
     WHERE r.p = pp AND (f IS NULL OR r.at >= f) AND (t IS NULL OR r.at < t) AND rr_live(r.at);
    INSERT INTO rr_removed
    SELECT pp, r.id
      FROM rr_ref AS r JOIN rr_ev AS e ON e.id = r.id, LATERAL rr_map(pp, e.page) AS m
     WHERE r.p = pp AND (f IS NULL OR r.at >= f) AND (t IS NULL OR r.at < t) AND rr_live(r.at) AND NOT m.ok;
    DELETE FROM rr_ref AS r USING rr_removed AS x
     WHERE r.p = pp AND x.p = pp AND x.id = r.id;
    UPDATE rr_ref AS r SET section = m.section, weight = m.weight
      FROM rr_ev AS e, LATERAL rr_map(pp, e.page) AS m
     WHERE r.p = pp AND e.id = r.id AND (f IS NULL OR r.at >= f) AND (t IS NULL OR r.at < t)
       AND rr_live(r.at);
    changes := (SELECT count(*) FROM (SELECT * FROM rr_snap
                                      EXCEPT ALL SELECT * FROM rr_model_ready WHERE p = pp) AS x)
             + (SELECT count(*) FROM (SELECT * FROM rr_model_ready WHERE p = pp
                                      EXCEPT ALL SELECT * FROM rr_snap) AS y);
END
$f$;

-- recompute(rr_<pp>, f, t), and the model's: a message when they disagree
CREATE FUNCTION rr_recompute(pp text, f timestamptz, t timestamptz) RETURNS text
LANGUAGE plpgsql AS $f$
DECLARE
    want record;
    got record;
BEGIN
    SELECT * INTO want FROM rr_model_recompute(pp, f, t);
    SELECT * INTO got FROM streamforge.recompute('rr_' || pp, f, t);
    UPDATE rr_state SET v = v + 1
     WHERE k = 'recomputes'
        OR (k = 'range' || ((f IS NOT NULL)::integer + 2 * (t IS NOT NULL)::integer))
        OR (k = 'recomputes_remapping' AND got.remapped > 0)
        OR (k = 'recomputes_removing' AND got.removed > 0)
        OR (k = 'recomputes_changing' AND got.changes > 0);
    IF (got.mapped, got.remapped, got.removed, got.changes)
       IS DISTINCT FROM (want.mapped, want.remapped, want.removed, want.changes) THEN
        RETURN format('recompute(rr_%s, %s, %s) returned %s, the model %s', pp, f, t, got, want);
    END IF;
    RETURN NULL;
END
$f$;

-- one step; sometimes rolled back (the model with it)
CREATE FUNCTION rr_step() RETURNS void LANGUAGE plpgsql AS $f$
DECLARE
    r double precision := random();
    rollback_it boolean := random() < 0.1;
    step bigint;
    kind text;
    rolled boolean := false;
    bad text[] := '{}';
    maxus bigint := (SELECT v FROM rr_state WHERE k = 'max_us');
    wm bigint := (SELECT v FROM rr_state WHERE k = 'wm');
    anchor bigint;
    nid integer;
    cnt integer;
    t bigint;
    pg integer;
    rk integer;
    f timestamptz;
    tt timestamptz;
    ids integer[];
    evs rr_ev[];
    conflict_want boolean;
    conflict_got boolean;
    diff text;
BEGIN
    UPDATE rr_state SET v = v + 1 WHERE k = 'steps' RETURNING v INTO step;
    BEGIN
        IF r < 0.2 THEN
            -- one to three dimension rows updated, inserted or deleted
            kind := 'dimension';
            FOR i IN 1 .. 1 + floor(random() * 3)::integer LOOP
                pg := 1 + floor(random() * 24)::integer;
                IF random() < 0.12 THEN
                    DELETE FROM rr_dim WHERE page = pg;
                ELSE
                    -- section s4: rr_a's WHERE drops the page's events
                    INSERT INTO rr_dim VALUES (pg, CASE WHEN random() < 0.1 THEN 's4'
                                                        ELSE 's' || floor(random() * 4)::integer END,
                                               CASE WHEN random() < 0.15 THEN NULL
                                                    ELSE floor(random() * 4)::integer END)
                    ON CONFLICT (page) DO UPDATE SET section = EXCLUDED.section,
                                                     weight = EXCLUDED.weight;
                END IF;
            END LOOP;
        ELSIF r < 0.48 THEN
            -- one to eight events, mostly forward, some late, across
            -- windows; pages 21-24 are mostly missing
            kind := 'insert';
            cnt := 1 + floor(random() * 8)::integer;
            nid := (SELECT v FROM rr_state WHERE k = 'next_id');
            INSERT INTO rr_ev
            SELECT nid + i - 1, 1 + floor(random() * 24)::integer, floor(random() * 100)::integer,
                   rr_ts(greatest(0, maxus + floor((random() * 30 - 16) * 1000000)::bigint))
              FROM generate_series(1, cnt) AS i;
            PERFORM rr_model_deliver(i) FROM generate_series(nid, nid + cnt - 1) AS i;
            UPDATE rr_state SET v = nid + cnt WHERE k = 'next_id';
            UPDATE rr_state SET v = greatest(v, (SELECT max(rr_us(at)) FROM rr_ev WHERE id >= nid))
             WHERE k = 'max_us';
        ELSIF r < 0.68 THEN
            -- a recompute of a random range: none, from only, to only, both
            -- (sometimes empty), more often rolled back
            kind := 'recompute';
            rollback_it := rollback_it OR random() < 0.2;
            rk := floor(random() * 4)::integer;
            anchor := coalesce(wm, maxus) - 30000000;
            IF rk IN (1, 3) THEN
                f := rr_ts(anchor + floor(random() * 45000000)::bigint);
            END IF;
            IF rk = 2 THEN
                tt := rr_ts(anchor + floor(random() * 45000000)::bigint);
            ELSIF rk = 3 THEN
                tt := f + floor((random() * 40 - 5) * 1000000) * interval '1 microsecond';
            END IF;
            bad := bad || rr_recompute(CASE WHEN random() < 0.55 THEN 'a' ELSE 'b' END, f, tt);
        ELSIF r < 0.8 THEN
            -- a re-delivery of one to three rows in one statement, mostly
            -- recent ones, sometimes rows rr_a does not hold (it dropped or
            -- took them out): deleted and inserted again
            kind := 're-delivery';
            ids := '{}';
            FOR i IN 1 .. 1 + floor(random() * 3)::integer LOOP
                IF random() < 0.3 THEN
                    cnt := (SELECT count(*) FROM rr_ev AS e
                             WHERE NOT EXISTS (SELECT FROM rr_ref AS x WHERE x.p = 'a' AND x.id = e.id)
                               AND NOT EXISTS (SELECT FROM rr_late AS x WHERE x.p = 'a' AND x.id = e.id));
                    ids := ids || (SELECT e.id FROM rr_ev AS e
                                    WHERE NOT EXISTS (SELECT FROM rr_ref AS x WHERE x.p = 'a' AND x.id = e.id)
                                      AND NOT EXISTS (SELECT FROM rr_late AS x WHERE x.p = 'a' AND x.id = e.id)
                                    ORDER BY e.id DESC OFFSET floor(random() * cnt) LIMIT 1);
                ELSE
                    cnt := (SELECT count(*) FROM rr_ev);
                    ids := ids || (SELECT id FROM rr_ev ORDER BY id DESC
                                    OFFSET floor(power(random(), 2) * cnt) LIMIT 1);
                END IF;
            END LOOP;
            ids := ARRAY(SELECT DISTINCT x FROM unnest(ids) AS x WHERE x IS NOT NULL ORDER BY 1);
            IF cardinality(ids) > 0 THEN
                conflict_want := rr_model_conflict(ids);
                BEGIN
                    SELECT array_agg(e ORDER BY e.id) INTO evs FROM rr_ev AS e WHERE e.id = ANY (ids);
                    DELETE FROM rr_ev WHERE id = ANY (ids);
                    INSERT INTO rr_ev SELECT * FROM unnest(evs);
                    conflict_got := false;
                EXCEPTION WHEN SQLSTATE 'SF002' THEN
                    conflict_got := true;
                END;
                IF conflict_got IS DISTINCT FROM conflict_want THEN
                    bad := bad || format('re-delivery of %s: SF002 %s, the model %s',
                                         ids, conflict_got, conflict_want);
                END IF;
                IF conflict_got THEN
                    UPDATE rr_state SET v = v + 1 WHERE k = 'conflicts';
                ELSE
                    PERFORM rr_model_deliver(x) FROM unnest(ids) AS x;
                    UPDATE rr_state SET v = v + 1 WHERE k = 'redelivered';
                END IF;
            END IF;
        ELSIF r < 0.82 THEN
            -- a source row deleted for good: its events keep their mapping,
            -- a recompute does not read it
            kind := 'delete';
            cnt := (SELECT count(*) FROM rr_ev);
            DELETE FROM rr_ev
             WHERE id = (SELECT id FROM rr_ev ORDER BY id DESC OFFSET floor(random() * cnt) LIMIT 1);
            UPDATE rr_state SET v = v + 1 WHERE k = 'deleted';
        ELSIF r < 0.95 THEN
            -- the watermark moves (mostly to some seconds behind the latest
            -- event, sometimes past it); the windows it finalizes are
            -- frozen in rr_final as the model has them now
            kind := 'advance';
            IF random() < 0.1 THEN
                t := maxus + floor(random() * 8000000)::bigint;
            ELSE
                t := maxus - floor(random() * 12000000)::bigint;
            END IF;
            t := greatest(t, wm);
            INSERT INTO rr_final
            SELECT p, section, window_start, n, total, mean, top_w, heavy, heavy_total
              FROM rr_model
             WHERE window_start + interval '15 seconds' < rr_ts(t)
               AND (wm IS NULL OR window_start + interval '15 seconds' >= rr_ts(wm));
            PERFORM count(*) FROM streamforge.advance_ts('rr_a', 'default', rr_ts(t));
            PERFORM count(*) FROM streamforge.advance_ts('rr_b', 'default', rr_ts(t));
            UPDATE rr_state SET v = t WHERE k = 'wm';
            UPDATE rr_state SET v = v + 1
             WHERE k = 'advances'
                OR (k = 'advances_ready' AND EXISTS (SELECT FROM rr_model_ready))
                OR (k = 'advances_live2' AND (SELECT count(DISTINCT window_start) FROM rr_model
                                               WHERE window_start + interval '15 seconds' >= rr_ts(t)) > 1);
        ELSIF r < 0.97 THEN
            -- each aggregate restored from its checkpoint
            kind := 'restore';
            PERFORM streamforge.restore('rr_a', streamforge.checkpoint('rr_a'));
            PERFORM streamforge.restore('rr_b', streamforge.checkpoint('rr_b'));
            UPDATE rr_state SET v = v + 1 WHERE k = 'restores';
        ELSE
            -- both aggregates recomputed whole
            kind := 'recompute both';
            bad := bad || rr_recompute('a', NULL, NULL) || rr_recompute('b', NULL, NULL);
        END IF;
        IF rollback_it THEN
            RAISE EXCEPTION 'rolled back' USING ERRCODE = 'P0001';
        END IF;
    EXCEPTION WHEN raise_exception THEN
        rolled := true;
    END;
    IF rolled AND kind LIKE 'recompute%' THEN
        UPDATE rr_state SET v = v + 1 WHERE k = 'recomputes_rolled_back';
    END IF;
    INSERT INTO rr_mismatch SELECT step, x FROM unnest(bad) AS x WHERE x IS NOT NULL;
    -- the steps after which the pipelines and the model disagree
    -- differently than after the step before
    diff := nullif(concat((SELECT string_agg(x::text, ' ' ORDER BY x::text) FROM rr_diff AS x),
                          (SELECT string_agg(x::text, ' ' ORDER BY x::text) FROM rr_diff_late AS x)), '');
    IF diff IS DISTINCT FROM (SELECT d FROM rr_last_diff) THEN
        INSERT INTO rr_mismatch
        VALUES (step, format('diff after step %s (%s%s)', step, kind,
                             CASE WHEN rolled THEN ', rolled back' ELSE '' END));
        UPDATE rr_last_diff SET d = diff;
    END IF;
END
$f$;

-- steps that commit one by one
CREATE PROCEDURE rr_run(nsteps integer) LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1 .. nsteps LOOP
        PERFORM rr_step();
        COMMIT;
    END LOOP;
END
$$;

-- steps in one transaction
SELECT count(rr_step()) FROM generate_series(1, 120);
SELECT * FROM rr_diff;
SELECT * FROM rr_diff_late;
SELECT * FROM rr_mismatch;
-- checkpoint and restore both, then steps that commit one by one
SELECT streamforge.restore('rr_a', streamforge.checkpoint('rr_a'));
SELECT streamforge.restore('rr_b', streamforge.checkpoint('rr_b'));
SELECT * FROM rr_diff;
CALL rr_run(120);
SELECT * FROM rr_diff;
SELECT * FROM rr_diff_late;
SELECT * FROM rr_mismatch;
-- a cold load: a new session
\c
SET client_min_messages = warning;
SET TimeZone = 'UTC';
SELECT * FROM rr_diff;
SELECT * FROM rr_diff_late;
SELECT setseed(0.58);
SELECT count(rr_step()) FROM generate_series(1, 60);
CALL rr_run(60);
SELECT * FROM rr_diff;
SELECT * FROM rr_diff_late;
SELECT * FROM rr_mismatch;
-- the trace was not trivial
SELECT (SELECT count(*) FROM rr_ev) > 250 AS events,
       (SELECT v FROM rr_state WHERE k = 'recomputes_remapping') > 10 AS remapping,
       (SELECT v FROM rr_state WHERE k = 'recomputes_removing') > 3 AS removing,
       (SELECT v FROM rr_state WHERE k = 'recomputes_changing') > 3 AS changing,
       (SELECT v FROM rr_state WHERE k = 'recomputes_rolled_back') > 3 AS rolled_back,
       (SELECT min(v) FROM rr_state WHERE k LIKE 'range_') > 3 AS every_range,
       (SELECT count(DISTINCT p) FROM rr_removed) = 2 AS removed_both,
       (SELECT v FROM rr_state WHERE k = 'readded') > 0 AS readded,
       (SELECT count(*) FROM rr_late WHERE p = 'a') > 5 AS late,
       (SELECT count(DISTINCT window_start) FROM rr_a WHERE final) > 10 AS finalized,
       (SELECT v FROM rr_state WHERE k = 'advances_live2') > 5 AS live_windows,
       (SELECT v FROM rr_state WHERE k = 'advances_ready') > 5 AS ready_windows,
       (SELECT v FROM rr_state WHERE k = 'conflicts') > 3 AS conflicts,
       (SELECT v FROM rr_state WHERE k = 'redelivered') > 10 AS redelivered,
       (SELECT v FROM rr_state WHERE k = 'deleted') > 3 AS deleted,
       (SELECT v FROM rr_state WHERE k = 'restores') > 3 AS restores,
       EXISTS (SELECT FROM rr_b WHERE section IS NULL) AS null_group,
       (SELECT count(*) FROM rr_ev) > (SELECT count(*) FROM rr_ref WHERE p = 'a')
                                      + (SELECT count(*) FROM rr_late WHERE p = 'a') AS dropped;

-- leave nothing for the tests that share the database
DROP VIEW rr_diff, rr_diff_late, rr_got_live, rr_got_emitted, rr_model_ready, rr_model;
SELECT streamforge.drop_aggregate('rr_a'), streamforge.drop_aggregate('rr_b');
DROP PROCEDURE rr_run(integer);
DROP FUNCTION rr_step(), rr_recompute(text, timestamptz, timestamptz),
    rr_model_recompute(text, timestamptz, timestamptz), rr_model_conflict(integer[]),
    rr_model_deliver(integer), rr_map(text, integer), rr_wm(), rr_live(timestamptz), rr_us(timestamptz), rr_ts(bigint);
DROP TABLE rr_ev, rr_dim, rr_state, rr_ref, rr_late, rr_removed, rr_final, rr_snap, rr_mismatch,
    rr_last_diff;
