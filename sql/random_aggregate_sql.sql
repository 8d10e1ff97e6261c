--
-- Randomized test of create_aggregate (issue 29): after every statement,
-- each aggregate's views equal a plain GROUP BY over the table's matching
-- rows.  Statements: multi-row inserts of matching and non-matching rows,
-- inserts rolled back (a subtransaction), progress reports; no data is
-- ever late (the lateness is a day, the events span minutes).
--   - <name>_live (every live bucket; none is finalized) = GROUP BY over
--     every matching row;
--   - <name> (the emitted results) = the same GROUP BY, restricted to the
--     windows that end at or before the watermark, with final computed
--     from the watermark.
-- Two aggregates share the table: a tumbling window with a composite key
-- and a WHERE, and a hopping window with an expression key and another
-- WHERE.  Deterministic: setseed.
--
SET client_min_messages = warning;
SET TimeZone = 'UTC';
CREATE TABLE rnd (id bigserial PRIMARY KEY, k1 text NOT NULL, k2 integer NOT NULL,
                  status text NOT NULL, v integer NOT NULL, at timestamptz NOT NULL);

SELECT streamforge.create_aggregate('rnd_tumble', $$
    SELECT k1, k2, count(*) AS c, sum(v) AS s, min(v) AS mn, max(v) AS mx, avg(v) AS a
      FROM rnd WHERE status <> 'bad'
     GROUP BY k1, k2, streamforge.tumble(at, interval '10 seconds')
$$, lateness => interval '1 day');
SELECT streamforge.create_aggregate('rnd_hop', $$
    SELECT upper(k1) AS uk, count(*) AS c, sum(v) AS s, max(v) AS mx
      FROM rnd WHERE v % 3 <> 0 AND status = 'ok'
     GROUP BY upper(k1), streamforge.hop(at, interval '20 seconds', interval '5 seconds')
$$, lateness => interval '1 day');

-- the oracles: plain GROUP BY queries over the table
CREATE FUNCTION pg_temp.wm(p text) RETURNS timestamptz LANGUAGE sql AS $$
    SELECT streamforge.watermark_ts(p) $$;
CREATE VIEW tumble_oracle AS
SELECT k1, k2, date_bin('10 seconds', at, '1970-01-01+00') AS window_start,
       date_bin('10 seconds', at, '1970-01-01+00') + interval '10 seconds' AS window_end,
       count(*) AS c, sum(v) AS s, min(v) AS mn, max(v) AS mx, avg(v) AS a
  FROM rnd WHERE status <> 'bad'
 GROUP BY k1, k2, date_bin('10 seconds', at, '1970-01-01+00');
CREATE VIEW hop_oracle AS
SELECT upper(k1) AS uk, w.ws AS window_start, w.ws + interval '20 seconds' AS window_end,
       count(*) AS c, sum(v) AS s, max(v) AS mx
  FROM rnd,
       LATERAL (SELECT date_bin('5 seconds', at, '1970-01-01+00') - g * interval '5 seconds' AS ws
                  FROM generate_series(0, 3) AS g) AS w
 WHERE v % 3 <> 0 AND status = 'ok'
 GROUP BY upper(k1), w.ws;

-- rows of a view not in its oracle, and of the oracle not in the view
CREATE FUNCTION pg_temp.mismatches() RETURNS bigint LANGUAGE sql AS $$
    SELECT (SELECT count(*) FROM (
                (SELECT k1, k2, window_start, window_end, c, s, mn, mx, a FROM rnd_tumble_live
                 EXCEPT ALL SELECT * FROM tumble_oracle)
                UNION ALL
                (SELECT * FROM tumble_oracle
                 EXCEPT ALL SELECT k1, k2, window_start, window_end, c, s, mn, mx, a FROM rnd_tumble_live)) AS d)
         + (SELECT count(*) FROM (
                (SELECT k1, k2, window_start, window_end, c, s, mn, mx, a, final FROM rnd_tumble
                 EXCEPT ALL SELECT o.*, o.window_end + interval '1 day' < pg_temp.wm('rnd_tumble')
                              FROM tumble_oracle AS o WHERE o.window_end <= pg_temp.wm('rnd_tumble'))
                UNION ALL
                (SELECT o.*, o.window_end + interval '1 day' < pg_temp.wm('rnd_tumble')
                   FROM tumble_oracle AS o WHERE o.window_end <= pg_temp.wm('rnd_tumble')
                 EXCEPT ALL SELECT k1, k2, window_start, window_end, c, s, mn, mx, a, final FROM rnd_tumble)) AS d)
         + (SELECT count(*) FROM (
                (SELECT uk, window_start, window_end, c, s, mx FROM rnd_hop_live
                 EXCEPT ALL SELECT * FROM hop_oracle)
                UNION ALL
                (SELECT * FROM hop_oracle
                 EXCEPT ALL SELECT uk, window_start, window_end, c, s, mx FROM rnd_hop_live)) AS d)
         + (SELECT count(*) FROM (
                (SELECT uk, window_start, window_end, c, s, mx FROM rnd_hop
                 EXCEPT ALL SELECT * FROM hop_oracle AS o WHERE o.window_end <= pg_temp.wm('rnd_hop'))
                UNION ALL
                (SELECT * FROM hop_oracle AS o WHERE o.window_end <= pg_temp.wm('rnd_hop')
                 EXCEPT ALL SELECT uk, window_start, window_end, c, s, mx FROM rnd_hop)) AS d)
$$;

CREATE TABLE log (step integer, what text, mismatches bigint);
DO $$
DECLARE
    base timestamptz := '2026-11-30 12:00:00+00';
    wm timestamptz := base;
    n integer;
    r double precision;
BEGIN
    PERFORM setseed(0.29);
    FOR step IN 1 .. 150 LOOP
        r := random();
        IF r < 0.55 THEN
            n := 1 + floor(random() * 8)::integer;
            INSERT INTO rnd (k1, k2, status, v, at)
            SELECT (ARRAY['a', 'b', 'A', 'c'])[1 + floor(random() * 4)::integer],
                   floor(random() * 3)::integer,
                   (ARRAY['ok', 'ok', 'ok', 'bad', 'meh'])[1 + floor(random() * 5)::integer],
                   floor(random() * 200)::integer - 50,
                   base + floor(random() * 300) * interval '1 second'
                        + floor(random() * 1000) * interval '1 millisecond'
              FROM generate_series(1, n);
            INSERT INTO log VALUES (step, 'insert ' || n, pg_temp.mismatches());
        ELSIF r < 0.70 THEN
            BEGIN
                INSERT INTO rnd (k1, k2, status, v, at)
                SELECT 'a', 0, 'ok', 1000 + g, base + g * interval '7 seconds'
                  FROM generate_series(1, 5) AS g;
                RAISE EXCEPTION 'roll back';
            EXCEPTION WHEN raise_exception THEN
                NULL;
            END;
            INSERT INTO log VALUES (step, 'rolled back', pg_temp.mismatches());
        ELSE
            wm := wm + floor(random() * 12) * interval '1 second';
            PERFORM count(*) FROM streamforge.advance_ts('rnd_tumble', 'default', wm);
            PERFORM count(*) FROM streamforge.advance_ts('rnd_hop', 'default', wm);
            INSERT INTO log VALUES (step, 'advance', pg_temp.mismatches());
        END IF;
    END LOOP;
END
$$;

-- every step agreed, and the run covered enough
SELECT count(*) AS steps, sum(mismatches) AS mismatches,
       count(*) FILTER (WHERE what LIKE 'insert%') AS inserts,
       count(*) FILTER (WHERE what = 'rolled back') AS rollbacks,
       count(*) FILTER (WHERE what = 'advance') AS advances
  FROM log;
SELECT count(*) AS table_rows, count(*) FILTER (WHERE status <> 'bad') AS tumble_rows,
       count(*) FILTER (WHERE v % 3 <> 0 AND status = 'ok') AS hop_rows
  FROM rnd;
SELECT (SELECT count(*) FROM rnd_tumble) AS tumble_emitted,
       (SELECT count(*) FROM rnd_tumble_live) AS tumble_live,
       (SELECT count(*) FROM rnd_hop) AS hop_emitted,
       (SELECT count(*) FROM rnd_hop_live) AS hop_live;
-- the engine saw only the matching rows
SELECT (SELECT deliveries FROM streamforge.stats('rnd_tumble')) AS tumble_deliveries,
       (SELECT deliveries FROM streamforge.stats('rnd_hop')) AS hop_deliveries;
SELECT streamforge.drop_aggregate('rnd_tumble');
SELECT streamforge.drop_aggregate('rnd_hop');
