-- streamforge objects: the times of a pipeline with a time unit
-- as intervals and timestamptz (0.3.0, issue 25 item 5; docs/outputs.md).
-- After 70_retention.sql, whose column it shows.

-- The times of the pipelines with a time unit, as intervals and
-- timestamptz: window sizes, steps and gaps, lateness, retention, the
-- watermark.  A view of its own (pipeline_info shows them in units).
-- Runs as its owner, filtered like pipeline_info.
CREATE OR REPLACE VIEW streamforge.pipeline_info_ts WITH (security_barrier) AS
SELECT v.name, v.time_unit,
       ARRAY(SELECT w.name OPERATOR(pg_catalog.||) ': ' OPERATOR(pg_catalog.||)
                    w.kind OPERATOR(pg_catalog.||) '(' OPERATOR(pg_catalog.||)
                    pg_catalog.array_to_string(ARRAY(
                        SELECT (u.x OPERATOR(pg_catalog.*) v.time_unit)::pg_catalog.text
                          FROM pg_catalog.unnest(streamforge_internal.window_params(
                                   w.kind, w.size, w.step, w.gap)) WITH ORDINALITY AS u(x, o)
                         ORDER BY u.o), ', ')
                    OPERATOR(pg_catalog.||) ')'
               FROM pg_catalog.unnest(v.windows) WITH ORDINALITY
                    AS w(name, kind, size, step, gap, i)
              ORDER BY w.i) AS windows,
       v.lateness OPERATOR(pg_catalog.*) v.time_unit AS lateness,
       v.retention OPERATOR(pg_catalog.*) v.time_unit AS retention,
       streamforge.watermark_ts(v.name) AS watermark
  FROM (SELECT p.name,
               ARRAY(SELECT pg_catalog.jsonb_populate_record(NULL::streamforge.window_def, x.e)
                        FROM pg_catalog.jsonb_array_elements(p.definition OPERATOR(pg_catalog.->) 'windows')
                             WITH ORDINALITY AS x(e, i)
                       ORDER BY x.i) AS windows,
               (p.definition OPERATOR(pg_catalog.->>) 'lateness')::pg_catalog.int8 AS lateness,
               (p.definition OPERATOR(pg_catalog.->>) 'retention')::pg_catalog.int8 AS retention,
               (p.definition OPERATOR(pg_catalog.->>) 'time_unit')::pg_catalog.interval AS time_unit
          FROM streamforge.pipeline AS p,
               LATERAL (SELECT streamforge.effective_privilege(p.owner,
                               p.readers, p.ingesters, p.admins)
                               AS privilege) AS a
         WHERE a.privilege IS NOT NULL
           AND p.definition OPERATOR(pg_catalog.?) 'time_unit'
        OFFSET 0) AS v;

REVOKE ALL ON streamforge.pipeline_info_ts FROM PUBLIC;
GRANT SELECT ON streamforge.pipeline_info_ts TO PUBLIC;
COMMENT ON VIEW streamforge.pipeline_info_ts IS
    'the pipelines with a time unit the current user may read: window sizes, lateness and retention as intervals, the watermark as timestamptz';
