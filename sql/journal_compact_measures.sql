-- journal_compact_measures: the journal entries of measures pipelines in
-- the compact format (format 3, kind 'V', 0.4.0: src/codec/journal.c).
-- What a call writes replays in a new backend to the state the call left;
-- the same deliveries as a format 1 'V' entry of 0.3.0 replay to the same
-- state; a compact 'V' entry that does not parse is corrupt (XX001).

-- 1. Three measures, one nullable (a NULL mask word: four words); two
-- partitions; measures at both ends of bigint, negative, 0 and 1, NULL;
-- event ids sharing prefixes, 12 keys, times out of order; every 20th
-- delivery delivers an earlier event again at a new offset (a duplicate).
CREATE FUNCTION jm_create(name text) RETURNS void LANGUAGE sql AS $$
  SELECT streamforge.create_pipeline(name, ARRAY['p0', 'p1'],
           ARRAY[streamforge.fixed('w', 10), streamforge.session('s', 5)],
           lateness => 5,
           measures => ARRAY['a', 'b', 'c NULL'],
           aggregates => ARRAY['count', 'sum(a)', 'min(a)', 'max(a)', 'sum(b)',
                               'count(c)', 'sum(c)', 'min(c)']) $$;
SELECT jm_create('jm');
SELECT jm_create('jm1');
CREATE TABLE jm_d AS
WITH ev AS (
  SELECT i, CASE WHEN i % 3 = 0 THEN 'p1' ELSE 'p0' END AS part,
         CASE WHEN i % 20 = 19 THEN i - 7 ELSE i END AS e
    FROM generate_series(1, 240) i)
SELECT i, CASE WHEN i <= 100 THEN 0 WHEN i <= 200 THEN 1 ELSE 2 END AS call,
       part, (row_number() OVER (PARTITION BY part ORDER BY i)
              - CASE part WHEN 'p1' THEN 1 ELSE 0 END)::bigint AS off,
       'event-' || lpad(e::text, 5, '0') AS id, 'k' || (e % 12) AS key,
       (e * 3 - (e % 4) * 4)::bigint AS t,
       CASE WHEN e % 50 = 1 THEN 9223372036854775807
            WHEN e % 50 = 2 THEN -9223372036854775808
            ELSE e * 1000 - 70000 END::bigint AS a,
       (e % 2)::bigint AS b,
       CASE WHEN e % 4 = 0 THEN NULL ELSE -e END::bigint AS c
  FROM ev;
-- the first delivery (offset 0 of p0) as a call on both pipelines
SELECT count(*) FROM streamforge.ingest_measures('jm', 'p0', 0, 'first', 'k0', 0, ARRAY[1, 1, NULL]);
SELECT count(*) FROM streamforge.ingest_measures('jm1', 'p0', 0, 'first', 'k0', 0, ARRAY[1, 1, NULL]);
-- calls 0 and 1 in one transaction (one journal row: a sequence), then
-- call 2 delivery by delivery (ingest_measures), in one transaction too
BEGIN;
SELECT count(*) FROM streamforge.ingest_measures_batch('jm', ARRAY(
  SELECT ROW(part, off, id, key, t, ARRAY[a, b, c])::streamforge.measures_delivery
    FROM jm_d WHERE call = 0 ORDER BY i));
SELECT count(*) FROM streamforge.ingest_measures_batch('jm', ARRAY(
  SELECT ROW(part, off, id, key, t, ARRAY[a, b, c])::streamforge.measures_delivery
    FROM jm_d WHERE call = 1 ORDER BY i));
COMMIT;
DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT * FROM jm_d WHERE call = 2 ORDER BY i LOOP
        PERFORM streamforge.ingest_measures('jm', r.part, r.off, r.id, r.key, r.t,
                                            ARRAY[r.a, r.b, r.c]);
    END LOOP;
END
$$;
SELECT accepted, duplicate_ids FROM streamforge.stats('jm');
-- the first call's row is a compact entry ('V' = 86); each transaction's
-- calls are one sequence row (format 2) of compact entries
SELECT get_byte(j.entry, 0) AS format,
       CASE WHEN get_byte(j.entry, 0) = 3 THEN get_byte(j.entry, 1) END AS kind,
       count(*)
  FROM streamforge.journal j JOIN streamforge.pipeline p ON p.id = j.pipeline_id
 WHERE p.name = 'jm' GROUP BY 1, 2 ORDER BY 1, 2;
-- about 20 bytes a delivery of four measure words (0.3.0: about 70)
SELECT sum(length(j.entry)) / 240 < 25 AS compact
  FROM streamforge.journal j JOIN streamforge.pipeline p ON p.id = j.pipeline_id
 WHERE p.name = 'jm';
CREATE TABLE jm_cp AS SELECT streamforge.checkpoint('jm') AS cp;
CREATE TABLE jm_live AS SELECT * FROM streamforge.live_aggregates('jm');
SELECT count(*) AS live_rows FROM jm_live;
-- a new backend loads jm from its journal: the same state, byte for byte
\c -
SELECT streamforge.checkpoint('jm') = (SELECT cp FROM jm_cp) AS same;

-- 2. The same deliveries as format 1 'V' entries of 0.3.0 (written behind
-- the extension's back, as 0.3.0 wrote them: uint32 n, uint16 words, then
-- per delivery uint16 partition, int64 offset, uint32 length and bytes of
-- the event id and of the key, int64 time, the words; the NULL mask word
-- last, bit 2 for c) replay to the same aggregates.
CREATE FUNCTION jm_v1(lo int, hi int) RETURNS bytea LANGUAGE sql AS $$
  SELECT '\x0156'::bytea || int4send(count(*)::int) || int2send(4::int2)
         || string_agg(int2send(CASE part WHEN 'p0' THEN 0 ELSE 1 END::int2) || int8send(off)
                       || int4send(length(id)) || convert_to(id, 'UTF8')
                       || int4send(length(key)) || convert_to(key, 'UTF8')
                       || int8send(t) || int8send(a) || int8send(b)
                       || int8send(coalesce(c, 0)) || int8send(CASE WHEN c IS NULL THEN 4 ELSE 0 END),
                       ''::bytea ORDER BY i)
    FROM jm_d WHERE i BETWEEN lo AND hi $$;
CREATE FUNCTION jm_append(name text, entry bytea) RETURNS void LANGUAGE sql AS $$
  INSERT INTO streamforge.journal
  SELECT p.id, (SELECT max(pos) + 1 FROM streamforge.journal j WHERE j.pipeline_id = p.id),
         entry
    FROM streamforge.pipeline p WHERE p.name = $1;
  UPDATE streamforge.pipeline SET version = version + 1 WHERE pipeline.name = $1 $$;
SELECT jm_append('jm1', jm_v1(1, 120));
SELECT jm_append('jm1', jm_v1(121, 240));
\c -
SELECT accepted, duplicate_ids FROM streamforge.stats('jm1');
SELECT count(*) AS differences FROM (
  (SELECT * FROM streamforge.live_aggregates('jm1') EXCEPT ALL SELECT * FROM jm_live)
  UNION ALL
  (SELECT * FROM jm_live EXCEPT ALL SELECT * FROM streamforge.live_aggregates('jm1'))) AS d;
-- jm1 takes compact entries after its format 1 ones
SELECT count(*) FROM streamforge.ingest_measures('jm1', 'p1', 80, 'after', 'k1', 10000, ARRAY[5, 0, 6]);
\c -
SELECT key, window_start, count FROM streamforge.live('jm1') WHERE window_name = 'w' AND window_start = 10000;

-- 3. A compact 'V' entry that does not parse is corrupt.  Pipeline jv:
-- measures a and b NULL (three words: a, b, the mask).  The valid entry,
-- field by field: 03 format, 56 'V', 01 one delivery, 03 three words,
-- 00 partition 0, 02 offset 1 (zigzag), 00 02 6531 event_id 'e1',
-- 00 01 6b a new key 'k', 04 time 2, 02 04 00 the words 1, 2, mask 0.
SELECT streamforge.create_pipeline('jv', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)],
    measures => ARRAY['a', 'b NULL'], aggregates => ARRAY['sum(a)', 'sum(b)']);
SELECT count(*) FROM streamforge.ingest_measures('jv', 'p', 0, 'e0', 'k', 1, ARRAY[1, 1]);
SELECT streamforge.create_pipeline('jp', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)]);
SELECT count(*) FROM streamforge.ingest('jp', 'p', 0, 'e0', 'k', 1, 1);
CREATE FUNCTION jv_try(name text, e bytea) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    msg text;
    det text;
BEGIN
    PERFORM jm_append(name, e);
    SELECT 'replayed: offset ' || consumed_offset INTO msg
      FROM streamforge.partitions(name);
    RAISE EXCEPTION '%', msg;
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
    IF SQLSTATE = 'P0001' THEN
        RETURN msg;
    END IF;
    RETURN SQLSTATE || ': ' || msg || ' ' || det;
END
$$;
SELECT t, jv_try(n, e::bytea) FROM (VALUES
  ('valid', 'jv', '\x0356010300020002653100016b04020400'),
  ('b NULL: mask bit 1, word 0', 'jv', '\x0356010300020002653100016b04020004'),
  ('in a sequence', 'jv', '\x02' || '00000011' || '0356010300020002653100016b04020400'),
  ('two words for three', 'jv', '\x0356010200020002653100016b040204'),
  ('four words for three', 'jv', '\x0356010400020002653100016b0402040000'),
  ('words beyond any pipeline', 'jv', '\x035601c80100020002653100016b04020400'),
  ('truncated in the words', 'jv', '\x0356010300020002653100016b0402'),
  ('trailing bytes', 'jv', '\x0356010300020002653100016b0402040000'),
  ('a NULL mask on a measure not nullable', 'jv', '\x0356010300020002653100016b04020402'),
  ('a NULL measure with a value', 'jv', '\x0356010300020002653100016b04020404'),
  ('a word beyond 64 bits', 'jv', '\x0356010300020002653100016b04ffffffffffffffffff0200'),
  ('kind V for a pipeline without measures', 'jp', '\x0356010300020002653100016b04020400')
) AS c(t, n, e);
SELECT * FROM streamforge.partitions('jv');
SELECT window_start, sum(sum) FROM streamforge.live('jv') GROUP BY 1 ORDER BY 1;

-- clean up
DROP FUNCTION jv_try(text, bytea);
DROP FUNCTION jm_append(text, bytea);
DROP FUNCTION jm_v1(int, int);
DROP FUNCTION jm_create(text);
DROP TABLE jm_d, jm_cp, jm_live;
SELECT streamforge.drop_pipeline(n) FROM unnest(ARRAY['jm', 'jm1', 'jv', 'jp']) n;
