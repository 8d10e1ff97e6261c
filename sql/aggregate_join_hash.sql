-- A join on one column probes a hash index of the dimension on that column
-- if it has one (issue 47 item 4, docs/joins.md "Cost"); the unique index
-- still makes the row unique.  A hash index holds hash codes: bigint keys
-- whose halves XOR to the same value have the same code (hashint8), so
-- the probe must compare the key of every row it finds.  Which index a
-- statement probed is seen in pg_locks (the lookup locks it for the
-- transaction).  Each view is compared with the plain SQL join.
SET client_min_messages = warning;
SET TimeZone = 'UTC';
-- 4, 4294967301 (2^32 + 5) and 8589934598 (2^33 + 6): the same hash code
SELECT hashint8(4) = hashint8(4294967301) AND hashint8(4) = hashint8(8589934598) AS collide;
CREATE TABLE hj_dim (k bigint PRIMARY KEY, section text NOT NULL);
INSERT INTO hj_dim VALUES (4, 'four'), (4294967301, 'big'), (7, 'seven');
CREATE INDEX hj_dim_k ON hj_dim USING hash (k);
-- the event's key is an integer column for one aggregate (a cross-type
-- equality, int8 = int4, in both operator families), bigint for the other
CREATE TABLE hj_ev (id integer PRIMARY KEY, k bigint, k4 integer,
                    amount integer NOT NULL, at timestamptz NOT NULL);
CREATE FUNCTION hj_make() RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
    PERFORM streamforge.create_aggregate('hj_inner', $$
        SELECT d.section, count(*) AS n, sum(e.amount) AS total
          FROM hj_ev e JOIN hj_dim d ON d.k = e.k
         GROUP BY d.section, streamforge.tumble(e.at, interval '1 minute') $$);
    PERFORM streamforge.create_aggregate('hj_left', $$
        SELECT d.section, count(*) AS n, sum(e.amount) AS total
          FROM hj_ev e LEFT JOIN hj_dim d ON d.k = e.k4
         GROUP BY d.section, streamforge.tumble(e.at, interval '1 minute') $$);
END $f$;
SELECT hj_make();
CREATE FUNCTION hj_diff() RETURNS TABLE (agg text, side text, section text,
    window_start timestamptz, n bigint, total numeric) LANGUAGE sql AS $$
    WITH got AS (SELECT 'inner' AS agg, section, window_start, n, total FROM hj_inner_live
                 UNION ALL
                 SELECT 'left', section, window_start, n, total FROM hj_left_live),
         want AS (SELECT 'inner' AS agg, d.section,
                         streamforge.tumble(e.at, interval '1 minute') AS window_start,
                         count(*) AS n, sum(e.amount) AS total
                    FROM hj_ev e JOIN hj_dim d ON d.k = e.k GROUP BY 1, 2, 3
                  UNION ALL
                  SELECT 'left', d.section, streamforge.tumble(e.at, interval '1 minute'),
                         count(*), sum(e.amount)
                    FROM hj_ev e LEFT JOIN hj_dim d ON d.k = e.k4 GROUP BY 1, 2, 3)
    (SELECT agg, 'agg', section, window_start, n, total FROM got
     EXCEPT SELECT agg, 'agg', section, window_start, n, total FROM want)
    UNION ALL
    (SELECT agg, 'ref', section, window_start, n, total FROM want
     EXCEPT SELECT agg, 'ref', section, window_start, n, total FROM got) $$;
-- the indexes of a table that this transaction holds locks on
CREATE FUNCTION hj_locked(t regclass DEFAULT 'hj_dim') RETURNS SETOF text LANGUAGE sql AS $$
    SELECT DISTINCT c.relname::text FROM pg_locks l JOIN pg_index i ON i.indexrelid = l.relation
           JOIN pg_class c ON c.oid = i.indexrelid
     WHERE l.pid = pg_backend_pid() AND l.locktype = 'relation' AND i.indrelid = t
     ORDER BY 1 $$;

-- 1. colliding keys: 4 and 4294967301 find their own rows, 8589934598
-- (no row, the same code) none; as integers (hj_left), 4 and 7 and a
-- missing 5
BEGIN;
INSERT INTO hj_ev VALUES
    (1, 4, 4, 1, '2026-12-01 12:00:01'),
    (2, 4294967301, 7, 10, '2026-12-01 12:00:02'),
    (3, 8589934598, 5, 100, '2026-12-01 12:00:03'),
    (4, 4294967301, 4, 1000, '2026-12-01 12:00:04'),
    (5, 4, 7, 10000, '2026-12-01 12:00:05');
SELECT * FROM hj_locked();
COMMIT;
-- four: 1, 5 (10001); big: 2, 4 (1010); event 3 dropped.  By k4: four: 1,
-- 4 (1001); seven: 2, 5 (10010); NULL: 3 (100)
SELECT section, n, total FROM hj_inner_live ORDER BY 1;
SELECT section, n, total FROM hj_left_live ORDER BY 1;
SELECT * FROM hj_diff();
SELECT pipeline, probes, misses, dropped FROM streamforge.join_stats()
 WHERE pipeline LIKE 'hj_%' ORDER BY 1;

-- 2. the dimension changes: an update of the row of a colliding key (a
-- HOT update, the same key), a delete, the missing key inserted; events
-- 6 (4, 5: dropped, five), 7 (BIG, NULL) and 8 (bigger, seven)
UPDATE hj_dim SET section = 'BIG' WHERE k = 4294967301;
DELETE FROM hj_dim WHERE k = 4;
INSERT INTO hj_dim VALUES (8589934598, 'bigger'), (5, 'five');
INSERT INTO hj_ev VALUES
    (6, 4, 5, 1, '2026-12-01 12:00:06'),
    (7, 4294967301, 4, 2, '2026-12-01 12:00:07'),
    (8, 8589934598, 7, 4, '2026-12-01 12:00:08');
SELECT section, n, total FROM hj_inner_live ORDER BY 1;
SELECT section, n, total FROM hj_left_live ORDER BY 1;

-- 3. no usable hash index: a partial one is not used, the btree is
TRUNCATE hj_ev;
SELECT streamforge.drop_aggregate('hj_inner'), streamforge.drop_aggregate('hj_left');
SELECT hj_make();
DROP INDEX hj_dim_k;
CREATE INDEX hj_dim_k_partial ON hj_dim USING hash (k) WHERE section <> 'x';
BEGIN;
INSERT INTO hj_ev VALUES (11, 4294967301, 5, 1, '2026-12-01 12:01:01'),
                         (12, 8589934598, 4, 2, '2026-12-01 12:01:02');
SELECT * FROM hj_locked();
COMMIT;
-- a hash index created between statements is used by the next one
DROP INDEX hj_dim_k_partial;
CREATE INDEX hj_dim_k ON hj_dim USING hash (k);
BEGIN;
INSERT INTO hj_ev VALUES (13, 4294967301, 7, 4, '2026-12-01 12:01:03');
SELECT * FROM hj_locked();
COMMIT;
SELECT * FROM hj_diff();

-- 4. a statement that fails after its probes (a statement trigger that
-- fires after streamforge's), in a savepoint: its scan of the hash index
-- is closed, the index can be dropped in the same transaction, and the
-- next insert probes the btree
CREATE FUNCTION hj_fail() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('hj.fail', true) = 'on' THEN
        RAISE EXCEPTION 'failed after the probes';
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER zz_fail AFTER INSERT ON hj_ev FOR EACH STATEMENT EXECUTE FUNCTION hj_fail();
BEGIN;
SAVEPOINT a;
SET LOCAL hj.fail = on;
INSERT INTO hj_ev VALUES (14, 5, 5, 1, '2026-12-01 12:01:04'), (16, 4294967301, 5, 1, '2026-12-01 12:01:05');
ROLLBACK TO SAVEPOINT a;
INSERT INTO hj_ev VALUES (14, 5, 5, 8, '2026-12-01 12:01:04');
DROP INDEX hj_dim_k;
INSERT INTO hj_ev VALUES (15, 8589934598, 8, 16, '2026-12-01 12:01:06');
COMMIT;
SELECT section, n, total FROM hj_inner_live ORDER BY 1;
SELECT * FROM hj_diff();

-- 5. text keys (a collation), the same through a hash index
CREATE TABLE hj_tdim (name text PRIMARY KEY, grp text NOT NULL);
CREATE INDEX ON hj_tdim USING hash (name);
INSERT INTO hj_tdim SELECT 'n' || g, 'g' || (g % 3) FROM generate_series(1, 50) AS g;
CREATE TABLE hj_tev (id integer PRIMARY KEY, name text, at timestamptz NOT NULL);
SELECT streamforge.create_aggregate('hj_text', $$
    SELECT d.grp, count(*) AS n
      FROM hj_tev e JOIN hj_tdim d ON d.name = e.name
     GROUP BY d.grp, streamforge.tumble(e.at, interval '1 minute') $$);
BEGIN;
INSERT INTO hj_tev SELECT g, 'n' || (g % 60), '2026-12-01 12:00:00'::timestamptz + g * interval '1 second'
  FROM generate_series(1, 200) AS g;
SELECT * FROM hj_locked('hj_tdim');
COMMIT;
(SELECT grp, window_start, n FROM hj_text_live
 EXCEPT
 SELECT d.grp, streamforge.tumble(e.at, interval '1 minute'), count(*)
   FROM hj_tev e JOIN hj_tdim d ON d.name = e.name GROUP BY 1, 2)
UNION ALL
(SELECT d.grp, streamforge.tumble(e.at, interval '1 minute'), count(*)
   FROM hj_tev e JOIN hj_tdim d ON d.name = e.name GROUP BY 1, 2
 EXCEPT
 SELECT grp, window_start, n FROM hj_text_live);
-- n1..n50 of n0..n59: 50 + 50 + 50 + 20 events
SELECT sum(n) FROM hj_text_live;

-- leave nothing for the tests that share the database
SELECT streamforge.drop_aggregate(n) FROM unnest(ARRAY['hj_inner', 'hj_left', 'hj_text']) AS n;
DROP FUNCTION hj_diff(), hj_locked(regclass), hj_make();
DROP TABLE hj_ev, hj_dim, hj_tev, hj_tdim;
DROP FUNCTION hj_fail();
