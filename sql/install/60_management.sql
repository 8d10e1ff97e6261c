-- streamforge install script, part 6: managing pipelines (docs/management.md).
--
-- Internal helpers move to their own schema, so that \df streamforge.*
-- shows the API; definition changes of a running pipeline; a view of every
-- pipeline the caller may read; averages next to live() and visible();
-- names for grant and revoke that work unqualified.

-- ----------------------------------------------------------------
-- Internal helpers
-- ----------------------------------------------------------------

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
