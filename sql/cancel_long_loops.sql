--
-- A cancel reaches the engine's long loops (issue 24 item 1): an advance
-- that makes a retention forget a big state, checkpoint() of one and
-- restore() of its checkpoint are
-- cancelled by statement_timeout within a few milliseconds of it, not
-- once the whole call is done; and the cancelled call leaves the pipeline
-- as it was, in this session and in a new one.
--
-- The cancelled calls run with terse messages: where the cancel lands (in
-- the engine's loop, or in a statement the call runs over SPI, which adds
-- a CONTEXT line) depends on the machine's load.
--
-- The state: 700,000 identities with event times in scattered order (the
-- forgetting pops them off a heap in time order).  Compaction is off, so
-- that the journal holds the batch and no call spends its time compacting.
--
SET streamforge.compaction_threshold = -1;
SELECT streamforge.create_pipeline('cancel_big', ARRAY['p'],
	ARRAY[streamforge.fixed('f', 100000000)], retention => 10);
SELECT count(*) FROM streamforge.ingest_batch('cancel_big',
	(SELECT array_agg(ROW('p', i, 'e' || i, 'k', (i::bigint * 7919) % 700000, 1)::streamforge.delivery ORDER BY i)
	   FROM generate_series(0, 699999) i));
CREATE TEMP TABLE ck AS SELECT streamforge.checkpoint('cancel_big') AS c;
SELECT md5(c) AS ck_before FROM ck \gset
SELECT remembered_identities, remembered_offsets, forgotten_offsets
  FROM streamforge.stats('cancel_big');

-- checkpoint() of the big state: cancelled (57014)
\set VERBOSITY terse
SET statement_timeout = '10ms';
SELECT length(streamforge.checkpoint('cancel_big'));
RESET statement_timeout;
\set VERBOSITY default

-- The advance forgets all 700,000 identities and offsets.  Cancelled
-- (57014); how long it took is compared with the same call uncancelled
-- below.
SELECT clock_timestamp() AS t0 \gset
\set VERBOSITY terse
SET statement_timeout = '10ms';
SELECT count(*) FROM streamforge.advance('cancel_big', 'p', 50000000);
RESET statement_timeout;
\set VERBOSITY default
SELECT clock_timestamp() - :'t0'::timestamptz AS cancelled_took \gset

-- restore() of the big checkpoint: cancelled (57014)
\set VERBOSITY terse
SET statement_timeout = '10ms';
SELECT streamforge.restore('cancel_big', c) FROM ck;
RESET statement_timeout;
\set VERBOSITY default

-- same session: the state is the one before the cancelled calls
SELECT md5(streamforge.checkpoint('cancel_big')) = :'ck_before' AS same_checkpoint;
SELECT remembered_identities, remembered_offsets, forgotten_offsets
  FROM streamforge.stats('cancel_big');

-- new session: so are the tables
\c
SET streamforge.compaction_threshold = -1;
SELECT watermark IS NULL AS no_watermark FROM streamforge.watermark('cancel_big') AS watermark;
SELECT remembered_identities, remembered_offsets, forgotten_offsets
  FROM streamforge.stats('cancel_big');

-- the same advance, uncancelled: it forgets everything, and took at least
-- twice as long as the cancelled one (without interrupt checks in the
-- forgetting, the cancelled call ran as long as this one)
SELECT clock_timestamp() AS t1 \gset
SELECT count(*) FROM streamforge.advance('cancel_big', 'p', 50000000);
SELECT clock_timestamp() - :'t1'::timestamptz AS full_took \gset
SELECT :'cancelled_took'::interval * 2 < :'full_took'::interval AS cancelled_early;
SELECT remembered_identities, remembered_offsets, forgotten_offsets
  FROM streamforge.stats('cancel_big');
SELECT streamforge.drop_pipeline('cancel_big');

-- ------------------------------------------------------------------------
-- The batch loops check for interrupts themselves
-- ------------------------------------------------------------------------
-- the batch loops of ingest_batch and append_batch check
-- for interrupts between deliveries themselves (issue 24, mutants
-- batch-no-cfi and append-batch-no-cfi of scripts/mutants-0.3.tsv).
-- the batch test cancels a batch whose every event finalizes buckets, so
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
\c -
\set VERBOSITY default
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
