-- measures_kind_check (issue 38, defect 9): every write function refuses
-- the other pipeline kind (22023), in every state of the pipeline, before
-- it looks at a delivery: so at the next offset, at a consumed offset and
-- past a gap alike, and for an empty batch (docs/aggregates.md).  In 0.3.0
-- a measures call refused for an unknown partition left its measures
-- behind in the cached pipeline, and the next one-measure ingest of the
-- same backend took them and was accepted, with the measures of freed
-- memory.  The states: new; after that refused call; after a rolled-back
-- savepoint; after restore(); after a definition change (add_partition,
-- set_emit, set_out_of_orderness); after compact(); in a new backend (cold
-- load) with a low compaction_threshold.

-- each one-measure write function on pipeline pl, at offset off: its
-- SQLSTATE (st), or 'accepted'
CREATE FUNCTION kc_one(pl text, off bigint)
RETURNS TABLE (fn text, st text)
LANGUAGE plpgsql AS $$
DECLARE
    calls text[] := ARRAY[
        format('SELECT count(*) FROM streamforge.ingest(%L, ''p'', %s, ''k1'', ''k'', 1, 5)', pl, off),
        format('SELECT streamforge.ingest_count(%L, ''p'', %s, ''k1'', ''k'', 1, 5)', pl, off),
        format('SELECT count(*) FROM streamforge.ingest_batch(%L, ARRAY[ROW(''p'', %s, ''k1'', ''k'', 1, 5)]::streamforge.delivery[])', pl, off),
        format('SELECT count(*) FROM streamforge.ingest_batch(%L, ARRAY[]::streamforge.delivery[])', pl),
        format('SELECT count(*) FROM streamforge.append(%L, ''p'', ''k1'', ''k'', 1, 5)', pl),
        format('SELECT count(*) FROM streamforge.append_batch(%L, ARRAY[ROW(''p'', ''k1'', ''k'', 1, 5)]::streamforge.event[])', pl),
        format('SELECT count(*) FROM streamforge.append_batch(%L, ARRAY[]::streamforge.event[])', pl),
        format('SELECT count(*) FROM streamforge.ingest_json(%L, ''[{"partition": "p", "source_offset": %s, "event_id": "k1", "key": "k", "event_time": 1, "value": 5}]'')', pl, off),
        format('SELECT count(*) FROM streamforge.ingest_json(%L, ''[{"partition": "p", "event_id": "k1", "key": "k", "event_time": 1, "value": 5}]'')', pl),
        format('SELECT count(*) FROM streamforge.ingest_json(%L, ''[]'')', pl)];
    names text[] := ARRAY['ingest', 'ingest_count', 'ingest_batch',
        'ingest_batch (empty)', 'append', 'append_batch',
        'append_batch (empty)', 'ingest_json (offsets)', 'ingest_json (append)',
        'ingest_json (empty)'];
BEGIN
    FOR i IN 1 .. array_length(calls, 1) LOOP
        fn := names[i];
        BEGIN
            EXECUTE calls[i];
            st := 'accepted';
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE;
        END;
        RETURN NEXT;
    END LOOP;
END
$$;

-- each measures write function on pipeline pl, at offset off
CREATE FUNCTION kc_measures(pl text, off bigint)
RETURNS TABLE (fn text, st text)
LANGUAGE plpgsql AS $$
DECLARE
    calls text[] := ARRAY[
        format('SELECT count(*) FROM streamforge.ingest_measures(%L, ''p'', %s, ''k1'', ''k'', 1, ARRAY[5, 6])', pl, off),
        format('SELECT count(*) FROM streamforge.ingest_measures_batch(%L, ARRAY[ROW(''p'', %s, ''k1'', ''k'', 1, ARRAY[5, 6])]::streamforge.measures_delivery[])', pl, off),
        format('SELECT count(*) FROM streamforge.ingest_measures_batch(%L, ARRAY[]::streamforge.measures_delivery[])', pl),
        format('SELECT count(*) FROM streamforge.append_measures_batch(%L, ARRAY[ROW(''p'', NULL, ''k1'', ''k'', 1, ARRAY[5, 6])]::streamforge.measures_delivery[])', pl),
        format('SELECT count(*) FROM streamforge.append_measures_batch(%L, ARRAY[]::streamforge.measures_delivery[])', pl)];
    names text[] := ARRAY['ingest_measures', 'ingest_measures_batch',
        'ingest_measures_batch (empty)', 'append_measures_batch',
        'append_measures_batch (empty)'];
BEGIN
    FOR i IN 1 .. array_length(calls, 1) LOOP
        fn := names[i];
        BEGIN
            EXECUTE calls[i];
            st := 'accepted';
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE;
        END;
        RETURN NEXT;
    END LOOP;
END
$$;

-- every function, at the next offset, at a consumed one and past a gap;
-- one line per function: the distinct SQLSTATEs
CREATE FUNCTION kc_all(pl text, measures boolean)
RETURNS TABLE (fn text, sqlstates text)
LANGUAGE plpgsql AS $$
DECLARE
    nxt bigint := (SELECT coalesce(max(consumed_offset), -1) + 1
                     FROM streamforge.partitions(pl) WHERE partition = 'p');
BEGIN
    RETURN QUERY
    SELECT r.fn, string_agg(DISTINCT r.st, ',' ORDER BY r.st)
      FROM (SELECT * FROM kc_one(pl, nxt) WHERE measures
            UNION ALL SELECT * FROM kc_one(pl, 0) WHERE measures
            UNION ALL SELECT * FROM kc_one(pl, nxt + 10) WHERE measures
            UNION ALL SELECT * FROM kc_measures(pl, nxt) WHERE NOT measures
            UNION ALL SELECT * FROM kc_measures(pl, 0) WHERE NOT measures
            UNION ALL SELECT * FROM kc_measures(pl, nxt + 10) WHERE NOT measures) AS r
     GROUP BY r.fn ORDER BY r.fn;
END
$$;

SELECT streamforge.create_pipeline('kc_m', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    measures => ARRAY['a', 'b'], aggregates => ARRAY['sum(a)', 'sum(b)']);
SELECT streamforge.create_pipeline('kc_1', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
SELECT count(*) FROM streamforge.ingest_measures('kc_m', 'p', 0, 'e0', 'x', 1, ARRAY[1, 2]);
SELECT count(*) FROM streamforge.ingest('kc_1', 'p', 0, 'e0', 'x', 1, 1);

-- the messages
SELECT * FROM streamforge.ingest('kc_m', 'p', 1, 'e1', 'x', 2, 3);
SELECT * FROM streamforge.ingest_measures('kc_1', 'p', 1, 'e1', 'x', 2, ARRAY[3]);

-- new
SELECT * FROM kc_all('kc_m', true);
SELECT * FROM kc_all('kc_1', false);

-- after a measures call refused for an unknown partition (0.3.0 accepted
-- the next one-measure ingest here, with garbage measures)
SELECT * FROM streamforge.ingest_measures('kc_m', 'nope', 1, 'e1', 'x', 2, ARRAY[3, 4]);
SELECT * FROM streamforge.ingest('kc_m', 'p', 1, 'e1', 'x', 2, 3);
SELECT * FROM streamforge.ingest_measures_batch('kc_m', ARRAY[
    ROW('nope', 1, 'e1', 'x', 2, ARRAY[3, 4])]::streamforge.measures_delivery[]);
SELECT * FROM streamforge.append('kc_m', 'p', 'e1', 'x', 2, 3);
SELECT * FROM kc_all('kc_m', true);
-- nothing was accepted: one delivery, and its aggregates are its own
SELECT deliveries, accepted FROM streamforge.stats('kc_m');
SELECT key, count, aggregates FROM streamforge.live_aggregates('kc_m');

-- after a rolled-back savepoint that wrote
BEGIN;
SAVEPOINT s;
SELECT count(*) FROM streamforge.ingest_measures('kc_m', 'p', 1, 'e1', 'x', 2, ARRAY[3, 4]);
SELECT count(*) FROM streamforge.ingest('kc_1', 'p', 1, 'e1', 'x', 2, 3);
ROLLBACK TO s;
SELECT * FROM kc_all('kc_m', true);
SELECT * FROM kc_all('kc_1', false);
COMMIT;

-- after restore()
SELECT streamforge.restore('kc_m', streamforge.checkpoint('kc_m'));
SELECT streamforge.restore('kc_1', streamforge.checkpoint('kc_1'));
SELECT * FROM kc_all('kc_m', true);
SELECT * FROM kc_all('kc_1', false);

-- after definition changes
SELECT count(*) FROM streamforge.add_partition('kc_m', 'q');
SELECT count(*) FROM streamforge.add_partition('kc_1', 'q');
SELECT count(*) FROM streamforge.set_emit('kc_m', 'update+final');
SELECT count(*) FROM streamforge.set_emit('kc_1', 'update+final');
SELECT count(*) FROM streamforge.set_out_of_orderness('kc_m', 5);
SELECT count(*) FROM streamforge.set_out_of_orderness('kc_1', 5);
SELECT * FROM kc_all('kc_m', true);
SELECT * FROM kc_all('kc_1', false);

-- after compact()
SELECT streamforge.compact('kc_m', 0);
SELECT streamforge.compact('kc_1', 0);
SELECT * FROM kc_all('kc_m', true);
SELECT * FROM kc_all('kc_1', false);

-- in a new backend: a cold load, with every write compacting
\c
SET streamforge.compaction_threshold = 0;
SELECT * FROM kc_all('kc_m', true);
SELECT * FROM kc_all('kc_1', false);
SELECT count(*) FROM streamforge.ingest_measures('kc_m', 'p', 1, 'e1', 'x', 2, ARRAY[3, 4]);
SELECT count(*) FROM streamforge.ingest('kc_1', 'p', 1, 'e1', 'x', 2, 3);
\c
SELECT * FROM kc_all('kc_m', true);
SELECT * FROM kc_all('kc_1', false);
SELECT deliveries, accepted FROM streamforge.stats('kc_m');
SELECT deliveries, accepted FROM streamforge.stats('kc_1');
SELECT key, count, aggregates FROM streamforge.live_aggregates('kc_m');

SELECT streamforge.drop_pipeline('kc_m');
SELECT streamforge.drop_pipeline('kc_1');
DROP FUNCTION kc_all, kc_one, kc_measures;
