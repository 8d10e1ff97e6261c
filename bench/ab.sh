#!/usr/bin/env bash
# bench/ab.sh: wall clock of ingest_batch in two (or more) source trees,
# steady enough on this shared VM to tell a few percent apart.
#
#   ./bench/ab.sh [--runs N] [--events N] [--shape fixed|fixed_sliding_session]
#                 [--keep] REF REF...
#
# targets.sh's ratios divide sums of whole runs, and a run of 60 ms on a
# shared 2-core VM catches the host's interference at random: two runs of
# the same build differ by up to 30%.  This script measures per batch
# instead, and keeps each batch's best: for every ref, a private PostgreSQL
# tree (git archive, make, make install, as bench/callgrind.sh) and its own
# throwaway cluster loaded with the same seeded workload; then --runs times
# (default 16), for every ref in turn: start its cluster, run the floor
# (SELECT count(*), sum(d.value) FROM unnest(arr) d, as targets.sh), then
# ingest_batch on a fresh pipeline, then the floor again, each batch of
# 10,000 deliveries timed alone (clock_timestamp() around the statement,
# into bench.ab_batch), and stop the cluster.  For each ref, each batch's
# minimum over the runs is kept, and the report gives their mean in ns per
# event, for ingest_batch and the floor, and the ratio of the two.  With 16
# runs the floor's figure agrees across refs within about 2%, but two
# identical builds differed by 1.5% to 7.5% (WORKTREE WORKTREE, 2026-12-01):
# only a difference well above that is the code's.  The medians are printed
# too (they move with the machine).  The same ref twice is labelled ref#2.
#
# A ref is a git ref of this repository or WORKTREE (the checkout as it is
# on disk).  Writes bench/results/ab-<date>-<refs>.md and prints it.
# --events: deliveries per run (default 200,000, batches of 10,000).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGOPTIONS PGSERVICE PGSERVICEFILE
BENCH=$SF_ROOT/bench
PORT=5436						# names the socket file only: no TCP listener
DB=bench
RUNS=16
EVENTS=200000
SHAPE=fixed
KEEP=
REFS=()
usage() { echo "usage: $0 [--runs N] [--events N] [--shape fixed|fixed_sliding_session] [--keep] REF REF..." >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
		--runs) RUNS=$2; shift ;;
		--events) EVENTS=$2; shift ;;
		--shape) SHAPE=$2; shift ;;
		--keep) KEEP=1 ;;
		-h | --help) sed -n '2,28p' "$0"; exit 0 ;;
		-*) usage ;;
		*) REFS+=("$1") ;;
	esac
	shift
done
[ ${#REFS[@]} -ge 1 ] || usage
[ "$RUNS" -ge 1 ] 2>/dev/null || sf_die "--runs must be at least 1"
case "$SHAPE" in fixed | fixed_sliding_session) ;; *) usage ;; esac
SEED=20260101
TICK=10000
LATENESS=1000
DISORDER=2000

sf_need_packages "${SF_BUILD_PACKAGES[@]}" python3
sf_check_server_user
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
GIT=(git -c safe.directory="$SF_ROOT" -C "$SF_ROOT")

SCRATCH=$(mktemp -d /tmp/streamforge-ab.XXXXXX)
chmod 755 "$SCRATCH"
running=
cleanup() {
	local rc=$?
	if [ -n "$running" ]; then
		SF_RUN_DIR=$SCRATCH sf_as_server "$running/pg_ctl" -D "$SCRATCH/data$RUNNING_I" -m fast -w stop >/dev/null 2>&1 || true
	fi
	if [ -n "$KEEP" ] || [ "$rc" -ne 0 ]; then
		echo "scratch directory kept: $SCRATCH"
	else
		rm -rf "$SCRATCH"
	fi
	exit $rc
}
trap cleanup EXIT
as_server() { SF_RUN_DIR=$SCRATCH sf_as_server "$@"; }
psql_ref() {
	as_server "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SCRATCH" -p "$PORT" -U postgres -d "$DB" "$@"
}
start() {
	local i=$1
	as_server "$SCRATCH/t$i/pg$PGBIN/pg_ctl" -D "$SCRATCH/data$i" -l "$SCRATCH/t$i/server.log" -w start >/dev/null ||
		{ tail -n 20 "$SCRATCH/t$i/server.log"; sf_die "could not start the cluster of ${LABELS[$i]}"; }
	running=$SCRATCH/t$i/pg$PGBIN
	RUNNING_I=$i
}
stop() {
	as_server "$running/pg_ctl" -D "$SCRATCH/data$RUNNING_I" -m fast -w stop >/dev/null
	running=
}

# the workload, once for every tree
cp -r "$BENCH/sql" "$BENCH/gen_workload.py" "$SCRATCH/"
mkdir -p "$SCRATCH/work"
sf_is_root && chown -R postgres:postgres "$SCRATCH"
sf_say "generating the workload: $EVENTS arrivals, seed $SEED"
as_server "$PY" "$SCRATCH/gen_workload.py" --out "$SCRATCH/work" \
	--arrivals "$EVENTS" --seed "$SEED" --tick "$TICK" \
	--disorder "$DISORDER" --lateness "$LATENESS" 2>"$SCRATCH/work/counts.txt"

LABELS=()
for i in "${!REFS[@]}"; do
	ref=${REFS[$i]}
	src=$SCRATCH/t$i/src
	mkdir -p "$src"
	if [ "$ref" = WORKTREE ]; then
		"${GIT[@]}" ls-files -z -c -o --exclude-standard |
			(cd "$SF_ROOT" && tar --null -T - -cf -) | tar -C "$src" -xf - ||
			sf_die "copying the checkout failed"
	else
		sha=$("${GIT[@]}" rev-parse --verify -q "$ref^{commit}") ||
			sf_die "not a commit here: $ref"
		"${GIT[@]}" archive "$sha" | tar -C "$src" -xf - ||
			sf_die "git archive $ref failed"
	fi
	label=${ref//[^A-Za-z0-9._-]/_}
	[ ${#label} -ge 40 ] && label=${label:0:8}
	n=1
	base=$label
	while printf '%s\n' "${LABELS[@]}" | grep -qxF "$label"; do
		n=$((n + 1))
		label=$base#$n
	done
	LABELS+=("$label")
	sf_say "building $label"
	make -C "$src" -j"$(nproc 2>/dev/null || echo 2)" PG_CONFIG="$PG_CONFIG" \
		>"$SCRATCH/t$i/build.log" 2>&1 ||
		{ tail -n 20 "$SCRATCH/t$i/build.log"; sf_die "building $ref failed"; }
	(sf_private_tree "$SCRATCH/t$i/pg" "$src")
	sf_is_root && chown -R postgres:postgres "$SCRATCH/t$i"
	as_server "$SCRATCH/t$i/pg$PGBIN/initdb" -D "$SCRATCH/data$i" -U postgres -A trust \
		--locale=C --encoding=UTF8 >"$SCRATCH/t$i/initdb.log" 2>&1 ||
		{ cat "$SCRATCH/t$i/initdb.log"; sf_die "initdb failed"; }
	as_server tee -a "$SCRATCH/data$i/postgresql.conf" >/dev/null <<EOF

# streamforge A/B benchmark: Unix socket only, in the scratch directory
listen_addresses = ''
port = $PORT
unix_socket_directories = '$SCRATCH'
unix_socket_permissions = 0700
shared_buffers = 512MB
work_mem = 64MB
max_wal_size = 16GB
checkpoint_timeout = 1h
autovacuum = off
EOF
	start "$i"
	as_server "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SCRATCH" -p "$PORT" -U postgres -d postgres \
		-c "CREATE DATABASE $DB"
	psql_ref -c "CREATE EXTENSION streamforge" -f "$SCRATCH/sql/bench.sql" >/dev/null
	psql_ref >/dev/null <<EOF
\copy bench.staging FROM '$SCRATCH/work/deliveries.csv' WITH (FORMAT csv)
\copy bench.control FROM '$SCRATCH/work/control.csv' WITH (FORMAT csv)
INSERT INTO bench.param VALUES
    ('arrivals', $EVENTS), ('seed', $SEED), ('tick', $TICK),
    ('lateness', $LATENESS), ('disorder', $DISORDER),
    ('fixed_size', 10000), ('slide_step', 2000), ('session_gap', 10000);
SELECT bench.build_batches(10000, $EVENTS);
CREATE TABLE bench.ab_batch (run int, test text, batch int, ns float8);
CREATE PROCEDURE bench.ab_run(run int, test text, shape text, lim bigint)
LANGUAGE plpgsql AS \$\$
DECLARE
    r record;
    c bigint;
    sm numeric;
    t0 timestamptz;
    k int := 0;
BEGIN
    IF test = 'sf' THEN
        PERFORM bench.fresh_pipeline('ab', shape);
    END IF;
    COMMIT;
    FOR s IN 0 .. (lim - 1) / $TICK LOOP
        FOR r IN SELECT b.arr, b.n FROM bench.batches b
                  WHERE b.batch_size = 10000 AND b.seg = s AND b.batch_no * 10000 < lim
                  ORDER BY b.batch_no LOOP
            t0 := clock_timestamp();
            IF test = 'sf' THEN
                SELECT count(*) INTO c FROM streamforge.ingest_batch('ab', r.arr);
            ELSE
                SELECT count(*), sum(d.value) INTO c, sm FROM unnest(r.arr) d;
            END IF;
            INSERT INTO bench.ab_batch
                VALUES (run, test, k,
                        extract(epoch FROM clock_timestamp() - t0) * 1e9 / r.n);
            k := k + 1;
        END LOOP;
        COMMIT;
    END LOOP;
END
\$\$;
VACUUM ANALYZE;
CHECKPOINT;
EOF
	stop
done

for run in $(seq 1 "$RUNS"); do
	sf_say "run $run of $RUNS"
	for i in "${!REFS[@]}"; do
		start "$i"
		psql_ref -c "CALL bench.ab_run($run, 'floor', '$SHAPE', $EVENTS)" \
			-c "CALL bench.ab_run($run, 'sf', '$SHAPE', $EVENTS)" \
			-c "CALL bench.ab_run($run, 'floor', '$SHAPE', $EVENTS)"
		stop
	done
done

DATE=$(date -u +%Y-%m-%d)
NAME=$DATE
for l in "${LABELS[@]}"; do NAME+="-${l//#/_}"; done
OUT=$BENCH/results/ab-$NAME.md
mkdir -p "$BENCH/results"
{
	echo "Run of bench/ab.sh, $DATE, $RUNS runs of $EVENTS events per ref, shape $SHAPE, batches of 10,000, $(nproc 2>/dev/null || echo '?') cores, $("$PGBIN/postgres" --version)."
	echo
	echo "| ref | commit | ingest_batch, best per batch | floor, best per batch | ratio | ingest_batch, median per batch | floor, median per batch |"
	echo "|---|---|---:|---:|---:|---:|---:|"
	for i in "${!REFS[@]}"; do
		start "$i"
		sha=$([ "${REFS[$i]}" = WORKTREE ] && echo "$("${GIT[@]}" rev-parse --short HEAD)+worktree" ||
			"${GIT[@]}" rev-parse --short "${REFS[$i]}^{commit}")
		psql_ref -At -F '|' -c "
			WITH m AS (SELECT test, batch, min(ns) AS best,
			                  percentile_cont(0.5) WITHIN GROUP (ORDER BY ns) AS med
			             FROM bench.ab_batch GROUP BY test, batch)
			SELECT '${LABELS[$i]}', '$sha',
			       round(avg(best) FILTER (WHERE test = 'sf')::numeric, 1) || ' ns',
			       round(avg(best) FILTER (WHERE test = 'floor')::numeric, 1) || ' ns',
			       round((avg(best) FILTER (WHERE test = 'sf') /
			              avg(best) FILTER (WHERE test = 'floor'))::numeric, 3) || 'x',
			       round(avg(med) FILTER (WHERE test = 'sf')::numeric, 1) || ' ns',
			       round(avg(med) FILTER (WHERE test = 'floor')::numeric, 1) || ' ns'
			  FROM m" | awk -F'|' '{ printf "|"; for (f = 1; f <= NF; f++) printf " %s |", $f; print "" }'
		stop
	done
	echo
	echo "Best per batch: each batch's minimum over the runs, then their mean, in ns per event (see the head of bench/ab.sh)."
} >"$OUT"
cat "$OUT"
