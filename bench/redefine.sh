#!/usr/bin/env bash
# bench/redefine.sh: how long a definition change holds the pipeline's lock,
# and what a cold load costs after it (issue 21).  Not part of the test
# suite.
#
#   ./bench/redefine.sh [--events N] [--keep]
#
# Builds the extension into a private copy of the PostgreSQL tree in a
# scratch directory (as bench/perrow.sh does), starts a throwaway cluster on
# a Unix socket there, ingests N events (default 1,000,000; 4 partitions,
# 1,000 keys, event times roughly in order, one fixed 60-unit window,
# lateness 100) into one pipeline, advances it so that old buckets are
# finalized, and then times, one transaction each, a series of definition
# changes: add_partition, add_window (fixed 600), set_lateness (raise,
# then lower), drop_window.  A change holds the pipeline's row lock from
# its start to its commit, so its time is what a writer on the pipeline
# waits.  After each change a new session times its first read (a cold
# load of the stored snapshot) and the script prints the snapshot's format
# and size.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGOPTIONS PGSERVICE PGSERVICEFILE
EVENTS=1000000
KEEP=
while [ $# -gt 0 ]; do
	case "$1" in
		--events) EVENTS=$2; shift ;;
		--keep) KEEP=1 ;;
		*) echo "usage: $0 [--events N] [--keep]" >&2; exit 2 ;;
	esac
	shift
done
PORT=5435						# names the socket file only: no TCP listener

sf_check_server_user
command -v bc >/dev/null || sf_die "bc is needed"
sf_say "building"
make -C "$SF_ROOT" -s -j2 PG_CONFIG="$PG_CONFIG" >/dev/null || sf_die "build failed"

SCRATCH=$(mktemp -d /tmp/streamforge-redefine.XXXXXX)
chmod 755 "$SCRATCH"
SRVBIN=$SCRATCH/pg$PGBIN
started=
cleanup() {
	local rc=$?
	if [ -n "$started" ]; then
		SF_RUN_DIR=$SCRATCH sf_as_server "$SRVBIN/pg_ctl" \
			-D "$SCRATCH/data" -m fast -w stop >/dev/null 2>&1 || true
	fi
	if [ -n "$KEEP" ] || [ "$rc" -ne 0 ]; then
		echo "scratch directory kept: $SCRATCH"
	else
		rm -rf "$SCRATCH"
	fi
	exit $rc
}
trap cleanup EXIT

sf_private_tree "$SCRATCH/pg"
sf_is_root && chown -R postgres:postgres "$SCRATCH"
as_server() { SF_RUN_DIR=$SCRATCH sf_as_server "$@"; }
psql_db() {
	as_server "$SRVBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SCRATCH" -p "$PORT" \
		-U postgres -d postgres "$@"
}

as_server "$SRVBIN/initdb" -D "$SCRATCH/data" -U postgres -A trust \
	--locale=C --encoding=UTF8 >"$SCRATCH/initdb.log" 2>&1 ||
	{ cat "$SCRATCH/initdb.log"; sf_die "initdb failed"; }
printf '%s\n' "listen_addresses = ''" "port = $PORT" \
	"unix_socket_directories = '$SCRATCH'" "unix_socket_permissions = 0700" \
	"shared_buffers = 512MB" "max_wal_size = 8GB" "autovacuum = off" |
	as_server tee -a "$SCRATCH/data/postgresql.conf" >/dev/null
as_server "$SRVBIN/pg_ctl" -D "$SCRATCH/data" -l "$SCRATCH/server.log" -w start >/dev/null ||
	{ tail -n 20 "$SCRATCH/server.log"; sf_die "could not start the cluster"; }
started=1

sf_say "ingesting $EVENTS events"
psql_db -c "CREATE EXTENSION streamforge" -c "
SELECT streamforge.create_pipeline('b', ARRAY['p0', 'p1', 'p2', 'p3'],
         ARRAY[streamforge.fixed('m', 60)], 100)" >/dev/null
psql_db -c "
DO \$\$
DECLARE c bigint;
BEGIN
    FOR c IN 0 .. ($EVENTS - 1) / 100000 LOOP
        PERFORM pg_catalog.count(*) FROM streamforge.ingest_batch('b', ARRAY(
            SELECT ROW('p' || (i % 4), i / 4, 'e' || i, 'k' || (i * 7919 % 1000),
                       i / 100 + (i * 31 % 50), i % 97)::streamforge.delivery
              FROM pg_catalog.generate_series(c * 100000::bigint,
                       LEAST(c * 100000 + 99999, $EVENTS - 1)) AS i));
    END LOOP;
END \$\$" -c "
SELECT pg_catalog.count(*) FROM unnest(ARRAY['p0', 'p1', 'p2', 'p3']) AS p,
       LATERAL streamforge.advance('b', p, $EVENTS / 100)" >/dev/null

secs() { echo "$2 - $1" | bc -l; }
# time_cold: a new session's first read of the pipeline
time_cold() {
	local t0 t1
	t0=$(date +%s.%N)
	psql_db -c "SELECT streamforge.watermark('b')" >/dev/null
	t1=$(date +%s.%N)
	secs "$t0" "$t1"
}
# change NAME SQL: the change in one transaction, then a cold load
change() {
	local name=$1 sql=$2 t0 t1 fmt
	t0=$(date +%s.%N)
	psql_db -c "BEGIN" -c "SELECT pg_catalog.count(*) FROM $sql" -c "COMMIT" >/dev/null
	t1=$(date +%s.%N)
	fmt=$(psql_db -At -c "
SELECT CASE WHEN pg_catalog.substr(snapshot, 1, 8) = pg_catalog.convert_to(E'SFSNAPB\n', 'UTF8')
            THEN 'binary' ELSE 'checkpoint' END || ' ' ||
       pg_catalog.pg_size_pretty(pg_catalog.octet_length(snapshot)::bigint)
  FROM streamforge.pipeline WHERE name = 'b'")
	printf '    %-14s lock %7.2f s   cold load after %6.2f s   snapshot %s\n' \
		"$name" "$(secs "$t0" "$t1")" "$(time_cold)" "$fmt"
}

sf_say "cold load before any change: $(printf '%.2f' "$(time_cold)") s"
sf_say "definition changes at $EVENTS events, one transaction each"
change add_partition "streamforge.add_partition('b', 'p4')"
change add_window "streamforge.add_window('b', streamforge.fixed('h', 600))"
change raise "streamforge.set_lateness('b', 200)"
change lower "streamforge.set_lateness('b', 100)"
change drop_window "streamforge.drop_window('b', 'h')"
