-- streamforge install script, part 7: retention (0.2.0, issue 13; docs/semantics.md
-- "Retention", docs/retention.md).
--
-- A pipeline's retention, NULL (the default) keeping everything.  Added with
-- ALTER TABLE, as the update from 0.1.0 adds it, so that a fresh install
-- and an updated one have their columns in the same order.  The functions
-- that take and report it (create_pipeline, stats) are in
-- 30_functions.sql.

ALTER TABLE streamforge.pipeline ADD COLUMN retention bigint;
ALTER TABLE streamforge.pipeline
    ADD CONSTRAINT pipeline_retention_check CHECK (retention OPERATOR(pg_catalog.>=) 0);
