--
-- Randomized test of create_aggregate over several measures (issue 29 on
-- issue 27's measures pipelines): after every statement, each aggregate's
-- views equal a plain GROUP BY over the table's matching rows, compared as
-- text (so digits and scale of every avg, variance and standard deviation
-- are PostgreSQL's own).  Statements: multi-row inserts of matching and
-- non-matching rows (bigints up to 2^62, so that sums pass 2^63), inserts
-- rolled back (a subtransaction), progress reports; no data is ever late
-- (the lateness is a day, the events span minutes).
--   - <name>_live = GROUP BY over every matching row;
--   - <name> (the emitted results) = the same GROUP BY over the windows
--     that end at or before the watermark, with final from the watermark.
-- Two aggregates share the table: a tumbling window with a composite key,
-- a WHERE, three measures and a count(*) FILTER; a hopping window with an expression key,
-- another WHERE and every variance.  Deterministic: setseed.
--
SET client_min_messages = warning;
SET TimeZone = 'UTC';
CREATE TABLE rndm (id bigserial PRIMARY KEY, k1 text NOT NULL, k2 integer NOT NULL,
                  status text NOT NULL, v integer NOT NULL, w bigint NOT NULL,
                  q smallint NOT NULL, at timestamptz NOT NULL);

SELECT streamforge.create_aggregate('rndm_tumble', $$
    SELECT k1, k2, count(*) AS c, sum(v) AS s, avg(w) AS a, var_samp(v) AS vs,
           stddev_pop(w) AS sp, min(q) AS mn, max(w) AS mx, sum(w) AS sw,
           count(*) FILTER (WHERE v > 20) AS big
      FROM rndm WHERE status <> 'bad'
     GROUP BY k1, k2, streamforge.tumble(at, interval '10 seconds')
$$, lateness => interval '1 day');
SELECT streamforge.create_aggregate('rndm_hop', $$
    SELECT upper(k1) AS uk, count(v) AS c, var_pop(v) AS vp, variance(q) AS vq,
           stddev(w) AS sd, stddev_samp(v + q) AS sdx, avg(q) AS aq
      FROM rndm WHERE v % 3 <> 0 AND status = 'ok'
     GROUP BY upper(k1), streamforge.hop(at, interval '20 seconds', interval '5 seconds')
$$, lateness => interval '1 day');
-- both are measures pipelines (three and four measures)
SELECT pipeline, pg_catalog.array_length(pg_catalog.string_to_array(value, ','), 1) AS measures
  FROM streamforge.attachments WHERE pipeline LIKE 'rndm%' ORDER BY pipeline;

-- the oracles: plain GROUP BY queries over the table, as text
CREATE FUNCTION pg_temp.wm(p text) RETURNS timestamptz LANGUAGE sql AS $$
    SELECT streamforge.watermark_ts(p) $$;
CREATE VIEW mtumble_oracle AS
SELECT k1, k2, date_bin('10 seconds', at, '1970-01-01+00') AS window_start,
       date_bin('10 seconds', at, '1970-01-01+00') + interval '10 seconds' AS window_end,
       count(*)::text AS c, sum(v)::text AS s, avg(w)::text AS a, var_samp(v)::text AS vs,
       stddev_pop(w)::text AS sp, min(q)::text AS mn, max(w)::text AS mx, sum(w)::text AS sw,
       (count(*) FILTER (WHERE v > 20))::text AS big
  FROM rndm WHERE status <> 'bad'
 GROUP BY k1, k2, date_bin('10 seconds', at, '1970-01-01+00');
CREATE VIEW mtumble_seen AS
SELECT k1, k2, window_start, window_end, c::text, s::text, a::text, vs::text, sp::text,
       mn::text, mx::text, sw::text, big::text
  FROM rndm_tumble_live;
CREATE VIEW mtumble_emitted AS
SELECT k1, k2, window_start, window_end, c::text, s::text, a::text, vs::text, sp::text,
       mn::text, mx::text, sw::text, big::text, final
  FROM rndm_tumble;
CREATE VIEW mhop_oracle AS
SELECT upper(k1) AS uk, ws.ws AS window_start, ws.ws + interval '20 seconds' AS window_end,
       count(v)::text AS c, var_pop(v)::text AS vp, variance(q)::text AS vq,
       stddev(w)::text AS sd, stddev_samp(v + q)::text AS sdx, avg(q)::text AS aq
  FROM rndm,
       LATERAL (SELECT date_bin('5 seconds', at, '1970-01-01+00') - g * interval '5 seconds' AS ws
                  FROM generate_series(0, 3) AS g) AS ws
 WHERE v % 3 <> 0 AND status = 'ok'
 GROUP BY upper(k1), ws.ws;
CREATE VIEW mhop_seen AS
SELECT uk, window_start, window_end, c::text, vp::text, vq::text, sd::text, sdx::text, aq::text
  FROM rndm_hop_live;
CREATE VIEW mhop_emitted AS
SELECT uk, window_start, window_end, c::text, vp::text, vq::text, sd::text, sdx::text, aq::text
  FROM rndm_hop;

-- rows of a view not in its oracle, and of the oracle not in the view
CREATE FUNCTION pg_temp.mismatches() RETURNS bigint LANGUAGE sql AS $$
    SELECT (SELECT count(*) FROM (
                (SELECT * FROM mtumble_seen EXCEPT ALL SELECT * FROM mtumble_oracle)
                UNION ALL
                (SELECT * FROM mtumble_oracle EXCEPT ALL SELECT * FROM mtumble_seen)) AS d)
         + (SELECT count(*) FROM (
                (SELECT * FROM mtumble_emitted
                 EXCEPT ALL SELECT o.*, o.window_end + interval '1 day' < pg_temp.wm('rndm_tumble')
                              FROM mtumble_oracle AS o WHERE o.window_end <= pg_temp.wm('rndm_tumble'))
                UNION ALL
                (SELECT o.*, o.window_end + interval '1 day' < pg_temp.wm('rndm_tumble')
                   FROM mtumble_oracle AS o WHERE o.window_end <= pg_temp.wm('rndm_tumble')
                 EXCEPT ALL SELECT * FROM mtumble_emitted)) AS d)
         + (SELECT count(*) FROM (
                (SELECT * FROM mhop_seen EXCEPT ALL SELECT * FROM mhop_oracle)
                UNION ALL
                (SELECT * FROM mhop_oracle EXCEPT ALL SELECT * FROM mhop_seen)) AS d)
         + (SELECT count(*) FROM (
                (SELECT * FROM mhop_emitted
                 EXCEPT ALL SELECT * FROM mhop_oracle AS o WHERE o.window_end <= pg_temp.wm('rndm_hop'))
                UNION ALL
                (SELECT * FROM mhop_oracle AS o WHERE o.window_end <= pg_temp.wm('rndm_hop')
                 EXCEPT ALL SELECT * FROM mhop_emitted)) AS d)
$$;

CREATE TABLE mlog (step integer, what text, mismatches bigint);
DO $$
DECLARE
    base timestamptz := '2026-11-30 12:00:00+00';
    wm timestamptz := base;
    n integer;
    r double precision;
BEGIN
    PERFORM setseed(0.27);
    FOR step IN 1 .. 150 LOOP
        r := random();
        IF r < 0.55 THEN
            n := 1 + floor(random() * 8)::integer;
            INSERT INTO rndm (k1, k2, status, v, w, q, at)
            SELECT (ARRAY['a', 'b', 'A', 'c'])[1 + floor(random() * 4)::integer],
                   floor(random() * 3)::integer,
                   (ARRAY['ok', 'ok', 'ok', 'bad', 'meh'])[1 + floor(random() * 5)::integer],
                   floor(random() * 200)::integer - 50,
                   CASE WHEN random() < 0.5 THEN floor(random() * 4611686018427387904)::bigint
                        ELSE floor(random() * 2000)::bigint - 1000 END,
                   floor(random() * 64000)::integer - 32000,
                   base + floor(random() * 300) * interval '1 second'
                        + floor(random() * 1000) * interval '1 millisecond'
              FROM generate_series(1, n);
            INSERT INTO mlog VALUES (step, 'insert ' || n, pg_temp.mismatches());
        ELSIF r < 0.70 THEN
            BEGIN
                INSERT INTO rndm (k1, k2, status, v, w, q, at)
                SELECT 'a', 0, 'ok', 1000 + g, g, g, base + g * interval '7 seconds'
                  FROM generate_series(1, 5) AS g;
                RAISE EXCEPTION 'roll back';
            EXCEPTION WHEN raise_exception THEN
                NULL;
            END;
            INSERT INTO mlog VALUES (step, 'rolled back', pg_temp.mismatches());
        ELSE
            wm := wm + floor(random() * 12) * interval '1 second';
            PERFORM count(*) FROM streamforge.advance_ts('rndm_tumble', 'default', wm);
            PERFORM count(*) FROM streamforge.advance_ts('rndm_hop', 'default', wm);
            INSERT INTO mlog VALUES (step, 'advance', pg_temp.mismatches());
        END IF;
    END LOOP;
END
$$;

-- every step agreed, and the run covered enough
SELECT count(*) AS steps, sum(mismatches) AS mismatches,
       count(*) FILTER (WHERE what LIKE 'insert%') AS inserts,
       count(*) FILTER (WHERE what = 'rolled back') AS rollbacks,
       count(*) FILTER (WHERE what = 'advance') AS advances
  FROM mlog;
SELECT count(*) AS table_rows, count(*) FILTER (WHERE status <> 'bad') AS tumble_rows,
       count(*) FILTER (WHERE v % 3 <> 0 AND status = 'ok') AS hop_rows
  FROM rndm;
SELECT (SELECT count(*) FROM rndm_tumble) AS mtumble_emitted,
       (SELECT count(*) FROM rndm_tumble_live) AS tumble_live,
       (SELECT count(*) FROM rndm_hop) AS mhop_emitted,
       (SELECT count(*) FROM rndm_hop_live) AS hop_live;
-- the cases that matter occurred: a sum past 2^63, one-row windows (NULL
-- sample variances), windows of several rows
SELECT (SELECT count(*) FROM rndm_tumble_live WHERE sw > 9223372036854775807) > 0 AS big_sums,
       (SELECT count(*) FROM rndm_tumble_live WHERE vs IS NULL) > 0 AS single_rows,
       (SELECT count(*) FROM rndm_hop_live WHERE vq IS NOT NULL) > 0 AS variances;
-- the engine saw only the matching rows
SELECT (SELECT deliveries FROM streamforge.stats('rndm_tumble')) AS tumble_deliveries,
       (SELECT deliveries FROM streamforge.stats('rndm_hop')) AS hop_deliveries;
DROP VIEW mtumble_seen, mtumble_emitted, mhop_seen, mhop_emitted, mtumble_oracle, mhop_oracle;
SELECT streamforge.drop_aggregate('rndm_tumble');
SELECT streamforge.drop_aggregate('rndm_hop');
DROP TABLE rndm, mlog;
