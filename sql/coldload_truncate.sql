--
-- The background worker truncates the journal (issue 39, item 2: no write
-- call pays a compaction when the worker runs; src/persist/coldload.c,
-- "Truncation"): with a background snapshot stored, the worker deletes
-- the journal rows up to the background snapshot it started from, in the
-- same transaction, and the write path's compaction does not run while a
-- background snapshot covers all but a small journal.  Without a worker
-- the write path compacts as before.
--
CREATE FUNCTION trc_rows(pl text) RETURNS TABLE (pos bigint, truncated bigint)
LANGUAGE sql AS $$
    SELECT j.pos, CASE WHEN j.pos < 0 THEN ('x' || encode(substr(j.entry, 33, 8), 'hex'))::bit(64)::bigint END
      FROM streamforge.journal j JOIN streamforge.pipeline p ON p.id = j.pipeline_id
     WHERE p.name = pl ORDER BY j.pos $$;
-- wait (at most a minute) until pipeline pl has a background snapshot at
-- position -pos
CREATE FUNCTION trc_wait(pl text, pos bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1 .. 600 LOOP
        IF EXISTS (SELECT 1 FROM trc_rows(pl) s WHERE s.pos = -trc_wait.pos) THEN
            RETURN true;
        END IF;
        PERFORM pg_sleep(0.1);
    END LOOP;
    RETURN false;
END $$;
-- n events from f, on partitions p and q, one transaction
CREATE FUNCTION trc_batch(pl text, f int, n int) RETURNS bigint
LANGUAGE sql AS $$
    SELECT count(*) FROM streamforge.ingest_batch(pl,
        ARRAY(SELECT ROW(CASE WHEN i % 2 = 0 THEN 'p' ELSE 'q' END, i / 2, 'e' || i,
                         'k' || (i % 7), i, i)::streamforge.delivery
                FROM generate_series(f, f + n - 1) AS i ORDER BY i)) $$;
SELECT streamforge.create_pipeline('trc', ARRAY['p', 'q'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 20, 5),
          streamforge.session('g', 3)], lateness => 5);
SET streamforge.background_compaction_ms = 0;
-- each batch three times the history, so that each asks for a worker (the
-- replay since the last snapshot past the estimated decode of the next)
-- the first background snapshot starts from the stored (empty) snapshot:
-- nothing to truncate
SELECT trc_batch('trc', 0, 1000);
SELECT trc_wait('trc', 1);
SELECT * FROM trc_rows('trc');
-- the second starts from the first: rows up to 1 go
SELECT trc_batch('trc', 1000, 3000);
SELECT trc_wait('trc', 2);
SELECT * FROM trc_rows('trc');
-- and so on: the journal keeps the rows after the previous snapshot
SELECT trc_batch('trc', 4000, 12000);
SELECT trc_wait('trc', 3);
SELECT * FROM trc_rows('trc');
RESET streamforge.background_compaction_ms;
CREATE TABLE trc_state AS SELECT streamforge.checkpoint('trc') AS ck;
-- a new backend loads the latest background snapshot and the rows after it
\c -
SELECT ck = streamforge.checkpoint('trc') AS same_state FROM trc_state;
-- (a backend whose cached state is behind a truncation rebuilds:
-- test/specs/coldload_truncate.spec)
-- the write path's compaction: with a threshold of 1 kB, the journal
-- since the stored (empty) snapshot passes it at every call, but the
-- background snapshot covers all but this call's entry: no compaction,
-- the journal is appended to, and the snapshot stays empty
SET streamforge.compaction_threshold = '1kB';
SET streamforge.background_compaction_ms = -1;
SELECT trc_batch('trc', 16000, 1000);
SELECT snapshot IS NULL AS not_compacted FROM streamforge.pipeline WHERE name = 'trc';
SELECT * FROM trc_rows('trc');
UPDATE trc_state SET ck = streamforge.checkpoint('trc');
\c -
SELECT ck = streamforge.checkpoint('trc') AS same_state FROM trc_state;
-- a background snapshot that covers too little (here its header says it
-- covers no journal bytes at all): the write path compacts as before, a
-- new epoch, the journal and the background snapshot deleted
UPDATE streamforge.journal j
   SET entry = overlay(j.entry placing int8send(0) from 17 for 8)
  FROM streamforge.pipeline p
 WHERE p.id = j.pipeline_id AND p.name = 'trc' AND j.pos < 0;
SET streamforge.compaction_threshold = '1kB';
SET streamforge.background_compaction_ms = -1;
SELECT trc_batch('trc', 17000, 1000);
SELECT snapshot IS NOT NULL AS compacted FROM streamforge.pipeline WHERE name = 'trc';
SELECT * FROM trc_rows('trc');
UPDATE trc_state SET ck = streamforge.checkpoint('trc');
\c -
SELECT ck = streamforge.checkpoint('trc') AS same_state FROM trc_state;
-- without a worker the write path compacts as in 0.3.0: a pipeline with
-- no background snapshot, over the threshold, is compacted in the call
SET streamforge.compaction_threshold = '1kB';
SET streamforge.background_compaction_ms = -1;
SELECT streamforge.create_pipeline('trc_off', ARRAY['p', 'q'],
    ARRAY[streamforge.fixed('f', 10)]);
SELECT trc_batch('trc_off', 0, 1000);
SELECT trc_batch('trc_off', 1000, 1000);
SELECT snapshot IS NOT NULL AS compacted FROM streamforge.pipeline WHERE name = 'trc_off';
SELECT * FROM trc_rows('trc_off');
RESET streamforge.compaction_threshold;
RESET streamforge.background_compaction_ms;
SELECT streamforge.drop_pipeline('trc');
SELECT streamforge.drop_pipeline('trc_off');
DROP TABLE trc_state;
DROP FUNCTION trc_batch(text, int, int);
DROP FUNCTION trc_wait(text, bigint);
DROP FUNCTION trc_rows(text);
