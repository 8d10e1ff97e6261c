-- strength_snapshot: what the stored state keeps exactly (issue 24).
-- A bucket sum beyond 64 bits survives the binary snapshot and a cold load;
-- streamforge.max_checkpoint_size is a bound on the document that is
-- itself allowed; a journal entry with an empty event_id is corrupt.

-- 1. Sums above 2^64.  Three events of the largest bigint in one bucket:
-- 3 * (2^63 - 1) needs 66 bits.  One bucket stays live (no watermark), one
-- is visible (emitted, waiting for its lateness), and a negative one too.
SELECT streamforge.create_pipeline('ss', ARRAY['p'],
    ARRAY[streamforge.fixed('f', 10)], lateness => 100);
SELECT count(*) FROM streamforge.ingest_batch('ss', ARRAY[
    ROW('p', 0, 'a1', 'big', 1, 9223372036854775807)::streamforge.delivery,
    ROW('p', 1, 'a2', 'big', 2, 9223372036854775807)::streamforge.delivery,
    ROW('p', 2, 'a3', 'big', 3, 9223372036854775807)::streamforge.delivery,
    ROW('p', 3, 'n1', 'neg', 4, -9223372036854775808)::streamforge.delivery,
    ROW('p', 4, 'n2', 'neg', 5, -9223372036854775808)::streamforge.delivery,
    ROW('p', 5, 'n3', 'neg', 6, -9223372036854775808)::streamforge.delivery,
    ROW('p', 6, 'l1', 'big', 51, 9223372036854775807)::streamforge.delivery,
    ROW('p', 7, 'l2', 'big', 52, 9223372036854775807)::streamforge.delivery]);
SELECT count(*) FROM streamforge.advance('ss', 'p', 30);
CREATE TABLE ss_before AS
SELECT 'visible' AS what, v::text AS r FROM streamforge.visible('ss') v
UNION ALL
SELECT 'live', l::text FROM streamforge.live('ss') l;
SELECT * FROM ss_before ORDER BY what, r;
-- restore stores the state as a binary snapshot (no retention) and
-- empties the journal; a new connection loads nothing but that snapshot
SELECT streamforge.restore('ss', streamforge.checkpoint('ss'));
SELECT convert_from(substring(snapshot FROM 1 FOR 7), 'UTF8') AS magic,
       (SELECT count(*) FROM streamforge.journal j WHERE j.pipeline_id = p.id) AS journal
  FROM streamforge.pipeline p WHERE name = 'ss';
\c -
SELECT 'visible' AS what, v::text AS r FROM streamforge.visible('ss') v
UNION ALL
SELECT 'live', l::text FROM streamforge.live('ss') l
EXCEPT
SELECT * FROM ss_before;
SELECT key, sum, sum = 3 * 9223372036854775807::numeric AS three_max,
       sum = -3 * 9223372036854775808::numeric AS three_min
  FROM streamforge.visible('ss') ORDER BY key;
SELECT key, window_start, sum FROM streamforge.live('ss') ORDER BY key, window_start;
-- and the state goes on from there: one more event in the big bucket
SELECT op, key, count, sum FROM streamforge.ingest('ss', 'p', 8, 'a4', 'big', 4, 9223372036854775807);
\c -
SELECT key, count, sum = 4 * 9223372036854775807::numeric AS four_max
  FROM streamforge.visible('ss') WHERE key = 'big';

-- 2. streamforge.max_checkpoint_size: a document of exactly the limit is
-- accepted (checkpoint, restore, inspect_checkpoint), one byte more is not.
-- The document length is the header's bytes 16..19.  Each byte of the one
-- event_id adds two to it (identities and deliveries), a lateness of 10
-- instead of 0 one: so the sizes 2048 (2 kB) and 2049 are reached from the
-- size of the smallest such document.
CREATE FUNCTION ss_doclen(cp bytea) RETURNS bigint LANGUAGE sql AS $$
  SELECT (get_byte(cp, 16)::bigint << 24) | (get_byte(cp, 17) << 16)
       | (get_byte(cp, 18) << 8) | get_byte(cp, 19) $$;
SELECT streamforge.create_pipeline('ss_size', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)]);
SELECT count(*) FROM streamforge.ingest('ss_size', 'p', 0, 'x', 'k', 1, 1);
SELECT ss_doclen(streamforge.checkpoint('ss_size')) AS base \gset
CREATE FUNCTION ss_sized(name text, size int, base int) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    odd int := (size - base) % 2;
BEGIN
    PERFORM streamforge.create_pipeline(name, ARRAY['p'],
        ARRAY[streamforge.fixed('f', 10)], lateness => 10 * odd);
    PERFORM streamforge.ingest(name, 'p', 0,
        repeat('x', 1 + (size - base - odd) / 2), 'k', 1, 1);
    RETURN ss_doclen(streamforge.checkpoint(name));
END $$;
SELECT ss_sized('ss_2048', 2048, :base), ss_sized('ss_2049', 2049, :base);
SELECT streamforge.create_pipeline('ss_into', ARRAY['p'],
    ARRAY[streamforge.fixed('f', 10)], lateness => 10 * ((2048 - :base) % 2));
CREATE TABLE ss_cp AS
SELECT 2048 AS size, streamforge.checkpoint('ss_2048') AS cp
UNION ALL
SELECT 2049, streamforge.checkpoint('ss_2049');
SELECT size, ss_doclen(cp) AS document FROM ss_cp ORDER BY size;
SET streamforge.max_checkpoint_size = '2kB';
SELECT ss_doclen(streamforge.checkpoint('ss_2048')) AS at_the_limit;
SELECT streamforge.restore('ss_into', cp) FROM ss_cp WHERE size = 2048;
SELECT octet_length(streamforge.inspect_checkpoint(cp)::text) > 0 AS inspected
  FROM ss_cp WHERE size = 2048;
SELECT streamforge.checkpoint('ss_2049');
SELECT streamforge.restore('ss_into', cp) FROM ss_cp WHERE size = 2049;
SELECT streamforge.inspect_checkpoint(cp) FROM ss_cp WHERE size = 2049;
RESET streamforge.max_checkpoint_size;
SELECT streamforge.checkpoint('ss_into') = cp AS restored FROM ss_cp WHERE size = 2048;

-- 3. A journal entry whose delivery has an empty event_id is corrupt
-- (XX001) when a backend replays it; no call can write one (append and
-- ingest refuse an empty event_id with 22023), so it is written here
-- behind the extension's back.  Entry: format 1, kind 'I', one delivery
-- (partition 0, offset, event_id, key, event_time, value).
CREATE FUNCTION ss_entry(off bigint, id text) RETURNS bytea LANGUAGE sql AS $$
  SELECT '\x0149'::bytea || int4send(1) || int2send(0::int2) || int8send(off)
         || int4send(octet_length(id)) || convert_to(id, 'UTF8')
         || int4send(1) || '\x6b'::bytea || int8send(5) || int8send(1) $$;
SELECT streamforge.create_pipeline('ss_j', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)]);
SELECT count(*) FROM streamforge.ingest('ss_j', 'p', 0, '', 'k', 1, 1);
SELECT count(*) FROM streamforge.ingest('ss_j', 'p', 0, 'e0', 'k', 1, 1);
-- the same entry with a one-byte event_id replays
INSERT INTO streamforge.journal
  SELECT p.id, (SELECT max(pos) + 1 FROM streamforge.journal j WHERE j.pipeline_id = p.id),
         ss_entry(1, 'e')
    FROM streamforge.pipeline p WHERE p.name = 'ss_j';
UPDATE streamforge.pipeline SET version = version + 1 WHERE name = 'ss_j';
\c -
SELECT * FROM streamforge.partitions('ss_j');
-- with an empty one it is refused, in this backend and in a new one
INSERT INTO streamforge.journal
  SELECT p.id, (SELECT max(pos) + 1 FROM streamforge.journal j WHERE j.pipeline_id = p.id),
         ss_entry(2, '')
    FROM streamforge.pipeline p WHERE p.name = 'ss_j';
UPDATE streamforge.pipeline SET version = version + 1 WHERE name = 'ss_j';
SELECT * FROM streamforge.partitions('ss_j');
\set VERBOSITY sqlstate
SELECT * FROM streamforge.partitions('ss_j');
\set VERBOSITY default
\c -
SELECT * FROM streamforge.stats('ss_j');
\set VERBOSITY sqlstate
SELECT * FROM streamforge.stats('ss_j');
\set VERBOSITY default
-- taking it out again repairs the pipeline
DELETE FROM streamforge.journal
  WHERE pipeline_id = (SELECT id FROM streamforge.pipeline WHERE name = 'ss_j')
    AND pos = (SELECT max(pos) FROM streamforge.journal j
                WHERE j.pipeline_id = (SELECT id FROM streamforge.pipeline WHERE name = 'ss_j'));
UPDATE streamforge.pipeline SET version = version + 1 WHERE name = 'ss_j';
SELECT * FROM streamforge.partitions('ss_j');

-- clean up
SELECT count(streamforge.drop_pipeline(name)) FROM unnest(ARRAY['ss', 'ss_size', 'ss_2048', 'ss_2049', 'ss_into', 'ss_j']) AS name;
