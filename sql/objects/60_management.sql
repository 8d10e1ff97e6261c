-- streamforge objects: managing pipelines (docs/management.md).
--
-- Definition changes of a running pipeline; averages next to live() and
-- visible(); names for grant and revoke that work unqualified.  The view of
-- every pipeline the caller may read is in 85_metrics.sql.

-- ----------------------------------------------------------------
-- Definition changes
-- ----------------------------------------------------------------

-- Each needs the admin privilege, runs in the caller's transaction, and
-- returns the changes it caused (which the outputs receive as well).
CREATE OR REPLACE FUNCTION streamforge.add_partition(pipeline text, partition text)
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_add_partition'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION streamforge.add_window(pipeline text,
    definition streamforge.window_def)
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_add_window'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION streamforge.drop_window(pipeline text, window_name text)
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_drop_window'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION streamforge.set_lateness(pipeline text, lateness bigint)
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_set_lateness'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- NULL retention keeps everything.  Not STRICT: NULL is a value here.
CREATE OR REPLACE FUNCTION streamforge.set_retention(pipeline text, retention bigint)
RETURNS SETOF streamforge.change
AS 'MODULE_PATHNAME', 'sf_set_retention'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- ----------------------------------------------------------------
-- Names that work unqualified (GRANT and REVOKE are reserved words)
-- ----------------------------------------------------------------
CREATE OR REPLACE FUNCTION streamforge.grant_privilege(pipeline text, role name,
    privilege text)
RETURNS void
AS 'MODULE_PATHNAME', 'sf_grant'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION streamforge.revoke_privilege(pipeline text, role name,
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
CREATE OR REPLACE FUNCTION streamforge.live_avg(pipeline text)
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

CREATE OR REPLACE FUNCTION streamforge.visible_avg(pipeline text)
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

-- The view of every pipeline, pipeline_info, is in 85_metrics.sql:
-- it reads the retention column, which 70_retention.sql adds.
