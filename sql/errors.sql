-- errors: one row per error condition with its SQLSTATE (and, for the
-- streamforge-specific ones, the start of the message that docs/semantics.md fixes).
-- Every error leaves the pipeline's state unchanged.
\set VERBOSITY sqlstate
-- run a statement, return the SQLSTATE of its error
CREATE FUNCTION pg_temp.sqlstate_of(stmt text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE stmt;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    IF SQLSTATE = 'SF001' AND SQLERRM LIKE 'offset conflict%' THEN
        RETURN 'SF001 offset conflict';
    ELSIF SQLSTATE = 'SF002' AND SQLERRM LIKE 'identity conflict%' THEN
        RETURN 'SF002 identity conflict';
    ELSIF SQLSTATE = 'SF003' AND SQLERRM LIKE 'invalid checkpoint%' THEN
        RETURN 'SF003 invalid checkpoint';
    ELSIF SQLSTATE LIKE 'SF%' THEN
        RETURN SQLSTATE || ' with an unexpected message: ' || SQLERRM;
    END IF;
    RETURN SQLSTATE;
END
$$;
SELECT streamforge.create_pipeline('errors', ARRAY['p', 'q'],
    ARRAY[streamforge.fixed('f', 10), streamforge.session('s', 5)]);
SELECT * FROM streamforge.ingest('errors', 'p', 0, 'a', 'k', 5, 1);
SELECT * FROM streamforge.ingest('errors', 'q', 0, 'b', 'k', 12, 2);
SELECT * FROM streamforge.advance('errors', 'p', 10);
SELECT * FROM streamforge.advance('errors', 'q', 10);
-- the state before the errors
SELECT md5(streamforge.checkpoint('errors')) AS before_errors \gset
SELECT condition, pg_temp.sqlstate_of(stmt) AS sqlstate
  FROM (VALUES
    (1, 'unknown pipeline', $$SELECT * FROM streamforge.ingest('nope', 'p', 1, 'x', 'k', 1, 1)$$),
    (2, 'pipeline already exists', $$SELECT streamforge.create_pipeline('errors', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)])$$),
    (3, 'NULL pipeline name', $$SELECT streamforge.watermark(NULL)$$),
    (4, 'NULL argument', $$SELECT * FROM streamforge.ingest('errors', 'p', 1, 'x', 'k', 1, NULL)$$),
    (5, 'empty event_id', $$SELECT * FROM streamforge.ingest('errors', 'p', 1, '', 'k', 1, 1)$$),
    (6, 'unknown partition (ingest)', $$SELECT * FROM streamforge.ingest('errors', 'r', 0, 'x', 'k', 1, 1)$$),
    (7, 'unknown partition (advance)', $$SELECT * FROM streamforge.advance('errors', 'r', 100)$$),
    (8, 'unknown partition (mark_idle)', $$SELECT * FROM streamforge.mark_idle('errors', 'r')$$),
    (9, 'bad window definition', $$SELECT streamforge.fixed('f', 0)$$),
    (10, 'negative lateness', $$SELECT streamforge.create_pipeline('errors2', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)], -1)$$),
    (11, 'offset gap', $$SELECT * FROM streamforge.ingest('errors', 'p', 2, 'x', 'k', 11, 1)$$),
    (12, 'negative offset', $$SELECT * FROM streamforge.ingest('errors', 'p', -1, 'x', 'k', 11, 1)$$),
    (13, 'different delivery at a consumed offset', $$SELECT * FROM streamforge.ingest('errors', 'p', 0, 'a', 'k', 5, 2)$$),
    (14, 'identity conflict', $$SELECT * FROM streamforge.ingest('errors', 'q', 1, 'a', 'k', 5, 2)$$),
    (15, 'window bound out of bigint range', $$SELECT * FROM streamforge.ingest('errors', 'p', 1, 'x', 'k', 9223372036854775807, 1)$$),
    (16, 'invalid checkpoint', $$SELECT streamforge.restore('errors', '\x00'::bytea)$$),
    (17, 'NULL batch', $$SELECT * FROM streamforge.ingest_batch('errors', NULL)$$),
    (18, 'failing batch', $$SELECT * FROM streamforge.ingest_batch('errors', ARRAY[ROW('p', 1, 'x', 'k', 11, 1), ROW('q', 2, 'y', 'k', 11, 1)]::streamforge.delivery[])$$)
  ) AS t(n, condition, stmt)
 ORDER BY n;
-- nothing changed
SELECT md5(streamforge.checkpoint('errors')) = :'before_errors' AS unchanged;
SELECT * FROM streamforge.partitions('errors');
SELECT * FROM streamforge.visible('errors');
SELECT * FROM streamforge.late_events('errors');
SELECT * FROM streamforge.partitions('errors2');
-- an error aborts the transaction: what the transaction did before is
-- undone too, and its seq numbers are used again by the next change
BEGIN;
SELECT * FROM streamforge.advance('errors', 'p', 20);
SELECT * FROM streamforge.advance('errors', 'q', 20);
SELECT * FROM streamforge.ingest('errors', 'p', 5, 'x', 'k', 30, 1);
-- PostgreSQL's usual error for calls in a failed transaction
SELECT streamforge.watermark('errors');
ROLLBACK;
SELECT streamforge.watermark('errors');
SELECT md5(streamforge.checkpoint('errors')) = :'before_errors' AS unchanged;
SELECT * FROM streamforge.advance('errors', 'p', 20);
SELECT * FROM streamforge.advance('errors', 'q', 20);
SELECT streamforge.drop_pipeline('errors');
