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
