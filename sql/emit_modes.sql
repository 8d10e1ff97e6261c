-- Emit modes (docs/semantics.md, Emit modes; issue 25 item 1): 'update'
-- (the default, today's changes), 'update+final' (the same plus one final
-- change per bucket when it is finalized) and 'final' (only that change);
-- results.final; set_emit; checkpoints carry a mode other than 'update'.
\set VERBOSITY sqlstate

-- the same events in the three modes: a fixed window of 10, lateness 5
SELECT streamforge.create_pipeline('em_u', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    lateness => 5);
SELECT streamforge.create_pipeline('em_uf', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    lateness => 5, emit => 'update+final');
SELECT streamforge.create_pipeline('em_f', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    lateness => 5, emit => 'final');
SELECT streamforge.configure_outputs(p) FROM unnest(ARRAY['em_u', 'em_uf', 'em_f']) AS p;
SELECT p, streamforge.emit_mode(p) FROM unnest(ARRAY['em_u', 'em_uf', 'em_f']) AS p;

-- no watermark: nothing anywhere
SELECT p, c.* FROM unnest(ARRAY['em_u', 'em_uf', 'em_f']) AS p,
       streamforge.ingest(p, 'p', 0, 'e1', 'k', 3, 1) AS c;
-- the watermark reaches 10: update modes upsert count 1, 'final' nothing
SELECT p, c.seq, c.op, c.window_start, c.count
  FROM unnest(ARRAY['em_u', 'em_uf', 'em_f']) AS p,
       streamforge.advance(p, 'p', 10) AS c;
-- a correction within the lateness: retract + upsert in update modes;
-- 'final' absorbs it
SELECT p, c.seq, c.op, c.window_start, c.count
  FROM unnest(ARRAY['em_u', 'em_uf', 'em_f']) AS p,
       streamforge.ingest(p, 'p', 1, 'e2', 'k', 7, 1) AS c;
-- 'final' shows nothing that can still change
SELECT p, count(v.*) AS visible FROM unnest(ARRAY['em_u', 'em_uf', 'em_f']) AS p
  LEFT JOIN LATERAL streamforge.visible(p) AS v ON true GROUP BY p ORDER BY p;
-- the watermark passes 10 + 5: 'update' says nothing, the others one
-- final row with the final values (count 2)
SELECT p, c.seq, c.op, c.window_start, c.count
  FROM unnest(ARRAY['em_u', 'em_uf', 'em_f']) AS p,
       streamforge.advance(p, 'p', 16) AS c;
-- and never again: a late event is late in every mode
SELECT p, count(c.*) AS changes FROM unnest(ARRAY['em_u', 'em_uf', 'em_f']) AS p
  LEFT JOIN LATERAL streamforge.ingest(p, 'p', 2, 'e3', 'k', 8, 1) AS c ON true
 GROUP BY p ORDER BY p;
SELECT p, (SELECT count(*) FROM streamforge.late_events(p)) AS late
  FROM unnest(ARRAY['em_u', 'em_uf', 'em_f']) AS p;
SELECT p, c.seq, c.op FROM unnest(ARRAY['em_u', 'em_uf', 'em_f']) AS p,
       streamforge.advance(p, 'p', 100) AS c;

-- the changelog has the final op; results know the row is final in every
-- mode (update mode marks it when the call finalizes the bucket)
SELECT pipeline, seq, op, window_start, count FROM streamforge.changelog
 WHERE pipeline IN ('em_u', 'em_uf', 'em_f') ORDER BY pipeline, seq;
SELECT pipeline, window_start, count, seq, final FROM streamforge.results
 WHERE pipeline IN ('em_u', 'em_uf', 'em_f') ORDER BY pipeline;

-- update mode: a row is not final until its finalizing call, which only
-- advances (no change): results.final follows anyway
SELECT count(*) FROM streamforge.ingest('em_u', 'p', 3, 'e4', 'k', 101, 1);
SELECT count(*) FROM streamforge.advance('em_u', 'p', 110);
SELECT window_start, final FROM streamforge.results WHERE pipeline = 'em_u' ORDER BY 1;
SELECT count(*) FROM streamforge.advance('em_u', 'p', 116);
SELECT window_start, final FROM streamforge.results WHERE pipeline = 'em_u' ORDER BY 1;

-- sessions in 'final' mode: sessions merged before they are final give
-- one final row, the merged session's
SELECT streamforge.create_pipeline('em_s', ARRAY['p'], ARRAY[streamforge.session('s', 5)],
    lateness => 10, emit => 'final');
SELECT count(*) FROM streamforge.ingest('em_s', 'p', 0, 'a', 'k', 0, 1);   -- [0, 5)
SELECT count(*) FROM streamforge.ingest('em_s', 'p', 1, 'b', 'k', 8, 1);   -- [8, 13)
SELECT count(*) FROM streamforge.advance('em_s', 'p', 12);                  -- [0, 5) ready
SELECT count(*) FROM streamforge.ingest('em_s', 'p', 2, 'c', 'k', 4, 1);   -- bridges both
SELECT seq, op, window_start, window_end, count FROM streamforge.advance('em_s', 'p', 100);

-- checkpoints: 'update' has no "emit" key (0.2.0's bytes), the others have
SELECT p, streamforge.inspect_checkpoint(streamforge.checkpoint(p))::jsonb -> 'definition' -> 'emit' AS emit
  FROM unnest(ARRAY['em_u', 'em_uf', 'em_f']) AS p;
SELECT strpos(streamforge.inspect_checkpoint(streamforge.checkpoint('em_u'))::text, 'emit') = 0
    AS no_emit_key;
-- a checkpoint restores into a pipeline of its mode only (SF003 otherwise)
SELECT streamforge.restore('em_f', streamforge.checkpoint('em_f'));
SELECT streamforge.restore('em_f', streamforge.checkpoint('em_uf'));

-- set_emit: bad arguments
SELECT streamforge.set_emit('em_u', 'sometimes');
SELECT streamforge.set_emit('em_u', NULL);
SELECT streamforge.set_emit('em_nope', 'final');

-- from 'final' to 'update': the rows not reported yet are upserted now
SELECT streamforge.create_pipeline('em_sw', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    lateness => 50, emit => 'final');
SELECT streamforge.configure_outputs('em_sw');
SELECT count(*) FROM streamforge.ingest('em_sw', 'p', 0, 'a', 'k', 1, 1);
SELECT count(*) FROM streamforge.ingest('em_sw', 'p', 1, 'b', 'k', 11, 1);
SELECT count(*) FROM streamforge.advance('em_sw', 'p', 20);
SELECT seq, op, window_start, count FROM streamforge.set_emit('em_sw', 'update');
SELECT streamforge.emit_mode('em_sw');
-- and back to 'final': nothing now; a lower lateness finalizes [0, 10),
-- which set_lateness reports as its final row
SELECT seq, op, window_start, count FROM streamforge.set_emit('em_sw', 'final');
SELECT seq, op, window_start, count FROM streamforge.set_lateness('em_sw', 5);
-- a higher lateness would reopen final rows: refused in modes with finals
SELECT streamforge.set_lateness('em_sw', 50);
SELECT pipeline, seq, op, window_start, count, final FROM streamforge.changelog
  NATURAL LEFT JOIN (SELECT pipeline, window_start, final FROM streamforge.results) AS r
 WHERE pipeline = 'em_sw' ORDER BY seq;

SELECT streamforge.drop_pipeline(p)
  FROM unnest(ARRAY['em_u', 'em_uf', 'em_f', 'em_s', 'em_sw']) AS p;

-- ------------------------------------------------------------------------
-- A lower lateness reports final exactly past the new boundary
-- ------------------------------------------------------------------------
-- a lower lateness in a mode with final changes reports
-- final exactly the rows the watermark has passed by more than the new
-- lateness (issue 24: mutant emit-final-lateness-boundary of
-- scripts/mutants-0.3.tsv).  At a watermark of exactly end + lateness a
-- row is not final yet (docs/semantics.md: final once the watermark is
-- past end + lateness); the next advance reports it, once.
\c -
\set VERBOSITY default
SELECT streamforge.create_pipeline('s3e', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    lateness => 50, emit => 'update+final');
SELECT streamforge.configure_outputs('s3e');
SELECT count(*) FROM streamforge.ingest('s3e', 'p', 0, 'a', 'k', 1, 1);
SELECT count(*) FROM streamforge.ingest('s3e', 'p', 1, 'b', 'k', 11, 1);
SELECT count(*) FROM streamforge.advance('s3e', 'p', 20);
-- watermark 20 = [0, 10)'s end + 10: nothing final
SELECT seq, op, window_start, count FROM streamforge.set_lateness('s3e', 10);
-- watermark 21: [0, 10) final now, [10, 20) not (20 + 10 > 21)
SELECT seq, op, window_start, count FROM streamforge.advance('s3e', 'p', 21);
-- a lower lateness again: [10, 20) is past 20 + 0 at 21
SELECT seq, op, window_start, count FROM streamforge.set_lateness('s3e', 0);
SELECT seq, op, window_start, count FROM streamforge.changelog
 WHERE pipeline = 's3e' ORDER BY seq;
SELECT window_start, count, final FROM streamforge.results
 WHERE pipeline = 's3e' ORDER BY window_start;
SELECT streamforge.drop_pipeline('s3e');
