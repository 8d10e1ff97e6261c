-- Consumer bookmarks (issue 25 item 4; docs/outputs.md, Consumer
-- bookmarks): register_consumer, commit_consumer, consumer_lag, trims that
-- keep what the slowest consumer needs, and who may commit which bookmark.
\set VERBOSITY sqlstate

CREATE ROLE regress_cons_a;
CREATE ROLE regress_cons_b;
CREATE ROLE regress_cons_none;
GRANT USAGE ON SCHEMA streamforge TO regress_cons_a, regress_cons_b, regress_cons_none;
SELECT streamforge.create_pipeline('cons', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
SELECT streamforge.configure_outputs('cons');
SELECT streamforge.grant('cons', 'regress_cons_a', 'read');
SELECT streamforge.grant('cons', 'regress_cons_b', 'read');
SELECT count(*) FROM streamforge.ingest_batch('cons', ARRAY(
    SELECT ROW('p', i, 'e' || i, 'k', i * 10, 1)::streamforge.delivery
      FROM generate_series(0, 9) AS i));
SELECT count(*) FROM streamforge.advance('cons', 'p', 200);
SELECT count(*) FROM streamforge.ingest('cons', 'p', 10, 'late1', 'k', 5, 1);
SELECT max(seq) AS last_seq FROM streamforge.changelog WHERE pipeline = 'cons';

-- readers register and commit their own bookmarks
SET ROLE regress_cons_a;
SELECT streamforge.register_consumer('cons', 'dashboard');
SELECT streamforge.commit_consumer('cons', 'dashboard', 6, 1);
RESET ROLE;
SET ROLE regress_cons_b;
SELECT streamforge.register_consumer('cons', 'mailer');
SELECT streamforge.commit_consumer('cons', 'mailer', 3);
-- not someone else's
SELECT streamforge.commit_consumer('cons', 'dashboard', 10);
SELECT streamforge.drop_consumer('cons', 'dashboard');
-- bad arguments
SELECT streamforge.register_consumer('cons', 'mailer');
SELECT streamforge.register_consumer('cons', '');
SELECT streamforge.register_consumer('cons', NULL);
SELECT streamforge.commit_consumer('cons', 'mailer', -1);
SELECT streamforge.commit_consumer('cons', 'nobody', 1);
-- a reader cannot trim
SELECT streamforge.trim_changelog('cons');
RESET ROLE;
-- a role without privilege cannot register, and sees no bookmark
SET ROLE regress_cons_none;
SELECT streamforge.register_consumer('cons', 'spy');
SELECT count(*) AS bookmarks_seen FROM streamforge.consumer_lag;
RESET ROLE;

SELECT pipeline, name, owner, seq, late_seq, changes_behind, late_behind,
       epoch = current_epoch AS current
  FROM streamforge.consumer_lag WHERE pipeline = 'cons' ORDER BY name;

-- trims keep what the slowest consumer (mailer, at seq 3) needs
SELECT streamforge.trim_changelog('cons', 8) AS trimmed;
SELECT min(seq) AS first_kept FROM streamforge.changelog WHERE pipeline = 'cons';
SELECT streamforge.trim_late_output('cons', 1) AS late_trimmed;   -- mailer: late_seq 0
SET ROLE regress_cons_b;
SELECT streamforge.commit_consumer('cons', 'mailer', 7, 1);
RESET ROLE;
-- without an argument: up to the slowest consumer exactly (dashboard, 6)
SELECT streamforge.trim_changelog('cons') AS trimmed;
SELECT min(seq) AS first_kept FROM streamforge.changelog WHERE pipeline = 'cons';
SELECT streamforge.trim_late_output('cons') AS late_trimmed;
-- an admin may commit any bookmark
SELECT streamforge.commit_consumer('cons', 'dashboard', 10);
SELECT name, seq, changes_behind FROM streamforge.consumer_lag
 WHERE pipeline = 'cons' ORDER BY name;
-- no consumers: the one-argument trim trims nothing
SELECT streamforge.drop_consumer('cons', 'dashboard');
SELECT streamforge.drop_consumer('cons', 'mailer');
SELECT streamforge.trim_changelog('cons') AS trimmed;

SELECT streamforge.drop_pipeline('cons');
REVOKE USAGE ON SCHEMA streamforge FROM regress_cons_a, regress_cons_b, regress_cons_none;
DROP ROLE regress_cons_a;
DROP ROLE regress_cons_b;
DROP ROLE regress_cons_none;
