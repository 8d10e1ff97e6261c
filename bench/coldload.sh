#!/usr/bin/env bash
# bench/coldload.sh: the cold load of issue 26, item 5, on a throwaway
# cluster of a private PostgreSQL tree (like bench/soak.sh).
#
# 1,000,000 events fed as an application would: 20,000 batches of 50
# events (event time = offset, ten keys), an advance after each, one
# transaction each, no retention, into a fixed-window pipeline.  The journal stays below
# the write path's compaction threshold (64 MB), so a new connection's first
# call replays all of it.  Then streamforge.compact(), as pg_cron would run
# it off the write path, and a new connection loads again.  Recorded each
# time: the cold load (wall / CPU ms) and the memory per delivery of the
# loading backend, and the journal and snapshot sizes.
#
#   ./bench/coldload.sh [--quick]     (--quick: 100,000 events)
#
# Writes bench/results/coldload-<date>-<shortsha>[-quick].md and prints it.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGOPTIONS PGSERVICE PGSERVICEFILE
PORT=5436						# names the socket file only: no TCP listener
DB=coldload
N=1000000
SUFFIX=
KEEP=
while [ $# -gt 0 ]; do
	case "$1" in
		--quick) N=100000; SUFFIX=-quick ;;
		--keep) KEEP=1 ;;
		-h | --help) sed -n '2,16p' "$0"; exit 0 ;;
		*) echo "usage: $0 [--quick] [--keep]" >&2; exit 2 ;;
	esac
	shift
done
ONLY=

sf_check_server_user
make -C "$SF_ROOT" PG_CONFIG="$PG_CONFIG" >/dev/null || sf_die "build failed"
SHA=$(git -C "$SF_ROOT" rev-parse --short HEAD 2>/dev/null || echo nogit)
OUT=$SF_ROOT/bench/results/coldload-$(date -u +%Y-%m-%d)-$SHA${ONLY:+-$ONLY}$SUFFIX.md

SCRATCH=$(mktemp -d /tmp/streamforge-coldload.XXXXXX)
chmod 755 "$SCRATCH"
started=
cleanup() {
	local rc=$?
	if [ -n "$started" ]; then
		SF_RUN_DIR=$SCRATCH sf_as_server "$SRVBIN/pg_ctl" -D "$SCRATCH/data" -m fast -w stop >/dev/null 2>&1 || true
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
SRVBIN=$SCRATCH/pg$PGBIN
sf_is_root && chown -R postgres:postgres "$SCRATCH"
as_server() { SF_RUN_DIR=$SCRATCH sf_as_server "$@"; }
psql_db() {
	as_server "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SCRATCH" -p "$PORT" \
		-U postgres -d "$DB" "$@"
}
psql_val() { psql_db -At -c "$1"; }

as_server "$SRVBIN/initdb" -D "$SCRATCH/data" -U postgres -A trust \
	--locale=C --encoding=UTF8 >"$SCRATCH/initdb.log" 2>&1 ||
	{ cat "$SCRATCH/initdb.log"; sf_die "initdb failed"; }
as_server tee -a "$SCRATCH/data/postgresql.conf" >/dev/null <<EOF
listen_addresses = ''
port = $PORT
unix_socket_directories = '$SCRATCH'
unix_socket_permissions = 0700
shared_buffers = 512MB
max_wal_size = 16GB
checkpoint_timeout = 1h
synchronous_commit = off
autovacuum = off
EOF
as_server "$SRVBIN/pg_ctl" -D "$SCRATCH/data" -l "$SCRATCH/server.log" -w start >/dev/null ||
	{ tail -n 20 "$SCRATCH/server.log"; sf_die "could not start the cluster"; }
started=1
as_server "$PGBIN/psql" -X -q -h "$SCRATCH" -p "$PORT" -U postgres -d postgres -c "CREATE DATABASE $DB"
psql_db <<'EOF'
CREATE EXTENSION streamforge;
CREATE FUNCTION pipeline_bytes() RETURNS bigint LANGUAGE sql AS $$
    SELECT coalesce(sum(total_bytes), 0)::bigint FROM pg_backend_memory_contexts
     WHERE name = 'streamforge pipeline' $$;
-- events f .. t - 1 (event time = offset, ten keys), then progress t - 1
CREATE FUNCTION feed(pl text, f bigint, t bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM count(*) FROM streamforge.ingest_batch(pl,
        ARRAY(SELECT ROW('p', i, 'e' || i, 'k' || (i % 10), i, 1)::streamforge.delivery
                FROM generate_series(f, t - 1) AS i ORDER BY i));
    PERFORM count(*) FROM streamforge.advance(pl, 'p', t - 1);
END $$;
CREATE PROCEDURE feed_to(pl text, f bigint, t bigint) LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 0 .. (t - f - 1) / 50 LOOP
        PERFORM feed(pl, f + i * 50, least(f + (i + 1) * 50, t));
        COMMIT;
    END LOOP;
END $$;
-- this backend's CPU time (user + system) in ms, from /proc (10 ms ticks)
CREATE FUNCTION cpu_ms() RETURNS numeric LANGUAGE sql AS $$
    SELECT (split_part(s, ' ', 12)::numeric + split_part(s, ' ', 13)::numeric) * 10
      FROM (SELECT substr(f, strpos(f, ') ') + 2) AS s
              FROM pg_read_file('/proc/self/stat') AS f) AS x $$;
-- the cold load of a pipeline in this (new) session: "wall ms/CPU ms"; the
-- machine may be shared, so the CPU time is the figure to compare
CREATE FUNCTION load_ms(pl text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz := clock_timestamp();
    c0 numeric := cpu_ms();
BEGIN
    PERFORM streamforge.watermark(pl);
    RETURN round(extract(epoch FROM clock_timestamp() - t0)::numeric * 1000, 1)
           || ' / ' || (cpu_ms() - c0);
END $$;
EOF

psql_db -c "SELECT streamforge.create_pipeline('cold', ARRAY['p'], ARRAY[streamforge.fixed('per_minute', 60)])"
t0=$(date +%s.%N)
psql_db -c "CALL feed_to('cold', 0, $N)"
t1=$(date +%s.%N)
sizes() {
	psql_val "SELECT journal_rows || ' rows, ' || pg_size_pretty(journal_bytes) || ' journal, '
	                 || pg_size_pretty(snapshot_bytes) || ' snapshot'
	            FROM streamforge.metrics WHERE pipeline = 'cold'"
}
load() {
	psql_val "SELECT load_ms('cold') || ' ms, '
	                 || round(pipeline_bytes()::numeric / $N, 1) || ' B/delivery'"
}
before_sizes=$(sizes)
before=$(load)
before2=$(load)
c0=$(date +%s.%N)
psql_val "SELECT streamforge.compact('cold')" >/dev/null
c1=$(date +%s.%N)
after_sizes=$(sizes)
after=$(load)
after2=$(load)

{
	echo "# Cold load at $N deliveries ($SHA, $(date -u +%Y-%m-%d))"
	echo
	echo "Feed: $N events in batches of 50, an advance after each, one transaction each, no retention: $(printf '%.1f' "$(echo "$t1 - $t0" | bc)") s."
	echo
	echo "| | state in the tables | cold load (wall / CPU ms), memory per delivery |"
	echo "|---|---|---|"
	echo "| before: write-path compaction only | $before_sizes | $before; again: $before2 |"
	echo "| after \`streamforge.compact('cold')\` ($(printf '%.2f' "$(echo "$c1 - $c0" | bc)") s, off the write path) | $after_sizes | $after; again: $after2 |"
} | tee "$OUT"
