-- Empty results: a write call that changes nothing visible returns the
-- empty set without materializing one (src/api/args.c, sf_return_changes).  The
-- same call site may alternate between empty and non-empty results, in
-- every context a set-returning function runs in: FROM, LATERAL, the
-- target list, PL/pgSQL PERFORM and RETURN QUERY.
-- w: fixed windows of 10, one partition, so progress is the watermark.
SELECT streamforge.create_pipeline('empty_results', ARRAY['p'],
                                   ARRAY[streamforge.fixed('w', 10)], 0);
-- FROM: nothing changes
SELECT * FROM streamforge.ingest('empty_results', 'p', 0, 'e0', 'k', 1, 1);
SELECT count(*) FROM streamforge.ingest('empty_results', 'p', 1, 'e1', 'k', 12, 2);
-- the target list: advances that close nothing, one window, nothing, one
SELECT v.n, (streamforge.advance('empty_results', 'p', v.n)).*
  FROM (VALUES (5), (15), (17), (25)) AS v(n) ORDER BY v.n;
-- LATERAL: nothing changes (an event, a late one dropped, an event)
SELECT r.n, c.op, c.window_start, c.count
  FROM (VALUES (2, 'e2', 31), (3, 'e3', 3), (4, 'e4', 43)) AS r(n, id, t),
       LATERAL streamforge.ingest('empty_results', 'p', r.n, r.id, 'k', r.t, 1) AS c
 ORDER BY r.n;
-- LATERAL: nothing, one window, nothing, one window
SELECT v.n, c.op, c.window_start, c.count
  FROM (VALUES (35), (41), (44), (52)) AS v(n)
  LEFT JOIN LATERAL streamforge.advance('empty_results', 'p', v.n) AS c ON true
 ORDER BY v.n;
-- PL/pgSQL: PERFORM and RETURN QUERY, empty and not
DO $$
BEGIN
    PERFORM streamforge.ingest('empty_results', 'p', 5, 'e5', 'k', 56, 1);
    PERFORM streamforge.advance('empty_results', 'p', 58);
    PERFORM streamforge.ingest('empty_results', 'p', 6, 'e6', 'k', 70, 4);
END $$;
CREATE FUNCTION empty_results_advance(progress bigint)
RETURNS SETOF streamforge.change LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY SELECT * FROM streamforge.advance('empty_results', 'p', progress);
END $$;
SELECT op, window_start, count FROM empty_results_advance(59);
SELECT op, window_start, count FROM empty_results_advance(65);
-- what is still open
SELECT window_name, key, window_start, count, sum FROM streamforge.live('empty_results')
 ORDER BY window_start;
DROP FUNCTION empty_results_advance(bigint);
SELECT streamforge.drop_pipeline('empty_results');
