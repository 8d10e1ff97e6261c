--
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
