-- streamforge objects: comments, shown by \df+, \dT+, \dv+.
--
-- Every public function, type and view has one (sql/comments.sql fails for
-- any that has none).  98_comments.sql, run last, sets the
-- comment of every function; docs/reference.md is generated from them.

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
COMMENT ON FUNCTION streamforge.set_retention(text, bigint) IS
    'change the retention of a running pipeline, NULL: keep everything (admin)';
COMMENT ON FUNCTION streamforge.live_avg(text) IS
    'live() with avg = sum / count as numeric';
COMMENT ON FUNCTION streamforge.visible_avg(text) IS
    'visible() with avg = sum / count as numeric';

-- pipeline_info's comment is in 85_metrics.sql.
COMMENT ON VIEW streamforge.pipelines IS
    'the pipelines the current user may use, with its privilege and the grants';

COMMENT ON TABLE streamforge.pipeline IS
    'storage: one row per pipeline (definition, snapshot, privileges); internal';
COMMENT ON TABLE streamforge.journal IS
    'storage: the write calls since a pipeline''s snapshot; internal';
COMMENT ON TABLE streamforge.stored_snapshot IS
    'storage: snapshots a definition change stored beside its pipeline''s row; internal';
COMMENT ON TABLE streamforge.lane IS
    'storage: the lanes (one per partition) of a pipeline with parallel writers; internal';
COMMENT ON TABLE streamforge.lane_journal IS
    'storage: the write calls since a lane''s snapshot; internal';
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
    boolean, boolean, boolean, boolean, boolean) IS
    'internal: body of configure_outputs(), run as the extension''s owner';
COMMENT ON FUNCTION streamforge_internal.resync_outputs_internal(text) IS
    'internal: body of resync_outputs(), run as the extension''s owner';
COMMENT ON FUNCTION streamforge_internal.trim_changelog_internal(text, bigint) IS
    'internal: body of trim_changelog(), run as the extension''s owner';
COMMENT ON FUNCTION streamforge_internal.trim_late_output_internal(text, bigint) IS
    'internal: body of trim_late_output(), run as the extension''s owner';
COMMENT ON FUNCTION streamforge_internal.trim_results_internal(text) IS
    'internal: body of trim_results(), run as the extension''s owner';
COMMENT ON FUNCTION streamforge_internal.retention_horizon_internal(text) IS
    'internal: a pipeline''s retention horizon, NULL when it has none';
