-- max_by(value, order) and min_by(value, order) (0.4.0, issue 44, item 3;
-- docs/aggregates.md, "max_by and min_by"): the value of the event with
-- the greatest (smallest) order per window; of equal orders the smallest
-- value; events with a NULL value or a NULL order skipped.  Fixed,
-- sliding and session windows, a late correction of an emitted row, a
-- session merge, a rollback, the checkpoint round trip (the words of a
-- fixed state: format version 2 as before) and bad spellings.
SELECT streamforge.create_pipeline('mb', ARRAY['p0'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 10, 5),
          streamforge.session('g', 5)],
    lateness => 20,
    measures => ARRAY['bid', 'price', 'qty NULL'],
    aggregates => ARRAY['count', 'max_by(bid, price) AS top_bid',
                        'min_by(bid, price)', 'max_by(bid, qty)',
                        'min_by(qty, price) AS qty_of_cheapest']);
SELECT * FROM streamforge.aggregate_columns('mb');

-- key k, t = 1..4: (bid, price, qty) = (101, 50, 3), (102, 70, NULL),
-- (103, 70, 1), (104, 20, 2)
SELECT count(*) FROM streamforge.ingest_measures_batch('mb', ARRAY[
    ROW('p0', 0, 'e1', 'k', 1, ARRAY[101, 50, 3])::streamforge.measures_delivery,
    ROW('p0', 1, 'e2', 'k', 2, ARRAY[103, 70, NULL])::streamforge.measures_delivery,
    ROW('p0', 2, 'e3', 'k', 3, ARRAY[102, 70, 1])::streamforge.measures_delivery,
    ROW('p0', 3, 'e4', 'k', 4, ARRAY[104, 20, 2])::streamforge.measures_delivery]);
-- f [0,10): top_bid: price 70 twice (bids 103, 102): the smallest, 102;
-- min_by_bid_price: price 20: 104; max_by_bid_qty: qty 3: 101 (e2's NULL
-- qty skipped); qty_of_cheapest: price 20: qty 2
SELECT window_name, key, window_start, window_end, count, aggregates
FROM streamforge.live_aggregates('mb') ORDER BY window_name, key, window_start;

-- sessions: t=20 (bid 1, price 5), t=30 (bid 2, price 9): two sessions;
-- t=25 (bid 3, price 9) merges them: [20,35), price 9 twice, bids 2 and
-- 3: top_bid 2; the cheapest price 5: bid 1
SELECT count(*) FROM streamforge.ingest_measures_batch('mb', ARRAY[
    ROW('p0', 4, 'e5', 'k', 20, ARRAY[1, 5, NULL])::streamforge.measures_delivery,
    ROW('p0', 5, 'e6', 'k', 30, ARRAY[2, 9, NULL])::streamforge.measures_delivery]);
SELECT window_start, window_end, count, aggregates
FROM streamforge.live_aggregates('mb') WHERE window_name = 'g' ORDER BY window_start;
SELECT count(*) FROM streamforge.ingest_measures('mb', 'p0', 6, 'e7', 'k', 25, ARRAY[3, 9, NULL]);
SELECT window_start, window_end, count, aggregates
FROM streamforge.live_aggregates('mb') WHERE window_name = 'g' ORDER BY window_start;

-- a late correction of an emitted row: the watermark passes 10, f [0,10)
-- is emitted; a late event of price 90 (bid 100) changes top_bid to 100
-- and max_by_bid_qty stays 101 (qty 3 > 0): a retraction and an upsert
SELECT streamforge.configure_outputs('mb', changelog => true);
SELECT count(*) FROM streamforge.advance('mb', 'p0', 12);
SELECT count(*) FROM streamforge.ingest_measures('mb', 'p0', 7, 'e8', 'k', 5, ARRAY[100, 90, 0]);
SELECT seq, op, window_start, window_end, count, aggregates FROM streamforge.changelog
WHERE pipeline = 'mb' AND window_name = 'f' ORDER BY seq;

-- a rollback leaves the state as it was
BEGIN;
SELECT count(*) FROM streamforge.ingest_measures('mb', 'p0', 8, 'e9', 'k', 6, ARRAY[1000, 1000, 1000]);
SELECT aggregates FROM streamforge.live_aggregates('mb') WHERE window_name = 'f' AND window_start = 0;
ROLLBACK;
SELECT aggregates FROM streamforge.live_aggregates('mb') WHERE window_name = 'f' AND window_start = 0;

-- the checkpoint round trip: same bytes, same values
CREATE TABLE mb_ck AS SELECT streamforge.checkpoint('mb') AS c;
SELECT get_byte(c, 9) AS format_version FROM mb_ck;
SELECT streamforge.restore('mb', (SELECT c FROM mb_ck));
SELECT streamforge.checkpoint('mb') = (SELECT c FROM mb_ck) AS same_bytes;
SELECT window_name, window_start, aggregates
FROM streamforge.live_aggregates('mb') ORDER BY window_name, window_start;
-- the definition spells them back
SELECT streamforge.definition('mb') -> 'aggregates' AS aggregates;

-- bad spellings
SELECT streamforge.create_pipeline('mb_bad', ARRAY['p0'], ARRAY[streamforge.fixed('f', 10)],
    measures => ARRAY['a', 'b'], aggregates => ARRAY['max_by(a)']);
SELECT streamforge.create_pipeline('mb_bad', ARRAY['p0'], ARRAY[streamforge.fixed('f', 10)],
    measures => ARRAY['a', 'b'], aggregates => ARRAY['max_by(a, c)']);
SELECT streamforge.create_pipeline('mb_bad', ARRAY['p0'], ARRAY[streamforge.fixed('f', 10)],
    measures => ARRAY['a', 'b'], aggregates => ARRAY['min_by(a, )']);

DROP TABLE mb_ck;
SELECT streamforge.drop_pipeline('mb');
