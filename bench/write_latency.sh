#!/usr/bin/env bash
# bench/write_latency.sh: the latency of write calls while a pipeline's
# history grows (issue 39, item 2: "no write call may take more than 2x its
# median because of the cold-load work"), on a throwaway cluster of a
# private PostgreSQL tree (like bench/coldload.sh).
#
# A fixed(60) + sliding(300, 60) + session(30) pipeline, event time =
# offset, ten keys, fed to N events (default 5M) by ingest_batch calls of
# 10,000 events, an advance after each, one transaction each; every
# ingest_batch call is timed alone, in wall time and in the CPU time of the
# feeding backend (/proc/self/schedstat, ns).  Two pipelines, fed one after
# the other:
#   worker     default settings: background snapshots (and, since issue
#              39's second step, the journal truncation behind them);
#   noworker   streamforge.background_compaction_ms = -1 in the feeding
#              session: no background worker, the write path's compaction
#              (streamforge.compaction_threshold, 64 MB) as in 0.3.0;
#   ret        (only with --only) as worker, on a pipeline created with
#              retention => 100000: its snapshot is the checkpoint, and
#              the write path compacts it at four times the snapshot's
#              size unless a background snapshot covers the journal.
# Printed per pipeline: p50, p90, p99 and max of wall and CPU, the calls
# above 2x the median (which ones, and how long), the journal and
# snapshot sizes at the end, and the CPU of the whole cluster during the
# feed (the workers' included).
#
# --base REF also builds the git ref REF (e.g. main) into a second private
# tree and cluster, and feeds the same pipelines there, one after the other
# with this checkout's (base first, then this tree, for each pipeline): the
# two rows of each pipeline are side by side in one run, at the same load.
#
# --threshold SIZE sets streamforge.compaction_threshold in both feeding
# sessions (e.g. 16MB: the write path's compaction then falls within 5M
# events, at about 2M and 4M, instead of at about 8M with the default 64MB).
#
#   ./bench/write_latency.sh [--events N] [--threshold SIZE] [--keep]
#                            [--only "worker noworker ret"] [--base REF]
#
# Writes bench/results/write_latency-<date>-<shortsha>.md and prints it.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGOPTIONS PGSERVICE PGSERVICEFILE
PORT=5437						# names the socket file only: no TCP listener
DB=latency
EVENTS=5000000
KEEP=
PIPES="worker noworker"
THRESHOLD=
BASE=
while [ $# -gt 0 ]; do
	case "$1" in
		--events) EVENTS=$2; shift ;;
		--only) PIPES=$2; shift ;;
		--threshold) THRESHOLD=$2; shift ;;
		--base) BASE=$2; shift ;;
		--keep) KEEP=1 ;;
		-h | --help) sed -n '2,30p' "$0"; exit 0 ;;
		*) echo "usage: $0 [--events N] [--only \"worker noworker ret\"] [--threshold SIZE] [--base REF] [--keep]" >&2; exit 2 ;;
	esac
	shift
done

sf_check_server_user
make -C "$SF_ROOT" PG_CONFIG="$PG_CONFIG" >/dev/null || sf_die "build failed"
SHA=$(git -C "$SF_ROOT" rev-parse --short HEAD 2>/dev/null || echo nogit)
SUFFIX=
[ "$PIPES" = "worker noworker" ] || SUFFIX=-${PIPES// /-}
[ -z "$BASE" ] || SUFFIX=$SUFFIX-vs-$(git -C "$SF_ROOT" rev-parse --short "$BASE")
OUT=$SF_ROOT/bench/results/write_latency-$(date -u +%Y-%m-%d)-$SHA$SUFFIX.md

SCRATCH=$(mktemp -d /tmp/streamforge-latency.XXXXXX)
chmod 755 "$SCRATCH"
started=
cleanup() {
	local rc=$?
	local t
	for t in $started; do
		SF_RUN_DIR=$SCRATCH sf_as_server "$SCRATCH/pg-$t$PGBIN/pg_ctl" -D "$SCRATCH/data-$t" -m fast -w stop >/dev/null 2>&1 || true
	done
	if [ -n "$KEEP" ] || [ "$rc" -ne 0 ]; then
		echo "scratch directory kept: $SCRATCH"
	else
		rm -rf "$SCRATCH"
	fi
	exit $rc
}
trap cleanup EXIT

TREES=head
if [ -n "$BASE" ]; then
	TREES="base head"
	mkdir -p "$SCRATCH/src-base"
	git -C "$SF_ROOT" archive "$BASE" | tar -x -C "$SCRATCH/src-base"
	make -C "$SCRATCH/src-base" PG_CONFIG="$PG_CONFIG" >/dev/null 2>&1 || sf_die "build of $BASE failed"
fi
as_server() { SF_RUN_DIR=$SCRATCH sf_as_server "$@"; }
# the tree and cluster that psql_db talks to: use_tree base|head
use_tree() {
	CUR=$1
	SRVBIN=$SCRATCH/pg-$CUR$PGBIN
	if [ "$CUR" = base ]; then PORT=5438; else PORT=5437; fi
}
psql_db() {
	as_server "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SCRATCH" -p "$PORT" \
		-U postgres -d "$DB" "$@"
}
psql_val() { psql_db -At -c "$1"; }
for t in $TREES; do
	if [ "$t" = base ]; then
		sf_private_tree "$SCRATCH/pg-$t" "$SCRATCH/src-base"
	else
		sf_private_tree "$SCRATCH/pg-$t"
	fi
done
sf_is_root && chown -R postgres:postgres "$SCRATCH"
for t in $TREES; do
	use_tree "$t"
	as_server "$SRVBIN/initdb" -D "$SCRATCH/data-$t" -U postgres -A trust \
		--locale=C --encoding=UTF8 >"$SCRATCH/initdb.log" 2>&1 ||
		{ cat "$SCRATCH/initdb.log"; sf_die "initdb failed"; }
	as_server tee -a "$SCRATCH/data-$t/postgresql.conf" >/dev/null <<EOF
listen_addresses = ''
port = $PORT
unix_socket_directories = '$SCRATCH'
unix_socket_permissions = 0700
shared_buffers = 512MB
max_wal_size = 16GB
max_worker_processes = 16
checkpoint_timeout = 1h
synchronous_commit = off
autovacuum = off
log_min_messages = debug1
EOF
	as_server "$SRVBIN/pg_ctl" -D "$SCRATCH/data-$t" -l "$SCRATCH/server-$t.log" -w start >/dev/null ||
		{ tail -n 20 "$SCRATCH/server-$t.log"; sf_die "could not start the cluster"; }
	started="$started $t"
	as_server "$PGBIN/psql" -X -q -h "$SCRATCH" -p "$PORT" -U postgres -d postgres -c "CREATE DATABASE $DB"
	psql_db <<'EOF'
CREATE EXTENSION streamforge;
-- this backend's CPU time in ns (/proc/self/schedstat: time on a CPU)
CREATE FUNCTION cpu_ns() RETURNS bigint LANGUAGE sql AS $$
    SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint $$;
CREATE TABLE call_ms (pl text, call int, wall float8, cpu float8);
-- events f .. t - 1 of pipeline pl in ingest_batch calls of b, each timed,
-- an advance after each, one transaction each
CREATE PROCEDURE feed(pl text, f bigint, t bigint, b int)
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz;
    c0 bigint;
    w float8;
    c float8;
    hi bigint;
    arr streamforge.delivery[];
BEGIN
    FOR s IN 0 .. (t - f - 1) / b LOOP
        hi := least(f + (s + 1) * b, t);
        arr := ARRAY(SELECT ROW('p0', i, 'e' || i, 'k' || (i % 10), i, 1)::streamforge.delivery
                       FROM generate_series(f + s * b, hi - 1) AS i ORDER BY i);
        c0 := cpu_ns();
        t0 := clock_timestamp();
        PERFORM count(*) FROM streamforge.ingest_batch(pl, arr);
        w := extract(epoch FROM clock_timestamp() - t0) * 1000;
        c := (cpu_ns() - c0) / 1e6;
        INSERT INTO call_ms VALUES (pl, s, w, c);
        PERFORM count(*) FROM streamforge.advance(pl, 'p0', hi - 1);
        COMMIT;
    END LOOP;
END $$;
EOF
done

windows="ARRAY[streamforge.fixed('f', 60), streamforge.sliding('s', 300, 60), streamforge.session('g', 30)]"
# CPU ms of the cluster's exited backends and workers (the postmaster's
# cutime + cstime)
pm_cpu() {
	local pm
	pm=$(head -1 "$SCRATCH/data-$CUR/postmaster.pid")
	awk '{print ($16 + $17) * 10}' "/proc/$pm/stat"
}
idle() {	# until no background snapshot worker runs
	local i
	for i in $(seq 1 1200); do
		[ "$(psql_val "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'streamforge compaction'")" = 0 ] && return
		sleep 0.5
	done
}
REPORT=()
SLOW=()
for pl in $PIPES; do
for tree in $TREES; do
	use_tree "$tree"
	set="SELECT 1"
	[ "$pl" = noworker ] && set="SET streamforge.background_compaction_ms = -1"
	th="SELECT 1"
	[ -n "$THRESHOLD" ] && th="SET streamforge.compaction_threshold = '$THRESHOLD'"
	opts=
	[ "$pl" = ret ] && opts=", retention => 100000"
	psql_db -qc "SELECT streamforge.create_pipeline('$pl', ARRAY['p0'], $windows$opts)"
	c0=$(pm_cpu)
	w0=$(date +%s.%N)
	psql_db -c "$set" -c "$th" -c "CALL feed('$pl', 0, $EVENTS, 10000)" >/dev/null
	w1=$(date +%s.%N)
	idle
	c1=$(pm_cpu)
	stats=$(psql_val "SELECT count(*) || ' calls | '
	      || round(percentile_cont(0.5) WITHIN GROUP (ORDER BY wall)::numeric, 1) || ' / '
	      || round(percentile_cont(0.9) WITHIN GROUP (ORDER BY wall)::numeric, 1) || ' / '
	      || round(percentile_cont(0.99) WITHIN GROUP (ORDER BY wall)::numeric, 1) || ' / '
	      || round(max(wall)::numeric, 1) || ' | '
	      || round(percentile_cont(0.5) WITHIN GROUP (ORDER BY cpu)::numeric, 1) || ' / '
	      || round(percentile_cont(0.9) WITHIN GROUP (ORDER BY cpu)::numeric, 1) || ' / '
	      || round(percentile_cont(0.99) WITHIN GROUP (ORDER BY cpu)::numeric, 1) || ' / '
	      || round(max(cpu)::numeric, 1) || ' | '
	      || round((percentile_cont(0.99) WITHIN GROUP (ORDER BY cpu)
	               / percentile_cont(0.5) WITHIN GROUP (ORDER BY cpu))::numeric, 2)
	      FROM call_ms WHERE pl = '$pl'")
	slow=$(psql_val "WITH m AS (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY cpu) AS c FROM call_ms WHERE pl = '$pl')
	      SELECT coalesce(string_agg('#' || call || ': ' || round(cpu::numeric), ', ' ORDER BY call), 'none')
	        FROM call_ms, m WHERE pl = '$pl' AND cpu > 2 * m.c")
	tables=$(psql_val "SELECT count(*) FILTER (WHERE j.pos > 0) || ' rows, '
	      || pg_size_pretty(coalesce(sum(octet_length(j.entry)) FILTER (WHERE j.pos > 0), 0)::bigint) || ' journal, '
	      || pg_size_pretty(coalesce(sum(octet_length(j.entry)) FILTER (WHERE j.pos < 0), 0)::bigint) || ' background snapshot, '
	      || pg_size_pretty(coalesce(max(octet_length(p.snapshot)), 0)::bigint) || ' snapshot, snapshot_version '
	      || max(p.snapshot_version)
	      FROM streamforge.pipeline p LEFT JOIN streamforge.journal j ON j.pipeline_id = p.id
	      WHERE p.name = '$pl'")
	label=$pl
	[ -z "$BASE" ] || label="$pl ($tree)"
	REPORT+=("| $label | $stats | $(printf '%.0f' "$(echo "$w1 - $w0" | bc)") s / $(echo "($c1 - $c0) / 1000" | bc) s | $tables |")
	SLOW+=("- $label: $slow")
done
done
# the background workers' own lines, for the record
workers=$(cat "$SCRATCH"/server-*.log | grep -c "background snapshot of pipeline" || true)
truncs=$(cat "$SCRATCH"/server-*.log | grep -c "journal of pipeline .* truncated" || true)

{
	echo "# write_latency, $(date -u +%Y-%m-%dT%H:%MZ), commit $SHA"
	echo
	[ -z "$BASE" ] || echo "Side by side: base = $BASE ($(git -C "$SF_ROOT" rev-parse --short "$BASE")), head = this checkout ($SHA$(git -C "$SF_ROOT" diff --quiet HEAD -- src || echo ', modified')); for each pipeline the base is fed first."
	[ -z "$BASE" ] || echo
	echo "$EVENTS events per pipeline, ingest_batch of 10,000 events + advance per transaction, fixed + sliding + session, ten keys; compaction_threshold ${THRESHOLD:-default (64MB)}."
	echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs."
	echo "Background snapshots stored: $workers; journal truncations: $truncs."
	echo
	echo "| pipeline | calls | wall ms p50 / p90 / p99 / max | CPU ms p50 / p90 / p99 / max | CPU p99 / p50 | feed wall / cluster CPU | tables at the end |"
	echo "|---|---|---|---|---|---|---|"
	for r in "${REPORT[@]}"; do echo "$r"; done
	echo
	echo "Calls above 2x the CPU median (call number: CPU ms):"
	echo
	for r in "${SLOW[@]}"; do echo "$r"; done
} | tee "$OUT"
