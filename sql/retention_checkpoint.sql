-- retention_checkpoint: checkpoints and restore under docs/semantics.md "Retention".  A
-- pipeline without retention checkpoints byte for byte as 0.1.0 did (and a
-- 0.1.0 checkpoint restores); with retention, the checkpoint holds only
-- what is remembered, and the retention; restore equivalence includes the
-- retention; a checkpoint holding anything its own horizon forgets is SF003.
SET client_min_messages = warning;
CREATE SCHEMA ck_ret;
SET search_path = ck_ret, public;

-- 1. The checkpoint of docs/checkpoint-format.md section 5, as 0.1.0 wrote
-- it: it restores into a pipeline without retention, which checkpoints to
-- the very same bytes, and not into one with a retention.
CREATE TABLE v010 (cp bytea);
INSERT INTO v010 VALUES ('\x5346434b50540d0a000100000000023900000239c75dda377b226368616e67656c6f67223a7b2273657175656e6365223a312c2276697369626c65223a5b7b22636f756e74223a312c226b6579223a226b222c226d6178223a352c226d696e223a352c2273756d223a352c2277696e646f775f656e64223a31302c2277696e646f775f6e616d65223a2277222c2277696e646f775f7374617274223a307d5d7d2c22636c6f636b223a7b22706172746974696f6e73223a5b7b2269646c65223a66616c73652c22706172746974696f6e223a2270222c2270726f6772657373223a31307d5d2c2277617465726d61726b223a31307d2c22646566696e6974696f6e223a7b226c6174656e657373223a302c22706172746974696f6e73223a5b2270225d2c2277696e646f7773223a5b7b226b696e64223a226669786564222c226e616d65223a2277222c2273697a65223a31307d5d7d2c226964656e746974696573223a5b7b226576656e745f6964223a226531222c226576656e745f74696d65223a332c226b6579223a226b222c226c617465223a66616c73652c2276616c7565223a357d5d2c226c617465223a5b5d2c22736f7572636573223a5b7b2264656c69766572696573223a5b226531225d2c22706172746974696f6e223a2270227d5d2c2277696e646f7773223a5b7b22636f756e74223a312c226b6579223a226b222c226d6178223a352c226d696e223a352c2273756d223a352c2277696e646f775f656e64223a31302c2277696e646f775f6e616d65223a2277222c2277696e646f775f7374617274223a307d5d7d');
SELECT streamforge.create_pipeline('demo', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
SELECT streamforge.restore('demo', cp) FROM v010;
SELECT streamforge.checkpoint('demo') = cp AS same_bytes FROM v010;
-- the same calls give the same bytes too
SELECT streamforge.create_pipeline('demo2', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
SELECT count(*) FROM streamforge.ingest('demo2', 'p', 0, 'e1', 'k', 3, 5);
SELECT count(*) FROM streamforge.advance('demo2', 'p', 10);
SELECT streamforge.checkpoint('demo2') = cp AS same_bytes FROM v010;
SELECT streamforge.create_pipeline('demo_r', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], retention => 5);
SELECT streamforge.restore('demo_r', cp) FROM v010;

-- 2. What a checkpoint with retention holds.  Watermark 10, retention 5:
-- H = 5.  a (time 1) and c (3) are forgotten with their offsets 0 and 2;
-- d (2) arrives late and is forgotten at once, its late row stays (its
-- watermark 10 >= H) and carries the event; e (7) is late and remembered.
SELECT streamforge.create_pipeline('rc', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], lateness => 0, retention => 5);
SELECT count(*) FROM streamforge.ingest('rc', 'p', 0, 'a', 'k', 1, 1);
SELECT count(*) FROM streamforge.ingest('rc', 'p', 1, 'b', 'k', 12, 2);
SELECT count(*) FROM streamforge.ingest('rc', 'p', 2, 'c', 'k', 3, 3);
SELECT count(*) FROM streamforge.advance('rc', 'p', 10);
SELECT count(*) FROM streamforge.ingest('rc', 'p', 3, 'd', 'k', 2, 4);
SELECT count(*) FROM streamforge.ingest('rc', 'p', 4, 'e', 'k', 7, 5);
SELECT jsonb_pretty(streamforge.inspect_checkpoint(streamforge.checkpoint('rc')) - 'changelog' - 'windows' - 'clock');
-- the canonical document (keys in byte order)
SELECT convert_from(substring(streamforge.checkpoint('rc') FROM 25), 'UTF8') AS document \gset
\echo :document

-- It restores into an equivalent pipeline, which continues identically:
-- offset 2 is forgotten (a replay), e is known (SF002), a is new (late).
SELECT streamforge.create_pipeline('rc2', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], lateness => 0, retention => 5);
SELECT streamforge.restore('rc2', streamforge.checkpoint('rc'));
SELECT streamforge.checkpoint('rc2') = streamforge.checkpoint('rc') AS same_bytes;
SELECT * FROM streamforge.ingest('rc2', 'p', 2, 'x', 'y', 0, 0);
SELECT * FROM streamforge.ingest('rc2', 'p', 5, 'e', 'k', 7, 6);
SELECT * FROM streamforge.ingest('rc2', 'p', 5, 'a', 'k', 1, 1);
SELECT late_seq, source_offset, event_id, event_time, value, watermark
  FROM streamforge.late_events('rc2');

-- Equivalence includes the retention (docs/semantics.md "Exact rules" 9 and "Retention").
SELECT streamforge.create_pipeline('rc6', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], lateness => 0, retention => 6);
SELECT streamforge.create_pipeline('rcn', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], lateness => 0);
SELECT streamforge.restore('rc6', streamforge.checkpoint('rc'));
SELECT streamforge.restore('rcn', streamforge.checkpoint('rc'));

-- 3. Crafted checkpoints: one edit of rc's document each, with a correct
-- envelope (CRC-32 computed here), so that the rule itself rejects it.
\i test/sql/checkpoint_forge.sql
-- rc's document with "from" (which must occur exactly once) replaced
CREATE FUNCTION edited("from" text, "to" text) RETURNS bytea
LANGUAGE plpgsql AS $$
DECLARE
    doc text := convert_from(substring(streamforge.checkpoint('rc') FROM 25), 'UTF8');
BEGIN
    IF (length(doc) - length(replace(doc, "from", ''))) / length("from") <> 1 THEN
        RAISE EXCEPTION 'edit: "%" does not occur exactly once', "from";
    END IF;
    RETURN wrap(replace(doc, "from", "to"));
END $$;
-- the unedited document passes, so the edits below are what fails
SELECT streamforge.restore('rc2', edited('"retention":5', '"retention":5'));

-- a remembered identity below the horizon
SELECT streamforge.restore('rc2', edited('"event_time":7,"key":"k","late":true',
                                         '"event_time":4,"key":"k","late":true'));
-- a late row whose watermark is below the horizon
SELECT streamforge.restore('rc2', edited('"source_offset":3,"value":4,"watermark":10',
                                         '"source_offset":3,"value":4,"watermark":4'));
-- a late row below the horizon at an offset that is remembered
SELECT streamforge.restore('rc2', edited('["b",null,null,"e"]', '["b",null,"b","e"]'));
-- a late row of a remembered identity that differs from it
SELECT streamforge.restore('rc2', edited('"key":"k","late_seq":2', '"key":"K","late_seq":2'));
-- late_seq must end at late_sequence, which counts every late event
SELECT streamforge.restore('rc2', edited('"late_sequence":2', '"late_sequence":1'));
SELECT streamforge.restore('rc2', edited('"late_sequence":2', '"late_sequence":3'));
-- a negative retention
SELECT streamforge.inspect_checkpoint(edited('"retention":5', '"retention":-1'));
-- forgotten offsets are not spelled as leading nulls: base is the first
-- remembered offset
SELECT streamforge.restore('rc2', edited('"base":1,"deliveries":["b"',
                                         '"base":0,"deliveries":[null,"b"'));
-- a base that puts the consumed offset beyond bigint
SELECT streamforge.restore('rc2', edited('"base":1,', '"base":9223372036854775806,'));
-- rc2 holds the state of the one restore that passed (rc's)
SELECT late_seq, event_id FROM streamforge.late_events('rc2');

SELECT streamforge.drop_pipeline(name) FROM streamforge.pipelines
 WHERE name IN ('demo', 'demo2', 'demo_r', 'rc', 'rc2', 'rc6', 'rcn') ORDER BY name;
DROP SCHEMA ck_ret CASCADE;
