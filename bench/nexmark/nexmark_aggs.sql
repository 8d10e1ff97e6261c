-- bench/nexmark/nexmark_aggs.sql: Nexmark q5, q7, q15, q16 and q19 (issue 44
-- item 7): tables, create_aggregate queries, plain-SQL ways and the
-- comparison queries.  Loaded by bench/nexmark/run.sh after nexmark.sql
-- (which makes nx.src, nx.bid_table, the feeders and nx.cpu()).  The query
-- texts are the reference's (github.com/nexmark/nexmark,
-- nexmark-flink/src/main/resources/queries/q{5,7,15,16,19}.sql, commit
-- 6b3646c) in create_aggregate's dialect; README.md lists every deviation.
SET client_min_messages = warning;
SELECT nx.bid_table(q || w) FROM unnest(ARRAY['q5', 'q7', 'q15', 'q16', 'q19']) AS q,
                                 unnest(ARRAY['a', 'b', 'u']) AS w;

-- the ranks by price of q15/q16 (and q17)
CREATE FUNCTION nx.counts() RETURNS text LANGUAGE sql AS $$
    SELECT $c$count(*) AS total_bids,
     count(*) FILTER (WHERE price < 10000) AS rank1_bids,
     count(*) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bids,
     count(*) FILTER (WHERE price >= 1000000) AS rank3_bids,
     count(DISTINCT bidder) AS total_bidders,
     count(DISTINCT bidder) FILTER (WHERE price < 10000) AS rank1_bidders,
     count(DISTINCT bidder) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bidders,
     count(DISTINCT bidder) FILTER (WHERE price >= 1000000) AS rank3_bidders,
     count(DISTINCT auction) AS total_auctions,
     count(DISTINCT auction) FILTER (WHERE price < 10000) AS rank1_auctions,
     count(DISTINCT auction) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_auctions,
     count(DISTINCT auction) FILTER (WHERE price >= 1000000) AS rank3_auctions$c$ $$;
-- q16's `minute`: Flink's max(DATE_FORMAT(dateTime, 'HH:mm')) as the minute
-- of the day, an integer (measures are integers)
CREATE FUNCTION nx.minute_expr() RETURNS text LANGUAGE sql AS $$
    SELECT $m$(extract(hour FROM date_time) * 60 + extract(minute FROM date_time))::int$m$ $$;

-- The queries, in create_aggregate's dialect
CREATE FUNCTION nx.agg_query(q text, t text) RETURNS text LANGUAGE sql AS $$
    SELECT CASE q
    -- q5: hot items; Flink's join with the max per window is the top-1
    -- (ROW_NUMBER() ... <= 1) over count(*) per auction and HOP window
    WHEN 'q5' THEN format($q$SELECT * FROM (
        SELECT auction, count(*) AS num,
               ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY count(*) DESC) AS rn
          FROM nx.%I
         GROUP BY auction, streamforge.hop(date_time, interval '10 seconds', interval '2 seconds')) AS t
     WHERE rn <= 1$q$, t)
    -- q7: the highest bid per 10 s tumbling window; Flink's join of bid
    -- with the window's max(price) is max(price) and max_by of the columns
    WHEN 'q7' THEN format($q$SELECT max(price) AS price,
               streamforge.max_by(auction, price) AS auction,
               streamforge.max_by(bidder, price) AS bidder,
               streamforge.max_by(id, price) AS id
          FROM nx.%I
         GROUP BY streamforge.tumble(date_time, interval '10 seconds')$q$, t)
    WHEN 'q15' THEN format($q$SELECT %s
          FROM nx.%I
         GROUP BY streamforge.tumble(date_time, interval '1 day')$q$, nx.counts(), t)
    WHEN 'q16' THEN format($q$SELECT channel, max(%s) AS minute, %s
          FROM nx.%I
         GROUP BY channel, streamforge.tumble(date_time, interval '1 day')$q$, nx.minute_expr(), nx.counts(), t)
    -- q19: top 10 bids per auction, per 10 s tumbling window (the reference
    -- is unwindowed); a group is a bid (its event id), its price max(price)
    WHEN 'q19' THEN format($q$SELECT * FROM (
        SELECT auction, id, max(price) AS price,
               ROW_NUMBER() OVER (PARTITION BY window_start, window_end, auction ORDER BY max(price) DESC) AS rank_number
          FROM nx.%I
         GROUP BY auction, id, streamforge.tumble(date_time, interval '10 seconds')) AS t
     WHERE rank_number <= 10$q$, t)
    END $$;
SELECT streamforge.create_aggregate(q || w, nx.agg_query(q, q || w), out_of_orderness => interval '4 seconds')
  FROM unnest(ARRAY['q5', 'q7', 'q15', 'q16', 'q19']) AS q, unnest(ARRAY['a', 'b']) AS w;

-- way 3a: plain SQL, the query as one statement over the table (recompute).
-- The window columns are timestamps (UTC); ties are broken as streamforge
-- breaks them (ROW_NUMBER: grouping columns ascending; max_by: the smallest
-- value among the rows of the maximum), so that the rows can be compared.
CREATE FUNCTION nx.sql_query(q text, t text) RETURNS text LANGUAGE sql AS $$
    SELECT CASE q
    WHEN 'q5' THEN format($q$SELECT auction, window_start, window_start + interval '10 seconds' AS window_end, num, rn
        FROM (SELECT auction, window_start, num,
                     row_number() OVER (PARTITION BY window_start ORDER BY num DESC, auction) AS rn
                FROM (SELECT auction, w.window_start, count(*) AS num
                        FROM nx.%I AS b,
                             LATERAL (SELECT date_bin('2 seconds', b.date_time, 'epoch') - k * interval '2 seconds'
                                        FROM generate_series(0, 4) AS k) AS w(window_start)
                       GROUP BY auction, w.window_start) AS c) AS r
       WHERE rn <= 1$q$, t)
    WHEN 'q7' THEN format($q$SELECT window_start, window_start + interval '10 seconds' AS window_end, price,
                            min(auction) AS auction, min(bidder) AS bidder, min(id) AS id
        FROM (SELECT date_bin('10 seconds', date_time, 'epoch') AS window_start, auction, bidder, id, price,
                     max(price) OVER (PARTITION BY date_bin('10 seconds', date_time, 'epoch')) AS maxp
                FROM nx.%I) AS b
       WHERE price = maxp
       GROUP BY window_start, price$q$, t)
    WHEN 'q15' THEN format($q$SELECT date_trunc('day', date_time) AS window_start, %s
        FROM nx.%I GROUP BY date_trunc('day', date_time)$q$, nx.counts(), t)
    WHEN 'q16' THEN format($q$SELECT channel, date_trunc('day', date_time) AS window_start, max(%s) AS minute, %s
        FROM nx.%I GROUP BY channel, date_trunc('day', date_time)$q$, nx.minute_expr(), nx.counts(), t)
    WHEN 'q19' THEN format($q$SELECT auction, id, window_start, window_start + interval '10 seconds' AS window_end,
                             price, rank_number
        FROM (SELECT auction, id, date_bin('10 seconds', date_time, 'epoch') AS window_start, price,
                     row_number() OVER (PARTITION BY auction, date_bin('10 seconds', date_time, 'epoch')
                                        ORDER BY price DESC, id) AS rank_number
                FROM nx.%I) AS r
       WHERE rank_number <= 10$q$, t)
    END $$;

-- way 3b: plain SQL, incremental: each batch INSERTed into the table and
-- folded into result tables in the same transaction
CREATE TABLE nx.q5_up (auction bigint, window_start timestamp, num bigint,
    PRIMARY KEY (window_start, auction));
CREATE TABLE nx.q7_up (window_start timestamp PRIMARY KEY, price bigint, auction bigint,
    bidder bigint, id bigint);
CREATE TABLE nx.q15_up (window_start timestamp PRIMARY KEY, total_bids bigint, rank1_bids bigint,
    rank2_bids bigint, rank3_bids bigint, total_bidders bigint, rank1_bidders bigint,
    rank2_bidders bigint, rank3_bidders bigint, total_auctions bigint, rank1_auctions bigint,
    rank2_auctions bigint, rank3_auctions bigint);
CREATE TABLE nx.q16_up (channel text, LIKE nx.q15_up, minute int, PRIMARY KEY (channel, window_start));
-- the distinct sets of q15/q16: (channel, day, rank (0: any), value)
CREATE TABLE nx.q15_sb (day timestamp, r int, v bigint, PRIMARY KEY (day, r, v));
CREATE TABLE nx.q15_sa (LIKE nx.q15_sb INCLUDING ALL);
CREATE TABLE nx.q16_sb (channel text, day timestamp, r int, v bigint, PRIMARY KEY (channel, day, r, v));
CREATE TABLE nx.q16_sa (LIKE nx.q16_sb INCLUDING ALL);
CREATE TABLE nx.q19_up (auction bigint, window_start timestamp, id bigint, price bigint,
    PRIMARY KEY (auction, window_start, id));
CREATE FUNCTION nx.rank_of(price bigint) RETURNS int LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN price < 10000 THEN 1 WHEN price < 1000000 THEN 2 ELSE 3 END $$;

CREATE PROCEDURE nx.feed_upsert_aggs(q text, maxb int) LANGUAGE plpgsql AS $$
DECLARE b int;
BEGIN
    FOR b IN SELECT DISTINCT batch FROM nx.src WHERE batch < maxb ORDER BY 1 LOOP
        EXECUTE format('INSERT INTO nx.%I SELECT id, auction, bidder, price, channel, url, date_time, extra
                          FROM nx.src WHERE batch = $1 ORDER BY id', q || 'u') USING b;
        IF q = 'q5' THEN
            INSERT INTO nx.q5_up AS u
            SELECT auction, w.ws, count(*)
              FROM nx.src AS s,
                   LATERAL (SELECT date_bin('2 seconds', s.date_time, 'epoch') - k * interval '2 seconds'
                              FROM generate_series(0, 4) AS k) AS w(ws)
             WHERE batch = b GROUP BY 1, 2
            ON CONFLICT (window_start, auction) DO UPDATE SET num = u.num + excluded.num;
        ELSIF q = 'q7' THEN
            INSERT INTO nx.q7_up AS u
            SELECT ws, price, min(auction), min(bidder), min(id)
              FROM (SELECT date_bin('10 seconds', date_time, 'epoch') AS ws, auction, bidder, id, price,
                           max(price) OVER (PARTITION BY date_bin('10 seconds', date_time, 'epoch')) AS maxp
                      FROM nx.src WHERE batch = b) AS x
             WHERE price = maxp GROUP BY ws, price
            ON CONFLICT (window_start) DO UPDATE SET
                auction = CASE WHEN excluded.price > u.price THEN excluded.auction
                               ELSE least(u.auction, excluded.auction) END,
                bidder = CASE WHEN excluded.price > u.price THEN excluded.bidder
                              ELSE least(u.bidder, excluded.bidder) END,
                id = CASE WHEN excluded.price > u.price THEN excluded.id ELSE least(u.id, excluded.id) END,
                price = excluded.price
             WHERE excluded.price >= u.price;
        ELSIF q = 'q15' THEN
            WITH s AS (SELECT date_trunc('day', date_time) AS day, bidder, auction, price, nx.rank_of(price) AS r
                         FROM nx.src WHERE batch = b),
            nb AS (INSERT INTO nx.q15_sb SELECT DISTINCT day, rr, bidder FROM s, LATERAL (VALUES (0), (r)) AS x(rr)
                   ON CONFLICT DO NOTHING RETURNING day, r),
            na AS (INSERT INTO nx.q15_sa SELECT DISTINCT day, rr, auction FROM s, LATERAL (VALUES (0), (r)) AS x(rr)
                   ON CONFLICT DO NOTHING RETURNING day, r),
            c AS (SELECT day, count(*) AS n, count(*) FILTER (WHERE r = 1) AS n1,
                         count(*) FILTER (WHERE r = 2) AS n2, count(*) FILTER (WHERE r = 3) AS n3
                    FROM s GROUP BY day),
            cb AS (SELECT day, count(*) FILTER (WHERE r = 0) AS n, count(*) FILTER (WHERE r = 1) AS n1,
                          count(*) FILTER (WHERE r = 2) AS n2, count(*) FILTER (WHERE r = 3) AS n3
                     FROM nb GROUP BY day),
            ca AS (SELECT day, count(*) FILTER (WHERE r = 0) AS n, count(*) FILTER (WHERE r = 1) AS n1,
                          count(*) FILTER (WHERE r = 2) AS n2, count(*) FILTER (WHERE r = 3) AS n3
                     FROM na GROUP BY day)
            INSERT INTO nx.q15_up AS u
            SELECT c.day, c.n, c.n1, c.n2, c.n3, coalesce(cb.n, 0), coalesce(cb.n1, 0), coalesce(cb.n2, 0),
                   coalesce(cb.n3, 0), coalesce(ca.n, 0), coalesce(ca.n1, 0), coalesce(ca.n2, 0), coalesce(ca.n3, 0)
              FROM c LEFT JOIN cb USING (day) LEFT JOIN ca USING (day)
            ON CONFLICT (window_start) DO UPDATE SET
                total_bids = u.total_bids + excluded.total_bids, rank1_bids = u.rank1_bids + excluded.rank1_bids,
                rank2_bids = u.rank2_bids + excluded.rank2_bids, rank3_bids = u.rank3_bids + excluded.rank3_bids,
                total_bidders = u.total_bidders + excluded.total_bidders,
                rank1_bidders = u.rank1_bidders + excluded.rank1_bidders,
                rank2_bidders = u.rank2_bidders + excluded.rank2_bidders,
                rank3_bidders = u.rank3_bidders + excluded.rank3_bidders,
                total_auctions = u.total_auctions + excluded.total_auctions,
                rank1_auctions = u.rank1_auctions + excluded.rank1_auctions,
                rank2_auctions = u.rank2_auctions + excluded.rank2_auctions,
                rank3_auctions = u.rank3_auctions + excluded.rank3_auctions;
        ELSIF q = 'q16' THEN
            WITH s AS (SELECT channel, date_trunc('day', date_time) AS day, bidder, auction, price,
                              nx.rank_of(price) AS r,
                              (extract(hour FROM date_time) * 60 + extract(minute FROM date_time))::int AS m
                         FROM nx.src WHERE batch = b),
            nb AS (INSERT INTO nx.q16_sb SELECT DISTINCT channel, day, rr, bidder FROM s, LATERAL (VALUES (0), (r)) AS x(rr)
                   ON CONFLICT DO NOTHING RETURNING channel, day, r),
            na AS (INSERT INTO nx.q16_sa SELECT DISTINCT channel, day, rr, auction FROM s, LATERAL (VALUES (0), (r)) AS x(rr)
                   ON CONFLICT DO NOTHING RETURNING channel, day, r),
            c AS (SELECT channel, day, count(*) AS n, count(*) FILTER (WHERE r = 1) AS n1,
                         count(*) FILTER (WHERE r = 2) AS n2, count(*) FILTER (WHERE r = 3) AS n3, max(m) AS m
                    FROM s GROUP BY channel, day),
            cb AS (SELECT channel, day, count(*) FILTER (WHERE r = 0) AS n, count(*) FILTER (WHERE r = 1) AS n1,
                          count(*) FILTER (WHERE r = 2) AS n2, count(*) FILTER (WHERE r = 3) AS n3
                     FROM nb GROUP BY channel, day),
            ca AS (SELECT channel, day, count(*) FILTER (WHERE r = 0) AS n, count(*) FILTER (WHERE r = 1) AS n1,
                          count(*) FILTER (WHERE r = 2) AS n2, count(*) FILTER (WHERE r = 3) AS n3
                     FROM na GROUP BY channel, day)
            INSERT INTO nx.q16_up AS u
            SELECT c.channel, c.day, c.n, c.n1, c.n2, c.n3, coalesce(cb.n, 0), coalesce(cb.n1, 0),
                   coalesce(cb.n2, 0), coalesce(cb.n3, 0), coalesce(ca.n, 0), coalesce(ca.n1, 0),
                   coalesce(ca.n2, 0), coalesce(ca.n3, 0), c.m
              FROM c LEFT JOIN cb USING (channel, day) LEFT JOIN ca USING (channel, day)
            ON CONFLICT (channel, window_start) DO UPDATE SET
                minute = greatest(u.minute, excluded.minute),
                total_bids = u.total_bids + excluded.total_bids, rank1_bids = u.rank1_bids + excluded.rank1_bids,
                rank2_bids = u.rank2_bids + excluded.rank2_bids, rank3_bids = u.rank3_bids + excluded.rank3_bids,
                total_bidders = u.total_bidders + excluded.total_bidders,
                rank1_bidders = u.rank1_bidders + excluded.rank1_bidders,
                rank2_bidders = u.rank2_bidders + excluded.rank2_bidders,
                rank3_bidders = u.rank3_bidders + excluded.rank3_bidders,
                total_auctions = u.total_auctions + excluded.total_auctions,
                rank1_auctions = u.rank1_auctions + excluded.rank1_auctions,
                rank2_auctions = u.rank2_auctions + excluded.rank2_auctions,
                rank3_auctions = u.rank3_auctions + excluded.rank3_auctions;
        ELSIF q = 'q19' THEN
            -- the batch's bids join the kept ones, then what falls below
            -- the 10th of its (auction, window) is deleted
            INSERT INTO nx.q19_up
            SELECT auction, date_bin('10 seconds', date_time, 'epoch'), id, price FROM nx.src WHERE batch = b;
            DELETE FROM nx.q19_up AS u
             USING (SELECT auction, window_start, id,
                           row_number() OVER (PARTITION BY auction, window_start ORDER BY price DESC, id) AS rn
                      FROM nx.q19_up
                     WHERE (auction, window_start) IN (SELECT DISTINCT auction, date_bin('10 seconds', date_time, 'epoch')
                                                         FROM nx.src WHERE batch = b)) AS r
             WHERE r.rn > 10 AND u.auction = r.auction AND u.window_start = r.window_start AND u.id = r.id;
        END IF;
        COMMIT;
    END LOOP;
    -- the incremental ways of q5 and q19 keep what the top is computed from;
    -- q5's top-1 per window is read at the end (its cost is in the way)
    IF q = 'q5' THEN
        CREATE TABLE nx.q5_upr AS
        SELECT auction, window_start, window_start + interval '10 seconds' AS window_end, num, rn
          FROM (SELECT *, row_number() OVER (PARTITION BY window_start ORDER BY num DESC, auction) AS rn
                  FROM nx.q5_up) AS x WHERE rn <= 1;
    ELSIF q = 'q19' THEN
        CREATE TABLE nx.q19_upr AS
        SELECT auction, id, window_start, window_start + interval '10 seconds' AS window_end, price,
               row_number() OVER (PARTITION BY auction, window_start ORDER BY price DESC, id) AS rank_number
          FROM nx.q19_up;
    END IF;
END $$;

CREATE FUNCTION nx.count_cols() RETURNS text LANGUAGE sql AS $$
    SELECT 'total_bids, rank1_bids, rank2_bids, rank3_bids, total_bidders, rank1_bidders, rank2_bidders, '
           'rank3_bidders, total_auctions, rank1_auctions, rank2_auctions, rank3_auctions' $$;

-- The rows each way gives, as comparable text-free queries (window bounds
-- as UTC timestamps); the agg and batch ways read their views' final rows
CREATE FUNCTION nx.rows_of(q text, way text) RETURNS text LANGUAGE sql AS $$
    SELECT CASE
    WHEN way IN ('a', 'b') THEN
        format('SELECT %s FROM public.%I WHERE final',
               CASE q
               WHEN 'q5' THEN 'auction, (window_start AT TIME ZONE ''UTC'')::timestamp, (window_end AT TIME ZONE ''UTC'')::timestamp, num, rn'
               WHEN 'q7' THEN '(window_start AT TIME ZONE ''UTC'')::timestamp, (window_end AT TIME ZONE ''UTC'')::timestamp, price, auction, bidder, id'
               WHEN 'q15' THEN '(window_start AT TIME ZONE ''UTC'')::timestamp, ' || nx.count_cols()
               WHEN 'q16' THEN 'channel, (window_start AT TIME ZONE ''UTC'')::timestamp, minute, ' || nx.count_cols()
               WHEN 'q19' THEN 'auction, id, (window_start AT TIME ZONE ''UTC'')::timestamp, (window_end AT TIME ZONE ''UTC'')::timestamp, price, rank_number'
               END,
               q || way || CASE WHEN q IN ('q5', 'q19') THEN '_top' ELSE '' END)
    WHEN way = 'sql' THEN format('SELECT * FROM nx.%I', q || '_res')
    WHEN way = 'upsert' THEN
        CASE q
        WHEN 'q5' THEN 'SELECT * FROM nx.q5_upr'
        WHEN 'q7' THEN 'SELECT window_start, window_start + interval ''10 seconds'', price, auction, bidder, id FROM nx.q7_up'
        WHEN 'q15' THEN 'SELECT window_start, ' || nx.count_cols() || ' FROM nx.q15_up'
        WHEN 'q16' THEN 'SELECT channel, window_start, minute, ' || nx.count_cols() || ' FROM nx.q16_up'
        WHEN 'q19' THEN 'SELECT * FROM nx.q19_upr WHERE rank_number <= 10'
        END
    END $$;
-- The reference's own forms where they differ from the top-1 / max_by
-- form (ties): q5's join keeps every auction of the window's maximum count,
-- q7's join every bid of the maximum price with dateTime BETWEEN
-- window_end - 10 s AND window_end (both bounds included); counted, to
-- show how often the deviation matters on the generated stream
CREATE FUNCTION nx.reference_rows(q text, t text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
    IF q = 'q5' THEN
        EXECUTE format($q$SELECT count(*) FROM (
            SELECT auction, window_start, num, max(num) OVER (PARTITION BY window_start) AS maxn
              FROM (SELECT auction, w.window_start, count(*) AS num
                      FROM nx.%I AS b,
                           LATERAL (SELECT date_bin('2 seconds', b.date_time, 'epoch') - k * interval '2 seconds'
                                      FROM generate_series(0, 4) AS k) AS w(window_start)
                     GROUP BY auction, w.window_start) AS c) AS x WHERE num >= maxn$q$, t) INTO n;
    ELSIF q = 'q7' THEN
        EXECUTE format($q$SELECT count(*) FROM nx.%I AS b
            JOIN (SELECT max(price) AS maxprice, date_bin('10 seconds', date_time, 'epoch') + interval '10 seconds' AS dt
                    FROM nx.%I GROUP BY 2) AS b1
              ON b.price = b1.maxprice AND b.date_time BETWEEN b1.dt - interval '10 seconds' AND b1.dt$q$, t, t) INTO n;
    END IF;
    RETURN n;
END $$;
