-- strength2_snapshot_def: a binary snapshot is loaded only into the
-- definition it was taken under (issue 24: mutants def-equiv-step,
-- def-equiv-gap and def-equiv-lateness of scripts/mutants-0.3.tsv).  The
-- snapshot holds its own copy of the definition, which the loader compares
-- with the pipeline's row (src/codec/snapshot.c, sf_def_equivalent): a row
-- changed behind the extension's back (here: a window's step, a session's
-- gap, the lateness) makes the stored state corrupt (XX001), not a state
-- read under another definition.  restore() has its own comparison
-- (codec_validate.c), which checkpoint_invalid covers.
SELECT streamforge.create_pipeline('ssd', ARRAY['p'],
    ARRAY[streamforge.sliding('s', 20, 5), streamforge.session('g', 5)], 2);
SELECT count(*) FROM streamforge.ingest('ssd', 'p', 0, 'e', 'k', 7, 1);
-- restore stores the state as a binary snapshot, without journal
SELECT streamforge.restore('ssd', streamforge.checkpoint('ssd'));
SELECT convert_from(substring(snapshot FROM 1 FOR 7), 'UTF8') AS magic,
       (SELECT count(*) FROM streamforge.journal j WHERE j.pipeline_id = p.id) AS journal_rows
  FROM streamforge.pipeline p WHERE name = 'ssd';
CREATE TABLE ssd_row AS SELECT windows, lateness FROM streamforge.pipeline WHERE name = 'ssd';
CREATE FUNCTION ssd_set(w streamforge.window_def[], l bigint) RETURNS void LANGUAGE sql AS $$
  UPDATE streamforge.pipeline SET windows = w, lateness = l, version = version + 1
   WHERE name = 'ssd' $$;
-- the row as it is: loads
\c -
SELECT window_name, key, window_start, window_end, count FROM streamforge.live('ssd')
 ORDER BY 1, 3;
-- another step
SELECT ssd_set(ARRAY[ROW('g', 'session', NULL, NULL, 5), ROW('s', 'sliding', 20, 4, NULL)]::streamforge.window_def[], 2);
\c -
SELECT count(*) FROM streamforge.live('ssd');
-- another gap
SELECT ssd_set(ARRAY[ROW('g', 'session', NULL, NULL, 6), ROW('s', 'sliding', 20, 5, NULL)]::streamforge.window_def[], 2);
\c -
SELECT count(*) FROM streamforge.live('ssd');
-- another lateness
SELECT ssd_set(windows, 3) FROM ssd_row;
\c -
SELECT count(*) FROM streamforge.live('ssd');
-- the row as it was: loads again
SELECT ssd_set(windows, lateness) FROM ssd_row;
\c -
SELECT count(*) FROM streamforge.live('ssd');

-- clean up
SELECT streamforge.drop_pipeline('ssd');
