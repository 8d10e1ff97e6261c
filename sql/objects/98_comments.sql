-- streamforge objects: the comment of every function of the schema
-- streamforge, one line of purpose each (issue 45).  They are what \df+
-- shows, and docs/reference.md is generated from them
-- (scripts/reference.sh; test/t/080_docs.pl fails when a function of the
-- schema has no comment or when docs/reference.md differs from what the
-- catalog generates).  The piece comes last, after every function exists.
--
-- Each line names a function, not a signature: every overload of it gets
-- the comment, so a signature that changes keeps its comment.  A name that
-- no longer exists is an error, so that the list cannot rot.  "(admin)",
-- "(ingest)", "(read)": the privilege on the pipeline the call needs.
-- Functions that exist for the extension's own views and jobs say
-- "internal".

DO $$
DECLARE
    c record;
    f pg_catalog.regprocedure;
    n integer;
BEGIN
    FOR c IN SELECT v.name, v.comment FROM (VALUES
        -- aggregates defined by a query
        ('create_aggregate', 'a pipeline, an attachment and the typed views name, name_live, name_late from a GROUP BY query over a table, windowed by tumble, hop or session'),
        ('drop_aggregate', 'drops an aggregate: its views, its attachment and its pipeline (admin)'),
        ('alter_aggregate', 'changes the lateness, emit mode or retention of an aggregate (admin)'),
        ('move_aggregate_results', 'moves the rows of an aggregate restored from a 0.3.0 dump out of streamforge.results into a table of its own, as the update to 0.4.0 does, and returns how many (admin)'),
        ('tumble', 'in the GROUP BY of create_aggregate: fixed windows of size, elsewhere: the start of the window of ts'),
        ('hop', 'in the GROUP BY of create_aggregate: sliding windows of size, one every slide'),
        -- pipelines and windows
        ('create_pipeline', 'creates a pipeline: its partitions, windows and allowed lateness, optionally retention, time unit, emit mode, built-in progress, idle detection, measures and aggregates'),
        ('drop_pipeline', 'drops a pipeline, its state and its outputs (admin)'),
        ('fixed', 'a fixed (tumbling) window of size units: [floor(t/size)*size, +size)'),
        ('sliding', 'a sliding (hopping) window of size units, one starting every step units'),
        ('session', 'a session window: events of a key closer than gap units merge into one session'),
        ('fixed_interval', 'fixed() with an interval as the size (the pipeline needs a time unit)'),
        ('sliding_interval', 'sliding() with intervals as the size and step (the pipeline needs a time unit)'),
        ('session_interval', 'session() with an interval as the gap (the pipeline needs a time unit)'),
        -- getting data in
        ('ingest', 'delivers one event at a source offset, returns the changes it caused (ingest)'),
        ('ingest_count', 'ingest() returning the number of changes instead of the rows, for PL/pgSQL loops and triggers (ingest)'),
        ('ingest_batch', 'delivers events in array order, all or none, returns their changes (ingest)'),
        ('append', 'delivers one event at the partition''s next offset, assigned under the pipeline''s lock (ingest)'),
        ('append_batch', 'delivers events at their partitions'' next offsets, in array order, all or none (ingest)'),
        ('ingest_json', 'delivers a JSON array of deliveries (with source_offset) or events (without), all or none (ingest)'),
        ('ingest_ts', 'ingest() with a timestamptz event time (the pipeline needs a time unit)'),
        ('append_ts', 'append() with a timestamptz event time (the pipeline needs a time unit)'),
        ('attach', 'ingests every row inserted into a table, in the inserting transaction, the arguments are SQL expressions over its columns'),
        ('detach', 'stops ingesting the rows inserted into a table'),
        ('ingest_measures', 'delivers one event of a measures pipeline, one bigint per measure, at a source offset (ingest)'),
        ('ingest_measures_batch', 'delivers events of a measures pipeline in array order, all or none (ingest)'),
        ('append_measures_batch', 'delivers events of a measures pipeline at their partitions'' next offsets, in array order, all or none (ingest)'),
        ('append_measures', 'append() of a measures pipeline: one event, one bigint per measure, at the partition''s next offset (ingest)'),
        ('ingest_measures_count', 'ingest_measures() returning the number of changes instead of the rows, for PL/pgSQL loops and triggers (ingest)'),
        ('ingest_measures_json', 'ingest_json() of a measures pipeline: each element has "measures", an array of one number per measure, instead of "value" (ingest)'),
        ('ingest_measures_ts', 'ingest_measures() with a timestamptz event time (the pipeline needs a time unit)'),
        ('append_measures_ts', 'append_measures() with a timestamptz event time (the pipeline needs a time unit)'),
        -- progress and watermarks
        ('advance', 'reports a partition''s event-time progress (and reactivates an idle one), returns the changes it caused (ingest)'),
        ('advance_ts', 'advance() with a timestamptz progress (the pipeline needs a time unit)'),
        ('mark_idle', 'takes a partition out of the watermark until it reports again (ingest)'),
        ('finish', 'the end of the input: advances every partition to +infinity (the bigint maximum), so that every window is emitted and finalized, returns the changes (ingest)'),
        ('lock_pipelines', 'takes the locks of several pipelines, and of a parallel pipeline''s partitions (NULL: all), in the one lock order (names'' byte order), so that a transaction that writes several never meets 55P03 (ingest)'),
        ('tick', 'marks idle the partitions whose idle_timeout passed, returns the changes (ingest)'),
        ('tick_pipelines', 'tick() of several pipelines in one transaction, every lock taken first in lock_pipelines'' order, one row per pipeline with its number of changes (ingest)'),
        ('set_out_of_orderness', 'sets the built-in progress rule: each accepted event reports event_time - out_of_orderness (NULL: off), an interval or units as bigint (admin)'),
        ('out_of_orderness', 'the built-in progress rule of a pipeline, in its units, NULL if none'),
        ('set_idle_timeout', 'marks a partition idle after idle_timeout without a delivery or a report (NULL: never) (admin)'),
        ('partition_progress', 'per partition: progress, whether it holds the watermark, lag behind the fastest, last delivery and report'),
        ('clock_now', 'the wall clock in us, ms, s or min since the Unix epoch'),
        ('advance_to_now', 'advance() to the clock minus delay: an interval (the pipeline''s time unit), or units of unit, for pipelines text[] every partition of each, every lock taken first (ingest)'),
        -- reading results
        ('live', 'every live bucket, ready or not, in address order (read)'),
        ('visible', 'the emitted rows not yet finalized, in address order (read)'),
        ('live_ts', 'live() with timestamptz window bounds (the pipeline needs a time unit)'),
        ('visible_ts', 'visible() with timestamptz window bounds (the pipeline needs a time unit)'),
        ('results_ts', 'the pipeline''s durable results with timestamptz bounds, of one key and within a time range if given (read)'),
        ('live_avg', 'live() with avg = sum / count as numeric'),
        ('visible_avg', 'visible() with avg = sum / count as numeric'),
        ('live_aggregates', 'live() of a measures pipeline, with its declared aggregates as jsonb'),
        ('visible_aggregates', 'visible() of a measures pipeline, with its declared aggregates as jsonb'),
        ('live_aggregates_ts', 'live_aggregates() with timestamptz window bounds (the pipeline needs a time unit)'),
        ('visible_aggregates_ts', 'visible_aggregates() with timestamptz window bounds (the pipeline needs a time unit)'),
        ('aggregate_columns', 'the declared aggregates of a pipeline in declaration order, with their SQL types'),
        ('late_events', 'the late events, in late_seq order, with the watermark each missed (read)'),
        ('watermark', 'the global watermark, NULL before there is one (read)'),
        ('watermark_ts', 'watermark() as a timestamptz (the pipeline needs a time unit)'),
        ('partitions', 'the partitions in name order: consumed offset (-1: none yet), progress (NULL until reported) and idleness'),
        ('stats', 'counters of a pipeline, and what of its history it remembers and has forgotten (read)'),
        -- time units
        ('time_unit', 'the time unit of a pipeline, NULL if it has none'),
        ('time_to_units', 'a timestamptz as a whole number of units since the Unix epoch (an error if not whole)'),
        ('interval_to_units', 'an interval as a whole number of units (an error if not whole)'),
        ('units_to_time', 'units since the Unix epoch as a timestamptz, in the given unit or the pipeline''s'),
        -- changing a running pipeline
        ('add_partition', 'adds a partition to a running pipeline, it starts idle (admin)'),
        ('add_window', 'adds a window, backfilled from the remembered events, returns the upserts of its ready rows (admin)'),
        ('drop_window', 'drops a window, returns the retractions of its visible rows (admin)'),
        ('set_lateness', 'changes the allowed lateness (an interval, or units as bigint): lowering finalizes, raising rebuilds (admin)'),
        ('set_retention', 'changes the retention (an interval, or units as bigint), NULL: keep everything, forgets at once what the new horizon forgets (admin)'),
        ('set_emit', 'changes the emit mode (update, update+final, final), returns what the change emits (admin)'),
        ('emit_mode', 'the pipeline''s emit mode: update, update+final or final (read)'),
        ('compact', 'stores the state as a new snapshot and empties the journal when the estimated cold load (or the journal) is large enough, returns whether it did (admin)'),
        -- durable outputs and consumers
        ('configure_outputs', 'turns the durable outputs (changelog, results, late output, notifications) on or off, with results_retention and backfill (admin)'),
        ('disable_outputs', 'turns every durable output of the pipeline off (admin)'),
        ('resync_outputs', 'brings the outputs back in line with the state (restore() does it itself) (admin)'),
        ('trim_changelog', 'deletes the changelog rows up to a seq, never past the slowest registered consumer, returns how many (admin)'),
        ('trim_late_output', 'deletes the late output rows up to a late_seq, never past the slowest registered consumer, returns how many (admin)'),
        ('trim_results', 'with results_retention on, deletes the results rows whose window ended at or before the retention horizon, returns how many (admin)'),
        ('register_consumer', 'registers a named consumer bookmark of the pipeline''s outputs, owned by the calling role (read)'),
        ('commit_consumer', 'records the last seq (and late_seq) a consumer processed (the consumer''s role, or admin)'),
        ('drop_consumer', 'drops a consumer bookmark (the consumer''s role, or admin)'),
        ('notify_channel', 'the channel of the pipeline''s notifications and the id their payloads name it by (read)'),
        -- scheduling with pg_cron
        ('schedule_advance', 'a pg_cron job running advance_to_now() for a partition, or for every partition of pipelines (text[]), returns its job id (admin)'),
        ('unschedule_advance', 'removes a scheduled advance of a partition or of pipelines, false if there was none (admin)'),
        ('scheduled_advances', 'the per-partition jobs scheduled by schedule_advance() that the current role can see (scheduled_jobs() lists every kind)'),
        ('schedule_tick', 'a pg_cron job running tick_pipelines() on pipelines, returns its job id (admin)'),
        ('unschedule_tick', 'removes the job schedule_tick() made for these pipelines, false if there was none (admin)'),
        ('scheduled_jobs', 'every streamforge pg_cron job the current role can see: per-partition advances, advance_to_now and tick of pipelines'),
        ('advance_job_name', 'internal: the pg_cron job name of a partition''s scheduled advance'),
        ('require_pg_cron', 'internal: raises 55000 unless pg_cron is installed in this database'),
        -- checkpoints
        ('checkpoint', 'the pipeline''s whole state as canonical checkpoint bytes (read)'),
        ('restore', 'replaces the pipeline''s state with a checkpoint of an equivalent pipeline (admin)'),
        ('inspect_checkpoint', 'validates checkpoint bytes and shows the JSON document inside'),
        -- privileges
        ('grant', 'gives a role read, ingest or admin on a pipeline (admin), unqualified: grant_privilege()'),
        ('revoke', 'lowers a role''s grant on a pipeline to below a privilege (admin), unqualified: revoke_privilege()'),
        ('grant_privilege', 'grant() under a name that works unqualified'),
        ('revoke_privilege', 'revoke() under a name that works unqualified'),
        ('set_owner', 'hands a pipeline to another role, like ALTER TABLE ... OWNER TO (admin)'),
        ('has_pipeline_privilege', 'whether a role has a privilege on a pipeline, like has_table_privilege'),
        ('require_privilege', 'raises 42704 or 42501 unless the current role has the privilege on the pipeline'),
        ('effective_privilege', 'internal: the privilege such an owner and grants give the current role (the row filter of the view pipelines)')
        ) AS v(name, comment)
    LOOP
        n := 0;
        FOR f IN SELECT p.oid FROM pg_catalog.pg_proc AS p
                  WHERE p.pronamespace OPERATOR(pg_catalog.=) 'streamforge'::pg_catalog.regnamespace
                    AND p.proname OPERATOR(pg_catalog.=) c.name
        LOOP
            EXECUTE pg_catalog.format('COMMENT ON FUNCTION %s IS %L', f, c.comment);
            n := n OPERATOR(pg_catalog.+) 1;
        END LOOP;
        IF n OPERATOR(pg_catalog.=) 0 THEN
            RAISE EXCEPTION 'sql/objects/98_comments.sql comments function streamforge.%, which does not exist', c.name;
        END IF;
    END LOOP;
END
$$;
