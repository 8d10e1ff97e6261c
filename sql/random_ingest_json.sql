-- random_ingest_json: a randomized driver for ingest_json's document
-- parser and mapper (issue 24, item 4).  src/api/ingest_json.c reads jsonb
-- with the server's jsonb and numeric code, which a libFuzzer binary
-- cannot link outside the server (the checkpoint, journal and snapshot
-- targets of test/fuzz link only src/engine and src/codec), so this test
-- does what a fuzz target would, in SQL, deterministically (setseed).
--
-- 400 documents are generated: arrays of 0 to 4 deliveries (or events
-- without offsets), mostly valid, each field of each element damaged with
-- a small probability (dropped, renamed, null, another JSON type, a
-- fraction, a number beyond bigint, exponent notation, an unknown
-- partition, a wrong offset, a reused event_id), and now and then the
-- document itself (not an array, an array of scalars, a duplicated key,
-- a deep nesting).  Each document goes to ingest_json on pipeline "jrand";
-- every 20 documents both partitions advance (to n / 4 at document n).
-- The oracle is a twin pipeline "jtwin": a document whose elements all have
-- exactly the fields of one kind, of the right JSON types, with integral
-- numbers within bigint, is converted in SQL to the delivery[] (event[])
-- it means and given to ingest_batch (append_batch) on the twin; both
-- calls must then return the same changes or fail with the same SQLSTATE
-- and message (but for the pipeline's name).  Any other document must fail with 22023, 22004 or 22003
-- and change nothing.  At the end both pipelines must have the same
-- state (checkpoint bytes, apart from the name, which checkpoints carry).
SELECT streamforge.create_pipeline(name, ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('f', 10), streamforge.session('g', 4)], 30)
  FROM unnest(ARRAY['jrand', 'jtwin']) AS name;

-- A random integer in [0, n)
CREATE FUNCTION jr_int(n int) RETURNS int LANGUAGE sql AS
$$ SELECT floor(random() * n)::int $$;

-- A field's value, damaged with probability 1/16 (into one of 12 kinds)
CREATE FUNCTION jr_damage(v jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    IF jr_int(16) > 0 THEN
        RETURN v;
    END IF;
    RETURN CASE jr_int(12)
        WHEN 0 THEN 'null'::jsonb
        WHEN 1 THEN 'true'::jsonb
        WHEN 2 THEN '{"x": 1}'::jsonb
        WHEN 3 THEN '[1]'::jsonb
        WHEN 4 THEN to_jsonb(v #>> '{}')                 -- a number as a string
        WHEN 5 THEN '1.5'::jsonb
        WHEN 6 THEN '1e30'::jsonb
        WHEN 7 THEN '-9223372036854775809'::jsonb
        WHEN 8 THEN '9223372036854775807'::jsonb
        WHEN 9 THEN '2e1'::jsonb                          -- integral: 20
        WHEN 10 THEN '""'::jsonb
        ELSE to_jsonb('ü' || repeat('x', jr_int(80)))
    END;
END $$;

-- Element number i of a document (offsets: whether it has source_offset);
-- next_a/next_b: the next offsets of the partitions, advanced here
CREATE FUNCTION jr_element(offsets bool, INOUT next_a bigint, INOUT next_b bigint,
                           OUT e jsonb) LANGUAGE plpgsql AS $$
DECLARE
    part text := CASE jr_int(13) WHEN 0 THEN 'c' WHEN 1 THEN 'b' WHEN 2 THEN 'b'
                                 WHEN 3 THEN 'b' WHEN 4 THEN 'b' WHEN 5 THEN 'b'
                                 ELSE 'a' END;
    off bigint;
    r int;
BEGIN
    IF part = 'a' THEN off := next_a; next_a := next_a + 1;
    ELSE off := next_b; next_b := next_b + 1; END IF;
    IF jr_int(25) = 0 THEN off := off + jr_int(3) - 2; END IF;  -- a replay, or a gap
    e := jsonb_build_object(
        'partition', jr_damage(to_jsonb(part)),
        'event_id', jr_damage(to_jsonb('e' || jr_int(90))),
        'key', jr_damage(to_jsonb((ARRAY['k', 'K', 'ключ', ''])[1 + jr_int(4)])),
        'event_time', jr_damage(to_jsonb(jr_int(120) - 10)),
        'value', jr_damage(to_jsonb(jr_int(2000) - 1000)));
    IF offsets THEN
        e := e || jsonb_build_object('source_offset', jr_damage(to_jsonb(off)));
    END IF;
    r := jr_int(40);
    IF r = 0 THEN
        e := e - (ARRAY['partition', 'source_offset', 'event_id', 'key',
                        'event_time', 'value'])[1 + jr_int(6)];
    ELSIF r = 1 THEN
        e := e || jsonb_build_object((ARRAY['colour', 'Value', 'source_offset', ''])[1 + jr_int(4)], 1);
    END IF;
END $$;

-- A document, as text (so that it can hold what jsonb_build_object cannot)
CREATE FUNCTION jr_document() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    n int := jr_int(5);
    offsets bool := jr_int(3) > 0;
    next_a bigint;
    next_b bigint;
    el jsonb;
    parts text[] := '{}';
    r int := jr_int(60);
BEGIN
    SELECT consumed_offset + 1 INTO next_a FROM streamforge.partitions('jrand') WHERE partition = 'a';
    SELECT consumed_offset + 1 INTO next_b FROM streamforge.partitions('jrand') WHERE partition = 'b';
    next_a := coalesce(next_a, 0);
    next_b := coalesce(next_b, 0);
    FOR i IN 1 .. n LOOP
        SELECT x.next_a, x.next_b, x.e INTO next_a, next_b, el
          FROM jr_element(CASE WHEN jr_int(30) = 0 THEN NOT offsets ELSE offsets END,
                          next_a, next_b) x;
        parts := parts || el::text;
    END LOOP;
    RETURN CASE r
        WHEN 0 THEN '{"partition": "a"}'
        WHEN 1 THEN '17'
        WHEN 2 THEN '[1, "x", null]'
        WHEN 3 THEN '[' || repeat('[', 200) || repeat(']', 200) || ']'
        WHEN 4 THEN '[{"partition": "a", "partition": "b", "source_offset": 0, "event_id": "d", "key": "k", "event_time": 1, "value": 1}]'
        ELSE '[' || array_to_string(parts, ', ') || ']'
    END;
END $$;

-- Whether doc is well-formed for ingest_json (see the head): an array of
-- objects with exactly the fields of the first element's kind, strings and
-- integral numbers within bigint where they belong
CREATE FUNCTION jr_well_formed(doc jsonb) RETURNS bool LANGUAGE sql AS $$
SELECT jsonb_typeof(doc) = 'array' AND coalesce(bool_and(
         jsonb_typeof(e) = 'object'
     AND (SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(e) k) =
         CASE WHEN doc -> 0 ? 'source_offset'
              THEN ARRAY['event_id', 'event_time', 'key', 'partition', 'source_offset', 'value']
              ELSE ARRAY['event_id', 'event_time', 'key', 'partition', 'value'] END
     AND jsonb_typeof(e -> 'partition') = 'string'
     AND jsonb_typeof(e -> 'event_id') = 'string'
     AND jsonb_typeof(e -> 'key') = 'string'
     AND (SELECT bool_and(jsonb_typeof(e -> f) = 'number'
                          AND (e ->> f)::numeric = trunc((e ->> f)::numeric)
                          AND (e ->> f)::numeric BETWEEN -9223372036854775808 AND 9223372036854775807)
            FROM unnest(CASE WHEN doc -> 0 ? 'source_offset'
                             THEN ARRAY['source_offset', 'event_time', 'value']
                             ELSE ARRAY['event_time', 'value'] END) f)), true)
  FROM jsonb_array_elements(CASE WHEN jsonb_typeof(doc) = 'array' THEN doc ELSE '[]' END) e
$$;

CREATE TABLE jr_log (n int, outcome text, twin text, well_formed bool);

DO $$
DECLARE
    doc jsonb;
    wf bool;
    got text;
    want text;
    jr_before bytea;
BEGIN
    PERFORM setseed(0.24);
    FOR n IN 1 .. 400 LOOP
        doc := jr_document()::jsonb;
        wf := jr_well_formed(doc);
        jr_before := streamforge.checkpoint('jrand');
        BEGIN
            SELECT coalesce(string_agg(c::text, ' ' ORDER BY c.seq, c.op), '')
              INTO got FROM streamforge.ingest_json('jrand', doc) c;
            got := 'ok ' || got;
        EXCEPTION WHEN OTHERS THEN
            got := 'error ' || SQLSTATE || ' ' || SQLERRM;
        END;
        want := NULL;
        IF wf THEN
            BEGIN
                IF doc -> 0 ? 'source_offset' THEN
                    SELECT coalesce(string_agg(c::text, ' ' ORDER BY c.seq, c.op), '')
                      INTO want FROM streamforge.ingest_batch('jtwin', ARRAY(
                          SELECT ROW(e ->> 'partition', (e ->> 'source_offset')::numeric,
                                     e ->> 'event_id', e ->> 'key',
                                     (e ->> 'event_time')::numeric, (e ->> 'value')::numeric)::streamforge.delivery
                            FROM jsonb_array_elements(doc) WITH ORDINALITY AS x(e, i) ORDER BY i)) c;
                ELSE
                    SELECT coalesce(string_agg(c::text, ' ' ORDER BY c.seq, c.op), '')
                      INTO want FROM streamforge.append_batch('jtwin', ARRAY(
                          SELECT ROW(e ->> 'partition', e ->> 'event_id', e ->> 'key',
                                     (e ->> 'event_time')::numeric, (e ->> 'value')::numeric)::streamforge.event
                            FROM jsonb_array_elements(doc) WITH ORDINALITY AS x(e, i) ORDER BY i)) c;
                END IF;
                want := 'ok ' || want;
            EXCEPTION WHEN OTHERS THEN
                want := 'error ' || SQLSTATE || ' ' || SQLERRM;
            END;
            want := replace(want, 'pipeline "jtwin"', 'pipeline "jrand"');
            IF got IS DISTINCT FROM want THEN
                RAISE EXCEPTION 'document % differs from its twin: % / ingest_json: % / twin: %',
                    n, doc, got, want;
            END IF;
        ELSIF got NOT LIKE 'error 22023 %' AND got NOT LIKE 'error 22004 %'
          AND got NOT LIKE 'error 22003 %' THEN
            RAISE EXCEPTION 'ill-formed document % was not refused as such: % / %', n, doc, got;
        END IF;
        IF got LIKE 'error%' AND streamforge.checkpoint('jrand') <> jr_before THEN
            RAISE EXCEPTION 'refused document % changed the pipeline: %', n, doc;
        END IF;
        INSERT INTO jr_log VALUES (n, got, want, wf);
        -- the clock moves now and then, so that rows become visible and
        -- later documents cause changes
        IF n % 20 = 0 THEN
            FOR part IN 0 .. 1 LOOP
                SELECT coalesce(string_agg(c::text, ' ' ORDER BY c.seq, c.op), '') INTO got
                  FROM streamforge.advance('jrand', (ARRAY['a', 'b'])[1 + part], n / 4) c;
                SELECT coalesce(string_agg(c::text, ' ' ORDER BY c.seq, c.op), '') INTO want
                  FROM streamforge.advance('jtwin', (ARRAY['a', 'b'])[1 + part], n / 4) c;
                IF got IS DISTINCT FROM want THEN
                    RAISE EXCEPTION 'advance after document % differs: % / %', n, got, want;
                END IF;
            END LOOP;
        END IF;
    END LOOP;
END $$;

-- What the documents did: every kind of outcome occurred
SELECT well_formed, CASE WHEN outcome LIKE 'ok %' THEN 'accepted'
                         ELSE substr(outcome, 7, 5) END AS outcome, count(*)
  FROM jr_log GROUP BY 1, 2 ORDER BY 1, 2;
SELECT count(*) AS accepted_with_changes FROM jr_log WHERE outcome LIKE 'ok _%';
-- the same state: the checkpoints differ only in the pipeline's name
SELECT streamforge.inspect_checkpoint(streamforge.checkpoint('jrand'))::text =
       replace(streamforge.inspect_checkpoint(streamforge.checkpoint('jtwin'))::text,
               '"jtwin"', '"jrand"') AS same_state;
SELECT (SELECT array_agg(p ORDER BY partition) FROM streamforge.partitions('jrand') p) =
       (SELECT array_agg(p ORDER BY partition) FROM streamforge.partitions('jtwin') p) AS same_partitions;
SELECT deliveries, live_buckets FROM streamforge.stats('jrand');

-- clean up
SELECT count(streamforge.drop_pipeline(name)) FROM unnest(ARRAY['jrand', 'jtwin']) AS name;
