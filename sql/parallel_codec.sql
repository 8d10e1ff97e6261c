-- The codec of parallel writers (issue 46, docs/design/parallel-writers.md,
-- build plan step 3: src/codec/parallel_codec.c, parallel_snapshot.c), in
-- parallel_check's random runs of two interleaved writers
-- (sql/parallel_engine.sql says what the runs do; the same seed makes the
-- same calls), through streamforge_internal.parallel_codec_check.  At
-- every commit the transaction's head entry (format 5) is encoded, decoded
-- and encoded again to the same bytes, and each lane it delivered to gets
-- its K entry (format 6), checked against the lane.  Whenever no
-- transaction is open: the serial checkpoint is split into head and lanes
-- and merged back to the same bytes; the head and lane snapshots (binary
-- versions 4 and 5) decode into the serial checkpoint and encode to the
-- same bytes again; the head snapshot of an earlier point, decoded with
-- the lanes of now, replays the head entries since into the serial
-- checkpoint, each with its commit's number of changes; the snapshots of
-- the base, then every lane's journal rows since (format 3 entries of its
-- deliveries, replayed into the lane with its K entries: lane_rows), then
-- the head entries, load into the serial checkpoint too; every late event
-- of the lanes came with a K entry; half of the time four damaged copies
-- (a snapshot or an entry with a few bytes changed or cut, a snapshot's
-- checksum made right again so that its payload is read) load or are
-- refused with XX001, never anything else; and a quarter of the time
-- forged state that no commit makes (a head snapshot whose index lacks an
-- id, a head entry that indexes an id twice) is refused with XX001
-- (forged).  At random the run goes on with the decoded head or the split
-- one, and the base of the replay moves.  Any difference raises XX000.
\set VERBOSITY sqlstate

-- entries: one head entry per committed transaction (runs that end with
-- an error at a commit have one transaction without); continued: runs
-- that went on with decoded state; damaged, forged: refused with XX001
CREATE FUNCTION pc_codec(p text, calls int, seeds int)
RETURNS TABLE (runs bigint, transactions bigint, entries bool,
               replayed bool, k_entries bool, lane_rows bool,
               snapshots bool, splits bool, continued bool, damaged bool,
               forged bool, errors text)
LANGUAGE sql AS $$
  SELECT count(*), sum(c.transactions),
         sum(c.head_entries) = sum(c.transactions) - count(c.error),
         sum(c.replayed) > 0, sum(c.k_entries) > 0, sum(c.lane_rows) > 0,
         sum(c.snapshots) > 0, sum(c.splits) = sum(c.snapshots),
         sum(c.continued) > 0, sum(c.damaged) > 0, sum(c.forged) > 0,
         string_agg(DISTINCT c.error, ',')
    FROM generate_series(1, seeds) AS s,
         streamforge_internal.parallel_codec_check(p, calls, s) AS c
$$;

-- the definitions of sql/parallel_engine.sql
SELECT streamforge.create_pipeline('pc_fixed', ARRAY['a', 'b', 'c'],
    ARRAY[streamforge.fixed('f', 10)], lateness => 5);
SELECT (pc_codec('pc_fixed', 400, 10)).*;
SELECT streamforge.create_pipeline('pc_strict', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('f', 7)]);
SELECT (pc_codec('pc_strict', 400, 10)).*;
SELECT streamforge.create_pipeline('pc_sliding', ARRAY['a', 'b', 'c', 'd'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 12, 4)],
    lateness => 8);
SELECT (pc_codec('pc_sliding', 400, 10)).*;
-- built-in progress: the head entries hold one progress op per run of a
-- partition while the watermark stays
SELECT streamforge.create_pipeline('pc_progress', ARRAY['a', 'b', 'c'],
    ARRAY[streamforge.fixed('f', 10)], lateness => 4, out_of_orderness => 6);
SELECT (pc_codec('pc_progress', 400, 10)).*;
SELECT streamforge.create_pipeline('pc_final', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 20, 10)],
    lateness => 5, emit => 'update+final');
SELECT (pc_codec('pc_final', 400, 10)).*;
SELECT streamforge.create_pipeline('pc_session', ARRAY['a', 'b', 'c'],
    ARRAY[streamforge.session('s', 6)], lateness => 5);
SELECT (pc_codec('pc_session', 400, 10)).*;
SELECT streamforge.create_pipeline('pc_mixed', ARRAY['a', 'b', 'c'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('l', 12, 4),
          streamforge.session('s', 4)],
    lateness => 6, out_of_orderness => 5, emit => 'update+final');
SELECT (pc_codec('pc_mixed', 400, 10)).*;
-- many watermark moves per call (cut 5): the replay releases a run of
-- progress ops at once, with the commit's changes
SELECT streamforge.create_pipeline('pc_steps', ARRAY['a', 'b', 'c'],
    ARRAY[streamforge.fixed('f', 1), streamforge.sliding('l', 3, 1),
          streamforge.session('s', 1)],
    lateness => 2, out_of_orderness => 0, emit => 'update+final');
SELECT (pc_codec('pc_steps', 400, 10)).*;
SELECT streamforge.create_pipeline('pc_one', ARRAY['a'],
    ARRAY[streamforge.fixed('f', 10)], lateness => 5);
SELECT (pc_codec('pc_one', 400, 10)).*;
-- long runs
SELECT (pc_codec('pc_sliding', 3000, 2)).*;
SELECT (pc_codec('pc_mixed', 3000, 2)).*;

-- near streamforge.max_live_buckets the commit applies event by event
-- (no delta in the entry); below it the run ends with 54000 at a commit
SET streamforge.max_live_buckets = 55;
SELECT (pc_codec('pc_fixed', 400, 5)).*;
SET streamforge.max_live_buckets = 34;
SELECT (pc_codec('pc_fixed', 400, 5)).*;
RESET streamforge.max_live_buckets;

-- measures pipelines (query-defined aggregates are; the definitions of
-- parallel_engine.sql): the head entry holds the arrival base, the
-- delta's measures words and variable-size states (local arrivals,
-- rebased at the replay) and each event's measures; the K entries each
-- new event's arrival, so that a lane loaded from its rows holds the
-- global numbers; the snapshots the identities' and late rows' measures
-- and the arrivals
SELECT streamforge.create_pipeline('pc_measures', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('f', 10)], lateness => 5,
    measures => ARRAY['amount'], aggregates => ARRAY['sum(amount)']);
SELECT (pc_codec('pc_measures', 400, 10)).*;
-- every fixed-word kind, first/last ties, count_if, NULLs
SELECT streamforge.create_pipeline('pc_mwords', ARRAY['a', 'b', 'c'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 12, 4)],
    lateness => 6,
    measures => ARRAY['v', 'w NULL', 'x NULL'],
    aggregates => ARRAY['count', 'count(w)', 'sum(v)', 'sum(w)', 'min(w)',
        'max(x)', 'avg(x)', 'stddev_samp(v)', 'var_pop(w)', 'first(v)',
        'last(v)', 'first(w)', 'last(x)', 'count_if(v > 2)',
        'count_if(w <= 0)', 'max_by(v, w)', 'min_by(x, v)']);
SELECT (pc_codec('pc_mwords', 400, 10)).*;
-- variable-size states (exact sets, HLL, quantile sketches), built-in
-- progress
SELECT streamforge.create_pipeline('pc_mvars', ARRAY['a', 'b', 'c'],
    ARRAY[streamforge.fixed('f', 10)], lateness => 5, out_of_orderness => 4,
    emit => 'update+final',
    measures => ARRAY['v', 'w NULL'],
    aggregates => ARRAY['count', 'count_distinct(v)',
        'approx_count_distinct(w)', 'approx_percentile(v, 0.5)',
        'percentile_cont(w, 0.9)', 'percentile_disc(v, 0.25)', 'last(w)']);
SELECT (pc_codec('pc_mvars', 400, 10)).*;
-- sessions with measures: delta sessions with their words
SELECT streamforge.create_pipeline('pc_msession', ARRAY['a', 'b', 'c'],
    ARRAY[streamforge.fixed('f', 10), streamforge.session('s', 5)],
    lateness => 5,
    measures => ARRAY['v', 'w NULL'],
    aggregates => ARRAY['count', 'sum(w)', 'first(v)', 'last(w)',
        'count_distinct(v)', 'max_by(w, v)']);
SELECT (pc_codec('pc_msession', 400, 10)).*;
SELECT (pc_codec('pc_mwords', 3000, 2)).*;
-- near the limit: events applied alone carry their measures
SET streamforge.max_live_buckets = 30;
SELECT (pc_codec('pc_msession', 400, 5)).*;
RESET streamforge.max_live_buckets;

-- the same calls as parallel_check with the same seed
SELECT c.transactions = e.transactions AND c.changes = e.changes AS same_run
  FROM streamforge_internal.parallel_codec_check('pc_mixed', 500, 3) AS c,
       streamforge_internal.parallel_check('pc_mixed', 500, 3) AS e;

-- bad arguments, and what the parallel mode refuses
SELECT streamforge.create_pipeline('pc_retention', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('f', 10)], lateness => 5, retention => 100);
SELECT transactions FROM streamforge_internal.parallel_codec_check('pc_retention', 10, 1);
SELECT transactions FROM streamforge_internal.parallel_codec_check('pc_fixed', -1, 1);
SELECT transactions FROM streamforge_internal.parallel_codec_check('pc_nope', 10, 1);

DROP FUNCTION pc_codec(text, int, int);
SELECT count(streamforge.drop_pipeline(p)) AS dropped
  FROM unnest(ARRAY['pc_fixed', 'pc_strict', 'pc_sliding', 'pc_progress',
                    'pc_final', 'pc_session', 'pc_mixed', 'pc_one',
                    'pc_retention', 'pc_measures', 'pc_mwords', 'pc_mvars',
                    'pc_msession', 'pc_steps']) AS p;

-- not for PUBLIC
SELECT p.oid::regprocedure, has_function_privilege('public', p.oid, 'EXECUTE') AS public_execute
  FROM pg_proc p
 WHERE p.pronamespace = 'streamforge_internal'::regnamespace
   AND p.proname = 'parallel_codec_check';
