-- streamforge_kafka (issue 28): bad inputs of the functions that need no
-- Kafka cluster.  Every one is refused with its SQLSTATE, nothing crashes,
-- and nothing is stored.  Skipped where streamforge_kafka is not installed
-- (it is built only with librdkafka: kafka_inputs_1.out).
SELECT NOT EXISTS (SELECT FROM pg_catalog.pg_available_extensions
                    WHERE name = 'streamforge_kafka') AS kafka_missing \gset
\if :kafka_missing
\echo streamforge_kafka is not installed: skipped
\quit
\endif
CREATE EXTENSION streamforge_kafka;
\set VERBOSITY sqlstate
SELECT streamforge.create_pipeline('kin', ARRAY['t-0'],
    ARRAY[streamforge.fixed('w', 10)]);

-- mappings
SELECT streamforge_kafka.mapping_sql('json', '{}', 't', NULL) LIKE 'SELECT pg_catalog.count(*) FROM streamforge.ingest_batch(%' AS ok;
SELECT streamforge_kafka.mapping_sql(NULL, '{}', 't', NULL);
SELECT streamforge_kafka.mapping_sql('json', NULL, 't', NULL);
SELECT streamforge_kafka.mapping_sql('xml', '{}', 't', NULL);
SELECT streamforge_kafka.mapping_sql('json', '[]', 't', NULL);
SELECT streamforge_kafka.mapping_sql('json', '"key"', 't', NULL);
SELECT streamforge_kafka.mapping_sql('json', '{"keys": "a"}', 't', NULL);
SELECT streamforge_kafka.mapping_sql('json', '{"key": 1}', 't', NULL);
SELECT streamforge_kafka.mapping_sql('json', '{"key": null}', 't', NULL);
SELECT streamforge_kafka.mapping_sql('json', '{"key": {"a": 1}}', 't', NULL);
SELECT streamforge_kafka.mapping_sql('json', '{"key": "$.a[", "value": "v"}', 't', NULL);
SELECT streamforge_kafka.mapping_sql('csv', '{"key": "name"}', 't', NULL);
SELECT streamforge_kafka.mapping_sql('csv', '{"key": 0}', 't', NULL);
SELECT streamforge_kafka.mapping_sql('csv', '{"key": -3}', 't', NULL);
SELECT streamforge_kafka.mapping_sql('csv', '{"key": 1e30}', 't', NULL);
SELECT streamforge_kafka.mapping_sql('csv', '{"key": 2}', 't', NULL) LIKE '%x.c[2]%' AS ok;
SELECT streamforge_kafka.mapping_sql('text', '{"key": "$.a"}', 't', NULL);
SELECT streamforge_kafka.mapping_sql('json', '{"partition_prefix": 5}', 't', NULL);
SELECT streamforge_kafka.mapping_sql('json', '{}', 't', interval '1 month');
-- a quote in a field or a topic stays a literal
SELECT streamforge_kafka.mapping_sql('json', '{"key": "a''); DROP TABLE x; --"}', 't''x', NULL)
       LIKE '%''a''''); DROP TABLE x; --''%' AS quoted;
SELECT streamforge_kafka.no_time_unit('yesterday');

-- subscribe: refused before any cluster is asked
SELECT streamforge_kafka.subscribe('kin', 'localhost:1', 't', format => 'xml');
SELECT streamforge_kafka.subscribe('kin', 'localhost:1', 't', on_error => 'ignore');
SELECT streamforge_kafka.subscribe('kin', 'localhost:1', 't', batch_size => 0);
SELECT streamforge_kafka.subscribe('kin', 'localhost:1', 't', batch_size => 100001);
SELECT streamforge_kafka.subscribe('kin', 'localhost:1', 't', max_wait => -1);
SELECT streamforge_kafka.subscribe('kin', 'localhost:1', 't', max_wait => 60001);
SELECT streamforge_kafka.subscribe('kin', 'localhost:1', 't', out_of_orderness => -1);
SELECT streamforge_kafka.subscribe('kin', 'localhost:1', 't', options => '[]');
SELECT streamforge_kafka.subscribe('kin', 'localhost:1', 't', options => '{"a": 1}');
SELECT streamforge_kafka.subscribe('kin', 'localhost:1', 't', mapping => '{"x": 1}');
SELECT streamforge_kafka.subscribe('kin', NULL, 't');
SELECT streamforge_kafka.subscribe('no_such_pipeline', 'localhost:1', 't');
SELECT streamforge_kafka.topic_partitions('localhost:1', 't', '{"no.such.option": "x"}');
SELECT streamforge_kafka.topic_partitions('localhost:1', 't', '{"socket.timeout.ms": "many"}');

-- the others, on a subscription that does not exist
SELECT streamforge_kafka.unsubscribe('kin', 't');
SELECT streamforge_kafka.pause('kin', 't');
SELECT streamforge_kafka.resume('kin', 't');

-- the table's own checks hold for a row inserted by hand
INSERT INTO streamforge_kafka.subscription (pipeline, brokers, topic, format,
    partition_prefix, kafka_partitions, batch_size, max_wait, role)
VALUES ('kin', 'b', 't', 'yaml', 't-', 1, 10, 10, 'pg_database_owner'::regrole::oid);
SELECT count(*) AS stored FROM streamforge_kafka.subscription;
SELECT count(*) AS rows FROM streamforge_kafka.subscriptions;

SELECT streamforge.drop_pipeline('kin');
DROP EXTENSION streamforge_kafka;
