#!/usr/bin/env bash
# bench/perrow.sh: per-row write calls against a per-event upsert and
# against ingest_batch (issue 14, item 1).  Not part of the test suite.
#
#   ./bench/perrow.sh [--rows N] [--keep]
#
# Builds the extension, installs it into a private copy of the PostgreSQL
# tree in a scratch directory (scripts/lib.sh, sf_private_tree; like
# bench/run.sh, so nobody else's install changes the code under test),
# starts a throwaway cluster on a Unix socket there, loads N rows (default
# 200,000: 4 partitions, 1,000 keys, event times that wander) and times, in
# one run, each in one transaction on a fresh pipeline (or table):
#   upsert    a PL/pgSQL loop running INSERT ... ON CONFLICT DO UPDATE per
#             row into a plain (key, window) table: the hand-written baseline
#   lateral   SELECT ... FROM rows, LATERAL streamforge.ingest(...)
#   loop      a PL/pgSQL loop calling streamforge.ingest per row (PERFORM:
#             the executor runs the set-returning call per row)
#   loop-count
#             a PL/pgSQL loop assigning n := streamforge.ingest_count(...)
#             per row: not set-returning, so PL/pgSQL evaluates it as a
#             simple expression, without the executor
#   batch     one streamforge.ingest_batch call with every row
#   floor-lateral, floor-loop
#             the same LATERAL join calling a scalar C function
#             (abs(off): the FunctionScan path of a set-returning call,
#             without its work) and PL/pgSQL loop calling a C function that
#             returns no rows (generate_series(off, -1)) instead of
#             ingest: what the executor and PL/pgSQL cost per row before
#             any streamforge code runs, so the best ratio any per-row
#             function could reach against the upsert is upsert / floor
# checks that the four pipelines ended equal, and prints events/s and the
# ratios issue 14 asks for: lateral, loop and loop-count against upsert
# (target: at least 5x faster) and batch against them (target: at most 3x).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGOPTIONS PGSERVICE PGSERVICEFILE
ROWS=200000
KEEP=
while [ $# -gt 0 ]; do
	case "$1" in
		--rows) ROWS=$2; shift ;;
		--keep) KEEP=1 ;;
		*) echo "usage: $0 [--rows N] [--keep]" >&2; exit 2 ;;
	esac
	shift
done
PORT=5434						# names the socket file only: no TCP listener

sf_check_server_user
command -v bc >/dev/null || sf_die "bc is needed"
sf_say "building"
make -C "$SF_ROOT" -s -j2 PG_CONFIG="$PG_CONFIG" >/dev/null || sf_die "build failed"

bench_scratch perrow
bench_initdb "shared_buffers = 512MB" "max_wal_size = 8GB" "autovacuum = off"
bench_start

sf_say "loading $ROWS rows"
psql_db -c "CREATE EXTENSION streamforge" -c "
CREATE TABLE rows AS
  SELECT i, 'p' || (i % 4) AS part, (i / 4)::bigint AS off, 'e' || i AS eid,
         'k' || (i * 7919 % 1000) AS key,
         (i / 10 + (i * 31 % 200))::bigint AS t, (i % 97)::bigint AS v
    FROM generate_series(0, $ROWS - 1) AS i" -c "
CREATE TABLE agg (key text, win bigint, cnt bigint, total bigint,
                  PRIMARY KEY (key, win))" -c "VACUUM ANALYZE rows" -c "
SELECT streamforge.create_pipeline(n, ARRAY['p0', 'p1', 'p2', 'p3'],
         ARRAY[streamforge.fixed('m', 60)], 1000000)
  FROM unnest(ARRAY['lateral', 'loop', 'loop-count', 'batch']) AS n" >/dev/null

# run NAME SQL: time SQL in one transaction
declare -A secs=()
run() {
	local name=$1 sql=$2 t0 t1
	t0=$(date +%s.%N)
	psql_db -c "BEGIN" -c "$sql" -c "COMMIT" >/dev/null
	t1=$(date +%s.%N)
	secs[$name]=$(echo "$t1 - $t0" | bc -l)
	printf '    %-13s %8.2f s %12.0f events/s\n' "$name" "${secs[$name]}" \
		"$(echo "$ROWS / ${secs[$name]}" | bc -l)"
}

sf_say "timing $ROWS events per driver, one transaction each"
run upsert 'DO $$
DECLARE r record;
BEGIN
    FOR r IN SELECT * FROM rows ORDER BY i LOOP
        INSERT INTO agg VALUES (r.key, r.t - r.t % 60, 1, r.v)
        ON CONFLICT (key, win) DO UPDATE
            SET cnt = agg.cnt + 1, total = agg.total + excluded.total;
    END LOOP;
END $$'
run lateral "SELECT count(*) FROM rows r,
    LATERAL streamforge.ingest('lateral', r.part, r.off, r.eid, r.key, r.t, r.v)"
run loop 'DO $$
DECLARE r record;
BEGIN
    FOR r IN SELECT * FROM rows ORDER BY i LOOP
        PERFORM streamforge.ingest($q$loop$q$, r.part, r.off, r.eid, r.key, r.t, r.v);
    END LOOP;
END $$'
run loop-count 'DO $$
DECLARE r record; n integer;
BEGIN
    FOR r IN SELECT * FROM rows ORDER BY i LOOP
        n := streamforge.ingest_count($q$loop-count$q$, r.part, r.off, r.eid, r.key, r.t, r.v);
    END LOOP;
END $$'
run batch "SELECT count(*) FROM streamforge.ingest_batch('batch',
    (SELECT array_agg(ROW(part, off, eid, key, t, v)::streamforge.delivery ORDER BY i)
       FROM rows))"

run floor-lateral "SELECT count(*) FROM rows r,
    LATERAL pg_catalog.abs(r.off)"
run floor-loop 'DO $$
DECLARE r record;
BEGIN
    FOR r IN SELECT * FROM rows ORDER BY i LOOP
        PERFORM pg_catalog.generate_series(r.off, -1);
    END LOOP;
END $$'

same=$(psql_db -At -c "SELECT count(DISTINCT (SELECT string_agg(r::text, ',' ORDER BY r::text)
                                              FROM streamforge.live(n) r))
                         FROM unnest(ARRAY['lateral', 'loop', 'loop-count', 'batch']) AS n")
[ "$same" = 1 ] || sf_die "the four pipelines differ"

ratio() { echo "$1 / $2" | bc -l; }
echo
sf_say "ratios (same rows, same run; $(git -C "$SF_ROOT" rev-parse --short HEAD 2>/dev/null || echo nogit))"
# show LABEL SLOWER FASTER TARGET: how many times FASTER's driver beat SLOWER's
show() {
	printf '    %-22s %5.1fx faster%s\n' "$1" "$(ratio "${secs[$2]}" "${secs[$3]}")" "${4:+ (target $4)}"
}
show 'lateral vs upsert:' upsert lateral '>= 5'
show 'loop vs upsert:' upsert loop '>= 5'
show 'loop-count vs upsert:' upsert loop-count '>= 5'
show 'batch vs lateral:' lateral batch '<= 3'
show 'batch vs loop:' loop batch '<= 3'
show 'batch vs loop-count:' loop-count batch '<= 3'
show 'loop-count vs loop:' loop loop-count
printf '    floor-lateral vs upsert: %5.1fx faster (the most a per-row LATERAL call could reach)\n' \
	"$(ratio "${secs[upsert]}" "${secs[floor-lateral]}")"
printf '    floor-loop    vs upsert: %5.1fx faster (the most a per-row PL/pgSQL call could reach)\n' \
	"$(ratio "${secs[upsert]}" "${secs[floor-loop]}")"
