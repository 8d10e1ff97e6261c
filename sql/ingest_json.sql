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
SELECT streamforge.drop_pipeline('js');
SELECT streamforge.drop_pipeline('jt');
