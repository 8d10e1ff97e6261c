-- The attachment helpers that became C in 0.4.0 (attach_check,
-- attach_columns, attach_trigger_name: EXECUTE to PUBLIC, docs/security.md's
-- inventory) called by a role with no grant at all, with what a hostile
-- caller can pass: NULLs, empty and multi-dimensional arrays, NULL
-- elements, wrong argument counts, out-of-range and negative column
-- numbers, tables that do not exist or that the caller may not read, and
-- a pipeline it may not read.  Each gets a clear error or the SQL
-- functions' answer of 0.3.0, and the backend stays up.
\set VERBOSITY default
CREATE ROLE regress_sf_hostile;
CREATE TABLE public.hostile_t (id integer, k text, "we ird" numeric(10,2));
REVOKE ALL ON public.hostile_t FROM PUBLIC;
SELECT streamforge.create_pipeline('hostile_p', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
SELECT streamforge_internal.pipeline_id('hostile_p') AS hid,
       streamforge_internal.attach_trigger_name('hostile_p') AS tn,
       streamforge_internal.attach_trigger_name('no_such_p') AS tn_none \gset
SET ROLE regress_sf_hostile;

-- attach_trigger_name: pure, any text
SELECT streamforge_internal.attach_trigger_name('hostile_p');
SELECT streamforge_internal.attach_trigger_name('');
SELECT streamforge_internal.attach_trigger_name(NULL);
SELECT length(streamforge_internal.attach_trigger_name(repeat('x', 100000)));

-- attach_columns: the catalog only (pg_attribute is readable by PUBLIC),
-- '' for NULLs and no match, dropped and system columns as 0.3.0 named them
SELECT streamforge_internal.attach_columns('public.hostile_t', '{3,1,2}');
SELECT streamforge_internal.attach_columns('public.hostile_t', '{}');
SELECT streamforge_internal.attach_columns('public.hostile_t', NULL);
SELECT streamforge_internal.attach_columns(NULL, '{1}');
SELECT streamforge_internal.attach_columns('public.hostile_t', '{NULL,2,NULL}');
SELECT streamforge_internal.attach_columns('public.hostile_t', '{{1,2},{3,3}}');
SELECT streamforge_internal.attach_columns('public.hostile_t', '{0,-1,-7,32767,-32768}');
SELECT streamforge_internal.attach_columns(0::regclass, '{1}');
SELECT streamforge_internal.attach_columns(4294967295::oid::regclass, '{1,2}');
SELECT streamforge_internal.attach_columns('pg_catalog.pg_authid', '{1,2}');
SELECT streamforge_internal.attach_columns('public.hostile_t',
       (SELECT array_agg((g % 5)::smallint) FROM generate_series(1, 100000) AS g)) <> '' AS long_list;

-- attach_check: anything but the arguments attach() writes is 39P01
SELECT streamforge_internal.attach_check('public.hostile_t', 'x', NULL, true);
SELECT streamforge_internal.attach_check('public.hostile_t', 'x', '{}', true);
SELECT streamforge_internal.attach_check('public.hostile_t', 'x', '{NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL}', true);
SELECT streamforge_internal.attach_check('public.hostile_t',
       :'tn', ARRAY['hostile_p', 'a', 'b', 'c', 'd', 'e', 'notanid', '{1}', ''], true);
SELECT streamforge_internal.attach_check('public.hostile_t',
       :'tn', ARRAY['hostile_p', 'a', 'b', 'c', 'd', 'e', '1', '{1;2}', ''], true);
SELECT streamforge_internal.attach_check('public.hostile_t',
       :'tn', ARRAY['hostile_p', 'a', 'b', 'c', 'd', 'e', '1', '{1}', '', '', 'not measures'], true);
SELECT streamforge_internal.attach_check('public.hostile_t',
       :'tn', '{{hostile_p,a,b},{c,d,e}}', true);
-- the 0.2.0 form: not bound
SELECT streamforge_internal.attach_check('public.hostile_t',
       :'tn', ARRAY['hostile_p', 'a', 'b', 'c', 'd', 'e'], true);
-- well formed, but the column numbers are no smallint[] a cast accepts
SELECT streamforge_internal.attach_check('public.hostile_t',
       :'tn', ARRAY['hostile_p', 'a', 'b', 'c', 'd', 'e', '1', '{,,}', ''], true);
SELECT streamforge_internal.attach_check('public.hostile_t',
       :'tn', ARRAY['hostile_p', 'a', 'b', 'c', 'd', 'e', '1', '{99999}', ''], true);
-- the columns changed (here: never matched)
SELECT streamforge_internal.attach_check('public.hostile_t',
       :'tn', ARRAY['hostile_p', 'a', 'b', 'c', 'd', 'e', '1', '{1}', 'id bigint'], true);
-- the update trigger's form stops there
SELECT streamforge_internal.attach_check('public.hostile_t',
       :'tn' || '_update', ARRAY['hostile_p', 'a', 'b', 'c', 'd', 'e', '1', '{1}', 'id integer'], false) IS NULL AS update_form_passes;
-- a pipeline the caller may not read: 42501, before anything about its id
SELECT streamforge_internal.attach_check('public.hostile_t',
       :'tn', ARRAY['hostile_p', 'a', 'b', 'c', 'd', 'e', :'hid', '{1}', 'id integer'], true);
-- a pipeline that does not exist, a table that does not exist
SELECT streamforge_internal.attach_check('public.hostile_t',
       :'tn_none', ARRAY['no_such_p', 'a', 'b', 'c', 'd', 'e', '1', '{1}', 'id integer'], true);
SELECT streamforge_internal.attach_check(4294967295::oid::regclass,
       :'tn_none', ARRAY['no_such_p', 'a', 'b', 'c', 'd', 'e', '1', '{}', ''], true);
RESET ROLE;
-- the readable pipeline with a table that does not exist
SELECT streamforge_internal.attach_check(4294967295::oid::regclass,
       :'tn', ARRAY['hostile_p', 'a', 'b', 'c', 'd', 'e', :'hid', '{}', ''], true);
SELECT 1 AS backend_alive;

SELECT streamforge.drop_pipeline('hostile_p');
DROP TABLE public.hostile_t;
DROP ROLE regress_sf_hostile;
