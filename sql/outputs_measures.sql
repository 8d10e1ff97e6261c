--
-- The results rows of a measures pipeline carry its aggregates whoever
-- writes them (issue 27 item 3; docs/aggregates.md, Outputs): the sink
-- (outputs on from the start), configure_outputs copying visible() when
-- results are turned on late, its backfill, and resync_outputs (after a
-- restore, with the changelog trimmed or off).  Each is compared with a
-- twin whose outputs were on from the start.
--
\set VERBOSITY sqlstate

-- the twins: 'om_on' has outputs from the start; the others get them later
SELECT streamforge.create_pipeline(p, ARRAY['p'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 10, 5),
          streamforge.session('g', 3)], lateness => 4,
    measures => ARRAY['amount', 'qty'],
    aggregates => ARRAY['count', 'sum(amount)', 'avg(qty)', 'min(amount)',
                        'var_samp(qty)', 'first(amount)', 'last(qty)',
                        'count_if(amount >= 30) AS big'])
  FROM unnest(ARRAY['om_on', 'om_late', 'om_backfill', 'om_resync']) AS p;
SELECT streamforge.configure_outputs('om_on');
SELECT streamforge.configure_outputs('om_resync');
-- the first half: finalizes the early windows, leaves later ones visible
CREATE TABLE om_half AS
SELECT ROW('p', i, 'e' || i, 'k' || (i % 3), (i * 7) % 60 + i,
           ARRAY[i, (i * 13) % 7])::streamforge.measures_delivery AS d, i
  FROM generate_series(0, 59) AS i;
SELECT count(*) FROM unnest(ARRAY['om_on', 'om_late', 'om_backfill', 'om_resync']) AS p,
       streamforge.ingest_measures_batch(p, ARRAY(SELECT d FROM om_half WHERE i < 30 ORDER BY i));
SELECT count(*) FROM unnest(ARRAY['om_on', 'om_late', 'om_backfill', 'om_resync']) AS p,
       streamforge.advance(p, 'p', 40);

-- a results row's aggregates against the twin's: the rows that differ
-- (by address, values, final flag and aggregates) in either direction
CREATE FUNCTION om_differences(a text, b text) RETURNS bigint LANGUAGE sql AS $$
    SELECT count(*) FROM (
        (SELECT window_name, key, window_start, window_end, count, sum, min, max,
                final, aggregates
           FROM streamforge.results WHERE pipeline = a
         EXCEPT
         SELECT window_name, key, window_start, window_end, count, sum, min, max,
                final, aggregates
           FROM streamforge.results WHERE pipeline = b)
        UNION ALL
        (SELECT window_name, key, window_start, window_end, count, sum, min, max,
                final, aggregates
           FROM streamforge.results WHERE pipeline = b
         EXCEPT
         SELECT window_name, key, window_start, window_end, count, sum, min, max,
                final, aggregates
           FROM streamforge.results WHERE pipeline = a)) AS d $$;

-- turned on late: the visible() rows, with their aggregates
SELECT streamforge.configure_outputs('om_late');
SELECT count(*) AS rows, count(*) FILTER (WHERE aggregates IS NULL) AS without_aggregates
  FROM streamforge.results WHERE pipeline = 'om_late';
SELECT count(*) AS differences FROM (
    SELECT window_name, key, window_start, window_end, count, aggregates
      FROM streamforge.results WHERE pipeline = 'om_late'
    EXCEPT
    SELECT window_name, key, window_start, window_end, count, aggregates
      FROM streamforge.visible_aggregates('om_late')) AS d;
-- one row as it reads
SELECT window_name, key, window_start, count, aggregates
  FROM streamforge.results WHERE pipeline = 'om_late'
 ORDER BY window_name, key, window_start LIMIT 1;

-- turned on late with backfill: every row, the finalized ones derived
SELECT streamforge.configure_outputs('om_backfill', backfill => true);
SELECT count(*) AS rows, count(*) FILTER (WHERE final) AS final_rows,
       count(*) FILTER (WHERE aggregates IS NULL) AS without_aggregates
  FROM streamforge.results WHERE pipeline = 'om_backfill';
SELECT om_differences('om_on', 'om_backfill') AS differences;

-- the second half, through the sink for all of them
SELECT count(*) FROM unnest(ARRAY['om_on', 'om_late', 'om_backfill', 'om_resync']) AS p,
       streamforge.ingest_measures_batch(p, ARRAY(SELECT d FROM om_half WHERE i >= 30 ORDER BY i));
SELECT count(*) FROM unnest(ARRAY['om_on', 'om_late', 'om_backfill', 'om_resync']) AS p,
       streamforge.advance(p, 'p', 100);
SELECT om_differences('om_on', 'om_backfill') AS differences;
-- om_late lacks only the rows finalized before it was turned on
SELECT count(*) AS differences FROM (
    SELECT window_name, key, window_start, window_end, count, final, aggregates
      FROM streamforge.results WHERE pipeline = 'om_late'
    EXCEPT
    SELECT window_name, key, window_start, window_end, count, final, aggregates
      FROM streamforge.results WHERE pipeline = 'om_on') AS d;

-- resync_outputs: a restore to the middle with the changelog trimmed, so
-- every row past the checkpoint is rebuilt from the restored state
-- (visible() and the finalized rows derived) rather than from the
-- changelog.  x1 and x2 change rows; the advance finalizes rows that the
-- restore makes open again (final false, as in om_on)
CREATE TABLE om_ck AS SELECT streamforge.checkpoint('om_on') AS ck;
SELECT streamforge.restore('om_resync', (SELECT ck FROM om_ck));
SELECT om_differences('om_on', 'om_resync') AS differences;
SELECT streamforge.trim_changelog('om_resync', 1000000);
SELECT count(*) FROM streamforge.ingest_measures_batch('om_resync', ARRAY[
    ROW('p', 60, 'x1', 'k0', 97, ARRAY[500, 1]),
    ROW('p', 61, 'x2', 'k1', 98, ARRAY[7, 2])]::streamforge.measures_delivery[]);
-- a lateness raise brings finalized rows back (upserts past the
-- checkpoint), the lower one finalizes them again: with their changelog
-- rows trimmed, resync derives them (final_rows, issue 21)
SELECT count(*) FROM streamforge.set_lateness('om_resync', 30);
SELECT count(*) FROM streamforge.set_lateness('om_resync', 4);
SELECT count(*) FROM streamforge.advance('om_resync', 'p', 200);
SELECT streamforge.restore('om_resync', (SELECT ck FROM om_ck));
SELECT count(*) FILTER (WHERE aggregates IS NULL) AS without_aggregates,
       count(*) FILTER (WHERE final AND seq IS NULL) AS derived_final
  FROM streamforge.results WHERE pipeline = 'om_resync';
SELECT om_differences('om_on', 'om_resync') AS differences;
-- resync_outputs by hand on outputs that agree changes nothing
SELECT streamforge.resync_outputs('om_resync');
SELECT om_differences('om_on', 'om_resync') AS differences;
-- with the changelog off, resync rebuilds every undone row by derivation
SELECT streamforge.configure_outputs('om_resync', changelog => false);
SELECT count(*) FROM streamforge.ingest_measures_batch('om_resync', ARRAY[
    ROW('p', 60, 'x4', 'k2', 97, ARRAY[40, 3])]::streamforge.measures_delivery[]);
SELECT count(*) FROM streamforge.advance('om_resync', 'p', 200);
SELECT streamforge.restore('om_resync', (SELECT ck FROM om_ck));
SELECT om_differences('om_on', 'om_resync') AS differences;

-- a one-measure pipeline's rows keep aggregates NULL
SELECT streamforge.create_pipeline('om_plain', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)]);
SELECT count(*) FROM streamforge.ingest('om_plain', 'p', 0, 'a', 'k', 1, 5);
SELECT count(*) FROM streamforge.ingest('om_plain', 'p', 1, 'b', 'k', 11, 5);
SELECT count(*) FROM streamforge.advance('om_plain', 'p', 15);
SELECT streamforge.configure_outputs('om_plain', backfill => true);
SELECT count(*) AS rows, count(aggregates) AS with_aggregates
  FROM streamforge.results WHERE pipeline = 'om_plain';
-- the internal function is the owner's
CREATE ROLE om_reader;
GRANT USAGE ON SCHEMA streamforge, streamforge_internal TO om_reader;
SET ROLE om_reader;
SELECT * FROM streamforge_internal.final_rows_aggregates('om_on', NULL, NULL, NULL, NULL);
SELECT streamforge_internal.outputs_fill_aggregates('om_on');
RESET ROLE;
REVOKE USAGE ON SCHEMA streamforge, streamforge_internal FROM om_reader;
DROP ROLE om_reader;

DROP FUNCTION om_differences(text, text);
DROP TABLE om_half, om_ck;
SELECT streamforge.drop_pipeline(p)
  FROM unnest(ARRAY['om_on', 'om_late', 'om_backfill', 'om_resync', 'om_plain']) AS p;
