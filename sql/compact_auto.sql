--
-- compact(pipeline) without min_journal_bytes: compaction by the estimated
-- cold load against streamforge.compact_target_load_ms (issue 26 item 5;
-- docs/monitoring.md, Cold loads and compaction; src/persist/compact.c).
--
SELECT streamforge.create_pipeline('ca', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
SHOW streamforge.compact_target_load_ms;
SELECT count(*) FROM streamforge.ingest('ca', 'p', 0, 'e0', 'k', 1, 1);
-- a journal of one entry loads in microseconds: nothing to do at 500 ms
SELECT streamforge.compact('ca');
SELECT journal_rows, snapshot_bytes FROM streamforge.metrics WHERE pipeline = 'ca';
-- min_journal_bytes 0 still compacts whatever the estimate
SELECT streamforge.compact('ca', 0);
SELECT journal_rows, snapshot_bytes > 0 AS has_snapshot
  FROM streamforge.metrics WHERE pipeline = 'ca';
-- a target of 0: any journal whose replay is at least a quarter of the
-- snapshot's decode.  An empty journal is never compacted.
SET streamforge.compact_target_load_ms = 0;
SELECT streamforge.compact('ca');
-- the snapshot of 2,000 events against one small entry: not worth a
-- rewrite of the whole state
SELECT count(*) FROM streamforge.ingest_batch('ca',
    ARRAY(SELECT ROW('p', i, 'e' || i, 'k' || (i % 50), i, i)::streamforge.delivery
            FROM generate_series(1, 2000) AS i ORDER BY i));
SELECT streamforge.compact('ca', 0);
SELECT count(*) FROM streamforge.ingest('ca', 'p', 2001, 'x1', 'k', 2001, 1);
SELECT streamforge.compact('ca');
SELECT journal_rows FROM streamforge.metrics WHERE pipeline = 'ca';
-- four times as many events in the journal: its replay costs more than a
-- quarter of the decode, so it is compacted
SELECT count(*) FROM streamforge.ingest_batch('ca',
    ARRAY(SELECT ROW('p', i, 'e' || i, 'k' || (i % 50), i, i)::streamforge.delivery
            FROM generate_series(2002, 10001) AS i ORDER BY i));
CREATE TABLE ca_before AS SELECT streamforge.checkpoint('ca') AS ck;
SELECT streamforge.compact('ca');
SELECT journal_rows FROM streamforge.metrics WHERE pipeline = 'ca';
SELECT ck = streamforge.checkpoint('ca') AS same_state FROM ca_before;
-- -1: compact() never decides to compact by itself
SELECT count(*) FROM streamforge.ingest('ca', 'p', 10002, 'x2', 'k', 10002, 1);
SET streamforge.compact_target_load_ms = -1;
SELECT streamforge.compact('ca');
SELECT streamforge.compact('ca', 1);
RESET streamforge.compact_target_load_ms;
-- the state is the same in a new backend, which loads the new snapshot
-- and the entry after it
UPDATE ca_before SET ck = streamforge.checkpoint('ca');
\c -
SELECT ck = streamforge.checkpoint('ca') AS same_state FROM ca_before;
-- the setting's bounds
SET streamforge.compact_target_load_ms = -2;
SET streamforge.compact_target_load_ms = '2s';
SHOW streamforge.compact_target_load_ms;
RESET streamforge.compact_target_load_ms;
-- admin only, even when there is nothing to compact
CREATE ROLE compact_reader;
GRANT USAGE ON SCHEMA streamforge TO compact_reader;
SELECT streamforge.grant('ca', 'compact_reader', 'read');
SET ROLE compact_reader;
SELECT streamforge.compact('ca');
SELECT streamforge.compact('ca', 1000000000);
RESET ROLE;
DROP TABLE ca_before;
SELECT streamforge.drop_pipeline('ca');
REVOKE USAGE ON SCHEMA streamforge FROM compact_reader;
DROP ROLE compact_reader;
