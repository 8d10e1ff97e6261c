-- streamforge schema: the schema of internal helpers.
--
-- Functions nobody calls directly (trigger functions, and the bodies that
-- the outputs functions run as the extension's owner: src/api/privileges.c looks them
-- up here) live in their own schema, so that \df streamforge.* shows the
-- API.  Everyone may look names up in it (the helpers that public
-- functions and attached tables' triggers call run as the caller), but the
-- bodies that run as the extension's owner are closed to PUBLIC one by one
-- (REVOKE ALL ON FUNCTION ... FROM PUBLIC where they are created).
CREATE SCHEMA streamforge_internal;
REVOKE ALL ON SCHEMA streamforge_internal FROM PUBLIC;
GRANT USAGE ON SCHEMA streamforge_internal TO PUBLIC;
COMMENT ON SCHEMA streamforge_internal IS
    'streamforge: internal helpers, not part of the API';

-- The tables of the aggregates' durable results (0.4.0, issue 42 item 2;
-- sql/objects/66_aggregates_views.sql): one per aggregate made by
-- create_aggregate, streamforge_results.a<results_id>, made and owned by
-- the extension's owner and read through the aggregate's views only.
-- Nobody else may look a name up in it.  The tables are not members of
-- the extension, so that pg_dump writes them and their rows.
CREATE SCHEMA streamforge_results;
REVOKE ALL ON SCHEMA streamforge_results FROM PUBLIC;
COMMENT ON SCHEMA streamforge_results IS
    'streamforge: the tables of the aggregates'' results, read through their views';
