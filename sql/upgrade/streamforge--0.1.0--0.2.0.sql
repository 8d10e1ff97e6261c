-- streamforge 0.1.0 -> 0.2.0 (ALTER EXTENSION streamforge UPDATE TO '0.2.0')
--
-- Every storage and SQL API change of 0.2.0, applied to a database that runs
-- 0.1.0.  Each section names the change and the file of sql/install/ whose
-- definitions it brings over; after this script the extension's objects are
-- exactly those of a fresh CREATE EXTENSION at 0.2.0 (test/t/090_upgrade.pl
-- compares them), and pipelines, outputs, grants and checkpoints of 0.1.0
-- keep working.

\echo Use "ALTER EXTENSION streamforge UPDATE TO '0.2.0'" to load this file. \quit
