-- golden_bytes: the byte pin of issue 41 (one definition, one API, the
-- operations tables of window kinds and aggregate functions).  The md5 of
-- the journal entries, the checkpoint and the binary snapshot of pipelines
-- of every kind and of measures pipelines, produced by the code before the
-- redesign: a refactoring that changes a persisted byte changes this
-- output.  Everything is deterministic: fixed event ids, times and values,
-- no clock, sequences created here (create_aggregate's event ids).
-- Changed on purpose once since: 0.4.0 stores the snapshot of a pipeline
-- with measures or retention in the binary format 3 (issue 39; until then
-- it was the checkpoint), so those pipelines' snapshot lines changed;
-- their journals and checkpoints did not.  And once more: 0.4.0 writes the
-- journal entries of measures pipelines (gb_agg, gb_measures, gb_nullable)
-- in the compact format 3 (kind 'V', issue 42; until then format 1), so
-- their journal lines changed; their checkpoints and snapshots did not.
SET client_min_messages = warning;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, MDY';
CREATE SCHEMA gb;
SET search_path = gb, public;

-- 30 events over two partitions, out of order, with negative values: a
-- late tail (26, 27, 29 at times 0..3 after the first advance), event 28
-- repeats event 2 (a duplicate id), event 7 is delivered twice at its
-- offset (a replay, one-measure pipelines)
CREATE TABLE ev AS
SELECT i, CASE WHEN j % 3 = 0 THEN 'b' ELSE 'a' END AS part,
       'e' || j AS eid, 'k' || (j % 4) AS key,
       CASE WHEN j >= 26 THEN j - 26 ELSE (j * 7) % 23 + (j / 10) * 10 END AS t,
       (j * 13) % 17 - 5 AS v,
       CASE WHEN j % 5 = 0 THEN NULL ELSE (j * 5) % 11 - 3 END AS nv
  FROM generate_series(0, 29) AS i,
       LATERAL (SELECT CASE WHEN i = 28 THEN 2 ELSE i END AS j) AS x;
CREATE TABLE ev_off AS
SELECT i, part, (row_number() OVER (PARTITION BY part ORDER BY i)) - 1 AS off
  FROM ev;

-- one-measure: events 0..14 in one transaction (one journal row), the
-- advances, events 15..29 as one batch, one replayed delivery
CREATE FUNCTION feed1(pl text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    SELECT count(*) INTO n
      FROM ev JOIN ev_off USING (i, part),
           LATERAL streamforge.ingest(pl, part, off, eid, key, t, v)
     WHERE i < 15;
    RETURN n;
END $$;
CREATE FUNCTION feed2(pl text) RETURNS bigint LANGUAGE sql AS $$
    SELECT count(*) FROM streamforge.ingest_batch(pl,
        (SELECT array_agg(ROW(part, off, eid, key, t, v)::streamforge.delivery ORDER BY i)
           FROM ev JOIN ev_off USING (i, part) WHERE i >= 15))
$$;
CREATE FUNCTION replay1(pl text) RETURNS bigint LANGUAGE sql AS $$
    SELECT count(*) FROM ev JOIN ev_off USING (i, part),
           LATERAL streamforge.ingest(pl, part, off, eid, key, t, v)
     WHERE i = 7
$$;
-- measures: (v, nv) or (v, |v|) as the pipeline's measures
CREATE FUNCTION mfeed1(pl text, nullable bool) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    SELECT count(*) INTO n
      FROM ev JOIN ev_off USING (i, part),
           LATERAL streamforge.ingest_measures(pl, part, off, eid, key, t,
               ARRAY[v, CASE WHEN nullable THEN nv ELSE abs(v) END])
     WHERE i < 15;
    RETURN n;
END $$;
CREATE FUNCTION mfeed2(pl text, nullable bool) RETURNS bigint LANGUAGE sql AS $$
    SELECT count(*) FROM streamforge.ingest_measures_batch(pl,
        (SELECT array_agg(ROW(part, off, eid, key, t,
                              ARRAY[v, CASE WHEN nullable THEN nv ELSE abs(v) END]
                             )::streamforge.measures_delivery ORDER BY i)
           FROM ev JOIN ev_off USING (i, part) WHERE i >= 15))
$$;
CREATE FUNCTION advance2(pl text, ta bigint, tb bigint) RETURNS bigint LANGUAGE sql AS $$
    SELECT (SELECT count(*) FROM streamforge.advance(pl, 'a', ta))
         + (SELECT count(*) FROM streamforge.advance(pl, 'b', tb))
$$;
CREATE FUNCTION journal_md5(pl text) RETURNS text LANGUAGE sql AS $$
    SELECT count(*) || ' rows, ' || md5(string_agg(j.entry, ''::bytea ORDER BY j.pos))
      FROM streamforge.journal j JOIN streamforge.pipeline p ON p.id = j.pipeline_id
     WHERE p.name = pl
$$;
CREATE FUNCTION snapshot_md5(pl text) RETURNS text LANGUAGE sql AS $$
    SELECT length(snapshot) || ' bytes, ' || md5(snapshot)
      FROM streamforge.pipeline WHERE name = pl
$$;
CREATE TABLE pins (pl text, what text, pin text);
-- the pins of a fed pipeline: the journal before the compaction, the
-- checkpoint before and after it (the same), the snapshot
CREATE FUNCTION pin(p_name text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO pins VALUES (p_name, '1 journal', journal_md5(p_name));
    INSERT INTO pins VALUES (p_name, '2 checkpoint', md5(streamforge.checkpoint(p_name)));
    PERFORM streamforge.compact(p_name, 0);
    INSERT INTO pins VALUES (p_name, '3 snapshot', snapshot_md5(p_name));
    INSERT INTO pins SELECT p_name, '4 checkpoint after compact',
        CASE WHEN md5(streamforge.checkpoint(p_name)) = pins.pin THEN 'same' ELSE 'CHANGED' END
      FROM pins WHERE pins.pl = p_name AND pins.what = '2 checkpoint';
END $$;

-- one-measure pipelines, one window kind each
SELECT streamforge.create_pipeline('gb_fixed', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('f', 10)], lateness => 2);
SELECT streamforge.create_pipeline('gb_sliding', ARRAY['a', 'b'],
    ARRAY[streamforge.sliding('s', 20, 5)], lateness => 3);
SELECT streamforge.create_pipeline('gb_session', ARRAY['a', 'b'],
    ARRAY[streamforge.session('g', 4)], lateness => 1, retention => 6);
-- measures: every aggregate, over the three kinds
SELECT streamforge.create_pipeline('gb_measures', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 20, 5),
          streamforge.session('g', 4)], lateness => 2,
    measures => ARRAY['x', 'y'],
    aggregates => ARRAY['count', 'count(x)', 'sum(x)', 'avg(y)', 'min(x)', 'max(y)',
        'var_pop(x)', 'var_samp(y)', 'stddev_pop(y)', 'stddev_samp(x)',
        'first(x)', 'last(y)', 'count_if(x >= 3) AS big',
        'count_if(y < 2) AS small']);
-- a nullable measure: the non-NULL counts ahead of its state
SELECT streamforge.create_pipeline('gb_nullable', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('f', 10), streamforge.session('g', 4)], lateness => 2,
    measures => ARRAY['x', 'y NULL'],
    aggregates => ARRAY['count', 'count(y)', 'sum(y)', 'avg(y)', 'min(y)', 'max(x)',
        'var_samp(y)', 'stddev_pop(y)', 'first(y)', 'last(y)', 'count_if(y > 0) AS pos']);

-- one statement per phase (a transaction: one journal row per pipeline);
-- the ingest calls emit nothing in update mode, the advances do
CREATE TABLE one (pl text);
INSERT INTO one VALUES ('gb_fixed'), ('gb_sliding'), ('gb_session');
CREATE TABLE many (pl text, nl bool);
INSERT INTO many VALUES ('gb_measures', false), ('gb_nullable', true);
SELECT pl, feed1(pl) AS first_half FROM one ORDER BY pl;
SELECT pl, mfeed1(pl, nl) AS first_half FROM many ORDER BY pl;
SELECT pl, advance2(pl, 17, 14) AS advanced FROM (SELECT pl FROM one UNION ALL SELECT pl FROM many) x ORDER BY pl;
SELECT pl, feed2(pl) AS second_half, replay1(pl) AS replayed FROM one ORDER BY pl;
SELECT pl, mfeed2(pl, nl) AS second_half FROM many ORDER BY pl;
SELECT pl, advance2(pl, 31, 30) AS advanced FROM (SELECT pl FROM one UNION ALL SELECT pl FROM many) x ORDER BY pl;

-- create_aggregate: a table, its attachment, a GROUP BY with several
-- aggregates over a tumbling window (the ids are the table's own sequence)
CREATE TABLE clicks (id bigserial PRIMARY KEY, page text NOT NULL,
                     amount integer NOT NULL, latency integer,
                     at timestamptz NOT NULL);
SELECT streamforge.create_aggregate('gb_agg', $$
    SELECT page, count(*) AS n, sum(amount) AS revenue, avg(latency) AS lat,
           max(amount) AS top, count(*) FILTER (WHERE amount > 10) AS big
      FROM gb.clicks
     GROUP BY page, streamforge.tumble(at, interval '1 minute')
$$, lateness => interval '10 seconds');
INSERT INTO clicks (page, amount, latency, at)
SELECT '/p' || (i % 3), (i * 7) % 19, CASE WHEN i % 4 = 0 THEN NULL ELSE i * 3 END,
       timestamptz '2026-11-30 12:00:00+00' + (((i * 37) % 150) || ' seconds')::interval
  FROM generate_series(1, 20) AS i;
INSERT INTO clicks (page, amount, latency, at)
SELECT '/p' || (i % 2), i, i, timestamptz '2026-11-30 12:02:30+00' + (i || ' seconds')::interval
  FROM generate_series(1, 10) AS i;

SELECT pin(pl) FROM unnest(ARRAY['gb_fixed', 'gb_sliding', 'gb_session',
    'gb_measures', 'gb_nullable', 'gb_agg']) AS pl;
SELECT * FROM pins ORDER BY pl, what;

-- the state behind the bytes is not empty (the pins pin something)
SELECT pl, late_events, duplicate_ids, offset_replays
  FROM unnest(ARRAY['gb_fixed', 'gb_sliding', 'gb_session', 'gb_measures',
                    'gb_nullable']) AS pl, streamforge.stats(pl) ORDER BY pl;
SELECT pl, (SELECT count(*) FROM streamforge.visible(pl)) AS visible,
       (SELECT count(*) FROM streamforge.live(pl)) AS live
  FROM unnest(ARRAY['gb_fixed', 'gb_sliding', 'gb_session']) AS pl;
SELECT pl, (SELECT count(*) FROM streamforge.visible_aggregates(pl)) AS visible,
       (SELECT count(*) FROM streamforge.live_aggregates(pl)) AS live
  FROM unnest(ARRAY['gb_measures', 'gb_nullable', 'gb_agg']) AS pl;

SELECT streamforge.drop_aggregate('gb_agg');
SELECT streamforge.drop_pipeline(pl) FROM unnest(ARRAY['gb_fixed', 'gb_sliding',
    'gb_session', 'gb_measures', 'gb_nullable']) AS pl;
DROP SCHEMA gb CASCADE;
