-- pipeline_catalog: what the definition calls of 0.3.0 refuse, what they
-- store in streamforge.pipeline, and what a new backend refuses to load
-- from it (issue 24, scripts/mutants-0.3.tsv: mutants
-- emit-arg-null, aggregates-without-measures, set-emit-not-stored,
-- progress-store-ooo-zero, progress-store-idle-cleared,
-- progress-idle-zero-loaded, measures-load-2d and version-last-digit).
-- The stored document (0.4.0, issue 41: the column definition) is read
-- directly: a mutant that stores the wrong value shows at once, without
-- waiting for a cache rebuild.  A corrupt row is made behind the
-- extension's back, as the last sections do.
CREATE FUNCTION s4c_try(stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    st text; msg text; det text;
BEGIN
    EXECUTE stmt;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
                            det = PG_EXCEPTION_DETAIL;
    RETURN st || ': ' || msg || coalesce(' | ' || nullif(det, ''), '');
END $$;
CREATE FUNCTION s4c_row(p text) RETURNS TABLE (emit text, out_of_orderness bigint,
    idle_timeout text, measures jsonb, aggregates jsonb)
LANGUAGE sql AS $$
  SELECT definition ->> 'emit', (definition ->> 'out_of_orderness')::bigint,
         definition ->> 'idle_timeout', definition -> 'measures',
         definition -> 'aggregates'
    FROM streamforge.pipeline WHERE name = p $$;

-- emit => NULL is refused (22004), as every other NULL argument
SELECT s4c_try($$SELECT streamforge.create_pipeline('s4c', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], emit => NULL)$$);
-- aggregates without measures are refused, not ignored (22023)
SELECT s4c_try($$SELECT streamforge.create_pipeline('s4c', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10)], aggregates => ARRAY['count'])$$);
SELECT count(*) AS created FROM streamforge.pipeline WHERE name = 's4c';

-- a pipeline without any 0.3.0 option: its row is that of 0.2.0
SELECT streamforge.create_pipeline('s4c', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
SELECT * FROM s4c_row('s4c');
-- set_emit stores the mode
SELECT count(*) FROM streamforge.set_emit('s4c', 'final');
SELECT * FROM s4c_row('s4c');
-- set_idle_timeout stores the timeout and leaves out_of_orderness NULL
SELECT streamforge.set_idle_timeout('s4c', interval '1 hour');
SELECT * FROM s4c_row('s4c');
-- set_out_of_orderness stores it and keeps the idle_timeout
SELECT streamforge.set_out_of_orderness('s4c', 5);
SELECT * FROM s4c_row('s4c');
SELECT streamforge.set_out_of_orderness('s4c', NULL);
SELECT * FROM s4c_row('s4c');
-- a new backend loads what was stored
\c -
SELECT streamforge.emit_mode('s4c'), streamforge.out_of_orderness('s4c');

-- an idle_timeout that is not positive cannot be stored by the
-- functions; a row that has one is corrupt (XX001) for the next backend
CREATE FUNCTION s4c_set_idle(p text, iv text) RETURNS void LANGUAGE sql AS $$
  UPDATE streamforge.pipeline
     SET definition = jsonb_set(definition, '{idle_timeout}', to_jsonb(iv)),
         version = version + 1
   WHERE name = p $$;
SELECT s4c_set_idle('s4c', 'P0DT0S');
\c -
SELECT s4c_try($$SELECT streamforge.emit_mode('s4c')$$);
-- an interval spelled otherwise (months cannot be spelled at all): corrupt
-- as well
SELECT s4c_set_idle('s4c', '1 month');
\c -
SELECT s4c_try($$SELECT streamforge.emit_mode('s4c')$$);
SELECT s4c_set_idle('s4c', 'PT1H');
\c -
SELECT s4c_try($$SELECT streamforge.emit_mode('s4c')$$);
SELECT s4c_set_idle('s4c', 'P0DT3600.0S');
\c -
SELECT s4c_try($$SELECT streamforge.emit_mode('s4c')$$);
SELECT s4c_set_idle('s4c', 'P0DT3600S');
\c -
SELECT s4c_try($$SELECT streamforge.emit_mode('s4c')$$);
SELECT streamforge.drop_pipeline('s4c');

-- measures and aggregates are stored as lists of names; a document with a
-- list of lists, or a null name, is corrupt
SELECT streamforge.create_pipeline('s4m', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    measures => ARRAY['a', 'b'], aggregates => ARRAY['sum(a)', 'max(b)']);
SELECT * FROM s4c_row('s4m');
CREATE FUNCTION s4c_set_measures(p text, m jsonb) RETURNS void LANGUAGE sql AS $$
  UPDATE streamforge.pipeline
     SET definition = jsonb_set(definition, '{measures}', m),
         version = version + 1
   WHERE name = p $$;
SELECT s4c_set_measures('s4m', '[["a"], ["b"]]');
\c -
SELECT s4c_try($$SELECT streamforge.emit_mode('s4m')$$);
SELECT s4c_set_measures('s4m', '["a", null]');
\c -
SELECT s4c_try($$SELECT streamforge.emit_mode('s4m')$$);
SELECT s4c_set_measures('s4m', '["a", "b"]');
\c -
SELECT s4c_try($$SELECT streamforge.emit_mode('s4m')$$);
SELECT streamforge.drop_pipeline('s4m');

-- the library refuses an installed extension newer than itself, version
-- parts compared as numbers of any number of digits (library_version has
-- one digit each): 0.10.0 and 0.4.10 are newer than 0.4.0
SELECT streamforge.create_pipeline('s4v', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
UPDATE pg_catalog.pg_extension SET extversion = '0.10.0' WHERE extname = 'streamforge';
\c -
SELECT s4c_try($$SELECT streamforge.emit_mode('s4v')$$);
UPDATE pg_catalog.pg_extension SET extversion = '0.4.10' WHERE extname = 'streamforge';
\c -
SELECT s4c_try($$SELECT streamforge.emit_mode('s4v')$$);
UPDATE pg_catalog.pg_extension SET extversion = '0.4.0' WHERE extname = 'streamforge';
\c -
SELECT s4c_try($$SELECT streamforge.emit_mode('s4v')$$);
SELECT streamforge.drop_pipeline('s4v');

DROP FUNCTION s4c_set_measures(text, jsonb);
DROP FUNCTION s4c_set_idle(text, text);
DROP FUNCTION s4c_row(text);
DROP FUNCTION s4c_try(text);

-- ------------------------------------------------------------------------
-- The stored emit mode: absent for 'update', anything else corrupt
-- ------------------------------------------------------------------------
-- the document of a pipeline in emit mode 'update' has no "emit" (its
-- checkpoints are those of 0.2.0); a document that spells 'update', or an
-- unknown mode, is corrupt (XX001) when a backend loads the pipeline
-- (issue 24).
\c -
SELECT streamforge.create_pipeline('s3s', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    emit => 'final');
SELECT definition ->> 'emit' AS emit FROM streamforge.pipeline WHERE name = 's3s';
CREATE FUNCTION s3s_set(e text) RETURNS void LANGUAGE sql AS $$
  UPDATE streamforge.pipeline
     SET definition = CASE WHEN e IS NULL THEN definition - 'emit'
                           ELSE jsonb_set(definition, '{emit}', to_jsonb(e)) END,
         version = version + 1
   WHERE name = 's3s' $$;
SELECT s3s_set('update');
\c -
SELECT streamforge.emit_mode('s3s');
SELECT s3s_set('Final');
\c -
SELECT streamforge.emit_mode('s3s');
-- absent is 'update'
SELECT s3s_set(NULL);
\c -
SELECT streamforge.emit_mode('s3s');
SELECT s3s_set('update+final');
\c -
SELECT streamforge.emit_mode('s3s');
DROP FUNCTION s3s_set(text);
SELECT streamforge.drop_pipeline('s3s');

-- ------------------------------------------------------------------------
-- A hostile or corrupt stored document (0.4.0, issue 41): XX001 with the
-- strict reader's detail when a backend loads the pipeline, never a crash;
-- the pipeline loads again once the document is put back
-- ------------------------------------------------------------------------
SELECT streamforge.create_pipeline('s4d', ARRAY['p', 'q'],
    ARRAY[streamforge.fixed('w', 10), streamforge.session('g', 3)], 2,
    retention => 100, time_unit => '1 second');
SELECT count(*) FROM streamforge.ingest('s4d', 'p', 0, 'e1', 'k', 5, 1);
CREATE TABLE s4d_saved AS SELECT definition FROM streamforge.pipeline WHERE name = 's4d';
SELECT definition FROM s4d_saved;
CREATE FUNCTION s4d_set(d jsonb) RETURNS void LANGUAGE sql AS $$
  UPDATE streamforge.pipeline SET definition = d, version = version + 1
   WHERE name = 's4d' $$;
-- the document d in place, then a load (the row's new version makes the
-- backend build the pipeline from its row again); the subtransaction
-- rolls the document back
CREATE FUNCTION s4d_load(d jsonb) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    st text; msg text; det text;
BEGIN
    PERFORM s4d_set(d);
    PERFORM streamforge.emit_mode('s4d');
    RAISE EXCEPTION 'loaded' USING ERRCODE = 'P0001';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
                            det = PG_EXCEPTION_DETAIL;
    RETURN st || ': ' || msg || coalesce(' | ' || nullif(det, ''), '');
END $$;
\c -
SELECT d AS document, s4d_load(d::jsonb) AS load
  FROM (VALUES ((SELECT definition::text FROM s4d_saved)),
               ('{"windows": 5}'), ('5'), ('[]'), ('null'), ('{}'),
               ('"text"'),
               ('{"lateness": 2, "partitions": ["p", "q"], "windows": []}'),
               ('{"lateness": 2.0, "partitions": ["p", "q"], "windows": [{"gap": 3, "kind": "session", "name": "g"}, {"kind": "fixed", "name": "w", "size": 10}]}'),
               ('{"lateness": 2, "partitions": ["q", "p"], "windows": [{"gap": 3, "kind": "session", "name": "g"}, {"kind": "fixed", "name": "w", "size": 10}]}'),
               ('{"lateness": 2, "partitions": ["p", "q"], "windows": [{"gap": 3, "kind": "session", "name": "g"}, {"kind": "fixed", "name": "w", "size": 0}]}'),
               ('{"lateness": 2, "partitions": ["p", "q"], "windows": [{"gap": 3, "kind": "hopping", "name": "g"}, {"kind": "fixed", "name": "w", "size": 10}]}'),
               ('{"lateness": 2, "partitions": ["p", "q"], "windows": [{"gap": 3, "kind": "session", "name": "g"}, {"kind": "fixed", "name": "w", "size": 10}], "unknown": 1}'),
               ('{"lateness": 99999999999999999999, "partitions": ["p", "q"], "windows": [{"gap": 3, "kind": "session", "name": "g"}, {"kind": "fixed", "name": "w", "size": 10}]}'),
               ('{"lateness": 2, "partitions": ["p", "q"], "retention": -1, "windows": [{"gap": 3, "kind": "session", "name": "g"}, {"kind": "fixed", "name": "w", "size": 10}]}'),
               ('{"lateness": 2, "partitions": ["p", ""], "windows": [{"gap": 3, "kind": "session", "name": "g"}, {"kind": "fixed", "name": "w", "size": 10}]}'),
               ('{"lateness": 2, "partitions": [[[[[[[[[[[["p"]]]]]]]]]]]], "windows": []}'),
               ('{"aggregates": ["count"], "lateness": 2, "partitions": ["p", "q"], "windows": [{"gap": 3, "kind": "session", "name": "g"}, {"kind": "fixed", "name": "w", "size": 10}]}'),
               ('{"lateness": 2, "partitions": ["p", "q"], "time_unit": "PT1S", "windows": [{"gap": 3, "kind": "session", "name": "g"}, {"kind": "fixed", "name": "w", "size": 10}]}')
       ) AS t(d);
-- put back: loads, with its state
SELECT s4d_set(definition) FROM s4d_saved;
\c -
SELECT streamforge.emit_mode('s4d'), streamforge.definition('s4d') = (SELECT definition FROM s4d_saved) AS same;
SELECT window_name, count FROM streamforge.live('s4d') ORDER BY 1;
DROP FUNCTION s4d_load(jsonb);
DROP FUNCTION s4d_set(jsonb);
DROP TABLE s4d_saved;
SELECT streamforge.drop_pipeline('s4d');
