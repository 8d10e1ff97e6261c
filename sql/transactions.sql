-- Transactions: a pipeline's state commits and rolls back with the caller's
-- transaction (docs/semantics.md "Transactions"), in this backend's cache too.  Rolled-back
-- calls never happened: the next committed change reuses their seq numbers.

-- w: fixed windows of 10; a watermark exists once both a and b reported.
SELECT streamforge.create_pipeline('transactions', ARRAY['b', 'a'],
                                   ARRAY[streamforge.fixed('w', 10)]);
SELECT count(*) FROM streamforge.advance('transactions', 'a', 10);
SELECT count(*) FROM streamforge.advance('transactions', 'b', 10);
SELECT count(*) FROM streamforge.ingest('transactions', 'a', 0, 'e0', 'k', 12, 1);

-- one journal row per write call; each transaction bumps the version once
SELECT version, snapshot_version FROM streamforge.pipeline WHERE name = 'transactions';
CREATE VIEW t_journal AS
  SELECT pos, entry FROM streamforge.journal
   WHERE pipeline_id = (SELECT id FROM streamforge.pipeline WHERE name = 'transactions');
SELECT pos, octet_length(entry) FROM t_journal ORDER BY pos;

-- ROLLBACK: the window closed inside the transaction reopens; seq 1 again
BEGIN;
SELECT * FROM streamforge.advance('transactions', 'a', 20);
SELECT * FROM streamforge.advance('transactions', 'b', 20);
SELECT * FROM streamforge.partitions('transactions');
ROLLBACK;
SELECT * FROM streamforge.partitions('transactions');
SELECT streamforge.watermark('transactions');
SELECT version FROM streamforge.pipeline WHERE name = 'transactions';
SELECT * FROM streamforge.advance('transactions', 'a', 20);
SELECT * FROM streamforge.advance('transactions', 'b', 20);

-- an error undoes the whole transaction, earlier successful calls included
BEGIN;
SELECT * FROM streamforge.ingest('transactions', 'a', 1, 'e1', 'k', 25, 2);
SELECT * FROM streamforge.ingest('transactions', 'a', 3, 'e3', 'k', 26, 3);   -- gap: SF001
ROLLBACK;
SELECT partition, consumed_offset FROM streamforge.partitions('transactions');
-- a failing statement outside a block changes nothing either
SELECT * FROM streamforge.ingest('transactions', 'a', 0, 'e0', 'k', 12, 99);  -- SF001
SELECT * FROM streamforge.ingest('transactions', 'b', 0, 'e0', 'x', 12, 1);   -- SF002
SELECT partition, consumed_offset FROM streamforge.partitions('transactions');
SELECT deliveries, accepted, offset_replays FROM streamforge.stats('transactions');

-- ROLLBACK TO SAVEPOINT, nested savepoints and RELEASE
BEGIN;
SELECT count(*) FROM streamforge.ingest('transactions', 'a', 1, 'e1', 'k', 25, 2);
SAVEPOINT s1;
SELECT count(*) FROM streamforge.ingest('transactions', 'a', 2, 'e2', 'k', 27, 3);
SAVEPOINT s2;
SELECT * FROM streamforge.advance('transactions', 'a', 30);
SELECT * FROM streamforge.advance('transactions', 'b', 30);
RELEASE s2;
SELECT * FROM streamforge.live('transactions');
ROLLBACK TO SAVEPOINT s1;
-- e2 and both advances are gone; e1 stays
SELECT * FROM streamforge.partitions('transactions');
SELECT * FROM streamforge.live('transactions');
SELECT * FROM streamforge.ingest('transactions', 'a', 2, 'e2b', 'k', 28, 4);
SELECT * FROM streamforge.advance('transactions', 'a', 30);
SELECT * FROM streamforge.advance('transactions', 'b', 30);
COMMIT;
SELECT * FROM streamforge.visible('transactions');
-- that transaction bumped the version (from 5) at its first call, and once
-- more after ROLLBACK TO SAVEPOINT had discarded the cached state (the next
-- call re-read the row); it journaled its four surviving calls ('I'ngest,
-- 'A'dvance) after the others
SELECT version FROM streamforge.pipeline WHERE name = 'transactions';
SELECT pos, chr(get_byte(entry, 1)) AS kind FROM t_journal ORDER BY pos;

-- a PL/pgSQL exception block undoes the calls made inside it
DO $$
BEGIN
    BEGIN
        PERFORM streamforge.ingest('transactions', 'b', 0, 'e4', 'k', 35, 5);
        PERFORM streamforge.advance('transactions', 'a', 40);
        PERFORM streamforge.advance('transactions', 'b', 40);
        PERFORM streamforge.ingest('transactions', 'b', 1, 'e1', 'k', 25, 7);  -- SF002
    EXCEPTION WHEN SQLSTATE 'SF002' THEN
        RAISE NOTICE 'caught: %', SQLERRM;
    END;
    -- the calls inside the block are gone, this one commits
    PERFORM streamforge.ingest('transactions', 'b', 0, 'e4', 'k', 36, 6);
END
$$;
SELECT * FROM streamforge.partitions('transactions');
SELECT * FROM streamforge.live('transactions');
SELECT * FROM streamforge.advance('transactions', 'a', 40);
SELECT * FROM streamforge.advance('transactions', 'b', 40);

-- a function whose caller catches its error
CREATE FUNCTION ingest_then_fail() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM streamforge.ingest('transactions', 'b', 1, 'e5', 'k', 45, 1);
    RAISE EXCEPTION 'failing on purpose';
END
$$;
DO $$
BEGIN
    PERFORM ingest_then_fail();
EXCEPTION WHEN raise_exception THEN
    RAISE NOTICE 'caught: %', SQLERRM;
END
$$;
SELECT partition, consumed_offset FROM streamforge.partitions('transactions');

-- reads inside a transaction see its own writes
BEGIN;
SELECT count(*) FROM streamforge.ingest('transactions', 'b', 1, 'e5', 'k', 45, 1);
SELECT partition, consumed_offset FROM streamforge.partitions('transactions');
SELECT count(*) FROM streamforge.live('transactions');
COMMIT;

-- a new connection resumes at the last commit
SELECT * FROM streamforge.partitions('transactions');
SELECT * FROM streamforge.live('transactions');
SELECT * FROM streamforge.stats('transactions');
\c
SELECT * FROM streamforge.partitions('transactions');
SELECT * FROM streamforge.live('transactions');
SELECT * FROM streamforge.stats('transactions');
SELECT * FROM streamforge.advance('transactions', 'a', 50);
SELECT * FROM streamforge.advance('transactions', 'b', 50);

-- drop and re-create in one transaction, rolled back: the old state stays
BEGIN;
SELECT streamforge.drop_pipeline('transactions');
SELECT streamforge.create_pipeline('transactions', ARRAY['a'],
                                   ARRAY[streamforge.fixed('w', 5)]);
SELECT * FROM streamforge.partitions('transactions');
ROLLBACK;
SELECT * FROM streamforge.partitions('transactions');

-- drop and re-create, committed: a fresh pipeline, seq starts at 1
SELECT id AS old_id FROM streamforge.pipeline WHERE name = 'transactions' \gset
SELECT streamforge.drop_pipeline('transactions');
SELECT count(*) FROM streamforge.journal WHERE pipeline_id = :old_id;
SELECT streamforge.create_pipeline('transactions', ARRAY['a', 'b'],
                                   ARRAY[streamforge.fixed('w', 10)]);
SELECT * FROM streamforge.partitions('transactions');
SELECT count(*) FROM streamforge.ingest('transactions', 'a', 0, 'e0', 'k', 1, 1);
SELECT count(*) FROM streamforge.advance('transactions', 'a', 10);
SELECT * FROM streamforge.advance('transactions', 'b', 10);
SELECT streamforge.create_pipeline('transactions', ARRAY['a'],
                                   ARRAY[streamforge.fixed('w', 10)]);  -- 42710
SELECT streamforge.drop_pipeline('nope');                            -- 42704
SELECT streamforge.watermark('nope');                                -- 42704
SELECT streamforge.watermark('');                                    -- 42704

-- the stored state is validated when it is loaded (a new backend replays it)
SELECT count(*) FROM streamforge.ingest('transactions', 'b', 0, 'e1', 'k', 2, 1);
CREATE TABLE saved_entry AS
  SELECT pipeline_id, pos, entry FROM streamforge.journal
   WHERE pipeline_id = (SELECT id FROM streamforge.pipeline WHERE name = 'transactions')
   ORDER BY pos DESC LIMIT 1;
UPDATE streamforge.journal j SET entry = '\x07490000'
  FROM saved_entry s WHERE (j.pipeline_id, j.pos) = (s.pipeline_id, s.pos);
\c
SELECT streamforge.watermark('transactions');
-- an entry that parses but does not fit the state: offset 5 is a gap
-- (the entry is compact, format 3: byte 5 is the offset's zigzag varint)
UPDATE streamforge.journal j
   SET entry = overlay(s.entry placing '\x0a'::bytea from 5 for 1)
  FROM saved_entry s WHERE (j.pipeline_id, j.pos) = (s.pipeline_id, s.pos);
SELECT streamforge.watermark('transactions');
UPDATE streamforge.journal j SET entry = s.entry || '\x00'::bytea
  FROM saved_entry s WHERE (j.pipeline_id, j.pos) = (s.pipeline_id, s.pos);
SELECT streamforge.watermark('transactions');
UPDATE streamforge.journal j SET entry = substr(s.entry, 1, 10)
  FROM saved_entry s WHERE (j.pipeline_id, j.pos) = (s.pipeline_id, s.pos);
SELECT streamforge.watermark('transactions');
-- repaired, the same backend rebuilds the state
UPDATE streamforge.journal j SET entry = s.entry
  FROM saved_entry s WHERE (j.pipeline_id, j.pos) = (s.pipeline_id, s.pos);
SELECT streamforge.watermark('transactions');
SELECT partition, consumed_offset FROM streamforge.partitions('transactions');
DROP TABLE saved_entry;

-- the tables are not accessible to PUBLIC
CREATE ROLE regress_sf_user;
GRANT USAGE ON SCHEMA streamforge TO regress_sf_user;
SET ROLE regress_sf_user;
SELECT streamforge.watermark('transactions');
SELECT * FROM streamforge.ingest('transactions', 'a', 1, 'e2', 'k', 3, 1);
RESET ROLE;
REVOKE USAGE ON SCHEMA streamforge FROM regress_sf_user;
DROP ROLE regress_sf_user;

-- (DROP EXTENSION is in test/t/030_dump_extension.pl, which has a server of
-- its own)
SELECT streamforge.drop_pipeline('transactions');
DROP VIEW t_journal;
DROP FUNCTION ingest_then_fail();
