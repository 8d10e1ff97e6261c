-- The directory of a dimension's rows (issue 47 item 4, docs/joins.md "A
-- directory of the dimension's rows"): a backend remembers where the row
-- of each key is and reads that tuple instead of descending the index.
-- Nothing in it is trusted: every answer must be the index's, whatever
-- happened to the dimension since (updates, deletes, rollbacks, TRUNCATE
-- with the rows in other places, a truncation by VACUUM), which each step
-- checks against the plain SQL join; join_stats() shows which lookups the
-- directory answered.
SET client_min_messages = warning;
SET TimeZone = 'UTC';
CREATE TABLE jd_dim (page integer PRIMARY KEY, section text NOT NULL);
-- 2,000 rows, about 11 blocks
INSERT INTO jd_dim SELECT g, 's' || (g % 5) FROM generate_series(1, 2000) AS g;
CREATE TABLE jd_ev (id integer PRIMARY KEY, page integer, amount integer NOT NULL,
                    at timestamptz NOT NULL);
SELECT streamforge.create_aggregate('jd_inner', $$
    SELECT d.section, count(*) AS n, sum(e.amount) AS total
      FROM jd_ev e JOIN jd_dim d ON d.page = e.page
     GROUP BY d.section, streamforge.tumble(e.at, interval '1 hour') $$);
SELECT streamforge.create_aggregate('jd_left', $$
    SELECT d.section, count(*) AS n, sum(e.amount) AS total
      FROM jd_ev e LEFT JOIN jd_dim d ON d.page = e.page
     GROUP BY d.section, streamforge.tumble(e.at, interval '1 hour') $$);
-- the events of one step, and the sections each joined when inserted
-- (as of ingestion: a plain join over the events with the dimension as it
-- was at each insert)
CREATE TABLE jd_ref (id integer, page integer, amount integer, at timestamptz, section text);
CREATE FUNCTION jd_ins(lo integer, hi integer, pages integer) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
    INSERT INTO jd_ev SELECT g, 1 + (hashint4(g) & 2147483647) % pages, g % 100,
                             '2026-12-01 00:00:00'::timestamptz + g * interval '1 second'
                        FROM generate_series(lo, hi) AS g;
    INSERT INTO jd_ref SELECT e.id, e.page, e.amount, e.at, d.section
                         FROM jd_ev e LEFT JOIN jd_dim d ON d.page = e.page
                        WHERE e.id BETWEEN lo AND hi;
END $f$;
-- the differences between the views and the reference (no rows: equal)
CREATE FUNCTION jd_diff() RETURNS TABLE (agg text, side text, section text,
    window_start timestamptz, n bigint, total numeric) LANGUAGE sql AS $$
    WITH got AS (SELECT 'inner' AS agg, section, window_start, n, total FROM jd_inner_live
                 UNION ALL
                 SELECT 'left', section, window_start, n, total FROM jd_left_live),
         want AS (SELECT 'inner' AS agg, section, streamforge.tumble(at, interval '1 hour') AS window_start,
                         count(*) AS n, sum(amount) AS total
                    FROM jd_ref WHERE section IS NOT NULL GROUP BY 1, 2, 3
                  UNION ALL
                  SELECT 'left', section, streamforge.tumble(at, interval '1 hour'),
                         count(*), sum(amount)
                    FROM jd_ref GROUP BY 1, 2, 3)
    (SELECT agg, 'agg', section, window_start, n, total FROM got
     EXCEPT SELECT agg, 'agg', section, window_start, n, total FROM want)
    UNION ALL
    (SELECT agg, 'ref', section, window_start, n, total FROM want
     EXCEPT SELECT agg, 'ref', section, window_start, n, total FROM got) $$;
-- this session's counters since the last call
CREATE TABLE jd_seen (pipeline text PRIMARY KEY, probes bigint, misses bigint, hits bigint);
CREATE FUNCTION jd_stats() RETURNS TABLE (pipeline text, lookups bigint, misses bigint,
    directory_hits bigint, directory_keys bigint) LANGUAGE plpgsql AS $f$
BEGIN
    RETURN QUERY
        SELECT s.pipeline, s.probes - coalesce(p.probes, 0), s.misses - coalesce(p.misses, 0),
               s.directory_hits - coalesce(p.hits, 0), s.directory_keys
          FROM streamforge.join_stats() s LEFT JOIN jd_seen p USING (pipeline)
         WHERE s.pipeline LIKE 'jd_%' ORDER BY 1;
    INSERT INTO jd_seen SELECT s.pipeline, s.probes, s.misses, s.directory_hits
                          FROM streamforge.join_stats() s WHERE s.pipeline LIKE 'jd_%'
        ON CONFLICT ON CONSTRAINT jd_seen_pkey DO UPDATE
           SET probes = EXCLUDED.probes, misses = EXCLUDED.misses, hits = EXCLUDED.hits;
END $f$;

-- 1. 600 events over pages 1..2400 (a sixth of them missing): the first
-- lookups sweep the dimension into the directory (2,000 keys, shared by
-- both aggregates); later lookups of a key it holds are its hits
SELECT jd_ins(1, 600, 2400);
SELECT * FROM jd_diff();
SELECT pipeline, lookups, directory_keys, directory_hits > lookups / 2 AS mostly_hits,
       misses = (SELECT count(*) FROM jd_ref WHERE section IS NULL) AS misses_ok
  FROM jd_stats();

-- 2. the rows move: every third row updated (a new version elsewhere, or
-- on its page), a hundred deleted, a deleted key inserted again with
-- another section; the directory's old ids then find no visible row with
-- the key, and the index answers
UPDATE jd_dim SET section = 'u' || section WHERE page % 3 = 0;
DELETE FROM jd_dim WHERE page BETWEEN 101 AND 200;
INSERT INTO jd_dim VALUES (150, 'back');
SELECT jd_ins(601, 1800, 2400);
-- and the keys of each case, whose ids the first sweep took: 3 and 6
-- updated, 101 and 102 deleted, 150 back, 4 unchanged
INSERT INTO jd_ev VALUES (100001, 3, 1, '2026-12-01 00:30:00'), (100002, 6, 2, '2026-12-01 00:30:00'),
    (100003, 101, 4, '2026-12-01 00:30:00'), (100004, 102, 8, '2026-12-01 00:30:00'),
    (100005, 150, 16, '2026-12-01 00:30:00'), (100006, 4, 32, '2026-12-01 00:30:00');
INSERT INTO jd_ref SELECT e.id, e.page, e.amount, e.at, d.section
  FROM jd_ev e LEFT JOIN jd_dim d ON d.page = e.page WHERE e.id > 100000;
SELECT * FROM jd_diff();
SELECT id, page, section FROM jd_ref WHERE id > 100000 ORDER BY id;
-- what the first step's sweep and the lookups since did (not checked:
-- how many lookups the directory answers depends on the order of
-- blocks the updates left)
SELECT count(*) FROM jd_stats();

-- 3. in one transaction: the dimension changed, then events; they see the
-- change (the statement's snapshot); the change rolled back, later events
-- see the old rows again
BEGIN;
UPDATE jd_dim SET section = 'tx' WHERE page <= 1000;
SELECT jd_ins(1801, 2100, 2400);
SELECT count(*) > 0 AS saw_tx FROM jd_ref WHERE id > 1800 AND section = 'tx';
SELECT * FROM jd_diff();
ROLLBACK;
SELECT jd_ins(1801, 2100, 2400);
SELECT count(*) AS tx_after_rollback FROM jd_ref WHERE section = 'tx';
SELECT * FROM jd_diff();

-- 4. TRUNCATE, and the rows loaded again in another order, so that the
-- ids the directory held now hold other keys: the directory starts over
-- (a new relfilenode); and the same without a new relfilenode: DELETE
-- and VACUUM, which truncates the heap to nothing, then fewer rows, in
-- reverse order (ids past the new end are not read; ids that hold
-- another key are not taken)
TRUNCATE jd_dim;
INSERT INTO jd_dim SELECT g, 't' || (g % 4) FROM generate_series(2000, 1, -1) AS g;
SELECT jd_ins(2101, 2700, 2400);
SELECT * FROM jd_diff();
SELECT pipeline, directory_keys FROM jd_stats();
DELETE FROM jd_dim;
VACUUM jd_dim;
SELECT pg_relation_size('jd_dim') AS truncated;
INSERT INTO jd_dim SELECT g, 'r' || (g % 3) FROM generate_series(300, 1, -1) AS g;
SELECT jd_ins(2701, 3300, 400);
SELECT * FROM jd_diff();
SELECT count(*) FILTER (WHERE section LIKE 'r%') AS joined, count(*) FILTER (WHERE section IS NULL) AS missing
  FROM jd_ref WHERE id > 2700;

-- 5. a serializable transaction does not use the directory (its index
-- probes take predicate locks); nor does a session with
-- streamforge.join_directory_memory = 0
SELECT pipeline, directory_hits > 0 AS hits FROM jd_stats();
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT jd_ins(3301, 3400, 400);
SELECT pipeline, lookups, directory_hits FROM jd_stats();
COMMIT;
SET streamforge.join_directory_memory = 0;
SELECT jd_ins(3401, 3500, 400);
SELECT pipeline, lookups, directory_hits FROM jd_stats();
RESET streamforge.join_directory_memory;
SELECT * FROM jd_diff();

-- 6. a directory at its memory limit keeps the keys it has (80 kB: a
-- table of 4,096 entries of 16 bytes, 90% full, and 4 bytes per block of
-- the dimension; not the table of 8,192 entries the next key would need)
-- and still answers as the index does
SET streamforge.join_directory_memory = '80kB';
INSERT INTO jd_dim SELECT g, 'm' || (g % 6) FROM generate_series(301, 10000) AS g;
SELECT jd_ins(3501, 6500, 10000);
SELECT pipeline, directory_keys FROM jd_stats();
SELECT * FROM jd_diff();
-- the limit raised: the directory grows again (the sweep goes on)
SET streamforge.join_directory_memory = '1MB';
SELECT jd_ins(6501, 9500, 10000);
SELECT pipeline, directory_keys > 3686 AS grew FROM jd_stats();
SELECT * FROM jd_diff();
RESET streamforge.join_directory_memory;

-- 7. keys a directory cannot hold: text (its equality is a collation's),
-- and an event column of another type than the key (int8 = int4)
CREATE TABLE jd_tdim (name text PRIMARY KEY, grp text NOT NULL);
INSERT INTO jd_tdim SELECT 'n' || g, 'g' || (g % 3) FROM generate_series(1, 50) AS g;
CREATE TABLE jd_tev (id integer PRIMARY KEY, name text, big bigint, at timestamptz NOT NULL);
SELECT streamforge.create_aggregate('jd_text', $$
    SELECT d.grp, count(*) AS n
      FROM jd_tev e JOIN jd_tdim d ON d.name = e.name
     GROUP BY d.grp, streamforge.tumble(e.at, interval '1 minute') $$);
SELECT streamforge.create_aggregate('jd_cross', $$
    SELECT d.section, count(*) AS n
      FROM jd_tev e JOIN jd_dim d ON d.page = e.big
     GROUP BY d.section, streamforge.tumble(e.at, interval '1 minute') $$);
INSERT INTO jd_tev SELECT g, 'n' || (g % 60), g % 70, '2026-12-01 12:00:00'::timestamptz + g * interval '1 second'
  FROM generate_series(1, 200) AS g;
SELECT pipeline, lookups, misses, directory_hits, directory_keys FROM jd_stats()
 WHERE pipeline IN ('jd_text', 'jd_cross');
SELECT (SELECT sum(n) FROM jd_text_live) AS text_n, (SELECT sum(n) FROM jd_cross_live) AS cross_n;

-- 8. two directories that do not both fit, used in turns: the one that
-- needs room does not drop the other while the other is in use (idle for
-- fewer lookups than its keys / 32), it stops growing; once the other has
-- been idle that long, it is dropped and the first grows.  100 kB: a
-- table of 4,096 entries (64 kB) and one of 2,048 (32 kB), not two of
-- 4,096; 3,000 rows each.  In a new session: its backend has no
-- directory yet (the earlier steps' one of jd_dim, 10,000 keys, would
-- take the room)
\c
SET client_min_messages = warning;
SET TimeZone = 'UTC';
SET streamforge.join_directory_memory = '100kB';
CREATE TABLE jd_adim (k integer PRIMARY KEY, grp text NOT NULL);
CREATE TABLE jd_bdim (k integer PRIMARY KEY, grp text NOT NULL);
INSERT INTO jd_adim SELECT g, 'a' || (g % 3) FROM generate_series(1, 3000) AS g;
INSERT INTO jd_bdim SELECT g, 'b' || (g % 3) FROM generate_series(1, 3000) AS g;
CREATE TABLE jd_aev (id integer PRIMARY KEY, k integer, at timestamptz NOT NULL);
CREATE TABLE jd_bev (id integer PRIMARY KEY, k integer, at timestamptz NOT NULL);
SELECT streamforge.create_aggregate('jd_a', $$
    SELECT d.grp, count(*) AS n FROM jd_aev e JOIN jd_adim d ON d.k = e.k
     GROUP BY d.grp, streamforge.tumble(e.at, interval '1 hour') $$);
SELECT streamforge.create_aggregate('jd_b', $$
    SELECT d.grp, count(*) AS n FROM jd_bev e JOIN jd_bdim d ON d.k = e.k
     GROUP BY d.grp, streamforge.tumble(e.at, interval '1 hour') $$);
CREATE FUNCTION jd_turns(first integer, turns integer, per integer, a boolean, b boolean)
RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
    FOR t IN 0 .. turns - 1 LOOP
        IF a THEN
            EXECUTE 'INSERT INTO jd_aev SELECT g, 1 + (hashint4(g) & 2147483647) % 3000, now()
                       FROM generate_series($1, $2) AS g' USING first + t * per, first + t * per + per - 1;
        END IF;
        IF b THEN
            EXECUTE 'INSERT INTO jd_bev SELECT g, 1 + (hashint4(g) & 2147483647) % 3000, now()
                       FROM generate_series($1, $2) AS g' USING first + t * per, first + t * per + per - 1;
        END IF;
    END LOOP;
END $f$;
-- in turns of 50 lookups (jd_a first): jd_adim's directory grows first
-- to 4,096 entries (all 3,000 keys), jd_bdim's stops at 1,843 (90% of
-- 2,048): jd_adim's has never been idle for 3,000 / 32 lookups
SELECT jd_turns(1, 40, 50, true, true);
SELECT pipeline, directory_keys FROM streamforge.join_stats()
 WHERE pipeline IN ('jd_a', 'jd_b') ORDER BY 1;
-- jd_b alone, statements of 200 lookups: from the second, jd_adim's
-- directory has been idle for more than 3,000 / 32 lookups: it goes,
-- jd_bdim's grows
SELECT jd_turns(10001, 3, 200, false, true);
SELECT pipeline, directory_keys FROM streamforge.join_stats()
 WHERE pipeline IN ('jd_a', 'jd_b') ORDER BY 1;
SELECT (SELECT sum(n) FROM jd_a_live) AS a_n, (SELECT sum(n) FROM jd_b_live) AS b_n;
RESET streamforge.join_directory_memory;

-- leave nothing for the tests that share the database
SELECT streamforge.drop_aggregate(n)
  FROM unnest(ARRAY['jd_inner', 'jd_left', 'jd_text', 'jd_cross', 'jd_a', 'jd_b']) AS n;
DROP FUNCTION jd_diff(), jd_ins(integer, integer, integer), jd_stats(),
    jd_turns(integer, integer, integer, boolean, boolean);
DROP TABLE jd_ev, jd_dim, jd_ref, jd_seen, jd_tev, jd_tdim, jd_aev, jd_bev, jd_adim, jd_bdim;
