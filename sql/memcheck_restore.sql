-- restore() of a state whose binary snapshot is larger than one 8 kB block
-- of a memory context, for scripts/test.sh --valgrind and --asan: the
-- snapshot then lives in memory of its own that SPI_finish() returns to
-- malloc, so a read of it after SPI_finish() (0.2.0's restore crash,
-- test/t/074_restore_large.pl) is an invalid read under both, where small
-- states (the rest of the suite) read memory that stays in the context's
-- first block.  Without a memory checker it checks the round trip.
SET client_min_messages = warning;
SELECT streamforge.create_pipeline('mc_restore', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('f', 10), streamforge.session('s', 5)], lateness => 100000);
SELECT count(*) AS changes FROM streamforge.ingest_batch('mc_restore', ARRAY(
    SELECT ROW(CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END, i / 2,
               'event-' || i, 'key-' || (i % 50), i, i % 97)::streamforge.delivery
      FROM generate_series(0, 1999) AS i ORDER BY i));
SELECT count(*) FROM streamforge.advance('mc_restore', 'a', 1500);
SELECT count(*) > 0 AS changes FROM streamforge.advance('mc_restore', 'b', 1500);
CREATE TABLE mc_before AS
    SELECT * FROM streamforge.visible('mc_restore');
SELECT length(streamforge.checkpoint('mc_restore')) > 16384 AS large_checkpoint;
SELECT streamforge.restore('mc_restore', streamforge.checkpoint('mc_restore'));
-- the restored state is the checkpointed one, in this session and a new one
SELECT count(*) AS rows_before, (SELECT count(*) FROM streamforge.visible('mc_restore')) AS rows_after
  FROM mc_before;
SELECT count(*) AS differences FROM (
    (SELECT * FROM mc_before EXCEPT ALL SELECT * FROM streamforge.visible('mc_restore'))
    UNION ALL
    (SELECT * FROM streamforge.visible('mc_restore') EXCEPT ALL SELECT * FROM mc_before)) d;
\c
SELECT count(*) AS differences FROM (
    (SELECT * FROM mc_before EXCEPT ALL SELECT * FROM streamforge.visible('mc_restore'))
    UNION ALL
    (SELECT * FROM streamforge.visible('mc_restore') EXCEPT ALL SELECT * FROM mc_before)) d;
SELECT count(*) AS ingested FROM streamforge.ingest('mc_restore', 'a', 1000, 'new', 'k', 5000, 1);
SELECT (streamforge.stats('mc_restore')).deliveries;
SELECT streamforge.drop_pipeline('mc_restore');
DROP TABLE mc_before;
