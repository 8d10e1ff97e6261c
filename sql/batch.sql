-- batch: ingest_batch() behaves exactly like the same ingest() calls in
-- array order and returns their changes concatenated; if any delivery
-- fails, none is applied, and the first failing delivery decides the error
-- (docs/semantics.md "Exact rules" 5).
\set VERBOSITY sqlstate
-- two identical pipelines: one fed by a batch, one by single calls
SELECT streamforge.create_pipeline('batch', ARRAY['p', 'q'], ARRAY[streamforge.fixed('f', 10)], 5);
SELECT streamforge.create_pipeline('batch_ref', ARRAY['p', 'q'], ARRAY[streamforge.fixed('f', 10)], 5);
SELECT * FROM streamforge.advance('batch', 'p', 20);
SELECT * FROM streamforge.advance('batch', 'q', 20);
SELECT * FROM streamforge.advance('batch_ref', 'p', 20);
SELECT * FROM streamforge.advance('batch_ref', 'q', 20);
-- watermark 20, lateness 5: t >= 15 is accepted.  New, correcting, duplicate
-- identity, late, pending and replayed deliveries
SELECT * FROM streamforge.ingest_batch('batch', ARRAY[
    ROW('p', 0, 'a', 'k', 15, 1),
    ROW('p', 1, 'b', 'k', 16, 2),
    ROW('q', 0, 'a', 'k', 15, 1),
    ROW('q', 1, 'c', 'k', 3, 4),
    ROW('p', 2, 'd', 'j', 25, 8),
    ROW('p', 0, 'a', 'k', 15, 1)]::streamforge.delivery[]);
-- the same deliveries one by one
SELECT * FROM streamforge.ingest('batch_ref', 'p', 0, 'a', 'k', 15, 1);
SELECT * FROM streamforge.ingest('batch_ref', 'p', 1, 'b', 'k', 16, 2);
SELECT * FROM streamforge.ingest('batch_ref', 'q', 0, 'a', 'k', 15, 1);
SELECT * FROM streamforge.ingest('batch_ref', 'q', 1, 'c', 'k', 3, 4);
SELECT * FROM streamforge.ingest('batch_ref', 'p', 2, 'd', 'j', 25, 8);
SELECT * FROM streamforge.ingest('batch_ref', 'p', 0, 'a', 'k', 15, 1);
-- both pipelines are in the same state
SELECT (SELECT array_agg(x) FROM streamforge.live('batch') x)
           IS NOT DISTINCT FROM (SELECT array_agg(x) FROM streamforge.live('batch_ref') x) AS same_live,
       (SELECT array_agg(x) FROM streamforge.visible('batch') x)
           IS NOT DISTINCT FROM (SELECT array_agg(x) FROM streamforge.visible('batch_ref') x) AS same_visible,
       (SELECT array_agg(x) FROM streamforge.late_events('batch') x)
           IS NOT DISTINCT FROM (SELECT array_agg(x) FROM streamforge.late_events('batch_ref') x) AS same_late,
       (SELECT array_agg(x) FROM streamforge.partitions('batch') x)
           IS NOT DISTINCT FROM (SELECT array_agg(x) FROM streamforge.partitions('batch_ref') x) AS same_partitions;
SELECT streamforge.drop_pipeline('batch_ref');
SELECT * FROM streamforge.live('batch');
SELECT * FROM streamforge.late_events('batch');
-- atomic: a valid first delivery, then a gap at q: nothing is applied
SELECT * FROM streamforge.ingest_batch('batch', ARRAY[
    ROW('p', 3, 'e', 'k', 16, 16),
    ROW('q', 5, 'x', 'k', 1, 1)]::streamforge.delivery[]);
-- the first failing delivery decides: the gap before the identity conflict ...
SELECT * FROM streamforge.ingest_batch('batch', ARRAY[
    ROW('p', 3, 'e', 'k', 16, 16),
    ROW('q', 5, 'x', 'k', 1, 1),
    ROW('p', 4, 'a', 'k', 99, 1)]::streamforge.delivery[]);
-- ... or the identity conflict before the gap (p 4 follows p 3 of the same batch)
SELECT * FROM streamforge.ingest_batch('batch', ARRAY[
    ROW('p', 3, 'e', 'k', 16, 16),
    ROW('p', 4, 'a', 'k', 99, 1),
    ROW('q', 5, 'x', 'k', 1, 1)]::streamforge.delivery[]);
-- a NULL element fails at its position
SELECT * FROM streamforge.ingest_batch('batch', ARRAY[
    ROW('p', 3, 'e', 'k', 16, 16),
    NULL,
    ROW('q', 5, 'x', 'k', 1, 1)]::streamforge.delivery[]);
SELECT * FROM streamforge.ingest_batch('batch', ARRAY[
    ROW('q', 5, 'x', 'k', 1, 1),
    NULL]::streamforge.delivery[]);
-- a NULL field, an unknown partition, an out-of-range bucket
SELECT * FROM streamforge.ingest_batch('batch', ARRAY[
    ROW('p', 3, 'e', 'k', 16, 16),
    ROW('p', 4, NULL, 'k', 1, 1)]::streamforge.delivery[]);
SELECT * FROM streamforge.ingest_batch('batch', ARRAY[
    ROW('p', 3, 'e', 'k', 16, 16),
    ROW('zz', 0, 'z', 'k', 1, 1)]::streamforge.delivery[]);
SELECT * FROM streamforge.ingest_batch('batch', ARRAY[
    ROW('p', 3, 'e', 'k', 16, 16),
    ROW('p', 4, 'big', 'k', 9223372036854775807, 1)]::streamforge.delivery[]);
-- a NULL array is 22004; an empty array returns no rows
SELECT * FROM streamforge.ingest_batch('batch', NULL);
SELECT * FROM streamforge.ingest_batch('batch', ARRAY[]::streamforge.delivery[]);
-- nothing of the failed batches was applied
SELECT * FROM streamforge.partitions('batch');
SELECT * FROM streamforge.live('batch');
SELECT * FROM streamforge.late_events('batch');
-- the corrected batch reuses the offsets and seq continues at 4
SELECT * FROM streamforge.ingest_batch('batch', ARRAY[
    ROW('p', 3, 'e', 'k', 16, 16)]::streamforge.delivery[]);
-- a delivery replayed within its own batch is a no-op
SELECT * FROM streamforge.ingest_batch('batch', ARRAY[
    ROW('p', 4, 'f', 'k', 17, 32),
    ROW('p', 4, 'f', 'k', 17, 32)]::streamforge.delivery[]);
-- changes of several deliveries are concatenated, not merged
SELECT * FROM streamforge.ingest_batch('batch', ARRAY[
    ROW('q', 2, 'g', 'k', 18, 64),
    ROW('q', 3, 'h', 'j', 21, 128),
    ROW('p', 5, 'i', 'k', 19, -1)]::streamforge.delivery[]);
SELECT * FROM streamforge.live('batch');
SELECT streamforge.drop_pipeline('batch');

-- ------------------------------------------------------------------------
-- Batch calls: a NULL partition in any element; cancelling a long batch
-- ------------------------------------------------------------------------
-- batch calls (issue 24).  A NULL partition in an element
-- of append_batch or ingest_batch is refused (22004) with the element's
-- number, whichever element it is in, before anything is applied; and a
-- long batch can be cancelled (statement_timeout, 57014) while the engine
-- works through it, not only once it has finished.
\c -
\set VERBOSITY default
SELECT streamforge.create_pipeline('sb', ARRAY['p', 'q'],
    ARRAY[streamforge.fixed('f', 10)]);

-- append_batch: the partition is the first column of streamforge.event
SELECT * FROM streamforge.append_batch('sb',
    ARRAY[ROW(NULL, 'e1', 'k', 1, 1)::streamforge.event]);
SELECT * FROM streamforge.append_batch('sb',
    ARRAY[ROW('p', 'e1', 'k', 1, 1)::streamforge.event,
          ROW(NULL, 'e2', 'k', 2, 1)::streamforge.event]);
-- every column NULL: the partition is named, the first of them
SELECT * FROM streamforge.append_batch('sb',
    ARRAY[ROW(NULL, NULL, NULL, NULL, NULL)::streamforge.event]);
-- an earlier element that the engine refuses decides the error
SELECT * FROM streamforge.append_batch('sb',
    ARRAY[ROW('nope', 'e1', 'k', 1, 1)::streamforge.event,
          ROW(NULL, 'e2', 'k', 2, 1)::streamforge.event]);

-- ingest_batch: the partition is the first column of streamforge.delivery
SELECT * FROM streamforge.ingest_batch('sb',
    ARRAY[ROW(NULL, 0, 'e1', 'k', 1, 1)::streamforge.delivery]);
SELECT * FROM streamforge.ingest_batch('sb',
    ARRAY[ROW('p', 0, 'e1', 'k', 1, 1)::streamforge.delivery,
          ROW('q', 0, 'e2', 'k', 2, 1)::streamforge.delivery,
          ROW(NULL, 1, 'e3', 'k', 3, 1)::streamforge.delivery]);
SELECT * FROM streamforge.ingest_batch('sb',
    ARRAY[ROW(NULL, NULL, NULL, NULL, NULL, NULL)::streamforge.delivery]);

-- ingest_json: the same, spelled in JSON
SELECT * FROM streamforge.ingest_json('sb',
    '[{"partition": null, "event_id": "e1", "key": "k", "event_time": 1, "value": 1}]');
SELECT * FROM streamforge.ingest_json('sb',
    '[{"partition": "p", "source_offset": 0, "event_id": "e1", "key": "k", "event_time": 1, "value": 1},
      {"partition": null, "source_offset": 0, "event_id": "e2", "key": "k", "event_time": 2, "value": 1}]');

-- each column of an element is named when it is the NULL one
SELECT * FROM streamforge.append_batch('sb', ARRAY[ROW('p', NULL, 'k', 1, 1)::streamforge.event]);
SELECT * FROM streamforge.append_batch('sb', ARRAY[ROW('p', 'e1', NULL, 1, 1)::streamforge.event]);
SELECT * FROM streamforge.append_batch('sb', ARRAY[ROW('p', 'e1', 'k', NULL, 1)::streamforge.event]);
SELECT * FROM streamforge.append_batch('sb', ARRAY[ROW('p', 'e1', 'k', 1, NULL)::streamforge.event]);
SELECT * FROM streamforge.ingest_batch('sb', ARRAY[ROW('p', NULL, 'e1', 'k', 1, 1)::streamforge.delivery]);
SELECT * FROM streamforge.ingest_batch('sb', ARRAY[ROW('p', 0, NULL, 'k', 1, 1)::streamforge.delivery]);
SELECT * FROM streamforge.ingest_batch('sb', ARRAY[ROW('p', 0, 'e1', NULL, 1, 1)::streamforge.delivery]);
SELECT * FROM streamforge.ingest_batch('sb', ARRAY[ROW('p', 0, 'e1', 'k', NULL, 1)::streamforge.delivery]);
SELECT * FROM streamforge.ingest_batch('sb', ARRAY[ROW('p', 0, 'e1', 'k', 1, NULL)::streamforge.delivery]);
-- and each argument of append
SELECT * FROM streamforge.append('sb', 'p', 'e1', NULL, 1, 1);
SELECT * FROM streamforge.append('sb', 'p', 'e1', 'k', NULL, 1);

-- nothing was applied by any of them
SELECT * FROM streamforge.partitions('sb');
SELECT deliveries, accepted FROM streamforge.stats('sb');

-- and the same batches without the NULL go through
SELECT count(*) FROM streamforge.append_batch('sb',
    ARRAY[ROW('p', 'e1', 'k', 1, 1)::streamforge.event,
          ROW('q', 'e2', 'k', 2, 1)::streamforge.event]);
SELECT count(*) FROM streamforge.ingest_batch('sb',
    ARRAY[ROW('p', 1, 'e3', 'k', 3, 1)::streamforge.delivery,
          ROW('q', 1, 'e4', 'k', 4, 1)::streamforge.delivery]);
SELECT * FROM streamforge.partitions('sb');

-- Cancel.  Each event of this batch enters 20,000 sliding buckets of one
-- key, so the engine spends ten seconds and more on the batch after
-- unpacking it in milliseconds.  With statement_timeout at 200 ms the call
-- must stop with 57014 soon after: the batch loop checks for interrupts
-- between deliveries.  A loop that did not would only notice the cancel at
-- the end (the bound below is twenty times the timeout).
SELECT streamforge.create_pipeline('sb_cancel', ARRAY['p'],
    ARRAY[streamforge.sliding('s', 20000, 1)]);
CREATE TABLE sb_big AS
SELECT array_agg(ROW('p', i, 'c' || i, 'k', i % 100, 1)::streamforge.delivery
                 ORDER BY i) AS a
  FROM generate_series(0, 19999) AS i;
CREATE TABLE sb_big_events AS
SELECT array_agg(ROW('p', 'c' || i, 'k', i % 100, 1)::streamforge.event
                 ORDER BY i) AS a
  FROM generate_series(0, 19999) AS i;
CREATE FUNCTION sb_cancelled(call text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz;
    n bigint;
BEGIN
    t0 := clock_timestamp();
    BEGIN
        EXECUTE call INTO n;
        RETURN 'finished after ' || n || ' changes';
    EXCEPTION WHEN query_canceled THEN
        RETURN CASE WHEN clock_timestamp() - t0 < interval '4 seconds'
                    THEN 'cancelled in time' ELSE 'cancelled late' END;
    END;
END $$;
-- the timeout runs from the start of the statement that calls the batch
SET statement_timeout = '200ms';
SELECT sb_cancelled($$SELECT count(*) FROM streamforge.ingest_batch('sb_cancel', (SELECT a FROM sb_big))$$);
SELECT sb_cancelled($$SELECT count(*) FROM streamforge.append_batch('sb_cancel', (SELECT a FROM sb_big_events))$$);
RESET statement_timeout;
SELECT deliveries, live_buckets FROM streamforge.stats('sb_cancel');

-- clean up
SELECT count(streamforge.drop_pipeline(name)) FROM unnest(ARRAY['sb', 'sb_cancel']) AS name;
