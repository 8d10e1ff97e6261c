-- streamforge install script, part 8: the view of every pipeline
-- (docs/management.md).  After 70_retention.sql, whose column it shows.

-- ----------------------------------------------------------------
-- The pipelines, in one view
-- ----------------------------------------------------------------

-- The defining query of a pipeline made by create_aggregate (NULL for
-- others), for pipeline_info; plpgsql, so that the update from 0.2.0 can create it
-- before streamforge.aggregates (65_aggregates.sql, issue 29) exists.
CREATE OR REPLACE FUNCTION streamforge_internal.pipeline_query(pipeline text)
RETURNS text
LANGUAGE plpgsql STABLE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN (SELECT a.query FROM streamforge.aggregates AS a WHERE a.name = pipeline);
END
$$;
COMMENT ON FUNCTION streamforge_internal.pipeline_query(text) IS
    'the query of an aggregate, NULL for another pipeline (internal helper of pipeline_info)';

-- One row per pipeline the current user may read: its definition (windows
-- in readable form, in name order), outputs, the counters of stats(), the
-- watermark and the idle partitions.  The view runs as its owner (the
-- extension's owner), which may read the storage tables; the OFFSET 0
-- fence makes the privilege filter run before stats(), watermark() and
-- partitions() are called, which run as the current user and would refuse
-- a pipeline it may not read.  Reading a row loads the pipeline's state
-- into the backend's cache, like stats().
CREATE OR REPLACE VIEW streamforge.pipeline_info WITH (security_barrier) AS
SELECT v.name, v.owner, v.privilege, v.partitions,
       ARRAY(SELECT w.name OPERATOR(pg_catalog.||) ': ' OPERATOR(pg_catalog.||)
                    w.kind OPERATOR(pg_catalog.||) '(' OPERATOR(pg_catalog.||)
                    CASE WHEN w.kind OPERATOR(pg_catalog.=) 'sliding'
                         THEN w.size::pg_catalog.text OPERATOR(pg_catalog.||)
                              ', ' OPERATOR(pg_catalog.||) w.step::pg_catalog.text
                         WHEN w.kind OPERATOR(pg_catalog.=) 'session'
                         THEN w.gap::pg_catalog.text
                         ELSE w.size::pg_catalog.text
                    END OPERATOR(pg_catalog.||) ')'
               FROM pg_catalog.unnest(v.windows) WITH ORDINALITY
                    AS w(name, kind, size, step, gap, i)
              ORDER BY w.i) AS windows,
       v.lateness, v.retention, v.time_unit,
       COALESCE(o.changelog, false) AS changelog,
       COALESCE(o.results, false) AS results,
       COALESCE(o.late, false) AS late_output,
       COALESCE(o.notify, false) AS notify,
       streamforge.watermark(v.name) AS watermark,
       ARRAY(SELECT t.partition FROM streamforge.partitions(v.name) AS t
              WHERE t.idle ORDER BY t.partition) AS idle_partitions,
       s.deliveries, s.accepted, s.duplicate_ids, s.late_events,
       s.offset_replays, s.changes_emitted, s.live_buckets, s.visible_rows,
       streamforge_internal.pipeline_query(v.name) AS query
  FROM (SELECT p.name, p.owner, a.privilege, p.partitions, p.windows,
               p.lateness, p.retention, p.time_unit
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

COMMENT ON VIEW streamforge.pipeline_info IS
    'the pipelines the current user may read: definition, outputs, watermark, idle partitions, counters';
