--
-- streamforge.metrics and pipeline_info's progress columns
-- (docs/monitoring.md, issue 26 items 3 and 4).
--
SELECT streamforge.create_pipeline('mx', ARRAY['web', 'app'],
    ARRAY[streamforge.fixed('per_minute', 60000)],
    time_unit => interval '1 millisecond');
SELECT streamforge.create_pipeline('mx_hidden', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)]);
SELECT count(*) FROM streamforge.ingest_batch('mx', ARRAY[
    ('web', 0, 'e1', '/a', 1000, 1), ('web', 1, 'e2', '/b', 2000, 1),
    ('web', 2, 'e2', '/b', 2000, 1), ('app', 0, 'e2', '/b', 2000, 1)]::streamforge.delivery[]);
SELECT count(*) FROM streamforge.advance('mx', 'web', 120000);
SELECT count(*) FROM streamforge.advance('mx', 'app', 60000);
SELECT count(*) FROM streamforge.ingest('mx', 'app', 1, 'e3', '/a', 1000, 1);
\x on
SELECT pipeline, deliveries, accepted, late_events, duplicates, replays,
       changes_emitted, live_buckets, visible_rows, remembered_identities,
       remembered_offsets, remembered_late_events, partitions,
       idle_partitions, watermark,
       watermark_lag_seconds > 0 AS lag_positive,
       journal_rows, journal_bytes > 0 AS journal_bytes_positive,
       snapshot_bytes, last_compaction, cache_loads
  FROM streamforge.metrics WHERE pipeline = 'mx';
-- a pipeline without a time unit has no wall clock to lag behind
SELECT pipeline, watermark, watermark_lag_seconds FROM streamforge.metrics
 WHERE pipeline = 'mx_hidden';
-- pipeline_info: who holds the watermark, the lag, the latest activity
SELECT name, watermark, holding_watermark, lag,
       last_delivery IS NOT NULL AS delivered, last_report IS NOT NULL AS reported
  FROM streamforge.pipeline_info WHERE name = 'mx';
\x off
-- a new backend loads the pipeline once; a definition change writes a
-- snapshot, and the journal starts again
\c -
SELECT count(*) FROM streamforge.watermark('mx');
SELECT pipeline, cache_loads FROM streamforge.metrics WHERE pipeline = 'mx';
SELECT count(*) FROM streamforge.set_lateness('mx', 1000);
SELECT pipeline, journal_rows, journal_bytes, snapshot_bytes > 0 AS has_snapshot,
       last_compaction <= now() AS compacted
  FROM streamforge.metrics WHERE pipeline = 'mx';
-- compaction off the write path: compact() only past min_journal_bytes
-- (0: always; the automatic decision is sql/compact_auto.sql),
-- and the state is the same after it, in a new backend too
SELECT count(*) FROM streamforge.ingest('mx', 'web', 3, 'e4', '/c', 130000, 1);
CREATE TABLE mx_before AS SELECT streamforge.checkpoint('mx') AS ck;
SELECT streamforge.compact('mx', 1000000);
SELECT journal_rows FROM streamforge.metrics WHERE pipeline = 'mx';
SELECT streamforge.compact('mx', 0);
SELECT journal_rows, snapshot_bytes > 0 AS has_snapshot
  FROM streamforge.metrics WHERE pipeline = 'mx';
\c -
SELECT ck = streamforge.checkpoint('mx') AS same_state FROM mx_before;
DROP TABLE mx_before;
SELECT streamforge.compact('missing');
-- consumer lag from the bookmarks (issue 25): none registered, then the
-- slowest consumer's changes and late events, as consumer_lag counts them
SELECT streamforge.create_pipeline('mx_out', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)]);
SELECT streamforge.configure_outputs('mx_out');
SELECT pipeline, consumers, max_change_lag, max_late_lag
  FROM streamforge.metrics WHERE pipeline = 'mx_out';
SELECT count(*) FROM streamforge.ingest_batch('mx_out', ARRAY[
    ('p', 0, 'a', 'k1', 1, 1), ('p', 1, 'b', 'k2', 2, 1),
    ('p', 2, 'c', 'k1', 12, 1)]::streamforge.delivery[]);
SELECT count(*) FROM streamforge.advance('mx_out', 'p', 20);
SELECT count(*) FROM streamforge.ingest('mx_out', 'p', 3, 'd', 'k1', 3, 1);
SELECT count(*) FROM streamforge.ingest('mx_out', 'p', 4, 'e', 'k2', 4, 1);
SELECT max(seq) AS last_seq FROM streamforge.changelog WHERE pipeline = 'mx_out';
SELECT max(late_seq) AS last_late_seq FROM streamforge.late_output WHERE pipeline = 'mx_out';
SELECT streamforge.register_consumer('mx_out', 'fast');
SELECT streamforge.register_consumer('mx_out', 'slow');
SELECT pipeline, consumers, max_change_lag, max_late_lag
  FROM streamforge.metrics WHERE pipeline = 'mx_out';
SELECT streamforge.commit_consumer('mx_out', 'fast', 3, 2);
SELECT streamforge.commit_consumer('mx_out', 'slow', 1, 0);
SELECT pipeline, consumers, max_change_lag, max_late_lag
  FROM streamforge.metrics WHERE pipeline = 'mx_out';
SELECT m.max_change_lag = l.changes_behind AND m.max_late_lag = l.late_behind AS agrees
  FROM streamforge.metrics AS m, streamforge.consumer_lag AS l
 WHERE m.pipeline = 'mx_out' AND l.pipeline = 'mx_out' AND l.name = 'slow';
SELECT streamforge.commit_consumer('mx_out', 'slow', 3, 2);
SELECT pipeline, consumers, max_change_lag, max_late_lag
  FROM streamforge.metrics WHERE pipeline = 'mx_out';
SELECT streamforge.drop_pipeline('mx_out');
-- the view shows the pipelines the role may read
CREATE ROLE metrics_reader;
GRANT USAGE ON SCHEMA streamforge TO metrics_reader;
SELECT streamforge.grant('mx', 'metrics_reader', 'read');
SET ROLE metrics_reader;
SELECT pipeline FROM streamforge.metrics ORDER BY pipeline;
SELECT name, holding_watermark FROM streamforge.pipeline_info ORDER BY name;
SELECT streamforge.compact('mx');
RESET ROLE;
SELECT streamforge.drop_pipeline('mx');
SELECT streamforge.drop_pipeline('mx_hidden');
REVOKE USAGE ON SCHEMA streamforge FROM metrics_reader;
DROP ROLE metrics_reader;

-- ------------------------------------------------------------------------
-- cache_loads counts every build of the pipeline
-- ------------------------------------------------------------------------
-- the metrics view's cache_loads counts every time
-- this backend builds the pipeline from its tables (here: the first load
-- and each restore), not only the first one (issue 24:
-- scripts/mutants-0.3.tsv: mutant cache-loads-stuck; metrics reads it
-- only once after a reconnect).
\c -
SELECT streamforge.create_pipeline('s4l', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
SELECT count(*) FROM streamforge.ingest('s4l', 'p', 0, 'e0', 'k', 1, 5);
\c -
SELECT streamforge.watermark('s4l');
SELECT cache_loads FROM streamforge.metrics WHERE pipeline = 's4l';
-- a cached pipeline is not loaded again
SELECT count(*) FROM streamforge.ingest('s4l', 'p', 1, 'e1', 'k', 2, 6);
SELECT cache_loads FROM streamforge.metrics WHERE pipeline = 's4l';
-- restore builds it from the checkpoint's state: one more
SELECT streamforge.restore('s4l', streamforge.checkpoint('s4l'));
SELECT count(*) FROM streamforge.live('s4l');
SELECT cache_loads FROM streamforge.metrics WHERE pipeline = 's4l';
SELECT streamforge.restore('s4l', streamforge.checkpoint('s4l'));
SELECT count(*) FROM streamforge.live('s4l');
SELECT cache_loads FROM streamforge.metrics WHERE pipeline = 's4l';
SELECT streamforge.drop_pipeline('s4l');
