\set ECHO none
-- test/sql/checkpoint_forge.sql: functions that forge a checkpoint, for
-- the regress tests that check what restore() refuses (docs/testing.md,
-- "Where a test goes").  A test creates a schema of its own, puts it
-- first on its search_path and includes this file there:
--
--     CREATE SCHEMA my_schema;
--     SET search_path = my_schema, public;
--     \i test/sql/checkpoint_forge.sql
--
-- (the path is relative to the directory psql runs in, the top of the
-- tree under make installcheck and scripts/test.sh).  The file echoes
-- nothing but its first line, so a test's expected output does not repeat
-- it; ECHO is back to all (pg_regress's psql -a) at its end.
--
-- The envelope (docs/checkpoint-format.md): magic "SFCKPT\r\n", format
-- version and flags (2 bytes each), payload and document lengths (4
-- bytes each), the CRC-32 of header and payload (4 bytes), the payload;
-- all big-endian.  wrap(doc) and wrap2(doc) seal an (edited) document with
-- a CORRECT checksum, so that what refuses it is the rule the edit breaks.

-- zlib's CRC-32 (reflected polynomial 0xEDB88320), table-driven
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

-- An envelope with a correct checksum around any payload and header values.
CREATE FUNCTION envelope(payload bytea, version int DEFAULT 1, flags int DEFAULT 0,
                         doclen bigint DEFAULT NULL) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    hdr bytea := '\x5346434b50540d0a'::bytea || u16(version) || u16(flags)
                 || u32(length(payload)) || u32(coalesce(doclen, length(payload)));
BEGIN
    RETURN hdr || u32(crc32(hdr || payload)) || payload;
END $$;

-- A document sealed as format version 1 (no measures) and 2 (measures).
CREATE FUNCTION wrap(doc text) RETURNS bytea LANGUAGE sql IMMUTABLE AS
$$ SELECT envelope(convert_to(doc, getdatabaseencoding())) $$;
CREATE FUNCTION wrap2(doc text) RETURNS bytea LANGUAGE sql IMMUTABLE AS
$$ SELECT envelope(convert_to(doc, getdatabaseencoding()), 2) $$;

-- The document of an uncompressed checkpoint.
CREATE FUNCTION doc(cp bytea) RETURNS text LANGUAGE sql IMMUTABLE AS
$$ SELECT convert_from(substring(cp FROM 25), getdatabaseencoding()) $$;

-- Replace the single occurrence of "from" (an edit must hit exactly once).
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
\set ECHO all
