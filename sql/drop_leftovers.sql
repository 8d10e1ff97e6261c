-- What a drop leaves behind (issue 45, item 5).  drop_pipeline of an
-- aggregate drops its views with the table of its results (0.4.0, issue
-- 42 item 2: the results view reads that table), and a NOTICE names them;
-- drop_aggregate leaves nothing and says nothing.  The rows of
-- streamforge's own tables (outputs, consumers, snapshots, the aggregate's
-- table) go with the pipeline.
SET client_min_messages = notice;
CREATE TABLE lo_clicks (id bigserial PRIMARY KEY, page text NOT NULL,
                        clicked_at timestamptz NOT NULL);
SELECT streamforge.create_aggregate('lo_agg', $$
    SELECT page, count(*) AS clicks FROM lo_clicks
     GROUP BY page, streamforge.tumble(clicked_at, interval '1 minute')
$$);
INSERT INTO lo_clicks (page, clicked_at) VALUES ('/a', '2026-11-30 12:00:05+00');
SELECT streamforge.register_consumer('lo_agg', 'dash');
SELECT streamforge_internal.aggregate_results_table(results_id) AS lo_table
  FROM streamforge.aggregate WHERE name = 'lo_agg' \gset
SELECT (SELECT count(*) FROM streamforge.results WHERE pipeline = 'lo_agg') AS results,
       (SELECT count(*) FROM streamforge.output_config WHERE pipeline = 'lo_agg') AS output_config,
       (SELECT count(*) FROM streamforge.consumer WHERE pipeline = 'lo_agg') AS consumers,
       (SELECT count(*) FROM pg_class WHERE oid = to_regclass(:'lo_table')) AS tables,
       (SELECT count(*) FROM streamforge.attachments WHERE pipeline = 'lo_agg') AS attachments;

SELECT streamforge.drop_pipeline('lo_agg');
-- the views are gone, as the NOTICE said, and the pipeline's rows
SELECT c.relname FROM pg_class AS c
 WHERE c.relname LIKE 'lo\_agg%' AND c.relkind = 'v' ORDER BY 1;
SELECT (SELECT count(*) FROM streamforge.results WHERE pipeline = 'lo_agg') AS results,
       (SELECT count(*) FROM streamforge.output_config WHERE pipeline = 'lo_agg') AS output_config,
       (SELECT count(*) FROM streamforge.consumer WHERE pipeline = 'lo_agg') AS consumers,
       (SELECT count(*) FROM pg_class WHERE oid = to_regclass(:'lo_table')) AS tables,
       (SELECT count(*) FROM streamforge.attachments WHERE pipeline = 'lo_agg') AS attachments;

-- drop_aggregate: nothing stays, no NOTICE
SELECT streamforge.create_aggregate('lo_agg', $$
    SELECT page, count(*) AS clicks FROM lo_clicks
     GROUP BY page, streamforge.tumble(clicked_at, interval '1 minute')
$$);
SELECT streamforge.drop_aggregate('lo_agg');
SELECT count(*) AS views FROM pg_class AS c
 WHERE c.relname LIKE 'lo\_agg%' AND c.relkind = 'v';

-- a top-N aggregate: its <name>_top reads <name>, so it is dropped first
SELECT streamforge.create_aggregate('lo_top', $$
    SELECT * FROM (
        SELECT page, count(*) AS clicks,
               ROW_NUMBER() OVER (PARTITION BY streamforge.tumble(clicked_at, interval '1 minute')
                                  ORDER BY count(*) DESC) AS rn
          FROM lo_clicks
         GROUP BY page, streamforge.tumble(clicked_at, interval '1 minute')) AS t
     WHERE rn <= 1
$$);
SELECT streamforge.drop_pipeline('lo_top');
SELECT count(*) AS views FROM pg_class AS c
 WHERE c.relname LIKE 'lo\_top%' AND c.relkind = 'v';

-- a pipeline without leftovers: no NOTICE
SELECT streamforge.create_pipeline('lo_plain', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)]);
SELECT streamforge.drop_pipeline('lo_plain');
DROP TABLE lo_clicks;
