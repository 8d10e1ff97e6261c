#!/usr/bin/env bash
# bench/run.sh: the streamforge benchmark (issue 7).  Nothing in the test
# suite times anything; this is the one place that does.
#
#   ./bench/run.sh            full run (about 5 minutes on 2 cores)
#   ./bench/run.sh --quick    smoke run (about 1 minute): 100k arrivals,
#                             one repetition
#
# Options: --reps N (repetitions of every throughput run), --keep (keep the
# scratch directory and its cluster's files), --no-build (skip make: use
# the tree as it was last built), --profile (perf profiles of the ingest_batch runs,
# needs the linux-perf package; skipped with a note when perf cannot sample),
# --callgrind (then also instructions per event per component of this
# checkout's tree, by bench/callgrind.sh, written next to the wall-clock
# results as callgrind-<date>-<shortsha>.{md,json}; about 1 minute more),
# --callgrind-base REF (with --callgrind: measure REF too, first, as the base
# of the ratios, e.g. v0.2.0).
#
# Like ./scripts/test.sh it installs the Debian packages it lacks (plus
# python3 and gnuplot-nox) and builds the extension; then, in a scratch
# directory owned by the server user ("postgres" when run as root):
#   1. installs the build into a private copy of the PostgreSQL 15 tree
#      (make install DESTDIR=...: the server finds its share and lib
#      directories relative to its binary), so that nobody else's install
#      into the shared PostgreSQL tree can change the code under test, and
#      generates the seeded workload (bench/gen_workload.py),
#   2. starts a throwaway cluster of that private tree, listening on a Unix
#      socket in the scratch directory only (no TCP),
#   3. loads bench/sql/bench.sql, the workload and the pre-built batches,
#   4. measures (see docs/performance.md): throughput of ingest_batch at
#      batch sizes 10,000 / 100 / 1, of per-row ingest, of the plain-SQL
#      upsert and of the floor, for three pipeline shapes; the advance that
#      closes every window at once; commit latency of a one-event
#      transaction (pgbench) against history size and live buckets;
#      checkpoint bytes and backend memory per delivery and per live bucket;
#   5. writes bench/results/<date>-<shortsha>.json, bench/results/latest.json,
#      a PNG chart (<date>-<shortsha>.png, latest.png) and the Markdown tables
#      docs/performance.md quotes (<date>-<shortsha>.md, latest.md), prints a
#      summary, stops the cluster and removes the scratch directory.  A
#      --quick run writes <date>-<shortsha>-quick.* and latest-quick.*
#      instead, so it never replaces the full run's files.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGOPTIONS PGSERVICE PGSERVICEFILE
BENCH=$SF_ROOT/bench
PORT=5433						# names the socket file only: no TCP listener
DB=bench

MODE=full
REPS=
KEEP=
BUILD=1
PROFILE=
CALLGRIND=
CALLGRIND_BASE=
while [ $# -gt 0 ]; do
	case "$1" in
		--quick) MODE=quick ;;
		--reps) REPS=$2; shift ;;
		--keep) KEEP=1 ;;
		--no-build) BUILD= ;;
		--profile) PROFILE=1 ;;
		--callgrind) CALLGRIND=1 ;;
		--callgrind-base) CALLGRIND_BASE=$2; shift ;;
		-h | --help) sed -n '2,18p' "$0"; exit 0 ;;
		*) echo "usage: $0 [--quick] [--reps N] [--keep] [--no-build] [--profile] [--callgrind [--callgrind-base REF]]" >&2; exit 2 ;;
	esac
	shift
done

# Sizes.  ARRIVALS: deliveries generated (the latency runs build histories
# from its prefixes); TPUT: the prefix replayed by every throughput run;
# SMALL: the prefix used for the one-call-per-event drivers (batch size 1,
# per-row ingest), which are two orders of magnitude slower; LAT_SIZES:
# history sizes of the latency runs; LAT_TXNS one-event transactions per
# latency run, after LAT_WARM warm-up transactions (the first one loads the
# pipeline).
if [ "$MODE" = quick ]; then
	ARRIVALS=100000
	TPUT=100000
	SMALL=10000
	LAT_SIZES="1000 10000 100000"
	LAT_TXNS=300
	LAT_WARM=20
	: "${REPS:=1}"
else
	ARRIVALS=1000000
	TPUT=500000
	SMALL=10000
	LAT_SIZES="1000 100000 1000000"
	LAT_TXNS=1000
	LAT_WARM=100
	: "${REPS:=3}"
fi
SEED=20260101
TICK=10000
LATENESS=1000
DISORDER=2000
FIXED_SIZE=10000
SLIDE_STEP=2000
SESSION_GAP=10000
SHAPES="fixed fixed_sliding_session session"

# ------------------------------------------------------------------
# Packages, build, install
# ------------------------------------------------------------------
sf_need_packages "${SF_BUILD_PACKAGES[@]}" python3 gnuplot-nox
[ -n "$PROFILE" ] && sf_need_packages linux-perf
sf_check_server_user
if [ -n "$BUILD" ]; then
	sf_say "building $(sf_make_var "$SF_ROOT" EXTENSION) (make, PG_CONFIG=$PG_CONFIG)"
	make -C "$SF_ROOT" -j"$(nproc 2>/dev/null || echo 2)" PG_CONFIG="$PG_CONFIG" >/dev/null ||
		sf_die "build failed"
fi
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

SHA=$(git -C "$SF_ROOT" rev-parse --short HEAD 2>/dev/null || echo nogit)
DIRTY=$( (git -C "$SF_ROOT" status --porcelain --untracked-files=no -- src sql Makefile 2>/dev/null || echo unknown) | wc -l)
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
DATE=$(date -u +%Y-%m-%d)

bench_scratch bench
PRIV=$SCRATCH/pg
SO_SUM=$(md5sum "$PRIV$($PG_CONFIG --pkglibdir)/$(sf_make_var "$SF_ROOT" MODULE_big).so" | cut -d' ' -f1)

cp -r "$BENCH/sql" "$BENCH/latency.pgbench" "$BENCH/commit_floor.pgbench" \
	"$BENCH/gen_workload.py" "$SCRATCH/"
mkdir -p "$SCRATCH/work" "$SCRATCH/lat"
sf_is_root && chown -R postgres:postgres "$SCRATCH"

elapsed() { echo $((SECONDS - T_START))s; }
T_START=$SECONDS

# ------------------------------------------------------------------
# 1. Workload
# ------------------------------------------------------------------
sf_say "generating the workload: $ARRIVALS arrivals, seed $SEED"
as_server "$PY" "$SCRATCH/gen_workload.py" --out "$SCRATCH/work" \
	--arrivals "$ARRIVALS" --seed "$SEED" --tick "$TICK" \
	--disorder "$DISORDER" --lateness "$LATENESS" 2>"$SCRATCH/work/counts.txt"
cat "$SCRATCH/work/counts.txt"

# ------------------------------------------------------------------
# 2. Throwaway cluster
# ------------------------------------------------------------------
sf_say "starting a throwaway cluster in $SCRATCH/data"
bench_initdb
bench_conf <<EOF
shared_buffers = 1GB
work_mem = 64MB
maintenance_work_mem = 256MB
max_wal_size = 16GB
checkpoint_timeout = 1h
autovacuum = off
EOF
bench_start

# ------------------------------------------------------------------
# 3. Schema, workload, batches
# ------------------------------------------------------------------
sf_say "loading the workload and building the batches"
as_server "$SRVBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SCRATCH" -p "$PORT" -U postgres -d postgres \
	-c "CREATE DATABASE $DB"
psql_db -c "CREATE EXTENSION streamforge" -f "$SCRATCH/sql/bench.sql"
[ "$(psql_val "SELECT setting FROM pg_config WHERE name = 'PKGLIBDIR'")" = "$PRIV$($PG_CONFIG --pkglibdir)" ] ||
	sf_die "the server does not use the private tree $PRIV"
psql_db <<EOF
\copy bench.staging FROM '$SCRATCH/work/deliveries.csv' WITH (FORMAT csv)
\copy bench.control FROM '$SCRATCH/work/control.csv' WITH (FORMAT csv)
INSERT INTO bench.param VALUES
    ('arrivals', $ARRIVALS), ('seed', $SEED), ('tick', $TICK),
    ('lateness', $LATENESS), ('disorder', $DISORDER),
    ('fixed_size', $FIXED_SIZE), ('slide_step', $SLIDE_STEP),
    ('session_gap', $SESSION_GAP), ('small', $SMALL), ('throughput', $TPUT);
SELECT bench.build_batches(10000, $ARRIVALS) AS batches_10000,
       bench.build_batches(100, $TPUT) AS batches_100,
       bench.build_batches(1, $SMALL) AS batches_1 \gset
VACUUM ANALYZE;
CHECKPOINT;
EOF
echo "    loaded in $(elapsed)"

# One driver run in its own connection (a fresh backend, empty cache)
run() {
	local test=$1 shape=$2 bs=$3 rep=$4 lim=$5
	psql_db -c "CALL bench.run_stream('$test', '$shape', $bs, $rep, $lim)"
	psql_val "SELECT format('    %-20s %-22s bs=%-6s rep=%s  %s events  %s events/s (ingest) %s s wall',
	                 test, shape, batch_size, rep, events,
	                 round(events / nullif(ingest_s, 0)), round(wall_s::numeric, 2))
	            FROM bench.sample ORDER BY id DESC LIMIT 1"
}

# ------------------------------------------------------------------
# 4a. Throughput, repeated; the order of a repetition is fixed and
#     interleaves the drivers, so a slow phase of the machine hits all.
# ------------------------------------------------------------------
for rep in $(seq 1 "$REPS"); do
	sf_say "throughput, repetition $rep of $REPS ($(elapsed))"
	run floor none 10000 "$rep" "$TPUT"
	for shape in $SHAPES; do
		run sf_batch "$shape" 10000 "$rep" "$TPUT"
	done
	run floor none 100 "$rep" "$TPUT"
	for shape in $SHAPES; do
		run sf_batch "$shape" 100 "$rep" "$TPUT"
	done
	run floor none 1 "$rep" "$SMALL"
	run floor_row none 1 "$rep" "$SMALL"
	for shape in $SHAPES; do
		run sf_batch "$shape" 1 "$rep" "$SMALL"
		run sf_row "$shape" 1 "$rep" "$SMALL"
	done
	run plain_fixed fixed 10000 "$rep" "$TPUT"
	if [ "$rep" -eq "$REPS" ]; then
		# the plain tables of the last run are compared with streamforge's
		run sf_verify fixed_sliding_session 10000 0 "$TPUT"
	fi
	run plain_fixed_sliding fixed_sliding 10000 "$rep" "$TPUT"
done

sf_say "checking that plain SQL and streamforge agree"
psql_db -c "CREATE TABLE bench.verify AS SELECT * FROM bench.verify_plain()"
psql_db -c "TABLE bench.verify"
mismatch=$(psql_val "SELECT sum(mismatches) + count(*) FILTER (WHERE sf_rows = 0 OR sf_rows <> plain_rows) FROM bench.verify")
[ "$mismatch" = 0 ] || sf_die "plain SQL and streamforge disagree ($mismatch mismatches)"

# ------------------------------------------------------------------
# 4b. Latency of one-event transactions, state sizes, burst of closings
# ------------------------------------------------------------------
# pgbench on pipeline "lat"; $1 label, $2 synchronous_commit, $3 script
# (default latency.pgbench)
latency() {
	local label=$1 sync=$2 script=${3:-latency} off t
	if [ "$script" = latency ]; then
		off=$(psql_val "SELECT consumed_offset FROM streamforge.partitions('lat') WHERE partition = 'p0'")
		t=$(psql_val "SELECT max(event_time) + 1 - $off FROM bench.staging")
	else
		off=$(psql_val "SELECT coalesce(max(n), 0) FROM bench.commit_floor")
		t=0
	fi
	as_server env PGOPTIONS="-c synchronous_commit=$sync" "$PGBIN/pgbench" -n -M prepared \
		-c 1 -t $((LAT_WARM + LAT_TXNS)) -f "$SCRATCH/$script.pgbench" \
		-D off="$off" -D t="$t" --random-seed=$SEED \
		-l --log-prefix="$SCRATCH/lat/$label-sync_$sync" \
		-h "$SCRATCH" -p "$PORT" -U postgres "$DB" >"$SCRATCH/lat/$label-sync_$sync.out" 2>&1 ||
		{ cat "$SCRATCH/lat/$label-sync_$sync.out"; sf_die "pgbench failed"; }
	echo "    latency $label synchronous_commit=$sync: $(grep -E '^latency average' "$SCRATCH/lat/$label-sync_$sync.out")"
}

measure() {
	psql_db -c "SELECT bench.compact('lat')" >/dev/null
	psql_db -c "SELECT bench.measure_state('$1', 'lat', 'fixed_sliding_session')" >/dev/null
	psql_val "SELECT format('    state %-14s deliveries=%s live_buckets=%s memory=%s B checkpoint=%s B',
	                 label, deliveries, live_buckets, memory_bytes, checkpoint_bytes)
	            FROM bench.state ORDER BY id DESC LIMIT 1"
}

sf_say "commit floor: one-row INSERT transactions ($(elapsed))"
latency commit_floor on commit_floor
latency commit_floor off commit_floor

for h in $LAT_SIZES; do
	sf_say "history $h: latency, checkpoint and memory ($(elapsed))"
	bs=10000
	[ "$h" -lt 10000 ] && bs=100
	psql_db -c "CALL bench.run_stream('sf_build', 'fixed_sliding_session', $bs, 0, $h, 'lat')"
	measure "history_$h"
	latency "history_$h" on
	latency "history_$h" off
	psql_db -c "SELECT bench.close_all('lat')" >/dev/null
	measure "history_${h}_closed"
done

sf_say "burst: $TPUT arrivals without any advance, then one advance closes everything ($(elapsed))"
for rep in $(seq 1 "$REPS"); do
	psql_db -c "CALL bench.run_stream('sf_burst', 'fixed_sliding_session', 10000, $rep, $TPUT, 'lat')"
	if [ "$rep" -eq 1 ]; then
		measure burst_live
		latency burst_live on
		latency burst_live off
	fi
	psql_db -c "CALL bench.burst_advance('lat', 'fixed_sliding_session', $rep, $TPUT)"
	psql_val "SELECT format('    burst rep=%s: %s changes from %s live buckets in %s s',
	                 rep, changes, extra->>'live_buckets_before', round(control_s::numeric, 3))
	            FROM bench.sample ORDER BY id DESC LIMIT 1"
	if [ "$rep" -eq 1 ]; then
		measure burst_closed
	fi
done

# ------------------------------------------------------------------
# 4c. Optional profiles
# ------------------------------------------------------------------
if [ -n "$PROFILE" ]; then
	sf_say "profiling ingest_batch (perf, cpu-clock)"
	if perf record -e cpu-clock -o /dev/null true >/dev/null 2>&1; then
		for shape in fixed fixed_sliding_session; do
			psql_db -c "SELECT pg_sleep(1)" -c "CALL bench.run_stream('sf_batch', '$shape', 10000, 0, $TPUT)" &
			runpid=$!
			sleep 0.5
			pid=$(psql_val "SELECT pid FROM pg_stat_activity WHERE query LIKE '%pg_sleep%' AND pid <> pg_backend_pid()")
			perf record -F 999 -e cpu-clock -p "$pid" -o "$SCRATCH/perf-$shape.data" >/dev/null 2>&1 &
			perfpid=$!
			wait "$runpid" || true
			kill -INT "$perfpid"; wait "$perfpid" || true
			perf report -i "$SCRATCH/perf-$shape.data" --no-children --sort dso,sym --stdio 2>/dev/null |
				grep -E '^ +[0-9]' | head -25 >"$SCRATCH/profile-$shape.txt" || true
			echo "    $shape:"; head -12 "$SCRATCH/profile-$shape.txt"
		done
	else
		echo "    perf cannot sample here; skipped"
	fi
fi

# ------------------------------------------------------------------
# 5. Results
# ------------------------------------------------------------------
sf_say "writing the results ($(elapsed))"
# a smoke run never replaces the full run's latest.* that the docs quote
SUFFIX=
[ "$MODE" = quick ] && SUFFIX=-quick
psql_val "SELECT json_agg(s ORDER BY id) FROM bench.sample s" >"$SCRATCH/samples.json"
psql_val "SELECT json_agg(s ORDER BY id) FROM bench.state s" >"$SCRATCH/state.json"
psql_val "SELECT json_agg(v) FROM bench.verify v" >"$SCRATCH/verify.json"
PGVERSION=$(psql_val "SELECT version()")
mkdir -p "$BENCH/results"
"$PY" "$BENCH/report.py" \
	--scratch "$SCRATCH" --results "$BENCH/results" --name "$DATE-$SHA$SUFFIX" \
	--latest "latest$SUFFIX" \
	--meta mode="$MODE" --meta git_sha="$SHA" --meta git_dirty_files="$DIRTY" \
	--meta started="$STAMP" --meta postgres_version="$PGVERSION" \
	--meta seconds="$((SECONDS - T_START))" \
	--meta library_md5="$SO_SUM" \
	--param arrivals="$ARRIVALS" --param throughput_prefix="$TPUT" \
	--param small_prefix="$SMALL" --param seed="$SEED" \
	--param tick="$TICK" --param lateness="$LATENESS" --param disorder="$DISORDER" \
	--param fixed_size="$FIXED_SIZE" --param slide_step="$SLIDE_STEP" \
	--param slide_size="$((5 * SLIDE_STEP))" --param session_gap="$SESSION_GAP" \
	--param reps="$REPS" --param latency_txns="$LAT_TXNS" --param latency_warmup="$LAT_WARM" \
	--param latency_histories="$LAT_SIZES"
if [ -n "$CALLGRIND" ]; then
	# instructions per event, in fresh single-user backends under callgrind
	# (its own scratch directory and clusters; docs/performance.md,
	# "Instruction counts")
	sf_say "instruction counts (bench/callgrind.sh) ($(elapsed))"
	bench_stop
	cg_refs=(WORKTREE)
	[ -n "$CALLGRIND_BASE" ] && cg_refs=("$CALLGRIND_BASE" WORKTREE)
	# (a --quick run's files are callgrind-*-quick.*, as its others)
	"$BENCH/callgrind.sh" --name "$DATE-$SHA$SUFFIX" --latest "callgrind-latest$SUFFIX" "${cg_refs[@]}"
fi
sf_say "done in $(elapsed)"
