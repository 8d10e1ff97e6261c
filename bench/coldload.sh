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
# loading backend, and the journal and snapshot sizes.  compact() runs
# without min_journal_bytes: the automatic decision (the estimated cold
# load against streamforge.compact_target_load_ms) is recorded too.  Last,
# the per-unit costs of that estimate (src/persist/compact.c): the journal's
# per byte and per entry (separated by a second pipeline fed one event per
# transaction, N / 50 of them) and the snapshot's per byte.
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
# rows, bytes and snapshot bytes of a pipeline's tables
jsize() {
	psql_val "SELECT journal_rows || ' ' || journal_bytes || ' ' || snapshot_bytes
	            FROM streamforge.metrics WHERE pipeline = '$1'"
}
before_raw=$(jsize cold)
before=$(load)
before2=$(load)
c0=$(date +%s.%N)
compacted=$(psql_val "SELECT streamforge.compact('cold')")
if [ "$compacted" != t ]; then
	# below the target (--quick): compact anyway, to measure the snapshot
	psql_val "SELECT streamforge.compact('cold', 0)" >/dev/null
	compacted="f, then compact('cold', 0)"
fi
c1=$(date +%s.%N)
after_sizes=$(sizes)
after=$(load)
after2=$(load)

# The per-unit costs of compact()'s estimate: the CPU ms of a cold load of
# pipeline $1 in a new session, best of three
cpu_load() {
	local best='' v
	for _ in 1 2 3; do
		v=$(psql_val "SELECT split_part(load_ms('$1'), ' / ', 2)")
		if [ -z "$best" ] || [ "$(echo "$v < $best" | bc)" = 1 ]; then best=$v; fi
	done
	echo "$best"
}
psql_db -c "SELECT streamforge.create_pipeline('cold_small', ARRAY['p'], ARRAY[streamforge.fixed('per_minute', 60)])"
psql_db -c "SELECT streamforge.create_pipeline('cold_empty', ARRAY['p'], ARRAY[streamforge.fixed('per_minute', 60)])"
psql_db -c "CREATE PROCEDURE feed_small(n bigint) LANGUAGE plpgsql AS \$\$
BEGIN
    FOR i IN 0 .. n - 1 LOOP
        PERFORM count(*) FROM streamforge.ingest('cold_small', 'p', i, 'e' || i, 'k' || (i % 10), i, 1);
        COMMIT;
    END LOOP;
END \$\$"
psql_db -c "CALL feed_small($N / 50)"
l0=$(cpu_load cold_empty)
read -r r1 b1 _ <<<"$before_raw"
l1=$(echo "$before" | sed 's|^[^/]*/ \([0-9.]*\) ms.*|\1|')
read -r r2 b2 _ <<<"$(jsize cold_small)"
l2=$(cpu_load cold_small)
read -r _ _ s3 <<<"$(jsize cold)"
l3=$(cpu_load cold)
# two equations, load - empty = bytes x per_byte + rows x per_entry
per_byte=$(echo "scale=3; (($l1 - $l0) * $r2 - ($l2 - $l0) * $r1) * 1000000 / ($b1 * $r2 - $b2 * $r1)" | bc)
per_entry=$(echo "scale=3; (($l2 - $l0) * 1000000 - $per_byte * $b2) / $r2 / 1000" | bc)
snap_byte=$(echo "scale=3; ($l3 - $l0) * 1000000 / $s3" | bc)

{
	echo "# Cold load at $N deliveries ($SHA, $(date -u +%Y-%m-%d))"
	echo
	echo "Feed: $N events in batches of 50, an advance after each, one transaction each, no retention: $(printf '%.1f' "$(echo "$t1 - $t0" | bc)") s."
	echo
	echo "| | state in the tables | cold load (wall / CPU ms), memory per delivery |"
	echo "|---|---|---|"
	echo "| before: write-path compaction only | $before_sizes | $before; again: $before2 |"
	echo "| after \`streamforge.compact('cold')\` (returned $compacted; $(printf '%.2f' "$(echo "$c1 - $c0" | bc)") s, off the write path) | $after_sizes | $after; again: $after2 |"
	echo
	echo "Per-unit cold-load costs (CPU, best of three loads, an empty pipeline's $l0 ms subtracted; src/persist/compact.c):"
	echo
	echo "| | journal rows | journal bytes | snapshot bytes | cold load, CPU ms |"
	echo "|---|---|---|---|---|"
	echo "| cold, before compact() (first load) | $r1 | $b1 | 0 | $l1 |"
	echo "| cold_small (one event per transaction) | $r2 | $b2 | 0 | $l2 |"
	echo "| cold, after compact() | 0 | 0 | $s3 | $l3 |"
	echo
	echo "Journal: $per_byte ns per byte + $per_entry us per entry; snapshot: $snap_byte ns per byte."
} | tee "$OUT"
