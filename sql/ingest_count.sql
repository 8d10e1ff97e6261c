-- ingest_count (docs/ingestion.md): ingest returning the number of changes
-- it caused instead of the rows.  Twin pipelines get the same calls, ic_a
-- through ingest_count and ic_b through ingest: counts, state, outputs and
-- errors must be the same.
\set VERBOSITY terse

SELECT streamforge.create_pipeline(n, ARRAY['p0', 'p1'],
    ARRAY[streamforge.fixed('f', 10), streamforge.session('s', 5)], 10)
  FROM unnest(ARRAY['ic_a', 'ic_b']) AS n;
SELECT streamforge.configure_outputs(n) FROM unnest(ARRAY['ic_a', 'ic_b']) AS n;
SELECT count(*) FROM unnest(ARRAY['ic_a', 'ic_b']) AS n,
    unnest(ARRAY['p0', 'p1']) AS p, LATERAL streamforge.advance(n, p, 20);

-- one delivery to both twins: ingest_count's result (n, assigned in
-- PL/pgSQL) next to the rows ingest returns (their number and ops)
CREATE FUNCTION ic_both(part text, off bigint, eid text, k text, t bigint, v bigint,
                        OUT n integer, OUT ingest_rows bigint, OUT ops text)
LANGUAGE plpgsql AS $$
BEGIN
    n := streamforge.ingest_count('ic_a', part, off, eid, k, t, v);
    SELECT count(*), string_agg(i.op, ',' ORDER BY i.seq) INTO ingest_rows, ops
      FROM streamforge.ingest('ic_b', part, off, eid, k, t, v) AS i;
END
$$;

-- watermark 20, lateness 10: [10,20) is ready
SELECT * FROM ic_both('p0', 0, 'e0', 'k', 15, 5);   -- new: f and s upserts
SELECT * FROM ic_both('p0', 1, 'e1', 'k', 12, 3);   -- f corrected, s merged
SELECT * FROM ic_both('p0', 1, 'e1', 'k', 12, 3);   -- replay: nothing
SELECT * FROM ic_both('p1', 0, 'e1', 'k', 12, 3);   -- known event id: nothing
SELECT * FROM ic_both('p1', 1, 'e2', 'k', 5, 1);    -- late: nothing
SELECT * FROM ic_both('p1', 2, 'e3', 'j', 25, 1);   -- not ready: nothing
SELECT * FROM ic_both('p1', 3, 'e4', 'k', 10, 2);   -- on time: f corrected, s merged

-- a savepoint rolled back undoes both; the offset is then free again
BEGIN;
SAVEPOINT sp;
SELECT * FROM ic_both('p0', 2, 'e5', 'k', 13, 1);
ROLLBACK TO SAVEPOINT sp;
SELECT partition, consumed_offset FROM streamforge.partitions('ic_a');
SELECT count(*) AS changelog_rows FROM streamforge.changelog WHERE pipeline = 'ic_a';
SELECT * FROM ic_both('p0', 2, 'e5', 'k', 17, 1);
COMMIT;

-- errors: the same SQLSTATE and message from both, and nothing changes
CREATE FUNCTION ic_err(stmt text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE stmt;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || replace(replace(SQLERRM, 'ic_a', 'PIPE'), 'ic_b', 'PIPE');
END
$$;
CREATE TABLE ic_bad (id int, args text);
INSERT INTO ic_bad VALUES
    (1, $$'PIPE', 'p0', 9, 'e9', 'k', 15, 1$$),        -- gap
    (2, $$'PIPE', 'p0', 0, 'e9', 'k', 15, 1$$),        -- another delivery at a consumed offset
    (3, $$'PIPE', 'p0', -1, 'e9', 'k', 15, 1$$),       -- negative offset
    (4, $$'PIPE', 'p0', 3, 'e0', 'k', 15, 6$$),        -- known event id, other value
    (5, $$NULL, 'p0', 3, 'e9', 'k', 15, 1$$),
    (6, $$'PIPE', NULL, 3, 'e9', 'k', 15, 1$$),
    (7, $$'PIPE', 'p0', NULL, 'e9', 'k', 15, 1$$),
    (8, $$'PIPE', 'p0', 3, NULL, 'k', 15, 1$$),
    (9, $$'PIPE', 'p0', 3, 'e9', NULL, 15, 1$$),
    (10, $$'PIPE', 'p0', 3, 'e9', 'k', NULL, 1$$),
    (11, $$'PIPE', 'p0', 3, 'e9', 'k', 15, NULL$$),
    (12, $$'PIPE', 'px', 3, 'e9', 'k', 15, 1$$),       -- unknown partition
    (13, $$'PIPE', 'p0', 3, '', 'k', 15, 1$$),         -- empty event id
    (14, $$'ic_missing', 'p0', 3, 'e9', 'k', 15, 1$$); -- unknown pipeline
SELECT id,
       ic_err(format('SELECT streamforge.ingest_count(%s)', replace(args, 'PIPE', 'ic_a'))) AS ingest_count,
       ic_err(format('SELECT * FROM streamforge.ingest(%s)', replace(args, 'PIPE', 'ic_b')))
         = ic_err(format('SELECT streamforge.ingest_count(%s)', replace(args, 'PIPE', 'ic_a'))) AS same_as_ingest
  FROM ic_bad ORDER BY id;

-- privileges: without ingest (read only), both refuse; with it, it works
CREATE ROLE regress_ic_reader;
CREATE ROLE regress_ic_writer;
GRANT USAGE ON SCHEMA streamforge TO regress_ic_reader, regress_ic_writer;
SELECT streamforge.grant('ic_a', 'regress_ic_reader', 'read');
SELECT streamforge.grant('ic_b', 'regress_ic_reader', 'read');
SELECT streamforge.grant('ic_a', 'regress_ic_writer', 'ingest');
SET ROLE regress_ic_reader;
SELECT ic_err($$SELECT streamforge.ingest_count('ic_a', 'p0', 3, 'e6', 'k', 30, 1)$$) AS ingest_count,
       ic_err($$SELECT * FROM streamforge.ingest('ic_b', 'p0', 3, 'e6', 'k', 30, 1)$$) AS ingest;
-- checked first, whatever the other arguments
SELECT ic_err($$SELECT streamforge.ingest_count('ic_a', NULL, NULL, NULL, NULL, NULL, NULL)$$) AS ingest_count,
       ic_err($$SELECT * FROM streamforge.ingest('ic_b', NULL, NULL, NULL, NULL, NULL, NULL)$$) AS ingest;
SET ROLE regress_ic_writer;
SELECT streamforge.ingest_count('ic_a', 'p0', 3, 'e6', 'k', 30, 1);
RESET ROLE;
SELECT * FROM streamforge.ingest('ic_b', 'p0', 3, 'e6', 'k', 30, 1);

-- the twins are equal: state, reads and every output
SELECT * FROM streamforge.partitions('ic_a')
EXCEPT SELECT * FROM streamforge.partitions('ic_b');
SELECT * FROM streamforge.live('ic_a')
EXCEPT SELECT * FROM streamforge.live('ic_b');
SELECT * FROM streamforge.visible('ic_a')
EXCEPT SELECT * FROM streamforge.visible('ic_b');
SELECT * FROM streamforge.late_events('ic_a')
EXCEPT SELECT * FROM streamforge.late_events('ic_b');
SELECT seq, op, window_name, key, window_start, window_end, count, sum, min, max
  FROM streamforge.changelog WHERE pipeline = 'ic_a'
EXCEPT
SELECT seq, op, window_name, key, window_start, window_end, count, sum, min, max
  FROM streamforge.changelog WHERE pipeline = 'ic_b';
SELECT window_name, key, window_start, window_end, count, sum, min, max, seq
  FROM streamforge.results WHERE pipeline = 'ic_a'
EXCEPT
SELECT window_name, key, window_start, window_end, count, sum, min, max, seq
  FROM streamforge.results WHERE pipeline = 'ic_b';
SELECT late_seq, partition, source_offset, event_id, key, event_time, value, watermark
  FROM streamforge.late_output WHERE pipeline = 'ic_a'
EXCEPT
SELECT late_seq, partition, source_offset, event_id, key, event_time, value, watermark
  FROM streamforge.late_output WHERE pipeline = 'ic_b';
SELECT (SELECT count(*) FROM streamforge.changelog WHERE pipeline = 'ic_a') AS changelog_a,
       (SELECT count(*) FROM streamforge.changelog WHERE pipeline = 'ic_b') AS changelog_b,
       (SELECT count(*) FROM streamforge.results WHERE pipeline = 'ic_a') AS results_a,
       (SELECT count(*) FROM streamforge.results WHERE pipeline = 'ic_b') AS results_b,
       (SELECT count(*) FROM streamforge.late_output WHERE pipeline = 'ic_a') AS late_a,
       (SELECT count(*) FROM streamforge.late_output WHERE pipeline = 'ic_b') AS late_b;
-- and what ic_a holds, by hand: 5+3+2 in [10,20) of k, one late event
SELECT seq, op, window_name, key, window_start, window_end, count, sum, min, max
  FROM streamforge.changelog WHERE pipeline = 'ic_a' ORDER BY seq;
SELECT * FROM streamforge.visible('ic_a');
SELECT late_seq, partition, source_offset, event_id, event_time, watermark
  FROM streamforge.late_output WHERE pipeline = 'ic_a';

-- a PL/pgSQL loop: n := ingest_count(...), whose sum is the changelog's
-- rows, and the state of a twin fed by one ingest_batch
SELECT streamforge.create_pipeline(n, ARRAY['p0'],
    ARRAY[streamforge.fixed('f', 10), streamforge.session('s', 3)], 5)
  FROM unnest(ARRAY['ic_loop', 'ic_loop_batch']) AS n;
SELECT streamforge.configure_outputs('ic_loop');
CREATE TABLE ic_rows AS
    SELECT i, 'e' || i AS eid, 'k' || (i % 3) AS k, (i * 7 % 50)::bigint AS t,
           i::bigint AS v
      FROM generate_series(0, 99) AS i;
DO $$
DECLARE
    r record;
    n integer;
    total integer := 0;
BEGIN
    FOR r IN SELECT * FROM ic_rows ORDER BY i LOOP
        n := streamforge.ingest_count('ic_loop', 'p0', r.i, r.eid, r.k, r.t, r.v);
        total := total + n;
        IF r.i = 49 THEN
            n := (SELECT count(*) FROM streamforge.advance('ic_loop', 'p0', 30));
            total := total + n;
        END IF;
    END LOOP;
    RAISE NOTICE 'changes: %, changelog rows: %', total,
        (SELECT count(*) FROM streamforge.changelog WHERE pipeline = 'ic_loop');
END
$$;
SELECT count(*) FROM streamforge.ingest_batch('ic_loop_batch',
    (SELECT array_agg(ROW('p0', i, eid, k, t, v)::streamforge.delivery ORDER BY i)
       FROM ic_rows WHERE i < 50));
SELECT count(*) FROM streamforge.advance('ic_loop_batch', 'p0', 30);
SELECT count(*) FROM streamforge.ingest_batch('ic_loop_batch',
    (SELECT array_agg(ROW('p0', i, eid, k, t, v)::streamforge.delivery ORDER BY i)
       FROM ic_rows WHERE i >= 50));
SELECT count(*) AS live_rows FROM streamforge.live('ic_loop');
SELECT * FROM streamforge.live('ic_loop')
EXCEPT SELECT * FROM streamforge.live('ic_loop_batch');
SELECT * FROM streamforge.visible('ic_loop')
EXCEPT SELECT * FROM streamforge.visible('ic_loop_batch');
SELECT count(*) AS late_events FROM streamforge.late_events('ic_loop');
SELECT (SELECT count(*) FROM streamforge.late_events('ic_loop')) =
       (SELECT count(*) FROM streamforge.late_events('ic_loop_batch')) AS same_late;

-- a loop that catches a refused delivery goes on; the refusal changed nothing
DO $$
DECLARE
    n integer;
BEGIN
    BEGIN
        n := streamforge.ingest_count('ic_loop', 'p0', 200, 'e200', 'k0', 60, 1);
    EXCEPTION WHEN SQLSTATE 'SF001' THEN
        RAISE NOTICE 'refused: %', SQLERRM;
    END;
    n := streamforge.ingest_count('ic_loop', 'p0', 100, 'e100', 'k0', 29, 1);
    RAISE NOTICE 'changes: %', n;
END
$$;
SELECT consumed_offset FROM streamforge.partitions('ic_loop');

-- one call site, rows naming two pipelines and twelve partitions (more
-- than a call site keeps the names of, api.h SF_ROW_PARTITIONS): the same
-- state as ingest_batch of each pipeline's rows
SELECT streamforge.create_pipeline(n,
           ARRAY(SELECT 'part-' || i FROM generate_series(0, 11) AS i),
           ARRAY[streamforge.fixed('w', 10)], 10)
  FROM unnest(ARRAY['ic_site_a', 'ic_site_b', 'ic_site_ref_a',
                    'ic_site_ref_b']) AS n;
CREATE TEMP TABLE ic_site AS
SELECT CASE WHEN i % 3 = 0 THEN 'ic_site_a' ELSE 'ic_site_b' END AS pipe,
       'part-' || (i % 12) AS part, i / 12 AS off, 'e' || i AS eid,
       'k' || (i % 5) AS key, i AS t, i AS v
  FROM generate_series(0, 239) AS i;
SELECT count(*) FROM (SELECT * FROM ic_site ORDER BY t) r
 CROSS JOIN LATERAL streamforge.ingest(r.pipe, r.part, r.off, r.eid, r.key,
                                       r.t, r.v) ch;
SELECT count(*)
  FROM (SELECT pipe, array_agg(ROW(part, off, eid, key, t, v)::streamforge.delivery
                               ORDER BY t) AS ds
          FROM ic_site GROUP BY pipe) b
 CROSS JOIN LATERAL streamforge.ingest_batch(
           replace(b.pipe, 'ic_site_', 'ic_site_ref_'), b.ds) ch;
SELECT p, (SELECT string_agg(x::text, ',' ORDER BY x::text)
             FROM streamforge.live(p) x) =
          (SELECT string_agg(x::text, ',' ORDER BY x::text)
             FROM streamforge.live(replace(p, 'ic_site_', 'ic_site_ref_')) x)
          AS same_live,
       (SELECT string_agg(partition || ':' || consumed_offset, ',' ORDER BY partition)
          FROM streamforge.partitions(p)) =
       (SELECT string_agg(partition || ':' || consumed_offset, ',' ORDER BY partition)
          FROM streamforge.partitions(replace(p, 'ic_site_', 'ic_site_ref_')))
          AS same_offsets,
       (SELECT count(*) FROM streamforge.partitions(p)) AS partitions,
       (SELECT count(*) FROM streamforge.live(p)) AS live_rows
  FROM unnest(ARRAY['ic_site_a', 'ic_site_b']) AS p;
-- the same rows again through ingest_count in a loop: all duplicates
DO $$
DECLARE
    r record;
    n integer := 0;
BEGIN
    FOR r IN SELECT * FROM ic_site ORDER BY t LOOP
        n := n + streamforge.ingest_count(r.pipe, r.part, r.off, r.eid, r.key,
                                          r.t, r.v);
    END LOOP;
    RAISE NOTICE 'changes: %', n;
END
$$;
SELECT streamforge.drop_pipeline(n)
  FROM unnest(ARRAY['ic_site_a', 'ic_site_b', 'ic_site_ref_a',
                    'ic_site_ref_b']) AS n;
DROP TABLE ic_site;

-- declared like ingest
SELECT p.proname, p.provolatile, p.proparallel, p.proretset, p.proisstrict,
       pg_get_function_result(p.oid) AS result,
       obj_description(p.oid, 'pg_proc') AS comment
  FROM pg_proc p
 WHERE p.pronamespace = 'streamforge'::regnamespace
   AND p.proname IN ('ingest', 'ingest_count')
 ORDER BY 1;

SELECT streamforge.drop_pipeline(n)
  FROM unnest(ARRAY['ic_a', 'ic_b', 'ic_loop', 'ic_loop_batch']) AS n;
REVOKE USAGE ON SCHEMA streamforge FROM regress_ic_reader, regress_ic_writer;
DROP ROLE regress_ic_reader;
DROP ROLE regress_ic_writer;
DROP TABLE ic_bad, ic_rows;
DROP FUNCTION ic_both, ic_err;
