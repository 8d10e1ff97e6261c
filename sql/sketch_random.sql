--
-- Randomized test of the two sketches (issue 44, items 1 and 6;
-- docs/aggregates.md, "approx_count_distinct" and "Percentiles"):
-- approx_count_distinct and approx_percentile within their stated error
-- on every bucket of every window kind, against SQL's count(DISTINCT) and
-- percentile_disc over the same events (fixed and sliding windows) and
-- against the exact count_distinct and percentile_disc of the same
-- pipeline (every kind, sessions too).  Random traces (setseed: change
-- the seed to explore) of keys whose buckets hold from a few to 2,500
-- distinct values (more than the 1024 of approx_count_distinct's exact
-- form in fixed, sliding and session buckets), values of one magnitude, of twelve (the sketch's 512
-- keys cannot hold them: collapsed), of both signs and of the whole
-- bigint range, in random batches, out of order and late within the
-- lateness, so that emitted rows are corrected and sessions merge.
-- Three pipelines take the same events in three orders:
--   sk1: in arrival order; a random batch now and then is delivered and
--        rolled back (then delivered again); its changelog (retract/upsert
--        with the aggregates) is replayed into a table, which must end
--        equal to visible_aggregates();
--   sk2: by value descending; checkpoint and restore of the same bytes at
--        random points;
--   sk3: in a third random order; at random points a checkpoint is kept
--        and, some batches later, restored (the pipeline goes back) and
--        the batches since delivered again.
-- At the end: every bucket within the error; every approx_percentile
-- state at most 512 words (4 kB); the three pipelines' states (their
-- checkpoint words, "state_var") equal row for row; a checkpoint
-- restores with the same bytes.
-- (Since branch h44b: 13,250 events over event times 0 to 1499, half of
-- the 26,500 over 0 to 2999 before, in batches of up to 750 instead of
-- 1500: the buckets hold as many events as before, there are half as
-- many, and as many calls; the runtime was 108 to 498 s on a loaded
-- machine.  The mutants of scripts/mutants-0.4-sketch44.tsv check that it
-- still fails: docs/mutation.md.)
--
SET synchronous_commit = off;
CREATE SCHEMA sk;
SELECT setseed(0.4402);
-- per key: how many events, the range of u (distinct values), the
-- values v (percentiles)
CREATE TABLE sk.keys (key text, n int, urange int, vkind text);
INSERT INTO sk.keys VALUES
    ('small', 250, 50, 'uniform'),        -- buckets of <= 256 values: exact forms
    ('linear', 2000, 600, 'tiny'),        -- |v| <= 64: one key per integer, exact
    ('latency', 3000, 1100, 'latency'),   -- 1 .. 3000: within 512 keys
    ('wide', 3000, 3000, 'wide'),         -- 1 .. 2.6e10: keys collapsed
    ('signed', 2500, 15000, 'signed'),    -- -1e6 .. 1e6
    ('huge', 2500, 40000, 'huge');        -- the whole bigint range, both signs
CREATE TABLE sk.ev AS
SELECT row_number() OVER (ORDER BY random()) AS o1, key, t, u, v
  FROM (SELECT k.key, floor(random() * 1500)::bigint AS t,
               floor(random() * k.urange)::bigint AS u,
               CASE k.vkind
                 WHEN 'uniform' THEN floor(random() * 1000)::bigint
                 WHEN 'tiny' THEN floor(random() * 129)::bigint - 64
                 WHEN 'latency' THEN floor(exp(random() * 8))::bigint
                 WHEN 'wide' THEN floor(exp(random() * 24))::bigint
                 WHEN 'signed' THEN floor((random() - 0.5) * 2e6)::bigint
                 ELSE floor((random() - 0.5) * 1.8e19)::bigint
               END AS v
          FROM sk.keys k, LATERAL generate_series(1, k.n) AS i) x;
ALTER TABLE sk.ev ADD COLUMN o2 bigint, ADD COLUMN o3 bigint;
UPDATE sk.ev e SET o2 = r.o2, o3 = r.o3
  FROM (SELECT o1, row_number() OVER (ORDER BY v DESC, o1) AS o2,
               row_number() OVER (ORDER BY md5(o1::text)) AS o3 FROM sk.ev) r
 WHERE e.o1 = r.o1;
CREATE INDEX ON sk.ev (o1); CREATE INDEX ON sk.ev (o2); CREATE INDEX ON sk.ev (o3);
SELECT count(*) AS events, count(DISTINCT (key, u)) > 5000 AS many_distinct FROM sk.ev;

SELECT streamforge.create_pipeline(n, ARRAY['p0'],
    ARRAY[streamforge.fixed('f', 1000), streamforge.sliding('s', 1000, 250),
          streamforge.session('g', 30)],
    lateness => 5000, measures => ARRAY['u', 'v'],
    aggregates => ARRAY['count', 'min(v) AS mn', 'max(v) AS mx',
                        'approx_count_distinct(u) AS acd', 'count_distinct(u) AS cd',
                        'approx_percentile(v, 0.01) AS a01', 'approx_percentile(v, 0.5) AS a50',
                        'approx_percentile(v, 0.99) AS a99',
                        'percentile_disc(v, 0.01) AS d01', 'percentile_disc(v, 0.5) AS d50',
                        'percentile_disc(v, 0.99) AS d99'])
  FROM unnest(ARRAY['sk1', 'sk2', 'sk3']) AS n;

-- sk1's changelog (retract/upsert with the aggregates), and its replay
SELECT streamforge.configure_outputs('sk1', changelog => true, results => false,
                                     late => false, notify => false);
CREATE TABLE sk.log (pipeline text, what text, at_event bigint);

-- deliver the events of order ord from first to last (inclusive)
CREATE FUNCTION sk.deliver(p text, ord text, first bigint, last bigint)
RETURNS SETOF streamforge.measures_change LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format($q$
        SELECT * FROM streamforge.ingest_measures_batch(%L, ARRAY(
            SELECT ROW('p0', %I - 1, 'e' || o1, key, t, ARRAY[u, v])::streamforge.measures_delivery
              FROM sk.ev WHERE %I BETWEEN %s AND %s ORDER BY %I))$q$,
        p, ord, ord, first, last, ord);
END $$;

CREATE FUNCTION sk.feed(p text, ord text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    total bigint := (SELECT count(*) FROM sk.ev);
    at bigint := 0;             -- events delivered
    calls bigint := 0;
    batch int;
    kept bytea;                 -- sk3: a checkpoint to go back to
    kept_at bigint;
    wm bigint;
    c bytea;
BEGIN
    WHILE at < total LOOP
        batch := 1 + floor(random() * 750)::int;
        IF p = 'sk1' AND random() < 0.1 THEN
            -- delivered, then rolled back: nothing of it stays
            BEGIN
                PERFORM count(*) FROM sk.deliver(p, ord, at + 1, at + batch);
                RAISE EXCEPTION 'roll back';
            EXCEPTION WHEN raise_exception THEN
                INSERT INTO sk.log VALUES (p, 'rollback', at);
            END;
        END IF;
        calls := calls + 1;
        PERFORM count(*) FROM sk.deliver(p, ord, at + 1, at + batch);
        at := least(at + batch, total);
        -- the watermark follows the share delivered (the events are in
        -- random time order): windows are emitted, then corrected by the
        -- events that come later
        wm := floor(1500.0 * at / total)::bigint - 150;
        IF wm > coalesce(streamforge.watermark(p), -1) THEN
            PERFORM streamforge.advance(p, 'p0', wm);
        END IF;
        IF p = 'sk2' AND random() < 0.2 THEN
            c := streamforge.checkpoint(p);
            PERFORM streamforge.restore(p, c);
            IF streamforge.checkpoint(p) <> c THEN
                RAISE EXCEPTION 'restore of % changed the bytes', p;
            END IF;
            INSERT INTO sk.log VALUES (p, 'restore', at);
        END IF;
        IF p = 'sk3' THEN
            IF kept IS NOT NULL AND random() < 0.3 THEN
                PERFORM streamforge.restore(p, kept);
                INSERT INTO sk.log VALUES (p, 'back', kept_at);
                at := kept_at;
                kept := NULL;
            ELSIF kept IS NULL AND random() < 0.2 THEN
                kept := streamforge.checkpoint(p);
                kept_at := at;
            END IF;
        END IF;
    END LOOP;
    RETURN calls;
END $$;
SELECT sk.feed('sk1', 'o1') > 0 AS fed;
SELECT sk.feed('sk2', 'o2') > 0 AS fed;
SELECT sk.feed('sk3', 'o3') > 0 AS fed;
-- the random points happened
SELECT pipeline, what, count(*) > 0 AS happened FROM sk.log GROUP BY 1, 2 ORDER BY 1, 2;

-- sk1's changelog replayed: per row address, every retract names the row
-- as the change before it (an upsert) made it, and the last change of
-- each address that is still visible is an upsert with its values
CREATE TABLE sk.cl AS
SELECT seq, op, window_name, key, window_start AS ws, window_end AS we, count, aggregates,
       lag(op) OVER w AS prev_op, lag(count) OVER w AS prev_count,
       lag(aggregates) OVER w AS prev_aggregates,
       row_number() OVER (PARTITION BY window_name, key, window_start, window_end ORDER BY seq DESC) AS from_last
  FROM streamforge.changelog WHERE pipeline = 'sk1'
WINDOW w AS (PARTITION BY window_name, key, window_start, window_end ORDER BY seq);
SELECT count(*) > 0 AS replayed,
       count(*) FILTER (WHERE op = 'retract') > 0 AS retractions,
       count(*) FILTER (WHERE op = 'retract' AND (prev_op IS DISTINCT FROM 'upsert'
                        OR (count, aggregates) IS DISTINCT FROM (prev_count, prev_aggregates))) AS retract_wrong,
       count(*) FILTER (WHERE op = 'upsert' AND prev_op = 'upsert') AS upsert_without_retract
  FROM sk.cl;
SELECT count(*) AS visible_rows,
       count(*) FILTER (WHERE r.key IS NULL OR v.key IS NULL
                        OR (r.count, r.aggregates) IS DISTINCT FROM (v.count, v.aggregates)) AS replay_differs
  FROM streamforge.visible_aggregates('sk1') v
  FULL JOIN (SELECT * FROM sk.cl WHERE from_last = 1 AND op = 'upsert') r
    ON (r.window_name, r.key, r.ws, r.we) = (v.window_name, v.key, v.window_start, v.window_end);

-- the buckets of the three pipelines
CREATE TABLE sk.b AS
SELECT n AS pipeline, l.window_name, l.key, l.window_start AS ws, l.window_end AS we, l.count,
       (l.aggregates ->> 'mn')::bigint AS mn, (l.aggregates ->> 'mx')::bigint AS mx,
       (l.aggregates ->> 'acd')::bigint AS acd, (l.aggregates ->> 'cd')::bigint AS cd,
       p.p, (l.aggregates ->> ('a' || p.s))::float8 AS approx, (l.aggregates ->> ('d' || p.s))::bigint AS exact
  FROM unnest(ARRAY['sk1', 'sk2', 'sk3']) AS n, streamforge.live_aggregates(n) l,
       (VALUES (0.01, '01'), (0.5, '50'), (0.99, '99')) AS p(p, s);

-- fixed and sliding windows against SQL over the same events
CREATE TABLE sk.sql AS
SELECT w.window_name, e.key, w.ws, count(*) AS count, count(DISTINCT e.u) AS cd,
       percentile_disc(0.01) WITHIN GROUP (ORDER BY e.v) AS d01,
       percentile_disc(0.5) WITHIN GROUP (ORDER BY e.v) AS d50,
       percentile_disc(0.99) WITHIN GROUP (ORDER BY e.v) AS d99
  FROM sk.ev e,
       LATERAL (SELECT 'f' AS window_name, floor(e.t / 1000.0)::bigint * 1000 AS ws
                UNION ALL
                SELECT 's', s FROM generate_series(floor(e.t / 250.0)::bigint * 250 - 750,
                                                   floor(e.t / 250.0)::bigint * 250, 250) AS s) w
 GROUP BY 1, 2, 3;
SELECT b.pipeline, b.window_name, count(*) AS buckets,
       count(*) FILTER (WHERE s.key IS NULL OR b.count <> s.count OR b.cd <> s.cd
                        OR b.exact <> CASE b.p WHEN 0.01 THEN s.d01 WHEN 0.5 THEN s.d50 ELSE s.d99 END) AS exact_wrong
  FROM sk.b b LEFT JOIN sk.sql s ON (s.window_name, s.key, s.ws) = (b.window_name, b.key, b.ws)
 WHERE b.window_name IN ('f', 's')
 GROUP BY 1, 2 ORDER BY 1, 2;
SELECT count(*) AS sql_buckets FROM sk.sql;

-- approx_count_distinct: exact up to 1024 distinct values, beyond within
-- 4 standard errors (4 * 0.81%)
SELECT pipeline, window_name, count(*) AS buckets,
       count(*) FILTER (WHERE cd <= 1024 AND acd <> cd) AS exact_range_wrong,
       count(*) FILTER (WHERE cd > 1024) > 0 AS has_sketch_range,
       count(*) FILTER (WHERE cd > 1024 AND abs(acd::numeric / cd - 1) > 0.0324) AS beyond_4_sigma
  FROM sk.b WHERE p = 0.5 GROUP BY 1, 2 ORDER BY 1, 2;

-- approx_percentile: the key of a value (agg_quantile.c, dd_key: the same
-- double precision operations as the C code)
CREATE FUNCTION sk.dd_key(v bigint) RETURNS int LANGUAGE sql IMMUTABLE AS $$
    SELECT sign(v)::int * CASE WHEN abs(v::numeric) <= 64 THEN abs(v::numeric)::int
        ELSE 65 + ceil(ln(abs(v::numeric)::float8) / ln((1.0::float8 + 0.01::float8) / (1.0::float8 - 0.01::float8)))::int
                - ceil(ln(65::float8) / ln((1.0::float8 + 0.01::float8) / (1.0::float8 - 0.01::float8)))::int END
$$;
-- exact up to 256 values; beyond, within 1% of the true value when its
-- key is one of the 512 highest from the bucket's largest value's key
-- down; a value in a collapsed key (below them) is estimated too high
SELECT pipeline, window_name, count(*) AS estimates,
       count(*) FILTER (WHERE count <= 256 AND approx <> exact) AS exact_range_wrong,
       count(*) FILTER (WHERE count > 256) > 0 AS has_sketch_range,
       count(*) FILTER (WHERE count > 256 AND sk.dd_key(exact) >= sk.dd_key(mx) - 511
                        AND abs(approx - exact) > 0.01 * abs(exact) * (1 + 1e-12)) AS beyond_1_percent,
       count(*) FILTER (WHERE count > 256 AND sk.dd_key(exact) < sk.dd_key(mx) - 511) > 0 AS has_collapsed,
       count(*) FILTER (WHERE count > 256 AND sk.dd_key(exact) < sk.dd_key(mx) - 511
                        AND approx <= exact) AS collapsed_not_above
  FROM sk.b GROUP BY 1, 2 ORDER BY 1, 2;

-- the states in the checkpoints: the same words in the three pipelines,
-- approx_percentile's at most 512 words (4 kB) each
CREATE TABLE sk.words AS
SELECT n AS pipeline, w ->> 'window_name' AS window_name, w ->> 'key' AS key,
       w ->> 'window_start' AS ws, w -> 'state_var' AS state_var
  FROM unnest(ARRAY['sk1', 'sk2', 'sk3']) AS n,
       jsonb_array_elements(streamforge.inspect_checkpoint(streamforge.checkpoint(n)) -> 'windows') AS w;
SELECT a.pipeline, count(*) AS rows_compared,
       count(*) FILTER (WHERE a.state_var IS DISTINCT FROM b.state_var) AS different_words
  FROM sk.words a FULL JOIN sk.words b
    ON (a.window_name, a.key, a.ws) = (b.window_name, b.key, b.ws) AND b.pipeline = 'sk1'
 WHERE a.pipeline <> 'sk1' GROUP BY 1 ORDER BY 1;
-- state_var: one array per variable-size aggregate in declaration order
-- (acd, cd, a01, a50, a99, d01, d50, d99)
SELECT max(greatest(jsonb_array_length(state_var -> 2), jsonb_array_length(state_var -> 3),
                    jsonb_array_length(state_var -> 4))) AS most_sketch_words,
       count(*) FILTER (WHERE jsonb_array_length(state_var -> 2) > 256) > 0 AS some_sketches,
       max(jsonb_array_length(state_var -> 7)) > 2000 AS exact_states_larger
  FROM sk.words WHERE pipeline = 'sk1';

-- a checkpoint restores with the same bytes
CREATE TABLE sk.ck AS SELECT streamforge.checkpoint('sk3') AS c;
SELECT streamforge.restore('sk3', (SELECT c FROM sk.ck));
SELECT streamforge.checkpoint('sk3') = (SELECT c FROM sk.ck) AS same_bytes;

SELECT streamforge.drop_pipeline(n) FROM unnest(ARRAY['sk1', 'sk2', 'sk3']) AS n;
DROP SCHEMA sk CASCADE;
