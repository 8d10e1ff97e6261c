-- strength2_checkpoint_session: restore() refuses a checkpoint whose live
-- session ends elsewhere than its accepted events say, even where the
-- width alone would be plausible (issue 24: mutant
-- derive-session-end-unchecked of scripts/mutants-0.3.tsv).
-- checkpoint_invalid moves the end of a one-event session, which the
-- width checks (gap <= width <= count * gap) refuse already; here two
-- events at 16 and 17 (gap 3) form [16,20), and an end of 19 (width 3)
-- passes those checks: only the re-derivation of the session from its
-- events (src/codec/codec_derive.c) can refuse it.
CREATE FUNCTION scs_crc32(data bytea) RETURNS bigint
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
CREATE FUNCTION scs_u32(n bigint) RETURNS bytea LANGUAGE sql IMMUTABLE AS
$$ SELECT decode(lpad(to_hex(n), 8, '0'), 'hex') $$;
-- the checkpoint envelope (docs/checkpoint-format.md) around a document
CREATE FUNCTION scs_wrap(doc text) RETURNS bytea LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    payload bytea := convert_to(doc, 'UTF8');
    hdr bytea := '\x5346434b50540d0a00010000'::bytea || scs_u32(length(payload))
                 || scs_u32(length(payload));
BEGIN
    RETURN hdr || scs_u32(scs_crc32(hdr || payload)) || payload;
END $$;
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
SELECT streamforge.restore('scs_into', scs_wrap(doc)) FROM scs_doc;
SELECT window_start, window_end, count FROM streamforge.live('scs_into');
-- the session ending at 19: refused
SELECT streamforge.restore('scs_into',
    scs_wrap(replace(doc, '"window_end":20,"window_name":"g","window_start":16',
                          '"window_end":19,"window_name":"g","window_start":16')))
  FROM scs_doc;
SELECT window_start, window_end, count FROM streamforge.live('scs_into');

-- clean up
SELECT count(streamforge.drop_pipeline(name)) FROM unnest(ARRAY['scs', 'scs_into']) AS name;
