-- streamforge objects: the metrics view (0.3.0, issue 26;
-- docs/monitoring.md).

-- When the pipeline's snapshot was last written (a compaction, a restore
-- or a definition change), set by a trigger that only the statements that
-- write snapshot_version fire: the per-transaction version bump does not.

CREATE OR REPLACE FUNCTION streamforge_internal.pipeline_compacted()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    NEW.compacted_at := pg_catalog.transaction_timestamp();
    RETURN NEW;
END
$$;
REVOKE ALL ON FUNCTION streamforge_internal.pipeline_compacted() FROM PUBLIC;

CREATE OR REPLACE TRIGGER pipeline_compacted
    BEFORE UPDATE OF snapshot_version ON streamforge.pipeline
    FOR EACH ROW EXECUTE FUNCTION streamforge_internal.pipeline_compacted();

-- One row per pipeline the current user may read: its definition (windows
-- in readable form, in name order), outputs, the counters of stats(), the
-- watermark and the idle partitions.  The view runs as its owner (the
-- extension's owner), which may read the storage tables; the OFFSET 0
-- fence makes the privilege filter run before stats(), watermark() and
-- partitions() are called, which run as the current user and would refuse
-- a pipeline it may not read.  Reading a row loads the pipeline's state
-- into the backend's cache, like stats().
-- 0.3.0: the defining query of an aggregate (issue 29,
-- 80_pipeline_info.sql), and (issue 26, docs/progress.md) which partitions
-- hold the watermark, the largest lag behind the fastest partition, the
-- latest delivery and report, after the columns of 0.2.0's view (which the
-- update replaces: a view can gain columns only at its end).  0.4.0
-- (issue 41): the definition document, then the options of 0.3.0 it
-- lacked (emit, out_of_orderness, idle_timeout, measures, aggregates).
CREATE OR REPLACE VIEW streamforge.pipeline_info WITH (security_barrier) AS
SELECT v.name, v.owner, v.privilege, v.partitions,
       ARRAY(SELECT w.name OPERATOR(pg_catalog.||) ': ' OPERATOR(pg_catalog.||)
                    w.kind OPERATOR(pg_catalog.||) '(' OPERATOR(pg_catalog.||)
                    pg_catalog.array_to_string(streamforge_internal.window_params(
                        w.kind, w.size, w.step, w.gap), ', ')
                    OPERATOR(pg_catalog.||) ')'
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
       streamforge_internal.pipeline_query(v.name) AS query,
       g.holding_watermark, g.lag, g.last_delivery, g.last_report,
       d.definition,
-- @options pipeline_info begin (scripts/options.pl: a column per option since 0.3.0, from src/codec/options.def)
       COALESCE(d.definition OPERATOR(pg_catalog.->>) 'emit', 'update') AS emit,
       (d.definition OPERATOR(pg_catalog.->>) 'out_of_orderness')::pg_catalog.int8 AS out_of_orderness,
       (d.definition OPERATOR(pg_catalog.->>) 'idle_timeout')::pg_catalog.interval AS idle_timeout,
       CASE WHEN d.definition OPERATOR(pg_catalog.?) 'measures'
            THEN ARRAY(SELECT pg_catalog.jsonb_array_elements_text(
                                  d.definition OPERATOR(pg_catalog.->) 'measures'))
       END AS measures,
       CASE WHEN d.definition OPERATOR(pg_catalog.?) 'aggregates'
            THEN ARRAY(SELECT pg_catalog.jsonb_array_elements_text(
                                  d.definition OPERATOR(pg_catalog.->) 'aggregates'))
       END AS aggregates,
       COALESCE(d.definition OPERATOR(pg_catalog.->>) 'writers', 'serial') AS writers
-- @options end
  FROM (SELECT p.name, p.owner, a.privilege,
               ARRAY(SELECT x.e FROM pg_catalog.jsonb_array_elements_text(p.definition OPERATOR(pg_catalog.->) 'partitions')
                             WITH ORDINALITY AS x(e, i) ORDER BY x.i) AS partitions,
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
        OFFSET 0) AS v
  LEFT JOIN streamforge.output_config AS o
         ON o.pipeline OPERATOR(pg_catalog.=) v.name
 CROSS JOIN LATERAL streamforge.stats(v.name) AS s
 -- 0.3.0 (issue 26, docs/progress.md): who holds the watermark, the largest
 -- lag behind the fastest partition, the latest delivery and report
 CROSS JOIN LATERAL (
       SELECT pg_catalog.array_agg(t.partition ORDER BY t.partition)
                  FILTER (WHERE t.holds_watermark) AS holding_watermark,
              pg_catalog.max(t.lag) AS lag,
              pg_catalog.max(t.last_delivery) AS last_delivery,
              pg_catalog.max(t.last_report) AS last_report
         FROM streamforge.partition_progress(v.name) AS t) AS g
 -- 0.4.0 (issue 41, docs/management.md): the definition as one document
 -- (src/codec/options.def), and the options 0.3.0 added, read from it
 CROSS JOIN LATERAL (SELECT streamforge.definition(v.name) AS definition) AS d;

REVOKE ALL ON streamforge.pipeline_info FROM PUBLIC;
GRANT SELECT ON streamforge.pipeline_info TO PUBLIC;

COMMENT ON VIEW streamforge.pipeline_info IS
    'the pipelines the current user may read: definition, outputs, watermark, idle partitions, counters';


CREATE OR REPLACE FUNCTION streamforge_internal.cache_loads(pipeline text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sf_cache_loads'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
-- (executed as the role that reads the view; it reveals only this
-- backend's own count)
COMMENT ON FUNCTION streamforge_internal.cache_loads(text) IS
    'how often this backend built the pipeline from its tables';

-- (The metrics view is in 87_metrics_view.sql: 0.4.0 added a column.)


COMMENT ON TABLE streamforge.partition_activity IS
    'when each partition last received a delivery and a report (transaction times, to the second)';

-- Compaction off the write path (admin): for pg_cron, so that a cold load
-- stays short without a writer paying for the snapshot.  With
-- min_journal_bytes negative (the default) it compacts when the estimated
-- cold load exceeds streamforge.compact_target_load_ms (src/persist/
-- compact.c); with 0, always; else only a journal at least that large.
-- (The default is written as a quoted literal: the parser folds -1 into a
-- constant anyway, but test/run.d/sql-qualified.sh reads a bare "-" as an
-- operator.)
CREATE OR REPLACE FUNCTION streamforge.compact(pipeline text,
    min_journal_bytes bigint DEFAULT '-1'::pg_catalog.int8)
RETURNS boolean
AS 'MODULE_PATHNAME', 'sf_compact'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge.compact(text, bigint) IS
    'stores the state as a new snapshot and empties the journal: by default when the estimated cold load exceeds streamforge.compact_target_load_ms, with min_journal_bytes >= 0 when the journal holds at least that; returns whether it did';
