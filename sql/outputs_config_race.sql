-- The outputs' configuration cache (src/persist/sink.c) must not keep a copy that
-- an invalidation arriving during its load made stale (issue 18).  To put
-- one there deterministically, the load's own scan of
-- streamforge.output_config runs a row security policy whose function
-- changes the configuration, once: the load has taken its snapshot already,
-- so it reads the old configuration, and the next call must read it again.
-- Row security binds the tables' owner only if it is no superuser, so the
-- extension's tables are lent to such a role for the test, in a database
-- of its own (other tests list the tables' catalog rows and policies).
SELECT current_database() AS regress_db \gset
CREATE DATABASE sf_outputs_config_race;
\c sf_outputs_config_race
CREATE EXTENSION streamforge;
CREATE ROLE sf_race_owner;
GRANT USAGE ON SCHEMA streamforge TO sf_race_owner;
SELECT streamforge.create_pipeline('race', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
SELECT streamforge.configure_outputs('race', notify => false);
CREATE FUNCTION public.sf_race_hook() RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('sf_race.armed', true) = 'on' THEN
        PERFORM set_config('sf_race.armed', 'off', true);
        UPDATE streamforge.output_config SET changelog = false
         WHERE pipeline OPERATOR(pg_catalog.=) 'race';
    END IF;
    RETURN true;
END $$;
ALTER TABLE streamforge.pipeline OWNER TO sf_race_owner;
ALTER TABLE streamforge.journal OWNER TO sf_race_owner;
ALTER TABLE streamforge.partition_activity OWNER TO sf_race_owner;
ALTER TABLE streamforge.output_config OWNER TO sf_race_owner;
ALTER TABLE streamforge.changelog OWNER TO sf_race_owner;
ALTER TABLE streamforge.results OWNER TO sf_race_owner;
ALTER TABLE streamforge.late_output OWNER TO sf_race_owner;
ALTER TABLE streamforge.aggregate OWNER TO sf_race_owner;
ALTER TABLE streamforge.top_changelog OWNER TO sf_race_owner;
CREATE POLICY race ON streamforge.output_config USING (public.sf_race_hook());
ALTER TABLE streamforge.output_config FORCE ROW LEVEL SECURITY;

BEGIN;
SELECT set_config('sf_race.armed', 'on', true) AS armed;
-- the first change loads the configuration (changelog on, as of the load's
-- snapshot) while the hook turns the changelog off
SELECT count(*) FROM streamforge.ingest('race', 'p', 0, 'e0', 'k', 1, 1);
SELECT seq, op, window_start FROM streamforge.advance('race', 'p', 20);
SELECT count(*) AS changelog_rows FROM streamforge.changelog WHERE pipeline = 'race';
-- the next change must follow the configuration as it is now: no changelog
SELECT count(*) FROM streamforge.ingest('race', 'p', 1, 'e1', 'k', 25, 1);
SELECT seq, op, window_start FROM streamforge.advance('race', 'p', 40);
SELECT count(*) AS changelog_rows FROM streamforge.changelog WHERE pipeline = 'race';
COMMIT;
SELECT changelog FROM streamforge.output_config WHERE pipeline = 'race';

\c :regress_db
DROP DATABASE sf_outputs_config_race;
DROP ROLE sf_race_owner;
