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
