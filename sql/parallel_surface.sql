-- Every call of the SQL API that names a pipeline, on parallel pipelines
-- (writers => 'parallel', issue 46): each either works, or is refused with
-- 0A000 (feature_not_supported) and a message that names what is not built
-- yet; none may fail with an internal error (XX000) or crash.  The list
-- follows docs/reference.md; the steps of docs/design/parallel-writers.md
-- that build a refused call change its line here.
\set VERBOSITY default

-- one statement: the rows it returned or wrote, or its SQLSTATE and message
CREATE FUNCTION try(stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    EXECUTE stmt;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN 'ok (' || n || ' rows)';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

-- each statement in its own transaction (a write and a checkpoint in one
-- transaction are refused, which is not what this test is about)
CREATE TABLE outcome (i int PRIMARY KEY, statement text, outcome text);
CREATE PROCEDURE try_each(stmts text[]) LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1 .. cardinality(stmts) LOOP
        INSERT INTO outcome VALUES (i, stmts[i], try(stmts[i]));
        COMMIT;
    END LOOP;
END $$;

SELECT streamforge.create_pipeline('pp', ARRAY['a', 'b'],
         ARRAY[streamforge.fixed('f', 10), streamforge.session('s', 5)], 2,
         writers => 'parallel');
SELECT streamforge.create_pipeline('pm', ARRAY['a', 'b'],
         ARRAY[streamforge.fixed('f', 10)],
         measures => ARRAY['x', 'y'],
         aggregates => ARRAY['sum(x)', 'count_distinct(y)'],
         writers => 'parallel');
SELECT streamforge.configure_outputs('pp');
SELECT streamforge.configure_outputs('pm');
SELECT streamforge.ingest_count('pp', 'a', 0, 'e0', 'k', 3, 1);
SELECT streamforge.ingest_count('pp', 'b', 0, 'e1', 'k', 14, 2);
SELECT streamforge.ingest_measures_count('pm', 'a', 0, 'e0', 'k', 3, ARRAY[1, 2]);

CREATE TABLE src (id text, k text, t bigint, v bigint);

CALL try_each(ARRAY[
    -- writes
    $$SELECT streamforge.ingest_count('pp', 'a', 1, 'e2', 'k', 5, 1)$$,
    $$SELECT * FROM streamforge.ingest('pp', 'a', 2, 'e3', 'k', 6, 1)$$,
    $$SELECT * FROM streamforge.ingest_batch('pp', ARRAY[ROW('a', 3, 'e4', 'k', 7, 1)::streamforge.delivery])$$,
    $$SELECT streamforge.append('pp', 'a', 'e5', 'k', 8, 1)$$,
    $$SELECT * FROM streamforge.ingest_json('pp', '[{"partition": "a", "source_offset": 4, "event_id": "e6", "key": "k", "event_time": 9, "value": 1}]')$$,
    $$SELECT streamforge.ingest_measures_count('pm', 'a', 1, 'e1', 'k', 4, ARRAY[5, 6])$$,
    -- progress
    $$SELECT * FROM streamforge.advance('pp', 'a', 20)$$,
    $$SELECT * FROM streamforge.mark_idle('pp', 'b')$$,
    $$SELECT * FROM streamforge.tick('pp')$$,
    $$SELECT * FROM streamforge.tick_pipelines(ARRAY['pp', 'pm'])$$,
    $$SELECT * FROM streamforge.advance_to_now('pp', 'a')$$,
    $$SELECT * FROM streamforge.advance_to_now(ARRAY['pp'])$$,
    $$SELECT streamforge.lock_pipelines(ARRAY['pp', 'pm'])$$,
    -- reads
    $$SELECT * FROM streamforge.live('pp')$$,
    $$SELECT * FROM streamforge.visible('pp')$$,
    $$SELECT * FROM streamforge.live_aggregates('pm')$$,
    $$SELECT * FROM streamforge.visible_aggregates('pm')$$,
    $$SELECT * FROM streamforge.late_events('pp')$$,
    $$SELECT streamforge.watermark('pp')$$,
    $$SELECT * FROM streamforge.partitions('pp')$$,
    $$SELECT * FROM streamforge.stats('pp')$$,
    $$SELECT * FROM streamforge.metrics WHERE pipeline = 'pp'$$,
    $$SELECT * FROM streamforge.pipelines WHERE name = 'pp'$$,
    $$SELECT streamforge.definition('pp')$$,
    $$SELECT * FROM streamforge.pipeline_info WHERE name = 'pp'$$,
    $$SELECT * FROM streamforge.changelog WHERE pipeline = 'pp'$$,
    $$SELECT * FROM streamforge.results WHERE pipeline = 'pp'$$,
    -- outputs and consumers
    $$SELECT streamforge.register_consumer('pp', 'c1')$$,
    $$SELECT * FROM streamforge.consumer_lag WHERE pipeline = 'pp'$$,
    $$SELECT streamforge.drop_consumer('pp', 'c1')$$,
    $$SELECT * FROM streamforge.resync_outputs('pp')$$,
    $$SELECT * FROM streamforge.trim_results('pp')$$,
    $$SELECT * FROM streamforge.trim_changelog('pp')$$,
    $$SELECT * FROM streamforge.trim_late_output('pp')$$,
    -- checkpoints
    $$SELECT streamforge.checkpoint('pp')$$,
    $$SELECT streamforge.restore('pp', streamforge.checkpoint('pp'))$$,
    $$SELECT 'compacted' WHERE streamforge.compact('pp')$$,
    $$SELECT 'compacted' WHERE streamforge.compact('pp', 0)$$,
    -- definition changes
    $$SELECT streamforge.add_partition('pp', 'c')$$,
    $$SELECT streamforge.add_window('pp', streamforge.fixed('g', 20))$$,
    $$SELECT streamforge.drop_window('pp', 'f')$$,
    $$SELECT streamforge.set_lateness('pp', 5)$$,
    $$SELECT * FROM streamforge.set_emit('pp', 'final')$$,
    $$SELECT streamforge.set_out_of_orderness('pp', 3)$$,
    $$SELECT streamforge.set_retention('pp', 100)$$,
    $$SELECT streamforge.set_idle_timeout('pp', '1 minute')$$,
    $$SELECT * FROM streamforge.finish('pp')$$,
    -- attachments
    $$SELECT streamforge.attach('pp', 'src', 'id', 'k', 't', 'v', partition => $q$'a'$q$)$$,
    $$SELECT * FROM streamforge.attachments WHERE pipeline = 'pp'$$,
    $$INSERT INTO src VALUES ('r1', 'k', 11, 4), ('r2', 'k', 12, 5)$$,
    $$SELECT streamforge.detach('pp', 'src')$$,
    -- privileges
    $$SELECT streamforge.grant('pp', 'public', 'read')$$,
    $$SELECT streamforge.revoke('pp', 'public', 'read')$$,
    $$SELECT streamforge.set_owner('pp', current_user)$$,
    $$SELECT streamforge.has_pipeline_privilege('pp', 'ingest')$$,
    -- drop
    $$SELECT streamforge.drop_pipeline('pm')$$
  ]);
SELECT statement, outcome FROM outcome ORDER BY i;

SELECT streamforge.drop_pipeline('pp');
