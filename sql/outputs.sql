-- Durable outputs (docs/outputs.md): the changelog, results and late output
-- tables, written in the transaction of every write call of a pipeline
-- whose outputs are on.
\set VERBOSITY sqlstate

-- the tables are configuration tables (pg_dump keeps them)
SELECT c::regclass AS config_table
  FROM pg_extension e, unnest(e.extconfig) AS c
 WHERE e.extname = 'streamforge'
   AND c::regclass::text IN ('streamforge.output_config', 'streamforge.changelog',
                             'streamforge.results', 'streamforge.late_output')
 ORDER BY 1;

-- PUBLIC may read them (row-level security shows a role the rows of the
-- pipelines it may read) and nothing else
CREATE ROLE regress_sf_reader;
SELECT t AS sink_table,
       has_table_privilege('regress_sf_reader', t, 'SELECT') AS sel,
       has_table_privilege('regress_sf_reader', t, 'INSERT') AS ins,
       has_table_privilege('regress_sf_reader', t, 'UPDATE') AS upd,
       has_table_privilege('regress_sf_reader', t, 'DELETE') AS del,
       has_table_privilege('regress_sf_reader', t, 'TRUNCATE') AS trunc
  FROM unnest(ARRAY['streamforge.output_config', 'streamforge.changelog',
                    'streamforge.results', 'streamforge.late_output']) AS t;
DROP ROLE regress_sf_reader;

-- (0.3.0: output epochs come from one sequence; fixed numbers here)
ALTER SEQUENCE streamforge.output_epoch_seq RESTART WITH 10;

-- o: fixed windows of 10 and sessions with gap 5, lateness 10
SELECT streamforge.create_pipeline('out_o', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('f', 10), streamforge.session('s', 5)], 10);

-- outputs are off until configured: nothing is written
SELECT count(*) FROM streamforge.ingest('out_o', 'a', 0, 'e0', 'k', 1, 5);
SELECT count(*) FROM streamforge.advance('out_o', 'a', 10);
SELECT count(*) FROM streamforge.advance('out_o', 'b', 10);
SELECT count(*) AS changelog_rows FROM streamforge.changelog WHERE pipeline = 'out_o';
SELECT count(*) AS config_rows FROM streamforge.output_config WHERE pipeline = 'out_o';

-- bad arguments
SELECT streamforge.configure_outputs(NULL);
SELECT streamforge.configure_outputs('out_o', NULL);
SELECT streamforge.configure_outputs('out_nope');
SELECT streamforge.configure_outputs('');

-- turning results on copies visible() (seq NULL: not known)
SELECT * FROM streamforge.visible('out_o');
SELECT streamforge.configure_outputs('out_o');
SELECT pipeline, changelog, results, late, notify FROM streamforge.output_config
 WHERE pipeline = 'out_o';
SELECT * FROM streamforge.results WHERE pipeline = 'out_o'
 ORDER BY window_name, key, window_start;

-- every change a call returns is appended to the changelog, in the same
-- order with the same seq; results follow.  got collects what calls return.
CREATE TABLE got AS SELECT * FROM streamforge.ingest('out_o', 'a', 1, 'e1', 'k', 3, 7);
INSERT INTO got SELECT * FROM streamforge.ingest('out_o', 'b', 0, 'e2', 'j', 12, 1);
INSERT INTO got SELECT * FROM streamforge.advance('out_o', 'a', 20);
INSERT INTO got SELECT * FROM streamforge.advance('out_o', 'b', 20);
SELECT * FROM got ORDER BY seq;
SELECT seq, op, window_name, key, window_start, window_end, count, sum, min, max
  FROM streamforge.changelog WHERE pipeline = 'out_o' ORDER BY seq;
-- the changelog holds exactly what the calls returned
SELECT count(*) AS mismatches
  FROM got g FULL JOIN streamforge.changelog c
    ON c.pipeline = 'out_o' AND c.seq = g.seq
 WHERE g IS DISTINCT FROM (c.seq, c.op, c.window_name, c.key, c.window_start,
                            c.window_end, c.count, c.sum, c.min, c.max)::streamforge.change;
SELECT window_name, key, window_start, window_end, count, sum, min, max, seq
  FROM streamforge.results WHERE pipeline = 'out_o'
 ORDER BY window_name, key, window_start;

-- a rolled-back call never happened: its seq numbers are reused
BEGIN;
SELECT * FROM streamforge.ingest('out_o', 'a', 2, 'e3', 'k', 15, 100);
SELECT max(seq) FROM streamforge.changelog WHERE pipeline = 'out_o';
ROLLBACK;
SELECT max(seq) FROM streamforge.changelog WHERE pipeline = 'out_o';
-- ROLLBACK TO SAVEPOINT likewise
BEGIN;
SAVEPOINT s;
SELECT * FROM streamforge.ingest('out_o', 'a', 2, 'e3', 'k', 15, 100);
ROLLBACK TO SAVEPOINT s;
INSERT INTO got SELECT * FROM streamforge.ingest('out_o', 'a', 2, 'e3', 'k', 16, 2);
COMMIT;
SELECT seq, op, window_name, key, window_start, window_end, count, sum
  FROM streamforge.changelog WHERE pipeline = 'out_o' AND seq > 6 ORDER BY seq;

-- finalization forgets rows in visible(); the results table keeps them
INSERT INTO got SELECT * FROM streamforge.advance('out_o', 'a', 100);
INSERT INTO got SELECT * FROM streamforge.advance('out_o', 'b', 100);
SELECT * FROM streamforge.visible('out_o');
SELECT window_name, key, window_start, window_end, count, sum, min, max, seq
  FROM streamforge.results WHERE pipeline = 'out_o'
 ORDER BY window_name, key, window_start;

-- late events go to late_output, exactly as late_events() reports them
INSERT INTO got SELECT * FROM streamforge.ingest('out_o', 'a', 3, 'e4', 'k', 5, 9);
INSERT INTO got SELECT * FROM streamforge.ingest_batch('out_o',
    ARRAY[('b', 1, 'e5', 'j', 50, 1), ('b', 2, 'e6', 'j', 60, 1)]::streamforge.delivery[]);
SELECT * FROM streamforge.late_events('out_o');
SELECT late_seq, partition, source_offset, event_id, key, event_time, value, watermark
  FROM streamforge.late_output WHERE pipeline = 'out_o' ORDER BY late_seq;

-- seq is consecutive from the first change made with the changelog on
-- (seq 1 and 2 came before configure_outputs), and the changelog still
-- equals what the calls returned
SELECT count(*) AS n, min(seq), max(seq), count(DISTINCT seq) AS distinct_seq
  FROM streamforge.changelog WHERE pipeline = 'out_o';
SELECT count(*) AS mismatches
  FROM got g FULL JOIN streamforge.changelog c
    ON c.pipeline = 'out_o' AND c.seq = g.seq
 WHERE g IS DISTINCT FROM (c.seq, c.op, c.window_name, c.key, c.window_start,
                            c.window_end, c.count, c.sum, c.min, c.max)::streamforge.change;
DROP TABLE got;

-- ingest_batch: one address changed several times in one call keeps its
-- last values; a session merge deletes the sessions it retracts
SELECT streamforge.create_pipeline('out_b', ARRAY['p'],
    ARRAY[streamforge.session('s', 10)], 1000);
SELECT streamforge.configure_outputs('out_b', notify => false);
SELECT count(*) FROM streamforge.advance('out_b', 'p', 100);
SELECT * FROM streamforge.ingest_batch('out_b', ARRAY[
    ('p', 0, 'b0', 'k', 0, 1), ('p', 1, 'b1', 'k', 20, 2),
    ('p', 2, 'b2', 'k', 5, 3), ('p', 3, 'b3', 'k', 15, 4),
    ('p', 4, 'b4', 'x', 1, 5)]::streamforge.delivery[]);
SELECT window_name, key, window_start, window_end, count, sum, min, max, seq
  FROM streamforge.results WHERE pipeline = 'out_b' ORDER BY key, window_start;
-- results equal visible() here, since nothing was finalized
SELECT count(*) AS mismatches
  FROM streamforge.visible('out_b') v
  FULL JOIN (SELECT window_name, key, window_start, window_end, count, sum, min, max
               FROM streamforge.results WHERE pipeline = 'out_b') r
    ON (v.window_name, v.key, v.window_start, v.window_end)
     = (r.window_name, r.key, r.window_start, r.window_end)
 WHERE v IS DISTINCT FROM (r.window_name, r.key, r.window_start, r.window_end,
                            r.count, r.sum, r.min, r.max)::streamforge.result;

-- sums are exact beyond bigint; keys of any length fit
SELECT count(*) FROM streamforge.ingest_batch('out_b', ARRAY[
    ('p', 5, 'big1', 'big', 200, 9223372036854775807),
    ('p', 6, 'big2', 'big', 201, 9223372036854775807),
    ('p', 7, 'long', repeat('k', 10000), 300, -1)]::streamforge.delivery[]);
SELECT count(*) FROM streamforge.advance('out_b', 'p', 1000);
SELECT key, count, sum FROM streamforge.results
 WHERE pipeline = 'out_b' AND key = 'big';
SELECT length(key), count, sum FROM streamforge.results
 WHERE pipeline = 'out_b' AND length(key) = 10000;

-- switching outputs off: the changelog and late output keep their rows but
-- grow no more; the results of a pipeline are deleted with their switch
SELECT streamforge.configure_outputs('out_b', changelog => false, results => true,
                                     late => false, notify => false);
SELECT count(*) FROM streamforge.ingest('out_b', 'p', 8, 'c8', 'k', 500, 1);
SELECT count(*) FROM streamforge.advance('out_b', 'p', 2000);
SELECT max(seq) AS changelog_max_seq FROM streamforge.changelog WHERE pipeline = 'out_b';
SELECT seq, count FROM streamforge.results WHERE pipeline = 'out_b' AND window_start = 500;
SELECT streamforge.configure_outputs('out_b', results => false);
SELECT count(*) AS result_rows FROM streamforge.results WHERE pipeline = 'out_b';
SELECT streamforge.disable_outputs('out_b');
SELECT count(*) AS config_rows FROM streamforge.output_config WHERE pipeline = 'out_b';
SELECT count(*) FROM streamforge.ingest('out_b', 'p', 9, 'c9', 'k', 700, 1);
SELECT count(*) FROM streamforge.advance('out_b', 'p', 3000);
SELECT count(*) AS changelog_rows FROM streamforge.changelog WHERE pipeline = 'out_b';

-- a configuration change made in this transaction applies to the next call,
-- and is forgotten when the transaction rolls back
BEGIN;
SELECT streamforge.configure_outputs('out_b');
SELECT count(*) FROM streamforge.ingest('out_b', 'p', 10, 'c10', 'k', 3001, 1);
SELECT count(*) FROM streamforge.advance('out_b', 'p', 4000);
SELECT count(*) AS changelog_rows FROM streamforge.changelog WHERE pipeline = 'out_b';
ROLLBACK;
SELECT count(*) FROM streamforge.ingest('out_b', 'p', 10, 'c10', 'k', 3001, 1);
SELECT count(*) FROM streamforge.advance('out_b', 'p', 4000);
SELECT count(*) AS changelog_rows FROM streamforge.changelog WHERE pipeline = 'out_b';

-- dropping a pipeline drops its outputs; a new pipeline of the same name
-- starts without outputs
SELECT streamforge.drop_pipeline('out_o');
SELECT (SELECT count(*) FROM streamforge.changelog WHERE pipeline = 'out_o') AS changelog,
       (SELECT count(*) FROM streamforge.results WHERE pipeline = 'out_o') AS results,
       (SELECT count(*) FROM streamforge.late_output WHERE pipeline = 'out_o') AS late,
       (SELECT count(*) FROM streamforge.output_config WHERE pipeline = 'out_o') AS config;
SELECT streamforge.create_pipeline('out_o', ARRAY['a'], ARRAY[streamforge.fixed('f', 10)]);
SELECT count(*) FROM streamforge.ingest('out_o', 'a', 0, 'e0', 'k', 1, 5);
SELECT count(*) FROM streamforge.advance('out_o', 'a', 10);
SELECT count(*) AS changelog_rows FROM streamforge.changelog WHERE pipeline = 'out_o';

-- a role with the ingest privilege on the pipeline writes its outputs
-- without any privilege on the tables (sink.c writes them as the
-- extension's owner; docs/security.md); without it, it writes nothing
SELECT streamforge.configure_outputs('out_o');
CREATE ROLE regress_sf_writer;
GRANT USAGE ON SCHEMA streamforge TO regress_sf_writer;
SET ROLE regress_sf_writer;
SELECT count(*) FROM streamforge.ingest('out_o', 'a', 1, 'e1', 'k', 11, 5);
SELECT count(*) FROM streamforge.advance('out_o', 'a', 20);
RESET ROLE;
SELECT streamforge.grant('out_o', 'regress_sf_writer', 'ingest');
SET ROLE regress_sf_writer;
SELECT count(*) FROM streamforge.ingest('out_o', 'a', 1, 'e1', 'k', 11, 5);
SELECT count(*) FROM streamforge.advance('out_o', 'a', 20);
RESET ROLE;
SELECT seq, op, key, window_start, count FROM streamforge.changelog
 WHERE pipeline = 'out_o' ORDER BY seq;
REVOKE USAGE ON SCHEMA streamforge FROM regress_sf_writer;
DROP ROLE regress_sf_writer;

SELECT streamforge.drop_pipeline('out_o');
SELECT streamforge.drop_pipeline('out_b');

-- ------------------------------------------------------------------------
-- One call with more rows than one sink statement writes
-- ------------------------------------------------------------------------
-- the durable outputs of one call that makes more
-- changes or late events than one statement of the sink writes (8192 rows
-- each, src/persist/sink.c): every row arrives, once (issue 24).
\c -
\set VERBOSITY default
SELECT streamforge.create_pipeline('so', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)]);
SELECT streamforge.configure_outputs('so');
-- 20,000 keys, one bucket each; the advance makes 20,000 changes at once
SELECT count(*) FROM streamforge.ingest_batch('so',
    (SELECT array_agg(ROW('p', i, 'e' || i, 'k' || i, 1, i)::streamforge.delivery ORDER BY i)
       FROM generate_series(0, 19999) AS i));
SELECT count(*) FROM streamforge.advance('so', 'p', 20);
SELECT count(*) AS rows, count(DISTINCT seq) AS seqs, min(seq), max(seq), sum(sum)
  FROM streamforge.changelog WHERE pipeline = 'so';
SELECT count(*) AS rows, min(seq), max(seq), sum(sum)
  FROM streamforge.results WHERE pipeline = 'so';
-- 20,000 late events in one call
SELECT count(*) FROM streamforge.ingest_batch('so',
    (SELECT array_agg(ROW('p', 20000 + i, 'l' || i, 'k', 2, i)::streamforge.delivery ORDER BY i)
       FROM generate_series(0, 19999) AS i));
SELECT count(*) AS rows, min(late_seq), max(late_seq), sum(value), min(source_offset), max(source_offset)
  FROM streamforge.late_output WHERE pipeline = 'so';
SELECT late_events FROM streamforge.stats('so');

-- clean up
SELECT streamforge.drop_pipeline('so');
