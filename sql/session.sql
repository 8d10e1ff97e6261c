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
