-- checkpoint_format: the worked example of docs/checkpoint-format.md,
-- byte for byte (header fields, CRC-32, document), so that the document and
-- the code cannot drift apart.
SELECT streamforge.create_pipeline('ck_demo', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
SELECT * FROM streamforge.ingest('ck_demo', 'p', 0, 'e1', 'k', 3, 5);
SELECT * FROM streamforge.advance('ck_demo', 'p', 10);
CREATE TEMP TABLE demo AS SELECT streamforge.checkpoint('ck_demo') AS cp;
SELECT length(cp) AS total_length FROM demo;
-- the 24-byte header, field by field
SELECT encode(substring(cp FROM 1 FOR 8), 'hex') AS magic,
       encode(substring(cp FROM 9 FOR 2), 'hex') AS version,
       encode(substring(cp FROM 11 FOR 2), 'hex') AS flags,
       encode(substring(cp FROM 13 FOR 4), 'hex') AS payload_length,
       encode(substring(cp FROM 17 FOR 4), 'hex') AS document_length,
       encode(substring(cp FROM 21 FOR 4), 'hex') AS crc32
FROM demo;
SELECT convert_from(substring(cp FROM 1 FOR 6), 'SQL_ASCII') AS magic_text,
       ('x' || encode(substring(cp FROM 13 FOR 4), 'hex'))::bit(32)::bigint AS payload_length,
       ('x' || encode(substring(cp FROM 21 FOR 4), 'hex'))::bit(32)::bigint AS crc32
FROM demo;
-- the payload is the document
SELECT convert_from(substring(cp FROM 25), 'UTF8') AS document FROM demo;
-- the whole checkpoint as hex (what xxd shows)
SELECT encode(cp, 'hex') FROM demo;
SELECT streamforge.drop_pipeline('ck_demo');
