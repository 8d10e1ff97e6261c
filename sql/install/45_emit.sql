-- streamforge install script: emit modes, final rows, output epochs and
-- notifications without pipeline names (0.3.0, issue 25).
--
-- docs/semantics.md (Emit modes) and docs/outputs.md (Epochs, Notifications)
-- describe them.  Every object here is new in 0.3.0, so the 0.2.0 -> 0.3.0
-- update includes this file whole; the ALTER TABLEs fill the new columns of
-- existing rows with their defaults (every existing pipeline is in 'update'
-- mode, every existing output in epoch 1).

-- ----------------------------------------------------------------
-- Emit modes
-- ----------------------------------------------------------------

-- A pipeline's emit mode: NULL for 'update' (the default, so that the row
-- of a pipeline that does not use emit modes is that of 0.2.0), else
-- 'update+final' or 'final' (src/persist/emit_store.c).
ALTER TABLE streamforge.pipeline ADD COLUMN emit text COLLATE "C"
    CONSTRAINT pipeline_emit_check
    CHECK (emit OPERATOR(pg_catalog.=) ANY
           (ARRAY['update+final'::pg_catalog.text, 'final'::pg_catalog.text]));

-- create_pipeline gains emit (after time_unit, so that every call of 0.2.0
-- means what it meant)
DROP FUNCTION streamforge.create_pipeline(text, text[],
    streamforge.window_def[], bigint, bigint, interval);
CREATE FUNCTION streamforge.create_pipeline(name text, partitions text[],
    windows streamforge.window_def[], lateness bigint DEFAULT 0,
    retention bigint DEFAULT NULL, time_unit interval DEFAULT NULL,
    emit text DEFAULT 'update')
RETURNS void
AS 'MODULE_PATHNAME', 'sf_create_pipeline'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION streamforge.create_pipeline(text, text[],
    streamforge.window_def[], bigint, bigint, interval, text) IS
'create a pipeline with its partitions, windows and allowed lateness';

-- Change the emit mode; returns what the change emits (switching from
-- 'final' upserts the rows not reported yet).  Admin.
CREATE FUNCTION streamforge.set_emit(pipeline text, emit text)
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_set_emit'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION streamforge.set_emit(text, text) IS
'change the pipeline''s emit mode (update, update+final, final); returns the changes it causes (admin)';

CREATE FUNCTION streamforge.emit_mode(pipeline text)
RETURNS text
AS 'MODULE_PATHNAME', 'sf_emit_mode'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION streamforge.emit_mode(text) IS
'the pipeline''s emit mode: update, update+final or final (read)';

-- The changelog carries final changes, and results know which rows are
-- final.  results_open finds the rows 'update' mode has to mark final
-- after a call that finalized buckets (src/persist/sink.c).
ALTER TABLE streamforge.changelog DROP CONSTRAINT changelog_op_check;
ALTER TABLE streamforge.changelog ADD CONSTRAINT changelog_op_check
    CHECK (op OPERATOR(pg_catalog.=) ANY
           (ARRAY['retract'::pg_catalog.text, 'upsert'::pg_catalog.text,
                  'final'::pg_catalog.text]));

ALTER TABLE streamforge.results ADD COLUMN final boolean NOT NULL DEFAULT false;

CREATE INDEX results_open ON streamforge.results (pipeline, window_end)
    WHERE NOT final;

-- ----------------------------------------------------------------
-- Epochs
-- ----------------------------------------------------------------

-- The outputs' epoch: a new one is taken by resync_outputs (so by
-- restore), which may rewind the changelog's seq numbers, and when a
-- pipeline's outputs are turned on (again: what happened while they were
-- off is not in them).  It is carried by every changelog and results row
-- written and by every notification, so that a consumer that sees an
-- epoch other than its own knows to rebuild (docs/outputs.md, Epochs).
-- Epochs come from one sequence, so a pipeline's epochs only grow and
-- never repeat; 1 is the epoch of the outputs of 0.2.0.
CREATE SEQUENCE streamforge.output_epoch_seq START WITH 2;
SELECT pg_catalog.pg_extension_config_dump('streamforge.output_epoch_seq', '');
REVOKE ALL ON SEQUENCE streamforge.output_epoch_seq FROM PUBLIC;

ALTER TABLE streamforge.output_config ADD COLUMN epoch bigint NOT NULL DEFAULT 1;
ALTER TABLE streamforge.changelog ADD COLUMN epoch bigint NOT NULL DEFAULT 1;
ALTER TABLE streamforge.results ADD COLUMN epoch bigint NOT NULL DEFAULT 1;

CREATE FUNCTION streamforge_internal.output_config_epoch()
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

CREATE TRIGGER output_config_epoch
    BEFORE INSERT ON streamforge.output_config
    FOR EACH ROW EXECUTE FUNCTION streamforge_internal.output_config_epoch();

-- The results rows configure_outputs copies from visible() when it turns
-- results on are written in the outputs' epoch too (it copies them before
-- it writes the configuration row that has the epoch)
CREATE FUNCTION streamforge_internal.output_config_results_epoch()
RETURNS trigger
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NEW.results AND (TG_OP OPERATOR(pg_catalog.=) 'INSERT' OR NOT OLD.results) THEN
        UPDATE streamforge.results AS r SET epoch = NEW.epoch
         WHERE r.pipeline OPERATOR(pg_catalog.=) NEW.pipeline;
    END IF;
    RETURN NULL;
END
$$;

REVOKE ALL ON FUNCTION streamforge_internal.output_config_results_epoch() FROM PUBLIC;

CREATE TRIGGER output_config_results_epoch
    AFTER INSERT OR UPDATE OF results ON streamforge.output_config
    FOR EACH ROW EXECUTE FUNCTION streamforge_internal.output_config_results_epoch();

-- The notification payload (src/persist/notify.c), for resync_outputs
CREATE FUNCTION streamforge_internal.notify_changes(pipeline text)
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
CREATE FUNCTION streamforge.notify_channel(pipeline text,
    OUT channel text, OUT pipeline_id bigint)
AS 'MODULE_PATHNAME', 'sf_notify_channel'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION streamforge.notify_channel(text) IS
'the channel of the pipeline''s notifications and the id their payloads name it by (read)';
