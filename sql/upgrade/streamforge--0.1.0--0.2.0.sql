-- streamforge 0.1.0 -> 0.2.0 (ALTER EXTENSION streamforge UPDATE TO '0.2.0')
--
-- Every storage and SQL API change of 0.2.0, applied to a database that runs
-- 0.1.0.  Each section names the change and the file of sql/install/ whose
-- definitions it brings over; after this script the extension's objects are
-- exactly those of a fresh CREATE EXTENSION at 0.2.0 (test/t/090_upgrade.pl
-- compares them), and pipelines, outputs, grants and checkpoints of 0.1.0
-- keep working.

\echo Use "ALTER EXTENSION streamforge UPDATE TO '0.2.0'" to load this file. \quit

-- ----------------------------------------------------------------
-- Journal epochs (issue 11, item 2; src/persist.c, docs/persistence.md)
-- ----------------------------------------------------------------
-- Nothing to convert.  Journal positions now start again at 1 after every
-- compaction and restore, in every backend; the epoch is the pipeline's
-- snapshot_version, which 0.1.0 already stores.  A 0.1.0 journal whose
-- positions continue from before its snapshot is read as it is: only the
-- order of the positions within one snapshot's journal matters.

-- ----------------------------------------------------------------
-- Buffered journal entries (issue 14, item 1; src/persist.c, src/journal.c)
-- ----------------------------------------------------------------
-- Nothing to convert.  A journal row may now hold several entries (format
-- byte 2); rows of one entry keep the 0.1.0 format (1), and 0.1.0 rows are
-- read as they are.  Only a 0.1.0 library could not read the new rows:
-- after ALTER EXTENSION UPDATE, do not go back to the 0.1.0 library.
