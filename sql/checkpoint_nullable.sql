-- checkpoint_nullable: checkpoints of pipelines with nullable measures
-- (issue 38, defect 5; docs/checkpoint-format.md, "Version 2"): a null
-- element of an identity's measures is a NULL of a measure declared
-- "name NULL", and a nullable measure's state starts with its count of
-- non-NULL values.  Hostile documents (edited as checkpoint_invalid does,
-- wrapped in a version 2 envelope) are refused with SF003, never a crash.
SET client_min_messages = warning;
CREATE SCHEMA cnl;
SET search_path = cnl, public;
CREATE FUNCTION crc32(data bytea) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
    tab bigint[];
    c bigint;
    crc bigint := 4294967295;
BEGIN
    FOR n IN 0 .. 255 LOOP
        c := n;
        FOR k IN 1 .. 8 LOOP
            IF (c & 1) = 1 THEN c := (c >> 1) # 3988292384; ELSE c := c >> 1; END IF;
        END LOOP;
        tab[n] := c;
    END LOOP;
    FOR i IN 0 .. length(data) - 1 LOOP
        crc := tab[(crc # get_byte(data, i)) & 255] # (crc >> 8);
    END LOOP;
    RETURN crc # 4294967295;
END $$;
CREATE FUNCTION u16(n bigint) RETURNS bytea LANGUAGE sql IMMUTABLE AS
$$ SELECT decode(lpad(to_hex(n), 4, '0'), 'hex') $$;
CREATE FUNCTION u32(n bigint) RETURNS bytea LANGUAGE sql IMMUTABLE AS
$$ SELECT decode(lpad(to_hex(n), 8, '0'), 'hex') $$;
CREATE FUNCTION wrap2(doc text) RETURNS bytea LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    payload bytea := convert_to(doc, getdatabaseencoding());
    hdr bytea := '\x5346434b50540d0a'::bytea || u16(2) || u16(0)
                 || u32(length(payload)) || u32(length(payload));
BEGIN
    RETURN hdr || u32(crc32(hdr || payload)) || payload;
END $$;
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
DROP TABLE d;
SELECT streamforge.drop_pipeline('cnl');
SET client_min_messages = warning;
DROP SCHEMA cnl CASCADE;
