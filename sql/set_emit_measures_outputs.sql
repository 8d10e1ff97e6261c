--
-- set_emit from 'final' to 'update' or 'update+final' on a measures
-- pipeline with outputs on: the upserts it emits go to the changelog and
-- the results with their aggregates jsonb.  The union of windows the
-- outputs were handed pointed at the old definition's measures, freed with
-- the old state: with two ready rows or more the backend crashed (docs/
-- testing.md, A crash it found).  Fixed and session windows, 1, 2 and 5
-- ready rows (keys k1..kn, key ki with i events of measure 10 * i + j).
--
\set VERBOSITY sqlstate

CREATE FUNCTION sem_make(p text, win streamforge.window_def, nkeys int)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    i int;
    j int;
    o bigint;
BEGIN
    PERFORM streamforge.create_pipeline(p, ARRAY['p'], ARRAY[win],
        lateness => 5, emit => 'final', measures => ARRAY['m1'],
        aggregates => ARRAY['count', 'sum(m1)', 'max(m1)']);
    PERFORM streamforge.configure_outputs(p);
    -- at offsets 0, 1, ... in key order, then event time order
    FOR i, j, o IN SELECT a, b, row_number() OVER (ORDER BY a, b) - 1
                     FROM generate_series(1, nkeys) AS a,
                          generate_series(0, a - 1) AS b ORDER BY a, b LOOP
        PERFORM streamforge.ingest_measures(p, 'p', o, 'e' || i || '.' || j,
                                            'k' || i, j, ARRAY[10 * i + j]);
    END LOOP;
    -- every bucket ready (watermark past its end), none past end + lateness
    PERFORM streamforge.advance(p, 'p', 6);
END $$;

-- the outputs of pipeline p: changelog then results, with the aggregates
CREATE FUNCTION sem_outputs(p text)
RETURNS TABLE (t text, seq bigint, op text, w text, key text, ws bigint,
               we bigint, count bigint, final boolean, aggregates jsonb)
LANGUAGE sql AS $$
    SELECT 'changelog', seq, op, window_name, key, window_start, window_end,
           count, NULL::boolean, aggregates
      FROM streamforge.changelog WHERE pipeline = p
    UNION ALL
    SELECT 'results', seq, NULL, window_name, key, window_start, window_end,
           count, final, aggregates
      FROM streamforge.results WHERE pipeline = p
    ORDER BY 1, 2, 5 $$;

SELECT sem_make('f1', streamforge.fixed('w', 3), 1);
SELECT sem_make('f2', streamforge.fixed('w', 3), 2);
SELECT sem_make('f5', streamforge.fixed('w', 3), 5);
SELECT sem_make('s1', streamforge.session('g', 3), 1);
SELECT sem_make('s2', streamforge.session('g', 3), 2);
SELECT sem_make('s5', streamforge.session('g', 3), 5);
SELECT sem_make('u2', streamforge.fixed('w', 3), 2);
SELECT sem_make('v5', streamforge.session('g', 3), 5);

-- nothing emitted yet in 'final' mode
SELECT p, count(*) FROM unnest(ARRAY['f1', 'f2', 'f5', 's1', 's2', 's5', 'u2', 'v5']) AS p,
       sem_outputs(p) GROUP BY p ORDER BY p;

-- 'final' -> 'update+final': an upsert of every ready row
SELECT * FROM streamforge.set_emit('f1', 'update+final');
SELECT * FROM sem_outputs('f1');
SELECT * FROM streamforge.set_emit('f2', 'update+final');
SELECT * FROM sem_outputs('f2');
SELECT * FROM streamforge.set_emit('f5', 'update+final');
SELECT * FROM sem_outputs('f5');
SELECT * FROM streamforge.set_emit('s1', 'update+final');
SELECT * FROM sem_outputs('s1');
SELECT * FROM streamforge.set_emit('s2', 'update+final');
SELECT * FROM sem_outputs('s2');
SELECT * FROM streamforge.set_emit('s5', 'update+final');
SELECT * FROM sem_outputs('s5');

-- 'final' -> 'update': the same upserts
SELECT * FROM streamforge.set_emit('u2', 'update');
SELECT * FROM sem_outputs('u2');
SELECT * FROM streamforge.set_emit('v5', 'update');
SELECT * FROM sem_outputs('v5');

-- later changes keep working and carry their aggregates: a
-- correction, then finalization ('update+final' reports the final rows)
SELECT count(*) FROM streamforge.ingest_measures('f2', 'p', 3, 'x', 'k1', 2, ARRAY[100]);
SELECT count(*) FROM streamforge.advance('f2', 'p', 20);
SELECT * FROM sem_outputs('f2');
SELECT count(*) FROM streamforge.advance('v5', 'p', 20);
SELECT * FROM sem_outputs('v5') WHERE t = 'results';
