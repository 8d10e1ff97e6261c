-- A reference consumer of streamforge's durable outputs: the algorithm of
-- docs/outputs.md, "Consuming the outputs", in plain SQL.  It keeps a copy
-- of a pipeline's results in its own table and a bookmark (epoch, seq):
--
--   1. read the outputs' current epoch (streamforge.output_config.epoch);
--   2. if it is not the bookmark's epoch (or there is no bookmark yet),
--      rebuild: copy streamforge.results and set the bookmark to
--      (epoch, the pipeline's last seq);
--   3. else apply the changelog rows with seq > the bookmark's seq in seq
--      order, by address (window_name, key, window_start, window_end): a
--      retract deletes the row, an upsert or a final writes it (an upsert
--      may repeat: always write, never insert blindly), and move the
--      bookmark to the last seq applied.
--
-- Each call runs in one REPEATABLE READ transaction, so that the epoch,
-- the results and the changelog it reads are one consistent state, and the
-- copy and the bookmark commit together.  test/t/080_docs.pl runs this
-- file (the demo at the end fails if the copy ever differs from
-- streamforge.results, also across a restore() that rewinds the seq
-- numbers).  Run it with psql in a database that has the extension.

CREATE TABLE consumer_bookmark (
    pipeline text PRIMARY KEY,
    epoch bigint NOT NULL,
    seq bigint NOT NULL
);

CREATE TABLE consumer_rows (
    pipeline text,
    window_name text,
    key text,
    window_start bigint,
    window_end bigint,
    count bigint NOT NULL,
    sum numeric NOT NULL,
    min bigint NOT NULL,
    max bigint NOT NULL,
    final boolean NOT NULL,
    PRIMARY KEY (pipeline, window_name, key, window_start, window_end)
);

-- One poll of pipeline p; says what it did
CREATE FUNCTION consume(p text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    b consumer_bookmark;
    cur bigint;
    c streamforge.changelog;
    n int := 0;
BEGIN
    IF current_setting('transaction_isolation') = 'read committed' THEN
        RAISE EXCEPTION 'consume() must run in a REPEATABLE READ transaction';
    END IF;
    SELECT o.epoch INTO cur FROM streamforge.output_config AS o WHERE o.pipeline = p;
    SELECT * INTO b FROM consumer_bookmark AS k WHERE k.pipeline = p FOR UPDATE;

    IF b.pipeline IS NULL OR b.epoch <> cur THEN
        -- a new epoch (or the first poll): rebuild from the results table
        DELETE FROM consumer_rows AS r WHERE r.pipeline = p;
        INSERT INTO consumer_rows
        SELECT r.pipeline, r.window_name, r.key, r.window_start, r.window_end,
               r.count, r.sum, r.min, r.max, r.final
          FROM streamforge.results AS r WHERE r.pipeline = p;
        INSERT INTO consumer_bookmark
        VALUES (p, cur, (streamforge.stats(p)).changes_emitted)
        ON CONFLICT (pipeline) DO UPDATE SET epoch = excluded.epoch, seq = excluded.seq;
        RETURN format('rebuilt in epoch %s', cur);
    END IF;

    FOR c IN SELECT * FROM streamforge.changelog AS l
              WHERE l.pipeline = p AND l.seq > b.seq ORDER BY l.seq LOOP
        IF c.op = 'retract' THEN
            DELETE FROM consumer_rows AS r
             WHERE (r.pipeline, r.window_name, r.key, r.window_start, r.window_end)
                   = (p, c.window_name, c.key, c.window_start, c.window_end);
        ELSE
            INSERT INTO consumer_rows
            VALUES (p, c.window_name, c.key, c.window_start, c.window_end,
                    c.count, c.sum, c.min, c.max, c.op = 'final')
            ON CONFLICT (pipeline, window_name, key, window_start, window_end) DO UPDATE
               SET count = excluded.count, sum = excluded.sum, min = excluded.min,
                   max = excluded.max, final = excluded.final;
        END IF;
        n := n + 1;
        b.seq := c.seq;
    END LOOP;
    UPDATE consumer_bookmark AS k SET seq = b.seq WHERE k.pipeline = p;
    RETURN format('applied %s changes', n);
END $$;

-- ----------------------------------------------------------------
-- The demo: a pipeline in 'update+final' mode, a consumer polling it, a
-- restore that rewinds the seq numbers
-- ----------------------------------------------------------------

-- Fails unless the copy is exactly the results table
CREATE FUNCTION consumer_check(p text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS ((SELECT window_name, key, window_start, window_end, count, sum, min, max, final
                  FROM consumer_rows WHERE pipeline = p
                EXCEPT
                SELECT window_name, key, window_start, window_end, count, sum, min, max, final
                  FROM streamforge.results WHERE pipeline = p)
               UNION ALL
               (SELECT window_name, key, window_start, window_end, count, sum, min, max, final
                  FROM streamforge.results WHERE pipeline = p
                EXCEPT
                SELECT window_name, key, window_start, window_end, count, sum, min, max, final
                  FROM consumer_rows WHERE pipeline = p)) THEN
        RAISE EXCEPTION 'the consumer''s copy of "%" differs from streamforge.results', p;
    END IF;
    RETURN 'the copy agrees';
END $$;

SELECT streamforge.create_pipeline('consumer_demo', ARRAY['p'],
    ARRAY[streamforge.fixed('per_10', 10)], lateness => 5, emit => 'update+final');
SELECT streamforge.configure_outputs('consumer_demo');

BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT consume('consumer_demo');            -- rebuilt (first poll)
COMMIT;

SELECT count(*) FROM streamforge.ingest('consumer_demo', 'p', 0, 'a', 'k', 1, 10);
SELECT count(*) FROM streamforge.advance('consumer_demo', 'p', 10);
CREATE TEMP TABLE consumer_cp AS SELECT streamforge.checkpoint('consumer_demo') AS c;
SELECT count(*) FROM streamforge.ingest('consumer_demo', 'p', 1, 'b', 'k', 6, 20);
SELECT count(*) FROM streamforge.advance('consumer_demo', 'p', 30);

BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT consume('consumer_demo');            -- applied 4 changes
SELECT consumer_check('consumer_demo');
COMMIT;

-- restore() rewinds to seq 1 and starts a new epoch; the next changes
-- reuse seq 2, 3, ... with other values
SELECT streamforge.restore('consumer_demo', (SELECT c FROM consumer_cp));
SELECT count(*) FROM streamforge.ingest('consumer_demo', 'p', 1, 'c', 'j', 7, 7);

BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT consume('consumer_demo');            -- rebuilt in the new epoch
SELECT consumer_check('consumer_demo');
COMMIT;

SELECT count(*) FROM streamforge.advance('consumer_demo', 'p', 40);
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT consume('consumer_demo');            -- the final rows
SELECT consumer_check('consumer_demo');
COMMIT;
SELECT window_start, key, count, sum, final FROM consumer_rows ORDER BY 1, 2;

SELECT streamforge.drop_pipeline('consumer_demo');
DROP FUNCTION consumer_check(text);
DROP FUNCTION consume(text);
DROP TABLE consumer_rows, consumer_bookmark;
