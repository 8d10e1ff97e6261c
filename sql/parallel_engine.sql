-- The engine parts of parallel writers (issue 46, docs/design/
-- parallel-writers.md, build plan step 2), through internal functions
-- that compare them with a reference.  So far: the fingerprint index
-- (engine/fingerprint.c), with hashes narrowed to a few bits so that
-- collisions, long probe runs, wrap-around and backward-shift removals
-- are the common case, and with full 64-bit hashes.
\set VERBOSITY sqlstate

SELECT streamforge_internal.fingerprint_check(5000, 3, 1) > 0 AS narrow_3;
SELECT streamforge_internal.fingerprint_check(5000, 8, 2) > 0 AS narrow_8;
SELECT streamforge_internal.fingerprint_check(20000, 12, 3) > 0 AS narrow_12;
SELECT streamforge_internal.fingerprint_check(20000, 64, 4) > 0 AS full_64;
SELECT bool_and(streamforge_internal.fingerprint_check(2000, b, s) > 0) AS many_seeds
  FROM generate_series(1, 6) AS b, generate_series(10, 14) AS s;

-- the hash: stable, never 0, distinct for distinct ids here
SELECT streamforge_internal.fingerprint_hash('e1') =
       streamforge_internal.fingerprint_hash('e1') AS stable,
       count(DISTINCT streamforge_internal.fingerprint_hash('e' || i)) AS distinct_hashes,
       bool_and(streamforge_internal.fingerprint_hash('e' || i) <> 0) AS nonzero
  FROM generate_series(1, 10000) AS i;

-- bad arguments
SELECT streamforge_internal.fingerprint_check(10, 0, 1);
SELECT streamforge_internal.fingerprint_check(-1, 8, 1);

-- not for PUBLIC
SELECT p.proname, has_function_privilege('public', p.oid, 'EXECUTE') AS public_execute
  FROM pg_proc p
 WHERE p.pronamespace = 'streamforge_internal'::regnamespace
   AND p.proname LIKE 'fingerprint%'
 ORDER BY 1;
