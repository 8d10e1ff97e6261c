-- The engine parts of parallel writers (issue 46, docs/design/
-- parallel-writers.md, build plan step 2), through internal functions
-- that compare them with a reference.  The fingerprint index
-- (engine/fingerprint.c), with hashes narrowed to a few bits so that
-- collisions, long probe runs, wrap-around and backward-shift removals
-- are the common case, and with full 64-bit hashes.  Then lanes,
-- transaction deltas and the head (engine/delta.c, head.c) against the
-- serial engine, on in-memory pipelines with the definition of a pipeline
-- made here.
\set VERBOSITY sqlstate

SELECT streamforge_internal.fingerprint_check(5000, 3, 1) > 0 AS narrow_3;
SELECT streamforge_internal.fingerprint_check(5000, 8, 2) > 0 AS narrow_8;
SELECT streamforge_internal.fingerprint_check(20000, 12, 3) > 0 AS narrow_12;
SELECT streamforge_internal.fingerprint_check(20000, 64, 4) > 0 AS full_64;
SELECT bool_and(streamforge_internal.fingerprint_check(2000, b, s) > 0) AS many_seeds
  FROM generate_series(1, 6) AS b, generate_series(10, 14) AS s;

-- the hash: stable, never 0, distinct for distinct ids here
SELECT streamforge_internal.fingerprint_hash('e1') =
       streamforge_internal.fingerprint_hash('e1') AS stable,
       count(DISTINCT streamforge_internal.fingerprint_hash('e' || i)) AS distinct_hashes,
       bool_and(streamforge_internal.fingerprint_hash('e' || i) <> 0) AS nonzero
  FROM generate_series(1, 10000) AS i;

-- bad arguments
SELECT streamforge_internal.fingerprint_check(10, 0, 1);
SELECT streamforge_internal.fingerprint_check(-1, 8, 1);

-- Lanes, deltas and head.  parallel_check runs two writers whose
-- transactions interleave on disjoint partitions (multi-row calls of new
-- events around a moving time, so many are late or reach ready buckets;
-- offset replays; duplicates of any earlier event, in flight in the other
-- writer's transaction too; advances and mark_idle of any partition), and
-- the same calls in commit order on the serial engine.  Every
-- transaction's changes (seq included) must be the serial engine's, and
-- whenever no transaction is open the checkpoint of head and lanes merged
-- must be the serial pipeline's byte for byte: it raises XX000 otherwise.
-- Each run must also have exercised what it is for: late events, events
-- applied alone (ready buckets), duplicates, replays, re-decided
-- transactions (another writer's commit changed a decision) and
-- collisions (an id another lane committed first).  rollbacks: calls in
-- a subtransaction that aborted (the log, new ids and view clock go back
-- to the mark, the delta is rebuilt at commit, the lanes are rebuilt with
-- every identity at another handle).  exact: transactions
-- applied event by event because they could pass
-- streamforge.max_live_buckets; errors: the SQLSTATEs that ended runs,
-- each raised by the commit and by the serial engine in the same
-- transaction's calls.
CREATE FUNCTION pe_check(p text, calls int, seeds int)
RETURNS TABLE (runs bigint, transactions bigint, late bool, alone bool,
               duplicates bool, replays bool, redecides bool,
               collisions bool, checkpoints bool, exact bool,
               rollbacks bool, errors text)
LANGUAGE sql AS $$
  SELECT count(*), sum(c.transactions), sum(c.late) > 0, sum(c.alone) > 0,
         sum(c.duplicates) > 0, sum(c.replays) > 0, sum(c.redecides) > 0,
         sum(c.collisions) > 0, sum(c.checkpoints) > count(*),
         sum(c.exact) > 0, sum(c.rollbacks) > 0,
         string_agg(DISTINCT c.error, ',')
    FROM generate_series(1, seeds) AS s,
         streamforge_internal.parallel_check(p, calls, s) AS c
$$;

-- fixed windows, count/sum/min/max, three partitions
SELECT streamforge.create_pipeline('pe_fixed', ARRAY['a', 'b', 'c'],
    ARRAY[streamforge.fixed('f', 10)], lateness => 5);
SELECT (pe_check('pe_fixed', 400, 20)).*;
-- no lateness: every event at or below the watermark is late
SELECT streamforge.create_pipeline('pe_strict', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('f', 7)]);
SELECT (pe_check('pe_strict', 400, 20)).*;
-- fixed and sliding windows: one event in several buckets, some ready
SELECT streamforge.create_pipeline('pe_sliding', ARRAY['a', 'b', 'c', 'd'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 12, 4)],
    lateness => 8);
SELECT (pe_check('pe_sliding', 400, 20)).*;
-- built-in progress: every accepted event moves its partition's clock
SELECT streamforge.create_pipeline('pe_progress', ARRAY['a', 'b', 'c'],
    ARRAY[streamforge.fixed('f', 10)], lateness => 4, out_of_orderness => 6);
SELECT (pe_check('pe_progress', 400, 20)).*;
-- emit modes with final changes
SELECT streamforge.create_pipeline('pe_final', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 20, 10)],
    lateness => 5, emit => 'update+final');
SELECT (pe_check('pe_final', 400, 20)).*;
SELECT streamforge.create_pipeline('pe_onlyfinal', ARRAY['a', 'b', 'c'],
    ARRAY[streamforge.fixed('f', 10)], lateness => 5, emit => 'final',
    out_of_orderness => 3);
SELECT (pe_check('pe_onlyfinal', 400, 20)).*;
-- sessions: no session delta yet, so every event is applied alone
-- (exact, event by event at commit)
SELECT streamforge.create_pipeline('pe_session', ARRAY['a', 'b', 'c'],
    ARRAY[streamforge.session('s', 6)], lateness => 5);
SELECT (pe_check('pe_session', 400, 20)).*;
SELECT streamforge.create_pipeline('pe_mixed', ARRAY['a', 'b', 'c'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('l', 12, 4),
          streamforge.session('s', 4)],
    lateness => 6, out_of_orderness => 5, emit => 'update+final');
SELECT (pe_check('pe_mixed', 400, 20)).*;
-- many watermark moves per call (cut 5, engine/head_clock.c): windows of
-- 1 and 2 and out_of_orderness 0 or 1, so that one multi-row call moves
-- the watermark many times, each move releasing and finalizing buckets
-- (sessions merged between moves, late events between them).  The commit
-- releases a run of implied advances at once; its changes must still be
-- numbered move by move, upserts before final changes, as the serial
-- engine numbers them.
SELECT streamforge.create_pipeline('pe_steps', ARRAY['a', 'b', 'c'],
    ARRAY[streamforge.fixed('f', 1), streamforge.sliding('l', 3, 1),
          streamforge.session('s', 1)],
    lateness => 2, out_of_orderness => 0, emit => 'update+final');
SELECT (pe_check('pe_steps', 400, 10)).*;
SELECT streamforge.create_pipeline('pe_steps_final', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('f', 2), streamforge.session('s', 2)],
    lateness => 1, out_of_orderness => 1, emit => 'final');
SELECT (pe_check('pe_steps_final', 400, 10)).*;
SELECT streamforge.create_pipeline('pe_steps_update', ARRAY['a', 'b', 'c', 'd'],
    ARRAY[streamforge.fixed('f', 1), streamforge.sliding('l', 4, 2)],
    lateness => 3, out_of_orderness => 0);
SELECT (pe_check('pe_steps_update', 400, 10)).*;
-- one partition: one writer at a time, nothing to collide with
SELECT streamforge.create_pipeline('pe_one', ARRAY['a'],
    ARRAY[streamforge.fixed('f', 10)], lateness => 5);
SELECT (pe_check('pe_one', 400, 10)).*;
-- long runs
SELECT (pe_check('pe_sliding', 5000, 3)).*;
SELECT (pe_check('pe_progress', 5000, 3)).*;
SELECT (pe_check('pe_mixed', 5000, 3)).*;

-- streamforge.max_live_buckets: near it, transactions are applied event
-- by event so that the limit is checked on the serial run's count; below
-- it, the commit fails with 54000 where the serial engine fails the call
SET streamforge.max_live_buckets = 55;
SELECT (pe_check('pe_fixed', 400, 10)).*;
SET streamforge.max_live_buckets = 34;
SELECT (pe_check('pe_fixed', 400, 10)).*;
SET streamforge.max_live_buckets = 160;
SELECT (pe_check('pe_sliding', 400, 10)).*;
SET streamforge.max_live_buckets = 12;
SELECT (pe_check('pe_session', 400, 10)).*;
RESET streamforge.max_live_buckets;

-- the same id in flight on two lanes with other values: SF002 at the
-- commit of the second
SELECT transactions > 0 FROM streamforge_internal.parallel_check('pe_fixed', 200, 7, true);
SELECT transactions > 0 FROM streamforge_internal.parallel_check('pe_one', 10, 7, true);

-- not supported yet: refused with 0A000, never a wrong result
-- measures pipelines (query-defined aggregates are): the delta's words
-- merge through the measure aggregates' merge; first/last ties are broken
-- by arrival numbers that each writer numbers locally and the commit
-- rebases, so the checkpoint (arrivals included) is the serial one's.
-- Values are small (-10 .. 10): ties in min, max, max_by, first and last.
SELECT streamforge.create_pipeline('pe_measures', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('f', 10)], lateness => 5,
    measures => ARRAY['amount'], aggregates => ARRAY['sum(amount)']);
SELECT (pe_check('pe_measures', 400, 20)).*;
-- every fixed-word kind, first/last ties, FILTER-like count_if, NULLs
SELECT streamforge.create_pipeline('pe_mwords', ARRAY['a', 'b', 'c'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 12, 4)],
    lateness => 6,
    measures => ARRAY['v', 'w NULL', 'x NULL'],
    aggregates => ARRAY['count', 'count(w)', 'sum(v)', 'sum(w)', 'min(w)',
        'max(x)', 'avg(x)', 'stddev_samp(v)', 'var_pop(w)', 'first(v)',
        'last(v)', 'first(w)', 'last(x)', 'count_if(v > 2)',
        'count_if(w <= 0)', 'max_by(v, w)', 'min_by(x, v)']);
SELECT (pe_check('pe_mwords', 400, 20)).*;
-- variable-size states: exact sets, HLL, quantile sketches
SELECT streamforge.create_pipeline('pe_mvars', ARRAY['a', 'b', 'c'],
    ARRAY[streamforge.fixed('f', 10)], lateness => 5, out_of_orderness => 4,
    emit => 'update+final',
    measures => ARRAY['v', 'w NULL'],
    aggregates => ARRAY['count', 'count_distinct(v)',
        'approx_count_distinct(w)', 'approx_percentile(v, 0.5)',
        'percentile_cont(w, 0.9)', 'percentile_disc(v, 0.25)', 'last(w)']);
SELECT (pe_check('pe_mvars', 400, 20)).*;
-- sessions of a measures pipeline: delta sessions by interval union
SELECT streamforge.create_pipeline('pe_msession', ARRAY['a', 'b', 'c'],
    ARRAY[streamforge.fixed('f', 10), streamforge.session('s', 5)],
    lateness => 5,
    measures => ARRAY['v', 'w NULL'],
    aggregates => ARRAY['count', 'sum(w)', 'first(v)', 'last(w)',
        'count_distinct(v)', 'max_by(w, v)']);
SELECT (pe_check('pe_msession', 400, 20)).*;
SELECT (pe_check('pe_mwords', 5000, 3)).*;
SET streamforge.max_live_buckets = 60;
SELECT (pe_check('pe_mwords', 400, 10)).*;
SET streamforge.max_live_buckets = 30;
SELECT (pe_check('pe_msession', 400, 10)).*;
RESET streamforge.max_live_buckets;
SELECT transactions > 0 FROM streamforge_internal.parallel_check('pe_mwords', 200, 7, true);

SELECT streamforge.create_pipeline('pe_retention', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('f', 10)], lateness => 5, retention => 100);
SELECT transactions FROM streamforge_internal.parallel_check('pe_retention', 10, 1);
-- bad arguments
SELECT transactions FROM streamforge_internal.parallel_check('pe_fixed', -1, 1);
SELECT transactions FROM streamforge_internal.parallel_check('pe_nope', 10, 1);

DROP FUNCTION pe_check(text, int, int);
SELECT count(streamforge.drop_pipeline(p)) AS dropped
  FROM unnest(ARRAY['pe_fixed', 'pe_strict', 'pe_sliding', 'pe_progress',
                    'pe_final', 'pe_onlyfinal', 'pe_session', 'pe_mixed',
                    'pe_one', 'pe_retention', 'pe_measures', 'pe_mwords',
                    'pe_mvars', 'pe_msession', 'pe_steps',
                    'pe_steps_final', 'pe_steps_update']) AS p;

-- not for PUBLIC
SELECT p.oid::regprocedure, has_function_privilege('public', p.oid, 'EXECUTE') AS public_execute
  FROM pg_proc p
 WHERE p.pronamespace = 'streamforge_internal'::regnamespace
   AND (p.proname LIKE 'fingerprint%' OR p.proname = 'parallel_check')
 ORDER BY 1::text;
