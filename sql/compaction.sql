-- Compaction: a pipeline's stored state is a snapshot plus the journal of
-- the write calls since; compacting (a new snapshot, journal emptied) must
-- change nothing that any call returns.  Two identical pipelines get the same
-- calls: compaction_c compacts often (threshold 0: whenever the journal
-- outgrows the snapshot), compaction_j never (-1).  Every output and the
-- final state must agree, also after a reconnect rebuilds both from their
-- tables.

SELECT streamforge.create_pipeline(name, ARRAY['p0', 'p1', 'p2'],
         ARRAY[streamforge.fixed('f', 10), streamforge.sliding('sl', 15, 5),
               streamforge.session('s', 4)], 3)
  FROM unnest(ARRAY['compaction_c', 'compaction_j']) AS name;

CREATE TABLE out (pipeline text, call int, ord int, change streamforge.change);

-- A deterministic workload: deliveries (some duplicate ids, some replayed
-- offsets, some late), progress reports and idleness, in one order.
CREATE FUNCTION drive(pipeline text, threshold text, first int, ncalls int)
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    i int;
    e int;
    part text;
    offs bigint[];
    last_e int[] := ARRAY[0, 0, 0];
    pi int;
BEGIN
    SELECT array_agg(consumed_offset ORDER BY partition) INTO offs
      FROM streamforge.partitions(pipeline);
    FOR i IN first .. first + ncalls - 1 LOOP
        PERFORM set_config('streamforge.compaction_threshold', threshold, true);
        pi := i % 3;
        part := 'p' || pi;
        IF i % 7 = 0 THEN
            INSERT INTO out SELECT pipeline, i, row_number() OVER (), c
              FROM streamforge.advance(pipeline, part, i * 2 - 20) AS c;
            CONTINUE;
        ELSIF i % 23 = 0 THEN
            INSERT INTO out SELECT pipeline, i, row_number() OVER (), c
              FROM streamforge.mark_idle(pipeline, part) AS c;
            CONTINUE;
        ELSIF i % 11 = 0 AND last_e[pi + 1] > 0 THEN
            -- replay the partition's last delivery: a no-op
            e := last_e[pi + 1];
        ELSE
            -- every 13th delivery repeats an earlier event (a duplicate id)
            e := CASE WHEN i % 13 = 0 THEN i - 5 ELSE i END;
            offs[pi + 1] := offs[pi + 1] + 1;
            last_e[pi + 1] := e;
        END IF;
        -- event times wander back and forth; every 17th is far behind
        INSERT INTO out SELECT pipeline, i, row_number() OVER (), c
          FROM streamforge.ingest(pipeline, part, offs[pi + 1], 'e' || e,
                                  'k' || e % 4,
                                  e * 2 - e % 13 * 3
                                    - CASE WHEN e % 17 = 0 THEN 120 ELSE 0 END,
                                  e % 19 - 8) AS c;
    END LOOP;
END
$$;

SELECT drive('compaction_c', '0', 1, 400);
SELECT drive('compaction_j', '-1', 1, 400);

-- compaction_c was compacted, compaction_j never was (no snapshot).  Each
-- drive() ran in one transaction, which bumped the version once and stored
-- the journal entries of its calls in a few rows (they are buffered and
-- written together, docs/persistence.md).
SELECT name, version, snapshot_version > 0 AS has_snapshot,
       (SELECT count(*) FROM streamforge.journal WHERE pipeline_id = p.id)
         < 400 AS fewer_rows_than_calls
  FROM streamforge.pipeline p WHERE name IN ('compaction_c', 'compaction_j') ORDER BY name;

-- identical outputs, call by call
SELECT count(*) AS changes FROM out WHERE pipeline = 'compaction_c';
(SELECT call, ord, change FROM out WHERE pipeline = 'compaction_c'
 EXCEPT ALL SELECT call, ord, change FROM out WHERE pipeline = 'compaction_j')
UNION ALL
(SELECT call, ord, change FROM out WHERE pipeline = 'compaction_j'
 EXCEPT ALL SELECT call, ord, change FROM out WHERE pipeline = 'compaction_c');

-- identical state
CREATE FUNCTION state(pipeline text) RETURNS SETOF text LANGUAGE sql AS $$
    SELECT 'live ' || r::text FROM streamforge.live(pipeline) r
    UNION ALL SELECT 'visible ' || r::text FROM streamforge.visible(pipeline) r
    UNION ALL SELECT 'late ' || r::text FROM streamforge.late_events(pipeline) r
    UNION ALL SELECT 'partition ' || r::text FROM streamforge.partitions(pipeline) r
    UNION ALL SELECT 'stats ' || r::text FROM streamforge.stats(pipeline) r
    UNION ALL SELECT 'watermark ' || streamforge.watermark(pipeline)
$$;
-- the workload has duplicates, replays, late events and idleness
SELECT * FROM streamforge.stats('compaction_c');
(SELECT * FROM state('compaction_c') EXCEPT ALL SELECT * FROM state('compaction_j'))
UNION ALL (SELECT * FROM state('compaction_j') EXCEPT ALL SELECT * FROM state('compaction_c'));
SELECT streamforge.checkpoint('compaction_c') = streamforge.checkpoint('compaction_j') AS same_checkpoint;

-- a new backend rebuilds both from snapshot + journal: still identical
\c
CREATE TEMP TABLE before AS SELECT * FROM state('compaction_j');
(SELECT * FROM state('compaction_c') EXCEPT ALL SELECT * FROM before)
UNION ALL (SELECT * FROM before EXCEPT ALL SELECT * FROM state('compaction_c'));
SELECT streamforge.checkpoint('compaction_c') = streamforge.checkpoint('compaction_j') AS same_checkpoint;

-- and they go on identically
SELECT drive('compaction_c', '0', 401, 60);
SELECT drive('compaction_j', '-1', 401, 60);
(SELECT call, ord, change FROM out WHERE pipeline = 'compaction_c'
 EXCEPT ALL SELECT call, ord, change FROM out WHERE pipeline = 'compaction_j')
UNION ALL
(SELECT call, ord, change FROM out WHERE pipeline = 'compaction_j'
 EXCEPT ALL SELECT call, ord, change FROM out WHERE pipeline = 'compaction_c');

-- compacting inside a transaction that rolls back leaves the old snapshot
SELECT version, snapshot_version FROM streamforge.pipeline WHERE name = 'compaction_j' \gset old_
BEGIN;
SET LOCAL streamforge.compaction_threshold = 0;
SELECT count(*) FROM streamforge.advance('compaction_j', 'p0', 1000);
SELECT snapshot_version = version AS compacted FROM streamforge.pipeline
 WHERE name = 'compaction_j';
ROLLBACK;
SELECT version = :old_version AND snapshot_version = :old_snapshot_version
       AS unchanged
  FROM streamforge.pipeline WHERE name = 'compaction_j';
SELECT * FROM streamforge.partitions('compaction_j') WHERE partition = 'p0';

-- restore replaces the snapshot and empties the journal; the state goes on
SELECT streamforge.restore('compaction_j', streamforge.checkpoint('compaction_c'));
SELECT snapshot_version = version AS snapshot_at_restore,
       (SELECT count(*) FROM streamforge.journal WHERE pipeline_id = p.id)
         AS journal_rows
  FROM streamforge.pipeline p WHERE name = 'compaction_j';
SELECT streamforge.checkpoint('compaction_c') = streamforge.checkpoint('compaction_j') AS same_checkpoint;
\c
SELECT streamforge.checkpoint('compaction_c') = streamforge.checkpoint('compaction_j') AS same_checkpoint;

SELECT streamforge.drop_pipeline('compaction_c');
SELECT streamforge.drop_pipeline('compaction_j');
DROP FUNCTION state(text);
DROP FUNCTION drive(text, text, int, int);
DROP TABLE out;

-- ------------------------------------------------------------------------
-- compact(pipeline, min_journal_bytes) at exactly the journal size
-- ------------------------------------------------------------------------
-- compact(pipeline, min_journal_bytes) compacts exactly
-- when the journal since the last snapshot holds at least
-- min_journal_bytes, as this backend's cache counts them (issue 24: mutant
-- journal-bytes-zero of scripts/mutants-0.3.tsv; metrics only ever asked
-- for more bytes than the journal had, which a count of 0 answers alike).
\c -
SELECT streamforge.create_pipeline('s3c', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)]);
SELECT count(*) FROM streamforge.ingest('s3c', 'p', 0, 'e1', 'k', 1, 1);
SELECT count(*) FROM streamforge.ingest('s3c', 'p', 1, 'e2', 'k', 2, 1);
CREATE TABLE s3c_j AS SELECT journal_rows, journal_bytes FROM streamforge.metrics
 WHERE pipeline = 's3c';
SELECT journal_rows, journal_bytes > 0 AS has_bytes FROM s3c_j;
-- one byte more than the journal holds: no compaction
SELECT streamforge.compact('s3c', journal_bytes + 1) FROM s3c_j;
SELECT journal_rows FROM streamforge.metrics WHERE pipeline = 's3c';
-- exactly what it holds: compacts, and the journal is empty
SELECT streamforge.compact('s3c', journal_bytes) FROM s3c_j;
SELECT journal_rows, journal_bytes FROM streamforge.metrics WHERE pipeline = 's3c';
-- an empty journal holds less than one byte
SELECT streamforge.compact('s3c', 1);
-- a new backend counts what it loads: one byte suffices after one call
SELECT count(*) FROM streamforge.ingest('s3c', 'p', 2, 'e3', 'k', 3, 1);
\c -
SELECT streamforge.compact('s3c', 1);
SELECT journal_rows FROM streamforge.metrics WHERE pipeline = 's3c';
SELECT key, window_start, count, sum FROM streamforge.live('s3c');
DROP TABLE s3c_j;
SELECT streamforge.drop_pipeline('s3c');

-- ------------------------------------------------------------------------
-- compact() keeps retention; the order of one call's changes
-- ------------------------------------------------------------------------
-- compact() keeps a pipeline's retention (the
-- state it stores forgets on, before and after a new backend loads it),
-- and the changes of one call come retractions first, then upserts, each
-- in address order even when the call touched the rows in the other
-- order (issue 24, scripts/mutants-0.3.tsv: mutants
-- compact-drops-retention, retract-sort-dropped and sort-two-unsorted).
\c -
SELECT streamforge.create_pipeline('s4o', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    retention => 5);
SELECT count(*) FROM streamforge.ingest('s4o', 'p', 0, 'a', 'k', 1, 1);
SELECT count(*) FROM streamforge.ingest('s4o', 'p', 1, 'b', 'k', 12, 2);
SELECT streamforge.compact('s4o', 0);
-- watermark 20, horizon 15: both events are below it and forgotten
SELECT count(*) FROM streamforge.advance('s4o', 'p', 20);
SELECT remembered_identities, remembered_offsets, forgotten_offsets FROM streamforge.stats('s4o');
SELECT count(*) FROM streamforge.ingest('s4o', 'p', 2, 'c', 'k', 23, 3);
\c -
SELECT remembered_identities, remembered_offsets, forgotten_offsets FROM streamforge.stats('s4o');
SELECT count(*) FROM streamforge.advance('s4o', 'p', 30);
SELECT remembered_identities, remembered_offsets, forgotten_offsets FROM streamforge.stats('s4o');
SELECT streamforge.drop_pipeline('s4o');

-- one event in two visible buckets of a sliding window: two retractions
-- and two upserts, which the window assignment touches latest start first
SELECT streamforge.create_pipeline('s4t', ARRAY['p'], ARRAY[streamforge.sliding('s', 10, 5)], 100);
SELECT count(*) FROM streamforge.ingest('s4t', 'p', 0, 'e0', 'k', 6, 1);
SELECT seq, op, window_start, window_end, count, sum FROM streamforge.advance('s4t', 'p', 30);
SELECT seq, op, window_start, window_end, count, sum
  FROM streamforge.ingest('s4t', 'p', 1, 'e1', 'k', 8, 10);
SELECT streamforge.drop_pipeline('s4t');
-- with a session window too: one event that changes three rows, and one
-- that merges two visible sessions (four retractions, three upserts)
SELECT streamforge.create_pipeline('s4s', ARRAY['p'],
    ARRAY[streamforge.sliding('s', 10, 5), streamforge.session('g', 3)], 100);
SELECT count(*) FROM streamforge.ingest('s4s', 'p', 0, 'e0', 'k', 6, 1);
SELECT count(*) FROM streamforge.ingest('s4s', 'p', 1, 'e1', 'k', 12, 2);
SELECT seq, op, window_name, window_start, window_end, count, sum
  FROM streamforge.advance('s4s', 'p', 30);
SELECT seq, op, window_name, window_start, window_end, count, sum
  FROM streamforge.ingest('s4s', 'p', 2, 'e2', 'k', 8, 10);
SELECT seq, op, window_name, window_start, window_end, count, sum
  FROM streamforge.ingest('s4s', 'p', 3, 'e3', 'k', 9, 20);
SELECT streamforge.drop_pipeline('s4s');
