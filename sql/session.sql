-- session: each event opens [t, t + gap); per window and key, intervals
-- [a, b) and [c, d) merge iff a <= d and c <= b (intersecting or touching,
-- docs/semantics.md "Exact rules" 10), transitively.  A merge retracts every emitted address that
-- disappears, even when the merged session is not ready yet.
\set VERBOSITY sqlstate
-- lateness 1000 keeps every session live
SELECT streamforge.create_pipeline('session', ARRAY['p'], ARRAY[streamforge.session('s', 10)], 1000);
-- [0, 10) and [20, 30) are apart
SELECT * FROM streamforge.ingest('session', 'p', 0, 'a', 'k', 0, 1);
SELECT * FROM streamforge.ingest('session', 'p', 1, 'b', 'k', 20, 2);
SELECT * FROM streamforge.advance('session', 'p', 30);
-- [10, 20) touches both: one session [0, 30); retractions first, then the upsert
SELECT * FROM streamforge.ingest('session', 'p', 2, 'c', 'k', 10, 4);
-- [25, 35) extends the emitted [0, 30) to [0, 35), not ready at 30:
-- the old row is retracted, nothing is upserted
SELECT * FROM streamforge.ingest('session', 'p', 3, 'd', 'k', 25, 8);
SELECT * FROM streamforge.visible('session');
SELECT * FROM streamforge.live('session');
SELECT * FROM streamforge.advance('session', 'p', 35);
-- an event inside a session: same address, new aggregate
SELECT * FROM streamforge.ingest('session', 'p', 4, 'e', 'k', 3, 16);
-- [-10, 0) touches [0, 35) at 0: the start moves
SELECT * FROM streamforge.ingest('session', 'p', 5, 'f', 'k', -10, -32);
-- [46, 56) is apart; [36, 46) touches it but not [-10, 35) (36 > 35)
SELECT * FROM streamforge.ingest('session', 'p', 6, 'g', 'k', 46, 64);
SELECT * FROM streamforge.ingest('session', 'p', 7, 'h', 'k', 36, 128);
SELECT * FROM streamforge.live('session');
-- [35, 45) bridges both: [-10, 56), not ready; the emitted row is retracted
SELECT * FROM streamforge.ingest('session', 'p', 8, 'i', 'k', 35, 256);
SELECT * FROM streamforge.live('session');
SELECT * FROM streamforge.visible('session');
SELECT * FROM streamforge.advance('session', 'p', 56);
-- a new session that is ready at once ([-100, -90), -100 + 1000 is not late):
-- a single upsert
SELECT * FROM streamforge.ingest('session', 'p', 9, 'j', 'k', -100, 512);
SELECT streamforge.drop_pipeline('session');
-- keys and windows are independent: x and y never merge with each other,
-- and the same events form different sessions under different gaps
-- (lateness 100 keeps everything live)
SELECT streamforge.create_pipeline('session2', ARRAY['p'],
    ARRAY[streamforge.session('wide', 10), streamforge.session('narrow', 2)], 100);
SELECT * FROM streamforge.ingest('session2', 'p', 0, 'x0', 'x', 0, 1);
SELECT * FROM streamforge.ingest('session2', 'p', 1, 'x5', 'x', 5, 2);
-- y at 2 would touch x's narrow [0, 2) and overlap x's wide [0, 15)
SELECT * FROM streamforge.ingest('session2', 'p', 2, 'y2', 'y', 2, 3);
SELECT * FROM streamforge.live('session2');
-- watermark 7: the narrow sessions that end by 7 are ready
SELECT * FROM streamforge.advance('session2', 'p', 7);
-- x at 3: narrow [3, 5) touches x's [5, 7) (not x's [0, 2), and y's [2, 4)
-- belongs to another key): [3, 7) is ready, so retract and upsert.  In wide,
-- [3, 13) falls inside x's [0, 15), which is not ready: nothing emitted.
SELECT * FROM streamforge.ingest('session2', 'p', 3, 'x3', 'x', 3, 4);
SELECT * FROM streamforge.live('session2');
SELECT streamforge.drop_pipeline('session2');
-- one event changing several windows: all retractions first, then all
-- upserts, each group in address order (window, key, start, end)
SELECT streamforge.create_pipeline('session3', ARRAY['p'],
    ARRAY[streamforge.session('s', 5), streamforge.fixed('f', 10)], 100);
SELECT * FROM streamforge.advance('session3', 'p', 20);
SELECT * FROM streamforge.ingest('session3', 'p', 0, 'e1', 'b', 2, 1);
SELECT * FROM streamforge.ingest('session3', 'p', 1, 'e2', 'a', 4, 2);
-- b at 7: f [0, 10) changes; s [7, 12) touches [2, 7): [2, 12)
SELECT * FROM streamforge.ingest('session3', 'p', 2, 'e3', 'b', 7, 4);
SELECT * FROM streamforge.visible('session3');
SELECT streamforge.drop_pipeline('session3');

-- ------------------------------------------------------------------------
-- first/last on event-time ties through session merges
-- ------------------------------------------------------------------------
-- first/last on event-time ties in session windows whose sessions merge
-- (issue 40, the hunt's h-aggregates-697).
--
-- docs/aggregates.md: first(m) and last(m) are the values of the earliest
-- and latest event by event time, ties broken by arrival (the event
-- accepted first is first, the one accepted last is last), and this stays
-- exact through session merges.  Each session below has ties at its
-- first and last event time; a bridging event merges the sessions, once
-- with the earlier session accepted first and once with it accepted
-- last, and the ties are added before and after the merge.  After every
-- call the session's aggregates are compared with PostgreSQL's over a
-- table of the same events, ordered by (event_time, arrival).
\c -
\set VERBOSITY default
\set VERBOSITY default
SELECT streamforge.create_pipeline(p, ARRAY['p'], ARRAY[streamforge.session('g', 10)],
    lateness => 1000, measures => ARRAY['amount'],
    aggregates => ARRAY['count', 'first(amount)', 'last(amount)', 'min(amount)'])
  FROM unnest(ARRAY['s6t_fwd', 's6t_rev', 's6t_batch']) AS p;
CREATE TABLE ev (pipeline text, arrival serial, event_time bigint, amount bigint);
-- one delivery to pipeline pl, recorded with its arrival
CREATE FUNCTION put(pl text, t bigint, a bigint) RETURNS void LANGUAGE sql AS $$
  INSERT INTO ev (pipeline, event_time, amount) VALUES (pl, t, a);
  SELECT count(*) FROM streamforge.ingest_measures(pl, 'p',
      (SELECT count(*) - 1 FROM ev WHERE pipeline = pl), 'e' || a, 'k', t, ARRAY[a]) $$;
-- the live sessions with their aggregates, and PostgreSQL's over the events
-- each holds (a session holds the events of [window_start, window_end - 10])
CREATE FUNCTION sessions(pl text) RETURNS TABLE (window_start bigint,
    window_end bigint, streamforge text, postgres text) LANGUAGE sql AS $$
  SELECT l.window_start, l.window_end,
         format('%s %s %s %s', l.aggregates->>'count', l.aggregates->>'first_amount',
                l.aggregates->>'last_amount', l.aggregates->>'min_amount'),
         (SELECT format('%s %s %s %s', count(*),
                        (array_agg(e.amount ORDER BY e.event_time, e.arrival))[1],
                        (array_agg(e.amount ORDER BY e.event_time DESC, e.arrival DESC))[1],
                        min(e.amount))
            FROM ev AS e
           WHERE e.pipeline = pl AND e.event_time >= l.window_start
             AND e.event_time < l.window_end - 9)
    FROM streamforge.live_aggregates(pl) AS l ORDER BY 1 $$;
-- (a) the earlier session accepted first: [10,21) with a tie at 10 and
-- at 11, [30,41) with a tie at 30 and at 31
SELECT put('s6t_fwd', 10, 1), put('s6t_fwd', 10, 2), put('s6t_fwd', 11, 3),
       put('s6t_fwd', 11, 4);
SELECT put('s6t_fwd', 30, 5), put('s6t_fwd', 31, 6), put('s6t_fwd', 30, 7),
       put('s6t_fwd', 31, 8);
SELECT * FROM sessions('s6t_fwd');
-- the bridge at 20 touches both ([20,30)): one session [10,41), first 1
-- (time 10, accepted first), last 8 (time 31, accepted last)
SELECT put('s6t_fwd', 20, 9);
SELECT * FROM sessions('s6t_fwd');
-- ties after the merge: at 10 (accepted after 1: not first) and at 31
-- (accepted last: last)
SELECT put('s6t_fwd', 10, 10), put('s6t_fwd', 31, 11);
SELECT * FROM sessions('s6t_fwd');
-- (b) the later session accepted first: the merge's survivor ([10,...),
-- the earliest session) holds the later arrivals, the session merged into
-- it the earlier ones
SELECT put('s6t_rev', 31, 21), put('s6t_rev', 30, 22), put('s6t_rev', 31, 23),
       put('s6t_rev', 30, 24);
SELECT put('s6t_rev', 11, 25), put('s6t_rev', 10, 26), put('s6t_rev', 10, 27),
       put('s6t_rev', 11, 28);
SELECT * FROM sessions('s6t_rev');
SELECT put('s6t_rev', 20, 29);
SELECT * FROM sessions('s6t_rev');
SELECT put('s6t_rev', 10, 30), put('s6t_rev', 31, 31);
SELECT * FROM sessions('s6t_rev');
-- (c) all of (b) in one batch: the merge inside the call
INSERT INTO ev (pipeline, event_time, amount)
SELECT 's6t_batch', event_time, amount FROM ev WHERE pipeline = 's6t_rev' ORDER BY arrival;
SELECT count(*) FROM streamforge.ingest_measures_batch('s6t_batch',
    (SELECT array_agg(ROW('p', o - 1, 'e' || amount, 'k', event_time, ARRAY[amount])::streamforge.measures_delivery
                      ORDER BY o)
       FROM (SELECT row_number() OVER (ORDER BY arrival) AS o, * FROM ev
              WHERE pipeline = 's6t_batch') AS d));
SELECT * FROM sessions('s6t_batch');
-- (d) the same sessions after a restore of the checkpoint and in a new
-- backend (journal replay)
SELECT streamforge.restore('s6t_batch', streamforge.checkpoint('s6t_batch'));
SELECT * FROM sessions('s6t_batch');
\c -
SELECT p, s.* FROM unnest(ARRAY['s6t_fwd', 's6t_rev', 's6t_batch']) AS p, sessions(p) AS s
 ORDER BY 1, 2;
SELECT streamforge.drop_pipeline(p) FROM unnest(ARRAY['s6t_fwd', 's6t_rev', 's6t_batch']) AS p;
DROP FUNCTION sessions(text);
DROP FUNCTION put(text, bigint, bigint);
DROP TABLE ev;
