-- streamforge objects: emit modes, final rows, output epochs and
-- notifications without pipeline names (0.3.0, issue 25).
--
-- docs/semantics.md (Emit modes) and docs/outputs.md (Epochs, Notifications)
-- describe them.  (The columns, their defaults and the sequence are in
-- sql/schema/20_tables.sql: every pipeline of 0.2.0 is in 'update' mode,
-- every output of 0.2.0 in epoch 1.)

-- ----------------------------------------------------------------
-- Emit modes
-- ----------------------------------------------------------------

-- (The emit mode is a member of the pipeline's definition document,
-- streamforge.pipeline.definition in sql/schema/20_tables.sql;
-- create_pipeline's emit argument in 30_functions.sql.)

-- Change the emit mode; returns what the change emits (switching from
-- 'final' upserts the rows not reported yet).  Admin.
CREATE OR REPLACE FUNCTION streamforge.set_emit(pipeline text, emit text)
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_set_emit'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION streamforge.set_emit(text, text) IS
'change the pipeline''s emit mode (update, update+final, final); returns the changes it causes (admin)';

CREATE OR REPLACE FUNCTION streamforge.emit_mode(pipeline text)
RETURNS text
AS 'MODULE_PATHNAME', 'sf_emit_mode'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION streamforge.emit_mode(text) IS
'the pipeline''s emit mode: update, update+final or final (read)';

-- (The changelog carries final changes, and results know which rows are
-- final: changelog_op_check, results.final and the index results_open are
-- in sql/schema/20_tables.sql.)

-- ----------------------------------------------------------------
-- Epochs
-- ----------------------------------------------------------------

-- (The outputs' epoch: output_epoch_seq and the epoch columns are in
-- sql/schema/20_tables.sql.)

CREATE OR REPLACE FUNCTION streamforge_internal.output_config_epoch()
RETURNS trigger
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    NEW.epoch := pg_catalog.nextval('streamforge.output_epoch_seq'::pg_catalog.regclass);
    RETURN NEW;
END
$$;

REVOKE ALL ON FUNCTION streamforge_internal.output_config_epoch() FROM PUBLIC;

CREATE OR REPLACE TRIGGER output_config_epoch
    BEFORE INSERT ON streamforge.output_config
    FOR EACH ROW EXECUTE FUNCTION streamforge_internal.output_config_epoch();

-- The results rows configure_outputs copies from visible() when it turns
-- results on are written in the outputs' epoch too (it copies them before
-- it writes the configuration row that has the epoch)
CREATE OR REPLACE FUNCTION streamforge_internal.output_config_results_epoch()
RETURNS trigger
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rid bigint;
BEGIN
    IF NEW.results AND (TG_OP OPERATOR(pg_catalog.=) 'INSERT' OR NOT OLD.results) THEN
        UPDATE streamforge.results AS r SET epoch = NEW.epoch
         WHERE r.pipeline OPERATOR(pg_catalog.=) NEW.pipeline;
        -- (0.4.0) an aggregate's table (66_aggregates_views.sql)
        SELECT g.results_id INTO rid FROM streamforge.aggregate AS g
         WHERE g.name OPERATOR(pg_catalog.=) NEW.pipeline;
        IF rid IS NOT NULL THEN
            EXECUTE format('UPDATE %s AS r SET epoch = $1',
                           streamforge_internal.aggregate_results_table(rid)) USING NEW.epoch;
        END IF;
    END IF;
    RETURN NULL;
END
$$;

REVOKE ALL ON FUNCTION streamforge_internal.output_config_results_epoch() FROM PUBLIC;

CREATE OR REPLACE TRIGGER output_config_results_epoch
    AFTER INSERT OR UPDATE OF results ON streamforge.output_config
    FOR EACH ROW EXECUTE FUNCTION streamforge_internal.output_config_results_epoch();

-- The notification payload (src/persist/notify.c), for resync_outputs
CREATE OR REPLACE FUNCTION streamforge_internal.notify_changes(pipeline text)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    id bigint;
    epoch bigint;
    st record;
    payload text;
BEGIN
    SELECT p.id INTO id FROM streamforge.pipeline AS p
     WHERE p.name OPERATOR(pg_catalog.=) notify_changes.pipeline;
    SELECT c.epoch INTO epoch FROM streamforge.output_config AS c
     WHERE c.pipeline OPERATOR(pg_catalog.=) notify_changes.pipeline;
    st := streamforge.stats(pipeline);
    payload := pg_catalog.format(
        '{"pipeline_id": %s, "epoch": %s, "seq": %s, "late_seq": %s}',
        id, epoch, st.changes_emitted, st.late_events);
    PERFORM pg_catalog.pg_notify('streamforge_changes', payload);
    PERFORM pg_catalog.pg_notify('streamforge_changes_' OPERATOR(pg_catalog.||) id, payload);
END
$$;

REVOKE ALL ON FUNCTION streamforge_internal.notify_changes(text) FROM PUBLIC;

-- ----------------------------------------------------------------
-- Notifications without names
-- ----------------------------------------------------------------

-- The channel of a pipeline's own notifications and its id (the
-- payloads name pipelines by id); needs the read privilege, so a role
-- that may not read a pipeline cannot tell which id is whose.
CREATE OR REPLACE FUNCTION streamforge.notify_channel(pipeline text,
    OUT channel text, OUT pipeline_id bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'sf_notify_channel'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION streamforge.notify_channel(text) IS
'the channel of the pipeline''s notifications and the id their payloads name it by (read)';

-- ----------------------------------------------------------------
-- Backfill (issue 25 item 7)
-- ----------------------------------------------------------------

-- Every finalized row the pipeline's remembered events still give
-- (src/engine/final_rows.c, sf_derive_all_final_rows).  Internal.
CREATE OR REPLACE FUNCTION streamforge_internal.final_rows_all(pipeline text)
RETURNS SETOF streamforge.result
AS 'MODULE_PATHNAME', 'sf_final_rows_all'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION streamforge_internal.final_rows_all(text) FROM PUBLIC;

-- configure_outputs gains backfill: with results on, the results table
-- also gets the rows the pipeline finalized before, derived from its
-- remembered events (final, seq NULL), besides the visible() rows the
-- configuration copies.  Run as the extension's owner by
-- configure_outputs (src/api/outputs.c) once it checked admin.
CREATE OR REPLACE FUNCTION streamforge_internal.configure_outputs_backfill(pipeline text,
    changelog boolean, results boolean, late boolean, notify boolean,
    results_retention boolean, backfill boolean)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ep bigint;
    typed boolean;
BEGIN
    IF backfill IS NULL THEN
        RAISE EXCEPTION 'output switches must not be null' USING ERRCODE = '22004';
    END IF;
    PERFORM streamforge_internal.configure_outputs_internal(pipeline, changelog,
        results, late, notify, results_retention);
    -- (0.4.0) an aggregate's rows, here in streamforge.results' shape
    -- until the end (66_aggregates_results.sql)
    typed := streamforge_internal.aggregate_results_unpack(configure_outputs_backfill.pipeline);
    IF backfill AND results THEN
        SELECT c.epoch INTO ep FROM streamforge.output_config AS c
         WHERE c.pipeline OPERATOR(pg_catalog.=) configure_outputs_backfill.pipeline;
        INSERT INTO streamforge.results (pipeline, window_name, key,
                window_start, window_end, count, sum, min, max, seq, final, epoch)
        SELECT configure_outputs_backfill.pipeline, f.window_name, f.key,
               f.window_start, f.window_end, f.count, f.sum, f.min, f.max, NULL,
               true, ep
          FROM streamforge_internal.final_rows_all(configure_outputs_backfill.pipeline) AS f
         WHERE NOT EXISTS (
                SELECT 1 FROM streamforge.results AS r
                 WHERE r.pipeline OPERATOR(pg_catalog.=) configure_outputs_backfill.pipeline
                   AND (r.window_name, r.key, r.window_start, r.window_end)
                       OPERATOR(pg_catalog.=) (f.window_name, f.key, f.window_start, f.window_end));
        IF results_retention THEN
            PERFORM streamforge_internal.trim_results_internal(configure_outputs_backfill.pipeline);
        END IF;
    END IF;
    IF results THEN
        PERFORM streamforge_internal.outputs_fill_ts(configure_outputs_backfill.pipeline);
        -- (issue 27) a measures pipeline's aggregates, 86_outputs_aggregates.sql
        PERFORM streamforge_internal.outputs_fill_aggregates(configure_outputs_backfill.pipeline);
    END IF;
    IF typed THEN
        PERFORM streamforge_internal.aggregate_results_pack(configure_outputs_backfill.pipeline);
    END IF;
END
$$;
REVOKE ALL ON FUNCTION streamforge_internal.configure_outputs_backfill(text,
    boolean, boolean, boolean, boolean, boolean, boolean) FROM PUBLIC;

-- (configure_outputs' backfill argument: 40_outputs.sql.)
