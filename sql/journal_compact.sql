-- journal_compact: the compact journal format of ingest entries (format 3,
-- src/codec/journal.c, issue 23).  What a call writes replays to the same
-- state, byte for byte, as the old format 1 entries of 0.1.0 and 0.2.0 of
-- the same calls; and a format 3 entry that does not parse is corrupt.

-- 1. A pipeline of 20 partitions (more than the 16 slots of the offset
-- cache, so slots are shared), three windows, a lateness.
CREATE FUNCTION jc_create(name text) RETURNS void LANGUAGE sql AS $$
  SELECT streamforge.create_pipeline(name,
           ARRAY(SELECT 'p' || lpad(i::text, 2, '0') FROM generate_series(1, 20) i),
           ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 10, 5),
                 streamforge.session('g', 7)], lateness => 5) $$;
SELECT jc_create('jc');
-- 400 deliveries in 4 calls: partitions interleaved, event ids sharing
-- prefixes (some over 127 bytes), 150 keys (key refs of two bytes), times
-- out of order and jumping far, values at both ends of bigint; every 25th
-- delivery delivers an earlier event again, at a new offset.
CREATE TABLE jc_d AS
WITH ev AS (
  SELECT i,
         'p' || lpad((1 + (i * 7) % 20)::text, 2, '0') AS part,
         CASE WHEN i % 25 = 24 THEN i - 10 ELSE i END AS e
    FROM generate_series(0, 399) i)
SELECT i, i / 100 AS call, part,
       (row_number() OVER (PARTITION BY part ORDER BY i) - 1)::bigint AS off,
       CASE WHEN e % 3 = 0 THEN 'ev' || ((e * 37) % 400)
            ELSE 'x' || repeat('y', 130) || e END AS id,
       'k' || (e % 150) AS key,
       CASE WHEN e = 200 THEN 1000000000000000
            ELSE e * 3 - (e % 4) * 5 END AS t,
       CASE WHEN e % 50 = 1 THEN 9223372036854775807
            WHEN e % 50 = 2 THEN -9223372036854775808
            ELSE e % 9 - 4 END::bigint AS v
  FROM ev;
-- calls 0 and 1 in one transaction (one journal row: a sequence), then an
-- advance, call 2, per-row calls for call 3
BEGIN;
SELECT count(*) FROM streamforge.ingest_batch('jc', ARRAY(
  SELECT ROW(part, off, id, key, t, v)::streamforge.delivery FROM jc_d WHERE call = 0 ORDER BY i));
SELECT count(*) FROM streamforge.ingest_batch('jc', ARRAY(
  SELECT ROW(part, off, id, key, t, v)::streamforge.delivery FROM jc_d WHERE call = 1 ORDER BY i));
COMMIT;
SELECT count(*) FROM streamforge.advance('jc', 'p01', 300);
SELECT count(*) FROM streamforge.ingest_batch('jc', ARRAY(
  SELECT ROW(part, off, id, key, t, v)::streamforge.delivery FROM jc_d WHERE call = 2 ORDER BY i));
SELECT count(*) FROM jc_d d
 CROSS JOIN LATERAL streamforge.ingest('jc', d.part, d.off, d.id, d.key, d.t, d.v)
 WHERE d.call = 3;
SELECT * FROM streamforge.stats('jc');
-- the rows: a sequence of two compact entries, an advance (format 1, as
-- before), a compact entry, and the per-row entries buffered into one
-- sequence of compact entries
SELECT pos, get_byte(entry, 0) AS format,
       CASE get_byte(entry, 0) WHEN 2 THEN get_byte(entry, 5)
            ELSE get_byte(entry, 0) END AS first_entry_format,
       octet_length(entry) AS bytes
  FROM streamforge.journal
 WHERE pipeline_id = (SELECT id FROM streamforge.pipeline WHERE name = 'jc')
 ORDER BY pos;
CREATE TABLE jc_cp AS SELECT 'written' AS what, streamforge.checkpoint('jc') AS cp;
-- a new backend replays the journal: the same checkpoint
\c -
INSERT INTO jc_cp SELECT 'replayed', streamforge.checkpoint('jc');

-- 2. The same calls as format 1 entries (0.1.0 and 0.2.0), written behind
-- the extension's back into the journal of a second pipeline of the same
-- definition: the same checkpoint.
SELECT jc_create('jc1');
CREATE FUNCTION jc_v1(c int) RETURNS bytea LANGUAGE sql AS $$
  SELECT '\x0149'::bytea || int4send(count(*)::int)
         || string_agg(int2send((substr(part, 2)::int - 1)::int2) || int8send(off)
                       || int4send(octet_length(id)) || convert_to(id, 'UTF8')
                       || int4send(octet_length(key)) || convert_to(key, 'UTF8')
                       || int8send(t) || int8send(v), ''::bytea ORDER BY i)
    FROM jc_d WHERE call = c $$;
INSERT INTO streamforge.journal
  SELECT p.id, e.pos, e.entry
    FROM streamforge.pipeline p,
         (VALUES (2, jc_v1(0) || ''::bytea), (3, jc_v1(1)),
                 (4, '\x0141'::bytea || int2send(0::int2) || int8send(300)),
                 (5, jc_v1(2)), (6, jc_v1(3))) AS e(pos, entry)
   WHERE p.name = 'jc1';
UPDATE streamforge.pipeline SET version = version + 1 WHERE name = 'jc1';
\c -
INSERT INTO jc_cp SELECT 'format 1', streamforge.checkpoint('jc1');
SELECT what, cp = (SELECT cp FROM jc_cp WHERE what = 'written') AS same,
       octet_length(cp::text) > 1000 AS not_empty
  FROM jc_cp ORDER BY what;
-- the format 1 entries take 1.8 times the bytes (event ids of 130 bytes,
-- stored whole in format 1, are most of both)
SELECT p.name, sum(octet_length(j.entry)) AS bytes
  FROM streamforge.journal j JOIN streamforge.pipeline p ON p.id = j.pipeline_id
 WHERE p.name IN ('jc', 'jc1') AND get_byte(j.entry, 1) <> 65  -- no advance
 GROUP BY p.name ORDER BY p.name;

-- 3. Hand-made compact entries on a pipeline of one partition that has
-- delivered ('p', 0, 'e0', 'k', 1, 1).  jx_try adds the entry after it,
-- replays it in this backend and takes it back: 'replayed' and the
-- partition's offset and stats, or the error.  The valid entry of
-- ('p', 1, 'e1', 'k', 2, 1), field by field:
--   03 format, 49 'I', 01 one delivery,
--   00 partition 0, 02 offset 1 (zigzag of 1 - 0: the first delivery of
--   partition 0 in the entry counts from 0),
--   00 02 6531 event_id: 0 bytes of the previous one, then 2: 'e1',
--   00 01 6b a new key of 1 byte: 'k',
--   04 event_time 2 (zigzag of 2 - 0), 02 value 1 (zigzag)
SELECT streamforge.create_pipeline('jx', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)]);
SELECT count(*) FROM streamforge.ingest('jx', 'p', 0, 'e0', 'k', 1, 1);
CREATE FUNCTION jx_try(e bytea) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    msg text;
    det text;
BEGIN
    INSERT INTO streamforge.journal
      SELECT p.id, (SELECT max(pos) + 1 FROM streamforge.journal j
                     WHERE j.pipeline_id = p.id), e
        FROM streamforge.pipeline p WHERE p.name = 'jx';
    UPDATE streamforge.pipeline SET version = version + 1 WHERE name = 'jx';
    SELECT 'replayed: offset ' || consumed_offset || ', ' ||
           (SELECT s::text FROM streamforge.stats('jx') s) ||
           (SELECT ', sum ' || sum(sum) || ', max ' || max(max) || ', min ' || min(min)
              FROM streamforge.live('jx'))
      INTO msg FROM streamforge.partitions('jx');
    RAISE EXCEPTION '%', msg;
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
    IF SQLSTATE = 'P0001' THEN
        RETURN msg;
    END IF;
    RETURN SQLSTATE || ': ' || msg || ' ' || det;
END
$$;
SELECT t, jx_try(e::bytea) FROM (VALUES
  ('valid', '\x03490100020002653100016b0402'),
  ('in a sequence', '\x02' || '0000000e' || '03490100020002653100016b0402'),
  ('duplicate: all of the previous event_id, at offsets 1 and 2',
   '\x03490200020002653100016b0402' || '00020200010002'),
  ('value -2^63: the largest 10-byte varint',
   '\x03490100020002653100016b04' || 'ffffffffffffffffff01'),
  ('value 2^63 - 1', '\x03490100020002653100016b04' || 'feffffffffffffffff01'),
  ('a varint beyond 64 bits', '\x03490100020002653100016b04' || 'ffffffffffffffffff02'),
  ('a varint of 11 bytes', '\x03490100020002653100016b04' || 'ffffffffffffffffff8001'),
  ('truncated', '\x03490100020002653100016b04'),
  ('trailing bytes', '\x03490100020002653100016b040200'),
  ('partition 1 of 1', '\x03490101020002653100016b0402'),
  ('key ref 1 before any key', '\x034901000200026531010402'),
  ('shares 1 byte of no previous event_id', '\x03490100020101316b0402'),
  ('empty event_id', '\x0349010002000000016b0402'),
  ('count beyond the entry', '\x03490500020002653100016b0402'),
  ('kind A in format 3', '\x0341000000000000000000'),
  ('offset 5: a gap', '\x034901000a0002653100016b0402'),
  ('format 4', '\x04490100020002653100016b0402')) AS c(t, e);
SELECT * FROM streamforge.partitions('jx');

-- 4. A text field compressed inside the delivery composite (a value read
-- from a table, where it is stored compressed inline) is read through its
-- decompression, not by the composite's layout alone: the event_id of
-- 10,000 bytes arrives whole, and replays whole.
CREATE TABLE jx_long (id text);
ALTER TABLE jx_long ALTER COLUMN id SET STORAGE MAIN;
INSERT INTO jx_long VALUES (repeat('z', 10000));
SELECT pg_column_compression(id) AS stored FROM jx_long;
SELECT count(*) FROM streamforge.ingest_batch('jx',
    ARRAY(SELECT ROW('p', 1, id, 'k', 2, 7)::streamforge.delivery FROM jx_long));
CREATE FUNCTION jx_ids() RETURNS TABLE (len int, zs boolean) LANGUAGE sql AS $$
  SELECT length(e->>'event_id'), e->>'event_id' = repeat('z', 10000)
    FROM jsonb_array_elements(streamforge.inspect_checkpoint(
           streamforge.checkpoint('jx'))->'identities') e
   ORDER BY 1 $$;
SELECT * FROM jx_ids();
\c -
SELECT * FROM jx_ids();
SELECT sum(sum) FROM streamforge.live('jx');
DROP FUNCTION jx_ids();
DROP TABLE jx_long;

-- 5. Keys the engine did not intern: a replay at a forgotten offset carries
-- any key, and the entry writes it as a new key without remembering it.
-- Every new key takes the next key ref, as the reader counts them, so a
-- later ref to an earlier key of the same entry still names that key (a
-- count one short named the key written before it instead: random_progress
-- found it).  Offsets 0 and 1 are forgotten (watermark 20, H = 15); the
-- batch replays them with keys 'x' and 'y' between the new keys 'k1' and
-- 'k2', which it then refers to again.
SELECT streamforge.create_pipeline('jr', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], lateness => 2, retention => 3);
SELECT count(*) FROM streamforge.ingest_batch('jr', ARRAY[
    ROW('p', 0, 'a', 'ka', 1, 1), ROW('p', 1, 'b', 'kb', 2, 1)]::streamforge.delivery[]);
SELECT count(*) FROM streamforge.advance('jr', 'p', 20);
SELECT remembered_offsets, forgotten_offsets FROM streamforge.stats('jr');
SELECT count(*) FROM streamforge.ingest_batch('jr', ARRAY[
    ROW('p', 2, 'c', 'k1', 21, 1),
    ROW('p', 0, 'zz', 'x', 5, 1),
    ROW('p', 3, 'd', 'k2', 22, 2),
    ROW('p', 1, 'zz', 'y', 5, 1),
    ROW('p', 4, 'e', 'k1', 23, 4),
    ROW('p', 5, 'f', 'k2', 24, 8)]::streamforge.delivery[]);
CREATE TABLE jr_cp AS SELECT streamforge.checkpoint('jr') AS cp;
SELECT key, window_start, count, sum FROM streamforge.live('jr') ORDER BY key;
SELECT offset_replays, accepted FROM streamforge.stats('jr');
-- a new backend replays the entry: the same buckets, the same checkpoint
\c -
SELECT key, window_start, count, sum FROM streamforge.live('jr') ORDER BY key;
SELECT streamforge.checkpoint('jr') = (SELECT cp FROM jr_cp) AS same;
DROP TABLE jr_cp;

DROP FUNCTION jx_try(bytea);
DROP FUNCTION jc_v1(int);
DROP FUNCTION jc_create(text);
DROP TABLE jc_d, jc_cp;
SELECT streamforge.drop_pipeline(n) FROM unnest(ARRAY['jc', 'jc1', 'jx', 'jr']) n;

-- ------------------------------------------------------------------------
-- A journal entry not valid in the database encoding is corrupt
-- ------------------------------------------------------------------------
-- a journal entry whose event_id or key is not valid in
-- the database encoding is corrupt (XX001) at replay (issue 24, item 4:
-- found by test/fuzz/fuzz_journal.c).  No call can write one: both are
-- text arguments.  Before the fix the replay accepted it, and the pipeline
-- then held a string no text value may hold: its checkpoint was refused
-- (SF003, "not valid in the database encoding") and its outputs would
-- have carried the bytes into text columns.  The entries are written here
-- behind the extension's back.  Entry: format 1, kind 'I', one delivery
-- (partition 0, offset, event_id, key, event_time, value).
\c -
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
