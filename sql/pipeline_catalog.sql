-- pipeline_catalog: what the definition calls of 0.3.0 refuse, what they
-- store in streamforge.pipeline, and what a new backend refuses to load
-- from it (issue 24, scripts/mutants-0.3.tsv: mutants
-- emit-arg-null, aggregates-without-measures, set-emit-not-stored,
-- progress-store-ooo-zero, progress-store-idle-cleared,
-- progress-idle-zero-loaded, measures-load-2d and version-last-digit).
-- The stored columns are read directly: a mutant that stores the wrong
-- value shows at once, without waiting for a cache rebuild.  A corrupt row
-- is made behind the extension's back, as the last section does.
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
    idle_timeout interval, measures text[], aggregates text[])
LANGUAGE sql AS $$
  SELECT emit, out_of_orderness, idle_timeout, measures, aggregates
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
CREATE FUNCTION s4c_set_idle(p text, iv interval) RETURNS void LANGUAGE sql AS $$
  UPDATE streamforge.pipeline SET idle_timeout = iv, version = version + 1
   WHERE name = p $$;
SELECT s4c_set_idle('s4c', interval '0 seconds');
\c -
SELECT s4c_try($$SELECT streamforge.emit_mode('s4c')$$);
-- months are not a length of time: corrupt as well
SELECT s4c_set_idle('s4c', interval '1 month');
\c -
SELECT s4c_try($$SELECT streamforge.emit_mode('s4c')$$);
SELECT s4c_set_idle('s4c', interval '1 hour');
\c -
SELECT s4c_try($$SELECT streamforge.emit_mode('s4c')$$);
SELECT streamforge.drop_pipeline('s4c');

-- measures and aggregates are stored as one-dimensional lists of names;
-- a row with a two-dimensional list, or a NULL name, is corrupt
SELECT streamforge.create_pipeline('s4m', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    measures => ARRAY['a', 'b'], aggregates => ARRAY['sum(a)', 'max(b)']);
SELECT * FROM s4c_row('s4m');
CREATE FUNCTION s4c_set_measures(p text, m text[]) RETURNS void LANGUAGE sql AS $$
  UPDATE streamforge.pipeline SET measures = m, version = version + 1
   WHERE name = p $$;
SELECT s4c_set_measures('s4m', ARRAY[ARRAY['a'], ARRAY['b']]);
\c -
SELECT s4c_try($$SELECT streamforge.emit_mode('s4m')$$);
SELECT s4c_set_measures('s4m', ARRAY['a', NULL]);
\c -
SELECT s4c_try($$SELECT streamforge.emit_mode('s4m')$$);
SELECT s4c_set_measures('s4m', ARRAY['a', 'b']);
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

DROP FUNCTION s4c_set_measures(text, text[]);
DROP FUNCTION s4c_set_idle(text, interval);
DROP FUNCTION s4c_row(text);
DROP FUNCTION s4c_try(text);

-- ------------------------------------------------------------------------
-- The stored emit column: NULL for 'update', anything else corrupt
-- ------------------------------------------------------------------------
-- the emit column of streamforge.pipeline holds NULL
-- for 'update' (the row of a pipeline without emit modes is that of
-- 0.2.0); a row that spells 'update', or an unknown mode, is corrupt
-- (XX001) when a backend loads the pipeline (issue 24: mutant
-- emit-load-accepts-update of scripts/mutants-0.3.tsv).  The column's
-- CHECK constraint refuses both, so the row is changed behind the
-- extension's back with the constraint dropped, and the constraint is put
-- back as the install script creates it.
\c -
SELECT streamforge.create_pipeline('s3s', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    emit => 'final');
SELECT emit FROM streamforge.pipeline WHERE name = 's3s';
ALTER TABLE streamforge.pipeline DROP CONSTRAINT pipeline_emit_check;
CREATE FUNCTION s3s_set(e text) RETURNS void LANGUAGE sql AS $$
  UPDATE streamforge.pipeline SET emit = e, version = version + 1 WHERE name = 's3s' $$;
SELECT s3s_set('update');
\c -
SELECT streamforge.emit_mode('s3s');
SELECT s3s_set('Final');
\c -
SELECT streamforge.emit_mode('s3s');
-- NULL is 'update'
SELECT s3s_set(NULL);
\c -
SELECT streamforge.emit_mode('s3s');
SELECT s3s_set('update+final');
\c -
SELECT streamforge.emit_mode('s3s');
ALTER TABLE streamforge.pipeline ADD CONSTRAINT pipeline_emit_check
    CHECK (emit OPERATOR(pg_catalog.=) ANY
           (ARRAY['update+final'::pg_catalog.text, 'final'::pg_catalog.text]));
DROP FUNCTION s3s_set(text);
SELECT streamforge.drop_pipeline('s3s');
