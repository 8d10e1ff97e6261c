--
-- Every late event a pipeline with a retention records reaches late_output
-- exactly once, also when the retention forgets it in the call that
-- recorded it, or when a call forgets older late events (issue 38, the
-- model's second session, item 5: late_output lost them).  retention 0,
-- out_of_orderness 0: an event's watermark is its time, and a late row is
-- forgotten as soon as the watermark passes the one it was recorded at.
--
CREATE FUNCTION lor_check(name text) RETURNS TABLE (late_seq bigint, event_id text,
    event_time bigint, watermark bigint, remembered boolean)
LANGUAGE sql AS $$
    SELECT o.late_seq, o.event_id, o.event_time, o.watermark,
           EXISTS (SELECT 1 FROM streamforge.late_events(name) e
                    WHERE e.late_seq = o.late_seq)
      FROM streamforge.late_output o WHERE o.pipeline = name ORDER BY o.late_seq
$$;

-- the reproduction: the second batch forgets late_seq 1 and records 2
SELECT streamforge.create_pipeline('r2', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    retention => 0, out_of_orderness => 0);
SELECT streamforge.configure_outputs('r2');
SELECT count(*) FROM streamforge.ingest_batch('r2', ARRAY[ROW('p',0,'e1','k',10,1),
    ROW('p',1,'e2','k',5,1)]::streamforge.delivery[]);
SELECT count(*) FROM streamforge.ingest_batch('r2', ARRAY[ROW('p',2,'e3','k',20,1),
    ROW('p',3,'e4','k',15,1)]::streamforge.delivery[]);
SELECT * FROM lor_check('r2');
SELECT late_seq FROM streamforge.late_events('r2');

-- one call records a late event (late_seq 1, watermark 10) and forgets it
-- (e3 moves the watermark to 20)
SELECT streamforge.create_pipeline('r3', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    retention => 0, out_of_orderness => 0);
SELECT streamforge.configure_outputs('r3');
SELECT count(*) FROM streamforge.ingest_batch('r3', ARRAY[ROW('p',0,'e1','k',10,1),
    ROW('p',1,'e2','k',5,1), ROW('p',2,'e3','k',20,1)]::streamforge.delivery[]);
SELECT * FROM lor_check('r3');
SELECT count(*) FROM streamforge.late_events('r3');
-- append_batch the same way: late_seq 2 (watermark 20), forgotten at 30
SELECT count(*) FROM streamforge.append_batch('r3', ARRAY[ROW('p','e4','k',12,1),
    ROW('p','e5','k',30,1)]::streamforge.event[]);
SELECT * FROM lor_check('r3');

-- one batch crosses several forgets: late_seq 1 to 3, each forgotten by
-- the next delivery; then one more late event that stays (late_seq 4)
SELECT streamforge.create_pipeline('r4', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    retention => 0, out_of_orderness => 0);
SELECT streamforge.configure_outputs('r4');
SELECT count(*) FROM streamforge.ingest_batch('r4', ARRAY[
    ROW('p',0,'a','k',10,1), ROW('p',1,'l1','k',5,1),
    ROW('p',2,'b','k',20,1), ROW('p',3,'l2','k',15,1),
    ROW('p',4,'c','k',30,1), ROW('p',5,'l3','k',25,1),
    ROW('p',6,'d','k',40,1), ROW('p',7,'l4','k',35,1)]::streamforge.delivery[]);
SELECT * FROM lor_check('r4');
SELECT late_seq, watermark FROM streamforge.late_events('r4');
SELECT late_events, remembered_late_events, forgotten_late_events
  FROM streamforge.stats('r4');

-- a restore and a cold load go on from there: the next late_seq is 5
SELECT streamforge.restore('r4', streamforge.checkpoint('r4'));
SELECT count(*) FROM streamforge.ingest_batch('r4', ARRAY[
    ROW('p',8,'e','k',50,1), ROW('p',9,'l5','k',45,1)]::streamforge.delivery[]);
\c -
SELECT count(*) FROM streamforge.ingest_batch('r4', ARRAY[
    ROW('p',10,'f','k',60,1), ROW('p',11,'l6','k',55,1),
    ROW('p',12,'g','k',70,1)]::streamforge.delivery[]);
SELECT * FROM lor_check('r4');
SELECT late_seq, watermark FROM streamforge.late_events('r4');
SELECT late_events, remembered_late_events, forgotten_late_events
  FROM streamforge.stats('r4');

-- a single ingest: late_seq 1 recorded, forgotten by the next call, which
-- records late_seq 2 (each once in late_output)
SELECT streamforge.create_pipeline('r5', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    retention => 0, out_of_orderness => 0);
SELECT streamforge.configure_outputs('r5');
SELECT count(*) FROM streamforge.ingest('r5', 'p', 0, 'a', 'k', 10, 1);
SELECT count(*) FROM streamforge.ingest('r5', 'p', 1, 'l1', 'k', 5, 1);
SELECT count(*) FROM streamforge.ingest_batch('r5', ARRAY[
    ROW('p',2,'b','k',20,1), ROW('p',3,'l2','k',15,1)]::streamforge.delivery[]);
SELECT * FROM lor_check('r5');

SELECT streamforge.drop_pipeline(n) FROM unnest(ARRAY['r2', 'r3', 'r4', 'r5']) n;
DROP FUNCTION lor_check(text);
