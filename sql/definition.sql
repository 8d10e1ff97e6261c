-- A pipeline's definition as one document (issue 41, src/codec/options.def,
-- docs/management.md "A pipeline's definition"): streamforge.definition(),
-- definition_of(), pipeline_info's columns read from it, and the table of
-- options checked against the SQL signatures.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS streamforge;
RESET client_min_messages;

-- 1. The table of options, in create_pipeline's argument order
SELECT * FROM streamforge_internal.options();

-- create_pipeline's and definition_of's arguments after "name" are the
-- table's rows: names and types in order, and the defaults
SELECT p.proname,
       p.proargnames[2:] = (SELECT pg_catalog.array_agg(o.name)
                              FROM streamforge_internal.options() o)
           AS names_match,
       pg_catalog.array_to_string(p.proargtypes::regtype[], ',') = 'text,' ||
           (SELECT pg_catalog.string_agg(o.sql_type::regtype::text, ',')
              FROM streamforge_internal.options() o)
           AS types_match,
       p.pronargdefaults = (SELECT count(*) FROM streamforge_internal.options() o
                             WHERE o.sql_default IS NOT NULL) AS ndefaults_match
  FROM pg_catalog.pg_proc p
 WHERE p.pronamespace = 'streamforge'::regnamespace
   AND p.proname IN ('create_pipeline', 'definition_of')
 ORDER BY p.proname;
SELECT pg_catalog.pg_get_function_arguments('streamforge.create_pipeline'::regproc)
     = pg_catalog.pg_get_function_arguments('streamforge.definition_of'::regproc)
           AS same_arguments;

-- pipeline_info has a column per option
SELECT o.name
  FROM streamforge_internal.options() o
 WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_attribute a
                    WHERE a.attrelid = 'streamforge.pipeline_info'::regclass
                      AND a.attname = o.name);

-- 2. definition(): the members a pipeline has, keys in byte order
SELECT streamforge.create_pipeline('d_plain', ARRAY['p2', 'p1'],
    ARRAY[streamforge.fixed('t', 10)]);
SELECT streamforge.definition('d_plain');

SELECT streamforge.create_pipeline('d_all', ARRAY['p'],
    ARRAY[streamforge.sliding_interval('s', '2 days', '1 day'),
          streamforge.session('g', 3)],
    lateness => 2, retention => 7, time_unit => '1 day', emit => 'final',
    out_of_orderness => 1, idle_timeout => '1 day -1 hour 0.25 s');
SELECT streamforge.definition('d_all');

SELECT streamforge.create_pipeline('d_measures', ARRAY['p'],
    ARRAY[streamforge.fixed('t', 10)], idle_timeout => '36 h 0.5 s',
    measures => ARRAY['price', 'qty NULL'],
    aggregates => ARRAY['sum(price)', 'max(qty)']);
SELECT streamforge.definition('d_measures');

SELECT streamforge.create_pipeline('d_units', ARRAY['p'],
    ARRAY[streamforge.fixed('t', 10)], time_unit => '1 ms',
    idle_timeout => '24 hours');
SELECT streamforge.definition('d_units');

-- the document's intervals read back exactly (days and time apart)
SELECT (d ->> 'time_unit')::interval AS time_unit,
       (d ->> 'idle_timeout')::interval AS idle_timeout
  FROM (VALUES (streamforge.definition('d_all')),
               (streamforge.definition('d_measures')),
               (streamforge.definition('d_units'))) AS t(d);

-- 3. definition_of: the document create_pipeline stores, creating nothing
SELECT streamforge.definition_of('d_all', ARRAY['p'],
    ARRAY[streamforge.sliding_interval('s', '2 days', '1 day'),
          streamforge.session('g', 3)],
    lateness => 2, retention => 7, time_unit => '1 day', emit => 'final',
    out_of_orderness => 1, idle_timeout => '1 day -1 hour 0.25 s')
       = streamforge.definition('d_all') AS same_as_created;
SELECT streamforge.definition_of('d_new', ARRAY['b', 'a'],
    ARRAY[streamforge.fixed('t', 10)]);
SELECT count(*) FROM streamforge.pipeline_info WHERE name = 'd_new';
-- its checks are create_pipeline's, with the same SQLSTATEs
\set VERBOSITY sqlstate
SELECT streamforge.definition_of('d_new', ARRAY['p'], ARRAY[streamforge.fixed('t', 10)], lateness => -1);
SELECT streamforge.definition_of('d_new', ARRAY['p'], ARRAY[streamforge.fixed('t', 10)], emit => 'often');
SELECT streamforge.definition_of('d_new', ARRAY['p'], ARRAY[streamforge.fixed('t', 10)], emit => NULL);
SELECT streamforge.definition_of('d_new', ARRAY['p'], ARRAY[streamforge.fixed('t', 10)], idle_timeout => '1 month');
SELECT streamforge.definition_of('d_new', ARRAY['p'], ARRAY[streamforge.fixed('t', 10)], time_unit => '0 s');
SELECT streamforge.definition_of('d_new', ARRAY['p'], ARRAY[streamforge.fixed('t', 10)], aggregates => ARRAY['sum(x)']);
-- but a name that exists is no error: nothing is created
SELECT streamforge.definition_of('d_plain', ARRAY['p'], ARRAY[streamforge.fixed('t', 10)]) IS NOT NULL AS ok;
\set VERBOSITY default
SELECT streamforge.definition('d_missing');

-- 4. pipeline_info: the options 0.3.0 added, and the document
SELECT name, emit, out_of_orderness, idle_timeout, measures, aggregates,
       definition = streamforge.definition(name) AS definition_ok
  FROM streamforge.pipeline_info WHERE name LIKE 'd\_%' ORDER BY name;

-- 5. the checkpoint's definition holds the checkpointed options only
SELECT streamforge.inspect_checkpoint(streamforge.checkpoint(n)) -> 'definition' AS ck_definition
  FROM (VALUES ('d_all'), ('d_units')) AS t(n);

-- 6. a change of an option shows in the document
SELECT streamforge.set_idle_timeout('d_units', NULL);
SELECT streamforge.set_out_of_orderness('d_units', 5);
SELECT * FROM streamforge.set_emit('d_units', 'update+final');
SELECT streamforge.definition('d_units');
SELECT streamforge.set_idle_timeout('d_units', '2 days');
SELECT streamforge.definition('d_units') -> 'idle_timeout' AS idle_timeout;

SELECT streamforge.drop_pipeline(n)
  FROM (VALUES ('d_plain'), ('d_all'), ('d_measures'), ('d_units')) AS t(n);
