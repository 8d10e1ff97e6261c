-- strength3_emit_store: the emit column of streamforge.pipeline holds NULL
-- for 'update' (the row of a pipeline without emit modes is that of
-- 0.2.0); a row that spells 'update', or an unknown mode, is corrupt
-- (XX001) when a backend loads the pipeline (issue 24: mutant
-- emit-load-accepts-update of scripts/mutants-0.3.tsv).  The column's
-- CHECK constraint refuses both, so the row is changed behind the
-- extension's back with the constraint dropped, and the constraint is put
-- back as the install script creates it.
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
