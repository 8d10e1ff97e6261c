-- Attachments (issue 21): bound to the pipeline's identity, detached by
-- drop_pipeline, refused on partitioned and inherited tables and on the
-- extension's own tables, mappings under fixed settings, columns tracked,
-- hand-made triggers refused.
\set SHOW_CONTEXT never
\set VERBOSITY default
CREATE ROLE regress_sf_att_victim;
CREATE ROLE regress_sf_att_attacker;
CREATE ROLE regress_sf_att_writer;
GRANT CREATE, USAGE ON SCHEMA public TO regress_sf_att_victim, regress_sf_att_attacker;
GRANT USAGE ON SCHEMA streamforge TO regress_sf_att_victim, regress_sf_att_attacker,
    regress_sf_att_writer;

-- ----------------------------------------------------------------
-- 1. drop_pipeline detaches; the attachment is bound to the id
-- ----------------------------------------------------------------
SET ROLE regress_sf_att_victim;
SELECT streamforge.create_pipeline('orders', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
CREATE TABLE public.victim_orders (id integer PRIMARY KEY, customer text, t bigint);
SELECT streamforge.attach('orders', 'public.victim_orders', 'id', 'customer', 't');
SELECT source, pipeline, pipeline_id = streamforge_internal.pipeline_id('orders') AS bound
  FROM streamforge.attachments;
INSERT INTO public.victim_orders VALUES (1, 'alice', 1);
SELECT accepted FROM streamforge.stats('orders');
-- keep the trigger's definition, to make an orphan below
SELECT pg_catalog.pg_get_triggerdef(t.oid) AS orphan_def
  FROM pg_catalog.pg_trigger AS t
 WHERE t.tgrelid = 'public.victim_orders'::regclass AND NOT t.tgname LIKE '%_update' \gset
-- a rolled-back drop keeps the attachment
BEGIN;
SELECT streamforge.drop_pipeline('orders');
SELECT count(*) AS attachments FROM streamforge.attachments;
ROLLBACK;
SELECT count(*) AS attachments FROM streamforge.attachments;
SELECT streamforge.drop_pipeline('orders');
SELECT count(*) AS attachments FROM streamforge.attachments;
SELECT count(*) AS triggers FROM pg_catalog.pg_trigger
 WHERE tgrelid = 'public.victim_orders'::regclass;
RESET ROLE;

-- the attacker re-creates the name and opens it to everyone
SET ROLE regress_sf_att_attacker;
SELECT streamforge.create_pipeline('orders', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
SELECT streamforge.grant('orders', 'public', 'ingest');
RESET ROLE;
SET ROLE regress_sf_att_victim;
INSERT INTO public.victim_orders VALUES (2, 'bob', 2);   -- not attached any more
RESET ROLE;
-- an attachment left over (a table restored without its pipeline, a
-- trigger of 0.2.0 that outlived it): made here from the saved definition
:orphan_def;
SELECT source, pipeline, pipeline_id = streamforge_internal.pipeline_id('orders') AS bound
  FROM streamforge.attachments;
SET ROLE regress_sf_att_victim;
INSERT INTO public.victim_orders VALUES (3, 'carol', 3);  -- refused: dropped
RESET ROLE;
-- restore() into the new pipeline does not revive it either
SET ROLE regress_sf_att_attacker;
SELECT streamforge.restore('orders', streamforge.checkpoint('orders'));
RESET ROLE;
SET ROLE regress_sf_att_victim;
INSERT INTO public.victim_orders VALUES (3, 'carol', 3);
-- attach refuses the name while the orphan is there; detach removes it
SELECT streamforge.attach('orders', 'public.victim_orders', 'id', 'customer', 't');
SELECT streamforge.detach('orders', 'public.victim_orders');
INSERT INTO public.victim_orders VALUES (3, 'carol', 3);
RESET ROLE;
SET ROLE regress_sf_att_attacker;
SELECT deliveries, accepted FROM streamforge.stats('orders');   -- received nothing
SELECT streamforge.drop_pipeline('orders');
RESET ROLE;

-- drop_pipeline by the pipeline's owner detaches a table of another role
-- (that had the ingest privilege), as the extension's owner
SET ROLE regress_sf_att_attacker;
SELECT streamforge.create_pipeline('shared', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
SELECT streamforge.grant('shared', 'regress_sf_att_victim', 'ingest');
RESET ROLE;
SET ROLE regress_sf_att_victim;
SELECT streamforge.attach('shared', 'public.victim_orders', 'id', 'customer', 't');
INSERT INTO public.victim_orders VALUES (4, 'dave', 4);
RESET ROLE;
SET ROLE regress_sf_att_attacker;
SELECT streamforge.drop_pipeline('shared');
RESET ROLE;
SELECT count(*) AS attachments FROM streamforge.attachments;
-- and only an admin may drop (nothing detached otherwise)
SET ROLE regress_sf_att_attacker;
SELECT streamforge.create_pipeline('shared', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
SELECT streamforge.grant('shared', 'regress_sf_att_victim', 'ingest');
RESET ROLE;
SET ROLE regress_sf_att_victim;
SELECT streamforge.attach('shared', 'public.victim_orders', 'id', 'customer', 't');
SELECT streamforge.drop_pipeline('shared');
SELECT count(*) AS attachments FROM streamforge.attachments;
SELECT streamforge.detach('shared', 'public.victim_orders');
RESET ROLE;
SET ROLE regress_sf_att_attacker;
SELECT streamforge.drop_pipeline('shared');
RESET ROLE;
-- nobody but the extension's owner may call the helper directly
SET ROLE regress_sf_att_attacker;
SELECT streamforge_internal.drop_attachments('shared');
RESET ROLE;

-- ----------------------------------------------------------------
-- 2. partitioned and inherited tables are refused
-- ----------------------------------------------------------------
SELECT streamforge.create_pipeline('hier', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
CREATE TABLE public.h_parted (id integer, k text, t bigint) PARTITION BY RANGE (t);
CREATE TABLE public.h_part PARTITION OF public.h_parted FOR VALUES FROM (0) TO (100);
CREATE TABLE public.h_parent (id integer, k text, t bigint);
CREATE TABLE public.h_child () INHERITS (public.h_parent);
SELECT streamforge.attach('hier', 'public.h_parted', 'id', 'k', 't');
SELECT streamforge.attach('hier', 'public.h_part', 'id', 'k', 't');
SELECT streamforge.attach('hier', 'public.h_parent', 'id', 'k', 't');
SELECT streamforge.attach('hier', 'public.h_child', 'id', 'k', 't');
-- an attached table cannot become a partition or a child (the update
-- trigger's transition table)
CREATE TABLE public.h_plain (id integer, k text, t bigint);
SELECT streamforge.attach('hier', 'public.h_plain', 'id', 'k', 't');
ALTER TABLE public.h_parted ATTACH PARTITION public.h_plain FOR VALUES FROM (100) TO (200);
ALTER TABLE public.h_plain INHERIT public.h_parent;
-- it can gain a child: its inserts are refused from then on
CREATE TABLE public.h_plain_child () INHERITS (public.h_plain);
INSERT INTO public.h_plain VALUES (1, 'a', 1);
DROP TABLE public.h_plain_child;
INSERT INTO public.h_plain VALUES (1, 'a', 1);
SELECT accepted FROM streamforge.stats('hier');
SELECT streamforge.drop_pipeline('hier');
DROP TABLE public.h_parted, public.h_parent, public.h_child, public.h_plain;

-- ----------------------------------------------------------------
-- 3. the mappings do not depend on the inserting session's settings
-- ----------------------------------------------------------------
SELECT streamforge.create_pipeline('tz', ARRAY['p'], ARRAY[streamforge.fixed('w', 3600)],
    time_unit => interval '1 second');
CREATE TABLE public.tz_raw (s text, f float8, iv interval);
SELECT streamforge.attach('tz', 'public.tz_raw',
    event_id => 's::timestamptz::text || f::text || iv::text',
    key => 's::timestamptz::text', event_time => 's::timestamptz');
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, MDY';
INSERT INTO public.tz_raw VALUES ('2026-01-02 03:00:00', 0.1, interval '1 day 2 hours');
SET TimeZone = 'America/New_York';
SET DateStyle = 'SQL, DMY';
SET IntervalStyle = 'iso_8601';
SET extra_float_digits = 3;
INSERT INTO public.tz_raw VALUES ('2026-01-02 03:00:00', 0.1, interval '1 day 2 hours');
RESET TimeZone;
RESET DateStyle;
RESET IntervalStyle;
RESET extra_float_digits;
SELECT deliveries, accepted, duplicate_ids FROM streamforge.stats('tz');
SELECT key, window_start, count FROM streamforge.live('tz');
SELECT streamforge.drop_pipeline('tz');
DROP TABLE public.tz_raw;

-- ----------------------------------------------------------------
-- 4. ALTER TABLE of the columns the mappings read
-- ----------------------------------------------------------------
SELECT streamforge.create_pipeline('cols', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
CREATE TABLE public.cols_raw (id integer, a text, b text, t bigint, n numeric, other text);
SELECT streamforge.attach('cols', 'public.cols_raw', 'id', 'a', 't', value => 'n::integer');
ALTER TABLE public.cols_raw DROP COLUMN a;                     -- refused
ALTER TABLE public.cols_raw ALTER COLUMN t TYPE numeric;       -- refused
ALTER TABLE public.cols_raw ALTER COLUMN n TYPE numeric(3, 1); -- refused
ALTER TABLE public.cols_raw ALTER COLUMN other TYPE varchar;   -- not read: fine
ALTER TABLE public.cols_raw DROP COLUMN other;
-- swapping two columns by renames: refused at the next insert
ALTER TABLE public.cols_raw RENAME a TO tmp;
ALTER TABLE public.cols_raw RENAME b TO a;
ALTER TABLE public.cols_raw RENAME tmp TO b;
INSERT INTO public.cols_raw VALUES (1, 'key', 'other', 1, 1);
ALTER TABLE public.cols_raw RENAME a TO tmp;
ALTER TABLE public.cols_raw RENAME b TO a;
ALTER TABLE public.cols_raw RENAME tmp TO b;
INSERT INTO public.cols_raw VALUES (1, 'key', 'other', 1, 1);
-- updates of what the mappings read are still refused, others pass
UPDATE public.cols_raw SET b = 'x';
UPDATE public.cols_raw SET a = 'x';
SELECT key, count FROM streamforge.live('cols');
-- detached, the columns are free again
SELECT streamforge.detach('cols', 'public.cols_raw');
ALTER TABLE public.cols_raw DROP COLUMN a;
SELECT streamforge.drop_pipeline('cols');
DROP TABLE public.cols_raw;

-- ----------------------------------------------------------------
-- 5. a trigger made by hand gains nothing attach() would not give
-- ----------------------------------------------------------------
SELECT streamforge.create_pipeline('guarded', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
SELECT streamforge.grant('guarded', 'regress_sf_att_writer', 'ingest');
SELECT streamforge_internal.pipeline_id('guarded') AS guarded_id,
       streamforge_internal.attach_trigger_name('guarded') AS hand_made_name \gset
-- the attacker may not ingest, so attach() refuses him
SET ROLE regress_sf_att_attacker;
CREATE TABLE public.trap (id integer, k text, t bigint);
GRANT INSERT ON public.trap TO regress_sf_att_writer;
SELECT streamforge.attach('guarded', 'public.trap', 'id', 'k', 't');
-- the same triggers by hand, with the right name and arguments
SELECT format('CREATE TRIGGER %I AFTER INSERT ON public.trap REFERENCING NEW TABLE AS new_rows '
              'FOR EACH STATEMENT EXECUTE FUNCTION streamforge_internal.attached_insert('
              '%L, %L, %L, %L, %L, %L, %L, %L, %L)',
              streamforge_internal.attach_trigger_name('guarded'), 'guarded',
              '(''p'')::pg_catalog.text', '(id)::pg_catalog.text', '(k)::pg_catalog.text',
              '(t)::pg_catalog.int8', '(1)::pg_catalog.int8', :'guarded_id', '{1,2,3}',
              streamforge_internal.attach_columns('public.trap', '{1,2,3}')) AS hand_made \gset
:hand_made;
RESET ROLE;
-- a writer with the ingest privilege inserts into the attacker's table
SET ROLE regress_sf_att_writer;
INSERT INTO public.trap VALUES (1, 'stolen', 1);
RESET ROLE;
SELECT deliveries FROM streamforge.stats('guarded');
-- a hand-made trigger under another name, or with arguments of its own
SET ROLE regress_sf_att_attacker;
DROP TRIGGER :"hand_made_name" ON public.trap;
RESET ROLE;
SELECT streamforge.grant('guarded', 'regress_sf_att_attacker', 'ingest');
SET ROLE regress_sf_att_attacker;
CREATE TRIGGER my_trigger AFTER INSERT ON public.trap REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION streamforge_internal.attached_insert('guarded',
    '(''p'')::pg_catalog.text', 'id::text', 'k', 't', '1');
INSERT INTO public.trap VALUES (2, 'x', 2);
DROP TRIGGER my_trigger ON public.trap;
RESET ROLE;
-- once the owner may ingest, the hand-made trigger works as attach()'s
SET ROLE regress_sf_att_attacker;
:hand_made;
RESET ROLE;
SET ROLE regress_sf_att_writer;
INSERT INTO public.trap VALUES (3, 'allowed', 3);
RESET ROLE;
SELECT deliveries FROM streamforge.stats('guarded');
-- a revoke from the table's owner stops the attachment
SELECT streamforge.revoke('guarded', 'regress_sf_att_attacker', 'ingest');
SET ROLE regress_sf_att_writer;
INSERT INTO public.trap VALUES (4, 'revoked', 4);
RESET ROLE;
SELECT deliveries FROM streamforge.stats('guarded');
SELECT streamforge.drop_pipeline('guarded');
DROP TABLE public.trap;

-- ----------------------------------------------------------------
-- 6. the extension's own tables
-- ----------------------------------------------------------------
SELECT streamforge.create_pipeline('own', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
SELECT streamforge.attach('own', 'streamforge.journal', 'pos', 'pos::text', 'pos');
SELECT streamforge.attach('own', 'streamforge.results', 'seq', 'key', 'window_start');
SELECT streamforge.drop_pipeline('own');

DROP TABLE public.victim_orders;
REVOKE CREATE, USAGE ON SCHEMA public FROM regress_sf_att_victim, regress_sf_att_attacker;
REVOKE USAGE ON SCHEMA streamforge FROM regress_sf_att_victim, regress_sf_att_attacker,
    regress_sf_att_writer;
DROP ROLE regress_sf_att_victim;
DROP ROLE regress_sf_att_attacker;
DROP ROLE regress_sf_att_writer;
