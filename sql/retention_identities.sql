-- retention_identities: docs/semantics.md "Retention", the retention argument and rule 1
-- (identities below the horizon H = watermark - lateness - retention are
-- forgotten: a later delivery of the event_id is a new unique event).

-- the argument: NULL keeps everything; negative is 22023, checked after
-- existence and after the other arguments
SELECT streamforge.create_pipeline('ri', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], lateness => 0, retention => 5);
SELECT streamforge.create_pipeline('ri', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], 0, -1);
SELECT streamforge.create_pipeline('ri_bad', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], -1, -1);
SELECT streamforge.create_pipeline('ri_bad', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], 0, -1);
SELECT streamforge.create_pipeline('ri_all', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)]);
SELECT name, lateness, retention FROM streamforge.pipeline_info
 WHERE name LIKE 'ri%' ORDER BY name;

-- no watermark, no horizon: everything is remembered
SELECT * FROM streamforge.ingest('ri', 'p', 0, 'e1', 'k', 3, 10);
SELECT * FROM streamforge.ingest('ri', 'p', 1, 'e2', 'k', 17, 1);
SELECT * FROM streamforge.ingest('ri', 'p', 2, 'e1', 'k', 3, 11);   -- SF002

-- watermark 20: H = 20 - 0 - 5 = 15; e1 (time 3) is forgotten, e2 (17) not
SELECT seq, op, window_start, count, sum FROM streamforge.advance('ri', 'p', 20);
SELECT remembered_identities, accepted, late_events
  FROM streamforge.stats('ri');
SELECT * FROM streamforge.ingest('ri', 'p', 2, 'e2', 'k', 17, 99);  -- SF002 still

-- e1 again, even with another value: a new unique event, late (3 < 20)
SELECT * FROM streamforge.ingest('ri', 'p', 2, 'e1', 'k', 3, 99);
SELECT late_seq, source_offset, event_id, event_time, value, watermark
  FROM streamforge.late_events('ri');
-- that late identity is below H too: forgotten at once, so once more
SELECT * FROM streamforge.ingest('ri', 'p', 3, 'e1', 'k', 3, 99);
SELECT late_seq, source_offset, event_id, value FROM streamforge.late_events('ri');

-- event_time = H is remembered (the rule is event_time < H)
SELECT * FROM streamforge.ingest('ri', 'p', 4, 'e3', 'k', 15, 1);
SELECT * FROM streamforge.ingest('ri', 'p', 5, 'e3', 'k', 15, 2);   -- SF002
SELECT * FROM streamforge.ingest('ri', 'p', 5, 'e3', 'k', 15, 1);   -- a duplicate
SELECT * FROM streamforge.advance('ri', 'p', 21);                   -- H = 16
SELECT * FROM streamforge.ingest('ri', 'p', 6, 'e3', 'k', 15, 2);   -- new, late
SELECT late_seq, source_offset, event_id, event_time, value, watermark
  FROM streamforge.late_events('ri');

-- a forgotten event_id delivered with a time at or above H is accepted
-- into the windows again (with lateness 0 it must be >= the watermark)
SELECT seq, op, window_start, count, sum
  FROM streamforge.ingest('ri', 'p', 7, 'e1', 'k', 25, 7);
SELECT seq, op, window_start, count, sum FROM streamforge.advance('ri', 'p', 30);
SELECT window_start, window_end, count, sum FROM streamforge.live('ri');

-- the same calls without retention: identity conflicts, as in 0.1.0
SELECT * FROM streamforge.ingest('ri_all', 'p', 0, 'e1', 'k', 3, 10);
SELECT count(*) FROM streamforge.advance('ri_all', 'p', 20);
SELECT * FROM streamforge.ingest('ri_all', 'p', 1, 'e1', 'k', 3, 99);  -- SF002

-- the horizon is computed exactly: no 22003 at the ends of bigint
SELECT streamforge.create_pipeline('ri_edge', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], lateness => 0,
    retention => 9223372036854775807);
-- H = min - 0 - max: below the bigint minimum, so there is no horizon
SELECT count(*) FROM streamforge.advance('ri_edge', 'p', -9223372036854775808);
SELECT count(*) FROM streamforge.ingest('ri_edge', 'p', 0, 'a', 'k', -9223372036854775800, 1);
-- H = -1 - max = min: a horizon, below which nothing can be
SELECT count(*) FROM streamforge.advance('ri_edge', 'p', -1);
SELECT remembered_identities FROM streamforge.stats('ri_edge');
-- H = max - 0 - max = 0: the event (time < 0) is forgotten
SELECT count(*) FROM streamforge.advance('ri_edge', 'p', 9223372036854775807);
SELECT remembered_identities FROM streamforge.stats('ri_edge');
SELECT * FROM streamforge.ingest('ri_edge', 'p', 1, 'a', 'k', -9223372036854775800, 2);
SELECT late_seq, event_id, event_time, value, watermark
  FROM streamforge.late_events('ri_edge');

SELECT streamforge.drop_pipeline(n) FROM unnest(ARRAY['ri', 'ri_all', 'ri_edge']) n;

-- ------------------------------------------------------------------------
-- Retention at scale: compaction threshold, tombstones
-- ------------------------------------------------------------------------
-- retention at scale (issue 24).  A pipeline with a
-- retention compacts its journal at its own small threshold; the identity
-- table stays usable however many identities retention forgets.
\c -

-- 1. Compaction.  The default streamforge.compaction_threshold is 64 MB,
-- but a pipeline with a retention compacts once its journal passes the
-- larger of 1 MB and four times its snapshot (docs/retention.md), so that a
-- cold load replays no more than what the horizon covers.  Two pipelines
-- get the same 1.1 MB of journal, in 6 calls of 190 kB (220 kB before the
-- compact journal of 0.3.0): the one without
-- retention keeps all 6 rows, the one with retention compacts (at the
-- call that takes its journal past 1 MB).
SHOW streamforge.compaction_threshold;
SELECT streamforge.create_pipeline('sr_keep', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)]);
SELECT streamforge.create_pipeline('sr_ret', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)],
    retention => 10);
CREATE FUNCTION sr_call(pl text, c int) RETURNS bigint
LANGUAGE sql AS $$
  SELECT count(*) FROM streamforge.ingest_batch(pl,
    (SELECT array_agg(ROW('p', c * 1000 + i, 'e' || c || '-' || i || repeat('x', 180),
                          'k', c * 1000 + i, 1)::streamforge.delivery ORDER BY i)
       FROM generate_series(0, 999) AS i))
$$;
CREATE TABLE sr_sizes (pipeline text, call int, journal_rows bigint,
                       journal_bytes bigint, snapshot_bytes bigint);
CREATE FUNCTION sr_size(pl text, c int) RETURNS void
LANGUAGE sql AS $$
  INSERT INTO sr_sizes
  SELECT pl, c, count(j.pos), coalesce(sum(octet_length(j.entry)), 0),
         coalesce(octet_length(p.snapshot), 0)
    FROM streamforge.pipeline p LEFT JOIN streamforge.journal j ON j.pipeline_id = p.id
   WHERE p.name = pl GROUP BY p.snapshot
$$;
-- each call its own transaction (the journal is stored at commit)
SELECT sr_call('sr_keep', 0) + count(*) FROM streamforge.advance('sr_keep', 'p', 999) \g /dev/null
SELECT sr_size('sr_keep', 0);
SELECT sr_call('sr_ret', 0) + count(*) FROM streamforge.advance('sr_ret', 'p', 999) \g /dev/null
SELECT sr_size('sr_ret', 0);
SELECT sr_call('sr_keep', 1) \g /dev/null
SELECT sr_size('sr_keep', 1);
SELECT sr_call('sr_ret', 1) \g /dev/null
SELECT sr_size('sr_ret', 1);
SELECT sr_call('sr_keep', 2) \g /dev/null
SELECT sr_size('sr_keep', 2);
SELECT sr_call('sr_ret', 2) \g /dev/null
SELECT sr_size('sr_ret', 2);
SELECT sr_call('sr_keep', 3) \g /dev/null
SELECT sr_size('sr_keep', 3);
SELECT sr_call('sr_ret', 3) \g /dev/null
SELECT sr_size('sr_ret', 3);
SELECT sr_call('sr_keep', 4) \g /dev/null
SELECT sr_size('sr_keep', 4);
SELECT sr_call('sr_ret', 4) \g /dev/null
SELECT sr_size('sr_ret', 4);
SELECT sr_call('sr_keep', 5) \g /dev/null
SELECT sr_size('sr_keep', 5);
SELECT sr_call('sr_ret', 5) \g /dev/null
SELECT sr_size('sr_ret', 5);
SELECT pipeline, call, journal_rows, journal_bytes, snapshot_bytes > 0 AS snapshot
  FROM sr_sizes ORDER BY pipeline, call;

-- 2. Tombstones.  Retention takes a forgotten identity out of the
-- event_id table and leaves a tombstone; a lookup stops only at an empty
-- slot, so tombstones must count towards the table's load, or a table of
-- nothing but tombstones makes every lookup loop.  With the watermark at
-- 1000 and a retention of 10, each event at time 0 is forgotten as soon
-- as it is ingested: one batch of 20,000 of them leaves 20,000 tombstones
-- in a table of 1024 slots, unless they are swept.
SELECT streamforge.create_pipeline('sr_tomb', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)],
    retention => 10);
SELECT count(*) FROM streamforge.advance('sr_tomb', 'p', 1000);
SELECT count(*) FROM streamforge.ingest_batch('sr_tomb',
    (SELECT array_agg(ROW('p', i, 't' || i, 'k', 0, 1)::streamforge.delivery ORDER BY i)
       FROM generate_series(0, 19999) AS i));
-- and events that are remembered still find their identity: a duplicate
SELECT count(*) FROM streamforge.ingest_batch('sr_tomb',
    (SELECT array_agg(ROW('p', 20000 + i, 'r' || i, 'k', 1005, 1)::streamforge.delivery ORDER BY i)
       FROM generate_series(0, 1999) AS i));
SELECT count(*) FROM streamforge.ingest('sr_tomb', 'p', 22000, 'r7', 'k', 1005, 1);
SELECT count(*) FROM streamforge.ingest('sr_tomb', 'p', 22001, 'r7', 'k', 1005, 2);
SELECT deliveries, accepted, duplicate_ids, late_events, remembered_identities,
       remembered_late_events, forgotten_offsets
  FROM streamforge.stats('sr_tomb');
-- the same in a new connection, which replays the journal
\c -
SELECT deliveries, accepted, duplicate_ids, late_events, remembered_identities,
       remembered_late_events, forgotten_offsets
  FROM streamforge.stats('sr_tomb');

-- clean up
SELECT count(streamforge.drop_pipeline(name)) FROM unnest(ARRAY['sr_keep', 'sr_ret', 'sr_tomb']) AS name;
