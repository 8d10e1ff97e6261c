-- strength4_checkpoint: restore() compares the checkpoint's emit mode and
-- out_of_orderness with the pipeline's, refuses a non-canonical
-- "emit":"update", reads back its own escapes of control bytes, names the
-- right offset of an unknown delivery after retention moved the source's
-- base, and numbers a change up to the largest seq exactly (issue 24, the
-- fourth round of scripts/mutants-0.3.tsv: mutants ck-emit-unchecked,
-- ck-ooo-value-unchecked, ck-emit-update-spelled, json-hex-upper,
-- first-unknown-base and seq-exhausted-boundary; json-verify-encoding at
-- the end).  Documents are edited as
-- checkpoint_invalid does and re-wrapped in a correct envelope.
SET client_min_messages = warning;
CREATE SCHEMA s4k;
SET search_path = s4k, public;
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
CREATE FUNCTION wrap(doc text) RETURNS bytea LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    payload bytea := convert_to(doc, getdatabaseencoding());
    hdr bytea := '\x5346434b50540d0a'::bytea || u16(1) || u16(0)
                 || u32(length(payload)) || u32(length(payload));
BEGIN
    RETURN hdr || u32(crc32(hdr || payload)) || payload;
END $$;
CREATE FUNCTION doc(cp bytea) RETURNS text LANGUAGE sql IMMUTABLE AS
$$ SELECT convert_from(substring(cp FROM 25), getdatabaseencoding()) $$;
-- Replace the single occurrence of "from" (an edit must hit exactly once)
CREATE FUNCTION edit(doc text, "from" text, "to" text) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    n int := (length(doc) - length(replace(doc, "from", ''))) / length("from");
BEGIN
    IF n <> 1 THEN
        RAISE EXCEPTION 'edit: % occurrences of %', n, "from";
    END IF;
    RETURN replace(doc, "from", "to");
END $$;
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
