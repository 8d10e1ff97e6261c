-- sliding: every [start, start + size) containing t, start a multiple of
-- step (floor division for negative times).  The size may be a multiple of
-- the step, not a multiple, or smaller than the step (some times then fall
-- into no window).
\set VERBOSITY sqlstate
SELECT streamforge.create_pipeline('sliding', ARRAY['p'],
    ARRAY[streamforge.sliding('m', 10, 5),    -- size a multiple of step
          streamforge.sliding('n', 10, 4),    -- not a multiple
          streamforge.sliding('s', 3, 5)]);   -- size < step
-- t = 7:  m [0,10) [5,15);  n [0,10) [4,14);  s [5,8)
SELECT * FROM streamforge.ingest('sliding', 'p', 0, 'a', 'k', 7, 1);
-- t = -3: m [-10,0) [-5,5);  n [-12,-2) [-8,2) [-4,6);  s [-5,-2)
SELECT * FROM streamforge.ingest('sliding', 'p', 1, 'b', 'k', -3, 2);
-- t = 3:  m [-5,5) [0,10);  n [-4,6) [0,10);  s none (3 is in no [5k, 5k + 3))
SELECT * FROM streamforge.ingest('sliding', 'p', 2, 'c', 'k', 3, 4);
-- t = -6: m [-15,-5) [-10,0);  n [-12,-2) [-8,2) (not [-16,-6): half-open);  s none
SELECT * FROM streamforge.ingest('sliding', 'p', 3, 'd', 'k', -6, 8);
SELECT * FROM streamforge.live('sliding');
-- watermark 0: the buckets with end <= 0, in address order
SELECT * FROM streamforge.advance('sliding', 'p', 0);
-- watermark 20: all the others
SELECT * FROM streamforge.advance('sliding', 'p', 20);
-- lateness 0: every bucket has end < 20 and is finalized
SELECT * FROM streamforge.live('sliding');
SELECT streamforge.drop_pipeline('sliding');
-- size = step behaves like a fixed window; step 1 puts an event in size buckets
SELECT streamforge.create_pipeline('sliding2', ARRAY['p'],
    ARRAY[streamforge.sliding('eq', 4, 4), streamforge.sliding('one', 3, 1)]);
SELECT * FROM streamforge.ingest('sliding2', 'p', 0, 'a', 'k', -1, 5);
SELECT * FROM streamforge.live('sliding2');
SELECT streamforge.drop_pipeline('sliding2');
