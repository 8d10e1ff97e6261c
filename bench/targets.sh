#!/usr/bin/env bash
# bench/targets.sh: the batch-path targets of issue 23, measured side by side
# in one run, in interleaved pairs (the machine is shared: only ratios within
# a repetition mean anything, so every ratio is taken per repetition and the
# median of those is reported).
#
#   ./bench/targets.sh [--reps N] [--events N] [--rows N] [--keep] [--no-build]
#
# On the benchmark's seeded workload (bench/gen_workload.py, the same as
# bench/run.sh's; a transaction per tick of 10,000 arrivals, the tick's
# advances and mark_idle calls after its deliveries), each repetition runs,
# back to back and each in a fresh connection (bench.run_stream,
# bench/sql/bench.sql; the time is that of the calls only):
#
#   floor                 SELECT count(*), sum(value) FROM unnest($batch)
#   sf_batch fixed        ingest_batch, batches of 10,000, one fixed window
#   plain_groupby_fixed   the batched GROUP BY upsert of the same batches
#                         into a fixed-window table (no deduplication)
#   sf_batch fss          ingest_batch, fixed + sliding (5 buckets per
#                         event) + session
#   plain_groupby_sliding the batched GROUP BY upsert into a sliding-window
#                         table (5 rows per event)
#   sf_row fixed          ingest per row through LATERAL
#   plain_row_upsert      a PL/pgSQL loop upserting per event
#   sf_count fixed        ingest_count in a PL/pgSQL loop
#   floor_row_lateral     the same rows through LATERAL into a scalar C
#                         function (abs(source_offset)): the executor's
#                         FunctionScan per row, the same path a materialized
#                         set-returning call takes, with no work of its own;
#                         the most any per-row LATERAL call can reach
#                         (generate_series(off, -1), the floor before,
#                         pays its own value-per-call set-up and is slower)
#   floor_row_loop        the same loop evaluating a C function
#                         (length(event_id)): the most a loop can reach
#
# and reports the ratios against the targets, with the WAL bytes per event of
# the batch runs (pg_current_wal_lsn() around each run: the journal rows,
# their TOAST chunks, the pipeline row, the commits).  --events: the
# deliveries of the batch drivers (default 200,000); --rows: of the per-row
# drivers (default 50,000); --reps (default 5).  Writes
# bench/results/targets-<date>-<sha>.md and targets-latest.md.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGOPTIONS PGSERVICE PGSERVICEFILE
BENCH=$SF_ROOT/bench
PORT=5435						# names the socket file only: no TCP listener
DB=bench
REPS=5
EVENTS=200000
ROWS=50000
KEEP=
BUILD=1
while [ $# -gt 0 ]; do
	case "$1" in
		--reps) REPS=$2; shift ;;
		--events) EVENTS=$2; shift ;;
		--rows) ROWS=$2; shift ;;
		--keep) KEEP=1 ;;
		--no-build) BUILD= ;;
		-h | --help) sed -n '2,32p' "$0"; exit 0 ;;
		*) echo "usage: $0 [--reps N] [--events N] [--rows N] [--keep] [--no-build]" >&2; exit 2 ;;
	esac
	shift
done
[ "$REPS" -ge 1 ] 2>/dev/null || sf_die "--reps must be at least 1"
SEED=20260101
TICK=10000
LATENESS=1000
DISORDER=2000
ARRIVALS=$((EVENTS > ROWS ? EVENTS : ROWS))

sf_need_packages "${SF_BUILD_PACKAGES[@]}" python3
sf_check_server_user
if [ -n "$BUILD" ]; then
	sf_say "building (make, PG_CONFIG=$PG_CONFIG)"
	make -C "$SF_ROOT" -j2 PG_CONFIG="$PG_CONFIG" >/dev/null || sf_die "build failed"
fi
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
SHA=$(git -C "$SF_ROOT" rev-parse --short HEAD 2>/dev/null || echo nogit)
DATE=$(date -u +%Y-%m-%d)

bench_scratch targets
cp -r "$BENCH/sql" "$BENCH/gen_workload.py" "$SCRATCH/"
mkdir -p "$SCRATCH/work"
sf_is_root && chown -R postgres:postgres "$SCRATCH"

sf_say "generating the workload: $ARRIVALS arrivals, seed $SEED"
as_server "$PY" "$SCRATCH/gen_workload.py" --out "$SCRATCH/work" \
	--arrivals "$ARRIVALS" --seed "$SEED" --tick "$TICK" \
	--disorder "$DISORDER" --lateness "$LATENESS" 2>"$SCRATCH/work/counts.txt"

bench_initdb
bench_conf <<EOF
shared_buffers = 512MB
work_mem = 64MB
max_wal_size = 16GB
checkpoint_timeout = 1h
autovacuum = off
EOF
bench_start
as_server "$SRVBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SCRATCH" -p "$PORT" -U postgres -d postgres \
	-c "CREATE DATABASE $DB"
psql_db -c "CREATE EXTENSION streamforge" -f "$SCRATCH/sql/bench.sql" >/dev/null
psql_db >/dev/null <<EOF
\copy bench.staging FROM '$SCRATCH/work/deliveries.csv' WITH (FORMAT csv)
\copy bench.control FROM '$SCRATCH/work/control.csv' WITH (FORMAT csv)
INSERT INTO bench.param VALUES
    ('arrivals', $ARRIVALS), ('seed', $SEED), ('tick', $TICK),
    ('lateness', $LATENESS), ('disorder', $DISORDER),
    ('fixed_size', 10000), ('slide_step', 2000), ('session_gap', 10000),
    ('small', $ROWS), ('throughput', $EVENTS);
SELECT bench.build_batches(10000, $EVENTS);
VACUUM ANALYZE;
CHECKPOINT;
EOF

run() {
	local test=$1 shape=$2 bs=$3 rep=$4 lim=$5
	psql_db -c "CALL bench.run_stream('$test', '$shape', $bs, $rep, $lim)"
	psql_val "SELECT format('    %-22s %-22s rep=%s  %s events  %s events/s  %s WAL bytes/event',
	                 test, shape, rep, events, round(events / nullif(ingest_s, 0)),
	                 round((extra->>'wal_bytes')::numeric / events, 1))
	            FROM bench.sample ORDER BY id DESC LIMIT 1"
}
for rep in $(seq 1 "$REPS"); do
	sf_say "repetition $rep of $REPS"
	run floor none 10000 "$rep" "$EVENTS"
	run sf_batch fixed 10000 "$rep" "$EVENTS"
	run plain_groupby_fixed fixed 10000 "$rep" "$EVENTS"
	run sf_batch fixed_sliding_session 10000 "$rep" "$EVENTS"
	run plain_groupby_sliding sliding 10000 "$rep" "$EVENTS"
	run sf_row fixed 1 "$rep" "$ROWS"
	run plain_row_upsert fixed 1 "$rep" "$ROWS"
	run sf_count fixed 1 "$rep" "$ROWS"
	run floor_row_lateral none 1 "$rep" "$ROWS"
	run floor_row_loop none 1 "$rep" "$ROWS"
done

mkdir -p "$BENCH/results"
OUT=$BENCH/results/targets-$DATE-$SHA.md
# ratios per repetition (time of the base over time of streamforge, both per
# event), then their median, min and max over the repetitions
psql_db -At >"$OUT.tmp" <<'EOF'
WITH t AS (
    SELECT rep, test || '/' || coalesce(shape, '') AS k, ingest_s / events AS spe,
           (extra->>'wal_bytes')::numeric / events AS wal
      FROM bench.sample),
pairs(name, goal, num, den, op, bound) AS (VALUES
    ('ingest_batch fixed (10k batches) over the batched GROUP BY upsert', '>= 2x',
     'plain_groupby_fixed/fixed', 'sf_batch/fixed', '>=', 2.0),
    ('ingest_batch fixed (10k batches): time over only unnesting the arrays', '<= 1.5x',
     'sf_batch/fixed', 'floor/none', '<=', 1.5),
    ('fixed + sliding(5) + session over the sliding-window upsert', '>= 6x',
     'plain_groupby_sliding/sliding', 'sf_batch/fixed_sliding_session', '>=', 6.0),
    ('per-row LATERAL ingest over the per-event upsert', '>= 12x',
     'plain_row_upsert/fixed', 'sf_row/fixed', '>=', 12.0),
    ('ingest_count in a PL/pgSQL loop over the per-event upsert', '>= 5x',
     'plain_row_upsert/fixed', 'sf_count/fixed', '>=', 5.0),
    ('bound: a LATERAL call of a scalar C function (abs), over the per-event upsert', '',
     'plain_row_upsert/fixed', 'floor_row_lateral/none', '>=', 12.0),
    ('bound: a PL/pgSQL loop of a C function as a simple expression, over the per-event upsert', '',
     'plain_row_upsert/fixed', 'floor_row_loop/none', '>=', 5.0)),
r AS (
    SELECT p.name, p.goal, p.op, p.bound, a.rep, a.spe / b.spe AS ratio
      FROM pairs p JOIN t a ON a.k = p.num JOIN t b ON b.k = p.den AND b.rep = a.rep),
m AS (
    SELECT name, goal, op, bound,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY ratio) AS med,
           min(ratio) AS lo, max(ratio) AS hi, count(*) AS n,
           count(*) FILTER (WHERE CASE op WHEN '>=' THEN ratio >= bound
                                          ELSE ratio <= bound END) AS n_met
      FROM r GROUP BY name, goal, op, bound)
(SELECT format('| %s | %s | %s | %s-%s | %s of %s | %s |', name, goal,
              round(med::numeric, 2), round(lo::numeric, 2), round(hi::numeric, 2),
              n_met, n,
              CASE WHEN goal = '' THEN ''
                   WHEN CASE op WHEN '>=' THEN med >= bound ELSE med <= bound END
                   THEN 'met' ELSE '**missed**' END)
  FROM m
 ORDER BY CASE WHEN name LIKE 'ingest_batch fixed (10k batches) over%' THEN 1
               WHEN name LIKE 'ingest_batch fixed%' THEN 2
               WHEN name LIKE 'fixed +%' THEN 3 WHEN name LIKE 'per-row%' THEN 4
               WHEN name LIKE 'ingest_count%' THEN 5
               WHEN name LIKE 'bound: a LATERAL%' THEN 6 ELSE 7 END)
UNION ALL
(SELECT format('| WAL bytes per event, ingest_batch %s (pg_current_wal_lsn() around the run) | <= 25 | %s | %s-%s | %s of %s | %s |',
              split_part(k, '/', 2),
              round(percentile_cont(0.5) WITHIN GROUP (ORDER BY wal)::numeric, 1),
              round(min(wal), 1), round(max(wal), 1),
              count(*) FILTER (WHERE wal <= 25), count(*),
              CASE WHEN percentile_cont(0.5) WITHIN GROUP (ORDER BY wal) <= 25
                   THEN 'met' ELSE '**missed**' END)
  FROM t WHERE k LIKE 'sf_batch/%' GROUP BY k ORDER BY k DESC);
EOF
{
	echo "Run of bench/targets.sh, $DATE, commit $SHA, $REPS repetitions, $EVENTS batch events and $ROWS per-row events each, $(nproc) cores, $("$PGBIN/postgres" --version)."
	echo
	echo "| target | goal | median ratio | range | repetitions met | |"
	echo "|---|---|---:|---|---|---|"
	cat "$OUT.tmp"
	echo
	echo "Median events/s of the calls and WAL bytes per event, per driver:"
	echo
	echo "| driver | shape | events/s | WAL bytes/event |"
	echo "|---|---|---:|---:|"
	psql_val "SELECT format('| %s | %s | %s | %s |', test, shape,
	                 round(percentile_cont(0.5) WITHIN GROUP (ORDER BY events / ingest_s)),
	                 round(percentile_cont(0.5) WITHIN GROUP (ORDER BY (extra->>'wal_bytes')::numeric / events)::numeric, 1))
	            FROM bench.sample GROUP BY test, shape ORDER BY min(id)"
} >"$OUT"
rm -f "$OUT.tmp"
cp "$OUT" "$BENCH/results/targets-latest.md"
echo
cat "$OUT"
