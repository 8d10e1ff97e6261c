--
-- Randomized test of create_aggregate over nullable columns and FILTER
-- (issue 38, defect 5), with PostgreSQL itself as the reference: random
-- tables whose nullable columns are NULL with a probability of the round
-- (0, 0.3 or 0.9), random multi-row INSERTs whose rows cross window
-- boundaries (out_of_orderness makes windows ready in the middle of a
-- statement), rolled-back inserts; after every statement each aggregate's
-- _live view equals the same GROUP BY over the table, and its results view
-- the windows that end at or before the watermark, compared as text (the
-- digits and scale of every avg, variance and standard deviation are
-- PostgreSQL's own).  Four aggregates per round: a tumbling window with
-- every aggregate, nullable arguments and FILTERs; a session window (a row
-- whose arguments are NULL still extends its session, as in SQL); a hopping
-- window with an expression key; one sum of a nullable column alone.
--
-- SF_NULLABLE_SEED (default 1) is the first seed, SF_NULLABLE_ROUNDS
-- (default 3) the rounds; a round's seed decides it whole.  A mismatch
-- lists its seed and step below; replay it alone with
-- SF_NULLABLE_SEED=<seed> SF_NULLABLE_ROUNDS=1.
--
\getenv sf_nullable_seed SF_NULLABLE_SEED
\getenv sf_nullable_rounds SF_NULLABLE_ROUNDS
\if :{?sf_nullable_seed}
\else
\set sf_nullable_seed 1
\endif
\if :{?sf_nullable_rounds}
\else
\set sf_nullable_rounds 3
\endif
SET client_min_messages = warning;
SET TimeZone = 'UTC';
CREATE TABLE rnl_log (seed integer, step integer, what text, mismatches bigint,
                      detail text);

CREATE FUNCTION pg_temp.wm(p text) RETURNS timestamptz LANGUAGE sql AS $$
    SELECT streamforge.watermark_ts(p) $$;

-- the oracles: the aggregates' queries evaluated by PostgreSQL, as text
CREATE FUNCTION pg_temp.make_round() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    CREATE TABLE rnl (id bigserial PRIMARY KEY, k text NOT NULL, a integer, b bigint,
                      c smallint NOT NULL, f boolean, at timestamptz NOT NULL);
    PERFORM streamforge.create_aggregate('rnl_tumble', $q$
        SELECT k, count(*) AS n, count(a) AS ca, sum(a) AS sa, avg(b) AS ab,
               min(a) AS mna, max(b) AS mxb, var_samp(a) AS vs, stddev_pop(b) AS sp,
               var_pop(a) AS vp, stddev_samp(b) AS ss,
               sum(a) FILTER (WHERE f) AS sf, count(b) FILTER (WHERE a > 0 OR f) AS cf,
               max(c) FILTER (WHERE b IS NULL) AS mf, count(*) FILTER (WHERE a > b) AS cab,
               sum(COALESCE(a, c)) AS sc, avg(CASE WHEN f THEN a END) AS acase,
               min(a + c) FILTER (WHERE c > 0) AS mac
          FROM rnl
         GROUP BY k, streamforge.tumble(at, interval '10 seconds')
    $q$, lateness => interval '1 day', out_of_orderness => interval '3 seconds');
    PERFORM streamforge.create_aggregate('rnl_session', $q$
        SELECT k, count(*) AS n, sum(a) AS sa, count(b) AS cb, min(b) AS mnb,
               variance(a) FILTER (WHERE NOT f) AS va
          FROM rnl
         GROUP BY k, streamforge.session(at, interval '7 seconds')
    $q$, lateness => interval '1 day', out_of_orderness => interval '3 seconds');
    PERFORM streamforge.create_aggregate('rnl_hop', $q$
        SELECT upper(k) AS uk, count(a) AS ca, avg(a) AS aa, stddev(b) AS sb,
               max(a) FILTER (WHERE c > 0) AS mxa
          FROM rnl WHERE c <> 7
         GROUP BY upper(k), streamforge.hop(at, interval '20 seconds', interval '5 seconds')
    $q$, lateness => interval '1 day', out_of_orderness => interval '3 seconds');
    PERFORM streamforge.create_aggregate('rnl_one', $q$
        SELECT k, sum(b) AS sb
          FROM rnl
         GROUP BY k, streamforge.tumble(at, interval '15 seconds')
    $q$, lateness => interval '1 day', out_of_orderness => interval '3 seconds');

    CREATE TEMP VIEW rnl_tumble_oracle AS
    SELECT k, date_bin('10 seconds', at, '1970-01-01+00') AS window_start,
           date_bin('10 seconds', at, '1970-01-01+00') + interval '10 seconds' AS window_end,
           count(*)::text AS n, count(a)::text AS ca, sum(a)::text AS sa, avg(b)::text AS ab,
           min(a)::text AS mna, max(b)::text AS mxb, var_samp(a)::text AS vs,
           stddev_pop(b)::text AS sp, var_pop(a)::text AS vp, stddev_samp(b)::text AS ss,
           (sum(a) FILTER (WHERE f))::text AS sf,
           (count(b) FILTER (WHERE a > 0 OR f))::text AS cf,
           (max(c) FILTER (WHERE b IS NULL))::text AS mf,
           (count(*) FILTER (WHERE a > b))::text AS cab,
           sum(COALESCE(a, c))::text AS sc, avg(CASE WHEN f THEN a END)::text AS acase,
           (min(a + c) FILTER (WHERE c > 0))::text AS mac
      FROM rnl GROUP BY k, date_bin('10 seconds', at, '1970-01-01+00');
    CREATE TEMP VIEW rnl_tumble_seen AS
    SELECT k, window_start, window_end, n::text, ca::text, sa::text, ab::text, mna::text,
           mxb::text, vs::text, sp::text, vp::text, ss::text, sf::text, cf::text, mf::text,
           cab::text, sc::text, acase::text, mac::text
      FROM rnl_tumble_live;
    CREATE TEMP VIEW rnl_tumble_emitted AS
    SELECT k, window_start, window_end, n::text, ca::text, sa::text, ab::text, mna::text,
           mxb::text, vs::text, sp::text, vp::text, ss::text, sf::text, cf::text, mf::text,
           cab::text, sc::text, acase::text, mac::text
      FROM rnl_tumble;

    -- sessions: per key, a row more than the gap after the previous one
    -- starts a new session; [first, last + gap)
    CREATE TEMP VIEW rnl_session_oracle AS
    WITH e AS (
        SELECT *, CASE WHEN at > lag(at) OVER w + interval '7 seconds'
                       OR lag(at) OVER w IS NULL THEN 1 ELSE 0 END AS brk
          FROM rnl WINDOW w AS (PARTITION BY k ORDER BY at, id)),
    s AS (SELECT *, sum(brk) OVER (PARTITION BY k ORDER BY at, id) AS sid FROM e)
    SELECT k, min(at) AS window_start, max(at) + interval '7 seconds' AS window_end,
           count(*)::text AS n, sum(a)::text AS sa, count(b)::text AS cb,
           min(b)::text AS mnb, (variance(a) FILTER (WHERE NOT f))::text AS va
      FROM s GROUP BY k, sid;
    CREATE TEMP VIEW rnl_session_seen AS
    SELECT k, window_start, window_end, n::text, sa::text, cb::text, mnb::text, va::text
      FROM rnl_session_live;
    CREATE TEMP VIEW rnl_session_emitted AS
    SELECT k, window_start, window_end, n::text, sa::text, cb::text, mnb::text, va::text
      FROM rnl_session;

    CREATE TEMP VIEW rnl_hop_oracle AS
    SELECT upper(k) AS uk, ws.ws AS window_start, ws.ws + interval '20 seconds' AS window_end,
           count(a)::text AS ca, avg(a)::text AS aa, stddev(b)::text AS sb,
           (max(a) FILTER (WHERE c > 0))::text AS mxa
      FROM rnl,
           LATERAL (SELECT date_bin('5 seconds', at, '1970-01-01+00') - g * interval '5 seconds' AS ws
                      FROM generate_series(0, 3) AS g) AS ws
     WHERE c <> 7
     GROUP BY upper(k), ws.ws;
    CREATE TEMP VIEW rnl_hop_seen AS
    SELECT uk, window_start, window_end, ca::text, aa::text, sb::text, mxa::text FROM rnl_hop_live;
    CREATE TEMP VIEW rnl_hop_emitted AS
    SELECT uk, window_start, window_end, ca::text, aa::text, sb::text, mxa::text FROM rnl_hop;

    CREATE TEMP VIEW rnl_one_oracle AS
    SELECT k, date_bin('15 seconds', at, '1970-01-01+00') AS window_start,
           date_bin('15 seconds', at, '1970-01-01+00') + interval '15 seconds' AS window_end,
           sum(b)::text AS sb
      FROM rnl GROUP BY k, date_bin('15 seconds', at, '1970-01-01+00');
    CREATE TEMP VIEW rnl_one_seen AS
    SELECT k, window_start, window_end, sb::text FROM rnl_one_live;
    CREATE TEMP VIEW rnl_one_emitted AS
    SELECT k, window_start, window_end, sb::text FROM rnl_one;
END
$$;

CREATE FUNCTION pg_temp.drop_round() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    DROP VIEW rnl_tumble_oracle, rnl_tumble_seen, rnl_tumble_emitted,
              rnl_session_oracle, rnl_session_seen, rnl_session_emitted,
              rnl_hop_oracle, rnl_hop_seen, rnl_hop_emitted,
              rnl_one_oracle, rnl_one_seen, rnl_one_emitted;
    PERFORM streamforge.drop_aggregate(n)
       FROM unnest(ARRAY['rnl_tumble', 'rnl_session', 'rnl_hop', 'rnl_one']) AS n;
    DROP TABLE rnl;
END
$$;

-- rows of a view not in its oracle and of the oracle not in the view
-- (live: every window; emitted: those that end at or before the
-- watermark), and the name of the first aggregate that differs
CREATE FUNCTION pg_temp.mismatches(OUT n bigint, OUT which text) LANGUAGE plpgsql AS $$
DECLARE
    agg text;
    c bigint;
BEGIN
    n := 0;
    FOREACH agg IN ARRAY ARRAY['rnl_tumble', 'rnl_session', 'rnl_hop', 'rnl_one'] LOOP
        EXECUTE format($f$
            SELECT (SELECT count(*) FROM (
                        (SELECT * FROM %1$I_seen EXCEPT ALL SELECT * FROM %1$I_oracle)
                        UNION ALL
                        (SELECT * FROM %1$I_oracle EXCEPT ALL SELECT * FROM %1$I_seen)) AS d)
                 + (SELECT count(*) FROM (
                        (SELECT * FROM %1$I_emitted
                         EXCEPT ALL SELECT * FROM %1$I_oracle AS o WHERE o.window_end <= pg_temp.wm(%1$L))
                        UNION ALL
                        (SELECT * FROM %1$I_oracle AS o WHERE o.window_end <= pg_temp.wm(%1$L)
                         EXCEPT ALL SELECT * FROM %1$I_emitted)) AS d)$f$, agg) INTO c;
        IF c > 0 AND which IS NULL THEN
            which := agg;
        END IF;
        n := n + c;
    END LOOP;
END
$$;

CREATE PROCEDURE pg_temp.run(first integer, rounds integer) LANGUAGE plpgsql AS $$
DECLARE
    base timestamptz;
    nullp double precision;
    nrows integer;
    m record;
    r double precision;
BEGIN
    FOR seed IN first .. first + rounds - 1 LOOP
        PERFORM setseed(((seed * 7919) % 10007) / 10007.0);
        nullp := (ARRAY[0, 0.3, 0.9])[1 + seed % 3];
        base := '2026-11-30 12:00:00+00'::timestamptz + seed * interval '1 hour';
        PERFORM pg_temp.make_round();
        FOR step IN 1 .. 14 LOOP
            r := random();
            IF r < 0.8 THEN
                -- rows a little out of order, spread over several windows
                nrows := 1 + floor(random() * 10)::integer;
                INSERT INTO rnl (k, a, b, c, f, at)
                SELECT (ARRAY['a', 'b', 'A'])[1 + floor(random() * 3)::integer],
                       CASE WHEN random() < nullp THEN NULL ELSE floor(random() * 200)::integer - 60 END,
                       CASE WHEN random() < nullp THEN NULL
                            WHEN random() < 0.3 THEN floor(random() * 4611686018427387904)::bigint
                            ELSE floor(random() * 2000)::bigint - 1000 END,
                       floor(random() * 15)::integer - 3,
                       CASE WHEN random() < nullp THEN NULL ELSE random() < 0.5 END,
                       base + (step * 4 + floor(random() * 12) - 4) * interval '1 second'
                            + floor(random() * 1000) * interval '1 millisecond'
                  FROM generate_series(1, nrows);
                SELECT * INTO m FROM pg_temp.mismatches();
                INSERT INTO rnl_log VALUES (seed, step, 'insert ' || nrows, m.n, m.which);
            ELSE
                BEGIN
                    INSERT INTO rnl (k, a, b, c, f, at)
                    SELECT 'a', NULL, g, 1, NULL, base + g * interval '9 seconds'
                      FROM generate_series(1, 4) AS g;
                    RAISE EXCEPTION 'roll back';
                EXCEPTION WHEN raise_exception THEN
                    NULL;
                END;
                SELECT * INTO m FROM pg_temp.mismatches();
                INSERT INTO rnl_log VALUES (seed, step, 'rolled back', m.n, m.which);
            END IF;
        END LOOP;
        -- the round's coverage: NULL-only aggregates, emitted windows
        INSERT INTO rnl_log
        SELECT seed, 0, 'coverage',
               (SELECT count(*) FROM rnl_tumble_live WHERE sa IS NULL),
               format('emitted %s, null sums %s, rows %s',
                      (SELECT count(*) FROM rnl_tumble), (SELECT count(*) FROM rnl_tumble_live WHERE sa IS NULL),
                      (SELECT count(*) FROM rnl));
        PERFORM pg_temp.drop_round();
        COMMIT;
    END LOOP;
END
$$;
CALL pg_temp.run(:sf_nullable_seed, :sf_nullable_rounds);

-- every step of every round agreed with PostgreSQL (a failure lists its
-- seed, step and the first aggregate that differed)
SELECT seed, step, what, mismatches, detail FROM rnl_log
 WHERE step > 0 AND mismatches > 0 ORDER BY seed, step LIMIT 20;
-- and the runs covered what matters: rounds with and without NULLs,
-- all-NULL sums (in three rounds or more), emitted windows
SELECT count(DISTINCT seed) >= least(:sf_nullable_rounds, 3) AS rounds,
       count(*) FILTER (WHERE step > 0) >= 14 * least(:sf_nullable_rounds, 3) AS steps,
       (sum(mismatches) FILTER (WHERE what = 'coverage') > 0
        OR :sf_nullable_rounds < 3) AS null_only_sums,
       bool_and(detail NOT LIKE 'emitted 0,%') FILTER (WHERE what = 'coverage') AS emitted
  FROM rnl_log;
DROP TABLE rnl_log;
