-- security_search_path: a caller's search_path never chooses code that runs
-- as the extension's owner (issue 11, docs/security.md "search_path").
-- Mallory, with USAGE on schema streamforge and CREATE on a schema of her
-- own, puts look-alikes of the operators and functions streamforge's
-- statements use before pg_catalog, then calls every entry point: on a
-- pipeline of her own (everything runs, as the owner where the extension
-- does so), on one she may only read, and on one she may not use at all.
-- Every look-alike logs the role it runs as (in a table, and with a NOTICE
-- that survives the rollback of a refused call); none may run as anybody
-- but Mallory.
\set VERBOSITY terse

CREATE TABLE public.ss_log (who name, what text);
GRANT INSERT ON public.ss_log TO PUBLIC;
CREATE ROLE regress_ss_alice;
CREATE ROLE regress_ss_mallory;
GRANT USAGE ON SCHEMA streamforge TO regress_ss_alice, regress_ss_mallory;
GRANT CREATE ON DATABASE :"DBNAME" TO regress_ss_mallory;

-- Alice's pipelines: one Mallory may not use, one she may read
SET ROLE regress_ss_alice;
SELECT streamforge.create_pipeline('ss_victim', ARRAY['p0', 'p1'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 20, 10),
          streamforge.session('g', 5)], 5);
SELECT streamforge.create_pipeline('ss_readable', ARRAY['p0'],
    ARRAY[streamforge.fixed('f', 10)]);
SELECT streamforge.configure_outputs('ss_victim');
SELECT streamforge.configure_outputs('ss_readable');
SELECT count(*) FROM streamforge.ingest('ss_victim', 'p0', 0, 'a0', 'k', 1, 1);
SELECT count(*) FROM streamforge.ingest('ss_readable', 'p0', 0, 'a0', 'k', 1, 1);
SELECT streamforge.grant('ss_readable', 'regress_ss_mallory', 'read');
RESET ROLE;

-- Mallory's trap: look-alikes of what the statements use
SET ROLE regress_ss_mallory;
CREATE SCHEMA evil;
CREATE FUNCTION evil.log(what text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO public.ss_log VALUES (current_user, what);
    IF current_user OPERATOR(pg_catalog.<>) 'regress_ss_mallory' THEN
        RAISE NOTICE 'look-alike % ran as %', what, current_user;
    END IF;
END $$;
CREATE FUNCTION evil.int8_int4_plus(a bigint, b integer) RETURNS bigint
LANGUAGE plpgsql AS $$ BEGIN PERFORM evil.log('+(bigint,integer)');
    RETURN a OPERATOR(pg_catalog.+) b; END $$;
CREATE OPERATOR evil.+ (LEFTARG = bigint, RIGHTARG = integer,
    FUNCTION = evil.int8_int4_plus);
CREATE FUNCTION evil.int8_plus(a bigint, b bigint) RETURNS bigint
LANGUAGE plpgsql AS $$ BEGIN PERFORM evil.log('+(bigint,bigint)');
    RETURN a OPERATOR(pg_catalog.+) b; END $$;
CREATE OPERATOR evil.+ (LEFTARG = bigint, RIGHTARG = bigint,
    FUNCTION = evil.int8_plus);
CREATE FUNCTION evil.int8_eq(a bigint, b bigint) RETURNS boolean
LANGUAGE plpgsql AS $$ BEGIN PERFORM evil.log('=(bigint,bigint)');
    RETURN a OPERATOR(pg_catalog.=) b; END $$;
CREATE OPERATOR evil.= (LEFTARG = bigint, RIGHTARG = bigint,
    FUNCTION = evil.int8_eq);
CREATE FUNCTION evil.int8_lt(a bigint, b bigint) RETURNS boolean
LANGUAGE plpgsql AS $$ BEGIN PERFORM evil.log('<(bigint,bigint)');
    RETURN a OPERATOR(pg_catalog.<) b; END $$;
CREATE OPERATOR evil.< (LEFTARG = bigint, RIGHTARG = bigint,
    FUNCTION = evil.int8_lt);
CREATE FUNCTION evil.int8_gt(a bigint, b bigint) RETURNS boolean
LANGUAGE plpgsql AS $$ BEGIN PERFORM evil.log('>(bigint,bigint)');
    RETURN a OPERATOR(pg_catalog.>) b; END $$;
CREATE OPERATOR evil.> (LEFTARG = bigint, RIGHTARG = bigint,
    FUNCTION = evil.int8_gt);
CREATE FUNCTION evil.text_eq(a text, b text) RETURNS boolean
LANGUAGE plpgsql AS $$ BEGIN PERFORM evil.log('=(text,text)');
    RETURN a OPERATOR(pg_catalog.=) b; END $$;
CREATE OPERATOR evil.= (LEFTARG = text, RIGHTARG = text,
    FUNCTION = evil.text_eq);
CREATE FUNCTION evil.text_like(a text, b text) RETURNS boolean
LANGUAGE plpgsql AS $$ BEGIN PERFORM evil.log('~~(text,text)');
    RETURN a OPERATOR(pg_catalog.~~) b; END $$;
CREATE OPERATOR evil.~~ (LEFTARG = text, RIGHTARG = text,
    FUNCTION = evil.text_like);
CREATE FUNCTION evil.int4_eq(a integer, b integer) RETURNS boolean
LANGUAGE plpgsql AS $$ BEGIN PERFORM evil.log('=(integer,integer)');
    RETURN a OPERATOR(pg_catalog.=) b; END $$;
CREATE OPERATOR evil.= (LEFTARG = integer, RIGHTARG = integer,
    FUNCTION = evil.int4_eq);
CREATE FUNCTION evil.oid_eq(a oid, b oid) RETURNS boolean
LANGUAGE plpgsql AS $$ BEGIN PERFORM evil.log('=(oid,oid)');
    RETURN a OPERATOR(pg_catalog.=) b; END $$;
CREATE OPERATOR evil.= (LEFTARG = oid, RIGHTARG = oid,
    FUNCTION = evil.oid_eq);
CREATE FUNCTION evil.unnest(a anyarray) RETURNS SETOF anyelement
LANGUAGE plpgsql AS $$ BEGIN PERFORM evil.log('unnest(anyarray)');
    RETURN QUERY SELECT pg_catalog.unnest(a); END $$;
CREATE FUNCTION evil.octet_length(a bytea) RETURNS integer
LANGUAGE plpgsql AS $$ BEGIN PERFORM evil.log('octet_length(bytea)');
    RETURN pg_catalog.octet_length(a); END $$;
CREATE FUNCTION evil.md5(a text) RETURNS text
LANGUAGE plpgsql AS $$ BEGIN PERFORM evil.log('md5(text)');
    RETURN pg_catalog.md5(a); END $$;
CREATE FUNCTION evil.now() RETURNS timestamptz
LANGUAGE plpgsql AS $$ BEGIN PERFORM evil.log('now()');
    RETURN pg_catalog.now(); END $$;
CREATE FUNCTION evil.substr(a text, b integer) RETURNS text
LANGUAGE plpgsql AS $$ BEGIN PERFORM evil.log('substr(text,integer)');
    RETURN pg_catalog.substr(a, b); END $$;
CREATE FUNCTION evil.lower(a text) RETURNS text
LANGUAGE plpgsql AS $$ BEGIN PERFORM evil.log('lower(text)');
    RETURN pg_catalog.lower(a); END $$;
CREATE FUNCTION evil.jsonb_build_object(VARIADIC a text[]) RETURNS jsonb
LANGUAGE plpgsql AS $$ BEGIN PERFORM evil.log('jsonb_build_object(text[])');
    RETURN pg_catalog.jsonb_build_object(VARIADIC a); END $$;

CREATE TABLE evil.src (id text, k text, t bigint);

-- the trap works: as Mallory, under her path, her look-alikes run
SET search_path = evil, pg_catalog;
SELECT 1::bigint + 1 AS two, 'a'::text = 'a' AS same,
       octet_length('\x00'::bytea) AS len;
RESET search_path;
SELECT streamforge.create_pipeline('ss_own', ARRAY['p0', 'p1'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 20, 10),
          streamforge.session('g', 5)], 5, time_unit => '1 millisecond');
RESET ROLE;
SELECT who = 'regress_ss_mallory' AS as_mallory, what, count(*)
  FROM public.ss_log GROUP BY 1, 2 ORDER BY 1, 2;
TRUNCATE public.ss_log;

-- every entry point; PIPE is replaced by the pipeline's name
CREATE TABLE public.ss_calls (id int, call text);
INSERT INTO public.ss_calls VALUES
    (1, $$SELECT * FROM streamforge.ingest('PIPE', 'p0', 0, 'e1', 'k', 2, 1)$$),
    (2, $$SELECT * FROM streamforge.ingest_batch('PIPE', ARRAY[ROW('p1', 0, 'e2', 'k', 3, 1), ROW('p1', 1, 'e3', 'k2', 13, 1)]::streamforge.delivery[])$$),
    (3, $$SELECT * FROM streamforge.advance('PIPE', 'p0', 30)$$),
    (4, $$SELECT * FROM streamforge.mark_idle('PIPE', 'p1')$$),
    (5, $$SELECT * FROM streamforge.advance_to_now('PIPE', 'p0')$$),
    (6, $$SELECT streamforge.watermark('PIPE')$$),
    (7, $$SELECT * FROM streamforge.live('PIPE')$$),
    (8, $$SELECT * FROM streamforge.visible('PIPE')$$),
    (9, $$SELECT * FROM streamforge.late_events('PIPE')$$),
    (10, $$SELECT * FROM streamforge.partitions('PIPE')$$),
    (11, $$SELECT * FROM streamforge.stats('PIPE')$$),
    (12, $$SELECT streamforge.checkpoint('PIPE')$$),
    (13, $$SELECT streamforge.inspect_checkpoint(streamforge.checkpoint('PIPE'))$$),
    (14, $$SELECT streamforge.restore('PIPE', streamforge.checkpoint('PIPE'))$$),
    (15, $$SELECT streamforge.configure_outputs('PIPE')$$),
    (16, $$SELECT streamforge.disable_outputs('PIPE')$$),
    (17, $$SELECT streamforge.configure_outputs('PIPE', true, true, true, false)$$),
    (18, $$SELECT streamforge.resync_outputs('PIPE')$$),
    (19, $$SELECT streamforge.grant('PIPE', 'regress_ss_alice', 'read')$$),
    (20, $$SELECT streamforge.revoke('PIPE', 'regress_ss_alice', 'read')$$),
    (21, $$SELECT streamforge.set_owner('PIPE', 'regress_ss_mallory')$$),
    (22, $$SELECT streamforge.has_pipeline_privilege('PIPE', 'admin')$$),
    (23, $$SELECT streamforge.require_privilege('PIPE', 'read')$$),
    (24, $$SELECT pg_catalog.count(*) FROM streamforge.pipelines WHERE name OPERATOR(pg_catalog.=) 'PIPE'$$),
    (25, $$SELECT pg_catalog.count(*) FROM streamforge.changelog WHERE pipeline OPERATOR(pg_catalog.=) 'PIPE'$$),
    (26, $$SELECT pg_catalog.count(*) FROM streamforge.results WHERE pipeline OPERATOR(pg_catalog.=) 'PIPE'$$),
    (27, $$SELECT streamforge.schedule_advance('PIPE', 'p0', '* * * * *')$$),
    (28, $$SELECT streamforge.unschedule_advance('PIPE', 'p0')$$),
    (31, $$SELECT * FROM streamforge.append('PIPE', 'p0', 'a1', 'k', 4, 1)$$),
    (32, $$SELECT * FROM streamforge.append_batch('PIPE', ARRAY[ROW('p1', 'a2', 'k', 5, 1)]::streamforge.event[])$$),
    (33, $$SELECT * FROM streamforge.ingest_json('PIPE', '[{"partition": "p0", "event_id": "a3", "key": "k", "event_time": 6, "value": 1}]')$$),
    (34, $$SELECT * FROM streamforge.append_ts('PIPE', 'p0', 'a4', 'k', '1970-01-01 00:00:00.007+00', 1)$$),
    (35, $$SELECT * FROM streamforge.ingest_ts('PIPE', 'p1', 3, 'a5', 'k', '1970-01-01 00:00:00.008+00', 1)$$),
    (36, $$SELECT * FROM streamforge.advance_ts('PIPE', 'p1', '1970-01-01 00:00:00.040+00')$$),
    (37, $$SELECT * FROM streamforge.visible_ts('PIPE')$$),
    (38, $$SELECT * FROM streamforge.live_ts('PIPE')$$),
    (39, $$SELECT streamforge.watermark_ts('PIPE')$$),
    (40, $$SELECT * FROM streamforge.results_ts('PIPE')$$),
    (41, $$SELECT streamforge.time_unit('PIPE')$$),
    (42, $$SELECT streamforge.trim_changelog('PIPE', 1)$$),
    (43, $$SELECT streamforge.trim_late_output('PIPE', 1)$$),
    (44, $$SELECT streamforge.trim_results('PIPE')$$),
    (45, $$SELECT streamforge.attach('PIPE', 'evil.src', event_id => 'id', key => 'k', event_time => 't', partition => '''p0''')$$),
    (46, $$INSERT INTO evil.src VALUES ('PIPE-a6', 'k', 50)$$),
    (47, $$SELECT pg_catalog.count(*) FROM streamforge.attachments$$),
    (48, $$SELECT streamforge.detach('PIPE', 'evil.src')$$),
    (49, $$SELECT * FROM streamforge.add_partition('PIPE', 'p2')$$),
    (50, $$SELECT * FROM streamforge.add_window('PIPE', streamforge.fixed('f2', 100))$$),
    (51, $$SELECT * FROM streamforge.drop_window('PIPE', 'f2')$$),
    (52, $$SELECT * FROM streamforge.set_lateness('PIPE', 7)$$),
    (53, $$SELECT streamforge.grant_privilege('PIPE', 'regress_ss_alice', 'read')$$),
    (54, $$SELECT streamforge.revoke_privilege('PIPE', 'regress_ss_alice', 'read')$$),
    (55, $$SELECT * FROM streamforge.live_avg('PIPE')$$),
    (56, $$SELECT * FROM streamforge.visible_avg('PIPE')$$),
    (57, $$SELECT pg_catalog.count(*) FROM streamforge.pipeline_info WHERE name OPERATOR(pg_catalog.=) 'PIPE'$$),
    (58, $$SELECT * FROM streamforge.set_retention('PIPE', 1000)$$),
    (59, $$SELECT streamforge.ingest_count('PIPE', 'p2', 0, 'e59', 'k', 60, 1)$$),
    (98, $$SELECT streamforge.drop_pipeline('PIPE')$$),
    (99, $$SELECT streamforge.create_pipeline('PIPE', ARRAY['p0'], ARRAY[streamforge.fixed('f', 10)])$$);

-- 'ok' or the SQLSTATE; written with qualified operators so that it does
-- not trigger the look-alikes itself
CREATE FUNCTION public.ss_try(stmt text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE stmt;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE;
END
$$;
CREATE TABLE public.ss_outcome (id int, pipe text, outcome text);
GRANT INSERT ON public.ss_outcome TO PUBLIC;
GRANT SELECT ON public.ss_calls TO PUBLIC;

-- Mallory calls everything with her path first, her own pipeline last
SET ROLE regress_ss_mallory;
SET search_path = evil, pg_catalog, public;
INSERT INTO public.ss_outcome
    SELECT c.id, p.pipe,
           public.ss_try(pg_catalog.replace(c.call, 'PIPE', p.pipe))
      FROM public.ss_calls c,
           pg_catalog.unnest(ARRAY['ss_victim', 'ss_readable', 'ss_own'])
               WITH ORDINALITY AS p(pipe, i)
     ORDER BY p.i, c.id;
RESET search_path;
RESET ROLE;

-- what each call did, per pipeline (27, 28: pg_cron is not installed;
-- the _ts functions need a pipeline with a time unit, as Mallory's has)
SELECT c.id, c.call,
       max(o.outcome) FILTER (WHERE o.pipe = 'ss_victim') AS victim,
       max(o.outcome) FILTER (WHERE o.pipe = 'ss_readable') AS readable,
       max(o.outcome) FILTER (WHERE o.pipe = 'ss_own') AS own
  FROM public.ss_calls c JOIN public.ss_outcome o USING (id)
 GROUP BY c.id, c.call ORDER BY c.id;

-- the point: no look-alike ran as anybody but Mallory (no rows with f)
SELECT who = 'regress_ss_mallory' AS as_mallory, what, count(*)
  FROM public.ss_log GROUP BY 1, 2 ORDER BY 1, 2;

-- Alice's pipelines are untouched
SELECT * FROM streamforge.partitions('ss_victim');
SELECT deliveries, accepted FROM streamforge.stats('ss_readable');

-- the issue's reproduction, verbatim: a refusal, and no NOTICE as the owner
SET ROLE regress_ss_mallory;
CREATE FUNCTION evil.plus(a bigint, b integer) RETURNS bigint LANGUAGE plpgsql AS
  $$ BEGIN RAISE NOTICE 'running as %', current_user; RETURN a OPERATOR(pg_catalog.+) b; END $$;
DROP OPERATOR evil.+ (bigint, integer);
CREATE OPERATOR evil.+ (LEFTARG = bigint, RIGHTARG = integer, FUNCTION = evil.plus);
SET search_path = evil, pg_catalog;
SELECT * FROM streamforge.ingest('ss_victim', 'p0', 1, 'x', 'k', 1, 1);
RESET search_path;
RESET ROLE;

SET client_min_messages = warning;
DROP SCHEMA evil CASCADE;
RESET client_min_messages;
SELECT streamforge.drop_pipeline(p)
  FROM unnest(ARRAY['ss_victim', 'ss_readable', 'ss_own']) AS p;
DROP TABLE public.ss_log, public.ss_calls, public.ss_outcome;
DROP FUNCTION public.ss_try(text);
REVOKE CREATE ON DATABASE :"DBNAME" FROM regress_ss_mallory;
REVOKE USAGE ON SCHEMA streamforge FROM regress_ss_alice, regress_ss_mallory;
DROP ROLE regress_ss_alice, regress_ss_mallory;
