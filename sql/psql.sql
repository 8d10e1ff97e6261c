-- psql: what \df+, \dT+ and \dv+ show, unqualified use, averages and the
-- pipeline_info view.
\set VERBOSITY default
-- every function, type and view of the API has a comment: a new one
-- without a comment shows up here
SELECT p.oid::regprocedure AS function_without_comment
  FROM pg_proc p
 WHERE p.pronamespace = 'streamforge'::regnamespace
   AND obj_description(p.oid, 'pg_proc') IS NULL
 ORDER BY p.oid::regprocedure::text;
SELECT t.oid::regtype AS type_without_comment
  FROM pg_type t
 WHERE t.typnamespace = 'streamforge'::regnamespace
   AND t.typtype = 'c'
   AND (SELECT c.relkind FROM pg_class c WHERE c.oid = t.typrelid) = 'c'
   AND obj_description(t.oid, 'pg_type') IS NULL
 ORDER BY t.oid::regtype::text;
SELECT c.oid::regclass AS relation_without_comment
  FROM pg_class c
 WHERE c.relnamespace = 'streamforge'::regnamespace
   AND c.relkind IN ('v', 'r')
   AND obj_description(c.oid, 'pg_class') IS NULL
 ORDER BY c.oid::regclass::text;
-- \df streamforge.* shows the API: no trigger functions, no *_internal
SELECT p.oid::regprocedure AS internal_in_api
  FROM pg_proc p
 WHERE p.pronamespace = 'streamforge'::regnamespace
   AND (p.prorettype = 'trigger'::regtype OR p.proname LIKE '%\_internal')
 ORDER BY p.oid::regprocedure::text;
-- they live in schema streamforge_internal; those that run as the
-- extension's owner are closed to PUBLIC
SELECT p.oid::regprocedure AS internal, has_function_privilege('public', p.oid, 'EXECUTE') AS public_execute
  FROM pg_proc p
 WHERE p.pronamespace = 'streamforge_internal'::regnamespace
 ORDER BY p.oid::regprocedure::text;
SELECT has_schema_privilege('public', 'streamforge_internal', 'USAGE');
-- names that cannot be called unqualified (reserved words) and so have an
-- alias that can: grant (grant_privilege; revoke_privilege goes with it)
SELECT p.proname, k.catdesc
  FROM pg_proc p JOIN pg_get_keywords() k ON k.word = p.proname
 WHERE p.pronamespace = 'streamforge'::regnamespace
   AND k.catcode IN ('R', 'C')
 ORDER BY 1;
-- the volatility and parallel safety of every function is declared (the
-- defaults, volatile and parallel unsafe, are only where they are meant)
SELECT p.proname, p.provolatile, p.proparallel
  FROM pg_proc p
 WHERE p.pronamespace = 'streamforge'::regnamespace
   AND p.provolatile = 'v' AND p.proparallel = 'u'
   AND p.proname NOT IN ('create_pipeline', 'drop_pipeline', 'ingest',
       'ingest_batch', 'advance', 'mark_idle', 'restore', 'configure_outputs',
       'disable_outputs', 'resync_outputs', 'advance_to_now', 'schedule_advance',
       'unschedule_advance', 'grant', 'revoke', 'grant_privilege',
       'revoke_privilege', 'set_owner', 'add_partition', 'add_window',
       'drop_window', 'set_lateness', 'set_retention', 'append', 'append_batch', 'append_ts',
       'ingest_ts', 'advance_ts', 'ingest_json', 'ingest_count', 'attach', 'detach',
       'trim_changelog', 'trim_late_output', 'trim_results', 'create_aggregate',
       'drop_aggregate', 'alter_aggregate', 'move_aggregate_results', 'recompute',
       'set_emit', 'register_consumer', 'commit_consumer', 'drop_consumer',
       'set_out_of_orderness', 'set_idle_timeout', 'tick', 'finish', 'lock_pipelines',
       'tick_pipelines', 'schedule_tick', 'unschedule_tick',
       'compact',
       'ingest_measures', 'ingest_measures_batch', 'append_measures_batch',
       'append_measures', 'append_measures_ts', 'ingest_measures_count',
       'ingest_measures_json', 'ingest_measures_ts')
 ORDER BY 1;

-- unqualified use
SET search_path = streamforge;
SELECT create_pipeline('u', ARRAY['p', 'q'], ARRAY[fixed('f', 10), sliding('s', 10, 5), session('g', 3)], 2);
CREATE ROLE sf_psql_role;
SELECT grant_privilege('u', 'sf_psql_role', 'read');
SELECT has_pipeline_privilege('u', 'read', 'sf_psql_role');
SELECT revoke_privilege('u', 'sf_psql_role', 'read');
SELECT has_pipeline_privilege('u', 'read', 'sf_psql_role');
DROP ROLE sf_psql_role;
SELECT count(*) FROM ingest_batch('u', ARRAY[
    ROW('p', 0, 'a', 'k', 1, 1), ROW('p', 1, 'b', 'k', 2, 2),
    ROW('q', 0, 'c', 'k', 4, 4), ROW('q', 1, 'd', 'j', 7, -3)]::delivery[]);
SELECT count(*) FROM advance('u', 'p', 10);
SELECT count(*) FROM mark_idle('u', 'q');
-- an untouched partition has consumed_offset -1
SELECT count(*) FROM add_partition('u', 'r');
SELECT * FROM partitions('u');
SELECT watermark('u'), length(checkpoint('u')) > 0 AS has_checkpoint;
-- averages: exact numeric sum / count next to the contract's columns
SELECT * FROM visible_avg('u');
SELECT window_name, key, window_start, count, sum, avg FROM live_avg('u');
SELECT pg_typeof(avg) FROM visible_avg('u') LIMIT 1;
RESET search_path;

-- the pipeline_info view: definition, outputs, clock and counters
SELECT streamforge.configure_outputs('u', true, false, false, false);
SELECT name, owner = current_user::regrole AS owned_by_me, privilege,
       partitions, windows, lateness, changelog, results, late_output, notify,
       watermark, idle_partitions, deliveries, accepted, duplicate_ids,
       late_events, offset_replays, changes_emitted, live_buckets, visible_rows
  FROM streamforge.pipeline_info WHERE name = 'u' \gx
SELECT attname FROM pg_attribute
 WHERE attrelid = 'streamforge.pipeline_info'::regclass AND attnum > 0
 ORDER BY attnum;
SELECT streamforge.drop_pipeline('u');
SELECT count(*) FROM streamforge.pipeline_info WHERE name = 'u';
