-- strength3_checkpoint_measures: restore() checks a version 2 checkpoint's
-- identity arrivals against its arrivals counter (1 .. arrivals) and its
-- buckets' aggregate states against their events (issue 24: mutants
-- ck-arrival-upper and magg-check-state-skipped of scripts/mutants-0.3.tsv:
-- no test edited an arrival or a state).  The document is edited as
-- checkpoint_invalid does, and wrapped in an envelope of format version 2.
SET client_min_messages = warning;
CREATE SCHEMA s3m;
SET search_path = s3m, public;
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
    PERFORM streamforge.restore('s3m', cp);
    RETURN 'restored';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
                            det = PG_EXCEPTION_DETAIL;
    RETURN st || ': ' || msg || coalesce(' | ' || nullif(det, ''), '');
END $$;
RESET client_min_messages;

SELECT streamforge.create_pipeline('s3m', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    measures => ARRAY['a'], aggregates => ARRAY['count', 'sum(a)']);
SELECT count(*) FROM streamforge.ingest_measures('s3m', 'p', 0, 'e0', 'k', 1, ARRAY[5]);
SELECT count(*) FROM streamforge.ingest_measures('s3m', 'p', 1, 'e1', 'k', 2, ARRAY[6]);
CREATE TABLE d AS
SELECT convert_from(substring(streamforge.checkpoint('s3m') FROM 25), getdatabaseencoding()) AS doc;
-- the document as it is: arrivals 2, e0 arrived 1st, e1 2nd
SELECT get_byte(streamforge.checkpoint('s3m'), 9) AS version,
       get_byte(streamforge.checkpoint('s3m'), 11) AS flags,
       (length(doc) - length(replace(doc, '"arrivals":2,', ''))) / 13 AS arrivals_2,
       (length(doc) - length(replace(doc, '"arrival":2,', ''))) / 12 AS one_arrival_2
  FROM d;
SELECT try(wrap2(doc)) FROM d;
-- an arrival one past the counter: refused
SELECT try(wrap2(replace(doc, '"arrival":2,', '"arrival":3,'))) FROM d;
-- so is 0
SELECT try(wrap2(replace(doc, '"arrival":1,', '"arrival":0,'))) FROM d;
-- a live bucket's aggregate state that its events do not give (sum 12
-- for events 5 and 6, the count still 2): refused (mutant
-- magg-check-state-skipped: no test reached this check)
SELECT (length(doc) - length(replace(doc, '"state":[11,0]', ''))) / 14 AS one_state FROM d;
SELECT try(wrap2(replace(doc, '"state":[11,0]', '"state":[12,0]'))) FROM d;
-- the counter raised to 3 makes arrival 3 the last one
SELECT try(wrap2(replace(replace(doc, '"arrival":2,', '"arrival":3,'),
                          '"arrivals":2,', '"arrivals":3,'))) FROM d;
SELECT key, window_start, count, aggregates FROM streamforge.live_aggregates('s3m');
DROP TABLE d;
SELECT streamforge.drop_pipeline('s3m');
SET client_min_messages = warning;
DROP SCHEMA s3m CASCADE;
