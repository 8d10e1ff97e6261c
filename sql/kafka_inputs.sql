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

-- 0.4.0 (issue 37): what a role without superuser may do.  Every refusal
-- comes before any cluster is asked (localhost:1 is never reached).
CREATE ROLE regress_kafka_sub;
GRANT USAGE ON SCHEMA streamforge TO regress_kafka_sub;
SELECT streamforge.grant('kin', 'regress_kafka_sub', 'ingest');
-- subscribe's answer to options (and a topic), as SQLSTATE: message
CREATE FUNCTION pg_temp.refusal(options jsonb, topic text DEFAULT 't')
RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    PERFORM streamforge_kafka.subscribe('kin', 'localhost:1', topic, options => options);
    RETURN 'accepted';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END
$$;
SET ROLE regress_kafka_sub;
\set VERBOSITY default
-- topic_partitions is not PUBLIC (finding 2)
SELECT streamforge_kafka.topic_partitions('localhost:1', 't', '{}');
-- properties naming a command, a library, a file or an engine, and the
-- logging ones: 42501 naming the property (findings 2 and 12)
SELECT o AS options, pg_temp.refusal(o::jsonb) AS refusal FROM (VALUES
    ('{"sasl.kerberos.kinit.cmd": "id > /tmp/regress_kafka_pwned"}'),
    ('{"plugin.library.paths": "/tmp/evil.so"}'),
    ('{"ssl.ca.location": "/etc/passwd"}'),
    ('{"ssl.engine.location": "/tmp/engine.so"}'),
    ('{"ssl.engine.id": "x"}'),
    ('{"ssl.keystore.location": "/tmp/k.p12"}'),
    ('{"sasl.kerberos.keytab": "/etc/krb5.keytab"}'),
    ('{"ssl.providers": "legacy"}'),
    ('{"offset.store.path": "/tmp/offsets"}'),
    ('{"interceptors": "x"}'),
    ('{"sasl.mechanisms": "GSSAPI"}'),
    ('{"sasl.oauthbearer.config": "x"}'),
    ('{"debug": "all"}'),
    ('{"log_level": "7"}'),
    ('{"log.queue": "false"}'),
    -- unknown properties, and the worker's own: 22023
    ('{"no.such.option": "1"}'),
    ('{"group.id": "other"}'),
    ('{"enable.auto.commit": "true"}'),
    ('{"auto.offset.reset": "earliest"}'),
    -- values checked: client.id without control characters and bounded,
    -- PEM text rather than a file name, tuning within bounds
    ('{"client.id": "app\nLOG:  forged"}'),
    ('{"client.rack": "r\u0007"}'),
    ('{"ssl.ca.pem": "/etc/ssl/certs/ca-certificates.crt"}'),
    ('{"security.protocol": "carrier_pigeon"}'),
    ('{"sasl.mechanism": "PLAIN "}'),
    ('{"queued.max.messages.kbytes": "2097151"}'),
    ('{"fetch.max.bytes": "-1"}'),
    ('{"fetch.wait.max.ms": "10 seconds"}'),
    ('{"socket.keepalive.enable": "yes"}'),
    ('{"socket.timeout.ms": 1000}')) AS t(o);
SELECT pg_temp.refusal(pg_catalog.jsonb_build_object('client.id', repeat('x', 256)));
SELECT pg_temp.refusal('{}', E'top\nic');
SELECT pg_temp.refusal('{}', repeat('t', 250));
-- the allowlisted ones pass the check: librdkafka is asked (and refuses
-- the certificate, which is not one)
SELECT pg_temp.refusal(pg_catalog.jsonb_build_object(
        'security.protocol', 'SASL_SSL', 'sasl.mechanisms', 'SCRAM-SHA-512',
        'sasl.username', 'app', 'sasl.password', 'secret',
        'client.id', 'app-1', 'fetch.wait.max.ms', '50',
        'socket.timeout.ms', '1000', 'queued.max.messages.kbytes', '1024',
        'ssl.endpoint.identification.algorithm', 'none',
        'ssl.ca.pem', E'-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
        'api.version.request', 'true')) LIKE '22023: could not create a Kafka client: %' AS past_the_allowlist;
\set VERBOSITY default
-- no direct writes to the tables (finding 3)
INSERT INTO streamforge_kafka.subscription (pipeline, brokers, topic, format,
    partition_prefix, kafka_partitions, batch_size, max_wait, role)
VALUES ('kin', 'b', 't', 'json', 't-', 2147483647, 10, 10, 'regress_kafka_sub'::regrole::oid);
UPDATE streamforge_kafka.subscription SET kafka_partitions = 8000000;
DELETE FROM streamforge_kafka.rejected;
INSERT INTO streamforge_kafka.worker_status (subscription, state) VALUES (1, 'running');
INSERT INTO streamforge_kafka.partition_status VALUES (1, 0, 0);
SELECT streamforge_kafka.set_on_error('kin', 't', 'skip');
\set VERBOSITY sqlstate
SELECT streamforge_kafka.set_on_error('kin', 't', 'ignore');
RESET ROLE;
SELECT streamforge.revoke('kin', 'regress_kafka_sub', 'ingest');
REVOKE USAGE ON SCHEMA streamforge FROM regress_kafka_sub;
DROP ROLE regress_kafka_sub;

SELECT streamforge.drop_pipeline('kin');
DROP EXTENSION streamforge_kafka;
