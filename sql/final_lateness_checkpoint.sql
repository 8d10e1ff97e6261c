-- final_lateness_checkpoint (issue 38, defects 3 and 7): emit 'final'
-- with a lateness.  A bucket whose end the watermark passed but not its
-- end plus the lateness is ready, not final, and in 'final' mode not
-- emitted: no upsert numbered it.  0.3.0's checkpoint validation counted
-- it as emitted ("The changelog sequence 0 is smaller than the 1 emitted
-- rows need", SF003), so the pipeline's own checkpoint was refused by
-- restore(), and compact(), add_partition and set_retention, which store
-- the state as a checkpoint, failed the same way; a measures pipeline's
-- write path compaction stored such a document and no backend could load
-- the pipeline again.  visible_aggregates() showed the ready bucket,
-- where visible() is empty in 'final' mode (docs/semantics.md).

SELECT streamforge.create_pipeline('fc', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)], 5,
    emit => 'final');
SELECT count(*) FROM streamforge.append('fc', 'p', 'e1', 'a', 34, 6);
-- watermark 42: [30, 40) is ready (40 <= 42), not final (42 <= 40 + 5)
SELECT count(*) FROM streamforge.advance('fc', 'p', 42);
SELECT changes_emitted, live_buckets, visible_rows FROM streamforge.stats('fc');
SELECT * FROM streamforge.visible('fc');
-- the pipeline's own checkpoint restores, and restores to itself
CREATE TABLE flc_ck AS SELECT streamforge.checkpoint('fc') AS doc;
SELECT streamforge.restore('fc', (SELECT doc FROM flc_ck));
SELECT streamforge.checkpoint('fc') = (SELECT doc FROM flc_ck) AS same;
SELECT * FROM streamforge.live('fc');
-- compact, add_partition, set_retention
SELECT streamforge.compact('fc', 0);
SELECT streamforge.add_partition('fc', 'q');
SELECT streamforge.set_retention('fc', 1000);
-- a cold load in a new backend reads what they stored
\c
SELECT * FROM streamforge.live('fc');
SELECT * FROM streamforge.visible('fc');
-- and the bucket is final, once, when the watermark passes 45
SELECT count(*) FROM streamforge.advance('fc', 'q', 50);
SELECT seq, op, window_start, count, sum FROM streamforge.advance('fc', 'p', 50);
SELECT streamforge.drop_pipeline('fc');

-- 'update+final' emitted the ready bucket (an upsert): unchanged
SELECT streamforge.create_pipeline('fuf', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)], 5,
    emit => 'update+final');
SELECT count(*) FROM streamforge.append('fuf', 'p', 'e1', 'a', 34, 6);
SELECT seq, op, window_start FROM streamforge.advance('fuf', 'p', 42);
SELECT streamforge.restore('fuf', streamforge.checkpoint('fuf'));
SELECT * FROM streamforge.visible('fuf');
SELECT streamforge.drop_pipeline('fuf');

-- a measures pipeline, with compaction_threshold at its minimum (0: every
-- write call whose journal outgrows four times the snapshot compacts):
-- every write leaves a pipeline that a new backend loads
SET streamforge.compaction_threshold = 0;
SELECT streamforge.create_pipeline('fm', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)], 5,
    emit => 'final', measures => ARRAY['a', 'b'],
    aggregates => ARRAY['sum(a)', 'max(b)', 'count(*)']);
SELECT count(*) FROM streamforge.ingest_measures('fm', 'p', 0, 'e0', 'x', 34, ARRAY[6, 1]);
SELECT count(*) FROM streamforge.ingest_measures('fm', 'p', 1, 'e1', 'y', 35, ARRAY[7, 2]);
SELECT count(*) FROM streamforge.ingest_measures('fm', 'p', 2, 'e2', 'x', 36, ARRAY[8, 3]);
-- [30, 40) of x and y ready, not final; more ready rows than final ones
SELECT count(*) FROM streamforge.advance('fm', 'p', 42);
SELECT count(*) FROM streamforge.ingest_measures('fm', 'p', 3, 'e3', 'y', 41, ARRAY[9, 4]);
SELECT count(*) FROM streamforge.ingest_measures('fm', 'p', 4, 'e4', 'z', 43, ARRAY[1, 5]);
-- enough writes for the write path to compact (the journal outgrows four
-- times the snapshot) while [30, 40) is ready and not final
DO $$
BEGIN
    FOR i IN 5 .. 64 LOOP
        PERFORM count(*) FROM streamforge.ingest_measures('fm', 'p', i, 'e' || i,
            'k' || (i % 7), 41 + i % 9, ARRAY[i, i % 5]);
    END LOOP;
END
$$;
SELECT accepted FROM streamforge.stats('fm');
-- defect 7: visible_aggregates() is empty in 'final' mode, as visible()
SELECT count(*) FROM streamforge.visible('fm');
SELECT * FROM streamforge.visible_aggregates('fm');
\c
SET streamforge.compaction_threshold = 0;
SELECT * FROM streamforge.live_aggregates('fm') WHERE key IN ('x', 'y', 'z')
 ORDER BY window_start, key;
SELECT count(*), sum(count) FROM streamforge.live_aggregates('fm');
SELECT * FROM streamforge.visible_aggregates('fm');
SELECT streamforge.restore('fm', streamforge.checkpoint('fm'));
SELECT streamforge.compact('fm', 0);
SELECT count(*) FROM streamforge.add_partition('fm', 'q');
SELECT count(*) FROM streamforge.set_retention('fm', 1000);
\c
-- the ready rows are final, once, with their values
SELECT count(*) FROM streamforge.advance('fm', 'q', 60);
SELECT seq, op, key, window_start, count, sum, min, max
  FROM streamforge.advance('fm', 'p', 60) WHERE key IN ('x', 'y', 'z');
SELECT * FROM streamforge.live_aggregates('fm');
SELECT streamforge.drop_pipeline('fm');
DROP TABLE flc_ck;
