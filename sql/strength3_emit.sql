-- strength3_emit: a lower lateness in a mode with final changes reports
-- final exactly the rows the watermark has passed by more than the new
-- lateness (issue 24: mutant emit-final-lateness-boundary of
-- scripts/mutants-0.3.tsv).  At a watermark of exactly end + lateness a
-- row is not final yet (docs/semantics.md: final once the watermark is
-- past end + lateness); the next advance reports it, once.
SELECT streamforge.create_pipeline('s3e', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    lateness => 50, emit => 'update+final');
SELECT streamforge.configure_outputs('s3e');
SELECT count(*) FROM streamforge.ingest('s3e', 'p', 0, 'a', 'k', 1, 1);
SELECT count(*) FROM streamforge.ingest('s3e', 'p', 1, 'b', 'k', 11, 1);
SELECT count(*) FROM streamforge.advance('s3e', 'p', 20);
-- watermark 20 = [0, 10)'s end + 10: nothing final
SELECT seq, op, window_start, count FROM streamforge.set_lateness('s3e', 10);
-- watermark 21: [0, 10) final now, [10, 20) not (20 + 10 > 21)
SELECT seq, op, window_start, count FROM streamforge.advance('s3e', 'p', 21);
-- a lower lateness again: [10, 20) is past 20 + 0 at 21
SELECT seq, op, window_start, count FROM streamforge.set_lateness('s3e', 0);
SELECT seq, op, window_start, count FROM streamforge.changelog
 WHERE pipeline = 's3e' ORDER BY seq;
SELECT window_start, count, final FROM streamforge.results
 WHERE pipeline = 's3e' ORDER BY window_start;
SELECT streamforge.drop_pipeline('s3e');
