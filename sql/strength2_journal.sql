-- strength2_journal: a journal entry whose event_id or key is not valid in
-- the database encoding is corrupt (XX001) at replay (issue 24, item 4:
-- found by test/fuzz/fuzz_journal.c).  No call can write one: both are
-- text arguments.  Before the fix the replay accepted it, and the pipeline
-- then held a string no text value may hold: its checkpoint was refused
-- (SF003, "not valid in the database encoding") and its outputs would
-- have carried the bytes into text columns.  The entries are written here
-- behind the extension's back.  Entry: format 1, kind 'I', one delivery
-- (partition 0, offset, event_id, key, event_time, value).
CREATE FUNCTION sj_entry(off bigint, id bytea, k bytea) RETURNS bytea LANGUAGE sql AS $$
  SELECT '\x0149'::bytea || int4send(1) || int2send(0::int2) || int8send(off)
         || int4send(length(id)) || id || int4send(length(k)) || k
         || int8send(5) || int8send(1) $$;
CREATE FUNCTION sj_append(name text, entry bytea) RETURNS void LANGUAGE sql AS $$
  INSERT INTO streamforge.journal
  SELECT p.id, (SELECT max(pos) + 1 FROM streamforge.journal j WHERE j.pipeline_id = p.id),
         entry
    FROM streamforge.pipeline p WHERE p.name = $1;
  UPDATE streamforge.pipeline SET version = version + 1 WHERE pipeline.name = $1 $$;
CREATE FUNCTION sj_drop_last(name text) RETURNS void LANGUAGE sql AS $$
  DELETE FROM streamforge.journal
   WHERE pipeline_id = (SELECT id FROM streamforge.pipeline WHERE pipeline.name = $1)
     AND pos = (SELECT max(pos) FROM streamforge.journal j
                 WHERE j.pipeline_id = (SELECT id FROM streamforge.pipeline WHERE pipeline.name = $1));
  UPDATE streamforge.pipeline SET version = version + 1 WHERE pipeline.name = $1 $$;
SELECT streamforge.create_pipeline('sjour', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)]);
SELECT count(*) FROM streamforge.ingest('sjour', 'p', 0, 'e0', 'k', 1, 1);
-- valid UTF-8, several bytes per character: replays
SELECT sj_append('sjour', sj_entry(1, convert_to('é1', 'UTF8'), convert_to('ключ', 'UTF8')));
\c -
SELECT * FROM streamforge.partitions('sjour');
SELECT key, count FROM streamforge.live('sjour') ORDER BY key;
-- an event_id with a byte that starts no UTF-8 character: corrupt
SELECT sj_append('sjour', sj_entry(2, '\x65ff'::bytea, '\x6b'::bytea));
\set VERBOSITY sqlstate
SELECT * FROM streamforge.partitions('sjour');
\set VERBOSITY default
\c -
SELECT * FROM streamforge.partitions('sjour');
SELECT sj_drop_last('sjour');
-- a key cut inside a character (the first byte of "é"): corrupt
SELECT sj_append('sjour', sj_entry(2, '\x6532'::bytea, '\xc3'::bytea));
\set VERBOSITY sqlstate
SELECT * FROM streamforge.partitions('sjour');
\set VERBOSITY default
SELECT sj_drop_last('sjour');
-- a NUL byte, which no text value holds: corrupt
SELECT sj_append('sjour', sj_entry(2, '\x650033'::bytea, '\x6b'::bytea));
\set VERBOSITY sqlstate
SELECT * FROM streamforge.partitions('sjour');
\set VERBOSITY default
SELECT sj_drop_last('sjour');
-- repaired: the pipeline loads, and checkpoints
SELECT * FROM streamforge.partitions('sjour');
SELECT streamforge.inspect_checkpoint(streamforge.checkpoint('sjour')) IS NOT NULL AS checkpoints;

-- clean up
SELECT streamforge.drop_pipeline('sjour');
