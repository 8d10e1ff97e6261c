-- strength_batch: batch calls (issue 24).  A NULL partition in an element
-- of append_batch or ingest_batch is refused (22004) with the element's
-- number, whichever element it is in, before anything is applied; and a
-- long batch can be cancelled (statement_timeout, 57014) while the engine
-- works through it, not only once it has finished.
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
