-- streamforge objects: the metrics view (0.3.0, issue 26;
-- 0.4.0, issue 39: estimated_load_ms, and the journal columns count the
-- journal's rows, not the background snapshots at negative positions;
-- docs/monitoring.md, docs/persistence.md).

-- The estimated CPU time (ms) a new backend spends loading the pipeline:
-- decoding its latest snapshot and replaying the journal after it
-- (src/persist/compact.c).  Loads the pipeline into this backend's cache.
CREATE OR REPLACE FUNCTION streamforge_internal.estimated_load_ms(pipeline text)
RETURNS double precision
AS 'MODULE_PATHNAME', 'sf_estimated_load_ms'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION streamforge_internal.estimated_load_ms(text) IS
    'the estimated CPU time (ms) of a cold load of the pipeline: snapshot decode and journal replay';

-- One row per pipeline the current role may read, with what an operator
-- graphs.  Like pipeline_info it runs as its owner (the storage tables),
-- and the OFFSET 0 fence filters by privilege before stats() and
-- watermark() run as the current user.  Reading a row loads the pipeline
-- into this backend's cache, like stats().  The watermark lag of a
-- finished pipeline (its watermark the bigint maximum) is -Infinity.
CREATE OR REPLACE VIEW streamforge.metrics WITH (security_barrier) AS
SELECT v.name AS pipeline,
       s.deliveries, s.accepted, s.late_events, s.duplicate_ids AS duplicates,
       s.offset_replays AS replays, s.changes_emitted,
       s.live_buckets, s.visible_rows,
       s.remembered_identities, s.remembered_offsets,
       s.remembered_late_events,
       s.partitions, s.idle_partitions,
       w.watermark,
       CASE WHEN v.time_unit IS NULL OR w.watermark IS NULL THEN NULL
            -- finished (finish(): the watermark is +infinity, issue 45)
            WHEN w.watermark OPERATOR(pg_catalog.=) 9223372036854775807
            THEN '-Infinity'::pg_catalog.float8
            ELSE pg_catalog.date_part('epoch', pg_catalog.now()
                     OPERATOR(pg_catalog.-)
                     streamforge.units_to_time(w.watermark, v.time_unit))
       END AS watermark_lag_seconds,
       j.journal_rows, j.journal_bytes,
       COALESCE(pg_catalog.octet_length(v.snapshot), 0)::pg_catalog.int8 AS snapshot_bytes,
       v.compacted_at AS last_compaction,
       streamforge_internal.cache_loads(v.name) AS cache_loads,
       k.consumers, k.max_change_lag, k.max_late_lag,
       streamforge_internal.estimated_load_ms(v.name) AS estimated_load_ms
  FROM (SELECT p.id, p.name,
               (p.definition OPERATOR(pg_catalog.->>) 'time_unit')::pg_catalog.interval AS time_unit,
               p.snapshot, p.compacted_at
          FROM streamforge.pipeline AS p
         WHERE streamforge.effective_privilege(p.owner, p.readers,
                   p.ingesters, p.admins) IS NOT NULL
        OFFSET 0) AS v
 CROSS JOIN LATERAL streamforge.stats(v.name) AS s
 CROSS JOIN LATERAL (SELECT streamforge.watermark(v.name) AS watermark) AS w
 CROSS JOIN LATERAL (
       SELECT pg_catalog.count(*) AS journal_rows,
              COALESCE(pg_catalog.sum(pg_catalog.octet_length(e.entry)), 0)::pg_catalog.int8
                  AS journal_bytes
         FROM streamforge.journal AS e
        WHERE e.pipeline_id OPERATOR(pg_catalog.=) v.id
          AND e.pos OPERATOR(pg_catalog.>) 0) AS j
 -- the consumer bookmarks (55_consumers.sql): how many, and how far the
 -- slowest is behind, counted as consumer_lag counts (NULL without any)
 CROSS JOIN LATERAL (
       SELECT pg_catalog.count(*) AS consumers,
              pg_catalog.max(GREATEST(l.last_seq OPERATOR(pg_catalog.-) c.seq, 0))
                  AS max_change_lag,
              pg_catalog.max(GREATEST(l.last_late_seq OPERATOR(pg_catalog.-) c.late_seq, 0))
                  AS max_late_lag
         FROM streamforge.consumer AS c
        CROSS JOIN (
              SELECT COALESCE((SELECT pg_catalog.max(x.seq)
                                 FROM streamforge.changelog AS x
                                WHERE x.pipeline OPERATOR(pg_catalog.=) v.name), 0)
                         AS last_seq,
                     COALESCE((SELECT pg_catalog.max(x.late_seq)
                                 FROM streamforge.late_output AS x
                                WHERE x.pipeline OPERATOR(pg_catalog.=) v.name), 0)
                         AS last_late_seq) AS l
        WHERE c.pipeline OPERATOR(pg_catalog.=) v.name) AS k;

REVOKE ALL ON streamforge.metrics FROM PUBLIC;
GRANT SELECT ON streamforge.metrics TO PUBLIC;

COMMENT ON VIEW streamforge.metrics IS
    'per pipeline the current user may read: counters, gauges, journal and snapshot sizes, consumer lag, for monitoring';

