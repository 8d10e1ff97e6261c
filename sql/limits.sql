-- limits: the resource limits of docs/security.md ("Resource limits"),
-- each refused cleanly and before anything changes (issue 11).
SET client_min_messages = warning;
CREATE SCHEMA lim;
SET search_path = lim, public;

-- helpers to edit a small (uncompressed) checkpoint document and wrap it
-- in a correct envelope again (shared with the other checkpoint tests)
\i test/sql/checkpoint_forge.sql
-- 'ok', or SQLSTATE: message (detail)
CREATE FUNCTION try(stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    st text; msg text; det text;
BEGIN
    EXECUTE stmt;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
                            det = PG_EXCEPTION_DETAIL;
    RETURN st || ': ' || msg || coalesce(' | ' || nullif(det, ''), '');
END $$;
RESET client_min_messages;

-- Definitions: refused at create_pipeline when a later part could not
-- load, compact or checkpoint them; the largest accepted ones work.
SELECT try($$SELECT streamforge.create_pipeline('lim_parts',
    (SELECT array_agg('p' || i) FROM generate_series(1, 32768) i),
    ARRAY[streamforge.fixed('f', 10)])$$);
SELECT try($$SELECT streamforge.create_pipeline('lim_wins', ARRAY['p'],
    (SELECT array_agg(streamforge.sliding('s' || i, 100000, 1))
       FROM generate_series(1, 11) i))$$);
SELECT try($$SELECT streamforge.create_pipeline('lim_wins', ARRAY['p'],
    (SELECT array_agg(streamforge.fixed('f' || i, 10))
       FROM generate_series(1, 1000001) i))$$);
SELECT count(*) AS pipelines FROM streamforge.pipelines WHERE name LIKE 'lim_%';
-- 32767 partitions: ingest, compact (threshold 0), checkpoint, restore,
-- and the state read back
SELECT streamforge.create_pipeline('lim_parts',
    (SELECT array_agg('p' || i) FROM generate_series(1, 32767) i),
    ARRAY[streamforge.fixed('f', 10)]);
SET streamforge.compaction_threshold = 0;
SELECT count(*) FROM streamforge.ingest('lim_parts', 'p32767', 0, 'e', 'k', 1, 1);
SELECT count(*) FROM streamforge.advance('lim_parts', 'p1', 5);
RESET streamforge.compaction_threshold;
SELECT streamforge.restore('lim_parts', streamforge.checkpoint('lim_parts'));
SELECT count(*), max(consumed_offset) FROM streamforge.partitions('lim_parts');
-- changing a definition cannot pass the limits either
SELECT try($$SELECT * FROM streamforge.add_partition('lim_parts', 'one_more')$$);
SELECT streamforge.drop_pipeline('lim_parts');
-- windows putting one event into exactly 1,000,000 buckets are accepted
SELECT streamforge.create_pipeline('lim_wins', ARRAY['p'],
    (SELECT array_agg(streamforge.sliding('s' || i, 100000, 1))
       FROM generate_series(1, 10) i));
SELECT try($$SELECT * FROM streamforge.add_window('lim_wins', streamforge.fixed('one_more', 10))$$);
SELECT streamforge.drop_pipeline('lim_wins');
-- the most windows: ingest, compact, checkpoint, restore
SELECT streamforge.create_pipeline('lim_wins', ARRAY['p'],
    (SELECT array_agg(streamforge.fixed('f' || i, 10))
       FROM generate_series(1, 65535) i));
SET streamforge.compaction_threshold = 0;
SELECT count(*) FROM streamforge.ingest('lim_wins', 'p', 0, 'e', 'k', 1, 1);
SELECT count(*) FROM streamforge.advance('lim_wins', 'p', 10);
RESET streamforge.compaction_threshold;
SELECT streamforge.restore('lim_wins', streamforge.checkpoint('lim_wins'));
SELECT live_buckets, visible_rows FROM streamforge.stats('lim_wins');
SELECT streamforge.drop_pipeline('lim_wins');

-- Live buckets: streamforge.max_live_buckets refuses the event that could
-- pass it, before it changes anything; finalized buckets make room again.
SELECT streamforge.create_pipeline('lim_live', ARRAY['p'],
    ARRAY[streamforge.sliding('s', 5, 1)]);
SET streamforge.max_live_buckets = 10;
SELECT count(*) FROM streamforge.ingest('lim_live', 'p', 0, 'e0', 'a', 100, 1);
SELECT count(*) FROM streamforge.ingest('lim_live', 'p', 1, 'e1', 'b', 100, 1);
SELECT try($$SELECT * FROM streamforge.ingest('lim_live', 'p', 2, 'e2', 'c', 100, 1)$$);
SELECT live_buckets, deliveries FROM streamforge.stats('lim_live');
SELECT count(*) FROM streamforge.advance('lim_live', 'p', 200);
SELECT count(*) FROM streamforge.ingest('lim_live', 'p', 2, 'e2', 'c', 300, 1);
SELECT live_buckets, deliveries FROM streamforge.stats('lim_live');
RESET streamforge.max_live_buckets;
SHOW streamforge.max_live_buckets;

-- Checkpoints: streamforge.max_checkpoint_size refuses a larger document
-- before inflating it; only superusers may change it.
SELECT count(*) FROM streamforge.ingest('lim_live', 'p', 3, repeat('x', 9000), 'k', 400, 1);
SELECT get_byte(streamforge.checkpoint('lim_live'), 11) AS zlib_flag;
-- taken under the default limit: checkpoint() refuses what restore would
SELECT streamforge.checkpoint('lim_live') AS live_cp \gset
SET streamforge.max_checkpoint_size = '4kB';
SELECT try($$SELECT streamforge.restore('lim_live', '$$ || :'live_cp' || $$')$$);
SELECT try($$SELECT streamforge.inspect_checkpoint('$$ || :'live_cp' || $$')$$);
-- a corrupt envelope is still SF003, whatever it declares
SELECT try($$SELECT streamforge.inspect_checkpoint(set_byte('$$ || :'live_cp' || $$', 40, 0))$$);
SELECT try($$SELECT streamforge.checkpoint('lim_live')$$);
RESET streamforge.max_checkpoint_size;
SHOW streamforge.max_checkpoint_size;
SELECT try($$SELECT streamforge.restore('lim_live', streamforge.checkpoint('lim_live'))$$);
CREATE ROLE regress_lim_user;
GRANT USAGE ON SCHEMA lim TO regress_lim_user;
SET ROLE regress_lim_user;
SELECT try($$SET streamforge.max_checkpoint_size = '1GB'$$);
SELECT try($$SET streamforge.max_live_buckets = 0$$);
RESET ROLE;
REVOKE USAGE ON SCHEMA lim FROM regress_lim_user;
DROP ROLE regress_lim_user;

-- State past streamforge.max_checkpoint_size (1 kB here, its minimum,
-- for the 1 GB one document holds at most): checkpoint() refuses it, since
-- restore would refuse the checkpoint anyway.  Compaction does not: a
-- pipeline with retention stores the binary snapshot too (0.4.0, version
-- 3; until 0.3.0 its snapshot was a checkpoint document, and compaction
-- warned and journaled instead), bounded by 1 GB only, and compacts when
-- its journal passes four times that snapshot.  Every write commits, and
-- a new session rebuilds the state from the snapshot plus the journal.
SELECT streamforge.create_pipeline('lim_big', ARRAY['p'],
    ARRAY[streamforge.fixed('f', 10)], 0, 1000);
SET streamforge.compaction_threshold = 0;
SET streamforge.max_checkpoint_size = 1;
SHOW streamforge.max_checkpoint_size;
-- a small state compacts (the first write) and checkpoints
SELECT count(*) FROM streamforge.ingest('lim_big', 'p', 0, 'e0', 'k0', 1, 1);
SELECT snapshot_version = version AS compacted,
       (SELECT count(*) FROM streamforge.journal WHERE pipeline_id = p.id) AS journal_rows
  FROM streamforge.pipeline p WHERE name = 'lim_big';
SELECT length(streamforge.checkpoint('lim_big')) > 0 AS checkpoint_ok;
-- events with 300-byte ids take the document past 1 kB
SELECT count(*) FROM streamforge.ingest('lim_big', 'p', 1, 'e1' || repeat('x', 300), 'k1', 1, 1);
SELECT count(*) FROM streamforge.ingest('lim_big', 'p', 2, 'e2' || repeat('x', 300), 'k2', 2, 2);
SELECT count(*) FROM streamforge.ingest('lim_big', 'p', 3, 'e3' || repeat('x', 300), 'k3', 3, 3);
SELECT try($$SELECT streamforge.checkpoint('lim_big')$$);
SELECT count(*) FROM streamforge.ingest('lim_big', 'p', 4, 'e4' || repeat('x', 300), 'k4', 4, 4);
SELECT count(*) FROM streamforge.ingest('lim_big', 'p', 5, 'e5' || repeat('x', 300), 'k5', 5, 5);
SELECT count(*) FROM streamforge.ingest('lim_big', 'p', 6, 'e6' || repeat('x', 300), 'k6', 6, 6);
SELECT count(*) FROM streamforge.ingest('lim_big', 'p', 7, 'e7' || repeat('x', 300), 'k7', 7, 7);
SELECT count(*) FROM streamforge.ingest('lim_big', 'p', 7, 'e7' || repeat('x', 300), 'k7', 7, 7) AS replay;
SELECT * FROM streamforge.advance('lim_big', 'p', 10);
SELECT count(*) FROM streamforge.ingest('lim_big', 'p', 8, 'e8' || repeat('x', 300), 'k8', 12, 8);
-- eight more calls in one statement
SELECT count(*) FROM generate_series(9, 16) i,
    streamforge.ingest('lim_big', 'p', i, 'e' || i || repeat('x', 300), 'k' || i % 2, 20 + i, i);
SELECT encode(substring(snapshot FROM 1 FOR 7), 'escape') AS snapshot_magic,
       get_byte(snapshot, 8) AS snapshot_format,
       (SELECT count(*) FROM streamforge.journal WHERE pipeline_id = p.id) < 17 AS compacted_since
  FROM streamforge.pipeline p WHERE name = 'lim_big';
SELECT try($$SELECT streamforge.checkpoint('lim_big')$$);
-- a pipeline without retention stores the binary snapshot, bounded by
-- 1 GB only: it compacts, though its checkpoint is refused
SELECT streamforge.create_pipeline('lim_bin', ARRAY['p'],
    ARRAY[streamforge.fixed('f', 10)]);
SELECT count(*) FROM generate_series(0, 7) i,
    streamforge.ingest('lim_bin', 'p', i, 'e' || i || repeat('x', 300), 'k' || i, i, i);
SELECT snapshot_version = version AS compacted, encode(substring(snapshot FROM 1 FOR 7), 'escape') AS snapshot_magic,
       (SELECT count(*) FROM streamforge.journal WHERE pipeline_id = p.id) AS journal_rows
  FROM streamforge.pipeline p WHERE name = 'lim_bin';
SELECT try($$SELECT streamforge.checkpoint('lim_bin')$$);
-- a new definition stores the binary snapshot too (0.3.0, issue 21; 0.2.0
-- stored a checkpoint document and refused): accepted, though the
-- pipeline's checkpoint is still refused
SELECT try($$SELECT * FROM streamforge.add_window('lim_bin', streamforge.fixed('g', 20))$$);
SELECT encode(substring(snapshot FROM 1 FOR 7), 'escape') AS snapshot_magic
  FROM streamforge.pipeline p WHERE name = 'lim_bin';
SELECT try($$SELECT streamforge.checkpoint('lim_bin')$$);
RESET streamforge.max_checkpoint_size;
SELECT try($$SELECT streamforge.checkpoint('lim_big')$$);
\c
SET search_path = lim, public;
-- a new session: rebuilt from the snapshot plus the journal; the
-- settings are reset to their defaults
SELECT * FROM streamforge.visible('lim_big') ORDER BY window_start, key;
SHOW streamforge.max_checkpoint_size;
SELECT * FROM streamforge.live('lim_big') ORDER BY window_start, key;
SELECT deliveries, accepted, offset_replays, changes_emitted, live_buckets
  FROM streamforge.stats('lim_big');
SELECT partition, consumed_offset FROM streamforge.partitions('lim_big');
SELECT count(*) FROM streamforge.live('lim_bin');
-- and under the default limit, checkpoints work again
SELECT streamforge.checkpoint('lim_big') AS big_cp \gset
SELECT count(*) FROM streamforge.ingest('lim_big', 'p', 17, 'e17', 'k17', 13, 17);
-- the checkpoint taken before e17 restores: k17 is gone
SELECT streamforge.restore('lim_big', :'big_cp');
SELECT * FROM streamforge.live('lim_big') ORDER BY window_start, key;
SELECT try($$SELECT streamforge.checkpoint('lim_bin')$$);
SELECT streamforge.drop_pipeline('lim_big');
SELECT streamforge.drop_pipeline('lim_bin');

-- Messages repeat at most 64 bytes of a name, event id or key
SELECT try($$SELECT * FROM streamforge.ingest(repeat('n', 1048576), 'p', 0, 'e', 'k', 1, 1)$$);
SELECT try($$SELECT * FROM streamforge.ingest('lim_live', repeat('q', 1048576), 0, 'e', 'k', 1, 1)$$);
SELECT try($$SELECT streamforge.create_pipeline(repeat('é', 40), ARRAY['p'], ARRAY[streamforge.fixed('f', 10)])$$);
SELECT count(*) FROM streamforge.ingest('lim_live', 'p', 4, repeat('i', 1048576), repeat('k', 1048576), 500, 1);
SELECT try($$SELECT * FROM streamforge.ingest('lim_live', 'p', 5, repeat('i', 1048576), 'other', 500, 1)$$);
SELECT try($$SELECT * FROM streamforge.ingest('lim_live', 'p', 4, 'other', 'k', 500, 1)$$);
SELECT streamforge.drop_pipeline('lim_live');

-- A read-only transaction: every write call names the pipeline
SELECT streamforge.create_pipeline('lim_ro', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)]);
SELECT streamforge.checkpoint('lim_ro') AS ro_cp \gset
BEGIN READ ONLY;
SELECT try($$SELECT * FROM streamforge.ingest('lim_ro', 'p', 0, 'e', 'k', 1, 1)$$);
SELECT try($$SELECT * FROM streamforge.ingest_batch('lim_ro', ARRAY[ROW('p', 0, 'e', 'k', 1, 1)]::streamforge.delivery[])$$);
SELECT try($$SELECT * FROM streamforge.advance('lim_ro', 'p', 1)$$);
SELECT try($$SELECT * FROM streamforge.mark_idle('lim_ro', 'p')$$);
SELECT try($$SELECT streamforge.restore('lim_ro', '$$ || :'ro_cp' || $$')$$);
SELECT try($$SELECT streamforge.drop_pipeline('lim_ro')$$);
SELECT try($$SELECT streamforge.grant('lim_ro', 'public', 'read')$$);
SELECT try($$SELECT streamforge.configure_outputs('lim_ro')$$);
SELECT try($$SELECT streamforge.create_pipeline('lim_ro2', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)])$$);
-- reads work
SELECT streamforge.watermark('lim_ro'), length(streamforge.checkpoint('lim_ro')) > 0 AS cp;
COMMIT;
SELECT streamforge.drop_pipeline('lim_ro');

-- Counters: a restored sequence at the largest bigint is accepted, and
-- the next change is refused instead of wrapping to a negative seq
SELECT streamforge.create_pipeline('lim_seq', ARRAY['a', 'b'], ARRAY[streamforge.fixed('f', 10)]);
SELECT count(*) FROM streamforge.ingest('lim_seq', 'a', 0, 'e0', 'k', 1, 1);
SELECT count(*) FROM streamforge.advance('lim_seq', 'a', 5);
SELECT count(*) FROM streamforge.advance('lim_seq', 'b', 5);
SELECT doc(streamforge.checkpoint('lim_seq')) AS seq_doc \gset
SELECT substring(:'seq_doc' FROM '"sequence":[0-9]+') AS before;
SELECT try(format('SELECT streamforge.restore(%L, %L::bytea)', 'lim_seq',
    wrap(regexp_replace(:'seq_doc', '"sequence":[0-9]+',
                        '"sequence":9223372036854775807'))));
SELECT changes_emitted FROM streamforge.stats('lim_seq');
SELECT count(*) FROM streamforge.ingest('lim_seq', 'a', 1, 'e1', 'k', 6, 1);
SELECT count(*) FROM streamforge.advance('lim_seq', 'a', 20);
SELECT try($$SELECT * FROM streamforge.advance('lim_seq', 'b', 20)$$);
SELECT * FROM streamforge.partitions('lim_seq');
-- still usable: a call that emits nothing, and reads
SELECT count(*) FROM streamforge.ingest('lim_seq', 'a', 0, 'e0', 'k', 1, 1);
SELECT changes_emitted FROM streamforge.stats('lim_seq');
SELECT streamforge.drop_pipeline('lim_seq');

-- The clock: a watermark while an active partition never reported is
-- not a state the engine can reach; restore refuses it
SELECT streamforge.create_pipeline('lim_clock', ARRAY['a', 'b'], ARRAY[streamforge.fixed('f', 10)]);
SELECT count(*) FROM streamforge.advance('lim_clock', 'a', 5);
SELECT count(*) FROM streamforge.mark_idle('lim_clock', 'b');
SELECT streamforge.watermark('lim_clock');
SELECT doc(streamforge.checkpoint('lim_clock')) AS clock_doc \gset
SELECT try(format('SELECT streamforge.restore(%L, %L::bytea)', 'lim_clock',
    wrap(:'clock_doc')));
SELECT try(format('SELECT streamforge.restore(%L, %L::bytea)', 'lim_clock',
    wrap(edit(:'clock_doc', '{"idle":true,"partition":"b","progress":null}',
                            '{"idle":false,"partition":"b","progress":null}'))));
SELECT streamforge.drop_pipeline('lim_clock');

SET client_min_messages = warning;
DROP SCHEMA lim CASCADE;
