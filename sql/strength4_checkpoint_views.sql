-- strength4_checkpoint_views: restore() compares each emitted row of a
-- version 2 checkpoint with its live bucket in the aggregate state too,
-- not only in count, sum, min and max (issue 24, the fourth round of
-- scripts/mutants-0.3.tsv: mutant ck-views-magg-unchecked; the state of a
-- live bucket is checked against its events, that of an emitted row only
-- against its bucket).  Edited and wrapped as strength3_checkpoint_measures
-- does.
SET client_min_messages = warning;
CREATE SCHEMA s4w;
SET search_path = s4w, public;
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
    PERFORM streamforge.restore('s4w', cp);
    RETURN 'restored';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
                            det = PG_EXCEPTION_DETAIL;
    RETURN st || ': ' || msg || coalesce(' | ' || nullif(det, ''), '');
END $$;
RESET client_min_messages;

SELECT streamforge.create_pipeline('s4w', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    measures => ARRAY['a', 'b'], aggregates => ARRAY['count', 'sum(b)']);
SELECT count(*) FROM streamforge.ingest_measures('s4w', 'p', 0, 'e0', 'k', 1, ARRAY[5, 7]);
SELECT count(*) FROM streamforge.ingest_measures('s4w', 'p', 1, 'e1', 'k', 2, ARRAY[6, 8]);
SELECT count(*) FROM streamforge.advance('s4w', 'p', 10);
CREATE TABLE d AS
SELECT convert_from(substring(streamforge.checkpoint('s4w') FROM 25), getdatabaseencoding()) AS doc;
-- the emitted row and the live bucket have the same state (sum(b) = 15)
SELECT (length(doc) - length(replace(doc, '"state":[15,0]', ''))) / 14 AS states_15,
       strpos(doc, '"changelog"') < strpos(doc, '"windows"') AS changelog_first
  FROM d;
SELECT try(wrap2(doc)) FROM d;
-- the emitted row's state changed, its count, sum, min and max not: refused
SELECT try(wrap2(overlay(doc PLACING '"state":[16,0]'
                         FROM strpos(doc, '"state":[15,0]') FOR 14))) FROM d;
SELECT key, window_start, count, aggregates FROM streamforge.visible_aggregates('s4w');
DROP TABLE d;
SELECT streamforge.drop_pipeline('s4w');
SET client_min_messages = warning;
DROP SCHEMA s4w CASCADE;
RESET client_min_messages;
