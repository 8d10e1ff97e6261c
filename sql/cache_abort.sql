-- The backend's cached pipeline across failed, cancelled and rolled-back
-- calls, checked from the same backend (docs/persistence.md, "The
-- per-backend cache"; issue 18).  Each case names the cache rule it proves.
SET streamforge.compaction_threshold = -1;
SELECT streamforge.create_pipeline('ca', ARRAY['p', 'q'], ARRAY[streamforge.fixed('w', 10)]);
SELECT count(*) FROM streamforge.ingest('ca', 'p', 0, 'e0', 'k', 1, 1);
SELECT count(*) FROM streamforge.ingest('ca', 'p', 1, 'e1', 'k', 2, 2);
CREATE FUNCTION pg_temp.state(OUT consumed text, OUT deliveries bigint,
    OUT accepted bigint, OUT duplicate_ids bigint, OUT offset_replays bigint)
LANGUAGE sql AS $$
  SELECT (SELECT string_agg(partition || '=' || consumed_offset, ' ' ORDER BY partition)
            FROM streamforge.partitions('ca')),
         s.deliveries, s.accepted, s.duplicate_ids, s.offset_replays
    FROM streamforge.stats('ca') AS s $$;
SELECT * FROM pg_temp.state();

-- A refused call keeps the cached pipeline only if it changed nothing: a
-- duplicate event_id at a new offset consumes that offset, and an offset
-- replay counts itself, so both count as changes (the mutation count), and
-- a batch refused after them leaves no trace of them.
SELECT count(*) FROM streamforge.ingest_batch('ca', ARRAY[
    ROW('q', 0, 'e0', 'k', 1, 1), ROW('q', 5, 'gap', 'k', 1, 1)]::streamforge.delivery[]);
SELECT * FROM pg_temp.state();
SELECT count(*) FROM streamforge.ingest_batch('ca', ARRAY[
    ROW('p', 0, 'e0', 'k', 1, 1), ROW('q', 5, 'gap', 'k', 1, 1)]::streamforge.delivery[]);
SELECT * FROM pg_temp.state();
-- the same in an explicit transaction that is rolled back
BEGIN;
SELECT count(*) FROM streamforge.ingest('ca', 'q', 0, 'e1', 'k', 2, 2);
SELECT count(*) FROM streamforge.ingest('ca', 'p', 1, 'e1', 'k', 2, 2);
SELECT * FROM pg_temp.state();
ROLLBACK;
SELECT * FROM pg_temp.state();

-- A PL/pgSQL exception block undoes a batch that failed half-way, in the
-- cache too, while the transaction's earlier work stays.
BEGIN;
SELECT count(*) FROM streamforge.ingest('ca', 'p', 2, 'e2', 'k', 3, 3);
DO $$
BEGIN
    PERFORM streamforge.ingest_batch('ca', ARRAY[
        ROW('q', 0, 'e9', 'k', 4, 4), ROW('p', 3, 'e8', 'k', 4, 4),
        ROW('p', 9, 'gap', 'k', 4, 4)]::streamforge.delivery[]);
EXCEPTION WHEN sqlstate 'SF001' THEN
    RAISE NOTICE 'refused: %', SQLERRM;
END
$$;
SELECT * FROM pg_temp.state();
COMMIT;
SELECT * FROM pg_temp.state();

-- A cancelled batch (statement_timeout; the batch takes far longer than a
-- millisecond) is undone, whatever point it reached.
SET statement_timeout = '1ms';
SELECT count(*) FROM streamforge.ingest_batch('ca',
    (SELECT array_agg(ROW('q', i, 'c' || i, 'k' || i % 100, i, 1)::streamforge.delivery ORDER BY i)
       FROM generate_series(0, 299999) AS i));
RESET statement_timeout;
SELECT * FROM pg_temp.state();

-- An error in the middle of a catch-up (a journal entry, written behind
-- the backend's back, whose second delivery the engine refuses) leaves the
-- cached pipeline half caught up: it must not be used again.
CREATE FUNCTION pg_temp.delivery(part int, off bigint, id text, t bigint, v bigint)
RETURNS bytea LANGUAGE sql AS $$
  SELECT int2send(part::int2) || int8send(off) || int4send(octet_length(id))
         || convert_to(id, 'UTF8') || int4send(1) || '\x6b'::bytea
         || int8send(t) || int8send(v) $$;
INSERT INTO streamforge.journal
  SELECT p.id, (SELECT max(pos) + 1 FROM streamforge.journal j WHERE j.pipeline_id = p.id),
         '\x0149'::bytea || int4send(2) || pg_temp.delivery(0, 3, 'e3', 5, 5)
         || pg_temp.delivery(0, 3, 'other', 5, 5)
    FROM streamforge.pipeline p WHERE p.name = 'ca';
UPDATE streamforge.pipeline SET version = version + 1 WHERE name = 'ca';
SELECT * FROM pg_temp.state();
-- repaired: the entry now holds only the first delivery
UPDATE streamforge.journal SET entry = '\x0149'::bytea || int4send(1)
    || pg_temp.delivery(0, 3, 'e3', 5, 5)
  WHERE pipeline_id = (SELECT id FROM streamforge.pipeline WHERE name = 'ca')
    AND pos = (SELECT max(pos) FROM streamforge.journal j
                WHERE j.pipeline_id = (SELECT id FROM streamforge.pipeline WHERE name = 'ca'));
UPDATE streamforge.pipeline SET version = version + 1 WHERE name = 'ca';
SELECT * FROM pg_temp.state();

-- A journal entry naming the partition just past the last one is corrupt.
SELECT streamforge.create_pipeline('cb', ARRAY['p', 'q'], ARRAY[streamforge.fixed('w', 10)]);
INSERT INTO streamforge.journal
  SELECT id, 1, '\x014d0002'::bytea FROM streamforge.pipeline WHERE name = 'cb';
UPDATE streamforge.pipeline SET version = version + 1 WHERE name = 'cb';
SELECT * FROM streamforge.partitions('cb');
DELETE FROM streamforge.journal
  WHERE pipeline_id = (SELECT id FROM streamforge.pipeline WHERE name = 'cb');
UPDATE streamforge.pipeline SET version = version + 1 WHERE name = 'cb';
-- the last partition's index is valid
INSERT INTO streamforge.journal
  SELECT id, 1, '\x014d0001'::bytea FROM streamforge.pipeline WHERE name = 'cb';
UPDATE streamforge.pipeline SET version = version + 1 WHERE name = 'cb';
SELECT * FROM streamforge.partitions('cb');

-- Compaction: with streamforge.compaction_threshold = 0 the journal grows
-- to four times the snapshot, never beyond, before a call compacts it.
-- (Each call commits: a transaction stores its journal entries at commit.
-- The keys are long, so that an entry, compact since 0.3.0, stays larger
-- than what the event adds to the snapshot, where 5 keys are stored once.)
SET streamforge.compaction_threshold = 0;
SELECT streamforge.create_pipeline('cc', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
CREATE TEMP TABLE cc_sizes (i int, snapshot_version bigint, snapshot int, journal int);
DO $$
BEGIN
    FOR i IN 0 .. 299 LOOP
        PERFORM streamforge.ingest('cc', 'p', i, 'e' || i,
                                   repeat('k', 40) || i % 5, i, i);
        COMMIT;
        INSERT INTO cc_sizes
          SELECT i, p.snapshot_version, octet_length(p.snapshot),
                 (SELECT coalesce(sum(octet_length(j.entry)), 0)
                    FROM streamforge.journal j WHERE j.pipeline_id = p.id)
            FROM streamforge.pipeline p WHERE p.name = 'cc';
    END LOOP;
END
$$;
SELECT count(*) FILTER (WHERE journal < before) >= 2 AS compacted_repeatedly,
       bool_and(journal <= 4 * snapshot) AS never_over_4x,
       max(journal::numeric / snapshot) > 3 AS reaches_over_3x
  FROM (SELECT *, lag(journal) OVER (ORDER BY i) AS before FROM cc_sizes) AS s;
-- and compaction changes nothing a call returns
SELECT consumed_offset FROM streamforge.partitions('cc');
SELECT deliveries, accepted, live_buckets FROM streamforge.stats('cc');

RESET streamforge.compaction_threshold;
SELECT streamforge.drop_pipeline(n) FROM unnest(ARRAY['ca', 'cb', 'cc']) AS n;
