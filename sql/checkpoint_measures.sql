-- checkpoint_measures: restore() checks a version 2 checkpoint's
-- identity arrivals against its arrivals counter (1 .. arrivals) and its
-- buckets' aggregate states against their events (issue 24: mutants
-- ck-arrival-upper and magg-check-state-skipped of scripts/mutants-0.3.tsv:
-- no test edited an arrival or a state).  The document is edited as
-- checkpoint_invalid does, and wrapped in an envelope of format version 2.
SET client_min_messages = warning;
CREATE SCHEMA s3m;
SET search_path = s3m, public;
\i test/sql/checkpoint_forge.sql
CREATE FUNCTION try(cp bytea) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    st text; msg text; det text;
BEGIN
    PERFORM streamforge.restore('s3m', cp);
    RETURN 'restored';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
                            det = PG_EXCEPTION_DETAIL;
    RETURN st || ': ' || msg || coalesce(' | ' || nullif(det, ''), '');
END $$;
RESET client_min_messages;

SELECT streamforge.create_pipeline('s3m', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    measures => ARRAY['a'], aggregates => ARRAY['count', 'sum(a)']);
SELECT count(*) FROM streamforge.ingest_measures('s3m', 'p', 0, 'e0', 'k', 1, ARRAY[5]);
SELECT count(*) FROM streamforge.ingest_measures('s3m', 'p', 1, 'e1', 'k', 2, ARRAY[6]);
CREATE TABLE d AS
SELECT convert_from(substring(streamforge.checkpoint('s3m') FROM 25), getdatabaseencoding()) AS doc;
-- the document as it is: arrivals 2, e0 arrived 1st, e1 2nd
SELECT get_byte(streamforge.checkpoint('s3m'), 9) AS version,
       get_byte(streamforge.checkpoint('s3m'), 11) AS flags,
       (length(doc) - length(replace(doc, '"arrivals":2,', ''))) / 13 AS arrivals_2,
       (length(doc) - length(replace(doc, '"arrival":2,', ''))) / 12 AS one_arrival_2
  FROM d;
SELECT try(wrap2(doc)) FROM d;
-- an arrival one past the counter: refused
SELECT try(wrap2(replace(doc, '"arrival":2,', '"arrival":3,'))) FROM d;
-- so is 0
SELECT try(wrap2(replace(doc, '"arrival":1,', '"arrival":0,'))) FROM d;
-- a live bucket's aggregate state that its events do not give (sum 12
-- for events 5 and 6, the count still 2): refused (mutant
-- magg-check-state-skipped: no test reached this check)
SELECT (length(doc) - length(replace(doc, '"state":[11,0]', ''))) / 14 AS one_state FROM d;
SELECT try(wrap2(replace(doc, '"state":[11,0]', '"state":[12,0]'))) FROM d;
-- the counter raised to 3 makes arrival 3 the last one
SELECT try(wrap2(replace(replace(doc, '"arrival":2,', '"arrival":3,'),
                          '"arrivals":2,', '"arrivals":3,'))) FROM d;
SELECT key, window_start, count, aggregates FROM streamforge.live_aggregates('s3m');
DROP TABLE d;
SELECT streamforge.drop_pipeline('s3m');
SET client_min_messages = warning;
DROP SCHEMA s3m CASCADE;

-- ------------------------------------------------------------------------
-- An emitted row's aggregate state against its live bucket
-- ------------------------------------------------------------------------
-- restore() compares each emitted row of a
-- version 2 checkpoint with its live bucket in the aggregate state too,
-- not only in count, sum, min and max (issue 24:
-- scripts/mutants-0.3.tsv: mutant ck-views-magg-unchecked; the state of a
-- live bucket is checked against its events, that of an emitted row only
-- against its bucket).  Edited and wrapped as at the top of
-- this file.
\c -
SET client_min_messages = warning;
CREATE SCHEMA s4w;
SET search_path = s4w, public;
\i test/sql/checkpoint_forge.sql
CREATE FUNCTION try(cp bytea) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    st text; msg text; det text;
BEGIN
    PERFORM streamforge.restore('s4w', cp);
    RETURN 'restored';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
                            det = PG_EXCEPTION_DETAIL;
    RETURN st || ': ' || msg || coalesce(' | ' || nullif(det, ''), '');
END $$;
RESET client_min_messages;

SELECT streamforge.create_pipeline('s4w', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    measures => ARRAY['a', 'b'], aggregates => ARRAY['count', 'sum(b)']);
SELECT count(*) FROM streamforge.ingest_measures('s4w', 'p', 0, 'e0', 'k', 1, ARRAY[5, 7]);
SELECT count(*) FROM streamforge.ingest_measures('s4w', 'p', 1, 'e1', 'k', 2, ARRAY[6, 8]);
SELECT count(*) FROM streamforge.advance('s4w', 'p', 10);
CREATE TABLE d AS
SELECT convert_from(substring(streamforge.checkpoint('s4w') FROM 25), getdatabaseencoding()) AS doc;
-- the emitted row and the live bucket have the same state (sum(b) = 15)
SELECT (length(doc) - length(replace(doc, '"state":[15,0]', ''))) / 14 AS states_15,
       strpos(doc, '"changelog"') < strpos(doc, '"windows"') AS changelog_first
  FROM d;
SELECT try(wrap2(doc)) FROM d;
-- the emitted row's state changed, its count, sum, min and max not: refused
SELECT try(wrap2(overlay(doc PLACING '"state":[16,0]'
                         FROM strpos(doc, '"state":[15,0]') FOR 14))) FROM d;
SELECT key, window_start, count, aggregates FROM streamforge.visible_aggregates('s4w');
DROP TABLE d;
SELECT streamforge.drop_pipeline('s4w');
SET client_min_messages = warning;
DROP SCHEMA s4w CASCADE;
RESET client_min_messages;

-- ------------------------------------------------------------------------
-- Shared arrivals, state words of visible rows, count_if operators
-- ------------------------------------------------------------------------
-- checkpoint validation of issue 40 items 8 and 14
-- (docs/checkpoint-format.md, "Version 2"; docs/aggregates.md).
--  8. a version 2 checkpoint in which two identities share one arrival is
--     refused (SF003); a visible (emitted) row whose measure state has not
--     exactly the words its aggregates need is refused with its own
--     message, one word short (nothing past the parsed state is read) or
--     one word too many;
-- 14. restore into a pipeline whose count_if differs only in its
--     comparison operator is refused as a different definition, and the
--     detail names the difference.
-- The document is edited as at the top of this file, and
-- wrapped in an envelope of format version 2.
\c -
SET client_min_messages = warning;
CREATE SCHEMA s5c;
SET search_path = s5c, public;
\i test/sql/checkpoint_forge.sql
CREATE FUNCTION try(cp bytea) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    st text; msg text; det text;
BEGIN
    PERFORM streamforge.restore('s5c', cp);
    RETURN 'restored';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
                            det = PG_EXCEPTION_DETAIL;
    RETURN st || ': ' || msg || coalesce(' | ' || nullif(det, ''), '');
END $$;
RESET client_min_messages;

SELECT streamforge.create_pipeline('s5c', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    measures => ARRAY['a'], aggregates => ARRAY['count', 'sum(a)']);
SELECT count(*) FROM streamforge.ingest_measures('s5c', 'p', 0, 'e0', 'k', 1, ARRAY[5]);
SELECT count(*) FROM streamforge.ingest_measures('s5c', 'p', 1, 'e1', 'k', 2, ARRAY[6]);
SELECT count(*) FROM streamforge.ingest_measures('s5c', 'p', 2, 'e2', 'k', 13, ARRAY[7]);
-- [0,10) is emitted: a visible row with its state, and its live bucket
SELECT count(*) FROM streamforge.advance('s5c', 'p', 10);
CREATE TABLE d AS
SELECT convert_from(substring(streamforge.checkpoint('s5c') FROM 25), getdatabaseencoding()) AS doc;
-- the document as it is: arrivals 3; e0, e1, e2 arrived 1st, 2nd, 3rd;
-- the state [11,0] twice (the live bucket and its visible row)
SELECT (length(doc) - length(replace(doc, '"arrivals":3,', ''))) / 13 AS arrivals_3,
       (length(doc) - length(replace(doc, '"arrival":1,', ''))) / 12 AS one_arrival_1,
       (length(doc) - length(replace(doc, '"arrival":2,', ''))) / 12 AS one_arrival_2,
       (length(doc) - length(replace(doc, '"state":[11,0]', ''))) / 14 AS states_11
  FROM d;
SELECT try(wrap2(doc)) FROM d;
-- 8a. e1 given e0's arrival: two identities with one arrival
SELECT try(wrap2(replace(doc, '"arrival":2,', '"arrival":1,'))) FROM d;
-- and e2 given e1's (the last arrival is still 3's counter)
SELECT try(wrap2(replace(doc, '"arrival":3,', '"arrival":2,'))) FROM d;
-- 8b. the visible row's state one word short, then one too many, then
-- none (the live bucket keeps its state: the document's first occurrence,
-- in "changelog", before "clock", is the row's)
SELECT position('"visible"' IN doc) < position('"state":[11,0]' IN doc) AS in_visible,
       position('"state":[11,0]' IN doc) < position('"clock"' IN doc) AS before_clock
  FROM d;
CREATE FUNCTION row_state(doc text, st text) RETURNS text LANGUAGE sql AS $$
  SELECT overlay(doc PLACING st FROM position('"state":[11,0]' IN doc) FOR 14) $$;
SELECT try(wrap2(row_state(doc, '"state":[11]'))) FROM d;
SELECT try(wrap2(row_state(doc, '"state":[11,0,0]'))) FROM d;
SELECT try(wrap2(row_state(doc, '"state":[]'))) FROM d;
-- the same state, as it was: restored
SELECT try(wrap2(row_state(doc, '"state":[11,0]'))) FROM d;
DROP TABLE d;
SELECT streamforge.drop_pipeline('s5c');

-- 14. count_if(a < 5) against count_if(a <= 5), and each operator
SELECT streamforge.create_pipeline('s5c', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    measures => ARRAY['a'], aggregates => ARRAY['count', 'count_if(a < 5) AS c']);
SELECT count(*) FROM streamforge.ingest_measures('s5c', 'p', 0, 'e0', 'k', 1, ARRAY[5]);
CREATE TABLE cp AS SELECT streamforge.checkpoint('s5c') AS c;
SELECT streamforge.drop_pipeline('s5c');
CREATE FUNCTION each_op() RETURNS TABLE (op text, restore text)
LANGUAGE plpgsql AS $$
BEGIN
    FOREACH op IN ARRAY ARRAY['<=', '>', '>=', '=', '<>', '<'] LOOP
        PERFORM streamforge.create_pipeline('s5c', ARRAY['p'],
            ARRAY[streamforge.fixed('w', 10)], measures => ARRAY['a'],
            aggregates => ARRAY['count', 'count_if(a ' || op || ' 5) AS c']);
        restore := try((SELECT c FROM cp));
        PERFORM streamforge.drop_pipeline('s5c');
        RETURN NEXT;
    END LOOP;
END $$;
SELECT * FROM each_op();
DROP TABLE cp;
SET client_min_messages = warning;
DROP SCHEMA s5c CASCADE;
