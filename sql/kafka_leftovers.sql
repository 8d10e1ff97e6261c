-- streamforge_kafka (issue 45, item 5): what unsubscribe and drop_pipeline
-- leave behind, and its removal.  unsubscribe says how many dead letters
-- stay, or removes them with purge => true; purge_dead_letters removes
-- those of a subscription gone or not; drop_pipeline names the
-- subscriptions and dead letters it leaves.  Each acts only on the rows of
-- roles whose privileges the caller has.  No cluster is needed: the rows
-- are inserted by hand (paused, and no launcher runs here).  Skipped where
-- streamforge_kafka is not installed (kafka_leftovers_1.out).
SELECT NOT EXISTS (SELECT FROM pg_catalog.pg_available_extensions
                    WHERE name = 'streamforge_kafka') AS kafka_missing \gset
\if :kafka_missing
\echo streamforge_kafka is not installed: skipped
\quit
\endif
CREATE EXTENSION streamforge_kafka;
SET client_min_messages = notice;
CREATE ROLE regress_klo_sub;
CREATE ROLE regress_klo_other;
SELECT streamforge.create_pipeline('klo', ARRAY['a-0', 'b-0'],
    ARRAY[streamforge.fixed('w', 10)]);
INSERT INTO streamforge_kafka.subscription (pipeline, brokers, topic, format,
    partition_prefix, kafka_partitions, batch_size, max_wait, role, paused)
SELECT 'klo', 'localhost:1', t, 'json', t || '-', 1, 10, 10,
       'regress_klo_sub'::regrole::oid, true
  FROM unnest(ARRAY['a', 'b']) AS t;
-- dead letters: 3 of topic a and 1 of topic b (regress_klo_sub), 2 of
-- topic gone (a subscription removed earlier), 1 of topic a of another role
INSERT INTO streamforge_kafka.rejected (subscription, pipeline, topic,
    partition, "offset", payload, error, sqlstate, role)
SELECT s, 'klo', t, 0, o, 'x', 'bad', '22P02', r::regrole::oid
  FROM (VALUES (1, 'a', 0, 'regress_klo_sub'), (1, 'a', 1, 'regress_klo_sub'),
               (1, 'a', 2, 'regress_klo_sub'), (2, 'b', 0, 'regress_klo_sub'),
               (99, 'gone', 0, 'regress_klo_sub'), (99, 'gone', 1, 'regress_klo_sub'),
               (98, 'a', 0, 'regress_klo_other')) AS v(s, t, o, r);

-- another role purges its own dead letters only, and may not unsubscribe
SET ROLE regress_klo_other;
SELECT streamforge_kafka.purge_dead_letters('klo', 'a') AS purged;
SELECT streamforge_kafka.purge_dead_letters('klo', 'gone') AS purged;
\set VERBOSITY terse
SELECT streamforge_kafka.unsubscribe('klo', 'a', purge => true);
\set VERBOSITY default
RESET ROLE;
SELECT topic, count(*) FROM streamforge_kafka.rejected GROUP BY 1 ORDER BY 1;

-- unsubscribe: the dead letters stay, and it says how many
SET ROLE regress_klo_sub;
SELECT streamforge_kafka.unsubscribe('klo', 'a');
SELECT streamforge_kafka.purge_dead_letters('klo', 'a') AS purged;
SELECT streamforge_kafka.purge_dead_letters('klo', 'a') AS purged;
RESET ROLE;

-- drop_pipeline: the subscription of b and the dead letters of gone stay,
-- one NOTICE per topic with the call that removes them
SELECT streamforge.drop_pipeline('klo');
SELECT pipeline, topic FROM streamforge_kafka.subscription ORDER BY 2;
SET ROLE regress_klo_sub;
SELECT streamforge_kafka.unsubscribe('klo', 'b', purge => true);
SELECT streamforge_kafka.purge_dead_letters('klo', 'gone') AS purged;
-- NULL arguments: STRICT
SELECT streamforge_kafka.purge_dead_letters(NULL, 'gone') AS purged;
SELECT streamforge_kafka.unsubscribe('klo', 'b', NULL);
RESET ROLE;
SELECT count(*) AS subscriptions FROM streamforge_kafka.subscription;
SELECT count(*) AS dead_letters FROM streamforge_kafka.rejected;

DROP ROLE regress_klo_sub;
DROP ROLE regress_klo_other;
DROP EXTENSION streamforge_kafka;
