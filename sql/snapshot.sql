-- snapshot: what persist.c stores as a pipeline's snapshot (src/codec/snapshot.c).
-- Without retention it is a binary image that a cold load copies back
-- without a parse; with retention, and from 0.1.0, it is a checkpoint.
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

-- with retention the snapshot stays a checkpoint
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
