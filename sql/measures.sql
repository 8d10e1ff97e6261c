-- measures pipelines (issue 27, docs/aggregates.md)
SELECT streamforge.create_pipeline('m', ARRAY['p0'],
    ARRAY[streamforge.fixed('w', 10), streamforge.session('s', 5)],
    lateness => 5,
    measures => ARRAY['amount', 'qty'],
    aggregates => ARRAY['count', 'sum(amount)', 'avg(qty)', 'min(amount)',
        'max(qty)', 'var_pop(amount)', 'var_samp(amount)',
        'stddev_pop(qty)', 'stddev_samp(qty)', 'first(amount)',
        'last(amount)', 'count_if(amount >= 100) AS big']);
SELECT * FROM streamforge.aggregate_columns('m');
SELECT * FROM streamforge.ingest_measures('m', 'p0', 0, 'e0', 'k', 1, ARRAY[100, 2]);
SELECT * FROM streamforge.ingest_measures('m', 'p0', 1, 'e1', 'k', 3, ARRAY[50, 3]);
SELECT * FROM streamforge.ingest_measures_batch('m', ARRAY[
    ROW('p0', 2, 'e2', 'k', 3, ARRAY[7, 1])::streamforge.measures_delivery,
    ROW('p0', 3, 'e3', 'k', 20, ARRAY[1, 1])::streamforge.measures_delivery]);
SELECT * FROM streamforge.live_aggregates('m');
SELECT * FROM streamforge.live('m');
SELECT * FROM streamforge.visible_aggregates('m');
-- checkpoints of measures pipelines are format version 2
SELECT pg_catalog.get_byte(streamforge.checkpoint('m'), 9) AS format_version;
SELECT streamforge.inspect_checkpoint(streamforge.checkpoint('m')) -> 'definition';
SELECT streamforge.inspect_checkpoint(streamforge.checkpoint('m')) -> 'identities' -> 0;
SELECT streamforge.inspect_checkpoint(streamforge.checkpoint('m')) -> 'windows' -> 0;
-- round trip: restore gives the same bytes and the same aggregates
CREATE TEMP TABLE ck AS SELECT streamforge.checkpoint('m') AS c;
SELECT streamforge.restore('m', (SELECT c FROM ck));
SELECT streamforge.checkpoint('m') = (SELECT c FROM ck) AS same_bytes;
SELECT * FROM streamforge.live_aggregates('m') WHERE window_name = 'w';
-- one-measure pipelines keep version 1
SELECT streamforge.create_pipeline('one', ARRAY['p0'], ARRAY[streamforge.fixed('w', 10)]);
SELECT count(*) FROM streamforge.ingest('one', 'p0', 0, 'e0', 'k', 1, 5);
SELECT pg_catalog.get_byte(streamforge.checkpoint('one'), 9) AS format_version;
-- a one-measure checkpoint does not restore into a measures pipeline
SELECT streamforge.restore('m', streamforge.checkpoint('one'));
-- the changelog and results carry the declared aggregates
SELECT streamforge.create_pipeline('mo', ARRAY['p0'], ARRAY[streamforge.fixed('w', 10)],
    measures => ARRAY['amount', 'qty'],
    aggregates => ARRAY['count', 'sum(amount)', 'last(qty)']);
SELECT streamforge.configure_outputs('mo', changelog => true, results => true);
SELECT count(*) FROM streamforge.ingest_measures_batch('mo', ARRAY[
    ROW('p0', 0, 'a', 'k', 1, ARRAY[9223372036854775807, 1])::streamforge.measures_delivery,
    ROW('p0', 1, 'b', 'k', 2, ARRAY[9223372036854775807, 2])::streamforge.measures_delivery]);
SELECT * FROM streamforge.advance('mo', 'p0', 10);
SELECT count(*) FROM streamforge.ingest_measures('mo', 'p0', 2, 'c', 'k', 5, ARRAY[-1, 3]);
SELECT seq, op, count, sum, aggregates FROM streamforge.changelog
WHERE pipeline = 'mo' ORDER BY seq;
SELECT window_start, count, sum, aggregates FROM streamforge.results
WHERE pipeline = 'mo';
SELECT streamforge.drop_pipeline(n) FROM unnest(ARRAY['m', 'one', 'mo']) AS n;

-- ------------------------------------------------------------------------
-- stddev correctly rounded; an empty event_id
-- ------------------------------------------------------------------------
-- stddev_pop and stddev_samp of a measures pipeline
-- are the square root of the variance correctly rounded at the variance's
-- scale, as PostgreSQL's stddev_pop and stddev_samp give them, also where
-- rounding numeric_sqrt's own result again is one unit off in the last
-- digit (issue 24, scripts/mutants-0.3.tsv: mutant
-- stddev-no-correction, and ingest-measures-empty-id at the end; the
-- values below were found by comparing stddev_samp(x) with
-- round(sqrt(var_samp(x)), scale(var_samp(x))) over random sets in
-- PostgreSQL 15).
\c -
SELECT streamforge.create_pipeline('s4a', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    measures => ARRAY['a'],
    aggregates => ARRAY['var_pop(a)', 'stddev_pop(a)', 'var_samp(a)', 'stddev_samp(a)']);
CREATE TABLE s4a_in (o serial, key text, a bigint);
INSERT INTO s4a_in (key, a) VALUES
    ('k1', 646), ('k1', 813), ('k1', 79), ('k1', 214),
    ('k2', 2877), ('k2', 4764), ('k2', 9907), ('k2', 8698), ('k2', 8399),
    ('k3', 53673), ('k3', 60353);
SELECT count(*) FROM (SELECT * FROM s4a_in ORDER BY o) i,
    LATERAL streamforge.ingest_measures('s4a', 'p', i.o - 1, 'e' || i.o, i.key, 1, ARRAY[i.a]) c;
-- what PostgreSQL's aggregates give, and the one-rounding alternative
SELECT key, stddev_pop(a) AS pg_stddev_pop,
       round(sqrt(var_pop(a)), scale(var_pop(a))) AS sqrt_rounded_pop,
       stddev_samp(a) AS pg_stddev_samp,
       round(sqrt(var_samp(a)), scale(var_samp(a))) AS sqrt_rounded_samp
  FROM s4a_in GROUP BY key ORDER BY key;
-- the pipeline's: PostgreSQL's exactly
SELECT l.key, l.aggregates ->> 'stddev_pop_a' AS stddev_pop_a,
       l.aggregates ->> 'stddev_samp_a' AS stddev_samp_a,
       l.aggregates ->> 'stddev_pop_a' = pg.sp::text AS pop_same,
       l.aggregates ->> 'stddev_samp_a' = pg.ss::text AS samp_same,
       l.aggregates ->> 'var_pop_a' = pg.vp::text AS var_pop_same,
       l.aggregates ->> 'var_samp_a' = pg.vs::text AS var_samp_same
  FROM streamforge.live_aggregates('s4a') l
  JOIN (SELECT key, stddev_pop(a) AS sp, stddev_samp(a) AS ss,
               var_pop(a) AS vp, var_samp(a) AS vs
          FROM s4a_in GROUP BY key) pg USING (key)
 ORDER BY l.key;
DROP TABLE s4a_in;
SELECT streamforge.drop_pipeline('s4a');

-- an empty event_id is refused (22023) by ingest_measures and
-- ingest_measures_batch, as by ingest, and nothing is delivered (mutant
-- ingest-measures-empty-id)
SELECT streamforge.create_pipeline('s4e', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    measures => ARRAY['a'], aggregates => ARRAY['count']);
CREATE FUNCTION s4e_try(stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    st text; msg text;
BEGIN
    EXECUTE stmt;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
    RETURN st || ': ' || msg;
END $$;
SELECT s4e_try($$SELECT * FROM streamforge.ingest_measures('s4e', 'p', 0, '', 'k', 1, ARRAY[5])$$);
SELECT s4e_try($$SELECT * FROM streamforge.ingest_measures_batch('s4e',
    ARRAY[ROW('p', 0, '', 'k', 1, ARRAY[5])]::streamforge.measures_delivery[])$$);
SELECT partition, consumed_offset FROM streamforge.partitions('s4e');
SELECT count(*) FROM streamforge.live_aggregates('s4e');
DROP FUNCTION s4e_try(text);
SELECT streamforge.drop_pipeline('s4e');

-- ------------------------------------------------------------------------
-- ingest_measures_batch's NULL source_offset; compact_target_load_ms = -1
-- ------------------------------------------------------------------------
\c -
\set VERBOSITY sqlstate
-- docs/aggregates.md (issue 40 item 7): ingest_measures_batch's deliveries carry a
-- source_offset; a NULL one is refused (22004) and consumes nothing,
-- alone or after good deliveries; append_measures_batch ignores it
SELECT streamforge.create_pipeline('s5m', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    measures => ARRAY['a', 'b']);
SELECT * FROM streamforge.ingest_measures_batch('s5m', ARRAY[
    ROW('p', NULL, 'e0', 'k', 1, ARRAY[1, 2])]::streamforge.measures_delivery[]);
SELECT * FROM streamforge.ingest_measures_batch('s5m', ARRAY[
    ROW('p', 0, 'e0', 'k', 1, ARRAY[1, 2]),
    ROW('p', NULL, 'e1', 'k', 2, ARRAY[1, 2])]::streamforge.measures_delivery[]);
\set VERBOSITY default
SELECT * FROM streamforge.ingest_measures_batch('s5m', ARRAY[
    ROW('p', 0, 'e0', 'k', 1, ARRAY[1, 2]),
    ROW('p', NULL, 'e1', 'k', 2, ARRAY[1, 2])]::streamforge.measures_delivery[]);
\set VERBOSITY sqlstate
SELECT partition, consumed_offset FROM streamforge.partitions('s5m');
SELECT deliveries, accepted FROM streamforge.stats('s5m');
-- offset 0 is still free
SELECT count(*) FROM streamforge.ingest_measures_batch('s5m', ARRAY[
    ROW('p', 0, 'e0', 'k', 1, ARRAY[1, 2])]::streamforge.measures_delivery[]);
SELECT count(*) FROM streamforge.append_measures_batch('s5m', ARRAY[
    ROW('p', NULL, 'e1', 'k', 2, ARRAY[3, 4])]::streamforge.measures_delivery[]);
SELECT partition, consumed_offset FROM streamforge.partitions('s5m');

-- docs/monitoring.md (issue 40 item 10): compact_target_load_ms = -1 means compact(p)
-- never compacts by itself; min_journal_bytes => 0 still does
SET streamforge.compact_target_load_ms = -1;
SELECT streamforge.compact('s5m') AS compacted;
SELECT streamforge.compact('s5m', min_journal_bytes => 0) AS compacted_anyway;
-- (a journal whose replay is at least a quarter of the snapshot's decode:
-- docs/monitoring.md, compact())
SELECT count(*) FROM streamforge.ingest_measures_batch('s5m', ARRAY(
    SELECT ROW('p', i, 'e' || i, 'k' || (i % 7), i, ARRAY[5, 6])::streamforge.measures_delivery
      FROM generate_series(2, 201) AS i));
SELECT streamforge.compact('s5m') AS compacted;
-- the same journal compacts with a target of 0 ms
SET streamforge.compact_target_load_ms = 0;
SELECT streamforge.compact('s5m') AS compacted;
RESET streamforge.compact_target_load_ms;
SELECT streamforge.drop_pipeline('s5m');


-- ------------------------------------------------------------------------
-- A default aggregate name of exactly 63 bytes
-- ------------------------------------------------------------------------
\c -
\set VERBOSITY sqlstate
-- docs/aggregates.md (issue 40 item 12): the default name is func_measure, a name of 1 to
-- 63 bytes: exactly 63 is accepted (and 64 refused)
SELECT streamforge.create_pipeline('s5n', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    measures => ARRAY[repeat('m', 51)],
    aggregates => ARRAY['stddev_samp(' || repeat('m', 51) || ')',
                        'var_samp(' || repeat('m', 51) || ')']);
SELECT name, octet_length(name) FROM streamforge.aggregate_columns('s5n') ORDER BY 2, 1;
SELECT count(*) FROM streamforge.ingest_measures('s5n', 'p', 0, 'e', 'k', 1, ARRAY[4]);
SELECT count(*) FROM streamforge.ingest_measures('s5n', 'p', 1, 'f', 'k', 2, ARRAY[6]);
SELECT aggregates FROM streamforge.live_aggregates('s5n');
SELECT streamforge.drop_pipeline('s5n');
SELECT streamforge.create_pipeline('s5n', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    measures => ARRAY[repeat('m', 52)],
    aggregates => ARRAY['stddev_samp(' || repeat('m', 52) || ')']);
-- an explicit name of 63 bytes too
SELECT streamforge.create_pipeline('s5n', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    measures => ARRAY['m'], aggregates => ARRAY['sum(m) AS ' || repeat('s', 63)]);
SELECT octet_length(name) FROM streamforge.aggregate_columns('s5n') WHERE name LIKE 's%';
SELECT streamforge.drop_pipeline('s5n');

