-- streamforge 0.1.0 -> 0.2.0 (ALTER EXTENSION streamforge UPDATE TO '0.2.0')
--
-- Every storage and SQL API change of 0.2.0, applied to a database that runs
-- 0.1.0.  Each section names the change and the file of sql/install/ whose
-- definitions it brings over; after this script the extension's objects are
-- exactly those of a fresh CREATE EXTENSION at 0.2.0 (test/t/090_upgrade.pl
-- compares them), and pipelines, outputs, grants and checkpoints of 0.1.0
-- keep working.

\echo Use "ALTER EXTENSION streamforge UPDATE TO '0.2.0'" to load this file. \quit

-- ----------------------------------------------------------------
-- Pipeline management and the psql experience (issue 15):
-- sql/install/60_management.sql and 70_comments.sql.  Internal helpers
-- move to schema streamforge_internal (src/acl.c still finds them in
-- schema streamforge before this update); new functions add_partition,
-- add_window, drop_window, set_lateness, grant_privilege,
-- revoke_privilege, live_avg, visible_avg; view pipeline_info; a comment
-- on every public function, type, view and table.
-- ----------------------------------------------------------------

CREATE SCHEMA streamforge_internal;
REVOKE ALL ON SCHEMA streamforge_internal FROM PUBLIC;
COMMENT ON SCHEMA streamforge_internal IS
    'streamforge: internal helpers, not part of the API';

ALTER FUNCTION streamforge.output_config_changed()
    SET SCHEMA streamforge_internal;
ALTER FUNCTION streamforge.configure_outputs_internal(text, boolean, boolean,
    boolean, boolean) SET SCHEMA streamforge_internal;
ALTER FUNCTION streamforge.resync_outputs_internal(text)
    SET SCHEMA streamforge_internal;

-- ----------------------------------------------------------------
-- Definition changes
-- ----------------------------------------------------------------

-- Each needs the admin privilege, runs in the caller's transaction, and
-- returns the changes it caused (which the outputs receive as well).
CREATE FUNCTION streamforge.add_partition(pipeline text, partition text)
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_add_partition'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION streamforge.add_window(pipeline text,
    definition streamforge.window_def)
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_add_window'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION streamforge.drop_window(pipeline text, window_name text)
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_drop_window'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION streamforge.set_lateness(pipeline text, lateness bigint)
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_set_lateness'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- ----------------------------------------------------------------
-- Names that work unqualified (GRANT and REVOKE are reserved words)
-- ----------------------------------------------------------------
CREATE FUNCTION streamforge.grant_privilege(pipeline text, role name,
    privilege text)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_grant'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION streamforge.revoke_privilege(pipeline text, role name,
    privilege text)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_revoke'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- ----------------------------------------------------------------
-- Averages
-- ----------------------------------------------------------------

-- live() and visible() with avg = sum / count, an exact numeric quotient
-- rounded as numeric division rounds (at least 16 significant digits).
-- The change and result types stay as the contract defines them.
CREATE FUNCTION streamforge.live_avg(pipeline text)
RETURNS TABLE (window_name text, key text, window_start bigint,
               window_end bigint, count bigint, sum numeric, min bigint,
               max bigint, avg numeric)
LANGUAGE sql VOLATILE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT r.window_name, r.key, r.window_start, r.window_end, r.count,
           r.sum, r.min, r.max,
           r.sum OPERATOR(pg_catalog./) r.count::pg_catalog.numeric
      FROM streamforge.live(pipeline) AS r;
END;

CREATE FUNCTION streamforge.visible_avg(pipeline text)
RETURNS TABLE (window_name text, key text, window_start bigint,
               window_end bigint, count bigint, sum numeric, min bigint,
               max bigint, avg numeric)
LANGUAGE sql VOLATILE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT r.window_name, r.key, r.window_start, r.window_end, r.count,
           r.sum, r.min, r.max,
           r.sum OPERATOR(pg_catalog./) r.count::pg_catalog.numeric
      FROM streamforge.visible(pipeline) AS r;
END;

-- ----------------------------------------------------------------
-- The pipelines, in one view
-- ----------------------------------------------------------------

-- One row per pipeline the current user may read: its definition (windows
-- in readable form, in name order), outputs, the counters of stats(), the
-- watermark and the idle partitions.  The view runs as its owner (the
-- extension's owner), which may read the storage tables; the OFFSET 0
-- fence makes the privilege filter run before stats(), watermark() and
-- partitions() are called, which run as the current user and would refuse
-- a pipeline it may not read.  Reading a row loads the pipeline's state
-- into the backend's cache, like stats().
CREATE VIEW streamforge.pipeline_info WITH (security_barrier) AS
SELECT v.name, v.owner, v.privilege, v.partitions,
       ARRAY(SELECT w.name OPERATOR(pg_catalog.||) ': ' OPERATOR(pg_catalog.||)
                    w.kind OPERATOR(pg_catalog.||) '(' OPERATOR(pg_catalog.||)
                    CASE w.kind
                        WHEN 'sliding' THEN w.size::text OPERATOR(pg_catalog.||)
                                            ', ' OPERATOR(pg_catalog.||) w.step::text
                        WHEN 'session' THEN w.gap::text
                        ELSE w.size::text
                    END OPERATOR(pg_catalog.||) ')'
               FROM pg_catalog.unnest(v.windows) WITH ORDINALITY
                    AS w(name, kind, size, step, gap, i)
              ORDER BY w.i) AS windows,
       v.lateness,
       COALESCE(o.changelog, false) AS changelog,
       COALESCE(o.results, false) AS results,
       COALESCE(o.late, false) AS late_output,
       COALESCE(o.notify, false) AS notify,
       streamforge.watermark(v.name) AS watermark,
       ARRAY(SELECT t.partition FROM streamforge.partitions(v.name) AS t
              WHERE t.idle ORDER BY t.partition) AS idle_partitions,
       s.deliveries, s.accepted, s.duplicate_ids, s.late_events,
       s.offset_replays, s.changes_emitted, s.live_buckets, s.visible_rows
  FROM (SELECT p.name, p.owner, a.privilege, p.partitions, p.windows,
               p.lateness
          FROM streamforge.pipeline AS p,
               LATERAL (SELECT streamforge.effective_privilege(p.owner,
                               p.readers, p.ingesters, p.admins)
                               AS privilege) AS a
         WHERE a.privilege IS NOT NULL
        OFFSET 0) AS v
  LEFT JOIN streamforge.output_config AS o
         ON o.pipeline OPERATOR(pg_catalog.=) v.name
 CROSS JOIN LATERAL streamforge.stats(v.name) AS s;

REVOKE ALL ON streamforge.pipeline_info FROM PUBLIC;
GRANT SELECT ON streamforge.pipeline_info TO PUBLIC;

COMMENT ON TYPE streamforge.window_def IS
    'window definition made by fixed(), sliding() or session()';
COMMENT ON TYPE streamforge.change IS
    'a change of the emitted results: retract or upsert of one row, with its seq';
COMMENT ON TYPE streamforge.result IS
    'a result row: window, key, bounds and count, sum, min, max';
COMMENT ON TYPE streamforge.delivery IS
    'one delivery for ingest_batch(): partition, offset, event_id, key, event_time, value';
COMMENT ON TYPE streamforge.late_event IS
    'an event that arrived after the watermark passed its time plus lateness';

COMMENT ON FUNCTION streamforge.fixed(text, bigint) IS
    'tumbling window of size units: [floor(t/size)*size, +size)';
COMMENT ON FUNCTION streamforge.sliding(text, bigint, bigint) IS
    'sliding window of size units, starting every step units';
COMMENT ON FUNCTION streamforge.session(text, bigint) IS
    'session window: events closer than gap units merge into one session';
COMMENT ON FUNCTION streamforge.drop_pipeline(text) IS
    'drop a pipeline, its state and its outputs (admin)';
-- create_pipeline and ingest change their arguments in 0.2.0 (retention,
-- time units): comment them whatever their signature
DO $$
DECLARE
    f pg_catalog.regprocedure;
BEGIN
    FOR f IN SELECT p.oid FROM pg_catalog.pg_proc AS p
              WHERE p.pronamespace OPERATOR(pg_catalog.=) 'streamforge'::pg_catalog.regnamespace
                AND p.proname OPERATOR(pg_catalog.=) 'create_pipeline'
    LOOP
        EXECUTE pg_catalog.format('COMMENT ON FUNCTION %s IS %L', f,
            'create a pipeline with its partitions, windows and allowed lateness');
    END LOOP;
    FOR f IN SELECT p.oid FROM pg_catalog.pg_proc AS p
              WHERE p.pronamespace OPERATOR(pg_catalog.=) 'streamforge'::pg_catalog.regnamespace
                AND p.proname OPERATOR(pg_catalog.=) 'ingest'
    LOOP
        EXECUTE pg_catalog.format('COMMENT ON FUNCTION %s IS %L', f,
            'deliver one event; returns the changes it caused');
    END LOOP;
END
$$;
COMMENT ON FUNCTION streamforge.ingest_batch(text, streamforge.delivery[]) IS
    'deliver events in array order, all or none; returns their changes';
COMMENT ON FUNCTION streamforge.advance(text, text, bigint) IS
    'report a partition''s event-time progress; returns the changes it caused';
COMMENT ON FUNCTION streamforge.mark_idle(text, text) IS
    'take a partition out of the watermark until it reports again';
COMMENT ON FUNCTION streamforge.checkpoint(text) IS
    'the pipeline''s whole state as checkpoint bytes';
COMMENT ON FUNCTION streamforge.restore(text, bytea) IS
    'replace the pipeline''s state by a checkpoint of an equivalent definition (admin)';
COMMENT ON FUNCTION streamforge.inspect_checkpoint(bytea) IS
    'validate checkpoint bytes and show their JSON document';
COMMENT ON FUNCTION streamforge.watermark(text) IS
    'the global watermark, NULL until there is one';
COMMENT ON FUNCTION streamforge.live(text) IS
    'every live bucket, ready or not, in address order';
COMMENT ON FUNCTION streamforge.visible(text) IS
    'the emitted rows: ready buckets not finalized yet, in address order';
COMMENT ON FUNCTION streamforge.late_events(text) IS
    'the late events, in late_seq order';
COMMENT ON FUNCTION streamforge.partitions(text) IS
    'each partition''s consumed offset (-1: none yet), progress and idleness';
COMMENT ON FUNCTION streamforge.stats(text) IS
    'counters: deliveries, accepted, duplicates, late events, replays, changes, buckets';

COMMENT ON FUNCTION streamforge.configure_outputs(text, boolean, boolean,
    boolean, boolean) IS
    'turn the changelog, results, late output and NOTIFY on or off (admin)';
COMMENT ON FUNCTION streamforge.disable_outputs(text) IS
    'turn all outputs of a pipeline off (admin)';
COMMENT ON FUNCTION streamforge.resync_outputs(text) IS
    'bring the outputs back in line with the state after restore() (admin)';
COMMENT ON FUNCTION streamforge.clock_now(text) IS
    'the wall clock as units (us, ms, s, min) since the Unix epoch';
COMMENT ON FUNCTION streamforge.advance_to_now(text, text, bigint, text) IS
    'advance a partition to the wall clock minus a delay';
COMMENT ON FUNCTION streamforge.advance_job_name(text, text) IS
    'the pg_cron job name of a partition''s scheduled advance';
COMMENT ON FUNCTION streamforge.require_pg_cron() IS
    'raise an error unless pg_cron is installed in this database';
COMMENT ON FUNCTION streamforge.schedule_advance(text, text, text, bigint,
    text) IS
    'schedule advance_to_now() for a partition with pg_cron (admin)';
COMMENT ON FUNCTION streamforge.unschedule_advance(text, text) IS
    'remove a partition''s scheduled advance (admin)';
COMMENT ON FUNCTION streamforge.scheduled_advances() IS
    'the scheduled advances the current role can see';

COMMENT ON FUNCTION streamforge.grant(text, name, text) IS
    'give a role read, ingest or admin on a pipeline (admin); unqualified: grant_privilege()';
COMMENT ON FUNCTION streamforge.revoke(text, name, text) IS
    'take a privilege on a pipeline from a role (admin); unqualified: revoke_privilege()';
COMMENT ON FUNCTION streamforge.grant_privilege(text, name, text) IS
    'give a role read, ingest or admin on a pipeline (admin)';
COMMENT ON FUNCTION streamforge.revoke_privilege(text, name, text) IS
    'take a privilege on a pipeline from a role (admin)';
COMMENT ON FUNCTION streamforge.set_owner(text, name) IS
    'give a pipeline to another role (admin)';
COMMENT ON FUNCTION streamforge.has_pipeline_privilege(text, text, name) IS
    'whether a role has a privilege on a pipeline';
COMMENT ON FUNCTION streamforge.require_privilege(text, text) IS
    'raise 42704 or 42501 unless the current user has the privilege';
COMMENT ON FUNCTION streamforge.effective_privilege(regrole, regrole[],
    regrole[], regrole[]) IS
    'the privilege such an owner and grants give the current user';

COMMENT ON FUNCTION streamforge.add_partition(text, text) IS
    'add a partition to a running pipeline; it starts idle (admin)';
COMMENT ON FUNCTION streamforge.add_window(text, streamforge.window_def) IS
    'add a window to a running pipeline; it sees later events only (admin)';
COMMENT ON FUNCTION streamforge.drop_window(text, text) IS
    'drop a window of a running pipeline, retracting its visible rows (admin)';
COMMENT ON FUNCTION streamforge.set_lateness(text, bigint) IS
    'change the allowed lateness of a running pipeline (admin)';
COMMENT ON FUNCTION streamforge.live_avg(text) IS
    'live() with avg = sum / count as numeric';
COMMENT ON FUNCTION streamforge.visible_avg(text) IS
    'visible() with avg = sum / count as numeric';

COMMENT ON VIEW streamforge.pipelines IS
    'the pipelines the current user may use, with its privilege and the grants';
COMMENT ON VIEW streamforge.pipeline_info IS
    'the pipelines the current user may read: definition, outputs, watermark, idle partitions, counters';

COMMENT ON TABLE streamforge.pipeline IS
    'storage: one row per pipeline (definition, snapshot, privileges); internal';
COMMENT ON TABLE streamforge.journal IS
    'storage: the write calls since a pipeline''s snapshot; internal';
COMMENT ON TABLE streamforge.output_config IS
    'which outputs each pipeline has (configure_outputs)';
COMMENT ON TABLE streamforge.changelog IS
    'output: every change of the pipelines with a changelog, in seq order';
COMMENT ON TABLE streamforge.results IS
    'output: the changelog applied, finalized rows included';
COMMENT ON TABLE streamforge.late_output IS
    'output: every late event of the pipelines with a late output';

COMMENT ON FUNCTION streamforge_internal.output_config_changed() IS
    'internal: trigger invalidating the cached output configuration';
COMMENT ON FUNCTION streamforge_internal.configure_outputs_internal(text,
    boolean, boolean, boolean, boolean) IS
    'internal: body of configure_outputs(), run as the extension''s owner';
COMMENT ON FUNCTION streamforge_internal.resync_outputs_internal(text) IS
    'internal: body of resync_outputs(), run as the extension''s owner';
