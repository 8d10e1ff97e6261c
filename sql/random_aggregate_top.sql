--
-- Randomized test of the top-N per window (issue 44, item 4): after every
-- statement, for each aggregate with a ROW_NUMBER() query,
--   - <name>_top equals PostgreSQL's own ROW_NUMBER() ... <= N over the
--     aggregate's rows (the view <name>), written here independently
--     with the documented tie rule (the grouping columns, ascending);
--   - replaying streamforge.top_changelog from the start (delete, insert,
--     update by window and grouping columns) gives <name>_top exactly:
--     the incremental changelog is exact at every call.
-- Statements: multi-row inserts crossing windows, late rows (lateness 5
-- seconds, rows up to 20 seconds behind), inserts rolled back, progress
-- reports; then a new backend (cold load) and more of them, with
-- restores of a checkpoint taken earlier (restore rewinds the results:
-- the top-N's changes follow).  Four aggregates: tumbling count DESC top
-- 2, hopping sum ASC top 2 per k1, tumbling max DESC top 1 in emit
-- 'final', session count DESC top 1.  Deterministic: setseed.
--
SET client_min_messages = warning;
SET TimeZone = 'UTC';
CREATE SCHEMA rt;
CREATE TABLE rt.ev (id bigserial PRIMARY KEY, k1 text NOT NULL, k2 integer NOT NULL,
                    v integer NOT NULL, at timestamptz NOT NULL);

SELECT streamforge.create_aggregate('rt_cnt', $$
    SELECT * FROM (
        SELECT k1, k2, count(*) AS c, sum(v) AS s,
               row_number() OVER (PARTITION BY streamforge.tumble(at, interval '10 seconds')
                                  ORDER BY count(*) DESC) AS rn
          FROM rt.ev GROUP BY k1, k2, streamforge.tumble(at, interval '10 seconds')) AS t
     WHERE rn <= 2
$$, lateness => interval '5 seconds');
SELECT streamforge.create_aggregate('rt_hop', $$
    SELECT * FROM (
        SELECT k1, k2, sum(v) AS s,
               row_number() OVER (PARTITION BY window_start, window_end, k1 ORDER BY s ASC) AS rn
          FROM rt.ev GROUP BY k1, k2, streamforge.hop(at, interval '20 seconds', interval '5 seconds')) AS t
     WHERE rn < 3
$$, lateness => interval '5 seconds');
SELECT streamforge.create_aggregate('rt_fin', $$
    SELECT * FROM (
        SELECT k2, max(v) AS mx, count(*) AS c,
               row_number() OVER (PARTITION BY streamforge.tumble(at, interval '10 seconds')
                                  ORDER BY max(v) DESC) AS rn
          FROM rt.ev GROUP BY k2, streamforge.tumble(at, interval '10 seconds')) AS t
     WHERE rn = 1
$$, lateness => interval '5 seconds', emit => 'final');
SELECT streamforge.create_aggregate('rt_ses', $$
    SELECT * FROM (
        SELECT k1, count(*) AS c,
               row_number() OVER (PARTITION BY window_start, window_end ORDER BY c DESC) AS rn
          FROM rt.ev GROUP BY k1, streamforge.session(at, interval '3 seconds')) AS t
     WHERE rn <= 1
$$, lateness => interval '5 seconds');

-- the reference: ROW_NUMBER() over the aggregate's rows, as jsonb
CREATE FUNCTION rt.reference(p text) RETURNS SETOF jsonb LANGUAGE plpgsql AS $$
BEGIN
    CASE p
    WHEN 'rt_cnt' THEN RETURN QUERY SELECT to_jsonb(x) FROM (SELECT *, row_number() OVER (
            PARTITION BY window_start, window_end ORDER BY c DESC, k1, k2) AS rn FROM rt_cnt) AS x WHERE rn <= 2;
    WHEN 'rt_hop' THEN RETURN QUERY SELECT to_jsonb(x) FROM (SELECT *, row_number() OVER (
            PARTITION BY window_start, window_end, k1 ORDER BY s, k1, k2) AS rn FROM rt_hop) AS x WHERE rn <= 2;
    WHEN 'rt_fin' THEN RETURN QUERY SELECT to_jsonb(x) FROM (SELECT *, row_number() OVER (
            PARTITION BY window_start, window_end ORDER BY mx DESC, k2) AS rn FROM rt_fin) AS x WHERE rn <= 1;
    WHEN 'rt_ses' THEN RETURN QUERY SELECT to_jsonb(x) FROM (SELECT *, row_number() OVER (
            PARTITION BY window_start, window_end ORDER BY c DESC, k1) AS rn FROM rt_ses) AS x WHERE rn <= 1;
    END CASE;
END
$$;
CREATE FUNCTION rt.top_view(p text) RETURNS SETOF jsonb LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format('SELECT to_jsonb(t) FROM %I AS t', p || '_top');
END
$$;

-- the replay of the changelog
CREATE TABLE rt.replay (pipeline text, id jsonb, rank bigint, row jsonb);
CREATE TABLE rt.replayed (pipeline text PRIMARY KEY, seq bigint);
INSERT INTO rt.replayed VALUES ('rt_cnt', 0), ('rt_hop', 0), ('rt_fin', 0), ('rt_ses', 0);
CREATE FUNCTION rt.replay(p text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    c record;
    ids text[];
    rid jsonb;
BEGIN
    SELECT ARRAY['window_start', 'window_end'] || ARRAY(SELECT jsonb_array_elements_text(spec -> 'top' -> 'keys'))
      INTO ids FROM streamforge.aggregate WHERE name = p;
    FOR c IN SELECT * FROM streamforge.top_changelog AS l
              WHERE l.pipeline = p AND l.seq > (SELECT seq FROM rt.replayed WHERE pipeline = p)
              ORDER BY l.seq LOOP
        rid := (SELECT jsonb_object_agg(k, c.row -> k) FROM unnest(ids) AS k);
        IF c.op = 'delete' THEN
            DELETE FROM rt.replay AS r WHERE r.pipeline = p AND r.id = rid;
            IF NOT FOUND THEN RAISE EXCEPTION 'delete of a row not in the top: %', c.row; END IF;
        ELSIF c.op = 'insert' THEN
            IF EXISTS (SELECT FROM rt.replay AS r WHERE r.pipeline = p AND r.id = rid) THEN
                RAISE EXCEPTION 'insert of a row in the top already: %', c.row;
            END IF;
            INSERT INTO rt.replay VALUES (p, rid, c.rank, c.row);
        ELSE
            UPDATE rt.replay AS r SET rank = c.rank, row = c.row WHERE r.pipeline = p AND r.id = rid
               AND r.rank = c.old_rank;
            IF NOT FOUND THEN RAISE EXCEPTION 'update of a row not in the top at its old rank: %', c.row; END IF;
        END IF;
        UPDATE rt.replayed SET seq = c.seq WHERE pipeline = p;
    END LOOP;
END
$$;

-- mismatches of every aggregate: view vs reference, replay vs view
CREATE FUNCTION rt.mismatches() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    p text;
    n bigint := 0;
    rk text;
BEGIN
    FOREACH p IN ARRAY ARRAY['rt_cnt', 'rt_hop', 'rt_fin', 'rt_ses'] LOOP
        n := n + (SELECT count(*) FROM ((SELECT * FROM rt.top_view(p) EXCEPT ALL SELECT * FROM rt.reference(p))
                                        UNION ALL
                                        (SELECT * FROM rt.reference(p) EXCEPT ALL SELECT * FROM rt.top_view(p))) AS d);
        PERFORM rt.replay(p);
        n := n + (SELECT count(*) FROM (
            (SELECT r.rank, r.row FROM rt.replay AS r WHERE r.pipeline = p
             EXCEPT ALL SELECT (v ->> 'rn')::bigint, v - 'rn' - 'final' FROM rt.top_view(p) AS v)
            UNION ALL
            (SELECT (v ->> 'rn')::bigint, v - 'rn' - 'final' FROM rt.top_view(p) AS v
             EXCEPT ALL SELECT r.rank, r.row FROM rt.replay AS r WHERE r.pipeline = p)) AS d);
    END LOOP;
    RETURN n;
END
$$;

CREATE TABLE rt.log (phase integer, step integer, what text, mismatches bigint);
CREATE TABLE rt.clock (at timestamptz);
INSERT INTO rt.clock VALUES ('2026-12-01 12:00:00+00');
CREATE TABLE rt.ck (pipeline text, c bytea, taken_at integer);
CREATE FUNCTION rt.run(phase integer, steps integer, seed double precision) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    wm timestamptz := (SELECT at FROM rt.clock);
    n integer;
    r double precision;
    p text;
BEGIN
    PERFORM setseed(seed);
    FOR step IN 1 .. steps LOOP
        r := random();
        IF r < 0.5 THEN
            -- rows around the watermark: some late, some across windows
            n := 1 + floor(random() * 8)::integer;
            INSERT INTO rt.ev (k1, k2, v, at)
            SELECT (ARRAY['a', 'b', 'c', 'd'])[1 + floor(random() * 4)::integer],
                   floor(random() * 3)::integer,
                   floor(random() * 20)::integer - 5,
                   wm - interval '20 seconds' + floor(random() * 40000) * interval '1 millisecond'
              FROM generate_series(1, n);
            INSERT INTO rt.log VALUES (phase, step, 'insert ' || n, rt.mismatches());
        ELSIF r < 0.6 THEN
            BEGIN
                INSERT INTO rt.ev (k1, k2, v, at)
                SELECT 'a', 0, 100 + g, wm + g * interval '2 seconds' FROM generate_series(1, 5) AS g;
                RAISE EXCEPTION 'roll back';
            EXCEPTION WHEN raise_exception THEN
                NULL;
            END;
            INSERT INTO rt.log VALUES (phase, step, 'rolled back', rt.mismatches());
        ELSIF r < 0.68 AND phase = 1 THEN
            INSERT INTO rt.ck SELECT q, streamforge.checkpoint(q), step
              FROM unnest(ARRAY['rt_cnt', 'rt_hop', 'rt_fin', 'rt_ses']) AS q;
            INSERT INTO rt.log VALUES (phase, step, 'checkpoint', rt.mismatches());
        ELSIF r < 0.68 AND phase = 2 AND EXISTS (SELECT FROM rt.ck) THEN
            -- restore the latest checkpoint taken (phase 1) into every pipeline
            FOR p IN SELECT DISTINCT pipeline FROM rt.ck LOOP
                PERFORM streamforge.restore(p, (SELECT c FROM rt.ck WHERE pipeline = p
                                                 ORDER BY taken_at DESC LIMIT 1));
            END LOOP;
            DELETE FROM rt.ck;
            INSERT INTO rt.log VALUES (phase, step, 'restore', rt.mismatches());
        ELSE
            wm := wm + floor(random() * 8) * interval '1 second';
            FOREACH p IN ARRAY ARRAY['rt_cnt', 'rt_hop', 'rt_fin', 'rt_ses'] LOOP
                PERFORM count(*) FROM streamforge.advance_ts(p, 'default', wm);
            END LOOP;
            INSERT INTO rt.log VALUES (phase, step, 'advance', rt.mismatches());
        END IF;
    END LOOP;
    UPDATE rt.clock SET at = wm;
END
$$;

SELECT rt.run(1, 120, 0.44);
SELECT rt.mismatches();
-- a new backend: the pipelines are loaded cold
\c
SET client_min_messages = warning;
SET TimeZone = 'UTC';
SELECT rt.run(2, 120, 0.45);
-- the end of the input: every window final
SELECT count(*) >= 0 FROM (SELECT streamforge.finish(p) FROM unnest(ARRAY['rt_cnt', 'rt_hop', 'rt_fin', 'rt_ses']) AS p) AS f;
INSERT INTO rt.log VALUES (3, 1, 'finish', rt.mismatches());

-- every step agreed, and the run covered enough
SELECT count(*) AS steps, sum(mismatches) AS mismatches,
       count(*) FILTER (WHERE what LIKE 'insert%') > 50 AS inserts,
       count(*) FILTER (WHERE what = 'rolled back') > 10 AS rollbacks,
       count(*) FILTER (WHERE what = 'advance') > 30 AS advances,
       count(*) FILTER (WHERE what = 'checkpoint') > 0 AS checkpoints,
       count(*) FILTER (WHERE what = 'restore') > 0 AS restores
  FROM rt.log;
-- late rows, and every kind of change
SELECT (SELECT count(*) FROM rt_cnt_late) > 0 AS late_rows;
SELECT op, count(*) > 5 AS many FROM streamforge.top_changelog GROUP BY op ORDER BY op;
SELECT pipeline, count(*) > 3 AS many FROM streamforge.top_changelog GROUP BY pipeline ORDER BY pipeline;

SELECT streamforge.drop_aggregate(p) FROM unnest(ARRAY['rt_cnt', 'rt_hop', 'rt_fin', 'rt_ses']) AS p;
DROP SCHEMA rt CASCADE;
