-- ingest_json's event_time strings and the SQL functions (time_to_units,
-- append_ts) share one conversion: the same results to the ends of
-- timestamptz's range, and the same errors (22003 for a time whose units
-- do not fit in a bigint, 22023 for one that is not a whole number of
-- units), the JSON ones naming the element.  0.2.0's ingest_json wrapped
-- around instead.
\set SHOW_CONTEXT never
SET timezone = 'UTC';
CREATE FUNCTION pg_temp.outcome(stmt text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE stmt;
    RETURN '00000';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END
$$;
SELECT streamforge.create_pipeline('jus', ARRAY['p'],
    ARRAY[streamforge.fixed('f', 1)], time_unit => interval '1 microsecond');
SELECT streamforge.create_pipeline('jms', ARRAY['p'],
    ARRAY[streamforge.fixed('f', 1)], time_unit => interval '1 millisecond');

-- microseconds: 294270 AD is past bigint's microseconds since 1970
SELECT pg_temp.outcome($$SELECT streamforge.time_to_units('294270-01-01 00:00:00+00', '1 microsecond')$$);
SELECT pg_temp.outcome($$SELECT * FROM streamforge.append_ts('jus', 'p', 'a', 'k', '294270-01-01 00:00:00+00', 1)$$);
SELECT pg_temp.outcome($$SELECT * FROM streamforge.ingest_json('jus', '[
  {"partition": "p", "event_id": "a", "key": "k", "event_time": "2026-12-01 00:00:00+00", "value": 1},
  {"partition": "p", "event_id": "b", "key": "k", "event_time": "294270-01-01 00:00:00+00", "value": 1}]')$$);
-- the last microsecond that fits, and the first that does not
SELECT streamforge.time_to_units('294247-01-10 04:00:54.775807+00', '1 microsecond');
SELECT pg_temp.outcome($$SELECT * FROM streamforge.ingest_json('jus', '[
  {"partition": "p", "event_id": "c", "key": "k", "event_time": "294247-01-10 04:00:54.775808+00", "value": 1}]')$$);
SELECT count(*) FROM streamforge.ingest_json('jus', '[
  {"partition": "p", "event_id": "d", "key": "k", "event_time": "294247-01-01 00:00:00.000001+00", "value": 1},
  {"partition": "p", "event_id": "e", "key": "k", "event_time": "4714-11-24 00:00:00+00 BC", "value": 1}]');
-- nothing of the refused calls was ingested; the two times are exact
SELECT window_start, count FROM streamforge.live('jus') ORDER BY window_start;
SELECT streamforge.time_to_units('4714-11-24 00:00:00+00 BC', '1 microsecond'),
       streamforge.time_to_units('294247-01-01 00:00:00.000001+00', '1 microsecond');

-- milliseconds: a far time that fits in milliseconds is accepted, exactly
SELECT streamforge.time_to_units('294270-01-01 00:00:00+00', '1 millisecond');
SELECT count(*) FROM streamforge.ingest_json('jms', '[
  {"partition": "p", "event_id": "a", "key": "k", "event_time": "294270-01-01 00:00:00+00", "value": 1}]');
SELECT window_start FROM streamforge.live('jms');
-- ... and one that is not a whole number of milliseconds is refused (the
-- wrapped-around microseconds of 0.2.0 were a multiple of 1000)
SELECT pg_temp.outcome($$SELECT streamforge.time_to_units('294270-01-01 00:00:00.000616+00', '1 millisecond')$$);
SELECT pg_temp.outcome($$SELECT * FROM streamforge.append_ts('jms', 'p', 'b', 'k', '294270-01-01 00:00:00.000616+00', 1)$$);
SELECT pg_temp.outcome($$SELECT * FROM streamforge.ingest_json('jms', '[
  {"partition": "p", "event_id": "b", "key": "k", "event_time": "294270-01-01 00:00:00.000616+00", "value": 1}]')$$);
-- the end of timestamptz's range
SELECT pg_temp.outcome($$SELECT * FROM streamforge.ingest_json('jms', '[
  {"partition": "p", "event_id": "c", "key": "k", "event_time": "294276-12-31 23:59:59.999999+00", "value": 1}]')$$);
SELECT count(*) FROM streamforge.ingest_json('jms', '[
  {"partition": "p", "event_id": "c", "key": "k", "event_time": "294276-12-31 23:59:59.999+00", "value": 1}]');
SELECT window_start, window_start = streamforge.time_to_units('294276-12-31 23:59:59.999+00', '1 millisecond') AS same
  FROM streamforge.live('jms') ORDER BY window_start;

-- the SQL function keeps its other errors
SELECT pg_temp.outcome($$SELECT streamforge.time_to_units(NULL, '1 second')$$);
SELECT pg_temp.outcome($$SELECT streamforge.time_to_units(now(), NULL)$$);
SELECT pg_temp.outcome($$SELECT streamforge.time_to_units(now(), '1 month')$$);
SELECT pg_temp.outcome($$SELECT streamforge.time_to_units('-infinity', '1 second')$$);
SELECT pg_temp.outcome($$SELECT streamforge.time_to_units(now(), '-1 second')$$);
SELECT streamforge.time_to_units('1969-12-31 23:59:59+00', '1 second'),
       streamforge.time_to_units('1969-12-31 23:59:59.998+00', '2 milliseconds'),
       streamforge.time_to_units('1970-01-01 00:00:00+00', '7 seconds');
SELECT pg_temp.outcome($$SELECT streamforge.time_to_units('1969-12-31 23:59:59.999+00', '2 milliseconds')$$);

SELECT streamforge.drop_pipeline('jus');
SELECT streamforge.drop_pipeline('jms');

-- ------------------------------------------------------------------------
-- Timestamp strings go back to their own elements
-- ------------------------------------------------------------------------
-- ingest_json details (issue 24).
\c -
\set SHOW_CONTEXT errors

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
