-- Parallel writers (issue 46, docs/design/parallel-writers.md): internal
-- entries that test the engine's parts against a reference (build plan
-- step 2; src/api/parallel_check.c).  Not granted to PUBLIC: tests only,
-- they touch no table (docs/security.md, "Internal test functions").

CREATE OR REPLACE FUNCTION streamforge_internal.fingerprint_check(ops integer,
    hash_bits integer, seed bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sf_fingerprint_check'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

REVOKE ALL ON FUNCTION streamforge_internal.fingerprint_check(integer, integer,
    bigint) FROM PUBLIC;

COMMENT ON FUNCTION streamforge_internal.fingerprint_check(integer, integer,
    bigint) IS
    'internal, tests: random operations on the fingerprint index of parallel writers, compared with a reference';

CREATE OR REPLACE FUNCTION streamforge_internal.fingerprint_hash(event_id text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sf_fingerprint_hash'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

REVOKE ALL ON FUNCTION streamforge_internal.fingerprint_hash(text) FROM PUBLIC;

COMMENT ON FUNCTION streamforge_internal.fingerprint_hash(text) IS
    'internal, tests: the fingerprint index''s 64-bit hash of an event id';

CREATE OR REPLACE FUNCTION streamforge_internal.parallel_check(pipeline text,
    calls integer, seed bigint, conflict boolean DEFAULT false,
    OUT transactions bigint, OUT deliveries bigint, OUT late bigint,
    OUT alone bigint, OUT duplicates bigint, OUT replays bigint,
    OUT redecides bigint, OUT collisions bigint, OUT changes bigint,
    OUT checkpoints bigint, OUT exact bigint, OUT rollbacks bigint,
    OUT error text)
RETURNS record
AS 'MODULE_PATHNAME', 'sf_parallel_check'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

REVOKE ALL ON FUNCTION streamforge_internal.parallel_check(text, integer,
    bigint, boolean) FROM PUBLIC;

COMMENT ON FUNCTION streamforge_internal.parallel_check(text, integer, bigint,
    boolean) IS
    'internal, tests: random calls of two interleaved writers through lanes, transaction deltas and the head of parallel writers, compared with the serial engine in commit order';

CREATE OR REPLACE FUNCTION streamforge_internal.parallel_codec_check(
    pipeline text, calls integer, seed bigint,
    OUT transactions bigint, OUT changes bigint, OUT head_entries bigint,
    OUT entry_bytes bigint, OUT replayed bigint, OUT k_entries bigint,
    OUT lane_rows bigint, OUT snapshots bigint, OUT splits bigint,
    OUT continued bigint, OUT damaged bigint, OUT damaged_loaded bigint,
    OUT forged bigint, OUT error text)
RETURNS record
AS 'MODULE_PATHNAME', 'sf_parallel_codec_check'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

REVOKE ALL ON FUNCTION streamforge_internal.parallel_codec_check(text, integer,
    bigint) FROM PUBLIC;

COMMENT ON FUNCTION streamforge_internal.parallel_codec_check(text, integer,
    bigint) IS
    'internal, tests: parallel_check''s run with the codec of parallel writers checked at every commit and whenever no transaction is open (head entries, lane entries and K entries replayed into lanes, head and lane snapshots, checkpoint merge and split, damaged and forged bytes)';
