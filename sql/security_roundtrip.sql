-- security_roundtrip: names, keys and event ids with quotes, backslashes,
-- control characters, SQL and JSON look-alikes, non-ASCII text and very
-- long values pass through ingest, the outputs, checkpoint/restore and a
-- reload from the tables unchanged (PostgreSQL text cannot hold NUL; see
-- test/bad-inputs.md).
\set VERBOSITY sqlstate

-- the awkward strings: every ASCII control character but NUL, quotes,
-- backslashes, SQL and format look-alikes, JSON escapes, UTF-8 of 2, 3 and
-- 4 bytes, combining and right-to-left marks, and long values
CREATE TABLE rt_values (i int PRIMARY KEY, v text NOT NULL);
INSERT INTO rt_values
SELECT c, 'c' || chr(c) || 'x' FROM generate_series(1, 31) AS c;
INSERT INTO rt_values VALUES
    (32, 'del' || chr(127)),
    (33, ''''),
    (34, '"'),
    (35, '\'),
    (36, '\\'''''),
    (37, '''); DROP TABLE rt_values; --'),
    (38, '$$ $1 %s %n {} [] ,;'),
    (39, '\u0000 \n \" \\ \/'),
    (40, 'é ß € 𝄞 😀'),
    (41, 'e' || chr(769) || ' ' || chr(8238) || 'rtl' || chr(8236)),
    (42, ' leading and trailing spaces '),
    (43, repeat('k', 1048576)),
    (44, repeat('€', 100000)),
    (45, 'NULL'),
    (46, 'k'),
    (47, 'K');

-- a pipeline whose own name and partition and window names are awkward
SELECT E'p\'"\\\t€;' AS pname \gset
SELECT streamforge.create_pipeline(:'pname',
    ARRAY[E'a''\\', E'b"\n€'],
    ARRAY[streamforge.fixed(E'f''"\\', 10), streamforge.session('s 😀', 5)], 1000);
SELECT * FROM streamforge.partitions(:'pname');
SELECT streamforge.configure_outputs(:'pname');

-- every value as a key (offset i - 1 of the first partition), with an
-- event_id made of the same value; then every value as a late event on
-- the second partition (watermark 1000, lateness 1000: nothing is
-- finalized, negative times are late)
SELECT count(*) FROM streamforge.ingest_batch(:'pname',
    (SELECT array_agg(ROW(E'a''\\', i - 1, 'id:' || v, v, i, i)::streamforge.delivery
                      ORDER BY i) FROM rt_values));
SELECT count(*) FROM streamforge.advance(:'pname', E'a''\\', 1000);
SELECT count(*) FROM streamforge.advance(:'pname', E'b"\n€', 1000);
SELECT count(*) FROM rt_values,
       LATERAL streamforge.ingest(:'pname', E'b"\n€', i - 1, 'late:' || v, v, -i, i);

-- the outputs hold exactly the values ingested
SELECT (SELECT count(*) FROM streamforge.live(:'pname')) AS live_rows,
       (SELECT count(*) FROM streamforge.visible(:'pname')) AS visible_rows,
       (SELECT count(*) FROM streamforge.late_events(:'pname')) AS late_rows;
SELECT count(*) AS fixed_rows_not_matching
  FROM rt_values r
 WHERE NOT EXISTS (SELECT 1 FROM streamforge.visible(:'pname') v
                    WHERE v.window_name = E'f''"\\' AND v.key = r.v
                      AND v.sum = r.i AND v.window_start = r.i / 10 * 10);
SELECT count(*) AS sessions_not_matching
  FROM rt_values r
 WHERE NOT EXISTS (SELECT 1 FROM streamforge.visible(:'pname') v
                    WHERE v.window_name = 's 😀' AND v.key = r.v
                      AND v.sum = r.i AND v.window_start = r.i);
SELECT count(*) AS late_not_matching
  FROM rt_values r
 WHERE NOT EXISTS (SELECT 1 FROM streamforge.late_events(:'pname') l
                    WHERE l.event_id = 'late:' || r.v AND l.key = r.v
                      AND l.partition = E'b"\n€' AND l.source_offset = r.i - 1);
SELECT count(*) AS changelog_not_matching
  FROM rt_values r
 WHERE NOT EXISTS (SELECT 1 FROM streamforge.changelog c
                    WHERE c.pipeline = :'pname' AND c.key = r.v
                      AND c.window_name = E'f''"\\' AND c.op = 'upsert');
SELECT count(*) AS results_not_matching
  FROM rt_values r
 WHERE (SELECT count(*) FROM streamforge.results x
         WHERE x.pipeline = :'pname' AND x.key = r.v) <> 2;
SELECT count(*) AS late_output_not_matching
  FROM rt_values r
 WHERE NOT EXISTS (SELECT 1 FROM streamforge.late_output l
                    WHERE l.pipeline = :'pname' AND l.key = r.v
                      AND l.event_id = 'late:' || r.v);
-- 'k' and 'K' and the long keys stay apart, byte for byte
SELECT v.key = 'k' AS lower_k, v.key = 'K' AS upper_k, length(v.key) AS len
  FROM streamforge.visible(:'pname') v
 WHERE v.window_name = E'f''"\\' AND (v.key IN ('k', 'K') OR length(v.key) > 1000)
 ORDER BY v.key COLLATE "C";

-- a replay of every delivery is a no-op: the stored identities compare
-- equal byte for byte; one byte more is a conflict
SELECT count(*) FROM rt_values,
       LATERAL streamforge.ingest(:'pname', E'a''\\', i - 1, 'id:' || v, v, i, i);
SELECT c.* FROM rt_values,
       LATERAL streamforge.ingest(:'pname', E'a''\\', 47, 'id:' || v, v || ' ', i, i) AS c
 WHERE i = 47;
SELECT c.* FROM rt_values,
       LATERAL streamforge.ingest(:'pname', E'a''\\', 47, 'id:' || v, v, i, i) AS c
 WHERE i = 43;

-- checkpoint -> restore -> identical, into the same pipeline and a twin
SELECT streamforge.checkpoint(:'pname') AS cp1 \gset
SELECT octet_length(streamforge.inspect_checkpoint(:'cp1')::text) > 2 * 1048576
       AS document_holds_the_long_keys;
SELECT streamforge.restore(:'pname', :'cp1');
SELECT streamforge.checkpoint(:'pname') = :'cp1'::bytea AS same_after_restore;
SELECT streamforge.create_pipeline(E'twin \\ \'', ARRAY[E'b"\n€', E'a''\\'],
    ARRAY[streamforge.session('s 😀', 5), streamforge.fixed(E'f''"\\', 10)], 1000);
SELECT streamforge.restore(E'twin \\ \'', :'cp1');
SELECT streamforge.checkpoint(E'twin \\ \'') = :'cp1'::bytea AS twin_identical;
SELECT (SELECT array_agg(v ORDER BY v.window_name, v.key COLLATE "C", v.window_start)
          FROM streamforge.live(:'pname') v)
     = (SELECT array_agg(v ORDER BY v.window_name, v.key COLLATE "C", v.window_start)
          FROM streamforge.live(E'twin \\ \'') v) AS twin_live_identical;
-- the checkpoint's JSON holds the strings exactly
SELECT count(*) AS json_keys_not_matching
  FROM rt_values r
 WHERE NOT EXISTS (
        SELECT 1 FROM jsonb_path_query(streamforge.inspect_checkpoint(:'cp1'),
                                        'strict $.**') AS j
         WHERE jsonb_typeof(j) = 'string' AND j #>> '{}' = r.v);

-- a new backend rebuilds the state from the tables: still identical
\c -
SELECT E'p\'"\\\t€;' AS pname \gset
SELECT streamforge.checkpoint(:'pname') = :'cp1'::bytea AS same_after_reload;
SELECT count(*) FROM rt_values,
       LATERAL streamforge.ingest(:'pname', E'a''\\', i - 1, 'id:' || v, v, i, i);

SELECT streamforge.drop_pipeline(E'twin \\ \'');
SELECT streamforge.drop_pipeline(:'pname');
SELECT count(*) AS leftovers FROM streamforge.changelog WHERE pipeline = :'pname';
DROP TABLE rt_values;
