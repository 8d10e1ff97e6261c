-- approx_percentile's checkpoint words refused by restore (issue 44, item
-- 2; since branch h44b): a sketch spanning more than 512 keys (the bound
-- of 4 kB per bucket, docs/aggregates.md "Percentiles"), and the other
-- forms a hostile checkpoint can take.  Each forged document is sealed
-- with a correct checksum (test/sql/checkpoint_forge.sql), so what refuses
-- it is the sketch's rule: SF003 with the sketch's reason, never a crash,
-- and the pipeline keeps its state.  A sketch word is (key + 4096) << 48
-- | count, keys in descending order; a span of 512 keys (the first and
-- the last 511 apart) is the most a sketch holds.
CREATE SCHEMA ph;
SET search_path = ph, public;
\i test/sql/checkpoint_forge.sql
SET search_path = public;

-- one bucket of 6 events, values 1, 2, 7 (the exact form: the values,
-- ascending); its document stays under 4096 bytes, uncompressed
SELECT streamforge.create_pipeline('ph', ARRAY['p0'], ARRAY[streamforge.fixed('f', 10)],
    measures => ARRAY['v'], aggregates => ARRAY['approx_percentile(v, 0.5) AS p50']);
SELECT count(*) FROM streamforge.ingest_measures_batch('ph', ARRAY(
    SELECT ROW('p0', i, 'e' || i, 'k', 1, ARRAY[v])::streamforge.measures_delivery
      FROM unnest(ARRAY[1, 2, 7, 1, 2, 7]) WITH ORDINALITY AS u(v, i0), LATERAL (SELECT i0 - 1 AS i) x));
SELECT window_name, window_start, count, aggregates FROM streamforge.live_aggregates('ph');
CREATE TABLE ph.ck AS SELECT streamforge.checkpoint('ph') AS c;
SET search_path = ph, public;
CREATE TABLE ph.doc AS SELECT ph.doc(c) AS d FROM ph.ck;
CREATE TABLE ph.sv AS
SELECT substring(d FROM '"state_var":\[\[[-0-9,]*\]\]') AS sv FROM ph.doc;
SELECT sv FROM ph.sv;
CREATE FUNCTION ph.try(cp bytea) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    st text; msg text; det text;
BEGIN
    PERFORM streamforge.restore('ph', cp);
    RETURN 'accepted';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
                            det = PG_EXCEPTION_DETAIL;
    RETURN st || ': ' || msg || coalesce(' | ' || nullif(det, ''), '');
END $$;
CREATE FUNCTION ph.forged(new_sv text) RETURNS text LANGUAGE sql AS $$
    SELECT ph.try(ph.envelope(convert_to(replace(d, sv, '"state_var":[' || new_sv || ']'),
                                         getdatabaseencoding()), 3))
      FROM ph.doc, ph.sv
$$;
-- a sketch word of key k and count c
CREATE FUNCTION ph.w(k bigint, c bigint) RETURNS text LANGUAGE sql AS
$$ SELECT (((k + 4096) << 48) | c)::text $$;
-- a sketch of the 40 highest keys from hi and the 40 lowest from lo, one
-- value each (its document must stay under 4096 bytes; refused as more
-- words than the bucket's events before the sketch reads them)
CREATE FUNCTION ph.run(hi bigint, lo bigint) RETURNS text LANGUAGE sql AS
$$ SELECT '[' || string_agg(ph.w(k, 1), ',' ORDER BY k DESC) || ']'
     FROM generate_series(lo, hi) AS k WHERE k > hi - 40 OR k < lo + 40 $$;
SELECT 'control' AS "case", ph.try(ph.envelope(convert_to(d, getdatabaseencoding()), 3)) FROM ph.doc
-- 512 keys apart and more: refused, whatever lies between
UNION ALL SELECT 'keys 600 and 88 (513 keys)', ph.forged('[' || ph.w(600, 150) || ',' || ph.w(88, 150) || ']')
UNION ALL SELECT 'keys 0 and -512 (513 keys)', ph.forged('[' || ph.w(0, 150) || ',' || ph.w(-512, 150) || ']')
UNION ALL SELECT '80 keys, 600 down to 88, one value each', ph.forged(ph.run(600, 88))
UNION ALL SELECT 'keys 2000 and -2000', ph.forged('[' || ph.w(2000, 1 << 40) || ',' || ph.w(-2000, 1 << 40) || ']')
UNION ALL SELECT 'largest counts, 513 keys', ph.forged('[' || ph.w(600, (1::bigint << 48) - 1) || ',' || ph.w(88, (1::bigint << 48) - 1) || ']')
-- the other rules
UNION ALL SELECT 'key beyond the last', ph.forged('[' || ph.w(4000, 150) || ',' || ph.w(3990, 150) || ']')
UNION ALL SELECT 'ascending keys', ph.forged('[' || ph.w(100, 150) || ',' || ph.w(200, 150) || ']')
UNION ALL SELECT 'count 0', ph.forged('[' || ph.w(200, 300) || ',' || ph.w(100, 0) || ']')
UNION ALL SELECT 'at most 256 values as a sketch', ph.forged('[' || ph.w(200, 100) || ',' || ph.w(100, 100) || ']')
UNION ALL SELECT '257 exact values', ph.forged('[' || (SELECT string_agg(i::text, ',') FROM generate_series(1, 257) AS i) || ']')
UNION ALL SELECT 'exact values descending', ph.forged('[1,7,2]');
-- 512 keys exactly (the first and the last 511 apart) is a sketch's most:
-- the span passes, and the sketch is refused as not its bucket's events'
SELECT '512 keys' AS "case", ph.forged('[' || ph.w(600, 150) || ',' || ph.w(89, 150) || ']');
SET search_path = public;
-- the pipeline kept its state through the refusals (restore the control)
SELECT streamforge.restore('ph', (SELECT c FROM ph.ck));
SELECT window_name, window_start, count, aggregates FROM streamforge.live_aggregates('ph');
SELECT streamforge.checkpoint('ph') = (SELECT c FROM ph.ck) AS same_bytes;

SELECT streamforge.drop_pipeline('ph');
DROP SCHEMA ph CASCADE;
