-- install: the extension, its schema, its types and the signatures of
-- the functions of docs/semantics.md "The interface", read from the catalogs.
\set VERBOSITY sqlstate
-- installed in schema streamforge, version 0.4.0, not relocatable
SELECT e.extname, e.extversion, n.nspname AS schema, e.extrelocatable
  FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
 WHERE e.extname = 'streamforge';
-- the window definition type exists (its layout is not part of the contract)
SELECT 'streamforge.window_def'::regtype;
-- the columns of the row types, in order
SELECT t.typname, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod) AS type
  FROM pg_type t JOIN pg_attribute a ON a.attrelid = t.typrelid
 WHERE t.typnamespace = 'streamforge'::regnamespace
   AND t.typname IN ('change', 'result', 'delivery', 'late_event')
   AND a.attnum > 0 AND NOT a.attisdropped
 ORDER BY t.typname, a.attnum;
-- input arguments (names and types) and result type of each function
SELECT p.proname AS function,
       (SELECT string_agg(p.proargnames[i + 1] || ' ' || format_type(p.proargtypes[i], NULL),
                          ', ' ORDER BY i)
          FROM generate_series(0, p.pronargs - 1) AS i) AS arguments,
       CASE WHEN p.proretset THEN 'SETOF ' ELSE '' END
           || format_type(p.prorettype, NULL) AS returns
  FROM pg_proc p
 WHERE p.pronamespace = 'streamforge'::regnamespace
   AND p.proname IN ('fixed', 'sliding', 'session', 'create_pipeline',
                     'drop_pipeline', 'ingest', 'ingest_batch', 'advance',
                     'mark_idle', 'checkpoint', 'restore', 'watermark',
                     'live', 'visible', 'late_events', 'partitions')
 ORDER BY p.proname;
-- one function per name, but for the time forms of durations (issue 45,
-- item 3: a bigint in units, an interval, and a text that is either, so
-- that an untyped literal is never ambiguous), units_to_time's pipeline
-- form and advance_to_now's list of pipelines (docs/reference.md, "Times
-- and durations"): no other overloads
SELECT p.proname, count(*)
  FROM pg_proc p
 WHERE p.pronamespace = 'streamforge'::regnamespace
 GROUP BY p.proname
HAVING count(*) > 1
 ORDER BY 1;
-- lateness defaults to 0
SELECT pg_get_expr(p.proargdefaults, 0) AS lateness_default
  FROM pg_proc p
 WHERE p.oid = 'streamforge.create_pipeline'::regproc;
-- the columns partitions() returns
SELECT a.name, format_type(a.type, NULL) AS type
  FROM pg_proc p,
       unnest(p.proargnames, p.proallargtypes, p.proargmodes) WITH ORDINALITY AS a(name, type, mode, n)
 WHERE p.oid = 'streamforge.partitions'::regproc
   AND a.mode IN ('o', 't')
 ORDER BY a.n;
