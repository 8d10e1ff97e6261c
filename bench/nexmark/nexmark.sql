-- bench/nexmark/nexmark.sql: tables, queries and drivers of the Nexmark
-- benchmark (bench/nexmark/run.sh, README.md).  psql variables: csv (the
-- generator's bid file), clk (clock ticks per second).
CREATE EXTENSION IF NOT EXISTS streamforge;
SET client_min_messages = warning;
CREATE SCHEMA nx;

-- the generated bids, numbered into INSERT batches of 10,000
CREATE TABLE nx.gen (id bigint, auction bigint, bidder bigint, price bigint,
                     channel text, url text, date_time timestamp(3), extra text);
COPY nx.gen FROM :'csv' (FORMAT csv);
CREATE TABLE nx.src AS
    SELECT ((row_number() OVER (ORDER BY id)) - 1) / 10000 AS batch, g.*
      FROM nx.gen AS g;
CREATE INDEX ON nx.src (batch);
DROP TABLE nx.gen;
ANALYZE nx.src;

-- Flink's bid table (nexmark-flink ddl), with the event number as primary key
CREATE FUNCTION nx.bid_table(t text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('CREATE TABLE nx.%I (id bigint PRIMARY KEY, auction bigint NOT NULL,
        bidder bigint NOT NULL, price bigint NOT NULL, channel text, url text,
        date_time timestamp(3) NOT NULL, extra text)', t);
END $$;
SELECT nx.bid_table(t) FROM unnest(ARRAY['plain', 'q11a', 'q11b', 'q17a', 'q17b', 'q11u', 'q17u']) AS t;

-- CPU time (user + system) of this backend, in seconds, and its peak RSS (kB)
CREATE TABLE nx.cfg AS SELECT :clk::float8 AS clk;
CREATE FUNCTION nx.cpu() RETURNS float8 LANGUAGE sql AS $$
    SELECT (split_part(s, ' ', 12)::bigint + split_part(s, ' ', 13)::bigint)::float8 / (SELECT clk FROM nx.cfg)
      FROM (SELECT split_part(pg_read_file('/proc/self/stat'), ') ', 2) AS s) AS x $$;
CREATE FUNCTION nx.hwm() RETURNS bigint LANGUAGE sql AS $$
    SELECT substring(pg_read_file('/proc/self/status') FROM 'VmHWM:\s*(\d+)')::bigint $$;

-- The queries (Flink's q11 and q17, nexmark-flink/src/main/resources/queries)
CREATE FUNCTION nx.q11(t text) RETURNS text LANGUAGE sql AS $$
    SELECT format($q$SELECT bidder, count(*) AS bid_count FROM nx.%I
        GROUP BY bidder, streamforge.session(date_time, interval '10 seconds')$q$, t) $$;
CREATE FUNCTION nx.q17(t text) RETURNS text LANGUAGE sql AS $$
    SELECT format($q$SELECT auction, count(*) AS total_bids,
        count(*) FILTER (WHERE price < 10000) AS rank1_bids,
        count(*) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bids,
        count(*) FILTER (WHERE price >= 1000000) AS rank3_bids,
        min(price) AS min_price, max(price) AS max_price,
        avg(price) AS avg_price, sum(price) AS sum_price
      FROM nx.%I GROUP BY auction, streamforge.tumble(date_time, interval '1 day')$q$, t) $$;
SELECT streamforge.create_aggregate(n, CASE WHEN n LIKE 'q11%' THEN nx.q11(n) ELSE nx.q17(n) END,
                                    out_of_orderness => interval '4 seconds')
  FROM unnest(ARRAY['q11a', 'q11b', 'q17a', 'q17b']) AS n;

-- way 1: INSERT batches of 10,000 rows into the table (plain: no aggregate)
-- (batches minb .. maxb - 1, all by default)
CREATE PROCEDURE nx.feed_insert(t text, maxb int DEFAULT NULL, minb int DEFAULT 0) LANGUAGE plpgsql AS $$
DECLARE b int;
BEGIN
    FOR b IN SELECT DISTINCT batch FROM nx.src WHERE (maxb IS NULL OR batch < maxb) AND batch >= minb ORDER BY 1 LOOP
        EXECUTE format('INSERT INTO nx.%I SELECT id, auction, bidder, price, channel, url, date_time, extra
                          FROM nx.src WHERE batch = $1 ORDER BY id', t) USING b;
        COMMIT;
    END LOOP;
END $$;

-- way 2: the batch call the attachment's trigger makes, on arrays built
-- beforehand (untimed) with the trigger's own expressions (pg_trigger.tgargs)
CREATE FUNCTION nx.build_batches(p text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE a text[]; nargs int; meas boolean;
BEGIN
    SELECT (SELECT array_agg(replace(x, '\\', '\') ORDER BY o)
              FROM unnest(string_to_array(encode(t.tgargs, 'escape'), '\000')) WITH ORDINALITY AS u(x, o)), t.tgnargs
      INTO a, nargs FROM pg_trigger AS t
     WHERE t.tgrelid = format('nx.%I', p)::regclass AND NOT t.tgisinternal
       AND t.tgtype & 4 = 4;        -- the INSERT trigger
    meas := nargs = 11;
    EXECUTE format('CREATE TABLE nx.%I AS SELECT batch, ARRAY(SELECT %s FROM nx.src AS new_rows
                        WHERE new_rows.batch = b.batch %s ORDER BY id) AS d
                      FROM (SELECT DISTINCT batch FROM nx.src) AS b',
                   'arr_' || p,
                   CASE WHEN meas THEN format('ROW(%s, NULL::int8, %s, %s, %s, %s)::streamforge.measures_delivery',
                                              a[2], a[3], a[4], a[5], a[6])
                        ELSE format('ROW(%s, %s, %s, %s, %s)::streamforge.event', a[2], a[3], a[4], a[5], a[6]) END,
                   CASE WHEN nargs >= 10 AND a[10] <> '' THEN format('AND (%s)', a[10]) ELSE '' END);
END $$;
CREATE PROCEDURE nx.feed_batch(p text, maxb int DEFAULT NULL, minb int DEFAULT 0) LANGUAGE plpgsql AS $$
DECLARE r record; f text; n bigint;
BEGIN
    f := CASE WHEN streamforge_internal.pipeline_nmeasures(p) IS NULL THEN 'append_batch'
              ELSE 'append_measures_batch' END;
    FOR r IN EXECUTE format('SELECT batch, d FROM nx.%I WHERE ($1 IS NULL OR batch < $1) AND batch >= $2 ORDER BY batch', 'arr_' || p) USING maxb, minb LOOP
        EXECUTE format('SELECT count(*) FROM streamforge.%I($1, $2)', f) INTO n USING p, r.d;
        COMMIT;
    END LOOP;
END $$;

-- way 3a: plain SQL, a batch GROUP BY over the table (recompute)
CREATE FUNCTION nx.q11_sql(t text) RETURNS text LANGUAGE sql AS $$
    SELECT format($q$SELECT bidder, min(date_time) AS window_start,
                            max(date_time) + interval '10 seconds' AS window_end, count(*) AS bid_count
        FROM (SELECT bidder, date_time, sum(new) OVER (PARTITION BY bidder ORDER BY date_time
                                                       ROWS UNBOUNDED PRECEDING) AS s
                FROM (SELECT bidder, date_time,
                             CASE WHEN date_time - lag(date_time) OVER (PARTITION BY bidder ORDER BY date_time)
                                       <= interval '10 seconds' THEN 0 ELSE 1 END AS new
                        FROM nx.%I) AS x) AS y
       GROUP BY bidder, s$q$, t) $$;
CREATE FUNCTION nx.q17_sql(t text) RETURNS text LANGUAGE sql AS $$
    SELECT format($q$SELECT auction, date_trunc('day', date_time) AS window_start, count(*) AS total_bids,
        count(*) FILTER (WHERE price < 10000) AS rank1_bids,
        count(*) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bids,
        count(*) FILTER (WHERE price >= 1000000) AS rank3_bids,
        min(price) AS min_price, max(price) AS max_price,
        avg(price) AS avg_price, sum(price) AS sum_price
      FROM nx.%I GROUP BY auction, date_trunc('day', date_time)$q$, t) $$;

-- way 3b: plain SQL, incremental: each batch INSERTed into the table and
-- upserted into a result table in the same transaction
CREATE TABLE nx.q17_up (auction bigint, day timestamp, total_bids bigint, rank1_bids bigint,
    rank2_bids bigint, rank3_bids bigint, min_price bigint, max_price bigint, sum_price numeric,
    PRIMARY KEY (auction, day));
CREATE TABLE nx.q11_up (bidder bigint, s timestamp(3), last timestamp(3), bid_count bigint,
    PRIMARY KEY (bidder, s));
-- (batches minb .. maxb - 1, all by default)
CREATE PROCEDURE nx.feed_upsert(q text, maxb int DEFAULT NULL, minb int DEFAULT 0) LANGUAGE plpgsql AS $$
DECLARE b int;
BEGIN
    FOR b IN SELECT DISTINCT batch FROM nx.src WHERE (maxb IS NULL OR batch < maxb) AND batch >= minb ORDER BY 1 LOOP
        EXECUTE format('INSERT INTO nx.%I SELECT id, auction, bidder, price, channel, url, date_time, extra
                          FROM nx.src WHERE batch = $1 ORDER BY id', q || 'u') USING b;
        IF q = 'q17' THEN
            INSERT INTO nx.q17_up AS u
            SELECT auction, date_trunc('day', date_time), count(*),
                   count(*) FILTER (WHERE price < 10000),
                   count(*) FILTER (WHERE price >= 10000 AND price < 1000000),
                   count(*) FILTER (WHERE price >= 1000000),
                   min(price), max(price), sum(price)
              FROM nx.src WHERE batch = b GROUP BY 1, 2
            ON CONFLICT (auction, day) DO UPDATE SET
                total_bids = u.total_bids + excluded.total_bids,
                rank1_bids = u.rank1_bids + excluded.rank1_bids,
                rank2_bids = u.rank2_bids + excluded.rank2_bids,
                rank3_bids = u.rank3_bids + excluded.rank3_bids,
                min_price = least(u.min_price, excluded.min_price),
                max_price = greatest(u.max_price, excluded.max_price),
                sum_price = u.sum_price + excluded.sum_price;
        ELSE
            -- sessions: a batch's first session of a bidder continues the
            -- bidder's last stored one when within the gap (events are in order)
            WITH ev AS (SELECT bidder, date_time AS t FROM nx.src WHERE batch = b),
            o AS (SELECT DISTINCT ON (u.bidder) u.bidder, u.s, u.last FROM nx.q11_up AS u
                   WHERE u.bidder IN (SELECT DISTINCT bidder FROM ev) ORDER BY u.bidder, u.s DESC),
            x AS (SELECT ev.bidder, ev.t, o.s AS os,
                         coalesce(lag(ev.t) OVER (PARTITION BY ev.bidder ORDER BY ev.t), o.last) AS p
                    FROM ev LEFT JOIN o ON o.bidder = ev.bidder),
            z AS (SELECT *, sum(CASE WHEN p IS NULL OR t - p > interval '10 seconds' THEN 1 ELSE 0 END)
                              OVER (PARTITION BY bidder ORDER BY t ROWS UNBOUNDED PRECEDING) AS k FROM x)
            INSERT INTO nx.q11_up AS u
            SELECT bidder, CASE WHEN k = 0 THEN min(os) ELSE min(t) END, max(t), count(*)
              FROM z GROUP BY bidder, k
            ON CONFLICT (bidder, s) DO UPDATE SET last = excluded.last, bid_count = u.bid_count + excluded.bid_count;
        END IF;
        COMMIT;
    END LOOP;
END $$;
