-- checkpoint / restore / inspect_checkpoint: round trip, determinism,
-- independence, equivalent and incompatible definitions, and restore then
-- continue == uninterrupted processing.  Crafted invalid checkpoints are in
-- checkpoint_invalid.sql, the envelope byte by byte in checkpoint_format.sql.
SET client_min_messages = warning;
CREATE SCHEMA ck_test;
SET search_path = ck_test, public;

-- Outcome of a statement: 'ok', or SQLSTATE, message and detail of its error.
CREATE FUNCTION try(stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    st text; msg text; det text;
BEGIN
    EXECUTE stmt;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
                            det = PG_EXCEPTION_DETAIL;
    RETURN st || ': ' || msg || coalesce(' | ' || nullif(det, ''), '');
END $$;

-- The document of an uncompressed checkpoint (bytes 24.. of the envelope).
CREATE FUNCTION doc(cp bytea) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT convert_from(substring(cp FROM 25), getdatabaseencoding())
$$;

-- A script of operations, applied in order by run(); every call's changes
-- are returned with the step that produced them.
CREATE TABLE script (
    step int PRIMARY KEY,
    op text NOT NULL,           -- ingest | advance | idle
    part text NOT NULL,
    off bigint, eid text, key text, t bigint, v bigint,
    progress bigint
);
INSERT INTO script VALUES
    ( 1, 'ingest',  'p1', 0, 'e01', 'k', 1, 5, NULL),
    ( 2, 'ingest',  'p1', 1, 'e02', 'k', 4, -3, NULL),
    ( 3, 'ingest',  'p2', 0, 'e03', 'm', 12, 7, NULL),
    ( 4, 'advance', 'p1', NULL, NULL, NULL, NULL, NULL, 9),
    ( 5, 'advance', 'p2', NULL, NULL, NULL, NULL, NULL, 11),
    ( 6, 'ingest',  'p2', 1, 'e04', 'k', 9, 2, NULL),
    ( 7, 'ingest',  'p1', 2, 'e05', 'm', 16, 1, NULL),
    ( 8, 'ingest',  'p1', 3, 'e03', 'm', 12, 7, NULL),   -- duplicate identity
    ( 9, 'ingest',  'p1', 3, 'e03', 'm', 12, 7, NULL),   -- replayed offset
    (10, 'advance', 'p1', NULL, NULL, NULL, NULL, NULL, 16),
    (11, 'advance', 'p2', NULL, NULL, NULL, NULL, NULL, 15),
    (12, 'ingest',  'p2', 2, 'e06', 'k', 2, 4, NULL),    -- late
    (13, 'ingest',  'p2', 3, 'e07', 'm', 14, 3, NULL),   -- merges sessions
    (14, 'idle',    'p2', NULL, NULL, NULL, NULL, NULL, NULL),
    (15, 'ingest',  'p1', 4, 'e08', 'k', 13, 6, NULL),
    (16, 'advance', 'p1', NULL, NULL, NULL, NULL, NULL, 22),
    (17, 'ingest',  'p2', 4, 'e09', 'k', 3, 1, NULL),    -- late
    (18, 'advance', 'p2', NULL, NULL, NULL, NULL, NULL, 20), -- reactivates
    (19, 'ingest',  'p1', 5, 'e10', 'm', 21, 9, NULL),
    (20, 'advance', 'p1', NULL, NULL, NULL, NULL, NULL, 40),
    (21, 'advance', 'p2', NULL, NULL, NULL, NULL, NULL, 30);

CREATE FUNCTION run(pipe text, first int, last int)
RETURNS TABLE (step int, c streamforge.change) LANGUAGE plpgsql AS $$
DECLARE
    s script;
BEGIN
    FOR s IN SELECT * FROM script WHERE script.step BETWEEN first AND last ORDER BY script.step LOOP
        step := s.step;
        IF s.op = 'ingest' THEN
            FOR c IN SELECT * FROM streamforge.ingest(pipe, s.part, s.off, s.eid, s.key, s.t, s.v) LOOP
                RETURN NEXT;
            END LOOP;
        ELSIF s.op = 'advance' THEN
            FOR c IN SELECT * FROM streamforge.advance(pipe, s.part, s.progress) LOOP
                RETURN NEXT;
            END LOOP;
        ELSE
            FOR c IN SELECT * FROM streamforge.mark_idle(pipe, s.part) LOOP
                RETURN NEXT;
            END LOOP;
        END IF;
    END LOOP;
END $$;

CREATE FUNCTION make(pipe text, reordered bool DEFAULT false) RETURNS void
LANGUAGE sql AS $$
    SELECT CASE WHEN reordered THEN
        streamforge.create_pipeline(pipe, ARRAY['p2', 'p1'],
            ARRAY[streamforge.session('g', 3), streamforge.sliding('s', 10, 5),
                  streamforge.fixed('f', 10)], 2)
    ELSE
        streamforge.create_pipeline(pipe, ARRAY['p1', 'p2'],
            ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 10, 5),
                  streamforge.session('g', 3)], 2)
    END
$$;

-- Everything observable about a pipeline, as one text value.
CREATE FUNCTION observe(pipe text) RETURNS text LANGUAGE sql AS $$
    SELECT concat_ws(E'\n',
        'watermark ' || coalesce(streamforge.watermark(pipe)::text, 'none'),
        (SELECT string_agg(format('%s', p), ' ') FROM streamforge.partitions(pipe) p),
        'live ' || (SELECT coalesce(string_agg(format('%s', r), ' '), '') FROM streamforge.live(pipe) r),
        'visible ' || (SELECT coalesce(string_agg(format('%s', r), ' '), '') FROM streamforge.visible(pipe) r),
        'late ' || (SELECT coalesce(string_agg(format('%s', l), ' '), '') FROM streamforge.late_events(pipe) l))
$$;

-- 1. The empty state round-trips, and its document is readable.
SELECT make('ck_empty');
SELECT doc(streamforge.checkpoint('ck_empty'));
SELECT try($$SELECT streamforge.restore('ck_empty', streamforge.checkpoint('ck_empty'))$$);
SELECT streamforge.inspect_checkpoint(streamforge.checkpoint('ck_empty')) -> 'clock';

-- 2. Round trip of a state with every kind of content: the restored state
-- observes the same and checkpoints to the same bytes.
SELECT make('ck_a');
SELECT count(*) AS changes FROM run('ck_a', 1, 15);
CREATE TABLE saved AS
    SELECT streamforge.checkpoint('ck_a') AS cp, observe('ck_a') AS obs;
SELECT obs FROM saved;
SELECT doc(cp) FROM saved;
SELECT streamforge.restore('ck_a', cp) FROM saved;
SELECT observe('ck_a') = obs AS same_state,
       streamforge.checkpoint('ck_a') = cp AS same_bytes
FROM saved;
-- inspect_checkpoint returns the same document as jsonb
SELECT streamforge.inspect_checkpoint(cp) = doc(cp)::jsonb AS inspect_is_document
FROM saved;

-- 3. Independence: the saved bytes do not change when the pipeline moves
-- on, and restoring them brings back the old state exactly.
SELECT count(*) AS changes FROM run('ck_a', 16, 21);
SELECT streamforge.checkpoint('ck_a') <> cp AS moved_on,
       observe('ck_a') <> obs AS state_differs
FROM saved;
SELECT streamforge.restore('ck_a', cp) FROM saved;
SELECT observe('ck_a') = obs AS old_state,
       streamforge.checkpoint('ck_a') = cp AS old_bytes
FROM saved;

-- 4. Determinism: the same deliveries in different call splits (single
-- ingests, one batch, several batches) give identical bytes; the pipeline's
-- name is not part of the state.
SELECT make('ck_d1'), make('ck_d2'), make('ck_d3');
SELECT count(*) FROM run('ck_d1', 1, 21);
SELECT count(*) FROM streamforge.ingest_batch('ck_d2',
    (SELECT array_agg(ROW(part, off, eid, key, t, v)::streamforge.delivery ORDER BY step)
     FROM script WHERE op = 'ingest' AND step <= 3));
SELECT count(*) FROM run('ck_d2', 4, 5);
SELECT count(*) FROM streamforge.ingest_batch('ck_d2',
    (SELECT array_agg(ROW(part, off, eid, key, t, v)::streamforge.delivery ORDER BY step)
     FROM script WHERE op = 'ingest' AND step BETWEEN 6 AND 9));
SELECT count(*) FROM run('ck_d2', 10, 21);
SELECT count(*) FROM run('ck_d3', 1, 2);
SELECT count(*) FROM streamforge.ingest_batch('ck_d3',
    (SELECT array_agg(ROW(part, off, eid, key, t, v)::streamforge.delivery ORDER BY step)
     FROM script WHERE op = 'ingest' AND step BETWEEN 1 AND 3));  -- 1, 2 replayed
SELECT count(*) FROM run('ck_d3', 4, 21);
SELECT streamforge.checkpoint('ck_d1') = streamforge.checkpoint('ck_d2') AS d1_d2,
       streamforge.checkpoint('ck_d1') = streamforge.checkpoint('ck_d3') AS d1_d3,
       streamforge.checkpoint('ck_d1') = streamforge.checkpoint('ck_d1') AS stable;

-- 5. A checkpoint restores into a pipeline declared in another order (and
-- under another name), and checkpoints back to the same bytes.
SELECT make('ck_reordered', true);
SELECT streamforge.restore('ck_reordered', cp) FROM saved;
SELECT streamforge.checkpoint('ck_reordered') = cp AS same_bytes,
       observe('ck_reordered') = obs AS same_state
FROM saved;

-- 6. Incompatible definitions are SF003, and the target keeps its state.
SELECT streamforge.create_pipeline('ck_other_parts', ARRAY['p1', 'p3'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 10, 5), streamforge.session('g', 3)], 2);
SELECT streamforge.create_pipeline('ck_more_parts', ARRAY['p1', 'p2', 'p3'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 10, 5), streamforge.session('g', 3)], 2);
SELECT streamforge.create_pipeline('ck_fewer_parts', ARRAY['p1'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 10, 5), streamforge.session('g', 3)], 2);
SELECT streamforge.create_pipeline('ck_size', ARRAY['p1', 'p2'],
    ARRAY[streamforge.fixed('f', 20), streamforge.sliding('s', 10, 5), streamforge.session('g', 3)], 2);
SELECT streamforge.create_pipeline('ck_step', ARRAY['p1', 'p2'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 10, 2), streamforge.session('g', 3)], 2);
SELECT streamforge.create_pipeline('ck_gap', ARRAY['p1', 'p2'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 10, 5), streamforge.session('g', 4)], 2);
SELECT streamforge.create_pipeline('ck_kind', ARRAY['p1', 'p2'],
    ARRAY[streamforge.sliding('f', 10, 10), streamforge.sliding('s', 10, 5), streamforge.session('g', 3)], 2);
SELECT streamforge.create_pipeline('ck_fewer_windows', ARRAY['p1', 'p2'],
    ARRAY[streamforge.fixed('f', 10), streamforge.session('g', 3)], 2);
SELECT streamforge.create_pipeline('ck_more_windows', ARRAY['p1', 'p2'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 10, 5), streamforge.session('g', 3),
          streamforge.fixed('h', 10)], 2);
SELECT streamforge.create_pipeline('ck_lateness', ARRAY['p1', 'p2'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 10, 5), streamforge.session('g', 3)], 0);
SELECT name, try(format('SELECT streamforge.restore(%L, %L::bytea)', name, cp))
FROM saved, unnest(ARRAY['ck_other_parts', 'ck_more_parts', 'ck_fewer_parts', 'ck_size',
                         'ck_step', 'ck_gap', 'ck_kind', 'ck_fewer_windows',
                         'ck_more_windows', 'ck_lateness']) AS name;
SELECT observe('ck_lateness');

-- 7. Restore then continue == uninterrupted processing, at every cut point:
-- the changes after the cut (seq included), the late output and the final
-- bytes are those of a pipeline that was never interrupted.
SELECT make('ck_u');
CREATE TABLE uninterrupted AS SELECT * FROM run('ck_u', 1, 21);
SELECT step, (c).* FROM uninterrupted ORDER BY (c).seq;
CREATE TABLE cuts (cut int, same_changes bool, same_late bool, same_bytes bool);
DO $$
DECLARE
    cut int;
    cp bytea;
BEGIN
    FOR cut IN 0 .. 21 LOOP
        PERFORM make('ck_i');
        PERFORM run('ck_i', 1, cut);
        cp := streamforge.checkpoint('ck_i');
        PERFORM streamforge.drop_pipeline('ck_i');
        -- a fresh pipeline, declared in another order
        PERFORM make('ck_r', true);
        PERFORM streamforge.restore('ck_r', cp);
        INSERT INTO cuts SELECT cut,
            (SELECT coalesce(array_agg(r.c ORDER BY (r.c).seq), '{}') FROM run('ck_r', cut + 1, 21) r)
              = (SELECT coalesce(array_agg(u.c ORDER BY (u.c).seq), '{}') FROM uninterrupted u WHERE u.step > cut),
            (SELECT array_agg(l ORDER BY l.late_seq) FROM streamforge.late_events('ck_r') l)
              = (SELECT array_agg(l ORDER BY l.late_seq) FROM streamforge.late_events('ck_u') l),
            streamforge.checkpoint('ck_r') = streamforge.checkpoint('ck_u');
        PERFORM streamforge.drop_pipeline('ck_r');
    END LOOP;
END $$;
SELECT count(*) AS cut_points, bool_and(same_changes) AS same_changes,
       bool_and(same_late) AS same_late, bool_and(same_bytes) AS same_bytes
FROM cuts;

-- seq and late_seq continue across restore
SELECT make('ck_seq');
SELECT count(*) FROM run('ck_seq', 1, 15);
SELECT streamforge.restore('ck_seq', streamforge.checkpoint('ck_seq'));
SELECT step, (c).seq, (c).op, (c).window_name, (c).key FROM run('ck_seq', 16, 16);
SELECT count(*) FROM run('ck_seq', 17, 17);
SELECT late_seq, event_id FROM streamforge.late_events('ck_seq');

-- 8. Strings are spelled canonically (only '"', '\' and control bytes are
-- escaped, \u00xx in lower case) and round-trip exactly.
SELECT streamforge.create_pipeline('ck_str', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
SELECT count(*) FROM streamforge.ingest('ck_str', 'p', 0, E'id"\\\x01\x1f/', E'k"\\\t\n\x7f/ ', 1, 1);
SELECT count(*) FROM streamforge.ingest('ck_str', 'p', 1, 'id2', '', 2, 2);
-- (DEL, 0x7f, is not escaped; shown here as <DEL>)
SELECT replace(doc(streamforge.checkpoint('ck_str')), chr(127), '<DEL>');
SELECT replace(key, chr(127), '<DEL>') AS key, length(key) FROM streamforge.live('ck_str');
SELECT streamforge.restore('ck_str', streamforge.checkpoint('ck_str'));
SELECT key = E'k"\\\t\n\x7f/ ' AS key_kept FROM streamforge.live('ck_str') WHERE key <> '';
SELECT streamforge.inspect_checkpoint(streamforge.checkpoint('ck_str')) #>> '{identities,0,event_id}' = E'id"\\\x01\x1f/' AS id_kept;

-- 9. Sums are exact beyond bigint, and extreme bigint values round-trip.
SELECT streamforge.create_pipeline('ck_big', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
SELECT count(*) FROM streamforge.ingest('ck_big', 'p', 0, 'a', 'k', -9223372036854775800, 9223372036854775807);
SELECT count(*) FROM streamforge.ingest('ck_big', 'p', 1, 'b', 'k', -9223372036854775799, 9223372036854775807);
SELECT count(*) FROM streamforge.ingest('ck_big', 'p', 2, 'c', 'k', -9223372036854775798, 9223372036854775807);
SELECT count(*) FROM streamforge.ingest('ck_big', 'p', 3, 'd', 'n', 5, -9223372036854775808);
SELECT count(*) FROM streamforge.ingest('ck_big', 'p', 4, 'e', 'n', 6, -9223372036854775808);
SELECT streamforge.inspect_checkpoint(streamforge.checkpoint('ck_big')) -> 'windows';
SELECT streamforge.restore('ck_big', streamforge.checkpoint('ck_big'));
SELECT * FROM streamforge.live('ck_big');

-- 10. Documents longer than 4 KiB are zlib-compressed (flags = 1), and
-- round-trip like the others.
SELECT streamforge.create_pipeline('ck_zip', ARRAY['p'],
    ARRAY[streamforge.fixed('w', 10), streamforge.session('s', 5)]);
SELECT count(*) FROM streamforge.ingest_batch('ck_zip',
    (SELECT array_agg(ROW('p', i, 'event-' || i, 'key-' || (i % 7), i * 3, i)::streamforge.delivery ORDER BY i)
     FROM generate_series(0, 199) i));
SELECT count(*) FROM streamforge.advance('ck_zip', 'p', 300);
SELECT get_byte(cp, 11) AS flags,
       length(cp) - 24 = (get_byte(cp, 12)::bigint << 24) + (get_byte(cp, 13) << 16)
                         + (get_byte(cp, 14) << 8) + get_byte(cp, 15) AS payload_length_ok,
       (get_byte(cp, 16)::bigint << 24) + (get_byte(cp, 17) << 16)
         + (get_byte(cp, 18) << 8) + get_byte(cp, 19) > 4096 AS document_over_4k,
       length(cp) < 4096 AS compressed
FROM (SELECT streamforge.checkpoint('ck_zip') AS cp) x;
SELECT length(streamforge.inspect_checkpoint(streamforge.checkpoint('ck_zip'))::text) > 4096 AS inspect_ok;
CREATE TABLE zip AS SELECT streamforge.checkpoint('ck_zip') AS cp, observe('ck_zip') AS obs;
SELECT count(*) FROM streamforge.advance('ck_zip', 'p', 1000);
SELECT streamforge.restore('ck_zip', cp) FROM zip;
SELECT streamforge.checkpoint('ck_zip') = cp AS same_bytes, observe('ck_zip') = obs AS same_state FROM zip;

-- 11. Errors around the functions themselves
SELECT try($$SELECT streamforge.restore('ck_nope', streamforge.checkpoint('ck_empty'))$$);
SELECT try($$SELECT streamforge.restore('ck_empty', NULL)$$);
SELECT try($$SELECT streamforge.restore('ck_empty', '\x'::bytea)$$);
SELECT try($$SELECT streamforge.inspect_checkpoint('\x'::bytea)$$);
SELECT streamforge.inspect_checkpoint(NULL) IS NULL AS strict;
-- a failed restore changes nothing
SELECT observe('ck_a') = obs AS unchanged FROM saved;

SELECT streamforge.drop_pipeline(name)
FROM unnest(ARRAY['ck_empty', 'ck_a', 'ck_d1', 'ck_d2', 'ck_d3', 'ck_reordered',
                  'ck_other_parts', 'ck_more_parts', 'ck_fewer_parts', 'ck_size',
                  'ck_step', 'ck_gap', 'ck_kind', 'ck_fewer_windows',
                  'ck_more_windows', 'ck_lateness', 'ck_u', 'ck_seq', 'ck_str',
                  'ck_big', 'ck_zip']) AS name;
DROP SCHEMA ck_test CASCADE;
