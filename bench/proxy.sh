#!/usr/bin/env bash
# bench/proxy.sh: router overhead of streamforge_proxy (docs/scale-out.md).
#
#   ./bench/proxy.sh            3 repetitions
#   ./bench/proxy.sh --quick    1 repetition, fewer events
#
# In one run, on one machine: a data node (streamforge) and a router
# (plproxy + streamforge_proxy, cluster "streamforge" of one shard: that
# data node), both throwaway clusters of a private copy of the PostgreSQL
# tree with this build installed (like bench/run.sh), on Unix sockets in a
# scratch directory.  The same pre-built batches of the same deliveries
# (one fixed window, as the headline figure of bench/results/latest.md)
# are ingested
#   direct   by a procedure on the data node calling streamforge.ingest_batch,
#   routed   by the same procedure on the router, whose ingest_batch goes
#            through PL/Proxy to the data node,
# one commit per batch (synchronous_commit = off on both clusters, so that
# the disk of a shared machine does not drown the difference), each
# repetition into a fresh pipeline, for batch sizes 10,000, 100 and 1.  It prints events/s of both and the ratio
# (time routed / time direct), and writes bench/results/proxy-<date>-<sha>.md
# and bench/results/proxy-latest.md.
#
# Options: --keep (keep the scratch directory), --no-build.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGOPTIONS PGSERVICE PGSERVICEFILE
DATA_PORT=5441					# names the socket files only: no TCP
ROUTER_PORT=5442

REPS=3
EVENTS_10000=500000
EVENTS_100=100000
EVENTS_1=5000
KEEP=
BUILD=1
while [ $# -gt 0 ]; do
	case "$1" in
		--quick) REPS=1; EVENTS_10000=100000; EVENTS_100=20000; EVENTS_1=2000 ;;
		--keep) KEEP=1 ;;
		--no-build) BUILD= ;;
		-h | --help) sed -n '2,22p' "$0"; exit 0 ;;
		*) echo "usage: $0 [--quick] [--keep] [--no-build]" >&2; exit 2 ;;
	esac
	shift
done

sf_need_packages "${SF_BUILD_PACKAGES[@]}" "postgresql-$PG_MAJOR-plproxy"
sf_check_server_user
if [ -n "$BUILD" ]; then
	make -C "$SF_ROOT" -j"$(nproc 2>/dev/null || echo 2)" PG_CONFIG="$PG_CONFIG" >/dev/null ||
		sf_die "build failed"
fi
SHA=$(git -C "$SF_ROOT" rev-parse --short HEAD 2>/dev/null || echo nogit)
DATE=$(date -u +%Y-%m-%d)

SCRATCH=$(mktemp -d /tmp/streamforge-proxybench.XXXXXX)
chmod 755 "$SCRATCH"
started=()
cleanup() {
	local rc=$? d
	for d in "${started[@]}"; do
		SF_RUN_DIR=$SCRATCH sf_as_server "$SRVBIN/pg_ctl" -D "$d" -m fast -w stop >/dev/null 2>&1 || true
	done
	if [ -n "$KEEP" ] || [ "$rc" -ne 0 ]; then
		echo "scratch directory kept: $SCRATCH"
	else
		rm -rf "$SCRATCH"
	fi
	exit $rc
}
trap cleanup EXIT

sf_say "installing into a private copy of the PostgreSQL tree in $SCRATCH/pg"
sf_private_tree "$SCRATCH/pg"
SRVBIN=$SCRATCH/pg$PGBIN
[ -f "$SCRATCH/pg$($PG_CONFIG --pkglibdir)/plproxy.so" ] ||
	sf_die "plproxy is not in the private tree (is postgresql-$PG_MAJOR-plproxy installed?)"
sf_is_root && chown -R postgres:postgres "$SCRATCH"

as_server() { SF_RUN_DIR=$SCRATCH sf_as_server "$@"; }
psql_at() {
	local port=$1
	shift
	as_server "$SRVBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SCRATCH" -p "$port" -U postgres "$@"
}

start_cluster() {
	local name=$1 port=$2
	as_server "$SRVBIN/initdb" -D "$SCRATCH/$name" -U postgres -A trust \
		--locale=C --encoding=UTF8 >"$SCRATCH/$name-initdb.log" 2>&1 ||
		{ cat "$SCRATCH/$name-initdb.log"; sf_die "initdb $name failed"; }
	as_server tee -a "$SCRATCH/$name/postgresql.conf" >/dev/null <<EOF
listen_addresses = ''
port = $port
unix_socket_directories = '$SCRATCH'
unix_socket_permissions = 0700
shared_buffers = 512MB
work_mem = 64MB
max_wal_size = 8GB
checkpoint_timeout = 1h
autovacuum = off
synchronous_commit = off
EOF
	as_server "$SRVBIN/pg_ctl" -D "$SCRATCH/$name" -l "$SCRATCH/$name.log" -w start >/dev/null ||
		{ tail -n 20 "$SCRATCH/$name.log"; sf_die "could not start $name"; }
	started+=("$SCRATCH/$name")
}

sf_say "starting a data node and a router in $SCRATCH"
start_cluster data "$DATA_PORT"
start_cluster router "$ROUTER_PORT"
psql_at "$DATA_PORT" -d postgres -c "CREATE DATABASE sf0"
psql_at "$ROUTER_PORT" -d postgres -c "CREATE DATABASE router"
psql_at "$DATA_PORT" -d sf0 -c "CREATE EXTENSION streamforge"
psql_at "$ROUTER_PORT" -d router <<EOF
CREATE EXTENSION plproxy;
CREATE EXTENSION streamforge_proxy;
CREATE SERVER streamforge FOREIGN DATA WRAPPER plproxy
    OPTIONS (p0 'host=$SCRATCH port=$DATA_PORT dbname=sf0');
CREATE USER MAPPING FOR PUBLIC SERVER streamforge;
EOF

# The same batches and driver on both sides (their streamforge.delivery
# types have the same name and columns).
DRIVER=$(cat <<'EOF'
CREATE SCHEMA pxbench;
CREATE TABLE pxbench.batches (size integer, i integer, b streamforge.delivery[],
                              PRIMARY KEY (size, i));
CREATE TABLE pxbench.timing (label text, size integer, rep integer,
                             events bigint, seconds float8);
-- deliveries 0 .. n-1 of partition p0: 1000 keys, times advancing by 10
-- with some disorder, in batches of the given size
CREATE FUNCTION pxbench.build(size integer, n integer) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO pxbench.batches
    SELECT size, k / size,
           array_agg(ROW('p0', k, 'e' || k, 'k' || (k % 1000),
                         k * 10 + (k * 7919) % 500, k % 100)::streamforge.delivery
                     ORDER BY k)
      FROM generate_series(0::bigint, n - 1) k
     GROUP BY k / size
$$;
CREATE PROCEDURE pxbench.run(label text, pipeline text, bsize integer, rep integer)
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz;
    n bigint := 0;
    r record;
BEGIN
    t0 := clock_timestamp();
    FOR r IN SELECT b FROM pxbench.batches WHERE size = bsize ORDER BY i LOOP
        PERFORM count(*) FROM streamforge.ingest_batch(pipeline, r.b);
        n := n + cardinality(r.b);
        COMMIT;
    END LOOP;
    INSERT INTO pxbench.timing
    VALUES (label, bsize, rep, n, extract(epoch FROM clock_timestamp() - t0));
    COMMIT;
END
$$;
EOF
)
for port in "$DATA_PORT" "$ROUTER_PORT"; do
	db=sf0
	[ "$port" = "$ROUTER_PORT" ] && db=router
	psql_at "$port" -d "$db" -c "$DRIVER" \
		-c "SELECT pxbench.build(10000, $EVENTS_10000), pxbench.build(100, $EVENTS_100), pxbench.build(1, $EVENTS_1)" \
		-c "VACUUM ANALYZE" >/dev/null
done

sf_say "measuring: batch sizes 10000, 100, 1; $REPS repetitions; direct then routed"
for rep in $(seq 1 "$REPS"); do
	for bs in 10000 100 1; do
		d="d_${bs}_$rep"
		r="r_${bs}_$rep"
		psql_at "$DATA_PORT" -d sf0 \
			-c "SELECT streamforge.create_pipeline('$d', ARRAY['p0'], ARRAY[streamforge.fixed('f', 10000)], 1000)" \
			-c "CALL pxbench.run('direct', '$d', $bs, $rep)" >/dev/null
		psql_at "$ROUTER_PORT" -d router \
			-c "SELECT streamforge.create_pipeline('$r', ARRAY['p0'], ARRAY[streamforge.fixed('f', 10000)], 1000)" \
			-c "CALL pxbench.run('routed', '$r', $bs, $rep)" >/dev/null
		echo "    rep $rep, batch $bs done"
	done
done

# Collect the router's timings next to the data node's and summarize.
psql_at "$ROUTER_PORT" -d router -At -F, -c "SELECT label, size, rep, events, seconds FROM pxbench.timing" >"$SCRATCH/routed.csv"
psql_at "$DATA_PORT" -d sf0 -c "\\copy pxbench.timing FROM '$SCRATCH/routed.csv' WITH (FORMAT csv)"
SUMMARY=$(psql_at "$DATA_PORT" -d sf0 -At -F' | ' <<'EOF'
WITH med AS (
    SELECT label, size, max(events) AS events,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds) AS seconds
      FROM pxbench.timing GROUP BY label, size)
SELECT '| ' || to_char(d.size, 'FM999,999'),
       to_char(round(d.events / d.seconds), 'FM999,999,999'),
       to_char(round(r.events / r.seconds), 'FM999,999,999'),
       to_char(r.seconds / d.seconds, 'FM990.00') || 'x',
       to_char(1e6 * (r.seconds - d.seconds) / (d.events / d.size), 'FM999,990') || ' |'
  FROM med d JOIN med r ON r.size = d.size AND r.label = 'routed'
 WHERE d.label = 'direct'
 ORDER BY d.size DESC;
EOF
)
HOST="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores"
OUT=$SF_ROOT/bench/results/proxy-$DATE-$SHA.md
{
	echo "Run \`proxy-$DATE-$SHA\` ($REPS repetitions, median), commit $SHA, $HOST, PostgreSQL $("$SRVBIN/postgres" --version | awk '{print $3}'), data node and router on the same machine (Unix sockets)."
	echo
	echo "ingest_batch, one fixed window, one commit per batch (synchronous_commit = off): direct call on the data node against the same call through the router (PL/Proxy, one shard)."
	echo
	echo "| batch | direct events/s | routed events/s | time routed / direct | added per call, µs |"
	echo "|---|---|---|---|---|"
	echo "$SUMMARY"
} >"$OUT"
cp "$OUT" "$SF_ROOT/bench/results/proxy-latest.md"
echo
cat "$OUT"
