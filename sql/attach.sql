-- Tables attached to a pipeline: every committed INSERT is ingested in the
-- inserting transaction, at the partition's next offsets.
\set SHOW_CONTEXT never
SELECT streamforge.create_pipeline('clicks', ARRAY['web'],
    ARRAY[streamforge.fixed('per_10', 10)]);
CREATE TABLE clicks_raw (id bigserial PRIMARY KEY, page text NOT NULL,
                         t bigint NOT NULL, n integer NOT NULL DEFAULT 1);
SELECT streamforge.attach('clicks', 'clicks_raw',
    event_id => 'id', key => 'page', event_time => 't', value => 'n');
SELECT source, pipeline, partition, event_id, key, event_time, value
  FROM streamforge.attachments;

-- single row, multi-row, INSERT ... SELECT
INSERT INTO clicks_raw (page, t) VALUES ('/home', 1);
INSERT INTO clicks_raw (page, t, n) VALUES ('/home', 2, 2), ('/about', 3, 1);
INSERT INTO clicks_raw (page, t) SELECT '/blog', g FROM generate_series(11, 15) AS g;
SELECT * FROM streamforge.live('clicks');
SELECT * FROM streamforge.partitions('clicks');

-- a rolled-back insert is not ingested and leaves no gap (the bigserial
-- does leave one: offsets are not ids)
BEGIN;
INSERT INTO clicks_raw (page, t) VALUES ('/gone', 4);
SELECT consumed_offset FROM streamforge.partitions('clicks');
ROLLBACK;
INSERT INTO clicks_raw (page, t) VALUES ('/home', 5);
SELECT consumed_offset FROM streamforge.partitions('clicks');

-- COPY: one batch
COPY clicks_raw (page, t, n) FROM stdin;
/copy	21	1
/copy	22	2
/copy	23	3
\.
SELECT * FROM streamforge.live('clicks') WHERE key = '/copy';
-- a statement of 10,000 rows is one batch: one journal entry
SELECT count(*) AS entries FROM streamforge.journal \gset
INSERT INTO clicks_raw (page, t) SELECT '/bulk', g % 100 FROM generate_series(1, 10000) AS g;
SELECT count(*) - :entries AS new_journal_entries FROM streamforge.journal;
SELECT sum(count) FROM streamforge.live('clicks') WHERE key = '/bulk';

-- an insert that the pipeline refuses inserts nothing
INSERT INTO clicks_raw (id, page, t) VALUES (1, '/home', 99);   -- unique violation
INSERT INTO clicks_raw (id, page, t) VALUES (-1, '/x', 1), (-2, '/x', 9223372036854775807);
SELECT count(*) FROM clicks_raw WHERE id < 0;

-- the same event id twice (a re-inserted row) is a duplicate, not counted
-- twice
CREATE TABLE clicks_log (click_id text, page text, t bigint);
SELECT streamforge.create_pipeline('log', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('w', 100)]);
SELECT streamforge.attach('log', 'clicks_log', event_id => 'click_id',
    key => 'page', event_time => 't');   -- two partitions: refused
SELECT streamforge.attach('log', 'clicks_log', event_id => 'click_id',
    key => 'page', event_time => 't',
    partition => 'CASE WHEN t % 2 = 0 THEN ''a'' ELSE ''b'' END');
INSERT INTO clicks_log VALUES ('c1', '/p', 1), ('c2', '/p', 2), ('c1', '/p', 1);
SELECT * FROM streamforge.live('log');
SELECT * FROM streamforge.partitions('log');
SELECT duplicate_ids FROM streamforge.stats('log');

-- UPDATE: changing what a mapping reads is refused, other columns may change
ALTER TABLE clicks_log ADD COLUMN note text;
UPDATE clicks_log SET note = 'seen' WHERE click_id = 'c2';
UPDATE clicks_log SET t = 4 WHERE click_id = 'c2';
-- DELETE and TRUNCATE are ignored: the events stay consumed
DELETE FROM clicks_log WHERE click_id = 'c2';
TRUNCATE clicks_log;
SELECT * FROM streamforge.live('log');

-- bad attachments
SELECT streamforge.attach('clicks', 'clicks_raw', 'id', 'page', 't');   -- twice
SELECT streamforge.attach('nope', 'clicks_raw', 'id', 'page', 't');
SELECT streamforge.attach('log', 'clicks_raw', 'id', 'page', 'page', partition => '''a''');
SELECT streamforge.attach('log', 'clicks_raw', 'id', 'page', 't', value => 'page', partition => '''a''');
SELECT streamforge.attach('log', 'clicks_raw', 'id', 'page', 'no_such_column', partition => '''a''');
SELECT streamforge.attach('log', 'clicks_raw', NULL, 'page', 't');
SELECT streamforge.attach('log', 'streamforge.attachments', 'id', 'page', 't');

-- privileges: inserting needs the ingest privilege on the pipeline
CREATE ROLE regress_sf_attach_writer;
GRANT USAGE ON SCHEMA streamforge TO regress_sf_attach_writer;
GRANT INSERT ON clicks_raw TO regress_sf_attach_writer;
GRANT USAGE ON SEQUENCE clicks_raw_id_seq TO regress_sf_attach_writer;
SET ROLE regress_sf_attach_writer;
INSERT INTO clicks_raw (page, t) VALUES ('/denied', 1);
RESET ROLE;
SELECT streamforge.grant('clicks', 'regress_sf_attach_writer', 'ingest');
SET ROLE regress_sf_attach_writer;
INSERT INTO clicks_raw (page, t) VALUES ('/allowed', 1);
-- only the table's owner may attach or detach
SELECT streamforge.attach('clicks', 'clicks_raw', 'id', 'page', 't');
SELECT streamforge.detach('clicks', 'clicks_raw');
RESET ROLE;
SELECT key, count FROM streamforge.live('clicks') WHERE key IN ('/denied', '/allowed');

-- detach: inserts are no longer ingested
SELECT streamforge.detach('clicks', 'clicks_raw');
SELECT streamforge.detach('clicks', 'clicks_raw');
INSERT INTO clicks_raw (page, t) VALUES ('/after', 1);
SELECT count(*) FROM streamforge.live('clicks') WHERE key = '/after';
SELECT source, pipeline FROM streamforge.attachments;

SELECT streamforge.drop_pipeline('clicks');
SELECT streamforge.drop_pipeline('log');
DROP TABLE clicks_raw, clicks_log;
REVOKE USAGE ON SCHEMA streamforge FROM regress_sf_attach_writer;
DROP ROLE regress_sf_attach_writer;
