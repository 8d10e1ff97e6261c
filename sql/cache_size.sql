-- The per-backend pipeline cache is bounded by streamforge.cache_size
-- (docs/persistence.md): least recently used pipelines are evicted, and
-- rebuilt from the tables when next used; pipelines the current transaction
-- changed are kept until it ends.  Memory is read from
-- pg_backend_memory_contexts: every cached pipeline has its own context
-- named "streamforge pipeline".
CREATE FUNCTION pg_temp.cached(OUT pipelines bigint, OUT kb bigint)
LANGUAGE sql AS $$
  SELECT count(*), coalesce(sum(total_bytes), 0) / 1024
    FROM pg_backend_memory_contexts WHERE name = 'streamforge pipeline' $$;

-- 400 pipelines with 40 deliveries each, all used by this backend
SET streamforge.cache_size = -1;
SELECT count(*) FROM generate_series(1, 400) AS i,
  LATERAL streamforge.create_pipeline('cache' || i, ARRAY['p'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 20, 5)]);
SELECT count(*) FROM generate_series(1, 400) AS i,
  LATERAL streamforge.ingest_batch('cache' || i,
    (SELECT array_agg(ROW('p', j, 'e' || j, 'k' || (j % 7), j, i)::streamforge.delivery
                      ORDER BY j)
       FROM generate_series(0, 39) AS j));
-- without a limit every pipeline stays: far more than 1 MB
SELECT pipelines, kb > 2048 AS over_2mb FROM pg_temp.cached();

-- a lower limit applies at the next call
SET streamforge.cache_size = '1MB';
SELECT consumed_offset FROM streamforge.partitions('cache1');
SELECT pipelines < 400 AS evicted, kb <= 1024 AS within_1mb FROM pg_temp.cached();

-- reading every pipeline again rebuilds the evicted ones, correctly, and
-- stays within the limit
SELECT count(*) FILTER (WHERE consumed_offset = 39) AS complete
  FROM generate_series(1, 400) AS i, LATERAL streamforge.partitions('cache' || i);
SELECT sum(s.accepted) AS accepted, sum(s.live_buckets) AS live_buckets
  FROM generate_series(1, 400) AS i, LATERAL streamforge.stats('cache' || i) AS s;
SELECT pipelines < 400 AS evicted, kb <= 1024 AS within_1mb FROM pg_temp.cached();

-- 0 keeps only what is in use: the most recently used pipeline, and those
-- the open transaction changed, until it ends
SET streamforge.cache_size = 0;
SELECT count(*) FROM streamforge.watermark('cache2');
SELECT pipelines FROM pg_temp.cached();
BEGIN;
SELECT count(*) FROM generate_series(1, 5) AS i,
  LATERAL streamforge.advance('cache' || i, 'p', 25);
SELECT count(*) FROM streamforge.watermark('cache6');
SELECT pipelines FROM pg_temp.cached();
COMMIT;
SELECT pipelines FROM pg_temp.cached();
-- the committed advances are there, rebuilt from the tables
SELECT count(*) FILTER (WHERE progress = 25) AS advanced
  FROM generate_series(1, 6) AS i, LATERAL streamforge.partitions('cache' || i);

-- a rolled-back transaction leaves nothing behind, evicted or not
BEGIN;
SELECT count(*) FROM generate_series(1, 3) AS i,
  LATERAL streamforge.ingest('cache' || i, 'p', 40, 'x', 'k', 50, 1);
ROLLBACK;
SELECT count(*) FILTER (WHERE consumed_offset = 39) AS unchanged
  FROM generate_series(1, 3) AS i, LATERAL streamforge.partitions('cache' || i);
SELECT pipelines FROM pg_temp.cached();

-- dropping frees the entry
SET streamforge.cache_size = -1;
SELECT count(*) FROM generate_series(1, 400) AS i,
  LATERAL streamforge.drop_pipeline('cache' || i);
SELECT pipelines FROM pg_temp.cached();
RESET streamforge.cache_size;
