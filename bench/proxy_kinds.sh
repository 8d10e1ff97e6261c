#!/usr/bin/env bash
# bench/proxy_kinds.sh: router overhead per routed call kind, the parallel
# speed-up of a sharded pipeline, and the cold pipeline cache after a
# remote error (issue 30; docs/scale-out.md, "Performance and capacity").
#
#   ./bench/proxy_kinds.sh            3 repetitions
#   ./bench/proxy_kinds.sh --quick    1 repetition, 1,000 calls per kind, 150,000 events
#
# In one run, on one machine (like bench/proxy.sh): a data node with four
# shard databases sf0 .. sf3 and a router (cluster "streamforge" of those 4
# shards), throwaway clusters of a private copy of the PostgreSQL tree with
# this build, Unix sockets.  Measured, one commit per call on both sides:
#   1. per call kind, the same calls direct on the data node and through the
#      router on a placed pipeline: ingest_batch of 100 events (batch),
#      ingest of one event (one event), advance, then visible() (about 20
#      rows) and watermark() (reads), and advance on a pipeline sharded over
#      the 4 shards against advance on one node (fan-out advance);
#   2. a pipeline sharded over the 4 shards, 12 partitions, fed through the
#      router by 1 caller and by 3 concurrent callers (each its own
#      partitions), batches of 1,000: events/s of the whole;
#   3. a placed pipeline with 1,000,000 events (on its shard): the time of a
#      routed watermark() on a warm router session, and of the first one
#      after a remote error (PL/Proxy then drops its connections: the call
#      lands on a new data node backend whose pipeline cache is cold).
# Writes bench/results/proxy-kinds-<date>-<sha>.md and proxy-kinds-latest.md.
#
# Options: --keep (keep the scratch directory), --no-build.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGOPTIONS PGSERVICE PGSERVICEFILE
DATA_PORT=5443					# names the socket files only: no TCP
ROUTER_PORT=5444

REPS=3
CALLS=2000
SPEEDUP_EVENTS=300000
COLD_EVENTS=1000000
KEEP=
BUILD=1
while [ $# -gt 0 ]; do
	case "$1" in
		--quick) REPS=1; CALLS=1000; SPEEDUP_EVENTS=150000 ;;
		--keep) KEEP=1 ;;
		--no-build) BUILD= ;;
		-h | --help) sed -n '2,26p' "$0"; exit 0 ;;
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

SCRATCH=$(mktemp -d /tmp/streamforge-proxykinds.XXXXXX)
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

sf_say "starting a data node (4 shard databases) and a router in $SCRATCH"
start_cluster data "$DATA_PORT"
start_cluster router "$ROUTER_PORT"
for s in 0 1 2 3; do
	psql_at "$DATA_PORT" -d postgres -c "CREATE DATABASE sf$s"
	psql_at "$DATA_PORT" -d "sf$s" -c "CREATE EXTENSION streamforge"
done
psql_at "$ROUTER_PORT" -d postgres -c "CREATE DATABASE router"
psql_at "$ROUTER_PORT" -d router <<EOF
CREATE EXTENSION plproxy;
CREATE EXTENSION streamforge_proxy;
CREATE SERVER streamforge FOREIGN DATA WRAPPER plproxy OPTIONS (
    p0 'host=$SCRATCH port=$DATA_PORT dbname=sf0', p1 'host=$SCRATCH port=$DATA_PORT dbname=sf1',
    p2 'host=$SCRATCH port=$DATA_PORT dbname=sf2', p3 'host=$SCRATCH port=$DATA_PORT dbname=sf3');
CREATE USER MAPPING FOR PUBLIC SERVER streamforge;
EOF

# The driver, the same on both sides: each measurement is a procedure
# making $CALLS calls, one commit each.
DRIVER=$(cat <<'EOF'
CREATE SCHEMA pxk;
CREATE TABLE pxk.timing (label text, kind text, rep integer, calls bigint, seconds float8);
CREATE PROCEDURE pxk.run(label text, kind text, pipeline text, part text, calls integer, rep integer, base bigint)
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz := clock_timestamp();
    b streamforge.delivery[];
BEGIN
    FOR i IN 0 .. calls - 1 LOOP
        IF kind = 'batch' THEN
            b := ARRAY(SELECT ROW(part, (base + i) * 100 + k, 'e' || ((base + i) * 100 + k), 'k' || (k % 10),
                                  ((base + i) * 100 + k) * 10, k)::streamforge.delivery
                         FROM generate_series(0, 99) k);
            PERFORM count(*) FROM streamforge.ingest_batch(pipeline, b);
        ELSIF kind = 'one event' THEN
            PERFORM count(*) FROM streamforge.ingest(pipeline, part, base + i, 'o' || (base + i), 'k', (base + i) * 10, 1);
        ELSIF kind = 'read visible' THEN
            PERFORM count(*) FROM streamforge.visible(pipeline);
        ELSIF kind = 'read watermark' THEN
            PERFORM streamforge.watermark(pipeline);
        ELSIF kind = 'advance' THEN
            PERFORM count(*) FROM streamforge.advance(pipeline, part, base + i);
        END IF;
        COMMIT;
    END LOOP;
    INSERT INTO pxk.timing VALUES (label, kind, rep, calls, extract(epoch FROM clock_timestamp() - t0));
    COMMIT;
END
$$;
EOF
)
psql_at "$DATA_PORT" -d sf0 -c "$DRIVER" >/dev/null
psql_at "$ROUTER_PORT" -d router -c "$DRIVER" >/dev/null
W="ARRAY[streamforge.fixed('f', 1000)]"
# a placed pipeline on shard 0 for the router, the same one on sf0 directly
# names placed on shard 0 (the direct calls run on sf0)
on_shard0() {
	psql_at "$ROUTER_PORT" -d router -At -c "SELECT n FROM (SELECT '$1' || i AS n FROM generate_series(1, 1000) i) s WHERE streamforge.shard_of(n) = 0 ORDER BY n LIMIT 1"
}
PARTS="ARRAY['q0','q1','q2','q3','q4','q5','q6','q7','q8','q9','q10','q11']"

sf_say "1. call kinds: $CALLS calls each, $REPS repetitions"
for rep in $(seq 1 "$REPS"); do
	PLACED=$(on_shard0 "pk${rep}_")
	psql_at "$ROUTER_PORT" -d router \
		-c "SELECT streamforge.create_pipeline('$PLACED', ARRAY['a'], $W, 10)" \
		-c "SELECT streamforge.create_sharded_pipeline('sh_$rep', $PARTS, $W, 10)" >/dev/null
	psql_at "$DATA_PORT" -d sf0 \
		-c "SELECT streamforge.create_pipeline('d_$rep', ARRAY['a'], $W, 10)" >/dev/null
	for kind in batch 'one event' advance 'read visible' 'read watermark'; do
		base=0
		[ "$kind" = 'one event' ] && base=$((CALLS * 100))	# after the batches' offsets
		psql_at "$DATA_PORT" -d sf0 -c "CALL pxk.run('direct', '$kind', 'd_$rep', 'a', $CALLS, $rep, $base)" >/dev/null
		psql_at "$ROUTER_PORT" -d router -c "CALL pxk.run('routed', '$kind', '$PLACED', 'a', $CALLS, $rep, $base)" >/dev/null
	done
	psql_at "$ROUTER_PORT" -d router -c "CALL pxk.run('routed 4 shards', 'advance', 'sh_$rep', 'q0', $CALLS, $rep, 0)" >/dev/null
	echo "    rep $rep done"
done

sf_say "2. speed-up: $SPEEDUP_EVENTS events, 1 caller and 3 concurrent callers"
psql_at "$ROUTER_PORT" -d router <<EOF >/dev/null
CREATE TABLE pxk.speed (callers integer, rep integer, events bigint, seconds float8);
CREATE PROCEDURE pxk.feed(pipeline text, parts text[], n bigint)
LANGUAGE plpgsql AS \$\$
DECLARE
    b streamforge.delivery[];
    kper integer := 1000 / cardinality(parts);      -- per partition per batch
    per bigint := n / cardinality(parts);
BEGIN
    FOR i IN 0 .. per / kper - 1 LOOP
        b := ARRAY(SELECT ROW(p, i * kper + k, p || '-' || (i * kper + k), 'k' || p || (k % 100),
                              (i * kper + k) * 10, k)::streamforge.delivery
                     FROM unnest(parts) p, generate_series(0, kper - 1) k);
        PERFORM count(*) FROM streamforge.ingest_batch(pipeline, b);
        COMMIT;
    END LOOP;
END
\$\$;
EOF
# the owners of the partitions: caller c gets the partitions of one shard
mapfile -t GROUPS_BY_SHARD < <(psql_at "$ROUTER_PORT" -d router -At -c \
	"SELECT 'ARRAY[' || string_agg(quote_literal(p), ',' ORDER BY p) || ']' FROM unnest($PARTS) p GROUP BY streamforge.shard_of(p) ORDER BY count(*) DESC, 1 LIMIT 3")
for rep in $(seq 1 "$REPS"); do
	for callers in 1 3; do
		pl="sp_${callers}_$rep"
		psql_at "$ROUTER_PORT" -d router -c "SELECT streamforge.create_sharded_pipeline('$pl', $PARTS, $W, 10)" >/dev/null
		t0=$(date +%s.%N)
		if [ "$callers" -eq 1 ]; then
			all=$(psql_at "$ROUTER_PORT" -d router -At -c "SELECT quote_literal(${GROUPS_BY_SHARD[0]} || ${GROUPS_BY_SHARD[1]} || ${GROUPS_BY_SHARD[2]}) || '::text[]'")
			psql_at "$ROUTER_PORT" -d router -c "CALL pxk.feed('$pl', $all, $SPEEDUP_EVENTS)" >/dev/null
		else
			pids=()
			for c in 0 1 2; do
				psql_at "$ROUTER_PORT" -d router -c "CALL pxk.feed('$pl', ${GROUPS_BY_SHARD[$c]}, $((SPEEDUP_EVENTS / 3)))" >/dev/null &
				pids+=($!)
			done
			for p in "${pids[@]}"; do wait "$p"; done
		fi
		t1=$(date +%s.%N)
		ev=$(psql_at "$ROUTER_PORT" -d router -At -c "SELECT accepted FROM streamforge.stats('$pl')")
		psql_at "$ROUTER_PORT" -d router -c "INSERT INTO pxk.speed VALUES ($callers, $rep, $ev, $t1 - $t0)" >/dev/null
	done
	echo "    rep $rep done"
done

sf_say "3. cold cache after a remote error: $COLD_EVENTS events on shard 0"
COLDP=$(on_shard0 cold)
psql_at "$ROUTER_PORT" -d router -c "SELECT streamforge.create_pipeline('$COLDP', ARRAY['a'], $W, 10)" >/dev/null
psql_at "$DATA_PORT" -d sf0 <<EOF >/dev/null
DO \$\$
BEGIN
    FOR i IN 0 .. $COLD_EVENTS / 10000 - 1 LOOP
        PERFORM count(*) FROM streamforge.ingest_batch('$COLDP',
            ARRAY(SELECT ROW('a', i * 10000 + k, 'c' || (i * 10000 + k), 'k' || ((i * 10000 + k) % 10000),
                             (i * 10000 + k) * 10, 1)::streamforge.delivery
                    FROM generate_series(0, 9999) k));
    END LOOP;
END
\$\$;
EOF
COLD=$(psql_at "$ROUTER_PORT" -d router -At <<EOF
CREATE TABLE pxk.cold (what text, ms float8);
DO \$\$
DECLARE
    t0 timestamptz;
BEGIN
    PERFORM streamforge.watermark('$COLDP');    -- warm the connection and the cache
    FOR r IN 1 .. 5 LOOP
        t0 := clock_timestamp();
        PERFORM streamforge.watermark('$COLDP');
        INSERT INTO pxk.cold VALUES ('warm', 1000 * extract(epoch FROM clock_timestamp() - t0));
        BEGIN   -- a remote error: PL/Proxy drops its connections
            PERFORM count(*) FROM streamforge.ingest('$COLDP', 'a', $COLD_EVENTS + 5, 'gap', 'k', 1, 1);
        EXCEPTION WHEN OTHERS THEN NULL;
        END;
        t0 := clock_timestamp();
        PERFORM streamforge.watermark('$COLDP');
        INSERT INTO pxk.cold VALUES ('after error', 1000 * extract(epoch FROM clock_timestamp() - t0));
    END LOOP;
END
\$\$;
SELECT what, to_char(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms), 'FM999,990.0') FROM pxk.cold GROUP BY what ORDER BY what DESC;
EOF
)

# Collect and summarize.
psql_at "$ROUTER_PORT" -d router -At -F, -c "SELECT label, kind, rep, calls, seconds FROM pxk.timing" >"$SCRATCH/routed.csv"
psql_at "$DATA_PORT" -d sf0 -c "\\copy pxk.timing FROM '$SCRATCH/routed.csv' WITH (FORMAT csv)"
KINDS=$(psql_at "$DATA_PORT" -d sf0 -At -F' | ' <<'EOF'
WITH med AS (
    SELECT label, kind, max(calls) AS calls,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds) AS seconds
      FROM pxk.timing GROUP BY label, kind)
SELECT '| ' || r.kind || CASE WHEN r.label = 'routed 4 shards' THEN ' (sharded, 4 shards)' ELSE '' END,
       to_char(1e6 * d.seconds / d.calls, 'FM999,990'),
       to_char(1e6 * r.seconds / r.calls, 'FM999,990'),
       to_char(r.seconds / d.seconds, 'FM990.00') || 'x',
       to_char(1e6 * (r.seconds - d.seconds) / d.calls, 'FM999,990') || ' |'
  FROM med d JOIN med r ON r.kind = d.kind AND r.label <> 'direct'
 WHERE d.label = 'direct'
 ORDER BY CASE r.kind WHEN 'batch' THEN 1 WHEN 'one event' THEN 2 WHEN 'read visible' THEN 3
                      WHEN 'read watermark' THEN 4 ELSE 5 END, r.label;
EOF
)
SPEED=$(psql_at "$ROUTER_PORT" -d router -At -F' | ' <<'EOF'
WITH med AS (SELECT callers, percentile_cont(0.5) WITHIN GROUP (ORDER BY events / seconds) AS eps
               FROM pxk.speed GROUP BY callers)
SELECT '| ' || callers, to_char(round(eps), 'FM999,999,999'),
       to_char(eps / (SELECT eps FROM med WHERE callers = 1), 'FM990.00') || 'x |'
  FROM med ORDER BY callers;
EOF
)
HOST="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores"
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
OUT=$SF_ROOT/bench/results/proxy-kinds-$DATE-$SHA.md
{
	echo "Run \`proxy-kinds-$DATE-$SHA\` ($REPS repetitions, median), commit $SHA, $HOST, PostgreSQL $("$SRVBIN/postgres" --version | awk '{print $3}'), data node (4 shard databases) and router on the same machine (Unix sockets), load average at the end $LOAD."
	echo
	echo "Per call, one commit per call (synchronous_commit = off), $CALLS calls: direct on the data node against the same call through the router on a placed pipeline; advance also on a pipeline sharded over 4 shards (every shard applies it). batch: ingest_batch of 100 events; reads: visible() (about 20 rows), watermark()."
	echo
	echo "| call kind | direct µs/call | routed µs/call | routed / direct | added per call, µs |"
	echo "|---|---|---|---|---|"
	echo "$KINDS"
	echo
	echo "A pipeline sharded over 4 shards (12 partitions), $SPEEDUP_EVENTS events through the router in batches of 1,000, one caller against 3 concurrent callers each feeding the partitions of its own shard:"
	echo
	echo "| callers | events/s | speed-up |"
	echo "|---|---|---|"
	echo "$SPEED"
	echo
	echo "A placed pipeline with $COLD_EVENTS events: a routed watermark() on a warm session against the first one after a remote error (PL/Proxy drops its connections; the next call reaches a new data node backend, whose pipeline cache is cold), median of 5, ms:"
	echo
	echo "| call | ms |"
	echo "|---|---|"
	echo "$COLD" | sed -e 's/^/| /' -e 's/|/ | /2' -e 's/$/ |/' | sed 's/  */ /g'
} >"$OUT"
cp "$OUT" "$SF_ROOT/bench/results/proxy-kinds-latest.md"
echo
cat "$OUT"
