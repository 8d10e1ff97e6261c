-- strength2_cancel: the batch loops of ingest_batch and append_batch check
-- for interrupts between deliveries themselves (issue 24, mutants
-- batch-no-cfi and append-batch-no-cfi of scripts/mutants-0.3.tsv).
-- strength_batch cancels a batch whose every event finalizes buckets, so
-- the engine's own loops (the sort of the changes, the release of ready
-- buckets) notice the cancel even if the batch loop did not.  Here the
-- engine stays quiet: partition q's progress holds the watermark at
-- 1,000,000, below every bucket of the batch, so no bucket becomes visible
-- and there is no change to sort; and 6,600 late events delivered first
-- have grown the event_id table to 16,384 slots, so that it does not grow
-- (which checks for interrupts too) until 6,500 events later.  Each event
-- of the batch costs its 100,000 live sliding buckets (a millisecond and
-- more): a batch loop without its own check runs on for seconds after the
-- cancel, until that growth or the journal's encoding notices it; one with
-- it stops at the next delivery after the 200 ms timeout (the bound below
-- is twenty times that).  (With 3,400 late events and 20,000 buckets an
-- event, as this test had it first, the engine became fast enough to reach
-- the growth within the bound, and mutant batch-no-cfi survived.)
SELECT streamforge.create_pipeline('scancel', ARRAY['p', 'q'],
    ARRAY[streamforge.sliding('s', 100000, 1)]);
SELECT count(*) FROM streamforge.advance('scancel', 'p', 1000000);
SELECT count(*) FROM streamforge.advance('scancel', 'q', 1000000);
SELECT count(*) FROM streamforge.ingest_batch('scancel',
    (SELECT array_agg(ROW('p', i, 'l' || i, 'k', 0, 1)::streamforge.delivery ORDER BY i)
       FROM generate_series(0, 6599) AS i));
SELECT count(*) AS late FROM streamforge.late_events('scancel');
CREATE TABLE sc_deliveries AS
SELECT array_agg(ROW('p', 6600 + i, 'c' || i, 'k', 2000000 + i % 100, 1)::streamforge.delivery
                 ORDER BY i) AS a
  FROM generate_series(0, 19999) AS i;
CREATE TABLE sc_events AS
SELECT array_agg(ROW('p', 'a' || i, 'k', 2000000 + i % 100, 1)::streamforge.event
                 ORDER BY i) AS a
  FROM generate_series(0, 19999) AS i;
CREATE FUNCTION sc_cancelled(call text) RETURNS text
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
-- a few events: live buckets only, no change (what makes the engine quiet)
SELECT count(*) FROM streamforge.ingest_batch('scancel', (SELECT a[1:2] FROM sc_deliveries));
SELECT streamforge.watermark('scancel'), live_buckets FROM streamforge.stats('scancel');
SELECT count(*) FROM streamforge.visible('scancel');
SET statement_timeout = '200ms';
SELECT sc_cancelled($$SELECT count(*) FROM streamforge.ingest_batch('scancel', (SELECT a[3:] FROM sc_deliveries))$$);
SELECT sc_cancelled($$SELECT count(*) FROM streamforge.append_batch('scancel', (SELECT a FROM sc_events))$$);
RESET statement_timeout;
-- nothing of the cancelled calls stayed
SELECT deliveries, live_buckets FROM streamforge.stats('scancel');
SELECT streamforge.drop_pipeline('scancel');
