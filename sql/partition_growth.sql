--
-- partition_growth: a partition's history above 2^20 deliveries is copied
-- into its next array ahead of its growth by a quarter (issue 39: no write
-- call pays for copying millions of slots at once).  1,400,000 deliveries
-- into one partition cross the growths at 1,048,576 and 1,310,720 slots
-- (the copy ahead starts at three quarters of each); then every offset is
-- delivered again with the same event: each is a replay that compares the
-- event with the one recorded at that offset, so a slot lost or misplaced
-- by the copy would fail (SF001) or count wrongly.  A cold load (snapshot
-- or journal replay) must then see the same history.  No background
-- snapshot is taken, so that the cold load replays the whole journal,
-- whose appends cross both growths without copying ahead (a replay grows
-- in one copy).
--
\set VERBOSITY terse
SET streamforge.background_compaction_ms = -1;
SELECT streamforge.create_pipeline('pgr', ARRAY['p', 'q'],
    ARRAY[streamforge.fixed('f', 100000)], 1000000000000);

CREATE FUNCTION pgr_feed(pl text, f bigint, t bigint, b int) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    n bigint := 0;
BEGIN
    FOR s IN 0 .. (t - f - 1) / b LOOP
        n := n + (SELECT count(*) FROM streamforge.ingest_batch(pl,
            ARRAY(SELECT ROW('p', i, 'e' || i, 'k' || (i % 3), i, i % 10)::streamforge.delivery
                    FROM generate_series(f + s * b, least(f + (s + 1) * b, t) - 1) AS i
                   ORDER BY i)));
    END LOOP;
    RETURN n;
END $$;

-- new events, in calls of 100,000 (no watermark yet: no change emitted)
SELECT pgr_feed('pgr', 0, 1400000, 100000) AS changes;
SELECT deliveries, accepted, duplicate_ids, offset_replays
  FROM streamforge.stats('pgr');
-- every offset again: all replays, no change
SELECT pgr_feed('pgr', 0, 1400000, 200000) AS changes;
SELECT deliveries, accepted, duplicate_ids, offset_replays
  FROM streamforge.stats('pgr');
-- a different event at an offset held: a conflict, wherever it is
SELECT count(*) FROM streamforge.ingest_batch('pgr',
    ARRAY[ROW('p', 1048575, 'x', 'k0', 1, 1)::streamforge.delivery]);
SELECT count(*) FROM streamforge.ingest_batch('pgr',
    ARRAY[ROW('p', 1399999, 'e1399998', 'k2', 1399998, 8)::streamforge.delivery]);
SELECT partition, consumed_offset FROM streamforge.partitions('pgr');

-- after a reconnect (the state loaded from the tables), the same
\c -
\set VERBOSITY terse
SET streamforge.background_compaction_ms = -1;
SELECT count(*) > 0 AS journal_rows, bool_and(j.pos > 0) AS no_snapshot_row,
       p.snapshot IS NULL AS no_snapshot
  FROM streamforge.journal j JOIN streamforge.pipeline p ON p.id = j.pipeline_id
 WHERE p.name = 'pgr' GROUP BY p.snapshot IS NULL;
-- a different event at offsets replayed before, between and after the
-- growths: each a conflict (a slot the replay lost would not be)
SELECT count(*) FROM streamforge.ingest_batch('pgr',
    ARRAY[ROW('p', 70000, 'x', 'k1', 70000, 1)::streamforge.delivery]);
SELECT count(*) FROM streamforge.ingest_batch('pgr',
    ARRAY[ROW('p', 1048575, 'x', 'k0', 1048575, 1)::streamforge.delivery]);
SELECT count(*) FROM streamforge.ingest_batch('pgr',
    ARRAY[ROW('p', 1200000, 'x', 'k0', 1200000, 1)::streamforge.delivery]);
SELECT count(*) FROM streamforge.ingest_batch('pgr',
    ARRAY[ROW('p', 1399999, 'x', 'k1', 1399999, 1)::streamforge.delivery]);
SELECT pgr_feed('pgr', 0, 1400000, 700000) AS changes;
SELECT deliveries, accepted, duplicate_ids, offset_replays
  FROM streamforge.stats('pgr');

SELECT streamforge.drop_pipeline('pgr');
DROP FUNCTION pgr_feed;
