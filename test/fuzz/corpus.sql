-- test/fuzz/corpus.sql: the real journal rows and binary snapshots that
-- seed the fuzz targets fuzz_journal and fuzz_snapshot (test/fuzz/
-- make-corpus.sh runs this on a scratch server and writes the files of
-- test/fuzz/corpus/<target>/).  Output: one line per seed,
-- target|name|hex.
--
-- The journal target replays the rows of a pipeline created with one of
-- two definitions its harness knows (test/fuzz/fuzz_journal.c, DEF_*):
-- "fz" without retention, "fzr" with retention 30; both with partitions
-- p0 and p1, lateness 5 and the windows f (fixed 10), g (session 7) and
-- s (sliding 20 by 5).  A journal seed is one selector byte (0: fz, 1:
-- fzr) and the pipeline's journal rows in position order, each as a
-- big-endian uint32 length and the row's bytes.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS streamforge;

CREATE FUNCTION pg_temp.mk(name text, retention bigint) RETURNS void
LANGUAGE sql AS $$
SELECT streamforge.create_pipeline(name, ARRAY['p0', 'p1'],
    ARRAY[streamforge.fixed('f', 10), streamforge.session('g', 7),
          streamforge.sliding('s', 20, 5)], 5, retention)
$$;

CREATE FUNCTION pg_temp.journal(name text, selector int) RETURNS text
LANGUAGE sql AS $$
SELECT pg_catalog.encode(pg_catalog.set_byte('\x00'::bytea, 0, selector) ||
    pg_catalog.string_agg(pg_catalog.int4send(pg_catalog.length(j.entry)) || j.entry,
                          ''::bytea ORDER BY j.pos), 'hex')
FROM streamforge.journal j JOIN streamforge.pipeline p ON p.id = j.pipeline_id
WHERE p.name = $1
$$;

-- one row per call (autocommit): each kind of entry, duplicates, an offset
-- replay, a late event, an empty key, a long event_id
SELECT pg_temp.mk('j_single', NULL);
SELECT count(*) FROM streamforge.ingest('j_single', 'p0', 0, 'e0', 'k', 3, 10);
SELECT count(*) FROM streamforge.ingest('j_single', 'p1', 0, 'e1', 'k2', 12, -4);
SELECT count(*) FROM streamforge.ingest('j_single', 'p1', 0, 'e1', 'k2', 12, -4);
SELECT count(*) FROM streamforge.ingest('j_single', 'p0', 1, 'e1', 'k2', 12, -4);
SELECT count(*) FROM streamforge.ingest_batch('j_single', ARRAY[
    ROW('p0', 2, 'e2', '', 25, 9223372036854775807),
    ROW('p1', 1, pg_catalog.repeat('x', 200), 'k', 26, -9223372036854775808),
    ROW('p0', 3, 'e3', 'k', 40, 1)]::streamforge.delivery[]);
SELECT count(*) FROM streamforge.advance('j_single', 'p1', 60);
SELECT count(*) FROM streamforge.ingest('j_single', 'p0', 4, 'late', 'k', 20, 7);
SELECT count(*) FROM streamforge.mark_idle('j_single', 'p1');
SELECT count(*) FROM streamforge.append('j_single', 'p0', 'ap', 'k', 70, 2);
SELECT count(*) FROM streamforge.append_batch('j_single', ARRAY[
    ROW('p1', 'ab1', 'k3', 71, 3), ROW('p0', 'ab2', 'k3', 72, 4)]::streamforge.event[]);
SELECT count(*) FROM streamforge.ingest_json('j_single',
    '[{"partition": "p1", "source_offset": 3, "event_id": "js", "key": "k", "event_time": 80, "value": 5}]');
SELECT 'journal|single|' || pg_temp.journal('j_single', 0);

-- the calls of one transaction: one row, a sequence of entries
SELECT pg_temp.mk('j_seq', NULL);
BEGIN;
SELECT count(*) FROM streamforge.ingest('j_seq', 'p0', 0, 'a', 'k', 1, 1);
SELECT count(*) FROM streamforge.ingest('j_seq', 'p0', 1, 'b', 'k', 2, 2);
SELECT count(*) FROM streamforge.advance('j_seq', 'p0', 30);
SELECT count(*) FROM streamforge.ingest('j_seq', 'p1', 0, 'c', 'q', 3, 3);
SELECT count(*) FROM streamforge.mark_idle('j_seq', 'p0');
SELECT count(*) FROM streamforge.advance('j_seq', 'p1', 50);
COMMIT;
-- then a subtransaction's call (a row of its own) and another sequence
BEGIN;
SAVEPOINT s;
SELECT count(*) FROM streamforge.ingest('j_seq', 'p1', 1, 'd', 'q', 60, 4);
RELEASE s;
SELECT count(*) FROM streamforge.ingest('j_seq', 'p0', 2, 'e', 'k', 61, 5);
SELECT count(*) FROM streamforge.ingest('j_seq', 'p0', 3, 'f', 'k', 62, 6);
COMMIT;
SELECT 'journal|sequence|' || pg_temp.journal('j_seq', 0);

-- retention: events and late rows forgotten behind the horizon
SELECT pg_temp.mk('j_ret', 30);
SELECT count(*) FROM streamforge.ingest_batch('j_ret',
    (SELECT pg_catalog.array_agg(ROW(CASE WHEN i % 2 = 0 THEN 'p0' ELSE 'p1' END,
                                     i / 2, 'r' || i, 'k' || (i % 3), i * 3, i)::streamforge.delivery
                                 ORDER BY i)
     FROM pg_catalog.generate_series(0, 39) i));
SELECT count(*) FROM streamforge.ingest('j_ret', 'p0', 20, 'late1', 'k0', 1, 1);
SELECT count(*) FROM streamforge.advance('j_ret', 'p1', 200);
SELECT count(*) FROM streamforge.ingest('j_ret', 'p1', 20, 'r1', 'k1', 3, 1);
SELECT count(*) FROM streamforge.ingest('j_ret', 'p0', 5, 'r10', 'k1', 30, 10);
SELECT 'journal|retention|' || pg_temp.journal('j_ret', 1);

-- binary snapshots: restore(p, checkpoint(p)) stores one (format 2; with
-- retention, format 3)
CREATE FUNCTION pg_temp.snap(name text) RETURNS text
LANGUAGE sql AS $$
SELECT streamforge.restore(name, streamforge.checkpoint(name));
SELECT pg_catalog.encode(snapshot, 'hex') FROM streamforge.pipeline
WHERE pipeline.name = $1
$$;

SELECT 'snapshot|single|' || pg_temp.snap('j_single');
SELECT 'snapshot|sequence|' || pg_temp.snap('j_seq');
-- format 3 (0.4.0): a pipeline with retention, its offsets past the horizon
-- forgotten
SELECT 'snapshot|format3-retention|' || pg_temp.snap('j_ret');
-- format 3: measures with variable-size states (distinct values, a
-- percentile, a sketch) and a nullable measure, two windows, late rows
SELECT streamforge.create_pipeline('s_meas', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('f', 10), streamforge.session('g', 4)], 3,
    measures => ARRAY['x', 'y NULL'],
    aggregates => ARRAY['count', 'sum(x)', 'count_distinct(x)',
        'percentile_disc(x, 0.5)', 'approx_count_distinct(y)', 'max_by(x, y)',
        'first(y)', 'avg(y)']);
SELECT count(*) FROM streamforge.ingest_measures_batch('s_meas',
    (SELECT pg_catalog.array_agg(ROW(CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END, i / 2,
                                     'q' || i, 'key' || (i % 5), (i * 7) % 60,
                                     ARRAY[i % 11 - 5, CASE WHEN i % 4 = 0 THEN NULL ELSE i END])::streamforge.measures_delivery
                                 ORDER BY i)
     FROM pg_catalog.generate_series(0, 79) i));
SELECT count(*) FROM streamforge.advance('s_meas', 'a', 40);
SELECT count(*) FROM streamforge.advance('s_meas', 'b', 30);
SELECT count(*) FROM streamforge.ingest_measures('s_meas', 'a', 40, 'late-m', 'key1', 2, ARRAY[1, 2]);
SELECT 'snapshot|format3-measures|' || pg_temp.snap('s_meas');

SELECT streamforge.create_pipeline('s_empty', ARRAY['only'],
    ARRAY[streamforge.fixed('w', 1)]);
SELECT 'snapshot|empty|' || pg_temp.snap('s_empty');

-- a sum above 2^64, many keys, sessions merging, late rows, idle partitions
SELECT streamforge.create_pipeline('s_mixed', ARRAY['a', 'b', 'c'],
    ARRAY[streamforge.fixed('f', 100), streamforge.session('g', 10),
          streamforge.sliding('s', 30, 10)], 3);
SELECT count(*) FROM streamforge.ingest_batch('s_mixed',
    (SELECT pg_catalog.array_agg(ROW(CASE i % 3 WHEN 0 THEN 'a' WHEN 1 THEN 'b' ELSE 'c' END,
                                     i / 3, 'm' || i, 'key' || (i % 17), (i * 7) % 250,
                                     CASE WHEN i < 6 THEN 9223372036854775807 ELSE i - 50 END)::streamforge.delivery
                                 ORDER BY i)
     FROM pg_catalog.generate_series(0, 119) i));
SELECT count(*) FROM streamforge.advance('s_mixed', 'a', 400);
SELECT count(*) FROM streamforge.advance('s_mixed', 'b', 300);
SELECT count(*) FROM streamforge.mark_idle('s_mixed', 'c');
SELECT count(*) FROM streamforge.ingest('s_mixed', 'a', 40, 'late-a', 'key1', 5, 1);
SELECT count(*) FROM streamforge.ingest('s_mixed', 'b', 40, 'm0', 'key0', 0, 9223372036854775807);
SELECT 'snapshot|mixed|' || pg_temp.snap('s_mixed');
