-- streamforge install script: the emit mode's column of streamforge.pipeline
-- (0.3.0, issue 25; src/persist/emit_store.c).  After time_unit and
-- retention, where ALTER TABLE puts it on the table of an update.
--
-- NULL for 'update' (the default, so that the row of a pipeline that does
-- not use emit modes is that of 0.2.0), else 'update+final' or 'final'.
ALTER TABLE streamforge.pipeline ADD COLUMN emit text COLLATE "C"
    CONSTRAINT pipeline_emit_check
    CHECK (emit OPERATOR(pg_catalog.=) ANY
           (ARRAY['update+final'::pg_catalog.text, 'final'::pg_catalog.text]));
