-- Output epochs (issue 25 item 2; docs/outputs.md, Epochs): restore() and
-- resync_outputs() start a new epoch of the outputs, carried by every
-- changelog and results row written after it (and by the notifications,
-- test/specs/notify_roles.spec), so that a consumer that polls by seq
-- sees the rewind of the seq numbers.
\set VERBOSITY sqlstate
-- (epochs come from one sequence: fixed numbers for this test)
ALTER SEQUENCE streamforge.output_epoch_seq RESTART WITH 10;

SELECT streamforge.create_pipeline('ep', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)],
    lateness => 10);
SELECT streamforge.configure_outputs('ep');
SELECT epoch FROM streamforge.output_config WHERE pipeline = 'ep';
SELECT count(*) FROM streamforge.ingest('ep', 'p', 0, 'e0', 'k', 1, 1);
SELECT count(*) FROM streamforge.advance('ep', 'p', 10);
CREATE TEMP TABLE cp AS SELECT streamforge.checkpoint('ep') AS c;
SELECT count(*) FROM streamforge.ingest('ep', 'p', 1, 'e1', 'k', 2, 1);
SELECT count(*) FROM streamforge.ingest('ep', 'p', 2, 'e2', 'k', 12, 1);
SELECT count(*) FROM streamforge.advance('ep', 'p', 25);
SELECT seq, op, window_start, count, epoch FROM streamforge.changelog
 WHERE pipeline = 'ep' ORDER BY seq;

-- restore to the checkpoint: seq 2.. are gone and will be emitted again,
-- in a new epoch (11)
SELECT streamforge.restore('ep', (SELECT c FROM cp));
SELECT epoch FROM streamforge.output_config WHERE pipeline = 'ep';
SELECT seq, op, window_start, count, epoch FROM streamforge.changelog
 WHERE pipeline = 'ep' ORDER BY seq;
SELECT count(*) FROM streamforge.ingest('ep', 'p', 1, 'x1', 'k', 3, 5);
SELECT seq, op, window_start, count, epoch FROM streamforge.changelog
 WHERE pipeline = 'ep' ORDER BY seq;
SELECT window_start, count, seq, final, epoch FROM streamforge.results
 WHERE pipeline = 'ep' ORDER BY window_start;

-- resync_outputs by hand starts an epoch too, even when nothing changes
SELECT streamforge.resync_outputs('ep');
SELECT epoch FROM streamforge.output_config WHERE pipeline = 'ep';

-- outputs turned off and on again: a new epoch (what happened meanwhile
-- is not in the outputs), never an earlier one
SELECT streamforge.disable_outputs('ep');
SELECT count(*) FROM streamforge.advance('ep', 'p', 30);
SELECT streamforge.configure_outputs('ep');
SELECT epoch FROM streamforge.output_config WHERE pipeline = 'ep';

-- a reader sees the epoch and its rows; it cannot change the epoch
CREATE ROLE regress_ep_reader;
GRANT USAGE ON SCHEMA streamforge TO regress_ep_reader;
SELECT streamforge.grant('ep', 'regress_ep_reader', 'read');
SET ROLE regress_ep_reader;
SELECT epoch FROM streamforge.output_config WHERE pipeline = 'ep';
UPDATE streamforge.output_config SET epoch = 1 WHERE pipeline = 'ep';
SELECT streamforge.resync_outputs('ep');
RESET ROLE;

SELECT streamforge.drop_pipeline('ep');
REVOKE USAGE ON SCHEMA streamforge FROM regress_ep_reader;
DROP ROLE regress_ep_reader;
