-- strength_json: ingest_json details (issue 24).

-- Timestamp strings are converted after every element is checked, and
-- each goes back to its own element, wherever the numeric event_times are.
SELECT streamforge.create_pipeline('sj', ARRAY['p'],
    ARRAY[streamforge.fixed('f', 60)], time_unit => interval '1 second');
SELECT count(*) FROM streamforge.ingest_json('sj', '[
  {"partition": "p", "event_id": "a", "key": "n1", "event_time": 1796040000, "value": 1},
  {"partition": "p", "event_id": "b", "key": "s1", "event_time": "2026-11-30T12:01:05Z", "value": 2},
  {"partition": "p", "event_id": "c", "key": "n2", "event_time": 1796040125, "value": 3},
  {"partition": "p", "event_id": "d", "key": "s2", "event_time": "2026-11-30T12:03:05Z", "value": 4}]');
SELECT key, window_start, sum FROM streamforge.live('sj') ORDER BY window_start;
SELECT event_id, event_time FROM jsonb_to_recordset(
    (streamforge.inspect_checkpoint(streamforge.checkpoint('sj')))->'identities')
    AS x(event_id text, event_time bigint) ORDER BY event_id;

-- clean up
SELECT count(streamforge.drop_pipeline(name)) FROM unnest(ARRAY['sj']) AS name;
