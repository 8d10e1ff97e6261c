-- checkpoint_invalid: every validation of docs/semantics.md "Checkpoints", each broken by
-- exactly one edit of a real checkpoint, re-wrapped with a CORRECT envelope
-- (CRC-32 computed here in SQL), so that the rule itself is what rejects it.
-- Then every single-bit flip and every truncation of a real checkpoint.
SET client_min_messages = warning;
CREATE SCHEMA ck_bad;
SET search_path = ck_bad, public;

-- crc32, u16, u32, envelope, wrap, doc and edit
\i test/sql/checkpoint_forge.sql

-- Restore a checkpoint into ckx: 'accepted', or SQLSTATE, message, detail.
CREATE FUNCTION try(cp bytea) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    st text; msg text; det text;
BEGIN
    PERFORM streamforge.restore('ckx', cp);
    RETURN 'accepted';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
                            det = PG_EXCEPTION_DETAIL;
    RETURN st || ': ' || msg || coalesce(' | ' || nullif(det, ''), '');
END $$;

-- The real state every case starts from: 2 partitions, a fixed, a sliding
-- and a session window, lateness 2, watermark 15; ready and pending rows, a
-- finalized bucket, two sessions of one key, a duplicate identity, a late
-- event.
SELECT streamforge.create_pipeline('ckx', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 10, 5),
          streamforge.session('g', 3)], 2);
SELECT count(*) FROM (
    SELECT * FROM streamforge.ingest('ckx', 'a', 0, 'e1', 'k', 1, 5) UNION ALL
    SELECT * FROM streamforge.ingest('ckx', 'a', 1, 'e2', 'k', 4, -3) UNION ALL
    SELECT * FROM streamforge.ingest('ckx', 'b', 0, 'e3', 'm', 12, 7) UNION ALL
    SELECT * FROM streamforge.advance('ckx', 'a', 9) UNION ALL
    SELECT * FROM streamforge.advance('ckx', 'b', 11) UNION ALL
    SELECT * FROM streamforge.ingest('ckx', 'b', 1, 'e4', 'k', 9, 2) UNION ALL
    SELECT * FROM streamforge.ingest('ckx', 'a', 2, 'e5', 'm', 16, 1) UNION ALL
    SELECT * FROM streamforge.ingest('ckx', 'a', 3, 'e3', 'm', 12, 7) UNION ALL
    SELECT * FROM streamforge.advance('ckx', 'a', 16) UNION ALL
    SELECT * FROM streamforge.advance('ckx', 'b', 15) UNION ALL
    SELECT * FROM streamforge.ingest('ckx', 'b', 2, 'e6', 'k', 2, 4)) x;
CREATE TABLE base AS SELECT streamforge.checkpoint('ckx') AS cp;
CREATE TABLE d AS SELECT doc(cp) AS doc FROM base;
SELECT doc FROM d;
SELECT * FROM streamforge.live('ckx');

-- Control: the helpers rebuild the real checkpoint byte for byte, and the
-- unedited document is accepted.
SELECT wrap(doc) = cp AS same_bytes, try(wrap(doc)) FROM d, base;
-- A null delivery where the event is delivered elsewhere (e3, also at
-- offset 0 of b) is an offset whose event a recompute took out: accepted
-- without a retention too (0.4.0, docs/checkpoint-format.md); rolled back.
BEGIN;
SELECT try(wrap(edit(doc, '"deliveries":["e1","e2","e5","e3"]', '"deliveries":["e1","e2","e5",null]'))) AS null_delivery FROM d;
SELECT consumed_offset FROM streamforge.partitions('ckx') ORDER BY partition;
ROLLBACK;

-- Row strings used below
CREATE TABLE r (name text PRIMARY KEY, row text);
INSERT INTO r VALUES
    ('f10m', '{"count":2,"key":"m","max":7,"min":1,"sum":8,"window_end":20,"window_name":"f","window_start":10}'),
    ('g12m', '{"count":1,"key":"m","max":7,"min":7,"sum":7,"window_end":15,"window_name":"g","window_start":12}'),
    ('g16m', '{"count":1,"key":"m","max":1,"min":1,"sum":1,"window_end":19,"window_name":"g","window_start":16}'),
    ('s5k',  '{"count":1,"key":"k","max":2,"min":2,"sum":2,"window_end":15,"window_name":"s","window_start":5}'),
    ('s5m',  '{"count":1,"key":"m","max":7,"min":7,"sum":7,"window_end":15,"window_name":"s","window_start":5}'),
    ('s15m', '{"count":1,"key":"m","max":1,"min":1,"sum":1,"window_end":25,"window_name":"s","window_start":15}');
CREATE FUNCTION r(n text) RETURNS text LANGUAGE sql STABLE AS
$$ SELECT row FROM ck_bad.r WHERE name = n $$;

CREATE TABLE cases (n serial, rule text, broken text);
CREATE FUNCTION add(rule text, edited text) RETURNS void LANGUAGE sql AS
$$ INSERT INTO ck_bad.cases (rule, broken) VALUES (rule, edited) $$;

-- Document syntax: one spelling per value
SELECT add('whitespace',             edit(doc, '{"changelog":{', '{ "changelog":{')) FROM d;
SELECT add('keys out of order',      edit(doc, '{"idle":false,"partition":"a",', '{"partition":"a","idle":false,')) FROM d;
SELECT add('unknown key',            edit(doc, '"late":[', '"extra":1,"late":[')) FROM d;
SELECT add('missing key',            edit(doc, ',"watermark":15},"definition"', '},"definition"')) FROM d;
SELECT add('repeated key',           edit(doc, '"sequence":8,', '"sequence":8,"sequence":8,')) FROM d;
SELECT add('leading zero',           edit(doc, '"sequence":8,', '"sequence":08,')) FROM d;
SELECT add('minus zero',             edit(doc, '"value":-3}', '"value":-0}')) FROM d;
SELECT add('fraction',               edit(doc, '"sequence":8,', '"sequence":8.0,')) FROM d;
SELECT add('exponent',               edit(doc, '"sequence":8,', '"sequence":8e0,')) FROM d;
SELECT add('bigint overflow',        edit(doc, '"sequence":8,', '"sequence":9223372036854775808,')) FROM d;
SELECT add('sum beyond 128 bits',    edit(doc, r('f10m'), replace(r('f10m'), '"sum":8', '"sum":170141183460469231731687303715884105728'))) FROM d;
SELECT add('string for integer',     edit(doc, '"sequence":8,', '"sequence":"8",')) FROM d;
SELECT add('null for integer',       edit(doc, '"sequence":8,', '"sequence":null,')) FROM d;
SELECT add('integer for boolean',    edit(doc, '{"idle":false,"partition":"a"', '{"idle":0,"partition":"a"')) FROM d;
SELECT add('object for array',       edit(doc, '"late":[', '"late":{')) FROM d;
SELECT add('needless escape',        edit(doc, '"deliveries":["e1",', '"deliveries":["\u0065\u0031",')) FROM d;
SELECT add('short escape',           edit(doc, '"deliveries":["e1",', '"deliveries":["e1\n",')) FROM d;
SELECT add('upper-case hex escape',  edit(doc, '"deliveries":["e1",', '"deliveries":["e1\u001F",')) FROM d;
SELECT add('escaped NUL',            edit(doc, '"deliveries":["e1",', '"deliveries":["e1\u0000",')) FROM d;
SELECT add('raw control byte',       edit(doc, '"deliveries":["e1",', '"deliveries":["e1' || chr(9) || '",')) FROM d;
SELECT add('unterminated string',    left(doc, position('"deliveries":["e1' IN doc) + 16)) FROM d;
SELECT add('truncated document',     left(doc, length(doc) - 1)) FROM d;
SELECT add('bytes after document',   doc || '{}') FROM d;
SELECT add('wrong window kind field', edit(doc, '{"kind":"fixed","name":"f","size":10}', '{"kind":"fixed","name":"f","size":10,"step":5}')) FROM d;

-- The checkpoint's own definition: valid, and equivalent to the target's
SELECT add('unknown window kind',    edit(doc, '"kind":"fixed"', '"kind":"tumbling"')) FROM d;
SELECT add('gap for a fixed window', edit(doc, '{"kind":"fixed","name":"f","size":10}', '{"gap":10,"kind":"fixed","name":"f"}')) FROM d;
SELECT add('window size 0',          edit(doc, '"kind":"fixed","name":"f","size":10}', '"kind":"fixed","name":"f","size":0}')) FROM d;
SELECT add('too many sliding buckets', edit(doc, '"size":10,"step":5}', '"size":1000000,"step":5}')) FROM d;
SELECT add('empty partition name',   edit(doc, '"partitions":["a","b"]', '"partitions":["","b"]')) FROM d;
SELECT add('partition name too long', edit(doc, '"partitions":["a","b"]', '"partitions":["a","' || repeat('b', 64) || '"]')) FROM d;
SELECT add('partitions out of order', edit(doc, '"partitions":["a","b"]', '"partitions":["b","a"]')) FROM d;
SELECT add('duplicate partition',    edit(doc, '"partitions":["a","b"]', '"partitions":["a","a"]')) FROM d;
SELECT add('no partition',           edit(doc, '"partitions":["a","b"]', '"partitions":[]')) FROM d;
SELECT add('negative lateness',      edit(doc, '"lateness":2,', '"lateness":-1,')) FROM d;
SELECT add('other partition set',    edit(doc, '"partitions":["a","b"]', '"partitions":["a","c"]')) FROM d;
SELECT add('other window parameter', edit(doc, '{"gap":3,"kind":"session","name":"g"}', '{"gap":4,"kind":"session","name":"g"}')) FROM d;
SELECT add('other lateness',         edit(doc, '"lateness":2,', '"lateness":3,')) FROM d;

-- Clock
SELECT add('clock partitions differ', edit(doc, '{"idle":false,"partition":"b","progress":15}', '{"idle":false,"partition":"c","progress":15}')) FROM d;
SELECT add('clock partition missing', edit(doc, ',{"idle":false,"partition":"b","progress":15}', '')) FROM d;
SELECT add('watermark above all progress', edit(doc, ',"watermark":15},"definition"', ',"watermark":17},"definition"')) FROM d;
SELECT add('watermark missing',      edit(doc, ',"watermark":15},"definition"', ',"watermark":null},"definition"')) FROM d;
SELECT add('watermark below active minimum', edit(doc, '"partition":"b","progress":15}', '"partition":"b","progress":20}')) FROM d;
SELECT add('late event, no watermark', edit(edit(doc, ',"watermark":15},"definition"', ',"watermark":null},"definition"'),
                                              '"partition":"b","progress":15}', '"partition":"b","progress":null}')) FROM d;

-- Delivery history and identities
SELECT add('unknown event_id delivered', edit(doc, '"deliveries":["e3","e4","e6"]', '"deliveries":["e3","e9","e6"]')) FROM d;
-- an offset without its event (null: a recompute took the event out, 0.4.0,
-- docs/checkpoint-format.md) must leave every identity delivered, and
-- cannot be a late event's
SELECT add('only delivery of an identity null', edit(doc, '"deliveries":["e1",', '"deliveries":[null,')) FROM d;
SELECT add('late event''s offset null', edit(doc, '"deliveries":["e3","e4","e6"]', '"deliveries":["e3","e4",null]')) FROM d;
SELECT add('identity never delivered', edit(doc, '"late":true,"value":4}]', '"late":true,"value":4},{"event_id":"e7","event_time":30,"key":"z","late":false,"value":1}]')) FROM d;
SELECT add('identities out of order', edit(doc, '"event_id":"e1","event_time"', '"event_id":"e9","event_time"')) FROM d;
SELECT add('event_id twice',         edit(doc, '"event_id":"e2","event_time"', '"event_id":"e1","event_time"')) FROM d;
SELECT add('empty event_id',         edit(doc, '"event_id":"e1","event_time"', '"event_id":"","event_time"')) FROM d;
SELECT add('sources partitions differ', edit(doc, '"partition":"b"}]', '"partition":"c"}]')) FROM d;
SELECT add('identity value differs from its buckets', edit(doc, '"key":"m","late":false,"value":7}', '"key":"m","late":false,"value":6}')) FROM d;
SELECT add('identity key differs from its buckets', edit(doc, '"event_time":9,"key":"k"', '"event_time":9,"key":"m"')) FROM d;
SELECT add('identity time differs from its buckets', edit(doc, '"event_time":16,"key":"m"', '"event_time":18,"key":"m"')) FROM d;
SELECT add('accepted event outside bigint buckets', edit(doc, '"event_time":16,"key":"m"', '"event_time":9223372036854775800,"key":"m"')) FROM d;

-- Late output (offsets: the consumed offset is the length of the history,
-- so a gap cannot be written; an offset beyond it can)
SELECT add('late_seq not from 1',    edit(doc, '"late_seq":1,', '"late_seq":2,')) FROM d;
SELECT add('late event of unknown id', edit(doc, '"late":[{"event_id":"e6"', '"late":[{"event_id":"e0"')) FROM d;
SELECT add('late event of accepted identity', edit(doc, '"late":[{"event_id":"e6"', '"late":[{"event_id":"e4"')) FROM d;
SELECT add('late identity without late event', edit(doc, '"late":[{"event_id":"e6","late_seq":1,"partition":"b","source_offset":2,"watermark":15}]', '"late":[]')) FROM d;
SELECT add('late event twice',       edit(doc, '"late":[{"event_id":"e6","late_seq":1,"partition":"b","source_offset":2,"watermark":15}]',
                                                '"late":[{"event_id":"e6","late_seq":1,"partition":"b","source_offset":2,"watermark":15},{"event_id":"e6","late_seq":2,"partition":"b","source_offset":2,"watermark":15}]')) FROM d;
SELECT add('late event, unknown partition', edit(doc, '"partition":"b","source_offset":2', '"partition":"c","source_offset":2')) FROM d;
SELECT add('late offset beyond consumed', edit(doc, '"source_offset":2,', '"source_offset":3,')) FROM d;
SELECT add('late offset delivered another event', edit(doc, '"source_offset":2,', '"source_offset":1,')) FROM d;
SELECT add('late watermark above the clock', edit(doc, '"source_offset":2,"watermark":15}', '"source_offset":2,"watermark":16}')) FROM d;
SELECT add('event was not late at its watermark', edit(doc, '"source_offset":2,"watermark":15}', '"source_offset":2,"watermark":4}')) FROM d;
SELECT add('late identity delivered before', edit(doc, '"deliveries":["e3","e4","e6"]', '"deliveries":["e6","e4","e6"]')) FROM d;

-- Window index document
SELECT add('live row of unknown window', edit(doc, r('g16m'), replace(r('g16m'), '"window_name":"g"', '"window_name":"h"'))) FROM d;
SELECT add('live address twice',     edit(doc, r('g16m'), r('g16m') || ',' || r('g16m'))) FROM d;
SELECT add('live rows out of order', edit(doc, r('g16m') || ',' || r('s5k') || ',' || r('s5m'), r('g16m') || ',' || r('s5m') || ',' || r('s5k'))) FROM d;
SELECT add('count 0',                edit(doc, r('g16m'), replace(r('g16m'), '"count":1', '"count":0'))) FROM d;
SELECT add('min above max',          edit(doc, r('f10m'), replace(r('f10m'), '"max":7,"min":1', '"max":1,"min":7'))) FROM d;
SELECT add('sum above count * max',  edit(doc, r('f10m'), replace(r('f10m'), '"sum":8', '"sum":15'))) FROM d;
SELECT add('sum below count * min',  edit(doc, r('f10m'), replace(r('f10m'), '"sum":8', '"sum":1'))) FROM d;
SELECT add('single event, min <> max', edit(doc, r('g16m'), replace(r('g16m'), '"max":1', '"max":2'))) FROM d;
SELECT add('single event, sum <> min', edit(doc, r('g16m'), replace(r('g16m'), '"sum":1', '"sum":2'))) FROM d;
SELECT add('fixed bucket misaligned', edit(doc, r('f10m'), replace(replace(r('f10m'), '"window_end":20', '"window_end":21'), '"window_start":10', '"window_start":11'))) FROM d;
SELECT add('fixed bucket of wrong size', edit(doc, r('f10m'), replace(r('f10m'), '"window_end":20', '"window_end":19'))) FROM d;
SELECT add('sliding bucket misaligned', edit(doc, r('s15m'), replace(replace(r('s15m'), '"window_end":25', '"window_end":24'), '"window_start":15', '"window_start":14'))) FROM d;
SELECT add('session narrower than gap', edit(doc, r('g16m'), replace(r('g16m'), '"window_end":19', '"window_end":18'))) FROM d;
SELECT add('session wider than count * gap', edit(doc, r('g16m'), replace(r('g16m'), '"window_end":19', '"window_end":20'))) FROM d;
SELECT add('sessions touch',         edit(doc, r('g16m'), replace(replace(r('g16m'), '"window_end":19', '"window_end":18'), '"window_start":16', '"window_start":15'))) FROM d;
SELECT add('sessions overlap',       edit(doc, r('g16m'), replace(replace(r('g16m'), '"window_end":19', '"window_end":17'), '"window_start":16', '"window_start":14'))) FROM d;
SELECT add('bucket end + lateness overflows', edit(doc, r('g16m'), replace(replace(r('g16m'), '"window_end":19', '"window_end":9223372036854775807'), '"window_start":16', '"window_start":9223372036854775804'))) FROM d;

-- Changelog document
SELECT add('negative sequence',      edit(doc, '"sequence":8,', '"sequence":-1,')) FROM d;
SELECT add('sequence below emitted rows', edit(doc, '"sequence":8,', '"sequence":2,')) FROM d;
SELECT add('emitted row of unknown window', edit(doc, '"visible":[' || r('g12m'), '"visible":[' || replace(r('g12m'), '"window_name":"g"', '"window_name":"h"'))) FROM d;
SELECT add('emitted address twice',  edit(doc, '"visible":[' || r('g12m'), '"visible":[' || r('g12m') || ',' || r('g12m'))) FROM d;
SELECT add('emitted rows out of order', edit(doc, '"visible":[' || r('g12m') || ',' || r('s5k'), '"visible":[' || r('s5k') || ',' || r('g12m'))) FROM d;
SELECT add('emitted aggregate invalid', edit(doc, '"visible":[' || r('g12m'), '"visible":[' || replace(r('g12m'), '"count":1', '"count":0'))) FROM d;

-- The operator states against each other, the clock and the history
SELECT add('live bucket due for finalization', edit(doc, '"windows":[' || r('f10m'), '"windows":[{"count":1,"key":"k","max":2,"min":2,"sum":2,"window_end":10,"window_name":"f","window_start":0},' || r('f10m'))) FROM d;
SELECT add('emitted row not ready',  edit(doc, '"visible":[', '"visible":[' || r('f10m') || ',')) FROM d;
SELECT add('ready bucket not emitted', edit(doc, '"visible":[' || r('g12m') || ',', '"visible":[')) FROM d;
SELECT add('emitted row differs from live', edit(doc, '"visible":[' || r('g12m'), '"visible":[' || replace(replace(replace(r('g12m'), '"max":7', '"max":6'), '"min":7', '"min":6'), '"sum":7', '"sum":6'))) FROM d;
SELECT add('live bucket without events', edit(doc, r('f10m'), r('f10m') || ',{"count":1,"key":"m","max":5,"min":5,"sum":5,"window_end":30,"window_name":"f","window_start":20}')) FROM d;
SELECT add('bucket of an event missing', edit(doc, ',' || r('s15m'), '')) FROM d;
SELECT add('live aggregate differs from events', edit(doc, r('f10m'), replace(replace(r('f10m'), '"max":7', '"max":8'), '"sum":8', '"sum":9'))) FROM d;
SELECT add('session differs from events', edit(doc, r('g16m'), replace(replace(r('g16m'), '"count":1', '"count":2'), '"sum":1', '"sum":2'))) FROM d;
SELECT add('session without events', edit(doc, '},' || r('g12m') || ',' || r('g16m'), '},{"count":1,"key":"k","max":1,"min":1,"sum":1,"window_end":33,"window_name":"g","window_start":30},' || r('g12m') || ',' || r('g16m'))) FROM d;
SELECT add('session of events missing', edit(doc, ',' || r('g16m'), '')) FROM d;

-- Every case is rejected with SF003 and says why; the pipeline is unchanged.
SELECT n, rule, try(wrap(broken)) FROM cases ORDER BY n;
SELECT streamforge.checkpoint('ckx') = cp AS unchanged FROM base;

-- Envelope
SELECT 'short' AS "case", try(substring(cp FROM 1 FOR 10)) FROM base
UNION ALL SELECT 'magic', try(overlay(cp PLACING '\x54'::bytea FROM 1)) FROM base
UNION ALL SELECT 'version 2', try(envelope(substring(cp FROM 25), version => 2)) FROM base
UNION ALL SELECT 'version 4', try(envelope(substring(cp FROM 25), version => 4)) FROM base
UNION ALL SELECT 'version 0', try(envelope(substring(cp FROM 25), version => 0)) FROM base
UNION ALL SELECT 'truncated payload', try(substring(cp FROM 1 FOR length(cp) - 1)) FROM base
UNION ALL SELECT 'trailing byte', try(cp || '\x00'::bytea) FROM base
UNION ALL SELECT 'checksum', try(overlay(cp PLACING '\x20'::bytea FROM 25)) FROM base
UNION ALL SELECT 'unknown flag', try(envelope(substring(cp FROM 25), flags => 2)) FROM base
UNION ALL SELECT 'document length differs', try(envelope(substring(cp FROM 25), doclen => length(cp) - 23)) FROM base
UNION ALL SELECT 'small document compressed', try(envelope(substring(cp FROM 25), flags => 1)) FROM base
UNION ALL SELECT 'large document uncompressed', try(envelope(convert_to(repeat(' ', 5000), 'SQL_ASCII'))) FROM base
UNION ALL SELECT '4 GiB document declared', try(envelope('\x789c'::bytea, flags => 1, doclen => 4294967295)) FROM base
UNION ALL SELECT 'beyond deflate ratio', try(envelope(substring(cp FROM 25 FOR 100), flags => 1, doclen => 1000000)) FROM base
UNION ALL SELECT 'not a zlib stream', try(envelope(substring(cp FROM 25), flags => 1, doclen => 5000)) FROM base;

-- A compressed checkpoint: its stream must inflate to exactly the declared
-- length and end exactly at the end of the payload.  (Compressed sizes
-- depend on the zlib build, so they are masked as C.)
SELECT streamforge.create_pipeline('ckz', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
SELECT count(*) FROM streamforge.ingest_batch('ckz',
    (SELECT array_agg(ROW('p', i, 'event-' || i, 'key-' || (i % 7), i * 3, i)::streamforge.delivery ORDER BY i)
     FROM generate_series(0, 99) i));
CREATE TABLE z AS SELECT streamforge.checkpoint('ckz') AS cp,
    (get_byte(streamforge.checkpoint('ckz'), 16)::bigint << 24) + (get_byte(streamforge.checkpoint('ckz'), 17) << 16)
    + (get_byte(streamforge.checkpoint('ckz'), 18) << 8) + get_byte(streamforge.checkpoint('ckz'), 19) AS doclen;
SELECT get_byte(cp, 11) AS flags, envelope(substring(cp FROM 25), flags => 1, doclen => doclen) = cp AS helper_agrees FROM z;
SELECT "case", regexp_replace(regexp_replace(o, 'from (\d+) of its \1 bytes', 'from C of its C bytes'),
                               'from \d+ of its \d+ bytes', 'from C of its C + 1 bytes') AS try
FROM (SELECT 'declared length + 1' AS "case", try(envelope(substring(cp FROM 25), flags => 1, doclen => doclen + 1)) AS o FROM z
      UNION ALL SELECT 'declared length - 1', try(envelope(substring(cp FROM 25), flags => 1, doclen => doclen - 1)) FROM z
      UNION ALL SELECT 'bytes after the stream', try(envelope(substring(cp FROM 25) || '\x00'::bytea, flags => 1, doclen => doclen)) FROM z
      UNION ALL SELECT 'stream cut short', try(envelope(substring(cp FROM 25 FOR length(cp) - 30), flags => 1, doclen => doclen)) FROM z) x;

-- Every single-bit flip and every truncation of the real checkpoint is
-- rejected with SF003 (and nothing else).
CREATE FUNCTION outcome(cp bytea) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    PERFORM streamforge.inspect_checkpoint(cp);
    RETURN 'accepted';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE;
END $$;
SELECT length(cp) * 8 AS flips, count(*) FILTER (WHERE o = 'SF003') AS rejected_sf003,
       count(*) FILTER (WHERE o <> 'SF003') AS other
FROM base, LATERAL (
    SELECT outcome(set_bit(cp, i, 1 - get_bit(cp, i))) AS o
    FROM generate_series(0, length(cp) * 8 - 1) i) x
GROUP BY cp;
SELECT length(cp) AS truncations, count(*) FILTER (WHERE o = 'SF003') AS rejected_sf003,
       count(*) FILTER (WHERE o <> 'SF003') AS other
FROM base, LATERAL (
    SELECT outcome(substring(cp FROM 1 FOR i)) AS o
    FROM generate_series(0, length(cp) - 1) i) x
GROUP BY cp;
-- the same through restore, for the truncations
SELECT count(*) AS restores, count(*) FILTER (WHERE o LIKE 'SF003:%') AS rejected_sf003
FROM base, LATERAL (SELECT try(substring(cp FROM 1 FOR i)) AS o
                    FROM generate_series(0, length(cp) - 1) i) x;

-- Single-byte changes of the document WITH a correct checksum: most are
-- rejected (SF003), never with another error, and any that is accepted is
-- a valid state whose checkpoint is exactly the edited document.
CREATE FUNCTION mutant_outcome(cp bytea) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    PERFORM streamforge.restore('ckx', cp);
    IF streamforge.checkpoint('ckx') <> cp THEN
        RETURN 'accepted, re-encodes differently';
    END IF;
    RETURN 'accepted';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE;
END $$;
SELECT o, count(*)
FROM d, LATERAL (
    SELECT mutant_outcome(wrap(overlay(doc PLACING c FROM i FOR 1))) AS o
    FROM generate_series(1, length(doc), 3) i,
         unnest(ARRAY['0', '9', '"', '}', 'x']) c
    WHERE substr(doc, i, 1) <> c) x
GROUP BY o ORDER BY o;

SELECT streamforge.drop_pipeline('ckx'), streamforge.drop_pipeline('ckz');
DROP SCHEMA ck_bad CASCADE;

-- ------------------------------------------------------------------------
-- A live session's end is re-derived from its events
-- ------------------------------------------------------------------------
-- restore() refuses a checkpoint whose live
-- session ends elsewhere than its accepted events say, even where the
-- width alone would be plausible (issue 24: mutant
-- derive-session-end-unchecked of scripts/mutants-0.3.tsv).
-- The first part of this file moves the end of a one-event session, which the
-- width checks (gap <= width <= count * gap) refuse already; here two
-- events at 16 and 17 (gap 3) form [16,20), and an end of 19 (width 3)
-- passes those checks: only the re-derivation of the session from its
-- events (src/codec/codec_derive.c) can refuse it.
\c -
CREATE SCHEMA scs;
SET search_path = scs, public;
\i test/sql/checkpoint_forge.sql
SELECT streamforge.create_pipeline(name, ARRAY['p'], ARRAY[streamforge.session('g', 3)])
  FROM unnest(ARRAY['scs', 'scs_into']) AS name;
SELECT count(*) FROM streamforge.ingest('scs', 'p', 0, 'e1', 'k', 16, 1);
SELECT count(*) FROM streamforge.ingest('scs', 'p', 1, 'e2', 'k', 17, 1);
SELECT window_start, window_end, count FROM streamforge.live('scs');
CREATE TABLE scs_doc AS
SELECT convert_from(substring(streamforge.checkpoint('scs') FROM 25), 'UTF8') AS doc;
SELECT position('"window_end":20,"window_name":"g","window_start":16' IN doc) > 0 AS has_row
  FROM scs_doc;
-- the document as it is, in a new envelope: restores
SELECT streamforge.restore('scs_into', wrap(doc)) FROM scs_doc;
SELECT window_start, window_end, count FROM streamforge.live('scs_into');
-- the session ending at 19: refused
SELECT streamforge.restore('scs_into',
    wrap(replace(doc, '"window_end":20,"window_name":"g","window_start":16',
                          '"window_end":19,"window_name":"g","window_start":16')))
  FROM scs_doc;
SELECT window_start, window_end, count FROM streamforge.live('scs_into');

-- clean up
SELECT count(streamforge.drop_pipeline(name)) FROM unnest(ARRAY['scs', 'scs_into']) AS name;
RESET search_path;
SET client_min_messages = warning;
DROP SCHEMA scs CASCADE;
RESET client_min_messages;

-- ------------------------------------------------------------------------
-- Emit mode, out_of_orderness, escapes, offsets and seqs of a checkpoint
-- ------------------------------------------------------------------------
-- restore() compares the checkpoint's emit mode and
-- out_of_orderness with the pipeline's, refuses a non-canonical
-- "emit":"update", reads back its own escapes of control bytes, names the
-- right offset of an unknown delivery after retention moved the source's
-- base, and numbers a change up to the largest seq exactly (issue 24,
-- scripts/mutants-0.3.tsv: mutants ck-emit-unchecked,
-- ck-ooo-value-unchecked, ck-emit-update-spelled, json-hex-upper,
-- first-unknown-base and seq-exhausted-boundary; json-verify-encoding at
-- the end).  Documents are edited as
-- checkpoint_invalid does and re-wrapped in a correct envelope.
\c -
SET client_min_messages = warning;
CREATE SCHEMA s4k;
SET search_path = s4k, public;
\i test/sql/checkpoint_forge.sql
-- Restore cp into pipeline p: 'restored', or SQLSTATE, message, detail
CREATE FUNCTION try(p text, cp bytea) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    st text; msg text; det text;
BEGIN
    PERFORM streamforge.restore(p, cp);
    RETURN 'restored';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
                            det = PG_EXCEPTION_DETAIL;
    RETURN st || ': ' || msg || coalesce(' | ' || nullif(det, ''), '');
END $$;
RESET client_min_messages;

-- the emit mode is part of the definition a checkpoint must match
SELECT streamforge.create_pipeline('s4k_final', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    emit => 'final');
SELECT streamforge.create_pipeline('s4k_upd', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
SELECT count(*) FROM streamforge.ingest('s4k_final', 'p', 0, 'e0', 'k', 1, 5);
SELECT count(*) FROM streamforge.ingest('s4k_upd', 'p', 0, 'e0', 'k', 1, 5);
CREATE TABLE cps AS
SELECT streamforge.checkpoint('s4k_final') AS final_cp,
       streamforge.checkpoint('s4k_upd') AS upd_cp;
SELECT substring(doc(final_cp) FROM '"definition":{[^}]*}') AS final_definition,
       substring(doc(upd_cp) FROM '"definition":{[^}]*}') AS update_definition FROM cps;
SELECT try('s4k_upd', final_cp) AS final_into_update,
       try('s4k_final', upd_cp) AS update_into_final FROM cps;
SELECT try('s4k_final', final_cp) AS final_into_final,
       try('s4k_upd', upd_cp) AS update_into_update FROM cps;
-- 'update' is the mode without an "emit" key; spelled, it is not canonical
SELECT try('s4k_upd', wrap(edit(doc(upd_cp), '"definition":{"lateness":',
                                '"definition":{"emit":"update","lateness":')))
  FROM cps;
-- and an unknown mode is refused too
SELECT try('s4k_final', wrap(edit(doc(final_cp), '"emit":"final"', '"emit":"Final"')))
  FROM cps;
SELECT streamforge.emit_mode('s4k_final'), streamforge.emit_mode('s4k_upd');
DROP TABLE cps;
SELECT streamforge.drop_pipeline('s4k_final');
SELECT streamforge.drop_pipeline('s4k_upd');

-- out_of_orderness: the same value, not only both set
SELECT streamforge.create_pipeline('s4k_o5', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    out_of_orderness => 5);
SELECT streamforge.create_pipeline('s4k_o7', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    out_of_orderness => 7);
SELECT count(*) FROM streamforge.ingest('s4k_o5', 'p', 0, 'e0', 'k', 20, 5);
SELECT try('s4k_o7', streamforge.checkpoint('s4k_o5')) AS five_into_seven;
SELECT streamforge.watermark('s4k_o7'), streamforge.out_of_orderness('s4k_o7');
SELECT try('s4k_o5', streamforge.checkpoint('s4k_o5')) AS five_into_five;
SELECT streamforge.drop_pipeline('s4k_o5');
SELECT streamforge.drop_pipeline('s4k_o7');

-- keys with control bytes: the checkpoint escapes them as \u00xx in lower
-- case, the one spelling its reader accepts, so the state round-trips
SELECT streamforge.create_pipeline('s4k_ctl', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
SELECT count(*) FROM streamforge.ingest('s4k_ctl', 'p', 0, 'e0', E'a\nb', 1, 5);
SELECT count(*) FROM streamforge.ingest('s4k_ctl', 'p', 1, 'e1', E'c\x1fd', 2, 6);
SELECT count(*) FROM streamforge.ingest('s4k_ctl', 'p', 2, E'e\x0b2', 'k', 3, 7);
SELECT strpos(doc(streamforge.checkpoint('s4k_ctl')), '"key":"a\u000ab"') > 0 AS newline_escaped,
       strpos(doc(streamforge.checkpoint('s4k_ctl')), '"key":"c\u001fd"') > 0 AS unit_separator_escaped,
       strpos(doc(streamforge.checkpoint('s4k_ctl')), '"event_id":"e\u000b2"') > 0 AS tab_escaped;
SELECT try('s4k_ctl', streamforge.checkpoint('s4k_ctl')) AS round_trip;
SELECT encode(convert_to(key, 'UTF8'), 'hex') AS key_hex, window_start, count, sum
  FROM streamforge.live('s4k_ctl') ORDER BY key;
-- upper-case hex is not canonical
SELECT try('s4k_ctl', wrap(replace(doc(streamforge.checkpoint('s4k_ctl')),
                                   '"key":"c\u001fd"', '"key":"c\u001Fd"'))) AS upper_case;
SELECT streamforge.drop_pipeline('s4k_ctl');

-- with retention, a source's deliveries start at its first remembered
-- offset (base); an unknown event_id there is named at its own offset
SELECT streamforge.create_pipeline('s4k_r', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    retention => 5);
SELECT count(*) FROM streamforge.ingest('s4k_r', 'p', 0, 'a', 'k', 1, 1);
SELECT count(*) FROM streamforge.ingest('s4k_r', 'p', 1, 'b', 'k', 12, 2);
SELECT count(*) FROM streamforge.ingest('s4k_r', 'p', 2, 'c', 'k', 13, 3);
SELECT count(*) FROM streamforge.advance('s4k_r', 'p', 10);
SELECT substring(doc(streamforge.checkpoint('s4k_r')) FROM '"sources":.*$') AS sources;
SELECT try('s4k_r', wrap(edit(doc(streamforge.checkpoint('s4k_r')),
                              '"deliveries":["b","c"]', '"deliveries":["b","zz"]')))
    AS unknown_at_offset_2;
SELECT try('s4k_r', streamforge.checkpoint('s4k_r')) AS unedited;
SELECT streamforge.drop_pipeline('s4k_r');

-- seq numbers: a call may number its last change 9223372036854775807
-- exactly; the call after it, which would need more, is refused (54000)
SELECT streamforge.create_pipeline('s4k_seq', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
SELECT count(*) FROM streamforge.ingest('s4k_seq', 'p', 0, 'e0', 'k', 1, 5);
SELECT try('s4k_seq', wrap(edit(doc(streamforge.checkpoint('s4k_seq')),
                                '"sequence":0,', '"sequence":9223372036854775806,')))
    AS restored_near_the_end;
SELECT * FROM streamforge.advance('s4k_seq', 'p', 10);
SELECT changes_emitted FROM streamforge.stats('s4k_seq');
SELECT count(*) FROM streamforge.ingest('s4k_seq', 'p', 1, 'e1', 'k', 12, 6);
\set VERBOSITY terse
SELECT * FROM streamforge.advance('s4k_seq', 'p', 20);
\set VERBOSITY default
SELECT * FROM streamforge.visible('s4k_seq');
SELECT streamforge.drop_pipeline('s4k_seq');

-- a string of the document that is not valid in the database encoding
-- (UTF8: a lone byte 0xff for the key "k") is refused (mutant
-- json-verify-encoding)
SELECT streamforge.create_pipeline('s4k_enc', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
SELECT count(*) FROM streamforge.ingest('s4k_enc', 'p', 0, 'e0', 'k', 1, 5);
CREATE FUNCTION wrapb(payload bytea) RETURNS bytea LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    hdr bytea := '\x5346434b50540d0a'::bytea || u16(1) || u16(0)
                 || u32(length(payload)) || u32(length(payload));
BEGIN
    RETURN hdr || u32(crc32(hdr || payload)) || payload;
END $$;
SELECT getdatabaseencoding();
SELECT try('s4k_enc', wrapb(overlay(convert_to(d, 'UTF8') PLACING '\xff'::bytea
                                    FROM strpos(d, '"key":"k"') + 7 FOR 1))) AS invalid_utf8
  FROM doc(streamforge.checkpoint('s4k_enc')) d;
SELECT try('s4k_enc', wrapb(convert_to(doc(streamforge.checkpoint('s4k_enc')), 'UTF8'))) AS unedited;
SELECT streamforge.drop_pipeline('s4k_enc');

SET client_min_messages = warning;
DROP SCHEMA s4k CASCADE;
RESET client_min_messages;
