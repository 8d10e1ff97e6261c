#!/usr/bin/env bash
# bench/results_lookup.sh: a key lookup in a results table of a million
# rows (issue 25 item 6).  Not part of the test suite.
#
#   ./bench/results_lookup.sh [--rows N] [--keep]
#
# Builds the extension into a private copy of the PostgreSQL tree in a
# scratch directory (as bench/redefine.sh does), starts a throwaway cluster
# on a Unix socket there, fills streamforge.results with N rows (default
# 1,000,000: 10 pipelines, 1,000 keys each, 100 windows per key), ANALYZEs
# it and times, in one run, the median of 21 executions (EXPLAIN ANALYZE's
# execution time, ms) of
#   key         WHERE pipeline = $p AND key = $k
#   key+range   the same AND window_start >= $a AND window_end <= $b
# with the hash index on the key of 0.3.0 and without it (0.2.0's indexes:
# what a user of 0.2.0 got), and prints the ratio.
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGOPTIONS PGSERVICE PGSERVICEFILE
ROWS=1000000
KEEP=
while [ $# -gt 0 ]; do
	case "$1" in
		--rows) ROWS=$2; shift ;;
		--keep) KEEP=1 ;;
		*) echo "usage: $0 [--rows N] [--keep]" >&2; exit 2 ;;
	esac
	shift
done
PORT=5436						# names the socket file only: no TCP listener

sf_check_server_user
command -v bc >/dev/null || sf_die "bc is needed"
sf_say "building"
make -C "$SF_ROOT" -s -j2 PG_CONFIG="$PG_CONFIG" >/dev/null || sf_die "build failed"

bench_scratch lookup
bench_initdb "shared_buffers = 512MB" "max_wal_size = 8GB" "autovacuum = off"
bench_start

sf_say "filling streamforge.results with $ROWS rows"
psql_db -c "CREATE EXTENSION streamforge" -c "
SELECT streamforge.create_pipeline('b' || i, ARRAY['p'], ARRAY[streamforge.fixed('m', 60)])
  FROM generate_series(0, 9) AS i" -c "
INSERT INTO streamforge.results (pipeline, window_name, key, window_start, window_end,
                                 count, sum, min, max, seq, final)
SELECT 'b' || (i % 10), 'm', 'key-' || (i / 10 % 1000), (i / 10000) * 60, (i / 10000) * 60 + 60,
       1, 1, 1, 1, i, true
  FROM generate_series(0, $ROWS - 1) AS i" -c "ANALYZE streamforge.results" >/dev/null

# median execution time (ms) of 21 runs of a query
median_ms() {
	local sql=$1
	psql_db -At -c "
CREATE OR REPLACE FUNCTION pg_temp.ms(q text) RETURNS float8 LANGUAGE plpgsql AS \$\$
DECLARE l text; t float8[] := '{}';
BEGIN
    FOR i IN 1 .. 21 LOOP
        FOR l IN EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF) ' || q LOOP
            IF l LIKE 'Execution Time:%' THEN
                t := t || substring(l FROM '([0-9.]+) ms')::float8;
            END IF;
        END LOOP;
    END LOOP;
    RETURN (SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(t) AS x);
END \$\$;
SELECT pg_temp.ms(\$q\$$sql\$q\$)"
}

KEY="SELECT * FROM streamforge.results WHERE pipeline = 'b3' AND key = 'key-417'"
RANGE="$KEY AND window_start >= 3000 AND window_end <= 4200"
sf_say "rows per lookup: $(psql_db -At -c "SELECT count(*) FROM ($KEY) AS x") (key), $(psql_db -At -c "SELECT count(*) FROM ($RANGE) AS x") (key+range)"
with_key=$(median_ms "$KEY")
with_range=$(median_ms "$RANGE")
psql_db -c "DROP INDEX streamforge.results_key" >/dev/null
without_key=$(median_ms "$KEY")
without_range=$(median_ms "$RANGE")
printf '    %-10s 0.3.0 (hash index on key) %8.3f ms   0.2.0 indexes %9.3f ms   %6.0fx\n' \
	key "$with_key" "$without_key" "$(echo "$without_key / $with_key" | bc -l)"
printf '    %-10s 0.3.0 (hash index on key) %8.3f ms   0.2.0 indexes %9.3f ms   %6.0fx\n' \
	key+range "$with_range" "$without_range" "$(echo "$without_range / $with_range" | bc -l)"
