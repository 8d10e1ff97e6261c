#!/usr/bin/env bash
# bench/parallel.sh: several writers on one pipeline (issue 46, must-show 2;
# docs/design/parallel-writers.md, section 11).  Not part of the test suite.
#
#   ./bench/parallel.sh                 default run (a few minutes on 2 cores)
#   ./bench/parallel.sh --batches 4 --reps 1 --no-callgrind   smoke run
#
# Options: --batches B (10,000-event batches per partition, default 4: 8
# partitions, so about 320,000 events per run), --reps R (repetitions of
# every run, default 2, interleaved so that a change of load hits every
# configuration alike), --writers "1 2 4 8", --shapes fixed,fss,
# --sync on|off (synchronous_commit, default on), --no-callgrind,
# --cg-batches N (batches of the callgrind runs, default 2), --name NAME
# (bench/results/parallel-NAME.{md,json}; default <date>-<shortsha>),
# --keep (keep the scratch directory), --no-build.
#
# Like bench/perrow.sh it builds the extension, installs it into a private
# copy of the PostgreSQL tree (scripts/lib.sh, sf_private_tree) and starts a
# throwaway cluster on a Unix socket in a scratch directory.  The workload
# is bench/gen_workload.py's (Zipf keys over 10,000 keys, 2% duplicates,
# 1% late events, replays) with 8 partitions, cut per partition into
# 10,000-event batches in arrival order and pre-built as delivery[] arrays.
#
# A run: one pipeline (fixed window, or fixed + sliding + session windows;
# lateness 1000, built-in progress out_of_orderness 2000, so no advance
# calls), writers => 'serial' or 'parallel', and N writer sessions (psql),
# writer i owning the partitions j with j mod N = i.  Each writer inserts
# its batches (in batch order, round robin over its partitions) into its own
# UNLOGGED table attached to the pipeline (streamforge.attach: on a
# parallel pipeline the row-returning ingest_batch is refused with 0A000;
# the attached table's trigger is the SQL batch path that delivers, with
# offsets assigned, as the Kafka worker's direct entry does), one COMMIT per
# batch.  All writers load the pipeline, then wait at a gate (an advisory
# lock) and start together.  Per batch each writer records the wall time
# and its own CPU time (/proc/self/schedstat, nanoseconds of CPU of the
# backend) of the insert (the call: the parallel part) and of the COMMIT
# (the pre-commit sequencer under the head lock, plus the commit record's
# flush: the serialized part).  A sampler session reads pg_stat_activity
# every 20 ms and counts writers waiting for a lock (the head lock: the
# writers' partitions are disjoint, so no claim waits).  Reported per shape,
# mode and N: events/s (all events over the wall time from the first
# writer's start to the last one's end), speedup over one parallel writer
# and over one serial writer, CPU seconds per million events (call, commit,
# the server's other processes), the commit's share of a writer's CPU, the
# lock-wait share of the samples, and the load average (uptime) at the run.
#
# Since the machine may be shared, the script also reports what does not
# depend on load: the CPU per event of each part, the serialized fraction
# and the predictions it gives (Amdahl: 1 / (s + (1 - s) / N); the
# pipelined model of design section 11: N writers on N free cores reach
# N x (call + commit) / (call + commit + replicated) until the head lock
# saturates at one commit per S), and, unless --no-callgrind, instruction
# counts (callgrind, a single-user backend) of one writer's calls
# (sf_attached_insert) and of its commits (sf_xact_callback: the sequencer
# for a parallel pipeline, the journal write for a serial one), per event,
# with the sequencer's parts.
#
# Writes bench/results/parallel-NAME.md and .json, and copies them to
# parallel-latest.*.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGOPTIONS PGSERVICE PGSERVICEFILE
BENCH=$SF_ROOT/bench
PORT=5436						# names the socket file only: no TCP listener
DB=bench

BATCHES=4
REPS=2
WRITERS="1 2 4 8"
SHAPES=fixed,fss
SYNC=on
CALLGRIND=1
CGB=2
NAME=
KEEP=
BUILD=1
usage() { echo "usage: $0 [--batches B] [--reps R] [--writers \"1 2 4 8\"] [--shapes fixed,fss] [--sync on|off] [--no-callgrind] [--cg-batches N] [--name NAME] [--keep] [--no-build]" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
		--batches) BATCHES=$2; shift ;;
		--reps) REPS=$2; shift ;;
		--writers) WRITERS=$2; shift ;;
		--shapes) SHAPES=$2; shift ;;
		--sync) SYNC=$2; shift ;;
		--no-callgrind) CALLGRIND= ;;
		--cg-batches) CGB=$2; shift ;;
		--name) NAME=$2; shift ;;
		--keep) KEEP=1 ;;
		--no-build) BUILD= ;;
		-h | --help) sed -n '2,58p' "$0"; exit 0 ;;
		*) usage ;;
	esac
	shift
done

PARTS=8
BS=10000
SEED=20260101
LATENESS=1000
DISORDER=2000
ARRIVALS=$((PARTS * BATCHES * BS))

pkgs=(python3)
[ -n "$CALLGRIND" ] && pkgs+=(valgrind)
sf_need_packages "${SF_BUILD_PACKAGES[@]}" "${pkgs[@]}"
sf_check_server_user
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
if [ -n "$BUILD" ]; then
	sf_say "building"
	make -C "$SF_ROOT" -s -j2 PG_CONFIG="$PG_CONFIG" >/dev/null || sf_die "build failed"
fi
SHA=$(git -C "$SF_ROOT" rev-parse --short HEAD 2>/dev/null || echo nogit)
[ -n "$(git -C "$SF_ROOT" status --porcelain -- src sql 2>/dev/null)" ] && SHA+=-dirty

BGPIDS=()
bench_on_exit() {
	local p
	for p in "${BGPIDS[@]}"; do kill "$p" 2>/dev/null || true; done
}
bench_scratch parallel
T_START=$SECONDS
elapsed() { echo $((SECONDS - T_START))s; }

cp -r "$BENCH/sql" "$BENCH/gen_workload.py" "$SCRATCH/"
mkdir -p "$SCRATCH/work" "$SCRATCH/runs" "$SCRATCH/cg"
sf_is_root && chown -R postgres:postgres "$SCRATCH"
q() { psql_val "$1"; }

bench_initdb
bench_conf <<EOF
shared_buffers = 512MB
work_mem = 64MB
max_wal_size = 16GB
checkpoint_timeout = 1h
autovacuum = off
jit = off
synchronous_commit = $SYNC
streamforge.background_compaction_ms = -1
EOF
bench_start
PMPID=$(head -n 1 "$SCRATCH/data/postmaster.pid")
as_server "$SRVBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SCRATCH" -p "$PORT" -U postgres \
	-d postgres -c "CREATE DATABASE $DB"

sf_say "generating the workload: $ARRIVALS arrivals over $PARTS partitions, seed $SEED ($(elapsed))"
as_server "$PY" "$SCRATCH/gen_workload.py" --out "$SCRATCH/work" \
	--arrivals "$ARRIVALS" --seed "$SEED" --partitions "$PARTS" \
	--disorder "$DISORDER" --lateness "$LATENESS" 2>"$SCRATCH/work/counts.txt"
psql_db -c "CREATE EXTENSION streamforge" -f "$SCRATCH/sql/bench.sql" >/dev/null
psql_db <<EOF >/dev/null
\copy bench.staging FROM '$SCRATCH/work/deliveries.csv' WITH (FORMAT csv)
INSERT INTO bench.param VALUES
    ('arrivals', $ARRIVALS), ('seed', $SEED), ('tick', 10000),
    ('lateness', $LATENESS), ('disorder', $DISORDER),
    ('fixed_size', 10000), ('slide_step', 2000), ('session_gap', 10000);
-- per partition, 10,000 deliveries in arrival order per batch (stored
-- uncompressed, as bench.batches: fetching one costs no decompression)
CREATE TABLE bench.pbatch (part text, pno int, k int, n int,
                           arr streamforge.delivery[], PRIMARY KEY (part, k));
ALTER TABLE bench.pbatch ALTER COLUMN arr SET STORAGE EXTERNAL;
INSERT INTO bench.pbatch
SELECT partition, dense_rank() OVER (ORDER BY partition) - 1, k, n, arr
  FROM (SELECT partition, (rn / $BS)::int AS k, count(*) AS n,
               array_agg(row(partition, source_offset, event_id, key,
                             event_time, value)::streamforge.delivery
                         ORDER BY arrival) AS arr
          FROM (SELECT s.*, row_number() OVER (PARTITION BY partition
                                               ORDER BY arrival) - 1 AS rn
                  FROM bench.staging s) x
         GROUP BY 1, 2) y;
-- a backend's own CPU time in ns (sum_exec_runtime; superuser reads /proc)
CREATE FUNCTION bench.cpu_ns() RETURNS bigint LANGUAGE sql AS
\$\$ SELECT pg_catalog.split_part(pg_catalog.pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint \$\$;
CREATE TABLE bench.ptiming (run int, writer int, part text, k int, n int,
    call_s float8, commit_s float8, call_cpu bigint, commit_cpu bigint);
CREATE TABLE bench.pwriter (run int, writer int, t_start timestamptz,
    t_end timestamptz, cpu bigint);
CREATE TABLE bench.psample (run int, samples int, writer_samples int,
    lock_wait int, other_wait int, running int);
CREATE TABLE bench.prun (run int PRIMARY KEY, rep int, shape text,
    mode text, writers int, events bigint, load1 float8, load_after float8,
    bg_cpu bigint);
CREATE TABLE bench.pdone (run int);
-- par_drop, then par_setup: a fresh pipeline pname of the shape ('fixed'
-- or 'fss') and mode, and NW unlogged tables pname_w<i> attached to it.
-- Two transactions: a parallel pipeline's drop_pipeline takes effect at
-- COMMIT, so a create_pipeline in the same transaction would find it.
CREATE FUNCTION bench.par_drop(pname text)
RETURNS void LANGUAGE plpgsql AS \$\$
BEGIN
    PERFORM set_config('client_min_messages', 'warning', true);
    FOR i IN 0 .. 7 LOOP
        EXECUTE format('DROP TABLE IF EXISTS bench.%I', pname || '_w' || i);
    END LOOP;
    IF EXISTS (SELECT 1 FROM streamforge.pipeline WHERE name = pname) THEN
        PERFORM streamforge.drop_pipeline(pname);
    END IF;
END
\$\$;
CREATE FUNCTION bench.par_setup(pname text, shape text, mode text, nw int)
RETURNS void LANGUAGE plpgsql AS \$\$
BEGIN
    PERFORM set_config('client_min_messages', 'warning', true);
    PERFORM streamforge.create_pipeline(pname,
        ARRAY(SELECT DISTINCT part FROM bench.pbatch ORDER BY 1),
        bench.windows(CASE shape WHEN 'fss' THEN 'fixed_sliding_session'
                      ELSE shape END),
        bench.param('lateness'),
        out_of_orderness => bench.param('disorder'), writers => mode);
    FOR i IN 0 .. nw - 1 LOOP
        EXECUTE format('CREATE UNLOGGED TABLE bench.%I (eid text, part text, '
                       'k text, t bigint, v bigint)', pname || '_w' || i);
        PERFORM streamforge.attach(pname, format('bench.%I', pname || '_w' || i),
            event_id => 'eid', key => 'k', event_time => 't', value => 'v',
            partition => 'part');
    END LOOP;
END
\$\$;
VACUUM ANALYZE;
CHECKPOINT;
EOF
[ "$(q "SELECT bench.cpu_ns() > 0")" = t ] || sf_die "cannot read /proc/self/schedstat from a backend"
TOTAL=$(q "SELECT sum(n) FROM bench.pbatch")
sf_say "$TOTAL deliveries in $(q "SELECT count(*) FROM bench.pbatch") batches ($(elapsed))"

# The DO block of writer $2 of $3 in run $1 on pipeline $4; prints it
writer_sql() {
	local run=$1 w=$2 nw=$3 pname=$4
	cat <<EOF
\set ON_ERROR_STOP 1
SELECT streamforge.watermark('$pname');
SELECT pg_advisory_lock_shared(4242);
SELECT pg_advisory_unlock_shared(4242);
DO \$\$
DECLARE
    a streamforge.delivery[];
    r record;
    ts timestamptz := clock_timestamp();
    cs bigint := bench.cpu_ns();
    t0 timestamptz; t1 timestamptz; t2 timestamptz;
    u0 bigint; u1 bigint; u2 bigint;
    parts text[] := '{}'; ks int[] := '{}'; ns int[] := '{}';
    call_s float8[] := '{}'; commit_s float8[] := '{}';
    call_cpu bigint[] := '{}'; commit_cpu bigint[] := '{}';
BEGIN
    FOR r IN SELECT b.part, b.k, b.n FROM bench.pbatch b
              WHERE b.pno % $nw = $w ORDER BY b.k, b.part LOOP
        SELECT b.arr INTO a FROM bench.pbatch b WHERE b.part = r.part AND b.k = r.k;
        u0 := bench.cpu_ns(); t0 := clock_timestamp();
        INSERT INTO bench.${pname}_w$w (eid, part, k, t, v)
        SELECT d.event_id, d.partition, d.key, d.event_time, d.value
          FROM unnest(a) AS d;
        u1 := bench.cpu_ns(); t1 := clock_timestamp();
        COMMIT;
        u2 := bench.cpu_ns(); t2 := clock_timestamp();
        parts := parts || r.part::text; ks := ks || r.k; ns := ns || r.n;
        call_s := call_s || extract(epoch FROM t1 - t0)::float8;
        commit_s := commit_s || extract(epoch FROM t2 - t1)::float8;
        call_cpu := call_cpu || (u1 - u0); commit_cpu := commit_cpu || (u2 - u1);
    END LOOP;
    INSERT INTO bench.pwriter VALUES ($run, $w, ts, clock_timestamp(), bench.cpu_ns() - cs);
    INSERT INTO bench.ptiming
    SELECT $run, $w, * FROM unnest(parts, ks, ns, call_s, commit_s, call_cpu, commit_cpu);
END
\$\$;
EOF
}

# CPU ns (schedstat) of the postmaster's children alive now: "pid ns" lines
children_cpu() {
	local p
	for p in $(ps -o pid= --ppid "$PMPID"); do
		[ -r "/proc/$p/schedstat" ] && echo "$p $(cut -d' ' -f1 "/proc/$p/schedstat" 2>/dev/null)"
	done 2>/dev/null || true
}

# run RUN REP SHAPE MODE N: one measured run
run_one() {
	local run=$1 rep=$2 shape=$3 mode=$4 nw=$5 pname=pw i w pids=() sampler gate
	local load1 load_after bg=0 before after
	psql_db -c "SELECT bench.par_drop('$pname')" \
		-c "SELECT bench.par_setup('$pname', '$shape', '$mode', $nw)" >/dev/null
	psql_db -c "CHECKPOINT" >/dev/null
	for ((w = 0; w < nw; w++)); do
		writer_sql "$run" "$w" "$nw" "$pname" >"$SCRATCH/runs/r$run-w$w.sql"
	done
	sf_is_root && chown postgres:postgres "$SCRATCH"/runs/r"$run"-*.sql
	before=$(children_cpu)
	load1=$(cut -d' ' -f1 /proc/loadavg)
	# the gate: a session holding an advisory lock, fed through a FIFO
	gate=$SCRATCH/runs/gate$run
	mkfifo "$gate"
	sf_is_root && chown postgres:postgres "$gate"
	as_server "$SRVBIN/psql" -X -q -h "$SCRATCH" -p "$PORT" -U postgres -d "$DB" \
		<"$gate" >"$gate.log" 2>&1 &
	BGPIDS+=($!)
	exec 7>"$gate"
	echo "SELECT pg_advisory_lock(4242);" >&7
	for ((i = 0; i < 200; i++)); do
		[ "$(q "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 4242 AND granted")" = 1 ] && break
		sleep 0.05
	done
	for ((w = 0; w < nw; w++)); do
		as_server env PGAPPNAME=sfpar "$SRVBIN/psql" -X -q -h "$SCRATCH" -p "$PORT" \
			-U postgres -d "$DB" -f "$SCRATCH/runs/r$run-w$w.sql" \
			>"$SCRATCH/runs/r$run-w$w.log" 2>&1 &
		pids+=($!)
		BGPIDS+=($!)
	done
	for ((i = 0; i < 1200; i++)); do
		[ "$(q "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 4242 AND NOT granted")" = "$nw" ] && break
		sleep 0.05
	done
	[ "$i" -lt 1200 ] || sf_die "run $run: the writers did not reach the gate"
	psql_db -c "DO \$\$
DECLARE s int := 0; ws int := 0; lw int := 0; ow int := 0; rn int := 0; r record;
BEGIN
    WHILE NOT EXISTS (SELECT 1 FROM bench.pdone WHERE run = $run) AND s < 30000 LOOP
        FOR r IN SELECT wait_event_type, wait_event FROM pg_stat_activity
                  WHERE application_name = 'sfpar' AND state = 'active' LOOP
            ws := ws + 1;
            IF r.wait_event_type = 'Lock' THEN lw := lw + 1;
            ELSIF r.wait_event_type IS NOT NULL THEN ow := ow + 1;
            ELSE rn := rn + 1; END IF;
        END LOOP;
        s := s + 1;
        PERFORM pg_sleep(0.02);
    END LOOP;
    INSERT INTO bench.psample VALUES ($run, s, ws, lw, ow, rn);
END \$\$" >"$SCRATCH/runs/r$run-sampler.log" 2>&1 &
	sampler=$!
	BGPIDS+=($!)
	echo "SELECT pg_advisory_unlock(4242);" >&7
	exec 7>&-
	for i in "${pids[@]}"; do
		wait "$i" || { cat "$SCRATCH"/runs/r"$run"-w*.log >&2; sf_die "run $run: a writer failed"; }
	done
	load_after=$(cut -d' ' -f1 /proc/loadavg)
	psql_db -c "INSERT INTO bench.pdone VALUES ($run)"
	wait "$sampler" || true
	after=$(children_cpu)
	# the server's processes alive before and after (walwriter, checkpointer...)
	bg=$(join <(sort <<<"$before") <(sort <<<"$after") | awk '{ s += $3 - $2 } END { print s + 0 }')
	grep -q ERROR "$SCRATCH"/runs/r"$run"-w*.log && { cat "$SCRATCH"/runs/r"$run"-w*.log >&2; sf_die "run $run: a writer failed"; }
	# every delivery reached the pipeline, once
	got=$(q "SELECT (streamforge.stats('$pname')).deliveries = (SELECT sum(n) FROM bench.ptiming WHERE run = $run)
	          AND (SELECT sum(n) FROM bench.ptiming WHERE run = $run) = $TOTAL")
	[ "$got" = t ] || sf_die "run $run: the pipeline did not take every delivery once"
	psql_db -c "INSERT INTO bench.prun VALUES ($run, $rep, '$shape', '$mode', $nw,
		(SELECT sum(n) FROM bench.ptiming WHERE run = $run), $load1, $load_after, $bg)"
	q "SELECT format('    run %s rep %s %-5s %-8s N=%s: %s events/s, load %s',
		r.run, r.rep, r.shape, r.mode, r.writers,
		round(r.events / extract(epoch FROM max(w.t_end) - min(w.t_start)))::text, r.load1)
	     FROM bench.prun r JOIN bench.pwriter w USING (run) WHERE r.run = $run
	    GROUP BY r.run"
}

IFS=, read -r -a SHLIST <<<"$SHAPES"
sf_say "timing: shapes ${SHAPES}, serial N=1 and 2, parallel N=${WRITERS// /,}, $REPS rep(s), synchronous_commit=$SYNC ($(elapsed))"
UPTIME_START=$(uptime)
run=0
for ((rep = 1; rep <= REPS; rep++)); do
	for shape in "${SHLIST[@]}"; do
		run=$((run + 1)); run_one $run $rep "$shape" serial 1
		for n in $WRITERS; do
			run=$((run + 1)); run_one $run $rep "$shape" parallel "$n"
		done
		run=$((run + 1)); run_one $run $rep "$shape" serial 2
	done
done
UPTIME_END=$(uptime)

# ------------------------------------------------------------------
# Callgrind: instructions of the calls and the commits, per event
# ------------------------------------------------------------------
# (1) one writer, a single-user backend: the first --cg-batches batches;
# (2) two writers taking turns (a batch of p0 by one, of p1 by the other,
#     ...: every commit of one is caught up by the other), the cluster's
#     postmaster under callgrind (it forks the backends, one file each),
#     driven through dblink: the first 2 x --cg-batches batches.
# Counted: the attached table's trigger (sf_attached_insert, the call) and
# the pre-commit driver (sf_precommit_callback: the serial journal write,
# or the sequencer), inclusive, with their parts (callgrind_annotate).
CGROWS=()
CGTOGGLES=(--collect-atstart=no --toggle-collect=sf_attached_insert
	--toggle-collect=sf_precommit_callback)
if [ -n "$CALLGRIND" ]; then
	cgevents=$(q "SELECT sum(n) FROM (SELECT n FROM bench.pbatch ORDER BY k, part LIMIT $CGB) x")
	cgevents2=$(q "SELECT sum(n) FROM (SELECT n FROM bench.pbatch ORDER BY k, part LIMIT $((2 * CGB))) x")
	psql_db -c "CREATE EXTENSION IF NOT EXISTS dblink" >/dev/null
	bench_stop
	for shape in "${SHLIST[@]}"; do
		for mode in serial parallel; do
			out=$SCRATCH/cg/callgrind.out.$shape.$mode
			cat >"$out.sql" <<EOF
SELECT bench.par_drop('cgwarm');

SELECT bench.par_setup('cgwarm', 'fixed', '$mode', 1);

SELECT bench.par_drop('cg');

SELECT bench.par_setup('cg', '$shape', '$mode', 1);

INSERT INTO bench.cgwarm_w0 VALUES ('warm-1', 'p0', 'w', 0, 1);

SELECT streamforge.watermark('cg');

SELECT pg_backend_pid();

DO \$\$
DECLARE
    a streamforge.delivery[];
    r record;
BEGIN
    FOR r IN SELECT b.part, b.k FROM bench.pbatch b ORDER BY b.k, b.part LIMIT $CGB LOOP
        SELECT b.arr INTO a FROM bench.pbatch b WHERE b.part = r.part AND b.k = r.k;
        INSERT INTO bench.cg_w0 (eid, part, k, t, v)
        SELECT d.event_id, d.partition, d.key, d.event_time, d.value
          FROM unnest(a) AS d;
        COMMIT;
    END LOOP;
END
\$\$;

EOF
			sf_is_root && chown postgres:postgres "$out.sql"
			t0=$SECONDS
			as_server valgrind --tool=callgrind --callgrind-out-file="$out" \
				"${CGTOGGLES[@]}" --zero-before=pg_backend_pid \
				"$SRVBIN/postgres" --single -j -D "$SCRATCH/data" \
				-c fsync=off -c jit=off -c autovacuum=off "$DB" \
				<"$out.sql" >"$out.log" 2>&1 ||
				{ tail -n 30 "$out.log"; sf_die "callgrind $shape $mode: the backend failed"; }
			if grep -qE '(^|\] )(ERROR|FATAL|PANIC):' "$out.log"; then
				grep -E '(^|\] )(ERROR|FATAL|PANIC):' "$out.log" | head -5
				sf_die "callgrind $shape $mode: the workload failed ($out.log)"
			fi
			echo "    callgrind, one writer, $shape $mode: $((SECONDS - t0)) s"
			CGROWS+=("1:$shape:$mode:$cgevents:$out")

			# two writers taking turns, the postmaster under callgrind
			dir=$SCRATCH/cg/two.$shape.$mode
			mkdir -p "$dir"
			sf_is_root && chown postgres:postgres "$dir"
			t0=$SECONDS
			as_server valgrind --tool=callgrind --callgrind-out-file="$dir/cg.%p" \
				"${CGTOGGLES[@]}" "$SRVBIN/postgres" -D "$SCRATCH/data" \
				-c fsync=off -c jit=off -c autovacuum=off >"$dir/server.log" 2>&1 &
			for ((i = 0; i < 600; i++)); do
				"$SRVBIN/pg_isready" -q -h "$SCRATCH" -p "$PORT" && break
				sleep 0.2
			done
			bench_started=1
			psql_db >"$dir/driver.log" 2>&1 <<EOF || { cat "$dir/driver.log"; sf_die "callgrind two writers $shape $mode failed"; }
SET client_min_messages = warning;
SELECT bench.par_drop('cg2');
SELECT bench.par_setup('cg2', '$shape', '$mode', 2);
SELECT dblink_connect('c' || i, 'host=$SCRATCH port=$PORT dbname=$DB user=postgres')
  FROM generate_series(0, 1) i;
SELECT w FROM generate_series(0, 1) i,
  dblink('c' || i, 'SELECT streamforge.watermark(''cg2'')') AS t(w bigint);
DO \$\$
DECLARE r record;
BEGIN
    FOR r IN SELECT b.part, b.pno, b.k FROM bench.pbatch b
              ORDER BY b.k, b.part LIMIT 2 * $CGB LOOP
        PERFORM dblink_exec('c' || (r.pno % 2), format(
            'INSERT INTO bench.cg2_w%s (eid, part, k, t, v) '
            'SELECT d.event_id, d.partition, d.key, d.event_time, d.value '
            'FROM bench.pbatch b, unnest(b.arr) AS d '
            'WHERE b.part = %L AND b.k = %s', r.pno % 2, r.part, r.k));
    END LOOP;
END
\$\$;
SELECT dblink_disconnect('c' || i) FROM generate_series(0, 1) i;
EOF
			bench_stop
			wait
			files=()
			for f in "$dir"/cg.*; do
				[ "$(awk '/^(summary|totals):/ { print $2; exit }' "$f")" -gt 0 ] 2>/dev/null && files+=("$f")
			done
			echo "    callgrind, two writers, $shape $mode: $((SECONDS - t0)) s, ${#files[@]} backends counted"
			CGROWS+=("2:$shape:$mode:$cgevents2:$(IFS=,; echo "${files[*]}")")
		done
	done
	bench_start
fi

# ------------------------------------------------------------------
# Results
# ------------------------------------------------------------------
DATE=$(date -u +%Y-%m-%d)
[ -n "$NAME" ] || NAME=$DATE-$SHA
mkdir -p "$BENCH/results"
psql_db -At -c "
WITH w AS (
    SELECT run, extract(epoch FROM max(t_end) - min(t_start)) AS wall,
           sum(cpu) AS cpu
      FROM bench.pwriter GROUP BY run),
t AS (
    SELECT run, sum(n) AS events, sum(call_cpu) AS call_cpu,
           sum(commit_cpu) AS commit_cpu,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY call_s) AS call_med,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY commit_s) AS commit_med,
           max(commit_s) AS commit_max, count(*) AS batches
      FROM bench.ptiming GROUP BY run)
SELECT json_agg(json_build_object(
           'run', r.run, 'rep', r.rep, 'shape', r.shape, 'mode', r.mode,
           'writers', r.writers, 'events', t.events, 'batches', t.batches,
           'wall_s', w.wall, 'events_per_s', t.events / w.wall,
           'writer_cpu_ns', w.cpu, 'call_cpu_ns', t.call_cpu,
           'commit_cpu_ns', t.commit_cpu, 'bg_cpu_ns', r.bg_cpu,
           'call_s_median', t.call_med, 'commit_s_median', t.commit_med,
           'commit_s_max', t.commit_max,
           'samples', s.samples, 'writer_samples', s.writer_samples,
           'lock_wait_samples', s.lock_wait, 'other_wait_samples', s.other_wait,
           'running_samples', s.running,
           'load1_before', r.load1, 'load1_after', r.load_after)
       ORDER BY r.run)
  FROM bench.prun r JOIN w USING (run) JOIN t USING (run)
  LEFT JOIN bench.psample s USING (run)" >"$SCRATCH/runs.json"

CGARGS=()
for c in "${CGROWS[@]}"; do CGARGS+=(--cg "$c"); done
"$PY" - "$SCRATCH/runs.json" "$BENCH/results/parallel-$NAME.json" \
	"$BENCH/results/parallel-$NAME.md" \
	"$(nproc)" "$UPTIME_START" "$UPTIME_END" "$SHA" "$DATE" \
	"batches=$BATCHES reps=$REPS sync=$SYNC events/run=$TOTAL" "${CGARGS[@]}" <<'PYEOF'
import json, statistics, subprocess, sys, re

runs_f, out_json, out_md, ncpu, up0, up1, sha, date, params = sys.argv[1:10]
cg = [a for i, a in enumerate(sys.argv[10:]) if i % 2 == 1]
runs = json.load(open(runs_f)) or []

def med(xs):
    return statistics.median(xs) if xs else float('nan')

# per configuration: medians over the repetitions
cfg = {}
for r in runs:
    cfg.setdefault((r['shape'], r['mode'], r['writers']), []).append(r)

def m(shape, mode, n, f):
    rs = cfg.get((shape, mode, n), [])
    return med([f(r) for r in rs])

shapes = []
for r in runs:
    if r['shape'] not in shapes:
        shapes.append(r['shape'])
ns = sorted({r['writers'] for r in runs if r['mode'] == 'parallel'})

# callgrind: inclusive instructions of the named functions
FUNCS = ['sf_attached_insert', 'sf_write_batch', 'sf_persist_parallel_ingest',
         'sf_txn_ingest', 'sf_par_open', 'sf_par_catch_up', 'sf_cache_sync',
         'sf_journal_replay_to',
         'sf_precommit_callback', 'sf_pending_write_all', 'sf_sequencer_run_all',
         'sf_par_sync_latest', 'lock_head', 'put_delivery_rows', 'sf_par_lock',
         'sf_head_commit', 'sf_sink_emit',
         'sf_journal_encode_ingest', 'sf_lane_k_encode', 'sf_head_entry_encode',
         'sf_par_store_snapshots', 'sf_run_plan', 'sf_exec', 'XLogInsert',
         'heap_insert', 'toast_save_datum']
cgres = {}
for c in cg:
    nw, shape, mode, events, paths = c.split(':', 4)
    total = 0
    inc = {}
    for path in [x for x in paths.split(',') if x]:
        with open(path) as f:
            for line in f:
                if line.startswith('summary:') or line.startswith('totals:'):
                    total += int(line.split()[1])
                    break
        ann = subprocess.run(['callgrind_annotate', '--inclusive=yes', '--threshold=100', path],
                             capture_output=True, text=True).stdout
        seen = set()
        for line in ann.splitlines():
            mm = re.match(r'\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(\S.*)$', line)
            if not mm:
                continue
            name = mm.group(2)
            fn = name.split(':')[-1].split(' ')[0] if ':' in name else name.split(' ')[0]
            if fn in FUNCS and fn not in seen:
                seen.add(fn)
                inc[fn] = inc.get(fn, 0) + int(mm.group(1).replace(',', ''))
    cgres[(int(nw), shape, mode)] = {'events': int(events), 'total': total, 'inclusive': inc}

def cgper(key, fn):
    d = cgres.get(key)
    if not d or not d['events']:
        return None
    if fn == 'total':
        return d['total'] / d['events']
    v = d['inclusive'].get(fn)
    return None if v is None else v / d['events']

L = []
L.append(f'# Parallel writers (issue 46, must-show 2): bench/parallel.sh, {date}, {sha}')
L.append('')
L.append(f'{params}; {ncpu} CPUs. Load (uptime) at the start: `{up0.strip()}`; at the end: `{up1.strip()}`.')
L.append('The machine was shared with other sessions: wall-clock ratios are under that load; '
         'the CPU and instruction columns do not depend on it (docs/performance.md, "Parallel writers").')
L.append('')
L.append('Each writer inserts its partitions\' 10,000-event batches into its own table attached to the '
         'pipeline, one COMMIT per batch. "call" is the insert (the parallel part), "commit" the COMMIT '
         '(a parallel pipeline\'s sequencer under the head lock, a serial one\'s journal write, and the flush). '
         'CPU: the writers\' own (/proc/self/schedstat), per million events; "other" the server\'s other processes. '
         'Medians over the repetitions.')
for shape in shapes:
    base_p = m(shape, 'parallel', 1, lambda r: r['events_per_s'])
    base_s = m(shape, 'serial', 1, lambda r: r['events_per_s'])
    L.append('')
    L.append(f'## {"fixed window" if shape == "fixed" else "fixed + sliding + session windows"}')
    L.append('')
    L.append('| mode | N | events/s | vs 1 parallel | vs 1 serial | CPU s/M call | CPU s/M commit | CPU s/M other | commit share of CPU | commit ms median (max) | lock-wait samples | load1 |')
    L.append('|---|---|---|---|---|---|---|---|---|---|---|---|')
    rows = [('serial', 1)] + [('parallel', n) for n in ns] + [('serial', 2)]
    for mode, n in rows:
        if (shape, mode, n) not in cfg:
            continue
        eps = m(shape, mode, n, lambda r: r['events_per_s'])
        cc = m(shape, mode, n, lambda r: r['call_cpu_ns'] / r['events'] * 1e6 / 1e9)
        cm = m(shape, mode, n, lambda r: r['commit_cpu_ns'] / r['events'] * 1e6 / 1e9)
        bg = m(shape, mode, n, lambda r: r['bg_cpu_ns'] / r['events'] * 1e6 / 1e9)
        share = cm / (cc + cm)
        cmed = m(shape, mode, n, lambda r: r['commit_s_median'] * 1e3)
        cmax = m(shape, mode, n, lambda r: r['commit_s_max'] * 1e3)
        lw = m(shape, mode, n, lambda r: (r['lock_wait_samples'] or 0) / max(r['writer_samples'] or 1, 1))
        ld = m(shape, mode, n, lambda r: r['load1_before'])
        L.append(f'| {mode} | {n} | {eps:,.0f} | {eps / base_p:.2f}x | {eps / base_s:.2f}x | {cc:.3f} | {cm:.3f} | {bg:.3f} | {share:.1%} | {cmed:.2f} ({cmax:.1f}) | {lw:.0%} | {ld:.2f} |')
    # the model, from the CPU times (load-independent)
    c1c = m(shape, 'parallel', 1, lambda r: r['call_cpu_ns'] / r['events'])
    c1m = m(shape, 'parallel', 1, lambda r: r['commit_cpu_ns'] / r['events'])
    s = c1m / (c1c + c1m)
    sc = m(shape, 'serial', 1, lambda r: (r['call_cpu_ns'] + r['commit_cpu_ns']) / r['events'])
    L.append('')
    L.append(f'Model, from the CPU per event (ns/event): one parallel writer {c1c:.0f} in the call + {c1m:.0f} at commit '
             f'(serialized fraction s = {s:.1%}); one serial writer {sc:.0f}. '
             f'Amdahl for 2 writers, 1 / (s + (1 - s) / 2) = {1 / (s + (1 - s) / 2):.2f}x over one parallel writer.')
    for n in ns:
        if n == 1:
            continue
        cn = m(shape, 'parallel', n, lambda r: (r['call_cpu_ns'] + r['commit_cpu_ns']) / r['events'])
        cores = min(n, int(ncpu))
        pred = cores * (c1c + c1m) / cn
        L.append(f'- N = {n}: {cn:.0f} ns of writer CPU per event ({(cn / (c1c + c1m) - 1):+.0%} over one writer: '
                 f'the catch-up of the other writers\' commits and contention); on {cores} free cores the CPU allows '
                 f'{pred:.2f}x over one parallel writer, {pred * (1 / (c1c + c1m)) / (1 / sc):.2f}x over one serial writer; '
                 f'the head lock saturates at {1e9 / c1m:,.0f} events/s of commit CPU '
                 f'({1e9 / c1m / (1e9 / (c1c + c1m)):.1f}x one writer).')
if cgres:
    L.append('')
    L.append('## Instructions per event (callgrind)')
    L.append('')
    L.append('Inclusive counts per event of the attached table\'s trigger (sf_attached_insert: the call) and of the '
             'pre-commit driver (sf_precommit_callback: a serial pipeline\'s journal write, a parallel one\'s '
             'sequencer under the head lock), with their parts; blank where a function does not run or is inlined. '
             '"1 writer": one single-user backend; "2 writers": two backends taking turns, batch by batch, '
             'each catching up the other\'s commits (the sum of both backends over all their events).')
    L.append('')
    keys = sorted(cgres, key=lambda k: (k[1], k[2], k[0]))
    hdr = ['function'] + [f'{k[1]} {k[2]}, {k[0]} writer{"s" if k[0] > 1 else ""}' for k in keys]
    L.append('| ' + ' | '.join(hdr) + ' |')
    L.append('|' + '---|' * len(hdr))
    for fn in ['total'] + FUNCS:
        vals = [cgper(k, fn) for k in keys]
        if all(v is None for v in vals):
            continue
        L.append(f'| {fn} | ' + ' | '.join('' if v is None else f'{v:,.0f}' for v in vals) + ' |')
    L.append('')
    for shape in shapes:
        call = cgper((1, shape, 'parallel'), 'sf_attached_insert')
        com = cgper((1, shape, 'parallel'), 'sf_precommit_callback')
        ser = cgper((1, shape, 'serial'), 'total')
        two = cgper((2, shape, 'parallel'), 'total')
        if call and com:
            s_ = com / (call + com)
            line = (f'- {shape}: one parallel writer, {call:,.0f} instructions per event in the call and {com:,.0f} '
                    f'at commit: serialized share s = {s_:.1%} (Amdahl for 2 writers: {1 / (s_ + (1 - s_) / 2):.2f}x)')
            if two:
                # of the two writers' nb batches, the other writer catches
                # up all but the last: the replicated cost per foreign event
                nb = max(round(cgres[(2, shape, 'parallel')]['events'] / 10000), 2)
                rep = (two - (call + com)) * nb / (nb - 1)
                line += (f'; two writers taking turns: {two:,.0f} per event of their run, so the catch-up of the '
                         f'other\'s commits costs {rep:,.0f} per foreign event; on 2 free cores with the lock never '
                         f'waited for: 2 x {call + com:,.0f} / ({call + com:,.0f} + {rep:,.0f}) = '
                         f'{2 * (call + com) / (call + com + rep):.2f}x over one parallel writer')
                if ser:
                    line += f', {2 * ser / (call + com + rep):.2f}x over one serial writer ({ser:,.0f} per event)'
            L.append(line + '.')
open(out_md, 'w').write('\n'.join(L) + '\n')
json.dump({'date': date, 'commit': sha, 'params': params, 'ncpu': int(ncpu),
           'uptime_start': up0.strip(), 'uptime_end': up1.strip(), 'runs': runs,
           'callgrind': {f'{k[0]}:{k[1]}:{k[2]}': v for k, v in cgres.items()}},
          open(out_json, 'w'), indent=1)
print('\n'.join(L))
PYEOF
cp "$BENCH/results/parallel-$NAME.md" "$BENCH/results/parallel-latest.md"
cp "$BENCH/results/parallel-$NAME.json" "$BENCH/results/parallel-latest.json"
sf_say "done in $(elapsed): bench/results/parallel-$NAME.{md,json}"
