-- errors_named: every error about an input names the input (issue 45,
-- item 4; docs/ingestion.md, "Errors name their input"): the argument of
-- a row call, the delivery (1-based, as SQL arrays) and its event_id in a
-- batch, the element, field and event_id in a JSON array, the table and
-- column of an attached table (and of a query-defined aggregate's table).
-- The primary messages and SQLSTATEs are those of 0.3.0; the naming is in
-- the CONTEXT (batches) or DETAIL (attachments).
\set VERBOSITY default
\set SHOW_CONTEXT errors
SELECT streamforge.create_pipeline('named', ARRAY['p', 'q'],
    ARRAY[streamforge.fixed('f', 10)]);
SELECT streamforge.create_pipeline('named_m', ARRAY['p'],
    ARRAY[streamforge.fixed('f', 10)], measures => ARRAY['amount', 'qty']);
SELECT count(*) FROM streamforge.ingest('named', 'p', 0, 'e0', 'k', 1, 1);
SELECT count(*) FROM streamforge.ingest_measures('named_m', 'p', 0, 'm0', 'k', 1, ARRAY[1, 1]);

-- Row calls: the argument, by its name in the SQL signature
SELECT * FROM streamforge.ingest('named', 'p', 1, 'e1', NULL, 1, 1);
SELECT * FROM streamforge.ingest('named', 'p', 1, NULL, 'k', 1, 1);
SELECT * FROM streamforge.append('named', 'p', 'e1', 'k', NULL, 1);
SELECT * FROM streamforge.ingest_measures('named_m', 'p', 1, 'm1', 'k', 1, ARRAY[1, NULL]);

-- An array argument's NULL element: its subscript, as SQL arrays count
SELECT streamforge.create_pipeline('named_x', ARRAY['p', NULL],
    ARRAY[streamforge.fixed('f', 10)]);
SELECT streamforge.create_pipeline('named_x', ARRAY['p'],
    ARRAY[streamforge.fixed('f', 10), NULL, streamforge.fixed('g', 20)]);

-- ingest_batch: the engine's errors name the delivery and its event_id
SELECT * FROM streamforge.ingest_batch('named', ARRAY[
    ROW('p', 1, 'e1', 'k', 2, 1), ROW('z', 2, 'e2', 'k', 2, 1)]::streamforge.delivery[]);
SELECT * FROM streamforge.ingest_batch('named', ARRAY[
    ROW('p', 1, 'e1', 'k', 2, 1), ROW('p', 2, 'e2', 'k', 2, 1),
    ROW('p', 4, 'e4', 'k', 2, 1)]::streamforge.delivery[]);
SELECT * FROM streamforge.ingest_batch('named', ARRAY[
    ROW('q', 0, 'x', 'k', 2, 1), ROW('p', 1, 'e0', 'other', 2, 1)]::streamforge.delivery[]);
SELECT * FROM streamforge.ingest_batch('named', ARRAY[
    ROW('p', 1, 'e1', 'k', 2, 1), ROW('p', 2, '', 'k', 2, 1)]::streamforge.delivery[]);
SELECT * FROM streamforge.ingest_batch('named', ARRAY[
    ROW('p', 1, 'e1', 'k', 2, 1), ROW('p', 2, 'e2', 'k', 9223372036854775807, 1)]::streamforge.delivery[]);
-- a NULL field: the message names the delivery and the field (no event_id to name)
SELECT * FROM streamforge.ingest_batch('named', ARRAY[
    ROW('p', 1, 'e1', 'k', 2, 1), ROW('p', 2, 'e2', NULL, 2, 1)]::streamforge.delivery[]);

-- append_batch: "event N", as its own messages say
SELECT * FROM streamforge.append_batch('named', ARRAY[
    ROW('p', 'e1', 'k', 2, 1), ROW('z', 'e2', 'k', 2, 1)]::streamforge.event[]);
SELECT * FROM streamforge.append_batch('named', ARRAY[
    ROW('p', 'e1', 'k', 2, 1), ROW('p', '', 'k', 2, 1)]::streamforge.event[]);
SELECT * FROM streamforge.append_batch('named', ARRAY[
    ROW('p', 'e1', 'k', 2, 1), ROW('p', 'e0', 'other', 2, 1)]::streamforge.event[]);

-- ingest_measures_batch and append_measures_batch: the measures' errors too
SELECT * FROM streamforge.ingest_measures_batch('named_m', ARRAY[
    ROW('p', 1, 'm1', 'k', 2, ARRAY[1, 1]),
    ROW('p', 2, 'm2', 'k', 2, ARRAY[1, 1, 1])]::streamforge.measures_delivery[]);
SELECT * FROM streamforge.ingest_measures_batch('named_m', ARRAY[
    ROW('p', 1, 'm1', 'k', 2, ARRAY[1, 1]),
    ROW('p', 2, 'm2', 'k', 2, ARRAY[[1, 1]])]::streamforge.measures_delivery[]);
SELECT * FROM streamforge.ingest_measures_batch('named_m', ARRAY[
    ROW('p', 1, 'm1', 'k', 2, ARRAY[1, 1]),
    ROW('p', 2, 'm2', 'k', 2, ARRAY[1, NULL])]::streamforge.measures_delivery[]);
SELECT * FROM streamforge.ingest_measures_batch('named_m', ARRAY[
    ROW('p', 1, 'm1', 'k', 2, ARRAY[1, 1]),
    ROW('p', 3, 'm3', 'k', 2, ARRAY[1, 1])]::streamforge.measures_delivery[]);
SELECT * FROM streamforge.append_measures_batch('named_m', ARRAY[
    ROW('p', NULL, 'm1', 'k', 2, ARRAY[1, 1]),
    ROW('p', NULL, 'm0', 'k', 2, ARRAY[2, 2])]::streamforge.measures_delivery[]);
SELECT * FROM streamforge.append_measures_batch('named_m', ARRAY[
    ROW('p', NULL, 'm1', 'k', 2, ARRAY[1, 1]),
    ROW('p', NULL, 'm2', NULL, 2, ARRAY[2, 2])]::streamforge.measures_delivery[]);

-- ingest_json: the element, the field (its name), and the element's event_id
SELECT * FROM streamforge.ingest_json('named', '[
    {"partition": "p", "source_offset": 1, "event_id": "e1", "key": "k", "event_time": 2, "value": 1},
    {"partition": "p", "source_offset": 2, "event_id": "e2", "event_time": 2, "value": 1}]');
SELECT * FROM streamforge.ingest_json('named', '[
    {"partition": "p", "source_offset": 1, "event_id": "e1", "key": null, "event_time": 2, "value": 1}]');
SELECT * FROM streamforge.ingest_json('named', '[
    {"partition": "p", "source_offset": 1, "event_id": "e1", "key": "k", "event_time": 2, "value": 1},
    {"partition": "z", "source_offset": 2, "event_id": "e2", "key": "k", "event_time": 2, "value": 1}]');
SELECT * FROM streamforge.ingest_json('named', '[
    {"partition": "p", "source_offset": 1, "event_id": "e1", "key": "k", "event_time": 2, "value": 1},
    {"partition": "p", "source_offset": 2, "event_id": "", "key": "k", "event_time": 2, "value": 1}]');
SELECT * FROM streamforge.ingest_json('named', '[
    {"partition": "p", "event_id": "e1", "key": "k", "event_time": 2, "value": 1},
    {"partition": "p", "event_id": "e0", "key": "other", "event_time": 2, "value": 1}]');
SELECT * FROM streamforge.ingest_measures_json('named_m', '[
    {"partition": "p", "source_offset": 1, "event_id": "m1", "key": "k", "event_time": 2, "measures": [1, 1]},
    {"partition": "p", "source_offset": 5, "event_id": "m5", "key": "k", "event_time": 2, "measures": [1, 1]}]');
SELECT * FROM streamforge.ingest_measures_json('named_m', '[
    {"partition": "p", "source_offset": 1, "event_id": "m1", "key": "k", "event_time": 2, "measures": [1, null]}]');

-- nothing above was ingested
SELECT partition, consumed_offset FROM streamforge.partitions('named') ORDER BY 1;
SELECT partition, consumed_offset FROM streamforge.partitions('named_m') ORDER BY 1;

-- Attached tables: the column (or expression) the mapping reads, the
-- table and the pipeline; the PL/pgSQL context is left out
\set SHOW_CONTEXT never
SELECT streamforge.create_pipeline('named_t', ARRAY['web'],
    ARRAY[streamforge.fixed('f', 10)], time_unit => interval '1 second');
CREATE TABLE named_raw (id bigserial PRIMARY KEY, page text, t timestamptz,
                        n integer, src text);
SELECT streamforge.attach('named_t', 'named_raw', event_id => 'id', key => 'page',
    event_time => 't', value => 'n');
INSERT INTO named_raw (page, t, n) VALUES ('/a', '2026-01-01 00:00:01+00', 1),
                                          (NULL, '2026-01-01 00:00:02+00', 1);
INSERT INTO named_raw (page, t, n) VALUES ('/a', NULL, 1);
INSERT INTO named_raw (page, t, n) VALUES ('/a', '2026-01-01 00:00:01+00', NULL);
SELECT streamforge.detach('named_t', 'named_raw');
-- an expression, a timestamp without time zone, and a partition mapping
SELECT streamforge.create_pipeline('named_t2', ARRAY['web', 'app'],
    ARRAY[streamforge.fixed('f', 10)], time_unit => interval '1 second');
CREATE TABLE named_raw2 (id bigserial PRIMARY KEY, page text, t timestamp,
                         n integer, src text);
SELECT streamforge.attach('named_t2', 'named_raw2', partition => 'src',
    event_id => 'id', key => 'lower(page)', event_time => 't', value => 'n + 1');
INSERT INTO named_raw2 (src, page, t, n) VALUES ('web', NULL, '2026-01-01 00:00:01', 1);
INSERT INTO named_raw2 (src, page, t, n) VALUES (NULL, '/a', '2026-01-01 00:00:01', 1);
INSERT INTO named_raw2 (src, page, t, n) VALUES ('web', '/a', NULL, 1);
INSERT INTO named_raw2 (src, page, t, n) VALUES ('web', '/a', '2026-01-01 00:00:01', NULL);
-- the same words whatever the session's string settings
SET standard_conforming_strings = off;
INSERT INTO named_raw2 (src, page, t, n) VALUES ('web', NULL, '2026-01-01 00:00:01', 1);
RESET standard_conforming_strings;
-- an engine error of an attached row: the event of the trigger's batch
\set SHOW_CONTEXT errors
INSERT INTO named_raw2 (src, page, t, n) VALUES ('mobile', '/a', '2026-01-01 00:00:01', 1);
\set SHOW_CONTEXT never
-- a measures pipeline
CREATE TABLE named_raw3 (id bigserial PRIMARY KEY, page text, t bigint,
                         a integer, b integer);
SELECT streamforge.attach('named_m', 'named_raw3', event_id => '''r'' || id',
    key => 'page', event_time => 't', measures => ARRAY['a', 'b']);
INSERT INTO named_raw3 (page, t, a, b) VALUES (NULL, 2, 1, 1);
INSERT INTO named_raw3 (page, t, a, b) VALUES ('/a', NULL, 1, 1);
-- nothing was ingested
SELECT consumed_offset FROM streamforge.partitions('named_t');
SELECT partition, consumed_offset FROM streamforge.partitions('named_t2') ORDER BY 1;
SELECT partition, consumed_offset FROM streamforge.partitions('named_m') ORDER BY 1;

-- A query-defined aggregate's table: its rows are attached the same way
CREATE TABLE named_clicks (id bigserial PRIMARY KEY, page text, clicked_at timestamptz, amount integer NOT NULL);
SELECT streamforge.create_aggregate('named_per_minute', $$
    SELECT page, count(*) AS clicks, sum(amount) AS revenue
      FROM named_clicks
     GROUP BY page, streamforge.tumble(clicked_at, interval '1 minute')
$$);
INSERT INTO named_clicks (page, clicked_at, amount) VALUES ('/a', '2026-01-01 00:00:01+00', 1);
INSERT INTO named_clicks (page, clicked_at, amount) VALUES ('/a', NULL, 1);
INSERT INTO named_clicks (page, clicked_at, amount) VALUES (NULL, '2026-01-01 00:00:02+00', 1);
SELECT consumed_offset FROM streamforge.partitions('named_per_minute');
\set SHOW_CONTEXT errors
