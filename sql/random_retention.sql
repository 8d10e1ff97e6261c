--
-- Randomized tests of the retention horizon (docs/semantics.md "Retention").
--
-- 1. Against the brute-force model (test/model/model.sql): the model forgets
--    literally what section 6 says after every successful call (identities
--    and offset records with event_time < H, late events with watermark <
--    H, H = watermark - lateness - retention computed in numeric), and
--    run_model compares, after every operation, outcomes, changes, live(),
--    visible(), late_events(), partitions() and the remembered/forgotten
--    counters of stats().  Small retentions, so that the horizon bites all
--    the time: forgotten offsets replay, forgotten event_ids come back as
--    new (often late) events, late rows leave late_events().
-- 2. A retention that never bites (2^62) against no retention: every
--    outcome, every change and the whole observable state are identical.
--
\set ECHO none
\i test/model/model.sql
\i test/model/twins.sql
\set ECHO all
SET synchronous_commit = off;
\x on

-- Two partitions, fixed + sliding + session, lateness 2, retention 5.
DO $$ BEGIN
    PERFORM setseed(0.31);
    PERFORM sfm.define('rt1', ARRAY['a', 'b'],
        '[["fixed","f",7],["sliding","s",10,3],["session","g",4]]', 2,
        ARRAY['k', 'K', ''], 5);
    PERFORM sfm.gen('rt1', 500, -100);
END $$;
-- A checkpoint after a run restores into an equivalent pipeline, which
-- then checkpoints to the same bytes and shows the same state.
CREATE FUNCTION sfm.roundtrip(pl text, p_scn text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    cp bytea := streamforge.checkpoint(pl);
    copy text := pl || '_copy';
BEGIN
    PERFORM sfm.create(copy, p_scn);
    PERFORM streamforge.restore(copy, cp);
    PERFORM sfm.same(pl, 'state after restore', sfm.e_state(copy), sfm.e_state(pl));
    RETURN streamforge.checkpoint(copy) = cp;
END $$;

CALL sfm.run_model('rt1', 'random_retention_1');
SELECT * FROM sfm.summary('random_retention_1');
SELECT * FROM sfm.retention_summary('random_retention_1');
SELECT sfm.roundtrip('random_retention_1', 'rt1') AS same_checkpoint;

-- Retention 0 and lateness 0 (H = watermark), wide sessions, split across
-- two connections: the second half starts from the persisted snapshot and
-- journal, whose replay must forget exactly what the calls forgot.
DO $$ BEGIN
    PERFORM setseed(0.32);
    PERFORM sfm.define('rt2', ARRAY['x', 'y', 'z'],
        '[["session","long",12],["fixed","f",5],["sliding","s",9,4]]', 0,
        ARRAY['a', 'b'], 0);
    PERFORM sfm.gen('rt2', 400, -300, spread => 25, lag => 8, p_adv => 0.2);
END $$;
CALL sfm.run_model('rt2', 'random_retention_2', 1, 200);
\c -
SET client_min_messages = warning;
SET synchronous_commit = off;
CALL sfm.run_model('rt2', 'random_retention_2', 201);
SELECT * FROM sfm.summary('random_retention_2');
SELECT * FROM sfm.retention_summary('random_retention_2');
SELECT sfm.roundtrip('random_retention_2', 'rt2') AS same_checkpoint;

-- A retention that never bites behaves exactly as no retention.
CREATE FUNCTION sfm.run_never_biting(p_scn text, a text, b text)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    o sfm.ops;
    oa sfm.outcome;
    ob sfm.outcome;
    ctx text;
    n bigint := 0;
    lat bigint := (SELECT lateness FROM sfm.scenario WHERE scn = p_scn);
BEGIN
    PERFORM streamforge.create_pipeline(a, sfm.parts(p_scn), sfm.wdefs(p_scn), lat);
    PERFORM streamforge.create_pipeline(b, sfm.parts(p_scn), sfm.wdefs(p_scn), lat,
                                        retention => 4611686018427387904);
    FOR o IN SELECT * FROM sfm.ops WHERE scn = p_scn ORDER BY i LOOP
        ctx := format('operation %s: %s', o.i, sfm.op_text(o));
        oa := sfm.try_op(a, o);
        ob := sfm.try_op(b, o);
        PERFORM sfm.same_outcome(ctx, b, ob, oa);
        PERFORM sfm.same(ctx, 'state', sfm.e_state(b), sfm.e_state(a));
        n := n + 1;
    END LOOP;
    -- nothing was forgotten, and the counters agree
    PERFORM sfm.same('end', 'stats()',
        ARRAY(SELECT s::text FROM streamforge.stats(b) s),
        ARRAY(SELECT s::text FROM streamforge.stats(a) s));
    RETURN n;
END $$;
DO $$ BEGIN
    PERFORM setseed(0.33);
    PERFORM sfm.define('rt3', ARRAY['p', 'q'],
        '[["fixed","f",6],["sliding","s",8,3],["session","g",5]]', 3,
        ARRAY['a', 'b', 'c']);
    PERFORM sfm.gen('rt3', 600, -200);
END $$;
SELECT sfm.run_never_biting('rt3', 'random_keep_all', 'random_never_bites') AS operations_identical;
SELECT forgotten_offsets, forgotten_late_events, late_events > 0 AS had_late_events,
       offset_replays > 0 AS had_replays
  FROM streamforge.stats('random_never_bites');

DROP SCHEMA sfm CASCADE;
