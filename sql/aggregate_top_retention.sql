-- Top-N per window (issue 44, item 4) and results_retention: the rows the
-- trim drops leave <name>_top with a 'delete' in streamforge.top_changelog
-- (streamforge_internal.aggregate_top_trim), also when the call that
-- trims did not change their windows (before branch h44b they left the
-- view without one) and when configure_outputs turns the trim on.
-- Replaying top_changelog gives <name>_top after every step.
SET client_min_messages = warning;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, MDY';
CREATE TABLE bids (id bigserial PRIMARY KEY, auction integer NOT NULL,
                   price integer NOT NULL, ts timestamptz NOT NULL);

-- the replay of the changelog (as sql/random_aggregate_top.sql's),
-- compared with the view: the rows of either that the other lacks
CREATE TABLE replay (pipeline text, id jsonb, rank bigint, row jsonb);
CREATE FUNCTION replay_diff(p text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    c record;
    rid jsonb;
BEGIN
    DELETE FROM replay AS r WHERE r.pipeline = p;
    FOR c IN SELECT * FROM streamforge.top_changelog AS l WHERE l.pipeline = p ORDER BY l.seq LOOP
        rid := jsonb_build_object('window_start', c.row -> 'window_start',
                                  'window_end', c.row -> 'window_end', 'auction', c.row -> 'auction');
        IF c.op = 'delete' THEN
            DELETE FROM replay AS r WHERE r.pipeline = p AND r.id = rid;
            IF NOT FOUND THEN RAISE EXCEPTION 'delete of a row not in the top: %', c.row; END IF;
        ELSIF c.op = 'insert' THEN
            INSERT INTO replay VALUES (p, rid, c.rank, c.row);
        ELSE
            UPDATE replay AS r SET rank = c.rank, row = c.row
             WHERE r.pipeline = p AND r.id = rid AND r.rank = c.old_rank;
            IF NOT FOUND THEN RAISE EXCEPTION 'update of a row not in the top: %', c.row; END IF;
        END IF;
    END LOOP;
    -- the view's rows (rank column rn) against the replay's
    DROP TABLE IF EXISTS view_rows;
    EXECUTE format('CREATE TEMP TABLE view_rows AS SELECT t.rn AS rank, '
                   'to_jsonb(t) - ''rn'' - ''final'' AS row FROM %I AS t', p || '_top');
    RETURN (SELECT count(*) FROM (
        (SELECT rank, row FROM replay WHERE pipeline = p EXCEPT ALL SELECT * FROM view_rows)
        UNION ALL
        (SELECT * FROM view_rows EXCEPT ALL SELECT rank, row FROM replay WHERE pipeline = p)) AS d);
END
$$;

-- the two hottest auctions per minute, kept 2 minutes past the lateness
SELECT streamforge.create_aggregate('hot_ret', $$
    SELECT * FROM (
        SELECT auction, count(*) AS bids, max(price) AS top_price,
               ROW_NUMBER() OVER (PARTITION BY streamforge.tumble(ts, interval '1 minute')
                                  ORDER BY count(*) DESC) AS rn
          FROM bids
         GROUP BY auction, streamforge.tumble(ts, interval '1 minute')) AS t
     WHERE rn <= 2
$$, lateness => interval '1 minute', retention => interval '2 minutes');
SELECT streamforge.configure_outputs('hot_ret', results_retention => true);
SELECT changelog, results, results_retention FROM streamforge.output_config WHERE pipeline = 'hot_ret';
-- the same top 1, kept without the trim until configure_outputs turns it
-- on; the same aggregate without a top-N
SELECT streamforge.create_aggregate('hot_keep', $$
    SELECT * FROM (
        SELECT auction, count(*) AS bids, max(price) AS top_price,
               ROW_NUMBER() OVER (PARTITION BY streamforge.tumble(ts, interval '1 minute')
                                  ORDER BY count(*) DESC) AS rn
          FROM bids
         GROUP BY auction, streamforge.tumble(ts, interval '1 minute')) AS t
     WHERE rn <= 1
$$, lateness => interval '1 minute', retention => interval '2 minutes');
SELECT streamforge.create_aggregate('plain_ret', $$
    SELECT auction, count(*) AS bids FROM bids
     GROUP BY auction, streamforge.tumble(ts, interval '1 minute')
$$, lateness => interval '1 minute', retention => interval '2 minutes');

INSERT INTO bids (auction, price, ts) VALUES
    (1, 10, '2026-12-01 10:00:01+00'), (2, 11, '2026-12-01 10:00:02+00'),
    (2, 12, '2026-12-01 10:00:03+00'), (3, 13, '2026-12-01 10:00:04+00'),
    (3, 14, '2026-12-01 10:00:05+00'), (3, 15, '2026-12-01 10:00:06+00'),
    (4, 16, '2026-12-01 10:01:01+00');
SELECT count(*) FROM streamforge.advance_ts('hot_ret', 'default', '2026-12-01 10:02:00+00');
SELECT auction, window_start, bids, rn FROM hot_ret_top ORDER BY window_start, rn;
SELECT seq, op, window_start, rank, old_rank, row ->> 'auction' AS auction
  FROM streamforge.top_changelog WHERE pipeline = 'hot_ret' ORDER BY seq;
SELECT replay_diff('hot_ret');

-- a bid at 10:10, emitted by advance_ts to 10:11, changes only the window
-- [10:10, 10:11); the horizon moves to 10:11 - 1 minute - 2 minutes =
-- 10:08, so the call's trim drops the windows [10:00, 10:01) and [10:01,
-- 10:02), which the call did not change: their three top rows leave with
-- a 'delete' each, after the call's own 'insert'
INSERT INTO bids (auction, price, ts) VALUES (5, 17, '2026-12-01 10:10:00+00');
SELECT count(*) FROM streamforge.advance_ts('hot_ret', 'default', '2026-12-01 10:11:00+00');
SELECT auction, window_start, bids, rn FROM hot_ret_top ORDER BY window_start, rn;
SELECT seq, op, window_start, rank, old_rank, row ->> 'auction' AS auction
  FROM streamforge.top_changelog WHERE pipeline = 'hot_ret' AND seq > 3 ORDER BY seq;
SELECT replay_diff('hot_ret');

-- one call that emits a window and trims it: bids at 10:15, then
-- advance_ts to 10:30 (horizon 10:27) emits [10:15, 10:16) and drops it
-- with [10:10, 10:11): the 'insert's of the call, then the trim's
-- 'delete's
INSERT INTO bids (auction, price, ts) VALUES
    (6, 18, '2026-12-01 10:15:00+00'), (6, 19, '2026-12-01 10:15:30+00'),
    (7, 20, '2026-12-01 10:15:40+00');
SELECT count(*) FROM streamforge.advance_ts('hot_ret', 'default', '2026-12-01 10:30:00+00');
SELECT auction, window_start, bids, rn FROM hot_ret_top ORDER BY window_start, rn;
SELECT seq, op, window_start, rank, old_rank, row ->> 'auction' AS auction
  FROM streamforge.top_changelog WHERE pipeline = 'hot_ret' AND seq > 7 ORDER BY seq;
SELECT replay_diff('hot_ret');

-- configure_outputs turning results_retention on trims at once, with the
-- deletes (hot_keep, over the same bids)
SELECT count(*) FROM streamforge.advance_ts('hot_keep', 'default', '2026-12-01 10:14:00+00');
SELECT auction, window_start, bids, rn FROM hot_keep_top ORDER BY window_start, rn;
SELECT replay_diff('hot_keep');
-- the horizon is 10:11: [10:00, 10:01), [10:01, 10:02) and [10:10, 10:11) go
SELECT streamforge.configure_outputs('hot_keep', results_retention => true);
SELECT auction, window_start, bids, rn FROM hot_keep_top ORDER BY window_start, rn;
SELECT seq, op, window_start, rank, row ->> 'auction' AS auction
  FROM streamforge.top_changelog WHERE pipeline = 'hot_keep' ORDER BY seq;
SELECT replay_diff('hot_keep');

-- trim_results: advance_ts to 10:17 emits [10:15, 10:16) (horizon 10:14,
-- nothing to trim); to 10:40, with no bid left open, changes nothing and so
-- trims nothing (horizon 10:37); trim_results drops [10:15, 10:16), with
-- its 'delete'
SELECT count(*) FROM streamforge.advance_ts('hot_keep', 'default', '2026-12-01 10:17:00+00');
SELECT count(*) FROM streamforge.advance_ts('hot_keep', 'default', '2026-12-01 10:40:00+00');
SELECT auction, window_start, bids, rn FROM hot_keep_top ORDER BY window_start, rn;
SELECT streamforge.trim_results('hot_keep');
SELECT auction, window_start, bids, rn FROM hot_keep_top ORDER BY window_start, rn;
SELECT seq, op, window_start, rank, row ->> 'auction' AS auction
  FROM streamforge.top_changelog WHERE pipeline = 'hot_keep' AND seq > 6 ORDER BY seq;
SELECT replay_diff('hot_keep');
-- nothing more to trim: trim_results deletes nothing and writes nothing
SELECT streamforge.trim_results('hot_keep');
SELECT max(seq) FROM streamforge.top_changelog WHERE pipeline = 'hot_keep';

-- the aggregate without a top-N trims as before, and has no top changes
SELECT count(*) FROM streamforge.advance_ts('plain_ret', 'default', '2026-12-01 10:14:00+00');
SELECT count(*) FROM plain_ret;
SELECT streamforge.configure_outputs('plain_ret', results_retention => true);
SELECT auction, window_start, bids FROM plain_ret ORDER BY window_start, auction;
SELECT count(*) FROM streamforge.top_changelog WHERE pipeline = 'plain_ret';

SELECT streamforge.drop_aggregate('hot_ret');
SELECT streamforge.drop_aggregate('hot_keep');
SELECT streamforge.drop_aggregate('plain_ret');
SELECT count(*) FROM streamforge.top_changelog;
DROP TABLE bids, replay;
DROP FUNCTION replay_diff(text);
