-- management_model: a window added to a running pipeline holds exactly
-- what it would hold had it been declared from the start (it is
-- backfilled), and dropping a window leaves the others exactly as they
-- are.  Pipeline a gets its windows late, pipeline b has them all along;
-- both get the same deliveries and progress reports.
\set VERBOSITY sqlstate
SELECT streamforge.create_pipeline('a', ARRAY['p', 'q'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('sl', 20, 5)], 40);
SELECT streamforge.create_pipeline('b', ARRAY['p', 'q'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('sl', 20, 5),
          streamforge.session('g', 6), streamforge.fixed('h', 3)], 40);
-- deterministic pseudo-random deliveries: times wander, some repeat ids
CREATE TEMP TABLE d AS
SELECT i, CASE WHEN i % 2 = 0 THEN 'p' ELSE 'q' END AS part,
       'e' || CASE WHEN i % 13 = 12 THEN i - 12 ELSE i END AS id,
       'k' || (i * 7 % 4) AS key,
       i * 3 + (i * 37 % 23) - 11 AS t,
       (i * 53 % 41) - 20 AS v
  FROM generate_series(0, 299) AS i;
-- keep duplicates identical to their first delivery
UPDATE d SET key = f.key, t = f.t, v = f.v
  FROM d AS f WHERE d.i % 13 = 12 AND f.i = d.i - 12;
CREATE TEMP TABLE batch AS
SELECT part, i, ROW(part, (row_number() OVER (PARTITION BY part ORDER BY i)) - 1,
                    id, key, t, v)::streamforge.delivery AS del
  FROM d;
CREATE FUNCTION feed(pl text, lo int, hi int) RETURNS bigint LANGUAGE sql AS $$
    SELECT count(*) FROM streamforge.ingest_batch(pl,
        ARRAY(SELECT del FROM batch WHERE i BETWEEN lo AND hi ORDER BY i))
$$;
CREATE FUNCTION same(x text, y text, skip text DEFAULT '') RETURNS text LANGUAGE sql AS $$
    SELECT format('live %s/%s, visible %s/%s, late %s/%s',
        (SELECT count(*) FROM (SELECT * FROM streamforge.live(x) WHERE window_name <> skip
                               EXCEPT ALL SELECT * FROM streamforge.live(y) WHERE window_name <> skip) s),
        (SELECT count(*) FROM (SELECT * FROM streamforge.live(y) WHERE window_name <> skip
                               EXCEPT ALL SELECT * FROM streamforge.live(x) WHERE window_name <> skip) s),
        (SELECT count(*) FROM (SELECT * FROM streamforge.visible(x) WHERE window_name <> skip
                               EXCEPT ALL SELECT * FROM streamforge.visible(y) WHERE window_name <> skip) s),
        (SELECT count(*) FROM (SELECT * FROM streamforge.visible(y) WHERE window_name <> skip
                               EXCEPT ALL SELECT * FROM streamforge.visible(x) WHERE window_name <> skip) s),
        (SELECT count(*) FROM (SELECT * FROM streamforge.late_events(x)
                               EXCEPT ALL SELECT * FROM streamforge.late_events(y)) s),
        (SELECT count(*) FROM (SELECT * FROM streamforge.late_events(y)
                               EXCEPT ALL SELECT * FROM streamforge.late_events(x)) s))
$$;
SELECT feed('a', 0, 99) AS a_changes, feed('b', 0, 99) AS b_changes;
SELECT count(*) FROM streamforge.advance('a', 'p', 400);
SELECT count(*) FROM streamforge.advance('a', 'q', 380);
SELECT count(*) FROM streamforge.advance('b', 'p', 400);
SELECT count(*) FROM streamforge.advance('b', 'q', 380);
-- events before 340 are late now, later ones correct closed windows
SELECT feed('a', 100, 199) AS a_changes, feed('b', 100, 199) AS b_changes;
-- a has live buckets, visible rows, late events and duplicates by now
SELECT live_buckets, late_events, visible_rows, duplicate_ids FROM streamforge.stats('a');
-- add the windows: what add_window upserts is exactly b's visible rows of
-- that window
SELECT count(*) AS upserts, bool_and(op = 'upsert') AS all_upserts FROM streamforge.add_window('a', streamforge.session('g', 6));
SELECT count(*) FROM streamforge.visible('b') WHERE window_name = 'g';
SELECT count(*) AS upserts FROM streamforge.add_window('a', streamforge.fixed('h', 3));
SELECT count(*) FROM streamforge.visible('b') WHERE window_name = 'h';
SELECT same('a', 'b');
-- lowering the lateness and raising it back gives the state of a pipeline
-- whose lateness never changed: c gets b's deliveries and reports
SELECT streamforge.create_pipeline('c', ARRAY['p', 'q'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('sl', 20, 5),
          streamforge.session('g', 6), streamforge.fixed('h', 3)], 40);
SELECT feed('c', 0, 99) AS c_changes;
SELECT count(*) FROM streamforge.advance('c', 'p', 400);
SELECT count(*) FROM streamforge.advance('c', 'q', 380);
SELECT feed('c', 100, 199) AS c_changes;
SELECT same('c', 'b');
-- lowering finalizes silently what ended before 380 - 10
SELECT count(*) FROM streamforge.set_lateness('c', 10);
SELECT count(*) AS finalized FROM streamforge.visible('b') WHERE window_end < 370;
SELECT count(*) AS still_visible FROM streamforge.visible('c');
-- raising brings them back: one upsert each
SELECT count(*) AS upserts, bool_and(op = 'upsert') AS all_upserts
  FROM streamforge.set_lateness('c', 40);
SELECT same('c', 'b');
SELECT streamforge.drop_pipeline('c');
-- and they stay equal as processing goes on
SELECT feed('a', 200, 299) AS a_changes, feed('b', 200, 299) AS b_changes;
SELECT count(*) FROM streamforge.advance('a', 'q', 700);
SELECT count(*) FROM streamforge.advance('b', 'q', 700);
SELECT same('a', 'b');
-- dropping h: its visible rows are retracted, the other windows unchanged
SELECT count(*) AS retractions, bool_and(op = 'retract') AS all_retract FROM streamforge.drop_window('a', 'h');
SELECT count(*) FROM streamforge.visible('b') WHERE window_name = 'h';
SELECT same('a', 'b', 'h');
SELECT count(*) FROM streamforge.live('a') WHERE window_name = 'h';
SELECT count(*) FROM streamforge.advance('a', 'p', 900);
SELECT count(*) FROM streamforge.advance('b', 'p', 900);
SELECT same('a', 'b', 'h');
-- a checkpoint of a restores (it is valid), and b's does not (different windows)
SELECT streamforge.restore('a', streamforge.checkpoint('a'));
SELECT streamforge.restore('a', streamforge.checkpoint('b'));
SELECT streamforge.drop_pipeline('a');
SELECT streamforge.drop_pipeline('b');
DROP FUNCTION feed(text, int, int);
DROP FUNCTION same(text, text, text);
