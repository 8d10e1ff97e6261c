#!/usr/bin/env bash
# bench/coldload.sh: the cold load of a new backend (issues 26 and 39), on a
# throwaway cluster of a private PostgreSQL tree (like bench/soak.sh).
#
# Default settings, no scheduled job.  A fixed(60) + sliding(300, 60) +
# session(30) pipeline per feeding pattern, event time = offset, ten keys:
#   big      ingest_batch of 10,000 events, an advance after each, one
#            transaction each; every ingest_batch call is timed, for its
#            p50 and p99;
#   perrow   one LATERAL ingest per event, 1,000 per transaction, an
#            advance after each;
#   small    ingest_batch of 50 events and an advance, one transaction
#            each;
#   mixed    ingest_batch of 20,000 events over 4 partitions, an advance of
#            each partition after it, one transaction each;
#   ret      as big, on a pipeline created with retention => 100000 (the
#            state keeps the last 100,000 units of event time): its cold
#            load should stay flat as the history grows;
#   meas     as big, with ingest_measures_batch, on a measures pipeline
#            (measures a and b, aggregates count, sum(a), avg(b)): its
#            snapshot was the checkpoint until 0.4.0, like ret's (binary
#            format 3 since);
#   big_off  as big with streamforge.background_compaction_ms = -1 in the
#            feeding session (what 0.3.0 did), to 1M only, compacted only
#            at its last size (a baseline).
# Each pattern in turn is fed to 0.1M, 1M and 5M deliveries (5M for the
# patterns of --five only) and measured there, before the next: the load
# average; a new connection's first call, twice (CPU and wall ms of
# that backend), next to the metrics' estimated_load_ms (read in another
# new connection), once the background workers are done; compact(p) with
# the default target (does it follow the estimate?); then the same after
# streamforge.compact(p, 0).  So each size after the first starts from
# the snapshot of that compaction plus what the feed added (which the
# background snapshots would do anyway).  The CPU time of every backend
# and worker of the cluster is reported per feed (the postmaster's reaped
# children), so that what the background snapshots cost shows.  The
# report is rewritten after each pattern and size, so an interrupted run
# keeps what it measured.
#
# The time each definition change holds the pipeline's lock is measured by
# bench/redefine.sh (a probe session on the pipeline's row lock, on its own
# cluster, at 1M events by default), which this script runs last and whose table it
# puts in the same report (issue 39 item 5: one run).
#
#   ./bench/coldload.sh [--quick] [--keep] [--five "big ret ..."] [--no-redefine]
#     --quick: 0.1M and 0.3M, no 5M
#     --five:  the patterns fed to 5M (default: all but big_off)
#     --sizes: other sizes, e.g. "20000 50000" (a smoke run)
#     --only:  these patterns only, e.g. "ret meas" (default: all)
#     --no-redefine: skip bench/redefine.sh (the lock times)
#     --redefine-events N: its events (default 1,000,000)
#
# Writes bench/results/coldload-<date>-<shortsha>[-quick].md and prints it.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGOPTIONS PGSERVICE PGSERVICEFILE
PORT=5436						# names the socket file only: no TCP listener
DB=coldload
SIZES="100000 1000000 5000000"
SUFFIX=
KEEP=
ONLY=
FIVE="ret meas big mixed perrow small"
REDEFINE=1
REDEFINE_EVENTS=1000000
while [ $# -gt 0 ]; do
	case "$1" in
		--quick) SIZES="100000 300000"; SUFFIX=-quick ;;
		--keep) KEEP=1 ;;
		--five) FIVE=$2; shift ;;
		--sizes) SIZES=$2; SUFFIX=-sizes; shift ;;
		--only) ONLY=$2; shift ;;
		--no-redefine) REDEFINE= ;;
		--redefine-events) REDEFINE_EVENTS=$2; shift ;;
		-h | --help) sed -n '2,52p' "$0"; exit 0 ;;
		*) echo "usage: $0 [--quick] [--keep] [--five \"PATTERNS\"]" >&2; exit 2 ;;
	esac
	shift
done

sf_check_server_user
make -C "$SF_ROOT" PG_CONFIG="$PG_CONFIG" >/dev/null || sf_die "build failed"
SHA=$(git -C "$SF_ROOT" rev-parse --short HEAD 2>/dev/null || echo nogit)
OUT=$SF_ROOT/bench/results/coldload-$(date -u +%Y-%m-%d)-$SHA${ONLY:+-${ONLY// /-}}$SUFFIX.md

bench_scratch coldload
bench_initdb
bench_conf <<EOF
shared_buffers = 512MB
max_wal_size = 16GB
max_worker_processes = 16
checkpoint_timeout = 1h
synchronous_commit = off
autovacuum = off
EOF
bench_start
as_server "$SRVBIN/psql" -X -q -h "$SCRATCH" -p "$PORT" -U postgres -d postgres -c "CREATE DATABASE $DB"
psql_db <<'EOF'
CREATE EXTENSION streamforge;
-- events f .. t - 1 of pipeline pl (event time = offset, ten keys) in
-- ingest_batch calls of b, over np partitions (offset i / np on partition
-- p<i % np>), each call timed into call_ms, an advance of every partition
-- after each, one transaction each
CREATE TABLE call_ms (pl text, ms float8);
CREATE PROCEDURE feed_batches(pl text, f bigint, t bigint, b int, np int)
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz;
    lo bigint;
    hi bigint;
    arr streamforge.delivery[];
BEGIN
    FOR s IN 0 .. (t - f - 1) / b LOOP
        lo := f + s * b;
        hi := least(f + (s + 1) * b, t);
        arr := ARRAY(SELECT ROW('p' || (i % np), i / np, 'e' || i,
                                'k' || (i % 10), i, 1)::streamforge.delivery
                       FROM generate_series(lo, hi - 1) AS i ORDER BY i);
        t0 := clock_timestamp();
        PERFORM count(*) FROM streamforge.ingest_batch(pl, arr);
        INSERT INTO call_ms VALUES (pl, extract(epoch FROM clock_timestamp() - t0) * 1000);
        FOR k IN 0 .. np - 1 LOOP
            PERFORM count(*) FROM streamforge.advance(pl, 'p' || k, hi - 1);
        END LOOP;
        COMMIT;
    END LOOP;
END $$;
CREATE PROCEDURE feed_measures(pl text, f bigint, t bigint, b int)
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz;
    lo bigint;
    hi bigint;
    arr streamforge.measures_delivery[];
BEGIN
    FOR s IN 0 .. (t - f - 1) / b LOOP
        lo := f + s * b;
        hi := least(f + (s + 1) * b, t);
        arr := ARRAY(SELECT ROW('p0', i, 'e' || i, 'k' || (i % 10), i,
                                ARRAY[i % 1000, i % 7])::streamforge.measures_delivery
                       FROM generate_series(lo, hi - 1) AS i ORDER BY i);
        t0 := clock_timestamp();
        PERFORM count(*) FROM streamforge.ingest_measures_batch(pl, arr);
        INSERT INTO call_ms VALUES (pl, extract(epoch FROM clock_timestamp() - t0) * 1000);
        PERFORM count(*) FROM streamforge.advance(pl, 'p0', hi - 1);
        COMMIT;
    END LOOP;
END $$;
CREATE PROCEDURE feed_rows(pl text, f bigint, t bigint, b int)
LANGUAGE plpgsql AS $$
BEGIN
    FOR s IN 0 .. (t - f - 1) / b LOOP
        PERFORM count(*)
           FROM generate_series(f + s * b, least(f + (s + 1) * b, t) - 1) AS i
          CROSS JOIN LATERAL streamforge.ingest(pl, 'p0', i, 'e' || i,
                                                'k' || (i % 10), i, 1);
        PERFORM count(*) FROM streamforge.advance(pl, 'p0', least(f + (s + 1) * b, t) - 1);
        COMMIT;
    END LOOP;
END $$;
-- this backend's CPU time (user + system) in ms, from /proc (10 ms ticks)
CREATE FUNCTION cpu_ms() RETURNS numeric LANGUAGE sql AS $$
    SELECT (split_part(s, ' ', 12)::numeric + split_part(s, ' ', 13)::numeric) * 10
      FROM (SELECT substr(f, strpos(f, ') ') + 2) AS s
              FROM pg_read_file('/proc/self/stat') AS f) AS x $$;
-- the cold load of a pipeline in this (new) session: "wall ms / CPU ms";
-- the machine may be shared, so the CPU time is the figure to compare
CREATE FUNCTION load_ms(pl text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz := clock_timestamp();
    c0 numeric := cpu_ms();
BEGIN
    PERFORM streamforge.watermark(pl);
    RETURN round(extract(epoch FROM clock_timestamp() - t0)::numeric * 1000)
           || ' / ' || (cpu_ms() - c0);
END $$;
EOF

windows="ARRAY[streamforge.fixed('f', 60), streamforge.sliding('s', 300, 60), streamforge.session('g', 30)]"
PATTERNS="ret meas big mixed perrow small big_off"
if [ -n "$ONLY" ]; then
	for pl in $ONLY; do
		[[ " $PATTERNS " == *" $pl "* ]] || sf_die "unknown pattern $pl (the patterns: $PATTERNS)"
	done
	PATTERNS=$ONLY
fi
RETENTION=100000
for pl in big big_off perrow small; do
	psql_db -qc "SELECT streamforge.create_pipeline('$pl', ARRAY['p0'], $windows)"
done
psql_db -qc "SELECT streamforge.create_pipeline('mixed', ARRAY['p0', 'p1', 'p2', 'p3'], $windows)"
psql_db -qc "SELECT streamforge.create_pipeline('ret', ARRAY['p0'], $windows, retention => $RETENTION)"
psql_db -qc "SELECT streamforge.create_pipeline('meas', ARRAY['p0'], $windows, measures => ARRAY['a', 'b'], aggregates => ARRAY['count', 'sum(a)', 'avg(b)'])"

# CPU ms of the cluster's exited backends and workers (the postmaster's
# cutime + cstime: every psql connection of this script is one)
pm_cpu() {
	local pm
	pm=$(head -1 "$SCRATCH/data/postmaster.pid")
	awk '{print ($16 + $17) * 10}' "/proc/$pm/stat"
}
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
# wait until no background snapshot worker runs
idle() {
	local _
	for _ in $(seq 1 1200); do
		[ "$(psql_val "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'streamforge compaction'")" = 0 ] && return
		sleep 0.5
	done
}
ROWS=()
declare -A CELL
measure() {	# pipeline deliveries state -> a row of the detail table, a cell
	local pl=$1 n=$2 what=$3 l1 l2 est side c1 c2 cmin ratio la
	idle
	la=$(loadavg)
	l1=$(psql_val "SELECT load_ms('$pl')")
	l2=$(psql_val "SELECT load_ms('$pl')")
	est=$(psql_val "SELECT round(estimated_load_ms::numeric) || '|' || journal_rows || ' rows, '
	                       || pg_size_pretty(journal_bytes) || ' journal, '
	                       || pg_size_pretty(snapshot_bytes) || ' snapshot'
	                  FROM streamforge.metrics WHERE pipeline = '$pl'")
	side=$(psql_val "SELECT coalesce(pg_size_pretty(sum(octet_length(j.entry))::bigint), '-')
	                   FROM streamforge.journal j JOIN streamforge.pipeline p ON p.id = j.pipeline_id
	                  WHERE p.name = '$pl' AND j.pos < 0")
	c1=${l1#* / }
	c2=${l2#* / }
	cmin=$(( c1 < c2 ? c1 : c2 ))
	ratio=$(printf '%.2f' "$(echo "scale=3; ${est%%|*} / ($cmin + 0.001)" | bc)")
	ROWS+=("| $pl | $n | $what | $la | $l1 | $l2 | ${est%%|*} | $ratio | ${est#*|}, $side background snapshot |")
	CELL[$pl,$n,$what]="$c1, $c2 ($est_prefix${est%%|*}; ${ratio}x)"
}
est_prefix="est "
FEEDS=()
feed() {	# pipeline from to sql [setting sql] -> fed, timed
	local pl=$1 from=$2 to=$3 sql=$4 set=${5:-SELECT 1} c0 w0 c1 w1 own la
	la=$(loadavg)
	c0=$(pm_cpu)
	w0=$(date +%s.%N)
	own=$(psql_db -At -c "$set" -c "$sql" -c "SELECT cpu_ms()" | tail -1)
	w1=$(date +%s.%N)
	idle
	c1=$(pm_cpu)
	FEEDS+=("| $pl | $from - $to | $la | $(printf '%.1f' "$(echo "$w1 - $w0" | bc)") s | $own ms | $(echo "$c1 - $c0" | bc) ms |")
}
feed_sql() {	# pattern from to -> the CALL that feeds it
	case $1 in
		big | big_off | ret) echo "CALL feed_batches('$1', $2, $3, 10000, 1)" ;;
		meas) echo "CALL feed_measures('meas', $2, $3, 10000)" ;;
		perrow) echo "CALL feed_rows('perrow', $2, $3, 1000)" ;;
		small) echo "CALL feed_batches('small', $2, $3, 50, 1)" ;;
		mixed) echo "CALL feed_batches('mixed', $2, $3, 20000, 4)" ;;
	esac
}
pct() {
	psql_val "SELECT coalesce(round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 1) || ' ms p50, '
	                 || round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 1) || ' ms p99, '
	                 || round(max(ms)::numeric, 1) || ' ms max over ' || count(*) || ' calls', 'no calls')
	            FROM call_ms WHERE pl = '$1'"
}
COMPACTS=()
declare -A PREV
DONE_SIZES=
report() {
	local n pl line
	{
		echo "# Cold loads without a job ($SHA, $(date -u +%Y-%m-%d))"
		echo
		echo "Pipelines fixed(60) + sliding(300, 60) + session(30), ten keys, event time = offset, default settings, no scheduled job; \`ret\` has retention => $RETENTION (bench/coldload.sh; CPU of the backend from /proc, in 10 ms ticks; the machine: 2 cores shared with other engineers' builds and tests, load average given per measure). Sizes fed to 5M: $FIVE."
		echo
		echo "## Side by side: CPU ms of a new backend's first call (two new backends), the metrics' estimated_load_ms, and estimate / measure (the lower CPU)"
		echo
		line="| pattern |"
		for n in $DONE_SIZES; do line+=" $n default | $n after compact(p, 0) |"; done
		echo "$line"
		line="|---|"
		for n in $DONE_SIZES; do line+="---|---|"; done
		echo "$line"
		for pl in $PATTERNS; do
			line="| $pl |"
			for n in $DONE_SIZES; do
				line+=" ${CELL[$pl,$n,default]:--} | ${CELL[$pl,$n,after compact(p, 0)]:--} |"
			done
			echo "$line"
		done
		echo
		echo "## First call of a new backend, in detail"
		echo
		echo "| pipeline | deliveries | state | load average | 1st backend: wall / CPU ms | 2nd backend: wall / CPU ms | estimated_load_ms | estimate / lower CPU | tables |"
		echo "|---|---|---|---|---|---|---|---|---|"
		printf '%s\n' "${ROWS[@]}"
		echo
		echo "## compact(p) with the default target (streamforge.compact_target_load_ms), before compact(p, 0)"
		echo
		echo "| pipeline | deliveries | estimated_load_ms | compact(p) |"
		echo "|---|---|---|---|"
		printf '%s\n' "${COMPACTS[@]}"
		echo
		echo "## Feeds"
		echo
		echo "CPU of the feeding backend, and of every backend and worker of the cluster during the feed (background snapshots and the script's own connections included)."
		echo
		echo "| pipeline | deliveries | load average at start | wall | feeding backend CPU | cluster CPU |"
		echo "|---|---|---|---|---|---|"
		printf '%s\n' "${FEEDS[@]}"
		echo
		echo "ingest_batch of 10,000 events, the call alone (wall): big: $(pct big); ret: $(pct ret); meas: $(pct meas); big_off (no background snapshots): $(pct big_off)."
		echo
		echo "## Lock held by definition changes"
		echo
		if [ -s "$SCRATCH/redefine.md" ]; then
			echo "bench/redefine.sh, run by this script after the cold loads, on its own cluster at $REDEFINE_EVENTS events: a pipeline of 4 partitions and 1,000 keys, windows fixed(60), sliding(300, 60) and session(30); \"lock held\" is the longest wait of a probe session taking the pipeline's row lock every 10 ms during the change (what a writer waits); \"cold load after\" is wall time."
			echo
			cat "$SCRATCH/redefine.md"
		else
			echo "Not measured in this run (--no-redefine, or not reached): bench/redefine.sh times it (a probe session waiting on the pipeline's row lock during each change); see its latest bench/results/redefine-*.md."
		fi
	} >"$OUT.tmp"
	mv "$OUT.tmp" "$OUT"
}

max=0
for n in $SIZES; do max=$n; done
for pl in $PATTERNS; do PREV[$pl]=0; done
for n in $SIZES; do
	for pl in $PATTERNS; do
		if [ "$pl" = big_off ]; then
			[ "$n" -gt 1000000 ] && continue
			feed big_off "${PREV[$pl]}" "$n" "$(feed_sql big_off "${PREV[$pl]}" "$n")" \
				"SET streamforge.background_compaction_ms = -1"
		else
			if [ "$n" -gt 1000000 ] && [[ " $FIVE " != *" $pl "* ]]; then continue; fi
			feed "$pl" "${PREV[$pl]}" "$n" "$(feed_sql "$pl" "${PREV[$pl]}" "$n")"
		fi
		PREV[$pl]=$n
		measure "$pl" "$n" default
		if [ "$pl" != big_off ] || [ "$n" -ge 1000000 ] || [ "$n" -ge "$max" ]; then
			idle
			est=$(psql_val "SELECT round(estimated_load_ms::numeric) FROM streamforge.metrics WHERE pipeline = '$pl'")
			did=$(psql_val "SELECT streamforge.compact('$pl')")
			COMPACTS+=("| $pl | $n | $est | $did |")
			psql_val "SELECT streamforge.compact('$pl', 0)" >/dev/null
			measure "$pl" "$n" "after compact(p, 0)"
		fi
		[[ " $DONE_SIZES " == *" $n "* ]] || DONE_SIZES+=" $n"
		report
	done
done
if [ -n "$REDEFINE" ]; then
	# its own cluster and build: stop this one first (2 shared cores)
	SF_RUN_DIR=$SCRATCH sf_as_server "$SRVBIN/pg_ctl" -D "$SCRATCH/data" -m fast -w stop >/dev/null
	started=
	"$SF_ROOT/bench/redefine.sh" --events "$REDEFINE_EVENTS" --out "$SCRATCH/redefine.md" ||
		echo "bench/redefine.sh failed: the lock times are missing from the report" >&2
	started=1
	SF_RUN_DIR=$SCRATCH sf_as_server "$SRVBIN/pg_ctl" -D "$SCRATCH/data" -l "$SCRATCH/server.log" -w start >/dev/null
	report
fi
cat "$OUT"
