-- management_retention: set_retention on a running pipeline
-- (docs/management.md, docs/semantics.md "Retention").  It forgets at once what the new
-- horizon H = watermark - lateness - retention forgets, changes no window
-- (so it returns no changes), needs admin, is transactional and persisted,
-- and refuses to move the horizon back over what is already forgotten.
\set VERBOSITY default
-- the SQLSTATE of an error is shown with \echo :LAST_ERROR_SQLSTATE
SELECT streamforge.create_pipeline('mr', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)], 0);
SELECT count(*) FROM streamforge.ingest('mr', 'p', 0, 'e1', 'k', 3, 10);
SELECT count(*) FROM streamforge.ingest('mr', 'p', 1, 'e2', 'k', 17, 1);
SELECT count(*) FROM streamforge.advance('mr', 'p', 12);
-- e3 (time 5) is late at watermark 12
SELECT count(*) FROM streamforge.ingest('mr', 'p', 2, 'e3', 'k', 5, 7);
SELECT count(*) FROM streamforge.advance('mr', 'p', 20);
SELECT streamforge.checkpoint('mr') AS before_change \gset
SELECT name, lateness, retention, time_unit FROM streamforge.pipeline_info WHERE name = 'mr';
SELECT remembered_identities, remembered_offsets, remembered_late_events,
       forgotten_offsets, forgotten_late_events FROM streamforge.stats('mr');
SELECT late_seq, source_offset, event_id, event_time, watermark FROM streamforge.late_events('mr');
SELECT * FROM streamforge.visible('mr');

-- retention 5 at watermark 20: H = 15.  e1 (3) and e3 (5) are forgotten,
-- with their offsets 0 and 2, and e3's late row (its watermark 12 < 15);
-- e2 (17) is remembered.  No window changes: no rows.
SELECT * FROM streamforge.set_retention('mr', 5);
SELECT name, lateness, retention, time_unit FROM streamforge.pipeline_info WHERE name = 'mr';
SELECT remembered_identities, remembered_offsets, remembered_late_events,
       forgotten_offsets, forgotten_late_events FROM streamforge.stats('mr');
SELECT late_seq, source_offset, event_id, event_time, watermark FROM streamforge.late_events('mr');
SELECT * FROM streamforge.visible('mr');
-- e2 is still remembered: another value is SF002
SELECT * FROM streamforge.ingest('mr', 'p', 3, 'e2', 'k', 17, 2);
\echo :LAST_ERROR_SQLSTATE
-- a forgotten offset is a replay no-op, whatever it carries
SELECT * FROM streamforge.ingest('mr', 'p', 0, 'zz', 'k', 30, 1);
-- e1 again, at time 25: a new unique event (no duplicate, no SF002)
SELECT op, window_start, count, sum FROM streamforge.ingest('mr', 'p', 3, 'e1', 'k', 25, 99);
SELECT * FROM streamforge.ingest('mr', 'p', 4, 'e1', 'k', 25, 99);   -- a duplicate now
SELECT deliveries, accepted, duplicate_ids, offset_replays, remembered_identities
  FROM streamforge.stats('mr');

-- once anything is forgotten, raising or removing the retention is
-- refused (it would move the horizon back over what is gone); the same or
-- a lower retention is fine
SELECT * FROM streamforge.set_retention('mr', 6);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM streamforge.set_retention('mr', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM streamforge.set_retention('mr', 5);
-- lower: H = 18 forgets e2 (17) too
SELECT * FROM streamforge.set_retention('mr', 2);
SELECT remembered_identities, remembered_offsets, forgotten_offsets
  FROM streamforge.stats('mr');
SELECT * FROM streamforge.ingest('mr', 'p', 5, 'e2', 'k', 17, 2);   -- new, late
SELECT late_seq, source_offset, event_id, event_time, watermark FROM streamforge.late_events('mr');

-- arguments: negative 22023; the pipeline first (22004, 42704)
SELECT * FROM streamforge.set_retention('mr', -1);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM streamforge.set_retention(NULL, 1);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM streamforge.set_retention('nope', -1);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM streamforge.set_retention('mx', 1);
\echo :LAST_ERROR_SQLSTATE

-- admin only: an ingester gets 42501 before its argument is looked at
CREATE ROLE sf_mret_ingester;
GRANT USAGE ON SCHEMA streamforge TO sf_mret_ingester;
SELECT streamforge.grant_privilege('mr', 'sf_mret_ingester', 'ingest');
SET ROLE sf_mret_ingester;
SELECT * FROM streamforge.set_retention('mr', -1);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM streamforge.set_retention('mr', 1);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

-- a checkpoint taken before the change is not equivalent any more (SF003)
SELECT streamforge.restore('mr', :'before_change');
\echo :LAST_ERROR_SQLSTATE

-- other definition changes keep the retention, and it stays persisted
SELECT * FROM streamforge.add_partition('mr', 'q');
SELECT name, partitions, windows, lateness, retention FROM streamforge.pipeline_info WHERE name = 'mr';

-- in a transaction that rolls back, set_retention changes nothing
SELECT streamforge.create_pipeline('mt', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)], 2);
SELECT count(*) FROM streamforge.ingest('mt', 'p', 0, 'a', 'k', 1, 1);
SELECT count(*) FROM streamforge.ingest('mt', 'p', 1, 'b', 'k', 30, 1);
SELECT count(*) FROM streamforge.advance('mt', 'p', 40);
SELECT count(*) FROM streamforge.ingest('mt', 'p', 2, 'c', 'k', 4, 1);   -- late
BEGIN;
-- H = 40 - 2 - 0 = 38: a, b and c are forgotten; c's late row stays (it
-- was late at watermark 40, not below 38)
SELECT * FROM streamforge.set_retention('mt', 0);
SELECT retention FROM streamforge.pipeline_info WHERE name = 'mt';
SELECT remembered_identities, remembered_late_events, forgotten_offsets,
       forgotten_late_events FROM streamforge.stats('mt');
ROLLBACK;
SELECT retention FROM streamforge.pipeline_info WHERE name = 'mt';
SELECT remembered_identities, remembered_late_events, forgotten_offsets,
       forgotten_late_events FROM streamforge.stats('mt');
SELECT late_seq, event_id FROM streamforge.late_events('mt');
SELECT * FROM streamforge.ingest('mt', 'p', 3, 'a', 'k', 1, 2);   -- SF002: remembered
\echo :LAST_ERROR_SQLSTATE
-- before anything is forgotten, any retention may be set, then removed
SELECT * FROM streamforge.set_retention('mt', 1000);
SELECT retention, forgotten_offsets
  FROM streamforge.pipeline_info, streamforge.stats('mt') WHERE name = 'mt';
SELECT * FROM streamforge.set_retention('mt', NULL);
SELECT retention FROM streamforge.pipeline_info WHERE name = 'mt';
-- set_retention in a transaction that commits
BEGIN;
SELECT * FROM streamforge.set_retention('mt', 10);
COMMIT;

-- a new session sees the committed retentions and what they forgot
\c
\set VERBOSITY default
SELECT name, partitions, windows, lateness, retention FROM streamforge.pipeline_info
 WHERE name IN ('mr', 'mt') ORDER BY name;
SELECT remembered_identities, remembered_offsets, forgotten_offsets
  FROM streamforge.stats('mr');
SELECT remembered_identities, forgotten_offsets, forgotten_late_events
  FROM streamforge.stats('mt');
SELECT * FROM streamforge.ingest('mr', 'p', 5, 'zz', 'k', 1, 1);   -- replay
SELECT * FROM streamforge.set_retention('mr', 3);                  -- still refused
\echo :LAST_ERROR_SQLSTATE

SELECT streamforge.drop_pipeline('mr');
SELECT streamforge.drop_pipeline('mt');
REVOKE USAGE ON SCHEMA streamforge FROM sf_mret_ingester;
DROP ROLE sf_mret_ingester;
