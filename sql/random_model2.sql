-- The reference model of test/model/ref.sql against the extension (issue
-- 38, item 10; docs/testing.md, "The reference model"): seeded random
-- traces of pipelines of three kinds (classic, measures with every
-- aggregate, create_aggregate over a table), some with an idle_timeout
-- (the driver moves the clock) or a retention, each call compared with
-- the model after it: its rows, live/visible (and live_aggregates,
-- visible_aggregates, the aggregate's views), watermark, partitions,
-- late_events, streamforge.results, changelog, late_output and the
-- notifications a listener (a second connection, dblink) receives.  Calls
-- (ingest, batches, append, ingest_json, INSERTs, advance, mark_idle,
-- tick, set_emit, set_lateness, set_retention, restore, compact, refused
-- calls) run committed, inside a rolled-back savepoint, in a rolled-back
-- transaction, on a second backend and on a new connection (a cold load).
--
-- SF_MODEL_TRACES sets how many traces run (default 2000), SF_MODEL_SEED
-- the first seed (default 1), SF_MODEL_STEPS the calls per trace (default
-- 3).  A failing trace prints its seed; CALL sfr.run(seed, seed, steps)
-- replays it alone (the trace is a function of the seed and the steps).
-- SF_MODEL_ENABLE (comma-separated, the setting sfr.enable) turns on what
-- is left out by default because it fails on a known difference
-- (docs/testing.md, "What it found"); nothing is left out now.
\getenv sf_model_traces SF_MODEL_TRACES
\getenv sf_model_seed SF_MODEL_SEED
\getenv sf_model_steps SF_MODEL_STEPS
\getenv sf_model_enable SF_MODEL_ENABLE
\if :{?sf_model_traces}
\else
\set sf_model_traces 2000
\endif
\if :{?sf_model_seed}
\else
\set sf_model_seed 1
\endif
\if :{?sf_model_steps}
\else
\set sf_model_steps 3
\endif
\if :{?sf_model_enable}
\else
\set sf_model_enable ''
\endif
SELECT set_config('sfr.enable', :'sf_model_enable', false) IS NOT NULL AS enable_set;
\i test/model/ref.sql
SET synchronous_commit = off;
CALL sfr.run(:sf_model_seed, :sf_model_seed + :sf_model_traces - 1, :sf_model_steps);

-- every trace ran, and none differed from the model
SELECT count(*) >= least(:sf_model_traces, 2000) AS traces_ran,
       count(*) FILTER (WHERE kind = 'classic') > 0 AS classic,
       count(*) FILTER (WHERE kind = 'measures') > 0 AS measures,
       count(*) FILTER (WHERE kind = 'agg') > 0 AS aggregates,
       sum(jumps) > 0 AS idle_decisions
  FROM sfr.ran;
SELECT seed, step, what, detail FROM sfr.failure ORDER BY seed LIMIT 20;

SELECT dblink_disconnect('sfr_lsn'), dblink_disconnect('sfr_b2');
SELECT count(streamforge.drop_aggregate('rm2a')) >= 0 AS dropped_aggregate
  FROM (SELECT 1) AS x WHERE to_regclass('public.rm2a') IS NOT NULL;
DROP TABLE IF EXISTS public.rm2_src;
SELECT count(streamforge.drop_pipeline(p.name)) >= 0 AS dropped
  FROM streamforge.pipelines AS p WHERE p.name IN ('rm2', 'rm2a');
DROP SCHEMA sfr CASCADE;
DROP EXTENSION dblink;
