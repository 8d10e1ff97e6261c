-- checkpoint_nullable: checkpoints of pipelines with nullable measures
-- (issue 38, defect 5; docs/checkpoint-format.md, "Version 2"): a null
-- element of an identity's measures is a NULL of a measure declared
-- "name NULL", and a nullable measure's state starts with its count of
-- non-NULL values.  Hostile documents (edited as checkpoint_invalid does,
-- wrapped in a version 2 envelope) are refused with SF003, never a crash.
SET client_min_messages = warning;
CREATE SCHEMA cnl;
SET search_path = cnl, public;
\i test/sql/checkpoint_forge.sql
CREATE FUNCTION try(cp bytea) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    st text; msg text; det text;
BEGIN
    PERFORM streamforge.restore('cnl', cp);
    RETURN 'restored';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
                            det = PG_EXCEPTION_DETAIL;
    RETURN st || ': ' || msg || coalesce(' | ' || nullif(det, ''), '');
END $$;
RESET client_min_messages;

SELECT streamforge.create_pipeline('cnl', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    measures => ARRAY['one', 'x NULL'],
    aggregates => ARRAY['count', 'count(x)', 'sum(x)', 'min(x)']);
SELECT count(*) FROM streamforge.ingest_measures('cnl', 'p', 0, 'e0', 'k', 1, ARRAY[1, NULL]);
SELECT count(*) FROM streamforge.ingest_measures('cnl', 'p', 1, 'e1', 'k', 2, ARRAY[2, 5]);
SELECT count(*) FROM streamforge.ingest_measures('cnl', 'p', 2, 'e2', 'n', 3, ARRAY[3, NULL]);
CREATE TABLE d AS
SELECT convert_from(substring(streamforge.checkpoint('cnl') FROM 25), getdatabaseencoding()) AS doc;
-- the parts the cases edit occur once each: x's state of k is count 1,
-- sum 5 (2 words), min 5; of n all zeros
SELECT strpos(doc, '"measures":["one","x NULL"]') > 0 AS def,
       strpos(doc, '"measures":[1,null]') > 0 AS e0_null,
       strpos(doc, '"state":[1,5,0,5]') > 0 AS k_state,
       strpos(doc, '"state":[0,0,0,0]') > 0 AS n_state
  FROM d;
SELECT try(wrap2(doc)) FROM d;
-- a null of the measure not declared nullable
SELECT try(wrap2(replace(doc, '"measures":[1,null]', '"measures":[null,null]'))) FROM d;
-- the definition without NULL: not the target's, and a null measure
SELECT try(wrap2(replace(doc, '"x NULL"', '"x"'))) FROM d;
-- a spelling that is not the normalized one
SELECT try(wrap2(replace(doc, '"x NULL"', '"x null"'))) FROM d;
-- a first measure declared nullable
SELECT try(wrap2(replace(doc, '"measures":["one","x NULL"]', '"measures":["one NULL","x NULL"]'))) FROM d;
-- a value where the event had NULL: the buckets are not those of the events
SELECT try(wrap2(replace(doc, '"measures":[1,null]', '"measures":[1,0]'))) FROM d;
-- a non-NULL count that is not the events'
SELECT try(wrap2(replace(doc, '"state":[1,5,0,5]', '"state":[2,5,0,5]'))) FROM d;
-- parts of a measure that saw no value that are not zero
SELECT try(wrap2(replace(doc, '"state":[0,0,0,0]', '"state":[0,0,0,7]'))) FROM d;
-- a state without the count word
SELECT try(wrap2(replace(doc, '"state":[1,5,0,5]', '"state":[5,0,5]'))) FROM d;
-- one null element too many, far too many, and malformed nulls
SELECT try(wrap2(replace(doc, '"measures":[1,null]', '"measures":[1,null,null]'))) FROM d;
SELECT try(wrap2(replace(doc, '"measures":[1,null]',
    '"measures":[' || repeat('null,', 40) || 'null]'))) FROM d;
SELECT try(wrap2(replace(doc, '"measures":[1,null]', '"measures":[1,nul]'))) FROM d;
SELECT try(wrap2(replace(doc, '"measures":[1,null]', '"measures":[1,"null"]'))) FROM d;
-- after all of them, the pipeline is the one it was
SELECT key, window_start, count, aggregates FROM streamforge.live_aggregates('cnl') ORDER BY key;
SELECT streamforge.checkpoint('cnl') = wrap2(doc) AS unchanged FROM d;

-- journal entries (kind 'V') of a pipeline with nullable measures carry
-- one word more per delivery, the NULL mask; replay (a new connection's
-- cold load) refuses a mask of a measure not declared nullable, a value
-- under a NULL bit, a mask past the measures and the width of 0.3.0
-- (XX001, corrupt).  Written behind the extension's back, as
-- the journal_compact test does.  Entry: format 1, 'V', one delivery (partition
-- 0, offset 3, event_id, key, event_time 4), then width measures words.
CREATE FUNCTION cnl.ventry(nm integer, w bigint[]) RETURNS bytea LANGUAGE sql AS $$
  SELECT '\x0156'::bytea || int4send(1) || int2send(nm::int2) || int2send(0::int2)
         || int8send(3) || int4send(2) || '\x6533'::bytea || int4send(1) || '\x6b'::bytea
         || int8send(4)
         || (SELECT string_agg(int8send(x), ''::bytea ORDER BY o) FROM unnest(w) WITH ORDINALITY AS u(x, o)) $$;
CREATE FUNCTION cnl.vappend(entry bytea) RETURNS void LANGUAGE sql AS $$
  INSERT INTO streamforge.journal
  SELECT p.id, (SELECT coalesce(max(pos), 0) + 1 FROM streamforge.journal j WHERE j.pipeline_id = p.id),
         entry
    FROM streamforge.pipeline p WHERE p.name = 'cnl';
  UPDATE streamforge.pipeline SET version = version + 1 WHERE pipeline.name = 'cnl' $$;
CREATE FUNCTION cnl.vdrop() RETURNS void LANGUAGE sql AS $$
  DELETE FROM streamforge.journal
   WHERE pipeline_id = (SELECT id FROM streamforge.pipeline WHERE pipeline.name = 'cnl')
     AND pos = (SELECT max(pos) FROM streamforge.journal j
                 WHERE j.pipeline_id = (SELECT id FROM streamforge.pipeline WHERE pipeline.name = 'cnl'));
  UPDATE streamforge.pipeline SET version = version + 1 WHERE pipeline.name = 'cnl' $$;
-- the NULL mask 0 of 0.3.0's width (2 words): corrupt
SELECT cnl.vappend(cnl.ventry(2, ARRAY[1, 9]));
\set VERBOSITY sqlstate
SELECT consumed_offset FROM streamforge.partitions('cnl');
\set VERBOSITY default
SELECT cnl.vdrop();
-- the first measure NULL (mask 1): corrupt
SELECT cnl.vappend(cnl.ventry(3, ARRAY[0, 9, 1]));
\set VERBOSITY sqlstate
SELECT consumed_offset FROM streamforge.partitions('cnl');
\set VERBOSITY default
SELECT cnl.vdrop();
-- x NULL (mask 2) with a value 9 under it: corrupt
SELECT cnl.vappend(cnl.ventry(3, ARRAY[1, 9, 2]));
\set VERBOSITY sqlstate
SELECT consumed_offset FROM streamforge.partitions('cnl');
\set VERBOSITY default
SELECT cnl.vdrop();
-- a bit past the measures: corrupt
SELECT cnl.vappend(cnl.ventry(3, ARRAY[1, 0, 1099511627778]));
\set VERBOSITY sqlstate
SELECT consumed_offset FROM streamforge.partitions('cnl');
\set VERBOSITY default
SELECT cnl.vdrop();
-- x NULL, its word 0: replays, e3 counts for count but not for x
SELECT cnl.vappend(cnl.ventry(3, ARRAY[1, 0, 2]));
\c -
SELECT consumed_offset FROM streamforge.partitions('cnl');
SELECT key, window_start, count, aggregates FROM streamforge.live_aggregates('cnl') ORDER BY key;
SET search_path = cnl, public;
DROP TABLE d;
SELECT streamforge.drop_pipeline('cnl');
SET client_min_messages = warning;
DROP SCHEMA cnl CASCADE;
