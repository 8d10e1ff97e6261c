-- strength_retention: retention at scale (issue 24).  A pipeline with a
-- retention compacts its journal at its own small threshold; the identity
-- table stays usable however many identities retention forgets.

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
