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
