--
-- Background snapshots (issue 39; docs/persistence.md, "Background
-- snapshots"; src/persist/compact.c): a write call whose pipeline's
-- estimated replay passes streamforge.background_compaction_ms (and the
-- estimated decode of its snapshot) starts a worker at commit, which stores
-- a snapshot at a negative journal position without taking the pipeline's
-- lock; a new backend loads from it and replays only the rows after it.
--
CREATE FUNCTION bgc_side(pl text) RETURNS TABLE (pos bigint, magic bytea)
LANGUAGE sql AS $$
    SELECT j.pos, substr(j.entry, 1, 8) FROM streamforge.journal j
      JOIN streamforge.pipeline p ON p.id = j.pipeline_id
     WHERE p.name = pl AND j.pos < 0 ORDER BY j.pos $$;
-- wait (at most a minute) until pipeline pl has a background snapshot at
-- position -pos
CREATE FUNCTION bgc_wait(pl text, pos bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1 .. 600 LOOP
        IF EXISTS (SELECT 1 FROM bgc_side(pl) s WHERE s.pos = -bgc_wait.pos) THEN
            RETURN true;
        END IF;
        PERFORM pg_sleep(0.1);
    END LOOP;
    RETURN false;
END $$;
SELECT streamforge.create_pipeline('bgc', ARRAY['p', 'q'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 20, 5),
          streamforge.session('g', 3)], lateness => 5);
SHOW streamforge.background_compaction_ms;
-- the metrics' estimate of a cold load: nothing to load yet
SELECT estimated_load_ms FROM streamforge.metrics WHERE pipeline = 'bgc';
-- small calls under the default budget (100 ms of replay): no worker
SELECT count(*) FROM streamforge.ingest('bgc', 'p', 0, 'e0', 'k0', 0, 1);
SELECT count(*) FROM streamforge.advance('bgc', 'p', 0);
SELECT pg_sleep(0.5);
SELECT * FROM bgc_side('bgc');
-- a budget of 0: the next committed write asks for a snapshot
SET streamforge.background_compaction_ms = 0;
SELECT count(*) FROM streamforge.ingest_batch('bgc',
    ARRAY(SELECT ROW(CASE WHEN i % 2 = 0 THEN 'p' ELSE 'q' END, i / 2, 'e' || i,
                     'k' || (i % 7), i, i)::streamforge.delivery
            FROM generate_series(1, 3000) AS i ORDER BY i));
SELECT journal_rows, estimated_load_ms > 0 AND estimated_load_ms < 1000 AS sane
  FROM streamforge.metrics WHERE pipeline = 'bgc';
SELECT bgc_wait('bgc', 3);
SELECT * FROM bgc_side('bgc');
RESET streamforge.background_compaction_ms;
CREATE TABLE bgc_state AS SELECT streamforge.checkpoint('bgc') AS ck;
-- the rows the background snapshot covers are no longer needed for a load
-- (deleted here only to show it: the next background snapshot deletes
-- them, coldload_truncate)
DELETE FROM streamforge.journal j USING streamforge.pipeline p
 WHERE p.id = j.pipeline_id AND p.name = 'bgc' AND j.pos BETWEEN 1 AND 3;
\c -
SELECT ck = streamforge.checkpoint('bgc') AS same_state FROM bgc_state;
SELECT count(*) FROM streamforge.journal j JOIN streamforge.pipeline p
    ON p.id = j.pipeline_id WHERE p.name = 'bgc' AND j.pos > 0;
-- later calls replay after it, in a new backend as in this one
SET streamforge.background_compaction_ms = -1;
SELECT count(*) FROM streamforge.advance('bgc', 'q', 2990);
SELECT count(*) FROM streamforge.ingest('bgc', 'q', 1500, 'x', 'k1', 3001, 5);
UPDATE bgc_state SET ck = streamforge.checkpoint('bgc');
\c -
SELECT ck = streamforge.checkpoint('bgc') AS same_state FROM bgc_state;
-- the background snapshot is not a journal row
SELECT journal_rows, estimated_load_ms > 0 AND estimated_load_ms < 1000 AS sane
  FROM streamforge.metrics WHERE pipeline = 'bgc';
-- a catching-up backend still finds every row after its own position
SELECT count(*) FROM streamforge.ingest('bgc', 'q', 1501, 'y', 'k1', 3002, 5);
UPDATE bgc_state SET ck = streamforge.checkpoint('bgc');
-- a compaction starts a new journal epoch and empties the journal, the
-- background snapshot with it
SELECT streamforge.compact('bgc', 0);
SELECT * FROM bgc_side('bgc');
SELECT ck = streamforge.checkpoint('bgc') AS same_state FROM bgc_state;
-- a background snapshot of another epoch is ignored: here the old state's
-- snapshot, planted at a high position of the new epoch
SET streamforge.background_compaction_ms = 0;
SELECT streamforge.create_pipeline('bgc_old', ARRAY['p'],
    ARRAY[streamforge.fixed('f', 10)]);
SELECT count(*) FROM streamforge.ingest('bgc_old', 'p', 0, 'e0', 'k0', 0, 1);
SELECT bgc_wait('bgc_old', 1);
RESET streamforge.background_compaction_ms;
INSERT INTO streamforge.journal (pipeline_id, pos, entry)
SELECT p.id, -1000, j.entry
  FROM streamforge.pipeline p, streamforge.journal j, streamforge.pipeline o
 WHERE p.name = 'bgc' AND o.name = 'bgc_old' AND j.pipeline_id = o.id
   AND j.pos = -1;
SELECT count(*) FROM streamforge.ingest('bgc', 'q', 1502, 'z', 'k1', 3003, 5);
UPDATE bgc_state SET ck = streamforge.checkpoint('bgc');
\c -
SELECT ck = streamforge.checkpoint('bgc') AS same_state FROM bgc_state;
-- a damaged background snapshot of the current epoch is an error, not a
-- crash: too short for its header, or a truncated snapshot
UPDATE streamforge.journal j
   SET entry = substr(j.entry, 1, 8) || int8send(p.snapshot_version)
               || '\x00'::bytea
  FROM streamforge.pipeline p
 WHERE p.id = j.pipeline_id AND p.name = 'bgc' AND j.pos = -1000;
\c -
SELECT streamforge.watermark('bgc');
UPDATE streamforge.journal j
   SET entry = substr(j.entry, 1, 8) || int8send(p.snapshot_version)
               || substr(o.entry, 17, 100)
  FROM streamforge.pipeline p, streamforge.journal o, streamforge.pipeline op
 WHERE p.id = j.pipeline_id AND p.name = 'bgc' AND j.pos = -1000
   AND op.name = 'bgc_old' AND o.pipeline_id = op.id AND o.pos = -1;
\c -
SELECT streamforge.watermark('bgc');
DELETE FROM streamforge.journal j USING streamforge.pipeline p
 WHERE p.id = j.pipeline_id AND p.name = 'bgc' AND j.pos < 0;
SELECT ck = streamforge.checkpoint('bgc') AS same_state FROM bgc_state;
-- the estimate prices the snapshot a cold load decodes: binary for every
-- pipeline since 0.4.0 (about 0.4 us an identity; a measures pipeline's a
-- little more, its measure words), where until 0.3.0 a pipeline with
-- retention or measures kept the canonical checkpoint, whose decode
-- parses, sorts and re-encodes (about 5 us an identity, more per
-- measure); the same 20,000 identities in each pipeline (retention far
-- behind them), no background snapshot
SET streamforge.background_compaction_ms = -1;
SELECT streamforge.create_pipeline('est_bin', ARRAY['p'],
    ARRAY[streamforge.fixed('f', 10)]);
SELECT streamforge.create_pipeline('est_ret', ARRAY['p'],
    ARRAY[streamforge.fixed('f', 10)], retention => 1000000);
SELECT streamforge.create_pipeline('est_mes', ARRAY['p'],
    ARRAY[streamforge.fixed('f', 10)], measures => ARRAY['a'],
    aggregates => ARRAY['count', 'sum(a)']);
CREATE FUNCTION est_feed(f int, t int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM count(*) FROM unnest(ARRAY['est_bin', 'est_ret']) AS pl,
        LATERAL streamforge.ingest_batch(pl,
            ARRAY(SELECT ROW('p', i, 'e' || i, 'k' || (i % 10), i, 1)::streamforge.delivery
                    FROM generate_series(f, t - 1) AS i ORDER BY i));
    PERFORM count(*) FROM streamforge.ingest_measures_batch('est_mes',
        ARRAY(SELECT ROW('p', i, 'e' || i, 'k' || (i % 10), i, ARRAY[i])::streamforge.measures_delivery
                FROM generate_series(f, t - 1) AS i ORDER BY i));
END $$;
SELECT est_feed(0, 20000);
SELECT streamforge.compact(pl, 0) FROM unnest(ARRAY['est_bin', 'est_ret', 'est_mes']) AS pl;
SELECT pipeline, remembered_identities, journal_rows,
       estimated_load_ms BETWEEN 2 AND 40 AS binary_priced,
       estimated_load_ms > 60 AS checkpoint_priced
  FROM streamforge.metrics WHERE pipeline LIKE 'est%' ORDER BY pipeline;
SELECT (SELECT estimated_load_ms FROM streamforge.metrics WHERE pipeline = 'est_ret') /
       (SELECT estimated_load_ms FROM streamforge.metrics WHERE pipeline = 'est_bin') < 2
       AS retention_alike,
       (SELECT estimated_load_ms FROM streamforge.metrics WHERE pipeline = 'est_mes') >
       (SELECT estimated_load_ms FROM streamforge.metrics WHERE pipeline = 'est_ret')
       AS measures_dearer;
-- compact()'s default decision follows: 20,000 more events journal a
-- replay above a quarter of the binary snapshot's decode, so each is worth
-- compacting (until 0.3.0 the retention and measures pipelines declined:
-- below a quarter of their checkpoint's decode)
SELECT est_feed(20000, 40000);
SET streamforge.compact_target_load_ms = 1;
SELECT pl, streamforge.compact(pl) FROM unnest(ARRAY['est_bin', 'est_ret', 'est_mes']) AS pl;
RESET streamforge.compact_target_load_ms;
SELECT pipeline, journal_rows FROM streamforge.metrics WHERE pipeline LIKE 'est%' ORDER BY pipeline;
RESET streamforge.background_compaction_ms;
SELECT streamforge.drop_pipeline(pl) FROM unnest(ARRAY['est_bin', 'est_ret', 'est_mes']) AS pl;
DROP FUNCTION est_feed(int, int);
-- the setting
SET streamforge.background_compaction_ms = -2;
SET streamforge.background_compaction_ms = '1s';
SHOW streamforge.background_compaction_ms;
RESET streamforge.background_compaction_ms;
SELECT streamforge.drop_pipeline('bgc');
SELECT streamforge.drop_pipeline('bgc_old');
DROP TABLE bgc_state;
DROP FUNCTION bgc_wait(text, bigint);
DROP FUNCTION bgc_side(text);
