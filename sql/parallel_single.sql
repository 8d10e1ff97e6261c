-- One writer of a parallel pipeline (issue 46, docs/design/parallel-writers.md,
-- build plan step 4): the same random transactions on a serial pipeline and
-- on a parallel one with the same definition give the same checkpoint (but
-- for the "writers" key), changelog with its seq, results, late output and
-- live buckets; also with compaction at nearly every commit, and read back
-- by a new connection (a cold load of head, lanes and journals).
\set VERBOSITY sqlstate

-- the driver's state, per pipeline, in a table: a rolled-back call or
-- transaction rolls it back too, so both runs stay in step
CREATE TABLE ps_state (pipe text PRIMARY KEY, next_id int NOT NULL,
                       offs bigint[] NOT NULL, last_id int[] NOT NULL,
                       maxt bigint NOT NULL, errors int NOT NULL DEFAULT 0,
                       measures bool NOT NULL DEFAULT false);

-- event n's content is a function of n, so a later delivery of n is a
-- duplicate; every 13th event is 60 behind (late once the watermark passed)
CREATE FUNCTION ps_key(n int) RETURNS text LANGUAGE sql IMMUTABLE
    RETURN 'k' || (n % 4);
CREATE FUNCTION ps_time(n int) RETURNS bigint LANGUAGE sql IMMUTABLE
    RETURN CASE WHEN n % 13 = 0 THEN 2 * n - 60 ELSE 2 * n + (n * 37) % 23 - 11 END;
CREATE FUNCTION ps_value(n int) RETURNS bigint LANGUAGE sql IMMUTABLE
    RETURN n % 7;
CREATE FUNCTION ps_w(n int) RETURNS bigint LANGUAGE sql IMMUTABLE
    RETURN CASE WHEN n % 3 = 0 THEN NULL ELSE n % 5 - 2 END;

-- one delivery at an explicit offset, of either kind of pipeline; delta
-- changes the value (a conflict)
CREATE FUNCTION ps_ingest(pipe text, part text, off bigint, n int, delta int)
RETURNS int LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT measures FROM ps_state WHERE ps_state.pipe = ps_ingest.pipe) THEN
        RETURN streamforge.ingest_measures_count(pipe, part, off, 'e' || n, ps_key(n),
            ps_time(n), ARRAY[ps_value(n) + delta, ps_w(n)]);
    END IF;
    RETURN streamforge.ingest_count(pipe, part, off, 'e' || n, ps_key(n),
        ps_time(n), ps_value(n) + delta);
END $$;

-- one delivery of event n to partition i (1-based) at its next offset
CREATE FUNCTION ps_deliver(pipe text, i int, n int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    st ps_state;
    parts text[] := ARRAY['a', 'b', 'c'];
BEGIN
    SELECT * INTO st FROM ps_state WHERE ps_state.pipe = ps_deliver.pipe;
    PERFORM ps_ingest(pipe, parts[i], st.offs[i], n, 0);
    UPDATE ps_state SET offs[i] = st.offs[i] + 1, last_id[i] = n,
           maxt = greatest(maxt, ps_time(n))
     WHERE ps_state.pipe = ps_deliver.pipe;
END $$;

-- a multi-row insert into the pipeline's attached table: k rows, one
-- statement, at the partitions' next offsets
CREATE FUNCTION ps_insert(pipe text, k int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    st ps_state;
    parts text[] := ARRAY['a', 'b', 'c'];
    ids int[] := '{}';
    ps int[] := '{}';
    n int;
BEGIN
    SELECT * INTO st FROM ps_state WHERE ps_state.pipe = ps_insert.pipe;
    n := st.next_id;
    FOR j IN 1 .. k LOOP
        ps := ps || (1 + floor(random() * 3))::int;
        IF random() < 0.2 THEN
            ids := ids || (40 + floor(random() * (n - 40)))::int;
        ELSE
            ids := ids || n;
            n := n + 1;
        END IF;
    END LOOP;
    EXECUTE format('INSERT INTO %I (eid, part, k, t, v, w) '
                   'SELECT ''e'' || id, ($2)[p], ps_key(id), ps_time(id), ps_value(id), ps_w(id) '
                   'FROM unnest($1, $3) AS u(id, p)', 'src_' || pipe)
        USING ids, parts, ps;
    FOR j IN 1 .. k LOOP
        st.offs[ps[j]] := st.offs[ps[j]] + 1;
        st.last_id[ps[j]] := ids[j];
        st.maxt := greatest(st.maxt, ps_time(ids[j]));
    END LOOP;
    UPDATE ps_state SET next_id = n, offs = st.offs, last_id = st.last_id,
           maxt = st.maxt WHERE ps_state.pipe = ps_insert.pipe;
END $$;

-- one random call
CREATE FUNCTION ps_call(pipe text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    st ps_state;
    parts text[] := ARRAY['a', 'b', 'c'];
    r float8 := random();
    i int := 1 + floor(random() * 3)::int;
    n int;
BEGIN
    SELECT * INTO st FROM ps_state WHERE ps_state.pipe = ps_call.pipe;
    IF r < 0.40 THEN
        -- a new event, or (a fifth) a duplicate of an earlier one
        IF random() < 0.2 AND st.next_id > 41 THEN
            n := 40 + floor(random() * (st.next_id - 40))::int;
        ELSE
            n := st.next_id;
            UPDATE ps_state SET next_id = n + 1 WHERE ps_state.pipe = ps_call.pipe;
        END IF;
        PERFORM ps_deliver(pipe, i, n);
    ELSIF r < 0.65 THEN
        PERFORM ps_insert(pipe, 2 + floor(random() * 20)::int);
    ELSIF r < 0.72 THEN
        -- an offset replay: the partition's last delivery again
        IF st.offs[i] > 0 THEN
            PERFORM ps_ingest(pipe, parts[i], st.offs[i] - 1, st.last_id[i], 0);
        END IF;
    ELSIF r < 0.84 THEN
        PERFORM streamforge.advance(pipe, parts[i],
                                    st.maxt - 30 + floor(random() * 20)::bigint);
    ELSIF r < 0.86 THEN
        PERFORM streamforge.mark_idle(pipe, parts[i]);
    ELSIF r < 0.95 THEN
        -- a savepoint that rolls back (its state with it)
        BEGIN
            PERFORM ps_insert(pipe, 1 + floor(random() * 5)::int);
            PERFORM ps_deliver(pipe, i, st.next_id + 100000);
            RAISE EXCEPTION 'ps_rollback';
        EXCEPTION WHEN raise_exception THEN
            NULL;
        END;
    ELSE
        -- an event id delivered before, with other content: SF002, caught
        BEGIN
            IF st.next_id > 41 THEN
                n := 40 + floor(random() * (st.next_id - 40))::int;
                PERFORM ps_ingest(pipe, parts[i], st.offs[i], n, 1);
            END IF;
        EXCEPTION WHEN OTHERS THEN
            UPDATE ps_state SET errors = errors + 1 WHERE ps_state.pipe = ps_call.pipe;
        END;
    END IF;
END $$;

-- ntx random transactions of 1-4 calls (a twentieth rolled back), then finish
CREATE PROCEDURE ps_drive(pipe text, seed float8, ntx int)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM setseed(seed);
    FOR t IN 1 .. ntx LOOP
        FOR c IN 1 .. 1 + floor(random() * 4)::int LOOP
            PERFORM ps_call(pipe);
        END LOOP;
        IF random() < 0.05 THEN
            ROLLBACK;
        ELSE
            COMMIT;
        END IF;
    END LOOP;
END $$;

CREATE PROCEDURE ps_setup(pipe text, parallel bool, def text, measures bool DEFAULT false)
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('SELECT streamforge.create_pipeline(%L, ARRAY[''a'', ''b'', ''c''], %s, writers => %L)',
                   pipe, def, CASE WHEN parallel THEN 'parallel' ELSE 'serial' END);
    PERFORM streamforge.configure_outputs(pipe);
    EXECUTE format('CREATE TABLE %I (eid text, part text, k text, t bigint, v bigint, w bigint)',
                   'src_' || pipe);
    IF measures THEN
        PERFORM streamforge.attach(pipe, ('src_' || pipe)::regclass, event_id => 'eid',
                                   key => 'k', event_time => 't', partition => 'part',
                                   measures => ARRAY['v', 'w']);
    ELSE
        PERFORM streamforge.attach(pipe, ('src_' || pipe)::regclass, event_id => 'eid',
                                   key => 'k', event_time => 't', value => 'v',
                                   partition => 'part');
    END IF;
    INSERT INTO ps_state VALUES (pipe, 40, '{0,0,0}', '{0,0,0}', 0, 0, measures);
END $$;

-- the differences between two pipelines' stored results, as one row
CREATE FUNCTION ps_compare(s text, p text,
    OUT checkpoint_same bool, OUT changelog_rows bigint, OUT changelog_diff bigint,
    OUT results_diff bigint, OUT late_rows bigint, OUT late_diff bigint,
    OUT live_diff bigint, OUT stats_same bool, OUT errors_same bool)
LANGUAGE plpgsql AS $$
BEGIN
    checkpoint_same :=
        streamforge.inspect_checkpoint(streamforge.checkpoint(s))::jsonb =
        streamforge.inspect_checkpoint(streamforge.checkpoint(p))::jsonb
            #- '{definition,writers}';
    SELECT count(*) INTO changelog_rows FROM streamforge.changelog WHERE pipeline = s;
    SELECT count(*) INTO changelog_diff FROM (
        (SELECT seq, op, window_name, key, window_start, window_end, count, sum, min, max, aggregates
           FROM streamforge.changelog WHERE pipeline = s
         EXCEPT ALL
         SELECT seq, op, window_name, key, window_start, window_end, count, sum, min, max, aggregates
           FROM streamforge.changelog WHERE pipeline = p)
        UNION ALL
        (SELECT seq, op, window_name, key, window_start, window_end, count, sum, min, max, aggregates
           FROM streamforge.changelog WHERE pipeline = p
         EXCEPT ALL
         SELECT seq, op, window_name, key, window_start, window_end, count, sum, min, max, aggregates
           FROM streamforge.changelog WHERE pipeline = s)) d;
    SELECT count(*) INTO results_diff FROM (
        (SELECT window_name, key, window_start, window_end, count, sum, min, max, seq, final, aggregates
           FROM streamforge.results WHERE pipeline = s
         EXCEPT ALL
         SELECT window_name, key, window_start, window_end, count, sum, min, max, seq, final, aggregates
           FROM streamforge.results WHERE pipeline = p)
        UNION ALL
        (SELECT window_name, key, window_start, window_end, count, sum, min, max, seq, final, aggregates
           FROM streamforge.results WHERE pipeline = p
         EXCEPT ALL
         SELECT window_name, key, window_start, window_end, count, sum, min, max, seq, final, aggregates
           FROM streamforge.results WHERE pipeline = s)) d;
    SELECT count(*) INTO late_rows FROM streamforge.late_output WHERE pipeline = s;
    SELECT count(*) INTO late_diff FROM (
        (SELECT late_seq, partition, source_offset, event_id, key, event_time, value, watermark
           FROM streamforge.late_output WHERE pipeline = s
         EXCEPT ALL
         SELECT late_seq, partition, source_offset, event_id, key, event_time, value, watermark
           FROM streamforge.late_output WHERE pipeline = p)
        UNION ALL
        (SELECT late_seq, partition, source_offset, event_id, key, event_time, value, watermark
           FROM streamforge.late_output WHERE pipeline = p
         EXCEPT ALL
         SELECT late_seq, partition, source_offset, event_id, key, event_time, value, watermark
           FROM streamforge.late_output WHERE pipeline = s)) d;
    SELECT count(*) INTO live_diff FROM (
        (SELECT * FROM streamforge.live(s) EXCEPT ALL SELECT * FROM streamforge.live(p))
        UNION ALL
        (SELECT * FROM streamforge.live(p) EXCEPT ALL SELECT * FROM streamforge.live(s))) d;
    stats_same := (SELECT row(s1.*, array(SELECT row(x.*) FROM streamforge.partitions(s) x))::text
                     FROM streamforge.stats(s) s1) =
                  (SELECT row(s1.*, array(SELECT row(x.*) FROM streamforge.partitions(p) x))::text
                     FROM streamforge.stats(p) s1);
    errors_same := (SELECT errors FROM ps_state WHERE pipe = s) =
                   (SELECT errors FROM ps_state WHERE pipe = p);
END $$;

-- 1. fixed and sliding windows, explicit advances
CALL ps_setup('ps_s1', false, $$ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 20, 10)], lateness => 5$$);
CALL ps_setup('ps_p1', true, $$ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 20, 10)], lateness => 5$$);
SELECT lane, partition FROM streamforge.lane l JOIN streamforge.pipeline p ON p.id = l.pipeline_id
 WHERE p.name = 'ps_p1' ORDER BY lane;
CALL ps_drive('ps_s1', 0.25, 150);
CALL ps_drive('ps_p1', 0.25, 150);
SELECT * FROM ps_compare('ps_s1', 'ps_p1');
-- the head journal and the lane rows are there (no compaction yet)
SELECT count(*) > 0 AS head_entries FROM streamforge.journal j
  JOIN streamforge.pipeline p ON p.id = j.pipeline_id WHERE p.name = 'ps_p1';
SELECT count(DISTINCT lane) AS lanes_with_rows FROM streamforge.lane_journal j
  JOIN streamforge.pipeline p ON p.id = j.pipeline_id WHERE p.name = 'ps_p1';
-- a new connection loads head and lanes from the tables
\c
SELECT * FROM ps_compare('ps_s1', 'ps_p1');
-- and goes on writing after the load
CALL ps_drive('ps_s1', 0.5, 60);
CALL ps_drive('ps_p1', 0.5, 60);
SELECT * FROM ps_compare('ps_s1', 'ps_p1');
-- finish: the serial call returns its changes, the parallel one none (they
-- are its commit's, in the changelog)
SELECT count(*) AS serial_rows FROM streamforge.finish('ps_s1');
SELECT count(*) AS parallel_rows FROM streamforge.finish('ps_p1');
SELECT * FROM ps_compare('ps_s1', 'ps_p1');
\c
SELECT * FROM ps_compare('ps_s1', 'ps_p1');

-- 2. built-in progress and sessions, compacted at nearly every commit
SET streamforge.compaction_threshold = 0;
CALL ps_setup('ps_s2', false, $$ARRAY[streamforge.session('ss', 8), streamforge.fixed('f', 10)], lateness => 3, out_of_orderness => 6$$);
CALL ps_setup('ps_p2', true, $$ARRAY[streamforge.session('ss', 8), streamforge.fixed('f', 10)], lateness => 3, out_of_orderness => 6$$);
CALL ps_drive('ps_s2', 0.75, 150);
CALL ps_drive('ps_p2', 0.75, 150);
SELECT * FROM ps_compare('ps_s2', 'ps_p2');
-- compacted: the head and every lane have a snapshot of the same version
SELECT count(*) AS lanes, count(l.snapshot) AS lane_snapshots,
       bool_and(l.snapshot_version = p.snapshot_version) AS same_version,
       bool_and(p.snapshot IS NOT NULL) AS head_snapshot
  FROM streamforge.lane l JOIN streamforge.pipeline p ON p.id = l.pipeline_id
 WHERE p.name = 'ps_p2';
RESET streamforge.compaction_threshold;
\c
SELECT * FROM ps_compare('ps_s2', 'ps_p2');
CALL ps_drive('ps_s2', 0.125, 60);
CALL ps_drive('ps_p2', 0.125, 60);
SELECT * FROM ps_compare('ps_s2', 'ps_p2');

-- 3. restore: each pipeline takes its own checkpoint back (the parallel
-- one split into head and lanes, stored as their snapshots) and goes on
SELECT streamforge.restore('ps_p2', streamforge.checkpoint('ps_p2')) IS NULL;
SELECT streamforge.restore('ps_s2', streamforge.checkpoint('ps_s2')) IS NULL;
SELECT count(*) AS head_entries FROM streamforge.journal j
  JOIN streamforge.pipeline p ON p.id = j.pipeline_id WHERE p.name = 'ps_p2';
CALL ps_drive('ps_s2', 0.875, 40);
CALL ps_drive('ps_p2', 0.875, 40);
SELECT * FROM ps_compare('ps_s2', 'ps_p2');
\c
SELECT * FROM ps_compare('ps_s2', 'ps_p2');

-- 3b. a measures pipeline: every fixed-word kind, first/last by arrival,
-- NULL measures, and a variable-size state
CALL ps_setup('ps_s3', false, $$ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 12, 4)], lateness => 6, measures => ARRAY['v', 'w NULL'], aggregates => ARRAY['count', 'sum(v)', 'min(w)', 'max(w)', 'avg(v)', 'first(v)', 'last(w)', 'count_if(v > 2)', 'max_by(v, w)', 'count_distinct(w)']$$, true);
CALL ps_setup('ps_p4', true, $$ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 12, 4)], lateness => 6, measures => ARRAY['v', 'w NULL'], aggregates => ARRAY['count', 'sum(v)', 'min(w)', 'max(w)', 'avg(v)', 'first(v)', 'last(w)', 'count_if(v > 2)', 'max_by(v, w)', 'count_distinct(w)']$$, true);
CALL ps_drive('ps_s3', 0.375, 120);
CALL ps_drive('ps_p4', 0.375, 120);
SELECT * FROM ps_compare('ps_s3', 'ps_p4');
\c
SELECT * FROM ps_compare('ps_s3', 'ps_p4');

-- 4. what a parallel pipeline refuses: the forms that return changes
-- (0A000), a checkpoint in the writing transaction, a retention, an
-- idle_timeout; definition changes work since h46d (sql/parallel_redefine.sql:
-- here one to the lateness ps_p1 has, which changes nothing)
\set VERBOSITY default
SELECT * FROM streamforge.ingest('ps_p1', 'a', 1000, 'x', 'k', 1, 1);
SELECT * FROM streamforge.ingest_batch('ps_p1',
    ARRAY[ROW('a', 1000, 'x', 'k', 1, 1)::streamforge.delivery]);
BEGIN;
SELECT streamforge.ingest_count('ps_p1', 'a', 0, 'e40', ps_key(40), ps_time(40), ps_value(40));
SELECT streamforge.checkpoint('ps_p1') IS NULL;
ROLLBACK;
SELECT streamforge.create_pipeline('ps_x', ARRAY['a'], ARRAY[streamforge.fixed('f', 10)],
    retention => 100, writers => 'parallel');
SELECT streamforge.create_pipeline('ps_x', ARRAY['a'], ARRAY[streamforge.fixed('f', 10)],
    idle_timeout => '1 minute', writers => 'parallel');
SELECT count(*) FROM streamforge.set_lateness('ps_p1', 5);
\set VERBOSITY sqlstate

-- 5. the count forms count the events accepted; savepoints: a delivery
-- refused (SF002: the id is another lane's with other content) or rolled
-- back leaves the transaction's other writes, and the lane is rebuilt
SELECT streamforge.create_pipeline('ps_p3', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('f', 10)], lateness => 5, writers => 'parallel');
SELECT streamforge.configure_outputs('ps_p3');
BEGIN;
SELECT streamforge.ingest_count('ps_p3', 'a', 0, 'x1', 'k', 21, 1) AS new,
       streamforge.ingest_count('ps_p3', 'a', 0, 'x1', 'k', 21, 1) AS replay,
       streamforge.ingest_count('ps_p3', 'b', 0, 'x1', 'k', 21, 1) AS duplicate;
SAVEPOINT s;
SELECT streamforge.ingest_count('ps_p3', 'b', 1, 'x1', 'k', 21, 2);
ROLLBACK TO SAVEPOINT s;
SELECT streamforge.ingest_count('ps_p3', 'b', 1, 'x2', 'k', 22, 10);
SAVEPOINT t;
SELECT streamforge.ingest_count('ps_p3', 'a', 1, 'x3', 'k', 23, 100);
SELECT streamforge.ingest_count('ps_p3', 'b', 2, 'x4', 'k', 24, 1000);
ROLLBACK TO SAVEPOINT t;
SELECT streamforge.ingest_count('ps_p3', 'a', 1, 'x5', 'k', 25, 10000);
SELECT count(*) FROM streamforge.advance('ps_p3', 'a', 40);
COMMIT;
SELECT count, sum FROM streamforge.live('ps_p3');
SELECT count(*) FROM streamforge.advance('ps_p3', 'b', 40);
SELECT streamforge.ingest_count('ps_p3', 'b', 2, 'x6', 'k', 5, 1) AS late;
SELECT seq, op, key, window_start, count, sum FROM streamforge.changelog
 WHERE pipeline = 'ps_p3' ORDER BY seq;
SELECT partition, source_offset, event_id, watermark FROM streamforge.late_output
 WHERE pipeline = 'ps_p3';
SELECT jsonb_path_query(streamforge.inspect_checkpoint(streamforge.checkpoint('ps_p3'))::jsonb,
                        '$.sources[*]');
-- the reads of the head
SELECT * FROM streamforge.visible('ps_p3');
SELECT streamforge.watermark('ps_p3');
SELECT * FROM streamforge.partitions('ps_p3');
SELECT deliveries, accepted, duplicate_ids, late_events, changes_emitted, live_buckets
  FROM streamforge.stats('ps_p3');
SELECT event_id, partition FROM streamforge.late_events('ps_p3');
-- a whole transaction rolled back leaves nothing
BEGIN;
SELECT streamforge.ingest_count('ps_p3', 'a', 2, 'x7', 'k', 50, 1);
ROLLBACK;
SELECT streamforge.ingest_count('ps_p3', 'a', 2, 'x8', 'k', 51, 1);
SELECT count, sum FROM streamforge.live('ps_p3');

-- a pipeline dropped by the transaction that wrote it: the commit has
-- nothing to sequence; a drop rolled back to a savepoint leaves the writes
BEGIN;
SELECT streamforge.ingest_count('ps_p3', 'a', 3, 'x9', 'k', 52, 1);
SAVEPOINT d;
SELECT streamforge.drop_pipeline('ps_p3');
SELECT streamforge.ingest_count('ps_p3', 'a', 4, 'x10', 'k', 53, 1);
ROLLBACK TO SAVEPOINT d;
SELECT streamforge.ingest_count('ps_p3', 'a', 4, 'x10', 'k', 53, 1);
COMMIT;
SELECT count, sum FROM streamforge.live('ps_p3');
BEGIN;
SELECT streamforge.ingest_count('ps_p3', 'a', 5, 'x11', 'k', 54, 1);
SELECT streamforge.drop_pipeline('ps_p3');
COMMIT;
SELECT count(*) FROM streamforge.pipeline WHERE name = 'ps_p3';

-- a pipeline with a grant, opened again after a commit: its grants are
-- copied once (a double free crashed the backend here)
SELECT streamforge.create_pipeline('ps_g', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('w', 10)], writers => 'parallel');
CREATE ROLE ps_reader;
SELECT streamforge.grant('ps_g', 'ps_reader', 'read');
SELECT count(*) FROM streamforge.live('ps_g');
SELECT streamforge.ingest_count('ps_g', 'a', 0, 'g1', 'k', 5, 1);
SELECT count, sum FROM streamforge.live('ps_g');
SELECT streamforge.ingest_count('ps_g', 'b', 0, 'g2', 'k', 6, 2);
SELECT count, sum FROM streamforge.live('ps_g');
SELECT streamforge.drop_pipeline('ps_g');
DROP ROLE ps_reader;

-- drop: the lanes and their rows go with the pipeline
SELECT streamforge.drop_pipeline(p) FROM unnest(ARRAY['ps_s1', 'ps_p1', 'ps_s2', 'ps_p2', 'ps_s3', 'ps_p4']) AS p;
SELECT count(*) FROM streamforge.lane;
SELECT count(*) FROM streamforge.lane_journal;
