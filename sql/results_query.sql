-- Results you can query (issue 25 item 6; docs/outputs.md, Reading the
-- results): a lookup by key (and a time range) is an index scan, and
-- results_ts takes a key and a time range.
\set VERBOSITY sqlstate

SELECT streamforge.create_pipeline('rq', ARRAY['p'],
    ARRAY[streamforge.fixed_interval('per_minute', interval '1 minute')],
    time_unit => interval '1 second');
SELECT streamforge.configure_outputs('rq');
SELECT count(*) FROM streamforge.append_batch('rq', (
    SELECT array_agg(ROW('p', 'e' || i, 'k' || (i % 20), 1800000000 + i * 7, i)::streamforge.event
                     ORDER BY i)
      FROM generate_series(1, 2000) AS i));
SELECT count(*) FROM streamforge.advance('rq', 'p', 1800000000 + 2000 * 7);
SELECT count(*) AS results_rows FROM streamforge.results WHERE pipeline = 'rq';

-- a key lookup, and one with a time range, use the key's index (plans
-- as a reader's, whatever the statistics)
CREATE FUNCTION pg_temp.uses(q text, idx text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    l text;
BEGIN
    FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        IF l LIKE '%' || idx || '%' THEN
            RETURN true;
        END IF;
    END LOOP;
    RETURN false;
END $$;
-- (with statistics, as autovacuum may gather them at any time in the run:
-- without, the plan changed when it did)
ANALYZE streamforge.results;
SET enable_seqscan = off;
SELECT pg_temp.uses($$SELECT * FROM streamforge.results WHERE pipeline = 'rq' AND key = 'k7'$$,
                    'results_key') AS key_lookup,
       pg_temp.uses($$SELECT * FROM streamforge.results WHERE pipeline = 'rq' AND key = 'k7'
                        AND window_start >= 1800006000 AND window_end <= 1800009000$$,
                    'results_key') AS key_and_range;
RESET enable_seqscan;
-- (without the index, the lookup cannot use one on the key)
BEGIN;
DROP INDEX streamforge.results_key;
SET LOCAL enable_seqscan = off;
SELECT pg_temp.uses($$SELECT * FROM streamforge.results WHERE pipeline = 'rq' AND key = 'k7'$$,
                    'results_key') AS key_lookup_without_index;
ROLLBACK;

-- results_ts: by key and time range, with final and epoch
SELECT window_start, window_end, count, final
  FROM streamforge.results_ts('rq', for_key => 'k7',
       window_from => timestamptz '2027-01-15 09:40:00+00',
       window_to => timestamptz '2027-01-15 09:44:00+00');
SELECT count(*) AS all_rows FROM streamforge.results_ts('rq');
SELECT count(*) AS k7_rows FROM streamforge.results_ts('rq', 'k7');
SELECT count(*) AS none FROM streamforge.results_ts('rq', 'no such key');
-- bounds that are not whole units are refused, as every time of the pipeline
SELECT count(*) FROM streamforge.results_ts('rq', window_from => timestamptz '2027-01-15 09:40:00.5+00');

SELECT streamforge.drop_pipeline('rq');
