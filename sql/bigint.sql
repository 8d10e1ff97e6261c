-- bigint: a window bound, ts + gap, ts + lateness or end + lateness that
-- does not fit in bigint raises 22003 and changes nothing (docs/semantics.md "Exact rules" 1).
-- Range checks come after the offset and identity checks, only for a new
-- unique event; a late event computes no window bounds.  Sums are exact.
\set VERBOSITY sqlstate
-- fixed, lateness 0
SELECT streamforge.create_pipeline('bigint_fixed', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)]);
-- floor(min / 10) * 10 is below the bigint minimum
SELECT * FROM streamforge.ingest('bigint_fixed', 'p', 0, 'min', 'k', '-9223372036854775808'::bigint, 1);
-- the lowest time whose bucket fits
SELECT * FROM streamforge.ingest('bigint_fixed', 'p', 0, 'min8', 'k', -9223372036854775800, 1);
-- the bucket of max ends above the bigint maximum
SELECT * FROM streamforge.ingest('bigint_fixed', 'p', 1, 'max', 'k', 9223372036854775807, 1);
-- the offset is checked first
SELECT * FROM streamforge.ingest('bigint_fixed', 'p', 2, 'max', 'k', 9223372036854775807, 1);
-- the highest bucket that fits: [max - 17, max - 7)
SELECT * FROM streamforge.ingest('bigint_fixed', 'p', 1, 'max8', 'k', 9223372036854775799, 1);
SELECT * FROM streamforge.live('bigint_fixed');
SELECT * FROM streamforge.advance('bigint_fixed', 'p', 0);
-- a late event computes no bounds: the bigint minimum is fine now
SELECT * FROM streamforge.ingest('bigint_fixed', 'p', 2, 'late-min', 'k', '-9223372036854775808'::bigint, 2);
-- the watermark may be the bigint maximum
SELECT * FROM streamforge.advance('bigint_fixed', 'p', 9223372036854775807);
SELECT * FROM streamforge.ingest('bigint_fixed', 'p', 3, 'max8b', 'k', 9223372036854775799, 3);
SELECT * FROM streamforge.late_events('bigint_fixed');
SELECT * FROM streamforge.live('bigint_fixed');
SELECT streamforge.drop_pipeline('bigint_fixed');
-- lateness 10: end + lateness must fit, and ts + lateness once a watermark exists
SELECT streamforge.create_pipeline('bigint_late', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)], 10);
-- no watermark: [max - 17, max - 7) fits, but its end + 10 does not
SELECT * FROM streamforge.ingest('bigint_late', 'p', 0, 'a', 'k', 9223372036854775795, 1);
-- [max - 27, max - 17): end + 10 = max - 7 fits
SELECT * FROM streamforge.ingest('bigint_late', 'p', 0, 'b', 'k', 9223372036854775789, 1);
SELECT * FROM streamforge.advance('bigint_late', 'p', 100);
-- with a watermark, the late test computes ts + 10: out of range
SELECT * FROM streamforge.ingest('bigint_late', 'p', 1, 'c', 'k', 9223372036854775798, 1);
-- min + 10 < 100: late, and no bounds are computed
SELECT * FROM streamforge.ingest('bigint_late', 'p', 1, 'd', 'k', '-9223372036854775808'::bigint, 1);
SELECT * FROM streamforge.late_events('bigint_late');
SELECT * FROM streamforge.live('bigint_late');
SELECT streamforge.drop_pipeline('bigint_late');
-- the largest lateness: only buckets with end <= 0 fit end + lateness
SELECT streamforge.create_pipeline('bigint_maxlate', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)], 9223372036854775807);
SELECT * FROM streamforge.ingest('bigint_maxlate', 'p', 0, 'a', 'k', 0, 1);
SELECT * FROM streamforge.ingest('bigint_maxlate', 'p', 0, 'b', 'k', -10, 1);
SELECT * FROM streamforge.advance('bigint_maxlate', 'p', 0);
-- -11 + max is not < 0: accepted, and corrects nothing (a new bucket)
SELECT * FROM streamforge.ingest('bigint_maxlate', 'p', 1, 'c', 'k', -11, 2);
-- min + max = -1 < 0: late
SELECT * FROM streamforge.ingest('bigint_maxlate', 'p', 2, 'd', 'k', '-9223372036854775808'::bigint, 4);
SELECT * FROM streamforge.late_events('bigint_maxlate');
SELECT streamforge.drop_pipeline('bigint_maxlate');
-- session: ts + gap must fit
SELECT streamforge.create_pipeline('bigint_session', ARRAY['p'], ARRAY[streamforge.session('s', 100)]);
SELECT * FROM streamforge.ingest('bigint_session', 'p', 0, 'a', 'k', 9223372036854775708, 1);
SELECT * FROM streamforge.ingest('bigint_session', 'p', 0, 'b', 'k', 9223372036854775707, 1);
SELECT * FROM streamforge.ingest('bigint_session', 'p', 1, 'c', 'k', '-9223372036854775808'::bigint, 1);
SELECT * FROM streamforge.live('bigint_session');
-- even inside an existing session, [t, t + gap) must fit
SELECT * FROM streamforge.ingest('bigint_session', 'p', 2, 'd', 'k', 9223372036854775800, 2);
SELECT streamforge.drop_pipeline('bigint_session');
-- sliding: a bucket starting below the bigint minimum is an error, not skipped
SELECT streamforge.create_pipeline('bigint_sliding', ARRAY['p'], ARRAY[streamforge.sliding('w', 10, 5)]);
-- min: both starts (min - 2 and min - 7) are below the minimum
SELECT * FROM streamforge.ingest('bigint_sliding', 'p', 0, 'a', 'k', '-9223372036854775808'::bigint, 1);
-- min + 3: [min + 3, min + 13) fits, [min - 2, min + 8) does not
SELECT * FROM streamforge.ingest('bigint_sliding', 'p', 0, 'b', 'k', -9223372036854775805, 1);
-- min + 8: both fit
SELECT * FROM streamforge.ingest('bigint_sliding', 'p', 0, 'c', 'k', -9223372036854775800, 1);
-- max: ends max + 3 and max + 8
SELECT * FROM streamforge.ingest('bigint_sliding', 'p', 1, 'd', 'k', 9223372036854775807, 2);
SELECT * FROM streamforge.ingest('bigint_sliding', 'p', 1, 'e', 'k', 9223372036854775794, 2);
SELECT * FROM streamforge.live('bigint_sliding');
SELECT streamforge.drop_pipeline('bigint_sliding');
-- exact sums beyond bigint, returned as numeric
SELECT streamforge.create_pipeline('bigint_sum', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)]);
SELECT * FROM streamforge.ingest('bigint_sum', 'p', 0, 'x1', 'max', 1, 9223372036854775807);
SELECT * FROM streamforge.ingest('bigint_sum', 'p', 1, 'x2', 'max', 2, 9223372036854775807);
SELECT * FROM streamforge.ingest('bigint_sum', 'p', 2, 'x3', 'max', 3, 9223372036854775807);
SELECT * FROM streamforge.ingest('bigint_sum', 'p', 3, 'n1', 'min', 4, '-9223372036854775808'::bigint);
SELECT * FROM streamforge.ingest('bigint_sum', 'p', 4, 'n2', 'min', 5, '-9223372036854775808'::bigint);
SELECT * FROM streamforge.ingest('bigint_sum', 'p', 5, 'm1', 'mix', 6, 9223372036854775807);
SELECT * FROM streamforge.ingest('bigint_sum', 'p', 6, 'm2', 'mix', 7, '-9223372036854775808'::bigint);
SELECT * FROM streamforge.ingest('bigint_sum', 'p', 7, 'm3', 'mix', 8, -1);
SELECT * FROM streamforge.advance('bigint_sum', 'p', 10);
SELECT key, pg_typeof(sum), sum = 3 * 9223372036854775807::numeric AS three_max
  FROM streamforge.visible('bigint_sum') WHERE key = 'max';
SELECT streamforge.drop_pipeline('bigint_sum');
