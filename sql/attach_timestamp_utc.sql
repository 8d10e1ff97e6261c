-- A timestamp (without time zone) event time is read as UTC, whatever the
-- session's zone: the attachment maps it as time_to_units(timezone('UTC',
-- t), unit), which the trigger evaluates as the same value relabeled
-- timestamptz when 'UTC' is a fixed offset of zero (src/persist/
-- attach_rows.c, utc_relabeled).  Here every event's window is compared
-- with SQL's timezone('UTC', t), over the whole range of timestamps, in a
-- zone with a half-hour offset and daylight saving time.
SET client_min_messages = warning;
SET timezone = 'America/St_Johns';
SELECT setseed(0.25);
CREATE TABLE tz_ev (id bigint PRIMARY KEY, at timestamp NOT NULL);
SELECT streamforge.create_aggregate('tz_agg', $$
    SELECT id, count(*) AS n FROM tz_ev
     GROUP BY id, streamforge.tumble(at, interval '1 microsecond') $$);
-- the edges of the range, the epoch, local times that do not exist or
-- repeat in the session's zone, then 300 random microseconds from 4713 BC
-- to about 287000 AD, in two statements
INSERT INTO tz_ev VALUES
    (1, '4713-01-01 00:00:00 BC'), (2, '294246-12-31 23:59:59.999999'),
    (3, '1970-01-01 00:00:00'), (4, '1969-12-31 23:59:59.999999'),
    (5, '2026-03-08 02:30:00'), (6, '2026-11-01 01:30:00'),
    (7, '2000-01-01 00:00:00');
INSERT INTO tz_ev
SELECT 100 + g, timestamp '4713-01-01 00:00:00 BC'
       + (floor(random() * 9224318015999) * 1000000 + floor(random() * 1000000)) * interval '1 microsecond'
  FROM generate_series(1, 300) AS g;
-- every event in its window: window_start is timezone('UTC', at)
SELECT count(*) AS events,
       count(*) FILTER (WHERE a.window_start = timezone('UTC', e.at)) AS equal
  FROM tz_ev e LEFT JOIN tz_agg_live a ON a.id = e.id;
SELECT e.id, e.at, a.window_start FROM tz_ev e LEFT JOIN tz_agg_live a ON a.id = e.id
 WHERE a.window_start IS DISTINCT FROM timezone('UTC', e.at) ORDER BY e.id;
-- infinity, and a time past what microseconds since 1970 fit in a bigint:
-- refused as before (the same value reaches time_to_units)
INSERT INTO tz_ev VALUES (8, 'infinity');
INSERT INTO tz_ev VALUES (8, '294276-12-31 23:59:59.999999');
-- the abbreviations of another set (UTC is 0 in every set PostgreSQL
-- ships), in the same session
SET timezone_abbreviations = 'India';
INSERT INTO tz_ev VALUES (9, '2026-12-01 12:00:00.123456');
SELECT window_start = timezone('UTC', timestamp '2026-12-01 12:00:00.123456') AS equal
  FROM tz_agg_live WHERE id = 9;
RESET timezone_abbreviations;

SELECT streamforge.drop_aggregate('tz_agg');
DROP TABLE tz_ev;
