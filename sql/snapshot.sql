-- snapshot: what persist.c stores as a pipeline's snapshot (src/codec/snapshot.c).
-- It is a binary image that a cold load copies back without a parse
-- (format 3 with retention or measures: until 0.3.0 theirs was a
-- checkpoint); from 0.1.0 it is a checkpoint, which still loads.
-- Either way a new connection resumes exactly where the last one left off.

-- a pipeline with every kind of state: two partitions, three window kinds,
-- duplicates across partitions, late events, sessions, emitted rows
SELECT streamforge.create_pipeline('sn', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 20, 5),
          streamforge.session('g', 3)], lateness => 2);
SELECT streamforge.create_pipeline('sn_ref', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 20, 5),
          streamforge.session('g', 3)], lateness => 2);
-- (from i = 150 on, even i repeat event i - 150: duplicates; odd i reuse
-- its event_id with another identity: SF002, skipped)
CREATE TABLE sn_ops AS
SELECT i, CASE WHEN i % 3 = 0 THEN 'b' ELSE 'a' END AS part,
       'e' || (i % 150) AS eid, 'k' || (j % 4) AS key,
       (j * 7) % 400 - 100 + j AS t, j % 11 - 5 AS v
  FROM generate_series(0, 299) AS i,
       LATERAL (SELECT CASE WHEN i % 2 = 0 THEN i % 150 ELSE i END AS j) AS x;
-- offsets per partition, and an advance now and then
CREATE FUNCTION sn_feed(pl text, lo int, hi int) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    o record;
    n bigint := 0;
    c bigint;
BEGIN
    FOR o IN SELECT * FROM sn_ops WHERE i BETWEEN lo AND hi ORDER BY i LOOP
        BEGIN
            SELECT count(*) INTO c FROM streamforge.ingest(pl, o.part,
                (SELECT coalesce(max(consumed_offset), -1) + 1
                   FROM streamforge.partitions(pl) WHERE partition = o.part),
                o.eid, o.key, o.t, o.v);
            n := n + c;
        EXCEPTION WHEN sqlstate 'SF002' THEN
            NULL;
        END;
        IF o.i % 25 = 24 THEN
            SELECT count(*) INTO c FROM streamforge.advance(pl, o.part, o.t - 50);
            n := n + c;
        END IF;
    END LOOP;
    RETURN n;
END $$;
SELECT sn_feed('sn', 0, 199) AS changes, sn_feed('sn_ref', 0, 199) AS ref_changes;
SELECT late_events > 0 AS has_late, duplicate_ids > 0 AS has_dups,
       live_buckets > 0 AS has_live, visible_rows > 0 AS has_visible
  FROM streamforge.stats('sn');

-- restore stores the state as the snapshot and empties the journal
SELECT streamforge.restore('sn', streamforge.checkpoint('sn'));
SELECT convert_from(substring(snapshot FROM 1 FOR 7), 'UTF8') AS magic,
       (SELECT count(*) FROM streamforge.journal j WHERE j.pipeline_id = p.id) AS journal
  FROM streamforge.pipeline p WHERE name = 'sn';

-- a new connection loads the binary snapshot: the same state, and the same
-- behaviour from there on
\c -
SELECT streamforge.checkpoint('sn') = streamforge.checkpoint('sn_ref') AS same_state;
SELECT sn_feed('sn', 200, 299) = sn_feed('sn_ref', 200, 299) AS same_changes;
SELECT streamforge.checkpoint('sn') = streamforge.checkpoint('sn_ref') AS same_state;
SELECT (SELECT array_agg(x::text) FROM streamforge.late_events('sn') x)
     = (SELECT array_agg(x::text) FROM streamforge.late_events('sn_ref') x) AS same_late;

-- and a load of the binary snapshot plus the journal written since
SELECT count(*) FROM streamforge.advance('sn', 'a', 1000);
SELECT count(*) FROM streamforge.advance('sn', 'b', 1000);
SELECT count(*) FROM streamforge.advance('sn_ref', 'a', 1000);
SELECT count(*) FROM streamforge.advance('sn_ref', 'b', 1000);
\c -
SELECT streamforge.checkpoint('sn') = streamforge.checkpoint('sn_ref') AS same_state;

-- with retention the snapshot is binary too (format 3, 0.4.0)
SELECT streamforge.create_pipeline('sn_r', ARRAY['a'],
    ARRAY[streamforge.fixed('f', 10)], retention => 5);
SELECT count(*) FROM streamforge.ingest('sn_r', 'a', 0, 'x', 'k', 1, 1);
SELECT streamforge.restore('sn_r', streamforge.checkpoint('sn_r'));
SELECT convert_from(substring(snapshot FROM 1 FOR 6), 'UTF8') AS magic
  FROM streamforge.pipeline WHERE name = 'sn_r';

-- a 0.1.0 snapshot (a checkpoint, docs/checkpoint-format.md section 5)
-- still loads
SELECT streamforge.create_pipeline('demo', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
UPDATE streamforge.pipeline SET snapshot = '\x5346434b50540d0a000100000000023900000239c75dda377b226368616e67656c6f67223a7b2273657175656e6365223a312c2276697369626c65223a5b7b22636f756e74223a312c226b6579223a226b222c226d6178223a352c226d696e223a352c2273756d223a352c2277696e646f775f656e64223a31302c2277696e646f775f6e616d65223a2277222c2277696e646f775f7374617274223a307d5d7d2c22636c6f636b223a7b22706172746974696f6e73223a5b7b2269646c65223a66616c73652c22706172746974696f6e223a2270222c2270726f6772657373223a31307d5d2c2277617465726d61726b223a31307d2c22646566696e6974696f6e223a7b226c6174656e657373223a302c22706172746974696f6e73223a5b2270225d2c2277696e646f7773223a5b7b226b696e64223a226669786564222c226e616d65223a2277222c2273697a65223a31307d5d7d2c226964656e746974696573223a5b7b226576656e745f6964223a226531222c226576656e745f74696d65223a332c226b6579223a226b222c226c617465223a66616c73652c2276616c7565223a357d5d2c226c617465223a5b5d2c22736f7572636573223a5b7b2264656c69766572696573223a5b226531225d2c22706172746974696f6e223a2270227d5d2c2277696e646f7773223a5b7b22636f756e74223a312c226b6579223a226b222c226d6178223a352c226d696e223a352c2273756d223a352c2277696e646f775f656e64223a31302c2277696e646f775f6e616d65223a2277222c2277696e646f775f7374617274223a307d5d7d'
 WHERE name = 'demo';
\c -
SELECT * FROM streamforge.live('demo');
SELECT streamforge.checkpoint('demo') = snapshot AS same_bytes
  FROM streamforge.pipeline WHERE name = 'demo';

-- a damaged snapshot is an error, not a crash, and names the pipeline
UPDATE streamforge.pipeline
   SET snapshot = overlay(snapshot PLACING '\xff'::bytea FROM 200 FOR 1)
 WHERE name = 'sn';
\c -
SELECT streamforge.watermark('sn');
UPDATE streamforge.pipeline
   SET snapshot = substring(snapshot FROM 1 FOR 100)
 WHERE name = 'sn';
\c -
SELECT streamforge.watermark('sn');

SELECT streamforge.drop_pipeline(n) FROM unnest(ARRAY['sn', 'sn_ref', 'sn_r', 'demo']) n;
DROP FUNCTION sn_feed(text, int, int);
DROP TABLE sn_ops;

-- ------------------------------------------------------------------------
-- What the stored state keeps exactly
-- ------------------------------------------------------------------------
-- what the stored state keeps exactly (issue 24).
-- A bucket sum beyond 64 bits survives the binary snapshot and a cold load;
-- streamforge.max_checkpoint_size is a bound on the document that is
-- itself allowed; a journal entry with an empty event_id is corrupt.
\c -

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

-- ------------------------------------------------------------------------
-- A binary snapshot loads only into its own definition
-- ------------------------------------------------------------------------
-- a binary snapshot is loaded only into the
-- definition it was taken under (issue 24: mutants def-equiv-step,
-- def-equiv-gap and def-equiv-lateness of scripts/mutants-0.3.tsv).  The
-- snapshot holds its own copy of the definition, which the loader compares
-- with the pipeline's row (src/codec/snapshot.c, sf_def_equivalent): a row
-- changed behind the extension's back (here: a window's step, a session's
-- gap, the lateness) makes the stored state corrupt (XX001), not a state
-- read under another definition.  restore() has its own comparison
-- (codec_validate.c), which checkpoint_invalid covers.
\c -
\set VERBOSITY default
SELECT streamforge.create_pipeline('ssd', ARRAY['p'],
    ARRAY[streamforge.sliding('s', 20, 5), streamforge.session('g', 5)], 2);
SELECT count(*) FROM streamforge.ingest('ssd', 'p', 0, 'e', 'k', 7, 1);
-- restore stores the state as a binary snapshot, without journal
SELECT streamforge.restore('ssd', streamforge.checkpoint('ssd'));
SELECT convert_from(substring(snapshot FROM 1 FOR 7), 'UTF8') AS magic,
       (SELECT count(*) FROM streamforge.journal j WHERE j.pipeline_id = p.id) AS journal_rows
  FROM streamforge.pipeline p WHERE name = 'ssd';
CREATE TABLE ssd_row AS SELECT definition FROM streamforge.pipeline WHERE name = 'ssd';
CREATE FUNCTION ssd_set(w streamforge.window_def[], l bigint) RETURNS void LANGUAGE sql AS $$
  UPDATE streamforge.pipeline
     SET definition = jsonb_set(jsonb_set(definition, '{windows}',
             (SELECT jsonb_agg(jsonb_strip_nulls(to_jsonb(w[i])) ORDER BY i)
                FROM generate_subscripts(w, 1) AS i)),
             '{lateness}', to_jsonb(l)),
         version = version + 1
   WHERE name = 'ssd' $$;
-- the row as it is: loads
\c -
SELECT window_name, key, window_start, window_end, count FROM streamforge.live('ssd')
 ORDER BY 1, 3;
-- another step
SELECT ssd_set(ARRAY[ROW('g', 'session', NULL, NULL, 5), ROW('s', 'sliding', 20, 4, NULL)]::streamforge.window_def[], 2);
\c -
SELECT count(*) FROM streamforge.live('ssd');
-- another gap
SELECT ssd_set(ARRAY[ROW('g', 'session', NULL, NULL, 6), ROW('s', 'sliding', 20, 5, NULL)]::streamforge.window_def[], 2);
\c -
SELECT count(*) FROM streamforge.live('ssd');
-- another lateness
SELECT ssd_set(ARRAY(SELECT jsonb_populate_record(NULL::streamforge.window_def, e) FROM jsonb_array_elements(definition -> 'windows') AS e), 3) FROM ssd_row;
\c -
SELECT count(*) FROM streamforge.live('ssd');
-- the row as it was: loads again
SELECT ssd_set(ARRAY(SELECT jsonb_populate_record(NULL::streamforge.window_def, e) FROM jsonb_array_elements(definition -> 'windows') AS e), (definition ->> 'lateness')::bigint) FROM ssd_row;
\c -
SELECT count(*) FROM streamforge.live('ssd');

-- clean up
SELECT streamforge.drop_pipeline('ssd');
