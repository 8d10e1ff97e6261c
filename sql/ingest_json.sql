-- ingest_json(pipeline, jsonb): an array of deliveries (like ingest_batch)
-- or of events without offsets (like append_batch).  Errors name the
-- element (1-based, like ingest_batch's) and the field.
\set SHOW_CONTEXT never
SELECT streamforge.create_pipeline('js', ARRAY['p0', 'p1'],
    ARRAY[streamforge.fixed('w', 10)]);

SELECT * FROM streamforge.ingest_json('js', '[
  {"partition": "p0", "source_offset": 0, "event_id": "e1", "key": "k", "event_time": 1, "value": 10},
  {"partition": "p0", "source_offset": 1, "event_id": "e2", "key": "k", "event_time": 2, "value": -20},
  {"partition": "p1", "source_offset": 0, "event_id": "e3", "key": "j", "event_time": 3, "value": 9223372036854775807}
]');
-- without offsets: the next ones are taken
SELECT * FROM streamforge.ingest_json('js', '[
  {"partition": "p0", "event_id": "e4", "key": "k", "event_time": 4, "value": 1},
  {"partition": "p1", "event_id": "e5", "key": "k", "event_time": 5, "value": 1},
  {"partition": "p0", "event_id": "e1", "key": "k", "event_time": 1, "value": 10}
]');
SELECT * FROM streamforge.partitions('js');
SELECT * FROM streamforge.live('js');
SELECT count(*) FROM streamforge.ingest_json('js', '[]');

-- errors; none of them changes anything
SELECT count(*) FROM streamforge.ingest_json('js', NULL);
SELECT count(*) FROM streamforge.ingest_json('js', '{"partition": "p0"}');
SELECT count(*) FROM streamforge.ingest_json('js', '"x"');
SELECT count(*) FROM streamforge.ingest_json('js', '[1]');
SELECT count(*) FROM streamforge.ingest_json('js', '[{"partition": "p0", "event_id": "x1", "key": "k", "event_time": 1, "value": 1},
  {"partition": "p0", "event_id": "x2", "key": "k", "value": 1}]');
SELECT count(*) FROM streamforge.ingest_json('js', '[{"partition": "p0", "event_id": "x1", "key": "k", "event_time": 1, "value": 1},
  {"partition": "p0", "event_id": "x2", "key": "k", "event_time": null, "value": 1}]');
SELECT count(*) FROM streamforge.ingest_json('js', '[{"partition": "p0", "event_id": 7, "key": "k", "event_time": 1, "value": 1}]');
SELECT count(*) FROM streamforge.ingest_json('js', '[{"partition": "p0", "event_id": "x", "key": "k", "event_time": "1", "value": 1}]');
SELECT count(*) FROM streamforge.ingest_json('js', '[{"partition": "p0", "event_id": "x", "key": "k", "event_time": 1, "value": 1.5}]');
SELECT count(*) FROM streamforge.ingest_json('js', '[{"partition": "p0", "event_id": "x", "key": "k", "event_time": 1, "value": 9223372036854775808}]');
SELECT count(*) FROM streamforge.ingest_json('js', '[{"partition": "p0", "event_id": "x", "key": "k", "event_time": -1e30, "value": 1}]');
SELECT count(*) FROM streamforge.ingest_json('js', '[{"partition": "p0", "event_id": "x", "key": "k", "event_time": 1, "value": 1, "colour": "red"}]');
SELECT count(*) FROM streamforge.ingest_json('js', '[{"partition": "p0", "event_id": "x", "key": "k", "event_time": 1, "value": 1},
  {"partition": "p0", "source_offset": 9, "event_id": "y", "key": "k", "event_time": 1, "value": 1}]');
SELECT count(*) FROM streamforge.ingest_json('js', '[{"partition": "p0", "source_offset": 6, "event_id": "x", "key": "k", "event_time": 1, "value": 1},
  {"partition": "p0", "event_id": "y", "key": "k", "event_time": 1, "value": 1}]');
-- the engine's own errors keep their SQLSTATEs (SF001 here), all or none
SELECT count(*) FROM streamforge.ingest_json('js', '[{"partition": "p0", "source_offset": 4, "event_id": "x", "key": "k", "event_time": 1, "value": 1},
  {"partition": "p0", "source_offset": 9, "event_id": "y", "key": "k", "event_time": 1, "value": 1}]');
SELECT count(*) FROM streamforge.ingest_json('nope', '[]');
SELECT count(*) FROM streamforge.ingest_json(NULL, '[]');
SELECT * FROM streamforge.partitions('js');
SELECT * FROM streamforge.live('js');

-- with a time unit, event_time may be a timestamp string
SELECT streamforge.create_pipeline('jt', ARRAY['p'],
    ARRAY[streamforge.fixed_interval('per_minute', interval '1 minute')],
    time_unit => interval '1 second');
SELECT count(*) FROM streamforge.ingest_json('jt', '[
  {"partition": "p", "event_id": "a", "key": "k", "event_time": "2026-11-30T12:00:05Z", "value": 1},
  {"partition": "p", "event_id": "b", "key": "k", "event_time": 1796040010, "value": 2}]');
SELECT count(*) FROM streamforge.ingest_json('jt', '[
  {"partition": "p", "event_id": "c", "key": "k", "event_time": "2026-11-30T12:00:05Z", "value": 1},
  {"partition": "p", "event_id": "d", "key": "k", "event_time": "yesterday-ish", "value": 2}]');
SELECT count(*) FROM streamforge.ingest_json('jt', '[
  {"partition": "p", "event_id": "d", "key": "k", "event_time": "2026-11-30T12:00:05.5Z", "value": 2}]');
SELECT * FROM streamforge.live_ts('jt');
-- a timestamp string: errors of the input and of the conversion
SELECT count(*) FROM streamforge.ingest_json('jt', '[
  {"partition": "p", "event_id": "d", "key": "k", "event_time": "infinity", "value": 2}]');
SELECT count(*) FROM streamforge.ingest_json('jt', '[
  {"partition": "p", "event_id": "d", "key": "k", "event_time": "294277-01-01 00:00:00+00", "value": 2}]');
SELECT count(*) FROM streamforge.ingest_json('jt', '[
  {"partition": "p", "event_id": "d", "key": "k", "event_time": true, "value": 2}]');
-- a timestamp error comes after every element's own checks
SELECT count(*) FROM streamforge.ingest_json('jt', '[
  {"partition": "p", "event_id": "d", "key": "k", "event_time": "not a time", "value": 2},
  {"partition": "p", "event_id": "e", "key": "k", "event_time": 1, "value": 1.5}]');
-- a long input is cut in messages (at most 64 bytes of it)
SELECT count(*) FROM streamforge.ingest_json('jt', jsonb_build_array(jsonb_build_object(
  'partition', 'p', 'event_id', 'd', 'key', 'k', 'event_time', repeat('x', 200), 'value', 2)));
SELECT count(*) FROM streamforge.ingest_json('jt', jsonb_build_array(jsonb_build_object(
  'partition', 'p', 'event_id', 'd', 'key', 'k', 'event_time', 1, 'value', 2, repeat('y', 200), 1)));
SELECT count(*) FROM streamforge.ingest_json('jt', ('[{"partition": "p", "event_id": "d", "key": "k", "event_time": 1, "value": '
  || repeat('9', 200) || '}]')::jsonb);
SELECT * FROM streamforge.live_ts('jt');

-- numbers: integral values in any notation are integers, others are not
SELECT streamforge.create_pipeline('jn', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
SELECT count(*) FROM streamforge.ingest_json('jn', '[
  {"partition": "p", "event_id": "a", "key": "k", "event_time": 1e3, "value": 1.0},
  {"partition": "p", "event_id": "b", "key": "k", "event_time": 2.50e2, "value": -9223372036854775808},
  {"partition": "p", "event_id": "c", "key": "k", "event_time": 0.0e5, "value": 9223372036854775807.000}]');
SELECT count(*) FROM streamforge.ingest_json('jn', '[{"partition": "p", "event_id": "x", "key": "k", "event_time": 1e-3, "value": 1}]');
SELECT count(*) FROM streamforge.ingest_json('jn', '[{"partition": "p", "event_id": "x", "key": "k", "event_time": 1, "value": 1.5e0}]');
SELECT count(*) FROM streamforge.ingest_json('jn', '[{"partition": "p", "event_id": "x", "key": "k", "event_time": 1, "value": -9223372036854775809}]');
SELECT count(*) FROM streamforge.ingest_json('jn', '[{"partition": "p", "event_id": "x", "key": "k", "event_time": 1, "value": 1e19}]');
-- nested objects and arrays, booleans: wrong types
SELECT count(*) FROM streamforge.ingest_json('jn', '[{"partition": "p", "event_id": "x", "key": {"a": "k"}, "event_time": 1, "value": 1}]');
SELECT count(*) FROM streamforge.ingest_json('jn', '[{"partition": ["p"], "event_id": "x", "key": "k", "event_time": 1, "value": 1}]');
SELECT count(*) FROM streamforge.ingest_json('jn', '[{"partition": "p", "event_id": "x", "key": "k", "event_time": 1, "value": {"n": 1}}]');
SELECT count(*) FROM streamforge.ingest_json('jn', '[{"partition": "p", "event_id": "x", "key": "k", "event_time": 1, "value": false}]');
SELECT count(*) FROM streamforge.ingest_json('jn', '[{"partition": "p", "event_id": "x", "key": "k", "event_time": 1, "value": 1}, [1]]');
SELECT count(*) FROM streamforge.ingest_json('jn', '[{"partition": "p", "event_id": "x", "key": "k", "event_time": 1, "value": 1}, null]');
SELECT count(*) FROM streamforge.ingest_json('jn', 'null');
SELECT count(*) FROM streamforge.ingest_json('jn', '17');
-- two unknown fields: the first in sort order is named
SELECT count(*) FROM streamforge.ingest_json('jn', '[{"partition": "p", "event_id": "x", "key": "k", "event_time": 1, "value": 1, "zeta": 1, "alpha": 2}]');
-- an unknown field comes before a missing one
SELECT count(*) FROM streamforge.ingest_json('jn', '[{"partition": "p", "event_id": "x", "event_time": 1, "value": 1, "colour": "red"}]');
SELECT count(*) FROM streamforge.ingest_json('jn', '[{"partition": "p", "event_id": "x", "key": "k", "event_time": 1, "value": 1}, {}]');
-- duplicate keys: jsonb keeps the last one
SELECT count(*) FROM streamforge.ingest_json('jn', '[{"partition": "p", "event_id": "d", "key": "k", "event_time": 3, "value": "ten", "value": 10}]');
-- the engine's checks: an empty event_id, an unknown partition
SELECT count(*) FROM streamforge.ingest_json('jn', '[{"partition": "p", "event_id": "", "key": "k", "event_time": 3, "value": 1}]');
SELECT count(*) FROM streamforge.ingest_json('jn', '[{"partition": "p", "source_offset": 4, "event_id": "", "key": "k", "event_time": 3, "value": 1}]');
SELECT count(*) FROM streamforge.ingest_json('jn', '[{"partition": "q", "event_id": "y", "key": "k", "event_time": 3, "value": 1}]');
SELECT * FROM streamforge.live('jn');
-- a large array: 100,000 events in one call
SELECT count(*) FROM streamforge.ingest_json('jn', (
  SELECT jsonb_agg(jsonb_build_object('partition', 'p', 'source_offset', 3 + g, 'event_id', 'g' || g,
                                      'key', 'k' || (g % 3), 'event_time', g, 'value', g) ORDER BY g)
    FROM generate_series(1, 100000) AS g));
SELECT * FROM streamforge.partitions('jn');
SELECT key, count, sum FROM streamforge.live('jn') WHERE window_start = 99990 ORDER BY key;
SELECT sum(count), sum(sum) FROM streamforge.live('jn');

-- privileges come first: a role that may only read gets 42501, whatever
-- the input
CREATE ROLE regress_sf_json_reader;
GRANT USAGE ON SCHEMA streamforge TO regress_sf_json_reader;
SELECT streamforge.grant_privilege('jn', 'regress_sf_json_reader', 'read');
SET ROLE regress_sf_json_reader;
SELECT count(*) FROM streamforge.ingest_json('jn', '[]');
SELECT count(*) FROM streamforge.ingest_json('jn', '"x"');
RESET ROLE;
SELECT streamforge.drop_pipeline('jn');
REVOKE USAGE ON SCHEMA streamforge FROM regress_sf_json_reader;
DROP ROLE regress_sf_json_reader;
SELECT streamforge.drop_pipeline('js');
SELECT streamforge.drop_pipeline('jt');
